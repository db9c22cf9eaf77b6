//! Files from strangers: each test builds a small hostile input that broke an earlier version (it read outside
//! the model, panicked, corrupted data silently, or ran without bound) and checks the clear refusal that
//! replaced it.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use skinbind::app::document::Document;
use skinbind::app::session::{Origin, SessionFile, ViewState};
use skinbind::formats::{self, glb, gltf::load_gltf, skel, skin};
use skinbind::model::{Channel, Clip, Extrapolation, Key, Skeleton, Tangent};
use skinbind::sample::{SampleKind, make_sample};

/// The bytes of a one-triangle, one-joint skinned model: positions (0..36), JOINTS_0 as u8 (36..48), WEIGHTS_0
/// (48..96), u16 indices (96..102, padded to 104) and one inverse bind matrix (104..168).
fn triangle_bin() -> Vec<u8> {
    let mut b = Vec::new();
    for v in [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&[0u8; 12]);
    for _ in 0..3 {
        for w in [1.0f32, 0.0, 0.0, 0.0] {
            b.extend_from_slice(&w.to_le_bytes());
        }
    }
    for i in [0u16, 1, 2, 0] {
        b.extend_from_slice(&i.to_le_bytes());
    }
    for v in glam::Mat4::IDENTITY.to_cols_array() {
        b.extend_from_slice(&v.to_le_bytes());
    }
    assert_eq!(b.len(), 168);
    b
}

/// The JSON of that model, its one buffer at `uri`.
fn triangle_json(uri: &str) -> Value {
    let view = |offset: usize, length: usize| json!({ "buffer": 0, "byteOffset": offset, "byteLength": length });
    json!({
        "asset": { "version": "2.0" },
        "scene": 0,
        "scenes": [{ "nodes": [0, 1] }],
        "nodes": [{ "name": "root" }, { "mesh": 0, "skin": 0 }],
        "skins": [{ "joints": [0], "inverseBindMatrices": 4 }],
        "meshes": [{ "primitives": [{ "attributes": { "POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2 }, "indices": 3 }] }],
        "buffers": [{ "uri": uri, "byteLength": 168 }],
        "bufferViews": [view(0, 36), view(36, 12), view(48, 48), view(96, 6), view(104, 64)],
        "accessors": [
            { "bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0] },
            { "bufferView": 1, "componentType": 5121, "count": 3, "type": "VEC4" },
            { "bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4" },
            { "bufferView": 3, "componentType": 5123, "count": 3, "type": "SCALAR" },
            { "bufferView": 4, "componentType": 5126, "count": 1, "type": "MAT4" }
        ]
    })
}

/// `json` written as `model.gltf` in `dir` (with the buffer as `buf.bin` beside it), then loaded.
fn load(dir: &Path, json: &Value) -> Result<usize, String> {
    std::fs::write(dir.join("buf.bin"), triangle_bin()).unwrap();
    let path = dir.join("model.gltf");
    std::fs::write(&path, serde_json::to_vec(json).unwrap()).unwrap();
    load_gltf(&path, None)
        .map(|r| r.value.skin.vertex_count())
        .map_err(|e| e.to_string())
}

/// `json` with the object member at `pointer` set to `value` (added when missing).
fn with(mut json: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    json.pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .insert(key.to_string(), value);
    json
}

#[test]
fn the_triangle_model_loads() {
    let d = tempfile::tempdir().unwrap();
    assert_eq!(load(d.path(), &triangle_json("buf.bin")), Ok(3));
    // A relative path into a subfolder, percent-encoded, is fine.
    std::fs::create_dir(d.path().join("sub dir")).unwrap();
    std::fs::write(d.path().join("sub dir/b.bin"), triangle_bin()).unwrap();
    assert_eq!(load(d.path(), &triangle_json("sub%20dir/b.bin")), Ok(3));
}

/// `convert x.gltf -o x.skin` exited 0 with the bytes of /etc/passwd as positions.
#[test]
fn a_buffer_uri_outside_the_models_folder_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        ("../../../../etc/passwd", "`..` leaves the model's folder"),
        ("%2e%2e/%2e%2e/etc/passwd", "`..` leaves the model's folder"),
        ("/etc/passwd", "an absolute path"),
        ("/proc/self/environ", "an absolute path"),
        ("/dev/zero", "an absolute path"),
        ("file:///etc/passwd", "a URI scheme or drive"),
        ("C:/Windows/win.ini", "a URI scheme or drive"),
        ("sub\\..\\..\\etc\\passwd", "a NUL or a backslash"),
    ];
    for (uri, why) in cases {
        let e = load(d.path(), &triangle_json(uri)).unwrap_err();
        // The uri is quoted as written (only control characters would be escaped).
        assert!(
            e.contains(&format!("buffer 0: uri `{uri}`: refused: {why}")),
            "{uri}: {e}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_folder_a_device_and_a_fifo_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let model = d.path().join("model");
    std::fs::create_dir(&model).unwrap();
    std::fs::write(d.path().join("secret.bin"), triangle_bin()).unwrap();
    std::os::unix::fs::symlink(d.path().join("secret.bin"), model.join("link.bin")).unwrap();
    let e = load(&model, &triangle_json("link.bin")).unwrap_err();
    assert!(e.contains("refused: it links outside the model's folder"), "{e}");
    std::os::unix::fs::symlink("/dev/zero", model.join("zero.bin")).unwrap();
    let e = load(&model, &triangle_json("zero.bin")).unwrap_err();
    assert!(e.contains("refused: it links outside"), "{e}");
    // A FIFO would block the reader for ever.
    let fifo = model.join("pipe.bin");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let e = load(&model, &triangle_json("pipe.bin")).unwrap_err();
        assert!(e.contains("refused: not a regular file"), "{e}");
    }
}

/// A 3 GB file was read whole for a buffer of 168 bytes.
#[test]
fn only_byte_length_bytes_of_a_huge_buffer_file_are_read() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("model.gltf");
    let big = d.path().join("big.bin");
    std::fs::write(&big, triangle_bin()).unwrap();
    // Sparse: 3 GB on paper, nothing on disk; reading it whole would take seconds and 3 GB of memory.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    std::fs::write(&path, serde_json::to_vec(&triangle_json("big.bin")).unwrap()).unwrap();
    let started = std::time::Instant::now();
    let rig = load_gltf(&path, None).unwrap().value;
    assert_eq!(rig.skin.vertex_count(), 3);
    assert!(started.elapsed().as_secs_f64() < 1.0, "{:?}", started.elapsed());
}

/// The `gltf` crate's validation panicked on an accessor index with no accessors.
#[test]
fn an_84_byte_file_naming_a_missing_accessor_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let text = r#"{"asset":{"version":"2.0"},"meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}]}"#;
    let path = d.path().join("tiny.gltf");
    std::fs::write(&path, text).unwrap();
    let e = load_gltf(&path, None).unwrap_err().to_string();
    assert!(
        e.ends_with("not a valid glTF file: meshes[0].primitives[0] names accessor 0 of 0"),
        "{e}"
    );
}

/// Float indices and joints reached `unreachable!`; a stride below the element size an assertion.
#[test]
fn accessors_of_the_wrong_type_or_stride_are_errors_naming_them() {
    let d = tempfile::tempdir().unwrap();
    let base = triangle_json("buf.bin");
    let e = load(d.path(), &with(base.clone(), "/accessors/3/componentType", json!(5126))).unwrap_err();
    assert!(
        e.ends_with("mesh ``'s indices (accessor 3): expected SCALAR of U8 or U16 or U32, found SCALAR of F32"),
        "{e}"
    );
    let e = load(d.path(), &with(base.clone(), "/accessors/1/componentType", json!(5126))).unwrap_err();
    assert!(
        e.ends_with("mesh ``'s JOINTS_0 (accessor 1): expected VEC4 of U8 or U16, found VEC4 of F32"),
        "{e}"
    );
    let e = load(d.path(), &with(base.clone(), "/bufferViews/0/byteStride", json!(4))).unwrap_err();
    assert!(
        e.ends_with("mesh ``'s POSITION (accessor 0): byteStride 4 is smaller than its 12-byte elements"),
        "{e}"
    );
    let e = load(d.path(), &with(base, "/accessors/0/type", json!("VEC2"))).unwrap_err();
    assert!(e.contains("expected VEC3 of F32, found VEC2 of F32"), "{e}");
}

/// Inverse bind matrices past their buffer silently became identities; indices past it made the mesh
/// non-indexed.
#[test]
fn accessors_running_past_their_buffer_are_errors() {
    let d = tempfile::tempdir().unwrap();
    let base = triangle_json("buf.bin");
    let e = load(d.path(), &with(base.clone(), "/accessors/4/count", json!(2))).unwrap_err();
    assert!(
        e.ends_with("skin 0's inverse bind matrices (accessor 4): 2 elements from byte 0 with stride 64 run past its buffer view's 64 bytes"),
        "{e}"
    );
    let e = load(d.path(), &with(base.clone(), "/accessors/3/count", json!(300))).unwrap_err();
    assert!(e.contains("mesh ``'s indices (accessor 3): 300 elements"), "{e}");
    let e = load(d.path(), &with(base.clone(), "/bufferViews/4/byteOffset", json!(160))).unwrap_err();
    assert!(
        e.contains("buffer view 4 (bytes 160..+64) runs past its buffer's 168 bytes"),
        "{e}"
    );
    let e = load(d.path(), &with(base, "/accessors/1/count", json!(2))).unwrap_err();
    assert!(e.ends_with("mesh ``'s JOINTS_0 has 2 elements for 3 vertices"), "{e}");
}

/// `convert ... -o l.glb` sampled a million frames per joint for `range 0 1e9` and aborted at 3.6 GB.
#[test]
fn an_animation_range_past_the_sample_budget_is_an_error() {
    let s = make_sample(SampleKind::Creature, 300).unwrap();
    let key = Key {
        time: 0.0,
        value: 0.0,
        tangent_in: Tangent::Flat,
        tangent_out: Tangent::Flat,
    };
    let channel = Channel::new(Extrapolation::Constant, Extrapolation::Constant, vec![key]).unwrap();
    let clip = Clip::new((0.0, 1e9), vec![channel; Clip::channels_for(s.skeleton.len())]);
    let e = glb::write_glb(&s.skeleton, &s.skin, Some(&clip), glb::GlbOptions::default()).unwrap_err();
    assert!(matches!(e, glb::GlbError::AnimationTooLong { .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with("the animation's range 0 .. 1000000000 is 30000000001 frames"),
        "{e}"
    );
    // A minute of animation is fine.
    let clip = Clip {
        range: (0.0, 60.0),
        ..clip
    };
    glb::write_glb(&s.skeleton, &s.skin, Some(&clip), glb::GlbOptions::default()).unwrap();
}

/// A face of 900,000 corners took over 10 s: columns were counted from the line's start for every word.
#[test]
fn a_face_line_of_many_corners_reads_in_linear_time() {
    let corners = 200_000;
    let mut text = String::from("v 0 0 0\nv 1 0 0\nv 0 1 0\nf");
    for k in 0..corners {
        text.push_str([" 1", " 2", " 3"][k % 3]);
    }
    text.push_str(" x\n");
    let started = std::time::Instant::now();
    let e = formats::obj::read_obj(&mut text.as_bytes(), None).unwrap_err();
    assert_eq!((e.line, e.col), (4, 2 + 2 * corners as u32 + 1));
    // Quadratic counting took minutes here (unoptimised); linear takes well under a second.
    assert!(started.elapsed().as_secs_f64() < 5.0, "{:?}", started.elapsed());
}

/// Writers printed NaN as `-5.1042355e38`; a singular binding made NaN inverse bind matrices in a .glb.
#[test]
fn writers_refuse_non_finite_values_and_name_them() {
    let s = make_sample(SampleKind::Creature, 300).unwrap();
    let mut k = s.skin.clone();
    let mut bindings = k.bindings().unwrap().to_vec();
    bindings[3] = glam::Mat4::ZERO;
    k.set_bindings(Some(bindings)).unwrap();
    let e = glb::write_glb(&s.skeleton, &k, None, glb::GlbOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "joint 3's binding or its inverse (a singular binding) is not a finite number; nothing was written"
    );
    let mut positions = s.skin.positions().to_vec();
    positions[7].y = f32::NAN;
    let e =
        formats::obj::write_obj(&mut Vec::new(), &positions, s.skin.normals(), None, s.skin.triangles()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "vertex 7's position is not a finite number; nothing was written"
    );
    let mut b = ryu::Buffer::new();
    assert_eq!(formats::fmt_f32(&mut b, f32::NAN), "NaN", "never digits");
}

/// A session naming files elsewhere made Ctrl+S overwrite them without a prompt.
#[test]
fn a_sessions_paths_are_hints_unless_they_name_its_own_files() {
    let d = tempfile::tempdir().unwrap();
    let (here, elsewhere) = (d.path().join("here"), d.path().join("elsewhere"));
    std::fs::create_dir(&here).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    let s = make_sample(SampleKind::Tube, 300).unwrap();
    let write_rig = |dir: &Path| -> (PathBuf, PathBuf) {
        let (sk, kn) = (dir.join("rig.skel"), dir.join("rig.skin"));
        skinbind::atomic::save_atomic(&sk, |w| skel::write_skel(w, &s.skeleton)).unwrap();
        skinbind::atomic::save_atomic(&kn, |w| skin::write_skin(w, &s.skin)).unwrap();
        (sk, kn)
    };
    let (skel_here, skin_here) = write_rig(&here);
    let (skel_there, skin_there) = write_rig(&elsewhere);
    let mut doc = Document::new("rig", s.skeleton.clone(), Some(s.skin.clone()), None);
    let session = here.join("work.skinbind");

    // Saved by the editor beside its files: trusted.
    doc.paths.skel = Some(skel_here.clone());
    doc.paths.skin = Some(skin_here.clone());
    let file = SessionFile::capture(&doc, ViewState::default()).unwrap();
    let (back, _) = file.restore(&session, Origin::Opened).unwrap();
    assert_eq!(back.paths.skel.as_deref(), Some(skel_here.as_path()));
    assert!(back.paths.untrusted.is_empty());

    // The same file after its rig changed on disk: no longer the file it was saved from.
    let mut touched = file.clone();
    touched.paths.stamps[1].len += 1;
    let (back, _) = touched.restore(&session, Origin::Opened).unwrap();
    assert_eq!(back.paths.skel, None);
    assert_eq!(back.paths.untrusted, vec![skel_here.clone(), skin_here.clone()]);

    // Naming files in another folder, stamps and all: read-only.
    doc.paths.skel = Some(skel_there.clone());
    doc.paths.skin = Some(skin_there.clone());
    let hostile = SessionFile::capture(&doc, ViewState::default()).unwrap();
    let (back, _) = hostile.restore(&session, Origin::Opened).unwrap();
    assert_eq!((back.paths.skel.clone(), back.paths.skin.clone()), (None, None));
    assert_eq!(back.paths.untrusted, vec![skel_there.clone(), skin_there.clone()]);
    // The editor's own recovery file, kept elsewhere, is trusted where its files are unchanged.
    let (back, _) = hostile
        .restore(&d.path().join("config/recovery.skinbind"), Origin::Recovery)
        .unwrap();
    assert_eq!(back.paths.skel.as_deref(), Some(skel_there.as_path()));

    // A hand-written session naming a file beside it, without stamps: read-only.
    let mut forged = hostile.clone();
    forged.paths.skel = Some(skel_here.clone());
    forged.paths.skin = None;
    forged.paths.stamps.clear();
    let (back, _) = forged.restore(&session, Origin::Opened).unwrap();
    assert_eq!(back.paths.skel, None);
}

/// `info` printed names raw, so an escape sequence in a joint name reached the terminal. Such a name is not one
/// every writer keeps (`model::names`), so the model refuses it, and text quoting a file is still escaped.
#[test]
fn names_with_control_characters_are_refused_and_text_prints_escaped() {
    let joints = vec![skinbind::model::Joint::new("evil\u{1b}[2J", None, glam::Vec3::ZERO)];
    assert!(matches!(
        Skeleton::new(joints),
        Err(skinbind::model::skeleton::SkeletonError::Name { joint: 0, .. })
    ));
    assert_eq!(formats::printable("evil\u{1b}[2J"), "evil\\u{1b}[2J");
    assert_eq!(formats::printable("plain"), "plain");
}

/// `skinbind ARGS` in `dir`: exit code, stdout, stderr.
fn cli(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_skinbind"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (o.status.code().unwrap(), text(o.stdout), text(o.stderr))
}

/// A generated rig written as `rig.skel` and `rig.skin` in a new folder.
fn rig_folder() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let s = make_sample(SampleKind::Arm, 300).unwrap();
    skinbind::atomic::save_atomic(&d.path().join("rig.skel"), |w| skel::write_skel(w, &s.skeleton)).unwrap();
    skinbind::atomic::save_atomic(&d.path().join("rig.skin"), |w| skin::write_skin(w, &s.skin)).unwrap();
    d
}

/// `bind --report R.json` into a missing folder failed after the .skin was written.
#[test]
fn every_output_is_checked_before_any_is_written() {
    let d = rig_folder();
    let args = [
        "bind",
        "--skel",
        "rig.skel",
        "--skin",
        "rig.skin",
        "-o",
        "out.skin",
        "--report",
        "no/such/r.json",
    ];
    let (code, _, err) = cli(d.path(), &args);
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.trim_end(), "no/such/r.json: the folder no/such does not exist");
    assert!(!d.path().join("out.skin").exists(), "nothing is written");
    let (code, _, err) = cli(d.path(), &["clean", "rig.skin", "--skel", "rig.skel", "-o", "."]);
    assert_eq!(
        (code, err.trim_end()),
        (1, ".: exists and is not a regular file; refused")
    );
}

/// `--smooth 4000000000` ran without end.
#[test]
fn iteration_counts_on_the_command_line_are_bounded() {
    let d = rig_folder();
    let (code, _, err) = cli(
        d.path(),
        &[
            "clean",
            "rig.skin",
            "--skel",
            "rig.skel",
            "-o",
            "c.skin",
            "--smooth",
            "4000000000",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim_end(),
        "skinbind: --smooth `4000000000`: iterations `4000000000` is not a whole number from 0 to 1000"
    );
    assert!(!d.path().join("c.skin").exists());
}

/// 65,535 nested joints made `info` abort on a 4 GB allocation and `convert` write about 6 GB.
#[test]
fn a_skeleton_nested_past_the_limit_is_refused_and_one_at_it_prints_linearly() {
    let d = tempfile::tempdir().unwrap();
    let nest = |depth: usize| format!("{}{}", "balljoint j {\n".repeat(depth), "}\n".repeat(depth));
    std::fs::write(d.path().join("deep.skel"), nest(65_535)).unwrap();
    let (code, _, err) = cli(d.path(), &["info", "deep.skel"]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim_end(),
        "deep.skel:1002:1: expected at most 1000 levels of nested joints, found a joint nested one level deeper"
    );
    std::fs::write(d.path().join("ok.skel"), nest(1001)).unwrap();
    let (code, out, err) = cli(d.path(), &["info", "ok.skel"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.len() < 1001 * 100, "{} bytes", out.len());
    assert!(out.contains("  depth: 1000\n"), "{out}");
    let (code, _, err) = cli(d.path(), &["convert", "ok.skel", "-o", "copy.skel"]);
    assert_eq!(code, 0, "{err}");
    let copy = std::fs::read(d.path().join("copy.skel")).unwrap();
    assert!(copy.len() < 1001 * 200, "{} bytes", copy.len());
}

#[test]
fn info_escapes_control_characters_in_names() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("evil.skel"), "balljoint a\u{1b}]0;pwned\u{7} { }\n").unwrap();
    let (code, out, err) = cli(d.path(), &["info", "evil.skel"]);
    assert_eq!(code, 0, "{err}");
    // Read under the names rule (each control character to `_`), the warning quoting the name escaped.
    assert!(out.contains("0 a_]0;pwned_\n"), "{out}");
    assert!(
        err.contains("joint name `a\\u{1b}]0;pwned\\u{7}` is not one every writer keeps; it is read as `a_]0;pwned_`"),
        "{err}"
    );
    assert!(!out.contains('\u{1b}') && !err.contains('\u{1b}'));
}

/// A singular binding posed with `pose` was written as garbage numbers.
#[test]
fn posing_through_a_singular_binding_is_an_error_naming_it() {
    let d = rig_folder();
    let path = d.path().join("rig.skin");
    let mut k = formats::load_skin(&path, None).unwrap().value;
    let mut b = k.bindings().unwrap().to_vec();
    b[1] = glam::Mat4::ZERO;
    k.set_bindings(Some(b)).unwrap();
    skinbind::atomic::save_atomic(&path, |w| skin::write_skin(w, &k)).unwrap();
    let (code, _, err) = cli(
        d.path(),
        &["pose", "--skel", "rig.skel", "--skin", "rig.skin", "-o", "p.obj"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("is not a finite number; nothing was written"), "{err}");
    assert!(!d.path().join("p.obj").exists());
}
