//! Tests of the nearest-hit query and the box test ([`super`]): hits, ties, interval ends and axis-parallel rays,
//! against the naive references.

use super::*;
use crate::spatial::bvh::test_support::*;
use crate::spatial::bvh::{Tri, corners};

#[test]
fn single_triangle_hit_and_barycentrics() {
    let positions = [Vec3::ZERO, Vec3::X, Vec3::Y];
    let bvh = TriangleBvh::new_linear(&positions, &[[0, 1, 2]]);
    assert_eq!(bvh.hittable, 1);
    let hit = bvh
        .ray_cast(Vec3::new(0.25, 0.5, 2.0), Vec3::new(0.0, 0.0, -2.0), 0.0, 10.0)
        .unwrap();
    assert_eq!(hit.triangle, 0);
    assert!((hit.t - 1.0).abs() < 1e-6 && (hit.u - 0.25).abs() < 1e-6 && (hit.v - 0.5).abs() < 1e-6);
    // Back face counts too.
    assert!(bvh.ray_cast(Vec3::new(0.25, 0.25, -1.0), Vec3::Z, 0.0, 10.0).is_some());
    // Outside [t_min, t_max].
    assert_eq!(bvh.ray_cast(Vec3::new(0.25, 0.25, 2.0), -Vec3::Z, 0.0, 1.5), None);
    assert_eq!(bvh.ray_cast(Vec3::new(0.25, 0.25, 2.0), -Vec3::Z, 2.5, 5.0), None);
    // Segments: through, short of it, and ending on it (excluded by s_min).
    let p = Vec3::new(0.2, 0.2, 0.0);
    assert!(segment_hits(&bvh, p + Vec3::Z, p - Vec3::Z, 0.0));
    assert!(!segment_hits(&bvh, p + Vec3::Z, p + 0.5 * Vec3::Z, 0.0));
    assert!(!segment_hits(&bvh, p, p + Vec3::Z, 1e-4));
    // From one of its corners, the triangle is passed over.
    assert!(!bvh.segment_hits_from_vertex(0, Vec3::new(0.2, 0.2, 1.0), Vec3::new(0.2, 0.2, -1.0), 0.0));
    // Zero-length or non-finite queries find nothing.
    assert!(!segment_hits(&bvh, p, p, 0.0));
    assert_eq!(bvh.ray_cast(p + Vec3::Z, Vec3::ZERO, 0.0, f32::INFINITY), None);
    assert_eq!(bvh.ray_cast(Vec3::NAN, -Vec3::Z, 0.0, f32::INFINITY), None);
    assert_eq!(
        bvh.ray_cast(p + Vec3::Z, Vec3::new(0.0, 0.0, f32::NEG_INFINITY), 0.0, f32::INFINITY),
        None
    );
}

#[test]
fn shared_edges_tie_to_lowest_index() {
    let mut rng = Rng(7);
    let (positions, triangles) = grid(&mut rng, 12);
    let bvh = TriangleBvh::new_linear(&positions, &triangles);
    let mut ties = 0;
    for q in 0..2000 {
        // Rays through grid vertices, edge midpoints and diagonals: several triangles at the same t.
        let x = rng.below(25) as f32 * 0.5;
        let y = if q % 2 == 0 { rng.below(25) as f32 * 0.5 } else { x };
        let origin = Vec3::new(x, y, rng.range(0.5, 4.0));
        let dir = Vec3::new(0.0, 0.0, -rng.range(0.5, 2.0));
        let tree = bvh.ray_cast(origin, dir, 0.0, f32::INFINITY);
        assert_eq!(
            tree,
            ray_cast_naive(&positions, &triangles, origin, dir, 0.0, f32::INFINITY)
        );
        let hit = tree.unwrap();
        let same_t = triangles
            .iter()
            .enumerate()
            .filter(|&(_, &idx)| {
                corners(&positions, idx)
                    .and_then(|c| Tri::new(c, idx))
                    .and_then(|tri| tri.intersect(origin, dir))
                    .is_some_and(|(t, _, _)| t == hit.t)
            })
            .map(|(i, _)| i as u32)
            .collect::<Vec<_>>();
        assert_eq!(same_t.first(), Some(&hit.triangle));
        ties += usize::from(same_t.len() > 1);
    }
    assert!(ties > 500, "only {ties} ties exercised");
}

#[test]
fn query_interval_ending_exactly_at_a_hit() {
    // Flat axis-aligned triangles make boxes of zero thickness whose slab distance equals the hit's t up to
    // rounding: the box margin must keep hits at exactly t_max or t_min.
    let mut rng = Rng(2024);
    let (mut positions, triangles) = grid(&mut rng, 8);
    for p in &mut positions {
        *p = Vec3::new(p.x * 0.37 + 3.1, p.y * 0.53 - 1.7, 0.8125);
    }
    let (soup_positions, soup_triangles) = soup(&mut rng, 500);
    for (positions, triangles) in [(&positions, &triangles), (&soup_positions, &soup_triangles)] {
        let bvh = TriangleBvh::new_linear(positions, triangles);
        let center = positions.iter().sum::<Vec3>() / positions.len() as f32;
        let mut checked = 0;
        for _ in 0..1500 {
            let origin = center + rng.vec(-4.0, 4.0);
            let dir = (center + rng.vec(-1.5, 1.5) - origin) * rng.range(0.01, 3.0);
            let Some(hit) = ray_cast_naive(positions, triangles, origin, dir, 0.0, f32::INFINITY) else {
                continue;
            };
            checked += 1;
            assert_eq!(bvh.ray_cast(origin, dir, 0.0, hit.t), Some(hit));
            assert_eq!(
                bvh.ray_cast(origin, dir, hit.t, f32::INFINITY),
                ray_cast_naive(positions, triangles, origin, dir, hit.t, f32::INFINITY)
            );
            // A segment whose end lies exactly at the hit's parameter, give or take an ulp.
            for s_min in [1.0 - hit.t, 1.0 - next_up(hit.t), 1.0 - next_down(hit.t)] {
                let b = origin + dir;
                assert_eq!(
                    segment_hits(&bvh, origin, b, s_min),
                    segment_hits_naive(positions, triangles, origin, b, s_min)
                );
            }
        }
        assert!(checked > 500, "only {checked} hits");
    }
}

#[test]
fn axis_parallel_rays_with_zero_direction_components() {
    // A unit cube's faces; rays along the axes, some grazing box planes exactly (inverse direction infinite).
    let (positions, triangles) = cube();
    let bvh = TriangleBvh::new_linear(&positions, &triangles);
    for (origin, dir) in [
        (Vec3::new(0.5, 0.5, -1.0), Vec3::Z),
        (Vec3::new(0.0, 0.5, -1.0), Vec3::Z),
        (Vec3::new(1.0, 1.0, 3.0), -Vec3::Z),
        (Vec3::new(0.5, -2.0, 0.0), Vec3::Y),
        (Vec3::new(0.25, 0.75, 0.5), -Vec3::X),
        (Vec3::new(2.0, 0.5, 0.5), -Vec3::X),
    ] {
        let naive = ray_cast_naive(&positions, &triangles, origin, dir, 0.0, f32::INFINITY);
        assert_eq!(bvh.ray_cast(origin, dir, 0.0, f32::INFINITY), naive, "{origin} {dir}");
        assert!(naive.is_some(), "{origin} {dir}");
        let b = origin + 5.0 * dir;
        assert_eq!(
            segment_hits(&bvh, origin, b, 0.0),
            segment_hits_naive(&positions, &triangles, origin, b, 0.0)
        );
    }
    // Grouped segment queries (the 4-wide tree's test of an axis with an infinite inverse: the origin between
    // the box's planes, planes included) from origins on, inside and outside the faces' planes, along and
    // across the axes, with +0 and -0 components.
    let coords = [-0.5, 0.0, 0.25, 1.0, 1.5];
    let mut hits = Vec::new();
    for (i, &x) in coords.iter().enumerate() {
        for (j, &y) in coords.iter().enumerate() {
            for &z in &coords {
                let origin = Vec3::new(x, y, z);
                let ends = [
                    origin + Vec3::X * 2.0,
                    origin - Vec3::Y * 2.0,
                    origin + Vec3::new(-0.0, 0.0, -2.0),
                    origin + Vec3::new(1.0, 1.0, 0.0) * [1.0, -1.0][i % 2],
                    origin + Vec3::new(0.0, -0.7, 1.3) * [1.0, -1.0][j % 2],
                    Vec3::splat(0.5),
                ];
                for s_min in [0.0, 1e-4] {
                    packet_from(&bvh, NO_VERTEX, origin, &ends, s_min, &mut hits);
                    for (&e, &h) in ends.iter().zip(&hits) {
                        let naive = segment_hits_naive(&positions, &triangles, origin, e, s_min);
                        assert_eq!(h, naive, "{origin} -> {e}, s_min {s_min}");
                    }
                }
            }
        }
    }
}
