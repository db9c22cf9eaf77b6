//! The editor window (eframe/egui on the glow backend): a menu bar, the joint tree, the joint's properties, the
//! timeline and the status bar around the 3D viewport.
//!
//! One frame: collect input (close requests, dropped files, shortcuts, finished loads), advance playback, draw
//! the panels, which read the [`Document`] and queue [`Command`]s, then apply the commands in one place
//! ([`SkinbindApp::apply`], rerun's command queue). Every change to the document's content is an undoable
//! [`DocEdit`] in an `undo::Record`, which also tracks the saved state (the `*` in the title). Three things are
//! not edits: the selection (view state), playback and scrubbing (they pose from the clip), and loading files,
//! which replaces the document and clears the history.
//!
//! Tests build the app with [`SkinbindApp::new_for_test`] and draw it with egui_kittest through
//! [`SkinbindApp::show`]; no window, GPU or file dialog is needed.

pub mod dialog;
pub mod document;
pub mod edit;
pub mod load;
mod panels;
pub mod playback;
pub mod session;
pub mod settings;
pub mod surface;
pub mod tools;
pub mod viewport;

use std::path::{Path, PathBuf};

use egui::{Key, KeyboardShortcut, Modifiers, ViewportCommand};
use glam::Mat4;

pub use dialog::{FakeDialog, FileDialog, RfdDialog};
pub use document::{DocPaths, Document};
pub use edit::DocEdit;
pub use playback::Playback;
pub use settings::Settings;
pub use viewport::{SceneRef, SelectMode, Tool, Viewport, ViewportResponse};

use crate::atomic::save_atomic;
use crate::bind::JointVolume;
use crate::formats::{skel::write_skel, skin::write_skin};
use crate::paint::brush::{self, BrushMode, BrushSettings, Stroke};
use crate::sample::SampleKind;
use edit::WeightsState;
use surface::PosedSurface;
use tools::{Job, ToolSettings, WeightOp};
use viewport::VertexPick;

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
    /// End a drag of a joint's volume in the view: one edit from this volume to the current one.
    CommitVolume(usize, JointVolume),
    /// Start a bind or clean-up run on a worker thread; its result becomes one edit.
    RunWeights(WeightOp),
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
    Play,
    Pause,
    SetTime(f32),
    SetLooping(bool),
    SetSpeed(f32),
    /// Make the document's glTF animation with this index the clip.
    ChooseClip(usize),
}

/// The status bar's message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub is_error: bool,
    /// Further lines (warnings), shown as the message's tooltip.
    pub details: Vec<String>,
}

impl Status {
    /// A message with warnings: the text says how many there are, the tooltip lists them.
    fn with_warnings(mut text: String, warnings: Vec<String>) -> Self {
        if !warnings.is_empty() {
            text += &format!(" ({} warnings; hover for the list)", warnings.len());
        }
        Self {
            text,
            is_error: false,
            details: warnings,
        }
    }
}

/// A vertex being moved with the Move tool: where it was when the drag began, its row then, and its row now.
struct MoveDrag {
    vertex: u32,
    start: glam::Vec3,
    before: tools::Row,
    now: tools::Row,
}

/// Containment volumes as a bind would use them: (document generation, volume settings, radius per joint,
/// scaled segments as (joint, a, b)).
type VolumeCache = (u64, Vec<JointVolume>, Vec<f32>, Vec<(u16, glam::Vec3, glam::Vec3)>);

/// What F / Shift+F change in Paint mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BrushAdjust {
    Radius,
    Strength,
}

/// The sample the editor opens on: deterministic, small enough to build in a blink.
pub const STARTUP_SAMPLE: (SampleKind, usize) = (SampleKind::Creature, 20_000);

pub struct SkinbindApp {
    doc: Document,
    history: undo::Record<DocEdit>,
    playback: Playback,
    settings: Settings,
    settings_path: Option<PathBuf>,
    dialog: Box<dyn FileDialog>,
    loader: load::Loader,
    viewport: Viewport,
    status: Status,
    commands: Vec<Command>,
    drag: Option<(Field, f32)>,
    world: Vec<Mat4>,
    confirm_quit: bool,
    /// Files asked to open while the document has unsaved changes, waiting for Save / Discard / Cancel.
    confirm_open: Option<Vec<PathBuf>>,
    /// A skeleton read (opened alone over a skin) that does not fit the skin: applying it replaces the document,
    /// which has unsaved changes, so it waits for Save / Discard / Cancel.
    confirm_loaded: Option<load::Finished>,
    /// Side panels turned on but hidden this frame because the window is too narrow (named in the status bar).
    hidden_panels: Vec<&'static str>,
    /// The 3D view's size in points, last frame.
    view_size: egui::Vec2,
    /// Joints the last bind warned look like controls, and the document generation that bind left.
    likely_controls: (u64, Vec<usize>),
    /// A path typed by hand, where no file dialog could open: what it is for, and the text so far.
    path_prompt: Option<(PathPurpose, String)>,
    allow_close: bool,
    sent_title: String,
    startup: Option<Startup>,
    shot: Option<Shot>,
    /// The autosave file (None in tests unless set), the time of the last autosave, and whether a recovery
    /// file from a session that did not end cleanly is on offer.
    recovery: Option<PathBuf>,
    last_autosave: Option<std::time::Instant>,
    offer_recovery: bool,
    autosaving: Option<std::thread::JoinHandle<()>>,
    tools: ToolSettings,
    job: Option<Job>,
    /// A save waiting for "save with unweighted vertices?": the `.skel` path and the count.
    confirm_unweighted: Option<(PathBuf, usize)>,
    /// The skin in the current pose, for vertex picking and painting (rebuilt when pose or mesh change).
    surface: Option<PosedSurface>,
    brush: BrushSettings,
    /// The stroke being painted (primary button held in Paint).
    stroke: Option<Stroke>,
    /// Where the brush touches the surface (drawn next frame).
    brush_cursor: Option<viewport::BrushCursor>,
    /// F / Shift+F: the brush radius or strength being changed by moving the mouse, with its value and the
    /// pointer's x when it began.
    brush_adjust: Option<(BrushAdjust, f32, f32)>,
    /// The view's shading before the Paint tool switched it to the weights, put back when Paint is left.
    shading_before_paint: Option<crate::render::Shading>,
    /// The welded mesh graph for the Smooth brush, with the generation it was built for.
    graph: Option<(u64, crate::adjust::graph::MeshGraph)>,
    /// The vertex being dragged with the Move tool.
    moving: Option<MoveDrag>,
    /// The containment volumes as a bind would use them (radii and scaled segments), for the generation and the
    /// volume settings they were computed for.
    volume_cache: Option<VolumeCache>,
    /// The selected joint's volume for the view.
    volume_overlay: Option<viewport::VolumeOverlay>,
    /// A drag of a volume's outline in the view: the joint and its volume when the drag began.
    volume_before: Option<(usize, JointVolume)>,
    /// X-mirror painting: each vertex's partner across x = 0 and each joint's, with the generation.
    mirror_map: Option<(u64, Vec<Option<u32>>, Vec<u16>)>,
    /// The selected vertices where the current pose puts them (drawn as dots).
    selected_points: Vec<glam::Vec3>,
}

/// What `skinbind open` asks for once its files are loaded: a joint selected, a view, a time, and for docs
/// and the screenshot test, a screenshot of the window written to a PNG before the window closes.
#[derive(Clone, Debug, Default)]
pub struct Startup {
    pub select: Option<String>,
    pub shading: Option<crate::render::Shading>,
    pub dual_quaternion: bool,
    pub tool: Option<Tool>,
    /// Vertices to select.
    pub vertices: Option<Vec<u32>>,
    pub time: Option<f32>,
    pub screenshot: Option<PathBuf>,
}

/// A screenshot on its way: frames drawn since the scene was ready, and where the image goes.
struct Shot {
    path: PathBuf,
    frames: u32,
    requested: bool,
    result: std::sync::Arc<std::sync::Mutex<Option<Result<(), String>>>>,
}

/// Frames drawn before the screenshot, so fonts, GPU upload and layout have settled.
const SHOT_FRAMES: u32 = 10;

impl SkinbindApp {
    fn with_parts(
        doc: Document,
        dialog: Box<dyn FileDialog>,
        viewport: Viewport,
        settings: Settings,
        settings_path: Option<PathBuf>,
    ) -> Self {
        let world = doc.world_from_joint();
        Self {
            doc,
            history: undo::Record::new(),
            playback: Playback::default(),
            settings,
            settings_path,
            dialog,
            loader: load::Loader::default(),
            viewport,
            status: Status::default(),
            commands: Vec::new(),
            drag: None,
            world,
            confirm_quit: false,
            confirm_open: None,
            confirm_loaded: None,
            hidden_panels: Vec::new(),
            view_size: egui::Vec2::ZERO,
            likely_controls: (u64::MAX, Vec::new()),
            path_prompt: None,
            allow_close: false,
            sent_title: String::new(),
            startup: None,
            shot: None,
            recovery: None,
            last_autosave: None,
            offer_recovery: false,
            autosaving: None,
            tools: ToolSettings::default(),
            job: None,
            confirm_unweighted: None,
            surface: None,
            brush: BrushSettings::default(),
            stroke: None,
            brush_cursor: None,
            brush_adjust: None,
            shading_before_paint: None,
            graph: None,
            mirror_map: None,
            volume_cache: None,
            volume_overlay: None,
            volume_before: None,
            moving: None,
            selected_points: Vec::new(),
        }
    }

    /// The app in a window: the startup sample, then `paths` loaded in the background.
    pub fn new(cc: &eframe::CreationContext<'_>, paths: Vec<PathBuf>, startup: Startup) -> Self {
        let doc = match Document::sample(STARTUP_SAMPLE.0, STARTUP_SAMPLE.1) {
            Ok(d) => d,
            // The sample builder fails only above 2^27 vertices; fall back to the smallest one.
            Err(_) => Document::sample(SampleKind::Tube, 0).unwrap_or_else(|_| unreachable_sample()),
        };
        let settings_path = Settings::default_path();
        let settings = settings_path.as_deref().map(Settings::load).unwrap_or_default();
        let mut app = Self::with_parts(
            doc,
            Box::new(RfdDialog),
            Viewport::new(cc.gl.clone()),
            settings,
            settings_path,
        );
        app.loader.request(paths);
        app.startup = Some(startup);
        let recovery = session::recovery_path(app.settings_path.as_deref());
        app.set_recovery_path(recovery);
        app
    }

    /// Autosave to `path` (and offer to restore it now if a file is already there: the last session did not
    /// end cleanly).
    pub fn set_recovery_path(&mut self, path: Option<PathBuf>) {
        self.offer_recovery = path.as_deref().is_some_and(Path::is_file);
        self.recovery = path;
    }

    /// Whether the offer to restore an autosaved session is showing.
    pub fn is_offering_recovery(&self) -> bool {
        self.offer_recovery
    }

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

    fn view_state(&self) -> session::ViewState {
        session::ViewState {
            camera: Some(self.viewport.camera),
            view: Some(self.viewport.settings),
            time: self.playback.time,
        }
    }

    /// The work is safe (saved, or the window closes on purpose): no recovery file is needed.
    fn drop_recovery(&mut self) {
        self.finish_autosave();
        if let Some(p) = &self.recovery {
            let _ = std::fs::remove_file(p);
        }
    }

    /// Replace the document and view with a session's.
    fn apply_session(&mut self, doc: Document, view: session::ViewState, source: &Path) {
        let generation = self.doc.generation;
        self.doc = doc;
        self.doc.generation = generation;
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

    /// The app for tests: this document, this dialog, no settings file, no GL context.
    pub fn new_for_test(doc: Document, dialog: Box<dyn FileDialog>) -> Self {
        Self::with_parts(doc, dialog, Viewport::new(None), Settings::default(), None)
    }

    pub fn document(&self) -> &Document {
        &self.doc
    }

    pub fn playback(&self) -> &Playback {
        &self.playback
    }

    pub fn status(&self) -> &Status {
        &self.status
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Whether the document differs from what was last saved or loaded.
    pub fn is_dirty(&self) -> bool {
        !self.history.is_saved()
    }

    /// The window title (sent to the window whenever it changes).
    pub fn title(&self) -> String {
        self.doc.title(self.is_dirty())
    }

    /// Whether no load is running or waiting.
    pub fn is_idle(&self) -> bool {
        self.loader.is_idle() && self.job.is_none()
    }

    /// The 3D view (its camera and where it was drawn).
    /// The 3D view's size in points, as last drawn.
    pub fn view_size(&self) -> egui::Vec2 {
        self.view_size
    }

    /// Side panels turned on but hidden because the window is too narrow.
    pub fn hidden_panels(&self) -> &[&'static str] {
        &self.hidden_panels
    }

    pub fn viewport(&self) -> &Viewport {
        &self.viewport
    }

    /// The history's edits by name, oldest first.
    pub fn history_names(&self) -> Vec<String> {
        self.history.entries().map(|e| e.to_string()).collect()
    }

    /// The brush settings (tests set them the way the panel does).
    pub fn brush_mut(&mut self) -> &mut BrushSettings {
        &mut self.brush
    }

    /// Where the brush touched the surface this frame.
    pub fn brush_cursor(&self) -> Option<viewport::BrushCursor> {
        self.brush_cursor
    }

    /// The Weights panel's settings (tests change them the way the panel does).
    pub fn tools_mut(&mut self) -> &mut ToolSettings {
        &mut self.tools
    }

    /// Whether Save is waiting for "save with unweighted vertices?".
    pub fn is_confirming_unweighted(&self) -> bool {
        self.confirm_unweighted.is_some()
    }

    /// Whether the quit confirmation is showing.
    pub fn is_confirming_quit(&self) -> bool {
        self.confirm_quit
    }

    /// What the viewport is given this frame (the app draws it with exactly this).
    pub fn scene(&self) -> SceneRef<'_> {
        let mut scene = scene_ref(&self.doc, &self.world, &self.selected_points);
        scene.brush = self.brush_cursor;
        scene.volume = self.volume_overlay.as_ref();
        scene
    }

    /// Queue a command as if a panel had (for the command line and tests).
    pub fn queue(&mut self, command: Command) {
        self.commands.push(command);
    }

    /// Draw one frame into `ui` (the whole window) and apply what it asked for.
    pub fn show(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.handle_input(&ctx);
        self.poll_loader(&ctx);
        self.poll_job(&ctx);
        self.apply_startup(&ctx);
        self.step_playback(&ctx);

        // Side panels share at most half the window; in a narrow one the last give way (see
        // `panels::side_panel_widths`). Worked out first, so that this frame's status bar names the hidden ones.
        use panels::Side;
        let shown: Vec<Side> = Side::ALL
            .into_iter()
            .filter(|s| match s {
                Side::Properties => self.settings.show_properties,
                Side::Outliner => self.settings.show_outliner,
                Side::Weights => self.settings.show_weights,
                Side::History => self.settings.show_history,
            })
            .collect();
        let widths = panels::side_panel_widths(ctx.content_rect().width(), &shown);
        self.hidden_panels = widths.iter().filter(|w| w.1.is_none()).map(|w| w.0.name()).collect();
        let undo_text = self.history.can_undo().then(|| self.history.undo_string()).flatten();
        let redo_text = self.history.can_redo().then(|| self.history.redo_string()).flatten();
        let mut cmds = std::mem::take(&mut self.commands);
        {
            let view = panels::View {
                doc: &self.doc,
                settings: &self.settings,
                undo_text,
                redo_text,
                loading: self.loader.busy(),
                status: &self.status,
                hidden_panels: &self.hidden_panels,
            };
            egui::Panel::top("menu").show(ui, |ui| panels::menu_bar(ui, &view, &mut self.viewport, &mut cmds));
            if self.settings.show_status {
                egui::Panel::bottom("status").show(ui, |ui| panels::status_bar(ui, &view));
            }
            if self.settings.show_timeline {
                egui::Panel::bottom("timeline")
                    .show(ui, |ui| panels::timeline(ui, &self.doc, &self.playback, &mut cmds));
            }
            let width_of = |side: Side| widths.iter().find(|w| w.0 == side).and_then(|w| w.1);
            let sized = |panel: egui::Panel, max: f32, default: f32| {
                panel
                    .resizable(true)
                    .size_range(panels::MIN_PANEL_WIDTH.min(max)..=max)
                    .default_size(default.min(max))
            };
            if let Some(max) = width_of(Side::Outliner) {
                sized(egui::Panel::left("outliner"), max, Side::Outliner.default_width())
                    .show(ui, |ui| panels::outliner(ui, &self.doc, &mut cmds));
            }
            if let Some(max) = width_of(Side::History) {
                let entries: Vec<String> = self.history.entries().map(|e| e.to_string()).collect();
                let (head, saved) = (self.history.head(), self.history.saved());
                sized(egui::Panel::right("history"), max, Side::History.default_width())
                    .show(ui, |ui| panels::history(ui, &entries, head, saved, &mut cmds));
            }
            if let Some(max) = width_of(Side::Weights) {
                let busy = self.job.as_ref().map(|j| j.op);
                sized(egui::Panel::left("weights"), max, Side::Weights.default_width()).show(ui, |ui| {
                    let controls: &[usize] = if self.likely_controls.0 == self.doc.generation {
                        &self.likely_controls.1
                    } else {
                        &[]
                    };
                    panels::weights(
                        ui,
                        &self.doc,
                        &mut self.tools,
                        &mut self.viewport.tool,
                        &mut self.brush,
                        panels::WeightJobs {
                            busy,
                            likely_controls: controls,
                        },
                        &mut cmds,
                    )
                });
            }
            if let Some(max) = width_of(Side::Properties) {
                sized(egui::Panel::right("properties"), max, Side::Properties.default_width())
                    .show(ui, |ui| panels::properties(ui, &self.doc, &mut self.drag, &mut cmds));
            }
            self.selected_points = surface::posed_points(&self.doc, &self.world, &self.doc.selected_vertices);
            self.update_volume_overlay();
            self.follow_tool();
            let mut scene = scene_ref(&self.doc, &self.world, &self.selected_points);
            scene.brush = self.brush_cursor;
            scene.volume = self.volume_overlay.as_ref();
            let viewport = &mut self.viewport;
            let response = egui::CentralPanel::default()
                .frame(egui::Frame::NONE)
                .show(ui, |ui| viewport.show(ui, &scene))
                .inner;
            self.view_size = egui::vec2(response.size.x, response.size.y);
            if let Some(j) = response.clicked_joint {
                cmds.push(Command::Select(Some(j)));
            }
            if let Some(pick) = response.vertex_pick {
                self.pick_vertices(pick, response.size);
            }
            self.paint_frame(&ctx, &response);
            if let (Some((r, done)), Some(j)) = (response.volume_radius, self.doc.selected) {
                // The view's own drag state: the Properties field of the same radius must not end it.
                if self.volume_before.is_none_or(|(k, _)| k != j) {
                    self.volume_before = self.doc.volumes.get(j).map(|v| (j, *v));
                }
                cmds.push(Command::Live(Field::VolumeRadius(j), r));
                if done {
                    if let Some((k, before)) = self.volume_before.take() {
                        cmds.push(Command::CommitVolume(k, before));
                    }
                }
            }
            self.move_frame(&response);
        }
        self.quit_modal(&ctx);
        self.open_modal(&ctx);
        self.misfit_modal(&ctx);
        self.path_modal(&ctx);
        self.unweighted_modal(&ctx, &mut cmds);
        self.recovery_modal(&ctx, &mut cmds);
        self.drop_overlay(&ctx);
        let changed = !cmds.is_empty();
        for c in cmds {
            self.apply(&ctx, c);
        }
        if changed {
            self.world = self.doc.world_from_joint();
            ctx.request_repaint();
        }
        self.upload_changed_rows();
        if self.recovery.is_some() && self.is_dirty() && !self.offer_recovery {
            let due = self
                .last_autosave
                .is_none_or(|t| t.elapsed().as_secs_f64() >= session::AUTOSAVE_SECONDS);
            if due {
                self.autosave();
            }
            ctx.request_repaint_after(std::time::Duration::from_secs_f64(session::AUTOSAVE_SECONDS));
        }
        let title = self.title();
        if title != self.sent_title {
            ctx.send_viewport_cmd(ViewportCommand::Title(title.clone()));
            self.sent_title = title;
        }
    }

    fn handle_input(&mut self, ctx: &egui::Context) {
        if ctx.input(|i| i.viewport().close_requested()) && self.is_dirty() && !self.allow_close {
            ctx.send_viewport_cmd(ViewportCommand::CancelClose);
            self.confirm_quit = true;
        }
        let dropped: Vec<PathBuf> = ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).collect());
        if !dropped.is_empty() {
            self.commands.push(Command::OpenPaths(dropped));
        }
        // A drag whose widget vanished (the selection changed under it) still ends as one edit.
        if let Some((f, before)) = self.drag {
            if !ctx.input(|i| i.pointer.any_down()) {
                self.commands.push(Command::Commit(f, before));
                self.drag = None;
            }
        }
        let typing = ctx.egui_wants_keyboard_input();
        let shortcut = |m: Modifiers, k: Key| ctx.input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(m, k)));
        let shift = Modifiers::COMMAND | Modifiers::SHIFT;
        if !typing {
            // Shift first: the plain shortcut would also match with shift held.
            if shortcut(shift, Key::Z) || shortcut(Modifiers::COMMAND, Key::Y) {
                self.commands.push(Command::Redo);
            } else if shortcut(Modifiers::COMMAND, Key::Z) {
                self.commands.push(Command::Undo);
            }
        }
        if shortcut(shift, Key::S) {
            self.commands.push(Command::SaveAs);
        } else if shortcut(Modifiers::COMMAND, Key::S) {
            self.commands.push(Command::Save);
        }
        if shortcut(Modifiers::COMMAND, Key::O) {
            self.commands.push(Command::Open);
        }
        if shortcut(Modifiers::COMMAND, Key::Q) {
            self.commands.push(Command::Quit);
        }
    }

    /// Once the command line's files are in: select, set the view and time, and start the screenshot.
    fn apply_startup(&mut self, ctx: &egui::Context) {
        if !self.loader.is_idle() {
            return;
        }
        if let Some(st) = self.startup.take() {
            if let Some(name) = &st.select {
                match self.doc.skeleton.find(name).first() {
                    Some(&j) => self.commands.push(Command::Select(Some(j))),
                    None => {
                        self.status = Status {
                            text: format!("no joint named `{name}`"),
                            is_error: true,
                            details: Vec::new(),
                        }
                    }
                }
            }
            if let Some(shading) = st.shading {
                self.viewport.settings.shading = shading;
            }
            self.viewport.settings.dual_quaternion |= st.dual_quaternion;
            if let Some(t) = st.tool {
                self.viewport.tool = t;
            }
            if let Some(v) = st.vertices {
                self.commands.push(Command::SelectVertices(v));
            }
            if let Some(t) = st.time {
                self.commands.push(Command::SetTime(t));
            }
            self.shot = st.screenshot.map(|path| Shot {
                path,
                frames: 0,
                requested: false,
                result: Default::default(),
            });
        }
        let Some(shot) = &mut self.shot else { return };
        shot.frames += 1;
        ctx.request_repaint();
        if shot.frames >= SHOT_FRAMES && !shot.requested {
            shot.requested = true;
            let (path, result, repaint) = (shot.path.clone(), shot.result.clone(), ctx.clone());
            ctx.request_screenshot(move |image| {
                let done = save_color_image(&image, &path);
                if let Ok(mut r) = result.lock() {
                    *r = Some(done);
                }
                repaint.request_repaint();
            });
        }
        let finished = shot.result.lock().ok().and_then(|mut r| r.take());
        if let Some(done) = finished {
            match done {
                Ok(()) => eprintln!("wrote {}", shot.path.display()),
                Err(e) => eprintln!("{}: cannot write the screenshot: {e}", shot.path.display()),
            }
            self.shot = None;
            self.allow_close = true;
            ctx.send_viewport_cmd(ViewportCommand::Close);
        }
    }

    fn poll_loader(&mut self, ctx: &egui::Context) {
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

    fn step_playback(&mut self, ctx: &egui::Context) {
        if !self.playback.playing {
            return;
        }
        let Some(range) = self.doc.clip.as_ref().map(|c| c.range) else {
            self.playback.playing = false;
            return;
        };
        let dt = ctx.input(|i| i.stable_dt).min(0.1);
        let p = self.playback;
        let (t, go) = playback::advance(p.time, dt, p.speed, range, p.looping);
        self.playback.playing = go;
        self.set_time(t);
        self.world = self.doc.world_from_joint();
        if go {
            ctx.request_repaint();
        }
    }

    fn set_time(&mut self, t: f32) {
        self.playback.time = t;
        if let Some(clip) = &self.doc.clip {
            clip.apply(&self.doc.skeleton, t, &mut self.doc.pose);
        }
    }

    fn field_value(&self, field: Field) -> Option<f32> {
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
    fn volume_with(&self, field: Field, value: f32) -> Option<(usize, JointVolume)> {
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
    fn record_volume(&mut self, joint: usize, before: JointVolume, after: JointVolume) {
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
    fn record_field(&mut self, field: Field, before: f32, after: f32) {
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
            Command::SetWeight { vertices, joint, value } => self.set_weight(&vertices, joint, value),
            Command::Flood => self.flood(),
            Command::SelectVertices(mut v) => {
                let n = self.doc.skin.as_ref().map_or(0, |k| k.vertex_count()) as u32;
                v.retain(|&x| x < n);
                v.sort_unstable();
                v.dedup();
                self.doc.selected_vertices = v;
            }
            Command::Live(Field::Dof { joint, axis }, v) => self.doc.pose.set_dof(&self.doc.skeleton, joint, axis, v),
            Command::Live(Field::Root(axis), v) => {
                if axis < 3 && v.is_finite() {
                    self.doc.pose.root_translation[axis] = v;
                }
            }
            Command::Live(f @ (Field::VolumeRadius(_) | Field::VolumeLength(_)), v) => {
                if let Some((j, vol)) = self.volume_with(f, v) {
                    self.doc.volumes[j] = vol;
                }
            }
            Command::SetVolume(joint, after) => {
                if let Some(before) = self.doc.volumes.get(joint).copied() {
                    self.record_volume(joint, before, after);
                }
            }
            Command::RunWeights(op) => {
                if self.job.is_some() {
                    return;
                }
                let repaint = ctx.clone();
                match Job::start(op, &self.doc, &self.tools, move || repaint.request_repaint()) {
                    Ok(job) => self.job = Some(job),
                    Err(e) => self.set_status(e, true),
                }
            }
            Command::ConfirmUnweighted(save) => {
                if let Some((path, _)) = self.confirm_unweighted.take() {
                    if save {
                        self.write_rig(&path);
                    }
                }
            }
            Command::CommitVolume(joint, before) => {
                if let Some(after) = self.doc.volumes.get(joint).copied() {
                    self.record_volume(joint, before, after);
                }
            }
            Command::SetFilePose => match self.doc.skeleton_with_current_pose() {
                Ok(after) if after != self.doc.skeleton => {
                    let before = Box::new(self.doc.skeleton.clone());
                    self.history.edit(
                        &mut self.doc,
                        DocEdit::SetFilePose {
                            before,
                            after: Box::new(after),
                        },
                    );
                    self.set_status(
                        "The current pose is now the file pose; Save writes it".to_owned(),
                        false,
                    );
                }
                Ok(_) => self.set_status("The file pose already is the current pose".to_owned(), false),
                Err(e) => self.set_status(format!("Cannot set the file pose: {e}"), true),
            },
            Command::ExcludeControls(joints) => {
                let mut names = Vec::new();
                for j in joints {
                    if self.doc.deform.get(j).copied() == Some(true) {
                        let name = self.doc.joint_label(j);
                        self.history.edit(
                            &mut self.doc,
                            DocEdit::SetDeform {
                                joint: j,
                                name: name.clone(),
                                before: true,
                                after: false,
                            },
                        );
                        names.push(name);
                    }
                }
                self.likely_controls.1.clear();
                self.set_status(
                    format!(
                        "{} no longer deform: Bind Skin again to weight without them",
                        names.join(", ")
                    ),
                    false,
                );
            }
            Command::SetDeform(joint, after) => {
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
            Command::SetLock(joint, after) => {
                if let Some(before) = self.doc.locks.get(joint).copied() {
                    if before != after {
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
            }
            Command::Commit(field, before) => {
                if let Some(after) = self.field_value(field) {
                    self.record_field(field, before, after);
                }
            }
            Command::SetField(field, before, after) => self.record_field(field, before, after),
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
            Command::Open => {
                let started = std::time::Instant::now();
                let picked = self.dialog.pick_files();
                match picked {
                    Some(paths) => self.open_or_ask(paths, ctx),
                    None => self.no_dialog(PathPurpose::Open, started, String::new()),
                }
            }
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
            Command::Recover(restore) => {
                self.offer_recovery = false;
                if let Some(p) = self.recovery.clone() {
                    if restore {
                        match session::SessionFile::load(&p).and_then(|s| s.restore(&p, session::Origin::Recovery)) {
                            Ok((doc, view)) => self.apply_session(doc, view, &p),
                            Err(e) => {
                                self.status = Status {
                                    text: format!("{e:#}"),
                                    is_error: true,
                                    details: Vec::new(),
                                }
                            }
                        }
                    } else {
                        let _ = std::fs::remove_file(&p);
                    }
                }
            }
            Command::Quit => {
                if self.is_dirty() {
                    self.confirm_quit = true;
                } else {
                    self.drop_recovery();
                    self.allow_close = true;
                    ctx.send_viewport_cmd(ViewportCommand::Close);
                }
            }
            Command::ClearRecent => {
                self.settings.recent.clear();
                self.save_settings();
            }
            Command::Toggle(t) => {
                let s = &mut self.settings;
                let flag = match t {
                    ViewToggle::Outliner => &mut s.show_outliner,
                    ViewToggle::Properties => &mut s.show_properties,
                    ViewToggle::Timeline => &mut s.show_timeline,
                    ViewToggle::Status => &mut s.show_status,
                    ViewToggle::History => &mut s.show_history,
                    ViewToggle::Weights => &mut s.show_weights,
                };
                *flag = !*flag;
                self.save_settings();
            }
            Command::Play => {
                if let Some(clip) = &self.doc.clip {
                    let (lo, hi) = (clip.range.0.min(clip.range.1), clip.range.0.max(clip.range.1));
                    // Playing from the end of a clip that does not loop starts it over.
                    if !self.playback.looping && self.playback.speed >= 0.0 && self.playback.time >= hi {
                        self.set_time(lo);
                    }
                    self.playback.playing = true;
                    ctx.request_repaint();
                }
            }
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

    /// Make the glTF model's animation `i` the clip, stopped at its start.
    fn choose_clip(&mut self, i: usize) {
        let Some(named) = self.doc.clips.get(i) else { return };
        let clip = named.clip.clone();
        let start = clip.range.0.min(clip.range.1);
        self.doc.clip = Some(clip);
        self.doc.clip_choice = Some(i);
        self.doc.paths.anim = None;
        self.playback.playing = false;
        self.set_time(start);
    }

    fn save_settings(&mut self) {
        if let Some(p) = &self.settings_path {
            if let Err(e) = self.settings.save(p) {
                self.set_status(format!("cannot save settings: {e:#}"), true);
            }
        }
    }

    fn apply_loaded(&mut self, done: load::Finished) {
        let loaded = match done.result {
            Ok(l) => l,
            Err(e) => {
                self.set_status(format!("{e:#}"), true);
                return;
            }
        };
        let lone_skeleton = loaded.skin.is_none() && loaded.gltf.is_none() && loaded.session.is_none();
        if let (Some((skel, path)), true, Some(_)) = (&loaded.skeleton, lone_skeleton, &self.doc.skin) {
            if skel.len() == self.doc.skeleton.len() {
                let after = edit::SkeletonState {
                    skeleton: skel.clone(),
                    pose: crate::model::Pose::from_file(skel),
                    path: Some(path.clone()),
                };
                let before = Box::new(edit::SkeletonState::of(&self.doc));
                self.history.edit(
                    &mut self.doc,
                    DocEdit::ReplaceSkeleton {
                        before,
                        after: Box::new(after),
                    },
                );
                self.settings.add_recent(&done.paths);
                self.save_settings();
                self.status = Status::with_warnings(
                    format!(
                        "Replaced the skeleton with {}; the skin and its weights stay (Ctrl+Z brings the old one back)",
                        path.display()
                    ),
                    loaded.warnings,
                );
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
        self.apply_loaded_now(done.paths, loaded);
    }

    /// Apply what a batch read: a new document, or parts of one (a clip).
    fn apply_loaded_now(&mut self, paths: Vec<PathBuf>, loaded: load::Loaded) {
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
        if let Some((skel, path)) = loaded.skeleton {
            // A new skeleton drops the old skin and clip: they were made for another skeleton.
            let mut doc = Document::new(file_name(&path), skel, None, None);
            if loaded.gltf.is_some() {
                doc.paths.gltf = Some(path);
            } else {
                doc.paths.skel = Some(path);
            }
            self.doc = doc;
            self.playback = Playback {
                looping: self.playback.looping,
                speed: self.playback.speed,
                ..Playback::default()
            };
        }
        if let Some((skin, path)) = loaded.skin {
            self.doc.skin = Some(skin);
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
        self.status = Status::with_warnings(format!("Opened {}", names.join(", ")), loaded.warnings);
    }

    /// Save in place, or ask for a name when the document has no `.skel` file yet. Returns whether it saved.
    fn save(&mut self) -> bool {
        match self.doc.paths.skel.clone() {
            Some(p) => self.save_to(&p),
            None => self.save_as(),
        }
    }

    fn save_as(&mut self) -> bool {
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
            .map_or_else(|| "rig.skel".to_owned(), |p| file_name(p));
        let Some(path) = self.ask_save_path(PathPurpose::SaveAs, suggestion) else {
            return false;
        };
        self.save_as_to(path)
    }

    fn save_as_to(&mut self, mut path: PathBuf) -> bool {
        if path.extension().is_none() {
            path.set_extension("skel");
        }
        self.save_to(&path)
    }

    /// Ask where to save (`suggestion` the name offered); where no dialog opens, the path field asks instead and
    /// `None` comes back now.
    fn ask_save_path(&mut self, purpose: PathPurpose, suggestion: String) -> Option<PathBuf> {
        let started = std::time::Instant::now();
        let path = self.dialog.save_file(&suggestion);
        if path.is_none() {
            self.no_dialog(purpose, started, suggestion);
        }
        path
    }

    /// A file dialog gave no answer. Sooner than anyone could cancel one, it did not open at all (no desktop
    /// portal or zenity on the machine): say so, and ask for the path by hand.
    fn no_dialog(&mut self, purpose: PathPurpose, started: std::time::Instant, suggestion: String) {
        if started.elapsed() < NO_DIALOG_WITHIN {
            self.set_status(
                "No file dialog could open on this desktop (no portal or zenity): type the path instead",
                true,
            );
            self.path_prompt = Some((purpose, suggestion));
        }
    }

    /// The path field shown where no file dialog opens.
    fn path_modal(&mut self, ctx: &egui::Context) {
        let Some((purpose, mut text)) = self.path_prompt.take() else {
            return;
        };
        let (title, action) = match purpose {
            PathPurpose::Open => ("Open a file", "Open"),
            PathPurpose::SaveAs => ("Save the skeleton (and skin beside it) as", "Save"),
            PathPurpose::SaveSession => ("Save the session as", "Save"),
            PathPurpose::ExportGlb => ("Export the rig as .glb to", "Export"),
        };
        let (mut ok, mut cancel) = (false, false);
        let modal = egui::Modal::new(egui::Id::unique("path-prompt")).show(ctx, |ui| {
            ui.heading(title);
            ui.horizontal(|ui| {
                let label = ui.label("Path");
                let edit = ui
                    .add(egui::TextEdit::singleline(&mut text).desired_width(420.0))
                    .labelled_by(label.id);
                ok |= edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            });
            ui.horizontal(|ui| {
                ok |= ui
                    .add_enabled(!text.trim().is_empty(), egui::Button::new(action))
                    .clicked();
                cancel |= ui.button("Cancel").clicked();
            });
        });
        cancel |= modal.should_close() && !ok;
        if cancel {
            return;
        }
        if !ok || text.trim().is_empty() {
            self.path_prompt = Some((purpose, text));
            return;
        }
        let path = PathBuf::from(text.trim());
        match purpose {
            PathPurpose::Open => self.open_or_ask(vec![path], ctx),
            PathPurpose::SaveAs => {
                self.save_as_to(path);
            }
            PathPurpose::SaveSession => {
                self.save_session_to(path);
            }
            PathPurpose::ExportGlb => {
                self.export_glb_to(path);
            }
        }
    }

    /// Write the skeleton (with the current pose) to `skel_path` and the skin beside it: to its own file when
    /// saving in place, else to the same name with `.skin`.
    fn save_to(&mut self, skel_path: &Path) -> bool {
        let unweighted = self.doc.unweighted_vertices();
        if unweighted > 0 {
            // Export refuses a rig with unweighted vertices unless told otherwise (as `convert` does).
            self.confirm_unweighted = Some((skel_path.to_path_buf(), unweighted));
            return false;
        }
        self.write_rig(skel_path)
    }

    /// Write the rig without asking (see [`Self::save_to`]).
    fn write_rig(&mut self, skel_path: &Path) -> bool {
        let in_place = self.doc.paths.skel.as_deref() == Some(skel_path);
        let skin_path = match (&self.doc.skin, &self.doc.paths.skin) {
            (None, _) => None,
            (Some(_), Some(p)) if in_place => Some(p.clone()),
            (Some(_), _) => Some(skel_path.with_extension("skin")),
        };
        let result = (|| -> anyhow::Result<()> {
            // The skeleton as it is: the current pose is not the rest pose (Edit > Set File Pose makes it so).
            save_atomic(skel_path, |w| write_skel(w, &self.doc.skeleton))?;
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

    /// The weight table's edit: joint `joint` to `value` on `vertices`, each row renormalised around the locks;
    /// vertices where that cannot be done are left as they are and counted in the status bar.
    fn set_weight(&mut self, vertices: &[u32], joint: u16, value: f32) {
        let Some(w) = self.doc.skin.as_ref().and_then(|k| k.weights()) else {
            return;
        };
        let name = self.doc.joint_label(joint as usize);
        if self.doc.is_locked(joint as usize) {
            self.set_status(format!("{name} is locked: unlock it to change its weights"), true);
            return;
        }
        let locks = self.doc.lock_set();
        let mut vs: Vec<u32> = vertices.iter().copied().filter(|&v| (v as usize) < w.len()).collect();
        vs.sort_unstable();
        vs.dedup();
        let (mut changed, mut before, mut after, mut refused) = (Vec::new(), Vec::new(), Vec::new(), 0usize);
        for v in vs {
            let mut row = Vec::new();
            crate::adjust::rows::row_pairs(w, v as usize, &mut row);
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

    /// Painting shows the weights: choosing Paint switches the view to the painted (selected) joint's weights,
    /// and leaving it puts the shading back (unless it was changed to something else meanwhile).
    fn follow_tool(&mut self) {
        use crate::render::Shading;
        let painting = self.viewport.tool == Tool::Paint;
        match (painting, self.shading_before_paint) {
            (true, None) => {
                self.shading_before_paint = Some(self.viewport.settings.shading);
                self.viewport.settings.shading = Shading::Weights;
            }
            (false, Some(before)) => {
                if self.viewport.settings.shading == Shading::Weights {
                    self.viewport.settings.shading = before;
                }
                self.shading_before_paint = None;
            }
            _ => {}
        }
    }

    /// Paint mode, once per frame: the brush cursor on the posed surface, F / Shift+F radius and strength, S to
    /// sample, and strokes (dabs while the button is held, spaced a quarter radius apart; one edit on release).
    fn paint_frame(&mut self, ctx: &egui::Context, response: &ViewportResponse) {
        if self.viewport.tool != Tool::Paint {
            self.brush_cursor = None;
            self.brush_adjust = None;
            self.end_stroke();
            return;
        }
        let (pointer_x, mods) = ctx.input(|i| (i.pointer.hover_pos().map_or(0.0, |p| p.x), i.modifiers));
        // F / Shift+F: move the mouse to change the radius or strength; click or Enter keeps it, Esc or a right
        // click puts it back (Blender's radial control).
        let over_view = response.pointer_ray.is_some();
        let key = |k: Key, m: Modifiers| ctx.input(|i| i.key_pressed(k) && i.modifiers.matches_exact(m));
        if over_view && self.brush_adjust.is_none() && !ctx.egui_wants_keyboard_input() {
            if key(Key::F, Modifiers::SHIFT) {
                self.brush_adjust = Some((BrushAdjust::Strength, self.brush.strength, pointer_x));
            } else if key(Key::F, Modifiers::NONE) {
                self.brush_adjust = Some((BrushAdjust::Radius, self.brush.radius, pointer_x));
            }
        }
        if let Some((what, start, x0)) = self.brush_adjust {
            let dx = pointer_x - x0;
            match what {
                BrushAdjust::Radius => self.brush.radius = (start + dx).max(1.0),
                BrushAdjust::Strength => self.brush.strength = (start + dx / 200.0).clamp(0.0, 1.0),
            }
            let (done, cancel) = ctx.input(|i| {
                (
                    i.key_pressed(Key::Enter) || i.pointer.primary_clicked(),
                    i.key_pressed(Key::Escape) || i.pointer.secondary_clicked(),
                )
            });
            if cancel {
                match what {
                    BrushAdjust::Radius => self.brush.radius = start,
                    BrushAdjust::Strength => self.brush.strength = start,
                }
            }
            if done || cancel {
                self.brush_adjust = None;
            }
        }
        // The posed surface is rebuilt (CPU skinning and a BVH: 100+ ms at 1M vertices) only while the pointer is
        // over the view or a stroke goes on, not on every frame of playback.
        if response.pointer_ray.is_none() && self.stroke.is_none() {
            self.brush_cursor = None;
            return;
        }
        PosedSurface::refresh(&mut self.surface, &self.doc);
        let Some(surface) = self.surface.as_ref() else {
            self.brush_cursor = None;
            return;
        };
        let hit = response.pointer_ray.and_then(|(o, d)| surface.ray_cast(o, d));
        let camera = self.viewport.camera;
        let radius_of = |point: glam::Vec3, brush: &BrushSettings| {
            if brush.world_radius {
                brush.radius
            } else {
                brush.radius * camera.world_per_pixel(point, response.height)
            }
        };
        self.brush_cursor = hit.map(|h| viewport::BrushCursor {
            center: h.point,
            normal: h.normal,
            radius: radius_of(h.point, &self.brush),
        });
        let joint = self.doc.selected.map(|j| j as u16);
        if let (Some(h), Some(j)) = (hit, joint) {
            if key(Key::S, Modifiers::NONE) && !ctx.egui_wants_keyboard_input() {
                if let Some(w) = self.doc.skin.as_ref().and_then(|k| k.weights()) {
                    self.brush.value = brush::sample_weight(w, h.vertex, j);
                    self.set_status(format!("Sampled {:.3}", self.brush.value), false);
                }
            }
        }
        if self.brush_adjust.is_some() {
            return;
        }
        if !response.primary_down {
            self.end_stroke();
            return;
        }
        let Some(j) = joint else {
            if response.primary_pressed {
                self.set_status("Select the joint to paint first (joint tree or Pose tool)", true);
            }
            return;
        };
        if self.doc.skin.as_ref().and_then(|k| k.weights()).is_none() {
            if response.primary_pressed {
                self.set_status("The skin has no weights yet: bind it first", true);
            }
            return;
        }
        if self.doc.is_locked(j as usize) {
            if response.primary_pressed {
                self.set_status(
                    format!("{} is locked: unlock it to paint it", self.doc.joint_label(j as usize)),
                    true,
                );
            }
            return;
        }
        if response.primary_pressed || self.stroke.as_ref().is_some_and(|s| s.joint != j) {
            self.end_stroke();
            let mut stroke = Stroke::new(j);
            // What the painted joint loses where it is alone goes to its parent (a root's to its first child).
            let joints = self.doc.skeleton.joints();
            stroke.fallback = joints[j as usize]
                .parent
                .or_else(|| joints.iter().position(|c| c.parent == Some(j as usize)))
                .map(|f| f as u16);
            self.stroke = Some(stroke);
        }
        let Some(h) = hit else { return };
        let radius = radius_of(h.point, &self.brush);
        let due = self
            .stroke
            .as_ref()
            .is_some_and(|s| s.last.is_none_or(|l| l.distance(h.point) >= 0.25 * radius));
        if !due {
            return;
        }
        let mut brush = self.brush;
        // Ctrl inverts Add and Subtract, as in Blender.
        if mods.ctrl || mods.command {
            brush.mode = match brush.mode {
                BrushMode::Add => BrushMode::Subtract,
                BrushMode::Subtract => BrushMode::Add,
                m => m,
            };
        }
        if brush.mode == BrushMode::Smooth && self.graph.as_ref().is_none_or(|g| g.0 != self.doc.generation) {
            if let Some(skin) = &self.doc.skin {
                self.graph = Some((
                    self.doc.generation,
                    crate::adjust::graph::MeshGraph::new(skin.positions(), skin.triangles()),
                ));
            }
        }
        let locks = self.doc.lock_set();
        let (Some(surface), Some(stroke), Some(base)) = (
            self.surface.as_mut(),
            self.stroke.as_mut(),
            self.doc.skin.as_ref().and_then(|k| k.weights()),
        ) else {
            return;
        };
        let eye = camera.eye();
        let (positions, normals, index) = surface.parts_for_brush();
        let dab_surface = brush::DabSurface {
            positions,
            normals,
            index,
            graph: self.graph.as_ref().map(|g| &g.1),
            eye,
        };
        let mut changed = stroke.dab(base, &dab_surface, h.point, radius, &brush, &locks);
        if brush.mirror && !changed.is_empty() {
            if self.mirror_map.as_ref().is_none_or(|m| m.0 != self.doc.generation) {
                let skin = self.doc.skin.as_ref();
                let positions = skin.map_or(&[][..], |k| k.positions());
                let plane = crate::adjust::mirror::Axis::X;
                let tol = crate::adjust::mirror::default_tolerance(positions);
                let bind = self.doc.bind_world();
                let pivots: Vec<glam::Vec3> = bind.iter().map(|m| m.w_axis.truncate()).collect();
                let size = crate::model::skin::bounds(&pivots).map_or(1.0, |(a, b)| (b - a).length().max(1e-6));
                let joints = crate::adjust::mirror::mirror_joints(&self.doc.skeleton, &bind, plane, 1e-3 * size);
                self.mirror_map = Some((
                    self.doc.generation,
                    crate::adjust::mirror::vertex_partners(positions, plane, tol),
                    joints.partners().to_vec(),
                ));
            }
            if let Some((_, partners, joints)) = &self.mirror_map {
                let jp = joints.get(j as usize).copied().unwrap_or(j);
                let more = stroke.mirror(base, &changed, partners, jp, &locks);
                changed.extend(more);
                changed.sort_unstable();
                changed.dedup();
            }
        }
        if !changed.is_empty() {
            let stroke = &*stroke;
            self.viewport.upload_rows_with(&changed, |v| {
                let r = stroke.row(base, v);
                let (js, ws): (Vec<u16>, Vec<f32>) = r.into_iter().unzip();
                crate::render::pack::pack_row(&js, &ws)
            });
            ctx.request_repaint();
        }
    }

    /// The selected joint's containment volume for the view, when volumes are shown (View menu, or a bind
    /// method that uses them); the volumes are recomputed only when the mesh or the volume settings change.
    fn update_volume_overlay(&mut self) {
        let shown = self.viewport.show_volumes
            || matches!(
                self.tools.method,
                crate::bind::BindMethod::Volume | crate::bind::BindMethod::Hybrid
            );
        let (Some(j), Some(skin), true) = (self.doc.selected, self.doc.skin.as_ref(), shown) else {
            self.volume_overlay = None;
            return;
        };
        let stale = self
            .volume_cache
            .as_ref()
            .is_none_or(|c| c.0 != self.doc.generation || c.1 != self.doc.volumes);
        // A radius set by hand (a drag of the outline) changes only that joint's radius: no recomputing.
        if let Some(c) = self
            .volume_cache
            .as_mut()
            .filter(|c| stale && c.0 == self.doc.generation)
        {
            let only_set_radii = c.1.len() == self.doc.volumes.len()
                && c.1.iter().zip(&self.doc.volumes).all(|(a, b)| {
                    a.length_scale == b.length_scale
                        && (a.radius == b.radius || (a.radius.is_some() && b.radius.is_some()))
                });
            if only_set_radii {
                for (k, v) in self.doc.volumes.iter().enumerate() {
                    if let (Some(r), Some(slot)) = (v.radius, c.2.get_mut(k)) {
                        *slot = r;
                    }
                }
                c.1 = self.doc.volumes.clone();
            }
        }
        let stale = self
            .volume_cache
            .as_ref()
            .is_none_or(|c| c.0 != self.doc.generation || c.1 != self.doc.volumes);
        if stale {
            let opts = crate::bind::BindOptions {
                volumes: self.doc.volumes.clone(),
                ..crate::bind::BindOptions::default()
            };
            let bind = crate::deform::bind_world_from_joint(
                &self.doc.skeleton,
                skin,
                &crate::model::Pose::from_file(&self.doc.skeleton),
            );
            let (radii, segs) = crate::bind::joint_volumes(&self.doc.skeleton, &bind, skin.positions(), &opts);
            self.volume_cache = Some((self.doc.generation, self.doc.volumes.clone(), radii, segs));
        }
        self.volume_overlay = self.volume_cache.as_ref().and_then(|(_, _, radii, segs)| {
            Some(viewport::VolumeOverlay {
                joint: j,
                radius: *radii.get(j)?,
                segments: segs.iter().filter(|s| s.0 as usize == j).map(|s| (s.1, s.2)).collect(),
            })
        });
    }

    /// The Move tool, once per frame: press on the skin to take the nearest vertex, drag it in the plane facing
    /// the view, and its weights are solved (`paint::solve_weights_for_target`) so that skinning puts it under
    /// the pointer; the GPU shows it at once and the release records one edit. The vertex is selected after.
    fn move_frame(&mut self, response: &ViewportResponse) {
        if self.viewport.tool != Tool::Move {
            self.moving = None;
            return;
        }
        let Some((o, d)) = response.pointer_ray else { return };
        if response.primary_pressed {
            PosedSurface::refresh(&mut self.surface, &self.doc);
            let hit = self.surface.as_ref().and_then(|s| s.ray_cast(o, d));
            let w = self.doc.skin.as_ref().and_then(|k| k.weights());
            self.moving = match (hit, w) {
                (Some(h), Some(w)) => {
                    let start = self
                        .surface
                        .as_ref()
                        .map_or(h.point, |s| s.positions[h.vertex as usize]);
                    let mut row = Vec::new();
                    crate::adjust::rows::row_pairs(w, h.vertex as usize, &mut row);
                    Some(MoveDrag {
                        vertex: h.vertex,
                        start,
                        before: row.clone(),
                        now: row,
                    })
                }
                (Some(_), None) => {
                    self.set_status("The skin has no weights yet: bind it first", true);
                    None
                }
                _ => None,
            };
        }
        if !response.primary_down {
            if let Some(m) = self.moving.take() {
                self.doc.selected_vertices = vec![m.vertex];
                if m.now != m.before {
                    self.history.edit(
                        &mut self.doc,
                        DocEdit::SetRows {
                            name: format!("move vertex {}", m.vertex),
                            vertices: vec![m.vertex],
                            before: vec![m.before],
                            after: vec![m.now],
                        },
                    );
                }
            }
            return;
        }
        let Some(m) = self.moving.as_ref() else { return };
        // The target: where the pointer ray meets the plane through the vertex facing the camera.
        let n = (self.viewport.camera.eye() - m.start).normalize_or_zero();
        let denom = d.dot(n);
        if denom.abs() < 1e-9 {
            return;
        }
        let target = o + d * ((m.start - o).dot(n) / denom);
        let Some(row) = self.solve_move(m.vertex, &m.before, target) else {
            return;
        };
        let vertex = m.vertex;
        if let Some(m) = self.moving.as_mut() {
            m.now = row.clone();
        }
        let (js, ws): (Vec<u16>, Vec<f32>) = row.into_iter().unzip();
        self.viewport
            .upload_rows(vertex as usize, vec![crate::render::pack::pack_row(&js, &ws)]);
    }

    /// Weights for `vertex` (whose row was `row`) that put it at `target` in the current pose: candidates are
    /// its joints, the selected joint, and their parents and children (at most 8, locked ones held fixed).
    fn solve_move(&self, vertex: u32, row: &tools::Row, target: glam::Vec3) -> Option<tools::Row> {
        let skin = self.doc.skin.as_ref()?;
        let p = *skin.positions().get(vertex as usize)?;
        let skel = &self.doc.skeleton;
        let bind = crate::deform::bind_world_from_joint(skel, skin, &crate::model::Pose::from_file(skel));
        let m = crate::deform::skinning_matrices(&self.world, &bind);
        let locks = self.doc.lock_set();
        let mut ordered = row.clone();
        ordered.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut cand: Vec<u16> = ordered.iter().map(|x| x.0).collect();
        cand.extend(self.doc.selected.map(|j| j as u16));
        for &(j, _) in &ordered {
            cand.extend(skel.joint(j as usize).and_then(|x| x.parent).map(|p| p as u16));
        }
        for &(j, _) in &ordered {
            cand.extend(skel.children(j as usize).iter().map(|&c| c as u16));
        }
        let mut seen = Vec::new();
        cand.retain(|&j| {
            !seen.contains(&j) && !locks.is_locked(j) && (j as usize) < m.len() && {
                seen.push(j);
                true
            }
        });
        cand.truncate(crate::paint::MAX_CANDIDATES);
        // Locked weights stay; the others share what they leave: t' = (t - sum_L w_l M_l p) / (1 - s_L).
        let locked: tools::Row = row.iter().copied().filter(|x| locks.is_locked(x.0)).collect();
        let s_l: f32 = locked.iter().map(|x| x.1).sum();
        if s_l >= 1.0 - 1e-6 || cand.is_empty() {
            return None;
        }
        let fixed: glam::Vec3 = locked.iter().map(|&(j, w)| m[j as usize].transform_point3(p) * w).sum();
        let t = (target - fixed) / (1.0 - s_l);
        let solved = crate::paint::solve_weights_for_target(p, t, &m, &cand)?;
        let mut out = locked;
        out.extend(
            cand.iter()
                .zip(&solved.weights)
                .filter(|(_, w)| **w > 1e-6)
                .map(|(&j, &w)| (j, w * (1.0 - s_l))),
        );
        let sum: f32 = out.iter().map(|x| x.1).sum();
        if sum.is_nan() || sum <= 0.0 {
            return None;
        }
        // Rounding: the unlocked part absorbs it so the row sums to 1 and locked weights stay bit for bit.
        crate::adjust::rows::normalise_row(&mut out, &locks);
        out.sort_unstable_by_key(|x| x.0);
        Some(out)
    }

    /// Record the stroke being painted, if any, as one edit.
    fn end_stroke(&mut self) {
        let Some(stroke) = self.stroke.take() else { return };
        // Named by what it did: Ctrl turns an Add stroke into Subtract.
        let mode = stroke.mode.unwrap_or(self.brush.mode);
        let joint = self.doc.joint_label(stroke.joint as usize);
        let name = format!("paint {joint} ({})", mode.name().to_lowercase());
        let refused = stroke.refused;
        let (vertices, before, after) = stroke.finish();
        if vertices.is_empty() {
            if refused > 0 {
                self.set_status(
                    format!(
                        "The stroke changed nothing: on its {refused} vertices no other joint could take or give \
                         {joint}'s weight (unlock a joint, or paint the joint that should take it)"
                    ),
                    true,
                );
            }
            return;
        }
        self.history.edit(
            &mut self.doc,
            DocEdit::SetRows {
                name,
                vertices,
                before,
                after,
            },
        );
    }

    /// Flood: the brush value on every selected vertex, or on the whole skin when none is selected.
    fn flood(&mut self) {
        let Some(j) = self.doc.selected else {
            self.set_status("Select the joint to flood first", true);
            return;
        };
        let vertices = if self.doc.selected_vertices.is_empty() {
            (0..self.doc.skin.as_ref().map_or(0, |k| k.vertex_count() as u32)).collect()
        } else {
            self.doc.selected_vertices.clone()
        };
        self.set_weight(&vertices, j as u16, self.brush.value);
    }

    /// Send the rows that row edits changed to the GPU (a whole-mesh change re-uploads everything anyway).
    fn upload_changed_rows(&mut self) {
        if self.doc.changed_rows.is_empty() {
            return;
        }
        let mut rows = std::mem::take(&mut self.doc.changed_rows);
        rows.sort_unstable();
        rows.dedup();
        if let Some(w) = self.doc.skin.as_ref().and_then(|k| k.weights()) {
            self.viewport.upload_changed(w, &rows);
        }
    }

    /// Select vertices with a click or a box in the view (`size` in points), against the posed surface.
    fn pick_vertices(&mut self, pick: VertexPick, size: glam::Vec2) {
        PosedSurface::refresh(&mut self.surface, &self.doc);
        let Some(surface) = &self.surface else {
            return;
        };
        let camera = self.viewport.camera;
        let (picked, mode) = match pick {
            VertexPick::Point(p, mode) => {
                let (o, d) = camera.ray(p, size);
                (surface.ray_cast(o, d).map(|h| vec![h.vertex]).unwrap_or_default(), mode)
            }
            VertexPick::Rect(a, b, mode) => (
                surface::vertices_in_rect(
                    &surface.positions,
                    &surface.normals,
                    camera.eye(),
                    |p| camera.project(p, size).map(|(s, _)| s),
                    a,
                    b,
                ),
                mode,
            ),
        };
        self.doc.selected_vertices = surface::combine_selection(&self.doc.selected_vertices, &picked, mode);
    }

    /// Take a finished bind or clean-up run into the document as one edit.
    fn poll_job(&mut self, ctx: &egui::Context) {
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
                let before = vertices
                    .iter()
                    .map(|&v| {
                        let mut r = Vec::new();
                        crate::adjust::rows::row_pairs(w, v as usize, &mut r);
                        r
                    })
                    .collect();
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
                let after = WeightsState {
                    weights: Some(out.weights),
                    bindings: Some(out.bindings),
                };
                let before = WeightsState::of(&self.doc);
                self.history.edit(
                    &mut self.doc,
                    DocEdit::SetWeights {
                        name: out.name,
                        before: Box::new(before),
                        after: Box::new(after),
                    },
                );
                self.status = Status::with_warnings(out.summary, out.warnings);
                self.likely_controls = (self.doc.generation, out.controls);
            }
            Ok(out) => self.set_status(
                format!("{}: the skin changed while it ran; run it again", out.name),
                true,
            ),
            Err(e) => self.set_status(e, true),
        }
        ctx.request_repaint();
    }

    fn set_status(&mut self, text: impl Into<String>, is_error: bool) {
        self.status = Status {
            text: text.into(),
            is_error,
            details: Vec::new(),
        };
    }

    /// "N vertices have no weights": save anyway, or go back and bind them.
    fn unweighted_modal(&mut self, ctx: &egui::Context, cmds: &mut Vec<Command>) {
        let Some((_, count)) = &self.confirm_unweighted else {
            return;
        };
        let count = *count;
        let asked = cmds.len();
        let modal = egui::Modal::new(egui::Id::unique("confirm-unweighted")).show(ctx, |ui| {
            ui.heading("Unweighted vertices");
            ui.label(format!(
                "{count} vertices have no weights; a program that loads the file may drop or misplace them. \
                 Bind them first (Weights panel), or save anyway."
            ));
            ui.horizontal(|ui| {
                if ui
                    .button("Save anyway")
                    .on_hover_text("Write the files with the unweighted vertices")
                    .clicked()
                {
                    cmds.push(Command::ConfirmUnweighted(true));
                }
                if ui.button("Cancel").on_hover_text("Do not save").clicked() {
                    cmds.push(Command::ConfirmUnweighted(false));
                }
            });
        });
        if modal.should_close() && cmds.len() == asked {
            cmds.push(Command::ConfirmUnweighted(false));
        }
    }

    /// Load `paths`, or first ask (Save / Discard / Cancel) when they would replace a document with unsaved
    /// changes (a skeleton, skin, model or session; an animation or morph alone is added to the document).
    fn open_or_ask(&mut self, paths: Vec<PathBuf>, ctx: &egui::Context) {
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

    /// The question asked when a skeleton opened alone does not fit the skin of a document with unsaved changes.
    fn misfit_modal(&mut self, ctx: &egui::Context) {
        let Some(done) = &self.confirm_loaded else { return };
        let opening = done.paths.iter().map(|p| file_name(p)).collect::<Vec<_>>().join(", ");
        let joints = match &done.result {
            Ok(l) => l.skeleton.as_ref().map_or(0, |s| s.0.len()),
            Err(_) => 0,
        };
        let question = UnsavedQuestion::before_opening(
            "confirm-misfit",
            format!(
                "{opening} has {joints} joints and does not fit the skin of {}, which has {} and changes that are \
                 not saved; opening it replaces the whole document.",
                self.doc.name,
                self.doc.skeleton.len()
            ),
        );
        let Some(answer) = question.ask(ctx) else { return };
        let open = self.go_on_after(answer);
        if let Some(done) = self.confirm_loaded.take() {
            if let (true, Ok(loaded)) = (open, done.result) {
                self.apply_loaded_now(done.paths, loaded);
            }
        }
    }

    /// The question [`Self::open_or_ask`] asks.
    fn open_modal(&mut self, ctx: &egui::Context) {
        let Some(paths) = self.confirm_open.clone() else { return };
        let opening = paths.iter().map(|p| file_name(p)).collect::<Vec<_>>().join(", ");
        let question = UnsavedQuestion::before_opening(
            "confirm-open",
            format!(
                "{} has changes that are not saved; opening {opening} replaces it.",
                self.doc.name
            ),
        );
        let Some(answer) = question.ask(ctx) else { return };
        let open = self.go_on_after(answer);
        self.confirm_open = None;
        if open {
            self.loader.request(paths);
            ctx.request_repaint();
        }
    }

    /// Whether to go on after the answer to an [`UnsavedQuestion`] (saving first when asked to, and not going on
    /// when that fails).
    fn go_on_after(&mut self, answer: UnsavedAnswer) -> bool {
        match answer {
            UnsavedAnswer::Cancel => false,
            UnsavedAnswer::Save => self.save(),
            UnsavedAnswer::Discard => true,
        }
    }

    fn quit_modal(&mut self, ctx: &egui::Context) {
        if !self.confirm_quit {
            return;
        }
        let question = UnsavedQuestion {
            id: "confirm-quit",
            message: format!("{} has changes that are not saved.", self.doc.name),
            save: ("Save and quit", "Save, then close"),
            discard: ("Quit without saving", "Close and lose the changes"),
            cancel_tip: "Keep editing",
        };
        let Some(answer) = question.ask(ctx) else { return };
        let close = self.go_on_after(answer);
        self.confirm_quit = false;
        if close {
            self.drop_recovery();
            self.allow_close = true;
            ctx.send_viewport_cmd(ViewportCommand::Close);
        }
    }

    /// At start, when the last session left a recovery file: restore it, or discard it.
    fn recovery_modal(&mut self, ctx: &egui::Context, cmds: &mut Vec<Command>) {
        if !self.offer_recovery {
            return;
        }
        let when = self
            .recovery
            .as_deref()
            .and_then(|p| std::fs::metadata(p).ok())
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .map_or_else(String::new, |d| {
                format!(" (autosaved {} minutes ago)", d.as_secs() / 60)
            });
        egui::Modal::new(egui::Id::unique("offer-recovery")).show(ctx, |ui| {
            ui.heading("Restore unsaved work?");
            ui.label(format!("The last session did not end cleanly{when}."));
            ui.horizontal(|ui| {
                if ui
                    .button("Restore")
                    .on_hover_text("Open the autosaved session")
                    .clicked()
                {
                    cmds.push(Command::Recover(true));
                }
                if ui
                    .button("Discard")
                    .on_hover_text("Delete the autosaved session")
                    .clicked()
                {
                    cmds.push(Command::Recover(false));
                }
            });
        });
    }

    /// File > Export .glb...: the rig as binary glTF, as `skinbind convert ... -o M.glb` writes it (the skeleton
    /// in its file pose as the rest pose, the skin with its bindings and weights, the current clip sampled at
    /// 30 fps). A document is not changed by exporting, so the unsaved state stays as it was.
    fn export_glb(&mut self) -> bool {
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

    fn export_glb_to(&mut self, mut path: PathBuf) -> bool {
        if path.extension().is_none() {
            path.set_extension("glb");
        }
        let Some(skin) = &self.doc.skin else {
            self.set_status("Nothing to export: open or bind a skin first", true);
            return false;
        };
        let written = crate::formats::glb::write_glb(
            &self.doc.skeleton,
            skin,
            self.doc.clip.as_ref(),
            crate::formats::glb::GlbOptions::default(),
        )
        .map_err(|e| anyhow::anyhow!("{}: not exported: {e}", path.display()))
        .and_then(|bytes| crate::atomic::save_atomic(&path, |w| w.write_all(&bytes)).map_err(Into::into));
        match written {
            Ok(()) => {
                let clip = self
                    .doc
                    .clip
                    .as_ref()
                    .map_or(String::new(), |_| " with its animation".to_string());
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
    fn save_session(&mut self) -> bool {
        let Some(path) = self.ask_save_path(PathPurpose::SaveSession, "session.skinbind".to_owned()) else {
            return false;
        };
        self.save_session_to(path)
    }

    fn save_session_to(&mut self, mut path: PathBuf) -> bool {
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

    fn drop_overlay(&self, ctx: &egui::Context) {
        if ctx.input(|i| i.raw.hovered_files.is_empty()) {
            return;
        }
        let painter = ctx.layer_painter(egui::LayerId::new(egui::Order::Foreground, egui::Id::unique("drop")));
        let rect = ctx.content_rect();
        painter.rect_filled(rect, 0.0, egui::Color32::from_black_alpha(160));
        painter.text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            "Drop .skel, .skin, .anim or .glb files to open them",
            egui::FontId::proportional(22.0),
            egui::Color32::WHITE,
        );
    }
}

/// The viewport's view of the document; [`SkinbindApp::scene`] and the frame's draw both build it here.
fn scene_ref<'a>(doc: &'a Document, world: &'a [Mat4], selected_points: &'a [glam::Vec3]) -> SceneRef<'a> {
    SceneRef {
        skeleton: &doc.skeleton,
        skin: doc.skin.as_ref(),
        generation: doc.generation,
        world_from_joint: world,
        selected: doc.selected,
        deform: &doc.deform,
        brush: None,
        selected_points,
        volume: None,
    }
}

/// The answer to [`UnsavedQuestion`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UnsavedAnswer {
    Save,
    Discard,
    Cancel,
}

/// "Unsaved changes": Save and go on / go on without saving / Cancel, before an action that would lose them
/// (quitting, opening over the document).
struct UnsavedQuestion<'a> {
    id: &'static str,
    message: String,
    /// Label and hover text of the two ways on.
    save: (&'a str, &'a str),
    discard: (&'a str, &'a str),
    cancel_tip: &'a str,
}

impl UnsavedQuestion<'static> {
    /// The question asked before an open would replace a document with unsaved changes.
    fn before_opening(id: &'static str, message: String) -> Self {
        Self {
            id,
            message,
            save: ("Save and open", "Save, then open"),
            discard: (
                "Open without saving",
                "Open and lose the changes (the autosave keeps them until then)",
            ),
            cancel_tip: "Keep editing; open nothing",
        }
    }
}

impl UnsavedQuestion<'_> {
    /// Show the question; the answer once given (closing the window cancels).
    fn ask(&self, ctx: &egui::Context) -> Option<UnsavedAnswer> {
        let mut answer = None;
        let modal = egui::Modal::new(egui::Id::unique(self.id)).show(ctx, |ui| {
            ui.heading("Unsaved changes");
            ui.label(&self.message);
            ui.horizontal(|ui| {
                if ui.button(self.save.0).on_hover_text(self.save.1).clicked() {
                    answer = Some(UnsavedAnswer::Save);
                }
                if ui.button(self.discard.0).on_hover_text(self.discard.1).clicked() {
                    answer = Some(UnsavedAnswer::Discard);
                }
                if ui.button("Cancel").on_hover_text(self.cancel_tip).clicked() {
                    answer = Some(UnsavedAnswer::Cancel);
                }
            });
        });
        if modal.should_close() && answer.is_none() {
            answer = Some(UnsavedAnswer::Cancel);
        }
        answer
    }
}

/// What a typed path is for (see `SkinbindApp::no_dialog`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PathPurpose {
    Open,
    SaveAs,
    SaveSession,
    ExportGlb,
}

/// A file dialog that answers sooner than this never opened.
const NO_DIALOG_WITHIN: std::time::Duration = std::time::Duration::from_millis(150);

fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
}

fn unreachable_sample() -> Document {
    // `make_sample` fails only for targets above 2^27 vertices, so this is never reached; keep a one-joint
    // document rather than a panic on the path that starts the window.
    let skel = crate::model::Skeleton::new(vec![crate::model::Joint::new("root", None, glam::Vec3::ZERO)]);
    match skel {
        Ok(s) => Document::new("empty", s, None, None),
        Err(_) => unreachable!("one root joint is a valid skeleton"),
    }
}

impl eframe::App for SkinbindApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
    }
}

/// Write an egui screenshot as PNG (atomically).
fn save_color_image(image: &egui::ColorImage, path: &std::path::Path) -> Result<(), String> {
    let [w, h] = image.size;
    let img = crate::render::offscreen::Image {
        width: w as u32,
        height: h as u32,
        pixels: image.pixels.iter().map(|c| c.to_array()).collect(),
    };
    img.save_png(path).map_err(|e| format!("{e:#}"))
}

/// Open the editor window on the startup sample, then load `paths`. Blocks until the window closes.
pub fn run(paths: Vec<PathBuf>, startup: Startup) -> anyhow::Result<()> {
    let options = eframe::NativeOptions {
        renderer: eframe::Renderer::Glow,
        depth_buffer: 24,
        viewport: egui::ViewportBuilder::default()
            .with_title("skinbind")
            .with_app_id("skinbind")
            .with_inner_size([1280.0, 800.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "skinbind",
        options,
        Box::new(move |cc| Ok(Box::new(SkinbindApp::new(cc, paths, startup)))),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the editor window: {e}"))
}
