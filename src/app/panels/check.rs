//! The Check panel: run a range-of-motion check with progress and cancel, the score legend, the problems worst
//! first (a click poses the rig where the problem is worst and frames it), and each problem's fixes.

use egui::{Button, Slider};

use super::*;
use crate::app::check_tool::{Busy, CheckTool};
use crate::check::fix::Fix;

/// Problems listed at most (the rest are counted).
const MAX_LISTED: usize = 200;

pub(crate) fn check(
    ui: &mut egui::Ui,
    doc: &Document,
    tool: &mut CheckTool,
    dual_quaternion: bool,
    cmds: &mut Vec<Command>,
) {
    fit_sliders(ui, &["Free swing (°)", "Steps"]);
    let has_weights = doc.skin.as_ref().is_some_and(|k| k.weights().is_some());
    let current = tool.is_current(doc);
    egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
        ui.label(format!(
            "Sweeps every joint through its range and measures the skin, skinned by {} as the view is.",
            if dual_quaternion {
                "dual quaternions"
            } else {
                "linear blend"
            }
        ));
        egui::CollapsingHeader::new("Options")
            .default_open(false)
            .show(ui, |ui| {
                ui.add(Slider::new(&mut tool.settings.free_degrees, 10.0..=180.0).text("Free swing (°)"))
                    .on_hover_text("How far a joint without DOF limits swings about each axis, both ways");
                ui.add(Slider::new(&mut tool.settings.steps, 1..=8).text("Steps"))
                    .on_hover_text("Poses from the bind pose to each end of a range");
                ui.add_enabled(
                    doc.clip.is_some(),
                    egui::Checkbox::new(&mut tool.settings.animation, "Animation frames"),
                )
                .on_hover_text("Measure every frame of the clip too (the command line's --anim)")
                .on_disabled_hover_text("Open an animation first");
            });
        // The options in use, whether or not the section is open: the command line gives the same findings.
        let method = tool.shown.as_ref().map_or(
            if dual_quaternion {
                crate::deform::Method::DualQuaternion
            } else {
                crate::deform::Method::Linear
            },
            |s| s.report.method,
        );
        ui.small(tool.settings.describe(method, doc));
        match &tool.job {
            Some(job) => {
                let (done, total) = job.progress();
                ui.horizontal(|ui| {
                    let what = match job.busy {
                        Busy::Checking => "Checking",
                        Busy::CheckingAgain => "Checking again",
                        Busy::Fixing => "Fixing",
                    };
                    let frac = if total > 0 { done as f32 / total as f32 } else { 0.0 };
                    ui.add(
                        egui::ProgressBar::new(frac)
                            .desired_width(ui.available_width() * 0.6)
                            .text(format!("{what} {done}/{total}")),
                    );
                    if job.busy != Busy::Fixing && ui.button("Cancel").on_hover_text("Stop the check").clicked() {
                        cmds.push(Command::CancelCheck);
                    }
                });
            }
            None => {
                let r = ui
                    .add_enabled(has_weights, Button::new("Run check"))
                    .on_hover_text("Sweep every joint that deforms something and list where the skin deforms badly")
                    .on_disabled_hover_text("Open a skin with weights first (or bind one)");
                if r.clicked() {
                    cmds.push(Command::RunCheck);
                }
            }
        }
        ui.add_space(4.0);
        legend(ui);
        let Some(shown) = &tool.shown else {
            ui.label("No check yet.");
            return;
        };
        if !current {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                "The rig changed since this check: check again to see it.",
            );
            let r = ui
                .add_enabled(tool.job.is_none(), Button::new("Check what changed"))
                .on_hover_text(
                    "Check again only the joints whose sweeps read a changed weight (and the animation, when it \
                     was measured); a changed skeleton or bind pose checks everything",
                );
            if r.clicked() {
                cmds.push(Command::CheckChanged);
            }
        }
        ui.label(crate::app::check_tool::summary(&shown.report, None));
        let (counts, joints) = (shown.report.counts, shown.report.joints.clone());
        filters(ui, &mut tool.filter, &counts, &joints);
        ui.separator();
        let Some(shown) = &tool.shown else { return };
        let report = &shown.report;
        let bind = doc.bind_world();
        let mut clicked = None;
        let listed = report.findings.iter().enumerate().filter(|(_, f)| tool.filter.shows(f));
        let hidden = report.findings.len() - report.findings.iter().filter(|f| tool.filter.shows(f)).count();
        for (i, f) in listed.take(MAX_LISTED) {
            let text = format!(
                "{:.2}  {} · {} · {} vertices",
                f.severity,
                f.kind.label(),
                f.pose.describe(&doc.skeleton, &bind),
                f.region.vertices.len()
            );
            let r = ui
                .selectable_label(
                    tool.selected == Some(i),
                    egui::RichText::new(text).color(severity_colour(f.severity)),
                )
                .on_hover_text(format!(
                    "{} when {} moves; around {}. Click to pose the rig there and frame it.",
                    f.kind.describe(f.value),
                    f.joint_name,
                    f.region.around.join(", ")
                ));
            if r.clicked() {
                clicked = Some(i);
            }
            if tool.selected == Some(i) && std::mem::take(&mut tool.scroll_to_selected) {
                r.scroll_to_me(Some(egui::Align::Center));
            }
            if tool.selected == Some(i) {
                ui.indent(i, |ui| {
                    ui.small(f.kind.describe(f.value));
                    ui.horizontal_wrapped(|ui| {
                        let first = Fix::suggested(f.kind);
                        let order = std::iter::once(first).chain(Fix::ALL.into_iter().filter(|&x| x != first));
                        for fix in order {
                            let r = ui
                                .add_enabled(tool.job.is_none() && current, Button::new(fix.label()))
                                .on_hover_text(fix_tip(fix))
                                .on_disabled_hover_text("Wait for the check, or run it again on the current weights");
                            if r.clicked() {
                                cmds.push(Command::FixFinding(i, fix));
                            }
                        }
                    });
                });
            }
        }
        let shown_count = report.findings.len() - hidden;
        if shown_count > MAX_LISTED {
            ui.small(format!("and {} more", shown_count - MAX_LISTED));
        }
        if hidden > 0 {
            ui.small(format!("{hidden} problems hidden by the filters"));
        }
        if let Some(i) = clicked {
            cmds.push(Command::ShowFinding(i));
        }
    });
}

/// Joints listed under "Worst joints" at most.
const WORST_JOINTS: usize = 8;

/// The list's filters: a box per kind (with its count), and the worst joints, a click showing one joint's
/// problems only.
fn filters(
    ui: &mut egui::Ui,
    filter: &mut crate::app::check_tool::ListFilter,
    counts: &[usize; crate::check::Kind::COUNT],
    joints: &[crate::check::JointSummary],
) {
    use crate::check::Kind;
    ui.horizontal_wrapped(|ui| {
        for kind in Kind::ALL {
            let n = counts[kind.index()];
            if n > 0 {
                ui.checkbox(&mut filter.kinds[kind.index()], format!("{} {n}", kind.label()))
                    .on_hover_text(
                        "Show or hide this kind of problem in the list (the view's colours keep every kind)",
                    );
            }
        }
    });
    egui::CollapsingHeader::new("Worst joints")
        .default_open(false)
        .show(ui, |ui| {
            for s in joints.iter().filter(|s| s.findings > 0).take(WORST_JOINTS) {
                let on = filter.joint == Some(s.joint);
                let text = egui::RichText::new(format!("{:.2}  {} · {} problems", s.worst, s.name, s.findings))
                    .color(severity_colour(s.worst));
                if ui
                    .selectable_label(on, text)
                    .on_hover_text("List only the problems this joint's sweep finds (click again for all)")
                    .clicked()
                {
                    filter.joint = if on { None } else { Some(s.joint) };
                }
            }
        });
}

fn fix_tip(fix: Fix) -> &'static str {
    match fix {
        Fix::Smooth => "Smooth the weights over the region and two edges around it (one undoable edit)",
        Fix::RemoveStray => {
            "Replace the region's weights by those around it, removing weight its surroundings do not have (one undoable edit)"
        }
        Fix::BindAgain => {
            "Bind the region (and two edges around it) again with the Weights panel's bind settings, then blend its border (one undoable edit)"
        }
    }
}

fn severity_colour(s: f32) -> egui::Color32 {
    let [r, g, b] = crate::render::score::colour(s);
    // The list is text on a dark panel: lift the dark end of the map.
    let lift = |c: f32| ((0.35 + 0.65 * c) * 255.0) as u8;
    egui::Color32::from_rgb(lift(r), lift(g), lift(b))
}

/// The score colour map with its scale: a bar from 0 to past 2, the tolerance at 1.
pub(crate) fn legend(ui: &mut egui::Ui) {
    let width = ui.available_width().min(240.0);
    let (rect, _) = ui.allocate_exact_size(egui::vec2(width, 44.0), egui::Sense::hover());
    paint_legend(ui.painter(), rect);
}

/// Paint the legend into `rect` (about 44 points high): the bar, the scale's numbers under it, and what 1 means.
pub(crate) fn paint_legend(painter: &egui::Painter, rect: egui::Rect) {
    use crate::render::score::{STOPS, colour};
    let top = STOPS[STOPS.len() - 1].0;
    let bar = egui::Rect::from_min_max(rect.min, egui::pos2(rect.max.x, rect.min.y + 12.0));
    let steps = 48;
    for k in 0..steps {
        let (a, b) = (k as f32 / steps as f32, (k + 1) as f32 / steps as f32);
        let [r, g, bl] = colour((a + b) * 0.5 * top);
        let x = |t: f32| bar.min.x + t * bar.width();
        painter.rect_filled(
            egui::Rect::from_min_max(egui::pos2(x(a), bar.min.y), egui::pos2(x(b), bar.max.y)),
            0.0,
            egui::Color32::from_rgb((r * 255.0) as u8, (g * 255.0) as u8, (bl * 255.0) as u8),
        );
    }
    for (s, text) in [(0.0, "0"), (0.5, "0.5"), (1.0, "1"), (1.5, "1.5"), (2.5, "2.5+")] {
        let x = bar.min.x + s / top * bar.width();
        painter.line_segment(
            [egui::pos2(x, bar.min.y), egui::pos2(x, bar.max.y + 2.0)],
            egui::Stroke::new(1.0, egui::Color32::from_gray(20)),
        );
        let align = if s >= top {
            egui::Align2::RIGHT_TOP
        } else if s == 0.0 {
            egui::Align2::LEFT_TOP
        } else {
            egui::Align2::CENTER_TOP
        };
        painter.text(
            egui::pos2(x, bar.max.y + 2.0),
            align,
            text,
            egui::FontId::proportional(11.0),
            egui::Color32::from_gray(210),
        );
    }
    painter.text(
        egui::pos2(bar.min.x, bar.max.y + 16.0),
        egui::Align2::LEFT_TOP,
        "1 = at the tolerance: a problem",
        egui::FontId::proportional(11.0),
        egui::Color32::from_gray(170),
    );
}
