//! The Skeleton mode through the editor's UI (egui_kittest): entering and leaving it, adding joints by clicking
//! the mesh, dragging joints, insert, delete, reparent in the tree, rename, X-mirror, limits, templates, and undo
//! and redo of each. A bound skin must stay where it is through every edit.
#![allow(clippy::unwrap_used)]

mod common;

use common::gui::{drag, harness, menu};
use egui::Modifiers;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use glam::Vec3;
use skinbind::app::document::Document;
use skinbind::app::{FakeDialog, SkinbindApp, Tool, joint_on_screen};
use skinbind::model::Pose;

/// The shipped sample creature (bound at rest, shown in its walk pose), in the Skeleton mode.
fn in_skeleton_mode() -> Harness<'static, SkinbindApp> {
    let mut h = harness(Document::shipped_sample().unwrap(), FakeDialog::new());
    h.key_press(egui::Key::Tab);
    h.run();
    assert_eq!(h.state().viewport().tool, Tool::Skeleton);
    h
}

fn joint(h: &Harness<'_, SkinbindApp>, name: &str) -> usize {
    h.state().document().skeleton.find(name)[0]
}

fn pivot(h: &Harness<'_, SkinbindApp>, j: usize) -> Vec3 {
    h.state().document().world_from_joint()[j].w_axis.truncate()
}

/// Where joint `j`'s dot is in the window.
fn on_screen(h: &Harness<'_, SkinbindApp>, j: usize) -> egui::Pos2 {
    let p = joint_on_screen(h.state(), j).unwrap();
    h.state().viewport().rect().unwrap().min + egui::vec2(p.x, p.y)
}

/// The skin's vertices skinned in the document's current pose.
fn skinned(h: &Harness<'_, SkinbindApp>) -> Vec<Vec3> {
    let doc = h.state().document();
    let skin = doc.skin.as_ref().unwrap();
    let m = skinbind::deform::skinning_matrices(&doc.world_from_joint(), skin.bindings().unwrap());
    skinbind::deform::skin_vertices(
        skin.positions(),
        skin.normals(),
        skin.weights().unwrap(),
        &m,
        skinbind::deform::Method::Linear,
    )
    .0
}

fn worst_move(a: &[Vec3], b: &[Vec3]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (*x - *y).length()).fold(0.0, f32::max)
}

fn undo(h: &mut Harness<'_, SkinbindApp>) {
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::Z);
    h.run();
}

fn redo(h: &mut Harness<'_, SkinbindApp>) {
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, egui::Key::Z);
    h.run();
}

#[test]
fn tab_shows_the_rest_pose_and_a_second_tab_returns_to_the_pose() {
    let mut h = harness(Document::shipped_sample().unwrap(), FakeDialog::new());
    let walking = h.state().document().pose.clone();
    assert_ne!(
        walking,
        Pose::zero(&h.state().document().skeleton),
        "the sample opens in its walk pose"
    );
    h.key_press(egui::Key::Tab);
    h.run();
    assert_eq!(h.state().document().pose, Pose::zero(&h.state().document().skeleton));
    assert!(
        h.query_by_label("Symmetrize left to right").is_some(),
        "the Skeleton panel replaces Properties"
    );
    h.key_press(egui::Key::Tab);
    h.run();
    assert_eq!(h.state().viewport().tool, Tool::Pose);
    assert_eq!(h.state().document().pose, walking);
}

#[test]
fn a_click_on_the_mesh_adds_a_child_of_the_selected_joint_inside_the_solid() {
    let mut h = in_skeleton_mode();
    let spine = joint(&h, "spine");
    h.get_by_label("spine").click();
    h.run();
    let n = h.state().document().skeleton.len();
    // Between the spine's pivot and its child's, off both dots: on the body.
    let child = h.state().document().skeleton.children(spine)[0];
    let (a, b) = (on_screen(&h, spine), on_screen(&h, child));
    let at = a + (b - a) * 0.5;
    assert!(
        (at - a).length() > 15.0 && (at - b).length() > 15.0,
        "the dots are too close to click between"
    );
    drag(&mut h, at, at, Modifiers::NONE);
    let doc = h.state().document();
    assert_eq!(doc.skeleton.len(), n + 1);
    let k = doc.skeleton.find("joint")[0];
    assert_eq!(doc.skeleton.joints()[k].parent, Some(spine));
    assert_eq!(
        doc.selected,
        Some(k),
        "the new joint is selected, so the next click continues the chain"
    );
    let skin = doc.skin.as_ref().unwrap();
    let solid = skinbind::bind::bind_pose::Solid::new(skin.positions(), skin.triangles()).unwrap();
    assert!(
        solid.holds(pivot(&h, k)),
        "the new joint lies inside the solid: {}",
        pivot(&h, k)
    );
    undo(&mut h);
    assert_eq!(h.state().document().skeleton.len(), n);
    redo(&mut h);
    assert_eq!(h.state().document().skeleton.len(), n + 1);
}

#[test]
fn dragging_a_joint_moves_it_leaves_the_bound_skin_in_place_and_undoes_bit_for_bit() {
    let mut h = in_skeleton_mode();
    let elbow = joint(&h, "elbow_l");
    let (skeleton, before, pos) = (
        h.state().document().skeleton.clone(),
        skinned(&h),
        h.state().document().skin.as_ref().unwrap().positions().to_vec(),
    );
    let from_pivot = pivot(&h, elbow);
    let from = on_screen(&h, elbow);
    drag(&mut h, from, from + egui::vec2(0.0, -40.0), Modifiers::NONE);
    let moved = pivot(&h, elbow);
    assert!((moved - from_pivot).length() > 1e-3, "the elbow did not move");
    let doc = h.state().document();
    assert_eq!(
        doc.skin.as_ref().unwrap().positions(),
        &pos[..],
        "the stored mesh is untouched"
    );
    assert!(
        worst_move(&before, &skinned(&h)) < 1e-4,
        "the skin moved with the joint"
    );
    assert_eq!(h.state().history_names().last().unwrap(), "move elbow_l");
    undo(&mut h);
    assert_eq!(h.state().document().skeleton, skeleton);
    redo(&mut h);
    assert!((pivot(&h, elbow) - moved).length() < 1e-6);
}

#[test]
fn insert_and_delete_keep_the_joints_below_where_they_are() {
    let mut h = in_skeleton_mode();
    let knee = joint(&h, "knee_l");
    let below: Vec<(String, Vec3)> = {
        let doc = h.state().document();
        let w = doc.world_from_joint();
        doc.skeleton
            .joints()
            .iter()
            .enumerate()
            .map(|(i, j)| (j.name.clone(), w[i].w_axis.truncate()))
            .collect()
    };
    let n = below.len();
    h.get_by_label("knee_l").click();
    h.run();
    h.get_by_label("Insert").click();
    h.run();
    assert_eq!(h.state().document().skeleton.len(), n + 1);
    let inserted = joint(&h, "knee_l.001");
    assert_eq!(
        h.state().document().skeleton.joints()[joint(&h, "knee_l")].parent,
        Some(inserted)
    );
    for (name, p) in &below {
        assert!((pivot(&h, joint(&h, name)) - *p).length() < 1e-5, "{name} moved");
    }
    // Delete the knee: its children go to the inserted joint and stay where they are.
    h.get_by_label("knee_l").click();
    h.run();
    h.get_by_label("Delete").click();
    h.run();
    assert!(h.state().document().skeleton.find("knee_l").is_empty());
    for (name, p) in below.iter().filter(|(n, _)| n != "knee_l") {
        assert!((pivot(&h, joint(&h, name)) - *p).length() < 1e-5, "{name} moved");
    }
    undo(&mut h);
    undo(&mut h);
    assert_eq!(h.state().document().skeleton.len(), n);
    assert_eq!(joint(&h, "knee_l"), knee);
}

#[test]
fn dragging_a_tree_row_onto_another_reparents_it_in_place() {
    let mut h = in_skeleton_mode();
    let (hand, spine) = (joint(&h, "wrist_l"), joint(&h, "spine"));
    let at = pivot(&h, hand);
    let (from, to) = (
        h.get_by_label("wrist_l").rect().center(),
        h.get_by_label("spine").rect().center(),
    );
    common::gui::drag_in_steps(&mut h, from, to, Modifiers::NONE, 10);
    let doc = h.state().document();
    let hand = doc.skeleton.find("wrist_l")[0];
    assert_eq!(
        doc.skeleton.joints()[hand].parent,
        Some(doc.skeleton.find("spine")[0]),
        "from {spine}"
    );
    assert!((pivot(&h, hand) - at).length() < 1e-5);
    undo(&mut h);
    let doc = h.state().document();
    assert_eq!(
        doc.skeleton.joints()[joint(&h, "wrist_l")].parent,
        Some(joint(&h, "elbow_l"))
    );
}

#[test]
fn rename_refuses_a_name_a_writer_cannot_keep_and_takes_a_good_one() {
    let mut h = in_skeleton_mode();
    h.get_by_label("elbow_l").click();
    h.run();
    let field = h.get_by_label("Name");
    field.click();
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("Name").type_text("left elbow");
    h.key_press(egui::Key::Enter);
    h.run();
    assert_eq!(h.state().document().skeleton.find("left elbow").len(), 0);
    assert!(
        h.state()
            .status()
            .text
            .contains("a space cannot be part of a joint name"),
        "{:?}",
        h.state().status()
    );
    h.get_by_label("Name").click();
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("Name").type_text("forearm_l");
    h.key_press(egui::Key::Enter);
    h.run();
    assert_eq!(h.state().document().skeleton.find("forearm_l").len(), 1);
    undo(&mut h);
    assert_eq!(h.state().document().skeleton.find("elbow_l").len(), 1);
}

#[test]
fn x_mirror_moves_the_counterpart_to_the_mirrored_place() {
    let mut h = in_skeleton_mode();
    h.get_by_label("X-mirror").click();
    h.run();
    let (l, r) = (joint(&h, "elbow_l"), joint(&h, "elbow_r"));
    let from = on_screen(&h, l);
    drag(&mut h, from, from + egui::vec2(0.0, -30.0), Modifiers::NONE);
    let (pl, pr) = (pivot(&h, l), pivot(&h, r));
    assert!((pr - Vec3::new(-pl.x, pl.y, pl.z)).length() < 1e-4, "{pl} {pr}");
    // A click into the left thigh with the left hip selected makes a joint there and its counterpart under the
    // right hip, at the mirrored place.
    let (hip, knee) = (joint(&h, "hip_l"), joint(&h, "knee_l"));
    h.get_by_label("hip_l").click();
    h.run();
    let (a, b) = (on_screen(&h, hip), on_screen(&h, knee));
    let at = a + (b - a) * 0.5;
    drag(&mut h, at, at, Modifiers::NONE);
    let doc = h.state().document();
    let (nl, nr) = (doc.skeleton.find("joint.L"), doc.skeleton.find("joint.R"));
    assert_eq!((nl.len(), nr.len()), (1, 1), "{:?}", h.state().status());
    assert_eq!(doc.skeleton.joints()[nr[0]].parent, Some(joint(&h, "hip_r")));
    let (pl, pr) = (pivot(&h, nl[0]), pivot(&h, nr[0]));
    assert!((pr - Vec3::new(-pl.x, pl.y, pl.z)).length() < 1e-4, "{pl} {pr}");
    undo(&mut h);
    assert!(
        h.state().document().skeleton.find("joint.R").is_empty(),
        "one edit made both"
    );
}

#[test]
fn one_root_joint_starts_a_skeleton_built_by_clicking_into_the_mesh() {
    let mut h = harness(Document::shipped_sample().unwrap(), FakeDialog::new());
    h.get_by_label("File").click();
    h.run();
    menu(&mut h, "New skeleton from template", "one root joint");
    assert_eq!(h.state().document().skeleton.len(), 1);
    assert_eq!(h.state().viewport().tool, Tool::Skeleton);
    h.get_by_label("root").click();
    h.run();
    // Click the mesh above the root's dot (the creature's chest): a child of the root.
    let at = on_screen(&h, 0) + egui::vec2(0.0, -40.0);
    drag(&mut h, at, at, Modifiers::NONE);
    let doc = h.state().document();
    assert_eq!(doc.skeleton.len(), 2, "{:?}", h.state().status());
    assert_eq!(doc.skeleton.joints()[1].parent, Some(0));
}

#[test]
fn a_joint_type_preset_sets_the_limits_and_undo_restores_them() {
    let mut h = in_skeleton_mode();
    let knee = joint(&h, "knee_l");
    let before = h.state().document().skeleton.joints()[knee].limits;
    h.get_by_label("knee_l").click();
    h.run();
    h.get_by_label("Joint type").click();
    h.run();
    h.get_by_label("Fixed").click();
    h.run();
    let limits = h.state().document().skeleton.joints()[knee].limits;
    assert!(
        limits.iter().all(|l| l.is_some_and(|l| l.lo == 0.0 && l.hi == 0.0)),
        "{limits:?}"
    );
    undo(&mut h);
    assert_eq!(h.state().document().skeleton.joints()[knee].limits, before);
}

#[test]
fn a_template_from_the_file_menu_lands_in_the_mesh_box_and_undoes() {
    let mut h = harness(Document::shipped_sample().unwrap(), FakeDialog::new());
    let old = h.state().document().skeleton.clone();
    h.get_by_label("File").click();
    h.run();
    menu(&mut h, "New skeleton from template", "biped");
    let doc = h.state().document();
    assert_eq!(doc.skeleton.len(), 27);
    assert_eq!(h.state().viewport().tool, Tool::Skeleton);
    let (lo, hi) = doc.skin.as_ref().unwrap().bounds().unwrap();
    let top = pivot(&h, joint(&h, "HeadTop_End"));
    assert!(
        (top.y - hi.y).abs() < 1e-4 && top.cmpge(lo).all() && top.cmple(hi).all(),
        "{top} in {lo}..{hi}"
    );
    undo(&mut h);
    assert_eq!(h.state().document().skeleton, old);
}

#[test]
fn after_a_move_the_status_bar_binds_the_moved_joints_region_again_as_one_edit() {
    let mut h = in_skeleton_mode();
    let elbow = joint(&h, "elbow_l");
    let from = on_screen(&h, elbow);
    drag(&mut h, from, from + egui::vec2(0.0, -30.0), Modifiers::NONE);
    let before = common::gui::weights_of(&h);
    let edits = h.state().history_names().len();
    h.get_by_label("Bind again around 1 moved joints").click();
    h.run_steps(2);
    common::gui::wait_for_idle(&mut h, 120.0);
    let after = common::gui::weights_of(&h);
    let changed = after.differing_rows(&before);
    assert!(!changed.is_empty(), "the region was not bound again");
    // Only vertices that had weight around the elbow (shoulder, elbow, wrist) changed.
    let doc = h.state().document();
    let near = ["shoulder_l", "elbow_l", "wrist_l"].map(|n| doc.skeleton.find(n)[0] as u16);
    assert!(
        changed
            .iter()
            .all(|&v| before.row(v as usize).0.iter().any(|j| near.contains(j)))
    );
    assert_eq!(h.state().history_names().len(), edits + 1);
    assert!(
        h.query_by_label("Bind again around 1 moved joints").is_none(),
        "the offer is gone"
    );
}

/// Skeleton > Fit to mesh puts a shipped template's joints into the open mesh (every joint but the root inside
/// its solid, the fitted pose as the bind pose), on a worker thread, as one edit that undo takes back whole.
#[test]
fn fit_to_mesh_puts_a_template_inside_the_mesh_as_one_undoable_edit() {
    use skinbind::rig::templates::{TemplateKind, template};
    let mut h = in_skeleton_mode();
    let old = h.state().document().skeleton.clone();
    let quadruped = template(TemplateKind::Quadruped);
    menu(&mut h, "Fit to mesh", "quadruped");
    // The fit runs on a worker thread; the window keeps drawing meanwhile.
    common::gui::wait_for_idle(&mut h, 300.0);
    let doc = h.state().document();
    assert_eq!(doc.skeleton.len(), quadruped.len(), "{:?}", h.state().status());
    assert!(doc.skin.as_ref().unwrap().weights().is_none());
    let skin = doc.skin.as_ref().unwrap();
    let solid = skinbind::rig::fit_solid::FitSolid::new(skin.positions(), skin.triangles(), 64).unwrap();
    let world = doc.world_from_joint();
    for (j, m) in world.iter().enumerate().skip(1) {
        assert!(
            solid.holds(m.w_axis.truncate()),
            "{} at {} is outside",
            doc.skeleton.joints()[j].name,
            m.w_axis
        );
    }
    // Bound where it stands: the bindings are the joints' world matrices in the shown pose.
    for (b, m) in skin.bindings().unwrap().iter().zip(&world) {
        assert!(b.abs_diff_eq(*m, 1e-4), "{b} vs {m}");
    }
    undo(&mut h);
    assert_eq!(h.state().document().skeleton, old);
    redo(&mut h);
    assert_eq!(h.state().document().skeleton.len(), quadruped.len());
}

/// Skeleton > Fit to mesh > a rig file: another character's rig (the Cow, with its mesh and weights) chosen in
/// the file dialog, read and fitted on the worker into the open mesh, as one edit: the skeleton becomes the
/// Cow's, every joint but its ground root inside the mesh, and undo brings the old one back.
#[test]
fn fit_to_mesh_takes_a_rig_file_with_its_mesh_as_the_template() {
    let Some(data) = common::data_dir() else { return };
    let cow = data.join("gltf/quaternius/farm/Cow.glb");
    let mut h = harness(
        Document::shipped_sample().unwrap(),
        FakeDialog::new().with_open(vec![cow]),
    );
    h.key_press(egui::Key::Tab);
    h.run();
    let old = h.state().document().skeleton.clone();
    menu(&mut h, "Fit to mesh", "a rig file...");
    common::gui::wait_for_idle(&mut h, 300.0);
    let status = h.state().status().text.clone();
    assert!(
        status.starts_with("Fitted the rig in Cow.glb into the mesh (28 joints): move joints where needed"),
        "{status}"
    );
    let doc = h.state().document();
    assert_eq!(doc.skeleton.len(), 28);
    assert_eq!(doc.skeleton.find("FrontUpLeg.L").len(), 1);
    let skin = doc.skin.as_ref().unwrap();
    let solid = skinbind::rig::fit_solid::FitSolid::new(skin.positions(), skin.triangles(), 64).unwrap();
    for (j, m) in doc.world_from_joint().iter().enumerate() {
        if doc.skeleton.joints()[j].parent.is_some() {
            let name = &doc.skeleton.joints()[j].name;
            assert!(solid.holds(m.w_axis.truncate()), "{name} is outside");
        }
    }
    undo(&mut h);
    assert_eq!(h.state().document().skeleton, old);
}

/// The rig file's own mesh tells which way the open mesh faces: the Wolf faces +X where the Horse faces +Z, so Fit
/// to mesh turns it to face the Horse's way first and says so in the status; with "Take the mesh as it lies"
/// chosen in the menu, the fit takes it as it lies and says nothing of it.
#[test]
fn fit_to_mesh_turns_a_mesh_facing_another_way_unless_taken_as_it_lies() {
    use skinbind::formats::gltf::{AnimationChoice, load_gltf_with};
    let Some(data) = common::data_dir() else { return };
    let q = data.join("gltf/quaternius");
    let wolf = load_gltf_with(&q.join("Wolf.glb"), None, &AnimationChoice::None)
        .unwrap()
        .value;
    let horse = q.join("farm/Horse.glb");
    let doc = Document::new("Wolf", wolf.skeleton, Some(wolf.skin), None);
    let mut h = harness(
        doc,
        FakeDialog::new().with_open(vec![horse.clone()]).with_open(vec![horse]),
    );
    h.key_press(egui::Key::Tab);
    h.run();
    menu(&mut h, "Fit to mesh", "a rig file...");
    common::gui::wait_for_idle(&mut h, 300.0);
    let status = h.state().status().text.clone();
    assert!(
        status.starts_with("Fitted the rig in Horse.glb into the mesh (28 joints)")
            && status.contains(
                "Warning: the mesh does not face the template's way (its up is +Y and its front +X; the template's \
                 is +Y and +Z): it was fitted turned"
            ),
        "{status}"
    );
    h.get_by_label("Fit to mesh").click();
    h.run();
    h.get_by_label("Take the mesh as it lies").click();
    h.run();
    if h.query_by_label("a rig file...").is_none() {
        h.get_by_label("Fit to mesh").click();
        h.run();
    }
    h.get_by_label("a rig file...").click();
    h.run_steps(3);
    common::gui::wait_for_idle(&mut h, 300.0);
    let status = h.state().status().text.clone();
    assert!(
        status.starts_with("Fitted the rig in Horse.glb into the mesh (28 joints)") && !status.contains("face"),
        "{status}"
    );
}

/// A shipped template is never turned by a guess, so the quadruped lies across the Wolf (which faces +X), and the
/// status says the mesh lies across it; with
/// "The mesh faces +X" chosen in the menu (which stays open), its head lands at the Wolf's head and its tail at
/// the tail; File > New skeleton from template then places the template in the box facing +X too.
#[test]
fn fit_to_mesh_fits_a_mesh_the_way_it_is_said_to_face() {
    use skinbind::formats::gltf::{AnimationChoice, load_gltf_with};
    let Some(data) = common::data_dir() else { return };
    let wolf = load_gltf_with(&data.join("gltf/quaternius/Wolf.glb"), None, &AnimationChoice::None)
        .unwrap()
        .value;
    let mut h = harness(
        Document::new("Wolf", wolf.skeleton, Some(wolf.skin), None),
        FakeDialog::new(),
    );
    h.key_press(egui::Key::Tab);
    h.run();
    let head_from_tail = |h: &Harness<'_, SkinbindApp>| {
        let doc = h.state().document();
        let world = doc.world_from_joint();
        let at = |name: &str| world[doc.skeleton.find(name)[0]].w_axis.truncate();
        at("Head") - at("Tail")
    };
    menu(&mut h, "Fit to mesh", "quadruped");
    common::gui::wait_for_idle(&mut h, 300.0);
    let d = head_from_tail(&h);
    assert!(d.x.abs() < d.z.abs(), "head from tail {d}");
    // The status says, in red, that the mesh lies across the template.
    let status = h.state().status().clone();
    assert!(
        status.is_error && status.text.contains("Warning: the mesh lies across the template"),
        "{status:?}"
    );
    h.get_by_label("Fit to mesh").click();
    h.run();
    h.get_by_label("The mesh faces +X").click();
    h.run();
    // The menu stays open for the template to be chosen.
    h.get_by_label("quadruped").click();
    h.run_steps(3);
    common::gui::wait_for_idle(&mut h, 300.0);
    let d = head_from_tail(&h);
    assert!(
        d.x > 4.0 && d.x > 10.0 * d.z.abs(),
        "head from tail {d}: {:?}",
        h.state().status()
    );
    assert!(!h.state().status().is_error, "{:?}", h.state().status());
    // File > New skeleton from template places the template facing the same way.
    h.key_press(egui::Key::Escape);
    h.run();
    h.get_by_label("File").click();
    h.run();
    menu(&mut h, "New skeleton from template", "quadruped");
    let d = head_from_tail(&h);
    assert!(
        d.x > 4.0 && d.x > 10.0 * d.z.abs(),
        "head from tail {d}: {:?}",
        h.state().status()
    );
    assert!(
        h.state()
            .status()
            .text
            .contains("placed facing the way the mesh was said to face (its up is +Y and its front +X)"),
        "{:?}",
        h.state().status()
    );
    // The File menu offers the same choice: the mesh taken as it lies gets the template facing +Z, across it.
    h.get_by_label("File").click();
    h.run();
    // The menu stays open for the template to be chosen.
    menu(&mut h, "New skeleton from template", "Take the mesh as it lies");
    h.get_by_label("quadruped").click();
    h.run_steps(3);
    let d = head_from_tail(&h);
    assert!(d.z > 10.0 * d.x.abs(), "head from tail {d}: {:?}", h.state().status());
    assert!(
        h.state().status().text.contains("(its up is +Y and its front +Z)"),
        "{:?}",
        h.state().status()
    );
}

/// A file that is no rig is named as such, and the skeleton stays.
#[test]
fn fit_to_mesh_refuses_a_file_that_is_not_a_rig() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not a rig").unwrap();
    let mut h = harness(
        Document::shipped_sample().unwrap(),
        FakeDialog::new().with_open(vec![notes]),
    );
    h.key_press(egui::Key::Tab);
    h.run();
    let old = h.state().document().skeleton.clone();
    menu(&mut h, "Fit to mesh", "a rig file...");
    common::gui::wait_for_idle(&mut h, 60.0);
    let status = h.state().status();
    assert!(status.is_error, "{status:?}");
    assert!(
        status
            .text
            .starts_with("Fit to mesh: choose a rig: a .glb, .gltf or .fbx"),
        "{}",
        status.text
    );
    assert_eq!(h.state().document().skeleton, old);
}
