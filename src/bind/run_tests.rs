//! Tests of the whole bind.

use super::*;

/// The baseline and x86-64-v3 copies of the hot loops (`crate::simd`) give the same weights, bit for bit, by the
/// geodesic method and by the line pipeline (whose grid cell pass is one of those loops; hybrid takes in the
/// volumes too).
#[test]
fn both_instruction_sets_give_the_same_weights_bit_for_bit() {
    use crate::sample::{SampleKind, make_sample};
    let _switch = crate::simd::SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    if !crate::simd::detect() {
        println!("notice: no x86-64-v3 on this processor; only the baseline copies are tested");
    }
    let cases = [
        (SampleKind::Creature, 4000, BindMethod::Geodesic),
        (SampleKind::Arm, 1500, BindMethod::Geodesic),
        (SampleKind::Creature, 4000, BindMethod::Line),
        (SampleKind::Arm, 1500, BindMethod::Hybrid),
    ];
    for (kind, n, method) in cases {
        let s = make_sample(kind, n).unwrap();
        let bind = crate::model::world_from_joint(&s.skeleton, &crate::model::Pose::from_file(&s.skeleton));
        let run = |portable: bool| {
            crate::simd::set_portable(portable);
            let opts = BindOptions::for_method(method);
            bind_weights(
                &s.skeleton,
                &bind,
                s.skin.positions(),
                s.skin.triangles(),
                &opts,
                &|_| {},
            )
            .unwrap()
            .0
        };
        let (a, b) = (run(true), run(false));
        crate::simd::set_portable(false);
        assert_eq!(a.len(), s.skin.positions().len());
        for v in 0..a.len() {
            let ((ja, wa), (jb, wb)) = (a.row(v), b.row(v));
            assert_eq!(ja, jb, "{kind:?} {method:?} vertex {v}");
            let bits = |w: &[f32]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(wa), bits(wb), "{kind:?} {method:?} vertex {v}");
        }
    }
}
