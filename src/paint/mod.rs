//! Hand editing of weights: the weight brush (settings, dabs, strokes that keep their touched rows) and direct
//! manipulation (solve a vertex's weights so that skinning puts it where the person dragged it). Pure data in,
//! data out, no GUI or GPU: the editor (`app`) places the brush, uploads rows and records the edits.

pub mod brush;
pub mod direct;

pub use direct::{DirectSolve, MAX_CANDIDATES, MoveJoints, solve_move, solve_weights_for_target};
