//! The three rigs' descriptions: joints (offsets, limits, poses) and the closed tubes around their chains, and
//! what is measured from them before any mesh exists (rest pivots, bone boxes, a tube's polyline).

use glam::Vec3;

use super::SampleKind;
use crate::model::skeleton::{Joint, Limit};

/// Rotation limits about x, y, z as (lo, hi).
type Limits = [(f32, f32); 3];

/// One closed tube around a chain of joints.
pub(super) struct TubeDef {
    /// Joints j_0..j_n whose pivots the spine passes through; at least two.
    pub(super) chain: Vec<usize>,
    /// Spine length before j_0 (against the first bone's direction) and after j_n (along the last bone's).
    pub(super) start_ext: f32,
    pub(super) end_ext: f32,
    /// Radius at the spine's start, at each pivot and at the spine's end (`chain.len() + 2` values; the
    /// start or end value is unused when that extension is zero).
    pub(super) radii: Vec<f32>,
    /// Radius of the arc that rounds each bend of the spine.
    pub(super) fillet: f32,
}

#[derive(Default)]
pub(super) struct Rig {
    pub(super) joints: Vec<Joint>,
    pub(super) tubes: Vec<TubeDef>,
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

pub(super) fn rig(kind: SampleKind) -> Rig {
    match kind {
        SampleKind::Tube => tube_rig(),
        SampleKind::Arm => arm_rig(),
        SampleKind::Creature => creature_rig(),
    }
}

pub(super) fn tube_rig() -> Rig {
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
pub(super) const FINGER_RADIUS: f32 = 0.04;
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
pub(super) const ARM_GAP: f32 = 0.05;
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

/// World position of every joint's pivot in the zero pose (frames are not rotated, so offsets add up).
pub(super) fn rest_positions(joints: &[Joint]) -> Vec<Vec3> {
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
pub(super) fn bone_boxes(tubes: &[TubeDef], rest: &[Vec3]) -> Vec<Option<(Vec3, Vec3)>> {
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
pub(super) fn tube_points(tube: &TubeDef, rest: &[Vec3]) -> (Vec<Vec3>, Vec<f32>) {
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
