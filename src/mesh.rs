//! Mesh connectivity shared by binding and weight clean-up: welding coincident vertices and finding the
//! connected parts of a mesh.
//!
//! Welding: two vertices weld when their positions fall in the same cell of a grid of size `tolerance`
//! (so exact duplicates, as on UV seams and in triangle soups, always weld; nearer pairs across a cell boundary
//! may not). Each vertex maps to the lowest index of its group. Parts: connected components of the welded
//! triangles; a vertex on no triangle is a part of its own. Part ids are numbered in order of each part's lowest
//! vertex index, so the result is deterministic.
//!
//! Both run in parallel (rayon): the cell keys are computed in parallel and grouped by a counting sort on their
//! hash (for many vertices, sixteen ranges of buckets sorted out first and then bucketed concurrently), and the
//! components are found by a concurrent union-find (Anderson and Woll, "Wait-free parallel algorithms for the
//! union-find problem", STOC 1991) in which a root is only ever linked under a lower index, by compare-and-swap,
//! and paths are halved; every component's root is then its lowest vertex whatever the order the threads ran in.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use glam::Vec3;
use rayon::prelude::*;

/// Below this many vertices or triangles, work is done on one thread.
pub(crate) const PARALLEL_MIN: usize = 1 << 14;

/// [`groups`] splits its buckets into `2^RANGE_BITS` ranges (for at least [`PARALLEL_MIN`] keys, whose bucket
/// indices have more bits than that).
const RANGE_BITS: u32 = 4;
const _: () = assert!(PARALLEL_MIN >= 1 << RANGE_BITS);

/// For each vertex, the lowest index of the vertices it welds to (itself when none).
pub fn weld_map(positions: &[Vec3], tolerance: f32) -> Vec<u32> {
    let mut rep: Vec<u32> = (0..positions.len() as u32).collect();
    for_weld_groups(positions, tolerance, |group| {
        for &v in &group[1..] {
            rep[v as usize] = group[0];
        }
    });
    rep
}

/// Call `each` with every group of two or more vertices that weld (indices ascending), groups in no useful order.
fn for_weld_groups(positions: &[Vec3], tolerance: f32, mut each: impl FnMut(&[u32])) {
    // `floor` by truncation (a libm call without SSE4.1): equal to `f32::floor` then a saturating cast, NaN to 0.
    let floor = |x: f32| {
        let i = x as i64;
        if i as f32 > x { i.saturating_sub(1) } else { i }
    };
    let cell = |p: Vec3| -> [i64; 3] {
        if tolerance > 0.0 {
            let q = p / tolerance;
            [floor(q.x), floor(q.y), floor(q.z)]
        } else {
            [p.x.to_bits() as i64, p.y.to_bits() as i64, p.z.to_bits() as i64]
        }
    };
    let min = |a: [i64; 3], c: [i64; 3]| [a[0].min(c[0]), a[1].min(c[1]), a[2].min(c[2])];
    let max = |a: [i64; 3], c: [i64; 3]| [a[0].max(c[0]), a[1].max(c[1]), a[2].max(c[2])];
    let (lo, hi) = positions
        .par_iter()
        .with_min_len(PARALLEL_MIN)
        .map(|p| cell(*p))
        .fold(
            || ([i64::MAX; 3], [i64::MIN; 3]),
            |(lo, hi), c| (min(lo, c), max(hi, c)),
        )
        .reduce(|| ([i64::MAX; 3], [i64::MIN; 3]), |a, b| (min(a.0, b.0), max(a.1, b.1)));
    // Cells packed into one u64 (21 bits an axis) when they fit, which they do for any tolerance above a
    // millionth of the mesh's size.
    let fits = (0..3).all(|k| (hi[k].wrapping_sub(lo[k]) as u64) >> 21 == 0);
    let mix = |k: u64| k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    if fits {
        let pack =
            |c: [i64; 3]| ((c[0] - lo[0]) as u64) | (((c[1] - lo[1]) as u64) << 21) | (((c[2] - lo[2]) as u64) << 42);
        let keys = positions
            .par_iter()
            .with_min_len(PARALLEL_MIN)
            .map(|p| pack(cell(*p)))
            .collect();
        groups(keys, |k| mix(*k), &mut each);
    } else {
        let keys = positions
            .par_iter()
            .with_min_len(PARALLEL_MIN)
            .map(|p| cell(*p))
            .collect();
        groups(
            keys,
            |c| mix(mix(mix(c[0] as u64) ^ c[1] as u64) ^ c[2] as u64),
            &mut each,
        );
    }
}

/// Call `each` with the indices (ascending) of every key held by two or more of `keys`. The indices are
/// bucketed by a hash of their key (a counting sort into two to four buckets a key, O(n), so that few buckets
/// hold two different keys); only buckets of two or more, nearly always one key's duplicates, are sorted.
///
/// For many keys the buckets are split into 16 ranges by the hash's top bits: the indices are first sorted into
/// the ranges ([`partition`]), then each range is bucketed on its own, ranges in parallel, each with a bucket
/// array a sixteenth of the size. The buckets, and so the groups, are the same.
fn groups<K: Ord + Copy + Send + Sync>(keys: Vec<K>, hash: impl Fn(&K) -> u64 + Sync, each: &mut impl FnMut(&[u32])) {
    let n = keys.len();
    if n < 2 {
        return;
    }
    let bits = usize::BITS - (n - 1).leading_zeros() + 1;
    let bucket = |k: &K| (hash(k) >> (64 - bits)) as usize;
    // Groups are found as a list of each one's length then its indices.
    if n < PARALLEL_MIN {
        let all: Vec<u32> = (0..n as u32).collect();
        let mut found = Vec::new();
        bucket_groups(&keys, &all, bucket, 1 << bits, &mut found);
        each_group(&found, each);
    } else {
        let sub = bits - RANGE_BITS;
        // The indices range by range, ascending within a range.
        let (order, starts) = partition(&keys, 1 << RANGE_BITS, |k| Some(bucket(k) >> sub), |i, _| i as u32);
        let mask = (1usize << sub) - 1;
        let per_range: Vec<Vec<u32>> = starts
            .par_windows(2)
            .map(|r| {
                let mut out = Vec::new();
                bucket_groups(&keys, &order[r[0]..r[1]], |k| bucket(k) & mask, 1 << sub, &mut out);
                out
            })
            .collect();
        for found in &per_range {
            each_group(found, each);
        }
    }
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

/// Call `each` with every group of `found` (each as its length then its indices).
fn each_group(found: &[u32], each: &mut impl FnMut(&[u32])) {
    let mut at = 0;
    while at < found.len() {
        let len = found[at] as usize;
        each(&found[at + 1..at + 1 + len]);
        at += 1 + len;
    }
}

/// The groups of [`groups`] among `indices` (ascending), bucketed into `buckets` by `bucket`: appended to `out`,
/// each as its length then its indices.
fn bucket_groups<K: Ord + Copy>(
    keys: &[K],
    indices: &[u32],
    bucket: impl Fn(&K) -> usize,
    buckets: usize,
    out: &mut Vec<u32>,
) {
    let mut start = vec![0u32; buckets + 1];
    for &i in indices {
        start[bucket(&keys[i as usize]) + 1] += 1;
    }
    for b in 0..buckets {
        start[b + 1] += start[b];
    }
    let mut fill = start.clone();
    let mut order = vec![0u32; indices.len()];
    for &i in indices {
        let b = bucket(&keys[i as usize]);
        order[fill[b] as usize] = i;
        fill[b] += 1;
    }
    drop(fill);
    let mut run: Vec<(K, u32)> = Vec::new();
    for b in start.windows(2).filter(|w| w[1] - w[0] > 1) {
        if b[1] - b[0] == 2 {
            // Most such buckets: two indices (ascending, as scattered), one key or two.
            let (i, j) = (order[b[0] as usize], order[b[0] as usize + 1]);
            if keys[i as usize] == keys[j as usize] {
                out.extend_from_slice(&[2, i, j]);
            }
            continue;
        }
        run.clear();
        run.extend(
            order[b[0] as usize..b[1] as usize]
                .iter()
                .map(|&i| (keys[i as usize], i)),
        );
        run.sort_unstable();
        for same in run.chunk_by(|a, b| a.0 == b.0).filter(|r| r.len() > 1) {
            out.push(same.len() as u32);
            out.extend(same.iter().map(|k| k.1));
        }
    }
}

/// The root of `x`'s tree, halving the path on the way (each node passed is pointed at its grandparent, which
/// only ever moves a pointer to a lower index, so concurrent finds and links stay consistent).
fn find(parent: &[AtomicU32], mut x: u32) -> u32 {
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

/// Join the trees of `a` and `b`: the higher root is linked under the lower one, if it is still a root.
fn union(parent: &[AtomicU32], a: u32, b: u32) {
    let (mut a, mut b) = (a, b);
    loop {
        a = find(parent, a);
        b = find(parent, b);
        if a == b {
            return;
        }
        let (lo, hi) = (a.min(b), a.max(b));
        if parent[hi as usize].compare_exchange(hi, lo, Relaxed, Relaxed).is_ok() {
            return;
        }
        // `hi` was linked meanwhile: try again from where it went.
        (a, b) = (hi, lo);
    }
}

/// The part of each vertex (0-based, ordered by lowest vertex index) and the number of parts.
pub fn connected_parts(positions: &[Vec3], triangles: &[[u32; 3]], weld_tolerance: f32) -> (Vec<u32>, usize) {
    let n = positions.len();
    let parent: Vec<AtomicU32> = (0..n as u32).map(AtomicU32::new).collect();
    rayon::join(
        || {
            for_weld_groups(positions, weld_tolerance, |group| {
                for &v in &group[1..] {
                    union(&parent, group[0], v);
                }
            })
        },
        || {
            triangles
                .par_iter()
                .with_min_len(PARALLEL_MIN)
                .filter(|t| t.iter().all(|&i| (i as usize) < n))
                .for_each(|t| {
                    union(&parent, t[0], t[1]);
                    union(&parent, t[1], t[2]);
                })
        },
    );
    // Every root is the lowest vertex of its part: parts are numbered by counting the roots before it.
    let root: Vec<u32> = (0..n as u32)
        .into_par_iter()
        .with_min_len(PARALLEL_MIN)
        .map(|v| find(&parent, v))
        .collect();
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

    /// The packed-key path (cells within 2^21 of each other) against an O(n^2) reference.
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

    /// Enough points for the parallel grouping (ranges of buckets sorted out in blocks), with exact duplicates,
    /// near ones in the same cell and near ones across a cell boundary, against a hash map of cells.
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

    /// Cells too far apart to pack into one u64 take the unpacked path, with the same answers.
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
