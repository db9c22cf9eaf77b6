//! The 3D view in the editor window, driven through egui_kittest (no display, GPU or desktop dialog): box
//! selection, moving vertices, Frame all, the view's share of a narrow window, and panel labels whole in it.
#![allow(clippy::unwrap_used)]

mod common;

use common::gui::{arm, drag, drag_in_steps, harness, harness_with, menu, select, set_rotation, weights_of};

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use skinbind::app::{Document, FakeDialog, SkinbindApp};
use skinbind::sample::SampleKind;

#[test]
fn a_box_in_select_mode_selects_the_vertices_facing_the_view() {
    let mut h = harness(arm(), FakeDialog::new());
    h.get_by_label("Select").click();
    h.run();
    let total = h.state().document().skin.as_ref().unwrap().vertex_count();
    // The view spans the middle of the window; a box over all of it takes the front of the arm.
    drag(
        &mut h,
        egui::pos2(560.0, 60.0),
        egui::pos2(1100.0, 760.0),
        Modifiers::NONE,
    );
    let front = h.state().document().selected_vertices.clone();
    assert!(!front.is_empty() && front.len() < total, "{} of {total}", front.len());
    assert!(front.windows(2).all(|w| w[0] < w[1]));
    h.get_by_label(&format!("{} vertices selected", front.len()));
    // Ctrl + box over the same area removes them all; Clear empties the selection.
    drag(
        &mut h,
        egui::pos2(560.0, 60.0),
        egui::pos2(1100.0, 760.0),
        Modifiers::COMMAND,
    );
    assert!(h.state().document().selected_vertices.is_empty());
    drag(
        &mut h,
        egui::pos2(560.0, 60.0),
        egui::pos2(1100.0, 760.0),
        Modifiers::SHIFT,
    );
    assert_eq!(h.state().document().selected_vertices, front);
    h.get_by_label("Clear").click();
    h.run();
    assert!(h.state().document().selected_vertices.is_empty());
}

#[test]
fn dragging_a_vertex_in_a_pose_solves_its_weights_as_one_undoable_edit() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    set_rotation(&h, "Rotation Z", 1.2);
    h.run();
    h.get_by_label("Move").click();
    h.run();
    let before = weights_of(&h);
    let posed_before = skinbind::app::surface::PosedSurface::build(h.state().document())
        .unwrap()
        .positions;
    // Press on the arm where the stroke test found it, and drag up and to the right.
    let mut moved = None;
    for x in (600..1100).step_by(40) {
        let from = egui::pos2(x as f32, 420.0);
        drag(&mut h, from, from + egui::vec2(25.0, -30.0), Modifiers::NONE);
        if weights_of(&h) != before {
            moved = h.state().document().selected_vertices.first().copied();
            break;
        }
    }
    let v = moved.expect("no drag took a vertex") as usize;
    let after = weights_of(&h);
    assert_eq!(
        h.state().history_names().last().cloned(),
        Some(format!("move vertex {v}"))
    );
    assert!((after.row(v).1.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    for u in 0..after.len() {
        if u != v {
            assert_eq!(after.row(u), before.row(u), "only the dragged vertex changes");
        }
    }
    let posed_after = skinbind::app::surface::PosedSurface::build(h.state().document())
        .unwrap()
        .positions;
    assert!(posed_after[v].distance(posed_before[v]) > 1e-4, "the vertex moved");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(weights_of(&h) == before);
}

/// Issue 23 item 7: the selection box is drawn while dragging, on top of the 3D view (it was drawn first and the
/// view's own drawing covered it).
#[test]
fn the_selection_box_is_drawn_over_the_view_while_dragging() {
    let mut h = harness(arm(), FakeDialog::new());
    h.get_by_label("Select").click();
    h.run();
    h.drag_at(egui::pos2(600.0, 100.0));
    h.run();
    h.hover_at(egui::pos2(900.0, 500.0));
    h.run();
    let shapes = &h.output().shapes;
    // The view: its GL callback, or without GL (as here) its background and the notice drawn in its place.
    let is_view = |s: &egui::epaint::ClippedShape| match &s.shape {
        egui::Shape::Callback(_) => true,
        egui::Shape::Text(t) => t.galley.text().starts_with("3D view"),
        _ => false,
    };
    let is_box = |s: &egui::epaint::ClippedShape| matches!(&s.shape, egui::Shape::Rect(r) if r.stroke.color == skinbind::app::viewport::BOX_COLOUR);
    let view = shapes.iter().position(is_view).expect("the 3D view draws");
    let boxed = shapes
        .iter()
        .rposition(is_box)
        .expect("the box is drawn while dragging");
    assert!(
        boxed > view,
        "the box (shape {boxed}) is drawn under the view (shape {view})"
    );
    h.drop_at(egui::pos2(900.0, 500.0));
    h.run();
    assert!(!h.output().shapes.iter().any(is_box), "the box goes when the drag ends");
}

/// Issue 23 item 8: Frame all fits the whole posed mesh in the view both ways, in a view narrower than tall too.
#[test]
fn frame_all_fits_the_posed_mesh_both_ways() {
    let app = SkinbindApp::new_for_test(arm(), Box::new(FakeDialog::new()));
    let mut h = Harness::builder()
        .with_size([900.0, 1000.0])
        .with_step_dt(0.05)
        .build_ui_state(|ui, app: &mut SkinbindApp| app.show(ui), app);
    h.run();
    // Stretch the arm out to the side, then frame all from the View menu.
    select(&mut h, "elbow");
    set_rotation(&h, "Rotation Z", 0.0);
    h.run();
    menu(&mut h, "View", "Frame all (Home)");
    h.run();
    let app = h.state();
    let rect = app.viewport().rect().unwrap();
    let doc = app.document();
    let posed = skinbind::app::surface::PosedSurface::build(doc).unwrap().positions;
    let size = glam::Vec2::new(rect.width(), rect.height());
    assert!(size.x < size.y, "the view is narrower than tall: {size}");
    for (v, p) in posed.iter().enumerate() {
        let (px, _) = app.viewport().camera.project(*p, size).unwrap();
        assert!(
            px.x >= 0.0 && px.y >= 0.0 && px.x <= size.x && px.y <= size.y,
            "vertex {v} lands at {px} outside the {size} view"
        );
    }
}

/// Issue 23 item 9: side panels start at half the window at most, so the 3D view keeps at least half: at 1024x700
/// the joint tree, the Weights panel and the dock (History turned on as a tab beside Properties) stay, narrower; at
/// 640x400 two stay and the Weights panel gives way; the status bar says which are hidden. The joint tree may take
/// a little more than its share to show its names whole.
#[test]
fn the_3d_view_keeps_half_the_window_however_narrow() {
    let mut h = harness_with(arm(), FakeDialog::new(), [1024.0, 700.0]);
    // The joint tree takes the room its names need past its share (here about 30 points).
    let w = h.state().view_size().x;
    assert!(w >= 0.45 * 1024.0, "view {w} of 1024");
    menu(&mut h, "View", "History");
    h.run();
    assert!(h.state().settings().show_history);
    let w = h.state().view_size().x;
    assert!(w >= 0.45 * 1024.0, "view {w} of 1024");
    assert!(h.state().hidden_panels().is_empty());
    h.key_press(Key::Escape);
    h.run();
    h.get_by_label("Original (saved)");
    h.get_by_label("Properties").click();
    h.run();
    select(&mut h, "elbow");
    h.get_by_label("Rotation X");

    let mut h = harness_with(arm(), FakeDialog::new(), [640.0, 400.0]);
    menu(&mut h, "View", "History");
    h.run();
    let w = h.state().view_size().x;
    assert!(w >= 0.4 * 640.0, "view {w} of 640");
    assert_eq!(h.state().hidden_panels(), ["Weights panel"]);
    assert!(
        h.query_by_label_contains("Weights panel hidden: window too narrow")
            .is_some()
    );
}

/// Issue 43 item 1: in the default window (1280x800), with every panel turned on, no label or name is cut by its
/// panel's edge, in the joint tree (a humanoid's fingers ten levels deep), the Weights panel (every section open,
/// in every tool), and each of the dock's tabs: Properties, Skeleton, Check (its options open, after a run) and
/// History.
#[test]
fn labels_and_tree_names_are_whole_at_1280x800_with_every_panel_open() {
    use skinbind::model::{Joint, Skeleton};
    // The tree: a humanoid's arm with Mixamo's names down to the fingers, eleven levels deep (names as long as
    // CesiumMan's "Skeleton_arm_joint_L__4_").
    let mut joints = Vec::new();
    for (i, name) in [
        "Hips",
        "Spine",
        "Spine1",
        "Spine2",
        "LeftShoulder",
        "LeftArm",
        "LeftForeArm",
        "LeftHand",
    ]
    .iter()
    .enumerate()
    {
        joints.push(Joint::new(format!("mixamorig:{name}"), i.checked_sub(1), glam::Vec3::Y));
    }
    for finger in ["Index", "Thumb"] {
        for k in 1..=4 {
            let parent = if k == 1 { 7 } else { joints.len() - 1 };
            joints.push(Joint::new(
                format!("mixamorig:LeftHand{finger}{k}"),
                Some(parent),
                glam::Vec3::X,
            ));
        }
    }
    let biped = Document::new("humanoid", Skeleton::new(joints).unwrap(), None, None);
    let names: Vec<String> = (0..biped.skeleton.len()).map(|j| biped.joint_label(j)).collect();
    let mut h = harness_with(biped, FakeDialog::new(), [1280.0, 800.0]);
    let tree = h.state().panel_rects().iter().find(|p| p.0 == "Joint tree").unwrap().1;
    for name in &names {
        let node = h.get_by_label(name);
        assert!(
            node.rect().right() <= tree.right(),
            "{name} ends at {}, past the tree's edge {}",
            node.rect().right(),
            tree.right()
        );
    }
    assert_eq!(common::gui::cut_text(&h), Vec::<String>::new());
    select(&mut h, "mixamorig:LeftHandThumb4");
    assert_eq!(common::gui::cut_text(&h), Vec::<String>::new());

    // The creature, posed as in its walk, so that the value boxes are as wide as they get.
    let mut doc = Document::sample(SampleKind::Creature, 1500).unwrap();
    let elbow = doc.skeleton.find("elbow_l")[0];
    doc.pose.dofs[elbow] = glam::Vec3::new(-1.0, -0.25, -0.05);
    let mut h = harness_with(doc, FakeDialog::new(), [1280.0, 800.0]);
    select(&mut h, "elbow_l");
    show_every_panel(&mut h);
    h.get_by_label("Run check").click();
    h.run_steps(2);
    common::gui::wait_for_idle(&mut h, 120.0);
    h.get_by_label("Options").click();
    h.run();
    let mut seen = Vec::new();
    for tab in ["Check", "History", "Properties"] {
        h.get_by_label(tab).click();
        h.run();
        for tool in ["Pose", "Select", "Paint", "Move"] {
            h.get_by_label(tool).click();
            h.run();
            seen.extend(
                common::gui::cut_text(&h)
                    .into_iter()
                    .map(|c| format!("{tab}, {tool}: {c}")),
            );
        }
    }
    h.get_by_label("Skeleton").click();
    h.run();
    seen.extend(common::gui::cut_text(&h));
    assert_eq!(seen, Vec::<String>::new());
}

/// Issue 43 item 1: the weight table scrolls sideways when its columns are wider than the Weights panel. At
/// 1280x800 with every panel open, in every tool, each column scrolled into view shows its joint's name whole (on one
/// line, not shortened, not running into the next column) and its lock box, inside the panel; with the table at its
/// start, the rest of the panel's text is whole too.
#[test]
fn weight_table_columns_are_whole_when_scrolled_into_view_at_1280x800() {
    use egui_kittest::kittest::NodeT;
    // The creature with names as long as a Mixamo character's, every vertex selected: the eight heaviest joints
    // and the selected one as columns, far wider than the panel.
    let mut doc = Document::sample(SampleKind::Creature, 1500).unwrap();
    for j in 0..doc.skeleton.len() {
        let name = format!("mixamorig:{}", doc.joint_label(j));
        doc.skeleton.joint_mut(j).unwrap().set_name(name).unwrap();
    }
    let n = doc.skin.as_ref().unwrap().vertex_count() as u32;
    doc.selected_vertices = (0..n).collect();
    let mut h = harness_with(doc, FakeDialog::new(), [1280.0, 800.0]);
    select(&mut h, "mixamorig:toe_r");
    show_every_panel(&mut h);
    let style = h.ctx.global_style();
    let font = egui::TextStyle::Body.resolve(&style);
    let line = h.ctx.fonts_mut(|f| f.row_height(&font));
    let margin = egui::Frame::side_top_panel(&style).inner_margin.right as f32;
    let width_of = |h: &Harness<'_, SkinbindApp>, text: &str| {
        h.ctx.fonts_mut(|f| {
            f.layout_no_wrap(text.to_owned(), font.clone(), egui::Color32::WHITE)
                .size()
                .x
        })
    };
    let mut cut = Vec::new();
    for tool in ["Pose", "Select", "Paint", "Move"] {
        h.get_by_label(tool).click();
        h.run();
        // The table's section in the middle of the panel's height, its first column at the left.
        h.get_by_label("Selected vertices").scroll_to_me();
        h.run();
        common::gui::labels(&h, "Vertex")
            .next()
            .expect("the table's first column")
            .scroll_to_me();
        h.run();
        let boxes: Vec<String> = h
            .query_all_by_label_contains("'s weights")
            .filter_map(|b| b.accesskit_node().label())
            .filter(|l| l.starts_with("Lock mixamorig:"))
            .collect();
        assert_eq!(boxes.len(), 9, "{tool}: {boxes:?}");
        let names: Vec<String> = boxes
            .iter()
            .map(|b| b["Lock ".len()..b.len() - "'s weights".len()].to_owned())
            .collect();
        // Everything but the columns (checked below, scrolled to) is whole with the table at its start.
        let in_table = |t: &str| {
            names.iter().any(|name| {
                t == name || t.contains(&format!("{name}'s weights")) || t.contains(&format!("of {name} at"))
            })
        };
        cut.extend(
            common::gui::cut_text_except(&h, in_table)
                .into_iter()
                .map(|c| format!("{tool}: {c}")),
        );
        let mut spans = Vec::new();
        for (name, lock) in names.iter().zip(&boxes) {
            h.get_by_label(lock).scroll_to_me();
            h.run();
            let panel = h
                .state()
                .panel_rects()
                .iter()
                .find(|p| p.0 == "Weights panel")
                .unwrap()
                .1;
            let inside = panel.shrink2(egui::vec2(margin - 0.5, 0.0));
            let lock_box = h.get_by_label(lock).rect();
            let all = h
                .get_by_label(&format!("Weight of {name} at every selected vertex"))
                .rect();
            // The name is the label right above its lock box.
            let Some(head) = common::gui::labels(&h, name)
                .map(|n| n.rect())
                .find(|r| (r.left() - lock_box.left()).abs() < 2.0 && (lock_box.top() - r.bottom()).abs() < line)
            else {
                cut.push(format!("{tool}: no name above {lock}"));
                continue;
            };
            for (what, r) in [("name", head), ("lock box", lock_box), ("All cell", all)] {
                if !inside.contains_rect(r) {
                    cut.push(format!(
                        "{tool}: {name}'s {what} at {r:?}, outside the panel's {inside:?}"
                    ));
                }
            }
            if head.height() > 1.8 * line {
                cut.push(format!(
                    "{tool}: {name} broken over lines ({:.0} points high)",
                    head.height()
                ));
            }
            let whole = width_of(&h, name);
            if head.width() + 0.5 < whole {
                cut.push(format!("{tool}: {name} shown {:.1} wide of {whole:.1}", head.width()));
            }
            // Where the column lies in the table (the table's own coordinates: scrolling moves every column alike).
            let table = common::gui::labels(&h, "Vertex")
                .next()
                .expect("the table's first column")
                .rect()
                .left();
            spans.push((
                name.clone(),
                head.left() - table,
                head.left() - table + whole,
                all.left() - table,
            ));
        }
        spans.sort_by(|a, b| a.1.total_cmp(&b.1));
        for w in spans.windows(2) {
            if w[0].2 > w[1].1.min(w[1].3) {
                cut.push(format!("{tool}: {} runs into {}'s column", w[0].0, w[1].0));
            }
        }
    }
    assert_eq!(cut, Vec::<String>::new());
}

/// Issue 43 hands-on pass at 1280x800: in Paint the painted joint's name follows the pointer, and near the view's
/// right edge it ran past it and was cut ("Lowe" for LowerArm.L). It turns to the pointer's left there, and goes
/// below it at the top; it is drawn over the selected vertices' dots, which hid it.
#[test]
fn the_name_beside_the_pointer_stays_inside_the_view_at_its_edges() {
    let mut doc = Document::sample(SampleKind::Creature, 1500).unwrap();
    // Every vertex selected: their dots must not hide the name.
    doc.selected_vertices = (0..doc.skin.as_ref().unwrap().vertex_count() as u32).collect();
    let mut h = harness_with(doc, FakeDialog::new(), [1280.0, 800.0]);
    select(&mut h, "shoulder_l");
    h.get_by_label("Paint").click();
    h.run();
    let view = h.state().viewport().rect().unwrap();
    for at in [
        view.center(),
        view.right_center() - egui::vec2(3.0, 0.0),
        view.right_top() + egui::vec2(-3.0, 3.0),
        view.left_top() + egui::vec2(3.0, 3.0),
        view.left_bottom() + egui::vec2(3.0, -3.0),
    ] {
        h.hover_at(at);
        h.run();
        let shapes = &h.output().shapes;
        let (index, label) = shapes
            .iter()
            .enumerate()
            .find_map(|(i, s)| match &s.shape {
                egui::Shape::Text(t) if t.fallback_color == skinbind::app::viewport::POINTER_LABEL_COLOUR => Some((
                    i,
                    (t.galley.text().to_owned(), t.galley.rect.translate(t.pos.to_vec2())),
                )),
                _ => None,
            })
            .expect("the painted joint is named beside the pointer");
        let dots = shapes
            .iter()
            .rposition(|s| matches!(s.shape, egui::Shape::Circle(_)))
            .expect("the selected vertices are drawn");
        assert!(
            index > dots,
            "the name (shape {index}) is drawn under the selection's dots (to {dots})"
        );
        assert_eq!(label.0, "shoulder_l");
        assert!(
            view.contains_rect(label.1),
            "pointer at {at:?}: the name at {:?} leaves the view {view:?}",
            label.1
        );
    }
    // Just past the view's edge, over the dock, the name is not drawn (it was, cut at the edge: "Neck" of Neck1).
    h.hover_at(view.right_center() + egui::vec2(20.0, 0.0));
    h.run();
    let named = h.output().shapes.iter().any(
        |s| matches!(&s.shape, egui::Shape::Text(t) if t.fallback_color == skinbind::app::viewport::POINTER_LABEL_COLOUR),
    );
    assert!(!named, "a name drawn beside a pointer outside the view");
}

/// Issue 24 item 1: the Move tool changes the document only through a queued edit: dragging a vertex of a bent
/// arm re-solves its weights, the release records one "move vertex N" edit and selects the vertex, and Ctrl+Z
/// puts the row back bit for bit.
#[test]
fn moving_a_vertex_records_one_edit_that_undo_reverts() {
    let mut doc = arm();
    // Bend the elbow so that the joints' transforms differ and weights can move a vertex.
    doc.pose.set_dof(&doc.skeleton.clone(), 1, 2, 1.2);
    let before = doc.skin.as_ref().unwrap().weights().unwrap().clone();
    let mut h = harness(doc, FakeDialog::new());
    select(&mut h, "elbow");
    h.get_by_label("Move").click();
    h.run();
    let edits = h.state().history_names().len();
    // Press on the forearm, between the elbow's and the wrist's dots, and drag up.
    let dot = |j: usize| {
        let p = skinbind::app::joint_on_screen(h.state(), j).unwrap();
        h.state().viewport().rect().unwrap().min + egui::vec2(p.x, p.y)
    };
    let from = dot(1).lerp(dot(2), 0.5);
    drag_in_steps(&mut h, from, from - egui::vec2(0.0, 40.0), Modifiers::NONE, 20);
    let names = h.state().history_names();
    assert_eq!(names.len(), edits + 1, "{names:?} {:?}", h.state().status());
    let moved = h.state().document().selected_vertices.clone();
    assert_eq!(moved.len(), 1);
    assert_eq!(names.last().cloned(), Some(format!("move vertex {}", moved[0])));
    let v = moved[0] as usize;
    assert_ne!(weights_of(&h).row(v), before.row(v), "the moved vertex's row changed");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(weights_of(&h) == before, "undo puts every row back");
}

/// Turn on the History and the Check panels beside the default ones; none may be hidden for want of room.
fn show_every_panel(h: &mut Harness<'_, SkinbindApp>) {
    menu(h, "View", "History");
    h.key_press(Key::Escape);
    menu(h, "View", "Check panel");
    h.key_press(Key::Escape);
    h.run();
    assert!(h.state().hidden_panels().is_empty(), "{:?}", h.state().hidden_panels());
}
