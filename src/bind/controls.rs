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
//!   the feet, whose bone to the hips would take the belly), and under it (or under any joint that does not
//!   deform) a joint whose pivot lies beyond the mesh's bounding box (by more than a cell) while its deforming
//!   children's lie inside the solid (a master `Body` control hovering over the rig, as the Frog's does).
//!
//! A joint named as a control does not deform by default ([`without_named_controls`]): on every shared model the
//! artist gives such joints no weight (the Wolf's four IK targets took 100 vertices when bound). Nor does a root
//! whose pivot lies outside the solid (the geodesic method decides, once it has the voxels): five of the six
//! shared models that have one give it no weight, and the sixth (Trex) only a few percent on its soles. Nor does
//! a hovering control: the Frog's `Body`, 0.3 above its back, which the artist never weights and which took its
//! whole head when bound. Its children must lie inside, so that a chain of joints leading to a mesh that covers
//! only part of the rig (RobotExpressive's first skin) is not taken for one. The report
//! names them, and `BindOptions::bind_controls` (`bind --bind-controls`, or a Deforms box set in the editor) binds
//! them. A bone lying wholly outside the mesh is only warned about: a bone outside a thin mesh can still be meant
//! to move it.

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
    /// Under a root or a joint that does not deform, a joint whose pivot lies beyond the mesh's bounding box while
    /// its deforming children's lie inside the solid (children named as controls aside: a master `Body` control
    /// hovering over the rig), found by the geodesic method's voxels.
    Hovering,
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

/// `opts` with the joints whose names mark them as controls not deforming, unless it binds them
/// (`bind_controls`) or that would leave nothing deforming; those joints and their words go to `excluded`.
pub fn without_named_controls<'a>(
    skel: &Skeleton,
    opts: &'a super::BindOptions,
    excluded: &mut Vec<(usize, &'static str)>,
) -> std::borrow::Cow<'a, super::BindOptions> {
    use std::borrow::Cow;
    if opts.bind_controls {
        return Cow::Borrowed(opts);
    }
    let named: Vec<(usize, &'static str)> = (0..skel.len())
        .filter(|&j| opts.deforms(j))
        .filter_map(|j| control_word(&skel.joints()[j].name).map(|w| (j, w)))
        .collect();
    let deforming = (0..skel.len()).filter(|&j| opts.deforms(j)).count();
    if named.is_empty() || named.len() == deforming {
        return Cow::Borrowed(opts);
    }
    let o = opts.without(named.iter().map(|e| e.0), skel.len());
    *excluded = named;
    Cow::Owned(o)
}

/// Per joint, whether it deforms by default: every joint but those whose names mark them as controls (what the
/// editor's Deforms boxes start as).
pub fn default_deform(skel: &Skeleton) -> Vec<bool> {
    let d: Vec<bool> = skel.joints().iter().map(|j| control_word(&j.name).is_none()).collect();
    if d.iter().any(|&x| x) {
        d
    } else {
        vec![true; skel.len()]
    }
}

/// The warning for a joint left out because it looks like a control.
pub fn excluded_warning(j: usize, name: &str, reason: ControlReason) -> String {
    let why = match reason {
        ControlReason::Name(word) => format!("its name says `{word}`, as a control's does"),
        ControlReason::Outside => "its bone lies outside the mesh".to_string(),
        ControlReason::RootOutside => {
            "it is a root whose pivot lies outside the mesh, as a master root's is".to_string()
        }
        ControlReason::Hovering => {
            "its pivot lies beyond the mesh, over joints inside it, as a master control's does".to_string()
        }
    };
    format!("joint {j} `{name}` is not bound: {why}; to bind it, use --bind-controls (or tick Deforms in the editor)")
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
        ControlReason::Hovering => {
            "its pivot lies beyond the mesh, over joints inside it, as a master control's does".to_string()
        }
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

    #[test]
    fn joints_named_as_controls_do_not_deform_unless_asked() {
        use crate::bind::BindOptions;
        let skel = crate::model::Skeleton::new(vec![
            Joint::new("hips", None, Vec3::ZERO),
            Joint::new("leg", Some(0), Vec3::new(0.0, -1.0, 0.0)),
            Joint::new("IKLeg", Some(0), Vec3::new(0.0, -1.0, 0.2)),
            Joint::new("PoleTarget.L", Some(0), Vec3::new(0.0, -0.5, 1.0)),
        ])
        .unwrap();
        let mut excluded = Vec::new();
        let opts = BindOptions::default();
        let o = without_named_controls(&skel, &opts, &mut excluded);
        assert_eq!(o.deform, vec![true, true, false, false]);
        assert_eq!(excluded, vec![(2, "ik"), (3, "pole")]);
        assert_eq!(default_deform(&skel), o.deform);
        // Asked to bind them, the options are as given; a joint already off stays off and is not reported.
        let mut excluded = Vec::new();
        let asked = BindOptions {
            bind_controls: true,
            ..BindOptions::default()
        };
        assert_eq!(*without_named_controls(&skel, &asked, &mut excluded), asked);
        assert!(excluded.is_empty());
        let off = BindOptions {
            deform: vec![true, true, false],
            ..BindOptions::default()
        };
        let o = without_named_controls(&skel, &off, &mut excluded);
        assert_eq!(
            (o.deform.as_slice(), excluded.as_slice()),
            (&[true, true, false, false][..], &[(3, "pole")][..])
        );
        // A skeleton of nothing but control names keeps them all: something must deform.
        let only = crate::model::Skeleton::new(vec![Joint::new("ctrl_root", None, Vec3::ZERO)]).unwrap();
        let mut excluded = Vec::new();
        assert!(without_named_controls(&only, &opts, &mut excluded).deform.is_empty());
        assert_eq!(default_deform(&only), vec![true]);
    }
}
