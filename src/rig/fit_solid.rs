//! The voxelised solid a template is fitted into ([`super::fit`]): which cells are inside the mesh (the
//! geodesic binding's voxelisation, [`crate::bind::voxel`]: soups, split parts and inward winding count alike),
//! each solid cell's depth (distance from its centre to the nearest empty cell's centre, by propagating the
//! nearest empty cell through the 26-neighbourhood; Danielsson's vector propagation, 1980) and the medial cells
//! (no neighbour deeper), the solid's middle.

use glam::{IVec3, Vec3};

use crate::bind::voxel::{Grid, solid_cells};
use crate::spatial::points::PointIndex;

/// A mesh's solid with its depth field.
pub struct FitSolid {
    pub grid: Grid,
    solid: Vec<bool>,
    /// Per cell, the distance to the nearest empty cell's centre (0 for empty cells).
    depth: Vec<f32>,
    /// The solid cells' centres, in cell order.
    centres: Vec<Vec3>,
    index: PointIndex,
    /// The medial cells' centres.
    medial: Vec<Vec3>,
    medial_index: PointIndex,
}

impl FitSolid {
    /// The solid of a mesh, `resolution` cells along its box's longest side; None when no cell is solid (an
    /// empty or flat mesh).
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]], resolution: usize) -> Option<Self> {
        let (lo, hi) = crate::model::skin::bounds(positions)?;
        let parts = crate::mesh::connected_parts(positions, triangles, 1e-6 * (hi - lo).length());
        let grid = Grid::new(lo, hi, resolution);
        let solid = solid_cells(&grid, positions, triangles, &parts);
        if !solid.iter().any(|&s| s) {
            return None;
        }
        let depth = depth_field(&grid, &solid);
        let centres: Vec<Vec3> = (0..grid.len())
            .filter(|&i| solid[i])
            .map(|i| grid.center(grid.coords(i)))
            .collect();
        let medial: Vec<Vec3> = (0..grid.len())
            .filter(|&i| solid[i] && is_medial(&grid, &depth, i))
            .map(|i| grid.center(grid.coords(i)))
            .collect();
        let index = PointIndex::of(&centres);
        let medial_index = PointIndex::of(&medial);
        Some(Self {
            grid,
            solid,
            depth,
            centres,
            index,
            medial,
            medial_index,
        })
    }

    /// Whether `p` lies in a solid cell.
    pub fn holds(&self, p: Vec3) -> bool {
        let c = self.grid.cell_of(p);
        p.is_finite() && self.grid.contains(c) && self.solid[self.grid.index(c)]
    }

    /// The depth of the cell holding `p` (0 outside).
    pub fn depth_at(&self, p: Vec3) -> f32 {
        if !p.is_finite() {
            return 0.0;
        }
        self.depth[self.grid.index(self.grid.cell_of(p))]
    }

    /// The span along `axis` of the cells at least `share` of the deepest cell's depth deep (the trunk, without
    /// thin legs, necks and tails).
    pub fn core_range(&self, axis: usize, share: f32) -> Option<(f32, f32)> {
        let deepest = self.depth.iter().copied().fold(0.0f32, f32::max);
        let keep = share * deepest;
        if keep <= 0.0 {
            return None;
        }
        let mut range: Option<(f32, f32)> = None;
        for i in 0..self.grid.len() {
            if self.solid[i] && self.depth[i] >= keep {
                let x = self.grid.center(self.grid.coords(i))[axis];
                range = Some(range.map_or((x, x), |(a, b)| (a.min(x), b.max(x))));
            }
        }
        range
    }

    /// The solid cells' centres.
    pub fn centres(&self) -> &[Vec3] {
        &self.centres
    }

    /// The centres of the solid cells on the solid's boundary (a face neighbour is empty).
    pub fn shell(&self) -> Vec<Vec3> {
        const FACES: [IVec3; 6] = [IVec3::X, IVec3::NEG_X, IVec3::Y, IVec3::NEG_Y, IVec3::Z, IVec3::NEG_Z];
        (0..self.grid.len())
            .filter(|&i| self.solid[i])
            .filter(|&i| {
                let c = self.grid.coords(i);
                FACES.iter().any(|s| {
                    let n = c + *s;
                    !self.grid.contains(n) || !self.solid[self.grid.index(n)]
                })
            })
            .map(|i| self.grid.center(self.grid.coords(i)))
            .collect()
    }

    /// The centre of the solid cell nearest `p` (`p` itself when no cell is found).
    pub fn nearest_inside(&self, p: Vec3) -> Vec3 {
        self.index
            .nearest_within(p, f32::INFINITY)
            .and_then(|i| self.centres.get(i).copied())
            .unwrap_or(p)
    }

    /// The distance from `p` to the nearest medial cell's centre (the solid's middle).
    pub fn medial_distance(&self, p: Vec3) -> f32 {
        self.medial_index
            .nearest_within(p, f32::INFINITY)
            .and_then(|i| self.medial.get(i))
            .map_or(f32::INFINITY, |m| m.distance(p))
    }

    /// The nearest medial cell's centre.
    pub fn nearest_medial(&self, p: Vec3) -> Option<Vec3> {
        self.medial_index
            .nearest_within(p, f32::INFINITY)
            .and_then(|i| self.medial.get(i).copied())
    }

    /// The solid's longest path through its middle, as cell centres from the end nearer `near` to the other:
    /// the medial cell farthest through the solid from the solid cell nearest `near` is one end, the medial cell
    /// farthest from that the other (the two sweeps that find a tree's diameter), each within the part of the
    /// solid that holds the start. Between them, the path whose steps cost their length over the square of the
    /// depth of the cell they enter, so that it keeps to the middle of each cross-section (a centreline by the
    /// distance field, as vessel and airway trees are traced). None where the part is a single cell.
    pub fn medial_path(&self, near: Vec3) -> Option<Vec<Vec3>> {
        let start = self.index.nearest_within(near, f32::INFINITY)?;
        let start = self.grid.index(self.grid.cell_of(*self.centres.get(start)?));
        let plain = |_: usize| 1.0;
        // The ends are medial cells: the farthest cell of a flat-ended tube is a corner of its rim, off its
        // middle by the radius, where the medial axis ends a radius short of the cap, on the axis.
        let medial = |i: usize| is_medial(&self.grid, &self.depth, i);
        let (from_start, _) = self.paths(start, plain);
        let a = farthest(&from_start, medial)?;
        let (from_a, _) = self.paths(a, plain);
        let b = farthest(&from_a, medial)?;
        if a == b {
            return None;
        }
        let floor = 0.5 * self.grid.h;
        let (_, back) = self.paths(a, |i| {
            let d = self.depth[i].max(floor) / self.grid.h;
            1.0 / (d * d)
        });
        // Walked back from b to a; a was the end farther from the start.
        let mut path = vec![b];
        while let Some(&prev) = back.get(*path.last()?) {
            if prev == u32::MAX || path.len() > self.grid.len() {
                break;
            }
            path.push(prev as usize);
        }
        let path = self.trimmed(&path);
        let mut path: Vec<Vec3> = path.iter().map(|&i| self.grid.center(self.grid.coords(i))).collect();
        if path.last().is_some_and(|p| p.distance(near) < path[0].distance(near)) {
            path.reverse();
        }
        Some(path)
    }

    /// A path of cells without the spurs at its ends: the medial axis of a flat end runs out to the corners of
    /// its rim (a cone of medial cells from the cap's rim to the axis), so from each end the path is walked in
    /// while the cells get deeper and the way walked stays within 1.5 times the depth reached (a spur runs
    /// about 1.4 times as far as it gains depth; a thin tapering tip gains far less, and stays).
    fn trimmed<'p>(&self, path: &'p [usize]) -> &'p [usize] {
        let inward = |cells: &mut dyn Iterator<Item = &usize>| -> usize {
            let mut cells = cells.peekable();
            let (mut k, mut walked) = (0, 0.0f32);
            while let (Some(&a), Some(&&b)) = (cells.next(), cells.peek()) {
                let (ca, cb) = (self.grid.coords(a), self.grid.coords(b));
                walked += (cb - ca).as_vec3().length() * self.grid.h;
                if self.depth[b] < self.depth[a] || walked > 1.5 * self.depth[b] {
                    break;
                }
                k += 1;
            }
            k
        };
        let head = inward(&mut path.iter());
        let tail = inward(&mut path.iter().rev());
        if head + tail + 2 > path.len() {
            return path;
        }
        &path[head..path.len() - tail]
    }

    /// Shortest paths through the solid's cells from cell `from` (26-neighbour steps, each step's length times
    /// `cost` of the cell it enters): each cell's distance (infinite where not reached) and the cell it was
    /// reached from (`u32::MAX` for none).
    fn paths(&self, from: usize, cost: impl Fn(usize) -> f32) -> (Vec<f32>, Vec<u32>) {
        let steps = neighbour_steps();
        let mut dist = vec![f32::INFINITY; self.grid.len()];
        let mut back = vec![u32::MAX; self.grid.len()];
        let mut heap = std::collections::BinaryHeap::new();
        dist[from] = 0.0;
        heap.push((std::cmp::Reverse(0f32.to_bits()), from as u32));
        while let Some((std::cmp::Reverse(bits), i)) = heap.pop() {
            let (i, d) = (i as usize, f32::from_bits(bits));
            if d > dist[i] {
                continue;
            }
            let c = self.grid.coords(i);
            for step in steps {
                let n = c + step;
                if !self.grid.contains(n) {
                    continue;
                }
                let ni = self.grid.index(n);
                if !self.solid[ni] {
                    continue;
                }
                let nd = d + step.as_vec3().length() * self.grid.h * cost(ni);
                if nd < dist[ni] {
                    dist[ni] = nd;
                    back[ni] = i as u32;
                    heap.push((std::cmp::Reverse(nd.to_bits()), ni as u32));
                }
            }
        }
        (dist, back)
    }
}

/// The reached cell farthest away among those `keep` takes (the lowest index among equals).
fn farthest(dist: &[f32], keep: impl Fn(usize) -> bool) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &d) in dist.iter().enumerate() {
        if d.is_finite() && best.is_none_or(|(_, b)| d > b) && keep(i) {
            best = Some((i, d));
        }
    }
    best.map(|(i, _)| i)
}

const NEIGHBOURS: usize = 26;

fn neighbour_steps() -> [IVec3; NEIGHBOURS] {
    let mut out = [IVec3::ZERO; NEIGHBOURS];
    let mut k = 0;
    for z in -1..=1 {
        for y in -1..=1 {
            for x in -1..=1 {
                if (x, y, z) != (0, 0, 0) {
                    out[k] = IVec3::new(x, y, z);
                    k += 1;
                }
            }
        }
    }
    out
}

/// Per cell, the distance from its centre to the nearest empty cell's centre: breadth-first from the empty
/// cells that touch the solid, each cell keeping the nearest seed a neighbour offers.
fn depth_field(grid: &Grid, solid: &[bool]) -> Vec<f32> {
    let steps = neighbour_steps();
    let mut seed: Vec<u32> = vec![u32::MAX; grid.len()];
    let mut depth = vec![f32::INFINITY; grid.len()];
    let mut queue = std::collections::VecDeque::new();
    for i in 0..grid.len() {
        if solid[i] {
            continue;
        }
        depth[i] = 0.0;
        let c = grid.coords(i);
        if steps.iter().any(|s| {
            let n = c + *s;
            grid.contains(n) && solid[grid.index(n)]
        }) {
            seed[i] = i as u32;
            queue.push_back(i as u32);
        }
    }
    while let Some(i) = queue.pop_front() {
        let i = i as usize;
        let c = grid.coords(i);
        let s = seed[i] as usize;
        let sc = grid.coords(s).as_vec3();
        for step in steps {
            let n = c + step;
            if !grid.contains(n) {
                continue;
            }
            let ni = grid.index(n);
            if !solid[ni] {
                continue;
            }
            let d = (n.as_vec3() - sc).length() * grid.h;
            if d < depth[ni] {
                depth[ni] = d;
                seed[ni] = s as u32;
                queue.push_back(ni as u32);
            }
        }
    }
    for d in &mut depth {
        if !d.is_finite() {
            *d = 0.0;
        }
    }
    depth
}

/// Whether no neighbour of solid cell `i` is deeper.
fn is_medial(grid: &Grid, depth: &[f32], i: usize) -> bool {
    let c = grid.coords(i);
    let d = depth[i];
    neighbour_steps().iter().all(|s| {
        let n = c + *s;
        !grid.contains(n) || depth[grid.index(n)] <= d
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::mesh::cuboid;

    #[test]
    fn a_bar_is_deepest_along_its_axis() {
        let (p, t) = cuboid(Vec3::new(0.0, -0.5, -0.5), Vec3::new(4.0, 0.5, 0.5));
        let s = FitSolid::new(&p, &t, 40).unwrap();
        assert!(s.holds(Vec3::new(2.0, 0.0, 0.0)));
        assert!(!s.holds(Vec3::new(2.0, 0.9, 0.0)));
        let middle = s.depth_at(Vec3::new(2.0, 0.0, 0.0));
        let side = s.depth_at(Vec3::new(2.0, 0.35, 0.0));
        assert!(middle > side && (middle - 0.5).abs() < 0.2, "{middle} {side}");
        assert!(s.medial_distance(Vec3::new(2.0, 0.0, 0.0)) < 0.2);
        let m = s.nearest_medial(Vec3::new(2.0, 0.4, 0.0)).unwrap();
        assert!(m.y.abs() < 0.2, "{m}");
    }

    /// A trunk 1.6 long and 0.5 deep with a thin tail as long behind it: the cells at least 0.7 of the deepest's
    /// depth (0.25, so 0.175 from every face) span the trunk less 0.175 at each end, and none of the tail.
    #[test]
    fn the_core_of_a_body_with_a_tail_is_its_trunk() {
        let (mut p, mut t) = cuboid(Vec3::new(-0.3, 0.6, -0.8), Vec3::new(0.3, 1.1, 0.8));
        let tail = cuboid(Vec3::new(-0.06, 0.8, -2.4), Vec3::new(0.06, 0.92, -0.75));
        crate::mesh::append_part(&mut p, &mut t, tail);
        let solid = FitSolid::new(&p, &t, 80).unwrap();
        let (z0, z1) = solid.core_range(2, 0.7).unwrap();
        let cell = 3.2 / 80.0;
        assert!(
            (z0 + 0.625).abs() < 2.0 * cell && (z1 - 0.625).abs() < 2.0 * cell,
            "{z0} {z1}"
        );
        let (x0, x1) = solid.core_range(0, 0.7).unwrap();
        assert!(x0 > -0.3 && x1 < 0.3 && x1 - x0 < 0.3, "{x0} {x1}");
    }

    #[test]
    fn no_mesh_no_solid() {
        assert!(FitSolid::new(&[], &[], 32).is_none());
    }
}
