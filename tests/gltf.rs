//! glTF import on the shared models: counts from SOURCES.md, the joint tree's rest pose against the bindings,
//! weights compared with themselves.
#![allow(clippy::unwrap_used)]

mod common;

use skinbind::formats::gltf::load_gltf;
use skinbind::model::{Pose, world_from_joint};

fn gltf(name: &str) -> Option<std::path::PathBuf> {
    common::data_dir().map(|d| d.join("gltf").join(name))
}

#[test]
fn shared_models_import_with_the_documented_counts() {
    for (file, vertices, joints) in [
        ("CesiumMan.glb", 3273, 19),
        ("RiggedFigure.glb", 370, 19),
        ("RiggedSimple.blender-reexport.glb", 960, 4),
        ("SimpleSkin.gltf", 10, 2),
    ] {
        let Some(path) = gltf(file) else { return };
        let rig = load_gltf(&path, None).unwrap();
        let (skel, skin) = (&rig.value.skeleton, &rig.value.skin);
        assert_eq!((skin.vertex_count(), skel.len()), (vertices, joints), "{file}");
        let w = skin.weights().unwrap();
        assert_eq!(w.unweighted().count(), 0, "{file}");
        let c = skinbind::eval::compare_weights(w, w).unwrap();
        assert_eq!((c.mean_l1, c.dominant_agreement), (0.0, 1.0), "{file}");
        assert_eq!(skin.bindings().unwrap().len(), joints);
        assert!(rig.warnings.is_empty(), "{file}: {:?}", rig.warnings);
    }
}

/// The joints' rest transforms become offsets and pose angles; for these models the rest pose is the bind
/// pose, so forward kinematics of the file pose must give the bindings (the inverses of the inverse bind
/// matrices): two independent routes to the same matrices.
#[test]
fn rest_pose_reproduces_the_bindings() {
    for file in [
        "CesiumMan.glb",
        "RiggedFigure.glb",
        "RiggedSimple.blender-reexport.glb",
        "SimpleSkin.gltf",
    ] {
        let Some(path) = gltf(file) else { return };
        let rig = load_gltf(&path, None).unwrap().value;
        let world = world_from_joint(&rig.skeleton, &Pose::from_file(&rig.skeleton));
        for (j, (a, b)) in world.iter().zip(rig.skin.bindings().unwrap()).enumerate() {
            let d = (*a - *b).to_cols_array().iter().fold(0.0f32, |m, x| m.max(x.abs()));
            assert!(
                d < 1e-3,
                "{file} joint {j} `{}`: FK {a} vs binding {b}",
                rig.skeleton.joints()[j].name
            );
        }
    }
}

#[test]
fn robot_expressive_takes_one_of_two_skins_and_says_what_it_left() {
    let Some(path) = gltf("RobotExpressive.glb") else {
        return;
    };
    let rig = load_gltf(&path, None).unwrap();
    assert_eq!(
        (rig.value.skins, rig.value.skin_index, rig.value.skeleton.len()),
        (2, 0, 43)
    );
    let messages: Vec<&str> = rig.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        messages.iter().any(|m| m.starts_with("the file has 2 skins; skin 0")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("did not sum to 1") && m.ends_with("normalised")),
        "{messages:?}"
    );
    let w = rig.value.skin.weights().unwrap();
    for v in 0..w.len() {
        let s: f32 = w.row(v).1.iter().sum();
        assert!((s - 1.0).abs() < 1e-3, "vertex {v} sums to {s}");
    }
    let second = load_gltf(&path, Some(1)).unwrap().value;
    assert_eq!((second.skin_index, second.skeleton.len()), (1, 43));
    let err = load_gltf(&path, Some(2)).unwrap_err().to_string();
    assert!(err.ends_with("has 2 skins; there is no skin 2"), "{err}");
}

#[test]
fn bad_files_are_errors_not_panics() {
    let d = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        ("junk.glb", b"glTF\x02\x00\x00\x00garbage", "not a valid glTF file"),
        (
            "empty.gltf",
            br#"{"asset":{"version":"2.0"}}"#,
            "has no skin (no skinned mesh to import)",
        ),
        ("text.gltf", b"positions 3 {", "not a valid glTF file"),
        (
            "nobuf.gltf",
            br#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":8,"uri":"missing.bin"}]}"#,
            "missing.bin",
        ),
    ];
    for (name, bytes, want) in cases {
        let p = d.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let err = load_gltf(&p, None).unwrap_err().to_string();
        assert!(err.contains(want), "{name}: {err}");
        assert!(
            err.starts_with(&p.display().to_string()),
            "{name}: the message names the file: {err}"
        );
    }
}
