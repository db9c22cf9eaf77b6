//! What the panels and tools ask for ([`Command`]) and the one place it is applied ([`SkinbindApp::apply`]):
//! every change to the document's content goes through here as an undoable [`DocEdit`].

use std::path::PathBuf;

use egui::ViewportCommand;

use super::files::PathPurpose;
use super::*;

/// A value the panels edit: one rotation of a joint, or one axis of the root translation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Dof {
        joint: usize,
        axis: usize,
    },
    Root(usize),
    /// A joint's containment volume radius (world units).
    VolumeRadius(usize),
    /// A joint's containment volume length scale.
    VolumeLength(usize),
}

/// Panels that the View menu shows or hides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewToggle {
    Outliner,
    Properties,
    Timeline,
    Status,
    History,
    Weights,
    Check,
}

/// A whole pose to go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoseKind {
    /// Every rotation zero, the root at its offset: the pose CSE169 skins are modelled in.
    Rest,
    /// The skeleton file's `pose` lines.
    File,
}

impl PoseKind {
    pub fn name(self) -> &'static str {
        match self {
            PoseKind::Rest => "rest",
            PoseKind::File => "file",
        }
    }
}

/// What the panels ask for; applied after the frame is drawn.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Select(Option<usize>),
    /// Replace the vertex selection.
    SelectVertices(Vec<u32>),
    /// Set the selected joint to the brush value on the selected vertices (or all of them).
    Flood,
    /// Set one joint's weight on some vertices, the other unlocked joints giving way (one edit).
    SetWeight {
        vertices: Vec<u32>,
        joint: u16,
        value: f32,
    },
    /// Write a value while a drag goes on (not recorded).
    Live(Field, f32),
    /// A drag ended: record one edit from `before` (the value when it began) to the current value.
    Commit(Field, f32),
    /// Record one edit from `before` to `after` (keyboard, typed value, screen reader).
    SetField(Field, f32, f32),
    /// Replace a joint's containment volume settings (one edit).
    SetVolume(usize, JointVolume),
    /// Lock (true) or unlock a joint's weights (one edit).
    SetLock(usize, bool),
    /// Let a joint deform (true) or mark it a control that binding gives no weight (one edit).
    SetDeform(usize, bool),
    /// Stop every joint the last bind warned looks like a control from deforming (one edit each).
    ExcludeControls(Vec<usize>),
    /// Make the current pose the skeleton's file pose (what Save writes).
    SetFilePose,
    /// Pose the skeleton at rest (every rotation zero, the root at its offset), or in its file pose (one edit).
    GoToPose(PoseKind),
    /// End a drag of a joint's volume in the view: one edit from this volume to the current one.
    CommitVolume(usize, JointVolume),
    /// Start a bind or clean-up run on a worker thread; its result becomes one edit.
    RunWeights(WeightOp),
    /// Start a range-of-motion check of the whole rig on a worker thread (the Check panel).
    RunCheck,
    /// Stop the running check.
    CancelCheck,
    /// Check again only what changed since the shown report (the joints whose sweeps read a changed row).
    CheckChanged,
    /// Pose the rig where this finding (an index into the shown report) is worst (one edit), select its joint
    /// and vertices and frame them.
    ShowFinding(usize),
    /// Fix this finding (one edit), then check again the joints the fix can affect.
    FixFinding(usize, crate::check::fix::Fix),
    /// Answer to "save with unweighted vertices?": save anyway (true) or not.
    ConfirmUnweighted(bool),
    Undo,
    Redo,
    /// Undo or redo until this many edits are applied (the history panel).
    GoTo(usize),
    Open,
    OpenPaths(Vec<PathBuf>),
    Save,
    SaveAs,
    /// Write the whole session (rig, pose, view) to a `.skinbind` file.
    SaveSession,
    /// File > Export .glb...: the rig (skeleton, skin with weights, the current clip) as binary glTF.
    ExportGlb,
    /// Answer the offer to restore an autosaved session: restore it, or discard it.
    Recover(bool),
    Quit,
    ClearRecent,
    Toggle(ViewToggle),
    /// Bring one of the right-hand dock's tabs to the front.
    ShowTab(super::settings::DockTab),
    Play,
    Pause,
    SetTime(f32),
    SetLooping(bool),
    SetSpeed(f32),
    /// Make the document's glTF animation with this index the clip.
    ChooseClip(usize),
    /// Edit the skeleton (the Skeleton mode and panel, File > New skeleton from template): one edit.
    Rig(super::rig_state::RigOp),
    /// Bind again the vertices around the joints moved since the last bind (the status bar's offer): one edit.
    RebindMoved,
    /// Record an edit a viewport tool made (a paint stroke, a moved vertex): tools change the document only
    /// through this command.
    Record(DocEdit),
}

impl SkinbindApp {
    pub(super) fn set_time(&mut self, t: f32) {
        self.playback.time = t;
        if let Some(clip) = &self.doc.clip {
            clip.apply(&self.doc.skeleton, t, &mut self.doc.pose);
        }
    }

    pub(super) fn field_value(&self, field: Field) -> Option<f32> {
        match field {
            Field::Dof { joint, axis } => self
                .doc
                .pose
                .dofs
                .get(joint)
                .and_then(|d| d.to_array().get(axis).copied()),
            Field::Root(axis) => self.doc.pose.root_translation.to_array().get(axis).copied(),
            Field::VolumeRadius(j) => self.doc.volumes.get(j).map(|v| v.radius.unwrap_or(f32::NAN)),
            Field::VolumeLength(j) => self.doc.volumes.get(j).map(|v| v.length_scale),
        }
    }

    /// A joint's volume with `field` set to `value` (positive and finite, else None).
    pub(super) fn volume_with(&self, field: Field, value: f32) -> Option<(usize, JointVolume)> {
        if !(value.is_finite() && value > 0.0) {
            return None;
        }
        match field {
            Field::VolumeRadius(j) => self.doc.volumes.get(j).map(|v| {
                (
                    j,
                    JointVolume {
                        radius: Some(value),
                        ..*v
                    },
                )
            }),
            Field::VolumeLength(j) => self.doc.volumes.get(j).map(|v| {
                (
                    j,
                    JointVolume {
                        length_scale: value,
                        ..*v
                    },
                )
            }),
            _ => None,
        }
    }

    /// Record a change of joint `joint`'s volume from `before` to `after` (nothing when equal).
    pub(super) fn record_volume(&mut self, joint: usize, before: JointVolume, after: JointVolume) {
        if before == after || joint >= self.doc.volumes.len() {
            return;
        }
        // Put the value back in case a live drag wrote it; the edit writes `after`.
        self.doc.volumes[joint] = before;
        let name = self.doc.joint_label(joint);
        self.history.edit(
            &mut self.doc,
            DocEdit::SetVolume {
                joint,
                name,
                before,
                after,
            },
        );
    }

    /// Record one edit of `field` from `before` to `after` (clamped to the joint's limits). Nothing is recorded
    /// when the value does not change, so a click that moves nothing does not mark the file changed.
    pub(super) fn record_field(&mut self, field: Field, before: f32, after: f32) {
        if !after.is_finite() {
            return;
        }
        if let Field::VolumeRadius(j) | Field::VolumeLength(j) = field {
            let Some(current) = self.doc.volumes.get(j).copied() else {
                return;
            };
            let mut old = current;
            match field {
                Field::VolumeRadius(_) => old.radius = before.is_finite().then_some(before),
                _ => old.length_scale = before,
            }
            if let Some((_, new)) = self.volume_with(field, after) {
                self.record_volume(j, old, new);
            } else {
                self.doc.volumes[j] = old;
            }
            return;
        }
        let edit = match field {
            Field::Dof { joint, axis } => {
                let Some(j) = self.doc.skeleton.joint(joint) else {
                    return;
                };
                if axis >= 3 {
                    return;
                }
                DocEdit::SetDof {
                    joint,
                    axis,
                    name: self.doc.joint_label(joint),
                    before,
                    after: j.clamp(axis, after),
                }
            }
            Field::Root(axis) if axis < 3 => {
                let mut b = self.doc.pose.root_translation;
                let mut a = b;
                b[axis] = before;
                a[axis] = after;
                DocEdit::SetRootTranslation { before: b, after: a }
            }
            Field::Root(_) | Field::VolumeRadius(_) | Field::VolumeLength(_) => return,
        };
        let unchanged = match &edit {
            DocEdit::SetDof { before, after, .. } => before.to_bits() == after.to_bits(),
            DocEdit::SetRootTranslation { before, after } => before == after,
            _ => false,
        };
        if unchanged {
            // Put the value back in case a live drag wrote it.
            if let DocEdit::SetDof {
                joint, axis, before, ..
            } = edit
            {
                if let Some(d) = self.doc.pose.dofs.get_mut(joint) {
                    d[axis] = before;
                }
            }
            return;
        }
        self.history.edit(&mut self.doc, edit);
    }

    /// Apply one command: the only place the document changes.
    pub fn apply(&mut self, ctx: &egui::Context, command: Command) {
        match command {
            Command::Select(j) => self.doc.select(j),
            Command::RunCheck => self.run_check(ctx),
            Command::CancelCheck => {
                if let Some(job) = &self.check.job {
                    job.cancel();
                }
            }
            Command::CheckChanged => self.check_changed(ctx, ""),
            Command::ShowFinding(i) => self.show_finding(i),
            Command::FixFinding(i, fix) => self.fix_finding(i, fix),
            Command::SelectVertices(v) => self.select_vertices(v),
            Command::SetWeight { vertices, joint, value } => self.set_weight(&vertices, joint, value),
            Command::Flood => self.flood(),
            Command::Live(field, v) => self.live(field, v),
            Command::Commit(field, before) => {
                if let Some(after) = self.field_value(field) {
                    self.record_field(field, before, after);
                }
            }
            Command::SetField(field, before, after) => self.record_field(field, before, after),
            Command::SetVolume(joint, after) => {
                if let Some(before) = self.doc.volumes.get(joint).copied() {
                    self.record_volume(joint, before, after);
                }
            }
            Command::CommitVolume(joint, before) => {
                if let Some(after) = self.doc.volumes.get(joint).copied() {
                    self.record_volume(joint, before, after);
                }
            }
            Command::SetLock(joint, after) => self.set_lock(joint, after),
            Command::SetDeform(joint, after) => self.set_deform(joint, after),
            Command::ExcludeControls(joints) => self.exclude_controls(joints),
            Command::SetFilePose => self.set_file_pose(),
            Command::GoToPose(kind) => self.go_to_pose(kind),
            Command::RunWeights(op) => self.run_weights(ctx, op),
            Command::Record(edit) => self.history.edit(&mut self.doc, edit),
            Command::Rig(op) => self.apply_rig(ctx, op),
            Command::RebindMoved => self.rebind_moved(ctx),
            Command::Undo => {
                self.history.undo(&mut self.doc);
            }
            Command::Redo => {
                self.history.redo(&mut self.doc);
            }
            Command::GoTo(index) => {
                if index <= self.history.len() {
                    self.history.go_to(&mut self.doc, index);
                }
            }
            Command::Open => self.open(ctx),
            Command::OpenPaths(paths) => self.open_or_ask(paths, ctx),
            Command::Save => {
                self.save();
            }
            Command::SaveAs => {
                self.save_as();
            }
            Command::SaveSession => {
                self.save_session();
            }
            Command::ExportGlb => {
                self.export_glb();
            }
            Command::ConfirmUnweighted(save) => {
                if let Some((path, _)) = self.confirm_unweighted.take() {
                    if save {
                        self.write_rig(&path);
                    }
                }
            }
            Command::Recover(restore) => self.recover(restore),
            Command::Quit => self.quit(ctx),
            Command::ClearRecent => {
                self.settings.recent.clear();
                self.save_settings();
            }
            Command::Toggle(t) => self.toggle(t),
            Command::ShowTab(t) => {
                self.settings.dock_tab = t;
                self.save_settings();
            }
            Command::Play => self.play(ctx),
            Command::Pause => self.playback.playing = false,
            Command::SetTime(t) => {
                if t.is_finite() {
                    self.set_time(t);
                }
            }
            Command::SetLooping(l) => self.playback.looping = l,
            Command::SetSpeed(s) => {
                if s.is_finite() {
                    self.playback.speed = s;
                }
            }
            Command::ChooseClip(i) => self.choose_clip(i),
        }
    }

    /// Replace the vertex selection (indices past the mesh dropped, sorted, no repeats).
    fn select_vertices(&mut self, mut v: Vec<u32>) {
        let n = self.doc.skin.as_ref().map_or(0, |k| k.vertex_count()) as u32;
        v.retain(|&x| x < n);
        v.sort_unstable();
        v.dedup();
        self.doc.selected_vertices = v;
    }

    /// A value written while a drag goes on (not recorded; the drag's end records one edit).
    fn live(&mut self, field: Field, v: f32) {
        match field {
            Field::Dof { joint, axis } => self.doc.pose.set_dof(&self.doc.skeleton, joint, axis, v),
            Field::Root(axis) => {
                if axis < 3 && v.is_finite() {
                    self.doc.pose.root_translation[axis] = v;
                }
            }
            Field::VolumeRadius(_) | Field::VolumeLength(_) => {
                if let Some((j, vol)) = self.volume_with(field, v) {
                    self.doc.volumes[j] = vol;
                }
            }
        }
    }

    fn set_lock(&mut self, joint: usize, after: bool) {
        if let Some(before) = (joint < self.doc.skeleton.len())
            .then(|| self.doc.is_locked(joint))
            .filter(|b| *b != after)
        {
            let name = self.doc.joint_label(joint);
            self.history.edit(
                &mut self.doc,
                DocEdit::SetLock {
                    joint,
                    name,
                    before,
                    after,
                },
            );
        }
    }

    fn set_deform(&mut self, joint: usize, after: bool) {
        self.doc.deform_chosen = true;
        if let Some(before) = self.doc.deform.get(joint).copied().filter(|b| *b != after) {
            let name = self.doc.joint_label(joint);
            self.history.edit(
                &mut self.doc,
                DocEdit::SetDeform {
                    joint,
                    name,
                    before,
                    after,
                },
            );
        }
    }

    /// Stop the joints the last bind warned about from deforming, one edit each.
    fn exclude_controls(&mut self, joints: Vec<usize>) {
        let mut names = Vec::new();
        for j in joints {
            if self.doc.deform.get(j).copied() == Some(true) {
                names.push(self.doc.joint_label(j));
                self.set_deform(j, false);
            }
        }
        self.likely_controls.joints.clear();
        self.set_status(
            format!(
                "{} no longer deform: Bind Skin again to weight without them",
                names.join(", ")
            ),
            false,
        );
    }

    /// Edit > Go to Rest Pose / Go to File Pose: the whole pose replaced (one edit), or a status saying it is
    /// already so.
    fn go_to_pose(&mut self, kind: PoseKind) {
        // Playback would set the pose again on the next frame.
        self.playback.playing = false;
        let after = match kind {
            PoseKind::Rest => crate::model::Pose::zero(&self.doc.skeleton),
            PoseKind::File => crate::model::Pose::from_file(&self.doc.skeleton),
        };
        if after == self.doc.pose {
            self.set_status(format!("The skeleton already is in its {} pose", kind.name()), false);
            return;
        }
        let before = Box::new(self.doc.pose.clone());
        self.history.edit(
            &mut self.doc,
            DocEdit::SetPose {
                name: format!("go to {} pose", kind.name()),
                before,
                after: Box::new(after),
            },
        );
        let done = match kind {
            PoseKind::Rest => "Posed at rest: every rotation zero, within the joints' limits",
            PoseKind::File => "Posed as the skeleton file poses it",
        };
        self.set_status(done, false);
    }

    /// Edit > Set File Pose: the current pose becomes the skeleton's file pose (one edit).
    fn set_file_pose(&mut self) {
        match self.doc.skeleton_with_current_pose() {
            Ok(after) if after != self.doc.skeleton => {
                let before = Box::new(self.doc.skeleton.clone());
                self.history.edit(
                    &mut self.doc,
                    DocEdit::SetFilePose {
                        before,
                        after: Box::new(after),
                    },
                );
                self.set_status("The current pose is now the file pose; Save writes it", false);
            }
            Ok(_) => self.set_status("The file pose already is the current pose", false),
            Err(e) => self.set_status(format!("Cannot set the file pose: {e}"), true),
        }
    }

    /// Start a bind or clean-up run on a worker thread (one at a time); [`Self::poll_job`] takes its result.
    pub(super) fn run_weights(&mut self, ctx: &egui::Context, op: WeightOp) {
        if self.job.is_some() {
            return;
        }
        let repaint = ctx.clone();
        match Job::start(op, &self.doc, &self.tools, move || repaint.request_repaint()) {
            Ok(job) => {
                if op == WeightOp::Bind {
                    self.skeleton.moved.clear();
                }
                self.job = Some(job);
            }
            Err(e) => self.set_status(e, true),
        }
    }

    /// File > Open: the dialog, or the typed path where no dialog opens.
    fn open(&mut self, ctx: &egui::Context) {
        let started = std::time::Instant::now();
        match self.dialog.pick_files() {
            Some(paths) => self.open_or_ask(paths, ctx),
            None => self.no_dialog(PathPurpose::Open, started, String::new()),
        }
    }

    /// Answer to the offer to restore an autosaved session: restore it, or delete it.
    fn recover(&mut self, restore: bool) {
        self.offer_recovery = false;
        let Some(p) = self.recovery.clone() else { return };
        if !restore {
            let _ = std::fs::remove_file(&p);
            return;
        }
        match session::SessionFile::load(&p).and_then(|s| s.restore(&p, session::Origin::Recovery)) {
            Ok((doc, view)) => self.apply_session(doc, view, &p),
            Err(e) => self.set_status(format!("{e:#}"), true),
        }
    }

    /// Quit, or ask first when there are unsaved changes.
    fn quit(&mut self, ctx: &egui::Context) {
        if self.is_dirty() {
            self.confirm_quit = true;
        } else {
            self.drop_recovery();
            self.allow_close = true;
            ctx.send_viewport_cmd(ViewportCommand::Close);
        }
    }

    /// Show or hide a panel (remembered in the settings).
    fn toggle(&mut self, t: ViewToggle) {
        let s = &mut self.settings;
        let flag = match t {
            ViewToggle::Outliner => &mut s.show_outliner,
            ViewToggle::Properties => &mut s.show_properties,
            ViewToggle::Timeline => &mut s.show_timeline,
            ViewToggle::Status => &mut s.show_status,
            ViewToggle::History => &mut s.show_history,
            ViewToggle::Weights => &mut s.show_weights,
            ViewToggle::Check => &mut s.show_check,
        };
        *flag = !*flag;
        // A dock panel turned on comes to the front of the dock.
        let tab = match t {
            ViewToggle::Properties => Some(DockTab::Properties),
            ViewToggle::History => Some(DockTab::History),
            ViewToggle::Check => Some(DockTab::Check),
            _ => None,
        };
        if let Some(tab) = tab.filter(|&t| s.shows(t)) {
            s.dock_tab = tab;
        }
        self.save_settings();
    }

    /// Play the clip; playing from the end of a clip that does not loop starts it over.
    fn play(&mut self, ctx: &egui::Context) {
        if let Some(clip) = &self.doc.clip {
            let (lo, hi) = (clip.range.0.min(clip.range.1), clip.range.0.max(clip.range.1));
            if !self.playback.looping && self.playback.speed >= 0.0 && self.playback.time >= hi {
                self.set_time(lo);
            }
            self.playback.playing = true;
            ctx.request_repaint();
        }
    }

    /// Make the glTF model's animation `i` the clip, stopped at its start.
    pub(super) fn choose_clip(&mut self, i: usize) {
        let Some(named) = self.doc.clips.get(i) else { return };
        let clip = named.clip.clone();
        let start = clip.range.0.min(clip.range.1);
        self.doc.clip = Some(clip);
        self.doc.clip_choice = Some(i);
        self.doc.paths.anim = None;
        self.playback.playing = false;
        self.set_time(start);
    }

    /// The weight table's edit: joint `joint` to `value` on `vertices`, each row renormalised around the locks;
    /// vertices where that cannot be done are left as they are and counted in the status bar.
    pub(super) fn set_weight(&mut self, vertices: &[u32], joint: u16, value: f32) {
        let Some(w) = self.doc.skin.as_ref().and_then(|k| k.weights()) else {
            return;
        };
        let name = self.doc.joint_label(joint as usize);
        if self.doc.is_locked(joint as usize) {
            self.set_status(format!("{name} is locked: unlock it to change its weights"), true);
            return;
        }
        let locks = self.doc.locks.clone();
        let mut vs: Vec<u32> = vertices.iter().copied().filter(|&v| (v as usize) < w.len()).collect();
        vs.sort_unstable();
        vs.dedup();
        let (mut changed, mut before, mut after, mut refused) = (Vec::new(), Vec::new(), Vec::new(), 0usize);
        for v in vs {
            let mut row = Vec::new();
            w.row_pairs(v as usize, &mut row);
            let old = row.clone();
            if !crate::adjust::ops::set_joint_weight(&mut row, joint, value, &locks) {
                refused += 1;
                continue;
            }
            if row != old {
                changed.push(v);
                before.push(old);
                after.push(row);
            }
        }
        if !changed.is_empty() {
            let n = changed.len();
            self.history.edit(
                &mut self.doc,
                DocEdit::SetRows {
                    name: format!("set {name} to {value:.3} on {n} vertices"),
                    vertices: changed,
                    before,
                    after,
                },
            );
        }
        if refused > 0 {
            self.set_status(
                format!(
                    "{refused} vertices kept their weights: no other unlocked joint there could give or take the rest"
                ),
                true,
            );
        }
    }

    /// Flood: the brush value on every selected vertex, or on the whole skin when none is selected.
    pub(super) fn flood(&mut self) {
        let Some(j) = self.doc.selected else {
            self.set_status("Select the joint to flood first", true);
            return;
        };
        let vertices = if self.doc.selected_vertices.is_empty() {
            (0..self.doc.skin.as_ref().map_or(0, |k| k.vertex_count() as u32)).collect()
        } else {
            self.doc.selected_vertices.clone()
        };
        self.set_weight(&vertices, j as u16, self.paint.brush.value);
    }

    /// Take a finished bind or clean-up run into the document as one edit.
    pub(super) fn poll_job(&mut self, ctx: &egui::Context) {
        let Some(job) = self.job.take_if(|j| j.is_finished()) else {
            if self.job.is_some() {
                ctx.request_repaint_after(std::time::Duration::from_millis(100));
            }
            return;
        };
        let generation = job.generation;
        match job.join() {
            Ok(out) if generation == self.doc.generation && self.doc.skin.is_some() && out.rows.is_some() => {
                let Some((vertices, after)) = out.rows else {
                    return;
                };
                let Some(w) = self.doc.skin.as_ref().and_then(|k| k.weights()) else {
                    return;
                };
                let before = w.rows_of(&vertices);
                self.history.edit(
                    &mut self.doc,
                    DocEdit::SetRows {
                        name: out.name,
                        vertices,
                        before,
                        after,
                    },
                );
                self.status = Status::with_warnings(out.summary, out.warnings);
            }
            Ok(out) if generation == self.doc.generation && self.doc.skin.is_some() => {
                let mut before = WeightsState::of(&self.doc);
                let mut after = WeightsState {
                    weights: Some(out.weights),
                    bindings: Some(out.bindings),
                    deform: None,
                };
                // A bind that left out a master root unticks its Deforms box in the same edit.
                if out.excluded.iter().any(|&j| self.doc.deform.get(j) == Some(&true)) {
                    let mut d = self.doc.deform.clone();
                    for &j in &out.excluded {
                        if let Some(x) = d.get_mut(j) {
                            *x = false;
                        }
                    }
                    before.deform = Some(self.doc.deform.clone());
                    after.deform = Some(d);
                }
                self.history.edit(
                    &mut self.doc,
                    DocEdit::SetWeights {
                        name: out.name,
                        before: Box::new(before),
                        after: Box::new(after),
                    },
                );
                self.status = Status::with_warnings(out.summary, out.warnings);
                self.likely_controls = LikelyControls {
                    generation: self.doc.generation,
                    joints: out.controls,
                };
            }
            Ok(out) => self.set_status(
                format!("{}: the skin changed while it ran; run it again", out.name),
                true,
            ),
            Err(e) => self.set_status(e, true),
        }
        ctx.request_repaint();
    }
}
