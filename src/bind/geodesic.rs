//! Geodesic voxel binding (Dionne and de Lasa, "Geodesic Voxel Binding for Production Character Meshes",
//! SCA 2013): a bone's distance to a vertex is measured through the solid the mesh encloses, not through the air,
//! so an arm's bone is far from the torso beside it, the wasp's wing is far from its abdomen, and a shirt and the
//! body under it are one solid that moves together.
//!
//! 1. **Voxels** ([`super::voxel`]): the mesh's solid on a grid of cubic cells, `resolution` along its longest
//!    side; robust to triangle soups, faces split per face, many parts, layers and inward winding.
//! 2. **Seeds**: the solid cells around a bone's segment (point-to-line mapping, [`super::bones`]; the eight cell
//!    centres around each point every half cell along it) start at the distance from their centre to the segment. A bone that passes through no solid cell (it lies
//!    outside the mesh) starts in the solid cells nearest to it, at their distance to it.
//! 3. **Distances**: a Dijkstra search over solid cells and their 26 neighbours (steps `h`, `h√2`, `h√3`)
//!    keeps, in each cell, the `k` nearest bones (`k` the influence limit, at most [`MAX_LABELS`]), each bone's
//!    distance being the length of the shortest path through the solid from the bone. A bone farther than
//!    `blend_ratio` × 1.25 times a cell's nearest is not kept there (it would get no weight) and spreads no
//!    further through that cell.
//! 4. **Parts that no bone enters** (a separate plate, a hat): each such piece of the solid takes the bones that
//!    come nearest to it, each starting at its nearest cell at the gap's width, and the search runs on inside it.
//!    So no vertex is left unweighted.
//! 5. **Per vertex**: each bone's distance is the least, over the eight cell centres around the vertex, of the
//!    cell's distance plus the straight distance from the centre to the vertex; the weights are the `line`
//!    falloff of these distances (weight 1 on the nearest, smoothly 0 at `blend_ratio` times it), limited and
//!    normalised as in every method.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use glam::{IVec3, Vec3};
use rayon::prelude::*;

use super::bones::{Segment, SegmentKind, bone_segments, distance2_to};
use super::falloff::{MIN_WEIGHT, falloff, limit_and_normalise};
use super::nearest::BoneIndex;
use super::parts::PartBones;
use super::reach::Reach;
use super::run::{deforming_segments, stage};
use super::surface::{MAX_PARTS, Surface};
use super::voxel::{Grid, solid_cells};
use super::{BindOptions, BindReport};
use crate::model::{Row, Skeleton, Weights};

/// The most bones a cell keeps.
pub const MAX_LABELS: usize = 8;

/// A cell keeps a bone up to this factor past the blend ratio (the vertex's own distances, which add the step
/// from the cell centre, can bring it back within the ratio).
const PRUNE_MARGIN: f32 = 1.25;

const NONE: u32 = u32::MAX;

/// What the geodesic binding did, for the report.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct GeodesicReport {
    /// Cells along x, y, z.
    pub grid: [usize; 3],
    pub cell_size: f32,
    pub solid_cells: usize,
    /// Bones that pass through no solid cell (seeded from the nearest cells).
    pub bones_outside: usize,
    /// Pieces of the solid that no bone enters (seeded across the gap).
    pub detached_pieces: usize,
    /// Vertices whose weights were coupled with a touching layer's ([`super::layers`]).
    pub layered_vertices: usize,
}

#[derive(Clone, Copy, Debug, Default)]
struct Label {
    dist: f32,
    joint: u16,
    state: u8,
}

const FREE: u8 = 0;
const TENTATIVE: u8 = 1;
const FINAL: u8 = 2;

/// The distance field: for each solid cell, up to `k` bones and their distances.
pub struct Field {
    pub grid: Grid,
    /// Each cell's slot among the solid cells, or `NONE`.
    slot: Vec<u32>,
    /// Each slot's cell.
    cells: Vec<u32>,
    k: usize,
    labels: Vec<Label>,
    /// Each slot's nearest final distance (`inf` until it has one).
    nearest: Vec<f32>,
    prune: f32,
    /// The 26 neighbours: cell index offset and step length.
    steps: Vec<(isize, f32)>,
    heap: BinaryHeap<Reverse<(u32, u32, u16)>>,
}

impl Field {
    fn new(grid: Grid, solid: &[bool], k: usize, prune: f32) -> Self {
        let mut slot = vec![NONE; grid.len()];
        let mut cells = Vec::new();
        for (i, _) in solid.iter().enumerate().filter(|(_, s)| **s) {
            slot[i] = cells.len() as u32;
            cells.push(i as u32);
        }
        let mut steps = Vec::with_capacity(26);
        for dz in -1i32..=1 {
            for dy in -1i32..=1 {
                for dx in -1i32..=1 {
                    if (dx, dy, dz) != (0, 0, 0) {
                        let off =
                            dx as isize + grid.dims[0] as isize * (dy as isize + grid.dims[1] as isize * dz as isize);
                        let len = grid.h * ((dx * dx + dy * dy + dz * dz) as f32).sqrt();
                        steps.push((off, len));
                    }
                }
            }
        }
        let n = cells.len();
        Self {
            grid,
            slot,
            cells,
            k,
            labels: vec![Label::default(); n * k],
            nearest: vec![f32::INFINITY; n],
            prune,
            steps,
            heap: BinaryHeap::new(),
        }
    }

    pub fn solid_count(&self) -> usize {
        self.cells.len()
    }

    fn centre(&self, slot: usize) -> Vec3 {
        self.grid.center(self.grid.coords(self.cells[slot] as usize))
    }

    /// Offer bone `joint` at distance `d` to `slot`; queued when it improves what the slot holds.
    fn offer(&mut self, slot: u32, joint: u16, d: f32) {
        let s = slot as usize;
        if d > self.prune * self.nearest[s] {
            return;
        }
        let labels = &mut self.labels[s * self.k..(s + 1) * self.k];
        if let Some(l) = labels.iter_mut().find(|l| l.state != FREE && l.joint == joint) {
            if l.state == FINAL || l.dist <= d {
                return;
            }
            l.dist = d;
        } else if let Some(l) = labels.iter_mut().find(|l| l.state == FREE) {
            *l = Label {
                dist: d,
                joint,
                state: TENTATIVE,
            };
        } else {
            // Full: the farthest tentative bone gives way to a nearer one.
            let Some(l) = labels
                .iter_mut()
                .filter(|l| l.state == TENTATIVE)
                .max_by(|a, b| a.dist.total_cmp(&b.dist))
                .filter(|l| l.dist > d)
            else {
                return;
            };
            *l = Label {
                dist: d,
                joint,
                state: TENTATIVE,
            };
        }
        self.heap.push(Reverse((d.to_bits(), slot, joint)));
    }

    /// Run the search until the queue is empty.
    fn propagate(&mut self) {
        while let Some(Reverse((bits, slot, joint))) = self.heap.pop() {
            let d = f32::from_bits(bits);
            let s = slot as usize;
            let k = self.k;
            let Some(l) = self.labels[s * k..(s + 1) * k]
                .iter_mut()
                .find(|l| l.state == TENTATIVE && l.joint == joint && l.dist.to_bits() == bits)
            else {
                continue; // Superseded.
            };
            if d > self.prune * self.nearest[s] {
                l.state = FREE;
                continue;
            }
            l.state = FINAL;
            if self.nearest[s].is_infinite() {
                self.nearest[s] = d;
            }
            let cell = self.cells[s] as isize;
            for i in 0..self.steps.len() {
                let (off, len) = self.steps[i];
                let n = self.slot[(cell + off) as usize];
                if n != NONE {
                    self.offer(n, joint, d + len);
                }
            }
        }
    }

    /// The final bones of `slot`.
    fn finals(&self, slot: usize) -> impl Iterator<Item = &Label> {
        self.labels[slot * self.k..(slot + 1) * self.k]
            .iter()
            .filter(|l| l.state == FINAL)
    }
}

/// The part of segment `s` inside the box `lo..hi`, as a parameter range, if any (slab clipping).
fn clip(s: &Segment, lo: Vec3, hi: Vec3) -> Option<(f32, f32)> {
    let d = s.b - s.a;
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    for a in 0..3 {
        if d[a] == 0.0 {
            if s.a[a] < lo[a] || s.a[a] > hi[a] {
                return None;
            }
        } else {
            let (u, v) = ((lo[a] - s.a[a]) / d[a], (hi[a] - s.a[a]) / d[a]);
            t0 = t0.max(u.min(v));
            t1 = t1.min(u.max(v));
        }
    }
    (t0 <= t1).then_some((t0, t1))
}

/// The geodesic binding of `positions` (see the module doc); stages and counts go to `report`.
pub(super) fn bind(
    skel: &Skeleton,
    bind_world: &[glam::Mat4],
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    opts: &BindOptions,
    report: &mut BindReport,
) -> Weights {
    let t = Instant::now();
    let (lo, hi) = crate::model::skin::bounds(positions).unwrap_or((Vec3::ZERO, Vec3::ZERO));
    let weld_tolerance = 1e-6 * (hi - lo).length();
    let parts = crate::mesh::connected_parts(positions, triangles, weld_tolerance);
    report.parts = parts.1;
    stage("mesh parts", t, report);
    let k = opts.max_influences.clamp(1, MAX_LABELS);
    let field = voxel_field(
        positions,
        triangles,
        &parts,
        opts,
        (k, opts.blend_ratio * PRUNE_MARGIN),
        report,
    );
    let opts = &placed_controls(skel, bind_world, &field, (lo, hi), opts, report);
    let t = Instant::now();
    // The surface is needed to extend box-less leaves into the mesh and for the parts rule.
    let continued = bone_segments(skel, bind_world)
        .iter()
        .any(|s| s.kind == SegmentKind::Continued);
    let use_parts = opts.parts && (2..=MAX_PARTS).contains(&parts.1);
    let surface = ((opts.leaf_to_surface && continued) || use_parts)
        .then(|| Surface::new(positions, triangles, Some(parts.clone())));
    let (segments, part_boxes) = deforming_segments(skel, bind_world, positions, surface.as_ref(), opts, report);
    let part_bones = match (&surface, &part_boxes) {
        (Some(s), Some(b)) if use_parts => Some(PartBones::new(
            &BoneIndex::new(&segments),
            positions,
            s,
            b,
            skel.len(),
            &super::plates::plate_parts(positions, triangles, &parts),
        )),
        _ => None,
    };
    stage("bones", t, report);
    let mut counts = GeodesicReport::default();
    let field = fill_field(field, &segments, opts, k, &mut counts, report);
    let t = Instant::now();
    let mut part_bones = part_bones;
    let mut plates: Vec<usize> = Vec::new();
    if let Some(pb) = part_bones.as_mut() {
        let pairs = super::plates::plate_bones(&field.grid, positions, triangles, &parts.0, &pb.has_inside, &segments);
        plates = pairs.iter().map(|p| p.1).collect();
        plates.sort_unstable();
        plates.dedup();
        for &c in &plates {
            pb.clear_part(c);
        }
        for (joint, part) in pairs {
            pb.confine(joint, part);
        }
    }
    let own = part_bones.as_ref().zip(surface.as_ref());
    let mut weights = weights_from_field(&field, &segments, Some(skel), positions, opts, own);
    if let Some((bones, surface)) = own {
        weights = follow_the_body(weights, positions, surface, bones, &plates);
    }
    stage("weights", t, report);
    // The parts rule's boxes are there whenever its bones are.
    if let (Some(bones), Some(boxes)) = (part_bones.as_ref(), part_boxes.as_ref()) {
        let t = Instant::now();
        let layers = super::layers::Layers {
            positions,
            triangles,
            parts: &parts,
            boxes,
            bones,
            plates: &plates,
            cell: field.grid.h,
            weld_tolerance,
            max_influences: opts.max_influences,
            rigid: opts.rigid,
        };
        (weights, counts.layered_vertices) = super::layers::couple_layers(&layers, weights);
        stage("layers", t, report);
    }
    report.geodesic = Some(counts);
    weights
}

/// Accessories (parts with no bone inside and none lying in them: an eye, a hair card, a strap) move with the
/// surface they sit on, as a rigger's weight transfer does: each of their vertices takes the row of the nearest
/// vertex of a part that has a bone inside. Taking the one nearest bone instead made a hair card beside a neck
/// follow the neck rigidly, not the head it hangs from.
fn follow_the_body(
    weights: Weights,
    positions: &[Vec3],
    surface: &Surface,
    bones: &PartBones,
    plates: &[usize],
) -> Weights {
    let part = |v: usize| surface.part_of(v) as usize;
    let body = |v: usize| bones.has_inside.get(part(v)).copied().unwrap_or(true);
    let accessory = |v: usize| !body(v) && plates.binary_search(&part(v)).is_err();
    if !(0..positions.len()).any(accessory) {
        return weights;
    }
    let index = crate::spatial::PointIndex::new(positions.iter().copied().enumerate().filter(|(v, _)| body(*v)));
    let rows: Vec<(u32, Row)> = (0..positions.len())
        .into_par_iter()
        .filter(|&v| accessory(v))
        .filter_map(|v| {
            let from = index.nearest_within(positions[v], f32::INFINITY)?;
            let (j, w) = weights.row(from);
            (!j.is_empty()).then(|| (v as u32, j.iter().copied().zip(w.iter().copied()).collect()))
        })
        .collect();
    weights.with_rows(&rows).unwrap_or(weights)
}

/// The deforming joints placed as controls are (see [`super::controls`]): roots with children whose pivot lies
/// outside the solid, and hovering controls under them. Left out of `opts` unless it binds controls (as long as
/// some other joint still deforms), else warned about. A pivot within a cell of the solid counts as inside (a
/// pivot on a cap), and one within a cell of the bounding box as within it.
fn placed_controls<'a>(
    skel: &Skeleton,
    bind_world: &[glam::Mat4],
    field: &Field,
    bounds: (Vec3, Vec3),
    opts: &'a BindOptions,
    report: &mut BindReport,
) -> std::borrow::Cow<'a, BindOptions> {
    use super::controls::{ControlReason, control_warning, control_word, excluded_warning};
    let inside = |j: usize| {
        let pivot = bind_world[j].w_axis.truncate();
        // Clamped a cell beyond the grid, so that the neighbours below cannot overflow for a far pivot.
        let dims = IVec3::new(
            field.grid.dims[0] as i32,
            field.grid.dims[1] as i32,
            field.grid.dims[2] as i32,
        );
        let at = ((pivot - field.grid.origin) / field.grid.h)
            .floor()
            .as_ivec3()
            .clamp(IVec3::splat(-2), dims + 1);
        (0..27).any(|k| {
            let c = at + IVec3::new(k % 3 - 1, (k / 3) % 3 - 1, k / 9 - 1);
            field.grid.contains(c) && field.slot[field.grid.index(c)] != NONE
        })
    };
    // Beyond the mesh's bounding box by more than a cell.
    let beyond = |j: usize| {
        let pivot = bind_world[j].w_axis.truncate();
        let margin = Vec3::splat(field.grid.h);
        pivot.cmplt(bounds.0 - margin).any() || pivot.cmpgt(bounds.1 + margin).any()
    };
    // Down from the roots: a root with children whose pivot lies outside the solid (a master root between the
    // feet), and under it, or under a joint that does not deform, a joint whose pivot lies beyond the mesh's
    // bounding box while those of its deforming children lie inside the solid (a `Body` control hovering over
    // the rig, moving its limbs; not a chain of joints leading to a mesh that covers part of the rig). Joints
    // come parents first.
    // Children named as controls (pole targets parented to the control) do not count, bound or not.
    // At least one child counts.
    let hovers = |j: usize| {
        let mut counted = skel
            .children(j)
            .iter()
            .filter(|&&c| opts.deforms(c) && control_word(&skel.joints()[c].name).is_none())
            .peekable();
        beyond(j) && counted.peek().is_some() && counted.all(|&c| inside(c))
    };
    let mut is_control = vec![false; skel.len()];
    if field.solid_count() > 0 {
        for j in 0..skel.len() {
            let control = match skel.joints()[j].parent {
                None => !inside(j),
                Some(p) => (!opts.deforms(p) || is_control[p]) && hovers(j),
            };
            is_control[j] = control && opts.deforms(j) && !skel.children(j).is_empty();
        }
    }
    let roots: Vec<usize> = (0..skel.len()).filter(|&j| is_control[j]).collect();
    let others = (0..skel.len()).filter(|&j| opts.deforms(j) && !is_control[j]).count();
    let reason = |j: usize| match skel.joints()[j].parent {
        None => ControlReason::RootOutside,
        Some(_) => ControlReason::Hovering,
    };
    if roots.is_empty() {
        return std::borrow::Cow::Borrowed(opts);
    }
    if opts.bind_controls || others == 0 {
        for j in roots {
            report
                .warnings
                .push(control_warning(j, &skel.joints()[j].name, reason(j)));
            report.controls.push(j);
        }
        return std::borrow::Cow::Borrowed(opts);
    }
    let o = opts.without(roots.iter().copied(), skel.len());
    for j in roots {
        report
            .warnings
            .push(excluded_warning(j, &skel.joints()[j].name, reason(j)));
        report.excluded_controls.push(j);
    }
    report.excluded_controls.sort_unstable();
    std::borrow::Cow::Owned(o)
}

/// The distance field of `segments` (each a deforming joint's) through the solid of the mesh.
pub fn distance_field(
    segments: &[Segment],
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    parts: &(Vec<u32>, usize),
    opts: &BindOptions,
    report: &mut GeodesicReport,
    stages: &mut BindReport,
) -> Field {
    let k = opts.max_influences.clamp(1, MAX_LABELS);
    let prune = opts.blend_ratio * PRUNE_MARGIN;
    distance_field_with(segments, positions, triangles, parts, opts, (k, prune), report, stages)
}

/// The solid of the mesh on the grid, no bone seeded yet (step 1): cells keeping `k` bones, pruned at `prune`
/// times their nearest.
fn voxel_field(
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    parts: &(Vec<u32>, usize),
    opts: &BindOptions,
    (k, prune): (usize, f32),
    stages: &mut BindReport,
) -> Field {
    let t = Instant::now();
    let (lo, hi) = crate::model::skin::bounds(positions).unwrap_or((Vec3::ZERO, Vec3::ZERO));
    let grid = Grid::new(lo, hi, opts.resolution);
    let solid = solid_cells(&grid, positions, triangles, parts);
    let field = Field::new(grid, &solid, k, prune);
    stage("voxels", t, stages);
    field
}

/// [`distance_field`] keeping `k` bones a cell, pruned at `prune` times its nearest.
#[allow(clippy::too_many_arguments)]
fn distance_field_with(
    segments: &[Segment],
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    parts: &(Vec<u32>, usize),
    opts: &BindOptions,
    (k, prune): (usize, f32),
    report: &mut GeodesicReport,
    stages: &mut BindReport,
) -> Field {
    let field = voxel_field(positions, triangles, parts, opts, (k, prune), stages);
    fill_field(field, segments, opts, k, report, stages)
}

/// Steps 2 to 4 on a voxelised `field`: the distances of `segments` through its solid.
fn fill_field(
    mut field: Field,
    segments: &[Segment],
    opts: &BindOptions,
    k: usize,
    report: &mut GeodesicReport,
    stages: &mut BindReport,
) -> Field {
    let t = Instant::now();
    report.grid = field.grid.dims;
    report.cell_size = field.grid.h;
    report.solid_cells = field.solid_count();
    if field.solid_count() == 0 {
        return field;
    }

    // 2. Seeds along the segments, and from the nearest cells for bones outside the solid.
    let mut joints: Vec<u16> = segments.iter().map(|s| s.joint).collect();
    joints.sort_unstable();
    joints.dedup();
    let seeded = seed_along_segments(&mut field, segments);
    for &j in joints.iter().filter(|j| seeded.binary_search(j).is_err()) {
        report.bones_outside += 1;
        seed_from_nearest_cells(&mut field, segments, j);
    }
    // 3.
    field.propagate();

    // 4. Pieces of the solid that no bone reached.
    let pieces = unreached_pieces(&field);
    report.detached_pieces = pieces.len();
    for piece in pieces {
        seed_across_the_gap(&mut field, segments, &joints, &piece, k, opts.blend_ratio);
    }
    field.propagate();
    stage("distances", t, stages);
    field
}

/// Seed the solid cells around every segment (step 2): the eight cell centres around each point every half cell
/// along the part of it inside the grid, at their distance to it. Returns the joints seeded, ascending.
fn seed_along_segments(field: &mut Field, segments: &[Segment]) -> Vec<u16> {
    let h = field.grid.h;
    let box_lo = field.grid.origin;
    let box_hi = box_lo
        + Vec3::new(
            field.grid.dims[0] as f32,
            field.grid.dims[1] as f32,
            field.grid.dims[2] as f32,
        ) * h;
    let mut seeded = Vec::new();
    for s in segments {
        let Some((t0, t1)) = clip(s, box_lo, box_hi) else {
            continue;
        };
        let len = s.length() * (t1 - t0);
        let n = ((len / (h * 0.5)).ceil() as usize).max(1);
        for i in 0..=n {
            let p = s.a + (s.b - s.a) * (t0 + (t1 - t0) * i as f32 / n as f32);
            // The eight cell centres around the point (a bone along cell borders seeds both sides alike).
            let base = ((p - field.grid.origin) / h - 0.5).floor().as_ivec3();
            for corner in 0..8 {
                let c = base + IVec3::new(corner & 1, (corner >> 1) & 1, (corner >> 2) & 1);
                if !field.grid.contains(c) {
                    continue;
                }
                let slot = field.slot[field.grid.index(c)];
                if slot != NONE {
                    let d = s.closest(field.grid.center(c)).1.sqrt();
                    field.offer(slot, s.joint, d);
                    seeded.push(s.joint);
                }
            }
        }
    }
    seeded.sort_unstable();
    seeded.dedup();
    seeded
}

/// Seed joint `j`, whose bone passes through no solid cell, in the solid cells nearest to it (within a cell of
/// the least distance), at their distance to it.
fn seed_from_nearest_cells(field: &mut Field, segments: &[Segment], j: u16) {
    let own: Vec<&Segment> = segments.iter().filter(|s| s.joint == j).collect();
    let dist: Vec<f32> = (0..field.solid_count())
        .into_par_iter()
        .map(|slot| {
            let c = field.centre(slot);
            distance2_to(own.iter().copied(), c).sqrt()
        })
        .collect();
    let least = dist.iter().copied().fold(f32::INFINITY, f32::min);
    for (slot, d) in dist.into_iter().enumerate() {
        if d <= least + field.grid.h {
            field.offer(slot as u32, j, d);
        }
    }
}

/// Seed a `piece` of the solid that no bone reached (step 4): the `k` bones nearest to it (within `ratio` times
/// the nearest's gap), each at the cell where its gap is least, at that gap. `joints` ascending.
fn seed_across_the_gap(field: &mut Field, segments: &[Segment], joints: &[u16], piece: &[u32], k: usize, ratio: f32) {
    // Per joint: the least gap from the piece to its bone, and the cell where it is least.
    let mut gap: Vec<(f32, u32, u16)> = joints.iter().map(|&j| (f32::INFINITY, NONE, j)).collect();
    for &slot in piece {
        let c = field.centre(slot as usize);
        for s in segments {
            let d = s.closest(c).1.sqrt();
            let g = &mut gap[joints.binary_search(&s.joint).unwrap_or(0)];
            if d < g.0 {
                *g = (d, slot, s.joint);
            }
        }
    }
    gap.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
    let first = gap[0].0;
    for &(d, slot, j) in gap.iter().take(k) {
        if slot != NONE && d <= first * ratio {
            field.offer(slot, j, d);
        }
    }
}

/// Connected pieces (26-neighbours) of solid cells that have no bone.
fn unreached_pieces(field: &Field) -> Vec<Vec<u32>> {
    let mut seen: Vec<bool> = field.nearest.iter().map(|d| d.is_finite()).collect();
    let mut pieces = Vec::new();
    for start in 0..field.solid_count() {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut piece = vec![start as u32];
        let mut at = 0;
        while at < piece.len() {
            let cell = field.cells[piece[at] as usize] as isize;
            at += 1;
            for &(off, _) in &field.steps {
                let n = field.slot[(cell + off) as usize];
                if n != NONE && !seen[n as usize] {
                    seen[n as usize] = true;
                    piece.push(n);
                }
            }
        }
        pieces.push(piece);
    }
    pieces
}

impl Field {
    /// Each bone's distance to the point `p`: over the eight cell centres around `p`, the least of the cell's
    /// distance plus the centre's distance to `p`. Sorted by distance (ties: lower joint).
    pub fn bones_at(&self, p: Vec3, out: &mut Vec<(u16, f32)>) {
        out.clear();
        let base = ((p - self.grid.origin) / self.grid.h - 0.5).floor().as_ivec3();
        for corner in 0..8 {
            let c = base + IVec3::new(corner & 1, (corner >> 1) & 1, (corner >> 2) & 1);
            if !self.grid.contains(c) {
                continue;
            }
            let slot = self.slot[self.grid.index(c)];
            if slot == NONE {
                continue;
            }
            let step = (self.grid.center(c) - p).length();
            for l in self.finals(slot as usize) {
                let d = l.dist + step;
                match out.iter_mut().find(|x| x.0 == l.joint) {
                    Some(x) => x.1 = x.1.min(d),
                    None => out.push((l.joint, d)),
                }
            }
        }
        out.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    }
}

/// Weights of every vertex from the field (step 5). A vertex with no bone around it (none can be: its own cell
/// is solid and every solid cell has a bone) would take the nearest segment's joint.
pub(super) fn weights_from_field(
    field: &Field,
    segments: &[Segment],
    skel: Option<&Skeleton>,
    positions: &[Vec3],
    opts: &BindOptions,
    own: Option<(&PartBones, &Surface)>,
) -> Weights {
    let bones = VertexBones {
        field,
        segments,
        reach: Reach::new(segments, skel),
        opts,
        own,
    };
    const CHUNK: usize = 4096;
    let chunks: Vec<(Vec<u32>, Vec<u16>, Vec<f32>)> = positions
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut counts = Vec::with_capacity(chunk.len());
            let (mut joints, mut values) = (Vec::with_capacity(chunk.len() * 2), Vec::with_capacity(chunk.len() * 2));
            let (mut bone_dists, mut vertex_weights) = (Vec::new(), Vec::new());
            for (i, &p) in chunk.iter().enumerate() {
                bones.distances(c * CHUNK + i, p, &mut bone_dists);
                bones.weights(p, &bone_dists, &mut vertex_weights);
                counts.push(vertex_weights.len() as u32);
                joints.extend(vertex_weights.iter().map(|x| x.0));
                values.extend(vertex_weights.iter().map(|x| x.1));
            }
            (counts, joints, values)
        })
        .collect();
    let total: usize = chunks.iter().map(|c| c.1.len()).sum();
    let mut offsets = Vec::with_capacity(positions.len() + 1);
    offsets.push(0u32);
    let (mut joints, mut values) = (Vec::with_capacity(total), Vec::with_capacity(total));
    for (counts, j, x) in chunks {
        for c in counts {
            offsets.push(offsets.last().copied().unwrap_or(0) + c);
        }
        joints.extend(j);
        values.extend(x);
    }
    Weights::from_valid(offsets, joints, values)
}

/// What a vertex's bones, their distances and its weights are found from (step 5).
struct VertexBones<'a> {
    field: &'a Field,
    segments: &'a [Segment],
    /// Each bone's stretch past its ends (step 5).
    reach: Reach,
    opts: &'a BindOptions,
    /// The parts rule: which bones each part allows, and each vertex's part.
    own: Option<(&'a PartBones, &'a Surface)>,
}

impl VertexBones<'_> {
    /// Vertex `v`'s (at `p`) bones with their distances, nearest first (ties: lower joint): through the field,
    /// kept to its part's bones, stretched by end distance when the options say so.
    fn distances(&self, v: usize, p: Vec3, bone_dists: &mut Vec<(u16, f32)>) {
        self.field.bones_at(p, bone_dists);
        if let Some((bones, surface)) = self.own {
            let part = surface.part_of(v);
            let before = bone_dists.len();
            bone_dists.retain(|x| bones.allows(part, x.0));
            if bone_dists.is_empty() && before > 0 {
                // Every bone the solid reaches here is another part's (or this part is an accessory whose bone
                // does not reach it): this part's own bones, by straight distance.
                for s in self.segments.iter().filter(|s| bones.allows(part, s.joint)) {
                    let d = s.closest(p).1.sqrt();
                    match bone_dists.iter_mut().find(|x| x.0 == s.joint) {
                        Some(x) => x.1 = x.1.min(d),
                        None => bone_dists.push((s.joint, d)),
                    }
                }
            }
        }
        if self.opts.end_distance {
            for x in bone_dists.iter_mut() {
                x.1 *= self.reach.stretch(x.0, p);
            }
            bone_dists.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        }
    }

    /// The weights of the vertex at `p` with bones `bone_dists` ([`Self::distances`]): the line falloff, limited
    /// and normalised; the nearest segment's joint alone when it has none.
    fn weights(&self, p: Vec3, bone_dists: &[(u16, f32)], vertex_weights: &mut Row) {
        let opts = self.opts;
        vertex_weights.clear();
        if let Some(&(_, d1)) = bone_dists.first() {
            for &(j, d) in bone_dists {
                let x = falloff(d, d1, opts.blend_ratio, opts.falloff_power);
                if x >= MIN_WEIGHT {
                    vertex_weights.push((j, x));
                }
            }
        } else if let Some(s) = super::bones::nearest_segment(self.segments, p) {
            vertex_weights.push((s.joint, 1.0));
        }
        limit_and_normalise(vertex_weights, opts.max_influences, opts.rigid);
    }
}

#[cfg(test)]
#[path = "geodesic_tests.rs"]
mod tests;
