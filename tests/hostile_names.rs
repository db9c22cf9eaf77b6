//! Hostile joint names: a glTF node name holding a newline and `balljoint x {` once injected a joint into the
//! `.skel` that `convert` wrote, and a name with a space gave a `.skel` skinbind itself refused. Names now enter
//! the model under one rule (`model::names`); these tests carry such names through every writer and back.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::cli::run;
use serde_json::{Value, json};
use skinbind::app::document::Document;
use skinbind::app::session::{Origin, SessionFile, ViewState};
use skinbind::formats::{self, glb, gltf::load_gltf};

/// The names a stranger's model gives its three joints: an injection, a space, and the name the space's
/// replacement would take.
const HOSTILE: [&str; 3] = ["hip\n}\nballjoint x {", "left arm", "left_arm"];

/// A one-triangle model skinned to three joints (a root and two children) named [`HOSTILE`].
fn model(dir: &Path) -> std::path::PathBuf {
    let mut bin = Vec::new();
    for v in [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    bin.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]);
    for _ in 0..3 {
        for w in [1.0f32, 0.0, 0.0, 0.0] {
            bin.extend_from_slice(&w.to_le_bytes());
        }
    }
    for i in [0u16, 1, 2, 0] {
        bin.extend_from_slice(&i.to_le_bytes());
    }
    for t in [0.0f32, -1.0, 1.0] {
        bin.extend_from_slice(&bytes(glam::Mat4::from_translation(glam::Vec3::new(-t, 0.0, 0.0))));
    }
    assert_eq!(bin.len(), 104 + 192);
    std::fs::write(dir.join("buf.bin"), &bin).unwrap();
    let view = |offset: usize, length: usize| json!({ "buffer": 0, "byteOffset": offset, "byteLength": length });
    let gltf: Value = json!({
        "asset": { "version": "2.0" },
        "scene": 0,
        "scenes": [{ "nodes": [0, 3] }],
        "nodes": [
            { "name": HOSTILE[0], "children": [1, 2] },
            { "name": HOSTILE[1], "translation": [-1, 0, 0] },
            { "name": HOSTILE[2], "translation": [1, 0, 0] },
            { "mesh": 0, "skin": 0 }
        ],
        "skins": [{ "joints": [0, 1, 2], "inverseBindMatrices": 4 }],
        "meshes": [{ "primitives": [{ "attributes": { "POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2 }, "indices": 3 }] }],
        "buffers": [{ "uri": "buf.bin", "byteLength": bin.len() }],
        "bufferViews": [view(0, 36), view(36, 12), view(48, 48), view(96, 6), view(104, 192)],
        "accessors": [
            { "bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0] },
            { "bufferView": 1, "componentType": 5121, "count": 3, "type": "VEC4" },
            { "bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4" },
            { "bufferView": 3, "componentType": 5123, "count": 3, "type": "SCALAR" },
            { "bufferView": 4, "componentType": 5126, "count": 3, "type": "MAT4" }
        ]
    });
    let path = dir.join("model.gltf");
    std::fs::write(&path, serde_json::to_vec(&gltf).unwrap()).unwrap();
    path
}

fn bytes(m: glam::Mat4) -> Vec<u8> {
    m.to_cols_array().iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn names(skel: &skinbind::model::Skeleton) -> Vec<String> {
    skel.joints().iter().map(|j| j.name.clone()).collect()
}

/// What the names rule makes of [`HOSTILE`]: each character a `.skel` splits at becomes `_`, and the name a
/// replacement would share with another joint gets Blender's `.001`.
const KEPT: [&str; 3] = ["hip___balljoint_x__", "left_arm.001", "left_arm"];

#[test]
fn hostile_gltf_names_are_read_under_the_names_rule_with_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let parsed = load_gltf(&model(d.path()), None).unwrap();
    assert_eq!(names(&parsed.value.skeleton), KEPT);
    let warning = parsed.warnings.iter().find(|w| w.message.contains("names")).unwrap();
    assert!(
        warning
            .message
            .contains("read `hip\\n}\\nballjoint x {` as `hip___balljoint_x__`, `left arm` as `left_arm.001`"),
        "{}",
        warning.message
    );
}

#[test]
fn convert_writes_a_skel_of_the_same_joints_as_its_skin() {
    let d = tempfile::tempdir().unwrap();
    model(d.path());
    let o = run(d.path(), &["convert", "model.gltf", "-o", "out.skel", "-o", "out.skin"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr.contains("joint names are not ones every writer keeps"),
        "{}",
        o.stderr
    );
    let skel = formats::load_skel(&d.path().join("out.skel")).unwrap();
    assert!(skel.warnings.is_empty(), "{:?}", skel.warnings);
    assert_eq!(names(&skel.value), KEPT, "no joint injected, none lost");
    let skin = formats::load_skin(&d.path().join("out.skin"), Some(skel.value.len())).unwrap();
    assert_eq!(skin.value.bindings().unwrap().len(), 3);
    // And `info` reads the pair it wrote.
    let o = run(d.path(), &["info", "out.skel", "out.skin"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn names_round_trip_through_glb_and_sessions_unchanged() {
    let d = tempfile::tempdir().unwrap();
    let rig = load_gltf(&model(d.path()), None).unwrap().value;
    let bytes = glb::write_glb(&rig.skeleton, &rig.skin, None, glb::GlbOptions::default()).unwrap();
    let path = d.path().join("again.glb");
    std::fs::write(&path, bytes).unwrap();
    let again = load_gltf(&path, None).unwrap();
    assert_eq!(names(&again.value.skeleton), KEPT);
    assert!(
        again.warnings.iter().all(|w| !w.message.contains("names")),
        "{:?}",
        again.warnings
    );

    let doc = Document::new("hostile", rig.skeleton, Some(rig.skin), None);
    let session = d.path().join("s.skinbind");
    let file = SessionFile::capture(&doc, ViewState::default()).unwrap();
    file.save(&session).unwrap();
    let (back, _) = SessionFile::load(&session)
        .unwrap()
        .restore(&session, Origin::Opened)
        .unwrap();
    assert_eq!(names(&back.skeleton), KEPT);
}
