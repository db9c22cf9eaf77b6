//! Symmetry across the X = 0 plane (the character's left is +X): the X-mirror toggle that applies an add, move,
//! delete or rename to the other side's counterpart too (Blender's armature X-Axis Mirror), and Symmetrize, which
//! copies one side onto the other (Blender's Symmetrize; Maya's Mirror Joint).
//!
//! A joint's counterpart is found as weight mirroring finds it ([`crate::adjust::mirror::mirror_joints`]): by the
//! left/right naming conventions first (`.L`/`.R`, `_l`/`_r`, `Left`/`Right`, `left`/`right`), then by mirrored
//! pivots within a tolerance. A joint on the plane is its own counterpart. New counterparts take the mirrored
//! name; a name without a side gets `.L` or `.R` by the side it is on, and its counterpart the other.

use glam::Vec3;

use super::edit::{EditError, add_joint, delete_joint, move_joint, rename_joint, set_limits};
use super::limits::{DofLimit, joint_limits};
use super::{Edited, JointMap, Rig};
use crate::adjust::mirror::{Axis, PairedBy, mirror_joints, mirrored_names};

/// The reflection of `p` across X = 0.
pub fn mirror_point(p: Vec3) -> Vec3 {
    Vec3::new(-p.x, p.y, p.z)
}

/// The diagonal of the box around `pivots` (0 when empty or not finite): the skeleton's size.
pub fn size(pivots: &[Vec3]) -> f32 {
    crate::model::skin::bounds(pivots)
        .map_or(0.0, |(lo, hi)| (hi - lo).length())
        .max(0.0)
}

/// A tolerance for "on the plane" and for pairing pivots: 1e-3 of the skeleton's size (at least 1e-6).
pub fn tolerance(rig: &Rig) -> f32 {
    let size = size(&rig.pivots());
    if size.is_finite() {
        (size * 1e-3).max(1e-6)
    } else {
        1e-6
    }
}

/// Each joint's counterpart across X, or `None` for a joint on the plane or without one.
pub fn counterparts(rig: &Rig, tolerance: f32) -> Vec<Option<usize>> {
    let m = mirror_joints(&rig.skeleton, &rig.world(), Axis::X, tolerance);
    (0..rig.skeleton.len())
        .map(|j| {
            let p = m.partner(j as u16) as usize;
            let paired = matches!(m.paired_by().get(j), Some(PairedBy::Name | PairedBy::Position));
            (paired && p != j).then_some(p)
        })
        .collect()
}

/// The X-mirror of one axis limit: rotations about Y and Z change sign, about X they do not.
pub fn mirror_limit(axis: usize, l: DofLimit) -> DofLimit {
    if axis == 0 {
        return l;
    }
    match l {
        DofLimit::Free => DofLimit::Free,
        DofLimit::Limited { lo, hi } => DofLimit::Limited { lo: -hi, hi: -lo },
        DofLimit::Locked(v) => DofLimit::Locked(-v),
    }
}

/// The names a new joint at `x` and its counterpart take: `name` and its mirrored name when it has a side,
/// else `name.L` / `name.R` by side; both free in `rig`.
fn paired_names(rig: &Rig, name: &str, x: f32) -> (String, String) {
    let exists = |c: &str| !rig.skeleton.find(c).is_empty();
    let mirror = |n: &str| mirrored_names(n).into_iter().next();
    let base = match mirror(name) {
        Some(_) => name.to_string(),
        None => format!("{name}.{}", if x > 0.0 { "L" } else { "R" }),
    };
    let free = |c: &str| exists(c) || mirror(c).is_none_or(|m| exists(&m));
    let first = crate::model::names::unique(&base, free);
    let second = mirror(&first).unwrap_or_else(|| format!("{first}.mirror"));
    (first, second)
}

/// Add a joint as [`add_joint`] does and, when it is off the plane, its counterpart under the parent's
/// counterpart (or the parent itself, on the plane) at the mirrored point. Returns the rig and the new joints.
pub fn add_mirrored(rig: &Rig, parent: usize, at: Vec3, name: &str) -> Result<(Edited, Vec<usize>), EditError> {
    let tol = tolerance(rig);
    if at.x.abs() <= tol {
        let (e, k) = add_joint(rig, parent, at, name)?;
        return Ok((e, vec![k]));
    }
    let (first, second) = paired_names(rig, name, at.x);
    let other_parent = counterparts(rig, tol).get(parent).copied().flatten().unwrap_or(parent);
    let (e1, k1) = add_joint(rig, parent, at, &first)?;
    let p2 = e1.map.new_index(other_parent).ok_or(EditError::NoJoint(other_parent))?;
    let (e2, k2) = add_joint(&e1.rig, p2, mirror_point(at), &second)?;
    let k1 = e2.map.new_index(k1).ok_or(EditError::NoJoint(k1))?;
    let map = e1.map.then(&e2.map);
    Ok((Edited { rig: e2.rig, map }, vec![k1, k2]))
}

/// Move a joint as [`move_joint`] does, and its counterpart to the mirrored point.
pub fn move_mirrored(rig: &Rig, j: usize, to: Vec3, children_stay: bool) -> Result<Edited, EditError> {
    let other = counterparts(rig, tolerance(rig)).get(j).copied().flatten();
    let e1 = move_joint(rig, j, to, children_stay)?;
    match other {
        Some(c) => {
            let e2 = move_joint(&e1.rig, c, mirror_point(to), children_stay)?;
            Ok(Edited {
                rig: e2.rig,
                map: e1.map,
            })
        }
        None => Ok(e1),
    }
}

/// Delete a joint as [`delete_joint`] does, and its counterpart.
pub fn delete_mirrored(rig: &Rig, j: usize) -> Result<Edited, EditError> {
    let other = counterparts(rig, tolerance(rig)).get(j).copied().flatten();
    let e1 = delete_joint(rig, j)?;
    let Some(c) = other.and_then(|c| e1.map.new_index(c)) else {
        return Ok(e1);
    };
    let e2 = delete_joint(&e1.rig, c)?;
    let map = e1.map.then(&e2.map);
    Ok(Edited { rig: e2.rig, map })
}

/// Rename a joint as [`rename_joint`] does and, when the new name has a side, its counterpart to the mirrored
/// name. Either both names are taken or neither.
pub fn rename_mirrored(rig: &Rig, j: usize, name: &str) -> Result<Edited, EditError> {
    let other = counterparts(rig, tolerance(rig)).get(j).copied().flatten();
    let e1 = rename_joint(rig, j, name)?;
    match (other, mirrored_names(name).into_iter().next()) {
        (Some(c), Some(m)) => rename_joint(&e1.rig, c, &m),
        _ => Ok(e1),
    }
}

/// Which side Symmetrize copies from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Side {
    /// +X, the character's left.
    Left,
    /// -X, the character's right.
    Right,
}

/// Copy one side of the skeleton onto the other: every joint on `from`'s side puts its counterpart at its
/// mirrored pivot with mirrored limits, making the counterpart (under the parent's counterpart, with the
/// mirrored name) where there is none. Joints on the plane and on the other side without a counterpart stay.
pub fn symmetrize(rig: &Rig, from: Side) -> Result<Edited, EditError> {
    let tol = tolerance(rig);
    let sign = if from == Side::Left { 1.0 } else { -1.0 };
    let partners = counterparts(rig, tol);
    let n = rig.skeleton.len();
    // The counterpart of each original joint, as an original index or (after it is made) the current index.
    let mut made: Vec<Option<usize>> = vec![None; n];
    let mut cur = rig.clone();
    let mut map = JointMap::identity(n);
    let pivots = rig.pivots();
    for i in 0..n {
        if pivots[i].x * sign <= tol {
            continue;
        }
        let Some(k) = map.new_index(i) else { continue };
        let target = mirror_point(cur.pivots()[k]);
        let limits = joint_limits(&cur.skeleton, k);
        let mirrored: [DofLimit; 3] = std::array::from_fn(|a| mirror_limit(a, limits[a]));
        let other = match partners[i] {
            Some(p) => map.new_index(p).ok_or(EditError::NoJoint(p))?,
            None => {
                // The parent's counterpart: one made earlier, an original one, or the parent itself.
                let parent = cur.skeleton.joints()[k].parent.ok_or(EditError::Root("mirrored"))?;
                let parent_orig = map.origin.get(parent).and_then(|o| match o {
                    super::remap::Origin::Kept(x) => Some(*x),
                    _ => None,
                });
                let other_parent = match parent_orig {
                    Some(po) => match (made[po], partners[po]) {
                        (Some(m), _) => m,
                        (None, Some(pp)) => map.new_index(pp).unwrap_or(parent),
                        (None, None) => parent,
                    },
                    None => parent,
                };
                let name = cur.skeleton.joints()[k].name.clone();
                let (_, second) = paired_names(&cur, &name, pivots[i].x);
                let second = match mirrored_names(&name).into_iter().next() {
                    Some(m) if cur.skeleton.find(&m).is_empty() => m,
                    _ => second,
                };
                let (e, added) = add_joint(&cur, other_parent, target, &second)?;
                map = map.then(&e.map);
                // Earlier made counterparts were renumbered too.
                for m in made.iter_mut().flatten() {
                    *m = e.map.new_index(*m).unwrap_or(*m);
                }
                cur = e.rig;
                made[i] = Some(added);
                let e = set_limits(&cur, added, mirrored)?;
                cur = e.rig;
                continue;
            }
        };
        let e = move_joint(&cur, other, target, true)?;
        cur = e.rig;
        let e = set_limits(&cur, other, mirrored)?;
        cur = e.rig;
        made[i] = Some(other);
    }
    Ok(Edited { rig: cur, map })
}
