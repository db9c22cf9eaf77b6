//! The 3D viewport: the skin skinned on the GPU by [`crate::render::Renderer`], drawn inside egui through an
//! `egui_glow` paint callback on eframe's own GL context, with Blender/Maya-style camera controls and joint
//! picking.
//!
//! Mouse: middle drag (or Alt + left drag) orbits, Shift + middle drag (or Alt + middle drag) pans, the wheel
//! (or Ctrl + middle drag, Alt + right drag) zooms; a left click picks the joint whose bone is nearest on screen
//! (within 12 points). Keys while the pointer is over the view: F frames the selected joint, Home frames all,
//! 1 / 3 / 7 front / side / top (orthographic), 5 toggles perspective and orthographic.
//!
//! GPU objects live in a [`GpuState`] shared with the paint callback; the skin is uploaded when the document's
//! generation changes, and per frame only the bone texture is refilled (in `Renderer::draw`).

mod overlay;
mod pick;
mod rig_overlay;

use std::sync::{Arc, Mutex};

use glam::{Mat4, Vec2, Vec3};

use crate::model::{Pose, Skeleton, Skin};
use crate::render::pack::PackedRow;
pub use pick::pick_joint;

use crate::render::{Frame, OrbitCamera, Projection, Renderer, Shading, ViewPreset, ViewSettings, ground_and_size};

/// What the app shows this frame.
/// The joint name drawn beside the pointer.
pub const POINTER_LABEL_COLOUR: egui::Color32 = egui::Color32::from_rgb(255, 200, 120);

/// The outline of the selection box.
pub const BOX_COLOUR: egui::Color32 = egui::Color32::from_rgb(255, 200, 80);

pub struct SceneRef<'a> {
    pub skeleton: &'a Skeleton,
    /// The pose shown (the Skeleton mode draws the selected joint's limits from it).
    pub pose: Option<&'a Pose>,
    pub skin: Option<&'a Skin>,
    /// Bumped by the document whenever the skeleton, skin or weights change.
    pub generation: u64,
    pub world_from_joint: &'a [Mat4],
    pub selected: Option<usize>,
    /// Per joint: whether it deforms (controls are drawn grey).
    pub deform: &'a [bool],
    /// The paint brush where it touches the surface, drawn as a circle on it.
    pub brush: Option<BrushCursor>,
    /// Selected vertices in the current pose, drawn as dots.
    pub selected_points: &'a [Vec3],
    /// The selected joint's containment volume, drawn (and its radius dragged in the Pose tool).
    pub volume: Option<&'a VolumeOverlay>,
    /// The last range-of-motion check's per-vertex scores (the Check shading) and their revision: uploaded
    /// when the revision changes.
    pub scores: Option<(u64, &'a Arc<Vec<f32>>)>,
}

/// A joint's containment volume for the view: its radius and segments in the bind pose (world units).
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeOverlay {
    pub joint: usize,
    pub radius: f32,
    pub segments: Vec<(Vec3, Vec3)>,
}

/// The brush outline: a circle of `radius` (world units) around `center` in the plane of `normal`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BrushCursor {
    pub center: Vec3,
    pub normal: Vec3,
    pub radius: f32,
}

/// What the primary mouse button does in the view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tool {
    /// Click a bone to select its joint.
    #[default]
    Pose,
    /// Click a vertex, or drag a box, to select vertices (Shift adds, Ctrl removes).
    Select,
    /// Paint the selected joint's weights with the brush.
    Paint,
    /// Drag a vertex to where it should be in this pose; its weights are solved to put it there.
    Move,
    /// Build and fix the skeleton in its edit pose: click the mesh to add a joint, drag a joint to move it.
    Skeleton,
}

/// How a vertex pick combines with the selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectMode {
    Replace,
    Add,
    Remove,
}

/// A vertex selection asked for this frame, in the view's local points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VertexPick {
    /// A click: the vertex under this point.
    Point(Vec2, SelectMode),
    /// A box from corner to corner.
    Rect(Vec2, Vec2, SelectMode),
}

/// What happened in the viewport this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ViewportResponse {
    pub clicked_joint: Option<usize>,
    pub hovered_joint: Option<usize>,
    /// The world ray under the pointer (origin, unit direction), while it is over the view.
    pub pointer_ray: Option<(Vec3, Vec3)>,
    /// The view's height in points (brush radii are in points).
    pub height: f32,
    /// The primary button is held on the view (a paint stroke goes on) and was pressed this frame.
    pub primary_down: bool,
    pub primary_pressed: bool,
    /// A vertex selection (in [`Tool::Select`]).
    pub vertex_pick: Option<VertexPick>,
    /// The view's size in points, for projecting vertices into it.
    pub size: Vec2,
    /// The volume radius being dragged (world units), and whether the drag ended this frame.
    pub volume_radius: Option<(f32, bool)>,
    /// The pointer in the view's local points, while it is over the view.
    pub pointer: Option<Vec2>,
    /// A primary click (pressed and released without a drag) on the view.
    pub primary_clicked: bool,
    pub modifiers: egui::Modifiers,
}

/// Data the paint callback needs, owned (the callback outlives the frame's borrows).
struct Upload {
    generation: u64,
    skin: Option<Skin>,
    joint_count: usize,
}

struct GpuState {
    renderer: Option<Renderer>,
    error: Option<String>,
    pending: Option<Upload>,
    uploaded: Option<u64>,
    /// Skinning data of vertex ranges changed since the last frame (painting), applied after `pending`.
    rows: Vec<(usize, Vec<PackedRow>)>,
    /// The Check shading's scores, and whether the GPU's copy is out of date (new scores or a new mesh).
    scores: Option<Arc<Vec<f32>>>,
    scores_dirty: bool,
}

pub struct Viewport {
    gl: Option<Arc<glow::Context>>,
    gpu: Arc<Mutex<GpuState>>,
    pub camera: OrbitCamera,
    pub settings: ViewSettings,
    generation: Option<u64>,
    skeleton: Option<Arc<Skeleton>>,
    bind: Arc<Vec<Mat4>>,
    bounds: Option<(Vec3, Vec3)>,
    skin_vertices: Option<usize>,
    /// What the primary button does: pick joints, select vertices, or paint.
    pub tool: Tool,
    /// Where a box selection began (local points), while the primary button is held in Select.
    box_start: Option<Vec2>,
    /// The box being dragged this frame, in window points: drawn after the 3D view, so on top of it.
    box_rect: Option<egui::Rect>,
    /// Draw the selected joint's containment volume (View menu).
    pub show_volumes: bool,
    /// Where the view was drawn last frame (window points).
    rect: Option<egui::Rect>,
    /// Frame all on the next frame (asked from the View menu, which has no scene).
    frame_pending: bool,
    /// A drag of the volume's outline is on.
    volume_drag: bool,
    /// Grid height and model size, from the bind-pose bounds (kept: computing them is O(vertices)).
    ground_size: (f32, f32),
    /// The revision of the check scores last sent to the GPU.
    scores_revision: Option<u64>,
}

impl Viewport {
    /// `gl` is eframe's context (`CreationContext::gl`); without one (GUI tests) the view draws a placeholder
    /// but camera control and picking still work.
    pub fn new(gl: Option<Arc<glow::Context>>) -> Self {
        Self {
            gl,
            gpu: Arc::new(Mutex::new(GpuState {
                renderer: None,
                error: None,
                pending: None,
                uploaded: None,
                rows: Vec::new(),
                scores: None,
                scores_dirty: false,
            })),
            camera: OrbitCamera::default(),
            settings: ViewSettings::default(),
            generation: None,
            skeleton: None,
            bind: Arc::new(Vec::new()),
            bounds: None,
            skin_vertices: None,
            tool: Tool::Pose,
            box_start: None,
            box_rect: None,
            show_volumes: false,
            rect: None,
            frame_pending: false,
            volume_drag: false,
            ground_size: (0.0, 1.0),
            scores_revision: None,
        }
    }

    /// Queue new skinning data for vertices `start..start + rows.len()` (painting); the GPU gets it before the
    /// next draw, without re-uploading the rest of the mesh.
    pub fn upload_rows(&mut self, start: usize, rows: Vec<PackedRow>) {
        if let Ok(mut g) = self.gpu.lock() {
            g.rows.push((start, rows));
        }
    }

    /// Queue the skinning data of `vertices` (ascending) from `weights`: runs of nearby vertices go up together,
    /// so a brush's scattered rows cost a few small uploads, not the whole mesh.
    pub fn upload_changed(&mut self, weights: &crate::model::Weights, vertices: &[u32]) {
        self.upload_rows_with(vertices, |v| {
            let (js, ws) = weights.row(v as usize);
            crate::render::pack::pack_row(js, ws)
        });
    }

    /// [`Self::upload_changed`] with each row's packing given by `row`.
    pub fn upload_rows_with(&mut self, vertices: &[u32], row: impl Fn(u32) -> PackedRow) {
        for (start, rows) in crate::render::pack::pack_runs(vertices, row) {
            self.upload_rows(start, rows);
        }
    }

    /// The GPU renderer's error, if it could not start (shown in the view and the status bar).
    pub fn error(&self) -> Option<String> {
        self.gpu.lock().ok().and_then(|g| g.error.clone())
    }

    fn sync(&mut self, scene: &SceneRef<'_>) {
        let revision = scene.scores.map(|s| s.0);
        if revision != self.scores_revision {
            self.scores_revision = revision;
            if let Ok(mut g) = self.gpu.lock() {
                g.scores = scene.scores.map(|s| s.1.clone());
                g.scores_dirty = true;
            }
        }
        if self.generation == Some(scene.generation) {
            return;
        }
        let first = self.generation.is_none();
        self.generation = Some(scene.generation);
        let joints_changed = self.skeleton.as_ref().is_none_or(|s| s.len() != scene.skeleton.len());
        self.skeleton = Some(Arc::new(scene.skeleton.clone()));
        let file_pose = Pose::from_file(scene.skeleton);
        self.bind = Arc::new(match scene.skin {
            Some(s) => crate::deform::bind_world_from_joint(scene.skeleton, s, &file_pose),
            None => crate::model::world_from_joint(scene.skeleton, &file_pose),
        });
        let pivots: Vec<Vec3> = scene.world_from_joint.iter().map(|m| m.w_axis.truncate()).collect();
        let skin_bounds = scene.skin.and_then(Skin::bounds);
        let pivot_bounds = crate::model::skin::bounds(&pivots);
        self.bounds = match (skin_bounds, pivot_bounds) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (a, b) => a.or(b),
        };
        self.ground_size = ground_and_size(scene.skin, scene.world_from_joint);
        let skin_changed = self.skin_vertices != scene.skin.map(Skin::vertex_count);
        self.skin_vertices = scene.skin.map(Skin::vertex_count);
        if first || joints_changed || skin_changed {
            self.frame_all(scene);
        }
        if let Ok(mut g) = self.gpu.lock() {
            g.pending = Some(Upload {
                generation: scene.generation,
                skin: scene.skin.cloned(),
                joint_count: scene.skeleton.len(),
            });
        }
    }

    /// Frame the whole mesh as it is posed now, and the joints, so that it fits the view both ways (Home).
    pub fn frame_all(&mut self, scene: &SceneRef<'_>) {
        if let Some((lo, hi)) = self.posed_bounds(scene).or(self.bounds) {
            let aspect = self.rect.map_or(1.0, |r| r.width() / r.height().max(1.0));
            self.camera.frame_aspect(lo, hi, aspect);
        }
    }

    /// The box of the skin skinned in the current pose (on the CPU) and of the joints' pivots.
    fn posed_bounds(&self, scene: &SceneRef<'_>) -> Option<(Vec3, Vec3)> {
        let pivots: Vec<Vec3> = scene.world_from_joint.iter().map(|m| m.w_axis.truncate()).collect();
        let mut points = match scene.skin {
            Some(skin) if skin.weights().is_some() && self.bind.len() == scene.world_from_joint.len() => {
                let m = crate::deform::skinning_matrices(scene.world_from_joint, &self.bind);
                let weights = skin.weights()?;
                crate::deform::skin_vertices(
                    skin.positions(),
                    skin.normals(),
                    weights,
                    &m,
                    crate::deform::Method::Linear,
                )
                .0
            }
            Some(skin) => skin.positions().to_vec(),
            None => Vec::new(),
        };
        points.extend(pivots);
        crate::model::skin::bounds(&points)
    }

    /// Frame the selected joint's bone: its pivot and its children's.
    pub fn frame_selected(&mut self, scene: &SceneRef<'_>) {
        let Some(j) = scene.selected else {
            self.frame_all(scene);
            return;
        };
        let mut pts: Vec<Vec3> = Vec::new();
        if let Some(m) = scene.world_from_joint.get(j) {
            pts.push(m.w_axis.truncate());
        }
        for &c in scene.skeleton.children(j) {
            if let Some(m) = scene.world_from_joint.get(c) {
                pts.push(m.w_axis.truncate());
            }
        }
        if let Some((lo, hi)) = crate::model::skin::bounds(&pts) {
            let pad = self.bounds.map_or(0.1, |(a, b)| (b - a).length() * 0.05);
            self.camera.frame(lo - Vec3::splat(pad), hi + Vec3::splat(pad));
        }
    }

    /// Draw the view and handle its input.
    pub fn show(&mut self, ui: &mut egui::Ui, scene: &SceneRef<'_>) -> ViewportResponse {
        self.sync(scene);
        let rect = ui.available_rect_before_wrap();
        self.rect = Some(rect);
        let response = ui.allocate_rect(rect, egui::Sense::click_and_drag());
        let size = Vec2::new(rect.width().max(1.0), rect.height().max(1.0));
        self.handle_camera(ui, &response, size);
        if response.hovered() {
            self.handle_keys(ui, scene);
        }
        if std::mem::take(&mut self.frame_pending) {
            self.frame_all(scene);
        }

        let to_local = |p: egui::Pos2| Vec2::new(p.x - rect.min.x, p.y - rect.min.y);
        let camera = self.camera;
        let joint_at =
            |p: egui::Pos2| pick_joint(&camera, size, scene.skeleton, scene.world_from_joint, to_local(p), 12.0);
        let hovered_joint = response.hover_pos().and_then(joint_at);
        let pointer_ray = response.hover_pos().map(|p| self.camera.ray(to_local(p), size));
        let alt = ui.input(|i| i.modifiers.alt);
        let painting = matches!(self.tool, Tool::Paint | Tool::Move | Tool::Skeleton);
        let primary_down =
            painting && !alt && response.is_pointer_button_down_on() && ui.input(|i| i.pointer.primary_down());
        let primary_pressed = primary_down && ui.input(|i| i.pointer.primary_pressed());
        let vertex_pick = if self.tool == Tool::Select && !alt {
            self.box_select(ui, &response, rect)
        } else {
            self.box_start = None;
            None
        };
        let mut clicked_joint = None;
        if self.tool == Tool::Pose && response.clicked_by(egui::PointerButton::Primary) && !alt {
            clicked_joint = response.interact_pointer_pos().and_then(joint_at);
        }

        self.paint(ui, rect, scene);
        if let Some(b) = scene.brush {
            self.paint_brush(ui, rect, size, &b);
        }
        self.paint_selection(ui, rect, size, scene.selected_points);
        self.paint_rig_overlay(ui, rect, size, scene);
        if let Some(r) = self.box_rect.take() {
            ui.painter_at(rect)
                .rect_stroke(r, 0.0, egui::Stroke::new(1.0, BOX_COLOUR), egui::StrokeKind::Middle);
        }
        let volume_radius = scene.volume.and_then(|vol| {
            let segs = self.posed_volume(scene, vol);
            self.paint_volume(ui, rect, size, &segs, vol.radius);
            (self.tool == Tool::Pose && !alt)
                .then(|| self.drag_volume(ui, &response, rect, size, &segs, vol.radius))
                .flatten()
        });
        // Text last, over the selection's dots, the brush and the rig's handles, which hid the name beside the
        // pointer ("elb" of elbow_l under a selected waist).
        self.paint_labels(ui, rect, scene, hovered_joint);
        let modifiers = ui.input(|i| i.modifiers);
        ViewportResponse {
            pointer: response.hover_pos().or(response.interact_pointer_pos()).map(to_local),
            primary_clicked: response.clicked_by(egui::PointerButton::Primary) && !alt,
            modifiers,
            clicked_joint,
            hovered_joint: hovered_joint.filter(|_| self.tool == Tool::Pose),
            pointer_ray,
            height: size.y,
            primary_down,
            primary_pressed,
            vertex_pick,
            size,
            volume_radius,
        }
    }

    /// Where the view was drawn last frame, in window points.
    pub fn rect(&self) -> Option<egui::Rect> {
        self.rect
    }

    fn handle_camera(&mut self, ui: &egui::Ui, response: &egui::Response, size: Vec2) {
        let (mods, delta) = ui.input(|i| (i.modifiers, i.pointer.delta()));
        let d = Vec2::new(delta.x, delta.y);
        if response.dragged_by(egui::PointerButton::Middle) {
            if mods.shift || mods.alt {
                self.camera.pan(d, size.y);
            } else if mods.ctrl || mods.command {
                self.camera.zoom(-d.y * 0.02);
            } else {
                self.camera.orbit(d);
            }
        } else if response.dragged_by(egui::PointerButton::Primary) && mods.alt {
            self.camera.orbit(d);
        } else if response.dragged_by(egui::PointerButton::Secondary) && mods.alt {
            self.camera.zoom(-d.y * 0.02);
        }
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                self.camera.zoom(scroll / 50.0);
            }
        }
    }

    fn handle_keys(&mut self, ui: &egui::Ui, scene: &SceneRef<'_>) {
        use egui::Key;
        let pressed = |k: Key| ui.input(|i| i.key_pressed(k) && i.modifiers.is_none());
        // In Paint, F sets the brush radius (the app handles it).
        if pressed(Key::F) && self.tool != Tool::Paint {
            self.frame_selected(scene);
        }
        if pressed(Key::Home) {
            self.frame_all(scene);
        }
        for (key, preset) in [
            (Key::Num1, ViewPreset::Front),
            (Key::Num3, ViewPreset::Side),
            (Key::Num7, ViewPreset::Top),
        ] {
            if pressed(key) {
                self.camera.set_preset(preset);
                self.camera.projection = Projection::Orthographic;
            }
        }
        if pressed(Key::Num5) {
            self.camera.projection = match self.camera.projection {
                Projection::Perspective => Projection::Orthographic,
                Projection::Orthographic => Projection::Perspective,
            };
        }
    }

    fn paint(&self, ui: &egui::Ui, rect: egui::Rect, scene: &SceneRef<'_>) {
        if self.gl.is_none() {
            let [r, g, b] = self.settings.background.map(|c| (c * 255.0) as u8);
            ui.painter().rect_filled(rect, 0.0, egui::Color32::from_rgb(r, g, b));
            ui.painter().text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "3D view: no OpenGL context",
                egui::FontId::proportional(14.0),
                egui::Color32::GRAY,
            );
            return;
        }
        let Some(skeleton) = self.skeleton.clone() else { return };
        let gpu = self.gpu.clone();
        let camera = self.camera;
        let settings = self.settings;
        let bind = self.bind.clone();
        let world: Vec<Mat4> = scene.world_from_joint.to_vec();
        let selected = scene.selected;
        let deform = scene.deform.to_vec();
        let (ground, size) = self.ground_size;
        let callback = egui_glow::CallbackFn::new(move |info, painter| {
            let Ok(mut state) = gpu.lock() else { return };
            if state.renderer.is_none() && state.error.is_none() {
                match three_d::Context::from_gl_context(painter.gl().clone())
                    .map_err(|e| e.to_string())
                    .and_then(|c| Renderer::new(&c).map_err(|e| e.to_string()))
                {
                    Ok(r) => state.renderer = Some(r),
                    Err(e) => state.error = Some(e),
                }
            }
            if let Some(up) = state.pending.take() {
                if let Some(r) = state.renderer.as_mut() {
                    r.set_skin(up.skin.as_ref(), up.joint_count);
                    state.uploaded = Some(up.generation);
                    state.scores_dirty = true;
                }
            }
            if state.scores_dirty {
                let scores = state.scores.clone();
                if let Some(r) = state.renderer.as_mut() {
                    r.set_scores(scores.as_ref().map(|s| s.as_slice()));
                    state.scores_dirty = false;
                }
            }
            let rows = std::mem::take(&mut state.rows);
            if let Some(mesh) = state.renderer.as_mut().and_then(Renderer::mesh_mut) {
                for (start, r) in rows {
                    mesh.update_rows(start, &r);
                }
            }
            let Some(renderer) = state.renderer.as_mut() else {
                return;
            };
            let vp = info.viewport_in_pixels();
            let viewport = three_d::Viewport {
                x: vp.left_px,
                y: vp.from_bottom_px,
                width: vp.width_px.max(1) as u32,
                height: vp.height_px.max(1) as u32,
            };
            let frame = Frame {
                camera: &camera,
                skeleton: &skeleton,
                world_from_joint: &world,
                bind_world_from_joint: &bind,
                selected,
                deform: &deform,
                ground,
                size,
            };
            renderer.draw(viewport, &frame, &settings);
        });
        ui.painter().add(egui::PaintCallback {
            rect,
            callback: Arc::new(callback),
        });
    }

    /// The View menu's items for the viewport.
    pub fn settings_ui(&mut self, ui: &mut egui::Ui) {
        ui.label("Shading");
        for s in Shading::ALL {
            ui.radio_value(&mut self.settings.shading, s, s.label());
        }
        ui.separator();
        ui.checkbox(&mut self.settings.dual_quaternion, "Dual quaternion skinning")
            .on_hover_text("Skin with dual quaternions (no candy-wrapper collapse) instead of linear blend");
        ui.checkbox(&mut self.settings.wireframe, "Wireframe overlay");
        ui.checkbox(&mut self.settings.skeleton, "Show skeleton");
        ui.checkbox(&mut self.settings.grid, "Show grid");
        ui.checkbox(&mut self.show_volumes, "Containment volumes")
            .on_hover_text("Draw the selected joint's volume (always shown while the Bind method uses volumes); drag its outline in the Pose tool to set its radius");
        ui.separator();
        let mut ortho = self.camera.projection == Projection::Orthographic;
        if ui.checkbox(&mut ortho, "Orthographic (5)").changed() {
            self.camera.projection = if ortho {
                Projection::Orthographic
            } else {
                Projection::Perspective
            };
        }
        ui.horizontal(|ui| {
            for (label, preset) in [
                ("Front (1)", ViewPreset::Front),
                ("Side (3)", ViewPreset::Side),
                ("Top (7)", ViewPreset::Top),
            ] {
                if ui.button(label).clicked() {
                    self.camera.set_preset(preset);
                    self.camera.projection = Projection::Orthographic;
                }
            }
        });
        if ui.button("Frame all (Home)").clicked() {
            self.frame_pending = true;
        }
    }
}
