use glam::{Mat4, Vec3};

use super::*;
use crate::model::{Limit, Row, Skin, Weights};
use crate::sample::{Sample, SampleKind, make_sample};

fn rig_of<'a>(s: &'a Sample, bind: &'a [Mat4], w: &'a Weights) -> Rig<'a> {
    Rig {
        weights: w,
        ..Rig::of(&s.skeleton, bind, &s.skin).unwrap()
    }
}

fn run(s: &Sample, w: &Weights, opts: &CheckOptions) -> CheckReport {
    let bind = s.skin.bindings().unwrap().to_vec();
    check(rig_of(s, &bind, w), None, opts, &|_, _| true).unwrap()
}

/// Each vertex wholly to its dominant joint.
fn rigid(w: &Weights) -> Weights {
    let joints: Vec<u16> = (0..w.len()).map(|v| w.dominant(v).unwrap()).collect();
    Weights::rigid(&joints)
}

fn tube() -> Sample {
    make_sample(SampleKind::Tube, 4000).unwrap()
}

fn only(kind: Kind, r: &CheckReport) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.kind == kind).collect()
}

/// The tube bent at `joint1` (pivot at y = 1.25) about z only, to 90 degrees each way.
fn bend_opts(method: crate::deform::Method) -> CheckOptions {
    CheckOptions {
        method,
        joints: Some(vec![1]),
        ..Default::default()
    }
}

fn bend_only(s: &mut Sample) {
    let mut j = s.skeleton.joint_mut(1).unwrap();
    j.set_limit(0, Some(Limit { lo: 0.0, hi: 0.0 }));
    j.set_limit(1, Some(Limit { lo: 0.0, hi: 0.0 }));
    let q = std::f32::consts::FRAC_PI_2;
    j.set_limit(2, Some(Limit { lo: -q, hi: q }));
}

/// Weights that blend `root` into `joint1` by smoothstep over two tube radii each side of the elbow at y = 1.
fn smooth_elbow(s: &Sample) -> Weights {
    let rows: Vec<Row> = s
        .skin
        .positions()
        .iter()
        .map(|p| {
            let t = crate::math::smoothstep((p.y - 1.0) / 1.0 + 0.5);
            [(0u16, 1.0 - t), (1u16, t)].into_iter().filter(|x| x.1 > 0.0).collect()
        })
        .collect();
    Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap().0
}

#[test]
fn rigid_weights_collapse_at_the_elbow_and_smooth_ones_do_not() {
    let mut s = tube();
    bend_only(&mut s);
    let smooth = smooth_elbow(&s);
    let pivot = s.skin.bindings().unwrap()[1].w_axis.truncate();
    assert_eq!(pivot.y, 1.0);
    let r = run(&s, &rigid(&smooth), &bend_opts(crate::deform::Method::Linear));
    let collapse = only(Kind::Collapse, &r);
    assert!(!collapse.is_empty(), "{:?}", r.counts);
    for f in &collapse {
        assert_eq!(f.joint, Some(1));
        let c = Vec3::from(f.region.centre);
        assert!((c.y - pivot.y).abs() < 0.3, "collapse away from the elbow: {c}");
        assert!(f.value >= 0.5);
    }
    let r = run(&s, &smooth, &bend_opts(crate::deform::Method::Linear));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(r.poses, 6);
}

#[test]
fn a_half_turn_twist_wraps_the_candy_under_linear_blend_not_dual_quaternions() {
    let mut s = tube();
    {
        let mut j = s.skeleton.joint_mut(1).unwrap();
        j.set_limit(0, Some(Limit { lo: 0.0, hi: 0.0 }));
        let pi = std::f32::consts::PI;
        // The tube runs along y: twist about it.
        j.set_limit(1, Some(Limit { lo: -pi, hi: pi }));
        j.set_limit(2, Some(Limit { lo: 0.0, hi: 0.0 }));
    }
    let w = s.skin.weights().unwrap().clone();
    let lbs = run(&s, &w, &bend_opts(crate::deform::Method::Linear));
    let collapse = only(Kind::Collapse, &lbs);
    assert!(!collapse.is_empty(), "{:?}", lbs.counts);
    assert!(collapse.iter().any(|f| f.value > 0.9), "{collapse:?}");
    let worst = collapse[0];
    assert!(matches!(worst.pose, PoseRef::Swing { degrees, .. } if degrees.abs() > 179.0));
    let dqs = run(&s, &w, &bend_opts(crate::deform::Method::DualQuaternion));
    assert!(
        only(Kind::Collapse, &dqs).is_empty(),
        "{:?}",
        only(Kind::Collapse, &dqs)
    );
}

/// The creature with half of each listed vertex's weight moved to `joint`.
fn planted(s: &Sample, joint: u16, vertices: &[u32]) -> Weights {
    let w = s.skin.weights().unwrap();
    let rows: Vec<(u32, Row)> = vertices
        .iter()
        .map(|&v| {
            let (js, ws) = w.row(v as usize);
            let mut r: Row = js.iter().zip(ws).map(|(&j, &x)| (j, x * 0.5)).collect();
            r.push((joint, 0.5));
            crate::adjust::rows::sort_row(&mut r);
            (v, r)
        })
        .collect();
    w.with_rows(&rows).unwrap()
}

/// A vertex and the welded neighbours around it.
fn patch(s: &Sample, centre: u32) -> Vec<u32> {
    let g = crate::adjust::MeshGraph::new(s.skin.positions(), s.skin.triangles());
    let k = g.node_of(centre as usize);
    let mut out: Vec<u32> = g.members(k).to_vec();
    for &u in g.neighbours(k) {
        out.extend_from_slice(g.members(u as usize));
    }
    out.sort_unstable();
    out
}

/// `bad` with the stray-weight fix applied to `region` (bound at the sample's bindings, nothing locked).
fn remove_stray(s: &Sample, bad: &Weights, region: &[u32]) -> Weights {
    let bind = s.skin.bindings().unwrap().to_vec();
    let rig = rig_of(s, &bind, bad);
    fix::apply_fix(
        rig,
        region,
        fix::Fix::RemoveStray,
        &crate::adjust::Locks::none(),
        &Default::default(),
    )
    .unwrap()
}

/// A check of `joints` only.
fn run_joints(s: &Sample, w: &Weights, opts: &CheckOptions, joints: &[usize]) -> CheckReport {
    let only = CheckOptions {
        joints: Some(joints.to_vec()),
        ..opts.clone()
    };
    run(s, w, &only)
}

/// The creature with ankle weight planted on a patch of its head: (ankle joint, the patch, those weights).
fn island_on_head(s: &Sample) -> (u16, Vec<u32>, Weights) {
    let skel = &s.skeleton;
    let foot = skel.find("ankle_l")[0] as u16;
    let head = skel.find("head")[0];
    let w = s.skin.weights().unwrap();
    // A patch on the front of the head, wholly on the head.
    let head_only = |v: &u32| w.row(*v as usize).0 == [head as u16];
    let centre = (0..w.len() as u32)
        .filter(|v| patch(s, *v).iter().all(head_only))
        .max_by(|&a, &b| {
            s.skin.positions()[a as usize]
                .z
                .total_cmp(&s.skin.positions()[b as usize].z)
        })
        .unwrap();
    let island = patch(s, centre);
    let bad = planted(s, foot, &island);
    (foot, island, bad)
}

#[test]
fn a_planted_island_of_a_far_joint_is_reported_as_jumps_at_exactly_its_vertices() {
    let s = make_sample(SampleKind::Creature, 6000).unwrap();
    let w = s.skin.weights().unwrap();
    let (foot, island, bad) = island_on_head(&s);
    let clean = run(&s, w, &CheckOptions::default());
    assert_eq!(clean.counts[Kind::Jump.index()], 0, "{:?}", only(Kind::Jump, &clean));
    let r = run(&s, &bad, &CheckOptions::default());
    let jumps = only(Kind::Jump, &r);
    assert!(!jumps.is_empty());
    let mut reported: Vec<u32> = jumps.iter().flat_map(|f| f.region.vertices.iter().copied()).collect();
    reported.sort_unstable();
    reported.dedup();
    assert_eq!(reported, island);
    assert!(jumps.iter().any(|f| f.joint == Some(foot as usize)), "{jumps:?}");
    // Removing the stray weight there leaves no ankle weight on the head and nothing to report.
    let fixed = remove_stray(&s, &bad, &island);
    for &v in &island {
        assert!(!fixed.row(v as usize).0.contains(&foot), "{:?}", fixed.row(v as usize));
    }
    let again = run(&s, &fixed, &CheckOptions::default());
    assert_eq!(again.counts[Kind::Jump.index()], 0);
}

#[test]
fn bad_input_is_refused_and_a_cancel_stops() {
    let s = tube();
    let w = s.skin.weights().unwrap().clone();
    let bind = s.skin.bindings().unwrap().to_vec();
    let rig = rig_of(&s, &bind, &w);
    let short = Weights::rigid(&[0, 0]);
    let e = check(
        Rig { weights: &short, ..rig },
        None,
        &CheckOptions::default(),
        &|_, _| true,
    )
    .unwrap_err();
    assert!(matches!(e, CheckError::Count { .. }), "{e}");
    let e = check(
        Rig {
            bind: &bind[..1],
            ..rig
        },
        None,
        &CheckOptions::default(),
        &|_, _| true,
    )
    .unwrap_err();
    assert!(matches!(e, CheckError::Bind { .. }), "{e}");
    let opts = CheckOptions {
        joints: Some(vec![99]),
        ..Default::default()
    };
    assert_eq!(
        check(rig, None, &opts, &|_, _| true).unwrap_err(),
        CheckError::Joint(99)
    );
    let opts = CheckOptions {
        steps: 0,
        ..Default::default()
    };
    assert_eq!(check(rig, None, &opts, &|_, _| true).unwrap_err(), CheckError::Steps(0));
    let e = check(rig, None, &CheckOptions::default(), &|_, _| false).unwrap_err();
    assert_eq!(e, CheckError::Cancelled);
}

#[test]
fn an_animation_is_measured_frame_by_frame_and_a_rigid_mesh_has_no_findings() {
    let s = make_sample(SampleKind::Creature, 3000).unwrap();
    let w = s.skin.weights().unwrap().clone();
    let bind = s.skin.bindings().unwrap().to_vec();
    let clip = crate::sample::walk_clip(&s.skeleton, 1.0);
    let opts = CheckOptions {
        joints: Some(vec![]),
        ..Default::default()
    };
    let r = check(rig_of(&s, &bind, &w), Some(&clip), &opts, &|_, _| true).unwrap();
    assert_eq!(
        r.poses,
        clip.sample_times(crate::eval::posed::ANIMATION_FPS, 1, None)
            .unwrap()
            .len()
    );
    assert!(r.findings.iter().all(|f| matches!(f.pose, PoseRef::Frame { .. })));
    // Every vertex on the root: every pose moves the mesh rigidly, nothing to find.
    let all_root = Weights::rigid(&vec![0; w.len()]);
    let r = check(rig_of(&s, &bind, &all_root), Some(&clip), &opts, &|_, _| true).unwrap();
    assert!(r.findings.is_empty(), "{:?}", r.findings.first());
    assert!(r.worst < 0.05, "{}", r.worst);
}

#[test]
fn a_separate_part_pushed_through_another_is_a_penetration() {
    // Two parallel sheets one unit apart along z, the upper one on `arm`, the lower on `root`; swinging `arm`
    // about x pushes the upper sheet's far end down through the lower one.
    let mut positions = Vec::new();
    let mut triangles = Vec::new();
    for (z, _) in [(0.0f32, 0), (0.2, 1)] {
        let base = positions.len() as u32;
        for i in 0..=10 {
            for k in 0..=2 {
                positions.push(Vec3::new(k as f32 * 0.5 - 0.5, i as f32 * 0.3, z));
            }
        }
        for i in 0..10u32 {
            for k in 0..2u32 {
                let a = base + i * 3 + k;
                triangles.push([a, a + 1, a + 4]);
                triangles.push([a, a + 4, a + 3]);
            }
        }
    }
    let n = positions.len();
    let normals = vec![Vec3::Z; n];
    let skin = Skin::new(positions, Some(normals), triangles).unwrap();
    let joints: Vec<u16> = (0..n).map(|v| u16::from(v >= n / 2)).collect();
    let skin = skin.with_weights(Some(Weights::rigid(&joints))).unwrap();
    let skel = crate::model::Skeleton::new(vec![
        crate::model::Joint::new("root", None, Vec3::ZERO),
        crate::model::Joint::new("arm", Some(0), Vec3::new(0.0, 0.0, 0.2)),
    ])
    .unwrap();
    let bind = crate::model::world_from_joint(&skel, &crate::model::Pose::from_file(&skel));
    let rig = Rig::of(&skel, &bind, &skin).unwrap();
    let swing_x = |lo: f32, hi: f32| {
        let mut skel = skel.clone();
        {
            let mut j = skel.joint_mut(1).unwrap();
            j.set_limit(0, Some(Limit { lo, hi }));
            j.set_limit(1, Some(Limit { lo: 0.0, hi: 0.0 }));
            j.set_limit(2, Some(Limit { lo: 0.0, hi: 0.0 }));
        }
        check(Rig { skel: &skel, ..rig }, None, &CheckOptions::default(), &|_, _| true).unwrap()
    };
    // Turning about x the one way lifts the upper sheet away; the other way swings it down through the lower one.
    let away = swing_x(0.0, 1.5);
    assert_eq!(away.counts[Kind::Penetration.index()], 0, "{:?}", away.findings);
    let through = swing_x(-1.5, 0.0);
    let pen: Vec<&Finding> = through
        .findings
        .iter()
        .filter(|f| f.kind == Kind::Penetration)
        .collect();
    assert!(!pen.is_empty(), "{:?}", through.counts);
    assert!(pen.iter().all(|f| f.joint == Some(1)));
    assert!(matches!(pen[0].pose, PoseRef::Swing { degrees, .. } if degrees < 0.0));
    assert!(
        pen.iter()
            .any(|f| f.region.vertices.iter().any(|&v| v as usize >= n / 2))
    );
}

#[test]
fn checking_again_the_joints_a_fix_affects_gives_what_a_whole_check_gives() {
    let s = make_sample(SampleKind::Creature, 6000).unwrap();
    let skel = &s.skeleton;
    let (foot, island, bad) = island_on_head(&s);
    let opts = CheckOptions::default();
    let mut report = run(&s, &bad, &opts);
    // Merging a check of some joints on unchanged weights changes nothing.
    let mut same = report.clone();
    let some = vec![foot as usize, skel.find("head")[0]];
    let rerun = run_joints(&s, &bad, &opts, &some);
    same.merge(rerun, &some, false);
    assert_eq!(same, report);
    // After the fix: the joints whose subtree share changed on the island, and no others.
    let fixed = remove_stray(&s, &bad, &island);
    let changed = bad.differing_rows(&fixed);
    assert_eq!(changed, island);
    let affected = affected_joints(skel, &bad, &fixed, &changed, crate::deform::Method::Linear);
    let name = |j: usize| skel.joints()[j].name.as_str();
    let names: Vec<&str> = affected.iter().map(|&j| name(j)).collect();
    assert!(names.contains(&"ankle_l") && names.contains(&"head"), "{names:?}");
    // The root's share is the whole row both before and after; an arm's never changed.
    assert!(!affected.contains(&0), "{names:?}");
    assert!(
        !names.iter().any(|n| n.contains("elbow") || n.contains("wrist")),
        "{names:?}"
    );
    let rerun = run_joints(&s, &fixed, &opts, &affected);
    report.merge(rerun, &affected, false);
    let whole = run(&s, &fixed, &opts);
    assert_eq!(report.findings, whole.findings);
    assert_eq!(report.joints, whole.joints);
    assert_eq!(report.vertex_worst, whole.vertex_worst);
    assert_eq!(report, whole);
}

#[test]
fn a_swing_becomes_the_skeleton_pose_that_turns_the_bind_pose_about_the_joint() {
    let s = make_sample(SampleKind::Creature, 2000).unwrap();
    let skel = &s.skeleton;
    let bind = s.skin.bindings().unwrap().to_vec();
    let elbow = skel.find("elbow_l")[0];
    // About the elbow's own x axis, within its limits (x from -2.6 to 0, -1 in the bind pose).
    let (axis, degrees) = (bind[elbow].x_axis.truncate().normalize().to_array(), -40.0);
    let pose = pose_for(
        skel,
        &bind,
        &PoseRef::Swing {
            joint: elbow,
            axis,
            degrees,
        },
    )
    .unwrap();
    let world = crate::model::world_from_joint(skel, &pose);
    let pivot = bind[elbow].w_axis.truncate();
    let turn = Mat4::from_translation(pivot)
        * Mat4::from_axis_angle(Vec3::from(axis), degrees.to_radians())
        * Mat4::from_translation(-pivot);
    let ends = crate::eval::posed::subtree_ends(skel);
    for j in 0..skel.len() {
        let want = if (elbow..ends[elbow]).contains(&j) {
            turn * bind[j]
        } else {
            bind[j]
        };
        assert!(
            world[j].abs_diff_eq(want, 1e-4),
            "{}: {:?} vs {want:?}",
            skel.joints()[j].name,
            world[j]
        );
    }
    assert_eq!(pose_for(skel, &bind, &PoseRef::Frame { time: 0.5 }), None);
}
