//! `skinbind info FILE... [--json]`: what each file holds. The JSON form is documented in docs/cli.md; its
//! field names are stable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use super::{CliResult, Failure, warning_line};
use crate::formats::{self, FileKind, Warning};
use crate::model::{Clip, Morph, Pose, Skeleton, Skin, world_from_joint};

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Files to describe (.skel, .skin, .anim, .morph, .glb, .gltf, .fbx). When a .skel is among them, skins are checked
    /// against it.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print one JSON array with an object per file instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize, Debug)]
struct JointInfo {
    index: usize,
    name: String,
    depth: usize,
    parent: Option<usize>,
}

#[derive(Serialize, Debug)]
struct Bounds {
    min: [f32; 3],
    max: [f32; 3],
}

impl Bounds {
    fn of(b: Option<(glam::Vec3, glam::Vec3)>) -> Option<Self> {
        b.map(|(lo, hi)| Bounds {
            min: lo.to_array(),
            max: hi.to_array(),
        })
    }
}

#[derive(Serialize, Debug)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Details {
    Skeleton {
        joints: usize,
        depth: usize,
        duplicate_names: usize,
        empty_names: usize,
        tree: Vec<JointInfo>,
        /// Joint pivots in the file's pose, world space.
        pivot_bounds: Option<Bounds>,
    },
    Skin {
        vertices: usize,
        triangles: usize,
        normals: &'static str,
        texcoords: bool,
        materials: Vec<String>,
        bindings: Option<usize>,
        weighted_vertices: usize,
        unweighted_vertices: usize,
        /// influence count -> number of vertices
        influences_histogram: BTreeMap<usize, usize>,
        weight_sum_min: Option<f32>,
        weight_sum_max: Option<f32>,
        joints_used: usize,
        max_joint_index: Option<u16>,
        bounds: Option<Bounds>,
    },
    Animation {
        range: [f32; 2],
        channels: usize,
        /// Joints the channel count fits (3 root translation + 3 per joint), when it does.
        joints: Option<usize>,
        keys: usize,
        extrapolation: BTreeMap<&'static str, usize>,
        tangents: BTreeMap<&'static str, usize>,
    },
    Morph {
        positions: usize,
        normals: usize,
        max_index: Option<u32>,
    },
    /// A glTF model: what the file holds, then what the import makes of it (the warnings say what it drops).
    Gltf {
        contents: formats::gltf::GltfContents,
        /// The skin imported (the first).
        imported_skin: usize,
        skeleton: Box<Details>,
        skin: Box<Details>,
        clips: Vec<ClipInfo>,
    },
    /// An FBX model: what the import makes of it (the warnings say what it drops).
    Fbx {
        skeleton: Box<Details>,
        skin: Box<Details>,
        clips: Vec<ClipInfo>,
        /// The names of its morph targets (blend shapes).
        morphs: Vec<String>,
    },
}

/// A glTF animation that imports as a clip, from its key times (not sampled).
#[derive(Serialize, Debug)]
struct ClipInfo {
    name: String,
    range: [f32; 2],
    /// Keys in the file, over its channels.
    keys: usize,
    /// Values the import samples (frames at 30 per second times the clip's channels).
    samples: usize,
}

#[derive(Serialize, Debug)]
struct FileInfo {
    path: String,
    #[serde(flatten)]
    details: Details,
    warnings: Vec<Warning>,
}

pub fn run(args: &InfoArgs) -> CliResult {
    let mut joint_count = None;
    let mut infos = Vec::new();
    // A skeleton among the files checks the skins, wherever it is listed.
    let mut skeleton = None;
    for path in &args.files {
        if FileKind::from_path(path) == Some(FileKind::Skel) {
            let skel = formats::load_skeleton(path)?.value;
            joint_count = Some(skel.len());
            skeleton = Some((path, skel));
            break;
        }
    }
    for path in &args.files {
        let info = describe(path, joint_count)?;
        if !args.json {
            print!("{}", text(&info));
            for w in &info.warnings {
                eprintln!("{}", warning_line(path, w));
            }
        }
        infos.push(info);
    }
    // Its joints where a skin's bindings put them (the skin read again: `describe` keeps only its figures).
    if let Some((skel_path, skel)) = &skeleton {
        for path in args
            .files
            .iter()
            .filter(|p| FileKind::from_path(p) == Some(FileKind::Skin))
        {
            let skin = formats::load_mesh(path, joint_count)?.value;
            if let Some(w) = super::bind_match::misplaced_warning(skel_path, skel, path, &skin) {
                eprintln!("{w}");
            }
        }
    }
    if args.json {
        let s = serde_json::to_string_pretty(&infos).map_err(|e| Failure::Input(e.into()))?;
        println!("{s}");
    }
    Ok(())
}

fn describe(path: &Path, joint_count: Option<usize>) -> Result<FileInfo, Failure> {
    let (details, warnings) = match FileKind::from_path(path) {
        Some(FileKind::Skel) => {
            let p = formats::load_skeleton(path)?;
            (skeleton(&p.value), p.warnings)
        }
        Some(FileKind::Skin) => {
            let p = formats::load_mesh(path, joint_count)?;
            (skin(&p.value), p.warnings)
        }
        Some(FileKind::Anim) => {
            let p = formats::load_anim(path)?;
            (anim(&p.value), p.warnings)
        }
        Some(FileKind::Morph) => {
            let p = formats::load_morph(path)?;
            (morph(&p.value), p.warnings)
        }
        Some(FileKind::Gltf) => {
            // Clips are described from their key times: nothing is sampled.
            let p = formats::load_rig(path, &formats::gltf::AnimationChoice::None)?;
            let contents = formats::gltf::contents(path)?;
            let rig = p.value;
            let clips = rig
                .summaries
                .iter()
                .map(|a| ClipInfo {
                    name: a.name.clone(),
                    // From its first key to its last, as the file times them (the clip plays from 0).
                    range: match contents.animations.get(a.index).and_then(|x| x.end) {
                        Some(end) => [end - a.seconds, end],
                        None => [0.0, a.seconds],
                    },
                    keys: a.keys,
                    samples: a.samples,
                })
                .collect();
            let details = Details::Gltf {
                contents,
                imported_skin: rig.skin_index,
                skeleton: Box::new(skeleton(&rig.skeleton)),
                skin: Box::new(skin(&rig.skin)),
                clips,
            };
            (details, p.warnings)
        }
        Some(FileKind::Fbx) => {
            // Clips are described from their stacks' spans: nothing is sampled.
            let p = formats::load_rig(path, &formats::gltf::AnimationChoice::None)?;
            let rig = p.value;
            let details = Details::Fbx {
                skeleton: Box::new(skeleton(&rig.skeleton)),
                skin: Box::new(skin(&rig.skin)),
                clips: clip_infos(&rig.summaries),
                morphs: rig.morphs.iter().map(|m| m.name.clone()).collect(),
            };
            (details, p.warnings)
        }
        _ => {
            return Err(Failure::Usage(format!(
                "{}: unknown file kind (expected .skel, .skin, .anim, .morph, .glb, .gltf or .fbx)",
                path.display()
            )));
        }
    };
    Ok(FileInfo {
        path: path.display().to_string(),
        details,
        warnings,
    })
}

/// A rig file's animations as `info` lists them.
fn clip_infos(summaries: &[formats::gltf::AnimationSummary]) -> Vec<ClipInfo> {
    summaries
        .iter()
        .map(|a| ClipInfo {
            name: a.name.clone(),
            range: [0.0, a.seconds],
            keys: a.keys,
            samples: a.samples,
        })
        .collect()
}

fn skeleton(s: &Skeleton) -> Details {
    let depths = s.depths();
    let mut seen = BTreeMap::<&str, usize>::new();
    for j in s.joints() {
        *seen.entry(j.name.as_str()).or_default() += 1;
    }
    let duplicate_names = seen
        .iter()
        .filter(|(n, c)| !n.is_empty() && **c > 1)
        .map(|(_, c)| c - 1)
        .sum();
    let world = world_from_joint(s, &Pose::from_file(s));
    let pivots: Vec<glam::Vec3> = world.iter().map(|m| m.w_axis.truncate()).collect();
    Details::Skeleton {
        joints: s.len(),
        depth: depths.iter().copied().max().unwrap_or(0),
        duplicate_names,
        empty_names: seen.get("").copied().unwrap_or(0),
        tree: s
            .joints()
            .iter()
            .enumerate()
            .map(|(i, j)| JointInfo {
                index: i,
                name: j.name.clone(),
                depth: depths[i],
                parent: j.parent,
            })
            .collect(),
        pivot_bounds: Bounds::of(crate::model::skin::bounds(&pivots)),
    }
}

fn skin(s: &Skin) -> Details {
    // Counted in arrays (by row length, by joint), not maps: a 1M-vertex skin has a million rows.
    let mut by_len = Vec::<usize>::new();
    let (mut lo, mut hi): (Option<f32>, Option<f32>) = (None, None);
    let mut used = vec![false; usize::from(u16::MAX) + 1];
    let (weighted, unweighted) = match s.weights() {
        Some(w) => {
            for v in 0..w.len() {
                let (js, ws) = w.row(v);
                if by_len.len() <= js.len() {
                    by_len.resize(js.len() + 1, 0);
                }
                by_len[js.len()] += 1;
                for &j in js {
                    used[usize::from(j)] = true;
                }
                if !js.is_empty() {
                    let sum: f32 = ws.iter().sum();
                    lo = Some(lo.map_or(sum, |x| x.min(sum)));
                    hi = Some(hi.map_or(sum, |x| x.max(sum)));
                }
            }
            let un = w.unweighted().count();
            (w.len() - un, un)
        }
        None => (0, s.vertex_count()),
    };
    let hist: BTreeMap<usize, usize> = by_len.into_iter().enumerate().filter(|(_, c)| *c > 0).collect();
    let used: Vec<u16> = (0..=u16::MAX).filter(|&j| used[usize::from(j)]).collect();
    Details::Skin {
        vertices: s.vertex_count(),
        triangles: s.triangles().len(),
        normals: if s.normals_computed() { "computed" } else { "file" },
        texcoords: s.texcoords().is_some(),
        materials: s.materials().iter().map(|m| m.name.clone()).collect(),
        bindings: s.bindings().map(<[_]>::len),
        weighted_vertices: weighted,
        unweighted_vertices: unweighted,
        influences_histogram: hist,
        weight_sum_min: lo,
        weight_sum_max: hi,
        joints_used: used.len(),
        max_joint_index: used.last().copied(),
        bounds: Bounds::of(s.bounds()),
    }
}

fn anim(c: &Clip) -> Details {
    use crate::model::Tangent;
    let mut extrapolation = BTreeMap::new();
    let mut tangents = BTreeMap::new();
    for ch in &c.channels {
        *extrapolation.entry(ch.extrapolate_in.name()).or_insert(0) += 1;
        *extrapolation.entry(ch.extrapolate_out.name()).or_insert(0) += 1;
        for k in ch.keys() {
            for t in [k.tangent_in, k.tangent_out] {
                let name = match t {
                    Tangent::Flat => "flat",
                    Tangent::Linear => "linear",
                    Tangent::Smooth => "smooth",
                    Tangent::Fixed(_) => "fixed",
                };
                *tangents.entry(name).or_insert(0) += 1;
            }
        }
    }
    let n = c.channels.len();
    Details::Animation {
        range: [c.range.0, c.range.1],
        channels: n,
        joints: (n >= 3 && (n - 3) % 3 == 0).then(|| (n - 3) / 3),
        keys: c.channels.iter().map(|ch| ch.keys().len()).sum(),
        extrapolation,
        tangents,
    }
}

fn morph(m: &Morph) -> Details {
    Details::Morph {
        positions: m.positions.len(),
        normals: m.normals.len(),
        max_index: m.max_index(),
    }
}

fn v3(v: [f32; 3]) -> String {
    format!("({} {} {})", num(v[0]), num(v[1]), num(v[2]))
}

/// A number as text: as Rust writes it, but one within 1e-4 of zero (and not zero) or beyond 1e9 in scientific
/// notation to two figures (3.6e-24, not 0.0000000000000000000000035533).
fn num(x: f32) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e9).contains(&x.abs()) {
        format!("{x:.1e}")
    } else {
        format!("{x}")
    }
}

fn counts<K: std::fmt::Display>(m: &BTreeMap<K, usize>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text form: a header line, then indented `key: value` lines.
fn text(info: &FileInfo) -> String {
    let mut out = Vec::<String>::new();
    details_text(&info.path, &info.details, &mut out);
    out.push(format!("  warnings: {}", info.warnings.len()));
    out.iter().map(|l| format!("{l}\n")).collect()
}

/// [`text`]'s lines for `details` of the file `path`, without the warnings count.
fn details_text(path: &str, details: &Details, out: &mut Vec<String>) {
    // Names come from the files: their control characters are escaped.
    let mut line = |s: String| out.push(crate::formats::printable(&s).into_owned());
    let b = |b: &Option<Bounds>| {
        b.as_ref()
            .map_or("none".to_string(), |b| format!("{} .. {}", v3(b.min), v3(b.max)))
    };
    let or_none = |v: Option<String>| v.unwrap_or_else(|| "none".to_string());
    match details {
        Details::Skeleton {
            joints,
            depth,
            duplicate_names,
            empty_names,
            tree,
            pivot_bounds,
        } => {
            line(format!("{path}: skeleton"));
            line(format!("  joints: {joints}"));
            line(format!("  depth: {depth}"));
            line(format!("  duplicate names: {duplicate_names}"));
            line(format!("  empty names: {empty_names}"));
            line(format!("  pivot bounds (file pose): {}", b(pivot_bounds)));
            line("  tree:".to_string());
            for j in tree {
                line(format!(
                    "    {}{} {}",
                    "  ".repeat(j.depth.min(crate::formats::skel::MAX_INDENT)),
                    j.index,
                    j.name
                ));
            }
        }
        Details::Skin {
            vertices,
            triangles,
            normals,
            texcoords,
            materials,
            bindings,
            weighted_vertices,
            unweighted_vertices,
            influences_histogram,
            weight_sum_min,
            weight_sum_max,
            joints_used,
            max_joint_index,
            bounds,
        } => {
            line(format!("{path}: skin"));
            line(format!("  vertices: {vertices}"));
            line(format!("  triangles: {triangles}"));
            line(format!("  normals: {normals}"));
            line(format!("  texcoords: {}", if *texcoords { "yes" } else { "no" }));
            line(format!(
                "  materials: {}",
                or_none((!materials.is_empty()).then(|| materials.join(", ")))
            ));
            line(format!("  bindings: {}", or_none(bindings.map(|n| n.to_string()))));
            line(format!("  weighted vertices: {weighted_vertices}"));
            line(format!("  unweighted vertices: {unweighted_vertices}"));
            line(format!("  influences per vertex: {}", counts(influences_histogram)));
            let sums = weight_sum_min
                .zip(*weight_sum_max)
                .map(|(lo, hi)| format!("{lo} .. {hi}"));
            line(format!("  weight sums: {}", or_none(sums)));
            let highest = max_joint_index.map_or(String::new(), |m| format!(" (highest index {m})"));
            line(format!("  joints used: {joints_used}{highest}"));
            line(format!("  bounds: {}", b(bounds)));
        }
        Details::Animation {
            range,
            channels,
            joints,
            keys,
            extrapolation,
            tangents,
        } => {
            line(format!("{path}: animation"));
            line(format!("  range: {} .. {}", num(range[0]), num(range[1])));
            let fits = match joints {
                None => " (not 3 + 3 per joint)".to_string(),
                Some(0) => " (root translation only)".to_string(),
                Some(j) => format!(" (a skeleton of {j} joints)"),
            };
            line(format!("  channels: {channels}{fits}"));
            line(format!("  keys: {keys}"));
            line(format!("  extrapolation: {}", counts(extrapolation)));
            line(format!("  tangents: {}", counts(tangents)));
        }
        Details::Morph {
            positions,
            normals,
            max_index,
        } => {
            line(format!("{path}: morph"));
            line(format!("  positions: {positions}"));
            line(format!("  normals: {normals}"));
            line(format!(
                "  highest vertex index: {}",
                or_none(max_index.map(|m| m.to_string()))
            ));
        }
        Details::Gltf {
            contents,
            imported_skin,
            skeleton,
            skin,
            clips,
        } => {
            line(format!("{path}: glTF model"));
            line(format!("  nodes: {}", contents.nodes));
            line(format!(
                "  meshes: {} ({} skinned mesh nodes)",
                contents.meshes, contents.skinned_mesh_nodes
            ));
            line(format!("  materials: {}", contents.materials));
            line(format!("  skins: {}", contents.skins.len()));
            for (i, s) in contents.skins.iter().enumerate() {
                line(format!("    {i} `{}`: {} joints", s.name, s.joints));
            }
            line(format!("  animations: {}", contents.animations.len()));
            for (i, a) in contents.animations.iter().enumerate() {
                let end = a.end.map_or(String::new(), |e| format!(", ends at {e} s"));
                line(format!("    {i} `{}`: {} channels{end}", a.name, a.channels));
            }
            imported_text(&format!(" (skin {imported_skin})"), skeleton, skin, clips, &mut line);
        }
        Details::Fbx {
            skeleton,
            skin,
            clips,
            morphs,
        } => {
            line(format!("{path}: FBX model"));
            imported_text("", skeleton, skin, clips, &mut line);
            line(format!("  morph targets: {}", morphs.len()));
            for m in morphs {
                line(format!("    `{m}`"));
            }
        }
    }
}

/// What a rig file's import makes, as text: the skeleton and the skin described as their own files are, one level
/// in (`which`: the skin imported, where the file has several), then the clips.
fn imported_text(which: &str, skeleton: &Details, skin: &Details, clips: &[ClipInfo], line: &mut impl FnMut(String)) {
    for (what, d) in [("skeleton", skeleton), ("skin", skin)] {
        line(format!("  imported {what}{which}:"));
        let mut nested = Vec::new();
        details_text("", d, &mut nested);
        for l in nested.iter().skip(1) {
            line(format!("  {l}"));
        }
    }
    line(format!("  clips: {}", clips.len()));
    for c in clips {
        line(format!(
            "    `{}`: {} .. {} s, {} keys, {} samples",
            c.name,
            num(c.range[0]),
            num(c.range[1]),
            c.keys,
            c.samples
        ));
    }
}
