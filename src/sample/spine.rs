//! A tube's spine: lines and circular arcs, arc-length parametrised, with parallel-transported frames; the radius
//! along it, and the weights of a ring at each arc length (the sample module's doc).

use std::f32::consts::TAU;

use glam::{Quat, Vec3};

use super::rigs::{TubeDef, tube_points};
use crate::math::smoothstep;

#[derive(Clone, Copy, Debug)]
enum Curve {
    Line,
    /// A circular arc about `center`, turning about `axis` (right-handed).
    Arc {
        center: Vec3,
        axis: Vec3,
        radius: f32,
    },
}

#[derive(Clone, Copy, Debug)]
struct Piece {
    /// Arc length at the piece's start, and its length.
    s0: f32,
    len: f32,
    curve: Curve,
    /// Point, tangent and frame vector `u` (perpendicular to the tangent) at the piece's start.
    point: Vec3,
    tangent: Vec3,
    u: Vec3,
}

/// The spine at one arc length: centre, orthonormal frame (u, v, t) with `u × v = t`, curvature vector
/// (pointing to the centre of curvature, length 1/radius), radius and its derivative.
pub(super) struct Station {
    pub(super) c: Vec3,
    pub(super) t: Vec3,
    pub(super) u: Vec3,
    pub(super) v: Vec3,
    pub(super) kappa: Vec3,
    pub(super) r: f32,
    pub(super) dr: f32,
}

/// A tube's spine (see the sample module's doc).
pub(super) struct Spine {
    pieces: Vec<Piece>,
    pub(super) length: f32,
    /// Arc length s_k of each pivot, and its joint j_k.
    pub(super) pivots: Vec<f32>,
    joints: Vec<u16>,
    /// (arc length, radius) knots, strictly increasing in arc length.
    knots: Vec<(f32, f32)>,
}

/// Append a straight piece from `from` to `to` (skipped when empty) and advance the arc length `s`.
fn line_to(pieces: &mut Vec<Piece>, from: Vec3, to: Vec3, dir: Vec3, u: Vec3, s: &mut f32) {
    let len = (to - from).length();
    if len > 0.0 {
        pieces.push(Piece {
            s0: *s,
            len,
            curve: Curve::Line,
            point: from,
            tangent: dir,
            u,
        });
        *s += len;
    }
}

/// A unit vector perpendicular to `t`: the world axis least aligned with it, made perpendicular.
fn reference_u(t: Vec3) -> Vec3 {
    let a = t.abs();
    let axis = if a.x <= a.y && a.x <= a.z {
        Vec3::X
    } else if a.y <= a.z {
        Vec3::Y
    } else {
        Vec3::Z
    };
    (axis - t * t.dot(axis)).normalize()
}

impl Spine {
    pub(super) fn new(tube: &TubeDef, rest: &[Vec3]) -> Self {
        let (points, radii) = tube_points(tube, rest);
        let first_pivot = usize::from(tube.start_ext > 0.0);
        let mut pivot_at = vec![None; points.len()];
        for k in 0..tube.chain.len() {
            pivot_at[first_pivot + k] = Some(k);
        }
        let mut pivots = vec![0.0f32; tube.chain.len()];
        let mut pieces = Vec::new();
        let mut dir = (points[1] - points[0]).normalize();
        let mut u = reference_u(dir);
        let mut cur = points[0];
        let mut s = 0.0f32;
        let mut knots = Vec::with_capacity(points.len());
        knots.push((0.0, radii[0]));
        if let Some(k) = pivot_at[0] {
            pivots[k] = 0.0;
        }
        for i in 1..points.len() - 1 {
            let p = points[i];
            let out = (points[i + 1] - p).normalize();
            let cos = dir.dot(out).clamp(-1.0, 1.0);
            let at;
            if cos > 1.0 - 1e-6 {
                line_to(&mut pieces, cur, p, dir, u, &mut s);
                cur = p;
                at = s;
            } else {
                // Round the bend with an arc tangent to both segments, at most 0.45 of either's length.
                let angle = cos.acos();
                let tan_half = (0.5 * angle).tan();
                let room = 0.45 * (p - points[i - 1]).length().min((points[i + 1] - p).length());
                let dist = (tube.fillet * tan_half).min(room);
                let radius = dist / tan_half;
                let a = p - dir * dist;
                line_to(&mut pieces, cur, a, dir, u, &mut s);
                let inward = (out - dir * cos).normalize();
                let axis = dir.cross(out).normalize();
                let len = radius * angle;
                pieces.push(Piece {
                    s0: s,
                    len,
                    curve: Curve::Arc {
                        center: a + inward * radius,
                        axis,
                        radius,
                    },
                    point: a,
                    tangent: dir,
                    u,
                });
                at = s + 0.5 * len;
                s += len;
                u = Quat::from_axis_angle(axis, angle) * u;
                u = (u - out * out.dot(u)).normalize();
                cur = p + out * dist;
            }
            if let Some(k) = pivot_at[i] {
                pivots[k] = at;
            }
            knots.push((at, radii[i]));
            dir = out;
        }
        let end = points[points.len() - 1];
        line_to(&mut pieces, cur, end, dir, u, &mut s);
        if let Some(k) = pivot_at[points.len() - 1] {
            pivots[k] = s;
        }
        knots.push((s, radii[points.len() - 1]));
        Spine {
            pieces,
            length: s,
            pivots,
            joints: tube.chain.iter().map(|&j| j as u16).collect(),
            knots,
        }
    }

    /// Radius and its derivative at arc length `s`: smoothstep between knots, so r' is 0 at every knot.
    fn radius(&self, s: f32) -> (f32, f32) {
        let k = &self.knots;
        let i = k.partition_point(|&(ks, _)| ks <= s);
        match (i.checked_sub(1).and_then(|a| k.get(a)), k.get(i)) {
            (Some(&(sa, ra)), Some(&(sb, rb))) => {
                let span = sb - sa;
                let x = (s - sa) / span;
                (ra + (rb - ra) * smoothstep(x), (rb - ra) * 6.0 * x * (1.0 - x) / span)
            }
            (None, _) => (k[0].1, 0.0),
            (Some(&(_, r)), None) => (r, 0.0),
        }
    }

    pub(super) fn max_radius(&self) -> f32 {
        self.knots.iter().map(|k| k.1).fold(0.0, f32::max)
    }

    pub(super) fn end_radii(&self) -> (f32, f32) {
        (self.knots[0].1, self.knots[self.knots.len() - 1].1)
    }

    /// Approximate surface area (tube wall by the midpoint rule, plus both hemispheres).
    pub(super) fn area(&self) -> f64 {
        const STEPS: usize = 64;
        let ds = self.length / STEPS as f32;
        let wall: f32 = (0..STEPS).map(|i| self.radius((i as f32 + 0.5) * ds).0 * ds).sum();
        let (r0, r1) = self.end_radii();
        f64::from(TAU * (wall + r0 * r0 + r1 * r1))
    }

    pub(super) fn station(&self, s: f32) -> Station {
        let s = s.clamp(0.0, self.length);
        let i = self.pieces.partition_point(|p| p.s0 <= s).saturating_sub(1);
        let piece = &self.pieces[i];
        let sigma = (s - piece.s0).clamp(0.0, piece.len);
        let (c, t, u, kappa) = match piece.curve {
            Curve::Line => (piece.point + piece.tangent * sigma, piece.tangent, piece.u, Vec3::ZERO),
            Curve::Arc { center, axis, radius } => {
                let q = Quat::from_axis_angle(axis, sigma / radius);
                let c = center + q * (piece.point - center);
                (c, q * piece.tangent, q * piece.u, (center - c) / (radius * radius))
            }
        };
        let u = (u - t * t.dot(u)).normalize();
        let (r, dr) = self.radius(s);
        Station {
            c,
            t,
            u,
            v: t.cross(u),
            kappa,
            r,
            dr,
        }
    }

    /// The weights of a ring at arc length `s` (see the module documentation).
    pub(super) fn influences(&self, s: f32) -> Influences {
        let p = &self.pivots;
        let j = &self.joints;
        let n = p.len() - 1;
        for k in 1..=n {
            let next = if k < n { p[k + 1] } else { self.length };
            if next <= p[k] {
                continue;
            }
            let h = 0.25 * (p[k] - p[k - 1]).min(next - p[k]);
            if (s - p[k]).abs() < h {
                let t = smoothstep((s - (p[k] - h)) / (2.0 * h));
                return if t <= 0.0 {
                    Influences::one(j[k - 1])
                } else if t >= 1.0 {
                    Influences::one(j[k])
                } else {
                    Influences {
                        entries: [(j[k - 1], 1.0 - t), (j[k], t)],
                        len: 2,
                    }
                };
            }
        }
        Influences::one(j[p[1..].partition_point(|&pk| pk <= s)])
    }
}

/// One vertex's influences: the first `len` entries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Influences {
    pub(super) entries: [(u16, f32); 2],
    pub(super) len: usize,
}

impl Influences {
    fn one(joint: u16) -> Self {
        Influences {
            entries: [(joint, 1.0), (joint, 0.0)],
            len: 1,
        }
    }
}
