//! `skinbind compare A.skin B.skin [--skel S.skel [--anim A.anim]] [--json]`: how close A's weights are to the
//! reference B's, by weight (definitions in `skinbind::eval`) and, with a skeleton, by how the mesh deforms when
//! the joints move (`skinbind::eval::posed`; docs/binding.md).

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use super::{CliResult, Failure, report};
use crate::deform::{bind_world_from_joint, check_rig};
use crate::eval::compare_weights;
use crate::eval::posed::{FAR_PERCENT, PosedError, PosedFailure, Spread, posed_error};
use crate::formats;
use crate::model::{Pose, Skin, Weights};

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Weights to measure (.skin, or a .glb/.gltf/.fbx's skinned mesh)
    #[arg(value_name = "A.skin")]
    pub a: PathBuf,
    /// Reference weights (.skin, or a .glb/.gltf/.fbx's skinned mesh), e.g. an artist's
    #[arg(value_name = "B.skin")]
    pub b: PathBuf,
    /// The skeleton: adds the posed error (every joint B weights swung through its range of motion)
    #[arg(long, value_name = "S.skel")]
    pub skel: Option<PathBuf>,
    /// With --skel: also measure over this animation's frames
    #[arg(long, value_name = "A.anim", requires = "skel")]
    pub anim: Option<PathBuf>,
    /// How many of the worst joints the text lists
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub worst: usize,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

/// What `--json` prints: the weight metrics, and the posed error when a skeleton was given.
#[derive(serde::Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    weights: &'a crate::eval::Comparison,
    #[serde(skip_serializing_if = "Option::is_none")]
    posed: Option<&'a PosedError>,
}

fn weights_of(skin: &Skin) -> Weights {
    skin.weights().cloned().unwrap_or_else(|| {
        // No weights block: every vertex unweighted.
        Weights::new(vec![0; skin.vertex_count() + 1], Vec::new(), Vec::new()).unwrap_or_default()
    })
}

pub fn run(args: &CompareArgs) -> CliResult {
    let a = report(&args.a, formats::load_mesh(&args.a, None)?);
    let b = report(&args.b, formats::load_mesh(&args.b, None)?);
    let (wa, wb) = (weights_of(&a), weights_of(&b));
    let pair = || format!("{} vs {}", args.a.display(), args.b.display());
    let c = compare_weights(&wa, &wb).map_err(|e| Failure::Input(anyhow!("{}: {e}", pair())))?;
    let posed = match &args.skel {
        Some(path) => {
            let skel = report(path, formats::load_skeleton(path)?);
            let clip = match &args.anim {
                Some(p) => Some(report(p, formats::load_clip(p)?)),
                None => None,
            };
            // The bind pose: the reference's bindings, else the measured skin's, else the skeleton's own pose.
            let with_bindings = if b.bindings().is_some() { &b } else { &a };
            check_rig(&skel, with_bindings).map_err(|e| anyhow!("{} with {}: {e}", pair(), path.display()))?;
            let bind = bind_world_from_joint(&skel, with_bindings, &Pose::from_file(&skel));
            let e = posed_error(&skel, &bind, b.positions(), &wa, &wb, clip.as_ref()).map_err(|e| {
                match (&e, &args.anim) {
                    // Too many frames is the clip's fault: name its file.
                    (PosedFailure::Frames(_), Some(anim)) => anyhow!("{}: {e}", anim.display()),
                    _ => anyhow!("{}: {e}", pair()),
                }
            })?;
            Some(e)
        }
        None => None,
    };
    if args.json {
        let r = Report {
            weights: &c,
            posed: posed.as_ref(),
        };
        println!("{}", serde_json::to_string_pretty(&r).map_err(|e| anyhow!("{e}"))?);
    } else {
        println!("vertices: {}", c.vertices);
        println!("mean L1: {:.4}", c.mean_l1);
        println!("dominant agreement: {:.4}", c.dominant_agreement);
        println!("influence precision: {:.4}", c.influence_precision);
        println!("influence recall: {:.4}", c.influence_recall);
        println!("unweighted vertices: {} (A), {} (B)", c.unweighted_a, c.unweighted_b);
        if let Some(p) = &posed {
            print_posed(p, args.worst);
        }
    }
    Ok(())
}

fn spread_line(s: &Spread) -> String {
    format!(
        "mean {:.3}%, 99th percentile {:.3}%, vertices beyond {FAR_PERCENT}% {:.2}%",
        s.mean_percent,
        s.p99_percent,
        s.far_vertices * 100.0
    )
}

fn print_posed(p: &PosedError, worst: usize) {
    let r = &p.range_of_motion;
    println!(
        "posed error ({} joints, {} poses; % of the diagonal {}): {}",
        p.joints.len(),
        r.poses,
        p.diagonal,
        spread_line(r)
    );
    for j in p.joints.iter().take(worst) {
        println!(
            "  {} {}: mean {:.3}%, max {:.3}%",
            j.joint,
            crate::formats::printable(&j.name),
            j.mean_percent,
            j.max_percent
        );
    }
    if let Some(a) = &p.animation {
        println!("animation ({} frames): {}", a.poses, spread_line(a));
    }
}
