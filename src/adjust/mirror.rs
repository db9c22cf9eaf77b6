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

use super::rows::{Locks, RowFix, map_rows, normalise_row, sort_row};
use crate::model::{Row, Skeleton, Weights};

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
            weights.row_pairs(v, own);
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
                    weights.row_pairs(u, mirrored);
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

/// What X-mirror painting needs, across the plane x = 0: each vertex's partner (within
/// [`default_tolerance`]) and each joint's (by name, then by pivot within 0.1% of the skeleton's size).
#[derive(Clone, Debug, PartialEq)]
pub struct PaintMirror {
    pub vertices: Vec<Option<u32>>,
    pub joints: Vec<u16>,
}

impl PaintMirror {
    pub fn new(skel: &Skeleton, bind_world: &[Mat4], positions: &[Vec3]) -> Self {
        let plane = Axis::X;
        let pivots: Vec<Vec3> = bind_world.iter().map(|m| m.w_axis.truncate()).collect();
        let size = crate::model::skin::bounds(&pivots).map_or(1.0, |(a, b)| (b - a).length().max(1e-6));
        let joints = mirror_joints(skel, bind_world, plane, 1e-3 * size);
        Self {
            vertices: vertex_partners(positions, plane, default_tolerance(positions)),
            joints: joints.partners().to_vec(),
        }
    }
}

#[cfg(test)]
#[path = "mirror_tests.rs"]
mod tests;
