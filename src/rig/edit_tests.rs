//! Tests of the skeleton edits: world positions kept or placed as asked (worked out by hand on small chains),
//! joints renumbered with their weights, and a bound skin left where it is in the edit pose for every edit.
#![allow(clippy::unwrap_used)]

use glam::{Mat4, Vec3};

use super::edit::*;
use super::remap::Origin;
use super::symmetry::{Side, add_mirrored, delete_mirrored, move_mirrored, rename_mirrored, symmetrize};
use super::{Edited, Rig};
use crate::deform::{Method, skin_vertices, skinning_matrices};
use crate::model::{Joint, Pose, Skeleton, Skin};
use crate::sample::{SampleKind, make_sample};

/// hip (0,0,0) -> knee (0,-1,0) -> ankle (0,-2,0) -> toe (0,-2,0.5); hip -> tail (0,0,-1).
fn leg() -> Rig {
    let skel = Skeleton::new(vec![
        Joint::new("hip", None, Vec3::ZERO),
        Joint::new("knee", Some(0), Vec3::new(0.0, -1.0, 0.0)),
        Joint::new("ankle", Some(1), Vec3::new(0.0, -1.0, 0.0)),
        Joint::new("toe", Some(2), Vec3::new(0.0, 0.0, 0.5)),
        Joint::new("tail", Some(0), Vec3::new(0.0, 0.0, -1.0)),
    ])
    .unwrap();
    let pose = Pose::zero(&skel);
    let bindings = Some(crate::model::world_from_joint(&skel, &pose));
    Rig::new(skel, bindings, pose)
}

fn pivot(rig: &Rig, name: &str) -> Vec3 {
    rig.pivots()[rig.skeleton.find(name)[0]]
}

fn near(a: Vec3, b: Vec3) -> bool {
    (a - b).length() < 1e-5
}

/// The creature sample bound at rest, and its skin.
fn creature() -> (Rig, Skin) {
    let s = make_sample(SampleKind::Creature, 3000).unwrap();
    let pose = Pose::zero(&s.skeleton);
    let bindings = s.skin.bindings().map(<[Mat4]>::to_vec);
    assert!(bindings.is_some());
    (Rig::new(s.skeleton, bindings, pose), s.skin)
}

/// The skin's vertices skinned in the rig's edit pose, with the rig's bindings and weights remapped by `map`.
fn skinned(rig: &Rig, skin: &Skin, weights: &crate::model::Weights) -> Vec<Vec3> {
    let m = skinning_matrices(&rig.world(), rig.bindings.as_ref().unwrap());
    skin_vertices(skin.positions(), skin.normals(), weights, &m, Method::Linear).0
}

/// Every edit leaves the bound skin where it was in the edit pose: the creature, its file pose as the edit
/// pose (so bindings are not the edit pose's world matrices), each edit on a joint with weight.
#[test]
fn every_edit_leaves_a_bound_skin_in_place_in_the_edit_pose() {
    let (mut rig, skin) = creature();
    rig.pose = Pose::from_file(&rig.skeleton);
    let weights = skin.weights().unwrap();
    let before = skinned(&rig, &skin, weights);
    let elbow = rig.skeleton.find("elbow_l")[0];
    let shoulder = rig.skeleton.find("shoulder_l")[0];
    let edits: Vec<(&str, Edited)> = vec![
        (
            "move",
            move_joint(&rig, elbow, pivot(&rig, "elbow_l") + Vec3::Y * 0.1, false).unwrap(),
        ),
        (
            "move alone",
            move_joint(&rig, elbow, pivot(&rig, "elbow_l") + Vec3::Y * 0.1, true).unwrap(),
        ),
        ("move root", move_joint(&rig, 0, pivot(&rig, "elbow_l"), false).unwrap()),
        ("insert", insert_joint(&rig, elbow).unwrap().0),
        ("reparent", reparent(&rig, elbow, 0).unwrap()),
        ("duplicate", duplicate_chain(&rig, shoulder).unwrap().0),
        ("add", add_joint(&rig, elbow, Vec3::ONE, "new").unwrap().0),
    ];
    for (what, e) in edits {
        let w = e.map.weights(weights).unwrap();
        let after = skinned(&e.rig, &skin, &w);
        let worst = before
            .iter()
            .zip(&after)
            .map(|(a, b)| (*a - *b).length())
            .fold(0.0, f32::max);
        assert!(worst < 1e-4, "{what}: a vertex moved {worst}");
    }
    // Deleting a joint gives its weights to its parent, which moves the skin in any pose but the bind pose, where
    // every skinning matrix is the identity: there it stays.
    let (rig, skin) = creature();
    assert!(
        rig.world()
            .iter()
            .zip(rig.bindings.as_ref().unwrap())
            .all(|(w, b)| w.abs_diff_eq(*b, 1e-5))
    );
    let before = skinned(&rig, &skin, weights);
    let e = delete_joint(&rig, elbow).unwrap();
    let after = skinned(&e.rig, &skin, &e.map.weights(weights).unwrap());
    let worst = before
        .iter()
        .zip(&after)
        .map(|(a, b)| (*a - *b).length())
        .fold(0.0, f32::max);
    assert!(worst < 1e-4, "delete: a vertex moved {worst}");
}

#[test]
fn adding_places_the_joint_at_the_point_and_keeps_the_others_bit_for_bit() {
    let rig = leg();
    let (e, k) = add_joint(&rig, 1, Vec3::new(0.3, -1.5, 0.0), "calf").unwrap();
    assert_eq!(k, 4, "at the end of the knee's subtree (after ankle and toe)");
    assert_eq!(e.rig.skeleton.joints()[k].parent, Some(1));
    assert!(near(e.rig.pivots()[k], Vec3::new(0.3, -1.5, 0.0)));
    assert_eq!(e.map.origin[k], Origin::New);
    assert_eq!(e.map.weights_to, [0, 1, 2, 3, 5]);
    let (wb, wa) = (rig.world(), e.rig.world());
    for (i, o) in e.map.origin.iter().enumerate() {
        if let Origin::Kept(old) = o {
            assert_eq!(wa[i], wb[*old]);
            assert_eq!(
                e.rig.bindings.as_ref().unwrap()[i],
                rig.bindings.as_ref().unwrap()[*old]
            );
        }
    }
    assert_eq!(
        e.rig.bindings.as_ref().unwrap()[k],
        wa[k],
        "a new joint is bound where it is made"
    );
    assert!(matches!(
        add_joint(&rig, 1, Vec3::ZERO, "knee"),
        Err(EditError::Name(_))
    ));
    assert!(matches!(add_joint(&rig, 1, Vec3::NAN, "x"), Err(EditError::NotFinite)));
}

#[test]
fn moving_takes_the_subtree_along_or_leaves_the_children() {
    let rig = leg();
    let e = move_joint(&rig, 1, Vec3::new(1.0, -1.0, 0.0), false).unwrap();
    assert!(near(pivot(&e.rig, "knee"), Vec3::new(1.0, -1.0, 0.0)));
    assert!(near(pivot(&e.rig, "toe"), Vec3::new(1.0, -2.0, 0.5)));
    assert_eq!(
        e.rig.bindings.as_ref().unwrap()[3],
        e.rig.world()[3],
        "bound at rest: the binding is the new world matrix"
    );
    let e = move_joint(&rig, 1, Vec3::new(1.0, -1.0, 0.0), true).unwrap();
    assert!(near(pivot(&e.rig, "ankle"), Vec3::new(0.0, -2.0, 0.0)));
    assert!(near(pivot(&e.rig, "toe"), Vec3::new(0.0, -2.0, 0.5)));
    // The root moves its offset and the pose's root translation alike.
    let e = move_joint(&rig, 0, Vec3::new(0.0, 2.0, 0.0), false).unwrap();
    assert_eq!(e.rig.skeleton.joints()[0].offset, Vec3::new(0.0, 2.0, 0.0));
    assert_eq!(e.rig.pose.root_translation, Vec3::new(0.0, 2.0, 0.0));
    assert!(near(pivot(&e.rig, "toe"), Vec3::new(0.0, 0.0, 0.5)));
}

#[test]
fn inserting_splits_the_bone_and_keeps_the_joint_below() {
    let rig = leg();
    let (e, k) = insert_joint(&rig, 2).unwrap();
    assert_eq!(k, 2);
    assert_eq!(e.rig.skeleton.joints()[k].name, "ankle.001");
    assert!(near(e.rig.pivots()[k], Vec3::new(0.0, -1.5, 0.0)));
    assert_eq!(e.rig.skeleton.joints()[3].parent, Some(2));
    assert!(near(pivot(&e.rig, "ankle"), Vec3::new(0.0, -2.0, 0.0)));
    assert!(near(pivot(&e.rig, "toe"), Vec3::new(0.0, -2.0, 0.5)));
    assert_eq!(e.map.weights_to, [0, 1, 3, 4, 5]);
    assert!(matches!(insert_joint(&rig, 0), Err(EditError::Root(_))));
}

#[test]
fn deleting_hands_children_and_weights_to_the_parent_where_they_stand() {
    // The knee turned 90 degrees about x in the edit pose: the ankle and toe hang elsewhere, and stay there.
    let mut rig = leg();
    rig.pose.dofs[1] = Vec3::new(std::f32::consts::FRAC_PI_2, 0.0, 0.0);
    let (ankle, toe, world) = (pivot(&rig, "ankle"), pivot(&rig, "toe"), rig.world());
    assert!(near(ankle, Vec3::new(0.0, -1.0, -1.0)));
    let e = delete_joint(&rig, 1).unwrap();
    assert_eq!(e.rig.skeleton.len(), 4);
    assert_eq!(e.rig.skeleton.joints()[1].name, "ankle");
    assert_eq!(e.rig.skeleton.joints()[1].parent, Some(0));
    assert!(near(pivot(&e.rig, "ankle"), ankle));
    assert!(
        near(pivot(&e.rig, "toe"), toe),
        "the knee's turn is folded into the ankle"
    );
    let wa = e.rig.world();
    assert!(wa[1].abs_diff_eq(world[2], 1e-5));
    assert_eq!(e.map.weights_to, [0, 0, 1, 2, 3]);
    // The root with one child: the child becomes the root where it stands.
    let chain = Rig::new(
        Skeleton::new(vec![Joint::new("a", None, Vec3::X), Joint::new("b", Some(0), Vec3::Y)]).unwrap(),
        None,
        Pose::zero(&Skeleton::new(vec![Joint::new("a", None, Vec3::X)]).unwrap()),
    );
    let e = delete_joint(&chain, 0).unwrap();
    assert_eq!(e.rig.skeleton.joints()[0].offset, Vec3::new(1.0, 1.0, 0.0));
    assert!(matches!(delete_joint(&rig, 0), Err(EditError::Root(_))), "two children");
}

#[test]
fn reparenting_keeps_the_chain_where_it_is_and_refuses_cycles() {
    let rig = leg();
    let before = rig.world();
    let e = reparent(&rig, 2, 4).unwrap();
    let names: Vec<&str> = e.rig.skeleton.joints().iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["hip", "knee", "tail", "ankle", "toe"]);
    assert_eq!(e.rig.skeleton.joints()[3].parent, Some(2));
    assert!(near(pivot(&e.rig, "ankle"), Vec3::new(0.0, -2.0, 0.0)));
    assert!(near(pivot(&e.rig, "toe"), Vec3::new(0.0, -2.0, 0.5)));
    assert_eq!(e.map.weights_to, [0, 1, 3, 4, 2]);
    for (k, o) in e.map.origin.iter().enumerate() {
        let Origin::Kept(i) = o else { panic!() };
        assert!(e.rig.world()[k].abs_diff_eq(before[*i], 1e-6));
    }
    assert!(matches!(reparent(&rig, 1, 3), Err(EditError::Cycle { .. })));
    assert!(matches!(reparent(&rig, 0, 1), Err(EditError::Root(_))));
    // Under a turned parent, the joint keeps its world orientation too.
    let mut turned = leg();
    turned.pose.dofs[4] = Vec3::new(0.0, 0.7, 0.0);
    let w = turned.world();
    let e = reparent(&turned, 2, 4).unwrap();
    assert!(e.rig.world()[3].abs_diff_eq(w[2], 1e-5));
    assert!(e.rig.world()[4].abs_diff_eq(w[3], 1e-5));
}

#[test]
fn renaming_keeps_the_names_rule_and_duplicating_copies_the_chain() {
    let rig = leg();
    assert_eq!(
        rename_joint(&rig, 1, "shin").unwrap().rig.skeleton.joints()[1].name,
        "shin"
    );
    for bad in ["", "left knee", "a{", "hip"] {
        assert!(rename_joint(&rig, 1, bad).is_err(), "{bad:?}");
    }
    let (e, k) = duplicate_chain(&rig, 1).unwrap();
    assert_eq!(k, 4);
    let names: Vec<&str> = e.rig.skeleton.joints().iter().map(|j| j.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "hip",
            "knee",
            "ankle",
            "toe",
            "knee.001",
            "ankle.001",
            "toe.001",
            "tail"
        ]
    );
    assert_eq!(e.map.origin[5], Origin::Copy(2));
    assert!(near(e.rig.pivots()[6], Vec3::new(0.0, -2.0, 0.5)));
    assert_eq!(e.map.weights_to, [0, 1, 2, 3, 7]);
}

#[test]
fn x_mirror_adds_moves_renames_and_deletes_counterparts() {
    let rig = leg();
    let (e, added) = add_mirrored(&rig, 0, Vec3::new(0.5, 0.0, 0.0), "thigh").unwrap();
    assert_eq!(added.len(), 2);
    let names: Vec<&str> = added
        .iter()
        .map(|&k| e.rig.skeleton.joints()[k].name.as_str())
        .collect();
    assert_eq!(names, ["thigh.L", "thigh.R"]);
    assert!(near(e.rig.pivots()[added[1]], Vec3::new(-0.5, 0.0, 0.0)));
    let (e2, below) = add_mirrored(&e.rig, added[0], Vec3::new(0.5, -1.0, 0.0), "shin.L").unwrap();
    let r = e2.rig.skeleton.find("shin.R")[0];
    assert_eq!(
        e2.rig.skeleton.joints()[r].parent,
        Some(e2.rig.skeleton.find("thigh.R")[0])
    );
    assert!(near(e2.rig.pivots()[r], Vec3::new(-0.5, -1.0, 0.0)));
    let m = move_mirrored(&e2.rig, below[0], Vec3::new(0.6, -1.2, 0.1), false).unwrap();
    assert!(near(pivot(&m.rig, "shin.R"), Vec3::new(-0.6, -1.2, 0.1)));
    let n = rename_mirrored(&m.rig, below[0], "calf.L").unwrap();
    assert_eq!(n.rig.skeleton.find("calf.R").len(), 1);
    let d = delete_mirrored(&n.rig, n.rig.skeleton.find("calf.L")[0]).unwrap();
    assert!(d.rig.skeleton.find("calf.R").is_empty() && d.rig.skeleton.find("calf.L").is_empty());
    // A joint on the plane is added alone.
    let (e, added) = add_mirrored(&rig, 0, Vec3::new(0.0, 1.0, 0.0), "spine").unwrap();
    assert_eq!((added.len(), e.rig.skeleton.len()), (1, 6));
}

#[test]
fn symmetrize_makes_the_missing_side_and_mirrors_the_other() {
    let rig = leg();
    let (e, _) = add_joint(&rig, 0, Vec3::new(0.5, 0.0, 0.0), "arm.L").unwrap();
    let (e, k) = add_joint(
        &e.rig,
        e.rig.skeleton.find("arm.L")[0],
        Vec3::new(1.0, 0.0, 0.2),
        "hand.L",
    )
    .unwrap();
    let limited = set_limits(
        &e.rig,
        k,
        [
            DofLimit::Limited { lo: -1.0, hi: 0.5 },
            DofLimit::Limited { lo: -0.2, hi: 0.3 },
            DofLimit::Free,
        ],
    )
    .unwrap();
    let s = symmetrize(&limited.rig, Side::Left).unwrap();
    assert!(near(pivot(&s.rig, "arm.R"), Vec3::new(-0.5, 0.0, 0.0)));
    assert!(near(pivot(&s.rig, "hand.R"), Vec3::new(-1.0, 0.0, 0.2)));
    let hr = s.rig.skeleton.find("hand.R")[0];
    assert_eq!(
        s.rig.skeleton.joints()[hr].parent,
        Some(s.rig.skeleton.find("arm.R")[0])
    );
    let l = super::limits::joint_limits(&s.rig.skeleton, hr);
    assert_eq!(l[0], DofLimit::Limited { lo: -1.0, hi: 0.5 });
    assert_eq!(l[1], DofLimit::Limited { lo: -0.3, hi: 0.2 });
    // Run again: the counterparts exist now and are moved, not made twice.
    let moved = move_joint(&s.rig, hr, Vec3::new(-2.0, 0.0, 0.0), false).unwrap();
    let again = symmetrize(&moved.rig, Side::Left).unwrap();
    assert_eq!(again.rig.skeleton.len(), s.rig.skeleton.len());
    assert!(near(pivot(&again.rig, "hand.R"), Vec3::new(-1.0, 0.0, 0.2)));
}

use super::limits::DofLimit;
