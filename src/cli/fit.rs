//! `skinbind fit --template T --mesh M [--bind] [--json] [--reference R [--reference-skin RS]] -o OUT`: fit a
//! template skeleton into a mesh (`rig::fit`) and write `OUT.skel` (its pose lines are the fitted pose) and
//! `OUT.skin` (M's mesh with bindings at the fitted joints and, with `--bind`, the default bind's weights).

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::Args;
use glam::Vec3;

use super::{CliResult, Failure, report};
use crate::adjust::{BindAndClean, bind_and_clean};
use crate::atomic::{check_output, save_atomic};
use crate::bind::{BindMethod, BindOptions};
use crate::formats::{self, FileKind, skel::write_skel, skin::write_skin};
use crate::model::Skin;
use crate::rig::fit::{FitOptions, fit_template};
use crate::rig::fit_measure::{Measure, measure_fit};
use crate::rig::fit_orient::{parse_axis, told_facing};
use crate::rig::fit_template::TemplateRig;
use crate::rig::templates::TemplateKind;

#[derive(Args, Debug)]
pub struct FitArgs {
    /// The template: a .skel (its file pose), a .skel with --template-skin, a .glb/.gltf/.fbx (its bind pose), or a
    /// shipped template's name (biped, quadruped, bird, hand, chain)
    #[arg(long, value_name = "T")]
    pub template: String,
    /// The template's .skin: its bindings give the template's pose and its mesh guides the fit
    #[arg(long, value_name = "T.skin")]
    pub template_skin: Option<PathBuf>,
    /// The mesh to fit into (.obj, .skin, .glb, .gltf, .fbx); a skeleton or weights it carries are ignored
    #[arg(long, value_name = "M")]
    pub mesh: PathBuf,
    /// Also bind: weights by the default bind (geodesic, controls rule and clean-up included)
    #[arg(long)]
    pub bind: bool,
    /// Print a JSON report on stdout: per joint, inside the solid or not, distance to its middle, role
    #[arg(long)]
    pub json: bool,
    /// The artist's rig of the mesh (.glb/.gltf/.fbx, or a .skel with --reference-skin): print each deforming joint's
    /// distance to the artist's as a percentage of the mesh's box diagonal
    #[arg(long, value_name = "R")]
    pub reference: Option<PathBuf>,
    /// The reference .skel's skin (its bindings place the artist's joints; its weights say which deform)
    #[arg(long, value_name = "RS.skin", requires = "reference")]
    pub reference_skin: Option<PathBuf>,
    /// Take the mesh to face the template's way as it lies: do not turn a mesh that overlaps the template better
    /// after a quarter or half turn (lying Z up, facing +X)
    #[arg(long)]
    pub no_turn: bool,
    /// Which of the mesh's axes is up (x, y, z with a sign; default +y): with --mesh-front, the mesh is fitted
    /// as facing that way, with no search (Blender's frame: --mesh-up +z --mesh-front -y)
    #[arg(
        long,
        value_name = "AXIS",
        requires = "mesh_front",
        conflicts_with = "no_turn",
        allow_hyphen_values = true
    )]
    pub mesh_up: Option<String>,
    /// Which of the mesh's axes its front faces (x, y, z with a sign), when the fit should not guess it: a mesh
    /// facing +X into a shipped template, which is never turned
    #[arg(long, value_name = "AXIS", conflicts_with = "no_turn", allow_hyphen_values = true)]
    pub mesh_front: Option<String>,
    /// Output stem: OUT.skel and OUT.skin are written (an extension .skel or .skin is dropped)
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
}

/// A .glb/.gltf/.fbx, or a .skel with an optional .skin.
fn load_rig(path: &Path, skin: Option<&Path>) -> Result<TemplateRig, Failure> {
    if formats::is_rig(path) {
        if let Some(s) = skin {
            return Err(Failure::Usage(format!(
                "{}: a glTF or FBX model brings its own skin; {} is not used with it",
                path.display(),
                s.display()
            )));
        }
    }
    let (skel, skin) = formats::rig_file::load_skeleton_with_skin(path, skin, &mut |p, warnings| {
        report(p, formats::Parsed { value: (), warnings });
    })?;
    Ok(TemplateRig::with_skin(skel, skin))
}

/// The output paths: OUT.skel and OUT.skin.
fn outputs(out: &Path) -> (PathBuf, PathBuf) {
    let stem = match FileKind::from_path(out) {
        Some(FileKind::Skel | FileKind::Skin) => out.with_extension(""),
        _ => out.to_path_buf(),
    };
    let with = |ext: &str| {
        let mut s = stem.clone().into_os_string();
        s.push(ext);
        PathBuf::from(s)
    };
    (with(".skel"), with(".skin"))
}

/// The turn `--mesh-up` (`up`, +y when not given) and `--mesh-front` (`front`) tell, when the front is given:
/// the one that takes the mesh's up to +Y and its front to +Z (`rig::fit_orient::told_facing`).
pub(super) fn told_turn(up: Option<&str>, front: Option<&str>) -> Result<Option<glam::Mat3>, Failure> {
    let Some(front_text) = front else {
        return Ok(None);
    };
    let up_text = up.unwrap_or("+y");
    let axis = |flag: &str, text: &str| {
        parse_axis(text).ok_or_else(|| {
            Failure::Usage(format!(
                "{flag} `{text}`: expected an axis: x, y or z, with an optional sign"
            ))
        })
    };
    let (up, front) = (axis("--mesh-up", up_text)?, axis("--mesh-front", front_text)?);
    told_facing(up, front).map(Some).ok_or_else(|| {
        Failure::Usage(format!(
            "--mesh-up `{up_text}` and --mesh-front `{front_text}`: expected two different axes"
        ))
    })
}

/// Each joint of `rig` with its pivot and whether its skin weights it (every joint, without weights).
fn judged_joints(rig: &TemplateRig) -> Vec<(String, Vec3, bool)> {
    let mut weighted = vec![rig.skin.as_ref().and_then(Skin::weights).is_none(); rig.skeleton.len()];
    if let Some(w) = rig.skin.as_ref().and_then(Skin::weights) {
        for v in 0..w.len() {
            let (joints, values) = w.row(v);
            for (&j, &x) in joints.iter().zip(values) {
                if x > 0.0
                    && let Some(slot) = weighted.get_mut(j as usize)
                {
                    *slot = true;
                }
            }
        }
    }
    rig.skeleton
        .joints()
        .iter()
        .zip(&rig.world)
        .zip(weighted)
        .map(|((j, m), d)| (j.name.clone(), m.w_axis.truncate(), d))
        .collect()
}

#[derive(serde::Serialize)]
struct JsonReport<'a> {
    joints: &'a [crate::rig::fit::FitJoint],
    warnings: &'a [String],
    diagonal: f32,
    reference: Option<&'a Measure>,
}

pub fn run(args: &FitArgs) -> CliResult {
    let mesh_turn = told_turn(args.mesh_up.as_deref(), args.mesh_front.as_deref())?;
    let (skel_out, skin_out) = outputs(&args.output);
    let mut inputs: Vec<(&str, &Path)> = vec![("--mesh", &args.mesh)];
    let template_path = PathBuf::from(&args.template);
    let kind = TemplateKind::from_name(&args.template).filter(|_| !template_path.exists());
    if kind.is_none() {
        inputs.push(("--template", &template_path));
    }
    for (flag, p) in [
        ("--template-skin", &args.template_skin),
        ("--reference", &args.reference),
    ] {
        if let Some(p) = p {
            inputs.push((flag, p));
        }
    }
    super::refuse_outputs_over_inputs(&inputs, &[("--output", &skel_out), ("--output", &skin_out)])?;
    check_output(&skel_out)?;
    check_output(&skin_out)?;

    let t = match kind {
        Some(k) => {
            if args.template_skin.is_some() {
                return Err(Failure::Usage(
                    "--template-skin needs a .skel template, not a shipped one".into(),
                ));
            }
            TemplateRig::shipped(k)
        }
        None => load_rig(&template_path, args.template_skin.as_deref())?,
    };
    let mut skin = report(&args.mesh, formats::load_mesh(&args.mesh, None)?);
    skin.set_weights(None).map_err(|e| anyhow!("{e}"))?;
    skin.set_bindings(None).map_err(|e| anyhow!("{e}"))?;
    let input = t.input(skin.positions(), skin.triangles());
    let started = std::time::Instant::now();
    let options = FitOptions {
        turn: !args.no_turn,
        mesh_turn,
        ..FitOptions::default()
    };
    let fit = fit_template(&input, &options).map_err(|e| anyhow!("{}: {e}", args.mesh.display()))?;
    let fit_ms = started.elapsed().as_secs_f64() * 1e3;

    let measure = match &args.reference {
        Some(r) => {
            let reference = load_rig(r, args.reference_skin.as_deref())?;
            let fitted: Vec<(String, Vec3)> = fit
                .joints
                .iter()
                .map(|j| (j.name.clone(), Vec3::from_array(j.position)))
                .collect();
            Some(measure_fit(&fitted, &judged_joints(&reference), fit.diagonal))
        }
        None => None,
    };

    if args.bind {
        let mut opts = BindOptions::for_method(BindMethod::Geodesic);
        opts.deform = vec![true; fit.skeleton.len()];
        let done = bind_and_clean(
            &fit.skeleton,
            &fit.world,
            skin.positions(),
            skin.triangles(),
            &BindAndClean::with_default_clean_up(opts),
            &|_| {},
        )
        .map_err(|e| anyhow!("{}: {e}", args.mesh.display()))?;
        skin.set_weights(Some(done.weights)).map_err(|e| anyhow!("{e}"))?;
    }
    skin.set_bindings(Some(fit.world.clone())).map_err(|e| anyhow!("{e}"))?;
    save_atomic(&skel_out, |w| write_skel(w, &fit.skeleton))?;
    save_atomic(&skin_out, |w| write_skin(w, &skin))?;

    for w in &fit.warnings {
        eprintln!("{}: warning: {w}", args.mesh.display());
    }
    if args.json {
        let json = serde_json::to_string_pretty(&JsonReport {
            joints: &fit.joints,
            warnings: &fit.warnings,
            diagonal: fit.diagonal,
            reference: measure.as_ref(),
        })
        .map_err(|e| anyhow!("{e}"))?;
        println!("{json}");
        return Ok(());
    }
    if let Some(m) = &measure {
        for j in &m.joints {
            println!("  {:<24} {:6.2}%", j.name, j.percent);
        }
        for u in &m.unmatched {
            println!("  {u:<24} (no fitted joint of this name)");
        }
        println!(
            "reference: mean {:.2}%, max {:.2}% ({}) of the diagonal over {} deforming joints",
            m.mean,
            m.max,
            m.worst.as_deref().unwrap_or("-"),
            m.joints.len()
        );
    }
    let outside = fit.joints.iter().filter(|j| !j.inside).count();
    println!(
        "{} and {}: {} joints fitted in {:.0} ms ({} outside the mesh)",
        skel_out.display(),
        skin_out.display(),
        fit.joints.len(),
        fit_ms,
        outside
    );
    Ok(())
}
