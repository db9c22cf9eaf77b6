//! The Paint tool in the viewport: the brush cursor on the posed surface, radius and strength by F / Shift+F
//! (Blender's radial control), S to sample, and strokes: dabs while the button is held, spaced a quarter radius
//! apart, shown on the GPU at once and queued as one edit when the button is released.

use egui::{Key, Modifiers};
use glam::Vec3;

use super::{Command, DocEdit, SkinbindApp, Tool, ViewportResponse, surface::PosedSurface, viewport};
use crate::adjust::graph::MeshGraph;
use crate::adjust::mirror::PaintMirror;
use crate::paint::brush::{self, BrushMode, BrushSettings, Stroke};
use crate::render::Shading;

/// The Paint tool's state between frames.
#[derive(Default)]
pub(super) struct PaintTool {
    pub(super) brush: BrushSettings,
    /// The stroke being painted (primary button held).
    stroke: Option<Stroke>,
    /// Where the brush touches the surface (drawn next frame).
    pub(super) cursor: Option<viewport::BrushCursor>,
    /// F / Shift+F: the radius or strength being changed by moving the mouse.
    adjust: Option<BrushAdjust>,
    /// The view's shading before Paint switched it to the weights, put back when Paint is left.
    shading_before: Option<Shading>,
    /// The welded mesh graph for the Smooth brush, with the document generation it was built for.
    graph: Option<(u64, MeshGraph)>,
    /// X-mirror partners of vertices and joints, with the document generation they were found for.
    mirror: Option<(u64, PaintMirror)>,
}

/// What F / Shift+F change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Adjusting {
    Radius,
    Strength,
}

/// A radius or strength change by moving the mouse: what changes, its value and the pointer's x when it began.
#[derive(Clone, Copy, Debug)]
struct BrushAdjust {
    what: Adjusting,
    start: f32,
    pointer_x: f32,
}

impl SkinbindApp {
    /// Painting shows the weights: choosing Paint switches the view to the painted (selected) joint's weights,
    /// and leaving it puts the shading back (unless it was changed to something else meanwhile).
    pub(super) fn follow_tool(&mut self) {
        let painting = self.viewport.tool == Tool::Paint;
        match (painting, self.paint.shading_before) {
            (true, None) => {
                self.paint.shading_before = Some(self.viewport.settings.shading);
                self.viewport.settings.shading = Shading::Weights;
            }
            (false, Some(before)) => {
                if self.viewport.settings.shading == Shading::Weights {
                    self.viewport.settings.shading = before;
                }
                self.paint.shading_before = None;
            }
            _ => {}
        }
    }

    /// Paint mode, once per frame: the cursor, F / Shift+F, S, and the stroke.
    pub(super) fn paint_frame(&mut self, ctx: &egui::Context, response: &ViewportResponse, cmds: &mut Vec<Command>) {
        if self.viewport.tool != Tool::Paint {
            self.paint.cursor = None;
            self.paint.adjust = None;
            self.end_stroke(cmds);
            return;
        }
        self.adjust_brush(ctx, response.pointer_ray.is_some());
        // The posed surface is rebuilt (CPU skinning and a BVH: 100+ ms at 1M vertices) only while the pointer is
        // over the view or a stroke goes on, not on every frame of playback.
        if response.pointer_ray.is_none() && self.paint.stroke.is_none() {
            self.paint.cursor = None;
            return;
        }
        PosedSurface::refresh(&mut self.surface, &self.doc);
        let Some(surface) = self.surface.as_ref() else {
            self.paint.cursor = None;
            return;
        };
        let hit = response.pointer_ray.and_then(|(o, d)| surface.ray_cast(o, d));
        self.paint.cursor = hit.map(|h| viewport::BrushCursor {
            center: h.point,
            normal: h.normal,
            radius: self.brush_radius_at(h.point, response.height),
        });
        let joint = self.doc.selected.map(|j| j as u16);
        let sample_key = ctx.input(|i| i.key_pressed(Key::S) && i.modifiers.matches_exact(Modifiers::NONE));
        if let (Some(h), Some(j), true) = (hit, joint, sample_key && !ctx.egui_wants_keyboard_input()) {
            if let Some(w) = self.doc.skin.as_ref().and_then(|k| k.weights()) {
                self.paint.brush.value = brush::sample_weight(w, h.vertex, j);
                self.set_status(format!("Sampled {:.3}", self.paint.brush.value), false);
            }
        }
        if self.paint.adjust.is_some() {
            return;
        }
        if !response.primary_down {
            self.end_stroke(cmds);
            return;
        }
        let Some(j) = self.paintable(joint, response.primary_pressed) else {
            return;
        };
        if response.primary_pressed || self.paint.stroke.as_ref().is_some_and(|s| s.joint != j) {
            // A stroke of another joint ends first; its edit is applied at the end of this frame, so the new
            // stroke dabs from the next frame on, over weights that include it.
            if self.end_stroke(cmds) {
                self.paint.stroke = Some(self.new_stroke(j));
                return;
            }
            self.paint.stroke = Some(self.new_stroke(j));
        }
        let Some(h) = hit else { return };
        let radius = self.brush_radius_at(h.point, response.height);
        let due = self
            .paint
            .stroke
            .as_ref()
            .is_some_and(|s| s.last.is_none_or(|l| l.distance(h.point) >= 0.25 * radius));
        if due {
            let inverted = ctx.input(|i| i.modifiers.ctrl || i.modifiers.command);
            self.dab(h.point, radius, inverted);
            ctx.request_repaint();
        }
    }

    /// F / Shift+F over the view: move the mouse to change the radius or strength; a click or Enter keeps it,
    /// Esc or a right click puts it back.
    fn adjust_brush(&mut self, ctx: &egui::Context, over_view: bool) {
        let pointer_x = ctx.input(|i| i.pointer.hover_pos().map_or(0.0, |p| p.x));
        let key = |k: Key, m: Modifiers| ctx.input(|i| i.key_pressed(k) && i.modifiers.matches_exact(m));
        let brush = &mut self.paint.brush;
        if over_view && self.paint.adjust.is_none() && !ctx.egui_wants_keyboard_input() {
            let what = if key(Key::F, Modifiers::SHIFT) {
                Some((Adjusting::Strength, brush.strength))
            } else if key(Key::F, Modifiers::NONE) {
                Some((Adjusting::Radius, brush.radius))
            } else {
                None
            };
            self.paint.adjust = what.map(|(what, start)| BrushAdjust { what, start, pointer_x });
        }
        let Some(adjust) = self.paint.adjust else { return };
        let dx = pointer_x - adjust.pointer_x;
        match adjust.what {
            Adjusting::Radius => brush.radius = (adjust.start + dx).max(1.0),
            Adjusting::Strength => brush.strength = (adjust.start + dx / 200.0).clamp(0.0, 1.0),
        }
        let (done, cancel) = ctx.input(|i| {
            (
                i.key_pressed(Key::Enter) || i.pointer.primary_clicked(),
                i.key_pressed(Key::Escape) || i.pointer.secondary_clicked(),
            )
        });
        if cancel {
            match adjust.what {
                Adjusting::Radius => brush.radius = adjust.start,
                Adjusting::Strength => brush.strength = adjust.start,
            }
        }
        if done || cancel {
            self.paint.adjust = None;
        }
    }

    /// The brush radius in world units at `point` (a radius in pixels is converted through the camera).
    fn brush_radius_at(&self, point: Vec3, view_height: f32) -> f32 {
        let brush = &self.paint.brush;
        if brush.world_radius {
            brush.radius
        } else {
            brush.radius * self.viewport.camera.world_per_pixel(point, view_height)
        }
    }

    /// The selected joint, when it can be painted; otherwise None, saying why when the button was just pressed.
    fn paintable(&mut self, joint: Option<u16>, pressed: bool) -> Option<u16> {
        let why = match joint {
            None => "Select the joint to paint first (joint tree or Pose tool)".to_owned(),
            Some(_) if self.doc.skin.as_ref().and_then(|k| k.weights()).is_none() => {
                "The skin has no weights yet: bind it first".to_owned()
            }
            Some(j) if self.doc.is_locked(j as usize) => {
                format!("{} is locked: unlock it to paint it", self.doc.joint_label(j as usize))
            }
            Some(j) => return Some(j),
        };
        if pressed {
            self.set_status(why, true);
        }
        None
    }

    /// A stroke of joint `j`: what the joint loses where it is alone goes to its parent (a root's to its first
    /// child).
    fn new_stroke(&self, j: u16) -> Stroke {
        let mut stroke = Stroke::new(j);
        let joints = self.doc.skeleton.joints();
        stroke.fallback = joints[j as usize]
            .parent
            .or_else(|| joints.iter().position(|c| c.parent == Some(j as usize)))
            .map(|f| f as u16);
        stroke
    }

    /// One dab of the stroke at `center` (Ctrl inverts Add and Subtract, as in Blender), mirrored across x = 0
    /// when the brush mirrors; the touched rows go to the GPU at once.
    fn dab(&mut self, center: Vec3, radius: f32, inverted: bool) {
        let mut brush = self.paint.brush;
        if inverted {
            brush.mode = match brush.mode {
                BrushMode::Add => BrushMode::Subtract,
                BrushMode::Subtract => BrushMode::Add,
                m => m,
            };
        }
        let generation = self.doc.generation;
        if brush.mode == BrushMode::Smooth && self.paint.graph.as_ref().is_none_or(|g| g.0 != generation) {
            if let Some(skin) = &self.doc.skin {
                self.paint.graph = Some((generation, MeshGraph::new(skin.positions(), skin.triangles())));
            }
        }
        if brush.mirror && self.paint.mirror.as_ref().is_none_or(|m| m.0 != generation) {
            let positions = self.doc.skin.as_ref().map_or(&[][..], |k| k.positions());
            self.paint.mirror = Some((
                generation,
                PaintMirror::new(&self.doc.skeleton, &self.doc.bind_world(), positions),
            ));
        }
        let locks = self.doc.locks.clone();
        let (Some(surface), Some(stroke), Some(base)) = (
            self.surface.as_mut(),
            self.paint.stroke.as_mut(),
            self.doc.skin.as_ref().and_then(|k| k.weights()),
        ) else {
            return;
        };
        let (positions, normals, index) = surface.parts_for_brush();
        let dab_surface = brush::DabSurface {
            positions,
            normals,
            index,
            graph: self.paint.graph.as_ref().map(|g| &g.1),
            eye: self.viewport.camera.eye(),
        };
        let mut changed = stroke.dab(base, &dab_surface, center, radius, &brush, &locks);
        if let (true, false, Some((_, mirror))) = (brush.mirror, changed.is_empty(), &self.paint.mirror) {
            let partner = mirror
                .joints
                .get(stroke.joint as usize)
                .copied()
                .unwrap_or(stroke.joint);
            let more = stroke.mirror(base, &changed, &mirror.vertices, partner, &locks);
            changed.extend(more);
            changed.sort_unstable();
            changed.dedup();
        }
        if !changed.is_empty() {
            let stroke = &*stroke;
            self.viewport
                .upload_rows_with(&changed, |v| crate::render::pack::pack_pairs(stroke.row_iter(base, v)));
        }
    }

    /// Queue the stroke being painted, if any, as one edit; whether one was queued.
    pub(super) fn end_stroke(&mut self, cmds: &mut Vec<Command>) -> bool {
        let Some(stroke) = self.paint.stroke.take() else {
            return false;
        };
        // Named by what it did: Ctrl turns an Add stroke into Subtract.
        let mode = stroke.mode.unwrap_or(self.paint.brush.mode);
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
            return false;
        }
        cmds.push(Command::Record(DocEdit::SetRows {
            name,
            vertices,
            before,
            after,
        }));
        true
    }
}
