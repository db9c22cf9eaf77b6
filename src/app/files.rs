//! Files: opening (with the questions before replacing unsaved work), saving the rig, sessions and glTF export,
//! the autosave and recovery file, and the settings file.

use std::path::{Path, PathBuf};

use super::*;

/// What a typed path is for (see `SkinbindApp::no_dialog`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PathPurpose {
    Open,
    SaveAs,
    SaveSession,
    ExportGlb,
    FitTemplate,
}

/// A path typed by hand where no file dialog could open: what it is for, and the text so far.
pub(super) struct PathPrompt {
    pub(super) purpose: PathPurpose,
    pub(super) text: String,
    /// Whether the field has been given the focus (once, when the question opens).
    pub(super) focused: bool,
}

/// A file dialog that answers sooner than this never opened.
const NO_DIALOG_WITHIN: std::time::Duration = std::time::Duration::from_millis(150);

pub(super) fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
}

impl SkinbindApp {
    /// Write the session now (the autosave; tests call it directly). Runs on a worker thread; returns at once.
    pub fn autosave(&mut self) {
        let Some(path) = self.recovery.clone() else { return };
        if let Some(h) = self.autosaving.take() {
            // One write at a time: wait for the previous one (it has had a minute).
            let _ = h.join();
        }
        let doc = self.doc.clone();
        let view = self.view_state();
        self.last_autosave = Some(std::time::Instant::now());
        self.autosaving = std::thread::Builder::new()
            .name("skinbind-autosave".into())
            .spawn(move || {
                if let Err(e) = session::SessionFile::capture(&doc, view).and_then(|s| s.save(&path)) {
                    eprintln!("autosave failed: {e:#}");
                }
            })
            .ok();
    }

    /// Wait for an autosave in progress to finish (tests, exit).
    pub fn finish_autosave(&mut self) {
        if let Some(h) = self.autosaving.take() {
            let _ = h.join();
        }
    }

    pub(super) fn view_state(&self) -> session::ViewState {
        session::ViewState {
            camera: Some(self.viewport.camera),
            view: Some(self.viewport.settings),
            time: self.playback.time,
        }
    }

    /// The work is safe (saved, or the window closes on purpose): no recovery file is needed.
    pub(super) fn drop_recovery(&mut self) {
        self.finish_autosave();
        if let Some(p) = &self.recovery {
            let _ = std::fs::remove_file(p);
        }
    }

    /// Replace the document and view with a session's.
    pub(super) fn apply_session(&mut self, doc: Document, view: session::ViewState, source: &Path) {
        let generation = self.doc.generation;
        self.doc = doc;
        self.doc.generation = generation;
        self.check.clear();
        self.doc.bump_generation();
        if let Some(c) = view.camera {
            self.viewport.camera = c;
        }
        if let Some(v) = view.view {
            self.viewport.settings = v;
        }
        self.history.clear();
        self.history.set_saved();
        self.drag = None;
        self.playback.playing = false;
        self.playback.time = view.time;
        self.world = self.doc.world_from_joint();
        let mut text = format!("Restored the session from {}", source.display());
        if !self.doc.paths.untrusted.is_empty() {
            text += &format!(
                "; read-only: it names {} not beside it or changed since, so Save asks where to write",
                self.doc
                    .paths
                    .untrusted
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        self.set_status(text, false);
    }

    pub(super) fn poll_loader(&mut self, ctx: &egui::Context) {
        let repaint = ctx.clone();
        if let Some(done) = self
            .loader
            .poll(self.doc.skeleton.len(), move || repaint.request_repaint())
        {
            self.apply_loaded(done);
            self.world = self.doc.world_from_joint();
            // The next batch, if any, starts on the next frame.
            ctx.request_repaint();
        }
        if !self.loader.is_idle() {
            // Keep the spinner turning; the worker also wakes the UI when it is done.
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
    }

    pub(super) fn save_settings(&mut self) {
        if let Some(p) = &self.settings_path {
            if let Err(e) = self.settings.save(p) {
                self.set_status(format!("cannot save settings: {e:#}"), true);
            }
        }
    }

    pub(super) fn apply_loaded(&mut self, done: load::Finished) {
        let loaded = match done.result {
            Ok(l) => l,
            Err(e) => {
                self.set_status(format!("{e:#}"), true);
                return;
            }
        };
        let lone_skeleton = loaded.skin.is_none() && loaded.gltf.is_none() && loaded.session.is_none();
        if let (Some(skel), true, Some(_)) = (&loaded.skeleton, lone_skeleton, &self.doc.skin) {
            if skel.0.len() == self.doc.skeleton.len() {
                let (skel, path) = skel.clone();
                self.open_skeleton_over_skin(skel, path, done.paths, loaded.warnings);
                return;
            }
            if self.is_dirty() {
                self.confirm_loaded = Some(load::Finished {
                    paths: done.paths,
                    result: Ok(loaded),
                });
                return;
            }
        }
        let obj_alone = loaded.skeleton.is_none()
            && loaded.session.is_none()
            && loaded
                .skin
                .as_ref()
                .is_some_and(|(_, p)| crate::formats::FileKind::from_path(p) == Some(crate::formats::FileKind::Obj));
        if obj_alone {
            self.open_mesh_alone(done.paths, loaded);
            return;
        }
        self.apply_loaded_now(done.paths, loaded);
    }

    /// Apply what a batch read: a new document, or parts of one (a clip).
    pub(super) fn apply_loaded_now(&mut self, paths: Vec<PathBuf>, loaded: load::Loaded) {
        if let Some((doc, view, path)) = loaded.session {
            self.apply_session(doc, view, &path);
            self.settings.add_recent(&paths);
            self.save_settings();
            self.status.text = self
                .status
                .text
                .replacen("Restored the session from", "Opened the session", 1);
            return;
        }
        let replaced = loaded.skeleton.is_some() || loaded.skin.is_some();
        let generation = self.doc.generation;
        // An OBJ mesh opened without a skeleton goes onto the current one: said in the status bar, with the ways
        // to another.
        let obj_over = (loaded.skeleton.is_none()
            && loaded
                .skin
                .as_ref()
                .is_some_and(|(_, p)| crate::formats::FileKind::from_path(p) == Some(crate::formats::FileKind::Obj)))
        .then(|| format!("{} ({} joints)", self.doc.name, self.doc.skeleton.len()));
        if let Some((skel, path)) = loaded.skeleton {
            // A new skeleton drops the old skin and clip: they were made for another skeleton.
            let mut doc = Document::new(file_name(&path), skel, None, None);
            if loaded.gltf.is_some() {
                doc.paths.gltf = Some(path);
            } else {
                doc.paths.skel = Some(path);
            }
            self.doc = doc;
            self.check.clear();
            self.playback = Playback {
                looping: self.playback.looping,
                speed: self.playback.speed,
                ..Playback::default()
            };
        }
        if let Some((skin, path)) = loaded.skin {
            self.doc.skin = Some(skin);
            self.check.clear();
            // Save writes .skin text: only to a .skin file (an .obj or glTF source is never overwritten).
            self.doc.paths.skin = (loaded.gltf.is_none()
                && crate::formats::FileKind::from_path(&path) == Some(crate::formats::FileKind::Skin))
            .then_some(path);
        }
        if loaded.gltf.is_some() {
            self.doc.clips = loaded.clips;
            self.doc.clip_choice = None;
        }
        if let Some((clip, path)) = loaded.clip {
            let start = clip.range.0.min(clip.range.1);
            self.doc.clip = Some(clip);
            self.doc.clip_choice = None;
            self.doc.paths.anim = Some(path);
            self.playback.playing = false;
            self.set_time(start);
        } else if loaded.gltf.is_some() && !self.doc.clips.is_empty() {
            self.choose_clip(0);
        }
        if replaced {
            self.doc.generation = generation;
            self.doc.bump_generation();
            self.history.clear();
            self.history.set_saved();
            self.drag = None;
        }
        self.settings.add_recent(&paths);
        self.save_settings();
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let mut text = format!("Opened {}", names.join(", "));
        if let Some(skeleton) = obj_over {
            text += &format!(
                " as the mesh of the current skeleton, {skeleton}, without weights: Bind Skin (Weights panel) \
                 weights it to these joints; for another skeleton open a .skel with it, or use File > New skeleton \
                 from template"
            );
        }
        self.status = Status::with_warnings(text, loaded.warnings);
    }

    /// Save in place, or ask for a name when the document has no `.skel` file yet. Returns whether it saved.
    pub(super) fn save(&mut self) -> bool {
        match self.doc.paths.skel.clone() {
            Some(p) => self.save_to(&p),
            None => self.save_as(),
        }
    }

    pub(super) fn save_as(&mut self) -> bool {
        let suggestion = self
            .doc
            .paths
            .skel
            .iter()
            .chain(
                self.doc
                    .paths
                    .untrusted
                    .iter()
                    .filter(|p| p.extension().is_some_and(|e| e == "skel")),
            )
            .next()
            .map(|p| file_name(p))
            // A rig read from a glTF model or a mesh: beside that file, under its name (not ./rig.skel).
            .or_else(|| {
                let paths = &self.doc.paths;
                let source = paths.gltf.as_ref().or(paths.skin.as_ref())?;
                Some(source.with_extension("skel").display().to_string())
            })
            .unwrap_or_else(|| "rig.skel".to_owned());
        let Some(path) = self.ask_save_path(PathPurpose::SaveAs, suggestion) else {
            return false;
        };
        self.save_as_to(path)
    }

    pub(super) fn save_as_to(&mut self, mut path: PathBuf) -> bool {
        if path.extension().is_none() {
            path.set_extension("skel");
        }
        self.save_to(&path)
    }

    /// Ask where to save (`suggestion` the name offered); where no dialog opens, the path field asks instead and
    /// `None` comes back now.
    pub(super) fn ask_save_path(&mut self, purpose: PathPurpose, suggestion: String) -> Option<PathBuf> {
        let started = std::time::Instant::now();
        let path = self.dialog.save_file(&suggestion);
        if path.is_none() {
            self.no_dialog(purpose, started, suggestion);
        }
        path
    }

    /// A file dialog gave no answer. Sooner than anyone could cancel one, it did not open at all (no desktop
    /// portal or zenity on the machine): say so, and ask for the path by hand.
    pub(super) fn no_dialog(&mut self, purpose: PathPurpose, started: std::time::Instant, suggestion: String) {
        if started.elapsed() < NO_DIALOG_WITHIN {
            self.set_status(
                "No file dialog could open on this desktop (no portal or zenity): type the path instead",
                true,
            );
            self.path_prompt = Some(PathPrompt {
                purpose,
                text: suggestion,
                focused: false,
            });
        }
    }

    /// Write the skeleton (with the current pose) to `skel_path` and the skin beside it: to its own file when
    /// saving in place, else to the same name with `.skin`.
    pub(super) fn save_to(&mut self, skel_path: &Path) -> bool {
        let unweighted = self.doc.unweighted_vertices();
        if unweighted > 0 {
            // Export refuses a rig with unweighted vertices unless told otherwise (as `convert` does).
            self.confirm_unweighted = Some((skel_path.to_path_buf(), unweighted));
            return false;
        }
        self.write_rig(skel_path)
    }

    /// Write the rig without asking (see [`Self::save_to`]).
    pub(super) fn write_rig(&mut self, skel_path: &Path) -> bool {
        let in_place = self.doc.paths.skel.as_deref() == Some(skel_path);
        let skin_path = match (&self.doc.skin, &self.doc.paths.skin) {
            (None, _) => None,
            (Some(_), Some(p)) if in_place => Some(p.clone()),
            (Some(_), _) => Some(skel_path.with_extension("skin")),
        };
        let result = (|| -> anyhow::Result<()> {
            // The skeleton as it is: the current pose is not the rest pose (Edit > Set File Pose makes it so).
            // Over a .skel of the same joints, in that file's layout, so that a small change is a small diff.
            let kept = std::fs::metadata(skel_path)
                .is_ok_and(|m| m.is_file() && m.len() < 64 << 20)
                .then(|| std::fs::read_to_string(skel_path).ok())
                .flatten()
                .and_then(|old| crate::formats::skel_keep::write_skel_over(&old, &self.doc.skeleton));
            match kept {
                Some(text) => save_atomic(skel_path, |w| w.write_all(text.as_bytes()))?,
                None => save_atomic(skel_path, |w| write_skel(w, &self.doc.skeleton))?,
            }
            if let (Some(skin), Some(p)) = (&self.doc.skin, &skin_path) {
                save_atomic(p, |w| write_skin(w, skin))?;
            }
            Ok(())
        })();
        match result {
            Ok(()) => {
                self.doc.paths.skel = Some(skel_path.to_path_buf());
                self.doc.paths.skin = skin_path.clone();
                self.doc.paths.gltf = None;
                self.doc.paths.untrusted.clear();
                self.doc.name = file_name(skel_path);
                self.history.set_saved();
                self.drop_recovery();
                let mut saved = vec![skel_path.to_path_buf()];
                saved.extend(skin_path);
                self.settings.add_recent(&saved);
                self.save_settings();
                let names: Vec<String> = saved.iter().map(|p| p.display().to_string()).collect();
                self.set_status(format!("Saved {}", names.join(", ")), false);
                true
            }
            Err(e) => {
                self.set_status(format!("{e:#}"), true);
                false
            }
        }
    }

    /// Load `paths`, or first ask (Save / Discard / Cancel) when they would replace a document with unsaved
    /// changes (a skeleton, skin, model or session; an animation or morph alone is added to the document).
    pub(super) fn open_or_ask(&mut self, paths: Vec<PathBuf>, ctx: &egui::Context) {
        let adds_only = paths.iter().all(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("anim") || e.eq_ignore_ascii_case("morph"))
        });
        // A skeleton alone over a skin may fit it, and then it replaces only the skeleton, as an edit that
        // Ctrl+Z undoes: read it first, and ask only if it does not fit (see `apply_loaded`).
        let lone_skeleton = paths.len() == 1
            && self.doc.skin.is_some()
            && crate::formats::FileKind::from_path(&paths[0]) == Some(crate::formats::FileKind::Skel);
        if self.is_dirty() && !adds_only && !lone_skeleton {
            self.confirm_open = Some(paths);
        } else {
            self.loader.request(paths);
        }
        ctx.request_repaint();
    }

    /// File > Export .glb...: the rig as binary glTF, as `skinbind convert ... -o M.glb` writes it (the skeleton
    /// in its file pose as the rest pose, the skin with its bindings and weights, every clip sampled at 30 fps:
    /// the model's own by name, and a clip opened from an .anim file as `clip`). A document is not changed by exporting, so the unsaved state stays as it was.
    pub(super) fn export_glb(&mut self) -> bool {
        let suggestion = format!(
            "{}.glb",
            self.doc.name.trim_end_matches(".skel").trim_end_matches(".glb")
        );
        let suggestion = suggestion.replace(['/', '\\'], "_");
        let Some(path) = self.ask_save_path(PathPurpose::ExportGlb, suggestion) else {
            return false;
        };
        self.export_glb_to(path)
    }

    pub(super) fn export_glb_to(&mut self, mut path: PathBuf) -> bool {
        if path.extension().is_none() {
            path.set_extension("glb");
        }
        let Some(skin) = &self.doc.skin else {
            self.set_status("Nothing to export: open or bind a skin first", true);
            return false;
        };
        let mut clips: Vec<(&str, &crate::model::Clip)> =
            self.doc.clips.iter().map(|c| (c.name.as_str(), &c.clip)).collect();
        if let (Some(clip), None) = (&self.doc.clip, self.doc.clip_choice) {
            clips.push(("clip", clip));
        }
        let count = clips.len();
        let written = crate::formats::glb::write_glb_clips(
            &self.doc.skeleton,
            skin,
            &clips,
            crate::formats::glb::GlbOptions::default(),
        )
        .map_err(|e| anyhow::anyhow!("{}: not exported: {e}", path.display()))
        .and_then(|bytes| crate::atomic::save_atomic(&path, |w| w.write_all(&bytes)).map_err(Into::into));
        match written {
            Ok(()) => {
                let clip = match count {
                    0 => String::new(),
                    1 => " with its animation".to_string(),
                    n => format!(" with its {n} animations"),
                };
                self.set_status(format!("Exported the rig{clip} to {}", path.display()), false);
                true
            }
            Err(e) => {
                self.set_status(format!("{e:#}"), true);
                false
            }
        }
    }

    /// File > Save Session As...: the whole session to a `.skinbind` file.
    pub(super) fn save_session(&mut self) -> bool {
        let Some(path) = self.ask_save_path(PathPurpose::SaveSession, "session.skinbind".to_owned()) else {
            return false;
        };
        self.save_session_to(path)
    }

    pub(super) fn save_session_to(&mut self, mut path: PathBuf) -> bool {
        if path.extension().is_none() {
            path.set_extension("skinbind");
        }
        match session::SessionFile::capture(&self.doc, self.view_state()).and_then(|s| s.save(&path)) {
            Ok(()) => {
                self.history.set_saved();
                self.drop_recovery();
                self.settings.add_recent(std::slice::from_ref(&path));
                self.save_settings();
                self.set_status(format!("Saved the session to {}", path.display()), false);
                true
            }
            Err(e) => {
                self.set_status(format!("{e:#}"), true);
                false
            }
        }
    }
}
