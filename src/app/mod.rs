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

mod check_tool;
mod command;
pub mod dialog;
mod dock;
pub mod document;
pub mod edit;
mod files;
mod fit_tool;
mod input;
pub mod load;
mod modals;
mod move_tool;
mod paint_tool;
mod panels;
pub mod playback;
pub mod rig_state;
pub mod session;
pub mod settings;
mod skeleton_swap;
mod skeleton_tool;
pub use skeleton_tool::joint_on_screen;
pub mod surface;
pub mod tools;
pub mod viewport;
mod volume_tool;

use std::path::{Path, PathBuf};

use egui::ViewportCommand;
use glam::Mat4;

pub use command::{Command, Field, PoseKind, ViewToggle};
pub use dialog::{FakeDialog, FileDialog, RfdDialog};
pub use document::{DocPaths, Document};
pub use edit::DocEdit;
pub use playback::Playback;
pub use settings::{DockTab, Settings};
pub use viewport::{SceneRef, SelectMode, Tool, Viewport, ViewportResponse};

use crate::atomic::save_atomic;
use crate::bind::JointVolume;
use crate::formats::{skel::write_skel, skin::write_skin};
use crate::paint::brush::BrushSettings;
use crate::sample::SampleKind;
use edit::WeightsState;
use surface::PosedSurface;
use tools::{Job, ToolSettings, WeightOp};
use viewport::VertexPick;

/// Joints the last bind warned look like controls, with the document generation that bind left: the Weights
/// panel offers to exclude them until the document changes.
#[derive(Debug)]
struct LikelyControls {
    generation: u64,
    joints: Vec<usize>,
}

impl Default for LikelyControls {
    fn default() -> Self {
        Self {
            generation: u64::MAX,
            joints: Vec::new(),
        }
    }
}

impl LikelyControls {
    /// The joints, when the document is still as that bind left it.
    fn for_generation(&self, generation: u64) -> &[usize] {
        if self.generation == generation {
            &self.joints
        } else {
            &[]
        }
    }
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
            let n = warnings.len();
            text += &format!(" ({n} warning{}; hover for the list)", if n == 1 { "" } else { "s" });
        }
        Self {
            text,
            is_error: false,
            details: warnings,
        }
    }
}

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
    /// A skeleton opened over a skin whose bindings its joints do not sit at: how to carry the weights over.
    skeleton_question: Option<skeleton_swap::SkeletonQuestion>,
    /// An OBJ mesh opened alone: which skeleton it goes onto.
    mesh_question: Option<skeleton_swap::MeshQuestion>,
    /// Side panels turned on but hidden this frame because the window is too narrow (named in the status bar).
    hidden_panels: Vec<&'static str>,
    /// The 3D view's size in points, last frame.
    view_size: egui::Vec2,
    /// Joints the last bind warned look like controls.
    likely_controls: LikelyControls,
    /// A path typed by hand, where no file dialog could open: what it is for, and the text so far.
    path_prompt: Option<files::PathPrompt>,
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
    /// A Fit to mesh running on a worker thread.
    fit_job: Option<fit_tool::FitJob>,
    /// A save waiting for "save with unweighted vertices?": the `.skel` path and the count.
    confirm_unweighted: Option<(PathBuf, usize)>,
    /// The skin in the current pose, for vertex picking and painting (rebuilt when pose or mesh change).
    surface: Option<PosedSurface>,
    /// The viewport's tools.
    paint: paint_tool::PaintTool,
    move_tool: move_tool::MoveTool,
    volume_tool: volume_tool::VolumeTool,
    /// The selected vertices where the current pose puts them (drawn as dots).
    selected_points: Vec<glam::Vec3>,
    /// The Check panel's runs and report.
    check: check_tool::CheckTool,
    /// The Skeleton mode and its panel.
    skeleton: skeleton_tool::SkeletonTool,
    skeleton_panel: panels::SkeletonPanel,
    /// The side panels' widths and places last frame.
    sides: dock::SideState,
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
    /// Run a range-of-motion check (and show the Check panel).
    pub check: bool,
    /// Once the check is done, show this problem (0 is the worst).
    pub finding: Option<usize>,
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
            skeleton_question: None,
            mesh_question: None,
            hidden_panels: Vec::new(),
            view_size: egui::Vec2::ZERO,
            likely_controls: LikelyControls::default(),
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
            fit_job: None,
            confirm_unweighted: None,
            surface: None,
            paint: Default::default(),
            move_tool: Default::default(),
            volume_tool: Default::default(),
            selected_points: Vec::new(),
            check: Default::default(),
            skeleton: Default::default(),
            skeleton_panel: Default::default(),
            sides: Default::default(),
        }
    }

    /// The app in a window: the startup sample, then `paths` loaded in the background.
    pub fn new(cc: &eframe::CreationContext<'_>, paths: Vec<PathBuf>, startup: Startup) -> Self {
        let doc = match Document::shipped_sample() {
            Ok(d) => d,
            // The shipped files are checked by tests/assets.rs; should they not read, the smallest sample.
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
        self.loader.is_idle() && self.job.is_none() && self.check.job.is_none() && self.fit_job.is_none()
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
        &mut self.paint.brush
    }

    /// Where the brush touched the surface this frame.
    pub fn brush_cursor(&self) -> Option<viewport::BrushCursor> {
        self.paint.cursor
    }

    /// The Weights panel's settings (tests change them the way the panel does).
    pub fn tools_mut(&mut self) -> &mut ToolSettings {
        &mut self.tools
    }

    /// The Check panel's report, and whether it describes the weights as they are now.
    pub fn check_report(&self) -> Option<(&crate::check::CheckReport, bool)> {
        self.check
            .shown
            .as_ref()
            .map(|s| (&s.report, self.check.is_current(&self.doc)))
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
        scene_ref(
            &self.doc,
            &self.world,
            &self.selected_points,
            &self.paint,
            &self.volume_tool,
            &self.check,
        )
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
        self.poll_fit(&ctx);
        self.poll_check(&ctx);
        self.apply_startup(&ctx);
        self.step_playback(&ctx);

        // Worked out first, so that this frame's status bar names the side panels that do not fit.
        let plan = self.plan_sides(&ctx);
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
                moved_joints: self.moved_joints(),
            };
            let mesh_turn = &mut self.skeleton_panel.mesh_turn;
            egui::Panel::top("menu").show(ui, |ui| {
                panels::menu_bar(ui, &view, &mut self.viewport, mesh_turn, &mut cmds)
            });
            if self.settings.show_status {
                egui::Panel::bottom("status").show(ui, |ui| panels::status_bar(ui, &view, &mut cmds));
            }
            if self.settings.show_timeline {
                egui::Panel::bottom("timeline")
                    .show(ui, |ui| panels::timeline(ui, &self.doc, &self.playback, &mut cmds));
            }
            self.side_panels(ui, &plan, &mut cmds);
            self.selected_points = surface::posed_points(&self.doc, &self.world, &self.doc.selected_vertices);
            self.update_volume_overlay();
            self.follow_tool();
            // The fields one by one (not `self.scene()`), so that the viewport can be borrowed beside them.
            let scene = scene_ref(
                &self.doc,
                &self.world,
                &self.selected_points,
                &self.paint,
                &self.volume_tool,
                &self.check,
            );
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
            self.paint_frame(&ctx, &response, &mut cmds);
            self.volume_drag(&response, &mut cmds);
            self.move_frame(&response, &mut cmds);
            self.skeleton_frame(&response, &mut cmds);
        }
        self.quit_modal(&ctx);
        self.open_modal(&ctx);
        self.misfit_modal(&ctx);
        self.skeleton_modal(&ctx);
        self.mesh_modal(&ctx, &mut cmds);
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

    /// Once the command line's files are in: select, set the view and time, and start the screenshot.
    fn apply_startup(&mut self, ctx: &egui::Context) {
        if !self.loader.is_idle() || self.check.job.is_some() {
            return;
        }
        if let Some(i) = self.check.startup_finding.take() {
            self.commands.push(Command::ShowFinding(i));
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
            if st.check {
                // The panel shown, as if turned on from the View menu.
                self.settings.show_check = true;
                self.settings.dock_tab = DockTab::Check;
                self.commands.push(Command::RunCheck);
                self.check.startup_finding = st.finding;
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

    fn step_playback(&mut self, ctx: &egui::Context) {
        // The Skeleton mode shows its edit pose; playing would pose over it.
        if !self.playback.playing || self.viewport.tool == Tool::Skeleton {
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

    fn set_status(&mut self, text: impl Into<String>, is_error: bool) {
        self.status = Status {
            text: text.into(),
            is_error,
            details: Vec::new(),
        };
    }
}

/// The viewport's view of the document; [`SkinbindApp::scene`] and the frame's draw both build it here.
/// What the viewport draws: the document posed by `world`, with the tools' overlays (the brush, a volume being
/// edited, check scores).
fn scene_ref<'a>(
    doc: &'a Document,
    world: &'a [Mat4],
    selected_points: &'a [glam::Vec3],
    paint: &paint_tool::PaintTool,
    volume_tool: &'a volume_tool::VolumeTool,
    check: &'a check_tool::CheckTool,
) -> SceneRef<'a> {
    SceneRef {
        skeleton: &doc.skeleton,
        pose: Some(&doc.pose),
        skin: doc.skin.as_ref(),
        generation: doc.generation,
        world_from_joint: world,
        selected: doc.selected,
        deform: &doc.deform,
        brush: paint.cursor,
        selected_points,
        volume: volume_tool.overlay.as_ref(),
        scores: check.scores.as_ref().map(|(r, s)| (*r, s)),
    }
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
    let png = img.encode_png().map_err(|e| format!("{e:#}"))?;
    save_atomic(path, |w| std::io::Write::write_all(w, &png)).map_err(|e| e.to_string())
}

/// The window's icon (`assets/icon.png`); none where it does not decode.
fn window_icon() -> egui::IconData {
    crate::assets::icon_rgba()
        .map(|(rgba, width, height)| egui::IconData { rgba, width, height })
        .unwrap_or_default()
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
            .with_drag_and_drop(true)
            .with_icon(window_icon()),
        ..Default::default()
    };
    eframe::run_native(
        "skinbind",
        options,
        Box::new(move |cc| Ok(Box::new(SkinbindApp::new(cc, paths, startup)))),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the editor window: {e}"))
}
