//! The skeleton edits: add, move, insert, delete, reparent, rename, duplicate, limits and boxes. Each takes a
//! [`Rig`] and returns the edited rig with its [`JointMap`]; positions are world positions in the rig's pose.
//! See the module doc of [`crate::rig`] for what an edit keeps in place and how bindings follow.

use glam::{Mat3, Mat4, Quat, Vec3};

use super::limits::{DofLimit, check_limit};
use super::remap::Origin;
use super::{Edited, JointMap, Rig};
use crate::model::names::{self, NameError};
use crate::model::skeleton::{SkeletonError, dofs_from_rotation, parent_from_joint};
use crate::model::{Joint, Pose, Skeleton, world_from_joint};

/// Why an edit cannot be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EditError {
    #[error("there is no joint {0}")]
    NoJoint(usize),
    #[error("the root joint cannot be {0}")]
    Root(&'static str),
    #[error("`{joint}` cannot go under `{parent}`, which hangs below it")]
    Cycle { joint: String, parent: String },
    #[error("a joint's position must be a finite point")]
    NotFinite,
    #[error("a limit needs finite ends, the lower one first")]
    BadLimit,
    #[error(transparent)]
    Name(#[from] NameError),
    #[error(transparent)]
    Skeleton(#[from] SkeletonError),
}

/// The index just past joint `j`'s subtree (its descendants are the run after it, depth-first).
pub fn subtree_end(skel: &Skeleton, j: usize) -> usize {
    let depths = skel.depths();
    let d = depths.get(j).copied().unwrap_or(0);
    (j + 1..skel.len()).find(|&k| depths[k] <= d).unwrap_or(skel.len())
}

/// How many of `items` (arena indices in depth-first order) at the start lie deeper than `depth`.
fn run_end(depths: &[usize], items: &[usize], depth: usize) -> usize {
    items.iter().take_while(|&&i| depths[i] > depth).count()
}

fn joint(rig: &Rig, j: usize) -> Result<&Joint, EditError> {
    rig.skeleton.joint(j).ok_or(EditError::NoJoint(j))
}

fn finite(p: Vec3) -> Result<Vec3, EditError> {
    if p.is_finite() {
        Ok(p)
    } else {
        Err(EditError::NotFinite)
    }
}

/// The rotation part of a world matrix (its columns normalised, so a scaled parent does not skew it).
fn rotation_of(m: &Mat4) -> Quat {
    let a = Mat3::from_mat4(*m);
    Quat::from_mat3(&Mat3::from_cols(
        a.x_axis.normalize_or_zero(),
        a.y_axis.normalize_or_zero(),
        a.z_axis.normalize_or_zero(),
    ))
    .normalize()
}

/// The joint's rotation angles after its world orientation is kept under a parent frame turned by `turn`
/// (the new parent frame's rotation inverse times the old one's), clamped to its limits. Callers skip it when
/// the frames are the same, so an unturned joint keeps its angles bit for bit.
fn fold(skel: &Skeleton, j: usize, turn: Quat, dof: Vec3) -> Vec3 {
    let local = Quat::from_mat4(&parent_from_joint(Vec3::ZERO, dof));
    let d = dofs_from_rotation(turn * local, dof);
    skel.joint(j).map_or(d, |jj| jj.clamp3(d))
}

/// Build the edited rig: the skeleton from `joints`, the pose from `dofs` and `root_translation`, and bindings
/// that keep the skin in place (see [`crate::rig`]).
fn finish(
    before: &Rig,
    joints: Vec<Joint>,
    dofs: Vec<Vec3>,
    root_translation: Vec3,
    map: JointMap,
) -> Result<Edited, EditError> {
    let skeleton = Skeleton::new(joints)?;
    let pose = Pose {
        root_translation,
        dofs,
        offsets: Vec::new(),
    };
    let world_before = before.world();
    let world_after = world_from_joint(&skeleton, &pose);
    let bindings = match &before.bindings {
        Some(b) if b.len() == before.skeleton.len() => Some(
            map.origin
                .iter()
                .zip(&world_after)
                .map(|(o, after)| match *o {
                    Origin::Kept(i) if world_before[i] == *after => b[i],
                    Origin::Kept(i) => b[i] * world_before[i].inverse() * *after,
                    Origin::Copy(_) | Origin::New => *after,
                })
                .collect(),
        ),
        other => other.clone(),
    };
    Ok(Edited {
        rig: Rig {
            skeleton,
            bindings,
            pose,
        },
        map,
    })
}

/// [`finish`] for an edit of the joints' fields only: same arena, same pose.
fn finish_fields(rig: &Rig, joints: Vec<Joint>) -> Result<Edited, EditError> {
    let map = JointMap::identity(rig.skeleton.len());
    finish(rig, joints, dofs_of(rig), rig.pose.root_translation, map)
}

/// The pose's rotations, one per joint (a short pose padded with zeros).
fn dofs_of(rig: &Rig) -> Vec<Vec3> {
    (0..rig.skeleton.len())
        .map(|i| rig.pose.dofs.get(i).copied().unwrap_or(Vec3::ZERO))
        .collect()
}

/// Renumber an arena: `order` lists the old joints in their new order (`None` where a new joint goes). Returns
/// each old joint's new index and the map (new joints `New`, weights of a dropped joint to 0 until the edit says).
fn reorder(rig: &Rig, order: &[Option<usize>]) -> (Vec<Option<usize>>, JointMap) {
    let n = rig.skeleton.len();
    let mut new_of_old = vec![None; n];
    for (k, o) in order.iter().enumerate() {
        if let Some(i) = o {
            new_of_old[*i] = Some(k);
        }
    }
    let origin = order.iter().map(|o| o.map_or(Origin::New, Origin::Kept)).collect();
    let weights_to = new_of_old.iter().map(|k| k.unwrap_or(0)).collect();
    (new_of_old, JointMap { origin, weights_to })
}

/// The arena order of `n` joints with one new joint at index `k` (`None` there).
fn one_new_at(n: usize, k: usize) -> Vec<Option<usize>> {
    (0..k)
        .map(Some)
        .chain(std::iter::once(None))
        .chain((k..n).map(Some))
        .collect()
}

/// Add a joint named `name` under `parent` with its pivot at world point `at`, at zero rotation. It goes at the
/// end of the parent's children. Returns the rig and the new joint's index (`map.origin` says it is `New`).
pub fn add_joint(rig: &Rig, parent: usize, at: Vec3, name: &str) -> Result<(Edited, usize), EditError> {
    joint(rig, parent)?;
    let at = finite(at)?;
    names::check_rename(rig.skeleton.joints().iter().map(|j| j.name.as_str()), usize::MAX, name)?;
    let world = rig.world();
    let offset = world[parent].inverse().transform_point3(at);
    let at_index = subtree_end(&rig.skeleton, parent);
    let order = one_new_at(rig.skeleton.len(), at_index);
    let (new_of_old, map) = reorder(rig, &order);
    let (mut joints, mut dofs) = arrange(rig, &order, &new_of_old, |_| None);
    joints[at_index] = Joint::new(name, Some(parent), finite(offset)?);
    dofs[at_index] = Vec3::ZERO;
    let edited = finish(rig, joints, dofs, rig.pose.root_translation, map)?;
    Ok((edited, at_index))
}

/// The joints and rotations of `order`: old joints with their parents renumbered (or `parent_override`'s
/// answer, an old index, for the old joint given), placeholders where new joints go.
fn arrange(
    rig: &Rig,
    order: &[Option<usize>],
    new_of_old: &[Option<usize>],
    parent_override: impl Fn(usize) -> Option<usize>,
) -> (Vec<Joint>, Vec<Vec3>) {
    let old = rig.skeleton.joints();
    let dofs = dofs_of(rig);
    let mut joints = Vec::with_capacity(order.len());
    let mut out_dofs = Vec::with_capacity(order.len());
    for o in order {
        match *o {
            Some(i) => {
                let mut j = old[i].clone();
                let parent_old = parent_override(i).or(j.parent);
                j.parent = parent_old.and_then(|p| new_of_old[p]);
                joints.push(j);
                out_dofs.push(dofs[i]);
            }
            None => {
                joints.push(Joint::new("", None, Vec3::ZERO));
                out_dofs.push(Vec3::ZERO);
            }
        }
    }
    (joints, out_dofs)
}

/// Move joint `j`'s pivot to world point `to`. Its subtree moves with it, or, with `children_stay`, its children
/// (and so everything below them) stay where they are. Moving the root moves its offset and the pose's root
/// translation alike.
pub fn move_joint(rig: &Rig, j: usize, to: Vec3, children_stay: bool) -> Result<Edited, EditError> {
    let jj = joint(rig, j)?;
    let to = finite(to)?;
    let world = rig.world();
    let mut joints = rig.skeleton.joints().to_vec();
    let dofs = dofs_of(rig);
    let mut root_translation = rig.pose.root_translation;
    let from = world[j].w_axis.truncate();
    let moved_world = match jj.parent {
        None => {
            joints[0].offset = finite(joints[0].offset + (to - from))?;
            root_translation = to;
            parent_from_joint(to, dofs[0])
        }
        Some(p) => {
            joints[j].offset = finite(world[p].inverse().transform_point3(to))?;
            world[p] * parent_from_joint(joints[j].offset, dofs[j])
        }
    };
    if children_stay {
        let inv = moved_world.inverse();
        for &c in rig.skeleton.children(j) {
            joints[c].offset = finite(inv.transform_point3(world[c].w_axis.truncate()))?;
        }
    }
    finish(
        rig,
        joints,
        dofs,
        root_translation,
        JointMap::identity(rig.skeleton.len()),
    )
}

/// Insert a joint halfway along the bone from joint `j`'s parent to `j` (Blender's Subdivide): the new joint is
/// `j`'s parent and a child of the old one, at zero rotation, named after `j` (`arm.001`). Returns the rig and
/// the new joint's index.
pub fn insert_joint(rig: &Rig, j: usize) -> Result<(Edited, usize), EditError> {
    let jj = joint(rig, j)?;
    let Some(p) = jj.parent else {
        return Err(EditError::Root("split: it has no bone above it"));
    };
    let name = names::unique(&jj.name, |c| !rig.skeleton.find(c).is_empty());
    let order = one_new_at(rig.skeleton.len(), j);
    let (new_of_old, map) = reorder(rig, &order);
    let (mut joints, dofs) = arrange(rig, &order, &new_of_old, |_| None);
    // Halfway in the parent's space is half the offset; the rest of it is the moved joint's new offset.
    let half = jj.offset * 0.5;
    joints[j] = Joint::new(name, Some(p), half);
    joints[j + 1].parent = Some(j);
    joints[j + 1].offset = jj.offset - half;
    let edited = finish(rig, joints, dofs, rig.pose.root_translation, map)?;
    Ok((edited, j))
}

/// Delete joint `j`: its children go to its parent and stay where they are (any turn of `j` folded into their
/// rotation), and its weights go to its parent. The root can be deleted when it has exactly one child, which
/// becomes the root where it stands.
pub fn delete_joint(rig: &Rig, j: usize) -> Result<Edited, EditError> {
    let jj = joint(rig, j)?;
    let world = rig.world();
    let dofs_before = dofs_of(rig);
    let n = rig.skeleton.len();
    let order: Vec<Option<usize>> = (0..n).filter(|&i| i != j).map(Some).collect();
    let (new_of_old, mut map) = reorder(rig, &order);
    let (mut joints, mut dofs) = arrange(rig, &order, &new_of_old, |_| None);
    let mut root_translation = rig.pose.root_translation;
    let children = rig.skeleton.children(j);
    match jj.parent {
        None => {
            let &[c] = children else {
                return Err(EditError::Root("deleted unless it has exactly one child"));
            };
            let k = new_of_old[c].ok_or(EditError::NoJoint(c))?;
            let pivot = world[c].w_axis.truncate();
            joints[k].parent = None;
            joints[k].offset = pivot;
            root_translation = pivot;
            if dofs_before[j] != Vec3::ZERO {
                dofs[k] = fold(&rig.skeleton, c, rotation_of(&world[j]), dofs_before[c]);
            }
            map.weights_to[j] = k;
        }
        Some(p) => {
            let local = parent_from_joint(jj.offset, dofs_before[j]);
            let turn = rotation_of(&local);
            for &c in children {
                let k = new_of_old[c].ok_or(EditError::NoJoint(c))?;
                joints[k].parent = new_of_old[p];
                joints[k].offset = if dofs_before[j] == Vec3::ZERO {
                    jj.offset + rig.skeleton.joints()[c].offset
                } else {
                    local.transform_point3(rig.skeleton.joints()[c].offset)
                };
                if dofs_before[j] != Vec3::ZERO {
                    dofs[k] = fold(&rig.skeleton, c, turn, dofs_before[c]);
                }
            }
            map.weights_to[j] = new_of_old[p].ok_or(EditError::NoJoint(p))?;
        }
    }
    finish(rig, joints, dofs, root_translation, map)
}

/// Move joint `j` (with its subtree) under `parent`, keeping it where it is; its chain goes at the end of the new
/// parent's children.
pub fn reparent(rig: &Rig, j: usize, parent: usize) -> Result<Edited, EditError> {
    let jj = joint(rig, j)?;
    joint(rig, parent)?;
    let Some(old_parent) = jj.parent else {
        return Err(EditError::Root("given a parent"));
    };
    let end = subtree_end(&rig.skeleton, j);
    if (j..end).contains(&parent) {
        return Err(EditError::Cycle {
            joint: jj.name.clone(),
            parent: rig.skeleton.joints()[parent].name.clone(),
        });
    }
    if parent == old_parent {
        return finish_fields(rig, rig.skeleton.joints().to_vec());
    }
    // The arena without j's chain, then the chain after the new parent's subtree (still one run in what is left).
    let rest: Vec<usize> = (0..rig.skeleton.len()).filter(|i| !(j..end).contains(i)).collect();
    let depths = rig.skeleton.depths();
    let at = rest
        .iter()
        .position(|&i| i == parent)
        .ok_or(EditError::NoJoint(parent))?;
    let cut = at + 1 + run_end(&depths, &rest[at + 1..], depths[parent]);
    let order: Vec<Option<usize>> = rest[..cut]
        .iter()
        .copied()
        .chain(j..end)
        .chain(rest[cut..].iter().copied())
        .map(Some)
        .collect();
    let (new_of_old, map) = reorder(rig, &order);
    let (mut joints, mut dofs) = arrange(rig, &order, &new_of_old, |i| (i == j).then_some(parent));
    let world = rig.world();
    let k = new_of_old[j].ok_or(EditError::NoJoint(j))?;
    joints[k].offset = finite(world[parent].inverse().transform_point3(world[j].w_axis.truncate()))?;
    let turn = rotation_of(&world[parent]).inverse() * rotation_of(&world[old_parent]);
    let exact = Mat3::from_mat4(world[parent]) == Mat3::from_mat4(world[old_parent]);
    if !exact {
        dofs[k] = fold(&rig.skeleton, j, turn, dofs[k]);
    }
    finish(rig, joints, dofs, rig.pose.root_translation, map)
}

/// Rename joint `j`: the name must be kept by every writer, not empty, and no other joint's.
pub fn rename_joint(rig: &Rig, j: usize, name: &str) -> Result<Edited, EditError> {
    joint(rig, j)?;
    names::check_rename(rig.skeleton.joints().iter().map(|x| x.name.as_str()), j, name)?;
    let mut joints = rig.skeleton.joints().to_vec();
    joints[j].name = name.to_string();
    finish_fields(rig, joints)
}

/// Duplicate joint `j`'s chain (it and everything below it) as a sibling under the same parent, right after the
/// chain, in the same place; each copy is named after its joint (`finger.001`). Returns the rig and the copy of
/// `j`'s index.
pub fn duplicate_chain(rig: &Rig, j: usize) -> Result<(Edited, usize), EditError> {
    let jj = joint(rig, j)?;
    if jj.parent.is_none() {
        return Err(EditError::Root("duplicated"));
    }
    let end = subtree_end(&rig.skeleton, j);
    let n = rig.skeleton.len();
    let order: Vec<Option<usize>> = (0..end)
        .map(Some)
        .chain((j..end).map(|_| None))
        .chain((end..n).map(Some))
        .collect();
    let (new_of_old, mut map) = reorder(rig, &order);
    let (mut joints, mut dofs) = arrange(rig, &order, &new_of_old, |_| None);
    let mut taken: std::collections::HashSet<String> = rig.skeleton.joints().iter().map(|x| x.name.clone()).collect();
    let dofs_before = dofs_of(rig);
    for (i, &dof) in dofs_before.iter().enumerate().take(end).skip(j) {
        let k = end + (i - j);
        let src = &rig.skeleton.joints()[i];
        let mut copy = src.clone();
        copy.name = names::unique(&src.name, |c| taken.contains(c));
        taken.insert(copy.name.clone());
        copy.parent = match src.parent {
            Some(p) if (j..end).contains(&p) => Some(end + (p - j)),
            other => other.and_then(|p| new_of_old[p]),
        };
        joints[k] = copy;
        dofs[k] = dof;
        map.origin[k] = Origin::Copy(i);
    }
    let edited = finish(rig, joints, dofs, rig.pose.root_translation, map)?;
    Ok((edited, end))
}

/// Set joint `j`'s three axis limits. The pose is clamped into them (the joint may turn); bindings stay as they
/// are, since a limit changes what poses are allowed, not where the skin was bound.
pub fn set_limits(rig: &Rig, j: usize, limits: [DofLimit; 3]) -> Result<Edited, EditError> {
    joint(rig, j)?;
    for l in limits {
        check_limit(l)?;
    }
    let mut joints = rig.skeleton.joints().to_vec();
    joints[j].limits = limits.map(DofLimit::to_limit);
    let skeleton = Skeleton::new(joints)?;
    let mut pose = Pose {
        root_translation: rig.pose.root_translation,
        dofs: dofs_of(rig),
        offsets: Vec::new(),
    };
    pose.dofs[j] = skeleton.joints()[j].clamp3(pose.dofs[j]);
    Ok(Edited {
        rig: Rig {
            skeleton,
            bindings: rig.bindings.clone(),
            pose,
        },
        map: JointMap::identity(rig.skeleton.len()),
    })
}

/// Set joint `j`'s box corners (in its own space; `None` for the course default of ±0.1).
pub fn set_box(rig: &Rig, j: usize, min: Option<Vec3>, max: Option<Vec3>) -> Result<Edited, EditError> {
    joint(rig, j)?;
    if !min.is_none_or(|v| v.is_finite()) || !max.is_none_or(|v| v.is_finite()) {
        return Err(EditError::NotFinite);
    }
    let mut joints = rig.skeleton.joints().to_vec();
    joints[j].box_min = min;
    joints[j].box_max = max;
    finish_fields(rig, joints)
}
