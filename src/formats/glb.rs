//! glTF 2.0 binary (`.glb`) export of a bound rig: mesh, skin, joint hierarchy, artist or automatic weights and,
//! when given, an animation clip. The reader is [`super::gltf`]; export then import gives the same vertices,
//! joints, bindings and weights (after the 4-influence limit), which tests check.
//!
//! - **Joints** become nodes in the skeleton's (depth-first) order, each with `translation` = its offset and
//!   `rotation` = its file pose (`local = T * Rz * Ry * Rx`, as a quaternion), scale 1. The root's translation is
//!   the pose's root translation.
//! - **Skin**: `joints` are those nodes; `inverseBindMatrices` are the inverses of the bindings (each joint's world
//!   matrix at bind time), or of the file pose's world matrices when the skin has no bindings.
//! - **Mesh**: one triangle primitive with `POSITION` (with the min and max the specification requires),
//!   `NORMAL`, `TEXCOORD_0` when present, `JOINTS_0` (unsigned byte up to 256 joints, else unsigned short) and
//!   `WEIGHTS_0` (float): each vertex's 4 strongest weights (ties: lower joint), scaled to sum 1, the unused
//!   slots joint 0 with weight 0; `indices` as unsigned int. The mesh node is a scene root with no transform (a
//!   skinned mesh's own transform is ignored by glTF).
//! - **Animations** (optional): each clip, by its name, sampled at 30 frames per second over its range (at least
//!   two samples), a `LINEAR` rotation channel per joint, a translation channel for the root and one for each
//!   joint the clip moves ([`crate::model::anim::JointTranslation`]). glTF has no Hermite curves with the
//!   course's tangent rules, so sampling is the faithful conversion. The clips together are held to the import's
//!   sample budget, so every file written reads back whole.
//! - Buffers: one binary chunk, every view 4-byte aligned. Numbers are written as `f32`.
//!
//! A vertex without weights cannot be written as glTF skinning data (weights must sum to 1): export refuses such
//! a rig unless asked to give those vertices to the root joint.

use glam::{EulerRot, Mat4, Quat};
use serde_json::{Value, json};

use super::ensure_finite;
use crate::model::{Clip, Pose, Skeleton, Skin, Weights, world_from_joint};

/// Why a rig cannot be exported.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GlbError {
    #[error("the skin has no weights: bind it first (skinbind bind)")]
    NoWeights,
    #[error(
        "{count} vertices have no weights (the first is vertex {first}); bind or paint them, or export with them on the root joint"
    )]
    Unweighted { count: usize, first: usize },
    #[error("the skin's bindings are for {bindings} joints but the skeleton has {joints}")]
    Bindings { bindings: usize, joints: usize },
    #[error("the skin's weights use joint {joint} but the skeleton has {joints} joints")]
    Joint { joint: usize, joints: usize },
    #[error("the model is too large for one glTF buffer (over 4 GiB)")]
    TooLarge,
    #[error(
        "the animation's range {start} .. {end} is {frames} frames at {fps} per second for {joints} joints (3 + 3 channels each), more than the {max} samples one export takes (what one import reads)",
        fps = ANIMATION_FPS,
        max = MAX_ANIMATION_SAMPLES
    )]
    AnimationTooLong {
        start: f32,
        end: f32,
        frames: f64,
        joints: usize,
    },
    #[error(
        "the animations together are {samples} samples at {fps} per second, more than the {max} one export takes (what one import reads)",
        fps = ANIMATION_FPS,
        max = MAX_ANIMATION_SAMPLES
    )]
    AnimationsTooLong { samples: usize },
    /// The clip's range has more frames than any sampled timeline holds.
    #[error(transparent)]
    Frames(crate::model::FramesError),
    /// A value the file cannot hold (named, from [`super::ensure_finite`]).
    #[error("{0}")]
    NotFinite(String),
}

/// The most samples (frames times channels, 3 + 3 per joint) an exported animation may hold: the import's own
/// budget ([`super::gltf_anim::MAX_SAMPLES`]), so that no export is a file whose clip skinbind would not read back
/// (about 7.7 minutes of a 100-joint rig at 30 frames per second). A stranger's `range 0 1e9` is an error, not
/// 3.6 GB.
pub const MAX_ANIMATION_SAMPLES: usize = super::gltf_anim::MAX_SAMPLES;

/// Options of [`write_glb`].
#[derive(Clone, Copy, Debug, Default)]
pub struct GlbOptions {
    /// Give vertices without weights to the root joint instead of refusing.
    pub unweighted_to_root: bool,
}

/// Frames per second at which an animation clip is sampled.
pub const ANIMATION_FPS: f32 = crate::model::SAMPLE_FPS;

/// The binary buffer and the views into it, built up as the JSON is.
#[derive(Default)]
struct Bin {
    bytes: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Bin {
    /// Append `data` as a new buffer view (4-byte aligned) with one accessor; returns the accessor index.
    fn push(&mut self, data: &[u8], target: Option<u32>, accessor: Value) -> usize {
        while self.bytes.len() % 4 != 0 {
            self.bytes.push(0);
        }
        let mut view = json!({ "buffer": 0, "byteOffset": self.bytes.len(), "byteLength": data.len() });
        if let Some(t) = target {
            view["target"] = json!(t);
        }
        self.bytes.extend_from_slice(data);
        self.views.push(view);
        let mut accessor = accessor;
        accessor["bufferView"] = json!(self.views.len() - 1);
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }
}

const FLOAT: u32 = 5126;
const UNSIGNED_BYTE: u32 = 5121;
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;

fn f32_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

/// The local rotation of a joint from its Euler angles (x first, then y, then z).
fn rotation(dofs: glam::Vec3) -> Quat {
    Quat::from_euler(EulerRot::ZYX, dofs.z, dofs.y, dofs.x)
}

/// The rig as GLB bytes, with one clip named `clip` (or none).
pub fn write_glb(skel: &Skeleton, skin: &Skin, clip: Option<&Clip>, options: GlbOptions) -> Result<Vec<u8>, GlbError> {
    let clips: Vec<(&str, &Clip)> = clip.map(|c| ("clip", c)).into_iter().collect();
    write_glb_clips(skel, skin, &clips, options)
}

/// The rig as GLB bytes with every clip of `clips` as an animation of its name, in order.
pub fn write_glb_clips(
    skel: &Skeleton,
    skin: &Skin,
    clips: &[(&str, &Clip)],
    options: GlbOptions,
) -> Result<Vec<u8>, GlbError> {
    let weights = checked_weights(skel, skin, options)?;
    let joints = skel.len();
    let file_pose = Pose::from_file(skel);
    let bindings = checked_bindings(skel, skin, &file_pose)?;
    let finite = |r: std::io::Result<()>| r.map_err(|e| GlbError::NotFinite(e.to_string()));
    finite(ensure_finite(skin.positions().iter().map(|p| p.to_array()), |v| {
        format!("vertex {v}'s position")
    }))?;
    if let Some(tc) = skin.texcoords() {
        finite(ensure_finite(tc.iter().map(|t| t.to_array()), |v| {
            format!("vertex {v}'s texture coordinate")
        }))?;
    }
    let inverse_bindings: Vec<Mat4> = bindings.iter().map(Mat4::inverse).collect();
    finite(ensure_finite(
        bindings.iter().zip(&inverse_bindings).map(|(b, i)| {
            let mut v = [0.0; 32];
            v[..16].copy_from_slice(&b.to_cols_array());
            v[16..].copy_from_slice(&i.to_cols_array());
            v
        }),
        |j| format!("joint {j}'s binding or its inverse (a singular binding)"),
    ))?;
    let mut bin = Bin::default();
    let (attributes, indices) = mesh_accessors(&mut bin, skin, weights, joints);
    let ibm = bin.push(
        &f32_bytes(inverse_bindings.iter().flat_map(|b| b.to_cols_array())),
        None,
        json!({ "componentType": FLOAT, "count": joints, "type": "MAT4" }),
    );
    let mut root = json!({
        "asset": { "version": "2.0", "generator": concat!("skinbind ", env!("CARGO_PKG_VERSION")) },
        "scene": 0,
        "scenes": [{ "nodes": [0, joints] }],
        "nodes": nodes(skel, &file_pose),
        "meshes": [{ "name": "skin", "primitives": [{ "attributes": attributes, "indices": indices, "mode": 4 }] }],
        "skins": [{ "joints": (0..joints).collect::<Vec<_>>(), "inverseBindMatrices": ibm, "skeleton": 0 }],
    });
    if !clips.is_empty() {
        let mut total = 0usize;
        let mut animations = Vec::with_capacity(clips.len());
        for (name, clip) in clips {
            let (animation, samples) = animation(&mut bin, skel, &file_pose, name, clip)?;
            total = total.saturating_add(samples);
            if total > MAX_ANIMATION_SAMPLES {
                return Err(GlbError::AnimationsTooLong { samples: total });
            }
            animations.push(animation);
        }
        root["animations"] = Value::Array(animations);
    }
    while bin.bytes.len() % 4 != 0 {
        bin.bytes.push(0);
    }
    root["buffers"] = json!([{ "byteLength": bin.bytes.len() }]);
    root["bufferViews"] = Value::Array(bin.views);
    root["accessors"] = Value::Array(bin.accessors);
    glb_container(&root, &bin.bytes)
}

/// The skin's weights, when they can be exported: every joint index within the skeleton, and no unweighted
/// vertex unless `unweighted_to_root`.
fn checked_weights<'a>(skel: &Skeleton, skin: &'a Skin, options: GlbOptions) -> Result<&'a Weights, GlbError> {
    let weights = skin.weights().ok_or(GlbError::NoWeights)?;
    let joints = skel.len();
    if let Some(j) = weights.max_joint().filter(|&j| j as usize >= joints) {
        return Err(GlbError::Joint {
            joint: j as usize,
            joints,
        });
    }
    let unweighted: Vec<usize> = weights.unweighted().collect();
    if let (Some(&first), false) = (unweighted.first(), options.unweighted_to_root) {
        return Err(GlbError::Unweighted {
            count: unweighted.len(),
            first,
        });
    }
    Ok(weights)
}

/// The bindings: the skin's (one per joint), or the skeleton's file pose where it has none.
fn checked_bindings(skel: &Skeleton, skin: &Skin, file_pose: &Pose) -> Result<Vec<Mat4>, GlbError> {
    match skin.bindings() {
        Some(b) if b.len() == skel.len() => Ok(b.to_vec()),
        Some(b) => Err(GlbError::Bindings {
            bindings: b.len(),
            joints: skel.len(),
        }),
        None => Ok(world_from_joint(skel, file_pose)),
    }
}

/// The mesh's vertex attributes (position, normal, texture coordinates, the 4 strongest joints and weights) and
/// its index accessor.
fn mesh_accessors(bin: &mut Bin, skin: &Skin, weights: &Weights, joints: usize) -> (Value, usize) {
    let n = skin.vertex_count();
    let (lo, hi) = skin.bounds().unwrap_or_default();
    let position = bin.push(
        &f32_bytes(skin.positions().iter().flat_map(|p| p.to_array())),
        Some(ARRAY_BUFFER),
        json!({ "componentType": FLOAT, "count": n, "type": "VEC3", "min": lo.to_array(), "max": hi.to_array() }),
    );
    let normal = bin.push(
        &f32_bytes(
            skin.normals()
                .iter()
                .flat_map(|v| v.normalize_or(glam::Vec3::Y).to_array()),
        ),
        Some(ARRAY_BUFFER),
        json!({ "componentType": FLOAT, "count": n, "type": "VEC3" }),
    );
    let mut attributes = json!({ "POSITION": position, "NORMAL": normal });
    if let Some(tc) = skin.texcoords() {
        let a = bin.push(
            &f32_bytes(tc.iter().flat_map(|t| t.to_array())),
            Some(ARRAY_BUFFER),
            json!({ "componentType": FLOAT, "count": n, "type": "VEC2" }),
        );
        attributes["TEXCOORD_0"] = json!(a);
    }
    let mut joint_bytes = Vec::with_capacity(n * 8);
    let mut weight_values = Vec::with_capacity(n * 4);
    let wide = joints > 256;
    for v in 0..n {
        let (js, ws) = weights.row(v);
        let (mut j4, mut w4, k) = crate::model::weights::strongest_four(js, ws);
        if k == 0 {
            // Only with `unweighted_to_root` (checked before).
            (j4, w4) = ([0; 4], [1.0, 0.0, 0.0, 0.0]);
        }
        for i in 0..4 {
            if wide {
                joint_bytes.extend_from_slice(&j4[i].to_le_bytes());
            } else {
                joint_bytes.push(j4[i] as u8);
            }
            weight_values.push(w4[i]);
        }
    }
    let joints_accessor = bin.push(
        &joint_bytes,
        Some(ARRAY_BUFFER),
        json!({ "componentType": if wide { UNSIGNED_SHORT } else { UNSIGNED_BYTE }, "count": n, "type": "VEC4" }),
    );
    attributes["JOINTS_0"] = json!(joints_accessor);
    let weights_accessor = bin.push(
        &f32_bytes(weight_values),
        Some(ARRAY_BUFFER),
        json!({ "componentType": FLOAT, "count": n, "type": "VEC4" }),
    );
    attributes["WEIGHTS_0"] = json!(weights_accessor);
    let indices: Vec<u8> = skin
        .triangles()
        .iter()
        .flatten()
        .flat_map(|i| i.to_le_bytes())
        .collect();
    let indices = bin.push(
        &indices,
        Some(ELEMENT_ARRAY_BUFFER),
        json!({ "componentType": UNSIGNED_INT, "count": skin.triangles().len() * 3, "type": "SCALAR" }),
    );
    (attributes, indices)
}

/// The joint nodes in the file pose (the root's translation on node 0), then the mesh node.
fn nodes(skel: &Skeleton, file_pose: &Pose) -> Vec<Value> {
    let mut nodes: Vec<Value> = Vec::with_capacity(skel.len() + 1);
    for (i, j) in skel.joints().iter().enumerate() {
        let t = if i == 0 { file_pose.root_translation } else { j.offset };
        let r = rotation(file_pose.dofs[i]);
        let mut node = json!({ "name": j.name, "translation": t.to_array(), "rotation": r.to_array() });
        let children = skel.children(i);
        if !children.is_empty() {
            node["children"] = json!(children);
        }
        nodes.push(node);
    }
    nodes.push(json!({ "name": "skin", "mesh": 0, "skin": 0 }));
    nodes
}

/// The clip sampled at [`ANIMATION_FPS`] as one animation named `name`: the root's translation, every joint's
/// rotation and the translations of the joints it moves; with the samples it holds (frames times channels).
fn animation(
    bin: &mut Bin,
    skel: &Skeleton,
    file_pose: &Pose,
    name: &str,
    clip: &Clip,
) -> Result<(Value, usize), GlbError> {
    let joints = skel.len();
    let moved: Vec<usize> = clip
        .translations
        .iter()
        .map(|t| t.joint)
        .filter(|&j| j > 0 && j < joints)
        .collect();
    // At least two samples: a LINEAR channel needs a start and an end. The shared sampler refuses a range past
    // its frame limit, or past the sample budget, before allocating.
    let budget = crate::model::FrameBudget {
        per_frame: 3 + 3 * joints + 3 * moved.len(),
        unit: "channels (3 + 3 a joint)",
        limit: MAX_ANIMATION_SAMPLES as f64,
        who: "one export",
    };
    let times = clip.sample_times(ANIMATION_FPS, 2, Some(budget)).map_err(|e| match e {
        crate::model::FramesError::TooMuchWork { .. } => GlbError::AnimationTooLong {
            start: clip.range.0,
            end: clip.range.1,
            frames: clip.frame_count(ANIMATION_FPS, 2),
            joints,
        },
        too_many => GlbError::Frames(too_many),
    })?;
    let frames = times.len();
    let poses: Vec<Pose> = times
        .iter()
        .map(|&t| {
            let mut p = file_pose.clone();
            clip.apply(skel, t, &mut p);
            p
        })
        .collect();
    let (tmin, tmax) = (times[0], times[frames - 1]);
    let input = bin.push(
        &f32_bytes(times.iter().copied()),
        None,
        json!({ "componentType": FLOAT, "count": frames, "type": "SCALAR", "min": [tmin], "max": [tmax] }),
    );
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    let translation = bin.push(
        &f32_bytes(poses.iter().flat_map(|p| p.root_translation.to_array())),
        None,
        json!({ "componentType": FLOAT, "count": frames, "type": "VEC3" }),
    );
    samplers.push(json!({ "input": input, "output": translation, "interpolation": "LINEAR" }));
    channels.push(json!({ "sampler": 0, "target": { "node": 0, "path": "translation" } }));
    for j in 0..joints {
        let mut prev = Quat::IDENTITY;
        let quats: Vec<f32> = poses
            .iter()
            .flat_map(|p| {
                // Keep neighbouring samples in one hemisphere so LINEAR interpolation takes the short way.
                let mut q = rotation(p.dofs[j]);
                if q.dot(prev) < 0.0 {
                    q = -q;
                }
                prev = q;
                q.to_array()
            })
            .collect();
        let output = bin.push(
            &f32_bytes(quats),
            None,
            json!({ "componentType": FLOAT, "count": frames, "type": "VEC4" }),
        );
        samplers.push(json!({ "input": input, "output": output, "interpolation": "LINEAR" }));
        channels.push(json!({ "sampler": samplers.len() - 1, "target": { "node": j, "path": "rotation" } }));
    }
    for &j in &moved {
        let output = bin.push(
            &f32_bytes(poses.iter().flat_map(|p| p.offset_of(skel, j).to_array())),
            None,
            json!({ "componentType": FLOAT, "count": frames, "type": "VEC3" }),
        );
        samplers.push(json!({ "input": input, "output": output, "interpolation": "LINEAR" }));
        channels.push(json!({ "sampler": samplers.len() - 1, "target": { "node": j, "path": "translation" } }));
    }
    let samples = frames * (3 + 3 * joints + 3 * moved.len());
    Ok((
        json!({ "name": name, "samplers": samplers, "channels": channels }),
        samples,
    ))
}

/// The GLB container: the 12-byte header, the JSON chunk (padded with spaces) and the binary chunk.
fn glb_container(root: &Value, bin: &[u8]) -> Result<Vec<u8>, GlbError> {
    let mut json_bytes = serde_json::to_vec(root).map_err(|_| GlbError::TooLarge)?;
    while json_bytes.len() % 4 != 0 {
        json_bytes.push(b' ');
    }
    let total = 12 + 8 + json_bytes.len() + 8 + bin.len();
    let total32 = u32::try_from(total).map_err(|_| GlbError::TooLarge)?;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total32.to_le_bytes());
    out.extend_from_slice(&(json_bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json_bytes);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(bin);
    Ok(out)
}
