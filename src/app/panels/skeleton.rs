//! The Skeleton panel (in place of Properties while the Skeleton mode is on): X-mirror and Symmetrize, the
//! selected joint's name, position (world, or offset from its parent), insert, delete, duplicate, joint type and
//! limits per axis, box, and the rig's warnings. Every change is a [`RigOp`], one undoable edit.

use glam::Vec3;

use super::*;
use crate::app::rig_state::RigOp;
use crate::rig::limits::{DofLimit, JointType, joint_limits};
use crate::rig::symmetry::Side;
use crate::rig::warnings::RigWarning;

/// What the panel keeps between frames.
#[derive(Default)]
pub(crate) struct SkeletonPanel {
    /// The name being typed, for which joint.
    name_edit: Option<(usize, String)>,
    /// Positions typed as offsets from the parent rather than in world space.
    pub offsets: bool,
    /// A typed move leaves the joint's children where they are.
    pub children_stay: bool,
    /// Which way Fit to mesh takes the mesh to face: the turn that takes its up to +Y and its front to +Z, or
    /// None to turn it by a guess when it has a template mesh to compare with ([`crate::rig::fit::FitOptions`]).
    pub mesh_turn: Option<glam::Mat3>,
}

/// The ways a mesh may face that Fit to mesh offers besides its guess: (up, front, label).
const FACINGS: [(Vec3, Vec3, &str); 5] = [
    (Vec3::Y, Vec3::Z, "Take the mesh as it lies"),
    (Vec3::Y, Vec3::NEG_Z, "The mesh faces -Z"),
    (Vec3::Y, Vec3::X, "The mesh faces +X"),
    (Vec3::Y, Vec3::NEG_X, "The mesh faces -X"),
    (Vec3::Z, Vec3::NEG_Y, "The mesh is Z up, facing -Y (Blender)"),
];

/// Which way the mesh faces, for Skeleton > Fit to mesh and File > New skeleton from template (one choice for
/// both): the guess, or one of [`FACINGS`].
pub(crate) fn facing_choices(ui: &mut egui::Ui, mesh_turn: &mut Option<glam::Mat3>) {
    ui.radio_value(mesh_turn, None, "Turn the mesh if it faces another way")
        .on_hover_text(
            "Fit to mesh turns a mesh that faces another way than the template (lying Z up, facing +X) to face its \
             way first, when its solid overlaps the template's clearly better so. Only a template with its own mesh \
             is compared: a rig file's, not a shipped template or the open skeleton. A template from the File menu \
             is placed facing +Z",
        );
    for (up, front, label) in FACINGS {
        ui.radio_value(mesh_turn, crate::rig::fit_orient::told_facing(up, front), label)
            .on_hover_text(
                "Fit or place the template with the mesh facing this way (up +Y unless said), whatever the \
                 template; the skeleton comes out in the mesh's own frame",
            );
    }
}

/// The panel. `x_mirror` is the Skeleton mode's toggle; `fitting` names what a running Fit to mesh fits.
pub(crate) fn skeleton_panel(
    ui: &mut egui::Ui,
    doc: &Document,
    state: &mut SkeletonPanel,
    x_mirror: &mut bool,
    warnings: &[RigWarning],
    fitting: Option<&str>,
    cmds: &mut Vec<Command>,
) {
    ui.heading("Skeleton");
    egui::ScrollArea::both().auto_shrink([false, false]).show(ui, |ui| {
        ui.checkbox(x_mirror, "X-mirror").on_hover_text(
            "Adds, moves, deletes and renames apply to the other side's joint too (.L/.R, _l/_r, Left/Right), made \
             where missing",
        );
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("Symmetrize left to right")
                .on_hover_text("Copy the left side (+X) onto the right")
                .clicked()
            {
                cmds.push(Command::Rig(RigOp::Symmetrize(Side::Left)));
            }
            if ui
                .button("Symmetrize right to left")
                .on_hover_text("Copy the right side (-X) onto the left")
                .clicked()
            {
                cmds.push(Command::Rig(RigOp::Symmetrize(Side::Right)));
            }
        });
        if let Some(what) = fitting {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("Fitting {what}..."));
            });
        }
        ui.add_enabled_ui(doc.skin.is_some() && fitting.is_none(), |ui| {
            // The facing choices stay open when clicked (a template or a rig file is chosen after them); the
            // buttons close the menu themselves.
            let stay =
                egui::containers::menu::MenuConfig::new().close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
            egui::containers::menu::MenuButton::new("Fit to mesh")
                .config(stay)
                .ui(ui, |ui| {
                    for kind in crate::rig::templates::TemplateKind::ALL {
                        if ui
                            .button(kind.name())
                            .on_hover_text("Replace the skeleton by this template, fitted into the mesh")
                            .clicked()
                        {
                            cmds.push(Command::Rig(RigOp::Fit(Some(kind))));
                            ui.close();
                        }
                    }
                    if ui
                        .button("a rig file...")
                        .on_hover_text(
                            "Fit another character's rig (.glb, .gltf, .fbx, or a .skel with its .skin) into the \
                                    mesh: its own mesh and weights guide the fit",
                        )
                        .clicked()
                    {
                        cmds.push(Command::Rig(RigOp::FitFile));
                        ui.close();
                    }
                    if ui
                        .button("the open skeleton")
                        .on_hover_text(
                            "Fit the skeleton as it stands into the mesh: a body of tubes around its bones \
                                    registered onto the mesh's surface, then every joint moved inside",
                        )
                        .clicked()
                    {
                        cmds.push(Command::Rig(RigOp::Fit(None)));
                        ui.close();
                    }
                    ui.separator();
                    facing_choices(ui, &mut state.mesh_turn);
                })
                .0
                .on_hover_text("Place a template's joints into the mesh, as one undoable edit")
                .on_disabled_hover_text(if fitting.is_some() {
                    "A fit is running"
                } else {
                    "Open a mesh to fit a skeleton into"
                });
        });
        ui.small(
            "Click the mesh to add a joint (a child of the selected one); drag a joint's dot to move it \
                  (Shift: into the middle of the solid, Ctrl: its children stay); drag a joint onto another in \
                  the tree to reparent it",
        );
        ui.separator();
        if let Some(j) = doc.selected.filter(|&j| j < doc.skeleton.len()) {
            joint_controls(ui, doc, j, state, cmds);
        } else {
            ui.label("Select a joint in the tree or the view");
        }
        ui.separator();
        if warnings.is_empty() {
            ui.label("No warnings");
        } else {
            ui.label(format!("{} warnings", warnings.len()));
            for w in warnings {
                if ui
                    .selectable_label(doc.selected == Some(w.joint), &w.text)
                    .on_hover_text("Select it")
                    .clicked()
                {
                    cmds.push(Command::Select(Some(w.joint)));
                }
            }
        }
    });
}

fn joint_controls(ui: &mut egui::Ui, doc: &Document, j: usize, state: &mut SkeletonPanel, cmds: &mut Vec<Command>) {
    let joint = &doc.skeleton.joints()[j];
    // Name: typed, applied on Enter or when the field loses focus.
    let mut text = match &state.name_edit {
        Some((k, t)) if *k == j => t.clone(),
        _ => joint.name.clone(),
    };
    ui.horizontal(|ui| {
        let label = ui.label("Name");
        let r = ui
            .add(egui::TextEdit::singleline(&mut text).desired_width(140.0))
            .on_hover_text("One word, no braces, unique: Enter renames")
            .labelled_by(label.id);
        if r.changed() {
            state.name_edit = Some((j, text.clone()));
        }
        if r.lost_focus() {
            if text != joint.name {
                cmds.push(Command::Rig(RigOp::Rename {
                    joint: j,
                    name: text.clone(),
                }));
            }
            state.name_edit = None;
        }
    });
    let parent = joint.parent.map_or("none (root)".to_owned(), |p| doc.joint_label(p));
    ui.label(format!("Parent: {parent}"));
    ui.horizontal_wrapped(|ui| {
        let child = joint.parent.is_some();
        if ui
            .add_enabled(child, egui::Button::new("Insert"))
            .on_hover_text("Insert a joint halfway along the bone above this one")
            .clicked()
        {
            cmds.push(Command::Rig(RigOp::Insert(j)));
        }
        if ui
            .button("Delete")
            .on_hover_text("Delete the joint: its children go to its parent where they stand, its weights too")
            .clicked()
        {
            cmds.push(Command::Rig(RigOp::Delete(j)));
        }
        if ui
            .add_enabled(child, egui::Button::new("Duplicate"))
            .on_hover_text("Copy this joint and everything below it, as a sibling in the same place")
            .clicked()
        {
            cmds.push(Command::Rig(RigOp::Duplicate(j)));
        }
    });
    position_controls(ui, doc, j, state, cmds);
    limit_controls(ui, doc, j, cmds);
    box_controls(ui, doc, j, cmds);
}

/// The joint's pivot: world position, or offset from the parent, typed or dragged (applied when the drag ends).
fn position_controls(ui: &mut egui::Ui, doc: &Document, j: usize, state: &mut SkeletonPanel, cmds: &mut Vec<Command>) {
    let world = doc.world_from_joint();
    let pivot = world[j].w_axis.truncate();
    let parent = doc.skeleton.joints()[j].parent.map(|p| world[p]);
    ui.horizontal(|ui| {
        ui.radio_value(&mut state.offsets, false, "World")
            .on_hover_text("Position in world space");
        ui.radio_value(&mut state.offsets, true, "Offset")
            .on_hover_text("Position in the parent's space (the .skel offset)");
    });
    let shown = match (state.offsets, parent) {
        (true, Some(p)) => p.inverse().transform_point3(pivot),
        _ => pivot,
    };
    let mut typed = None;
    for axis in 0..3 {
        let name = ["X", "Y", "Z"][axis];
        ui.horizontal(|ui| {
            let label = ui.label(format!("Position {name}"));
            if let Some(v) = committed_value(ui, ("joint-pos", j, axis, state.offsets), shown[axis], 0.005, label.id) {
                let mut p = shown;
                p[axis] = v;
                typed = Some(p);
            }
        });
    }
    ui.checkbox(&mut state.children_stay, "Children stay")
        .on_hover_text("A typed move leaves the joint's children where they are");
    if let Some(p) = typed {
        let to = match (state.offsets, parent) {
            (true, Some(m)) => m.transform_point3(p),
            _ => p,
        };
        cmds.push(Command::Rig(RigOp::Move {
            joint: j,
            to,
            children_stay: state.children_stay,
        }));
    }
}

/// A number field over a value the document owns, applied once: when a drag ends or a typed value is entered.
/// While dragging, the value in progress lives in egui's memory under `id`.
fn committed_value(
    ui: &mut egui::Ui,
    id: impl std::hash::Hash + std::fmt::Debug,
    value: f32,
    speed: f64,
    label: egui::Id,
) -> Option<f32> {
    let id = ui.make_persistent_id(id);
    let mut v = ui.data(|d| d.get_temp::<f32>(id)).unwrap_or(value);
    let r = ui
        .add(
            egui::DragValue::new(&mut v)
                .speed(speed)
                .max_decimals(4)
                .update_while_editing(false),
        )
        .on_hover_text("Drag, or click and type")
        .labelled_by(label);
    if r.dragged() {
        ui.data_mut(|d| d.insert_temp(id, v));
        return None;
    }
    ui.data_mut(|d| d.remove::<f32>(id));
    let done = r.drag_stopped() || (r.changed() && !r.dragged());
    (done && v.is_finite() && v != value).then_some(v)
}

/// The joint type preset, then each axis free, limited or locked, with its range (radians).
fn limit_controls(ui: &mut egui::Ui, doc: &Document, j: usize, cmds: &mut Vec<Command>) {
    ui.separator();
    let limits = joint_limits(&doc.skeleton, j);
    let current = JointType::of(limits);
    let mut chosen = current;
    egui::ComboBox::from_label("Joint type")
        .selected_text(
            JointType::ALL
                .iter()
                .find(|t| Some(t.0) == current)
                .map_or("Custom", |t| t.1),
        )
        .show_ui(ui, |ui| {
            for (t, name) in JointType::ALL {
                ui.selectable_value(&mut chosen, Some(t), name);
            }
        });
    if chosen != current {
        if let Some(t) = chosen {
            cmds.push(Command::Rig(RigOp::SetLimits {
                joint: j,
                limits: t.limits(limits),
            }));
        }
    }
    for axis in 0..3 {
        let name = ["X", "Y", "Z"][axis];
        let l = limits[axis];
        let mut next = l;
        ui.horizontal(|ui| {
            let kinds = ["Free", "Limited", "Locked"];
            let kind = match l {
                DofLimit::Free => 0,
                DofLimit::Limited { .. } => 1,
                DofLimit::Locked(_) => 2,
            };
            let mut k = kind;
            egui::ComboBox::from_label(format!("{name} rotation"))
                .width(96.0)
                .selected_text(format!("{name}: {}", kinds[k]))
                .show_ui(ui, |ui| {
                    for (i, text) in kinds.iter().enumerate() {
                        ui.selectable_value(&mut k, i, format!("{name}: {text}"));
                    }
                });
            if k != kind {
                next = match k {
                    0 => DofLimit::Free,
                    1 => DofLimit::Limited { lo: -1.0, hi: 1.0 },
                    _ => DofLimit::Locked(0.0),
                };
            }
        });
        // The range on a line of its own, so the panel's width holds it.
        ui.horizontal(|ui| {
            ui.add_space(12.0);
            match l {
                DofLimit::Limited { lo, hi } => {
                    let label = ui.label("min");
                    if let Some(v) = committed_value(ui, ("limit-lo", j, axis), lo, 0.01, label.id) {
                        next = DofLimit::Limited { lo: v.min(hi), hi };
                    }
                    let label = ui.label("max");
                    if let Some(v) = committed_value(ui, ("limit-hi", j, axis), hi, 0.01, label.id) {
                        next = DofLimit::Limited { lo, hi: v.max(lo) };
                    }
                }
                DofLimit::Locked(v) => {
                    let label = ui.label("at");
                    if let Some(v) = committed_value(ui, ("limit-at", j, axis), v, 0.01, label.id) {
                        next = DofLimit::Locked(v);
                    }
                }
                DofLimit::Free => {}
            }
        });
        if next != l {
            let mut all = limits;
            all[axis] = next;
            cmds.push(Command::Rig(RigOp::SetLimits { joint: j, limits: all }));
        }
    }
}

/// The joint's box corners in its own space (the course default is 0.1 each way).
fn box_controls(ui: &mut egui::Ui, doc: &Document, j: usize, cmds: &mut Vec<Command>) {
    ui.separator();
    let (lo, hi) = doc.skeleton.joints()[j].bounds();
    let mut next = (lo, hi);
    for (corner, v) in [("Box min", lo), ("Box max", hi)] {
        let label = ui.label(corner);
        ui.horizontal(|ui| {
            for axis in 0..3 {
                if let Some(x) = committed_value(ui, (corner, j, axis), v[axis], 0.005, label.id) {
                    let mut p: Vec3 = v;
                    p[axis] = x;
                    if corner == "Box min" {
                        next.0 = p;
                    } else {
                        next.1 = p;
                    }
                }
            }
        });
    }
    if next != (lo, hi) {
        cmds.push(Command::Rig(RigOp::SetBox {
            joint: j,
            min: Some(next.0),
            max: Some(next.1),
        }));
    }
}
