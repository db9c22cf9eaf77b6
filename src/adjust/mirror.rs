//! Mirror skin weights across a plane: pair each joint with its mirror partner ([`mirror_joints`]), then copy one
//! side's weights onto the other or flip them across the plane ([`mirror_weights`]).
//!
//! The plane ([`Plane`]) is perpendicular to a world axis, through the origin unless given an offset. Reflecting
//! a point changes the sign of its distance to the plane.
//!
//! Joints are paired by name first, by the common left/right conventions ([`mirrored_names`]), and otherwise by
//! the position of their pivots in the bind pose. Vertices are paired by position: a vertex's partner is the
//! vertex nearest its reflection, accepted within a tolerance ([`default_tolerance`] suggests one). A vertex
//! within the tolerance of the plane is its own partner. "Swapping" a row replaces every joint by its partner.
//!
//! Two modes ([`MirrorMode`]):
//! - `Copy` writes the source side's weights onto the other side with joints swapped (Maya's Mirror Skin
//!   Weights). The source side keeps its weights; a vertex on the plane gets the mean of its row and its swapped
//!   row, which is symmetric. Without locks, Copy is idempotent and leaves weights that are already symmetric
//!   unchanged (up to rounding).
//! - `Flip` gives every vertex its partner's row swapped (Blender's "Mirror Vertex Group" with flip); a vertex on
//!   the plane gets its own row swapped. On a symmetric mesh, where partners pair up, Flip applied twice is the
//!   identity (up to rounding).
//!
//! Locked joints keep their weights on every vertex: a written row is the vertex's own locked weights plus the
//! mirrored row's unlocked ones, normalised around the locked ones with [`normalise_row`]. When the mirrored row
//! has no unlocked weight, the vertex keeps its own unlocked weights. A vertex whose partner is unweighted keeps
//! its weights (mirroring never unweights a vertex); an unweighted vertex whose partner is weighted receives the
//! partner's weights. Every weighted vertex sums to 1 afterwards. Results are deterministic: nearest-vertex ties
//! go to the lowest index, and rows are built in parallel with [`map_rows`].

use std::collections::HashMap;

use crate::spatial::PointIndex;
use glam::{Mat4, Vec3};
use rayon::prelude::*;

use super::rows::{Locks, RowFix, map_rows, normalise_row, row_pairs, sort_row};
use crate::model::{Skeleton, Weights};

/// A world axis; the mirror plane is perpendicular to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Axis {
    #[default]
    X,
    Y,
    Z,
}

impl Axis {
    /// 0, 1 or 2.
    pub fn index(self) -> usize {
        match self {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        }
    }
}

/// The mirror plane: the points whose `axis` coordinate is `offset` (0 by default: through the origin).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Plane {
    pub axis: Axis,
    #[serde(default)]
    pub offset: f32,
}

impl Plane {
    /// The plane through the origin perpendicular to `axis`.
    pub fn new(axis: Axis) -> Self {
        Self { axis, offset: 0.0 }
    }

    /// The plane perpendicular to `axis` where that coordinate is `offset`.
    pub fn at(axis: Axis, offset: f32) -> Self {
        Self { axis, offset }
    }

    /// How far `p` lies on the positive side of the plane (negative on the other side).
    #[inline]
    pub fn signed_distance(&self, p: Vec3) -> f32 {
        p[self.axis.index()] - self.offset
    }

    /// `p` reflected in the plane. Exact for a plane through the origin.
    #[inline]
    pub fn reflect(&self, p: Vec3) -> Vec3 {
        let mut q = p;
        let i = self.axis.index();
        q[i] = if self.offset == 0.0 {
            -p[i]
        } else {
            2.0 * self.offset - p[i]
        };
        q
    }
}

impl From<Axis> for Plane {
    fn from(axis: Axis) -> Self {
        Self::new(axis)
    }
}

/// A tolerance suited to `positions`: 1e-4 times the diagonal of their bounding box (non-finite points ignored);
/// 0 (exact matches only) when there are no two distinct finite points.
pub fn default_tolerance(positions: &[Vec3]) -> f32 {
    let bounds = positions
        .iter()
        .filter(|p| p.is_finite())
        .fold(None, |acc: Option<(Vec3, Vec3)>, &p| {
            Some(acc.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))))
        });
    match bounds {
        Some((lo, hi)) => 1e-4 * (hi - lo).length(),
        None => 0.0,
    }
}

/// A tolerance of NaN or below 0 counts as 0.
fn sanitise(tolerance: f32) -> f32 {
    if tolerance >= 0.0 { tolerance } else { 0.0 }
}

// ---------------------------------------------------------------------------------------------------------------
// Joints
// ---------------------------------------------------------------------------------------------------------------

/// How a joint's mirror partner was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PairedBy {
    /// By the left/right naming conventions ([`mirrored_names`]).
    Name,
    /// By position: each pivot is the other's nearest mirrored pivot, within the tolerance.
    Position,
    /// The pivot lies on the plane (within the tolerance): the joint is its own partner.
    Plane,
    /// Given explicitly ([`JointMirror::from_pairs`]).
    Given,
    /// No partner found: the joint maps to itself.
    Unpaired,
}

/// A pair of joints matched by name whose pivots are not mirror images within the tolerance (a warning: the pair
/// is still used).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NameMismatch {
    /// The lower joint index of the pair.
    pub joint: usize,
    pub partner: usize,
    /// Distance between `joint`'s reflected pivot and `partner`'s pivot.
    pub distance: f32,
}

/// Why explicit pairs do not make a joint mirror.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MirrorError {
    #[error("joint {joint} is out of range for {joints} joints")]
    OutOfRange { joint: usize, joints: usize },
    #[error("joint {joint} is paired twice (with {first} and {second})")]
    Conflict { joint: usize, first: usize, second: usize },
    #[error("{0} joints is more than the {max} supported", max = u16::MAX as usize + 1)]
    TooMany(usize),
}

/// Each joint's mirror partner: an involution on joint indices (a joint's partner's partner is the joint).
/// Joints without a partner map to themselves.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct JointMirror {
    partner: Vec<u16>,
    paired_by: Vec<PairedBy>,
    unpaired: Vec<usize>,
    name_mismatches: Vec<NameMismatch>,
}

impl JointMirror {
    /// `joints` joints, each its own partner (all [`PairedBy::Unpaired`]).
    pub fn identity(joints: usize) -> Self {
        let joints = joints.min(u16::MAX as usize + 1);
        Self {
            partner: (0..joints).map(|j| j as u16).collect(),
            paired_by: vec![PairedBy::Unpaired; joints],
            unpaired: (0..joints).collect(),
            name_mismatches: Vec::new(),
        }
    }

    /// Explicit pairs over `joints` joints ([`PairedBy::Given`]); `(j, j)` marks a joint as its own partner on
    /// purpose. Joints in no pair are unpaired. Fails when a joint is out of range or paired with two others.
    pub fn from_pairs(joints: usize, pairs: impl IntoIterator<Item = (usize, usize)>) -> Result<Self, MirrorError> {
        if joints > u16::MAX as usize + 1 {
            return Err(MirrorError::TooMany(joints));
        }
        let mut m = Self::identity(joints);
        for (a, b) in pairs {
            for j in [a, b] {
                if j >= joints {
                    return Err(MirrorError::OutOfRange { joint: j, joints });
                }
            }
            for (j, other) in [(a, b), (b, a)] {
                let current = m.partner[j] as usize;
                if m.paired_by[j] == PairedBy::Given && current != other {
                    return Err(MirrorError::Conflict {
                        joint: j,
                        first: current,
                        second: other,
                    });
                }
            }
            m.partner[a] = b as u16;
            m.partner[b] = a as u16;
            m.paired_by[a] = PairedBy::Given;
            m.paired_by[b] = PairedBy::Given;
        }
        m.unpaired = unpaired_of(&m.paired_by);
        Ok(m)
    }

    /// Number of joints covered.
    pub fn len(&self) -> usize {
        self.partner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.partner.is_empty()
    }

    /// Joint `j`'s partner; a joint past the end is its own partner.
    #[inline]
    pub fn partner(&self, j: u16) -> u16 {
        self.partner.get(j as usize).copied().unwrap_or(j)
    }

    /// Every joint's partner, by joint index.
    pub fn partners(&self) -> &[u16] {
        &self.partner
    }

    /// How each joint's partner was found, by joint index.
    pub fn paired_by(&self) -> &[PairedBy] {
        &self.paired_by
    }

    /// Joints with no partner (mapped to themselves), ascending.
    pub fn unpaired(&self) -> &[usize] {
        &self.unpaired
    }

    /// Name pairs whose pivots are not mirror images within the tolerance, by lower joint index.
    pub fn name_mismatches(&self) -> &[NameMismatch] {
        &self.name_mismatches
    }
}

fn unpaired_of(paired_by: &[PairedBy]) -> Vec<usize> {
    paired_by
        .iter()
        .enumerate()
        .filter(|(_, p)| **p == PairedBy::Unpaired)
        .map(|(j, _)| j)
        .collect()
}

/// Separators around a whole `L`/`R` token.
const SEPARATORS: [char; 4] = ['_', '.', '-', ' '];

/// `Left`/`Right` in any of three casings, anywhere in the name; every occurrence is swapped.
fn swap_side_words(name: &str) -> Option<String> {
    const WORDS: [(&str, &str); 6] = [
        ("Left", "Right"),
        ("Right", "Left"),
        ("left", "right"),
        ("right", "left"),
        ("LEFT", "RIGHT"),
        ("RIGHT", "LEFT"),
    ];
    let mut out = String::with_capacity(name.len() + 1);
    let mut rest = name;
    let mut changed = false;
    while let Some(c) = rest.chars().next() {
        match WORDS.iter().find(|(from, _)| rest.starts_with(from)) {
            Some((from, to)) => {
                out.push_str(to);
                rest = &rest[from.len()..];
                changed = true;
            }
            None => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    changed.then_some(out)
}

fn flip_letter(token: &str) -> Option<&'static str> {
    match token {
        "L" => Some("R"),
        "R" => Some("L"),
        "l" => Some("r"),
        "r" => Some("l"),
        _ => None,
    }
}

/// `L`/`R`/`l`/`r` as a whole token between separators or the name's ends (`arm_l`, `L_arm`, `arm.L`,
/// `hand.L.001`); every such token is swapped.
fn swap_side_tokens(name: &str) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    let mut changed = false;
    let mut start = 0;
    for (i, c) in name.char_indices().chain(std::iter::once((name.len(), SEPARATORS[0]))) {
        if SEPARATORS.contains(&c) {
            let token = &name[start..i];
            match flip_letter(token) {
                Some(f) => {
                    out.push_str(f);
                    changed = true;
                }
                None => out.push_str(token),
            }
            if i < name.len() {
                out.push(c);
            }
            start = i + c.len_utf8();
        }
    }
    changed.then_some(out)
}

/// A camel-case `L`/`R` at either end: trailing after a lower-case letter (`armL`), leading before an upper-case
/// letter that starts a word (`LArm`).
fn swap_side_camel(name: &str) -> Option<String> {
    let b = name.as_bytes();
    let n = b.len();
    let flip = |c: u8| match c {
        b'L' => Some(b'R'),
        b'R' => Some(b'L'),
        _ => None,
    };
    let mut out = b.to_vec();
    let mut changed = false;
    if n >= 2 && b[n - 2].is_ascii_lowercase() {
        if let Some(f) = flip(b[n - 1]) {
            out[n - 1] = f;
            changed = true;
        }
    }
    if n >= 3 && b[1].is_ascii_uppercase() && b[2].is_ascii_lowercase() {
        if let Some(f) = flip(b[0]) {
            out[0] = f;
            changed = true;
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes, so `out` is still UTF-8.
    if changed { String::from_utf8(out).ok() } else { None }
}

/// The names a joint's mirror partner may have, most likely first, by the common conventions: `Left`/`Right`
/// (also `left`/`right`, `LEFT`/`RIGHT`) anywhere in the name (Maya, Mixamo: `LeftArm`); `L`/`R` or `l`/`r` as a
/// whole token, separated by `_`, `.`, `-` or a space (`arm_l`, `L_arm`, Blender's `arm.L`, `hand.L.001`); and a
/// camel-case `L`/`R` at either end (`armL`, `LArm`). Each convention swaps every occurrence it finds, so applying
/// it to the result gives the name back.
pub fn mirrored_names(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for candidate in [swap_side_words(name), swap_side_tokens(name), swap_side_camel(name)]
        .into_iter()
        .flatten()
    {
        if candidate != name && !out.contains(&candidate) {
            out.push(candidate);
        }
    }
    out
}

/// Each joint's mirror partner across `plane`, with `bind_world` the joints' bind-pose world matrices (a joint's
/// pivot is the matrix's translation; see [`crate::deform::bind_world_from_joint`]).
///
/// - By name: a joint's partner is the first of its [`mirrored_names`] that names a joint, when that joint's
///   first such name is in turn this joint's. Names that appear more than once are not used. A name pair is kept
///   even when the pivots are not mirror images within `tolerance` (listed in
///   [`JointMirror::name_mismatches`]).
/// - Then by position, among the joints left: a joint whose pivot lies within `tolerance` of the plane is its own
///   partner; two joints pair when each one's pivot is the nearest (ties: lowest index) to the other's reflected
///   pivot, within `tolerance` (world units).
/// - Any other joint (or one without a finite pivot: `bind_world` too short) maps to itself and is listed in
///   [`JointMirror::unpaired`].
///
/// Joint pivots are placed by hand more often than vertices; a tolerance of about 1e-3 of the skeleton's size
/// is a reasonable start.
pub fn mirror_joints(skel: &Skeleton, bind_world: &[Mat4], plane: impl Into<Plane>, tolerance: f32) -> JointMirror {
    let plane = plane.into();
    let tol = sanitise(tolerance);
    let n = skel.len().min(u16::MAX as usize + 1);
    let names: Vec<&str> = skel.joints().iter().take(n).map(|j| j.name.as_str()).collect();
    let pivot = |j: usize| bind_world.get(j).map(|m| m.w_axis.truncate()).filter(|p| p.is_finite());

    // Name -> joint, `None` when the name is repeated.
    let mut by_name: HashMap<&str, Option<usize>> = HashMap::with_capacity(n);
    for (i, &name) in names.iter().enumerate() {
        by_name.entry(name).and_modify(|e| *e = None).or_insert(Some(i));
    }
    let name_candidate: Vec<Option<usize>> = names
        .iter()
        .enumerate()
        .map(|(i, &name)| {
            if by_name.get(name) != Some(&Some(i)) {
                return None;
            }
            mirrored_names(name)
                .iter()
                .find_map(|c| by_name.get(c.as_str()).copied())
                .flatten()
                .filter(|&k| k != i)
        })
        .collect();

    let mut partner: Vec<u16> = (0..n).map(|j| j as u16).collect();
    let mut paired_by = vec![PairedBy::Unpaired; n];
    let mut name_mismatches = Vec::new();
    for i in 0..n {
        let Some(k) = name_candidate[i] else { continue };
        if name_candidate[k] != Some(i) {
            continue;
        }
        partner[i] = k as u16;
        paired_by[i] = PairedBy::Name;
        if i < k {
            if let (Some(a), Some(b)) = (pivot(i), pivot(k)) {
                let distance = plane.reflect(a).distance(b);
                if distance > tol {
                    name_mismatches.push(NameMismatch {
                        joint: i,
                        partner: k,
                        distance,
                    });
                }
            }
        }
    }

    // By position, among the joints left.
    let mut candidates = Vec::new();
    for (j, by) in paired_by.iter_mut().enumerate() {
        if *by != PairedBy::Unpaired {
            continue;
        }
        let Some(p) = pivot(j) else { continue };
        if plane.signed_distance(p).abs() <= tol {
            *by = PairedBy::Plane;
        } else {
            candidates.push((j, p));
        }
    }
    let index = PointIndex::new(candidates.iter().copied());
    let mut best: Vec<Option<usize>> = vec![None; n];
    for &(j, p) in &candidates {
        best[j] = index.nearest_within(plane.reflect(p), tol);
    }
    for &(j, _) in &candidates {
        if let Some(k) = best[j] {
            if k != j && best[k] == Some(j) {
                partner[j] = k as u16;
                paired_by[j] = PairedBy::Position;
            }
        }
    }

    JointMirror {
        partner,
        unpaired: unpaired_of(&paired_by),
        paired_by,
        name_mismatches,
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Weights
// ---------------------------------------------------------------------------------------------------------------

/// How to mirror weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MirrorMode {
    /// Write the source side's weights onto the other side, joints swapped; the source side is the positive one
    /// (+X to -X for the X axis) when `from_positive`. Vertices on the plane get the mean of their row and their
    /// swapped row.
    Copy {
        #[serde(default = "yes")]
        from_positive: bool,
    },
    /// Give every vertex its partner's row, joints swapped (on the plane: its own row swapped).
    Flip,
}

fn yes() -> bool {
    true
}

impl Default for MirrorMode {
    /// Copy from the positive side.
    fn default() -> Self {
        MirrorMode::Copy { from_positive: true }
    }
}

/// How many of [`MirrorReport::without_partner`]'s vertices are listed.
pub const LISTED_WITHOUT_PARTNER: usize = 100;

/// What [`mirror_weights`] did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct MirrorReport {
    /// Vertices given a mirrored row.
    pub vertices_written: usize,
    /// Vertices whose weights changed.
    pub vertices_changed: usize,
    /// Vertices within the tolerance of the plane.
    pub on_plane: usize,
    /// Vertices that needed a partner and have none within the tolerance (or no finite position); they keep
    /// their weights.
    pub vertices_without_partner: usize,
    /// The lowest of them, at most [`LISTED_WITHOUT_PARTNER`].
    pub without_partner: Vec<usize>,
    /// Vertices whose partner is unweighted; they keep their weights.
    pub partner_unweighted: usize,
    /// Written vertices that could only sum to 1 by changing locked weights.
    pub locks_overridden: usize,
}

/// One vertex's weights as (joint, weight) pairs.
type Row = Vec<(u16, f32)>;

/// Where a vertex lies relative to the plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Positive,
    Negative,
    Plane,
    /// No finite position.
    Unknown,
}

/// Each vertex's mirror partner across `plane`: the vertex nearest its reflection, within `tolerance` (a vertex
/// on the plane is its own partner, as the nearest to its own reflection). None where no vertex lies that close,
/// or at a non-finite position. Used by X-mirror painting.
pub fn vertex_partners(positions: &[Vec3], plane: impl Into<Plane>, tolerance: f32) -> Vec<Option<u32>> {
    let plane = plane.into();
    let tol = sanitise(tolerance);
    let index = PointIndex::new(positions.iter().copied().enumerate());
    positions
        .par_iter()
        .map(|&p| {
            if !p.is_finite() {
                return None;
            }
            index.nearest_within(plane.reflect(p), tol).map(|v| v as u32)
        })
        .collect()
}

/// Mirror `weights` across `plane` (see the module documentation), pairing vertices by the nearest reflected
/// position within `tolerance` (world units; see [`default_tolerance`]) and joints through `joints`.
///
/// - `Copy`: source-side vertices keep their rows; each vertex on the other side gets its partner's row swapped
///   (for a partner on the plane, that partner's symmetrised row); vertices on the plane get the mean of their row
///   and their swapped row.
/// - `Flip`: each vertex off the plane gets its partner's row swapped; each vertex on the plane its own row
///   swapped.
///
/// A vertex's partner is the vertex nearest its reflection (not necessarily the other way round, which only
/// matters on meshes that are not symmetric). A vertex that needs a partner and has none keeps its weights and
/// is reported, as is one whose partner is unweighted; an unweighted vertex whose partner is weighted receives
/// the partner's weights. Locked joints keep their weights on every vertex; written rows are normalised around
/// them ([`normalise_row`]), and where the mirrored row holds only locked joints the vertex keeps its own
/// unlocked weights. Joints past the end of `joints` are their own partners. Vertices past the end of
/// `positions`, or at non-finite ones, keep their weights (reported without partner). A `tolerance` that is NaN
/// or negative counts as 0.
pub fn mirror_weights(
    positions: &[Vec3],
    weights: &Weights,
    joints: &JointMirror,
    plane: impl Into<Plane>,
    mode: MirrorMode,
    tolerance: f32,
    locks: &Locks,
) -> (Weights, MirrorReport) {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    let plane = plane.into();
    let tol = sanitise(tolerance);
    let n = weights.len();
    let sides: Vec<Side> = (0..n)
        .into_par_iter()
        .map(|v| match positions.get(v).filter(|p| p.is_finite()) {
            None => Side::Unknown,
            Some(&p) => {
                let d = plane.signed_distance(p);
                if d.abs() <= tol {
                    Side::Plane
                } else if d > 0.0 {
                    Side::Positive
                } else {
                    Side::Negative
                }
            }
        })
        .collect();
    let needs_partner = |s: Side| match (mode, s) {
        (_, Side::Plane) => false,
        (_, Side::Unknown) | (MirrorMode::Flip, _) => true,
        (MirrorMode::Copy { from_positive }, s) => s == if from_positive { Side::Negative } else { Side::Positive },
    };
    let index = PointIndex::new(positions.iter().copied().enumerate());
    let partner: Vec<Option<usize>> = (0..n)
        .into_par_iter()
        .map(|v| match (needs_partner(sides[v]), positions.get(v)) {
            (true, Some(&p)) => index.nearest_within(plane.reflect(p), tol),
            _ => None,
        })
        .collect();

    let mut report = MirrorReport::default();
    for v in 0..n {
        if sides[v] == Side::Plane {
            report.on_plane += 1;
        }
        if needs_partner(sides[v]) && partner[v].is_none() {
            report.vertices_without_partner += 1;
            if report.without_partner.len() < LISTED_WITHOUT_PARTNER {
                report.without_partner.push(v);
            }
        }
    }

    let swap = |row: &mut Row| row.iter_mut().for_each(|(j, _)| *j = joints.partner(*j));
    // The mean of a row and its swapped row.
    let symmetrise = |row: &mut Row| {
        let len = row.len();
        for k in 0..len {
            let (j, w) = row[k];
            row[k].1 = w * 0.5;
            row.push((joints.partner(j), w * 0.5));
        }
        sort_row(row);
    };
    let (written, changed, unweighted_partner, overridden) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let out = map_rows(
        n,
        || (Vec::new(), Vec::new()),
        |(mirrored, own): &mut (Row, Row), v, row| {
            own.clear();
            row_pairs(weights, v, own);
            mirrored.clear();
            match (sides[v], partner[v]) {
                (Side::Plane, _) => {
                    mirrored.extend_from_slice(own);
                    match mode {
                        MirrorMode::Copy { .. } => symmetrise(mirrored),
                        MirrorMode::Flip => swap(mirrored),
                    }
                }
                (_, Some(u)) => {
                    row_pairs(weights, u, mirrored);
                    if matches!(mode, MirrorMode::Copy { .. }) && sides[u] == Side::Plane {
                        symmetrise(mirrored);
                    }
                    swap(mirrored);
                    if mirrored.is_empty() {
                        unweighted_partner.fetch_add(1, Relaxed);
                    }
                }
                _ => {}
            }
            if mirrored.is_empty() {
                // Source side, no partner, or nothing to mirror: keep the row.
                row.extend_from_slice(own);
                return;
            }
            written.fetch_add(1, Relaxed);
            row.extend(own.iter().filter(|(j, _)| locks.is_locked(*j)));
            let locked = row.len();
            row.extend(mirrored.iter().filter(|(j, _)| !locks.is_locked(*j)));
            if row.len() == locked {
                // The mirrored row holds only locked joints: keep the vertex's own unlocked weights.
                row.extend(own.iter().filter(|(j, _)| !locks.is_locked(*j)));
            }
            sort_row(row);
            if normalise_row(row, locks) == RowFix::LocksOverridden {
                overridden.fetch_add(1, Relaxed);
            }
            sort_row(own);
            if row != own {
                changed.fetch_add(1, Relaxed);
            }
        },
    );
    report.vertices_written = written.into_inner();
    report.vertices_changed = changed.into_inner();
    report.partner_unweighted = unweighted_partner.into_inner();
    report.locks_overridden = overridden.into_inner();
    (out, report)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn vertex_partners_pair_reflections_and_leave_lone_vertices_alone() {
        let p = [
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(2.0, 0.5, 0.0),
            Vec3::new(-1.0005, 2.0, 0.0),
            Vec3::new(1.0, 2.0, 0.0),
        ];
        let got = vertex_partners(&p, Axis::X, 0.01);
        assert_eq!(got, vec![Some(1), Some(0), Some(2), None, Some(5), Some(4)]);
    }
    use crate::formats::skel::read_skel;
    use crate::model::{Pose, world_from_joint};

    /// Joints of the weight tests: 0 root and 5 spine are their own partners; 1/2 and 3/4 are pairs.
    const JOINTS: usize = 6;

    fn pairs() -> JointMirror {
        JointMirror::from_pairs(JOINTS, [(1, 2), (3, 4), (0, 0), (5, 5)]).unwrap()
    }

    fn skeleton(text: &str) -> (Skeleton, Vec<Mat4>) {
        let skel = read_skel(text.as_bytes(), None).unwrap().value;
        let world = world_from_joint(&skel, &Pose::zero(&skel));
        (skel, world)
    }

    fn weights(rows: &[Vec<(u16, f32)>]) -> Weights {
        Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap().0
    }

    fn row(w: &Weights, v: usize) -> Vec<(u16, f32)> {
        let mut r = Vec::new();
        row_pairs(w, v, &mut r);
        sort_row(&mut r);
        r
    }

    fn dense(w: &Weights, v: usize) -> [f32; JOINTS] {
        let mut d = [0.0; JOINTS];
        let (js, ws) = w.row(v);
        for (&j, &x) in js.iter().zip(ws) {
            d[j as usize] += x;
        }
        d
    }

    /// Largest difference between two weight sets over every vertex and joint.
    fn max_diff(a: &Weights, b: &Weights) -> f32 {
        assert_eq!(a.len(), b.len());
        let mut m = 0.0f32;
        for v in 0..a.len() {
            assert_eq!(a.row(v).0.is_empty(), b.row(v).0.is_empty(), "vertex {v}");
            for (x, y) in dense(a, v).iter().zip(dense(b, v)) {
                m = m.max((x - y).abs());
            }
        }
        m
    }

    /// A grid symmetric about x = 0 (7 columns, the middle one on the plane), 70 vertices.
    fn grid() -> Vec<Vec3> {
        let mut p = Vec::new();
        for z in [0.0, 0.3] {
            for y in 0..5 {
                for x in -3..=3 {
                    p.push(Vec3::new(x as f32 * 0.25, y as f32 * 0.5, z));
                }
            }
        }
        p
    }

    /// Deterministic pseudo-random rows over [`JOINTS`] joints, each with joint 0 (never alone) and summing to 1.
    fn random_rows(n: usize, seed: u64) -> Vec<Vec<(u16, f32)>> {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        (0..n)
            .map(|_| {
                let mut r = vec![(0u16, 0.1 + (next() % 1000) as f32 / 1000.0)];
                for _ in 0..1 + next() % 2 {
                    r.push((1 + (next() % 5) as u16, 0.05 + (next() % 1000) as f32 / 1000.0));
                }
                sort_row(&mut r);
                let sum: f64 = r.iter().map(|x| x.1 as f64).sum();
                r.iter_mut().for_each(|x| x.1 = (x.1 as f64 / sum) as f32);
                r
            })
            .collect()
    }

    fn flip(p: &[Vec3], w: &Weights, locks: &Locks) -> (Weights, MirrorReport) {
        mirror_weights(p, w, &pairs(), Axis::X, MirrorMode::Flip, 1e-4, locks)
    }

    fn copy(p: &[Vec3], w: &Weights, from_positive: bool) -> (Weights, MirrorReport) {
        let mode = MirrorMode::Copy { from_positive };
        mirror_weights(p, w, &pairs(), Axis::X, mode, 1e-4, &Locks::none())
    }

    #[test]
    fn mirrored_names_follow_the_common_conventions() {
        let cases: &[(&str, &[&str])] = &[
            ("arm_l", &["arm_r"]),
            ("Arm_L", &["Arm_R"]),
            ("l_arm", &["r_arm"]),
            ("L_Arm", &["R_Arm"]),
            ("upper_arm.L", &["upper_arm.R"]),
            ("hand.R.001", &["hand.L.001"]),
            ("foot-L", &["foot-R"]),
            ("LeftArm", &["RightArm"]),
            ("mixamorig:RightHandIndex1", &["mixamorig:LeftHandIndex1"]),
            ("left_foot", &["right_foot"]),
            ("LEFT_EYE", &["RIGHT_EYE"]),
            ("armL", &["armR"]),
            ("RArm", &["LArm"]),
            ("L", &["R"]),
            // Two conventions at once: the word first, then the token.
            ("Left_arm_l", &["Right_arm_l", "Left_arm_r"]),
            ("spine", &[]),
            ("Lower", &[]),
            ("ball", &[]),
            ("BALL", &[]),
            ("", &[]),
        ];
        for (name, expected) in cases {
            assert_eq!(mirrored_names(name), *expected, "{name}");
            for m in mirrored_names(name) {
                assert!(mirrored_names(&m).contains(&name.to_string()), "{name} -> {m} -> back");
            }
        }
    }

    #[test]
    fn joints_pair_by_name_and_mismatched_pivots_are_flagged() {
        let (skel, world) = skeleton(
            "balljoint root { offset 0 1 0
               balljoint arm_l { offset 1 0 0 balljoint hand_l { offset 1 0 0 } }
               balljoint arm_r { offset -1 0 0 balljoint hand_r { offset -1.2 0 0 } }
               balljoint spine { offset 0 1 0 }
               balljoint LeftLeg { offset 0.3 -1 0 }
               balljoint RightLeg { offset -0.3 -1 0 }
               balljoint tail { offset 0.5 0 -1 }
             }",
        );
        let m = mirror_joints(&skel, &world, Axis::X, 0.01);
        // root 0, arm_l 1, hand_l 2, arm_r 3, hand_r 4, spine 5, LeftLeg 6, RightLeg 7, tail 8.
        assert_eq!(m.partners(), &[0, 3, 4, 1, 2, 5, 7, 6, 8]);
        use PairedBy::*;
        assert_eq!(
            m.paired_by(),
            &[Plane, Name, Name, Name, Name, Plane, Name, Name, Unpaired]
        );
        assert_eq!(m.unpaired(), &[8]);
        assert_eq!(m.name_mismatches().len(), 1);
        let mm = &m.name_mismatches()[0];
        assert_eq!((mm.joint, mm.partner), (2, 4));
        assert!((mm.distance - 0.2).abs() < 1e-5);
        assert_eq!(m.partner(3), 1);
        assert_eq!(m.partner(200), 200, "joints past the end map to themselves");
    }

    #[test]
    fn joints_pair_by_position_when_names_say_nothing() {
        let (skel, world) = skeleton(
            "balljoint j0 { offset 0 0 0
               balljoint j1 { offset 0.5 1 0 }
               balljoint j2 { offset -0.5 1 0 }
               balljoint j3 { offset 0.7 0 0 }
               balljoint j4 { offset -0.75 0 0 }
               balljoint j5 { offset 0.3 0 0.2 }
               balljoint j6 { offset -0.3 0 0.2 }
               balljoint j7 { offset -0.3 0 0.2 }
               balljoint j8 { offset 0.001 2 0 }
               balljoint x_l { offset 2 0 0 }
               balljoint x_l { offset 3 0 0 }
               balljoint x_r { offset -2 0 0 }
             }",
        );
        let m = mirror_joints(&skel, &world, Axis::X, 0.01);
        // j3/j4 are 0.05 from mirror images: too far. j5's nearest mirror is j6 (tie with j7: lower index), and
        // j6's is j5; j7's is j5 too but not mutual. j8 lies on the plane. The repeated name x_l is not used, so
        // the first x_l pairs with x_r by position and the second stays alone.
        assert_eq!(m.partners(), &[0, 2, 1, 3, 4, 6, 5, 7, 8, 11, 10, 9]);
        use PairedBy::*;
        assert_eq!(
            m.paired_by(),
            &[
                Plane, Position, Position, Unpaired, Unpaired, Position, Position, Unpaired, Plane, Position, Unpaired,
                Position
            ]
        );
        assert_eq!(m.unpaired(), &[3, 4, 7, 10]);
        assert!(m.name_mismatches().is_empty());
        // A looser tolerance pairs j3 with j4.
        let m = mirror_joints(&skel, &world, Axis::X, 0.1);
        assert_eq!((m.partner(3), m.partner(4)), (4, 3));
        // Across Y instead, with the plane at y = 1: j1 and j2 are on it.
        let m = mirror_joints(&skel, &world, super::Plane::at(Axis::Y, 1.0), 0.01);
        assert_eq!(&m.paired_by()[1..3], &[Plane, Plane]);
    }

    #[test]
    fn from_pairs_rejects_conflicts() {
        assert!(matches!(
            JointMirror::from_pairs(3, [(0, 1), (1, 2)]),
            Err(MirrorError::Conflict { joint: 1, .. })
        ));
        assert!(matches!(
            JointMirror::from_pairs(3, [(0, 3)]),
            Err(MirrorError::OutOfRange { joint: 3, joints: 3 })
        ));
        let m = JointMirror::from_pairs(3, [(0, 2), (2, 0)]).unwrap();
        assert_eq!((m.partners(), m.unpaired()), (&[2u16, 1, 0][..], &[1usize][..]));
    }

    /// Joints: 0 root, 1 arm_l, 2 arm_r, 3 spine.
    fn four_vertices() -> (Vec<Vec3>, Weights, JointMirror) {
        let p = vec![
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(-2.0, 0.0, 0.0),
        ];
        let w = weights(&[
            vec![(1, 0.75), (0, 0.25)],
            vec![(2, 0.5), (3, 0.5)],
            vec![(1, 0.6), (3, 0.4)],
            vec![(0, 1.0)],
        ]);
        (p, w, JointMirror::from_pairs(4, [(1, 2)]).unwrap())
    }

    #[test]
    fn copy_by_hand() {
        let (p, w, m) = four_vertices();
        let (out, rep) = mirror_weights(&p, &w, &m, Axis::X, MirrorMode::default(), 1e-4, &Locks::none());
        assert_eq!(row(&out, 0), row(&w, 0), "the source side is kept");
        assert_eq!(row(&out, 1), vec![(0, 0.25), (2, 0.75)]);
        assert_eq!(row(&out, 2), vec![(1, 0.3), (2, 0.3), (3, 0.4)]);
        assert_eq!(row(&out, 3), vec![(0, 1.0)], "no partner at (2, 0, 0)");
        let expected = MirrorReport {
            vertices_written: 2,
            vertices_changed: 2,
            on_plane: 1,
            vertices_without_partner: 1,
            without_partner: vec![3],
            partner_unweighted: 0,
            locks_overridden: 0,
        };
        assert_eq!(rep, expected);

        // From the negative side: vertex 0 takes vertex 1's row; vertex 3 is now a source.
        let mode = MirrorMode::Copy { from_positive: false };
        let (out, rep) = mirror_weights(&p, &w, &m, Axis::X, mode, 1e-4, &Locks::none());
        assert_eq!(row(&out, 0), vec![(1, 0.5), (3, 0.5)]);
        assert_eq!(row(&out, 1), row(&w, 1));
        assert_eq!(row(&out, 3), row(&w, 3));
        assert_eq!((rep.vertices_written, rep.vertices_without_partner), (2, 0));

        // Locking the spine: vertex 1 keeps its 0.5 on it and the mirrored rest fills the other half.
        let (out, rep) = mirror_weights(&p, &w, &m, Axis::X, MirrorMode::default(), 1e-4, &Locks::of([3]));
        assert_eq!(row(&out, 1), vec![(0, 0.125), (2, 0.375), (3, 0.5)]);
        assert_eq!(row(&out, 2), vec![(1, 0.3), (2, 0.3), (3, 0.4)]);
        assert_eq!(rep.locks_overridden, 0);
        // Locking arm_r, which the mirrored row of vertex 1 is mostly on: vertex 1 keeps 0.5 on arm_r.
        let (out, _) = mirror_weights(&p, &w, &m, Axis::X, MirrorMode::default(), 1e-4, &Locks::of([2]));
        assert_eq!(row(&out, 1), vec![(0, 0.5), (2, 0.5)]);
    }

    #[test]
    fn flip_twice_is_the_identity_on_a_symmetric_mesh() {
        let p = grid();
        let w = weights(&random_rows(p.len(), 7));
        let (once, rep) = flip(&p, &w, &Locks::none());
        assert_eq!(rep.on_plane, 10);
        assert_eq!(rep.vertices_without_partner, 0);
        assert_eq!(rep.vertices_written, p.len());
        assert!(max_diff(&once, &w) > 0.1, "flipping random weights changes them");
        // Vertex 0 at (-0.75, 0, 0) takes vertex 6's row at (0.75, 0, 0), swapped.
        let swapped: Vec<(u16, f32)> = {
            let mut r: Vec<(u16, f32)> = row(&w, 6).iter().map(|&(j, x)| (pairs().partner(j), x)).collect();
            sort_row(&mut r);
            r
        };
        assert!(
            row(&once, 0)
                .iter()
                .zip(&swapped)
                .all(|(a, b)| a.0 == b.0 && (a.1 - b.1).abs() < 1e-6)
        );
        let (twice, _) = flip(&p, &once, &Locks::none());
        assert!(max_diff(&twice, &w) < 1e-6);
    }

    #[test]
    fn copy_is_idempotent_and_makes_weights_symmetric() {
        let p = grid();
        let w = weights(&random_rows(p.len(), 11));
        for from_positive in [true, false] {
            let (c1, rep) = copy(&p, &w, from_positive);
            assert_eq!(
                (rep.on_plane, rep.vertices_written, rep.vertices_without_partner),
                (10, 40, 0)
            );
            for (v, q) in p.iter().enumerate() {
                if (q.x > 0.0) == from_positive && q.x != 0.0 {
                    assert_eq!(row(&c1, v), row(&w, v), "source vertex {v} is kept");
                }
            }
            // Symmetric: flipping changes nothing.
            assert!(max_diff(&flip(&p, &c1, &Locks::none()).0, &c1) < 1e-6);
            let (c2, _) = copy(&p, &c1, from_positive);
            assert!(max_diff(&c2, &c1) < 1e-6, "idempotent");
            // Symmetric weights are left as they are, whichever side is the source.
            let (c3, _) = copy(&p, &c1, !from_positive);
            assert!(max_diff(&c3, &c1) < 1e-6);
        }
    }

    #[test]
    fn locked_joints_never_change() {
        let p = grid();
        let w = weights(&random_rows(p.len(), 3));
        let locks = Locks::of([1, 5]);
        for mode in [
            MirrorMode::Flip,
            MirrorMode::Copy { from_positive: true },
            MirrorMode::Copy { from_positive: false },
        ] {
            let (out, rep) = mirror_weights(&p, &w, &pairs(), Axis::X, mode, 1e-4, &locks);
            assert_eq!(rep.locks_overridden, 0);
            assert!(rep.vertices_changed > 0);
            for v in 0..p.len() {
                let (a, b) = (dense(&w, v), dense(&out, v));
                assert_eq!((a[1], a[5]), (b[1], b[5]), "{mode:?} vertex {v}");
                assert!((b.iter().sum::<f32>() - 1.0).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn vertices_without_partner_are_reported_and_kept() {
        let mut p = grid();
        let n = p.len();
        // 150 strays on the negative side with no mirror image, then one vertex whose partner is unweighted and
        // one unweighted vertex whose partner is weighted.
        p.extend((0..150).map(|k| Vec3::new(-1.0 - k as f32 * 0.01, 7.0, 0.0)));
        p.push(Vec3::new(-0.5, 9.0, 0.0));
        p.push(Vec3::new(0.5, 9.0, 0.0));
        let mut rows = random_rows(n + 152, 5);
        rows[n + 150] = vec![(3, 1.0)];
        rows[n + 151] = Vec::new();
        let w = weights(&rows);
        let (out, rep) = flip(&p, &w, &Locks::none());
        assert_eq!(rep.vertices_without_partner, 150);
        assert_eq!(rep.without_partner, (n..n + 100).collect::<Vec<_>>());
        assert_eq!(rep.partner_unweighted, 1);
        for v in n..n + 151 {
            assert_eq!(row(&out, v), row(&w, v), "vertex {v}");
        }
        assert_eq!(
            row(&out, n + 151),
            vec![(4, 1.0)],
            "an unweighted vertex takes its partner's weights"
        );
        // Copying from the positive side: the strays are on the target side, so still without partner.
        let (out, rep) = copy(&p, &w, true);
        assert_eq!(rep.vertices_without_partner, 150);
        assert_eq!(row(&out, n + 7), row(&w, n + 7));
        // From the negative side they are sources and need none.
        let (_, rep) = copy(&p, &w, false);
        assert_eq!(rep.vertices_without_partner, 0);
    }

    #[test]
    fn nearest_ties_go_to_the_lowest_index_and_results_are_deterministic() {
        // Vertices 1 and 2 share a position: vertex 0's partner is 1.
        let p = vec![Vec3::X, -Vec3::X, -Vec3::X];
        let w = weights(&[vec![(0, 1.0)], vec![(1, 1.0)], vec![(3, 1.0)]]);
        let (out, _) = copy(&p, &w, false);
        assert_eq!(row(&out, 0), vec![(2, 1.0)]);
        // The same with 40 copies among 560 other points: the lowest copy, 13, wins.
        let mut p: Vec<Vec3> = (0..600)
            .map(|k| Vec3::new(k as f32 * 0.01 - 3.0, (k % 7) as f32, 0.0))
            .collect();
        let copies: Vec<usize> = (0..40).map(|k| 13 + k * 11).collect();
        for &k in &copies {
            p[k] = Vec3::new(-1.0, 0.5, 0.0);
        }
        p[599] = Vec3::new(1.0, 0.5, 0.0);
        let mut rows = vec![vec![(0u16, 1.0f32)]; 600];
        rows[13] = vec![(1, 1.0)];
        let w = weights(&rows);
        let (out, _) = copy(&p, &w, false);
        assert_eq!(row(&out, 599), vec![(2, 1.0)]);

        // Many vertices (several parallel chunks), some repeated: the same output every time.
        let mut p = Vec::new();
        for y in 0..120 {
            for x in -50..=50 {
                p.push(Vec3::new(x as f32 * 0.01, y as f32 * 0.01, 0.0));
            }
        }
        let dup: Vec<Vec3> = p[..3000].to_vec();
        p.extend(dup);
        let w = weights(&random_rows(p.len(), 13));
        let tol = default_tolerance(&p);
        let run = || mirror_weights(&p, &w, &pairs(), Axis::X, MirrorMode::Flip, tol, &Locks::of([3]));
        let first = run();
        for _ in 0..3 {
            assert_eq!(run(), first);
        }
        assert_eq!(first.1.vertices_without_partner, 0);
    }

    #[test]
    fn planes_and_tolerances() {
        let plane = Plane::at(Axis::Z, 2.0);
        assert_eq!(plane.reflect(Vec3::new(1.0, 2.0, 3.0)), Vec3::new(1.0, 2.0, 1.0));
        assert_eq!(plane.signed_distance(Vec3::new(0.0, 0.0, 1.5)), -0.5);
        assert_eq!(Plane::from(Axis::Y).reflect(Vec3::ONE), Vec3::new(1.0, -1.0, 1.0));
        let t = default_tolerance(&[Vec3::ZERO, Vec3::new(3.0, 4.0, 0.0), Vec3::NAN]);
        assert!((t - 5e-4).abs() < 1e-9);
        assert_eq!(default_tolerance(&[]), 0.0);
        // Serialized forms.
        assert_eq!(serde_json::to_string(&Axis::Z).unwrap(), r#""z""#);
        let mode: MirrorMode = serde_json::from_str(r#"{"copy":{}}"#).unwrap();
        assert_eq!(mode, MirrorMode::Copy { from_positive: true });
        let mode: MirrorMode = serde_json::from_str(r#""flip""#).unwrap();
        assert_eq!(mode, MirrorMode::Flip);
        let plane: Plane = serde_json::from_str(r#"{"axis":"y"}"#).unwrap();
        assert_eq!(plane, Plane::new(Axis::Y));
    }

    fn mode_strategy() -> impl Strategy<Value = MirrorMode> {
        prop_oneof![
            Just(MirrorMode::Flip),
            any::<bool>().prop_map(|from_positive| MirrorMode::Copy { from_positive }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn mirrored_weights_always_sum_to_one(
            raw in proptest::collection::vec(proptest::collection::vec((0u16..8, 0.0f32..1.0), 0..5), 1..80),
            xs in proptest::collection::vec(-4i32..=4, 80),
            strays in proptest::collection::vec(-1.0f32..1.0, 80),
            mode in mode_strategy(),
            locked in proptest::collection::vec(0usize..8, 0..3),
            tol in 0.0f32..0.3,
        ) {
            // Half the vertices on a symmetric lattice, half anywhere.
            let p: Vec<Vec3> = (0..raw.len())
                .map(|v| if v % 2 == 0 {
                    Vec3::new(xs[v] as f32 * 0.25, (v / 9) as f32, 0.0)
                } else {
                    Vec3::new(strays[v], strays[(v * 7) % 80], 0.5)
                })
                .collect();
            let rows: Vec<Vec<(u16, f32)>> = raw
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    sort_row(&mut r);
                    r.retain(|x| x.1 > 0.0);
                    let sum: f64 = r.iter().map(|x| x.1 as f64).sum();
                    r.iter_mut().for_each(|x| x.1 = (x.1 as f64 / sum) as f32);
                    r
                })
                .collect();
            let w = weights(&rows);
            let m = JointMirror::from_pairs(8, [(1, 2), (3, 4), (5, 7)]).unwrap();
            let locks = Locks::of(locked.iter().copied());
            let (out, rep) = mirror_weights(&p, &w, &m, Axis::X, mode, tol, &locks);
            prop_assert_eq!(out.len(), w.len());
            prop_assert!(rep.vertices_changed <= rep.vertices_written);
            for v in 0..out.len() {
                let (js, ws) = out.row(v);
                prop_assert!(ws.iter().all(|x| x.is_finite() && *x > 0.0));
                prop_assert!(js.iter().all(|&j| j < 8));
                if !w.row(v).0.is_empty() {
                    prop_assert!(!js.is_empty(), "vertex {} lost its weights", v);
                }
                if !js.is_empty() {
                    let sum: f64 = ws.iter().map(|&x| x as f64).sum();
                    prop_assert!((sum - 1.0).abs() < 1e-6, "vertex {} sums to {}", v, sum);
                }
            }
        }
    }
}
