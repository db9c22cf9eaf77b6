//! Automatic binding: complete, valid weights on every input; no bleeding between nearby parts; quality against
//! the artist weights of the shared CSE169 models at least as good as Blender's bone heat (issue 3's table).
#![allow(clippy::unwrap_used)]

mod common;

use glam::{Mat4, Vec3};
use skinbind::adjust::clean::{CleanOptions, clean};
use skinbind::adjust::{BindAndClean, bind_and_clean};
use skinbind::bind::{BindMethod, BindOptions, VolumeShape, bind_weights};
use skinbind::deform::bind_world_from_joint;
use skinbind::eval::compare_weights;
use skinbind::eval::posed::posed_error;
use skinbind::formats;
use skinbind::model::{Pose, Skeleton, Weights, world_from_joint};
use skinbind::sample::{SampleKind, make_sample};

fn bind(skel: &Skeleton, bind: &[Mat4], positions: &[Vec3], tris: &[[u32; 3]], opts: &BindOptions) -> Weights {
    bind_weights(skel, bind, positions, tris, opts, &|_| {}).unwrap().0
}

fn check_valid(w: &Weights, vertices: usize, k: usize) {
    assert_eq!(w.len(), vertices);
    for v in 0..vertices {
        let (js, ws) = w.row(v);
        assert!(
            !js.is_empty() && js.len() <= k,
            "vertex {v} has {} influences",
            js.len()
        );
        let sum: f32 = ws.iter().sum();
        assert!(
            (sum - 1.0).abs() < 1e-5 && ws.iter().all(|x| x.is_finite() && *x > 0.0),
            "vertex {v}"
        );
    }
}

#[test]
fn every_method_weights_every_vertex_validly() {
    for kind in SampleKind::ALL {
        let s = make_sample(kind, 3000).unwrap();
        let bw = s.skin.bindings().unwrap().to_vec();
        for method in [BindMethod::Line, BindMethod::Volume, BindMethod::Hybrid] {
            for (k, rigid, shape) in [
                (4, false, VolumeShape::Capsule),
                (2, false, VolumeShape::Ellipsoid),
                (4, true, VolumeShape::Capsule),
            ] {
                let opts = BindOptions {
                    method,
                    max_influences: k,
                    rigid,
                    volume_shape: shape,
                    ..BindOptions::default()
                };
                let w = bind(&s.skeleton, &bw, s.skin.positions(), s.skin.triangles(), &opts);
                check_valid(&w, s.skin.vertex_count(), if rigid { 1 } else { k });
            }
        }
    }
}

/// The creature's arms hang 0.05 beside its torso: torso vertices take no arm weight and arm vertices no
/// spine or chest weight below the shoulder. Without the part and visibility tests, they do (so the test
/// can fail).
#[test]
fn no_bleeding_between_torso_and_hanging_arms() {
    let s = make_sample(SampleKind::Creature, 20_000).unwrap();
    let bw = s.skin.bindings().unwrap().to_vec();
    let p = s.skin.positions();
    let joint = |n: &str| s.skeleton.find(n)[0] as u16;
    let arm: Vec<u16> = ["shoulder_l", "elbow_l", "wrist_l", "shoulder_r", "elbow_r", "wrist_r"]
        .map(joint)
        .to_vec();
    let elbow_y = world_from_joint(&s.skeleton, &Pose::zero(&s.skeleton))[joint("elbow_l") as usize]
        .w_axis
        .y;
    let (parts, _) = skinbind::mesh::connected_parts(p, s.skin.triangles(), 1e-6);
    let torso_part = parts[0]; // the sample builds the torso first
    let bleeding = |w: &Weights| {
        let (mut torso_on_arm, mut arm_on_torso) = (0, 0);
        for v in 0..p.len() {
            let (js, _) = w.row(v);
            // The elbow is 0.3 below the shoulder; stay 0.2 clear of the shoulder, where blending with the chest
            // is right.
            let near_elbow = (p[v].y - elbow_y).abs() < 0.1;
            if parts[v] == torso_part && near_elbow && js.iter().any(|j| arm.contains(j)) {
                torso_on_arm += 1;
            }
            if parts[v] != torso_part && near_elbow && p[v].x.abs() > 0.25 && js.iter().any(|j| !arm.contains(j)) {
                arm_on_torso += 1;
            }
        }
        (torso_on_arm, arm_on_torso)
    };
    let w = bind(&s.skeleton, &bw, p, s.skin.triangles(), &BindOptions::default());
    assert_eq!(bleeding(&w), (0, 0));
    // Visibility alone, as in a single-part mesh where the parts rule cannot help: a torso vertex beside the arm
    // is nearer the arm bone than the spine, and the arm's surface hides that bone from it.
    let visibility_only = BindOptions {
        parts: false,
        ..BindOptions::default()
    };
    let w = bind(&s.skeleton, &bw, p, s.skin.triangles(), &visibility_only);
    assert_eq!(bleeding(&w), (0, 0), "visibility alone");
    // The control: straight distances with neither test bleed.
    let naive = BindOptions {
        parts: false,
        visibility: false,
        blend_ratio: 3.0,
        ..BindOptions::for_method(BindMethod::Line)
    };
    let w = bind(&s.skeleton, &bw, p, s.skin.triangles(), &naive);
    let (a, b) = bleeding(&w);
    assert!(a + b > 50, "without the tests, weights bleed ({a}, {b})");
}

/// The arm's three fingers are a third of their radius apart: a finger's vertices take weight only from its
/// own joints and the hand.
#[test]
fn no_bleeding_between_fingers() {
    let s = make_sample(SampleKind::Arm, 20_000).unwrap();
    let bw = s.skin.bindings().unwrap().to_vec();
    let w = bind(
        &s.skeleton,
        &bw,
        s.skin.positions(),
        s.skin.triangles(),
        &BindOptions::default(),
    );
    let reference = s.skin.weights().unwrap();
    let fingers = ["index", "middle", "ring"];
    let finger_of = |j: u16| {
        fingers
            .iter()
            .position(|f| s.skeleton.joints()[j as usize].name.starts_with(f))
    };
    let mut checked = 0;
    for v in 0..w.len() {
        // The sample's own weights say which finger a vertex is on.
        let Some(own) = reference.dominant(v).and_then(finger_of) else {
            continue;
        };
        checked += 1;
        for &j in w.row(v).0 {
            assert!(
                finger_of(j).is_none_or(|f| f == own),
                "vertex {v} on finger {own} weighted to joint {j}"
            );
        }
    }
    assert!(checked > 1000);
}

/// Binding the shared models as `skinbind bind` does (the bind, then the default clean-up) and comparing with
/// their artist weights: each model is held
/// at today's figures (L1 at most, dominant agreement at least) so that no change makes one worse unnoticed, and
/// on the models where skinbind leads Blender 5.0.1's bone heat (`reference/blender-heat/`, measured here by the
/// same comparison) it must stay ahead by L1. docs/binding.md has the table. No vertex unweighted.
#[test]
fn quality_holds_on_the_shared_models_and_beats_blender_where_it_leads() {
    let Some(dir) = common::data_dir() else { return };
    let (mut rows, mut failures) = (Vec::new(), Vec::new());
    for (name, s, k, bw) in shared_models(&dir) {
        // (L1 at most, agreement at least, whether skinbind leads Blender by L1)
        let (hold_l1, hold_dominant, leads) = match name.as_str() {
            "wasp" => (0.103, 0.965, true),
            "wasp2" => (0.1415, 0.925, true),
            "tube" => (0.364, 1.0, true),
            "CesiumMan.glb" => (0.1732, 0.938, true),
            "RiggedFigure.glb" => (0.3905, 0.759, true),
            "Fox.glb" => (0.455, 0.795, true),
            "quaternius/Smooth_Male_Casual.glb" => (0.1985, 0.915, true),
            "quaternius/Female_Casual.glb" => (0.1973, 0.923, true),
            "quaternius/Wolf.glb" => (0.3122, 0.871, true),
            "quaternius/Trex.glb" => (0.3474, 0.800, true),
            "quaternius/Frog.glb" => (0.4218, 0.795, true),
            _ => (0.184, 1.0, false),
        };
        let w = bind_as_the_cli_does(&s, &bw, &k);
        check_valid(&w, k.vertex_count(), 4);
        let artist = k.weights().unwrap();
        let c = compare_weights(&w, artist).unwrap();
        let blender = blender_weights(&dir, &name, s.len()).map(|b| compare_weights(&b, artist).unwrap());
        rows.push(format!(
            "{name}: L1 {:.4}, dominant {:.4}; Blender {}",
            c.mean_l1,
            c.dominant_agreement,
            blender.as_ref().map_or("-".to_string(), |b| format!(
                "{:.4} / {:.4}",
                b.mean_l1, b.dominant_agreement
            ))
        ));
        eprintln!("{}", rows.last().unwrap());
        if c.mean_l1 >= hold_l1 {
            failures.push(format!("{name}: L1 {} above today's {hold_l1}", c.mean_l1));
        }
        if c.dominant_agreement < hold_dominant {
            failures.push(format!(
                "{name}: dominant {} below today's {hold_dominant}",
                c.dominant_agreement
            ));
        }
        match blender {
            Some(b) if leads && c.mean_l1 >= b.mean_l1 => {
                failures.push(format!("{name}: L1 {} not below Blender's {}", c.mean_l1, b.mean_l1))
            }
            None if leads => failures.push(format!("{name}: no Blender weights")),
            _ => {}
        }
        assert_eq!(c.unweighted_a, 0);
    }
    assert!(rows.len() >= 12, "{rows:?}");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The weights `skinbind bind` writes: the default bind, then the default clean-up.
fn bind_as_the_cli_does(s: &Skeleton, bw: &[Mat4], k: &skinbind::model::Skin) -> Weights {
    let job = BindAndClean::with_default_clean_up(BindOptions::default());
    bind_and_clean(s, bw, k.positions(), k.triangles(), &job, &|_| {})
        .unwrap()
        .weights
}

/// Blender's bone-heat weights for a shared model (`reference/blender-heat/NAME.skin`), if there are any.
/// Issue 22's done-when: bound as `skinbind bind` does, every model with Blender's weights has a lower posed error
/// against the artist's weights (mean and 99th percentile over each joint's range of motion; docs/binding.md)
/// than Blender 5.0.1's bone heat by the same measure. The tube's 99th percentile is the one tie: its artist
/// weights ramp linearly over the whole arm, and in the rings that set the percentile both binds give the far
/// joint nothing, so both land exactly as far from the artist's; it is held at the tie.
#[test]
fn posed_error_is_below_blenders_on_every_model() {
    let Some(dir) = common::data_dir() else { return };
    let mut checked = 0;
    for (name, s, k, bw) in shared_models(&dir) {
        let Some(blender) = blender_weights(&dir, &name, s.len()) else {
            continue;
        };
        let artist = k.weights().unwrap();
        let ours = bind_as_the_cli_does(&s, &bw, &k);
        let error = |w: &Weights| {
            posed_error(&s, &bw, k.positions(), w, artist, None)
                .unwrap()
                .range_of_motion
        };
        let (a, b) = (error(&ours), error(&blender));
        eprintln!(
            "{name}: mean {:.4} (Blender {:.4}), p99 {:.3} (Blender {:.3})",
            a.mean_percent, b.mean_percent, a.p99_percent, b.p99_percent
        );
        assert!(a.mean_percent < b.mean_percent, "{name}: mean");
        if name == "tube" {
            assert!(a.p99_percent <= b.p99_percent, "{name}: 99th percentile");
        } else {
            assert!(a.p99_percent < b.p99_percent, "{name}: 99th percentile");
        }
        checked += 1;
    }
    assert_eq!(checked, 11);
}

fn blender_weights(dir: &std::path::Path, name: &str, joints: usize) -> Option<Weights> {
    let base = name.rsplit('/').next()?.trim_end_matches(".glb");
    let path = dir.join("reference/blender-heat").join(format!("{base}.skin"));
    path.exists().then(|| {
        formats::load_skin(&path, Some(joints))
            .unwrap()
            .value
            .weights()
            .unwrap()
            .clone()
    })
}

/// A head much wider than the short neck it sits on (CesiumMan's shape, built here so that the rule is tested
/// without the shared data): a closed lathe surface, a 4 cm neck column from z = -0.1 to the head, a 15 cm sphere
/// centred at z = 0.21; joints `neck` at z = 0 and the box-less leaf `head` at z = 0.05. The side of the head,
/// beside the head's bone but past the neck bone's end, belongs to the head: with plain distances it is shared
/// with the short neck, with end distances (the default) it is not.
#[test]
fn a_wide_head_on_a_short_neck_belongs_to_the_head() {
    use skinbind::model::Joint;
    let radius = |z: f32| (0.15f32 * 0.15 - (z - 0.21) * (z - 0.21)).max(0.0).sqrt().max(0.04);
    let (seg, rings) = (32usize, 60usize);
    let (z0, z1) = (-0.1f32, 0.359f32);
    let mut p = Vec::new();
    for r in 0..rings {
        let z = z0 + (z1 - z0) * r as f32 / (rings - 1) as f32;
        for k in 0..seg {
            let a = std::f32::consts::TAU * k as f32 / seg as f32;
            p.push(Vec3::new(radius(z) * a.cos(), radius(z) * a.sin(), z));
        }
    }
    let (south, north) = (p.len() as u32, p.len() as u32 + 1);
    p.push(Vec3::new(0.0, 0.0, z0));
    p.push(Vec3::new(0.0, 0.0, 0.36));
    let id = |r: usize, k: usize| (r * seg + k % seg) as u32;
    let mut t = Vec::new();
    for r in 0..rings - 1 {
        for k in 0..seg {
            t.push([id(r, k), id(r + 1, k), id(r + 1, k + 1)]);
            t.push([id(r, k), id(r + 1, k + 1), id(r, k + 1)]);
        }
    }
    for k in 0..seg {
        t.push([south, id(0, k + 1), id(0, k)]);
        t.push([north, id(rings - 1, k), id(rings - 1, k + 1)]);
    }
    let skel = Skeleton::new(vec![
        Joint::new("neck", None, Vec3::ZERO),
        Joint::new("head", Some(0), Vec3::new(0.0, 0.0, 0.05)),
    ])
    .unwrap();
    let bw = world_from_joint(&skel, &Pose::zero(&skel));
    // Mean head weight over the head's side, 3 cm and more above its pivot and below its widest ring.
    let head_share = |opts: &BindOptions| {
        let w = bind(&skel, &bw, &p, &t, opts);
        check_valid(&w, p.len(), 4);
        let side: Vec<usize> = (0..p.len()).filter(|&v| p[v].z > 0.08 && p[v].z < 0.21).collect();
        assert!(side.len() > 100);
        let head: f32 = side
            .iter()
            .map(|&v| {
                let (js, ws) = w.row(v);
                js.iter()
                    .zip(ws)
                    .filter(|(j, _)| **j == 1)
                    .map(|(_, x)| *x)
                    .sum::<f32>()
            })
            .sum();
        head / side.len() as f32
    };
    let end = head_share(&BindOptions::default());
    let plain = head_share(&BindOptions {
        end_distance: false,
        ..BindOptions::default()
    });
    eprintln!("head weight on the head's side: end distance {end:.3}, plain {plain:.3}");
    // Measured: 0.903 and 0.724.
    assert!(end > 0.85 && plain < end - 0.1, "end {end}, plain {plain}");
}

/// Real files of every kind bind: the triangle soup head.skin, the inward-wound tube_smooth.skin, and a bare
/// mesh (no weights, no bindings) bound in the skeleton file's pose.
#[test]
fn real_meshes_bind_completely() {
    let Some(dir) = common::data_dir() else { return };
    let dir = dir.join("cse169");
    for (skel, skin) in [
        ("head.skel", "head.skin"),
        ("tube.skel", "tube_smooth.skin"),
        ("wasp.skel", "wasp2.skin"),
        ("test.skel", "triangle.skin"),
    ] {
        let s = formats::load_skel(&dir.join(skel)).unwrap().value;
        let k = formats::load_skin(&dir.join(skin), None).unwrap().value;
        // Bare: drop weights and bindings, bind in the skeleton's file pose.
        let bw = world_from_joint(&s, &Pose::from_file(&s));
        let w = bind(&s, &bw, k.positions(), k.triangles(), &BindOptions::default());
        check_valid(&w, k.vertex_count(), 4);
    }
}

#[test]
fn degenerate_skeletons_and_meshes_do_not_break() {
    // Zero-length bones, a bone far outside the mesh, a single joint, an empty mesh, no triangles.
    let text = "balljoint root { balljoint same { offset 0 0 0 } balljoint far { offset 100 0 0 } }";
    let s = skinbind::formats::skel::read_skel(text.as_bytes(), None).unwrap().value;
    let bw = world_from_joint(&s, &Pose::zero(&s));
    let cube = make_sample(SampleKind::Tube, 500).unwrap();
    let (w, report) = bind_weights(
        &s,
        &bw,
        cube.skin.positions(),
        cube.skin.triangles(),
        &BindOptions::default(),
        &|_| {},
    )
    .unwrap();
    check_valid(&w, cube.skin.vertex_count(), 4);
    assert!(
        report.bones_without_vertices.iter().any(|(_, n)| n == "far"),
        "{:?}",
        report.bones_without_vertices
    );
    let (w, _) = bind_weights(&s, &bw, &[], &[], &BindOptions::default(), &|_| {}).unwrap();
    assert_eq!(w.len(), 0);
    let pts = [Vec3::X, Vec3::Y];
    let (w, _) = bind_weights(&s, &bw, &pts, &[], &BindOptions::default(), &|_| {}).unwrap();
    check_valid(&w, 2, 4);
}

#[test]
fn bad_options_and_inputs_are_errors() {
    let s = make_sample(SampleKind::Tube, 500).unwrap();
    let bw = s.skin.bindings().unwrap().to_vec();
    let p = s.skin.positions();
    let t = s.skin.triangles();
    let err = |opts: BindOptions, bw: &[Mat4], p: &[Vec3]| {
        bind_weights(&s.skeleton, bw, p, t, &opts, &|_| {})
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(
            BindOptions {
                max_influences: 0,
                ..Default::default()
            },
            &bw,
            p
        ),
        "max influences must be at least 1"
    );
    assert!(
        err(
            BindOptions {
                blend_ratio: 1.0,
                ..Default::default()
            },
            &bw,
            p
        )
        .contains("blend ratio 1")
    );
    assert!(err(BindOptions::default(), &bw[..2], p).contains("2 bind matrices for a skeleton of 4 joints"));
    let mut bad = p.to_vec();
    bad[7].y = f32::NAN;
    assert!(err(BindOptions::default(), &bw, &bad).contains("vertex 7"));
}

/// Duplicate vertices, vertices on no triangle, and a non-manifold fin (three triangles on one edge) still get
/// complete weights.
#[test]
fn duplicates_loose_vertices_and_non_manifold_edges_bind() {
    let s = make_sample(SampleKind::Tube, 2000).unwrap();
    let mut p = s.skin.positions().to_vec();
    let mut t = s.skin.triangles().to_vec();
    let n = p.len() as u32;
    // Every tenth vertex duplicated (unreferenced), one far loose vertex, and a fin on the first triangle's edge.
    let dups: Vec<Vec3> = p.iter().step_by(10).copied().collect();
    p.extend(dups);
    p.push(Vec3::new(5.0, 1.0, 0.0));
    let [a, b, _] = t[0];
    p.push(p[a as usize] + Vec3::new(0.0, 0.0, 0.3));
    p.push(p[b as usize] + Vec3::new(0.0, 0.0, -0.3));
    let (f1, f2) = (p.len() as u32 - 2, p.len() as u32 - 1);
    t.push([a, b, f1]);
    t.push([b, a, f2]);
    assert!(p.len() as u32 > n);
    let bw = s.skin.bindings().unwrap().to_vec();
    let w = bind(&s.skeleton, &bw, &p, &t, &BindOptions::default());
    check_valid(&w, p.len(), 4);
    // A duplicate gets the same weights as its original (same position, same part after welding).
    for (k, v) in (0..n as usize).step_by(10).enumerate() {
        assert_eq!(w.row(v), w.row(n as usize + k), "vertex {v} and its duplicate");
    }
}

/// The shared models in one list: skeleton, mesh with artist weights, bind pose.
fn shared_models(dir: &std::path::Path) -> Vec<(String, Skeleton, skinbind::model::Skin, Vec<Mat4>)> {
    let mut out = Vec::new();
    for name in ["wasp", "wasp2", "tube"] {
        let s = formats::load_skel(&dir.join("cse169").join(format!("{name}.skel")))
            .unwrap()
            .value;
        let k = formats::load_skin(&dir.join("cse169").join(format!("{name}.skin")), Some(s.len()))
            .unwrap()
            .value;
        let bw = bind_world_from_joint(&s, &k, &Pose::from_file(&s));
        out.push((name.to_string(), s, k, bw));
    }
    for name in [
        "CesiumMan.glb",
        "RiggedFigure.glb",
        "RiggedSimple.blender-reexport.glb",
        "Fox.glb",
        "quaternius/Smooth_Male_Casual.glb",
        "quaternius/Female_Casual.glb",
        "quaternius/Wolf.glb",
        "quaternius/Trex.glb",
        "quaternius/Frog.glb",
    ] {
        let rig = formats::gltf::load_gltf(&dir.join("gltf").join(name), None)
            .unwrap()
            .value;
        let bw = rig.skin.bindings().unwrap().to_vec();
        out.push((name.to_string(), rig.skeleton, rig.skin, bw));
    }
    out
}

/// Issue 4: the default clean-up after binding moves no shared model away from its artist weights (Fox and Trex excepted,
/// below), brings Frog closer (its `Shoulders` and `Neck` keep their largest regions), and brings
/// wasp and wasp2 closer (bound by the line method: by 3e-4 and more; a bone's reach past its only child's pivot
/// is short, so few islands are left to remove). (It used to bring CesiumMan closer too, by taking 1362 rogue neck-base weights off the
/// head; with end distances the bind no longer puts them there, and the clean-up moves it by under 1e-3.)
#[test]
fn default_cleanup_brings_automatic_weights_closer_to_the_artists() {
    let Some(dir) = common::data_dir() else { return };
    for (name, s, k, bw) in shared_models(&dir) {
        // The line method leaves the rogue islands that the clean-up is for; the default leaves few.
        let method = if ["wasp", "wasp2"].contains(&name.as_str()) {
            BindMethod::Line
        } else {
            BindMethod::default()
        };
        let raw = bind(&s, &bw, k.positions(), k.triangles(), &BindOptions::for_method(method));
        let (cleaned, _) = clean(
            k.positions(),
            k.triangles(),
            &s,
            &bw,
            &raw,
            &CleanOptions::after_binding(4, method),
        )
        .unwrap();
        check_valid(&cleaned, k.vertex_count(), 4);
        let artist = k.weights().unwrap();
        let (before, after) = (
            compare_weights(&raw, artist).unwrap(),
            compare_weights(&cleaned, artist).unwrap(),
        );
        eprintln!("{name}: mean L1 {:.4} -> {:.4}", before.mean_l1, after.mean_l1);
        // "As they were" to four decimals (RiggedFigure moves by 2e-5), but for one known loss: on Fox, bound
        // without its master root, the belly's underside takes a faint b_Spine01 island (16 vertices, just past
        // the main region's reach) that the artist gives b_Spine01 wholly; removing it costs 0.0030 (0.4517 to
        // 0.4547). docs/cleanup.md names it; it is held there.
        // And on Trex: at the middle of its chest, the influence limit keeps one of two front legs tied for the
        // fourth influence (the lower joint), so the other's weight at the breastbone is cut off from its leg and
        // removed (8 vertices the artist gives both legs alike): 0.3481 to 0.3486. It used to be hidden by the
        // lower legs' islands on the feet, which the clean-up removed and which the bind no longer makes.
        let slack = match name.as_str() {
            "Fox.glb" => 0.0031,
            "quaternius/Trex.glb" => 6e-4,
            _ => 1e-4,
        };
        assert!(
            after.mean_l1 <= before.mean_l1 + slack,
            "{name}: {} -> {}",
            before.mean_l1,
            after.mean_l1
        );
        assert!(after.dominant_agreement >= before.dominant_agreement, "{name}");
        if ["wasp", "wasp2"].contains(&name.as_str()) {
            assert!(
                after.mean_l1 < before.mean_l1 - 2e-4,
                "{name}: {} -> {}",
                before.mean_l1,
                after.mean_l1
            );
        }
    }
}

/// The Frog: its skeleton, skin and bindings.
fn frog(dir: &std::path::Path) -> (Skeleton, skinbind::model::Skin, Vec<Mat4>) {
    let rig = formats::gltf::load_gltf(&dir.join("gltf/quaternius/Frog.glb"), None)
        .unwrap()
        .value;
    let bw = rig.skin.bindings().unwrap().to_vec();
    (rig.skeleton, rig.skin, bw)
}

/// The default options with the Frog's `root` and `Body` excluded by hand (`bind --exclude root,Body`).
fn without_root_and_body(s: &Skeleton) -> BindOptions {
    let mut deform = vec![true; s.len()];
    for name in ["root", "Body"] {
        deform[s.find(name)[0]] = false;
    }
    BindOptions {
        deform,
        ..BindOptions::default()
    }
}

/// Issue 22: Frog's `root` and `Body` are controls the artist never weights; bound with them excluded they get
/// no weight, and the vertices the artist gives to `Head` or `Neck` go mostly to `Head` or `Neck` (with `Body`
/// deforming, it took the whole head).
#[test]
fn frog_bound_without_its_controls_gives_the_head_to_head_and_neck() {
    let Some(dir) = common::data_dir() else { return };
    let (s, k, bw) = frog(&dir);
    let joint = |name: &str| s.find(name)[0];
    let opts = without_root_and_body(&s);
    let (w, report) = bind_weights(&s, &bw, k.positions(), k.triangles(), &opts, &|_| {}).unwrap();
    check_valid(&w, k.vertex_count(), 4);
    let artist = k.weights().unwrap();
    let (head, neck) = (joint("Head") as u16, joint("Neck") as u16);
    let (mut theirs, mut ours) = (0, 0);
    for v in 0..w.len() {
        assert!(!w.row(v).0.contains(&(joint("root") as u16)) && !w.row(v).0.contains(&(joint("Body") as u16)));
        if matches!(artist.dominant(v), Some(j) if j == head || j == neck) {
            theirs += 1;
            ours += matches!(w.dominant(v), Some(j) if j == head || j == neck) as usize;
        }
    }
    let share = ours as f64 / theirs as f64;
    eprintln!(
        "Frog: {ours} of the artist's {theirs} head and neck vertices; warnings {:?}",
        report.warnings
    );
    assert!(share > 0.8, "{ours} of {theirs}");
    // Its pole targets are named as controls: not bound, and said so.
    assert!(
        report
            .warnings
            .iter()
            .any(|m| m.contains("`PoleTarget.L` is not bound: its name says `pole`")),
        "{:?}",
        report.warnings
    );
    assert_eq!(
        report.excluded_controls,
        vec![joint("PoleTarget.L"), joint("PoleTarget.R")]
    );
}

/// The default bind leaves the Frog's controls out by itself: `root` (a root below the frog), `Body` (0.3 above
/// its back, over the limbs it moves) and the pole targets (by name), each with a warning saying why, and gives
/// the weights that excluding `root` and `Body` by hand gives; `--bind-controls` binds and names them.
#[test]
fn frog_s_hovering_body_control_is_left_out_by_default() {
    let Some(dir) = common::data_dir() else { return };
    let (s, k, bw) = frog(&dir);
    let joint = |name: &str| s.find(name)[0];
    let bound = |opts: &BindOptions| bind_weights(&s, &bw, k.positions(), k.triangles(), opts, &|_| {}).unwrap();
    let (w, report) = bound(&BindOptions::default());
    let mut expected = vec![
        joint("root"),
        joint("Body"),
        joint("PoleTarget.L"),
        joint("PoleTarget.R"),
    ];
    expected.sort_unstable();
    assert_eq!(report.excluded_controls, expected, "{:?}", report.warnings);
    assert!(
        report
            .warnings
            .iter()
            .any(|m| m.contains("`Body` is not bound: its pivot lies beyond the mesh")),
        "{:?}",
        report.warnings
    );
    let (by_hand, _) = bound(&without_root_and_body(&s));
    assert!(w == by_hand);
    // Asked to bind controls, it is bound and warned about, its pole-target children notwithstanding, so that
    // `bind --bind-controls --exclude-controls` leaves out what the default does.
    let (_, asked) = bound(&BindOptions {
        bind_controls: true,
        ..BindOptions::default()
    });
    assert!(asked.excluded_controls.is_empty(), "{asked:?}");
    assert!(asked.controls.contains(&joint("Body")), "{:?}", asked.controls);
}

/// Issue 22: the course wasp, bound automatically (bind and default clean-up) and posed as its own `.skel` file
/// poses it, lands where the artist's weights put it: no vertex the artist gives to the abdomen or its tail moves
/// more than 2% of the bounding-box diagonal away (the line method left wing weight on the abdomen: 6.1%;
/// Blender's heat 5.0%), and the mean over all vertices stays under 0.3% (line 0.62%, heat 0.71%).
#[test]
fn the_wasp_at_its_own_pose_lands_where_the_artists_weights_put_it() {
    use skinbind::deform::{Method, skin_vertices, skinning_matrices};
    let Some(dir) = common::data_dir() else { return };
    let s = formats::load_skel(&dir.join("cse169/wasp.skel")).unwrap().value;
    let k = formats::load_skin(&dir.join("cse169/wasp.skin"), Some(s.len()))
        .unwrap()
        .value;
    let bw = bind_world_from_joint(&s, &k, &Pose::from_file(&s));
    let ours = bind_as_the_cli_does(&s, &bw, &k);
    let artist = k.weights().unwrap();
    let m = skinning_matrices(&world_from_joint(&s, &Pose::from_file(&s)), &bw);
    let posed = |w: &Weights| skin_vertices(k.positions(), k.normals(), w, &m, Method::Linear).0;
    let (a, b) = (posed(&ours), posed(artist));
    let (lo, hi) = skinbind::model::skin::bounds(k.positions()).unwrap();
    let diag = (hi - lo).length();
    let abdomen = s.joints().iter().position(|j| j.name == "abdomen").unwrap();
    let in_abdomen = |j: usize| {
        let mut at = Some(j);
        while let Some(x) = at {
            if x == abdomen {
                return true;
            }
            at = s.joints()[x].parent;
        }
        false
    };
    let (mut worst, mut sum, mut count) = (0f32, 0f32, 0);
    for v in 0..a.len() {
        let d = (a[v] - b[v]).length() / diag * 100.0;
        sum += d;
        if artist.dominant(v).is_some_and(|j| in_abdomen(j as usize)) {
            worst = worst.max(d);
            count += 1;
        }
    }
    let mean = sum / a.len() as f32;
    eprintln!("wasp at its pose: {count} abdomen vertices, worst {worst:.3}%, mean over all {mean:.3}%");
    assert!(count > 90);
    assert!(worst < 2.0, "an abdomen vertex lands {worst:.3}% of the diagonal away");
    assert!(mean < 0.3, "mean {mean:.3}%");
}

/// Issue 22: the quaternius humans' feet are IK feet, parented to the root; each lower leg is a leaf whose line
/// ends at its foot's pivot. The lower leg runs on to the ankle (a tail), so the vertices the artist gives a lower
/// leg go mostly to it (the shin used to stop halfway and the foot took the rest: 52% and 54% on
/// Smooth_Male_Casual).
#[test]
fn ik_feet_leave_the_whole_shin_to_the_lower_leg() {
    let Some(dir) = common::data_dir() else { return };
    for name in ["Smooth_Male_Casual", "Female_Casual"] {
        let rig = formats::gltf::load_gltf(&dir.join(format!("gltf/quaternius/{name}.glb")), None)
            .unwrap()
            .value;
        let (s, k) = (rig.skeleton, rig.skin);
        let bw = k.bindings().unwrap().to_vec();
        let (w, report) =
            bind_weights(&s, &bw, k.positions(), k.triangles(), &BindOptions::default(), &|_| {}).unwrap();
        assert_eq!(report.leaf_tails, 2, "{name}");
        let artist = k.weights().unwrap();
        for leg in ["LowerLeg.L", "LowerLeg.R"] {
            let j = s.find(leg)[0] as u16;
            let theirs: Vec<usize> = (0..w.len()).filter(|&v| artist.dominant(v) == Some(j)).collect();
            let ours = theirs.iter().filter(|&&v| w.dominant(v) == Some(j)).count();
            let share = ours as f64 / theirs.len() as f64;
            eprintln!("{name} {leg}: {ours} of the artist's {}", theirs.len());
            assert!(share > 0.85, "{name} {leg}: {ours} of {}", theirs.len());
        }
    }
}
