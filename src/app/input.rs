//! The window's keyboard shortcuts and what arrives before the panels draw: a close request (asked about when
//! there are unsaved changes), dropped files, a value drag whose widget vanished.

use std::path::PathBuf;

use egui::{Key, KeyboardShortcut, Modifiers, ViewportCommand};

use super::{Command, SkinbindApp, Tool};

impl SkinbindApp {
    /// Once a frame, first: the close request, dropped files, a lost drag, then the shortcuts (Ctrl+Z, Ctrl+S,
    /// Ctrl+O, Ctrl+Q, Tab), which a focused text field keeps.
    pub(super) fn handle_input(&mut self, ctx: &egui::Context) {
        if ctx.input(|i| i.viewport().close_requested()) && self.is_dirty() && !self.allow_close {
            ctx.send_viewport_cmd(ViewportCommand::CancelClose);
            self.confirm_quit = true;
        }
        let dropped: Vec<PathBuf> = ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).collect());
        if !dropped.is_empty() {
            self.commands.push(Command::OpenPaths(dropped));
        }
        // A drag whose widget vanished (the selection changed under it) still ends as one edit.
        if let Some((f, before)) = self.drag {
            if !ctx.input(|i| i.pointer.any_down()) {
                self.commands.push(Command::Commit(f, before));
                self.drag = None;
            }
        }
        // Only a text field takes the shortcuts' keys: a button focused by egui's Tab navigation (Tab is also the
        // Skeleton mode's key) must not stop Ctrl+Z or the next Tab.
        let typing = ctx.text_edit_focused();
        let shortcut = |m: Modifiers, k: Key| ctx.input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(m, k)));
        let shift = Modifiers::COMMAND | Modifiers::SHIFT;
        if !typing {
            // Shift first: the plain shortcut would also match with shift held.
            if shortcut(shift, Key::Z) || shortcut(Modifiers::COMMAND, Key::Y) {
                self.commands.push(Command::Redo);
            } else if shortcut(Modifiers::COMMAND, Key::Z) {
                self.commands.push(Command::Undo);
            }
        }
        if shortcut(shift, Key::S) {
            self.commands.push(Command::SaveAs);
        } else if shortcut(Modifiers::COMMAND, Key::S) {
            self.commands.push(Command::Save);
        }
        if shortcut(Modifiers::COMMAND, Key::O) {
            self.commands.push(Command::Open);
        }
        if shortcut(Modifiers::COMMAND, Key::Q) {
            self.commands.push(Command::Quit);
        }
        // Tab enters and leaves the Skeleton mode (Blender's Edit Mode key), unless a text field has the keys.
        if !typing && shortcut(Modifiers::NONE, Key::Tab) {
            self.viewport.tool = if self.viewport.tool == Tool::Skeleton {
                Tool::Pose
            } else {
                Tool::Skeleton
            };
        }
    }
}
