//! Packing skinning data for the GPU: pure data in, data out (no GL here, so it is tested without a GPU).
//!
//! Per vertex, as the CSE169 skinning slides suggest: the 4 strongest joints and their weights quantised to one
//! byte each, 8 bytes per vertex (12 with 16-bit joint indices, used when the skeleton has more than 256 joints).
//! Quantisation is by largest remainder, so the four bytes of every weighted vertex sum to exactly 255 and the
//! shader's weights (`byte / 255`) sum to 1 without renormalising:
//!
//! 1. keep the 4 largest weights (ties: lower joint index first) and scale them to sum 1;
//! 2. `q_i = floor(255 w_i)`; the `255 - sum q_i` missing units go one each to the largest fractional parts
//!    (ties: earlier slot), so `|q_i / 255 - w_i| < 1 / 255`.
//!
//! The slots are ordered by weight, strongest first, so slot 0 is the vertex's dominant joint (the pivot of
//! dual quaternion skinning's hemisphere fix, as in `deform`). A vertex without weights packs to four zero
//! bytes; the shader leaves it in place and the unweighted view marks it.
//!
//! Bones go to the GPU as texels of an RGBA32F texture one row high ([`TEXELS_PER_BONE`] per joint): the
//! skinning matrix `M = world_from_joint * inverse(bind)` (4 columns), the normal matrix (inverse transpose of
//! its 3x3, 3 columns) and the dual quaternion (real, dual) of its rigid part. 16384 texels (the GL 4.5 minimum
//! texture width that Mesa and NVIDIA give) hold [`MAX_BONES`] joints.
//!
//! Error of the quantisation: for a vertex `p` with weights `w` (after step 1) and quantised weights `w'`,
//! `sum (w'_i - w_i) = 0`, so `|p'_LBS - p_LBS| = |sum (w'_i - w_i) (M_i p - M_0 p)|
//! <= (sum |w'_i - w_i|) * max_i |M_i p - M_0 p|`, with `sum |w'_i - w_i| < 4 / 255`: zero where the joints
//! agree (rigid parts, bind pose) and largest at joints bent far apart. [`quantisation_bound`] computes the
//! bound; tests check it on wasp under its walk.

use glam::{Mat4, Vec3};

use crate::deform::{DualQuat, normal_matrix};
use crate::model::weights::{strongest_four, strongest_four_of};
use crate::model::{Weights, WeightsError};

/// Influences per vertex on the GPU.
pub const MAX_INFLUENCES: usize = 4;
/// Texels of the bone texture per joint: matrix (4), normal matrix (3), dual quaternion (2).
pub const TEXELS_PER_BONE: usize = 9;
/// Width of the bone texture in texels (one row).
pub const BONE_TEXTURE_WIDTH: usize = 16384;
/// Joints the bone texture can hold.
pub const MAX_BONES: usize = BONE_TEXTURE_WIDTH / TEXELS_PER_BONE;

/// Joint indices of the packed vertices: bytes up to 256 joints, else 16-bit.
#[derive(Clone, Debug, PartialEq)]
pub enum JointIndices {
    U8(Vec<[u8; 4]>),
    U16(Vec<[u16; 4]>),
}

/// The per-vertex skinning data as the GPU gets it.
#[derive(Clone, Debug, PartialEq)]
pub struct PackedSkinning {
    pub joints: JointIndices,
    /// Quantised weights, summing to 255 on every weighted vertex, strongest first.
    pub weights: Vec<[u8; 4]>,
}

impl PackedSkinning {
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// Joint of slot `k` of vertex `v`.
    pub fn joint(&self, v: usize, k: usize) -> u16 {
        match &self.joints {
            JointIndices::U8(j) => j[v][k] as u16,
            JointIndices::U16(j) => j[v][k],
        }
    }

    /// Bytes per vertex on the GPU (indices and weights).
    pub fn bytes_per_vertex(&self) -> usize {
        match self.joints {
            JointIndices::U8(_) => 8,
            JointIndices::U16(_) => 12,
        }
    }

    /// The weights the GPU uses, as checked [`Weights`] (`byte / 255`, zero slots dropped, rows strongest
    /// first): the CPU reference for GPU-vs-CPU tests.
    pub fn dequantised(&self) -> Result<Weights, WeightsError> {
        let mut offsets = Vec::with_capacity(self.len() + 1);
        offsets.push(0u32);
        let mut joints = Vec::with_capacity(self.len() * 2);
        let mut values = Vec::with_capacity(self.len() * 2);
        for v in 0..self.len() {
            for k in 0..MAX_INFLUENCES {
                let q = self.weights[v][k];
                if q > 0 {
                    joints.push(self.joint(v, k));
                    values.push(q as f32 / 255.0);
                }
            }
            offsets.push(values.len() as u32);
        }
        // Quantised rows sum to 255/255 up to f32 rounding, far inside the checked tolerance.
        Weights::normalized_csr(offsets, joints, values).map(|(w, _)| w)
    }
}

/// Quantise up to 4 weights summing to 1 to bytes summing to exactly 255 (largest remainder). All-zero input
/// gives all-zero bytes.
#[inline]
pub fn quantise(ws: &[f32; 4]) -> [u8; 4] {
    let total: f32 = ws.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return [0; 4];
    }
    let (mut floor, mut frac) = ([0u32; 4], [0f32; 4]);
    let (mut used, mut open) = (0u32, 0u32);
    for k in 0..4 {
        let scaled = (ws[k] / total * 255.0).clamp(0.0, 255.0);
        // The floor of a number in 0..=255 (PERF: `f32::floor` is a call into libm on the x86-64 baseline).
        floor[k] = u32::from(scaled as u8);
        frac[k] = scaled - floor[k] as f32;
        used += floor[k];
        // Slots that may take a missing unit: weighted, and below 255.
        open |= u32::from(ws[k] > 0.0 && floor[k] < 255) << k;
    }
    // The missing units number at most the influences (each floor loses less than one), so each slot gets at
    // most one: the largest fraction first, ties to the earlier slot. PERF: chosen one unit at a time (usually
    // one or two) rather than by sorting the four, and the bytes put together in a register: the sort's
    // mispredicted branches and a byte-wise array read back whole were most of a brush dab's packing.
    // `tests::quantise_by_sort` is the sorting form, and a test compares the two.
    let (mut missing, mut add) = (255u32.saturating_sub(used), 0u32);
    while missing > 0 && open != 0 {
        let mut best = 4;
        for k in 0..4 {
            if open >> k & 1 == 1 && (best == 4 || frac[k].total_cmp(&frac[best]).is_gt()) {
                best = k;
            }
        }
        add |= 1 << best;
        open &= !(1 << best);
        missing -= 1;
    }
    let packed = (0..4).fold(0u32, |acc, k| acc | (floor[k] + (add >> k & 1)) << (8 * k));
    packed.to_le_bytes()
}

/// One vertex's skinning data as the GPU gets it: 4 joints (widened to u16) and 4 weight bytes.
pub type PackedRow = ([u16; 4], [u8; 4]);

/// One vertex's 4 strongest joints and their quantised bytes.
pub fn pack_row(joints: &[u16], weights: &[f32]) -> PackedRow {
    let (js, ws, _) = strongest_four(joints, weights);
    (js, quantise(&ws))
}

/// [`pack_row`] of a row given as (joint, weight) pairs (a brush stroke's rows, packed as they change).
pub fn pack_pairs(row: impl IntoIterator<Item = (u16, f32)>) -> PackedRow {
    let (js, ws, _) = strongest_four_of(row);
    (js, quantise(&ws))
}

/// The runs of `vertices` (ascending) packed for upload: runs of nearby vertices go up together (a vertex at most
/// [`RUN_GAP`] past a run's last joins it, the unchanged ones between packed and re-sent), so a brush's
/// scattered rows cost a few small uploads, not the whole mesh. Each run is its first vertex and its rows,
/// `row(v)` for every vertex from the first to the last. PERF: on one thread: spreading a dab's few thousand
/// rows over rayon's threads made the dab slower (waking them costs more than the packing).
pub fn pack_runs(vertices: &[u32], row: impl Fn(u32) -> PackedRow) -> Vec<(usize, Vec<PackedRow>)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < vertices.len() {
        let start = vertices[i];
        let mut end = start;
        while i < vertices.len() && vertices[i] <= end.saturating_add(RUN_GAP) {
            end = end.max(vertices[i]);
            i += 1;
        }
        runs.push((start as usize, (start..=end).map(&row).collect()));
    }
    runs
}

/// How far past a run's last vertex the next may lie and still join the run ([`pack_runs`]).
pub const RUN_GAP: u32 = 64;

/// Pack `weights` (or nothing: every vertex unweighted) for `vertex_count` vertices of a skeleton with
/// `joint_count` joints.
pub fn pack_weights(weights: Option<&Weights>, vertex_count: usize, joint_count: usize) -> PackedSkinning {
    let wide = joint_count > 256;
    let mut j8 = Vec::new();
    let mut j16 = Vec::new();
    let mut qs = Vec::with_capacity(vertex_count);
    for v in 0..vertex_count {
        let (js, q) = match weights.filter(|w| v < w.len()) {
            Some(w) => {
                let (rj, rw) = w.row(v);
                pack_row(rj, rw)
            }
            None => ([0; 4], [0; 4]),
        };
        if wide {
            j16.push(js);
        } else {
            j8.push(js.map(|j| j.min(255) as u8));
        }
        qs.push(q);
    }
    PackedSkinning {
        joints: if wide {
            JointIndices::U16(j16)
        } else {
            JointIndices::U8(j8)
        },
        weights: qs,
    }
}

/// The bone texture's texels for `skinning` matrices (`world_from_joint * inverse(bind)`), [`TEXELS_PER_BONE`]
/// per joint, at most [`MAX_BONES`] joints.
pub fn bone_texels(skinning: &[Mat4]) -> Vec<[f32; 4]> {
    let mut out = Vec::with_capacity(skinning.len().min(MAX_BONES) * TEXELS_PER_BONE);
    for m in skinning.iter().take(MAX_BONES) {
        for c in [m.x_axis, m.y_axis, m.z_axis, m.w_axis] {
            out.push(c.to_array());
        }
        let n = normal_matrix(m);
        for c in [n.x_axis, n.y_axis, n.z_axis] {
            out.push([c.x, c.y, c.z, 0.0]);
        }
        let dq = DualQuat::from_mat4(m);
        out.push(dq.real.to_array());
        out.push(dq.dual.to_array());
    }
    out
}

/// Upper bound of the distance between vertex `p` skinned with the 4 strongest weights and with their
/// quantised bytes (linear blend), by the formula in the module doc. `matrices` are the skinning matrices.
pub fn quantisation_bound(p: Vec3, joints: [u16; 4], exact: [f32; 4], bytes: [u8; 4], matrices: &[Mat4]) -> f32 {
    let at = |j: u16| matrices.get(j as usize).map_or(p, |m| m.transform_point3(p));
    let pivot = at(joints[0]);
    let mut dw = 0.0f32;
    let mut spread = 0.0f32;
    for k in 0..4 {
        if exact[k] > 0.0 || bytes[k] > 0 {
            dw += (bytes[k] as f32 / 255.0 - exact[k]).abs();
            spread = spread.max((at(joints[k]) - pivot).length());
        }
    }
    dw * spread
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`quantise`]'s hand-out of the missing units by sorting the slots by fraction (what it did first).
    fn quantise_by_sort(ws: &[f32; 4]) -> [u8; 4] {
        let total: f32 = ws.iter().sum();
        if total.is_nan() || total <= 0.0 {
            return [0; 4];
        }
        let (mut q, mut frac, mut used) = ([0u8; 4], [0f32; 4], 0u32);
        for k in 0..4 {
            let scaled = (ws[k] / total * 255.0).clamp(0.0, 255.0);
            q[k] = scaled as u8;
            frac[k] = scaled - f32::from(q[k]);
            used += q[k] as u32;
        }
        let mut missing = 255u32.saturating_sub(used);
        let mut order = [0usize, 1, 2, 3];
        order.sort_by(|&a, &b| frac[b].total_cmp(&frac[a]).then(a.cmp(&b)));
        for k in order {
            if missing > 0 && ws[k] > 0.0 && q[k] < 255 {
                q[k] += 1;
                missing -= 1;
            }
        }
        q
    }

    #[test]
    fn quantise_hands_out_units_as_sorting_by_fraction_does() {
        let mut seed = 11u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 40) as u32
        };
        // Ties (equal weights, equal fractions), zeros, one to four influences, unnormalised rows.
        let mut cases = vec![
            [0.25f32; 4],
            [0.5, 0.5, 0.0, 0.0],
            [1.0 / 3.0; 4],
            [0.0, 0.5, 0.0, 0.5],
            [1.0, 1.0, 1.0, 0.0],
        ];
        for _ in 0..200_000 {
            let n = 1 + next() as usize % 4;
            let mut ws = [0f32; 4];
            for w in ws.iter_mut().take(n) {
                // Coarse values often tie.
                let coarse = next() % 2 == 0;
                *w = if coarse {
                    (next() % 8) as f32 / 8.0
                } else {
                    next() as f32 / (1u32 << 24) as f32
                };
            }
            cases.push(ws);
        }
        for ws in cases {
            assert_eq!(quantise(&ws), quantise_by_sort(&ws), "{ws:?}");
        }
    }

    #[test]
    fn runs_split_at_gaps_longer_than_run_gap_and_pack_every_vertex_between() {
        // 3, 5 and 5 + RUN_GAP = 69 are one run; 69 + RUN_GAP + 1 = 134 starts another.
        let runs = pack_runs(&[3, 5, 69, 134, 135], |v| ([v as u16, 0, 0, 0], [255, 0, 0, 0]));
        let spans: Vec<(usize, usize)> = runs.iter().map(|(s, rows)| (*s, rows.len())).collect();
        assert_eq!(spans, vec![(3, 67), (134, 2)]);
        for (start, rows) in &runs {
            for (k, row) in rows.iter().enumerate() {
                assert_eq!(row.0[0] as usize, start + k);
            }
        }
        assert!(pack_runs(&[], |_| ([0; 4], [0; 4])).is_empty());
    }

    #[test]
    fn quantised_weights_sum_to_255_and_stay_within_one_unit() {
        // Hand-worked: 0.5, 0.3, 0.2 -> 127.5, 76.5, 51.0 -> floors 127, 76, 51 (254), one unit missing, the
        // largest fractions are 0.5 (slot 0) and 0.5 (slot 1): the earlier slot gets it.
        assert_eq!(quantise(&[0.5, 0.3, 0.2, 0.0]), [128, 76, 51, 0]);
        assert_eq!(quantise(&[1.0, 0.0, 0.0, 0.0]), [255, 0, 0, 0]);
        assert_eq!(quantise(&[0.25; 4]), [64, 64, 64, 63]);
        assert_eq!(quantise(&[0.0; 4]), [0; 4]);
        let mut seed = 7u64;
        for _ in 0..10_000 {
            let mut ws = [0f32; 4];
            let n = 1 + (seed % 4) as usize;
            for w in ws.iter_mut().take(n) {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                *w = ((seed >> 40) as f32 / (1u64 << 24) as f32).max(1e-4);
            }
            let s: f32 = ws.iter().sum();
            ws.iter_mut().for_each(|w| *w /= s);
            let q = quantise(&ws);
            assert_eq!(q.iter().map(|&b| b as u32).sum::<u32>(), 255, "{ws:?} -> {q:?}");
            for k in 0..4 {
                assert!(
                    (q[k] as f32 / 255.0 - ws[k]).abs() < 1.0 / 255.0 + 1e-6,
                    "{ws:?} -> {q:?}"
                );
                if ws[k] == 0.0 {
                    assert_eq!(q[k], 0);
                }
            }
        }
    }

    #[test]
    fn packing_uses_wide_indices_past_256_joints_and_dequantises() {
        let w = Weights::new(vec![0, 2, 2, 3], vec![300, 4, 9], vec![0.75, 0.25, 1.0]).expect("weights");
        let p = pack_weights(Some(&w), 3, 301);
        assert!(matches!(p.joints, JointIndices::U16(_)));
        assert_eq!(p.bytes_per_vertex(), 12);
        assert_eq!(p.joint(0, 0), 300);
        assert_eq!(p.weights[0], [191, 64, 0, 0]);
        assert_eq!(p.weights[1], [0; 4]);
        let d = p.dequantised().expect("valid");
        assert_eq!(d.row(0).0, &[300, 4]);
        assert!(d.row(1).0.is_empty());
        let narrow = pack_weights(Some(&w), 3, 256);
        assert_eq!(narrow.bytes_per_vertex(), 8);
    }

    #[test]
    fn bone_texels_hold_matrix_normal_matrix_and_dual_quaternion() {
        let m = Mat4::from_rotation_translation(glam::Quat::from_rotation_z(0.7), Vec3::new(1.0, 2.0, 3.0));
        let t = bone_texels(&[Mat4::IDENTITY, m]);
        assert_eq!(t.len(), 2 * TEXELS_PER_BONE);
        assert_eq!(t[9 + 3], [1.0, 2.0, 3.0, 1.0]);
        let dq = DualQuat::from_mat4(&m);
        assert_eq!(t[9 + 7], dq.real.to_array());
        assert!(
            (t[9 + 4][0] - m.x_axis.x).abs() < 1e-6,
            "rigid: normal matrix equals the rotation"
        );
    }
}
