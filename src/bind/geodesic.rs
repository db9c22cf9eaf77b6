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

use super::bones::{Segment, SegmentKind, bone_segments};
use super::voxel::{Grid, solid_cells};
use super::{BindOptions, BindReport, MIN_WEIGHT, Surface, deforming_segments, falloff, limit_and_normalise, stage};
use crate::model::{Skeleton, Weights};

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
    let parts = crate::mesh::connected_parts(positions, triangles, 1e-6 * (hi - lo).length());
    report.parts = parts.1;
    stage("mesh parts", t, report);
    let t = Instant::now();
    // The surface is needed only to extend box-less leaves into the mesh.
    let continued = bone_segments(skel, bind_world)
        .iter()
        .any(|s| s.kind == SegmentKind::Continued);
    let use_parts = opts.parts && (2..=super::MAX_PARTS).contains(&parts.1);
    let surface = ((opts.leaf_to_surface && continued) || use_parts)
        .then(|| Surface::new(positions, triangles, Some(parts.clone())));
    let part_boxes = surface
        .as_ref()
        .filter(|s| s.parts.len() > 1)
        .map(|s| s.part_bounds(positions));
    let segments = deforming_segments(
        skel,
        bind_world,
        positions,
        surface.as_ref(),
        part_boxes.as_ref(),
        opts,
        report,
    );
    let part_bones = match (&surface, &part_boxes) {
        (Some(s), Some(b)) if use_parts => Some(super::PartBones::new(
            &super::BoneIndex::new(&segments),
            positions,
            s,
            b,
            skel.len(),
            &plate_parts(positions, triangles, &parts),
        )),
        _ => None,
    };
    stage("bones", t, report);
    let mut counts = GeodesicReport::default();
    let field = distance_field(&segments, positions, triangles, &parts, opts, &mut counts, report);
    report.geodesic = Some(counts);
    warn_outside_roots(skel, bind_world, &field, opts, report);
    let t = Instant::now();
    let mut part_bones = part_bones;
    if let Some(pb) = part_bones.as_mut() {
        let pairs = plate_bones(&field.grid, positions, triangles, &parts.0, &pb.has_inside, &segments);
        let mut plates: Vec<usize> = pairs.iter().map(|p| p.1).collect();
        plates.sort_unstable();
        plates.dedup();
        for c in plates {
            pb.clear_part(c);
        }
        for (joint, part) in pairs {
            pb.confine(joint, part);
        }
    }
    drop(parts);
    let own = part_bones.as_ref().zip(surface.as_ref());
    let weights = weights_from_field(&field, &segments, positions, opts, own);
    stage("weights", t, report);
    weights
}

/// Warn about deforming root joints with children whose pivot lies outside the solid (see [`super::controls`]).
fn warn_outside_roots(
    skel: &Skeleton,
    bind_world: &[glam::Mat4],
    field: &Field,
    opts: &BindOptions,
    report: &mut BindReport,
) {
    for (j, joint) in skel.joints().iter().enumerate() {
        let has_children = skel.joints().iter().any(|c| c.parent == Some(j));
        if joint.parent.is_some() || !has_children || !opts.deforms(j) {
            continue;
        }
        let pivot = bind_world[j].w_axis.truncate();
        let at = ((pivot - field.grid.origin) / field.grid.h).floor().as_ivec3();
        // Within a cell of the solid counts as inside (a pivot on a cap).
        let solid = (0..27).any(|k| {
            let c = at + IVec3::new(k % 3 - 1, (k / 3) % 3 - 1, k / 9 - 1);
            field.grid.contains(c) && field.slot[field.grid.index(c)] != NONE
        });
        let warned = report.warnings.iter().any(|w| w.starts_with(&format!("joint {j} ")));
        if !solid && !warned {
            let reason = super::controls::ControlReason::RootOutside;
            report
                .warnings
                .push(super::controls::control_warning(j, &joint.name, reason));
        }
    }
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
    let t = Instant::now();
    let (lo, hi) = crate::model::skin::bounds(positions).unwrap_or((Vec3::ZERO, Vec3::ZERO));
    let grid = Grid::new(lo, hi, opts.resolution);
    let solid = solid_cells(&grid, positions, triangles, parts);
    let mut field = Field::new(grid, &solid, k, prune);
    drop(solid);
    stage("voxels", t, stages);
    let t = Instant::now();
    report.grid = field.grid.dims;
    report.cell_size = field.grid.h;
    report.solid_cells = field.solid_count();
    if field.solid_count() == 0 {
        return field;
    }

    // 2. Seeds along the segments.
    let h = field.grid.h;
    let box_lo = field.grid.origin;
    let box_hi = box_lo
        + Vec3::new(
            field.grid.dims[0] as f32,
            field.grid.dims[1] as f32,
            field.grid.dims[2] as f32,
        ) * h;
    let mut joints: Vec<u16> = segments.iter().map(|s| s.joint).collect();
    joints.sort_unstable();
    joints.dedup();
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
    // Bones outside the solid: from the nearest solid cells.
    for &j in joints.iter().filter(|j| seeded.binary_search(j).is_err()) {
        report.bones_outside += 1;
        let own: Vec<&Segment> = segments.iter().filter(|s| s.joint == j).collect();
        let dist: Vec<f32> = (0..field.solid_count())
            .into_par_iter()
            .map(|slot| {
                let c = field.centre(slot);
                own.iter().map(|s| s.closest(c).1).fold(f32::INFINITY, f32::min).sqrt()
            })
            .collect();
        let least = dist.iter().copied().fold(f32::INFINITY, f32::min);
        for (slot, d) in dist.into_iter().enumerate() {
            if d <= least + h {
                field.offer(slot as u32, j, d);
            }
        }
    }
    // 3.
    field.propagate();

    // 4. Pieces of the solid that no bone reached.
    let pieces = unreached_pieces(&field);
    report.detached_pieces = pieces.len();
    for piece in pieces {
        // Per joint: the least gap from the piece to its bone, and the cell where it is least.
        let mut gap: Vec<(f32, u32, u16)> = joints.iter().map(|&j| (f32::INFINITY, NONE, j)).collect();
        for &slot in &piece {
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
            if slot != NONE && d <= first * opts.blend_ratio {
                field.offer(slot, j, d);
            }
        }
    }
    field.propagate();
    stage("distances", t, stages);
    field
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
    positions: &[Vec3],
    opts: &BindOptions,
    own: Option<(&super::PartBones, &Surface)>,
) -> Weights {
    let mut by_joint: Vec<Vec<Segment>> = Vec::new();
    for s in segments {
        let j = s.joint as usize;
        if by_joint.len() <= j {
            by_joint.resize(j + 1, Vec::new());
        }
        by_joint[j].push(*s);
    }
    let stretch = |j: u16, p: Vec3| -> f32 {
        let Some(own) = by_joint.get(j as usize).filter(|_| opts.end_distance) else {
            return 1.0;
        };
        let plain = own.iter().map(|s| s.closest(p).1).fold(f32::INFINITY, f32::min).sqrt();
        let end = own.iter().map(|s| s.end_distance(p)).fold(f32::INFINITY, f32::min);
        if plain > 0.0 && end.is_finite() {
            (end / plain).max(1.0)
        } else {
            1.0
        }
    };
    let near_of = |v: usize, near: &mut Vec<(u16, f32)>| {
        let p = positions[v];
        field.bones_at(p, near);
        if let Some((bones, surface)) = own {
            let part = surface.part_of(v);
            let before = near.len();
            near.retain(|x| bones.allows(part, x.0));
            if near.is_empty() && before > 0 {
                // Every bone the solid reaches here is another part's (or this part is an accessory whose bone
                // does not reach it): this part's own bones, by straight distance.
                for s in segments.iter().filter(|s| bones.allows(part, s.joint)) {
                    let d = s.closest(p).1.sqrt();
                    match near.iter_mut().find(|x| x.0 == s.joint) {
                        Some(x) => x.1 = x.1.min(d),
                        None => near.push((s.joint, d)),
                    }
                }
            }
        }
        if opts.end_distance {
            for x in near.iter_mut() {
                x.1 *= stretch(x.0, p);
            }
            near.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        }
    };
    let chunks: Vec<(Vec<u32>, Vec<u16>, Vec<f32>)> = positions
        .par_chunks(4096)
        .enumerate()
        .map(|(c, chunk)| {
            let mut counts = Vec::with_capacity(chunk.len());
            let (mut joints, mut values) = (Vec::with_capacity(chunk.len() * 2), Vec::with_capacity(chunk.len() * 2));
            let (mut near, mut w) = (Vec::new(), Vec::new());
            for (i, &p) in chunk.iter().enumerate() {
                near_of(c * 4096 + i, &mut near);
                w.clear();
                if let Some(&(_, d1)) = near.first() {
                    for &(j, d) in &near {
                        let x = falloff(d, d1, opts.blend_ratio, opts.falloff_power);
                        if x >= MIN_WEIGHT {
                            w.push((j, x));
                        }
                    }
                } else if let Some(s) = segments.iter().min_by(|a, b| a.closest(p).1.total_cmp(&b.closest(p).1)) {
                    w.push((s.joint, 1.0));
                }
                limit_and_normalise(&mut w, opts.max_influences, opts.rigid);
                counts.push(w.len() as u32);
                joints.extend(w.iter().map(|x| x.0));
                values.extend(w.iter().map(|x| x.1));
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

/// Bones that lie in a plate: for each part with no bone inside it (`has_inside` false: a wing, a fin, a hair
/// card), the joint that lies most in it, if at least half of its bone points (every half cell along its
/// segments) are in or beside (26-neighbours) a cell that the part's triangles overlap. Such a joint is the bone of
/// its plates alone, even where its bone also passes inside another part (the course wasp's wings lie folded
/// through its abdomen), and the plate takes it instead of the one bone nearest to it.
pub(super) fn plate_bones(
    grid: &Grid,
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    part_of: &[u32],
    has_inside: &[bool],
    segments: &[Segment],
) -> Vec<(u16, usize)> {
    let n = positions.len();
    let mut cells: Vec<Vec<u32>> = vec![Vec::new(); has_inside.len()];
    for t in triangles.iter().filter(|t| t.iter().all(|&i| (i as usize) < n)) {
        let c = part_of[t[0] as usize] as usize;
        if has_inside.get(c) == Some(&false) {
            super::voxel::triangle_cells(grid, &t.map(|i| positions[i as usize]), &mut cells[c]);
        }
    }
    let mut plates: Vec<(usize, Vec<u32>)> = Vec::new();
    for (c, mut list) in cells.into_iter().enumerate() {
        if !list.is_empty() {
            list.sort_unstable();
            list.dedup();
            plates.push((c, list));
        }
    }
    if plates.is_empty() {
        return Vec::new();
    }
    // Each joint's bone points.
    let mut points: Vec<(u16, Vec3)> = Vec::new();
    for s in segments {
        let steps =
            ((s.length() / (grid.h * 0.5)).ceil() as usize).clamp(1, 4 * grid.dims.iter().max().copied().unwrap_or(1));
        points.extend((0..=steps).map(|i| (s.joint, s.a.lerp(s.b, i as f32 / steps as f32))));
    }
    points.sort_by_key(|p| p.0);
    let mut found: Vec<(usize, f32, u16)> = Vec::new();
    for run in points.chunk_by(|a, b| a.0 == b.0) {
        let joint = run[0].0;
        for (c, list) in &plates {
            let held = run
                .iter()
                .filter(|(_, p)| {
                    let at = grid.cell_of(*p);
                    (0..27).any(|k| {
                        let q = at + IVec3::new(k % 3 - 1, (k / 3) % 3 - 1, k / 9 - 1);
                        grid.contains(q) && list.binary_search(&(grid.index(q) as u32)).is_ok()
                    })
                })
                .count();
            if held * 2 >= run.len() {
                found.push((*c, held as f32 / run.len() as f32, joint));
            }
        }
    }
    // Each plate takes the joint that lies most in it (ties: the lower joint).
    found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
    found.dedup_by_key(|x| x.0);
    found.into_iter().map(|(c, _, j)| (j, c)).collect()
}

/// Per part: whether it is a plate, flat (every vertex within 1% of the part's size from the plane of its largest
/// triangle) and open (an edge not shared by exactly two of its triangles once coincident vertices are merged): a
/// wing, a fin, a hair card. No bone can be inside a plate, whatever the ray parity test says.
pub(super) fn plate_parts(positions: &[Vec3], triangles: &[[u32; 3]], parts: &(Vec<u32>, usize)) -> Vec<bool> {
    let n = positions.len();
    let mut ids: std::collections::HashMap<[u32; 3], u32> = std::collections::HashMap::with_capacity(n);
    let welded: Vec<u32> = positions
        .iter()
        .map(|p| {
            let next = ids.len() as u32;
            *ids.entry(p.to_array().map(|x| (x + 0.0).to_bits())).or_insert(next)
        })
        .collect();
    let mut edges: Vec<(u32, u32, u32)> = Vec::with_capacity(triangles.len() * 3);
    for t in triangles.iter().filter(|t| t.iter().all(|&i| (i as usize) < n)) {
        let w = t.map(|i| welded[i as usize]);
        if w[0] == w[1] || w[1] == w[2] || w[0] == w[2] {
            continue;
        }
        let part = parts.0[t[0] as usize];
        for k in 0..3 {
            let (a, b) = (w[k], w[(k + 1) % 3]);
            edges.push((part, a.min(b), a.max(b)));
        }
    }
    edges.sort_unstable();
    let mut open = vec![false; parts.1];
    for run in edges.chunk_by(|a, b| a == b) {
        if run.len() != 2 {
            open[run[0].0 as usize] = true;
        }
    }
    // Each part's plane (its largest triangle's) and box.
    let mut plane: Vec<(f32, Vec3, Vec3)> = vec![(0.0, Vec3::ZERO, Vec3::ZERO); parts.1];
    for t in triangles.iter().filter(|t| t.iter().all(|&i| (i as usize) < n)) {
        let [a, b, c] = t.map(|i| positions[i as usize]);
        let cross = (b - a).cross(c - a);
        let p = &mut plane[parts.0[t[0] as usize] as usize];
        if cross.length() > p.0 {
            *p = (cross.length(), cross.normalize_or_zero(), a);
        }
    }
    let mut lo = vec![Vec3::INFINITY; parts.1];
    let mut hi = vec![Vec3::NEG_INFINITY; parts.1];
    let mut off = vec![0f32; parts.1];
    for (v, p) in positions.iter().enumerate() {
        let c = parts.0[v] as usize;
        lo[c] = lo[c].min(*p);
        hi[c] = hi[c].max(*p);
        off[c] = off[c].max((*p - plane[c].2).dot(plane[c].1).abs());
    }
    (0..parts.1)
        .map(|c| open[c] && plane[c].0 > 0.0 && off[c] <= 0.01 * (hi[c] - lo[c]).length())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bind::bones::SegmentKind;

    /// A closed box from `lo` to `hi`, `n` quads a side, wound outward.
    fn box_mesh(lo: Vec3, hi: Vec3, n: usize) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let (mut p, mut t) = (Vec::new(), Vec::new());
        for axis in 0..3 {
            for side in [0.0f32, 1.0] {
                let (u, w) = ((axis + 1) % 3, (axis + 2) % 3);
                let base = p.len() as u32;
                for i in 0..=n {
                    for j in 0..=n {
                        let mut q = Vec3::ZERO;
                        q[axis] = lo[axis] + side * (hi[axis] - lo[axis]);
                        q[u] = lo[u] + (hi[u] - lo[u]) * i as f32 / n as f32;
                        q[w] = lo[w] + (hi[w] - lo[w]) * j as f32 / n as f32;
                        p.push(q);
                    }
                }
                let id = |i: usize, j: usize| base + (i * (n + 1) + j) as u32;
                for i in 0..n {
                    for j in 0..n {
                        let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
                        if side == 1.0 {
                            t.push([a, b, c]);
                            t.push([a, c, d]);
                        } else {
                            t.push([a, c, b]);
                            t.push([a, d, c]);
                        }
                    }
                }
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

    fn field_of(
        segments: &[Segment],
        p: &[Vec3],
        t: &[[u32; 3]],
        opts: &BindOptions,
        limits: Option<(usize, f32)>,
    ) -> (Field, GeodesicReport) {
        let parts = crate::mesh::connected_parts(p, t, 1e-6);
        let (mut report, mut stages) = (GeodesicReport::default(), BindReport::default());
        let k = opts.max_influences.clamp(1, MAX_LABELS);
        let limits = limits.unwrap_or((k, opts.blend_ratio * PRUNE_MARGIN));
        let f = distance_field_with(segments, p, t, &parts, opts, limits, &mut report, &mut stages);
        (f, report)
    }

    fn bar() -> (Vec<Vec3>, Vec<[u32; 3]>, Vec<Segment>) {
        let (p, t) = box_mesh(Vec3::new(-1.2, -0.2, -0.2), Vec3::new(1.2, 0.2, 0.2), 12);
        let s = vec![
            seg(0, Vec3::new(-1.0, 0.0, 0.0), Vec3::ZERO),
            seg(1, Vec3::ZERO, Vec3::new(1.0, 0.0, 0.0)),
        ];
        (p, t, s)
    }

    #[test]
    fn the_kept_bones_are_those_of_an_exhaustive_search() {
        // Three bones in an L-shaped solid (two boxes overlapping): the search that keeps k bones a cell and
        // prunes far ones must give each cell the same nearest bone and distance as the search that keeps every
        // bone everywhere, and never a distance below it.
        let (mut p, mut t) = box_mesh(Vec3::new(-1.0, -0.2, -0.2), Vec3::new(1.0, 0.2, 0.2), 8);
        let (p2, t2) = box_mesh(Vec3::new(0.6, -0.2, -0.2), Vec3::new(1.0, 1.5, 0.2), 8);
        let base = p.len() as u32;
        p.extend(p2);
        t.extend(t2.iter().map(|t| t.map(|i| i + base)));
        let s = vec![
            seg(0, Vec3::new(-0.9, 0.0, 0.0), Vec3::new(0.0, 0.0, 0.0)),
            seg(1, Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.8, 0.0, 0.0)),
            seg(2, Vec3::new(0.8, 0.0, 0.0), Vec3::new(0.8, 1.4, 0.0)),
        ];
        let opts = BindOptions {
            resolution: 48,
            max_influences: 2,
            ..BindOptions::default()
        };
        let (fast, _) = field_of(&s, &p, &t, &opts, None);
        let (full, _) = field_of(&s, &p, &t, &opts, Some((3, f32::INFINITY)));
        assert_eq!(fast.cells, full.cells);
        let mut kept = 0;
        for slot in 0..fast.solid_count() {
            let all: Vec<&Label> = full.finals(slot).collect();
            assert_eq!(all.len(), 3, "slot {slot}");
            let best = all.iter().min_by(|a, b| a.dist.total_cmp(&b.dist)).unwrap();
            assert_eq!(fast.nearest[slot], best.dist, "slot {slot}");
            for l in fast.finals(slot) {
                let exact = all.iter().find(|x| x.joint == l.joint).unwrap().dist;
                assert!(l.dist >= exact - 1e-6, "slot {slot} joint {}", l.joint);
                kept += usize::from((l.dist - exact).abs() <= 1e-5 * exact.max(1.0));
            }
        }
        assert!(kept > fast.solid_count(), "{kept}");
    }

    #[test]
    fn distances_through_a_convex_solid_are_close_to_straight_ones() {
        // Inside a box every shortest path is straight: the 26-neighbour steps overestimate it by at most about
        // 8% (the worst direction of the 1, √2, √3 steps), plus the seed's distance to the bone (half a diagonal
        // of a cell at most), and never underestimate it by more than that.
        let (p, t, s) = bar();
        let opts = BindOptions {
            resolution: 64,
            ..BindOptions::default()
        };
        let (f, _) = field_of(&s, &p, &t, &opts, None);
        let h = f.grid.h;
        for slot in 0..f.solid_count() {
            let c = f.centre(slot);
            let straight = s.iter().map(|s| s.closest(c).1.sqrt()).fold(f32::INFINITY, f32::min);
            let d = f.nearest[slot];
            assert!(d >= straight - h, "slot {slot}: {d} < {straight}");
            assert!(d <= straight * 1.09 + h, "slot {slot}: {d} > {straight}");
        }
    }

    #[test]
    fn two_bones_split_a_symmetric_bar_symmetrically() {
        let (p, t, s) = bar();
        let opts = BindOptions::default();
        let (f, _) = field_of(&s, &p, &t, &opts, None);
        let w = weights_from_field(&f, &s, &p, &opts, None);
        let weight = |v: usize, j: u16| {
            let (js, ws) = w.row(v);
            js.iter().position(|&x| x == j).map_or(0.0, |i| ws[i])
        };
        for v in 0..p.len() {
            // The vertex mirrored through x = 0.
            let m = p
                .iter()
                .position(|q| (*q - Vec3::new(-p[v].x, p[v].y, p[v].z)).length() < 1e-5)
                .unwrap();
            assert!(
                (weight(v, 0) - weight(m, 1)).abs() < 1e-3,
                "vertex {v} {:?} vs {m}: {:?} {:?}",
                p[v],
                w.row(v),
                w.row(m)
            );
            if p[v].x <= -0.6 {
                assert_eq!(w.row(v).0, &[0], "vertex {v} {:?}", p[v]);
            }
            if p[v].x.abs() < 1e-6 {
                assert!((weight(v, 0) - 0.5).abs() < 1e-3, "vertex {v} {:?}", p[v]);
            }
        }
    }

    #[test]
    fn a_piece_no_bone_enters_takes_the_nearest_bone_and_a_bone_outside_still_weights() {
        let (mut p, mut t, mut s) = bar();
        let (p2, t2) = box_mesh(Vec3::new(-1.0, 0.6, -0.1), Vec3::new(-0.8, 0.8, 0.1), 2);
        let base = p.len() as u32;
        p.extend(p2);
        t.extend(t2.iter().map(|t| t.map(|i| i + base)));
        // A third bone above the bar, outside the solid, nearer the bar's right end than any other part.
        s.push(seg(2, Vec3::new(0.9, 0.5, 0.0), Vec3::new(1.1, 0.5, 0.0)));
        let opts = BindOptions::default();
        let (f, report) = field_of(&s, &p, &t, &opts, None);
        assert_eq!(report.detached_pieces, 1);
        assert_eq!(report.bones_outside, 1);
        let w = weights_from_field(&f, &s, &p, &opts, None);
        for v in base as usize..p.len() {
            assert_eq!(w.row(v).0, &[0], "vertex {v} of the detached piece");
        }
        assert!((0..w.len()).all(|v| !w.row(v).0.is_empty()));
        assert!((0..base as usize).any(|v| w.row(v).0.contains(&2)));
    }

    #[test]
    fn a_soup_and_inward_winding_bind_as_the_welded_outward_mesh() {
        let s = crate::sample::make_sample(crate::sample::SampleKind::Arm, 2000).unwrap();
        let (p, t) = (s.skin.positions(), s.skin.triangles());
        let bw = s.skin.bindings().unwrap();
        let bind = |p: &[Vec3], t: &[[u32; 3]]| {
            crate::bind::bind_weights(&s.skeleton, bw, p, t, &BindOptions::default(), &|_| {})
                .unwrap()
                .0
        };
        let welded = bind(p, t);
        let soup_p: Vec<Vec3> = t.iter().flat_map(|t| t.map(|i| p[i as usize])).collect();
        let soup_t: Vec<[u32; 3]> = (0..t.len() as u32).map(|i| [3 * i, 3 * i + 1, 3 * i + 2]).collect();
        let soup = bind(&soup_p, &soup_t);
        for (i, tri) in t.iter().enumerate() {
            for (k, &corner) in tri.iter().enumerate() {
                assert_eq!(
                    soup.row(3 * i + k),
                    welded.row(corner as usize),
                    "triangle {i} corner {k}"
                );
            }
        }
        let inward: Vec<[u32; 3]> = t.iter().map(|t| [t[0], t[2], t[1]]).collect();
        let flipped = bind(p, &inward);
        for v in 0..p.len() {
            assert_eq!(flipped.row(v), welded.row(v), "vertex {v}");
        }
    }

    #[test]
    fn a_root_outside_the_solid_is_warned_about_and_one_inside_is_not() {
        use crate::model::{Joint, Pose, Skeleton, world_from_joint};
        let (p, t, _) = bar();
        let chain = |root: Vec3| {
            let skel = Skeleton::new(vec![
                Joint::new("master", None, root),
                Joint::new("hips", Some(0), Vec3::new(-1.0, 0.0, 0.0) - root),
                Joint::new("spine", Some(1), Vec3::X),
                Joint::new("chest", Some(2), Vec3::X),
            ])
            .unwrap();
            let bw = world_from_joint(&skel, &Pose::zero(&skel));
            let (_, report) = crate::bind::bind_weights(&skel, &bw, &p, &t, &BindOptions::default(), &|_| {}).unwrap();
            report.warnings
        };
        let below = chain(Vec3::new(0.0, -1.0, 0.0));
        assert!(
            below
                .iter()
                .any(|w| w.starts_with("joint 0 `master` looks like a control (a root")),
            "{below:?}"
        );
        let inside = chain(Vec3::new(-1.1, 0.0, 0.0));
        assert!(!inside.iter().any(|w| w.contains("(a root")), "{inside:?}");
    }
}
