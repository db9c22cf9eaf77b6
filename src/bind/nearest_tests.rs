//! Tests of the nearest-bone search ([`super`]).

use super::*;
use crate::bind::bones::SegmentKind;

struct Rng(u64);
impl Rng {
    fn f(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
    fn v(&mut self, scale: f32) -> Vec3 {
        Vec3::new(self.f() - 0.5, self.f() - 0.5, self.f() - 0.5) * scale
    }
}

#[test]
fn prepared_segments_give_the_segment_distances_bit_for_bit() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for round in 0..2000 {
        let a = rng.v(4.0);
        // Zero-length, short and long segments of every kind; points beside, past both ends and on them.
        let b = if round % 7 == 0 {
            a
        } else {
            a + rng.v([0.01, 1.0, 6.0][round % 3])
        };
        let kind = [
            SegmentKind::Child,
            SegmentKind::Branch,
            SegmentKind::Box,
            SegmentKind::Continued,
        ][round % 4];
        let s = Segment { joint: 0, a, b, kind };
        let prepared = Prepared::new(&s);
        for p in [
            rng.v(8.0),
            a,
            b,
            a + (b - a) * 1.5 + rng.v(0.5),
            a - (b - a) * 3.0 + rng.v(0.1),
        ] {
            let (q, d2) = s.closest(p);
            let (pq, pd2) = prepared.closest(p);
            assert_eq!(
                (q.to_array().map(f32::to_bits), d2.to_bits()),
                (pq.to_array().map(f32::to_bits), pd2.to_bits())
            );
            assert_eq!(
                s.end_distance(p).to_bits(),
                prepared.end_distance(p).to_bits(),
                "{s:?} {p}"
            );
        }
    }
}

#[test]
fn tree_query_equals_brute_force_on_random_skeletons() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..60 {
        let joints = 1 + (round % 40);
        let mut segs = Vec::new();
        for j in 0..joints {
            // Some joints with several segments, some degenerate, lengths over two orders of magnitude.
            let a = rng.v(4.0);
            for _ in 0..(1 + j % 3) {
                let len = if rng.f() < 0.1 { 0.0 } else { 0.02 + 2.0 * rng.f() };
                segs.push(Segment {
                    joint: j as u16,
                    a,
                    b: a + rng.v(1.0).normalize_or_zero() * len,
                    kind: SegmentKind::Child,
                });
            }
        }
        let index = BoneIndex::new(&segs);
        let (mut s1, mut s2) = (Scratch::default(), Scratch::default());
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        for _ in 0..400 {
            let p = rng.v(6.0);
            let ratio = 1.0 + 3.0 * rng.f();
            index.near_bones(p, ratio, &mut s1, &mut fast);
            near_bones_naive(p, &segs, ratio, &mut s2, &mut slow);
            assert_eq!(fast, slow, "round {round}, p {p}, ratio {ratio}");
            assert!(!fast.is_empty());
        }
    }
}

#[test]
fn nearest_distances_equal_the_single_query_bit_for_bit() {
    let mut rng = Rng(0x51ED_2701);
    for round in 0..12 {
        let segs: Vec<Segment> = (0..(3 + round * 5))
            .map(|j| {
                let a = rng.v(4.0);
                Segment {
                    joint: j as u16,
                    a,
                    b: a + rng.v(2.0),
                    kind: SegmentKind::Child,
                }
            })
            .collect();
        let index = BoneIndex::new(&segs);
        // Clustered and scattered points, and points that are not finite.
        let mut points: Vec<Vec3> = (0..3000).map(|k| rng.v(if k % 3 == 0 { 10.0 } else { 3.0 })).collect();
        points[17] = Vec3::new(f32::NAN, 0.0, 0.0);
        points[1000] = Vec3::splat(f32::INFINITY);
        let fast = index.nearest_distances(&points);
        let (mut scratch, mut near) = (Scratch::default(), Vec::new());
        for (p, d) in points.iter().zip(&fast) {
            index.near_bones(*p, 1.0, &mut scratch, &mut near);
            let single = near.first().map_or(f32::INFINITY, |c| c.dist);
            assert_eq!(d.to_bits(), single.to_bits(), "round {round}, p {p}");
        }
    }
    assert!(BoneIndex::new(&[]).nearest_distances(&[Vec3::ZERO]) == [f32::INFINITY]);
}

#[test]
fn cell_batched_query_equals_brute_force() {
    let mut rng = Rng(0xDEAD_BEEF);
    for round in 0..20 {
        let segs: Vec<Segment> = (0..(5 + round * 3))
            .map(|j| {
                let a = rng.v(4.0);
                Segment {
                    joint: (j / 2) as u16,
                    a,
                    b: a + rng.v(1.5),
                    kind: SegmentKind::Child,
                }
            })
            .collect();
        let index = BoneIndex::new(&segs);
        let points: Vec<Vec3> = (0..3000)
            .map(|_| rng.v(if round % 2 == 0 { 6.0 } else { 1.0 }))
            .collect();
        let grid = CellGrid::new(&points, 64);
        assert_eq!(grid.order.len(), points.len());
        let (mut s1, mut s2) = (Scratch::default(), Scratch::default());
        let (mut fast, mut slow, mut among) = (Vec::new(), Vec::new(), Vec::new());
        let ratio = 1.0 + 2.0 * rng.f();
        for c in 0..grid.cells() {
            let cell = grid.cell(c);
            index.cell_segments(cell.iter().map(|&i| points[i as usize]), ratio, &mut among);
            for &i in cell {
                let p = points[i as usize];
                near_bones_among(p, &segs, &among, ratio, &mut s1, &mut fast);
                near_bones_naive(p, &segs, ratio, &mut s2, &mut slow);
                assert_eq!(fast, slow, "round {round}, point {i}");
                // The index's one-pass version (each joint's segments are consecutive here).
                index.near_bones_among(p, &among, ratio, &mut s1, &mut fast);
                assert_eq!(fast, slow, "one pass: round {round}, point {i}");
            }
            // The list narrowed for a few points at a time (as binding does for consecutive vertices).
            let (mut narrow, mut dists) = (Vec::new(), Vec::new());
            for group in cell.chunks(1 + round % 17) {
                let pts: Vec<Vec3> = group.iter().map(|&i| points[i as usize]).collect();
                index.narrow_segments(&pts, ratio, &among, &mut dists, &mut narrow);
                assert!(narrow.len() <= among.len());
                for &p in &pts {
                    near_bones_naive(p, &segs, ratio, &mut s2, &mut slow);
                    index.near_bones_among(p, &narrow, ratio, &mut s1, &mut fast);
                    assert_eq!(fast, slow, "narrowed: round {round}, point {p}");
                }
            }
        }
    }
}

#[test]
fn one_pass_near_bones_equal_brute_force_grouped_or_not() {
    let mut rng = Rng(0x5EED);
    for round in 0..30 {
        // Joints' segments consecutive (grouped) in even rounds, interleaved in odd ones.
        let n = 6 + round;
        let segs: Vec<Segment> = (0..n)
            .map(|i| {
                let a = rng.v(3.0);
                Segment {
                    joint: if round % 2 == 0 { (i / 3) as u16 } else { (i % 4) as u16 },
                    a,
                    b: a + rng.v(1.0),
                    kind: SegmentKind::Child,
                }
            })
            .collect();
        let index = BoneIndex::new(&segs);
        assert_eq!(index.grouped, round % 2 == 0 || n <= 4);
        let all: Vec<u32> = (0..n as u32).collect();
        let mut reversed = all.clone();
        reversed.reverse();
        let (mut s1, mut s2) = (Scratch::default(), Scratch::default());
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        for _ in 0..200 {
            let p = rng.v(4.0);
            let ratio = 1.0 + 2.0 * rng.f();
            near_bones_naive(p, &segs, ratio, &mut s2, &mut slow);
            for among in [&all, &reversed] {
                index.near_bones_among(p, among, ratio, &mut s1, &mut fast);
                assert_eq!(fast, slow, "round {round}");
            }
        }
    }
}

#[test]
fn one_pass_near_bones_treat_a_nan_distance_as_the_general_path_does() {
    let seg = |joint, a: Vec3, b: Vec3| Segment {
        joint,
        a,
        b,
        kind: SegmentKind::Child,
    };
    let nan = Vec3::splat(f32::NAN);
    for segs in [
        vec![
            seg(0, Vec3::X, Vec3::Y),
            seg(0, nan, nan),
            seg(1, Vec3::Z * 2.0, Vec3::Z * 3.0),
        ],
        vec![
            seg(0, nan, nan),
            seg(0, Vec3::X, Vec3::Y),
            seg(1, Vec3::Z * 2.0, Vec3::Z * 3.0),
        ],
    ] {
        let index = BoneIndex::new(&segs);
        let (mut s1, mut s2) = (Scratch::default(), Scratch::default());
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        near_bones_naive(Vec3::ZERO, &segs, 4.0, &mut s2, &mut slow);
        index.near_bones_among(Vec3::ZERO, &[0, 1, 2], 4.0, &mut s1, &mut fast);
        assert_eq!(fast, slow);
    }
}

#[test]
fn within_finds_exactly_the_bones_in_range() {
    let mut rng = Rng(7);
    let segs: Vec<Segment> = (0..30)
        .map(|j| {
            let a = rng.v(3.0);
            Segment {
                joint: j,
                a,
                b: a + rng.v(1.0),
                kind: SegmentKind::Child,
            }
        })
        .collect();
    let index = BoneIndex::new(&segs);
    let (mut s1, mut s2) = (Scratch::default(), Scratch::default());
    let (mut got, mut all) = (Vec::new(), Vec::new());
    for _ in 0..500 {
        let p = rng.v(4.0);
        let r = rng.f();
        index.within(p, r, &mut s1, &mut got);
        near_bones_naive(p, &segs, f32::INFINITY, &mut s2, &mut all);
        let want: Vec<_> = all.iter().copied().filter(|c| c.dist <= r).collect();
        assert_eq!(got, want);
    }
}
