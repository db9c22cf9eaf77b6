//! Loading files for the editor, on a background thread so the window never waits on a parser.
//!
//! [`load_files`] reads one batch (the files picked in one dialog, dropped together, or named on the command
//! line): at most one `.skel`, `.skin` and `.anim`, or a skinned `.glb`/`.gltf`/`.fbx` in place of the `.skel`
//! and `.skin` (its first animation is the clip when the batch has no `.anim`), read by the library's one
//! loader for rigs ([`formats::load_rig`]). The skin is checked against the skeleton in the batch, or else against the document's current one.
//! A batch is all or nothing: the first error (the parser's `PATH:LINE:COL: expected X, found Y`) is returned
//! and nothing from the batch is applied. [`Loader`] runs batches one after another on a worker thread and hands
//! the results back through a channel.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, TryRecvError, channel};

use anyhow::bail;

use crate::formats::{self, FileKind, Parsed, Warning};
use crate::model::{Clip, Skeleton, Skin};

/// What one batch read.
#[derive(Debug, Default)]
pub struct Loaded {
    pub skeleton: Option<(Skeleton, PathBuf)>,
    pub skin: Option<(Skin, PathBuf)>,
    pub clip: Option<(Clip, PathBuf)>,
    /// A glTF file the skeleton and skin came from, and its animations (the first is the clip unless the batch
    /// has an `.anim`).
    pub gltf: Option<PathBuf>,
    pub clips: Vec<crate::formats::gltf_anim::NamedClip>,
    /// `PATH:LINE:COL: warning: ...` lines.
    pub warnings: Vec<String>,
    /// A whole session (`.skinbind`), which replaces everything.
    pub session: Option<(super::document::Document, super::session::ViewState, PathBuf)>,
}

fn warning_line(path: &Path, w: &Warning) -> String {
    if w.line == 0 {
        format!("{}: warning: {}", path.display(), w.message)
    } else {
        format!("{}:{}:{}: warning: {}", path.display(), w.line, w.col, w.message)
    }
}

fn take<T>(path: &Path, parsed: Parsed<T>, warnings: &mut Vec<String>) -> T {
    warnings.extend(parsed.warnings.iter().map(|w| warning_line(path, w)));
    parsed.value
}

/// Read a batch of files; `current_joints` is the document's joint count, for a skin without a skeleton.
pub fn load_files(paths: &[PathBuf], current_joints: usize) -> anyhow::Result<Loaded> {
    if let Some(p) = paths
        .iter()
        .find(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("skinbind")))
    {
        if paths.len() > 1 {
            bail!("{} is a whole session; open it alone", p.display());
        }
        let (doc, view) = super::session::SessionFile::load(p)?.restore(p, super::session::Origin::Opened)?;
        return Ok(Loaded {
            session: Some((doc, view, p.clone())),
            ..Loaded::default()
        });
    }
    let mut skel: Option<&PathBuf> = None;
    let mut skin: Option<&PathBuf> = None;
    let mut anim: Option<&PathBuf> = None;
    let mut gltf: Option<&PathBuf> = None;
    for p in paths {
        let slot = match FileKind::from_path(p) {
            Some(FileKind::Skel) => &mut skel,
            Some(FileKind::Skin) | Some(FileKind::Obj) => &mut skin,
            Some(FileKind::Anim) => &mut anim,
            Some(FileKind::Gltf | FileKind::Fbx) => &mut gltf,
            _ => bail!(
                "{}: the editor opens .skel, .skin, .obj, .anim, .glb, .gltf, .fbx and .skinbind files",
                p.display()
            ),
        };
        if let Some(prev) = slot.replace(p) {
            bail!("two files of the same kind: {} and {}", prev.display(), p.display());
        }
    }
    if let (Some(g), Some(other)) = (gltf, skel.or(skin)) {
        bail!(
            "{} holds a skeleton and a skin already; open {} separately",
            g.display(),
            other.display()
        );
    }
    let mut out = Loaded::default();
    if let Some(p) = gltf {
        let rig = formats::load_rig(p, &formats::gltf::AnimationChoice::All)?;
        let rig = take(p, rig, &mut out.warnings);
        out.skeleton = Some((rig.skeleton, p.clone()));
        out.skin = Some((rig.skin, p.clone()));
        out.gltf = Some(p.clone());
        out.clips = rig.animations;
    }
    if let Some(p) = skel {
        let s = take(p, formats::load_skeleton(p)?, &mut out.warnings);
        out.skeleton = Some((s, p.clone()));
    }
    if let Some(p) = skin {
        let joints = out.skeleton.as_ref().map_or(current_joints, |(s, _)| s.len());
        let k = take(p, formats::load_mesh(p, Some(joints))?, &mut out.warnings);
        out.skin = Some((k, p.clone()));
    }
    if let Some(p) = anim {
        let c = take(p, formats::load_anim(p)?, &mut out.warnings);
        let joints = out.skeleton.as_ref().map_or(current_joints, |(s, _)| s.len());
        if c.channels.len() != Clip::channels_for(joints) {
            out.warnings.push(format!(
                "{}: warning: {} channels, the skeleton has {} joints and needs {}",
                p.display(),
                c.channels.len(),
                joints,
                Clip::channels_for(joints)
            ));
        }
        out.clip = Some((c, p.clone()));
    }
    Ok(out)
}

/// A finished batch: the files asked for and what came of them.
pub struct Finished {
    pub paths: Vec<PathBuf>,
    pub result: anyhow::Result<Loaded>,
}

/// Runs load batches one at a time on a worker thread.
#[derive(Default)]
pub struct Loader {
    running: Option<(Vec<PathBuf>, Receiver<anyhow::Result<Loaded>>)>,
    waiting: VecDeque<Vec<PathBuf>>,
}

impl Loader {
    /// Queue a batch; it starts at the next [`Loader::poll`] when no other batch runs.
    pub fn request(&mut self, paths: Vec<PathBuf>) {
        if !paths.is_empty() {
            self.waiting.push_back(paths);
        }
    }

    /// The files being read now, if any.
    pub fn busy(&self) -> Option<&[PathBuf]> {
        self.running.as_ref().map(|(p, _)| p.as_slice())
    }

    /// Whether anything is running or waiting.
    pub fn is_idle(&self) -> bool {
        self.running.is_none() && self.waiting.is_empty()
    }

    /// Collect a finished batch, and start the next waiting one. `current_joints` is read when a batch starts,
    /// so a skin queued after a skeleton is checked against that skeleton once it has been applied. `wake` is
    /// called from the worker when it finishes (the app asks egui to repaint).
    pub fn poll(&mut self, current_joints: usize, wake: impl Fn() + Send + 'static) -> Option<Finished> {
        if let Some((paths, rx)) = &self.running {
            match rx.try_recv() {
                Ok(result) => {
                    let paths = paths.clone();
                    self.running = None;
                    return Some(Finished { paths, result });
                }
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => {
                    let paths = paths.clone();
                    self.running = None;
                    return Some(Finished {
                        result: Err(anyhow::anyhow!(
                            "{}: the loading thread stopped without an answer",
                            names(&paths)
                        )),
                        paths,
                    });
                }
            }
        }
        if let Some(paths) = self.waiting.pop_front() {
            let (tx, rx) = channel();
            let job = paths.clone();
            let spawned = std::thread::Builder::new().name("skinbind-load".into()).spawn(move || {
                // The last net: a panic in a reader becomes an error naming the files, not a silent thread.
                let result = std::panic::catch_unwind(|| load_files(&job, current_joints)).unwrap_or_else(|_| {
                    Err(anyhow::anyhow!(
                        "{}: reading failed inside a reader (a bug: please report it with the file)",
                        names(&job)
                    ))
                });
                let _ = tx.send(result);
                wake();
            });
            if let Err(e) = spawned {
                return Some(Finished {
                    paths,
                    result: Err(anyhow::anyhow!("cannot start a loading thread: {e}")),
                });
            }
            self.running = Some((paths, rx));
        }
        None
    }
}

/// The paths of a batch, for a message.
fn names(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_with_two_skeletons_is_refused() {
        let e = load_files(&["a.skel".into(), "b.skel".into()], 1).unwrap_err();
        assert_eq!(e.to_string(), "two files of the same kind: a.skel and b.skel");
    }

    #[test]
    fn unknown_extensions_are_refused_by_name() {
        let e = load_files(&["mesh.ply".into()], 1).unwrap_err();
        assert!(e.to_string().starts_with("mesh.ply: the editor opens"), "{e}");
    }

    #[test]
    fn a_syntax_error_names_the_path_line_and_column() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("bad.skel");
        std::fs::write(&p, "balljoint root {\n  offset 0 0 oops\n}\n").unwrap();
        let e = load_files(std::slice::from_ref(&p), 1).unwrap_err();
        assert!(e.to_string().starts_with(&format!("{}:2:", p.display())), "{e}");
    }
}
