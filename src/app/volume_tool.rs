//! Containment volumes in the viewport: the selected joint's volume as a bind would use it, and dragging its
//! outline to set its radius.

use glam::Vec3;

use super::{Command, Field, SkinbindApp, ViewportResponse, viewport};
use crate::bind::JointVolume;

/// The volume tool's state between frames.
#[derive(Default)]
pub(super) struct VolumeTool {
    /// The volumes as a bind would use them, for the document and settings they were computed for.
    cache: Option<VolumeCache>,
    /// The selected joint's volume, for the view.
    pub(super) overlay: Option<viewport::VolumeOverlay>,
    /// A drag of a volume's outline in the view: the joint and its volume when the drag began.
    before: Option<(usize, JointVolume)>,
}

/// Containment volumes as a bind would use them.
struct VolumeCache {
    /// The document generation and the volume settings they were computed for.
    generation: u64,
    settings: Vec<JointVolume>,
    /// Each joint's radius.
    radii: Vec<f32>,
    /// The scaled segments, as (joint, a, b).
    segments: Vec<(u16, Vec3, Vec3)>,
}

impl SkinbindApp {
    /// The selected joint's containment volume for the view, when volumes are shown (View menu, or a bind
    /// method that uses them); the volumes are recomputed only when the mesh or the volume settings change.
    pub(super) fn update_volume_overlay(&mut self) {
        let shown = self.viewport.show_volumes
            || matches!(
                self.tools.method,
                crate::bind::BindMethod::Volume | crate::bind::BindMethod::Hybrid
            );
        let (Some(j), Some(skin), true) = (self.doc.selected, self.doc.skin.as_ref(), shown) else {
            self.volume_tool.overlay = None;
            return;
        };
        let stale = self
            .volume_tool
            .cache
            .as_ref()
            .is_none_or(|c| c.generation != self.doc.generation || c.settings != self.doc.volumes);
        // A radius set by hand (a drag of the outline) changes only that joint's radius: no recomputing.
        if let Some(c) = self
            .volume_tool
            .cache
            .as_mut()
            .filter(|c| stale && c.generation == self.doc.generation)
        {
            let only_set_radii = c.settings.len() == self.doc.volumes.len()
                && c.settings.iter().zip(&self.doc.volumes).all(|(a, b)| {
                    a.length_scale == b.length_scale
                        && (a.radius == b.radius || (a.radius.is_some() && b.radius.is_some()))
                });
            if only_set_radii {
                for (k, v) in self.doc.volumes.iter().enumerate() {
                    if let (Some(r), Some(slot)) = (v.radius, c.radii.get_mut(k)) {
                        *slot = r;
                    }
                }
                c.settings = self.doc.volumes.clone();
            }
        }
        let stale = self
            .volume_tool
            .cache
            .as_ref()
            .is_none_or(|c| c.generation != self.doc.generation || c.settings != self.doc.volumes);
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
            self.volume_tool.cache = Some(VolumeCache {
                generation: self.doc.generation,
                settings: self.doc.volumes.clone(),
                radii,
                segments: segs,
            });
        }
        self.volume_tool.overlay = self.volume_tool.cache.as_ref().and_then(|c| {
            Some(viewport::VolumeOverlay {
                joint: j,
                radius: *c.radii.get(j)?,
                segments: c
                    .segments
                    .iter()
                    .filter(|s| s.0 as usize == j)
                    .map(|s| (s.1, s.2))
                    .collect(),
            })
        });
    }

    /// A drag of the selected joint's volume outline in the view: live radius changes while it goes on, one
    /// edit (from the volume when it began) when it ends.
    pub(super) fn volume_drag(&mut self, response: &ViewportResponse, cmds: &mut Vec<Command>) {
        let (Some((r, done)), Some(j)) = (response.volume_radius, self.doc.selected) else {
            return;
        };
        // The view's own drag state: the Properties field of the same radius must not end it.
        if self.volume_tool.before.is_none_or(|(k, _)| k != j) {
            self.volume_tool.before = self.doc.volumes.get(j).map(|v| (j, *v));
        }
        cmds.push(Command::Live(Field::VolumeRadius(j), r));
        if done {
            if let Some((k, before)) = self.volume_tool.before.take() {
                cmds.push(Command::CommitVolume(k, before));
            }
        }
    }
}
