//! Softening: each vertex's weights become a Gaussian average of the weights around it, measured along the
//! mesh's edges over a geometric radius, so that a blend fades out as painted weights do instead of ending where
//! the binding falloff's support ends. A clean-up step (`--soften` on `bind` and `clean`), after rogue removal so
//! that an island is removed before softening could join it to its joint's main region.
//!
//! The distance falloff gives a blend whose width is a fixed share of the distance to the bones, with sharp
//! corners where it starts and stops and no weight at all past the blend ratio. Painted weights (and diffused
//! ones, such as Blender's bone heat) fade out over a distance: CesiumMan's artist lets the neck's weight fade
//! over the back of the head (0.17 to 0.02 across 20 cm) and blends the chest into the spine over a hand's width.
//!
//! - **Kernel.** `exp(-d² / 2σ²)` over the welded nodes within `2σ` along the edges (Dijkstra over
//!   [`MeshGraph`], so separate parts stay apart), at most [`MAX_BALL`] of them (on a mesh so dense that the
//!   ball holds more, the nearest ones).
//! - **Radius.** `σ = min(`[`SIGMA_OF_DIAGONAL`]` × the bounding-box diagonal, `[`SIGMA_OF_BONE`]` × the
//!   vertex's distance to its nearest bone)`: a thin limb (a wasp's leg, a finger) is softened no further than
//!   its thickness allows, a head or a chest by up to the whole share of the diagonal.
//! - **Low-poly regions stay as they are.** A node whose edges are on average longer than [`SPARSE`] × σ keeps
//!   its weights: the kernel would reach its neighbours only with small weights, and a low-poly mesh's artist
//!   sets weights per vertex, hand-edged (softened, RiggedFigure's knees and hips moved 0.008 of L1 away).
//! - Each node's average keeps the `max_influences` strongest and is normalised; coincident vertices (one node)
//!   share it. Locked joints keep their weights; the rest of a vertex takes the average's unlocked joints, scaled
//!   to what the locks leave.
//!
//! Cost: one Dijkstra ball per node, whose size grows with `(σ / edge length)²`; fine on meshes of a few
//! thousand vertices (CesiumMan, 3273: a few ms), slow on dense ones (the 100k creature sample 1.2 s, 1M about
//! 100 s, every ball at [`MAX_BALL`]). This is why it is not yet part of the default clean-up (docs/cleanup.md).

use rayon::prelude::*;

use super::graph::MeshGraph;
use super::rows::{Locks, normalise_row};
use crate::bind::bones::Segment;
use crate::bind::nearest::{BoneIndex, Candidate, Scratch};
use crate::model::weights::keep_strongest;
use crate::model::{Row, Weights};

/// The largest softening radius σ, as a share of the bounding-box diagonal.
pub const SIGMA_OF_DIAGONAL: f32 = 0.015;
/// σ at most this times the vertex's distance to its nearest bone.
pub const SIGMA_OF_BONE: f32 = 0.35;
/// A node whose edges average more than this times its σ keeps its weights.
pub const SPARSE: f32 = 1.5;
/// The most nodes one kernel gathers.
pub const MAX_BALL: usize = 2048;
/// Softened weights below this are dropped (then the row is normalised again).
const MIN_WEIGHT: f32 = 1e-3;

/// What softening did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SoftenReport {
    /// Welded nodes averaged (the rest were low-poly or had no edges).
    pub softened_nodes: usize,
    /// Vertices whose row changed.
    pub changed_vertices: usize,
}

/// `weights` softened (see the module doc); `segments` are the bones, for each vertex's distance to its nearest.
pub fn soften(
    graph: &MeshGraph,
    weights: &Weights,
    segments: &[Segment],
    max_influences: usize,
    locks: &Locks,
) -> (Weights, SoftenReport) {
    let mut report = SoftenReport::default();
    let nodes = graph.nodes();
    if nodes == 0 || weights.len() != graph.vertices() || segments.is_empty() {
        return (weights.clone(), report);
    }
    let positions = graph.positions();
    let diag = crate::model::skin::bounds(positions).map_or(0.0, |(lo, hi)| (hi - lo).length());
    let index = BoneIndex::new(segments);
    let sigma: Vec<f32> = positions
        .par_iter()
        .enumerate()
        .map_init(
            || (Scratch::default(), Vec::<Candidate>::new()),
            |(scratch, near), (node, &p)| {
                index.near_bones(p, 1.0, scratch, near);
                let d1 = near.first().map_or(f32::INFINITY, |c| c.dist);
                let s = (SIGMA_OF_DIAGONAL * diag).min(SIGMA_OF_BONE * d1);
                let nb = graph.neighbours(node);
                let mean_edge =
                    nb.iter().map(|&m| positions[m as usize].distance(p)).sum::<f32>() / nb.len().max(1) as f32;
                if nb.is_empty() || !(s > 0.0 && s.is_finite()) || mean_edge > SPARSE * s {
                    0.0
                } else {
                    s
                }
            },
        )
        .collect();
    let node_row = |m: usize| weights.row(graph.members(m)[0] as usize);
    let averages: Vec<(usize, Row)> = (0..nodes)
        .into_par_iter()
        .filter(|&node| sigma[node] > 0.0)
        .map_init(
            || Ball::new(nodes),
            |ball, node| {
                let s = sigma[node];
                ball.gather(graph, node, 2.0 * s);
                let mut acc: Row = Vec::new();
                let mut total = 0.0f32;
                for &(m, d) in &ball.found {
                    let g = (-d * d / (2.0 * s * s)).exp();
                    total += g;
                    let (joints, values) = node_row(m as usize);
                    for (&j, &w) in joints.iter().zip(values) {
                        match acc.iter_mut().find(|x| x.0 == j) {
                            Some(x) => x.1 += g * w,
                            None => acc.push((j, g * w)),
                        }
                    }
                }
                acc.iter_mut().for_each(|x| x.1 /= total);
                limit_row(&mut acc, max_influences);
                (node, acc)
            },
        )
        .collect();
    report.softened_nodes = averages.len();
    let mut changed: Vec<(u32, Row)> = Vec::new();
    for (node, average) in &averages {
        for &v in graph.members(*node) {
            let (j, w) = weights.row(v as usize);
            let row = around_locks(j, w, average, locks);
            let same = j.len() == row.len()
                && row
                    .iter()
                    .zip(j.iter().zip(w))
                    .all(|(a, b)| a.0 == *b.0 && (a.1 - b.1).abs() < 1e-6);
            if !same && !row.is_empty() {
                changed.push((v, row));
            }
        }
    }
    changed.sort_by_key(|r| r.0);
    match weights.with_rows(&changed) {
        Ok(w) => {
            report.changed_vertices = changed.len();
            (w, report)
        }
        Err(_) => (weights.clone(), report),
    }
}

/// The `k` strongest of `row` (ties: lower joint), those under [`MIN_WEIGHT`] dropped, normalised, by joint.
fn limit_row(row: &mut Row, k: usize) {
    keep_strongest(row, k.max(1));
    let sum: f32 = row.iter().map(|x| x.1).sum();
    row.retain(|x| x.1 >= MIN_WEIGHT * sum);
    let sum: f32 = row.iter().map(|x| x.1).sum();
    if sum > 0.0 {
        row.iter_mut().for_each(|x| x.1 /= sum);
    }
    row.sort_by_key(|x| x.0);
}

/// A vertex's new row: its locked joints as they were, the rest the average's unlocked joints (the vertex's own
/// when the average has none), normalised around the locks ([`normalise_row`]).
fn around_locks(joints: &[u16], values: &[f32], average: &Row, locks: &Locks) -> Row {
    if !locks.any() {
        return average.clone();
    }
    let own = joints.iter().copied().zip(values.iter().copied());
    let mut row: Row = own.clone().filter(|x| locks.is_locked(x.0)).collect();
    let free = average.iter().copied().filter(|x| !locks.is_locked(x.0) && x.1 > 0.0);
    if free.clone().next().is_some() {
        row.extend(free);
    } else {
        row.extend(own.filter(|x| !locks.is_locked(x.0)));
    }
    normalise_row(&mut row, locks);
    row.sort_by_key(|x| x.0);
    row
}

/// A Dijkstra ball over the node graph, its scratch kept between calls.
struct Ball {
    dist: Vec<f32>,
    heap: std::collections::BinaryHeap<(std::cmp::Reverse<u32>, u32)>,
    /// The nodes reached and their distances, nearest first.
    found: Vec<(u32, f32)>,
    touched: Vec<u32>,
}

impl Ball {
    fn new(nodes: usize) -> Self {
        Self {
            dist: vec![f32::INFINITY; nodes],
            heap: Default::default(),
            found: Vec::new(),
            touched: Vec::new(),
        }
    }

    /// The nodes within `radius` of `start` along the edges, nearest first, at most [`MAX_BALL`].
    fn gather(&mut self, graph: &MeshGraph, start: usize, radius: f32) {
        let positions = graph.positions();
        for &t in &self.touched {
            self.dist[t as usize] = f32::INFINITY;
        }
        self.touched.clear();
        self.found.clear();
        self.heap.clear();
        self.dist[start] = 0.0;
        self.touched.push(start as u32);
        // Non-negative finite f32 distances order as their bit patterns.
        self.heap.push((std::cmp::Reverse(0f32.to_bits()), start as u32));
        while let Some((std::cmp::Reverse(bits), node)) = self.heap.pop() {
            let d = f32::from_bits(bits);
            let node = node as usize;
            if d > self.dist[node] {
                continue;
            }
            self.found.push((node as u32, d));
            if self.found.len() >= MAX_BALL {
                break;
            }
            let p = positions[node];
            for &m in graph.neighbours(node) {
                let m = m as usize;
                let nd = d + positions[m].distance(p);
                if nd <= radius && nd < self.dist[m] {
                    if self.dist[m].is_infinite() {
                        self.touched.push(m as u32);
                    }
                    self.dist[m] = nd;
                    self.heap.push((std::cmp::Reverse(nd.to_bits()), m as u32));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "soften_tests.rs"]
mod tests;
