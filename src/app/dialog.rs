//! File dialogs behind a small trait, so tests can answer them without a desktop portal.
//!
//! [`RfdDialog`] asks the desktop (rfd: the XDG portal, or zenity); it blocks the UI thread while the dialog is
//! open, as native dialogs do. [`FakeDialog`] returns answers queued in advance and records what was asked.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The extensions the editor opens.
pub const OPEN_EXTENSIONS: [&str; 6] = ["skel", "skin", "anim", "glb", "gltf", "fbx"];

pub trait FileDialog {
    /// Ask for files to open; `None` when the person cancels.
    fn pick_files(&mut self) -> Option<Vec<PathBuf>>;
    /// Ask where to save; `default_name` is a suggestion such as `rig.skel`, or a path whose folder the dialog
    /// opens in.
    fn save_file(&mut self, default_name: &str) -> Option<PathBuf>;
}

/// The desktop's own dialogs.
#[derive(Debug, Default)]
pub struct RfdDialog;

impl FileDialog for RfdDialog {
    fn pick_files(&mut self) -> Option<Vec<PathBuf>> {
        rfd::FileDialog::new()
            .set_title("Open rig files")
            .add_filter("Rig files (.skel, .skin, .anim, .glb, .gltf, .fbx)", &OPEN_EXTENSIONS)
            .add_filter("All files", &["*"])
            .pick_files()
    }

    fn save_file(&mut self, default_name: &str) -> Option<PathBuf> {
        // A suggestion with a folder opens the dialog there (beside the file the rig came from).
        let suggested = std::path::Path::new(default_name);
        let mut dialog = rfd::FileDialog::new()
            .set_title("Save the skeleton (and skin beside it)")
            .add_filter("Skeleton (.skel)", &["skel"]);
        if let Some(dir) = suggested.parent().filter(|d| !d.as_os_str().is_empty()) {
            dialog = dialog.set_directory(dir);
        }
        let name = suggested
            .file_name()
            .map_or(default_name.into(), |n| n.to_string_lossy());
        dialog.set_file_name(name).save_file()
    }
}

/// A dialog for tests: answers come from queues (an empty queue answers "cancelled"), and every question is
/// logged in a list the test can keep a handle to.
#[derive(Clone, Debug, Default)]
pub struct FakeDialog {
    pub open_answers: VecDeque<Vec<PathBuf>>,
    pub save_answers: VecDeque<PathBuf>,
    pub asked: Arc<Mutex<Vec<String>>>,
}

impl FakeDialog {
    pub fn new() -> Self {
        Self::default()
    }

    /// Answer the next open dialog with these files.
    pub fn with_open(mut self, paths: Vec<PathBuf>) -> Self {
        self.open_answers.push_back(paths);
        self
    }

    /// Answer the next save dialog with this path.
    pub fn with_save(mut self, path: PathBuf) -> Self {
        self.save_answers.push_back(path);
        self
    }

    fn log(&self, what: String) {
        if let Ok(mut a) = self.asked.lock() {
            a.push(what);
        }
    }
}

impl FileDialog for FakeDialog {
    fn pick_files(&mut self) -> Option<Vec<PathBuf>> {
        self.log("open".into());
        self.open_answers.pop_front()
    }

    fn save_file(&mut self, default_name: &str) -> Option<PathBuf> {
        self.log(format!("save {default_name}"));
        self.save_answers.pop_front()
    }
}
