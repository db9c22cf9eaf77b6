//! The panels around the viewport: menu bar, joint tree, joint properties, timeline and status bar.
//!
//! Panels only read: each takes the document and the app's view state and pushes [`Command`]s, which the app
//! applies in one place after the frame is drawn (`SkinbindApp::apply`). Every control has an accessibility
//! label (its text, or `Slider::text`), which is also how the GUI tests find it, and a tooltip.

use std::path::PathBuf;

use egui::{Button, Color32, RichText, Slider, SliderClamping};

use super::document::Document;
use super::playback::Playback;
use super::settings::Settings;
use super::tools::{ToolSettings, WeightOp};
use super::viewport::{Tool, Viewport};
use super::{Command, Field, Status, ViewToggle};
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
}

/// The side panels, in the order they give way when the window is narrow (the last first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Properties,
    Outliner,
    Weights,
    History,
}

impl Side {
    pub const ALL: [Side; 4] = [Side::Properties, Side::Outliner, Side::Weights, Side::History];

    /// Width when there is room.
    pub fn default_width(self) -> f32 {
        match self {
            Side::Properties => 240.0,
            Side::Outliner => 180.0,
            Side::Weights => 260.0,
            Side::History => 180.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Side::Properties => "Properties",
            Side::Outliner => "Joint tree",
            Side::Weights => "Weights panel",
            Side::History => "History",
        }
    }
}

/// The narrowest a side panel is drawn; below this it is hidden instead.
pub(crate) const MIN_PANEL_WIDTH: f32 = 150.0;

/// How wide each shown side panel may be in a window `width` wide, so that the 3D view keeps at least half:
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

/// What the Weights panel shows of the weight operations: the one running, and the joints the last bind warned
/// look like controls.
pub(crate) struct WeightJobs<'a> {
    pub busy: Option<WeightOp>,
    pub likely_controls: &'a [usize],
}

/// Sliders a side panel draws take at most 40% of its width (60 to 100 points), leaving room for their value
/// and label when the panel is narrow.
fn fit_sliders(ui: &mut egui::Ui) {
    ui.spacing_mut().slider_width = (ui.available_width() * 0.4).clamp(60.0, 100.0);
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

pub(crate) fn menu_bar(ui: &mut egui::Ui, view: &View<'_>, viewport: &mut Viewport, cmds: &mut Vec<Command>) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            let open = ui
                .add(Button::new("Open...").shortcut_text("Ctrl+O"))
                .on_hover_text("Open .skel, .skin, .obj, .anim, .glb, .gltf or .skinbind files (several at once: one of each kind)");
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

/// The joint tree: one row per joint in depth-first order, indented by depth, with a toggle on joints that have
/// children; a click on a name selects. Drawn as a flat list, not by recursion, so any depth the reader accepts
/// costs no call stack; the indent stops growing past [`TREE_INDENT_LEVELS`].
pub(crate) fn outliner(ui: &mut egui::Ui, doc: &Document, cmds: &mut Vec<Command>) {
    ui.heading("Joints");
    let depths = doc.skeleton.depths();
    egui::ScrollArea::both().auto_shrink([false, false]).show(ui, |ui| {
        // The depth of a collapsed joint whose subtree is being skipped.
        let mut collapsed_at: Option<usize> = None;
        for (joint, &depth) in depths.iter().enumerate() {
            if let Some(c) = collapsed_at {
                if depth > c {
                    continue;
                }
                collapsed_at = None;
            }
            if !joint_row(ui, doc, joint, depth, cmds) {
                collapsed_at = Some(depth);
            }
        }
    });
}

/// How many levels the joint tree indents before it stops (deeper joints line up at this indent).
const TREE_INDENT_LEVELS: usize = 24;

/// One row of the joint tree; returns whether the joint's children are shown.
fn joint_row(ui: &mut egui::Ui, doc: &Document, joint: usize, depth: usize, cmds: &mut Vec<Command>) -> bool {
    let label = doc.joint_label(joint);
    let selected = doc.selected == Some(joint);
    let has_children = !doc.skeleton.children(joint).is_empty();
    let tip = format!("Joint {joint}: click to select it");
    let id = ui.make_persistent_id(("joint-tree", joint));
    let mut state = egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, true);
    let levels = depth.min(TREE_INDENT_LEVELS);
    let indent = ui.spacing().indent;
    let row = ui.horizontal(|ui| {
        ui.add_space(indent * levels as f32);
        if has_children {
            state.show_toggle_button(ui, egui::collapsing_header::paint_default_icon);
        }
        if ui.selectable_label(selected, &label).on_hover_text(tip).clicked() {
            cmds.push(Command::Select(Some(joint)));
        }
    });
    // The faint line egui draws left of an indented section, one per enclosing level, row by row.
    let rect = row.response.rect;
    let stroke = ui.visuals().widgets.noninteractive.bg_stroke;
    for k in 1..=levels {
        let x = rect.left() + indent * k as f32 - 0.5 * indent;
        ui.painter()
            .vline(x, rect.y_range().expand(ui.spacing().item_spacing.y * 0.5), stroke);
    }
    let open = state.is_open();
    state.store(ui.ctx());
    open || !has_children
}

/// Remember where a drag began, write live while it lasts, and commit one edit when the pointer lets go.
/// A change without the pointer (keyboard, typed number, screen reader) is an edit of its own.
fn field_response(
    field: Field,
    before: f32,
    value: f32,
    response: &egui::Response,
    drag: &mut Option<(Field, f32)>,
    cmds: &mut Vec<Command>,
) {
    let pointer = response.is_pointer_button_down_on() || response.dragged();
    if response.changed() {
        if pointer {
            if drag.map(|(f, _)| f) != Some(field) {
                if let Some((f, b)) = drag.take() {
                    cmds.push(Command::Commit(f, b));
                }
                *drag = Some((field, before));
            }
            cmds.push(Command::Live(field, value));
        } else {
            cmds.push(Command::SetField(field, before, value));
        }
    }
    if !pointer {
        if let Some((f, b)) = *drag {
            if f == field {
                cmds.push(Command::Commit(f, b));
                *drag = None;
            }
        }
    }
}

/// The selected joint: name, parent, offset, one slider per rotation within its limits, limits and box; the
/// root also gets its translation.
pub(crate) fn properties(ui: &mut egui::Ui, doc: &Document, drag: &mut Option<(Field, f32)>, cmds: &mut Vec<Command>) {
    ui.heading("Properties");
    let Some((i, joint)) = doc.selected.and_then(|i| doc.skeleton.joint(i).map(|j| (i, j))) else {
        ui.label("Select a joint in the tree or the viewport");
        return;
    };
    // Narrow (the panel shares half the window): sliders shrink, and what is still wider scrolls.
    fit_sliders(ui);
    egui::ScrollArea::both().auto_shrink([false, false]).show(ui, |ui| {
        ui.label(RichText::new(doc.joint_label(i)).strong())
            .on_hover_text(format!("Joint {i} in depth-first order"));
        let parent = joint.parent.map_or("none (root)".to_owned(), |p| doc.joint_label(p));
        ui.label(format!("Parent: {parent}"));
        let o = joint.offset;
        ui.label(format!("Offset: {:.4} {:.4} {:.4}", o.x, o.y, o.z))
            .on_hover_text("Pivot position in the parent's space");
        ui.separator();
        ui.label("Rotation (radians), applied x, then y, then z");
        let rot = doc.pose.dofs.get(i).copied().unwrap_or_default();
        for axis in 0..3 {
            let limit = joint.limits[axis];
            let (lo, hi) = slider_range(joint, axis);
            let before = rot[axis];
            let mut v = before;
            let name = AXIS_NAMES[axis];
            let tip = match limit {
                Some(l) => format!("Rotation about {name} in radians, limited to [{}, {}]", l.lo, l.hi),
                None => format!(
                    "Rotation about {name} in radians, unlimited (the slider spans half a turn either side of the \
                     file pose, {:.4})",
                    (lo + hi) * 0.5
                ),
            };
            let r = ui
                .add_enabled(
                    lo < hi || limit.is_none(),
                    Slider::new(&mut v, lo..=hi)
                        .text(format!("Rotation {name}"))
                        .clamping(SliderClamping::Never)
                        .update_while_editing(false)
                        .max_decimals(4),
                )
                .on_hover_text(&tip)
                .on_disabled_hover_text(format!("Rotation about {name} is fixed at {hi} by its limits"));
            field_response(Field::Dof { joint: i, axis }, before, v, &r, drag, cmds);
            let limit_text = match limit {
                Some(l) => format!("{name} limits: {} to {}", l.lo, l.hi),
                None => format!("{name}: no limits"),
            };
            ui.small(limit_text);
        }
        if i == 0 {
            ui.separator();
            ui.label("Root translation (replaces the root's offset in the pose)");
            let t = doc.pose.root_translation;
            for axis in 0..3 {
                let before = t[axis];
                let mut v = before;
                let name = AXIS_NAMES[axis];
                ui.horizontal(|ui| {
                    let label = ui.label(format!("Root translation {name}"));
                    let r = ui
                        .add(
                            egui::DragValue::new(&mut v)
                                .speed(0.01)
                                .max_decimals(4)
                                .update_while_editing(false),
                        )
                        .on_hover_text(format!("Root translation along {name}: drag, or click and type"))
                        .labelled_by(label.id);
                    field_response(Field::Root(axis), before, v, &r, drag, cmds);
                });
            }
        }
        ui.separator();
        let (bmin, bmax) = joint.bounds();
        ui.label(format!("Box min: {:.3} {:.3} {:.3}", bmin.x, bmin.y, bmin.z))
            .on_hover_text("The joint's box in its own space (the course default is 0.1 each way)");
        ui.label(format!("Box max: {:.3} {:.3} {:.3}", bmax.x, bmax.y, bmax.z));
        ui.separator();
        let mut locked = doc.is_locked(i);
        if ui
            .checkbox(&mut locked, "Lock weights")
            .on_hover_text("Painting, clean-up and normalisation leave this joint's weights as they are")
            .changed()
        {
            cmds.push(Command::SetLock(i, locked));
        }
        let mut deforms = doc.deform.get(i).copied().unwrap_or(true);
        if ui
            .checkbox(&mut deforms, "Deforms")
            .on_hover_text(
                "Binding gives this joint weight. Untick it for a control (an IK or pole target, a master root):                  it gets none and still moves its children",
            )
            .changed()
        {
            cmds.push(Command::SetDeform(i, deforms));
        }
        volume_controls(ui, doc, i, drag, cmds);
    });
}

/// The Weights panel: automatic binding and the clean-up operations, each one undoable edit. `busy` is the
/// operation running, if any (the buttons wait for it).
pub(crate) fn weights(
    ui: &mut egui::Ui,
    doc: &Document,
    tools: &mut ToolSettings,
    tool: &mut Tool,
    brush: &mut BrushSettings,
    jobs: WeightJobs<'_>,
    cmds: &mut Vec<Command>,
) {
    let WeightJobs { busy, likely_controls } = jobs;
    ui.heading("Weights");
    // The panel may be narrow (it shares half the window with the others): tabs wrap, sliders shrink, and what
    // is still wider scrolls.
    fit_sliders(ui);
    ui.horizontal_wrapped(|ui| {
        for (t, label, tip) in [
            (Tool::Pose, "Pose", "Click a bone to select its joint"),
            (
                Tool::Select,
                "Select",
                "Click a vertex or drag a box to select vertices (Shift adds, Ctrl removes)",
            ),
            (Tool::Paint, "Paint", "Paint the selected joint's weights"),
            (
                Tool::Move,
                "Move",
                "Drag a vertex to where it should be in this pose: its weights are solved to put it there",
            ),
        ] {
            ui.selectable_value(tool, t, label).on_hover_text(tip);
        }
    });
    let n = doc.selected_vertices.len();
    if n > 0 {
        ui.horizontal(|ui| {
            ui.label(format!("{n} vertices selected"));
            if ui.button("Clear").on_hover_text("Select no vertices").clicked() {
                cmds.push(Command::SelectVertices(Vec::new()));
            }
        });
    }
    let has_skin = doc.skin.is_some();
    let has_weights = doc.skin.as_ref().is_some_and(|k| k.weights().is_some());
    let locked = doc.locks.iter().filter(|l| **l).count();
    egui::ScrollArea::both().auto_shrink([false, false]).show(ui, |ui| {
        if let Some(op) = busy {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("Running {}...", op_label(op)));
            });
        }
        if locked > 0 {
            ui.small(format!("{locked} joints locked: their weights stay as they are"));
        }
        if *tool == Tool::Paint {
            paint_controls(ui, doc, brush, cmds);
        }
        let idle = busy.is_none();
        ui.add_enabled(
            !doc.selected_vertices.is_empty(),
            egui::Checkbox::new(&mut tools.only_selected, "Selected vertices only"),
        )
        .on_hover_text("Bind and clean up change only the selected vertices (the rest of the mesh still counts)")
        .on_disabled_hover_text("Select vertices first (Select tool)");
        egui::CollapsingHeader::new("Bind").default_open(true).show(ui, |ui| {
            egui::ComboBox::from_label("Method")
                .selected_text(tools.method.name())
                .show_ui(ui, |ui| {
                    for m in [
                        BindMethod::Line,
                        BindMethod::Volume,
                        BindMethod::Hybrid,
                        BindMethod::Geodesic,
                    ] {
                        ui.selectable_value(&mut tools.method, m, m.name());
                    }
                })
                .response
                .on_hover_text(
                    "geodesic: distance to the bones through the mesh's solid (the default); line: straight \
                     distance to the bones; volume: containment volumes around the bones (set per joint in \
                     Properties); hybrid: volumes where they hold a vertex, lines elsewhere",
                );
            ui.add(Slider::new(&mut tools.max_influences, 1..=8).text("Max influences"))
                .on_hover_text("At most this many joints per vertex");
            ui.checkbox(&mut tools.rigid, "Rigid")
                .on_hover_text("One joint per vertex");
            ui.checkbox(&mut tools.clean_after_bind, "Clean up after binding")
                .on_hover_text("Remove rogue weights after binding, as skinbind bind does by default");
            let r = ui
                .add_enabled(idle && has_skin, Button::new("Bind Skin"))
                .on_hover_text("Compute weights for every vertex (locked joints keep theirs)")
                .on_disabled_hover_text("Open a skin first, or wait for the running operation");
            if r.clicked() {
                cmds.push(Command::RunWeights(WeightOp::Bind));
            }
            if !likely_controls.is_empty() {
                let names: Vec<String> = likely_controls.iter().map(|&j| doc.joint_label(j)).collect();
                let r = ui
                    .add_enabled(idle, Button::new(format!("Exclude {} controls", likely_controls.len())))
                    .on_hover_text(format!(
                        "The bind warned that these look like controls (IK and pole targets, a master root \
                         outside the mesh): {}. Untick Deforms on them (undoable), then bind again",
                        names.join(", ")
                    ));
                if r.clicked() {
                    cmds.push(Command::ExcludeControls(likely_controls.to_vec()));
                }
            }
        });
        egui::CollapsingHeader::new("Clean up")
            .default_open(true)
            .show(ui, |ui| {
                let ok = idle && has_weights;
                let mut button = |ui: &mut egui::Ui, op: WeightOp, text: &str, tip: &str| {
                    let r = ui
                        .add_enabled(ok, Button::new(text))
                        .on_hover_text(tip)
                        .on_disabled_hover_text("Bind the skin first, or wait for the running operation");
                    if r.clicked() {
                        cmds.push(Command::RunWeights(op));
                    }
                };
                ui.add(Slider::new(&mut tools.smooth.iterations, 1..=50).text("Smooth iterations"))
                    .on_hover_text("Laplacian smoothing passes over the mesh");
                ui.add(Slider::new(&mut tools.smooth.strength, 0.0..=1.0).text("Smooth strength"))
                    .on_hover_text("How far each pass moves a vertex's weights toward its neighbours'");
                button(
                    ui,
                    WeightOp::Smooth,
                    "Smooth",
                    "Smooth every unlocked joint's weights over the mesh",
                );
                ui.separator();
                ui.add(Slider::new(&mut tools.rogue, 0.01..=0.5).text("Rogue threshold"))
                    .on_hover_text("A joint's islands of weight above this, away from its bone, are removed");
                button(
                    ui,
                    WeightOp::Rogue,
                    "Remove Rogue",
                    "Remove islands of weight cut off from their joint's main region",
                );
                ui.separator();
                ui.add(
                    Slider::new(&mut tools.prune, 0.001..=0.2)
                        .text("Prune below")
                        .logarithmic(true),
                )
                .on_hover_text("Weights below this are removed and the rest renormalised");
                button(ui, WeightOp::Prune, "Prune", "Remove small weights");
                ui.add(Slider::new(&mut tools.limit, 1..=8).text("Limit to"))
                    .on_hover_text("Keep at most this many joints per vertex (the largest)");
                button(ui, WeightOp::Limit, "Limit", "Keep the largest influences only");
                button(
                    ui,
                    WeightOp::Normalise,
                    "Normalise",
                    "Make every vertex's weights sum to 1 (around the locks)",
                );
                ui.separator();
                ui.horizontal(|ui| {
                    egui::ComboBox::from_label("Mirror axis")
                        .selected_text(AXIS_NAMES[tools.mirror_axis.index()])
                        .show_ui(ui, |ui| {
                            for (a, name) in [Axis::X, Axis::Y, Axis::Z].into_iter().zip(AXIS_NAMES) {
                                ui.selectable_value(&mut tools.mirror_axis, a, name);
                            }
                        });
                });
                ui.checkbox(&mut tools.mirror_from_positive, "From + to -")
                    .on_hover_text("Copy the positive side onto the negative one (off: the other way)");
                button(
                    ui,
                    WeightOp::Mirror,
                    "Mirror",
                    "Copy one side's weights onto the other, left and right joints swapped",
                );
            });
        if !doc.selected_vertices.is_empty() {
            weight_table(ui, doc, tools, cmds);
        }
    });
}

/// The brush: mode, radius, strength, value, falloff, front faces, Flood.
fn paint_controls(ui: &mut egui::Ui, doc: &Document, brush: &mut BrushSettings, cmds: &mut Vec<Command>) {
    egui::CollapsingHeader::new("Brush").default_open(true).show(ui, |ui| {
        match doc.selected {
            Some(j) => ui.label(format!("Painting {}", doc.joint_label(j))),
            None => ui.label("Select a joint to paint (joint tree)"),
        };
        ui.horizontal_wrapped(|ui| {
            for (m, tip) in [
                (BrushMode::Add, "Raise the joint's weight (Ctrl: subtract)"),
                (BrushMode::Subtract, "Lower the joint's weight (Ctrl: add)"),
                (BrushMode::Replace, "Draw the weight toward the value"),
                (BrushMode::Smooth, "Blur the joint's weight over the mesh"),
            ] {
                ui.selectable_value(&mut brush.mode, m, m.name()).on_hover_text(tip);
            }
        });
        let (range, unit) = if brush.world_radius {
            (0.001..=10.0, "Radius (world)")
        } else {
            (1.0..=400.0, "Radius (px)")
        };
        ui.add(Slider::new(&mut brush.radius, range).text(unit).logarithmic(true))
            .on_hover_text("Brush radius (F, then move the mouse)");
        ui.checkbox(&mut brush.world_radius, "Radius in world units")
            .on_hover_text("Off: the radius is in screen points, so the brush keeps its size on screen when zooming");
        ui.add(Slider::new(&mut brush.strength, 0.0..=1.0).text("Strength"))
            .on_hover_text("How far one dab moves the weight (Shift+F, then move the mouse)");
        ui.add(Slider::new(&mut brush.value, 0.0..=1.0).text("Value"))
            .on_hover_text("The weight Replace draws toward and Flood sets (S over the skin samples it)");
        egui::ComboBox::from_label("Falloff")
            .selected_text(brush.falloff.name())
            .show_ui(ui, |ui| {
                for f in [Falloff::Smooth, Falloff::Linear, Falloff::Constant] {
                    ui.selectable_value(&mut brush.falloff, f, f.name());
                }
            })
            .response
            .on_hover_text("How the brush's effect fades from its centre to its edge");
        ui.checkbox(&mut brush.front_only, "Front faces only")
            .on_hover_text("Paint only vertices that face the view (off: through the mesh)");
        ui.checkbox(&mut brush.mirror, "X mirror")
            .on_hover_text("Also paint the mirrored joint (left/right) on the vertices mirrored across x = 0");
        let what = if doc.selected_vertices.is_empty() {
            "every vertex"
        } else {
            "the selected vertices"
        };
        if ui
            .add_enabled(doc.selected.is_some(), Button::new("Flood"))
            .on_hover_text(format!("Set the joint to the value on {what}"))
            .clicked()
        {
            cmds.push(Command::Flood);
        }
    });
}

/// Rows of the weight table shown at most (the "All" row still edits every selected vertex).
const TABLE_ROWS: usize = 24;
/// Joint columns shown at most: the joints with the most weight over the selection.
const TABLE_COLUMNS: usize = 8;

/// The selected vertices' weights: one column per influencing joint (with its lock), an "All" row whose cells
/// set that joint on every selected vertex, then one row per vertex. Each cell is a number to drag or type; a
/// change is one edit (on release for a drag), the other unlocked joints of the vertex giving way.
fn weight_table(ui: &mut egui::Ui, doc: &Document, tools: &mut ToolSettings, cmds: &mut Vec<Command>) {
    let Some(w) = doc.skin.as_ref().and_then(|k| k.weights()) else {
        ui.label("The skin has no weights yet: bind it first");
        return;
    };
    let sel = &doc.selected_vertices;
    let mut totals: Vec<(u16, f32)> = Vec::new();
    for &v in sel {
        let (js, ws) = w.row(v as usize);
        for (&j, &x) in js.iter().zip(ws) {
            match totals.iter_mut().find(|t| t.0 == j) {
                Some(t) => t.1 += x,
                None => totals.push((j, x)),
            }
        }
    }
    totals.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let hidden = totals.len().saturating_sub(TABLE_COLUMNS);
    let mut columns: Vec<u16> = totals.iter().take(TABLE_COLUMNS).map(|t| t.0).collect();
    columns.sort_unstable();
    // The painted (selected) joint always has a column, so it can be added to vertices that lack it.
    if let Some(j) = doc.selected.map(|j| j as u16) {
        if !columns.contains(&j) {
            columns.push(j);
        }
    }
    let weight_of = |v: u32, j: u16| {
        let (js, ws) = w.row(v as usize);
        js.iter().position(|&x| x == j).map_or(0.0, |k| ws[k])
    };
    egui::CollapsingHeader::new("Selected vertices")
        .default_open(true)
        .show(ui, |ui| {
            if hidden > 0 {
                ui.small(format!("{hidden} more joints with less weight are not shown"));
            }
            egui::ScrollArea::horizontal().show(ui, |ui| {
                egui::Grid::new("weight-table").striped(true).show(ui, |ui| {
                    ui.label("Vertex");
                    for &j in &columns {
                        let name = doc.joint_label(j as usize);
                        let mut locked = doc.is_locked(j as usize);
                        ui.vertical(|ui| {
                            ui.label(&name);
                            if ui
                                .checkbox(&mut locked, "lock")
                                .on_hover_text(format!("Lock {name}'s weights"))
                                .changed()
                            {
                                cmds.push(Command::SetLock(j as usize, locked));
                            }
                        });
                    }
                    ui.end_row();
                    let mut cell = |ui: &mut egui::Ui, vertex: Option<u32>, j: u16, shown: f32| {
                        let dragging = tools.table_drag.filter(|d| d.0 == vertex && d.1 == j);
                        let mut v = dragging.map_or(shown, |d| d.2);
                        let label = match vertex {
                            Some(x) => format!("Weight of {} at vertex {x}", doc.joint_label(j as usize)),
                            None => format!("Weight of {} at every selected vertex", doc.joint_label(j as usize)),
                        };
                        let r = ui
                            .add_enabled(
                                !doc.is_locked(j as usize),
                                egui::DragValue::new(&mut v)
                                    .range(0.0..=1.0)
                                    .speed(0.005)
                                    .max_decimals(4)
                                    .update_while_editing(false),
                            )
                            .on_hover_text(&label);
                        let enabled = r.enabled();
                        r.widget_info(|| {
                            let mut info = egui::WidgetInfo::drag_value(enabled, f64::from(v));
                            info.label = Some(label.clone());
                            info
                        });
                        let targets = || vertex.map_or_else(|| sel.clone(), |x| vec![x]);
                        let held = r.is_pointer_button_down_on() || r.dragged();
                        if r.changed() {
                            if held {
                                tools.table_drag = Some((vertex, j, v));
                            } else {
                                cmds.push(Command::SetWeight {
                                    vertices: targets(),
                                    joint: j,
                                    value: v,
                                });
                            }
                        }
                        if !held {
                            if let Some(d) = dragging {
                                tools.table_drag = None;
                                cmds.push(Command::SetWeight {
                                    vertices: targets(),
                                    joint: j,
                                    value: d.2,
                                });
                            }
                        }
                    };
                    ui.label("All")
                        .on_hover_text("The mean over the selection; a change sets every selected vertex");
                    for &j in &columns {
                        let mean = sel.iter().map(|&v| weight_of(v, j)).sum::<f32>() / sel.len().max(1) as f32;
                        cell(ui, None, j, mean);
                    }
                    ui.end_row();
                    for &v in sel.iter().take(TABLE_ROWS) {
                        ui.label(v.to_string());
                        for &j in &columns {
                            cell(ui, Some(v), j, weight_of(v, j));
                        }
                        ui.end_row();
                    }
                });
            });
            if sel.len() > TABLE_ROWS {
                ui.small(format!(
                    "{} more vertices: the All row edits them too",
                    sel.len() - TABLE_ROWS
                ));
            }
        });
}

fn op_label(op: WeightOp) -> &'static str {
    match op {
        WeightOp::Bind => "bind",
        WeightOp::Smooth => "smooth",
        WeightOp::Rogue => "rogue removal",
        WeightOp::Prune => "prune",
        WeightOp::Limit => "limit",
        WeightOp::Normalise => "normalise",
        WeightOp::Mirror => "mirror",
    }
}

/// The joint's containment volume for binding: automatic or a set radius, and the length scale.
fn volume_controls(
    ui: &mut egui::Ui,
    doc: &Document,
    i: usize,
    drag: &mut Option<(Field, f32)>,
    cmds: &mut Vec<Command>,
) {
    let Some(vol) = doc.volumes.get(i).copied() else {
        return;
    };
    ui.label("Containment volume (for binding with volumes)");
    let mut auto = vol.radius.is_none();
    if ui
        .checkbox(&mut auto, "Automatic radius")
        .on_hover_text("Size the volume from the joint's box, or from the bone and the mesh around it")
        .changed()
    {
        let radius = if auto { None } else { Some(radius_guess(doc, i)) };
        cmds.push(Command::SetVolume(i, JointVolume { radius, ..vol }));
    }
    if let Some(before) = vol.radius {
        let mut v = before;
        ui.horizontal(|ui| {
            let label = ui.label("Volume radius");
            let r = ui
                .add(
                    egui::DragValue::new(&mut v)
                        .speed(0.002)
                        .range(1e-4..=1e4)
                        .max_decimals(4)
                        .update_while_editing(false),
                )
                .on_hover_text("The volume's radius in world units: drag, or click and type")
                .labelled_by(label.id);
            field_response(Field::VolumeRadius(i), before, v, &r, drag, cmds);
        });
    }
    let before = vol.length_scale;
    let mut v = before;
    ui.horizontal(|ui| {
        let label = ui.label("Volume length scale");
        let r = ui
            .add(
                egui::DragValue::new(&mut v)
                    .speed(0.01)
                    .range(0.01..=10.0)
                    .max_decimals(3)
                    .update_while_editing(false),
            )
            .on_hover_text("Scales the bone's segments about its pivot before the volume is built")
            .labelled_by(label.id);
        field_response(Field::VolumeLength(i), before, v, &r, drag, cmds);
    });
}

/// A starting radius when automatic sizing is turned off: half the box's middle extent (its thickness across
/// the bone), or a tenth of the skeleton's distance to its parent, or 0.05.
fn radius_guess(doc: &Document, i: usize) -> f32 {
    let Some(joint) = doc.skeleton.joint(i) else {
        return 0.05;
    };
    let (lo, hi) = joint.bounds();
    let mut e = (hi - lo).to_array();
    e.sort_by(f32::total_cmp);
    let r = 0.5 * e[1];
    if r.is_finite() && r > 0.0 {
        r
    } else {
        (0.1 * joint.offset.length()).max(0.05)
    }
}

/// Play/pause, the time slider, loop and speed.
pub(crate) fn timeline(ui: &mut egui::Ui, doc: &Document, playback: &Playback, cmds: &mut Vec<Command>) {
    let Some(clip) = &doc.clip else {
        ui.label("No animation: open an .anim file, or a glTF model with animations, to play it");
        return;
    };
    let (lo, hi) = (clip.range.0.min(clip.range.1), clip.range.0.max(clip.range.1));
    ui.horizontal(|ui| {
        if !doc.clips.is_empty() {
            let current = doc
                .clip_choice
                .and_then(|i| doc.clips.get(i))
                .map_or("(from an .anim file)", |c| c.name.as_str());
            egui::ComboBox::from_label("Clip")
                .selected_text(current)
                .show_ui(ui, |ui| {
                    for (i, c) in doc.clips.iter().enumerate() {
                        if ui.selectable_label(doc.clip_choice == Some(i), &c.name).clicked() {
                            cmds.push(Command::ChooseClip(i));
                        }
                    }
                })
                .response
                .on_hover_text("The model's own animations: choose one to play");
        }
        if playback.playing {
            if ui.button("Pause").on_hover_text("Stop at the current time").clicked() {
                cmds.push(Command::Pause);
            }
        } else if ui.button("Play").on_hover_text("Play the animation").clicked() {
            cmds.push(Command::Play);
        }
        let mut looping = playback.looping;
        if ui
            .checkbox(&mut looping, "Loop")
            .on_hover_text("Wrap around at the end of the range instead of stopping")
            .changed()
        {
            cmds.push(Command::SetLooping(looping));
        }
        let mut speed = playback.speed;
        if ui
            .add(Slider::new(&mut speed, -2.0..=4.0).text("Speed").max_decimals(2))
            .on_hover_text("Playback speed; negative plays backwards")
            .changed()
        {
            cmds.push(Command::SetSpeed(speed));
        }
        let mut t = playback.time;
        ui.spacing_mut().slider_width = (ui.available_width() - 120.0).max(80.0);
        if ui
            .add(
                Slider::new(&mut t, lo..=hi)
                    .text("Time")
                    .clamping(SliderClamping::Always)
                    .max_decimals(3),
            )
            .on_hover_text(format!("Scrub through the clip's range [{lo}, {hi}]"))
            .changed()
        {
            cmds.push(Command::SetTime(t));
        }
    });
}

/// Loading spinner, the last message or error, counts and the document's files.
pub(crate) fn status_bar(ui: &mut egui::Ui, view: &View<'_>) {
    // Right side first (counts, then the files' names), so the message on the left gets what is left and
    // truncates instead of running under them; hovering shows it whole.
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        let doc = view.doc;
        let names: Vec<String> = doc
            .paths
            .all()
            .map(|p| {
                p.file_name()
                    .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
            })
            .collect();
        if !names.is_empty() {
            let full: Vec<String> = doc.paths.all().map(|p| p.display().to_string()).collect();
            ui.label(RichText::new(names.join(", ")).color(Color32::GRAY))
                .on_hover_text(full.join("\n"));
            ui.separator();
        }
        if !view.hidden_panels.is_empty() {
            ui.label(
                RichText::new(format!("{} hidden: window too narrow", view.hidden_panels.join(", ")))
                    .color(Color32::GRAY),
            )
            .on_hover_text("Widen the window to show them: the 3D view keeps at least half of it");
            ui.separator();
        }
        let mut counts = format!("{} joints", doc.skeleton.len());
        if let Some(k) = &doc.skin {
            counts += &format!(", {} vertices, {} triangles", k.vertex_count(), k.triangles().len());
        }
        if let Some(c) = &doc.clip {
            counts += &format!(", {} channels", c.channels.len());
        }
        ui.label(counts);
        ui.separator();
        ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
            if let Some(paths) = view.loading {
                ui.spinner().on_hover_text("Reading files in the background");
                let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                ui.add(egui::Label::new(format!("Loading {}...", names.join(", "))).truncate());
            }
            let s = view.status;
            if !s.text.is_empty() {
                let color = if s.is_error {
                    ui.visuals().error_fg_color
                } else {
                    ui.visuals().text_color()
                };
                let mut tip = s.text.clone();
                for d in &s.details {
                    tip.push('\n');
                    tip.push_str(d);
                }
                ui.add(egui::Label::new(RichText::new(&s.text).color(color)).truncate())
                    .on_hover_text(tip);
            }
        });
    });
}

/// The edit history: every edit by name, oldest first, the current state marked; clicking an entry undoes or
/// redoes up to it (`Command::GoTo`). "Original" is the state before the first edit.
pub fn history(ui: &mut egui::Ui, entries: &[String], head: usize, saved: Option<usize>, cmds: &mut Vec<Command>) {
    ui.heading("History");
    egui::ScrollArea::vertical().show(ui, |ui| {
        for (i, name) in std::iter::once("Original")
            .chain(entries.iter().map(String::as_str))
            .enumerate()
        {
            let mark = if saved == Some(i) { " (saved)" } else { "" };
            let label = format!("{name}{mark}");
            let resp = ui.selectable_label(i == head, label).on_hover_text(if i == head {
                "The current state"
            } else {
                "Go to the state after this edit"
            });
            if resp.clicked() && i != head {
                cmds.push(Command::GoTo(i));
            }
        }
    });
}

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
        let all = Side::ALL;
        // Wide: every panel at its default width (860 of 2000).
        assert_eq!(
            widths(2000.0, &all),
            vec![Some(240.0), Some(180.0), Some(260.0), Some(180.0)]
        );
        // 1280 wide: the four share 640 in proportion (240 * 640 / 860 = 178.6...).
        let w = widths(1280.0, &all);
        assert!(w.iter().all(|x| x.is_some()));
        let sum: f32 = w.iter().flatten().sum();
        assert!((sum - 640.0).abs() < 1e-3, "{w:?}");
        assert!((w[0].unwrap() - 240.0 * 640.0 / 860.0).abs() < 1e-3);
        // 1024 wide: four would be under 150 each in 512; History gives way, the three share 512.
        let w = widths(1024.0, &all);
        assert_eq!(w[3], None);
        assert!((w.iter().flatten().sum::<f32>() - 512.0).abs() < 1e-3, "{w:?}");
        // 640 wide: 320 holds two panels of at least 150; History and Weights give way.
        let w = widths(640.0, &all);
        assert_eq!((w[2], w[3]), (None, None));
        assert!((w[0].unwrap() + w[1].unwrap() - 320.0).abs() < 1e-3, "{w:?}");
        // Order given is kept; hidden panels stay hidden.
        let w = side_panel_widths(1280.0, &[Side::History, Side::Outliner]);
        assert_eq!(w[0].0, Side::History);
        assert_eq!(w.iter().filter_map(|x| x.1).sum::<f32>(), 360.0);
        assert!(side_panel_widths(200.0, &all).iter().all(|x| x.1.is_none()));
    }
}
