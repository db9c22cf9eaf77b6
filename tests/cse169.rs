//! The shared CSE169 files: every one loads with the counts SOURCES.md gives, round trips are exact, forward
//! kinematics, animation and skinning match values worked out by hand or by an independent computation.
#![allow(clippy::unwrap_used)]

mod common;

use glam::{Mat4, Vec3};
use skinbind::deform::{Method, bind_world_from_joint, skin_vertices, skinning_matrices};
use skinbind::formats::{self, anim, morph, skel, skin};
use skinbind::model::{Pose, Skeleton, Skin, pose_at, world_from_joint};

fn load_skel(name: &str) -> Option<Skeleton> {
    Some(formats::load_skel(&common::cse169(name)?).unwrap().value)
}

fn load_skin(name: &str) -> Option<Skin> {
    Some(formats::load_skin(&common::cse169(name)?, None).unwrap().value)
}

#[test]
fn every_file_loads_with_the_documented_counts() {
    let Some(dir) = common::data_dir() else { return };
    let dir = dir.join("cse169");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let ok = match path.extension().and_then(|e| e.to_str()) {
            Some("skel") => formats::load_skel(&path).map(|_| ()),
            Some("skin") => formats::load_skin(&path, None).map(|_| ()),
            Some("anim") => formats::load_anim(&path).map(|_| ()),
            Some("morph") => formats::load_morph(&path).map(|_| ()),
            _ => continue,
        };
        ok.unwrap_or_else(|e| panic!("{e}"));
        seen += 1;
    }
    assert_eq!(seen, 21, "SOURCES.md lists 21 CSE169 files");

    let wasp = load_skin("wasp.skin").unwrap();
    assert_eq!((wasp.vertex_count(), wasp.triangles().len()), (694, 1236));
    assert_eq!(wasp.bindings().unwrap().len(), 23);
    let w = wasp.weights().unwrap();
    assert_eq!((0..694).map(|v| w.row(v).0.len()).max(), Some(2));
    let wasp2 = load_skin("wasp2.skin").unwrap();
    let same_mesh = wasp2
        .positions()
        .iter()
        .zip(wasp.positions())
        .all(|(a, b)| close(*a, *b, 1e-5));
    assert!(same_mesh, "wasp2 is wasp's mesh written with 6 decimals instead of 5");
    let w2 = wasp2.weights().unwrap();
    assert_eq!((0..694).map(|v| w2.row(v).0.len()).max(), Some(4));
    assert_eq!(load_skel("wasp.skel").unwrap().len(), 23);
    let wasp2_skel = load_skel("wasp2.skel").unwrap();
    assert!(
        wasp2_skel
            .joints()
            .iter()
            .all(|j| j.box_min.is_none() && j.box_max.is_none())
    );
    let dragon = load_skel("dragon.skel").unwrap();
    assert_eq!(dragon.len(), 81);
    let mut names: Vec<_> = dragon.joints().iter().map(|j| j.name.as_str()).collect();
    names.sort();
    let before = names.len();
    names.dedup();
    assert_eq!(before - names.len(), 16, "dragon.skel has 16 duplicate names");
    let walk = formats::load_anim(&common::cse169("wasp_walk.anim").unwrap())
        .unwrap()
        .value;
    assert_eq!(walk.channels.len(), 72);
    let head_tex = load_skin("head_tex.skin").unwrap();
    assert_eq!(head_tex.texcoords().unwrap().len(), head_tex.vertex_count());
    assert_eq!(head_tex.materials()[0].name, "face");
    assert_eq!(
        head_tex.materials()[0].lines,
        vec![vec!["texture".to_string(), "head.bmp".to_string()]]
    );
    let tri = load_skin("triangle.skin").unwrap();
    assert_eq!(
        tri.normals()[0],
        Vec3::new(-1.0, -1.0, 1.0),
        "file normals are kept as written"
    );
}

#[test]
fn spider_pos_line_is_skipped_with_a_warning() {
    let Some(p) = common::cse169("spider.skel") else { return };
    let parsed = formats::load_skel(&p).unwrap();
    let pos: Vec<_> = parsed.warnings.iter().filter(|w| w.message.contains("`pos`")).collect();
    assert_eq!(pos.len(), 4);
    assert_eq!((pos[0].line, pos[0].col), (53, 3));
}

/// Read every file, write it, read it back: the model is the same, numbers bit for bit; and writing again
/// gives the same bytes.
#[test]
fn write_read_round_trips_are_exact() {
    let Some(dir) = common::data_dir() else { return };
    for entry in std::fs::read_dir(dir.join("cse169")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let mut first = Vec::new();
        let mut second = Vec::new();
        match path.extension().and_then(|e| e.to_str()) {
            Some("skel") => {
                let a = skel::read_skel(&bytes[..], None).unwrap().value;
                skel::write_skel(&mut first, &a).unwrap();
                let b = skel::read_skel(&first[..], None).unwrap().value;
                assert_eq!(a, b, "{}", path.display());
                skel::write_skel(&mut second, &b).unwrap();
            }
            Some("skin") => {
                let a = skin::read_skin(&bytes[..], None, None).unwrap().value;
                skin::write_skin(&mut first, &a).unwrap();
                let b = skin::read_skin(&first[..], None, None).unwrap().value;
                assert_eq!(a.positions(), b.positions(), "{}", path.display());
                assert_eq!(a.normals(), b.normals());
                assert_eq!(a.triangles(), b.triangles());
                assert_eq!(a.weights(), b.weights());
                assert_eq!(a.bindings(), b.bindings());
                assert_eq!(a.texcoords(), b.texcoords());
                assert_eq!(a.materials(), b.materials());
                skin::write_skin(&mut second, &b).unwrap();
            }
            Some("anim") => {
                let a = anim::read_anim(&bytes[..], None).unwrap().value;
                anim::write_anim(&mut first, &a).unwrap();
                let b = anim::read_anim(&first[..], None).unwrap().value;
                assert_eq!(a, b, "{}", path.display());
                anim::write_anim(&mut second, &b).unwrap();
            }
            Some("morph") => {
                let a = morph::read_morph(&bytes[..], None).unwrap().value;
                morph::write_morph(&mut first, &a).unwrap();
                let b = morph::read_morph(&first[..], None).unwrap().value;
                assert_eq!(a, b, "{}", path.display());
                morph::write_morph(&mut second, &b).unwrap();
            }
            _ => continue,
        }
        assert_eq!(first, second, "{}: writing is stable", path.display());
    }
}

fn close(a: Vec3, b: Vec3, tol: f32) -> bool {
    (a - b).abs().max_element() <= tol
}

/// test.skel in its file pose, worked out by hand. Root pose (0, 0.1, 0) turns everything 0.1 rad about y;
/// knee_r's pose (-3, 1, 2) clamps to (-2, 0, 0).
///
/// Ry(a) maps (x, y, z) to (x cos a + z sin a, y, -x sin a + z cos a); Rx(b) maps (x, y, z) to
/// (x, y cos b - z sin b, y sin b + z cos b).
/// - hip_r pivot = Ry(0.1) (0.1, -0.3, 0) = (0.1 cos 0.1, -0.3, -0.1 sin 0.1).
/// - knee_r pivot = hip_r pivot + Ry(0.1) (0, -0.3, 0) = (0.1 cos 0.1, -0.6, -0.1 sin 0.1).
/// - knee_r's shin end (0, -0.3, 0) in knee space: Rx(-2) gives (0, -0.3 cos(-2), -0.3 sin(-2)) =
///   (0, -0.3 cos 2, 0.3 sin 2), then Ry(0.1) gives (0.3 sin 2 sin 0.1, -0.3 cos 2, 0.3 sin 2 cos 0.1) from the pivot.
#[test]
fn forward_kinematics_of_test_skel_matches_hand_values() {
    let Some(s) = load_skel("test.skel") else { return };
    let pose = Pose::from_file(&s);
    let knee = s.find("knee_r")[0];
    assert_eq!(
        pose.dofs[knee],
        Vec3::new(-2.0, 0.0, 0.0),
        "knee_r clamps to its limits"
    );
    let w = world_from_joint(&s, &pose);
    let (c, sn) = (0.1f32.cos(), 0.1f32.sin());
    let hip = s.find("hip_r")[0];
    assert!(close(
        w[hip].w_axis.truncate(),
        Vec3::new(0.1 * c, -0.3, -0.1 * sn),
        1e-6
    ));
    let knee_pivot = Vec3::new(0.1 * c, -0.6, -0.1 * sn);
    assert!(close(w[knee].w_axis.truncate(), knee_pivot, 1e-6));
    let (c2, s2) = (2.0f32.cos(), 2.0f32.sin());
    let shin_end = knee_pivot + Vec3::new(0.3 * s2 * sn, -0.3 * c2, 0.3 * s2 * c);
    assert!(close(
        w[knee].transform_point3(Vec3::new(0.0, -0.3, 0.0)),
        shin_end,
        1e-6
    ));
    // Numerically: (0.1267339, -0.4751559, 0.2614431).
    assert!(close(shin_end, Vec3::new(0.1267339, -0.4751559, 0.2614431), 1e-6));
    let head = s.find("head")[0];
    assert!(close(w[head].w_axis.truncate(), Vec3::new(0.0, 0.3, 0.0), 1e-6));
}

/// sample.anim's three channels at times inside and outside the keys, worked out by hand from the Hermite
/// formula (at u = 0.5 the basis is h00 = h01 = 0.5, h10 = 0.125, h11 = -0.125).
#[test]
fn sample_anim_matches_hand_computed_values() {
    let Some(p) = common::cse169("sample.anim") else { return };
    let clip = formats::load_anim(&p).unwrap().value;
    let [c0, c1, c2] = &clip.channels[..] else {
        panic!("3 channels")
    };
    // Channel 0: keys (0, 0.1, smooth), (0.5, -0.3, flat), (0.75, 0.25, linear), (1.1, 0.4, 13.7 / -0.22);
    // constant before, linear after. Slopes: key0 -0.8 (smooth at an end = linear), key1 0, key2 in 2.2,
    // out 0.15/0.35, key3 in 13.7, out -0.22.
    let cases0 = [
        (-1.0, 0.1),                                   // constant extrapolation
        (0.0, 0.1),                                    // on a key
        (0.25, 0.05 - 0.05 - 0.15),                    // 0.5*0.1 + 0.125*(-0.8*0.5) + 0.5*(-0.3)
        (0.625, -0.15 + 0.125 - 0.125 * 0.55),         // v1 = 2.2 * 0.25
        (0.925, 0.325 + 0.125 * 0.15 - 0.125 * 4.795), // v0 = 0.15, v1 = 13.7 * 0.35
        (1.1, 0.4),
        (2.0, 0.4 - 0.22 * 0.9), // linear extrapolation with the out tangent
    ];
    // Channel 1: keys (0, 0.1), (0.2, 0.5), (0.4, -0.2), (0.6, 0.3), all smooth; cycle before, cycle_offset
    // after. Slopes: 2.0 (end: linear), -0.75, -0.5, 2.5 (end: linear). Period 0.6.
    let cases1 = [
        (0.1, 0.05 + 0.25 + 0.125 * 0.4 + 0.125 * 0.15), // span 0: v0 = 0.4, v1 = -0.15
        (-0.1, -0.1 + 0.15 - 0.125 * 0.1 - 0.125 * 0.5), // cycle: same as t = 0.5 (span 2)
        (0.7, 0.05 + 0.25 + 0.125 * 0.4 + 0.125 * 0.15 + 0.2), // cycle_offset: t = 0.1 plus (0.3 - 0.1)
        (1.3, 0.05 + 0.25 + 0.125 * 0.4 + 0.125 * 0.15 + 0.4), // two cycles on
    ];
    // Channel 2: keys (0, 0), (0.5, 1), (1, 0), (2, 0), all flat; bounce before, constant after. Period 2.
    let cases2 = [
        (-0.25, 0.5), // mirrored: the value at 0.25
        (-0.5, 1.0),  // the value at 0.5
        (-3.5, 1.0),  // two periods and a half back: mirrored again, the value at 0.5
        (0.75, 0.5),
        (3.0, 0.0), // constant
    ];
    for (c, cases) in [(c0, &cases0[..]), (c1, &cases1[..]), (c2, &cases2[..])] {
        for &(t, want) in cases {
            let got = c.eval(t);
            assert!((got - want).abs() < 1e-5, "t = {t}: got {got}, want {want}");
        }
    }
}

/// Skinning matrices of the bindings against themselves are the identity, so the bind pose gives back the
/// bind positions; and wasp's bindings are wasp.skel with every DOF zero and the root at (0, 0.95, -0.15).
#[test]
fn bind_pose_reproduces_bind_positions() {
    for name in [
        "wasp.skin",
        "wasp2.skin",
        "tube.skin",
        "tube_smooth.skin",
        "head.skin",
        "triangle.skin",
    ] {
        let Some(k) = load_skin(name) else { return };
        let b = k.bindings().unwrap();
        let m = skinning_matrices(b, b);
        let (p, _) = skin_vertices(k.positions(), k.normals(), k.weights().unwrap(), &m, Method::Linear);
        for (a, b) in p.iter().zip(k.positions()) {
            assert!(close(*a, *b, 1e-5), "{name}");
        }
    }
    let (Some(s), Some(k)) = (load_skel("wasp.skel"), load_skin("wasp.skin")) else {
        return;
    };
    let mut pose = Pose::zero(&s);
    pose.root_translation = Vec3::new(0.0, 0.95, -0.15);
    let w = world_from_joint(&s, &pose);
    for (a, b) in w.iter().zip(k.bindings().unwrap()) {
        assert!(a.abs_diff_eq(*b, 1e-5));
    }
}

/// An independent computation in f64 with hand-written rotations and rigid inverses, against the library's
/// f32 forward kinematics and linear blend skinning, for wasp under wasp_walk.anim at several times.
#[test]
fn posed_wasp_matches_an_independent_computation() {
    let (Some(s), Some(k), Some(a)) = (
        load_skel("wasp.skel"),
        load_skin("wasp.skin"),
        common::cse169("wasp_walk.anim"),
    ) else {
        return;
    };
    let clip = formats::load_anim(&a).unwrap().value;
    type M = [[f64; 4]; 4];
    fn mul(a: &M, b: &M) -> M {
        let mut r = [[0.0; 4]; 4];
        for i in 0..4 {
            for j in 0..4 {
                r[i][j] = (0..4).map(|k| a[i][k] * b[k][j]).sum();
            }
        }
        r
    }
    fn rot(axis: usize, t: f64) -> M {
        let (c, s) = (t.cos(), t.sin());
        let (i, j) = [(1, 2), (2, 0), (0, 1)][axis];
        let mut r = [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        r[i][i] = c;
        r[i][j] = -s;
        r[j][i] = s;
        r[j][j] = c;
        r
    }
    fn trans(t: [f64; 3]) -> M {
        let mut r = rot(0, 0.0);
        (0..3).for_each(|i| r[i][3] = t[i]);
        r
    }
    // Row-major 4x4 from the binding's rows a, b, c (axes) and d (translation), inverted as a rigid motion.
    fn rigid_inverse(b: &Mat4) -> M {
        let m = b.to_cols_array_2d().map(|c| c.map(f64::from));
        let mut r = [[0.0; 4]; 4];
        for i in 0..3 {
            for j in 0..3 {
                r[i][j] = m[i][j]; // transpose: row i of the inverse is axis i
            }
            r[i][3] = -(0..3).map(|j| m[i][j] * m[3][j]).sum::<f64>();
        }
        r[3][3] = 1.0;
        r
    }
    let size = 2.0; // the wasp spans about 2.6 units; tolerance 1e-4 of that
    for time in [0.0f32, 0.37, 1.3, 2.9, 5.5] {
        let pose = pose_at(&s, &clip, time);
        let mut world: Vec<M> = Vec::new();
        for (i, j) in s.joints().iter().enumerate() {
            let off = if i == 0 { pose.root_translation } else { j.offset };
            let d = pose.dofs[i].as_dvec3();
            let local = mul(
                &trans(off.as_dvec3().to_array()),
                &mul(&rot(2, d.z), &mul(&rot(1, d.y), &rot(0, d.x))),
            );
            world.push(match j.parent {
                Some(p) => mul(&world[p], &local),
                None => local,
            });
        }
        let mats: Vec<M> = world
            .iter()
            .zip(k.bindings().unwrap())
            .map(|(w, b)| mul(w, &rigid_inverse(b)))
            .collect();
        let lib = {
            let bind = bind_world_from_joint(&s, &k, &Pose::from_file(&s));
            let m = skinning_matrices(&world_from_joint(&s, &pose), &bind);
            skin_vertices(k.positions(), k.normals(), k.weights().unwrap(), &m, Method::Linear).0
        };
        let weights = k.weights().unwrap();
        for (v, p) in k.positions().iter().enumerate() {
            let p = p.as_dvec3();
            let (js, ws) = weights.row(v);
            let mut out = [0.0f64; 3];
            for (&j, &w) in js.iter().zip(ws) {
                let m = &mats[j as usize];
                for (r, o) in out.iter_mut().enumerate() {
                    *o += w as f64 * (m[r][0] * p.x + m[r][1] * p.y + m[r][2] * p.z + m[r][3]);
                }
            }
            let err = (lib[v].as_dvec3() - glam::DVec3::from_array(out)).abs().max_element();
            assert!(err < 1e-4 * size, "t = {time}, vertex {v}: off by {err}");
        }
    }
}

#[test]
fn dual_quaternion_equals_linear_blend_for_single_influence_vertices() {
    let (Some(s), Some(k), Some(a)) = (
        load_skel("wasp.skel"),
        load_skin("wasp.skin"),
        common::cse169("wasp_walk.anim"),
    ) else {
        return;
    };
    let clip = formats::load_anim(&a).unwrap().value;
    let pose = pose_at(&s, &clip, 1.7);
    let m = skinning_matrices(&world_from_joint(&s, &pose), k.bindings().unwrap());
    let w = k.weights().unwrap();
    let (lp, ln) = skin_vertices(k.positions(), k.normals(), w, &m, Method::Linear);
    let (dp, dn) = skin_vertices(k.positions(), k.normals(), w, &m, Method::DualQuaternion);
    let (rp, _) = skin_vertices(k.positions(), k.normals(), w, &m, Method::Rigid);
    let mut single = 0;
    for v in 0..k.vertex_count() {
        if w.row(v).0.len() == 1 {
            single += 1;
            assert!(close(lp[v], dp[v], 1e-5), "vertex {v}: {} vs {}", lp[v], dp[v]);
            assert!(close(ln[v], dn[v], 1e-5));
            assert_eq!(lp[v], rp[v]);
        }
    }
    assert_eq!(single, 634);
}
