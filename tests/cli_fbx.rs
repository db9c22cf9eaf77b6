//! One reader for rigs, from the command line: a .glb or .fbx is taken wherever a skeleton or a skin is
//! (`bind`, `check`, `pose`, `compare`, `convert`, `info`), every clip is kept by name in a .glb, an .anim says
//! what it drops, and a file whose bytes are not what its name says is refused with the kind it looks like,
//! never with its bytes printed (exit 1, exact messages).
#![allow(clippy::unwrap_used)]

mod common;

use common::cli::{fixture, run};

/// The fixture's rig as `rig.glb` and the small FBX as `small.fbx` beside it.
fn with_models() -> tempfile::TempDir {
    let d = fixture();
    let o = run(d.path(), &["convert", "rig.skel", "rig.skin", "-o", "rig.glb"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    std::fs::write(d.path().join("small.fbx"), common::fbx_build::small_rig()).unwrap();
    d
}

#[test]
fn a_glb_is_a_skeleton_and_a_skin_for_every_command() {
    let d = with_models();
    let o = run(
        d.path(),
        &["bind", "--skel", "rig.glb", "--skin", "rig.glb", "-o", "bound.skin"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(d.path(), &["compare", "bound.skin", "rig.glb"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(d.path(), &["check", "--skel", "rig.glb", "--skin", "bound.skin"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[test]
fn an_fbx_goes_through_every_command() {
    let d = with_models();
    let o = run(d.path(), &["info", "small.fbx"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.starts_with("small.fbx: FBX model\n"), "{}", o.stdout);
    assert!(o.stdout.contains("  clips: 1\n    `wave`: 0 .. 1 s"), "{}", o.stdout);
    let o = run(d.path(), &["info", "--json", "small.fbx"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v[0]["kind"], "fbx");
    assert_eq!(v[0]["skeleton"]["joints"], 2);
    assert_eq!(v[0]["skin"]["vertices"], 3);
    let o = run(
        d.path(),
        &[
            "convert",
            "small.fbx",
            "-o",
            "s.skel",
            "-o",
            "s.skin",
            "-o",
            "s.anim",
            "-o",
            "s.glb",
            "-o",
            "s.morph",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        o.stderr,
        "s.anim: warning: the clip moves 1 joint other than the root; an .anim file keeps rotations and the \
         root's translation only, so those moves were not written\n"
    );
    // The blend shape as a .morph: at weight 1 the third corner is lifted 0.5 m.
    let o = run(
        d.path(),
        &[
            "pose",
            "--skel",
            "s.skel",
            "--skin",
            "s.skin",
            "--morph",
            "s.morph=1",
            "-o",
            "m.obj",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let obj = std::fs::read_to_string(d.path().join("m.obj")).unwrap();
    assert!(obj.lines().any(|l| l == "v 0 1 0.5"), "{obj}");
    for args in [
        &["bind", "--skel", "small.fbx", "--skin", "small.fbx", "-o", "b.skin"][..],
        &["bind", "--skel", "s.skel", "--skin", "small.fbx", "-o", "b2.skin"],
        &["compare", "b.skin", "small.fbx"],
        &["check", "--skel", "small.fbx", "--skin", "small.fbx"],
        &["pose", "--skel", "small.fbx", "--skin", "small.fbx", "-o", "p.obj"],
        &["info", "s.glb"],
    ] {
        let o = run(d.path(), args);
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
    }
    let o = run(d.path(), &["info", "s.glb"]);
    assert!(o.stdout.contains("    `wave`: 0 .. 1 s"), "{}", o.stdout);
    // The model's clip poses the rig with its joint move: at 1 s the arm has turned and stands at x = 1.5, and
    // the vertex on it with it (an .anim would have lost the move: x = 1).
    for anim in ["small.fbx", "s.glb"] {
        let o = run(
            d.path(),
            &[
                "pose",
                "--skel",
                "small.fbx",
                "--skin",
                "small.fbx",
                "--anim",
                anim,
                "--time",
                "1",
                "-o",
                "p.obj",
            ],
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        let obj = std::fs::read_to_string(d.path().join("p.obj")).unwrap();
        let on_arm = obj.lines().filter(|l| l.starts_with("v ")).any(|l| {
            let v: Vec<f32> = l[2..].split_whitespace().map(|x| x.parse().unwrap()).collect();
            (v[0] - 1.5).abs() < 1e-4 && v[1].abs() < 1e-4
        });
        assert!(on_arm, "{anim}: {obj}");
    }
    let o = run(
        d.path(),
        &[
            "check",
            "--skel",
            "small.fbx",
            "--skin",
            "small.fbx",
            "--anim",
            "small.fbx",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(d.path(), &["convert", "s.skel", "s.skin", "-o", "x.fbx"]);
    assert_eq!(o.code, 2);
    assert_eq!(
        o.stderr,
        "skinbind: x.fbx: FBX is read, not written; write .glb (every DCC reads glTF) or .skel and .skin\n"
    );
}

#[test]
fn a_file_that_is_not_what_its_name_says_is_named_by_its_kind() {
    let d = with_models();
    let glb = std::fs::read(d.path().join("rig.glb")).unwrap();
    std::fs::write(d.path().join("glb.skel"), &glb).unwrap();
    std::fs::write(d.path().join("glb.anim"), &glb).unwrap();
    std::fs::write(d.path().join("fbx.skin"), b"Kaydara FBX Binary  \0\x1a\0\xe8\x1c\0\0").unwrap();
    std::fs::write(d.path().join("noise.skel"), b"\x7fELF\x02\x01\x01\0\0\0").unwrap();
    std::fs::write(d.path().join("json.fbx"), b"{\"asset\": {\"version\": \"2.0\"}}").unwrap();
    std::fs::write(d.path().join("small.glb"), common::fbx_build::small_rig()).unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &[
                "pose", "--skel", "rig.skel", "--skin", "rig.skin", "--anim", "glb.anim", "-o", "p.obj",
            ],
            "glb.anim: expected an .anim animation (text), found a binary glTF (.glb) file\n",
        ),
        (
            &["bind", "--skel", "glb.skel", "--skin", "rig.skin", "-o", "o.skin"],
            "glb.skel: expected a .skel skeleton (text), found a binary glTF (.glb) file\n",
        ),
        (
            &["bind", "--skel", "rig.skel", "--skin", "fbx.skin", "-o", "o.skin"],
            "fbx.skin: expected a .skin mesh (text), found a binary FBX file\n",
        ),
        (
            &["info", "noise.skel"],
            "noise.skel: expected a .skel skeleton (text), found binary data of no kind skinbind reads\n",
        ),
        (
            &["info", "json.fbx"],
            "json.fbx: expected an FBX file, found a JSON file (a .gltf?)\n",
        ),
        (
            &["check", "--skel", "small.glb", "--skin", "small.glb"],
            "small.glb: expected a glTF file (.glb or .gltf), found an ASCII FBX file\n",
        ),
    ];
    for (args, stderr) in cases {
        let o = run(d.path(), args);
        assert_eq!((o.code, o.stderr.as_str()), (1, stderr), "{args:?}");
        assert_eq!(o.stdout, "");
    }
}
