//! `skinbind sample --kind tube|arm|creature [--vertices N] -o PREFIX`: write PREFIX.skel and PREFIX.skin.

use std::path::PathBuf;

use clap::Args;

use super::{CliResult, Failure};
use crate::atomic::{check_output, save_atomic};
use crate::formats::{skel::write_skel, skin::write_skin};
use crate::sample::{SampleKind, make_sample};

#[derive(Args, Debug)]
pub struct SampleArgs {
    /// Which rig: tube, arm or creature
    #[arg(long, value_parser = ["tube", "arm", "creature"], default_value = "creature")]
    pub kind: String,
    /// Target vertex count (the mesh has within 10% of it; 300 to 10,000,000)
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(300..=10_000_000))]
    pub vertices: u64,
    /// Output prefix: writes PREFIX.skel and PREFIX.skin
    #[arg(short, long, value_name = "PREFIX")]
    pub output: PathBuf,
}

pub fn run(args: &SampleArgs) -> CliResult {
    let kind =
        SampleKind::from_name(&args.kind).ok_or_else(|| Failure::Usage(format!("unknown kind {}", args.kind)))?;
    let sample = make_sample(kind, args.vertices as usize).map_err(|e| Failure::Input(anyhow::anyhow!(e)))?;
    let with_ext = |ext: &str| {
        let mut p = args.output.clone().into_os_string();
        p.push(ext);
        PathBuf::from(p)
    };
    let (skel_path, skin_path) = (with_ext(".skel"), with_ext(".skin"));
    super::refuse_outputs_over_inputs(&[], &[("PREFIX.skel", &skel_path), ("PREFIX.skin", &skin_path)])?;
    check_output(&skel_path)?;
    check_output(&skin_path)?;
    save_atomic(&skel_path, |w| write_skel(w, &sample.skeleton))?;
    save_atomic(&skin_path, |w| write_skin(w, &sample.skin))?;
    println!(
        "{}: {} joints\n{}: {} vertices, {} triangles",
        skel_path.display(),
        sample.skeleton.len(),
        skin_path.display(),
        sample.skin.vertex_count(),
        sample.skin.triangles().len()
    );
    Ok(())
}
