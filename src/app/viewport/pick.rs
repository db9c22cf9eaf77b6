//! Joint picking: the bone nearest the pointer on screen.

use glam::{Mat4, Vec2, Vec3};

use crate::model::Skeleton;
use crate::render::OrbitCamera;

/// The joint whose bone (pivot to 85% of the way to each child's pivot; a leaf: its pivot) passes nearest to `pixel` on screen,
/// within `radius` pixels; ties go to the bone nearer the camera, then the lower joint.
pub fn pick_joint(
    camera: &OrbitCamera,
    size: Vec2,
    skeleton: &Skeleton,
    world_from_joint: &[Mat4],
    pixel: Vec2,
    radius: f32,
) -> Option<usize> {
    let project = |j: usize| {
        world_from_joint
            .get(j)
            .and_then(|m| camera.project(m.w_axis.truncate(), size))
    };
    let mut best: Option<(f32, f32, usize)> = None;
    for j in 0..skeleton.len() {
        let Some((a, da)) = project(j) else { continue };
        let mut consider = |dist: f32, depth: f32| {
            if dist <= radius && best.is_none_or(|(bd, bz, _)| dist < bd - 1e-3 || (dist <= bd + 1e-3 && depth < bz)) {
                best = Some((dist, depth, j));
            }
        };
        // The distance from the pointer to the projected segment a..b, and the depth there.
        let to_segment = |(a, da): (Vec2, f32), (b, db): (Vec2, f32)| {
            let ab = b - a;
            let t = if ab.length_squared() > 0.0 {
                ((pixel - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0)
            } else {
                0.0
            };
            ((a + ab * t - pixel).length(), da + (db - da) * t)
        };
        let children = skeleton.children(j);
        if children.is_empty() {
            let joint = &skeleton.joints()[j];
            // A leaf with a box of its own: along the box's long axis (the box drawn for it), else its pivot.
            let axis = joint.box_min.zip(joint.box_max).and_then(|(lo, hi)| {
                let m = world_from_joint.get(j)?;
                let (c, e) = ((lo + hi) * 0.5, (hi - lo).abs());
                let long = Vec3::AXES[e.max_position()] * e.max_element() * 0.5;
                let a = camera.project(m.transform_point3(c - long), size)?;
                let b = camera.project(m.transform_point3(c + long), size)?;
                Some((a, b))
            });
            let (dist, depth) = match axis {
                Some((s0, s1)) => {
                    let (d0, z0) = to_segment(s0, s1);
                    let d_pivot = (pixel - a).length();
                    if d_pivot < d0 { (d_pivot, da) } else { (d0, z0) }
                }
                None => ((pixel - a).length(), da),
            };
            consider(dist, depth);
        }
        for &c in children {
            if let Some((b, db)) = project(c) {
                // The last 15% of a bone, at the child's pivot, belongs to the child (as a bone's head does in
                // Blender), so a leaf's pivot can be picked.
                let (dist, depth) = to_segment((a, da), (a + (b - a) * 0.85, da + (db - da) * 0.85));
                consider(dist, depth);
            }
        }
    }
    best.map(|(_, _, j)| j)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Joint, Pose, world_from_joint};
    use crate::render::ViewPreset;

    fn arm() -> Skeleton {
        Skeleton::new(vec![
            Joint::new("shoulder", None, Vec3::ZERO),
            Joint::new("elbow", Some(0), Vec3::new(1.0, 0.0, 0.0)),
            Joint::new("wrist", Some(1), Vec3::new(1.0, 0.0, 0.0)),
        ])
        .expect("skeleton")
    }

    #[test]
    fn picking_finds_the_bone_under_the_pointer() {
        let skel = arm();
        let world = world_from_joint(&skel, &Pose::zero(&skel));
        let mut camera = OrbitCamera::default();
        camera.set_preset(ViewPreset::Front);
        camera.frame(Vec3::new(0.0, -0.5, 0.0), Vec3::new(2.0, 0.5, 0.0));
        let size = Vec2::new(400.0, 300.0);
        let at = |p: Vec3| camera.project(p, size).expect("visible").0;
        // Halfway along the shoulder's bone (0..1 on x), and along the elbow's (1..2).
        assert_eq!(
            pick_joint(&camera, size, &skel, &world, at(Vec3::new(0.5, 0.0, 0.0)), 12.0),
            Some(0)
        );
        assert_eq!(
            pick_joint(&camera, size, &skel, &world, at(Vec3::new(1.6, 0.0, 0.0)), 12.0),
            Some(1)
        );
        // The wrist is a leaf: its pivot. Nothing far from every bone.
        assert_eq!(
            pick_joint(
                &camera,
                size,
                &skel,
                &world,
                at(Vec3::new(2.0, 0.0, 0.0)) + Vec2::new(3.0, 0.0),
                12.0
            ),
            Some(2)
        );
        assert_eq!(
            pick_joint(&camera, size, &skel, &world, at(Vec3::new(1.0, 0.4, 0.0)), 12.0),
            None
        );
    }

    /// Issue 23 item 8: a leaf with a box of its own is picked anywhere along the box's long axis, not only at its
    /// pivot.
    #[test]
    fn a_leaf_is_picked_along_its_box() {
        let mut joints = arm().joints().to_vec();
        joints[2].box_min = Some(Vec3::new(0.0, -0.05, -0.05));
        joints[2].box_max = Some(Vec3::new(0.8, 0.05, 0.05));
        let skel = Skeleton::new(joints).expect("skeleton");
        let world = world_from_joint(&skel, &Pose::zero(&skel));
        let mut camera = OrbitCamera::default();
        camera.set_preset(ViewPreset::Front);
        camera.frame(Vec3::new(0.0, -0.5, 0.0), Vec3::new(2.8, 0.5, 0.0));
        let size = Vec2::new(400.0, 300.0);
        let at = |p: Vec3| camera.project(p, size).expect("visible").0;
        assert_eq!(
            pick_joint(&camera, size, &skel, &world, at(Vec3::new(2.6, 0.0, 0.0)), 12.0),
            Some(2)
        );
        // Without the box, that far along nothing is picked.
        assert_eq!(
            pick_joint(&camera, size, &arm(), &world, at(Vec3::new(2.6, 0.0, 0.0)), 12.0),
            None
        );
    }
}
