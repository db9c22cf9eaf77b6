//! FBX animation stacks as clips of the imported skeleton.
//!
//! Each stack is one clip, kept by its name (`animation N` when it has none), over the stack's time span,
//! sampled at the scene's frame rate (30 per second where the file gives none that makes sense), a frame at each
//! end. At every frame ufbx evaluates each node's local transform (its layers blended, its curves interpolated
//! as the file says), the node tree is composed, and each joint's rotation relative to its parent joint becomes
//! Euler angles as in the glTF import ([`super::gltf_anim`]: continuous from frame to frame, linear tangents,
//! constant extrapolation, one key where a channel never changes); the root's placement is the root
//! translation, and a joint whose offset the stack moves gets translation channels of its own.
//!
//! The glTF import's bounds hold here too ([`Budget`]): a stack longer than an hour, or whose frames times
//! channels pass `MAX_SAMPLES` (frames times nodes `MAX_NODE_SAMPLES`), is skipped with a warning naming it,
//! before anything is sampled; the clips of one import share `MAX_SAMPLES`. Every stack is summarised from its span
//! alone ([`AnimationSummary`]), so `info` and a conversion to `.skel` sample nothing.

use glam::{Mat4, Quat};

use super::fbx::{FbxJoints, vec3};
use super::gltf_anim::{AnimationChoice, AnimationSummary, Budget, NamedClip, SampledClip};
use crate::model::{Clip, Skeleton};

/// The frame rate used where the file's is missing or absurd.
const DEFAULT_FPS: f32 = 30.0;

/// Summarise every animation stack of `scene` and sample those `choice` asks for.
pub(super) fn clips(
    scene: &ufbx::Scene,
    joints: &FbxJoints,
    skeleton: &Skeleton,
    choice: &AnimationChoice,
    warn: &mut impl FnMut(String),
) -> (Vec<AnimationSummary>, Vec<NamedClip>) {
    let fps = scene.settings.frames_per_second as f32;
    let fps = if fps.is_finite() && fps > 0.0 && fps <= 1000.0 {
        fps
    } else {
        DEFAULT_FPS
    };
    let nodes = evaluated_nodes(scene, joints);
    let channels = Clip::channels_for(skeleton.len());
    let mut budget = Budget::default();
    let (mut summaries, mut out) = (Vec::new(), Vec::new());
    let names = stack_names(scene);
    for (a, stack) in scene.anim_stacks.iter().enumerate() {
        let name = names[a].clone();
        let not_imported = |why: String| format!("animation stack `{name}` was not imported: {why}");
        let (begin, end) = (stack.time_begin, stack.time_end);
        let span = (end - begin) as f32;
        if !(begin.is_finite() && span.is_finite() && span >= 0.0) {
            warn(not_imported(format!("its time span {begin} .. {end} is not one")));
            continue;
        }
        let (frames, samples) = match Budget::cost(span, fps, channels, nodes.len()) {
            Ok(cost) => cost,
            Err(why) => {
                warn(not_imported(why));
                continue;
            }
        };
        summaries.push(AnimationSummary {
            name: name.clone(),
            index: a,
            seconds: span,
            keys: keys_of(stack),
            samples,
        });
        if !choice.wants(&name, out.len()) {
            continue;
        }
        // Translation channels are not known before sampling: count them as if every joint moved.
        if let Err(why) = budget.spend(samples.saturating_add(frames.saturating_mul(3 * skeleton.len()))) {
            warn(not_imported(why));
            continue;
        }
        let sampled = Sampler {
            scene,
            joints,
            skeleton,
            nodes: &nodes,
        }
        .sample(&stack.anim, begin, span, frames);
        match sampled {
            Ok(clip) => out.push(NamedClip { name, clip }),
            Err(e) => warn(not_imported(e)),
        }
    }
    (summaries, out)
}

/// Each stack's clip name: its own (`animation N` when empty), less a leading `NODE|` that names a node of the
/// scene, which Blender's exporter puts before each action (`HumanArmature|Man_Walk` is the action `Man_Walk`,
/// as Blender's glTF exporter names it), unless that would give two clips one name.
fn stack_names(scene: &ufbx::Scene) -> Vec<String> {
    let full: Vec<String> = scene
        .anim_stacks
        .iter()
        .enumerate()
        .map(|(a, s)| {
            Some(super::printable(&s.element.name).into_owned())
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| format!("animation {a}"))
        })
        .collect();
    let short: Vec<String> = full
        .iter()
        .map(|n| match n.split_once('|') {
            Some((node, action)) if !action.is_empty() && scene.nodes.iter().any(|x| x.element.name == node) => {
                action.to_string()
            }
            _ => n.clone(),
        })
        .collect();
    full.iter()
        .zip(&short)
        .map(|(f, s)| {
            if short.iter().filter(|x| *x == s).count() > 1 {
                f.clone()
            } else {
                s.clone()
            }
        })
        .collect()
}

/// Keyframes in the stack's curves.
fn keys_of(stack: &ufbx::AnimStack) -> usize {
    stack
        .layers
        .iter()
        .flat_map(|l| l.anim_values.iter())
        .flat_map(|v| v.curves.iter().flatten())
        .map(|c| c.keyframes.len())
        .sum()
}

/// The nodes whose transforms a frame needs (the joints and every node above them), parents first, by typed
/// id, with each one's parent among them.
fn evaluated_nodes(scene: &ufbx::Scene, joints: &FbxJoints) -> Vec<(usize, Option<usize>)> {
    let n = scene.nodes.len();
    let mut needed = vec![false; n];
    for &j in &joints.nodes {
        let mut at = Some(j);
        let mut steps = 0;
        while let Some(i) = at.filter(|&i| i < n && !needed[i] && steps <= n) {
            needed[i] = true;
            at = scene.nodes[i].parent.as_ref().map(|p| p.element.typed_id as usize);
            steps += 1;
        }
    }
    let mut list: Vec<(usize, Option<usize>)> = (0..n)
        .filter(|&i| needed[i])
        .map(|i| {
            let p = scene.nodes[i].parent.as_ref().map(|p| p.element.typed_id as usize);
            (i, p.filter(|&p| p < n && needed[p]))
        })
        .collect();
    list.sort_by_key(|&(i, _)| scene.nodes[i].node_depth);
    list
}

struct Sampler<'a> {
    scene: &'a ufbx::Scene,
    joints: &'a FbxJoints,
    skeleton: &'a Skeleton,
    nodes: &'a [(usize, Option<usize>)],
}

impl Sampler<'_> {
    /// Node world matrices at `time` (by typed id; identity for nodes not needed).
    fn world(&self, anim: &ufbx::Anim, time: f64) -> Vec<Mat4> {
        let mut world = vec![Mat4::IDENTITY; self.scene.nodes.len()];
        for &(i, parent) in self.nodes {
            let t = ufbx::evaluate_transform(anim, &self.scene.nodes[i], time);
            let r = Quat::from_xyzw(
                t.rotation.x as f32,
                t.rotation.y as f32,
                t.rotation.z as f32,
                t.rotation.w as f32,
            );
            let local = Mat4::from_scale_rotation_translation(vec3(t.scale), r.normalize(), vec3(t.translation));
            world[i] = match parent {
                Some(p) => world[p] * local,
                None => local,
            };
        }
        world
    }

    /// The stack sampled into a clip of the skeleton's DOFs (and translation channels for moved joints).
    fn sample(&self, anim: &ufbx::Anim, begin: f64, span: f32, frames: usize) -> Result<Clip, String> {
        let synthetic = usize::from(self.joints.synthetic);
        let mut clip = SampledClip::new(self.skeleton.len(), frames);
        for f in 0..frames {
            let t = if frames == 1 {
                0.0
            } else {
                span * f as f32 / (frames - 1) as f32
            };
            clip.frame(t);
            let world = self.world(anim, begin + f64::from(t));
            if synthetic == 1 {
                // The synthetic root sits still at the origin; the joints below it carry the motion.
                clip.still_root();
            }
            for (k, &node) in self.joints.nodes.iter().enumerate() {
                let m = k + synthetic;
                let joint = &self.skeleton.joints()[m];
                let parent_node = joint
                    .parent
                    .and_then(|p| p.checked_sub(synthetic))
                    .map(|p| self.joints.nodes[p]);
                let (rotation, translation) = match parent_node {
                    Some(p) => {
                        let (_, r, t) = (world[p].inverse() * world[node]).to_scale_rotation_translation();
                        (r, t * world[p].determinant().abs().cbrt())
                    }
                    None => {
                        let (_, r, t) = world[node].to_scale_rotation_translation();
                        (r, t)
                    }
                };
                if !(rotation.is_finite() && translation.is_finite()) {
                    return Err(format!("joint {m}'s transform is not finite at {t} s"));
                }
                clip.joint(m, joint.offset, rotation, translation);
            }
        }
        clip.finish(span)
    }
}
