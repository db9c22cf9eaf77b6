//! FBX import against the glTF twins: the artists' own FBX files of seven quaternius characters
//! (`shared/data/fbx`) and the `.glb` files Blender made from the same `.blend` (`gltf/quaternius`), read by
//! two independent readers (ufbx; our glTF reader). Each must give the same rig: every deforming joint of the
//! glTF at the same place by name, every glTF vertex matched by an FBX vertex at its place with the same
//! weights, the same clips by name and length. Also: FBX -> .glb -> read back keeps every clip by name and the
//! joints' translation channels.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::Vec3;
use skinbind::formats::gltf::{AnimationChoice, GltfRig};
use skinbind::formats::{glb, load_rig};
use skinbind::model::Skin;

/// The seven twins: the FBX name, the glTF beside it, the animation stacks the FBX holds (SOURCES.md: what
/// Blender's own FBX importer sees) and the glTF's clips it lacks (the .blend gained a roll after the FBX was
/// published; the farm glTFs were exported without animations).
const TWINS: [(&str, &str, usize, &[&str]); 7] = [
    (
        "Smooth_Male_Casual",
        "gltf/quaternius/Smooth_Male_Casual.glb",
        11,
        &["Man_Roll"],
    ),
    (
        "Female_Casual",
        "gltf/quaternius/Female_Casual.glb",
        11,
        &["Female_Roll"],
    ),
    ("Wolf", "gltf/quaternius/Wolf.glb", 2, &[]),
    ("Trex", "gltf/quaternius/Trex.glb", 6, &[]),
    ("Frog", "gltf/quaternius/Frog.glb", 4, &[]),
    ("Horse", "gltf/quaternius/farm/Horse.glb", 6, &[]),
    ("Pig", "gltf/quaternius/farm/Pig.glb", 2, &[]),
];

fn read(path: &Path) -> GltfRig {
    load_rig(path, &AnimationChoice::All)
        .unwrap_or_else(|e| panic!("{e}"))
        .value
}

fn diagonal(skin: &Skin) -> f32 {
    let (lo, hi) = skinbind::model::skin::bounds(skin.positions()).unwrap();
    (hi - lo).length()
}

/// Each vertex's weights by joint name, its `limit` strongest scaled to sum 1 (what Blender's glTF exporter
/// keeps of the artist's weights: 4).
fn named_rows(rig: &GltfRig, limit: usize) -> Vec<HashMap<&str, f32>> {
    let w = rig.skin.weights().unwrap();
    (0..w.len())
        .map(|v| {
            let (js, ws) = w.row(v);
            let mut pairs: Vec<(u16, f32)> = js.iter().copied().zip(ws.iter().copied()).collect();
            pairs.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            pairs.truncate(limit);
            let sum: f32 = pairs.iter().map(|p| p.1).sum();
            let mut row = HashMap::new();
            for (j, x) in pairs {
                *row.entry(rig.skeleton.joints()[j as usize].name.as_str())
                    .or_insert(0.0) += x / sum;
            }
            row
        })
        .collect()
}

fn l1(a: &HashMap<&str, f32>, b: &HashMap<&str, f32>) -> f32 {
    let mut sum: f32 = a
        .iter()
        .map(|(k, x)| (x - b.get(k).copied().unwrap_or(0.0)).abs())
        .sum();
    sum += b
        .iter()
        .filter(|(k, _)| !a.contains_key(*k))
        .map(|(_, x)| x.abs())
        .sum::<f32>();
    sum
}

/// What one twin measures.
#[derive(Debug)]
struct Figures {
    /// Deforming glTF joints, and the farthest FBX joint of the same name from it, % of the diagonal.
    joints: usize,
    max_joint_percent: f32,
    /// glTF vertices, the farthest from its nearest FBX vertex (% of the diagonal), the mean weight L1.
    vertices: usize,
    max_vertex_percent: f32,
    mean_l1: f32,
    /// The same against the FBX's whole rows (more than 4 influences where the artist painted them).
    mean_l1_unlimited: f32,
    /// The glTF's clips, how many the FBX has by name with the same length, and the glTF's clips it lacks.
    clips: usize,
    clips_matched: usize,
    missing: Vec<String>,
}

fn measure(fbx: &GltfRig, gltf: &GltfRig, name: &str) -> Figures {
    let diag = diagonal(&gltf.skin);
    // Deforming joints: those the glTF's artist weights use.
    let gw = gltf.skin.weights().unwrap();
    let mut deforming = vec![false; gltf.skeleton.len()];
    for v in 0..gw.len() {
        for &j in gw.row(v).0 {
            deforming[j as usize] = true;
        }
    }
    let gb = gltf.skin.bindings().unwrap();
    let fb = fbx.skin.bindings().unwrap();
    let mut max_joint = 0.0f32;
    let mut joints = 0;
    for (j, joint) in gltf.skeleton.joints().iter().enumerate().filter(|(j, _)| deforming[*j]) {
        let found = fbx.skeleton.find(&joint.name);
        assert!(
            !found.is_empty(),
            "{name}: joint `{}` is missing from the FBX",
            joint.name
        );
        let d = found
            .iter()
            .map(|&k| (fb[k].w_axis - gb[j].w_axis).truncate().length())
            .fold(f32::INFINITY, f32::min);
        max_joint = max_joint.max(100.0 * d / diag);
        joints += 1;
    }
    // Vertices by place: FBX vertices hashed in cells of the matching tolerance.
    let tol = 1e-3 * diag;
    let cell = |p: Vec3| (p / tol).floor().as_ivec3();
    let mut grid: HashMap<glam::IVec3, Vec<usize>> = HashMap::new();
    for (i, &p) in fbx.skin.positions().iter().enumerate() {
        grid.entry(cell(p)).or_default().push(i);
    }
    let (frows, grows) = (named_rows(fbx, 4), named_rows(gltf, 4));
    let whole = named_rows(fbx, usize::MAX);
    let (mut max_vertex, mut l1_sum, mut whole_sum) = (0.0f32, 0.0f32, 0.0f32);
    for (v, &p) in gltf.skin.positions().iter().enumerate() {
        let c = cell(p);
        let mut best: Option<(f32, f32, f32)> = None;
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    for &i in grid.get(&(c + glam::IVec3::new(dx, dy, dz))).into_iter().flatten() {
                        let d = (fbx.skin.positions()[i] - p).length();
                        if d <= tol {
                            let (e, w) = (l1(&frows[i], &grows[v]), l1(&whole[i], &grows[v]));
                            // Of the FBX vertices at the place (a seam has several), the one that agrees best.
                            best = Some(best.map_or((d, e, w), |(bd, be, bw)| (bd.min(d), be.min(e), bw.min(w))));
                        }
                    }
                }
            }
        }
        let (d, e, w) = best.unwrap_or_else(|| panic!("{name}: glTF vertex {v} at {p} has no FBX vertex within {tol}"));
        max_vertex = max_vertex.max(100.0 * d / diag);
        l1_sum += e;
        whole_sum += w;
    }
    let clips_matched = gltf
        .summaries
        .iter()
        .filter(|g| {
            fbx.summaries
                .iter()
                .any(|f| f.name == g.name && (f.seconds - g.seconds).abs() <= 1.0 / 24.0 + 1e-3)
        })
        .count();
    let missing = gltf
        .summaries
        .iter()
        .filter(|g| !fbx.summaries.iter().any(|f| f.name == g.name))
        .map(|g| g.name.clone())
        .collect();
    Figures {
        missing,
        joints,
        max_joint_percent: max_joint,
        vertices: gltf.skin.vertex_count(),
        max_vertex_percent: max_vertex,
        mean_l1: l1_sum / gltf.skin.vertex_count() as f32,
        mean_l1_unlimited: whole_sum / gltf.skin.vertex_count() as f32,
        clips: gltf.summaries.len(),
        clips_matched,
    }
}

#[test]
fn fbx_twins_give_the_rig_of_their_gltf() {
    let Some(data) = common::data_dir() else { return };
    for (name, gltf_path, stacks, lacks) in TWINS {
        let fbx = read(&data.join("fbx").join(format!("{name}.fbx")));
        let gltf = read(&data.join(gltf_path));
        let f = measure(&fbx, &gltf, name);
        println!(
            "{name}: {} deforming joints, max {:.5}% of the diagonal; {} vertices, max {:.5}%, mean weight L1 {:.5} ({:.5} against \
             the FBX's whole rows); \
             clips {}/{} by name and length, not in the FBX: {:?} (FBX: {} joints, {} vertices, {} clips)",
            f.joints,
            f.max_joint_percent,
            f.vertices,
            f.max_vertex_percent,
            f.mean_l1,
            f.mean_l1_unlimited,
            f.clips_matched,
            f.clips,
            f.missing,
            fbx.skeleton.len(),
            fbx.skin.vertex_count(),
            fbx.animations.len()
        );
        assert!(f.max_joint_percent <= 0.1, "{name}: {f:?}");
        assert!(f.mean_l1 < 0.01, "{name}: {f:?}");
        assert_eq!(
            f.clips_matched + f.missing.len(),
            f.clips,
            "{name}: a clip of another length: {f:?}"
        );
        assert_eq!(f.missing, lacks, "{name}");
        assert_eq!(fbx.summaries.len(), stacks, "{name}");
        assert_eq!(fbx.animations.len(), stacks, "{name}: every stack samples");
    }
}

/// Joint world positions of `rig` under its clip `clip` at `t`.
fn pivots(rig: &GltfRig, clip: &skinbind::model::Clip, t: f32) -> Vec<Vec3> {
    let pose = skinbind::model::anim::pose_at(&rig.skeleton, clip, t);
    skinbind::model::world_from_joint(&rig.skeleton, &pose)
        .iter()
        .map(|m| m.w_axis.truncate())
        .collect()
}

#[test]
fn fbx_clips_survive_glb_export_with_their_names_and_joint_moves() {
    let Some(data) = common::data_dir() else { return };
    let fbx = read(&data.join("fbx/Smooth_Male_Casual.fbx"));
    assert!(fbx.animations.len() > 1, "{}", fbx.animations.len());
    let moving = fbx
        .animations
        .iter()
        .filter(|c| !c.clip.translations.is_empty())
        .count();
    assert!(moving > 0, "no clip moves a joint other than the root");
    let clips: Vec<(&str, &skinbind::model::Clip)> =
        fbx.animations.iter().map(|c| (c.name.as_str(), &c.clip)).collect();
    let bytes = glb::write_glb_clips(&fbx.skeleton, &fbx.skin, &clips, glb::GlbOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("back.glb");
    std::fs::write(&path, bytes).unwrap();
    let back = read(&path);
    let names = |r: &GltfRig| r.animations.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&back), names(&fbx));
    let diag = diagonal(&fbx.skin);
    for (a, b) in fbx.animations.iter().zip(&back.animations) {
        let moved = |c: &skinbind::model::Clip| c.translations.iter().map(|t| t.joint).collect::<Vec<_>>();
        assert_eq!(moved(&a.clip), moved(&b.clip), "{}", a.name);
        // At the export's own frames (30 a second over the range), where the .glb holds the clip's poses.
        for t in a.clip.sample_times(glb::ANIMATION_FPS, 2, None).unwrap() {
            for (p, q) in pivots(&fbx, &a.clip, t).iter().zip(pivots(&back, &b.clip, t)) {
                assert!((*p - q).length() < 1e-3 * diag, "{} at {t}: {p} vs {q}", a.name);
            }
        }
    }
}

/// The small FBX of `common::fbx_build` (centimetres, two bones, a stack that turns and moves `arm`), against
/// values worked out by hand: read in metres, Y up, and its clip skins the triangle where the file says.
#[test]
fn a_small_fbx_reads_in_metres_with_its_clip_moving_a_joint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.fbx");
    std::fs::write(&path, common::fbx_build::small_rig()).unwrap();
    let rig = read(&path);
    let names: Vec<&str> = rig.skeleton.joints().iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["root", "arm"]);
    assert!((rig.skeleton.joints()[1].offset - Vec3::X).length() < 1e-5);
    let mut positions = rig.skin.positions().to_vec();
    positions.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    for (p, want) in positions.iter().zip([Vec3::ZERO, Vec3::Y, Vec3::X]) {
        assert!((*p - want).length() < 1e-5, "{p} vs {want}");
    }
    // The blend shape: the corner at (0, 1, 0) lifted 0.5 m along z.
    assert_eq!(rig.morphs.len(), 1);
    assert_eq!(rig.morphs[0].name, "lift");
    let lifted = &rig.morphs[0].morph.positions;
    assert_eq!(lifted.len(), 1);
    assert!((rig.skin.positions()[lifted[0].0 as usize] - Vec3::Y).length() < 1e-5);
    assert!((lifted[0].1 - Vec3::new(0.0, 1.0, 0.5)).length() < 1e-5, "{lifted:?}");
    assert_eq!(rig.animations.len(), 1);
    let clip = &rig.animations[0];
    assert_eq!((clip.name.as_str(), clip.clip.range), ("wave", (0.0, 1.0)));
    assert_eq!(clip.clip.translations.iter().map(|t| t.joint).collect::<Vec<_>>(), [1]);
    // At 1 s the arm is turned a quarter about z and stands at x = 1.5: the vertex on it follows it, the one
    // shared half and half goes to the mean of (0, 1, 0) and 1.5 x + Rz(90) (-1, 1, 0) = (0.5, -1, 0).
    let pose = skinbind::model::anim::pose_at(&rig.skeleton, &clip.clip, 1.0);
    let world = skinbind::model::world_from_joint(&rig.skeleton, &pose);
    let mats = skinbind::deform::skinning_matrices(&world, rig.skin.bindings().unwrap());
    let (posed, _) = skinbind::deform::skin_vertices(
        rig.skin.positions(),
        rig.skin.normals(),
        rig.skin.weights().unwrap(),
        &mats,
        skinbind::deform::Method::Linear,
    );
    for (p, q) in rig.skin.positions().iter().zip(&posed) {
        let want = if (*p - Vec3::X).length() < 1e-5 {
            Vec3::new(1.5, 0.0, 0.0)
        } else if (*p - Vec3::Y).length() < 1e-5 {
            Vec3::new(0.25, 0.0, 0.0)
        } else {
            *p
        };
        assert!((*q - want).length() < 1e-4, "{p} posed at {q}, expected {want}");
    }
}

/// A bone no vertex follows (an IK target beside the skeleton, under the armature's plain node) is a joint as
/// Blender's importer makes it, and the armature node holding both is the root.
#[test]
fn unweighted_bones_of_the_armature_are_joints() {
    let armature = "\tModel: 299, \"Model::Armature\", \"Null\" {\n\t}\n\
                    \tModel: 303, \"Model::ik\", \"LimbNode\" {\n\t}\n\
                    \tNodeAttribute: 403, \"NodeAttribute::ik\", \"LimbNode\" {\n\t\tTypeFlags: \"Skeleton\"\n\t}\n";
    let text = common::fbx_build::small_rig()
        .replace("\tModel: 300,", &format!("{armature}\tModel: 300,"))
        .replace(
            "\tC: \"OO\",300,0\n",
            "\tC: \"OO\",299,0\n\tC: \"OO\",300,299\n\tC: \"OO\",303,299\n\tC: \"OO\",403,303\n",
        );
    assert!(text.contains("Model::ik"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ik.fbx");
    std::fs::write(&path, text).unwrap();
    let rig = read(&path);
    let names: Vec<&str> = rig.skeleton.joints().iter().map(|j| j.name.as_str()).collect();
    // Depth-first in the file's order of nodes (`ik` is written before `root`).
    assert_eq!(names, ["Armature", "ik", "root", "arm"]);
}

/// A mesh node's geometric transform (3ds Max's object offset) moves its vertices, and only them: the triangle
/// 1 m along z, the joints where they were.
#[test]
fn a_geometric_transform_moves_the_mesh() {
    let text = common::fbx_build::small_rig().replace(
        "\tModel: 200, \"Model::Tri\", \"Mesh\" {\n\t\tVersion: 232\n",
        "\tModel: 200, \"Model::Tri\", \"Mesh\" {\n\t\tVersion: 232\n\t\tProperties70:  {\n\t\t\t\
         P: \"GeometricTranslation\", \"Vector3D\", \"Vector\", \"\",0,0,100\n\t\t}\n",
    );
    assert!(text.contains("GeometricTranslation"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("geo.fbx");
    std::fs::write(&path, text).unwrap();
    let rig = read(&path);
    assert!(
        rig.skin.positions().iter().all(|p| (p.z - 1.0).abs() < 1e-5),
        "{:?}",
        rig.skin.positions()
    );
    assert!((rig.skeleton.joints()[1].offset - Vec3::X).length() < 1e-5);
}

/// A Z-up file (3ds Max's axes: up +Z, front -Y) stands up in Y: a point 1 m along the file's +Y (behind the
/// front) lands at z = -1, where Blender's importer (Z up, -Y forward) and then its glTF exporter ((x, y, z) to
/// (x, z, -y)) put it.
#[test]
fn a_z_up_file_stands_up_in_y() {
    let text = common::fbx_build::small_rig()
        .replace(
            "P: \"UpAxis\", \"int\", \"Integer\", \"\",1",
            "P: \"UpAxis\", \"int\", \"Integer\", \"\",2",
        )
        .replace(
            "P: \"FrontAxis\", \"int\", \"Integer\", \"\",2",
            "P: \"FrontAxis\", \"int\", \"Integer\", \"\",1",
        )
        .replace(
            "P: \"FrontAxisSign\", \"int\", \"Integer\", \"\",1",
            "P: \"FrontAxisSign\", \"int\", \"Integer\", \"\",-1",
        );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zup.fbx");
    std::fs::write(&path, text).unwrap();
    let rig = read(&path);
    let mut got = rig.skin.positions().to_vec();
    got.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.z.total_cmp(&b.z)));
    for (p, want) in got.iter().zip([Vec3::new(0.0, 0.0, -1.0), Vec3::ZERO, Vec3::X]) {
        assert!((*p - want).length() < 1e-5, "{p} vs {want}");
    }
}

/// Bound bones side by side under the scene root hang under a synthetic root at the origin, with a warning; the
/// scene root is no joint.
#[test]
fn top_bones_under_the_scene_root_share_a_synthetic_root() {
    let text = common::fbx_build::small_rig().replace("\tC: \"OO\",301,300\n", "\tC: \"OO\",301,0\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.fbx");
    std::fs::write(&path, text).unwrap();
    let p = load_rig(&path, &AnimationChoice::All).unwrap();
    let names: Vec<&str> = p.value.skeleton.joints().iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["fbx_root", "root", "arm"]);
    assert!(
        p.warnings.iter().any(|w| w.message.contains("2 top joints")),
        "{:?}",
        p.warnings
    );
    // The arm keeps its place: 1 m along x, from the origin now.
    assert!((p.value.skeleton.joints()[2].offset - Vec3::X).length() < 1e-5);
    assert_eq!(p.value.animations.len(), 1);
}

/// Two characters in one file: the meshes of the first one's skeleton are read, the other's left out with a
/// warning (as the glTF import takes one skin).
#[test]
fn a_second_skeleton_and_its_mesh_are_left_out_with_a_warning() {
    let one = common::fbx_build::small_rig();
    // The same rig again, every object id moved up by 1000 and every name given a `2`.
    let shift = |line: &str| -> String {
        let ids = shifted_ids(line);
        ids.replace("::Tri\"", "::Tri2\"")
            .replace("::root\"", "::root2\"")
            .replace("::arm\"", "::arm2\"")
    };
    let (objects, connections) = {
        let body = |name: &str| {
            let start = one.find(&format!("{name}:  {{\n")).unwrap() + name.len() + 5;
            let end = start + one[start..].find("\n}\n").unwrap();
            one[start..end].lines().map(shift).collect::<Vec<_>>().join("\n")
        };
        (body("Objects"), body("Connections"))
    };
    let text = one
        .replacen("Objects:  {\n", &format!("Objects:  {{\n{objects}\n"), 1)
        .replacen("Connections:  {\n", &format!("Connections:  {{\n{connections}\n"), 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.fbx");
    std::fs::write(&path, text).unwrap();
    let p = load_rig(&path, &AnimationChoice::All).unwrap();
    let names: Vec<&str> = p.value.skeleton.joints().iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(p.value.skin.vertex_count(), 3);
    assert!(
        p.warnings.iter().any(|w| w
            .message
            .starts_with("1 skinned meshes bound to another skeleton were not imported")),
        "{:?}",
        p.warnings
    );
}

/// `line` with each object id (`Model: 200,`) and connection end (`C: "OO",200,0`) above 0 moved up by 1000.
fn shifted_ids(line: &str) -> String {
    let bump = |s: &str| match s.trim().parse::<u64>() {
        Ok(0) | Err(_) => s.to_string(),
        Ok(n) => (n + 1000).to_string(),
    };
    let t = line.trim_start();
    if let Some(rest) = t.strip_prefix("C: ") {
        let parts: Vec<&str> = rest.splitn(4, ',').collect();
        let mut out: Vec<String> = vec![parts[0].to_string(), bump(parts[1]), bump(parts[2])];
        out.extend(parts.get(3).map(|s| s.to_string()));
        return format!("\tC: {}", out.join(","));
    }
    match t.split_once(": ") {
        Some((kind, rest))
            if rest.split(',').next().is_some_and(|id| id.parse::<u64>().is_ok()) && rest.contains('"') =>
        {
            let (id, tail) = rest.split_once(',').unwrap();
            format!("\t{kind}: {},{tail}", bump(id))
        }
        _ => line.to_string(),
    }
}
