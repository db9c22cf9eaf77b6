//! Layers that touch move together: where the surface of one part lies over another's (a shirt's hem over the
//! trousers' waistband, a sleeve over a glove's cuff), each side takes half the other's weights, so the two move as
//! one and do not part when a joint turns.
//!
//! Why: the parts rule gives each part only the bones it holds, so a shirt that holds the spine and trousers that
//! hold the thighs are weighted apart; at the hem the trousers take thigh weight the shirt cannot, and a raised
//! thigh opens a gap. Joining the parts outright (letting a vertex take the bones of any part near it) also joins
//! limbs pushed into a body, which artists keep rigid (the course wasp's legs; with that, wasp2's L1 went from 0.142
//! to 0.217), and joins body segments that abut. So only surfaces that lie *over* one another are coupled:
//!
//! - near: within [`REACH`] voxel cells of the other part's surface (fully within [`FULL`]);
//! - along: facing the same way, out of their parts (a triangle of the vertex within [`PARALLEL`] of the other
//!   surface's normal, each part's normals turned outward by its signed volume, so inward winding does not
//!   matter). Two solids that abut face opposite ways (the wasp's abdomen against its thorax: coupling those
//!   cost the wasp 0.02 L1), and a limb that crosses a body's surface meets it at an angle;
//! - over: the step to the other surface runs along its normal ([`OVER`]), not beside it (the coplanar tops of two
//!   fingers side by side, or of an arm hanging beside a torso).
//!
//! Each coupled vertex `v` takes `(1 - s) w(v) + s w(q)`, `w(q)` the other part's weights at its nearest point `q`
//! (the corners' rows in barycentric proportion, before any coupling), `s` one half within [`FULL`] cells, falling
//! linearly to 0 at [`REACH`]; then the influence limit and normalisation. Two coupled surfaces so end with nearly
//! the same weights where they touch. A joint's weight passes only between two parts it belongs to at most (the
//! hand's weights beside one finger's base carry the next finger's joints, which must not reach this finger).
//!
//! Measured: two closed boxes for trousers and a shirt whose hem overlaps them 0.02 outside (1.2 cells), bound and
//! posed with a thigh raised 1.2 rad, opened by up to 5.8% of the diagonal at the hem; coupled, 1.4% (the hem's
//! corners, 1.75 cells from the trousers' edge, take a quarter share). No shared model with artist weights changes
//! (their parts are accessories, abut, or are single meshes).
//!
//! Cost: a pass over the triangles to find where two parts come within reach ([`Contact`], cells `REACH` wide);
//! then, only there, a nearest-point search per vertex in per-part trees split by the way triangles face, so the
//! many triangles around a vertex that face elsewhere are never visited.

use glam::Vec3;
use rayon::prelude::*;

use super::facing::{CELLS, Cells, FACES, SIDE, cell_of};
use super::falloff::{add_weight, limit_and_normalise};
use super::parts::PartBones;
use super::surface::PartBoxes;
use crate::model::{Row, Weights};
use crate::spatial::TriangleBvh;
use crate::spatial::bvh::closest_on_triangle;

/// Within this many voxel cells of another part's surface a vertex is coupled fully: the solid joins parts within
/// about a cell, and clothing lies closer than that over a body.
pub(super) const FULL: f32 = 1.5;
/// Past this many cells a vertex is not coupled (at 3 cells the creature sample's arms, 3 cells beside its torso,
/// were searched along their length and the bind of 100k vertices took 20 ms more).
pub(super) const REACH: f32 = 2.0;
/// Least cosine between the outward normals of a vertex's triangle and the other surface's for the two to run along
/// each other (about 25 degrees: the sides of two round fingers a third of their radius apart meet at 45).
const PARALLEL: f32 = 0.9;
/// Least cosine between the other surface's normal and the step to it for the vertex to lie over or under it
/// rather than beside it (about 53 degrees: a box's corner over another's lies at 45 degrees to both faces).
const OVER: f32 = 0.6;
/// Within this many cells the surfaces touch, and which way the step to the other points does not matter.
const TOUCHING: f32 = 0.25;

/// What to couple: the mesh, each vertex's part, which bones each part holds, the plates (which, like accessories,
/// take no part: they follow the body already), the cell size, the weld tolerance and the influence limit.
pub(super) struct Layers<'a> {
    pub positions: &'a [Vec3],
    pub triangles: &'a [[u32; 3]],
    /// Each vertex's part, and how many parts there are.
    pub parts: &'a (Vec<u32>, usize),
    /// Each part's box ([`super::surface::Surface::several_part_bounds`]).
    pub boxes: &'a PartBoxes,
    pub bones: &'a PartBones,
    /// The plate parts, sorted.
    pub plates: &'a [usize],
    pub cell: f32,
    /// Vertices closer than this are one (as for the mesh's parts).
    pub weld_tolerance: f32,
    pub max_influences: usize,
    pub rigid: bool,
}

impl Layers<'_> {
    /// Whether part `c` takes part: a bone lies inside it and it is not a plate.
    fn takes_part(&self, c: u32) -> bool {
        self.bones.has_inside.get(c as usize).copied().unwrap_or(false)
            && self.plates.binary_search(&(c as usize)).is_err()
    }
}

/// Whether a joint's weight may pass between parts `a` and `b`: only if it belongs to no third part, so that the
/// hand's weights beside one finger's base, which carry the next finger's joints, do not reach this finger.
/// `joint_parts`: [`PartBones::parts_of_joints`].
fn passes(joint_parts: &[(u32, [u32; 2])], j: u16, a: u32, b: u32) -> bool {
    joint_parts
        .get(j as usize)
        .is_none_or(|&(n, first)| n <= 2 && first[..n as usize].iter().all(|&c| c == a || c == b))
}

/// `weights` with touching layers coupled (see the module doc), and how many vertices changed.
pub(super) fn couple_layers(l: &Layers, weights: Weights) -> (Weights, usize) {
    let reach = REACH * l.cell;
    let parts = l.parts.1;
    let boxes = l.boxes;
    let near = near_parts(boxes, reach, &|c| l.takes_part(c));
    if reach.is_nan() || reach <= 0.0 || near.iter().all(Vec::is_empty) {
        return (weights, 0);
    }
    let tri_part: Vec<u32> = l
        .triangles
        .par_iter()
        .map(|t| l.parts.0.get(t[0] as usize).copied().unwrap_or(u32::MAX))
        .collect();
    let contact = Contact::new(l, &tri_part, reach);
    // Only triangles in near cells can be searched or face a vertex that is searched from.
    let found: Vec<u32> = (0..l.triangles.len() as u32)
        .into_par_iter()
        .filter(|&t| {
            let c = tri_part[t as usize];
            near.get(c as usize).is_some_and(|n| !n.is_empty()) && corners(l, t).is_some_and(|p| contact.meets(p))
        })
        .collect();
    let asked: Vec<u32> = (0..l.positions.len() as u32)
        .into_par_iter()
        .filter(|&v| near.get(l.parts.0[v as usize] as usize).is_some_and(|n| !n.is_empty()))
        .filter(|&v| contact.near(l.positions[v as usize]))
        .collect();
    if found.is_empty() || asked.is_empty() {
        return (weights, 0);
    }
    let orientation = super::voxel::part_orientation(l.positions, l.triangles, l.parts);
    let normal = |t: u32| {
        let n = corners(l, t).map_or(Vec3::ZERO, |[a, b, c]| (b - a).cross(c - a).normalize_or_zero());
        n * orientation.get(tri_part[t as usize] as usize).copied().unwrap_or(1.0)
    };
    let joint_parts = l.bones.parts_of_joints();
    let around = FacesAround::new(l, &asked, &found);
    let trees = PartTrees::new(l, &tri_part, &normal, &found, parts);
    let rows: Vec<(u32, Row)> = asked
        .par_iter()
        .enumerate()
        .filter_map(|(i, &v)| {
            let own = l.parts.0[v as usize];
            let p = l.positions[v as usize];
            // The directions the vertex's surface faces, each once.
            let mut mine: Vec<Vec3> = Vec::new();
            for &f in around.of(i) {
                let n = normal(f);
                if !mine.iter().any(|m| m.dot(n) > 0.999) {
                    mine.push(n);
                }
            }
            let along = |n: Vec3| mine.iter().any(|m| m.dot(n) >= PARALLEL);
            let cells = trees.cells.within(&mine, PARALLEL);
            // The nearest accepted triangle over the near parts' cells (ties: the lowest index); each search is
            // bounded by the best so far, padded so that a tie is still found.
            let mut best: Option<(u32, Found)> = None;
            for &c in near[own as usize]
                .iter()
                .filter(|&&c| boxes.0[c as usize].cmple(p + reach).all() && boxes.1[c as usize].cmpge(p - reach).all())
            {
                for cell in (0..CELLS).filter(|&b| cells & (1 << b) != 0) {
                    let bound = best.map_or(reach, |b| (b.1.dist2.sqrt() * (1.0 + 1e-5)).min(reach));
                    if let Some(hit) = trees.nearest(c, cell, p, bound, &along) {
                        let better = best.is_none_or(|b| {
                            hit.dist2
                                .total_cmp(&b.1.dist2)
                                .then(hit.triangle.cmp(&b.1.triangle))
                                .is_lt()
                        });
                        if better {
                            best = Some((c, hit));
                        }
                    }
                }
            }
            let (theirs, t) = best?;
            let (share, tri, bary) = share_at(p, l.triangles[t.triangle as usize], t.normal, l)?;
            let (js, ws) = weights.row(v as usize);
            let mut row: Row = js.iter().zip(ws).map(|(&j, &x)| (j, (1.0 - share) * x)).collect();
            for (&corner, &b) in tri.iter().zip(&bary) {
                let (js, ws) = weights.row(corner as usize);
                for (&j, &x) in js
                    .iter()
                    .zip(ws)
                    .filter(|&(&j, _)| passes(&joint_parts, j, own, theirs))
                {
                    add_weight(&mut row, j, share * b * x);
                }
            }
            row.retain(|x| x.1 > 0.0);
            limit_and_normalise(&mut row, l.max_influences, l.rigid);
            let same = row.len() == js.len()
                && row
                    .iter()
                    .zip(js.iter().zip(ws))
                    .all(|(r, (&j, &x))| r.0 == j && (r.1 - x).abs() <= 1e-6);
            (!same).then_some((v, row))
        })
        .collect();
    let changed = rows.len();
    match weights.with_rows(&rows) {
        Ok(w) => (w, changed),
        Err(e) => {
            debug_assert!(false, "coupled rows are valid: {e}");
            (weights, 0)
        }
    }
}

/// The corners of triangle `t` (`None` if an index is out of range).
fn corners(l: &Layers, t: u32) -> Option<[Vec3; 3]> {
    let [Some(&a), Some(&b), Some(&c)] = l.triangles.get(t as usize)?.map(|i| l.positions.get(i as usize)) else {
        return None;
    };
    Some([a, b, c])
}

/// How much of the other surface's weights a vertex at `p` takes from triangle `tri` (outward normal `n`): half
/// within [`FULL`] cells, falling to none at [`REACH`], nothing where `p` lies beside the triangle's plane rather
/// than over or under it (two coplanar faces side by side, the tops of two fingers, are not layers); with the
/// triangle's corners in order of position and the nearest point's barycentric coordinates on them (so that
/// neither the winding nor welding changes a bit).
fn share_at(p: Vec3, mut tri: [u32; 3], n: Vec3, l: &Layers) -> Option<(f32, [u32; 3], [f32; 3])> {
    // In order of position (then index), so that a welded mesh and its soup of copies give the same bits.
    let at = |i: u32| l.positions.get(i as usize).map_or([f32::NAN; 3], |p| p.to_array());
    tri.sort_unstable_by(|&a, &b| {
        let (p, q) = (at(a), at(b));
        p[0].total_cmp(&q[0])
            .then(p[1].total_cmp(&q[1]))
            .then(p[2].total_cmp(&q[2]))
            .then(a.cmp(&b))
    });
    let [Some(&a), Some(&b), Some(&c)] = tri.map(|i| l.positions.get(i as usize)) else {
        return None;
    };
    let (point, bary) = closest_on_triangle(p, a, b, c);
    let offset = point - p;
    let d = offset.length();
    if d > TOUCHING * l.cell && offset.dot(n).abs() < OVER * d {
        return None;
    }
    let (full, reach) = (FULL * l.cell, REACH * l.cell);
    let share = 0.5 * ((reach - d) / (reach - full)).clamp(0.0, 1.0);
    (share > 0.0).then_some((share, tri, bary))
}

/// For each part that takes part, the other such parts whose boxes come within `reach` of its own (the only
/// parts its vertices can couple with).
fn near_parts(boxes: &PartBoxes, reach: f32, takes_part: &(dyn Fn(u32) -> bool + Sync)) -> Vec<Vec<u32>> {
    let (lo, hi) = boxes;
    let taking: Vec<u32> = (0..lo.len() as u32)
        .filter(|&c| takes_part(c) && lo[c as usize].cmple(hi[c as usize]).all())
        .collect();
    let mut near = vec![Vec::new(); lo.len()];
    for (i, &a) in taking.iter().enumerate() {
        for &b in &taking[i + 1..] {
            let (a, b) = (a as usize, b as usize);
            if (lo[a] - reach).cmple(hi[b]).all() && (lo[b] - reach).cmple(hi[a]).all() {
                near[a].push(b as u32);
                near[b].push(a as u32);
            }
        }
    }
    near
}

/// A triangle tree for each facing cell ([`super::facing`]) of each part, over the triangles in near cells, with
/// each tree's triangles' indices in the mesh's list and their outward normals. A vertex asks only the cells that
/// can hold a normal within [`PARALLEL`] of its own, so the many triangles around it that face elsewhere are never
/// visited.
struct PartTrees {
    /// By part and cube face; each the face's cells' trees (none where the part has no triangle facing that way).
    trees: Vec<Option<Vec<Option<PartTree>>>>,
    cells: Cells,
}

struct PartTree {
    bvh: TriangleBvh,
    ids: Vec<u32>,
    normals: Vec<Vec3>,
}

/// A triangle [`PartTrees::nearest`] found: its index in the mesh's list, its outward normal and its squared
/// distance.
#[derive(Clone, Copy)]
struct Found {
    triangle: u32,
    normal: Vec3,
    dist2: f32,
}

impl PartTrees {
    fn new(l: &Layers, tri_part: &[u32], normal: &(dyn Fn(u32) -> Vec3 + Sync), found: &[u32], parts: usize) -> Self {
        // Parted by part and face first (few groups for the counting sort), then each group by cell, in order.
        let per_face = SIDE * SIDE;
        let cell: Vec<Option<usize>> = found
            .par_iter()
            .map(|&t| {
                let (c, n) = (tri_part[t as usize] as usize, normal(t));
                (c < parts && n != Vec3::ZERO).then(|| c * CELLS + cell_of(n))
            })
            .collect();
        let indexed: Vec<(u32, Option<usize>)> = found.iter().copied().zip(cell).collect();
        let (ids, starts) = crate::mesh::partition(&indexed, parts * FACES, |x| x.1.map(|c| c / per_face), |_, x| *x);
        let trees = (0..parts * FACES)
            .into_par_iter()
            .map(|g| {
                let group = &ids[starts[g]..starts[g + 1]];
                (!group.is_empty()).then(|| {
                    (0..per_face)
                        .map(|k| {
                            let ids: Vec<u32> = group
                                .iter()
                                .filter(|x| x.1.is_some_and(|c| c % per_face == k))
                                .map(|x| x.0)
                                .collect();
                            (!ids.is_empty()).then(|| {
                                let tris: Vec<[u32; 3]> = ids.iter().map(|&t| l.triangles[t as usize]).collect();
                                PartTree {
                                    bvh: TriangleBvh::new_linear(l.positions, &tris),
                                    normals: ids.iter().map(|&t| normal(t)).collect(),
                                    ids,
                                }
                            })
                        })
                        .collect()
                })
            })
            .collect();
        Self {
            trees,
            cells: Cells::new(),
        }
    }

    /// Part `c`'s triangle of facing cell `cell` nearest `p` within `reach` among those whose normal `along`
    /// accepts.
    fn nearest(&self, c: u32, cell: usize, p: Vec3, reach: f32, along: &dyn Fn(Vec3) -> bool) -> Option<Found> {
        let per_face = SIDE * SIDE;
        let face = self.trees.get(c as usize * FACES + cell / per_face)?.as_ref()?;
        let tree = face.get(cell % per_face)?.as_ref()?;
        let hit = tree.bvh.nearest_within(p, reach, |t| along(tree.normals[t as usize]))?;
        Some(Found {
            triangle: tree.ids[hit.triangle as usize],
            normal: tree.normals[hit.triangle as usize],
            dist2: hit.dist2,
        })
    }
}

/// The triangles around each asked vertex (its welded copies' too, so that a box's corner written once per face
/// couples alike on every face): row `i` is the `i`th asked vertex's. Welded copies lie in the same cell, so they
/// are asked together, and their triangles meet that cell, so they are among the found ones.
struct FacesAround {
    start: Vec<u32>,
    faces: Vec<u32>,
}

impl FacesAround {
    fn new(l: &Layers, asked: &[u32], found: &[u32]) -> Self {
        let points: Vec<Vec3> = asked.iter().map(|&v| l.positions[v as usize]).collect();
        // Each asked vertex's weld group: the lowest asked index it welds to.
        let group = crate::mesh::weld_map(&points, l.weld_tolerance);
        let slot: std::collections::HashMap<u32, u32> = asked.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect();
        let mut per_group: Vec<Vec<u32>> = vec![Vec::new(); asked.len()];
        for &t in found {
            for &v in &l.triangles[t as usize] {
                if let Some(&i) = slot.get(&v) {
                    per_group[group[i as usize] as usize].push(t);
                }
            }
        }
        let mut start = Vec::with_capacity(asked.len() + 1);
        let mut faces = Vec::new();
        start.push(0);
        for i in 0..asked.len() {
            faces.extend_from_slice(&per_group[group[i] as usize]);
            start.push(faces.len() as u32);
        }
        Self { start, faces }
    }

    /// The triangles around the `i`th asked vertex.
    fn of(&self, i: usize) -> &[u32] {
        &self.faces[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// Where parts come near each other: cubic cells `reach` wide, each holding the one part whose triangles (their
/// boxes) meet it, or [`Contact::SEVERAL`]; a cell is *near* when it and its 26 neighbours hold two parts or more.
/// A point within `reach` of another part's triangle lies in a near cell, and so does the triangle's nearest point
/// to it, so only vertices in near cells are asked about and only triangles that meet a near cell are searched.
struct Contact {
    origin: Vec3,
    size: f32,
    dims: [usize; 3],
    near: Vec<bool>,
}

impl Contact {
    const EMPTY: u32 = u32::MAX;
    const SEVERAL: u32 = u32::MAX - 1;
    /// At most this many cells (the cell grows past `reach` on a mesh whose parts are far apart for their size).
    const MAX_CELLS: f32 = (1 << 20) as f32;

    fn new(l: &Layers, tri_part: &[u32], reach: f32) -> Self {
        let (lo, hi) = crate::model::skin::bounds(l.positions).unwrap_or((Vec3::ZERO, Vec3::ZERO));
        let extent = (hi - lo).max(Vec3::splat(reach));
        let mut size = reach;
        while ((extent / size).ceil() + 3.0).element_product() > Self::MAX_CELLS {
            size *= 1.5;
        }
        let d = ((extent / size).ceil() + 3.0).as_uvec3();
        let mut me = Self {
            origin: lo - size,
            size,
            dims: [d.x as usize, d.y as usize, d.z as usize],
            near: Vec::new(),
        };
        let cells = me.dims.iter().product::<usize>();
        let merge = |h: &mut u32, c: u32| {
            if *h == Self::EMPTY {
                *h = c;
            } else if *h != c {
                *h = Self::SEVERAL;
            }
        };
        let holds = (0..l.triangles.len() as u32)
            .into_par_iter()
            .with_min_len(1 << 14)
            .fold(
                || vec![Self::EMPTY; cells],
                |mut holds, t| {
                    let c = tri_part[t as usize];
                    if let Some([p, q, r]) = corners(l, t).filter(|_| l.takes_part(c)) {
                        let (a, b) = (me.cell_of(p.min(q).min(r)), me.cell_of(p.max(q).max(r)));
                        for z in a[2]..=b[2] {
                            for y in a[1]..=b[1] {
                                for x in a[0]..=b[0] {
                                    merge(&mut holds[me.index([x, y, z])], c);
                                }
                            }
                        }
                    }
                    holds
                },
            )
            .reduce(
                || vec![Self::EMPTY; cells],
                |mut a, b| {
                    for (h, &c) in a.iter_mut().zip(&b) {
                        if c != Self::EMPTY {
                            merge(h, c);
                        }
                    }
                    a
                },
            );
        let dims = me.dims;
        me.near = (0..cells)
            .into_par_iter()
            .map(|i| {
                let at = [i % dims[0], (i / dims[0]) % dims[1], i / (dims[0] * dims[1])];
                let mut seen = Self::EMPTY;
                for z in at[2].saturating_sub(1)..=(at[2] + 1).min(dims[2] - 1) {
                    for y in at[1].saturating_sub(1)..=(at[1] + 1).min(dims[1] - 1) {
                        for x in at[0].saturating_sub(1)..=(at[0] + 1).min(dims[0] - 1) {
                            let h = holds[x + dims[0] * (y + dims[1] * z)];
                            if h == Self::SEVERAL || (h != Self::EMPTY && seen != Self::EMPTY && h != seen) {
                                return true;
                            }
                            if h != Self::EMPTY {
                                seen = h;
                            }
                        }
                    }
                }
                false
            })
            .collect();
        me
    }

    /// The cell holding `p` (clamped to the grid; a non-finite coordinate lands in the first cell).
    fn cell_of(&self, p: Vec3) -> [usize; 3] {
        let c = ((p - self.origin) / self.size).floor();
        std::array::from_fn(|k| {
            if c[k].is_finite() {
                (c[k].max(0.0) as usize).min(self.dims[k] - 1)
            } else {
                0
            }
        })
    }

    fn index(&self, [x, y, z]: [usize; 3]) -> usize {
        x + self.dims[0] * (y + self.dims[1] * z)
    }

    /// Whether `p` lies in a near cell.
    fn near(&self, p: Vec3) -> bool {
        self.near[self.index(self.cell_of(p))]
    }

    /// Whether the box of the triangle with these corners meets a near cell.
    fn meets(&self, [p, q, r]: [Vec3; 3]) -> bool {
        let (a, b) = (self.cell_of(p.min(q).min(r)), self.cell_of(p.max(q).max(r)));
        (a[2]..=b[2]).any(|z| (a[1]..=b[1]).any(|y| (a[0]..=b[0]).any(|x| self.near[self.index([x, y, z])])))
    }
}
