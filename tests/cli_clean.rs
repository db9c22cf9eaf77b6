//! `skinbind clean`: prune, locks, smoothing, mirroring and flipping checked against hand-worked rows, and
//! its usage and input errors.
#![allow(clippy::unwrap_used)]

mod common;

use common::cli::{fixture, rows_of, run};

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
