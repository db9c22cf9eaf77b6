//! Hostile files, second pass (issue 39): absurd `.anim` ranges and key times, quadratic inputs (unknown OBJ
//! keywords, repeated influences), and outputs that are inputs. Each case ends with a located error or the
//! right result within 5 s; the CLI runs under a 2 GiB address-space limit (`ulimit -v`), the library cases
//! under the peak-heap counter.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::cli::{Out, SKEL, SKIN, fixture};
use egui::Key as EguiKey;
use egui_kittest::kittest::Queryable;
use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAlloc, PeakMemAllocTrait};
use skinbind::app::FakeDialog;
use skinbind::app::document::Document;
use skinbind::formats::{obj, skin};
use skinbind::model::Clip;
use skinbind::sample::SampleKind;

#[global_allocator]
static ALLOC: &PeakMemAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

const LIMIT: Duration = Duration::from_secs(5);
const MEMORY: usize = 2 << 30;

/// `skinbind ARGS` in `dir` under a 2 GiB address-space limit, and how long it took (at most 5 s).
fn run_bounded(dir: &Path, args: &[&str]) -> Out {
    let start = Instant::now();
    let o = Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!("ulimit -v {}; exec \"$0\" \"$@\"", MEMORY >> 10))
        .arg(env!("CARGO_BIN_EXE_skinbind"))
        .args(args)
        .output()
        .unwrap();
    let took = start.elapsed();
    let out = Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
    };
    assert!(took < LIMIT, "{args:?} took {took:?}: {}", out.stderr);
    out
}

fn last_line(s: &str) -> &str {
    s.lines().last().unwrap_or("")
}

/// The fixture rig (3 vertices, 2 joints) and `a.anim` with `range`.
fn rig_with_range(range: &str) -> tempfile::TempDir {
    let d = fixture();
    std::fs::write(d.path().join("a.anim"), format!("animation {{\nrange {range}\n}}\n")).unwrap();
    d
}

fn check_anim(d: &Path) -> Out {
    run_bounded(
        d,
        &["check", "--skel", "rig.skel", "--skin", "rig.skin", "--anim", "a.anim"],
    )
}

/// A 26-byte file asked for 3e10 frames: a 120 GB allocation and SIGABRT.
#[test]
fn check_anim_range_1e9_is_refused_within_5s() {
    let d = rig_with_range("0 1e9");
    let o = check_anim(d.path());
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(
        last_line(&o.stderr),
        "a.anim: the animation's range 0 .. 1e9 is 3e10 frames at 30 per second for 5 vertices and joints: \
         1.5e11 in all, more than the 5e7 a check takes"
    );
    // The reader said so first, where the range is.
    assert!(
        o.stderr.starts_with(
            "a.anim:2:1: warning: the animation's range 0 .. 1e9 is 3e10 frames at 30 per second, more than the \
             65535 frames (about 36 minutes at 30 per second) a sampled timeline holds"
        ),
        "{}",
        o.stderr
    );
}

/// `range 0 3e38` panicked with a capacity overflow.
#[test]
fn check_anim_range_3e38_is_refused_without_a_panic() {
    let d = rig_with_range("0 3e38");
    let o = check_anim(d.path());
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        last_line(&o.stderr).starts_with("a.anim: the animation's range 0 .. 3e38 is 9e39 frames"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

/// `range 0 1e7` passed the old limit and still allocated 9.6 GB.
#[test]
fn check_anim_range_1e7_is_refused_before_allocating() {
    let d = rig_with_range("0 1e7");
    let o = check_anim(d.path());
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        last_line(&o.stderr).starts_with("a.anim: the animation's range 0 .. 1e7 is 3e8 frames"),
        "{}",
        o.stderr
    );
}

/// `compare --anim` with `range 0 1e7` ran for minutes.
#[test]
fn compare_anim_range_1e7_is_refused_within_5s() {
    let d = rig_with_range("0 1e7");
    let o = run_bounded(
        d.path(),
        &[
            "compare", "rig.skin", "rig.skin", "--skel", "rig.skel", "--anim", "a.anim",
        ],
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(
        last_line(&o.stderr),
        "a.anim: the animation's range 0 .. 1e7 is 3e8 frames at 30 per second for 5 vertices and joints: \
         1.5e9 in all, more than the 5e7 a comparison takes"
    );
}

/// Past the frame limit but within the work budget of a tiny rig: the frame limit still holds.
#[test]
fn check_anim_range_past_65535_frames_is_refused_on_a_tiny_rig() {
    let d = rig_with_range("0 3000");
    let o = check_anim(d.path());
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(
        last_line(&o.stderr),
        "a.anim: the animation's range 0 .. 3000 is 90001 frames at 30 per second, more than the 65535 frames \
         (about 36 minutes at 30 per second) a sampled timeline holds"
    );
}

/// A reversed or negative range is all at its start: one frame, a right result.
#[test]
fn check_anim_negative_and_reversed_ranges_check_one_frame() {
    for range in ["5 -1e9", "-1e9 -1e9", "-3e38 3e38"] {
        let d = rig_with_range(range);
        let o = check_anim(d.path());
        assert_eq!(o.code, 0, "{range}: {}", o.stderr);
        assert!(o.stdout.starts_with("checked 3 vertices, "), "{range}: {}", o.stdout);
    }
}

/// Keys at the ends of f32 with cycling extrapolation, and keys a hair apart with huge values: the check
/// answers (no panic, no NaN abort) within the limits.
#[test]
fn check_anim_huge_key_times_and_slopes_answer_within_5s() {
    let d = fixture();
    let channel = |keys: &str| format!("channel {{\nextrapolate cycle bounce\nkeys 2 {{\n{keys}\n}}\n}}\n");
    let mut text = String::from("animation {\nrange -1 1\nnumchannels 9\n");
    for k in [
        "-3e38 0 smooth smooth\n3e38 1 linear linear",
        "0 -3e38 linear linear\n1e-30 3e38 linear linear",
        "-1e30 1e30 1e38 -1e38\n1e30 -1e30 smooth flat",
    ] {
        for _ in 0..3 {
            text += &channel(k);
        }
    }
    text += "}\n";
    std::fs::write(d.path().join("a.anim"), text).unwrap();
    let o = check_anim(d.path());
    assert!(o.code == 0 || o.code == 1, "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

/// A small range is checked frame by frame: 31 frames of a one-second clip.
#[test]
fn check_anim_range_of_one_second_measures_31_frames() {
    let d = rig_with_range("0 1");
    let poses = |args: &[&str]| {
        let o = run_bounded(d.path(), args);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        v["poses"].as_u64().unwrap()
    };
    let rig = ["check", "--skel", "rig.skel", "--skin", "rig.skin", "--json"];
    let with = poses(&[&rig[..], &["--anim", "a.anim"]].concat());
    assert_eq!(with - poses(&rig), 31);
}

/// Posing at one time takes any range (the reader's warning names it); export refuses to sample it.
#[test]
fn pose_takes_a_huge_range_and_glb_export_refuses_it() {
    let d = rig_with_range("0 1e9");
    let o = run_bounded(
        d.path(),
        &[
            "pose", "--skel", "rig.skel", "--skin", "rig.skin", "--anim", "a.anim", "--time", "5e8", "-o", "p.obj",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("a.anim:2:1: warning: "), "{}", o.stderr);
    let o = run_bounded(d.path(), &["convert", "rig.skel", "rig.skin", "a.anim", "-o", "x.glb"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stderr.contains("is 30000000001 frames"), "{}", o.stderr);
    assert!(!d.path().join("x.glb").exists());
}

/// 200,000 distinct unknown keywords took 37 s: a list searched per keyword.
#[test]
fn obj_with_200k_unknown_keywords_reads_within_5s() {
    let mut text = String::from("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    for i in 0..200_000 {
        text += &format!("k{i}\n");
    }
    ALLOC.reset_peak_memory();
    let start = Instant::now();
    let p = obj::read_obj(&mut text.as_bytes(), None).unwrap();
    let took = start.elapsed();
    assert!(took < LIMIT, "{took:?}");
    assert!(ALLOC.get_peak_memory() < MEMORY);
    assert_eq!(p.value.vertex_count(), 3);
    assert_eq!(p.warnings.len(), 17);
    assert_eq!(
        p.warnings[16].message,
        "199984 more lines of other statements that are not part of a skin skipped (the first 16 kinds are named)"
    );
}

/// A row of 65,535 influences (repeats merged) took 4 s at 2.5 MB and 19 s at 17 MB.
#[test]
fn skin_rows_of_65535_repeated_influences_read_within_5s() {
    let rows = 8;
    let mut text = format!("positions {rows} {{\n");
    for i in 0..rows {
        text += &format!("{i} 0 0\n");
    }
    text += &format!("}}\nskinweights {rows} {{\n");
    for r in 0..rows {
        text += "65535";
        for i in 0..65_535u32 {
            // Half the entries repeat a joint already in the row.
            text += &format!(" {} 0.5", (i * 7919 + r) % 32_768);
        }
        text += "\n";
    }
    text += "}\n";
    ALLOC.reset_peak_memory();
    let start = Instant::now();
    let p = skin::read_skin(text.as_bytes(), Some(text.len() as u64), None).unwrap();
    let took = start.elapsed();
    assert!(took < LIMIT, "{took:?} for {} bytes", text.len());
    assert!(ALLOC.get_peak_memory() < MEMORY);
    let w = p.value.weights().unwrap();
    assert_eq!(w.row(0).0.len(), 32_768);
    assert!((w.row(0).1.iter().sum::<f32>() - 1.0).abs() < 1e-3);
}

/// `check --report K.skin` overwrote the skin with JSON.
#[test]
fn check_report_over_its_own_skin_is_refused_with_exit_2() {
    let d = fixture();
    let o = run_bounded(
        d.path(),
        &[
            "check", "--skel", "rig.skel", "--skin", "rig.skin", "--report", "rig.skin",
        ],
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(
        o.stderr,
        "skinbind: --report rig.skin is also an input (--skin rig.skin): an output may not overwrite an input; \
         choose another path\n"
    );
    assert_eq!(std::fs::read_to_string(d.path().join("rig.skin")).unwrap(), SKIN);
}

/// The same file through a symlink, a hard link or another spelling of its path.
#[cfg(unix)]
#[test]
fn outputs_over_inputs_through_links_are_refused_by_every_writing_command() {
    let d = fixture();
    let p = d.path();
    std::os::unix::fs::symlink("rig.skin", p.join("soft.skin")).unwrap();
    std::fs::hard_link(p.join("rig.skin"), p.join("hard.skin")).unwrap();
    std::fs::hard_link(p.join("rig.skel"), p.join("hard.skel")).unwrap();
    std::fs::write(p.join("a.anim"), "animation {\nrange 0 1\n}\n").unwrap();
    std::fs::create_dir(p.join("sub")).unwrap();
    let cases: [&[&str]; 9] = [
        &[
            "check",
            "--skel",
            "rig.skel",
            "--skin",
            "rig.skin",
            "--report",
            "soft.skin",
        ],
        &[
            "check",
            "--skel",
            "rig.skel",
            "--skin",
            "rig.skin",
            "--anim",
            "a.anim",
            "--report",
            "sub/../a.anim",
        ],
        &["bind", "--skel", "rig.skel", "--skin", "rig.skin", "-o", "hard.skin"],
        &[
            "bind",
            "--skel",
            "rig.skel",
            "--skin",
            "rig.skin",
            "-o",
            "new.skin",
            "--report",
            "hard.skel",
        ],
        &["clean", "hard.skin", "--skel", "rig.skel", "-o", "rig.skin"],
        &["pose", "--skel", "rig.skel", "--skin", "rig.skin", "-o", "soft.skin"],
        &[
            "pose", "--skel", "rig.skel", "--skin", "rig.skin", "--anim", "a.anim", "-o", "./a.anim",
        ],
        &["convert", "rig.skel", "rig.skin", "-o", "hard.skel"],
        &["render", "--skel", "rig.skel", "--skin", "rig.skin", "-o", "soft.skin"],
    ];
    for args in cases {
        let o = run_bounded(p, args);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(
            o.stderr.starts_with("skinbind: ") && o.stderr.contains("an output may not overwrite an input"),
            "{args:?}: {}",
            o.stderr
        );
    }
    assert_eq!(std::fs::read_to_string(p.join("rig.skin")).unwrap(), SKIN);
    assert_eq!(std::fs::read_to_string(p.join("rig.skel")).unwrap(), SKEL);
    // Two outputs that are one file.
    let o = run_bounded(
        p,
        &[
            "bind", "--skel", "rig.skel", "--skin", "rig.skin", "-o", "n.skin", "--report", "./n.skin",
        ],
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert_eq!(
        o.stderr,
        "skinbind: --report ./n.skin is the same file as --output n.skin: each output needs its own path\n"
    );
    assert!(!p.join("n.skin").exists());
}

/// The editor's Check panel with Animation frames ticked (off by default since issue 43, as the command line's
/// `--anim`): `range 0 1e9` killed the window with the user's work. Now the check ends with the message in the
/// status bar, and scrubbing and playing go on.
#[test]
fn editor_check_of_a_range_1e9_clip_reports_an_error_and_keeps_running() {
    let mut doc = Document::sample(SampleKind::Arm, 300).unwrap();
    doc.clip = Some(Clip::new((0.0, 1e9), Vec::new()));
    let mut h = common::gui::harness_with(doc, FakeDialog::new(), [1800.0, 1000.0]);
    h.get_by_label("View").click();
    h.run();
    h.get_by_label("Check panel").click();
    h.run();
    h.key_press(EguiKey::Escape);
    h.run();
    h.get_by_label("Options").click();
    h.run();
    h.get_by_label("Animation frames").click();
    h.run();
    let start = Instant::now();
    h.get_by_label("Run check").click();
    h.run_steps(2);
    common::gui::wait_for_idle(&mut h, 5.0);
    assert!(start.elapsed() < LIMIT);
    let status = &h.state().status().text;
    assert!(
        status.contains("the animation's range 0 .. 1e9 is 3e10 frames"),
        "{status:?}"
    );
    assert!(h.state().check_report().is_none());
    // Playing on across the huge range.
    h.get_by_label("Play").click();
    h.run_steps(5);
    assert!(h.state().playback().time.is_finite());
}

/// The `.glb` export is held to the glTF import's own budget, so a clip at the longest an export takes reads
/// back (an export once allowed three times the values the import samples, and such a clip came back skipped).
#[test]
fn the_longest_clip_an_export_takes_reads_back() {
    use skinbind::formats::{glb, gltf::load_gltf};
    use skinbind::model::{Channel, Extrapolation, Key, Tangent};
    let s = skinbind::sample::make_sample(SampleKind::Arm, 300).unwrap();
    let joints = s.skeleton.len();
    // The longest range an export takes: the frame limit, or the channel budget, whichever binds first.
    let by_budget = glb::MAX_ANIMATION_SAMPLES / (3 + 3 * joints);
    let frames = by_budget.min(skinbind::model::MAX_FRAMES);
    let span = (frames - 1) as f32 / glb::ANIMATION_FPS;
    let key = |time: f32, value: f32| Key {
        time,
        value,
        tangent_in: Tangent::Linear,
        tangent_out: Tangent::Linear,
    };
    let channels = (0..Clip::channels_for(joints))
        .map(|_| {
            Channel::new(
                Extrapolation::Constant,
                Extrapolation::Constant,
                vec![key(0.0, 0.0), key(span, 0.5)],
            )
        })
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let clip = Clip::new((0.0, span), channels);
    let bytes = glb::write_glb(&s.skeleton, &s.skin, Some(&clip), glb::GlbOptions::default()).unwrap();
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("long.glb");
    std::fs::write(&path, bytes).unwrap();
    let back = load_gltf(&path, None).unwrap();
    assert_eq!(back.value.animations.len(), 1, "{:?}", back.warnings);
    // One frame more is refused on export.
    let longer = Clip {
        range: (0.0, span + 2.0 / glb::ANIMATION_FPS),
        ..clip
    };
    assert!(glb::write_glb(&s.skeleton, &s.skin, Some(&longer), glb::GlbOptions::default()).is_err());
}
