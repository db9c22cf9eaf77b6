//! The jump measure (module doc of `check`): how far a vertex lands from where its neighbourhood goes, the
//! component-wise median of where each vertex within two edges would put it with its own skinning, in edge
//! lengths or in the spread of those placings where that is larger.
//!
//! [`jump_reference`] places the point once per neighbour through the pose ([`PoseView::place_as`]) and
//! selects the medians. Under a swing skinned by linear blend (or rigidly) every placing lies on one segment: a
//! neighbour with subtree share `s` puts rest point `p` at `pivot + (d + s (R d - d))` with `d = p - pivot`, or
//! at `pivot + R d` when `s >= 1`. Each coordinate of the first form is monotone in `s` (IEEE rounding is
//! monotone, so `s w`, `d + s w` and `pivot + (d + s w)` never reverse an order), so with the neighbours' shares
//! sorted once per joint ([`RingShares`]) the median is read at its rank rather than selected in every pose,
//! the `s >= 1` placings merged in as one block. [`jump_linear`] gives the reference's values bit for bit
//! (tests compare them); only a zero's sign in the median may differ, which no distance sees.

use glam::{Mat4, Vec3, Vec4};

use super::measure::PoseView;
use super::prep::Prepared;

/// Per measured vertex, the subtree shares of its two-edge neighbourhood (each welded node's first vertex's),
/// ascending: `shares[start[i]..start[i + 1]]` for the `i`-th vertex of [`super::measure::Active::jumps`], those
/// below 1 ending at `low_end[i]`.
#[derive(Clone, Debug, Default)]
pub(super) struct RingShares {
    start: Vec<u32>,
    low_end: Vec<u32>,
    shares: Vec<f32>,
}

impl RingShares {
    /// The sorted neighbourhood shares of each of `jumps` under per-vertex shares `s`; `None` when a share is
    /// not finite (the placings are then not monotone in it, and the reference measures).
    pub fn new(prep: &Prepared, jumps: &[u32], s: &[f32]) -> Option<Self> {
        let graph = &prep.graph;
        let mut start = Vec::with_capacity(jumps.len() + 1);
        let mut low_end = Vec::with_capacity(jumps.len());
        let mut shares = Vec::new();
        start.push(0u32);
        for &v in jumps {
            let from = shares.len();
            for &k in prep.ring_of(graph.node_of(v as usize)) {
                let x = *s.get(graph.members(k as usize)[0] as usize)?;
                if !x.is_finite() {
                    return None;
                }
                shares.push(x);
            }
            shares[from..].sort_unstable_by(f32::total_cmp);
            low_end.push(u32::try_from(from + shares[from..].partition_point(|&x| x < 1.0)).ok()?);
            start.push(u32::try_from(shares.len()).ok()?);
        }
        Some(Self { start, low_end, shares })
    }

    /// The `i`-th vertex's neighbourhood shares below 1, ascending, and how many are at 1 or more.
    pub fn of(&self, i: usize) -> (&[f32], usize) {
        match (self.start.get(i), self.low_end.get(i), self.start.get(i + 1)) {
            (Some(&a), Some(&m), Some(&b)) => (&self.shares[a as usize..m as usize], (b - m) as usize),
            _ => (&[], 0),
        }
    }
}

/// A linear-blend (or rigid) swing: its pivot and the whole turn about it.
#[derive(Clone, Copy, Debug)]
pub(super) struct LinearSwing {
    pub pivot: Vec3,
    pub swing: Mat4,
}

/// Buffers reused from vertex to vertex.
#[derive(Default)]
pub(super) struct JumpBuffers {
    points: Vec<Vec3>,
    dist: Vec<f32>,
}

/// A jump is measured in edge lengths, or in this many times the neighbourhood's spread where that is larger.
const SPREAD: f32 = 3.0;

/// Vertex `v`'s jump in units (see the module doc), placing its rest point with each of its neighbours'
/// skinning through `pose`; `None` when it has no neighbours.
pub(super) fn jump_reference<P: PoseView + ?Sized>(
    prep: &Prepared,
    rest: &[Vec3],
    posed: &[Vec3],
    pose: &P,
    v: usize,
    bufs: &mut JumpBuffers,
) -> Option<f32> {
    let ring = prep.ring_of(prep.graph.node_of(v));
    if ring.is_empty() {
        return None;
    }
    // Where each neighbour's skinning would put this vertex: a smooth field of transforms puts it where its own
    // does, whatever the shape of the neighbourhood.
    let buf = &mut bufs.points;
    buf.clear();
    buf.extend(
        ring.iter()
            .map(|&k| pose.place_as(prep.graph.members(k as usize)[0], rest[v])),
    );
    let median = median3(buf);
    bufs.dist.clear();
    bufs.dist.extend(buf.iter().map(|p| p.distance(median)));
    Some(off_by(posed[v], median, prep.edge[v], &mut bufs.dist))
}

/// [`jump_reference`] under a linear swing, from the neighbourhood's sorted `shares` (module doc).
pub(super) fn jump_linear(
    rest: Vec3,
    posed: Vec3,
    edge: f32,
    low_shares: &[f32],
    high_count: usize,
    swing: &LinearSwing,
    bufs: &mut JumpBuffers,
) -> Option<f32> {
    let count = low_shares.len() + high_count;
    if count == 0 {
        return None;
    }
    let pivot = swing.pivot;
    let d = rest - pivot;
    let rd = swing.swing.transform_vector3(d);
    let w = rd - d;
    // Neighbours with a share below 1 place it at `pivot + (d + s w)`, in ascending order of share; those at 1
    // or more all at `high`. Coordinates one at a time, as glam's `Vec3` works them (so the same bits).
    let low_count = low_shares.len();
    let high = pivot + rd;
    let mid = count / 2;
    let mut median = [0.0f32; 3];
    for (axis, m) in median.iter_mut().enumerate() {
        let (p, d, w) = (pivot[axis], d[axis], w[axis]);
        let rising = w >= 0.0;
        // The `j`-th smallest of the low placings' coordinates.
        let low = |j: usize| p + (d + low_shares[if rising { j } else { low_count - 1 - j }] * w);
        debug_assert!(
            (1..low_count).all(|j| low(j - 1) <= low(j)),
            "placings not monotone in the share"
        );
        let h = high[axis];
        // How many low placings lie below the high block (none is, without one; at one end, mostly).
        let below = match low_count {
            _ if high_count == 0 => low_count,
            0 => 0,
            _ if low(low_count - 1) < h => low_count,
            _ if h <= low(0) => 0,
            _ => first_false(low_count, |j| low(j) < h),
        };
        *m = if mid < below {
            low(mid)
        } else if mid < below + high_count {
            h
        } else {
            low(mid - high_count)
        };
    }
    let median = Vec3::from(median);
    // Each placing's squared distance from the median (`Vec3::distance`'s arithmetic before its square root, in
    // lanes). The square root is monotone, so the spread is the root of the middle squared distance: one root
    // rather than one per neighbour.
    let dist2 = &mut bufs.dist;
    dist2.clear();
    dist2.resize(low_count, 0.0);
    let (o, m) = (pivot.to_array(), median.to_array());
    let (d, w) = (d.to_array(), w.to_array());
    // PERF: four placings at a time in SSE lanes (each lane's mul and add are the scalar ones).
    let mut outs = dist2.chunks_exact_mut(4);
    let mut ins = low_shares.chunks_exact(4);
    for (out, four) in (&mut outs).zip(&mut ins) {
        let s = Vec4::from_slice(four);
        let at = |i: usize| Vec4::splat(o[i]) + (Vec4::splat(d[i]) + s * w[i]) - Vec4::splat(m[i]);
        let (x, y, z) = (at(0), at(1), at(2));
        (x * x + y * y + z * z).write_to_slice(out);
    }
    for (out, &s) in outs.into_remainder().iter_mut().zip(ins.remainder()) {
        let x = o[0] + (d[0] + s * w[0]) - m[0];
        let y = o[1] + (d[1] + s * w[1]) - m[1];
        let z = o[2] + (d[2] + s * w[2]) - m[2];
        *out = x * x + y * y + z * z;
    }
    let hd2 = (high - median).length_squared();
    let spread = match valley_rank(dist2, hd2, high_count, mid) {
        Some(x2) => x2.sqrt(),
        None => {
            dist2.extend(std::iter::repeat_n(hd2, high_count));
            let (_, x2, _) = dist2.select_nth_unstable_by(mid, f32::total_cmp);
            x2.sqrt()
        }
    };
    Some(off_in(posed, median, edge, spread))
}

/// The `rank`-th smallest of `dist` and `high_count` copies of `high`, when `dist` falls then rises (as the
/// distances of placings ordered by share from their median do, each coordinate's difference being monotone);
/// `None` when it does not, or a value is not finite. Distances are not negative, so `<` orders them as
/// `total_cmp` does.
fn valley_rank(dist: &[f32], high: f32, high_count: usize, rank: usize) -> Option<f32> {
    let n = dist.len();
    // A sum is finite only when every term is (one too large to add up only sends this to the selection).
    if rank >= n + high_count || !(high + dist.iter().sum::<f32>()).is_finite() {
        return None;
    }
    // The falling run is dist[..=bottom], the rising run dist[bottom + 1..].
    let next = dist.get(1..).unwrap_or(&[]);
    let bottom = dist.iter().zip(next).take_while(|(a, b)| b <= a).count();
    if !dist[bottom..]
        .iter()
        .zip(&next[bottom.min(next.len())..])
        .all(|(a, b)| b >= a)
    {
        return None;
    }
    // Both runs ascending: the falling one read backwards from its bottom, then the rising one.
    let na = if n == 0 { 0 } else { bottom + 1 };
    let nb = n - na;
    let a = |i: usize| dist[bottom - i];
    let b = |i: usize| dist[na + i];
    if high_count == 0 {
        return Some(kth_of_two(a, na, b, nb, rank));
    }
    // The copies of `high` sit after the values below it.
    let (ca, cb) = (first_false(na, |i| a(i) < high), first_false(nb, |i| b(i) < high));
    Some(if rank < ca + cb {
        kth_of_two(a, ca, b, cb, rank)
    } else if rank < ca + cb + high_count {
        high
    } else {
        kth_of_two(a, na, b, nb, rank - high_count)
    })
}

/// The `k`-th smallest (from 0) of ascending `a(0..na)` and `b(0..nb)` together, `k < na + nb`: taking `i` from
/// `a` and `k + 1 - i` from `b`, the least `i` at which `a`'s next is not below `b`'s last taken.
fn kth_of_two(a: impl Fn(usize) -> f32, na: usize, b: impl Fn(usize) -> f32, nb: usize, k: usize) -> f32 {
    debug_assert!(k < na + nb);
    let take = k + 1;
    let (lo, hi) = (take.saturating_sub(nb), na.min(take));
    let i = lo + first_false(hi.saturating_sub(lo), |x| a(lo + x) < b(take - 1 - (lo + x)));
    let from_a = if i > 0 { a(i - 1) } else { f32::NEG_INFINITY };
    let from_b = if take > i { b(take - 1 - i) } else { f32::NEG_INFINITY };
    from_a.max(from_b)
}

/// The first `j` in `0..len` where `pred` is false, `pred` true before it and false after.
fn first_false(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let m = lo + (hi - lo) / 2;
        if pred(m) {
            lo = m + 1;
        } else {
            hi = m;
        }
    }
    lo
}

/// The offset of `posed` from `median` in units: the edge, or [`SPREAD`] times the placings' median distance
/// from the median (`dist`, reordered) where that is larger: a vertex in a steep blend is measured against that
/// spread, not against an edge.
fn off_by(posed: Vec3, median: Vec3, edge: f32, dist: &mut [f32]) -> f32 {
    let mid = dist.len() / 2;
    let (_, spread, _) = dist.select_nth_unstable_by(mid, f32::total_cmp);
    off_in(posed, median, edge, *spread)
}

fn off_in(posed: Vec3, median: Vec3, edge: f32, spread: f32) -> f32 {
    let unit = edge.max(SPREAD * spread);
    (posed - median).length() / unit
}

/// The component-wise median of `values` (reordered; the upper median of an even count).
fn median3(values: &mut [Vec3]) -> Vec3 {
    let mid = values.len() / 2;
    let mut out = [0.0f32; 3];
    for (axis, o) in out.iter_mut().enumerate() {
        values.select_nth_unstable_by(mid, |x, y| x[axis].total_cmp(&y[axis]));
        *o = values[mid][axis];
    }
    Vec3::from(out)
}

#[cfg(test)]
mod tests {
    use glam::{Mat4, Vec3};

    use super::{JumpBuffers, LinearSwing, jump_linear, median3, off_by};

    /// Tiny deterministic generator (xorshift), so the test needs no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    /// The reference's arithmetic: each placing as `SwingView::place` makes it, medians selected.
    fn reference(rest: Vec3, posed: Vec3, edge: f32, shares: &[f32], sw: &LinearSwing) -> f32 {
        let mut pts: Vec<Vec3> = shares
            .iter()
            .map(|&s| {
                let d = rest - sw.pivot;
                let turn = if s >= 1.0 {
                    sw.swing.transform_vector3(d)
                } else {
                    d + s * (sw.swing.transform_vector3(d) - d)
                };
                sw.pivot + turn
            })
            .collect();
        let median = median3(&mut pts);
        let mut dist: Vec<f32> = pts.iter().map(|p| p.distance(median)).collect();
        off_by(posed, median, edge, &mut dist)
    }

    #[test]
    fn the_rank_in_a_valley_and_a_block_is_the_rank_in_the_sorted_values() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for case in 0..20_000 {
            let n = (rng.next() * 30.0) as usize;
            let bottom = (rng.next() * n as f32) as usize;
            // Steps of 0 make ties; a few values are the high value itself.
            let high = (rng.next() * 4.0).floor();
            let mut dist: Vec<f32> = Vec::with_capacity(n);
            let mut x = (rng.next() * 4.0).floor();
            for k in 0..n {
                dist.push(x);
                let step = (rng.next() * 2.0).floor();
                x = if k < bottom { (x - step).max(0.0) } else { x + step };
            }
            let high_count = (rng.next() * 8.0) as usize;
            if n + high_count == 0 {
                continue;
            }
            let mut all = dist.clone();
            all.extend(std::iter::repeat_n(high, high_count));
            all.sort_by(f32::total_cmp);
            for (rank, want) in all.iter().enumerate() {
                let got = super::valley_rank(&dist, high, high_count, rank);
                assert_eq!(
                    got,
                    Some(*want),
                    "case {case}: rank {rank} of {dist:?} and {high_count} x {high}"
                );
            }
        }
        assert_eq!(super::valley_rank(&[3.0, 1.0, 2.0, 0.5], 9.0, 0, 1), None);
        assert_eq!(super::valley_rank(&[3.0, 1.0, 2.0, 5.0], 9.0, 0, 1), Some(2.0));
        assert_eq!(super::valley_rank(&[], 9.0, 2, 1), Some(9.0));
    }

    #[test]
    fn the_linear_jump_reads_the_same_medians_as_selecting_them_bit_for_bit() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut bufs = JumpBuffers::default();
        for case in 0..20_000 {
            let axis = Vec3::new(rng.next() - 0.5, rng.next() - 0.5, rng.next() - 0.5).normalize_or(Vec3::X);
            let angle = (rng.next() - 0.5) * 6.0;
            let pivot = Vec3::new(rng.next(), rng.next(), rng.next()) * 2.0 - 1.0;
            let sw = LinearSwing {
                pivot,
                swing: crate::eval::posed::swing_matrix(pivot, axis, angle),
            };
            let rest = Vec3::new(rng.next(), rng.next(), rng.next()) * 2.0 - 1.0;
            let posed = rest + Vec3::new(rng.next(), rng.next(), rng.next()) * 0.1;
            let n = 1 + (rng.next() * 40.0) as usize;
            // Shares of 0, of exactly 1 (and a little above, as a sum of weights gives), repeated, and between.
            let mut shares: Vec<f32> = (0..n)
                .map(|_| match (rng.next() * 6.0) as u32 {
                    0 => 0.0,
                    1 => 1.0,
                    2 => 1.000_000_1,
                    3 => 0.5,
                    _ => rng.next(),
                })
                .collect();
            shares.sort_unstable_by(f32::total_cmp);
            let edge = 0.01 + rng.next() * 0.1;
            let want = reference(rest, posed, edge, &shares, &sw);
            let low = shares.partition_point(|&s| s < 1.0);
            let got = jump_linear(rest, posed, edge, &shares[..low], shares.len() - low, &sw, &mut bufs);
            assert_eq!(got.map(f32::to_bits), Some(want.to_bits()), "case {case}: {shares:?}");
        }
        let still = LinearSwing {
            pivot: Vec3::ZERO,
            swing: Mat4::IDENTITY,
        };
        assert_eq!(jump_linear(Vec3::ONE, Vec3::ONE, 1.0, &[], 0, &still, &mut bufs), None);
    }
}
