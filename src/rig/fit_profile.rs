//! A piecewise box mapping ([`super::fit`]): along each axis, the template's and the mesh's solids are cut into
//! slices, each slice's share of solid cells is a profile, and dynamic time warping (Sakoe and Chiba, 1978)
//! matches the two profiles, so that where a body's cross-section jumps (legs meet the belly, the neck leaves the
//! shoulders) lands where the other body's does. A long-legged mesh stretches the slices below its belly and not
//! the ones above. The map is monotone along each axis and linear between slice centres.

use glam::Vec3;

/// Slices along each axis.
pub const SLICES: usize = 32;

/// The share of `points` in each of `slices` slices of `lo..hi` along `axis`, scaled so the fullest is 1.
pub fn profile(points: &[Vec3], axis: usize, lo: f32, hi: f32, slices: usize) -> Vec<f32> {
    let slices = slices.max(1);
    let axis = axis.min(2);
    let mut count = vec![0f32; slices];
    let size = hi - lo;
    if size.is_nan() || size <= 0.0 {
        return count;
    }
    for p in points {
        let t = (p[axis] - lo) / size * slices as f32;
        if t.is_finite() {
            let k = (t.floor().max(0.0) as usize).min(slices - 1);
            count[k] += 1.0;
        }
    }
    let top = count.iter().copied().fold(0.0, f32::max);
    if top > 0.0 {
        count.iter_mut().for_each(|c| *c /= top);
    }
    count
}

/// For each slice of `a`, the slice of `b` it matches (fractional: the mean over the matches), by dynamic time
/// warping with a cost of `step_cost` for a step that advances one profile only.
pub fn warp(a: &[f32], b: &[f32], step_cost: f32) -> Vec<f32> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return Vec::new();
    }
    let at = |i: usize, j: usize| i * m + j;
    let mut cost = vec![f32::INFINITY; n * m];
    for i in 0..n {
        for j in 0..m {
            let here = (a[i] - b[j]).abs();
            let best = if i == 0 && j == 0 {
                0.0
            } else {
                let mut best = f32::INFINITY;
                if i > 0 && j > 0 {
                    best = best.min(cost[at(i - 1, j - 1)]);
                }
                if i > 0 {
                    best = best.min(cost[at(i - 1, j)] + step_cost);
                }
                if j > 0 {
                    best = best.min(cost[at(i, j - 1)] + step_cost);
                }
                best
            };
            cost[at(i, j)] = here + best;
        }
    }
    // Walk back, collecting the slices of b each slice of a met.
    let mut sum = vec![0f32; n];
    let mut count = vec![0f32; n];
    let (mut i, mut j) = (n - 1, m - 1);
    loop {
        sum[i] += j as f32;
        count[i] += 1.0;
        if i == 0 && j == 0 {
            break;
        }
        let diag = if i > 0 && j > 0 {
            cost[at(i - 1, j - 1)]
        } else {
            f32::INFINITY
        };
        let up = if i > 0 {
            cost[at(i - 1, j)] + step_cost
        } else {
            f32::INFINITY
        };
        let left = if j > 0 {
            cost[at(i, j - 1)] + step_cost
        } else {
            f32::INFINITY
        };
        if diag <= up && diag <= left {
            i -= 1;
            j -= 1;
        } else if up <= left {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    sum.iter().zip(&count).map(|(s, c)| s / c.max(1.0)).collect()
}

/// A monotone map along one axis from the template's box `tlo..thi` into the mesh's `lo..hi`, through the slice
/// matches `matched` (one per template slice; empty: the plain box map).
#[derive(Clone, Debug, PartialEq)]
pub struct AxisMap {
    pub tlo: f32,
    pub thi: f32,
    pub lo: f32,
    pub hi: f32,
    pub matched: Vec<f32>,
}

impl AxisMap {
    /// The plain box's scale along this axis (mesh size over template size).
    pub fn scale(&self) -> f32 {
        (self.hi - self.lo) / (self.thi - self.tlo).max(1e-9)
    }

    pub fn apply(&self, x: f32) -> f32 {
        let tsize = (self.thi - self.tlo).max(1e-9);
        let size = self.hi - self.lo;
        let n = self.matched.len();
        if n < 2 {
            return self.lo + (x - self.tlo) / tsize * size;
        }
        // Slice centres map to matched slice centres; the box's ends map to the box's ends.
        let u = (x - self.tlo) / tsize * n as f32;
        let knots = |k: usize| -> (f32, f32) {
            match k {
                0 => (0.0, 0.0),
                k if k == n + 1 => (n as f32, n as f32),
                k => (k as f32 - 0.5, self.matched[k - 1] + 0.5),
            }
        };
        let mut k = 0;
        while k + 1 < n + 1 && knots(k + 1).0 < u {
            k += 1;
        }
        let (u0, v0) = knots(k);
        let (u1, v1) = knots(k + 1);
        let v = if u1 > u0 {
            v0 + (u - u0) / (u1 - u0) * (v1 - v0)
        } else {
            v0
        };
        self.lo + v / n as f32 * size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_lands_on_the_step() {
        // a: thin for 8 slices, then full; b: thin for 20 slices, then full.
        let a: Vec<f32> = (0..32).map(|i| if i < 8 { 0.2 } else { 1.0 }).collect();
        let b: Vec<f32> = (0..32).map(|i| if i < 20 { 0.2 } else { 1.0 }).collect();
        let m = warp(&a, &b, 0.01);
        assert!(m[7] <= 20.0 && m[8] >= 19.0, "{m:?}");
        let map = AxisMap {
            tlo: 0.0,
            thi: 32.0,
            lo: 0.0,
            hi: 32.0,
            matched: m,
        };
        assert!((map.apply(8.0) - 20.0).abs() < 1.5, "{}", map.apply(8.0));
        assert!(map.apply(0.0).abs() < 1e-4 && (map.apply(32.0) - 32.0).abs() < 1e-4);
    }

    #[test]
    fn equal_profiles_map_to_themselves() {
        let a: Vec<f32> = (0..16).map(|i| (i as f32 * 0.7).sin().abs()).collect();
        let m = warp(&a, &a, 0.01);
        for (i, v) in m.iter().enumerate() {
            assert!((v - i as f32).abs() < 1e-6);
        }
        assert!(profile(&[], 0, 0.0, 0.0, 4).iter().all(|&c| c == 0.0));
    }
}
