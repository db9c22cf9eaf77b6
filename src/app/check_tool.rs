//! The Check panel's work: a range-of-motion check ([`crate::check`]) of the document's rig on a worker thread,
//! with progress and cancel; its report, shown until the weights change; a fix of one finding, computed on a
//! worker thread and recorded as one undoable row edit, after which the joints the fix can affect are checked
//! again and merged into the report ([`crate::check::affected_joints`], [`CheckReport::merge`]).
//!
//! The check skins as the view does (linear blend, or dual quaternions when the view uses them), so what it
//! paints is what the rigger sees when posing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;

use glam::Mat4;

use super::document::Document;
use crate::adjust::Locks;
use crate::bind::BindOptions;
use crate::check::fix::{Fix, apply_fix};
use crate::check::{CheckOptions, CheckReport, Finding, Rig, affected_joints, check};
use crate::deform::Method;
use crate::model::{Clip, Row, Skeleton, Skin};

/// The panel's options (view state, not saved).
#[derive(Clone, Debug, PartialEq)]
pub struct CheckSettings {
    /// The swing about each world axis of a joint without DOF limits, both ways.
    pub free_degrees: f32,
    /// Steps from the bind pose to each end of a range.
    pub steps: usize,
    /// Measure every frame of the clip too (off by default, as `skinbind check` without `--anim`).
    pub animation: bool,
}

impl CheckSettings {
    /// The options in words and as the `skinbind check` flags that give the same findings, skinned by
    /// `method`, for `doc` (its clip measured when `animation` is on).
    pub fn describe(&self, method: Method, doc: &Document) -> String {
        let skinning = match method {
            Method::DualQuaternion => "dual quaternions",
            _ => "linear blend",
        };
        let mut flags = format!("--degrees {} --steps {}", self.free_degrees.round(), self.steps);
        if method == Method::DualQuaternion {
            flags += " --dqs";
        }
        let frames = match (&doc.clip, self.animation) {
            (Some(_), true) => match &doc.paths.anim {
                Some(p) => {
                    flags += &format!(" --anim {}", super::files::file_name(p));
                    "the animation's frames too".to_owned()
                }
                None => "the model's clip's frames too (the command line measures .anim files only)".to_owned(),
            },
            _ => "no animation frames".to_owned(),
        };
        format!(
            "Swings joints without limits {}° each way in {} steps, skinned by {skinning}; {frames}. The same \
             findings as `skinbind check {flags}`.",
            self.free_degrees.round(),
            self.steps
        )
    }
}

impl Default for CheckSettings {
    fn default() -> Self {
        let d = CheckOptions::default();
        Self {
            free_degrees: d.free_degrees,
            steps: d.steps,
            animation: false,
        }
    }
}

/// Which weights a report describes: the document's generation and weights version when it ran.
pub type WeightsKey = (u64, u64);

pub fn weights_key(doc: &Document) -> WeightsKey {
    (doc.generation, doc.weights_version)
}

/// The report on show.
#[derive(Clone, Debug)]
pub struct Shown {
    pub report: CheckReport,
    /// The weights it describes.
    pub key: WeightsKey,
    /// Whether the clip's frames were measured.
    pub animation: bool,
    /// The rig it describes: what a check of only the changed joints compares the document's with.
    pub rig: Snapshot,
}

/// A rig as a check read it.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub skeleton: crate::model::Skeleton,
    pub bind: Vec<Mat4>,
    pub weights: crate::model::Weights,
}

/// A fix's result: the rows it changed.
#[derive(Clone, Debug)]
pub struct Fixed {
    pub name: String,
    pub vertices: Vec<u32>,
    pub before: Vec<Row>,
    pub after: Vec<Row>,
}

/// What a worker gives back.
#[derive(Debug)]
pub enum Done {
    /// A check of `joints` (all when `None`) of the rig `rig`.
    Report {
        report: CheckReport,
        joints: Option<Vec<usize>>,
        animation: bool,
        ms: f64,
        rig: Box<Snapshot>,
    },
    Fixed(Fixed),
}

/// What a check again of what changed has to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Changed {
    /// The skeleton, bind pose or mesh changed: everything is checked again.
    Everything,
    /// These joints (and the animation, when it was measured) read changed rows.
    Joints(Vec<usize>),
    /// Nothing a check reads changed.
    Nothing,
}

/// What a worker is doing, for the panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Busy {
    Checking,
    CheckingAgain,
    Fixing,
}

/// A run on a worker thread.
pub struct Job {
    pub busy: Busy,
    /// The weights it started from.
    pub key: WeightsKey,
    done: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
    cancel: Arc<AtomicBool>,
    handle: JoinHandle<Result<Done, String>>,
}

impl Job {
    /// (done, total) of the joints and clip so far.
    pub fn progress(&self) -> (usize, usize) {
        (self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed))
    }

    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub fn join(self) -> Result<Done, String> {
        self.handle
            .join()
            .unwrap_or_else(|_| Err("the check failed unexpectedly".into()))
    }
}

/// A copy of what a check or fix reads.
struct Input {
    skeleton: Skeleton,
    bind: Vec<Mat4>,
    skin: Skin,
    clip: Option<Clip>,
}

impl Input {
    fn of(doc: &Document, animation: bool) -> Result<Self, String> {
        let skin = doc.skin.as_ref().ok_or("open a skin first")?;
        if skin.weights().is_none() {
            return Err("the skin has no weights yet: bind it first".into());
        }
        Ok(Self {
            skeleton: doc.skeleton.clone(),
            bind: doc.bind_world(),
            skin: skin.clone(),
            clip: if animation { doc.clip.clone() } else { None },
        })
    }

    fn rig(&self) -> Result<Rig<'_>, String> {
        Rig::of(&self.skeleton, &self.bind, &self.skin).ok_or_else(|| "the skin has no weights".to_string())
    }
}

/// The Check panel's state.
#[derive(Default)]
pub struct CheckTool {
    pub settings: CheckSettings,
    pub shown: Option<Shown>,
    /// The finding selected in the list (an index into the report's findings).
    pub selected: Option<usize>,
    pub job: Option<Job>,
    /// The shown report's per-vertex scores for the view, and their revision (bumped when they change).
    pub scores: Option<(u64, Arc<Vec<f32>>)>,
    /// A finding to show once the check started from the command line is done (`open --check --finding`).
    pub startup_finding: Option<usize>,
    /// Counts the scores made, so that the view sees every new set as new.
    revision: u64,
    /// The list's filters (view state): the kinds shown, and one joint's problems only.
    pub filter: ListFilter,
    /// Scroll the list to the selected finding on the next frame (it was chosen from outside the list).
    pub scroll_to_selected: bool,
}

/// Which problems the list shows.
#[derive(Clone, Debug, PartialEq)]
pub struct ListFilter {
    pub kinds: [bool; crate::check::Kind::COUNT],
    pub joint: Option<usize>,
}

impl Default for ListFilter {
    fn default() -> Self {
        Self {
            kinds: [true; crate::check::Kind::COUNT],
            joint: None,
        }
    }
}

impl ListFilter {
    pub fn shows(&self, f: &Finding) -> bool {
        self.kinds[f.kind.index()] && self.joint.is_none_or(|j| f.joint == Some(j))
    }
}

impl CheckTool {
    /// Start a check of `joints` (every joint when `None`) on the document's rig, skinned by `method`.
    pub fn start_check(
        &mut self,
        doc: &Document,
        method: Method,
        joints: Option<Vec<usize>>,
        animation: bool,
        wake: impl Fn() + Send + Sync + 'static,
    ) -> Result<(), String> {
        let input = Input::of(doc, animation)?;
        let opts = CheckOptions {
            method,
            free_degrees: self.settings.free_degrees,
            steps: self.settings.steps,
            joints: joints.clone(),
            ..CheckOptions::default()
        };
        let busy = if joints.is_some() {
            Busy::CheckingAgain
        } else {
            Busy::Checking
        };
        self.spawn(doc, busy, move |done, total, cancel| {
            let t = std::time::Instant::now();
            let rig = input.rig()?;
            let progress = |d: usize, n: usize| {
                done.store(d, Ordering::Relaxed);
                total.store(n, Ordering::Relaxed);
                wake();
                !cancel.load(Ordering::Relaxed)
            };
            let report = check(rig, input.clip.as_ref(), &opts, &progress).map_err(|e| e.to_string())?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let animation = input.clip.is_some();
            let weights = rig.weights.clone();
            Ok(Done::Report {
                report,
                joints,
                animation,
                ms,
                rig: Box::new(Snapshot {
                    skeleton: input.skeleton,
                    bind: input.bind,
                    weights,
                }),
            })
        })
    }

    /// Start `fix` of `finding` on the document's rig; `bind` is what the bind-again fix binds with.
    pub fn start_fix(&mut self, doc: &Document, finding: &Finding, fix: Fix, bind: BindOptions) -> Result<(), String> {
        let input = Input::of(doc, false)?;
        let locks: Locks = doc.locks.clone();
        let region = finding.region.vertices.clone();
        let name = format!(
            "{} ({} at {})",
            fix.label().to_lowercase(),
            finding.kind.label(),
            finding.joint_name
        );
        self.spawn(doc, Busy::Fixing, move |_, _, _| {
            let rig = input.rig()?;
            let after = apply_fix(rig, &region, fix, &locks, &bind).map_err(|e| e.to_string())?;
            let vertices = rig.weights.differing_rows(&after);
            Ok(Done::Fixed(Fixed {
                name,
                before: rig.weights.rows_of(&vertices),
                after: after.rows_of(&vertices),
                vertices,
            }))
        })
    }

    fn spawn(
        &mut self,
        doc: &Document,
        busy: Busy,
        work: impl FnOnce(&AtomicUsize, &AtomicUsize, &AtomicBool) -> Result<Done, String> + Send + 'static,
    ) -> Result<(), String> {
        if self.job.is_some() {
            return Err("a check is already running".into());
        }
        let (done, total, cancel) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (d, t, c) = (done.clone(), total.clone(), cancel.clone());
        let handle = std::thread::spawn(move || work(&d, &t, &c));
        self.job = Some(Job {
            busy,
            key: weights_key(doc),
            done,
            total,
            cancel,
            handle,
        });
        Ok(())
    }

    /// Show `report`, taken on the weights `key`: a whole check replaces the shown one, a check of some joints
    /// merges into it. Returns false when a partial check has nothing to merge into.
    pub fn take_report(
        &mut self,
        report: CheckReport,
        joints: Option<Vec<usize>>,
        animation: bool,
        key: WeightsKey,
        rig: Snapshot,
    ) -> bool {
        match (joints, &mut self.shown) {
            (None, _) => {
                self.shown = Some(Shown {
                    report,
                    key,
                    animation,
                    rig,
                });
                self.selected = None;
                self.filter = ListFilter::default();
            }
            (Some(joints), Some(shown)) => {
                shown.report.merge(report, &joints, animation && shown.animation);
                shown.key = key;
                shown.rig = rig;
                self.selected = None;
            }
            (Some(_), None) => return false,
        }
        self.revision += 1;
        let revision = self.revision;
        self.scores = self
            .shown
            .as_ref()
            .map(|s| (revision, Arc::new(s.report.vertex_worst.clone())));
        true
    }

    /// What changed in `doc`'s rig since the shown report was made, for a check of only what it can alter
    /// ([`affected_joints`]: exact for the sweeps).
    pub fn changed(&self, doc: &Document) -> Changed {
        let Some(shown) = &self.shown else {
            return Changed::Everything;
        };
        let Some(now) = doc.skin.as_ref().and_then(|k| k.weights()) else {
            return Changed::Everything;
        };
        let then = &shown.rig;
        if doc.skeleton != then.skeleton || doc.bind_world() != then.bind || now.len() != then.weights.len() {
            return Changed::Everything;
        }
        let rows = now.differing_rows(&then.weights);
        if rows.is_empty() {
            return Changed::Nothing;
        }
        let joints = affected_joints(&then.skeleton, &then.weights, now, &rows, shown.report.method);
        if joints.is_empty() && !shown.animation {
            Changed::Nothing
        } else {
            Changed::Joints(joints)
        }
    }

    /// Finding `i` of the shown report.
    pub fn finding(&self, i: usize) -> Option<Finding> {
        self.shown.as_ref().and_then(|s| s.report.findings.get(i)).cloned()
    }

    /// Whether the shown report describes the document's weights as they are.
    pub fn is_current(&self, doc: &Document) -> bool {
        self.shown.as_ref().is_some_and(|s| s.key == weights_key(doc))
    }

    /// Forget the report (a new rig was opened).
    pub fn clear(&mut self) {
        if let Some(j) = &self.job {
            j.cancel();
        }
        self.shown = None;
        self.selected = None;
        self.scores = None;
    }
}

/// One line saying what a report found.
pub fn summary(report: &CheckReport, ms: Option<f64>) -> String {
    let took = ms.map(|ms| format!(" in {:.0} ms", ms)).unwrap_or_default();
    let joints = report.joints.iter().filter(|j| j.findings > 0).count();
    match report.findings.first() {
        None => format!(
            "Check: no problems over {} poses of {} joints{took}",
            report.poses,
            report.joints.len()
        ),
        Some(f) => format!(
            "Check: {} problems on {joints} of {} joints over {} poses{took}; worst {:.2} ({} {})",
            report.findings.len(),
            report.joints.len(),
            report.poses,
            f.severity,
            f.kind.label(),
            match f.joint {
                Some(_) => format!("at {}", f.joint_name),
                None => "in the animation".to_string(),
            }
        ),
    }
}

impl super::SkinbindApp {
    /// The skinning the shown report measured (a check again must measure the same), else the view's.
    fn check_method(&self) -> Method {
        if let Some(s) = &self.check.shown {
            return s.report.method;
        }
        self.view_method()
    }

    /// The skinning the view uses, which a new check measures.
    fn view_method(&self) -> Method {
        if self.viewport.settings.dual_quaternion {
            Method::DualQuaternion
        } else {
            Method::Linear
        }
    }

    /// Start a whole check (Command::RunCheck).
    pub(super) fn run_check(&mut self, ctx: &egui::Context) {
        let animation = self.check.settings.animation && self.doc.clip.is_some();
        let repaint = ctx.clone();
        let method = self.view_method();
        match self
            .check
            .start_check(&self.doc, method, None, animation, move || repaint.request_repaint())
        {
            Ok(()) => self.set_status("Checking the range of motion...", false),
            Err(e) => self.set_status(e, true),
        }
    }

    /// Take a finished check or fix.
    pub(super) fn poll_check(&mut self, ctx: &egui::Context) {
        let Some(job) = self.check.job.take_if(|j| j.is_finished()) else {
            if self.check.job.is_some() {
                ctx.request_repaint_after(std::time::Duration::from_millis(100));
            }
            return;
        };
        let key = job.key;
        let done = match job.join() {
            Err(e) if e == crate::check::CheckError::Cancelled.to_string() => {
                return self.set_status("Check cancelled", false);
            }
            Err(e) => return self.set_status(format!("check: {e}"), true),
            Ok(_) if key != weights_key(&self.doc) => {
                return self.set_status("check: the weights changed while it ran; run it again", true);
            }
            Ok(d) => d,
        };
        match done {
            Done::Report {
                report,
                joints,
                animation,
                ms,
                rig,
            } => {
                let partial = joints.is_some();
                if self.check.take_report(report, joints, animation, key, *rig) {
                    if !partial {
                        self.viewport.settings.shading = crate::render::Shading::Check;
                    }
                    if let Some(s) = &self.check.shown {
                        let text = summary(&s.report, Some(ms));
                        let text = if partial {
                            text.replacen("Check:", "Checked again:", 1)
                        } else {
                            text
                        };
                        self.set_status(text, false);
                    }
                }
            }
            Done::Fixed(f) => self.record_fix(ctx, f),
        }
    }

    /// Record a fix as one edit, then check again the joints it can affect.
    fn record_fix(&mut self, ctx: &egui::Context, f: Fixed) {
        if f.vertices.is_empty() {
            return self.set_status(format!("{}: no weight changed", f.name), false);
        }
        let said = format!("{}: {} vertices changed", f.name, f.vertices.len());
        self.history.edit(
            &mut self.doc,
            super::DocEdit::SetRows {
                name: f.name,
                vertices: f.vertices,
                before: f.before,
                after: f.after,
            },
        );
        self.check_changed(ctx, &said);
    }

    /// Check again only what changed since the shown report (Command::CheckChanged; after a fix): the joints
    /// whose sweeps read a changed row, and the clip when it was measured; everything when the skeleton, bind
    /// pose or mesh changed. `said` leads the status line.
    pub(super) fn check_changed(&mut self, ctx: &egui::Context, said: &str) {
        let after_said = |text: String| {
            if said.is_empty() {
                text
            } else {
                format!("{said}; {text}")
            }
        };
        let joints = match self.check.changed(&self.doc) {
            Changed::Everything => return self.run_check(ctx),
            Changed::Nothing => {
                let key = weights_key(&self.doc);
                if let Some(s) = &mut self.check.shown {
                    s.key = key;
                }
                let text = "nothing the check reads has changed: the report holds";
                return self.set_status(after_said(text.to_string()), false);
            }
            Changed::Joints(j) => j,
        };
        let animation = self.check.shown.as_ref().is_some_and(|s| s.animation) && self.doc.clip.is_some();
        let repaint = ctx.clone();
        let method = self.check_method();
        let count = joints.len();
        match self
            .check
            .start_check(&self.doc, method, Some(joints), animation, move || {
                repaint.request_repaint()
            }) {
            Ok(()) => self.set_status(after_said(format!("checking {count} joints again...")), false),
            Err(e) => self.set_status(e, true),
        }
    }

    /// Pose the rig where finding `i` is worst (one edit; a clip frame is a time, as scrubbing), select its joint
    /// and vertices, and frame them.
    pub(super) fn show_finding(&mut self, i: usize) {
        let Some(f) = self.check.finding(i) else {
            return;
        };
        self.check.selected = Some(i);
        self.check.scroll_to_selected = true;
        let bind = self.doc.bind_world();
        match f.pose {
            crate::check::PoseRef::Frame { time } => {
                self.playback.playing = false;
                self.set_time(time);
            }
            swing => {
                if let Some(pose) = crate::check::pose_for(&self.doc.skeleton, &bind, &swing) {
                    if pose != self.doc.pose {
                        let name = format!("pose at {}", swing.describe(&self.doc.skeleton, &bind));
                        let before = Box::new(self.doc.pose.clone());
                        self.history.edit(
                            &mut self.doc,
                            super::DocEdit::SetPose {
                                name,
                                before,
                                after: Box::new(pose),
                            },
                        );
                    }
                }
            }
        }
        self.world = self.doc.world_from_joint();
        self.doc.select(f.joint);
        self.doc.selected_vertices = f.region.vertices.clone();
        let points = super::surface::posed_points(&self.doc, &self.world, &f.region.vertices);
        if let Some((lo, hi)) = crate::model::skin::bounds(&points) {
            let diagonal = self.check.shown.as_ref().map_or(1.0, |s| s.report.diagonal);
            let pad = ((hi - lo).length() * 0.5).max(diagonal * 0.15);
            let aspect = self.viewport.rect().map_or(1.0, |r| r.width() / r.height().max(1.0));
            let pad = glam::Vec3::splat(pad);
            self.viewport.camera.frame_aspect(lo - pad, hi + pad, aspect);
        }
        self.set_status(
            format!(
                "{} at {}: {} ({} vertices)",
                f.kind.label(),
                f.pose.describe(&self.doc.skeleton, &bind),
                f.kind.describe(f.value),
                f.region.vertices.len()
            ),
            false,
        );
    }

    /// Start `fix` of finding `i` on a worker thread.
    pub(super) fn fix_finding(&mut self, i: usize, fix: Fix) {
        if !self.check.is_current(&self.doc) {
            return self.set_status("the weights changed since the check: run it again first", true);
        }
        let Some(f) = self.check.finding(i) else {
            return;
        };
        let bind = self
            .tools
            .bind_options(&self.doc.volumes, &self.doc.deform, self.doc.deform_chosen);
        if let Err(e) = self.check.start_fix(&self.doc, &f, fix, bind) {
            self.set_status(e, true);
        }
    }
}
