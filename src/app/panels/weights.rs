//! The Weights panel: the tools (pose, paint, select, move), the brush, the weight table, whole-mesh
//! operations (bind, smooth, rogue, prune, limit, normalise, mirror) and containment volumes.

use egui::{Button, Slider};

use super::*;
use crate::model::Row;

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
    fit_sliders(
        ui,
        &[
            "Max influences",
            "Iterations",
            "Factor",
            "Threshold",
            "Prune below",
            "Limit to",
            "Radius (world)",
            "Strength",
            "Value",
        ],
    );
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
            (
                Tool::Skeleton,
                "Skeleton",
                "Build and fix the skeleton in its rest pose: click the mesh to add joints, drag joints to move \
                 them (Tab)",
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
    let locked = doc.locks.count();
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
                .on_hover_text(
                    "Remove rogue weights (and soften, after the geodesic method) after binding, as skinbind bind \
                     does by default",
                );
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
                    .add_enabled(
                        idle,
                        Button::new(match likely_controls.len() {
                            1 => "Exclude 1 control".to_string(),
                            n => format!("Exclude {n} controls"),
                        }),
                    )
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
                ui.add(Slider::new(&mut tools.smooth.iterations, 1..=50).text("Iterations"))
                    .on_hover_text("Laplacian smoothing passes over the mesh");
                ui.add(Slider::new(&mut tools.smooth.strength, 0.0..=1.0).text("Factor"))
                    .on_hover_text("How far each pass moves a vertex's weights toward its neighbours'");
                button(
                    ui,
                    WeightOp::Smooth,
                    "Smooth",
                    "Smooth every unlocked joint's weights over the mesh",
                );
                ui.separator();
                ui.add(Slider::new(&mut tools.rogue, 0.01..=0.5).text("Threshold"))
                    .on_hover_text("A joint's islands of weight above this, away from its bone, are removed");
                button(
                    ui,
                    WeightOp::Rogue,
                    "Remove Rogue",
                    "Remove islands of weight cut off from their joint's main region",
                );
                button(
                    ui,
                    WeightOp::Soften,
                    "Soften",
                    "Average each vertex's weights with its surroundings' over a small radius, so that blends fade \
                     out as painted ones do (then every vertex keeps at most 'Limit to' joints; low-poly regions stay)",
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
    let mut totals: Row = Vec::new();
    for &v in sel {
        let (js, ws) = w.row(v as usize);
        for (&j, &x) in js.iter().zip(ws) {
            match totals.iter_mut().find(|t| t.0 == j) {
                Some(t) => t.1 += x,
                None => totals.push((j, x)),
            }
        }
    }
    totals.sort_by(crate::model::weights::stronger_first);
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
                            // Whole names: the table scrolls sideways rather than break one over lines.
                            ui.add(egui::Label::new(&name).wrap_mode(egui::TextWrapMode::Extend));
                            let tip = format!("Lock {name}'s weights");
                            let r = ui.checkbox(&mut locked, "lock").on_hover_text(&tip);
                            // A screen reader (and a test) tells the columns' boxes apart by the joint's name.
                            let (enabled, checked) = (r.enabled(), locked);
                            r.widget_info(|| {
                                egui::WidgetInfo::selected(egui::accesskit::Role::CheckBox, enabled, checked, &tip)
                            });
                            if r.changed() {
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
        WeightOp::Soften => "soften",
        WeightOp::Prune => "prune",
        WeightOp::Limit => "limit",
        WeightOp::Normalise => "normalise",
        WeightOp::Mirror => "mirror",
    }
}
