//! `skinbind convert INPUT... -o OUTPUT...`: inputs are combined (at most one .skel, .skin, .anim and .morph; a
//! skinned .glb/.gltf/.fbx counts as a .skel and a .skin), and each output's extension picks what is written:
//! .skel, .skin, .anim and .morph rewrite their input in skinbind's normal layout; .obj writes the skin's mesh as
//! it is stored (the bind pose). A model's animations count as the .anim input when no .anim is given: a .glb
//! output keeps every one by name (only `--animation NAME` where given), an .anim output takes the first (or
//! NAME) and says what the format drops.

use std::path::PathBuf;

use clap::Args;

use super::{CliResult, Failure, report};
use crate::atomic::save_atomic;
use crate::formats::gltf::AnimationChoice;
use crate::formats::gltf_anim::NamedClip;
use crate::formats::{self, FileKind};

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Input files (.skel, .skin or .obj, .anim, .morph, or a skinned .glb/.gltf/.fbx for a skeleton and a skin), at most
    /// one of each kind
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output file; its extension picks the format. Repeat for several outputs.
    #[arg(short, long = "output", required = true, value_name = "OUTPUT")]
    pub outputs: Vec<PathBuf>,
    /// Write a .skin even when some vertices have no weights (a finished rig is refused otherwise)
    #[arg(long)]
    pub allow_unweighted: bool,
    /// Which of a .glb/.gltf/.fbx input's animations is the animation (by name; for a .glb output every one is kept
    /// when not given, for an .anim the first)
    #[arg(long, value_name = "NAME")]
    pub animation: Option<String>,
}

pub fn run(args: &ConvertArgs) -> CliResult {
    let inputs: Vec<_> = args.inputs.iter().map(|p| ("", p.as_path())).collect();
    let outputs: Vec<_> = args.outputs.iter().map(|p| ("--output", p.as_path())).collect();
    super::refuse_outputs_over_inputs(&inputs, &outputs)?;
    let mut by_kind: [Option<&PathBuf>; 4] = [None; 4];
    let mut gltf: Option<&PathBuf> = None;
    for p in &args.inputs {
        if formats::is_rig(p) {
            for slot in [0, 1] {
                if let Some(prev) = by_kind[slot].replace(p) {
                    return Err(Failure::Usage(format!(
                        "two inputs of the same kind: {} and {}",
                        prev.display(),
                        p.display()
                    )));
                }
            }
            gltf = Some(p);
            continue;
        }
        let slot = match FileKind::from_path(p) {
            Some(FileKind::Skel) => 0,
            Some(FileKind::Skin) | Some(FileKind::Obj) => 1,
            Some(FileKind::Anim) => 2,
            Some(FileKind::Morph) => 3,
            _ => {
                return Err(Failure::Usage(format!(
                    "{}: cannot read this kind of file (inputs are .skel, .skin, .obj, .anim, .morph, .glb, .gltf or .fbx)",
                    p.display()
                )));
            }
        };
        if let Some(prev) = by_kind[slot].replace(p) {
            return Err(Failure::Usage(format!(
                "two inputs of the same kind: {} and {}",
                prev.display(),
                p.display()
            )));
        }
    }
    // Check every output before reading anything, so a usage error costs nothing.
    for out in &args.outputs {
        let need = match FileKind::from_path(out) {
            Some(FileKind::Skel) => (0, ".skel"),
            Some(FileKind::Skin) | Some(FileKind::Obj) => (1, ".skin"),
            Some(FileKind::Anim) => (2, ".anim"),
            Some(FileKind::Morph) => (3, ".morph"),
            Some(FileKind::Gltf) => {
                if out.extension().is_some_and(|e| !e.eq_ignore_ascii_case("glb")) {
                    return Err(Failure::Usage(format!(
                        "{}: glTF is written as binary .glb only",
                        out.display()
                    )));
                }
                if by_kind[0].is_none() || by_kind[1].is_none() {
                    return Err(Failure::Usage(format!(
                        "{}: needs a .skel and a .skin input (or a .glb or .fbx)",
                        out.display()
                    )));
                }
                (0, ".skel")
            }
            Some(FileKind::Fbx) => {
                return Err(Failure::Usage(format!(
                    "{}: FBX is read, not written; write .glb (every DCC reads glTF) or .skel and .skin",
                    out.display()
                )));
            }
            None => {
                return Err(Failure::Usage(format!(
                    "{}: unknown output format (use .skel, .skin, .anim, .morph, .obj or .glb)",
                    out.display()
                )));
            }
        };
        // A model input may hold the animation or a morph target; whether it does is known once it is read.
        if by_kind[need.0].is_none() && !(matches!(need.0, 2 | 3) && gltf.is_some()) {
            return Err(Failure::Usage(format!("{}: needs a {} input", out.display(), need.1)));
        }
        crate::atomic::check_output(out)?;
    }
    if args.animation.is_some() && gltf.is_none() {
        return Err(Failure::Usage(
            "--animation picks one of a .glb/.gltf/.fbx input's animations".into(),
        ));
    }
    let mut model_clips = Vec::new();
    let mut model_morph = None;
    let (skel, skin) = match gltf {
        Some(p) => {
            // Animations are sampled only for an output that holds them: every one for a .glb, one for an .anim.
            let wants = |kind| args.outputs.iter().any(|o| FileKind::from_path(o) == Some(kind));
            let choice = match (&args.animation, by_kind[2]) {
                (_, Some(_)) => AnimationChoice::None,
                (Some(name), None) => AnimationChoice::Named(name.clone()),
                (None, None) if wants(FileKind::Gltf) => AnimationChoice::All,
                (None, None) if wants(FileKind::Anim) => AnimationChoice::First,
                (None, None) => AnimationChoice::None,
            };
            let (rig, clips) = read_model(p, args.animation.as_deref(), &choice)?;
            let (skel, skin) = (rig.skeleton, rig.skin);
            model_clips = clips;
            model_morph = rig.morphs.into_iter().next().map(|m| m.morph);
            (Some(skel), Some(skin))
        }
        None => {
            let skel = by_kind[0]
                .map(|p| formats::load_skeleton(p).map(|s| report(p, s)))
                .transpose()?;
            let joints = skel.as_ref().map(|s| s.len());
            let skin = by_kind[1]
                .map(|p| formats::load_mesh(p, joints).map(|s| report(p, s)))
                .transpose()?;
            if let (Some(s), Some(k), Some(sp), Some(kp)) = (&skel, &skin, by_kind[0], by_kind[1]) {
                if let Some(w) = super::bind_match::misplaced_warning(sp, s, kp, k) {
                    eprintln!("{w}");
                }
            }
            (skel, skin)
        }
    };
    let anim = match by_kind[2] {
        Some(p) => Some(report(p, formats::load_anim(p)?)),
        None => model_clips.first().map(|c| c.clip.clone()),
    };
    // A .glb keeps the model's clips by name, or the .anim input as `clip`.
    let glb_clips: Vec<(&str, &crate::model::Clip)> = match (by_kind[2], &anim) {
        (Some(_), Some(a)) => vec![("clip", a)],
        _ => model_clips.iter().map(|c| (c.name.as_str(), &c.clip)).collect(),
    };
    let morph = match by_kind[3] {
        Some(p) => Some(report(p, formats::load_morph(p)?)),
        // A model's first morph target (an FBX blend shape).
        None => model_morph,
    };
    for out in &args.outputs {
        match (FileKind::from_path(out), &skel, &skin, &anim, &morph) {
            (Some(FileKind::Skel), Some(s), ..) => save_atomic(out, |w| formats::skel::write_skel(w, s))?,
            (Some(FileKind::Skin), _, Some(k), ..) => {
                if !args.allow_unweighted {
                    formats::skin::check_export(k)
                        .map_err(|e| anyhow::anyhow!("{}: not written: {e} (--allow-unweighted)", out.display()))?;
                }
                save_atomic(out, |w| formats::skin::write_skin(w, k))?
            }
            (Some(FileKind::Obj), _, Some(k), ..) => save_atomic(out, |w| {
                formats::obj::write_obj(w, k.positions(), k.normals(), k.texcoords(), k.triangles())
            })?,
            (Some(FileKind::Anim), _, _, Some(a), _) => {
                save_atomic(out, |w| formats::anim::write_anim(w, a))?;
                if let Some(dropped) = a.dropped_by_anim() {
                    eprintln!("{}: warning: {dropped}", out.display());
                }
            }
            (Some(FileKind::Morph), .., Some(m)) => save_atomic(out, |w| formats::morph::write_morph(w, m))?,
            (Some(FileKind::Gltf), Some(s), Some(k), ..) => {
                let bytes = formats::glb::write_glb_clips(
                    s,
                    k,
                    &glb_clips,
                    formats::glb::GlbOptions {
                        unweighted_to_root: args.allow_unweighted,
                    },
                )
                .map_err(|e| anyhow::anyhow!("{}: {e}", out.display()))?;
                save_atomic(out, |w| w.write_all(&bytes))?
            }
            (Some(kind @ (FileKind::Anim | FileKind::Morph)), ..) => {
                let what = if kind == FileKind::Anim {
                    "animation"
                } else {
                    "morph target (blend shape)"
                };
                return Err(anyhow::anyhow!(
                    "{}: not written: {} has no {what}",
                    out.display(),
                    gltf.map_or("the input".to_string(), |p| p.display().to_string())
                )
                .into());
            }
            _ => return Err(Failure::Usage(format!("{}: nothing to write it from", out.display()))),
        }
    }
    Ok(())
}

/// A model input (its skeleton, skin and morph targets), and the animations `choice` samples; a `name`
/// (`--animation`) the file lacks is an error either way (checked against the animations' summaries, unsampled).
fn read_model(
    p: &std::path::Path,
    name: Option<&str>,
    choice: &AnimationChoice,
) -> Result<(formats::gltf::GltfRig, Vec<NamedClip>), Failure> {
    let mut rig = report(p, formats::load_rig(p, choice)?);
    let clips = std::mem::take(&mut rig.animations);
    if let Some(name) = name {
        // A clip skipped with a warning (past the budget) was found: the output's own error follows.
        if clips.is_empty() && !rig.summaries.iter().any(|a| a.name == name) {
            let names: Vec<&str> = rig.summaries.iter().map(|a| a.name.as_str()).collect();
            return Err(anyhow::anyhow!(
                "{}: no animation named `{name}` (it has: {})",
                p.display(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )
            .into());
        }
    }
    Ok((rig, clips))
}
