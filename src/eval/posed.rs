//! Posed error: how far apart two weight sets put the mesh when the joints move, which is what a rigger sees.
//! Mean L1 counts every weight difference alike; a small one on a far joint can tear the mesh, a large one
//! between two neighbours that move together may not show at all.
//!
//! Definition (for weights `A` measured against a reference `B`, linear blend skinning, the bind pose from the
//! bindings):
//! - **Range of motion.** Every joint `j` that `B` weights is swung on its own, about its bind-pose pivot `p_j`:
//!   for each axis, to both ends of the joint's DOF limit on that axis where the `.skel` has one (about the
//!   joint's own bind-frame axis; an axis locked at 0 is skipped), else to plus and minus 60 degrees about the
//!   world axis. Its descendants follow; every other joint stays.
//! - **Distance.** In such a pose a vertex skinned with `A` lands at `v + S_A(v) (R(v - p) + p - v)`, where
//!   `S_A(v)` is the vertex's total `A` weight on `j` and its descendants; so the two weight sets put it
//!   `|S_A(v) - S_B(v)| |(R - I)(v - p)|` apart, and `|(R - I)u| = 2 |sin(θ/2)|` times `u`'s distance from the
//!   axis. Distances are given as a percentage of the mesh's bounding-box diagonal.
//! - **Report.** The mean and the 99th percentile over every (pose, vertex) pair; the share of vertices that land
//!   more than 2% of the diagonal away in at least one pose; per joint, the mean and maximum over its poses.
//! - **Animation** (optional): at every frame of a clip (30 per second over its range), the whole mesh skinned
//!   with both weight sets in the animated pose; the same mean, 99th percentile and share.
//!
//! Percentiles come from a histogram of 0.001%-of-the-diagonal bins that keeps each bin's largest value (values
//! past 400% share the last bin), so the cost in memory does not grow with the number of poses.

use glam::{Mat4, Quat, Vec3};

use super::CompareError;
use crate::deform::skinning_matrices;
use crate::model::{Clip, FrameBudget, FramesError, Pose, Skeleton, Weights, world_from_joint};

/// The swing about a world axis where a joint has no limit on it.
pub const SWING_DEGREES: f32 = 60.0;
/// A vertex this far apart (percent of the diagonal) in some pose counts as landing far away.
pub const FAR_PERCENT: f64 = 2.0;
/// Frames per second at which an animation is measured.
pub const ANIMATION_FPS: f32 = crate::model::SAMPLE_FPS;
/// The most work an animation measure (a check's or a comparison's) takes: frames times the mesh's vertices
/// plus the skeleton's joints, about a minute of a 25,000-vertex mesh at 30 frames per second. It bounds the
/// time a stranger's clip can cost, beside [`crate::model::MAX_FRAMES`], which bounds its frame list.
pub const MAX_ANIMATION_PAIRS: f64 = 5e7;

const BIN_PERCENT: f64 = 0.001;
const BINS: usize = 400_000;

/// Mean, 99th percentile and far share of a set of distances.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Spread {
    /// Mean distance, percent of the diagonal.
    pub mean_percent: f64,
    /// 99th percentile of the distances, percent of the diagonal: the largest distance in the 0.001% bin where the
    /// 99th percentile falls (exact, or above it by less than 0.001%).
    pub p99_percent: f64,
    /// Share of vertices more than [`FAR_PERCENT`] away in at least one pose or frame.
    pub far_vertices: f64,
    /// How many poses or frames were measured.
    pub poses: usize,
}

/// One joint's swing.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct JointError {
    pub joint: usize,
    pub name: String,
    pub mean_percent: f64,
    pub max_percent: f64,
}

/// The posed error of weights against a reference.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PosedError {
    /// The bounding-box diagonal the percentages refer to.
    pub diagonal: f32,
    /// Over the range of motion of every joint the reference weights.
    pub range_of_motion: Spread,
    /// Every measured joint, worst mean first (ties by index).
    pub joints: Vec<JointError>,
    /// Over an animation's frames, when one was given.
    pub animation: Option<Spread>,
}

/// Accumulates distances (as percentages).
struct Tally {
    /// Per bin: how many distances fell in it, and the largest of them.
    bins: Vec<(u64, f32)>,
    sum: f64,
    count: u64,
    worst: Vec<f32>,
    poses: usize,
}

impl Tally {
    fn new(vertices: usize) -> Self {
        Self {
            bins: vec![(0, 0.0); BINS],
            sum: 0.0,
            count: 0,
            worst: vec![0.0; vertices],
            poses: 0,
        }
    }

    fn add(&mut self, v: usize, percent: f64) {
        let bin = ((percent / BIN_PERCENT) as usize).min(BINS - 1);
        let b = &mut self.bins[bin];
        b.0 += 1;
        b.1 = b.1.max(percent as f32);
        self.sum += percent;
        self.count += 1;
        self.worst[v] = self.worst[v].max(percent as f32);
    }

    fn spread(&self) -> Spread {
        let target = (self.count as f64 * 0.99).ceil() as u64;
        let mut seen = 0;
        let mut p99 = 0.0;
        for &(n, max) in &self.bins {
            seen += n;
            if seen >= target && n > 0 {
                p99 = f64::from(max);
                break;
            }
        }
        let n = self.worst.len().max(1) as f64;
        Spread {
            mean_percent: if self.count == 0 {
                0.0
            } else {
                self.sum / self.count as f64
            },
            p99_percent: if self.count == 0 { 0.0 } else { p99 },
            far_vertices: self.worst.iter().filter(|&&w| f64::from(w) > FAR_PERCENT).count() as f64 / n,
            poses: self.poses,
        }
    }
}

/// The bounding-box diagonal of `positions` (1 for an empty or flat-to-a-point mesh, so percentages stay finite).
pub(crate) fn diagonal(positions: &[Vec3]) -> f32 {
    let (lo, hi) = positions
        .iter()
        .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), p| {
            (lo.min(*p), hi.max(*p))
        });
    let d = (hi - lo).length();
    if d.is_finite() && d > 0.0 { d } else { 1.0 }
}

/// Per joint, one past the last index of its subtree (joints are in depth-first order).
pub(crate) fn subtree_ends(skel: &Skeleton) -> Vec<usize> {
    let n = skel.len();
    let mut end: Vec<usize> = (1..=n).collect();
    for j in (1..n).rev() {
        if let Some(p) = skel.joints()[j].parent {
            end[p] = end[p].max(end[j]);
        }
    }
    end
}

/// Total weight of a row on joints in `range`.
pub(crate) fn subtree_weight(w: &Weights, v: usize, range: std::ops::Range<usize>) -> f32 {
    let (js, ws) = w.row(v);
    js.iter()
        .zip(ws)
        .filter(|(j, _)| range.contains(&(**j as usize)))
        .map(|(_, w)| *w)
        .sum()
}

/// The swings of joint `j`: (unit axis, angle) pairs, to both ends of each axis's range ([`sweep`] with
/// [`SWING_DEGREES`] and one step).
pub fn swings(skel: &Skeleton, bind: &[Mat4], j: usize) -> Vec<(Vec3, f32)> {
    sweep(skel, bind, j, SWING_DEGREES, 1)
}

/// The poses of joint `j` in a sweep of `steps` equal steps from the bind pose to each end of each axis's range:
/// (unit axis, angle) pairs, axis by axis, each axis's low end first and in order of growing size. An axis with a
/// DOF limit in the `.skel` turns about the joint's own bind-frame axis to the limit's ends (an end at 0 adds
/// nothing); an axis without one, or whose limit reaches past a half turn (course files write `-100000 100000`
/// for a free axis), turns about the world axis by plus and minus `free_degrees` (at most a half turn).
pub fn sweep(skel: &Skeleton, bind: &[Mat4], j: usize, free_degrees: f32, steps: usize) -> Vec<(Vec3, f32)> {
    let mut out = Vec::new();
    let Some(joint) = skel.joint(j) else { return out };
    let frame = bind.get(j).copied().unwrap_or(Mat4::IDENTITY);
    let pi = std::f32::consts::PI;
    let steps = steps.max(1);
    for (axis, limit) in joint.limits.iter().enumerate() {
        let (dir, ends) = match limit.filter(|l| l.lo >= -pi && l.hi <= pi) {
            Some(l) => (frame.col(axis).truncate().normalize_or(Vec3::AXES[axis]), [l.lo, l.hi]),
            None => {
                let a = free_degrees.to_radians().clamp(-pi, pi);
                (Vec3::AXES[axis], [-a, a])
            }
        };
        for end in ends {
            if end == 0.0 || !end.is_finite() {
                continue;
            }
            for k in 1..=steps {
                out.push((dir, end * k as f32 / steps as f32));
            }
        }
    }
    out
}

/// Why a posed error cannot be measured.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PosedFailure {
    #[error(transparent)]
    Mesh(#[from] CompareError),
    /// The clip's frames are more than a measure takes (the message names the range and the limit).
    #[error(transparent)]
    Frames(#[from] FramesError),
}

/// The posed error of `a` against the reference `b` on the mesh `positions` bound at `bind` (see the module doc).
/// `clip`, when given, adds the animation measure.
pub fn posed_error(
    skel: &Skeleton,
    bind: &[Mat4],
    positions: &[Vec3],
    a: &Weights,
    b: &Weights,
    clip: Option<&Clip>,
) -> Result<PosedError, PosedFailure> {
    let n = positions.len();
    for w in [a, b] {
        if w.len() != n {
            return Err(CompareError { a: w.len(), b: n }.into());
        }
    }
    let times = match clip {
        Some(c) => Some(frame_times(c, n + skel.len(), "a comparison")?),
        None => None,
    };
    let diag = diagonal(positions);
    let percent = 100.0 / f64::from(diag);
    let ends = subtree_ends(skel);
    let mut used = vec![false; skel.len()];
    for v in 0..n {
        for &j in b.row(v).0 {
            if let Some(u) = used.get_mut(j as usize) {
                *u = true;
            }
        }
    }
    let mut tally = Tally::new(n);
    let mut joints = Vec::new();
    for j in (0..skel.len()).filter(|&j| used[j]) {
        let pivot = bind.get(j).map_or(Vec3::ZERO, |m| m.w_axis.truncate());
        let swings = swings(skel, bind, j);
        let differ: Vec<f32> = (0..n)
            .map(|v| (subtree_weight(a, v, j..ends[j]) - subtree_weight(b, v, j..ends[j])).abs())
            .collect();
        let (mut sum, mut max, mut count) = (0.0f64, 0.0f64, 0u64);
        for &(axis, angle) in &swings {
            let chord = 2.0 * (angle / 2.0).sin().abs();
            tally.poses += 1;
            for (v, p) in positions.iter().enumerate() {
                let u = *p - pivot;
                let off_axis = (u - u.dot(axis) * axis).length();
                let d = f64::from(differ[v] * chord * off_axis) * percent;
                tally.add(v, d);
                sum += d;
                max = max.max(d);
                count += 1;
            }
        }
        joints.push(JointError {
            joint: j,
            name: skel.joints()[j].name.clone(),
            mean_percent: if count == 0 { 0.0 } else { sum / count as f64 },
            max_percent: max,
        });
    }
    joints.sort_by(|x, y| y.mean_percent.total_cmp(&x.mean_percent).then(x.joint.cmp(&y.joint)));
    let animation = clip
        .zip(times)
        .map(|(c, times)| animation_error(skel, bind, positions, a, b, (c, &times), percent));
    Ok(PosedError {
        diagonal: diag,
        range_of_motion: tally.spread(),
        joints,
        animation,
    })
}

/// The frame times of `clip` at [`ANIMATION_FPS`] over its range (at least one), for a measure (`who`) whose
/// every frame costs `per_frame` (vertices plus joints): refused before anything is allocated past
/// [`crate::model::MAX_FRAMES`] frames or [`MAX_ANIMATION_PAIRS`] of work.
pub fn frame_times(clip: &Clip, per_frame: usize, who: &'static str) -> Result<Vec<f32>, FramesError> {
    let budget = FrameBudget {
        per_frame,
        unit: "vertices and joints",
        limit: MAX_ANIMATION_PAIRS,
        who,
    };
    clip.sample_times(ANIMATION_FPS, 1, Some(budget))
}

fn animation_error(
    skel: &Skeleton,
    bind: &[Mat4],
    positions: &[Vec3],
    a: &Weights,
    b: &Weights,
    (clip, times): (&Clip, &[f32]),
    percent: f64,
) -> Spread {
    let mut tally = Tally::new(positions.len());
    let skin = |w: &Weights, v: usize, m: &[Mat4], p: Vec3| -> Vec3 {
        let (js, ws) = w.row(v);
        crate::deform::blend_row(js, ws, p, |j| m.get(j).map(|m| m.transform_point3(p)))
    };
    let file_pose = Pose::from_file(skel);
    for &t in times {
        let mut pose = file_pose.clone();
        clip.apply(skel, t, &mut pose);
        let m = skinning_matrices(&world_from_joint(skel, &pose), bind);
        tally.poses += 1;
        for (v, &p) in positions.iter().enumerate() {
            let d = (skin(a, v, &m, p) - skin(b, v, &m, p)).length();
            tally.add(v, f64::from(d) * percent);
        }
    }
    tally.spread()
}

/// A rotation by `angle` about `axis` through `pivot`, as a matrix (for the reference implementation in tests).
pub fn swing_matrix(pivot: Vec3, axis: Vec3, angle: f32) -> Mat4 {
    Mat4::from_translation(pivot) * Mat4::from_quat(Quat::from_axis_angle(axis, angle)) * Mat4::from_translation(-pivot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deform::{Method, skin_vertices};
    use crate::model::Joint;

    /// `root` at the origin, `arm` at (1, 0, 0); no limits.
    fn two_joints() -> (Skeleton, Vec<Mat4>) {
        let skel = Skeleton::new(vec![
            Joint::new("root", None, Vec3::ZERO),
            Joint::new("arm", Some(0), Vec3::X),
        ])
        .unwrap();
        let bind = world_from_joint(&skel, &Pose::from_file(&skel));
        (skel, bind)
    }

    fn rows(joints: &[u16]) -> Weights {
        let offsets: Vec<u32> = (0..=joints.len() as u32).collect();
        Weights::new(offsets, joints.to_vec(), vec![1.0; joints.len()]).unwrap()
    }

    #[test]
    fn by_hand_on_two_joints() {
        let (skel, bind) = two_joints();
        let positions = [
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(2.0, 1.0, 0.0),
        ];
        let a = rows(&[0, 0, 0]);
        let b = rows(&[0, 1, 1]);
        let e = posed_error(&skel, &bind, &positions, &a, &b, None).unwrap();
        // The diagonal of (0.5, 0, 0) .. (2, 1, 0).
        let diag = 3.25f64.sqrt();
        assert!((f64::from(e.diagonal) - diag).abs() < 1e-6);
        // Swinging `root` moves every vertex with both sets alike. Swinging `arm` by 60 degrees (chord 1): v1 is 0
        // from the x axis through (1, 0, 0), 1 from y and z; v2 is 1, 1 and sqrt 2; v0 has no arm weight.
        let arm_sum = 2.0 * (1.0 + 1.0 + 1.0 + 1.0 + 2f64.sqrt());
        let mean = arm_sum / 36.0 / diag * 100.0;
        assert!((e.range_of_motion.mean_percent - mean).abs() < 1e-4, "{e:?}");
        assert_eq!(e.range_of_motion.poses, 12);
        assert!(
            (e.range_of_motion.p99_percent - 2f64.sqrt() / diag * 100.0).abs() < 2e-3,
            "{e:?}"
        );
        assert!((e.range_of_motion.far_vertices - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!((e.joints[0].name.as_str(), e.joints[1].name.as_str()), ("arm", "root"));
        assert!((e.joints[0].mean_percent - arm_sum / 18.0 / diag * 100.0).abs() < 1e-4);
        assert!((e.joints[0].max_percent - 2f64.sqrt() / diag * 100.0).abs() < 1e-4);
        assert_eq!((e.joints[1].mean_percent, e.joints[1].max_percent), (0.0, 0.0));
        // Against itself: nothing.
        let same = posed_error(&skel, &bind, &positions, &b, &b, None).unwrap();
        assert_eq!(same.range_of_motion.mean_percent, 0.0);
        assert_eq!(same.range_of_motion.far_vertices, 0.0);
    }

    #[test]
    fn limits_replace_the_sixty_degree_swings() {
        let mut joints = vec![
            Joint::new("root", None, Vec3::ZERO),
            Joint::new("arm", Some(0), Vec3::X),
        ];
        joints[1].limits = [
            None,
            Some(crate::model::Limit { lo: 0.0, hi: 0.0 }),
            Some(crate::model::Limit { lo: -0.5, hi: 1.5 }),
        ];
        let skel = Skeleton::new(joints).unwrap();
        let bind = world_from_joint(&skel, &Pose::from_file(&skel));
        let s = swings(&skel, &bind, 1);
        // x: plus and minus 60 degrees; y: locked; z: its limits, about the joint's own z.
        let a = SWING_DEGREES.to_radians();
        assert_eq!(s, vec![(Vec3::X, -a), (Vec3::X, a), (Vec3::Z, -0.5), (Vec3::Z, 1.5)]);
    }

    /// The closed form against skinning the whole mesh with matrices in every swing.
    #[test]
    fn closed_form_equals_full_linear_blend_skinning() {
        let s = crate::sample::make_sample(crate::sample::SampleKind::Creature, 600).unwrap();
        let bind = s.skin.bindings().unwrap().to_vec();
        let b = s.skin.weights().unwrap().clone();
        // A: each row's weight moved halfway to the next joint (a different, still valid set).
        let n = s.skin.vertex_count();
        let a_rows: Vec<crate::model::Row> = (0..n)
            .map(|v| {
                let (js, ws) = b.row(v);
                let mut r: crate::model::Row = js.iter().zip(ws).map(|(&j, &w)| (j, w * 0.5)).collect();
                let next = ((js[0] as usize + 1) % s.skeleton.len()) as u16;
                r.push((next, 0.5));
                r
            })
            .collect();
        let (a, _) = Weights::normalized(a_rows.iter().map(Vec::as_slice)).unwrap();
        let e = posed_error(&s.skeleton, &bind, s.skin.positions(), &a, &b, None).unwrap();
        let ends = subtree_ends(&s.skeleton);
        let percent = 100.0 / f64::from(e.diagonal);
        for je in &e.joints {
            let j = je.joint;
            let pivot = bind[j].w_axis.truncate();
            let (mut sum, mut max, mut count) = (0.0f64, 0.0f64, 0);
            for (axis, angle) in swings(&s.skeleton, &bind, j) {
                let swing = swing_matrix(pivot, axis, angle);
                let world: Vec<Mat4> = (0..s.skeleton.len())
                    .map(|k| {
                        if (j..ends[j]).contains(&k) {
                            swing * bind[k]
                        } else {
                            bind[k]
                        }
                    })
                    .collect();
                let m = skinning_matrices(&world, &bind);
                let (pa, _) = skin_vertices(s.skin.positions(), s.skin.normals(), &a, &m, Method::Linear);
                let (pb, _) = skin_vertices(s.skin.positions(), s.skin.normals(), &b, &m, Method::Linear);
                for (x, y) in pa.iter().zip(&pb) {
                    let d = f64::from((*x - *y).length()) * percent;
                    sum += d;
                    max = max.max(d);
                    count += 1;
                }
            }
            let mean = sum / count as f64;
            assert!(
                (je.mean_percent - mean).abs() < 1e-4 + 1e-3 * mean,
                "{}: {} vs {mean}",
                je.name,
                je.mean_percent
            );
            assert!(
                (je.max_percent - max).abs() < 1e-4 + 1e-3 * max,
                "{}: {} vs {max}",
                je.name,
                je.max_percent
            );
        }
        assert!(e.range_of_motion.mean_percent > 0.0);
    }

    #[test]
    fn an_animation_measures_every_frame_and_an_absurd_range_is_refused() {
        let s = crate::sample::make_sample(crate::sample::SampleKind::Creature, 600).unwrap();
        let bind = s.skin.bindings().unwrap().to_vec();
        let b = s.skin.weights().unwrap().clone();
        let clip = crate::sample::walk_clip(&s.skeleton, 1.0);
        let e = posed_error(&s.skeleton, &bind, s.skin.positions(), &b, &b, Some(&clip)).unwrap();
        let anim = e.animation.unwrap();
        assert_eq!(anim.poses, clip.sample_times(ANIMATION_FPS, 1, None).unwrap().len());
        assert_eq!((anim.mean_percent, anim.far_vertices), (0.0, 0.0));
        let rigid = rows(&vec![0; s.skin.vertex_count()]);
        let e = posed_error(&s.skeleton, &bind, s.skin.positions(), &rigid, &b, Some(&clip)).unwrap();
        assert!(e.animation.unwrap().mean_percent > 0.1);
        let long = Clip {
            range: (0.0, 1e9),
            ..clip
        };
        let err = posed_error(&s.skeleton, &bind, s.skin.positions(), &b, &b, Some(&long)).unwrap_err();
        assert!(
            matches!(err, PosedFailure::Frames(FramesError::TooMuchWork { .. })),
            "{err}"
        );
    }
}
