use proptest::prelude::*;

use super::*;

#[test]
fn vertex_partners_pair_reflections_and_leave_lone_vertices_alone() {
    let p = [
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(-1.0, 0.0, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::new(2.0, 0.5, 0.0),
        Vec3::new(-1.0005, 2.0, 0.0),
        Vec3::new(1.0, 2.0, 0.0),
    ];
    let got = vertex_partners(&p, Axis::X, 0.01);
    assert_eq!(got, vec![Some(1), Some(0), Some(2), None, Some(5), Some(4)]);
}
use crate::formats::skel::read_skel;
use crate::model::{Pose, world_from_joint};

/// Joints of the weight tests: 0 root and 5 spine are their own partners; 1/2 and 3/4 are pairs.
const JOINTS: usize = 6;

fn pairs() -> JointMirror {
    JointMirror::from_pairs(JOINTS, [(1, 2), (3, 4), (0, 0), (5, 5)]).unwrap()
}

fn skeleton(text: &str) -> (Skeleton, Vec<Mat4>) {
    let skel = read_skel(text.as_bytes(), None).unwrap().value;
    let world = world_from_joint(&skel, &Pose::zero(&skel));
    (skel, world)
}

fn weights(rows: &[Row]) -> Weights {
    Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap().0
}

fn row(w: &Weights, v: usize) -> Row {
    let mut r = Vec::new();
    w.row_pairs(v, &mut r);
    sort_row(&mut r);
    r
}

fn dense(w: &Weights, v: usize) -> [f32; JOINTS] {
    let mut d = [0.0; JOINTS];
    let (js, ws) = w.row(v);
    for (&j, &x) in js.iter().zip(ws) {
        d[j as usize] += x;
    }
    d
}

/// Largest difference between two weight sets over every vertex and joint.
fn max_diff(a: &Weights, b: &Weights) -> f32 {
    assert_eq!(a.len(), b.len());
    let mut m = 0.0f32;
    for v in 0..a.len() {
        assert_eq!(a.row(v).0.is_empty(), b.row(v).0.is_empty(), "vertex {v}");
        for (x, y) in dense(a, v).iter().zip(dense(b, v)) {
            m = m.max((x - y).abs());
        }
    }
    m
}

/// A grid symmetric about x = 0 (7 columns, the middle one on the plane), 70 vertices.
fn grid() -> Vec<Vec3> {
    let mut p = Vec::new();
    for z in [0.0, 0.3] {
        for y in 0..5 {
            for x in -3..=3 {
                p.push(Vec3::new(x as f32 * 0.25, y as f32 * 0.5, z));
            }
        }
    }
    p
}

/// Deterministic pseudo-random rows over [`JOINTS`] joints, each with joint 0 (never alone) and summing to 1.
fn random_rows(n: usize, seed: u64) -> Vec<Row> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    (0..n)
        .map(|_| {
            let mut r = vec![(0u16, 0.1 + (next() % 1000) as f32 / 1000.0)];
            for _ in 0..1 + next() % 2 {
                r.push((1 + (next() % 5) as u16, 0.05 + (next() % 1000) as f32 / 1000.0));
            }
            sort_row(&mut r);
            let sum: f64 = r.iter().map(|x| x.1 as f64).sum();
            r.iter_mut().for_each(|x| x.1 = (x.1 as f64 / sum) as f32);
            r
        })
        .collect()
}

fn flip(p: &[Vec3], w: &Weights, locks: &Locks) -> (Weights, MirrorReport) {
    mirror_weights(p, w, &pairs(), Axis::X, MirrorMode::Flip, 1e-4, locks)
}

fn copy(p: &[Vec3], w: &Weights, from_positive: bool) -> (Weights, MirrorReport) {
    let mode = MirrorMode::Copy { from_positive };
    mirror_weights(p, w, &pairs(), Axis::X, mode, 1e-4, &Locks::none())
}

#[test]
fn mirrored_names_follow_the_common_conventions() {
    let cases: &[(&str, &[&str])] = &[
        ("arm_l", &["arm_r"]),
        ("Arm_L", &["Arm_R"]),
        ("l_arm", &["r_arm"]),
        ("L_Arm", &["R_Arm"]),
        ("upper_arm.L", &["upper_arm.R"]),
        ("hand.R.001", &["hand.L.001"]),
        ("foot-L", &["foot-R"]),
        ("LeftArm", &["RightArm"]),
        ("mixamorig:RightHandIndex1", &["mixamorig:LeftHandIndex1"]),
        ("left_foot", &["right_foot"]),
        ("LEFT_EYE", &["RIGHT_EYE"]),
        ("armL", &["armR"]),
        ("RArm", &["LArm"]),
        ("L", &["R"]),
        // Two conventions at once: the word first, then the token.
        ("Left_arm_l", &["Right_arm_l", "Left_arm_r"]),
        ("spine", &[]),
        ("Lower", &[]),
        ("ball", &[]),
        ("BALL", &[]),
        ("", &[]),
    ];
    for (name, expected) in cases {
        assert_eq!(mirrored_names(name), *expected, "{name}");
        for m in mirrored_names(name) {
            assert!(mirrored_names(&m).contains(&name.to_string()), "{name} -> {m} -> back");
        }
    }
}

#[test]
fn joints_pair_by_name_and_mismatched_pivots_are_flagged() {
    let (skel, world) = skeleton(
        "balljoint root { offset 0 1 0
           balljoint arm_l { offset 1 0 0 balljoint hand_l { offset 1 0 0 } }
           balljoint arm_r { offset -1 0 0 balljoint hand_r { offset -1.2 0 0 } }
           balljoint spine { offset 0 1 0 }
           balljoint LeftLeg { offset 0.3 -1 0 }
           balljoint RightLeg { offset -0.3 -1 0 }
           balljoint tail { offset 0.5 0 -1 }
         }",
    );
    let m = mirror_joints(&skel, &world, Axis::X, 0.01);
    // root 0, arm_l 1, hand_l 2, arm_r 3, hand_r 4, spine 5, LeftLeg 6, RightLeg 7, tail 8.
    assert_eq!(m.partners(), &[0, 3, 4, 1, 2, 5, 7, 6, 8]);
    use PairedBy::*;
    assert_eq!(
        m.paired_by(),
        &[Plane, Name, Name, Name, Name, Plane, Name, Name, Unpaired]
    );
    assert_eq!(m.unpaired(), &[8]);
    assert_eq!(m.name_mismatches().len(), 1);
    let mm = &m.name_mismatches()[0];
    assert_eq!((mm.joint, mm.partner), (2, 4));
    assert!((mm.distance - 0.2).abs() < 1e-5);
    assert_eq!(m.partner(3), 1);
    assert_eq!(m.partner(200), 200, "joints past the end map to themselves");
}

#[test]
fn joints_pair_by_position_when_names_say_nothing() {
    let (skel, world) = skeleton(
        "balljoint j0 { offset 0 0 0
           balljoint j1 { offset 0.5 1 0 }
           balljoint j2 { offset -0.5 1 0 }
           balljoint j3 { offset 0.7 0 0 }
           balljoint j4 { offset -0.75 0 0 }
           balljoint j5 { offset 0.3 0 0.2 }
           balljoint j6 { offset -0.3 0 0.2 }
           balljoint j7 { offset -0.3 0 0.2 }
           balljoint j8 { offset 0.001 2 0 }
           balljoint x_l { offset 2 0 0 }
           balljoint x_l { offset 3 0 0 }
           balljoint x_r { offset -2 0 0 }
         }",
    );
    let m = mirror_joints(&skel, &world, Axis::X, 0.01);
    // j3/j4 are 0.05 from mirror images: too far. j5's nearest mirror is j6 (tie with j7: lower index), and
    // j6's is j5; j7's is j5 too but not mutual. j8 lies on the plane. The repeated name x_l is not used, so
    // the first x_l pairs with x_r by position and the second stays alone.
    assert_eq!(m.partners(), &[0, 2, 1, 3, 4, 6, 5, 7, 8, 11, 10, 9]);
    use PairedBy::*;
    assert_eq!(
        m.paired_by(),
        &[
            Plane, Position, Position, Unpaired, Unpaired, Position, Position, Unpaired, Plane, Position, Unpaired,
            Position
        ]
    );
    assert_eq!(m.unpaired(), &[3, 4, 7, 10]);
    assert!(m.name_mismatches().is_empty());
    // A looser tolerance pairs j3 with j4.
    let m = mirror_joints(&skel, &world, Axis::X, 0.1);
    assert_eq!((m.partner(3), m.partner(4)), (4, 3));
    // Across Y instead, with the plane at y = 1: j1 and j2 are on it.
    let m = mirror_joints(&skel, &world, super::Plane::at(Axis::Y, 1.0), 0.01);
    assert_eq!(&m.paired_by()[1..3], &[Plane, Plane]);
}

#[test]
fn from_pairs_rejects_conflicts() {
    assert!(matches!(
        JointMirror::from_pairs(3, [(0, 1), (1, 2)]),
        Err(MirrorError::Conflict { joint: 1, .. })
    ));
    assert!(matches!(
        JointMirror::from_pairs(3, [(0, 3)]),
        Err(MirrorError::OutOfRange { joint: 3, joints: 3 })
    ));
    let m = JointMirror::from_pairs(3, [(0, 2), (2, 0)]).unwrap();
    assert_eq!((m.partners(), m.unpaired()), (&[2u16, 1, 0][..], &[1usize][..]));
}

/// Joints: 0 root, 1 arm_l, 2 arm_r, 3 spine.
fn four_vertices() -> (Vec<Vec3>, Weights, JointMirror) {
    let p = vec![
        Vec3::new(1.0, 0.0, 0.0),
        Vec3::new(-1.0, 0.0, 0.0),
        Vec3::new(0.0, 1.0, 0.0),
        Vec3::new(-2.0, 0.0, 0.0),
    ];
    let w = weights(&[
        vec![(1, 0.75), (0, 0.25)],
        vec![(2, 0.5), (3, 0.5)],
        vec![(1, 0.6), (3, 0.4)],
        vec![(0, 1.0)],
    ]);
    (p, w, JointMirror::from_pairs(4, [(1, 2)]).unwrap())
}

#[test]
fn copy_by_hand() {
    let (p, w, m) = four_vertices();
    let (out, rep) = mirror_weights(&p, &w, &m, Axis::X, MirrorMode::default(), 1e-4, &Locks::none());
    assert_eq!(row(&out, 0), row(&w, 0), "the source side is kept");
    assert_eq!(row(&out, 1), vec![(0, 0.25), (2, 0.75)]);
    assert_eq!(row(&out, 2), vec![(1, 0.3), (2, 0.3), (3, 0.4)]);
    assert_eq!(row(&out, 3), vec![(0, 1.0)], "no partner at (2, 0, 0)");
    let expected = MirrorReport {
        vertices_written: 2,
        vertices_changed: 2,
        on_plane: 1,
        vertices_without_partner: 1,
        without_partner: vec![3],
        partner_unweighted: 0,
        locks_overridden: 0,
    };
    assert_eq!(rep, expected);

    // From the negative side: vertex 0 takes vertex 1's row; vertex 3 is now a source.
    let mode = MirrorMode::Copy { from_positive: false };
    let (out, rep) = mirror_weights(&p, &w, &m, Axis::X, mode, 1e-4, &Locks::none());
    assert_eq!(row(&out, 0), vec![(1, 0.5), (3, 0.5)]);
    assert_eq!(row(&out, 1), row(&w, 1));
    assert_eq!(row(&out, 3), row(&w, 3));
    assert_eq!((rep.vertices_written, rep.vertices_without_partner), (2, 0));

    // Locking the spine: vertex 1 keeps its 0.5 on it and the mirrored rest fills the other half.
    let (out, rep) = mirror_weights(&p, &w, &m, Axis::X, MirrorMode::default(), 1e-4, &Locks::of([3]));
    assert_eq!(row(&out, 1), vec![(0, 0.125), (2, 0.375), (3, 0.5)]);
    assert_eq!(row(&out, 2), vec![(1, 0.3), (2, 0.3), (3, 0.4)]);
    assert_eq!(rep.locks_overridden, 0);
    // Locking arm_r, which the mirrored row of vertex 1 is mostly on: vertex 1 keeps 0.5 on arm_r.
    let (out, _) = mirror_weights(&p, &w, &m, Axis::X, MirrorMode::default(), 1e-4, &Locks::of([2]));
    assert_eq!(row(&out, 1), vec![(0, 0.5), (2, 0.5)]);
}

#[test]
fn flip_twice_is_the_identity_on_a_symmetric_mesh() {
    let p = grid();
    let w = weights(&random_rows(p.len(), 7));
    let (once, rep) = flip(&p, &w, &Locks::none());
    assert_eq!(rep.on_plane, 10);
    assert_eq!(rep.vertices_without_partner, 0);
    assert_eq!(rep.vertices_written, p.len());
    assert!(max_diff(&once, &w) > 0.1, "flipping random weights changes them");
    // Vertex 0 at (-0.75, 0, 0) takes vertex 6's row at (0.75, 0, 0), swapped.
    let swapped: Row = {
        let mut r: Row = row(&w, 6).iter().map(|&(j, x)| (pairs().partner(j), x)).collect();
        sort_row(&mut r);
        r
    };
    assert!(
        row(&once, 0)
            .iter()
            .zip(&swapped)
            .all(|(a, b)| a.0 == b.0 && (a.1 - b.1).abs() < 1e-6)
    );
    let (twice, _) = flip(&p, &once, &Locks::none());
    assert!(max_diff(&twice, &w) < 1e-6);
}

#[test]
fn copy_is_idempotent_and_makes_weights_symmetric() {
    let p = grid();
    let w = weights(&random_rows(p.len(), 11));
    for from_positive in [true, false] {
        let (c1, rep) = copy(&p, &w, from_positive);
        assert_eq!(
            (rep.on_plane, rep.vertices_written, rep.vertices_without_partner),
            (10, 40, 0)
        );
        for (v, q) in p.iter().enumerate() {
            if (q.x > 0.0) == from_positive && q.x != 0.0 {
                assert_eq!(row(&c1, v), row(&w, v), "source vertex {v} is kept");
            }
        }
        // Symmetric: flipping changes nothing.
        assert!(max_diff(&flip(&p, &c1, &Locks::none()).0, &c1) < 1e-6);
        let (c2, _) = copy(&p, &c1, from_positive);
        assert!(max_diff(&c2, &c1) < 1e-6, "idempotent");
        // Symmetric weights are left as they are, whichever side is the source.
        let (c3, _) = copy(&p, &c1, !from_positive);
        assert!(max_diff(&c3, &c1) < 1e-6);
    }
}

#[test]
fn locked_joints_never_change() {
    let p = grid();
    let w = weights(&random_rows(p.len(), 3));
    let locks = Locks::of([1, 5]);
    for mode in [
        MirrorMode::Flip,
        MirrorMode::Copy { from_positive: true },
        MirrorMode::Copy { from_positive: false },
    ] {
        let (out, rep) = mirror_weights(&p, &w, &pairs(), Axis::X, mode, 1e-4, &locks);
        assert_eq!(rep.locks_overridden, 0);
        assert!(rep.vertices_changed > 0);
        for v in 0..p.len() {
            let (a, b) = (dense(&w, v), dense(&out, v));
            assert_eq!((a[1], a[5]), (b[1], b[5]), "{mode:?} vertex {v}");
            assert!((b.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
    }
}

#[test]
fn vertices_without_partner_are_reported_and_kept() {
    let mut p = grid();
    let n = p.len();
    // 150 strays on the negative side with no mirror image, then one vertex whose partner is unweighted and
    // one unweighted vertex whose partner is weighted.
    p.extend((0..150).map(|k| Vec3::new(-1.0 - k as f32 * 0.01, 7.0, 0.0)));
    p.push(Vec3::new(-0.5, 9.0, 0.0));
    p.push(Vec3::new(0.5, 9.0, 0.0));
    let mut rows = random_rows(n + 152, 5);
    rows[n + 150] = vec![(3, 1.0)];
    rows[n + 151] = Vec::new();
    let w = weights(&rows);
    let (out, rep) = flip(&p, &w, &Locks::none());
    assert_eq!(rep.vertices_without_partner, 150);
    assert_eq!(rep.without_partner, (n..n + 100).collect::<Vec<_>>());
    assert_eq!(rep.partner_unweighted, 1);
    for v in n..n + 151 {
        assert_eq!(row(&out, v), row(&w, v), "vertex {v}");
    }
    assert_eq!(
        row(&out, n + 151),
        vec![(4, 1.0)],
        "an unweighted vertex takes its partner's weights"
    );
    // Copying from the positive side: the strays are on the target side, so still without partner.
    let (out, rep) = copy(&p, &w, true);
    assert_eq!(rep.vertices_without_partner, 150);
    assert_eq!(row(&out, n + 7), row(&w, n + 7));
    // From the negative side they are sources and need none.
    let (_, rep) = copy(&p, &w, false);
    assert_eq!(rep.vertices_without_partner, 0);
}

#[test]
fn nearest_ties_go_to_the_lowest_index_and_results_are_deterministic() {
    // Vertices 1 and 2 share a position: vertex 0's partner is 1.
    let p = vec![Vec3::X, -Vec3::X, -Vec3::X];
    let w = weights(&[vec![(0, 1.0)], vec![(1, 1.0)], vec![(3, 1.0)]]);
    let (out, _) = copy(&p, &w, false);
    assert_eq!(row(&out, 0), vec![(2, 1.0)]);
    // The same with 40 copies among 560 other points: the lowest copy, 13, wins.
    let mut p: Vec<Vec3> = (0..600)
        .map(|k| Vec3::new(k as f32 * 0.01 - 3.0, (k % 7) as f32, 0.0))
        .collect();
    let copies: Vec<usize> = (0..40).map(|k| 13 + k * 11).collect();
    for &k in &copies {
        p[k] = Vec3::new(-1.0, 0.5, 0.0);
    }
    p[599] = Vec3::new(1.0, 0.5, 0.0);
    let mut rows = vec![vec![(0u16, 1.0f32)]; 600];
    rows[13] = vec![(1, 1.0)];
    let w = weights(&rows);
    let (out, _) = copy(&p, &w, false);
    assert_eq!(row(&out, 599), vec![(2, 1.0)]);

    // Many vertices (several parallel chunks), some repeated: the same output every time.
    let mut p = Vec::new();
    for y in 0..120 {
        for x in -50..=50 {
            p.push(Vec3::new(x as f32 * 0.01, y as f32 * 0.01, 0.0));
        }
    }
    let dup: Vec<Vec3> = p[..3000].to_vec();
    p.extend(dup);
    let w = weights(&random_rows(p.len(), 13));
    let tol = default_tolerance(&p);
    let run = || mirror_weights(&p, &w, &pairs(), Axis::X, MirrorMode::Flip, tol, &Locks::of([3]));
    let first = run();
    for _ in 0..3 {
        assert_eq!(run(), first);
    }
    assert_eq!(first.1.vertices_without_partner, 0);
}

#[test]
fn planes_and_tolerances() {
    let plane = Plane::at(Axis::Z, 2.0);
    assert_eq!(plane.reflect(Vec3::new(1.0, 2.0, 3.0)), Vec3::new(1.0, 2.0, 1.0));
    assert_eq!(plane.signed_distance(Vec3::new(0.0, 0.0, 1.5)), -0.5);
    assert_eq!(Plane::from(Axis::Y).reflect(Vec3::ONE), Vec3::new(1.0, -1.0, 1.0));
    let t = default_tolerance(&[Vec3::ZERO, Vec3::new(3.0, 4.0, 0.0), Vec3::NAN]);
    assert!((t - 5e-4).abs() < 1e-9);
    assert_eq!(default_tolerance(&[]), 0.0);
    // Serialized forms.
    assert_eq!(serde_json::to_string(&Axis::Z).unwrap(), r#""z""#);
    let mode: MirrorMode = serde_json::from_str(r#"{"copy":{}}"#).unwrap();
    assert_eq!(mode, MirrorMode::Copy { from_positive: true });
    let mode: MirrorMode = serde_json::from_str(r#""flip""#).unwrap();
    assert_eq!(mode, MirrorMode::Flip);
    let plane: Plane = serde_json::from_str(r#"{"axis":"y"}"#).unwrap();
    assert_eq!(plane, Plane::new(Axis::Y));
}

fn mode_strategy() -> impl Strategy<Value = MirrorMode> {
    prop_oneof![
        Just(MirrorMode::Flip),
        any::<bool>().prop_map(|from_positive| MirrorMode::Copy { from_positive }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn mirrored_weights_always_sum_to_one(
        raw in proptest::collection::vec(proptest::collection::vec((0u16..8, 0.0f32..1.0), 0..5), 1..80),
        xs in proptest::collection::vec(-4i32..=4, 80),
        strays in proptest::collection::vec(-1.0f32..1.0, 80),
        mode in mode_strategy(),
        locked in proptest::collection::vec(0usize..8, 0..3),
        tol in 0.0f32..0.3,
    ) {
        // Half the vertices on a symmetric lattice, half anywhere.
        let p: Vec<Vec3> = (0..raw.len())
            .map(|v| if v % 2 == 0 {
                Vec3::new(xs[v] as f32 * 0.25, (v / 9) as f32, 0.0)
            } else {
                Vec3::new(strays[v], strays[(v * 7) % 80], 0.5)
            })
            .collect();
        let rows: Vec<Row> = raw
            .iter()
            .map(|r| {
                let mut r = r.clone();
                sort_row(&mut r);
                r.retain(|x| x.1 > 0.0);
                let sum: f64 = r.iter().map(|x| x.1 as f64).sum();
                r.iter_mut().for_each(|x| x.1 = (x.1 as f64 / sum) as f32);
                r
            })
            .collect();
        let w = weights(&rows);
        let m = JointMirror::from_pairs(8, [(1, 2), (3, 4), (5, 7)]).unwrap();
        let locks = Locks::of(locked.iter().copied());
        let (out, rep) = mirror_weights(&p, &w, &m, Axis::X, mode, tol, &locks);
        prop_assert_eq!(out.len(), w.len());
        prop_assert!(rep.vertices_changed <= rep.vertices_written);
        for v in 0..out.len() {
            let (js, ws) = out.row(v);
            prop_assert!(ws.iter().all(|x| x.is_finite() && *x > 0.0));
            prop_assert!(js.iter().all(|&j| j < 8));
            if !w.row(v).0.is_empty() {
                prop_assert!(!js.is_empty(), "vertex {} lost its weights", v);
            }
            if !js.is_empty() {
                let sum: f64 = ws.iter().map(|&x| x as f64).sum();
                prop_assert!((sum - 1.0).abs() < 1e-6, "vertex {} sums to {}", v, sum);
            }
        }
    }
}
