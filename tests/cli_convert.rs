//! `skinbind convert`: the normal layout, OBJ meshes, unweighted vertices and glTF animations, with exact
//! messages and exit codes.
#![allow(clippy::unwrap_used)]

mod common;

use common::cli::{SKEL, SKIN, fixture, run};

#[test]
fn convert_rewrites_in_the_normal_layout() {
    let d = fixture();
    let o = run(
        d.path(),
        &[
            "convert", "rig.skin", "rig.skel", "-o", "out.skin", "-o", "out.skel", "-o", "out.obj",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(d.path().join("out.skin")).unwrap(),
        "positions 3 {\n  0 0 0\n  1 0 0\n  2 0 0\n}\nnormals 3 {\n  0 1 0\n  0 1 0\n  0 1 0\n}\nskinweights 3 {\n  \
         1 0 1\n  2 0 0.5 1 0.5\n  1 1 1\n}\ntriangles 1 {\n  0 1 2\n}\n"
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("out.skel")).unwrap(),
        "balljoint root {\n\toffset 0 0 0\n\tballjoint arm {\n\t\toffset 1 0 0\n\t\trotzlimit 0 0\n\t}\n}\n"
    );
    // Converting the output again changes nothing.
    let o = run(d.path(), &["convert", "out.skin", "-o", "again.skin"]);
    assert_eq!(o.code, 0);
    assert_eq!(
        std::fs::read(d.path().join("again.skin")).unwrap(),
        std::fs::read(d.path().join("out.skin")).unwrap()
    );
}

#[test]
fn obj_meshes_convert_to_skins_and_bind_like_the_skin_they_came_from() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let out = run(dir, &["sample", "--kind", "arm", "--vertices", "2000", "-o", "arm"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The skin as OBJ (one OBJ vertex per skin vertex, with normals), back to a bare skin.
    let out = run(dir, &["convert", "arm.skin", "-o", "arm.obj"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(dir, &["convert", "arm.obj", "-o", "bare.skin"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let bare = skinbind::formats::load_skin(&dir.join("bare.skin"), None)
        .unwrap()
        .value;
    let orig = skinbind::formats::load_skin(&dir.join("arm.skin"), None).unwrap().value;
    assert!(
        bare.positions() == orig.positions(),
        "positions differ after the OBJ round trip"
    );
    assert!(
        bare.triangles() == orig.triangles(),
        "triangles differ after the OBJ round trip"
    );
    assert!(bare.weights().is_none());
    // Binding the OBJ gives the same weights as binding the skin.
    for (mesh, o) in [("arm.obj", "a.skin"), ("bare.skin", "b.skin")] {
        let out = run(dir, &["bind", "--skel", "arm.skel", "--skin", mesh, "-o", o]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let a = skinbind::formats::load_skin(&dir.join("a.skin"), None).unwrap().value;
    let b = skinbind::formats::load_skin(&dir.join("b.skin"), None).unwrap().value;
    assert!(a.weights() == b.weights(), "binding the OBJ gave other weights");
    // A bad OBJ names its line and column.
    std::fs::write(dir.join("bad.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n").unwrap();
    let out = run(dir, &["convert", "bad.obj", "-o", "x.skin"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "bad.obj:4:7: expected a vertex index from 1 to 3 (or -1 to -3), found `7`\n"
    );
}

#[test]
fn convert_refuses_a_rig_with_unweighted_vertices_unless_allowed() {
    let d = fixture();
    let dir = d.path();
    // Vertex 1 has no weights.
    let text = SKIN.replace("  2 0 0.5 1 0.5\n", "  0\n");
    std::fs::write(dir.join("holes.skin"), text).unwrap();
    let out = run(dir, &["convert", "rig.skel", "holes.skin", "-o", "out.skin"]);
    assert_eq!(out.code, 1);
    let warning = "holes.skin:6:1: warning: 1 vertices have no weights (first: vertex 1); they stay in the bind pose\n";
    assert_eq!(
        out.stderr,
        format!(
            "{warning}out.skin: not written: 1 vertices have no weights (the first is vertex 1); bind or paint them \
             first, or allow it (--allow-unweighted)\n"
        )
    );
    assert!(!dir.join("out.skin").exists());
    let out = run(dir, &["convert", "rig.skel", "holes.skin", "-o", "out.glb"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with(&format!("{warning}out.glb: 1 vertices have no weights")),
        "{}",
        out.stderr
    );
    let out = run(
        dir,
        &[
            "convert",
            "rig.skel",
            "holes.skin",
            "--allow-unweighted",
            "-o",
            "out.skin",
            "-o",
            "out.glb",
        ],
    );
    assert_eq!((out.code, out.stderr.as_str()), (0, warning));
    // The glTF gives the vertex to the root joint; the .skin keeps it unweighted.
    let rig = skinbind::formats::gltf::load_gltf(&dir.join("out.glb"), None)
        .unwrap()
        .value;
    assert_eq!(rig.skin.weights().unwrap().row(1), (&[0u16][..], &[1.0f32][..]));
    let k = skinbind::formats::load_skin(&dir.join("out.skin"), None).unwrap().value;
    assert_eq!(k.weights().unwrap().unweighted().collect::<Vec<_>>(), vec![1]);
}

/// Issue 23 item 11: `convert MODEL.glb -o M.anim` writes the model's first animation, `--animation NAME` another;
/// a name it does not have is an input error that lists the names, and `--animation` without a glTF input a usage
/// error.
#[test]
fn convert_writes_a_gltf_models_animation() {
    let Some(data) = common::data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let model = data.join("gltf/quaternius/Wolf.glb");
    let m = model.to_str().unwrap();
    let o = run(dir.path(), &["convert", m, "-o", "w.skel", "-o", "w.anim"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let first = skinbind::formats::load_anim(&dir.path().join("w.anim")).unwrap().value;
    let skel = skinbind::formats::load_skel(&dir.path().join("w.skel")).unwrap().value;
    assert_eq!(first.channels.len(), skinbind::model::Clip::channels_for(skel.len()));
    let o = run(dir.path(), &["convert", m, "-o", "walk.anim", "--animation", "Walking"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let walk = skinbind::formats::load_anim(&dir.path().join("walk.anim"))
        .unwrap()
        .value;
    assert_ne!(walk, first);
    let o = run(dir.path(), &["convert", m, "-o", "x.anim", "--animation", "Swim"]);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains(&format!("{m}: no animation named `Swim` (it has: ")) && o.stderr.contains("Walking"),
        "{}",
        o.stderr
    );
    assert!(!dir.path().join("x.anim").exists());
    std::fs::write(dir.path().join("a.skel"), SKEL).unwrap();
    let o = run(
        dir.path(),
        &["convert", "a.skel", "-o", "b.skel", "--animation", "Walking"],
    );
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("--animation picks one of a .glb/.gltf/.fbx input's animations"),
        "{}",
        o.stderr
    );
}

/// Issue 43: `convert MODEL -o M.glb` keeps every clip by name (it kept the first, renamed `clip`), joint moves
/// included; `--animation NAME` keeps that one; an `.anim` output says what it drops.
#[test]
fn convert_keeps_every_clip_by_name_in_a_glb() {
    let Some(data) = common::data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let model = data.join("gltf/quaternius/Smooth_Male_Casual.glb");
    let m = model.to_str().unwrap();
    let o = run(dir.path(), &["convert", m, "-o", "all.glb"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let read = |p: &std::path::Path| skinbind::formats::gltf::load_gltf(p, None).unwrap().value;
    let (before, after) = (read(&model), read(&dir.path().join("all.glb")));
    let names = |r: &skinbind::formats::gltf::GltfRig| r.animations.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&after).len(), 12);
    assert_eq!(names(&after), names(&before));
    for (a, b) in before.animations.iter().zip(&after.animations) {
        let moved = |c: &skinbind::model::Clip| c.translations.iter().map(|t| t.joint).collect::<Vec<_>>();
        assert_eq!(moved(&a.clip), moved(&b.clip), "{}", a.name);
    }
    let o = run(dir.path(), &["convert", m, "-o", "walk.glb", "--animation", "Man_Walk"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(names(&read(&dir.path().join("walk.glb"))), ["Man_Walk"]);
    let o = run(
        dir.path(),
        &["convert", m, "-o", "walk.anim", "--animation", "Man_Walk"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("walk.anim: warning: the clip moves 5 joints other than the root; an .anim file keeps"),
        "{}",
        o.stderr
    );
}

/// Issue 43 item 3: a skeleton with as many joints as the skin's bindings but a joint elsewhere is warned about by
/// `info`, `convert` and `bind`, naming the joint; the skeleton the skin was bound to gets no warning.
#[test]
fn a_skeleton_whose_joints_are_not_at_the_skins_bindings_is_warned_about() {
    let d = fixture();
    let bindings = "bindings 2 {\n  matrix {\n    1 0 0\n    0 1 0\n    0 0 1\n    0 0 0\n  }\n  matrix {\n    1 0 0\n    \
                    0 1 0\n    0 0 1\n    1 0 0\n  }\n}\n";
    std::fs::write(d.path().join("bound.skin"), format!("{SKIN}{bindings}")).unwrap();
    std::fs::write(
        d.path().join("moved.skel"),
        SKEL.replace("offset 1 0 0", "offset 0 1 0"),
    )
    .unwrap();
    let warning = "bound.skin: warning: in moved.skel, 1 of 2 joints do not sit where the skin's bindings put them \
                   (arm): the weights follow joint numbers and would move other joints; it looks like another rig's \
                   skeleton\n";
    let o = run(d.path(), &["info", "moved.skel", "bound.skin"]);
    assert_eq!((o.code, o.stderr.as_str()), (0, warning));
    let o = run(d.path(), &["convert", "moved.skel", "bound.skin", "-o", "out.skin"]);
    assert_eq!((o.code, o.stderr.as_str()), (0, warning));
    let o = run(
        d.path(),
        &["bind", "--skel", "moved.skel", "--skin", "bound.skin", "-o", "b.skin"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.starts_with(warning), "{}", o.stderr);
    // The skeleton it was bound to: no warning.
    let o = run(d.path(), &["info", "rig.skel", "bound.skin"]);
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
}
