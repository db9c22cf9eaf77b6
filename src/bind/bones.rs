//! Bones as line segments in the bind pose (CSE169, "Skinning" lecture: point-to-line mapping).
//!
//! A joint's bone is the set of segments from its pivot to each child's pivot. A leaf joint (no children) gets
//! one segment along the long axis of its `.skel` box (in joint space, through the middle of the box's other two
//! axes), from the box end nearer the pivot to the far end. A leaf with no box, or with a box whose two largest
//! extents are within 5% of each other (a cube, or a plate with no long axis), gets a short segment from its
//! pivot continuing its parent's direction, half as long as the parent's segment to it; a lone root gets a
//! point. Segments may have zero length; distances to them are distances to a point.
//!
//! [`extend_leaves_to_surface`] then lets such a continued leaf reach into the mesh: along the same direction,
//! to 90% of the distance at which a ray from the pivot first meets the surface (when it does within eight
//! times the stub's length). Without it, a box-less leg's lower half is nearer the next leg's stub than its own
//! (wasp2.skel). Boxed leaves and bones between joints are never changed.

use glam::{Mat4, Vec3};

use crate::model::Skeleton;

/// One segment of a joint's bone, in world space (bind pose).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Segment {
    pub joint: u16,
    pub a: Vec3,
    pub b: Vec3,
    pub kind: SegmentKind,
}

/// Which rule made a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum SegmentKind {
    /// Pivot to a child's pivot.
    Child,
    /// A leaf's box long axis.
    Box,
    /// A leaf continuing its parent's direction (or a lone root's point).
    Continued,
}

impl Segment {
    /// The closest point of the segment to `p`, and the squared distance to it.
    #[inline]
    pub fn closest(&self, p: Vec3) -> (Vec3, f32) {
        let ab = self.b - self.a;
        let len2 = ab.length_squared();
        let t = if len2 > 0.0 {
            ((p - self.a).dot(ab) / len2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let q = self.a + ab * t;
        (q, (p - q).length_squared())
    }

    pub fn length(&self) -> f32 {
        (self.b - self.a).length()
    }
}

/// How similar two extents may be before a box counts as having no long axis.
const CUBE_TOLERANCE: f32 = 0.05;

/// The bones of `skel` with its joints at `world_from_joint` (the bind pose), in joint order; a joint with
/// several children has several consecutive segments.
pub fn bone_segments(skel: &Skeleton, world_from_joint: &[Mat4]) -> Vec<Segment> {
    let pivot = |j: usize| world_from_joint.get(j).map_or(Vec3::ZERO, |m| m.w_axis.truncate());
    let mut out = Vec::with_capacity(skel.len() + 1);
    for (i, joint) in skel.joints().iter().enumerate() {
        let j = i as u16;
        let children = skel.children(i);
        if !children.is_empty() {
            for &c in children {
                out.push(Segment {
                    joint: j,
                    a: pivot(i),
                    b: pivot(c),
                    kind: SegmentKind::Child,
                });
            }
            continue;
        }
        let m = world_from_joint.get(i).copied().unwrap_or(Mat4::IDENTITY);
        if let Some((a, b)) = box_long_axis(joint.box_min, joint.box_max) {
            out.push(Segment {
                joint: j,
                a: m.transform_point3(a),
                b: m.transform_point3(b),
                kind: SegmentKind::Box,
            });
            continue;
        }
        let p = pivot(i);
        let b = match joint.parent {
            Some(parent) => p + (p - pivot(parent)) * 0.5,
            None => p,
        };
        out.push(Segment {
            joint: j,
            a: p,
            b,
            kind: SegmentKind::Continued,
        });
    }
    out
}

/// Extend every [`SegmentKind::Continued`] leaf along its direction to 90% of the distance at which it meets the
/// surface, when it does within eight times its length. Returns how many segments changed.
/// `ray_cast(origin, dir, t_max)` gives the distance (in units of `dir`) to the nearest surface hit.
pub fn extend_leaves_to_surface(segments: &mut [Segment], ray_cast: impl Fn(Vec3, Vec3, f32) -> Option<f32>) -> usize {
    let mut changed = 0;
    for s in segments.iter_mut().filter(|s| s.kind == SegmentKind::Continued) {
        let len = s.length();
        let Some(dir) = (s.b - s.a).try_normalize() else {
            continue;
        };
        if let Some(t) = ray_cast(s.a, dir, 8.0 * len) {
            s.b = s.a + dir * (0.9 * t);
            changed += 1;
        }
    }
    changed
}

/// The long-axis segment of a box in joint space, from the end nearer the pivot (the origin), or `None` when
/// the box is missing or has no clear long axis.
fn box_long_axis(min: Option<Vec3>, max: Option<Vec3>) -> Option<(Vec3, Vec3)> {
    let (a, b) = (min?, max?);
    let (lo, hi) = (a.min(b), a.max(b));
    let ext = hi - lo;
    let mut axes = [0usize, 1, 2];
    axes.sort_by(|&x, &y| ext[y].total_cmp(&ext[x]).then(x.cmp(&y)));
    let (long, second) = (ext[axes[0]], ext[axes[1]]);
    if long <= 0.0 || long <= second * (1.0 + CUBE_TOLERANCE) {
        return None;
    }
    let k = axes[0];
    let mid = (lo + hi) * 0.5;
    let (mut s, mut e) = (mid, mid);
    s[k] = lo[k];
    e[k] = hi[k];
    // Start at the end nearer the pivot.
    if e[k].abs() < s[k].abs() {
        std::mem::swap(&mut s, &mut e);
    }
    Some((s, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::skel::read_skel;
    use crate::model::{Pose, world_from_joint};

    #[test]
    fn bones_follow_children_boxes_and_parents() {
        let text = "balljoint root { offset 0 0 0
              balljoint hip { offset 0 -1 0
                balljoint knee { offset 0 -1 0 boxmin -0.1 -0.8 -0.1 boxmax 0.1 0 0.1 } }
              balljoint spine { offset 0 2 0 }
              balljoint arm { offset 1 0 0 boxmin -0.1 -0.1 -0.1 boxmax 0.1 0.1 0.1 } }";
        let s = read_skel(text.as_bytes(), None).unwrap().value;
        let w = world_from_joint(&s, &Pose::zero(&s));
        let segs = bone_segments(&s, &w);
        let v = |x, y, z| Vec3::new(x, y, z);
        let seg = |joint, a, b, kind| Segment { joint, a, b, kind };
        assert_eq!(
            segs,
            vec![
                seg(0, v(0.0, 0.0, 0.0), v(0.0, -1.0, 0.0), SegmentKind::Child),
                seg(0, v(0.0, 0.0, 0.0), v(0.0, 2.0, 0.0), SegmentKind::Child),
                seg(0, v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), SegmentKind::Child),
                seg(1, v(0.0, -1.0, 0.0), v(0.0, -2.0, 0.0), SegmentKind::Child),
                // Leaf with a long box along -y: from the end at the pivot to the far end.
                seg(2, v(0.0, -2.0, 0.0), v(0.0, -2.8, 0.0), SegmentKind::Box),
                // Leaf without a box: half its parent's segment, continuing the direction.
                seg(3, v(0.0, 2.0, 0.0), v(0.0, 3.0, 0.0), SegmentKind::Continued),
                // Leaf with a cube: the same rule.
                seg(4, v(1.0, 0.0, 0.0), v(1.5, 0.0, 0.0), SegmentKind::Continued),
            ]
        );
    }

    #[test]
    fn closest_point_on_a_degenerate_segment_is_the_point() {
        let s = Segment {
            joint: 0,
            a: Vec3::ONE,
            b: Vec3::ONE,
            kind: SegmentKind::Continued,
        };
        assert_eq!(s.closest(Vec3::ZERO), (Vec3::ONE, 3.0));
    }
}
