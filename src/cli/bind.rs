//! `skinbind bind`: automatic weights for a mesh and a skeleton, written as a `.skin` with `skinweights` and
//! `bindings`. The bind pose is the mesh's own bindings when it has them, else the skeleton file's pose (or, with
//! `--bind-pose rest`, every rotation zero); a mesh without bindings that holds its skeleton better at rest is
//! warned about.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use super::clean::{StepArgs, StepDefaults, describe};
use super::pose::find_joints;
use super::{CliResult, Failure, report};
use crate::adjust::clean::{CleanOptions, CleanReport};
use crate::adjust::{BindAndClean, BindAndCleanError, bind_and_clean};
use crate::atomic::{check_output, save_atomic};
use crate::bind::{BindError, BindMethod, BindOptions, BindReport, JointVolume, VolumeShape};
use crate::deform::bind_world_from_joint;
use crate::formats::{self, skin::write_skin};
use crate::model::Pose;

#[derive(Args, Debug)]
pub struct BindArgs {
    /// Skeleton (.skel, or a skinned .glb/.gltf/.fbx)
    #[arg(long, value_name = "S.skel")]
    pub skel: PathBuf,
    /// Mesh to bind (.skin, .obj, or a .glb/.gltf/.fbx's mesh; weights it already has are replaced)
    #[arg(long, value_name = "MESH.skin")]
    pub skin: PathBuf,
    /// Output skin with skinweights and bindings
    #[arg(short, long, value_name = "OUT.skin")]
    pub output: PathBuf,
    /// Weighting: line (distance falloff), volume (containment by depth), hybrid (their mean), geodesic
    /// (distances through the voxelised solid)
    #[arg(long, value_parser = ["line", "volume", "hybrid", "geodesic"], default_value = "geodesic")]
    pub method: String,
    /// Geodesic method: voxel cells along the mesh's longest side
    #[arg(long, default_value_t = crate::bind::DEFAULT_RESOLUTION as u16, value_parser = clap::value_parser!(u16).range(8..=crate::bind::MAX_RESOLUTION as i64))]
    pub resolution: u16,
    /// Most joints per vertex
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub max_influences: u16,
    /// One joint per vertex
    #[arg(long)]
    pub rigid: bool,
    /// Bones farther than this times the nearest bone's distance get no weight [default: 1.5 for geodesic, 2 for
    /// the others]
    #[arg(long)]
    pub blend_ratio: Option<f32>,
    /// Exponent of the inverse-distance falloff
    #[arg(long, default_value_t = 4.0)]
    pub falloff_power: f32,
    /// Ellipsoid containment volumes instead of capsules
    #[arg(long)]
    pub ellipsoid: bool,
    /// Size one joint's containment volume (volume and hybrid methods): JOINT=RADIUS or JOINT=RADIUS:LENGTH_SCALE,
    /// JOINT a name or #INDEX; RADIUS `auto` keeps the automatic size. Repeatable.
    #[arg(long = "volume", value_name = "JOINT=R[:S]")]
    pub volume: Vec<String>,
    /// Let weights reach bones the surface hides (skip the visibility test)
    #[arg(long)]
    pub no_visibility: bool,
    /// Keep box-less leaf bones as short stubs (do not extend them to the surface)
    #[arg(long)]
    pub short_leaves: bool,
    /// Weigh bones by the plain point-to-segment distance, also past a short bone's ends (no end distance)
    #[arg(long)]
    pub plain_distance: bool,
    /// Let bones weight every part of the mesh, not only the parts they reach
    #[arg(long)]
    pub no_parts: bool,
    /// Joints that do not deform (controls: IK and pole targets, a master root): names or #INDEX,
    /// comma-separated; repeatable. They get no weight and still move their children
    #[arg(long, value_name = "JOINT,...")]
    pub exclude: Vec<String>,
    /// Only these joints deform (names or #INDEX, comma-separated; repeatable)
    #[arg(long, value_name = "JOINT,...", conflicts_with = "exclude")]
    pub only: Vec<String>,
    /// Also exclude every joint the bind warns looks like a control but still binds (a bone lying outside the
    /// mesh; with --bind-controls, the named ones, a master root and a control hovering over the rig too): bind,
    /// then bind again without them
    #[arg(long, conflicts_with = "only")]
    pub exclude_controls: bool,
    /// Bind the joints that look like controls: those whose names say so (a word ik, pole, target, ctrl or
    /// control) and, with the geodesic method, a root whose pivot lies outside the mesh (a master root) and a
    /// joint under it whose pivot lies beyond the mesh over limbs inside it (a hovering control); by default they
    /// do not deform, and a warning names each
    #[arg(long)]
    pub bind_controls: bool,
    /// The pose a mesh without bindings is bound in: file (the skeleton file's pose lines) or rest (every
    /// rotation zero within the joints' limits, the root at its offset). A mesh with bindings is bound in the pose
    /// they give
    #[arg(long, value_parser = ["file", "rest"], default_value = "file")]
    pub bind_pose: String,
    /// Write a JSON report: stages with timings, bones without vertices, warnings
    #[arg(long, value_name = "R.json")]
    pub report: Option<PathBuf>,
    /// Clean-up after binding (smooth, rogue, soften, prune, then limit to --max-influences and normalise)
    #[command(flatten)]
    pub steps: StepArgs,
}

/// `JOINT=RADIUS[:LENGTH_SCALE]`, RADIUS a positive number or `auto`.
fn parse_volume(skel: &crate::model::Skeleton, s: &str) -> Result<(usize, JointVolume), String> {
    let bad = |why: &str| format!("--volume `{s}`: {why}");
    let (joint, rest) = s
        .split_once('=')
        .ok_or_else(|| bad("expected JOINT=RADIUS[:LENGTH_SCALE]"))?;
    let joint = super::pose::find_joint(skel, joint).map_err(|e| bad(&e))?;
    let (radius, scale) = rest.split_once(':').map_or((rest, None), |(r, k)| (r, Some(k)));
    let positive = |x: &str| x.parse::<f32>().ok().filter(|v| v.is_finite() && *v > 0.0);
    let radius = match radius {
        "auto" => None,
        r => Some(positive(r).ok_or_else(|| bad(&format!("radius `{r}` is not a positive number or `auto`")))?),
    };
    let length_scale = match scale {
        None => 1.0,
        Some(k) => positive(k).ok_or_else(|| bad(&format!("length scale `{k}` is not a positive number")))?,
    };
    Ok((joint, JointVolume { radius, length_scale }))
}

/// Clean-up after binding by `method` with at most `max_influences` a vertex, by default: what
/// [`CleanOptions::after_binding`] runs (rogue removal at 0.1, softening after the geodesic method); no pruning
/// (from 0.01 up it moves RiggedFigure away) and no smoothing (it moves the hand-weighted models away); see
/// docs/cleanup.md.
fn bind_defaults(method: BindMethod, max_influences: usize) -> StepDefaults {
    let after = CleanOptions::after_binding(max_influences, method);
    StepDefaults {
        smooth: after.smooth,
        rogue: after.rogue.is_some(),
        soften: after.soften,
        prune: after.prune,
    }
}

/// The bind pose for `skin`: its bindings, else the skeleton in the pose `which` names (`file` or `rest`).
fn bind_pose(skel: &crate::model::Skeleton, skin: &crate::model::Skin, which: &str) -> Vec<glam::Mat4> {
    let pose = if which == "rest" {
        Pose::zero(skel)
    } else {
        Pose::from_file(skel)
    };
    bind_world_from_joint(skel, skin, &pose)
}

/// What to say of the bind pose: that `rest` does not apply to a mesh with bindings, or that a mesh without
/// bindings holds its skeleton better at rest than in the file's pose ([`crate::bind::bind_pose`]; it voxelises
/// the mesh, so `bind` runs it beside the bind).
fn bind_pose_notes(skel: &crate::model::Skeleton, skin: &crate::model::Skin, which: &str) -> Vec<String> {
    let rest = which == "rest";
    let mut notes = Vec::new();
    if skin.bindings().is_some() {
        if rest {
            notes.push("--bind-pose rest does not apply: the mesh's bindings give its bind pose".to_string());
        }
    } else if !rest
        && let Some(fit) =
            crate::bind::bind_pose::rest_fits_better(skel, &Pose::from_file(skel), skin.positions(), skin.triangles())
    {
        notes.push(fit.warning("the skeleton file's pose", "bind with --bind-pose rest"));
    }
    notes
}

/// The report file: binding's report with the clean-up's after it.
#[derive(serde::Serialize)]
struct ReportFile<'a> {
    #[serde(flatten)]
    bind: &'a BindReport,
    clean: &'a CleanReport,
}

pub fn run(args: &BindArgs) -> CliResult {
    // Every output is checked before any work, so a bad report path cannot fail after the .skin is written.
    let outputs: Vec<_> = std::iter::once(("--output", args.output.as_path()))
        .chain(args.report.as_deref().map(|r| ("--report", r)))
        .collect();
    super::refuse_outputs_over_inputs(&[("--skel", &args.skel), ("--skin", &args.skin)], &outputs)?;
    for out in std::iter::once(&args.output).chain(&args.report) {
        check_output(out)?;
    }
    let skel = report(&args.skel, formats::load_skeleton(&args.skel)?);
    let mut skin = report(&args.skin, formats::load_mesh(&args.skin, Some(skel.len()))?);
    if let Some(w) = super::bind_match::misplaced_warning(&args.skel, &skel, &args.skin, &skin) {
        eprintln!("{w}");
    }
    // A glTF mesh brings the bindings of its own skeleton; they only count when they are this skeleton's.
    if skin.bindings().is_some_and(|b| b.len() != skel.len()) {
        eprintln!(
            "{}: warning: its {} bindings are for another skeleton ({} joints here); binding in the skeleton's pose",
            args.skin.display(),
            skin.bindings().map_or(0, <[_]>::len),
            skel.len()
        );
        skin.set_bindings(None).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let mut volumes = vec![JointVolume::default(); skel.len()];
    for v in &args.volume {
        let (joint, j) = parse_volume(&skel, v).map_err(Failure::Usage)?;
        volumes[joint] = j;
    }
    let deform = if args.only.is_empty() {
        let mut d = vec![true; skel.len()];
        for j in find_joints(&skel, &args.exclude, "--exclude").map_err(Failure::Usage)? {
            d[j] = false;
        }
        d
    } else {
        let mut d = vec![false; skel.len()];
        for j in find_joints(&skel, &args.only, "--only").map_err(Failure::Usage)? {
            d[j] = true;
        }
        d
    };
    let method = match args.method.as_str() {
        "line" => BindMethod::Line,
        "volume" => BindMethod::Volume,
        "geodesic" => BindMethod::Geodesic,
        _ => BindMethod::Hybrid,
    };
    let opts = BindOptions {
        method,
        max_influences: args.max_influences as usize,
        rigid: args.rigid,
        blend_ratio: args.blend_ratio.unwrap_or(method.default_blend_ratio()),
        falloff_power: args.falloff_power,
        visibility: !args.no_visibility,
        leaf_to_surface: !args.short_leaves,
        end_distance: !args.plain_distance,
        parts: !args.no_parts,
        deform,
        // An explicit --only list is what deforms, named controls included.
        bind_controls: args.bind_controls || !args.only.is_empty(),
        volume_shape: if args.ellipsoid {
            VolumeShape::Ellipsoid
        } else {
            VolumeShape::Capsule
        },
        volumes,
        resolution: args.resolution as usize,
    };
    let bind = bind_pose(&skel, &skin, &args.bind_pose);
    let show = std::io::stderr().is_terminal() && skin.vertex_count() >= 100_000;
    let progress = |f: f32| {
        if show {
            eprint!("\rbinding: {:3.0}%", f * 100.0);
        }
    };
    let k = if args.rigid { 1 } else { args.max_influences as usize };
    let mut post = args.steps.options(&skel, &bind_defaults(method, k))?;
    post.max_influences = Some(k);
    let job = BindAndClean {
        bind: opts,
        clean: post,
        exclude_controls: args.exclude_controls,
    };
    // The bind pose's check is made on the other core while the bind runs (beside the clean-up's mesh graph).
    let (done, pose_notes) = rayon::join(
        || bind_and_clean(&skel, &bind, skin.positions(), skin.triangles(), &job, &progress),
        || bind_pose_notes(&skel, &skin, &args.bind_pose),
    );
    let done = done.map_err(|e| match e {
        BindAndCleanError::Bind(
            BindError::BlendRatio(_) | BindError::FalloffPower(_) | BindError::NothingDeforms | BindError::NoInfluences,
        ) => Failure::Usage(e.to_string()),
        e => Failure::Input(anyhow!("{}: {e}", args.skin.display())),
    })?;
    if show {
        eprintln!();
    }
    if !done.rebound_without.is_empty() {
        let names: Vec<&str> = done
            .rebound_without
            .iter()
            .map(|&j| skel.joints()[j].name.as_str())
            .collect();
        println!("excluded as controls: {}", names.join(", "));
    }
    let (weights, mut rep, post_rep) = (done.weights, done.bind, done.clean);
    // First: a wrong bind pose explains the joints left without weight that follow.
    rep.warnings.splice(0..0, pose_notes);
    if let Some(ms) = done.graph_ms {
        rep.stages.push(("mesh graph (beside the bind)".to_string(), ms));
    }
    for (name, ms) in &post_rep.steps {
        rep.stages.push((name.clone(), *ms));
    }
    rep.total_ms += post_rep.total_ms;
    skin.set_weights(Some(weights)).map_err(|e| anyhow!("{e}"))?;
    skin.set_bindings(Some(bind)).map_err(|e| anyhow!("{e}"))?;
    save_atomic(&args.output, |w| write_skin(w, &skin))?;
    if let Some(r) = &args.report {
        let json = serde_json::to_string_pretty(&ReportFile {
            bind: &rep,
            clean: &post_rep,
        })
        .map_err(|e| anyhow!("{e}"))?;
        save_atomic(r, |w| w.write_all(json.as_bytes()))?;
    }
    for line in describe(&post_rep, true) {
        println!("{line}");
    }
    for w in &rep.warnings {
        eprintln!("{}: warning: {w}", args.output.display());
    }
    println!(
        "{}: {} vertices bound to {} joints ({}{}, at most {} influences) in {:.1} ms",
        args.output.display(),
        rep.vertices,
        rep.joints,
        rep.method,
        if rep.rigid { ", rigid" } else { "" },
        rep.max_influences,
        rep.total_ms
    );
    Ok(())
}
