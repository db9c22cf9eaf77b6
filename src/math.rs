//! Small numeric helpers shared by modules that have nothing else in common (binding's falloff, the sample rigs'
//! radii and blends). Depends on nothing else in the crate.

/// The smooth step `x²(3 - 2x)` on `x` clamped to [0, 1]: 0 at 0, 1 at 1, with zero slope at both ends.
#[inline]
pub fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

#[cfg(test)]
mod tests {
    use super::smoothstep;

    #[test]
    fn smoothstep_is_clamped_and_symmetric() {
        assert_eq!(smoothstep(-1.0), 0.0);
        assert_eq!(smoothstep(0.0), 0.0);
        assert_eq!(smoothstep(0.5), 0.5);
        assert_eq!(smoothstep(1.0), 1.0);
        assert_eq!(smoothstep(7.0), 1.0);
        assert_eq!(smoothstep(0.25), 0.15625);
        for k in 0..=16 {
            let x = k as f32 / 16.0;
            assert!((smoothstep(x) + smoothstep(1.0 - x) - 1.0).abs() < 1e-6, "{x}");
        }
    }
}
