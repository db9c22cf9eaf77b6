//! The box test every traversal shares ([`RayBox`]) and the nearest-hit query ([`TriangleBvh::ray_cast`]).

use glam::Vec3;

use super::{Hit, Node, TriangleBvh, query_ok};

/// Traversal stack entries: more than the deepest tree the build makes (under `MAX_LINEAR_DEPTH + 32`, 80).
pub(super) const STACK: usize = 96;
/// Box-test margin in units of `f32::EPSILON` times the scene's size (seen from the query origin) over `|dir|`.
const MARGIN_EPS: f32 = 64.0;

/// The box-test state of one query: origin, inverse direction, which axes run backwards, and the margin by which
/// boxes are widened (in units of the ray parameter).
#[derive(Clone, Copy)]
pub(super) struct RayBox {
    pub(super) origin: Vec3,
    pub(super) inv: Vec3,
    neg: [bool; 3],
    pub(super) margin: f32,
}

impl RayBox {
    /// `root` bounds the whole scene: the margin is [`MARGIN_EPS`] `* f32::EPSILON *` (the distance from the
    /// origin to the scene's far side) `/ |dir|`, which exceeds both the rounding error of the slab distances and
    /// that of the triangle test's `t` (a few ulps of the origin-to-corner distance over `|dir|`) except for rays
    /// that graze a triangle's plane.
    fn new(origin: Vec3, dir: Vec3, root: &Node) -> Self {
        Self::with_scale(origin, dir, Self::margin_scale(origin, root))
    }

    /// The margin times `|dir|`: [`MARGIN_EPS`] `* f32::EPSILON *` (the distance from `origin` to the scene's far
    /// side), the same for every direction from `origin`.
    pub(super) fn margin_scale(origin: Vec3, root: &Node) -> f32 {
        MARGIN_EPS * f32::EPSILON * Self::scene_reach(origin, root)
    }

    /// The distance from `origin` to the far side of the scene bounded by `root` (at most: the distance to the
    /// centre of its box plus the box's half diagonal).
    pub(super) fn scene_reach(origin: Vec3, root: &Node) -> f32 {
        let center = root.min * 0.5 + root.max * 0.5;
        let radius = (root.max * 0.5 - root.min * 0.5).length();
        (origin - center).length() + radius
    }

    /// [`Self::new`] with the origin's [`Self::margin_scale`] given.
    pub(super) fn with_scale(origin: Vec3, dir: Vec3, scale: f32) -> Self {
        let inv = dir.recip();
        // The largest component stands in for |dir| (within a factor of √3) and cannot overflow.
        let margin = scale / dir.abs().max_element();
        Self {
            origin,
            inv,
            neg: [
                inv.x.is_sign_negative(),
                inv.y.is_sign_negative(),
                inv.z.is_sign_negative(),
            ],
            margin,
        }
    }

    /// Slab test of `node`'s box against the parameter interval `[t_lo, t_hi]`: the entry parameter (at least
    /// `t_lo`) if the ray passes through the box (widened by the margin) within the interval. A NaN slab distance
    /// (origin on a box plane of an axis the ray runs parallel to) does not constrain the interval.
    #[inline(always)]
    pub(super) fn enter(&self, node: &Node, t_lo: f32, t_hi: f32) -> Option<f32> {
        let t1 = (node.min - self.origin) * self.inv;
        let t2 = (node.max - self.origin) * self.inv;
        let (lx, hx) = if self.neg[0] { (t2.x, t1.x) } else { (t1.x, t2.x) };
        let (ly, hy) = if self.neg[1] { (t2.y, t1.y) } else { (t1.y, t2.y) };
        let (lz, hz) = if self.neg[2] { (t2.z, t1.z) } else { (t1.z, t2.z) };
        // `if x > near` keeps `near` when x is NaN; likewise for far.
        let mut near = t_lo;
        let mut far = t_hi;
        for (l, h) in [(lx, hx), (ly, hy), (lz, hz)] {
            near = if l > near { l } else { near };
            far = if h < far { h } else { far };
        }
        if near <= far + self.margin { Some(near) } else { None }
    }
}

impl TriangleBvh {
    /// Nearest hit of the ray `origin + t * dir` with `t` in `[t_min, t_max]`; `dir` need not be normalised (`t` is
    /// in units of `dir`). Both faces count. Among hits at the same `t` the lowest triangle index wins, so the
    /// answer equals the exhaustive search's (the tests' `ray_cast_naive`). `None` for a zero or non-finite
    /// direction or a non-finite origin.
    pub fn ray_cast(&self, origin: Vec3, dir: Vec3, t_min: f32, t_max: f32) -> Option<Hit> {
        if self.hittable == 0 || !query_ok(origin, dir) {
            return None;
        }
        let ray = RayBox::new(origin, dir, &self.nodes[0]);
        ray.enter(&self.nodes[0], t_min, t_max)?;
        let mut best: Option<Hit> = None;
        let mut t_hi = t_max;
        let mut stack = [(0u32, 0.0f32); STACK];
        let mut sp = 0;
        let mut at = 0usize;
        loop {
            let node = &self.nodes[at];
            if node.count > 0 {
                for (tri, id) in self.leaf(node) {
                    let Some((t, u, v)) = tri.intersect(origin, dir) else {
                        continue;
                    };
                    if t >= t_min && t <= t_hi && best.is_none_or(|b| t < b.t || id < b.triangle) {
                        best = Some(Hit { t, triangle: id, u, v });
                        t_hi = t;
                    }
                }
            } else {
                let left = node.first as usize;
                let hl = ray.enter(&self.nodes[left], t_min, t_hi);
                let hr = ray.enter(&self.nodes[left + 1], t_min, t_hi);
                match (hl, hr) {
                    (Some(tl), Some(tr)) => {
                        let (near, far, t_far) = if tr < tl {
                            (left + 1, left, tl)
                        } else {
                            (left, left + 1, tr)
                        };
                        stack[sp] = (far as u32, t_far);
                        sp += 1;
                        at = near;
                        continue;
                    }
                    (Some(_), None) => {
                        at = left;
                        continue;
                    }
                    (None, Some(_)) => {
                        at = left + 1;
                        continue;
                    }
                    (None, None) => {}
                }
            }
            // Pop the next subtree that may still hold a hit no farther than the best so far.
            loop {
                if sp == 0 {
                    return best;
                }
                sp -= 1;
                let (n, t_enter) = stack[sp];
                if t_enter <= t_hi + ray.margin {
                    at = n as usize;
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "ray_tests.rs"]
mod tests;
