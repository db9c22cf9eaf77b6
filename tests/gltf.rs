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
        // Nothing dropped but materials and what a clip does that the model cannot hold (CesiumMan's walk moves
        // two offsets).
        let other: Vec<_> = rig
            .warnings
            .iter()
            .filter(|w| !w.message.starts_with("animation `") && !w.message.contains("materials (and their textures)"))
            .collect();
        assert!(other.is_empty(), "{file}: {other:?}");
    }
}

/// The joints' rest transforms become offsets and pose angles; for these models the rest pose is the bind
/// pose, so forward kinematics of the file pose must give the bindings (the inverses of the inverse bind
/// matrices, placed as a viewer shows the model and without scale): two independent routes to the same
/// matrices. The scaled armatures (Fox 0.0254, Trex 3) check that offsets are in the scene's units.
#[test]
fn rest_pose_reproduces_the_bindings() {
    for file in [
        "CesiumMan.glb",
        "RiggedFigure.glb",
        "RiggedSimple.blender-reexport.glb",
        "SimpleSkin.gltf",
        "Fox.glb",
        "quaternius/Smooth_Male_Casual.glb",
        "quaternius/Female_Casual.glb",
        "quaternius/Trex.glb",
        "quaternius/Frog.glb",
    ] {
        let Some(path) = gltf(file) else { return };
        let rig = load_gltf(&path, None).unwrap().value;
        let world = world_from_joint(&rig.skeleton, &Pose::from_file(&rig.skeleton));
        let (lo, hi) = skinbind::model::skin::bounds(rig.skin.positions()).unwrap();
        let size = (hi - lo).length().max(1.0);
        // The Fox's rest pose turns a few joints by up to 2 degrees from its bind pose: there, pivots only. (The
        // Wolf's rest pose is not its bind pose at all.)
        let pivots_only = file == "Fox.glb";
        for (j, (a, b)) in world.iter().zip(rig.skin.bindings().unwrap()).enumerate() {
            let diff = if pivots_only {
                (a.w_axis - b.w_axis).to_array().to_vec()
            } else {
                (*a - *b).to_cols_array().to_vec()
            };
            let d = diff.iter().fold(0.0f32, |m, x| m.max(x.abs()));
            assert!(
                d < 1e-3 * size,
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

/// Rows limited to the 4 strongest influences and renormalised, as glTF export writes them.
fn four(w: &skinbind::model::Weights, v: usize) -> Vec<(u16, f32)> {
    let (js, ws) = w.row(v);
    let (j4, w4, k) = skinbind::model::weights::strongest_four(js, ws);
    let mut r: Vec<(u16, f32)> = (0..k).map(|i| (j4[i], w4[i])).collect();
    r.sort_by_key(|e| e.0);
    r
}

fn same_rig(a: &skinbind::formats::gltf::GltfRig, b: &skinbind::formats::gltf::GltfRig, what: &str) {
    let (ka, kb) = (&a.skin, &b.skin);
    assert!(ka.positions() == kb.positions(), "{what}: positions differ");
    assert!(ka.triangles() == kb.triangles(), "{what}: triangles differ");
    assert_eq!(a.skeleton.len(), b.skeleton.len(), "{what}");
    for (ja, jb) in a.skeleton.joints().iter().zip(b.skeleton.joints()) {
        assert_eq!((&ja.name, ja.parent), (&jb.name, jb.parent), "{what}");
        assert!(
            (ja.offset - jb.offset).length() < 1e-5,
            "{what}: {} offset {} vs {}",
            ja.name,
            ja.offset,
            jb.offset
        );
    }
    for (ma, mb) in ka.bindings().unwrap().iter().zip(kb.bindings().unwrap()) {
        assert!(ma.abs_diff_eq(*mb, 1e-4), "{what}: bindings differ:\n{ma}\n{mb}");
    }
    let (wa, wb) = (ka.weights().unwrap(), kb.weights().unwrap());
    for v in 0..ka.vertex_count() {
        let (ra, rb) = (four(wa, v), four(wb, v));
        assert_eq!(ra.len(), rb.len(), "{what}: vertex {v}: {ra:?} vs {rb:?}");
        for (x, y) in ra.iter().zip(&rb) {
            assert!(
                x.0 == y.0 && (x.1 - y.1).abs() < 1e-6,
                "{what}: vertex {v}: {ra:?} vs {rb:?}"
            );
        }
    }
}

/// Import, export as .glb, import again: the same vertices, joints, bindings and weights (after the limit of 4).
#[test]
fn gltf_import_export_import_round_trips() {
    use skinbind::formats::glb::{GlbOptions, write_glb};
    let dir = tempfile::tempdir().unwrap();
    for (file, skin) in [
        ("CesiumMan.glb", None),
        ("RiggedFigure.glb", None),
        ("RiggedSimple.blender-reexport.glb", None),
        ("SimpleSkin.gltf", None),
        ("RobotExpressive.glb", Some(0)),
    ] {
        let Some(path) = gltf(file) else { return };
        let first = load_gltf(&path, skin).unwrap().value;
        let bytes = write_glb(&first.skeleton, &first.skin, None, GlbOptions::default()).unwrap();
        let out = dir.path().join("out.glb");
        std::fs::write(&out, &bytes).unwrap();
        let again = load_gltf(&out, None).unwrap();
        assert!(again.warnings.is_empty(), "{file}: {:?}", again.warnings);
        same_rig(&first, &again.value, file);
    }
}

/// A CSE169 rig with its walk as .glb: the importer gets the same mesh, bindings and weights, and the sampled
/// animation's rotation of each joint matches the clip's pose at a sample time.
#[test]
fn cse169_rig_exports_to_glb_with_its_animation() {
    use skinbind::formats::glb::{ANIMATION_FPS, GlbOptions, write_glb};
    let (Some(s), Some(k), Some(a)) = (
        common::data_dir().map(|d| d.join("cse169/wasp.skel")),
        common::data_dir().map(|d| d.join("cse169/wasp.skin")),
        common::data_dir().map(|d| d.join("cse169/wasp_walk.anim")),
    ) else {
        return;
    };
    let skel = skinbind::formats::load_skel(&s).unwrap().value;
    let skin = skinbind::formats::load_skin(&k, Some(skel.len())).unwrap().value;
    let clip = skinbind::formats::load_anim(&a).unwrap().value;
    let bytes = write_glb(&skel, &skin, Some(&clip), GlbOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("wasp.glb");
    std::fs::write(&out, &bytes).unwrap();
    let rig = load_gltf(&out, None).unwrap().value;
    assert!(rig.skin.positions() == skin.positions());
    for (ma, mb) in rig.skin.bindings().unwrap().iter().zip(skin.bindings().unwrap()) {
        assert!(ma.abs_diff_eq(*mb, 1e-5));
    }
    let c = skinbind::eval::compare_weights(rig.skin.weights().unwrap(), skin.weights().unwrap()).unwrap();
    assert!(c.mean_l1 < 1e-5, "weights changed: {}", c.mean_l1);

    // The animation: sample k's rotation for joint j equals the clip's pose at that time.
    let gltf = gltf::Gltf::from_slice(&bytes).unwrap();
    let blob = gltf.blob.clone().unwrap();
    let anim = gltf.animations().next().expect("an animation");
    let k_sample = 7usize;
    let t = clip.range.0 + k_sample as f32 / ANIMATION_FPS;
    let pose = skinbind::model::pose_at(&skel, &clip, t);
    let mut checked = 0;
    for ch in anim.channels() {
        let reader = ch.reader(|_| Some(&blob));
        let node = ch.target().node().index();
        let times: Vec<f32> = reader.read_inputs().unwrap().collect();
        assert!(
            (times[k_sample] - t).abs() < 1e-3,
            "sample time {} vs {t}",
            times[k_sample]
        );
        if let Some(gltf::animation::util::ReadOutputs::Rotations(r)) = reader.read_outputs() {
            let q: Vec<[f32; 4]> = r.into_f32().collect();
            let d = pose.dofs[node];
            let want = glam::Quat::from_euler(glam::EulerRot::ZYX, d.z, d.y, d.x);
            let got = glam::Quat::from_array(q[k_sample]);
            assert!(
                want.dot(got).abs() > 1.0 - 1e-5,
                "joint {node} at t = {t}: {want} vs {got}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, skel.len());

    // Imported again, the animation is a clip that poses the rig as the original clip does (world matrices of
    // every joint at every exported frame).
    assert_eq!(rig.animations.len(), 1);
    let back = &rig.animations[0].clip;
    assert!(
        (back.range.1 - (clip.range.1 - clip.range.0)).abs() < 1e-3,
        "{:?}",
        back.range
    );
    for f in (0..60).step_by(7) {
        let t = f as f32 / ANIMATION_FPS;
        let want = world_from_joint(&skel, &skinbind::model::pose_at(&skel, &clip, clip.range.0 + t));
        let got = world_from_joint(&rig.skeleton, &skinbind::model::pose_at(&rig.skeleton, back, t));
        for (j, (a, b)) in want.iter().zip(&got).enumerate() {
            assert!(a.abs_diff_eq(*b, 1e-3), "frame {f} joint {j}: {a} vs {b}");
        }
    }
}

/// Issue 23 item 11: CesiumMan's walk, imported as a clip and played on the imported rig, skins the mesh where a
/// glTF viewer draws it: at the clip's key times, each vertex skinned by skinbind lies within 0.5% of the
/// bounding-box diagonal of the vertex skinned from the file's own node transforms, inverse bind matrices and
/// weights (read here with the `gltf` crate's readers). The clip's two shoulder joints, whose offsets the file
/// moves by 3 mm, keep those moves as translation channels; what is left (0.33% at key 17) is the clip
/// resampled at 30 frames a second against the file's keys at 24.
#[test]
fn cesium_man_walk_skins_the_mesh_where_a_viewer_draws_it() {
    use glam::{Mat4, Quat, Vec3};
    let Some(path) = gltf("CesiumMan.glb") else { return };
    let rig = load_gltf(&path, None).unwrap().value;
    assert_eq!(rig.animations.len(), 1);
    let clip = &rig.animations[0].clip;
    assert!((clip.range.1 - 1.9583).abs() < 1e-3, "{:?}", clip.range);
    let moved: Vec<&str> = clip
        .translations
        .iter()
        .map(|t| rig.skeleton.joints()[t.joint].name.as_str())
        .collect();
    assert_eq!(moved.len(), 2, "the shoulders' moves are kept: {moved:?}");

    let bytes = std::fs::read(&path).unwrap();
    let g = gltf::Gltf::from_slice(&bytes).unwrap();
    let blob = g.blob.clone().unwrap();
    let nodes: Vec<gltf::Node> = g.nodes().collect();
    let mut parent = vec![None; nodes.len()];
    for n in &nodes {
        for c in n.children() {
            parent[c.index()] = Some(n.index());
        }
    }
    // Key k of every channel (they share their times in this file).
    let anim = g.animations().next().unwrap();
    let mut trs: Vec<(Vec3, Quat, Vec3)> = nodes
        .iter()
        .map(|n| {
            let (t, r, s) = n.transform().decomposed();
            (Vec3::from(t), Quat::from_array(r), Vec3::from(s))
        })
        .collect();
    let key = 17;
    let mut time = 0.0;
    for ch in anim.channels() {
        let reader = ch.reader(|_| Some(&blob));
        let times: Vec<f32> = reader.read_inputs().unwrap().collect();
        time = times[key] - times[0];
        let n = ch.target().node().index();
        match reader.read_outputs().unwrap() {
            gltf::animation::util::ReadOutputs::Translations(mut t) => trs[n].0 = Vec3::from(t.nth(key).unwrap()),
            gltf::animation::util::ReadOutputs::Rotations(r) => {
                trs[n].1 = Quat::from_array(r.into_f32().nth(key).unwrap())
            }
            gltf::animation::util::ReadOutputs::Scales(mut s) => trs[n].2 = Vec3::from(s.nth(key).unwrap()),
            _ => {}
        }
    }
    let world = |mut n: usize| {
        let mut m = Mat4::IDENTITY;
        loop {
            let (t, r, s) = trs[n];
            m = Mat4::from_scale_rotation_translation(s, r, t) * m;
            match parent[n] {
                Some(p) => n = p,
                None => return m,
            }
        }
    };
    let skin = g.skins().next().unwrap();
    let sr = skin.reader(|_| Some(&blob));
    let ibm: Vec<Mat4> = sr
        .read_inverse_bind_matrices()
        .unwrap()
        .map(|m| Mat4::from_cols_array_2d(&m))
        .collect();
    let joint_mats: Vec<Mat4> = skin.joints().zip(&ibm).map(|(j, i)| world(j.index()) * *i).collect();
    let mut viewer = Vec::new();
    for mesh_node in nodes.iter().filter(|n| n.skin().is_some()) {
        for prim in mesh_node.mesh().unwrap().primitives() {
            let r = prim.reader(|_| Some(&blob));
            let js: Vec<[u16; 4]> = r.read_joints(0).unwrap().into_u16().collect();
            let ws: Vec<[f32; 4]> = r.read_weights(0).unwrap().into_f32().collect();
            for (v, p) in r.read_positions().unwrap().enumerate() {
                let m = (0..4).fold(Mat4::ZERO, |acc, i| acc + joint_mats[js[v][i] as usize] * ws[v][i]);
                viewer.push(m.transform_point3(Vec3::from(p)));
            }
        }
    }

    let pose = skinbind::model::pose_at(&rig.skeleton, clip, time);
    let w = world_from_joint(&rig.skeleton, &pose);
    let mats = skinbind::deform::skinning_matrices(&w, rig.skin.bindings().unwrap());
    let (ours, _) = skinbind::deform::skin_vertices(
        rig.skin.positions(),
        rig.skin.normals(),
        rig.skin.weights().unwrap(),
        &mats,
        skinbind::deform::Method::Linear,
    );
    let (lo, hi) = skinbind::model::skin::bounds(&viewer).unwrap();
    let diagonal = (hi - lo).length();
    assert_eq!(ours.len(), viewer.len());
    let worst = ours
        .iter()
        .zip(&viewer)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0f32, f32::max);
    assert!(
        worst < 0.005 * diagonal,
        "worst {worst} of diagonal {diagonal} at t = {time}"
    );
    // The pose is not the rest pose: the walk moves the mesh.
    let moved = rig
        .skin
        .positions()
        .iter()
        .zip(&viewer)
        .map(|(a, b)| a.distance(*b))
        .fold(0.0f32, f32::max);
    assert!(moved > 0.05 * diagonal, "{moved}");
}

/// What skinbind writes passes the Khronos glTF validator without errors or warnings (`.ci/run` installs it with
/// npm into tests/gltf-validator; without node or it, a notice).
#[test]
fn glb_exports_pass_the_khronos_validator() {
    use skinbind::formats::glb::{GlbOptions, write_glb};
    let tool = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gltf-validator");
    if !tool.join("node_modules/gltf-validator").is_dir() {
        eprintln!("notice: gltf-validator not installed (cd tests/gltf-validator && npm ci); test skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    // A generated rig wider than 256 joints (16-bit joint indices), and the course wasp with its walk.
    let chain = skinbind::sample::chain_tube(300, 5000).unwrap();
    let p = dir.path().join("chain.glb");
    std::fs::write(
        &p,
        write_glb(&chain.skeleton, &chain.skin, None, GlbOptions::default()).unwrap(),
    )
    .unwrap();
    files.push(p);
    if let Some(d) = common::data_dir() {
        let skel = skinbind::formats::load_skel(&d.join("cse169/wasp.skel")).unwrap().value;
        let skin = skinbind::formats::load_skin(&d.join("cse169/wasp.skin"), Some(skel.len()))
            .unwrap()
            .value;
        let clip = skinbind::formats::load_anim(&d.join("cse169/wasp_walk.anim"))
            .unwrap()
            .value;
        let p = dir.path().join("wasp.glb");
        std::fs::write(&p, write_glb(&skel, &skin, Some(&clip), GlbOptions::default()).unwrap()).unwrap();
        files.push(p);
        let cm = load_gltf(&d.join("gltf/CesiumMan.glb"), None).unwrap().value;
        let p = dir.path().join("cesium.glb");
        std::fs::write(
            &p,
            write_glb(&cm.skeleton, &cm.skin, None, GlbOptions::default()).unwrap(),
        )
        .unwrap();
        files.push(p);
    }
    let out = std::process::Command::new("node")
        .arg(tool.join("validate.js"))
        .args(&files)
        .output();
    let Ok(out) = out else {
        eprintln!("notice: node not found; validator test skipped");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "validator: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in text.lines().filter(|l| !l.starts_with(' ')) {
        assert!(line.ends_with("0 errors, 0 warnings, 0 infos, 0 hints"), "{line}");
    }
    assert_eq!(text.lines().filter(|l| !l.starts_with(' ')).count(), files.len());
}

/// Issue 23 item 10: CesiumMan's skeleton hangs under a Z-up armature node, which a viewer applies; imported, it
/// stands up along +y as a viewer shows it (it used to lie along z), head above feet, the bindings moved with the
/// mesh.
#[test]
fn cesium_man_stands_up_as_a_viewer_shows_it() {
    let Some(path) = gltf("CesiumMan.glb") else { return };
    let rig = load_gltf(&path, None).unwrap().value;
    let (lo, hi) = skinbind::model::skin::bounds(rig.skin.positions()).unwrap();
    let size = hi - lo;
    assert!(size.y > 1.4 * size.z && size.y > size.x * 0.9, "{size}");
    let pivot = |name: &str| rig.skin.bindings().unwrap()[rig.skeleton.find(name)[0]].w_axis.y;
    assert!(pivot("Skeleton_neck_joint_2") > pivot("Skeleton_torso_joint_1") + 0.3 * size.y);
    assert!(pivot("Skeleton_torso_joint_1") > pivot("leg_joint_L_5"));
}
