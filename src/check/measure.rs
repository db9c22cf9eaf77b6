//! The measures of one pose (module doc of `check`): each active triangle, vertex and contact, given the posed
//! positions and the pose's transforms ([`PoseView`]), reported as (kind, vertex, severity, value) to a sink.

use glam::{Mat4, Vec3};

use super::jump::{JumpBuffers, LinearSwing, RingShares, jump_linear, jump_reference};
use super::prep::{Prepared, tet};
use super::{Kind, Tolerances};

/// Severities are capped here, so that a degenerate triangle does not make an infinite score.
pub(super) const MAX_SEVERITY: f32 = 100.0;

/// A contact counts while its two vertices stay within this many edge lengths of each other.
const CONTACT_REACH: f32 = 4.0;

/// What a pose moves: the triangles, the vertices whose wedge volume is measured, the vertices whose jumps are
/// measured, and the contacts (indices into [`Prepared::contacts`]); for a swing, the jumps' sorted
/// neighbourhood shares.
#[derive(Clone, Debug, Default)]
pub(super) struct Active {
    pub tris: Vec<u32>,
    pub wedges: Vec<u32>,
    pub jumps: Vec<u32>,
    pub contacts: Vec<u32>,
    pub ring_shares: Option<RingShares>,
    pub wedge_corners: Option<WedgeCorners>,
}

/// Per vertex of [`Active::wedges`], the corners of its triangles in order (none where it has no rest wedge):
/// read straight, rather than through the vertex's triangle list, in every pose.
#[derive(Clone, Debug, Default)]
pub(super) struct WedgeCorners {
    start: Vec<u32>,
    corners: Vec<[u32; 3]>,
}

impl WedgeCorners {
    pub fn new(prep: &Prepared, wedges: &[u32]) -> Self {
        let mut start = Vec::with_capacity(wedges.len() + 1);
        let mut corners = Vec::new();
        start.push(0u32);
        for &v in wedges {
            if prep.wedge[v as usize] != 0.0 {
                corners.extend(prep.tris_of(v as usize).iter().map(|&t| prep.tris[t as usize]));
            }
            start.push(corners.len() as u32);
        }
        Self { start, corners }
    }

    fn of(&self, i: usize) -> &[[u32; 3]] {
        match (self.start.get(i), self.start.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.corners[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// A pose as the measures see it.
pub(super) trait PoseView {
    /// Joint `j`'s skinning matrix (the identity for [`super::prep::NO_JOINT`]).
    fn frame(&self, j: u16) -> Mat4;
    /// Direction `n` at rest, turned as skinning turns vertex `v`'s directions (not normalised).
    fn turn(&self, v: u32, n: Vec3) -> Vec3;
    /// Rest point `p` moved as skinning moves vertex `v` (with `v`'s weights).
    fn place_as(&self, v: u32, p: Vec3) -> Vec3;
    /// The sum of [`PoseView::turn`] of `n` at each corner of `tri`, in order.
    fn turn_sum(&self, tri: [u32; 3], n: Vec3) -> Vec3 {
        tri.iter().map(|&v| self.turn(v, n)).sum()
    }
    /// The swing when the pose is one joint's swing skinned by linear blend (or rigidly): what
    /// [`jump_linear`] needs.
    fn linear_swing(&self) -> Option<LinearSwing> {
        None
    }
}

/// Where a sink's reports go: (kind, vertex, severity, value in the kind's unit).
pub(super) trait Sink {
    fn record(&mut self, kind: Kind, v: u32, severity: f32, value: f32);
    /// A triangle's stretch, shear and (when defined) flip, each (severity, value), at each of its corners.
    fn record_triangle(&mut self, tri: [u32; 3], stretch: (f32, f32), shear: (f32, f32), flip: Option<(f32, f32)>) {
        for v in tri {
            self.record(Kind::Stretch, v, stretch.0, stretch.1);
            self.record(Kind::Shear, v, shear.0, shear.1);
            if let Some((severity, value)) = flip {
                self.record(Kind::Flip, v, severity, value);
            }
        }
    }
}

/// Tolerances turned into what the measures divide by.
pub(super) struct Scale {
    ln_stretch: f32,
    ln_area: f32,
    ln_shear: f32,
    flip: f32,
    collapse: f32,
    jump: f32,
    penetration: f32,
}

impl Scale {
    pub fn new(t: &Tolerances) -> Self {
        let ln = |x: f32| x.max(1.0 + 1e-3).ln();
        let pos = |x: f32| x.max(1e-6);
        Self {
            ln_stretch: ln(t.stretch),
            ln_area: ln(t.area),
            ln_shear: ln(t.shear),
            flip: pos(t.flip_degrees),
            collapse: pos(t.collapse),
            jump: pos(t.jump),
            penetration: pos(t.penetration),
        }
    }
}

fn cap(x: f32) -> f32 {
    if x.is_nan() {
        MAX_SEVERITY
    } else {
        x.clamp(0.0, MAX_SEVERITY)
    }
}

/// Measure one pose.
pub(super) fn measure<P: PoseView, S: Sink>(
    prep: &Prepared,
    rest: &[Vec3],
    posed: &[Vec3],
    pose: &P,
    active: &Active,
    scale: &Scale,
    sink: &mut S,
) {
    for &t in &active.tris {
        triangle(prep, posed, pose, t as usize, scale, sink);
    }
    for (i, &v) in active.wedges.iter().enumerate() {
        let v = v as usize;
        let before = prep.wedge[v];
        if before == 0.0 {
            continue;
        }
        let a = pose.frame(prep.dom[v]).transform_point3(prep.axis[v]);
        let tet_of = |c: [u32; 3]| tet(a, c.map(|i| posed[i as usize]));
        let after: f32 = match &active.wedge_corners {
            Some(w) => w.of(i).iter().map(|&c| tet_of(c)).sum(),
            None => prep.tris_of(v).iter().map(|&t| tet_of(prep.tris[t as usize])).sum(),
        };
        let loss = 1.0 - after / before;
        sink.record(Kind::Collapse, v as u32, cap(loss / scale.collapse), loss);
    }
    let mut bufs = JumpBuffers::default();
    let linear = pose.linear_swing();
    for (i, &v) in active.jumps.iter().enumerate() {
        let v = v as usize;
        let off = match (&linear, &active.ring_shares) {
            (Some(swing), Some(rings)) => {
                let (low, high) = rings.of(i);
                jump_linear(rest[v], posed[v], prep.edge[v], low, high, swing, &mut bufs)
            }
            _ => jump_reference(prep, rest, posed, pose, v, &mut bufs),
        };
        if let Some(off) = off {
            sink.record(Kind::Jump, v as u32, cap(off / scale.jump), off);
        }
    }
    for &c in &active.contacts {
        let c = prep.contacts[c as usize];
        let normal = pose.turn(c.u, c.normal).normalize_or(c.normal);
        let apart = posed[c.v as usize] - posed[c.u as usize];
        if apart.length() > CONTACT_REACH * prep.edge[c.v as usize] {
            // No longer near: whatever side it is on, it did not pass through here.
            continue;
        }
        let side = apart.dot(normal);
        let depth = (-side).max(0.0) / prep.edge[c.v as usize];
        sink.record(Kind::Penetration, c.v, cap(depth / scale.penetration), depth);
    }
}

/// Stretch, shear and flip of triangle `t`, reported at its corners.
fn triangle<P: PoseView, S: Sink>(prep: &Prepared, posed: &[Vec3], pose: &P, t: usize, scale: &Scale, sink: &mut S) {
    let tri = prep.tris[t];
    let rest = prep.tri_rest[t];
    let p = tri.map(|i| posed[i as usize]);
    let (e1, e2) = (p[1] - p[0], p[2] - p[0]);
    let (g11, g12, g22) = (e1.dot(e1), e1.dot(e2), e2.dot(e2));
    let [a, b, c] = rest.inv_metric;
    // The eigenvalues of inverse(G0) G are the squared principal stretches.
    let tr = a * g11 + 2.0 * b * g12 + c * g22;
    let det = ((g11 * g22 - g12 * g12) * (a * c - b * b)).max(0.0);
    let disc = (tr * tr / 4.0 - det).max(0.0).sqrt();
    let s1 = (tr / 2.0 + disc).max(0.0).sqrt();
    let s2 = (tr / 2.0 - disc).max(0.0).sqrt();
    // Stretching only: squashing is what collapse measures (a well-weighted crease squashes).
    let (length, area) = (s1, s1 * s2);
    let by_length = length.ln() / scale.ln_stretch;
    let by_area = area.ln() / scale.ln_area;
    let (stretch, stretch_value) = if by_length >= by_area {
        (by_length, length)
    } else {
        (by_area, area)
    };
    let shear = s1 / s2;
    let shear_sev = shear.ln() / scale.ln_shear;
    let normal = e1.cross(e2).normalize_or_zero();
    // Where skinning turns the rest normal at its corners (undefined where the blend squeezes it to nothing:
    // the middle of a half-turn twist under linear blend, which collapse reports).
    let expected = pose.turn_sum(tri, rest.normal);
    let turned = (normal != Vec3::ZERO && expected.length() > 0.1).then(|| {
        let expected = expected.normalize();
        normal.dot(expected).clamp(-1.0, 1.0).acos().to_degrees()
    });
    sink.record_triangle(
        tri,
        (cap(stretch), stretch_value.min(1e6)),
        (cap(shear_sev), shear.min(1e6)),
        turned.map(|deg| (cap(deg / scale.flip), deg)),
    );
}
