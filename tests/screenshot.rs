//! End to end: the editor starts on its built-in sample scene under Xvfb (a virtual X display, llvmpipe for
//! GL), and its own screenshot (`skinbind open --screenshot`) shows the shaded skin. Compared with the stored
//! `tests/golden/startup.png` with a tolerance; `SKINBIND_BLESS=1` rewrites the stored image.
//!
//! Without `xvfb-run` the test prints a notice and passes, except under `CI=true` (CI installs Xvfb).
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn have_xvfb() -> bool {
    Command::new("xvfb-run")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Whether `xvfb-run` is there; without it, a notice (and a failure under `CI=true`).
fn xvfb_or_skip() -> bool {
    if have_xvfb() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "xvfb-run is missing under CI"
    );
    eprintln!("notice: xvfb-run not found; screenshot test skipped");
    false
}

/// Run the editor under Xvfb until it writes `out` and exits (killed after two minutes).
fn screenshot(dir: &Path, out: &Path, extra: &[&str]) {
    let mut child = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1280x800x24"])
        .arg(env!("CARGO_BIN_EXE_skinbind"))
        .arg("open")
        .args(extra)
        .arg("--screenshot")
        .arg(out)
        .env("XDG_CONFIG_HOME", dir)
        .env_remove("WAYLAND_DISPLAY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let o = child.wait_with_output().unwrap();
            assert!(
                status.success(),
                "editor exited with {status}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            return;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the editor did not write its screenshot within two minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn editor_starts_on_the_sample_scene_and_shows_the_shaded_skin() {
    if !xvfb_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("startup.png");
    screenshot(dir.path(), &out, &[]);
    let shot = image::open(&out).unwrap().to_rgba8();
    assert_eq!(shot.dimensions(), (1280, 800), "window size");

    // The shaded skin: warm, lit pixels (red above blue, as the key light and skin colour make them) in the
    // middle of the viewport, where the sample creature stands.
    let (w, h) = shot.dimensions();
    let mut skin = 0usize;
    for y in h / 4..h * 3 / 4 {
        for x in w * 3 / 8..w * 5 / 8 {
            let p = shot.get_pixel(x, y).0;
            if p[0] as i32 > p[2] as i32 + 40 && p[0] > 120 {
                skin += 1;
            }
        }
    }
    let area = (w as usize / 4) * (h as usize / 2);
    assert!(
        skin > area / 20,
        "only {skin} of {area} central pixels look like shaded skin"
    );

    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/startup.png");
    if std::env::var("SKINBIND_BLESS").as_deref() == Ok("1") {
        std::fs::copy(&out, &golden).unwrap();
        eprintln!("blessed {}", golden.display());
        return;
    }
    let reference = image::open(&golden).unwrap().to_rgba8();
    assert_eq!(reference.dimensions(), shot.dimensions());
    // Tolerance: rasterisers and font hinting differ a little; a changed layout, camera or shading does not
    // stay under it.
    let differing = shot
        .pixels()
        .zip(reference.pixels())
        .filter(|(a, b)| (0..3).any(|i| (a.0[i] as i32 - b.0[i] as i32).abs() > 48))
        .count();
    let fraction = differing as f64 / (w * h) as f64;
    if fraction >= 0.01 {
        let keep = std::env::temp_dir().join("skinbind-startup-actual.png");
        let _ = std::fs::copy(&out, &keep);
        panic!(
            "{:.2}% of pixels differ from tests/golden/startup.png (actual kept at {})",
            fraction * 100.0,
            keep.display()
        );
    }
}

/// `open --check --finding 1`: once the check is done the view paints the sample by its scores (the
/// colour map's red where the worst problems are, which the shaded skin never shows) with the Check panel open.
#[test]
fn a_check_from_the_command_line_paints_the_view_by_score() {
    if !xvfb_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("check.png");
    screenshot(dir.path(), &out, &["--check", "--finding", "1"]);
    let shot = image::open(&out).unwrap().to_rgba8();
    let (w, h) = shot.dimensions();
    let mut red = 0usize;
    for y in 0..h {
        for x in w / 4..w * 3 / 4 {
            let p = shot.get_pixel(x, y).0;
            if p[0] > 150 && (p[1] as u32) * 2 < p[0] as u32 && (p[2] as u32) * 2 < p[0] as u32 {
                red += 1;
            }
        }
    }
    assert!(red > 500, "only {red} red pixels: the view does not show check scores");
    // The plain startup shows none of that red.
    let plain = dir.path().join("plain.png");
    screenshot(dir.path(), &plain, &[]);
    let shot = image::open(&plain).unwrap().to_rgba8();
    let plain_red = shot
        .pixels()
        .filter(|p| p.0[0] > 150 && (p.0[1] as u32) * 2 < p.0[0] as u32 && (p.0[2] as u32) * 2 < p.0[0] as u32)
        .count();
    assert!(
        plain_red < red / 10,
        "{plain_red} red pixels without a check, {red} with"
    );
}
