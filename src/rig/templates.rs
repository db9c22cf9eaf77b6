//! The shipped template skeletons (File > New skeleton from template, `skinbind template`): a biped with the
//! names game pipelines expect (Mixamo's, which Unity's and Unreal's retargeters map), a quadruped, a bird, a
//! hand and a chain. Each is made here, written to `assets/templates/KIND.skel` (a test checks the shipped files
//! are what this code makes) and placed into a mesh's bounding box by [`place_in_box`].
//!
//! Conventions: glTF's, so templates land on glTF and most OBJ characters as they are: Y up, the character faces
//! +Z, its left is +X (left joints are `Left...` or `.L`). Every joint is at zero rotation, so a pivot is the sum
//! of the offsets above it. Each template is drawn in a body box of [-0.5, 0.5] x [0, 1] x [-0.5, 0.5] (width,
//! height, length), the box its mesh would fill: a biped stands in T pose with its feet at 0 and the top of its
//! head at 1; a quadruped's nose is at +Z, its tail at -Z; a bird spreads its wings along X; a hand points its
//! fingers up +Y with the palm facing +Z and the thumb at -X (a left hand seen from its palm); a chain runs up Y.

use glam::{Mat3, Mat4, Vec3};

use crate::model::{Joint, Skeleton};

/// The template kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TemplateKind {
    Biped,
    Quadruped,
    Bird,
    Hand,
    Chain,
}

impl TemplateKind {
    pub const ALL: [TemplateKind; 5] = [
        TemplateKind::Biped,
        TemplateKind::Quadruped,
        TemplateKind::Bird,
        TemplateKind::Hand,
        TemplateKind::Chain,
    ];

    /// The kind's name (the CLI's `--kind`, the asset's file stem).
    pub fn name(self) -> &'static str {
        match self {
            TemplateKind::Biped => "biped",
            TemplateKind::Quadruped => "quadruped",
            TemplateKind::Bird => "bird",
            TemplateKind::Hand => "hand",
            TemplateKind::Chain => "chain",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The shipped `.skel` text (what [`template`] makes, written by `formats::skel::write_skel`).
    pub fn shipped(self) -> &'static str {
        match self {
            TemplateKind::Biped => include_str!("../../assets/templates/biped.skel"),
            TemplateKind::Quadruped => include_str!("../../assets/templates/quadruped.skel"),
            TemplateKind::Bird => include_str!("../../assets/templates/bird.skel"),
            TemplateKind::Hand => include_str!("../../assets/templates/hand.skel"),
            TemplateKind::Chain => include_str!("../../assets/templates/chain.skel"),
        }
    }
}

/// The body box every template is drawn in.
pub const BODY_BOX: (Vec3, Vec3) = (Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.0, 0.5));

/// One joint of a template: its name, its parent's name (`""` for the root) and its pivot in the body box.
type Entry = (&'static str, &'static str, [f32; 3]);

/// A side's joints, named with `{}` for the side (`Left`/`Right` or `L`/`R`) and drawn on the left (+X).
type SideEntry = (&'static str, &'static str, [f32; 3]);

const BIPED_MIDDLE: &[Entry] = &[
    ("Hips", "", [0.0, 0.53, 0.0]),
    ("Spine", "Hips", [0.0, 0.60, 0.0]),
    ("Spine1", "Spine", [0.0, 0.67, 0.0]),
    ("Spine2", "Spine1", [0.0, 0.74, 0.0]),
    ("Neck", "Spine2", [0.0, 0.84, 0.0]),
    ("Head", "Neck", [0.0, 0.88, 0.02]),
    ("HeadTop_End", "Head", [0.0, 1.0, 0.02]),
];

const BIPED_SIDE: &[SideEntry] = &[
    ("{}Shoulder", "Spine2", [0.03, 0.81, 0.0]),
    ("{}Arm", "{}Shoulder", [0.10, 0.81, 0.0]),
    ("{}ForeArm", "{}Arm", [0.25, 0.81, 0.0]),
    ("{}Hand", "{}ForeArm", [0.39, 0.81, 0.0]),
    ("{}HandEnd", "{}Hand", [0.48, 0.81, 0.0]),
    ("{}UpLeg", "Hips", [0.08, 0.50, 0.0]),
    ("{}Leg", "{}UpLeg", [0.08, 0.28, 0.01]),
    ("{}Foot", "{}Leg", [0.08, 0.05, -0.01]),
    ("{}ToeBase", "{}Foot", [0.08, 0.01, 0.22]),
    ("{}Toe_End", "{}ToeBase", [0.08, 0.01, 0.40]),
];

const QUADRUPED_MIDDLE: &[Entry] = &[
    ("Hips", "", [0.0, 0.62, -0.30]),
    ("Spine", "Hips", [0.0, 0.64, -0.10]),
    ("Spine1", "Spine", [0.0, 0.66, 0.10]),
    ("Chest", "Spine1", [0.0, 0.66, 0.24]),
    ("Neck", "Chest", [0.0, 0.74, 0.32]),
    ("Neck1", "Neck", [0.0, 0.84, 0.37]),
    ("Head", "Neck1", [0.0, 0.92, 0.40]),
    ("Head_End", "Head", [0.0, 0.86, 0.50]),
    ("Tail", "Hips", [0.0, 0.64, -0.38]),
    ("Tail1", "Tail", [0.0, 0.58, -0.44]),
    ("Tail2", "Tail1", [0.0, 0.50, -0.50]),
];

const QUADRUPED_SIDE: &[SideEntry] = &[
    ("FrontUpLeg.{}", "Chest", [0.25, 0.56, 0.25]),
    ("FrontLeg.{}", "FrontUpLeg.{}", [0.25, 0.32, 0.26]),
    ("FrontFoot.{}", "FrontLeg.{}", [0.25, 0.06, 0.25]),
    ("FrontToe.{}", "FrontFoot.{}", [0.25, 0.0, 0.30]),
    ("BackUpLeg.{}", "Hips", [0.25, 0.56, -0.30]),
    ("BackLeg.{}", "BackUpLeg.{}", [0.25, 0.32, -0.33]),
    ("BackFoot.{}", "BackLeg.{}", [0.25, 0.06, -0.30]),
    ("BackToe.{}", "BackFoot.{}", [0.25, 0.0, -0.25]),
];

const BIRD_MIDDLE: &[Entry] = &[
    ("Hips", "", [0.0, 0.40, -0.05]),
    ("Spine", "Hips", [0.0, 0.46, 0.05]),
    ("Chest", "Spine", [0.0, 0.52, 0.12]),
    ("Neck", "Chest", [0.0, 0.62, 0.20]),
    ("Head", "Neck", [0.0, 0.72, 0.26]),
    ("Beak", "Head", [0.0, 0.70, 0.46]),
    ("Tail", "Hips", [0.0, 0.42, -0.22]),
    ("Tail1", "Tail", [0.0, 0.42, -0.46]),
];

const BIRD_SIDE: &[SideEntry] = &[
    ("Shoulder.{}", "Chest", [0.05, 0.56, 0.10]),
    ("UpperWing.{}", "Shoulder.{}", [0.10, 0.56, 0.10]),
    ("ForeWing.{}", "UpperWing.{}", [0.26, 0.56, 0.08]),
    ("WingHand.{}", "ForeWing.{}", [0.40, 0.56, 0.05]),
    ("WingTip.{}", "WingHand.{}", [0.50, 0.56, 0.02]),
    ("Thigh.{}", "Hips", [0.06, 0.36, 0.0]),
    ("Shin.{}", "Thigh.{}", [0.06, 0.20, 0.03]),
    ("Foot.{}", "Shin.{}", [0.06, 0.04, 0.0]),
    ("Toe.{}", "Foot.{}", [0.06, 0.0, 0.10]),
];

const HAND: &[Entry] = &[
    ("Hand", "", [0.0, 0.0, 0.0]),
    ("Thumb1", "Hand", [-0.22, 0.12, 0.05]),
    ("Thumb2", "Thumb1", [-0.34, 0.26, 0.08]),
    ("Thumb3", "Thumb2", [-0.43, 0.38, 0.09]),
    ("Thumb4", "Thumb3", [-0.50, 0.48, 0.09]),
    ("Index1", "Hand", [-0.17, 0.45, 0.0]),
    ("Index2", "Index1", [-0.19, 0.64, 0.0]),
    ("Index3", "Index2", [-0.20, 0.77, 0.0]),
    ("Index4", "Index3", [-0.21, 0.88, 0.0]),
    ("Middle1", "Hand", [-0.03, 0.47, 0.0]),
    ("Middle2", "Middle1", [-0.03, 0.68, 0.0]),
    ("Middle3", "Middle2", [-0.03, 0.83, 0.0]),
    ("Middle4", "Middle3", [-0.03, 0.95, 0.0]),
    ("Ring1", "Hand", [0.10, 0.45, 0.0]),
    ("Ring2", "Ring1", [0.11, 0.64, 0.0]),
    ("Ring3", "Ring2", [0.12, 0.78, 0.0]),
    ("Ring4", "Ring3", [0.12, 0.89, 0.0]),
    ("Pinky1", "Hand", [0.22, 0.40, 0.0]),
    ("Pinky2", "Pinky1", [0.25, 0.55, 0.0]),
    ("Pinky3", "Pinky2", [0.27, 0.66, 0.0]),
    ("Pinky4", "Pinky3", [0.28, 0.75, 0.0]),
];

/// How many joints the chain template has (a root and its links).
pub const CHAIN_JOINTS: usize = 11;

/// The template skeleton of `kind`, in its body box ([`BODY_BOX`]).
pub fn template(kind: TemplateKind) -> Skeleton {
    let entries: Vec<(String, String, Vec3)> = match kind {
        TemplateKind::Biped => with_sides(BIPED_MIDDLE, BIPED_SIDE, ("Left", "Right")),
        TemplateKind::Quadruped => with_sides(QUADRUPED_MIDDLE, QUADRUPED_SIDE, ("L", "R")),
        TemplateKind::Bird => with_sides(BIRD_MIDDLE, BIRD_SIDE, ("L", "R")),
        TemplateKind::Hand => with_sides(HAND, &[], ("L", "R")),
        TemplateKind::Chain => (0..CHAIN_JOINTS)
            .map(|i| {
                let name = if i == 0 {
                    "Chain".to_string()
                } else {
                    format!("Chain{i}")
                };
                let parent = match i {
                    0 => String::new(),
                    1 => "Chain".to_string(),
                    _ => format!("Chain{}", i - 1),
                };
                (name, parent, Vec3::new(0.0, i as f32 / (CHAIN_JOINTS - 1) as f32, 0.0))
            })
            .collect(),
    };
    build(&entries)
}

/// The trunk's joints of a template that draws its body for the fit ([`super::fit_proxy`]), and the half width
/// of their tubes in the body box: a biped's torso is about an eighth of its height deep, a quadruped's body a
/// quarter of its height (hooves to the top of the head). The limbs' tubes follow the bones' lengths.
fn trunk(kind: TemplateKind) -> Option<(&'static [&'static str], f32)> {
    match kind {
        TemplateKind::Biped => Some((&["Hips", "Spine", "Spine1", "Spine2"], 0.06)),
        TemplateKind::Quadruped => Some((&["Hips", "Spine", "Spine1", "Chest"], 0.12)),
        // Not measured yet: these keep the body box alone.
        TemplateKind::Bird | TemplateKind::Hand | TemplateKind::Chain => None,
    }
}

/// The axis along which a template's trunk is matched to the mesh's trunk in a fit, rather than its body box to
/// the mesh's box ([`super::fit::FitInput::template_trunk`]): a quadruped's length, where heads, necks and tails
/// vary most between animals (a pig's against a llama's) and the trunk least. None: box to box.
pub fn trunk_axis(kind: TemplateKind) -> Option<usize> {
    match kind {
        TemplateKind::Quadruped => Some(2),
        // A biped matched along its arm span lost 0.06 to 0.23 (% of the diagonal) on each shared human; the
        // bird, the hand and the chain are not measured.
        TemplateKind::Biped | TemplateKind::Bird | TemplateKind::Hand | TemplateKind::Chain => None,
    }
}

/// Per joint of `skel` (a template of `kind`, as [`template`] makes it or edited), the half width of its
/// stand-in body's tubes where the template knows it (its trunk), for [`super::fit::FitInput::template_widths`];
/// None for a kind that draws no body.
pub fn body_widths(kind: TemplateKind, skel: &Skeleton) -> Option<Vec<Option<f32>>> {
    let (names, width) = trunk(kind)?;
    Some(
        skel.joints()
            .iter()
            .map(|j| names.contains(&j.name.as_str()).then_some(width))
            .collect(),
    )
}

/// The middle joints, then each side entry for the left (+X) and the right (mirrored), parents resolved by name.
fn with_sides(middle: &[Entry], side: &[SideEntry], names: (&str, &str)) -> Vec<(String, String, Vec3)> {
    let mut out: Vec<(String, String, Vec3)> = middle
        .iter()
        .map(|(n, p, at)| (n.to_string(), p.to_string(), Vec3::from(*at)))
        .collect();
    for (word, sign) in [(names.0, 1.0), (names.1, -1.0)] {
        for (n, p, at) in side {
            let at = Vec3::new(at[0] * sign, at[1], at[2]);
            out.push((n.replace("{}", word), p.replace("{}", word), at));
        }
    }
    out
}

/// Joints in depth-first order from (name, parent name, pivot) entries whose parents come first.
fn build(entries: &[(String, String, Vec3)]) -> Skeleton {
    // Depth-first order: visit children in entry order.
    let index_of = |name: &str| entries.iter().position(|e| e.0 == name);
    let mut order = Vec::with_capacity(entries.len());
    let mut stack = vec![0usize];
    while let Some(i) = stack.pop() {
        order.push(i);
        let children: Vec<usize> = (0..entries.len())
            .filter(|&c| !entries[c].1.is_empty() && index_of(&entries[c].1) == Some(i))
            .collect();
        stack.extend(children.into_iter().rev());
    }
    let new_index = |old: usize| order.iter().position(|&o| o == old);
    let joints: Vec<Joint> = order
        .iter()
        .map(|&i| {
            let (name, parent, at) = &entries[i];
            let parent = index_of(parent);
            // Offsets rounded to the tables' 1e-4, so the file reads `offset -0.12 0.14 0.03`, not float noise.
            let round = |a: f32, b: f32| ((f64::from(a) - f64::from(b)) * 1e4).round() as f32 / 1e4;
            let offset = parent.map_or(*at, |p| {
                let q = entries[p].2;
                Vec3::new(round(at.x, q.x), round(at.y, q.y), round(at.z, q.z))
            });
            Joint::new(name.clone(), parent.and_then(new_index), offset)
        })
        .collect();
    // The tables above are fixed and tested; a mistake in them is a bug, caught by the tests, not bad input.
    match Skeleton::new(joints) {
        Ok(s) => s,
        Err(e) => unreachable!("template {e}"),
    }
}

/// The template `skel` (drawn in [`BODY_BOX`], at zero rotations) placed into the box `min..max`: each pivot
/// scaled per axis from the body box into it. A chain turns to run along the box's longest side.
pub fn place_in_box(skel: &Skeleton, min: Vec3, max: Vec3, kind: Option<TemplateKind>) -> Skeleton {
    let size = (max - min).max(Vec3::splat(1e-6));
    let (bmin, bmax) = BODY_BOX;
    let body = bmax - bmin;
    // A chain along Y in the body box: run it along the longest side instead, centred across the others.
    let axes: [usize; 3] = if kind == Some(TemplateKind::Chain) {
        let long = size.max_position();
        match long {
            0 => [1, 0, 2],
            2 => [0, 2, 1],
            _ => [0, 1, 2],
        }
    } else {
        [0, 1, 2]
    };
    let place = |p: Vec3| -> Vec3 {
        let mut out = Vec3::ZERO;
        for (from, &to) in axes.iter().enumerate() {
            let t = (p[from] - bmin[from]) / body[from];
            out[to] = min[to] + t * size[to];
        }
        out
    };
    let mut pivots: Vec<Vec3> = Vec::with_capacity(skel.len());
    let joints: Vec<Joint> = skel
        .joints()
        .iter()
        .map(|j| {
            let pivot = j.parent.map_or(j.offset, |p| pivots[p] + j.offset);
            pivots.push(pivot);
            j.clone()
        })
        .collect();
    let placed: Vec<Vec3> = pivots.iter().map(|&p| place(p)).collect();
    let joints: Vec<Joint> = joints
        .into_iter()
        .enumerate()
        .map(|(i, mut j)| {
            j.offset = j.parent.map_or(placed[i], |p| placed[i] - placed[p]);
            j.pose = None;
            j
        })
        .collect();
    Skeleton::new(joints).unwrap_or_else(|_| skel.clone())
}

/// [`place_in_box`] into a mesh (`positions`) that faces the way `turn` says ([`super::fit_orient::told_facing`]:
/// the turn that takes its up to +Y and its front to +Z): placed in the box of the mesh turned so, then turned
/// back, the turn carried by the root's rotation so that each joint's limits keep their axes. The skeleton (its
/// file pose the placed pose) and its world matrices; None for a mesh without vertices.
pub fn place_facing(
    skel: &Skeleton,
    positions: &[Vec3],
    turn: Mat3,
    kind: Option<TemplateKind>,
) -> Option<(Skeleton, Vec<Mat4>)> {
    let turned: Vec<Vec3> = positions.iter().map(|p| turn * *p).collect();
    let (lo, hi) = crate::model::skin::bounds(&turned)?;
    let placed = place_in_box(skel, lo, hi, kind);
    let world = crate::model::world_from_joint(&placed, &crate::model::Pose::zero(&placed));
    let pivots: Vec<Vec3> = world.iter().map(|m| m.w_axis.truncate()).collect();
    super::fit::rebuild_turned_back(&placed, &world, pivots, turn).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_placed_facing_x_is_the_template_placed_facing_z_turned() {
        let skel = template(TemplateKind::Quadruped);
        // A long box along z, and the same box turned to lie along x (facing +X: a quarter turn about up).
        let along_z = [Vec3::new(-1.0, 0.0, -3.0), Vec3::new(1.0, 2.5, 3.0)];
        let quarter = Mat3::from_rotation_y(std::f32::consts::FRAC_PI_2);
        let along_x: Vec<Vec3> = along_z.iter().map(|p| quarter * *p).collect();
        let turn = crate::rig::fit_orient::told_facing(Vec3::Y, quarter * Vec3::Z).unwrap();
        let (facing, world) = place_facing(&skel, &along_x, turn, Some(TemplateKind::Quadruped)).unwrap();
        let straight = place_in_box(&skel, along_z[0], along_z[1], Some(TemplateKind::Quadruped));
        let want = crate::model::world_from_joint(&straight, &crate::model::Pose::zero(&straight));
        assert_eq!(
            world,
            crate::model::world_from_joint(&facing, &crate::model::Pose::from_file(&facing))
        );
        for (i, (a, b)) in world.iter().zip(&want).enumerate() {
            let (a, b) = (a.w_axis.truncate(), quarter * b.w_axis.truncate());
            assert!(a.distance(b) < 1e-4, "{}: {a} against {b}", skel.joints()[i].name);
        }
        // The turn is the root's rotation alone: every other joint keeps its zero rotation and its limits.
        assert!(facing.joints()[0].pose.is_some());
        for (a, b) in facing.joints().iter().zip(skel.joints()).skip(1) {
            assert_eq!(a.pose, None, "{}", a.name);
            assert_eq!(a.limits, b.limits, "{}", a.name);
        }
        // Told it faces +Z, it is place_in_box.
        let (same, _) = place_facing(&skel, &along_z, Mat3::IDENTITY, Some(TemplateKind::Quadruped)).unwrap();
        assert_eq!(same.joints().len(), straight.joints().len());
        assert!(place_facing(&skel, &[], turn, None).is_none());
    }

    #[test]
    fn every_template_is_symmetric_with_named_sides_and_inside_its_body_box() {
        for kind in TemplateKind::ALL {
            let s = template(kind);
            let mirror = crate::adjust::mirror::mirror_joints(
                &s,
                &crate::model::world_from_joint(&s, &crate::model::Pose::zero(&s)),
                crate::adjust::mirror::Axis::X,
                1e-4,
            );
            if kind != TemplateKind::Hand {
                assert!(
                    mirror.name_mismatches().is_empty(),
                    "{kind:?}: {:?}",
                    mirror.name_mismatches()
                );
            }
            let pivots = crate::model::world_from_joint(&s, &crate::model::Pose::zero(&s));
            for (i, m) in pivots.iter().enumerate() {
                let p = m.w_axis.truncate();
                assert!(
                    p.cmpge(BODY_BOX.0 - 1e-6).all() && p.cmple(BODY_BOX.1 + 1e-6).all(),
                    "{kind:?} joint {i} at {p}"
                );
            }
        }
        assert_eq!(template(TemplateKind::Biped).len(), 7 + 2 * 10);
        assert_eq!(template(TemplateKind::Biped).find("LeftForeArm").len(), 1);
    }

    #[test]
    fn placing_maps_the_body_box_onto_the_mesh_box() {
        let s = template(TemplateKind::Biped);
        let placed = place_in_box(&s, Vec3::new(-1.0, 0.0, -0.2), Vec3::new(1.0, 1.8, 0.2), None);
        let w = crate::model::world_from_joint(&placed, &crate::model::Pose::zero(&placed));
        let top = placed.find("HeadTop_End")[0];
        assert!((w[top].w_axis.truncate() - Vec3::new(0.0, 1.8, 0.008)).length() < 1e-5);
        // A chain in a long, flat box runs along its longest side (Z here).
        let c = place_in_box(
            &template(TemplateKind::Chain),
            Vec3::ZERO,
            Vec3::new(0.2, 0.1, 3.0),
            Some(TemplateKind::Chain),
        );
        let w = crate::model::world_from_joint(&c, &crate::model::Pose::zero(&c));
        assert!((w[CHAIN_JOINTS - 1].w_axis.truncate() - Vec3::new(0.1, 0.05, 3.0)).length() < 1e-5);
    }
}
