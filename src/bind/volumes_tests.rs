//! Tests of the containment volumes.

use super::*;
use crate::bind::JointVolume;

#[test]
fn joint_volumes_take_the_set_radius_the_box_or_the_mesh_and_scale_segments() {
    let s = crate::sample::make_sample(crate::sample::SampleKind::Arm, 400).unwrap();
    let bind = crate::model::world_from_joint(&s.skeleton, &crate::model::Pose::from_file(&s.skeleton));
    let mut opts = BindOptions::default();
    let (r0, seg0) = joint_volumes(&s.skeleton, &bind, s.skin.positions(), &opts);
    assert_eq!(r0.len(), s.skeleton.len());
    assert!(r0.iter().all(|r| r.is_finite() && *r > 0.0), "{r0:?}");
    opts.volumes = vec![JointVolume::default(); s.skeleton.len()];
    opts.volumes[1] = JointVolume {
        radius: Some(0.125),
        length_scale: 2.0,
    };
    let (r1, seg1) = joint_volumes(&s.skeleton, &bind, s.skin.positions(), &opts);
    assert_eq!(r1[1], 0.125);
    let pivot = bind[1].w_axis.truncate();
    for ((j, a0, b0), (_, a1, b1)) in seg0.iter().zip(&seg1) {
        if *j == 1 {
            assert!((pivot + (*b0 - pivot) * 2.0 - *b1).length() < 1e-5 && (*a0 - *a1).length() < 1e-5);
        }
    }
    assert_eq!(
        joint_volumes(&s.skeleton, &bind[..1], s.skin.positions(), &opts).0,
        Vec::<f32>::new()
    );
}
