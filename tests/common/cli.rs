//! Helpers for running the `skinbind` binary and a small fixture rig (shared by the CLI test files).

use std::path::Path;
use std::process::Command;

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(dir: &Path, args: &[&str]) -> Out {
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

pub const SKEL: &str = "balljoint root {
\toffset 0 0 0
\tballjoint arm {
\t\toffset 1 0 0
\t\trotzlimit 0 0
\t}
}
";

/// Three vertices: one on the root, one on the arm, one half and half.
pub const SKIN: &str = "positions 3 {
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

pub fn fixture() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("rig.skel"), SKEL).unwrap();
    std::fs::write(d.path().join("rig.skin"), SKIN).unwrap();
    d
}

pub fn rows_of(path: &Path) -> Vec<Vec<(u16, f32)>> {
    let skin = skinbind::formats::load_skin(path, None).unwrap().value;
    let w = skin.weights().unwrap();
    (0..w.len())
        .map(|v| {
            let (j, x) = w.row(v);
            j.iter().copied().zip(x.iter().copied()).collect()
        })
        .collect()
}
