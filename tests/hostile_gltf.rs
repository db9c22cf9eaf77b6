//! Hostile glTF files, second pass (issue 39): each test builds a small file that once cost seconds and
//! gigabytes, panicked, or lost data without a word, and checks that it now ends, within 5 s and 2 GiB, in a
//! located error or the right result. Library calls are measured in this process (time, and peak heap through
//! a counting allocator); CLI runs under `ulimit -v` of 2 GiB.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::gltf_build::{Spec, glb, model, with};
use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAlloc, PeakMemAllocTrait};
use serde_json::json;
use skinbind::formats::gltf::{AnimationChoice, GltfRig, load_gltf, load_gltf_with};
use skinbind::formats::{FileError, Parsed};

#[global_allocator]
static ALLOC: &PeakMemAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

const TIME: Duration = Duration::from_secs(5);
const MEMORY: usize = 2 << 30;

/// `f`, checked to take under 5 s and under 2 GiB of peak heap (tests run in parallel, so the peak is an upper
/// bound on this one's).
fn bounded<T>(f: impl FnOnce() -> T) -> T {
    ALLOC.reset_peak_memory();
    let began = Instant::now();
    let out = f();
    let (took, peak) = (began.elapsed(), ALLOC.get_peak_memory());
    assert!(took < TIME, "took {took:?}");
    assert!(peak < MEMORY, "peak heap {peak} bytes");
    out
}

/// The model of `spec` edited by `edit`, written as `model.glb` in `dir`.
fn write(dir: &Path, spec: &Spec, edit: impl FnOnce(serde_json::Value) -> serde_json::Value) -> std::path::PathBuf {
    let (json, bin) = model(spec);
    let path = dir.join("model.glb");
    std::fs::write(&path, glb(&edit(json), &bin)).unwrap();
    path
}

const SMALL: Spec = Spec {
    joints: 4,
    seconds: 2.0,
};
const HOUR: Spec = Spec {
    joints: 300,
    seconds: 3600.0,
};

fn load(path: &Path) -> Result<Parsed<GltfRig>, FileError> {
    bounded(|| load_gltf(path, None))
}

fn messages(p: &Parsed<GltfRig>) -> Vec<String> {
    p.warnings.iter().map(|w| w.message.clone()).collect()
}

/// `skinbind ARGS` in `dir` under a 2 GiB address-space limit, checked to end within 5 s: exit code, stderr.
fn cli(dir: &Path, args: &[&str]) -> (i32, String) {
    let began = Instant::now();
    let o = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2097152 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_skinbind"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(began.elapsed() < TIME, "skinbind {args:?} took {:?}", began.elapsed());
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const OVER_BUDGET: &str = "animation `long` (animations[0]) was not imported: 3600 s is 108001 frames";

/// A 19 KB .glb (one two-key sampler shared by every joint, lasting an hour) cost `info` 4 s and 430 MB.
#[test]
fn info_samples_no_animation() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), &HOUR, |j| j);
    let (code, err) = cli(d.path(), &["info", "--json", "model.glb"]);
    assert_eq!(code, 0, "{err}");
    // A small clip is described from its keys: range, keys in the file and what sampling would cost.
    let small = d.path().join("small");
    std::fs::create_dir(&small).unwrap();
    write(&small, &SMALL, |j| j);
    let o = Command::new(env!("CARGO_BIN_EXE_skinbind"))
        .args(["info", "model.glb"])
        .current_dir(&small)
        .output()
        .unwrap();
    let out = String::from_utf8(o.stdout).unwrap();
    // 4 channels of 2 keys; 61 frames of 3 + 3 * 4 channels.
    assert!(
        out.contains("  clips: 1\n    `long`: 0 .. 2 s, 8 keys, 915 samples\n"),
        "{out}"
    );
}

/// An 83 KB .glb cost `convert -o x.skel` 35 s and 3 GB (it sampled the animation nobody asked for).
#[test]
fn convert_to_skel_samples_no_animation() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), &HOUR, |j| j);
    let (code, err) = cli(d.path(), &["convert", "model.glb", "-o", "x.skel", "-o", "x.skin"]);
    assert_eq!(code, 0, "{err}");
    assert!(d.path().join("x.skel").exists() && d.path().join("x.skin").exists());
}

/// `convert -o x.anim` wrote a 1.95 GB .anim: now the clip past the budget is skipped, named, before anything
/// is allocated for it, and the .anim is not written.
#[test]
fn an_animation_past_the_sample_budget_is_skipped_naming_it() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), &HOUR, |j| j);
    let (code, err) = cli(d.path(), &["convert", "model.glb", "-o", "x.anim"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(OVER_BUDGET), "{err}");
    assert!(err.contains("pass the budget of 4194304 samples"), "{err}");
    assert!(err.contains("x.anim: not written: model.glb has no animation"), "{err}");
    assert!(!d.path().join("x.anim").exists());
    // In the library, every choice skips it the same way, and the skeleton and skin still open.
    let path = d.path().join("model.glb");
    for choice in [AnimationChoice::All, AnimationChoice::First, AnimationChoice::None] {
        let p = bounded(|| load_gltf_with(&path, None, &choice)).unwrap();
        assert!(messages(&p).iter().any(|m| m.contains(OVER_BUDGET)), "{:?}", p.warnings);
        assert_eq!(p.value.skeleton.len(), 300);
        assert!(p.value.animations.is_empty() && p.value.summaries.is_empty());
    }
}

/// A clip within the budget samples, and only the one asked for.
#[test]
fn a_clip_within_the_budget_is_sampled_only_when_asked_for() {
    let d = tempfile::tempdir().unwrap();
    let path = write(d.path(), &SMALL, |j| j);
    let all = load(&path).unwrap().value;
    assert_eq!(all.animations.len(), 1);
    assert_eq!(all.animations[0].clip.range, (0.0, 2.0));
    let none = bounded(|| load_gltf_with(&path, None, &AnimationChoice::None))
        .unwrap()
        .value;
    assert!(none.animations.is_empty());
    assert_eq!(none.summaries[0].seconds, 2.0);
    assert_eq!((none.summaries[0].keys, none.summaries[0].samples), (8, 915));
    let named = AnimationChoice::Named("long".into());
    let one = bounded(|| load_gltf_with(&path, None, &named)).unwrap().value;
    assert_eq!(one.animations, all.animations);
    let (code, err) = cli(d.path(), &["convert", "model.glb", "-o", "x.anim"]);
    assert_eq!(code, 0, "{err}");
}

/// A sampler input of count 0 indexed past its (empty) key times and panicked.
#[test]
fn a_sampler_input_of_count_zero_drops_its_channels() {
    let d = tempfile::tempdir().unwrap();
    let path = write(d.path(), &SMALL, |j| {
        let j = with(j, "/accessors/5/count", json!(0));
        with(j, "/accessors/6/count", json!(0))
    });
    let p = load(&path).unwrap();
    let m = messages(&p);
    assert!(
        m.contains(
            &"animations[0].channels[3] (animation `long`) was dropped: its key times (accessor 5) are empty".into()
        ),
        "{m:?}"
    );
    assert_eq!(p.value.skeleton.len(), 4);
    assert!(p.value.animations.is_empty());
}

/// A channel whose target node is past the nodes reached an `unwrap` inside the gltf crate.
#[test]
fn a_channel_past_the_nodes_is_dropped_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let path = write(d.path(), &SMALL, |j| {
        with(j, "/animations/0/channels/2/target/node", json!(99))
    });
    let p = load(&path).unwrap();
    assert!(
        messages(&p).contains(
            &"animations[0].channels[2] (animation `long`) was dropped: expected a target node below 5, found 99"
                .into()
        ),
        "{:?}",
        p.warnings
    );
    // The other channels still make the clip.
    assert_eq!(p.value.animations.len(), 1);
}

/// A channel whose path is `matrix` (which glTF does not animate) panicked in the gltf crate.
#[test]
fn a_matrix_channel_is_dropped_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let path = write(d.path(), &SMALL, |j| {
        with(j, "/animations/0/channels/1/target/path", json!("matrix"))
    });
    let p = load(&path).unwrap();
    let m = messages(&p);
    assert!(
        m.iter().any(|w| w.starts_with("animations[0].channels[1] (animation `long`) was dropped: expected a target path of translation, rotation, scale or weights")),
        "{m:?}"
    );
    assert_eq!(p.value.animations.len(), 1);
}

/// A sampler naming a missing accessor refused the whole model; now it goes, with its channels.
#[test]
fn a_sampler_past_the_accessors_is_dropped_with_its_channels() {
    let d = tempfile::tempdir().unwrap();
    let path = write(d.path(), &SMALL, |j| {
        with(j, "/animations/0/samplers/0/input", json!(42))
    });
    let p = load(&path).unwrap();
    let m = messages(&p);
    assert!(
        m.contains(
            &"animations[0].samplers[0] (animation `long`) was dropped: expected an input accessor below 7, found 42"
                .into()
        ),
        "{m:?}"
    );
    assert!(
        m.contains(&"animations[0].channels[0] (animation `long`) was dropped: its sampler 0 was dropped".into()),
        "{m:?}"
    );
    assert_eq!(p.value.skeleton.len(), 4);
    assert!(p.value.animations.is_empty());
}

/// A cycle among a skin's joints dropped two joints and moved their weights to the root without a word.
#[test]
fn a_node_cycle_among_the_joints_is_refused_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let path = write(d.path(), &SMALL, |j| with(j, "/nodes/2/children", json!([1])));
    let e = load(&path).unwrap_err().to_string();
    assert!(e.contains("nodes[1].children: expected a tree, found a cycle"), "{e}");
    assert!(e.contains("nodes 1 -> 2 -> 1"), "{e}");
    assert!(e.contains("skins[0].joints[1] (node 1)"), "{e}");
    // A node that is its own child, too.
    let path = write(d.path(), &SMALL, |j| with(j, "/nodes/3/children", json!([3])));
    let e = load(&path).unwrap_err().to_string();
    assert!(e.contains("nodes[3].children: expected a tree, found a cycle"), "{e}");
}

/// A sparse file of `size` bytes in `dir` (the model's buffer at its start) and a `model.gltf` naming it with
/// `byteLength` `declared`.
fn sparse_model(dir: &Path, size: u64, declared: u64) {
    let (json, bin) = model(&SMALL);
    let big = dir.join("big.bin");
    std::fs::write(&big, &bin).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(size)
        .unwrap();
    let json = with(json, "/buffers/0", json!({ "uri": "big.bin", "byteLength": declared }));
    std::fs::write(dir.join("model.gltf"), serde_json::to_vec(&json).unwrap()).unwrap();
}

/// A byteLength of 1e18 naming a 20 GiB sparse file was read until memory ran out.
#[test]
fn a_lying_byte_length_is_refused_before_reading() {
    let d = tempfile::tempdir().unwrap();
    sparse_model(d.path(), 20 << 30, 1_000_000_000_000_000_000);
    let (code, err) = cli(d.path(), &["info", "model.gltf"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("buffer 0: expected a byteLength of at most the file's 21474836480 bytes"),
        "{err}"
    );
    assert!(err.contains("found 1000000000000000000"), "{err}");
}

/// A byteLength that is true of a 20 GiB file costs only the bytes the buffer views cover.
#[test]
fn only_the_bytes_the_buffer_views_cover_are_read() {
    let d = tempfile::tempdir().unwrap();
    sparse_model(d.path(), 20 << 30, 20 << 30);
    let (code, err) = cli(d.path(), &["convert", "model.gltf", "-o", "x.skin"]);
    assert_eq!(code, 0, "{err}");
    // A view that does cover gigabytes is refused before it is read.
    let (json, _) = model(&SMALL);
    let json = with(
        json,
        "/buffers/0",
        json!({ "uri": "big.bin", "byteLength": 20u64 << 30 }),
    );
    let json = with(json, "/bufferViews/6/byteLength", json!(2u64 << 30));
    std::fs::write(d.path().join("model.gltf"), serde_json::to_vec(&json).unwrap()).unwrap();
    let (code, err) = cli(d.path(), &["info", "model.gltf"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("buffer 0: its buffer views cover 2147484016 bytes; with the buffers before it that is more than the 1073741824 bytes one import reads"),
        "{err}"
    );
}

/// `info --json` printed `null` for an infinite bound.
#[test]
fn a_non_finite_position_is_refused_naming_its_accessor() {
    let d = tempfile::tempdir().unwrap();
    let (json, mut bin) = model(&SMALL);
    bin[4..8].copy_from_slice(&f32::INFINITY.to_le_bytes());
    std::fs::write(d.path().join("model.glb"), glb(&json, &bin)).unwrap();
    let e = load(&d.path().join("model.glb")).unwrap_err().to_string();
    assert!(
        e.ends_with(
            "meshes[0].primitives[0].attributes.POSITION (accessor 0): expected finite numbers, found (0 inf 0) at vertex 0"
        ),
        "{e}"
    );
    // A NaN, in an accessor that also serves as the normals.
    let (json, mut bin) = model(&SMALL);
    bin[12..16].copy_from_slice(&f32::NAN.to_le_bytes());
    let json = with(json, "/meshes/0/primitives/0/attributes/NORMAL", json!(0));
    std::fs::write(d.path().join("model.glb"), glb(&json, &bin)).unwrap();
    let e = load(&d.path().join("model.glb")).unwrap_err().to_string();
    assert!(
        e.contains("attributes.POSITION (accessor 0): expected finite numbers, found (NaN 0 0) at vertex 1"),
        "{e}"
    );
}

/// The text readers already refuse numbers that overflow `f32` (`1e39`) or spell an infinity, with a line and
/// column.
#[test]
fn skin_and_obj_readers_refuse_non_finite_positions() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("a.skin"), "positions 1 {\n  0 1e39 0\n}\n").unwrap();
    let e = skinbind::formats::load_skin(&d.path().join("a.skin"), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("a.skin:2:"), "{e}");
    for v in ["inf", "1e39", "NaN"] {
        std::fs::write(d.path().join("a.obj"), format!("v 0 {v} 0\n")).unwrap();
        let e = skinbind::formats::load_obj(&d.path().join("a.obj"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a.obj:1:5: expected a number"), "{v}: {e}");
    }
}
