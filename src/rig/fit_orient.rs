//! Which way a mesh faces against a template: the quarter and half turns (the 24 rotations that take axes to
//! axes) tried on the mesh's solid, each scored by how much of it overlaps the template's.
//!
//! The fit's steps take the template and the mesh to share up and facing (glTF's Y up, +Z forward), but a mesh
//! from another tool may lie Z up, or face +X. Here both solids (their cells' centres, [`super::fit_solid`]) are
//! scaled alike to their boxes' longest side, centred, and counted on a [`GRID`]-cell lattice; the overlap is the
//! intersection over the union of the two sets of occupied cells. On the shared farm animals and humans, each
//! against the others of its kind, the best turn overlaps 2% to 53% less than the mesh as it lies (least: the
//! Llama upside down against the Pig, whose raised neck then passes for a leg; docs/fitting.md). The mesh is
//! turned only when a turn overlaps more than [`MARGIN`] times as much as the mesh as it lies, so that a mesh
//! that already faces the template's way keeps it whatever the noise, and an animal whose head and rump are alike
//! is left alone.
//!
//! The user may say instead which way the mesh faces ([`parse_axis`], [`told_facing`]: `fit --mesh-front`, the
//! editor's Fit to mesh choices); a template without a mesh of its own is turned only so, and [`lies_across`]
//! warns when such a template and the mesh lie across each other.

use glam::{Mat3, Vec3};

/// Cells along each side of the lattice the overlap is counted on.
pub const GRID: usize = 20;
/// How much more a turn must overlap than no turn for the mesh to be turned.
pub const MARGIN: f32 = 1.1;

/// The 24 rotations that take each axis to an axis (the cube's), the identity first.
pub fn quarter_turns() -> Vec<Mat3> {
    let axes = [Vec3::X, Vec3::Y, Vec3::Z];
    let mut out = vec![Mat3::IDENTITY];
    for a in 0..3 {
        for b in (0..3).filter(|&b| b != a) {
            for (sa, sb) in [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)] {
                let (x, y) = (axes[a] * sa, axes[b] * sb);
                let m = Mat3::from_cols(x, y, x.cross(y));
                if m != Mat3::IDENTITY {
                    out.push(m);
                }
            }
        }
    }
    out
}

/// The cells of the [`GRID`] lattice that `points` occupy, scaled to their box's longest side and centred.
fn occupancy(points: &[Vec3]) -> Vec<bool> {
    let mut cells = vec![false; GRID * GRID * GRID];
    let Some((lo, hi)) = crate::model::skin::bounds(points) else {
        return cells;
    };
    let (mid, side) = ((lo + hi) * 0.5, (hi - lo).max_element());
    if side.is_nan() || side <= 0.0 {
        return cells;
    }
    let top = GRID as f32 - 1.0;
    for p in points {
        let q = (((*p - mid) / side + 0.5) * GRID as f32).clamp(Vec3::ZERO, Vec3::splat(top));
        let [x, y, z] = q.to_array().map(|v| v as usize);
        cells[(z * GRID + y) * GRID + x] = true;
    }
    cells
}

/// Intersection over union of two occupancies.
fn overlap(a: &[bool], b: &[bool]) -> f32 {
    let both = a.iter().zip(b).filter(|(x, y)| **x && **y).count();
    let either = a.iter().zip(b).filter(|(x, y)| **x || **y).count();
    both as f32 / either.max(1) as f32
}

/// How the mesh lies against the template: the turn to apply to the mesh, its overlap, and the overlap of the
/// mesh as it lies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Facing {
    pub turn: Mat3,
    pub overlap: f32,
    pub unturned: f32,
}

/// The turn that takes the mesh's solid (`mesh`, cell centres) into the template's frame (`template`), when one
/// overlaps more than [`MARGIN`] times as much as none; `None` when the mesh is best left as it lies. The first
/// of the best turns is taken (see [`quarter_turns`]).
pub fn mesh_facing(template: &[Vec3], mesh: &[Vec3]) -> Option<Facing> {
    let target = occupancy(template);
    let scores: Vec<(Mat3, f32)> = quarter_turns()
        .into_iter()
        .map(|r| {
            let turned: Vec<Vec3> = mesh.iter().map(|p| r * *p).collect();
            (r, overlap(&target, &occupancy(&turned)))
        })
        .collect();
    let unturned = scores[0].1;
    let (turn, best) = scores[1..].iter().fold(
        (Mat3::IDENTITY, f32::NEG_INFINITY),
        |b, s| if s.1 > b.1 { *s } else { b },
    );
    (best > MARGIN * unturned).then_some(Facing {
        turn,
        overlap: best,
        unturned,
    })
}

/// An axis as a user writes it: `x`, `+Y`, `-z` (case and a leading `+` are free).
pub fn parse_axis(text: &str) -> Option<Vec3> {
    let t = text.trim().to_ascii_lowercase();
    let (sign, name) = match t.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, t.strip_prefix('+').unwrap_or(&t)),
    };
    let axis = match name {
        "x" => Vec3::X,
        "y" => Vec3::Y,
        "z" => Vec3::Z,
        _ => return None,
    };
    Some(axis * sign)
}

/// The turn that takes a mesh whose up is `up` and whose front is `front` (each an axis, [`parse_axis`]) to the
/// fit's frame (up +Y, front +Z); `None` unless they are two different axes (neither the same nor opposite).
/// Blender's frame, Z up and facing -Y, is `told_facing(Vec3::Z, -Vec3::Y)`.
pub fn told_facing(up: Vec3, front: Vec3) -> Option<Mat3> {
    let is_axis = |v: Vec3| v.abs().max_element() == 1.0 && v.abs().element_sum() == 1.0;
    if !is_axis(up) || !is_axis(front) || up.dot(front) != 0.0 {
        return None;
    }
    // Rows: the mesh's right (up x front, so that the turn is proper), up and front.
    Some(Mat3::from_cols(up.cross(front), up, front).transpose())
}

/// How much longer one horizontal side of a box must be than the other for a body to be said to lie along it.
pub const ALONG: f32 = 1.3;

/// Which horizontal axis (0: x, 2: z) the points' box is clearly longest along ([`ALONG`] times the other).
fn long_horizontal(points: &[Vec3]) -> Option<usize> {
    let (lo, hi) = crate::model::skin::bounds(points)?;
    let d = hi - lo;
    if d.x > ALONG * d.z {
        Some(0)
    } else if d.z > ALONG * d.x {
        Some(2)
    } else {
        None
    }
}

/// A warning when the mesh (`mesh`, its points) lies across the template (`template`, its body's points): each
/// clearly longest along another horizontal axis, as a mesh facing +X against a template facing +Z is. For a
/// template that is not turned by a guess, so that the user can say which way the mesh faces.
pub fn lies_across(template: &[Vec3], mesh: &[Vec3]) -> Option<String> {
    let (t, m) = (long_horizontal(template)?, long_horizontal(mesh)?);
    let name = |a: usize| ["X", "Y", "Z"][a];
    (t != m).then(|| {
        format!(
            "the mesh lies across the template (longest along {}, the template along {}): if it faces another way \
             than +Z, say which (fit --mesh-front, or Fit to mesh's 'The mesh faces' choices: a template without a \
             mesh of its own is not turned by a guess); if not, it is another kind of body than the template's",
            name(m),
            name(t),
        )
    })
}

/// A turn in words: where it takes the mesh's +Y (up) and +Z (forward), as the fit's warning says it.
pub fn describe(turn: Mat3) -> String {
    let name = |v: Vec3| {
        let axis = ["X", "Y", "Z"][v.abs().max_position()];
        format!("{}{axis}", if v.max_element() > 0.5 { "+" } else { "-" })
    };
    // The mesh's axis that the turn takes to +Y is `turn^T * Y`.
    let back = turn.transpose();
    format!(
        "its up is {} and its front {}",
        name(back * Vec3::Y),
        name(back * Vec3::Z)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blocky animal: a body along z, four legs down, a head up at +z, a thin tail at -z; cells as points.
    fn animal(head: f32) -> Vec<Vec3> {
        let mut p = Vec::new();
        let mut block = |lo: Vec3, hi: Vec3| {
            let steps = ((hi - lo) / 0.05).ceil().as_uvec3();
            for x in 0..=steps.x {
                for y in 0..=steps.y {
                    for z in 0..=steps.z {
                        p.push(
                            lo + (hi - lo) * Vec3::new(x as f32, y as f32, z as f32) / steps.as_vec3().max(Vec3::ONE),
                        );
                    }
                }
            }
        };
        block(Vec3::new(-0.3, 0.6, -0.8), Vec3::new(0.3, 1.1, 0.8));
        for (x, z) in [(-0.2, -0.6), (0.2, -0.6), (-0.2, 0.6), (0.2, 0.6)] {
            block(Vec3::new(x - 0.08, 0.0, z - 0.08), Vec3::new(x + 0.08, 0.6, z + 0.08));
        }
        block(Vec3::new(-0.15, 1.0, 0.7), Vec3::new(0.15, 1.0 + head, 1.1));
        block(Vec3::new(-0.03, 0.9, -1.2), Vec3::new(0.03, 0.95, -0.8));
        p
    }

    #[test]
    fn there_are_24_distinct_proper_turns_the_identity_first() {
        let t = quarter_turns();
        assert_eq!(t.len(), 24);
        assert_eq!(t[0], Mat3::IDENTITY);
        for (i, a) in t.iter().enumerate() {
            assert!((a.determinant() - 1.0).abs() < 1e-6);
            assert!(t[i + 1..].iter().all(|b| b != a));
        }
    }

    #[test]
    fn a_mesh_turned_any_way_is_turned_back_and_one_facing_the_template_is_left() {
        let template = animal(0.5);
        let mesh = animal(0.7); // a longer neck
        assert_eq!(mesh_facing(&template, &mesh), None);
        for r in quarter_turns().into_iter().skip(1) {
            let turned: Vec<Vec3> = mesh.iter().map(|p| r * *p).collect();
            let f = mesh_facing(&template, &turned).expect("turned back");
            // The turn found undoes r: the mesh's points land where they were.
            assert!(
                (f.turn * r - Mat3::IDENTITY).abs_diff_eq(Mat3::ZERO, 1e-6),
                "{r:?} -> {:?}",
                f.turn
            );
            assert!(f.overlap > MARGIN * f.unturned);
        }
    }

    #[test]
    fn a_facing_told_by_axes_is_the_turn_that_takes_them_to_up_and_front() {
        assert_eq!(parse_axis("+X"), Some(Vec3::X));
        assert_eq!(parse_axis("x"), Some(Vec3::X));
        assert_eq!(parse_axis(" -z"), Some(-Vec3::Z));
        assert_eq!(parse_axis("+-y"), None);
        assert_eq!(parse_axis("w"), None);
        assert_eq!(told_facing(Vec3::Y, Vec3::Z), Some(Mat3::IDENTITY));
        // Every one of the 24 quarter turns is told by the axes it takes to up and front.
        for r in quarter_turns() {
            let (up, front) = (r.transpose() * Vec3::Y, r.transpose() * Vec3::Z);
            let told = told_facing(up, front).expect("two different axes");
            assert!((told - r).abs_diff_eq(Mat3::ZERO, 1e-6), "{r:?}");
            assert_eq!(told * up, Vec3::Y);
            assert_eq!(told * front, Vec3::Z);
        }
        assert_eq!(
            describe(told_facing(Vec3::Z, -Vec3::Y).unwrap()),
            "its up is +Z and its front -Y"
        );
        assert_eq!(told_facing(Vec3::Y, -Vec3::Y), None);
        assert_eq!(told_facing(Vec3::X, Vec3::X), None);
        assert_eq!(told_facing(Vec3::ONE, Vec3::Z), None);
    }

    #[test]
    fn a_mesh_lying_across_the_template_is_warned_about() {
        let animal = animal(0.5);
        assert_eq!(lies_across(&animal, &animal), None);
        let quarter = Mat3::from_rotation_y(std::f32::consts::FRAC_PI_2);
        let across: Vec<Vec3> = animal.iter().map(|p| quarter * *p).collect();
        let warning = lies_across(&animal, &across).expect("lies across");
        assert!(
            warning.starts_with(
                "the mesh lies across the template (longest along X, the template along Z): if it faces another way"
            ),
            "{warning}"
        );
        assert!(
            lies_across(&across, &animal)
                .unwrap()
                .contains("(longest along Z, the template along X)")
        );
        // Turned round, it lies along the template: nothing to say (which end is the head is not told by a box).
        let round: Vec<Vec3> = animal.iter().map(|p| Vec3::new(-p.x, p.y, -p.z)).collect();
        assert_eq!(lies_across(&animal, &round), None);
        // A body about as wide as long says nothing either way.
        let square = [Vec3::ZERO, Vec3::new(1.0, 1.0, 1.2)];
        assert_eq!(lies_across(&square, &across), None);
        assert_eq!(lies_across(&animal, &[]), None);
    }

    #[test]
    fn turns_are_told_by_where_up_and_front_went() {
        assert_eq!(describe(Mat3::IDENTITY), "its up is +Y and its front +Z");
        // Blender's convention, Z up and facing -Y: a quarter turn about X takes its +Z to +Y and its -Y to +Z.
        let blender = Mat3::from_rotation_x(-std::f32::consts::FRAC_PI_2);
        assert_eq!(describe(blender), "its up is +Z and its front -Y");
        assert_eq!(
            describe(Mat3::from_cols(Vec3::X, Vec3::Z, -Vec3::Y)),
            "its up is -Z and its front +Y"
        );
    }
}
