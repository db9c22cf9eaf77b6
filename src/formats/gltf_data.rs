//! The bytes a glTF file points at, read as a stranger's file must be: buffers and accessors, every index,
//! offset, stride and count checked before a byte is read.
//!
//! - **Buffers** come from the GLB binary chunk, a base64 `data:` URI, or a file named by a relative URI. A URI
//!   is percent-decoded and must name a regular file inside the model's folder (no absolute path, no scheme,
//!   no `..`, no backslash, and after following links still inside that folder). A file smaller than its
//!   `byteLength` is refused before it is read; of the rest only the bytes its buffer views cover are read,
//!   at most [`MAX_BUFFER_BYTES`] in one import, so a device, a FIFO, a huge file or a lying `byteLength`
//!   cannot make the reader hang or fill memory.
//! - **Accessors** are decoded here, not by the `gltf` crate's readers, which trust what they are given (an
//!   accessor past its buffer, a `byteStride` below the element size or a float index reach `assert!` and
//!   `unreachable!` there). Each read names the accessor and what it expected: the component types and type
//!   the glTF specification allows for that attribute, an element stride at least the element's size, and
//!   every element inside its buffer view and the view inside its buffer. Sparse accessors are refused.
//! - **Budget**: a file can point many accessors at one view; the bytes decoded in one import are bounded by
//!   a multiple of the bytes the buffers hold ([`Budget`]), so a small file cannot expand without bound.

use std::io::Read;
use std::path::{Path, PathBuf};

use gltf::accessor::{DataType, Dimensions};

/// The most bytes one import reads from buffer files (1 GiB): what the buffer views cover, not what a
/// `byteLength` claims.
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;

/// Reads the buffers of `gltf`, whose JSON is the file at `path` (for relative URIs). Of a buffer file, only
/// the bytes its buffer views cover are read, after checking the file's size against `byteLength` and the
/// total against [`MAX_BUFFER_BYTES`].
pub fn read_buffers(path: &Path, gltf: &gltf::Gltf) -> Result<Vec<Vec<u8>>, String> {
    use base64::Engine;
    // How far into each buffer its views reach.
    let mut covered = vec![0u64; gltf.buffers().len()];
    for v in gltf.views() {
        let end = (v.offset() as u64).saturating_add(v.length() as u64);
        if let Some(c) = covered.get_mut(v.buffer().index()) {
            *c = (*c).max(end);
        }
    }
    let mut read_so_far = 0u64;
    let mut out = Vec::new();
    for b in gltf.buffers() {
        let what = format!("buffer {}", b.index());
        let declared = b.length() as u64;
        let mut data = match b.source() {
            gltf::buffer::Source::Bin => gltf
                .blob
                .clone()
                .ok_or_else(|| format!("{what} refers to a GLB binary chunk the file lacks"))?,
            gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => {
                let (_, payload) = uri
                    .split_once(";base64,")
                    .ok_or_else(|| format!("{what}: a data URI that is not base64"))?;
                base64::engine::general_purpose::STANDARD
                    .decode(payload)
                    .map_err(|e| format!("{what}: bad base64 data: {e}"))?
            }
            gltf::buffer::Source::Uri(uri) => {
                let file =
                    resolve_uri(path, uri).map_err(|e| format!("{what}: uri `{}`: {e}", super::printable(uri)))?;
                let size = std::fs::metadata(&file)
                    .map_err(|e| format!("{what}: cannot read {}: {e}", file.display()))?
                    .len();
                if size < declared {
                    return Err(format!(
                        "{what}: expected a byteLength of at most the file's {size} bytes ({}), found {declared}",
                        file.display()
                    ));
                }
                let wanted = covered[b.index()].min(declared);
                read_so_far = read_so_far.saturating_add(wanted);
                if read_so_far > MAX_BUFFER_BYTES {
                    return Err(format!(
                        "{what}: its buffer views cover {wanted} bytes; with the buffers before it that is more \
                         than the {MAX_BUFFER_BYTES} bytes one import reads"
                    ));
                }
                read_at_most(&file, wanted).map_err(|e| format!("{what}: cannot read {}: {e}", file.display()))?
            }
        };
        // A buffer file was read only as far as its views reach, and checked against `byteLength` before.
        let file = matches!(b.source(), gltf::buffer::Source::Uri(u) if !u.starts_with("data:"));
        let expected = if file {
            covered[b.index()].min(declared)
        } else {
            declared
        };
        if (data.len() as u64) < expected {
            return Err(format!("{what} holds {} bytes, the file says {declared}", data.len()));
        }
        data.truncate(b.length());
        out.push(data);
    }
    Ok(out)
}

/// The file a buffer's relative URI names, inside the folder of the model at `model`.
pub fn resolve_uri(model: &Path, uri: &str) -> Result<PathBuf, String> {
    let decoded = percent_encoding::percent_decode_str(uri)
        .decode_utf8()
        .map_err(|_| "not UTF-8 once percent-decoded".to_string())?;
    let refuse = |why: &str| Err(format!("refused: {why}"));
    if decoded.is_empty() {
        return refuse("empty");
    }
    if decoded.contains('\0') || decoded.contains('\\') {
        return refuse("a NUL or a backslash");
    }
    if decoded.starts_with('/') {
        return refuse("an absolute path");
    }
    // A scheme (`file:`, `http:`, a drive letter `C:`) before any slash.
    if decoded.split('/').next().is_some_and(|first| first.contains(':')) {
        return refuse("a URI scheme or drive; only paths relative to the model are read");
    }
    if decoded.split('/').any(|part| part == "..") {
        return refuse("`..` leaves the model's folder");
    }
    let folder = match model.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let folder = folder
        .canonicalize()
        .map_err(|e| format!("cannot resolve the model's folder: {e}"))?;
    let file = folder
        .join(decoded.as_ref())
        .canonicalize()
        .map_err(|e| format!("cannot resolve it: {e}"))?;
    if !file.starts_with(&folder) {
        return refuse("it links outside the model's folder");
    }
    let meta = std::fs::metadata(&file).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return refuse("not a regular file");
    }
    Ok(file)
}

/// At most `limit` bytes of a regular file (checked against the budget by the caller).
fn read_at_most(file: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    std::fs::File::open(file)?.take(limit).read_to_end(&mut out)?;
    Ok(out)
}

/// How many bytes one import may decode from accessors: a file cannot point more accessors at its buffers than
/// this allows.
pub struct Budget {
    left: usize,
}

impl Budget {
    /// Four times the buffers' bytes (a model reads each attribute once; normals and weights are computed or
    /// widened on the way), plus room for accessors without data.
    pub fn for_buffers(buffers: &[Vec<u8>]) -> Self {
        let bytes: usize = buffers.iter().map(Vec::len).sum();
        Self {
            left: bytes.saturating_mul(4).saturating_add(64 << 20),
        }
    }

    fn spend(&mut self, bytes: usize, what: &str) -> Result<(), String> {
        self.left = self.left.checked_sub(bytes).ok_or_else(|| {
            format!("{what}: the file's accessors decode to far more data than its buffers hold; refused")
        })?;
        Ok(())
    }
}

/// What an accessor read may hold.
struct Want {
    dims: Dimensions,
    types: &'static [DataType],
    /// Integer components are normalised to [0, 1] when the accessor says `normalized` (weights).
    normalized_ok: bool,
}

/// An accessor's elements, checked: every element lies inside `bytes` (empty when the accessor has no view and
/// its values are zeros).
struct Elements<'a> {
    bytes: &'a [u8],
    offset: usize,
    stride: usize,
    count: usize,
    data_type: DataType,
    normalized: bool,
}

impl Elements<'_> {
    /// Component `c` of element `i`, or `None` for an accessor without data (zeros).
    fn component(&self, i: usize, c: usize) -> Option<&[u8]> {
        let size = self.data_type.size();
        let at = self.offset + i * self.stride + c * size;
        self.bytes.get(at..at + size)
    }

    /// Every element as `N` floats.
    fn to_f32<const N: usize>(&self) -> Vec<[f32; N]> {
        (0..self.count)
            .map(|i| {
                std::array::from_fn(|c| {
                    self.component(i, c)
                        .map_or(0.0, |b| to_f32(self.data_type, b, self.normalized))
                })
            })
            .collect()
    }
}

/// Checks accessor `acc` against `want` (`n` components an element) and locates its elements.
fn elements<'a>(
    acc: &gltf::Accessor,
    buffers: &'a [Vec<u8>],
    budget: &mut Budget,
    what: &str,
    want: &Want,
    n: usize,
) -> Result<Elements<'a>, String> {
    let name = format!("{what} (accessor {})", acc.index());
    if acc.dimensions() != want.dims || !want.types.contains(&acc.data_type()) {
        return Err(format!(
            "{name}: expected {} of {}, found {} of {:?}",
            dims_name(want.dims),
            want.types
                .iter()
                .map(|t| format!("{t:?}"))
                .collect::<Vec<_>>()
                .join(" or "),
            dims_name(acc.dimensions()),
            acc.data_type()
        ));
    }
    if acc.sparse().is_some() {
        return Err(format!("{name}: sparse accessors are not supported"));
    }
    let count = acc.count();
    let elem = acc.data_type().size() * n;
    budget.spend(count.saturating_mul(n * 4), &name)?;
    let mut out = Elements {
        bytes: &[],
        offset: acc.offset(),
        stride: elem,
        count,
        data_type: acc.data_type(),
        normalized: acc.normalized() && want.normalized_ok,
    };
    let Some(view) = acc.view() else {
        // No buffer view: the specification says the values are zeros.
        return Ok(out);
    };
    let buffer = buffers
        .get(view.buffer().index())
        .ok_or_else(|| format!("{name}: its buffer view's buffer is missing"))?;
    let view_end = view
        .offset()
        .checked_add(view.length())
        .filter(|&e| e <= buffer.len())
        .ok_or_else(|| {
            format!(
                "{name}: buffer view {} (bytes {}..+{}) runs past its buffer's {} bytes",
                view.index(),
                view.offset(),
                view.length(),
                buffer.len()
            )
        })?;
    out.bytes = &buffer[view.offset()..view_end];
    out.stride = view.stride().unwrap_or(elem);
    if out.stride < elem {
        return Err(format!(
            "{name}: byteStride {} is smaller than its {elem}-byte elements",
            out.stride
        ));
    }
    if count > 0 {
        let end = (count - 1)
            .checked_mul(out.stride)
            .and_then(|s| s.checked_add(out.offset))
            .and_then(|s| s.checked_add(elem));
        if end.is_none_or(|e| e > out.bytes.len()) {
            return Err(format!(
                "{name}: {count} elements from byte {} with stride {} run past its buffer view's {} bytes",
                out.offset,
                out.stride,
                out.bytes.len()
            ));
        }
    }
    Ok(out)
}

/// One little-endian component as `f32` (exact for every integer type below 2^24; u32 indices are read apart).
fn to_f32(t: DataType, b: &[u8], normalized: bool) -> f32 {
    let (v, max) = match t {
        DataType::I8 => (f32::from(b[0] as i8), 127.0),
        DataType::U8 => (f32::from(b[0]), 255.0),
        DataType::I16 => (f32::from(i16::from_le_bytes([b[0], b[1]])), 32767.0),
        DataType::U16 => (f32::from(u16::from_le_bytes([b[0], b[1]])), 65535.0),
        DataType::U32 => (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32, u32::MAX as f32),
        DataType::F32 => return f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
    };
    if normalized { (v / max).max(-1.0) } else { v }
}

fn dims_name(d: Dimensions) -> &'static str {
    match d {
        Dimensions::Scalar => "SCALAR",
        Dimensions::Vec2 => "VEC2",
        Dimensions::Vec3 => "VEC3",
        Dimensions::Vec4 => "VEC4",
        Dimensions::Mat2 => "MAT2",
        Dimensions::Mat3 => "MAT3",
        Dimensions::Mat4 => "MAT4",
    }
}

/// `POSITION`, `NORMAL`: VEC3 of FLOAT.
const VEC3: Want = Want {
    dims: Dimensions::Vec3,
    types: &[DataType::F32],
    normalized_ok: false,
};
/// `JOINTS_n`: VEC4 of UNSIGNED_BYTE or UNSIGNED_SHORT.
const JOINTS: Want = Want {
    dims: Dimensions::Vec4,
    types: &[DataType::U8, DataType::U16],
    normalized_ok: false,
};
/// `WEIGHTS_n`: VEC4 of FLOAT, or of normalised UNSIGNED_BYTE or UNSIGNED_SHORT.
const WEIGHTS: Want = Want {
    dims: Dimensions::Vec4,
    types: &[DataType::F32, DataType::U8, DataType::U16],
    normalized_ok: true,
};
/// Inverse bind matrices: MAT4 of FLOAT, column-major.
const MAT4: Want = Want {
    dims: Dimensions::Mat4,
    types: &[DataType::F32],
    normalized_ok: false,
};
/// Triangle indices: SCALAR of UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT.
const INDICES: Want = Want {
    dims: Dimensions::Scalar,
    types: &[DataType::U8, DataType::U16, DataType::U32],
    normalized_ok: false,
};

/// Animation sampler inputs (key times): SCALAR of FLOAT.
const TIMES: Want = Want {
    dims: Dimensions::Scalar,
    types: &[DataType::F32],
    normalized_ok: false,
};
/// Animated rotations: VEC4 of FLOAT, or of normalised (signed or unsigned) BYTE or SHORT.
const ROTATIONS: Want = Want {
    dims: Dimensions::Vec4,
    types: &[DataType::F32, DataType::I8, DataType::U8, DataType::I16, DataType::U16],
    normalized_ok: true,
};

/// The buffers of one import and what is left of its decode budget: accessors are read through this.
pub struct Data {
    buffers: Vec<Vec<u8>>,
    budget: Budget,
}

impl Data {
    pub fn new(buffers: Vec<Vec<u8>>) -> Self {
        let budget = Budget::for_buffers(&buffers);
        Self { buffers, budget }
    }

    /// `POSITION` or `NORMAL` (`what` names it in errors).
    pub fn vec3s(&mut self, acc: &gltf::Accessor, what: &str) -> Result<Vec<[f32; 3]>, String> {
        Ok(elements(acc, &self.buffers, &mut self.budget, what, &VEC3, 3)?.to_f32())
    }

    /// `JOINTS_n`.
    pub fn joints(&mut self, acc: &gltf::Accessor, what: &str) -> Result<Vec<[u16; 4]>, String> {
        let e = elements(acc, &self.buffers, &mut self.budget, what, &JOINTS, 4)?;
        Ok(e.to_f32::<4>().into_iter().map(|j| j.map(|x| x as u16)).collect())
    }

    /// `WEIGHTS_n`.
    pub fn weights(&mut self, acc: &gltf::Accessor, what: &str) -> Result<Vec<[f32; 4]>, String> {
        Ok(elements(acc, &self.buffers, &mut self.budget, what, &WEIGHTS, 4)?.to_f32())
    }

    /// Inverse bind matrices.
    pub fn mat4s(&mut self, acc: &gltf::Accessor, what: &str) -> Result<Vec<[f32; 16]>, String> {
        Ok(elements(acc, &self.buffers, &mut self.budget, what, &MAT4, 16)?.to_f32())
    }

    /// An animation sampler's key times.
    pub fn times(&mut self, acc: &gltf::Accessor, what: &str) -> Result<Vec<f32>, String> {
        let e = elements(acc, &self.buffers, &mut self.budget, what, &TIMES, 1)?;
        Ok(e.to_f32::<1>().into_iter().map(|[t]| t).collect())
    }

    /// An animation sampler's rotations (quaternions x, y, z, w).
    pub fn rotations(&mut self, acc: &gltf::Accessor, what: &str) -> Result<Vec<glam::Vec4>, String> {
        let e = elements(acc, &self.buffers, &mut self.budget, what, &ROTATIONS, 4)?;
        Ok(e.to_f32::<4>().into_iter().map(glam::Vec4::from_array).collect())
    }

    /// Triangle indices, decoded as integers: a u32 index past 2^24 would not survive a trip through f32.
    pub fn indices(&mut self, acc: &gltf::Accessor, what: &str) -> Result<Vec<u32>, String> {
        let e = elements(acc, &self.buffers, &mut self.budget, what, &INDICES, 1)?;
        Ok((0..e.count)
            .map(|i| match e.component(i, 0) {
                Some([x]) => u32::from(*x),
                Some([x, y]) => u32::from(u16::from_le_bytes([*x, *y])),
                Some([x, y, z, w]) => u32::from_le_bytes([*x, *y, *z, *w]),
                _ => 0,
            })
            .collect())
    }
}
