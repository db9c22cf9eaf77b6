//! Laplacian smoothing of the weights over the welded mesh graph ([`MeshGraph`]).
//!
//! Each iteration replaces every free node's weights by
//! `w'(v) = (1 - λ) w(v) + λ Σ_u a_vu w(u) / Σ_u a_vu` over its neighbours `u`, for every joint at once, with
//! `λ` the strength in [0, 1] and `a_vu` 1 (uniform) or the clamped cotangent weight (see [`super::graph`]).
//! This is one explicit step of the heat equation per iteration, as in Blender's "Smooth" vertex-group operator
//! and Maya's "Smooth Skin Weights". Details:
//!
//! - Coincident vertices are one node: they start from the mean of their rows and always end equal, so seams
//!   never crack.
//! - Locked joints do not diffuse: a node keeps its locked weights, and the unlocked ones are rescaled to fill
//!   the rest ([`super::rows::normalise_row`]). Coincident vertices whose locked weights differ each keep their
//!   own, with the node's unlocked weights scaled around them.
//! - A vertex mask limits the change to the nodes of masked vertices; the others stay as they were and act as
//!   fixed boundary values.
//! - A node keeps at most [`MAX_INFLUENCES`] influences during smoothing (locked ones first, then the largest;
//!   ties to the lower joint), and unlocked weights below [`DROP`] are dropped, so rows stay short as weights spread; each row is renormalised.
//!   Limit the final count with [`super::ops::limit`].
//!
//! Nodes whose whole neighbourhood holds the same single joint are skipped (the result would be the same), which
//! is most of a mesh; the rest are computed in parallel, deterministically (each node reads only the previous
//! iteration).

use rayon::prelude::*;

use super::graph::MeshGraph;
use super::rows::{Locks, normalise_row};
use crate::model::Row;
use crate::model::Weights;

/// Most influences a node keeps while smoothing.
pub const MAX_INFLUENCES: usize = 8;
/// Weights below this are dropped while smoothing.
pub const DROP: f32 = 1e-5;

const W: usize = MAX_INFLUENCES;

/// Edge weights for smoothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SmoothScheme {
    /// Every neighbour counts the same (robust on any mesh; the default).
    #[default]
    Uniform,
    /// Cotangent weights (follow the surface's geometry; better on irregular triangulations).
    Cotangent,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SmoothOptions {
    pub iterations: u32,
    /// λ in [0, 1]: how far each iteration moves a node toward its neighbours' mean.
    pub strength: f32,
    pub scheme: SmoothScheme,
}

impl Default for SmoothOptions {
    fn default() -> Self {
        Self {
            iterations: 3,
            strength: 0.5,
            scheme: SmoothScheme::Uniform,
        }
    }
}

#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum SmoothError {
    #[error("smoothing strength {0} is not in [0, 1]")]
    Strength(f32),
    #[error("the weights have {weights} vertices, the mesh {mesh}")]
    Count { weights: usize, mesh: usize },
    #[error("the mask has {mask} entries for {mesh} vertices")]
    Mask { mask: usize, mesh: usize },
}

/// What smoothing did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SmoothReport {
    pub iterations: u32,
    /// Vertices whose weights changed.
    pub vertices_changed: usize,
    /// Vertices that could only sum to 1 by changing locked weights.
    pub locks_overridden: usize,
}

/// Fixed-width rows, one per node.
#[derive(Clone)]
struct NodeRows {
    len: Vec<u8>,
    joints: Vec<u16>,
    values: Vec<f32>,
}

impl NodeRows {
    fn row(&self, n: usize) -> (&[u16], &[f32]) {
        let k = self.len[n] as usize;
        (&self.joints[n * W..n * W + k], &self.values[n * W..n * W + k])
    }

    /// Whether node `n` holds exactly joint `j` alone.
    #[inline]
    fn single(&self, n: usize) -> Option<u16> {
        (self.len[n] == 1).then(|| self.joints[n * W])
    }
}

/// Keep the `W` largest (ties: lower joint), drop tiny ones, normalise around the locks, sort by joint, and
/// write into a fixed-width slot.
fn store(row: &mut Row, locks: &Locks, len: &mut u8, joints: &mut [u16], values: &mut [f32]) -> bool {
    row.retain(|&(j, w)| w >= DROP || (w > 0.0 && locks.is_locked(j)));
    if row.len() > W {
        row.sort_by(|a, b| locks.locked_then_stronger(a, b));
        row.truncate(W);
    }
    let overridden = normalise_row(row, locks) == super::rows::RowFix::LocksOverridden;
    row.sort_unstable_by_key(|x| x.0);
    *len = row.len() as u8;
    for (k, &(j, w)) in row.iter().enumerate() {
        joints[k] = j;
        values[k] = w;
    }
    overridden
}

/// Smooth `weights` over `graph` (built from the same mesh). `mask`, one flag per vertex, limits the change to
/// the nodes of flagged vertices. Unweighted vertices take part like any other (an all-empty neighbourhood stays
/// empty; a node gains weights from weighted neighbours).
pub fn smooth(
    graph: &MeshGraph,
    triangles: &[[u32; 3]],
    weights: &Weights,
    opts: &SmoothOptions,
    locks: &Locks,
    mask: Option<&[bool]>,
) -> Result<(Weights, SmoothReport), SmoothError> {
    if !(0.0..=1.0).contains(&opts.strength) {
        return Err(SmoothError::Strength(opts.strength));
    }
    if weights.len() != graph.vertices() {
        return Err(SmoothError::Count {
            weights: weights.len(),
            mesh: graph.vertices(),
        });
    }
    if let Some(m) = mask.filter(|m| m.len() != graph.vertices()) {
        return Err(SmoothError::Mask {
            mask: m.len(),
            mesh: graph.vertices(),
        });
    }
    let mut report = SmoothReport {
        iterations: opts.iterations,
        ..Default::default()
    };
    if opts.iterations == 0 || opts.strength == 0.0 {
        return Ok((weights.clone(), report));
    }
    let nodes = graph.nodes();
    let free: Vec<bool> = (0..nodes)
        .map(|n| mask.is_none_or(|m| graph.members(n).iter().any(|&v| m[v as usize])))
        .collect();
    let edge_w = match opts.scheme {
        SmoothScheme::Uniform => None,
        SmoothScheme::Cotangent => Some(graph.cotangent_weights(triangles)),
    };

    // Initial node rows: the mean of the members' rows.
    let mut cur = NodeRows {
        len: vec![0; nodes],
        joints: vec![0; nodes * W],
        values: vec![0.0; nodes * W],
    };
    let overridden = std::sync::atomic::AtomicUsize::new(0);
    cur.len
        .par_chunks_mut(1024)
        .zip(cur.joints.par_chunks_mut(1024 * W))
        .zip(cur.values.par_chunks_mut(1024 * W))
        .enumerate()
        .for_each_init(Vec::new, |row, (c, ((len, joints), values))| {
            for k in 0..len.len() {
                let n = c * 1024 + k;
                row.clear();
                let members = graph.members(n);
                if let [v] = members {
                    // One vertex with one influence (most of a mesh): its row as it is.
                    let (js, ws) = weights.row(*v as usize);
                    if let ([j], [w]) = (js, ws)
                        && (*w - 1.0).abs() as f64 <= super::rows::SUM_EXACT
                    {
                        len[k] = 1;
                        joints[k * W] = *j;
                        values[k * W] = *w;
                        continue;
                    }
                }
                for &v in members {
                    weights.row_pairs(v as usize, row);
                }
                if members.len() > 1 {
                    super::rows::sort_row(row);
                    let inv = 1.0 / members.len() as f32;
                    row.iter_mut().for_each(|x| x.1 *= inv);
                }
                store(row, locks, &mut len[k], &mut joints[k * W..], &mut values[k * W..]);
            }
        });
    let mut next = cur.clone();
    let lambda = opts.strength;
    // Per node, whether its row changed in the last iteration. A node whose closed neighbourhood did not change
    // keeps its row, and the other buffer already holds that row (it did not change the time before either), so
    // it is skipped without a write: only the blend zones and the spreading front cost anything.
    let mut changed_prev = vec![1u8; nodes];
    let mut changed_now = vec![0u8; nodes];

    for _ in 0..opts.iterations {
        let prev = &cur;
        let was = &changed_prev;
        next.len
            .par_chunks_mut(1024)
            .zip(next.joints.par_chunks_mut(1024 * W))
            .zip(next.values.par_chunks_mut(1024 * W))
            .zip(changed_now.par_chunks_mut(1024))
            .enumerate()
            .for_each_init(Vec::new, |row: &mut Row, (c, (((len, joints), values), now))| {
                let mut n_over = 0;
                for k in 0..len.len() {
                    let n = c * 1024 + k;
                    now[k] = 0;
                    let nb = graph.neighbours(n);
                    // Fixed nodes never change; both buffers hold their first row.
                    if !free[n] || nb.is_empty() {
                        continue;
                    }
                    if was[n] == 0 && nb.iter().all(|&u| was[u as usize] == 0) {
                        continue;
                    }
                    let (pj, pv) = prev.row(n);
                    // One joint everywhere around: the row stays; copy it only if the other buffer is stale.
                    if let Some(j) = prev.single(n)
                        && nb.iter().all(|&u| prev.single(u as usize) == Some(j))
                    {
                        if was[n] != 0 {
                            len[k] = 1;
                            joints[k * W] = j;
                            values[k * W] = pv[0];
                        }
                        continue;
                    }
                    let range = graph.edge_range(n);
                    let total: f32 = match &edge_w {
                        Some(w) => w[range.clone()].iter().sum(),
                        None => nb.len() as f32,
                    };
                    let uniform = edge_w.is_none() || !(total > 0.0 && total.is_finite());
                    let total = if uniform { nb.len() as f32 } else { total };
                    row.clear();
                    let mut add = |j: u16, w: f32| match row.iter_mut().find(|x| x.0 == j) {
                        Some(x) => x.1 += w,
                        None => row.push((j, w)),
                    };
                    for (&j, &w) in pj.iter().zip(pv) {
                        add(j, (1.0 - lambda) * w);
                    }
                    for (e, &u) in nb.iter().enumerate() {
                        let a = match &edge_w {
                            Some(w) if !uniform => w[range.start + e],
                            _ => 1.0,
                        };
                        if a == 0.0 {
                            continue;
                        }
                        let s = lambda * a / total;
                        let (uj, uv) = prev.row(u as usize);
                        for (&j, &w) in uj.iter().zip(uv) {
                            add(j, s * w);
                        }
                    }
                    if locks.any() {
                        // Locked joints do not diffuse: the node keeps its own locked weights.
                        row.retain(|x| !locks.is_locked(x.0));
                        for (&j, &w) in pj.iter().zip(pv) {
                            if locks.is_locked(j) {
                                row.push((j, w));
                            }
                        }
                    }
                    if store(row, locks, &mut len[k], &mut joints[k * W..], &mut values[k * W..]) {
                        n_over += 1;
                    }
                    let m = len[k] as usize;
                    if m != pj.len() || joints[k * W..k * W + m] != *pj || values[k * W..k * W + m] != *pv {
                        now[k] = 1;
                    }
                }
                overridden.fetch_add(n_over, std::sync::atomic::Ordering::Relaxed);
            });
        std::mem::swap(&mut cur, &mut next);
        std::mem::swap(&mut changed_prev, &mut changed_now);
    }

    // Vertices of free nodes take their node's row; the rest keep theirs.
    let changed = std::sync::atomic::AtomicUsize::new(0);
    let out = super::rows::map_rows(
        weights.len(),
        || (),
        |_, v, row| {
            let n = graph.node_of(v);
            if free[n] {
                let (j, w) = cur.row(n);
                if locks.any() && graph.members(n).len() > 1 {
                    // Coincident vertices may differ in their locked weights: each keeps its own.
                    let (vj, vw) = weights.row(v);
                    row.extend(
                        vj.iter()
                            .copied()
                            .zip(vw.iter().copied())
                            .filter(|x| locks.is_locked(x.0)),
                    );
                    row.extend(
                        j.iter()
                            .copied()
                            .zip(w.iter().copied())
                            .filter(|x| !locks.is_locked(x.0)),
                    );
                    normalise_row(row, locks);
                    if weights.row(v).0 != row.iter().map(|x| x.0).collect::<Vec<_>>().as_slice()
                        || weights.row(v).1 != row.iter().map(|x| x.1).collect::<Vec<_>>().as_slice()
                    {
                        changed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    return;
                }
                row.extend(j.iter().copied().zip(w.iter().copied()));
                if weights.row(v) != (j, w) {
                    changed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            } else {
                weights.row_pairs(v, row);
            }
        },
    );
    report.vertices_changed = changed.into_inner();
    report.locks_overridden = overridden.into_inner();
    Ok((out, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    /// A strip of `n` quads along x (2n + 2 vertices), two triangles each.
    fn strip(n: usize) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let mut p = Vec::new();
        for i in 0..=n {
            p.push(Vec3::new(i as f32, 0.0, 0.0));
            p.push(Vec3::new(i as f32, 1.0, 0.0));
        }
        let mut t = Vec::new();
        for i in 0..n as u32 {
            let (a, b, c, d) = (2 * i, 2 * i + 1, 2 * i + 2, 2 * i + 3);
            t.push([a, c, b]);
            t.push([b, c, d]);
        }
        (p, t)
    }

    fn weights_by(n: usize, f: impl Fn(usize) -> Row) -> Weights {
        let rows: Vec<Row> = (0..n).map(f).collect();
        Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap().0
    }

    #[test]
    fn constant_fields_do_not_change() {
        let (p, t) = strip(20);
        let g = MeshGraph::new(&p, &t);
        let w = weights_by(p.len(), |_| vec![(2, 0.25), (5, 0.75)]);
        for scheme in [SmoothScheme::Uniform, SmoothScheme::Cotangent] {
            let opts = SmoothOptions {
                iterations: 10,
                strength: 0.7,
                scheme,
            };
            let (out, _) = smooth(&g, &t, &w, &opts, &Locks::none(), None).unwrap();
            for v in 0..p.len() {
                let (j, x) = out.row(v);
                assert_eq!(j, &[2, 5]);
                assert!((x[0] - 0.25).abs() < 1e-6 && (x[1] - 0.75).abs() < 1e-6);
            }
        }
    }

    /// One uniform step on a path, worked by hand: the strip's left column is joint 0, the rest joint 1.
    #[test]
    fn one_uniform_step_matches_hand_values() {
        let (p, t) = strip(4);
        let g = MeshGraph::new(&p, &t);
        let w = weights_by(p.len(), |v| if v < 2 { vec![(0, 1.0)] } else { vec![(1, 1.0)] });
        let opts = SmoothOptions {
            iterations: 1,
            strength: 0.5,
            scheme: SmoothScheme::Uniform,
        };
        let (out, rep) = smooth(&g, &t, &w, &opts, &Locks::none(), None).unwrap();
        // Vertex 0 (0,0): neighbours 1 (joint 0), 2 (joint 1): mean 0.5/0.5, so 0.5 * 1 + 0.5 * 0.5 = 0.75 of joint 0.
        assert_eq!(out.row(0).0, &[0, 1]);
        assert!((out.row(0).1[0] - 0.75).abs() < 1e-6);
        // Vertex 1 (0,1): neighbours 0 (joint 0), 2, 3 (joint 1): joint 0 = 0.5 + 0.5 / 3.
        assert!((out.row(1).1[0] - (0.5 + 0.5 / 3.0)).abs() < 1e-6);
        // Vertex 2 (1,0): neighbours 0, 1 (joint 0), 3, 4 (joint 1): joint 0 = 0.5 * 2 / 4.
        assert!((out.row(2).1[0] - 0.25).abs() < 1e-6);
        // Far vertices keep joint 1 alone.
        assert_eq!(out.row(9), (&[1u16][..], &[1.0f32][..]));
        assert_eq!(
            rep.vertices_changed, 4,
            "vertices 0 to 3 change; 3 touches 1 through the diagonal"
        );
        assert!((out.row(3).1[0] - 0.125).abs() < 1e-6);
    }

    #[test]
    fn seams_end_equal_and_locks_and_mask_hold() {
        let (mut p, mut t) = strip(6);
        // Duplicate vertex 6 (a seam) and use the copy in the next triangle.
        p.push(p[6]);
        let dup = (p.len() - 1) as u32;
        for tri in t.iter_mut().skip(6) {
            for i in tri.iter_mut() {
                if *i == 6 {
                    *i = dup;
                }
            }
        }
        let g = MeshGraph::new(&p, &t);
        let w = weights_by(p.len(), |v| {
            let x = p[v].x;
            if v == dup as usize {
                vec![(2, 1.0)]
            } else if x < 3.0 {
                vec![(0, 0.9), (2, 0.1)]
            } else {
                vec![(1, 0.8), (2, 0.2)]
            }
        });
        let opts = SmoothOptions {
            iterations: 5,
            strength: 0.5,
            scheme: SmoothScheme::Cotangent,
        };
        let (out, _) = smooth(&g, &t, &w, &opts, &Locks::none(), None).unwrap();
        assert_eq!(out.row(6), out.row(dup as usize), "coincident vertices end equal");
        // Locked, every vertex keeps its joint 2 weight, the two coincident ones their own different ones.
        let locks = Locks::of([2]);
        let (out, _) = smooth(&g, &t, &w, &opts, &locks, None).unwrap();
        for v in 0..p.len() {
            let (js, ws) = out.row(v);
            let sum: f32 = ws.iter().sum();
            assert!((sum - 1.0).abs() < 1e-6);
            let locked = js.iter().position(|&j| j == 2).map(|k| ws[k]);
            let before = w.row(v).0.iter().position(|&j| j == 2).map(|k| w.row(v).1[k]);
            assert_eq!(locked, before, "vertex {v}: locked joint 2 kept");
        }
        assert_eq!(
            out.row(dup as usize),
            (&[2u16][..], &[1.0f32][..]),
            "fully locked: nothing left to smooth"
        );
        // A mask of the first two columns: nothing else changes.
        let mask: Vec<bool> = (0..p.len()).map(|v| v < 6).collect();
        let (out, _) = smooth(&g, &t, &w, &opts, &Locks::none(), Some(&mask)).unwrap();
        for v in 6..p.len() {
            assert_eq!(out.row(v), w.row(v), "vertex {v} outside the mask");
        }
        assert_ne!(out.row(4), w.row(4), "vertex 4 touches vertex 6 across the boundary");
    }

    #[test]
    fn rejects_bad_input() {
        let (p, t) = strip(2);
        let g = MeshGraph::new(&p, &t);
        let w = weights_by(p.len(), |_| vec![(0, 1.0)]);
        let bad = SmoothOptions {
            strength: 1.5,
            ..Default::default()
        };
        assert_eq!(
            smooth(&g, &t, &w, &bad, &Locks::none(), None).unwrap_err(),
            SmoothError::Strength(1.5)
        );
        let short = weights_by(3, |_| vec![(0, 1.0)]);
        assert!(matches!(
            smooth(&g, &t, &short, &SmoothOptions::default(), &Locks::none(), None),
            Err(SmoothError::Count { .. })
        ));
    }

    /// Against a dense reference (every joint of every node, f64, no skipping, no truncation): a strip with
    /// large single-joint regions, blend zones and a seam, over several iterations, both schemes.
    #[test]
    fn matches_a_dense_reference() {
        let (mut p, mut t) = strip(40);
        p.push(p[30]);
        let dup = (p.len() - 1) as u32;
        for tri in t.iter_mut().skip(30) {
            tri.iter_mut().filter(|i| **i == 30).for_each(|i| *i = dup);
        }
        let joint_at = |x: f32| -> Row {
            match x {
                x if x < 10.0 => vec![(0, 1.0)],
                x if x < 12.0 => vec![(0, 0.6), (1, 0.4)],
                x if x < 25.0 => vec![(1, 1.0)],
                x if x < 26.0 => vec![(1, 0.3), (2, 0.5), (3, 0.2)],
                _ => vec![(2, 1.0)],
            }
        };
        let w = weights_by(p.len(), |v| joint_at(p[v].x));
        let g = MeshGraph::new(&p, &t);
        for scheme in [SmoothScheme::Uniform, SmoothScheme::Cotangent] {
            let opts = SmoothOptions {
                iterations: 7,
                strength: 0.6,
                scheme,
            };
            let (out, _) = smooth(&g, &t, &w, &opts, &Locks::none(), None).unwrap();
            // Dense reference over nodes.
            let cot = g.cotangent_weights(&t);
            let mut cur: Vec<[f64; 4]> = (0..g.nodes())
                .map(|n| {
                    let mut r = [0.0; 4];
                    let m = g.members(n);
                    for &v in m {
                        let (js, ws) = w.row(v as usize);
                        for (&j, &x) in js.iter().zip(ws) {
                            r[j as usize] += x as f64 / m.len() as f64;
                        }
                    }
                    r
                })
                .collect();
            for _ in 0..7 {
                let prev = cur.clone();
                for (n, row) in cur.iter_mut().enumerate() {
                    let nb = g.neighbours(n);
                    let a: Vec<f64> = match scheme {
                        SmoothScheme::Uniform => vec![1.0; nb.len()],
                        SmoothScheme::Cotangent => g.edge_range(n).map(|e| cot[e] as f64).collect(),
                    };
                    let total: f64 = a.iter().sum();
                    for j in 0..4 {
                        let mean: f64 = nb.iter().zip(&a).map(|(&u, &x)| x * prev[u as usize][j]).sum::<f64>() / total;
                        row[j] = 0.4 * prev[n][j] + 0.6 * mean;
                    }
                    let sum: f64 = row.iter().sum();
                    row.iter_mut().for_each(|x| *x /= sum);
                }
            }
            for v in 0..p.len() {
                let want = cur[g.node_of(v)];
                let (js, ws) = out.row(v);
                for j in 0..4u16 {
                    let got = js.iter().position(|&q| q == j).map_or(0.0, |k| ws[k] as f64);
                    assert!(
                        (got - want[j as usize]).abs() < 1e-4,
                        "{scheme:?} vertex {v} joint {j}: {got} vs {}",
                        want[j as usize]
                    );
                }
            }
        }
    }
}
