//! FBX import of a skinned model (binary 6100 to 7700 and ASCII), through the `ufbx` crate (bindings to ufbx,
//! the C reader engines use, fuzzed and tested against files from every exporter). It gives the same in-memory
//! rig as the glTF import ([`GltfRig`]), so every command and the editor take either.
//!
//! - **Space.** ufbx converts the scene to Y up, right-handed, in metres (`target_axes`, `target_unit_meters`),
//!   folding the conversion into the geometry and the transforms (`ModifyGeometry`), and geometric transforms
//!   into the vertices: a character lands where Blender's FBX importer puts it, seen as our glTF is (Blender's
//!   glTF exporter turns its Z up into Y up the same way).
//! - **Skeleton.** The bones every skin cluster of every skinned mesh binds to, the bones below them (Blender's
//!   leaf bones), the rest of their armature (every bone below the plain node that holds them, as Blender's
//!   importer builds it), and the plain nodes between them up to their lowest common ancestor, named as in the
//!   file and ordered depth-first in the file's node tree (a parent before its children). Several top joints under the
//!   scene root hang under a synthetic root `fbx_root` at the origin. The bind pose is each bone's cluster link
//!   matrix (`TransformLink`); a joint no cluster binds takes the file's bind pose, else its rest transform
//!   relative to its parent. Each joint's offset and rotation (as `pose` angles) come from its parent's bind
//!   matrix and its own, scale dropped (warned), as the glTF import keeps rest rotations.
//! - **Meshes**: those that share the first skinned mesh's skeleton (its armature), merged; meshes bound to
//!   another skeleton are left out with a warning, as the glTF import takes one skin.
//! - **Bindings** are those bind matrices without scale. **Vertices** are placed at bind time (each mesh through
//!   its first cluster: `bind_to_world * geometry_to_bone`), split where a control point has several normals
//!   (as a glTF exporter splits them), polygons triangulated by ufbx.
//! - **Weights**: every cluster of a mesh's skin deformer, mapped to the joints; rows that do not sum to 1 are
//!   normalised and counted in a warning, as for glTF.
//! - **Blend shapes** become morph targets ([`NamedMorph`]), one per blend channel at its full shape (in-between
//!   shapes are not kept), named by the channel; channels of one name on several meshes make one target.
//! - **Animations**: every animation stack is a clip of its name ([`super::fbx_anim`]).
//! - Not imported, counted in one warning: meshes without a skin, in-between blend shapes, materials,
//!   constraints, lights, cameras, further skin deformers of one mesh. ufbx's own warnings are passed on.
//!
//! A stranger's file is bounded before anything is built: ufbx's allocators have memory limits, nodes a depth
//! limit, external files (textures, linked FBX) are never opened (the file is read from memory and
//! `load_external_files` is off), and the joint, vertex and corner counts are checked here. A panic inside the
//! bindings becomes an error naming the file.

use std::collections::HashMap;
use std::path::Path;

use glam::{Mat3, Mat4, Quat, Vec3, Vec4};

use super::gltf::{AnimationChoice, GltfRig, NamedMorph};
use super::{FileError, Parsed, Warning};
use crate::model::{Joint, Row, Skeleton, Skin};

/// The most joints a rig holds (weights name joints in 16 bits).
pub const MAX_JOINTS: usize = u16::MAX as usize;
/// The most vertices (after splitting) and triangle corners one import builds.
pub const MAX_VERTICES: usize = 1 << 24;
/// The most memory ufbx may take for its result, and again for its working memory, beyond 64 bytes a byte of
/// the file.
pub const MEMORY_LIMIT: usize = 512 << 20;
/// The largest file read (the whole file is held in memory for ufbx).
pub const MAX_FILE_BYTES: u64 = 2 << 30;
/// The deepest node tree read.
pub const MAX_DEPTH: u32 = 512;
/// The most corners of one polygon triangulated (ufbx's ear clipping takes time quadratic in them); a larger
/// polygon is left out and counted in a warning.
pub const MAX_FACE_CORNERS: usize = 1024;

/// Read a skinned FBX model with all its animation stacks sampled.
pub fn load_fbx(path: &Path) -> Result<Parsed<GltfRig>, FileError> {
    load_fbx_with(path, &AnimationChoice::All)
}

/// Read a skinned FBX model, sampling only the animation stacks `choice` asks for (every stack is summarised).
pub fn load_fbx_with(path: &Path, choice: &AnimationChoice) -> Result<Parsed<GltfRig>, FileError> {
    let io = |error| FileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let other = |message: String| FileError::Other {
        path: path.to_path_buf(),
        message,
    };
    let size = std::fs::metadata(path).map_err(io)?.len();
    if size > MAX_FILE_BYTES {
        return Err(other(format!(
            "expected an FBX file of at most {} GiB, found {size} bytes",
            MAX_FILE_BYTES >> 30
        )));
    }
    let bytes = std::fs::read(path).map_err(io)?;
    match std::panic::catch_unwind(|| read_fbx(&bytes, choice)) {
        Ok(result) => result.map_err(other),
        Err(_) => Err(other(
            "the FBX reader failed on this file (a bug: please report it)".to_string(),
        )),
    }
}

/// The load options: limits, no external files, Y up in metres.
fn options(len: usize) -> ufbx::LoadOpts<'static> {
    let limit = MEMORY_LIMIT.saturating_add(len.saturating_mul(64));
    let mut opts = ufbx::LoadOpts {
        load_external_files: false,
        ignore_embedded: true,
        generate_missing_normals: true,
        node_depth_limit: MAX_DEPTH,
        target_axes: ufbx::CoordinateAxes::right_handed_y_up(),
        target_unit_meters: 1.0,
        space_conversion: ufbx::SpaceConversion::ModifyGeometry,
        geometry_transform_handling: ufbx::GeometryTransformHandling::ModifyGeometry,
        // FBX only: ufbx also reads OBJ, which must not pass for an FBX file here.
        file_format: ufbx::FileFormat::Fbx,
        no_format_from_content: true,
        ..Default::default()
    };
    opts.temp_allocator.memory_limit = limit;
    opts.result_allocator.memory_limit = limit;
    opts.thread_opts.memory_limit = limit;
    opts
}

/// What a failed load says, in words (ufbx's description and the detail it gives).
fn load_error(e: &ufbx::Error) -> String {
    let what = match e.type_ {
        ufbx::ErrorType::UnrecognizedFileFormat | ufbx::ErrorType::EmptyFile => {
            return "expected an FBX file (binary or ASCII), found something else".to_string();
        }
        ufbx::ErrorType::MemoryLimit | ufbx::ErrorType::AllocationLimit | ufbx::ErrorType::OutOfMemory => {
            format!(
                "reading it would take more than the {} MiB an import may",
                MEMORY_LIMIT >> 20
            )
        }
        ufbx::ErrorType::NodeDepthLimit => format!("its node tree is deeper than {MAX_DEPTH}"),
        _ => super::printable(&e.description).into_owned(),
    };
    format!("not a readable FBX file: {what}")
}

/// A ufbx matrix (3 by 4, columns) as a glam one.
pub(super) fn mat4(m: &ufbx::Matrix) -> Mat4 {
    Mat4::from_cols(
        Vec4::new(m.m00 as f32, m.m10 as f32, m.m20 as f32, 0.0),
        Vec4::new(m.m01 as f32, m.m11 as f32, m.m21 as f32, 0.0),
        Vec4::new(m.m02 as f32, m.m12 as f32, m.m22 as f32, 0.0),
        Vec4::new(m.m03 as f32, m.m13 as f32, m.m23 as f32, 1.0),
    )
}

pub(super) fn vec3(v: ufbx::Vec3) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

/// `m` without scale: its rotation and translation (what a binding is).
pub(super) fn rigid(m: Mat4) -> Mat4 {
    let (_, r, t) = m.to_scale_rotation_translation();
    Mat4::from_rotation_translation(r.normalize(), t)
}

/// The file's joints: nodes (by ufbx typed id) in the model's order, each one's parent joint.
pub(super) struct FbxJoints {
    /// Node typed id of each model joint (after `fbx_root`, if any).
    pub nodes: Vec<usize>,
    /// Model joint of each node, by typed id.
    pub joint_of_node: Vec<Option<usize>>,
    /// Whether joint 0 is a synthetic root.
    pub synthetic: bool,
    /// Bind world matrix of each model joint, without scale.
    pub bind: Vec<Mat4>,
}

/// [`load_fbx_with`] on the file's bytes.
fn read_fbx(bytes: &[u8], choice: &AnimationChoice) -> Result<Parsed<GltfRig>, String> {
    let scene = ufbx::load_memory(bytes, options(bytes.len())).map_err(|e| load_error(&e))?;
    let mut warnings = Vec::new();
    let mut warn = |message: String| warnings.push(Warning::whole_file(message));
    for w in &scene.metadata.warnings {
        let count = if w.count > 1 {
            format!(" ({} times)", w.count)
        } else {
            String::new()
        };
        warn(format!("ufbx: {}{count}", super::printable(&w.description)));
    }
    let skinned: Vec<&ufbx::Node> = scene
        .nodes
        .iter()
        .filter(|n| n.mesh.as_ref().is_some_and(|m| !m.skin_deformers.is_empty()))
        .map(|n| &**n)
        .collect();
    if skinned.is_empty() {
        return Err("has no skinned mesh (no mesh with a skin deformer) to import".to_string());
    }
    // The meshes that share the first one's skeleton (armature), as the glTF import takes the meshes of one skin.
    let first = armature_of(&scene, skinned[0]);
    let (skinned, others): (Vec<&ufbx::Node>, Vec<&ufbx::Node>) =
        skinned.into_iter().partition(|n| armature_of(&scene, n) == first);
    if !others.is_empty() {
        warn(format!(
            "{} skinned meshes bound to another skeleton were not imported (the first: `{}`)",
            others.len(),
            super::printable(&others[0].element.name)
        ));
    }
    let joints = find_joints(&scene, &skinned, &mut warn)?;
    let skeleton = build_skeleton(&scene, &joints, &mut warn)?;
    let mesh = read_meshes(&skinned, &joints)?;
    let weights = super::gltf::checked_weights(&mesh.rows, &mut warn)?;
    warn_dropped(&scene, &skinned, &mesh, &mut warn);
    let (summaries, animations) = super::fbx_anim::clips(&scene, &joints, &skeleton, choice, &mut warn);
    let mut skin = Skin::new(mesh.positions, Some(mesh.normals), mesh.triangles).map_err(|e| e.to_string())?;
    skin.set_weights(Some(weights)).map_err(|e| e.to_string())?;
    skin.set_bindings(Some(joints.bind.clone()))
        .map_err(|e| e.to_string())?;
    Ok(Parsed {
        value: GltfRig {
            skeleton,
            skin,
            skin_index: 0,
            skins: scene.skin_deformers.len(),
            summaries,
            animations,
            morphs: mesh.morphs,
        },
        warnings,
    })
}

/// The joints: the clusters' bones, the bones below them, and the nodes between them up to their lowest common
/// ancestor; depth-first in the node tree.
fn find_joints(
    scene: &ufbx::Scene,
    skinned: &[&ufbx::Node],
    warn: &mut impl FnMut(String),
) -> Result<FbxJoints, String> {
    let n = scene.nodes.len();
    let parent: Vec<Option<usize>> = scene
        .nodes
        .iter()
        .map(|node| {
            node.parent
                .as_ref()
                .map(|p| p.element.typed_id as usize)
                .filter(|&p| p < n)
        })
        .collect();
    let mut bound = vec![false; n];
    // Each bone's link matrix from the first cluster that binds it.
    let mut link: Vec<Option<Mat4>> = vec![None; n];
    for node in skinned {
        for skin in node.mesh.iter().flat_map(|m| m.skin_deformers.iter().take(1)) {
            for cluster in &skin.clusters {
                let Some(bone) = cluster.bone_node.as_ref() else {
                    continue;
                };
                let b = bone.element.typed_id as usize;
                if b < n {
                    bound[b] = true;
                    link[b].get_or_insert(mat4(&cluster.bind_to_world));
                }
            }
        }
    }
    // The bones below a bound bone (Blender's leaf bones carry no weights).
    let mut member = bound.clone();
    add_bones_below(scene, (0..n).filter(|&i| bound[i]).collect(), &mut member);
    if !member.iter().any(|&m| m) {
        return Err("its skins bind no bone".to_string());
    }
    // The rest of the armature, as Blender's importer makes it: every bone below the plain node that holds the
    // bound ones (IK targets and poles no vertex follows), or below their topmost bone.
    if let Some(top) = common_ancestor(&parent, &member) {
        let mut g = top;
        let mut steps = 0;
        while let Some(p) = parent[g].filter(|&p| is_bone(&scene.nodes[p]) && steps < n) {
            g = p;
            steps += 1;
        }
        let holder = if is_bone(&scene.nodes[g]) { parent[g] } else { Some(g) };
        let start = match holder.filter(|&h| !scene.nodes[h].is_root) {
            Some(h) => bone_children(scene, h),
            None if is_bone(&scene.nodes[g]) => vec![g],
            // Bound bones under the scene root itself: no armature to complete.
            None => Vec::new(),
        };
        for &b in &start {
            member[b] = true;
        }
        add_bones_below(scene, start, &mut member);
    }
    let top = common_ancestor(&parent, &member);
    // The nodes between each member and the common ancestor.
    for i in 0..n {
        // Up from each member to the common ancestor, not beyond it.
        if !member[i] || Some(i) == top {
            continue;
        }
        let mut at = parent[i];
        let mut steps = 0;
        while let Some(p) = at {
            if Some(p) == top || member[p] || steps > n {
                break;
            }
            member[p] = true;
            at = parent[p];
            steps += 1;
        }
    }
    // The common ancestor is a joint unless it is the scene's root node.
    if let Some(t) = top.filter(|&t| !scene.nodes[t].is_root) {
        member[t] = true;
    }
    let count = member.iter().filter(|&&m| m).count();
    // One more may come: a synthetic root.
    if count >= MAX_JOINTS {
        return Err(format!("expected at most {MAX_JOINTS} joints, found {count}"));
    }
    // Depth-first from the scene root, children in file order.
    let mut order = Vec::with_capacity(count);
    let root = scene.root_node.element.typed_id as usize;
    let mut stack = vec![root];
    let mut seen = vec![false; n];
    while let Some(i) = stack.pop() {
        if i >= n || std::mem::replace(&mut seen[i], true) {
            continue;
        }
        if member[i] {
            order.push(i);
        }
        stack.extend(
            scene.nodes[i]
                .children
                .iter()
                .rev()
                .map(|c| c.element.typed_id as usize),
        );
    }
    let tops = order.iter().filter(|&&i| parent[i].is_none_or(|p| !member[p])).count();
    let synthetic = tops > 1;
    if synthetic {
        warn(format!(
            "the skeleton has {tops} top joints; they hang under a new root joint `fbx_root` at the origin"
        ));
    }
    let mut joint_of_node = vec![None; n];
    let mut nodes = Vec::with_capacity(order.len() + 1);
    for (k, &i) in order.iter().enumerate() {
        joint_of_node[i] = Some(k + usize::from(synthetic));
        nodes.push(i);
    }
    let bind = bind_matrices(scene, &order, &parent, &joint_of_node, &link, synthetic);
    Ok(FbxJoints {
        nodes,
        joint_of_node,
        synthetic,
        bind,
    })
}

/// The armature a skinned mesh node is bound to, by typed id: the plain node holding the topmost bone above its
/// first cluster's bone (that bone itself where the scene root holds it); `None` without a bound bone.
fn armature_of(scene: &ufbx::Scene, node: &ufbx::Node) -> Option<usize> {
    let skin = node.mesh.as_ref()?.skin_deformers.first()?;
    let mut at: &ufbx::Node = skin.clusters.iter().find_map(|c| c.bone_node.as_deref())?;
    for _ in 0..scene.nodes.len() {
        match at.parent.as_deref() {
            Some(p) if is_bone(p) => at = p,
            Some(p) if !p.is_root => return Some(p.element.typed_id as usize),
            _ => break,
        }
    }
    Some(at.element.typed_id as usize)
}

/// The children of node `i` that are bones, by typed id.
fn bone_children(scene: &ufbx::Scene, i: usize) -> Vec<usize> {
    let n = scene.nodes.len();
    scene.nodes[i]
        .children
        .iter()
        .map(|c| c.element.typed_id as usize)
        .filter(|&c| c < n && is_bone(&scene.nodes[c]))
        .collect()
}

/// Mark as members the bones below `start`, through bones only.
fn add_bones_below(scene: &ufbx::Scene, mut stack: Vec<usize>, member: &mut [bool]) {
    while let Some(i) = stack.pop() {
        for c in bone_children(scene, i) {
            if !member[c] {
                member[c] = true;
                stack.push(c);
            }
        }
    }
}

/// Whether a node is a bone (an FBX `LimbNode`).
fn is_bone(node: &ufbx::Node) -> bool {
    node.attrib_type == ufbx::ElementType::Bone
}

/// The deepest node that is an ancestor of (or is) every member; `None` when they share none.
fn common_ancestor(parent: &[Option<usize>], member: &[bool]) -> Option<usize> {
    let path = |i: usize| {
        let mut p = vec![i];
        while let Some(&last) = p.last() {
            match parent[last] {
                Some(q) if p.len() <= parent.len() => p.push(q),
                _ => break,
            }
        }
        p.reverse();
        p
    };
    let mut common: Option<Vec<usize>> = None;
    for i in (0..member.len()).filter(|&i| member[i]) {
        let p = path(i);
        common = Some(match common {
            None => p,
            Some(c) => c.iter().zip(&p).take_while(|(a, b)| a == b).map(|(a, _)| *a).collect(),
        });
    }
    common.and_then(|c| c.last().copied())
}

/// Each joint's bind world matrix without scale: its cluster link matrix, else the file's bind pose, else its
/// rest transform relative to its parent joint's bind matrix (the top joint: its rest world matrix).
fn bind_matrices(
    scene: &ufbx::Scene,
    order: &[usize],
    parent: &[Option<usize>],
    joint_of_node: &[Option<usize>],
    link: &[Option<Mat4>],
    synthetic: bool,
) -> Vec<Mat4> {
    let mut bind = vec![Mat4::IDENTITY; order.len() + usize::from(synthetic)];
    for &i in order {
        let node = &scene.nodes[i];
        let posed = || {
            let pose = node.bind_pose.as_ref()?;
            pose.bone_poses
                .iter()
                .find(|b| b.bone_node.element.typed_id as usize == i)
                .map(|b| mat4(&b.bone_to_world))
        };
        let parent_joint = parent[i].and_then(|p| joint_of_node[p]);
        // Relative to the parent without either's scale, so that an armature scaled by 100 (Blender's
        // exporter with centimetres) keeps its leaf bones' lengths in the scene's units.
        let m = link[i]
            .or_else(posed)
            .unwrap_or_else(|| match (parent_joint, parent[i]) {
                (Some(pj), Some(p)) => {
                    let rel = rigid(mat4(&scene.nodes[p].node_to_world)).inverse() * rigid(mat4(&node.node_to_world));
                    bind[pj] * rel
                }
                _ => mat4(&node.node_to_world),
            });
        let m = rigid(m);
        if let Some(k) = joint_of_node[i] {
            bind[k] = if m.is_finite() { m } else { Mat4::IDENTITY };
        }
    }
    bind
}

/// The skeleton from the bind matrices: offsets and rotations relative to the parent joint.
fn build_skeleton(scene: &ufbx::Scene, joints: &FbxJoints, warn: &mut impl FnMut(String)) -> Result<Skeleton, String> {
    let mut out = Vec::with_capacity(joints.bind.len());
    if joints.synthetic {
        out.push(Joint::new("fbx_root", None, Vec3::ZERO));
    }
    let mut scaled = Vec::new();
    for (k, &i) in joints.nodes.iter().enumerate() {
        let m = k + usize::from(joints.synthetic);
        let node = &scene.nodes[i];
        let parent = node
            .parent
            .as_ref()
            .and_then(|p| joints.joint_of_node.get(p.element.typed_id as usize).copied().flatten())
            .or(joints.synthetic.then_some(0));
        let rel = match parent {
            Some(p) => joints.bind[p].inverse() * joints.bind[m],
            None => joints.bind[m],
        };
        let (_, rotation, translation) = rel.to_scale_rotation_translation();
        // A scale relative to the parent joint (the top joint's, an armature's units, is in the placement).
        let s = vec3(node.local_transform.scale);
        if parent.is_some_and(|p| p >= usize::from(joints.synthetic)) && (s - Vec3::ONE).abs().max_element() > 1e-3 {
            scaled.push(super::printable(&node.element.name).into_owned());
        }
        let mut j = Joint::new(node.element.name.to_string(), parent, translation);
        if rotation.normalize() != Quat::IDENTITY {
            j.pose = Some(crate::model::skeleton::dofs_from_rotation(rotation, Vec3::ZERO));
        }
        out.push(j);
    }
    if !scaled.is_empty() {
        let list: Vec<String> = scaled.iter().take(10).cloned().collect();
        warn(format!(
            "{} joints have a rest scale other than 1, which the model does not keep: {}{}",
            scaled.len(),
            list.join(", "),
            if scaled.len() > 10 { ", ..." } else { "" }
        ));
    }
    super::sanitize_joint_names(&mut out, warn);
    Skeleton::new(out).map_err(|e| e.to_string())
}

/// The skinned meshes merged: vertices at bind time, split by normal, triangles, weights by model joint.
#[derive(Default)]
struct MeshParts {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    rows: Vec<Row>,
    morphs: Vec<NamedMorph>,
    /// Skin deformers past the first of a mesh (not read), in-between blend shapes (not kept).
    extra_deformers: usize,
    in_betweens: usize,
    /// Polygons of more than [`MAX_FACE_CORNERS`] corners (not read).
    big_faces: usize,
}

fn read_meshes(skinned: &[&ufbx::Node], joints: &FbxJoints) -> Result<MeshParts, String> {
    let mut out = MeshParts::default();
    for node in skinned {
        let Some(mesh) = node.mesh.as_ref() else { continue };
        let Some(skin) = mesh.skin_deformers.first() else {
            continue;
        };
        out.extra_deformers += mesh.skin_deformers.len() - 1;
        read_mesh(&mut out, node, mesh, skin, joints)?;
    }
    if out.positions.is_empty() {
        return Err("its skinned meshes have no triangles".to_string());
    }
    Ok(out)
}

/// Append one skinned mesh to `out`.
fn read_mesh(
    out: &mut MeshParts,
    node: &ufbx::Node,
    mesh: &ufbx::Mesh,
    skin: &ufbx::SkinDeformer,
    joints: &FbxJoints,
) -> Result<(), String> {
    let name = super::printable(&node.element.name).into_owned();
    if out.triangles.len().saturating_add(mesh.num_triangles) * 3 > MAX_VERTICES {
        return Err(format!(
            "expected at most {MAX_VERTICES} triangle corners, found more at mesh `{name}`"
        ));
    }
    // Bind-time placement of the mesh's geometry, from its first cluster (else where the node stands).
    let to_world = skin
        .clusters
        .first()
        .map(|c| mat4(&c.bind_to_world) * mat4(&c.geometry_to_bone))
        .filter(|m| m.is_finite() && m.determinant().abs() > 1e-12)
        .unwrap_or_else(|| mat4(&node.geometry_to_world));
    let normal_matrix = Mat3::from_mat4(to_world).inverse().transpose();
    let cluster_joint: Vec<Option<u16>> = skin
        .clusters
        .iter()
        .map(|c| {
            let b = c.bone_node.as_ref()?.element.typed_id as usize;
            joints.joint_of_node.get(b).copied().flatten().map(|j| j as u16)
        })
        .collect();
    let positions = &mesh.vertex_position;
    let normals = &mesh.vertex_normal;
    let mut split: HashMap<(u32, u32), u32> = HashMap::new();
    let first = out.positions.len();
    let mut corners = vec![0u32; mesh.max_face_triangles.min(MAX_FACE_CORNERS - 2) * 3];
    for face in &mesh.faces {
        if face.num_indices < 3 {
            continue;
        }
        if face.num_indices as usize > MAX_FACE_CORNERS {
            out.big_faces += 1;
            continue;
        }
        let tris = ufbx::triangulate_face(&mut corners, mesh, *face) as usize;
        for t in corners.get(..tris * 3).unwrap_or(&[]).chunks_exact(3) {
            let mut tri = [0u32; 3];
            for (slot, &ix) in tri.iter_mut().zip(t) {
                let ix = ix as usize;
                let (Some(&cp), Some(&pi)) = (mesh.vertex_indices.get(ix), positions.indices.get(ix)) else {
                    return Err(format!(
                        "mesh `{name}`: a corner index past its {} corners",
                        mesh.num_indices
                    ));
                };
                let ni = if normals.exists {
                    normals.indices.get(ix).copied().unwrap_or(0)
                } else {
                    0
                };
                let next = out.positions.len();
                if next >= MAX_VERTICES {
                    return Err(format!(
                        "expected at most {MAX_VERTICES} vertices, found more at mesh `{name}`"
                    ));
                }
                *slot = *split.entry((cp, ni)).or_insert_with(|| {
                    let p = positions.values.get(pi as usize).map_or(Vec3::ZERO, |v| vec3(*v));
                    let nrm = normals.values.get(ni as usize).map_or(Vec3::Y, |v| vec3(*v));
                    out.positions.push(to_world.transform_point3(p));
                    out.normals.push((normal_matrix * nrm).normalize_or(Vec3::Y));
                    out.rows.push(row(skin, cp as usize, &cluster_joint));
                    next as u32
                });
            }
            out.triangles.push(tri);
        }
    }
    if let Some(v) = out.positions.iter().position(|p| !p.is_finite()) {
        return Err(format!("mesh `{name}`: vertex {v}'s position is not a finite number"));
    }
    // The vertices each control point became.
    let mut of_point: HashMap<u32, Vec<u32>> = HashMap::new();
    for (&(cp, _), &v) in &split {
        of_point.entry(cp).or_default().push(v);
    }
    debug_assert!(of_point.values().flatten().all(|&v| v as usize >= first));
    read_blend_shapes(out, mesh, &of_point, to_world);
    Ok(())
}

/// The blend channels of `mesh` as morph targets of its vertices (`of_point`: each control point's vertices),
/// the offsets placed by `to_world`'s linear part.
fn read_blend_shapes(out: &mut MeshParts, mesh: &ufbx::Mesh, of_point: &HashMap<u32, Vec<u32>>, to_world: Mat4) {
    for channel in mesh.blend_deformers.iter().flat_map(|d| d.channels.iter()) {
        out.in_betweens += channel.keyframes.len().saturating_sub(1);
        let Some(shape) = channel.target_shape.as_ref() else {
            continue;
        };
        let name = super::printable(&channel.element.name).into_owned();
        let at = match out.morphs.iter().position(|m| m.name == name) {
            Some(i) => i,
            None => {
                out.morphs.push(NamedMorph {
                    name,
                    morph: crate::model::Morph::default(),
                });
                out.morphs.len() - 1
            }
        };
        let target = &mut out.morphs[at].morph.positions;
        for (cp, offset) in shape.offset_vertices.iter().zip(shape.position_offsets.iter()) {
            let d = to_world.transform_vector3(vec3(*offset));
            if !d.is_finite() {
                continue;
            }
            for &v in of_point.get(cp).into_iter().flatten() {
                target.push((v, out.positions[v as usize] + d));
            }
        }
        target.sort_by_key(|&(v, _)| v);
    }
}

/// The weights of control point `cp`: its clusters' joints, zeros and unbound clusters left out.
fn row(skin: &ufbx::SkinDeformer, cp: usize, cluster_joint: &[Option<u16>]) -> Row {
    let Some(v) = skin.vertices.get(cp) else {
        return Vec::new();
    };
    let begin = v.weight_begin as usize;
    let end = begin.saturating_add(v.num_weights as usize).min(skin.weights.len());
    let mut row: Row = Vec::new();
    for w in skin.weights.get(begin..end).unwrap_or(&[]) {
        let Some(Some(j)) = cluster_joint.get(w.cluster_index as usize) else {
            continue;
        };
        let weight = w.weight as f32;
        if !(weight.is_finite() && weight > 0.0) {
            continue;
        }
        match row.iter_mut().find(|(k, _)| k == j) {
            Some((_, x)) => *x += weight,
            None => row.push((*j, weight)),
        }
    }
    row
}

/// One warning counting what the import leaves out.
fn warn_dropped(scene: &ufbx::Scene, skinned: &[&ufbx::Node], mesh: &MeshParts, warn: &mut impl FnMut(String)) {
    let unskinned = scene
        .nodes
        .iter()
        .filter(|n| n.mesh.is_some())
        .count()
        .saturating_sub(skinned.len());
    let counts = [
        (unskinned, "meshes without a skin"),
        (mesh.in_betweens, "in-between blend shapes"),
        (mesh.big_faces, "polygons of more than 1024 corners"),
        (scene.materials.len(), "materials"),
        (scene.textures.len(), "textures"),
        (scene.constraints.len(), "constraints"),
        (scene.lights.len(), "lights"),
        (scene.cameras.len(), "cameras"),
        (mesh.extra_deformers, "further skin deformers of a mesh"),
    ];
    let parts: Vec<String> = counts
        .iter()
        .filter(|(c, _)| *c > 0)
        .map(|(c, what)| format!("{c} {what}"))
        .collect();
    if !parts.is_empty() {
        warn(format!("not imported: {}", parts.join(", ")));
    }
}
