//! Sample rigs: a skeleton and a bound, weighted skin made from nothing, for tests, benchmarks and demos.
//!
//! [`make_sample`] builds one of three rigs ([`SampleKind`]): a straight four-joint `Tube`, an `Arm` with a
//! palm and three close fingers, and a biped-ish `Creature` whose arms hang 0.05 units beside its torso. The
//! skeleton's frames are aligned with the world in the zero pose (every rotation zero), and the mesh is built
//! in that pose; the skin's bindings are `world_from_joint(&skeleton, &Pose::zero(&skeleton))`.
//!
//! Geometry. Every part of a mesh is a closed tube around a spine: the polyline through a chain of joint
//! pivots j_0..j_n, optionally extended before j_0 and beyond j_n (the leaf part), with each bend rounded by
//! a circular arc. A point of the tube is `c(s) + r(s) e(s, θ)`, where `c(s)` is the spine at arc length s,
//! `e` the unit radial direction of a parallel-transported frame, and `r(s)` a radius interpolated with
//! smoothstep between knots at the spine's ends and pivots. Both ends are closed by hemispheres whose rings
//! shrink to a pole vertex. Normals are the surface's analytic unit normals, `normalize((1 - r κ·e) e - r'(s)
//! T)` on the tube (T the tangent, κ the curvature vector) and radial on the caps. Triangles are
//! counter-clockwise seen from outside, and each part is a closed, consistently oriented manifold. Parts may
//! interpenetrate at joints, but the fingers keep a gap of a third of their radius between them.
//!
//! Weights. For a part whose spine follows joints j_0..j_n with pivots at arc lengths s_0 < s_1 < ... < s_n
//! (for a rounded bend, the middle of its arc), a vertex of a ring at arc length s (a cap vertex or pole:
//! s of the ring the cap closes) gets:
//! - inside the blend window of an interior pivot k >= 1, |s - s_k| < h with h = 0.25 * min(s_k - s_{k-1},
//!   s_{k+1} - s_k) (s_{n+1} being the spine's end; the last pivot has a window only when a leaf part
//!   follows it): with t = smoothstep((s - (s_k - h)) / (2h)), smoothstep(x) = x*x*(3-2x) on x clamped to
//!   [0, 1], weight 1-t on j_{k-1} and t on j_k;
//! - elsewhere weight 1 on j_k for the k with s_k <= s < s_{k+1}; j_0 before s_1 (including any part before
//!   s_0), j_n from s_n on (the leaf part).
//!
//! Zero weights are dropped, so each row has 1 or 2 influences and sums to 1.
//!
//! Vertex count. A target T = max(`vertices`, 300) (at most 2^27) is met by choosing an edge length e: each
//! part gets `S = max(8, round(2π r_max / e))` segments around, `round(L / e) + 1` rings along its spine of
//! length L, and `max(2, round(π r_end / (2e)))` ring steps per cap, for `S * rings + 2` vertices. The count
//! falls as e grows, so e is found by bisection; then the part with the most segments gets rings added or
//! removed to come within S/2 of T. The result is checked to lie in [0.9 T, 1.1 T] (in practice it is
//! within a fraction of a percent) and the function fails otherwise.
//!
//! Determinism: no randomness, no threads, no hashing; the same kind and target give bit-identical output.

use std::f32::consts::{FRAC_PI_2, TAU};
use std::ops::Range;

use glam::{Quat, Vec3};

use crate::model::skeleton::{Joint, Limit, Pose, Skeleton, world_from_joint};
use crate::model::{Skin, Weights};

/// Targets below this are raised to it.
const MIN_VERTICES: usize = 300;
/// Targets above this are refused (indices must fit in u32 with room to spare).
const MAX_VERTICES: usize = 1 << 27;
/// The fewest segments around any part.
const MIN_SEGMENTS: usize = 8;

/// Which sample rig to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// Four joints (root, joint1, joint2, end) along +Y in one tube of radius 0.25, y from -0.25 to 3.5.
    Tube,
    /// Shoulder, elbow, wrist and hand along +X, with three two-joint fingers; one tube for the arm, one for
    /// the palm and one per finger.
    Arm,
    /// A biped: pelvis to head, two hanging arms and two legs with feet; one tube per chain.
    Creature,
}

impl SampleKind {
    /// Every kind, in declaration order.
    pub const ALL: [SampleKind; 3] = [SampleKind::Tube, SampleKind::Arm, SampleKind::Creature];

    /// The lower-case name: `tube`, `arm` or `creature`.
    pub fn name(self) -> &'static str {
        match self {
            SampleKind::Tube => "tube",
            SampleKind::Arm => "arm",
            SampleKind::Creature => "creature",
        }
    }

    /// The kind with this name, ignoring ASCII case and surrounding white space.
    pub fn from_name(s: &str) -> Option<Self> {
        let s = s.trim();
        Self::ALL.into_iter().find(|k| k.name().eq_ignore_ascii_case(s))
    }
}

/// A generated rig: the skeleton and its skin, with weights and bindings.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub skeleton: crate::model::Skeleton,
    pub skin: crate::model::Skin,
}

/// Make a sample rig of about `vertices` vertices.
///
/// `vertices` is a target: with T = max(`vertices`, 300), the result has between 0.9 T and 1.1 T vertices
/// (see the module documentation for how). Fails only for a target above 2^27.
pub fn make_sample(kind: SampleKind, vertices: usize) -> Result<Sample, String> {
    build(kind, vertices).map(|(sample, _)| sample)
}

/// The sample and the vertex range of each part (tube), in order.
fn build(kind: SampleKind, vertices: usize) -> Result<(Sample, Vec<Range<usize>>), String> {
    if vertices > MAX_VERTICES {
        return Err(format!(
            "{vertices} vertices is more than the {MAX_VERTICES} a sample may have"
        ));
    }
    let target = vertices.max(MIN_VERTICES);
    let mut rig = rig(kind);
    let rest = rest_positions(&rig.joints);
    let spines: Vec<Spine> = rig.tubes.iter().map(|t| Spine::new(t, &rest)).collect();
    for (j, bounds) in bone_boxes(&rig.tubes, &rest).into_iter().enumerate() {
        if let (Some((lo, hi)), Some(joint)) = (bounds, rig.joints.get_mut(j)) {
            joint.box_min = Some(lo);
            joint.box_max = Some(hi);
        }
    }
    let skeleton = Skeleton::new(rig.joints).map_err(|e| format!("sample skeleton: {e}"))?;
    let bindings = world_from_joint(&skeleton, &Pose::zero(&skeleton));

    let plans = plan(&spines, target)?;
    let mut mesh = MeshBuf::with_capacity(
        plans.iter().map(TubePlan::vertices).sum(),
        plans.iter().map(TubePlan::triangles).sum(),
    );
    let mut parts = Vec::with_capacity(plans.len());
    for (spine, plan) in spines.iter().zip(&plans) {
        let start = mesh.positions.len();
        emit_tube(spine, plan, &mut mesh);
        parts.push(start..mesh.positions.len());
    }

    let weights = Weights::new(mesh.offsets, mesh.joints, mesh.values).map_err(|e| format!("sample weights: {e}"))?;
    let mut skin = Skin::new(mesh.positions, Some(mesh.normals), mesh.triangles)
        .and_then(|s| s.with_weights(Some(weights)))
        .map_err(|e| format!("sample skin: {e}"))?;
    skin.set_bindings(Some(bindings))
        .map_err(|e| format!("sample bindings: {e}"))?;
    Ok((Sample { skeleton, skin }, parts))
}

// ---------------------------------------------------------------------------------------------------------
// Rig descriptions.

/// Rotation limits about x, y, z as (lo, hi).
type Limits = [(f32, f32); 3];

/// One closed tube around a chain of joints.
struct TubeDef {
    /// Joints j_0..j_n whose pivots the spine passes through; at least two.
    chain: Vec<usize>,
    /// Spine length before j_0 (against the first bone's direction) and after j_n (along the last bone's).
    start_ext: f32,
    end_ext: f32,
    /// Radius at the spine's start, at each pivot and at the spine's end (`chain.len() + 2` values; the
    /// start or end value is unused when that extension is zero).
    radii: Vec<f32>,
    /// Radius of the arc that rounds each bend of the spine.
    fillet: f32,
}

#[derive(Default)]
struct Rig {
    joints: Vec<Joint>,
    tubes: Vec<TubeDef>,
}

impl Rig {
    fn joint(
        &mut self,
        name: impl Into<String>,
        parent: Option<usize>,
        offset: [f32; 3],
        limits: Option<Limits>,
        pose: Option<[f32; 3]>,
    ) -> usize {
        let mut joint = Joint::new(name, parent, Vec3::from(offset));
        if let Some(limits) = limits {
            joint.limits = limits.map(|(lo, hi)| Some(Limit { lo, hi }));
        }
        joint.pose = pose.map(Vec3::from);
        self.joints.push(joint);
        self.joints.len() - 1
    }

    fn tube(&mut self, chain: &[usize], start_ext: f32, end_ext: f32, radii: &[f32], fillet: f32) {
        debug_assert!(chain.len() >= 2 && radii.len() == chain.len() + 2);
        self.tubes.push(TubeDef {
            chain: chain.to_vec(),
            start_ext,
            end_ext,
            radii: radii.to_vec(),
            fillet,
        });
    }
}

fn rig(kind: SampleKind) -> Rig {
    match kind {
        SampleKind::Tube => tube_rig(),
        SampleKind::Arm => arm_rig(),
        SampleKind::Creature => creature_rig(),
    }
}

fn tube_rig() -> Rig {
    const LIMITS: Limits = [(-2.0, 2.0), (-0.5, 0.5), (-2.0, 2.0)];
    const BEND: Option<[f32; 3]> = Some([0.5, 0.0, 0.0]);
    let mut rig = Rig::default();
    let root = rig.joint("root", None, [0.0; 3], None, None);
    let joint1 = rig.joint("joint1", Some(root), [0.0, 1.0, 0.0], Some(LIMITS), BEND);
    let joint2 = rig.joint("joint2", Some(joint1), [0.0, 1.0, 0.0], Some(LIMITS), BEND);
    let end = rig.joint("end", Some(joint2), [0.0, 1.0, 0.0], Some(LIMITS), BEND);
    // Spine y = 0..3.25, caps to -0.25 and 3.5.
    rig.tube(&[root, joint1, joint2, end], 0.0, 0.25, &[0.25; 6], 0.0);
    rig
}

/// Finger radius in the arm; finger axes are `FINGER_SPACING` apart, leaving a gap of a third of the radius.
const FINGER_RADIUS: f32 = 0.04;
const FINGER_SPACING: f32 = FINGER_RADIUS * (2.0 + 1.0 / 3.0);

fn arm_rig() -> Rig {
    let mut rig = Rig::default();
    let shoulder = rig.joint("shoulder", None, [0.0; 3], None, None);
    let elbow = rig.joint(
        "elbow",
        Some(shoulder),
        [1.0, 0.0, 0.0],
        Some([(-1.2, 1.2), (0.0, 0.0), (0.0, 2.6)]),
        Some([0.4, 0.0, 1.2]),
    );
    let wrist = rig.joint(
        "wrist",
        Some(elbow),
        [0.9, 0.0, 0.0],
        Some([(-0.3, 0.3), (-0.5, 0.5), (-1.2, 1.2)]),
        Some([0.0, 0.2, -0.5]),
    );
    let hand = rig.joint(
        "hand",
        Some(wrist),
        [0.3, 0.0, 0.0],
        Some([(-0.2, 0.2), (-0.2, 0.2), (-0.3, 0.3)]),
        None,
    );
    rig.tube(&[shoulder, elbow, wrist], 0.0, 0.05, &[0.16, 0.16, 0.12, 0.1, 0.1], 0.0);
    rig.tube(&[wrist, hand], 0.0, 0.05, &[0.11, 0.11, 0.13, 0.12], 0.0);
    for (name, z, length) in [
        ("index", FINGER_SPACING, 0.2),
        ("middle", 0.0, 0.22),
        ("ring", -FINGER_SPACING, 0.2),
    ] {
        let base = rig.joint(
            format!("{name}_1"),
            Some(hand),
            [0.02, 0.0, z],
            Some([(-0.1, 0.1), (-0.3, 0.3), (-1.6, 0.2)]),
            Some([0.0, 0.0, -0.6]),
        );
        let tip = rig.joint(
            format!("{name}_2"),
            Some(base),
            [length, 0.0, 0.0],
            Some([(0.0, 0.0), (0.0, 0.0), (-1.8, 0.0)]),
            Some([0.0, 0.0, -0.8]),
        );
        rig.tube(&[base, tip], 0.0, 0.14, &[FINGER_RADIUS; 4], 0.0);
    }
    rig
}

/// The creature's torso has a radius of at most `TORSO_RADIUS` and its arms at most `ARM_RADIUS`; the arms'
/// axes hang `ARM_X` from the torso's (the Y axis), so the surfaces are at least `ARM_GAP` apart.
const TORSO_RADIUS: f32 = 0.2;
const ARM_RADIUS: f32 = 0.06;
const ARM_GAP: f32 = 0.05;
const ARM_X: f32 = TORSO_RADIUS + ARM_GAP + ARM_RADIUS;

/// Limits and pose mirrored from the left (+X) side to the right: y and z rotations change sign.
fn side(limits: Limits, pose: Option<[f32; 3]>, sign: f32) -> (Option<Limits>, Option<[f32; 3]>) {
    let [x, (ylo, yhi), (zlo, zhi)] = limits;
    let limits = if sign > 0.0 {
        limits
    } else {
        [x, (-yhi, -ylo), (-zhi, -zlo)]
    };
    (Some(limits), pose.map(|[x, y, z]| [x, sign * y, sign * z]))
}

fn creature_rig() -> Rig {
    let mut rig = Rig::default();
    let back = Some([(-1.0, 1.0), (-0.8, 0.8), (-0.6, 0.6)]);
    let root = rig.joint("root", None, [0.0, 1.0, 0.0], None, None);
    let spine = rig.joint("spine", Some(root), [0.0, 0.2, 0.0], back, Some([0.15, 0.0, 0.0]));
    let chest = rig.joint("chest", Some(spine), [0.0, 0.25, 0.0], back, None);
    let neck = rig.joint(
        "neck",
        Some(chest),
        [0.0, 0.25, 0.0],
        Some([(-0.8, 0.8), (-1.2, 1.2), (-0.5, 0.5)]),
        None,
    );
    let head = rig.joint(
        "head",
        Some(neck),
        [0.0, 0.1, 0.0],
        Some([(-0.6, 0.6), (-0.8, 0.8), (-0.4, 0.4)]),
        Some([-0.2, 0.3, 0.0]),
    );
    // Pelvis y 0.95 (cap to 0.78) to the top of the head at 2.11; widest at the chest.
    rig.tube(
        &[root, spine, chest, neck, head],
        0.05,
        0.2,
        &[0.17, 0.19, 0.17, TORSO_RADIUS, 0.065, 0.12, 0.11],
        0.0,
    );
    for (suffix, sign) in [("l", 1.0), ("r", -1.0)] {
        let (limits, pose) = side([(-3.0, 0.8), (-1.5, 1.5), (-0.3, 2.8)], Some([-0.4, 0.0, 0.3]), sign);
        let shoulder = rig.joint(
            format!("shoulder_{suffix}"),
            Some(chest),
            [sign * ARM_X, 0.2, 0.0],
            limits,
            pose,
        );
        let (limits, pose) = side([(-2.6, 0.0), (-1.0, 1.0), (-0.1, 0.1)], Some([-1.0, 0.0, 0.0]), sign);
        let elbow = rig.joint(
            format!("elbow_{suffix}"),
            Some(shoulder),
            [0.0, -0.3, 0.0],
            limits,
            pose,
        );
        let (limits, pose) = side([(-1.2, 1.2), (-1.0, 1.0), (-0.5, 0.5)], None, sign);
        let wrist = rig.joint(format!("wrist_{suffix}"), Some(elbow), [0.0, -0.28, 0.0], limits, pose);
        rig.tube(
            &[shoulder, elbow, wrist],
            0.0,
            0.12,
            &[ARM_RADIUS, ARM_RADIUS, 0.05, 0.042, 0.048],
            0.0,
        );
    }
    for (suffix, sign) in [("l", 1.0), ("r", -1.0)] {
        let (limits, pose) = side([(-2.0, 0.6), (-0.8, 0.8), (-0.3, 1.2)], Some([-0.5, 0.0, 0.1]), sign);
        let hip = rig.joint(
            format!("hip_{suffix}"),
            Some(root),
            [sign * 0.1, -0.05, 0.0],
            limits,
            pose,
        );
        let (limits, pose) = side([(0.0, 2.5), (0.0, 0.0), (0.0, 0.0)], Some([0.9, 0.0, 0.0]), sign);
        let knee = rig.joint(format!("knee_{suffix}"), Some(hip), [0.0, -0.42, 0.0], limits, pose);
        let (limits, pose) = side([(-0.8, 0.8), (-0.3, 0.3), (-0.3, 0.3)], Some([-0.3, 0.0, 0.0]), sign);
        let ankle = rig.joint(format!("ankle_{suffix}"), Some(knee), [0.0, -0.42, 0.0], limits, pose);
        let (limits, pose) = side([(-0.6, 0.6), (0.0, 0.0), (0.0, 0.0)], None, sign);
        let toe = rig.joint(format!("toe_{suffix}"), Some(ankle), [0.0, -0.04, 0.17], limits, pose);
        rig.tube(
            &[hip, knee, ankle, toe],
            0.0,
            0.06,
            &[0.09, 0.09, 0.065, 0.05, 0.045, 0.04],
            0.09,
        );
    }
    rig
}

/// A walk cycle for a skeleton with the creature's joint names (`hip_l`, `knee_r`, `shoulder_l`, ...): hips
/// swing (x rotation -0.5 forward to 0.35 back), knees bend during the forward swing, shoulders swing against
/// the hips, the pelvis bobs; the right side runs half a cycle behind the left. Every other DOF holds the
/// skeleton file's pose. `period` seconds per cycle, keys every 1/24 of it with the curves' own slopes, cycling
/// both ways. For the editor's built-in scene and the playback tests.
pub fn walk_clip(skel: &Skeleton, period: f32) -> crate::model::Clip {
    use crate::model::{Channel, Clip, Extrapolation, Key, Tangent};
    let period = if period.is_finite() && period > 0.0 {
        period
    } else {
        1.2
    };
    const STEPS: usize = 24;
    let file = Pose::from_file(skel);
    let constant = |v: f32| -> Channel {
        let key = Key {
            time: 0.0,
            value: v,
            tangent_in: Tangent::Flat,
            tangent_out: Tangent::Flat,
        };
        match Channel::new(Extrapolation::Constant, Extrapolation::Constant, vec![key]) {
            Ok(c) => c,
            Err(_) => unreachable!("one finite key makes a channel"),
        }
    };
    let curve = |f: &dyn Fn(f32) -> f32| -> Channel {
        let keys = (0..=STEPS)
            .map(|k| {
                let phase = k as f32 / STEPS as f32;
                // The curve's own slope (per second), so the cycle joins smoothly at its ends too.
                let h = 1e-3;
                let slope = (f(phase + h) - f(phase - h)) / (2.0 * h) / period;
                Key {
                    time: phase * period,
                    value: f(phase),
                    tangent_in: Tangent::Fixed(slope),
                    tangent_out: Tangent::Fixed(slope),
                }
            })
            .collect();
        // Keys are in time order and finite by construction.
        Channel::new(Extrapolation::Cycle, Extrapolation::Cycle, keys).unwrap_or_else(|_| constant(f(0.0)))
    };
    let root = file.root_translation;
    let mut channels = vec![
        constant(root.x),
        curve(&|p| root.y + 0.02 * (2.0 * TAU * p).cos()),
        constant(root.z),
    ];
    for (j, joint) in skel.joints().iter().enumerate() {
        let base = file.dofs[j];
        let (kind, side) = match joint.name.rsplit_once('_') {
            Some((kind, "l")) => (kind, 0.0),
            Some((kind, "r")) => (kind, 0.5),
            _ => ("", 0.0),
        };
        let x: Channel = match kind {
            "hip" => curve(&|p| -0.075 - 0.425 * (TAU * (p + side)).cos()),
            "knee" => curve(&|p| 0.15 + 0.9 * (-(TAU * (p + side)).sin()).max(0.0)),
            "shoulder" => curve(&|p| base.x + 0.35 * (TAU * (p + side)).cos()),
            _ => constant(base.x),
        };
        channels.push(x);
        channels.push(constant(base.y));
        channels.push(constant(base.z));
    }
    Clip {
        range: (0.0, period),
        channels,
    }
}

/// World position of every joint's pivot in the zero pose (frames are not rotated, so offsets add up).
fn rest_positions(joints: &[Joint]) -> Vec<Vec3> {
    let mut world: Vec<Vec3> = Vec::with_capacity(joints.len());
    for j in joints {
        let base = j.parent.and_then(|p| world.get(p).copied()).unwrap_or(Vec3::ZERO);
        world.push(base + j.offset);
    }
    world
}

/// Each joint's box in its own space: the bounds of its bone's stretch of every tube it is on (from its pivot
/// to the next, or to the spine's end; the first joint's from the spine's start), grown by the larger radius
/// at the stretch's ends. `None` for a joint on no tube.
fn bone_boxes(tubes: &[TubeDef], rest: &[Vec3]) -> Vec<Option<(Vec3, Vec3)>> {
    let mut boxes: Vec<Option<(Vec3, Vec3)>> = vec![None; rest.len()];
    for tube in tubes {
        let (points, radii) = tube_points(tube, rest);
        let first_pivot = usize::from(tube.start_ext > 0.0);
        for (k, &j) in tube.chain.iter().enumerate() {
            let from = if k == 0 { 0 } else { first_pivot + k };
            let to = (first_pivot + k + 1).min(points.len() - 1);
            let (Some(stretch), Some(rs), Some(&pivot)) = (points.get(from..=to), radii.get(from..=to), rest.get(j))
            else {
                continue;
            };
            let r = rs.iter().copied().fold(0.0f32, f32::max);
            let lo = stretch.iter().fold(Vec3::INFINITY, |a, &p| a.min(p)) - pivot - Vec3::splat(r);
            let hi = stretch.iter().fold(Vec3::NEG_INFINITY, |a, &p| a.max(p)) - pivot + Vec3::splat(r);
            let slot = &mut boxes[j];
            *slot = Some(match *slot {
                Some((a, b)) => (a.min(lo), b.max(hi)),
                None => (lo, hi),
            });
        }
    }
    boxes
}

/// The spine's polyline (start, pivots, end; the start and end only when extended) with the radius at each
/// point.
fn tube_points(tube: &TubeDef, rest: &[Vec3]) -> (Vec<Vec3>, Vec<f32>) {
    let pivots: Vec<Vec3> = tube
        .chain
        .iter()
        .map(|&j| rest.get(j).copied().unwrap_or(Vec3::ZERO))
        .collect();
    let n = pivots.len();
    let first = (pivots[1] - pivots[0]).normalize_or(Vec3::Y);
    let last = (pivots[n - 1] - pivots[n - 2]).normalize_or(Vec3::Y);
    let mut points = Vec::with_capacity(n + 2);
    let mut radii = Vec::with_capacity(n + 2);
    if tube.start_ext > 0.0 {
        points.push(pivots[0] - first * tube.start_ext);
        radii.push(tube.radii[0]);
    }
    points.extend_from_slice(&pivots);
    radii.extend_from_slice(&tube.radii[1..=n]);
    if tube.end_ext > 0.0 {
        points.push(pivots[n - 1] + last * tube.end_ext);
        radii.push(tube.radii[n + 1]);
    }
    (points, radii)
}

// ---------------------------------------------------------------------------------------------------------
// Spines: lines and circular arcs, arc-length parametrised, with parallel-transported frames.

#[derive(Clone, Copy, Debug)]
enum Curve {
    Line,
    /// A circular arc about `center`, turning about `axis` (right-handed).
    Arc {
        center: Vec3,
        axis: Vec3,
        radius: f32,
    },
}

#[derive(Clone, Copy, Debug)]
struct Piece {
    /// Arc length at the piece's start, and its length.
    s0: f32,
    len: f32,
    curve: Curve,
    /// Point, tangent and frame vector `u` (perpendicular to the tangent) at the piece's start.
    point: Vec3,
    tangent: Vec3,
    u: Vec3,
}

/// The spine at one arc length: centre, orthonormal frame (u, v, t) with `u × v = t`, curvature vector
/// (pointing to the centre of curvature, length 1/radius), radius and its derivative.
struct Station {
    c: Vec3,
    t: Vec3,
    u: Vec3,
    v: Vec3,
    kappa: Vec3,
    r: f32,
    dr: f32,
}

struct Spine {
    pieces: Vec<Piece>,
    length: f32,
    /// Arc length s_k of each pivot, and its joint j_k.
    pivots: Vec<f32>,
    joints: Vec<u16>,
    /// (arc length, radius) knots, strictly increasing in arc length.
    knots: Vec<(f32, f32)>,
}

/// Append a straight piece from `from` to `to` (skipped when empty) and advance the arc length `s`.
fn line_to(pieces: &mut Vec<Piece>, from: Vec3, to: Vec3, dir: Vec3, u: Vec3, s: &mut f32) {
    let len = (to - from).length();
    if len > 0.0 {
        pieces.push(Piece {
            s0: *s,
            len,
            curve: Curve::Line,
            point: from,
            tangent: dir,
            u,
        });
        *s += len;
    }
}

fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// A unit vector perpendicular to `t`: the world axis least aligned with it, made perpendicular.
fn reference_u(t: Vec3) -> Vec3 {
    let a = t.abs();
    let axis = if a.x <= a.y && a.x <= a.z {
        Vec3::X
    } else if a.y <= a.z {
        Vec3::Y
    } else {
        Vec3::Z
    };
    (axis - t * t.dot(axis)).normalize()
}

impl Spine {
    fn new(tube: &TubeDef, rest: &[Vec3]) -> Self {
        let (points, radii) = tube_points(tube, rest);
        let first_pivot = usize::from(tube.start_ext > 0.0);
        let mut pivot_at = vec![None; points.len()];
        for k in 0..tube.chain.len() {
            pivot_at[first_pivot + k] = Some(k);
        }
        let mut pivots = vec![0.0f32; tube.chain.len()];
        let mut pieces = Vec::new();
        let mut dir = (points[1] - points[0]).normalize();
        let mut u = reference_u(dir);
        let mut cur = points[0];
        let mut s = 0.0f32;
        let mut knots = Vec::with_capacity(points.len());
        knots.push((0.0, radii[0]));
        if let Some(k) = pivot_at[0] {
            pivots[k] = 0.0;
        }
        for i in 1..points.len() - 1 {
            let p = points[i];
            let out = (points[i + 1] - p).normalize();
            let cos = dir.dot(out).clamp(-1.0, 1.0);
            let at;
            if cos > 1.0 - 1e-6 {
                line_to(&mut pieces, cur, p, dir, u, &mut s);
                cur = p;
                at = s;
            } else {
                // Round the bend with an arc tangent to both segments, at most 0.45 of either's length.
                let angle = cos.acos();
                let tan_half = (0.5 * angle).tan();
                let room = 0.45 * (p - points[i - 1]).length().min((points[i + 1] - p).length());
                let dist = (tube.fillet * tan_half).min(room);
                let radius = dist / tan_half;
                let a = p - dir * dist;
                line_to(&mut pieces, cur, a, dir, u, &mut s);
                let inward = (out - dir * cos).normalize();
                let axis = dir.cross(out).normalize();
                let len = radius * angle;
                pieces.push(Piece {
                    s0: s,
                    len,
                    curve: Curve::Arc {
                        center: a + inward * radius,
                        axis,
                        radius,
                    },
                    point: a,
                    tangent: dir,
                    u,
                });
                at = s + 0.5 * len;
                s += len;
                u = Quat::from_axis_angle(axis, angle) * u;
                u = (u - out * out.dot(u)).normalize();
                cur = p + out * dist;
            }
            if let Some(k) = pivot_at[i] {
                pivots[k] = at;
            }
            knots.push((at, radii[i]));
            dir = out;
        }
        let end = points[points.len() - 1];
        line_to(&mut pieces, cur, end, dir, u, &mut s);
        if let Some(k) = pivot_at[points.len() - 1] {
            pivots[k] = s;
        }
        knots.push((s, radii[points.len() - 1]));
        Spine {
            pieces,
            length: s,
            pivots,
            joints: tube.chain.iter().map(|&j| j as u16).collect(),
            knots,
        }
    }

    /// Radius and its derivative at arc length `s`: smoothstep between knots, so r' is 0 at every knot.
    fn radius(&self, s: f32) -> (f32, f32) {
        let k = &self.knots;
        let i = k.partition_point(|&(ks, _)| ks <= s);
        match (i.checked_sub(1).and_then(|a| k.get(a)), k.get(i)) {
            (Some(&(sa, ra)), Some(&(sb, rb))) => {
                let span = sb - sa;
                let x = (s - sa) / span;
                (ra + (rb - ra) * smoothstep(x), (rb - ra) * 6.0 * x * (1.0 - x) / span)
            }
            (None, _) => (k[0].1, 0.0),
            (Some(&(_, r)), None) => (r, 0.0),
        }
    }

    fn max_radius(&self) -> f32 {
        self.knots.iter().map(|k| k.1).fold(0.0, f32::max)
    }

    fn end_radii(&self) -> (f32, f32) {
        (self.knots[0].1, self.knots[self.knots.len() - 1].1)
    }

    /// Approximate surface area (tube wall by the midpoint rule, plus both hemispheres).
    fn area(&self) -> f64 {
        const STEPS: usize = 64;
        let ds = self.length / STEPS as f32;
        let wall: f32 = (0..STEPS).map(|i| self.radius((i as f32 + 0.5) * ds).0 * ds).sum();
        let (r0, r1) = self.end_radii();
        f64::from(TAU * (wall + r0 * r0 + r1 * r1))
    }

    fn station(&self, s: f32) -> Station {
        let s = s.clamp(0.0, self.length);
        let i = self.pieces.partition_point(|p| p.s0 <= s).saturating_sub(1);
        let piece = &self.pieces[i];
        let sigma = (s - piece.s0).clamp(0.0, piece.len);
        let (c, t, u, kappa) = match piece.curve {
            Curve::Line => (piece.point + piece.tangent * sigma, piece.tangent, piece.u, Vec3::ZERO),
            Curve::Arc { center, axis, radius } => {
                let q = Quat::from_axis_angle(axis, sigma / radius);
                let c = center + q * (piece.point - center);
                (c, q * piece.tangent, q * piece.u, (center - c) / (radius * radius))
            }
        };
        let u = (u - t * t.dot(u)).normalize();
        let (r, dr) = self.radius(s);
        Station {
            c,
            t,
            u,
            v: t.cross(u),
            kappa,
            r,
            dr,
        }
    }

    /// The weights of a ring at arc length `s` (see the module documentation).
    fn influences(&self, s: f32) -> Row {
        let p = &self.pivots;
        let j = &self.joints;
        let n = p.len() - 1;
        for k in 1..=n {
            let next = if k < n { p[k + 1] } else { self.length };
            if next <= p[k] {
                continue;
            }
            let h = 0.25 * (p[k] - p[k - 1]).min(next - p[k]);
            if (s - p[k]).abs() < h {
                let t = smoothstep((s - (p[k] - h)) / (2.0 * h));
                return if t <= 0.0 {
                    Row::one(j[k - 1])
                } else if t >= 1.0 {
                    Row::one(j[k])
                } else {
                    Row {
                        entries: [(j[k - 1], 1.0 - t), (j[k], t)],
                        len: 2,
                    }
                };
            }
        }
        Row::one(j[p[1..].partition_point(|&pk| pk <= s)])
    }
}

/// One vertex's influences: the first `len` entries.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Row {
    entries: [(u16, f32); 2],
    len: usize,
}

impl Row {
    fn one(joint: u16) -> Self {
        Row {
            entries: [(joint, 1.0), (joint, 0.0)],
            len: 1,
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Resolution and mesh building.

#[derive(Clone, Copy, Debug, PartialEq)]
struct TubePlan {
    /// Vertices around each ring.
    segments: usize,
    /// Rings along the spine, from its start to its end inclusive (at least 2).
    body_rings: usize,
    /// Ring steps from the end ring to the pole in each cap (at least 2, so each cap has a ring of its own).
    cap_start: usize,
    cap_end: usize,
}

impl TubePlan {
    fn for_spacing(spine: &Spine, edge: f64) -> Self {
        let steps = |length: f32, min: usize| ((f64::from(length) / edge).round().min(1e9) as usize).max(min);
        let (r0, r1) = spine.end_radii();
        TubePlan {
            segments: steps(TAU * spine.max_radius(), MIN_SEGMENTS),
            body_rings: steps(spine.length, 1) + 1,
            cap_start: steps(FRAC_PI_2 * r0, 2),
            cap_end: steps(FRAC_PI_2 * r1, 2),
        }
    }

    fn rings(&self) -> usize {
        self.body_rings + self.cap_start + self.cap_end - 2
    }

    fn vertices(&self) -> usize {
        self.segments.saturating_mul(self.rings()).saturating_add(2)
    }

    fn triangles(&self) -> usize {
        2 * self.segments * self.rings()
    }
}

fn total_vertices(plans: &[TubePlan]) -> usize {
    plans.iter().map(TubePlan::vertices).fold(0, usize::saturating_add)
}

/// Choose every part's resolution so that the total is close to `target` (see the module documentation).
fn plan(spines: &[Spine], target: usize) -> Result<Vec<TubePlan>, String> {
    let at = |edge: f64| -> Vec<TubePlan> { spines.iter().map(|s| TubePlan::for_spacing(s, edge)).collect() };
    let count = |edge: f64| total_vertices(&at(edge));
    let area: f64 = spines.iter().map(Spine::area).sum();
    let guess = (area / target as f64).sqrt();
    // Bracket: count(fine) >= target > count(coarse).
    let (mut fine, mut coarse) = (guess, guess);
    for _ in 0..200 {
        if count(fine) >= target {
            break;
        }
        fine *= 0.5;
    }
    for _ in 0..200 {
        if count(coarse) < target {
            break;
        }
        coarse *= 2.0;
    }
    for _ in 0..64 {
        let mid = (fine * coarse).sqrt();
        if count(mid) >= target {
            fine = mid;
        } else {
            coarse = mid;
        }
    }
    let (over, under) = (at(fine), at(coarse));
    let mut plans = if total_vertices(&over).abs_diff(target) <= total_vertices(&under).abs_diff(target) {
        over
    } else {
        under
    };
    // Add or remove whole rings of the part with the most segments to come within half a ring of the target.
    let widest = (0..plans.len()).fold(0, |best, i| {
        if plans[i].segments > plans[best].segments {
            i
        } else {
            best
        }
    });
    let total = total_vertices(&plans);
    if let Some(p) = plans.get_mut(widest) {
        let rings = ((target as f64 - total as f64) / p.segments as f64).round();
        p.body_rings = (p.body_rings as f64 + rings).max(2.0) as usize;
    }
    let total = total_vertices(&plans);
    if total.saturating_mul(10) < target.saturating_mul(9) || total.saturating_mul(10) > target.saturating_mul(11) {
        return Err(format!("could not meet the target of {target} vertices (got {total})"));
    }
    Ok(plans)
}

#[derive(Default)]
struct MeshBuf {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    offsets: Vec<u32>,
    joints: Vec<u16>,
    values: Vec<f32>,
}

impl MeshBuf {
    fn with_capacity(vertices: usize, triangles: usize) -> Self {
        let mut offsets = Vec::with_capacity(vertices + 1);
        offsets.push(0);
        MeshBuf {
            positions: Vec::with_capacity(vertices),
            normals: Vec::with_capacity(vertices),
            triangles: Vec::with_capacity(triangles),
            offsets,
            joints: Vec::with_capacity(vertices * 2),
            values: Vec::with_capacity(vertices * 2),
        }
    }

    /// Give the last `count` vertices the influences `row`.
    fn weigh(&mut self, row: Row, count: usize) {
        let entries = &row.entries[..row.len];
        for _ in 0..count {
            for &(j, w) in entries {
                self.joints.push(j);
                self.values.push(w);
            }
            self.offsets.push(self.values.len() as u32);
        }
    }
}

/// Append one part: start pole, start cap rings, body rings, end cap rings, end pole; then its triangles.
fn emit_tube(spine: &Spine, plan: &TubePlan, out: &mut MeshBuf) {
    let n = plan.segments;
    let trig: Vec<(f32, f32)> = (0..n)
        .map(|j| {
            let a = TAU * j as f32 / n as f32;
            (a.cos(), a.sin())
        })
        .collect();
    let base = out.positions.len() as u32;
    let head = spine.station(0.0);
    let tail = spine.station(spine.length);
    let (w_head, w_tail) = (spine.influences(0.0), spine.influences(spine.length));

    // A cap ring at angle `phi` from the equator toward the pole in direction `pole` (±t).
    let cap_ring = |out: &mut MeshBuf, st: &Station, pole: Vec3, phi: f32| {
        let (cp, sp) = (phi.cos(), phi.sin());
        for &(c, s) in &trig {
            let normal = (st.u * c + st.v * s) * cp + pole * sp;
            out.positions.push(st.c + normal * st.r);
            out.normals.push(normal);
        }
    };

    out.positions.push(head.c - head.t * head.r);
    out.normals.push(-head.t);
    out.weigh(w_head, 1);
    for q in (1..plan.cap_start).rev() {
        cap_ring(out, &head, -head.t, FRAC_PI_2 * q as f32 / plan.cap_start as f32);
        out.weigh(w_head, n);
    }
    let last = plan.body_rings - 1;
    for i in 0..=last {
        let s = if i == last {
            spine.length
        } else {
            spine.length * i as f32 / last as f32
        };
        let st = spine.station(s);
        for &(c, sn) in &trig {
            let e = st.u * c + st.v * sn;
            let stretch = 1.0 - st.r * st.kappa.dot(e);
            out.positions.push(st.c + e * st.r);
            out.normals.push((e * stretch - st.t * st.dr).normalize());
        }
        out.weigh(spine.influences(s), n);
    }
    for q in 1..plan.cap_end {
        cap_ring(out, &tail, tail.t, FRAC_PI_2 * q as f32 / plan.cap_end as f32);
        out.weigh(w_tail, n);
    }
    out.positions.push(tail.c + tail.t * tail.r);
    out.normals.push(tail.t);
    out.weigh(w_tail, 1);

    let rings = plan.rings();
    let n32 = n as u32;
    let vertex = |ring: usize, j: usize| base + 1 + (ring * n) as u32 + (j % n) as u32;
    let (pole0, pole1) = (base, base + 1 + rings as u32 * n32);
    for j in 0..n {
        out.triangles.push([pole0, vertex(0, j + 1), vertex(0, j)]);
    }
    for k in 0..rings - 1 {
        for j in 0..n {
            let (a, b, c, d) = (vertex(k, j), vertex(k, j + 1), vertex(k + 1, j + 1), vertex(k + 1, j));
            out.triangles.push([a, b, c]);
            out.triangles.push([a, c, d]);
        }
    }
    for j in 0..n {
        out.triangles
            .push([vertex(rings - 1, j), vertex(rings - 1, j + 1), pole1]);
    }
}

/// A long chain for benchmarks at many joints: `joints` joints one unit apart along +X (`j0` at the origin),
/// inside a tube of radius 0.3 from x = 0 to x = `joints`, 64 vertices per ring, closed by a pole at each end
/// (`vertices` is a target: `64 * rings + 2` with `rings = (vertices - 2) / 64`, at least 2). Weights: joint
/// `j = floor(x)` (clamped to the chain), blended with the previous joint within 0.25 of each pivot `k >= 1`
/// by `t = smoothstep((x - k + 0.25) / 0.5)`: `1 - t` on `k - 1`, `t` on `k`. Bindings: the zero pose.
pub fn chain_tube(joints: usize, vertices: usize) -> Result<Sample, String> {
    if joints == 0 || joints > u16::MAX as usize {
        return Err(format!("a chain needs 1 to {} joints, not {joints}", u16::MAX));
    }
    if vertices > MAX_VERTICES {
        return Err(format!(
            "{vertices} vertices is more than the {MAX_VERTICES} a sample may have"
        ));
    }
    let seg = 64usize;
    let rings = (vertices.saturating_sub(2) / seg).max(2);
    let len = joints as f32;
    let mut positions = Vec::with_capacity(rings * seg + 2);
    for r in 0..rings {
        let x = len * r as f32 / (rings - 1) as f32;
        for k in 0..seg {
            let a = TAU * k as f32 / seg as f32;
            positions.push(Vec3::new(x, 0.3 * a.cos(), 0.3 * a.sin()));
        }
    }
    let (south, north) = (positions.len() as u32, positions.len() as u32 + 1);
    positions.push(Vec3::new(-0.3, 0.0, 0.0));
    positions.push(Vec3::new(len + 0.3, 0.0, 0.0));
    let mut triangles = Vec::with_capacity(2 * rings * seg);
    let id = |r: usize, k: usize| (r * seg + k % seg) as u32;
    for r in 0..rings - 1 {
        for k in 0..seg {
            triangles.push([id(r, k), id(r + 1, k), id(r + 1, k + 1)]);
            triangles.push([id(r, k), id(r + 1, k + 1), id(r, k + 1)]);
        }
    }
    for k in 0..seg {
        triangles.push([south, id(0, k), id(0, k + 1)]);
        triangles.push([north, id(rings - 1, k + 1), id(rings - 1, k)]);
    }
    let smoothstep = |x: f32| {
        let x = x.clamp(0.0, 1.0);
        x * x * (3.0 - 2.0 * x)
    };
    let mut rows: Vec<Vec<(u16, f32)>> = Vec::with_capacity(positions.len());
    for p in &positions {
        let x = p.x.clamp(0.0, len);
        let k = (x + 0.25).floor() as usize;
        let row = if k >= 1 && k < joints && (x - k as f32).abs() < 0.25 {
            let t = smoothstep((x - k as f32 + 0.25) / 0.5);
            vec![((k - 1) as u16, 1.0 - t), (k as u16, t)]
        } else {
            vec![((x.floor() as usize).min(joints - 1) as u16, 1.0)]
        };
        rows.push(row);
    }
    let weights = Weights::normalized(rows.iter().map(Vec::as_slice))
        .map_err(|e| e.to_string())?
        .0;
    let skeleton = Skeleton::new(
        (0..joints)
            .map(|j| {
                Joint::new(
                    format!("j{j}"),
                    j.checked_sub(1),
                    if j == 0 { Vec3::ZERO } else { Vec3::X },
                )
            })
            .collect(),
    )
    .map_err(|e| e.to_string())?;
    let mut skin = Skin::new(positions, None, triangles).map_err(|e| e.to_string())?;
    skin.set_weights(Some(weights)).map_err(|e| e.to_string())?;
    skin.set_bindings(Some(world_from_joint(&skeleton, &Pose::zero(&skeleton))))
        .map_err(|e| e.to_string())?;
    Ok(Sample { skeleton, skin })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    #[test]
    fn walk_clip_swings_the_legs_half_a_cycle_apart_within_limits() {
        let rig = make_sample(SampleKind::Creature, 2000).expect("sample");
        let skel = &rig.skeleton;
        let clip = walk_clip(skel, 1.2);
        assert_eq!(clip.channels.len(), crate::model::Clip::channels_for(skel.len()));
        let hip_l = skel.find("hip_l")[0];
        let hip_r = skel.find("hip_r")[0];
        let knee_l = skel.find("knee_l")[0];
        for k in 0..40 {
            let t = k as f32 * 0.07;
            let a = crate::model::pose_at(skel, &clip, t);
            let b = crate::model::pose_at(skel, &clip, t + 0.6);
            assert!((a.dofs[hip_l].x - b.dofs[hip_r].x).abs() < 1e-3, "t = {t}");
            assert!(a.dofs[knee_l].x >= 0.0 && a.dofs[knee_l].x <= 2.5);
        }
        // Hand-worked: at t = 0 the left hip is forward (-0.075 - 0.425 = -0.5), the right back (0.35).
        let p = crate::model::pose_at(skel, &clip, 0.0);
        assert!((p.dofs[hip_l].x + 0.5).abs() < 1e-5 && (p.dofs[hip_r].x - 0.35).abs() < 1e-5);
    }

    use super::*;

    const TARGETS: [usize; 3] = [1_000, 10_000, 100_000];

    fn parts(kind: SampleKind, target: usize) -> (Sample, Vec<Range<usize>>) {
        build(kind, target).unwrap()
    }

    fn joints_named(skel: &Skeleton, names: &[&str]) -> Vec<u16> {
        names.iter().map(|n| skel.find(n)[0] as u16).collect()
    }

    /// Vertices whose heaviest joint is one of `joints`.
    fn vertices_of(sample: &Sample, joints: &[u16]) -> Vec<Vec3> {
        let w = sample.skin.weights().unwrap();
        let p = sample.skin.positions();
        (0..p.len())
            .filter(|&v| joints.contains(&w.dominant(v).unwrap()))
            .map(|v| p[v])
            .collect()
    }

    fn min_distance(a: &[Vec3], b: &[Vec3]) -> f32 {
        a.iter()
            .flat_map(|p| b.iter().map(move |q| p.distance(*q)))
            .fold(f32::INFINITY, f32::min)
    }

    #[test]
    fn names_round_trip() {
        for kind in SampleKind::ALL {
            assert_eq!(SampleKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(SampleKind::from_name(" Creature "), Some(SampleKind::Creature));
        assert_eq!(SampleKind::from_name("dragon"), None);
    }

    #[test]
    fn vertex_count_is_within_ten_percent() {
        for kind in SampleKind::ALL {
            for target in TARGETS {
                let n = make_sample(kind, target).unwrap().skin.vertex_count();
                assert!(n * 10 >= target * 9 && n * 10 <= target * 11, "{kind:?} {target}: {n}");
            }
        }
    }

    #[test]
    fn planned_count_is_within_bounds_for_many_targets() {
        for kind in SampleKind::ALL {
            let mut rig = rig(kind);
            let rest = rest_positions(&rig.joints);
            let spines: Vec<Spine> = rig.tubes.drain(..).map(|t| Spine::new(&t, &rest)).collect();
            let mut targets: Vec<usize> = (0..3000).step_by(7).collect();
            targets.extend((1..200).map(|i| i * 5_113));
            targets.extend([1_000_000, 10_000_000]);
            for target in targets {
                let t = target.max(MIN_VERTICES);
                let n = total_vertices(&plan(&spines, t).unwrap());
                assert!(n * 10 >= t * 9 && n * 10 <= t * 11, "{kind:?} {target}: {n}");
                if t >= 2_000 {
                    assert!(n.abs_diff(t) * 100 <= t, "{kind:?} {target}: {n} is more than 1% off");
                }
            }
        }
    }

    #[test]
    fn tiny_and_huge_targets() {
        for kind in SampleKind::ALL {
            let n = make_sample(kind, 0).unwrap().skin.vertex_count();
            assert!((270..=330).contains(&n), "{kind:?}: {n}");
        }
        assert!(make_sample(SampleKind::Tube, usize::MAX).is_err());
    }

    #[test]
    fn triangles_face_outward() {
        for kind in SampleKind::ALL {
            for target in TARGETS {
                let s = make_sample(kind, target).unwrap();
                let (p, nr) = (s.skin.positions(), s.skin.normals());
                let tris = s.skin.triangles();
                let bad = tris
                    .iter()
                    .filter(|t| {
                        let [a, b, c] = t.map(|i| i as usize);
                        let face = (p[b] - p[a]).cross(p[c] - p[a]);
                        face.dot(nr[a] + nr[b] + nr[c]) <= 0.0
                    })
                    .count();
                assert!(
                    bad * 100 <= tris.len(),
                    "{kind:?} {target}: {bad} of {} inward",
                    tris.len()
                );
                assert_eq!(bad, 0, "{kind:?} {target}");
                assert!(nr.iter().all(|n| (n.length() - 1.0).abs() < 1e-5));
            }
        }
    }

    #[test]
    fn every_part_is_closed_and_consistently_oriented() {
        for kind in SampleKind::ALL {
            for target in TARGETS {
                let (s, parts) = parts(kind, target);
                assert_eq!(parts.last().unwrap().end, s.skin.vertex_count());
                let part_of = |v: u32| parts.iter().position(|r| r.contains(&(v as usize))).unwrap();
                let mut edges: Vec<(u32, u32)> = Vec::with_capacity(s.skin.triangles().len() * 3);
                for t in s.skin.triangles() {
                    assert!(t[0] != t[1] && t[1] != t[2] && t[0] != t[2]);
                    assert!(part_of(t[1]) == part_of(t[0]) && part_of(t[2]) == part_of(t[0]));
                    edges.extend([(t[0], t[1]), (t[1], t[2]), (t[2], t[0])]);
                }
                edges.sort_unstable();
                // Each directed edge once, and its reverse present: every edge is on exactly two triangles,
                // which traverse it in opposite directions.
                assert!(
                    edges.windows(2).all(|w| w[0] != w[1]),
                    "{kind:?} {target}: repeated directed edge"
                );
                assert!(
                    edges.iter().all(|&(a, b)| edges.binary_search(&(b, a)).is_ok()),
                    "{kind:?}: open edge"
                );
                // A closed genus-0 surface per part: V - E + F = 2.
                let (v, e, f) = (s.skin.vertex_count(), edges.len() / 2, s.skin.triangles().len());
                assert_eq!(v + f, e + 2 * parts.len());
            }
        }
    }

    #[test]
    fn weights_are_valid_rows() {
        for kind in SampleKind::ALL {
            let s = make_sample(kind, 10_000).unwrap();
            let w = s.skin.weights().unwrap();
            assert_eq!(w.len(), s.skin.vertex_count());
            for v in 0..w.len() {
                let (js, ws) = w.row(v);
                assert!((1..=4).contains(&js.len()), "{kind:?} vertex {v}");
                assert!(ws.iter().all(|&x| x > 0.0));
                assert!((ws.iter().sum::<f32>() - 1.0).abs() < 1e-6);
                assert!(js.iter().all(|&j| (j as usize) < s.skeleton.len()));
            }
            // Every joint on a tube influences something; blends exist.
            assert!((0..w.len()).any(|v| w.row(v).0.len() == 2));
        }
    }

    #[test]
    fn weight_formula_on_the_tube() {
        let rig = tube_rig();
        let rest = rest_positions(&rig.joints);
        let spine = Spine::new(&rig.tubes[0], &rest);
        assert_eq!(spine.pivots, vec![0.0, 1.0, 2.0, 3.0]);
        assert!((spine.length - 3.25).abs() < 1e-6);
        let row = |s: f32| {
            let r = spine.influences(s);
            r.entries[..r.len].to_vec()
        };
        assert_eq!(row(0.0), vec![(0, 1.0)]);
        assert_eq!(row(0.5), vec![(0, 1.0)]);
        assert_eq!(row(1.0), vec![(0, 0.5), (1, 0.5)]);
        // h = 0.25 at pivot 1: the window is (0.75, 1.25); at 0.875, x = 0.25, smoothstep = 0.15625.
        assert_eq!(row(0.875), vec![(0, 0.84375), (1, 0.15625)]);
        assert_eq!(row(1.25), vec![(1, 1.0)]);
        // Pivot 3 (leaf of 0.25 after it): h = 0.0625.
        assert_eq!(row(2.93), vec![(2, 1.0)]);
        assert_eq!(row(3.0), vec![(2, 0.5), (3, 0.5)]);
        assert_eq!(row(3.1), vec![(3, 1.0)]);
        assert_eq!(row(3.25), vec![(3, 1.0)]);
    }

    #[test]
    fn tube_geometry() {
        let s = make_sample(SampleKind::Tube, 10_000).unwrap();
        let names: Vec<&str> = s.skeleton.joints().iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["root", "joint1", "joint2", "end"]);
        let (lo, hi) = s.skin.bounds().unwrap();
        assert!((lo.y + 0.25).abs() < 1e-5 && (hi.y - 3.5).abs() < 1e-5, "{lo} {hi}");
        for p in s.skin.positions() {
            assert!(Vec3::new(p.x, 0.0, p.z).length() <= 0.25 + 1e-5);
        }
        let end = &s.skeleton.joints()[3];
        assert!((end.box_max.unwrap().y - 0.5).abs() < 1e-5);
    }

    #[test]
    fn bindings_are_the_zero_pose() {
        for kind in SampleKind::ALL {
            let s = make_sample(kind, 1_000).unwrap();
            let b = s.skin.bindings().unwrap();
            assert_eq!(b.len(), s.skeleton.len());
            let rest = rest_positions(s.skeleton.joints());
            for (m, p) in b.iter().zip(&rest) {
                assert!((m.w_axis.truncate() - *p).length() < 1e-6);
                assert!(m.x_axis.truncate() == Vec3::X && m.y_axis.truncate() == Vec3::Y);
            }
            // Every joint has a box that holds its pivot.
            for j in s.skeleton.joints() {
                let (lo, hi) = (j.box_min.unwrap(), j.box_max.unwrap());
                assert!(lo.cmple(Vec3::ZERO).all() && hi.cmpge(Vec3::ZERO).all(), "{}", j.name);
            }
        }
    }

    #[test]
    fn same_inputs_same_bits() {
        for kind in SampleKind::ALL {
            let (a, b) = (make_sample(kind, 5_000).unwrap(), make_sample(kind, 5_000).unwrap());
            assert_eq!(a, b);
            let bits = |s: &Sample| -> Vec<u32> {
                s.skin
                    .positions()
                    .iter()
                    .chain(s.skin.normals())
                    .flat_map(|v| v.to_array())
                    .map(f32::to_bits)
                    .collect()
            };
            assert_eq!(bits(&a), bits(&b));
        }
    }

    #[test]
    fn neighbouring_fingers_do_not_touch() {
        let (s, _) = parts(SampleKind::Arm, 20_000);
        let finger = |name: &str| {
            vertices_of(
                &s,
                &joints_named(&s.skeleton, &[&format!("{name}_1"), &format!("{name}_2")]),
            )
        };
        let (index, middle, ring) = (finger("index"), finger("middle"), finger("ring"));
        assert!(index.len() > 100 && middle.len() > 100);
        let gap = FINGER_RADIUS / 3.0;
        for (a, b) in [(&index, &middle), (&middle, &ring)] {
            let d = min_distance(a, b);
            assert!(d > 0.0 && d >= gap - 1e-4, "fingers {d} apart");
        }
    }

    #[test]
    fn creature_arms_clear_the_torso() {
        let (s, _) = parts(SampleKind::Creature, 20_000);
        let torso = vertices_of(
            &s,
            &joints_named(&s.skeleton, &["root", "spine", "chest", "neck", "head"]),
        );
        for side in ["l", "r"] {
            let names = [
                format!("shoulder_{side}"),
                format!("elbow_{side}"),
                format!("wrist_{side}"),
            ];
            let arm = vertices_of(&s, &joints_named(&s.skeleton, &names.each_ref().map(String::as_str)));
            let d = min_distance(&torso, &arm);
            assert!(
                (ARM_GAP - 1e-4..2.0 * ARM_GAP).contains(&d),
                "{side}: arm {d} from torso"
            );
        }
        // Left is +X.
        let wrist_l = s.skeleton.find("wrist_l")[0];
        assert!(s.skin.bindings().unwrap()[wrist_l].w_axis.x > 0.0);
    }

    #[test]
    #[ignore = "timing; run with --release"]
    fn a_million_vertices_is_fast() {
        for kind in SampleKind::ALL {
            let t = std::time::Instant::now();
            let s = make_sample(kind, 1_000_000).unwrap();
            eprintln!("{kind:?}: {} vertices in {:?}", s.skin.vertex_count(), t.elapsed());
        }
    }

    #[test]
    fn chain_tube_weights_follow_the_formula() {
        let s = chain_tube(10, 20_000).unwrap();
        assert_eq!(s.skeleton.len(), 10);
        let rings = (20_000 - 2) / 64;
        assert_eq!(s.skin.vertex_count(), rings * 64 + 2);
        let w = s.skin.weights().unwrap();
        for (v, p) in s.skin.positions().iter().enumerate() {
            let (j, x) = w.row(v);
            let near = (p.x - p.x.round()).abs() < 0.25 && p.x.round() >= 1.0 && p.x.round() < 10.0;
            if near {
                // Halfway at the pivot itself.
                assert_eq!(j, &[p.x.round() as u16 - 1, p.x.round() as u16]);
                if p.x == p.x.round() {
                    assert!((x[0] - 0.5).abs() < 1e-6);
                }
            } else {
                assert_eq!(j, &[(p.x.clamp(0.0, 9.99).floor()) as u16], "vertex {v} at {p}");
            }
        }
        assert!(chain_tube(0, 1000).is_err());
    }
}
