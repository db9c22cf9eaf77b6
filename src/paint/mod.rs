//! Hand editing of weights that is not a clean-up operation: for now, direct manipulation (solve a vertex's
//! weights so that skinning puts it where the person dragged it). Pure data in, data out; the editor's brush
//! and weight table sit in `app` over `adjust::ops::set_joint_weight`.

pub mod direct;

pub use direct::{DirectSolve, MAX_CANDIDATES, solve_weights_for_target};
