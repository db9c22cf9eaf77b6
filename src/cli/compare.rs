//! `skinbind compare A.skin B.skin [--json]`: how close A's weights are to the reference B's (definitions in
//! `skinbind::eval` and docs/algorithms.md).

use std::path::PathBuf;

use anyhow::anyhow;
use clap::Args;

use super::{CliResult, Failure, report};
use crate::eval::compare_weights;
use crate::formats;
use crate::model::{Skin, Weights};

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Weights to measure (.skin)
    #[arg(value_name = "A.skin")]
    pub a: PathBuf,
    /// Reference weights (.skin), e.g. an artist's
    #[arg(value_name = "B.skin")]
    pub b: PathBuf,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

fn weights_of(skin: &Skin) -> Weights {
    skin.weights().cloned().unwrap_or_else(|| {
        // No weights block: every vertex unweighted.
        Weights::new(vec![0; skin.vertex_count() + 1], Vec::new(), Vec::new()).unwrap_or_default()
    })
}

pub fn run(args: &CompareArgs) -> CliResult {
    let a = report(&args.a, formats::load_skin(&args.a, None)?);
    let b = report(&args.b, formats::load_skin(&args.b, None)?);
    let c = compare_weights(&weights_of(&a), &weights_of(&b))
        .map_err(|e| Failure::Input(anyhow!("{} vs {}: {e}", args.a.display(), args.b.display())))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&c).map_err(|e| anyhow!("{e}"))?);
    } else {
        println!("vertices: {}", c.vertices);
        println!("mean L1: {:.4}", c.mean_l1);
        println!("dominant agreement: {:.4}", c.dominant_agreement);
        println!("influence precision: {:.4}", c.influence_precision);
        println!("influence recall: {:.4}", c.influence_recall);
        println!("unweighted vertices: {} (A), {} (B)", c.unweighted_a, c.unweighted_b);
    }
    Ok(())
}
