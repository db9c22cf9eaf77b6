//! Plates: flat, open parts of a mesh (a wing, a fin, a hair card) and the bones that lie in them. No bone can be
//! inside a plate, whatever the ray parity test says, and a bone that lies in a plate is the plate's alone, even
//! where it also passes inside another part (the course wasp's wings lie folded through its abdomen).

use glam::{IVec3, Vec3};

use super::bones::Segment;
use super::voxel::Grid;

/// Bones that lie in a plate: for each part with no bone inside it (`has_inside` false: a wing, a fin, a hair
/// card), the joint that lies most in it, if at least half of its bone points (every half cell along its
/// segments) are in or beside (26-neighbours) a cell that the part's triangles overlap. Such a joint is the bone of
/// its plates alone, even where its bone also passes inside another part (the course wasp's wings lie folded
/// through its abdomen), and the plate takes it instead of the one bone nearest to it.
pub fn plate_bones(
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
pub fn plate_parts(positions: &[Vec3], triangles: &[[u32; 3]], parts: &(Vec<u32>, usize)) -> Vec<bool> {
    let n = positions.len();
    // Merged as the parts were found (`mesh::connected_parts` at the same tolerance).
    let diag = crate::model::skin::bounds(positions).map_or(1.0, |(lo, hi)| (hi - lo).length());
    let welded = crate::mesh::weld_map(positions, 1e-6 * diag);
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
