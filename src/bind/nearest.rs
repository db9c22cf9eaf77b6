//! The bones near a point, exactly, with a k-d tree (kiddo) and a brute-force reference.
//!
//! A bone's distance to a point is the least distance to its segments. For a point `p` with nearest bone
//! distance `D1`, the *near bones* are every joint `j` with `D_j < ratio * D1`, and every joint with `D_j = D1`,
//! sorted by (distance, joint index).
//!
//! The fast path samples each segment at spacing at most `h` (both ends included) into a k-d tree. Every point
//! of a segment is within `h/2` of one of its samples, and no sample is closer to `p` than its segment is. So:
//! the nearest sample, at distance `d_s`, bounds `D1 <= d_s`; every bone whose distance is at most `R - h/2` has
//! a sample within `R`; a radius query at `R = d_s + h/2` finds the nearest bone, and one at
//! `R = ratio * D1 + h/2` finds every near bone. Distances are then computed exactly for the segments found, with
//! the same routine as the brute-force reference, so both give identical results (a test checks it on random
//! skeletons and points).
//!
//! For many points, [`CellGrid`] buckets them into grid cells of about 64 points and [`BoneIndex::cell_segments`]
//! asks the tree once per cell: for a cell of centre `c` and radius `ρ` whose nearest sample is at `d_c`, every
//! point's nearest-bone distance is at most `ρ + d_c`, so every near bone of every point of the cell has a sample
//! within `ratio * (ρ + d_c) + h/2 + ρ` of `c`. One radius query gives a short list of segments that holds
//! every point's near bones; [`near_bones_among`] then computes each point's exact distances over that list.
//! The result is again identical to the brute force, at the cost of a few segment distances per point.

use glam::Vec3;
use kiddo::{ImmutableKdTree, SquaredEuclidean};
use rayon::prelude::*;

use super::bones::{Segment, closest_from, end_distance_from};

/// A bone near a point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    pub joint: u16,
    /// Distance from the point to the bone.
    pub dist: f32,
    /// The bone's closest point to the query point.
    pub closest: Vec3,
}

/// Per-thread scratch space for queries.
#[derive(Default)]
pub struct Scratch {
    /// Per joint: its best candidate so far and the index of the segment that gave it.
    best: Vec<Option<(Candidate, u32)>>,
    touched: Vec<u16>,
    seen_segments: Vec<u32>,
}

impl Scratch {
    fn reset(&mut self, joints: usize) {
        if self.best.len() < joints {
            self.best.resize(joints, None);
        }
        for &j in &self.touched {
            self.best[j as usize] = None;
        }
        self.touched.clear();
        self.seen_segments.clear();
    }

    /// Consider segment `index`; equal distances keep the lower segment index, so the result does not depend on
    /// the order segments are offered in.
    fn offer(&mut self, index: u32, s: &Segment, p: Vec3) {
        let (q, d2) = s.closest(p);
        let d = d2.sqrt();
        let slot = &mut self.best[s.joint as usize];
        match slot {
            Some((c, i)) if c.dist < d || (c.dist == d && *i < index) => {}
            Some((c, i)) => {
                c.dist = d;
                c.closest = q;
                *i = index;
            }
            None => {
                *slot = Some((
                    Candidate {
                        joint: s.joint,
                        dist: d,
                        closest: q,
                    },
                    index,
                ));
                self.touched.push(s.joint);
            }
        }
    }

    fn candidates(&self) -> impl Iterator<Item = Candidate> + '_ {
        self.touched
            .iter()
            .filter_map(|&j| self.best[j as usize])
            .map(|(c, _)| c)
    }

    fn nearest_distance(&self) -> f32 {
        self.candidates().map(|c| c.dist).fold(f32::INFINITY, f32::min)
    }

    /// Move the near bones into `out`, sorted by (distance, joint).
    fn finish(&mut self, ratio: f32, out: &mut Vec<Candidate>) {
        out.clear();
        let d1 = self.nearest_distance();
        out.extend(self.candidates().filter(|c| c.dist < ratio * d1 || c.dist == d1));
        sort_candidates(out);
    }
}

fn joint_count(segments: &[Segment]) -> usize {
    segments.iter().map(|s| s.joint as usize + 1).max().unwrap_or(0)
}

/// Brute force over every segment: the reference.
pub fn near_bones_naive(p: Vec3, segments: &[Segment], ratio: f32, scratch: &mut Scratch, out: &mut Vec<Candidate>) {
    scratch.reset(joint_count(segments));
    for (i, s) in segments.iter().enumerate() {
        scratch.offer(i as u32, s, p);
    }
    scratch.finish(ratio, out);
}

/// The near bones of `p` among the segments `among` (indices into `segments`), as [`near_bones_naive`] over all
/// segments would give them when `among` holds every near bone's closest segment and the nearest bone's.
pub fn near_bones_among(
    p: Vec3,
    segments: &[Segment],
    among: &[u32],
    ratio: f32,
    scratch: &mut Scratch,
    out: &mut Vec<Candidate>,
) {
    scratch.reset(joint_count(segments));
    for &i in among {
        if let Some(s) = segments.get(i as usize) {
            scratch.offer(i, s, p);
        }
    }
    scratch.finish(ratio, out);
}

/// Points bucketed into a uniform grid of cells holding about `per_cell` points each (counting sort).
pub struct CellGrid {
    /// Point indices, cell by cell.
    pub order: Vec<u32>,
    /// `order[starts[c]..starts[c + 1]]` are cell `c`'s points; empty cells are dropped.
    pub starts: Vec<u32>,
}

impl CellGrid {
    pub fn new(points: &[Vec3], per_cell: usize) -> Self {
        let Some((lo, hi)) = crate::model::skin::bounds(points) else {
            return Self {
                order: Vec::new(),
                starts: vec![0],
            };
        };
        let ext = (hi - lo).max(Vec3::splat(1e-12));
        let cells = (points.len() / per_cell.max(1)).max(1) as f32;
        // Cubic cells, except that a flat or thin point set gets no more than one cell across its thin axes.
        let size = (ext.x * ext.y * ext.z / cells)
            .cbrt()
            .max(ext.max_element() / cells)
            .max(1e-12);
        let dims = (ext / size).ceil().max(Vec3::ONE).min(Vec3::splat(1024.0)).as_uvec3();
        let key = |p: Vec3| {
            let c = ((p - lo) / ext * dims.as_vec3()).as_uvec3().min(dims - 1);
            (c.x + dims.x * (c.y + dims.y * c.z)) as usize
        };
        let n = (dims.x * dims.y * dims.z) as usize;
        let mut count = vec![0u32; n + 1];
        for p in points {
            count[key(*p) + 1] += 1;
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let mut fill = count.clone();
        let mut order = vec![0u32; points.len()];
        for (i, p) in points.iter().enumerate() {
            let k = key(*p);
            order[fill[k] as usize] = i as u32;
            fill[k] += 1;
        }
        let mut starts: Vec<u32> = count.windows(2).filter(|w| w[0] != w[1]).map(|w| w[0]).collect();
        starts.push(points.len() as u32);
        Self { order, starts }
    }

    pub fn cells(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn cell(&self, c: usize) -> &[u32] {
        &self.order[self.starts[c] as usize..self.starts[c + 1] as usize]
    }
}

/// A segment's start, direction (`b - a`) and squared length: what [`Segment::closest`] computes first, kept so
/// that the many distance queries of a bind do the rest only, with the same operations (so the same answers).
#[derive(Clone, Copy, Debug)]
struct Prepared {
    a: Vec3,
    ab: Vec3,
    len2: f32,
    joint: u16,
    /// [`SegmentKind::past_end`].
    past_end: f32,
}

impl Prepared {
    fn new(s: &Segment) -> Self {
        let ab = s.b - s.a;
        Self {
            a: s.a,
            ab,
            len2: ab.length_squared(),
            joint: s.joint,
            past_end: s.kind.past_end(),
        }
    }

    /// [`Segment::closest`].
    #[inline(always)]
    fn closest(&self, p: Vec3) -> (Vec3, f32) {
        closest_from(self.a, self.ab, self.len2, p)
    }

    /// [`Segment::end_distance`].
    #[inline(always)]
    fn end_distance(&self, p: Vec3) -> f32 {
        end_distance_from(self.a, self.ab, self.len2, self.past_end, p)
    }
}

/// Sort candidates by (distance, joint), the order every query here returns: by insertion for the handful of near
/// bones a point usually has, by the library's sort (also stable, so the same order) for more.
fn sort_candidates(c: &mut [Candidate]) {
    if c.len() > 16 {
        c.sort_by(|a, b| a.dist.total_cmp(&b.dist).then(a.joint.cmp(&b.joint)));
        return;
    }
    for i in 1..c.len() {
        let mut k = i;
        while k > 0
            && c[k]
                .dist
                .total_cmp(&c[k - 1].dist)
                .then(c[k].joint.cmp(&c[k - 1].joint))
                .is_lt()
        {
            c.swap(k, k - 1);
            k -= 1;
        }
    }
}

/// Segments sampled into a k-d tree.
pub struct BoneIndex {
    segments: Vec<Segment>,
    /// Each segment's start, direction and squared length, as [`Segment::closest`] computes them.
    prepared: Vec<Prepared>,
    joints: usize,
    /// Each joint's segments are consecutive (as [`super::bones::bone_segments`] makes them).
    grouped: bool,
    /// Segment indices by joint: joint `j`'s are `by_joint[joint_start[j]..joint_start[j + 1]]`.
    joint_start: Vec<u32>,
    by_joint: Vec<u32>,
    /// `None` only when there are no samples (no segments).
    tree: Option<ImmutableKdTree<f32, 3>>,
    /// The segment each sample lies on.
    owner: Vec<u32>,
    half_spacing: f32,
}

/// Points that share one narrowed list of segments in [`BoneIndex::nearest_distances`].
const NEAREST_GROUP: usize = 16;

/// At most this many samples per segment.
const MAX_SAMPLES_PER_SEGMENT: usize = 64;

impl BoneIndex {
    /// Sample `segments` at a spacing of about an eighth of their mean length (at most 64 samples each).
    pub fn new(segments: &[Segment]) -> Self {
        let total: f32 = segments.iter().map(Segment::length).sum();
        let mean = if segments.is_empty() {
            0.0
        } else {
            total / segments.len() as f32
        };
        let spacing = if mean > 0.0 && mean.is_finite() {
            mean / 8.0
        } else {
            1.0
        };
        let mut points: Vec<[f32; 3]> = Vec::new();
        let mut owner = Vec::new();
        let mut max_spacing: f32 = 0.0;
        for (i, s) in segments.iter().enumerate() {
            let len = s.length();
            let steps = ((len / spacing).ceil() as usize).clamp(1, MAX_SAMPLES_PER_SEGMENT - 1);
            max_spacing = max_spacing.max(len / steps as f32);
            for k in 0..=steps {
                let p = s.a.lerp(s.b, k as f32 / steps as f32);
                points.push(p.to_array());
                owner.push(i as u32);
            }
        }
        let joints = joint_count(segments);
        let mut joint_start = vec![0u32; joints + 1];
        for s in segments {
            joint_start[s.joint as usize + 1] += 1;
        }
        for j in 0..joints {
            joint_start[j + 1] += joint_start[j];
        }
        let mut fill = joint_start.clone();
        let mut by_joint = vec![0u32; segments.len()];
        for (i, s) in segments.iter().enumerate() {
            by_joint[fill[s.joint as usize] as usize] = i as u32;
            fill[s.joint as usize] += 1;
        }
        let mut seen = vec![false; joints];
        let grouped = segments.iter().enumerate().all(|(i, s)| {
            let continues = i > 0 && segments[i - 1].joint == s.joint;
            let first_time = !std::mem::replace(&mut seen[s.joint as usize], true);
            continues || first_time
        });
        Self {
            segments: segments.to_vec(),
            prepared: segments.iter().map(Prepared::new).collect(),
            joints,
            grouped,
            joint_start,
            by_joint,
            tree: ImmutableKdTree::new_from_slice(&points).ok(),
            owner,
            half_spacing: max_spacing * 0.5,
        }
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    crate::simd::two_copies! {
        /// Replace each candidate's distance by its bone's end distance ([`Segment::end_distance`], the least
        /// over the joint's segments) and sort again by (distance, joint). Closest points are kept.
        pub fn to_end_distances(&self, p: Vec3, cands: &mut [Candidate])
            = Self::to_end_distances_v3 / Self::to_end_distances_portable
    }

    #[inline(always)]
    fn to_end_distances_portable(&self, p: Vec3, cands: &mut [Candidate]) {
        for c in cands.iter_mut() {
            let j = c.joint as usize;
            let (Some(&lo), Some(&hi)) = (self.joint_start.get(j), self.joint_start.get(j + 1)) else {
                continue;
            };
            // A plain loop (an iterator's `fold` was left out of line, in the baseline encoding, in the
            // x86-64-v3 copy).
            let mut dist = f32::INFINITY;
            for &i in &self.by_joint[lo as usize..hi as usize] {
                dist = dist.min(self.prepared[i as usize].end_distance(p));
            }
            c.dist = dist;
        }
        sort_candidates(cands);
    }

    /// Offer every segment with a sample within `radius` of `p` (each segment once).
    fn gather(&self, p: Vec3, radius: f32, scratch: &mut Scratch) {
        // Pad for rounding in the tree's f32 squared distances.
        let r = radius * (1.0 + 1e-5) + 1e-6;
        let Some(tree) = &self.tree else { return };
        let found = tree
            .query(&p.to_array())
            .within::<SquaredEuclidean<f32>>(r * r)
            .unsorted()
            .execute();
        for n in found {
            let seg = self.owner[n.item as usize];
            if !scratch.seen_segments.contains(&seg) {
                scratch.seen_segments.push(seg);
                self.offer_segment(seg, p, scratch);
            }
        }
    }

    fn offer_segment(&self, seg: u32, p: Vec3, scratch: &mut Scratch) {
        if let Some(s) = self.segments.get(seg as usize) {
            scratch.offer(seg, s, p);
        }
    }

    /// The near bones of `p` (see the module doc), identical to [`near_bones_naive`].
    pub fn near_bones(&self, p: Vec3, ratio: f32, scratch: &mut Scratch, out: &mut Vec<Candidate>) {
        scratch.reset(self.joints);
        let Some(tree) = self.tree.as_ref().filter(|_| p.is_finite()) else {
            out.clear();
            return;
        };
        let nearest = tree
            .query(&p.to_array())
            .nearest_one::<SquaredEuclidean<f32>>()
            .execute();
        let r0 = nearest.distance.sqrt() + self.half_spacing;
        self.gather(p, r0, scratch);
        let d1 = scratch.nearest_distance();
        let r1 = ratio * d1 + self.half_spacing;
        if r1 > r0 {
            self.gather(p, r1, scratch);
        }
        scratch.finish(ratio, out);
    }

    /// [`near_bones_among`] over this index's segments: the same answer, in one pass without the per-joint scratch
    /// when each joint's segments are consecutive (`among` ascending then visits them together, so a joint's best
    /// segment is known when its run ends; equal distances keep the lower index, the first seen). Any other
    /// `among` (unsorted) or index takes the general path.
    pub fn near_bones_among(
        &self,
        p: Vec3,
        among: &[u32],
        ratio: f32,
        scratch: &mut Scratch,
        out: &mut Vec<Candidate>,
    ) {
        if !self.grouped || !among.is_sorted() {
            near_bones_among(p, &self.segments, among, ratio, scratch, out);
            return;
        }
        self.near_bones_one_pass(p, among, ratio, out);
    }

    crate::simd::two_copies! {
        /// [`Self::near_bones_among`]'s one pass.
        fn near_bones_one_pass(&self, p: Vec3, among: &[u32], ratio: f32, out: &mut Vec<Candidate>)
            = Self::near_bones_one_pass_v3 / Self::near_bones_grouped
    }

    #[inline(always)]
    fn near_bones_grouped(&self, p: Vec3, among: &[u32], ratio: f32, out: &mut Vec<Candidate>) {
        out.clear();
        let mut best: Option<Candidate> = None;
        let mut d1 = f32::INFINITY;
        for &i in among {
            let Some(s) = self.prepared.get(i as usize) else {
                continue;
            };
            let (q, d2) = s.closest(p);
            let dist = d2.sqrt();
            match &mut best {
                Some(b) if b.joint == s.joint => {
                    // `Scratch::offer`'s rule with the earlier (lower) index kept on ties: replace unless the kept
                    // distance is at most this one, so a NaN is handled as there.
                    let keep = b.dist <= dist;
                    if !keep {
                        b.dist = dist;
                        b.closest = q;
                    }
                    continue;
                }
                _ => {}
            }
            if let Some(b) = best.replace(Candidate {
                joint: s.joint,
                dist,
                closest: q,
            }) {
                d1 = d1.min(b.dist);
                out.push(b);
            }
        }
        if let Some(b) = best {
            d1 = d1.min(b.dist);
            out.push(b);
        }
        out.retain(|c| c.dist < ratio * d1 || c.dist == d1);
        sort_candidates(out);
    }

    /// The segments of `among` (which must hold every near bone's closest segment of each of `points`, as
    /// [`Self::cell_segments`] gives them for a cell) that can hold a near bone of one of `points`, in the same
    /// order. For points within `ρ` of their box's centre `c`, every point's nearest-bone distance is at most
    /// `d = min (|c, s| + ρ)` over the segments, so a segment farther than `ratio * d + ρ` from `c` is not near any
    /// of them. For a few neighbouring points this is a much shorter list than the cell's.
    /// `dists` is scratch space (each of `among`'s distances from the centre, computed once).
    pub fn narrow_segments(
        &self,
        points: &[Vec3],
        ratio: f32,
        among: &[u32],
        dists: &mut Vec<f32>,
        out: &mut Vec<u32>,
    ) {
        out.clear();
        let Some((lo, hi)) = crate::model::skin::bounds(points) else {
            return;
        };
        let c = (lo + hi) * 0.5;
        let rho = (hi - lo).length() * 0.5;
        // NaN for an index out of range: such a segment is kept, as one at a NaN distance (the brute force
        // decides about it).
        dists.clear();
        dists.extend(among.iter().map(|&i| {
            self.prepared
                .get(i as usize)
                .map_or(f32::NAN, |s| s.closest(c).1.sqrt())
        }));
        let d = dists
            .iter()
            .copied()
            .filter(|x| !x.is_nan())
            .fold(f32::INFINITY, f32::min)
            + rho;
        // Padded for rounding in the distances, as the cell query is.
        let limit = (ratio * d + rho) * (1.0 + 1e-5) + 1e-6;
        out.extend(
            among
                .iter()
                .zip(dists.iter())
                .filter(|(_, x)| **x <= limit || x.is_nan())
                .map(|(&i, _)| i),
        );
    }

    /// Every segment that can hold a near bone of any of `points` (one cell of a [`CellGrid`]), sorted; see the
    /// module doc.
    pub fn cell_segments(&self, points: impl Iterator<Item = Vec3> + Clone, ratio: f32, out: &mut Vec<u32>) {
        out.clear();
        let Some(tree) = &self.tree else { return };
        let Some((lo, hi)) = points.clone().fold(None, |acc: Option<(Vec3, Vec3)>, p| {
            Some(acc.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))))
        }) else {
            return;
        };
        let c = (lo + hi) * 0.5;
        let rho = (hi - lo).length() * 0.5;
        let d_c = tree
            .query(&c.to_array())
            .nearest_one::<SquaredEuclidean<f32>>()
            .execute()
            .distance
            .sqrt();
        let r = (ratio * (rho + d_c) + self.half_spacing + rho) * (1.0 + 1e-5) + 1e-6;
        let found = tree
            .query(&c.to_array())
            .within::<SquaredEuclidean<f32>>(r * r)
            .unsorted()
            .execute();
        out.extend(found.iter().map(|n| self.owner[n.item as usize]));
        out.sort_unstable();
        out.dedup();
    }

    /// Each point's distance to its nearest bone, bit for bit the first candidate's of [`Self::near_bones`]
    /// (infinite for a point that is not finite, or with no bones), for many points at once: the points are
    /// bucketed into cells of about 64 ([`CellGrid`]), each cell asks the tree once ([`Self::cell_segments`]),
    /// its list is narrowed per [`NEAREST_GROUP`] neighbouring points, and each point's distance is the least
    /// over the short list, in parallel over cells.
    pub fn nearest_distances(&self, points: &[Vec3]) -> Vec<f32> {
        let grid = CellGrid::new(points, 64);
        let per_cell: Vec<Vec<f32>> = (0..grid.cells())
            .into_par_iter()
            .map_init(
                || (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
                |(cell_segments, group, dists, group_points), c| {
                    let cell = grid.cell(c);
                    let finite = || cell.iter().map(|&v| points[v as usize]).filter(|p| p.is_finite());
                    self.cell_segments(finite(), 1.0, cell_segments);
                    let mut out = Vec::with_capacity(cell.len());
                    for (k, &v) in cell.iter().enumerate() {
                        if k % NEAREST_GROUP == 0 {
                            group_points.clear();
                            group_points.extend(
                                cell[k..]
                                    .iter()
                                    .take(NEAREST_GROUP)
                                    .map(|&v| points[v as usize])
                                    .filter(|p| p.is_finite()),
                            );
                            self.narrow_segments(group_points, 1.0, cell_segments, dists, group);
                        }
                        out.push(self.nearest_among(points[v as usize], group));
                    }
                    out
                },
            )
            .collect();
        let mut out = vec![f32::INFINITY; points.len()];
        for (c, d) in per_cell.iter().enumerate() {
            for (&v, &d) in grid.cell(c).iter().zip(d) {
                out[v as usize] = d;
            }
        }
        out
    }

    /// The least distance from `p` to the segments `among` (infinite for a point that is not finite).
    fn nearest_among(&self, p: Vec3, among: &[u32]) -> f32 {
        if !p.is_finite() {
            return f32::INFINITY;
        }
        among
            .iter()
            .filter_map(|&i| self.prepared.get(i as usize))
            .map(|s| s.closest(p).1.sqrt())
            .fold(f32::INFINITY, f32::min)
    }

    /// Every bone whose distance to `p` is at most `radius`, sorted by (distance, joint).
    pub fn within(&self, p: Vec3, radius: f32, scratch: &mut Scratch, out: &mut Vec<Candidate>) {
        scratch.reset(self.joints);
        out.clear();
        if !p.is_finite() {
            return;
        }
        self.gather(p, radius + self.half_spacing, scratch);
        out.extend(scratch.candidates().filter(|c| c.dist <= radius));
        sort_candidates(out);
    }
}

#[cfg(test)]
#[path = "nearest_tests.rs"]
mod tests;
