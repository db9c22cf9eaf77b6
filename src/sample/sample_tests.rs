//! Tests of the sample rigs.
#![allow(clippy::unwrap_used)]

use glam::Vec3;

use super::rigs::{ARM_GAP, FINGER_RADIUS, tube_rig};
use super::tube::total_vertices;
use super::*;

#[test]
fn walk_clip_swings_the_legs_half_a_cycle_apart_within_limits() {
    let rig = make_sample(SampleKind::Creature, 2000).expect("sample");
    let skel = &rig.skeleton;
    let clip = walk_clip(skel, 1.2);
    assert_eq!(clip.channels.len(), crate::model::Clip::channels_for(skel.len()));
    let hip_l = skel.find("hip_l")[0];
    let hip_r = skel.find("hip_r")[0];
    let knee_l = skel.find("knee_l")[0];
    for k in 0..40 {
        let t = k as f32 * 0.07;
        let a = crate::model::pose_at(skel, &clip, t);
        let b = crate::model::pose_at(skel, &clip, t + 0.6);
        assert!((a.dofs[hip_l].x - b.dofs[hip_r].x).abs() < 1e-3, "t = {t}");
        assert!(a.dofs[knee_l].x >= 0.0 && a.dofs[knee_l].x <= 2.5);
    }
    // Hand-worked: at t = 0 the left hip is forward (-0.075 - 0.425 = -0.5), the right back (0.35).
    let p = crate::model::pose_at(skel, &clip, 0.0);
    assert!((p.dofs[hip_l].x + 0.5).abs() < 1e-5 && (p.dofs[hip_r].x - 0.35).abs() < 1e-5);
}

const TARGETS: [usize; 3] = [1_000, 10_000, 100_000];

fn parts(kind: SampleKind, target: usize) -> (Sample, Vec<Range<usize>>) {
    build(kind, target).unwrap()
}

fn joints_named(skel: &Skeleton, names: &[&str]) -> Vec<u16> {
    names.iter().map(|n| skel.find(n)[0] as u16).collect()
}

/// Vertices whose heaviest joint is one of `joints`.
fn vertices_of(sample: &Sample, joints: &[u16]) -> Vec<Vec3> {
    let w = sample.skin.weights().unwrap();
    let p = sample.skin.positions();
    (0..p.len())
        .filter(|&v| joints.contains(&w.dominant(v).unwrap()))
        .map(|v| p[v])
        .collect()
}

fn min_distance(a: &[Vec3], b: &[Vec3]) -> f32 {
    a.iter()
        .flat_map(|p| b.iter().map(move |q| p.distance(*q)))
        .fold(f32::INFINITY, f32::min)
}

#[test]
fn names_round_trip() {
    for kind in SampleKind::ALL {
        assert_eq!(SampleKind::from_name(kind.name()), Some(kind));
    }
    assert_eq!(SampleKind::from_name(" Creature "), Some(SampleKind::Creature));
    assert_eq!(SampleKind::from_name("dragon"), None);
}

#[test]
fn vertex_count_is_within_ten_percent() {
    for kind in SampleKind::ALL {
        for target in TARGETS {
            let n = make_sample(kind, target).unwrap().skin.vertex_count();
            assert!(n * 10 >= target * 9 && n * 10 <= target * 11, "{kind:?} {target}: {n}");
        }
    }
}

#[test]
fn planned_count_is_within_bounds_for_many_targets() {
    for kind in SampleKind::ALL {
        let mut rig = rig(kind);
        let rest = rest_positions(&rig.joints);
        let spines: Vec<Spine> = rig.tubes.drain(..).map(|t| Spine::new(&t, &rest)).collect();
        let mut targets: Vec<usize> = (0..3000).step_by(7).collect();
        targets.extend((1..200).map(|i| i * 5_113));
        targets.extend([1_000_000, 10_000_000]);
        for target in targets {
            let t = target.max(MIN_VERTICES);
            let n = total_vertices(&plan(&spines, t).unwrap());
            assert!(n * 10 >= t * 9 && n * 10 <= t * 11, "{kind:?} {target}: {n}");
            if t >= 2_000 {
                assert!(n.abs_diff(t) * 100 <= t, "{kind:?} {target}: {n} is more than 1% off");
            }
        }
    }
}

#[test]
fn tiny_and_huge_targets() {
    for kind in SampleKind::ALL {
        let n = make_sample(kind, 0).unwrap().skin.vertex_count();
        assert!((270..=330).contains(&n), "{kind:?}: {n}");
    }
    assert!(make_sample(SampleKind::Tube, usize::MAX).is_err());
}

#[test]
fn triangles_face_outward() {
    for kind in SampleKind::ALL {
        for target in TARGETS {
            let s = make_sample(kind, target).unwrap();
            let (p, nr) = (s.skin.positions(), s.skin.normals());
            let tris = s.skin.triangles();
            let bad = tris
                .iter()
                .filter(|t| {
                    let [a, b, c] = t.map(|i| i as usize);
                    let face = (p[b] - p[a]).cross(p[c] - p[a]);
                    face.dot(nr[a] + nr[b] + nr[c]) <= 0.0
                })
                .count();
            assert!(
                bad * 100 <= tris.len(),
                "{kind:?} {target}: {bad} of {} inward",
                tris.len()
            );
            assert_eq!(bad, 0, "{kind:?} {target}");
            assert!(nr.iter().all(|n| (n.length() - 1.0).abs() < 1e-5));
        }
    }
}

#[test]
fn every_part_is_closed_and_consistently_oriented() {
    for kind in SampleKind::ALL {
        for target in TARGETS {
            let (s, parts) = parts(kind, target);
            assert_eq!(parts.last().unwrap().end, s.skin.vertex_count());
            let part_of = |v: u32| parts.iter().position(|r| r.contains(&(v as usize))).unwrap();
            let mut edges: Vec<(u32, u32)> = Vec::with_capacity(s.skin.triangles().len() * 3);
            for t in s.skin.triangles() {
                assert!(t[0] != t[1] && t[1] != t[2] && t[0] != t[2]);
                assert!(part_of(t[1]) == part_of(t[0]) && part_of(t[2]) == part_of(t[0]));
                edges.extend([(t[0], t[1]), (t[1], t[2]), (t[2], t[0])]);
            }
            edges.sort_unstable();
            // Each directed edge once, and its reverse present: every edge is on exactly two triangles,
            // which traverse it in opposite directions.
            assert!(
                edges.windows(2).all(|w| w[0] != w[1]),
                "{kind:?} {target}: repeated directed edge"
            );
            assert!(
                edges.iter().all(|&(a, b)| edges.binary_search(&(b, a)).is_ok()),
                "{kind:?}: open edge"
            );
            // A closed genus-0 surface per part: V - E + F = 2.
            let (v, e, f) = (s.skin.vertex_count(), edges.len() / 2, s.skin.triangles().len());
            assert_eq!(v + f, e + 2 * parts.len());
        }
    }
}

#[test]
fn weights_are_valid_rows() {
    for kind in SampleKind::ALL {
        let s = make_sample(kind, 10_000).unwrap();
        let w = s.skin.weights().unwrap();
        assert_eq!(w.len(), s.skin.vertex_count());
        for v in 0..w.len() {
            let (js, ws) = w.row(v);
            assert!((1..=4).contains(&js.len()), "{kind:?} vertex {v}");
            assert!(ws.iter().all(|&x| x > 0.0));
            assert!((ws.iter().sum::<f32>() - 1.0).abs() < 1e-6);
            assert!(js.iter().all(|&j| (j as usize) < s.skeleton.len()));
        }
        // Every joint on a tube influences something; blends exist.
        assert!((0..w.len()).any(|v| w.row(v).0.len() == 2));
    }
}

#[test]
fn weight_formula_on_the_tube() {
    let rig = tube_rig();
    let rest = rest_positions(&rig.joints);
    let spine = Spine::new(&rig.tubes[0], &rest);
    assert_eq!(spine.pivots, vec![0.0, 1.0, 2.0, 3.0]);
    assert!((spine.length - 3.25).abs() < 1e-6);
    let row = |s: f32| {
        let r = spine.influences(s);
        r.entries[..r.len].to_vec()
    };
    assert_eq!(row(0.0), vec![(0, 1.0)]);
    assert_eq!(row(0.5), vec![(0, 1.0)]);
    assert_eq!(row(1.0), vec![(0, 0.5), (1, 0.5)]);
    // h = 0.25 at pivot 1: the window is (0.75, 1.25); at 0.875, x = 0.25, smoothstep = 0.15625.
    assert_eq!(row(0.875), vec![(0, 0.84375), (1, 0.15625)]);
    assert_eq!(row(1.25), vec![(1, 1.0)]);
    // Pivot 3 (leaf of 0.25 after it): h = 0.0625.
    assert_eq!(row(2.93), vec![(2, 1.0)]);
    assert_eq!(row(3.0), vec![(2, 0.5), (3, 0.5)]);
    assert_eq!(row(3.1), vec![(3, 1.0)]);
    assert_eq!(row(3.25), vec![(3, 1.0)]);
}

#[test]
fn tube_geometry() {
    let s = make_sample(SampleKind::Tube, 10_000).unwrap();
    let names: Vec<&str> = s.skeleton.joints().iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["root", "joint1", "joint2", "end"]);
    let (lo, hi) = s.skin.bounds().unwrap();
    assert!((lo.y + 0.25).abs() < 1e-5 && (hi.y - 3.5).abs() < 1e-5, "{lo} {hi}");
    for p in s.skin.positions() {
        assert!(Vec3::new(p.x, 0.0, p.z).length() <= 0.25 + 1e-5);
    }
    let end = &s.skeleton.joints()[3];
    assert!((end.box_max.unwrap().y - 0.5).abs() < 1e-5);
}

#[test]
fn bindings_are_the_zero_pose() {
    for kind in SampleKind::ALL {
        let s = make_sample(kind, 1_000).unwrap();
        let b = s.skin.bindings().unwrap();
        assert_eq!(b.len(), s.skeleton.len());
        let rest = rest_positions(s.skeleton.joints());
        for (m, p) in b.iter().zip(&rest) {
            assert!((m.w_axis.truncate() - *p).length() < 1e-6);
            assert!(m.x_axis.truncate() == Vec3::X && m.y_axis.truncate() == Vec3::Y);
        }
        // Every joint has a box that holds its pivot.
        for j in s.skeleton.joints() {
            let (lo, hi) = (j.box_min.unwrap(), j.box_max.unwrap());
            assert!(lo.cmple(Vec3::ZERO).all() && hi.cmpge(Vec3::ZERO).all(), "{}", j.name);
        }
    }
}

#[test]
fn same_inputs_same_bits() {
    for kind in SampleKind::ALL {
        let (a, b) = (make_sample(kind, 5_000).unwrap(), make_sample(kind, 5_000).unwrap());
        assert_eq!(a, b);
        let bits = |s: &Sample| -> Vec<u32> {
            s.skin
                .positions()
                .iter()
                .chain(s.skin.normals())
                .flat_map(|v| v.to_array())
                .map(f32::to_bits)
                .collect()
        };
        assert_eq!(bits(&a), bits(&b));
    }
}

#[test]
fn neighbouring_fingers_do_not_touch() {
    let (s, _) = parts(SampleKind::Arm, 20_000);
    let finger = |name: &str| {
        vertices_of(
            &s,
            &joints_named(&s.skeleton, &[&format!("{name}_1"), &format!("{name}_2")]),
        )
    };
    let (index, middle, ring) = (finger("index"), finger("middle"), finger("ring"));
    assert!(index.len() > 100 && middle.len() > 100);
    let gap = FINGER_RADIUS / 3.0;
    for (a, b) in [(&index, &middle), (&middle, &ring)] {
        let d = min_distance(a, b);
        assert!(d > 0.0 && d >= gap - 1e-4, "fingers {d} apart");
    }
}

#[test]
fn creature_arms_clear_the_torso() {
    let (s, _) = parts(SampleKind::Creature, 20_000);
    let torso = vertices_of(
        &s,
        &joints_named(&s.skeleton, &["root", "spine", "chest", "neck", "head"]),
    );
    for side in ["l", "r"] {
        let names = [
            format!("shoulder_{side}"),
            format!("elbow_{side}"),
            format!("wrist_{side}"),
        ];
        let arm = vertices_of(&s, &joints_named(&s.skeleton, &names.each_ref().map(String::as_str)));
        let d = min_distance(&torso, &arm);
        assert!(
            (ARM_GAP - 1e-4..2.0 * ARM_GAP).contains(&d),
            "{side}: arm {d} from torso"
        );
    }
    // Left is +X.
    let wrist_l = s.skeleton.find("wrist_l")[0];
    assert!(s.skin.bindings().unwrap()[wrist_l].w_axis.x > 0.0);
}

#[test]
fn chain_tube_weights_follow_the_formula() {
    let s = chain_tube(10, 20_000).unwrap();
    assert_eq!(s.skeleton.len(), 10);
    let rings = (20_000 - 2) / 64;
    assert_eq!(s.skin.vertex_count(), rings * 64 + 2);
    let w = s.skin.weights().unwrap();
    for (v, p) in s.skin.positions().iter().enumerate() {
        let (j, x) = w.row(v);
        let near = (p.x - p.x.round()).abs() < 0.25 && p.x.round() >= 1.0 && p.x.round() < 10.0;
        if near {
            // Halfway at the pivot itself.
            assert_eq!(j, &[p.x.round() as u16 - 1, p.x.round() as u16]);
            if p.x == p.x.round() {
                assert!((x[0] - 0.5).abs() < 1e-6);
            }
        } else {
            assert_eq!(j, &[(p.x.clamp(0.0, 9.99).floor()) as u16], "vertex {v} at {p}");
        }
    }
    assert!(chain_tube(0, 1000).is_err());
}
