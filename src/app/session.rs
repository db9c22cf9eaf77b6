//! Session files (`.skinbind`): everything a person built in the editor, in one file that survives a crash.
//!
//! A session is JSON (serde) holding the rig in our own text formats (the `.skel`, `.skin` and `.anim` text as
//! strings, so the checked readers rebuild the model and round trips are exact, bit for bit), plus the editor's
//! state: the current pose, the selected joint, the animation time, the files the parts came from, the camera
//! and the view settings. Every field has a default (`#[serde(default)]`), so files written by older versions,
//! which lack newer fields, still load; `version` says which version wrote it.
//!
//! The paths a session names are hints, never orders: a session may come from anyone, and Save must not write
//! where the person did not ask. Each path is kept with a stamp of its file (size and modification time) when
//! the session was written; on restore the paths are kept for Save only when every one of them names a file
//! beside the session (or the session is the editor's own recovery file) that still has its stamp. Otherwise
//! the document opens read-only: [`DocPaths::untrusted`] lists the hints, and Save asks for a name.
//!
//! The editor autosaves the session every minute while there are unsaved changes, to a recovery file in the
//! config folder, on a background thread and atomically; a clean exit or a save removes it, so finding one at
//! start means the last session did not end cleanly, and the editor offers to restore it.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::document::{DocPaths, Document};
use crate::atomic::save_atomic;
use crate::bind::JointVolume;
use crate::formats;
use crate::model::Pose;
use crate::render::{OrbitCamera, ViewSettings};

/// The session format's version written by this build.
pub const VERSION: u32 = 3;

/// What a session file holds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SessionFile {
    /// `"skinbind session"`, so a stray JSON file is recognised as not one.
    pub format: String,
    pub version: u32,
    pub name: String,
    /// The skeleton as `.skel` text.
    pub skel: String,
    pub skin: Option<String>,
    pub anim: Option<String>,
    pub pose: Option<Pose>,
    pub selected: Option<usize>,
    pub time: f32,
    pub paths: SessionPaths,
    pub camera: Option<OrbitCamera>,
    pub view: Option<ViewSettings>,
    /// Per joint: weights locked (added in version 2; older files have none locked).
    pub locks: Vec<bool>,
    /// Per joint containment volumes (added in version 2; older files get the defaults).
    pub volumes: Vec<JointVolume>,
    /// Per joint: whether it deforms (added in version 3; older files get the defaults: every joint but those
    /// named as controls).
    pub deform: Vec<bool>,
    /// Whether the person set a Deforms box (`Document::deform_chosen`; older files: whether `deform` differs
    /// from the defaults).
    pub deform_chosen: Option<bool>,
    /// A glTF model's own animations as (name, `.anim` text), and which is the clip (added in version 3 files
    /// written by later builds; older files have none).
    pub clips: Vec<(String, String)>,
    pub clip_choice: Option<usize>,
    /// The joints the clip (`anim`) moves, and those each of `clips` moves, as (joint, `.anim` text of its x, y, z
    /// translation channels): what the course's `.anim` cannot hold (added by later builds; older files have
    /// none).
    pub anim_moves: Vec<(usize, String)>,
    pub clip_moves: Vec<Vec<(usize, String)>>,
}

/// A clip's joint moves as (joint, `.anim` text of its three translation channels).
fn moves_text(clip: &crate::model::Clip) -> anyhow::Result<Vec<(usize, String)>> {
    clip.translations
        .iter()
        .map(|t| {
            let three = crate::model::Clip::new(clip.range, t.channels.to_vec());
            Ok((t.joint, text(|w| formats::anim::write_anim(w, &three))?))
        })
        .collect()
}

/// `clip` with the joint moves `moves` read back (`what` names the clip in errors): each three channels, a joint
/// of the skeleton other than the root, at most once.
fn with_moves(
    mut clip: crate::model::Clip,
    moves: &[(usize, String)],
    joints: usize,
    what: &str,
) -> anyhow::Result<crate::model::Clip> {
    for (joint, t) in moves {
        let three = formats::anim::read_anim(t.as_bytes(), None)
            .map_err(|e| anyhow::anyhow!("{what} (joint {joint}'s moves):{e}"))?
            .value;
        let Ok(channels) = <[crate::model::Channel; 3]>::try_from(three.channels) else {
            anyhow::bail!("{what}: joint {joint}'s moves need 3 channels");
        };
        if *joint == 0 || *joint >= joints || clip.translations.iter().any(|m| m.joint == *joint) {
            anyhow::bail!(
                "{what}: expected moves of a joint from 1 to {}, once, found joint {joint}",
                joints - 1
            );
        }
        clip.translations.push(crate::model::anim::JointTranslation {
            joint: *joint,
            channels,
        });
    }
    clip.translations.sort_by_key(|m| m.joint);
    Ok(clip)
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SessionPaths {
    pub skel: Option<PathBuf>,
    pub skin: Option<PathBuf>,
    pub anim: Option<PathBuf>,
    pub gltf: Option<PathBuf>,
    /// The files above as they were when the session was written (added in version 3).
    pub stamps: Vec<FileStamp>,
}

/// A file's size and modification time: enough to tell that a path still names the file a session was
/// written beside, which a stranger's session cannot guess.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct FileStamp {
    pub path: PathBuf,
    pub len: u64,
    pub modified_secs: u64,
    pub modified_nanos: u32,
}

impl FileStamp {
    /// The stamp of the file at `path` now (`None` when it cannot be read).
    pub fn of(path: &Path) -> Option<Self> {
        let meta = std::fs::metadata(path).ok().filter(std::fs::Metadata::is_file)?;
        let since = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
        Some(Self {
            path: path.to_path_buf(),
            len: meta.len(),
            modified_secs: since.as_secs(),
            modified_nanos: since.subsec_nanos(),
        })
    }
}

/// Where a session file comes from, which decides how far its paths are trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A file a person opened: its paths must name files beside it.
    Opened,
    /// The editor's own recovery file, in its config folder: its paths may be anywhere.
    Recovery,
}

/// Whether the paths of `paths` may be written by Save, for the session at `session` (see the module doc).
fn paths_trusted(paths: &SessionPaths, session: &Path, origin: Origin) -> bool {
    let folder = |p: &Path| {
        p.parent().and_then(|d| {
            if d.as_os_str().is_empty() { Path::new(".") } else { d }
                .canonicalize()
                .ok()
        })
    };
    let home = folder(session);
    [&paths.skel, &paths.skin, &paths.anim, &paths.gltf]
        .into_iter()
        .flatten()
        .all(|p| {
            let beside = origin == Origin::Recovery || (home.is_some() && folder(p) == home);
            let stamp = FileStamp::of(p);
            beside && stamp.is_some() && paths.stamps.iter().any(|s| Some(s) == stamp.as_ref())
        })
}

/// The editor's state besides the document that a session keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ViewState {
    pub camera: Option<OrbitCamera>,
    pub view: Option<ViewSettings>,
    pub time: f32,
}

fn text(write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> anyhow::Result<String> {
    let mut out = Vec::new();
    write(&mut out)?;
    Ok(String::from_utf8(out)?)
}

impl SessionFile {
    /// Capture `doc` and the view.
    pub fn capture(doc: &Document, view: ViewState) -> anyhow::Result<Self> {
        Ok(Self {
            format: "skinbind session".into(),
            version: VERSION,
            name: doc.name.clone(),
            skel: text(|w| formats::skel::write_skel(w, &doc.skeleton))?,
            skin: doc
                .skin
                .as_ref()
                .map(|k| text(|w| formats::skin::write_skin(w, k)))
                .transpose()?,
            anim: doc
                .clip
                .as_ref()
                .map(|c| text(|w| formats::anim::write_anim(w, c)))
                .transpose()?,
            pose: Some(doc.pose.clone()),
            selected: doc.selected,
            time: view.time,
            paths: SessionPaths {
                skel: doc.paths.skel.clone(),
                skin: doc.paths.skin.clone(),
                anim: doc.paths.anim.clone(),
                gltf: doc.paths.gltf.clone(),
                stamps: doc.paths.all().filter_map(|p| FileStamp::of(p)).collect(),
            },
            camera: view.camera,
            view: view.view,
            locks: doc.locks.flags(doc.skeleton.len()),
            volumes: doc.volumes.clone(),
            deform: doc.deform.clone(),
            deform_chosen: Some(doc.deform_chosen),
            clips: doc
                .clips
                .iter()
                .map(|c| Ok((c.name.clone(), text(|w| formats::anim::write_anim(w, &c.clip))?)))
                .collect::<anyhow::Result<Vec<_>>>()?,
            clip_choice: doc.clip_choice,
            anim_moves: doc.clip.as_ref().map(moves_text).transpose()?.unwrap_or_default(),
            clip_moves: doc
                .clips
                .iter()
                .map(|c| moves_text(&c.clip))
                .collect::<anyhow::Result<Vec<_>>>()?,
        })
    }

    /// Rebuild the document (through the checked readers) and the view. `path` is where the session was read
    /// from (it names the file in errors and decides, with `origin`, whether its paths are trusted).
    pub fn restore(&self, path: &Path, origin: Origin) -> anyhow::Result<(Document, ViewState)> {
        if self.format != "skinbind session" {
            anyhow::bail!("{}: not a skinbind session file", path.display());
        }
        let part = |what: &str| format!("{} (its {what})", path.display());
        let skeleton = formats::skel::read_skel(self.skel.as_bytes(), None)
            .map_err(|e| anyhow::anyhow!("{}:{e}", part("skeleton")))?
            .value;
        let skin = match &self.skin {
            Some(t) => Some(
                formats::skin::read_skin(t.as_bytes(), None, Some(skeleton.len()))
                    .map_err(|e| anyhow::anyhow!("{}:{e}", part("skin")))?
                    .value,
            ),
            None => None,
        };
        let clip = match &self.anim {
            Some(t) => Some(with_moves(
                formats::anim::read_anim(t.as_bytes(), None)
                    .map_err(|e| anyhow::anyhow!("{}:{e}", part("animation")))?
                    .value,
                &self.anim_moves,
                skeleton.len(),
                &part("animation"),
            )?),
            None => None,
        };
        let mut doc = Document::new(self.name.clone(), skeleton, skin, clip);
        for (k, (name, t)) in self.clips.iter().enumerate() {
            let what = part(&format!("animation {k}, `{name}`"));
            let clip = formats::anim::read_anim(t.as_bytes(), None)
                .map_err(|e| anyhow::anyhow!("{what}:{e}"))?
                .value;
            let moves = self.clip_moves.get(k).map_or(&[][..], Vec::as_slice);
            let clip = with_moves(clip, moves, doc.skeleton.len(), &what)?;
            doc.clips.push(crate::formats::gltf_anim::NamedClip {
                name: name.clone(),
                clip,
            });
        }
        doc.clip_choice = self.clip_choice.filter(|&i| i < doc.clips.len());
        // A pose that does not fit the skeleton (a hand-edited file) falls back to the file pose.
        if let Some(p) = self.pose.as_ref().filter(|p| p.dofs.len() == doc.skeleton.len()) {
            let mut pose = Pose::from_file(&doc.skeleton);
            pose.root_translation = p.root_translation;
            for (j, d) in p.dofs.iter().enumerate() {
                for axis in 0..3 {
                    pose.set_dof(&doc.skeleton, j, axis, d[axis]);
                }
            }
            doc.pose = pose;
        }
        doc.select(self.selected);
        // Entries past the skeleton are dropped; missing ones keep the defaults.
        for (j, &locked) in self.locks.iter().enumerate().take(doc.skeleton.len()) {
            doc.locks.set(j, locked);
        }
        for (to, from) in doc.deform.iter_mut().zip(&self.deform) {
            *to = *from;
        }
        doc.deform_chosen = self
            .deform_chosen
            .unwrap_or_else(|| doc.deform != crate::bind::controls::default_deform(&doc.skeleton));
        for (to, from) in doc.volumes.iter_mut().zip(&self.volumes) {
            if from.radius.is_none_or(|r| r.is_finite() && r > 0.0) && from.length_scale.is_finite() {
                *to = *from;
            }
        }
        let hints = DocPaths {
            skel: self.paths.skel.clone(),
            skin: self.paths.skin.clone(),
            anim: self.paths.anim.clone(),
            gltf: self.paths.gltf.clone(),
            untrusted: Vec::new(),
        };
        doc.paths = if paths_trusted(&self.paths, path, origin) {
            hints
        } else {
            DocPaths {
                untrusted: hints.all().cloned().collect(),
                ..DocPaths::default()
            }
        };
        Ok((
            doc,
            ViewState {
                camera: self.camera,
                view: self.view,
                time: if self.time.is_finite() { self.time } else { 0.0 },
            },
        ))
    }

    /// Write as JSON, atomically.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec(self)?;
        save_atomic(path, |w| w.write_all(&bytes))?;
        Ok(())
    }

    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| anyhow::anyhow!("{}:{}:{}: {e}", path.display(), e.line(), e.column()))
    }
}

/// Where the recovery file lives: beside the settings.
pub fn recovery_path(settings_path: Option<&Path>) -> Option<PathBuf> {
    settings_path
        .and_then(Path::parent)
        .map(|d| d.join("recovery.skinbind"))
}

/// How often the editor autosaves while there are unsaved changes.
pub const AUTOSAVE_SECONDS: f64 = 60.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::SampleKind;

    #[test]
    fn a_session_round_trips_the_document_and_view_exactly() {
        let mut doc = Document::sample(SampleKind::Creature, 2000).expect("sample");
        let skel = doc.skeleton.clone();
        doc.pose.set_dof(&skel, 3, 0, 0.123_456_79);
        doc.pose.root_translation.y += 0.25;
        doc.select(Some(5));
        doc.locks.set(2, true);
        doc.deform[0] = false;
        doc.deform_chosen = true;
        doc.volumes[4] = JointVolume {
            radius: Some(0.125),
            length_scale: 1.5,
        };
        // A glTF model's clips, the second chosen; it moves joint 2 (as an IK foot does), which .anim text
        // cannot hold.
        let walk = doc.clip.clone().expect("the creature's walk");
        let mut slow = crate::sample::walk_clip(&skel, 2.5);
        let moved = slow.channels[3].clone();
        slow.translations.push(crate::model::anim::JointTranslation {
            joint: 2,
            channels: [moved.clone(), moved.clone(), moved],
        });
        doc.clips = vec![
            crate::formats::gltf_anim::NamedClip {
                name: "Walk".into(),
                clip: walk,
            },
            crate::formats::gltf_anim::NamedClip {
                name: "Slow walk".into(),
                clip: slow.clone(),
            },
        ];
        doc.clip = Some(slow);
        doc.clip_choice = Some(1);
        let camera = OrbitCamera {
            yaw: 1.25,
            ..OrbitCamera::default()
        };
        let view = ViewState {
            camera: Some(camera),
            view: Some(ViewSettings {
                dual_quaternion: true,
                ..ViewSettings::default()
            }),
            time: 0.75,
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.skinbind");
        SessionFile::capture(&doc, view)
            .expect("capture")
            .save(&path)
            .expect("save");
        let (back, v) = SessionFile::load(&path)
            .expect("load")
            .restore(&path, Origin::Opened)
            .expect("restore");
        assert_eq!(back.skeleton, doc.skeleton);
        assert!(back.skin == doc.skin, "skin differs");
        assert_eq!(back.clip, doc.clip);
        assert_eq!(back.pose, doc.pose);
        assert_eq!(back.selected, Some(5));
        assert_eq!(back.name, doc.name);
        assert_eq!(back.locks, doc.locks);
        assert_eq!(back.volumes, doc.volumes);
        assert_eq!(back.deform, doc.deform);
        assert!(back.deform_chosen);
        assert_eq!(back.clips, doc.clips);
        assert_eq!(back.clip_choice, Some(1));
        assert_eq!(v, view);
        // A file from before `deform_chosen` counts the boxes as set by hand when they differ from the defaults.
        let mut old = SessionFile::capture(&doc, view).expect("capture");
        old.deform_chosen = None;
        let (back, _) = old.restore(&path, Origin::Opened).expect("restore");
        assert!(back.deform_chosen);
        old.deform = crate::bind::controls::default_deform(&doc.skeleton);
        let (back, _) = old.restore(&path, Origin::Opened).expect("restore");
        assert!(!back.deform_chosen);
    }

    #[test]
    fn older_files_without_newer_fields_still_load() {
        // A version-0 style file: the rig only.
        let json = r#"{ "format": "skinbind session", "skel": "balljoint root { balljoint tip { offset 1 0 0 } }" }"#;
        let s: SessionFile = serde_json::from_str(json).expect("parse");
        let (doc, view) = s.restore(Path::new("old.skinbind"), Origin::Opened).expect("restore");
        assert_eq!(doc.skeleton.len(), 2);
        assert!(doc.skin.is_none() && doc.clip.is_none() && view.camera.is_none());
        assert_eq!(doc.pose, Pose::from_file(&doc.skeleton));
        assert!(!doc.locks.any());
        assert_eq!(doc.volumes, vec![JointVolume::default(); 2]);
    }

    #[test]
    fn bad_sessions_say_where() {
        let s = SessionFile {
            format: "skinbind session".into(),
            skel: "balljoint root { offset 0 0 }".into(),
            ..SessionFile::default()
        };
        let e = s
            .restore(Path::new("x.skinbind"), Origin::Opened)
            .expect_err("bad skeleton");
        assert!(e.to_string().starts_with("x.skinbind (its skeleton):1:"), "{e}");
        let e = SessionFile::default()
            .restore(Path::new("y.json"), Origin::Opened)
            .expect_err("not a session");
        assert_eq!(e.to_string(), "y.json: not a skinbind session file");
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("broken.skinbind");
        std::fs::write(&p, "{ \"format\": ").expect("write");
        let e = SessionFile::load(&p).expect_err("truncated");
        assert!(e.to_string().starts_with(&format!("{}:1:", p.display())), "{e}");
    }
}
