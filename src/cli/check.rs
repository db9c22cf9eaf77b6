//! `skinbind check --skel S.skel --skin K.skin [--anim A.anim] [--dqs] [--json] [--report R.json]
//! [--fail-above T]`: the range-of-motion check (`skinbind::check`; docs/check.md). Problems are findings, not
//! errors: the exit status is 0, or 3 when `--fail-above T` is given and the worst severity passes T.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use super::{CliResult, Failure, RigFiles, refuse_outputs_over_inputs, report};
use crate::atomic::{check_output, save_atomic};
use crate::check::{CheckError, CheckOptions, CheckReport, Kind, Rig, check};
use crate::deform::{Method, bind_world_from_joint, check_rig};
use crate::formats::{self, printable};
use crate::model::{Pose, Skeleton};

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub rig: RigFiles,
    /// Also measure every frame of this animation (30 per second; .anim, or a .glb/.gltf/.fbx's first clip, joint
    /// moves included)
    #[arg(long, value_name = "A.anim")]
    pub anim: Option<PathBuf>,
    /// Dual quaternion skinning instead of linear blend
    #[arg(long)]
    pub dqs: bool,
    /// Sweep only these joints (names or #INDEX, comma-separated; repeatable)
    #[arg(long = "joint", value_name = "JOINT,...")]
    pub joints: Vec<String>,
    /// Swing about each world axis where a joint has no DOF limit, both ways (degrees)
    #[arg(long, value_name = "DEG", default_value_t = 90.0)]
    pub degrees: f32,
    /// Steps from the bind pose to each end of a range
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub steps: usize,
    /// How many problems the text lists
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub worst: usize,
    /// Print the whole report as JSON instead of text
    #[arg(long)]
    pub json: bool,
    /// Also write the whole report as JSON to this file
    #[arg(long, value_name = "R.json")]
    pub report: Option<PathBuf>,
    /// Exit with status 3 when the worst severity is above T (for scripts and CI)
    #[arg(long, value_name = "T")]
    pub fail_above: Option<f32>,
}

pub fn run(args: &CheckArgs) -> CliResult {
    if let Some(out) = &args.report {
        let mut inputs = args.rig.args().to_vec();
        inputs.extend(args.anim.as_deref().map(|a| ("--anim", a)));
        refuse_outputs_over_inputs(&inputs, &[("--report", out)])?;
        check_output(out)?;
    }
    if !(args.degrees.is_finite() && args.degrees > 0.0 && args.degrees <= 180.0) {
        return Err(Failure::Usage(format!(
            "--degrees {}: expected a number of degrees above 0, at most 180",
            args.degrees
        )));
    }
    if !crate::check::STEPS.contains(&args.steps) {
        return Err(Failure::Usage(format!(
            "--steps {}: expected 1 to {} steps from the bind pose to each end of a range",
            args.steps,
            crate::check::STEPS.end()
        )));
    }
    if args.fail_above.is_some_and(|t| !t.is_finite()) {
        return Err(Failure::Usage(format!(
            "--fail-above {}: expected a finite severity (1 is at the tolerance)",
            args.fail_above.unwrap_or_default()
        )));
    }
    let (skel, skin) = args.rig.load(false)?;
    let clip = match &args.anim {
        Some(p) => Some(report(p, formats::load_clip(p)?)),
        None => None,
    };
    let pair = || format!("{} with {}", args.rig.skin.display(), args.rig.skel.display());
    check_rig(&skel, &skin).map_err(|e| anyhow!("{}: {e}", pair()))?;
    let bind = bind_world_from_joint(&skel, &skin, &Pose::from_file(&skel));
    let rig = Rig::of(&skel, &bind, &skin)
        .ok_or_else(|| anyhow!("{}: the skin has no skinweights to check", args.rig.skin.display()))?;
    let joints = if args.joints.is_empty() {
        None
    } else {
        Some(super::pose::find_joints(&skel, &args.joints, "--joint").map_err(Failure::Usage)?)
    };
    let opts = CheckOptions {
        method: if args.dqs {
            Method::DualQuaternion
        } else {
            Method::Linear
        },
        free_degrees: args.degrees,
        steps: args.steps,
        joints,
        ..Default::default()
    };
    let r = check(rig, clip.as_ref(), &opts, &|_, _| true).map_err(|e| match (&e, &args.anim) {
        // Too many frames is the clip's fault: name its file.
        (CheckError::Frames(_), Some(anim)) => anyhow!("{}: {e}", anim.display()),
        _ => anyhow!("{}: {e}", pair()),
    })?;
    let json = || serde_json::to_string_pretty(&r).map_err(|e| anyhow!("{e}"));
    if let Some(out) = &args.report {
        let text = json()?;
        save_atomic(out, |w| w.write_all(text.as_bytes()))?;
    }
    if args.json {
        println!("{}", json()?);
    } else {
        print!("{}", text_report(&r, &skel, &bind, args.worst));
    }
    match args.fail_above {
        Some(t) if r.worst > t => Err(Failure::Findings(format!("worst severity {:.3} is above {t}", r.worst))),
        _ => Ok(()),
    }
}

/// The text report: a summary line, the worst joints, then the worst problems.
pub fn text_report(r: &CheckReport, skel: &Skeleton, bind: &[glam::Mat4], worst: usize) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let method = match r.method {
        Method::DualQuaternion => "dual quaternions",
        _ => "linear blend",
    };
    let _ = writeln!(
        s,
        "checked {} vertices, {} triangles: {} joints swept, {} poses ({method}); worst severity {:.2}",
        r.vertices,
        r.triangles,
        r.joints.len(),
        r.poses,
        r.worst
    );
    let counts: Vec<String> = Kind::ALL
        .iter()
        .filter(|k| r.counts[k.index()] > 0)
        .map(|k| format!("{} {}", k.label(), r.counts[k.index()]))
        .collect();
    if r.findings.is_empty() {
        let _ = writeln!(
            s,
            "problems: none (severity = measure / tolerance; a problem is 1 or more)"
        );
        return s;
    }
    let _ = writeln!(s, "problems: {} ({})", r.findings.len(), counts.join(", "));
    let _ = writeln!(s, "worst joints:");
    for j in r.joints.iter().filter(|j| j.findings > 0).take(worst) {
        let _ = writeln!(
            s,
            "  {:<20} severity {:>6.2}  {} problems",
            printable(&j.name),
            j.worst,
            j.findings
        );
    }
    let _ = writeln!(s, "worst problems:");
    for f in r.findings.iter().take(worst) {
        let c = f.region.centre;
        let around: Vec<String> = f.region.around.iter().map(|a| printable(a).into_owned()).collect();
        let _ = writeln!(
            s,
            "  {:>6.2} {:<11} {}: {}; {} vertices around {}, centre ({:.3}, {:.3}, {:.3})",
            f.severity,
            f.kind.label(),
            f.pose.describe(skel, bind),
            f.kind.describe(f.value),
            f.region.vertices.len(),
            around.join(", "),
            c[0],
            c[1],
            c[2]
        );
    }
    s
}
