//! The command line: argument parsing (clap) and dispatch to thin command modules over the library.
//!
//! Exit status: 0 on success, 1 when an input is bad (the message on stderr begins `PATH:LINE:COL:` when the
//! error has a place in a file), 2 on a usage error, 3 when `check --fail-above` finds a worse score. Warnings go to stderr as `PATH:LINE:COL: warning: ...`, or
//! `PATH: warning: ...` for one about a file as a whole (`info --json` puts them in its JSON instead).
//!
//! With no command, or with `open FILE...`, it opens the editor window ([`crate::app::run`]) and returns when the
//! window closes; when no window can be opened (no display) it says so on stderr and exits with 1.

mod bind;
mod bind_match;
mod check;
mod clean;
mod compare;
mod convert;
mod fit;
mod info;
mod pose;
mod render;
mod sample;
mod template;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::formats::{FileError, Parsed, Warning, printable};

#[derive(Parser, Debug)]
#[command(
    name = "skinbind",
    version,
    about = "Rig authoring and skin binding for CSE169 .skel/.skin/.anim/.morph files",
    long_about = "Rig authoring and skin binding for CSE169 .skel/.skin/.anim/.morph files.\n\n\
                  Without a command, opens the editor window on a built-in sample; `skinbind open FILE...` opens \
                  it on files. The other commands run from the terminal."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Open the editor window on files (.skel, .skin, .anim, .glb, .gltf, .fbx; one of each kind)
    Open(OpenArgs),
    /// Compute automatic weights for a mesh and a skeleton
    Bind(bind::BindArgs),
    /// Clean weights: smooth, remove rogue islands, prune, limit, normalise
    Clean(clean::CleanArgs),
    /// Measure weights against reference weights (mean L1, dominant agreement, precision, recall)
    Compare(compare::CompareArgs),
    /// Sweep every joint through its range of motion and report where the skin deforms badly
    Check(check::CheckArgs),
    /// Describe files: kind, counts, joint tree, influences, weight sums, bounds, warnings
    Info(info::InfoArgs),
    /// Pose a skin with its skeleton and write the deformed mesh as Wavefront OBJ
    Pose(pose::PoseArgs),
    /// Render a posed rig to a PNG with the editor's GPU skinning, offscreen (no window needed)
    Render(render::RenderArgs),
    /// Rewrite files between formats; each -o's extension picks its format
    Convert(convert::ConvertArgs),
    /// Write a deterministic sample rig (PREFIX.skel and PREFIX.skin)
    Sample(sample::SampleArgs),
    /// Write a template skeleton (biped, quadruped, bird, hand, chain), optionally placed in a mesh's box
    Template(template::TemplateArgs),
    /// Fit a template skeleton into a mesh (OUT.skel, OUT.skin), optionally bind it and judge it against a reference
    Fit(fit::FitArgs),
}

/// How a command failed.
#[derive(Debug)]
pub enum Failure {
    /// The command line asks for something impossible (exit 2).
    Usage(String),
    /// An input or output failed (exit 1).
    Input(anyhow::Error),
    /// The command ran and found something above a threshold the caller set (exit 3).
    Findings(String),
}

impl From<FileError> for Failure {
    fn from(e: FileError) -> Self {
        Failure::Input(e.into())
    }
}

impl From<crate::atomic::SaveError> for Failure {
    fn from(e: crate::atomic::SaveError) -> Self {
        Failure::Input(e.into())
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Input(e)
    }
}

pub type CliResult = Result<(), Failure>;

/// Run the command line; returns the process exit status.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = match cli.command {
        None => open_editor(OpenArgs::default()),
        Some(Command::Open(a)) => open_editor(a),
        Some(Command::Bind(a)) => bind::run(&a),
        Some(Command::Clean(a)) => clean::run(&a),
        Some(Command::Compare(a)) => compare::run(&a),
        Some(Command::Check(a)) => check::run(&a),
        Some(Command::Info(a)) => info::run(&a),
        Some(Command::Pose(a)) => pose::run(&a),
        Some(Command::Render(a)) => render::run(&a),
        Some(Command::Convert(a)) => convert::run(&a),
        Some(Command::Sample(a)) => sample::run(&a),
        Some(Command::Template(a)) => template::run(&a),
        Some(Command::Fit(a)) => fit::run(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(m)) => {
            eprintln!("skinbind: {}", printable(&m));
            ExitCode::from(2)
        }
        Err(Failure::Input(e)) => {
            eprintln!("{}", printable(&format!("{e:#}")));
            ExitCode::from(1)
        }
        Err(Failure::Findings(m)) => {
            eprintln!("skinbind: {}", printable(&m));
            ExitCode::from(3)
        }
    }
}

/// `skinbind open FILE...`.
#[derive(Args, Debug, Default)]
pub struct OpenArgs {
    /// Files to open, loaded in the background once the window is up; errors show in its status bar
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Select this joint once the files are loaded
    #[arg(long, value_name = "JOINT")]
    pub select: Option<String>,
    /// Colour the skin this way in the viewport
    #[arg(long, value_enum)]
    pub shading: Option<render::ShadingArg>,
    /// Dual quaternion skinning in the viewport
    #[arg(long)]
    pub dqs: bool,
    /// Start with this tool (what a left click in the viewport does)
    #[arg(long, value_enum)]
    pub tool: Option<ToolArg>,
    /// Select these skin vertices once the files are loaded: indices and ranges, as in `3,10-20`
    #[arg(long, value_name = "LIST", value_parser = parse_vertex_list)]
    pub select_vertices: Option<VertexList>,
    /// Go to this time of the animation
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub time: Option<f32>,
    /// Run a range-of-motion check once the files are loaded, in the Check panel
    #[arg(long)]
    pub check: bool,
    /// With --check: once it is done, show its Nth problem (1 is the worst): pose the rig there and frame it
    #[arg(long, value_name = "N", requires = "check", value_parser = clap::value_parser!(u32).range(1..))]
    pub finding: Option<u32>,
    /// Once the files are loaded and drawn, write a screenshot of the window to this PNG and close (for docs
    /// and tests)
    #[arg(long, value_name = "OUT.png")]
    pub screenshot: Option<PathBuf>,
}

/// Vertex indices from the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexList(pub Vec<u32>);

/// `3,10-20` as the vertices 3 and 10 to 20.
fn parse_vertex_list(s: &str) -> Result<VertexList, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |x: &str| {
            x.trim()
                .parse::<u32>()
                .map_err(|_| format!("`{x}` is not a vertex index"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if b < a || b - a > 10_000_000 {
                    return Err(format!("`{part}` is not a range from low to high"));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    Ok(VertexList(out))
}

/// `open --tool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ToolArg {
    Pose,
    Select,
    Paint,
    Move,
    Skeleton,
}

impl ToolArg {
    pub fn tool(self) -> crate::app::Tool {
        match self {
            Self::Pose => crate::app::Tool::Pose,
            Self::Select => crate::app::Tool::Select,
            Self::Paint => crate::app::Tool::Paint,
            Self::Move => crate::app::Tool::Move,
            Self::Skeleton => crate::app::Tool::Skeleton,
        }
    }
}

fn open_editor(args: OpenArgs) -> CliResult {
    let startup = crate::app::Startup {
        select: args.select,
        shading: args.shading.map(render::ShadingArg::shading),
        dual_quaternion: args.dqs,
        tool: args.tool.map(ToolArg::tool),
        vertices: args.select_vertices.map(|v| v.0),
        time: args.time,
        check: args.check,
        finding: args.finding.map(|n| n as usize - 1),
        screenshot: args.screenshot,
    };
    crate::app::run(args.files, startup).map_err(Failure::Input)
}

/// Print a file's warnings to stderr and return its value.
pub(crate) fn report<T>(path: &Path, parsed: Parsed<T>) -> T {
    for w in &parsed.warnings {
        eprintln!("{}", warning_line(path, w));
    }
    parsed.value
}

/// `PATH:LINE:COL: warning: ...`, or `PATH: warning: ...` for a warning about the file as a whole (line 0).
pub(crate) fn warning_line(path: &Path, w: &Warning) -> String {
    let message = printable(&w.message);
    if w.line == 0 {
        format!("{}: warning: {message}", path.display())
    } else {
        format!("{}:{}:{}: warning: {message}", path.display(), w.line, w.col)
    }
}

/// One file argument as the user gave it: its flag (`--skin`; empty for a positional one) and its path.
pub(crate) type FileArg<'a> = (&'a str, &'a Path);

/// Refuse, before anything is read or written, an output that is one of the inputs or another output (exit 2):
/// `check --report K.skin` overwrote the skin it checked with JSON. The same file is found through symlinks and
/// hard links: an existing file by its (device, inode) on unix and its canonical path elsewhere, a file not yet
/// there by its canonical folder and its name. Every command that writes calls this.
pub(crate) fn refuse_outputs_over_inputs(inputs: &[FileArg<'_>], outputs: &[FileArg<'_>]) -> CliResult {
    let ids: Vec<Option<FileId>> = inputs.iter().map(|(_, p)| file_id(p)).collect();
    let mut out_ids: Vec<Option<FileId>> = Vec::with_capacity(outputs.len());
    for &(flag, out) in outputs {
        let id = file_id(out);
        let same = |other: &Option<FileId>| id.is_some() && *other == id;
        if let Some(k) = ids.iter().position(same) {
            let (in_flag, input) = inputs[k];
            return Err(Failure::Usage(format!(
                "{flag} {} is also an input ({}): an output may not overwrite an input; choose another path",
                out.display(),
                named(in_flag, input)
            )));
        }
        if let Some(k) = out_ids.iter().position(same) {
            let (other_flag, other) = outputs[k];
            return Err(Failure::Usage(format!(
                "{flag} {} is the same file as {}: each output needs its own path",
                out.display(),
                named(other_flag, other)
            )));
        }
        out_ids.push(id);
    }
    Ok(())
}

/// `--skin K.skin`, or `K.skin` for a positional argument (an empty flag).
fn named(flag: &str, path: &Path) -> String {
    if flag.is_empty() {
        path.display().to_string()
    } else {
        format!("{flag} {}", path.display())
    }
}

/// Which file a path names, for [`refuse_outputs_over_inputs`]; `None` when it cannot tell (its folder is not
/// there either: then nothing can be written there, and the output check says so).
#[derive(Debug, PartialEq)]
enum FileId {
    #[cfg(unix)]
    Inode(u64, u64),
    Path(PathBuf),
}

fn file_id(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(path) {
        use std::os::unix::fs::MetadataExt;
        return Some(FileId::Inode(meta.dev(), meta.ino()));
    }
    if let Ok(p) = path.canonicalize() {
        return Some(FileId::Path(p));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(FileId::Path(dir.canonicalize().ok()?.join(path.file_name()?)))
}

/// A required file argument shared by commands that pose.
#[derive(Args, Debug, Clone)]
pub struct RigFiles {
    /// Skeleton (.skel, or a skinned .glb/.gltf/.fbx)
    #[arg(long, value_name = "S.skel")]
    pub skel: PathBuf,
    /// Skin (.skin, or a .glb/.gltf/.fbx's skinned mesh with its weights and bindings)
    #[arg(long, value_name = "K.skin")]
    pub skin: PathBuf,
}

impl RigFiles {
    /// The two files, named by their flags, for [`refuse_outputs_over_inputs`].
    pub(crate) fn args(&self) -> [FileArg<'_>; 2] {
        [("--skel", &self.skel), ("--skin", &self.skin)]
    }

    /// The skeleton and the skin, each from its own file or from a skinned glTF or FBX model (one file named by
    /// both is read once), their warnings printed. With `check_joints`, a `.skin`'s joint indices are checked
    /// against the skeleton as it is read.
    pub(crate) fn load(
        &self,
        check_joints: bool,
    ) -> Result<(crate::model::Skeleton, crate::model::Skin), crate::formats::FileError> {
        use crate::formats;
        let (skel, from_gltf) = if formats::is_rig(&self.skel) {
            let none = formats::gltf::AnimationChoice::None;
            let rig = report(&self.skel, formats::load_rig(&self.skel, &none)?);
            (rig.skeleton, Some(rig.skin))
        } else {
            (report(&self.skel, formats::load_skeleton(&self.skel)?), None)
        };
        let skin = match from_gltf {
            Some(skin) if self.skin == self.skel => skin,
            _ => {
                let joints = check_joints.then_some(skel.len());
                report(&self.skin, formats::load_mesh(&self.skin, joints)?)
            }
        };
        Ok((skel, skin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_lists_take_indices_and_ranges_and_refuse_the_rest() {
        assert_eq!(
            parse_vertex_list("3, 10-12,7").unwrap(),
            VertexList(vec![3, 10, 11, 12, 7])
        );
        assert_eq!(parse_vertex_list("").unwrap(), VertexList(vec![]));
        assert!(parse_vertex_list("5-2").unwrap_err().contains("`5-2`"));
        assert!(
            parse_vertex_list("x")
                .unwrap_err()
                .contains("`x` is not a vertex index")
        );
        assert!(
            parse_vertex_list("0-4294967295").is_err(),
            "a huge range is refused, not allocated"
        );
    }
}
