//! Readers and writers of the file formats, one module each, over the shared tokenizer in [`lexer`].
//!
//! Every reader takes any [`std::io::Read`] and returns the model value with the warnings met on the way
//! ([`Parsed`]); every error is a [`ParseError`] with a 1-based line and column, what was expected and what was
//! found. [`load`] adds the file path (first, as `PATH:LINE:COL: message`); files are written through
//! [`crate::atomic::save_atomic`].
//!
//! Writers print numbers in the shortest form that reads back to the same `f32` (ryu), so read -> write -> read
//! gives the same model bit for bit. One flag is not data and does not survive: a skin whose normals were
//! computed on reading is written with them, so it reads back with normals "from the file".

pub mod anim;
mod bulk;
pub mod fbx;
mod fbx_anim;
pub mod glb;
pub mod gltf;
pub mod gltf_anim;
mod gltf_check;
pub mod gltf_data;
pub mod lexer;
pub mod morph;
mod number;
pub mod obj;
pub mod rig_file;
pub mod skel;
pub mod skel_keep;
pub mod skin;

pub use rig_file::{is_rig, load_clip, load_rig, load_skeleton};

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A syntax or content error at a place in a text file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{col}: expected {expected}, found {found}")]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub expected: String,
    pub found: String,
}

impl ParseError {
    pub fn new(line: u32, col: u32, expected: impl Into<String>, found: impl Into<String>) -> Self {
        Self {
            line,
            col,
            expected: expected.into(),
            found: found.into(),
        }
    }
}

/// Something tolerated in an input that a person may want to know about.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Warning {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl Warning {
    /// A warning about the file as a whole (line and column 0), as the model importers give them.
    pub fn whole_file(message: String) -> Self {
        Self {
            line: 0,
            col: 0,
            message,
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

/// A value read from a file, with the warnings met while reading it.
#[derive(Clone, Debug)]
pub struct Parsed<T> {
    pub value: T,
    pub warnings: Vec<Warning>,
}

/// An error reading or writing a file, with the path.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    // The inner errors are named `error`, not `source`, on purpose: the message already includes them, and a
    // `source` would make `{:#}` print them twice.
    #[error("{}:{error}", path.display())]
    Parse { path: PathBuf, error: ParseError },
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error("{}: {message}", path.display())]
    Other { path: PathBuf, message: String },
}

impl From<crate::atomic::SaveError> for FileError {
    fn from(e: crate::atomic::SaveError) -> Self {
        match e {
            crate::atomic::SaveError::Io { path, error } => FileError::Io { path, error },
            crate::atomic::SaveError::Refused { path, message } => FileError::Other { path, message },
        }
    }
}

impl FileError {
    pub fn path(&self) -> &Path {
        match self {
            FileError::Parse { path, .. } | FileError::Io { path, .. } | FileError::Other { path, .. } => path,
        }
    }
}

/// Read a file with one of the text readers, attaching the path to any error. A file whose first bytes are not
/// text (a .glb, an FBX, binary data) is refused naming the kind it looks like ([`rig_file::sniff`]), so that no
/// message quotes its bytes.
pub fn load<T>(
    path: &Path,
    read: impl FnOnce(&mut dyn io::Read, Option<u64>) -> Result<Parsed<T>, ParseError>,
) -> Result<Parsed<T>, FileError> {
    use std::io::Read;
    let io_err = |error| FileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let mut file = std::fs::File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    let mut head = Vec::with_capacity(256);
    (&mut file).take(256).read_to_end(&mut head).map_err(io_err)?;
    let looks = rig_file::sniff(&head);
    if !rig_file::plain_text(looks) {
        return Err(FileError::Other {
            path: path.to_path_buf(),
            message: format!("expected {}, found {}", rig_file::text_kind(path), looks.describe()),
        });
    }
    read(&mut io::Cursor::new(head).chain(file), Some(len)).map_err(|error| FileError::Parse {
        path: path.to_path_buf(),
        error,
    })
}

/// `text` with its control characters escaped (`\u{1b}`, `\n`), so that a name or a message quoting a file
/// cannot move a terminal's cursor or change its colours when printed.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Names that break the names rule replaced ([`crate::model::names::sanitize_names`]), each change named in one
/// warning (the first ten); shared by the glTF and FBX imports.
pub(crate) fn sanitize_joint_names(out: &mut [crate::model::Joint], warn: &mut impl FnMut(String)) {
    let renamed = crate::model::names::sanitize_names(out, |j| &mut j.name);
    if !renamed.is_empty() {
        let list: Vec<String> = renamed
            .iter()
            .take(10)
            .map(|r| format!("`{}` as `{}`", printable(&r.from), r.to))
            .collect();
        let more = renamed.len().saturating_sub(list.len());
        warn(format!(
            "{} joint names are not ones every writer keeps (a .skel name is one word without braces); read {}{}",
            renamed.len(),
            list.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
}

/// Shortest decimal that reads back as the same `f32`, without a trailing `.0` (`1`, `-0.5`, `1e-7`). Writers
/// refuse non-finite values first ([`ensure_finite`]); were one to slip through, it prints as `NaN` or `inf`,
/// which every reader refuses, never as digits.
pub fn fmt_f32(buf: &mut ryu::Buffer, v: f32) -> &str {
    let s = buf.format(v);
    s.strip_suffix(".0").unwrap_or(s)
}

/// Refuse the first item with a non-finite component, naming it with `what(index)`: a writer never prints NaN
/// or an infinity, which no reader takes back (ryu would print garbage digits for them).
pub(crate) fn ensure_finite<const N: usize>(
    items: impl IntoIterator<Item = [f32; N]>,
    what: impl FnOnce(usize) -> String,
) -> io::Result<()> {
    match items.into_iter().position(|v| !v.iter().all(|x| x.is_finite())) {
        None => Ok(()),
        Some(i) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not a finite number; nothing was written", what(i)),
        )),
    }
}

/// Writes rows of numbers one line at a time, each made by [`push_row`] in a buffer it reuses, so the line
/// format lives in one place for the serial writers as for [`write_lines`].
#[derive(Default)]
pub(crate) struct RowWriter {
    line: Vec<u8>,
    ryu: ryu::Buffer,
}

impl RowWriter {
    /// Write `values` separated by spaces, at `indent`, ending the line.
    pub(crate) fn write_row(&mut self, out: &mut dyn Write, indent: &str, values: &[f32]) -> io::Result<()> {
        self.line.clear();
        push_row(&mut self.line, &mut self.ryu, indent, values);
        out.write_all(&self.line)
    }
}

/// `values` as one line into `buf`: `indent`, the numbers as [`fmt_f32`] prints them separated by spaces, a newline
/// (what [`RowWriter::write_row`] writes).
pub(crate) fn push_row(buf: &mut Vec<u8>, ryu: &mut ryu::Buffer, indent: &str, values: &[f32]) {
    buf.extend_from_slice(indent.as_bytes());
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            buf.push(b' ');
        }
        buf.extend_from_slice(fmt_f32(ryu, *v).as_bytes());
    }
    buf.push(b'\n');
}

/// `n` in decimal into `buf`.
pub(crate) fn push_uint(buf: &mut Vec<u8>, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}

/// Lines `0..n`, each made by `line(i, buf, ryu)` (appending to `buf`), written to `out` in order. They are made
/// in parallel, blocks of [`LINES_PER_BLOCK`] lines at a time, at most [`BLOCKS_AT_ONCE`] blocks held at once (so
/// a million-vertex file is not held twice in memory).
pub(crate) fn write_lines(
    out: &mut dyn Write,
    n: usize,
    line: impl Fn(usize, &mut Vec<u8>, &mut ryu::Buffer) + Sync,
) -> io::Result<()> {
    use rayon::prelude::*;
    let blocks = n.div_ceil(LINES_PER_BLOCK);
    for first in (0..blocks).step_by(BLOCKS_AT_ONCE) {
        let made: Vec<Vec<u8>> = (first..(first + BLOCKS_AT_ONCE).min(blocks))
            .into_par_iter()
            .map(|b| {
                let (mut buf, mut ryu) = (Vec::with_capacity(LINES_PER_BLOCK * 48), ryu::Buffer::new());
                for i in b * LINES_PER_BLOCK..((b + 1) * LINES_PER_BLOCK).min(n) {
                    line(i, &mut buf, &mut ryu);
                }
                buf
            })
            .collect();
        for buf in &made {
            out.write_all(buf)?;
        }
    }
    Ok(())
}

/// Lines per block of [`write_lines`].
const LINES_PER_BLOCK: usize = 4096;
/// Blocks [`write_lines`] makes before writing them.
const BLOCKS_AT_ONCE: usize = 32;

/// Which format a path's extension names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    Skel,
    Skin,
    Anim,
    Morph,
    Obj,
    /// glTF 2.0, binary (`.glb`) or JSON (`.gltf`).
    Gltf,
    /// Autodesk FBX, binary or ASCII (read only).
    Fbx,
}

impl FileKind {
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "skel" => Self::Skel,
            "skin" => Self::Skin,
            "anim" => Self::Anim,
            "morph" => Self::Morph,
            "obj" => Self::Obj,
            "glb" | "gltf" => Self::Gltf,
            "fbx" => Self::Fbx,
            _ => return None,
        })
    }
}

/// Load a `.skel` file.
pub fn load_skel(path: &Path) -> Result<Parsed<crate::model::Skeleton>, FileError> {
    load(path, |r, len| skel::read_skel(r, len))
}

/// Load a `.skin` file; `joint_count` is the skeleton's, when known, to check joint indices where written.
pub fn load_skin(path: &Path, joint_count: Option<usize>) -> Result<Parsed<crate::model::Skin>, FileError> {
    load(path, |r, len| skin::read_skin(r, len, joint_count))
}

/// Load a mesh to bind, by extension: a `.skin`, a Wavefront `.obj`, or the skinned mesh of a `.glb`, `.gltf`
/// or `.fbx` (its artist weights and bindings come with it); see [`rig_file::load_mesh`].
pub fn load_mesh(path: &Path, joint_count: Option<usize>) -> Result<Parsed<crate::model::Skin>, FileError> {
    rig_file::load_mesh(path, joint_count)
}

/// Load a Wavefront `.obj` mesh as a bare skin.
pub fn load_obj(path: &Path) -> Result<Parsed<crate::model::Skin>, FileError> {
    load(path, obj::read_obj)
}

/// Load an `.anim` file.
pub fn load_anim(path: &Path) -> Result<Parsed<crate::model::Clip>, FileError> {
    load(path, |r, len| anim::read_anim(r, len))
}

/// Load a `.morph` file.
pub fn load_morph(path: &Path) -> Result<Parsed<crate::model::Morph>, FileError> {
    load(path, |r, len| morph::read_morph(r, len))
}
