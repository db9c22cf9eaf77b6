//! Tests of the build ([`super`]): the trees' structure, determinism and input handling, and their answers against
//! the naive references.

use super::*;
use crate::spatial::bvh::test_support::*;

#[test]
fn empty_mesh_finds_nothing() {
    let bvh = TriangleBvh::new_linear(&[], &[]);
    assert_eq!(bvh.hittable, 0);
    assert!(bvh.nodes.is_empty());
    assert_eq!(bvh.ray_cast(Vec3::ZERO, Vec3::X, 0.0, f32::INFINITY), None);
    assert!(!segment_hits(&bvh, Vec3::ZERO, Vec3::X, 0.0));
    // Triangles but no positions: all out of range.
    let bvh = TriangleBvh::new_linear(&[], &[[0, 1, 2]]);
    assert_eq!(bvh.hittable, 0);
    assert_eq!(bvh.ray_cast(Vec3::ZERO, Vec3::X, 0.0, f32::INFINITY), None);
    assert!(!segment_hits(&bvh, -Vec3::X, Vec3::X, 0.0));
    let mut hits = Vec::new();
    packet_from(&bvh, 0, -Vec3::X, &[Vec3::X, Vec3::Y], 0.0, &mut hits);
    assert_eq!(hits, [false, false]);
}

#[test]
fn random_soups_match_naive() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for &n in &[1usize, 2, 3, 4, 5, 7, 16, 33, 100, 257, 600, 2000] {
        let (positions, triangles) = soup(&mut rng, n);
        let bvh = TriangleBvh::new_linear(&positions, &triangles);
        check_structure(&bvh);
        assert_eq!(bvh.hittable, n);
        check_against_naive(&mut rng, &bvh, &positions, &triangles, 400);
    }
}

/// The baseline and x86-64-v3 copies of the build and the segment traversal (`crate::simd`) make the same trees,
/// bit for bit, and answer as the naive reference.
#[test]
fn both_instruction_sets_build_the_same_trees_and_answer_alike() {
    let _switch = crate::simd::SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    if !crate::simd::detect() {
        println!("notice: no x86-64-v3 on this processor; only the baseline copies are tested");
    }
    let bits = |b: &TriangleBvh| -> Vec<[u32; 8]> {
        b.nodes
            .iter()
            .map(|n| {
                let (lo, hi) = (n.min.to_array().map(f32::to_bits), n.max.to_array().map(f32::to_bits));
                [lo[0], lo[1], lo[2], hi[0], hi[1], hi[2], n.first, n.count]
            })
            .collect()
    };
    for n in [3usize, 100, 5000] {
        let mut trees = Vec::new();
        for portable in [true, false] {
            crate::simd::set_portable(portable);
            let mut rng = Rng(0xC0FF_EE00 + n as u64);
            let (positions, triangles) = soup(&mut rng, n);
            let bvh = TriangleBvh::new_linear(&positions, &triangles);
            check_structure(&bvh);
            check_against_naive(&mut rng, &bvh, &positions, &triangles, 150);
            trees.push((bits(&bvh), bvh.ids.clone()));
        }
        assert_eq!(trees[0], trees[1], "{n} triangles");
    }
    crate::simd::set_portable(false);
}

/// The build takes triangles `2k` and `2k + 1` that share an edge as one item: they stay together (in order) in
/// its leaves, leaves still hold at most eight triangles, and queries answer as the naive reference, with pairs
/// broken by triangles out of range or degenerate, and an odd triangle at the end.
#[test]
fn build_keeps_quads_together_and_answers_alike() {
    let mut rng = Rng(0x5EED);
    let k = 24u32;
    let (mut positions, mut triangles) = quad_grid(k, || rng.range(-0.3, 0.3));
    positions.iter_mut().for_each(|p| *p = *p * (2.0 / k as f32) - 1.0);
    triangles[10] = [0, 1, positions.len() as u32 + 5]; // out of range
    triangles[21] = [3, 3, 4]; // degenerate (stays, never hit)
    triangles.push([0, 1, k + 1]); // unpaired
    let bvh = TriangleBvh::new_linear(&positions, &triangles);
    check_structure(&bvh);
    check_against_naive(&mut rng, &bvh, &positions, &triangles, 300);
    assert_eq!(bvh.ids.len(), triangles.len() - 1);
    // Every quad but the two broken ones (triangles 10-11 and 20-21) is a pair, its triangles side by side.
    let quads = (k * k) as usize;
    let mut together = 0;
    for (at, &id) in bvh.ids.iter().enumerate() {
        if id % 2 == 0 && (id as usize) < 2 * quads && ![10, 20].contains(&id) {
            assert_eq!(
                bvh.ids.get(at + 1),
                Some(&(id + 1)),
                "triangle {id} apart from {}",
                id + 1
            );
            together += 1;
        }
    }
    assert_eq!(together, quads - 2);
}

#[test]
fn degenerate_and_out_of_range_triangles_are_skipped() {
    let mut rng = Rng(5);
    let (mut positions, mut triangles) = soup(&mut rng, 200);
    positions.push(Vec3::new(f32::INFINITY, 0.0, 0.0));
    let inf = positions.len() as u32 - 1;
    positions.push(Vec3::new(0.0, f32::NAN, 0.0));
    let nan = positions.len() as u32 - 1;
    positions.push(Vec3::splat(f32::MAX));
    let huge = positions.len() as u32 - 1;
    triangles.extend([
        [0, 1, 9999],     // out of range
        [u32::MAX, 0, 1], // out of range
        [0, 0, 1],        // repeated vertex: zero area
        [0, 1, inf],      // infinite corner
        [nan, inf, nan],  // no finite corner at all
        [3, 4, 5],        // proper
        [huge, 0, 1],     // proper but enormous: the centroid bounds are huge
    ]);
    // Collinear corners: zero area.
    positions.extend([Vec3::ZERO, Vec3::ONE, 2.0 * Vec3::ONE]);
    let c = positions.len() as u32;
    triangles.push([c - 3, c - 2, c - 1]);
    let bvh = TriangleBvh::new_linear(&positions, &triangles);
    check_structure(&bvh);
    // Those out of range are left out; the degenerate ones keep a place in a leaf, never hit.
    assert_eq!(bvh.ids.len(), 206);
    assert_eq!(bvh.hittable, 202);
    check_against_naive(&mut rng, &bvh, &positions, &triangles, 300);
    // A ray along the collinear triangle's line and through the zero-area one hits nothing degenerate.
    let hit = bvh.ray_cast(-Vec3::ONE, Vec3::ONE, 0.0, f32::INFINITY);
    assert!(hit.is_none_or(|h| h.triangle < 200 || h.triangle == 205 || h.triangle == 206));
    // Only degenerate triangles: nothing to hit.
    let bvh = TriangleBvh::new_linear(&[Vec3::ZERO, Vec3::X, Vec3::NAN], &[[0, 1, 2], [0, 0, 1], [1, 2, 3]]);
    assert_eq!(bvh.hittable, 0);
    assert_eq!(
        bvh.ray_cast(Vec3::new(0.5, 0.0, 1.0), -Vec3::Z, 0.0, f32::INFINITY),
        None
    );
    assert!(!segment_hits(
        &bvh,
        Vec3::new(0.5, 0.0, 1.0),
        Vec3::new(0.5, 0.0, -1.0),
        0.0
    ));
    // A soup with a collapsed triangle and one with a NaN corner among the others.
    let (mut positions, triangles) = soup(&mut rng, 300);
    positions[1] = positions[0];
    positions[2] = positions[0];
    positions[4] = Vec3::NAN;
    let bvh = TriangleBvh::new_linear(&positions, &triangles);
    assert_eq!(bvh.hittable, 298);
    check_against_naive(&mut rng, &bvh, &positions, &triangles, 200);
}

#[test]
fn build_is_deterministic_and_bounded() {
    let mut rng = Rng(31);
    let (positions, triangles) = soup(&mut rng, 5000);
    let a = TriangleBvh::new_linear(&positions, &triangles);
    let b = TriangleBvh::new_linear(&positions, &triangles);
    assert_eq!(a.ids, b.ids);
    assert_eq!(a.nodes.len(), b.nodes.len());
    check_structure(&a);
    // Equal Morton codes by the thousand (identical triangles, centroids crowding towards zero) split at the
    // middle; the depth stays bounded.
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    for k in 0..3000u32 {
        let x = 0.5f32.powi((k % 140) as i32);
        let base = positions.len() as u32;
        positions.extend([Vec3::new(x, 0.0, 0.0), Vec3::new(x, 1.0, 0.0), Vec3::new(x, 0.0, 1.0)]);
        triangles.push([base, base + 1, base + 2]);
    }
    triangles.extend(std::iter::repeat_n([0, 1, 2], 40_000));
    let bvh = TriangleBvh::new_linear(&positions, &triangles);
    check_structure(&bvh);
    assert_eq!(bvh.hittable, triangles.len());
    for _ in 0..100 {
        let origin = Vec3::new(rng.range(-1.0, 2.0), rng.range(0.0, 0.5), rng.range(0.0, 0.5));
        let dir = Vec3::new(rng.range(-1.0, 1.0), rng.range(-0.1, 0.1), rng.range(-0.1, 0.1));
        let naive = ray_cast_naive(&positions, &triangles, origin, dir, 0.0, f32::INFINITY);
        assert_eq!(bvh.ray_cast(origin, dir, 0.0, f32::INFINITY), naive);
        let b = origin + dir;
        assert_eq!(
            segment_hits(&bvh, origin, b, 0.0),
            segment_hits_naive(&positions, &triangles, origin, b, 0.0)
        );
    }
    // Morton splits alone: a leaf per code cell, at most 30 levels of them.
    assert_eq!(split_morton(&[0, 0, 1, 1, 1], 0), 2);
    assert_eq!(split_morton(&[0b0100, 0b0101, 0b0110, 0b0111], 0), 2);
    assert_eq!(split_morton(&[7, 7, 7, 7, 7], 0), 2);
    assert_eq!(split_morton(&[0, 1, 2, 3], MAX_LINEAR_DEPTH), 2);
    assert_eq!(
        morton_code(Vec3::ONE * 2.0, Vec3::ZERO, Vec3::splat(1024.0)),
        (1 << 30) - 1
    );
    assert_eq!(morton_code(Vec3::ZERO, Vec3::ZERO, Vec3::splat(1024.0)), 0);
    assert_eq!(
        morton_code(Vec3::new(0.0, 0.0, 2.0), Vec3::ZERO, Vec3::splat(1024.0)),
        0x0924_9249
    );
}

#[test]
fn large_mesh_parallel_build_matches_naive() {
    // Above PARALLEL_GRAIN items the top levels are split with rayon: the layout must not depend on it. A bumpy
    // 130 x 130 grid of 33800 triangles, in a scrambled order (so few pairs form and the items are about as
    // many).
    let mut rng = Rng(8);
    let (mut positions, triangles) = grid(&mut rng, 130);
    for p in &mut positions {
        *p = Vec3::new(
            p.x / 65.0 - 1.0,
            p.y / 65.0 - 1.0,
            0.3 * (p.x * 0.3).sin() * (p.y * 0.2).cos(),
        );
    }
    assert!(triangles.len() > PARALLEL_GRAIN);
    let bvh = TriangleBvh::new_linear(&positions, &triangles);
    check_structure(&bvh);
    assert_eq!(bvh.hittable, triangles.len());
    for _ in 0..2 {
        let again = TriangleBvh::new_linear(&positions, &triangles);
        assert_eq!(again.ids, bvh.ids);
        assert!(
            again
                .nodes
                .iter()
                .zip(&bvh.nodes)
                .all(|(x, y)| (x.first, x.count, x.min, x.max) == (y.first, y.count, y.min, y.max))
        );
    }
    for q in 0..60 {
        let origin = rng.vec(-1.5, 1.5);
        let dir = rng.vec(-1.0, 1.0) - 0.5 * origin;
        let naive = ray_cast_naive(&positions, &triangles, origin, dir, 0.0, f32::INFINITY);
        assert_eq!(bvh.ray_cast(origin, dir, 0.0, f32::INFINITY), naive, "ray {q}");
        let b = origin + dir;
        let naive = segment_hits_naive(&positions, &triangles, origin, b, 1e-4);
        assert_eq!(segment_hits(&bvh, origin, b, 1e-4), naive, "segment {q}");
    }
    // Short segments, the binding use case, from points near the surface.
    for q in 0..2000 {
        let p = positions[rng.below(positions.len())];
        let (a, b) = (p + rng.vec(-0.02, 0.02), p + rng.vec(-0.2, 0.2));
        let naive = segment_hits_naive(&positions, &triangles, a, b, 1e-4);
        assert_eq!(segment_hits(&bvh, a, b, 1e-4), naive, "short segment {q}");
    }
}
