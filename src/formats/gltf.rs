//! glTF 2.0 import of a skinned model (`.glb` or `.gltf`, buffers in the GLB chunk, as base64 data URIs, or in
//! files beside it), with the `gltf` crate.
//!
//! What one import gives ([`GltfRig`]): the skeleton of one skin (the first unless chosen), the meshes that use
//! that skin merged into one [`Skin`] (every triangle primitive of every node that references the skin, in node
//! order), their artist weights and the bindings.
//!
//! - **Joints.** The skin's joint nodes, reordered depth-first (the model's rule: a parent before its children,
//!   joint 0 the root). A joint's parent is its nearest ancestor node that is also a joint. A joint's offset is
//!   the translation of its rest transform relative to that parent (through any non-joint nodes between them);
//!   its rest rotation is kept as the joint's `pose` (Euler angles x, y, z with `local = T * Rz * Ry * Rx`, the
//!   model's convention), so that the skeleton's file pose is the glTF rest pose. A root joint is placed at its
//!   bind transform (the inverse of its inverse bind matrix). Scale is not kept (a warning names the joints with
//!   a scale other than 1); offsets are in the scene's units (times the parent's scale in the scene). Several
//!   root joints get a synthetic root `gltf_root` at the origin (warned).
//! - **Placement.** The whole rig is placed where a glTF viewer shows it: when the nodes above the root joint
//!   (an armature's change of axes, CesiumMan's Z-up node) are not already in the inverse bind matrices, their
//!   rotation, translation and uniform scale are applied to the vertices, normals and bindings (see `Placement`).
//! - **Bindings** are the inverses of the inverse bind matrices (identity where the file has none), placed and
//!   without scale, in the new joint order: each joint's world matrix at bind time, as the `.skin` format keeps
//!   them.
//! - **Vertices**: positions and normals as stored, placed (a skinned mesh's own node transform is ignored, as
//!   the glTF specification says); normals are computed when a primitive has none. Only `TRIANGLES` primitives
//!   are read.
//! - **Weights**: `JOINTS_n` / `WEIGHTS_n` for every set present, joint indices mapped to the new order, zeros
//!   dropped, repeats merged; rows that do not sum to 1 within 1e-3 are normalised and counted in a warning.
//! - **Animations** that drive the skeleton become clips ([`super::gltf_anim`]).
//! - Not imported (each named in a warning when present): morph targets, other skins, meshes without this skin,
//!   materials and textures.
//!
//! Warnings carry line 0 (they are about the file as a whole).

use std::path::Path;

use glam::{Mat4, Quat, Vec3};

pub use super::gltf_anim::{AnimationChoice, AnimationSummary};
use super::gltf_data::{Data, read_buffers};
use super::{FileError, Parsed, Warning};
use crate::model::Row;
use crate::model::{Joint, Skeleton, Skin, Weights};
use gltf::Semantic;

/// A skinned model read from glTF.
#[derive(Clone, Debug)]
pub struct GltfRig {
    pub skeleton: Skeleton,
    pub skin: Skin,
    /// Which of the file's skins this is, and how many it has.
    pub skin_index: usize,
    pub skins: usize,
    /// The file's animations that drive this skeleton and fit the sample budget, from their key times alone
    /// (nothing sampled), in file order.
    pub summaries: Vec<AnimationSummary>,
    /// Those of them the import was asked to sample ([`AnimationChoice`]), sampled to its joints (see
    /// [`super::gltf_anim`]).
    pub animations: Vec<super::gltf_anim::NamedClip>,
    /// Morph targets of the skin, by name (an FBX model's blend shapes; the glTF import keeps none yet).
    pub morphs: Vec<NamedMorph>,
}

/// A morph target of an imported model.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedMorph {
    pub name: String,
    pub morph: crate::model::Morph,
}

/// What a glTF file holds, as `skinbind info` describes it (read from its JSON alone; names escaped).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GltfContents {
    pub nodes: usize,
    pub meshes: usize,
    /// Nodes with both a mesh and a skin.
    pub skinned_mesh_nodes: usize,
    pub skins: Vec<GltfSkinInfo>,
    pub animations: Vec<GltfAnimationInfo>,
    pub materials: usize,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GltfSkinInfo {
    pub name: String,
    pub joints: usize,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GltfAnimationInfo {
    pub name: String,
    pub channels: usize,
    /// The latest key time over its samplers' inputs (their accessors' `max`), when the file gives it.
    pub end: Option<f32>,
}

/// What the glTF file at `path` holds (see [`GltfContents`]), without reading its buffers.
pub fn contents(path: &Path) -> Result<GltfContents, FileError> {
    let bytes = std::fs::read(path).map_err(|error| FileError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let gltf = super::gltf_check::parse(&bytes).map_err(|m| other(path, m))?.gltf;
    let name = |n: Option<&str>| super::printable(n.unwrap_or("")).into_owned();
    Ok(GltfContents {
        nodes: gltf.nodes().len(),
        meshes: gltf.meshes().len(),
        skinned_mesh_nodes: gltf
            .nodes()
            .filter(|n| n.mesh().is_some() && n.skin().is_some())
            .count(),
        skins: gltf
            .skins()
            .map(|s| GltfSkinInfo {
                name: name(s.name()),
                joints: s.joints().len(),
            })
            .collect(),
        animations: gltf
            .animations()
            .map(|a| GltfAnimationInfo {
                name: name(a.name()),
                channels: a.channels().count(),
                end: a
                    .samplers()
                    .filter_map(|s| s.input().max().and_then(|m| m.get(0).and_then(|v| v.as_f64())))
                    .map(|v| v as f32)
                    .filter(|v| v.is_finite())
                    .reduce(f32::max),
            })
            .collect(),
        materials: gltf.materials().len(),
    })
}

/// How far a scale may be from 1 before it is reported.
const SCALE_TOLERANCE: f32 = 1e-3;

fn other(path: &Path, message: impl Into<String>) -> FileError {
    FileError::Other {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// The transform from the mesh's stored space to where a glTF viewer shows it (an armature's change of axes, its
/// scale), applied to the whole rig so that it stands as authored: a rotation and translation, and a uniform scale
/// folded into the lengths (the model's joints have no scale).
struct Placement {
    /// Rotation and translation.
    rotate_move: Mat4,
    scale: f32,
}

impl Placement {
    /// The placement of `above`. A scale that differs between axes becomes their geometric mean, and a mirroring
    /// or degenerate transform is not applied; both are warned about.
    fn new(above: Mat4, warn: &mut impl FnMut(String)) -> Self {
        let none = Self {
            rotate_move: Mat4::IDENTITY,
            scale: 1.0,
        };
        if above == Mat4::IDENTITY {
            return none;
        }
        let det = above.determinant();
        if !(above.is_finite() && det.is_finite() && det > 0.0) {
            warn("the scene mirrors or flattens the skinned mesh; that transform was not applied".to_string());
            return none;
        }
        let (scale, rotation, translation) = above.to_scale_rotation_translation();
        let mean = det.cbrt();
        if (scale - Vec3::splat(mean)).abs().max_element() > SCALE_TOLERANCE * mean {
            warn(format!(
                "the scene scales the skinned mesh unevenly ({} {} {}); it was scaled by their mean, {mean}",
                scale.x, scale.y, scale.z
            ));
        }
        Self {
            rotate_move: Mat4::from_rotation_translation(rotation.normalize(), translation),
            scale: mean,
        }
    }

    /// A joint's world matrix in the mesh's space (an inverse bind matrix's inverse) as the model keeps it: in the
    /// scene, without scale (the joints have none; a scale in the armature above them is in their offsets).
    fn rigid(&self, m: Mat4) -> Mat4 {
        let (_, r, t) = m.to_scale_rotation_translation();
        self.rotate_move * Mat4::from_rotation_translation(r.normalize(), t * self.scale)
    }

    fn point(&self, p: Vec3) -> Vec3 {
        self.rotate_move.transform_point3(p * self.scale)
    }

    fn direction(&self, d: Vec3) -> Vec3 {
        self.rotate_move.transform_vector3(d)
    }
}

/// World matrices of the nodes from their local matrices (`local(node)`: the rest transform, or a posed one),
/// parents before children; `None` for a node no scene root reaches (in a cycle, which is invalid glTF).
/// Iterative, so a deep node tree costs heap, not stack.
pub(super) fn node_worlds(
    nodes: &[gltf::Node],
    parent: &[Option<usize>],
    local: impl Fn(usize) -> Mat4,
) -> Vec<Option<Mat4>> {
    let mut world: Vec<Option<Mat4>> = vec![None; nodes.len()];
    let mut stack: Vec<usize> = (0..nodes.len()).filter(|&i| parent[i].is_none()).collect();
    for &r in &stack {
        world[r] = Some(local(r));
    }
    while let Some(i) = stack.pop() {
        let w = world[i].unwrap_or(Mat4::IDENTITY);
        for c in nodes[i].children() {
            if world[c.index()].is_none() {
                world[c.index()] = Some(w * local(c.index()));
                stack.push(c.index());
            }
        }
    }
    world
}

/// A node's rest transform.
pub(super) fn rest_local(node: &gltf::Node) -> Mat4 {
    Mat4::from_cols_array_2d(&node.transform().matrix())
}

/// Read a skinned glTF model with all its animations sampled; `skin` picks one of its skins (0 when `None`).
pub fn load_gltf(path: &Path, skin: Option<usize>) -> Result<Parsed<GltfRig>, FileError> {
    load_gltf_with(path, skin, &AnimationChoice::All)
}

/// Read a skinned glTF model, sampling only the animations `animations` asks for (every animation is still
/// summarised from its key times); `skin` picks one of its skins (0 when `None`).
///
/// Nothing in the file is trusted (see [`super::gltf_data`] and [`super::gltf_check`]); as a last net, a panic
/// inside the `gltf` crate becomes an error naming the file.
pub fn load_gltf_with(
    path: &Path,
    skin: Option<usize>,
    animations: &AnimationChoice,
) -> Result<Parsed<GltfRig>, FileError> {
    let bytes = std::fs::read(path).map_err(|error| FileError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    match std::panic::catch_unwind(|| read_gltf(path, &bytes, skin, animations)) {
        Ok(result) => result.map_err(|message| other(path, message)),
        Err(_) => Err(other(
            path,
            "the glTF reader failed on this file (a bug: please report it)",
        )),
    }
}

/// [`load_gltf`] on the file's bytes; `path` locates relative buffer URIs.
fn read_gltf(
    path: &Path,
    bytes: &[u8],
    skin: Option<usize>,
    choice: &AnimationChoice,
) -> Result<Parsed<GltfRig>, String> {
    let checked = super::gltf_check::parse(bytes)?;
    let gltf = checked.gltf;
    let mut data = Data::new(read_buffers(path, &gltf)?);
    let mut warnings = Vec::new();
    let mut warn = |message: String| warnings.push(Warning::whole_file(message));
    for w in checked.warnings {
        warn(w);
    }
    let skins: Vec<gltf::Skin> = gltf.skins().collect();
    let (skin_index, gskin) = choose_skin(&skins, skin, &mut warn)?;
    let tree = NodeTree::new(&gltf);
    let joints = JointOrder::new(&tree, gskin, skin_index, &mut warn)?;
    let ibm = inverse_binds(&mut data, gskin, skin_index, joints.nodes.len())?;
    let place = Placement::new(shown_transform(&tree, &joints, &ibm)?, &mut warn);
    let skeleton = build_skeleton(&tree, &joints, &ibm, &place, skin_index, &mut warn)?;
    let mut bindings = vec![Mat4::IDENTITY; skeleton.len()];
    for k in 0..joints.nodes.len() {
        bindings[joints.new_index[k]] = place.rigid(ibm[k].inverse());
    }
    let mesh = read_meshes(&tree.nodes, &mut data, skin_index, &joints, &place)?;
    let weights = checked_weights(&mesh.rows, &mut warn)?;
    mesh.warn_skipped(skin_index, gltf.materials().len(), &mut warn);
    let rig_nodes = super::gltf_anim::RigNodes {
        nodes: &tree.nodes,
        parent: &tree.parent,
        joint_nodes: &joints.nodes,
        joint_parent: &joints.parent,
        order: &joints.order,
        synthetic: joints.synthetic,
        ibm: &ibm,
        placed: place.rotate_move * Mat4::from_scale(Vec3::splat(place.scale)),
        bindings: &bindings,
        offsets: &skeleton.joints().iter().map(|j| j.offset).collect::<Vec<_>>(),
    };
    let (summaries, animations) =
        super::gltf_anim::clips(&gltf, &mut data, &rig_nodes, &checked.channel_origin, choice, &mut warn);
    let normals = mesh.all_normals.then_some(mesh.normals);
    let mut skin = Skin::new(mesh.positions, normals, mesh.triangles).map_err(|e| e.to_string())?;
    skin.set_weights(Some(weights)).map_err(|e| e.to_string())?;
    skin.set_bindings(Some(bindings)).map_err(|e| e.to_string())?;
    Ok(Parsed {
        value: GltfRig {
            skeleton,
            skin,
            skin_index,
            skins: skins.len(),
            summaries,
            animations,
            morphs: Vec::new(),
        },
        warnings,
    })
}

/// The skin to import (`skin`, or the first), warning when the file has others.
fn choose_skin<'a, 's>(
    skins: &'s [gltf::Skin<'a>],
    skin: Option<usize>,
    warn: &mut impl FnMut(String),
) -> Result<(usize, &'s gltf::Skin<'a>), String> {
    if skins.is_empty() {
        return Err("has no skin (no skinned mesh to import)".to_string());
    }
    let skin_index = skin.unwrap_or(0);
    let Some(gskin) = skins.get(skin_index) else {
        return Err(format!("has {} skins; there is no skin {skin_index}", skins.len()));
    };
    if skins.len() > 1 {
        warn(format!(
            "the file has {} skins; skin {skin_index} (`{}`) was imported",
            skins.len(),
            gskin.name().unwrap_or("")
        ));
    }
    Ok((skin_index, gskin))
}

/// The node tree: the nodes, each one's parent, and their rest world matrices.
struct NodeTree<'a> {
    nodes: Vec<gltf::Node<'a>>,
    parent: Vec<Option<usize>>,
    world: Vec<Option<Mat4>>,
}

impl<'a> NodeTree<'a> {
    fn new(gltf: &'a gltf::Gltf) -> Self {
        let nodes: Vec<gltf::Node> = gltf.nodes().collect();
        let mut parent = vec![None; nodes.len()];
        for n in &nodes {
            for c in n.children() {
                parent[c.index()] = Some(n.index());
            }
        }
        let world = node_worlds(&nodes, &parent, |i| rest_local(&nodes[i]));
        Self { nodes, parent, world }
    }

    /// Node `n`'s rest world matrix.
    fn world_of(&self, n: usize) -> Result<Mat4, String> {
        self.world[n].ok_or_else(|| format!("node {n} is in a cycle of the node tree"))
    }

    /// Each node's place in a depth-first walk of the tree (the order of each parent's `children`).
    fn tree_order(&self) -> Vec<usize> {
        let n = self.nodes.len();
        let mut order = vec![usize::MAX; n];
        let mut stack: Vec<usize> = (0..n).filter(|&i| self.parent[i].is_none()).rev().collect();
        let mut next = 0;
        while let Some(i) = stack.pop() {
            if order[i] != usize::MAX {
                continue;
            }
            order[i] = next;
            next += 1;
            let kids: Vec<usize> = self.nodes[i].children().map(|c| c.index()).collect();
            stack.extend(kids.into_iter().rev());
        }
        order
    }
}

/// The skin's joints and the model's depth-first order of them. `k` is a joint's index in the glTF skin.
struct JointOrder {
    /// Joint `k`'s node.
    nodes: Vec<usize>,
    /// Joint `k`'s parent joint: its nearest ancestor node that is a joint.
    parent: Vec<Option<usize>>,
    /// Root joints in node-tree order.
    roots: Vec<usize>,
    /// The glTF joints in the model's order.
    order: Vec<usize>,
    /// Joint `k`'s index in the model (past the synthetic root, if any).
    new_index: Vec<usize>,
    /// Several roots hang under a new root joint `gltf_root`.
    synthetic: bool,
}

impl JointOrder {
    fn new(
        tree: &NodeTree<'_>,
        gskin: &gltf::Skin<'_>,
        skin_index: usize,
        warn: &mut impl FnMut(String),
    ) -> Result<Self, String> {
        let nodes: Vec<usize> = gskin.joints().map(|n| n.index()).collect();
        if nodes.is_empty() {
            return Err(format!("skin {skin_index} has no joints"));
        }
        if nodes.len() > u16::MAX as usize {
            return Err(format!(
                "skin {skin_index} has {} joints; at most 65535 are supported",
                nodes.len()
            ));
        }
        super::gltf_check::joint_cycle(&tree.parent, &nodes, skin_index)?;
        let mut joint_of_node = vec![None; tree.nodes.len()];
        for (k, &n) in nodes.iter().enumerate() {
            joint_of_node[n] = Some(k);
        }
        let joint_parent = |k: usize| -> Option<usize> {
            let mut at = tree.parent[nodes[k]];
            let mut steps = 0;
            while let Some(p) = at {
                if joint_of_node[p].is_some() {
                    return joint_of_node[p];
                }
                at = tree.parent[p];
                steps += 1;
                if steps > tree.nodes.len() {
                    break;
                }
            }
            None
        };
        let parent: Vec<Option<usize>> = (0..nodes.len()).map(joint_parent).collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (k, p) in parent.iter().enumerate() {
            if let Some(p) = p {
                children[*p].push(k);
            }
        }
        // Children and roots in node-tree order (depth-first through non-joint nodes).
        let tree_order = tree.tree_order();
        for c in &mut children {
            c.sort_by_key(|&k| tree_order[nodes[k]]);
        }
        let mut roots: Vec<usize> = (0..nodes.len()).filter(|&k| parent[k].is_none()).collect();
        roots.sort_by_key(|&k| tree_order[nodes[k]]);
        let synthetic = roots.len() > 1;
        if synthetic {
            warn(format!(
                "skin {skin_index} has {} root joints; they hang under a new root joint `gltf_root` at the origin",
                roots.len()
            ));
        }
        let mut order: Vec<usize> = Vec::with_capacity(nodes.len());
        let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
        while let Some(k) = stack.pop() {
            order.push(k);
            stack.extend(children[k].iter().rev());
        }
        if order.len() != nodes.len() {
            // Only a cycle leaves joints unreached, and those were refused above; a joint left out would take
            // its vertices' weights to the root without a word.
            return Err(format!(
                "skin {skin_index}: {} of its {} joints are not reached from a root joint",
                nodes.len() - order.len(),
                nodes.len()
            ));
        }
        let mut new_index = vec![0usize; nodes.len()];
        for (i, &k) in order.iter().enumerate() {
            new_index[k] = i + usize::from(synthetic);
        }
        Ok(Self {
            nodes,
            parent,
            roots,
            order,
            new_index,
            synthetic,
        })
    }
}

/// The skin's inverse bind matrices (identity where the file has none), checked: one per joint, invertible.
fn inverse_binds(
    data: &mut Data,
    gskin: &gltf::Skin<'_>,
    skin_index: usize,
    joints: usize,
) -> Result<Vec<Mat4>, String> {
    let ibm: Vec<Mat4> = match gskin.inverse_bind_matrices() {
        Some(acc) => data
            .mat4s(&acc, &format!("skin {skin_index}'s inverse bind matrices"))?
            .iter()
            .map(Mat4::from_cols_array)
            .collect(),
        None => vec![Mat4::IDENTITY; joints],
    };
    if ibm.len() < joints {
        return Err(format!(
            "skin {skin_index} has {} inverse bind matrices for {joints} joints",
            ibm.len()
        ));
    }
    if let Some(k) = (0..joints).find(|&k| !(ibm[k].is_finite() && ibm[k].inverse().is_finite())) {
        return Err(format!(
            "skin {skin_index}: joint {k}'s inverse bind matrix is not invertible"
        ));
    }
    Ok(ibm)
}

/// Where a viewer shows the mesh. At rest a vertex bound to the (first) root joint is drawn at the joint's world
/// matrix times its inverse bind matrix times the stored position: `A L ibm v`, `A` the nodes above the root and
/// `L` its rest transform. Where the inverse bind matrices are taken below `A` (CesiumMan's Z-up armature), that
/// is `A v`; where they include it (the Fox's scaled armature), `v`. Which of the two is nearer tells them apart,
/// whatever the rest pose (a root posed away from its bind pose moves the drawn mesh, but that is a pose, not
/// where the model stands).
fn shown_transform(tree: &NodeTree<'_>, joints: &JointOrder, ibm: &[Mat4]) -> Result<Mat4, String> {
    let Some(&k) = joints.roots.first() else {
        return Ok(Mat4::IDENTITY);
    };
    let Some(p) = tree.parent[joints.nodes[k]] else {
        return Ok(Mat4::IDENTITY);
    };
    let above = tree.world_of(p)?;
    let drawn = tree.world_of(joints.nodes[k])? * ibm[k];
    let off = |m: Mat4| (drawn - m).to_cols_array().iter().map(|x| x * x).sum::<f32>();
    Ok(if off(above) < off(Mat4::IDENTITY) {
        above
    } else {
        Mat4::IDENTITY
    })
}

/// The skeleton in the model's order: a root placed at its bind transform, which puts the skeleton in the mesh's
/// space (the nodes above the root, an armature's axis change say, are not part of it); the others at their rest
/// transforms relative to their parent joint, offsets in the scene's units, rotations as pose angles.
fn build_skeleton(
    tree: &NodeTree<'_>,
    joints: &JointOrder,
    ibm: &[Mat4],
    place: &Placement,
    skin_index: usize,
    warn: &mut impl FnMut(String),
) -> Result<Skeleton, String> {
    let mut out = Vec::with_capacity(joints.order.len() + usize::from(joints.synthetic));
    if joints.synthetic {
        out.push(Joint::new("gltf_root", None, Vec3::ZERO));
    }
    let mut scaled = Vec::new();
    for &k in &joints.order {
        let node = &tree.nodes[joints.nodes[k]];
        let rel = match joints.parent[k] {
            Some(p) => tree.world_of(joints.nodes[p])?.inverse() * tree.world_of(joints.nodes[k])?,
            None => place.rigid(ibm[k].inverse()),
        };
        let (scale, rotation, translation) = rel.to_scale_rotation_translation();
        // The offset in the scene's units: scaled as the parent is in the scene.
        let translation = match joints.parent[k] {
            Some(p) => translation * tree.world_of(joints.nodes[p])?.determinant().abs().cbrt(),
            None => translation,
        };
        if (scale - Vec3::ONE).abs().max_element() > SCALE_TOLERANCE {
            scaled.push(node.name().unwrap_or("").to_string());
        }
        let name = node
            .name()
            .map_or_else(|| format!("joint{}", node.index()), str::to_string);
        let parent = match joints.parent[k] {
            Some(p) => Some(joints.new_index[p]),
            None if joints.synthetic => Some(0),
            None => None,
        };
        let mut j = Joint::new(name, parent, translation);
        if rotation.normalize() != Quat::IDENTITY {
            j.pose = Some(crate::model::skeleton::dofs_from_rotation(rotation, Vec3::ZERO));
        }
        out.push(j);
    }
    if !scaled.is_empty() {
        warn(format!(
            "{} joints have a rest scale other than 1, which the model does not keep: {}",
            scaled.len(),
            scaled.join(", ")
        ));
    }
    super::sanitize_joint_names(&mut out, warn);
    Skeleton::new(out).map_err(|e| format!("skin {skin_index}: {e}"))
}

/// The triangle primitives of every node that uses the skin, merged, and what was left out.
#[derive(Default)]
struct MeshParts {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    /// Whether every primitive had normals (else they are computed).
    all_normals: bool,
    triangles: Vec<[u32; 3]>,
    /// Artist weights per vertex, joints in the model's order.
    rows: Vec<Row>,
    morphs: usize,
    other_meshes: usize,
    skipped_modes: usize,
}

impl MeshParts {
    /// Warn about what was not imported.
    fn warn_skipped(&self, skin_index: usize, materials: usize, warn: &mut impl FnMut(String)) {
        if self.morphs > 0 {
            warn(format!("{} morph targets were not imported", self.morphs));
        }
        if self.other_meshes > 0 {
            warn(format!(
                "{} mesh nodes without skin {skin_index} were not imported",
                self.other_meshes
            ));
        }
        if materials > 0 {
            warn(format!("{materials} materials (and their textures) were not imported"));
        }
        if self.skipped_modes > 0 {
            warn(format!(
                "{} primitives that are not triangle lists were not imported",
                self.skipped_modes
            ));
        }
    }
}

/// Read the meshes of the nodes that use skin `skin_index`, placed, with their weights mapped to the model's
/// joint order.
fn read_meshes(
    nodes: &[gltf::Node<'_>],
    data: &mut Data,
    skin_index: usize,
    joints: &JointOrder,
    place: &Placement,
) -> Result<MeshParts, String> {
    let mut mesh = MeshParts {
        all_normals: true,
        ..MeshParts::default()
    };
    for node in nodes {
        let Some(m) = node.mesh() else { continue };
        if node.skin().map(|s| s.index()) != Some(skin_index) {
            mesh.other_meshes += 1;
            continue;
        }
        for prim in m.primitives() {
            if prim.mode() != gltf::mesh::Mode::Triangles {
                mesh.skipped_modes += 1;
                continue;
            }
            mesh.morphs += prim.morph_targets().len();
            read_primitive(
                &mut mesh,
                &prim,
                (m.index(), &super::printable(m.name().unwrap_or(""))),
                data,
                joints,
                place,
            )?;
        }
    }
    if mesh.positions.is_empty() {
        return Err(format!("no mesh uses skin {skin_index}"));
    }
    Ok(mesh)
}

/// Append one triangle primitive of mesh `mesh_name` to `mesh`.
fn read_primitive(
    mesh: &mut MeshParts,
    prim: &gltf::Primitive<'_>,
    (mesh_index, mesh_name): (usize, &str),
    data: &mut Data,
    joints: &JointOrder,
    place: &Placement,
) -> Result<(), String> {
    let what = |attribute: &str| format!("mesh `{mesh_name}`'s {attribute}");
    let Some(p) = prim.get(&Semantic::Positions) else {
        return Err(format!("mesh `{mesh_name}` has a primitive without POSITION"));
    };
    let base = mesh.positions.len();
    let positions = data.vec3s(&p, &what("POSITION"))?;
    finite(&positions, (mesh_index, prim.index()), "POSITION", p.index())?;
    mesh.positions
        .extend(positions.into_iter().map(|v| place.point(Vec3::from_array(v))));
    let count = mesh.positions.len() - base;
    let same_count = |n: usize, attribute: &str| {
        if n == count {
            Ok(())
        } else {
            Err(format!("{} has {n} elements for {count} vertices", what(attribute)))
        }
    };
    match prim.get(&Semantic::Normals) {
        Some(n) if mesh.all_normals => {
            let accessor = n.index();
            let n = data.vec3s(&n, &what("NORMAL"))?;
            same_count(n.len(), "NORMAL")?;
            finite(&n, (mesh_index, prim.index()), "NORMAL", accessor)?;
            mesh.normals
                .extend(n.into_iter().map(|v| place.direction(Vec3::from_array(v))));
        }
        _ => mesh.all_normals = false,
    }
    let first = u32::try_from(base).map_err(|_| "more than 2^32 vertices".to_string())?;
    let idx: Vec<u32> = match prim.indices() {
        Some(i) => data.indices(&i, &what("indices"))?,
        None => (0..count as u32).collect(),
    };
    for t in idx.chunks_exact(3) {
        if t.iter().any(|&i| i as usize >= count) {
            return Err(format!("mesh `{mesh_name}`: a vertex index past its {count} vertices"));
        }
        mesh.triangles.push([t[0] + first, t[1] + first, t[2] + first]);
    }
    let mut rows: Vec<Row> = vec![Vec::new(); count];
    for set in 0.. {
        let (Some(ja), Some(wa)) = (prim.get(&Semantic::Joints(set)), prim.get(&Semantic::Weights(set))) else {
            break;
        };
        let js = data.joints(&ja, &what(&format!("JOINTS_{set}")))?;
        let ws = data.weights(&wa, &what(&format!("WEIGHTS_{set}")))?;
        same_count(js.len(), &format!("JOINTS_{set}"))?;
        same_count(ws.len(), &format!("WEIGHTS_{set}"))?;
        for (v, (j, w)) in js.iter().zip(&ws).enumerate() {
            for (&jj, &ww) in j.iter().zip(w) {
                if ww == 0.0 {
                    continue;
                }
                let Some(&to) = joints.new_index.get(jj as usize) else {
                    return Err(format!(
                        "mesh `{mesh_name}`: joint index {jj} past the skin's {} joints",
                        joints.nodes.len()
                    ));
                };
                if !(ww.is_finite() && ww > 0.0) {
                    return Err(format!("mesh `{mesh_name}`: vertex {v} has weight {ww}"));
                }
                rows[v].push((to as u16, ww));
            }
        }
    }
    mesh.rows.extend(rows);
    Ok(())
}

/// Refuse a vertex attribute with a value that is not finite (an infinite bound, a NaN that no later step
/// could place), naming it by its glTF path.
fn finite(values: &[[f32; 3]], at: (usize, usize), attribute: &str, accessor: usize) -> Result<(), String> {
    match values.iter().position(|v| !v.iter().all(|x| x.is_finite())) {
        None => Ok(()),
        Some(i) => Err(format!(
            "meshes[{}].primitives[{}].attributes.{attribute} (accessor {accessor}): expected finite numbers, \
             found ({} {} {}) at vertex {i}",
            at.0, at.1, values[i][0], values[i][1], values[i][2]
        )),
    }
}

/// The artist weights as checked [`Weights`]: rows that do not sum to 1 are normalised and counted in a warning,
/// as are vertices with no weight.
pub(super) fn checked_weights(rows: &[Row], warn: &mut impl FnMut(String)) -> Result<Weights, String> {
    let (weights, norm) = Weights::normalized(rows.iter().map(Vec::as_slice)).map_err(|e| format!("weights: {e}"))?;
    if !norm.renormalized.is_empty() {
        let worst = norm
            .renormalized
            .iter()
            .map(|&(_, s)| s)
            .fold(1.0f32, |a, s| if (s - 1.0).abs() > (a - 1.0).abs() { s } else { a });
        warn(format!(
            "{} vertices' weights did not sum to 1 (the farthest: {worst}); normalised",
            norm.renormalized.len()
        ));
    }
    let unweighted = weights.unweighted().count();
    if unweighted > 0 {
        warn(format!("{unweighted} vertices have no joint weight"));
    }
    Ok(weights)
}
