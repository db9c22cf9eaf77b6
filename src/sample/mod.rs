//! Sample rigs: a skeleton and a bound, weighted skin made from nothing, for tests, benchmarks and demos.
//!
//! [`make_sample`] builds one of three rigs ([`SampleKind`]): a straight four-joint `Tube`, an `Arm` with a
//! palm and three close fingers, and a biped-ish `Creature` whose arms hang 0.05 units beside its torso. The
//! skeleton's frames are aligned with the world in the zero pose (every rotation zero), and the mesh is built
//! in that pose; the skin's bindings are `world_from_joint(&skeleton, &Pose::zero(&skeleton))`.
//!
//! Geometry. Every part of a mesh is a closed tube around a spine: the polyline through a chain of joint
//! pivots j_0..j_n, optionally extended before j_0 and beyond j_n (the leaf part), with each bend rounded by
//! a circular arc. A point of the tube is `c(s) + r(s) e(s, θ)`, where `c(s)` is the spine at arc length s,
//! `e` the unit radial direction of a parallel-transported frame, and `r(s)` a radius interpolated with
//! smoothstep between knots at the spine's ends and pivots. Both ends are closed by hemispheres whose rings
//! shrink to a pole vertex. Normals are the surface's analytic unit normals, `normalize((1 - r κ·e) e - r'(s)
//! T)` on the tube (T the tangent, κ the curvature vector) and radial on the caps. Triangles are
//! counter-clockwise seen from outside, and each part is a closed, consistently oriented manifold. Parts may
//! interpenetrate at joints, but the fingers keep a gap of a third of their radius between them.
//!
//! Weights. For a part whose spine follows joints j_0..j_n with pivots at arc lengths s_0 < s_1 < ... < s_n
//! (for a rounded bend, the middle of its arc), a vertex of a ring at arc length s (a cap vertex or pole:
//! s of the ring the cap closes) gets:
//! - inside the blend window of an interior pivot k >= 1, |s - s_k| < h with h = 0.25 * min(s_k - s_{k-1},
//!   s_{k+1} - s_k) (s_{n+1} being the spine's end; the last pivot has a window only when a leaf part
//!   follows it): with t = smoothstep((s - (s_k - h)) / (2h)), smoothstep(x) = x*x*(3-2x) on x clamped to
//!   [0, 1], weight 1-t on j_{k-1} and t on j_k;
//! - elsewhere weight 1 on j_k for the k with s_k <= s < s_{k+1}; j_0 before s_1 (including any part before
//!   s_0), j_n from s_n on (the leaf part).
//!
//! Zero weights are dropped, so each row has 1 or 2 influences and sums to 1.
//!
//! Vertex count. A target T = max(`vertices`, 300) (at most 2^27) is met by choosing an edge length e: each
//! part gets `S = max(8, round(2π r_max / e))` segments around, `round(L / e) + 1` rings along its spine of
//! length L, and `max(2, round(π r_end / (2e)))` ring steps per cap, for `S * rings + 2` vertices. The count
//! falls as e grows, so e is found by bisection; then the part with the most segments gets rings added or
//! removed to come within S/2 of T. The result is checked to lie in [0.9 T, 1.1 T] (in practice it is
//! within a fraction of a percent) and the function fails otherwise.
//!
//! Determinism: no randomness, no threads, no hashing; the same kind and target give bit-identical output.
//!
//! Where things are: `rigs` (the tube, arm and creature: joints and the tubes around them), `spine` (a tube's
//! spine: arcs, frames, radii, weights along it), `tube` (each tube's resolution for the target, and its
//! vertices, normals, weights and triangles), `walk` ([`walk_clip`]), `chain` ([`chain_tube`], for benchmarks).

mod chain;
mod rigs;
mod spine;
mod tube;
mod walk;

use std::ops::Range;

use crate::model::skeleton::{Pose, Skeleton, world_from_joint};
use crate::model::{Skin, Weights};
use rigs::{bone_boxes, rest_positions, rig};
use spine::Spine;
use tube::{MeshBuf, TubePlan, emit_tube, plan};

pub use chain::chain_tube;
pub use walk::walk_clip;

/// Targets below this are raised to it.
const MIN_VERTICES: usize = 300;
/// Targets above this are refused (indices must fit in u32 with room to spare).
const MAX_VERTICES: usize = 1 << 27;

/// Refuse a vertex target above [`MAX_VERTICES`].
fn check_target(vertices: usize) -> Result<(), String> {
    if vertices > MAX_VERTICES {
        return Err(format!(
            "{vertices} vertices is more than the {MAX_VERTICES} a sample may have"
        ));
    }
    Ok(())
}

/// Which sample rig to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// Four joints (root, joint1, joint2, end) along +Y in one tube of radius 0.25, y from -0.25 to 3.5.
    Tube,
    /// Shoulder, elbow, wrist and hand along +X, with three two-joint fingers; one tube for the arm, one for
    /// the palm and one per finger.
    Arm,
    /// A biped: pelvis to head, two hanging arms and two legs with feet; one tube per chain.
    Creature,
}

impl SampleKind {
    /// Every kind, in declaration order.
    pub const ALL: [SampleKind; 3] = [SampleKind::Tube, SampleKind::Arm, SampleKind::Creature];

    /// The lower-case name: `tube`, `arm` or `creature`.
    pub fn name(self) -> &'static str {
        match self {
            SampleKind::Tube => "tube",
            SampleKind::Arm => "arm",
            SampleKind::Creature => "creature",
        }
    }

    /// The kind with this name, ignoring ASCII case and surrounding white space.
    pub fn from_name(s: &str) -> Option<Self> {
        let s = s.trim();
        Self::ALL.into_iter().find(|k| k.name().eq_ignore_ascii_case(s))
    }
}

/// A generated rig: the skeleton and its skin, with weights and bindings.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub skeleton: Skeleton,
    pub skin: Skin,
}

/// Make a sample rig of about `vertices` vertices.
///
/// `vertices` is a target: with T = max(`vertices`, 300), the result has between 0.9 T and 1.1 T vertices
/// (see the module documentation for how). Fails only for a target above 2^27.
pub fn make_sample(kind: SampleKind, vertices: usize) -> Result<Sample, String> {
    build(kind, vertices).map(|(sample, _)| sample)
}

/// The sample and the vertex range of each part (tube), in order.
fn build(kind: SampleKind, vertices: usize) -> Result<(Sample, Vec<Range<usize>>), String> {
    check_target(vertices)?;
    let target = vertices.max(MIN_VERTICES);
    let mut rig = rig(kind);
    let rest = rest_positions(&rig.joints);
    let spines: Vec<Spine> = rig.tubes.iter().map(|t| Spine::new(t, &rest)).collect();
    for (j, bounds) in bone_boxes(&rig.tubes, &rest).into_iter().enumerate() {
        if let (Some((lo, hi)), Some(joint)) = (bounds, rig.joints.get_mut(j)) {
            joint.box_min = Some(lo);
            joint.box_max = Some(hi);
        }
    }
    let skeleton = Skeleton::new(rig.joints).map_err(|e| format!("sample skeleton: {e}"))?;
    let bindings = world_from_joint(&skeleton, &Pose::zero(&skeleton));

    let plans = plan(&spines, target)?;
    let mut mesh = MeshBuf::with_capacity(
        plans.iter().map(TubePlan::vertices).sum(),
        plans.iter().map(TubePlan::triangles).sum(),
    );
    let mut parts = Vec::with_capacity(plans.len());
    for (spine, plan) in spines.iter().zip(&plans) {
        let start = mesh.positions.len();
        emit_tube(spine, plan, &mut mesh);
        parts.push(start..mesh.positions.len());
    }

    let weights = Weights::new(mesh.offsets, mesh.joints, mesh.values).map_err(|e| format!("sample weights: {e}"))?;
    let mut skin = Skin::new(mesh.positions, Some(mesh.normals), mesh.triangles)
        .and_then(|s| s.with_weights(Some(weights)))
        .map_err(|e| format!("sample skin: {e}"))?;
    skin.set_bindings(Some(bindings))
        .map_err(|e| format!("sample bindings: {e}"))?;
    Ok((Sample { skeleton, skin }, parts))
}

#[cfg(test)]
#[path = "sample_tests.rs"]
mod tests;
