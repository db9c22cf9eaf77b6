//! One reader for rigs: what every command and the editor call to read a skeleton, a skin or a whole rig from
//! a file, whatever its format. A `.glb`, `.gltf` or `.fbx` holds a skeleton and a skin at once ([`load_rig`]);
//! a `.skel` a skeleton, a `.skin` or `.obj` a mesh. The kind comes from the extension, and the first bytes are
//! checked against it, so that a binary file is never fed to a text reader: the error names the file and the
//! kind its bytes look like, and prints none of them.

use std::io::Read;
use std::path::Path;

use super::gltf::{AnimationChoice, GltfRig};
use super::{FileError, FileKind, Parsed};
use crate::model::{Skeleton, Skin};

/// What a file's first bytes look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Looks {
    /// Binary glTF (`glTF` magic).
    Glb,
    /// Binary FBX (`Kaydara FBX Binary`).
    FbxBinary,
    /// ASCII FBX (a `; FBX` comment header).
    FbxAscii,
    /// A JSON object (a `.gltf`, a session).
    Json,
    /// Text of no known header (the course's formats, OBJ).
    Text,
    /// Binary data of no kind skinbind reads (a NUL or bytes that are not UTF-8).
    Binary,
}

impl Looks {
    /// The kind in words, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Looks::Glb => "a binary glTF (.glb) file",
            Looks::FbxBinary => "a binary FBX file",
            Looks::FbxAscii => "an ASCII FBX file",
            Looks::Json => "a JSON file (a .gltf?)",
            Looks::Text => "a text file",
            Looks::Binary => "binary data of no kind skinbind reads",
        }
    }
}

/// What `head` (a file's first bytes, 64 or more where the file has them) looks like.
pub fn sniff(head: &[u8]) -> Looks {
    if head.starts_with(b"glTF") {
        return Looks::Glb;
    }
    if head.starts_with(b"Kaydara FBX Binary") {
        return Looks::FbxBinary;
    }
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // A multi-byte character cut at the end of the head is still text.
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
        Err(_) => return Looks::Binary,
    };
    if text.contains('\0') {
        return Looks::Binary;
    }
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with("; FBX") || trimmed.starts_with("FBXHeaderExtension") {
        Looks::FbxAscii
    } else if trimmed.starts_with('{') {
        Looks::Json
    } else {
        Looks::Text
    }
}

/// The first bytes of the file at `path`.
fn head_of(path: &Path) -> Result<Vec<u8>, FileError> {
    let io = |error| FileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let mut head = Vec::with_capacity(256);
    std::fs::File::open(path)
        .map_err(io)?
        .take(256)
        .read_to_end(&mut head)
        .map_err(io)?;
    Ok(head)
}

/// Whether `path` names a rig file (a skeleton and a skin in one): `.glb`, `.gltf` or `.fbx`.
pub fn is_rig(path: &Path) -> bool {
    matches!(FileKind::from_path(path), Some(FileKind::Gltf | FileKind::Fbx))
}

/// What a text file of `path`'s extension should be, in words (for [`super::load`]'s refusal).
pub(super) fn text_kind(path: &Path) -> &'static str {
    match FileKind::from_path(path) {
        Some(FileKind::Skin) => "a .skin mesh (text)",
        Some(FileKind::Anim) => "an .anim animation (text)",
        Some(FileKind::Morph) => "a .morph target (text)",
        Some(FileKind::Obj) => "a Wavefront .obj mesh (text)",
        Some(FileKind::Skel) => "a .skel skeleton (text)",
        _ => "a text file of a kind skinbind reads",
    }
}

/// Whether a text reader may be given the file (its own errors name what is wrong with other text).
pub(super) fn plain_text(looks: Looks) -> bool {
    matches!(looks, Looks::Text | Looks::Json)
}

/// Refuse a file whose bytes are not the kind its extension names (`expected`, in words).
fn check_looks(path: &Path, expected: &str, fits: impl Fn(Looks) -> bool) -> Result<(), FileError> {
    let looks = sniff(&head_of(path)?);
    if fits(looks) {
        return Ok(());
    }
    Err(FileError::Other {
        path: path.to_path_buf(),
        message: format!("expected {expected}, found {}", looks.describe()),
    })
}

/// Read a skinned model from a `.glb`, `.gltf` or `.fbx` file, sampling the animations `choice` asks for.
pub fn load_rig(path: &Path, choice: &AnimationChoice) -> Result<Parsed<GltfRig>, FileError> {
    match FileKind::from_path(path) {
        Some(FileKind::Fbx) => {
            // ASCII FBX need not start with its comment header: ufbx judges text.
            let fbx = |l| matches!(l, Looks::FbxBinary | Looks::FbxAscii | Looks::Text);
            check_looks(path, "an FBX file", fbx)?;
            super::fbx::load_fbx_with(path, choice)
        }
        _ => {
            // The glTF reader names what is wrong with anything else that is not FBX.
            let not_fbx = |l| !matches!(l, Looks::FbxBinary | Looks::FbxAscii);
            check_looks(path, "a glTF file (.glb or .gltf)", not_fbx)?;
            super::gltf::load_gltf_with(path, None, choice)
        }
    }
}

/// Read a skeleton: a `.skel`, or the skeleton of a `.glb`, `.gltf` or `.fbx` model.
pub fn load_skeleton(path: &Path) -> Result<Parsed<Skeleton>, FileError> {
    if is_rig(path) {
        return load_rig(path, &AnimationChoice::None).map(|p| Parsed {
            value: p.value.skeleton,
            warnings: p.warnings,
        });
    }
    super::load_skel(path)
}

/// Read a skeleton with its skinned mesh: a `.glb`, `.gltf` or `.fbx` model (its skeleton and skinned mesh; `skin`
/// is not read, the model brings its own), or a `.skel` with, when `skin` names one, the mesh [`load_mesh`] reads
/// from it (its joint indices checked against the skeleton). Each file's warnings go to `warn` with its path.
pub fn load_skeleton_with_skin(
    path: &Path,
    skin: Option<&Path>,
    warn: &mut dyn FnMut(&Path, Vec<super::Warning>),
) -> Result<(Skeleton, Option<Skin>), FileError> {
    if is_rig(path) {
        let rig = load_rig(path, &AnimationChoice::None)?;
        warn(path, rig.warnings);
        return Ok((rig.value.skeleton, Some(rig.value.skin)));
    }
    let skel = super::load_skel(path)?;
    warn(path, skel.warnings);
    let skin = match skin {
        Some(s) => {
            let mesh = load_mesh(s, Some(skel.value.len()))?;
            warn(s, mesh.warnings);
            Some(mesh.value)
        }
        None => None,
    };
    Ok((skel.value, skin))
}

/// Read a mesh: a `.skin` (`joint_count`, the skeleton's when known, checks its joint indices), a Wavefront
/// `.obj`, or the skinned mesh of a `.glb`, `.gltf` or `.fbx` model (its artist weights and bindings with it).
pub fn load_mesh(path: &Path, joint_count: Option<usize>) -> Result<Parsed<Skin>, FileError> {
    if is_rig(path) {
        return load_rig(path, &AnimationChoice::None).map(|p| Parsed {
            value: p.value.skin,
            warnings: p.warnings,
        });
    }
    if FileKind::from_path(path) == Some(FileKind::Obj) {
        super::load_obj(path)
    } else {
        super::load_skin(path, joint_count)
    }
}

/// Read an animation: an `.anim`, or the first clip of a `.glb`, `.gltf` or `.fbx` model (its joint moves kept,
/// which an `.anim` cannot hold).
pub fn load_clip(path: &Path) -> Result<Parsed<crate::model::Clip>, FileError> {
    if !is_rig(path) {
        return super::load_anim(path);
    }
    let p = load_rig(path, &AnimationChoice::First)?;
    match p.value.animations.into_iter().next() {
        Some(first) => Ok(Parsed {
            value: first.clip,
            warnings: p.warnings,
        }),
        None => Err(FileError::Other {
            path: path.to_path_buf(),
            message: "expected a model with an animation, found none".to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniff_tells_kinds_apart() {
        assert_eq!(sniff(b"glTF\x02\0\0\0"), Looks::Glb);
        assert_eq!(sniff(b"Kaydara FBX Binary  \0\x1a\0"), Looks::FbxBinary);
        assert_eq!(sniff(b"; FBX 7.4.0 project file\n"), Looks::FbxAscii);
        assert_eq!(sniff(b"  {\"asset\": {}}"), Looks::Json);
        assert_eq!(sniff(b"balljoint root {\n"), Looks::Text);
        assert_eq!(sniff(b""), Looks::Text);
        assert_eq!(sniff(b"ab\0cd"), Looks::Binary);
        assert_eq!(sniff(b"\xff\xfe\x00"), Looks::Binary);
        // A character cut by the end of the head is still text.
        assert_eq!(sniff("joint é".as_bytes().split_last().unwrap().1), Looks::Text);
    }

    /// A .skel reads alone or with its .skin (each file's warnings handed on with its path); a .skin whose joint
    /// indices the skeleton does not have is refused.
    #[test]
    fn a_skeleton_reads_with_its_skin_when_given_one() {
        let dir = tempfile::tempdir().unwrap();
        let sample = crate::sample::chain_tube(3, 200).unwrap();
        let (skel_path, skin_path) = (dir.path().join("t.skel"), dir.path().join("t.skin"));
        let mut bytes = Vec::new();
        super::super::skel::write_skel(&mut bytes, &sample.skeleton).unwrap();
        std::fs::write(&skel_path, bytes).unwrap();
        let mut bytes = Vec::new();
        super::super::skin::write_skin(&mut bytes, &sample.skin).unwrap();
        std::fs::write(&skin_path, bytes).unwrap();
        let mut told = Vec::new();
        let mut warn = |p: &Path, w: Vec<super::super::Warning>| told.push((p.to_path_buf(), w.len()));
        let (skel, skin) = load_skeleton_with_skin(&skel_path, Some(&skin_path), &mut warn).unwrap();
        assert_eq!(skel.len(), sample.skeleton.len());
        assert_eq!(skin.unwrap().vertex_count(), sample.skin.vertex_count());
        assert_eq!(told, [(skel_path.clone(), 0), (skin_path.clone(), 0)]);
        let (_, none) = load_skeleton_with_skin(&skel_path, None, &mut |_, _| {}).unwrap();
        assert!(none.is_none());
        // A one-joint skeleton does not have the skin's joints.
        let root = dir.path().join("root.skel");
        std::fs::write(&root, "balljoint root { }").unwrap();
        assert!(load_skeleton_with_skin(&root, Some(&skin_path), &mut |_, _| {}).is_err());
    }
}
