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
