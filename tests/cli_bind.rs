//! `skinbind bind` and `compare`: the bound skin and its report, excluded joints and controls, the
//! hand-worked comparison metrics, with exact messages and exit codes.
#![allow(clippy::unwrap_used)]

mod common;

use common::cli::{SKIN, fixture, rows_of, run};

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
    // The default clean-up after binding: rogue removal and softening (a line each), then the summary.
    assert_eq!(lines.len(), 3, "{}", o.stdout);
    assert!(
        lines[0].starts_with("rogue: ") && lines[0].ends_with(" ms)"),
        "{}",
        o.stdout
    );
    assert!(
        lines[1].starts_with("soften: ") && lines[1].contains(" vertices changed (") && lines[1].ends_with(" ms)"),
        "{}",
        o.stdout
    );
    assert!(
        lines[2].starts_with(&prefix) && lines[2].ends_with(" ms"),
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
            "layers",
            "mesh graph (beside the bind)",
            "rogue",
            "soften",
            "limit",
            "normalise"
        ]
    );
    assert_eq!(r["clean"]["rogue"]["threshold"].as_f64(), Some(0.1));
    assert!(r["clean"]["soften"]["changed_vertices"].as_u64().unwrap() > 0);
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
    // Softening is off with --no-soften, after a rigid bind (one influence leaves no blend to soften) and after
    // the line method; --soften turns it on after the line method, and with --no-soften is a usage error.
    let bind_with = |extra: &[&str]| {
        let mut a = vec!["bind", "--skel", "arm.skel", "--skin", "arm.skin", "-o", "o.skin"];
        a.extend_from_slice(extra);
        let o = run(d.path(), &a);
        (o.code, o.stdout.lines().any(|l| l.starts_with("soften: ")), o.stderr)
    };
    let (code, softened, err) = bind_with(&["--no-soften"]);
    assert_eq!(code, 0, "{err}");
    assert!(!softened);
    assert!(!bind_with(&["--rigid"]).1);
    assert!(!bind_with(&["--method", "line"]).1);
    assert!(bind_with(&["--method", "line", "--soften"]).1);
    let (code, _, err) = bind_with(&["--soften", "--no-soften"]);
    assert_eq!(code, 2);
    assert!(err.contains("--no-soften"), "{err}");
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

/// A mesh without bindings is bound in the skeleton file's pose, or with `--bind-pose rest` at rest. The sample
/// creature's `.skel` holds a walking pose while its mesh is modelled at rest: its mesh as an OBJ (no bindings),
/// bound in the file's pose, leaves 12 joints without weight and is warned about, naming the flag; bound with
/// `--bind-pose rest` it gets exactly the weights the `.skin` gets from its own bindings (which are the rest), with
/// no warning. On a mesh with bindings the flag does not apply, and says so.
#[test]
fn a_mesh_modelled_at_rest_is_warned_about_and_binds_with_bind_pose_rest() {
    let d = tempfile::tempdir().unwrap();
    let ok = |args: &[&str]| {
        let o = run(d.path(), args);
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        o
    };
    ok(&["sample", "--kind", "creature", "--vertices", "3000", "-o", "c"]);
    ok(&["convert", "c.skin", "-o", "c.obj"]);
    let bind = |mesh: &str, out: &str, extra: &[&str]| {
        let mut a = vec!["bind", "--skel", "c.skel", "--skin", mesh, "-o", out];
        a.extend_from_slice(extra);
        ok(&a)
    };
    let warned = |stderr: &str| {
        stderr
            .lines()
            .filter(|l| l.contains("holds its skeleton better at rest"))
            .count()
    };
    let posed = bind("c.obj", "posed.skin", &[]);
    assert_eq!(warned(&posed.stderr), 1, "{}", posed.stderr);
    // First among the warnings: it explains the joints without weight.
    assert!(
        posed
            .stderr
            .lines()
            .next()
            .unwrap()
            .contains("holds its skeleton better at rest")
    );
    assert!(
        posed.stderr.contains(
            "posed.skin: warning: the mesh has no bindings and holds its skeleton better at rest than in the \
             skeleton file's pose (100% of the bones inside against "
        ) && posed
            .stderr
            .contains("%): if it was modelled at rest, bind with --bind-pose rest\n"),
        "{}",
        posed.stderr
    );
    assert_eq!(
        posed.stderr.matches("has no weight on any vertex").count(),
        12,
        "{}",
        posed.stderr
    );
    let rest = bind("c.obj", "rest.skin", &["--bind-pose", "rest"]);
    assert_eq!(warned(&rest.stderr), 0, "{}", rest.stderr);
    assert!(!rest.stderr.contains("no weight"), "{}", rest.stderr);
    bind("c.skin", "own.skin", &[]);
    assert_eq!(
        rows_of(&d.path().join("rest.skin")),
        rows_of(&d.path().join("own.skin"))
    );
    let own = bind("c.skin", "own.skin", &["--bind-pose", "rest"]);
    assert!(
        own.stderr
            .contains("own.skin: warning: --bind-pose rest does not apply: the mesh's bindings give its bind pose\n"),
        "{}",
        own.stderr
    );
    assert_eq!(
        run(
            d.path(),
            &[
                "bind",
                "--skel",
                "c.skel",
                "--skin",
                "c.obj",
                "-o",
                "x.skin",
                "--bind-pose",
                "zero"
            ]
        )
        .code,
        2
    );
}
