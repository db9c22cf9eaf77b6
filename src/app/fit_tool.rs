//! Skeleton > Fit to mesh: a shipped template (in its body box, with its trunk's widths), another character's
//! rig read from files (with its mesh and weights), or the open skeleton as it stands, fitted into the open mesh by [`crate::rig::fit::fit_template`] on a worker thread (a fit takes
//! about a second: the registrations), then taken in as one edit that replaces the skeleton; the fitted pose
//! becomes the bind pose.

use std::thread::JoinHandle;

use std::path::PathBuf;

use super::SkinbindApp;
use super::files::{PathPurpose, file_name};
use crate::formats;
use crate::model::Pose;
use crate::rig::fit::{FitOptions, FitResult, fit_template};
use crate::rig::fit_template::TemplateRig;
use crate::rig::templates::TemplateKind;

/// A fit running on a worker thread.
pub struct FitJob {
    /// What is fitted, for the status bar ("the quadruped template").
    pub what: String,
    /// The document's generation when it started: a fit for an older mesh is dropped.
    generation: u64,
    handle: JoinHandle<Result<FitResult, String>>,
}

impl SkinbindApp {
    /// Start fitting `kind` (None: the open skeleton, in its current pose) into the open mesh.
    pub(super) fn start_fit(&mut self, ctx: &egui::Context, kind: Option<TemplateKind>) {
        let what = kind.map_or("the open skeleton".to_string(), |k| {
            format!("the {} template", k.name())
        });
        let skeleton = self.doc.skeleton.clone();
        let world = self.doc.world_from_joint();
        self.spawn_fit(ctx, what, move || {
            Ok(match kind {
                Some(k) => TemplateRig::shipped(k),
                None => TemplateRig::posed(skeleton, world, None),
            })
        });
    }

    /// Fit to mesh > a rig file: the dialog (or, where none opens, a typed path).
    pub(super) fn pick_fit_template(&mut self, ctx: &egui::Context) {
        let started = std::time::Instant::now();
        match self.dialog.pick_files() {
            Some(paths) => self.start_fit_file(ctx, paths),
            None => self.no_dialog(PathPurpose::FitTemplate, started, String::new()),
        }
    }

    /// Start fitting the rig in `paths` (read on the worker) into the open mesh.
    pub(super) fn start_fit_file(&mut self, ctx: &egui::Context, paths: Vec<PathBuf>) {
        let names: Vec<String> = paths.iter().map(|p| file_name(p)).collect();
        self.spawn_fit(ctx, format!("the rig in {}", names.join(" and ")), move || {
            read_template(&paths)
        });
    }

    /// Run `template` then the fit on a worker thread; one fit at a time.
    fn spawn_fit(
        &mut self,
        ctx: &egui::Context,
        what: String,
        template: impl FnOnce() -> Result<TemplateRig, String> + Send + 'static,
    ) {
        if self.fit_job.is_some() {
            return self.set_status("Fit to mesh: a fit is already running", true);
        }
        let Some(skin) = self.doc.skin.as_ref() else {
            return self.set_status("Fit to mesh: open a mesh first", true);
        };
        let (positions, triangles) = (skin.positions().to_vec(), skin.triangles().to_vec());
        let options = FitOptions {
            mesh_turn: self.skeleton_panel.mesh_turn,
            ..FitOptions::default()
        };
        let wake = ctx.clone();
        let handle = std::thread::spawn(move || {
            let out = template()
                .and_then(|t| fit_template(&t.input(&positions, &triangles), &options).map_err(|e| e.to_string()));
            wake.request_repaint();
            out
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
        let roots: Vec<bool> = fit.skeleton.joints().iter().map(|j| j.parent.is_none()).collect();
        self.replace_by_new_skeleton(fit.skeleton, pose, fit.world, format!("fit to mesh: {what}"));
        // Roots are left where the fit puts them (a master root on the ground); the rest are kept inside.
        let outside = fit
            .joints
            .iter()
            .zip(&roots)
            .filter(|(j, root)| !j.inside && !**root)
            .count();
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

/// A template rig from the files a person chose: one .glb/.gltf/.fbx, or a .skel with (or without) its .skin.
fn read_template(paths: &[PathBuf]) -> Result<TemplateRig, String> {
    let is = |p: &&PathBuf, ext: &str| p.extension().is_some_and(|e| e.eq_ignore_ascii_case(ext));
    let (skel_path, skin_path) = match paths {
        [one] if formats::is_rig(one) => (one, None),
        _ => match paths.iter().find(|p| is(p, "skel")) {
            Some(skel) => (skel, paths.iter().find(|p| is(p, "skin"))),
            None => {
                return Err(
                    "choose a rig: a .glb, .gltf or .fbx with a skinned mesh, or a .skel with its .skin".into(),
                );
            }
        },
    };
    let (skel, skin) =
        formats::rig_file::load_skeleton_with_skin(skel_path, skin_path.map(|p| p.as_path()), &mut |_, _| {})
            .map_err(|e| e.to_string())?;
    Ok(TemplateRig::with_skin(skel, skin))
}
