//! What a check measures against, taken once from the rest mesh: valid triangles and their rest metrics, each
//! vertex's dominant joint, bone point and wedge volume, the welded graph's two-edge neighbourhoods, edge
//! lengths, and contacts between separate parts.

use glam::Vec3;
use rayon::prelude::*;

use super::Rig;
use crate::adjust::graph::{MeshGraph, WELD_TOLERANCE};
use crate::bind::bones::{Segment, bone_segments};
use crate::spatial::PointIndex;

/// No joint.
pub(super) const NO_JOINT: u16 = u16::MAX;

/// A triangle's rest shape: the inverse of its first fundamental form in the basis of its two edges from corner
/// 0 (`[a, b, c]` for the symmetric `[[a, b], [b, c]]`), and its unit normal.
#[derive(Clone, Copy, Debug)]
pub(super) struct TriRest {
    pub inv_metric: [f32; 3],
    pub normal: Vec3,
}

/// A vertex lying against a separate part at rest, outside it: the other part's nearest vertex `u` and its unit
/// normal.
#[derive(Clone, Copy, Debug)]
pub(super) struct Contact {
    pub v: u32,
    pub u: u32,
    pub normal: Vec3,
}

pub(super) struct Prepared {
    pub graph: MeshGraph,
    /// Triangles with every index in range and a rest area above nothing.
    pub tris: Vec<[u32; 3]>,
    pub tri_rest: Vec<TriRest>,
    /// Triangles of vertex `v`: `vert_tris[vert_start[v]..vert_start[v + 1]]`.
    pub vert_start: Vec<u32>,
    pub vert_tris: Vec<u32>,
    /// Each vertex's dominant joint, or [`NO_JOINT`].
    pub dom: Vec<u16>,
    /// Nearest point of the dominant joint's bone, at rest.
    pub axis: Vec<Vec3>,
    /// Rest wedge volume (0 where the vertex's triangles do not surround the bone: a cap, a plate).
    pub wedge: Vec<f32>,
    /// Mean rest length of the edges at each vertex.
    pub edge: Vec<f32>,
    /// Nodes within two edges of node `k` (not `k`): `ring[ring_start[k]..ring_start[k + 1]]`.
    pub ring_start: Vec<u32>,
    pub ring: Vec<u32>,
    pub contacts: Vec<Contact>,
    pub diagonal: f32,
}

impl Prepared {
    pub fn new(rig: Rig<'_>) -> Self {
        let positions = rig.positions;
        let diagonal = crate::eval::posed::diagonal(positions);
        // PERF: the welded graph (serial) and its two-edge rings are made beside the rest, which needs neither.
        let ((graph, (ring_start, ring)), (surface, (axis, wedge, dom), contacts)) = rayon::join(
            || {
                let graph = MeshGraph::new(positions, rig.triangles);
                let rings = two_rings(&graph);
                (graph, rings)
            },
            || {
                let surface = Surface::new(positions, rig.triangles, diagonal);
                let bones = bone_points(rig, &surface);
                let contacts = contacts(rig, &surface.tris, &surface.edge, diagonal);
                (surface, bones, contacts)
            },
        );
        let Surface {
            tris,
            tri_rest,
            vert_start,
            vert_tris,
            edge,
        } = surface;
        Self {
            graph,
            tris,
            tri_rest,
            vert_start,
            vert_tris,
            dom,
            axis,
            wedge,
            edge,
            ring_start,
            ring,
            contacts,
            diagonal,
        }
    }

    pub fn tris_of(&self, v: usize) -> &[u32] {
        &self.vert_tris[self.vert_start[v] as usize..self.vert_start[v + 1] as usize]
    }

    pub fn ring_of(&self, node: usize) -> &[u32] {
        &self.ring[self.ring_start[node] as usize..self.ring_start[node + 1] as usize]
    }
}

/// The valid triangles with their rest shapes, each vertex's triangles and mean edge length.
struct Surface {
    tris: Vec<[u32; 3]>,
    tri_rest: Vec<TriRest>,
    vert_start: Vec<u32>,
    vert_tris: Vec<u32>,
    edge: Vec<f32>,
}

impl Surface {
    fn new(positions: &[Vec3], triangles: &[[u32; 3]], diagonal: f32) -> Self {
        let n = positions.len();
        let mut tris = Vec::with_capacity(triangles.len());
        let mut tri_rest = Vec::with_capacity(triangles.len());
        for t in triangles {
            if t.iter().any(|&i| i as usize >= n) {
                continue;
            }
            if let Some(r) = tri_rest_of(t.map(|i| positions[i as usize])) {
                tris.push(*t);
                tri_rest.push(r);
            }
        }
        let (vert_start, vert_tris) = incidence(n, &tris);
        let edge: Vec<f32> = (0..n)
            .into_par_iter()
            .map(|v| {
                mean_edge(
                    v,
                    positions,
                    &tris,
                    &vert_tris[vert_start[v] as usize..vert_start[v + 1] as usize],
                )
            })
            .map(|e| if e > 0.0 { e } else { diagonal * 1e-3 })
            .collect();
        Self {
            tris,
            tri_rest,
            vert_start,
            vert_tris,
            edge,
        }
    }

    fn tris_of(&self, v: usize) -> &[u32] {
        &self.vert_tris[self.vert_start[v] as usize..self.vert_start[v + 1] as usize]
    }
}

/// Per vertex: the nearest point of its dominant joint's bone, its rest wedge volume about that point, and the
/// joint.
fn bone_points(rig: Rig<'_>, surface: &Surface) -> (Vec<Vec3>, Vec<f32>, Vec<u16>) {
    let positions = rig.positions;
    let n = positions.len();
    let dom: Vec<u16> = (0..n).map(|v| rig.weights.dominant(v).unwrap_or(NO_JOINT)).collect();
    let segments = bone_segments(rig.skel, rig.bind);
    let by_joint = segments_by_joint(&segments, rig.skel.len());
    let (axis, wedge) = (0..n)
        .into_par_iter()
        .map(|v| {
            let p = positions[v];
            let a = match by_joint.get(dom[v] as usize) {
                Some(segs) if !segs.is_empty() => nearest_on(segs, p),
                _ => rig.bind.get(dom[v] as usize).map_or(p, |m| m.w_axis.truncate()),
            };
            (a, rest_wedge(positions, &surface.tris, surface.tris_of(v), a, p))
        })
        .unzip();
    (axis, wedge, dom)
}

/// The rest shape of a triangle, `None` when it has no area.
fn tri_rest_of(p: [Vec3; 3]) -> Option<TriRest> {
    let (e1, e2) = (p[1] - p[0], p[2] - p[0]);
    let (g11, g12, g22) = (e1.dot(e1), e1.dot(e2), e2.dot(e2));
    let det = g11 * g22 - g12 * g12;
    let cross = e1.cross(e2);
    let area2 = cross.length();
    if !(det > 0.0 && det.is_finite() && area2 > 1e-12 * (g11 + g22)) {
        return None;
    }
    Some(TriRest {
        inv_metric: [g22 / det, -g12 / det, g11 / det],
        normal: cross / area2,
    })
}

/// Each vertex's triangles, as offsets and a flat list.
fn incidence(n: usize, tris: &[[u32; 3]]) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; n + 1];
    for t in tris {
        for &v in t {
            start[v as usize + 1] += 1;
        }
    }
    for v in 0..n {
        start[v + 1] += start[v];
    }
    let mut fill = start.clone();
    let mut list = vec![0u32; start[n] as usize];
    for (i, t) in tris.iter().enumerate() {
        for &v in t {
            list[fill[v as usize] as usize] = i as u32;
            fill[v as usize] += 1;
        }
    }
    (start, list)
}

/// The mean rest length of the edges at `v` over its triangles (0 when it has none).
fn mean_edge(v: usize, positions: &[Vec3], tris: &[[u32; 3]], mine: &[u32]) -> f32 {
    let (mut sum, mut count) = (0.0, 0);
    for &t in mine {
        for &u in &tris[t as usize] {
            if u as usize != v {
                sum += positions[u as usize].distance(positions[v]);
                count += 1;
            }
        }
    }
    if count == 0 { 0.0 } else { sum / count as f32 }
}

fn segments_by_joint(segments: &[Segment], joints: usize) -> Vec<Vec<Segment>> {
    let mut out = vec![Vec::new(); joints];
    for s in segments {
        if let Some(v) = out.get_mut(s.joint as usize) {
            v.push(*s);
        }
    }
    out
}

fn nearest_on(segs: &[Segment], p: Vec3) -> Vec3 {
    segs.iter()
        .map(|s| s.closest(p).0)
        .min_by(|a, b| a.distance_squared(p).total_cmp(&b.distance_squared(p)))
        .unwrap_or(p)
}

/// Signed volume of the tetrahedron `(a, p0, p1, p2)`.
pub(super) fn tet(a: Vec3, p: [Vec3; 3]) -> f32 {
    (p[0] - a).dot((p[1] - a).cross(p[2] - a)) / 6.0
}

/// The wedge volume between `v`'s triangles and `a`, or 0 when the triangles do not face the bone point: the
/// volume is under a fifth of what it would be if every triangle faced `a` squarely from `v`'s distance.
fn rest_wedge(positions: &[Vec3], tris: &[[u32; 3]], mine: &[u32], a: Vec3, p: Vec3) -> f32 {
    let (mut vol, mut area) = (0.0, 0.0);
    for &t in mine {
        let q = tris[t as usize].map(|i| positions[i as usize]);
        vol += tet(a, q);
        area += (q[1] - q[0]).cross(q[2] - q[0]).length() / 2.0;
    }
    let square = area * p.distance(a) / 3.0;
    if square > 0.0 && vol.abs() >= 0.2 * square {
        vol
    } else {
        0.0
    }
}

/// Nodes per task of [`two_rings`].
const RING_CHUNK: usize = 4096;

/// Per node, the nodes within two edges of it (not itself), ascending.
fn two_rings(graph: &MeshGraph) -> (Vec<u32>, Vec<u32>) {
    let nodes = graph.nodes();
    // PERF: a chunk of nodes per task into one flat list, duplicates dropped by stamping each node found with
    // the node whose ring it is in (a ring per node in its own Vec, sorted with its duplicates, cost as much as
    // the sweep of a small joint).
    let chunks: Vec<(Vec<u32>, Vec<u32>)> = (0..nodes.div_ceil(RING_CHUNK))
        .into_par_iter()
        .map_init(
            || vec![u32::MAX; nodes],
            |stamp, c| {
                let (mut flat, mut lens) = (Vec::new(), Vec::with_capacity(RING_CHUNK));
                for k in c * RING_CHUNK..((c + 1) * RING_CHUNK).min(nodes) {
                    let from = flat.len();
                    stamp[k] = k as u32;
                    for &u in graph.neighbours(k) {
                        for &x in std::iter::once(&u).chain(graph.neighbours(u as usize)) {
                            if stamp[x as usize] != k as u32 {
                                stamp[x as usize] = k as u32;
                                flat.push(x);
                            }
                        }
                    }
                    flat[from..].sort_unstable();
                    lens.push((flat.len() - from) as u32);
                }
                (flat, lens)
            },
        )
        .collect();
    let mut start = Vec::with_capacity(nodes + 1);
    start.push(0u32);
    let mut flat = Vec::with_capacity(chunks.iter().map(|c| c.0.len()).sum());
    for (ring, lens) in chunks {
        for len in lens {
            start.push(start[start.len() - 1] + len);
        }
        flat.extend_from_slice(&ring);
    }
    (start, flat)
}

/// Vertices lying within two edge lengths of another part, each with that part's nearest vertex (see
/// [`Contact`]); none when the mesh is one part. Only vertices outside the other part at rest count (by its
/// vertex normal, more than a twentieth of an edge): one on its tangent plane has no side, one inside it is
/// pushed in already (limbs modelled into a torso).
fn contacts(rig: Rig<'_>, tris: &[[u32; 3]], edge: &[f32], diagonal: f32) -> Vec<Contact> {
    contacts_among(rig, tris, edge, diagonal, true)
}

/// [`contacts`], looking only at vertices near another part's box when `boxed` (the same contacts; the tests
/// compare), else at every vertex.
fn contacts_among(rig: Rig<'_>, tris: &[[u32; 3]], edge: &[f32], diagonal: f32, boxed: bool) -> Vec<Contact> {
    let positions = rig.positions;
    let (part, count) = crate::mesh::connected_parts(positions, tris, WELD_TOLERANCE * diagonal);
    if count < 2 {
        return Vec::new();
    }
    let near = boxed
        .then(|| near_other_parts(positions, &part, count, edge, diagonal))
        .flatten();
    let near = |v: usize| near.as_ref().is_none_or(|near| near[v]);
    // PERF: only vertices that can be in a contact are indexed and asked (on the bound 100k creature a fifth of
    // them: a tree of every vertex, built on one core and asked by all, was a tenth of the whole check).
    let index = PointIndex::new((0..positions.len()).filter(|&v| near(v)).map(|v| (v, positions[v])));
    (0..positions.len())
        .into_par_iter()
        .filter(|&v| near(v))
        .map_init(Vec::new, |found, v| {
            let p = positions[v];
            index.within(p, 2.0 * edge[v], found);
            let u = found
                .iter()
                .copied()
                .filter(|&u| part[u as usize] != part[v])
                .map(|u| (positions[u as usize].distance_squared(p), u))
                .filter(|(d, _)| d.sqrt() <= 2.0 * edge[v])
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))?
                .1;
            let normal = rig.normals[u as usize].try_normalize()?;
            let side = (p - positions[u as usize]).dot(normal);
            // Outside the other part (by its normal) at rest: parts already pushed into each other are not news.
            (side >= 0.05 * edge[v]).then_some(Contact { v: v as u32, u, normal })
        })
        .flatten()
        .collect()
}

/// Parts up to this many are boxed by [`near_other_parts`]; with more, every vertex is looked at.
const BOXED_PARTS: usize = 64;

/// Per vertex, whether it lies near the box of another part: within the larger of the two parts' reaches
/// (twice their longest mean edge, the contact search's radius), padded for rounding. Every vertex of a contact
/// and every vertex it may find are among these (each lies within the first one's reach of the other one, so of
/// its part's box). `None` when there are more than [`BOXED_PARTS`] parts.
fn near_other_parts(positions: &[Vec3], part: &[u32], count: usize, edge: &[f32], diagonal: f32) -> Option<Vec<bool>> {
    if count > BOXED_PARTS {
        return None;
    }
    let mut lo = vec![Vec3::INFINITY; count];
    let mut hi = vec![Vec3::NEG_INFINITY; count];
    let mut reach = vec![0.0f32; count];
    for (v, &p) in positions.iter().enumerate() {
        let k = *part.get(v)? as usize;
        if p.is_finite() && k < count {
            lo[k] = lo[k].min(p);
            hi[k] = hi[k].max(p);
            reach[k] = reach[k].max(2.0 * edge[v]);
        }
    }
    let pad = 1e-5 * diagonal;
    Some(
        (0..positions.len())
            .into_par_iter()
            .map(|v| {
                let (p, a) = (positions[v], part[v] as usize);
                (0..count).any(|b| {
                    let r = reach[a].max(reach[b]) * 1.01 + pad;
                    b != a && p.cmpge(lo[b] - r).all() && p.cmple(hi[b] + r).all()
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::{Prepared, contacts_among, two_rings};
    use crate::check::Rig;
    use crate::sample::{SampleKind, make_sample};

    /// The rings the old way: each node's neighbours and theirs, sorted, deduplicated, itself left out.
    fn naive_rings(graph: &crate::adjust::graph::MeshGraph) -> Vec<Vec<u32>> {
        (0..graph.nodes())
            .map(|k| {
                let mut r: Vec<u32> = graph.neighbours(k).to_vec();
                for &u in graph.neighbours(k) {
                    r.extend_from_slice(graph.neighbours(u as usize));
                }
                r.sort_unstable();
                r.dedup();
                r.retain(|&u| u as usize != k);
                r
            })
            .collect()
    }

    #[test]
    fn stamped_rings_and_boxed_contacts_are_the_naive_ones() {
        for kind in [SampleKind::Creature, SampleKind::Arm] {
            let s = make_sample(kind, 6000).unwrap();
            let bind = s.skin.bindings().unwrap();
            let rig = Rig::of(&s.skeleton, bind, &s.skin).unwrap();
            let prep = Prepared::new(rig);
            let (start, flat) = two_rings(&prep.graph);
            let rings: Vec<Vec<u32>> = start
                .windows(2)
                .map(|w| flat[w[0] as usize..w[1] as usize].to_vec())
                .collect();
            assert_eq!(rings, naive_rings(&prep.graph), "{kind:?}");
            let every = contacts_among(rig, &prep.tris, &prep.edge, prep.diagonal, false);
            let boxed = contacts_among(rig, &prep.tris, &prep.edge, prep.diagonal, true);
            let key = |c: &super::Contact| (c.v, c.u, c.normal.to_array().map(f32::to_bits));
            assert_eq!(
                boxed.iter().map(key).collect::<Vec<_>>(),
                every.iter().map(key).collect::<Vec<_>>()
            );
            if kind == SampleKind::Creature {
                assert!(!every.is_empty(), "the creature's limbs touch its body");
            }
        }
    }
}
