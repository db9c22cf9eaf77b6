//! The `skinbind` command's help, usage errors (exit 2), `info` in text and JSON (skeletons, skins, glTF
//! models), input errors (exit 1) with their place, warnings, and every shared file through every command.
#![allow(clippy::unwrap_used)]

mod common;

use common::cli::{SKIN, fixture, run};

use std::path::PathBuf;
use std::process::Command;

#[test]
fn help_lists_the_commands_and_succeeds() {
    let d = fixture();
    let o = run(d.path(), &["--help"]);
    assert_eq!(o.code, 0);
    assert!(o.stdout.contains("Usage: skinbind [COMMAND]"), "{}", o.stdout);
    for cmd in ["open", "info", "pose", "convert", "sample"] {
        assert!(o.stdout.contains(&format!("  {cmd} ")), "help lists {cmd}");
    }
}

/// No subcommand opens the editor window (it used to print the help). Without a display there is no window:
/// the command must say so and fail, not hang or panic.
#[test]
fn no_subcommand_opens_the_editor_and_fails_cleanly_without_a_display() {
    let d = fixture();
    for args in [&[][..], &["open", "rig.skel"][..]] {
        let o = Command::new(env!("CARGO_BIN_EXE_skinbind"))
            .current_dir(d.path())
            .args(args)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("WAYLAND_SOCKET")
            .output()
            .unwrap();
        let stderr = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("cannot open the editor window"), "{args:?}: {stderr}");
    }
}

#[test]
fn usage_errors_exit_2() {
    let d = fixture();
    for args in [
        &["bogus"][..],
        &["info"],
        &["pose", "--skel", "rig.skel"],
        &["sample", "--kind", "spider", "-o", "x"],
        &["sample", "--vertices", "10", "-o", "x"],
        &["convert", "rig.skin", "-o", "out.png"],
        &["convert", "rig.skin", "-o", "out.skel"],
        &["info", "notes.txt"],
    ] {
        let o = run(d.path(), args);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(!o.stderr.is_empty());
    }
    let o = run(d.path(), &["convert", "rig.skin", "-o", "out.skel"]);
    assert_eq!(o.stderr, "skinbind: out.skel: needs a .skel input\n");
}

#[test]
fn info_prints_the_documented_text() {
    let d = fixture();
    let o = run(d.path(), &["info", "rig.skel", "rig.skin"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        o.stdout,
        "rig.skel: skeleton
  joints: 2
  depth: 1
  duplicate names: 0
  empty names: 0
  pivot bounds (file pose): (0 0 0) .. (1 0 0)
  tree:
    0 root
      1 arm
  warnings: 0
rig.skin: skin
  vertices: 3
  triangles: 1
  normals: computed
  texcoords: no
  materials: none
  bindings: none
  weighted vertices: 3
  unweighted vertices: 0
  influences per vertex: 1: 2, 2: 1
  weight sums: 1 .. 1
  joints used: 2 (highest index 1)
  bounds: (0 0 0) .. (2 0 0)
  warnings: 0
"
    );
    assert_eq!(o.stderr, "");
}

#[test]
fn info_json_has_the_documented_fields() {
    let d = fixture();
    let o = run(d.path(), &["info", "--json", "rig.skin", "rig.skel"]);
    assert_eq!(o.code, 0);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let skin = &v[0];
    assert_eq!(skin["path"], "rig.skin");
    assert_eq!(skin["kind"], "skin");
    assert_eq!(skin["vertices"], 3);
    assert_eq!(skin["influences_histogram"]["2"], 1);
    assert_eq!(skin["normals"], "computed");
    assert_eq!(skin["bindings"], serde_json::Value::Null);
    assert_eq!(skin["warnings"], serde_json::json!([]));
    let skel = &v[1];
    assert_eq!(skel["kind"], "skeleton");
    assert_eq!(
        skel["tree"][1],
        serde_json::json!({"index": 1, "name": "arm", "depth": 1, "parent": 0})
    );
}

#[test]
fn bad_input_exits_1_with_path_line_column() {
    let d = fixture();
    std::fs::write(d.path().join("bad.skin"), SKIN.replace("positions 3", "positions 4")).unwrap();
    let o = run(d.path(), &["info", "bad.skin"]);
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        "bad.skin:5:1: expected 4 entries in `positions` (the declared count), found `}` after 3\n"
    );
    assert_eq!(o.stdout, "");
    // A skin whose weights use a joint the skeleton lacks, checked where it is written.
    std::fs::write(d.path().join("one.skel"), "balljoint root {\n}\n").unwrap();
    let o = run(
        d.path(),
        &["pose", "--skel", "one.skel", "--skin", "rig.skin", "-o", "out.obj"],
    );
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        "rig.skin:8:11: expected a joint index below 1 (the skeleton's joint count), found `1`\n"
    );
    assert!(!d.path().join("out.obj").exists(), "nothing written on failure");
    let o = run(d.path(), &["info", "missing.skel"]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.starts_with("missing.skel: "), "{}", o.stderr);
}

#[test]
fn warnings_go_to_stderr_with_their_place() {
    let d = fixture();
    std::fs::write(d.path().join("typo.skel"), "balljoint root {\n\tpos 0 0 1\n}\n").unwrap();
    let o = run(d.path(), &["info", "typo.skel"]);
    assert_eq!(o.code, 0);
    assert_eq!(
        o.stderr,
        "typo.skel:2:2: warning: unknown keyword `pos`; its line is skipped\n"
    );
    assert!(o.stdout.ends_with("  warnings: 1\n"));
}

/// Every shared CSE169 file runs through `info`, `convert` and (for the wasp and tube rigs) `pose`.
#[test]
fn shared_files_run_through_every_command() {
    let Some(dir) = common::data_dir() else { return };
    let dir: PathBuf = dir.join("cse169");
    let out = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let Some(ext) = p.extension().and_then(|e| e.to_str()) else {
            continue;
        };
        if !["skel", "skin", "anim", "morph"].contains(&ext) {
            continue;
        }
        let o = run(&dir, &["info", &name]);
        assert_eq!(o.code, 0, "info {name}: {}", o.stderr);
        let target = out.path().join(&name);
        let o = run(&dir, &["convert", &name, "-o", target.to_str().unwrap()]);
        assert_eq!(o.code, 0, "convert {name}: {}", o.stderr);
    }
    let obj = out.path().join("w.obj");
    for (skel, skin, anim) in [
        ("wasp.skel", "wasp.skin", Some("wasp_walk.anim")),
        ("wasp2.skel", "wasp2.skin", Some("wasp2_walk.anim")),
        ("tube.skel", "tube.skin", None),
        ("tube.skel", "tube_smooth.skin", None),
        ("head.skel", "head.skin", None),
    ] {
        let mut args = vec!["pose", "--skel", skel, "--skin", skin, "-o", obj.to_str().unwrap()];
        if let Some(a) = anim {
            args.extend(["--anim", a, "--time", "1.25"]);
        }
        let o = run(&dir, &args);
        assert_eq!(o.code, 0, "pose {skin}: {}", o.stderr);
        let text = std::fs::read_to_string(&obj).unwrap();
        assert!(text.lines().filter(|l| l.starts_with("v ")).count() > 0);
    }
    let o = run(
        &dir,
        &[
            "pose",
            "--skel",
            "head.skel",
            "--skin",
            "head.skin",
            "--morph",
            "head1.morph=0.5",
            "-o",
            obj.to_str().unwrap(),
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
}

/// Issue 23 item 14: `info` describes a glTF model (what the file holds, the skeleton and skin the import makes,
/// its clips), in text and JSON, and what the import drops goes to stderr as warnings.
#[test]
fn info_describes_gltf_models() {
    let Some(data) = common::data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let simple = data.join("gltf/SimpleSkin.gltf");
    let o = run(dir.path(), &["info", simple.to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let expected = format!(
        "{}: glTF model
  nodes: 3
  meshes: 1 (1 skinned mesh nodes)
  materials: 0
  skins: 1
    0 ``: 2 joints
  animations: 1
    0 ``: 1 channels, ends at 5.5 s
  imported skeleton (skin 0):
    joints: 2
    depth: 1
    duplicate names: 0
    empty names: 0
    pivot bounds (file pose): (0 1 0) .. (0 1 0)
    tree:
      0 joint1
        1 joint2
  imported skin (skin 0):
    vertices: 10
    triangles: 8
    normals: computed
    texcoords: no
    materials: none
    bindings: 2
    weighted vertices: 10
    unweighted vertices: 0
    influences per vertex: 1: 4, 2: 6
    weight sums: 1 .. 1
    joints used: 2 (highest index 1)
    bounds: (-0.5 0 0) .. (0.5 2 0)
  clips: 1
    `animation 0`: 0 .. 5.5 s, 12 keys, 1494 samples
  warnings: 0
",
        simple.display()
    );
    assert_eq!(o.stdout, expected);
    assert_eq!(o.stderr, "");

    let robot = data.join("gltf/RobotExpressive.glb");
    let o = run(dir.path(), &["info", "--json", robot.to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stderr, "");
    let j: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let r = &j[0];
    assert_eq!(r["kind"], "gltf");
    assert_eq!(r["contents"]["skins"].as_array().unwrap().len(), 2);
    assert_eq!(r["contents"]["animations"].as_array().unwrap().len(), 14);
    assert_eq!(r["imported_skin"], 0);
    assert_eq!(r["skeleton"]["kind"], "skeleton");
    assert_eq!(r["skin"]["kind"], "skin");
    assert_eq!(r["clips"].as_array().unwrap().len(), 14);
    let warnings: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert!(warnings.iter().any(|w| w.contains("skins; skin 0")), "{warnings:?}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("mesh nodes without skin 0 were not imported")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("morph target weights were not imported")),
        "{warnings:?}"
    );
}

/// Issue 43: `info` writes a number within 1e-4 of zero in scientific notation (a pivot at 3.6e-24, not
/// 0.0000000000000000000000036), and a glTF model's clips from their first key to their last.
#[test]
fn info_writes_tiny_numbers_in_scientific_notation_and_clips_to_their_last_key() {
    let d = common::cli::fixture();
    std::fs::write(
        d.path().join("tiny.skel"),
        "balljoint root {\n\toffset 0 0.0000000000000000000000036 0\n}\n",
    )
    .unwrap();
    let o = common::cli::run(d.path(), &["info", "tiny.skel"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("pivot bounds (file pose): (0 3.6e-24 0) .. (0 3.6e-24 0)"),
        "{}",
        o.stdout
    );
    // A clip whose keys run from 0.5 s to 2 s: its range says so (it plays from 0 for 1.5 s).
    let (json, bin) = common::gltf_build::model(&common::gltf_build::Spec {
        joints: 2,
        seconds: 2.0,
    });
    let mut bin = bin;
    let times = bin.len() - 8 - 32;
    bin[times..times + 4].copy_from_slice(&0.5f32.to_le_bytes());
    let json = common::gltf_build::with(json, "/accessors/5/min", serde_json::json!([0.5]));
    std::fs::write(d.path().join("late.glb"), common::gltf_build::glb(&json, &bin)).unwrap();
    let o = common::cli::run(d.path(), &["info", "late.glb"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("clips: 1\n    `long`: 0.5 .. 2 s,"), "{}", o.stdout);
}
