//! Automatic skin weights: point-to-line mapping and containment volumes (CSE169, "Skinning" lecture), with a
//! visibility test against the surface so that weights do not bleed between nearby parts.
//!
//! Pipeline for every vertex `p` (in parallel over vertices, deterministic):
//! 1. **Near bones** ([`nearest`]): every joint whose bone (its segments, [`bones`]) is closer to `p` than
//!    `blend_ratio` times the nearest bone's distance `D1`.
//! 2. **Parts** (option, on by default): when the mesh has several connected parts (after welding coincident
//!    vertices), a bone belongs to a part if one of its points (nine along each segment, less a child's pivot)
//!    lies inside the part
//!    (odd number of crossings of that part's triangles along a ray). A part with no bone inside (a flat
//!    plate, an open sheet: a wing, a hair card) is an accessory attached at a joint: it takes the one bone
//!    that comes nearest to its vertices (ties: the joint whose pivot is nearest); a bone that reaches the part
//!    only at its child's pivot counts as the child. A vertex takes weight only from the bones
//!    of its part (near bones are then taken among those). A wasp's lower leg, a separate tube, keeps off the
//!    next leg's knee even where that knee is nearer. Meshes of more than 4096 parts (triangle soups) are
//!    treated as one part.
//! 3. **Visibility** (option, on by default): a near bone counts only if the straight segment from `p` to the
//!    bone's closest point does not cross the surface of `p`'s part (a BVH per part). This keeps a torso vertex
//!    beside a hanging arm off the arm even where the arm's bone is nearer than the spine, and a finger off its
//!    neighbour. If every near bone is hidden, the nearest is kept, so every vertex is weighted.
//!
//!    Between 2 and 3, near bones are re-ranked by their *end distance* (option `end_distance`, on by default;
//!    [`bones::Segment::end_distance`]): the plain distance beside a bone, longer far past a short bone's ends.
//!    Weights fall off with it; bones are still chosen by the plain distance.
//! 4. **Weights** by method:
//!    - `line`: for visible near bones with (end) distances `D_j` and `D1'` the least of them,
//!      `r_j = D_j / D1'` and `w_j = r_j^-power * (1 - smoothstep((r_j - 1) / (blend_ratio - 1)))`,
//!      `smoothstep(x) = x²(3 - 2x)` on `x` clamped to [0, 1]. The nearest bone has `w = 1`, weights fall smoothly to 0 at `blend_ratio * D1'`,
//!      and they change continuously as the nearest bone changes. Weights under 1% of the nearest bone's are
//!      dropped (before the visibility test, which they would only slow down).
//!    - `volume`: each joint has a containment volume ([`VolumeShape::Capsule`] around its segments, or an
//!      ellipsoid around each segment) of radius `r_j` and length scale `s_j`. A vertex inside one or more
//!      visible volumes is weighted among them by depth (`1 - d/r_j` for a capsule, `1 - q` for an ellipsoid
//!      with normalised radius `q`); a vertex in none falls back to `line`.
//!    - `hybrid`: the mean of the normalised `line` and `volume` weights (just `line` outside every volume).
//! 5. **Limit and normalise**: keep the `max_influences` largest weights (ties: lower joint index), divide by
//!    their sum. `rigid` keeps only the largest, at weight 1.
//!
//! Volume radii: the joint's own setting when given, else half the second-largest extent of its `.skel` box,
//! else 1.25 times the median distance to the bone of the vertices whose nearest bone it is (a quarter of the
//! bone's length if it is nearest to none).
//!
//! Where things are: `options` ([`BindOptions`], [`BindError`], [`BindReport`]); `run` ([`bind_weights`]: the
//! checks, the choice of method, the bones both methods start from, the report's closing counts); `line` (steps 1
//! to 5, grid cell by grid cell); `falloff` (the weights of step 4 and step 5); `surface` (a BVH per part: the
//! visibility and inside tests); `parts` (which bones belong to which part); `volumes` (containment volumes,
//! [`joint_volumes`]); [`bones`], [`nearest`], [`controls`], and the geodesic method ([`geodesic`], [`voxel`],
//! [`plates`], `reach`, `layers`).

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
