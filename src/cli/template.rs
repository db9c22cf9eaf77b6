//! `skinbind template --kind biped|quadruped|bird|hand|chain [--mesh MESH [[--mesh-up AXIS] --mesh-front AXIS]] -o
//! OUT.skel`: write a shipped template skeleton, in its body box or placed into a mesh's bounding box
//! (`rig::templates`), the mesh taken to face +Z with +Y up unless said otherwise.

use std::path::PathBuf;

use clap::Args;

use super::{CliResult, Failure, report};
use crate::atomic::{check_output, save_atomic};
use crate::formats::{self, skel::write_skel};
use crate::rig::templates::{TemplateKind, place_facing, place_in_box, template};

#[derive(Args, Debug)]
pub struct TemplateArgs {
    /// Which template: biped, quadruped, bird, hand or chain
    #[arg(long, value_parser = ["biped", "quadruped", "bird", "hand", "chain"])]
    pub kind: String,
    /// A mesh (.obj, .skin, .glb, .gltf, .fbx) whose bounding box the template is scaled into (Y up, facing +Z,
    /// unless --mesh-front says otherwise); without it, the template's own body box (1 unit tall)
    #[arg(long, value_name = "MESH")]
    pub mesh: Option<PathBuf>,
    /// Which of the mesh's axes is up (x, y, z with a sign; default +y), with --mesh-front
    #[arg(long, value_name = "AXIS", requires = "mesh_front", allow_hyphen_values = true)]
    pub mesh_up: Option<String>,
    /// Which of the mesh's axes its front faces (x, y, z with a sign): the template is placed in the box of the
    /// mesh turned to face +Z, and turned back with it (the turn is its root's rotation)
    #[arg(long, value_name = "AXIS", requires = "mesh", allow_hyphen_values = true)]
    pub mesh_front: Option<String>,
    /// The .skel file to write
    #[arg(short, long, value_name = "OUT.skel")]
    pub output: PathBuf,
}

pub fn run(args: &TemplateArgs) -> CliResult {
    let kind =
        TemplateKind::from_name(&args.kind).ok_or_else(|| Failure::Usage(format!("unknown kind {}", args.kind)))?;
    check_output(&args.output)?;
    let inputs: Vec<super::FileArg<'_>> = args.mesh.iter().map(|m| ("--mesh", m.as_path())).collect();
    super::refuse_outputs_over_inputs(&inputs, &[("--output", &args.output)])?;
    let turn = super::fit::told_turn(args.mesh_up.as_deref(), args.mesh_front.as_deref())?;
    let mut skel = template(kind);
    if let Some(mesh) = &args.mesh {
        let skin = report(mesh, formats::load_mesh(mesh, None)?);
        let empty = || Failure::Input(anyhow::anyhow!("{}: the mesh has no vertices", mesh.display()));
        skel = match turn {
            Some(turn) => {
                place_facing(&skel, skin.positions(), turn, Some(kind))
                    .ok_or_else(empty)?
                    .0
            }
            None => {
                let (lo, hi) = skin.bounds().ok_or_else(empty)?;
                place_in_box(&skel, lo, hi, Some(kind))
            }
        };
    }
    save_atomic(&args.output, |w| write_skel(w, &skel))?;
    println!(
        "{}: {} template, {} joints",
        args.output.display(),
        kind.name(),
        skel.len()
    );
    Ok(())
}
