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
    let in_range = |t: &&[u32; 3]| t.iter().all(|&i| (i as usize) < n);
    // Each part's plane (its largest triangle's) and box.
    let mut plane: Vec<(f32, Vec3, Vec3)> = vec![(0.0, Vec3::ZERO, Vec3::ZERO); parts.1];
    for t in triangles.iter().filter(in_range) {
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
    let mut plate: Vec<bool> = (0..parts.1)
        .map(|c| plane[c].0 > 0.0 && off[c] <= 0.01 * (hi[c] - lo[c]).length())
        .collect();
    // PERF: only the flat parts' edges are sorted (most parts are not flat, and a 1M-vertex body's 6M edges took a
    // tenth of its bind). Coincident vertices are merged as the parts were found (`mesh::connected_parts` at the
    // same tolerance); vertices that merge are in one part, so merging the flat parts' vertices alone groups them
    // as merging the whole mesh would.
    if !plate.contains(&true) {
        return plate;
    }
    let mut local = vec![u32::MAX; n];
    let mut points = Vec::new();
    for (v, p) in positions.iter().enumerate() {
        if plate[parts.0[v] as usize] {
            local[v] = points.len() as u32;
            points.push(*p);
        }
    }
    let diag = crate::model::skin::bounds(positions).map_or(1.0, |(lo, hi)| (hi - lo).length());
    let welded = crate::mesh::weld_map(&points, 1e-6 * diag);
    let mut edges: Vec<(u32, u32, u32)> = Vec::new();
    for t in triangles.iter().filter(in_range) {
        let part = parts.0[t[0] as usize];
        if !plate[part as usize] {
            continue;
        }
        let w = t.map(|i| welded[local[i as usize] as usize]);
        if w[0] == w[1] || w[1] == w[2] || w[0] == w[2] {
            continue;
        }
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
    for (c, p) in plate.iter_mut().enumerate() {
        *p &= open[c];
    }
    plate
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole-mesh definition, as written before the flat test was moved first: every part's edges, merged over
    /// the whole mesh.
    fn plate_parts_reference(positions: &[Vec3], triangles: &[[u32; 3]], parts: &(Vec<u32>, usize)) -> Vec<bool> {
        let diag = crate::model::skin::bounds(positions).map_or(1.0, |(lo, hi)| (hi - lo).length());
        let welded = crate::mesh::weld_map(positions, 1e-6 * diag);
        let mut edges = Vec::new();
        for t in triangles {
            let w = t.map(|i| welded[i as usize]);
            if w[0] != w[1] && w[1] != w[2] && w[0] != w[2] {
                for k in 0..3 {
                    edges.push((
                        parts.0[t[0] as usize],
                        w[k].min(w[(k + 1) % 3]),
                        w[k].max(w[(k + 1) % 3]),
                    ));
                }
            }
        }
        edges.sort_unstable();
        let mut open = vec![false; parts.1];
        for run in edges.chunk_by(|a, b| a == b) {
            open[run[0].0 as usize] |= run.len() != 2;
        }
        let mut flat = vec![true; parts.1];
        let mut best = vec![(0.0f32, Vec3::ZERO, Vec3::ZERO); parts.1];
        for t in triangles {
            let [a, b, c] = t.map(|i| positions[i as usize]);
            let x = (b - a).cross(c - a);
            let p = &mut best[parts.0[t[0] as usize] as usize];
            if x.length() > p.0 {
                *p = (x.length(), x.normalize(), a);
            }
        }
        for c in 0..parts.1 {
            let vs: Vec<Vec3> = (0..positions.len())
                .filter(|&v| parts.0[v] as usize == c)
                .map(|v| positions[v])
                .collect();
            let (lo, hi) = crate::model::skin::bounds(&vs).unwrap();
            let off = vs
                .iter()
                .map(|p| (*p - best[c].2).dot(best[c].1).abs())
                .fold(0.0, f32::max);
            flat[c] = best[c].0 > 0.0 && off <= 0.01 * (hi - lo).length();
        }
        (0..parts.1).map(|c| open[c] && flat[c]).collect()
    }

    /// A grid of `n` by `n` quads over the parallelogram `at + s u + t v` (s, t in 0..1), its vertices shared
    /// between quads, or each quad with its own (coincident copies, as a flat-shaded export writes them).
    fn grid(p: &mut Vec<Vec3>, t: &mut Vec<[u32; 3]>, at: Vec3, (u, v): (Vec3, Vec3), n: u32, split: bool) {
        let point = |i: u32, j: u32| at + u * (i as f32 / n as f32) + v * (j as f32 / n as f32);
        let base = p.len() as u32;
        if !split {
            p.extend(
                (0..=n)
                    .flat_map(|j| (0..=n).map(move |i| (i, j)))
                    .map(|(i, j)| point(i, j)),
            );
        }
        for j in 0..n {
            for i in 0..n {
                let [a, b, c, d] = if split {
                    let k = p.len() as u32;
                    p.extend([point(i, j), point(i + 1, j), point(i + 1, j + 1), point(i, j + 1)]);
                    [k, k + 1, k + 2, k + 3]
                } else {
                    let id = |i: u32, j: u32| base + j * (n + 1) + i;
                    [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)]
                };
                t.extend([[a, b, c], [a, c, d]]);
            }
        }
    }

    /// A closed box of six grids, joined where their rims meet (coincident vertices).
    fn cuboid(p: &mut Vec<Vec3>, t: &mut Vec<[u32; 3]>, at: Vec3, size: Vec3, n: u32) {
        let (x, y, z) = (Vec3::X * size.x, Vec3::Y * size.y, Vec3::Z * size.z);
        for (o, u, v) in [
            (at, y, x),
            (at + z, x, y),
            (at, x, z),
            (at + y, z, x),
            (at, z, y),
            (at + x, y, z),
        ] {
            grid(p, t, o, (u, v), n, false);
        }
    }

    fn plates_of(p: &[Vec3], t: &[[u32; 3]]) -> (Vec<bool>, Vec<bool>) {
        let diag = crate::model::skin::bounds(p).map_or(1.0, |(lo, hi)| (hi - lo).length());
        let parts = crate::mesh::connected_parts(p, t, 1e-6 * diag);
        let mut by_first = vec![0usize; parts.1];
        for v in (0..p.len()).rev() {
            by_first[parts.0[v] as usize] = v;
        }
        let mut order: Vec<usize> = (0..parts.1).collect();
        order.sort_by_key(|&c| by_first[c]);
        let (fast, slow) = (plate_parts(p, t, &parts), plate_parts_reference(p, t, &parts));
        (
            order.iter().map(|&c| fast[c]).collect(),
            order.iter().map(|&c| slow[c]).collect(),
        )
    }

    #[test]
    fn open_flat_sheets_are_plates_and_closed_or_thick_parts_are_not() {
        let (mut p, mut t) = (Vec::new(), Vec::new());
        let flat = (Vec3::X * 4.0, Vec3::Y * 4.0);
        grid(&mut p, &mut t, Vec3::ZERO, flat, 4, false); // a wing
        grid(&mut p, &mut t, Vec3::new(10.0, 0.0, 0.0), flat, 4, true); // a wing written flat-shaded
        cuboid(&mut p, &mut t, Vec3::new(20.0, 0.0, 0.0), Vec3::splat(4.0), 3); // a box
        cuboid(&mut p, &mut t, Vec3::new(30.0, 0.0, 0.0), Vec3::new(4.0, 4.0, 0.01), 3); // a closed pillow, flat
        let (fast, slow) = plates_of(&p, &t);
        assert_eq!(fast, [true, true, false, false]);
        assert_eq!(fast, slow);
    }

    #[test]
    fn a_mesh_with_no_flat_part_has_no_plate_and_the_rule_agrees_with_the_whole_mesh_one() {
        // No flat part: nothing is a plate (the edges are never looked at).
        let (mut p, mut t) = (Vec::new(), Vec::new());
        cuboid(&mut p, &mut t, Vec3::ZERO, Vec3::new(1.0, 2.0, 3.0), 2);
        let bent = p.len();
        grid(
            &mut p,
            &mut t,
            Vec3::new(10.0, 0.0, 0.0),
            (Vec3::X * 4.0, Vec3::Y * 4.0),
            4,
            true,
        );
        // A sheet that bends out of its plane by more than 1% of its size is no plate.
        for q in &mut p[bent..] {
            q.z = 0.1 * (q.x - 10.0) * (q.x - 10.0);
        }
        let (fast, slow) = plates_of(&p, &t);
        assert_eq!((fast.clone(), slow), (vec![false, false], vec![false, false]));
        // Mixed parts, some sheets turned, sizes varied: the same answer as the whole-mesh rule.
        for k in 0..8u32 {
            let at = Vec3::new(8.0 * k as f32, 10.0, 0.0);
            let turn = glam::Quat::from_rotation_y(0.3 * k as f32);
            let size = 1.0 + k as f32 * 0.5;
            match k % 3 {
                0 => grid(
                    &mut p,
                    &mut t,
                    at,
                    (turn * Vec3::X * size, turn * Vec3::Y),
                    1 + k,
                    k % 2 == 0,
                ),
                1 => cuboid(&mut p, &mut t, at, Vec3::new(size, 1.0, 0.2 * k as f32), 2),
                _ => {
                    grid(&mut p, &mut t, at, (Vec3::X * size, Vec3::Z * size), 3, true);
                    t.pop(); // a sheet with a hole is still open
                }
            }
        }
        let (fast, slow) = plates_of(&p, &t);
        assert_eq!(fast, slow);
        assert_eq!(fast.iter().filter(|&&x| x).count(), 5); // three sheets and two with holes
    }
}
