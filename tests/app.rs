//! The editor window driven through egui_kittest by accessibility label: no display, GPU or desktop dialog.
#![allow(clippy::unwrap_used)]

mod common;

use common::gui::harness_with;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use skinbind::app::document::Document;
use skinbind::app::{FakeDialog, FileDialog, SkinbindApp};
use skinbind::atomic::save_atomic;
use skinbind::formats::{self, skel::write_skel, skin::write_skin};
use skinbind::model::{Channel, Clip, Extrapolation, Key as AnimKey, Pose, Tangent};
use skinbind::sample::SampleKind;

/// The arm sample: shoulder 0, elbow 1 (x in [-1.2, 1.2], y fixed at 0, z in [0, 2.6]), wrist 2, hand 3, ...
fn arm() -> Document {
    Document::sample(SampleKind::Arm, 300).unwrap()
}

fn harness(doc: Document, dialog: impl FileDialog + 'static) -> Harness<'static, SkinbindApp> {
    harness_with(doc, dialog, [1400.0, 900.0])
}

fn select(h: &mut Harness<'_, SkinbindApp>, name: &str) {
    h.get_by_label(name).click();
    h.run();
}

fn slider<'t>(h: &'t Harness<'_, SkinbindApp>, label: &'t str) -> egui_kittest::Node<'t> {
    h.get_by_role_and_label(Role::Slider, label)
}

/// Step frames until every background load has finished and been applied.
fn wait_for_loads(h: &mut Harness<'_, SkinbindApp>) {
    common::gui::wait_for_idle(h, 60.0);
}

fn menu(h: &mut Harness<'_, SkinbindApp>, menu: &str, item: &str) {
    h.get_by_label(menu).click();
    h.run();
    h.get_by_label(item).click();
    // Not `run`: a load started by the item keeps the spinner repainting.
    h.run_steps(3);
}

fn bits(p: &Pose) -> Vec<u32> {
    let mut v: Vec<u32> = p.root_translation.to_array().iter().map(|x| x.to_bits()).collect();
    v.extend(p.dofs.iter().flat_map(|d| d.to_array()).map(f32::to_bits));
    v
}

#[test]
fn selecting_a_joint_in_the_tree_selects_it_and_the_viewport_gets_it() {
    let mut h = harness(arm(), FakeDialog::new());
    assert_eq!(h.state().document().selected, None);
    assert!(h.query_by_role_and_label(Role::Slider, "Rotation Z").is_none());
    select(&mut h, "wrist");
    assert_eq!(h.state().document().selected, Some(2));
    assert_eq!(h.state().scene().selected, Some(2));
    // The properties panel now shows the wrist's sliders.
    slider(&h, "Rotation X");
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
    slider(&h, "Rotation Z").set_value_accesskit(1.0);
    h.run();
    assert_eq!(h.state().document().pose.dofs[1].z, 1.0);
    // The pose reaches forward kinematics: the wrist moved.
    assert_ne!(h.state().scene().world_from_joint[2], wrist_before);
    // Beyond the limit [0, 2.6]: clamped, on both sides.
    slider(&h, "Rotation Z").set_value_accesskit(10.0);
    h.run();
    assert_eq!(h.state().document().pose.dofs[1].z, 2.6);
    slider(&h, "Rotation Z").set_value_accesskit(-3.0);
    h.run();
    assert_eq!(h.state().document().pose.dofs[1].z, 0.0);
    // The keyboard: focus the slider and press the right arrow.
    slider(&h, "Rotation X").focus();
    h.run();
    let x0 = h.state().document().pose.dofs[1].x;
    h.key_press(Key::ArrowRight);
    h.run();
    let x1 = h.state().document().pose.dofs[1].x;
    assert!(x1 > x0 && x1 <= 1.2, "{x0} -> {x1}");
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
    slider(&h, "Rotation Z").set_value_accesskit(0.123_456_79);
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

#[test]
fn a_slider_drag_is_one_edit_recorded_on_release() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    let original = bits(&h.state().document().pose);
    let rect = slider(&h, "Rotation Z").rect();
    let y = rect.center().y;
    h.drag_at(egui::pos2(rect.left() + rect.width() * 0.2, y));
    h.run();
    for f in [0.3, 0.4, 0.5, 0.6] {
        h.hover_at(egui::pos2(rect.left() + rect.width() * f, y));
        h.run();
    }
    // Written live while dragging, not yet recorded.
    let live = h.state().document().pose.dofs[1].z;
    assert!(live > 0.0, "{live}");
    assert!(!h.state().is_dirty());
    h.drop_at(egui::pos2(rect.left() + rect.width() * 0.6, y));
    h.run();
    assert!(h.state().is_dirty());
    // One undo goes all the way back to before the drag.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(bits(&h.state().document().pose), original);
    assert!(!h.state().is_dirty());
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
    Clip {
        range: (0.0, 2.0),
        channels,
    }
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

fn write_sample(dir: &Path) -> (PathBuf, PathBuf, Document) {
    let doc = Document::sample(SampleKind::Tube, 400).unwrap();
    let skel = dir.join("tube.skel");
    let skin = dir.join("tube.skin");
    save_atomic(&skel, |w| write_skel(w, &doc.skeleton)).unwrap();
    save_atomic(&skin, |w| write_skin(w, doc.skin.as_ref().unwrap())).unwrap();
    (skel, skin, doc)
}

#[test]
fn opening_files_through_the_dialog_loads_them_and_errors_show_path_line_and_column() {
    let d = tempfile::tempdir().unwrap();
    let (skel, skin, expected) = write_sample(d.path());
    let bad = d.path().join("bad.skel");
    std::fs::write(&bad, "balljoint root {\n  offset 0 0 oops\n}\n").unwrap();
    let dialog = FakeDialog::new()
        .with_open(vec![skel.clone(), skin.clone()])
        .with_open(vec![bad.clone()]);
    let asked = dialog.asked.clone();
    let mut h = harness(arm(), dialog);
    let generation = h.state().scene().generation;

    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    assert_eq!(asked.lock().unwrap().as_slice(), ["open"]);
    let doc = h.state().document();
    assert_eq!(doc.paths.skel.as_deref(), Some(skel.as_path()));
    assert_eq!(doc.paths.skin.as_deref(), Some(skin.as_path()));
    assert_eq!(doc.skeleton, expected.skeleton);
    assert_eq!(
        doc.skin.as_ref().unwrap().positions(),
        expected.skin.as_ref().unwrap().positions()
    );
    assert!(
        h.state().scene().generation > generation,
        "the renderer must upload the new skin"
    );
    assert_eq!(h.state().title(), "tube.skel - skinbind");
    assert!(!h.state().status().is_error, "{:?}", h.state().status());
    // The tree shows the new skeleton.
    select(&mut h, "joint2");
    assert_eq!(h.state().document().selected, Some(2));
    assert_eq!(h.state().settings().recent, vec![skel.clone(), skin.clone()]);

    // A syntax error: the status bar shows the parser's PATH:LINE:COL message and the document stays.
    let message = formats::load_skel(&bad).unwrap_err().to_string();
    assert!(message.starts_with(&format!("{}:2:", bad.display())), "{message}");
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    assert!(h.state().status().is_error);
    assert_eq!(h.state().status().text, message);
    h.get_by_label(&message);
    assert_eq!(h.state().document().paths.skel.as_deref(), Some(skel.as_path()));
}

#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn dropping_files_on_the_window_opens_them() {
    let d = tempfile::tempdir().unwrap();
    let (skel, skin, expected) = write_sample(d.path());
    let mut h = harness(arm(), FakeDialog::new());
    h.input_mut().dropped_files.push(Arc::new(Dropped(skel)));
    h.input_mut().dropped_files.push(Arc::new(Dropped(skin)));
    h.step();
    wait_for_loads(&mut h);
    assert_eq!(h.state().document().skeleton, expected.skeleton);
    assert!(h.state().document().skin.is_some());
}

#[test]
fn quitting_with_unsaved_changes_asks_first() {
    let mut h = harness(arm(), FakeDialog::new());
    menu(&mut h, "File", "Quit Ctrl+Q");
    assert!(!h.state().is_confirming_quit(), "nothing to lose: no question");
    select(&mut h, "elbow");
    slider(&h, "Rotation Z").set_value_accesskit(0.5);
    h.run();
    menu(&mut h, "File", "Quit Ctrl+Q");
    assert!(h.state().is_confirming_quit());
    h.get_by_label("Unsaved changes");
    h.get_by_label("Cancel").click();
    h.run();
    assert!(!h.state().is_confirming_quit());
    assert!(h.query_by_label("Unsaved changes").is_none());
    assert!(h.state().is_dirty());
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

/// Loading runs on a worker thread: the frame that starts it is drawn at once, with a spinner and the file's name,
/// and the result is applied on a later frame.
#[test]
fn loading_shows_progress_and_does_not_block_the_frame() {
    let d = tempfile::tempdir().unwrap();
    let (skel, skin, expected) = write_sample(d.path());
    let mut h = harness(arm(), FakeDialog::new());
    h.state_mut()
        .queue(skinbind::app::Command::OpenPaths(vec![skel.clone(), skin]));
    h.step(); // applies the command: the batch waits
    h.step(); // starts the worker and draws
    assert!(!h.state().is_idle());
    h.get_by_label_contains(&format!("Loading {}", skel.display()));
    assert_eq!(h.state().document().name, "sample arm");
    wait_for_loads(&mut h);
    assert_eq!(h.state().document().skeleton, expected.skeleton);
    assert!(h.query_by_label_contains("Loading").is_none());
}

#[test]
fn the_history_panel_lists_edits_by_name_and_jumps_to_any_of_them() {
    let mut h = harness(arm(), FakeDialog::new());
    let original = bits(&h.state().document().pose);
    select(&mut h, "elbow");
    slider(&h, "Rotation Z").set_value_accesskit(0.5);
    h.run();
    let one = bits(&h.state().document().pose);
    slider(&h, "Rotation X").set_value_accesskit(-0.25);
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

#[test]
fn a_session_saves_and_reopens_the_rig_pose_and_view() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("work.skinbind");
    let dialog = FakeDialog::new().with_save(file.clone()).with_open(vec![file.clone()]);
    let mut h = harness(arm(), dialog);
    select(&mut h, "elbow");
    slider(&h, "Rotation Z").set_value_accesskit(0.75);
    h.run();
    let posed = bits(&h.state().document().pose);
    menu(&mut h, "File", "Save Session As...");
    assert!(file.is_file(), "{:?}", h.state().status());
    assert!(!h.state().is_dirty());
    // Change the pose, then open the session again: the saved pose, skeleton and skin come back.
    slider(&h, "Rotation Z").set_value_accesskit(0.1);
    h.run();
    assert_ne!(bits(&h.state().document().pose), posed);
    menu(&mut h, "File", "Open... Ctrl+O");
    // The new pose is not saved: opening asks first.
    h.get_by_label("Open without saving").click();
    h.run_steps(3);
    wait_for_loads(&mut h);
    assert_eq!(bits(&h.state().document().pose), posed, "{:?}", h.state().status());
    assert_eq!(h.state().document().selected, Some(1));
    assert!(h.state().document().skin.as_ref().unwrap().vertex_count() > 0);
    assert!(!h.state().is_dirty());
}

#[test]
fn after_a_crash_the_autosaved_session_is_offered_and_restored() {
    let d = tempfile::tempdir().unwrap();
    let recovery = d.path().join("recovery.skinbind");
    // A session that edits and autosaves, then "crashes" (is dropped without quitting).
    let posed = {
        let mut h = harness(arm(), FakeDialog::new());
        h.state_mut().set_recovery_path(Some(recovery.clone()));
        select(&mut h, "elbow");
        slider(&h, "Rotation Z").set_value_accesskit(1.5);
        h.run();
        h.state_mut().autosave();
        h.state_mut().finish_autosave();
        bits(&h.state().document().pose)
    };
    assert!(recovery.is_file());
    // The next start offers it; Restore brings the edit back.
    let mut h = harness(arm(), FakeDialog::new());
    h.state_mut().set_recovery_path(Some(recovery.clone()));
    h.run();
    assert!(h.state().is_offering_recovery());
    h.get_by_label("Restore unsaved work?");
    h.get_by_label("Restore").click();
    h.run();
    assert!(!h.state().is_offering_recovery());
    assert_eq!(bits(&h.state().document().pose), posed);
    // Discard deletes the file; a clean quit does too.
    let mut h2 = harness(arm(), FakeDialog::new());
    h2.state_mut().set_recovery_path(Some(recovery.clone()));
    h2.run();
    h2.get_by_label("Discard").click();
    h2.run();
    assert!(!recovery.exists());
    std::fs::write(&recovery, b"{}").unwrap();
    h.state_mut().set_recovery_path(Some(recovery.clone()));
    h.state_mut().queue(skinbind::app::Command::Recover(false));
    h.run();
    assert!(!recovery.exists());
}

fn weights_of(h: &Harness<'_, SkinbindApp>) -> skinbind::model::Weights {
    h.state().document().skin.as_ref().unwrap().weights().unwrap().clone()
}

/// Joint `j`'s weight at every vertex.
fn column(w: &skinbind::model::Weights, j: u16) -> Vec<u32> {
    (0..w.len())
        .map(|v| {
            let (js, ws) = w.row(v);
            js.iter().position(|&x| x == j).map_or(0, |k| ws[k].to_bits())
        })
        .collect()
}

/// Click a button in the Weights panel and wait for its worker thread.
fn run_tool(h: &mut Harness<'_, SkinbindApp>, button: &str) {
    h.get_by_label(button).click();
    h.run_steps(2);
    wait_for_loads(h);
}

#[test]
fn binding_and_clean_up_in_the_editor_are_undoable_edits() {
    let mut h = harness(arm(), FakeDialog::new());
    let original = weights_of(&h);
    h.state_mut().tools_mut().rigid = true;
    run_tool(&mut h, "Bind Skin");
    let bound = weights_of(&h);
    assert!(bound != original, "{:?}", h.state().status());
    assert!(
        (0..bound.len()).all(|v| bound.row(v).0.len() == 1),
        "rigid: one joint per vertex"
    );
    assert!(h.state().is_dirty());
    assert!(
        h.state().status().text.starts_with("Bound "),
        "{:?}",
        h.state().status()
    );
    run_tool(&mut h, "Smooth");
    let smoothed = weights_of(&h);
    assert!(smoothed != bound);
    assert!(
        (0..smoothed.len()).any(|v| smoothed.row(v).0.len() > 1),
        "smoothing blends the rigid edges"
    );
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(weights_of(&h) == bound, "undo restores the bound weights bit for bit");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(weights_of(&h) == original);
    assert!(!h.state().is_dirty());
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    h.run();
    assert!(weights_of(&h) == bound);
}

#[test]
fn a_locked_joint_keeps_its_weights_through_clean_up_and_binding() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    h.get_by_label("Lock weights").click();
    h.run();
    assert!(h.state().document().is_locked(1));
    let before = column(&weights_of(&h), 1);
    for button in ["Smooth", "Prune", "Normalise", "Bind Skin"] {
        run_tool(&mut h, button);
        assert_eq!(column(&weights_of(&h), 1), before, "{button} changed the locked elbow");
    }
    // Unlocked, a bind may change it; the lock itself is one edit in the history.
    h.get_by_label("Lock weights").click();
    h.run();
    assert!(!h.state().document().is_locked(1));
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(h.state().document().is_locked(1), "undo relocks");
}

#[test]
fn a_joints_volume_is_set_in_properties_and_undone() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "wrist");
    assert_eq!(h.state().document().volumes[2].radius, None);
    h.get_by_label("Automatic radius").click();
    h.run();
    let r = h.state().document().volumes[2].radius;
    assert!(r.is_some_and(|r| r > 0.0), "{r:?}");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(h.state().document().volumes[2].radius, None);
}

#[test]
fn saving_a_skin_with_unweighted_vertices_asks_first() {
    let d = tempfile::tempdir().unwrap();
    let skel = d.path().join("bare.skel");
    let mut doc = arm();
    doc.skin.as_mut().unwrap().set_weights(None).unwrap();
    let mut h = harness(doc, FakeDialog::new().with_save(skel.clone()).with_save(skel.clone()));
    menu(&mut h, "File", "Save As... Ctrl+Shift+S");
    assert!(h.state().is_confirming_unweighted());
    h.get_by_label("Unweighted vertices");
    h.get_by_label("Cancel").click();
    h.run();
    assert!(!h.state().is_confirming_unweighted());
    assert!(!skel.exists(), "cancel writes nothing");
    menu(&mut h, "File", "Save As... Ctrl+Shift+S");
    h.get_by_label("Save anyway").click();
    h.run();
    assert!(
        skel.is_file() && skel.with_extension("skin").is_file(),
        "{:?}",
        h.state().status()
    );
    // Bound, it saves without asking.
    run_tool(&mut h, "Bind Skin");
    menu(&mut h, "File", "Save Ctrl+S");
    assert!(!h.state().is_confirming_unweighted());
    assert!(!h.state().is_dirty());
}

/// Press the primary button at `from`, move to `to` in steps, release: a drag in the window.
fn drag(h: &mut Harness<'_, SkinbindApp>, from: egui::Pos2, to: egui::Pos2, modifiers: Modifiers) {
    drag_in_steps(h, from, to, modifiers, 5);
}

/// A primary-button drag from `from` to `to` in `steps` frames, with `modifiers` held.
fn drag_in_steps(
    h: &mut Harness<'_, SkinbindApp>,
    from: egui::Pos2,
    to: egui::Pos2,
    modifiers: Modifiers,
    steps: usize,
) {
    let button = |pos, pressed| egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers,
    };
    h.event(egui::Event::ModifiersChanged(modifiers));
    h.event(egui::Event::PointerMoved(from));
    h.event(button(from, true));
    h.run();
    for k in 1..=steps {
        let t = k as f32 / steps as f32;
        h.event(egui::Event::PointerMoved(from + (to - from) * t));
        h.step();
    }
    h.event(button(to, false));
    h.run();
    h.event(egui::Event::ModifiersChanged(Modifiers::NONE));
    h.run();
}

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
fn the_weight_table_sets_a_joint_on_the_selected_vertices_as_one_edit() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    let picked = vec![57u32, 58, 65];
    h.state_mut()
        .queue(skinbind::app::Command::SelectVertices(picked.clone()));
    h.run();
    let before = weights_of(&h);
    h.get_by_label("Weight of elbow at every selected vertex")
        .set_value_accesskit(0.3);
    h.run();
    let after = weights_of(&h);
    for v in 0..after.len() {
        let (js, ws) = after.row(v);
        if picked.contains(&(v as u32)) {
            let k = js.iter().position(|&j| j == 1).unwrap();
            assert!((ws[k] - 0.3).abs() < 1e-6, "vertex {v}: {ws:?}");
            assert!((ws.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        } else {
            assert_eq!(after.row(v), before.row(v), "vertex {v} was not selected");
        }
    }
    h.get_by_label("Weight of elbow at vertex 58");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(weights_of(&h) == before, "undo restores every row bit for bit");
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    h.run();
    assert!(weights_of(&h) == after);
    // A locked joint's cells are read-only and the edit is refused.
    h.state_mut().queue(skinbind::app::Command::SetLock(1, true));
    h.run();
    h.state_mut().queue(skinbind::app::Command::SetWeight {
        vertices: picked,
        joint: 1,
        value: 0.9,
    });
    h.run();
    assert!(weights_of(&h) == after);
    assert!(h.state().status().text.contains("locked"), "{:?}", h.state().status());
}

#[test]
fn clean_up_limited_to_the_selection_changes_only_selected_rows_as_one_edit() {
    let mut h = harness(arm(), FakeDialog::new());
    let picked: Vec<u32> = (50..80).collect();
    h.state_mut()
        .queue(skinbind::app::Command::SelectVertices(picked.clone()));
    h.run();
    h.get_by_label("Selected vertices only").click();
    h.run();
    let before = weights_of(&h);
    run_tool(&mut h, "Smooth");
    let after = weights_of(&h);
    assert!(after != before, "{:?}", h.state().status());
    for v in 0..after.len() {
        if !picked.contains(&(v as u32)) {
            assert_eq!(after.row(v), before.row(v), "vertex {v} is not selected");
        }
    }
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(weights_of(&h) == before);
}

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

#[test]
fn dragging_a_vertex_in_a_pose_solves_its_weights_as_one_undoable_edit() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    slider(&h, "Rotation Z").set_value_accesskit(1.2);
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

#[test]
fn a_joints_volume_is_drawn_and_its_outline_dragged_to_a_new_radius_as_one_edit() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    h.state_mut().tools_mut().method = skinbind::bind::BindMethod::Volume;
    h.run();
    let vol = h.state().scene().volume.cloned().expect("the elbow's volume is shown");
    let auto = vol.radius;
    assert!(auto > 0.0 && !vol.segments.is_empty());
    // Grab the outline beside the middle of the bone, on screen, and pull it out to twice its distance.
    let vp = h.state().viewport();
    let (rect, camera) = (vp.rect().unwrap(), vp.camera);
    let size = glam::Vec2::new(rect.width(), rect.height());
    let segs = vp.posed_volume(&h.state().scene(), &vol);
    let (a, b) = segs[0];
    let mid = a.lerp(b, 0.5);
    let (sa, sb) = (camera.project(a, size).unwrap().0, camera.project(b, size).unwrap().0);
    let normal = glam::Vec2::new(-(sb - sa).y, (sb - sa).x).normalize();
    let r_px = auto / camera.world_per_pixel(mid, size.y);
    let centre = camera.project(mid, size).unwrap().0;
    let at = |k: f32| {
        let p = centre + normal * r_px * k;
        egui::pos2(rect.min.x + p.x, rect.min.y + p.y)
    };
    drag(&mut h, at(1.0), at(2.0), Modifiers::NONE);
    let set = h.state().document().volumes[1]
        .radius
        .expect("a radius set by the drag");
    assert!((set / auto - 2.0).abs() < 0.1, "{set} vs {auto}");
    assert_eq!(
        h.state().history_names().last().map(String::as_str),
        Some("change elbow's volume")
    );
    assert_eq!(h.state().history_names().len(), 1, "one edit for the whole drag");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(h.state().document().volumes[1].radius, None);
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

/// A session whose paths named files elsewhere made Ctrl+S overwrite them without a prompt.
#[test]
fn a_session_naming_files_elsewhere_opens_read_only_and_save_asks() {
    let d = tempfile::tempdir().unwrap();
    let (here, elsewhere) = (d.path().join("here"), d.path().join("elsewhere"));
    std::fs::create_dir(&here).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    let (skel, skin, mut doc) = write_sample(&elsewhere);
    doc.paths.skel = Some(skel.clone());
    doc.paths.skin = Some(skin.clone());
    let session = here.join("gift.skinbind");
    skinbind::app::session::SessionFile::capture(&doc, skinbind::app::session::ViewState::default())
        .unwrap()
        .save(&session)
        .unwrap();
    let before = (std::fs::read(&skel).unwrap(), std::fs::read(&skin).unwrap());
    let dialog = FakeDialog::new().with_open(vec![session.clone()]);
    let asked = dialog.asked.clone();
    let mut h = harness(arm(), dialog);
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    assert!(
        h.state().status().text.contains("read-only"),
        "{:?}",
        h.state().status()
    );
    assert_eq!(h.state().document().paths.untrusted, vec![skel.clone(), skin.clone()]);
    select(&mut h, "joint1");
    slider(&h, "Rotation X").set_value_accesskit(0.5);
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    h.run();
    assert_eq!(asked.lock().unwrap().as_slice(), ["open", "save tube.skel"]);
    assert_eq!((std::fs::read(&skel).unwrap(), std::fs::read(&skin).unwrap()), before);
}

/// Issue 22: a joint marked as not deforming (a control) gets no weight from Bind Skin; the mark is one edit.
#[test]
fn a_joint_that_does_not_deform_gets_no_weight_from_binding() {
    let mut h = harness(arm(), FakeDialog::new());
    select(&mut h, "elbow");
    h.get_by_label("Deforms").click();
    h.run();
    assert!(!h.state().document().deform[1]);
    run_tool(&mut h, "Bind Skin");
    assert!(
        column(&weights_of(&h), 1).iter().all(|&w| w == 0),
        "{:?}",
        h.state().status()
    );
    // Undo the bind, then the mark.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert!(h.state().document().deform[1], "undo lets it deform again");
    run_tool(&mut h, "Bind Skin");
    assert!(column(&weights_of(&h), 1).iter().any(|&w| w != 0));
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
    slider(&h, "Rotation Z").set_value_accesskit(0.75);
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

/// Issue 23 item 3: files opened by a relative path are remembered by their absolute path, so Recent files works
/// when skinbind is started from another folder.
#[test]
fn recent_files_are_remembered_by_absolute_path() {
    let d = tempfile::Builder::new()
        .prefix(".skinbind-test")
        .tempdir_in(".")
        .unwrap();
    let (skel, skin, _) = write_sample(d.path());
    let relative = |p: &Path| Path::new(".").join(p.strip_prefix(std::env::current_dir().unwrap()).unwrap_or(p));
    let (rel_skel, rel_skin) = (relative(&skel), relative(&skin));
    assert!(rel_skel.is_relative(), "{}", rel_skel.display());
    let mut h = harness(
        arm(),
        FakeDialog::new().with_open(vec![rel_skel.clone(), rel_skin.clone()]),
    );
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    let recent = h.state().settings().recent.clone();
    assert_eq!(recent.len(), 2, "{recent:?}");
    for (r, want) in recent.iter().zip([&skel, &skin]) {
        assert!(r.is_absolute(), "{}", r.display());
        assert_eq!(std::fs::canonicalize(r).unwrap(), std::fs::canonicalize(want).unwrap());
    }
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

/// Issue 23 item 1: opening a file that would replace a document with unsaved changes asks first; Cancel keeps
/// the document, its edits and its history; Open without saving opens.
#[test]
fn opening_over_unsaved_work_asks_first() {
    let d = tempfile::tempdir().unwrap();
    let (skel, _, expected) = write_sample(d.path());
    let dialog = FakeDialog::new()
        .with_open(vec![skel.clone()])
        .with_open(vec![skel.clone()]);
    let mut h = harness(arm(), dialog);
    select(&mut h, "elbow");
    slider(&h, "Rotation Z").set_value_accesskit(0.5);
    h.run();
    assert!(h.state().is_dirty());
    let edited = h.state().document().pose.clone();
    // A skeleton alone is read first (it might fit the skin); the tube's does not fit the arm's skin, so the
    // question comes once it is read.
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    h.get_by_label("Unsaved changes");
    assert!(h.query_by_label_contains("does not fit the skin").is_some());
    h.get_by_label("Cancel").click();
    h.run();
    wait_for_loads(&mut h);
    assert_eq!(h.state().document().pose, edited, "Cancel keeps the document");
    assert!(h.state().is_dirty());
    assert_eq!(h.state().history_names().len(), 1);
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    h.get_by_label("Open without saving").click();
    h.run_steps(3);
    wait_for_loads(&mut h);
    assert_eq!(h.state().document().skeleton, expected.skeleton);
    assert!(!h.state().is_dirty());
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

/// Issue 23 item 4: where no file dialog can open (it answers at once with nothing), File > Open says so and offers
/// a path field, which opens the file typed into it.
#[test]
fn without_a_file_dialog_open_asks_for_a_path() {
    let d = tempfile::tempdir().unwrap();
    let (skel, _, expected) = write_sample(d.path());
    let mut h = harness(arm(), FakeDialog::new());
    menu(&mut h, "File", "Open... Ctrl+O");
    assert!(h.state().status().is_error, "{:?}", h.state().status());
    assert!(
        h.state().status().text.contains("No file dialog"),
        "{:?}",
        h.state().status()
    );
    h.get_by_label("Path").focus();
    h.run();
    h.get_by_label("Path").type_text(&skel.display().to_string());
    h.run();
    h.get_by_label("Open").click();
    h.run_steps(3);
    wait_for_loads(&mut h);
    assert_eq!(
        h.state().document().skeleton,
        expected.skeleton,
        "{:?}",
        h.state().status()
    );
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
    slider(&h, "Rotation Z").set_value_accesskit(0.0);
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

/// Issue 23 item 13: File > Export .glb writes the rig (skeleton, weights, the current clip) as binary glTF, as
/// `convert` does: imported again, it has the same mesh and weights, and its clip poses every joint as the
/// editor's clip does.
#[test]
fn file_export_glb_writes_the_rig_with_its_clip() {
    let doc = Document::sample(SampleKind::Creature, 1500).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("creature.glb");
    let dialog = FakeDialog::new().with_save(out.clone());
    let asked = dialog.asked.clone();
    let mut h = harness(doc, dialog);
    menu(&mut h, "File", "Export .glb...");
    h.run();
    assert_eq!(asked.lock().unwrap().as_slice(), ["save sample creature.glb"]);
    assert!(
        h.state()
            .status()
            .text
            .starts_with("Exported the rig with its animation to "),
        "{}",
        h.state().status().text
    );
    let doc = h.state().document();
    let rig = formats::gltf::load_gltf(&out, None).unwrap().value;
    let skin = doc.skin.as_ref().unwrap();
    assert_eq!(rig.skeleton.len(), doc.skeleton.len());
    assert!(rig.skin.positions() == skin.positions());
    let c = skinbind::eval::compare_weights(rig.skin.weights().unwrap(), skin.weights().unwrap()).unwrap();
    assert!(c.mean_l1 < 1e-5, "{}", c.mean_l1);
    let clip = doc.clip.as_ref().unwrap();
    let back = &rig.animations[0].clip;
    // At the exported frames (at least 30 a second, evenly over the range; between them the export is linear).
    let span = clip.range.1 - clip.range.0;
    let frames = clip.frame_count(30.0, 2) as usize;
    for k in (0..frames).step_by(5) {
        let t = clip.range.0 + span * k as f32 / (frames - 1) as f32;
        let want = skinbind::model::world_from_joint(&doc.skeleton, &skinbind::model::pose_at(&doc.skeleton, clip, t));
        let got = skinbind::model::world_from_joint(
            &rig.skeleton,
            &skinbind::model::pose_at(&rig.skeleton, back, t - clip.range.0),
        );
        for (j, (a, b)) in want.iter().zip(&got).enumerate() {
            assert!(a.abs_diff_eq(*b, 1e-3), "t {t} joint {j}: {a} vs {b}");
        }
    }
}

/// Issue 23 item 1, second half: a skeleton that fits the loaded skin (as many joints) replaces only the skeleton,
/// without asking, as an edit: the skin, its weights and the earlier edits stay, and Ctrl+Z brings the old
/// skeleton back.
#[test]
fn a_skeleton_that_fits_the_skin_replaces_only_the_skeleton_as_an_edit() {
    let d = tempfile::tempdir().unwrap();
    let doc = arm();
    let mut longer = doc.skeleton.clone();
    // The same joints with the elbow further out.
    let mut joints: Vec<skinbind::model::Joint> = longer.joints().to_vec();
    joints[1].offset *= 1.25;
    longer = skinbind::model::Skeleton::new(joints).unwrap();
    let path = d.path().join("longer.skel");
    save_atomic(&path, |w| write_skel(w, &longer)).unwrap();
    let mut h = harness(doc, FakeDialog::new().with_open(vec![path.clone()]));
    select(&mut h, "elbow");
    slider(&h, "Rotation Z").set_value_accesskit(0.5);
    h.run();
    let (skin_before, old_skeleton) = (
        h.state().document().skin.clone().unwrap(),
        h.state().document().skeleton.clone(),
    );
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    assert!(
        h.query_by_label("Unsaved changes").is_none(),
        "no question: nothing is lost"
    );
    let doc = h.state().document();
    assert_eq!(doc.skeleton, longer);
    assert_eq!(doc.paths.skel.as_deref(), Some(path.as_path()));
    assert!(doc.skin.as_ref() == Some(&skin_before), "the skin and its weights stay");
    assert_eq!(
        h.state().history_names(),
        vec![
            "rotate elbow about z".to_string(),
            "replace the skeleton with longer.skel".to_string()
        ]
    );
    assert!(h.state().status().text.starts_with("Replaced the skeleton with "));
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(h.state().document().skeleton, old_skeleton);
    assert!(h.state().document().skin.as_ref() == Some(&skin_before));
}

/// Issue 23 item 9: side panels share at most half the window, so the 3D view keeps at least half: at 1024x700
/// three panels stay, narrower, and History (four would be under 150 points each) gives way until another is
/// turned off; at 640x400 two stay; the status bar says which are hidden.
#[test]
fn the_3d_view_keeps_half_the_window_however_narrow() {
    let mut h = harness_with(arm(), FakeDialog::new(), [1024.0, 700.0]);
    let w = h.state().view_size().x;
    assert!(w >= 512.0 - 12.0, "view {w} of 1024");
    menu(&mut h, "View", "History");
    h.run();
    assert!(h.state().settings().show_history);
    let w = h.state().view_size().x;
    assert!(w >= 512.0 - 12.0, "view {w} of 1024");
    assert_eq!(h.state().hidden_panels(), ["History"]);
    menu(&mut h, "View", "Joint tree");
    h.run();
    assert!(h.state().hidden_panels().is_empty());
    h.get_by_label("History");
    let w = h.state().view_size().x;
    assert!(w >= 512.0 - 12.0, "view {w} of 1024");

    let mut h = harness_with(arm(), FakeDialog::new(), [640.0, 400.0]);
    menu(&mut h, "View", "History");
    h.run();
    let w = h.state().view_size().x;
    assert!(w >= 320.0 - 12.0, "view {w} of 640");
    assert_eq!(h.state().hidden_panels(), ["Weights panel", "History"]);
    assert!(
        h.query_by_label_contains("Weights panel, History hidden: window too narrow")
            .is_some()
    );
}

/// Issue 22 item 3: joints named as controls (the Wolf's IK targets) start with Deforms unticked; the first bind
/// also leaves out the master root outside the mesh, as the command line does, and unticks its box in the same
/// undoable edit. Ticked again by hand, the boxes decide: the root is bound, the bind warns that it looks like a
/// control, and one button unticks it again.
#[test]
fn the_bind_leaves_out_the_master_root_and_a_ticked_box_binds_it() {
    let Some(data) = common::data_dir() else { return };
    let wolf = data.join("gltf/quaternius/Wolf.glb");
    let mut h = harness(arm(), FakeDialog::new().with_open(vec![wolf]));
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    let doc = h.state().document();
    let ik = ["IKFrontRight", "IKFrontLeft", "IKBackRight", "IKBackLeft"];
    for n in ik {
        assert!(!doc.deform[doc.skeleton.find(n)[0]], "{n} starts not deforming");
    }
    let root = doc.skeleton.find("gltf_root")[0];
    assert_eq!(doc.deform.iter().filter(|d| !**d).count(), 4);
    let gets_weight = |h: &Harness<'_, SkinbindApp>, j: usize| {
        let w = h.state().document().skin.as_ref().unwrap().weights().unwrap().clone();
        (0..w.len()).any(|v| w.row(v).0.contains(&(j as u16)))
    };
    run_tool(&mut h, "Bind Skin");
    let doc = h.state().document();
    for n in ik.iter().chain(&["gltf_root"]) {
        assert!(!gets_weight(&h, doc.skeleton.find(n)[0]), "{n} got weight");
    }
    assert!(!doc.deform[root], "the bind unticks the root it left out");
    assert_eq!(h.state().history_names().len(), 1, "{:?}", h.state().history_names());
    assert!(h.query_by_label_contains("Exclude").is_none());
    // Undo takes the weights and the box back together.
    menu(&mut h, "Edit", "Undo Ctrl+Z");
    assert!(h.state().document().deform[root]);
    menu(&mut h, "Edit", "Redo Ctrl+Shift+Z / Ctrl+Y");
    assert!(!h.state().document().deform[root]);
    // Ticked by hand, the root is bound; the bind warns and offers to untick it.
    select(&mut h, "gltf_root");
    h.get_by_label("Deforms").click();
    h.run();
    assert!(h.state().document().deform[root]);
    run_tool(&mut h, "Bind Skin");
    assert!(gets_weight(&h, root), "the ticked root is bound");
    h.get_by_label("Exclude 1 control").click();
    h.run();
    let doc = h.state().document();
    assert!(!doc.deform[root]);
    assert_eq!(doc.deform.iter().filter(|d| !**d).count(), 5);
    let history = h.state().history_names();
    assert_eq!(
        history.last().map(String::as_str),
        Some("stop deforming: gltf_root"),
        "{history:?}"
    );
    assert!(h.query_by_label("Exclude 1 control").is_none());
    assert!(
        h.state()
            .status()
            .text
            .ends_with("no longer deform: Bind Skin again to weight without them")
    );
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
    drag_in_steps(
        &mut h,
        egui::pos2(920.0, 420.0),
        egui::pos2(920.0, 380.0),
        Modifiers::NONE,
        20,
    );
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
