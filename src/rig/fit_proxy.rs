//! A stand-in body for a template that comes without a mesh (a bare `.skel`, a shipped template), so that the
//! fit's registrations ([`super::fit_register`], [`super::fit_bones`]) have a surface to move: a square tube
//! around each bone, skinned wholly to the bone's joint, and a short tube past each leaf (a head, a hoof, a
//! tail's tip) skinned to the leaf. Without it only the box places such a template: a skeleton's joints do not
//! reach its body's surface, so its joints' box is smaller than the body, and no part can move on its own.
//!
//! Bones leaving a master root on the ground (a root with several children at the bottom of the skeleton, the
//! farm rigs' `root` with its foot controls) are left out: they would make tubes along the ground and up to the
//! belly. A root in the body (a biped's or a quadruped's hips) keeps its bones.

use glam::{Mat4, Vec3};

use crate::model::{Skeleton, Weights};

/// A tube's half width as a share of its bone's length, within bounds set by the skeleton's size.
const WIDTH: f32 = 0.3;
/// The bounds on a tube's half width, as shares of the skeleton's joints' box diagonal.
const THINNEST: f32 = 0.015;
const THICKEST: f32 = 0.07;
/// A root this low in the skeleton's height (a share of it) is on the ground.
const GROUND: f32 = 0.05;
/// A leaf's tube is this share of its parent bone's length.
const LEAF: f32 = 0.5;

/// The stand-in body: positions, triangles and one joint per vertex (weight 1); None when the skeleton has
/// no bone to draw (a single joint, every joint at one place). `widths`, per joint, the half width of the
/// tubes of the bones it owns where the template says (a shipped template's trunk), else by the rule above.
pub fn proxy_body(
    skel: &Skeleton,
    world: &[Mat4],
    widths: Option<&[Option<f32>]>,
) -> Option<(Vec<Vec3>, Vec<[u32; 3]>, Weights)> {
    let n = skel.len();
    if world.len() != n {
        return None;
    }
    let pivot = |i: usize| world[i].w_axis.truncate();
    let pivots: Vec<Vec3> = (0..n).map(pivot).collect();
    let (lo, hi) = crate::model::skin::bounds(&pivots)?;
    let size = (hi - lo).length();
    if size.is_nan() || size <= 0.0 {
        return None;
    }
    let mut tubes: Vec<(Vec3, Vec3, f32, u16)> = Vec::new();
    let width = |len: f32| (WIDTH * len).clamp(THINNEST * size, THICKEST * size);
    let given = |j: usize| widths.and_then(|w| w.get(j).copied().flatten()).filter(|w| *w > 0.0);
    for (c, joint) in skel.joints().iter().enumerate() {
        let Some(p) = joint.parent else { continue };
        // A master root on the ground: a root with several children, at the bottom of the skeleton (Y up).
        let root_hub = skel.joints()[p].parent.is_none()
            && skel.children(p).len() > 1
            && pivots[p].y <= lo.y + GROUND * (hi.y - lo.y);
        let (a, b) = (pivots[p], pivots[c]);
        let len = a.distance(b);
        if root_hub || len <= 1e-6 * size {
            continue;
        }
        let Ok(owner) = u16::try_from(p) else { continue };
        tubes.push((a, b, given(p).unwrap_or(width(len)), owner));
        if skel.children(c).is_empty()
            && let Ok(leaf) = u16::try_from(c)
        {
            let dir = (b - a) / len;
            let r = given(c).unwrap_or(width(len));
            tubes.push((b, b + dir * (LEAF * len).max(r), r, leaf));
        }
    }
    if tubes.is_empty() {
        return None;
    }
    let (mut positions, mut triangles, mut joints) = (Vec::new(), Vec::new(), Vec::new());
    for (a, b, r, j) in tubes {
        let base = positions.len() as u32;
        positions.extend(tube(a, b, r));
        triangles.extend(TUBE_FACES.iter().map(|t| t.map(|v| v + base)));
        joints.extend([j; 8]);
    }
    let offsets: Vec<u32> = (0..=joints.len() as u32).collect();
    let values = vec![1.0; joints.len()];
    let weights = Weights::new(offsets, joints, values).ok()?;
    Some((positions, triangles, weights))
}

/// The 8 corners of a square tube from `a` to `b`, `r` from its axis, its ends pushed out by `r` so that
/// tubes meeting at a joint overlap.
fn tube(a: Vec3, b: Vec3, r: f32) -> [Vec3; 8] {
    let axis = (b - a).normalize_or_zero();
    let u = axis.any_orthogonal_vector().normalize_or_zero();
    let v = axis.cross(u);
    let (a, b) = (a - axis * r, b + axis * r);
    let corner = |end: Vec3, k: usize| end + u * if k & 1 == 0 { -r } else { r } + v * if k & 2 == 0 { -r } else { r };
    [
        corner(a, 0),
        corner(a, 1),
        corner(a, 2),
        corner(a, 3),
        corner(b, 0),
        corner(b, 1),
        corner(b, 2),
        corner(b, 3),
    ]
}

/// The tube's faces, wound outward when (u, v, axis) is right-handed (as `any_orthonormal_pair` gives).
const TUBE_FACES: [[u32; 3]; 12] = [
    // The `a` end (facing -axis) and the `b` end.
    [0, 2, 3],
    [0, 3, 1],
    [4, 5, 7],
    [4, 7, 6],
    // -u and +u sides.
    [0, 4, 6],
    [0, 6, 2],
    [1, 3, 7],
    [1, 7, 5],
    // -v and +v sides.
    [0, 1, 5],
    [0, 5, 4],
    [2, 6, 7],
    [2, 7, 3],
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::model::Joint;
    use glam::Vec2;

    /// A root hub on the ground with a foot and a body; the body has a neck and a head (a leaf).
    fn rig() -> (Skeleton, Vec<Mat4>) {
        let joints = vec![
            Joint::new("root", None, Vec3::ZERO),
            Joint::new("foot", Some(0), Vec3::new(1.0, 0.0, 0.0)),
            Joint::new("body", Some(0), Vec3::new(0.0, 2.0, 0.0)),
            Joint::new("neck", Some(2), Vec3::new(0.0, 0.0, 2.0)),
            Joint::new("head", Some(3), Vec3::new(0.0, 1.0, 0.0)),
        ];
        let skel = Skeleton::new(joints).unwrap();
        let world = crate::model::world_from_joint(&skel, &crate::model::Pose::zero(&skel));
        (skel, world)
    }

    #[test]
    fn tubes_follow_bones_skinned_to_their_joint_and_a_leaf_gets_its_own() {
        let (skel, world) = rig();
        let (p, t, w) = proxy_body(&skel, &world, None).unwrap();
        // body->neck, neck->head and the head's own tube; nothing from the root hub.
        assert_eq!(p.len(), 3 * 8);
        assert_eq!(t.len(), 3 * 12);
        assert_eq!(w.len(), p.len());
        let owners: Vec<u16> = (0..w.len()).map(|v| w.row(v).0[0]).collect();
        assert_eq!(&owners[..8], &[2; 8]);
        assert_eq!(&owners[8..16], &[3; 8]);
        assert_eq!(&owners[16..], &[4; 8]);
        // Nothing near the ground (the root's bones are not drawn).
        assert!(p.iter().all(|q| q.y > 1.5), "{p:?}");
        // The head's tube reaches past the head along the neck's direction (up), by half the neck's length.
        let top = p.iter().map(|q| q.y).fold(f32::MIN, f32::max);
        assert!(top > 3.5 && top < 4.0, "{top}");
    }

    /// A root in the body (hips above the feet) keeps its bones, and a width given for a joint sets its tubes'.
    #[test]
    fn a_root_in_the_body_keeps_its_bones_and_given_widths_hold() {
        let joints = vec![
            Joint::new("hips", None, Vec3::new(0.0, 1.0, 0.0)),
            Joint::new("leg", Some(0), Vec3::new(0.2, -1.0, 0.0)),
            Joint::new("spine", Some(0), Vec3::new(0.0, 1.0, 0.0)),
        ];
        let skel = Skeleton::new(joints).unwrap();
        let world = crate::model::world_from_joint(&skel, &crate::model::Pose::zero(&skel));
        // hips->leg and hips->spine, and both leaves' own tubes.
        let (p, _, _) = proxy_body(&skel, &world, None).unwrap();
        assert_eq!(p.len(), 4 * 8);
        let (p, _, w) = proxy_body(&skel, &world, Some(&[Some(0.25), None, None])).unwrap();
        // The hips' two tubes are 0.25 from their bones' axes (corners at 0.25 * sqrt 2).
        let spine_tube: Vec<Vec3> = (0..w.len())
            .filter(|&v| w.row(v).0[0] == 0)
            .map(|v| p[v])
            .filter(|q| q.y > 1.5)
            .collect();
        assert!(!spine_tube.is_empty());
        for q in spine_tube {
            let off = Vec2::new(q.x, q.z).length();
            assert!((off - 0.25 * 2f32.sqrt()).abs() < 1e-4, "{q}");
        }
    }

    #[test]
    fn every_tube_is_closed_and_wound_outward() {
        let corners = tube(Vec3::ZERO, Vec3::new(0.3, 2.0, -0.5), 0.2);
        // Divergence theorem: the volume from the faces is the box's, positive when wound outward.
        let volume: f32 = TUBE_FACES
            .iter()
            .map(|f| corners[f[0] as usize].dot(corners[f[1] as usize].cross(corners[f[2] as usize])) / 6.0)
            .sum();
        let length = Vec3::new(0.3, 2.0, -0.5).length() + 0.4;
        assert!((volume - 0.4 * 0.4 * length).abs() < 1e-4, "{volume}");
    }

    #[test]
    fn a_lone_joint_has_no_body() {
        let skel = Skeleton::new(vec![Joint::new("only", None, Vec3::ZERO)]).unwrap();
        assert!(proxy_body(&skel, &[Mat4::IDENTITY], None).is_none());
    }
}
