//! A `.skel` opened alone over a skin with as many joints: the skin's bindings say where each joint sat when it
//! was bound (`deform::bind_match`). When the new skeleton's joints sit there, it replaces the old one as an edit
//! and the status bar names any joint that now has another name; when they do not, the weights would follow
//! joint numbers onto other joints, so the editor asks: renumber the weights by name or by place (offered only
//! where every joint then sits at its binding), keep them on their numbers, or cancel.
//!
//! An OBJ mesh opened alone has no skeleton of its own: the editor asks whether it goes onto the current skeleton
//! or starts a new one (one root joint in the mesh, to build in the Skeleton mode).

use std::path::PathBuf;

use super::*;
use crate::deform::bind_match::{describe_misplaced, match_bindings, remap_by_name, renumber_bindings};
use crate::model::{Pose, Skeleton};
use crate::rig::remap::{JointMap, Origin};

/// The question waiting for an answer: the skeleton read and what renumberings would fit it.
pub(super) struct SkeletonQuestion {
    skeleton: Skeleton,
    path: PathBuf,
    paths: Vec<PathBuf>,
    warnings: Vec<String>,
    /// What does not sit where (for the message).
    misplaced: String,
    /// Old joint -> new joint, by name and by place, where every joint then sits at its binding.
    by_name: Option<Vec<usize>>,
    by_place: Option<Vec<usize>>,
}

/// An OBJ mesh read alone, waiting for "which skeleton?".
pub(super) struct MeshQuestion {
    paths: Vec<PathBuf>,
    loaded: super::load::Loaded,
}

/// How the weights go over to the new skeleton.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Carry {
    /// Each joint's weights stay with its number.
    Numbers,
    ByName,
    ByPlace,
}

impl SkinbindApp {
    /// The skin's bind pose: its bindings, else the current skeleton in its file pose (what it was bound in).
    fn bind_world(&self) -> Vec<glam::Mat4> {
        match self.doc.skin.as_ref().and_then(|k| k.bindings()) {
            Some(b) => b.to_vec(),
            None => crate::model::world_from_joint(&self.doc.skeleton, &Pose::from_file(&self.doc.skeleton)),
        }
    }

    /// A skeleton with as many joints as the document's, opened alone over its skin: replace it as an edit when
    /// its joints sit where the skin was bound, else ask.
    pub(super) fn open_skeleton_over_skin(
        &mut self,
        skeleton: Skeleton,
        path: PathBuf,
        paths: Vec<PathBuf>,
        warnings: Vec<String>,
    ) {
        let bindings = self.bind_world();
        let Some(m) = match_bindings(&skeleton, &bindings) else {
            return;
        };
        if m.fits() {
            self.settings.add_recent(&paths);
            self.save_settings();
            self.replace_skeleton(skeleton, path, Carry::Numbers, warnings);
            return;
        }
        let fits =
            |map: &Vec<usize>| match_bindings(&skeleton, &renumber_bindings(&bindings, map)).is_some_and(|m| m.fits());
        let by_name = remap_by_name(&self.doc.skeleton, &skeleton).filter(fits);
        let by_place = m.by_place.clone().filter(fits).filter(|p| Some(p) != by_name.as_ref());
        self.skeleton_question = Some(SkeletonQuestion {
            misplaced: describe_misplaced(&skeleton, &m),
            skeleton,
            path,
            paths,
            warnings,
            by_name,
            by_place,
        });
    }

    /// An OBJ mesh read without a skeleton: ask which skeleton it goes onto.
    pub(super) fn open_mesh_alone(&mut self, paths: Vec<PathBuf>, loaded: super::load::Loaded) {
        self.mesh_question = Some(MeshQuestion { paths, loaded });
    }

    /// Whether the editor is asking which skeleton an OBJ mesh goes onto.
    pub fn is_asking_about_mesh(&self) -> bool {
        self.mesh_question.is_some()
    }

    /// "Which skeleton for this mesh?": the current one, a new one to build, or cancel.
    pub(super) fn mesh_modal(&mut self, ctx: &egui::Context, cmds: &mut Vec<Command>) {
        let Some(q) = &self.mesh_question else { return };
        let mesh = q.paths.first().map_or_else(String::new, |p| files::file_name(p));
        let mut answer = None;
        let modal = egui::Modal::new(egui::Id::unique("mesh-skeleton")).show(ctx, |ui| {
            ui.set_max_width(520.0);
            ui.heading("Which skeleton for this mesh?");
            ui.label(format!(
                "{mesh} has no skeleton of its own. It can go onto the current skeleton, {} ({} joints), to be \
                 bound to its joints, or start a new one: one root joint in the mesh, to build by clicking into it.",
                self.doc.name,
                self.doc.skeleton.len()
            ));
            ui.horizontal_wrapped(|ui| {
                if ui
                    .button("Keep the skeleton")
                    .on_hover_text("The mesh replaces the skin, without weights: Bind Skin weights it to these joints")
                    .clicked()
                {
                    answer = Some(Some(false));
                }
                if ui
                    .button("New skeleton")
                    .on_hover_text("One root joint in the middle of the mesh, in the Skeleton mode: click into the mesh to add joints")
                    .clicked()
                {
                    answer = Some(Some(true));
                }
                if ui.button("Cancel").on_hover_text("Open nothing").clicked() {
                    answer = Some(None);
                }
            });
        });
        if modal.should_close() && answer.is_none() {
            answer = Some(None);
        }
        let Some(answer) = answer else { return };
        let Some(q) = self.mesh_question.take() else { return };
        match answer {
            Some(new_skeleton) => {
                self.apply_loaded_now(q.paths, q.loaded);
                if new_skeleton {
                    cmds.push(Command::Rig(rig_state::RigOp::NewRoot));
                    self.viewport.tool = Tool::Skeleton;
                }
            }
            None => self.set_status(format!("Did not open {mesh}"), false),
        }
    }

    /// Whether the editor is asking how to carry the weights over to a skeleton whose joints sit elsewhere.
    pub fn is_asking_about_skeleton(&self) -> bool {
        self.skeleton_question.is_some()
    }

    /// Replace the skeleton as one edit, the weights carried as `carry` says.
    fn replace_skeleton(&mut self, skeleton: Skeleton, path: PathBuf, carry: Carry, warnings: Vec<String>) {
        let map = match carry {
            Carry::Numbers => None,
            Carry::ByName => remap_by_name(&self.doc.skeleton, &skeleton),
            Carry::ByPlace => match_bindings(&skeleton, &self.bind_world()).and_then(|m| m.by_place),
        };
        let renamed: Vec<String> = match &map {
            None => (0..skeleton.len())
                .filter_map(|j| {
                    let (old, new) = (self.doc.skeleton.joint(j)?, skeleton.joint(j)?);
                    (old.name != new.name).then(|| format!("{} is now {}", old.name, new.name))
                })
                .collect(),
            Some(_) => Vec::new(),
        };
        let rig = map.map(|map| {
            let mut origin = vec![Origin::New; map.len()];
            for (old, &new) in map.iter().enumerate() {
                origin[new] = Origin::Kept(old);
            }
            let joints = JointMap {
                origin,
                weights_to: map.clone(),
            };
            let bindings = self
                .doc
                .skin
                .as_ref()
                .and_then(|k| k.bindings())
                .map(|b| renumber_bindings(b, &map));
            let pose = Pose::from_file(&skeleton);
            let edited = crate::rig::Edited {
                rig: crate::rig::Rig::new(skeleton.clone(), bindings, pose),
                map: joints,
            };
            let selected = self.doc.selected.and_then(|j| map.get(j).copied());
            rig_state::RigState::after(&self.doc, &edited, selected)
        });
        let rig = match rig.transpose() {
            Ok(r) => r.map(Box::new),
            Err(e) => {
                self.set_status(format!("{}: cannot renumber the weights: {e}", path.display()), true);
                return;
            }
        };
        let mut before = edit::SkeletonState::of(&self.doc);
        if rig.is_some() {
            before.rig = Some(Box::new(rig_state::RigState::of(&self.doc, true)));
        }
        let after = edit::SkeletonState {
            pose: Pose::from_file(&skeleton),
            skeleton,
            path: Some(path.clone()),
            rig,
        };
        self.history.edit(
            &mut self.doc,
            DocEdit::ReplaceSkeleton {
                before: Box::new(before),
                after: Box::new(after),
            },
        );
        let how = match carry {
            Carry::Numbers if renamed.is_empty() => "; the skin and its weights stay".to_owned(),
            Carry::Numbers => format!(
                "; every joint sits where the skin was bound, so the weights stay with their joints, {} of which \
                 have other names ({})",
                renamed.len(),
                renamed.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                    + if renamed.len() > 3 { ", ..." } else { "" }
            ),
            Carry::ByName => "; the weights follow the joints' names".to_owned(),
            Carry::ByPlace => "; the weights follow the joints' places".to_owned(),
        };
        self.status = Status::with_warnings(
            format!(
                "Replaced the skeleton with {}{how} (Ctrl+Z brings the old one back)",
                path.display()
            ),
            warnings,
        );
    }

    /// "Its joints are not where the skin was bound": renumber by name or place, keep the numbers, or cancel.
    pub(super) fn skeleton_modal(&mut self, ctx: &egui::Context) {
        let Some(q) = &self.skeleton_question else { return };
        let mut answer = None;
        let modal = egui::Modal::new(egui::Id::unique("skeleton-mismatch")).show(ctx, |ui| {
            ui.set_max_width(520.0);
            ui.heading("The joints are not where the skin was bound");
            ui.label(format!(
                "In {}, {}. The skin's weights follow joint numbers: kept as they are, they move other joints.",
                files::file_name(&q.path),
                q.misplaced
            ));
            ui.horizontal_wrapped(|ui| {
                if q.by_name.is_some()
                    && ui
                        .button("Remap by name")
                        .on_hover_text("Give each joint's weights to the new joint of the same name (every joint then sits where the skin was bound)")
                        .clicked()
                {
                    answer = Some(Some(Carry::ByName));
                }
                if q.by_place.is_some()
                    && ui
                        .button("Remap by place")
                        .on_hover_text("Give each joint's weights to the new joint that sits where it was bound")
                        .clicked()
                {
                    answer = Some(Some(Carry::ByPlace));
                }
                if ui
                    .button("Keep joint numbers")
                    .on_hover_text("Replace the skeleton; each weight stays on the joint with its number")
                    .clicked()
                {
                    answer = Some(Some(Carry::Numbers));
                }
                if ui.button("Cancel").on_hover_text("Keep the current skeleton; open nothing").clicked() {
                    answer = Some(None);
                }
            });
            if q.by_name.is_none() && q.by_place.is_none() {
                ui.small("No renumbering by name or place puts every joint where the skin was bound.");
            }
        });
        if modal.should_close() && answer.is_none() {
            answer = Some(None);
        }
        let Some(answer) = answer else { return };
        let Some(q) = self.skeleton_question.take() else { return };
        match answer {
            Some(carry) => {
                self.settings.add_recent(&q.paths);
                self.save_settings();
                self.replace_skeleton(q.skeleton, q.path, carry, q.warnings);
            }
            None => self.set_status(format!("Did not open {}", q.path.display()), false),
        }
    }
}
