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
//! equal keeps one key. A joint other than the root whose offset the animation moves (an IK foot, a hip bob)
//! gets translation channels of its own ([`crate::model::anim::JointTranslation`]).
//!
//! What the model cannot hold is warned about: animated scale, and morph target weights.
//!
//! A stranger's file must not make the import allocate or compute without bound. Every animation is first read
//! as key times only ([`AnimationSummary`]: its span, its keys, what sampling it would cost), and only those
//! the caller asks for ([`AnimationChoice`]) are sampled, so `info` and a conversion to `.skel` sample nothing.
//! A clip longer than [`MAX_SECONDS`], or whose frames times channels pass [`MAX_SAMPLES`] (or frames times
//! nodes [`MAX_NODE_SAMPLES`]), is skipped with a warning naming it, before anything is allocated for it; the
//! clips of one import share [`MAX_SAMPLES`]. A channel that cannot be read (no keys, keys out of order, values
//! that do not match them) is dropped with a warning naming its glTF path; the rest of its animation imports.

use glam::{Mat4, Quat, Vec3, Vec4};

use super::gltf_data::Data;
use crate::model::anim::{Channel, Clip, Extrapolation, JointTranslation, Key, Tangent};
use crate::model::skeleton::dofs_from_rotation;

/// Frames per second at which clips are sampled.
pub const FPS: f32 = 30.0;
/// The longest clip imported, in seconds.
pub const MAX_SECONDS: f32 = 3600.0;
/// The most values one import samples, over all its clips (frames times channels, 3 + 3 per joint): 2^22, a
/// 100-joint rig's 7.7 minutes at 30 frames per second, about 120 MB of keys, and under a second to sample
/// (an unoptimised build takes about 15 s). A `.glb` export is held to the same budget
/// ([`super::glb::MAX_ANIMATION_SAMPLES`]), so every clip skinbind writes reads back.
pub const MAX_SAMPLES: usize = 1 << 22;
/// The most node transforms computed for one clip (frames times nodes): a bound on time where a file has many
/// nodes that are not joints.
pub const MAX_NODE_SAMPLES: usize = 1 << 22;

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
struct Track<'a> {
    /// Its channel's glTF path (`animations[0].channels[2]`), for warnings.
    at: String,
    node: usize,
    property: Property,
    interpolation: gltf::animation::Interpolation,
    times: Vec<f32>,
    /// The accessor of its values (read only when the animation is sampled).
    output: gltf::Accessor<'a>,
    /// Values (for CUBICSPLINE: in-tangent, value, out-tangent per key), as Vec4 (xyz for translation/scale).
    values: Vec<Vec4>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Property {
    Translation,
    Rotation,
    Scale,
}

impl Track<'_> {
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

/// Which of a file's animations an import samples into clips. Every animation that drives the skeleton is
/// summarised either way ([`AnimationSummary`]), from its key times alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AnimationChoice {
    /// None: a skeleton and a skin are wanted, not motion (`convert -o x.skel`, `info`, `bind`).
    None,
    /// The first animation that samples.
    First,
    /// The first animation of this name.
    Named(String),
    /// Every animation, within [`MAX_SAMPLES`] in all (the editor, where any can be the clip).
    #[default]
    All,
}

impl AnimationChoice {
    /// Whether the animation named `name` is to be sampled, `sampled` having been already.
    pub fn wants(&self, name: &str, sampled: usize) -> bool {
        match self {
            AnimationChoice::None => false,
            AnimationChoice::First => sampled == 0,
            AnimationChoice::Named(n) => n == name && sampled == 0,
            AnimationChoice::All => true,
        }
    }
}

/// What one import may still sample, and what an animation costs before it is sampled ([`MAX_SECONDS`],
/// [`MAX_SAMPLES`], [`MAX_NODE_SAMPLES`]); the glTF and FBX imports share it.
pub(super) struct Budget {
    left: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Self { left: MAX_SAMPLES }
    }
}

impl Budget {
    /// The frames and samples (frames times `channels`) of an animation of `span` seconds sampled at `fps` over
    /// `nodes` node transforms, or why it is not imported (too long, or past the budget of one clip).
    pub fn cost(span: f32, fps: f32, channels: usize, nodes: usize) -> Result<(usize, usize), String> {
        if span.is_nan() || span > MAX_SECONDS {
            return Err(format!("it lasts {span} s, more than {MAX_SECONDS} s"));
        }
        let frames = Clip::new((0.0, span), Vec::new()).frame_count(fps, 1) as usize;
        let samples = frames.saturating_mul(channels);
        if samples > MAX_SAMPLES || frames.saturating_mul(nodes) > MAX_NODE_SAMPLES {
            return Err(format!(
                "{span} s is {frames} frames at {fps} per second; {channels} channels of them ({samples} samples) \
                 over {nodes} nodes pass the budget of {MAX_SAMPLES} samples and {MAX_NODE_SAMPLES} node transforms"
            ));
        }
        Ok((frames, samples))
    }

    /// Take `samples` from what is left, or say why they cannot be.
    pub fn spend(&mut self, samples: usize) -> Result<(), String> {
        if samples > self.left {
            return Err(format!(
                "its {samples} samples pass the {} left of the {MAX_SAMPLES} that one import samples",
                self.left
            ));
        }
        self.left -= samples;
        Ok(())
    }
}

/// An animation that drives the skeleton, as its key times describe it: what `info` lists, and what sampling
/// it would cost. Nothing is sampled to make one.
#[derive(Clone, Debug, PartialEq)]
pub struct AnimationSummary {
    pub name: String,
    /// Its index among the file's animations.
    pub index: usize,
    /// From its first key to its last, in seconds (the clip's range is 0 to this).
    pub seconds: f32,
    /// Keys in the file over the channels read (a sampler shared by several channels counts for each).
    pub keys: usize,
    /// Values sampling it makes: frames at [`FPS`] times the clip's channels (3 + 3 per joint).
    pub samples: usize,
}

/// Summarise every animation of `gltf` that drives the rig's joints and sample those `choice` asks for.
/// Animations that drive none of them (a prop's) are left out; a channel that cannot be read is dropped and an
/// animation past the budget skipped, each with a warning naming it (`channel_origin`: the file's index of
/// each channel that [`super::gltf_check`] kept).
pub(super) fn clips(
    gltf: &gltf::Gltf,
    data: &mut Data,
    rig: &RigNodes,
    channel_origin: &[Vec<usize>],
    choice: &AnimationChoice,
    warn: &mut impl FnMut(String),
) -> (Vec<AnimationSummary>, Vec<NamedClip>) {
    let channels = 3 + 3 * (rig.order.len() + usize::from(rig.synthetic));
    let mut budget = Budget::default();
    let (mut summaries, mut out) = (Vec::new(), Vec::new());
    for (a, anim) in gltf.animations().enumerate() {
        let name = anim
            .name()
            .map(|n| super::printable(n).into_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| format!("animation {a}"));
        let not_imported = |why: String| format!("animation `{name}` (animations[{a}]) was not imported: {why}");
        let origin = channel_origin.get(a).map_or(&[][..], Vec::as_slice);
        let mut tracks = keyed_tracks(&anim, (a, origin), data, rig, &name, warn);
        if !tracks.iter().any(|t| rig.joint_nodes.contains(&t.node)) {
            continue;
        }
        let (_, span) = span_of(&tracks);
        let samples = match Budget::cost(span, FPS, channels, rig.nodes.len()) {
            Ok((_, samples)) => samples,
            Err(why) => {
                warn(not_imported(why));
                continue;
            }
        };
        summaries.push(AnimationSummary {
            name: name.clone(),
            index: a,
            seconds: span,
            keys: tracks.iter().map(|t| t.times.len()).sum(),
            samples,
        });
        if !choice.wants(&name, out.len()) {
            continue;
        }
        if let Err(why) = budget.spend(samples) {
            warn(not_imported(why));
            continue;
        }
        read_values(&mut tracks, data, &name, warn);
        if !tracks.iter().any(|t| rig.joint_nodes.contains(&t.node)) {
            warn(not_imported(
                "none of its channels that drive a joint could be read".into(),
            ));
            continue;
        }
        match sample(&tracks, rig, &name, warn) {
            Ok(clip) => out.push(NamedClip { name, clip }),
            Err(e) => warn(not_imported(e)),
        }
    }
    (summaries, out)
}

/// The first key time and the span of `tracks` (each has at least one key).
fn span_of(tracks: &[Track]) -> (f32, f32) {
    let (start, end) = tracks
        .iter()
        .flat_map(|t| t.times.first().zip(t.times.last()))
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(s, e), (a, b)| {
            (s.min(*a), e.max(*b))
        });
    (start, (end - start).max(0.0))
}

/// As many frames over `span` seconds as the model's own sampling gives (so a clip exported at 30 per second
/// reads back on the same frames).
fn frames_of(span: f32) -> usize {
    Clip::new((0.0, span), Vec::new()).frame_count(FPS, 1) as usize
}

/// The channels of `anim` (animation `a`, `origin` its channels' indices in the file) with their key times
/// read, values not yet. A channel whose key times cannot be read, are empty, or are not finite and increasing
/// is dropped with a warning naming it.
fn keyed_tracks<'a>(
    anim: &gltf::Animation<'a>,
    (a, origin): (usize, &[usize]),
    data: &mut Data,
    rig: &RigNodes,
    name: &str,
    warn: &mut impl FnMut(String),
) -> Vec<Track<'a>> {
    let mut tracks = Vec::new();
    let mut morph = false;
    for (c, channel) in anim.channels().enumerate() {
        use gltf::animation::Property as P;
        let at = format!("animations[{a}].channels[{}]", origin.get(c).copied().unwrap_or(c));
        let property = match channel.target().property() {
            P::Translation => Property::Translation,
            P::Rotation => Property::Rotation,
            P::Scale => Property::Scale,
            P::MorphTargetWeights => {
                morph = true;
                continue;
            }
        };
        let sampler = channel.sampler();
        let input = sampler.input();
        let node = channel.target().node().index();
        let times = data.times(&input, &format!("{at}'s key times"));
        let why = match &times {
            _ if node >= rig.nodes.len() => Some(format!("expected a node below {}, found {node}", rig.nodes.len())),
            Err(e) => Some(e.clone()),
            Ok(t) if t.is_empty() => Some(format!("its key times (accessor {}) are empty", input.index())),
            Ok(t) if t.iter().any(|x| !x.is_finite()) || t.windows(2).any(|w| w[1] < w[0]) => Some(format!(
                "expected key times (accessor {}) that are finite and increasing",
                input.index()
            )),
            Ok(_) => None,
        };
        match (why, times) {
            (None, Ok(times)) => tracks.push(Track {
                at,
                node,
                property,
                interpolation: sampler.interpolation(),
                times,
                output: sampler.output(),
                values: Vec::new(),
            }),
            (why, _) => warn(format!(
                "{at} (animation `{name}`) was dropped: {}",
                why.unwrap_or_default()
            )),
        }
    }
    if morph {
        warn(format!("animation `{name}`: morph target weights were not imported"));
    }
    tracks
}

/// Read the values of `tracks`, dropping (with a warning) a channel whose values cannot be read, do not match
/// its key count, or are not finite.
fn read_values(tracks: &mut Vec<Track>, data: &mut Data, name: &str, warn: &mut impl FnMut(String)) {
    tracks.retain_mut(|t| {
        let what = format!("{}'s values", t.at);
        let values = match t.property {
            Property::Rotation => data.rotations(&t.output, &what),
            _ => data
                .vec3s(&t.output, &what)
                .map(|v| v.into_iter().map(|v| Vec3::from_array(v).extend(0.0)).collect()),
        };
        let per_key = if t.interpolation == gltf::animation::Interpolation::CubicSpline {
            3
        } else {
            1
        };
        let why = match &values {
            Err(e) => e.clone(),
            Ok(v) if v.len() != t.times.len() * per_key => {
                format!("it has {} values for {} key times", v.len(), t.times.len())
            }
            Ok(v) if v.iter().any(|x| !x.is_finite()) => "a value is not finite".to_string(),
            Ok(_) => String::new(),
        };
        if !why.is_empty() {
            warn(format!("{} (animation `{name}`) was dropped: {why}", t.at));
            return false;
        }
        t.values = values.unwrap_or_default();
        true
    });
}

/// Sample `tracks` (values read) at [`FPS`] into a clip of the rig's DOFs, warning about what the model
/// cannot hold.
fn sample(tracks: &[Track], rig: &RigNodes, name: &str, warn: &mut impl FnMut(String)) -> Result<Clip, String> {
    let drives_joint = |t: &Track| rig.joint_nodes.contains(&t.node);
    let (start, span) = span_of(tracks);
    let frames = frames_of(span);
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
    let mut clip = SampledClip::new(joints, frames);
    let placed_inverse = rig.placed.inverse();
    // Each node's tracks, found once rather than for every node of every frame.
    let mut by_node: Vec<Vec<usize>> = vec![Vec::new(); rig.nodes.len()];
    for (i, t) in tracks.iter().enumerate() {
        by_node[t.node].push(i);
    }
    for f in 0..frames {
        let t = if frames == 1 {
            start
        } else {
            start + span * f as f32 / (frames - 1) as f32
        };
        clip.frame(t - start);
        let world = posed_world(rig, tracks, &by_node, t);
        if rig.synthetic {
            clip.still_root();
        }
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
            let rest = rig.offsets.get(m).copied().unwrap_or(Vec3::ZERO);
            clip.joint(m, rest, rotation, translation);
        }
    }
    clip.finish(span)
}

/// A clip sampled frame by frame (the glTF and FBX imports): each frame's time, then each joint's rotation and
/// translation relative to its parent joint (the root's: its placement), which become the model's channels, and
/// translation channels for the joints whose offsets stray from the skeleton's.
pub(super) struct SampledClip {
    times: Vec<f32>,
    /// One per channel of the model's order (root translation, then x, y, z of each joint).
    values: Vec<Vec<f32>>,
    /// Each joint's previous angles, so that curves do not jump by whole turns.
    previous: Vec<Vec3>,
    /// Each joint's offsets, and how far they stray from its rest offset (0: not at all).
    offsets: Vec<Vec<Vec3>>,
    moved: Vec<f32>,
}

impl SampledClip {
    pub fn new(joints: usize, frames: usize) -> Self {
        Self {
            times: Vec::with_capacity(frames),
            values: vec![Vec::with_capacity(frames); Clip::channels_for(joints)],
            previous: vec![Vec3::ZERO; joints],
            offsets: vec![Vec::with_capacity(frames); joints],
            moved: vec![0.0; joints],
        }
    }

    /// Start a frame at `time` (from the clip's start).
    pub fn frame(&mut self, time: f32) {
        self.times.push(time);
    }

    /// A synthetic root, still at the origin this frame.
    pub fn still_root(&mut self) {
        for v in self.values.iter_mut().take(6) {
            v.push(0.0);
        }
    }

    /// Joint `m` this frame: `rotation` and `translation` relative to its parent joint (the root's in the
    /// scene); `rest` its skeleton offset.
    pub fn joint(&mut self, m: usize, rest: Vec3, rotation: Quat, translation: Vec3) {
        if m == 0 {
            for axis in 0..3 {
                self.values[axis].push(translation[axis]);
            }
        } else if let (Some(moved), Some(offsets)) = (self.moved.get_mut(m), self.offsets.get_mut(m)) {
            let d = (translation - rest).length();
            if d > 1e-3 * (1.0 + rest.length()) {
                *moved = moved.max(d);
            }
            offsets.push(translation);
        }
        let Some(previous) = self.previous.get_mut(m) else {
            return;
        };
        let near = if self.times.len() <= 1 { Vec3::ZERO } else { *previous };
        let d = dofs_from_rotation(rotation, near);
        *previous = d;
        for axis in 0..3 {
            self.values[3 + 3 * m + axis].push(d[axis]);
        }
    }

    /// The clip over `(0, span)`.
    pub fn finish(self, span: f32) -> Result<Clip, String> {
        let channels = self
            .values
            .iter()
            .map(|v| channel(&self.times, v))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let mut translations = Vec::new();
        for (joint, o) in self.offsets.iter().enumerate() {
            if joint == 0 || self.moved[joint] <= 0.0 || o.len() != self.times.len() {
                continue;
            }
            let axis = |a: usize| channel(&self.times, &o.iter().map(|v| v[a]).collect::<Vec<_>>());
            let channels = [axis(0), axis(1), axis(2)];
            let [Ok(x), Ok(y), Ok(z)] = channels else {
                return Err(format!("joint {joint}'s translation channels could not be made"));
            };
            translations.push(JointTranslation {
                joint,
                channels: [x, y, z],
            });
        }
        Ok(Clip {
            range: (0.0, span),
            channels,
            translations,
        })
    }
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
pub(super) fn channel(times: &[f32], values: &[f32]) -> Result<Channel, crate::model::anim::ChannelError> {
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
