//! `skinbind pose`: pose a skin and write the deformed mesh as OBJ.
//!
//! The pose starts from the skeleton file's `pose` lines (clamped), then the animation at `--time`, then each
//! `--set`. A skin without bindings is bound in the skeleton file's pose. Morph targets apply before skinning.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::Args;

use super::{CliResult, Failure, RigFiles, report};
use crate::atomic::{check_output, save_atomic};
use crate::deform::{Method, pose_skin};
use crate::formats::{self, obj::write_obj};
use crate::model::{Pose, Skeleton, apply_morphs};

#[derive(Args, Debug)]
pub struct PoseArgs {
    #[command(flatten)]
    pub rig: RigFiles,
    /// Animation to pose by, at --time (.anim, or a .glb/.gltf/.fbx's first clip)
    #[arg(long, value_name = "A.anim")]
    pub anim: Option<PathBuf>,
    /// Time in the animation, in seconds
    #[arg(long, value_name = "T", requires = "anim", allow_hyphen_values = true)]
    pub time: Option<f32>,
    /// Set one DOF: JOINT.rotx=V, JOINT.roty=V, JOINT.rotz=V (radians, clamped to the limits), or for the root
    /// JOINT.tx=V (also ty, tz). JOINT is a name or #INDEX (depth-first, 0 = root).
    #[arg(long = "set", value_name = "JOINT.DOF=V", allow_hyphen_values = true)]
    pub set: Vec<String>,
    /// Morph target to apply before skinning, FILE or FILE=WEIGHT (default weight 1); repeatable
    #[arg(long, value_name = "M.morph[=W]")]
    pub morph: Vec<String>,
    /// Dual quaternion skinning instead of linear blend
    #[arg(long, conflicts_with = "rigid")]
    pub dqs: bool,
    /// Rigid skinning: each vertex follows its dominant joint
    #[arg(long)]
    pub rigid: bool,
    /// Output mesh (.obj)
    #[arg(short, long, value_name = "OUT.obj")]
    pub output: PathBuf,
}

/// A parsed `--set`.
#[derive(Debug, PartialEq)]
pub struct DofSet {
    pub joint: usize,
    /// 0..3 rotation x, y, z; 3..6 root translation x, y, z.
    pub dof: usize,
    pub value: f32,
}

/// Find a joint by name or `#INDEX`; an ambiguous name is an error that lists the candidates.
/// The joints of comma-separated lists of names or `#INDEX` (a repeatable flag's values), in the order given;
/// an error names `flag` and the joint not found.
pub fn find_joints(skel: &Skeleton, lists: &[String], flag: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for list in lists {
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            out.push(find_joint(skel, name).map_err(|e| format!("{flag}: {e}"))?);
        }
    }
    Ok(out)
}

pub fn find_joint(skel: &Skeleton, key: &str) -> Result<usize, String> {
    if let Some(ix) = key.strip_prefix('#') {
        return match ix.parse::<usize>() {
            Ok(i) if i < skel.len() => Ok(i),
            _ => Err(format!(
                "no joint #{ix}: the skeleton has joints #0 to #{}",
                skel.len() - 1
            )),
        };
    }
    match skel.find(key).as_slice() {
        [i] => Ok(*i),
        [] => Err(format!("no joint named `{key}`")),
        many => Err(format!(
            "joint name `{key}` is ambiguous: joints {}; name one as #INDEX",
            many.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(", ")
        )),
    }
}

pub fn parse_set(skel: &Skeleton, s: &str) -> Result<DofSet, String> {
    let (lhs, value) = s
        .split_once('=')
        .ok_or_else(|| format!("--set `{s}`: expected JOINT.DOF=VALUE"))?;
    let (joint, dof) = lhs
        .rsplit_once('.')
        .ok_or_else(|| format!("--set `{s}`: expected JOINT.DOF=VALUE"))?;
    let dof = match dof {
        "rotx" => 0,
        "roty" => 1,
        "rotz" => 2,
        "tx" => 3,
        "ty" => 4,
        "tz" => 5,
        _ => return Err(format!("--set `{s}`: DOF must be rotx, roty, rotz, tx, ty or tz")),
    };
    let value: f32 = value
        .parse()
        .ok()
        .filter(|v: &f32| v.is_finite())
        .ok_or_else(|| format!("--set `{s}`: `{value}` is not a finite number"))?;
    let joint = find_joint(skel, joint).map_err(|e| format!("--set `{s}`: {e}"))?;
    if dof >= 3 && joint != 0 {
        return Err(format!("--set `{s}`: only the root joint has a translation"));
    }
    Ok(DofSet { joint, dof, value })
}

pub fn apply_set(skel: &Skeleton, pose: &mut Pose, set: &DofSet) {
    if set.dof < 3 {
        pose.set_dof(skel, set.joint, set.dof, set.value);
    } else {
        pose.root_translation[set.dof - 3] = set.value;
    }
}

/// The pose the posing commands share: the skeleton file's pose, then `anim` at `time` (default 0), then each
/// `--set`. A bad `--set` is a usage error.
pub fn build_pose(skel: &Skeleton, anim: Option<&Path>, time: Option<f32>, sets: &[String]) -> Result<Pose, Failure> {
    let sets = sets
        .iter()
        .map(|s| parse_set(skel, s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::Usage)?;
    let mut pose = Pose::from_file(skel);
    if let Some(a) = anim {
        let clip = report(a, formats::load_clip(a)?);
        let want = crate::model::Clip::channels_for(skel.len());
        if clip.channels.len() != want {
            eprintln!(
                "{}: warning: {} channels, but the skeleton needs {want} (3 + 3 per joint); extra channels are \
                 ignored, missing ones leave the file pose",
                a.display(),
                clip.channels.len()
            );
        }
        clip.apply(skel, time.unwrap_or(0.0), &mut pose);
    }
    for s in &sets {
        apply_set(skel, &mut pose, s);
    }
    Ok(pose)
}

/// The file of a `--morph FILE[=WEIGHT]` argument.
fn morph_file(arg: &str) -> &str {
    arg.rsplit_once('=').map_or(arg, |(f, _)| f)
}

pub fn run(args: &PoseArgs) -> CliResult {
    let mut inputs = args.rig.args().to_vec();
    inputs.extend(args.anim.as_deref().map(|a| ("--anim", a)));
    // A morph argument is FILE or FILE=WEIGHT; either way its file is an input.
    let morphs: Vec<PathBuf> = args.morph.iter().map(|m| PathBuf::from(morph_file(m))).collect();
    inputs.extend(morphs.iter().map(|m| ("--morph", m.as_path())));
    super::refuse_outputs_over_inputs(&inputs, &[("--output", &args.output)])?;
    check_output(&args.output)?;
    let (skel, skin) = args.rig.load(true)?;
    let bind_pose = Pose::from_file(&skel);
    let pose = build_pose(&skel, args.anim.as_deref(), args.time, &args.set)?;
    let mut skin = skin;
    if !args.morph.is_empty() {
        let mut morphs = Vec::new();
        for m in &args.morph {
            let (file, weight) = match m.rsplit_once('=') {
                Some((f, w)) => (
                    f,
                    w.parse::<f32>()
                        .ok()
                        .filter(|w| w.is_finite())
                        .ok_or_else(|| Failure::Usage(format!("--morph `{m}`: `{w}` is not a finite number")))?,
                ),
                None => (m.as_str(), 1.0),
            };
            let path = PathBuf::from(file);
            morphs.push((report(&path, formats::load_morph(&path)?), weight));
        }
        let targets: Vec<_> = morphs.iter().map(|(m, w)| (m, *w)).collect();
        let (p, n) = apply_morphs(&skin, &targets).map_err(|e| anyhow!("{}: {e}", args.rig.skin.display()))?;
        skin.set_geometry(p, n).map_err(|e| anyhow!("{e}"))?;
    }
    let method = match (args.dqs, args.rigid) {
        (true, _) => Method::DualQuaternion,
        (_, true) => Method::Rigid,
        _ => Method::Linear,
    };
    let (p, n) = pose_skin(&skel, &skin, &pose, &bind_pose, method)
        .map_err(|e| anyhow!("{} with {}: {e}", args.rig.skin.display(), args.rig.skel.display()))?;
    save_atomic(&args.output, |w| {
        write_obj(w, &p, &n, skin.texcoords(), skin.triangles())
    })?;
    Ok(())
}
