//! What the viewport draws over the 3D image with egui's painter, and the drags it handles there: containment
//! volume outlines (dragged to set a radius), the selection box and selected vertices, the brush circle, joint
//! labels.

use glam::{Vec2, Vec3};

use super::*;

impl Viewport {
    /// The volume's segments in the current pose (bind pose carried by the joint's skinning matrix).
    pub fn posed_volume(&self, scene: &SceneRef<'_>, vol: &VolumeOverlay) -> Vec<(Vec3, Vec3)> {
        let m = match (scene.world_from_joint.get(vol.joint), self.bind.get(vol.joint)) {
            (Some(w), Some(b)) => *w * b.inverse(),
            _ => Mat4::IDENTITY,
        };
        vol.segments
            .iter()
            .map(|(a, b)| (m.transform_point3(*a), m.transform_point3(*b)))
            .collect()
    }

    /// The volume as seen: a circle of its radius at each segment end and the two lines between them.
    pub(super) fn paint_volume(&self, ui: &egui::Ui, rect: egui::Rect, size: Vec2, segs: &[(Vec3, Vec3)], radius: f32) {
        let painter = ui.painter_at(rect);
        let stroke = egui::Stroke::new(1.5, egui::Color32::from_rgb(120, 230, 140));
        let at = |p: Vec2| egui::pos2(rect.min.x + p.x, rect.min.y + p.y);
        for &(a, b) in segs {
            let (Some((sa, _)), Some((sb, _))) = (self.camera.project(a, size), self.camera.project(b, size)) else {
                continue;
            };
            let ra = radius / self.camera.world_per_pixel(a, size.y).max(1e-9);
            let rb = radius / self.camera.world_per_pixel(b, size.y).max(1e-9);
            painter.circle_stroke(at(sa), ra, stroke);
            painter.circle_stroke(at(sb), rb, stroke);
            let d = (sb - sa).normalize_or_zero();
            let n = Vec2::new(-d.y, d.x);
            painter.line_segment([at(sa + n * ra), at(sb + n * rb)], stroke);
            painter.line_segment([at(sa - n * ra), at(sb - n * rb)], stroke);
        }
    }

    /// Pose tool: a drag that starts on the volume's outline (within 8 points) sets its radius to the pointer's
    /// distance from the bone, measured on screen and turned into world units at the bone.
    pub(super) fn drag_volume(
        &mut self,
        ui: &egui::Ui,
        response: &egui::Response,
        rect: egui::Rect,
        size: Vec2,
        segs: &[(Vec3, Vec3)],
        radius: f32,
    ) -> Option<(f32, bool)> {
        let local = |p: egui::Pos2| Vec2::new(p.x - rect.min.x, p.y - rect.min.y);
        // The distance on screen from `q` to the nearest point of the bone, with world units per point there.
        let from_bone = |q: Vec2| -> Option<(f32, f32)> {
            let mut best: Option<(f32, f32)> = None;
            for &(a, b) in segs {
                let (Some((sa, _)), Some((sb, _))) = (self.camera.project(a, size), self.camera.project(b, size))
                else {
                    continue;
                };
                let ab = sb - sa;
                let t = if ab.length_squared() > 0.0 {
                    ((q - sa).dot(ab) / ab.length_squared()).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let dist = q.distance(sa + ab * t);
                if best.is_none_or(|(d, _)| dist < d) {
                    best = Some((dist, self.camera.world_per_pixel(a.lerp(b, t), size.y)));
                }
            }
            best
        };
        if response.drag_started_by(egui::PointerButton::Primary) {
            let press = ui.input(|i| i.pointer.press_origin()).map(local);
            self.volume_drag = press
                .and_then(from_bone)
                .is_some_and(|(d, wpp)| (d - radius / wpp.max(1e-9)).abs() <= 8.0);
        }
        if !self.volume_drag {
            return None;
        }
        let pointer = response.interact_pointer_pos().or(response.hover_pos()).map(local)?;
        let (dist, wpp) = from_bone(pointer)?;
        let r = (dist * wpp).max(1e-4);
        if response.drag_stopped() || !response.dragged() {
            self.volume_drag = false;
            return Some((r, true));
        }
        Some((r, false))
    }

    /// Select mode: a click picks the vertex under the pointer, a drag draws a box; Shift adds, Ctrl removes.
    /// Finds the box being dragged (drawn later, on top of the view: see `box_rect`).
    pub(super) fn box_select(
        &mut self,
        ui: &egui::Ui,
        response: &egui::Response,
        rect: egui::Rect,
    ) -> Option<VertexPick> {
        let to_local = |p: egui::Pos2| Vec2::new(p.x - rect.min.x, p.y - rect.min.y);
        let mods = ui.input(|i| i.modifiers);
        let mode = if mods.shift {
            SelectMode::Add
        } else if mods.ctrl || mods.command {
            SelectMode::Remove
        } else {
            SelectMode::Replace
        };
        if response.drag_started_by(egui::PointerButton::Primary) {
            self.box_start = ui
                .input(|i| i.pointer.press_origin())
                .or(response.interact_pointer_pos())
                .map(to_local);
        }
        if let (Some(start), Some(now)) = (self.box_start, response.interact_pointer_pos().map(to_local)) {
            let r = egui::Rect::from_two_pos(
                egui::pos2(rect.min.x + start.x, rect.min.y + start.y),
                egui::pos2(rect.min.x + now.x, rect.min.y + now.y),
            );
            self.box_rect = Some(r);
            if response.drag_stopped_by(egui::PointerButton::Primary) {
                self.box_start = None;
                return Some(VertexPick::Rect(start, now, mode));
            }
        }
        if response.clicked_by(egui::PointerButton::Primary) {
            self.box_start = None;
            return response
                .interact_pointer_pos()
                .map(|p| VertexPick::Point(to_local(p), mode));
        }
        None
    }

    /// Selected vertices as small orange dots (up to 50 000 drawn).
    pub(super) fn paint_selection(&self, ui: &egui::Ui, rect: egui::Rect, size: Vec2, points: &[Vec3]) {
        if points.is_empty() {
            return;
        }
        let painter = ui.painter_at(rect);
        let color = egui::Color32::from_rgb(255, 160, 40);
        for p in points.iter().take(50_000) {
            if let Some((s, _)) = self.camera.project(*p, size) {
                painter.circle_filled(egui::pos2(rect.min.x + s.x, rect.min.y + s.y), 2.0, color);
            }
        }
    }

    /// The brush outline on the surface: a circle in the plane of the hit, projected to the screen.
    pub(super) fn paint_brush(&self, ui: &egui::Ui, rect: egui::Rect, size: Vec2, b: &BrushCursor) {
        let (u, v) = b.normal.normalize_or(Vec3::Z).any_orthonormal_pair();
        let points: Vec<egui::Pos2> = (0..=48)
            .filter_map(|k| {
                let a = k as f32 / 48.0 * std::f32::consts::TAU;
                let p = b.center + (u * a.cos() + v * a.sin()) * b.radius;
                self.camera
                    .project(p, size)
                    .map(|(px, _)| rect.min + egui::vec2(px.x, px.y))
            })
            .collect();
        let painter = ui.painter_at(rect);
        painter.add(egui::Shape::line(
            points,
            egui::Stroke::new(1.5, egui::Color32::from_rgb(255, 220, 120)),
        ));
        if let Some((c, _)) = self.camera.project(b.center, size) {
            painter.circle_filled(
                rect.min + egui::vec2(c.x, c.y),
                2.0,
                egui::Color32::from_rgb(255, 220, 120),
            );
        }
    }

    pub(super) fn paint_labels(&self, ui: &egui::Ui, rect: egui::Rect, scene: &SceneRef<'_>, hovered: Option<usize>) {
        let painter = ui.painter_at(rect);
        let mut text = format!(
            "{} | {} | {}",
            match self.camera.projection {
                Projection::Perspective => "Perspective",
                Projection::Orthographic => "Orthographic",
            },
            self.settings.shading.label(),
            if self.settings.dual_quaternion { "DQS" } else { "LBS" }
        );
        if self.settings.shading == Shading::Weights {
            match scene.selected.and_then(|j| scene.skeleton.joint(j)) {
                Some(j) => text.push_str(&format!(" | weights of {}", j.name)),
                None => text.push_str(" | select a joint to see its weights"),
            }
        }
        if let Some(e) = self.error() {
            text.push_str(&format!(" | renderer error: {e}"));
        }
        if self.settings.shading == Shading::Check {
            if scene.scores.is_none() {
                text.push_str(" | no check yet: run one in the Check panel");
            }
            let at = egui::Rect::from_min_size(rect.left_bottom() + egui::vec2(10.0, -54.0), egui::vec2(240.0, 44.0));
            crate::app::panels::check::paint_legend(&painter, at);
        }
        // Wrapped at the view's width: a long joint name or error message goes on to a second line, not under
        // the dock.
        let grey = egui::Color32::from_gray(200);
        let header = painter.layout(
            text,
            egui::FontId::proportional(12.0),
            grey,
            (rect.width() - 16.0).max(40.0),
        );
        painter.galley(rect.left_top() + egui::vec2(8.0, 6.0), header, grey);
        // Beside the pointer: the joint a click would pick, or in Paint the joint being painted.
        let named = if self.tool == Tool::Paint {
            scene.selected
        } else {
            hovered
        };
        if let Some(j) = named.and_then(|j| scene.skeleton.joint(j)) {
            // Only while the pointer is over the view: over a panel, the name would be cut at the view's edge.
            if let Some(p) = ui.input(|i| i.pointer.hover_pos()).filter(|p| rect.contains(*p)) {
                let galley =
                    painter.layout_no_wrap(j.name.clone(), egui::FontId::proportional(13.0), POINTER_LABEL_COLOUR);
                let at = pointer_label_rect(p, galley.size(), rect);
                painter.galley(at.min, galley, POINTER_LABEL_COLOUR);
            }
        }
    }
}

/// Where the name beside the pointer goes: above and to the right of it, or to the left where it would pass the
/// view's right edge, below where it would pass the top; the view clips what is drawn outside it.
pub fn pointer_label_rect(pointer: egui::Pos2, size: egui::Vec2, view: egui::Rect) -> egui::Rect {
    let (gap, lift) = (12.0, 4.0);
    let x = if pointer.x + gap + size.x <= view.right() {
        pointer.x + gap
    } else {
        (pointer.x - gap - size.x).clamp(view.left(), (view.right() - size.x).max(view.left()))
    };
    let y = if pointer.y - lift - size.y >= view.top() {
        pointer.y - lift - size.y
    } else {
        pointer.y + 2.0 * gap
    };
    egui::Rect::from_min_size(egui::pos2(x, y), size)
}
