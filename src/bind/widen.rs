//! A head on a short neck starts where the neck widens into it. On the quaternius humans the neck's bone (0.195
//! long) runs 60% of its length inside the head, and the artists start the head where the mesh widens from the
//! neck into it (38 to 40% up the neck's bone); bone distances alone split that lower face half and half between
//! neck and head. So where a box-less leaf, extended to the surface ([`super::bones::extend_leaves_to_surface`]),
//! is at least [`LEAF_TO_PARENT`] times as long as its parent's bone (an only child's), and the mesh around those
//! two bones widens along the parent's bone to [`WIDENING`] times its narrowest within the bone's first
//! [`WITHIN`] of its length, the parent's bone ends, and the leaf's begins, at the widening. The cross-section is
//! measured in slabs a tenth of the parent's bone thick, as the 90th percentile of the distance from the bone's
//! line of the vertices whose nearest bone is one of the two (so an arm or a shoulder beside the neck does not
//! count). CesiumMan's neck widens at 70% of its bone and its artist starts the head past the bone's end, so it
//! is left as it is; feet and hands are short leaves and are never moved.

use glam::Vec3;

use super::bones::{Segment, SegmentKind};

/// How many times its parent's bone a leaf must be long to count as a head on a neck.
pub const LEAF_TO_PARENT: f32 = 2.0;

/// How many times its narrowest the cross-section must grow to count as the start of the head.
pub const WIDENING: f32 = 1.6;

/// The share of the parent's bone, from its start, within which the widening must begin.
pub const WITHIN: f32 = 0.5;

/// Slabs at every tenth of the parent's bone, from its start to its end.
const SLABS: usize = 11;

/// The fewest vertices a slab needs to be measured.
const MIN_SLAB_VERTICES: usize = 3;

/// Vertices farther than this many parent lengths from the bone's line are not counted.
const RADIUS_CAP: f32 = 4.0;

/// Move the start of each head (see the module doc) among `segments` (every bone, in the bind pose) to where
/// the mesh widens; `extended[i]` says whether segment `i` is a leaf that was extended to the surface. Returns
/// how many leaves moved.
pub fn start_heads_where_the_neck_widens(segments: &mut [Segment], positions: &[Vec3], extended: &[bool]) -> usize {
    let bones: Vec<Segment> = segments.to_vec();
    let mut moved = 0;
    for (li, leaf) in bones.iter().enumerate() {
        if leaf.kind != SegmentKind::Continued || !extended.get(li).copied().unwrap_or(false) {
            continue;
        }
        // The parent's bone: the one segment to an only child that ends at the leaf's pivot.
        let mut to_leaf = bones
            .iter()
            .enumerate()
            .filter(|(_, s)| s.kind == SegmentKind::Child && s.b == leaf.a);
        let (Some((pi, parent)), None) = (to_leaf.next(), to_leaf.next()) else {
            continue;
        };
        if leaf.length() < LEAF_TO_PARENT * parent.length() {
            continue;
        }
        if let Some(t) = widening(parent, leaf.joint, &bones, positions) {
            let q = parent.a + (parent.b - parent.a) * t;
            segments[pi].b = q;
            segments[li].a = q;
            moved += 1;
        }
    }
    moved
}

/// Where along `parent` (a share of its length) the mesh around it and bone `leaf` first widens to
/// [`WIDENING`] times its narrowest, within [`WITHIN`] of its length; `None` where it does not.
fn widening(parent: &Segment, leaf: u16, bones: &[Segment], positions: &[Vec3]) -> Option<f32> {
    let ab = parent.b - parent.a;
    let len = ab.length();
    let axis = ab.try_normalize()?;
    let mut slabs: Vec<Vec<f32>> = vec![Vec::new(); SLABS];
    for &p in positions {
        let d = p - parent.a;
        let along = d.dot(axis);
        let k = (along / len * 10.0).round();
        let radius = (d - axis * along).length();
        if !(0.0..SLABS as f32).contains(&k) || radius > RADIUS_CAP * len {
            continue;
        }
        let nearest = super::bones::nearest_segment(bones, p).map(|s| s.joint);
        if nearest == Some(parent.joint) || nearest == Some(leaf) {
            slabs[k as usize].push(radius);
        }
    }
    let width: Vec<Option<f32>> = slabs
        .into_iter()
        .map(|mut r| {
            (r.len() >= MIN_SLAB_VERTICES).then(|| {
                r.sort_by(f32::total_cmp);
                r[(r.len() - 1) * 9 / 10]
            })
        })
        .collect();
    let last = ((WITHIN * 10.0).round() as usize).min(SLABS - 1);
    let (narrowest, least) = (0..=last)
        .filter_map(|k| width[k].map(|w| (k, w)))
        .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))?;
    let k = (narrowest + 1..=last).find(|&k| width[k].is_some_and(|w| w >= WIDENING * least))?;
    // The border between the last narrow slab and the first wide one.
    Some((k as f32 - 0.5) / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points on the sides of an upright box, `n` per unit.
    fn box_sides(half: f32, y0: f32, y1: f32, n: usize) -> Vec<Vec3> {
        let mut out = Vec::new();
        let steps_y = ((y1 - y0) * n as f32).round() as usize;
        let steps_x = (2.0 * half * n as f32).round() as usize;
        for i in 0..=steps_y {
            let y = y0 + (y1 - y0) * i as f32 / steps_y as f32;
            for j in 0..=steps_x {
                let x = -half + 2.0 * half * j as f32 / steps_x as f32;
                for p in [(x, -half), (x, half), (-half, x), (half, x)] {
                    out.push(Vec3::new(p.0, y, p.1));
                }
            }
        }
        out
    }

    fn neck_and_head() -> Vec<Segment> {
        let seg = |joint, a: f32, b: f32, kind| Segment {
            joint,
            a: Vec3::new(0.0, a, 0.0),
            b: Vec3::new(0.0, b, 0.0),
            kind,
        };
        vec![
            seg(0, -0.5, 0.2, SegmentKind::Child),
            seg(1, 0.2, 0.5, SegmentKind::Child),
            seg(2, 0.5, 1.4, SegmentKind::Continued),
        ]
    }

    #[test]
    fn a_head_starts_where_a_short_neck_widens_into_it() {
        // A neck column 0.2 wide from the chest up to y = 0.3, a head 0.6 wide from 0.31 to 1.5; the neck's bone
        // runs from 0.2 to 0.5, the head's (extended) from 0.5 to 1.4.
        let mut positions = box_sides(0.1, -0.5, 0.3, 40);
        positions.extend(box_sides(0.3, 0.31, 1.5, 40));
        let mut segments = neck_and_head();
        let extended = [false, false, true];
        assert_eq!(
            start_heads_where_the_neck_widens(&mut segments, &positions, &extended),
            1
        );
        // The slab at t 0.3 (y 0.275 to 0.305) is the neck's, the one at 0.4 the head's: the border is between.
        let border = 0.2 + 0.3 * 0.35;
        assert!((segments[1].b.y - border).abs() < 1e-5, "{:?}", segments[1]);
        assert_eq!(segments[2].a, segments[1].b);
        assert_eq!(segments[2].b, Vec3::new(0.0, 1.4, 0.0));
        assert_eq!(segments[0], neck_and_head()[0]);
    }

    #[test]
    fn an_even_neck_a_late_widening_a_short_leaf_or_an_unextended_leaf_stay_as_they_are() {
        let column = box_sides(0.1, -0.5, 1.5, 40);
        let mut late = box_sides(0.1, -0.5, 0.4, 40);
        late.extend(box_sides(0.3, 0.41, 1.5, 40));
        let mut early = box_sides(0.1, -0.5, 0.3, 40);
        early.extend(box_sides(0.3, 0.31, 1.5, 40));
        let short = {
            let mut s = neck_and_head();
            s[2].b = Vec3::new(0.0, 0.9, 0.0);
            s
        };
        for (positions, segments, extended, what) in [
            (&column, neck_and_head(), [false, false, true], "an even neck"),
            (
                &late,
                neck_and_head(),
                [false, false, true],
                "a widening past the neck's middle",
            ),
            (&early, short, [false, false, true], "a leaf under twice the neck"),
            (&early, neck_and_head(), [false, false, false], "a leaf not extended"),
        ] {
            let mut moved = segments.clone();
            assert_eq!(
                start_heads_where_the_neck_widens(&mut moved, positions, &extended),
                0,
                "{what}"
            );
            assert_eq!(moved, segments, "{what}");
        }
    }
}
