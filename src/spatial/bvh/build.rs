//! Construction of [`TriangleBvh`]: the linear (Morton code) build, its parallel top levels and one-pass layout,
//! and the boxes fitted bottom-up from the triangle copies. See the [parent module](super) for the method.

use std::sync::OnceLock;

use glam::Vec3;

use super::{EMPTY_NODE, Node, STAMPS, Tri, TriangleBvh, corners};

/// Nodes of more items than this are split in parallel; smaller subtrees are built on one thread each.
const PARALLEL_GRAIN: usize = 1 << 15;
/// Meshes of at least this many triangles make their centroids, sort keys and triangle copies in parallel blocks
/// of this many.
const PARALLEL_FIT: usize = 1 << 12;
/// Most triangles in one leaf. The trees serve the binding's visibility test, which tests a leaf's eight
/// triangles in one pass of eight SIMD lanes (two of four on processors without AVX), and cache misses on nodes
/// are what a traversal waits on (creature 100k: the bind 8% faster than with leaves of 4 tested four at a time,
/// at the same instruction count; 6, 12 and 16 were slower than 8).
pub(super) const MAX_LINEAR_LEAF: usize = 8;

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

/// Build the part of the tree over the sorted items' `codes` (item numbers from `offset`; item `i`'s triangles are
/// `starts[i]..starts[i + 1]`, `starts` covering all items): nodes larger than [`PARALLEL_GRAIN`] items are split
/// and both halves built at once with `rayon::join` (the recursion is as deep as the levels above the grain),
/// smaller subtrees by [`expand_linear`].
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

impl TriangleBvh {
    crate::simd::two_copies! {
        /// Build the tree over `triangles` (indices into `positions`): a linear BVH (after Lauterbach et al.,
        /// "Fast BVH construction on GPUs", Eurographics 2009, and Karras, "Maximizing parallelism in the
        /// construction of BVHs, octrees, and k-d trees", HPG 2012): triangles sorted by the 30-bit Morton code of
        /// their box centroids (quantised in the centroids' bounding box), split top-down at the highest differing
        /// bit (runs of equal codes at the middle; leaves of at most 8), boxes fitted bottom-up. The centroids,
        /// codes and triangle copies are made in parallel blocks, the (code, index) pairs sorted by a radix sort,
        /// the top levels split in parallel. Deterministic, depth under `MAX_LINEAR_DEPTH + 32` (less than the
        /// traversal stack).
        ///
        /// Triangles whose indices are out of range or that are degenerate (zero area or non-finite) are never hit
        /// (and never panic): those out of range are left out, degenerate ones keep a place in a leaf as copies
        /// that nothing hits ([`Tri::never`]).
        ///
        /// The x86-64-v3 copy (`crate::simd`): `bvh_build_linear` 1.0-1.1 / 15-18 / 157-176 ms, the baseline's
        /// 1.1-1.3 / 16-19 / 173-197 ms (20k / 200k / 2M triangles, `cargo bench --bench bvh`).
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
            stamp: STAMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            wide: OnceLock::new(),
        };
        bvh.fit_boxes();
        bvh
    }

    /// Every box from the triangle copies, bottom-up (children follow their parents in `nodes`, so a reverse sweep
    /// sees children first), and the count of hittable triangles; the leaves' boxes come from the copies' corners.
    /// Min and max are exact, so the boxes do not depend on the order.
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
    }
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;
