//! A bounding volume hierarchy (BVH) of axis-aligned boxes over the triangles of a mesh.
//!
//! Two clients: automatic skin binding asks, millions of times, whether the segment from a vertex to a point on a
//! bone crosses the surface (any-hit queries: [`TriangleBvh::packet_hit_from_vertices_within`] for the segments
//! of a few neighbouring vertices, [`TriangleBvh::segment_hits_from_vertex`] for one), and whether a point lies
//! inside a part (ray parity, [`TriangleBvh::ray_cast`]); weight painting casts a ray from the camera to find the
//! surface point under the cursor on the posed mesh ([`TriangleBvh::ray_cast`], a nearest-hit query, on a tree
//! built for that pose).
//!
//! The files, by concern: this one holds the shared types (the tree, its nodes, the triangle copies and their
//! intersection routine); `build.rs` makes the tree, `ray.rs` holds the box test and the nearest-hit query,
//! `segment.rs` the segment queries' entry points, `wide.rs` the 4-wide copy of the tree and its packet
//! traversal, and `leaf.rs` a leaf's triangles tested in SIMD lanes.
//!
//! Methods:
//! - Construction ([`TriangleBvh::new_linear`]): an LBVH after Lauterbach et al., "Fast BVH construction on
//!   GPUs" (Eurographics 2009) and Karras, "Maximizing parallelism in the construction of BVHs, octrees, and k-d
//!   trees" (HPG 2012): the triangles (or pairs of them: triangles `2k` and `2k + 1` that share an edge, a quad's
//!   two halves, are one item, which about halves the sort and the splits) are sorted by the 30-bit Morton code
//!   of their box centroids (quantised on cubic cells of the centroids' bounding box; an LSD radix sort of (code,
//!   index) pairs), each node is split at the highest bit in which its first and last codes differ (runs of equal
//!   codes, and nodes below depth 48, at the middle, so the depth stays under 80) until it holds at most 8
//!   triangles. Nodes of more than 32768 items are split with rayon's fork-join (recursion as deep as those
//!   levels, not the tree); each smaller subtree is built on one thread with an explicit task stack; the pieces
//!   are laid out in one pass afterwards, so the tree is deterministic. The triangle copies are made in parallel
//!   and the boxes fitted bottom-up from them. (A binned SAH builder, whose trees answered queries 1.15 to 1.35
//!   times faster but which built 2 to 4 times slower, lost to this one on the binding and was removed.)
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
//!   tree and the tests' naive references (`test_support.rs`) call the same routine on the same numbers, so their
//!   answers agree exactly. The segment traversal tests a leaf's (up to eight) triangles at once, a triangle a
//!   SIMD lane (eight AVX lanes, or two passes of four), with that routine's operations in the same order, so each
//!   lane answers as it does.
//! - Nearest point (`nearest.rs`): the closest point of each triangle by its Voronoi regions (Ericson, "Real-Time
//!   Collision Detection", 2005), children visited nearer box first, subtrees farther than the best so far skipped.
//! - Traversal: iterative with a fixed-size stack array; nearest-hit visits the nearer child first and skips
//!   subtrees that start beyond the best hit so far. Any-hit segment queries run on a 4-wide copy of the tree
//!   (`wide.rs`: four child boxes a node, tested in SIMD lanes with the same slab arithmetic), up to [`PACKET`]
//!   segments in one traversal, each stopping at its first hit.
//!
//! Queries take `&self` and may run from many threads at once; the one piece of interior state, the 4-wide copy
//! that segment queries use, is made once behind a `OnceLock`.

use std::fmt;
use std::sync::OnceLock;

use glam::Vec3;

mod build;
mod leaf;
mod nearest;
mod ray;
mod segment;
#[cfg(test)]
mod test_support;
mod wide;

/// Most segments one traversal tests together (the bits of its answer), for callers that group segments.
pub const PACKET: usize = wide::PACKET;

pub use nearest::{Nearest, closest_on_triangle};

/// Where a ray meets a triangle: the ray parameter `t` (the point is `origin + t * dir`), the triangle's index in
/// the slice given to [`TriangleBvh::new_linear`], and the barycentric coordinates of the point,
/// `(1 - u - v) * a + u * b + v * c` for the triangle's corners `a`, `b`, `c`.
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
/// the tree's boxes: with a tree it was not made for the queries simply begin at the root.
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
/// without another look at the positions), and its vertex indices (for the segment queries from a vertex, which
/// pass over its own triangles: next to the corners, so that a leaf's test reads one stream of memory, not two).
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
/// tests' naive references so they reject the same queries.
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

/// A node with an empty box, to be filled in.
const EMPTY_NODE: Node = Node {
    min: Vec3::INFINITY,
    max: Vec3::NEG_INFINITY,
    first: 0,
    count: 0,
};

/// A bounding volume hierarchy over a triangle mesh, for segment visibility tests and ray picking.
///
/// Built by [`TriangleBvh::new_linear`] (Morton codes, leaves of at most 8 triangles); a mesh that moves gets a
/// new tree. See the [module documentation](self) for the methods.
pub struct TriangleBvh {
    /// Flat node array, root first; children always come after their parent.
    nodes: Vec<Node>,
    /// Triangle copies in leaf order ([`Tri::never`] for triangles that are degenerate).
    tris: Vec<Tri>,
    /// Index in the input triangle list of each entry of `tris`.
    ids: Vec<u32>,
    /// Triangles that can be hit (not degenerate).
    hittable: usize,
    /// A number no other tree has had: what a [`SegmentEntry`] was made for.
    stamp: u64,
    /// The same tree collapsed to four children a node, for the segment queries (`wide.rs`): made by the first
    /// query (or [`TriangleBvh::prepare_segment_queries`]), so that trees only ever asked for ray casts
    /// (painting's, built at every pose) never make it.
    wide: OnceLock<Vec<wide::WideNode>>,
}

impl TriangleBvh {
    /// A leaf's triangle copies with their indices in the input list (none for an interior node).
    #[inline(always)]
    fn leaf(&self, node: &Node) -> impl Iterator<Item = (&Tri, u32)> {
        let range = node.first as usize..(node.first + node.count) as usize;
        let range = if node.count > 0 { range } else { 0..0 };
        self.tris[range.clone()].iter().zip(self.ids[range].iter().copied())
    }
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
