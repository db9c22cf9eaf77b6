//! What the Skeleton panel warns about, each naming its joint: a joint outside the mesh, a bone of zero length,
//! a side without its counterpart, limits that leave out the rest pose.

use glam::Vec3;

use super::Rig;
use super::limits::joint_limits;
use crate::adjust::mirror::mirrored_names;

/// One warning about one joint.
#[derive(Clone, Debug, PartialEq)]
pub struct RigWarning {
    pub joint: usize,
    pub text: String,
}

/// The rig's warnings, in joint order. `inside` says whether a point lies in the mesh's solid (none without a
/// mesh); a joint named as a control (IK, pole, target) and a root with children (a master root) may lie
/// outside, and a leaf is judged by the middle of its bone (an end joint sits on the surface) unless its parent
/// is a root.
pub fn rig_warnings(rig: &Rig, inside: Option<&dyn Fn(Vec3) -> bool>) -> Vec<RigWarning> {
    let skel = &rig.skeleton;
    let pivots = rig.pivots();
    let size = super::symmetry::size(&pivots).max(1e-3);
    let mut out = Vec::new();
    let axes = ["X", "Y", "Z"];
    for (j, joint) in skel.joints().iter().enumerate() {
        let name = if joint.name.is_empty() {
            format!("joint {j}")
        } else {
            joint.name.clone()
        };
        let mut warn = |text: String| out.push(RigWarning { joint: j, text });
        if let Some(inside) = inside {
            // A leaf hanging from a root (a foot control under a master root on the ground) has no bone to judge.
            let probe = match (joint.parent, skel.children(j).is_empty()) {
                (Some(p), true) if skel.joints()[p].parent.is_some() => pivots[p].lerp(pivots[j], 0.5),
                _ => pivots[j],
            };
            // A root with children outside is a master root, which the bind leaves out as a control.
            let master = joint.parent.is_none() && !skel.children(j).is_empty();
            if crate::bind::controls::control_word(&joint.name).is_none() && !master && !inside(probe) {
                warn(format!("{name} lies outside the mesh"));
            }
        }
        if joint.parent.is_some() && joint.offset.length() <= size * 1e-6 {
            warn(format!("{name}'s bone has no length (it sits on its parent)"));
        }
        let sides = mirrored_names(&joint.name);
        if !sides.is_empty() && sides.iter().all(|n| skel.find(n).is_empty()) {
            warn(format!("{name} has no counterpart on the other side ({})", sides[0]));
        }
        for (axis, l) in joint_limits(skel, j).iter().enumerate() {
            if !l.allows_rest() {
                warn(format!("{name}'s {} limits leave out the rest pose (0)", axes[axis]));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Joint, Pose, Skeleton};
    use crate::rig::limits::DofLimit;

    #[test]
    fn each_warning_names_its_joint() {
        let mut knee = Joint::new("knee.L", Some(0), Vec3::new(0.0, -1.0, 0.0));
        knee.limits[0] = DofLimit::Limited { lo: 0.2, hi: 1.0 }.to_limit();
        let skel = Skeleton::new(vec![
            Joint::new("hip", None, Vec3::ZERO),
            knee,
            Joint::new("foot", Some(1), Vec3::ZERO),
            Joint::new("IK_foot", Some(0), Vec3::new(5.0, 0.0, 0.0)),
        ])
        .unwrap();
        let rig = Rig::new(skel.clone(), None, Pose::zero(&skel));
        let inside = |p: Vec3| p.x.abs() < 1.0;
        let w: Vec<String> = rig_warnings(&rig, Some(&inside)).into_iter().map(|w| w.text).collect();
        assert_eq!(
            w,
            [
                "knee.L has no counterpart on the other side (knee.R)",
                "knee.L's X limits leave out the rest pose (0)",
                "foot's bone has no length (it sits on its parent)",
            ]
        );
        let outside = |_: Vec3| false;
        let w = rig_warnings(&rig, Some(&outside));
        assert!(w.iter().any(|w| w.text == "knee.L lies outside the mesh"));
        assert!(
            !w.iter().any(|w| w.text.starts_with("hip ")),
            "a root with children is a master root: {w:?}"
        );
        assert!(
            !w.iter().any(|w| w.text.starts_with("IK_foot")),
            "a control may lie outside"
        );
    }

    /// A leaf under a root is judged at its pivot (the line from a master root on the ground to a foot control
    /// is no bone); a leaf deeper down at its bone's middle.
    #[test]
    fn a_leaf_under_a_root_is_judged_at_its_pivot() {
        let skel = Skeleton::new(vec![
            Joint::new("root", None, Vec3::ZERO),
            Joint::new("foot", Some(0), Vec3::new(4.0, 0.0, 0.0)),
            Joint::new("body", Some(0), Vec3::new(0.0, 4.0, 0.0)),
            Joint::new("head", Some(2), Vec3::new(4.0, 0.0, 0.0)),
        ])
        .unwrap();
        let rig = Rig::new(skel.clone(), None, Pose::zero(&skel));
        // Inside: around the foot's pivot (4, 0) and the body's (0, 4) out to the head's bone's middle (2, 4).
        let inside = |p: Vec3| p.distance(Vec3::new(4.0, 0.0, 0.0)) < 0.5 || (p.y > 3.5 && p.x < 2.5);
        let w: Vec<String> = rig_warnings(&rig, Some(&inside)).into_iter().map(|w| w.text).collect();
        assert!(w.is_empty(), "{w:?}");
        let nothing = |_: Vec3| false;
        let w: Vec<String> = rig_warnings(&rig, Some(&nothing)).into_iter().map(|w| w.text).collect();
        assert_eq!(
            w,
            [
                "foot lies outside the mesh",
                "body lies outside the mesh",
                "head lies outside the mesh"
            ]
        );
    }
}
