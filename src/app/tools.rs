//! The Weights panel's whole-mesh operations: automatic binding and the clean-up steps (smooth, remove rogue
//! weights, prune, limit, normalise, mirror), the same library calls the CLI makes (`bind_and_clean`, `clean`).
//!
//! An operation runs on a worker thread over a copy of the document's rig ([`Job`]), so a 1M-vertex bind does
//! not freeze the window; when it finishes, the app records its result as one undoable edit
//! (`DocEdit::SetWeights`). Every operation respects the document's joint locks: the clean-up steps take them
//! directly, and a bind keeps the locked joints' weights and shares the rest among the others
//! ([`keep_locked`]). A bind uses the document's containment volumes and, when the skin has no bindings yet,
//! binds in the current pose and stores it as the bindings (as Maya's Bind Skin does).

use std::thread::JoinHandle;

use glam::Mat4;

use super::document::Document;
use crate::adjust::clean::{CleanOptions, MirrorOptions, ROGUE_THRESHOLD, clean};
use crate::adjust::mirror::{Axis, MirrorMode, Plane};
use crate::adjust::ops::keep_locked;
use crate::adjust::rows::Locks;
use crate::adjust::smooth::SmoothOptions;
use crate::adjust::{BindAndClean, bind_and_clean};
use crate::bind::{BindMethod, BindOptions, JointVolume, bind_weights};
use crate::model::{Skeleton, Skin, Weights};

use crate::model::Row;

/// One operation of the Weights panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightOp {
    Bind,
    Smooth,
    Rogue,
    Soften,
    Prune,
    Limit,
    Normalise,
    Mirror,
}

/// The panel's settings for the operations (view state: not undoable, not saved).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSettings {
    pub method: BindMethod,
    pub max_influences: usize,
    pub rigid: bool,
    /// Run the CLI's default clean-up (rogue removal, softening after the geodesic method, limit) after binding.
    pub clean_after_bind: bool,
    pub smooth: SmoothOptions,
    pub rogue: f32,
    pub prune: f32,
    pub limit: usize,
    pub mirror_axis: Axis,
    /// Copy the positive side onto the negative one (else the other way).
    pub mirror_from_positive: bool,
    /// Change only the selected vertices (when there are any).
    pub only_selected: bool,
    /// A weight table cell being dragged: (vertex, or None for the "All" row; joint; value so far).
    pub table_drag: Option<(Option<u32>, u16, f32)>,
}

impl Default for ToolSettings {
    fn default() -> Self {
        Self {
            method: BindMethod::default(),
            max_influences: 4,
            rigid: false,
            clean_after_bind: true,
            smooth: SmoothOptions::default(),
            rogue: ROGUE_THRESHOLD,
            prune: 0.01,
            limit: 4,
            mirror_axis: Axis::X,
            mirror_from_positive: true,
            table_drag: None,
            only_selected: false,
        }
    }
}

impl ToolSettings {
    /// Influences a bind keeps per vertex (1 when rigid).
    pub fn influences(&self) -> usize {
        if self.rigid { 1 } else { self.max_influences.max(1) }
    }

    /// The bind these settings ask for, with the document's containment volumes and deforming joints. Once the
    /// person has set a Deforms box (`chosen`), the boxes decide; until then the bind also leaves out what looks
    /// like a control (a master root outside the mesh; named controls start unticked), as the command line does.
    pub fn bind_options(&self, volumes: &[JointVolume], deform: &[bool], chosen: bool) -> BindOptions {
        BindOptions {
            method: self.method,
            max_influences: self.influences(),
            rigid: self.rigid,
            volumes: volumes.to_vec(),
            deform: deform.to_vec(),
            bind_controls: chosen,
            ..BindOptions::for_method(self.method)
        }
    }
}

/// A finished operation's result.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The history's name for it.
    pub name: String,
    pub weights: Weights,
    pub bindings: Vec<Mat4>,
    /// When the run was limited to a selection: those vertices (ascending) and their new rows; `weights` then
    /// holds the whole result for reference and only these rows are to be written.
    pub rows: Option<(Vec<u32>, Vec<Row>)>,
    /// One line for the status bar.
    pub summary: String,
    pub warnings: Vec<String>,
    /// Joints a bind warned look like controls (IK and pole targets, a master root outside the mesh).
    pub controls: Vec<usize>,
    /// Joints the bind left out as controls (they no longer deform).
    pub excluded: Vec<usize>,
}

/// What an operation reads: a copy of the document's rig.
#[derive(Clone, Debug)]
pub struct Input {
    pub skeleton: Skeleton,
    pub skin: Skin,
    pub bind_world: Vec<Mat4>,
    pub locks: Locks,
    pub volumes: Vec<JointVolume>,
    pub deform: Vec<bool>,
    /// Whether the person has set a Deforms box (`Document::deform_chosen`).
    pub deform_chosen: bool,
    /// Limit the change to these vertices (ascending); None for the whole skin.
    pub selection: Option<Vec<u32>>,
    /// The current pose, when a bind of the whole skin is made in it (the skin has no bindings for this
    /// skeleton): to say when the mesh holds its skeleton better at rest ([`crate::bind::bind_pose`]).
    pub unbound_pose: Option<crate::model::Pose>,
}

impl Input {
    /// The document's rig; an error names what is missing.
    pub fn of(doc: &Document, op: WeightOp, only_selected: bool) -> Result<Self, String> {
        let skin = doc.skin.as_ref().ok_or("open a skin first")?;
        if op != WeightOp::Bind && skin.weights().is_none() {
            return Err("the skin has no weights yet: bind it first".into());
        }
        let selection = (only_selected && !doc.selected_vertices.is_empty()).then(|| doc.selected_vertices.clone());
        if selection.is_some() && skin.weights().is_none() {
            return Err("the skin has no weights yet: bind all of it first".into());
        }
        Ok(Self {
            skeleton: doc.skeleton.clone(),
            skin: skin.clone(),
            // A selection keeps the rest of the skin's rows, so it must bind in the pose those rows were made
            // for: the bindings, or without them the skeleton file's pose (what skinning uses then).
            bind_world: match (&selection, skin.bindings()) {
                (Some(_), None) => {
                    crate::model::world_from_joint(&doc.skeleton, &crate::model::Pose::from_file(&doc.skeleton))
                }
                _ => doc.bind_world(),
            },
            locks: doc.locks.clone(),
            volumes: doc.volumes.clone(),
            deform: doc.deform.clone(),
            deform_chosen: doc.deform_chosen,
            // Bound in the current pose (as [`Document::bind_world`] decides), not a selection's file pose.
            unbound_pose: (selection.is_none() && skin.bindings().is_none_or(|b| b.len() != doc.skeleton.len()))
                .then(|| doc.pose.clone()),
            selection,
        })
    }
}

/// Run `op` (on the calling thread).
pub fn run(op: WeightOp, input: &Input, settings: &ToolSettings) -> Result<Outcome, String> {
    let skin = &input.skin;
    let (positions, triangles) = (skin.positions(), skin.triangles());
    let clean_with = |weights: &Weights, opts: CleanOptions| {
        clean(positions, triangles, &input.skeleton, &input.bind_world, weights, &opts).map_err(|e| e.to_string())
    };
    let with_locks = |opts: CleanOptions| CleanOptions {
        locks: input.locks.clone(),
        ..opts
    };
    let k = settings.influences();
    let (mut controls, mut excluded) = (Vec::new(), Vec::new());
    let (name, weights, summary, warnings) = match op {
        WeightOp::Bind => {
            let opts = settings.bind_options(&input.volumes, &input.deform, input.deform_chosen);
            let (world, skel) = (&input.bind_world, &input.skeleton);
            // The default clean-up builds its mesh graph beside the bind.
            let (mut w, rep, ms) = if settings.clean_after_bind {
                let job = BindAndClean::with_default_clean_up(opts);
                let done =
                    bind_and_clean(skel, world, positions, triangles, &job, &|_| {}).map_err(|e| e.to_string())?;
                let ms = done.bind.total_ms + done.clean.total_ms;
                (done.weights, done.bind, ms)
            } else {
                let (w, rep) =
                    bind_weights(skel, world, positions, triangles, &opts, &|_| {}).map_err(|e| e.to_string())?;
                let ms = rep.total_ms;
                (w, rep, ms)
            };
            if let Some(old) = skin.weights() {
                w = keep_locked(old, &w, &input.locks);
            }
            let summary = format!(
                "Bound {} vertices to {} joints ({}{}, at most {k} influences) in {ms:.1} ms",
                rep.vertices,
                rep.joints,
                rep.method,
                if rep.rigid { ", rigid" } else { "" },
            );
            controls = rep.controls;
            excluded = rep.excluded_controls;
            let mut warnings: Vec<String> = rep.warnings.iter().map(|w| in_editor_words(w)).collect();
            if let Some(pose) = &input.unbound_pose
                && let Some(fit) = crate::bind::bind_pose::rest_fits_better(&input.skeleton, pose, positions, triangles)
            {
                // First: it explains the joints left without weight that follow.
                let advice = "undo this bind (it sets the bind pose), choose Edit > Go to Rest Pose, then Bind Skin";
                warnings.insert(0, fit.warning("the current pose", advice));
            }
            (format!("bind ({})", rep.method), w, summary, warnings)
        }
        _ => {
            let old = skin.weights().ok_or("the skin has no weights yet: bind it first")?;
            let Some((opts, name)) = clean_step(op, settings) else {
                return Err("not a clean-up step".into());
            };
            let (w, r) = match (&input.selection, op) {
                // Smoothing a selection: the unselected vertices stay fixed and feed the selected ones.
                (Some(sel), WeightOp::Smooth) => {
                    let mut mask = vec![false; positions.len()];
                    for &v in sel {
                        if let Some(m) = mask.get_mut(v as usize) {
                            *m = true;
                        }
                    }
                    let t = std::time::Instant::now();
                    let graph = crate::adjust::graph::MeshGraph::new(positions, triangles);
                    let (w, rep) = crate::adjust::smooth::smooth(
                        &graph,
                        triangles,
                        old,
                        &settings.smooth,
                        &input.locks,
                        Some(&mask),
                    )
                    .map_err(|e| e.to_string())?;
                    let r = crate::adjust::clean::CleanReport {
                        smooth: Some(rep),
                        total_ms: t.elapsed().as_secs_f64() * 1e3,
                        ..Default::default()
                    };
                    (w, r)
                }
                _ => clean_with(old, with_locks(opts))?,
            };
            let mut warnings = Vec::new();
            let detail = if let Some(m) = &r.mirror {
                if m.vertices_without_partner > 0 {
                    warnings.push(format!(
                        "{} vertices have no mirror partner",
                        m.vertices_without_partner
                    ));
                }
                format!("{} vertices mirrored", m.vertices_written)
            } else if let Some(g) = &r.rogue {
                format!("{} islands removed", g.removed.len())
            } else if let Some(s) = &r.soften {
                format!(
                    "{} vertices changed ({} of {} points dense enough to soften)",
                    s.changed_vertices, s.softened_nodes, s.nodes
                )
            } else if let Some(x) = r.prune.as_ref().or(r.limit.as_ref()).or(r.normalise.as_ref()) {
                format!("{} vertices changed", x.vertices_changed)
            } else if let Some(s) = &r.smooth {
                format!("{} vertices changed", s.vertices_changed)
            } else {
                String::new()
            };
            let summary = format!("{}: {detail} in {:.1} ms", capitalise(name), r.total_ms);
            (name.to_string(), w, summary, warnings)
        }
    };
    let rows = input.selection.as_ref().map(|sel| (sel.clone(), weights.rows_of(sel)));
    let (name, summary) = match &rows {
        Some((sel, _)) => (
            format!("{name} ({} selected vertices)", sel.len()),
            format!("{summary} (applied to {} selected vertices)", sel.len()),
        ),
        None => (name, summary),
    };
    Ok(Outcome {
        name,
        weights,
        bindings: input.bind_world.clone(),
        rows,
        summary,
        warnings,
        controls,
        excluded,
    })
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

/// An operation running on a worker thread.
pub struct Job {
    /// The history's name for it, for the spinner.
    pub op: WeightOp,
    /// The document's generation when it started: a result for an older skin is dropped.
    pub generation: u64,
    handle: JoinHandle<Result<Outcome, String>>,
}

impl Job {
    /// Start `op` on the document's rig; `wake` is called from the worker when it is done.
    pub fn start(
        op: WeightOp,
        doc: &Document,
        settings: &ToolSettings,
        wake: impl FnOnce() + Send + 'static,
    ) -> Result<Self, String> {
        let input = Input::of(doc, op, settings.only_selected)?;
        let settings = settings.clone();
        let handle = std::thread::spawn(move || {
            let out = run(op, &input, &settings);
            wake();
            out
        });
        Ok(Self {
            op,
            generation: doc.generation,
            handle,
        })
    }

    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// Wait for the result.
    pub fn join(self) -> Result<Outcome, String> {
        self.handle
            .join()
            .unwrap_or_else(|_| Err("the operation failed unexpectedly".into()))
    }
}

/// A whole-mesh clean-up operation as the clean-up pipeline's options (the one step, without the final
/// normalisation unless it is the step), and the edit's name; None for Bind, which is not a clean-up step.
fn clean_step(op: WeightOp, settings: &ToolSettings) -> Option<(CleanOptions, &'static str)> {
    let base = CleanOptions {
        normalise: false,
        ..CleanOptions::default()
    };
    let step = match op {
        WeightOp::Smooth => (
            CleanOptions {
                smooth: Some(settings.smooth.clone()),
                ..base
            },
            "smooth weights",
        ),
        WeightOp::Rogue => (
            CleanOptions {
                rogue: Some(settings.rogue),
                ..base
            },
            "remove rogue weights",
        ),
        WeightOp::Soften => (
            CleanOptions {
                soften: true,
                max_influences: Some(settings.limit.max(1)),
                ..base
            },
            "soften weights",
        ),
        WeightOp::Prune => (
            CleanOptions {
                prune: Some(settings.prune),
                ..base
            },
            "prune weights",
        ),
        WeightOp::Limit => (
            CleanOptions {
                max_influences: Some(settings.limit.max(1)),
                ..base
            },
            "limit influences",
        ),
        WeightOp::Normalise => (
            CleanOptions {
                normalise: true,
                ..base
            },
            "normalise weights",
        ),
        WeightOp::Mirror => (
            CleanOptions {
                mirror: Some(MirrorOptions {
                    plane: Plane::new(settings.mirror_axis),
                    mode: MirrorMode::Copy {
                        from_positive: settings.mirror_from_positive,
                    },
                    tolerance: None,
                    joint_tolerance: None,
                }),
                ..base
            },
            "mirror weights",
        ),
        WeightOp::Bind => return None,
    };
    Some(step)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::SampleKind;

    fn sums_to_one(w: &Weights) -> bool {
        (0..w.len()).all(|v| {
            let s: f32 = w.row(v).1.iter().sum();
            (s - 1.0).abs() < 1e-5
        })
    }

    #[test]
    fn every_operation_gives_valid_weights_and_keeps_locked_joints() {
        let doc = Document::sample(SampleKind::Arm, 400).unwrap();
        let mut locked = doc.clone();
        locked.locks.set(1, true);
        let settings = ToolSettings::default();
        let before = doc.skin.as_ref().unwrap().weights().unwrap().clone();
        for op in [
            WeightOp::Bind,
            WeightOp::Smooth,
            WeightOp::Rogue,
            WeightOp::Soften,
            WeightOp::Prune,
            WeightOp::Limit,
            WeightOp::Normalise,
            WeightOp::Mirror,
        ] {
            let out = run(op, &Input::of(&locked, op, false).unwrap(), &settings).unwrap();
            assert_eq!(out.weights.len(), before.len(), "{op:?}");
            assert!(sums_to_one(&out.weights), "{op:?}");
            for v in 0..before.len() {
                let of = |w: &Weights| {
                    let (j, x) = w.row(v);
                    j.iter().position(|&j| j == 1).map_or(0.0, |k| x[k])
                };
                assert_eq!(
                    of(&out.weights),
                    of(&before),
                    "{op:?} changed locked joint 1 at vertex {v}"
                );
            }
        }
    }

    /// The editor's Bind Skin, with the panel's defaults, writes what `skinbind bind` writes: the geodesic bind,
    /// then the default clean-up, softening included.
    #[test]
    fn the_editors_bind_is_the_clis() {
        let doc = Document::sample(SampleKind::Arm, 3000).unwrap();
        let settings = ToolSettings::default();
        let input = Input::of(&doc, WeightOp::Bind, false).unwrap();
        let out = run(WeightOp::Bind, &input, &settings).unwrap();
        let (p, t) = (input.skin.positions(), input.skin.triangles());
        let (raw, _) = bind_weights(
            &input.skeleton,
            &input.bind_world,
            p,
            t,
            &BindOptions::default(),
            &|_| {},
        )
        .unwrap();
        let cli = |opts: CleanOptions| clean(p, t, &input.skeleton, &input.bind_world, &raw, &opts).unwrap();
        let (cleaned, report) = cli(CleanOptions::after_binding(4, BindMethod::Geodesic));
        assert!(
            report.soften.as_ref().is_some_and(|s| s.changed_vertices > 0),
            "{report:?}"
        );
        assert_eq!(out.weights, cleaned);
        let unsoftened = cli(CleanOptions {
            soften: false,
            ..CleanOptions::after_binding(4, BindMethod::Geodesic)
        });
        assert_ne!(out.weights, unsoftened.0);
    }

    #[test]
    fn an_operation_on_a_selection_changes_only_the_selected_rows() {
        let mut doc = Document::sample(SampleKind::Arm, 400).unwrap();
        doc.selected_vertices = vec![3, 50, 60, 61, 62, 63];
        let settings = ToolSettings {
            rigid: true,
            ..ToolSettings::default()
        };
        for op in [WeightOp::Bind, WeightOp::Smooth] {
            let out = run(op, &Input::of(&doc, op, true).unwrap(), &settings).unwrap();
            let (vs, rows) = out.rows.expect("rows for the selection");
            assert_eq!(vs, doc.selected_vertices);
            assert_eq!(rows.len(), vs.len());
            for (v, r) in vs.iter().zip(&rows) {
                let s: f32 = r.iter().map(|x| x.1).sum();
                assert!((s - 1.0).abs() < 1e-5, "{op:?} vertex {v}: {r:?}");
            }
            assert!(out.name.ends_with("(6 selected vertices)"), "{}", out.name);
        }
        // Without the flag (or with nothing selected) the whole skin is the target.
        assert!(
            run(
                WeightOp::Smooth,
                &Input::of(&doc, WeightOp::Smooth, false).unwrap(),
                &settings
            )
            .unwrap()
            .rows
            .is_none()
        );
    }

    #[test]
    fn an_operation_without_a_skin_or_weights_says_what_is_missing() {
        let mut doc = Document::sample(SampleKind::Arm, 300).unwrap();
        let mut skin = doc.skin.take().unwrap();
        assert_eq!(Input::of(&doc, WeightOp::Bind, false).unwrap_err(), "open a skin first");
        skin.set_weights(None).unwrap();
        doc.skin = Some(skin);
        assert!(
            Input::of(&doc, WeightOp::Smooth, false)
                .unwrap_err()
                .contains("bind it first")
        );
        let out = run(
            WeightOp::Bind,
            &Input::of(&doc, WeightOp::Bind, false).unwrap(),
            &ToolSettings::default(),
        )
        .unwrap();
        assert!(sums_to_one(&out.weights));
        assert!((0..out.weights.len()).all(|v| !out.weights.row(v).0.is_empty()));
    }
}

/// A bind warning as the editor says it: the library names the command line's flags for its remedies
/// (`--bind-controls`, `bind --exclude`), the editor its own controls.
pub(crate) fn in_editor_words(warning: &str) -> String {
    warning
        .replace(
            "to bind it, use --bind-controls (or tick Deforms in the editor)",
            "to bind it, select it and tick Deforms in Properties, then Bind Skin",
        )
        .replace(
            "exclude it (bind --exclude, or untick Deforms in the editor)",
            "untick Deforms in Properties (or use the Weights panel's Exclude button) and Bind Skin again",
        )
}

#[cfg(test)]
mod editor_words_tests {
    use super::in_editor_words;
    use crate::bind::controls::{ControlReason, control_warning, excluded_warning};

    #[test]
    fn bind_warnings_in_the_editor_name_its_controls_and_no_command_line_flag() {
        for reason in [
            ControlReason::Name("ik"),
            ControlReason::Outside,
            ControlReason::RootOutside,
            ControlReason::Hovering,
        ] {
            for w in [
                excluded_warning(3, "IK_foot", reason),
                control_warning(3, "IK_foot", reason),
            ] {
                let said = in_editor_words(&w);
                assert!(!said.contains("--"), "{said}");
                assert!(said.contains("Deforms in Properties"), "{said}");
            }
        }
    }
}
