//! The `skinbind` command's exact output and exit codes (0 ok, 1 bad input, 2 usage).
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(dir: &Path, args: &[&str]) -> Out {
    let o = Command::new(env!("CARGO_BIN_EXE_skinbind"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    Out {
        code: o.status.code().unwrap(),
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
    }
}

const SKEL: &str = "balljoint root {
\toffset 0 0 0
\tballjoint arm {
\t\toffset 1 0 0
\t\trotzlimit 0 0
\t}
}
";

/// Three vertices: one on the root, one on the arm, one half and half.
const SKIN: &str = "positions 3 {
  0 0 0
  1 0 0
  2 0 0
}
skinweights 3 {
  1 0 1
  2 0 0.5 1 0.5
  1 1 1
}
triangles 1 {
  0 1 2
}
";

fn fixture() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("rig.skel"), SKEL).unwrap();
    std::fs::write(d.path().join("rig.skin"), SKIN).unwrap();
    d
}

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

#[test]
fn pose_writes_the_deformed_obj() {
    let d = fixture();
    // Moving the root by 2 in x moves every vertex by exactly 2; the arm's z rotation is limited to 0, so
    // setting it changes nothing.
    let o = run(
        d.path(),
        &[
            "pose",
            "--skel",
            "rig.skel",
            "--skin",
            "rig.skin",
            "--set",
            "root.tx=2",
            "--set",
            "arm.rotz=1",
            "-o",
            "p.obj",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let obj = std::fs::read_to_string(d.path().join("p.obj")).unwrap();
    assert_eq!(
        obj,
        "# skinbind: 3 vertices, 1 triangles\nv 2 0 0\nv 3 0 0\nv 4 0 0\nvn 0 1 0\nvn 0 1 0\nvn 0 1 0\nf 1//1 2//2 3//3\n"
    );
    // A rotation of the root by pi/2 about y turns (x, 0, 0) to (0, 0, -x); DQS and rigid agree here.
    for extra in [&[][..], &["--dqs"], &["--rigid"]] {
        let mut args = vec![
            "pose",
            "--skel",
            "rig.skel",
            "--skin",
            "rig.skin",
            "--set",
            "#0.roty=1.5707964",
            "-o",
            "q.obj",
        ];
        args.extend_from_slice(extra);
        let o = run(d.path(), &args);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let obj = std::fs::read_to_string(d.path().join("q.obj")).unwrap();
        let v: Vec<Vec<f32>> = obj
            .lines()
            .filter(|l| l.starts_with("v "))
            .map(|l| l[2..].split(' ').map(|x| x.parse().unwrap()).collect())
            .collect();
        for (i, p) in v.iter().enumerate() {
            let want = [0.0, 0.0, -(i as f32)];
            assert!(
                p.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6),
                "{extra:?} vertex {i}: {p:?}"
            );
        }
    }
}

#[test]
fn pose_names_bad_joints_as_usage_errors() {
    let d = fixture();
    let base = [
        "pose", "--skel", "rig.skel", "--skin", "rig.skin", "-o", "x.obj", "--set",
    ];
    let cases = [
        ("nope.rotx=1", "skinbind: --set `nope.rotx=1`: no joint named `nope`\n"),
        (
            "arm.tx=1",
            "skinbind: --set `arm.tx=1`: only the root joint has a translation\n",
        ),
        (
            "arm.rotw=1",
            "skinbind: --set `arm.rotw=1`: DOF must be rotx, roty, rotz, tx, ty or tz\n",
        ),
        (
            "arm.rotx=abc",
            "skinbind: --set `arm.rotx=abc`: `abc` is not a finite number\n",
        ),
        (
            "#7.rotx=1",
            "skinbind: --set `#7.rotx=1`: no joint #7: the skeleton has joints #0 to #1\n",
        ),
    ];
    for (set, err) in cases {
        let mut args = base.to_vec();
        args.push(set);
        let o = run(d.path(), &args);
        assert_eq!((o.code, o.stderr.as_str()), (2, err));
    }
}

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
fn sample_writes_a_rig_that_loads_and_poses() {
    let d = fixture();
    let o = run(d.path(), &["sample", "--kind", "tube", "--vertices", "2000", "-o", "t"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let s = skinbind::sample::make_sample(skinbind::sample::SampleKind::Tube, 2000).unwrap();
    assert_eq!(
        o.stdout,
        format!(
            "t.skel: {} joints\nt.skin: {} vertices, {} triangles\n",
            s.skeleton.len(),
            s.skin.vertex_count(),
            s.skin.triangles().len()
        )
    );
    let o = run(
        d.path(),
        &["pose", "--skel", "t.skel", "--skin", "t.skin", "-o", "t.obj"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    // Same bytes for the same arguments.
    let first = std::fs::read(d.path().join("t.skin")).unwrap();
    run(d.path(), &["sample", "--kind", "tube", "--vertices", "2000", "-o", "t"]);
    assert_eq!(first, std::fs::read(d.path().join("t.skin")).unwrap());
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

/// B differs from the fixture's weights at vertex 1 only: (0: 0.5, 1: 0.5) against (1: 1).
/// Mean L1 = (0 + (0.5 + 0.5) + 0) / 3; dominant: vertex 1's tie goes to joint 0, B says 1, so 2 of 3 agree;
/// influences A {v0: 0, v1: 0 and 1, v2: 1} against B {v0: 0, v1: 1, v2: 1}: precision 3/4, recall 3/3.
#[test]
fn compare_prints_the_hand_worked_metrics() {
    let d = fixture();
    std::fs::write(d.path().join("b.skin"), SKIN.replace("2 0 0.5 1 0.5", "1 1 1")).unwrap();
    let o = run(d.path(), &["compare", "rig.skin", "b.skin"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        o.stdout,
        "vertices: 3\nmean L1: 0.3333\ndominant agreement: 0.6667\ninfluence precision: 0.7500\n\
         influence recall: 1.0000\nunweighted vertices: 0 (A), 0 (B)\n"
    );
    let o = run(d.path(), &["compare", "--json", "rig.skin", "rig.skin"]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(
        (v["mean_l1"].as_f64(), v["dominant_agreement"].as_f64()),
        (Some(0.0), Some(1.0))
    );
    std::fs::write(d.path().join("two.skin"), "positions 2 { 0 0 0 1 0 0 }\n").unwrap();
    let o = run(d.path(), &["compare", "rig.skin", "two.skin"]);
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        "rig.skin vs two.skin: the weights cover 3 and 2 vertices; they must be the same mesh\n"
    );
}

#[test]
fn bind_writes_a_complete_skin_and_a_report() {
    let d = fixture();
    let o = run(
        d.path(),
        &["sample", "--kind", "arm", "--vertices", "3000", "-o", "arm"],
    );
    assert_eq!(o.code, 0);
    // The sample's own weights are replaced by the bind.
    let o = run(
        d.path(),
        &[
            "bind", "--skel", "arm.skel", "--skin", "arm.skin", "-o", "out.skin", "--report", "r.json",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let s = skinbind::sample::make_sample(skinbind::sample::SampleKind::Arm, 3000).unwrap();
    let prefix = format!(
        "out.skin: {} vertices bound to {} joints (geodesic, at most 4 influences) in ",
        s.skin.vertex_count(),
        s.skeleton.len()
    );
    let lines: Vec<&str> = o.stdout.lines().collect();
    // The default clean-up after binding: rogue removal (a line), then the summary.
    assert_eq!(lines.len(), 2, "{}", o.stdout);
    assert!(
        lines[0].starts_with("rogue: ") && lines[0].ends_with(" ms)"),
        "{}",
        o.stdout
    );
    assert!(
        lines[1].starts_with(&prefix) && lines[1].ends_with(" ms"),
        "{}",
        o.stdout
    );
    let out = skinbind::formats::load_skin(&d.path().join("out.skin"), Some(s.skeleton.len()))
        .unwrap()
        .value;
    assert_eq!(out.weights().unwrap().unweighted().count(), 0);
    assert_eq!(out.bindings().unwrap().len(), s.skeleton.len());
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(r["vertices"], s.skin.vertex_count());
    assert_eq!(r["method"], "geodesic");
    let stages: Vec<&str> = r["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x[0].as_str().unwrap())
        .collect();
    assert_eq!(
        stages,
        [
            "mesh parts",
            "voxels",
            "bones",
            "distances",
            "weights",
            "mesh graph",
            "rogue",
            "limit",
            "normalise"
        ]
    );
    assert_eq!(r["clean"]["rogue"]["threshold"].as_f64(), Some(0.1));
    assert_eq!(r["clean"]["prune"], serde_json::Value::Null);
    assert_eq!(r["clean"]["limit"]["locks_overridden"], 0);
    // The bound skin poses.
    let o = run(
        d.path(),
        &[
            "pose",
            "--skel",
            "arm.skel",
            "--skin",
            "out.skin",
            "--set",
            "elbow.rotz=1",
            "-o",
            "p.obj",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    // Rigid: one influence per vertex.
    let o = run(
        d.path(),
        &[
            "bind",
            "--skel",
            "arm.skel",
            "--skin",
            "arm.skin",
            "-o",
            "rigid.skin",
            "--rigid",
            "--method",
            "hybrid",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let rigid = skinbind::formats::load_skin(&d.path().join("rigid.skin"), None)
        .unwrap()
        .value;
    let w = rigid.weights().unwrap();
    assert!((0..w.len()).all(|v| w.row(v).0.len() == 1));
}

#[test]
fn bind_usage_and_input_errors() {
    let d = fixture();
    let base = ["bind", "--skel", "rig.skel", "--skin", "rig.skin", "-o", "o.skin"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        run(d.path(), &a)
    };
    for (v, err) in [
        ("nope=0.1", "skinbind: --volume `nope=0.1`: no joint named `nope`\n"),
        (
            "arm=-1",
            "skinbind: --volume `arm=-1`: radius `-1` is not a positive number or `auto`\n",
        ),
        (
            "arm=auto:0",
            "skinbind: --volume `arm=auto:0`: length scale `0` is not a positive number\n",
        ),
        (
            "arm",
            "skinbind: --volume `arm`: expected JOINT=RADIUS[:LENGTH_SCALE]\n",
        ),
    ] {
        let o = with(&["--method", "volume", "--volume", v]);
        assert_eq!((o.code, o.stderr.as_str()), (2, err));
    }
    let o = with(&[
        "--method",
        "volume",
        "--volume",
        "arm=0.5:1.5",
        "--volume",
        "#0=auto",
        "--report",
        "r.json",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(r["volume_radii"][1], 0.5);
    let o = with(&["--blend-ratio", "1"]);
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (2, "skinbind: blend ratio 1 must be a finite number above 1\n")
    );
    assert_eq!(with(&["--max-influences", "0"]).code, 2);
    assert_eq!(with(&["--method", "heat"]).code, 2);
    std::fs::write(d.path().join("one.skel"), "balljoint root {\n}\n").unwrap();
    let o = run(
        d.path(),
        &["bind", "--skel", "one.skel", "--skin", "rig.skin", "-o", "fail.skin"],
    );
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.starts_with("rig.skin:8:11: expected a joint index below 1"),
        "{}",
        o.stderr
    );
    assert!(!d.path().join("fail.skin").exists(), "nothing written on failure");
}

/// Timings vary: `(12.3 ms)` and `in 12.3 ms` become `(# ms)` and `in # ms`.
fn mask_ms(s: &str) -> String {
    let mut out = String::new();
    for line in s.lines() {
        let words: Vec<String> = line
            .split(' ')
            .enumerate()
            .map(|(i, w)| {
                let next_is_ms = line.split(' ').nth(i + 1).is_some_and(|n| n.starts_with("ms"));
                let bare = w.trim_start_matches('(');
                if next_is_ms && bare.parse::<f64>().is_ok() {
                    format!("{}#", &w[..w.len() - bare.len()])
                } else {
                    w.to_string()
                }
            })
            .collect();
        out.push_str(&words.join(" "));
        out.push('\n');
    }
    out
}

fn rows_of(path: &Path) -> Vec<Vec<(u16, f32)>> {
    let skin = skinbind::formats::load_skin(path, None).unwrap().value;
    let w = skin.weights().unwrap();
    (0..w.len())
        .map(|v| {
            let (j, x) = w.row(v);
            j.iter().copied().zip(x.iter().copied()).collect()
        })
        .collect()
}

#[test]
fn clean_prints_each_step_and_writes_hand_worked_weights() {
    let d = fixture();
    let o = run(
        d.path(),
        &[
            "clean", "rig.skin", "--skel", "rig.skel", "-o", "p.skin", "--prune", "0.6",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        mask_ms(&o.stdout),
        "prune: 1 influences removed on 1 vertices (# ms)\np.skin: 3 vertices cleaned in # ms\n"
    );
    // Vertex 1's two halves are both under 0.6: the larger stays, ties to the lower joint.
    assert_eq!(
        rows_of(&d.path().join("p.skin")),
        vec![vec![(0, 1.0)], vec![(0, 1.0)], vec![(1, 1.0)]]
    );

    // A locked joint keeps its weight: the unlocked half is the largest unlocked one and stays.
    let o = run(
        d.path(),
        &[
            "clean", "rig.skin", "--skel", "rig.skel", "-o", "l.skin", "--prune", "0.6", "--lock", "arm",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.starts_with("prune: 0 influences removed on 0 vertices ("),
        "{}",
        o.stdout
    );
    assert_eq!(rows_of(&d.path().join("l.skin")), rows_of(&d.path().join("rig.skin")));

    // One full-strength uniform step on the triangle: each vertex becomes the mean of its two neighbours.
    let o = run(
        d.path(),
        &[
            "clean", "rig.skin", "--skel", "rig.skel", "-o", "s.skin", "--smooth", "1:1",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        mask_ms(&o.stdout),
        "smooth: 1 iterations, 2 vertices changed (# ms)\ns.skin: 3 vertices cleaned in # ms\n"
    );
    assert_eq!(
        rows_of(&d.path().join("s.skin")),
        vec![
            vec![(0, 0.25), (1, 0.75)],
            vec![(0, 0.5), (1, 0.5)],
            vec![(0, 0.75), (1, 0.25)]
        ]
    );
}

#[test]
fn clean_usage_and_input_errors() {
    let d = fixture();
    let base = ["clean", "rig.skin", "--skel", "rig.skel", "-o", "o.skin"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        run(d.path(), &a)
    };
    for (args, err) in [
        (
            &["--smooth", "x"][..],
            "skinbind: --smooth `x`: iterations `x` is not a whole number from 0 to 1000\n",
        ),
        (
            &["--smooth", "2:3"][..],
            "skinbind: --smooth `2:3`: strength `3` is not a number in [0, 1]\n",
        ),
        (
            &["--lock", "root,nope"][..],
            "skinbind: --lock: no joint named `nope`\n",
        ),
        (
            &["--prune", "1.5"][..],
            "skinbind: --prune 1.5: expected a number in [0, 1)\n",
        ),
        (
            &["--rogue", "--rogue-threshold", "1"][..],
            "skinbind: --rogue-threshold 1: expected a number in [0, 1)\n",
        ),
    ] {
        let o = with(args);
        assert_eq!((o.code, o.stderr.as_str()), (2, err), "{args:?}");
    }
    assert_eq!(with(&["--rogue", "--no-rogue"]).code, 2);
    assert_eq!(with(&["--max-influences", "0"]).code, 2);
    std::fs::write(d.path().join("bare.skin"), "positions 1 { 0 0 0 }\n").unwrap();
    let o = run(d.path(), &["clean", "bare.skin", "--skel", "rig.skel", "-o", "o.skin"]);
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (1, "bare.skin: has no skinweights to clean\n")
    );
    assert!(!d.path().join("o.skin").exists(), "nothing written on failure");
}

/// A left/right rig: root at the origin, arm_l at +x, arm_r at -x; one vertex on each side and one on the plane.
const SYM_SKEL: &str = "balljoint root {\n\toffset 0 0 0\n\tballjoint arm_l {\n\t\toffset 1 0 0\n\t}\n\
                        \tballjoint arm_r {\n\t\toffset -1 0 0\n\t}\n}\n";
const SYM_SKIN: &str = "positions 3 {\n  1 0 0\n  0 1 0\n  -1 0 0\n}\nskinweights 3 {\n  2 1 0.8 0 0.2\n  \
                        2 0 0.6 1 0.4\n  1 0 1\n}\ntriangles 1 {\n  0 1 2\n}\n";

#[test]
fn clean_mirrors_and_flips_by_hand_worked_rows() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("sym.skel"), SYM_SKEL).unwrap();
    std::fs::write(d.path().join("sym.skin"), SYM_SKIN).unwrap();
    let o = run(
        d.path(),
        &[
            "clean", "sym.skin", "--skel", "sym.skel", "-o", "m.skin", "--mirror", "x",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        mask_ms(&o.stdout),
        "mirror: 2 vertices written, 2 changed, 1 on the plane, 0 without a partner, 0 joints unpaired (# ms)\n\
         m.skin: 3 vertices cleaned in # ms\n"
    );
    // +x onto -x with arm_l <-> arm_r; the vertex on the plane takes the mean of its row and its swapped row.
    assert_eq!(
        rows_of(&d.path().join("m.skin")),
        vec![
            vec![(0, 0.2), (1, 0.8)],
            vec![(0, 0.6), (1, 0.2), (2, 0.2)],
            vec![(0, 0.2), (2, 0.8)]
        ]
    );
    // -x copies the other way.
    let o = run(
        d.path(),
        &[
            "clean", "sym.skin", "--skel", "sym.skel", "-o", "n.skin", "--mirror", "-x",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(rows_of(&d.path().join("n.skin"))[0], vec![(0, 1.0)]);
    // Flip swaps the sides; twice gives the input back.
    let o = run(
        d.path(),
        &[
            "clean", "sym.skin", "--skel", "sym.skel", "-o", "f.skin", "--mirror", "x", "--flip",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        rows_of(&d.path().join("f.skin")),
        vec![vec![(0, 1.0)], vec![(0, 0.6), (2, 0.4)], vec![(0, 0.2), (2, 0.8)]]
    );
    let o = run(
        d.path(),
        &[
            "clean", "f.skin", "--skel", "sym.skel", "-o", "ff.skin", "--mirror", "x", "--flip",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut input = rows_of(&d.path().join("sym.skin"));
    input.iter_mut().for_each(|r| r.sort_by_key(|e| e.0));
    assert_eq!(rows_of(&d.path().join("ff.skin")), input);
    let o = run(
        d.path(),
        &[
            "clean", "sym.skin", "--skel", "sym.skel", "-o", "q.skin", "--mirror", "q",
        ],
    );
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (
            2,
            "skinbind: --mirror `q`: expected x, y or z, optionally with a sign (-x)\n"
        )
    );
    assert_eq!(
        run(
            d.path(),
            &["clean", "sym.skin", "--skel", "sym.skel", "-o", "q.skin", "--flip"]
        )
        .code,
        2
    );
}

#[test]
fn render_writes_a_png_of_the_requested_size_and_rejects_bad_arguments() {
    let d = fixture();
    let dir = d.path();
    let out = run(
        dir,
        &[
            "render", "--skel", "rig.skel", "--skin", "rig.skin", "--size", "0x10", "-o", "a.png",
        ],
    );
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "skinbind: --size `0x10`: expected WIDTHxHEIGHT, each 1 to 16384\n"
    );
    let out = run(
        dir,
        &[
            "render",
            "--skel",
            "rig.skel",
            "--skin",
            "rig.skin",
            "--weights",
            "leg",
            "-o",
            "a.png",
        ],
    );
    assert_eq!(out.code, 2);
    assert_eq!(out.stderr, "skinbind: --weights: no joint named `leg`\n");
    std::fs::write(dir.join("bad.skel"), "balljoint root { offset 0 0 }\n").unwrap();
    let out = run(
        dir,
        &["render", "--skel", "bad.skel", "--skin", "rig.skin", "-o", "a.png"],
    );
    assert_eq!(out.code, 1);
    assert!(out.stderr.starts_with("bad.skel:1:"), "{}", out.stderr);
    assert!(!dir.join("a.png").exists());

    let out = run(
        dir,
        &[
            "render",
            "--skel",
            "rig.skel",
            "--skin",
            "rig.skin",
            "--set",
            "arm.rotz=0.5",
            "--weights",
            "arm",
            "--size",
            "64x48",
            "-o",
            "a.png",
        ],
    );
    if out.code == 1 && out.stderr.contains("offscreen OpenGL context") && std::env::var("CI").as_deref() != Ok("true")
    {
        eprintln!("notice: no headless GL here; render output not checked: {}", out.stderr);
        return;
    }
    assert_eq!((out.code, out.stdout.as_str(), out.stderr.as_str()), (0, "", ""));
    let img = image::open(dir.join("a.png")).unwrap();
    assert_eq!((img.width(), img.height()), (64, 48));
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

/// The posed error by hand on the fixture (see `eval::posed`): B is the fixture's weights, A puts everything on
/// the root. Swinging `root` moves both alike. `arm` (pivot (1, 0, 0), z locked by its limit) swings 60 degrees
/// about x and y (chord 1): only v2 = (2, 0, 0), with 1 more arm weight in B, moves apart, by 1 about y. So 2 over
/// 30 (pose, vertex) pairs (6 root poses and 4 arm poses, 3 vertices each), on a diagonal of 2.
#[test]
fn compare_with_a_skeleton_gives_the_posed_error() {
    let d = fixture();
    std::fs::write(
        d.path().join("rigid.skin"),
        "positions 3 {\n 0 0 0\n 1 0 0\n 2 0 0\n}\nskinweights 3 {\n 1 0 1\n 1 0 1\n 1 0 1\n}\ntriangles 1 {\n 0 1 2\n}\n",
    )
    .unwrap();
    let o = run(d.path(), &["compare", "rigid.skin", "rig.skin", "--skel", "rig.skel"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let posed: Vec<&str> = o.stdout.lines().skip(6).collect();
    assert_eq!(
        posed,
        [
            "posed error (2 joints, 10 poses; % of the diagonal 2): mean 3.333%, 99th percentile 50.000%, vertices beyond 2% 33.33%",
            "  1 arm: mean 8.333%, max 50.000%",
            "  0 root: mean 0.000%, max 0.000%",
        ]
    );
    let o = run(d.path(), &["compare", "rigid.skin", "rig.skin", "--anim", "x.anim"]);
    assert_eq!(o.code, 2, "--anim needs --skel");
}

/// `--exclude` and `--only` name joints that do not deform; a name not found, or nothing left to deform, is a
/// usage error.
#[test]
fn bind_excludes_controls_by_name() {
    let d = fixture();
    let base = ["bind", "--skel", "rig.skel", "--skin", "rig.skin", "-o", "b.skin"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        run(d.path(), &a)
    };
    let o = with(&["--exclude", "arm"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let k = skinbind::formats::load_skin(&d.path().join("b.skin"), None)
        .unwrap()
        .value;
    let w = k.weights().unwrap();
    assert!((0..w.len()).all(|v| w.row(v).0 == [0]), "everything on the root");
    let o = with(&["--only", "#1"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let k = skinbind::formats::load_skin(&d.path().join("b.skin"), None)
        .unwrap()
        .value;
    let w = k.weights().unwrap();
    assert!((0..w.len()).all(|v| w.row(v).0 == [1]), "everything on the arm");
    let o = with(&["--exclude", "nope"]);
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (2, "skinbind: --exclude: no joint named `nope`\n")
    );
    let o = with(&["--exclude", "root,arm"]);
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (2, "skinbind: no joint deforms: every joint is excluded\n")
    );
    assert_eq!(with(&["--exclude", "arm", "--only", "root"]).code, 2);
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
            .contains("--animation picks one of a .glb/.gltf input's animations"),
        "{}",
        o.stderr
    );
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
    `animation 0`: 0 .. 5.5 s, 174 keys
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

/// Issue 22 item 3: joints that look like controls are left out by default, each named in a warning: the Wolf's
/// IK targets by name and its synthetic root (outside the mesh) by place. `--bind-controls` binds them (each then
/// warned about as looking like a control), and with `--exclude-controls` as well it binds again without the
/// joints warned about and names them on stdout.
#[test]
fn bind_leaves_out_controls_unless_asked_and_exclude_controls_follows_the_warnings() {
    let Some(data) = common::data_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let model = data.join("gltf/quaternius/Wolf.glb");
    let o = run(
        dir.path(),
        &["convert", model.to_str().unwrap(), "-o", "w.skel", "-o", "w.skin"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let bind = |out: &str, extra: &[&str]| {
        let mut args = vec!["bind", "--skel", "w.skel", "--skin", "w.skin", "-o", out];
        args.extend_from_slice(extra);
        run(dir.path(), &args)
    };
    let skel = skinbind::formats::load_skel(&dir.path().join("w.skel")).unwrap().value;
    let controls: Vec<u16> = ["gltf_root", "IKFrontRight", "IKFrontLeft", "IKBackRight", "IKBackLeft"]
        .iter()
        .map(|n| skel.find(n)[0] as u16)
        .collect();
    let weighted = |file: &str| -> Vec<u16> {
        let mut js: Vec<u16> = rows_of(&dir.path().join(file))
            .iter()
            .flat_map(|row| row.iter().map(|(j, _)| *j))
            .filter(|j| controls.contains(j))
            .collect();
        js.sort_unstable();
        js.dedup();
        js
    };
    // By default: none of them is bound, each is named, nothing is left to exclude.
    let o = bind("b.skin", &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    for n in ["IKFrontRight", "IKFrontLeft", "IKBackRight", "IKBackLeft"] {
        assert!(
            o.stderr.contains(&format!(
                "`{n}` is not bound: its name says `ik`, as a control's does; to bind it, use --bind-controls"
            )),
            "{}",
            o.stderr
        );
    }
    assert!(
        o.stderr.contains(
            "`gltf_root` is not bound: it is a root whose pivot lies outside the mesh, as a master root's is; to \
             bind it, use --bind-controls"
        ),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("looks like a control"), "{}", o.stderr);
    assert_eq!(weighted("b.skin"), Vec::<u16>::new());
    let o = bind("e.skin", &["--exclude-controls"]);
    assert_eq!(
        (o.code, o.stdout.contains("excluded as controls")),
        (0, false),
        "{}",
        o.stdout
    );
    assert_eq!(bind("c.skin", &["--exclude-controls", "--only", "Bone"]).code, 2);
    // Asked to, they are bound: the IK targets and the root take weight, each warned about.
    let o = bind("d.skin", &["--bind-controls"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stderr.contains("is not bound"), "{}", o.stderr);
    assert!(
        o.stderr.contains("`gltf_root` looks like a control (a root"),
        "{}",
        o.stderr
    );
    let mut all = controls.clone();
    all.sort_unstable();
    assert_eq!(weighted("d.skin"), all);
    // Bound and then excluded: all five named on stdout in joint order, none weighted.
    let o = bind("f.skin", &["--bind-controls", "--exclude-controls"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut names: Vec<(u16, &str)> = controls
        .iter()
        .zip(["gltf_root", "IKFrontRight", "IKFrontLeft", "IKBackRight", "IKBackLeft"])
        .map(|(j, n)| (*j, n))
        .collect();
    names.sort_unstable();
    let line: Vec<&str> = names.iter().map(|x| x.1).collect();
    assert_eq!(
        o.stdout.lines().next(),
        Some(format!("excluded as controls: {}", line.join(", ")).as_str())
    );
    assert_eq!(weighted("f.skin"), Vec::<u16>::new());
}
