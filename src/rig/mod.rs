//! Editing the skeleton itself: add, move, insert, delete, reparent, rename and duplicate joints, set their types
//! and limits, mirror edits across X, and the shipped templates. Pure functions `(rig, ...) -> (rig, joint map)`
//! that the editor's undo records and the CLI calls alike (Blender keeps armature edit operators apart from its
//! viewport; Fyrox's commands wrap pure scene edits). No GUI, GPU or files here.
//!
//! A [`Rig`] is a skeleton with what follows its joints: the skin's bindings and the pose the edit is made in
//! (the editor's Skeleton mode shows the rest pose). Positions given to an edit are world positions in that pose,
//! and an edit keeps every joint it does not move where it is in that pose (its pivot and its orientation):
//! a deleted joint's children, a reparented joint and the children of a joint moved alone take new offsets, and
//! any turn of the joint they leave is folded into their rotation in the pose.
//!
//! **A bound skin stays put.** The mesh is skinned by `world_from_joint * inverse(binding)`; an edit replaces
//! each binding `B` of a joint whose world matrix went from `W` to `W'` (in the edit pose) by `B W^-1 W'`, so the
//! skinning matrices `W' B'^-1 = W B^-1`, and with them every vertex, are unchanged in the edit pose. When the edit pose is the bind
//! pose (`W = B`), the new binding is the joint's new world matrix. A joint whose world matrix did not change
//! keeps its binding bit for bit, and the skin's stored vertices are never touched. New joints are bound where
//! they are made (they have no weight until a bind gives them some).
//!
//! Joints are an arena in depth-first order, so an edit that adds, removes or moves joints renumbers them; the
//! [`JointMap`] it returns says where each joint went, and [`remap`] carries weights, per-joint settings and
//! animation channels across.

pub mod edit;
pub mod fit;
pub mod fit_bones;
pub mod fit_chain;
pub mod fit_measure;
pub mod fit_orient;
pub mod fit_profile;
pub mod fit_proxy;
pub mod fit_register;
pub mod fit_solid;
pub mod fit_template;
pub mod limits;
pub mod remap;
pub mod symmetry;
pub mod templates;
pub mod warnings;

#[cfg(test)]
mod edit_tests;

use glam::{Mat4, Vec3};

use crate::model::{Pose, Skeleton, world_from_joint};

pub use edit::{EditError, add_joint, delete_joint, duplicate_chain, insert_joint, move_joint, rename_joint, reparent};
pub use limits::{DofLimit, JointType};
pub use remap::JointMap;

/// A skeleton, the skin's bindings (one world matrix per joint, when the skin has them) and the pose edits are
/// made in.
#[derive(Clone, Debug, PartialEq)]
pub struct Rig {
    pub skeleton: Skeleton,
    pub bindings: Option<Vec<Mat4>>,
    pub pose: Pose,
}

impl Rig {
    pub fn new(skeleton: Skeleton, bindings: Option<Vec<Mat4>>, pose: Pose) -> Self {
        Self {
            skeleton,
            bindings,
            pose,
        }
    }

    /// Each joint's world matrix in the edit pose.
    pub fn world(&self) -> Vec<Mat4> {
        world_from_joint(&self.skeleton, &self.pose)
    }

    /// Each joint's pivot in the edit pose.
    pub fn pivots(&self) -> Vec<Vec3> {
        self.world().iter().map(|m| m.w_axis.truncate()).collect()
    }
}

/// What an edit made: the new rig and where each joint went.
#[derive(Clone, Debug, PartialEq)]
pub struct Edited {
    pub rig: Rig,
    pub map: JointMap,
}

/// The pose a skeleton is edited in (the editor's Skeleton mode): the rest pose, every rotation zero, unless the
/// skin's bindings say it was bound in the file's own pose (a glTF model keeps its rest turns as its file pose),
/// whichever of the two puts the pivots nearer the bindings.
pub fn edit_pose(skeleton: &Skeleton, bindings: Option<&[Mat4]>) -> Pose {
    let zero = Pose::zero(skeleton);
    let Some(b) = bindings.filter(|b| b.len() == skeleton.len()) else {
        return zero;
    };
    let file = Pose::from_file(skeleton);
    let off = |pose: &Pose| -> f32 {
        world_from_joint(skeleton, pose)
            .iter()
            .zip(b)
            .map(|(w, b)| (w.w_axis - b.w_axis).length())
            .sum()
    };
    if off(&file) < off(&zero) { file } else { zero }
}
