//! Sparse per-vertex skin weights, always valid.
//!
//! Stored as compressed rows (CSR): vertex `v`'s influences are `joints[offsets[v]..offsets[v+1]]` with the
//! matching `values`. A [`Weights`] can only be built through [`Weights::new`] (or [`Weights::normalized`],
//! [`Weights::rigid`], or deserializing, which goes through `new`), which checks that every value is finite and positive, that no joint appears twice in a row, and that every
//! non-empty row sums to 1 within [`SUM_TOLERANCE`]. A row may be empty: an unweighted vertex is kept and
//! reported, never invented. Influences keep the order they were given in.

/// How far a row's sum may be from 1 and still count as normalised (the course files write 3 to 6 decimals).
pub const SUM_TOLERANCE: f32 = 1e-3;
/// Rows longer than this merge repeated joints through a table by joint, not by searching the row.
const SHORT_ROW: usize = 16;

/// Why rows do not make valid weights.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WeightsError {
    #[error("vertex {vertex}: weight {value} of joint {joint} is not a finite positive number")]
    BadValue { vertex: usize, joint: u16, value: f32 },
    #[error("vertex {vertex}: joint {joint} appears twice")]
    Duplicate { vertex: usize, joint: u16 },
    #[error("vertex {vertex}: weights sum to {sum}, not 1")]
    Sum { vertex: usize, sum: f32 },
    #[error("the offsets do not describe {rows} rows over {entries} entries")]
    Shape { rows: usize, entries: usize },
}

/// One vertex's weights as (joint, weight) pairs: the form in which every row edit works (the brush, the weight
/// table, clean-up, mirroring, binding), while [`Weights`] keeps all rows in compressed form.
pub type Row = Vec<(u16, f32)>;

/// "Stronger first": the larger weight first, ties to the lower joint. Every "keep the k strongest" in the crate
/// (binding's influence limit, clean-up's limit, the GPU's four, glTF export's four) orders rows this way, so
/// they agree on which influences survive.
pub fn stronger_first(a: &(u16, f32), b: &(u16, f32)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

/// Keep the `k` strongest entries of `row`, strongest first ([`stronger_first`]). A row already in that order
/// (binding's rows usually are) is checked rather than sorted again.
pub fn keep_strongest(row: &mut Row, k: usize) {
    if !row.is_sorted_by(|a, b| stronger_first(a, b).is_le()) {
        row.sort_by(stronger_first);
    }
    row.truncate(k);
}

/// The 4 strongest influences of the compressed row `joints`/`weights`, strongest first ([`stronger_first`]),
/// scaled to sum 1, and how many there are: the fixed-size form of [`keep_strongest`] that the GPU's vertex
/// attributes and glTF's `JOINTS_0`/`WEIGHTS_0` take (no allocation per vertex).
pub fn strongest_four(joints: &[u16], weights: &[f32]) -> ([u16; 4], [f32; 4], usize) {
    strongest_four_of(joints.iter().copied().zip(weights.iter().copied()))
}

/// [`strongest_four`] of a row given as (joint, weight) pairs.
pub fn strongest_four_of(row: impl IntoIterator<Item = (u16, f32)>) -> ([u16; 4], [f32; 4], usize) {
    // PERF: each entry compared by one integer key (a brush dab packs thousands of rows, and comparing by
    // `stronger_first` took most of it); the iterator is driven from inside (`for_each`), which a chained
    // iterator does without asking at every step which half it is in.
    let (mut keys, mut top) = ([0u64; 4], [(0u16, 0f32); 4]);
    let mut n = 0;
    row.into_iter().for_each(|e| {
        let key = strength_key(e);
        // The first slot whose entry is weaker: the entries after it, weaker still, move down one.
        let mut at = n;
        while at > 0 && key > keys[at - 1] {
            at -= 1;
        }
        if at < 4 {
            for i in (at..n.min(3)).rev() {
                keys[i + 1] = keys[i];
                top[i + 1] = top[i];
            }
            keys[at] = key;
            top[at] = e;
            n = (n + 1).min(4);
        }
    });
    let sum: f32 = top[..n].iter().map(|x| x.1).sum();
    let (mut js, mut ws) = ([0u16; 4], [0f32; 4]);
    for (k, &(j, w)) in top[..n].iter().enumerate() {
        js[k] = j;
        ws[k] = if sum > 0.0 { w / sum } else { w };
    }
    (js, ws, n)
}

/// A key that orders entries as [`stronger_first`] does, strongest largest: the weight's bits mapped to an
/// unsigned integer in `f32::total_cmp`'s order, then the joint reversed.
fn strength_key((j, w): (u16, f32)) -> u64 {
    let bits = w.to_bits();
    // total_cmp's order: negative values have their other bits flipped; then the sign bit flipped makes the
    // order unsigned.
    let ordered = (bits ^ ((((bits as i32) >> 31) as u32) >> 1)) ^ (1 << 31);
    (u64::from(ordered) << 16) | u64::from(u16::MAX - j)
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "WeightsData")]
pub struct Weights {
    offsets: Vec<u32>,
    joints: Vec<u16>,
    values: Vec<f32>,
}

/// The serialized form of [`Weights`]; deserializing checks it with [`Weights::new`].
#[derive(serde::Deserialize)]
struct WeightsData {
    offsets: Vec<u32>,
    joints: Vec<u16>,
    values: Vec<f32>,
}

impl TryFrom<WeightsData> for Weights {
    type Error = WeightsError;
    fn try_from(d: WeightsData) -> Result<Self, WeightsError> {
        Weights::new(d.offsets, d.joints, d.values)
    }
}

/// What [`Weights::normalized`] changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NormalizeReport {
    /// Vertices whose sum was off by more than the tolerance, with their sum before.
    pub renormalized: Vec<(usize, f32)>,
    /// Explicit zero weights dropped.
    pub zeros_dropped: usize,
    /// Joints that appeared twice in a row and were merged (weights added).
    pub duplicates_merged: usize,
}

impl Weights {
    /// Vertex `v`'s row as pairs, appended to `out` (a scratch row the caller reuses).
    pub fn row_pairs(&self, v: usize, out: &mut Row) {
        let (js, ws) = self.row(v);
        out.extend(js.iter().copied().zip(ws.iter().copied()));
    }

    /// The rows of `vertices` as pairs, in their order (what a row edit keeps before and after).
    pub fn rows_of(&self, vertices: &[u32]) -> Vec<Row> {
        vertices
            .iter()
            .map(|&v| {
                let mut r = Vec::new();
                self.row_pairs(v as usize, &mut r);
                r
            })
            .collect()
    }

    /// The vertices, ascending, whose rows differ from `other`'s (over the vertices both have).
    pub fn differing_rows(&self, other: &Weights) -> Vec<u32> {
        (0..self.len().min(other.len()) as u32)
            .filter(|&v| self.row(v as usize) != other.row(v as usize))
            .collect()
    }

    /// Check and take compressed rows. `offsets` has one more entry than there are vertices.
    pub fn new(offsets: Vec<u32>, joints: Vec<u16>, values: Vec<f32>) -> Result<Self, WeightsError> {
        let w = Self {
            offsets,
            joints,
            values,
        };
        w.check()?;
        Ok(w)
    }

    /// Take compressed rows that the caller has made valid by construction (a bind's rows, normalised as they
    /// were made), without the O(entries) check; debug builds still check and panic on a bad row.
    pub(crate) fn from_valid(offsets: Vec<u32>, joints: Vec<u16>, values: Vec<f32>) -> Self {
        let w = Self {
            offsets,
            joints,
            values,
        };
        debug_assert_eq!(w.check(), Ok(()));
        w
    }

    fn check(&self) -> Result<(), WeightsError> {
        let shape_ok = self.offsets.first() == Some(&0)
            && self.joints.len() == self.values.len()
            && self.offsets.last().copied() == Some(self.values.len() as u32)
            && self.offsets.windows(2).all(|w| w[0] <= w[1]);
        if !shape_ok {
            return Err(WeightsError::Shape {
                rows: self.offsets.len().saturating_sub(1),
                entries: self.values.len(),
            });
        }
        // Rows are checked in parallel; the error reported is the first bad row's, as in a sequential pass.
        use rayon::prelude::*;
        match (0..self.len())
            .into_par_iter()
            .with_min_len(4096)
            .map(|v| self.check_row(v))
            .find_first(Result::is_err)
        {
            Some(e) => e,
            None => Ok(()),
        }
    }

    fn check_row(&self, v: usize) -> Result<(), WeightsError> {
        let (js, ws) = self.row(v);
        check_row(v, js, ws)
    }

    /// Build from rows that may hold zeros, repeated joints and sums other than 1: zeros are dropped, repeats
    /// merged, and each non-empty row whose sum is off by more than the tolerance is scaled to sum 1.
    /// Values must still be finite and non-negative.
    pub fn normalized<'a>(
        rows: impl IntoIterator<Item = &'a [(u16, f32)]>,
    ) -> Result<(Self, NormalizeReport), WeightsError> {
        let mut offsets = vec![0u32];
        let mut joints = Vec::new();
        let mut values = Vec::new();
        for row in rows {
            for &(j, w) in row {
                joints.push(j);
                values.push(w);
            }
            offsets.push(values.len() as u32);
        }
        Self::normalized_csr(offsets, joints, values)
    }

    /// [`Weights::normalized`] over rows already in compressed form; cleans them in place.
    ///
    /// PERF: runs of rows are cleaned in parallel, each within its own entries, and checked as [`Weights::new`]
    /// would check them as they are written (a 1M-vertex skin's weights were cleaned, then checked, in two
    /// passes). Errors are the sequential ones: the first bad input row's, else the first bad cleaned row's.
    pub fn normalized_csr(
        mut offsets: Vec<u32>,
        mut joints: Vec<u16>,
        mut values: Vec<f32>,
    ) -> Result<(Self, NormalizeReport), WeightsError> {
        use rayon::prelude::*;
        const RUN: usize = 1 << 15;
        let shape_ok = offsets.first() == Some(&0)
            && joints.len() == values.len()
            && offsets.last().copied() == Some(values.len() as u32)
            && offsets.windows(2).all(|w| w[0] <= w[1]);
        if !shape_ok {
            return Err(WeightsError::Shape {
                rows: offsets.len().saturating_sub(1),
                entries: values.len(),
            });
        }
        let rows = offsets.len() - 1;
        let firsts: Vec<usize> = (0..rows).step_by(RUN).collect();
        let starts: Vec<usize> = firsts.iter().map(|&r| offsets[r] as usize).collect();
        let mut runs = Vec::with_capacity(firsts.len());
        let (mut js, mut ws, mut ends) = (&mut joints[..], &mut values[..], &mut offsets[1..]);
        for (k, &first) in firsts.iter().enumerate() {
            let (rows_here, entries) = match (firsts.get(k + 1), starts.get(k + 1)) {
                (Some(&next), Some(&at)) => (next - first, at - starts[k]),
                _ => (rows - first, ws.len()),
            };
            let (j, j_rest) = std::mem::take(&mut js).split_at_mut(entries);
            let (w, w_rest) = std::mem::take(&mut ws).split_at_mut(entries);
            let (e, e_rest) = std::mem::take(&mut ends).split_at_mut(rows_here);
            (js, ws, ends) = (j_rest, w_rest, e_rest);
            runs.push((first, starts[k], j, w, e));
        }
        let cleaned: Vec<Result<Cleaned, WeightsError>> = runs
            .into_par_iter()
            .map(|(first, start, j, w, e)| clean_run(first, start, j, w, e))
            .collect();
        let cleaned = cleaned.into_iter().collect::<Result<Vec<_>, _>>()?;
        if let Some(e) = cleaned.iter().find_map(|c| c.invalid.clone()) {
            return Err(e);
        }
        // Close up the runs that shrank.
        let mut report = NormalizeReport::default();
        let mut write = 0usize;
        for (k, c) in cleaned.into_iter().enumerate() {
            let start = starts[k];
            if start != write {
                joints.copy_within(start..start + c.written, write);
                values.copy_within(start..start + c.written, write);
                let last = firsts.get(k + 1).map_or(rows, |&r| r);
                for o in &mut offsets[firsts[k] + 1..=last] {
                    *o -= (start - write) as u32;
                }
            }
            write += c.written;
            report.renormalized.extend(c.report.renormalized);
            report.zeros_dropped += c.report.zeros_dropped;
            report.duplicates_merged += c.report.duplicates_merged;
        }
        joints.truncate(write);
        values.truncate(write);
        Ok((Self::from_valid(offsets, joints, values), report))
    }

    /// These weights with the rows of some vertices replaced: `rows` holds (vertex, new row), vertices ascending
    /// and unique, each row valid on its own (positive, no repeats, summing to 1, or empty). O(V): the compressed
    /// arrays are rebuilt around the new rows. Errors name the first bad row; a vertex out of range is a shape
    /// error.
    pub fn with_rows(&self, rows: &[(u32, Row)]) -> Result<Self, WeightsError> {
        let n = self.len();
        if rows.windows(2).any(|p| p[0].0 >= p[1].0) || rows.last().is_some_and(|r| r.0 as usize >= n) {
            return Err(WeightsError::Shape {
                rows: n,
                entries: self.values.len(),
            });
        }
        let added: usize = rows.iter().map(|r| r.1.len()).sum();
        let removed: usize = rows.iter().map(|r| self.row(r.0 as usize).0.len()).sum();
        let total = self.values.len() + added - removed;
        let mut offsets = Vec::with_capacity(n + 1);
        let mut joints = Vec::with_capacity(total);
        let mut values = Vec::with_capacity(total);
        offsets.push(0u32);
        let mut from = 0usize;
        for (v, row) in rows {
            let v = *v as usize;
            // Copy the untouched rows before this one in one piece.
            let (a, b) = (self.offsets[from] as usize, self.offsets[v] as usize);
            let base = joints.len() as u32;
            joints.extend_from_slice(&self.joints[a..b]);
            values.extend_from_slice(&self.values[a..b]);
            offsets.extend(self.offsets[from + 1..=v].iter().map(|o| o - a as u32 + base));
            for &(j, w) in row {
                joints.push(j);
                values.push(w);
            }
            offsets.push(joints.len() as u32);
            from = v + 1;
        }
        let (a, b) = (self.offsets[from] as usize, self.values.len());
        let base = joints.len() as u32;
        joints.extend_from_slice(&self.joints[a..b]);
        values.extend_from_slice(&self.values[a..b]);
        offsets.extend(self.offsets[from + 1..].iter().map(|o| o - a as u32 + base));
        let out = Self {
            offsets,
            joints,
            values,
        };
        // Only the new rows need checking; the rest were valid already.
        for (v, _) in rows {
            out.check_row(*v as usize)?;
        }
        Ok(out)
    }

    /// Every vertex fully weighted to one joint.
    pub fn rigid(joint_of_vertex: &[u16]) -> Self {
        Self {
            offsets: (0..=joint_of_vertex.len() as u32).collect(),
            joints: joint_of_vertex.to_vec(),
            values: vec![1.0; joint_of_vertex.len()],
        }
    }

    /// Number of vertices (rows).
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Vertex `v`'s joints and weights. Out of range gives an empty row.
    #[inline]
    pub fn row(&self, v: usize) -> (&[u16], &[f32]) {
        match (self.offsets.get(v), self.offsets.get(v + 1)) {
            (Some(&a), Some(&b)) => (
                &self.joints[a as usize..b as usize],
                &self.values[a as usize..b as usize],
            ),
            _ => (&[], &[]),
        }
    }

    /// Total number of (vertex, joint) influences stored.
    pub fn entries(&self) -> usize {
        self.values.len()
    }

    /// The largest joint index referenced, if any.
    pub fn max_joint(&self) -> Option<u16> {
        self.joints.iter().copied().max()
    }

    /// The joint with the largest weight for each vertex (ties: lower joint index), `None` when unweighted.
    pub fn dominant(&self, v: usize) -> Option<u16> {
        let (js, ws) = self.row(v);
        let mut best: Option<(u16, f32)> = None;
        for (&j, &w) in js.iter().zip(ws) {
            best = match best {
                Some((bj, bw)) if bw > w || (bw == w && bj < j) => Some((bj, bw)),
                _ => Some((j, w)),
            };
        }
        best.map(|(j, _)| j)
    }

    /// Vertices with no influence.
    pub fn unweighted(&self) -> impl Iterator<Item = usize> + '_ {
        self.offsets
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[0] == w[1])
            .map(|(v, _)| v)
    }

    /// Memory held, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.offsets.capacity() * 4 + self.joints.capacity() * 2 + self.values.capacity() * 4
    }
}

/// Vertex `v`'s row `js`/`ws` is valid: positive finite weights, no joint twice, a sum of 1 (or empty).
fn check_row(v: usize, js: &[u16], ws: &[f32]) -> Result<(), WeightsError> {
    let mut sum = 0.0f32;
    // A long row marks the joints it has seen (one bit each) instead of searching itself per entry.
    let mut seen = if js.len() > SHORT_ROW {
        vec![0u64; (usize::from(u16::MAX) + 1) / 64]
    } else {
        Vec::new()
    };
    for (k, (&j, &w)) in js.iter().zip(ws).enumerate() {
        if !(w.is_finite() && w > 0.0) {
            return Err(WeightsError::BadValue {
                vertex: v,
                joint: j,
                value: w,
            });
        }
        let repeated = match seen.get_mut(usize::from(j) / 64) {
            Some(bits) => {
                let bit = 1u64 << (j % 64);
                let was = *bits & bit != 0;
                *bits |= bit;
                was
            }
            None => js[..k].contains(&j),
        };
        if repeated {
            return Err(WeightsError::Duplicate { vertex: v, joint: j });
        }
        sum += w;
    }
    if !js.is_empty() && (sum - 1.0).abs() > SUM_TOLERANCE {
        return Err(WeightsError::Sum { vertex: v, sum });
    }
    Ok(())
}

/// One run of rows cleaned by [`Weights::normalized_csr`].
struct Cleaned {
    /// Entries kept, at the front of the run's entries.
    written: usize,
    report: NormalizeReport,
    /// The first cleaned row that is still not valid (a sum that overflowed), as [`Weights::new`] reports it.
    invalid: Option<WeightsError>,
}

/// Clean rows `first..first + ends.len()` in place: their entries are `joints`/`values`, which start at entry
/// `start`; `ends` are the rows' end offsets, rewritten to where the kept entries end (from `start`, as if
/// nothing before the run shrank). An input error (a negative or non-finite weight) ends the run.
fn clean_run(
    first: usize,
    start: usize,
    joints: &mut [u16],
    values: &mut [f32],
    ends: &mut [u32],
) -> Result<Cleaned, WeightsError> {
    let mut report = NormalizeReport::default();
    let mut invalid = None;
    let mut write = 0usize;
    let mut read_start = 0usize;
    // Where each joint sits in the row being written, for long rows (u32::MAX: not in it), made on the first
    // long row and reset after each: a row of 65,535 repeats is linear, not a search per entry (19 s for a
    // 17 MB file). Short rows search the few entries written, as cheap and with the same result.
    let mut slots: Vec<u32> = Vec::new();
    for (k, end) in ends.iter_mut().enumerate() {
        let v = first + k;
        let read_end = *end as usize - start;
        let row_start = write;
        let long = read_end - read_start > SHORT_ROW;
        if long && slots.is_empty() {
            slots = vec![u32::MAX; usize::from(u16::MAX) + 1];
        }
        for r in read_start..read_end {
            let (j, w) = (joints[r], values[r]);
            if !(w.is_finite() && w >= 0.0) {
                return Err(WeightsError::BadValue {
                    vertex: v,
                    joint: j,
                    value: w,
                });
            }
            if w == 0.0 {
                report.zeros_dropped += 1;
                continue;
            }
            let seen = if long {
                let k = slots[usize::from(j)];
                (k != u32::MAX).then_some(k as usize)
            } else {
                joints[row_start..write].iter().position(|&x| x == j)
            };
            match seen {
                Some(k) => {
                    values[row_start + k] += w;
                    report.duplicates_merged += 1;
                }
                None => {
                    if long {
                        slots[usize::from(j)] = (write - row_start) as u32;
                    }
                    joints[write] = j;
                    values[write] = w;
                    write += 1;
                }
            }
        }
        if long {
            for &j in &joints[row_start..write] {
                slots[usize::from(j)] = u32::MAX;
            }
        }
        let sum: f32 = values[row_start..write].iter().sum();
        if write > row_start && (sum - 1.0).abs() > SUM_TOLERANCE {
            report.renormalized.push((v, sum));
            values[row_start..write].iter_mut().for_each(|w| *w /= sum);
        }
        if invalid.is_none() {
            invalid = check_row(v, &joints[row_start..write], &values[row_start..write]).err();
        }
        read_start = read_end;
        *end = (start + write) as u32;
    }
    Ok(Cleaned {
        written: write,
        report,
        invalid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_and_differing_rows_read_the_rows_asked_for() {
        let w = Weights::new(vec![0, 1, 3, 4], vec![0, 0, 1, 1], vec![1.0, 0.5, 0.5, 1.0]).unwrap();
        assert_eq!(w.rows_of(&[2, 0]), vec![vec![(1, 1.0)], vec![(0, 1.0)]]);
        let v = w.with_rows(&[(1, vec![(1, 1.0)])]).unwrap();
        assert_eq!(w.differing_rows(&v), vec![1]);
        assert_eq!(v.differing_rows(&v), Vec::<u32>::new());
    }

    #[test]
    fn the_four_strongest_go_by_weight_then_lower_joint_and_are_renormalised() {
        let (js, ws, n) = strongest_four(&[3, 1, 7, 2, 5], &[0.1, 0.3, 0.05, 0.3, 0.25]);
        assert_eq!(n, 4);
        // Ties (joints 1 and 2 at 0.3): lower joint first.
        assert_eq!(js, [1, 2, 5, 3]);
        let s = 0.95f32;
        for (a, b) in ws.iter().zip([0.3 / s, 0.3 / s, 0.25 / s, 0.1 / s]) {
            assert!((a - b).abs() < 1e-6);
        }
        assert_eq!(strongest_four(&[], &[]).2, 0);
    }

    #[test]
    fn the_fixed_four_are_the_rows_four_strongest_by_the_one_order() {
        // Every ordering of a row with ties, against keep_strongest's sort.
        let base: Row = vec![(4, 0.2), (1, 0.2), (9, 0.35), (0, 0.05), (6, 0.2)];
        let mut rows = vec![base.clone()];
        for r in 1..base.len() {
            let mut x = base.clone();
            x.rotate_left(r);
            rows.push(x.clone());
            x.reverse();
            rows.push(x);
        }
        for row in rows {
            let (js, ws): (Vec<u16>, Vec<f32>) = row.iter().copied().unzip();
            let (j4, _, n) = strongest_four(&js, &ws);
            let mut kept = row.clone();
            keep_strongest(&mut kept, 4);
            assert_eq!(n, 4);
            assert_eq!(j4.to_vec(), kept.iter().map(|x| x.0).collect::<Vec<_>>(), "{row:?}");
            assert_eq!(j4, [9, 1, 4, 6]);
        }
    }

    #[test]
    fn the_strength_key_orders_as_stronger_first() {
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            1e-40,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        let mut seed = 5u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed >> 32
        };
        let mut entries: Vec<(u16, f32)> = Vec::new();
        for _ in 0..3000 {
            let j = (next() % 6) as u16 * 13_000;
            let w = match next() % 3 {
                0 => specials[(next() % specials.len() as u64) as usize],
                1 => (next() % 5) as f32 / 4.0,
                _ => f32::from_bits(next() as u32),
            };
            entries.push((j, w));
        }
        for pair in entries.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            assert_eq!(
                strength_key(b).cmp(&strength_key(a)),
                stronger_first(&a, &b),
                "{a:?} {b:?}"
            );
        }
    }

    #[test]
    fn with_rows_replaces_exactly_the_given_rows() {
        let rows: Vec<Row> = vec![
            vec![(1, 1.0)],
            vec![(0, 0.5), (1, 0.5)],
            vec![],
            vec![(2, 0.25), (3, 0.75)],
            vec![(4, 1.0)],
        ];
        let (w, _) = Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap();
        let new = vec![(0, vec![(5, 0.5), (6, 0.5)]), (2, vec![(1, 1.0)]), (4, vec![])];
        let out = w.with_rows(&new).unwrap();
        // The naive reference: rebuild every row.
        let mut expect = rows.clone();
        for (v, r) in &new {
            expect[*v as usize] = r.clone();
        }
        let (reference, _) = Weights::normalized(expect.iter().map(Vec::as_slice)).unwrap();
        assert_eq!(out, reference);
        assert_eq!(w.with_rows(&[]).unwrap(), w);
        // Bad input is an error, never a panic: out of order, out of range, a row that does not sum to 1.
        assert!(w.with_rows(&[(2, vec![]), (1, vec![])]).is_err());
        assert!(w.with_rows(&[(5, vec![])]).is_err());
        assert!(matches!(
            w.with_rows(&[(1, vec![(0, 0.5)])]),
            Err(WeightsError::Sum { vertex: 1, .. })
        ));
    }

    #[test]
    fn long_rows_merge_repeats_as_the_row_search_does() {
        // The naive reference: merge each entry into the row written so far by searching it.
        fn naive(row: &[(u16, f32)]) -> Vec<(u16, f32)> {
            let mut out: Vec<(u16, f32)> = Vec::new();
            for &(j, w) in row.iter().filter(|e| e.1 != 0.0) {
                match out.iter_mut().find(|e| e.0 == j) {
                    Some(e) => e.1 += w,
                    None => out.push((j, w)),
                }
            }
            let sum: f32 = out.iter().map(|e| e.1).sum();
            if (sum - 1.0).abs() > SUM_TOLERANCE {
                out.iter_mut().for_each(|e| e.1 /= sum);
            }
            out
        }
        let mut seed = 7u32;
        let mut next = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            seed >> 8
        };
        let rows: Vec<Vec<(u16, f32)>> = [0usize, 3, 16, 17, 40, 300, 5000]
            .iter()
            .map(|&len| {
                let joints = 1 + next() % 50;
                (0..len)
                    .map(|_| ((next() % joints) as u16 * 1300, (next() % 4) as f32 * 0.25))
                    .collect()
            })
            .collect();
        let (w, rep) = Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap();
        let mut merged = 0;
        for (v, row) in rows.iter().enumerate() {
            let want = naive(row);
            let (js, ws) = w.row(v);
            let got: Vec<(u16, f32)> = js.iter().copied().zip(ws.iter().copied()).collect();
            assert_eq!(got, want, "row {v} of {} entries", row.len());
            merged += row.iter().filter(|e| e.1 != 0.0).count() - want.len();
        }
        assert_eq!(rep.duplicates_merged, merged);
    }

    #[test]
    fn normalized_drops_zeros_merges_repeats_and_rescales() {
        let rows: Vec<Row> = vec![
            vec![(1, 1.0)],
            vec![(0, 0.5), (2, 0.0), (0, 0.25), (1, 0.25)],
            vec![(3, 2.0), (4, 2.0)],
            vec![],
        ];
        let (w, rep) = Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap();
        assert_eq!(w.row(1), (&[0u16, 1][..], &[0.75f32, 0.25][..]));
        assert_eq!(w.row(2), (&[3u16, 4][..], &[0.5f32, 0.5][..]));
        assert_eq!(rep.zeros_dropped, 1);
        assert_eq!(rep.duplicates_merged, 1);
        assert_eq!(rep.renormalized, vec![(2, 4.0)]);
        assert_eq!(w.unweighted().collect::<Vec<_>>(), vec![3]);
        assert_eq!(w.dominant(1), Some(0));
        assert_eq!(w.dominant(3), None);
    }

    #[test]
    fn deserializing_checks_like_new() {
        let ok: Weights = serde_json::from_str(r#"{"offsets":[0,1],"joints":[3],"values":[1.0]}"#).unwrap();
        assert_eq!(ok.row(0), (&[3u16][..], &[1.0f32][..]));
        let bad = serde_json::from_str::<Weights>(r#"{"offsets":[0,1],"joints":[3],"values":[0.5]}"#);
        assert!(bad.unwrap_err().to_string().contains("sum to 0.5"));
    }

    #[test]
    fn new_rejects_invalid_rows() {
        assert!(matches!(
            Weights::new(vec![0, 1], vec![0], vec![0.5]),
            Err(WeightsError::Sum { .. })
        ));
        assert!(matches!(
            Weights::new(vec![0, 2], vec![0, 0], vec![0.5, 0.5]),
            Err(WeightsError::Duplicate { .. })
        ));
        assert!(matches!(
            Weights::new(vec![0, 1], vec![0], vec![f32::NAN]),
            Err(WeightsError::BadValue { .. })
        ));
        assert!(matches!(
            Weights::new(vec![0, 2], vec![0], vec![1.0]),
            Err(WeightsError::Shape { .. })
        ));
        assert!(Weights::new(vec![0, 0], vec![], vec![]).is_ok());
    }
}
