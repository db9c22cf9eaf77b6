//! The menu bar: File, Edit, View and Help, each item a queued command.

use egui::Button;

use super::*;

/// `mesh_turn`: which way the mesh faces, shared with Skeleton > Fit to mesh ([`super::SkeletonPanel::mesh_turn`]).
pub(crate) fn menu_bar(
    ui: &mut egui::Ui,
    view: &View<'_>,
    viewport: &mut Viewport,
    mesh_turn: &mut Option<glam::Mat3>,
    cmds: &mut Vec<Command>,
) {
    egui::MenuBar::new().ui(ui, |ui| {
        // The facing choices under New skeleton from template keep the menu open (a template is chosen after
        // them); every item closes it itself.
        let stay = egui::containers::menu::MenuConfig::new().close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
        egui::containers::menu::MenuButton::new("File").config(stay).ui(ui, |ui| {
            let open = ui
                .add(Button::new("Open...").shortcut_text("Ctrl+O"))
                .on_hover_text("Open .skel, .skin, .obj, .anim, .glb, .gltf, .fbx or .skinbind files (several at once: one of each kind)");
            if open.clicked() {
                cmds.push(Command::Open);
                ui.close();
            }
            let save = ui
                .add(Button::new("Save").shortcut_text("Ctrl+S"))
                .on_hover_text("Write the skeleton (with the current pose) and the skin to their files");
            if save.clicked() {
                cmds.push(Command::Save);
                ui.close();
            }
            let save_as = ui
                .add(Button::new("Save As...").shortcut_text("Ctrl+Shift+S"))
                .on_hover_text("Write NAME.skel and NAME.skin under a new name");
            if save_as.clicked() {
                cmds.push(Command::SaveAs);
                ui.close();
            }
            let save_session = ui.add(Button::new("Save Session As...")).on_hover_text(
                "Write everything (skeleton, skin, animation, pose, view) to one .skinbind file; open it again with Open",
            );
            if save_session.clicked() {
                cmds.push(Command::SaveSession);
                ui.close();
            }
            let export = ui
                .add_enabled(view.doc.skin.is_some(), Button::new("Export .glb..."))
                .on_hover_text(
                    "Write the rig as binary glTF: skeleton, skin with its weights, and the current animation",
                )
                .on_disabled_hover_text("Open or bind a skin to export a rig");
            if export.clicked() {
                cmds.push(Command::ExportGlb);
                ui.close();
            }
            ui.menu_button("New skeleton from template", |ui| {
                if ui
                    .button("one root joint")
                    .on_hover_text("Replace the skeleton by one joint in the middle of the mesh: click into the mesh \
                                    to add its children")
                    .clicked()
                {
                    cmds.push(Command::Rig(crate::app::rig_state::RigOp::NewRoot));
                    viewport.tool = Tool::Skeleton;
                    ui.close();
                }
                for kind in crate::rig::templates::TemplateKind::ALL {
                    if ui
                        .button(kind.name())
                        .on_hover_text(
                            "Replace the skeleton by this template, scaled into the mesh's bounding box, facing the \
                             way chosen below (+Z unless told; the same choice as Skeleton > Fit to mesh's)",
                        )
                        .clicked()
                    {
                        cmds.push(Command::Rig(crate::app::rig_state::RigOp::Template(kind)));
                        viewport.tool = Tool::Skeleton;
                        ui.close();
                    }
                }
                ui.separator();
                super::skeleton::facing_choices(ui, mesh_turn);
            });
            ui.menu_button("Recent files", |ui| {
                if view.settings.recent.is_empty() {
                    ui.label("No recent files");
                }
                for p in &view.settings.recent {
                    if ui
                        .button(p.display().to_string())
                        .on_hover_text("Open this file again")
                        .clicked()
                    {
                        cmds.push(Command::OpenPaths(vec![p.clone()]));
                        ui.close();
                    }
                }
                if !view.settings.recent.is_empty() {
                    ui.separator();
                    if ui
                        .button("Clear recent files")
                        .on_hover_text("Forget the list")
                        .clicked()
                    {
                        cmds.push(Command::ClearRecent);
                        ui.close();
                    }
                }
            });
            ui.separator();
            let quit = ui
                .add(Button::new("Quit").shortcut_text("Ctrl+Q"))
                .on_hover_text("Close the editor (asks first when there are unsaved changes)");
            if quit.clicked() {
                cmds.push(Command::Quit);
                ui.close();
            }
        });
        ui.menu_button("Edit", |ui| {
            let undo_tip = match &view.undo_text {
                Some(t) => format!("Undo: {t}"),
                None => "Nothing to undo".to_owned(),
            };
            let undo = ui
                .add_enabled(view.undo_text.is_some(), Button::new("Undo").shortcut_text("Ctrl+Z"))
                .on_hover_text(&undo_tip)
                .on_disabled_hover_text(&undo_tip);
            if undo.clicked() {
                cmds.push(Command::Undo);
                ui.close();
            }
            let redo_tip = match &view.redo_text {
                Some(t) => format!("Redo: {t}"),
                None => "Nothing to redo".to_owned(),
            };
            let redo = ui
                .add_enabled(
                    view.redo_text.is_some(),
                    Button::new("Redo").shortcut_text("Ctrl+Shift+Z / Ctrl+Y"),
                )
                .on_hover_text(&redo_tip)
                .on_disabled_hover_text(&redo_tip);
            if redo.clicked() {
                cmds.push(Command::Redo);
                ui.close();
            }
            ui.separator();
            let set_pose = ui.button("Set File Pose from Current Pose").on_hover_text(
                "Make the current pose the skeleton's own (its pose lines, and the root's offset), as Save then \
                 writes it; Save alone never changes the skeleton's pose",
            );
            if set_pose.clicked() {
                cmds.push(Command::SetFilePose);
                ui.close();
            }
            for (kind, label, tip) in [
                (
                    PoseKind::Rest,
                    "Go to Rest Pose",
                    "Every rotation zero (within the joints' limits), the root at its offset: the pose CSE169 \
                     meshes are modelled in, and the one to bind a new mesh in when it was (one edit)",
                ),
                (
                    PoseKind::File,
                    "Go to File Pose",
                    "The skeleton file's pose lines: a glTF skeleton's rest (one edit)",
                ),
            ] {
                if ui.button(label).on_hover_text(tip).clicked() {
                    cmds.push(Command::GoToPose(kind));
                    ui.close();
                }
            }
        });
        ui.menu_button("View", |ui| {
            let s = view.settings;
            for (toggle, on, label, tip) in [
                (
                    ViewToggle::Outliner,
                    s.show_outliner,
                    "Joint tree",
                    "Show the joint hierarchy on the left",
                ),
                (
                    ViewToggle::Properties,
                    s.show_properties,
                    "Properties",
                    "Show the selected joint's properties",
                ),
                (
                    ViewToggle::Timeline,
                    s.show_timeline,
                    "Timeline",
                    "Show the animation timeline",
                ),
                (ViewToggle::Status, s.show_status, "Status bar", "Show the status bar"),
                (
                    ViewToggle::History,
                    s.show_history,
                    "History",
                    "Show the list of edits; click one to go back or forward to it",
                ),
                (
                    ViewToggle::Weights,
                    s.show_weights,
                    "Weights panel",
                    "Show the binding and clean-up tools",
                ),
                (
                    ViewToggle::Check,
                    s.show_check,
                    "Check panel",
                    "Show the range-of-motion check: where the skin deforms badly as joints move, and fixes",
                ),
            ] {
                let mut on = on;
                if ui.checkbox(&mut on, label).on_hover_text(tip).changed() {
                    cmds.push(Command::Toggle(toggle));
                }
            }
            ui.separator();
            viewport.settings_ui(ui);
        });
    });
}
