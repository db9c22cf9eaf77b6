//! Running a check: each swept joint (and the animation, when given) as one task, its poses measured in turn into
//! per-vertex worst values, then its problems grouped into regions.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use glam::{Mat4, Quat, Vec3};
use rayon::prelude::*;

use super::jump::{LinearSwing, RingShares};
use super::measure::{Active, PoseView, Scale, Sink, WedgeCorners, measure};
use super::prep::{NO_JOINT, Prepared};
use super::regions::{Region, regions};
use super::{CheckError, CheckOptions, CheckReport, Finding, GroupWorst, JointSummary, Kind, PoseRef, Progress, Rig};
use crate::deform::{Method, skin_vertices, skinning_matrices};
use crate::eval::posed::{subtree_ends, sweep};
use crate::model::{Clip, Pose, world_from_joint};

/// Subtree weights this close to 0 or 1, or to each other, count as equal.
const SAME: f32 = 1e-5;

/// What one task measures: a joint's sweep or the animation's frames.
#[derive(Clone, Copy)]
enum Group {
    Joint(usize),
    Animation,
}

/// A vertex at or above severity 1 for one kind: (vertex, severity, value, pose index).
pub(super) type Problem = (u32, f32, f32, u16);

/// One task's result.
struct GroupResult {
    group: Group,
    poses: Vec<PoseRef>,
    /// Per kind, its problem vertices.
    problems: [Vec<Problem>; Kind::COUNT],
    /// (vertex, worst severity) for every vertex measured.
    worst: Vec<(u32, f32)>,
    /// Per kind, its problems' regions, each with the index of its worst problem (made in the task, so that they
    /// are grouped in parallel too).
    regions: [Vec<(Region, usize)>; Kind::COUNT],
}

/// One vertex's record in a task: per kind the worst severity, its value and pose; whether it was measured. One
/// cache line, as a triangle's three measures land on each corner together.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Slot {
    sev: [f32; Kind::COUNT],
    val: [f32; Kind::COUNT],
    pose: [u16; Kind::COUNT],
    seen: bool,
}

const EMPTY: Slot = Slot {
    sev: [-1.0; Kind::COUNT],
    val: [0.0; Kind::COUNT],
    pose: [0; Kind::COUNT],
    seen: false,
};

/// Per-thread buffers: each vertex's [`Slot`], which vertices were touched, the posed positions (rest where
/// nothing moved).
struct Scratch {
    slots: Vec<Slot>,
    touched: Vec<u32>,
    posed: Vec<Vec3>,
    current: u16,
}

impl Scratch {
    fn new(rest: &[Vec3]) -> Self {
        Self {
            slots: vec![EMPTY; rest.len()],
            touched: Vec::new(),
            posed: rest.to_vec(),
            current: 0,
        }
    }

    /// Take what was recorded and reset the buffers.
    fn harvest(&mut self, group: Group, poses: Vec<PoseRef>) -> GroupResult {
        let mut problems: [Vec<Problem>; Kind::COUNT] = Default::default();
        let mut worst = Vec::with_capacity(self.touched.len());
        self.touched.sort_unstable();
        for &v in &self.touched {
            let slot = &mut self.slots[v as usize];
            let mut w = 0.0f32;
            for (k, list) in problems.iter_mut().enumerate() {
                let s = slot.sev[k];
                w = w.max(s);
                if s >= 1.0 {
                    list.push((v, s, slot.val[k], slot.pose[k]));
                }
            }
            worst.push((v, w));
            *slot = EMPTY;
        }
        self.touched.clear();
        GroupResult {
            group,
            poses,
            problems,
            worst,
            regions: Default::default(),
        }
    }

    fn slot(&mut self, v: u32) -> &mut Slot {
        let slot = &mut self.slots[v as usize];
        if !slot.seen {
            slot.seen = true;
            self.touched.push(v);
        }
        slot
    }
}

impl Slot {
    fn keep(&mut self, k: usize, severity: f32, value: f32, pose: u16) {
        if severity > self.sev[k] {
            self.sev[k] = severity;
            self.val[k] = value;
            self.pose[k] = pose;
        }
    }
}

impl Sink for Scratch {
    fn record(&mut self, kind: Kind, v: u32, severity: f32, value: f32) {
        let pose = self.current;
        self.slot(v).keep(kind.index(), severity, value, pose);
    }

    #[inline]
    fn record_triangle(&mut self, tri: [u32; 3], stretch: (f32, f32), shear: (f32, f32), flip: Option<(f32, f32)>) {
        let pose = self.current;
        for v in tri {
            let slot = self.slot(v);
            slot.keep(Kind::Stretch.index(), stretch.0, stretch.1, pose);
            slot.keep(Kind::Shear.index(), shear.0, shear.1, pose);
            if let Some((severity, value)) = flip {
                slot.keep(Kind::Flip.index(), severity, value, pose);
            }
        }
    }
}

pub(super) fn run(
    prep: &Prepared,
    rig: Rig<'_>,
    anim: Option<(&Clip, &[f32])>,
    opts: &CheckOptions,
    progress: Progress<'_>,
) -> Result<CheckReport, CheckError> {
    let skel = rig.skel;
    let joints: Vec<usize> = opts.joints.clone().unwrap_or_else(|| (0..skel.len()).collect());
    let mut groups: Vec<Group> = joints.iter().map(|&j| Group::Joint(j)).collect();
    if anim.is_some() {
        groups.push(Group::Animation);
    }
    let total = groups.len();
    let (done, cancelled) = (AtomicUsize::new(0), AtomicBool::new(false));
    let scale = Scale::new(&opts.tolerances);
    let ends = subtree_ends(skel);
    // Longest first, each worker taking the next when it is free (greedy LPT scheduling): a few joints move most
    // of the mesh, and one of them left to the end kept one core idle while the other finished it.
    let cost: Vec<usize> = groups
        .par_iter()
        .map(|&g| estimate(rig, g, &ends, opts, anim))
        .collect();
    let mut order: Vec<usize> = (0..total).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cost[i]));
    let next = AtomicUsize::new(0);
    let workers = rayon::current_num_threads().clamp(1, total.max(1));
    let finished: Vec<Vec<(usize, Option<GroupResult>)>> = (0..workers)
        .into_par_iter()
        .with_max_len(1)
        .map(|_| {
            let mut scratch: Option<Scratch> = None;
            let mut out = Vec::new();
            while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                if cancelled.load(Ordering::Relaxed) {
                    break;
                }
                let scratch = scratch.get_or_insert_with(|| Scratch::new(rig.positions));
                // A long clip is one task: it asks between frames whether to go on, so that a cancel stops it.
                let go_on = || {
                    if cancelled.load(Ordering::Relaxed) {
                        return false;
                    }
                    let ok = progress(done.load(Ordering::Relaxed), total);
                    if !ok {
                        cancelled.store(true, Ordering::Relaxed);
                    }
                    ok
                };
                let result = match groups[i] {
                    Group::Joint(j) => sweep_joint(prep, rig, j..ends[j], opts, &scale, scratch, true),
                    Group::Animation => anim.map(|anim| frames(prep, rig, anim, opts, &scale, scratch, &go_on)),
                };
                let result = result.map(|mut r| {
                    r.regions = Kind::ALL.map(|kind| regions(prep, rig, &r.problems[kind.index()]));
                    r
                });
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                if !progress(d, total) {
                    cancelled.store(true, Ordering::Relaxed);
                }
                out.push((i, result));
            }
            out
        })
        .collect();
    let mut results: Vec<Option<GroupResult>> = (0..total).map(|_| None).collect();
    for (i, r) in finished.into_iter().flatten() {
        results[i] = r;
    }
    if cancelled.load(Ordering::Relaxed) {
        return Err(CheckError::Cancelled);
    }
    Ok(report(prep, rig, opts, results.into_iter().flatten().collect()))
}

/// Every how many vertices [`estimate`] looks at one.
const ESTIMATE_STRIDE: usize = 16;

/// About how long a task takes, to start the longest first: a joint's poses times the vertices its blends reach
/// (sampled), with the passes over the whole mesh that find them (worth about a fifteenth of a blended vertex's
/// measures in every pose, by callgrind on the creature); the animation's frames times the mesh, each vertex
/// about twice a blended vertex (it measures everything, the jump by the reference path).
fn estimate(rig: Rig<'_>, group: Group, ends: &[usize], opts: &CheckOptions, anim: Option<(&Clip, &[f32])>) -> usize {
    let n = rig.positions.len();
    match group {
        Group::Joint(j) => {
            let poses = sweep(rig.skel, rig.bind, j, opts.free_degrees, opts.steps).len();
            let end = ends.get(j).copied().unwrap_or(j);
            let blended = (0..n)
                .step_by(ESTIMATE_STRIDE)
                .filter(|&v| partial(crate::eval::posed::subtree_weight(rig.weights, v, j..end)))
                .count();
            poses
                .saturating_mul(blended * ESTIMATE_STRIDE)
                .saturating_mul(15)
                .saturating_add(n)
        }
        Group::Animation => anim
            .map_or(0, |(_, times)| times.len())
            .saturating_mul(n)
            .saturating_mul(30),
    }
}

/// Each vertex's share of weight that moves with joint `j` (its subtree `j..end`): all or nothing for rigid
/// skinning (its dominant joint's).
fn subtree_shares(rig: Rig<'_>, j: usize, end: usize, method: Method) -> Vec<f32> {
    let range = j..end;
    (0..rig.positions.len())
        .map(|v| match method {
            Method::Rigid => f32::from(rig.weights.dominant(v).is_some_and(|d| range.contains(&(d as usize))) as u8),
            _ => crate::eval::posed::subtree_weight(rig.weights, v, range.clone()),
        })
        .collect()
}

fn partial(s: f32) -> bool {
    s > SAME && s < 1.0 - SAME
}

/// What a sweep of a joint with subtree shares `s` moves (see [`Active`]).
fn active_for(prep: &Prepared, s: &[f32]) -> Active {
    let mut a = Active::default();
    let n = s.len();
    let mut wedge = vec![false; n];
    for (t, tri) in prep.tris.iter().enumerate() {
        let c = tri.map(|v| s[v as usize]);
        let differ = (c[0] - c[1]).abs() > SAME || (c[0] - c[2]).abs() > SAME;
        if differ || c.iter().any(|&x| partial(x)) {
            a.tris.push(t as u32);
            for &v in tri {
                wedge[v as usize] = true;
            }
        }
    }
    a.wedges = (0..n as u32).filter(|&v| wedge[v as usize]).collect();
    // A vertex whose neighbourhood holds different shares lies within two edges of a moved triangle's corner
    // (or of a vertex whose welded twin differs from it).
    let graph = &prep.graph;
    let mut candidate = vec![false; graph.nodes()];
    for v in 0..n {
        let k = graph.node_of(v);
        if wedge[v] || (s[v] - s[graph.members(k)[0] as usize]).abs() > SAME {
            candidate[k] = true;
            for &u in prep.ring_of(k) {
                candidate[u as usize] = true;
            }
        }
    }
    a.jumps = (0..n as u32)
        .filter(|&v| {
            let k = graph.node_of(v as usize);
            let sv = s[v as usize];
            candidate[k]
                && prep
                    .ring_of(k)
                    .iter()
                    .any(|&u| (s[graph.members(u as usize)[0] as usize] - sv).abs() > SAME)
        })
        .collect();
    a.contacts = (0..prep.contacts.len() as u32)
        .filter(|&c| {
            let c = prep.contacts[c as usize];
            (s[c.v as usize] - s[c.u as usize]).abs() > SAME
        })
        .collect();
    a
}

/// The vertices whose posed positions the measures of `active` read: every corner of a moved vertex's triangles,
/// the jumps' vertices and both ends of each contact.
fn read_by(prep: &Prepared, active: &Active, n: usize) -> Vec<u32> {
    let mut read = vec![false; n];
    for &v in &active.wedges {
        for &t in prep.tris_of(v as usize) {
            for &u in &prep.tris[t as usize] {
                read[u as usize] = true;
            }
        }
    }
    for &v in &active.jumps {
        read[v as usize] = true;
    }
    for &c in &active.contacts {
        let c = prep.contacts[c as usize];
        read[c.v as usize] = true;
        read[c.u as usize] = true;
    }
    (0..n as u32).filter(|&v| read[v as usize]).collect()
}

fn sweep_joint(
    prep: &Prepared,
    rig: Rig<'_>,
    subtree: std::ops::Range<usize>,
    opts: &CheckOptions,
    scale: &Scale,
    scratch: &mut Scratch,
    shortcuts: bool,
) -> Option<GroupResult> {
    let (j, end) = (subtree.start, subtree.end);
    let s = subtree_shares(rig, j, end, opts.method);
    if s.iter().all(|&x| x <= SAME) || s.iter().all(|&x| x >= 1.0 - SAME) {
        // Moves nothing, or moves everything rigidly.
        return None;
    }
    let mut active = active_for(prep, &s);
    // The shortcuts (the jump's sorted neighbourhood shares, the wedges' corners read straight); without them
    // the measures take the reference paths, which the tests compare them to.
    if shortcuts && opts.method != Method::DualQuaternion {
        active.ring_shares = RingShares::new(prep, &active.jumps, &s);
    }
    if shortcuts {
        active.wedge_corners = Some(WedgeCorners::new(prep, &active.wedges));
    }
    // Only what the measures read is posed.
    let moving: Vec<u32> = read_by(prep, &active, s.len())
        .into_iter()
        .filter(|&v| s[v as usize] > SAME)
        .collect();
    let pivot = rig.bind[j].w_axis.truncate();
    let swings = sweep(rig.skel, rig.bind, j, opts.free_degrees, opts.steps);
    let mut poses = Vec::with_capacity(swings.len());
    let mut posed = std::mem::take(&mut scratch.posed);
    for (i, &(axis, angle)) in swings.iter().enumerate() {
        let view = SwingView {
            subtree: j..end,
            share: &s,
            axis,
            angle,
            pivot,
            method: opts.method,
            swing: crate::eval::posed::swing_matrix(pivot, axis, angle),
        };
        for &v in &moving {
            posed[v as usize] = view.place(v, rig.positions[v as usize]);
        }
        scratch.current = i as u16;
        measure(prep, rig.positions, &posed, &view, &active, scale, scratch);
        poses.push(PoseRef::Swing {
            joint: j,
            axis: axis.to_array(),
            degrees: angle.to_degrees(),
        });
    }
    for &v in &moving {
        posed[v as usize] = rig.positions[v as usize];
    }
    scratch.posed = posed;
    Some(scratch.harvest(Group::Joint(j), poses))
}

/// A swing of one joint: its subtree turns by `angle` about `axis` through `pivot`; a vertex follows by its
/// subtree share (module doc of `check`).
struct SwingView<'a> {
    subtree: std::ops::Range<usize>,
    share: &'a [f32],
    axis: Vec3,
    angle: f32,
    pivot: Vec3,
    method: Method,
    /// The whole swing, about the pivot (what the subtree's joints do).
    swing: Mat4,
}

impl SwingView<'_> {
    /// The turn vertex `v` makes: linear blend's is `s R + (1 - s) I` (not a rotation), dual quaternions' a
    /// rotation by the blended angle.
    fn turn_by(&self, v: u32, d: Vec3) -> Vec3 {
        let s = self.share[v as usize];
        match self.method {
            _ if s >= 1.0 => self.swing.transform_vector3(d),
            Method::DualQuaternion => {
                let half = self.angle / 2.0;
                let phi = 2.0 * (s * half.sin()).atan2(1.0 - s + s * half.cos());
                Quat::from_axis_angle(self.axis, phi) * d
            }
            _ => d + s * (self.swing.transform_vector3(d) - d),
        }
    }

    fn place(&self, v: u32, p: Vec3) -> Vec3 {
        self.pivot + self.turn_by(v, p - self.pivot)
    }
}

impl PoseView for SwingView<'_> {
    fn frame(&self, j: u16) -> Mat4 {
        if j != NO_JOINT && self.subtree.contains(&(j as usize)) {
            self.swing
        } else {
            Mat4::IDENTITY
        }
    }

    fn turn(&self, v: u32, n: Vec3) -> Vec3 {
        self.turn_by(v, n)
    }

    fn place_as(&self, v: u32, p: Vec3) -> Vec3 {
        self.place(v, p)
    }

    #[inline]
    fn turn_sum(&self, tri: [u32; 3], n: Vec3) -> Vec3 {
        if self.method == Method::DualQuaternion {
            return tri.iter().map(|&v| self.turn_by(v, n)).sum();
        }
        // PERF: the swing's turn of `n` once for the three corners (the arithmetic of `turn_by`, summed from zero
        // as `Sum` does, so the same bits).
        let rn = self.swing.transform_vector3(n);
        let dn = rn - n;
        let turn = |v: u32| match self.share.get(v as usize) {
            Some(&s) if s >= 1.0 => rn,
            Some(&s) => n + s * dn,
            None => rn,
        };
        Vec3::ZERO + turn(tri[0]) + turn(tri[1]) + turn(tri[2])
    }

    fn linear_swing(&self) -> Option<LinearSwing> {
        (self.method != Method::DualQuaternion).then_some(LinearSwing {
            pivot: self.pivot,
            swing: self.swing,
        })
    }
}

/// An animation frame: every joint's skinning matrix.
struct FrameView<'a> {
    mats: &'a [Mat4],
    weights: &'a crate::model::Weights,
}

impl PoseView for FrameView<'_> {
    fn frame(&self, j: u16) -> Mat4 {
        self.mats.get(j as usize).copied().unwrap_or(Mat4::IDENTITY)
    }

    fn turn(&self, v: u32, n: Vec3) -> Vec3 {
        self.blend(v, n, |m| m.transform_vector3(n))
    }

    fn place_as(&self, v: u32, p: Vec3) -> Vec3 {
        self.blend(v, p, |m| m.transform_point3(p))
    }
}

impl FrameView<'_> {
    /// Linear blend of `apply` over vertex `v`'s weighted skinning matrices (`unweighted` for a vertex with none).
    fn blend(&self, v: u32, unweighted: Vec3, apply: impl Fn(Mat4) -> Vec3) -> Vec3 {
        let (js, ws) = self.weights.row(v as usize);
        crate::deform::blend_row(js, ws, unweighted, |j| Some(apply(self.frame(j as u16))))
    }
}

/// The clip's frames (at most [`crate::model::MAX_FRAMES`], as [`super::check`] refused more); `go_on` is asked
/// every few frames, and a `false` stops early (the run is then cancelled).
fn frames(
    prep: &Prepared,
    rig: Rig<'_>,
    (clip, times): (&Clip, &[f32]),
    opts: &CheckOptions,
    scale: &Scale,
    scratch: &mut Scratch,
    go_on: &dyn Fn() -> bool,
) -> GroupResult {
    let n = rig.positions.len() as u32;
    let active = Active {
        tris: (0..prep.tris.len() as u32).collect(),
        wedges: (0..n).collect(),
        jumps: (0..n).collect(),
        contacts: (0..prep.contacts.len() as u32).collect(),
        ring_shares: None,
        wedge_corners: None,
    };
    let file_pose = Pose::from_file(rig.skel);
    let mut poses = Vec::with_capacity(times.len());
    for (i, &t) in times.iter().enumerate().take(usize::from(u16::MAX)) {
        if i % 8 == 7 && !go_on() {
            break;
        }
        let mut pose = file_pose.clone();
        clip.apply(rig.skel, t, &mut pose);
        let mats = skinning_matrices(&world_from_joint(rig.skel, &pose), rig.bind);
        let (posed, _) = skin_vertices(rig.positions, rig.normals, rig.weights, &mats, opts.method);
        let view = FrameView {
            mats: &mats,
            weights: rig.weights,
        };
        scratch.current = i as u16;
        measure(prep, rig.positions, &posed, &view, &active, scale, scratch);
        poses.push(PoseRef::Frame { time: t });
    }
    scratch.harvest(Group::Animation, poses)
}

fn report(prep: &Prepared, rig: Rig<'_>, opts: &CheckOptions, results: Vec<GroupResult>) -> CheckReport {
    let n = rig.positions.len();
    let mut findings: Vec<Finding> = Vec::new();
    let mut joints = Vec::new();
    let mut groups = Vec::with_capacity(results.len());
    for mut r in results {
        let group_worst = r.worst.iter().map(|w| w.1).fold(0.0f32, f32::max);
        let (joint, joint_name) = match r.group {
            Group::Joint(j) => (Some(j), rig.skel.joints()[j].name.clone()),
            Group::Animation => (None, "animation".to_string()),
        };
        let before = findings.len();
        for kind in Kind::ALL {
            let problems = &r.problems[kind.index()];
            for (region, worst) in std::mem::take(&mut r.regions[kind.index()]) {
                let (_, severity, value, pose) = problems[worst];
                findings.push(Finding {
                    kind,
                    joint,
                    joint_name: joint_name.clone(),
                    pose: r.poses[pose as usize],
                    severity,
                    value,
                    region,
                });
            }
        }
        if let Some(j) = joint {
            joints.push(JointSummary {
                joint: j,
                name: joint_name,
                poses: r.poses.len(),
                worst: group_worst,
                findings: findings.len() - before,
            });
        }
        groups.push(GroupWorst {
            joint,
            poses: r.poses.len(),
            vertices: r.worst,
        });
    }
    let mut report = CheckReport {
        vertices: n,
        triangles: prep.tris.len(),
        diagonal: prep.diagonal,
        method: opts.method,
        poses: 0,
        joints,
        findings,
        counts: [0; Kind::COUNT],
        worst: 0.0,
        vertex_worst: Vec::new(),
        groups,
    };
    report.tally();
    report
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::{PoseView, Scratch, SwingView, sweep_joint};
    use crate::check::measure::Scale;
    use crate::check::prep::Prepared;
    use crate::check::{CheckOptions, Rig};
    use crate::deform::Method;
    use crate::eval::posed::{subtree_ends, swing_matrix};
    use crate::sample::{SampleKind, make_sample};

    #[test]
    fn every_joints_sweep_gives_the_reference_paths_results_bit_for_bit() {
        let s = make_sample(SampleKind::Creature, 5000).unwrap();
        let bind = s.skin.bindings().unwrap();
        let rig = Rig::of(&s.skeleton, bind, &s.skin).unwrap();
        let prep = Prepared::new(rig);
        let ends = subtree_ends(rig.skel);
        let mut scratch = Scratch::new(rig.positions);
        for method in [Method::Linear, Method::Rigid] {
            let opts = CheckOptions {
                method,
                ..Default::default()
            };
            let scale = Scale::new(&opts.tolerances);
            let mut swept = 0;
            for (j, &end) in ends.iter().enumerate() {
                let mut run = |shortcuts| {
                    sweep_joint(&prep, rig, j..end, &opts, &scale, &mut scratch, shortcuts).map(|r| {
                        let bits = |p: &[(u32, f32, f32, u16)]| {
                            p.iter()
                                .map(|&(v, a, b, i)| (v, a.to_bits(), b.to_bits(), i))
                                .collect::<Vec<_>>()
                        };
                        let worst: Vec<(u32, u32)> = r.worst.iter().map(|&(v, w)| (v, w.to_bits())).collect();
                        (r.problems.iter().map(|p| bits(p)).collect::<Vec<_>>(), worst)
                    })
                };
                let (fast, reference) = (run(true), run(false));
                assert_eq!(fast, reference, "joint {j}, {method:?}");
                swept += usize::from(fast.is_some());
            }
            assert!(swept > 10, "{swept} joints swept");
        }
    }

    #[test]
    fn a_swings_turned_normals_sum_as_turning_each_corner_does() {
        let share: Vec<f32> = vec![0.0, 0.25, 1.0, 0.999_99, 1.000_000_1, 0.5];
        let pivot = Vec3::new(0.1, -0.2, 0.3);
        for (axis, angle) in [(Vec3::X, 1.2f32), (Vec3::new(0.6, 0.0, 0.8), -2.9), (Vec3::Z, 0.01)] {
            let view = SwingView {
                subtree: 0..1,
                share: &share,
                axis,
                angle,
                pivot,
                method: Method::Linear,
                swing: swing_matrix(pivot, axis, angle),
            };
            for tri in [[0u32, 1, 2], [3, 4, 5], [2, 2, 4], [1, 3, 0]] {
                let n = Vec3::new(0.3, -0.5, 0.81).normalize();
                let each: Vec3 = tri.iter().map(|&v| view.turn(v, n)).sum();
                assert_eq!(
                    view.turn_sum(tri, n).to_array().map(f32::to_bits),
                    each.to_array().map(f32::to_bits)
                );
            }
        }
    }
}
