//! The modal questions: unsaved changes before quitting or opening, unweighted vertices before saving, a
//! skeleton that does not fit, recovery of an autosaved session, and the path field where no dialog opens.

use std::path::PathBuf;

use egui::ViewportCommand;

use super::files::{PathPrompt, PathPurpose, file_name};
use super::*;

/// The answer to [`UnsavedQuestion`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UnsavedAnswer {
    Save,
    Discard,
    Cancel,
}

/// "Unsaved changes": Save and go on / go on without saving / Cancel, before an action that would lose them
/// (quitting, opening over the document).
struct UnsavedQuestion<'a> {
    id: &'static str,
    message: String,
    /// Label and hover text of the two ways on.
    save: (&'a str, &'a str),
    discard: (&'a str, &'a str),
    cancel_tip: &'a str,
}

impl UnsavedQuestion<'static> {
    /// The question asked before an open would replace a document with unsaved changes.
    fn before_opening(id: &'static str, message: String) -> Self {
        Self {
            id,
            message,
            save: ("Save and open", "Save, then open"),
            discard: (
                "Open without saving",
                "Open and lose the changes (the autosave keeps them until then)",
            ),
            cancel_tip: "Keep editing; open nothing",
        }
    }
}

impl UnsavedQuestion<'_> {
    /// Show the question; the answer once given (closing the window cancels).
    fn ask(&self, ctx: &egui::Context) -> Option<UnsavedAnswer> {
        let mut answer = None;
        let modal = egui::Modal::new(egui::Id::unique(self.id)).show(ctx, |ui| {
            ui.heading("Unsaved changes");
            ui.label(&self.message);
            ui.horizontal(|ui| {
                if ui.button(self.save.0).on_hover_text(self.save.1).clicked() {
                    answer = Some(UnsavedAnswer::Save);
                }
                if ui.button(self.discard.0).on_hover_text(self.discard.1).clicked() {
                    answer = Some(UnsavedAnswer::Discard);
                }
                if ui.button("Cancel").on_hover_text(self.cancel_tip).clicked() {
                    answer = Some(UnsavedAnswer::Cancel);
                }
            });
        });
        if modal.should_close() && answer.is_none() {
            answer = Some(UnsavedAnswer::Cancel);
        }
        answer
    }
}

impl SkinbindApp {
    /// The path field shown where no file dialog opens.
    pub(super) fn path_modal(&mut self, ctx: &egui::Context) {
        let Some(PathPrompt {
            purpose,
            mut text,
            mut focused,
        }) = self.path_prompt.take()
        else {
            return;
        };
        let (title, action) = match purpose {
            PathPurpose::Open => ("Open a file", "Open"),
            PathPurpose::SaveAs => ("Save the skeleton (and skin beside it) as", "Save"),
            PathPurpose::SaveSession => ("Save the session as", "Save"),
            PathPurpose::ExportGlb => ("Export the rig as .glb to", "Export"),
            PathPurpose::FitTemplate => ("Fit into the mesh the rig in", "Fit"),
        };
        let (mut ok, mut cancel) = (false, false);
        let modal = egui::Modal::new(egui::Id::unique("path-prompt")).show(ctx, |ui| {
            ui.heading(title);
            ui.horizontal(|ui| {
                let label = ui.label("Path");
                let edit = ui
                    .add(egui::TextEdit::singleline(&mut text).desired_width(420.0))
                    .labelled_by(label.id);
                // The field takes the focus when the question opens (nothing else in it wants typing).
                if !focused {
                    edit.request_focus();
                    focused = true;
                }
                ok |= edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            });
            ui.horizontal(|ui| {
                ok |= ui
                    .add_enabled(!text.trim().is_empty(), egui::Button::new(action))
                    .clicked();
                cancel |= ui.button("Cancel").clicked();
            });
        });
        cancel |= modal.should_close() && !ok;
        if cancel {
            return;
        }
        if !ok || text.trim().is_empty() {
            self.path_prompt = Some(PathPrompt { purpose, text, focused });
            return;
        }
        let path = PathBuf::from(text.trim());
        match purpose {
            PathPurpose::Open => self.open_or_ask(vec![path], ctx),
            PathPurpose::SaveAs => {
                self.save_as_to(path);
            }
            PathPurpose::SaveSession => {
                self.save_session_to(path);
            }
            PathPurpose::ExportGlb => {
                self.export_glb_to(path);
            }
            PathPurpose::FitTemplate => self.start_fit_file(ctx, vec![path]),
        }
    }

    /// "N vertices have no weights": save anyway, or go back and bind them.
    pub(super) fn unweighted_modal(&mut self, ctx: &egui::Context, cmds: &mut Vec<Command>) {
        let Some((_, count)) = &self.confirm_unweighted else {
            return;
        };
        let count = *count;
        let asked = cmds.len();
        let modal = egui::Modal::new(egui::Id::unique("confirm-unweighted")).show(ctx, |ui| {
            ui.heading("Unweighted vertices");
            ui.label(format!(
                "{count} vertices have no weights; a program that loads the file may drop or misplace them. \
                 Bind them first (Weights panel), or save anyway."
            ));
            ui.horizontal(|ui| {
                if ui
                    .button("Save anyway")
                    .on_hover_text("Write the files with the unweighted vertices")
                    .clicked()
                {
                    cmds.push(Command::ConfirmUnweighted(true));
                }
                if ui.button("Cancel").on_hover_text("Do not save").clicked() {
                    cmds.push(Command::ConfirmUnweighted(false));
                }
            });
        });
        if modal.should_close() && cmds.len() == asked {
            cmds.push(Command::ConfirmUnweighted(false));
        }
    }

    /// The question asked when a skeleton opened alone does not fit the skin of a document with unsaved changes.
    pub(super) fn misfit_modal(&mut self, ctx: &egui::Context) {
        let Some(done) = &self.confirm_loaded else { return };
        let opening = done.paths.iter().map(|p| file_name(p)).collect::<Vec<_>>().join(", ");
        let joints = match &done.result {
            Ok(l) => l.skeleton.as_ref().map_or(0, |s| s.0.len()),
            Err(_) => 0,
        };
        let question = UnsavedQuestion::before_opening(
            "confirm-misfit",
            format!(
                "{opening} has {joints} joints and does not fit the skin of {}, which has {} and changes that are \
                 not saved; opening it replaces the whole document.",
                self.doc.name,
                self.doc.skeleton.len()
            ),
        );
        let Some(answer) = question.ask(ctx) else { return };
        let open = self.go_on_after(answer);
        if let Some(done) = self.confirm_loaded.take() {
            if let (true, Ok(loaded)) = (open, done.result) {
                self.apply_loaded_now(done.paths, loaded);
            }
        }
    }

    /// The question [`Self::open_or_ask`] asks.
    pub(super) fn open_modal(&mut self, ctx: &egui::Context) {
        let Some(paths) = self.confirm_open.clone() else { return };
        let opening = paths.iter().map(|p| file_name(p)).collect::<Vec<_>>().join(", ");
        let question = UnsavedQuestion::before_opening(
            "confirm-open",
            format!(
                "{} has changes that are not saved; opening {opening} replaces it.",
                self.doc.name
            ),
        );
        let Some(answer) = question.ask(ctx) else { return };
        let open = self.go_on_after(answer);
        self.confirm_open = None;
        if open {
            self.loader.request(paths);
            ctx.request_repaint();
        }
    }

    /// Whether to go on after the answer to an [`UnsavedQuestion`] (saving first when asked to, and not going on
    /// when that fails).
    fn go_on_after(&mut self, answer: UnsavedAnswer) -> bool {
        match answer {
            UnsavedAnswer::Cancel => false,
            UnsavedAnswer::Save => self.save(),
            UnsavedAnswer::Discard => true,
        }
    }

    pub(super) fn quit_modal(&mut self, ctx: &egui::Context) {
        if !self.confirm_quit {
            return;
        }
        let question = UnsavedQuestion {
            id: "confirm-quit",
            message: format!("{} has changes that are not saved.", self.doc.name),
            save: ("Save and quit", "Save, then close"),
            discard: ("Quit without saving", "Close and lose the changes"),
            cancel_tip: "Keep editing",
        };
        let Some(answer) = question.ask(ctx) else { return };
        let close = self.go_on_after(answer);
        self.confirm_quit = false;
        if close {
            self.drop_recovery();
            self.allow_close = true;
            ctx.send_viewport_cmd(ViewportCommand::Close);
        }
    }

    /// At start, when the last session left a recovery file: restore it, or discard it.
    pub(super) fn recovery_modal(&mut self, ctx: &egui::Context, cmds: &mut Vec<Command>) {
        if !self.offer_recovery {
            return;
        }
        let when = self
            .recovery
            .as_deref()
            .and_then(|p| std::fs::metadata(p).ok())
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .map_or_else(String::new, |d| {
                format!(" (autosaved {} minutes ago)", d.as_secs() / 60)
            });
        egui::Modal::new(egui::Id::unique("offer-recovery")).show(ctx, |ui| {
            ui.heading("Restore unsaved work?");
            ui.label(format!("The last session did not end cleanly{when}."));
            ui.horizontal(|ui| {
                if ui
                    .button("Restore")
                    .on_hover_text("Open the autosaved session")
                    .clicked()
                {
                    cmds.push(Command::Recover(true));
                }
                if ui
                    .button("Discard")
                    .on_hover_text("Delete the autosaved session")
                    .clicked()
                {
                    cmds.push(Command::Recover(false));
                }
            });
        });
    }

    pub(super) fn drop_overlay(&self, ctx: &egui::Context) {
        if ctx.input(|i| i.raw.hovered_files.is_empty()) {
            return;
        }
        let painter = ctx.layer_painter(egui::LayerId::new(egui::Order::Foreground, egui::Id::unique("drop")));
        let rect = ctx.content_rect();
        painter.rect_filled(rect, 0.0, egui::Color32::from_black_alpha(160));
        painter.text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            "Drop .skel, .skin, .anim or .glb files to open them",
            egui::FontId::proportional(22.0),
            egui::Color32::WHITE,
        );
    }
}
