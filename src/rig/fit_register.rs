//! Non-rigid registration of one solid onto another ([`super::fit`]): the template's solid cells are moved onto
//! the mesh's by a smooth displacement field, and the template's joints ride the same field.
//!
//! Each round matches both ways: every template point is pulled to its nearest mesh point, and every mesh point
//! pulls the template point nearest it (so a long neck the template lacks drags the template's head up to where
//! the mesh's head is). A point's pull is the mean of the pulls on it, weighted by their number; the pulls are
//! spread into a smooth field by normalised Gaussian convolution on a lattice (splat, blur along each axis,
//! divide by the blurred weight),
//! whose width shrinks round by round from a near-affine motion to local detail (a point-cloud form of Thirion's
//! demons, 1998, with the coarse-to-fine schedule of Myronenko and Song's Coherent Point Drift, 2010).

use glam::{Vec3, Vec4};

use crate::spatial::points::PointIndex;

/// How the registration runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    pub rounds: usize,
    /// The field's width in the first and the last round, as a share of the mesh's box diagonal.
    pub sigma_start: f32,
    pub sigma_end: f32,
    /// Lattice cells along the longest side of the lattice's box.
    pub lattice: usize,
    /// How much a mesh point's pull on its nearest template point counts against that point's own pull (1: the
    /// same).
    pub back_weight: f32,
    /// Spread each point's pulls with the weight of how many there are (else each point counts once).
    pub by_count: bool,
}

impl Default for Schedule {
    fn default() -> Self {
        Self {
            rounds: 24,
            sigma_start: 0.4,
            sigma_end: 0.03,
            lattice: 48,
            back_weight: 1.0,
            by_count: true,
        }
    }
}

/// A displacement per node of a regular lattice.
struct Field {
    origin: Vec3,
    h: f32,
    dims: [usize; 3],
    value: Vec<Vec3>,
}

impl Field {
    fn node(&self, x: usize, y: usize, z: usize) -> usize {
        x + self.dims[0] * (y + self.dims[1] * z)
    }

    /// The lattice cell holding `p` (clamped) and the position within it.
    fn locate(&self, p: Vec3) -> ([usize; 3], Vec3) {
        let g = ((p - self.origin) / self.h).max(Vec3::ZERO);
        let mut c = [0usize; 3];
        let mut f = Vec3::ZERO;
        for a in 0..3 {
            let top = self.dims[a].saturating_sub(2) as f32;
            let ga = if g[a].is_finite() { g[a].min(top) } else { 0.0 };
            c[a] = ga.floor() as usize;
            f[a] = (ga - c[a] as f32).clamp(0.0, 1.0);
        }
        (c, f)
    }

    /// Trilinear weights of the 8 nodes around `p`.
    fn corners(&self, p: Vec3) -> [(usize, f32); 8] {
        let (c, f) = self.locate(p);
        let mut out = [(0usize, 0f32); 8];
        for (k, o) in out.iter_mut().enumerate() {
            let (dx, dy, dz) = (k & 1, (k >> 1) & 1, (k >> 2) & 1);
            let w = (if dx == 1 { f.x } else { 1.0 - f.x })
                * (if dy == 1 { f.y } else { 1.0 - f.y })
                * (if dz == 1 { f.z } else { 1.0 - f.z });
            *o = (self.node(c[0] + dx, c[1] + dy, c[2] + dz), w);
        }
        out
    }

    fn sample(&self, p: Vec3) -> Vec3 {
        self.corners(p).iter().map(|&(n, w)| self.value[n] * w).sum()
    }
}

/// Blur `v` (a lattice of `dims`, x fastest) along each axis by a Gaussian of `sigma` cells, the kernel cut at
/// three sigma and at the lattice's ends.
///
/// PERF: a wide blur (40% of the diagonal, some 16 cells a side, on a lattice of 48 cells) is most of the
/// registration's time. Each axis is done on whole rows or planes at once, contiguous in memory and in parallel
/// (rayon): along x row by row; along y each plane's rows as weighted sums of its rows; along z each plane as a
/// weighted sum of planes. Only the taps that fall inside the lattice are visited. Every value is summed in the
/// same order as the one-line-at-a-time convolution (`blur_reference` in the tests), so the result is the same
/// to the bit.
fn blur<T>(v: &mut [T], dims: [usize; 3], sigma: f32)
where
    T: Copy + Default + Send + Sync + std::ops::Add<Output = T> + std::ops::Mul<f32, Output = T>,
{
    use rayon::prelude::*;
    if v.is_empty() || dims.contains(&0) || v.len() != dims[0] * dims[1] * dims[2] {
        return;
    }
    let r = (3.0 * sigma).ceil().max(1.0) as usize;
    let kernel: Vec<f32> = (0..=2 * r)
        .map(|t| (-((t as f32 - r as f32).powi(2)) / (2.0 * sigma * sigma)).exp())
        .collect();
    // The taps `t` of output `k` on a line of `n` that fall inside it: `k + t - r` in `0..n`.
    let taps = |k: usize, n: usize| r.saturating_sub(k)..=(2 * r).min(n - 1 + r - k);
    let (nx, ny) = (dims[0], dims[1]);
    let plane = nx * ny;
    v.par_chunks_mut(nx).for_each(|row| {
        let line = row.to_vec();
        for (k, out) in row.iter_mut().enumerate() {
            let mut acc = T::default();
            for t in taps(k, nx) {
                acc = acc + line[k + t - r] * kernel[t];
            }
            *out = acc;
        }
    });
    v.par_chunks_mut(plane).for_each(|slab| {
        let src = slab.to_vec();
        for (y, out) in slab.chunks_mut(nx).enumerate() {
            out.fill(T::default());
            for t in taps(y, ny) {
                let from = &src[(y + t - r) * nx..][..nx];
                for (o, &x) in out.iter_mut().zip(from) {
                    *o = *o + x * kernel[t];
                }
            }
        }
    });
    let src = v.to_vec();
    v.par_chunks_mut(plane).enumerate().for_each(|(z, out)| {
        out.fill(T::default());
        for t in taps(z, dims[2]) {
            let from = &src[(z + t - r) * plane..][..plane];
            for (o, &x) in out.iter_mut().zip(from) {
                *o = *o + x * kernel[t];
            }
        }
    });
}

/// Move `moving` (the template's points) onto `fixed` (the mesh's), and `riders` (the joints) with them, by the
/// schedule (no rounds: nothing moves); `diag` is the mesh's box diagonal. Returns the moved riders.
pub fn register(moving: &[Vec3], fixed: &[Vec3], riders: &[Vec3], diag: f32, schedule: &Schedule) -> Vec<Vec3> {
    let mut riders = riders.to_vec();
    if schedule.rounds == 0 || moving.is_empty() || fixed.is_empty() || !(diag > 0.0 && diag.is_finite()) {
        return riders;
    }
    let mut pts = moving.to_vec();
    let fixed_index = PointIndex::of(fixed);
    // The lattice covers everything that moves and the mesh, with room for the widest blur.
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for p in pts.iter().chain(fixed).chain(&riders) {
        if p.is_finite() {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
    }
    let pad = 0.1 * diag;
    lo -= Vec3::splat(pad);
    hi += Vec3::splat(pad);
    let h = (hi - lo).max_element() / schedule.lattice.max(4) as f32;
    let dims = ((hi - lo) / h)
        .ceil()
        .as_uvec3()
        .to_array()
        .map(|d| (d as usize + 2).max(2));
    let nodes = dims[0] * dims[1] * dims[2];
    let rounds = schedule.rounds;
    let mut pull = vec![Vec3::ZERO; pts.len()];
    let mut count = vec![0f32; pts.len()];
    for round in 0..rounds {
        let t = if rounds > 1 {
            round as f32 / (rounds - 1) as f32
        } else {
            1.0
        };
        let sigma = diag * schedule.sigma_start * (schedule.sigma_end / schedule.sigma_start).powf(t);
        let moving_index = PointIndex::of(&pts);
        for (i, p) in pts.iter().enumerate() {
            pull[i] = fixed_index
                .nearest_within(*p, f32::INFINITY)
                .and_then(|k| fixed.get(k))
                .map_or(Vec3::ZERO, |q| *q - *p);
            count[i] = 1.0;
        }
        for q in fixed {
            if let Some(k) = moving_index.nearest_within(*q, f32::INFINITY)
                && let Some(p) = pts.get(k)
            {
                pull[k] += (*q - *p) * schedule.back_weight;
                count[k] += schedule.back_weight;
            }
        }
        let mut field = Field {
            origin: lo,
            h,
            dims,
            value: vec![Vec3::ZERO; nodes],
        };
        let mut weight = vec![0f32; nodes];
        for (i, p) in pts.iter().enumerate() {
            let d = pull[i] / count[i];
            let m = if schedule.by_count { count[i] } else { 1.0 };
            for (n, w) in field.corners(*p) {
                field.value[n] += d * (w * m);
                weight[n] += w * m;
            }
        }
        // Blurred together, the weight in the fourth lane (each lane's sums as apart).
        let mut both: Vec<Vec4> = field.value.iter().zip(&weight).map(|(v, w)| v.extend(*w)).collect();
        blur(&mut both, dims, sigma / h);
        for ((v, w), b) in field.value.iter_mut().zip(weight.iter_mut()).zip(&both) {
            (*v, *w) = (b.truncate(), b.w);
        }
        let floor = 1e-4 * weight.iter().copied().fold(0.0, f32::max);
        for (v, w) in field.value.iter_mut().zip(&weight) {
            *v = if *w > floor { *v / *w } else { Vec3::ZERO };
        }
        for p in pts.iter_mut().chain(riders.iter_mut()) {
            *p += field.sample(*p);
        }
    }
    riders
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn bar(len: f32, step: f32) -> Vec<Vec3> {
        let mut out = Vec::new();
        let mut x = 0.0;
        while x <= len {
            for y in [-0.2, 0.0, 0.2] {
                for z in [-0.2, 0.0, 0.2] {
                    out.push(Vec3::new(x, y, z));
                }
            }
            x += step;
        }
        out
    }

    /// A bar bent up at its end: the template's end rides up to the mesh's.
    #[test]
    fn a_joint_follows_the_part_it_sits_in() {
        let moving = bar(4.0, 0.1);
        let fixed: Vec<Vec3> = bar(4.0, 0.1)
            .into_iter()
            .map(|p| if p.x > 3.0 { p + Vec3::Y * (p.x - 3.0) } else { p })
            .collect();
        let riders = [Vec3::new(1.0, 0.0, 0.0), Vec3::new(3.9, 0.0, 0.0)];
        let out = register(&moving, &fixed, &riders, 4.1, &Schedule::default());
        assert!(out[0].distance(riders[0]) < 0.15, "{}", out[0]);
        assert!(out[1].y > 0.4, "{}", out[1]);
    }

    /// The convolution one line at a time, every tap visited: what [`blur`] was written as first.
    fn blur_reference(v: &mut [Vec3], dims: [usize; 3], sigma: f32) {
        let r = (3.0 * sigma).ceil().max(1.0) as isize;
        let kernel: Vec<f32> = (-r..=r)
            .map(|i| (-(i as f32).powi(2) / (2.0 * sigma * sigma)).exp())
            .collect();
        let stride = [1, dims[0], dims[0] * dims[1]];
        for axis in 0..3 {
            let n = dims[axis];
            let (u, w) = ((axis + 1) % 3, (axis + 2) % 3);
            for j in 0..dims[w] {
                for i in 0..dims[u] {
                    let base = i * stride[u] + j * stride[w];
                    let line: Vec<Vec3> = (0..n).map(|k| v[base + k * stride[axis]]).collect();
                    for k in 0..n {
                        let mut acc = Vec3::ZERO;
                        for (t, &kw) in kernel.iter().enumerate() {
                            let at = k as isize + t as isize - r;
                            if at >= 0 && (at as usize) < n {
                                acc += line[at as usize] * kw;
                            }
                        }
                        v[base + k * stride[axis]] = acc;
                    }
                }
            }
        }
    }

    #[test]
    fn the_blur_gives_the_line_by_line_convolution_to_the_bit() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        for (dims, sigma) in [([5, 7, 3], 0.4), ([9, 4, 6], 1.7), ([12, 10, 8], 6.0), ([1, 1, 9], 2.5)] {
            let v: Vec<Vec3> = (0..dims[0] * dims[1] * dims[2])
                .map(|_| Vec3::new(next(), next(), next()))
                .collect();
            let (mut fast, mut slow) = (v.clone(), v);
            blur(&mut fast, dims, sigma);
            blur_reference(&mut slow, dims, sigma);
            let bits = |x: &[Vec3]| {
                x.iter()
                    .flat_map(|p| p.to_array().map(f32::to_bits))
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(&fast), bits(&slow), "{dims:?} at sigma {sigma}");
        }
    }

    #[test]
    fn nothing_to_match_moves_nothing() {
        let r = [Vec3::ONE];
        assert_eq!(register(&[], &[Vec3::ZERO], &r, 1.0, &Schedule::default()), r.to_vec());
    }
}
