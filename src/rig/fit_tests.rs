#![allow(clippy::unwrap_used)]

use super::*;
use crate::mesh::cuboid;
use crate::rig::fit_measure::measure_fit;

/// A chain up a bar: root at the bottom, two joints above.
fn chain() -> Skeleton {
    Skeleton::new(vec![
        Joint::new("root", None, Vec3::new(0.0, 0.2, 0.0)),
        Joint::new("mid", Some(0), Vec3::new(0.0, 0.8, 0.0)),
        Joint::new("tip", Some(1), Vec3::new(0.0, 0.8, 0.0)),
    ])
    .unwrap()
}

#[test]
fn a_chain_stretches_with_a_taller_bar_and_stays_inside() {
    let skel = chain();
    let world = world_from_joint(&skel, &Pose::zero(&skel));
    let (tp, tt) = cuboid(Vec3::new(-0.2, 0.0, -0.2), Vec3::new(0.2, 2.0, 0.2));
    let (p, t) = cuboid(Vec3::new(-0.3, 0.0, -0.3), Vec3::new(0.3, 4.0, 0.3));
    let input = FitInput {
        template: &skel,
        template_world: &world,
        template_mesh: Some((&tp, &tt)),
        template_weights: None,
        template_box: None,
        template_widths: None,
        template_trunk: None,
        positions: &p,
        triangles: &t,
    };
    let fit = fit_template(&input, &FitOptions::default()).unwrap();
    let fitted: Vec<(String, Vec3)> = fit
        .joints
        .iter()
        .map(|j| (j.name.clone(), Vec3::from_array(j.position)))
        .collect();
    let want = vec![
        ("root".to_string(), Vec3::new(0.0, 0.4, 0.0), true),
        ("mid".to_string(), Vec3::new(0.0, 2.0, 0.0), true),
        ("tip".to_string(), Vec3::new(0.0, 3.6, 0.0), true),
    ];
    let m = measure_fit(&fitted, &want, fit.diagonal);
    assert!(m.max < 4.0, "{m:?}");
    assert!(fit.joints.iter().all(|j| j.inside), "{:?}", fit.joints);
    // The bindings are the fitted skeleton's pose.
    let again = world_from_joint(&fit.skeleton, &Pose::from_file(&fit.skeleton));
    assert_eq!(again, fit.world);
    assert!(fit.warnings.is_empty(), "{:?}", fit.warnings);
}

#[test]
fn bad_input_is_an_error() {
    let skel = chain();
    let (p, t) = cuboid(Vec3::ZERO, Vec3::ONE);
    let input = FitInput {
        template: &skel,
        template_world: &[],
        template_mesh: None,
        template_weights: None,
        template_box: None,
        template_widths: None,
        template_trunk: None,
        positions: &p,
        triangles: &t,
    };
    assert!(matches!(
        fit_template(&input, &FitOptions::default()),
        Err(FitError::WorldCount { .. })
    ));
    let world = world_from_joint(&skel, &Pose::zero(&skel));
    let empty = FitInput {
        template_world: &world,
        positions: &[],
        triangles: &[],
        ..input
    };
    assert_eq!(fit_template(&empty, &FitOptions::default()), Err(FitError::NoSolid));
    let nan = [Vec3::NAN, Vec3::ONE, Vec3::ZERO];
    let bad = FitInput {
        template_world: &world,
        positions: &nan,
        triangles: &[[0, 1, 2]],
        ..input
    };
    assert_eq!(fit_template(&bad, &FitOptions::default()), Err(FitError::NotFinite));
}

#[test]
fn roles_follow_the_tree() {
    assert_eq!(roles(&chain()), vec![Role::Trunk, Role::Limb, Role::Extremity]);
}

/// A joint past the mesh's end comes back along its bone (its direction kept, more than a cell from its
/// parent), not onto the nearest cell, which for a tip past a bar's end is where its parent already is.
#[test]
fn a_joint_outside_comes_back_along_its_bone() {
    let (p, t) = cuboid(Vec3::new(-0.3, 0.0, -0.3), Vec3::new(0.3, 4.0, 0.3));
    let solid = FitSolid::new(&p, &t, 64).unwrap();
    let parent = Vec3::new(0.0, 3.5, 0.0);
    let at = Vec3::new(0.0, 5.0, 0.0);
    let q = snap_inside(&solid, at, Some(parent));
    assert!(solid.holds(q), "{q}");
    assert!(
        q.x.abs() < 1e-5 && q.z.abs() < 1e-5 && q.y > parent.y + solid.grid.h,
        "{q}"
    );
    // Without a parent (or no room along the bone): the nearest solid cell.
    assert!(solid.holds(snap_inside(&solid, at, None)));
    let close = snap_inside(&solid, Vec3::new(0.0, 4.02, 0.0), Some(Vec3::new(0.0, 3.99, 0.0)));
    assert!(solid.holds(close), "{close}");
}

/// One mesh of boxes facing +Z: a body 1.6 long on four legs, with the `head` and `tail` boxes given.
fn body_with(head: (Vec3, Vec3), tail: (Vec3, Vec3)) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut boxes = vec![(Vec3::new(-0.3, 0.6, -0.8), Vec3::new(0.3, 1.1, 0.8))];
    for (x, z) in [(-0.2, -0.6), (0.2, -0.6), (-0.2, 0.6), (0.2, 0.6)] {
        boxes.push((Vec3::new(x - 0.08, 0.0, z - 0.08), Vec3::new(x + 0.08, 0.65, z + 0.08)));
    }
    boxes.extend([head, tail]);
    let (mut p, mut t) = (Vec::new(), Vec::new());
    for (lo, hi) in boxes {
        crate::mesh::append_part(&mut p, &mut t, cuboid(lo, hi));
    }
    (p, t)
}

/// A blocky animal facing +Z: a body, four legs, a head up at the front and a tail behind; its skeleton hips (at
/// the rump), chest, head and a back leg.
fn animal() -> (Vec<Vec3>, Vec<[u32; 3]>, Skeleton) {
    let (p, t) = body_with(
        (Vec3::new(-0.15, 1.0, 0.6), Vec3::new(0.15, 1.6, 1.1)),
        (Vec3::new(-0.04, 0.9, -1.3), Vec3::new(0.04, 1.0, -0.75)),
    );
    let skel = Skeleton::new(vec![
        Joint::new("hips", None, Vec3::new(0.0, 0.85, -0.5)),
        Joint::new("chest", Some(0), Vec3::new(0.0, 0.0, 1.0)),
        Joint::new("head", Some(1), Vec3::new(0.0, 0.55, 0.35)),
        Joint::new("leg", Some(0), Vec3::new(0.2, -0.5, -0.1)),
    ])
    .unwrap();
    (p, t, skel)
}

/// A mesh lying another way than the template (Z up and facing +X, or facing -Z) is turned to face the
/// template's way, fitted, and turned back: the joints land where the template's own joints lie in it, the
/// bindings are the fitted skeleton's pose, and a warning says so. Taken as it lies, the fit misses them.
#[test]
fn a_mesh_lying_another_way_is_turned_fitted_and_turned_back() {
    let (tp, tt, skel) = animal();
    let world = world_from_joint(&skel, &Pose::zero(&skel));
    let turns = crate::rig::fit_orient::quarter_turns();
    // Z up facing +X, and facing -Z: the turns that take the template's axes to those.
    let lying = [
        Mat3::from_cols(Vec3::Z, Vec3::X, Vec3::Y),
        Mat3::from_cols(-Vec3::X, Vec3::Y, -Vec3::Z),
    ];
    for r in lying {
        assert!(turns.contains(&r));
        let p: Vec<Vec3> = tp.iter().map(|v| r * *v).collect();
        let input = FitInput {
            template: &skel,
            template_world: &world,
            template_mesh: Some((&tp, &tt)),
            template_weights: None,
            template_box: None,
            template_widths: None,
            template_trunk: None,
            positions: &p,
            triangles: &tt,
        };
        let want: Vec<(String, Vec3, bool)> = skel
            .joints()
            .iter()
            .zip(&world)
            .map(|(j, w)| (j.name.clone(), r * w.w_axis.truncate(), true))
            .collect();
        let judge = |options: &FitOptions| {
            let fit = fit_template(&input, options).unwrap();
            let fitted: Vec<(String, Vec3)> = fit
                .joints
                .iter()
                .map(|j| (j.name.clone(), Vec3::from_array(j.position)))
                .collect();
            (measure_fit(&fitted, &want, fit.diagonal), fit)
        };
        let (turned, fit) = judge(&FitOptions::default());
        assert!(turned.max < 3.0, "{r:?}: {turned:?}");
        assert!(fit.joints.iter().all(|j| j.inside), "{:?}", fit.joints);
        assert_eq!(
            world_from_joint(&fit.skeleton, &Pose::from_file(&fit.skeleton)),
            fit.world
        );
        assert!(
            fit.warnings[0].starts_with("the mesh does not face the template's way"),
            "{:?}",
            fit.warnings
        );
        let (as_it_lies, _) = judge(&FitOptions {
            turn: false,
            ..FitOptions::default()
        });
        assert!(
            as_it_lies.mean > 3.0 * turned.mean.max(1.0),
            "{as_it_lies:?} against {turned:?}"
        );
    }
}

/// A template without a mesh is never turned by a guess (its stand-in tubes are too unlike a body to tell), so a
/// mesh lying another way is fitted as it lies, and misses; told which way the mesh faces (its up and front,
/// as `fit --mesh-up --mesh-front` say them), the fit is the fit into the mesh standing the template's way,
/// turned.
#[test]
fn a_skeleton_alone_fits_a_mesh_lying_another_way_when_told_which_way_it_faces() {
    let (tp, tt, skel) = animal();
    let world = world_from_joint(&skel, &Pose::zero(&skel));
    let r = Mat3::from_cols(Vec3::Z, Vec3::X, Vec3::Y);
    let p: Vec<Vec3> = tp.iter().map(|v| r * *v).collect();
    let input = |positions| FitInput {
        template: &skel,
        template_world: &world,
        template_mesh: None,
        template_weights: None,
        template_box: None,
        template_widths: None,
        template_trunk: None,
        positions,
        triangles: &tt,
    };
    let joints = |fit: &FitResult| -> Vec<Vec3> { fit.joints.iter().map(|j| Vec3::from_array(j.position)).collect() };
    let standing = fit_template(&input(&tp), &FitOptions::default()).unwrap();
    // The mesh's up is where r took +Y, its front where r took +Z.
    let told = crate::rig::fit_orient::told_facing(r * Vec3::Y, r * Vec3::Z).unwrap();
    assert!((told * r - Mat3::IDENTITY).abs_diff_eq(Mat3::ZERO, 1e-6));
    let fit = fit_template(
        &input(&p),
        &FitOptions {
            mesh_turn: Some(told),
            ..FitOptions::default()
        },
    )
    .unwrap();
    for (a, b) in joints(&fit).iter().zip(joints(&standing)) {
        assert!(a.distance(r * b) < 1e-3 * standing.diagonal, "{a} against {}", r * b);
    }
    assert!(fit.joints.iter().all(|j| j.inside), "{:?}", fit.joints);
    assert_eq!(
        world_from_joint(&fit.skeleton, &Pose::from_file(&fit.skeleton)),
        fit.world
    );
    // Not told, the mesh is taken as it lies: the joints land elsewhere.
    let guessed = fit_template(&input(&p), &FitOptions::default()).unwrap();
    assert!(
        !guessed.warnings.iter().any(|w| w.contains("does not face")),
        "{:?}",
        guessed.warnings
    );
    let off = joints(&guessed)
        .iter()
        .zip(joints(&standing))
        .map(|(a, b)| a.distance(r * b))
        .fold(0.0, f32::max);
    assert!(off > 0.1 * standing.diagonal, "{off}");
}

/// A shipped quadruped into an animal with a tail as long as its body: the box alone puts the template's hips
/// and back legs a third of the way down the tail (z -1.75, the body ending at -0.8) and its front legs at the
/// body's middle; its trunk matched to the mesh's trunk puts them at the legs (-0.86 and 0.52; the legs at -0.6
/// and 0.6).
#[test]
fn a_quadruped_template_finds_the_trunk_of_an_animal_with_a_long_tail() {
    let (p, t) = body_with(
        (Vec3::new(-0.15, 1.0, 0.6), Vec3::new(0.15, 1.4, 1.1)),
        (Vec3::new(-0.06, 0.85, -2.4), Vec3::new(0.06, 0.97, -0.75)),
    );
    let rig = crate::rig::fit_template::TemplateRig::shipped(crate::rig::templates::TemplateKind::Quadruped);
    let input = rig.input(&p, &t);
    assert_eq!(input.template_trunk, Some(2));
    let z_of = |fit: &FitResult, name: &str| {
        let j = fit.joints.iter().find(|j| j.name == name).unwrap();
        j.position[2]
    };
    let fit = fit_template(&input, &FitOptions::default()).unwrap();
    let boxed = fit_template(
        &FitInput {
            template_trunk: None,
            ..input
        },
        &FitOptions::default(),
    )
    .unwrap();
    for (name, near) in [("BackUpLeg.L", -0.6), ("Hips", -0.6), ("FrontUpLeg.L", 0.6)] {
        let (z, box_z) = (z_of(&fit, name), z_of(&boxed, name));
        assert!((z - near).abs() < 0.3, "{name} at z {z}, its legs at {near}");
        assert!(
            (box_z - near).abs() > (z - near).abs() + 0.2,
            "{name}: box {box_z}, trunk {z}"
        );
    }
}
