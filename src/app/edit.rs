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
use crate::model::Row;
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
    /// The whole pose replaced at once (a check finding shown in the pose where it is worst).
    SetPose {
        name: String,
        before: Box<crate::model::Pose>,
        after: Box<crate::model::Pose>,
    },
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
        before: Vec<Row>,
        after: Vec<Row>,
    },
    /// A joint's weight lock turned on or off.
    SetLock {
        joint: usize,
        name: String,
        before: bool,
        after: bool,
    },
    /// A joint set to deform or not.
    SetDeform {
        joint: usize,
        name: String,
        before: bool,
        after: bool,
    },
    /// The skeleton's file pose (its `pose` lines and root offset) set from the current pose: what Save then
    /// writes. Both skeletons are kept whole (they are small).
    SetFilePose {
        before: Box<crate::model::Skeleton>,
        after: Box<crate::model::Skeleton>,
    },
    /// The skeleton replaced by one with as many joints (a `.skel` opened over a skin it fits): the skin, its
    /// weights and the clip stay; the pose becomes the new skeleton's file pose and Save writes to its file.
    ReplaceSkeleton {
        before: Box<SkeletonState>,
        after: Box<SkeletonState>,
    },
    /// The skeleton edited (a joint added, moved, deleted...): everything indexed by joint, before and after
    /// (`app::rig_state`).
    EditRig {
        name: String,
        before: Box<super::rig_state::RigState>,
        after: Box<super::rig_state::RigState>,
    },
    /// A joint's containment volume settings.
    SetVolume {
        joint: usize,
        name: String,
        before: JointVolume,
        after: JointVolume,
    },
}

/// What a skeleton replacement swaps.
#[derive(Clone, Debug, PartialEq)]
pub struct SkeletonState {
    pub skeleton: crate::model::Skeleton,
    pub pose: crate::model::Pose,
    pub path: Option<std::path::PathBuf>,
    /// Everything indexed by joint, where the replacement renumbered the weights (by name or by place).
    pub rig: Option<Box<super::rig_state::RigState>>,
}

impl SkeletonState {
    /// The document's skeleton, pose and skeleton file.
    pub fn of(doc: &Document) -> Self {
        Self {
            skeleton: doc.skeleton.clone(),
            pose: doc.pose.clone(),
            path: doc.paths.skel.clone(),
            rig: None,
        }
    }
}

/// The skin's weights and bindings, as a weights edit stores them.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightsState {
    pub weights: Option<Weights>,
    pub bindings: Option<Vec<Mat4>>,
    /// The joints that deform, where the edit also sets them (a bind that left out a master root); `None`
    /// leaves them as they are.
    pub deform: Option<Vec<bool>>,
}

impl WeightsState {
    /// The document skin's current weights and bindings (`None`s without a skin).
    pub fn of(doc: &Document) -> Self {
        Self {
            weights: doc.skin.as_ref().and_then(|k| k.weights().cloned()),
            bindings: doc.skin.as_ref().and_then(|k| k.bindings().map(<[Mat4]>::to_vec)),
            deform: None,
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
            DocEdit::SetPose { before, after: a, .. } => {
                doc.pose = if after { (**a).clone() } else { (**before).clone() };
            }
            DocEdit::SetWeights { before, after: a, .. } => {
                let state = if after { a } else { before };
                if let Some(skin) = doc.skin.as_mut() {
                    // Both states were taken from or made for this skin, so the counts fit.
                    let w = skin.set_weights(state.weights.clone());
                    let b = skin.set_bindings(state.bindings.clone());
                    debug_assert!(w.is_ok() && b.is_ok(), "a weights edit that does not fit its skin");
                }
                if let Some(d) = state.deform.as_ref().filter(|d| d.len() == doc.deform.len()) {
                    doc.deform.clone_from(d);
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
                let rows: Vec<(u32, Row)> = vertices.iter().copied().zip(rows.iter().cloned()).collect();
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
                if *joint < doc.skeleton.len() {
                    doc.locks.set(*joint, if after { *a } else { *before });
                }
            }
            DocEdit::SetDeform {
                joint,
                before,
                after: a,
                ..
            } => {
                if let Some(d) = doc.deform.get_mut(*joint) {
                    *d = if after { *a } else { *before };
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
            DocEdit::SetFilePose { before, after: a } => {
                doc.skeleton = if after { (**a).clone() } else { (**before).clone() };
                doc.bump_generation();
            }
            DocEdit::EditRig { before, after: a, .. } => {
                if after {
                    a.write(doc)
                } else {
                    before.write(doc)
                }
            }
            DocEdit::ReplaceSkeleton { before, after: a } => {
                let state = if after { a } else { before };
                match &state.rig {
                    Some(rig) => rig.write(doc),
                    None => {
                        doc.skeleton = state.skeleton.clone();
                        doc.pose = state.pose.clone();
                    }
                }
                doc.paths.skel = state.path.clone();
                doc.bump_generation();
            }
        }
    }
}

impl DocEdit {
    /// Bytes this edit holds on the heap (what one undo step costs in memory): a row edit holds only the rows
    /// it touched, so this grows with the vertices touched, not with the mesh.
    pub fn heap_bytes(&self) -> usize {
        let row = |r: &Row| std::mem::size_of::<Row>() + r.capacity() * 8;
        match self {
            DocEdit::SetRows {
                name,
                vertices,
                before,
                after,
            } => name.capacity() + vertices.capacity() * 4 + before.iter().chain(after).map(row).sum::<usize>(),
            DocEdit::SetWeights { name, before, after } => {
                let state = |s: &WeightsState| {
                    s.weights.as_ref().map_or(0, |w| w.heap_bytes())
                        + s.bindings.as_ref().map_or(0, |b| b.capacity() * 64)
                        + s.deform.as_ref().map_or(0, Vec::capacity)
                };
                name.capacity() + state(before) + state(after)
            }
            DocEdit::SetDof { name, .. }
            | DocEdit::SetLock { name, .. }
            | DocEdit::SetDeform { name, .. }
            | DocEdit::SetVolume { name, .. } => name.capacity(),
            DocEdit::SetRootTranslation { .. } => 0,
            DocEdit::SetPose { name, before, after } => {
                name.capacity() + (before.dofs.capacity() + after.dofs.capacity()) * std::mem::size_of::<Vec3>()
            }
            DocEdit::SetFilePose { before, after } => skeleton_bytes(before) + skeleton_bytes(after),
            DocEdit::EditRig { name, before, after } => name.capacity() + before.heap_bytes() + after.heap_bytes(),
            DocEdit::ReplaceSkeleton { before, after } => {
                let state = |s: &SkeletonState| {
                    skeleton_bytes(&s.skeleton)
                        + s.pose.dofs.capacity() * 12
                        + s.rig.as_ref().map_or(0, |r| r.heap_bytes())
                };
                state(before) + state(after)
            }
        }
    }
}

fn skeleton_bytes(s: &crate::model::Skeleton) -> usize {
    s.joints()
        .iter()
        .map(|j| std::mem::size_of_val(j) + j.name.capacity())
        .sum()
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
            DocEdit::SetWeights { name, .. }
            | DocEdit::SetRows { name, .. }
            | DocEdit::SetPose { name, .. }
            | DocEdit::EditRig { name, .. } => f.write_str(name),
            DocEdit::SetLock { name, after, .. } => {
                write!(f, "{} {name}'s weights", if *after { "lock" } else { "unlock" })
            }
            DocEdit::SetDeform { name, after, .. } => {
                write!(f, "{} {name}", if *after { "let deform:" } else { "stop deforming:" })
            }
            DocEdit::SetVolume { name, .. } => write!(f, "change {name}'s volume"),
            DocEdit::SetFilePose { .. } => write!(f, "set the file pose from the current pose"),
            DocEdit::ReplaceSkeleton { after, .. } => {
                match after.path.as_ref().and_then(|p| p.file_name()) {
                    Some(n) => write!(f, "replace the skeleton with {}", n.to_string_lossy())?,
                    None => write!(f, "replace the skeleton")?,
                }
                if after.rig.is_some() {
                    write!(f, ", weights renumbered")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::SampleKind;

    /// One random edit of `doc`, made the way the editor makes it (through the same row functions).
    fn random_edit(doc: &Document, kind: u8, a: u32, b: u32, x: f32) -> Option<DocEdit> {
        let joints = doc.skeleton.len();
        let j = a as usize % joints;
        match kind % 6 {
            0 => Some(DocEdit::SetDof {
                joint: j,
                axis: b as usize % 3,
                name: doc.joint_label(j),
                before: doc.pose.dofs[j][b as usize % 3],
                after: x * 3.0 - 1.5,
            }),
            1 => {
                let w = doc.skin.as_ref()?.weights()?;
                let start = b as usize % w.len();
                let vertices: Vec<u32> = (start..(start + 1 + a as usize % 20).min(w.len()))
                    .map(|v| v as u32)
                    .collect();
                let mut before = Vec::new();
                let mut after = Vec::new();
                for &v in &vertices {
                    let mut r = Vec::new();
                    w.row_pairs(v as usize, &mut r);
                    before.push(r.clone());
                    crate::adjust::ops::set_joint_weight(&mut r, j as u16, x, &doc.locks);
                    after.push(r);
                }
                Some(DocEdit::SetRows {
                    name: "rows".into(),
                    vertices,
                    before,
                    after,
                })
            }
            2 => Some(DocEdit::SetLock {
                joint: j,
                name: doc.joint_label(j),
                before: doc.is_locked(j),
                after: !doc.is_locked(j),
            }),
            3 => Some(DocEdit::SetVolume {
                joint: j,
                name: doc.joint_label(j),
                before: doc.volumes[j],
                after: JointVolume {
                    radius: (b % 2 == 0).then_some(0.01 + x),
                    length_scale: 0.5 + x,
                },
            }),
            5 => {
                let mut after = doc.pose.clone();
                for d in &mut after.dofs {
                    *d += Vec3::splat(x - 0.5);
                }
                Some(DocEdit::SetPose {
                    name: "pose".into(),
                    before: Box::new(doc.pose.clone()),
                    after: Box::new(after),
                })
            }
            _ => {
                let w = doc.skin.as_ref()?.weights()?;
                let (pruned, _) = crate::adjust::ops::prune(w, 0.05 + 0.2 * x, &doc.locks);
                Some(DocEdit::SetWeights {
                    name: "prune".into(),
                    before: Box::new(WeightsState::of(doc)),
                    after: Box::new(WeightsState {
                        weights: Some(pruned),
                        bindings: doc.skin.as_ref()?.bindings().map(<[Mat4]>::to_vec),
                        deform: None,
                    }),
                })
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Any sequence of edits, then undoing them all, gives back the original document exactly; redoing them
        /// all gives the edited one exactly.
        #[test]
        fn undoing_every_edit_restores_the_document_exactly(
            steps in proptest::collection::vec((0u8..6, 0u32..1000, 0u32..1000, 0.0f32..1.0), 1..25)
        ) {
            let mut doc = Document::sample(SampleKind::Arm, 300).unwrap();
            let original = doc.clone();
            let mut record = undo::Record::new();
            for (kind, a, b, x) in steps {
                if let Some(e) = random_edit(&doc, kind, a, b, x) {
                    record.edit(&mut doc, e);
                }
            }
            let edited = doc.clone();
            while record.can_undo() {
                record.undo(&mut doc);
            }
            let same = |a: &Document, b: &Document| {
                a.pose == b.pose && a.skin == b.skin && a.locks == b.locks && a.volumes == b.volumes && a.deform == b.deform
            };
            proptest::prop_assert!(same(&doc, &original));
            while record.can_redo() {
                record.redo(&mut doc);
            }
            proptest::prop_assert!(same(&doc, &edited));
        }
    }

    #[test]
    fn a_row_edit_costs_memory_in_proportion_to_the_vertices_it_touched() {
        let big = Document::sample(SampleKind::Creature, 200_000).unwrap();
        let small = Document::sample(SampleKind::Creature, 2_000).unwrap();
        // The same 20-vertex edit on a 100x larger mesh costs the same, and at most 128 bytes a vertex (its
        // index, and two rows of a few influences with their headers) plus the name.
        let cost = |doc: &Document, n: u32| random_edit(doc, 1, n - 1, 0, 0.5).unwrap().heap_bytes();
        let (a, b, c) = (cost(&small, 20), cost(&big, 20), cost(&small, 2));
        assert_eq!(a, b);
        assert!(a <= 20 * 128 + 32 && c <= 2 * 128 + 32 && a > 5 * c, "{a} vs {c}");
    }

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
