//! Skeletons of ball joints, their poses and forward kinematics (CSE169, "Skeletons" lecture).
//!
//! Conventions: joints live in an arena in depth-first file order, index 0 is the root, and every joint's parent
//! has a smaller index, so one forward pass computes all world matrices. A joint is known by its index: names
//! may be empty or repeated (dragon.skel has 16 duplicates). Angles are radians. A joint's local matrix is
//! `T(offset) * Rz(z) * Ry(y) * Rx(x)`: x is applied first. `world_from_joint[i] = world_from_joint[parent] *
//! local[i]`. The root's offset is replaced by the pose's root translation (the first three .anim channels).
//! Matrices are glam's column-major `Mat4` acting on column vectors.

use glam::{Mat4, Vec3};

use super::names::NameError;

/// One axis's rotation limits, as `rot?limit lo hi` gives them. Clamping is `v.max(lo).min(hi)`, the course
/// loaders' order, so `lo > hi` (which the reader warns about) clamps to `hi`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Limit {
    pub lo: f32,
    pub hi: f32,
}

/// A ball joint as the .skel file describes it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Joint {
    pub name: String,
    pub parent: Option<usize>,
    /// Pivot position in the parent's space.
    pub offset: Vec3,
    /// Corners of the joint's box in its own space, when the file gives them (the course default is ±0.1).
    pub box_min: Option<Vec3>,
    pub box_max: Option<Vec3>,
    /// Limits on rotation about x, y, z; `None` means unlimited.
    pub limits: [Option<Limit>; 3],
    /// The `pose` line as written (unclamped); `None` when the file has none.
    pub pose: Option<Vec3>,
}

impl Joint {
    pub fn new(name: impl Into<String>, parent: Option<usize>, offset: Vec3) -> Self {
        Self {
            name: name.into(),
            parent,
            offset,
            box_min: None,
            box_max: None,
            limits: [None; 3],
            pose: None,
        }
    }

    /// Clamp a rotation about `axis` (0 = x, 1 = y, 2 = z) to the joint's limits.
    pub fn clamp(&self, axis: usize, v: f32) -> f32 {
        match self.limits.get(axis).copied().flatten() {
            Some(Limit { lo, hi }) => v.max(lo).min(hi),
            None => v,
        }
    }

    pub fn clamp3(&self, v: Vec3) -> Vec3 {
        Vec3::new(self.clamp(0, v.x), self.clamp(1, v.y), self.clamp(2, v.z))
    }

    /// The joint's box in its own space as (min, max) per axis, with the course default of ±0.1 for a missing
    /// corner and with swapped corners put in order.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        let a = self.box_min.unwrap_or(Vec3::splat(-0.1));
        let b = self.box_max.unwrap_or(Vec3::splat(0.1));
        (a.min(b), a.max(b))
    }
}

/// Why joints do not make a skeleton.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SkeletonError {
    #[error("a skeleton needs at least one joint")]
    Empty,
    #[error("joint 0 must be the root, but it has parent {0}")]
    RootHasParent(usize),
    #[error("joint {joint} has no parent, but only joint 0 may be a root")]
    SecondRoot { joint: usize },
    #[error("joint {joint}'s parent {parent} does not come before it in depth-first order")]
    ParentOrder { joint: usize, parent: usize },
    #[error("{0} joints is more than the {max} supported", max = u16::MAX)]
    TooMany(usize),
    #[error("joint {joint} has a non-finite {what}")]
    NotFinite { joint: usize, what: &'static str },
    #[error("joint {joint} is nested {depth} deep; at most {max} levels are supported", max = MAX_DEPTH)]
    TooDeep { joint: usize, depth: usize },
    #[error("joint {joint}'s name: {error}")]
    Name { joint: usize, error: NameError },
}

/// The deepest nesting a skeleton may have (the root is at depth 0). Real rigs stay far below it (the course
/// files under 20, a character with fingers and a long tail under 100); it bounds what a stranger's file can
/// make every tree walk, indentation and traversal cost.
pub const MAX_DEPTH: usize = 1000;

/// A validated joint hierarchy: one root, parents before children, finite numbers, names every writer keeps
/// ([`super::names`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Skeleton {
    joints: Vec<Joint>,
    children: Vec<Vec<usize>>,
}

impl Skeleton {
    /// Check the arena's invariants: one root at 0, parents before children, finite numbers.
    pub fn new(joints: Vec<Joint>) -> Result<Self, SkeletonError> {
        if joints.is_empty() {
            return Err(SkeletonError::Empty);
        }
        if joints.len() > u16::MAX as usize {
            return Err(SkeletonError::TooMany(joints.len()));
        }
        let mut children = vec![Vec::new(); joints.len()];
        let mut depth = vec![0usize; joints.len()];
        for (i, j) in joints.iter().enumerate() {
            match (i, j.parent) {
                (0, Some(p)) => return Err(SkeletonError::RootHasParent(p)),
                (0, None) => {}
                (_, None) => return Err(SkeletonError::SecondRoot { joint: i }),
                (_, Some(p)) if p >= i => return Err(SkeletonError::ParentOrder { joint: i, parent: p }),
                (_, Some(p)) => {
                    children[p].push(i);
                    depth[i] = depth[p] + 1;
                    if depth[i] > MAX_DEPTH {
                        return Err(SkeletonError::TooDeep {
                            joint: i,
                            depth: depth[i],
                        });
                    }
                }
            }
            let finite = |v: Option<Vec3>| v.is_none_or(|v| v.is_finite());
            let what = if !j.offset.is_finite() {
                Some("offset")
            } else if !finite(j.box_min) || !finite(j.box_max) {
                Some("box")
            } else if !finite(j.pose) {
                Some("pose")
            } else if j
                .limits
                .iter()
                .flatten()
                .any(|l| !l.lo.is_finite() || !l.hi.is_finite())
            {
                Some("limit")
            } else {
                None
            };
            if let Some(what) = what {
                return Err(SkeletonError::NotFinite { joint: i, what });
            }
            super::names::check(&j.name).map_err(|error| SkeletonError::Name { joint: i, error })?;
        }
        Ok(Self { joints, children })
    }

    pub fn joints(&self) -> &[Joint] {
        &self.joints
    }

    pub fn len(&self) -> usize {
        self.joints.len()
    }

    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    pub fn joint(&self, i: usize) -> Option<&Joint> {
        self.joints.get(i)
    }

    pub fn children(&self, i: usize) -> &[usize] {
        self.children.get(i).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Depth of each joint (root 0).
    pub fn depths(&self) -> Vec<usize> {
        let mut d = vec![0; self.joints.len()];
        for (i, j) in self.joints.iter().enumerate() {
            if let Some(p) = j.parent {
                d[i] = d[p] + 1;
            }
        }
        d
    }

    /// The parent of joint `i`, its parent, and so on up to the root (parents come before their children, so
    /// the walk ends).
    pub fn ancestors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.joints.get(i).and_then(|j| j.parent), |&a| {
            self.joints.get(a).and_then(|j| j.parent)
        })
    }

    /// Indices of joints whose name is `name`, in depth-first order.
    pub fn find(&self, name: &str) -> Vec<usize> {
        self.joints
            .iter()
            .enumerate()
            .filter(|(_, j)| j.name == name)
            .map(|(i, _)| i)
            .collect()
    }

    /// Change one joint's limits (or its name, under the names rule), keeping the hierarchy.
    pub fn joint_mut(&mut self, i: usize) -> Option<JointMut<'_>> {
        self.joints.get_mut(i).map(JointMut)
    }
}

/// Mutable access to the parts of a joint that cannot break the skeleton's invariants.
pub struct JointMut<'a>(&'a mut Joint);

impl JointMut<'_> {
    /// Set the name if every writer keeps it ([`super::names::check`]; uniqueness is the caller's choice).
    pub fn set_name(&mut self, name: impl Into<String>) -> Result<(), NameError> {
        let name = name.into();
        super::names::check(&name)?;
        self.0.name = name;
        Ok(())
    }
    pub fn set_limit(&mut self, axis: usize, limit: Option<Limit>) {
        if let Some(slot) = self.0.limits.get_mut(axis) {
            *slot = limit.filter(|l| l.lo.is_finite() && l.hi.is_finite());
        }
    }
}

/// The values that animate a skeleton: the root translation and three rotations per joint, each within limits,
/// and where a clip moves them, the offsets of joints other than the root.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pose {
    pub root_translation: Vec3,
    /// Rotation about x, y, z of each joint, in radians, already clamped.
    pub dofs: Vec<Vec3>,
    /// A moved offset (pivot in the parent's space) per joint, `None` where the joint sits at its skeleton
    /// offset; empty when no joint is moved (every pose but one from a clip with translation channels, see
    /// [`super::anim::JointTranslation`]). The root's entry is not used: `root_translation` places it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offsets: Vec<Option<Vec3>>,
}

impl Pose {
    /// Every rotation zero (clamped into the limits), the root at its offset. (The CLI binds a skin without
    /// bindings in the skeleton file's pose, [`Pose::from_file`], which is this pose when the file has no
    /// `pose` lines.)
    pub fn zero(skel: &Skeleton) -> Self {
        Self {
            root_translation: skel.joints[0].offset,
            dofs: skel.joints.iter().map(|j| j.clamp3(Vec3::ZERO)).collect(),
            offsets: Vec::new(),
        }
    }

    /// The pose the .skel file's `pose` lines give, clamped to the limits (test.skel's knee_r: (-3, 1, 2) with
    /// x in [-2, 0], y and z in [0, 0] poses at (-2, 0, 0)).
    pub fn from_file(skel: &Skeleton) -> Self {
        Self {
            root_translation: skel.joints[0].offset,
            dofs: skel
                .joints
                .iter()
                .map(|j| j.clamp3(j.pose.unwrap_or(Vec3::ZERO)))
                .collect(),
            offsets: Vec::new(),
        }
    }

    /// Joint `i`'s offset in this pose: the root translation for the root, a moved offset where the pose has
    /// one, else the skeleton's.
    pub fn offset_of(&self, skel: &Skeleton, i: usize) -> Vec3 {
        if i == 0 {
            return self.root_translation;
        }
        match self.offsets.get(i) {
            Some(Some(o)) => *o,
            _ => skel.joints.get(i).map_or(Vec3::ZERO, |j| j.offset),
        }
    }

    /// Set one rotation, clamped to the joint's limits. Out-of-range joints or axes are ignored.
    pub fn set_dof(&mut self, skel: &Skeleton, joint: usize, axis: usize, value: f32) {
        if let (Some(j), Some(d)) = (skel.joint(joint), self.dofs.get_mut(joint)) {
            if axis < 3 && value.is_finite() {
                d[axis] = j.clamp(axis, value);
            }
        }
    }
}

/// The local matrix of a joint: `T(offset) * Rz * Ry * Rx`.
pub fn parent_from_joint(offset: Vec3, rot: Vec3) -> Mat4 {
    Mat4::from_translation(offset)
        * Mat4::from_rotation_z(rot.z)
        * Mat4::from_rotation_y(rot.y)
        * Mat4::from_rotation_x(rot.x)
}

/// The rotation angles (x, y, z) of `rotation` in the joints' convention (`Rz * Ry * Rx`), as close to `near`
/// as they can be: of the two solutions, `(x, y, z)` and `(x + pi, pi - y, z + pi)`, each angle moved by whole
/// turns to lie within half a turn of `near`'s, the one nearer `near` (sum of absolute differences). With `near`
/// zero, a rest rotation reads as small angles rather than as two half turns (a glTF joint turned 10 degrees
/// about y read (pi, 170 degrees, pi)); with the previous frame's angles, sampled clips stay continuous.
pub fn dofs_from_rotation(rotation: glam::Quat, near: Vec3) -> Vec3 {
    use std::f32::consts::{PI, TAU};
    let (z, y, x) = rotation.normalize().to_euler(glam::EulerRot::ZYX);
    let wrap = |a: f32, to: f32| a - ((a - to) / TAU).round() * TAU;
    let fit = |v: Vec3| Vec3::new(wrap(v.x, near.x), wrap(v.y, near.y), wrap(v.z, near.z));
    let a = fit(Vec3::new(x, y, z));
    let b = fit(Vec3::new(x + PI, PI - y, z + PI));
    let off = |v: Vec3| (v - near).abs().element_sum();
    if off(b) < off(a) - 1e-6 { b } else { a }
}

/// Forward kinematics: each joint's world matrix in `pose`. A pose with too few DOFs leaves the rest at zero;
/// a joint the pose moves ([`Pose::offset_of`]) sits at its moved offset.
pub fn world_from_joint(skel: &Skeleton, pose: &Pose) -> Vec<Mat4> {
    let mut world: Vec<Mat4> = Vec::with_capacity(skel.len());
    for (i, j) in skel.joints.iter().enumerate() {
        let rot = pose.dofs.get(i).copied().unwrap_or(Vec3::ZERO);
        let offset = pose.offset_of(skel, i);
        let local = parent_from_joint(offset, rot);
        let m = match j.parent {
            Some(p) => world[p] * local,
            None => local,
        };
        world.push(m);
    }
    world
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_angles_are_the_small_solution_and_give_the_same_rotation() {
        use glam::Quat;
        use std::f32::consts::PI;
        let rot = |d: Vec3| Quat::from_mat4(&parent_from_joint(Vec3::ZERO, d));
        // 10 degrees about y, as glam's decomposition may give it: (pi, 170 degrees, pi).
        let q = rot(Vec3::new(PI, PI - 0.1745, PI));
        let d = dofs_from_rotation(q, Vec3::ZERO);
        assert!((d - Vec3::new(0.0, 0.1745, 0.0)).abs().max_element() < 1e-4, "{d}");
        // Any angles come back as a rotation equal to the one given (up to the quaternion's sign).
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32 - 0.5) * 4.0 * PI
        };
        for _ in 0..500 {
            let v = Vec3::new(next(), next(), next());
            let near = Vec3::new(next(), next(), next());
            let d = dofs_from_rotation(rot(v), near);
            assert!(rot(d).dot(rot(v)).abs() > 1.0 - 1e-4, "{v} -> {d}");
            // Within half a turn of `near` on every axis.
            assert!((d - near).abs().max_element() <= PI + 1e-4, "{v} near {near} -> {d}");
        }
        // Near the previous frame's angles past pi, the angle keeps turning instead of jumping back.
        let d = dofs_from_rotation(rot(Vec3::new(0.0, 0.0, PI + 0.2)), Vec3::new(0.0, 0.0, PI + 0.1));
        assert!((d.z - (PI + 0.2)).abs() < 1e-4, "{d}");
    }

    #[test]
    fn constructor_rejects_bad_arenas() {
        let j = |p| Joint::new("j", p, Vec3::ZERO);
        assert_eq!(Skeleton::new(vec![]), Err(SkeletonError::Empty));
        assert_eq!(Skeleton::new(vec![j(Some(0))]), Err(SkeletonError::RootHasParent(0)));
        assert_eq!(
            Skeleton::new(vec![j(None), j(Some(2)), j(Some(0))]),
            Err(SkeletonError::ParentOrder { joint: 1, parent: 2 })
        );
        assert_eq!(
            Skeleton::new(vec![j(None), j(None)]),
            Err(SkeletonError::SecondRoot { joint: 1 })
        );
        let mut bad = j(None);
        bad.offset.x = f32::NAN;
        assert_eq!(
            Skeleton::new(vec![bad]),
            Err(SkeletonError::NotFinite {
                joint: 0,
                what: "offset"
            })
        );
    }

    #[test]
    fn swapped_box_corners_are_ordered() {
        let mut j = Joint::new("j", None, Vec3::ZERO);
        j.box_min = Some(Vec3::new(1.0, -1.0, 0.5));
        j.box_max = Some(Vec3::new(-1.0, 1.0, 0.25));
        assert_eq!(j.bounds(), (Vec3::new(-1.0, -1.0, 0.25), Vec3::new(1.0, 1.0, 0.5)));
    }
}
