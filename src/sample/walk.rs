//! A walk cycle for the creature's skeleton, for the editor's built-in scene and the playback tests.

use std::f32::consts::TAU;

use crate::model::skeleton::{Pose, Skeleton};

/// A walk cycle for a skeleton with the creature's joint names (`hip_l`, `knee_r`, `shoulder_l`, ...): hips
/// swing (x rotation -0.5 forward to 0.35 back), knees bend during the forward swing, shoulders swing against
/// the hips, the pelvis bobs; the right side runs half a cycle behind the left. Every other DOF holds the
/// skeleton file's pose. `period` seconds per cycle, keys every 1/24 of it with the curves' own slopes, cycling
/// both ways. For the editor's built-in scene and the playback tests.
pub fn walk_clip(skel: &Skeleton, period: f32) -> crate::model::Clip {
    use crate::model::{Channel, Clip, Extrapolation, Key, Tangent};
    let period = if period.is_finite() && period > 0.0 {
        period
    } else {
        1.2
    };
    const STEPS: usize = 24;
    let file = Pose::from_file(skel);
    let constant = |v: f32| -> Channel {
        let key = Key {
            time: 0.0,
            value: v,
            tangent_in: Tangent::Flat,
            tangent_out: Tangent::Flat,
        };
        match Channel::new(Extrapolation::Constant, Extrapolation::Constant, vec![key]) {
            Ok(c) => c,
            Err(_) => unreachable!("one finite key makes a channel"),
        }
    };
    let curve = |f: &dyn Fn(f32) -> f32| -> Channel {
        let keys = (0..=STEPS)
            .map(|k| {
                let phase = k as f32 / STEPS as f32;
                // The curve's own slope (per second), so the cycle joins smoothly at its ends too.
                let h = 1e-3;
                let slope = (f(phase + h) - f(phase - h)) / (2.0 * h) / period;
                Key {
                    time: phase * period,
                    value: f(phase),
                    tangent_in: Tangent::Fixed(slope),
                    tangent_out: Tangent::Fixed(slope),
                }
            })
            .collect();
        // Keys are in time order and finite by construction.
        Channel::new(Extrapolation::Cycle, Extrapolation::Cycle, keys).unwrap_or_else(|_| constant(f(0.0)))
    };
    let root = file.root_translation;
    let mut channels = vec![
        constant(root.x),
        curve(&|p| root.y + 0.02 * (2.0 * TAU * p).cos()),
        constant(root.z),
    ];
    for (j, joint) in skel.joints().iter().enumerate() {
        let base = file.dofs[j];
        let (kind, side) = match joint.name.rsplit_once('_') {
            Some((kind, "l")) => (kind, 0.0),
            Some((kind, "r")) => (kind, 0.5),
            _ => ("", 0.0),
        };
        let x: Channel = match kind {
            "hip" => curve(&|p| -0.075 - 0.425 * (TAU * (p + side)).cos()),
            "knee" => curve(&|p| 0.15 + 0.9 * (-(TAU * (p + side)).sin()).max(0.0)),
            "shoulder" => curve(&|p| base.x + 0.35 * (TAU * (p + side)).cos()),
            _ => constant(base.x),
        };
        channels.push(x);
        channels.push(constant(base.y));
        channels.push(constant(base.z));
    }
    Clip::new((0.0, period), channels)
}
