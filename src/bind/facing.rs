//! Directions binned by the way they face, for searches that want only surfaces facing within an angle of a
//! given direction ([`super::layers`]): a cube map of the unit sphere, [`FACES`] faces (the axis a direction
//! leans along most, and its sign) of [`SIDE`] x [`SIDE`] cells each (the other two components over the leading
//! one's size, in equal steps from -1 to 1). A cell's directions lie within its half-angle of its centre, so a
//! direction within angle `θ` of `m` can only lie in a cell whose centre is within `θ` plus that half-angle of
//! `m` ([`Cells::within`]).
//!
//! Six bins (the faces alone) let in directions up to 55 degrees from a face's axis, so a search for surfaces
//! within 26 degrees of a vertex's normal looked at (and turned away) most of the triangles in reach of it; at
//! 1M vertices the creature sample's layer coupling spent most of its time there.

use glam::Vec3;

/// Faces of the cube map: the axis a direction leans along most (x, y, z), times two, plus one if negative.
pub(super) const FACES: usize = 6;
/// Cells along each side of a face.
pub(super) const SIDE: usize = 4;
/// Cells in all.
pub(super) const CELLS: usize = FACES * SIDE * SIDE;

/// The axis a direction leans along most (ties: the earlier axis).
fn leading_axis(n: Vec3) -> usize {
    let a = n.abs();
    if a.x >= a.y && a.x >= a.z {
        0
    } else if a.y >= a.z {
        1
    } else {
        2
    }
}

/// The two axes other than `k`, in order.
fn others(k: usize) -> (usize, usize) {
    match k {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    }
}

/// The cell of direction `n` (any length but zero; a zero or non-finite direction gets some cell).
pub(super) fn cell_of(n: Vec3) -> usize {
    let k = leading_axis(n);
    let face = 2 * k + usize::from(n[k] < 0.0);
    let (i, j) = others(k);
    let lead = n[k].abs();
    let step = |x: f32| {
        let u = if lead > 0.0 { x / lead } else { 0.0 };
        // `u` lies in [-1, 1]; NaN goes to cell 0.
        (((u + 1.0) * 0.5 * SIDE as f32) as usize).min(SIDE - 1)
    };
    (face * SIDE + step(n[i])) * SIDE + step(n[j])
}

/// Each cell's centre direction and the cosine of its half-angle, for the test of [`Cells::within`].
pub(super) struct Cells {
    centre: [Vec3; CELLS],
    /// The angle from the centre to the farthest corner (a cell's edges are great circles, so it is convex and
    /// its farthest point from the centre is a corner), with a margin for rounding.
    half_angle: [f32; CELLS],
}

impl Cells {
    pub(super) fn new() -> Self {
        let mut centre = [Vec3::ZERO; CELLS];
        let mut half_angle = [0.0; CELLS];
        for face in 0..FACES {
            let k = face / 2;
            let sign = if face % 2 == 0 { 1.0 } else { -1.0 };
            let (i, j) = others(k);
            let dir = |u: f32, v: f32| {
                let mut d = Vec3::ZERO;
                d[k] = sign;
                d[i] = u;
                d[j] = v;
                d.normalize()
            };
            let edge = |a: usize| -1.0 + 2.0 * a as f32 / SIDE as f32;
            for a in 0..SIDE {
                for b in 0..SIDE {
                    let c = (face * SIDE + a) * SIDE + b;
                    let (u0, u1, v0, v1) = (edge(a), edge(a + 1), edge(b), edge(b + 1));
                    centre[c] = dir(0.5 * (u0 + u1), 0.5 * (v0 + v1));
                    half_angle[c] = [(u0, v0), (u0, v1), (u1, v0), (u1, v1)]
                        .iter()
                        .map(|&(u, v)| centre[c].dot(dir(u, v)).clamp(-1.0, 1.0).acos())
                        .fold(0.0, f32::max)
                        + 1e-3;
                }
            }
        }
        Self { centre, half_angle }
    }

    /// The cells that can hold a unit direction `n` with `n . m >= min_cos` for one of `dirs`, as a bit set
    /// (bit `c` for cell `c`): those whose centre lies within `acos(min_cos)` plus their half-angle of some `m`
    /// (with a margin, so a cell may be let in that need not be).
    pub(super) fn within(&self, dirs: &[Vec3], min_cos: f32) -> u128 {
        let theta = min_cos.clamp(-1.0, 1.0).acos();
        let mut set = 0u128;
        for (c, (&centre, &alpha)) in self.centre.iter().zip(&self.half_angle).enumerate() {
            let reach = theta + alpha;
            if reach >= std::f32::consts::PI {
                set |= 1 << c;
                continue;
            }
            let limit = reach.cos() - 1e-4;
            if dirs.iter().any(|m| m.dot(centre) >= limit) {
                set |= 1 << c;
            }
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unit directions spread over the sphere (a spiral), and the axes and cube corners exactly.
    fn directions(n: usize) -> Vec<Vec3> {
        let golden = std::f32::consts::PI * (3.0 - 5f32.sqrt());
        let mut d: Vec<Vec3> = (0..n)
            .map(|i| {
                let y = 1.0 - 2.0 * (i as f32 + 0.5) / n as f32;
                let r = (1.0 - y * y).sqrt();
                let a = golden * i as f32;
                Vec3::new(r * a.cos(), y, r * a.sin())
            })
            .collect();
        for k in 0..3 {
            for s in [1.0, -1.0] {
                let mut v = Vec3::ZERO;
                v[k] = s;
                d.push(v);
            }
        }
        for x in [1.0, -1.0] {
            for y in [1.0, -1.0] {
                for z in [1.0f32, -1.0] {
                    d.push(Vec3::new(x, y, z).normalize());
                }
            }
        }
        d
    }

    #[test]
    fn every_direction_within_the_angle_lies_in_a_cell_let_in() {
        let cells = Cells::new();
        let all = directions(4000);
        for min_cos in [0.9, 0.6, 0.0] {
            for m in directions(300) {
                let set = cells.within(&[m], min_cos);
                for &n in all.iter().filter(|n| n.dot(m) >= min_cos) {
                    assert!(
                        set & (1 << cell_of(n)) != 0,
                        "{n} within {min_cos} of {m}, cell {}",
                        cell_of(n)
                    );
                }
            }
        }
    }

    #[test]
    fn narrow_searches_let_in_few_cells() {
        // Within about 26 degrees of a face's axis: the four middle cells and their ring, not the whole face.
        let cells = Cells::new();
        let set = cells.within(&[Vec3::Z], 0.9);
        assert!(set.count_ones() <= 16, "{}", set.count_ones());
        assert!(
            (0..CELLS)
                .filter(|&c| set & (1 << c) != 0)
                .all(|c| c / (SIDE * SIDE) == 4)
        );
        assert_eq!(cells.within(&[Vec3::Z], -1.0).count_ones() as usize, CELLS);
    }

    #[test]
    fn cells_cover_each_face_in_equal_steps() {
        assert_eq!(cell_of(Vec3::X), (SIDE / 2) * SIDE + SIDE / 2);
        assert_eq!(cell_of(Vec3::NEG_Z) / (SIDE * SIDE), 5);
        assert_eq!(cell_of(Vec3::new(1.0, -1.0, -1.0)), 0);
        assert_eq!(cell_of(Vec3::new(1.0, 1.0, 1.0)), SIDE * SIDE - 1);
        assert!(cell_of(Vec3::new(f32::NAN, 0.0, 0.0)) < CELLS);
        assert!(cell_of(Vec3::ZERO) < CELLS);
    }
}
