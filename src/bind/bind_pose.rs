//! Which pose a mesh without bindings was modelled in: the skeleton file's pose, or its rest (every rotation zero).
//!
//! A mesh holds its skeleton inside it in the pose it was modelled in; in another pose the limbs stick out. The
//! CSE169 `.skel` files keep a pose to show in their `pose` lines (the wasp's legs and wings turned by up to 2.3
//! rad) while their skins are modelled at rest, so a new mesh for such a skeleton, bound in the file's pose (what
//! `bind` does for a mesh without bindings), would be bound with its limbs on the wrong bones. glTF skeletons keep
//! their rest rotations in those lines (`convert`), so for them the file's pose is the one.
//!
//! The measure: the share of points along the bones (five a segment, leaf stubs included) that lie in the mesh's
//! solid, voxelised at [`RESOLUTION`] cells along its longest side as the geodesic method does (so soups, parts and
//! inward winding count alike). `bind` warns when the rest holds clearly more of the skeleton than the file's pose
//! does ([`rest_fits_better`]).

use glam::Vec3;

use super::bones::bone_segments;
use super::voxel::{Grid, solid_cells};
use crate::model::Skeleton;
use crate::model::skeleton::{Pose, world_from_joint};

/// Cells along the mesh's longest side: enough to tell a limb inside from one beside the body.
pub const RESOLUTION: usize = 48;

/// How much more of the skeleton (as a share of its bone points) the rest must hold than the file's pose for
/// [`rest_fits_better`] to say so.
pub const MARGIN: f32 = 0.25;

/// The mesh's solid, once, to test poses against.
pub struct Solid {
    grid: Grid,
    solid: Vec<bool>,
}

impl Solid {
    /// The solid of `positions` and `triangles` (None for an empty or flat-less mesh with no solid cell).
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]]) -> Option<Self> {
        let (lo, hi) = crate::model::skin::bounds(positions)?;
        let parts = crate::mesh::connected_parts(positions, triangles, 1e-6 * (hi - lo).length());
        let grid = Grid::new(lo, hi, RESOLUTION);
        let solid = solid_cells(&grid, positions, triangles, &parts);
        solid.iter().any(|&s| s).then_some(Self { grid, solid })
    }

    /// Whether `p` lies in a solid cell.
    pub fn holds(&self, p: Vec3) -> bool {
        let c = self.grid.cell_of(p);
        self.grid.contains(c) && self.solid[self.grid.index(c)]
    }

    /// The share of points along `skel`'s bones in `pose` that lie in the solid (None without bones).
    pub fn share_inside(&self, skel: &Skeleton, pose: &Pose) -> Option<f32> {
        let world = world_from_joint(skel, pose);
        let segments = bone_segments(skel, &world);
        let points: Vec<Vec3> = segments
            .iter()
            .flat_map(|s| (0..5).map(move |k| s.a.lerp(s.b, k as f32 / 4.0)))
            .collect();
        if points.is_empty() {
            return None;
        }
        let inside = points.iter().filter(|&&p| self.holds(p)).count();
        Some(inside as f32 / points.len() as f32)
    }
}

/// How much of the skeleton the mesh holds in a pose and at rest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoseFit {
    /// Share of bone points inside the mesh in the pose tested.
    pub posed: f32,
    /// The same at rest (every rotation zero, the root at its offset).
    pub rest: f32,
}

impl PoseFit {
    /// The warning for a mesh without bindings bound in `pose_name` ("the skeleton file's pose"), ending with
    /// `advice` (what to do if it was modelled at rest); the CLI and the editor give it alike.
    pub fn warning(&self, pose_name: &str, advice: &str) -> String {
        format!(
            "the mesh has no bindings and holds its skeleton better at rest than in {pose_name} ({:.0}% of the \
             bones inside against {:.0}%): if it was modelled at rest, {advice}",
            100.0 * self.rest,
            100.0 * self.posed
        )
    }
}

/// The shares inside, when `pose` (the one a mesh without bindings would be bound in: the file's, or the editor's
/// current pose) is not the rest and the rest holds at least [`MARGIN`] more of the skeleton: the mesh looks
/// modelled at rest. None otherwise (`pose` fits, or no solid or bones).
pub fn rest_fits_better(skel: &Skeleton, pose: &Pose, positions: &[Vec3], triangles: &[[u32; 3]]) -> Option<PoseFit> {
    let rest = Pose::zero(skel);
    if *pose == rest {
        return None;
    }
    let solid = Solid::new(positions, triangles)?;
    let fit = PoseFit {
        posed: solid.share_inside(skel, pose)?,
        rest: solid.share_inside(skel, &rest)?,
    };
    (fit.rest >= fit.posed + MARGIN).then_some(fit)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::deform::{Method, pose_skin};
    use crate::sample::{SampleKind, make_sample};

    /// The sample creature's mesh is modelled at rest while its `.skel` holds a walking pose (limbs swung up to
    /// 1 rad): at rest the mesh holds every bone, in the file's pose under half of them, and that is said. Posed
    /// into the file's pose by its own weights (a mesh modelled in that pose), the file's pose fits and nothing
    /// is said; nor is anything asked of the rest itself.
    #[test]
    fn a_mesh_modelled_at_rest_holds_its_skeleton_at_rest() {
        let s = make_sample(SampleKind::Creature, 3000).unwrap();
        let (skel, skin) = (&s.skeleton, &s.skin);
        let (file, rest) = (Pose::from_file(skel), Pose::zero(skel));
        assert_ne!(file, rest);
        let fit = rest_fits_better(skel, &file, skin.positions(), skin.triangles()).unwrap();
        assert!(fit.rest > 0.95 && fit.posed < 0.6, "{fit:?}");
        assert_eq!(rest_fits_better(skel, &rest, skin.positions(), skin.triangles()), None);
        let (walking, _) = pose_skin(skel, skin, &file, &rest, Method::Linear).unwrap();
        assert_eq!(rest_fits_better(skel, &file, &walking, skin.triangles()), None);
        let solid = Solid::new(&walking, skin.triangles()).unwrap();
        let (held_posed, held_rest) = (
            solid.share_inside(skel, &file).unwrap(),
            solid.share_inside(skel, &rest).unwrap(),
        );
        assert!(held_posed > 0.95 && held_rest < held_posed, "{held_posed} {held_rest}");
    }

    #[test]
    fn an_empty_mesh_says_nothing() {
        let s = make_sample(SampleKind::Creature, 300).unwrap();
        let skel = &s.skeleton;
        assert!(Solid::new(&[], &[]).is_none());
        assert_eq!(rest_fits_better(skel, &Pose::from_file(skel), &[], &[]), None);
    }
}
