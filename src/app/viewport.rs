// TEMPORARY: replaced by the renderer engineer's version at merge
//! The 3D viewport's interface, with a stand-in that draws the joints as dots seen from the front (orthographic
//! x-y projection) so the editor can be used and tested before the renderer arrives. The app calls only
//! [`Viewport::new`], [`Viewport::show`] and [`Viewport::settings_ui`].

use std::sync::Arc;

use egui::{Color32, Pos2, Sense, Stroke, StrokeKind, Vec2};

use crate::model::{Skeleton, Skin};

/// What the viewport draws: borrowed from the document each frame.
pub struct SceneRef<'a> {
    pub skeleton: &'a Skeleton,
    pub skin: Option<&'a Skin>,
    /// Bumped when the skeleton, skin or weights change: upload again.
    pub generation: u64,
    /// Each joint's world matrix in the current pose.
    pub world_from_joint: &'a [glam::Mat4],
    pub selected: Option<usize>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ViewportResponse {
    pub clicked_joint: Option<usize>,
    pub hovered_joint: Option<usize>,
}

pub struct Viewport {
    _gl: Option<Arc<glow::Context>>,
}

impl Viewport {
    pub fn new(gl: Option<Arc<glow::Context>>) -> Self {
        Self { _gl: gl }
    }

    pub fn show(&mut self, ui: &mut egui::Ui, scene: &SceneRef<'_>) -> ViewportResponse {
        let (rect, response) = ui.allocate_exact_size(ui.available_size(), Sense::click());
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, Color32::from_gray(24));
        let points: Vec<glam::Vec3> = scene.world_from_joint.iter().map(|m| m.w_axis.truncate()).collect();
        let (lo, hi) = points.iter().fold(
            (glam::Vec3::splat(f32::INFINITY), glam::Vec3::splat(f32::NEG_INFINITY)),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        );
        let extent = (hi - lo).truncate().max_element().max(1e-3);
        let scale = 0.8 * rect.width().min(rect.height()) / extent;
        let mid = (lo + hi) * 0.5;
        let to_screen = |p: glam::Vec3| rect.center() + Vec2::new(p.x - mid.x, mid.y - p.y) * scale;
        let mut hovered = None;
        let hover_pos = response.hover_pos();
        for (i, j) in scene.skeleton.joints().iter().enumerate() {
            let Some(p) = points.get(i).map(|p| to_screen(*p)) else {
                continue;
            };
            if let Some(parent) = j.parent.and_then(|q| points.get(q)) {
                painter.line_segment([to_screen(*parent), p], Stroke::new(1.5, Color32::from_gray(150)));
            }
            if hover_pos.is_some_and(|h: Pos2| h.distance(p) < 6.0) {
                hovered = Some(i);
            }
        }
        for (i, p) in points.iter().enumerate() {
            let color = if scene.selected == Some(i) {
                Color32::from_rgb(255, 200, 60)
            } else if hovered == Some(i) {
                Color32::WHITE
            } else {
                Color32::from_rgb(90, 160, 255)
            };
            painter.circle_filled(to_screen(*p), 4.0, color);
        }
        painter.rect_stroke(rect, 0.0, Stroke::new(1.0, Color32::from_gray(60)), StrokeKind::Inside);
        let vertices = scene.skin.map_or(0, Skin::vertex_count);
        painter.text(
            rect.left_top() + Vec2::splat(8.0),
            egui::Align2::LEFT_TOP,
            format!(
                "{} joints, {} vertices (front view; the 3D view arrives with the renderer)",
                scene.skeleton.len(),
                vertices
            ),
            egui::FontId::proportional(13.0),
            Color32::from_gray(200),
        );
        ViewportResponse {
            clicked_joint: if response.clicked() { hovered } else { None },
            hovered_joint: hovered,
        }
    }

    pub fn settings_ui(&mut self, ui: &mut egui::Ui) {
        ui.label("Viewport settings arrive with the renderer");
    }
}
