//! Weight painting in the editor window, driven through egui_kittest (no display, GPU or desktop dialog): brush
//! strokes, X mirror, subtract, the weight shading in Paint and the joint name beside the brush.
#![allow(clippy::unwrap_used)]

mod common;

use common::gui::{arm, drag, drag_in_steps, harness, select, weights_of};

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use skinbind::app::document::Document;
use skinbind::app::{FakeDialog, SkinbindApp};
use skinbind::sample::SampleKind;

#[test]
fn a_brush_stroke_paints_near_the_stroke_only_keeps_sums_and_undoes_bit_for_bit() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    h.get_by_label("Paint").click();
    h.run();
    {
        let b = h.state_mut().brush_mut();
        b.world_radius = true;
        b.radius = 0.15;
        b.strength = 1.0;
    }
    let before = weights_of(&h);
    // A stroke across the middle of the view, recording where the brush touched the arm.
    let (from, to) = (egui::pos2(560.0, 420.0), egui::pos2(1100.0, 420.0));
    let mut centres = Vec::new();
    h.event(egui::Event::PointerMoved(from));
    h.event(egui::Event::PointerButton {
        pos: from,
        button: egui::PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.step();
    centres.extend(h.state().brush_cursor().map(|c| c.center));
    for k in 1..=60 {
        h.event(egui::Event::PointerMoved(from + (to - from) * (k as f32 / 60.0)));
        h.step();
        centres.extend(h.state().brush_cursor().map(|c| c.center));
    }
    assert_eq!(
        weights_of(&h),
        before,
        "the document changes on release, not during the stroke"
    );
    h.event(egui::Event::PointerButton {
        pos: to,
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.run();
    assert!(!centres.is_empty(), "the stroke never touched the arm");
    let after = weights_of(&h);
    let posed = skinbind::app::surface::PosedSurface::build(h.state().document())
        .unwrap()
        .positions;
    let changed: Vec<usize> = (0..after.len()).filter(|&v| after.row(v) != before.row(v)).collect();
    assert!(
        !changed.is_empty() && changed.len() < after.len() / 2,
        "{} changed",
        changed.len()
    );
    for &v in &changed {
        let near = centres.iter().any(|c| c.distance(posed[v]) <= 0.15 * 1.001);
        assert!(near, "vertex {v} changed but is not under the stroke");
        let s: f32 = after.row(v).1.iter().sum();
        assert!((s - 1.0).abs() < 1e-5);
        assert!(after.row(v).0.contains(&1), "the elbow gained weight at {v}");
    }
    assert_eq!(
        h.state().history_names().last().map(String::as_str),
        Some("paint elbow (add)")
    );
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(weights_of(&h) == before, "undo restores the weights bit for bit");
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    h.run();
    assert!(weights_of(&h) == after, "redo gives the stroke's result again");
}

#[test]
fn x_mirror_painting_gives_the_mirrored_joint_the_same_weight_on_the_mirrored_vertices() {
    let doc = Document::sample(SampleKind::Creature, 3000).unwrap();
    let positions = doc.skin.as_ref().unwrap().positions().to_vec();
    let mut h = harness(doc, FakeDialog::new());
    select(&mut h, "wrist_l");
    let left = h.state().document().selected.unwrap() as u16;
    let right = h.state().document().skeleton.find("wrist_r")[0] as u16;
    h.get_by_label("Paint").click();
    h.run();
    {
        let b = h.state_mut().brush_mut();
        b.world_radius = true;
        b.radius = 0.4;
        b.strength = 1.0;
        b.mirror = true;
        b.front_only = false;
    }
    let before = weights_of(&h);
    // Sweep the whole view a few times so the brush crosses the left hand wherever the camera put it.
    for y in [200.0, 300.0, 400.0, 500.0] {
        drag(&mut h, egui::pos2(560.0, y), egui::pos2(1100.0, y), Modifiers::NONE);
    }
    let after = weights_of(&h);
    let partners = skinbind::adjust::mirror::vertex_partners(
        &positions,
        skinbind::adjust::Axis::X,
        skinbind::adjust::mirror::default_tolerance(&positions),
    );
    let weight = |w: &skinbind::model::Weights, v: usize, j: u16| {
        let (js, ws) = w.row(v);
        js.iter().position(|&x| x == j).map_or(0.0, |k| ws[k])
    };
    let painted: Vec<usize> = (0..after.len())
        .filter(|&v| weight(&after, v, left) > weight(&before, v, left) + 1e-4)
        .collect();
    assert!(!painted.is_empty(), "the sweep never painted the left wrist");
    let mut checked = 0;
    for v in painted {
        // Where the sweep also painted the mirror vertex itself, the later dab wins there (as in Blender).
        let direct = |p: u32| weight(&after, p as usize, left) != weight(&before, p as usize, left);
        if let Some(p) = partners[v].filter(|&p| p as usize != v && !direct(p)) {
            let (a, b) = (weight(&after, v, left), weight(&after, p as usize, right));
            assert!(
                (a - b).abs() < 1e-5,
                "vertex {v}: wrist_l {a}, its mirror {p}: wrist_r {b}"
            );
            checked += 1;
        }
    }
    assert!(checked > 10, "only {checked} mirrored pairs to check");
}

/// A brush stroke across the middle of the view, in 60 steps, with `modifiers` held.
fn stroke(h: &mut Harness<'_, SkinbindApp>, modifiers: Modifiers) {
    drag_in_steps(h, egui::pos2(560.0, 420.0), egui::pos2(1100.0, 420.0), modifiers, 60);
}

/// Issue 23 item 5: Subtract on a vertex wholly on the painted joint lowers it and gives the difference to the
/// joint's parent (the row stays normalised), a Ctrl stroke is named by what it did, and a stroke that can change
/// nothing says why.
#[test]
fn subtract_on_a_vertex_wholly_on_one_joint_gives_the_rest_to_its_parent() {
    let mut doc = arm();
    let skin = doc.skin.as_mut().unwrap();
    let n = skin.vertex_count();
    let rigid = skinbind::model::Weights::normalized((0..n).map(|_| [(1u16, 1.0f32)].as_slice()))
        .unwrap()
        .0;
    skin.set_weights(Some(rigid)).unwrap();
    let mut h = harness(doc, FakeDialog::new());
    select(&mut h, "elbow");
    h.get_by_label("Paint").click();
    h.run();
    {
        let b = h.state_mut().brush_mut();
        b.world_radius = true;
        b.radius = 0.3;
        b.strength = 0.5;
    }
    // An Add stroke with Ctrl held subtracts.
    stroke(&mut h, Modifiers::COMMAND);
    let w = weights_of(&h);
    let lowered: Vec<usize> = (0..n).filter(|&v| w.row(v).0 != [1]).collect();
    assert!(!lowered.is_empty(), "{:?}", h.state().status());
    for &v in &lowered {
        let (js, ws) = w.row(v);
        assert_eq!(
            js,
            [0, 1],
            "vertex {v}: the shoulder (the elbow's parent) takes the rest"
        );
        assert!((ws[0] + ws[1] - 1.0).abs() < 1e-6 && ws[1] < 1.0);
    }
    assert_eq!(
        h.state().history_names().last().map(String::as_str),
        Some("paint elbow (subtract)")
    );
    // With the shoulder locked, no joint can take the weight: nothing changes and the status bar says why.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    select(&mut h, "shoulder");
    h.get_by_label("Lock weights").click();
    h.run();
    select(&mut h, "elbow");
    let before = weights_of(&h);
    let edits = h.state().history_names().len();
    h.state_mut().brush_mut().mode = skinbind::paint::brush::BrushMode::Subtract;
    stroke(&mut h, Modifiers::NONE);
    assert!(weights_of(&h) == before);
    assert_eq!(h.state().history_names().len(), edits);
    let status = h.state().status();
    assert!(status.is_error && status.text.contains("changed nothing"), "{status:?}");
}

/// Issue 23 item 6: choosing Paint shows the painted joint's weights; leaving it puts the shading back.
#[test]
fn the_paint_tool_shows_the_weights_and_leaving_it_restores_the_view() {
    use skinbind::render::Shading;
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    assert_eq!(h.state().viewport().settings.shading, Shading::Shaded);
    h.get_by_label("Paint").click();
    h.run();
    assert_eq!(h.state().viewport().settings.shading, Shading::Weights);
    h.get_by_label("Pose").click();
    h.run();
    assert_eq!(h.state().viewport().settings.shading, Shading::Shaded);
}

/// Issue 23 item 6: in Paint, the joint name beside the brush is the painted joint, not the bone under the pointer.
#[test]
fn the_label_beside_the_brush_names_the_painted_joint() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "shoulder");
    h.get_by_label("Paint").click();
    h.run();
    let labels = |h: &Harness<'_, SkinbindApp>| -> Vec<String> {
        h.output()
            .shapes
            .iter()
            .filter_map(|s| match &s.shape {
                egui::Shape::Text(t) if t.fallback_color == skinbind::app::viewport::POINTER_LABEL_COLOUR => {
                    Some(t.galley.text().to_owned())
                }
                _ => None,
            })
            .collect()
    };
    // Across the view: wherever the pointer is over it, the label says shoulder.
    let mut seen = 0;
    for x in [600.0, 700.0, 800.0, 900.0, 1000.0] {
        h.hover_at(egui::pos2(x, 420.0));
        h.run();
        let l = labels(&h);
        assert!(l.iter().all(|n| n == "shoulder"), "{l:?} at x {x}");
        seen += l.len();
    }
    assert!(seen > 0, "no label drawn beside the pointer");
    // Right on the elbow's bone (where the Pose tool would name the elbow): still the shoulder.
    let (on_elbow, rect) = {
        let app = h.state();
        let rect = app.viewport().rect().unwrap();
        let world = app.scene().world_from_joint.to_vec();
        let mid = (world[1].w_axis.truncate() + world[2].w_axis.truncate()) * 0.5;
        let size = glam::Vec2::new(rect.width(), rect.height());
        (app.viewport().camera.project(mid, size).unwrap().0, rect)
    };
    h.hover_at(rect.min + egui::vec2(on_elbow.x, on_elbow.y));
    h.run();
    assert_eq!(labels(&h), ["shoulder"]);
}
