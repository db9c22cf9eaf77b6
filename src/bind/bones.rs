//! Bones as line segments in the bind pose (CSE169, "Skinning" lecture: point-to-line mapping).
//!
//! A joint's bone is the set of segments from its pivot to each child's pivot. A leaf joint (no children) gets
//! one segment along the long axis of its `.skel` box (in joint space, through the middle of the box's other two
//! axes), from the box end nearer the pivot to the far end. A leaf with no box, or with a box whose two largest
//! extents are within 5% of each other (a cube, or a plate with no long axis), gets a short segment from its
//! pivot, half as long as the parent's segment to it, along the rig's bone axis where it has one (see
//! [`bone_axis`]: a rig made in Blender points each joint's local +y along its bone, so a head points to its
//! crown and a foot to its toes), else continuing its parent's direction; a lone root gets a point. Segments may
//! have zero length; distances to them are distances to a point.
//!
//! [`extend_leaves_to_surface`] then lets such a continued leaf reach into the mesh: when its pivot lies inside
//! the mesh, along the same direction to 90% of the distance at which a ray from its pivot first meets the
//! surface, however far that is, or to where another bone (not an ancestor's) comes nearer than the distance
//! travelled. Without it, a box-less leg's lower half is nearer the next leg's stub than its own (wasp2.skel),
//! and a big head on a short neck is nearer the neck than its own stub (CesiumMan). A leaf whose line runs
//! into another joint's pivot on the way (a lower leg into the pivot of an IK foot, which game rigs parent to
//! the root, not to the leg) is a [`SegmentKind::Tail`] instead: it runs on toward that pivot, as the rig's own
//! bone does, until that joint's bone comes nearer than the surface around the line (the limb's radius), and
//! that joint's bone takes over past it as an only child's does. Boxed leaves and bones between joints are
//! never changed.
//!
//! [`Segment::end_distance`] is the distance the weights fall off with: the plain point-to-segment distance,
//! except past a segment's ends, where a short bone seen from far away is given less reach (see there).

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
    /// Pivot to its only child's pivot.
    Child,
    /// Pivot to the pivot of one of several children (a branch: hips, chest).
    Branch,
    /// A leaf's box long axis.
    Box,
    /// A leaf continuing its parent's direction (or a lone root's point).
    Continued,
    /// A leaf running toward the pivot of a joint outside its chain (an IK foot's, for a lower leg), whose bone
    /// takes over there ([`extend_leaves_to_surface`]).
    Tail,
}

/// Each joint's segments, by joint index (empty for a joint without any).
pub fn segments_by_joint(segments: &[Segment]) -> Vec<Vec<Segment>> {
    let mut by_joint: Vec<Vec<Segment>> = Vec::new();
    for s in segments {
        let j = s.joint as usize;
        if by_joint.len() <= j {
            by_joint.resize(j + 1, Vec::new());
        }
        by_joint[j].push(*s);
    }
    by_joint
}

/// The squared distance from `p` to the nearest of `segments` (a bone's plain distance when they are one joint's;
/// infinite for none).
pub fn distance2_to<'a>(segments: impl IntoIterator<Item = &'a Segment>, p: Vec3) -> f32 {
    segments
        .into_iter()
        .map(|s| s.closest(p).1)
        .fold(f32::INFINITY, f32::min)
}

/// The segment nearest `p` (the first of equally near ones), if there is any.
pub fn nearest_segment(segments: &[Segment], p: Vec3) -> Option<&Segment> {
    segments.iter().min_by(|a, b| a.closest(p).1.total_cmp(&b.closest(p).1))
}

impl Segment {
    /// The closest point of the segment to `p`, and the squared distance to it.
    #[inline]
    pub fn closest(&self, p: Vec3) -> (Vec3, f32) {
        let ab = self.b - self.a;
        closest_from(self.a, ab, ab.length_squared(), p)
    }

    pub fn length(&self) -> f32 {
        (self.b - self.a).length()
    }

    /// The distance from `p` that weights fall off with ("end distance"). Beside the segment (its projection
    /// within the ends) it is the plain distance. Past an end, by `beyond` along the segment's direction and
    /// `across` from its line, it is `sqrt(across² + k beyond²)` with `k = max(1, across² / (c L²))` for a
    /// segment of length `L`: the plain distance (`k = 1`) while the point is within `√c L` of the line, and
    /// past that the distance beyond the end counts in units of the bone's length rather than the point's own
    /// distance. With the plain distance, a bone's reach past its end grows with the point's distance from it
    /// (weights blend over `±√3 across` around a joint), so a wide head above a 5 cm neck is split half and half
    /// between neck and head far above the joint. Before a segment's start `c` is 2 ([`BEFORE_START`]: the reach
    /// fades within about `1.6 L`); past the far end of a segment to an only child, where the child's bone takes
    /// over, it is 0.1 ([`PAST_CHILD`]: within about `0.35 L`), and past a branch's, 2 again; past a leaf's far
    /// end, which is the end of its limb, the distance stays plain. Never less than the plain distance,
    /// continuous, and equal to it for zero-length segments.
    #[inline]
    pub fn end_distance(&self, p: Vec3) -> f32 {
        let ab = self.b - self.a;
        end_distance_from(self.a, ab, ab.length_squared(), self.kind.past_end(), p)
    }
}

impl SegmentKind {
    /// Whether another joint's bone takes over at the segment's far end (a child's pivot, or a tail's).
    pub fn to_child(self) -> bool {
        matches!(self, Self::Child | Self::Branch | Self::Tail)
    }

    /// [`Segment::end_distance`]'s `c` past the far end; 0 where the far end does not count (a leaf's).
    pub(crate) fn past_end(self) -> f32 {
        match self {
            Self::Child | Self::Tail => PAST_CHILD,
            Self::Branch => BEFORE_START,
            Self::Box | Self::Continued => 0.0,
        }
    }
}

/// [`Segment::closest`] for the segment from `a` along `ab` (`b - a`), `len2` being `|ab|²`: split out so that
/// a caller that keeps `ab` and `len2` gets the same values without computing them again.
#[inline(always)]
pub(crate) fn closest_from(a: Vec3, ab: Vec3, len2: f32, p: Vec3) -> (Vec3, f32) {
    let t = if len2 > 0.0 {
        ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let q = a + ab * t;
    (q, (p - q).length_squared())
}

/// [`Segment::end_distance`] for the segment from `a` along `ab`, `len2` being `|ab|²`, `past_end` the `c` past
/// its far end ([`SegmentKind::past_end`]; 0 where that end does not count).
#[inline(always)]
pub(crate) fn end_distance_from(a: Vec3, ab: Vec3, len2: f32, past_end: f32, p: Vec3) -> f32 {
    let ap = p - a;
    let t = ap.dot(ab);
    let (_, d2) = closest_from(a, ab, len2, p);
    if len2 <= 0.0 {
        return d2.sqrt();
    }
    // Distances along the segment, in units of its length squared (t / len2 is the parameter).
    let beyond = if t < 0.0 {
        -t
    } else if t > len2 && past_end > 0.0 {
        t - len2
    } else {
        return d2.sqrt();
    };
    // across² = |ap|² - (t / L)²; beyond (in length units) = beyond / L.
    let along2 = t * t / len2;
    let across2 = (ap.length_squared() - along2).max(0.0);
    let c = if t < 0.0 { BEFORE_START } else { past_end };
    let k = across2 / (c * len2);
    if k <= 1.0 {
        return d2.sqrt();
    }
    (across2 + k * beyond * beyond / len2).sqrt()
}

/// [`Segment::end_distance`]'s `c` before a segment's start: the plain distance within `√2 L` of the line.
const BEFORE_START: f32 = 2.0;

/// [`Segment::end_distance`]'s `c` past the far end of a segment to an only child: the plain distance within
/// `0.32 L` of the line, and a reach that fades within about a third of the bone's length past the child's pivot.
/// In a chain, skin past the child's pivot is the child's: with `c = 2` there, a big head over a short neck took
/// neck weight over its whole lower half. A branch (hips, chest: a joint with several children) keeps `c = 2`
/// ([`BEFORE_START`]) past each child's pivot, as artists weight hips around the tops of the thighs. Chosen on the
/// shared models with artist weights: L1 and posed error fell on every human, animal and course model, for both
/// methods; applied to branches too, the Fox's and RiggedFigure's dominant agreement fell by three points.
const PAST_CHILD: f32 = 0.1;

/// How similar two extents may be before a box counts as having no long axis.
const CUBE_TOLERANCE: f32 = 0.05;

/// The bones of `skel` with its joints at `world_from_joint` (the bind pose), in joint order; a joint with
/// several children has several consecutive segments.
pub fn bone_segments(skel: &Skeleton, world_from_joint: &[Mat4]) -> Vec<Segment> {
    bone_segments_along(skel, world_from_joint, bone_axis(skel, world_from_joint))
}

/// [`bone_segments`] with box-less leaves along the rig's bone axis `axis` ([`bone_axis`], found already).
pub fn bone_segments_along(skel: &Skeleton, world_from_joint: &[Mat4], axis: Option<usize>) -> Vec<Segment> {
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
                    kind: if children.len() == 1 {
                        SegmentKind::Child
                    } else {
                        SegmentKind::Branch
                    },
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
            Some(parent) => {
                let along = p - pivot(parent);
                let own = axis.and_then(|k| local_axis(&m, k).try_normalize());
                p + own.map_or(along, |d| d * along.length()) * 0.5
            }
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

/// How closely (cosine) a joint's local axis must point at its only child to count as its bone axis.
const AXIS_ALIGNED: f32 = 0.98;

/// The share of the joints with one child whose bone axis must be the same local axis for the rig to have one.
const AXIS_SHARE: f32 = 0.8;

/// The rig's bone axis, if it has one: the local axis (0 to 5: +x, -x, +y, -y, +z, -z of the joints' bind-pose
/// matrices) that points at the only child (within about 11 degrees) for at least four in five of the joints
/// with one child (and at least three of them). Blender points every bone along its joint's local +y, and glTF
/// keeps the joints' frames, so its rigs have one (the quaternius characters: all of their joints; the Fox: +x,
/// 14 of 15); CesiumMan's joints (3 of 12 on any one axis) and the course wasp's (6 of 10) have none. A box-less
/// leaf then points along it, as its modeller drew it, and not along its parent (docs/binding.md has the
/// figures: Wolf 0.401 to 0.312 L1, Trex 0.382 to 0.345).
pub fn bone_axis(skel: &Skeleton, world_from_joint: &[Mat4]) -> Option<usize> {
    let pivot = |j: usize| world_from_joint.get(j).map(|m| m.w_axis.truncate());
    let mut counts = [0usize; 6];
    let mut joints = 0usize;
    for j in 0..skel.len() {
        let &[child] = skel.children(j) else {
            continue;
        };
        let (Some(m), Some(a), Some(b)) = (world_from_joint.get(j), pivot(j), pivot(child)) else {
            continue;
        };
        let Some(d) = (b - a).try_normalize() else {
            continue;
        };
        joints += 1;
        for (k, c) in counts.iter_mut().enumerate() {
            if local_axis(m, k).normalize_or_zero().dot(d) > AXIS_ALIGNED {
                *c += 1;
            }
        }
    }
    let (k, &n) = counts
        .iter()
        .enumerate()
        .max_by_key(|&(k, n)| (*n, std::cmp::Reverse(k)))?;
    (joints >= 3 && n as f32 >= AXIS_SHARE * joints as f32).then_some(k)
}

/// The name of local axis `k` (see [`bone_axis`]): `+x`, `-x`, `+y`, `-y`, `+z` or `-z`.
pub fn axis_name(k: usize) -> &'static str {
    ["+x", "-x", "+y", "-y", "+z", "-z"].get(k).copied().unwrap_or("?")
}

/// Local axis `k` (+x, -x, +y, -y, +z, -z) of joint matrix `m`, in world space.
fn local_axis(m: &Mat4, k: usize) -> Vec3 {
    let a = match k / 2 {
        0 => m.x_axis,
        1 => m.y_axis,
        _ => m.z_axis,
    }
    .truncate();
    if k % 2 == 0 { a } else { -a }
}

/// Extend every [`SegmentKind::Continued`] leaf whose pivot is inside the mesh along its direction to 90% of
/// the distance at which it meets the surface. Returns, per segment, whether it was extended.
/// `ray_cast(origin, dir, t_max)` gives the distance (in units of `dir`) to the nearest surface hit; `inside(p)`
/// whether `p` lies inside the mesh. From a pivot inside, the first hit is where the leaf's own limb ends, however
/// far (a head is several times as tall as the neck it continues); a pivot outside (a tip joint past the end of
/// a finger) could only meet some other part, so such a leaf stays as it is.
pub fn extend_leaves_to_surface(
    segments: &mut [Segment],
    ray_cast: impl Fn(Vec3, Vec3, f32) -> Option<f32>,
    inside: impl Fn(Vec3) -> bool,
    stops: impl Fn(u16, u16) -> bool,
) -> Vec<bool> {
    let others: Vec<Segment> = segments.to_vec();
    let mut extended = vec![false; segments.len()];
    for (s, done) in segments
        .iter_mut()
        .zip(extended.iter_mut())
        .filter(|(s, _)| s.kind == SegmentKind::Continued)
    {
        let Some(dir) = (s.b - s.a).try_normalize() else {
            continue;
        };
        if !inside(s.a) {
            continue;
        }
        if let Some(t) = ray_cast(s.a, dir, f32::INFINITY) {
            if let Some((along, tail)) = tail_pivot(s, dir, t, &others, &stops) {
                s.b = s.a + dir * toward_tail(s.a, dir, along, tail, &others, &ray_cast);
                s.kind = SegmentKind::Tail;
                *done = true;
                continue;
            }
            let mut reach = 0.9 * t;
            // Stop where another bone comes nearer than the distance travelled: past there the ray runs through
            // that bone's flesh, not this leaf's (a frog's torso, continuing its hips forward, ran on under the
            // head to the snout). Not the leaf's ancestors', nor any that meets its pivot (the parent's ends
            // there).
            for i in 1..=STOP_STEPS {
                let u = reach * i as f32 / STOP_STEPS as f32;
                let q = s.a + dir * u;
                let nearer = others
                    .iter()
                    .filter(|o| o.joint != s.joint && o.a != s.a && o.b != s.a && stops(s.joint, o.joint))
                    .any(|o| o.closest(q).1 < u * u);
                if nearer {
                    reach = u;
                    break;
                }
            }
            s.b = s.a + dir * reach;
            *done = true;
        }
    }
    extended
}

/// Samples along an extended leaf at which other bones are looked for.
const STOP_STEPS: usize = 32;

/// How far from a leaf's line (a share of the distance along it) another joint's pivot may lie to count as the
/// leaf's tail.
const TAIL_ALIGNED: f32 = 0.05;

/// Rays around a leaf's line that measure the limb's radius at a point.
const RADIUS_RAYS: usize = 8;

/// The nearest pivot of another joint (not one `stops` refuses: an ancestor's, or a control's) that lies on the
/// line of `leaf` (direction `dir`) before the surface `t` away: its distance along the line, and its joint.
fn tail_pivot(
    leaf: &Segment,
    dir: Vec3,
    t: f32,
    others: &[Segment],
    stops: &impl Fn(u16, u16) -> bool,
) -> Option<(f32, u16)> {
    others
        .iter()
        // Every segment but a box's starts at its joint's pivot.
        .filter(|o| o.joint != leaf.joint && o.kind != SegmentKind::Box && stops(leaf.joint, o.joint))
        .filter_map(|o| {
            let along = (o.a - leaf.a).dot(dir);
            let across = (o.a - leaf.a - dir * along).length();
            (along > 0.0 && along <= t && across <= TAIL_ALIGNED * along).then_some((along, o.joint))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
}

/// How far a leaf from `a` along `dir` runs toward the pivot of joint `tail`, `along` away: to where `tail`'s bone
/// comes nearer than the surface around the line (the least distance to a hit of [`RADIUS_RAYS`] rays square to
/// it), else all the way. A human's shin runs to its ankle; a foot bone that starts at the ground under a thick
/// heel takes the heel.
fn toward_tail(
    a: Vec3,
    dir: Vec3,
    along: f32,
    tail: u16,
    others: &[Segment],
    ray_cast: &impl Fn(Vec3, Vec3, f32) -> Option<f32>,
) -> f32 {
    let (e1, e2) = dir.any_orthonormal_pair();
    let radius = |q: Vec3| {
        (0..RADIUS_RAYS)
            .map(|k| {
                let angle = k as f32 * std::f32::consts::TAU / RADIUS_RAYS as f32;
                ray_cast(q, e1 * angle.cos() + e2 * angle.sin(), f32::INFINITY).unwrap_or(f32::INFINITY)
            })
            .fold(f32::INFINITY, f32::min)
    };
    (1..=STOP_STEPS)
        .map(|i| along * i as f32 / STOP_STEPS as f32)
        .find(|&u| {
            let q = a + dir * u;
            distance2_to(others.iter().filter(|o| o.joint == tail), q).sqrt() < radius(q)
        })
        .unwrap_or(along)
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
                seg(0, v(0.0, 0.0, 0.0), v(0.0, -1.0, 0.0), SegmentKind::Branch),
                seg(0, v(0.0, 0.0, 0.0), v(0.0, 2.0, 0.0), SegmentKind::Branch),
                seg(0, v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), SegmentKind::Branch),
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
    fn end_distance_is_plain_beside_and_near_a_bone_and_longer_past_its_ends_most_past_a_child() {
        let seg = |kind| Segment {
            joint: 0,
            a: Vec3::ZERO,
            b: Vec3::Y,
            kind,
        };
        let s = seg(SegmentKind::Child);
        let plain = |p: Vec3| s.closest(p).1.sqrt();
        // Beside the segment, before the start within √2 lengths of its line, and past the far end within √0.1:
        // the plain distance, exactly.
        for p in [
            Vec3::new(3.0, 0.5, 0.0),
            Vec3::new(0.3, 1.5, 0.0),
            Vec3::new(0.0, -2.0, 1.4),
        ] {
            assert_eq!(s.end_distance(p), plain(p), "{p}");
        }
        // Before the start, 3 lengths from the line and 1 before it: k = 9 / 2, sqrt(9 + 4.5), for every kind.
        let p = Vec3::new(0.0, -1.0, 3.0);
        for kind in [SegmentKind::Child, SegmentKind::Box, SegmentKind::Continued] {
            assert!((seg(kind).end_distance(p) - 13.5f32.sqrt()).abs() < 1e-5);
            assert!(seg(kind).end_distance(p) > plain(p));
        }
        // Past the far end at a child, 3 lengths from the line and 1 past it: k = 9 / 0.1, sqrt(9 + 90); past a
        // leaf's far end, plain.
        let p = Vec3::new(3.0, 2.0, 0.0);
        assert!((s.end_distance(p) - 99f32.sqrt()).abs() < 1e-4);
        // Past the far end at one of several children (a branch): as before a start, k = 9 / 2.
        assert!((seg(SegmentKind::Branch).end_distance(p) - 13.5f32.sqrt()).abs() < 1e-5);
        assert_eq!(
            seg(SegmentKind::Box).end_distance(p),
            seg(SegmentKind::Box).closest(p).1.sqrt()
        );
        // Continuous across the ends' planes and across k = 1 on both sides.
        let d = |x: f32, y: f32| s.end_distance(Vec3::new(x, y, 0.0));
        assert!((d(3.0, 1.0 + 1e-4) - d(3.0, 1.0 - 1e-4)).abs() < 1e-3);
        assert!((d(3.0, 1e-4) - d(3.0, -1e-4)).abs() < 1e-3);
        let r = 2f32.sqrt();
        assert!((d(r + 1e-4, -0.5) - d(r - 1e-4, -0.5)).abs() < 1e-3);
        let r = 0.1f32.sqrt();
        assert!((d(r + 1e-4, 1.5) - d(r - 1e-4, 1.5)).abs() < 1e-3);
        // A point segment: the distance to the point.
        let dot = Segment { b: Vec3::ZERO, ..s };
        assert_eq!(dot.end_distance(Vec3::new(3.0, 4.0, 0.0)), 5.0);
    }

    #[test]
    fn leaves_reach_the_surface_only_from_inside() {
        let mut segs = vec![
            Segment {
                joint: 0,
                a: Vec3::ZERO,
                b: Vec3::Y,
                kind: SegmentKind::Continued,
            },
            Segment {
                joint: 1,
                a: Vec3::X,
                b: Vec3::new(1.0, 1.0, 0.0),
                kind: SegmentKind::Continued,
            },
        ];
        // The surface is 20 lengths away (past the old limit of eight); only the first pivot is inside. Told
        // that the second bone does not stop it (an ancestor's, or one that does not deform), the first runs to
        // 90% of the way.
        let before = segs.clone();
        let n = extend_leaves_to_surface(&mut segs, |_, _, _| Some(20.0), |p| p == Vec3::ZERO, |_, _| false);
        assert_eq!(n, [true, false]);
        assert_eq!(segs[0].b, Vec3::new(0.0, 18.0, 0.0));
        assert_eq!(segs[1].b, Vec3::new(1.0, 1.0, 0.0));
        // Otherwise it stops at the first of 32 steps (of 18 / 32) where the second bone, at x = 1 up to y = 1,
        // is nearer than the distance travelled: the second step, 1.125 up, 1.008 from (1, 1, 0).
        let mut segs = before;
        extend_leaves_to_surface(&mut segs, |_, _, _| Some(20.0), |p| p == Vec3::ZERO, |_, _| true);
        assert_eq!(segs[0].b, Vec3::new(0.0, 1.125, 0.0));
    }

    /// The exit distance from a point inside an upright cylinder of radius `r` (axis the y axis) with its floor at
    /// y = 0, along `d`.
    fn cylinder_exit(r: f32) -> impl Fn(Vec3, Vec3, f32) -> Option<f32> {
        move |o: Vec3, d: Vec3, _| {
            let (a, b, c) = (
                d.x * d.x + d.z * d.z,
                o.x * d.x + o.z * d.z,
                o.x * o.x + o.z * o.z - r * r,
            );
            let side = (a > 0.0).then(|| (-b + (b * b - a * c).max(0.0).sqrt()) / a);
            let floor = (d.y < 0.0).then(|| -o.y / d.y);
            match (side, floor) {
                (Some(s), Some(f)) => Some(s.min(f)),
                (s, f) => s.or(f),
            }
        }
    }

    #[test]
    fn a_leaf_runs_to_an_ik_foot_until_the_foot_comes_within_the_limbs_radius() {
        // A shin from the knee at y = 1 down a leg of radius 0.1, and a foot (parented elsewhere, as an IK foot
        // is) whose pivot is the ankle at y = 0.02 and whose bone runs forward along +z.
        let shin = Segment {
            joint: 0,
            a: Vec3::Y,
            b: Vec3::new(0.0, 0.5, 0.0),
            kind: SegmentKind::Continued,
        };
        let foot = Segment {
            joint: 1,
            a: Vec3::new(0.0, 0.02, 0.0),
            b: Vec3::new(0.0, 0.02, 0.3),
            kind: SegmentKind::Continued,
        };
        let mut segs = vec![shin, foot];
        let extended = extend_leaves_to_surface(&mut segs, cylinder_exit(0.1), |p| p.y > 0.0, |_, _| true);
        assert_eq!(extended, [true, true]);
        // 32 steps of 0.98 / 32 toward the ankle; the foot comes within the radius (0.1) at the first step below
        // y = 0.12: the 29th, at y = 1 - 29 x 0.98 / 32 = 0.111875 (0.0919 above the foot's bone).
        assert_eq!(segs[0].kind, SegmentKind::Tail);
        assert!(
            (segs[0].b.y - (1.0 - 29.0 * 0.98 / 32.0)).abs() < 1e-5,
            "{:?}",
            segs[0].b
        );
        assert_eq!(segs[0].kind.past_end(), PAST_CHILD);
        // With the foot's pivot off its line, the leaf is an ordinary continued one.
        let mut segs = vec![
            shin,
            Segment {
                a: Vec3::new(0.5, 0.02, 0.0),
                b: Vec3::new(0.5, 0.02, 0.3),
                ..foot
            },
        ];
        extend_leaves_to_surface(&mut segs, cylinder_exit(0.1), |p| p.y > 0.0, |_, _| true);
        assert_eq!(segs[0].kind, SegmentKind::Continued);
        // A foot that may not stop the leaf (an ancestor's) is not its tail either.
        let mut segs = vec![shin, foot];
        extend_leaves_to_surface(&mut segs, cylinder_exit(0.1), |p| p.y > 0.0, |_, _| false);
        assert_eq!(segs[0].kind, SegmentKind::Continued);
        assert!((segs[0].b.y - 0.1).abs() < 1e-5, "{:?}", segs[0].b);
    }

    #[test]
    fn a_box_less_leaf_points_along_the_rigs_bone_axis_when_it_has_one() {
        use crate::model::Joint;
        use glam::Quat;
        // A chain up, then a turn to +x, then a leaf: 0 -> 1 -> 2 -> 3.
        let skel = Skeleton::new(vec![
            Joint::new("hips", None, Vec3::ZERO),
            Joint::new("spine", Some(0), Vec3::Y),
            Joint::new("chest", Some(1), Vec3::Y),
            Joint::new("head", Some(2), Vec3::X),
        ])
        .unwrap();
        let at = |r: Quat, p: Vec3| Mat4::from_rotation_translation(r, p);
        let y_to_x = Quat::from_rotation_z(-std::f32::consts::FRAC_PI_2);
        let y_to_z = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
        // Every joint's local +y points at its child (a Blender rig); the leaf's own +y points along +z.
        let blender = [
            at(Quat::IDENTITY, Vec3::ZERO),
            at(Quat::IDENTITY, Vec3::Y),
            at(y_to_x, Vec3::new(0.0, 2.0, 0.0)),
            at(y_to_z, Vec3::new(1.0, 2.0, 0.0)),
        ];
        assert_eq!(bone_axis(&skel, &blender).map(axis_name), Some("+y"));
        let leaf = bone_segments(&skel, &blender)[3];
        assert!((leaf.b - Vec3::new(1.0, 2.0, 0.5)).length() < 1e-6, "{leaf:?}");
        // Unrotated frames: +y points at the child for two of three joints, under four in five, so there is no
        // bone axis and the leaf continues its parent's direction, half its length.
        let plain = [
            at(Quat::IDENTITY, Vec3::ZERO),
            at(Quat::IDENTITY, Vec3::Y),
            at(Quat::IDENTITY, Vec3::new(0.0, 2.0, 0.0)),
            at(y_to_z, Vec3::new(1.0, 2.0, 0.0)),
        ];
        assert_eq!(bone_axis(&skel, &plain), None);
        let leaf = bone_segments(&skel, &plain)[3];
        assert!((leaf.b - Vec3::new(1.5, 2.0, 0.0)).length() < 1e-6, "{leaf:?}");
        // Too few joints with one child to tell.
        assert_eq!(bone_axis(&skel, &blender[..2]), None);
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
