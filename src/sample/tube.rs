//! Resolution and mesh building: each tube's segments and rings chosen so that the whole rig meets the vertex
//! target (the sample module's doc), then its vertices, analytic normals, weights and triangles.

use std::f32::consts::{FRAC_PI_2, TAU};

use glam::Vec3;

use super::spine::{Influences, Spine, Station};

/// The fewest segments around any part.
const MIN_SEGMENTS: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct TubePlan {
    /// Vertices around each ring.
    segments: usize,
    /// Rings along the spine, from its start to its end inclusive (at least 2).
    body_rings: usize,
    /// Ring steps from the end ring to the pole in each cap (at least 2, so each cap has a ring of its own).
    cap_start: usize,
    cap_end: usize,
}

impl TubePlan {
    fn for_spacing(spine: &Spine, edge: f64) -> Self {
        let steps = |length: f32, min: usize| ((f64::from(length) / edge).round().min(1e9) as usize).max(min);
        let (r0, r1) = spine.end_radii();
        TubePlan {
            segments: steps(TAU * spine.max_radius(), MIN_SEGMENTS),
            body_rings: steps(spine.length, 1) + 1,
            cap_start: steps(FRAC_PI_2 * r0, 2),
            cap_end: steps(FRAC_PI_2 * r1, 2),
        }
    }

    fn rings(&self) -> usize {
        self.body_rings + self.cap_start + self.cap_end - 2
    }

    pub(super) fn vertices(&self) -> usize {
        self.segments.saturating_mul(self.rings()).saturating_add(2)
    }

    pub(super) fn triangles(&self) -> usize {
        2 * self.segments * self.rings()
    }
}

pub(super) fn total_vertices(plans: &[TubePlan]) -> usize {
    plans.iter().map(TubePlan::vertices).fold(0, usize::saturating_add)
}

/// Choose every part's resolution so that the total is close to `target` (see the module documentation).
pub(super) fn plan(spines: &[Spine], target: usize) -> Result<Vec<TubePlan>, String> {
    let at = |edge: f64| -> Vec<TubePlan> { spines.iter().map(|s| TubePlan::for_spacing(s, edge)).collect() };
    let count = |edge: f64| total_vertices(&at(edge));
    let area: f64 = spines.iter().map(Spine::area).sum();
    let guess = (area / target as f64).sqrt();
    // Bracket: count(fine) >= target > count(coarse).
    let (mut fine, mut coarse) = (guess, guess);
    for _ in 0..200 {
        if count(fine) >= target {
            break;
        }
        fine *= 0.5;
    }
    for _ in 0..200 {
        if count(coarse) < target {
            break;
        }
        coarse *= 2.0;
    }
    for _ in 0..64 {
        let mid = (fine * coarse).sqrt();
        if count(mid) >= target {
            fine = mid;
        } else {
            coarse = mid;
        }
    }
    let (over, under) = (at(fine), at(coarse));
    let mut plans = if total_vertices(&over).abs_diff(target) <= total_vertices(&under).abs_diff(target) {
        over
    } else {
        under
    };
    // Add or remove whole rings of the part with the most segments to come within half a ring of the target.
    let widest = (0..plans.len()).fold(0, |best, i| {
        if plans[i].segments > plans[best].segments {
            i
        } else {
            best
        }
    });
    let total = total_vertices(&plans);
    if let Some(p) = plans.get_mut(widest) {
        let rings = ((target as f64 - total as f64) / p.segments as f64).round();
        p.body_rings = (p.body_rings as f64 + rings).max(2.0) as usize;
    }
    let total = total_vertices(&plans);
    if total.saturating_mul(10) < target.saturating_mul(9) || total.saturating_mul(10) > target.saturating_mul(11) {
        return Err(format!("could not meet the target of {target} vertices (got {total})"));
    }
    Ok(plans)
}

#[derive(Default)]
pub(super) struct MeshBuf {
    pub(super) positions: Vec<Vec3>,
    pub(super) normals: Vec<Vec3>,
    pub(super) triangles: Vec<[u32; 3]>,
    pub(super) offsets: Vec<u32>,
    pub(super) joints: Vec<u16>,
    pub(super) values: Vec<f32>,
}

impl MeshBuf {
    pub(super) fn with_capacity(vertices: usize, triangles: usize) -> Self {
        let mut offsets = Vec::with_capacity(vertices + 1);
        offsets.push(0);
        MeshBuf {
            positions: Vec::with_capacity(vertices),
            normals: Vec::with_capacity(vertices),
            triangles: Vec::with_capacity(triangles),
            offsets,
            joints: Vec::with_capacity(vertices * 2),
            values: Vec::with_capacity(vertices * 2),
        }
    }

    /// Give the last `count` vertices the influences `row`.
    fn weigh(&mut self, row: Influences, count: usize) {
        let entries = &row.entries[..row.len];
        for _ in 0..count {
            for &(j, w) in entries {
                self.joints.push(j);
                self.values.push(w);
            }
            self.offsets.push(self.values.len() as u32);
        }
    }
}

/// Append one part: start pole, start cap rings, body rings, end cap rings, end pole; then its triangles.
pub(super) fn emit_tube(spine: &Spine, plan: &TubePlan, out: &mut MeshBuf) {
    let n = plan.segments;
    let trig: Vec<(f32, f32)> = (0..n)
        .map(|j| {
            let a = TAU * j as f32 / n as f32;
            (a.cos(), a.sin())
        })
        .collect();
    let base = out.positions.len() as u32;
    let head = spine.station(0.0);
    let tail = spine.station(spine.length);
    let (w_head, w_tail) = (spine.influences(0.0), spine.influences(spine.length));

    // A cap ring at angle `phi` from the equator toward the pole in direction `pole` (±t).
    let cap_ring = |out: &mut MeshBuf, st: &Station, pole: Vec3, phi: f32| {
        let (cp, sp) = (phi.cos(), phi.sin());
        for &(c, s) in &trig {
            let normal = (st.u * c + st.v * s) * cp + pole * sp;
            out.positions.push(st.c + normal * st.r);
            out.normals.push(normal);
        }
    };

    out.positions.push(head.c - head.t * head.r);
    out.normals.push(-head.t);
    out.weigh(w_head, 1);
    for q in (1..plan.cap_start).rev() {
        cap_ring(out, &head, -head.t, FRAC_PI_2 * q as f32 / plan.cap_start as f32);
        out.weigh(w_head, n);
    }
    let last = plan.body_rings - 1;
    for i in 0..=last {
        let s = if i == last {
            spine.length
        } else {
            spine.length * i as f32 / last as f32
        };
        let st = spine.station(s);
        for &(c, sn) in &trig {
            let e = st.u * c + st.v * sn;
            let stretch = 1.0 - st.r * st.kappa.dot(e);
            out.positions.push(st.c + e * st.r);
            out.normals.push((e * stretch - st.t * st.dr).normalize());
        }
        out.weigh(spine.influences(s), n);
    }
    for q in 1..plan.cap_end {
        cap_ring(out, &tail, tail.t, FRAC_PI_2 * q as f32 / plan.cap_end as f32);
        out.weigh(w_tail, n);
    }
    out.positions.push(tail.c + tail.t * tail.r);
    out.normals.push(tail.t);
    out.weigh(w_tail, 1);

    let rings = plan.rings();
    let n32 = n as u32;
    let vertex = |ring: usize, j: usize| base + 1 + (ring * n) as u32 + (j % n) as u32;
    let (pole0, pole1) = (base, base + 1 + rings as u32 * n32);
    for j in 0..n {
        out.triangles.push([pole0, vertex(0, j + 1), vertex(0, j)]);
    }
    for k in 0..rings - 1 {
        for j in 0..n {
            let (a, b, c, d) = (vertex(k, j), vertex(k, j + 1), vertex(k + 1, j + 1), vertex(k + 1, j));
            out.triangles.push([a, b, c]);
            out.triangles.push([a, c, d]);
        }
    }
    for j in 0..n {
        out.triangles
            .push([vertex(rings - 1, j), vertex(rings - 1, j + 1), pole1]);
    }
}
