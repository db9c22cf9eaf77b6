//! Softening: each vertex's weights become a Gaussian average of the weights around it, measured along the
//! mesh's edges over a geometric radius, so that a blend fades out as painted weights do instead of ending where
//! the binding falloff's support ends. Part of the default clean-up after a geodesic bind (`--no-soften` turns
//! it off) and a step of `clean` (`--soften`), after rogue removal so that an island is removed before
//! softening could join it to its joint's main region.
//!
//! The distance falloff gives a blend whose width is a fixed share of the distance to the bones, with sharp
//! corners where it starts and stops and no weight at all past the blend ratio. Painted weights (and diffused
//! ones, such as Blender's bone heat) fade out over a distance: CesiumMan's artist lets the neck's weight fade
//! over the back of the head (0.17 to 0.02 across 20 cm) and blends the chest into the spine over a hand's width.
//!
//! - **Kernel.** `exp(-d² / 2σ²)` of the straight distance `d`, over the part of the surface within `2σ` that is
//!   connected to the vertex inside that ball (so separate parts, and a fold that meets the vertex's surface only
//!   farther away, stay apart), each welded node weighted once.
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
//! **Clusters bound the cost on dense meshes.** The nodes are grouped into connected clusters grown along the
//! edges, each node no farther from its seed along them than [`CLUSTER_OF_SIGMA`] × its own σ and × the seed's
//! (so on a mesh whose edges are long against σ, as on every shared character, a cluster is one node). The kernel is
//! evaluated once per cluster, at its centroid: a breadth-first search over the cluster graph finds the clusters
//! within reach, each weighted by its node count and standing for the mean of its nodes' rows. A node then blends
//! the averages of its cluster and the adjacent ones with Gaussian weights half its cluster's extent wide (a
//! one-node cluster's node takes its own average exactly). A cluster's average then costs a few dozen clusters
//! whatever the density, and the time grows linearly with the vertex count (each search is bounded besides, in
//! clusters found and adjacency entries looked at, against hostile meshes). Against the definition evaluated
//! node by node, on a dense strip a blend moves by at most about a sixth of σ (`soften_tests.rs`).

use std::borrow::Cow;

use glam::Vec3;
use rayon::prelude::*;

use super::graph::MeshGraph;
use super::ops::keep_locked_row;
use super::rows::Locks;
use crate::bind::bones::Segment;
use crate::bind::nearest::BoneIndex;
use crate::model::weights::keep_strongest;
use crate::model::{Row, Weights};

/// The largest softening radius σ, as a share of the bounding-box diagonal.
pub const SIGMA_OF_DIAGONAL: f32 = 0.015;
/// σ at most this times the vertex's distance to its nearest bone.
pub const SIGMA_OF_BONE: f32 = 0.35;
/// A node whose edges average more than this times its σ keeps its weights.
pub const SPARSE: f32 = 1.5;
/// A cluster reaches at most this times the σ of each of its nodes from its seed, along the edges.
pub const CLUSTER_OF_SIGMA: f32 = 0.35;
/// The most nodes in one cluster and the most clusters one search gathers (bounds on hostile meshes; a mesh
/// softened as designed stays far below both).
const MAX_CLUSTER: usize = 4096;
const MAX_BALL: usize = 4096;
/// The most adjacency entries one search looks at, and the most adjacent clusters a cluster may have for a search
/// to go on through it (an ordinary cluster has a dozen or so; a hub vertex with a fan of a million slivers would
/// otherwise be crossed by every spoke's search).
const MAX_SCAN: usize = 4 * MAX_BALL;
const MAX_EXPAND: usize = 256;
/// Softened weights below this are dropped (then the row is normalised again).
const MIN_WEIGHT: f32 = 1e-3;

/// What softening did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SoftenReport {
    /// The mesh's welded nodes.
    pub nodes: usize,
    /// Welded nodes averaged (the rest were low-poly or had no edges).
    pub softened_nodes: usize,
    /// Clusters the nodes were grouped into (as many as the nodes on a mesh that is not dense).
    pub clusters: usize,
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
    soften_with(&SoftenPlan::new(graph, segments), graph, weights, max_influences, locks)
}

/// What softening needs of the mesh and the bones alone: each node's σ and whether it is softened, and the
/// clusters. It does not depend on the weights, so the default clean-up makes it beside rogue removal.
pub struct SoftenPlan {
    /// None for a mesh without nodes or bones (nothing is softened).
    plan: Option<(Vec<f32>, Vec<bool>, Clusters)>,
}

impl SoftenPlan {
    pub fn new(graph: &MeshGraph, segments: &[Segment]) -> Self {
        if graph.nodes() == 0 || segments.is_empty() {
            return Self { plan: None };
        }
        let (radius, softened) = radii(graph, segments);
        let clusters = Clusters::grow(graph, &radius);
        Self {
            plan: Some((radius, softened, clusters)),
        }
    }
}

/// [`soften`] with its plan made ([`SoftenPlan::new`] on the same graph and bones).
pub fn soften_with(
    plan: &SoftenPlan,
    graph: &MeshGraph,
    weights: &Weights,
    max_influences: usize,
    locks: &Locks,
) -> (Weights, SoftenReport) {
    let mut report = SoftenReport {
        nodes: graph.nodes(),
        ..SoftenReport::default()
    };
    let Some((radius, softened, clusters)) = plan.plan.as_ref().filter(|(r, ..)| r.len() == graph.nodes()) else {
        return (weights.clone(), report);
    };
    if weights.len() != graph.vertices() {
        return (weights.clone(), report);
    }
    let means = Means::new(clusters, graph, weights);
    report.clusters = clusters.len();
    let joints = weights.max_joint().map_or(0, |j| j as usize + 1);
    // Each cluster's average at its centroid, with its softened nodes' mean σ.
    let at_centroid: Vec<Option<Row>> = (0..clusters.len())
        .into_par_iter()
        .map_init(
            || (Ball::new(clusters.len()), Sum::new(joints)),
            |(ball, sum), c| {
                let (total, n) = clusters
                    .members(c)
                    .iter()
                    .filter(|&&n| softened[n as usize])
                    .fold((0.0, 0), |(s, k), &n| (s + radius[n as usize], k + 1));
                (n > 0).then(|| {
                    let sigma = total / n as f32;
                    ball.gather(clusters, c, 2.0 * sigma + clusters.place[c].extent);
                    clusters.average(sigma, ball, &means, sum)
                })
            },
        )
        .collect();
    // Each softened node blends the averages of its cluster and the adjacent ones.
    let averages: Vec<(u32, Row)> = (0..graph.nodes() as u32)
        .into_par_iter()
        .filter(|&n| softened[n as usize])
        .map_init(
            || Sum::new(joints),
            |sum, n| {
                let row = clusters.blend(n as usize, graph.position(n as usize), &at_centroid, sum);
                (n, limited(row, max_influences))
            },
        )
        .collect();
    report.softened_nodes = averages.len();
    let mut changed: Vec<(u32, Row)> = averages
        .par_iter()
        .flat_map_iter(|(node, average)| {
            // With locks, each vertex keeps its locked weights and takes the average's unlocked ones, as a re-bind
            // does ([`keep_locked_row`]). Without, it takes the average, copied only where it changes the row.
            let split: Option<(Vec<u16>, Vec<f32>)> = locks.any().then(|| average.iter().copied().unzip());
            graph.members(*node as usize).iter().filter_map(move |&v| {
                let (j, w) = weights.row(v as usize);
                let row: Cow<'_, [(u16, f32)]> = match &split {
                    Some((aj, aw)) => {
                        let mut row = Row::new();
                        keep_locked_row((j, w), (aj, aw), locks, &mut row);
                        row.sort_by_key(|x| x.0);
                        Cow::Owned(row)
                    }
                    None => Cow::Borrowed(average),
                };
                let same = j.len() == row.len()
                    && row
                        .iter()
                        .zip(j.iter().zip(w))
                        .all(|(a, b)| a.0 == *b.0 && (a.1 - b.1).abs() < 1e-6);
                (!same && !row.is_empty()).then(|| (v, row.into_owned()))
            })
        })
        .collect();
    changed.par_sort_unstable_by_key(|r| r.0);
    match weights.with_rows(&changed) {
        Ok(w) => {
            report.changed_vertices = changed.len();
            (w, report)
        }
        Err(e) => {
            // Every row is the kernel's, by joint and without repeats, so this is a bug: keep the weights.
            debug_assert!(false, "softening wrote an invalid row: {e}");
            report.softened_nodes = 0;
            (weights.clone(), report)
        }
    }
}

/// Each node's σ (0 where it has no bone or no finite positive radius), and whether it is softened (it has edges,
/// and they average at most [`SPARSE`] × σ).
fn radii(graph: &MeshGraph, segments: &[Segment]) -> (Vec<f32>, Vec<bool>) {
    let positions = graph.positions();
    let diag = crate::model::skin::bounds(positions).map_or(0.0, |(lo, hi)| (hi - lo).length());
    // A diagonal past f32's range would lift the diagonal's cap: such a mesh keeps its weights.
    let diag = if diag.is_finite() { diag } else { 0.0 };
    let nearest = BoneIndex::new(segments).nearest_distances(positions);
    positions
        .par_iter()
        .zip(&nearest)
        .enumerate()
        .map(|(node, (&p, &d1))| {
            let s = (SIGMA_OF_DIAGONAL * diag).min(SIGMA_OF_BONE * d1);
            let s = if s > 0.0 && s.is_finite() { s } else { 0.0 };
            let nb = graph.neighbours(node);
            let mean_edge = nb.iter().map(|&m| positions[m as usize].distance(p)).sum::<f32>() / nb.len().max(1) as f32;
            (s, s > 0.0 && !nb.is_empty() && mean_edge <= SPARSE * s)
        })
        .unzip()
}

/// Connected groups of nodes, with what a node's average needs of each: its nodes, centroid, extent and the mean
/// of the nodes' rows; and which clusters share an edge.
struct Clusters {
    of_node: Vec<u32>,
    member_start: Vec<u32>,
    member: Vec<u32>,
    /// Each cluster's centroid and extent side by side: a search reads both of every cluster it looks at.
    place: Vec<Place>,
    adjacent_start: Vec<u32>,
    adjacent: Vec<u32>,
}

/// Each cluster's mean row (over its nodes, a node's row being its first vertex's): cluster `c`'s joints and
/// weights are `joint[start[c]..start[c + 1]]` and `mean[..]`.
struct Means {
    start: Vec<u32>,
    joint: Vec<u16>,
    mean: Vec<f32>,
}

impl Means {
    fn new(clusters: &Clusters, graph: &MeshGraph, weights: &Weights) -> Self {
        let means: Vec<Row> = (0..clusters.len())
            .into_par_iter()
            .map_init(
                || Sum::new(weights.max_joint().map_or(0, |j| j as usize + 1)),
                |sum, c| {
                    for &n in clusters.members(c) {
                        let (j, w) = weights.row(graph.members(n as usize)[0] as usize);
                        sum.add(1.0, j.iter().copied().zip(w.iter().copied()));
                    }
                    sum.take().unwrap_or_default()
                },
            )
            .collect();
        let mut start = vec![0u32];
        let (mut joint, mut mean) = (Vec::new(), Vec::new());
        for m in &means {
            joint.extend(m.iter().map(|x| x.0));
            mean.extend(m.iter().map(|x| x.1));
            start.push(joint.len() as u32);
        }
        Self { start, joint, mean }
    }
}

impl Clusters {
    /// Clusters grown in node order: an unclaimed node seeds one, which takes the unclaimed nodes within
    /// [`CLUSTER_OF_SIGMA`] × σ of the seed along the edges, for the seed's σ and each node's own.
    fn grow(graph: &MeshGraph, radius: &[f32]) -> Self {
        let nodes = graph.nodes();
        let positions = graph.positions();
        let mut of_node = vec![u32::MAX; nodes];
        let mut member_start = vec![0u32];
        let mut member = Vec::with_capacity(nodes);
        let mut dist = vec![f32::INFINITY; nodes];
        let mut heap = std::collections::BinaryHeap::new();
        let mut touched: Vec<u32> = Vec::new();
        for seed in 0..nodes {
            if of_node[seed] != u32::MAX {
                continue;
            }
            let c = (member_start.len() - 1) as u32;
            let reach = CLUSTER_OF_SIGMA * radius[seed];
            heap.push((std::cmp::Reverse(0f32.to_bits()), seed as u32));
            dist[seed] = 0.0;
            touched.push(seed as u32);
            let first = member.len();
            while let Some((std::cmp::Reverse(bits), n)) = heap.pop() {
                let n = n as usize;
                let d = f32::from_bits(bits);
                if d > dist[n] || of_node[n] != u32::MAX {
                    continue;
                }
                of_node[n] = c;
                member.push(n as u32);
                if member.len() - first >= MAX_CLUSTER {
                    break;
                }
                for &m in graph.neighbours(n) {
                    let m = m as usize;
                    let nd = d + positions[m].distance(positions[n]);
                    if of_node[m] == u32::MAX && nd < dist[m] && nd <= reach && nd <= CLUSTER_OF_SIGMA * radius[m] {
                        if dist[m].is_infinite() {
                            touched.push(m as u32);
                        }
                        dist[m] = nd;
                        heap.push((std::cmp::Reverse(nd.to_bits()), m as u32));
                    }
                }
            }
            heap.clear();
            for &t in &touched {
                dist[t as usize] = f32::INFINITY;
            }
            touched.clear();
            member_start.push(member.len() as u32);
        }
        let clusters = member_start.len() - 1;
        let members = |c: usize| &member[member_start[c] as usize..member_start[c + 1] as usize];
        let place: Vec<Place> = (0..clusters)
            .into_par_iter()
            .map(|c| {
                let m = members(c);
                let centre = m.iter().map(|&n| positions[n as usize]).sum::<Vec3>() / m.len() as f32;
                let extent = m
                    .iter()
                    .map(|&n| positions[n as usize].distance(centre))
                    .fold(0.0, f32::max);
                Place {
                    centroid: centre,
                    extent,
                }
            })
            .collect();
        // Which clusters share an edge, each pair once a side.
        let mut pairs: Vec<(u32, u32)> = (0..nodes)
            .into_par_iter()
            .flat_map_iter(|n| {
                let a = of_node[n];
                graph
                    .neighbours(n)
                    .iter()
                    .map(move |&m| (a, m))
                    .filter(|&(a, _)| a != u32::MAX)
            })
            .map(|(a, m)| (a, of_node[m as usize]))
            .filter(|&(a, b)| a != b)
            .collect();
        pairs.par_sort_unstable();
        pairs.dedup();
        let mut adjacent_start = vec![0u32; clusters + 1];
        for &(a, _) in &pairs {
            adjacent_start[a as usize + 1] += 1;
        }
        for c in 0..clusters {
            adjacent_start[c + 1] += adjacent_start[c];
        }
        let adjacent = pairs.iter().map(|p| p.1).collect();
        Self {
            of_node,
            member_start,
            member,
            place,
            adjacent_start,
            adjacent,
        }
    }

    fn len(&self) -> usize {
        self.place.len()
    }

    fn members(&self, c: usize) -> &[u32] {
        &self.member[self.member_start[c] as usize..self.member_start[c + 1] as usize]
    }

    fn adjacent(&self, c: usize) -> &[u32] {
        &self.adjacent[self.adjacent_start[c] as usize..self.adjacent_start[c + 1] as usize]
    }

    /// The averages at the centroids of the cluster holding node `node` (at `p`) and of its adjacent ones,
    /// blended with Gaussian weights half the home cluster's extent wide: a node at a centroid takes about its
    /// cluster's average, one midway between two centroids both equally, and a one-node cluster's its own.
    fn blend(&self, node: usize, p: Vec3, at_centroid: &[Option<Row>], sum: &mut Sum) -> Row {
        let home = self.of_node[node] as usize;
        let h = 0.5 * self.place[home].extent;
        let Some(own) = &at_centroid[home] else {
            return Vec::new();
        };
        if h <= 0.0 {
            return own.clone();
        }
        let inv = 1.0 / (2.0 * h * h);
        for k in std::iter::once(home).chain(self.adjacent(home).iter().map(|&k| k as usize)) {
            if let Some(row) = &at_centroid[k] {
                let g = (-p.distance_squared(self.place[k].centroid) * inv).exp();
                sum.add(g, row.iter().copied());
            }
        }
        sum.take().unwrap_or_else(|| own.clone())
    }

    /// The kernel's average at cluster `c`'s centroid, with radius `sigma`, over the clusters `ball` found (from
    /// `c`, with their distances).
    fn average(&self, sigma: f32, ball: &Ball, means: &Means, sum: &mut Sum) -> Row {
        let (cut, inv) = (2.0 * sigma, 1.0 / (2.0 * sigma * sigma));
        for (&k, &d) in ball.found.iter().zip(&ball.distance) {
            let k = k as usize;
            if d <= cut {
                let span = means.start[k] as usize..means.start[k + 1] as usize;
                let row = means.joint[span.clone()]
                    .iter()
                    .copied()
                    .zip(means.mean[span].iter().copied());
                sum.add((-d * d * inv).exp() * self.members(k).len() as f32, row);
            }
        }
        sum.take().unwrap_or_default()
    }
}

/// A weighted sum of rows over every joint, its scratch kept between calls.
struct Sum {
    by_joint: Vec<f32>,
    /// The joints `by_joint` holds, in the order first met.
    joints: Vec<u16>,
    total: f32,
}

impl Sum {
    fn new(joints: usize) -> Self {
        Self {
            by_joint: vec![0.0; joints],
            joints: Vec::new(),
            total: 0.0,
        }
    }

    /// Add `row` with weight `g`.
    fn add(&mut self, g: f32, row: impl Iterator<Item = (u16, f32)>) {
        if g <= 0.0 {
            return;
        }
        self.total += g;
        for (j, w) in row {
            // Only a positive term may be listed: a product that underflows to 0 would leave the slot at 0 and
            // list the joint again at its next term.
            let term = g * w;
            if term.is_nan() || term <= 0.0 {
                continue;
            }
            let Some(slot) = self.by_joint.get_mut(j as usize) else {
                continue;
            };
            if *slot == 0.0 {
                self.joints.push(j);
            }
            *slot += term;
        }
    }

    /// The sum over the total weight (none when nothing was added), and the scratch emptied.
    fn take(&mut self) -> Option<Row> {
        let total = std::mem::take(&mut self.total);
        let row = (total > 0.0).then(|| {
            self.joints
                .iter()
                .map(|&j| (j, self.by_joint[j as usize] / total))
                .collect()
        });
        for &j in &self.joints {
            self.by_joint[j as usize] = 0.0;
        }
        self.joints.clear();
        row
    }
}

/// The `k` strongest of `row` (ties: lower joint), those under [`MIN_WEIGHT`] dropped, normalised, by joint.
fn limited(mut row: Row, k: usize) -> Row {
    keep_strongest(&mut row, k.max(1));
    let sum: f32 = row.iter().map(|x| x.1).sum();
    row.retain(|x| x.1 >= MIN_WEIGHT * sum);
    let sum: f32 = row.iter().map(|x| x.1).sum();
    if sum > 0.0 {
        row.iter_mut().for_each(|x| x.1 /= sum);
    }
    row.sort_by_key(|x| x.0);
    row
}

/// A cluster's centroid and the farthest member's distance from it.
#[derive(Clone, Copy)]
struct Place {
    centroid: Vec3,
    extent: f32,
}

/// What a [`Ball`] search knows of a cluster.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    Not,
    Found,
    /// Looked at and too far: the test depends only on the cluster and the search, so it is not made again.
    Far,
}

/// A breadth-first search over the cluster graph, its scratch kept between calls.
struct Ball {
    seen: Vec<Seen>,
    /// The clusters reached, in the order reached, and each one's centroid's distance from the start's.
    found: Vec<u32>,
    distance: Vec<f32>,
    /// The clusters marked [`Seen::Far`], to unmark.
    far: Vec<u32>,
}

impl Ball {
    fn new(clusters: usize) -> Self {
        Self {
            seen: vec![Seen::Not; clusters],
            found: Vec::new(),
            distance: Vec::new(),
            far: Vec::new(),
        }
    }

    /// The clusters reached from `start` through clusters each within `limit` of the start's centroid (less
    /// their own extent); at most [`MAX_BALL`], after at most [`MAX_SCAN`] adjacency entries looked at, and not
    /// through a cluster with more than [`MAX_EXPAND`] adjacent ones.
    fn gather(&mut self, clusters: &Clusters, start: usize, limit: f32) {
        for &c in self.found.iter().chain(&self.far) {
            self.seen[c as usize] = Seen::Not;
        }
        self.found.clear();
        self.distance.clear();
        self.far.clear();
        self.seen[start] = Seen::Found;
        self.found.push(start as u32);
        self.distance.push(0.0);
        let centre = clusters.place[start].centroid;
        let (mut next, mut scanned) = (0, 0);
        while next < self.found.len() {
            let c = self.found[next] as usize;
            next += 1;
            let adjacent = clusters.adjacent(c);
            if adjacent.len() > MAX_EXPAND && c != start {
                continue;
            }
            // PERF: the entries left under MAX_SCAN are counted once a cluster, not once an entry.
            let room = MAX_SCAN - scanned;
            let look = &adjacent[..adjacent.len().min(room)];
            scanned += look.len();
            for &k in look {
                let k = k as usize;
                if self.seen[k] != Seen::Not {
                    continue;
                }
                let place = clusters.place[k];
                let d = place.centroid.distance(centre);
                if d - place.extent <= limit {
                    self.seen[k] = Seen::Found;
                    self.found.push(k as u32);
                    self.distance.push(d);
                    if self.found.len() >= MAX_BALL {
                        return;
                    }
                } else {
                    self.seen[k] = Seen::Far;
                    self.far.push(k as u32);
                }
            }
            if look.len() < adjacent.len() {
                return;
            }
        }
    }
}

#[cfg(test)]
#[path = "soften_tests.rs"]
mod tests;
