//! Row-level building blocks shared by every clean-up operation: joint locks, normalising one vertex's weights
//! around its locked joints, and rebuilding [`Weights`] from rows computed in parallel.

use rayon::prelude::*;

use crate::model::Row;
use crate::model::Weights;

/// Joints whose weights an operation must not change, by joint index. Joints past the end are unlocked.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Locks(Vec<bool>);

/// Equal when the same joints are locked (trailing unlocked flags do not count).
impl PartialEq for Locks {
    fn eq(&self, other: &Self) -> bool {
        self.joints().eq(other.joints())
    }
}

impl Eq for Locks {}

impl Locks {
    /// No joint locked.
    pub fn none() -> Self {
        Self(Vec::new())
    }

    /// Lock the given joints.
    pub fn of(joints: impl IntoIterator<Item = usize>) -> Self {
        let mut v = Vec::new();
        for j in joints {
            if v.len() <= j {
                v.resize(j + 1, false);
            }
            v[j] = true;
        }
        Self(v)
    }

    #[inline]
    pub fn is_locked(&self, joint: u16) -> bool {
        self.0.get(joint as usize).copied().unwrap_or(false)
    }

    /// Lock (true) or unlock joint `joint`.
    pub fn set(&mut self, joint: usize, locked: bool) {
        if self.0.len() <= joint {
            if !locked {
                return;
            }
            self.0.resize(joint + 1, false);
        }
        self.0[joint] = locked;
    }

    /// One flag per joint for `joints` joints (the session file's form).
    pub fn flags(&self, joints: usize) -> Vec<bool> {
        (0..joints).map(|j| self.0.get(j).copied().unwrap_or(false)).collect()
    }

    /// How many joints are locked.
    pub fn count(&self) -> usize {
        self.0.iter().filter(|&&l| l).count()
    }

    /// The order in which clean-up keeps a row's entries when it must drop some: locked joints first, then the
    /// strongest ([`stronger_first`](crate::model::weights::stronger_first)).
    pub fn locked_then_stronger(&self, a: &(u16, f32), b: &(u16, f32)) -> std::cmp::Ordering {
        self.is_locked(b.0)
            .cmp(&self.is_locked(a.0))
            .then(crate::model::weights::stronger_first(a, b))
    }

    pub fn any(&self) -> bool {
        self.0.iter().any(|&l| l)
    }

    /// The locked joints' indices, ascending.
    pub fn joints(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().filter(|(_, l)| **l).map(|(j, _)| j)
    }
}

/// How [`normalise_row`] had to treat a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFix {
    /// The unlocked weights were scaled to fill what the locked ones leave (or the row already summed to 1).
    Normal,
    /// The row could not sum to 1 without changing locked weights (no unlocked weight, or locked weights summing
    /// past 1); the locked weights were scaled too.
    LocksOverridden,
    /// The row is empty.
    Empty,
}

/// A row whose sum is this close to 1 is left as it is by [`normalise_row`].
pub const SUM_EXACT: f64 = 4.0 * f32::EPSILON as f64;

/// Drop non-positive and non-finite weights, then scale the unlocked weights so that the row sums to 1 with the
/// locked ones unchanged. Where that is impossible the whole row is scaled to 1 ([`RowFix::LocksOverridden`]):
/// every vertex always sums to 1. Sums are taken in f64, so the result sums to 1 within a few f32 ulps.
pub fn normalise_row(row: &mut Row, locks: &Locks) -> RowFix {
    row.retain(|&(_, w)| w.is_finite() && w > 0.0);
    if row.is_empty() {
        return RowFix::Empty;
    }
    let (mut locked, mut free) = (0.0f64, 0.0f64);
    for &(j, w) in row.iter() {
        if locks.is_locked(j) {
            locked += w as f64;
        } else {
            free += w as f64;
        }
    }
    if free > 0.0 && locked < 1.0 && (locked + free - 1.0).abs() <= SUM_EXACT {
        // Already sums to 1 (within rounding): leave it bit for bit.
        return RowFix::Normal;
    }
    if free > 0.0 && locked < 1.0 {
        let k = (1.0 - locked) / free;
        for (j, w) in row.iter_mut() {
            if !locks.is_locked(*j) {
                *w = (*w as f64 * k) as f32;
            }
        }
        row.retain(|&(_, w)| w > 0.0);
        return RowFix::Normal;
    }
    if (locked - 1.0).abs() <= SUM_EXACT {
        // The locked weights already make 1: the unlocked ones (spread here by smoothing, say) go.
        row.retain(|&(j, _)| locks.is_locked(j));
        return RowFix::Normal;
    }
    // Locked weights alone reach 1 (drop the rest) or are all there is: scale them.
    if locked > 0.0 {
        row.retain(|&(j, _)| locks.is_locked(j));
        let total = locked;
        row.iter_mut().for_each(|(_, w)| *w = (*w as f64 / total) as f32);
        return RowFix::LocksOverridden;
    }
    RowFix::Empty
}

/// Merge repeated joints (adding their weights) and sort a row by joint.
pub fn sort_row(row: &mut Row) {
    row.sort_unstable_by_key(|&(j, _)| j);
    row.dedup_by(|b, a| {
        if a.0 == b.0 {
            a.1 += b.1;
            true
        } else {
            false
        }
    });
}

/// Rows per parallel task in [`map_rows`].
const CHUNK: usize = 4096;

/// Build weights for `n` vertices, row `v` computed by `f(state, v, row)` into an empty `row` (any order, may hold
/// zeros; rows are sorted by joint, merged and checked here). Runs in parallel with one `init()` state per task;
/// deterministic. The rows should already sum to 1 (see [`normalise_row`]) or be empty; non-finite and
/// non-positive weights are dropped and a row off by more than the weights' tolerance is scaled, so the result
/// is always valid.
pub fn map_rows<S>(
    n: usize,
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, usize, &mut Row) + Sync + Send,
) -> Weights {
    struct Chunk {
        counts: Vec<u32>,
        joints: Vec<u16>,
        values: Vec<f32>,
    }
    let chunks: Vec<Chunk> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map_init(
            || (init(), Vec::new()),
            |(state, row), c| {
                let range = c * CHUNK..((c + 1) * CHUNK).min(n);
                let mut out = Chunk {
                    counts: Vec::with_capacity(range.len()),
                    joints: Vec::with_capacity(range.len() * 4),
                    values: Vec::with_capacity(range.len() * 4),
                };
                for v in range {
                    row.clear();
                    f(state, v, row);
                    row.retain(|&(_, w)| w.is_finite() && w > 0.0);
                    if !row.windows(2).all(|p| p[0].0 < p[1].0) {
                        sort_row(row);
                    }
                    let sum: f32 = row.iter().map(|x| x.1).sum();
                    if !row.is_empty() && (sum - 1.0).abs() > crate::model::weights::SUM_TOLERANCE {
                        // No operation hands over such a row; scaling it keeps the result valid if one ever does.
                        row.iter_mut().for_each(|x| x.1 /= sum);
                    }
                    out.counts.push(row.len() as u32);
                    for &(j, w) in row.iter() {
                        out.joints.push(j);
                        out.values.push(w);
                    }
                }
                out
            },
        )
        .collect();
    // Concatenate in parallel: each chunk copies into its own slice of the output.
    let total: usize = chunks.iter().map(|c| c.values.len()).sum();
    let mut offsets = vec![0u32; n + 1];
    let mut joints = vec![0u16; total];
    let mut values = vec![0.0f32; total];
    let mut pieces = Vec::with_capacity(chunks.len());
    {
        let (mut o, mut j, mut w) = (&mut offsets[1..], joints.as_mut_slice(), values.as_mut_slice());
        let mut base = 0u32;
        for c in &chunks {
            let (o1, o2) = std::mem::take(&mut o).split_at_mut(c.counts.len());
            let (j1, j2) = std::mem::take(&mut j).split_at_mut(c.joints.len());
            let (w1, w2) = std::mem::take(&mut w).split_at_mut(c.values.len());
            pieces.push((c, base, o1, j1, w1));
            base += c.values.len() as u32;
            (o, j, w) = (o2, j2, w2);
        }
    }
    pieces.into_par_iter().for_each(|(c, base, o, j, w)| {
        let mut at = base;
        for (slot, &k) in o.iter_mut().zip(&c.counts) {
            at += k;
            *slot = at;
        }
        j.copy_from_slice(&c.joints);
        w.copy_from_slice(&c.values);
    });
    drop(chunks);
    // Every row is now finite, positive, merged and sums to 1 within the tolerance, so the check passes.
    Weights::new(offsets, joints, values).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_are_set_one_joint_at_a_time_and_compare_by_the_joints_locked() {
        let mut l = Locks::none();
        l.set(2, true);
        assert!(l.is_locked(2) && !l.is_locked(1) && !l.is_locked(9));
        assert_eq!(l.flags(4), vec![false, false, true, false]);
        assert_eq!(l.count(), 1);
        assert_eq!(l, Locks::of([2]));
        l.set(2, false);
        l.set(7, false);
        assert_eq!(
            l,
            Locks::none(),
            "unlocking leaves nothing locked, whatever the flags' length"
        );
        assert_eq!(l.flags(2), vec![false, false]);
    }

    fn sum(row: &[(u16, f32)]) -> f32 {
        row.iter().map(|x| x.1).sum()
    }

    #[test]
    fn normalise_row_keeps_locked_weights() {
        let locks = Locks::of([1]);
        let mut row = vec![(0, 0.2), (1, 0.5), (2, 0.2)];
        assert_eq!(normalise_row(&mut row, &locks), RowFix::Normal);
        assert_eq!(row[1], (1, 0.5));
        assert!((row[0].1 - 0.25).abs() < 1e-7 && (row[2].1 - 0.25).abs() < 1e-7);
        assert!((sum(&row) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn normalise_row_overrides_locks_only_when_it_must() {
        let locks = Locks::of([0, 1]);
        // Locked weights alone past 1: the unlocked one goes, the locked ones scale.
        let mut row = vec![(0, 0.8), (1, 0.4), (2, 0.3)];
        assert_eq!(normalise_row(&mut row, &locks), RowFix::LocksOverridden);
        assert_eq!(row.len(), 2);
        assert!((row[0].1 - 2.0 / 3.0).abs() < 1e-6 && (sum(&row) - 1.0).abs() < 1e-6);
        // Only locked joints, short of 1.
        let mut row = vec![(0, 0.25), (1, 0.25)];
        assert_eq!(normalise_row(&mut row, &locks), RowFix::LocksOverridden);
        assert_eq!(row, vec![(0, 0.5), (1, 0.5)]);
        // Exactly 1 from locked joints: nothing to do.
        let mut row = vec![(0, 0.5), (1, 0.5)];
        assert_eq!(normalise_row(&mut row, &locks), RowFix::Normal);
        let mut row = vec![(3, f32::NAN), (4, -1.0), (5, 0.0)];
        assert_eq!(normalise_row(&mut row, &locks), RowFix::Empty);
        assert!(row.is_empty());
    }

    #[test]
    fn map_rows_builds_sorted_merged_rows_in_order() {
        let w = map_rows(
            10_000,
            || (),
            |_, v, row| {
                if v % 3 != 0 {
                    row.push(((v % 7) as u16 + 1, 0.25));
                    row.push((0, 0.5));
                    row.push(((v % 7) as u16 + 1, 0.25));
                }
            },
        );
        assert_eq!(w.len(), 10_000);
        assert_eq!(w.row(0), (&[][..], &[][..]));
        assert_eq!(w.row(1), (&[0u16, 2][..], &[0.5f32, 0.5][..]));
        assert_eq!(w.row(9_998).0, &[0u16, 3]);
    }
}
