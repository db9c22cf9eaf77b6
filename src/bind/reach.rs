//! How far a bone reaches past its ends, as a factor on a distance (step 5 of the geodesic method).
//!
//! A joint's *stretch* at a point is its end distance over its plain distance ([`Segment::end_distance`]): 1
//! beside its bone, more past an end where the bone is given less reach. The geodesic method multiplies each
//! bone's distance through the solid by it.
//!
//! **An ancestor reaches no further past a descendant than the descendant does.** Where a point lies past the far end
//! of a child's bone (a segment of the child's to its own child, or to its tail), the parent's stretch there is at
//! least the child's, and so on down the chain. Without this, a branch (a chest, with `c = 2` past each child's pivot)
//! kept its long reach through a short neck into the chin and the back of the head, where the neck itself, an only
//! child's bone with `c = 0.1`, had given way: the grandparent beat the parent there. Measured on the shared models
//! with artist weights (L1, posed mean % and 99th percentile %): CesiumMan 0.195 / 0.031 / 0.78 to 0.191 / 0.029 /
//! 0.77, Smooth_Male_Casual 0.268 to 0.259, Female_Casual 0.255 to 0.234, Trex 0.345 to 0.340, Frog 1.036 to 0.813 (its
//! `Body`, a branch over every limb, no longer takes the head); the rest unchanged.

use glam::Vec3;

use super::bones::{Segment, distance2_to, segments_by_joint};
use crate::model::Skeleton;

/// The most descendants one stretch looks at. A point lies past few descendants' bones in a real rig (a chin past
/// the neck's and no other), but a chain coiled back on itself could put one past hundreds, for every vertex.
const MAX_DESCENDANTS: usize = 32;

/// Each joint's segments and the children whose bones its reach is capped by.
pub(super) struct Reach {
    /// Joint `j`'s segments.
    by_joint: Vec<Vec<Segment>>,
    /// Joint `j`'s children that have a segment to a child of their own (the bones a point can lie past).
    onward: Vec<Vec<u16>>,
}

impl Reach {
    /// From the bones `segments` of `skel` (none: no joint's reach is capped by another's).
    pub fn new(segments: &[Segment], skel: Option<&Skeleton>) -> Self {
        let by_joint = segments_by_joint(segments);
        let onward = (0..by_joint.len())
            .map(|j| {
                let children = skel.map_or(&[][..], |k| if j < k.len() { k.children(j) } else { &[] });
                children
                    .iter()
                    .filter(|&&c| {
                        by_joint
                            .get(c)
                            .is_some_and(|segs| segs.iter().any(|s| s.kind.to_child()))
                    })
                    .map(|&c| c as u16)
                    .collect()
            })
            .collect();
        Self { by_joint, onward }
    }

    /// Joint `j`'s own stretch at `p`: its end distance over its plain distance (at least 1; 1 without segments).
    fn own(&self, j: usize, p: Vec3) -> f32 {
        let Some(segs) = self.by_joint.get(j).filter(|s| !s.is_empty()) else {
            return 1.0;
        };
        let plain = distance2_to(segs, p).sqrt();
        let end = segs.iter().map(|s| s.end_distance(p)).fold(f32::INFINITY, f32::min);
        if plain > 0.0 && end.is_finite() {
            (end / plain).max(1.0)
        } else {
            1.0
        }
    }

    /// Whether `p` lies past the far end of one of joint `c`'s segments to a child.
    fn past(&self, c: usize, p: Vec3) -> bool {
        self.by_joint[c].iter().filter(|s| s.kind.to_child()).any(|s| {
            let ab = s.b - s.a;
            (p - s.a).dot(ab) > ab.length_squared()
        })
    }

    /// How much longer joint `j`'s distance from `p` counts than its plain distance: its own stretch, or the
    /// greatest of its descendants' that `p` lies past (see the module doc).
    pub fn stretch(&self, j: u16, p: Vec3) -> f32 {
        let j = j as usize;
        let mut most = self.own(j, p);
        // Each joint is visited at most once: the skeleton is a tree.
        let mut stack: Vec<u16> = Vec::new();
        let push_past = |stack: &mut Vec<u16>, j: usize| {
            if let Some(children) = self.onward.get(j) {
                stack.extend(children.iter().filter(|&&c| self.past(c as usize, p)));
            }
        };
        push_past(&mut stack, j);
        let mut visited = 0;
        while let Some(c) = stack.pop() {
            most = most.max(self.own(c as usize, p));
            visited += 1;
            if visited == MAX_DESCENDANTS {
                break;
            }
            push_past(&mut stack, c as usize);
        }
        most
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use glam::{Mat4, Vec3};

    use super::*;
    use crate::bind::bones::bone_segments;
    use crate::model::skeleton::{Pose, world_from_joint};
    use crate::model::{Joint, Skeleton};

    /// The skeleton of `joints` and its bones at rest.
    fn rig(joints: Vec<Joint>) -> (Skeleton, Vec<Segment>) {
        let skel = Skeleton::new(joints).unwrap();
        let world: Vec<Mat4> = world_from_joint(&skel, &Pose::zero(&skel));
        let segments = bone_segments(&skel, &world);
        (skel, segments)
    }

    /// A chest at the origin with a short neck up to a head, and a shoulder out to the side whose arm ends at a hand.
    fn torso() -> (Skeleton, Vec<Segment>) {
        let joint = Joint::new;
        rig(vec![
            joint("chest", None, Vec3::ZERO),
            joint("neck", Some(0), Vec3::new(0.0, 0.1, 0.0)),
            joint("head", Some(1), Vec3::new(0.0, 0.05, 0.0)),
            joint("shoulder", Some(0), Vec3::new(0.2, 0.0, 0.0)),
            joint("hand", Some(3), Vec3::new(0.3, 0.0, 0.0)),
        ])
    }

    #[test]
    fn a_branch_reaches_no_further_past_its_child_than_the_child() {
        let (skel, segments) = torso();
        let reach = Reach::new(&segments, Some(&skel));
        let alone = Reach::new(&segments, None);
        // The chin: past the head's pivot (the neck's far end), well in front of the neck.
        let chin = Vec3::new(0.0, 0.17, 0.12);
        let neck = alone.stretch(1, chin);
        assert!(neck > 1.5, "the neck gives way past the head's pivot: {neck}");
        // Alone, the chest's branch segment keeps the plain distance there (c = 2): stretch 1.
        assert_eq!(alone.stretch(0, chin), 1.0);
        assert_eq!(reach.stretch(0, chin), neck);
        // Beside the neck (not past its end), the chest keeps its own reach.
        let throat = Vec3::new(0.0, 0.12, 0.08);
        assert_eq!(reach.stretch(0, throat), alone.stretch(0, throat));
        // The neck's own stretch is never changed by a leaf child (the head has no segment to a child).
        assert_eq!(reach.stretch(1, chin), neck);
    }

    #[test]
    fn past_the_arm_the_chest_gives_way_as_the_shoulder_does() {
        let (skel, segments) = torso();
        let reach = Reach::new(&segments, Some(&skel));
        let alone = Reach::new(&segments, None);
        // Past the hand's pivot and off to the side: the shoulder's bone gives way, so the chest's does too.
        let p = Vec3::new(0.55, 0.0, 0.1);
        let shoulder = alone.stretch(3, p);
        assert!(shoulder > 1.0);
        assert_eq!(alone.stretch(0, p), 1.0);
        assert_eq!(reach.stretch(0, p), shoulder);
    }

    #[test]
    fn the_cap_runs_down_the_chain() {
        // A long spine, then a short neck, then a head: a point past the neck's end and well off the line is
        // beside the spine's reach (a long bone's plain distance reaches far) but past the neck's: the hips take
        // the neck's stretch through the spine, two levels down.
        let (skel, segments) = rig(vec![
            Joint::new("hips", None, Vec3::ZERO),
            Joint::new("spine", Some(0), Vec3::Y),
            Joint::new("neck", Some(1), Vec3::Y),
            Joint::new("head", Some(2), Vec3::new(0.0, 0.05, 0.0)),
        ]);
        let (reach, alone) = (Reach::new(&segments, Some(&skel)), Reach::new(&segments, None));
        let p = Vec3::new(0.0, 2.1, 0.2);
        let neck = alone.stretch(2, p);
        assert!(neck > 2.0, "{neck}");
        assert_eq!(alone.stretch(1, p), 1.0);
        assert_eq!(alone.stretch(0, p), 1.0);
        assert_eq!(reach.stretch(1, p), neck);
        assert_eq!(reach.stretch(0, p), neck);
    }
}
