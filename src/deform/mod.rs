//! CPU skinning: the reference that every faster path (GPU, SIMD) is tested against.
//!
//! - Skinning matrices: `M_i = world_from_joint_i * inverse(binding_i)`, a binding being the joint's world
//!   matrix in the bind pose (CSE169 "Skinning" lecture).
//! - Linear blend skinning: `p' = sum w_i M_i p`; normals `n' = normalize(sum w_i N_i n)` with `N_i` the
//!   inverse transpose of `M_i`'s 3x3 part (equal to the rotation itself when `M_i` is rigid).
//! - Dual quaternion skinning (Kavan, Collins, Zara, O'Sullivan, "Geometric skinning with approximate dual
//!   quaternion blending", ACM TOG 2008): each `M_i` as a unit dual quaternion (rotation from its normalised
//!   axes; scale and shear are dropped), blended with the sign of each made to agree with the vertex's
//!   dominant joint (the hemisphere fix), normalised, applied to the position; normals turn with the blend's
//!   rotation.
//! - Rigid: each vertex moves with its dominant joint alone (ties: lower joint index).
//!
//! A vertex without weights stays where it is. A joint index without a matrix counts as the identity.

use glam::{Mat3, Mat4, Quat, Vec3};

use crate::model::{Pose, Skeleton, Skin, Weights, world_from_joint};

pub mod bind_match;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Method {
    #[default]
    Linear,
    DualQuaternion,
    Rigid,
}

/// Why a skin cannot be posed by a skeleton.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RigError {
    #[error("the skin has {bindings} bindings but the skeleton has {joints} joints")]
    Bindings { bindings: usize, joints: usize },
    #[error("the skin's weights use joint {joint} but the skeleton has {joints} joints")]
    Joint { joint: u16, joints: usize },
}

/// Check that `skin` can be posed by `skel`.
pub fn check_rig(skel: &Skeleton, skin: &Skin) -> Result<(), RigError> {
    if let Some(b) = skin.bindings() {
        if b.len() != skel.len() {
            return Err(RigError::Bindings {
                bindings: b.len(),
                joints: skel.len(),
            });
        }
    }
    if let Some(j) = skin.weights().and_then(Weights::max_joint) {
        if j as usize >= skel.len() {
            return Err(RigError::Joint {
                joint: j,
                joints: skel.len(),
            });
        }
    }
    Ok(())
}

/// The bind pose's world matrices: the skin's bindings when it has them, else the skeleton in `fallback`.
pub fn bind_world_from_joint(skel: &Skeleton, skin: &Skin, fallback: &Pose) -> Vec<Mat4> {
    match skin.bindings() {
        Some(b) => b.to_vec(),
        None => world_from_joint(skel, fallback),
    }
}

/// `M_i = world_from_joint_i * inverse(bind_i)`. Lengths are the shorter of the two.
pub fn skinning_matrices(world_from_joint: &[Mat4], bind_world_from_joint: &[Mat4]) -> Vec<Mat4> {
    world_from_joint
        .iter()
        .zip(bind_world_from_joint)
        .map(|(w, b)| *w * b.inverse())
        .collect()
}

/// The matrix that carries normals for `m`: the inverse transpose of its 3x3 part, or the part itself when it
/// cannot be inverted.
pub fn normal_matrix(m: &Mat4) -> Mat3 {
    let a = Mat3::from_mat4(*m);
    let det = a.determinant();
    if det.abs() > 1e-12 && det.is_finite() {
        a.inverse().transpose()
    } else {
        a
    }
}

/// Deform positions and normals by `weights` and skinning `matrices` with `method`.
pub fn skin_vertices(
    positions: &[Vec3],
    normals: &[Vec3],
    weights: &Weights,
    matrices: &[Mat4],
    method: Method,
) -> (Vec<Vec3>, Vec<Vec3>) {
    match method {
        Method::Linear => linear_blend(positions, normals, weights, matrices),
        Method::DualQuaternion => dual_quaternion(positions, normals, weights, matrices),
        Method::Rigid => rigid(positions, normals, weights, matrices),
    }
}

/// The linear blend of one vertex's row (`joints`, `weights`): the sum of `weight * by(joint)`, a joint that
/// `by` has nothing for counting as `unweighted`; `unweighted` itself for an empty row. The one definition of
/// linear blend skinning per vertex, for the CPU skinning here, the posed error (`eval::posed`) and the
/// range-of-motion check.
#[inline]
pub fn blend_row(joints: &[u16], weights: &[f32], unweighted: Vec3, by: impl Fn(usize) -> Option<Vec3>) -> Vec3 {
    if joints.is_empty() {
        return unweighted;
    }
    let mut sum = Vec3::ZERO;
    for (&j, &w) in joints.iter().zip(weights) {
        sum += w * by(j as usize).unwrap_or(unweighted);
    }
    sum
}

fn linear_blend(positions: &[Vec3], normals: &[Vec3], weights: &Weights, matrices: &[Mat4]) -> (Vec<Vec3>, Vec<Vec3>) {
    let nmats: Vec<Mat3> = matrices.iter().map(normal_matrix).collect();
    let mut out_p = Vec::with_capacity(positions.len());
    let mut out_n = Vec::with_capacity(positions.len());
    for (v, (&p, &n)) in positions.iter().zip(normals).enumerate() {
        let (js, ws) = weights.row(v);
        out_p.push(blend_row(js, ws, p, |j| matrices.get(j).map(|m| m.transform_point3(p))));
        let sn = blend_row(js, ws, n, |j| nmats.get(j).map(|nm| *nm * n));
        out_n.push(if js.is_empty() {
            n
        } else {
            sn.try_normalize().unwrap_or(n)
        });
    }
    (out_p, out_n)
}

/// A unit dual quaternion `real + eps * dual`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualQuat {
    pub real: Quat,
    pub dual: Quat,
}

impl DualQuat {
    pub const IDENTITY: Self = Self {
        real: Quat::IDENTITY,
        dual: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
    };

    /// The rigid part of `m`: rotation from its normalised axes, translation from its last column.
    pub fn from_mat4(m: &Mat4) -> Self {
        let a = Mat3::from_mat4(*m);
        let axes = Mat3::from_cols(
            a.x_axis.try_normalize().unwrap_or(Vec3::X),
            a.y_axis.try_normalize().unwrap_or(Vec3::Y),
            a.z_axis.try_normalize().unwrap_or(Vec3::Z),
        );
        let real = Quat::from_mat3(&axes).normalize();
        let t = m.w_axis.truncate();
        let dual = Quat::from_xyzw(t.x, t.y, t.z, 0.0) * real * 0.5;
        Self { real, dual }
    }

    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        let t = self.dual * self.real.conjugate() * 2.0;
        self.real * p + Vec3::new(t.x, t.y, t.z)
    }
}

fn dual_quaternion(
    positions: &[Vec3],
    normals: &[Vec3],
    weights: &Weights,
    matrices: &[Mat4],
) -> (Vec<Vec3>, Vec<Vec3>) {
    let dqs: Vec<DualQuat> = matrices.iter().map(DualQuat::from_mat4).collect();
    let dq_of = |j: u16| dqs.get(j as usize).copied().unwrap_or(DualQuat::IDENTITY);
    let mut out_p = Vec::with_capacity(positions.len());
    let mut out_n = Vec::with_capacity(positions.len());
    for (v, (&p, &n)) in positions.iter().zip(normals).enumerate() {
        let (js, ws) = weights.row(v);
        let Some(pivot) = weights.dominant(v) else {
            out_p.push(p);
            out_n.push(n);
            continue;
        };
        let q0 = dq_of(pivot).real;
        let mut real = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        let mut dual = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        for (&j, &w) in js.iter().zip(ws) {
            let dq = dq_of(j);
            let s = if dq.real.dot(q0) < 0.0 { -w } else { w };
            real += dq.real * s;
            dual += dq.dual * s;
        }
        let len = real.length();
        if len.is_nan() || len <= 1e-12 {
            out_p.push(p);
            out_n.push(n);
            continue;
        }
        let b = DualQuat {
            real: real * (1.0 / len),
            dual: dual * (1.0 / len),
        };
        // Remove the part of the dual that is not orthogonal to the real part, so `b` is a unit dual quaternion.
        let b = DualQuat {
            real: b.real,
            dual: b.dual - b.real * b.real.dot(b.dual),
        };
        out_p.push(b.transform_point(p));
        out_n.push((b.real * n).try_normalize().unwrap_or(n));
    }
    (out_p, out_n)
}

fn rigid(positions: &[Vec3], normals: &[Vec3], weights: &Weights, matrices: &[Mat4]) -> (Vec<Vec3>, Vec<Vec3>) {
    let nmats: Vec<Mat3> = matrices.iter().map(normal_matrix).collect();
    positions
        .iter()
        .zip(normals)
        .enumerate()
        .map(|(v, (&p, &n))| {
            match weights
                .dominant(v)
                .and_then(|j| matrices.get(j as usize).zip(nmats.get(j as usize)))
            {
                Some((m, nm)) => (m.transform_point3(p), (*nm * n).try_normalize().unwrap_or(n)),
                None => (p, n),
            }
        })
        .unzip()
}

/// Positions and normals of `skin` posed by `skel` in `pose`: the one call the CLI and editor use.
/// A skin without weights is returned as it is.
pub fn pose_skin(
    skel: &Skeleton,
    skin: &Skin,
    pose: &Pose,
    bind_fallback: &Pose,
    method: Method,
) -> Result<(Vec<Vec3>, Vec<Vec3>), RigError> {
    check_rig(skel, skin)?;
    let Some(weights) = skin.weights() else {
        return Ok((skin.positions().to_vec(), skin.normals().to_vec()));
    };
    let bind = bind_world_from_joint(skel, skin, bind_fallback);
    let world = world_from_joint(skel, pose);
    let m = skinning_matrices(&world, &bind);
    Ok(skin_vertices(skin.positions(), skin.normals(), weights, &m, method))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(j: u16) -> Weights {
        Weights::rigid(&[j])
    }

    #[test]
    fn normals_use_the_inverse_transpose_under_non_uniform_scale() {
        // A plane x + y = 0 has normal (1, 1, 0)/sqrt 2. Scaling x by 2 maps it to the plane x/2 + y = 0,
        // whose normal is (1, 2, 0)/sqrt 5; plain M * n would give (2, 1, 0).
        let m = [Mat4::from_scale(Vec3::new(2.0, 1.0, 1.0))];
        let n = Vec3::new(1.0, 1.0, 0.0).normalize();
        let (_, out) = skin_vertices(&[Vec3::ZERO], &[n], &one(0), &m, Method::Linear);
        assert!((out[0] - Vec3::new(1.0, 2.0, 0.0).normalize()).length() < 1e-6);
    }

    #[test]
    fn dual_quaternions_pick_one_hemisphere() {
        // Two joints with the same rotation of 3 rad about z: their quaternions can come out with opposite
        // signs; without the fix, blending them half and half would cancel the rotation.
        let r = Mat4::from_rotation_z(3.0);
        let mut a = DualQuat::from_mat4(&r);
        a.real = -a.real;
        a.dual = -a.dual;
        let b = DualQuat::from_mat4(&r);
        assert!(a.real.dot(b.real) < 0.0);
        let w = Weights::new(vec![0, 2], vec![0, 1], vec![0.5, 0.5]).unwrap();
        let (p, _) = skin_vertices(&[Vec3::X], &[Vec3::Z], &w, &[r, r], Method::DualQuaternion);
        assert!((p[0] - r.transform_point3(Vec3::X)).length() < 1e-5, "{}", p[0]);
    }

    #[test]
    fn dual_quaternion_blend_keeps_length_where_linear_blend_collapses() {
        // The candy-wrapper case: a twist of pi about the bone axis, blended half and half.
        let m = [Mat4::IDENTITY, Mat4::from_rotation_x(std::f32::consts::PI)];
        let w = Weights::new(vec![0, 2], vec![0, 1], vec![0.5, 0.5]).unwrap();
        let p = Vec3::new(0.0, 1.0, 0.0);
        let (lbs, _) = skin_vertices(&[p], &[Vec3::Y], &w, &m, Method::Linear);
        let (dqs, _) = skin_vertices(&[p], &[Vec3::Y], &w, &m, Method::DualQuaternion);
        assert!(lbs[0].length() < 1e-6, "LBS collapses to the axis");
        assert!((dqs[0].length() - 1.0).abs() < 1e-5, "DQS keeps the radius");
    }

    #[test]
    fn unweighted_vertices_stay_put() {
        let w = Weights::new(vec![0, 0], vec![], vec![]).unwrap();
        let m = [Mat4::from_translation(Vec3::ONE)];
        for method in [Method::Linear, Method::DualQuaternion, Method::Rigid] {
            let (p, _) = skin_vertices(&[Vec3::X], &[Vec3::Y], &w, &m, method);
            assert_eq!(p[0], Vec3::X);
        }
    }
}
