//! The panels around the viewport: the menu bar (`menu`), the joint tree and joint properties (`joints`), the
//! Weights panel (`weights`), the timeline, status bar and history (`bars`), and how the side panels share the
//! window.
//!
//! Panels only read: each takes the document and the app's view state and pushes [`Command`]s, which the app
//! applies in one place after the frame is drawn (`SkinbindApp::apply`). Every control has an accessibility
//! label (its text, or `Slider::text`), which is also how the GUI tests find it, and a tooltip.

mod bars;
pub(crate) mod check;
mod joints;
mod menu;
mod rotation;
mod skeleton;
mod weights;

use std::path::PathBuf;

pub(crate) use skeleton::{SkeletonPanel, skeleton_panel};

use super::document::Document;
use super::playback::Playback;
use super::settings::Settings;
use super::tools::{ToolSettings, WeightOp};
use super::viewport::{Tool, Viewport};
use super::{Command, Field, PoseKind, Status, ViewToggle};
use crate::adjust::mirror::Axis;
use crate::bind::{BindMethod, JointVolume};
use crate::paint::brush::{BrushMode, BrushSettings, Falloff};

/// What the panels read besides the document.
pub(crate) struct View<'a> {
    pub doc: &'a Document,
    pub settings: &'a Settings,
    pub undo_text: Option<String>,
    pub redo_text: Option<String>,
    pub loading: Option<&'a [PathBuf]>,
    pub status: &'a Status,
    /// Side panels turned on but hidden because the window is too narrow.
    pub hidden_panels: &'a [&'static str],
    /// Joints moved since the last bind of a weighted skin (the status bar offers to bind their region again).
    pub moved_joints: usize,
}

/// The side panels, in the order they give way when the window is narrow (the last first). The dock on the right
/// holds Properties, Check and History as tabs (rerun and Blender share a side the same way), so that they share
/// room instead of cutting each other's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Dock,
    Outliner,
    Weights,
}

impl Side {
    pub const ALL: [Side; 3] = [Side::Dock, Side::Outliner, Side::Weights];

    /// Width when there is room: together they take half of the default 1280-point window.
    pub fn default_width(self) -> f32 {
        match self {
            Side::Dock => 240.0,
            Side::Outliner => 170.0,
            Side::Weights => 230.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Side::Dock => "Properties dock",
            Side::Outliner => "Joint tree",
            Side::Weights => "Weights panel",
        }
    }
}

/// The narrowest a side panel is drawn; below this it is hidden instead.
pub(crate) const MIN_PANEL_WIDTH: f32 = 150.0;

/// The share of the window the 3D view keeps however wide the user drags the side panels.
pub(crate) const MIN_VIEW_SHARE: f32 = 0.3;

/// How wide each shown side panel starts in a window `width` wide, so that the 3D view keeps at least half:
/// the panels share half the width in proportion to their default widths (none wider than its default), and
/// when even [`MIN_PANEL_WIDTH`] each does not fit, the last in [`Side::ALL`]'s order are hidden (`None`).
pub(crate) fn side_panel_widths(width: f32, shown: &[Side]) -> Vec<(Side, Option<f32>)> {
    let budget = (width * 0.5).max(0.0);
    let mut fit: Vec<Side> = Side::ALL.iter().copied().filter(|s| shown.contains(s)).collect();
    while !fit.is_empty() && fit.len() as f32 * MIN_PANEL_WIDTH > budget {
        fit.pop();
    }
    let total: f32 = fit.iter().map(|s| s.default_width()).sum();
    let scale = if total > 0.0 { (budget / total).min(1.0) } else { 1.0 };
    shown
        .iter()
        .map(|&s| (s, fit.contains(&s).then(|| s.default_width() * scale)))
        .collect()
}

/// How wide a user may drag a panel whose start width is `share`: as far as leaves the 3D view
/// [`MIN_VIEW_SHARE`] of the window `width` beside the `others` (the other panels' widths now), never below
/// its share.
pub(crate) fn widest_panel(width: f32, share: f32, others: f32) -> f32 {
    (width * (1.0 - MIN_VIEW_SHARE) - others).max(share)
}

/// What the Weights panel shows of the weight operations: the one running, and the joints the last bind warned
/// look like controls.
pub(crate) struct WeightJobs<'a> {
    pub busy: Option<WeightOp>,
    pub likely_controls: &'a [usize],
}

/// Sliders a side panel draws leave room beside them for the widest of their `labels` and a value box, inside
/// one level of indentation (a collapsing section), so that a narrow panel shows every label whole: as wide as
/// that leaves, 40 to 100 points (where even 40 does not fit, the panel scrolls).
fn fit_sliders(ui: &mut egui::Ui, labels: &[&str]) {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let widest = ui.ctx().fonts_mut(|f| {
        labels
            .iter()
            .map(|l| {
                f.layout_no_wrap((*l).to_owned(), font.clone(), egui::Color32::WHITE)
                    .size()
                    .x
            })
            .fold(0.0, f32::max)
    });
    let spacing = ui.spacing();
    // The value box holds a few digits (it grows past `interact_size.x` for "0.010" or "-1.00").
    let beside = widest + 1.25 * spacing.interact_size.x + 2.0 * spacing.item_spacing.x + spacing.indent;
    ui.spacing_mut().slider_width = (ui.available_width() - beside).clamp(40.0, 100.0);
}

/// Names of the axes as sliders show them.
pub const AXIS_NAMES: [&str; 3] = ["X", "Y", "Z"];

/// The slider range of a rotation: its limits (`lo > hi` clamps everything to `hi`, the course loaders' order),
/// or, unlimited, half a turn either side of the file pose, so that a rest pose that reads as a half turn (a
/// glTF joint's) sits in the middle of its slider rather than pinned at one end.
pub(crate) fn slider_range(joint: &crate::model::Joint, axis: usize) -> (f32, f32) {
    use std::f32::consts::PI;
    match joint.limits.get(axis).copied().flatten() {
        Some(l) => (l.lo.min(l.hi), l.hi),
        None => {
            let rest = joint.pose.map_or(0.0, |p| p[axis]);
            let rest = if rest.is_finite() { rest } else { 0.0 };
            (rest - PI, rest + PI)
        }
    }
}

pub(crate) use bars::{history, status_bar, timeline};
pub(crate) use check::check;
pub(crate) use joints::{outliner, properties, tree_width};
pub(crate) use menu::menu_bar;
pub(crate) use weights::weights;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Joint, Limit};
    use glam::Vec3;
    use std::f32::consts::PI;

    #[test]
    fn an_unlimited_slider_is_centred_on_the_file_pose_and_a_limited_one_spans_its_limits() {
        let mut j = Joint::new("j", None, Vec3::ZERO);
        assert_eq!(slider_range(&j, 0), (-PI, PI));
        j.pose = Some(Vec3::new(PI, 0.25, f32::NAN));
        assert_eq!(slider_range(&j, 0), (0.0, 2.0 * PI));
        assert_eq!(slider_range(&j, 1), (0.25 - PI, 0.25 + PI));
        assert_eq!(slider_range(&j, 2), (-PI, PI));
        j.limits[1] = Some(Limit { lo: 0.5, hi: -0.5 });
        assert_eq!(slider_range(&j, 1), (-0.5, -0.5));
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    fn widths(width: f32, shown: &[Side]) -> Vec<Option<f32>> {
        side_panel_widths(width, shown).into_iter().map(|(_, w)| w).collect()
    }

    #[test]
    fn side_panels_leave_the_view_half_the_window_and_give_way_last_first() {
        let all = [Side::Dock, Side::Outliner, Side::Weights];
        // Wide: every panel at its default width (640 of 2000).
        assert_eq!(widths(2000.0, &all), vec![Some(240.0), Some(170.0), Some(230.0)]);
        // 1280 wide: the defaults are half the window exactly.
        let w = widths(1280.0, &all);
        assert_eq!(w, vec![Some(240.0), Some(170.0), Some(230.0)]);
        // 1024 wide: the three share 512 in proportion (240 * 512 / 640 = 192).
        let w = widths(1024.0, &all);
        assert!((w.iter().flatten().sum::<f32>() - 512.0).abs() < 1e-3, "{w:?}");
        assert!((w[0].unwrap() - 192.0).abs() < 1e-3);
        // 640 wide: 320 holds two panels of at least 150; the Weights panel gives way.
        let w = widths(640.0, &all);
        assert_eq!(w[2], None);
        assert!((w[0].unwrap() + w[1].unwrap() - 320.0).abs() < 1e-3, "{w:?}");
        // Order given is kept; hidden panels stay hidden.
        let w = side_panel_widths(1280.0, &[Side::Weights, Side::Outliner]);
        assert_eq!(w[0].0, Side::Weights);
        assert_eq!(w.iter().filter_map(|x| x.1).sum::<f32>(), 400.0);
        assert!(side_panel_widths(200.0, &all).iter().all(|x| x.1.is_none()));
    }

    #[test]
    fn a_panel_widens_until_the_view_keeps_its_share_and_never_below_its_start() {
        // 1280 wide, the others 400 wide: up to 1280 * 0.7 - 400 = 496.
        assert!((widest_panel(1280.0, 240.0, 400.0) - 496.0).abs() < 1e-3);
        // The others already take everything: the panel keeps its start width.
        assert_eq!(widest_panel(1280.0, 240.0, 1000.0), 240.0);
    }
}
