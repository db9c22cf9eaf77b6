//! Rogue weight removal: a joint's weight on an island of vertices cut off from the joint's main region.
//!
//! For each joint, the vertices where its weight is above a threshold split into connected components over the
//! welded mesh graph ([`MeshGraph`], so seams do not split a region). The joint's **main region** is the
//! component nearest its bone (least distance from any of its vertices to the bone's segments; ties: the larger,
//! then the one with the lower vertex), and its **reach** is the farthest any vertex of the main region lies from
//! the bone (how far its true field spreads). Besides the main region, the joint keeps, in each connected part of
//! the mesh, its component nearest the bone when that lies within the reach: a joint may rightly weight several
//! separate parts (a hip's weight on the top of a separate leg as well as on the torso, a head's on the eyes).
//!
//! Every other component is an island and the joint's weight is removed there: smaller components beside the
//! nearest one, and every component on a part the bone neither enters nor comes near (wing weight painted onto a
//! separate head). A joint without bone segments keeps its largest component in each part. Weights at or below
//! the threshold are not part of any region and are left alone (prune removes them).
//!
//! A joint's largest component is never removed either: where neighbouring bones cut a joint's field in two, the
//! half nearest the bone may be the small one (Frog's `Shoulders` and `Neck`, whose large regions lie past the
//! small ones by their pivots).
//!
//! The removed weight goes to the surrounding joints: a vertex that keeps other weights is renormalised among
//! them; a vertex left with no unlocked weight takes the mean of its neighbours' unlocked weights (scaled to
//! fill what its locked weights leave), filled in waves from the island's border inward (each wave reads only
//! earlier waves, so the result does not depend on order). A vertex the waves cannot reach (its whole part held
//! nothing but the removed weight) keeps its weights. Locked joints are never removed.
//!
//! Cost: one union-find over the (vertex, joint) influences, one pass over the graph's edges, and one bone distance
//! per influence above the threshold.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::Vec3;

use super::graph::MeshGraph;
use super::rows::{Locks, map_rows, normalise_row, sort_row};
use crate::bind::bones::{Segment, distance2_to, segments_by_joint};
use crate::mesh::UnionFind;
use crate::model::{Row, Weights};

/// One island of a joint's weight.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Island {
    pub joint: u16,
    /// Vertices in the island.
    pub vertices: usize,
}

/// What rogue removal did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RogueReport {
    pub threshold: f32,
    /// Islands whose weight was removed, by joint, then largest first.
    pub removed: Vec<Island>,
    /// Vertices whose weights changed.
    pub vertices_changed: usize,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RogueError {
    #[error("rogue threshold {0} is not in [0, 1)")]
    Threshold(f32),
    #[error("the weights have {weights} vertices, the mesh {mesh}")]
    Count { weights: usize, mesh: usize },
}

/// Remove rogue islands of every unlocked joint (see the module doc). `segments` are the bones in the bind pose
/// ([`crate::bind::bones::bone_segments`]); a joint without segments takes its largest component as its main
/// region.
pub fn remove_rogue(
    graph: &MeshGraph,
    positions: &[Vec3],
    weights: &Weights,
    segments: &[Segment],
    threshold: f32,
    locks: &Locks,
) -> Result<(Weights, RogueReport), RogueError> {
    if !(0.0..1.0).contains(&threshold) {
        return Err(RogueError::Threshold(threshold));
    }
    if weights.len() != graph.vertices() || positions.len() != graph.vertices() {
        return Err(RogueError::Count {
            weights: weights.len(),
            mesh: graph.vertices(),
        });
    }
    let entries = Entries::new(weights, threshold, locks);
    let mut found = components(graph, &entries);
    measure_to_bones(&mut found, &entries, positions, segments);
    let removed_comp = removed_components(&found.comps);
    let is_removed = |e: usize| -> bool { found.comp_of[e] != NONE && removed_comp[found.comp_of[e] as usize] };
    let node_rows = fill_rows(graph, &entries, &is_removed);
    let (out, vertices_changed) = without_removed(graph, &entries, &is_removed, &node_rows);
    let mut report = RogueReport {
        threshold,
        vertices_changed,
        ..Default::default()
    };
    for (comp, _) in found.comps.iter().zip(&removed_comp).filter(|(_, removed)| **removed) {
        report.removed.push(Island {
            joint: comp.joint,
            vertices: comp.size,
        });
    }
    let order = |a: &Island, b: &Island| a.joint.cmp(&b.joint).then(b.vertices.cmp(&a.vertices));
    report.removed.sort_by(order);
    Ok((out, report))
}

/// No component.
const NONE: u32 = u32::MAX;

/// The weights' influences as entries, numbered in row order: vertex `v`'s are `start[v]..start[v + 1]`.
struct Entries<'a> {
    weights: &'a Weights,
    start: Vec<u32>,
    threshold: f32,
    locks: &'a Locks,
}

impl<'a> Entries<'a> {
    fn new(weights: &'a Weights, threshold: f32, locks: &'a Locks) -> Self {
        let n = weights.len();
        let mut start = Vec::with_capacity(n + 1);
        start.push(0u32);
        for v in 0..n {
            start.push(start[v] + weights.row(v).0.len() as u32);
        }
        Self {
            weights,
            start,
            threshold,
            locks,
        }
    }

    fn count(&self) -> usize {
        self.start[self.weights.len()] as usize
    }

    /// The entry of vertex `v`'s `k`-th influence.
    fn at(&self, v: usize, k: usize) -> usize {
        self.start[v] as usize + k
    }

    /// Whether vertex `v`'s `k`-th influence is part of a region: above the threshold, on an unlocked joint.
    fn active(&self, v: usize, k: usize) -> bool {
        let (js, ws) = self.weights.row(v);
        ws[k] > self.threshold && !self.locks.is_locked(js[k])
    }
}

/// One connected region of a joint's weight: its joint, the graph part it lies on, its size, its lowest vertex,
/// and the least and greatest distance from its vertices to the joint's bone.
struct Component {
    joint: u16,
    part: u32,
    size: usize,
    first_vertex: u32,
    dist: f32,
    far: f32,
}

impl Component {
    /// Whether this component is a better main region than `other`: nearer the bone; ties, the larger, then the
    /// one with the lower vertex.
    fn beats(&self, other: &Component) -> bool {
        self.dist < other.dist
            || (self.dist == other.dist
                && (self.size > other.size || (self.size == other.size && self.first_vertex < other.first_vertex)))
    }
}

/// Every joint's regions, and each entry's region.
struct Components {
    comps: Vec<Component>,
    /// Each entry's component, or [`NONE`] for an inactive entry.
    comp_of: Vec<u32>,
}

/// The components of every joint's active entries, joined over the welded graph (a vertex's welded twins and its
/// neighbours), numbered in the order of their first entry; distances to the bone not yet measured.
fn components(graph: &MeshGraph, entries: &Entries) -> Components {
    let regions = join_regions(graph, entries);
    // Connected parts of the graph.
    let parts = UnionFind::new(graph.nodes());
    for node in 0..graph.nodes() {
        for &u in graph.neighbours(node) {
            parts.union(node as u32, u);
        }
    }
    let mut comp_of_root = vec![NONE; entries.count()];
    let mut comp_of = vec![NONE; entries.count()];
    let mut comps: Vec<Component> = Vec::new();
    for v in 0..entries.weights.len() {
        let (js, _) = entries.weights.row(v);
        for (k, &j) in js.iter().enumerate() {
            if !entries.active(v, k) {
                continue;
            }
            let e = entries.at(v, k);
            let r = regions.find(e as u32) as usize;
            if comp_of_root[r] == NONE {
                comp_of_root[r] = comps.len() as u32;
                comps.push(Component {
                    joint: j,
                    part: parts.find(graph.node_of(v) as u32),
                    size: 0,
                    first_vertex: v as u32,
                    dist: f32::INFINITY,
                    far: 0.0,
                });
            }
            let c = comp_of_root[r];
            comp_of[e] = c;
            comps[c as usize].size += 1;
        }
    }
    Components { comps, comp_of }
}

/// The entries joined into regions: the same joint's active entries at two vertices that are welded twins or
/// neighbours in the graph.
fn join_regions(graph: &MeshGraph, entries: &Entries) -> UnionFind {
    let regions = UnionFind::new(entries.count());
    let join = |a: usize, b: usize| {
        let (ja, _) = entries.weights.row(a);
        let (jb, _) = entries.weights.row(b);
        for (ka, &j) in ja.iter().enumerate() {
            if !entries.active(a, ka) {
                continue;
            }
            if let Some(kb) = jb.iter().position(|&x| x == j).filter(|&kb| entries.active(b, kb)) {
                regions.union(entries.at(a, ka) as u32, entries.at(b, kb) as u32);
            }
        }
    };
    for node in 0..graph.nodes() {
        let members = graph.members(node);
        for w in members.windows(2) {
            join(w[0] as usize, w[1] as usize);
        }
        for &u in graph.neighbours(node).iter().filter(|&&u| u as usize > node) {
            for &a in members {
                for &b in graph.members(u as usize) {
                    join(a as usize, b as usize);
                }
            }
        }
    }
    regions
}

/// Each component's least and greatest distance to its joint's bone (infinite for a joint without segments).
fn measure_to_bones(found: &mut Components, entries: &Entries, positions: &[Vec3], segments: &[Segment]) {
    let bone = segments_by_joint(segments);
    for (v, &p) in positions.iter().enumerate() {
        let (js, _) = entries.weights.row(v);
        for (k, &j) in js.iter().enumerate() {
            let c = found.comp_of[entries.at(v, k)];
            if c == NONE {
                continue;
            }
            let d = bone
                .get(j as usize)
                .filter(|b| !b.is_empty())
                .map_or(f32::INFINITY, |b| distance2_to(b, p));
            let comp = &mut found.comps[c as usize];
            comp.dist = comp.dist.min(d);
            comp.far = comp.far.max(d);
        }
    }
}

/// Which components are islands. Kept: each joint's main region (its component that [`Component::beats`] the
/// others over the whole mesh), its largest component, and in each part the joint's best component there when it
/// lies within the main region's reach (how far from the bone the main region spreads).
fn removed_components(comps: &[Component]) -> Vec<bool> {
    let nearest_in_part = best_by(comps, |k| (k.joint, k.part));
    let main = best_by(comps, |k| k.joint);
    let largest = largest_by_joint(comps);
    comps
        .iter()
        .enumerate()
        .map(|(c, k)| {
            let m = main.get(&k.joint).map_or(c as u32, |&m| m);
            let reach = comps[m as usize].far;
            let nearest_here = nearest_in_part.get(&(k.joint, k.part)).is_some_and(|&g| g == c as u32);
            let is_largest = largest.get(&k.joint) == Some(&(c as u32));
            !(m == c as u32 || is_largest || (nearest_here && (k.dist <= reach || reach.is_infinite())))
        })
        .collect()
}

/// Each joint's largest component (ties: the one that [`Component::beats`] the others, so a main region as large
/// as any other is the largest).
fn largest_by_joint(comps: &[Component]) -> HashMap<u16, u32> {
    let mut best: HashMap<u16, u32> = HashMap::new();
    for (c, comp) in comps.iter().enumerate() {
        let b = best.entry(comp.joint).or_insert(c as u32);
        let other = &comps[*b as usize];
        if comp.size > other.size || (comp.size == other.size && comp.beats(other)) {
            *b = c as u32;
        }
    }
    best
}

/// For each `key`, the component with that key that [`Component::beats`] the others (ties: the first).
fn best_by<K: std::hash::Hash + Eq>(comps: &[Component], key: impl Fn(&Component) -> K) -> HashMap<K, u32> {
    let mut best: HashMap<K, u32> = HashMap::new();
    for (c, comp) in comps.iter().enumerate() {
        let b = best.entry(key(comp)).or_insert(c as u32);
        if comp.beats(&comps[*b as usize]) {
            *b = c as u32;
        }
    }
    best
}

/// Per graph node, the unlocked weights left to fill a vertex that loses all of its own: the mean of the node's
/// members' remaining unlocked weights where any remain, else the mean of its neighbours' (each normalised),
/// filled in waves from the border inward (each wave reads only earlier waves). `None` where no wave reaches.
fn fill_rows(graph: &MeshGraph, entries: &Entries, is_removed: &dyn Fn(usize) -> bool) -> Vec<Option<Row>> {
    let mut rows: Vec<Option<Row>> = vec![None; graph.nodes()];
    for (node, slot) in rows.iter_mut().enumerate() {
        let mut row = Vec::new();
        let mut count = 0;
        for &v in graph.members(node) {
            let (js, ws) = entries.weights.row(v as usize);
            let before = row.len();
            for k in 0..js.len() {
                if !is_removed(entries.at(v as usize, k)) && !entries.locks.is_locked(js[k]) {
                    row.push((js[k], ws[k]));
                }
            }
            if row.len() > before {
                count += 1;
            }
        }
        if count > 0 {
            sort_row(&mut row);
            row.iter_mut().for_each(|x| x.1 /= count as f32);
            *slot = Some(row);
        }
    }
    fill_waves(graph, &mut rows);
    rows
}

/// Fill the empty node rows from the filled ones in waves from the border inward: each wave's nodes take the mean
/// of their filled neighbours' rows (each normalised), reading only earlier waves, so the result does not depend
/// on order. Nodes no wave reaches stay empty.
pub(crate) fn fill_waves(graph: &MeshGraph, rows: &mut [Option<Row>]) {
    let mut wave: Vec<usize> = (0..graph.nodes())
        .filter(|&k| rows[k].is_none() && graph.neighbours(k).iter().any(|&u| rows[u as usize].is_some()))
        .collect();
    while !wave.is_empty() {
        let filled: Vec<Row> = wave.iter().map(|&k| neighbours_mean(graph, rows, k)).collect();
        for (&k, row) in wave.iter().zip(filled) {
            rows[k] = Some(row);
        }
        let mut next: Vec<usize> = wave
            .iter()
            .flat_map(|&k| graph.neighbours(k).iter().map(|&u| u as usize))
            .filter(|&u| rows[u].is_none())
            .collect();
        next.sort_unstable();
        next.dedup();
        wave = next;
    }
}

/// The mean of node `k`'s filled neighbours' rows, each normalised.
fn neighbours_mean(graph: &MeshGraph, rows: &[Option<Row>], k: usize) -> Row {
    let mut row = Vec::new();
    let mut count = 0;
    for &u in graph.neighbours(k) {
        if let Some(r) = &rows[u as usize] {
            let s: f32 = r.iter().map(|x| x.1).sum();
            if s > 0.0 {
                row.extend(r.iter().map(|&(j, w)| (j, w / s)));
                count += 1;
            }
        }
    }
    sort_row(&mut row);
    row.iter_mut().for_each(|x| x.1 /= count.max(1) as f32);
    row
}

/// The weights without the removed entries: a vertex that keeps other weights is renormalised among them, one
/// left with only locked weights takes its node's fill row ([`fill_rows`]) beside them. Also how many vertices
/// changed.
fn without_removed(
    graph: &MeshGraph,
    entries: &Entries,
    is_removed: &(dyn Fn(usize) -> bool + Sync),
    node_rows: &[Option<Row>],
) -> (Weights, usize) {
    let (weights, locks) = (entries.weights, entries.locks);
    let changed = AtomicUsize::new(0);
    let out = map_rows(
        weights.len(),
        || (),
        |_, v, row| {
            let (js, ws) = weights.row(v);
            let mut any_removed = false;
            for k in 0..js.len() {
                if is_removed(entries.at(v, k)) {
                    any_removed = true;
                } else {
                    row.push((js[k], ws[k]));
                }
            }
            if !any_removed {
                return;
            }
            changed.fetch_add(1, Ordering::Relaxed);
            if row.iter().all(|x| locks.is_locked(x.0)) {
                // Nothing unlocked left: the neighbourhood's unlocked weights fill what the locked ones leave.
                match &node_rows[graph.node_of(v)] {
                    Some(r) => row.extend_from_slice(r),
                    // Not reachable (the part holds the joint's main region); keep the vertex's weights.
                    None => {
                        row.clear();
                        row.extend(js.iter().copied().zip(ws.iter().copied()));
                    }
                }
            }
            normalise_row(row, locks);
        },
    );
    (out, changed.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bind::bones::SegmentKind;

    /// A `w` x `h` grid of unit quads in the xy plane, vertex `x + y * (w + 1)`.
    fn grid(w: usize, h: usize) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let mut p = Vec::new();
        for y in 0..=h {
            for x in 0..=w {
                p.push(Vec3::new(x as f32, y as f32, 0.0));
            }
        }
        let id = |x: usize, y: usize| (x + y * (w + 1)) as u32;
        let mut t = Vec::new();
        for y in 0..h {
            for x in 0..w {
                t.push([id(x, y), id(x + 1, y), id(x, y + 1)]);
                t.push([id(x + 1, y), id(x + 1, y + 1), id(x, y + 1)]);
            }
        }
        (p, t)
    }

    fn seg(joint: u16, a: Vec3, b: Vec3) -> Segment {
        Segment {
            joint,
            a,
            b,
            kind: SegmentKind::Child,
        }
    }

    /// Left half joint 0, right half joint 1, blended over two columns; joint 2 planted on two islands inside
    /// joint 0's side and one inside joint 1's side (its bone runs along the top edge, so its main region is the
    /// top strip). Exactly the planted islands go, and nothing else changes.
    #[test]
    fn removes_exactly_the_planted_islands() {
        let (p, t) = grid(20, 10);
        let g = MeshGraph::new(&p, &t);
        let base = |q: Vec3| -> Row {
            if q.x < 9.5 {
                vec![(0, 1.0)]
            } else if q.x > 10.5 {
                vec![(1, 1.0)]
            } else {
                vec![(0, 0.5), (1, 0.5)]
            }
        };
        let island_a = |q: Vec3| (2.0..=3.0).contains(&q.x) && (2.0..=3.0).contains(&q.y); // 4 vertices
        let island_b = |q: Vec3| q.x == 6.0 && q.y == 5.0; // 1 vertex, fully joint 2
        let island_c = |q: Vec3| (15.0..=17.0).contains(&q.x) && q.y == 3.0; // 3 vertices
        let main = |q: Vec3| q.y == 10.0;
        let rows: Vec<Row> = p
            .iter()
            .map(|&q| {
                if island_b(q) {
                    vec![(2, 1.0)]
                } else if island_a(q) || island_c(q) || main(q) {
                    let mut r: Row = base(q).into_iter().map(|(j, w)| (j, w * 0.6)).collect();
                    r.push((2, 0.4));
                    r
                } else {
                    base(q)
                }
            })
            .collect();
        let w = Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap().0;
        let bones = [
            seg(0, Vec3::new(0.0, 5.0, 0.0), Vec3::new(10.0, 5.0, 0.0)),
            seg(1, Vec3::new(10.0, 5.0, 0.0), Vec3::new(20.0, 5.0, 0.0)),
            seg(2, Vec3::new(0.0, 11.0, 0.0), Vec3::new(20.0, 11.0, 0.0)),
        ];
        let (out, rep) = remove_rogue(&g, &p, &w, &bones, 0.01, &Locks::none()).unwrap();
        assert_eq!(
            rep.removed,
            vec![
                Island { joint: 2, vertices: 4 },
                Island { joint: 2, vertices: 3 },
                Island { joint: 2, vertices: 1 }
            ]
        );
        assert_eq!(rep.vertices_changed, 8);
        for (v, &q) in p.iter().enumerate() {
            let (js, ws) = out.row(v);
            if island_a(q) || island_b(q) || island_c(q) {
                let want = base(q);
                assert_eq!(js.len(), want.len(), "vertex {v} at {q}");
                for (k, (j, x)) in want.iter().enumerate() {
                    assert_eq!(js[k], *j);
                    assert!((ws[k] - x).abs() < 1e-6, "vertex {v}: {} vs {x}", ws[k]);
                }
            } else {
                assert_eq!(out.row(v), w.row(v), "vertex {v} at {q} untouched");
            }
        }
    }

    /// A joint's largest component stays even where a smaller one lies nearer its bone (neighbouring bones cut
    /// its field in two); a third, smaller and farther component goes.
    #[test]
    fn never_removes_a_joints_largest_region() {
        let (p, t) = grid(20, 10);
        let g = MeshGraph::new(&p, &t);
        let near = |q: Vec3| q.y == 10.0 && (0.0..=1.0).contains(&q.x); // 2 vertices, by the bone
        let large = |q: Vec3| (8.0..=11.0).contains(&q.x) && (2.0..=4.0).contains(&q.y); // 12 vertices
        let small = |q: Vec3| q.x == 18.0 && q.y == 2.0; // 1 vertex
        let rows: Vec<Row> = p
            .iter()
            .map(|&q| {
                if near(q) || large(q) || small(q) {
                    vec![(0, 0.5), (1, 0.5)]
                } else {
                    vec![(0, 1.0)]
                }
            })
            .collect();
        let w = Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap().0;
        let bones = [
            seg(0, Vec3::new(0.0, 5.0, 0.0), Vec3::new(20.0, 5.0, 0.0)),
            seg(1, Vec3::new(0.0, 11.0, 0.0), Vec3::new(1.0, 11.0, 0.0)),
        ];
        let (out, rep) = remove_rogue(&g, &p, &w, &bones, 0.1, &Locks::none()).unwrap();
        assert_eq!(rep.removed, vec![Island { joint: 1, vertices: 1 }]);
        for (v, &q) in p.iter().enumerate() {
            if small(q) {
                assert_eq!(out.row(v), (&[0u16][..], &[1.0f32][..]));
            } else {
                assert_eq!(out.row(v), w.row(v), "vertex {v} at {q}");
            }
        }
    }

    /// A joint's weight on a separate part is that part's own main region, not an island; within that part, a
    /// second, farther component is an island.
    #[test]
    fn judges_each_part_on_its_own() {
        let (mut p, mut t) = grid(4, 4);
        let (q, u) = grid(6, 1);
        let off = p.len();
        p.extend(q.iter().map(|x| *x + Vec3::new(10.0, 0.0, 0.0)));
        t.extend(u.iter().map(|x| x.map(|i| i + off as u32)));
        // Joint 1 everywhere on the grid but column x = 0 (joint 0); on the strip, joint 1 at both ends
        // (x = 10 and x = 16), joint 2 between.
        let rows: Vec<Row> = (0..p.len())
            .map(|v| {
                if v < off {
                    if v % 5 == 0 { vec![(0, 1.0)] } else { vec![(1, 1.0)] }
                } else if p[v].x == 10.0 || p[v].x == 16.0 {
                    vec![(1, 0.5), (2, 0.5)]
                } else {
                    vec![(2, 1.0)]
                }
            })
            .collect();
        let w = Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap().0;
        let g = MeshGraph::new(&p, &t);
        let bones = [
            seg(1, Vec3::new(0.0, 2.0, 0.0), Vec3::new(9.0, 2.0, 0.0)),
            seg(2, Vec3::new(10.0, 0.5, 0.0), Vec3::new(16.0, 0.5, 0.0)),
        ];
        let (out, rep) = remove_rogue(&g, &p, &w, &bones, 0.01, &Locks::none()).unwrap();
        // On the strip, joint 1's end nearer its bone (x = 10) is the strip's main region; x = 16 is an island.
        assert_eq!(rep.removed, vec![Island { joint: 1, vertices: 2 }]);
        for (v, q) in p.iter().enumerate() {
            if q.x == 16.0 {
                assert_eq!(out.row(v), (&[2u16][..], &[1.0f32][..]));
            } else {
                assert_eq!(out.row(v), w.row(v), "vertex {v}");
            }
        }
        // Locked joints are never touched, whatever their islands.
        let (out, rep) = remove_rogue(&g, &p, &w, &bones, 0.01, &Locks::of([1])).unwrap();
        assert_eq!(out, w);
        assert!(rep.removed.is_empty());
    }

    /// Wing weight painted onto a separate head was never removed: it was the joint's only region on that part.
    /// A part the bone neither enters nor comes near (farther than its main region spreads) keeps none of it.
    #[test]
    fn an_island_on_a_part_the_bone_does_not_reach_is_removed() {
        // The wing: a 6 x 1 strip along joint 1's bone. The head: a 2 x 2 grid 20 units away, joint 0's, with
        // joint 1 painted on one corner.
        let (mut p, mut t) = grid(6, 1);
        let (q, u) = grid(2, 2);
        let off = p.len();
        p.extend(q.iter().map(|x| *x + Vec3::new(20.0, 0.0, 0.0)));
        t.extend(u.iter().map(|x| x.map(|i| i + off as u32)));
        let painted = off; // the head's corner at (20, 0)
        let rows: Vec<Row> = (0..p.len())
            .map(|v| match v {
                v if v < off => vec![(1, 1.0)],
                v if v == painted => vec![(0, 0.5), (1, 0.5)],
                _ => vec![(0, 1.0)],
            })
            .collect();
        let w = Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap().0;
        let g = MeshGraph::new(&p, &t);
        let bones = [
            seg(0, Vec3::new(21.0, 1.0, 0.0), Vec3::new(21.0, 2.0, 0.0)),
            seg(1, Vec3::new(0.0, 0.5, 0.0), Vec3::new(6.0, 0.5, 0.0)),
        ];
        let (out, rep) = remove_rogue(&g, &p, &w, &bones, 0.01, &Locks::none()).unwrap();
        assert_eq!(rep.removed, vec![Island { joint: 1, vertices: 1 }]);
        assert_eq!(out.row(painted), (&[0u16][..], &[1.0f32][..]));
    }

    #[test]
    fn rejects_bad_input() {
        let (p, t) = grid(1, 1);
        let g = MeshGraph::new(&p, &t);
        let w = Weights::rigid(&[0; 4]);
        assert_eq!(
            remove_rogue(&g, &p, &w, &[], 1.0, &Locks::none()).unwrap_err(),
            RogueError::Threshold(1.0)
        );
        let short = Weights::rigid(&[0; 3]);
        assert!(remove_rogue(&g, &p, &short, &[], 0.0, &Locks::none()).is_err());
    }
}
