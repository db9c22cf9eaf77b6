//! `skinbind render`: draw a posed rig to a PNG through the editor's own GPU path (shaders, packing, overlays)
//! on a headless context: no window, no display. For docs, thumbnails and tests.

use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, ValueEnum};

use super::pose::{build_pose, find_joint};
use super::{CliResult, Failure, RigFiles};
use crate::deform::check_rig;
use crate::render::gl::Headless;
use crate::render::offscreen::{Snapshot, render_rig};
use crate::render::{Renderer, Shading, ViewPreset, ViewSettings};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum View {
    /// Three-quarter perspective view
    Persp,
    /// Orthographic front view (looking down -z)
    Front,
    /// Orthographic side view (looking down -x)
    Side,
    /// Orthographic top view
    Top,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ShadingArg {
    Shaded,
    Weights,
    Influences,
    Unweighted,
}

impl ShadingArg {
    pub fn shading(self) -> Shading {
        match self {
            ShadingArg::Shaded => Shading::Shaded,
            ShadingArg::Weights => Shading::Weights,
            ShadingArg::Influences => Shading::Influences,
            ShadingArg::Unweighted => Shading::Unweighted,
        }
    }
}

#[derive(Args, Debug)]
pub struct RenderArgs {
    #[command(flatten)]
    pub rig: RigFiles,
    /// Animation to pose by, at --time (.anim, or a .glb/.gltf/.fbx's first clip)
    #[arg(long, value_name = "A.anim")]
    pub anim: Option<PathBuf>,
    /// Time in the animation, in seconds
    #[arg(long, value_name = "T", requires = "anim", allow_hyphen_values = true)]
    pub time: Option<f32>,
    /// Set one DOF as in `pose`: JOINT.rotx=V (roty, rotz; root also tx, ty, tz)
    #[arg(long = "set", value_name = "JOINT.DOF=V", allow_hyphen_values = true)]
    pub set: Vec<String>,
    /// Show this joint's weights in greyscale (0 black, 1 white); implies --shading weights
    #[arg(long, value_name = "JOINT")]
    pub weights: Option<String>,
    /// How the skin is coloured
    #[arg(long, value_enum, default_value = "shaded")]
    pub shading: ShadingArg,
    /// Dual quaternion skinning instead of linear blend
    #[arg(long)]
    pub dqs: bool,
    /// Draw the triangle edges over the skin
    #[arg(long)]
    pub wireframe: bool,
    /// Hide the skeleton
    #[arg(long)]
    pub no_skeleton: bool,
    /// Hide the ground grid
    #[arg(long)]
    pub no_grid: bool,
    /// Camera view, framing the posed skin
    #[arg(long, value_enum, default_value = "persp")]
    pub view: View,
    /// Image size in pixels
    #[arg(long, value_name = "WxH", default_value = "800x600")]
    pub size: String,
    /// Output image (.png)
    #[arg(short, long, value_name = "OUT.png")]
    pub output: PathBuf,
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("--size `{s}`: expected WIDTHxHEIGHT, each 1 to 16384");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.parse().map_err(|_| bad())?;
    let h: u32 = h.parse().map_err(|_| bad())?;
    if !(1..=16384).contains(&w) || !(1..=16384).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

pub fn run(args: &RenderArgs) -> CliResult {
    let (width, height) = parse_size(&args.size).map_err(Failure::Usage)?;
    let mut inputs = args.rig.args().to_vec();
    inputs.extend(args.anim.as_deref().map(|a| ("--anim", a)));
    super::refuse_outputs_over_inputs(&inputs, &[("--output", &args.output)])?;
    crate::atomic::check_output(&args.output)?;
    let (skel, skin) = args.rig.load(true)?;
    let selected = match &args.weights {
        Some(j) => Some(find_joint(&skel, j).map_err(|e| Failure::Usage(format!("--weights: {e}")))?),
        None => None,
    };
    check_rig(&skel, &skin)
        .map_err(|e| anyhow!("{} with {}: {e}", args.rig.skin.display(), args.rig.skel.display()))?;
    let pose = build_pose(&skel, args.anim.as_deref(), args.time, &args.set)?;
    let headless = Headless::new().map_err(|e| anyhow!("cannot make an offscreen OpenGL context: {e}"))?;
    let mut renderer = Renderer::new(&headless.context).map_err(|e| anyhow!("{e}"))?;
    let shading = if args.weights.is_some() {
        Shading::Weights
    } else {
        args.shading.shading()
    };
    let settings = ViewSettings {
        shading,
        dual_quaternion: args.dqs,
        wireframe: args.wireframe,
        skeleton: !args.no_skeleton,
        grid: !args.no_grid,
        ..ViewSettings::default()
    };
    let preset = match args.view {
        View::Persp => None,
        View::Front => Some(ViewPreset::Front),
        View::Side => Some(ViewPreset::Side),
        View::Top => Some(ViewPreset::Top),
    };
    let shot = Snapshot {
        skeleton: &skel,
        skin: &skin,
        pose: &pose,
        selected,
        preset,
        settings: &settings,
        zoom: 1.0,
    };
    let image = render_rig(&mut renderer, &shot, width, height).map_err(|e| anyhow!("{e}"))?;
    let png = image.encode_png()?;
    crate::atomic::save_atomic(&args.output, |w| w.write_all(&png))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("800x600"), Ok((800, 600)));
        assert_eq!(parse_size("1X1"), Ok((1, 1)));
        assert!(parse_size("0x10").is_err());
        assert!(parse_size("800").is_err());
        assert!(parse_size("20000x10").is_err());
    }
}
