//! The side panels around the 3D view: the joint tree and the Weights panel on the left, and on the right a dock
//! whose tabs (Properties, Check, History) share one column, so that panels share room instead of cutting each
//! other's text (rerun lays out its views with tiles; Blender's properties editor has tabs).
//!
//! At the window's start the panels share half its width (`panels::side_panel_widths`); each can be dragged
//! wider until the 3D view keeps [`panels::MIN_VIEW_SHARE`] of it, and a width a user chose is kept in the
//! settings for the next session.

use super::*;
use panels::Side;
use settings::DockTab;

/// The side panels' widths last frame and where they were drawn.
#[derive(Debug, Default)]
pub(super) struct SideState {
    /// Width drawn last frame, per [`Side::ALL`] entry (None: not drawn).
    last: [Option<f32>; 3],
    /// Where each drawn panel was, by name (for tests that look for cut text).
    pub(super) rects: Vec<(&'static str, egui::Rect)>,
    /// The width the joint tree needs for its names, for the document generation it was measured on.
    tree: Option<(u64, f32)>,
}

fn index(side: Side) -> usize {
    Side::ALL.iter().position(|&s| s == side).unwrap_or(0)
}

impl SkinbindApp {
    /// Which side panels show this frame and how wide they start; panels turned on that do not fit are named in
    /// `hidden_panels` (a hidden dock by its tabs).
    pub(super) fn plan_sides(&mut self, ctx: &egui::Context) -> Vec<(Side, Option<f32>)> {
        let s = &self.settings;
        let shown: Vec<Side> = Side::ALL
            .into_iter()
            .filter(|side| match side {
                Side::Dock => s.front_tab().is_some(),
                Side::Outliner => s.show_outliner,
                Side::Weights => s.show_weights,
            })
            .collect();
        let widths = panels::side_panel_widths(ctx.content_rect().width(), &shown);
        self.hidden_panels = Vec::new();
        for (side, w) in &widths {
            if w.is_some() {
                continue;
            }
            match side {
                Side::Dock => self
                    .hidden_panels
                    .extend(DockTab::ALL.into_iter().filter(|&t| s.shows(t)).map(DockTab::title)),
                _ => self.hidden_panels.push(side.name()),
            }
        }
        widths
    }

    /// Draw the side panels `plan` keeps, each resizable; remember a width the user dragged to.
    pub(super) fn side_panels(&mut self, ui: &mut egui::Ui, plan: &[(Side, Option<f32>)], cmds: &mut Vec<Command>) {
        let window = ui.ctx().content_rect().width();
        let mut drawn = [None; 3];
        self.sides.rects.clear();
        for &(side, share) in plan {
            let Some(share) = share else { continue };
            let others: f32 = plan
                .iter()
                .filter(|(s, w)| *s != side && w.is_some())
                .map(|(s, w)| self.sides.last[index(*s)].or(*w).unwrap_or(0.0))
                .sum();
            let max = panels::widest_panel(window, share, others);
            let remembered = match side {
                Side::Dock => self.settings.panel_widths.dock,
                Side::Outliner => self.settings.panel_widths.tree,
                Side::Weights => self.settings.panel_widths.weights,
            };
            let mut least = panels::MIN_PANEL_WIDTH.min(share);
            if side == Side::Outliner {
                // The tree widens to show its names whole where the window has room (it scrolls beyond that).
                least = least.max(self.tree_width(ui.ctx()).min(max));
            }
            let start = remembered.unwrap_or(share).max(least);
            let panel = match side {
                Side::Dock => egui::Panel::right("dock"),
                Side::Outliner => egui::Panel::left("outliner"),
                Side::Weights => egui::Panel::left("weights"),
            }
            .resizable(true)
            .size_range(least..=max)
            .default_size(start.clamp(least, max));
            let rect = match side {
                Side::Outliner => panel.show(ui, |ui| panels::outliner(ui, &self.doc, cmds)).response.rect,
                Side::Weights => panel.show(ui, |ui| self.weights_panel(ui, cmds)).response.rect,
                Side::Dock => panel.show(ui, |ui| self.dock(ui, cmds)).response.rect,
            };
            drawn[index(side)] = Some(rect.width());
            self.sides.rects.push((side.name(), rect));
        }
        self.sides.last = drawn;
        self.remember_widths(ui.ctx());
    }

    /// The width the joint tree needs (measured again when the document changes).
    fn tree_width(&mut self, ctx: &egui::Context) -> f32 {
        match self.sides.tree {
            Some((g, w)) if g == self.doc.generation => w,
            _ => {
                let w = panels::tree_width(ctx, &self.doc);
                self.sides.tree = Some((self.doc.generation, w));
                w
            }
        }
    }

    /// After a drag ends, keep each panel's width in the settings when it changed.
    fn remember_widths(&mut self, ctx: &egui::Context) {
        if !ctx.input(|i| i.pointer.any_released()) {
            return;
        }
        let w = &mut self.settings.panel_widths;
        let mut changed = false;
        for (side, slot) in [
            (Side::Dock, &mut w.dock),
            (Side::Outliner, &mut w.tree),
            (Side::Weights, &mut w.weights),
        ] {
            let Some(now) = self.sides.last[index(side)] else {
                continue;
            };
            let before = slot.unwrap_or(side.default_width());
            if (now - before).abs() > 1.0 {
                *slot = Some(now);
                changed = true;
            }
        }
        if changed {
            self.save_settings();
        }
    }

    fn weights_panel(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        let busy = self.job.as_ref().map(|j| j.op);
        let controls = self.likely_controls.for_generation(self.doc.generation);
        panels::weights(
            ui,
            &self.doc,
            &mut self.tools,
            &mut self.viewport.tool,
            &mut self.paint.brush,
            panels::WeightJobs {
                busy,
                likely_controls: controls,
            },
            cmds,
        )
    }

    /// The dock: a row of tabs for the panels turned on, then the one in front.
    fn dock(&mut self, ui: &mut egui::Ui, cmds: &mut Vec<Command>) {
        let Some(front) = self.settings.front_tab() else { return };
        ui.horizontal(|ui| {
            for tab in DockTab::ALL.into_iter().filter(|&t| self.settings.shows(t)) {
                let tip = match tab {
                    DockTab::Properties => "The selected joint's pose and settings (the Skeleton mode's tools there)",
                    DockTab::Check => "The range-of-motion check: where the skin deforms badly, and fixes",
                    DockTab::History => "Every edit by name; click one to go back or forward to it",
                };
                let title = egui::RichText::new(tab.title()).heading();
                if ui.selectable_label(tab == front, title).on_hover_text(tip).clicked() && tab != front {
                    cmds.push(Command::ShowTab(tab));
                }
            }
        });
        ui.separator();
        match front {
            DockTab::Properties => {
                if self.viewport.tool == Tool::Skeleton {
                    let warnings = self.skeleton_warnings();
                    let fitting = self.fit_job.as_ref().map(|j| j.what.as_str());
                    let (panel, mirror) = (&mut self.skeleton_panel, &mut self.skeleton.x_mirror);
                    panels::skeleton_panel(ui, &self.doc, panel, mirror, &warnings, fitting, cmds);
                } else {
                    panels::properties(ui, &self.doc, &mut self.drag, cmds);
                }
            }
            DockTab::Check => {
                let dq = self.viewport.settings.dual_quaternion;
                panels::check(ui, &self.doc, &mut self.check, dq, cmds);
            }
            DockTab::History => {
                let entries: Vec<String> = self.history.entries().map(|e| e.to_string()).collect();
                let (head, saved) = (self.history.head(), self.history.saved());
                panels::history(ui, &entries, head, saved, cmds);
            }
        }
    }

    /// Where each side panel was drawn last frame, by name ("Joint tree", "Weights panel", "Properties dock").
    pub fn panel_rects(&self) -> &[(&'static str, egui::Rect)] {
        &self.sides.rects
    }
}
