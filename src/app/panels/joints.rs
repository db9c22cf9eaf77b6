//! The joint tree and the selected joint's properties (rotation sliders within limits, root translation,
//! lock, deforms, containment volume).

use egui::RichText;

use super::*;

/// The joint tree: one row per joint in depth-first order, indented by depth, with a toggle on joints that have
/// children; a click on a name selects. Drawn as a flat list, not by recursion, so any depth the reader accepts
/// costs no call stack; the indent stops growing past [`TREE_INDENT_LEVELS`]. Names are never wrapped or cut:
/// the indent narrows so that the deepest names fit the panel where it can, the rest scrolls sideways, and each
/// row's tooltip names its joint.
pub(crate) fn outliner(ui: &mut egui::Ui, doc: &Document, cmds: &mut Vec<Command>) {
    ui.heading("Joints");
    let depths = doc.skeleton.depths();
    let indent = tree_indent(ui, doc, &depths);
    egui::ScrollArea::both().auto_shrink([false, false]).show(ui, |ui| {
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
        // The depth of a collapsed joint whose subtree is being skipped.
        let mut collapsed_at: Option<usize> = None;
        for (joint, &depth) in depths.iter().enumerate() {
            if let Some(c) = collapsed_at {
                if depth > c {
                    continue;
                }
                collapsed_at = None;
            }
            if !joint_row(ui, doc, joint, depth, indent, cmds) {
                collapsed_at = Some(depth);
            }
        }
    });
}

/// How many levels the joint tree indents before it stops (deeper joints line up at this indent).
const TREE_INDENT_LEVELS: usize = 24;

/// Points the joint tree indents per level at most: less than egui's default indent (18), as outliners do.
const TREE_INDENT: f32 = 12.0;

/// The least the tree indents per level, however deep and narrow: the levels stay apart.
const TREE_INDENT_MIN: f32 = 5.0;

/// Points per level such that every row (indent, toggle, name) fits the panel's width, between
/// [`TREE_INDENT_MIN`] and [`TREE_INDENT`]: a humanoid's fingers sit ten or more levels deep.
fn tree_indent(ui: &egui::Ui, doc: &Document, depths: &[usize]) -> f32 {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let spacing = ui.spacing();
    let toggle = spacing.icon_width + spacing.item_spacing.x;
    let row = 2.0 * spacing.button_padding.x + toggle + spacing.scroll.bar_width + spacing.item_spacing.x;
    let room = ui.available_width() - row;
    let mut indent = TREE_INDENT;
    ui.ctx().fonts_mut(|f| {
        for (joint, &depth) in depths.iter().enumerate() {
            let levels = depth.min(TREE_INDENT_LEVELS);
            if levels == 0 {
                continue;
            }
            let name = f
                .layout_no_wrap(doc.joint_label(joint), font.clone(), egui::Color32::WHITE)
                .size()
                .x;
            indent = indent.min((room - name) / levels as f32);
        }
    });
    indent.max(TREE_INDENT_MIN)
}

/// How wide the joint tree's panel must be for every name to show whole at the least indent
/// ([`TREE_INDENT_MIN`]): the panel widens to this where the window has room, so that names are not cut.
pub(crate) fn tree_width(ctx: &egui::Context, doc: &Document) -> f32 {
    let style = ctx.global_style();
    let font = egui::TextStyle::Body.resolve(&style);
    let spacing = &style.spacing;
    let row = 2.0 * spacing.button_padding.x
        + spacing.icon_width
        + 2.0 * spacing.item_spacing.x
        + spacing.scroll.bar_width
        + 2.0 * egui::Frame::side_top_panel(&style).inner_margin.right as f32;
    let depths = doc.skeleton.depths();
    let widest = ctx.fonts_mut(|f| {
        depths
            .iter()
            .enumerate()
            .map(|(joint, &depth)| {
                let name = f
                    .layout_no_wrap(doc.joint_label(joint), font.clone(), egui::Color32::WHITE)
                    .size()
                    .x;
                name + TREE_INDENT_MIN * depth.min(TREE_INDENT_LEVELS) as f32
            })
            .fold(0.0, f32::max)
    });
    widest + row
}

/// One row of the joint tree; returns whether the joint's children are shown.
fn joint_row(
    ui: &mut egui::Ui,
    doc: &Document,
    joint: usize,
    depth: usize,
    indent: f32,
    cmds: &mut Vec<Command>,
) -> bool {
    let label = doc.joint_label(joint);
    let selected = doc.selected == Some(joint);
    let has_children = !doc.skeleton.children(joint).is_empty();
    let tip =
        format!("{label} (joint {joint}): click to select it, drag it onto another joint to make that its parent");
    let id = ui.make_persistent_id(("joint-tree", joint));
    let mut state = egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, true);
    let levels = depth.min(TREE_INDENT_LEVELS);
    let row = ui.horizontal(|ui| {
        ui.add_space(indent * levels as f32);
        if has_children {
            state.show_toggle_button(ui, egui::collapsing_header::paint_default_icon);
        }
        // A row is dragged onto another to reparent its joint there (it stays where it is).
        let r = ui
            .selectable_label(selected, &label)
            .interact(egui::Sense::drag())
            .on_hover_text(&tip);
        if r.clicked() {
            cmds.push(Command::Select(Some(joint)));
        }
        r.dnd_set_drag_payload(joint);
        if let Some(dragged) = r.dnd_release_payload::<usize>() {
            if *dragged != joint {
                cmds.push(Command::Rig(crate::app::rig_state::RigOp::Reparent {
                    joint: *dragged,
                    parent: joint,
                }));
            }
        }
        r.hovered()
    });
    // The tree lines left of the name name the joint too.
    if !row.inner && row.response.contains_pointer() {
        row.response.clone().on_hover_text(&tip);
    }
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
pub(super) fn field_response(
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
    let Some((i, joint)) = doc.selected.and_then(|i| doc.skeleton.joint(i).map(|j| (i, j))) else {
        ui.label("Select a joint in the tree or the viewport");
        return;
    };
    egui::ScrollArea::both().auto_shrink([false, false]).show(ui, |ui| {
        ui.label(RichText::new(doc.joint_label(i)).strong())
            .on_hover_text(format!("Joint {i} in depth-first order"));
        let parent = joint.parent.map_or("none (root)".to_owned(), |p| doc.joint_label(p));
        ui.label(format!("Parent: {parent}"));
        let o = joint.offset;
        ui.label(format!("Offset: {:.4} {:.4} {:.4}", o.x, o.y, o.z))
            .on_hover_text("Pivot position in the parent's space");
        ui.separator();
        ui.label("Rotation (degrees), applied x, then y, then z");
        let rot = doc.pose.dofs.get(i).copied().unwrap_or_default();
        for axis in 0..3 {
            super::rotation::rotation_row(ui, i, joint, axis, rot[axis], drag, cmds);
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
