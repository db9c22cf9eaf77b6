//! Random skeletons bound to a tube: every method weights every vertex validly, whatever the rig. Offsets are
//! drawn on a coarse grid, so pivots often coincide and leaves' lines often run into other joints' pivots (the
//! IK-foot tails, the reach cap over chains and branches, zero-length bones).
#![allow(clippy::unwrap_used)]

use glam::Vec3;
use proptest::prelude::*;
use skinbind::bind::{BindMethod, BindOptions, bind_weights};
use skinbind::model::{Joint, Pose, Skeleton, world_from_joint};
use skinbind::sample::{SampleKind, make_sample};

/// A joint's parent (an earlier joint, so the joints form a tree) and its offset on a grid of 0.25.
fn joint() -> impl Strategy<Value = (u8, [i8; 3])> {
    (any::<u8>(), [-3i8..=3, -4i8..=2, -3i8..=3])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_rig_binds_every_vertex_validly(joints in prop::collection::vec(joint(), 1..20), line in any::<bool>()) {
        let skel = Skeleton::new(
            joints
                .iter()
                .enumerate()
                .map(|(i, &(parent, [x, y, z]))| {
                    let parent = (i > 0).then(|| parent as usize % i);
                    Joint::new(format!("j{i}"), parent, Vec3::new(x as f32, y as f32, z as f32) * 0.25)
                })
                .collect(),
        )
        .unwrap();
        let world = world_from_joint(&skel, &Pose::zero(&skel));
        let tube = make_sample(SampleKind::Tube, 400).unwrap();
        let method = if line { BindMethod::Line } else { BindMethod::default() };
        let opts = BindOptions::for_method(method);
        let (w, _) = bind_weights(&skel, &world, tube.skin.positions(), tube.skin.triangles(), &opts, &|_| {})
            .unwrap();
        prop_assert_eq!(w.len(), tube.skin.vertex_count());
        for v in 0..w.len() {
            let (js, ws) = w.row(v);
            prop_assert!(!js.is_empty() && js.len() <= 4, "vertex {} has {} influences", v, js.len());
            prop_assert!(js.iter().all(|&j| (j as usize) < skel.len()));
            let sum: f32 = ws.iter().sum();
            prop_assert!((sum - 1.0).abs() < 1e-5 && ws.iter().all(|x| x.is_finite() && *x > 0.0), "vertex {}", v);
        }
    }
}
