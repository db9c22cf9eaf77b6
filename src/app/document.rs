//! The editor's document: what the editor edits and saves, as plain data (no egui, no GPU).
//!
//! A document always has a skeleton (it starts on a generated sample); the skin and the animation clip are
//! optional. `pose` is what the window shows: sliders and undo write it, playback and scrubbing set it from the
//! clip. `generation` counts changes to the skeleton, skin or weights, so a renderer knows when to upload again;
//! a pose change does not bump it (poses change every frame while playing). `selected` is a joint index into
//! the skeleton's depth-first arena (see docs/architecture.md) and is view state: it is not undoable.

use std::path::PathBuf;

use glam::{Mat4, Vec3};

use crate::adjust::rows::Locks;
use crate::bind::JointVolume;
use crate::deform::bind_world_from_joint;
use crate::model::skeleton::SkeletonError;
use crate::model::{Clip, Pose, Skeleton, Skin, world_from_joint};
use crate::sample::{SampleKind, make_sample};

/// Where the document's parts came from, and where Save writes them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocPaths {
    /// The `.skel` file; `None` for a generated sample or a glTF model (Save then asks for a name).
    pub skel: Option<PathBuf>,
    pub skin: Option<PathBuf>,
    pub anim: Option<PathBuf>,
    /// A glTF file the skeleton and skin were read from (never written back).
    pub gltf: Option<PathBuf>,
    /// Paths a session named that Save will not write without asking (see `session`): the document is
    /// read-only until saved under a name the person chose.
    pub untrusted: Vec<PathBuf>,
}

impl DocPaths {
    /// Every path, in the order skel, skin, anim, glTF.
    pub fn all(&self) -> impl Iterator<Item = &PathBuf> {
        [&self.skel, &self.skin, &self.anim, &self.gltf].into_iter().flatten()
    }
}

#[derive(Clone, Debug)]
pub struct Document {
    /// A short name for the title bar: the main file's name, or `sample creature`.
    pub name: String,
    pub skeleton: Skeleton,
    pub skin: Option<Skin>,
    pub clip: Option<Clip>,
    /// A glTF model's own animations, any of which can be the clip (the timeline chooses), and which one is.
    /// Empty for a clip from an `.anim` file.
    pub clips: Vec<crate::formats::gltf_anim::NamedClip>,
    pub clip_choice: Option<usize>,
    pub pose: Pose,
    pub paths: DocPaths,
    /// Bumped whenever the skeleton, skin or weights change.
    pub generation: u64,
    pub selected: Option<usize>,
    /// Per joint (by index): its weights are locked, so painting, clean-up and normalisation leave them as they
    /// are. Saved in sessions; undoable.
    pub locks: Locks,
    /// Per joint: its containment volume for binding (radius, length scale). Saved in sessions; undoable.
    pub volumes: Vec<JointVolume>,
    /// Per joint: whether it deforms the mesh (binding gives it weight); a control such as an IK target does not.
    /// Saved in sessions; undoable.
    pub deform: Vec<bool>,
    /// Whether the person has set a Deforms box (or opened a session whose boxes differ from the defaults): from
    /// then on the boxes alone decide what a bind weights. Until then a bind also leaves out a master root
    /// outside the mesh, as the command line does, and unticks its box.
    pub deform_chosen: bool,
    /// Bumped whenever any weight changes (also for the row edits that do not bump `generation`).
    pub weights_version: u64,
    /// Vertices whose weights changed since the viewport last took them (row edits: painting, the weight
    /// table); the viewport re-uploads only these. Whole-mesh changes bump `generation` instead.
    pub changed_rows: Vec<u32>,
    /// Selected skin vertices, ascending (view state, like `selected`: not undoable, not saved).
    pub selected_vertices: Vec<u32>,
}

impl Document {
    /// A document in the skeleton file's own pose, with nothing selected.
    pub fn new(name: impl Into<String>, skeleton: Skeleton, skin: Option<Skin>, clip: Option<Clip>) -> Self {
        let pose = Pose::from_file(&skeleton);
        let deform = crate::bind::controls::default_deform(&skeleton);
        let (locks, volumes) = (Locks::none(), vec![JointVolume::default(); skeleton.len()]);
        Self {
            name: name.into(),
            skeleton,
            skin,
            clip,
            clips: Vec::new(),
            clip_choice: None,
            pose,
            paths: DocPaths::default(),
            generation: 0,
            selected: None,
            locks,
            volumes,
            deform,
            deform_chosen: false,
            weights_version: 0,
            changed_rows: Vec::new(),
            selected_vertices: Vec::new(),
        }
    }

    /// A generated sample rig (deterministic: the same kind and size give the same document).
    pub fn sample(kind: SampleKind, vertices: usize) -> Result<Self, String> {
        let s = make_sample(kind, vertices)?;
        // The creature comes with a walk cycle so playback works out of the box.
        let clip = (kind == SampleKind::Creature).then(|| crate::sample::walk_clip(&s.skeleton, 1.2));
        Ok(Self::new(
            format!("sample {}", kind.name()),
            s.skeleton,
            Some(s.skin),
            clip,
        ))
    }

    /// The sample rig shipped in `assets/` (what [`Self::sample`] makes of [`crate::assets::SAMPLE`], read from
    /// the files a newcomer can also open elsewhere).
    pub fn shipped_sample() -> Result<Self, String> {
        let (skeleton, skin, clip) = crate::assets::sample_rig()?;
        let name = format!("sample {}", crate::assets::SAMPLE.0.name());
        Ok(Self::new(name, skeleton, Some(skin), Some(clip)))
    }

    /// Mark the skeleton, skin or weights as changed.
    pub fn bump_generation(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        self.weights_version = self.weights_version.wrapping_add(1);
    }

    /// Select a joint; an index outside the skeleton selects nothing.
    pub fn select(&mut self, joint: Option<usize>) {
        self.selected = joint.filter(|&j| j < self.skeleton.len());
    }

    /// Each joint's world matrix in the current pose.
    pub fn world_from_joint(&self) -> Vec<Mat4> {
        world_from_joint(&self.skeleton, &self.pose)
    }

    /// Whether joint `j`'s weights are locked.
    pub fn is_locked(&self, j: usize) -> bool {
        u16::try_from(j).is_ok_and(|j| self.locks.is_locked(j))
    }

    /// The bind pose's world matrices: the skin's bindings when it has them (for this skeleton), else the
    /// current pose (binding in the current pose, as Maya's Bind Skin does).
    pub fn bind_world(&self) -> Vec<Mat4> {
        match &self.skin {
            Some(skin) if skin.bindings().is_some_and(|b| b.len() == self.skeleton.len()) => {
                bind_world_from_joint(&self.skeleton, skin, &self.pose)
            }
            _ => self.world_from_joint(),
        }
    }

    /// How many of the skin's vertices have no weights (all of them when the skin has none).
    pub fn unweighted_vertices(&self) -> usize {
        match &self.skin {
            None => 0,
            Some(skin) => match skin.weights() {
                None => skin.vertex_count(),
                Some(w) => (0..w.len()).filter(|&v| w.row(v).0.is_empty()).count(),
            },
        }
    }

    /// The name a person reads for a joint: its name, or `joint N` when the file gave none.
    pub fn joint_label(&self, joint: usize) -> String {
        match self.skeleton.joint(joint) {
            Some(j) if !j.name.is_empty() => j.name.clone(),
            _ => format!("joint {joint}"),
        }
    }

    /// The window title: the document's name, `*` when there are unsaved changes, then the program.
    pub fn title(&self, dirty: bool) -> String {
        format!("{}{} - skinbind", self.name, if dirty { "*" } else { "" })
    }

    /// The skeleton with the current pose as its file pose: the pose becomes the joints' `pose` lines (a joint
    /// with a zero rotation and no `pose` line before keeps none) and the root translation becomes the root's
    /// offset. Edit > Set File Pose writes it into the document; Save writes the skeleton as it is.
    pub fn skeleton_with_current_pose(&self) -> Result<Skeleton, SkeletonError> {
        let mut joints = self.skeleton.joints().to_vec();
        for (i, j) in joints.iter_mut().enumerate() {
            let rot = self.pose.dofs.get(i).copied().unwrap_or(Vec3::ZERO);
            if j.pose.is_some() || rot != Vec3::ZERO {
                j.pose = Some(rot);
            }
            if i == 0 {
                j.offset = self.pose.root_translation;
            }
        }
        Skeleton::new(joints)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_is_deterministic_and_posed_from_its_file_pose() {
        let a = Document::sample(SampleKind::Arm, 300).unwrap();
        let b = Document::sample(SampleKind::Arm, 300).unwrap();
        assert_eq!(a.skeleton, b.skeleton);
        assert_eq!(a.skin, b.skin);
        assert_eq!(a.pose, Pose::from_file(&a.skeleton));
    }

    #[test]
    fn the_current_pose_becomes_the_pose_lines() {
        let mut d = Document::sample(SampleKind::Arm, 300).unwrap();
        d.pose.set_dof(&d.skeleton, 1, 2, 0.5);
        d.pose.root_translation = Vec3::new(1.0, 2.0, 3.0);
        let s = d.skeleton_with_current_pose().unwrap();
        assert_eq!(Pose::from_file(&s), d.pose);
    }

    #[test]
    fn selecting_outside_the_skeleton_selects_nothing() {
        let mut d = Document::sample(SampleKind::Tube, 300).unwrap();
        d.select(Some(1));
        assert_eq!(d.selected, Some(1));
        d.select(Some(99));
        assert_eq!(d.selected, None);
    }
}
