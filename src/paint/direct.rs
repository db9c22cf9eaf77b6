//! Direct manipulation of a skinned vertex (CSE169, "Skin adjustment"): in a posed state, the person drags a
//! vertex to where it should be, and the weights are solved so that skinning puts it there.
//!
//! With the vertex's bind-pose position `p` and candidate joints `j` whose skinning matrices are `M_j`
//! (`world_from_joint * joint_from_bind`), linear blend skinning puts the vertex at `sum_j w_j M_j p`. The
//! solve finds the weights that bring it closest to the target `t`:
//!
//! ```text
//! minimise |A w - t|²  subject to  w >= 0,  sum w = 1,     A = [M_1 p, ..., M_k p]  (3 x k)
//! ```
//!
//! a non-negative least squares problem with an equality constraint. With at most [`MAX_CANDIDATES`] joints
//! the exact answer is found by trying every support set: on a support `S` the equality-constrained problem is
//! solved from its KKT system (`[2 AᵀA 1; 1ᵀ 0] [w; μ] = [2 Aᵀt; 1]`), supports with a negative weight are
//! infeasible, and the feasible one with the least residual wins (ties: the smaller support, then the lower
//! joints). The optimum of a convex problem over the simplex lies on some face, and every face is tried, so this
//! is the global minimum (Lawson and Hanson, "Solving Least Squares Problems", 1974, ch. 23, solve the same
//! problem by an active set; at this size enumeration is simpler and deterministic). A target out of reach gives
//! the nearest reachable point; degenerate candidates (equal columns) give the first of them.

use glam::{Mat4, Vec3};

use crate::adjust::rows::{Locks, normalise_row};
use crate::model::weights::stronger_first;
use crate::model::{Row, Skeleton};

/// At most this many candidate joints (2^8 supports, each a 9 x 9 solve at most).
pub const MAX_CANDIDATES: usize = 8;

/// The solved weights, one per candidate (summing to 1), and how far the skinned vertex then is from the target.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectSolve {
    pub weights: Vec<f32>,
    pub residual: f32,
}

/// Solve the weights of `candidates` (joint indices into `skinning`) for the bind-pose point `p` so that
/// skinning puts it as near `target` as it can go. None when there is no candidate, more than
/// [`MAX_CANDIDATES`], a candidate outside `skinning`, or a non-finite input.
pub fn solve_weights_for_target(p: Vec3, target: Vec3, skinning: &[Mat4], candidates: &[u16]) -> Option<DirectSolve> {
    let k = candidates.len();
    if k == 0 || k > MAX_CANDIDATES || !p.is_finite() || !target.is_finite() {
        return None;
    }
    let cols: Vec<glam::DVec3> = candidates
        .iter()
        .map(|&j| skinning.get(j as usize).map(|m| m.transform_point3(p).as_dvec3()))
        .collect::<Option<_>>()?;
    if cols.iter().any(|c| !c.is_finite()) {
        return None;
    }
    let t = target.as_dvec3();
    let scale = cols.iter().map(|c| c.length()).fold(t.length(), f64::max).max(1e-12);
    let mut best: Option<(f64, u32, Vec<f64>)> = None;
    for mask in 1u32..(1 << k) {
        let support: Vec<usize> = (0..k).filter(|i| mask & (1 << i) != 0).collect();
        let Some(w) = solve_on_support(&cols, t, &support) else {
            continue;
        };
        if w.iter().any(|&x| x < -1e-9) {
            continue;
        }
        let mut full = vec![0.0f64; k];
        for (&i, &x) in support.iter().zip(&w) {
            full[i] = x.max(0.0);
        }
        let sum: f64 = full.iter().sum();
        if sum <= 0.0 {
            continue;
        }
        full.iter_mut().for_each(|x| *x /= sum);
        let at: glam::DVec3 = cols.iter().zip(&full).map(|(c, &x)| *c * x).sum();
        let r2 = (at - t).length_squared();
        // Residuals equal to rounding (relative to the model's scale) count as ties.
        let better = match &best {
            None => true,
            Some((b, bmask, _)) => {
                let eps = 1e-12 * scale * scale;
                r2 < b - eps || ((r2 - b).abs() <= eps && (mask.count_ones(), mask) < (bmask.count_ones(), *bmask))
            }
        };
        if better {
            best = Some((r2, mask, full));
        }
    }
    let (r2, _, w) = best?;
    Some(DirectSolve {
        weights: w.iter().map(|&x| x as f32).collect(),
        residual: r2.sqrt() as f32,
    })
}

/// The equality-constrained least squares weights on `support` (may be negative), from the KKT system; None
/// when it is singular.
fn solve_on_support(cols: &[glam::DVec3], t: glam::DVec3, support: &[usize]) -> Option<Vec<f64>> {
    let s = support.len();
    let n = s + 1;
    let mut a = vec![vec![0.0f64; n + 1]; n];
    for (r, &i) in support.iter().enumerate() {
        for (c, &j) in support.iter().enumerate() {
            a[r][c] = 2.0 * cols[i].dot(cols[j]);
        }
        a[r][s] = 1.0;
        a[s][r] = 1.0;
        a[r][n] = 2.0 * cols[i].dot(t);
    }
    a[s][n] = 1.0;
    // Gaussian elimination with partial pivoting.
    let scale = a
        .iter()
        .flat_map(|r| r[..n].iter())
        .fold(0.0f64, |m, x| m.max(x.abs()))
        .max(1e-300);
    for col in 0..n {
        let piv = (col..n).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[piv][col].abs() <= 1e-12 * scale {
            return None;
        }
        a.swap(col, piv);
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot_row[col];
                if f != 0.0 {
                    for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                        *x -= f * p;
                    }
                }
            }
        }
    }
    Some((0..s).map(|r| a[r][n] / a[r][r]).collect())
}

/// What [`solve_move`] needs of the rig: the skeleton (for the candidates' parents and children), the skinning
/// matrices of the current pose, the locks, and the selected joint.
pub struct MoveJoints<'a> {
    pub skeleton: &'a Skeleton,
    pub skinning: &'a [Mat4],
    pub locks: &'a Locks,
    pub selected: Option<u16>,
}

/// The Move tool's solve: weights for a vertex at bind-pose position `p` (whose row was `row`) that put it at
/// `target`. Candidates are its joints, the selected joint, and their parents and children (at most
/// [`MAX_CANDIDATES`]); locked joints keep their weights and the others share what is left. The row comes
/// back sorted by joint and summing to 1; None where no unlocked candidate can move it.
pub fn solve_move(joints: &MoveJoints<'_>, p: Vec3, row: &Row, target: Vec3) -> Option<Row> {
    let (skel, m, locks) = (joints.skeleton, joints.skinning, joints.locks);
    let mut ordered = row.clone();
    ordered.sort_by(stronger_first);
    let mut cand: Vec<u16> = ordered.iter().map(|x| x.0).collect();
    cand.extend(joints.selected);
    for &(j, _) in &ordered {
        cand.extend(skel.joint(j as usize).and_then(|x| x.parent).map(|p| p as u16));
    }
    for &(j, _) in &ordered {
        cand.extend(skel.children(j as usize).iter().map(|&c| c as u16));
    }
    let mut seen = Vec::new();
    cand.retain(|&j| {
        !seen.contains(&j) && !locks.is_locked(j) && (j as usize) < m.len() && {
            seen.push(j);
            true
        }
    });
    cand.truncate(MAX_CANDIDATES);
    // Locked weights stay; the others share what they leave: t' = (t - sum_L w_l M_l p) / (1 - s_L).
    let locked: Row = row.iter().copied().filter(|x| locks.is_locked(x.0)).collect();
    let s_l: f32 = locked.iter().map(|x| x.1).sum();
    if s_l >= 1.0 - 1e-6 || cand.is_empty() {
        return None;
    }
    let mut fixed = Vec3::ZERO;
    for &(j, w) in &locked {
        fixed += m.get(j as usize)?.transform_point3(p) * w;
    }
    let t = (target - fixed) / (1.0 - s_l);
    let solved = solve_weights_for_target(p, t, m, &cand)?;
    let mut out = locked;
    out.extend(
        cand.iter()
            .zip(&solved.weights)
            .filter(|(_, w)| **w > 1e-6)
            .map(|(&j, &w)| (j, w * (1.0 - s_l))),
    );
    let sum: f32 = out.iter().map(|x| x.1).sum();
    if sum.is_nan() || sum <= 0.0 {
        return None;
    }
    // Rounding: the unlocked part absorbs it so the row sums to 1 and locked weights stay bit for bit.
    normalise_row(&mut out, locks);
    out.sort_unstable_by_key(|x| x.0);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    fn matrices() -> Vec<Mat4> {
        vec![
            Mat4::from_rotation_translation(Quat::from_rotation_z(0.7), Vec3::new(0.1, 0.0, 0.0)),
            Mat4::from_rotation_translation(Quat::from_rotation_x(-0.9), Vec3::new(0.0, 0.3, 0.0)),
            Mat4::from_rotation_translation(Quat::from_rotation_y(1.3), Vec3::new(0.0, 0.0, -0.2)),
            Mat4::from_rotation_translation(
                Quat::from_axis_angle(Vec3::ONE.normalize(), 0.5),
                Vec3::new(0.2, 0.1, 0.0),
            ),
        ]
    }

    #[test]
    fn a_moved_vertex_reaches_a_reachable_target_and_locked_weights_stay_bit_for_bit() {
        use crate::model::{Joint, Skeleton};
        // A chain 0 -> 1 -> 2 -> 3; the vertex is on joints 1 and 2, joint 0 locked at 0.2.
        let skel = Skeleton::new(vec![
            Joint::new("a", None, Vec3::ZERO),
            Joint::new("b", Some(0), Vec3::Y),
            Joint::new("c", Some(1), Vec3::Y),
            Joint::new("d", Some(2), Vec3::Y),
        ])
        .unwrap();
        let m = matrices();
        let locks = Locks::of([0]);
        let joints = MoveJoints {
            skeleton: &skel,
            skinning: &m,
            locks: &locks,
            selected: None,
        };
        let p = Vec3::new(0.3, 1.1, -0.4);
        let row: Row = vec![(0, 0.2), (1, 0.5), (2, 0.3)];
        // A target the unlocked joints 1, 2 and 3 (2's child) can reach with 0.2 left on joint 0.
        let wanted = [(0u16, 0.2f32), (1, 0.1), (2, 0.3), (3, 0.4)];
        let target: Vec3 = wanted.iter().map(|&(j, w)| m[j as usize].transform_point3(p) * w).sum();
        let out = solve_move(&joints, p, &row, target).unwrap();
        assert_eq!(out[0], (0, 0.2), "the locked weight stays bit for bit: {out:?}");
        assert!((out.iter().map(|x| x.1).sum::<f32>() - 1.0).abs() < 1e-6);
        let reached: Vec3 = out.iter().map(|&(j, w)| m[j as usize].transform_point3(p) * w).sum();
        assert!(reached.distance(target) < 1e-4, "{out:?}");
        // Everything locked: nothing can move it.
        let all = Locks::of([0, 1, 2, 3]);
        let stuck = MoveJoints { locks: &all, ..joints };
        assert_eq!(solve_move(&stuck, p, &row, target), None);
    }

    #[test]
    fn known_weights_are_recovered_from_the_target_they_make() {
        let m = matrices();
        let p = Vec3::new(0.3, 1.1, -0.4);
        for known in [
            [0.2f32, 0.5, 0.3, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.25, 0.25, 0.25, 0.25],
            [0.6, 0.0, 0.0, 0.4],
        ] {
            let t: Vec3 = m.iter().zip(known).map(|(m, w)| m.transform_point3(p) * w).sum();
            let s = solve_weights_for_target(p, t, &m, &[0, 1, 2, 3]).unwrap();
            for (a, b) in s.weights.iter().zip(known) {
                assert!((a - b).abs() < 1e-4, "{:?} vs {known:?}", s.weights);
            }
            assert!(s.residual < 1e-5);
        }
    }

    #[test]
    fn an_unreachable_target_gives_the_nearest_reachable_point() {
        let m = matrices();
        let p = Vec3::new(0.3, 1.1, -0.4);
        let t = Vec3::new(10.0, -3.0, 7.0);
        let s = solve_weights_for_target(p, t, &m, &[0, 1, 2, 3]).unwrap();
        assert!((s.weights.iter().sum::<f32>() - 1.0).abs() < 1e-6 && s.weights.iter().all(|&w| w >= 0.0));
        // No point of the simplex, sampled finely, is nearer.
        let at = |w: [f32; 4]| -> Vec3 { m.iter().zip(w).map(|(m, w)| m.transform_point3(p) * w).sum() };
        let steps = 20;
        for a in 0..=steps {
            for b in 0..=steps - a {
                for c in 0..=steps - a - b {
                    let w = [a, b, c, steps - a - b - c].map(|x| x as f32 / steps as f32);
                    assert!(at(w).distance(t) >= s.residual - 1e-4);
                }
            }
        }
    }

    #[test]
    fn degenerate_and_bad_inputs_are_well_defined() {
        let same = vec![Mat4::IDENTITY; 3];
        let s = solve_weights_for_target(Vec3::X, Vec3::Y, &same, &[0, 1, 2]).unwrap();
        assert_eq!(s.weights, vec![1.0, 0.0, 0.0], "equal candidates: the first");
        assert!(s.weights.iter().all(|w| w.is_finite()));
        assert!(solve_weights_for_target(Vec3::X, Vec3::Y, &same, &[]).is_none());
        assert!(solve_weights_for_target(Vec3::X, Vec3::Y, &same, &[5]).is_none());
        assert!(solve_weights_for_target(Vec3::NAN, Vec3::Y, &same, &[0]).is_none());
        assert!(solve_weights_for_target(Vec3::X, Vec3::Y, &same, &[0; 9]).is_none());
    }
}
