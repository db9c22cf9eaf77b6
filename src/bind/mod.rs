//! Automatic skin weights from a skeleton: [`bind_weights`] gives every vertex a complete, normalised set of
//! weights. Four methods share the bones, the controls, the falloff and the influence limit; docs/binding.md has
//! their quality against artist weights and Blender's bone heat, and their speed.
//!
//! **The default: geodesic voxel binding** ([`geodesic`]; Dionne and de Lasa, "Geodesic Voxel Binding for
//! Production Character Meshes", SCA 2013). A bone's distance to a vertex is measured through the solid the mesh
//! encloses, not through the air, so an arm's bone is far from the torso beside it, and a shirt and the body under
//! it are one solid. Each step is a stage of the report ([`BindReport::stages`]):
//! 1. **Mesh parts**: coincident vertices welded, the mesh split into connected parts.
//! 2. **Voxels** ([`voxel`]): the solid on a grid of cubic cells, `resolution` (default 128) along the mesh's
//!    longest side: cells a triangle overlaps, cells the flood from the grid's margin cannot reach, and cells the
//!    nonzero winding rule puts inside; robust to triangle soups, layers, many parts and inward winding.
//! 3. **Bones** ([`bones`]): a segment from each joint's pivot to each child's pivot; box-less leaves extended
//!    into the mesh (a lower leg toward an IK foot's pivot), a head on a short neck started where the neck widens
//!    (`widen`). Joints that do not deform are dropped ([`controls`]): those the options mark, those named as
//!    controls, and, with the voxels known, a root whose pivot lies outside the solid and a control hovering over
//!    the rig under it. With several parts, a bone belongs to the parts it lies inside (`parts`; a BVH per part,
//!    `surface`).
//! 4. **Distances**: the solid cells around each bone start at their distance to its segments; a Dijkstra search
//!    over solid cells and their 26 neighbours keeps in each cell the `k` nearest bones (`k` the influence limit,
//!    at most [`geodesic::MAX_LABELS`]), a bone farther than 1.25 × the blend ratio times the cell's nearest
//!    dropped there. A piece of the solid that no bone reaches takes the bones nearest to it.
//! 5. **Weights**, per vertex: a bone's distance is the least, over the eight cell centres around the vertex, of
//!    the cell's distance plus the step from the centre, stretched past a short bone's ends
//!    ([`bones::Segment::end_distance`]; `reach`: an ancestor reaches no further past a descendant's bone than the
//!    descendant does). Only the bones of the vertex's own part count. Then the line falloff (blend ratio 1.5),
//!    the influence limit and normalisation (`falloff`). A plate (a flat, open part: a wing) takes the joint that
//!    lies in it ([`plates`]); an accessory (a part with no bone inside: an eye, a hair card) takes the weights of
//!    the nearest vertex of a part that has one.
//! 6. **Layers** (`layers`): where one part's surface lies over another's (a shirt's hem over the trousers'
//!    waistband), each side takes up to half the other's weights, so the two move as one. The nearest triangle is
//!    searched only in the cells of a 96-cell cube map of normal directions (`facing`) that can hold one facing
//!    within about 26 degrees of the vertex's normal.
//!
//! After binding, `skinbind bind`, `skinbind fit --bind` and the editor run the default clean-up through
//! `adjust::bind_and_clean`, which builds its mesh graph beside the bind: `adjust::clean_on` with
//! `CleanOptions::after_binding` (not part of [`bind_weights`]): rogue removal (a joint's weight on islands cut off
//! from its main region), softening (a Gaussian average of the weights over the surface around each vertex; after
//! the geodesic method only), the limit to `max_influences`, normalisation.
//!
//! **The `line` method** (CSE169, "Skinning" lecture: point-to-line mapping), for every vertex, grid cell by grid
//! cell (`line`): the near bones, within `blend_ratio` times the nearest bone's distance, found exactly with a k-d
//! tree ([`nearest`]) and re-ranked by end distance; only the bones of the vertex's part (a part with no bone
//! inside takes the one bone nearest to it); only the bones whose closest point the straight segment from the
//! vertex reaches without crossing its part's surface (the nearest is kept if every one is hidden); weights
//! `w = r^-power (1 - smoothstep((r - 1) / (blend_ratio - 1)))` with `r = D_j / D1` (weight 1 on the nearest,
//! 0 from `blend_ratio` times it on); the limit and normalisation. **`volume`** weights a vertex by its depth in
//! containment capsules or ellipsoids around the bones (`volumes`, [`joint_volumes`]), and by `line` where it lies
//! in none; **`hybrid`** is the mean of the two.
//!
//! Where things are: `options` ([`BindOptions`], [`BindError`], [`BindReport`]); `run` ([`bind_weights`]: the
//! checks, the choice of method, the deforming bones every method starts from, the report's closing counts). The
//! geodesic method: [`geodesic`], [`voxel`], `reach`, [`plates`], `layers`, `facing`. The line, volume and hybrid
//! methods: `line`, `volumes`. Shared: [`bones`] and `widen` (the bones), [`controls`], `parts` (which bones
//! belong to which part), `surface` (a BVH per part: inside tests, the leaves' extension, visibility), [`nearest`]
//! (near bones, exactly), `falloff` (the falloff, limit and normalisation). [`bind_pose`]: whether a mesh without
//! bindings was modelled in the skeleton file's pose or at rest.

pub mod bind_pose;
pub mod bones;
pub mod controls;
mod facing;
mod falloff;
pub mod geodesic;
mod layers;
mod line;
pub mod nearest;
mod options;
mod parts;
pub mod plates;
mod reach;
mod run;
mod surface;
mod volumes;
pub mod voxel;
mod widen;

pub use options::{
    BindError, BindMethod, BindOptions, BindReport, DEFAULT_RESOLUTION, JointVolume, MAX_RESOLUTION, VolumeShape,
};
pub use run::bind_weights;
pub use volumes::joint_volumes;
