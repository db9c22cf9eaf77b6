//! Weight clean-up: pure functions over a mesh and its weights, used by `skinbind clean`, by `skinbind bind`
//! after binding, and by the editor.
//!
//! - [`rows`]: joint locks, normalising a vertex around its locked joints, parallel row building.
//! - [`ops`]: prune small weights, limit influences, normalise.
//! - [`mirror`]: pair joints with their mirror partners (by name, then position) and mirror weights across a
//!   plane (copy one side onto the other, or flip).
//!
//! Every operation returns new [`crate::model::Weights`] in which each weighted vertex sums to 1 (within a few
//! f32 ulps) and locked joints keep their weights, unless a vertex could not otherwise sum to 1 (counted in the
//! operation's report).

pub mod mirror;
pub mod ops;
pub mod rows;

pub use ops::{RowReport, limit, normalise, prune};
pub use rows::Locks;
