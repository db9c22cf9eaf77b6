//! Undoable edits of the [`Document`], for the `undo` crate's [`undo::Record`].
//!
//! Each edit stores absolute before and after values (house style 9), so undo and redo only write data back and
//! never recompute: undoing a DOF edit restores the pose bit for bit. A slider drag writes the pose live and
//! records one edit on release, whose `before` is the value when the drag began. The `Display` text is what the
//! Edit menu shows after "Undo" and "Redo".
//!
//! Loading files is not an edit: it replaces the document and clears the history (see `app::SkinbindApp`).

use std::fmt;

use glam::Vec3;

use super::document::Document;

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
