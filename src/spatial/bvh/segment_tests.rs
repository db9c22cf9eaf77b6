//! Tests of the segment queries ([`super`]): from entry boxes, in packets of several vertices, from inside a
//! closed surface and from several threads, against the naive references.

use super::*;
use crate::spatial::bvh::test_support::*;

/// [`TriangleBvh::packet_hit_from_vertices_within`] for the segments from vertex `v` at `a` to each of `ends`, into
/// `hits` (resized to `ends`).
fn within(tree: &TriangleBvh, entry: &SegmentEntry, v: u32, a: Vec3, ends: &[Vec3], s_min: f32, hits: &mut Vec<bool>) {
    hits.clear();
    hits.resize(ends.len(), true);
    let (from, origins) = (vec![v; ends.len()], vec![a; ends.len()]);
    tree.packet_hit_from_vertices_within(entry, &from, &origins, ends, s_min, hits);
}

#[test]
fn queries_begun_at_entry_boxes_answer_as_from_the_root() {
    // Segments from a vertex to ends inside a box, traversed from the tree's boxes that meet it (found once for
    // the box) rather than from the root: each answer equals the naive reference's. Boxes from a point to most of
    // the mesh, entry boxes cut at several sizes, meshes with and without structure.
    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
    let meshes = [soup(&mut rng, 400), grid(&mut rng, 24), icosphere(3)];
    let mut entry = SegmentEntry::default();
    let mut hits = Vec::new();
    for (positions, triangles) in &meshes {
        let tree = TriangleBvh::new_linear(positions, triangles);
        for q in 0..600 {
            let t = triangles[rng.below(triangles.len())];
            let v = t[q % 3];
            let p = positions[v as usize];
            let half = [0.0, 1e-3, 0.05, 0.3, 1.5][q % 5];
            let ends: Vec<Vec3> = (0..1 + q % 9).map(|_| p + rng.vec(-half, half)).collect();
            let (lo, hi) = ends.iter().fold((p, p), |(lo, hi), e| (lo.min(*e), hi.max(*e)));
            // The box of the segments, or a larger one.
            let grow = Vec3::splat([0.0, 0.0, 0.2][q % 3]);
            let reach = [0.5, 1.0, 4.0][q % 3];
            tree.segment_entry(lo - grow, hi + grow, reach, &mut entry);
            let s_min = [0.0, 1e-4][q % 2];
            within(&tree, &entry, v, p, &ends, s_min, &mut hits);
            for (&e, &h) in ends.iter().zip(&hits) {
                let naive = segment_hits_naive_skipping(positions, triangles, v, p, e, s_min);
                assert_eq!(
                    h, naive,
                    "query {q}: vertex {v} {p} -> {e}, box {lo}..{hi}, reach {reach}"
                );
            }
        }
    }
    // A box that is not finite begins at the root.
    let (positions, triangles) = &meshes[2];
    let tree = TriangleBvh::new_linear(positions, triangles);
    tree.segment_entry(Vec3::NEG_INFINITY, Vec3::INFINITY, 1.0, &mut entry);
    let ends = [-2.0 * positions[0], Vec3::ZERO];
    within(&tree, &entry, 0, positions[0], &ends, 1e-4, &mut hits);
    let naive: Vec<bool> = ends
        .iter()
        .map(|&e| segment_hits_naive_skipping(positions, triangles, 0, positions[0], e, 1e-4))
        .collect();
    assert_eq!(hits, naive);
    assert_eq!(
        hits,
        [true, false],
        "the far side of the sphere hides what lies beyond it, not its centre"
    );
    // An entry made for another tree (here one built from the same mesh) is not used: the queries begin at the
    // root (an entry for a box around the centre holds nothing of the far side).
    let other = TriangleBvh::new_linear(positions, triangles);
    other.segment_entry(Vec3::splat(-0.01), Vec3::splat(0.01), 1.0, &mut entry);
    within(&tree, &entry, 0, positions[0], &ends, 1e-4, &mut hits);
    assert_eq!(hits, naive);
    // The same entry on the tree it was made for is used (and, the box being wrong for these segments, answers
    // wrongly: which shows that the check above is what kept the answers right).
    within(&other, &entry, 0, positions[0], &ends, 1e-4, &mut hits);
    assert_eq!(hits, [false, false]);
}

#[test]
fn packets_of_several_vertices_answer_as_each_segment_alone() {
    // The segments of a few vertices traversed together from the entry boxes of their common box: each answer
    // equals the naive reference's for its own vertex (whose triangles it passes over). Groups of 1 to 12
    // vertices near each other or anywhere, 0 to 6 ends each (more than a packet's 32 segments in some), some
    // ends along an axis (zero direction components), meshes with and without structure.
    let mut rng = Rng(0x0DDB_A11C_0FFE_E123);
    let meshes = [soup(&mut rng, 400), grid(&mut rng, 24), icosphere(3)];
    let mut entry = SegmentEntry::default();
    let (mut from, mut origins, mut ends, mut hits) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut longest = 0;
    for (positions, triangles) in &meshes {
        let tree = TriangleBvh::new_linear(positions, triangles);
        for q in 0..400 {
            from.clear();
            origins.clear();
            ends.clear();
            let seed = positions[rng.below(positions.len())];
            let near = q % 2 == 0;
            for _ in 0..1 + q % 12 {
                // A vertex near the seed (the nearest of a few random picks), or any vertex.
                let v = (0..if near { 8 } else { 1 })
                    .map(|_| rng.below(positions.len()) as u32)
                    .min_by(|&a, &b| {
                        let d = |v: u32| positions[v as usize].distance_squared(seed);
                        d(a).total_cmp(&d(b))
                    })
                    .unwrap();
                let p = positions[v as usize];
                let half = [1e-3, 0.05, 0.3, 1.5][q % 4];
                for k in 0..rng.below(7) {
                    from.push(v);
                    origins.push(p);
                    ends.push(if k % 3 == 2 {
                        p + Vec3::X * rng.range(-half, half)
                    } else {
                        p + rng.vec(-half, half)
                    });
                }
            }
            longest = longest.max(ends.len());
            let (lo, hi) = ends
                .iter()
                .chain(&origins)
                .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), e| {
                    (lo.min(*e), hi.max(*e))
                });
            tree.segment_entry(lo, hi, [0.5, 1.0, 4.0][q % 3], &mut entry);
            let s_min = [0.0, 1e-4][q % 2];
            hits.clear();
            hits.resize(ends.len(), true);
            tree.packet_hit_from_vertices_within(&entry, &from, &origins, &ends, s_min, &mut hits);
            for k in 0..ends.len() {
                let naive = segment_hits_naive_skipping(positions, triangles, from[k], origins[k], ends[k], s_min);
                assert_eq!(
                    hits[k], naive,
                    "query {q}, segment {k}: vertex {} {} -> {}",
                    from[k], origins[k], ends[k]
                );
            }
        }
    }
    assert!(longest > wide::PACKET, "some groups span several packets");
    // An entry made for another tree is not used: the traversal begins at the root.
    let (positions, triangles) = &meshes[2];
    let tree = TriangleBvh::new_linear(positions, triangles);
    TriangleBvh::new_linear(positions, triangles).segment_entry(Vec3::splat(-0.01), Vec3::splat(0.01), 1.0, &mut entry);
    let (from, origins, ends) = (
        [0, 0, 1],
        [positions[0], positions[0], positions[1]],
        [-2.0 * positions[0], Vec3::ZERO, -2.0 * positions[1]],
    );
    let mut hits = [false; 3];
    tree.packet_hit_from_vertices_within(&entry, &from, &origins, &ends, 1e-4, &mut hits);
    assert_eq!(
        hits,
        [true, false, true],
        "the far side of the sphere hides what lies beyond it, not its centre"
    );
}

#[test]
fn closed_sphere_segments_from_inside() {
    let (positions, triangles) = icosphere(3);
    let bvh = TriangleBvh::new_linear(&positions, &triangles);
    assert_eq!(bvh.hittable, 20 * 64);
    let mut rng = Rng(1234);
    for _ in 0..2000 {
        let d = rng.vec(-1.0, 1.0).normalize_or(Vec3::X);
        // The level-3 icosphere's faces are all farther than 0.98 from its center.
        assert!(!segment_hits(&bvh, Vec3::ZERO, 0.97 * d, 1e-4), "inside {d}");
        assert!(segment_hits(&bvh, Vec3::ZERO, 1.05 * d, 1e-4), "outside {d}");
        // From a surface vertex, towards the center: the binding use case, nudged inward or from the vertex itself
        // passing over its own triangles.
        let v = rng.below(positions.len());
        let p = positions[v];
        assert!(!segment_hits(&bvh, 0.999 * p, 0.1 * d, 1e-4));
        assert!(!bvh.segment_hits_from_vertex(v as u32, p, 0.1 * d, 1e-4));
        let hit = bvh.ray_cast(Vec3::ZERO, d, 0.0, f32::INFINITY).unwrap();
        assert!(hit.t > 0.98 && hit.t <= 1.0, "t {}", hit.t);
        assert_eq!(
            Some(hit),
            ray_cast_naive(&positions, &triangles, Vec3::ZERO, d, 0.0, f32::INFINITY)
        );
    }
}

#[test]
fn queries_from_several_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<TriangleBvh>();
    let (positions, triangles) = icosphere(2);
    let bvh = TriangleBvh::new_linear(&positions, &triangles);
    std::thread::scope(|s| {
        for k in 0..4 {
            let bvh = &bvh;
            s.spawn(move || {
                let mut rng = Rng(k + 1);
                for _ in 0..500 {
                    let d = rng.vec(-1.0, 1.0).normalize_or(Vec3::Y);
                    assert!(segment_hits(bvh, Vec3::ZERO, 2.0 * d, 0.0));
                }
            });
        }
    });
}
