//! Line geometry drawn over the skin: the ground grid and the skeleton. Pure (world-space segments with a
//! colour each), so tests check it without a GPU.
//!
//! The skeleton is drawn as in Blender: a joint with a box in the `.skel` file as that box's 12 edges in the
//! joint's posed frame (the CSE169 way), any other joint as a wire octahedron from its pivot to each child's
//! pivot, a joint with neither as a small cross at its pivot. The selected joint is orange, the others blue.

use glam::{Mat4, Vec3};

use crate::model::Skeleton;

pub type Color = [f32; 4];

pub const BONE: Color = [0.45, 0.7, 1.0, 1.0];
pub const SELECTED: Color = [1.0, 0.6, 0.1, 1.0];
/// A joint that does not deform (a control).
pub const CONTROL: Color = [0.55, 0.55, 0.58, 1.0];
pub const GRID: Color = [0.4, 0.4, 0.42, 1.0];
pub const GRID_AXIS_X: Color = [0.75, 0.3, 0.3, 1.0];
pub const GRID_AXIS_Z: Color = [0.3, 0.45, 0.8, 1.0];

/// Line segments, each with one colour.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lines {
    pub segments: Vec<[Vec3; 2]>,
    pub colors: Vec<Color>,
}

impl Lines {
    pub fn push(&mut self, a: Vec3, b: Vec3, color: Color) {
        self.segments.push([a, b]);
        self.colors.push(color);
    }

    pub fn len(&self) -> usize {
        self.segments.len()
    }

    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }
}

/// A square grid on the plane `y = height`, `2 * half_cells` cells of `cell` across, centred at the origin;
/// the x and z axes coloured.
pub fn grid(height: f32, cell: f32, half_cells: u32) -> Lines {
    let mut lines = Lines::default();
    let n = half_cells as i32;
    let extent = cell * half_cells as f32;
    for i in -n..=n {
        let t = i as f32 * cell;
        let (cx, cz) = if i == 0 {
            (GRID_AXIS_Z, GRID_AXIS_X)
        } else {
            (GRID, GRID)
        };
        lines.push(Vec3::new(t, height, -extent), Vec3::new(t, height, extent), cx);
        lines.push(Vec3::new(-extent, height, t), Vec3::new(extent, height, t), cz);
    }
    lines
}

/// A grid cell size for a model `size` across: a power of ten, about a tenth of it.
pub fn grid_cell(size: f32) -> f32 {
    if !(size.is_finite() && size > 0.0) {
        return 1.0;
    }
    10f32.powf((size / 10.0).log10().round())
}

/// The skeleton posed by `world_from_joint`.
pub fn skeleton(skel: &Skeleton, world_from_joint: &[Mat4], selected: Option<usize>, deform: &[bool]) -> Lines {
    let mut lines = Lines::default();
    for (i, joint) in skel.joints().iter().enumerate() {
        let Some(m) = world_from_joint.get(i) else { continue };
        let color = match (selected == Some(i), deform.get(i)) {
            (true, _) => SELECTED,
            (false, Some(false)) => CONTROL,
            _ => BONE,
        };
        if joint.box_min.is_some() || joint.box_max.is_some() {
            let (lo, hi) = joint.bounds();
            push_box(&mut lines, m, lo, hi, color);
            continue;
        }
        let pivot = m.w_axis.truncate();
        let children = skel.children(i);
        if children.is_empty() {
            let r = 0.02 * scale_of(skel, world_from_joint).max(1e-3);
            for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
                lines.push(pivot - axis * r, pivot + axis * r, color);
            }
        }
        for &c in children {
            if let Some(cm) = world_from_joint.get(c) {
                push_octahedron(&mut lines, pivot, cm.w_axis.truncate(), color);
            }
        }
    }
    lines
}

/// The skeleton's size: the diagonal of its posed pivots' bounding box.
fn scale_of(skel: &Skeleton, world_from_joint: &[Mat4]) -> f32 {
    let pivots: Vec<Vec3> = world_from_joint
        .iter()
        .take(skel.len())
        .map(|m| m.w_axis.truncate())
        .collect();
    crate::model::skin::bounds(&pivots).map_or(1.0, |(lo, hi)| (hi - lo).length())
}

fn push_box(lines: &mut Lines, m: &Mat4, lo: Vec3, hi: Vec3, color: Color) {
    let corner = |k: usize| {
        m.transform_point3(Vec3::new(
            if k & 1 == 0 { lo.x } else { hi.x },
            if k & 2 == 0 { lo.y } else { hi.y },
            if k & 4 == 0 { lo.z } else { hi.z },
        ))
    };
    for k in 0..8usize {
        for bit in [1usize, 2, 4] {
            if k & bit == 0 {
                lines.push(corner(k), corner(k | bit), color);
            }
        }
    }
}

/// Blender's octahedral bone from `head` to `tail`: a square ring a tenth of the way along, joined to both ends.
fn push_octahedron(lines: &mut Lines, head: Vec3, tail: Vec3, color: Color) {
    let axis = tail - head;
    let len = axis.length();
    if len <= 1e-9 {
        return;
    }
    let dir = axis / len;
    let (u, v) = dir.any_orthonormal_pair();
    let ring_centre = head + axis * 0.1;
    let r = len * 0.1;
    let ring = [u * r, v * r, -u * r, -v * r].map(|o| ring_centre + o);
    for k in 0..4 {
        lines.push(head, ring[k], color);
        lines.push(ring[k], tail, color);
        lines.push(ring[k], ring[(k + 1) % 4], color);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Joint, Pose, world_from_joint};

    #[test]
    fn boxes_have_twelve_edges_and_octahedra_twelve_per_child() {
        let mut root = Joint::new("root", None, Vec3::ZERO);
        root.box_min = Some(Vec3::splat(-1.0));
        root.box_max = Some(Vec3::splat(1.0));
        let mid = Joint::new("mid", Some(0), Vec3::new(0.0, 2.0, 0.0));
        let tip = Joint::new("tip", Some(1), Vec3::new(0.0, 1.0, 0.0));
        let skel = Skeleton::new(vec![root, mid, tip]).expect("skeleton");
        let w = world_from_joint(&skel, &Pose::zero(&skel));
        let lines = skeleton(&skel, &w, Some(1), &[]);
        // root: box (12); mid: octahedron to tip (12); tip: leaf cross (3).
        assert_eq!(lines.len(), 12 + 12 + 3);
        assert_eq!(lines.colors[12], SELECTED);
        assert_eq!(lines.colors[0], BONE);
        // A joint that does not deform is drawn grey (unless selected).
        let lines = skeleton(&skel, &w, Some(1), &[false, false, true]);
        assert_eq!(
            (lines.colors[0], lines.colors[12], lines.colors[24]),
            (CONTROL, SELECTED, BONE)
        );
        // Every box edge is 2 long (the box is -1..1) and lies on the box's surface.
        for s in &lines.segments[..12] {
            assert!(((s[1] - s[0]).length() - 2.0).abs() < 1e-6);
        }
        // The octahedron spans mid's pivot (0, 2, 0) to tip's (0, 3, 0).
        assert!(lines.segments[12..24].iter().any(|s| s[0] == Vec3::new(0.0, 2.0, 0.0)));
        assert!(lines.segments[12..24].iter().any(|s| s[1] == Vec3::new(0.0, 3.0, 0.0)));
    }

    #[test]
    fn grid_lines_and_cells() {
        let g = grid(0.5, 2.0, 3);
        assert_eq!(g.len(), 2 * 7);
        assert!(g.segments.iter().all(|s| s[0].y == 0.5 && s[1].y == 0.5));
        assert_eq!(grid_cell(25.0), 1.0);
        assert_eq!(grid_cell(2.0), 0.1);
        assert_eq!(grid_cell(f32::NAN), 1.0);
    }
}
