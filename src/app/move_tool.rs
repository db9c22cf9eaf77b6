//! The Move tool in the viewport: drag a vertex and its weights are solved so that skinning puts it under the
//! pointer; the release queues one edit.

use glam::Vec3;

use super::{Command, DocEdit, SkinbindApp, Tool, ViewportResponse, surface::PosedSurface};
use crate::model::Row;

/// The Move tool's state between frames.
#[derive(Default)]
pub(super) struct MoveTool {
    /// The vertex being dragged.
    drag: Option<MoveDrag>,
}

/// A vertex being moved: where it was when the drag began, its row then, and its row now.
struct MoveDrag {
    vertex: u32,
    start: Vec3,
    before: Row,
    now: Row,
}

impl SkinbindApp {
    /// The Move tool, once per frame: press on the skin to take the nearest vertex, drag it in the plane facing
    /// the view, and its weights are solved (`paint::solve_weights_for_target`) so that skinning puts it under
    /// the pointer; the GPU shows it at once and the release queues one edit. The vertex is selected after.
    pub(super) fn move_frame(&mut self, response: &ViewportResponse, cmds: &mut Vec<Command>) {
        if self.viewport.tool != Tool::Move {
            self.move_tool.drag = None;
            return;
        }
        let Some((o, d)) = response.pointer_ray else { return };
        if response.primary_pressed {
            PosedSurface::refresh(&mut self.surface, &self.doc);
            let hit = self.surface.as_ref().and_then(|s| s.ray_cast(o, d));
            let w = self.doc.skin.as_ref().and_then(|k| k.weights());
            self.move_tool.drag = match (hit, w) {
                (Some(h), Some(w)) => {
                    let start = self
                        .surface
                        .as_ref()
                        .map_or(h.point, |s| s.positions[h.vertex as usize]);
                    let mut row = Row::new();
                    w.row_pairs(h.vertex as usize, &mut row);
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
            if let Some(m) = self.move_tool.drag.take() {
                self.doc.selected_vertices = vec![m.vertex];
                if m.now != m.before {
                    cmds.push(Command::Record(DocEdit::SetRows {
                        name: format!("move vertex {}", m.vertex),
                        vertices: vec![m.vertex],
                        before: vec![m.before],
                        after: vec![m.now],
                    }));
                }
            }
            return;
        }
        let Some(m) = self.move_tool.drag.as_ref() else { return };
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
        if let Some(m) = self.move_tool.drag.as_mut() {
            m.now = row.clone();
        }
        let (js, ws): (Vec<u16>, Vec<f32>) = row.into_iter().unzip();
        self.viewport
            .upload_rows(vertex as usize, vec![crate::render::pack::pack_row(&js, &ws)]);
    }

    /// Weights for `vertex` (whose row was `row`) that put it at `target` in the current pose
    /// ([`paint::solve_move`](crate::paint::solve_move)).
    fn solve_move(&self, vertex: u32, row: &Row, target: Vec3) -> Option<Row> {
        let skin = self.doc.skin.as_ref()?;
        let p = *skin.positions().get(vertex as usize)?;
        let skel = &self.doc.skeleton;
        let bind = crate::deform::bind_world_from_joint(skel, skin, &crate::model::Pose::from_file(skel));
        let skinning = crate::deform::skinning_matrices(&self.world, &bind);
        let joints = crate::paint::MoveJoints {
            skeleton: skel,
            skinning: &skinning,
            locks: &self.doc.locks,
            selected: self.doc.selected.map(|j| j as u16),
        };
        crate::paint::solve_move(&joints, p, row, target)
    }
}
