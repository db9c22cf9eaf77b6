//! [`bind_and_clean`]: a bind followed by its clean-up, the one path that `skinbind bind`, `skinbind fit --bind`
//! and the editor's Bind Skin share.
//!
//! The clean-up's welded mesh graph needs no weights, so it is built on the other core while the bind runs (the
//! geodesic bind's search over the solid runs on one thread) and handed to [`clean_on`]. The weights are those of
//! [`bind_weights`] followed by [`super::clean::clean`], bit for bit; the tests compare the two.

use std::time::Instant;

use glam::{Mat4, Vec3};

use super::clean::{CleanError, CleanOptions, CleanReport, clean_on};
use super::graph::MeshGraph;
use crate::bind::{BindError, BindOptions, BindReport, bind_weights};
use crate::model::{Skeleton, Weights};

/// What [`bind_and_clean`] runs.
#[derive(Clone, Debug, PartialEq)]
pub struct BindAndClean {
    pub bind: BindOptions,
    /// The clean-up after the bind.
    pub clean: CleanOptions,
    /// Bind a second time without the joints the first bind warned look like controls ([`BindReport::controls`]),
    /// when it warned of any (`skinbind bind --exclude-controls`).
    pub exclude_controls: bool,
}

impl BindAndClean {
    /// `bind`, then the default clean-up after it: [`CleanOptions::after_binding`] at the bind's influence limit
    /// (1 when rigid).
    pub fn with_default_clean_up(bind: BindOptions) -> Self {
        let k = if bind.rigid { 1 } else { bind.max_influences };
        Self {
            clean: CleanOptions::after_binding(k, bind.method),
            bind,
            exclude_controls: false,
        }
    }
}

/// What [`bind_and_clean`] made.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundAndCleaned {
    pub weights: Weights,
    /// The bind's report (the second bind's, when controls were excluded).
    pub bind: BindReport,
    pub clean: CleanReport,
    /// Milliseconds the mesh graph took, built beside the bind; `None` when the clean-up walks no graph.
    pub graph_ms: Option<f64>,
    /// The joints the first bind warned look like controls, left out by a second bind
    /// ([`BindAndClean::exclude_controls`]), ascending; empty when it bound once.
    pub rebound_without: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BindAndCleanError {
    #[error(transparent)]
    Bind(#[from] BindError),
    #[error(transparent)]
    Clean(#[from] CleanError),
}

/// Bind `positions` (with `triangles`) to `skel` at `bind_world` (bind-pose world matrices) by `opts.bind`, then
/// run `opts.clean` over the weights. `progress` is the bind's ([`bind_weights`]), called from any thread.
pub fn bind_and_clean(
    skel: &Skeleton,
    bind_world: &[Mat4],
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    opts: &BindAndClean,
    progress: &(dyn Fn(f32) + Sync),
) -> Result<BoundAndCleaned, BindAndCleanError> {
    let bind = |o: &BindOptions| bind_weights(skel, bind_world, positions, triangles, o, progress);
    let (bound, graph) = rayon::join(
        || bind(&opts.bind),
        || {
            opts.clean.needs_graph().then(|| {
                let t = Instant::now();
                let g = MeshGraph::new(positions, triangles);
                (g, t.elapsed().as_secs_f64() * 1e3)
            })
        },
    );
    let (mut weights, mut report) = bound?;
    let mut rebound_without = Vec::new();
    if opts.exclude_controls && !report.controls.is_empty() {
        rebound_without = report.controls.clone();
        (weights, report) = bind(&opts.bind.without(rebound_without.iter().copied(), skel.len()))?;
    }
    let (weights, clean) = clean_on(
        graph.as_ref().map(|(g, _)| g),
        positions,
        triangles,
        skel,
        bind_world,
        &weights,
        &opts.clean,
    )?;
    Ok(BoundAndCleaned {
        weights,
        bind: report,
        clean,
        graph_ms: graph.map(|(_, ms)| ms),
        rebound_without,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adjust::clean::clean;
    use crate::bind::BindMethod;
    use crate::sample::chain_tube;

    /// The reference: [`bind_weights`], then [`clean`] building its own graph.
    fn one_after_the_other(
        s: &crate::sample::Sample,
        bind: &BindOptions,
        post: &CleanOptions,
    ) -> (Weights, BindReport, CleanReport) {
        let (p, t) = (s.skin.positions(), s.skin.triangles());
        let world = s.skin.bindings().unwrap();
        let (w, rep) = bind_weights(&s.skeleton, world, p, t, bind, &|_| {}).unwrap();
        let (w, cleaned) = clean(p, t, &s.skeleton, world, &w, post).unwrap();
        (w, rep, cleaned)
    }

    fn run(s: &crate::sample::Sample, opts: &BindAndClean) -> BoundAndCleaned {
        let (p, t) = (s.skin.positions(), s.skin.triangles());
        bind_and_clean(&s.skeleton, s.skin.bindings().unwrap(), p, t, opts, &|_| {}).unwrap()
    }

    fn step_names(r: &CleanReport) -> Vec<&str> {
        r.steps.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn the_default_path_gives_the_weights_of_binding_then_cleaning() {
        let s = chain_tube(4, 3000).unwrap();
        for method in [BindMethod::Geodesic, BindMethod::Line] {
            for rigid in [false, true] {
                let bind = BindOptions {
                    rigid,
                    ..BindOptions::for_method(method)
                };
                let opts = BindAndClean::with_default_clean_up(bind.clone());
                let k = if rigid { 1 } else { 4 };
                assert_eq!(opts.clean, CleanOptions::after_binding(k, method));
                let got = run(&s, &opts);
                let (w, rep, cleaned) = one_after_the_other(&s, &bind, &opts.clean);
                assert!(got.weights == w, "{method:?} rigid {rigid}");
                assert_eq!(got.bind.warnings, rep.warnings);
                assert_eq!(got.clean.soften, cleaned.soften);
                assert_eq!(got.clean.rogue, cleaned.rogue);
                // The graph was built beside the bind: the clean-up did not build it again.
                assert!(got.graph_ms.is_some());
                assert_eq!(step_names(&cleaned)[0], "mesh graph");
                assert_eq!(step_names(&got.clean), step_names(&cleaned)[1..]);
                assert!(got.rebound_without.is_empty());
            }
        }
        // A clean-up that walks no graph gets none built.
        let bind = BindOptions::for_method(BindMethod::Line);
        let opts = BindAndClean {
            clean: CleanOptions::default(),
            ..BindAndClean::with_default_clean_up(bind.clone())
        };
        let got = run(&s, &opts);
        assert_eq!(got.graph_ms, None);
        assert!(got.weights == one_after_the_other(&s, &bind, &CleanOptions::default()).0);
    }

    #[test]
    fn excluding_controls_binds_again_without_the_joints_warned_about() {
        let mut s = chain_tube(4, 3000).unwrap();
        s.skeleton.joint_mut(3).unwrap().set_name("ik_target").unwrap();
        let bind = BindOptions {
            bind_controls: true,
            ..BindOptions::default()
        };
        let opts = BindAndClean {
            exclude_controls: true,
            ..BindAndClean::with_default_clean_up(bind.clone())
        };
        let got = run(&s, &opts);
        assert_eq!(got.rebound_without, vec![3]);
        let (w, rep, _) = one_after_the_other(&s, &bind.without([3], 4), &opts.clean);
        assert!(got.weights == w);
        assert_eq!(got.bind.warnings, rep.warnings);
        assert!((0..w.len()).all(|v| !w.row(v).0.contains(&3)));
        // Without the flag the control is bound, and warned about.
        let once = run(
            &s,
            &BindAndClean {
                exclude_controls: false,
                ..opts
            },
        );
        assert!(once.rebound_without.is_empty());
        assert_eq!(once.bind.controls, vec![3]);
        assert!((0..once.weights.len()).any(|v| once.weights.row(v).0.contains(&3)));
    }
}
