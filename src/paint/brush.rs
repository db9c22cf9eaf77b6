//! The weight brush: settings, and a stroke that paints one joint's weights on the posed surface.
//!
//! A stroke keeps the rows it touched, before and now, on the side (`Stroke::touched`); the document's weights
//! do not change while the button is held. Each dab changes the rows of the vertices within the brush radius of
//! its centre (a k-d tree query over the posed positions), the viewport re-uploads those rows at once, and on
//! release the stroke becomes one undoable edit that stores only the touched rows (`DocEdit::SetRows`), as
//! Fyrox's terrain brush and Blender's weight paint do.
//!
//! A dab at distance `d` from the centre, radius `r`, strength `s`, gives `f = s * falloff(d / r)` with falloff
//! smooth `1 - (3t² - 2t³)`, linear `1 - t` or constant `1`, and moves the painted joint's weight `w` to
//!
//! - Add: `w + f (1 - w)`; Subtract: `w (1 - f)`; Replace: `w + f (value - w)`;
//! - Smooth: `w + f (mean - w)`, `mean` the joint's weight over the vertex's welded mesh neighbours (as they
//!   are in this stroke).
//!
//! The vertex's other unlocked joints then give way so that it still sums to 1 ([`set_joint_weight`]): weights
//! are always normalised (the model's `Weights` holds no other kind), so auto-normalise is always on. A locked
//! joint is never painted and never gives way. "Front faces only" skips vertices whose posed normal faces away
//! from the eye.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

pub use crate::spatial::PointIndex;
use glam::Vec3;

use crate::adjust::graph::MeshGraph;
use crate::adjust::ops::{set_joint_weight, set_joint_weight_or_give};
use crate::adjust::rows::Locks;
use crate::model::{Row, Weights};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrushMode {
    Add,
    Subtract,
    /// Draw toward the brush value.
    Replace,
    /// Blur the joint's weight over the mesh.
    Smooth,
}

impl BrushMode {
    pub fn name(self) -> &'static str {
        match self {
            Self::Add => "Add",
            Self::Subtract => "Subtract",
            Self::Replace => "Replace",
            Self::Smooth => "Smooth",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Falloff {
    Smooth,
    Linear,
    Constant,
}

impl Falloff {
    /// The falloff at `t = d / r` in [0, 1] (0 beyond).
    pub fn at(self, t: f32) -> f32 {
        if !(0.0..=1.0).contains(&t) {
            return 0.0;
        }
        match self {
            Self::Smooth => 1.0 - t * t * (3.0 - 2.0 * t),
            Self::Linear => 1.0 - t,
            Self::Constant => 1.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Smooth => "Smooth",
            Self::Linear => "Linear",
            Self::Constant => "Constant",
        }
    }
}

/// The brush as the Weights panel sets it (view state).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BrushSettings {
    pub mode: BrushMode,
    /// Radius in screen points (F changes it), or in world units when `world_radius`.
    pub radius: f32,
    pub world_radius: bool,
    /// 0..1 (Shift+F changes it).
    pub strength: f32,
    /// Replace draws toward this weight; Sample sets it.
    pub value: f32,
    pub falloff: Falloff,
    pub front_only: bool,
    /// X-mirror: each dab also writes the mirrored joint's weight on the mirrored vertices.
    pub mirror: bool,
}

impl Default for BrushSettings {
    fn default() -> Self {
        Self {
            mode: BrushMode::Add,
            radius: 40.0,
            world_radius: false,
            strength: 0.5,
            value: 1.0,
            falloff: Falloff::Smooth,
            front_only: true,
            mirror: false,
        }
    }
}

/// What a dab needs to know about the surface.
pub struct DabSurface<'a> {
    /// Posed positions and normals of every vertex.
    pub positions: &'a [Vec3],
    pub normals: &'a [Vec3],
    pub index: &'a PointIndex,
    /// The welded mesh graph (Smooth only).
    pub graph: Option<&'a MeshGraph>,
    /// Where the camera is (front-faces test).
    pub eye: Vec3,
}

/// One stroke of the brush on one joint.
pub struct Stroke {
    pub joint: u16,
    /// The joint that takes what the painted joint loses on a vertex that has no other joint (its parent).
    pub fallback: Option<u16>,
    /// The mode the stroke painted with (Ctrl turns Add into Subtract and back), from its first dab.
    pub mode: Option<BrushMode>,
    /// Vertices the stroke would have changed but could not (no joint could take or give the weight).
    pub refused: usize,
    /// Touched vertices: where their rows before the stroke and now lie in `pairs`. PERF: hashed (a dab looks up
    /// each of its thousands of vertices two or three times); the rows share one buffer, so a dab allocates
    /// nothing per vertex (two small allocations a vertex were a sixth of a first dab); [`Stroke::finish`] sorts.
    touched: HashMap<u32, Touched, BuildHasherDefault<VertexHasher>>,
    pairs: Vec<(u16, f32)>,
    /// Where the last dab was, for spacing.
    pub last: Option<Vec3>,
    scratch: Vec<u32>,
    sort_scratch: Vec<u32>,
}

/// A touched vertex's rows in [`Stroke::pairs`].
#[derive(Clone, Copy, Debug)]
struct Touched {
    before: Span,
    now: Span,
}

/// A row's place in [`Stroke::pairs`]: `len` pairs from `start`, with room for `room` (a row that shrinks is
/// rewritten in place; one that outgrows its room moves to the end).
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    len: u32,
    room: u32,
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// `row` written into `pairs`: over `span` where it fits, else at the end.
fn store(pairs: &mut Vec<(u16, f32)>, span: Option<Span>, row: &[(u16, f32)]) -> Span {
    let len = row.len() as u32;
    match span {
        Some(s) if len <= s.room => {
            pairs[s.start as usize..(s.start + len) as usize].copy_from_slice(row);
            Span { len, ..s }
        }
        _ => {
            let start = pairs.len() as u32;
            pairs.extend_from_slice(row);
            Span { start, len, room: len }
        }
    }
}

impl Stroke {
    pub fn new(joint: u16) -> Self {
        Self {
            joint,
            fallback: None,
            mode: None,
            refused: 0,
            touched: HashMap::default(),
            pairs: Vec::new(),
            last: None,
            scratch: Vec::new(),
            sort_scratch: Vec::new(),
        }
    }

    /// Vertex `v`'s row as the stroke has it now.
    pub fn row(&self, base: &Weights, v: u32) -> Row {
        match self.now(v) {
            Some(now) => now.to_vec(),
            None => {
                let mut r = Vec::new();
                base.row_pairs(v as usize, &mut r);
                r
            }
        }
    }

    /// Vertex `v`'s row as the stroke has it now, without copying it: for packing the changed rows.
    pub fn row_iter<'a>(&'a self, base: &'a Weights, v: u32) -> impl Iterator<Item = (u16, f32)> + 'a {
        let now = self.now(v);
        let (js, ws) = match now {
            Some(_) => (&[][..], &[][..]),
            None => base.row(v as usize),
        };
        now.into_iter()
            .flatten()
            .copied()
            .chain(js.iter().copied().zip(ws.iter().copied()))
    }

    /// Vertex `v`'s row now, if the stroke has touched it.
    fn now(&self, v: u32) -> Option<&[(u16, f32)]> {
        self.touched.get(&v).map(|t| &self.pairs[t.now.range()])
    }

    /// Make `row` vertex `v`'s row now; false (and nothing kept) where that is its row before the stroke.
    fn set_now(&mut self, base: &Weights, v: u32, row: &[(u16, f32)]) -> bool {
        let Self { touched, pairs, .. } = self;
        if let Some(t) = touched.get_mut(&v) {
            t.now = store(pairs, Some(t.now), row);
            return true;
        }
        let mark = pairs.len();
        base.row_pairs(v as usize, pairs);
        if pairs[mark..] == *row {
            pairs.truncate(mark);
            return false;
        }
        let len = (pairs.len() - mark) as u32;
        let before = Span {
            start: mark as u32,
            len,
            room: len,
        };
        let now = store(pairs, None, row);
        touched.insert(v, Touched { before, now });
        true
    }

    fn weight(&self, base: &Weights, v: u32) -> f32 {
        match self.now(v) {
            Some(now) => now.iter().find(|x| x.0 == self.joint).map_or(0.0, |x| x.1),
            None => {
                let (js, ws) = base.row(v as usize);
                js.iter().position(|&j| j == self.joint).map_or(0.0, |k| ws[k])
            }
        }
    }

    /// Vertex `v`'s new weight for the painted joint under a dab, if it changes (computed from the rows as the
    /// stroke has them before the dab).
    fn target(
        &self,
        base: &Weights,
        surface: &DabSurface<'_>,
        center: Vec3,
        radius: f32,
        brush: &BrushSettings,
        v: u32,
    ) -> Option<f32> {
        let p = *surface.positions.get(v as usize)?;
        let d = p.distance(center);
        if d > radius {
            return None;
        }
        if brush.front_only
            && surface
                .normals
                .get(v as usize)
                .is_some_and(|n| n.dot(surface.eye - p) <= 0.0)
        {
            return None;
        }
        let f = brush.strength.clamp(0.0, 1.0) * brush.falloff.at(d / radius);
        if f <= 0.0 {
            return None;
        }
        let w = self.weight(base, v);
        let target = match brush.mode {
            BrushMode::Add => w + f * (1.0 - w),
            BrushMode::Subtract => w * (1.0 - f),
            BrushMode::Replace => w + f * (brush.value.clamp(0.0, 1.0) - w),
            BrushMode::Smooth => {
                let g = surface.graph?;
                let nbrs = g.neighbours(g.node_of(v as usize));
                if nbrs.is_empty() {
                    return None;
                }
                let mean = nbrs
                    .iter()
                    .map(|&n| self.weight(base, g.members(n as usize).first().copied().unwrap_or(v)))
                    .sum::<f32>()
                    / nbrs.len() as f32;
                w + f * (mean - w)
            }
        };
        (target != w).then_some(target)
    }

    /// One dab centred at `center` with radius `radius` (world units). Returns the vertices whose rows changed,
    /// ascending.
    pub fn dab(
        &mut self,
        base: &Weights,
        surface: &DabSurface<'_>,
        center: Vec3,
        radius: f32,
        brush: &BrushSettings,
        locks: &Locks,
    ) -> Vec<u32> {
        self.last = Some(center);
        self.mode.get_or_insert(brush.mode);
        if locks.is_locked(self.joint) || radius.is_nan() || radius <= 0.0 {
            return Vec::new();
        }
        let mut found = std::mem::take(&mut self.scratch);
        surface.index.within(center, radius, &mut found);
        sort_ids(&mut found, &mut self.sort_scratch);
        // New weights are computed from the rows before this dab (so Smooth reads its neighbours unchanged),
        // then written. PERF: on one thread; rayon made a 5000-vertex dab slower.
        let updates: Vec<(u32, f32)> = found
            .iter()
            .filter_map(|&v| self.target(base, surface, center, radius, brush, v).map(|t| (v, t)))
            .collect();
        let mut changed = Vec::with_capacity(updates.len());
        self.touched.reserve(updates.len());
        let mut row = Row::new();
        for (v, target) in updates {
            row.clear();
            match self.now(v) {
                Some(now) => row.extend_from_slice(now),
                None => base.row_pairs(v as usize, &mut row),
            }
            if !set_joint_weight_or_give(&mut row, self.joint, target, self.fallback, locks) {
                self.refused += 1;
                continue;
            }
            if self.now(v).is_some_and(|now| *now == row[..]) {
                continue;
            }
            if self.set_now(base, v, &row) {
                changed.push(v);
            }
        }
        self.scratch = found;
        changed
    }

    /// X-mirror: give each of `changed`'s partner vertices the partner joint's weight equal to the painted
    /// joint's weight at the vertex (the others there giving way). `partners[v]` is vertex v's mirror vertex,
    /// `joint_partner` the painted joint's mirror joint. Vertices on the plane (their own partners) are skipped
    /// unless the joint is its own partner too (a centre joint), where nothing is left to do. Returns the
    /// partner vertices whose rows changed.
    pub fn mirror(
        &mut self,
        base: &Weights,
        changed: &[u32],
        partners: &[Option<u32>],
        joint_partner: u16,
        locks: &Locks,
    ) -> Vec<u32> {
        let mut out = Vec::new();
        if locks.is_locked(joint_partner) {
            return out;
        }
        for &v in changed {
            let Some(Some(p)) = partners.get(v as usize).copied() else {
                continue;
            };
            if p == v {
                continue;
            }
            let target = self.weight(base, v);
            let mut row = self.row(base, p);
            let old = row.clone();
            if set_joint_weight(&mut row, joint_partner, target, locks) && row != old && self.set_now(base, p, &row) {
                out.push(p);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The stroke's result: the vertices whose rows differ from before the stroke (ascending), with their rows
    /// before and after.
    pub fn finish(self) -> (Vec<u32>, Vec<Row>, Vec<Row>) {
        let (mut vs, mut before, mut after) = (Vec::new(), Vec::new(), Vec::new());
        let mut touched: Vec<_> = self.touched.into_iter().collect();
        touched.sort_unstable_by_key(|t| t.0);
        for (v, t) in touched {
            let (b, a) = (&self.pairs[t.before.range()], &self.pairs[t.now.range()]);
            if a != b {
                vs.push(v);
                before.push(b.to_vec());
                after.push(a.to_vec());
            }
        }
        (vs, before, after)
    }

    pub fn is_empty(&self) -> bool {
        self.touched.is_empty()
    }
}

/// Sort vertex ids ascending. PERF: a radix sort, 11 bits a pass and only the passes the largest id needs (two
/// below 4M vertices): a dab's thousands of ids come in k-d tree order, and comparison sorting them took a fifth
/// of the dab.
fn sort_ids(ids: &mut Vec<u32>, scratch: &mut Vec<u32>) {
    const BITS: u32 = 11;
    const MASK: u32 = (1 << BITS) - 1;
    if ids.len() < 256 {
        ids.sort_unstable();
        return;
    }
    let max = ids.iter().copied().max().unwrap_or(0);
    scratch.clear();
    scratch.resize(ids.len(), 0);
    let mut shift = 0;
    while shift < u32::BITS && max >> shift > 0 {
        let mut at = [0usize; 1 << BITS];
        for &v in ids.iter() {
            at[((v >> shift) & MASK) as usize] += 1;
        }
        let mut sum = 0;
        for a in at.iter_mut() {
            (*a, sum) = (sum, sum + *a);
        }
        for &v in ids.iter() {
            let d = ((v >> shift) & MASK) as usize;
            scratch[at[d]] = v;
            at[d] += 1;
        }
        std::mem::swap(ids, scratch);
        shift += BITS;
    }
}

/// Hashes a vertex index with one multiplication (Fibonacci hashing, as FxHash does): the standard library's
/// SipHash, which resists chosen keys, costs more than the rest of a look-up, and vertex indices are not chosen
/// by an adversary.
#[derive(Default)]
pub struct VertexHasher(u64);

impl Hasher for VertexHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The painted joint's weight at vertex `v` (the Sample brush).
pub fn sample_weight(weights: &Weights, v: u32, joint: u16) -> f32 {
    let (js, ws) = weights.row(v as usize);
    js.iter().position(|&j| j == joint).map_or(0.0, |k| ws[k])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three vertices on a line, each shared by joints 0 and 1 half and half.
    fn line() -> (Vec<Vec3>, Vec<Vec3>, Weights) {
        let p = vec![Vec3::ZERO, Vec3::new(0.5, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0)];
        let n = vec![Vec3::Z; 3];
        let rows = vec![vec![(0u16, 0.5f32), (1, 0.5)]; 3];
        let (w, _) = Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap();
        (p, n, w)
    }

    #[test]
    fn falloffs_have_their_golden_values() {
        assert_eq!(Falloff::Smooth.at(0.0), 1.0);
        assert!((Falloff::Smooth.at(0.5) - 0.5).abs() < 1e-7);
        assert!((Falloff::Smooth.at(0.25) - (1.0 - 0.15625)).abs() < 1e-7);
        assert_eq!(Falloff::Linear.at(0.25), 0.75);
        assert_eq!(Falloff::Constant.at(0.9), 1.0);
        assert_eq!(Falloff::Smooth.at(1.5), 0.0);
    }

    #[test]
    fn an_add_dab_raises_the_joint_by_the_falloff_and_the_others_give_way() {
        let (p, n, w) = line();
        let index = PointIndex::of(&p);
        let surface = DabSurface {
            positions: &p,
            normals: &n,
            index: &index,
            graph: None,
            eye: Vec3::new(0.0, 0.0, 10.0),
        };
        let brush = BrushSettings {
            falloff: Falloff::Linear,
            strength: 1.0,
            ..BrushSettings::default()
        };
        let mut s = Stroke::new(0);
        let changed = s.dab(&w, &surface, Vec3::ZERO, 1.0, &brush, &Locks::none());
        // Vertex 0 at the centre: f = 1, so w = 1. Vertex 1 at d = 0.5: f = 0.5, w = 0.5 + 0.5 * 0.5 = 0.75.
        // Vertex 2 is outside.
        assert_eq!(changed, vec![0, 1]);
        assert_eq!(s.row(&w, 0), vec![(0, 1.0)]);
        let r1 = s.row(&w, 1);
        assert!((r1[0].1 - 0.75).abs() < 1e-6 && (r1[1].1 - 0.25).abs() < 1e-6, "{r1:?}");
        assert_eq!(s.row(&w, 2), vec![(0, 0.5), (1, 0.5)]);
        let (vs, before, after) = s.finish();
        assert_eq!(vs, vec![0, 1]);
        assert_eq!(before[0], vec![(0, 0.5), (1, 0.5)]);
        assert_eq!(after[0], vec![(0, 1.0)]);
    }

    #[test]
    fn subtract_replace_and_smooth_follow_their_formulas_and_locks_hold() {
        let (p, n, w) = line();
        let index = PointIndex::of(&p);
        let surface = DabSurface {
            positions: &p,
            normals: &n,
            index: &index,
            graph: None,
            eye: Vec3::new(0.0, 0.0, 10.0),
        };
        let constant = |mode, strength| BrushSettings {
            mode,
            strength,
            falloff: Falloff::Constant,
            value: 0.2,
            ..BrushSettings::default()
        };
        // The painted joint's weight at vertex 0 after one dab of `mode` on a fresh stroke.
        let after_dab = |mode, strength| {
            let mut s = Stroke::new(0);
            s.dab(&w, &surface, Vec3::ZERO, 0.1, &constant(mode, strength), &Locks::none());
            s.row(&w, 0)[0].1
        };
        assert!((after_dab(BrushMode::Subtract, 0.5) - 0.25).abs() < 1e-6);
        // 0.5 + 0.5 * (0.2 - 0.5) = 0.35
        assert!((after_dab(BrushMode::Replace, 0.5) - 0.35).abs() < 1e-6);
        // A locked painted joint: nothing; a locked other joint: nothing can give way.
        let mut s = Stroke::new(0);
        assert!(
            s.dab(
                &w,
                &surface,
                Vec3::ZERO,
                0.1,
                &constant(BrushMode::Add, 1.0),
                &Locks::of([0])
            )
            .is_empty()
        );
        assert!(
            s.dab(
                &w,
                &surface,
                Vec3::ZERO,
                0.1,
                &constant(BrushMode::Add, 1.0),
                &Locks::of([1])
            )
            .is_empty()
        );
        // Back faces are skipped when asked.
        let back = DabSurface {
            eye: Vec3::new(0.0, 0.0, -10.0),
            ..surface
        };
        assert!(
            s.dab(
                &w,
                &back,
                Vec3::ZERO,
                0.1,
                &constant(BrushMode::Add, 1.0),
                &Locks::none()
            )
            .is_empty()
        );
    }

    #[test]
    fn x_mirror_writes_the_partner_joint_on_the_partner_vertex() {
        // Vertex 0 at +x and vertex 1 at -x; joints 0 (left) and 1 (right) are partners, joint 2 in the middle.
        let rows = [vec![(0u16, 0.5f32), (2, 0.5)], vec![(1u16, 0.5f32), (2, 0.5)]];
        let (w, _) = Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap();
        let mut s = Stroke::new(0);
        let mut row = s.row(&w, 0);
        assert!(set_joint_weight(&mut row, 0, 0.8, &Locks::none()));
        assert!(s.set_now(&w, 0, &row));
        let partners = [Some(1), Some(0)];
        assert_eq!(s.mirror(&w, &[0], &partners, 1, &Locks::none()), vec![1]);
        let r1 = s.row(&w, 1);
        assert!((r1[0].1 - 0.8).abs() < 1e-6 && r1[0].0 == 1, "{r1:?}");
        assert!(
            s.mirror(&w, &[0], &partners, 1, &Locks::of([1])).is_empty(),
            "a locked partner joint stays"
        );
    }

    #[test]
    fn the_radix_sort_of_ids_equals_a_comparison_sort() {
        let mut state = 99u32;
        let mut scratch = Vec::new();
        for (n, range) in [
            (10, 100),
            (300, 1000),
            (5000, 1 << 20),
            (4000, u32::MAX),
            (3000, 1 << 11),
        ] {
            let ids: Vec<u32> = (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 17;
                    state ^= state << 5;
                    state % range
                })
                .collect();
            let mut want = ids.clone();
            want.sort_unstable();
            let mut got = ids;
            sort_ids(&mut got, &mut scratch);
            assert_eq!(got, want, "{n} ids below {range}");
        }
    }

    #[test]
    fn the_radius_query_equals_a_brute_force_scan() {
        let mut state = 12345u32;
        let mut rnd = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as f32 / u32::MAX as f32
        };
        let pts: Vec<Vec3> = (0..2000).map(|_| Vec3::new(rnd(), rnd(), rnd())).collect();
        let index = PointIndex::of(&pts);
        let mut got = Vec::new();
        for _ in 0..50 {
            let c = Vec3::new(rnd(), rnd(), rnd());
            let r = 0.05 + 0.2 * rnd();
            index.within(c, r, &mut got);
            let mut exact: Vec<u32> = got
                .iter()
                .copied()
                .filter(|&v| pts[v as usize].distance(c) <= r)
                .collect();
            exact.sort_unstable();
            let brute: Vec<u32> = (0..pts.len() as u32)
                .filter(|&v| pts[v as usize].distance(c) <= r)
                .collect();
            assert_eq!(exact, brute);
        }
    }

    /// A stroke of every mode over the creature, with a lock and a fallback, gives the rows it gave when the
    /// stroke kept its rows in a sorted map and copied them on every look-up (the checksum was taken then).
    #[test]
    fn a_scripted_stroke_gives_the_rows_it_always_gave() {
        let s = crate::sample::make_sample(crate::sample::SampleKind::Creature, 20_000).unwrap();
        let (positions, normals) = (s.skin.positions(), s.skin.normals());
        let weights = s.skin.weights().unwrap();
        let index = PointIndex::of(positions);
        let graph = MeshGraph::new(positions, s.skin.triangles());
        let mut sum = 0xcbf2_9ce4_8422_2325u64;
        let mut changed_rows = 0;
        let mut hash = |x: u64| sum = (sum ^ x).wrapping_mul(0x100_0000_01b3);
        for (joint, locks) in [(1u16, Locks::none()), (3, Locks::of([2])), (0, Locks::of([5, 6]))] {
            let mut stroke = Stroke::new(joint);
            stroke.fallback = Some(0);
            for (k, mode) in [
                BrushMode::Add,
                BrushMode::Smooth,
                BrushMode::Replace,
                BrushMode::Subtract,
                BrushMode::Add,
            ]
            .into_iter()
            .enumerate()
            {
                let v = (positions.len() / 7) * (k + 1) + joint as usize * 31;
                let surface = DabSurface {
                    positions,
                    normals,
                    index: &index,
                    graph: Some(&graph),
                    eye: positions[v] + normals[v] * 3.0,
                };
                let brush = BrushSettings {
                    mode,
                    strength: 0.3 + 0.1 * k as f32,
                    value: 0.6,
                    front_only: k % 2 == 0,
                    ..BrushSettings::default()
                };
                for step in 0..3 {
                    let centre = positions[v] + Vec3::splat(0.01 * step as f32);
                    let changed = stroke.dab(weights, &surface, centre, 0.08, &brush, &locks);
                    hash(changed.len() as u64);
                    changed_rows += changed.len();
                    for &c in &changed {
                        hash(c as u64);
                        for (j, w) in stroke.row(weights, c) {
                            hash(j as u64);
                            hash(w.to_bits() as u64);
                        }
                    }
                }
            }
            hash(stroke.refused as u64);
            let (vs, before, after) = stroke.finish();
            for ((v, b), a) in vs.iter().zip(&before).zip(&after) {
                hash(*v as u64);
                for &(j, w) in b.iter().chain(a) {
                    hash(j as u64);
                    hash(w.to_bits() as u64);
                }
            }
            hash(vs.len() as u64);
        }
        assert_eq!(sum, 0x99da_05b4_0778_8c4c);
        assert!(changed_rows > 1_000, "{changed_rows} rows changed");
    }
}
