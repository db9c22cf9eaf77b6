//! A solid voxelisation of a mesh, for the geodesic binding ([`super::geodesic`]).
//!
//! The grid covers the mesh's box with one empty cell of margin on every side; its cells are cubes, `max_side`
//! of them along the longest side. A cell is **solid** when any of these holds:
//! - a triangle overlaps it (separating-axis test of the triangle against the cell's cube), or a vertex lies in
//!   it (a vertex that is in no triangle still gets a cell);
//! - it cannot be reached from the grid's margin through cells that no triangle overlaps (6-connected flood):
//!   the inside of every closed surface, and the space between layers (a shirt over a body), whatever the
//!   winding;
//! - at least two of the three axis-parallel lines through its centre say it is inside by the nonzero winding
//!   rule, each connected part's triangles counted with the orientation that gives the part a positive volume
//!   (so a part wound inward counts as one wound outward). This fills the inside of surfaces with holes wider
//!   than a cell, where the flood leaks in; the vote of two axes out of three keeps a hole that one axis sees
//!   through from emptying a row.
//!
//! The margin is never solid, so a solid cell's 26 neighbours are all in the grid.

use glam::{IVec3, Vec3};
use rayon::prelude::*;

/// A grid of cubic cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// The corner of cell (0, 0, 0).
    pub origin: Vec3,
    /// The side of a cell.
    pub h: f32,
    pub dims: [usize; 3],
}

impl Grid {
    /// The grid over the box `lo..hi`, `max_side` cells (at least 5) along its longest side, with a margin of at
    /// least one and a half cells on every side.
    pub fn new(lo: Vec3, hi: Vec3, max_side: usize) -> Self {
        let max_side = max_side.max(5);
        let extent = (hi - lo).max(Vec3::ZERO);
        let longest = extent.max_element();
        let h = if longest > 0.0 && longest.is_finite() {
            longest / (max_side - 4) as f32
        } else {
            1.0
        };
        let dims = extent
            .to_array()
            .map(|e| (((e / h).floor() as usize) + 4).min(max_side));
        // Centred on the box, so that the box's faces do not fall on cell boundaries (a face there would mark the
        // cells on both sides).
        let size = Vec3::new(dims[0] as f32, dims[1] as f32, dims[2] as f32) * h;
        Self {
            origin: (lo + hi - size) * 0.5,
            h,
            dims,
        }
    }

    pub fn len(&self) -> usize {
        self.dims[0] * self.dims[1] * self.dims[2]
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn index(&self, c: IVec3) -> usize {
        c.x as usize + self.dims[0] * (c.y as usize + self.dims[1] * c.z as usize)
    }

    #[inline]
    pub fn coords(&self, i: usize) -> IVec3 {
        let x = i % self.dims[0];
        let yz = i / self.dims[0];
        IVec3::new(x as i32, (yz % self.dims[1]) as i32, (yz / self.dims[1]) as i32)
    }

    #[inline]
    pub fn contains(&self, c: IVec3) -> bool {
        c.cmpge(IVec3::ZERO).all()
            && (c.x as usize) < self.dims[0]
            && (c.y as usize) < self.dims[1]
            && (c.z as usize) < self.dims[2]
    }

    /// The cell holding `p`, clamped into the grid.
    #[inline]
    pub fn cell_of(&self, p: Vec3) -> IVec3 {
        let max = IVec3::new(
            self.dims[0] as i32 - 1,
            self.dims[1] as i32 - 1,
            self.dims[2] as i32 - 1,
        );
        ((p - self.origin) / self.h).floor().as_ivec3().clamp(IVec3::ZERO, max)
    }

    #[inline]
    pub fn center(&self, c: IVec3) -> Vec3 {
        self.origin + (c.as_vec3() + 0.5) * self.h
    }

    fn on_margin(&self, c: IVec3) -> bool {
        (0..3).any(|a| c[a] == 0 || c[a] as usize + 1 == self.dims[a])
    }
}

/// Which cells are solid (see the module doc), one flag per cell.
pub fn solid_cells(grid: &Grid, positions: &[Vec3], triangles: &[[u32; 3]], parts: &(Vec<u32>, usize)) -> Vec<bool> {
    let n = positions.len();
    let tris: Vec<[Vec3; 3]> = triangles
        .iter()
        .filter(|t| t.iter().all(|&i| (i as usize) < n))
        .map(|t| t.map(|i| positions[i as usize]))
        .collect();
    let surface = surface_cells(grid, positions, &tris);
    let (outside, votes) = rayon::join(
        || outside_cells(grid, &surface),
        || {
            let orient = part_orientation(positions, triangles, parts);
            let sign: Vec<f32> = triangles
                .iter()
                .filter(|t| t.iter().all(|&i| (i as usize) < n))
                .map(|t| orient[parts.0[t[0] as usize] as usize])
                .collect();
            winding_votes(grid, &tris, &sign)
        },
    );
    let mut solid: Vec<bool> = (0..grid.len())
        .into_par_iter()
        .map(|i| surface[i] || !outside[i] || votes[i] >= 2)
        .collect();
    for (i, s) in solid.iter_mut().enumerate() {
        if *s && grid.on_margin(grid.coords(i)) {
            *s = false;
        }
    }
    solid
}

/// Cells that a triangle overlaps or a vertex lies in.
pub fn surface_cells(grid: &Grid, positions: &[Vec3], tris: &[[Vec3; 3]]) -> Vec<bool> {
    let hits: Vec<Vec<u32>> = tris
        .par_chunks(4096)
        .map(|chunk| {
            let mut out = Vec::new();
            for t in chunk {
                triangle_cells(grid, t, &mut out);
            }
            out
        })
        .collect();
    let mut surface = vec![false; grid.len()];
    for i in hits.iter().flatten() {
        surface[*i as usize] = true;
    }
    for &p in positions {
        surface[grid.index(grid.cell_of(p))] = true;
    }
    surface
}

/// Push the cells that triangle `t` overlaps.
pub fn triangle_cells(grid: &Grid, t: &[Vec3; 3], out: &mut Vec<u32>) {
    let lo = grid.cell_of(t[0].min(t[1]).min(t[2]));
    let hi = grid.cell_of(t[0].max(t[1]).max(t[2]));
    for z in lo.z..=hi.z {
        for y in lo.y..=hi.y {
            for x in lo.x..=hi.x {
                let c = IVec3::new(x, y, z);
                if lo == hi || triangle_meets_box(t, grid.center(c), grid.h * 0.5 * (1.0 + 1e-4)) {
                    out.push(grid.index(c) as u32);
                }
            }
        }
    }
}

/// Whether triangle `t` meets the cube of centre `c` and half-side `r` (separating axes: the box's three, the
/// triangle's normal and the nine edge-by-axis cross products; Akenine-Möller, "Fast 3D triangle-box overlap
/// testing", 2001).
pub fn triangle_meets_box(t: &[Vec3; 3], c: Vec3, r: f32) -> bool {
    let v = [t[0] - c, t[1] - c, t[2] - c];
    let separated = |axis: Vec3| {
        let p = [v[0].dot(axis), v[1].dot(axis), v[2].dot(axis)];
        let reach = r * (axis.x.abs() + axis.y.abs() + axis.z.abs());
        p[0].min(p[1]).min(p[2]) > reach || p[0].max(p[1]).max(p[2]) < -reach
    };
    for a in [Vec3::X, Vec3::Y, Vec3::Z] {
        if separated(a) {
            return false;
        }
    }
    let e = [v[1] - v[0], v[2] - v[1], v[0] - v[2]];
    if separated(e[0].cross(e[1])) {
        return false;
    }
    for edge in e {
        for a in [Vec3::X, Vec3::Y, Vec3::Z] {
            let axis = edge.cross(a);
            if axis.length_squared() > 0.0 && separated(axis) {
                return false;
            }
        }
    }
    true
}

/// Cells reached from the margin through cells that are not `surface` (6-connected).
fn outside_cells(grid: &Grid, surface: &[bool]) -> Vec<bool> {
    let mut outside = vec![false; grid.len()];
    let mut stack: Vec<u32> = Vec::new();
    for i in 0..grid.len() {
        if grid.on_margin(grid.coords(i)) && !surface[i] {
            outside[i] = true;
            stack.push(i as u32);
        }
    }
    const STEPS: [IVec3; 6] = [IVec3::X, IVec3::NEG_X, IVec3::Y, IVec3::NEG_Y, IVec3::Z, IVec3::NEG_Z];
    while let Some(i) = stack.pop() {
        let c = grid.coords(i as usize);
        for s in STEPS {
            let n = c + s;
            if grid.contains(n) {
                let ni = grid.index(n);
                if !outside[ni] && !surface[ni] {
                    outside[ni] = true;
                    stack.push(ni as u32);
                }
            }
        }
    }
    outside
}

/// +1 for each part whose signed volume is positive (or zero), -1 for a part wound inward.
pub(super) fn part_orientation(positions: &[Vec3], triangles: &[[u32; 3]], parts: &(Vec<u32>, usize)) -> Vec<f32> {
    let mut volume = vec![0f64; parts.1];
    for t in triangles
        .iter()
        .filter(|t| t.iter().all(|&i| (i as usize) < positions.len()))
    {
        let [a, b, c] = t.map(|i| positions[i as usize].as_dvec3());
        volume[parts.0[t[0] as usize] as usize] += a.dot(b.cross(c));
    }
    volume.iter().map(|v| if *v < 0.0 { -1.0 } else { 1.0 }).collect()
}

/// Per cell, how many of the three axis-parallel lines through its centre find it inside by the nonzero winding
/// rule (triangle `i` counted with the sign `sign[i]`).
fn winding_votes(grid: &Grid, tris: &[[Vec3; 3]], sign: &[f32]) -> Vec<u8> {
    let mut votes = vec![0u8; grid.len()];
    for axis in 0..3 {
        let (u, w) = ((axis + 1) % 3, (axis + 2) % 3);
        // Rows sit a little off the cell centres' exact coordinates, so that a mesh built on the grid's own
        // lattice (a generated box) does not put its edges exactly on a row.
        const NUDGE: [f32; 2] = [0.5 + 1.0 / 997.0, 0.5 + 1.0 / 1009.0];
        let row_coord = |i: i32, a: usize, k: usize| grid.origin[a] + (i as f32 + NUDGE[k]) * grid.h;
        let mut crossings: Vec<(u32, f32, i8)> = tris
            .par_iter()
            .zip(sign.par_iter())
            .fold(Vec::new, |mut out, (t, &s)| {
                let q = t.map(|p| (p[u], p[w]));
                let area = (q[1].0 - q[0].0) * (q[2].1 - q[0].1) - (q[1].1 - q[0].1) * (q[2].0 - q[0].0);
                if area == 0.0 || !area.is_finite() {
                    return out;
                }
                let dir = if (area > 0.0) == (s > 0.0) { 1i8 } else { -1i8 };
                let lo_u = t[0][u].min(t[1][u]).min(t[2][u]);
                let hi_u = t[0][u].max(t[1][u]).max(t[2][u]);
                let lo_w = t[0][w].min(t[1][w]).min(t[2][w]);
                let hi_w = t[0][w].max(t[1][w]).max(t[2][w]);
                let first =
                    |lo: f32, a: usize, k: usize| (((lo - grid.origin[a]) / grid.h - NUDGE[k]).ceil() as i32).max(0);
                let last = |hi: f32, a: usize, k: usize| {
                    (((hi - grid.origin[a]) / grid.h - NUDGE[k]).floor() as i32).min(grid.dims[a] as i32 - 1)
                };
                for j in first(lo_w, w, 1)..=last(hi_w, w, 1) {
                    let qw = row_coord(j, w, 1);
                    for i in first(lo_u, u, 0)..=last(hi_u, u, 0) {
                        let qu = row_coord(i, u, 0);
                        let edge = |a: (f32, f32), b: (f32, f32)| (b.0 - a.0) * (qw - a.1) - (b.1 - a.1) * (qu - a.0);
                        let e0 = edge(q[1], q[2]);
                        let e1 = edge(q[2], q[0]);
                        let e2 = edge(q[0], q[1]);
                        let inside = if area > 0.0 {
                            e0 >= 0.0 && e1 >= 0.0 && e2 >= 0.0
                        } else {
                            e0 <= 0.0 && e1 <= 0.0 && e2 <= 0.0
                        };
                        if inside {
                            let at = (e0 * t[0][axis] + e1 * t[1][axis] + e2 * t[2][axis]) / area;
                            let row = i as u32 + grid.dims[u] as u32 * j as u32;
                            out.push((row, at, dir));
                        }
                    }
                }
                out
            })
            .reduce(Vec::new, |mut a, mut b| {
                a.append(&mut b);
                a
            });
        crossings.par_sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut at = 0;
        while at < crossings.len() {
            let row = crossings[at].0;
            let end = at + crossings[at..].iter().take_while(|c| c.0 == row).count();
            let (i, j) = (row as usize % grid.dims[u], row as usize / grid.dims[u]);
            let mut winding = 0i32;
            let mut next = at;
            for m in 0..grid.dims[axis] {
                let centre = grid.origin[axis] + (m as f32 + 0.5) * grid.h;
                while next < end && crossings[next].1 < centre {
                    winding += crossings[next].2 as i32;
                    next += 1;
                }
                if winding != 0 {
                    let mut c = IVec3::ZERO;
                    c[axis] = m as i32;
                    c[u] = i as i32;
                    c[w] = j as i32;
                    votes[grid.index(c)] += 1;
                }
            }
            at = end;
        }
    }
    votes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed box from `lo` to `hi`, wound outward (or inward).
    fn cube(lo: Vec3, hi: Vec3, inward: bool) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let (p, mut t) = crate::mesh::cuboid(lo, hi);
        if inward {
            t.iter_mut().for_each(|t| t.swap(1, 2));
        }
        (p, t)
    }

    /// How far `c` lies inside the box (negative outside).
    fn box_depth(c: Vec3, lo: Vec3, hi: Vec3) -> f32 {
        (c - lo).min(hi - c).min_element()
    }

    fn solid_of(p: &[Vec3], t: &[[u32; 3]], side: usize) -> (Grid, Vec<bool>) {
        let (lo, hi) = crate::model::skin::bounds(p).unwrap();
        let grid = Grid::new(lo, hi, side);
        let parts = crate::mesh::connected_parts(p, t, 1e-6);
        let s = solid_cells(&grid, p, t, &parts);
        (grid, s)
    }

    #[test]
    fn a_closed_box_is_solid_inside_and_empty_outside_whatever_its_winding() {
        for inward in [false, true] {
            let (p, t) = cube(Vec3::ZERO, Vec3::new(2.0, 1.0, 1.0), inward);
            let (grid, s) = solid_of(&p, &t, 23);
            assert_eq!(grid.dims[1], grid.dims[2]);
            for (i, &solid) in s.iter().enumerate() {
                let depth = box_depth(grid.center(grid.coords(i)), Vec3::ZERO, Vec3::new(2.0, 1.0, 1.0));
                if depth.abs() > grid.h {
                    assert_eq!(solid, depth > 0.0, "cell {:?} (inward {inward})", grid.coords(i));
                }
            }
        }
    }

    #[test]
    fn a_box_with_one_face_missing_is_still_filled_by_the_vote() {
        let (p, mut t) = cube(Vec3::ZERO, Vec3::ONE, false);
        t.drain(0..2); // the face at z = 0
        let (grid, s) = solid_of(&p, &t, 19);
        let middle = grid.cell_of(Vec3::splat(0.5));
        assert!(s[grid.index(middle)]);
        for (i, &solid) in s.iter().enumerate() {
            let depth = box_depth(grid.center(grid.coords(i)), Vec3::ZERO, Vec3::ONE);
            if depth.abs() > grid.h {
                assert_eq!(solid, depth > 0.0, "cell {:?}", grid.coords(i));
            }
        }
    }

    #[test]
    fn a_box_inside_a_box_leaves_no_hollow_between_layers() {
        let (mut p, mut t) = cube(Vec3::ZERO, Vec3::splat(3.0), false);
        let (p2, t2) = cube(Vec3::splat(1.0), Vec3::splat(2.0), true);
        t.extend(t2.iter().map(|t| t.map(|i| i + 8)));
        p.extend(p2);
        let (grid, s) = solid_of(&p, &t, 30);
        for x in [0.5, 1.5, 2.5] {
            assert!(s[grid.index(grid.cell_of(Vec3::new(x, 1.5, 1.5)))], "x {x}");
        }
    }

    #[test]
    fn the_box_test_agrees_with_sampling_the_triangle() {
        // A triangle meets a cube iff one of its points is in the cube: checked against dense sampling on
        // random triangles (the test may miss thin slivers, so only "sampled inside => meets" is exact, and a
        // meeting far from every sample would show as a large share of disagreements).
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 33) as f32 / (1u64 << 31) as f32) * 4.0 - 2.0
        };
        let (mut agree, mut total) = (0, 0);
        for _ in 0..300 {
            let t = [
                Vec3::new(rnd(), rnd(), rnd()),
                Vec3::new(rnd(), rnd(), rnd()),
                Vec3::new(rnd(), rnd(), rnd()),
            ];
            let meets = triangle_meets_box(&t, Vec3::ZERO, 0.5);
            let mut sampled = false;
            let n = 120;
            for a in 0..=n {
                for b in 0..=(n - a) {
                    let (u, v) = (a as f32 / n as f32, b as f32 / n as f32);
                    let q = t[0] + (t[1] - t[0]) * u + (t[2] - t[0]) * v;
                    sampled |= q.abs().max_element() <= 0.5;
                }
            }
            if sampled {
                assert!(meets, "{t:?}");
            }
            agree += (meets == sampled) as usize;
            total += 1;
        }
        assert!(agree * 100 >= total * 97, "{agree} of {total}");
    }
}
