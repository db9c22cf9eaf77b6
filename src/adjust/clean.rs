//! The clean-up pipeline: the operations of this module in a fixed order, each optional and timed, shared by
//! `skinbind clean`, by `skinbind bind` after binding, and by the editor.
//!
//! Order: mirror, smooth, rogue removal, soften, prune, limit, normalise ("bind, smooth, rogue, soften, prune,
//! limit, normalise" when it follows binding, which does not mirror). Mirroring comes first so that the later steps work on
//! symmetric weights (and keep them so on a symmetric mesh, up to ties). Smoothing spreads weight, so rogue removal and pruning come after it and clear what it
//! spread too far; limiting comes after pruning so that the kept influences are the meaningful ones; the final
//! normalisation makes every vertex sum to 1 around the locks.

use std::time::Instant;

use glam::{Mat4, Vec3};

use super::graph::MeshGraph;
use super::mirror::{JointMirror, MirrorMode, MirrorReport, Plane, default_tolerance, mirror_joints, mirror_weights};
use super::ops::{RowReport, limit, normalise, prune};
use super::rogue::{RogueError, RogueReport, remove_rogue};
use super::rows::Locks;
use super::smooth::{SmoothError, SmoothOptions, SmoothReport, smooth};
use super::soften::{SoftenPlan, SoftenReport, soften_with};
use crate::bind::BindMethod;
use crate::bind::bones::bone_segments;
use crate::model::{Skeleton, Weights};

/// Default threshold of rogue removal: weights above it make a joint's regions. Lower thresholds let faint
/// blends bridge an island to its main region (0.01 and 0.05 find none of the eight one-vertex islands that 0.1
/// finds on the wasp2 automatic weights; docs/cleanup.md).
pub const ROGUE_THRESHOLD: f32 = 0.1;

/// Mirroring settings.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MirrorOptions {
    pub plane: Plane,
    pub mode: MirrorMode,
    /// How far a vertex's mirror image may be from its partner, in world units; `None`: 1e-4 of the mesh's
    /// bounding-box diagonal.
    #[serde(default)]
    pub tolerance: Option<f32>,
    /// The same for joint pivots (position pairing); `None`: 1e-3 of the bind pose's pivot bounding-box diagonal
    /// (of the mesh's when the pivots all coincide).
    #[serde(default)]
    pub joint_tolerance: Option<f32>,
}

/// Which clean-up steps run, with their settings; `None` skips a step. Saved with the document.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CleanOptions {
    pub mirror: Option<MirrorOptions>,
    pub smooth: Option<SmoothOptions>,
    /// Rogue removal and its threshold.
    pub rogue: Option<f32>,
    /// Soften the weights over a geometric radius ([`super::soften`]); after rogue removal, so that an island
    /// is removed before softening could join it to its joint's main region.
    pub soften: bool,
    /// Prune unlocked weights below this.
    pub prune: Option<f32>,
    /// Keep at most this many influences per vertex.
    pub max_influences: Option<usize>,
    /// Normalise at the end (on by default; every other step already keeps sums at 1).
    pub normalise: bool,
    /// Joints no step may change.
    pub locks: Locks,
}

impl Default for CleanOptions {
    /// Nothing but the final normalisation.
    fn default() -> Self {
        Self {
            mirror: None,
            smooth: None,
            rogue: None,
            soften: false,
            prune: None,
            max_influences: None,
            normalise: true,
            locks: Locks::none(),
        }
    }
}

impl CleanOptions {
    /// What `skinbind bind` runs after binding by `method`, by default: rogue removal at [`ROGUE_THRESHOLD`],
    /// softening after the geodesic method (unless one influence a vertex leaves no blend to soften), the limit to
    /// `max_influences`, normalisation. Measured to move no shared model away from its artist weights
    /// (docs/cleanup.md). After the other methods softening stays off: after `line` it moved wasp2 away (L1
    /// 0.1081 to 0.1083), and those methods keep their results.
    pub fn after_binding(max_influences: usize, method: BindMethod) -> Self {
        Self {
            rogue: Some(ROGUE_THRESHOLD),
            soften: method == BindMethod::Geodesic && max_influences > 1,
            max_influences: Some(max_influences),
            ..Self::default()
        }
    }

    /// Whether a step walks the welded mesh graph (smoothing, rogue removal, softening), which [`clean_on`] can
    /// take built.
    pub fn needs_graph(&self) -> bool {
        self.smooth
            .as_ref()
            .is_some_and(|s| s.iterations > 0 && s.strength > 0.0)
            || self.rogue.is_some()
            || self.soften
    }

    /// Whether any step would run.
    pub fn any(&self) -> bool {
        self.mirror.is_some()
            || self.smooth.as_ref().is_some_and(|s| s.iterations > 0)
            || self.rogue.is_some()
            || self.soften
            || self.prune.is_some()
            || self.max_influences.is_some()
            || self.normalise
    }
}

/// What the pipeline did, step by step.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct CleanReport {
    /// (step, milliseconds), in order; building the mesh graph counts as its own step.
    pub steps: Vec<(String, f64)>,
    pub mirror: Option<MirrorReport>,
    /// The joint pairs mirroring used (with how each was found, joints left unpaired, name pairs whose pivots
    /// do not mirror).
    pub mirror_joints: Option<JointMirror>,
    pub smooth: Option<SmoothReport>,
    pub rogue: Option<RogueReport>,
    pub soften: Option<SoftenReport>,
    pub prune: Option<RowReport>,
    pub limit: Option<RowReport>,
    pub normalise: Option<RowReport>,
    pub total_ms: f64,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CleanError {
    #[error(transparent)]
    Smooth(#[from] SmoothError),
    #[error(transparent)]
    Rogue(#[from] RogueError),
    #[error("prune threshold {0} is not in [0, 1)")]
    Prune(f32),
    #[error("max influences must be at least 1")]
    NoInfluences,
    #[error("the weights have {weights} vertices, the mesh {mesh}")]
    Count { weights: usize, mesh: usize },
    /// [`clean_on`] was handed the graph of another mesh.
    #[error("the mesh graph given has {graph} vertices, the mesh {mesh}: it was built from another mesh")]
    GraphCount { graph: usize, mesh: usize },
}

/// Run the steps of `opts` over `weights` on the mesh (`positions`, `triangles`) bound to `skel` at `bind_world`
/// (bind-pose world matrices; rogue removal measures distances to the bones there).
pub fn clean(
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    skel: &Skeleton,
    bind_world: &[Mat4],
    weights: &Weights,
    opts: &CleanOptions,
) -> Result<(Weights, CleanReport), CleanError> {
    clean_on(None, positions, triangles, skel, bind_world, weights, opts)
}

/// [`clean`] with the mesh's graph already built (`MeshGraph::new(positions, triangles)`), when given: `skinbind
/// bind` builds it on the other core while the bind runs (the bind's search over the solid runs on one thread).
pub fn clean_on(
    graph: Option<&MeshGraph>,
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    skel: &Skeleton,
    bind_world: &[Mat4],
    weights: &Weights,
    opts: &CleanOptions,
) -> Result<(Weights, CleanReport), CleanError> {
    let t_all = Instant::now();
    if let Some(g) = graph.filter(|g| g.vertices() != positions.len()) {
        return Err(CleanError::GraphCount {
            graph: g.vertices(),
            mesh: positions.len(),
        });
    }
    if weights.len() != positions.len() {
        return Err(CleanError::Count {
            weights: weights.len(),
            mesh: positions.len(),
        });
    }
    if let Some(t) = opts.prune.filter(|t| !(0.0..1.0).contains(t)) {
        return Err(CleanError::Prune(t));
    }
    if opts.max_influences == Some(0) {
        return Err(CleanError::NoInfluences);
    }
    let mut report = CleanReport::default();
    let step = |name: &str, t: Instant, report: &mut CleanReport| {
        report.steps.push((name.to_string(), t.elapsed().as_secs_f64() * 1e3));
    };
    let locks = &opts.locks;
    let mut w = weights.clone();
    if let Some(m) = &opts.mirror {
        let t = Instant::now();
        let joint_tol = m.joint_tolerance.unwrap_or_else(|| {
            let pivots: Vec<Vec3> = bind_world.iter().map(|b| b.w_axis.truncate()).collect();
            let size = crate::model::skin::bounds(&pivots).map_or(0.0, |(lo, hi)| (hi - lo).length());
            let size = if size > 0.0 {
                size
            } else {
                crate::model::skin::bounds(positions).map_or(0.0, |(lo, hi)| (hi - lo).length())
            };
            1e-3 * size
        });
        let pairs = mirror_joints(skel, bind_world, m.plane, joint_tol);
        let tol = m.tolerance.unwrap_or_else(|| default_tolerance(positions));
        let (out, r) = mirror_weights(positions, &w, &pairs, m.plane, m.mode, tol, locks);
        w = out;
        report.mirror = Some(r);
        report.mirror_joints = Some(pairs);
        step("mirror", t, &mut report);
    }
    let smoothing = opts.smooth.as_ref().filter(|s| s.iterations > 0 && s.strength > 0.0);
    let built = match graph {
        Some(_) => None,
        None => opts.needs_graph().then(|| {
            let t = Instant::now();
            let g = MeshGraph::new(positions, triangles);
            step("mesh graph", t, &mut report);
            g
        }),
    };
    let graph = &graph.or(built.as_ref()).filter(|_| opts.needs_graph());
    if let (Some(s), Some(g)) = (smoothing, graph) {
        let t = Instant::now();
        let (out, r) = smooth(g, triangles, &w, s, locks, None)?;
        w = out;
        report.smooth = Some(r);
        step("smooth", t, &mut report);
    }
    // The bones rogue removal and softening measure against.
    let segments = (opts.rogue.is_some() || opts.soften).then(|| bone_segments(skel, bind_world));
    // Softening's plan (each node's radius, the clusters) needs no weights: it is made beside rogue removal, whose
    // search for each joint's regions leaves a core idle; its time counts in the rogue step.
    let make_plan = |g: &MeshGraph, segments: &[_]| opts.soften.then(|| SoftenPlan::new(g, segments));
    let mut plan = None;
    if let (Some(threshold), Some(g), Some(segments)) = (opts.rogue, graph, &segments) {
        let t = Instant::now();
        let (rogue, made) = rayon::join(
            || remove_rogue(g, positions, &w, segments, threshold, locks),
            || make_plan(g, segments),
        );
        let (out, r) = rogue?;
        (w, plan) = (out, made);
        report.rogue = Some(r);
        step("rogue", t, &mut report);
    }
    if let (true, Some(g), Some(segments)) = (opts.soften, graph, &segments) {
        let t = Instant::now();
        let k = opts.max_influences.unwrap_or(crate::bind::geodesic::MAX_LABELS);
        let plan = plan.unwrap_or_else(|| SoftenPlan::new(g, segments));
        let (out, r) = soften_with(&plan, g, &w, k, locks);
        w = out;
        report.soften = Some(r);
        step("soften", t, &mut report);
    }
    if let Some(threshold) = opts.prune {
        let t = Instant::now();
        let (out, r) = prune(&w, threshold, locks);
        w = out;
        report.prune = Some(r);
        step("prune", t, &mut report);
    }
    if let Some(k) = opts.max_influences {
        let t = Instant::now();
        let (out, r) = limit(&w, k, locks);
        w = out;
        report.limit = Some(r);
        step("limit", t, &mut report);
    }
    if opts.normalise {
        let t = Instant::now();
        let (out, r) = normalise(&w, locks);
        w = out;
        report.normalise = Some(r);
        step("normalise", t, &mut report);
    }
    report.total_ms = t_all.elapsed().as_secs_f64() * 1e3;
    Ok((w, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::skel::read_skel;

    /// A unit square of two triangles, its vertices all weighted to joint 0 of a one-joint skeleton.
    fn square() -> (Vec<Vec3>, Vec<[u32; 3]>, Skeleton, Weights) {
        let p = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ];
        let t = vec![[0, 1, 2], [0, 2, 3]];
        let skel = read_skel("balljoint root { }".as_bytes(), None).unwrap().value;
        (p, t, skel, Weights::rigid(&[0; 4]))
    }

    #[test]
    fn a_graph_of_another_mesh_is_refused_as_such_not_as_a_weights_count() {
        let (p, t, skel, w) = square();
        let world = vec![Mat4::IDENTITY];
        let opts = CleanOptions::after_binding(4, BindMethod::Geodesic);
        let other = MeshGraph::new(&p[..3], &t[..1]);
        let got = clean_on(Some(&other), &p, &t, &skel, &world, &w, &opts);
        assert_eq!(got.map(|_| ()), Err(CleanError::GraphCount { graph: 3, mesh: 4 }));
        // The mesh's own graph is taken, and gives what building it inside does.
        let own = MeshGraph::new(&p, &t);
        let (given, _) = clean_on(Some(&own), &p, &t, &skel, &world, &w, &opts).unwrap();
        let (built, _) = clean(&p, &t, &skel, &world, &w, &opts).unwrap();
        assert_eq!(given, built);
    }
}
