//! The mesh's surface for the binding's ray queries: one BVH per connected part (step 2 and 3 of the `bind`
//! module's doc), for the visibility test, the inside test of the parts rule and the leaves' extension.

use glam::Vec3;
use rayon::prelude::*;

use crate::spatial::TriangleBvh;

/// The mesh's surface for ray queries: one BVH per connected part (after welding), so that a part's own
/// surface can be asked alone, or one BVH for the whole mesh.
pub(super) struct Surface {
    /// Part of each vertex (all 0 for one part).
    part: Vec<u32>,
    parts: Vec<TriangleBvh>,
}

/// Each part's box: the minima and the maxima of its vertices, by part.
pub(super) type PartBoxes = (Vec<Vec3>, Vec<Vec3>);

/// Meshes split into more parts than this (triangle soups) are treated as one part.
pub(super) const MAX_PARTS: usize = 4096;

/// Segment ends within this fraction of the segment's length are not tested for crossings (the vertex itself
/// lies on the surface).
pub(super) const VISIBILITY_EPS: f32 = 1e-4;

impl Surface {
    /// One BVH per part of `parts` (each vertex's part and the count), or one for the whole mesh when `parts`
    /// is `None`, has a single part, or more than [`MAX_PARTS`].
    pub(super) fn new(positions: &[Vec3], triangles: &[[u32; 3]], parts: Option<(Vec<u32>, usize)>) -> Self {
        let whole = |positions: &[Vec3]| Self {
            part: vec![0; positions.len()],
            parts: vec![part_tree(positions, triangles)],
        };
        let Some((part, count)) = parts.filter(|(_, c)| (2..=MAX_PARTS).contains(c)) else {
            return whole(positions);
        };
        debug_assert_eq!(part.len(), positions.len());
        let (tris, starts) = part_triangles(triangles, &part, count);
        let parts = starts
            .par_windows(2)
            .map(|r| part_tree(positions, &tris[r[0]..r[1]]))
            .collect();
        Self { part, parts }
    }

    /// How many parts have a tree of their own (1 when the mesh is taken whole).
    pub(super) fn part_count(&self) -> usize {
        self.parts.len()
    }

    pub(super) fn part_of(&self, v: usize) -> u32 {
        self.part.get(v).copied().unwrap_or(0)
    }

    /// Each part's box (its vertices' minima and maxima; empty, `+inf` to `-inf`, for a part without vertices),
    /// [`Self::part_bounds`] where the mesh has several parts (one part needs no boxes).
    pub(super) fn several_part_bounds(&self, positions: &[Vec3]) -> Option<PartBoxes> {
        (self.parts.len() > 1).then(|| self.part_bounds(positions))
    }

    /// in parallel over blocks of vertices.
    fn part_bounds(&self, positions: &[Vec3]) -> PartBoxes {
        const BLOCK: usize = 1 << 14;
        let count = self.parts.len();
        let empty = || (vec![Vec3::INFINITY; count], vec![Vec3::NEG_INFINITY; count]);
        positions
            .par_chunks(BLOCK)
            .enumerate()
            .map(|(b, block)| {
                let (mut lo, mut hi) = empty();
                for (i, p) in block.iter().enumerate() {
                    let c = self.part_of(b * BLOCK + i) as usize;
                    lo[c] = lo[c].min(*p);
                    hi[c] = hi[c].max(*p);
                }
                (lo, hi)
            })
            .reduce(empty, |(mut lo, mut hi), (l2, h2)| {
                for c in 0..count {
                    lo[c] = lo[c].min(l2[c]);
                    hi[c] = hi[c].max(h2[c]);
                }
                (lo, hi)
            })
    }

    /// Whether the segment from vertex `v` at `a` to `b` crosses `v`'s own part's surface.
    pub(super) fn hides(&self, v: usize, a: Vec3, b: Vec3) -> bool {
        self.tree_of(v)
            .is_some_and(|bvh| bvh.segment_hits_from_vertex(v as u32, a, b, VISIBILITY_EPS))
    }

    /// The tree of vertex `v`'s own part, the only surface that can hide a bone from it.
    pub(super) fn tree_of(&self, v: usize) -> Option<&TriangleBvh> {
        self.parts.get(self.part_of(v) as usize)
    }

    /// The nearest hit over all parts.
    pub(super) fn ray_cast(&self, origin: Vec3, dir: Vec3, t_max: f32) -> Option<f32> {
        self.parts
            .iter()
            .filter_map(|b| b.ray_cast(origin, dir, 0.0, t_max))
            .map(|h| h.t)
            .reduce(f32::min)
    }

    /// Whether `q` lies inside part `c` (odd number of crossings of its surface along a fixed oblique ray).
    pub(super) fn inside(&self, q: Vec3, c: usize) -> bool {
        let Some(bvh) = self.parts.get(c) else { return false };
        let dir = Vec3::new(0.5773, 0.3891, 0.7181).normalize();
        let mut crossings = 0u32;
        let mut t = 0.0f32;
        while let Some(h) = bvh.ray_cast(q, dir, t, f32::INFINITY) {
            crossings += 1;
            // Step past this hit; a ray through a shared edge meets both triangles at the same t.
            t = h.t + h.t.abs() * 1e-6 + 1e-7;
        }
        crossings % 2 == 1
    }
}

/// Each part's triangles, in input order, part after part, and where each part's begin (`count + 1` offsets):
/// `part` gives each vertex's part (of `count`); a triangle belongs to its first corner's part, and triangles with
/// a corner out of range of `part` are left out. When the input lists its triangles part after part already (as
/// most files do, a mesh's pieces one after another) it is returned as it is, with the offsets found by binary
/// search; otherwise they are sorted out in parallel ([`crate::mesh::partition`]).
fn part_triangles<'t>(
    triangles: &'t [[u32; 3]],
    part: &[u32],
    count: usize,
) -> (std::borrow::Cow<'t, [[u32; 3]]>, Vec<usize>) {
    let n = part.len();
    let part_of = |t: &[u32; 3]| t.iter().all(|&i| (i as usize) < n).then(|| part[t[0] as usize]);
    // Each block's first and last part if its triangles are all in range and their parts never decrease.
    let blocks: Vec<Option<(u32, u32)>> = triangles
        .par_chunks(crate::mesh::PARALLEL_MIN)
        .map(|block| {
            let mut parts = block.iter().map(part_of);
            let first = parts.next()??;
            let mut last = first;
            for p in parts {
                let p = p?;
                if p < last {
                    return None;
                }
                last = p;
            }
            Some((first, last))
        })
        .collect();
    let in_order = blocks.iter().all(Option::is_some)
        && blocks
            .windows(2)
            .all(|w| matches!((w[0], w[1]), (Some((_, a)), Some((b, _))) if a <= b));
    if in_order {
        let starts = (0..=count as u32)
            .map(|c| triangles.partition_point(|t| part[t[0] as usize] < c))
            .collect();
        return (std::borrow::Cow::Borrowed(triangles), starts);
    }
    let (tris, starts) = crate::mesh::partition(triangles, count, |t| part_of(t).map(|p| p as usize), |_, t| *t);
    (std::borrow::Cow::Owned(tris), starts)
}

/// A part's tree for the visibility and inside tests: the linear builder (its slower queries cost less than the
/// SAH build, docs/binding.md), with the segment queries' layout made now rather than by the first query.
fn part_tree(positions: &[Vec3], triangles: &[[u32; 3]]) -> TriangleBvh {
    let bvh = TriangleBvh::new_linear(positions, triangles);
    bvh.prepare_segment_queries();
    bvh
}

#[cfg(test)]
#[path = "surface_tests.rs"]
mod tests;
