//! The line, volume and hybrid methods: steps 1 to 5 of the `bind` module's doc for every vertex, grid cell by
//! grid cell. A cell's vertices are near one another, so the segments that can be near bones of any of them are
//! found once per cell (and narrowed per few vertices), and the visibility tests of a few vertices are traversed
//! together. The cell pass is one of the hot loops compiled twice (`crate::simd`).

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use glam::{Mat4, Vec3};
use rayon::prelude::*;

use super::bones::Segment;
use super::falloff::{MIN_WEIGHT, blend_half, falloff, limit_and_normalise, line_weights};
use super::nearest::{BoneIndex, Candidate, CellGrid, Scratch, near_bones_naive};
use super::parts::PartBones;
use super::run::{deforming_segments, stage};
use super::surface::{Surface, VISIBILITY_EPS};
use super::volumes::{Volumes, build_volumes};
use super::{BindMethod, BindOptions, BindReport};
use crate::model::{Row, Skeleton, Weights};
use crate::spatial::SegmentEntry;
use crate::spatial::bvh::PACKET;

/// The weights of `positions` by the line, volume or hybrid method of `opts` (checked by
/// [`super::bind_weights`]); stages and counts go to `report`, the fraction of vertices done to `progress`.
pub(super) fn bind(
    skel: &Skeleton,
    bind_world: &[Mat4],
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    opts: &BindOptions,
    progress: &(dyn Fn(f32) + Sync),
    report: &mut BindReport,
) -> Weights {
    // The vertex grid for the weights stage needs only the positions: it is bucketed on the other thread while
    // the (partly sequential) welding runs.
    let (surface, grid) = rayon::join(
        || mesh_surface(positions, triangles, opts, report),
        || CellGrid::new(positions, 64),
    );
    let occluder = surface.as_ref().filter(|_| opts.visibility);

    let t = Instant::now();
    let (segments, part_boxes) = deforming_segments(skel, bind_world, positions, surface.as_ref(), opts, report);
    let index = BoneIndex::new(&segments);
    stage("bones", t, report);

    let parts = match (surface.as_ref().filter(|_| opts.parts), part_boxes.as_ref()) {
        (Some(surface), Some(boxes)) => {
            let t = Instant::now();
            let p = PartBones::new(&index, positions, surface, boxes, skel.len(), &[]);
            stage("part bones", t, report);
            Some(p)
        }
        _ => None,
    };

    let volumes = if opts.method == BindMethod::Line {
        None
    } else {
        let t = Instant::now();
        let v = build_volumes(skel, bind_world, &segments, &index, positions, opts);
        report.volume_radii = v.radius.clone();
        stage("volumes", t, report);
        Some(v)
    };

    let t = Instant::now();
    let ctx = CellContext {
        grid: &grid,
        index: &index,
        positions,
        opts,
        parts: parts.as_ref(),
        surface: surface.as_ref(),
        occluder,
        volumes: volumes.as_ref(),
    };
    let (cells, counts) = ctx.weigh_cells(progress);
    stage("weights", t, report);

    let t = Instant::now();
    let weights = assemble(&grid, &cells, positions.len());
    drop(cells);
    stage("assemble", t, report);
    report.hidden_candidates = counts.hidden;
    report.vertices_nearest_elsewhere = counts.elsewhere;
    report.vertices_all_hidden = counts.all_hidden;
    report.vertices_in_no_volume = if volumes.is_some() { counts.no_volume } else { 0 };
    weights
}

/// The surface the options need (visibility, leaves extended to it, parts): a BVH per connected part when the
/// parts rule is on, else one for the whole mesh; `None` when no option needs it.
fn mesh_surface(
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    opts: &BindOptions,
    report: &mut BindReport,
) -> Option<Surface> {
    (opts.visibility || opts.leaf_to_surface || opts.parts).then(|| {
        let t = Instant::now();
        let part = opts.parts.then(|| {
            let diag = crate::model::skin::bounds(positions).map_or(1.0, |(lo, hi)| (hi - lo).length());
            crate::mesh::connected_parts(positions, triangles, 1e-6 * diag)
        });
        if opts.parts {
            stage("mesh parts", t, report);
        }
        let t = Instant::now();
        let s = Surface::new(positions, triangles, part);
        stage("surface bvh", t, report);
        report.parts = s.part_count();
        s
    })
}

/// What the weights of every grid cell are computed from (see [`bind`]).
struct CellContext<'a> {
    grid: &'a CellGrid,
    index: &'a BoneIndex,
    positions: &'a [Vec3],
    opts: &'a BindOptions,
    parts: Option<&'a PartBones>,
    surface: Option<&'a Surface>,
    occluder: Option<&'a Surface>,
    volumes: Option<&'a Volumes>,
}

/// What the weights of one cell, or of all, counted, for the report.
#[derive(Default)]
struct CellCounts {
    hidden: usize,
    all_hidden: usize,
    no_volume: usize,
    elsewhere: usize,
}

impl CellContext<'_> {
    /// Every cell's rows, in parallel, and their counts summed; `progress` is told at every 64th of the vertices.
    fn weigh_cells(&self, progress: &(dyn Fn(f32) + Sync)) -> (Vec<CellOut>, CellCounts) {
        let vertices = self.positions.len().max(1);
        let done = AtomicUsize::new(0);
        let hidden = AtomicUsize::new(0);
        let all_hidden = AtomicUsize::new(0);
        let elsewhere = AtomicUsize::new(0);
        let no_volume = AtomicUsize::new(0);
        let cells: Vec<CellOut> = (0..self.grid.cells())
            .into_par_iter()
            .map_init(
                || (Scratch::default(), CellScratch::default()),
                |(scratch, cs), ci| {
                    let (out, counts) = self.weigh(ci, scratch, cs);
                    hidden.fetch_add(counts.hidden, Ordering::Relaxed);
                    all_hidden.fetch_add(counts.all_hidden, Ordering::Relaxed);
                    no_volume.fetch_add(counts.no_volume, Ordering::Relaxed);
                    elsewhere.fetch_add(counts.elsewhere, Ordering::Relaxed);
                    let cell = self.grid.cell(ci).len();
                    let n = done.fetch_add(cell, Ordering::Relaxed) + cell;
                    if n * 64 / vertices != (n - cell) * 64 / vertices {
                        progress(n as f32 / vertices as f32);
                    }
                    out
                },
            )
            .collect();
        let counts = CellCounts {
            hidden: hidden.into_inner(),
            all_hidden: all_hidden.into_inner(),
            no_volume: no_volume.into_inner(),
            elsewhere: elsewhere.into_inner(),
        };
        (cells, counts)
    }

    crate::simd::two_copies! {
        /// The weights of grid cell `ci`'s vertices: near bones, visibility, weights (the `bind` module's doc),
        /// compiled twice (`crate::simd`).
        fn weigh(&self, ci: usize, scratch: &mut Scratch, cs: &mut CellScratch) -> (CellOut, CellCounts)
            = Self::weigh_v3 / Self::weigh_portable
    }

    /// The body of [`Self::weigh`]; its three phases are `#[inline(always)]` too, so that both copies hold them.
    #[inline(always)]
    fn weigh_portable(&self, ci: usize, scratch: &mut Scratch, cs: &mut CellScratch) -> (CellOut, CellCounts) {
        let cell = self.grid.cell(ci);
        self.index.cell_segments(
            cell.iter().map(|&v| self.positions[v as usize]),
            self.opts.blend_ratio,
            &mut cs.cell_segments,
        );
        let mut counts = CellCounts::default();
        self.near_bones_of_cell(cell, scratch, cs, &mut counts);
        self.hide_near_bones_of_cell(cell, cs);
        let out = self.rows_of_cell(cell, scratch, cs, &mut counts);
        (out, counts)
    }

    /// Phase 1: each vertex's near bones (among its part's bones, by end distance when the options say so) as one
    /// run of `cs.cell_near_bones` (`cs.vertex_runs`), with their closest points and line weights.
    #[inline(always)]
    fn near_bones_of_cell(&self, cell: &[u32], scratch: &mut Scratch, cs: &mut CellScratch, counts: &mut CellCounts) {
        let CellContext {
            index,
            positions,
            opts,
            parts,
            surface,
            ..
        } = *self;
        let CellScratch {
            cell_segments,
            group_segments,
            group_segment_dists,
            group_points,
            vertex_near_bones,
            cell_near_bones,
            closest_points,
            line_falloffs,
            vertex_runs,
            part_segments,
            ..
        } = cs;
        cell_near_bones.clear();
        closest_points.clear();
        line_falloffs.clear();
        vertex_runs.clear();
        for (k, &v) in cell.iter().enumerate() {
            if k % NEAR_GROUP == 0 {
                // The cell's segments narrowed to those near the next few vertices.
                group_points.clear();
                group_points.extend(cell[k..].iter().take(NEAR_GROUP).map(|&v| positions[v as usize]));
                index.narrow_segments(
                    group_points,
                    opts.blend_ratio,
                    cell_segments,
                    group_segment_dists,
                    group_segments,
                );
            }
            let v = v as usize;
            let p = positions[v];
            let own_part = parts.and(surface).map(|s| s.part_of(v));
            index.near_bones_among(p, group_segments, opts.blend_ratio, scratch, vertex_near_bones);
            if let (Some(parts), Some(part)) = (parts, own_part) {
                if vertex_near_bones.first().is_some_and(|c| !parts.allows(part, c.joint)) {
                    // The nearest bone is another part's: take the near bones among this part's own.
                    counts.elsewhere += 1;
                    let own_segments = part_segments.of(part, index, parts);
                    near_bones_naive(p, own_segments, opts.blend_ratio, scratch, vertex_near_bones);
                } else {
                    vertex_near_bones.retain(|c| parts.allows(part, c.joint));
                }
            }
            if opts.end_distance && vertex_near_bones.len() > 1 {
                index.to_end_distances(p, vertex_near_bones);
            }
            // Bones whose line weight would be under 1% of the nearest bone's add only noise: drop them before the
            // (costly) visibility test. The weights are kept: they are the line weights of a vertex none of whose
            // near bones is hidden.
            let start = cell_near_bones.len();
            if let Some(d1) = vertex_near_bones.first().map(|c| c.dist) {
                for c in vertex_near_bones.iter() {
                    let weight = falloff(c.dist, d1, opts.blend_ratio, opts.falloff_power);
                    if weight >= MIN_WEIGHT {
                        cell_near_bones.push(*c);
                        closest_points.push(c.closest);
                        line_falloffs.push(weight);
                    }
                }
            }
            vertex_runs.push(start..cell_near_bones.len());
        }
    }

    /// Phase 2, the visibility tests: whether the surface hides each of `cs.cell_near_bones` (`cs.near_hidden`).
    /// Every near bone is tested, the nearest too: beside a hanging arm, a torso vertex is nearer the arm's bone
    /// than the spine, and the arm's surface hides it. The segments of a few neighbouring vertices (consecutive in
    /// the cell, same part) lie in a small box: they are traversed together (one fetch of the nodes and leaves they
    /// share), beginning at the tree's boxes that meet that box, found once (`segment_entry`).
    #[inline(always)]
    fn hide_near_bones_of_cell(&self, cell: &[u32], cs: &mut CellScratch) {
        let positions = self.positions;
        let CellScratch {
            cell_near_bones,
            closest_points,
            vertex_runs,
            near_hidden,
            traversal_entry,
            packet,
            ..
        } = cs;
        near_hidden.clear();
        near_hidden.resize(cell_near_bones.len(), false);
        let Some(s) = self.occluder else { return };
        let mut next = 0;
        while next < cell.len() {
            let (group, n, total) = next_visibility_group(cell, vertex_runs, s, &mut next);
            let group = &group[..n];
            let Some(bvh) = group.first().and_then(|&i| s.tree_of(cell[i] as usize)) else {
                continue;
            };
            let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
            for &i in group {
                let ends = &closest_points[vertex_runs[i].clone()];
                for &e in std::iter::once(&positions[cell[i] as usize]).chain(ends) {
                    (lo, hi) = (lo.min(e), hi.max(e));
                }
            }
            bvh.segment_entry(lo, hi, 1.0, traversal_entry);
            // The group's segments gathered (vertices with one near bone between them have runs of their own in
            // `cell_near_bones`), tested together, and the answers put back.
            packet.clear();
            for &i in group {
                let (v, r) = (cell[i], vertex_runs[i].clone());
                packet.from.extend(std::iter::repeat_n(v, r.len()));
                packet
                    .origins
                    .extend(std::iter::repeat_n(positions[v as usize], r.len()));
                packet.ends.extend_from_slice(&closest_points[r]);
            }
            packet.hidden.resize(total, false);
            bvh.packet_hit_from_vertices_within(
                traversal_entry,
                &packet.from,
                &packet.origins,
                &packet.ends,
                VISIBILITY_EPS,
                &mut packet.hidden,
            );
            let mut at = 0;
            for &i in group {
                let r = vertex_runs[i].clone();
                near_hidden[r.clone()].copy_from_slice(&packet.hidden[at..at + r.len()]);
                at += r.len();
            }
        }
    }

    /// Phase 3, each vertex's weights from its near bones that the surface does not hide (the line weights of
    /// phase 1 when none is), blended with or replaced by its volume depths, limited and normalised: the cell's
    /// rows.
    #[inline(always)]
    fn rows_of_cell(
        &self,
        cell: &[u32],
        scratch: &mut Scratch,
        cs: &mut CellScratch,
        counts: &mut CellCounts,
    ) -> CellOut {
        let CellContext {
            positions,
            opts,
            occluder,
            volumes,
            ..
        } = *self;
        let CellScratch {
            cell_near_bones,
            line_falloffs,
            vertex_runs,
            near_hidden,
            visible_bones,
            vertex_weights,
            volume_depths,
            bones_within,
            ..
        } = cs;
        let mut out = CellOut::with_capacity(cell.len());
        for (&v, r) in cell.iter().zip(vertex_runs.iter()) {
            let v = v as usize;
            let p = positions[v];
            let visible = |a: Vec3, b: Vec3| occluder.is_none_or(|s| !s.hides(v, a, b));
            let near_bones = &cell_near_bones[r.clone()];
            let hidden_here = near_hidden[r.clone()].iter().filter(|h| **h).count();
            if hidden_here == 0 {
                // The weights of phase 1 (what `line_weights` gives for these near bones).
                vertex_weights.clear();
                vertex_weights.extend(
                    near_bones
                        .iter()
                        .zip(&line_falloffs[r.clone()])
                        .map(|(c, &x)| (c.joint, x)),
                );
            } else {
                visible_bones.clear();
                visible_bones.extend(
                    near_bones
                        .iter()
                        .zip(&near_hidden[r.clone()])
                        .filter(|(_, h)| !**h)
                        .map(|(c, _)| *c),
                );
                counts.hidden += hidden_here;
                if visible_bones.is_empty() {
                    // All hidden: the nearest is kept, so every vertex is weighted.
                    counts.all_hidden += 1;
                    visible_bones.push(near_bones[0]);
                }
                line_weights(visible_bones, opts.blend_ratio, opts.falloff_power, vertex_weights);
            }
            if let Some(vol) = volumes {
                vol.depths(p, scratch, bones_within, &visible, volume_depths);
                if volume_depths.is_empty() {
                    counts.no_volume += 1;
                } else if opts.method == BindMethod::Volume {
                    std::mem::swap(vertex_weights, volume_depths);
                } else {
                    blend_half(vertex_weights, volume_depths);
                }
            }
            limit_and_normalise(vertex_weights, opts.max_influences, opts.rigid);
            out.push(vertex_weights);
        }
        out
    }
}

/// From the cell's vertex `next` on, the next few vertices with more than one near bone, all in one part, whose
/// segments fit a packet: their places in the cell (the first `n`), `n`, and their segments' count. `next` moves
/// past the vertices looked at.
#[inline(always)]
fn next_visibility_group(
    cell: &[u32],
    vertex_runs: &[Range<usize>],
    surface: &Surface,
    next: &mut usize,
) -> ([usize; VISIBILITY_GROUP], usize, usize) {
    let mut group = [0usize; VISIBILITY_GROUP];
    let (mut n, mut part, mut total) = (0, None, 0);
    while *next < cell.len() && n < VISIBILITY_GROUP {
        let len = vertex_runs[*next].len();
        if len > 1 {
            let p = surface.part_of(cell[*next] as usize);
            if part.is_some_and(|q| q != p) || (n > 0 && total + len > PACKET) {
                break;
            }
            part = Some(p);
            group[n] = *next;
            n += 1;
            total += len;
        }
        *next += 1;
    }
    (group, n, total)
}

/// Per-thread buffers for the weights of one grid cell's vertices (reused from cell to cell).
#[derive(Default)]
struct CellScratch {
    /// Segments that can hold a near bone of one of the cell's vertices.
    cell_segments: Vec<u32>,
    /// Those that can hold one of a group of [`NEAR_GROUP`] of them, those segments' distances from the group's
    /// centre, and the group's positions.
    group_segments: Vec<u32>,
    group_segment_dists: Vec<f32>,
    group_points: Vec<Vec3>,
    /// One vertex's near bones.
    vertex_near_bones: Vec<Candidate>,
    /// All the cell's near bones, vertex after vertex (`vertex_runs`), with their closest points and their line
    /// weights among their vertex's near bones.
    cell_near_bones: Vec<Candidate>,
    closest_points: Vec<Vec3>,
    line_falloffs: Vec<f32>,
    vertex_runs: Vec<Range<usize>>,
    /// Whether the surface hides each of `cell_near_bones`.
    near_hidden: Vec<bool>,
    /// Where the traversals of a group of vertices begin.
    traversal_entry: SegmentEntry,
    /// The segments of a part's bones.
    part_segments: PartSegments,
    /// A visibility group's segments and their answers.
    packet: Packet,
    /// One vertex's near bones that the surface does not hide.
    visible_bones: Vec<Candidate>,
    /// One vertex's weights: line, then blended with or replaced by the volume depths, then limited.
    vertex_weights: Row,
    /// One vertex's depths in the volumes that hold it, and the bones within the largest radius of it.
    volume_depths: Vec<(u16, f32)>,
    bones_within: Vec<Candidate>,
}

/// The segments of one part's bones, kept while the cell's vertices stay on that part.
#[derive(Default)]
struct PartSegments {
    part: Option<u32>,
    segments: Vec<Segment>,
}

impl PartSegments {
    /// The segments of the bones `parts` allows in `part`, gathered again only when the part changes.
    #[inline(always)]
    fn of(&mut self, part: u32, index: &BoneIndex, parts: &PartBones) -> &[Segment] {
        if self.part != Some(part) {
            self.part = Some(part);
            self.segments.clear();
            self.segments
                .extend(index.segments().iter().filter(|s| parts.allows(part, s.joint)).copied());
        }
        &self.segments
    }
}

/// The segments of a visibility group, each one's vertex, origin (that vertex's position) and end, and whether
/// the surface hides it.
#[derive(Default)]
struct Packet {
    from: Vec<u32>,
    origins: Vec<Vec3>,
    ends: Vec<Vec3>,
    hidden: Vec<bool>,
}

impl Packet {
    fn clear(&mut self) {
        self.from.clear();
        self.origins.clear();
        self.ends.clear();
        self.hidden.clear();
    }
}

/// Neighbouring vertices whose near bones are sought among one narrowed list of segments (chosen on the creature
/// sample).
const NEAR_GROUP: usize = 16;

/// Neighbouring vertices whose visibility segments are tested in one traversal, begun at one set of entry boxes
/// (chosen on the creature sample among 4 to 32, with entry boxes of 0.5 to 4 times the group's box: 12 at the
/// group's box is fastest, 16 as fast within the noise).
const VISIBILITY_GROUP: usize = 12;

/// One grid cell's rows, in the cell's vertex order: each row's length, then the rows' joints and weights.
struct CellOut {
    counts: Vec<u32>,
    joints: Vec<u16>,
    values: Vec<f32>,
}

impl CellOut {
    #[inline(always)]
    fn with_capacity(vertices: usize) -> Self {
        Self {
            counts: Vec::with_capacity(vertices),
            joints: Vec::with_capacity(vertices * 2),
            values: Vec::with_capacity(vertices * 2),
        }
    }

    /// Append the next vertex's row.
    #[inline(always)]
    fn push(&mut self, row: &[(u16, f32)]) {
        self.counts.push(row.len() as u32);
        for &(j, x) in row {
            self.joints.push(j);
            self.values.push(x);
        }
    }
}

/// The cells' rows gathered into vertex order. Rows from [`limit_and_normalise`] are valid already (positive,
/// no repeats, summing to 1), so they are copied as they are, in parallel (debug builds check them).
fn assemble(grid: &CellGrid, cells: &[CellOut], vertices: usize) -> Weights {
    // Each vertex's row: (cell, start in that cell's arrays, count).
    let mut at = vec![(0u32, 0u32, 0u32); vertices];
    for (ci, out) in cells.iter().enumerate() {
        let mut start = 0u32;
        for (&v, &count) in grid.cell(ci).iter().zip(&out.counts) {
            at[v as usize] = (ci as u32, start, count);
            start += count;
        }
    }
    let mut offsets = Vec::with_capacity(vertices + 1);
    offsets.push(0u32);
    let mut total = 0u32;
    for &(_, _, count) in &at {
        total += count;
        offsets.push(total);
    }
    let mut joints = vec![0u16; total as usize];
    let mut values = vec![0f32; total as usize];
    // Blocks of vertices, each with its own run of the output arrays.
    const BLOCK: usize = 8192;
    let mut blocks = Vec::with_capacity(vertices.div_ceil(BLOCK));
    let (mut js, mut ws) = (joints.as_mut_slice(), values.as_mut_slice());
    for v0 in (0..vertices).step_by(BLOCK) {
        let v1 = (v0 + BLOCK).min(vertices);
        let len = (offsets[v1] - offsets[v0]) as usize;
        let (j, j_rest) = std::mem::take(&mut js).split_at_mut(len);
        let (w, w_rest) = std::mem::take(&mut ws).split_at_mut(len);
        (js, ws) = (j_rest, w_rest);
        blocks.push((v0..v1, j, w));
    }
    blocks.into_par_iter().for_each(|(range, js, ws)| {
        let mut k = 0;
        for &(ci, start, count) in &at[range] {
            let c = &cells[ci as usize];
            let r = start as usize..(start + count) as usize;
            let n = count as usize;
            js[k..k + n].copy_from_slice(&c.joints[r.clone()]);
            ws[k..k + n].copy_from_slice(&c.values[r]);
            k += n;
        }
    });
    Weights::from_valid(offsets, joints, values)
}
