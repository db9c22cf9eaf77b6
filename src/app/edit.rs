//! Undoable edits of the [`Document`], for the `undo` crate's [`undo::Record`].
//!
//! Each edit stores absolute before and after values (house style 9), so undo and redo only write data back and
//! never recompute: undoing a DOF edit restores the pose bit for bit. A slider drag writes the pose live and
//! records one edit on release, whose `before` is the value when the drag began. The `Display` text is what the
//! Edit menu shows after "Undo" and "Redo".
//!
//! Loading files is not an edit: it replaces the document and clears the history (see `app::SkinbindApp`).

use std::fmt;

use glam::{Mat4, Vec3};

use super::document::Document;
use crate::bind::JointVolume;
use crate::model::Weights;

const AXES: [&str; 3] = ["x", "y", "z"];

#[derive(Clone, Debug, PartialEq)]
pub enum DocEdit {
    /// One rotation of one joint, in radians, already clamped to the joint's limits.
    SetDof {
        joint: usize,
        /// 0 = x, 1 = y, 2 = z.
        axis: usize,
        /// The joint's name, for the history text.
        name: String,
        before: f32,
        after: f32,
    },
    /// The root translation (the pose's replacement for the root's offset).
    SetRootTranslation { before: Vec3, after: Vec3 },
    /// The whole skin's weights (and bindings) replaced: a bind or a clean-up run. Both sides are kept whole,
    /// since such a run may touch every vertex.
    SetWeights {
        /// What was done, for the history: "bind (line)", "smooth weights"...
        name: String,
        before: Box<WeightsState>,
        after: Box<WeightsState>,
    },
    /// Some vertices' weights replaced (a brush stroke, a weight table edit): only the touched rows are stored,
    /// before and after, so memory goes with the vertices touched.
    SetRows {
        name: String,
        /// Ascending, unique.
        vertices: Vec<u32>,
        before: Vec<Vec<(u16, f32)>>,
        after: Vec<Vec<(u16, f32)>>,
    },
    /// A joint's weight lock turned on or off.
    SetLock {
        joint: usize,
        name: String,
        before: bool,
        after: bool,
    },
    /// A joint's containment volume settings.
    SetVolume {
        joint: usize,
        name: String,
        before: JointVolume,
        after: JointVolume,
    },
}

/// The skin's weights and bindings, as a weights edit stores them.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightsState {
    pub weights: Option<Weights>,
    pub bindings: Option<Vec<Mat4>>,
}

impl WeightsState {
    /// The document skin's current weights and bindings (`None`s without a skin).
    pub fn of(doc: &Document) -> Self {
        Self {
            weights: doc.skin.as_ref().and_then(|k| k.weights().cloned()),
            bindings: doc.skin.as_ref().and_then(|k| k.bindings().map(<[Mat4]>::to_vec)),
        }
    }
}

impl DocEdit {
    fn write(&self, doc: &mut Document, after: bool) {
        match self {
            DocEdit::SetDof {
                joint,
                axis,
                before,
                after: a,
                ..
            } => {
                if let Some(d) = doc.pose.dofs.get_mut(*joint) {
                    if *axis < 3 {
                        d[*axis] = if after { *a } else { *before };
                    }
                }
            }
            DocEdit::SetRootTranslation { before, after: a } => {
                doc.pose.root_translation = if after { *a } else { *before };
            }
            DocEdit::SetWeights { before, after: a, .. } => {
                let state = if after { a } else { before };
                if let Some(skin) = doc.skin.as_mut() {
                    // Both states were taken from or made for this skin, so the counts fit.
                    let w = skin.set_weights(state.weights.clone());
                    let b = skin.set_bindings(state.bindings.clone());
                    debug_assert!(w.is_ok() && b.is_ok(), "a weights edit that does not fit its skin");
                }
                doc.bump_generation();
            }
            DocEdit::SetRows {
                vertices,
                before,
                after: a,
                ..
            } => {
                let rows = if after { a } else { before };
                let Some(skin) = doc.skin.as_mut() else {
                    return;
                };
                let Some(w) = skin.weights() else {
                    return;
                };
                let rows: Vec<(u32, Vec<(u16, f32)>)> = vertices.iter().copied().zip(rows.iter().cloned()).collect();
                match w.with_rows(&rows) {
                    Ok(w) => {
                        let ok = skin.set_weights(Some(w));
                        debug_assert!(ok.is_ok());
                        doc.weights_version = doc.weights_version.wrapping_add(1);
                        doc.changed_rows.extend_from_slice(vertices);
                    }
                    Err(e) => debug_assert!(false, "a row edit that does not fit its weights: {e}"),
                }
            }
            DocEdit::SetLock {
                joint,
                before,
                after: a,
                ..
            } => {
                if let Some(l) = doc.locks.get_mut(*joint) {
                    *l = if after { *a } else { *before };
                }
            }
            DocEdit::SetVolume {
                joint,
                before,
                after: a,
                ..
            } => {
                if let Some(v) = doc.volumes.get_mut(*joint) {
                    *v = if after { *a } else { *before };
                }
            }
        }
    }
}

impl undo::Edit for DocEdit {
    type Target = Document;
    type Output = ();

    fn edit(&mut self, target: &mut Document) {
        self.write(target, true);
    }

    fn undo(&mut self, target: &mut Document) {
        self.write(target, false);
    }
}

impl fmt::Display for DocEdit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocEdit::SetDof { axis, name, .. } => {
                write!(f, "rotate {name} about {}", AXES.get(*axis).copied().unwrap_or("?"))
            }
            DocEdit::SetRootTranslation { .. } => write!(f, "move the root"),
            DocEdit::SetWeights { name, .. } | DocEdit::SetRows { name, .. } => f.write_str(name),
            DocEdit::SetLock { name, after, .. } => {
                write!(f, "{} {name}'s weights", if *after { "lock" } else { "unlock" })
            }
            DocEdit::SetVolume { name, .. } => write!(f, "change {name}'s volume"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::SampleKind;

    #[test]
    fn undo_and_redo_swap_the_stored_values() {
        let mut doc = Document::sample(SampleKind::Arm, 300).unwrap();
        let original = doc.pose.clone();
        let mut record = undo::Record::new();
        let before = doc.pose.dofs[1][2];
        record.edit(
            &mut doc,
            DocEdit::SetDof {
                joint: 1,
                axis: 2,
                name: "elbow".into(),
                before,
                after: 0.25,
            },
        );
        assert_eq!(doc.pose.dofs[1][2], 0.25);
        assert!(!record.is_saved());
        record.undo(&mut doc);
        assert_eq!(doc.pose, original);
        assert!(record.is_saved());
        record.redo(&mut doc);
        assert_eq!(doc.pose.dofs[1][2], 0.25);
        assert_eq!(record.undo_string().as_deref(), Some("rotate elbow about z"));
    }
}
