//! Weight clean-up: pure functions over a mesh and its weights, used by `skinbind clean`, by `skinbind bind`
//! after binding, and by the editor.
//!
//! - [`rows`]: joint locks, normalising a vertex around its locked joints, parallel row building.
//! - [`ops`]: prune small weights, limit influences, normalise.
//! - [`graph`]: the welded vertex graph (seams joined), uniform and cotangent edge weights.
//! - [`smooth`]: Laplacian smoothing over that graph, with locks and a vertex mask.
//! - [`soften`]: a Gaussian average of the weights over a geometric radius along the surface (after binding).
//! - [`clean`]: the pipeline (smooth, rogue, soften, prune, limit, normalise), each step optional and timed.
//! - [`rogue`]: removal of a joint's weight on islands cut off from its main region.
//! - [`bind_clean`]: a bind followed by its clean-up, with the graph built beside the bind (`skinbind bind`,
//!   `skinbind fit --bind` and the editor's Bind Skin).
//! - [`mirror`]: pair joints with their mirror partners (by name, then position) and mirror weights across a
//!   plane (copy one side onto the other, or flip).
//!
//! Every operation returns new [`crate::model::Weights`] in which each weighted vertex sums to 1 (within a few
//! f32 ulps) and locked joints keep their weights, unless a vertex could not otherwise sum to 1 (counted in the
//! operation's report).

pub mod bind_clean;
pub mod clean;
pub mod graph;
pub mod mirror;
pub mod ops;
pub mod rogue;
pub mod rows;
pub mod smooth;
pub mod soften;

pub use bind_clean::{BindAndClean, BindAndCleanError, BoundAndCleaned, bind_and_clean};
pub use clean::{CleanOptions, CleanReport, clean, clean_on};
pub use graph::MeshGraph;
pub use mirror::{Axis, JointMirror, MirrorMode, MirrorReport, mirror_joints, mirror_weights};
pub use ops::{RowReport, limit, normalise, prune};
pub use rogue::{Island, RogueReport, remove_rogue};
pub use rows::Locks;
pub use smooth::{SmoothOptions, SmoothReport, SmoothScheme, smooth};
pub use soften::{SoftenPlan, SoftenReport, soften, soften_with};
