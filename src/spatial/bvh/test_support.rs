//! What the tests of the tree share: a random generator, test meshes, the naive references (every triangle
//! tested, no tree: what the tree's answers must equal), and checks of a tree's answers and structure.

use glam::Vec3;

use super::build::MAX_LINEAR_LEAF;
use super::ray::STACK;
use super::{Hit, SegmentEntry, Tri, TriangleBvh, corners, query_ok, wide};

/// xorshift64* (Vigna 2016): a tiny deterministic generator for property tests.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub(super) fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub(super) fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub(super) fn vec(&mut self, lo: f32, hi: f32) -> Vec3 {
        Vec3::new(self.range(lo, hi), self.range(lo, hi), self.range(lo, hi))
    }
}

/// The next float above a non-negative finite `x` (`f32::next_up` is newer than the crate's MSRV).
pub(super) fn next_up(x: f32) -> f32 {
    f32::from_bits(x.to_bits() + 1)
}

/// The next float below a non-negative finite `x` (zero stays zero).
pub(super) fn next_down(x: f32) -> f32 {
    if x > 0.0 { f32::from_bits(x.to_bits() - 1) } else { x }
}

/// A soup of `n` independent triangles, sizes from tiny to large, some clustered.
pub(super) fn soup(rng: &mut Rng, n: usize) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut positions = Vec::with_capacity(3 * n);
    let mut triangles = Vec::with_capacity(n);
    for i in 0..n {
        let center = if i % 3 == 0 {
            rng.vec(-0.1, 0.1)
        } else {
            rng.vec(-1.0, 1.0)
        };
        let size = [0.01, 0.1, 0.5, 2.0][rng.below(4)];
        let base = positions.len() as u32;
        for _ in 0..3 {
            positions.push(center + rng.vec(-size, size));
        }
        triangles.push([base, base + 1, base + 2]);
    }
    (positions, triangles)
}

/// A shared-vertex grid of unit squares in the plane z = 0, two triangles each, in a scrambled order: rays
/// through its edges and vertices hit several triangles at exactly the same `t`.
pub(super) fn grid(rng: &mut Rng, k: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let (positions, mut triangles) = quad_grid(k, || 0.0);
    for i in (1..triangles.len()).rev() {
        triangles.swap(i, rng.below(i + 1));
    }
    (positions, triangles)
}

/// A `k` x `k` grid of unit quads in the plane z = 0 raised by `z()` at each vertex, each quad two triangles
/// (`2q` and `2q + 1`, sharing its diagonal), in order.
pub(super) fn quad_grid(k: u32, mut z: impl FnMut() -> f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut positions = Vec::new();
    for y in 0..=k {
        for x in 0..=k {
            positions.push(Vec3::new(x as f32, y as f32, z()));
        }
    }
    let mut triangles = Vec::new();
    for y in 0..k {
        for x in 0..k {
            let i = y * (k + 1) + x;
            triangles.push([i, i + 1, i + k + 2]);
            triangles.push([i, i + k + 2, i + k + 1]);
        }
    }
    (positions, triangles)
}

/// An icosphere of radius 1 subdivided `levels` times (closed, outward-facing), 20 * 4^levels triangles.
pub(super) fn icosphere(levels: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let g = (1.0 + 5.0f32.sqrt()) / 2.0;
    let mut positions: Vec<Vec3> = [
        [-1.0, g, 0.0],
        [1.0, g, 0.0],
        [-1.0, -g, 0.0],
        [1.0, -g, 0.0],
        [0.0, -1.0, g],
        [0.0, 1.0, g],
        [0.0, -1.0, -g],
        [0.0, 1.0, -g],
        [g, 0.0, -1.0],
        [g, 0.0, 1.0],
        [-g, 0.0, -1.0],
        [-g, 0.0, 1.0],
    ]
    .iter()
    .map(|&p| Vec3::from_array(p).normalize())
    .collect();
    let mut triangles: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..levels {
        let mut mid = std::collections::HashMap::new();
        let mut midpoint = |a: u32, b: u32, positions: &mut Vec<Vec3>| {
            *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
                positions.push((positions[a as usize] + positions[b as usize]).normalize());
                positions.len() as u32 - 1
            })
        };
        let mut next = Vec::with_capacity(triangles.len() * 4);
        for [a, b, c] in triangles {
            let ab = midpoint(a, b, &mut positions);
            let bc = midpoint(b, c, &mut positions);
            let ca = midpoint(c, a, &mut positions);
            next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        triangles = next;
    }
    (positions, triangles)
}

/// The 12 triangles of the cube [0, 1]^3.
pub(super) fn cube() -> (Vec<Vec3>, Vec<[u32; 3]>) {
    crate::mesh::cuboid(Vec3::ZERO, Vec3::ONE)
}

/// Naive reference: the nearest hit over every triangle, no tree. Same semantics and same triangle routine as
/// [`TriangleBvh::ray_cast`] (skipped triangles, `[t_min, t_max]`, ties to the lowest index), so the
/// answers are equal.
pub(super) fn ray_cast_naive(
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    origin: Vec3,
    dir: Vec3,
    t_min: f32,
    t_max: f32,
) -> Option<Hit> {
    if !query_ok(origin, dir) {
        return None;
    }
    let mut best: Option<Hit> = None;
    for (i, &idx) in triangles.iter().enumerate() {
        let Ok(id) = u32::try_from(i) else { break };
        let Some(tri) = corners(positions, idx).and_then(|c| Tri::new(c, idx)) else {
            continue;
        };
        let Some((t, u, v)) = tri.intersect(origin, dir) else {
            continue;
        };
        if t >= t_min && t <= t_max && best.is_none_or(|b| t < b.t) {
            best = Some(Hit { t, triangle: id, u, v });
        }
    }
    best
}

/// Naive reference: whether the segment from `a` to `b` crosses any triangle at `s` in `(s_min, 1 - s_min)`,
/// testing every triangle. Same semantics and routine as the tree's segment queries ([`segment_hits`]).
pub(super) fn segment_hits_naive(positions: &[Vec3], triangles: &[[u32; 3]], a: Vec3, b: Vec3, s_min: f32) -> bool {
    naive_skipping(positions, triangles, None, a, b, s_min)
}

/// Naive reference for [`TriangleBvh::segment_hits_from_vertex`] and
/// [`TriangleBvh::packet_hit_from_vertices_within`]: [`segment_hits_naive`] passing over the triangles that have
/// vertex `v` as a corner.
pub(super) fn segment_hits_naive_skipping(
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    v: u32,
    a: Vec3,
    b: Vec3,
    s_min: f32,
) -> bool {
    naive_skipping(positions, triangles, Some(v), a, b, s_min)
}

fn naive_skipping(positions: &[Vec3], triangles: &[[u32; 3]], skip: Option<u32>, a: Vec3, b: Vec3, s_min: f32) -> bool {
    let dir = b - a;
    if !query_ok(a, dir) {
        return false;
    }
    let (lo, hi) = (s_min, 1.0 - s_min);
    triangles
        .iter()
        .take(u32::MAX as usize + 1)
        .filter(|idx| skip.is_none_or(|v| !idx.contains(&v)))
        .any(|&idx| {
            corners(positions, idx)
                .and_then(|c| Tri::new(c, idx))
                .and_then(|tri| tri.intersect(a, dir))
                .is_some_and(|(t, _, _)| t > lo && t < hi)
        })
}

/// A vertex that no triangle of a test mesh has as a corner (a mesh would need 2^32 positions): segment queries
/// from it pass over nothing, so they answer as [`segment_hits_naive`].
pub(super) const NO_VERTEX: u32 = u32::MAX;

/// Whether the segment from `a` to `b` crosses any triangle at `s` in `(s_min, 1 - s_min)`: the tree's query from
/// a vertex, from [`NO_VERTEX`].
pub(super) fn segment_hits(bvh: &TriangleBvh, a: Vec3, b: Vec3, s_min: f32) -> bool {
    bvh.segment_hits_from_vertex(NO_VERTEX, a, b, s_min)
}

/// [`TriangleBvh::packet_hit_from_vertices_within`] for the segments from vertex `v` at `a` to each of `ends`,
/// begun at the root (an entry made for no tree), into `hits` (resized to `ends`).
pub(super) fn packet_from(bvh: &TriangleBvh, v: u32, a: Vec3, ends: &[Vec3], s_min: f32, hits: &mut Vec<bool>) {
    hits.clear();
    hits.resize(ends.len(), true);
    let (from, origins) = (vec![v; ends.len()], vec![a; ends.len()]);
    bvh.packet_hit_from_vertices_within(&SegmentEntry::default(), &from, &origins, ends, s_min, hits);
}

/// Random queries against the tree and the naive references; panics on the first disagreement.
pub(super) fn check_against_naive(
    rng: &mut Rng,
    bvh: &TriangleBvh,
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    n: usize,
) {
    let mut hits = 0;
    for q in 0..n {
        let origin = rng.vec(-2.5, 2.5);
        // Mostly towards the mesh, sometimes anywhere; lengths vary (dir is not normalised).
        let target = if q % 4 == 0 {
            rng.vec(-3.0, 3.0)
        } else {
            rng.vec(-1.0, 1.0)
        };
        let dir = (target - origin) * rng.range(0.1, 10.0);
        let (t_min, t_max) = match q % 3 {
            0 => (0.0, f32::INFINITY),
            1 => (rng.range(-1.0, 0.5), rng.range(0.0, 2.0)),
            _ => (f32::NEG_INFINITY, f32::INFINITY),
        };
        let tree = bvh.ray_cast(origin, dir, t_min, t_max);
        let naive = ray_cast_naive(positions, triangles, origin, dir, t_min, t_max);
        assert_eq!(tree, naive, "ray {q}: origin {origin} dir {dir} t [{t_min}, {t_max}]");
        hits += usize::from(naive.is_some());

        let a = rng.vec(-2.0, 2.0);
        let b = if q % 2 == 0 {
            rng.vec(-2.0, 2.0)
        } else {
            a + rng.vec(-0.3, 0.3)
        };
        let s_min = [0.0, 1e-4, 0.1, 0.45][q % 4];
        let tree = segment_hits(bvh, a, b, s_min);
        let naive = segment_hits_naive(positions, triangles, a, b, s_min);
        assert_eq!(tree, naive, "segment {q}: {a} -> {b}, s_min {s_min}");

        // Several segments from one origin in one traversal (more than a group of eight at times), some
        // repeated, one of zero length, some along an axis: each answer is that segment's own.
        let mut ends: Vec<Vec3> = (0..1 + q % 11).map(|_| a + rng.vec(-1.5, 1.5)).collect();
        ends.push(a);
        ends.push(ends[0]);
        ends.push(a + Vec3::new(0.0, 0.0, rng.range(-2.0, 2.0)));
        let mut answers = Vec::new();
        packet_from(bvh, NO_VERTEX, a, &ends, s_min, &mut answers);
        for (k, (&e, &h)) in ends.iter().zip(&answers).enumerate() {
            let naive = segment_hits_naive(positions, triangles, a, e, s_min);
            assert_eq!(h, naive, "segment {q}, end {k}: {a} -> {e}, s_min {s_min}");
        }
        // From a vertex of the mesh, its own triangles passed over (binding's query).
        if let Some(&t) = triangles.get(q % triangles.len().max(1)) {
            let v = t[q % 3];
            if let Some(&p) = positions.get(v as usize) {
                let ends: Vec<Vec3> = (0..1 + q % 5).map(|_| p + rng.vec(-1.0, 1.0)).collect();
                packet_from(bvh, v, p, &ends, s_min, &mut answers);
                for (k, (&e, &h)) in ends.iter().zip(&answers).enumerate() {
                    let naive = segment_hits_naive_skipping(positions, triangles, v, p, e, s_min);
                    assert_eq!(h, naive, "from vertex {v}, end {k}: {p} -> {e}, s_min {s_min}");
                    assert_eq!(
                        bvh.segment_hits_from_vertex(v, p, e, s_min),
                        naive,
                        "one, from vertex {v}"
                    );
                }
            }
        }
    }
    // The test means something only if rays do hit.
    if bvh.hittable >= 50 {
        assert!(hits > n / 10, "only {hits} of {n} rays hit");
    }
}

/// Checks the tree's invariants: every node but the root is the child of exactly one earlier node, children are
/// adjacent, leaves hold 1 to [`MAX_LINEAR_LEAF`] triangles and together cover every triangle once, boxes contain
/// their children's, the depth fits the traversal stack, and the 4-wide copy covers the same leaves.
pub(super) fn check_structure(bvh: &TriangleBvh) {
    let nodes = &bvh.nodes;
    let mut parent_count = vec![0u32; nodes.len()];
    let mut covered = vec![0u32; bvh.tris.len()];
    let mut depth = vec![0usize; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        if n.count == 0 {
            let c = n.first as usize;
            assert!(c > i && c + 1 < nodes.len(), "node {i}: children at {c}");
            for child in [c, c + 1] {
                parent_count[child] += 1;
                depth[child] = depth[i] + 1;
                let b = &nodes[child];
                if b.min.cmple(b.max).all() {
                    assert!(n.min.cmple(b.min).all() && n.max.cmpge(b.max).all(), "node {i} box");
                }
            }
        } else {
            assert!(n.count as usize <= MAX_LINEAR_LEAF);
            for k in n.first..n.first + n.count {
                covered[k as usize] += 1;
            }
        }
    }
    assert!(nodes.is_empty() || parent_count[0] == 0);
    assert!(parent_count.iter().skip(1).all(|&c| c == 1));
    assert!(covered.iter().all(|&c| c == 1));
    assert!(depth.iter().all(|&d| d < STACK));
    wide::check_wide(nodes, bvh.wide_nodes(), bvh.tris.len());
    let mut ids = bvh.ids.clone();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), bvh.ids.len());
}
