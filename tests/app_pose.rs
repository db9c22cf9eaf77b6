//! Posing in the editor window, driven through egui_kittest by accessibility label (no display, GPU or desktop
//! dialog): the joint tree, DOF sliders, undo and redo, the history panel, the file pose, the timeline and every
//! control's accessible name.
#![allow(clippy::unwrap_used)]

mod common;

use common::gui::{arm, bits, harness, menu, select, set_rotation, slider, wait_for_loads};
use egui_kittest::Harness;
use skinbind::app::SkinbindApp;

use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use skinbind::app::FakeDialog;
use skinbind::app::document::Document;
use skinbind::formats;
use skinbind::model::{Channel, Clip, Extrapolation, Key as AnimKey, Pose, Tangent};

#[test]
fn selecting_a_joint_in_the_tree_selects_it_and_the_viewport_gets_it() {
    let mut h = harness(arm(), FakeDialog::new());
    assert_eq!(h.state().document().selected, None);
    assert!(h.query_by_label("Rotation Z").is_none());
    select(&mut h, "wrist");
    assert_eq!(h.state().document().selected, Some(2));
    assert_eq!(h.state().scene().selected, Some(2));
    // The properties panel now shows the wrist's sliders.
    h.get_by_label("Rotation X");
    select(&mut h, "index_2");
    assert_eq!(
        h.state().document().selected,
        h.state().document().skeleton.find("index_2").first().copied()
    );
    assert_eq!(h.state().scene().selected, h.state().document().selected);
}

#[test]
fn a_dof_slider_poses_the_joint_within_its_limits() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    let wrist_before = h.state().scene().world_from_joint[2];
    set_rotation(&h, "Rotation Z", 1.0);
    h.run();
    assert_eq!(h.state().document().pose.dofs[1].z, 1.0);
    // The pose reaches forward kinematics: the wrist moved.
    assert_ne!(h.state().scene().world_from_joint[2], wrist_before);
    // Beyond the limit [0, 2.6]: clamped, on both sides.
    set_rotation(&h, "Rotation Z", 10.0);
    h.run();
    assert_eq!(h.state().document().pose.dofs[1].z, 2.6);
    set_rotation(&h, "Rotation Z", -3.0);
    h.run();
    assert_eq!(h.state().document().pose.dofs[1].z, 0.0);
    // The keyboard: focus the value and press the up arrow: half a degree.
    h.get_by_label("Rotation X").focus();
    h.run();
    let x0 = h.state().document().pose.dofs[1].x;
    h.key_press(Key::ArrowUp);
    h.run();
    let x1 = h.state().document().pose.dofs[1].x;
    assert!(
        (x1 - x0 - 0.5f32.to_radians()).abs() < 0.1f32.to_radians(),
        "{x0} -> {x1}"
    );
    // Each keyboard or screen-reader change is one edit.
    assert!(h.state().is_dirty());
}

#[test]
fn the_root_translation_is_an_undoable_edit() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "shoulder");
    let original = bits(&h.state().document().pose);
    h.get_by_label("Root translation Y").set_value_accesskit(0.75);
    h.run();
    assert_eq!(h.state().document().pose.root_translation.y, 0.75);
    assert_eq!(h.state().scene().world_from_joint[0].w_axis.y, 0.75);
    assert!(h.state().is_dirty());
    menu(&mut h, "Edit", "Undo Ctrl+Z");
    assert_eq!(bits(&h.state().document().pose), original);
    assert!(!h.state().is_dirty());
}

#[test]
fn undo_and_redo_restore_the_pose_bit_for_bit_and_the_title_follows_the_saved_state() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("posed.skel");
    let mut h = harness(arm(), FakeDialog::new().with_save(out.clone()));
    let original = bits(&h.state().document().pose);
    assert_eq!(h.state().title(), "sample arm - skinbind");
    select(&mut h, "elbow");
    set_rotation(&h, "Rotation Z", 0.123_456_79);
    h.run();
    let edited = bits(&h.state().document().pose);
    assert_ne!(edited, original);
    assert_eq!(h.state().title(), "sample arm* - skinbind");

    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(bits(&h.state().document().pose), original);
    assert_eq!(h.state().title(), "sample arm - skinbind");
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    h.run();
    assert_eq!(bits(&h.state().document().pose), edited);
    assert!(h.state().is_dirty());
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, Key::Y);
    h.run();
    assert_eq!(bits(&h.state().document().pose), edited);

    // Save As writes the skeleton and the skin beside it; the title loses its star.
    menu(&mut h, "File", "Save As... Ctrl+Shift+S");
    assert!(!h.state().is_dirty(), "{:?}", h.state().status());
    assert_eq!(h.state().title(), "posed.skel - skinbind");
    assert!(out.with_extension("skin").exists());
    // Undo after saving makes it differ from the file again; the Edit menu undoes too.
    menu(&mut h, "Edit", "Undo Ctrl+Z");
    assert_eq!(bits(&h.state().document().pose), original);
    assert_eq!(h.state().title(), "posed.skel* - skinbind");
}

/// Drag the rotation value of `label` sideways by `points` in 10 steps with `modifiers` held; returns the
/// elbow's rotation about that axis in degrees before, while the button is still down, and after the release.
fn drag_rotation(h: &mut Harness<'_, SkinbindApp>, label: &str, points: f32, modifiers: Modifiers) -> (f32, f32, f32) {
    let axis = ["Rotation X", "Rotation Y", "Rotation Z"]
        .iter()
        .position(|l| *l == label)
        .unwrap();
    let from = h.get_by_label(label).rect().center();
    let z = |h: &Harness<'_, SkinbindApp>| h.state().document().pose.dofs[1][axis].to_degrees();
    let start = z(h);
    let edits = h.state().history_names().len();
    let to = from + egui::vec2(points, 0.0);
    common::gui::press_and_move(h, from, to, modifiers, 10);
    h.run();
    let live = z(h);
    assert_eq!(
        h.state().history_names().len(),
        edits,
        "written live while dragging, not yet recorded"
    );
    common::gui::release(h, to, modifiers);
    assert_eq!(h.state().history_names().len(), edits + 1, "one edit on release");
    (start, live, z(h))
}

/// Issue 43: a rotation shows degrees and drags half a degree a point (a 40-point drag turns 20°, not a whole
/// turn), and the whole drag is one edit recorded on release.
#[test]
fn a_rotation_drag_turns_half_a_degree_a_point_and_is_one_edit_recorded_on_release() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    let original = bits(&h.state().document().pose);
    let (start, live, done) = drag_rotation(&mut h, "Rotation Z", 40.0, Modifiers::NONE);
    assert!(
        (17.0..=20.5).contains(&(live - start)),
        "{start}° to {live}° after 40 points"
    );
    assert_eq!(live, done);
    assert!(h.state().is_dirty());
    assert_eq!(h.state().history_names().len(), 1);
    // One undo goes all the way back to before the drag.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(bits(&h.state().document().pose), original);
    assert!(!h.state().is_dirty());
}

/// Issue 43: Shift drags a tenth as fast (40 points: 2°); Ctrl snaps to 5°, Ctrl+Shift to 15°.
#[test]
fn rotation_degrees_shift_drags_finer_and_ctrl_snaps_to_5_or_15_degrees() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    let (start, _, fine) = drag_rotation(&mut h, "Rotation Z", 40.0, Modifiers::SHIFT);
    assert!(
        (1.6..=2.1).contains(&(fine - start)),
        "{start}° to {fine}° after a 40-point Shift drag"
    );
    let (_, _, snapped) = drag_rotation(&mut h, "Rotation Z", 47.0, Modifiers::COMMAND);
    assert!(snapped > fine + 10.0, "{snapped}");
    assert!(
        (snapped / 5.0 - (snapped / 5.0).round()).abs() < 1e-3,
        "{snapped}° is not a multiple of 5°"
    );
    let (_, _, coarse) = drag_rotation(&mut h, "Rotation Z", 70.0, Modifiers::COMMAND | Modifiers::SHIFT);
    assert!(coarse > snapped + 15.0, "{coarse}");
    assert!(
        (coarse / 15.0 - (coarse / 15.0).round()).abs() < 1e-3,
        "{coarse}° is not a multiple of 15°"
    );
    // The panel says degrees, and the value reads as degrees.
    h.get_by_label("Rotation (degrees), applied x, then y, then z");
    let shown = h.get_by_label("Rotation Z").value().unwrap_or_default();
    assert!(shown.ends_with('°'), "{shown}");
}

/// A clip for the arm: every channel constant at the sample's file pose except the elbow's z, which goes from
/// 0 at t = 0 to 2 at t = 2 (linear).
fn arm_clip(doc: &Document) -> Clip {
    let n = doc.skeleton.len();
    let mut values = doc.pose.root_translation.to_array().to_vec();
    for d in &doc.pose.dofs {
        values.extend(d.to_array());
    }
    let key = |time, value| AnimKey {
        time,
        value,
        tangent_in: Tangent::Linear,
        tangent_out: Tangent::Linear,
    };
    let channels = values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let keys = if i == 3 + 3 + 2 {
                vec![key(0.0, 0.0), key(2.0, 2.0)]
            } else {
                vec![key(0.0, v)]
            };
            Channel::new(Extrapolation::Constant, Extrapolation::Constant, keys).unwrap()
        })
        .collect::<Vec<_>>();
    assert_eq!(channels.len(), Clip::channels_for(n));
    Clip::new((0.0, 2.0), channels)
}

#[test]
fn play_and_pause_move_the_time_and_the_pose_follows_the_clip() {
    let mut doc = arm();
    doc.clip = Some(arm_clip(&doc));
    let mut h = harness(doc, FakeDialog::new());
    assert_eq!(h.state().playback().time, 0.0);
    h.get_by_label("Play").click();
    h.run_steps(10);
    let t = h.state().playback().time;
    // 0.05 s a frame; the frame that handles the click only starts playback.
    assert!((t - 0.45).abs() < 0.051, "time {t}");
    assert!(h.state().playback().playing);
    let z = h.state().document().pose.dofs[1].z;
    assert!((z - t).abs() < 1e-5, "elbow z {z} at time {t}");
    h.get_by_label("Pause").click();
    h.run_steps(2);
    let paused = h.state().playback().time;
    h.run_steps(10);
    assert_eq!(h.state().playback().time, paused);
    assert!(!h.state().playback().playing);
    // Playing is not an edit.
    assert!(!h.state().is_dirty());

    // Scrubbing sets the time and the pose.
    slider(&h, "Time").set_value_accesskit(1.5);
    h.run();
    assert_eq!(h.state().playback().time, 1.5);
    assert!((h.state().document().pose.dofs[1].z - 1.5).abs() < 1e-5);

    // Without looping, playing stops at the end of the range.
    h.get_by_label("Loop").click();
    h.run();
    assert!(!h.state().playback().looping);
    h.get_by_label("Play").click();
    h.run_steps(30);
    assert_eq!(h.state().playback().time, 2.0);
    assert!(!h.state().playback().playing);
}

/// kittest's accessibility check (every visible input has a name) over every panel and menu.
#[test]
fn every_control_has_an_accessible_name() {
    let mut doc = arm();
    doc.clip = Some(arm_clip(&doc));
    let mut h = harness(doc, FakeDialog::new());
    select(&mut h, "shoulder");
    h.check_accessibility();
    select(&mut h, "elbow");
    h.check_accessibility();
    for m in ["File", "Edit", "View"] {
        h.get_by_label(m).click();
        h.run();
        h.check_accessibility();
        h.key_press(Key::Escape);
        h.run();
    }
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Recent files").hover();
    h.run();
    h.get_by_label("No recent files");
    h.check_accessibility();
    h.key_press(Key::Escape);
    h.run();
    // The Weights panel in every tool, with a vertex selection (the weight table) and a volume drawn.
    h.state_mut()
        .queue(skinbind::app::Command::SelectVertices(vec![57, 58, 65]));
    h.state_mut().tools_mut().method = skinbind::bind::BindMethod::Hybrid;
    for tool in ["Select", "Paint", "Move", "Pose"] {
        h.get_by_label(tool).click();
        h.run();
        h.check_accessibility();
    }
}

#[test]
fn the_history_panel_lists_edits_by_name_and_jumps_to_any_of_them() {
    let mut h = harness(arm(), FakeDialog::new());
    let original = bits(&h.state().document().pose);
    select(&mut h, "elbow");
    set_rotation(&h, "Rotation Z", 0.5);
    h.run();
    let one = bits(&h.state().document().pose);
    set_rotation(&h, "Rotation X", -0.25);
    h.run();
    let two = bits(&h.state().document().pose);
    assert!(
        h.query_by_label("Original (saved)").is_none(),
        "the history panel starts hidden"
    );
    h.get_by_label("View").click();
    h.run();
    h.get_by_label("History").click();
    h.run();
    // Close the menu, then the panel lists the edits oldest first.
    h.key_press(Key::Escape);
    h.run();
    h.get_by_label("rotate elbow about z");
    h.get_by_label("rotate elbow about x");
    // The state as loaded is the saved one.
    h.get_by_label("Original (saved)").click();
    h.run();
    assert_eq!(bits(&h.state().document().pose), original);
    assert!(!h.state().is_dirty());
    h.get_by_label("rotate elbow about x").click();
    h.run();
    assert_eq!(bits(&h.state().document().pose), two);
    h.get_by_label("rotate elbow about z").click();
    h.run();
    assert_eq!(bits(&h.state().document().pose), one);
    assert!(h.state().is_dirty());
}

/// A skeleton nested 3,000 deep overflowed the editor's stack: the joint tree was drawn by recursion. It is a
/// flat list now, and the reader stops at `MAX_DEPTH`.
#[test]
fn a_skeleton_nested_to_the_depth_limit_draws_its_tree() {
    use skinbind::model::skeleton::MAX_DEPTH;
    use skinbind::model::{Joint, Skeleton};
    let joints = (0..=MAX_DEPTH)
        .map(|i| Joint::new(format!("j{i}"), i.checked_sub(1), glam::Vec3::X))
        .collect();
    let doc = Document::new("deep", Skeleton::new(joints).unwrap(), None, None);
    let mut h = harness(doc, FakeDialog::new());
    select(&mut h, "j0");
    assert_eq!(h.state().document().selected, Some(0));
    assert!(
        h.query_by_label(&format!("j{MAX_DEPTH}")).is_some(),
        "the deepest joint has its row"
    );
}

/// Issue 23 item 2: saving never writes the current pose into the skeleton's `pose` lines (posing to paint is not
/// changing the rest pose); Edit > Set File Pose from Current Pose does, as one edit that undo takes back.
#[test]
fn save_keeps_the_file_pose_and_setting_it_is_a_named_undoable_edit() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("arm.skel");
    let mut h = harness(arm(), FakeDialog::new().with_save(out.clone()));
    let file_pose = Pose::from_file(&h.state().document().skeleton);
    select(&mut h, "elbow");
    set_rotation(&h, "Rotation Z", 0.75);
    h.run();
    assert_ne!(h.state().document().pose, file_pose);
    menu(&mut h, "File", "Save As... Ctrl+Shift+S");
    assert!(!h.state().is_dirty(), "{:?}", h.state().status());
    let saved = formats::load_skel(&out).unwrap().value;
    assert_eq!(Pose::from_file(&saved), file_pose, "Save wrote the current pose");
    assert_eq!(saved, h.state().document().skeleton);

    menu(&mut h, "Edit", "Set File Pose from Current Pose");
    assert!(h.state().is_dirty());
    assert_eq!(
        Pose::from_file(&h.state().document().skeleton),
        h.state().document().pose
    );
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    h.run();
    let saved = formats::load_skel(&out).unwrap().value;
    assert_eq!(Pose::from_file(&saved).dofs[1].z, 0.75);
    // Undo takes the file pose back (the current pose stays).
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(Pose::from_file(&h.state().document().skeleton), file_pose);
    assert_eq!(h.state().document().pose.dofs[1].z, 0.75);
}

/// Issue 23 item 11: opening a glTF model brings its animations; the first is the clip, and the timeline's Clip
/// box plays another.
#[test]
fn a_gltf_models_animations_are_clips_the_timeline_chooses_from() {
    let Some(data) = common::data_dir() else { return };
    let wolf = data.join("gltf/quaternius/Wolf.glb");
    let mut h = harness(arm(), FakeDialog::new().with_open(vec![wolf.clone()]));
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    let names: Vec<String> = h.state().document().clips.iter().map(|c| c.name.clone()).collect();
    assert!(names.len() >= 2, "{names:?}");
    let walking = names.iter().position(|n| n == "Walking").unwrap();
    assert_ne!(walking, 0);
    let doc = h.state().document();
    assert_eq!(doc.clip_choice, Some(0));
    assert_eq!(doc.clip.as_ref(), Some(&doc.clips[0].clip));
    h.get_by_label("Clip").click();
    h.run();
    h.get_by_label("Walking").click();
    h.run();
    let doc = h.state().document();
    assert_eq!(doc.clip_choice, Some(walking));
    assert_eq!(doc.clip.as_ref(), Some(&doc.clips[walking].clip));
    assert_eq!(h.state().playback().time, doc.clips[walking].clip.range.0);
}
