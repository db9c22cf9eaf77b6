//! A bounding volume hierarchy (BVH) of axis-aligned boxes over the triangles of a mesh.
//!
//! Two clients: automatic skin binding asks, millions of times, whether the segment from a vertex to a point on a
//! bone crosses the surface ([`TriangleBvh::segment_hits`], an any-hit query), and weight painting casts a ray from
//! the camera to find the surface point under the cursor on the deformed mesh ([`TriangleBvh::ray_cast`], a
//! nearest-hit query, after [`TriangleBvh::refit`] when the pose changes).
//!
//! Methods:
//! - Construction: top-down binned surface area heuristic (SAH) over triangle-box centroids, after Wald, "On fast
//!   construction of SAH-based bounding volume hierarchies" (IEEE Symposium on Interactive Ray Tracing, 2007): the
//!   centroids are binned on all three axes (16 bins, fewer for nodes of under 32 triangles; nodes of over 8192 bin
//!   a strided sample), the planes between bins are scored with the SAH cost of MacDonald & Booth, "Heuristics for
//!   ray tracing using space subdivision" (The Visual Computer, 1990), and the node is partitioned in place at the
//!   cheapest. Every node of at most 4 triangles is a leaf. Below depth 40 the build splits at the median instead,
//!   which bounds the depth (under 72) whatever the input. Nodes of more than 32768 triangles are split with
//!   rayon's fork-join (recursion as deep as those levels, not the tree); each smaller subtree is built on one
//!   thread with an explicit task stack; the pieces are laid out in one pass afterwards, so the tree is
//!   deterministic.
//! - Linear construction ([`TriangleBvh::new_linear`], several times faster, trees a little worse): an LBVH after
//!   Lauterbach et al., "Fast BVH construction on GPUs" (Eurographics 2009) and Karras, "Maximizing parallelism in
//!   the construction of BVHs, octrees, and k-d trees" (HPG 2012): the triangles (or pairs of them: triangles `2k`
//!   and `2k + 1` that share an edge, a quad's two halves, are one item, which about halves the sort and the
//!   splits) are sorted by the 30-bit Morton code of their box centroids (quantised on cubic cells of the
//!   centroids' bounding box; an LSD radix sort of (code, index) pairs), each node is split at the highest bit in
//!   which its first and last codes differ (runs of equal codes, and nodes below depth 48, at the middle, so the
//!   depth stays under 80) until it holds at most 8 triangles, with the same parallel top levels, explicit stacks
//!   and layout pass as the SAH build. Both builders make the triangle copies in parallel and fit the boxes
//!   bottom-up from them, with the routine [`TriangleBvh::refit`] ends with. On the binding benchmark its queries
//!   take 1.15 to 1.35 times as long as on the SAH tree; it builds 4 (200k triangles) to 2 (2M) times faster.
//! - Layout: one flat `Vec` of 32-byte nodes (box, then a child index or a leaf's triangle range; the two children
//!   of a node are adjacent), with the triangles reordered so each leaf's are contiguous, stored as copies (their
//!   three corners and vertex indices, 48 bytes), so that leaf tests read memory sequentially, one stream.
//! - Box test: the slab method (Kay & Kajiya, "Ray tracing complex scenes", SIGGRAPH 1986) with a precomputed
//!   inverse direction and the near/far plane of each axis chosen by the sign of the direction (Williams et al., "An
//!   efficient and robust ray-box intersection algorithm", JGT 2005), so a direction component of zero, whose
//!   inverse is infinite, works. Boxes are widened by a small margin proportional to the scene's size (in the spirit
//!   of Ize, "Robust BVH ray traversal", JCGT 2013) so that rounding in the box test and in the triangle test never
//!   culls a triangle the exhaustive search would report.
//! - Triangle test: Möller & Trumbore, "Fast, minimum storage ray-triangle intersection" (JGT 1997), two-sided. The
//!   tree and the naive references ([`ray_cast_naive`], [`segment_hits_naive`]) call the same routine on the same
//!   numbers, so their answers agree exactly. The segment traversal tests a leaf's (up to eight) triangles at
//!   once, a triangle a SIMD lane (eight AVX lanes, or two passes of four), with that routine's operations in the
//!   same order, so each lane answers as it does.
//! - Traversal: iterative with a fixed-size stack array; nearest-hit visits the nearer child first and skips
//!   subtrees that start beyond the best hit so far. Any-hit segment queries run on a 4-wide copy of the tree
//!   (`wide.rs`: four child boxes a node, tested in SIMD lanes with the same slab arithmetic), up to [`PACKET`]
//!   segments in one traversal, from one origin ([`TriangleBvh::segments_hit`]) or from several vertices
//!   ([`TriangleBvh::packet_hit_from_vertices_within`]), each stopping at its first hit.
//!
//! Queries take `&self` and may run from many threads at once; the one piece of interior state, the 4-wide copy
//! that segment queries use, is made once behind a `OnceLock`.

use std::fmt;
use std::sync::OnceLock;

use glam::{BVec4A, Vec3, Vec4, Vec4Swizzles};

mod wide;

/// Most segments one traversal tests together (the bits of its answer), for callers that group segments.
pub const PACKET: usize = wide::PACKET;

/// Bins per axis for the binned SAH build.
const BINS: usize = 16;
/// Nodes of more triangles than this are split in parallel; smaller subtrees are built on one thread each.
const PARALLEL_GRAIN: usize = 1 << 15;
/// Nodes with more triangles than this bin a strided sample of them.
const SAMPLE: usize = 1 << 13;
/// Meshes of at least this many triangles make their triangle copies in parallel (the builders and `fit`).
const PARALLEL_FIT: usize = 1 << 12;
/// Most triangles in one leaf of the SAH build.
const MAX_LEAF: usize = 4;
/// Most triangles in one leaf of the linear build: twice the SAH build's, which halves the nodes to make, fit,
/// collapse and visit. Its trees serve the binding's visibility test, which tests a leaf's eight triangles in one
/// pass of eight SIMD lanes (two of four on processors without AVX), and cache misses on nodes are what a
/// traversal waits on (creature 100k: the bind 8% faster than with leaves of 4 tested four at a time, at the same
/// instruction count; 6, 12 and 16 were slower than 8).
const MAX_LINEAR_LEAF: usize = 8;
/// Depth below which the build stops using the SAH and splits at the median, bounding the depth.
const MAX_SAH_DEPTH: u32 = 40;
/// Traversal stack entries: more than the deepest tree the build makes (MAX_SAH_DEPTH + 32).
const STACK: usize = 96;
/// Box-test margin in units of `f32::EPSILON` times the scene's size (seen from the query origin) over `|dir|`.
const MARGIN_EPS: f32 = 64.0;

/// Where a ray meets a triangle: the ray parameter `t` (the point is `origin + t * dir`), the triangle's index in
/// the slice given to [`TriangleBvh::new`] (or to the naive functions), and the barycentric coordinates of the
/// point, `(1 - u - v) * a + u * b + v * c` for the triangle's corners `a`, `b`, `c`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Ray parameter, in units of the ray's direction vector.
    pub t: f32,
    /// Index of the triangle in the input triangle list.
    pub triangle: u32,
    /// Barycentric weight of the triangle's second corner.
    pub u: f32,
    /// Barycentric weight of the triangle's third corner.
    pub v: f32,
}

/// Where segment queries inside one box begin ([`TriangleBvh::segment_entry`]); reusable. It holds copies of
/// the tree's boxes: with a tree it was not made for (another, or the same after a refit) the queries simply begin
/// at the root.
#[derive(Clone, Debug, Default)]
pub struct SegmentEntry {
    nodes: Vec<wide::WideNode>,
    /// The stamp of the tree it was made for.
    stamp: Option<u64>,
}

/// The source of [`TriangleBvh`]'s stamps.
static STAMPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A triangle as the intersection routine reads it: its three corners (the edges are taken at the test, the same
/// subtractions every time, so the answers do not depend on when they are made; the corners give the leaf boxes
/// without another look at the positions), and its vertex indices (for [`TriangleBvh::refit`], and for the
/// segment queries from a vertex, which pass over its own triangles: next to the corners, so that a leaf's test
/// reads one stream of memory, not two).
#[derive(Clone, Copy, Debug)]
struct Tri {
    a: Vec3,
    b: Vec3,
    c: Vec3,
    idx: [u32; 3],
}

impl Tri {
    /// A stand-in that no ray hits (zero edges make the determinant exactly zero), for the triangle `idx` while it
    /// is degenerate.
    const fn never(idx: [u32; 3]) -> Tri {
        Tri {
            a: Vec3::ZERO,
            b: Vec3::ZERO,
            c: Vec3::ZERO,
            idx,
        }
    }

    /// The copy of triangle `idx` in `positions`: [`Tri::new`], or [`Tri::never`] if it is degenerate or an index
    /// is out of range.
    #[inline(always)]
    fn make(positions: &[Vec3], idx: [u32; 3]) -> Tri {
        corners(positions, idx)
            .and_then(|c| Tri::new(c, idx))
            .unwrap_or(Tri::never(idx))
    }

    /// Whether this is a real triangle, not [`Tri::never`] (which [`Tri::new`] never returns: its corners coincide).
    #[inline]
    fn hittable(&self) -> bool {
        self.a != self.b || self.a != self.c
    }

    /// The triangle's box, empty (`+inf` minimum, `-inf` maximum) for [`Tri::never`].
    #[inline]
    fn bounds(&self) -> (Vec3, Vec3) {
        if self.hittable() {
            (self.a.min(self.b).min(self.c), self.a.max(self.b).max(self.c))
        } else {
            (Vec3::INFINITY, Vec3::NEG_INFINITY)
        }
    }

    /// The triangle with corners `a`, `b`, `c`, or `None` if it is degenerate: a non-finite corner or edge, or an
    /// exactly zero cross product of the edges (zero area).
    #[inline(always)]
    fn new([a, b, c]: [Vec3; 3], idx: [u32; 3]) -> Option<Tri> {
        if !(a.is_finite() && b.is_finite() && c.is_finite()) {
            return None;
        }
        let e1 = b - a;
        let e2 = c - a;
        if !(e1.is_finite() && e2.is_finite()) || e1.cross(e2) == Vec3::ZERO {
            return None;
        }
        Some(Tri { a, b, c, idx })
    }

    /// Möller–Trumbore ray-triangle intersection (JGT 1997), two-sided: `(t, u, v)` where the line `origin + t *
    /// dir` crosses the triangle's plane inside the triangle (edges included), whatever the sign of `t`; `None` if
    /// it misses or is parallel. Every comparison is written so that NaN rejects.
    #[inline(always)]
    fn intersect(&self, origin: Vec3, dir: Vec3) -> Option<(f32, f32, f32)> {
        let (e1, e2) = (self.b - self.a, self.c - self.a);
        let p = dir.cross(e2);
        let det = e1.dot(p);
        if det == 0.0 {
            return None;
        }
        let inv_det = 1.0 / det;
        let s = origin - self.a;
        let u = s.dot(p) * inv_det;
        if !(0.0..=1.0).contains(&u) {
            return None;
        }
        let q = s.cross(e1);
        let v = dir.dot(q) * inv_det;
        if v >= 0.0 && u + v <= 1.0 {
            Some((e2.dot(q) * inv_det, u, v))
        } else {
            None
        }
    }
}

/// The three corners of a triangle, or `None` if an index is out of range.
#[inline]
fn corners(positions: &[Vec3], [i, j, k]: [u32; 3]) -> Option<[Vec3; 3]> {
    Some([
        *positions.get(i as usize)?,
        *positions.get(j as usize)?,
        *positions.get(k as usize)?,
    ])
}

/// Whether a query can hit anything: finite origin and direction, non-zero direction. Shared by the tree and the
/// naive references so they reject the same queries.
#[inline]
fn query_ok(origin: Vec3, dir: Vec3) -> bool {
    origin.is_finite() && dir.is_finite() && dir != Vec3::ZERO
}

/// One node: its box and either (leaf, `count > 0`) the range `first..first + count` of the reordered triangles or
/// (interior, `count == 0`) the index `first` of its left child, the right child being `first + 1`.
#[derive(Clone, Copy, Debug)]
struct Node {
    min: Vec3,
    max: Vec3,
    first: u32,
    count: u32,
}

/// A bounding volume hierarchy over a triangle mesh, for segment visibility tests and ray picking.
///
/// Built by [`TriangleBvh::new`] (binned SAH, leaves of at most 4 triangles), updated for moved vertices by
/// [`TriangleBvh::refit`]. See the [module documentation](self) for the methods.
#[derive(Clone)]
pub struct TriangleBvh {
    /// Flat node array, root first; children always come after their parent.
    nodes: Vec<Node>,
    /// Triangle copies in leaf order ([`Tri::never`] for triangles that are degenerate in the current positions);
    /// empty from construction until the first `fit`.
    tris: Vec<Tri>,
    /// Index in the input triangle list of each entry of `tris`.
    ids: Vec<u32>,
    /// Triangles that can currently be hit (not degenerate).
    hittable: usize,
    /// A number no other build or fit has had: what a [`SegmentEntry`] was made for.
    stamp: u64,
    /// The same tree collapsed to four children a node, for the segment queries (`bvh/wide.rs`): made by the first
    /// query after a build or fit (or [`TriangleBvh::prepare_segment_queries`]), so that trees only ever asked for
    /// ray casts (painting's, refitted at every pose) never make it.
    wide: OnceLock<Vec<wide::WideNode>>,
}

impl fmt::Debug for TriangleBvh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TriangleBvh")
            .field("nodes", &self.nodes.len())
            .field("triangles", &self.tris.len())
            .field("hittable", &self.hittable)
            .field("wide_nodes", &self.wide.get().map_or(0, Vec::len))
            .finish()
    }
}

/// A triangle during the build: its box (a point for triangles with non-finite corners), in four-lane vectors so
/// the binning loop runs on SIMD min/max. The `w` lanes carry the input index, as two exact 16-bit halves.
#[derive(Clone, Copy)]
struct Prim {
    min: Vec4,
    max: Vec4,
}

impl Prim {
    fn new(min: Vec3, max: Vec3, id: u32) -> Self {
        Self {
            min: min.extend((id & 0xFFFF) as f32),
            max: max.extend((id >> 16) as f32),
        }
    }

    fn id(&self) -> u32 {
        self.min.w as u32 | (self.max.w as u32) << 16
    }

    /// Box centroid; the `w` lane is meaningless.
    #[inline(always)]
    fn centroid(&self) -> Vec4 {
        self.min * 0.5 + self.max * 0.5
    }
}

/// SAH bins of one axis: the box (`w` lanes meaningless) and number of the triangles whose centroids fall in each.
#[derive(Clone, Copy)]
struct Bins {
    min: [Vec4; BINS],
    max: [Vec4; BINS],
    count: [u32; BINS],
}

impl Bins {
    const EMPTY: Bins = Bins {
        min: [Vec4::INFINITY; BINS],
        max: [Vec4::NEG_INFINITY; BINS],
        count: [0; BINS],
    };
}

/// Half the surface area of a box (the SAH only compares areas); zero for an empty box. Ignores `w`.
#[inline(always)]
fn half_area(min: Vec4, max: Vec4) -> f32 {
    let d = (max - min).max(Vec4::ZERO);
    let p = d * d.yzxw(); // (dx dy, dy dz, dz dx, _)
    p.x + p.y + p.z
}

/// 2^23: adding it to a float in [0, 2^23) leaves the nearest integer in the low mantissa bits.
const MAGIC: f32 = 8_388_608.0;

/// Bin coordinates for binning: `scale` is `bins / extent` per axis (zero on a flat axis); `limit` is
/// `MAGIC + bins - 1`. Computes `(c - cmin) * scale` rounded to the nearest integer and capped at `bins - 1`, in all
/// lanes at once, as floats whose low mantissa bits are the bin index (see [`lane_bin`]). The binning and the
/// partition both call this, so they agree on every triangle's bin.
#[inline(always)]
fn bin_coords(c: Vec4, cmin: Vec4, scale: Vec4, limit: Vec4) -> Vec4 {
    ((c - cmin) * scale + Vec4::splat(MAGIC)).min(limit)
}

/// The bin index in one lane of [`bin_coords`]'s result (always below [`BINS`]).
#[inline(always)]
fn lane_bin(k: f32) -> usize {
    (k.to_bits() & (BINS as u32 - 1)) as usize
}

/// A pending node of the build: its node index, its range of `prims`, its centroid bounds, its depth.
struct Task {
    node: usize,
    start: usize,
    end: usize,
    cmin: Vec4,
    cmax: Vec4,
    depth: u32,
}

/// Centroid bounds of some prims.
fn centroid_bounds(prims: &[Prim]) -> (Vec4, Vec4) {
    prims.iter().fold((Vec4::INFINITY, Vec4::NEG_INFINITY), |(lo, hi), p| {
        let c = p.centroid();
        (lo.min(c), hi.max(c))
    })
}

/// How to split a node's prims: the split index into the node's range and the two children's centroid bounds.
type Split = (usize, [Vec4; 2], [Vec4; 2]);

/// Binned SAH split of `prims` (Wald 2007), more than [`MAX_LEAF`] of them: bins the centroids into up to
/// [`BINS`] bins on each axis (fewer for small nodes), evaluates the planes between bins with the cost
/// `area(left) * count(left) + area(right) * count(right)`, partitions at the cheapest. Median split if no plane
/// separates them.
fn split_sah(prims: &mut [Prim], cmin: Vec4, cmax: Vec4) -> Split {
    let n = prims.len();
    let nb = (n / 2).clamp(4, BINS);
    let extent = cmax - cmin;
    let mut scale = Vec4::ZERO;
    for a in 0..3 {
        let e = extent[a];
        if e > 0.0 && e.is_finite() {
            scale[a] = nb as f32 / e;
        }
    }
    let limit = Vec4::splat(MAGIC + (nb - 1) as f32);
    let mut bins = [Bins::EMPTY; 3];
    // Large nodes bin an evenly strided sample of about SAMPLE triangles: the plane it picks is as good.
    let step = (n / SAMPLE).max(1);
    let total = n.div_ceil(step);
    for p in prims.iter().step_by(step) {
        let k = bin_coords(p.centroid(), cmin, scale, limit);
        for (a, axis) in bins.iter_mut().enumerate() {
            let b = lane_bin(k[a]);
            axis.min[b] = axis.min[b].min(p.min);
            axis.max[b] = axis.max[b].max(p.max);
            axis.count[b] += 1;
        }
    }
    let mut best: Option<(f32, usize, usize)> = None; // (cost, axis, first bin on the right)
    for (a, axis) in bins.iter().enumerate() {
        if scale[a] == 0.0 {
            continue;
        }
        // right[i]: area * count of bins i.. (suffix sums).
        let mut right = [0.0f32; BINS];
        let (mut rmin, mut rmax, mut rn) = (Vec4::INFINITY, Vec4::NEG_INFINITY, 0u32);
        for i in (1..nb).rev() {
            rmin = rmin.min(axis.min[i]);
            rmax = rmax.max(axis.max[i]);
            rn += axis.count[i];
            right[i] = half_area(rmin, rmax) * rn as f32;
        }
        let (mut lmin, mut lmax, mut ln) = (Vec4::INFINITY, Vec4::NEG_INFINITY, 0u32);
        for (i, &right_cost) in right.iter().enumerate().take(nb).skip(1) {
            lmin = lmin.min(axis.min[i - 1]);
            lmax = lmax.max(axis.max[i - 1]);
            ln += axis.count[i - 1];
            if ln == 0 || ln as usize == total {
                continue;
            }
            let cost = half_area(lmin, lmax) * ln as f32 + right_cost;
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, a, i));
            }
        }
    }
    let Some((_, axis, split)) = best.filter(|(c, _, _)| c.is_finite()) else {
        return split_median(prims, cmin, cmax);
    };
    // Branch-free partition in place (a Lomuto scheme: prims[..i] go left), gathering each side's centroid bounds.
    let mut i = 0;
    let (mut lmin, mut lmax) = (Vec4::INFINITY, Vec4::NEG_INFINITY);
    let (mut rmin, mut rmax) = (Vec4::INFINITY, Vec4::NEG_INFINITY);
    for j in 0..n {
        let p = prims[j];
        let c = p.centroid();
        let left = lane_bin(bin_coords(c, cmin, scale, limit)[axis]) < split;
        let m = BVec4A::splat(left);
        lmin = lmin.min(Vec4::select(m, c, Vec4::INFINITY));
        lmax = lmax.max(Vec4::select(m, c, Vec4::NEG_INFINITY));
        rmin = rmin.min(Vec4::select(m, Vec4::INFINITY, c));
        rmax = rmax.max(Vec4::select(m, Vec4::NEG_INFINITY, c));
        prims[j] = prims[i];
        prims[i] = p;
        i += usize::from(left);
    }
    (i, [lmin, lmax], [rmin, rmax])
}

/// Split `prims` (more than one) in two halves by count along the axis of largest centroid extent (or as they lie,
/// if all centroids coincide). Used when the SAH finds no plane, and below [`MAX_SAH_DEPTH`].
fn split_median(prims: &mut [Prim], cmin: Vec4, cmax: Vec4) -> Split {
    let mid = prims.len() / 2;
    let extent = (cmax - cmin).truncate();
    let axis = extent.max_position();
    if extent[axis] > 0.0 {
        prims.select_nth_unstable_by(mid, |p, q| p.centroid()[axis].total_cmp(&q.centroid()[axis]));
    }
    let (l, r) = prims.split_at(mid);
    let (lmin, lmax) = centroid_bounds(l);
    let (rmin, rmax) = centroid_bounds(r);
    (mid, [lmin, lmax], [rmin, rmax])
}

/// A node with an empty box, to be filled in.
const EMPTY_NODE: Node = Node {
    min: Vec3::INFINITY,
    max: Vec3::NEG_INFINITY,
    first: 0,
    count: 0,
};

/// The tree's topology over `prims` (reordered so that each leaf's are contiguous), boxes left empty for
/// [`TriangleBvh::fit`]. The top levels, down to nodes of [`PARALLEL_GRAIN`] triangles, are split in parallel
/// (rayon's fork-join) into [`Piece`]s; the pieces are then laid out in one pass, so the result does not depend on
/// the scheduling.
fn build_nodes(prims: &mut [Prim]) -> Vec<Node> {
    if prims.is_empty() {
        return Vec::new();
    }
    let (cmin, cmax) = centroid_bounds(prims);
    lay_out(build_piece(prims, 0, cmin, cmax, 0))
}

/// Lay out a tree built in [`Piece`]s as one flat node array, root first, the two children of a node adjacent, in
/// a fixed depth-first order (so the result does not depend on how the pieces were scheduled).
fn lay_out(top: Piece) -> Vec<Node> {
    // The exact node count, so the array is allocated once at its final size.
    let mut total = 1;
    let mut pieces = vec![&top];
    while let Some(piece) = pieces.pop() {
        match piece {
            Piece::Split(children) => {
                total += 2;
                pieces.push(&children.0);
                pieces.push(&children.1);
            }
            Piece::Subtree(sub) => total += sub.len() - 1,
        }
    }
    let mut nodes = Vec::with_capacity(total);
    nodes.push(EMPTY_NODE);
    let mut pending = vec![(top, 0usize)];
    while let Some((piece, at)) = pending.pop() {
        match piece {
            Piece::Split(children) => {
                let (left, right) = *children;
                let first = nodes.len();
                nodes[at].first = first as u32;
                nodes.push(EMPTY_NODE);
                nodes.push(EMPTY_NODE);
                pending.push((right, first + 1));
                pending.push((left, first));
            }
            Piece::Subtree(sub) => {
                // Local node k > 0 lands at base + k - 1; the local root replaces node `at`.
                let base = nodes.len();
                nodes.reserve(sub.len() - 1);
                for (k, mut node) in sub.into_iter().enumerate() {
                    if node.count == 0 {
                        node.first = (base + node.first as usize - 1) as u32;
                    }
                    if k == 0 {
                        nodes[at] = node;
                    } else {
                        nodes.push(node);
                    }
                }
            }
        }
    }
    nodes
}

/// Part of the tree during a parallel build: a split whose two halves were built concurrently, or a subtree built
/// on one thread (nodes indexed from its root at 0, triangle ranges already global).
enum Piece {
    Split(Box<(Piece, Piece)>),
    Subtree(Vec<Node>),
}

/// Build the part of the tree over `prims` (prim numbers from `offset`), splitting nodes larger than
/// [`PARALLEL_GRAIN`] and recursing into both halves at once with `rayon::join`. The recursion is as deep as the
/// tree's levels above the grain: at most [`MAX_SAH_DEPTH`] plus 32.
fn build_piece(prims: &mut [Prim], offset: usize, cmin: Vec4, cmax: Vec4, depth: u32) -> Piece {
    let n = prims.len();
    if n <= PARALLEL_GRAIN {
        let mut sub = Vec::with_capacity(n);
        sub.push(EMPTY_NODE);
        expand(
            prims,
            offset,
            Task {
                node: 0,
                start: 0,
                end: n,
                cmin,
                cmax,
                depth,
            },
            &mut sub,
        );
        return Piece::Subtree(sub);
    }
    let (mid, [lmin, lmax], [rmin, rmax]) = if depth < MAX_SAH_DEPTH {
        split_sah(prims, cmin, cmax)
    } else {
        split_median(prims, cmin, cmax)
    };
    let (left, right) = prims.split_at_mut(mid);
    let (left, right) = rayon::join(
        || build_piece(left, offset, lmin, lmax, depth + 1),
        || build_piece(right, offset + mid, rmin, rmax, depth + 1),
    );
    Piece::Split(Box::new((left, right)))
}

/// Split `root` (whose node exists in `nodes`) top-down, iteratively, adding nodes; `prims` is the range of prims
/// that `root`'s indices refer to, starting at prim number `offset`.
fn expand(prims: &mut [Prim], offset: usize, root: Task, nodes: &mut Vec<Node>) {
    let mut tasks = vec![root];
    while let Some(task) = tasks.pop() {
        let n = task.end - task.start;
        if n <= MAX_LEAF {
            // Fits in u32: there are at most u32::MAX + 1 prims.
            nodes[task.node].first = (offset + task.start) as u32;
            nodes[task.node].count = n as u32;
            continue;
        }
        let range = &mut prims[task.start..task.end];
        let (mid, [lmin, lmax], [rmin, rmax]) = if task.depth < MAX_SAH_DEPTH {
            split_sah(range, task.cmin, task.cmax)
        } else {
            split_median(range, task.cmin, task.cmax)
        };
        let left = nodes.len();
        nodes[task.node].first = left as u32;
        nodes.push(EMPTY_NODE);
        nodes.push(EMPTY_NODE);
        let (mid, depth) = (task.start + mid, task.depth + 1);
        tasks.push(Task {
            node: left + 1,
            start: mid,
            end: task.end,
            cmin: rmin,
            cmax: rmax,
            depth,
        });
        tasks.push(Task {
            node: left,
            start: task.start,
            end: mid,
            cmin: lmin,
            cmax: lmax,
            depth,
        });
    }
}

/// The copies of `triangles[ids[k]]` into `out[k]` ([`Tri::make`]).
#[inline(always)]
fn make_tris_portable(positions: &[Vec3], triangles: &[[u32; 3]], ids: &[u32], out: &mut [Tri]) {
    for (o, &i) in out.iter_mut().zip(ids) {
        *o = Tri::make(positions, triangles[i as usize]);
    }
}

crate::simd::two_copies! {
    /// [`make_tris_portable`], compiled twice.
    fn make_tris(positions: &[Vec3], triangles: &[[u32; 3]], ids: &[u32], out: &mut [Tri])
        = make_tris_v3 / make_tris_portable
}

/// The box centroid of each of `tris` (in range of `positions`; a triangle with a non-finite corner is placed at
/// its first finite corner, or the origin) into `out`, NaN for a triangle out of range, and the centroids' bounds.
#[inline(always)]
fn centroids_into_portable(positions: &[Vec3], tris: &[[u32; 3]], out: &mut [Vec3]) -> (Vec3, Vec3) {
    let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
    for (o, &tri) in out.iter_mut().zip(tris) {
        let Some([a, b, c]) = corners(positions, tri) else {
            *o = Vec3::NAN;
            continue;
        };
        let centroid = if a.is_finite() && b.is_finite() && c.is_finite() {
            a.min(b).min(c) * 0.5 + a.max(b).max(c) * 0.5
        } else {
            [a, b, c].into_iter().find(|p| p.is_finite()).unwrap_or(Vec3::ZERO)
        };
        *o = centroid;
        lo = lo.min(centroid);
        hi = hi.max(centroid);
    }
    (lo, hi)
}

crate::simd::two_copies! {
    /// [`centroids_into_portable`], compiled twice.
    fn centroids_into(positions: &[Vec3], tris: &[[u32; 3]], out: &mut [Vec3]) -> (Vec3, Vec3)
        = centroids_into_v3 / centroids_into_portable
}

/// The sort keys of the triangles `tris` (input indices from `first`, an even number) with centroids `cs` (NaN
/// for a triangle out of range), two slots a pair of triangles `2k`, `2k + 1` into `out`: triangles that share an
/// edge are one item, `code << 32 | 2k` with [`PAIRED`] set, at the midpoint of their centroids (second slot left
/// `u64::MAX`); otherwise each its own item, `u64::MAX` for one out of range. `frame`: the Morton codes' half
/// lower corner and scale ([`morton_code`]).
#[inline(always)]
fn keys_into_portable(tris: &[[u32; 3]], cs: &[Vec3], first: usize, frame: (Vec3, Vec3), out: &mut [[u64; 2]]) {
    let key = |c: Vec3, i: usize| {
        if c.x.is_nan() {
            u64::MAX
        } else {
            u64::from(morton_code(c, frame.0, frame.1)) << 32 | i as u64
        }
    };
    for (k, (o, (t, c))) in out.iter_mut().zip(tris.chunks(2).zip(cs.chunks(2))).enumerate() {
        let i = first + 2 * k;
        let pair = t.len() == 2
            && !c[0].x.is_nan()
            && !c[1].x.is_nan()
            && t[0].iter().filter(|v| t[1].contains(v)).count() >= 2;
        *o = if pair {
            [key(c[0] * 0.5 + c[1] * 0.5, i) | PAIRED, u64::MAX]
        } else {
            [key(c[0], i), c.get(1).map_or(u64::MAX, |&c1| key(c1, i + 1))]
        };
    }
}

crate::simd::two_copies! {
    /// [`keys_into_portable`], compiled twice.
    fn keys_into(tris: &[[u32; 3]], cs: &[Vec3], first: usize, frame: (Vec3, Vec3), out: &mut [[u64; 2]])
        = keys_into_v3 / keys_into_portable
}

/// Marks a linear build's sort key as a pair of triangles' (a bit above the code's, which the sort ignores).
const PAIRED: u64 = 1 << 62;
/// The code's bits in the upper half of a sort key.
const CODE_MASK: u32 = (1 << (3 * MORTON_BITS)) - 1;

/// Bits per axis of the Morton codes of [`TriangleBvh::new_linear`] (30-bit codes).
const MORTON_BITS: u32 = 10;
/// Depth below which the linear build stops splitting at Morton bits and splits at the middle instead. Morton splits
/// alone give at most 30 levels plus 32 of middle splits over runs of equal codes; this bounds the depth (under
/// `MAX_LINEAR_DEPTH + 32`) independently of that argument.
const MAX_LINEAR_DEPTH: u32 = 48;

/// The 10 low bits of `v` spread out to every third bit (bit `i` moves to bit `3 i`).
#[inline(always)]
fn spread_bits(v: u32) -> u32 {
    let mut x = v & 0x3FF;
    x = (x | x << 16) & 0x0300_00FF;
    x = (x | x << 8) & 0x0300_F00F;
    x = (x | x << 4) & 0x030C_30C3;
    x = (x | x << 2) & 0x0924_9249;
    x
}

/// The 30-bit Morton code of the point `c` in the box `[lo, lo + 2 * half_extent]`, given `scale = 1024 /
/// half_extent` per axis (zero on a flat axis): each coordinate quantised to 10 bits (rounded to the nearest
/// cell), the bits interleaved `x y z` from the most significant. Never panics (a NaN coordinate counts as 0).
#[inline(always)]
fn morton_code(c: Vec3, half_lo: Vec3, scale: Vec3) -> u32 {
    let max = ((1u32 << MORTON_BITS) - 1) as f32;
    let q = ((c * 0.5 - half_lo) * scale).clamp(Vec3::ZERO, Vec3::splat(max));
    // To the nearest integer without a saturating cast: 1.5 * 2^23 plus a value in [0, 2^22) is exact to the unit,
    // in the low bits of the sum's representation.
    let int = |x: f32| (x + 12_582_912.0).to_bits().wrapping_sub(0x4B40_0000) & 0x3FF;
    spread_bits(int(q.x)) << 2 | spread_bits(int(q.y)) << 1 | spread_bits(int(q.z))
}

/// Sort `(code << 32 | index)` keys whose indices are already increasing by their 30-bit codes: a stable LSD radix
/// sort, three passes of 10 bits, so the result equals sorting the keys outright (deterministic).
fn radix_sort_codes(keys: &mut Vec<u64>) {
    const RADIX: usize = 1 << MORTON_BITS;
    let digit = |k: u64, pass: usize| (k >> (32 + MORTON_BITS as usize * pass)) as usize & (RADIX - 1);
    // The three passes' digit counts in one read of the keys.
    let mut counts = vec![[0u32; RADIX]; 3];
    for &k in keys.iter() {
        for (pass, count) in counts.iter_mut().enumerate() {
            count[digit(k, pass)] += 1;
        }
    }
    let mut other = vec![0u64; keys.len()];
    for (pass, count) in counts.iter().enumerate() {
        if count.contains(&(keys.len() as u32)) {
            continue; // one digit only: this pass would not move anything
        }
        let mut start = [0u32; RADIX];
        let mut sum = 0;
        for (s, &c) in start.iter_mut().zip(count) {
            (*s, sum) = (sum, sum + c);
        }
        for &k in keys.iter() {
            let d = digit(k, pass);
            other[start[d] as usize] = k;
            start[d] += 1;
        }
        std::mem::swap(keys, &mut other);
    }
}

/// Where to split a node of the linear build over `codes` (sorted, more than one): at the first code whose highest
/// bit differing between the first and last codes is set (a Morton split, Lauterbach et al. 2009), or at the middle
/// when all codes are equal or the node lies at [`MAX_LINEAR_DEPTH`] or deeper. Always in `1..codes.len()`.
fn split_morton(codes: &[u32], depth: u32) -> usize {
    let n = codes.len();
    let diff = codes[0] ^ codes[n - 1];
    if diff == 0 || depth >= MAX_LINEAR_DEPTH {
        return n / 2;
    }
    let bit = 1u32 << (31 - diff.leading_zeros());
    // The codes share every bit above `bit`, so those with it clear all come first.
    codes.partition_point(|&c| c & bit == 0)
}

/// The linear build's counterpart of [`build_piece`]: the tree over the sorted items' `codes` (item numbers from
/// `offset`; item `i`'s triangles are `starts[i]..starts[i + 1]`, `starts` covering all items), nodes larger than
/// [`PARALLEL_GRAIN`] items split with `rayon::join`, smaller subtrees by [`expand_linear`].
fn build_piece_linear(codes: &[u32], starts: &[u32], offset: usize, depth: u32) -> Piece {
    let n = codes.len();
    if n <= PARALLEL_GRAIN {
        // About two nodes for every three triangles in practice (at most 2 n - 1).
        let mut sub = Vec::with_capacity(n);
        sub.push(EMPTY_NODE);
        expand_linear(codes, starts, offset, depth, &mut sub);
        return Piece::Subtree(sub);
    }
    let mid = split_morton(codes, depth);
    let (left, right) = codes.split_at(mid);
    let (left, right) = rayon::join(
        || build_piece_linear(left, starts, offset, depth + 1),
        || build_piece_linear(right, starts, offset + mid, depth + 1),
    );
    Piece::Split(Box::new((left, right)))
}

/// Split the subtree over the items `codes` (its root node already in `nodes` at index 0, at depth `depth`)
/// top-down with an explicit stack, adding nodes; leaves of at most [`MAX_LINEAR_LEAF`] triangles (an item has one or
/// two), whose ranges are in triangles.
fn expand_linear(codes: &[u32], starts: &[u32], offset: usize, depth: u32, nodes: &mut Vec<Node>) {
    // (node, start, end, depth)
    let mut tasks = vec![(0usize, 0usize, codes.len(), depth)];
    while let Some((node, start, end, depth)) = tasks.pop() {
        let (first, last) = (starts[offset + start], starts[offset + end]);
        if last - first <= MAX_LINEAR_LEAF as u32 {
            nodes[node].first = first;
            nodes[node].count = last - first;
            continue;
        }
        let mid = start + split_morton(&codes[start..end], depth);
        let left = nodes.len();
        nodes[node].first = left as u32;
        nodes.push(EMPTY_NODE);
        nodes.push(EMPTY_NODE);
        tasks.push((left + 1, mid, end, depth + 1));
        tasks.push((left, start, mid, depth + 1));
    }
}

/// The box-test state of one query: origin, inverse direction, which axes run backwards, and the margin by which
/// boxes are widened (in units of the ray parameter).
#[derive(Clone, Copy)]
struct RayBox {
    origin: Vec3,
    inv: Vec3,
    neg: [bool; 3],
    margin: f32,
}

impl RayBox {
    /// `root` bounds the whole scene: the margin is [`MARGIN_EPS`] `* f32::EPSILON *` (the distance from the
    /// origin to the scene's far side) `/ |dir|`, which exceeds both the rounding error of the slab distances and
    /// that of the triangle test's `t` (a few ulps of the origin-to-corner distance over `|dir|`) except for rays
    /// that graze a triangle's plane.
    fn new(origin: Vec3, dir: Vec3, root: &Node) -> Self {
        Self::with_scale(origin, dir, Self::margin_scale(origin, root))
    }

    /// The margin times `|dir|`: [`MARGIN_EPS`] `* f32::EPSILON *` (the distance from `origin` to the scene's far
    /// side), the same for every direction from `origin`.
    fn margin_scale(origin: Vec3, root: &Node) -> f32 {
        MARGIN_EPS * f32::EPSILON * Self::scene_reach(origin, root)
    }

    /// The distance from `origin` to the far side of the scene bounded by `root` (at most: the distance to the
    /// centre of its box plus the box's half diagonal).
    fn scene_reach(origin: Vec3, root: &Node) -> f32 {
        let center = root.min * 0.5 + root.max * 0.5;
        let radius = (root.max * 0.5 - root.min * 0.5).length();
        (origin - center).length() + radius
    }

    /// [`Self::new`] with the origin's [`Self::margin_scale`] given.
    fn with_scale(origin: Vec3, dir: Vec3, scale: f32) -> Self {
        let inv = dir.recip();
        // The largest component stands in for |dir| (within a factor of √3) and cannot overflow.
        let margin = scale / dir.abs().max_element();
        Self {
            origin,
            inv,
            neg: [
                inv.x.is_sign_negative(),
                inv.y.is_sign_negative(),
                inv.z.is_sign_negative(),
            ],
            margin,
        }
    }

    /// Slab test of `node`'s box against the parameter interval `[t_lo, t_hi]`: the entry parameter (at least
    /// `t_lo`) if the ray passes through the box (widened by the margin) within the interval. A NaN slab distance
    /// (origin on a box plane of an axis the ray runs parallel to) does not constrain the interval.
    #[inline(always)]
    fn enter(&self, node: &Node, t_lo: f32, t_hi: f32) -> Option<f32> {
        let t1 = (node.min - self.origin) * self.inv;
        let t2 = (node.max - self.origin) * self.inv;
        let (lx, hx) = if self.neg[0] { (t2.x, t1.x) } else { (t1.x, t2.x) };
        let (ly, hy) = if self.neg[1] { (t2.y, t1.y) } else { (t1.y, t2.y) };
        let (lz, hz) = if self.neg[2] { (t2.z, t1.z) } else { (t1.z, t2.z) };
        // `if x > near` keeps `near` when x is NaN; likewise for far.
        let mut near = t_lo;
        let mut far = t_hi;
        for (l, h) in [(lx, hx), (ly, hy), (lz, hz)] {
            near = if l > near { l } else { near };
            far = if h < far { h } else { far };
        }
        if near <= far + self.margin { Some(near) } else { None }
    }
}

impl TriangleBvh {
    /// Build the tree over `triangles` (indices into `positions`) by binned SAH (Wald 2007), leaves of at most 4
    /// triangles, deterministically; the top levels of large meshes are split in parallel (rayon), the rest with an
    /// explicit stack. About 0.35 s for 2 million triangles on two cores.
    ///
    /// Triangles whose indices are out of range or that are degenerate (zero area or non-finite) are skipped (never
    /// panic). Degenerate triangles with in-range indices stay in the tree, never hit, so that [`Self::refit`] can
    /// bring them back if their vertices move apart; triangles out of range here are gone for good.
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]]) -> Self {
        let mut prims = Vec::with_capacity(triangles.len());
        for (i, &tri) in triangles.iter().enumerate() {
            let Ok(id) = u32::try_from(i) else { break };
            let Some([a, b, c]) = corners(positions, tri) else {
                continue;
            };
            let (min, max) = if a.is_finite() && b.is_finite() && c.is_finite() {
                (a.min(b).min(c), a.max(b).max(c))
            } else {
                // Placed for the build only: its real box (empty) comes from `fit`.
                let p = [a, b, c].into_iter().find(|p| p.is_finite()).unwrap_or(Vec3::ZERO);
                (p, p)
            };
            prims.push(Prim::new(min, max, id));
        }
        let nodes = build_nodes(&mut prims);
        let ids: Vec<u32> = prims.iter().map(Prim::id).collect();
        drop(prims);
        Self::with_layout(positions, triangles, nodes, ids)
    }

    /// A built tree: its `nodes` (boxes not yet fitted) over the triangles `ids` (input indices in leaf order),
    /// the copies made from `positions` (in parallel for large meshes, writing fresh memory from all threads),
    /// then every box fitted.
    #[inline(always)]
    fn with_layout(positions: &[Vec3], triangles: &[[u32; 3]], nodes: Vec<Node>, ids: Vec<u32>) -> Self {
        use rayon::prelude::*;
        let mut tris = vec![Tri::never([0; 3]); ids.len()];
        tris.par_chunks_mut(PARALLEL_FIT)
            .zip(ids.par_chunks(PARALLEL_FIT))
            .for_each(|(out, ids)| make_tris(positions, triangles, ids, out));
        let mut bvh = Self {
            nodes,
            tris,
            ids,
            hittable: 0,
            stamp: 0,
            wide: OnceLock::new(),
        };
        bvh.fit_boxes();
        bvh
    }

    crate::simd::two_copies! {
        /// A linear BVH (after Lauterbach et al., "Fast BVH construction on GPUs", Eurographics 2009, and Karras,
        /// "Maximizing parallelism in the construction of BVHs, octrees, and k-d trees", HPG 2012): triangles sorted by
        /// the 30-bit Morton code of their box centroids (quantised in the centroids' bounding box), split top-down at
        /// the highest differing bit (runs of equal codes at the middle; leaves of at most 8), boxes fitted bottom-up.
        ///
        /// Builds several times faster than [`Self::new`] (the centroids, codes and triangle copies are made in
        /// parallel blocks, the (code, index) pairs sorted by a radix sort, the top levels split in parallel); the
        /// tree has the same layout, so queries answer identically (same routine, same tie rule), if possibly a
        /// little slower. Same input handling as [`Self::new`], deterministic, depth under `MAX_LINEAR_DEPTH + 32`
        /// (less than the traversal stack).
        pub fn new_linear(positions: &[Vec3], triangles: &[[u32; 3]]) -> Self = Self::new_linear_v3 / Self::new_linear_portable
    }

    #[inline(always)]
    fn new_linear_portable(positions: &[Vec3], triangles: &[[u32; 3]]) -> Self {
        use rayon::prelude::*;
        let usable = &triangles[..triangles.len().min(u32::MAX as usize + 1)];
        // Centroids in input order, NaN (never a centroid) for triangles out of range, and their bounds: in
        // blocks, each by a loop in this function's instruction set (a closure handed to rayon item by item would
        // run in the baseline one).
        let mut centroids = vec![Vec3::NAN; usable.len()];
        let empty = || (Vec3::INFINITY, Vec3::NEG_INFINITY);
        let (lo, hi) = centroids
            .par_chunks_mut(PARALLEL_FIT)
            .zip(usable.par_chunks(PARALLEL_FIT))
            .map(|(out, tris)| centroids_into(positions, tris, out))
            .reduce(empty, |(l1, h1), (l2, h2)| (l1.min(l2), h1.max(h2)));
        // Halved coordinates cannot overflow when subtracted.
        let (half_lo, half_extent) = (lo * 0.5, hi * 0.5 - lo * 0.5);
        let cells = (1u32 << MORTON_BITS) as f32;
        // Cubic cells (one scale for all axes, from the longest), so that Morton splits cut nodes into boxes of
        // similar proportions whatever the mesh's shape.
        let longest = half_extent.max_element();
        let scale = Vec3::splat(if longest > 0.0 { cells / longest } else { 0.0 });
        // The build sorts and splits items of one triangle or two: triangles `2k` and `2k + 1` that share an edge
        // (the two halves of a quad, as most meshes list them) are one item, placed at the midpoint of their
        // centroids, so the sort, the splits and the node count are about halved; leaves still hold at most
        // [`MAX_LINEAR_LEAF`] triangles, and every query answers as before (only the tree's shape differs).
        // (code, input index of the item's first triangle), all distinct, in input order, with `PAIRED` set for a
        // pair; `u64::MAX` (then removed) for triangles out of range and the second slot of a pair. In blocks of
        // whole pairs, as the centroids.
        let mut slots = vec![[u64::MAX; 2]; usable.len().div_ceil(2)];
        slots
            .par_chunks_mut(PARALLEL_FIT / 2)
            .zip(usable.par_chunks(PARALLEL_FIT).zip(centroids.par_chunks(PARALLEL_FIT)))
            .enumerate()
            .for_each(|(b, (out, (tris, cs)))| keys_into(tris, cs, b * PARALLEL_FIT, (half_lo, scale), out));
        drop(centroids);
        let mut keys = slots.into_flattened();
        keys.retain(|&k| k != u64::MAX);
        radix_sort_codes(&mut keys);
        let codes: Vec<u32> = keys.par_iter().map(|&k| (k >> 32) as u32 & CODE_MASK).collect();
        // The items' triangles in sorted order, and where each item's begin among them.
        let mut ids = Vec::with_capacity(usable.len());
        let mut starts = Vec::with_capacity(keys.len() + 1);
        for &k in &keys {
            let i = k as u32;
            starts.push(ids.len() as u32);
            ids.push(i);
            if k & PAIRED != 0 {
                ids.push(i + 1);
            }
        }
        starts.push(ids.len() as u32);
        drop(keys);
        let nodes = if codes.is_empty() {
            Vec::new()
        } else {
            lay_out(build_piece_linear(&codes, &starts, 0, 0))
        };
        drop(codes);
        drop(starts);
        Self::with_layout(positions, triangles, nodes, ids)
    }

    /// Update the boxes for moved vertices (same triangles), keeping the tree's topology: for the deformed mesh while
    /// painting.
    ///
    /// Linear in the triangle count and much cheaper than [`Self::new`], but the tree's quality degrades as the
    /// mesh moves far from the shape it was built for; rebuild after large changes. Triangles that have become
    /// degenerate, or whose indices are out of range of `positions`, stop being hit; degenerate ones that have
    /// become proper are hit again.
    pub fn refit(&mut self, positions: &[Vec3]) {
        self.fit(positions);
    }

    crate::simd::two_copies! {
        /// Recompute the triangle copies from `positions` (in parallel for large meshes), then every box
        /// ([`Self::fit_boxes`]).
        fn fit(&mut self, positions: &[Vec3]) = Self::fit_v3 / Self::fit_portable
    }

    #[inline(always)]
    fn fit_portable(&mut self, positions: &[Vec3]) {
        use rayon::prelude::*;
        let remake = |t: &mut Tri| *t = Tri::make(positions, t.idx);
        if self.tris.len() >= PARALLEL_FIT {
            self.tris.par_iter_mut().for_each(remake);
        } else {
            self.tris.iter_mut().for_each(remake);
        }
        self.fit_boxes();
    }

    /// Every box from the triangle copies, bottom-up (children follow their parents in `nodes`, so a reverse sweep
    /// sees children first); the leaves' boxes come from the copies' corners. Min and max are exact, so the boxes
    /// do not depend on the order.
    #[inline(always)]
    fn fit_boxes(&mut self) {
        let mut hittable = 0;
        for k in (0..self.nodes.len()).rev() {
            let node = self.nodes[k];
            let (mut min, mut max) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
            if node.count > 0 {
                for tri in &self.tris[node.first as usize..(node.first + node.count) as usize] {
                    let (lo, hi) = tri.bounds();
                    min = min.min(lo);
                    max = max.max(hi);
                    hittable += usize::from(tri.hittable());
                }
            } else {
                let (l, r) = (self.nodes[node.first as usize], self.nodes[node.first as usize + 1]);
                min = l.min.min(r.min);
                max = l.max.max(r.max);
            }
            self.nodes[k].min = min;
            self.nodes[k].max = max;
        }
        self.hittable = hittable;
        self.stamp = STAMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.wide = OnceLock::new();
    }

    /// Nearest hit of the ray `origin + t * dir` with `t` in `[t_min, t_max]`; `dir` need not be normalised (`t` is
    /// in units of `dir`). Both faces count. Among hits at the same `t` the lowest triangle index wins, so the
    /// answer equals [`ray_cast_naive`]'s. `None` for a zero or non-finite direction or a non-finite origin.
    pub fn ray_cast(&self, origin: Vec3, dir: Vec3, t_min: f32, t_max: f32) -> Option<Hit> {
        if self.hittable == 0 || !query_ok(origin, dir) {
            return None;
        }
        let ray = RayBox::new(origin, dir, &self.nodes[0]);
        ray.enter(&self.nodes[0], t_min, t_max)?;
        let mut best: Option<Hit> = None;
        let mut t_hi = t_max;
        let mut stack = [(0u32, 0.0f32); STACK];
        let mut sp = 0;
        let mut at = 0usize;
        loop {
            let node = &self.nodes[at];
            if node.count > 0 {
                let range = node.first as usize..(node.first + node.count) as usize;
                for (tri, &id) in self.tris[range.clone()].iter().zip(&self.ids[range]) {
                    let Some((t, u, v)) = tri.intersect(origin, dir) else {
                        continue;
                    };
                    if t >= t_min && t <= t_hi && best.is_none_or(|b| t < b.t || id < b.triangle) {
                        best = Some(Hit { t, triangle: id, u, v });
                        t_hi = t;
                    }
                }
            } else {
                let left = node.first as usize;
                let hl = ray.enter(&self.nodes[left], t_min, t_hi);
                let hr = ray.enter(&self.nodes[left + 1], t_min, t_hi);
                match (hl, hr) {
                    (Some(tl), Some(tr)) => {
                        let (near, far, t_far) = if tr < tl {
                            (left + 1, left, tl)
                        } else {
                            (left, left + 1, tr)
                        };
                        stack[sp] = (far as u32, t_far);
                        sp += 1;
                        at = near;
                        continue;
                    }
                    (Some(_), None) => {
                        at = left;
                        continue;
                    }
                    (None, Some(_)) => {
                        at = left + 1;
                        continue;
                    }
                    (None, None) => {}
                }
            }
            // Pop the next subtree that may still hold a hit no farther than the best so far.
            loop {
                if sp == 0 {
                    return best;
                }
                sp -= 1;
                let (n, t_enter) = stack[sp];
                if t_enter <= t_hi + ray.margin {
                    at = n as usize;
                    break;
                }
            }
        }
    }

    /// True if the segment from `a` to `b` crosses any triangle at a parameter `s` in `(s_min, 1 - s_min)` along
    /// it (`s` in `[0, 1]`, the point being `a + s * (b - a)`); stops at the first hit found (any-hit traversal, no
    /// sorting needed), on the 4-wide copy of the tree (`bvh/wide.rs`). A positive `s_min` ignores the surface the
    /// segment starts or ends on. Equals [`segment_hits_naive`]; false for a zero-length or non-finite segment.
    pub fn segment_hits(&self, a: Vec3, b: Vec3, s_min: f32) -> bool {
        self.segment_hits_skipping(None, a, b, s_min)
    }

    /// [`Self::segment_hits`] from vertex `v` (at `a`), passing over the triangles that have `v` as a corner, as
    /// [`Self::segments_hit_from_vertex`] does for several segments; equals [`segment_hits_naive_skipping`].
    pub fn segment_hits_from_vertex(&self, v: u32, a: Vec3, b: Vec3, s_min: f32) -> bool {
        self.segment_hits_skipping(Some(v), a, b, s_min)
    }

    fn segment_hits_skipping(&self, skip: Option<u32>, a: Vec3, b: Vec3, s_min: f32) -> bool {
        if self.hittable == 0 {
            return false;
        }
        let mut hit = [false];
        let from = skip.as_ref().map(std::slice::from_ref);
        self.packet_into(None, from, &[a], &[b], s_min, &mut hit);
        hit[0]
    }

    /// [`Self::segment_hits`] for the segments from `a` to each of `ends` (same `s_min`), into `hits` (cleared, one
    /// answer per end, equal to that query's). Segments are traversed together, up to 32 at a time, so nodes and
    /// triangles that several of them reach are fetched once: cheaper than one query each when the segments leave
    /// `a` in similar directions, as a vertex's segments to its near bones do.
    pub fn segments_hit(&self, a: Vec3, ends: &[Vec3], s_min: f32, hits: &mut Vec<bool>) {
        self.segments_hit_skipping(None, a, ends, s_min, hits);
    }

    /// [`Self::segments_hit`] from vertex `v` (at `a`), passing over the triangles that have `v` as a corner: the
    /// segments start on them, so they can only be met at the start (which `s_min` excludes) or, for a segment that
    /// grazes one, by rounding. Binding's visibility test; equals [`segment_hits_naive_skipping`]. About two in five
    /// of the triangles such a query tests are the vertex's own.
    pub fn segments_hit_from_vertex(&self, v: u32, a: Vec3, ends: &[Vec3], s_min: f32, hits: &mut Vec<bool>) {
        self.segments_hit_skipping(Some(v), a, ends, s_min, hits);
    }

    fn segments_hit_skipping(&self, skip: Option<u32>, a: Vec3, ends: &[Vec3], s_min: f32, hits: &mut Vec<bool>) {
        hits.clear();
        hits.resize(ends.len(), false);
        self.segments_hit_within(None, skip, a, ends, s_min, hits);
    }

    /// Where [`Self::segments_hit_from_vertex_within`] begins its traversals for segments that lie in the box
    /// `lo..hi` (origin and ends inside it): the boxes of the tree that meet it (widened a little, for rounding),
    /// down to about `reach` times its size, so that the levels above are walked once for all those queries.
    pub fn segment_entry(&self, lo: Vec3, hi: Vec3, reach: f32, entry: &mut SegmentEntry) {
        entry.nodes.clear();
        entry.stamp = Some(self.stamp);
        let Some(root) = self.nodes.first().filter(|_| self.hittable > 0) else {
            return;
        };
        let wide = self.wide_nodes();
        if !(lo.is_finite() && hi.is_finite()) {
            // Begin at (a copy of) the root.
            entry.nodes.extend(wide.first());
            return;
        }
        // The traversal widens boxes by `RayBox::margin_scale` (64 ulps of the reach from the query's origin);
        // from any origin in the box the reach is at most the box centre's plus half its diagonal, and the pad is
        // over ten times that margin, which also covers the triangle test's rounding.
        let reach_in_box = RayBox::scene_reach((lo + hi) * 0.5, root) + (hi - lo).length() * 0.5;
        let pad = Vec3::splat(1e-4 * reach_in_box + f32::MIN_POSITIVE);
        wide::entry_nodes(wide, lo - pad, hi + pad, reach, &mut entry.nodes);
    }

    /// [`Self::segments_hit_from_vertex`] for segments inside the box `entry` was made for by
    /// [`Self::segment_entry`] (origin and every end): the same answers, the traversals begun at the entry's
    /// boxes, written into `hits` (one for each end: the caller sizes it to `ends`). Segments outside that box may
    /// be answered wrongly.
    pub fn segments_hit_from_vertex_within(
        &self,
        entry: &SegmentEntry,
        v: u32,
        a: Vec3,
        ends: &[Vec3],
        s_min: f32,
        hits: &mut [bool],
    ) {
        let start = (entry.stamp == Some(self.stamp)).then_some(entry.nodes.as_slice());
        self.segments_hit_within(start, Some(v), a, ends, s_min, hits);
    }

    fn segments_hit_within(
        &self,
        start: Option<&[wide::WideNode]>,
        skip: Option<u32>,
        a: Vec3,
        ends: &[Vec3],
        s_min: f32,
        hits: &mut [bool],
    ) {
        debug_assert_eq!(hits.len(), ends.len());
        if self.hittable == 0 {
            hits.iter_mut().for_each(|h| *h = false);
            return;
        }
        let (origins, from) = ([a; wide::PACKET], skip.map(|v| [v; wide::PACKET]));
        for (group, out) in ends.chunks(wide::PACKET).zip(hits.chunks_mut(wide::PACKET)) {
            let n = group.len();
            let from = from.as_ref().map(|f| &f[..n]);
            self.packet_into(start, from, &origins[..n], group, s_min, out);
        }
    }

    /// [`Self::segments_hit_from_vertex_within`] for the segments of several vertices at once (the ones a group of
    /// neighbouring vertices tests, all inside the box `entry` was made for): segment `k` runs from vertex
    /// `from[k]` at `origins[k]` to `ends[k]`, and bit `k` of the result says whether it crosses a triangle (the
    /// same answer as its own query). More than [`PACKET`] segments are answered a packet at a time.
    pub fn packet_hit_from_vertices_within(
        &self,
        entry: &SegmentEntry,
        from: &[u32],
        origins: &[Vec3],
        ends: &[Vec3],
        s_min: f32,
        hits: &mut [bool],
    ) {
        debug_assert!(from.len() == ends.len() && origins.len() == ends.len() && hits.len() == ends.len());
        if self.hittable == 0 {
            hits.iter_mut().for_each(|h| *h = false);
            return;
        }
        let start = (entry.stamp == Some(self.stamp)).then_some(entry.nodes.as_slice());
        for (k, out) in hits.chunks_mut(wide::PACKET).enumerate() {
            let r = k * wide::PACKET..k * wide::PACKET + out.len();
            self.packet_into(start, Some(&from[r.clone()]), &origins[r.clone()], &ends[r], s_min, out);
        }
    }

    /// One traversal ([`wide::packet_hit`]) of the segments from `origins[k]` to `ends[k]` (at most
    /// [`wide::PACKET`]; from the vertices `from`, whose own triangles are passed over, when given), counting
    /// crossings at `s` in `(s_min, 1 - s_min)`, answers into `hits`. Only for a tree with a hittable triangle.
    fn packet_into(
        &self,
        start: Option<&[wide::WideNode]>,
        from: Option<&[u32]>,
        origins: &[Vec3],
        ends: &[Vec3],
        s_min: f32,
        hits: &mut [bool],
    ) {
        let mut dirs = [Vec3::ZERO; wide::PACKET];
        for (d, (&a, &b)) in dirs.iter_mut().zip(origins.iter().zip(ends)) {
            *d = b - a;
        }
        let dirs = &dirs[..ends.len()];
        let mask = wide::packet_hit(self.wide_tree(), start, from, origins, dirs, (s_min, 1.0 - s_min));
        for (k, h) in hits.iter_mut().enumerate() {
            *h = mask >> k & 1 == 1;
        }
    }

    /// Make the 4-wide layout the segment queries use now (it is otherwise made by the first query, which other
    /// threads' queries then wait for).
    pub fn prepare_segment_queries(&self) {
        self.wide_nodes();
    }

    /// The tree as the 4-wide traversal reads it (made on first use). Only for a tree with a node.
    fn wide_tree(&self) -> wide::Tree<'_> {
        wide::Tree {
            wide: self.wide_nodes(),
            tris: &self.tris,
            root: &self.nodes[0],
        }
    }

    fn wide_nodes(&self) -> &[wide::WideNode] {
        self.wide.get_or_init(|| wide::collapse(&self.nodes))
    }

    /// Number of triangles that can currently be hit: in range and not degenerate at the last build or refit.
    pub fn triangle_count(&self) -> usize {
        self.hittable
    }

    /// Heap memory held by the tree, in bytes (allocated capacity).
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * size_of::<Node>()
            + self.tris.capacity() * size_of::<Tri>()
            + self.ids.capacity() * size_of::<u32>()
            + self.wide.get().map_or(0, Vec::capacity) * size_of::<wide::WideNode>()
    }
}

/// Naive reference for tests: the nearest hit over every triangle, no tree. Same semantics and same triangle
/// routine as [`TriangleBvh::ray_cast`] (skipped triangles, `[t_min, t_max]`, ties to the lowest index), so the
/// answers are equal.
pub fn ray_cast_naive(
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

/// Naive reference for tests: whether the segment from `a` to `b` crosses any triangle at `s` in `(s_min, 1 -
/// s_min)`, testing every triangle. Same semantics and routine as [`TriangleBvh::segment_hits`].
pub fn segment_hits_naive(positions: &[Vec3], triangles: &[[u32; 3]], a: Vec3, b: Vec3, s_min: f32) -> bool {
    naive_skipping(positions, triangles, None, a, b, s_min)
}

/// Naive reference for [`TriangleBvh::segment_hits_from_vertex`] and [`TriangleBvh::segments_hit_from_vertex`]:
/// [`segment_hits_naive`] passing over the triangles that have vertex `v` as a corner.
pub fn segment_hits_naive_skipping(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64* (Vigna 2016): a tiny deterministic generator for property tests (here and in `wide`'s).
    pub(super) struct Rng(pub(super) u64);

    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        /// Uniform in [0, 1).
        fn unit(&mut self) -> f32 {
            (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
        }
        fn range(&mut self, lo: f32, hi: f32) -> f32 {
            lo + (hi - lo) * self.unit()
        }
        pub(super) fn below(&mut self, n: usize) -> usize {
            (self.next_u64() % n as u64) as usize
        }
        fn vec(&mut self, lo: f32, hi: f32) -> Vec3 {
            Vec3::new(self.range(lo, hi), self.range(lo, hi), self.range(lo, hi))
        }
    }

    /// The next float above a non-negative finite `x` (`f32::next_up` is newer than the crate's MSRV).
    fn next_up(x: f32) -> f32 {
        f32::from_bits(x.to_bits() + 1)
    }

    /// The next float below a non-negative finite `x` (zero stays zero).
    fn next_down(x: f32) -> f32 {
        if x > 0.0 { f32::from_bits(x.to_bits() - 1) } else { x }
    }

    /// A soup of `n` independent triangles, sizes from tiny to large, some clustered.
    fn soup(rng: &mut Rng, n: usize) -> (Vec<Vec3>, Vec<[u32; 3]>) {
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
    fn grid(rng: &mut Rng, k: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let (positions, mut triangles) = quad_grid(k, || 0.0);
        for i in (1..triangles.len()).rev() {
            triangles.swap(i, rng.below(i + 1));
        }
        (positions, triangles)
    }

    /// A `k` x `k` grid of unit quads in the plane z = 0 raised by `z()` at each vertex, each quad two triangles
    /// (`2q` and `2q + 1`, sharing its diagonal), in order.
    fn quad_grid(k: u32, mut z: impl FnMut() -> f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
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
    fn icosphere(levels: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
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

    /// Random queries against the tree and the naive references; panics on the first disagreement.
    /// Both builders; the tests that loop over them hold for either tree.
    type Build = fn(&[Vec3], &[[u32; 3]]) -> TriangleBvh;
    const BUILDERS: [Build; 2] = [TriangleBvh::new, TriangleBvh::new_linear];

    fn check_against_naive(rng: &mut Rng, bvh: &TriangleBvh, positions: &[Vec3], triangles: &[[u32; 3]], n: usize) {
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
            let tree = bvh.segment_hits(a, b, s_min);
            let naive = segment_hits_naive(positions, triangles, a, b, s_min);
            assert_eq!(tree, naive, "segment {q}: {a} -> {b}, s_min {s_min}");

            // Several segments from one origin in one traversal (more than a group of eight at times), some
            // repeated, one of zero length, some along an axis: each answer is that segment's own.
            let mut ends: Vec<Vec3> = (0..1 + q % 11).map(|_| a + rng.vec(-1.5, 1.5)).collect();
            ends.push(a);
            ends.push(ends[0]);
            ends.push(a + Vec3::new(0.0, 0.0, rng.range(-2.0, 2.0)));
            let mut hits = vec![true; 3];
            bvh.segments_hit(a, &ends, s_min, &mut hits);
            assert_eq!(hits.len(), ends.len());
            for (k, (&e, &h)) in ends.iter().zip(&hits).enumerate() {
                let naive = segment_hits_naive(positions, triangles, a, e, s_min);
                assert_eq!(h, naive, "segment {q}, end {k}: {a} -> {e}, s_min {s_min}");
            }
            // From a vertex of the mesh, its own triangles passed over (binding's query).
            if let Some(&t) = triangles.get(q % triangles.len().max(1)) {
                let v = t[q % 3];
                if let Some(&p) = positions.get(v as usize) {
                    let ends: Vec<Vec3> = (0..1 + q % 5).map(|_| p + rng.vec(-1.0, 1.0)).collect();
                    bvh.segments_hit_from_vertex(v, p, &ends, s_min, &mut hits);
                    for (k, (&e, &h)) in ends.iter().zip(&hits).enumerate() {
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
        if bvh.triangle_count() >= 50 {
            assert!(hits > n / 10, "only {hits} of {n} rays hit");
        }
    }

    #[test]
    fn empty_mesh_finds_nothing() {
        let bvh = TriangleBvh::new(&[], &[]);
        assert_eq!(bvh.triangle_count(), 0);
        assert_eq!(bvh.ray_cast(Vec3::ZERO, Vec3::X, 0.0, f32::INFINITY), None);
        assert!(!bvh.segment_hits(Vec3::ZERO, Vec3::X, 0.0));
        // Triangles but no positions: all out of range.
        let bvh = TriangleBvh::new(&[], &[[0, 1, 2]]);
        assert_eq!(bvh.triangle_count(), 0);
        assert_eq!(bvh.ray_cast(Vec3::ZERO, Vec3::X, 0.0, f32::INFINITY), None);
        assert!(!bvh.segment_hits(-Vec3::X, Vec3::X, 0.0));
        let mut bvh = bvh;
        bvh.refit(&[Vec3::ZERO; 3]);
        assert_eq!(bvh.triangle_count(), 0);
    }

    #[test]
    fn single_triangle_hit_and_barycentrics() {
        let positions = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let bvh = TriangleBvh::new(&positions, &[[0, 1, 2]]);
        assert_eq!(bvh.triangle_count(), 1);
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
        assert!(bvh.segment_hits(p + Vec3::Z, p - Vec3::Z, 0.0));
        assert!(!bvh.segment_hits(p + Vec3::Z, p + 0.5 * Vec3::Z, 0.0));
        assert!(!bvh.segment_hits(p, p + Vec3::Z, 1e-4));
        // Zero-length or non-finite queries find nothing.
        assert!(!bvh.segment_hits(p, p, 0.0));
        assert_eq!(bvh.ray_cast(p + Vec3::Z, Vec3::ZERO, 0.0, f32::INFINITY), None);
        assert_eq!(bvh.ray_cast(Vec3::NAN, -Vec3::Z, 0.0, f32::INFINITY), None);
        assert_eq!(
            bvh.ray_cast(p + Vec3::Z, Vec3::new(0.0, 0.0, f32::NEG_INFINITY), 0.0, f32::INFINITY),
            None
        );
    }

    #[test]
    fn queries_begun_at_entry_boxes_answer_as_from_the_root() {
        // Segments from a vertex to ends inside a box, traversed from the tree's boxes that meet it (found once for
        // the box) rather than from the root: each answer equals the naive reference's. Boxes from a point to
        // most of the mesh, entry boxes cut at several sizes, both builders, meshes with and without structure.
        let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
        let meshes = [soup(&mut rng, 400), grid(&mut rng, 24), icosphere(3)];
        let mut entry = SegmentEntry::default();
        let mut hits = Vec::new();
        for (positions, triangles) in &meshes {
            for tree in [
                TriangleBvh::new(positions, triangles),
                TriangleBvh::new_linear(positions, triangles),
            ] {
                for q in 0..300 {
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
                    hits.resize(ends.len(), true);
                    tree.segments_hit_from_vertex_within(&entry, v, p, &ends, s_min, &mut hits);
                    for (&e, &h) in ends.iter().zip(&hits) {
                        let naive = segment_hits_naive_skipping(positions, triangles, v, p, e, s_min);
                        assert_eq!(
                            h, naive,
                            "query {q}: vertex {v} {p} -> {e}, box {lo}..{hi}, reach {reach}"
                        );
                    }
                }
            }
        }
        // A box that is not finite begins at the root.
        let (positions, triangles) = &meshes[2];
        let tree = TriangleBvh::new_linear(positions, triangles);
        tree.segment_entry(Vec3::NEG_INFINITY, Vec3::INFINITY, 1.0, &mut entry);
        let ends = [-2.0 * positions[0], Vec3::ZERO];
        hits.resize(ends.len(), true);
        tree.segments_hit_from_vertex_within(&entry, 0, positions[0], &ends, 1e-4, &mut hits);
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
        // An entry made for another tree, or for this one before a refit, is not used: the queries begin at the
        // root (an entry for a box around the centre holds nothing of the far side).
        let mut moved = tree.clone();
        let other = TriangleBvh::new(positions, triangles);
        other.segment_entry(Vec3::splat(-0.01), Vec3::splat(0.01), 1.0, &mut entry);
        moved.segments_hit_from_vertex_within(&entry, 0, positions[0], &ends, 1e-4, &mut hits);
        assert_eq!(hits, naive);
        tree.segment_entry(Vec3::splat(-0.01), Vec3::splat(0.01), 1.0, &mut entry);
        moved.refit(positions);
        moved.segments_hit_from_vertex_within(&entry, 0, positions[0], &ends, 1e-4, &mut hits);
        assert_eq!(hits, naive);
        // The same entry on the tree it was made for is used (and, the box being wrong for these segments,
        // answers wrongly: which shows that the checks above are what kept the answers right).
        tree.segments_hit_from_vertex_within(&entry, 0, positions[0], &ends, 1e-4, &mut hits);
        assert_eq!(hits, [false, false]);
    }

    #[test]
    fn packets_of_several_vertices_answer_as_each_segment_alone() {
        // The segments of a few vertices traversed together from the entry boxes of their common box: each answer
        // equals the naive reference's for its own vertex (whose triangles it passes over). Groups of 1 to 12
        // vertices near each other or anywhere, 0 to 6 ends each (more than a packet's 32 segments in some), some
        // ends along an axis (zero direction components), both builders, meshes with and without structure.
        let mut rng = Rng(0x0DDB_A11C_0FFE_E123);
        let meshes = [soup(&mut rng, 400), grid(&mut rng, 24), icosphere(3)];
        let mut entry = SegmentEntry::default();
        let (mut from, mut origins, mut ends, mut hits) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut longest = 0;
        for (positions, triangles) in &meshes {
            for tree in [
                TriangleBvh::new(positions, triangles),
                TriangleBvh::new_linear(positions, triangles),
            ] {
                for q in 0..200 {
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
                        let naive =
                            segment_hits_naive_skipping(positions, triangles, from[k], origins[k], ends[k], s_min);
                        assert_eq!(
                            hits[k], naive,
                            "query {q}, segment {k}: vertex {} {} -> {}",
                            from[k], origins[k], ends[k]
                        );
                    }
                }
            }
        }
        assert!(longest > wide::PACKET, "some groups span several packets");
        // An entry made for another tree is not used: the traversal begins at the root.
        let (positions, triangles) = &meshes[2];
        let tree = TriangleBvh::new_linear(positions, triangles);
        TriangleBvh::new(positions, triangles).segment_entry(Vec3::splat(-0.01), Vec3::splat(0.01), 1.0, &mut entry);
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
    fn axis_parallel_rays_with_zero_direction_components() {
        // A unit cube's faces; rays along the axes, some grazing box planes exactly (inverse direction infinite).
        let (positions, triangles) = cube();
        let bvh = TriangleBvh::new(&positions, &triangles);
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
                bvh.segment_hits(origin, b, 0.0),
                segment_hits_naive(&positions, &triangles, origin, b, 0.0)
            );
        }
        // Grouped segment queries (the 4-wide tree's test of an axis with an infinite inverse: the origin between
        // the box's planes, planes included) from origins on, inside and outside the faces' planes, along and
        // across the axes, with +0 and -0 components; both builders.
        let linear = TriangleBvh::new_linear(&positions, &triangles);
        let coords = [-0.5, 0.0, 0.25, 1.0, 1.5];
        let mut hits = Vec::new();
        for tree in [&bvh, &linear] {
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
                            tree.segments_hit(origin, &ends, s_min, &mut hits);
                            for (&e, &h) in ends.iter().zip(&hits) {
                                let naive = segment_hits_naive(&positions, &triangles, origin, e, s_min);
                                assert_eq!(h, naive, "{origin} -> {e}, s_min {s_min}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// The 12 triangles of the cube [0, 1]^3.
    fn cube() -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let positions: Vec<Vec3> = (0..8)
            .map(|i| Vec3::new((i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32))
            .collect();
        let quads = [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
            [1, 3, 7, 5],
        ];
        let triangles = quads.iter().flat_map(|&[a, b, c, d]| [[a, b, c], [a, c, d]]).collect();
        (positions, triangles)
    }

    #[test]
    fn random_soups_match_naive() {
        for build in BUILDERS {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
            for &n in &[1usize, 2, 3, 4, 5, 7, 16, 33, 100, 257, 600, 2000] {
                let (positions, triangles) = soup(&mut rng, n);
                let bvh = build(&positions, &triangles);
                check_structure(&bvh);
                assert_eq!(bvh.triangle_count(), n);
                assert!(bvh.heap_bytes() >= n * size_of::<Tri>());
                check_against_naive(&mut rng, &bvh, &positions, &triangles, 400);
            }
        }
    }

    /// The baseline and x86-64-v3 copies of the linear build, the refit and the traversal (`crate::simd`) make the
    /// same trees, bit for bit, and answer as the naive reference. (The SAH build has no v3 copy; it is queried in
    /// both modes all the same.)
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
                for build in BUILDERS {
                    let mut bvh = build(&positions, &triangles);
                    check_structure(&bvh);
                    check_against_naive(&mut rng, &bvh, &positions, &triangles, 150);
                    // Moved vertices, refitted (the fit's copies).
                    let moved: Vec<Vec3> = positions.iter().map(|&p| p * 1.5 + rng.vec(-0.1, 0.1)).collect();
                    bvh.refit(&moved);
                    check_against_naive(&mut rng, &bvh, &moved, &triangles, 50);
                    trees.push((bits(&bvh), bvh.ids.clone()));
                }
            }
            assert_eq!(trees[1], trees[3], "linear build and refit, {n} triangles");
            assert_eq!(trees[0], trees[2], "SAH build (one copy) and refit, {n} triangles");
        }
        crate::simd::set_portable(false);
    }

    /// The linear build takes triangles `2k` and `2k + 1` that share an edge as one item: they stay together (in
    /// order) in its leaves, leaves still hold at most eight triangles, and queries answer as the naive reference,
    /// with pairs broken by triangles out of range or degenerate, and an odd triangle at the end.
    #[test]
    fn linear_build_keeps_quads_together_and_answers_alike() {
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
    fn shared_edges_tie_to_lowest_index() {
        let mut rng = Rng(7);
        let (positions, triangles) = grid(&mut rng, 12);
        let bvh = TriangleBvh::new(&positions, &triangles);
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
            let bvh = TriangleBvh::new(positions, triangles);
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
                        bvh.segment_hits(origin, b, s_min),
                        segment_hits_naive(positions, triangles, origin, b, s_min)
                    );
                }
            }
            assert!(checked > 500, "only {checked} hits");
        }
    }

    #[test]
    fn refit_matches_naive_on_moved_mesh() {
        for build in BUILDERS {
            let mut rng = Rng(0xDEAD_BEEF);
            for &n in &[1usize, 10, 150, 1000] {
                let (mut positions, triangles) = soup(&mut rng, n);
                let mut bvh = build(&positions, &triangles);
                for round in 0..3 {
                    // Small jitter, then a large warp (moves triangles far from the boxes they were built in).
                    for p in &mut positions {
                        *p += if round == 0 {
                            rng.vec(-0.05, 0.05)
                        } else {
                            Vec3::new(p.y.sin(), p.z * 0.5, -p.x)
                        };
                    }
                    bvh.refit(&positions);
                    check_structure(&bvh);
                    assert_eq!(bvh.triangle_count(), n);
                    check_against_naive(&mut rng, &bvh, &positions, &triangles, 200);
                }
            }
        }
    }

    #[test]
    fn refit_tracks_degeneracy() {
        let mut rng = Rng(99);
        let (mut positions, triangles) = soup(&mut rng, 300);
        // Triangle 0 degenerate at build (collapsed), triangle 1 has a NaN corner.
        positions[1] = positions[0];
        positions[2] = positions[0];
        positions[4] = Vec3::NAN;
        let mut bvh = TriangleBvh::new(&positions, &triangles);
        assert_eq!(bvh.triangle_count(), 298);
        check_against_naive(&mut rng, &bvh, &positions, &triangles, 200);
        // Both become proper; triangle 2 collapses; a ray aimed at triangle 0 finds it.
        positions[1] = positions[0] + Vec3::X;
        positions[2] = positions[0] + Vec3::Y;
        positions[4] = positions[3] + Vec3::Z;
        positions[7] = positions[6];
        bvh.refit(&positions);
        assert_eq!(bvh.triangle_count(), 299);
        check_against_naive(&mut rng, &bvh, &positions, &triangles, 200);
        let aim = positions[0] + 0.3 * Vec3::X + 0.3 * Vec3::Y;
        let (origin, dir) = (aim + Vec3::Z * 1e-3, -Vec3::Z);
        assert_eq!(bvh.ray_cast(origin, dir, 0.0, 1.0).map(|h| h.triangle), Some(0));
        // Fewer positions than before: triangles now out of range stop being hit, without panicking.
        positions.truncate(450);
        bvh.refit(&positions);
        assert_eq!(bvh.triangle_count(), 149);
        check_against_naive(&mut rng, &bvh, &positions, &triangles, 200);
    }

    #[test]
    fn degenerate_and_out_of_range_triangles_are_skipped() {
        let mut rng = Rng(5);
        let (mut positions, mut triangles) = soup(&mut rng, 200);
        positions.push(Vec3::new(f32::INFINITY, 0.0, 0.0));
        let inf = positions.len() as u32 - 1;
        triangles.extend([
            [0, 1, 9999],     // out of range
            [u32::MAX, 0, 1], // out of range
            [0, 0, 1],        // repeated vertex: zero area
            [0, 1, inf],      // infinite corner
            [3, 4, 5],        // proper
        ]);
        // Collinear corners: zero area.
        positions.extend([Vec3::ZERO, Vec3::ONE, 2.0 * Vec3::ONE]);
        let c = positions.len() as u32;
        triangles.push([c - 3, c - 2, c - 1]);
        let bvh = TriangleBvh::new(&positions, &triangles);
        assert_eq!(bvh.triangle_count(), 201);
        check_against_naive(&mut rng, &bvh, &positions, &triangles, 300);
        // A ray along the collinear triangle's line and through the zero-area one hits nothing degenerate.
        let hit = bvh.ray_cast(-Vec3::ONE, Vec3::ONE, 0.0, f32::INFINITY);
        assert!(hit.is_none_or(|h| h.triangle < 200 || h.triangle == 204));
        // Only degenerate triangles: nothing to hit.
        let bvh = TriangleBvh::new(&[Vec3::ZERO, Vec3::X, Vec3::NAN], &[[0, 1, 2], [0, 0, 1], [1, 2, 3]]);
        assert_eq!(bvh.triangle_count(), 0);
        assert_eq!(
            bvh.ray_cast(Vec3::new(0.5, 0.0, 1.0), -Vec3::Z, 0.0, f32::INFINITY),
            None
        );
        assert!(!bvh.segment_hits(Vec3::new(0.5, 0.0, 1.0), Vec3::new(0.5, 0.0, -1.0), 0.0));
    }

    #[test]
    fn closed_sphere_segments_from_inside() {
        let (positions, triangles) = icosphere(3);
        let bvh = TriangleBvh::new(&positions, &triangles);
        assert_eq!(bvh.triangle_count(), 20 * 64);
        let mut rng = Rng(1234);
        for _ in 0..2000 {
            let d = rng.vec(-1.0, 1.0).normalize_or(Vec3::X);
            // The level-3 icosphere's faces are all farther than 0.98 from its center.
            assert!(!bvh.segment_hits(Vec3::ZERO, 0.97 * d, 1e-4), "inside {d}");
            assert!(bvh.segment_hits(Vec3::ZERO, 1.05 * d, 1e-4), "outside {d}");
            // From a surface vertex nudged inward, towards the center: the binding use case.
            let v = positions[rng.below(positions.len())];
            assert!(!bvh.segment_hits(0.999 * v, 0.1 * d, 1e-4));
            let hit = bvh.ray_cast(Vec3::ZERO, d, 0.0, f32::INFINITY).unwrap();
            assert!(hit.t > 0.98 && hit.t <= 1.0, "t {}", hit.t);
            assert_eq!(
                Some(hit),
                ray_cast_naive(&positions, &triangles, Vec3::ZERO, d, 0.0, f32::INFINITY)
            );
        }
    }

    #[test]
    fn pathological_distributions_build_and_query() {
        // Centroids at 2^-k crowd into one bin over and over; all-identical triangles cannot be separated at all.
        let mut positions = Vec::new();
        let mut triangles = Vec::new();
        for k in 0..3000u32 {
            let x = 0.5f32.powi((k % 140) as i32);
            let base = positions.len() as u32;
            positions.extend([Vec3::new(x, 0.0, 0.0), Vec3::new(x, 1.0, 0.0), Vec3::new(x, 0.0, 1.0)]);
            triangles.push([base, base + 1, base + 2]);
        }
        for _ in 0..500 {
            triangles.push([0, 1, 2]);
        }
        let bvh = TriangleBvh::new(&positions, &triangles);
        check_structure(&bvh);
        assert!(bvh.nodes.len() > 1000);
        assert_eq!(bvh.triangle_count(), 3500);
        let mut rng = Rng(77);
        for _ in 0..300 {
            let origin = Vec3::new(rng.range(-1.0, 2.0), rng.range(0.0, 0.5), rng.range(0.0, 0.5));
            let dir = Vec3::new(rng.range(-1.0, 1.0), rng.range(-0.1, 0.1), rng.range(-0.1, 0.1));
            let naive = ray_cast_naive(&positions, &triangles, origin, dir, 0.0, f32::INFINITY);
            assert_eq!(bvh.ray_cast(origin, dir, 0.0, f32::INFINITY), naive);
            let b = origin + dir;
            assert_eq!(
                bvh.segment_hits(origin, b, 0.0),
                segment_hits_naive(&positions, &triangles, origin, b, 0.0)
            );
        }
    }

    /// Checks the tree's invariants: every node but the root is the child of exactly one earlier node, children are
    /// adjacent, leaves hold 1 to 4 triangles and together cover every triangle once, boxes contain their children's,
    /// and the depth fits the traversal stack.
    fn check_structure(bvh: &TriangleBvh) {
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
                assert!(n.count as usize <= MAX_LEAF.max(MAX_LINEAR_LEAF));
                for k in n.first..n.first + n.count {
                    covered[k as usize] += 1;
                }
            }
        }
        assert!(nodes.is_empty() || parent_count[0] == 0);
        assert!(parent_count.iter().skip(1).all(|&c| c == 1));
        assert!(covered.iter().all(|&c| c == 1));
        assert!(depth.iter().all(|&d| d < STACK));
        wide::tests::check_wide(nodes, bvh.wide_nodes(), bvh.tris.len());
        let mut ids = bvh.ids.clone();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), bvh.ids.len());
    }

    #[test]
    fn build_is_deterministic_and_bounded() {
        let mut rng = Rng(31);
        let (positions, triangles) = soup(&mut rng, 5000);
        let a = TriangleBvh::new(&positions, &triangles);
        let b = TriangleBvh::new(&positions, &triangles);
        assert_eq!(a.ids, b.ids);
        assert_eq!(a.nodes.len(), b.nodes.len());
        check_structure(&a);
    }

    #[test]
    fn large_mesh_parallel_build_matches_naive() {
        // Above PARALLEL_GRAIN triangles the top levels are split with rayon: the layout must not depend on it. A
        // bumpy 130 x 130 grid of 33800 triangles, in a scrambled order; both builders.
        for build in BUILDERS {
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
            let bvh = build(&positions, &triangles);
            check_structure(&bvh);
            assert_eq!(bvh.triangle_count(), triangles.len());
            for _ in 0..2 {
                let again = build(&positions, &triangles);
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
                assert_eq!(bvh.segment_hits(origin, b, 1e-4), naive, "segment {q}");
            }
            // Short segments, the binding use case, from points near the surface.
            for q in 0..2000 {
                let p = positions[rng.below(positions.len())];
                let (a, b) = (p + rng.vec(-0.02, 0.02), p + rng.vec(-0.2, 0.2));
                let naive = segment_hits_naive(&positions, &triangles, a, b, 1e-4);
                assert_eq!(bvh.segment_hits(a, b, 1e-4), naive, "short segment {q}");
            }
        }
    }

    #[test]
    fn linear_empty_mesh_finds_nothing() {
        let bvh = TriangleBvh::new_linear(&[], &[]);
        assert_eq!(bvh.triangle_count(), 0);
        assert!(bvh.nodes.is_empty());
        assert_eq!(bvh.ray_cast(Vec3::ZERO, Vec3::X, 0.0, f32::INFINITY), None);
        assert!(!bvh.segment_hits(Vec3::ZERO, Vec3::X, 0.0));
        let mut bvh = TriangleBvh::new_linear(&[], &[[0, 1, 2]]);
        assert_eq!(bvh.triangle_count(), 0);
        assert!(!bvh.segment_hits(-Vec3::X, Vec3::X, 0.0));
        bvh.refit(&[Vec3::ZERO; 3]);
        assert_eq!(bvh.triangle_count(), 0);
    }

    #[test]
    fn linear_degenerate_and_out_of_range_triangles_are_skipped() {
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
        let bvh = TriangleBvh::new_linear(&positions, &triangles);
        check_structure(&bvh);
        assert_eq!(bvh.ids.len(), 205);
        check_against_naive(&mut rng, &bvh, &positions, &triangles, 300);
        // Only degenerate triangles: nothing to hit.
        let bvh = TriangleBvh::new_linear(&[Vec3::ZERO, Vec3::X, Vec3::NAN], &[[0, 1, 2], [0, 0, 1], [1, 2, 3]]);
        assert_eq!(bvh.triangle_count(), 0);
        assert!(!bvh.segment_hits(Vec3::new(0.5, 0.0, 1.0), Vec3::new(0.5, 0.0, -1.0), 0.0));
        // Degeneracy tracked through refit, as for `new`.
        let (mut positions, triangles) = soup(&mut rng, 300);
        positions[1] = positions[0];
        positions[2] = positions[0];
        positions[4] = Vec3::NAN;
        let mut bvh = TriangleBvh::new_linear(&positions, &triangles);
        assert_eq!(bvh.triangle_count(), 298);
        check_against_naive(&mut rng, &bvh, &positions, &triangles, 200);
        positions[1] = positions[0] + Vec3::X;
        positions[2] = positions[0] + Vec3::Y;
        positions[4] = positions[3] + Vec3::Z;
        bvh.refit(&positions);
        assert_eq!(bvh.triangle_count(), 300);
        check_against_naive(&mut rng, &bvh, &positions, &triangles, 200);
    }

    #[test]
    fn linear_build_is_deterministic_and_bounded() {
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
        assert_eq!(bvh.triangle_count(), triangles.len());
        for _ in 0..100 {
            let origin = Vec3::new(rng.range(-1.0, 2.0), rng.range(0.0, 0.5), rng.range(0.0, 0.5));
            let dir = Vec3::new(rng.range(-1.0, 1.0), rng.range(-0.1, 0.1), rng.range(-0.1, 0.1));
            let naive = ray_cast_naive(&positions, &triangles, origin, dir, 0.0, f32::INFINITY);
            assert_eq!(bvh.ray_cast(origin, dir, 0.0, f32::INFINITY), naive);
            let b = origin + dir;
            assert_eq!(
                bvh.segment_hits(origin, b, 0.0),
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
    fn queries_from_several_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<TriangleBvh>();
        let (positions, triangles) = icosphere(2);
        let bvh = TriangleBvh::new(&positions, &triangles);
        std::thread::scope(|s| {
            for k in 0..4 {
                let bvh = &bvh;
                s.spawn(move || {
                    let mut rng = Rng(k + 1);
                    for _ in 0..500 {
                        let d = rng.vec(-1.0, 1.0).normalize_or(Vec3::Y);
                        assert!(bvh.segment_hits(Vec3::ZERO, 2.0 * d, 0.0));
                    }
                });
            }
        });
    }
}
