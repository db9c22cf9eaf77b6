//! Tests of the line falloff and the limit.

use super::*;
use glam::Vec3;

#[test]
fn whole_powers_equal_the_library_routine_bit_for_bit() {
    for n in -64..=64 {
        for x in [
            0.0f32,
            1.0,
            1.0 + f32::EPSILON,
            1.3,
            1.79,
            2.0,
            3.7,
            1e-3,
            1e3,
            0.999,
            f32::MAX,
            f32::NAN,
        ] {
            let (ours, lib) = (powi(x, n), x.powi(n));
            assert!(
                ours.to_bits() == lib.to_bits() || (ours.is_nan() && lib.is_nan()),
                "{x}^{n}: {ours} vs {lib}"
            );
        }
    }
}

#[test]
fn line_weights_fall_off_smoothly_to_the_blend_ratio() {
    let c = |joint, dist| Candidate {
        joint,
        dist,
        closest: Vec3::ZERO,
    };
    let mut w = Vec::new();
    line_weights(&[c(3, 1.0), c(1, 1.5), c(0, 1.7), c(2, 1.99)], 2.0, 2.0, &mut w);
    // r = 1.5: 1.5^-2 * (1 - smoothstep(0.5)) = 0.4444 * 0.5; r = 1.7: 1.7^-2 * (1 - smoothstep(0.7))
    // = 0.346 * 0.216; r = 1.99 is under 1% and dropped.
    assert_eq!(w[0], (3, 1.0));
    assert!((w[1].1 - 0.5 / 2.25).abs() < 1e-6);
    assert!((w[2].1 - (1.0 - 0.7f32 * 0.7 * (3.0 - 1.4)) / 2.89).abs() < 1e-6);
    assert_eq!(w.len(), 3);
    limit_and_normalise(&mut w, 2, false);
    assert_eq!(w.len(), 2);
    assert_eq!((w[0].0, w[1].0), (1, 3), "sorted by joint after limiting");
    assert!((w[0].1 + w[1].1 - 1.0).abs() < 1e-6);
}
