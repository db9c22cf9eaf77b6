//! Keyframed animation clips (CSE169, "Channels" and "Keyframe animation" lectures).
//!
//! A clip is a list of channels, each a curve of keys `(time, value, tangent in, tangent out)` evaluated as a
//! cubic Hermite spline between keys and by an extrapolation rule outside them.
//!
//! Tangents are slopes (value per unit time):
//! - `flat`: 0;
//! - `linear`: the slope of the straight line to the neighbouring key (in: from the previous key; out: to the
//!   next one); at the first or last key, where that neighbour is missing, the slope to the other neighbour;
//! - `smooth`: `(p[i+1] - p[i-1]) / (t[i+1] - t[i-1])` (Catmull-Rom); at the first or last key the same as linear;
//! - a number: that slope.
//!
//! A channel with a single key has zero tangents. Between keys `i` and `i+1`, with `u = (t - t0) / (t1 - t0)`,
//! `v0 = out[i] * (t1 - t0)` and `v1 = in[i+1] * (t1 - t0)`, the value is `a u³ + b u² + c u + d` with
//! `a = 2p0 - 2p1 + v0 + v1`, `b = -3p0 + 3p1 - 2v0 - v1`, `c = v0`, `d = p0`.
//!
//! Extrapolation before the first key (`extrapolate IN ...`) and after the last (`... OUT`), with the keys'
//! span `P = t_last - t_first`:
//! - `constant`: the first or last key's value;
//! - `linear`: the first or last key's value plus its tangent (in for before, out for after) times the distance;
//! - `cycle`: the curve repeated with period `P`;
//! - `cycle_offset`: repeated, each repetition shifted by `p_last - p_first`;
//! - `bounce`: repeated forwards then backwards (ping-pong).
//!
//! The file's `range` is the playback range only; extrapolation is relative to the keys, as in the course.
//! Channel order for a skeleton: root translation x, y, z, then rotation x, y, z of each joint, depth-first.
//! Beyond the course's channels, a clip may move joints other than the root ([`JointTranslation`]: an IK foot,
//! a hip bob, as glTF and FBX clips do); the course's `.anim` has no place for those and drops them on write
//! ([`Clip::dropped_by_anim`]).

use super::skeleton::{Pose, Skeleton};

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Tangent {
    Flat,
    Linear,
    Smooth,
    Fixed(f32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Extrapolation {
    Constant,
    Linear,
    Cycle,
    CycleOffset,
    Bounce,
}

impl Extrapolation {
    pub fn name(self) -> &'static str {
        match self {
            Self::Constant => "constant",
            Self::Linear => "linear",
            Self::Cycle => "cycle",
            Self::CycleOffset => "cycle_offset",
            Self::Bounce => "bounce",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "constant" => Self::Constant,
            "linear" => Self::Linear,
            "cycle" => Self::Cycle,
            "cycle_offset" => Self::CycleOffset,
            "bounce" => Self::Bounce,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Key {
    pub time: f32,
    pub value: f32,
    pub tangent_in: Tangent,
    pub tangent_out: Tangent,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ChannelError {
    #[error("a channel needs at least one key")]
    NoKeys,
    #[error("key {index} at time {time} does not come after the previous key's time {previous}")]
    TimeOrder { index: usize, time: f32, previous: f32 },
    #[error("key {index} has a non-finite number")]
    NotFinite { index: usize },
}

/// One animated value. Built through [`Channel::new`], which checks the keys and precomputes the slopes.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Channel {
    pub extrapolate_in: Extrapolation,
    pub extrapolate_out: Extrapolation,
    keys: Vec<Key>,
    /// Slope in and out at each key, from the tangent rules.
    slopes: Vec<(f32, f32)>,
}

impl Channel {
    pub fn new(
        extrapolate_in: Extrapolation,
        extrapolate_out: Extrapolation,
        keys: Vec<Key>,
    ) -> Result<Self, ChannelError> {
        if keys.is_empty() {
            return Err(ChannelError::NoKeys);
        }
        for (i, k) in keys.iter().enumerate() {
            let fixed_ok = |t: Tangent| !matches!(t, Tangent::Fixed(v) if !v.is_finite());
            if !k.time.is_finite() || !k.value.is_finite() || !fixed_ok(k.tangent_in) || !fixed_ok(k.tangent_out) {
                return Err(ChannelError::NotFinite { index: i });
            }
            if i > 0 && k.time <= keys[i - 1].time {
                return Err(ChannelError::TimeOrder {
                    index: i,
                    time: k.time,
                    previous: keys[i - 1].time,
                });
            }
        }
        let slopes = compute_slopes(&keys);
        Ok(Self {
            extrapolate_in,
            extrapolate_out,
            keys,
            slopes,
        })
    }

    pub fn keys(&self) -> &[Key] {
        &self.keys
    }

    /// The slopes (in, out) that the tangent rules give at each key.
    pub fn slopes(&self) -> &[(f32, f32)] {
        &self.slopes
    }

    /// The channel's value at `time`.
    pub fn eval(&self, time: f32) -> f32 {
        let n = self.keys.len();
        let first = self.keys[0];
        let last = self.keys[n - 1];
        if n == 1 || !time.is_finite() {
            return first.value;
        }
        let period = last.time - first.time;
        let rule = if time < first.time {
            self.extrapolate_in
        } else if time > last.time {
            self.extrapolate_out
        } else {
            return self.eval_inside(time);
        };
        match rule {
            Extrapolation::Constant => {
                if time < first.time {
                    first.value
                } else {
                    last.value
                }
            }
            Extrapolation::Linear => {
                if time < first.time {
                    first.value + self.slopes[0].0 * (time - first.time)
                } else {
                    last.value + self.slopes[n - 1].1 * (time - last.time)
                }
            }
            Extrapolation::Cycle | Extrapolation::CycleOffset | Extrapolation::Bounce => {
                let rel = (time as f64 - first.time as f64) / period as f64;
                let cycles = rel.floor();
                let frac = (rel - cycles) as f32;
                match rule {
                    Extrapolation::Cycle => self.eval_inside(first.time + frac * period),
                    Extrapolation::CycleOffset => {
                        self.eval_inside(first.time + frac * period) + cycles as f32 * (last.value - first.value)
                    }
                    _ => {
                        let odd = (cycles as i64).rem_euclid(2) == 1;
                        let f = if odd { 1.0 - frac } else { frac };
                        self.eval_inside(first.time + f * period)
                    }
                }
            }
        }
    }

    /// Hermite evaluation for `time` within the keys' span.
    fn eval_inside(&self, time: f32) -> f32 {
        let n = self.keys.len();
        // The span whose start is the last key at or before `time`.
        let i = self
            .keys
            .partition_point(|k| k.time <= time)
            .saturating_sub(1)
            .min(n - 2);
        let (k0, k1) = (self.keys[i], self.keys[i + 1]);
        let dt = k1.time - k0.time;
        let u = ((time - k0.time) / dt).clamp(0.0, 1.0);
        let (p0, p1) = (k0.value, k1.value);
        let v0 = self.slopes[i].1 * dt;
        let v1 = self.slopes[i + 1].0 * dt;
        let a = 2.0 * p0 - 2.0 * p1 + v0 + v1;
        let b = -3.0 * p0 + 3.0 * p1 - 2.0 * v0 - v1;
        ((a * u + b) * u + v0) * u + p0
    }
}

fn compute_slopes(keys: &[Key]) -> Vec<(f32, f32)> {
    let n = keys.len();
    let slope = |a: usize, b: usize| (keys[b].value - keys[a].value) / (keys[b].time - keys[a].time);
    (0..n)
        .map(|i| {
            if n == 1 {
                return (0.0, 0.0);
            }
            let prev = i.checked_sub(1);
            let next = (i + 1 < n).then_some(i + 1);
            let linear_in = match prev {
                Some(p) => slope(p, i),
                None => slope(i, i + 1),
            };
            let linear_out = match next {
                Some(q) => slope(i, q),
                None => slope(i - 1, i),
            };
            let smooth = match (prev, next) {
                (Some(p), Some(q)) => Some(slope(p, q)),
                _ => None,
            };
            let rule = |t: Tangent, linear: f32| match t {
                Tangent::Flat => 0.0,
                Tangent::Linear => linear,
                Tangent::Smooth => smooth.unwrap_or(linear),
                Tangent::Fixed(v) => v,
            };
            (
                rule(keys[i].tangent_in, linear_in),
                rule(keys[i].tangent_out, linear_out),
            )
        })
        .collect()
}

/// Frames per second at which every command and the editor sample a clip (check, compare, export).
pub const SAMPLE_FPS: f32 = 30.0;

/// The most frames any sampled timeline holds (check, compare, export): 65,535, about 36 minutes at 30 per
/// second. A 26-byte file's `range 0 1e9` is an error before anything is allocated, not 120 GB.
pub const MAX_FRAMES: usize = u16::MAX as usize;

/// What sampling a clip may cost its caller, beyond [`MAX_FRAMES`]: frames times `per_frame` at most `limit`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameBudget {
    /// The work one frame costs (a check: the mesh's vertices plus the skeleton's joints).
    pub per_frame: usize,
    /// What that work is counted in, for the message: "vertices and joints".
    pub unit: &'static str,
    /// The most work the caller takes (frames times `per_frame`).
    pub limit: f64,
    /// Who refuses, for the message: "a check".
    pub who: &'static str,
}

/// Why a clip's timeline cannot be sampled.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FramesError {
    #[error(
        "the animation's range {} .. {} is {} frames at {fps} per second, more than the {max} frames (about 36 minutes at 30 per second) a sampled timeline holds",
        short(f64::from(*start)),
        short(f64::from(*end)),
        short(*frames),
        max = MAX_FRAMES
    )]
    TooMany {
        start: f32,
        end: f32,
        fps: f32,
        frames: f64,
    },
    #[error(
        "the animation's range {} .. {} is {} frames at {fps} per second for {per_frame} {unit}: {} in all, more than the {limit:e} {who} takes",
        short(f64::from(*start)),
        short(f64::from(*end)),
        short(*frames),
        short(frames * budget.per_frame as f64),
        per_frame = budget.per_frame,
        unit = budget.unit,
        limit = budget.limit,
        who = budget.who
    )]
    TooMuchWork {
        start: f32,
        end: f32,
        fps: f32,
        frames: f64,
        budget: FrameBudget,
    },
}

/// A number as a message shows it: in full below ten million, else as `3e10` (three significant digits).
fn short(x: f64) -> String {
    if x.abs() < 1e7 {
        format!("{}", x as f32)
    } else {
        let e = format!("{x:.2e}");
        // 3.00e10 as 3e10, 1.50e8 as 1.5e8.
        match e.split_once('e') {
            Some((m, exp)) => format!("{}e{exp}", m.trim_end_matches('0').trim_end_matches('.')),
            None => e,
        }
    }
}

/// An animation: a playback range and its channels.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Clip {
    pub range: (f32, f32),
    pub channels: Vec<Channel>,
    /// Joints other than the root that the clip moves, each joint at most once, in joint order.
    pub translations: Vec<JointTranslation>,
}

/// The animated offset of one joint other than the root: its pivot in its parent's space, x, y and z (what
/// the joint's `offset` is at rest).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct JointTranslation {
    pub joint: usize,
    pub channels: [Channel; 3],
}

impl Clip {
    /// A clip of the course's channels alone (no joint moved).
    pub fn new(range: (f32, f32), channels: Vec<Channel>) -> Self {
        Self {
            range,
            channels,
            translations: Vec::new(),
        }
    }

    /// What writing this clip as a course `.anim` loses, as a message, or `None` when nothing is lost: the
    /// format has a root translation and rotations only, so the moves of other joints are dropped.
    pub fn dropped_by_anim(&self) -> Option<String> {
        let n = self.translations.len();
        (n > 0).then(|| {
            let joints = if n == 1 {
                "1 joint".to_string()
            } else {
                format!("{n} joints")
            };
            format!(
                "the clip moves {joints} other than the root; an .anim file keeps rotations and the root's \
                 translation only, so those moves were not written"
            )
        })
    }

    /// How many frames [`Clip::sample_times`] gives at `fps` (at least `at_least`), as a float so that an absurd
    /// range is counted, not allocated.
    pub fn frame_count(&self, fps: f32, at_least: usize) -> f64 {
        // A span a hair over a whole number of frames (1.2 s as an f32 is 36.0000014 frames at 30 per second)
        // does not get a frame of its own: writer and reader of a sampled clip must agree on the count.
        ((f64::from(self.span()) * f64::from(fps) - 1e-3).ceil().max(0.0) + 1.0).max(at_least as f64)
    }

    /// The one way to sample a clip's timeline: frame times at `fps` over the range, both ends included, evenly
    /// spaced (at least `at_least` of them; an empty or reversed range counts as length 0, so all its frames are
    /// at its start), once [`Clip::checked_frames`] has allowed their count.
    pub fn sample_times(
        &self,
        fps: f32,
        at_least: usize,
        budget: Option<FrameBudget>,
    ) -> Result<Vec<f32>, FramesError> {
        let frames = self.checked_frames(fps, at_least, budget)?;
        let start = self.range.0;
        let span = self.span();
        Ok((0..frames)
            .map(|k| {
                if frames == 1 {
                    start
                } else {
                    start + span * k as f32 / (frames - 1) as f32
                }
            })
            .collect())
    }

    /// How many frames [`Clip::sample_times`] gives, checked before anything is allocated: at most
    /// [`MAX_FRAMES`], and with a `budget`, frames times its cost per frame at most its limit (which bounds the
    /// caller's time).
    pub fn checked_frames(&self, fps: f32, at_least: usize, budget: Option<FrameBudget>) -> Result<usize, FramesError> {
        let count = self.frame_count(fps, at_least);
        let (start, end) = self.range;
        if let Some(b) = budget {
            if count * b.per_frame as f64 > b.limit {
                return Err(FramesError::TooMuchWork {
                    start,
                    end,
                    fps,
                    frames: count,
                    budget: b,
                });
            }
        }
        if count > MAX_FRAMES as f64 {
            return Err(FramesError::TooMany {
                start,
                end,
                fps,
                frames: count,
            });
        }
        Ok(count as usize)
    }

    /// The range's length: 0 for an empty, reversed or non-finite range.
    fn span(&self) -> f32 {
        let (t0, t1) = self.range;
        if t1 > t0 && (t1 - t0).is_finite() { t1 - t0 } else { 0.0 }
    }

    /// How many channels a skeleton of `joints` joints needs: 3 for the root translation, 3 per joint.
    pub fn channels_for(joints: usize) -> usize {
        3 + 3 * joints
    }

    /// Set `pose` from the clip at `time`: channels 0..3 the root translation, then x, y, z rotation of each
    /// joint (clamped to its limits), and the offsets of the joints it moves (any other joint at its skeleton
    /// offset). Channels beyond the skeleton are ignored; DOFs without a channel keep their value in `pose`.
    pub fn apply(&self, skel: &Skeleton, time: f32, pose: &mut Pose) {
        pose.offsets.clear();
        for t in self.translations.iter().filter(|t| t.joint > 0 && t.joint < skel.len()) {
            if pose.offsets.is_empty() {
                pose.offsets.resize(skel.len(), None);
            }
            let [x, y, z] = &t.channels;
            let v = glam::Vec3::new(x.eval(time), y.eval(time), z.eval(time));
            pose.offsets[t.joint] = v.is_finite().then_some(v);
        }
        let mut values = self.channels.iter().map(|c| c.eval(time));
        for axis in 0..3 {
            if let Some(v) = values.next() {
                pose.root_translation[axis] = v;
            }
        }
        for j in 0..skel.len() {
            for axis in 0..3 {
                if let Some(v) = values.next() {
                    pose.set_dof(skel, j, axis, v);
                }
            }
        }
    }
}

/// The pose of `skel` under `clip` at `time`, starting from the skeleton file's own pose for any DOF the clip
/// does not drive.
pub fn pose_at(skel: &Skeleton, clip: &Clip, time: f32) -> Pose {
    let mut pose = Pose::from_file(skel);
    clip.apply(skel, time, &mut pose);
    pose
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_cover_the_range_evenly_and_at_least_as_many_as_asked() {
        let clip = |range| Clip::new(range, Vec::new());
        let t = clip((0.0, 1.0)).sample_times(30.0, 2, None).unwrap();
        assert_eq!((t.len(), t[0], t[30]), (31, 0.0, 1.0));
        assert!((t[15] - 0.5).abs() < 1e-6);
        assert_eq!(clip((2.0, 2.0)).sample_times(30.0, 2, None), Ok(vec![2.0, 2.0]));
        assert_eq!(
            clip((3.0, 1.0)).sample_times(30.0, 1, None),
            Ok(vec![3.0]),
            "a reversed range is its start"
        );
        assert_eq!(clip((0.0, 1e9)).frame_count(30.0, 1), 3e10 + 1.0);
    }

    #[test]
    fn sampling_refuses_absurd_ranges_before_allocating() {
        let clip = |range| Clip::new(range, Vec::new());
        for range in [(0.0, 1e9), (0.0, 3e38), (-1e7, 0.0), (0.0, 2200.0)] {
            let e = clip(range).sample_times(30.0, 1, None).unwrap_err();
            assert!(matches!(e, FramesError::TooMany { .. }), "{range:?}: {e}");
        }
        assert_eq!(
            clip((0.0, 2000.0)).sample_times(30.0, 1, None).map(|t| t.len()),
            Ok(60_001)
        );
        // A span that overflows, an empty or reversed range, a NaN: all frames at the start.
        for (range, start) in [((-3e38, 3e38), -3e38), ((5.0, -5.0), 5.0), ((f32::NAN, 1.0), f32::NAN)] {
            let t = clip(range).sample_times(30.0, 2, None).unwrap();
            assert_eq!(t.len(), 2, "{range:?}");
            assert!(
                t.iter().all(|&x| x.to_bits() == f32::to_bits(start)),
                "{range:?}: {t:?}"
            );
        }
        let budget = FrameBudget {
            per_frame: 1000,
            unit: "vertices and joints",
            limit: 1e6,
            who: "a test",
        };
        assert_eq!(
            clip((0.0, 10.0)).sample_times(30.0, 1, Some(budget)).map(|t| t.len()),
            Ok(301)
        );
        let e = clip((0.0, 100.0)).sample_times(30.0, 1, Some(budget)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the animation's range 0 .. 100 is 3001 frames at 30 per second for 1000 vertices and joints: 3001000 in all, \
             more than the 1e6 a test takes"
        );
    }

    fn key(time: f32, value: f32, t: Tangent) -> Key {
        Key {
            time,
            value,
            tangent_in: t,
            tangent_out: t,
        }
    }

    #[test]
    fn linear_extrapolation_before_uses_the_first_in_tangent() {
        // Keys (1, 2) and (3, 6), linear: slope 2 everywhere, so the line continues on both sides.
        let c = Channel::new(
            Extrapolation::Linear,
            Extrapolation::Linear,
            vec![key(1.0, 2.0, Tangent::Linear), key(3.0, 6.0, Tangent::Linear)],
        )
        .unwrap();
        for t in [-1.0f32, 0.0, 1.5, 2.0, 4.0] {
            assert!((c.eval(t) - 2.0 * t).abs() < 1e-5, "t = {t}");
        }
    }

    #[test]
    fn a_single_key_is_constant_whatever_the_rules() {
        let c = Channel::new(
            Extrapolation::Linear,
            Extrapolation::CycleOffset,
            vec![key(0.0, 5.0, Tangent::Smooth)],
        )
        .unwrap();
        assert_eq!((c.eval(-3.0), c.eval(0.0), c.eval(7.0)), (5.0, 5.0, 5.0));
    }

    #[test]
    fn keys_must_move_forward_in_time() {
        let e = Channel::new(
            Extrapolation::Constant,
            Extrapolation::Constant,
            vec![key(1.0, 0.0, Tangent::Flat), key(1.0, 1.0, Tangent::Flat)],
        );
        assert!(matches!(e, Err(ChannelError::TimeOrder { index: 1, .. })));
    }
}
