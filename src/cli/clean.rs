//! `skinbind clean IN.skin --skel S -o OUT.skin [steps]`: the weight clean-up pipeline of `skinbind::adjust`
//! (mirror, smooth, rogue removal, prune, limit, normalise, in that order) on a skin's weights. The bind pose is the
//! skin's bindings when it has them, else the skeleton file's pose.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use super::{CliResult, Failure, report};
use crate::adjust::clean::{CleanOptions, CleanReport, MirrorOptions, ROGUE_THRESHOLD, clean};
use crate::adjust::mirror::{Axis, MirrorMode, Plane};
use crate::adjust::{Locks, SmoothOptions, SmoothScheme};
use crate::atomic::{check_output, save_atomic};
use crate::deform::bind_world_from_joint;
use crate::formats::{self, skin::write_skin};
use crate::model::{Pose, Skeleton};

#[derive(Args, Debug)]
pub struct CleanArgs {
    /// Skin whose weights to clean (.skin with skinweights)
    #[arg(value_name = "IN.skin")]
    pub input: PathBuf,
    /// Skeleton (.skel, or a skinned .glb/.gltf/.fbx)
    #[arg(long, value_name = "S.skel")]
    pub skel: PathBuf,
    /// Output skin
    #[arg(short, long, value_name = "OUT.skin")]
    pub output: PathBuf,
    /// Mirror the weights across the plane AXIS = 0 (x, y or z) first: copy the + side onto the - side (`-x`: the
    /// - side onto the + side); joints paired by left/right names, then by mirrored pivot position
    #[arg(long, value_name = "[-]AXIS", allow_hyphen_values = true)]
    pub mirror: Option<String>,
    /// With --mirror: swap the two sides instead of copying one onto the other
    #[arg(long, requires = "mirror")]
    pub flip: bool,
    /// With --mirror: how far a vertex's mirror image may be from its partner (default 1e-4 of the mesh's size)
    #[arg(long, value_name = "D", requires = "mirror")]
    pub mirror_tolerance: Option<f32>,
    #[command(flatten)]
    pub steps: StepArgs,
    /// Most joints per vertex (limit step; off when not given)
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u16).range(1..))]
    pub max_influences: Option<u16>,
    /// Write a JSON report: each step's timing and what it changed
    #[arg(long, value_name = "R.json")]
    pub report: Option<PathBuf>,
}

/// What a command does when a step's flag is not given.
#[derive(Clone, Debug, Default)]
pub struct StepDefaults {
    pub smooth: Option<SmoothOptions>,
    pub rogue: bool,
    pub soften: bool,
    pub prune: Option<f32>,
}

/// Clean-up steps shared by `clean` and `bind`.
#[derive(Args, Debug, Clone)]
pub struct StepArgs {
    /// Laplacian smoothing: N iterations (at most 1000) at STRENGTH in [0, 1] (default 0.5); 0 turns it off
    #[arg(long, value_name = "N[:STRENGTH]")]
    pub smooth: Option<String>,
    /// Smooth with cotangent instead of uniform edge weights
    #[arg(long)]
    pub cotangent: bool,
    /// Remove rogue weights (islands cut off from their joint's main region); `bind` does by default
    #[arg(long)]
    pub rogue: bool,
    /// Keep rogue weights (`bind`)
    #[arg(long, conflicts_with = "rogue")]
    pub no_rogue: bool,
    /// Soften the weights: a Gaussian average over a small geometric radius along the surface (docs/cleanup.md);
    /// `bind` does by default after the geodesic method
    #[arg(long)]
    pub soften: bool,
    /// Do not soften (`bind`)
    #[arg(long, conflicts_with = "soften")]
    pub no_soften: bool,
    /// Weights above this make a joint's regions for --rogue
    #[arg(long, value_name = "T", default_value_t = ROGUE_THRESHOLD)]
    pub rogue_threshold: f32,
    /// Remove weights below T (each vertex keeps at least its largest); 0 turns it off
    #[arg(long, value_name = "T")]
    pub prune: Option<f32>,
    /// Joints no step may change: names or #INDEX, comma-separated; repeatable
    #[arg(long, value_name = "JOINT,...")]
    pub lock: Vec<String>,
}

/// The most smoothing iterations a command takes: far past where weights stop changing (a few dozen), and a
/// bound on the time a typo such as `--smooth 4000000000` can cost.
pub const MAX_SMOOTH_ITERATIONS: u32 = 1000;

/// `N[:STRENGTH]`.
pub fn parse_smooth(s: &str, cotangent: bool) -> Result<SmoothOptions, String> {
    let bad = |why: &str| format!("--smooth `{s}`: {why}");
    let (n, strength) = s.split_once(':').map_or((s, None), |(n, k)| (n, Some(k)));
    let iterations = n
        .parse::<u32>()
        .ok()
        .filter(|&i| i <= MAX_SMOOTH_ITERATIONS)
        .ok_or_else(|| {
            bad(&format!(
                "iterations `{n}` is not a whole number from 0 to {MAX_SMOOTH_ITERATIONS}"
            ))
        })?;
    let strength = match strength {
        None => SmoothOptions::default().strength,
        Some(k) => k
            .parse::<f32>()
            .ok()
            .filter(|x| (0.0..=1.0).contains(x))
            .ok_or_else(|| bad(&format!("strength `{k}` is not a number in [0, 1]")))?,
    };
    Ok(SmoothOptions {
        iterations,
        strength,
        scheme: if cotangent {
            SmoothScheme::Cotangent
        } else {
            SmoothScheme::Uniform
        },
    })
}

impl StepArgs {
    /// The pipeline options these flags ask for, `defaults` for the flags not given (limit is set by the caller).
    pub fn options(&self, skel: &Skeleton, defaults: &StepDefaults) -> Result<CleanOptions, Failure> {
        let smooth = match &self.smooth {
            Some(s) => Some(parse_smooth(s, self.cotangent).map_err(Failure::Usage)?),
            None => defaults.smooth.clone().map(|mut d| {
                if self.cotangent {
                    d.scheme = SmoothScheme::Cotangent;
                }
                d
            }),
        }
        .filter(|s| s.iterations > 0);
        if !(0.0..1.0).contains(&self.rogue_threshold) {
            return Err(Failure::Usage(format!(
                "--rogue-threshold {}: expected a number in [0, 1)",
                self.rogue_threshold
            )));
        }
        let prune = match self.prune {
            Some(t) if !(0.0..1.0).contains(&t) => {
                return Err(Failure::Usage(format!("--prune {t}: expected a number in [0, 1)")));
            }
            Some(t) => Some(t).filter(|t| *t > 0.0),
            None => defaults.prune,
        };
        let rogue = (self.rogue || (defaults.rogue && !self.no_rogue)).then_some(self.rogue_threshold);
        let soften = self.soften || (defaults.soften && !self.no_soften);
        let locked = super::pose::find_joints(skel, &self.lock, "--lock").map_err(Failure::Usage)?;
        Ok(CleanOptions {
            mirror: None,
            smooth,
            rogue,
            soften,
            prune,
            max_influences: None,
            normalise: true,
            locks: Locks::of(locked),
        })
    }
}

/// `[-]AXIS` with the mode.
fn parse_mirror(s: &str, flip: bool, tolerance: Option<f32>) -> Result<MirrorOptions, String> {
    let (from_positive, axis) = match s.strip_prefix('-') {
        Some(a) => (false, a),
        None => (true, s.strip_prefix('+').unwrap_or(s)),
    };
    let axis = match axis {
        "x" | "X" => Axis::X,
        "y" | "Y" => Axis::Y,
        "z" | "Z" => Axis::Z,
        _ => {
            return Err(format!(
                "--mirror `{s}`: expected x, y or z, optionally with a sign (-x)"
            ));
        }
    };
    if let Some(t) = tolerance.filter(|t| !(t.is_finite() && *t >= 0.0)) {
        return Err(format!("--mirror-tolerance {t}: expected a distance of 0 or more"));
    }
    Ok(MirrorOptions {
        plane: Plane::new(axis),
        mode: if flip {
            MirrorMode::Flip
        } else {
            MirrorMode::Copy { from_positive }
        },
        tolerance,
        joint_tolerance: None,
    })
}

/// One line per step that ran, for the terminal; `quiet_limit` leaves out a limit step that changed nothing.
pub fn describe(rep: &CleanReport, quiet_limit: bool) -> Vec<String> {
    let mut lines = Vec::new();
    let ms = |name: &str| rep.steps.iter().find(|s| s.0 == name).map_or(0.0, |s| s.1);
    if let Some(m) = &rep.mirror {
        let unpaired = rep.mirror_joints.as_ref().map_or(0, |j| j.unpaired().len());
        lines.push(format!(
            "mirror: {} vertices written, {} changed, {} on the plane, {} without a partner, {} joints unpaired ({:.1} ms)",
            m.vertices_written,
            m.vertices_changed,
            m.on_plane,
            m.vertices_without_partner,
            unpaired,
            ms("mirror")
        ));
    }
    if let Some(s) = &rep.smooth {
        lines.push(format!(
            "smooth: {} iterations, {} vertices changed ({:.1} ms)",
            s.iterations,
            s.vertices_changed,
            ms("smooth")
        ));
    }
    if let Some(r) = &rep.rogue {
        let vertices: usize = r.removed.iter().map(|i| i.vertices).sum();
        lines.push(format!(
            "rogue: {} islands removed ({} vertices) ({:.1} ms)",
            r.removed.len(),
            vertices,
            ms("rogue")
        ));
    }
    if let Some(s) = &rep.soften {
        lines.push(format!(
            "soften: {} vertices changed ({:.1} ms)",
            s.changed_vertices,
            ms("soften")
        ));
    }
    if let Some(r) = &rep.prune {
        lines.push(format!(
            "prune: {} influences removed on {} vertices ({:.1} ms)",
            r.removed,
            r.vertices_changed,
            ms("prune")
        ));
    }
    if let Some(r) = rep.limit.as_ref().filter(|r| !(quiet_limit && r.vertices_changed == 0)) {
        lines.push(format!(
            "limit: {} influences removed on {} vertices ({:.1} ms)",
            r.removed,
            r.vertices_changed,
            ms("limit")
        ));
    }
    let overridden: usize = [&rep.prune, &rep.limit, &rep.normalise]
        .iter()
        .filter_map(|r| r.as_ref().map(|r| r.locks_overridden))
        .sum::<usize>()
        + rep.smooth.as_ref().map_or(0, |s| s.locks_overridden);
    if overridden > 0 {
        lines.push(format!(
            "warning: {overridden} vertices could only sum to 1 by changing locked weights"
        ));
    }
    lines
}

pub fn run(args: &CleanArgs) -> CliResult {
    let outputs: Vec<_> = std::iter::once(("--output", args.output.as_path()))
        .chain(args.report.as_deref().map(|r| ("--report", r)))
        .collect();
    super::refuse_outputs_over_inputs(&[("", &args.input), ("--skel", &args.skel)], &outputs)?;
    for out in std::iter::once(&args.output).chain(&args.report) {
        check_output(out)?;
    }
    let skel = report(&args.skel, formats::load_skeleton(&args.skel)?);
    let mut skin = report(&args.input, formats::load_mesh(&args.input, Some(skel.len()))?);
    let Some(weights) = skin.weights().cloned() else {
        return Err(Failure::Input(anyhow!(
            "{}: has no skinweights to clean",
            args.input.display()
        )));
    };
    let mut opts = args.steps.options(&skel, &StepDefaults::default())?;
    opts.max_influences = args.max_influences.map(usize::from);
    opts.mirror = match &args.mirror {
        Some(m) => Some(parse_mirror(m, args.flip, args.mirror_tolerance).map_err(Failure::Usage)?),
        None => None,
    };
    let bind = bind_world_from_joint(&skel, &skin, &Pose::from_file(&skel));
    let (cleaned, rep) = clean(skin.positions(), skin.triangles(), &skel, &bind, &weights, &opts)
        .map_err(|e| Failure::Input(anyhow!("{}: {e}", args.input.display())))?;
    skin.set_weights(Some(cleaned)).map_err(|e| anyhow!("{e}"))?;
    save_atomic(&args.output, |w| write_skin(w, &skin))?;
    if let Some(r) = &args.report {
        let json = serde_json::to_string_pretty(&rep).map_err(|e| anyhow!("{e}"))?;
        save_atomic(r, |w| w.write_all(json.as_bytes()))?;
    }
    for line in describe(&rep, false) {
        println!("{line}");
    }
    println!(
        "{}: {} vertices cleaned in {:.1} ms",
        args.output.display(),
        skin.vertex_count(),
        rep.total_ms
    );
    Ok(())
}
