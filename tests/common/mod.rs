//! Test helpers: where the shared data lives; `gui` drives the editor, `cli` runs the command, `gltf_build`
//! makes small skinned glTF models (and hostile ones).
#![allow(dead_code, clippy::unwrap_used)]

pub mod cli;
pub mod fbx_build;
pub mod gltf_build;
pub mod gui;

use std::path::PathBuf;

/// The shared data folder: `$SKINBIND_DATA`, else `../shared/data` beside the repository. When it is missing
/// the test is skipped with a notice, except under `CI=true`, where that is a failure.
pub fn data_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("SKINBIND_DATA") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
    };
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "shared data folder {} is missing (CI=true makes that a failure)",
            dir.display()
        );
    }
    eprintln!("notice: shared data folder {} not found; test skipped", dir.display());
    None
}

/// A file under `cse169/`, or None (skip) when the data is absent.
pub fn cse169(name: &str) -> Option<PathBuf> {
    data_dir().map(|d| d.join("cse169").join(name))
}
