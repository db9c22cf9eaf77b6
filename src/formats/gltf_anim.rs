//! glTF animations as clips of the imported skeleton.
//!
//! Each glTF animation is sampled at [`FPS`] frames per second over its keys' span (a frame at each end), and
//! every frame is turned into the model's DOFs: the node tree is posed (animated translation, rotation and scale
//! over the rest transforms; `LINEAR` with spherical interpolation for rotations, `STEP` and `CUBICSPLINE` as the
//! specification defines them), then each joint's rotation relative to its joint parent becomes Euler angles
//! (the model's `Rz * Ry * Rx`, each frame's angles kept nearest the previous frame's, so curves do not jump by
//! whole turns), and the root's placement in the imported scene becomes the root translation. One channel per
//! DOF in the model's order (root translation x, y, z, then x, y, z of each joint), with linear tangents (the
//! curve is the straight line between samples) and constant extrapolation; a channel whose samples are all
//! equal keeps one key.
//!
//! What the model cannot hold is warned about: animated translation of joints other than the root (their
//! offsets are fixed), animated scale, and morph target weights. A clip longer than [`MAX_SECONDS`] or whose
//! samples would pass [`MAX_SAMPLES`] is skipped with a warning: a stranger's file must not make the import
//! allocate without bound.

use glam::{Mat4, Quat, Vec3, Vec4};

use super::gltf_data::Data;
use crate::model::anim::{Channel, Clip, Extrapolation, Key, Tangent};
use crate::model::skeleton::dofs_from_rotation;

/// Frames per second at which clips are sampled.
pub const FPS: f32 = 30.0;
/// The longest clip imported, in seconds.
pub const MAX_SECONDS: f32 = 3600.0;
/// The most node transforms computed for one clip (frames times nodes).
pub const MAX_SAMPLES: usize = 50_000_000;

/// One imported animation.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedClip {
    /// The glTF animation's name, or `animation N` when it has none.
    pub name: String,
    pub clip: Clip,
}

/// What the import knows about the rig that the sampling needs.
pub(super) struct RigNodes<'a> {
    pub nodes: &'a [gltf::Node<'a>],
    pub parent: &'a [Option<usize>],
    /// glTF joint index -> node index.
    pub joint_nodes: &'a [usize],
    /// glTF joint index -> nearest joint ancestor (glTF joint index).
    pub joint_parent: &'a [Option<usize>],
    /// The model's joint order: the glTF joint index of each model joint (after a synthetic root, if any).
    pub order: &'a [usize],
    /// Whether model joint 0 is a synthetic root above several glTF roots.
    pub synthetic: bool,
    /// Inverse bind matrices, by glTF joint index.
    pub ibm: &'a [Mat4],
    /// The placement applied to the mesh (stored space -> the scene as imported).
    pub placed: Mat4,
    /// Bindings by model joint.
    pub bindings: &'a [Mat4],
    /// Offsets by model joint (the imported skeleton's), to tell when a clip moves one.
    pub offsets: &'a [Vec3],
}

/// An animated property of one node.
struct Track {
    node: usize,
    property: Property,
    interpolation: gltf::animation::Interpolation,
    times: Vec<f32>,
    /// Values (for CUBICSPLINE: in-tangent, value, out-tangent per key), as Vec4 (xyz for translation/scale).
    values: Vec<Vec4>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Property {
    Translation,
    Rotation,
    Scale,
}

impl Track {
    /// The property's value at `t` (clamped to the keys).
    fn sample(&self, t: f32) -> Vec4 {
        use gltf::animation::Interpolation::*;
        let n = self.times.len();
        let cubic = self.interpolation == CubicSpline;
        let value = |i: usize| if cubic { self.values[3 * i + 1] } else { self.values[i] };
        if n == 0 {
            return Vec4::ZERO;
        }
        if n == 1 || t <= self.times[0] {
            return value(0);
        }
        if t >= self.times[n - 1] {
            return value(n - 1);
        }
        let i = self.times.partition_point(|&x| x <= t).clamp(1, n - 1) - 1;
        let (t0, t1) = (self.times[i], self.times[i + 1]);
        let dt = t1 - t0;
        let u = if dt > 0.0 { (t - t0) / dt } else { 0.0 };
        let out = match self.interpolation {
            Step => value(i),
            Linear if self.property == Property::Rotation => {
                let (a, b) = (Quat::from_vec4(value(i)), Quat::from_vec4(value(i + 1)));
                Vec4::from(a.normalize().slerp(b.normalize(), u))
            }
            Linear => value(i).lerp(value(i + 1), u),
            CubicSpline => {
                let (p0, m0) = (self.values[3 * i + 1], self.values[3 * i + 2] * dt);
                let (p1, m1) = (self.values[3 * (i + 1) + 1], self.values[3 * (i + 1)] * dt);
                let (u2, u3) = (u * u, u * u * u);
                p0 * (2.0 * u3 - 3.0 * u2 + 1.0)
                    + m0 * (u3 - 2.0 * u2 + u)
                    + p1 * (-2.0 * u3 + 3.0 * u2)
                    + m1 * (u3 - u2)
            }
        };
        if self.property == Property::Rotation {
            Vec4::from(Quat::from_vec4(out).normalize())
        } else {
            out
        }
    }
}

/// Every animation of `gltf` that drives the rig's joints, sampled. Animations that drive none of them (a
/// prop's), or that fail to read, are skipped with a warning.
pub(super) fn clips(
    gltf: &gltf::Gltf,
    data: &mut Data,
    rig: &RigNodes,
    warn: &mut impl FnMut(String),
) -> Vec<NamedClip> {
    let mut out = Vec::new();
    for (a, anim) in gltf.animations().enumerate() {
        let name = anim
            .name()
            .map(|n| super::printable(n).into_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| format!("animation {a}"));
        match clip(&anim, data, rig, &name, warn) {
            Ok(Some(c)) => out.push(NamedClip { name, clip: c }),
            Ok(None) => {}
            Err(e) => warn(format!("animation `{name}` was not imported: {e}")),
        }
    }
    out
}

fn clip(
    anim: &gltf::Animation,
    data: &mut Data,
    rig: &RigNodes,
    name: &str,
    warn: &mut impl FnMut(String),
) -> Result<Option<Clip>, String> {
    let mut tracks = Vec::new();
    let mut morph = false;
    for (c, channel) in anim.channels().enumerate() {
        use gltf::animation::Property as P;
        let property = match channel.target().property() {
            P::Translation => Property::Translation,
            P::Rotation => Property::Rotation,
            P::Scale => Property::Scale,
            P::MorphTargetWeights => {
                morph = true;
                continue;
            }
        };
        let node = channel.target().node().index();
        if node >= rig.nodes.len() {
            return Err(format!("channel {c} targets node {node}, past the file's nodes"));
        }
        let sampler = channel.sampler();
        let what = format!("channel {c}");
        let times = data.times(&sampler.input(), &format!("{what}'s times"))?;
        if times.iter().any(|t| !t.is_finite()) || times.windows(2).any(|w| w[1] < w[0]) {
            return Err(format!("{what}'s times are not finite and increasing"));
        }
        let values = match property {
            Property::Rotation => data.rotations(&sampler.output(), &format!("{what}'s rotations"))?,
            _ => data
                .vec3s(&sampler.output(), &format!("{what}'s values"))?
                .into_iter()
                .map(|v| Vec3::from_array(v).extend(0.0))
                .collect(),
        };
        let interpolation = sampler.interpolation();
        let per_key = if interpolation == gltf::animation::Interpolation::CubicSpline {
            3
        } else {
            1
        };
        if values.len() != times.len() * per_key {
            return Err(format!("{what} has {} values for {} times", values.len(), times.len()));
        }
        if values.iter().any(|v| !v.is_finite()) {
            return Err(format!("{what} has a value that is not finite"));
        }
        tracks.push(Track {
            node,
            property,
            interpolation,
            times,
            values,
        });
    }
    if morph {
        warn(format!("animation `{name}`: morph target weights were not imported"));
    }
    let drives_joint = |t: &Track| rig.joint_nodes.contains(&t.node);
    if !tracks.iter().any(drives_joint) {
        return Ok(None);
    }
    let (start, end) = tracks.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(s, e), t| {
        (s.min(t.times[0]), e.max(*t.times.last().unwrap_or(&t.times[0])))
    });
    let span = (end - start).max(0.0);
    if span > MAX_SECONDS {
        return Err(format!("it lasts {span} s, more than {MAX_SECONDS} s"));
    }
    // As many frames as the model's own sampling gives (so a clip exported at 30 per second reads back on the
    // same frames).
    let frames = Clip {
        range: (0.0, span),
        channels: Vec::new(),
    }
    .frame_count(FPS, 1) as usize;
    if frames.saturating_mul(rig.nodes.len()) > MAX_SAMPLES {
        return Err(format!(
            "{frames} frames of {} nodes pass the limit of {MAX_SAMPLES} samples",
            rig.nodes.len()
        ));
    }
    let scaled = tracks.iter().any(|t| {
        t.property == Property::Scale
            && drives_joint(t)
            && t.values
                .iter()
                .any(|v| (v.truncate() - Vec3::ONE).abs().max_element() > 1e-3)
    });
    if scaled {
        warn(format!("animation `{name}` scales joints; the model keeps no scale"));
    }

    let joints = rig.order.len() + usize::from(rig.synthetic);
    let mut values: Vec<Vec<f32>> = vec![Vec::with_capacity(frames); 3 + 3 * joints];
    let mut previous = vec![Vec3::ZERO; joints];
    // How far each joint's animated offset strays from its rest offset (0: not at all).
    let mut moved = vec![0.0f32; joints];
    let placed_inverse = rig.placed.inverse();
    // Each node's tracks, found once rather than for every node of every frame.
    let mut by_node: Vec<Vec<usize>> = vec![Vec::new(); rig.nodes.len()];
    for (i, t) in tracks.iter().enumerate() {
        by_node[t.node].push(i);
    }
    let mut times = Vec::with_capacity(frames);
    for f in 0..frames {
        let t = if frames == 1 {
            start
        } else {
            start + span * f as f32 / (frames - 1) as f32
        };
        times.push(t - start);
        let world = posed_world(rig, &tracks, &by_node, t);
        let mut root_translation = Vec3::ZERO;
        for (i, &k) in rig.order.iter().enumerate() {
            let m = i + usize::from(rig.synthetic);
            let (rotation, translation) = match rig.joint_parent[k] {
                Some(p) => {
                    let rel = world[rig.joint_nodes[p]].inverse() * world[rig.joint_nodes[k]];
                    let (_, r, t) = rel.to_scale_rotation_translation();
                    let scale = world[rig.joint_nodes[p]].determinant().abs().cbrt();
                    (r, t * scale)
                }
                None => {
                    // Where the root's vertices are drawn now, moved from where the import placed them.
                    let drawn = world[rig.joint_nodes[k]] * rig.ibm[k] * placed_inverse;
                    let binding = rig.bindings.get(m).copied().unwrap_or(Mat4::IDENTITY);
                    let (_, r, t) = (drawn * binding).to_scale_rotation_translation();
                    (r, t)
                }
            };
            if m == 0 {
                root_translation = translation;
            } else {
                let rest = rig.offsets.get(m).copied().unwrap_or(Vec3::ZERO);
                let d = (translation - rest).length();
                if d > 1e-3 * (1.0 + rest.length()) {
                    moved[m] = moved[m].max(d);
                }
            }
            let d = dofs_from_rotation(rotation, if f == 0 { Vec3::ZERO } else { previous[m] });
            previous[m] = d;
            for axis in 0..3 {
                values[3 + 3 * m + axis].push(d[axis]);
            }
        }
        if rig.synthetic {
            for axis in 0..3 {
                values[3 + axis].push(0.0);
            }
        }
        for axis in 0..3 {
            values[axis].push(root_translation[axis]);
        }
    }
    let strays = moved.iter().filter(|&&d| d > 0.0).count();
    if strays > 0 {
        let far = moved.iter().copied().fold(0.0f32, f32::max);
        warn(format!(
            "animation `{name}` moves {strays} joints other than the root from their offsets (by up to {far}); \
             the model keeps offsets fixed"
        ));
    }
    let channels = values
        .into_iter()
        .map(|v| channel(&times, &v))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    Ok(Some(Clip {
        range: (0.0, span),
        channels,
    }))
}

/// The node tree's world matrices at time `t` (`by_node`: each node's tracks); a node in a cycle stays at its
/// local matrix.
fn posed_world(rig: &RigNodes, tracks: &[Track], by_node: &[Vec<usize>], t: f32) -> Vec<Mat4> {
    let local = |n: usize| {
        let node = &rig.nodes[n];
        let mine = &by_node[n];
        if mine.is_empty() {
            return super::gltf::rest_local(node);
        }
        let (translation, rotation, scale) = node.transform().decomposed();
        let (mut tr, mut ro, mut sc) = (
            Vec3::from_array(translation),
            Quat::from_array(rotation),
            Vec3::from_array(scale),
        );
        for k in mine.iter().map(|&i| &tracks[i]) {
            let v = k.sample(t);
            match k.property {
                Property::Translation => tr = v.truncate(),
                Property::Rotation => ro = Quat::from_vec4(v),
                Property::Scale => sc = v.truncate(),
            }
        }
        Mat4::from_scale_rotation_translation(sc, ro.normalize(), tr)
    };
    super::gltf::node_worlds(rig.nodes, rig.parent, local)
        .into_iter()
        .enumerate()
        .map(|(i, w)| w.unwrap_or_else(|| local(i)))
        .collect()
}

/// A channel through `values` at `times`: linear between samples, one key when they are all equal.
fn channel(times: &[f32], values: &[f32]) -> Result<Channel, crate::model::anim::ChannelError> {
    let key = |time: f32, value: f32| Key {
        time,
        value,
        tangent_in: Tangent::Linear,
        tangent_out: Tangent::Linear,
    };
    let keys: Vec<Key> = if values.windows(2).all(|w| w[0] == w[1]) {
        vec![key(0.0, values.first().copied().unwrap_or(0.0))]
    } else {
        // Frames closer than float precision (a very long clip) would break the keys' order: keep the first.
        let mut keys: Vec<Key> = Vec::with_capacity(values.len());
        for (&t, &v) in times.iter().zip(values) {
            if keys.last().is_none_or(|k| t > k.time) {
                keys.push(key(t, v));
            }
        }
        keys
    };
    Channel::new(Extrapolation::Constant, Extrapolation::Constant, keys)
}
