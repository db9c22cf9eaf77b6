//! Bones that do not deform: riggers add controls to a skeleton (IK and pole targets, a master `root` or `Body`
//! that moves the whole rig) and mark them as not deforming. glTF and the `.skel` format have no such mark, so
//! binding takes a per-joint `deform` flag (`bind --exclude`, `--only`, the editor's Deforms box) and warns about
//! the joints that look like controls but still deform:
//!
//! - **by name**: a word of the name (split at non-letters and at lower-to-upper case changes, so `IKFrontLeft`,
//!   `Leg_IK.L`, `PoleTarget.R`, `ctrl_hand`) is `ik`, `pole`, `target`, `ctrl` or `control`;
//! - **by place**: every point of the joint's bone lies farther from the mesh than a tenth of its bounding-box
//!   diagonal (a foot target on the ground beside the foot, a root below the feet); or, with the geodesic method,
//!   a root joint with children whose pivot lies outside the mesh's solid (a master root on the ground between
//!   the feet, whose bone to the hips would take the belly).
//!
//! Only a warning: a name can mislead (an artist may weight a bone called `Target`), and a bone outside a thin
//! mesh can still be meant to move it.

use glam::Vec3;

use super::bones::Segment;
use crate::model::Skeleton;

/// The words of a name that mark a control.
const CONTROL_WORDS: [&str; 5] = ["ik", "pole", "target", "ctrl", "control"];

/// How far (as a share of the mesh's bounding-box diagonal) every point of a bone must be from the mesh for the
/// bone to count as lying outside it.
pub const OUTSIDE_SHARE: f32 = 0.1;

/// The most vertices the distance test looks at (every k-th vertex beyond that): it is a warning, not a measure.
const SAMPLE_VERTICES: usize = 20_000;

/// Why a joint looks like a control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlReason {
    /// Its name has a control word (the word).
    Name(&'static str),
    /// Its bone lies outside the mesh.
    Outside,
    /// A root whose pivot lies outside the mesh's solid (a master root on the ground between the feet), found by
    /// the geodesic method's voxels.
    RootOutside,
}

/// The lower-case words of a joint name: split at anything not a letter or digit and where a lower-case letter
/// or digit is followed by an upper-case one.
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            prev_lower = false;
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The control word a name holds, if any (`IKFrontLeft` holds `ik`; `Spike` and `Kick` hold none).
pub fn control_word(name: &str) -> Option<&'static str> {
    let w = words(name);
    // A name that starts with IK glued to a capitalised word (`IKFront`): the upper-case run splits as one word.
    let glued = name.starts_with("IK") && name.chars().nth(2).is_some_and(char::is_uppercase);
    if glued {
        return Some("ik");
    }
    CONTROL_WORDS.iter().copied().find(|c| w.iter().any(|x| x == c))
}

/// The deforming joints of `skel` (by `deform`, missing entries deforming) that look like controls, in joint
/// order. `segments` are the bones in the bind pose, `positions` the mesh.
pub fn likely_controls(
    skel: &Skeleton,
    segments: &[Segment],
    positions: &[Vec3],
    deform: &[bool],
) -> Vec<(usize, ControlReason)> {
    let deforms = |j: usize| deform.get(j).copied().unwrap_or(true);
    let step = positions.len().div_ceil(SAMPLE_VERTICES).max(1);
    let sample: Vec<Vec3> = positions.iter().step_by(step).copied().collect();
    let diag = crate::model::skin::bounds(positions).map_or(0.0, |(lo, hi)| (hi - lo).length());
    let far = OUTSIDE_SHARE * diag;
    let near_mesh = |p: Vec3| sample.iter().any(|q| q.distance_squared(p) <= far * far);
    let mut out = Vec::new();
    for (j, joint) in skel.joints().iter().enumerate().filter(|(j, _)| deforms(*j)) {
        if let Some(word) = control_word(&joint.name) {
            out.push((j, ControlReason::Name(word)));
            continue;
        }
        let mut bone = segments.iter().filter(|s| s.joint as usize == j).peekable();
        if sample.is_empty() || bone.peek().is_none() {
            continue;
        }
        let outside = bone.all(|s| (0..=4).all(|k| !near_mesh(s.a.lerp(s.b, k as f32 / 4.0))));
        if outside {
            out.push((j, ControlReason::Outside));
        }
    }
    out
}

/// The warning for a joint that looks like a control.
pub fn control_warning(j: usize, name: &str, reason: ControlReason) -> String {
    let why = match reason {
        ControlReason::Name(word) => format!("its name says `{word}`"),
        ControlReason::Outside => "its bone lies outside the mesh".to_string(),
        ControlReason::RootOutside => "a root whose pivot lies outside the mesh, as a master root's does".to_string(),
    };
    format!(
        "joint {j} `{name}` looks like a control ({why}); if it does not deform, exclude it (bind --exclude, or \
         untick Deforms in the editor)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Joint;

    #[test]
    fn control_words_are_found_by_word_not_by_letters() {
        for (name, word) in [
            ("IKFrontRight", Some("ik")),
            ("Leg_IK.L", Some("ik")),
            ("PoleTarget.L", Some("pole")),
            ("ctrl_hand", Some("ctrl")),
            ("HandControl", Some("control")),
            ("foot.target", Some("target")),
            ("Spike", None),
            ("Kick", None),
            ("Body", None),
            ("root", None),
            ("mixamorig:LeftHandIndex1", None),
        ] {
            assert_eq!(control_word(name), word, "{name}");
        }
        assert_eq!(words("PoleTarget.L"), ["pole", "target", "l"]);
        assert_eq!(words("Hand2Left"), ["hand2", "left"]);
    }

    #[test]
    fn a_bone_far_from_the_mesh_is_outside_and_excluded_joints_are_not_reported() {
        let skel = crate::model::Skeleton::new(vec![
            Joint::new("hips", None, Vec3::ZERO),
            Joint::new("leg", Some(0), Vec3::new(0.0, -1.0, 0.0)),
            Joint::new("handle", Some(0), Vec3::new(5.0, 0.0, 0.0)),
            Joint::new("IKLeg", Some(0), Vec3::new(0.0, -1.0, 0.2)),
        ])
        .unwrap();
        let bind = crate::model::world_from_joint(&skel, &crate::model::Pose::from_file(&skel));
        let segments = super::super::bones::bone_segments(&skel, &bind);
        // A column of vertices from the hips down the leg.
        let positions: Vec<Vec3> = (0..=20).map(|k| Vec3::new(0.05, -(k as f32) * 0.1, 0.0)).collect();
        let found = likely_controls(&skel, &segments, &positions, &[]);
        assert_eq!(found, vec![(2, ControlReason::Outside), (3, ControlReason::Name("ik"))]);
        let found = likely_controls(&skel, &segments, &positions, &[true, true, false, false]);
        assert!(found.is_empty());
    }
}
