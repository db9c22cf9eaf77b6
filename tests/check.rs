//! `skinbind check` end to end: the exact text on the shipped sample's tube, exit codes, and the posed check of
//! the shared course wasp bound automatically (wing joints named on the abdomen exactly when their weight
//! reaches it).
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use skinbind::model::Weights;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_skinbind"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("skinbind-check-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn exit_codes_follow_the_threshold_and_bad_input() {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let (skel, skin) = (assets.join("creature.skel"), assets.join("creature.skin"));
    let run = |extra: &[&str]| {
        bin()
            .args(["check", "--skel"])
            .arg(&skel)
            .arg("--skin")
            .arg(&skin)
            .args(extra)
            .output()
            .unwrap()
    };
    let ok = run(&["--joint", "elbow_l"]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    let text = String::from_utf8(ok.stdout).unwrap();
    assert!(
        text.starts_with("checked 19970 vertices, 39920 triangles: 1 joints swept, "),
        "{text}"
    );
    let report = tmp("r.json");
    let json = run(&["--joint", "elbow_l", "--json", "--report", report.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let worst = v["worst"].as_f64().unwrap();
    assert!(worst > 0.0);
    assert_eq!(std::fs::read(&report).unwrap(), json.stdout[..json.stdout.len() - 1]);
    let above = run(&["--joint", "elbow_l", "--fail-above", &format!("{}", worst * 0.5)]);
    assert_eq!(above.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&above.stderr).contains("worst severity"));
    let below = run(&["--joint", "elbow_l", "--fail-above", &format!("{}", worst * 2.0)]);
    assert_eq!(below.status.code(), Some(0));
    // Issue 43: no steps, or a threshold that is not a number, are usage errors (they checked nothing, or
    // passed everything).
    for (flags, said) in [
        (
            ["--steps", "0"],
            "skinbind: --steps 0: expected 1 to 64 steps from the bind pose to each end of a range\n",
        ),
        (
            ["--fail-above", "nan"],
            "skinbind: --fail-above NaN: expected a finite severity (1 is at the tolerance)\n",
        ),
    ] {
        let o = run(&flags);
        assert_eq!(o.status.code(), Some(2), "{flags:?}");
        assert_eq!(String::from_utf8_lossy(&o.stderr), said);
    }
    let bad = run(&["--joint", "nobody"]);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr),
        "skinbind: --joint: no joint named `nobody`\n"
    );
    let steps = run(&["--steps", "65"]);
    assert_eq!(steps.status.code(), Some(2));
}

/// Vertices whose reference (artist) dominant joint is the abdomen or a tail joint.
fn abdomen(reference: &Weights, names: &[String]) -> Vec<u32> {
    (0..reference.len() as u32)
        .filter(|&v| {
            let d = reference.dominant(v as usize).unwrap() as usize;
            names[d] == "abdomen" || names[d].starts_with("tail")
        })
        .collect()
}

/// Which wing joints the check names in a weight problem (not a collision) touching `vertices`.
fn wings_named(skel: &Path, skin: &Path, vertices: &[u32]) -> Vec<String> {
    let out = bin()
        .args(["check", "--json", "--skel"])
        .arg(skel)
        .arg("--skin")
        .arg(skin)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut named: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] != "penetration")
        .filter(|f| f["joint_name"].as_str().unwrap().starts_with("wing"))
        .filter(|f| {
            f["vertices"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| vertices.binary_search(&(x.as_u64().unwrap() as u32)).is_ok())
        })
        .map(|f| f["joint_name"].as_str().unwrap().to_string())
        .collect();
    named.sort();
    named.dedup();
    named
}

#[test]
fn the_wasp_check_names_the_wings_where_their_weight_reaches_the_abdomen() {
    let Some(data) = common::data_dir() else { return };
    let (skel, artist) = (data.join("cse169/wasp.skel"), data.join("cse169/wasp.skin"));
    let bound = tmp("wasp-bound.skin");
    let out = bin()
        .args(["bind", "--skel"])
        .arg(&skel)
        .arg("--skin")
        .arg(&artist)
        .arg("-o")
        .arg(&bound)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = skinbind::formats::load_skel(&skel).unwrap().value;
    let names: Vec<String> = s.joints().iter().map(|j| j.name.clone()).collect();
    let reference = skinbind::formats::load_skin(&artist, None).unwrap().value;
    let belly = abdomen(reference.weights().unwrap(), &names);
    let mut skin = skinbind::formats::load_skin(&bound, None).unwrap().value;
    let w = skin.weights().unwrap().clone();
    let reaches = belly.iter().any(|&v| {
        let (js, ws) = w.row(v as usize);
        js.iter()
            .zip(ws)
            .any(|(&j, &x)| names[j as usize].starts_with("wing") && x > 0.05)
    });
    let named = wings_named(&skel, &bound, &belly);
    assert_eq!(!named.is_empty(), reaches, "named {named:?}");
    // Wing weight painted onto a patch of the abdomen: the check names that wing there.
    let wing = names.iter().position(|n| n == "wing_01_l").unwrap() as u16;
    let centre = belly[belly.len() / 2] as usize;
    let p = skin.positions()[centre];
    let mut patch = belly.clone();
    patch.sort_by(|&a, &b| {
        let d = |v: u32| skin.positions()[v as usize].distance(p);
        d(a).total_cmp(&d(b)).then(a.cmp(&b))
    });
    patch.truncate(6);
    patch.sort_unstable();
    let rows: Vec<(u32, skinbind::model::Row)> = patch
        .iter()
        .map(|&v| {
            let (js, ws) = w.row(v as usize);
            let mut r: skinbind::model::Row = js.iter().zip(ws).map(|(&j, &x)| (j, x * 0.5)).collect();
            r.push((wing, 0.5));
            skinbind::adjust::rows::sort_row(&mut r);
            (v, r)
        })
        .collect();
    skin.set_weights(Some(w.with_rows(&rows).unwrap())).unwrap();
    let painted = tmp("wasp-painted.skin");
    skinbind::atomic::save_atomic(&painted, |out| skinbind::formats::skin::write_skin(out, &skin)).unwrap();
    assert!(wings_named(&skel, &painted, &belly).contains(&"wing_01_l".to_string()));
}

/// A skinned glTF is checked as it is: the same `.glb` names the skeleton and the skin.
#[test]
fn a_gltf_model_is_checked_from_the_file_itself() {
    let Some(data) = common::data_dir() else { return };
    let fox = data.join("gltf/Fox.glb");
    let o = bin()
        .args(["check", "--skel"])
        .arg(&fox)
        .arg("--skin")
        .arg(&fox)
        .args(["--worst", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        stdout.lines().next(),
        Some("checked 1728 vertices, 576 triangles: 21 joints swept, 378 poses (linear blend); worst severity 22.39")
    );
}
