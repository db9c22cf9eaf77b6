//! The weights of step 4 and step 5 (the `bind` module's doc): the line falloff of distances, the blend of line
//! and volume weights, and the limit to the strongest few, normalised. Shared by the line pipeline and the
//! geodesic method.

use super::nearest::Candidate;
use crate::math::smoothstep;
use crate::model::Row;
use crate::model::weights::keep_strongest;

/// Line weights below this fraction of the nearest bone's are dropped.
pub(super) const MIN_WEIGHT: f32 = 0.01;

/// The line falloff at distance ratio `r = D / D1` (1 at `r = 1`, 0 from `r = ratio` on).
fn line_weight(r: f32, ratio: f32, power: f32) -> f32 {
    if r <= 1.0 {
        1.0
    } else if !r.is_finite() {
        0.0
    } else {
        // Whole powers (the default is 4) by multiplication: `powf` would be 2% of a bind.
        let fall = if power.fract() == 0.0 && power.abs() <= 64.0 {
            powi(r, -(power as i32))
        } else {
            r.powf(-power)
        };
        fall * (1.0 - smoothstep((r - 1.0) / (ratio - 1.0)))
    }
}

/// `x` to the whole power `n` by squaring, the steps of `f32::powi`'s library routine (compiler-builtins'
/// `__powisf2`: the factors multiplied from the lowest bit up, the reciprocal last), so the same value, but inlined
/// rather than called (the call would be 1% of a bind).
#[inline]
fn powi(mut x: f32, n: i32) -> f32 {
    let mut k = n.unsigned_abs();
    let mut product = 1.0f32;
    loop {
        if k & 1 == 1 {
            product *= x;
        }
        k >>= 1;
        if k == 0 {
            break;
        }
        x *= x;
    }
    if n < 0 { 1.0 / product } else { product }
}

/// The line weight of a bone at distance `dist` from a vertex whose nearest bone is at `d1`.
#[inline]
pub(super) fn falloff(dist: f32, d1: f32, ratio: f32, power: f32) -> f32 {
    if dist <= d1 {
        1.0
    } else if d1 <= 0.0 {
        0.0
    } else {
        line_weight(dist / d1, ratio, power)
    }
}

/// Line weights of candidates sorted by distance; weights under [`MIN_WEIGHT`] are dropped.
pub(super) fn line_weights(near_bones: &[Candidate], ratio: f32, power: f32, out: &mut Row) {
    out.clear();
    let Some(first) = near_bones.first() else { return };
    let d1 = first.dist;
    for c in near_bones {
        let w = falloff(c.dist, d1, ratio, power);
        if w >= MIN_WEIGHT {
            out.push((c.joint, w));
        }
    }
}

/// Keep the `k` largest (ties: lower joint), normalise; `rigid` keeps one at weight 1.
pub(super) fn limit_and_normalise(w: &mut Row, k: usize, rigid: bool) {
    // Line weights usually come strongest first already (near bones sorted by distance, the falloff decreasing).
    keep_strongest(w, if rigid { 1 } else { k });
    let sum: f32 = w.iter().map(|x| x.1).sum();
    if sum > 0.0 && sum.is_finite() {
        w.iter_mut().for_each(|x| x.1 /= sum);
    }
    if rigid {
        w.iter_mut().for_each(|x| x.1 = 1.0);
    }
    w.sort_by_key(|x| x.0);
}

/// `line = (normalise(line) + normalise(depths)) / 2`, merged by joint: the hybrid method's weights.
pub(super) fn blend_half(line: &mut Row, depths: &[(u16, f32)]) {
    let line_sum: f32 = line.iter().map(|x| x.1).sum();
    let depth_sum: f32 = depths.iter().map(|x| x.1).sum();
    if line_sum > 0.0 {
        line.iter_mut().for_each(|x| x.1 *= 0.5 / line_sum);
    }
    for &(j, x) in depths {
        add_weight(line, j, if depth_sum > 0.0 { 0.5 * x / depth_sum } else { 0.0 });
    }
}

/// Add `x` to joint `j`'s weight in `row`, appending the joint if the row lacks it.
pub(super) fn add_weight(row: &mut Row, j: u16, x: f32) {
    match row.iter_mut().find(|y| y.0 == j) {
        Some(y) => y.1 += x,
        None => row.push((j, x)),
    }
}

#[cfg(test)]
#[path = "falloff_tests.rs"]
mod tests;
