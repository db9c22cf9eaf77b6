//! Mesh connectivity shared by binding and weight clean-up: welding coincident vertices and finding the
//! connected parts of a mesh.
//!
//! Welding: two vertices weld when their positions fall in the same cell of a grid of size `tolerance`
//! (so exact duplicates, as on UV seams and in triangle soups, always weld; nearer pairs across a cell boundary
//! may not). Each vertex maps to the lowest index of its group. Parts: connected components of the welded
//! triangles; a vertex on no triangle is a part of its own. Part ids are numbered in order of each part's lowest
//! vertex index, so the result is deterministic.
//!
//! Both run in parallel (rayon) on one concurrent union-find ([`UnionFind`]; Anderson and Woll, "Wait-free
//! parallel algorithms for the union-find problem", STOC 1991) in which a root is only ever linked under a lower
//! index, by compare-and-swap, and paths are halved; every component's root is then its lowest vertex whatever the
//! order the threads ran in. Welds are found in one parallel pass over the vertices through a concurrent hash table of
//! cells (`weld_unions`: open addressing, each slot claimed once by compare-and-swap); docs/binding.md, "Speed",
//! says why.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use glam::Vec3;
use rayon::prelude::*;

/// Below this many vertices or triangles, work is done on one thread.
pub(crate) const PARALLEL_MIN: usize = 1 << 14;

/// For each vertex, the lowest index of the vertices it welds to (itself when none).
pub fn weld_map(positions: &[Vec3], tolerance: f32) -> Vec<u32> {
    let sets = UnionFind::new(positions.len());
    weld_unions(positions, tolerance, &sets);
    // Every root is its group's lowest vertex.
    sets.roots()
}

/// The weld cell of `p` for `tolerance` (see the module doc): the grid cell of size `tolerance`, or for a
/// tolerance of zero (or less, or NaN) the coordinates' bit patterns, so that only exact duplicates weld.
#[inline]
fn weld_cell(p: Vec3, tolerance: f32) -> [i64; 3] {
    // `floor` by truncation (a libm call without SSE4.1): equal to `f32::floor` then a saturating cast, NaN to 0.
    let floor = |x: f32| {
        let i = x as i64;
        if i as f32 > x { i.saturating_sub(1) } else { i }
    };
    if tolerance > 0.0 {
        let q = p / tolerance;
        [floor(q.x), floor(q.y), floor(q.z)]
    } else {
        [p.x.to_bits() as i64, p.y.to_bits() as i64, p.z.to_bits() as i64]
    }
}

/// A 64-bit hash of a weld cell (each step a multiply by the golden ratio's fraction, Knuth's multiplicative
/// hashing; the high bits are the well-mixed ones).
#[inline]
fn cell_hash(c: [i64; 3]) -> u64 {
    let mix = |k: u64| k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    mix(mix(mix(c[0] as u64) ^ c[1] as u64) ^ c[2] as u64)
}

/// Sort `items` into `groups` by `key` (`None`: left out), keeping input order within each group, in parallel:
/// blocks of [`PARALLEL_MIN`] items are counted per group, the output is cut into one run per group and block,
/// and every block writes `value(index, item)` for its items into its runs. Returns the values group after group
/// and where each group starts (`groups + 1` offsets).
pub(crate) fn partition<S: Sync, T: Copy + Default + Send>(
    items: &[S],
    groups: usize,
    key: impl Fn(&S) -> Option<usize> + Sync,
    value: impl Fn(usize, &S) -> T + Sync,
) -> (Vec<T>, Vec<usize>) {
    let blocks: Vec<&[S]> = items.chunks(PARALLEL_MIN).collect();
    let counts: Vec<Vec<u32>> = blocks
        .par_iter()
        .map(|block| {
            let mut c = vec![0u32; groups];
            for g in block.iter().filter_map(&key) {
                c[g] += 1;
            }
            c
        })
        .collect();
    let mut starts = Vec::with_capacity(groups + 1);
    starts.push(0);
    for g in 0..groups {
        starts.push(starts[g] + counts.iter().map(|c| c[g] as usize).sum::<usize>());
    }
    let mut out = vec![T::default(); starts[groups]];
    let mut runs: Vec<Vec<&mut [T]>> = blocks.iter().map(|_| Vec::with_capacity(groups)).collect();
    let mut rest = out.as_mut_slice();
    for g in 0..groups {
        for (c, block_runs) in counts.iter().zip(&mut runs) {
            let (run, tail) = std::mem::take(&mut rest).split_at_mut(c[g] as usize);
            block_runs.push(run);
            rest = tail;
        }
    }
    blocks
        .par_iter()
        .zip(runs.par_iter_mut())
        .enumerate()
        .for_each(|(b, (block, runs))| {
            let mut at = vec![0usize; groups];
            for (i, item) in block.iter().enumerate() {
                if let Some(g) = key(item) {
                    runs[g][at[g]] = value(b * PARALLEL_MIN + i, item);
                    at[g] += 1;
                }
            }
        });
    drop(runs);
    (out, starts)
}

/// Disjoint sets of `0..n` (a union-find) whose every set's root is its lowest member, whatever the order of the
/// unions: safe to use from many threads at once (see the module doc), and used from one thread too (rogue
/// removal's regions), with the same answers.
pub(crate) struct UnionFind {
    parent: Vec<AtomicU32>,
}

impl UnionFind {
    /// `n` sets of one member each.
    pub(crate) fn new(n: usize) -> Self {
        Self {
            parent: (0..n as u32).map(AtomicU32::new).collect(),
        }
    }

    /// The root of `x`'s tree (its set's lowest member), halving the path on the way (each node passed is
    /// pointed at its grandparent, which only ever moves a pointer to a lower index, so concurrent finds and links
    /// stay consistent).
    pub(crate) fn find(&self, mut x: u32) -> u32 {
        let parent = &self.parent;
        loop {
            let p = parent[x as usize].load(Relaxed);
            if p == x {
                return x;
            }
            let g = parent[p as usize].load(Relaxed);
            if g != p {
                // Losing this race to another halving or a link is harmless: the pointer still goes up the tree.
                let _ = parent[x as usize].compare_exchange_weak(p, g, Relaxed, Relaxed);
            }
            x = g;
        }
    }

    /// Join the sets of `a` and `b`: the higher root is linked under the lower one, if it is still a root.
    pub(crate) fn union(&self, a: u32, b: u32) {
        let (mut a, mut b) = (a, b);
        loop {
            a = self.find(a);
            b = self.find(b);
            if a == b {
                return;
            }
            let (lo, hi) = (a.min(b), a.max(b));
            if self.parent[hi as usize]
                .compare_exchange(hi, lo, Relaxed, Relaxed)
                .is_ok()
            {
                return;
            }
            // `hi` was linked meanwhile: try again from where it went.
            (a, b) = (hi, lo);
        }
    }

    /// Every member's root, in parallel.
    pub(crate) fn roots(&self) -> Vec<u32> {
        (0..self.parent.len() as u32)
            .into_par_iter()
            .with_min_len(PARALLEL_MIN)
            .map(|v| self.find(v))
            .collect()
    }
}

/// Join in `sets` every vertex to the others in its weld cell ([`weld_cell`]), in one parallel pass: each vertex
/// is put in a concurrent open-addressing table (linear probing, at most half full) keyed by its cell, the slot
/// holding the index of the first vertex to claim it (by compare-and-swap, never changed after); a vertex that
/// finds a slot whose vertex has its cell is joined to that vertex. So every vertex of a cell is joined to the
/// one that claimed it, whichever thread got there first, and the parts do not depend on the order.
fn weld_unions(positions: &[Vec3], tolerance: f32, sets: &UnionFind) {
    const EMPTY: u32 = u32::MAX;
    let n = positions.len();
    if n < 2 {
        return;
    }
    let bits = (2 * n).next_power_of_two().trailing_zeros();
    let mask = (1usize << bits) - 1;
    let table: Vec<AtomicU32> = (0..1usize << bits).map(|_| AtomicU32::new(EMPTY)).collect();
    // Vertex `v` of cell `c`, whose first slot `slot` was seen holding `seen`.
    let insert = |v: u32, c: [i64; 3], mut slot: usize, mut seen: u32| loop {
        if seen == EMPTY {
            match table[slot].compare_exchange(EMPTY, v, Relaxed, Relaxed) {
                Ok(_) => return,
                Err(held) => seen = held,
            }
        }
        if weld_cell(positions[seen as usize], tolerance) == c {
            sets.union(seen, v);
            return;
        }
        slot = (slot + 1) & mask;
        seen = table[slot].load(Relaxed);
    };
    // Eight vertices at a time: their first slots are read before any is written, so that the (random) reads
    // overlap rather than wait one by one behind each compare-and-swap.
    const BATCH: usize = 8;
    positions.par_chunks(PARALLEL_MIN).enumerate().for_each(|(b, block)| {
        for (c8, chunk) in block.chunks(BATCH).enumerate() {
            let first = (b * PARALLEL_MIN + c8 * BATCH) as u32;
            let mut cells = [[0i64; 3]; BATCH];
            let mut slots = [0usize; BATCH];
            for (j, p) in chunk.iter().enumerate() {
                cells[j] = weld_cell(*p, tolerance);
                slots[j] = (cell_hash(cells[j]) >> (64 - bits)) as usize;
            }
            let mut seen = [EMPTY; BATCH];
            for j in 0..chunk.len() {
                seen[j] = table[slots[j]].load(Relaxed);
            }
            for j in 0..chunk.len() {
                insert(first + j as u32, cells[j], slots[j], seen[j]);
            }
        }
    });
}

/// The part of each vertex (0-based, ordered by lowest vertex index) and the number of parts.
pub fn connected_parts(positions: &[Vec3], triangles: &[[u32; 3]], weld_tolerance: f32) -> (Vec<u32>, usize) {
    let n = positions.len();
    let sets = UnionFind::new(n);
    rayon::join(
        || weld_unions(positions, weld_tolerance, &sets),
        || {
            triangles
                .par_iter()
                .with_min_len(PARALLEL_MIN)
                .filter(|t| t.iter().all(|&i| (i as usize) < n))
                .for_each(|t| {
                    sets.union(t[0], t[1]);
                    sets.union(t[1], t[2]);
                })
        },
    );
    // Every root is the lowest vertex of its part: parts are numbered by counting the roots before it.
    let root = sets.roots();
    let mut id = vec![0u32; n];
    let mut count = 0u32;
    for (v, &r) in root.iter().enumerate() {
        if r as usize == v {
            id[v] = count;
            count += 1;
        }
    }
    let part = root
        .par_iter()
        .with_min_len(PARALLEL_MIN)
        .map(|&r| id[r as usize])
        .collect();
    (part, count as usize)
}

/// `part` added to the mesh `p`, `t` (its triangles' indices moved past the vertices already there).
#[cfg(test)]
pub(crate) fn append_part(p: &mut Vec<Vec3>, t: &mut Vec<[u32; 3]>, part: (Vec<Vec3>, Vec<[u32; 3]>)) {
    let base = p.len() as u32;
    p.extend(part.0);
    t.extend(part.1.iter().map(|f| f.map(|i| i + base)));
}

/// A closed box mesh from `lo` to `hi`, 12 triangles wound outward: the solid every voxel, fit and BVH test
/// starts from.
#[cfg(test)]
pub(crate) fn cuboid(lo: Vec3, hi: Vec3) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let positions: Vec<Vec3> = (0..8)
        .map(|i| {
            Vec3::new(
                if i & 1 == 0 { lo.x } else { hi.x },
                if i & 2 == 0 { lo.y } else { hi.y },
                if i & 4 == 0 { lo.z } else { hi.z },
            )
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `weld_map(p, tol)`, checked against an O(n^2) reference: each vertex maps to the first in its cell.
    fn weld_map_checked(p: &[Vec3], tol: f32) -> Vec<u32> {
        let cell = |v: Vec3| (v / tol).floor();
        let got = weld_map(p, tol);
        for (i, &r) in got.iter().enumerate() {
            let want = (0..p.len()).find(|&j| cell(p[j]) == cell(p[i])).unwrap() as u32;
            assert_eq!(r, want, "vertex {i}");
        }
        got
    }

    /// A linear congruential generator (the C library's constants): the state's top 24 bits at each step.
    fn lcg(seed: u32) -> impl FnMut() -> u32 {
        let mut x = seed;
        move || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            x >> 8
        }
    }

    /// [`lcg`] as floats uniform in [0, 1).
    fn unit_rng(seed: u32) -> impl FnMut() -> f32 {
        let mut bits = lcg(seed);
        move || bits() as f32 / (1 << 24) as f32
    }

    /// Random points and exact duplicates against an O(n^2) reference.
    #[test]
    fn weld_map_matches_brute_force() {
        let mut next = unit_rng(99);
        let mut p: Vec<Vec3> = (0..400).map(|_| Vec3::new(next(), next(), next())).collect();
        for i in 0..100 {
            let q = p[i * 3];
            p.push(q);
        }
        let got = weld_map_checked(&p, 1e-3);
        assert!(got[400..].iter().enumerate().all(|(k, &r)| r == (k * 3) as u32));
    }

    /// Enough points for the parallel table (several blocks of vertices inserted concurrently, long probe runs),
    /// with exact duplicates, near ones in the same cell and near ones across a cell boundary, against a hash map
    /// of cells.
    #[test]
    fn weld_map_of_many_points_matches_a_map_of_cells() {
        let mut next = unit_rng(4242);
        let tol = 1e-3;
        let mut p: Vec<Vec3> = (0..60_000).map(|_| Vec3::new(next(), next(), next()) * 10.0).collect();
        for i in 0..6000 {
            let q = p[i * 7];
            p.push(q);
            p.push(q + Vec3::splat(tol * 0.25 * next()));
        }
        let cell = |v: Vec3| {
            let c = (v / tol).floor();
            [c.x as i64, c.y as i64, c.z as i64]
        };
        let mut first = std::collections::HashMap::new();
        let want: Vec<u32> = p
            .iter()
            .enumerate()
            .map(|(i, &v)| *first.entry(cell(v)).or_insert(i as u32))
            .collect();
        let got = weld_map(&p, tol);
        assert!(got.iter().enumerate().filter(|(i, r)| **r != *i as u32).count() >= 6000);
        assert_eq!(got, want);
    }

    /// Cells far apart (more than 2^21 cells) and near the origin, against the O(n^2) reference.
    #[test]
    fn weld_map_unpacked_keys_match_brute_force() {
        let mut p = vec![
            Vec3::ZERO,
            Vec3::new(1e6, 0.0, 0.0),
            Vec3::new(1e6, 0.0, 0.0),
            Vec3::new(0.0, -1e6, 3.0),
            Vec3::new(0.5e-3, 0.0, 0.0),
            Vec3::ZERO,
        ];
        p.extend((0..50).map(|i| Vec3::new(i as f32 * 7.0, 1.0, 2.0)));
        p.push(Vec3::new(21.0, 1.0, 2.0));
        let got = weld_map_checked(&p, 1e-3);
        assert_eq!((got[2], got[4], got[5], got[p.len() - 1]), (1, 0, 0, 9));
    }

    /// Parts of a mesh big enough for the parallel union-find (strips of random lengths, some joined only
    /// through duplicated vertices), against a breadth-first search over the same welded edges.
    #[test]
    fn connected_parts_match_a_sequential_search() {
        let mut bits = lcg(7);
        let mut next = |m: u32| bits() % m;
        let mut p = Vec::new();
        let mut t = Vec::new();
        for strip in 0..1200 {
            let base = p.len() as u32;
            let len = 5 + next(60);
            for k in 0..len {
                p.push(Vec3::new(k as f32, strip as f32 * 3.0, (k % 2) as f32));
            }
            for k in 0..len - 2 {
                t.push([base + k, base + k + 1, base + k + 2]);
            }
            if next(3) == 0 {
                // A copy of this strip's first vertex starts a second strip glued on by welding.
                let glue = p.len() as u32;
                p.push(p[base as usize]);
                p.push(Vec3::new(-1.0, strip as f32 * 3.0, 5.0));
                p.push(Vec3::new(-2.0, strip as f32 * 3.0, 5.0));
                t.push([glue, glue + 1, glue + 2]);
            }
        }
        p.push(Vec3::splat(-50.0)); // on no triangle
        assert!(t.len() > PARALLEL_MIN);
        // Shuffle the vertices so that parts interleave in index order.
        let mut perm: Vec<u32> = (0..p.len() as u32).collect();
        for i in (1..perm.len()).rev() {
            perm.swap(i, next(i as u32 + 1) as usize);
        }
        let mut shuffled = vec![Vec3::ZERO; p.len()];
        for (old, &new) in perm.iter().enumerate() {
            shuffled[new as usize] = p[old];
        }
        let p = shuffled;
        let t: Vec<[u32; 3]> = t.iter().map(|tri| tri.map(|v| perm[v as usize])).collect();
        let (part, count) = connected_parts(&p, &t, 1e-4);
        // Reference: adjacency from triangles and exact-position welds, searched in index order.
        let n = p.len();
        let mut adj = vec![Vec::new(); n];
        for tri in &t {
            for (a, b) in [(tri[0], tri[1]), (tri[1], tri[2])] {
                adj[a as usize].push(b as usize);
                adj[b as usize].push(a as usize);
            }
        }
        let mut first_at = std::collections::HashMap::new();
        for (i, q) in p.iter().enumerate() {
            let key = (q.x.to_bits(), q.y.to_bits(), q.z.to_bits());
            if let Some(&j) = first_at.get(&key) {
                adj[i].push(j);
                adj[j].push(i);
            } else {
                first_at.insert(key, i);
            }
        }
        let mut want = vec![u32::MAX; n];
        let mut parts = 0;
        for s in 0..n {
            if want[s] != u32::MAX {
                continue;
            }
            let mut stack = vec![s];
            want[s] = parts;
            while let Some(v) = stack.pop() {
                for &w in &adj[v] {
                    if want[w] == u32::MAX {
                        want[w] = parts;
                        stack.push(w);
                    }
                }
            }
            parts += 1;
        }
        assert_eq!(count, parts as usize);
        assert_eq!(part, want);
    }

    /// Unions in any order, from one thread: every set's root is its lowest member, against relabelling by hand.
    #[test]
    fn union_find_roots_are_each_sets_lowest_member() {
        let mut next = lcg(31);
        let n = 500u32;
        let sets = UnionFind::new(n as usize);
        let mut label: Vec<u32> = (0..n).collect();
        for _ in 0..300 {
            let (a, b) = (next() % n, next() % n);
            sets.union(a, b);
            let (from, to) = (
                label[a as usize].max(label[b as usize]),
                label[a as usize].min(label[b as usize]),
            );
            label.iter_mut().filter(|l| **l == from).for_each(|l| *l = to);
        }
        assert_eq!(sets.roots(), label);
        assert!((0..n).all(|v| sets.find(v) == label[v as usize]));
        assert!(label.iter().any(|&l| l != 0) && label.iter().enumerate().any(|(v, &l)| l != v as u32));
    }

    #[test]
    fn duplicates_weld_and_parts_follow_triangles() {
        // Two triangles sharing an edge only through duplicated vertices, plus a separate triangle and a loner.
        let p = vec![
            Vec3::ZERO,
            Vec3::X,
            Vec3::Y,
            Vec3::X,   // duplicate of 1
            Vec3::Y,   // duplicate of 2
            Vec3::ONE, // second triangle's far corner
            Vec3::splat(5.0),
            Vec3::new(6.0, 5.0, 5.0),
            Vec3::new(5.0, 6.0, 5.0),
            Vec3::splat(-9.0),
        ];
        assert_eq!(weld_map(&p, 1e-6)[3], 1);
        assert_eq!(weld_map(&p, 1e-6)[4], 2);
        let t = vec![[0, 1, 2], [3, 5, 4], [6, 7, 8]];
        let (part, n) = connected_parts(&p, &t, 1e-6);
        assert_eq!(n, 3);
        assert_eq!(part, vec![0, 0, 0, 0, 0, 0, 1, 1, 1, 2]);
        // Without welding the second triangle is a part of its own.
        let (_, n0) = connected_parts(&p, &t, 0.0);
        assert_eq!(n0, 3, "zero tolerance still welds exact duplicates");
    }
}
