//! Files in the editor window, driven through egui_kittest by accessibility label (no display, GPU or desktop
//! dialog): opening (dialog, drop, typed path), loading, saving, sessions, crash recovery, recent files, quitting
//! and .glb export.
#![allow(clippy::unwrap_used)]

mod common;

use common::gui::{arm, bits, harness, menu, run_tool, select, set_rotation, wait_for_loads, weights_of};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use skinbind::app::FakeDialog;
use skinbind::app::document::Document;
use skinbind::atomic::save_atomic;
use skinbind::formats::{self, skel::write_skel, skin::write_skin};
use skinbind::sample::SampleKind;

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
    set_rotation(&h, "Rotation Z", 0.5);
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
fn a_session_saves_and_reopens_the_rig_pose_and_view() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("work.skinbind");
    let dialog = FakeDialog::new().with_save(file.clone()).with_open(vec![file.clone()]);
    let mut h = harness(arm(), dialog);
    select(&mut h, "elbow");
    set_rotation(&h, "Rotation Z", 0.75);
    h.run();
    let posed = bits(&h.state().document().pose);
    menu(&mut h, "File", "Save Session As...");
    assert!(file.is_file(), "{:?}", h.state().status());
    assert!(!h.state().is_dirty());
    // Change the pose, then open the session again: the saved pose, skeleton and skin come back.
    set_rotation(&h, "Rotation Z", 0.1);
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
        set_rotation(&h, "Rotation Z", 1.5);
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
    set_rotation(&h, "Rotation X", 0.5);
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    h.run();
    assert_eq!(asked.lock().unwrap().as_slice(), ["open", "save tube.skel"]);
    assert_eq!((std::fs::read(&skel).unwrap(), std::fs::read(&skin).unwrap()), before);
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
    set_rotation(&h, "Rotation Z", 0.5);
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
    // Issue 43: the field has the focus already, and once the file opens the red line is gone.
    h.run();
    assert!(
        h.get_by_label("Path").is_focused(),
        "the typed-path field takes the focus"
    );
    h.get_by_label("Path").type_text(&skel.display().to_string());
    h.run();
    // Enter opens, as the Open button does.
    h.key_press(Key::Enter);
    h.run_steps(3);
    wait_for_loads(&mut h);
    assert_eq!(
        h.state().document().skeleton,
        expected.skeleton,
        "{:?}",
        h.state().status()
    );
    let status = h.state().status();
    assert!(!status.is_error && status.text.starts_with("Opened "), "{status:?}");
}

/// Issue 43: an OBJ mesh opened alone asks which skeleton it goes onto: "Keep the skeleton" puts it on the current
/// one (the status bar says so, and how to bind it), "New skeleton" starts one root joint in it, in the Skeleton
/// mode; nothing is kept silently.
#[test]
fn an_obj_opened_alone_asks_which_skeleton_it_goes_onto() {
    let d = tempfile::tempdir().unwrap();
    let doc = arm();
    let skin = doc.skin.clone().unwrap();
    let obj = d.path().join("body.obj");
    save_atomic(&obj, |w| {
        formats::obj::write_obj(w, skin.positions(), skin.normals(), None, skin.triangles())
    })
    .unwrap();
    let joints = doc.skeleton.len();
    let dialog = FakeDialog::new()
        .with_open(vec![obj.clone()])
        .with_open(vec![obj.clone()]);
    let mut h = harness(doc, dialog);
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    assert!(h.state().is_asking_about_mesh());
    h.get_by_label("Keep the skeleton").click();
    h.run();
    assert!(!h.state().is_asking_about_mesh());
    assert_eq!(h.state().document().skeleton.len(), joints);
    let text = &h.state().status().text;
    assert!(
        text.contains(&format!(
            "as the mesh of the current skeleton, sample arm ({joints} joints), without weights"
        )),
        "{text}"
    );
    assert!(
        text.contains("Bind Skin (Weights panel)") && text.contains("File > New skeleton from template"),
        "{text}"
    );
    // Again, for a new skeleton: one root joint, in the Skeleton mode.
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    h.get_by_label("New skeleton").click();
    h.run();
    assert_eq!(h.state().document().skeleton.len(), 1, "{:?}", h.state().status());
    assert_eq!(h.state().viewport().tool, skinbind::app::Tool::Skeleton);
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
    // The same joints where they were, the elbow renamed and its limits opened.
    let mut joints: Vec<skinbind::model::Joint> = longer.joints().to_vec();
    joints[1].name = "forearm".into();
    joints[1].limits = [None; 3];
    longer = skinbind::model::Skeleton::new(joints).unwrap();
    let path = d.path().join("longer.skel");
    save_atomic(&path, |w| write_skel(w, &longer)).unwrap();
    let mut h = harness(doc, FakeDialog::new().with_open(vec![path.clone()]));
    select(&mut h, "elbow");
    set_rotation(&h, "Rotation Z", 0.5);
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
    let status = &h.state().status().text;
    assert!(status.starts_with("Replaced the skeleton with "), "{status}");
    assert!(
        status.contains("elbow is now forearm"),
        "the renamed joint is named: {status}"
    );
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(h.state().document().skeleton, old_skeleton);
    assert!(h.state().document().skin.as_ref() == Some(&skin_before));
}

/// Issue 42 and 43: an FBX opens from File > Open like a .glb (skeleton, skin, every stack a clip, the first
/// playing), and File > Export .glb keeps every clip by name with its joint moves (it kept the current clip
/// alone, named `clip`).
#[test]
fn an_fbx_opens_and_exports_to_glb_with_every_clip() {
    let d = tempfile::tempdir().unwrap();
    let small = d.path().join("small.fbx");
    std::fs::write(&small, common::fbx_build::small_rig()).unwrap();
    let mut models = vec![(small, 1)];
    if let Some(data) = common::data_dir() {
        models.push((data.join("fbx/Smooth_Male_Casual.fbx"), 11));
    }
    for (model, clips) in models {
        let out = d.path().join("out.glb");
        let dialog = FakeDialog::new().with_open(vec![model.clone()]).with_save(out.clone());
        let mut h = harness(arm(), dialog);
        menu(&mut h, "File", "Open... Ctrl+O");
        wait_for_loads(&mut h);
        assert!(!h.state().status().is_error, "{:?}", h.state().status());
        let doc = h.state().document();
        assert_eq!(doc.clips.len(), clips, "{}", model.display());
        assert!(doc.clip.is_some(), "the first clip plays");
        let names: Vec<String> = doc.clips.iter().map(|c| c.name.clone()).collect();
        let moves: Vec<usize> = doc.clips.iter().map(|c| c.clip.translations.len()).collect();
        menu(&mut h, "File", "Export .glb...");
        h.run();
        let back = formats::gltf::load_gltf(&out, None).unwrap().value;
        let got: Vec<String> = back.animations.iter().map(|c| c.name.clone()).collect();
        assert_eq!(got, names, "{}", model.display());
        let got_moves: Vec<usize> = back.animations.iter().map(|c| c.clip.translations.len()).collect();
        assert_eq!(got_moves, moves, "{}", model.display());
        assert!(
            moves.iter().any(|&m| m > 0),
            "{}: no clip moves a joint",
            model.display()
        );
    }
}

/// The creature's skeleton with its legs in the other order (hip_r's chain before hip_l's), as a new skeleton
/// and the old joint -> new joint map.
fn legs_swapped(old: &skinbind::model::Skeleton) -> (skinbind::model::Skeleton, Vec<usize>) {
    let (l, r) = (old.find("hip_l")[0], old.find("hip_r")[0]);
    let (n, len) = (old.len(), r - l);
    assert_eq!(
        old.len() - r,
        len,
        "the right leg ends the skeleton and is as long as the left"
    );
    let order: Vec<usize> = (0..l).chain(r..n).chain(l..r).collect();
    let mut to_new = vec![0; n];
    for (new, &old) in order.iter().enumerate() {
        to_new[old] = new;
    }
    let joints = order
        .iter()
        .map(|&o| {
            let mut j = old.joints()[o].clone();
            j.parent = j.parent.map(|p| to_new[p]);
            j
        })
        .collect();
    (skinbind::model::Skeleton::new(joints).unwrap(), to_new)
}

/// Issue 43 item 3: a skeleton with as many joints as the skin but its legs at other indices is not swapped in
/// silently: the editor asks, "Remap by name" gives each joint's weights to the joint of the same name (one
/// undoable edit, named), and "Keep joint numbers" leaves them on their numbers; Cancel opens nothing.
#[test]
fn a_skeleton_whose_joints_sit_elsewhere_asks_and_remaps_the_weights_by_name() {
    let d = tempfile::tempdir().unwrap();
    let doc = Document::sample(skinbind::sample::SampleKind::Creature, 1500).unwrap();
    let (swapped, to_new) = legs_swapped(&doc.skeleton);
    let path = d.path().join("swapped.skel");
    save_atomic(&path, |w| write_skel(w, &swapped)).unwrap();
    let old_weights = doc.skin.as_ref().unwrap().weights().unwrap().clone();
    let old_skeleton = doc.skeleton.clone();
    let dialog = (0..3).fold(FakeDialog::new(), |d, _| d.with_open(vec![path.clone()]));
    let mut h = harness(doc, dialog);
    let open = |h: &mut egui_kittest::Harness<'_, skinbind::app::SkinbindApp>| {
        menu(h, "File", "Open... Ctrl+O");
        wait_for_loads(h);
        assert!(h.state().is_asking_about_skeleton(), "{:?}", h.state().status());
        let said =
            "8 of 19 joints do not sit where the skin's bindings put them (hip_r, knee_r, ankle_r, toe_r and 4 more)";
        let by = egui_kittest::kittest::By::new().include_labels().label_contains(said);
        assert_eq!(h.query_all(by).count(), 1, "the question says which joints: {said}");
    };
    // Cancel: nothing changes.
    open(&mut h);
    h.get_by_label("Cancel").click();
    h.run();
    assert!(!h.state().is_asking_about_skeleton());
    assert_eq!(h.state().document().skeleton, old_skeleton);
    assert!(h.state().history_names().is_empty());
    // Remap by name: every weight on the joint of its name.
    open(&mut h);
    h.get_by_label("Remap by name").click();
    h.run();
    assert_eq!(h.state().document().skeleton, swapped);
    let w = weights_of(&h);
    let mut row = Vec::new();
    let mut expected = Vec::new();
    for v in 0..w.len() {
        row.clear();
        expected.clear();
        w.row_pairs(v, &mut row);
        old_weights.row_pairs(v, &mut expected);
        for e in expected.iter_mut() {
            e.0 = to_new[e.0 as usize] as u16;
        }
        row.sort_by_key(|p| p.0);
        expected.sort_by_key(|p| p.0);
        assert_eq!(row, expected, "vertex {v}");
    }
    assert_eq!(
        h.state().history_names(),
        vec!["replace the skeleton with swapped.skel, weights renumbered".to_string()]
    );
    assert!(h.state().status().text.contains("the weights follow the joints' names"));
    // Undo puts the old skeleton and weights back.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run();
    assert_eq!(h.state().document().skeleton, old_skeleton);
    assert!(weights_of(&h) == old_weights);
    // Keep joint numbers: the skeleton replaced, the weights as they were.
    open(&mut h);
    h.get_by_label("Keep joint numbers").click();
    h.run();
    assert_eq!(h.state().document().skeleton, swapped);
    assert!(weights_of(&h) == old_weights);
}

/// Issue 43: Save on a rig opened from a .glb proposes a .skel beside the model, under its name, not `rig.skel`
/// in whatever folder the editor started in.
#[test]
fn save_on_a_rig_from_a_glb_proposes_a_skel_beside_the_model() {
    use common::gltf_build::{Spec, glb, model};
    let d = tempfile::tempdir().unwrap();
    let (json, bin) = model(&Spec {
        joints: 3,
        seconds: 1.0,
    });
    let path = d.path().join("walker.glb");
    std::fs::write(&path, glb(&json, &bin)).unwrap();
    let dialog = FakeDialog::new().with_open(vec![path.clone()]);
    let asked = dialog.asked.clone();
    let mut h = harness(arm(), dialog);
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    assert_eq!(
        h.state().document().paths.gltf.as_deref(),
        Some(path.as_path()),
        "{:?}",
        h.state().status()
    );
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    h.run();
    let beside = d.path().join("walker.skel");
    assert_eq!(
        asked.lock().unwrap().as_slice(),
        ["open".to_string(), format!("save {}", beside.display())]
    );
}

/// Issue 43: Save over the course's wasp.skel keeps its layout (six-decimal columns, its own field order and
/// indents): posing one joint and making that the file pose changes one line of the file.
#[test]
fn saving_the_wasp_after_one_pose_change_changes_one_line_of_its_skel() {
    let Some(src) = common::cse169("wasp.skel") else { return };
    let d = tempfile::tempdir().unwrap();
    let (skel, skin) = (d.path().join("wasp.skel"), d.path().join("wasp.skin"));
    std::fs::copy(&src, &skel).unwrap();
    std::fs::copy(src.with_extension("skin"), &skin).unwrap();
    let before = std::fs::read_to_string(&skel).unwrap();
    let mut h = harness(arm(), FakeDialog::new().with_open(vec![skel.clone(), skin.clone()]));
    menu(&mut h, "File", "Open... Ctrl+O");
    wait_for_loads(&mut h);
    select(&mut h, "head");
    set_rotation(&h, "Rotation X", 0.25);
    h.run();
    menu(&mut h, "Edit", "Set File Pose from Current Pose");
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    h.run();
    assert!(!h.state().is_dirty(), "{:?}", h.state().status());
    let after = std::fs::read_to_string(&skel).unwrap();
    let changed: Vec<(&str, &str)> = before.lines().zip(after.lines()).filter(|(a, b)| a != b).collect();
    assert_eq!(before.lines().count(), after.lines().count());
    assert_eq!(
        changed,
        vec![(
            "    pose       0.000000     0.000000     0.000000",
            "    pose       0.250000     0.000000     0.000000"
        )]
    );
}
