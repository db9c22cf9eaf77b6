//! Skeleton > Fit to mesh: a shipped template (in its body box, with its trunk's widths) or the open skeleton as
//! it stands, fitted into the open mesh by [`crate::rig::fit::fit_template`] on a worker thread (a fit takes
//! about a second: the registrations), then taken in as one edit that replaces the skeleton; the fitted pose
//! becomes the bind pose.

use std::thread::JoinHandle;

use super::SkinbindApp;
use crate::model::Pose;
use crate::rig::fit::{FitError, FitInput, FitOptions, FitResult, fit_template};
use crate::rig::templates::{BODY_BOX, TemplateKind, body_widths, template};

/// A fit running on a worker thread.
pub struct FitJob {
    /// What is fitted, for the status bar ("the quadruped template").
    pub what: String,
    /// The document's generation when it started: a fit for an older mesh is dropped.
    generation: u64,
    handle: JoinHandle<Result<FitResult, FitError>>,
}

impl SkinbindApp {
    /// Start fitting `kind` (None: the open skeleton) into the open mesh; one fit at a time.
    pub(super) fn start_fit(&mut self, ctx: &egui::Context, kind: Option<TemplateKind>) {
        if self.fit_job.is_some() {
            return self.set_status("Fit to mesh: a fit is already running", true);
        }
        let Some(skin) = self.doc.skin.as_ref() else {
            return self.set_status("Fit to mesh: open a mesh first", true);
        };
        let (skeleton, world) = match kind {
            Some(k) => {
                let s = template(k);
                let w = crate::model::world_from_joint(&s, &Pose::zero(&s));
                (s, w)
            }
            None => (self.doc.skeleton.clone(), self.doc.world_from_joint()),
        };
        let widths = kind.and_then(|k| body_widths(k, &skeleton));
        let (positions, triangles) = (skin.positions().to_vec(), skin.triangles().to_vec());
        let wake = ctx.clone();
        let handle = std::thread::spawn(move || {
            let input = FitInput {
                template: &skeleton,
                template_world: &world,
                template_mesh: None,
                template_weights: None,
                template_box: kind.map(|_| BODY_BOX),
                template_widths: widths.as_deref(),
                positions: &positions,
                triangles: &triangles,
            };
            let out = fit_template(&input, &FitOptions::default());
            wake.request_repaint();
            out
        });
        let what = kind.map_or("the open skeleton".to_string(), |k| {
            format!("the {} template", k.name())
        });
        self.set_status(format!("Fitting {what} into the mesh..."), false);
        self.fit_job = Some(FitJob {
            what,
            generation: self.doc.generation,
            handle,
        });
    }

    /// Take a finished fit into the document as one edit.
    pub(super) fn poll_fit(&mut self, ctx: &egui::Context) {
        let Some(job) = self.fit_job.take_if(|j| j.handle.is_finished()) else {
            if self.fit_job.is_some() {
                ctx.request_repaint_after(std::time::Duration::from_millis(100));
            }
            return;
        };
        let what = job.what;
        let fit = match job.handle.join() {
            Ok(Ok(fit)) => fit,
            Ok(Err(e)) => return self.set_status(format!("Fit to mesh: {e}"), true),
            Err(_) => return self.set_status("Fit to mesh failed unexpectedly", true),
        };
        if job.generation != self.doc.generation || self.doc.skin.is_none() {
            return self.set_status(
                format!("Fit to mesh: the rig changed while {what} was being fitted; fit again"),
                true,
            );
        }
        let pose = Pose::from_file(&fit.skeleton);
        let n = fit.skeleton.len();
        self.replace_by_new_skeleton(fit.skeleton, pose, fit.world, format!("fit to mesh: {what}"));
        let outside = fit.joints.iter().filter(|j| !j.inside).count();
        let mut msg = format!("Fitted {what} into the mesh ({n} joints");
        if outside > 0 {
            msg += &format!(", {outside} outside the solid");
        }
        msg += "): move joints where needed, then bind";
        if let Some(w) = fit.warnings.first() {
            msg = format!("{msg}. Warning: {w}");
        }
        self.set_status(msg, !fit.warnings.is_empty());
        ctx.request_repaint();
    }
}
