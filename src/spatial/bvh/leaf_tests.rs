//! Tests of the leaf tests ([`super`]).

use super::*;
use crate::spatial::bvh::test_support::Rng;

/// The leaf tests (four lanes, two of them for eight, and eight AVX lanes where the processor has AVX) answer
/// as `Tri::intersect` for every lane, bit for bit: on random triangles and segments, and on small-integer ones
/// whose lines pass exactly through corners and along edges (where `u`, `v` or `u + v` land on 0 or 1 and `t`
/// on the range's ends), with leaves of one to eight triangles, degenerate triangles and directions along the
/// axes. A test that computed any product or sum in another order, or skipped the determinant's check,
/// disagrees somewhere here.
#[test]
fn leaf_tests_answer_as_the_scalar_test() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut small = |n: usize| rng.below(2 * n + 1) as f32 - n as f32;
    let (mut checked, mut crossed, mut borderline) = (0, 0, 0);
    for round in 0..40_000 {
        let exact = round % 2 == 0;
        let mut point = |scale: f32| {
            if exact {
                Vec3::new(small(2), small(2), small(2))
            } else {
                Vec3::new(small(1000), small(1000), small(1000)) * (scale / 1000.0)
            }
        };
        let count = 1 + round % 8;
        let tris: Vec<Tri> = (0..count)
            .map(|l| {
                let idx = [3 * l as u32, 3 * l as u32 + 1, 3 * l as u32 + 2];
                let corners = [point(1.0), point(1.0), point(1.0)];
                if round % 97 == 0 && l == 0 {
                    Tri::never(idx)
                } else {
                    Tri::new(corners, idx).unwrap_or(Tri::never(idx))
                }
            })
            .collect();
        let origin = point(2.0);
        let mut dir = point(3.0);
        if round % 5 == 1 {
            dir = Vec3::ZERO.with_x(dir.x);
        }
        // Sometimes aim at a corner or an edge's midpoint of the first triangle.
        if round % 3 == 2 && tris[0].hittable() {
            let target = if round % 2 == 0 {
                tris[0].b
            } else {
                (tris[0].a + tris[0].c) * 0.5
            };
            dir = target - origin;
        }
        let (lo, hi) = if round % 4 == 3 { (0.0, 1.0) } else { (-1.0, 0.5) };
        let got = TwoLeaf4::load(&tris).crossed(origin, dir, lo, hi);
        if count <= 4 {
            let four = Leaf4::load(&tris).crossed(origin, dir, Vec4::splat(lo), Vec4::splat(hi));
            assert_eq!(four, got, "round {round}");
        }
        for (l, tri) in tris.iter().enumerate() {
            let hit = tri.intersect(origin, dir);
            let want = hit.is_some_and(|(t, _, _)| t > lo && t < hi);
            assert_eq!(
                got >> l & 1 == 1,
                want,
                "round {round} lane {l}: {tri:?} {origin} {dir}"
            );
            checked += 1;
            crossed += usize::from(want);
            borderline += usize::from(
                hit.is_some_and(|(t, u, v)| t == lo || t == hi || u == 0.0 || u == 1.0 || v == 0.0 || u + v == 1.0),
            );
        }
        assert_eq!(got >> count, 0, "round {round}: a missing lane is never crossed");
    }
    assert!(
        crossed > checked / 50 && borderline > 1000,
        "{checked} {crossed} {borderline}"
    );
}
