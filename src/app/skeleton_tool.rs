//! The Skeleton mode (Tab; Blender's armature Edit Mode, Maya's Joint Tool): the view shows the edit pose (the rest
//! pose, or the file pose a glTF model was bound in) and returns to the pose on leaving. A click on the mesh adds
//! a joint in the middle of the solid under the pointer (halfway between where the view ray enters and leaves the
//! surface: Maya's projected centre); off the mesh, at the selected joint's depth. With a joint selected the new
//! one is its child, so clicks down an arm draw the chain. A press on a joint's dot selects it and a drag moves
//! it in the plane facing the view (Shift: snapped to the middle of the solid; Ctrl: its children stay), written
//! live and recorded as one edit on release. Every change is one [`DocEdit::EditRig`].

use glam::{Vec2, Vec3};

use super::rig_state::{RigOp, RigState, rig_of};
use super::{Command, DocEdit, SkinbindApp, Tool, ViewportResponse, surface::PosedSurface};
use crate::model::{Pose, Skeleton};
use crate::rig::symmetry::{self, Side};
use crate::rig::{self, Edited};

/// Screen distance (points) within which a press takes a joint's dot.
const PICK_RADIUS: f32 = 10.0;

/// The Skeleton mode's state between frames.
#[derive(Default)]
pub(super) struct SkeletonTool {
    /// Apply adds, moves, deletes and renames to the other side's counterpart too.
    pub x_mirror: bool,
    /// The pose shown before the mode was entered (by joint name, to come back to after joints change), and
    /// the root's offset then.
    saved: Option<SavedPose>,
    drag: Option<JointDrag>,
    /// Joints moved since the last bind, for the status bar's offer to bind them again.
    pub moved: Vec<String>,
    /// The mesh's voxelised solid for the "outside the mesh" warning, and which mesh it is of.
    solid: Option<(MeshKey, Option<crate::rig::fit_solid::FitSolid>)>,
    /// The panel's warnings, and the document generation and pose they were made for (the panel asks every
    /// frame; they change only with the skeleton, the mesh or the pose).
    warnings: Option<(u64, Pose, Vec<crate::rig::warnings::RigWarning>)>,
}

/// What tells one mesh from another cheaply: counts and the bits of its first and last positions (the skin's
/// stored positions do not change under skeleton edits).
type MeshKey = (usize, usize, [u32; 6]);

fn mesh_key(skin: &crate::model::Skin) -> MeshKey {
    let p = skin.positions();
    let (a, b) = (
        p.first().copied().unwrap_or_default(),
        p.last().copied().unwrap_or_default(),
    );
    let bits = [a.x, a.y, a.z, b.x, b.y, b.z].map(f32::to_bits);
    (p.len(), skin.triangles().len(), bits)
}

struct SavedPose {
    pose: Pose,
    names: Vec<String>,
    root_offset: Vec3,
}

/// A joint being dragged: the rig and document state when the drag began, and the plane it moves in.
struct JointDrag {
    joint: usize,
    start_rig: rig::Rig,
    before: RigState,
    pivot: Vec3,
    moved: bool,
}

impl SkeletonTool {
    /// Whether the mode is on (its pose shown).
    pub fn active(&self) -> bool {
        self.saved.is_some()
    }
}

impl SkinbindApp {
    /// Enter or leave the mode as the tool changed, then handle the view's pointer: once per frame.
    pub(super) fn skeleton_frame(&mut self, response: &ViewportResponse, cmds: &mut Vec<Command>) {
        let on = self.viewport.tool == Tool::Skeleton;
        if on != self.skeleton.active() {
            if on {
                self.enter_skeleton_mode()
            } else {
                self.leave_skeleton_mode()
            }
        }
        if !on {
            return;
        }
        let (Some(pointer), Some((o, d))) = (response.pointer, response.pointer_ray) else {
            return;
        };
        if response.primary_pressed {
            let world = self.doc.world_from_joint();
            let camera = self.viewport.camera;
            let hit = (0..self.doc.skeleton.len())
                .filter_map(|j| {
                    let (p, _) = camera.project(world[j].w_axis.truncate(), response.size)?;
                    let dist = p.distance(pointer);
                    (dist <= PICK_RADIUS).then_some((dist, j))
                })
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            if let Some((_, j)) = hit {
                self.doc.select(Some(j));
                self.skeleton.drag = Some(JointDrag {
                    joint: j,
                    start_rig: rig_of(&self.doc),
                    before: RigState::of(&self.doc, false),
                    pivot: world[j].w_axis.truncate(),
                    moved: false,
                });
            }
        }
        if response.primary_down {
            self.drag_joint(o, d, response);
            return;
        }
        if let Some(drag) = self.skeleton.drag.take() {
            if drag.moved {
                let name = format!("move {}", self.doc.joint_label(drag.joint));
                self.skeleton.moved.push(self.doc.joint_label(drag.joint));
                let after = Box::new(RigState::of(&self.doc, false));
                cmds.push(Command::Record(DocEdit::EditRig {
                    name,
                    before: Box::new(drag.before),
                    after,
                }));
            }
            return;
        }
        if response.primary_clicked {
            let at = self.solid_middle(o, d).unwrap_or_else(|| self.at_selected_depth(o, d));
            cmds.push(Command::Rig(RigOp::Add(at)));
        }
    }

    /// While a joint is dragged: its pivot where the pointer ray meets the plane facing the view (or the middle
    /// of the solid with Shift), written live from the rig as the drag began.
    fn drag_joint(&mut self, o: Vec3, d: Vec3, response: &ViewportResponse) {
        let Some(pivot) = self.skeleton.drag.as_ref().map(|g| g.pivot) else {
            return;
        };
        let n = (self.viewport.camera.eye() - pivot).normalize_or_zero();
        let denom = d.dot(n);
        if denom.abs() < 1e-9 {
            return;
        }
        let mut target = o + d * ((pivot - o).dot(n) / denom);
        if response.modifiers.shift {
            if let Some(m) = self.solid_middle(o, d) {
                target = m;
            }
        }
        let Some(drag) = self.skeleton.drag.as_ref() else {
            return;
        };
        let (joint, children_stay) = (drag.joint, response.modifiers.ctrl || response.modifiers.command);
        let edited = if self.skeleton.x_mirror {
            symmetry::move_mirrored(&drag.start_rig, joint, target, children_stay)
        } else {
            rig::edit::move_joint(&drag.start_rig, joint, target, children_stay)
        };
        let state = edited
            .map_err(|e| e.to_string())
            .and_then(|e| RigState::after(&self.doc, &e, Some(joint)));
        match state {
            Ok(state) => {
                state.write(&mut self.doc);
                self.world = self.doc.world_from_joint();
                if let Some(drag) = self.skeleton.drag.as_mut() {
                    drag.moved = true;
                }
            }
            Err(e) => self.set_status(format!("Cannot move the joint: {e}"), true),
        }
    }

    /// The Skeleton panel's warnings (none outside the mode). The solid for "outside the mesh" is the skin's
    /// stored (bind-pose) mesh, voxelised once per mesh.
    pub(super) fn skeleton_warnings(&mut self) -> Vec<crate::rig::warnings::RigWarning> {
        if self.viewport.tool != Tool::Skeleton {
            return Vec::new();
        }
        if let Some((generation, pose, w)) = &self.skeleton.warnings {
            if *generation == self.doc.generation && *pose == self.doc.pose {
                return w.clone();
            }
        }
        if let Some(skin) = &self.doc.skin {
            let key = mesh_key(skin);
            if self.skeleton.solid.as_ref().is_none_or(|(k, _)| *k != key) {
                // The fit's solid, at its resolution: a joint the fit put inside is not warned about.
                let resolution = crate::rig::fit::FitOptions::default().resolution;
                let solid = crate::rig::fit_solid::FitSolid::new(skin.positions(), skin.triangles(), resolution);
                self.skeleton.solid = Some((key, solid));
            }
        }
        let solid = match (&self.doc.skin, &self.skeleton.solid) {
            (Some(_), Some((_, Some(s)))) => Some(s),
            _ => None,
        };
        let inside = |p: Vec3| solid.is_some_and(|s| s.holds(p));
        let inside: Option<&dyn Fn(Vec3) -> bool> = solid.map(|_| &inside as &dyn Fn(Vec3) -> bool);
        // Warnings read pivots only: the rig without its bindings.
        let rig = crate::rig::Rig::new(self.doc.skeleton.clone(), None, self.doc.pose.clone());
        let warnings = crate::rig::warnings::rig_warnings(&rig, inside);
        self.skeleton.warnings = Some((self.doc.generation, self.doc.pose.clone(), warnings.clone()));
        warnings
    }

    /// The middle of the solid under the ray: halfway between where it enters the posed surface and where it
    /// leaves it (the next hit beyond the first), or the entry point on an open surface.
    fn solid_middle(&mut self, o: Vec3, d: Vec3) -> Option<Vec3> {
        PosedSurface::refresh(&mut self.surface, &self.doc);
        let surface = self.surface.as_ref()?;
        let enter = surface.ray_cast(o, d)?;
        let scale = self
            .doc
            .skin
            .as_ref()
            .and_then(|k| k.bounds())
            .map_or(1.0, |(a, b)| (b - a).length());
        let eps = scale.max(1e-6) * 1e-5;
        let leave = surface.ray_cast(enter.point + d * eps, d);
        Some(match leave {
            Some(l) => (enter.point + l.point) * 0.5,
            None => enter.point,
        })
    }

    /// Where the ray meets the plane facing the view through the selected joint (or the root).
    fn at_selected_depth(&self, o: Vec3, d: Vec3) -> Vec3 {
        let j = self.doc.selected.unwrap_or(0);
        let pivot = self
            .doc
            .world_from_joint()
            .get(j)
            .map_or(Vec3::ZERO, |m| m.w_axis.truncate());
        let n = (self.viewport.camera.eye() - pivot).normalize_or_zero();
        let denom = d.dot(n);
        if denom.abs() < 1e-9 {
            return pivot;
        }
        o + d * ((pivot - o).dot(n) / denom)
    }

    fn enter_skeleton_mode(&mut self) {
        let rig = rig_of(&self.doc);
        self.skeleton.saved = Some(SavedPose {
            pose: self.doc.pose.clone(),
            names: names(&self.doc.skeleton),
            root_offset: self.doc.skeleton.joints()[0].offset,
        });
        self.playback.playing = false;
        self.doc.pose = rig::edit_pose(&self.doc.skeleton, rig.bindings.as_deref());
        self.world = self.doc.world_from_joint();
    }

    /// Back to the pose shown before: each joint's rotation by name (a new joint at zero), the root moved as
    /// its offset was.
    fn leave_skeleton_mode(&mut self) {
        self.skeleton.drag = None;
        let Some(saved) = self.skeleton.saved.take() else {
            return;
        };
        let skel = &self.doc.skeleton;
        let mut pose = Pose::zero(skel);
        for (k, j) in skel.joints().iter().enumerate() {
            if let Some(i) = saved.names.iter().position(|n| *n == j.name) {
                pose.dofs[k] = j.clamp3(saved.pose.dofs.get(i).copied().unwrap_or(Vec3::ZERO));
            }
        }
        pose.root_translation = saved.pose.root_translation + (skel.joints()[0].offset - saved.root_offset);
        self.doc.pose = pose;
        self.world = self.doc.world_from_joint();
    }

    /// Apply one skeleton command as one undoable edit (with X-mirror where it is on).
    pub(super) fn apply_rig(&mut self, ctx: &egui::Context, op: RigOp) {
        if let RigOp::Template(kind) = op {
            self.new_from_template(Some(kind));
            return;
        }
        if let RigOp::Fit(kind) = op {
            self.start_fit(ctx, kind);
            return;
        }
        if op == RigOp::FitFile {
            self.pick_fit_template(ctx);
            return;
        }
        if op == RigOp::NewRoot {
            self.new_from_template(None);
            return;
        }
        let rig = rig_of(&self.doc);
        let mirror = self.skeleton.x_mirror;
        let label = |j: usize| self.doc.joint_label(j);
        let result: Result<(Edited, Option<usize>, String), rig::EditError> = match &op {
            RigOp::Add(at) => {
                let parent = self.doc.selected.unwrap_or(0);
                let name = crate::model::names::unique("joint", |c| !rig.skeleton.find(c).is_empty());
                if mirror {
                    symmetry::add_mirrored(&rig, parent, *at, &name).map(|(e, k)| {
                        let n = e.rig.skeleton.joints()[k[0]].name.clone();
                        (e, Some(k[0]), format!("add joint {n}"))
                    })
                } else {
                    rig::add_joint(&rig, parent, *at, &name).map(|(e, k)| (e, Some(k), format!("add joint {name}")))
                }
            }
            RigOp::Move {
                joint,
                to,
                children_stay,
            } => {
                let e = if mirror {
                    symmetry::move_mirrored(&rig, *joint, *to, *children_stay)
                } else {
                    rig::move_joint(&rig, *joint, *to, *children_stay)
                };
                self.skeleton.moved.push(label(*joint));
                e.map(|e| (e, Some(*joint), format!("move {}", label(*joint))))
            }
            RigOp::Insert(j) => {
                rig::insert_joint(&rig, *j).map(|(e, k)| (e, Some(k), format!("insert a joint above {}", label(*j))))
            }
            RigOp::Delete(j) => {
                let e = if mirror {
                    symmetry::delete_mirrored(&rig, *j)
                } else {
                    rig::delete_joint(&rig, *j)
                };
                let parent = self.doc.skeleton.joints().get(*j).and_then(|x| x.parent);
                e.map(|e| {
                    let sel = parent.and_then(|p| e.map.new_index(p));
                    (e, sel, format!("delete {}", label(*j)))
                })
            }
            RigOp::Duplicate(j) => {
                rig::duplicate_chain(&rig, *j).map(|(e, k)| (e, Some(k), format!("duplicate {}", label(*j))))
            }
            RigOp::Reparent { joint, parent } => rig::reparent(&rig, *joint, *parent).map(|e| {
                let sel = e.map.new_index(*joint);
                (e, sel, format!("parent {} to {}", label(*joint), label(*parent)))
            }),
            RigOp::Rename { joint, name } => {
                let e = if mirror {
                    symmetry::rename_mirrored(&rig, *joint, name)
                } else {
                    rig::rename_joint(&rig, *joint, name)
                };
                e.map(|e| (e, Some(*joint), format!("rename {} to {name}", label(*joint))))
            }
            RigOp::SetLimits { joint, limits } => rig::edit::set_limits(&rig, *joint, *limits)
                .map(|e| (e, Some(*joint), format!("set {}'s limits", label(*joint)))),
            RigOp::SetBox { joint, min, max } => rig::edit::set_box(&rig, *joint, *min, *max)
                .map(|e| (e, Some(*joint), format!("set {}'s box", label(*joint)))),
            RigOp::Symmetrize(side) => symmetry::symmetrize(&rig, *side).map(|e| {
                let from = if *side == Side::Left { "left" } else { "right" };
                (e, self.doc.selected, format!("symmetrize from the {from} side"))
            }),
            RigOp::Template(_) | RigOp::NewRoot | RigOp::Fit(_) | RigOp::FitFile => return,
        };
        match result {
            Ok((edited, selected, name)) => {
                // The joints whose bones this edit can move, for the offer to bind their region again.
                let touched: Vec<usize> = match &op {
                    RigOp::Move { joint, .. } | RigOp::Reparent { joint, .. } => vec![*joint],
                    RigOp::Insert(j) | RigOp::Delete(j) => self
                        .doc
                        .skeleton
                        .joints()
                        .get(*j)
                        .and_then(|x| x.parent)
                        .into_iter()
                        .chain([*j])
                        .collect(),
                    RigOp::Symmetrize(_) => (0..self.doc.skeleton.len()).collect(),
                    _ => Vec::new(),
                };
                for j in touched {
                    let name = self.doc.joint_label(j);
                    if !self.skeleton.moved.contains(&name) {
                        self.skeleton.moved.push(name);
                    }
                }
                self.record_rig(&edited, selected, name);
            }
            Err(e) => self.set_status(rig_error(&e.to_string()), true),
        }
    }

    /// How many joints have moved since the last bind of a weighted skin (the status bar offers to bind their
    /// region again).
    pub(super) fn moved_joints(&self) -> usize {
        let weighted = self.doc.skin.as_ref().is_some_and(|k| k.weights().is_some());
        if weighted { self.skeleton.moved.len() } else { 0 }
    }

    /// Bind again the region of the joints moved since the last bind: the vertices with weight on any of them,
    /// their parents or their children, selected and bound as a selection (one edit, the rest of the skin kept).
    pub(super) fn rebind_moved(&mut self, ctx: &egui::Context) {
        let skel = &self.doc.skeleton;
        let mut joints: Vec<usize> = Vec::new();
        for name in std::mem::take(&mut self.skeleton.moved) {
            for j in skel.find(&name) {
                joints.push(j);
                joints.extend(skel.joints()[j].parent);
                joints.extend_from_slice(skel.children(j));
            }
        }
        let Some(w) = self.doc.skin.as_ref().and_then(|k| k.weights()) else {
            return;
        };
        let mut mark = vec![false; skel.len()];
        for j in joints {
            if let Some(m) = mark.get_mut(j) {
                *m = true;
            }
        }
        let region: Vec<u32> = (0..w.len())
            .filter(|&v| {
                w.row(v)
                    .0
                    .iter()
                    .any(|&j| mark.get(j as usize).copied().unwrap_or(false))
            })
            .map(|v| v as u32)
            .collect();
        if region.is_empty() {
            return;
        }
        self.doc.selected_vertices = region;
        let only = std::mem::replace(&mut self.tools.only_selected, true);
        self.run_weights(ctx, super::tools::WeightOp::Bind);
        self.tools.only_selected = only;
    }

    /// Record `edited` (made on the document's rig) as one edit.
    fn record_rig(&mut self, edited: &Edited, selected: Option<usize>, name: String) {
        if edited.rig.skeleton == self.doc.skeleton && edited.map.is_identity() && edited.rig.pose == self.doc.pose {
            return;
        }
        let before = RigState::of(&self.doc, !edited.map.is_identity());
        match RigState::after(&self.doc, edited, selected) {
            Ok(after) => {
                self.history.edit(
                    &mut self.doc,
                    DocEdit::EditRig {
                        name,
                        before: Box::new(before),
                        after: Box::new(after),
                    },
                );
                self.world = self.doc.world_from_joint();
            }
            Err(e) => self.set_status(rig_error(&e), true),
        }
    }

    /// File > New skeleton from template: the template placed in the mesh's box (1.8 units tall without one), or
    /// (`None`) one root joint in the middle of it, replacing the skeleton; the skin keeps its mesh and loses
    /// weights that were another skeleton's. A mesh said to face another way (the choices under this menu and
    /// Skeleton > Fit to mesh's, one choice) gets the template placed facing that way.
    fn new_from_template(&mut self, kind: Option<crate::rig::templates::TemplateKind>) {
        use crate::rig::templates::{BODY_BOX, place_facing, place_in_box, template};
        let faced = match (kind, self.skeleton_panel.mesh_turn, self.doc.skin.as_ref()) {
            (Some(kind), Some(turn), Some(skin)) => {
                place_facing(&template(kind), skin.positions(), turn, Some(kind)).map(|(s, w)| (s, w, turn))
            }
            _ => None,
        };
        let (skeleton, pose, world, facing) = match faced {
            Some((skeleton, world, turn)) => {
                let pose = Pose::from_file(&skeleton);
                let facing = format!(
                    ", placed facing the way the mesh was said to face ({})",
                    crate::rig::fit_orient::describe(turn)
                );
                (skeleton, pose, world, facing)
            }
            None => {
                let (lo, hi) = self
                    .doc
                    .skin
                    .as_ref()
                    .and_then(|k| k.bounds())
                    .unwrap_or((BODY_BOX.0 * 1.8, BODY_BOX.1 * 1.8));
                let skeleton = match kind {
                    Some(kind) => place_in_box(&template(kind), lo, hi, Some(kind)),
                    None => match Skeleton::new(vec![crate::model::Joint::new("root", None, (lo + hi) * 0.5)]) {
                        Ok(s) => s,
                        Err(e) => return self.set_status(rig_error(&e.to_string()), true),
                    },
                };
                let pose = Pose::zero(&skeleton);
                let world = crate::model::world_from_joint(&skeleton, &pose);
                (skeleton, pose, world, String::new())
            }
        };
        let what = kind.map_or("one root joint".to_string(), |k| format!("the {} template", k.name()));
        self.replace_by_new_skeleton(skeleton, pose, world, format!("new skeleton: {what}"));
        let next = match kind {
            Some(_) => "move its joints into place, then bind",
            None => "click into the mesh to add joints below it, then bind",
        };
        self.set_status(format!("New skeleton, {what}{facing}: {next}"), false);
    }
}

impl SkinbindApp {
    /// Replace the skeleton (one undoable edit) by `skeleton` posed in `pose`, whose world matrices `world` become
    /// the skin's bindings; the skin keeps its mesh and loses weights that were another skeleton's.
    pub(super) fn replace_by_new_skeleton(
        &mut self,
        skeleton: Skeleton,
        pose: Pose,
        world: Vec<glam::Mat4>,
        name: String,
    ) {
        let n = skeleton.len();
        let after = RigState {
            bindings: self.doc.skin.as_ref().map(|_| world),
            weights: Some(None),
            locks: crate::adjust::rows::Locks::none(),
            volumes: vec![crate::bind::JointVolume::default(); n],
            deform: crate::bind::controls::default_deform(&skeleton),
            clip: None,
            clips: Vec::new(),
            selected: None,
            skeleton,
            pose,
        };
        let before = RigState::of(&self.doc, true);
        self.history.edit(
            &mut self.doc,
            DocEdit::EditRig {
                name,
                before: Box::new(before),
                after: Box::new(after),
            },
        );
        self.doc.clip_choice = None;
        self.world = self.doc.world_from_joint();
        // The mode's saved pose was the old skeleton's.
        if let Some(saved) = self.skeleton.saved.as_mut() {
            saved.names = names(&self.doc.skeleton);
            saved.pose = self.doc.pose.clone();
            saved.root_offset = self.doc.skeleton.joints()[0].offset;
        }
    }
}

fn names(skel: &Skeleton) -> Vec<String> {
    skel.joints().iter().map(|j| j.name.clone()).collect()
}

fn rig_error(e: &str) -> String {
    format!("Skeleton: {e}")
}

/// Screen position helper for tests: where joint `j`'s pivot is drawn in a view of `size` points.
pub fn joint_on_screen(app: &SkinbindApp, j: usize) -> Option<Vec2> {
    let world = app.document().world_from_joint();
    let size = app.view_size();
    app.viewport()
        .camera
        .project(world.get(j)?.w_axis.truncate(), Vec2::new(size.x, size.y))
        .map(|p| p.0)
}
