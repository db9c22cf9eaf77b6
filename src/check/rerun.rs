//! Checking again after a change, and showing a finding: which joints a weight change can affect, a report
//! merged with a check of just those joints, and the skeleton pose a finding's worst pose is.
//!
//! A swing of joint `j` moves each vertex by a closed form in the vertex's subtree share of `j` (the weight
//! on `j` and its descendants; for rigid skinning, whether its dominant joint is among them), and every measure
//! reads only posed positions. So a change of some rows changes a joint's results exactly when it changes some
//! row's subtree share of that joint: checking those joints again and merging gives what a whole new check
//! gives. The animation reads every weight, so it is checked again whenever any row changed.

use glam::{Mat4, Quat, Vec3};

use super::{CheckReport, Kind, PoseRef};
use crate::deform::Method;
use crate::model::skeleton::dofs_from_rotation;
use crate::model::{Pose, Skeleton, Weights};

/// Subtree shares this close count as equal (as the sweep's own test of what moves).
const SAME: f32 = 1e-5;

/// The joints whose sweep can give different results after the rows of `vertices` changed from `before` to
/// `after`, ascending: those for which some changed row's subtree share differs.
pub fn affected_joints(
    skel: &Skeleton,
    before: &Weights,
    after: &Weights,
    vertices: &[u32],
    method: Method,
) -> Vec<usize> {
    let n = skel.len();
    let mut affected = vec![false; n];
    let (mut a, mut b) = (vec![0.0f32; n], vec![0.0f32; n]);
    let mut touched: Vec<usize> = Vec::new();
    // Add a row's weight to each joint's and all its ancestors' shares.
    let add = |w: &Weights, v: usize, share: &mut Vec<f32>, touched: &mut Vec<usize>| {
        let mut put = |j: usize, x: f32, share: &mut Vec<f32>| {
            let mut at = Some(j);
            while let Some(k) = at.filter(|&k| k < n) {
                share[k] += x;
                touched.push(k);
                at = skel.joints()[k].parent;
            }
        };
        if v >= w.len() {
            return;
        }
        match method {
            Method::Rigid => {
                if let Some(d) = w.dominant(v) {
                    put(d as usize, 1.0, share);
                }
            }
            _ => {
                let (js, ws) = w.row(v);
                for (&j, &x) in js.iter().zip(ws) {
                    put(j as usize, x, share);
                }
            }
        }
    };
    for &v in vertices {
        let v = v as usize;
        add(before, v, &mut a, &mut touched);
        add(after, v, &mut b, &mut touched);
        for &k in &touched {
            if (a[k] - b[k]).abs() > SAME {
                affected[k] = true;
            }
        }
        for &k in &touched {
            a[k] = 0.0;
            b[k] = 0.0;
        }
        touched.clear();
    }
    (0..n).filter(|&j| affected[j]).collect()
}

impl CheckReport {
    /// Take `rerun`, a check of `joints` (and of the animation when `animation`) on changed weights of the same
    /// mesh, in place of what this report had for them; everything else stays.
    pub fn merge(&mut self, rerun: CheckReport, joints: &[usize], animation: bool) {
        let replaced = |j: Option<usize>| match j {
            Some(j) => joints.contains(&j),
            None => animation,
        };
        self.findings.retain(|f| !replaced(f.joint));
        self.findings.extend(rerun.findings);
        self.joints.retain(|s| !joints.contains(&s.joint));
        self.joints.extend(rerun.joints);
        self.groups.retain(|g| !replaced(g.joint));
        self.groups.extend(rerun.groups);
        self.tally();
    }

    /// Sort findings and joints worst first, and count what the groups and findings add up to.
    pub(super) fn tally(&mut self) {
        self.findings.sort_by(|a, b| {
            b.severity
                .total_cmp(&a.severity)
                .then(b.region.vertices.len().cmp(&a.region.vertices.len()))
                .then(a.joint.cmp(&b.joint))
                .then(a.kind.cmp(&b.kind))
                .then(a.region.vertices.first().cmp(&b.region.vertices.first()))
        });
        self.groups.sort_by_key(|g| g.joint.unwrap_or(usize::MAX));
        self.joints
            .sort_by(|a, b| b.worst.total_cmp(&a.worst).then(a.joint.cmp(&b.joint)));
        self.counts = [0; Kind::COUNT];
        for f in &self.findings {
            self.counts[f.kind.index()] += 1;
        }
        self.vertex_worst = vec![0.0; self.vertices];
        for g in &self.groups {
            for &(v, w) in &g.vertices {
                if let Some(x) = self.vertex_worst.get_mut(v as usize) {
                    *x = x.max(w);
                }
            }
        }
        self.poses = self.groups.iter().map(|g| g.poses).sum();
        self.worst = self.vertex_worst.iter().copied().fold(0.0, f32::max);
    }
}

/// The skeleton pose whose world matrices are the bind pose `bind` with `pose`'s joint turned about its pivot
/// (its descendants following): each joint's rotation is read from the bind matrices relative to its parent's,
/// the root's translation from the root's. Exact when the bind pose is one the skeleton can take (its bone
/// offsets unchanged); rotations are clamped to the joints' limits. `None` for an animation frame (that pose
/// is the clip's at its time) or a joint not in the skeleton.
pub fn pose_for(skel: &Skeleton, bind: &[Mat4], pose: &PoseRef) -> Option<Pose> {
    let PoseRef::Swing { joint, axis, degrees } = *pose else {
        return None;
    };
    if joint >= skel.len() || bind.len() != skel.len() {
        return None;
    }
    let rotation_of = |m: &Mat4| m.to_scale_rotation_translation().1.normalize();
    let turn = Quat::from_axis_angle(Vec3::from(axis).normalize_or(Vec3::X), degrees.to_radians());
    let mut out = Pose::from_file(skel);
    out.root_translation = bind[0].w_axis.truncate();
    for (i, j) in skel.joints().iter().enumerate() {
        let parent = j.parent.map_or(Quat::IDENTITY, |p| rotation_of(&bind[p]));
        let own = rotation_of(&bind[i]);
        let fitted = dofs_from_rotation(parent.inverse() * own, out.dofs.get(i).copied().unwrap_or(Vec3::ZERO));
        let dofs = if i == joint {
            dofs_from_rotation(parent.inverse() * turn * own, fitted)
        } else {
            fitted
        };
        if let Some(d) = out.dofs.get_mut(i) {
            *d = j.clamp3(dofs);
        }
    }
    Some(out)
}
