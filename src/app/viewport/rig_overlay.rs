//! What the Skeleton mode draws over the view for the selected joint: its box (the `.skel` boxmin/boxmax, in the
//! joint's space) and, for each limited rotation axis, the arc its bone's tip sweeps as that angle goes from the
//! lower limit to the upper one with the other two held (Maya draws joint limits the same way).

use glam::{Mat4, Vec2, Vec3};

use super::*;
use crate::model::skeleton::parent_from_joint;

/// Colours of the X, Y and Z limit arcs (the axis colours of the grid).
const AXIS_COLOURS: [egui::Color32; 3] = [
    egui::Color32::from_rgb(230, 90, 90),
    egui::Color32::from_rgb(110, 210, 110),
    egui::Color32::from_rgb(100, 150, 240),
];

/// The box's colour.
const BOX_COLOUR_JOINT: egui::Color32 = egui::Color32::from_rgb(200, 200, 120);

/// Points along one limit arc (the bone's tip as the axis turns through its range).
const ARC_STEPS: usize = 24;

/// The arcs of joint `j`'s limited axes in `pose`, as world polylines with their axis: the tip of the bone (its
/// first child's offset, or a tenth of the skeleton's size along the joint's y without one) as that axis's angle
/// sweeps its range, the other two angles held. Pure: the view projects what this returns.
pub fn limit_arcs(skel: &Skeleton, world: &[Mat4], pose: &Pose, j: usize) -> Vec<(usize, Vec<Vec3>)> {
    let Some(joint) = skel.joint(j) else { return Vec::new() };
    let parent = joint
        .parent
        .and_then(|p| world.get(p))
        .copied()
        .unwrap_or(Mat4::IDENTITY);
    let offset = if j == 0 { pose.root_translation } else { joint.offset };
    let dof = pose.dofs.get(j).copied().unwrap_or(Vec3::ZERO);
    let tip = match skel.children(j).first() {
        Some(&c) => skel.joints()[c].offset,
        None => Vec3::Y * joint.offset.length().max(1e-3) * 0.5,
    };
    let mut out = Vec::new();
    for axis in 0..3 {
        let Some(l) = joint.limits[axis] else { continue };
        if !(l.lo.is_finite() && l.hi.is_finite()) || l.hi <= l.lo {
            continue;
        }
        let points = (0..=ARC_STEPS)
            .map(|k| {
                let mut d = dof;
                d[axis] = l.lo + (l.hi - l.lo) * k as f32 / ARC_STEPS as f32;
                (parent * parent_from_joint(offset, d)).transform_point3(tip)
            })
            .collect();
        out.push((axis, points));
    }
    out
}

impl Viewport {
    /// The selected joint's box and limit arcs, in the Skeleton mode.
    pub(super) fn paint_rig_overlay(&self, ui: &egui::Ui, rect: egui::Rect, size: Vec2, scene: &SceneRef<'_>) {
        if self.tool != Tool::Skeleton {
            return;
        }
        let (Some(j), Some(pose)) = (scene.selected, scene.pose) else {
            return;
        };
        let Some(joint) = scene.skeleton.joint(j) else { return };
        let Some(w) = scene.world_from_joint.get(j) else { return };
        let painter = ui.painter_at(rect);
        let at = |p: Vec3| {
            self.camera
                .project(p, size)
                .map(|(s, _)| egui::pos2(rect.min.x + s.x, rect.min.y + s.y))
        };
        let (lo, hi) = joint.bounds();
        let corner = |k: usize| {
            let c = Vec3::new(
                if k & 1 == 0 { lo.x } else { hi.x },
                if k & 2 == 0 { lo.y } else { hi.y },
                if k & 4 == 0 { lo.z } else { hi.z },
            );
            w.transform_point3(c)
        };
        let stroke = egui::Stroke::new(1.0, BOX_COLOUR_JOINT);
        for a in 0..8usize {
            for bit in [1, 2, 4] {
                if a & bit == 0 {
                    if let (Some(p), Some(q)) = (at(corner(a)), at(corner(a | bit))) {
                        painter.line_segment([p, q], stroke);
                    }
                }
            }
        }
        for (axis, points) in limit_arcs(scene.skeleton, scene.world_from_joint, pose, j) {
            let line: Vec<egui::Pos2> = points.into_iter().filter_map(at).collect();
            painter.add(egui::Shape::line(line, egui::Stroke::new(2.0, AXIS_COLOURS[axis])));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Joint, Limit};

    /// A knee limited to [0, pi/2] about x: its shin's tip sweeps a quarter circle from straight down to
    /// straight back, worked out by hand: Rx(t) turns (0, -1, 0) into (0, -cos t, -sin t).
    #[test]
    fn a_hinge_limit_sweeps_the_bone_tip_through_its_range() {
        let mut knee = Joint::new("knee", Some(0), Vec3::new(0.0, -1.0, 0.0));
        knee.limits[0] = Some(Limit {
            lo: 0.0,
            hi: std::f32::consts::FRAC_PI_2,
        });
        let skel = Skeleton::new(vec![
            Joint::new("hip", None, Vec3::ZERO),
            knee,
            Joint::new("ankle", Some(1), Vec3::new(0.0, -1.0, 0.0)),
        ])
        .unwrap();
        let pose = Pose::zero(&skel);
        let world = crate::model::world_from_joint(&skel, &pose);
        let arcs = limit_arcs(&skel, &world, &pose, 1);
        assert_eq!(arcs.len(), 1);
        let (axis, p) = &arcs[0];
        assert_eq!(*axis, 0);
        assert!((p[0] - Vec3::new(0.0, -2.0, 0.0)).length() < 1e-6);
        assert!((p[ARC_STEPS] - Vec3::new(0.0, -1.0, -1.0)).length() < 1e-6);
        assert!(limit_arcs(&skel, &world, &pose, 0).is_empty(), "no limits, no arcs");
    }
}
