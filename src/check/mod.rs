//! Range-of-motion check: where a rig deforms badly, found before anyone animates it, with no reference weights.
//!
//! Every joint that deforms something (its subtree's weight is neither nothing nor everything anywhere on the
//! mesh) is swept through its range of motion ([`crate::eval::posed::sweep`]: its DOF limits where the `.skel`
//! has them, else plus and minus [`CheckOptions::free_degrees`] about each world axis, in
//! [`CheckOptions::steps`] steps each way), its descendants following; with a clip, every frame of the
//! animation is measured too. In each pose the mesh is skinned (linear blend or dual quaternions) and five things
//! are measured per vertex, each as a severity: the measure divided by its tolerance ([`Tolerances`]), so 1 is at
//! the tolerance and anything at or above it is a problem:
//!
//! - **collapse**: the share of local volume lost, the volume being that of the wedge between a vertex's
//!   triangles and the nearest point of its dominant joint's bone (the candy wrapper, a collapsed elbow);
//! - **stretch** and **shear**: each triangle's principal stretches (the singular values of its in-plane
//!   deformation), against a band for lengths and areas, and their ratio;
//! - **flip**: how far a triangle's normal turns away from where its dominant joint turns it (past 90 degrees it
//!   has turned over);
//! - **jump**: how far a vertex lands from where its neighbourhood goes (the median displacement of the vertices
//!   within two edges), in edge lengths (a stray weight on a far joint);
//! - **penetration**: how far a vertex passes through a separate part it lay against at rest (the vertex of the
//!   other part nearest it within two edge lengths, and that vertex's normal), in edge lengths.
//!
//! Vertices at or above severity 1 for one joint and one measure form regions (connected over the welded mesh
//! graph); each region is a [`Finding`] with the pose where it is worst. Definitions and defaults are in
//! docs/check.md.
//!
//! Cost: only what a sweep moves is measured: triangles with a corner whose subtree weight is not 0 or 1, or
//! whose corners differ; vertices whose two-edge neighbourhood holds different subtree weights; contacts whose two
//! vertices do. A sweep moves a vertex by a closed form in its subtree weight `s` (linear blend:
//! `v + s (R v' - v')` about the pivot; dual quaternions: a turn by `2 atan2(s sin(θ/2), 1 - s + s cos(θ/2))`,
//! which is what blending the identity with the swing gives). Joints run in parallel.

mod jump;
mod measure;
mod prep;
mod regions;
mod rerun;
mod sweep;
#[cfg(test)]
mod tests;

pub mod fix;

use glam::{Mat4, Vec3};

use crate::deform::Method;
use crate::model::{Clip, Skeleton, Weights};

pub use regions::Region;
pub use rerun::{affected_joints, pose_for};

/// What is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Collapse,
    Stretch,
    Shear,
    Flip,
    Jump,
    Penetration,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Collapse,
        Kind::Stretch,
        Kind::Shear,
        Kind::Flip,
        Kind::Jump,
        Kind::Penetration,
    ];
    pub const COUNT: usize = 6;

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn label(self) -> &'static str {
        match self {
            Kind::Collapse => "collapse",
            Kind::Stretch => "stretch",
            Kind::Shear => "shear",
            Kind::Flip => "flip",
            Kind::Jump => "jump",
            Kind::Penetration => "penetration",
        }
    }

    /// The measure in words, for a value of this kind.
    pub fn describe(self, value: f32) -> String {
        match self {
            // Past 100% the wedge's volume has changed sign: the skin there has folded through the bone. A loss
            // of 657% read as nonsense; the volume left, inverted, says what happened.
            Kind::Collapse if value > 1.0 => format!(
                "turned inside out: the wedge between the skin and its bone holds {:.1} times its rest volume, \
                 inverted",
                value - 1.0
            ),
            Kind::Collapse => format!(
                "{:.0}% of the wedge between the skin and its bone lost (its local volume)",
                value * 100.0
            ),
            Kind::Stretch => format!("stretched {value:.2} times"),
            Kind::Shear => format!("sheared {value:.2} to 1"),
            Kind::Flip => format!("normal turned {value:.0} degrees"),
            Kind::Jump => format!("{value:.2} edge lengths from its neighbourhood"),
            Kind::Penetration => format!("{value:.2} edge lengths through another part"),
        }
    }
}

/// Where each measure becomes a problem (severity 1).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Tolerances {
    /// Share of a vertex's local volume lost.
    pub collapse: f32,
    /// Factor by which a triangle may stretch or squash in any direction (lengths).
    pub stretch: f32,
    /// Factor by which a triangle's area may grow or shrink.
    pub area: f32,
    /// Ratio of a triangle's largest to smallest stretch.
    pub shear: f32,
    /// Degrees a triangle's normal may turn from where its dominant joint turns it.
    pub flip_degrees: f32,
    /// Edge lengths a vertex may land from where its neighbourhood goes.
    pub jump: f32,
    /// Edge lengths a vertex may pass through another part.
    pub penetration: f32,
}

impl Default for Tolerances {
    fn default() -> Self {
        Self {
            collapse: 0.95,
            stretch: 2.0,
            area: 2.5,
            shear: 8.0,
            flip_degrees: 90.0,
            jump: 1.0,
            penetration: 1.0,
        }
    }
}

/// How the check runs.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CheckOptions {
    /// Linear blend or dual quaternions (rigid skinning is measured as linear blend).
    pub method: Method,
    /// Swing about each world axis where a joint has no DOF limit, both ways.
    pub free_degrees: f32,
    /// Steps from the bind pose to each end of a range.
    pub steps: usize,
    /// Sweep only these joints (all that deform something when `None`).
    pub joints: Option<Vec<usize>>,
    pub tolerances: Tolerances,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            method: Method::Linear,
            free_degrees: 90.0,
            steps: 3,
            joints: None,
            tolerances: Tolerances::default(),
        }
    }
}

/// The pose a finding is worst in.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PoseRef {
    /// `joint` turned by `degrees` about the unit world `axis` through its bind-pose pivot, from the bind pose.
    Swing { joint: usize, axis: [f32; 3], degrees: f32 },
    /// The clip at `time` seconds.
    Frame { time: f32 },
}

impl PoseRef {
    /// `z +90°`-style text: the axis named when it is a world axis or the joint's own.
    pub fn describe(&self, skel: &Skeleton, bind: &[Mat4]) -> String {
        match *self {
            PoseRef::Swing { joint, axis, degrees } => {
                let a = Vec3::from(axis);
                let frame = bind.get(joint).copied().unwrap_or(Mat4::IDENTITY);
                let name = (0..3)
                    .find(|&i| a.abs_diff_eq(Vec3::AXES[i], 1e-5))
                    .map(|i| ["x", "y", "z"][i].to_string())
                    .or_else(|| {
                        (0..3)
                            .find(|&i| a.abs_diff_eq(frame.col(i).truncate().normalize_or_zero(), 1e-4))
                            .map(|i| format!("local {}", ["x", "y", "z"][i]))
                    })
                    .unwrap_or_else(|| format!("({:.2}, {:.2}, {:.2})", a.x, a.y, a.z));
                let who = skel.joint(joint).map_or("?", |j| j.name.as_str());
                format!("{} {name} {degrees:+.0}°", crate::formats::printable(who))
            }
            PoseRef::Frame { time } => format!("frame at {time:.3} s"),
        }
    }
}

/// One problem: a region of vertices where one measure passes its tolerance when one joint moves (or in the
/// animation).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Finding {
    pub kind: Kind,
    /// The swept joint (`None` for an animation frame).
    pub joint: Option<usize>,
    pub joint_name: String,
    /// The pose where the region is worst.
    pub pose: PoseRef,
    /// Worst severity in the region (measure / tolerance).
    pub severity: f32,
    /// The measure there, in its own unit ([`Kind::describe`]).
    pub value: f32,
    #[serde(flatten)]
    pub region: Region,
}

/// One swept joint.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct JointSummary {
    pub joint: usize,
    pub name: String,
    /// Poses measured.
    pub poses: usize,
    /// Worst severity over every measure, pose and vertex (problems or not).
    pub worst: f32,
    pub findings: usize,
}

/// What a check found.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CheckReport {
    pub vertices: usize,
    pub triangles: usize,
    /// The bounding-box diagonal of the rest mesh.
    pub diagonal: f32,
    pub method: Method,
    /// Poses measured in all (swings and frames).
    pub poses: usize,
    /// Swept joints, worst first.
    pub joints: Vec<JointSummary>,
    /// Every problem, worst first.
    pub findings: Vec<Finding>,
    /// Per kind, how many findings.
    pub counts: [usize; Kind::COUNT],
    /// Worst severity over everything measured (0 when nothing moved).
    pub worst: f32,
    /// Per vertex, its worst severity over every measure, joint and pose: what the editor paints.
    pub vertex_worst: Vec<f32>,
    /// Per swept joint (and the animation), the worst severity of each vertex it measured: what
    /// [`CheckReport::merge`] rebuilds `vertex_worst` from when some joints are checked again.
    #[serde(skip)]
    pub groups: Vec<GroupWorst>,
}

/// One swept joint's (or the animation's) measured vertices and their worst severities.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupWorst {
    /// The joint (`None` for the animation).
    pub joint: Option<usize>,
    pub poses: usize,
    /// (vertex, worst severity), ascending by vertex.
    pub vertices: Vec<(u32, f32)>,
}

/// The steps a sweep may take from the bind pose to each end of a range.
pub const STEPS: std::ops::RangeInclusive<usize> = 1..=64;

/// Why a check cannot run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CheckError {
    #[error("the weights have {weights} vertices, the mesh {mesh}")]
    Count { weights: usize, mesh: usize },
    #[error("the bind pose has {bind} joints, the skeleton {joints}")]
    Bind { bind: usize, joints: usize },
    #[error("joint {0} is not in the skeleton")]
    Joint(usize),
    #[error("{0} steps is not between 1 and 64")]
    Steps(usize),
    /// The clip's frames are more than a check takes (the message names the range and the limit).
    #[error(transparent)]
    Frames(#[from] crate::model::FramesError),
    #[error("cancelled")]
    Cancelled,
}

/// The rig a check runs on: the skeleton, its bind pose (world matrices), the rest mesh and its weights.
#[derive(Clone, Copy)]
pub struct Rig<'a> {
    pub skel: &'a Skeleton,
    pub bind: &'a [Mat4],
    pub positions: &'a [Vec3],
    pub normals: &'a [Vec3],
    pub triangles: &'a [[u32; 3]],
    pub weights: &'a Weights,
}

impl<'a> Rig<'a> {
    /// The rig of `skin` bound at `bind`; `None` when the skin has no weights.
    pub fn of(skel: &'a Skeleton, bind: &'a [Mat4], skin: &'a crate::model::Skin) -> Option<Self> {
        Some(Self {
            skel,
            bind,
            positions: skin.positions(),
            normals: skin.normals(),
            triangles: skin.triangles(),
            weights: skin.weights()?,
        })
    }
}

/// Progress: called with (done, total) as joints and frames finish; returning `false` cancels the check.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) -> bool + Sync);

/// Check `rig` over its joints' range of motion and, when given, `clip`'s frames (see the module doc).
pub fn check(
    rig: Rig<'_>,
    clip: Option<&Clip>,
    opts: &CheckOptions,
    progress: Progress<'_>,
) -> Result<CheckReport, CheckError> {
    let n = rig.positions.len();
    if rig.weights.len() != n || rig.normals.len() != n {
        return Err(CheckError::Count {
            weights: rig.weights.len().min(rig.normals.len()),
            mesh: n,
        });
    }
    if rig.bind.len() != rig.skel.len() {
        return Err(CheckError::Bind {
            bind: rig.bind.len(),
            joints: rig.skel.len(),
        });
    }
    if !STEPS.contains(&opts.steps) {
        return Err(CheckError::Steps(opts.steps));
    }
    if let Some(&j) = opts.joints.iter().flatten().find(|&&j| j >= rig.skel.len()) {
        return Err(CheckError::Joint(j));
    }
    let frames = match clip {
        Some(c) => crate::eval::posed::frame_times(c, n + rig.skel.len(), "a check")?,
        None => Vec::new(),
    };
    let prep = prep::Prepared::new(rig);
    sweep::run(&prep, rig, clip.map(|c| (c, frames.as_slice())), opts, progress)
}

#[cfg(test)]
mod describe_tests {
    use super::Kind;

    #[test]
    fn a_collapse_past_the_bone_says_how_much_volume_is_left_inverted_not_a_loss_above_100_percent() {
        assert_eq!(
            Kind::Collapse.describe(6.57),
            "turned inside out: the wedge between the skin and its bone holds 5.6 times its rest volume, inverted"
        );
        assert_eq!(
            Kind::Collapse.describe(0.5),
            "50% of the wedge between the skin and its bone lost (its local volume)"
        );
    }
}
