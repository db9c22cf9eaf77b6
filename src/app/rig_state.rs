//! Skeleton edits in the editor: everything in the document that is indexed by joint, as one state a skeleton
//! edit replaces whole ([`RigState`], stored before and after in [`super::DocEdit::EditRig`]), and the commands
//! the Skeleton mode and panel send ([`RigOp`]), applied through `rig`'s pure edits.
//!
//! An edit is made in the pose the view shows (the Skeleton mode's edit pose); a skin with weights but no
//! bindings (bound in the file's pose) first gets them, so that it stays where it is drawn.

use glam::{Mat4, Vec3};

use super::document::Document;
use crate::adjust::rows::Locks;
use crate::bind::JointVolume;
use crate::formats::gltf_anim::NamedClip;
use crate::model::{Clip, Pose, Skeleton, Weights};
use crate::rig::limits::DofLimit;
use crate::rig::symmetry::Side;
use crate::rig::templates::TemplateKind;
use crate::rig::{Edited, Rig};

/// The document's joint-indexed data.
#[derive(Clone, Debug, PartialEq)]
pub struct RigState {
    pub skeleton: Skeleton,
    pub pose: Pose,
    /// The skin's bindings (as the skin holds them; `None` without a skin or bindings).
    pub bindings: Option<Vec<Mat4>>,
    /// The skin's weights when the edit changed them (joints renumbered); `None` when it left them as they are.
    pub weights: Option<Option<Weights>>,
    pub locks: Locks,
    pub volumes: Vec<JointVolume>,
    pub deform: Vec<bool>,
    pub clip: Option<Clip>,
    pub clips: Vec<NamedClip>,
    pub selected: Option<usize>,
}

impl RigState {
    /// The document as it is; its weights only when `with_weights` (an edit that renumbers joints).
    pub fn of(doc: &Document, with_weights: bool) -> Self {
        Self {
            skeleton: doc.skeleton.clone(),
            pose: doc.pose.clone(),
            bindings: doc.skin.as_ref().and_then(|k| k.bindings().map(<[Mat4]>::to_vec)),
            weights: with_weights.then(|| doc.skin.as_ref().and_then(|k| k.weights().cloned())),
            locks: doc.locks.clone(),
            volumes: doc.volumes.clone(),
            deform: doc.deform.clone(),
            clip: doc.clip.clone(),
            clips: doc.clips.clone(),
            selected: doc.selected,
        }
    }

    /// Write this state into the document.
    pub fn write(&self, doc: &mut Document) {
        doc.skeleton = self.skeleton.clone();
        doc.pose = self.pose.clone();
        if let Some(skin) = doc.skin.as_mut() {
            let b = skin.set_bindings(self.bindings.clone());
            debug_assert!(b.is_ok(), "a skeleton edit's bindings are finite");
            if let Some(w) = &self.weights {
                let w = skin.set_weights(w.clone());
                debug_assert!(w.is_ok(), "a skeleton edit's weights fit its skin");
            }
        }
        doc.locks = self.locks.clone();
        doc.volumes = self.volumes.clone();
        doc.deform = self.deform.clone();
        doc.clip = self.clip.clone();
        doc.clips = self.clips.clone();
        doc.selected = self.selected.filter(|&j| j < doc.skeleton.len());
        doc.changed_rows.clear();
        doc.bump_generation();
    }

    /// The state after `edited` (made on [`rig_of`] of `doc`), with `selected` selected.
    pub fn after(doc: &Document, edited: &Edited, selected: Option<usize>) -> Result<Self, String> {
        let map = &edited.map;
        let renumbered = !map.is_identity();
        let weights = match doc.skin.as_ref().and_then(|k| k.weights()) {
            Some(w) if renumbered => Some(Some(map.weights(w).map_err(|e| e.to_string())?)),
            _ => None,
        };
        let n = edited.rig.skeleton.len();
        let locked = map.per_joint(&doc.locks.flags(doc.skeleton.len()), || false);
        let default_deform = crate::bind::controls::default_deform(&edited.rig.skeleton);
        let mut deform = map.per_joint(&doc.deform, || true);
        for (k, o) in map.origin.iter().enumerate() {
            if *o == crate::rig::remap::Origin::New {
                deform[k] = default_deform[k];
            }
        }
        let skin_bindings = doc.skin.as_ref().and_then(|k| k.bindings().map(<[Mat4]>::to_vec));
        Ok(Self {
            skeleton: edited.rig.skeleton.clone(),
            pose: edited.rig.pose.clone(),
            // Bindings of the wrong length are not this skeleton's: they are left as they were.
            bindings: edited.rig.bindings.clone().or(skin_bindings),
            weights,
            locks: Locks::of((0..n).filter(|&k| locked[k])),
            volumes: map.per_joint(&doc.volumes, JointVolume::default),
            deform,
            clip: doc.clip.as_ref().map(|c| map.clip(c)),
            clips: doc
                .clips
                .iter()
                .map(|c| NamedClip {
                    name: c.name.clone(),
                    clip: map.clip(&c.clip),
                })
                .collect(),
            selected: selected.filter(|&j| j < n),
        })
    }

    /// Bytes held on the heap (what an undo step costs).
    pub fn heap_bytes(&self) -> usize {
        let skeleton: usize = self
            .skeleton
            .joints()
            .iter()
            .map(|j| std::mem::size_of_val(j) + j.name.capacity())
            .sum();
        skeleton
            + self.bindings.as_ref().map_or(0, |b| b.capacity() * 64)
            + self
                .weights
                .as_ref()
                .and_then(Option::as_ref)
                .map_or(0, Weights::heap_bytes)
            + self.volumes.capacity() * std::mem::size_of::<JointVolume>()
            + self.pose.dofs.capacity() * 12
    }
}

/// The document's rig as the edits take it: its skeleton, its pose, and bindings that keep the skin where it is
/// drawn (the skin's own when they are this skeleton's; for a weighted skin without them, its file pose's world
/// matrices, which is where the view binds it).
pub fn rig_of(doc: &Document) -> Rig {
    let n = doc.skeleton.len();
    let bindings = doc.skin.as_ref().and_then(|skin| match skin.bindings() {
        Some(b) if b.len() == n => Some(b.to_vec()),
        Some(_) => None,
        None if skin.weights().is_some() => Some(crate::model::world_from_joint(
            &doc.skeleton,
            &Pose::from_file(&doc.skeleton),
        )),
        None => None,
    });
    let mut pose = doc.pose.clone();
    pose.dofs.resize(n, Vec3::ZERO);
    Rig::new(doc.skeleton.clone(), bindings, pose)
}

/// What the Skeleton mode and panel ask for.
#[derive(Clone, Debug, PartialEq)]
pub enum RigOp {
    /// Add a joint with its pivot here, under the selected joint (or the root); with X-mirror, its counterpart.
    Add(Vec3),
    /// Move a joint's pivot to a world point (typed in Properties); `children_stay` keeps its children put.
    Move {
        joint: usize,
        to: Vec3,
        children_stay: bool,
    },
    Insert(usize),
    Delete(usize),
    Duplicate(usize),
    Reparent {
        joint: usize,
        parent: usize,
    },
    Rename {
        joint: usize,
        name: String,
    },
    SetLimits {
        joint: usize,
        limits: [DofLimit; 3],
    },
    SetBox {
        joint: usize,
        min: Option<Vec3>,
        max: Option<Vec3>,
    },
    Symmetrize(Side),
    /// Replace the skeleton by a template placed in the mesh's bounding box.
    Template(TemplateKind),
    /// Replace the skeleton by one root joint in the middle of the mesh's box, to build from by clicking.
    NewRoot,
    /// Replace the skeleton by a template (or, `None`, the open skeleton) fitted into the mesh
    /// ([`crate::rig::fit`]); the fitted pose becomes the bind pose.
    Fit(Option<TemplateKind>),
    /// The same with another character's rig read from files (a .glb/.gltf/.fbx, or a .skel with its .skin),
    /// chosen in a file dialog: its own mesh and weights guide the fit.
    FitFile,
}
