//! The nearest-point query ([`TriangleBvh::nearest_within`]): the point of the surface closest to a point, within
//! a radius, among the triangles a filter accepts.

use glam::Vec3;

use super::ray::STACK;
use super::{Node, Tri, TriangleBvh};

/// The surface point nearest a query ([`TriangleBvh::nearest_within`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nearest {
    /// Index of the triangle in the input triangle list.
    pub triangle: u32,
    /// The nearest point.
    pub point: Vec3,
    /// Its barycentric coordinates on the triangle's corners (they sum to 1).
    pub bary: [f32; 3],
    /// Its squared distance from the query point.
    pub dist2: f32,
}

/// The squared distance from `p` to `node`'s box (0 inside it).
#[inline(always)]
fn box_dist2(node: &Node, p: Vec3) -> f32 {
    let d = (node.min - p).max(p - node.max).max(Vec3::ZERO);
    d.length_squared()
}

/// The point of the triangle `a b c` nearest `p`, with its barycentric coordinates (Ericson, "Real-Time Collision
/// Detection", 2005, section 5.1.5: the Voronoi regions of the corners, then of the edges, then the face).
pub fn closest_on_triangle(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> (Vec3, [f32; 3]) {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, [1.0, 0.0, 0.0]);
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, [0.0, 1.0, 0.0]);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, [1.0 - v, v, 0.0]);
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, [0.0, 0.0, 1.0]);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, [1.0 - w, 0.0, w]);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, [0.0, 1.0 - w, w]);
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    (a + ab * v + ac * w, [1.0 - v - w, v, w])
}

impl Tri {
    /// [`closest_on_triangle`] on this copy's corners.
    #[inline(always)]
    fn closest(&self, p: Vec3) -> (Vec3, [f32; 3]) {
        closest_on_triangle(p, self.a, self.b, self.c)
    }
}

impl TriangleBvh {
    /// The point nearest `p` on the triangles that `accept` (given a triangle's index in the input list) lets
    /// through, if one lies within `radius`. Degenerate triangles are never found. Ties: the lowest triangle
    /// index, so the answer equals the exhaustive search's. `None` for a non-finite `p` or radius.
    pub fn nearest_within(&self, p: Vec3, radius: f32, accept: impl Fn(u32) -> bool) -> Option<Nearest> {
        if self.hittable == 0 || !p.is_finite() || !radius.is_finite() || radius < 0.0 {
            return None;
        }
        let mut best: Option<Nearest> = None;
        let mut limit = radius * radius;
        if box_dist2(&self.nodes[0], p) > limit {
            return None;
        }
        let mut stack = [0u32; STACK];
        let mut sp = 0;
        let mut at = 0usize;
        loop {
            let node = &self.nodes[at];
            if node.count > 0 {
                for (tri, id) in self.leaf(node) {
                    if !tri.hittable() || !accept(id) {
                        continue;
                    }
                    let (q, bary) = tri.closest(p);
                    let d2 = (q - p).length_squared();
                    let better = best.map_or(d2 <= limit, |b| d2 < b.dist2 || (d2 == b.dist2 && id < b.triangle));
                    if better {
                        best = Some(Nearest {
                            triangle: id,
                            point: q,
                            bary,
                            dist2: d2,
                        });
                        limit = d2;
                    }
                }
            } else {
                let left = node.first as usize;
                let dl = box_dist2(&self.nodes[left], p);
                let dr = box_dist2(&self.nodes[left + 1], p);
                let (near, far, d_near, d_far) = if dr < dl {
                    (left + 1, left, dr, dl)
                } else {
                    (left, left + 1, dl, dr)
                };
                if d_far <= limit && sp < STACK {
                    stack[sp] = far as u32;
                    sp += 1;
                }
                if d_near <= limit {
                    at = near;
                    continue;
                }
            }
            // Pop the next subtree that may still hold a point no farther than the best so far.
            loop {
                if sp == 0 {
                    return best;
                }
                sp -= 1;
                let n = stack[sp] as usize;
                if box_dist2(&self.nodes[n], p) <= limit {
                    at = n;
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random numbers in [0, 1) (a fixed LCG: the test needs no crate).
    fn rng(seed: &mut u64) -> f32 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*seed >> 40) as f32 / (1u64 << 24) as f32
    }

    /// The closest point lies on the triangle (barycentric coordinates non-negative, summing to 1, giving the
    /// point) and no sampled point of the triangle is nearer.
    #[test]
    fn closest_point_is_on_the_triangle_and_nearest() {
        let mut s = 7u64;
        for _ in 0..500 {
            let mut v = || Vec3::new(rng(&mut s), rng(&mut s), rng(&mut s)) * 4.0 - 2.0;
            let (a, b, c, p) = (v(), v(), v(), v());
            let (q, w) = closest_on_triangle(p, a, b, c);
            assert!(
                w.iter().all(|&x| x >= -1e-5) && (w.iter().sum::<f32>() - 1.0).abs() < 1e-4,
                "{w:?}"
            );
            assert!((a * w[0] + b * w[1] + c * w[2] - q).length() < 1e-4);
            let d = (q - p).length();
            for i in 0..=20 {
                for j in 0..=(20 - i) {
                    let (u, t) = (i as f32 / 20.0, j as f32 / 20.0);
                    let x = a * (1.0 - u - t) + b * u + c * t;
                    assert!((x - p).length() >= d - 1e-4);
                }
            }
        }
    }

    /// The tree's answer equals the exhaustive search's, with and without a filter and a radius.
    #[test]
    fn nearest_within_matches_the_exhaustive_search() {
        let mut s = 11u64;
        let positions: Vec<Vec3> = (0..600)
            .map(|_| Vec3::new(rng(&mut s), rng(&mut s), rng(&mut s)) * 10.0)
            .collect();
        let triangles: Vec<[u32; 3]> = (0..200).map(|t| [3 * t, 3 * t + 1, 3 * t + 2]).collect();
        let bvh = TriangleBvh::new_linear(&positions, &triangles);
        for q in 0..300 {
            let p = Vec3::new(rng(&mut s), rng(&mut s), rng(&mut s)) * 12.0 - 1.0;
            let radius = if q % 3 == 0 { f32::MAX } else { rng(&mut s) * 3.0 };
            let accept = |t: u32| q % 2 == 0 || t % 3 != 0;
            let mut want: Option<(f32, u32)> = None;
            for (t, tri) in triangles.iter().enumerate() {
                if !accept(t as u32) {
                    continue;
                }
                let [a, b, c] = tri.map(|i| positions[i as usize]);
                let d2 = (closest_on_triangle(p, a, b, c).0 - p).length_squared();
                if d2 <= radius * radius && want.is_none_or(|w| d2 < w.0) {
                    want = Some((d2, t as u32));
                }
            }
            let got = bvh.nearest_within(p, radius, accept);
            assert_eq!(got.map(|g| g.triangle), want.map(|w| w.1), "query {q}");
            if let (Some(g), Some(w)) = (got, want) {
                assert_eq!(g.dist2, w.0);
            }
        }
        assert!(bvh.nearest_within(Vec3::NAN, 1.0, |_| true).is_none());
    }
}
