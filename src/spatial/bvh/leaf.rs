//! A leaf's triangles tested against one segment together, a triangle a SIMD lane, for the segment traversal
//! (`wide.rs`): [`Tri::intersect`]'s operations in the same order in every lane, so each lane answers as that
//! routine does. Eight lanes in one AVX pass in the x86-64-v3 copy of the traversal (`avx::Leaf8`), two passes of
//! four baseline lanes otherwise ([`TwoLeaf4`]).

use glam::{Vec3, Vec4};

use super::Tri;

/// Up to four triangles of a leaf, structure of arrays (a lane each; missing lanes have zero edges, which no
/// segment crosses), for Möller–Trumbore tests of one segment against all four at once.
///
/// Lanes, not a triangle at a time: the line bind of the creature sample (100k) runs its visibility traversals in
/// 168 M instructions against 217 M (callgrind), medians 45 ms against 59 ms (`cargo bench --bench bind`).
struct Leaf4 {
    a: [Vec4; 3],
    e1: [Vec4; 3],
    e2: [Vec4; 3],
}

/// The corners of the first `N` of `tris` as lanes, `[corner][axis][lane]` (missing lanes zero), for a leaf test.
#[inline(always)]
fn corner_lanes<const N: usize>(tris: &[Tri]) -> [[[f32; N]; 3]; 3] {
    let mut c = [[[0.0f32; N]; 3]; 3];
    for (l, t) in tris.iter().take(N).enumerate() {
        for (corner, p) in [t.a, t.b, t.c].into_iter().enumerate() {
            c[corner][0][l] = p.x;
            c[corner][1][l] = p.y;
            c[corner][2][l] = p.z;
        }
    }
    c
}

impl Leaf4 {
    /// The lanes of `tris` (the first four). The edges are the same subtractions [`Tri::intersect`] makes.
    #[inline(always)]
    fn load(tris: &[Tri]) -> Self {
        let c = corner_lanes::<4>(tris);
        let v = |corner: usize, axis: usize| Vec4::from_array(c[corner][axis]);
        let a = [v(0, 0), v(0, 1), v(0, 2)];
        Self {
            a,
            e1: [v(1, 0) - a[0], v(1, 1) - a[1], v(1, 2) - a[2]],
            e2: [v(2, 0) - a[0], v(2, 1) - a[1], v(2, 2) - a[2]],
        }
    }

    /// Lanes whose triangle the line `origin + t * dir` crosses at some `t` in `(lo, hi)` (bit `l` for lane `l`):
    /// [`Tri::intersect`]'s arithmetic, operation for operation (the same products, sums and differences in the
    /// same order, and a true division), so each lane answers as that routine does.
    #[inline(always)]
    fn crossed(&self, origin: Vec3, dir: Vec3, lo: Vec4, hi: Vec4) -> u32 {
        let [e1x, e1y, e1z] = self.e1;
        let [e2x, e2y, e2z] = self.e2;
        let (dx, dy, dz) = (Vec4::splat(dir.x), Vec4::splat(dir.y), Vec4::splat(dir.z));
        // p = dir × e2, det = e1 · p.
        let px = dy * e2z - e2y * dz;
        let py = dz * e2x - e2z * dx;
        let pz = dx * e2y - e2x * dy;
        let det = e1x * px + e1y * py + e1z * pz;
        let inv = Vec4::ONE / det;
        // s = origin - a, u = (s · p) / det.
        let sx = Vec4::splat(origin.x) - self.a[0];
        let sy = Vec4::splat(origin.y) - self.a[1];
        let sz = Vec4::splat(origin.z) - self.a[2];
        let u = (sx * px + sy * py + sz * pz) * inv;
        // q = s × e1, v = (dir · q) / det, t = (e2 · q) / det.
        let qx = sy * e1z - e1y * sz;
        let qy = sz * e1x - e1z * sx;
        let qz = sx * e1y - e1x * sy;
        let v = (dx * qx + dy * qy + dz * qz) * inv;
        let t = (e2x * qx + e2y * qy + e2z * qz) * inv;
        let ok = det.cmpne(Vec4::ZERO)
            & u.cmpge(Vec4::ZERO)
            & u.cmple(Vec4::ONE)
            & v.cmpge(Vec4::ZERO)
            & (u + v).cmple(Vec4::ONE)
            & t.cmpgt(lo)
            & t.cmplt(hi);
        ok.bitmask()
    }
}

/// A leaf's triangles as a segment test reads them: up to eight, a triangle a lane, tested against one segment
/// together, each lane answering as [`Tri::intersect`] does. The traversal's (`wide::packet_hit`) baseline copy uses
/// two [`Leaf4`]s ([`TwoLeaf4`]); its x86-64-v3 copy one eight-lane AVX pass (`avx::Leaf8`).
///
/// An implementation may use instructions beyond the baseline (`avx::Leaf8`): it is then used only by a function
/// compiled with, and run only on processors with, the features it needs.
pub(super) trait Leaf8Test {
    /// The lanes of `tris` (the first eight; missing lanes are never crossed).
    fn load(tris: &[Tri]) -> Self;
    /// Lanes whose triangle the line `origin + t * dir` crosses at some `t` in `(lo, hi)` (bit `l` for lane `l`).
    fn crossed(&self, origin: Vec3, dir: Vec3, lo: f32, hi: f32) -> u32;
}

/// Eight lanes as two [`Leaf4`]s (the second only for a leaf of more than four triangles), baseline SIMD.
pub(super) struct TwoLeaf4(Leaf4, Option<Leaf4>);

impl Leaf8Test for TwoLeaf4 {
    #[inline(always)]
    fn load(tris: &[Tri]) -> Self {
        Self(
            Leaf4::load(tris),
            tris.get(4..).filter(|rest| !rest.is_empty()).map(Leaf4::load),
        )
    }

    #[inline(always)]
    fn crossed(&self, origin: Vec3, dir: Vec3, lo: f32, hi: f32) -> u32 {
        let (lo4, hi4) = (Vec4::splat(lo), Vec4::splat(hi));
        self.0.crossed(origin, dir, lo4, hi4) | self.1.as_ref().map_or(0, |l| l.crossed(origin, dir, lo4, hi4) << 4)
    }
}

/// The eight-lane leaf test in AVX (x86-64-v3's 256-bit lanes), for the traversal's x86-64-v3 copy
/// (`wide::packet_hit_v3`).
///
/// Kept for 148 M traversal instructions against `TwoLeaf4`'s 168 M in the same copy (callgrind, the line bind
/// of the creature sample, 100k); `cargo bench --bench bind` could not separate the two in time (46-47 ms each).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(super) mod avx {
    use std::arch::x86_64::{
        __m256, _CMP_GE_OQ, _CMP_GT_OQ, _CMP_LE_OQ, _CMP_LT_OQ, _CMP_NEQ_UQ, _mm256_add_ps, _mm256_and_ps,
        _mm256_cmp_ps, _mm256_div_ps, _mm256_loadu_ps, _mm256_movemask_ps, _mm256_mul_ps, _mm256_set1_ps,
        _mm256_setzero_ps, _mm256_sub_ps,
    };

    use glam::Vec3;

    use super::{Leaf8Test, Tri};

    /// Up to eight triangles of a leaf, structure of arrays (a lane each; missing lanes have zero edges, which no
    /// segment crosses). [`Leaf4`](super::Leaf4)'s arithmetic, eight lanes at once: the same operations in the
    /// same order as [`Tri::intersect`] (products, sums, differences, a true division; `+`, `*`, `/` are exact to
    /// IEEE single precision in either encoding, and no multiply-add is fused), so each lane answers as it does.
    pub(in crate::spatial::bvh) struct Leaf8 {
        a: [__m256; 3],
        e1: [__m256; 3],
        e2: [__m256; 3],
    }

    // The methods run AVX instructions. `Leaf8` is used only by `packet_hit_v3`, which is compiled with AVX
    // (among x86-64-v3's features) and called only when the processor has them (`crate::simd::dispatch!`); the
    // functions below are `#[target_feature(enable = "avx")]` and inline into it.
    impl Leaf8Test for Leaf8 {
        #[inline(always)]
        fn load(tris: &[Tri]) -> Self {
            // SAFETY: see the `impl`.
            unsafe { load(tris) }
        }

        #[inline(always)]
        fn crossed(&self, origin: Vec3, dir: Vec3, lo: f32, hi: f32) -> u32 {
            // SAFETY: see the `impl`.
            unsafe { crossed(self, origin, dir, lo, hi) }
        }
    }

    /// [`Leaf8Test::load`]: the edges are the same subtractions [`Tri::intersect`] makes.
    #[target_feature(enable = "avx")]
    #[inline]
    unsafe fn load(tris: &[Tri]) -> Leaf8 {
        let c = super::corner_lanes::<8>(tris);
        #[allow(unused_unsafe)]
        // SAFETY: each load reads one `[f32; 8]`; AVX is enabled (this function's precondition).
        unsafe {
            let mut leaf = Leaf8 {
                a: [_mm256_setzero_ps(); 3],
                e1: [_mm256_setzero_ps(); 3],
                e2: [_mm256_setzero_ps(); 3],
            };
            for (axis, ((a, e1), e2)) in leaf.a.iter_mut().zip(&mut leaf.e1).zip(&mut leaf.e2).enumerate() {
                *a = _mm256_loadu_ps(c[0][axis].as_ptr());
                *e1 = _mm256_sub_ps(_mm256_loadu_ps(c[1][axis].as_ptr()), *a);
                *e2 = _mm256_sub_ps(_mm256_loadu_ps(c[2][axis].as_ptr()), *a);
            }
            leaf
        }
    }

    /// [`Leaf8Test::crossed`], written as [`Leaf4::crossed`](super::Leaf4) is.
    #[target_feature(enable = "avx")]
    #[inline]
    unsafe fn crossed(leaf: &Leaf8, origin: Vec3, dir: Vec3, lo: f32, hi: f32) -> u32 {
        #[allow(unused_unsafe)]
        // SAFETY: AVX is enabled (this function's precondition); nothing here reads memory.
        unsafe {
            let (mul, add, sub) = (_mm256_mul_ps, _mm256_add_ps, _mm256_sub_ps);
            let [e1x, e1y, e1z] = leaf.e1;
            let [e2x, e2y, e2z] = leaf.e2;
            let (dx, dy, dz) = (_mm256_set1_ps(dir.x), _mm256_set1_ps(dir.y), _mm256_set1_ps(dir.z));
            // p = dir × e2, det = e1 · p.
            let px = sub(mul(dy, e2z), mul(e2y, dz));
            let py = sub(mul(dz, e2x), mul(e2z, dx));
            let pz = sub(mul(dx, e2y), mul(e2x, dy));
            let det = add(add(mul(e1x, px), mul(e1y, py)), mul(e1z, pz));
            let (zero, one) = (_mm256_setzero_ps(), _mm256_set1_ps(1.0));
            let inv = _mm256_div_ps(one, det);
            // s = origin - a, u = (s · p) / det.
            let sx = sub(_mm256_set1_ps(origin.x), leaf.a[0]);
            let sy = sub(_mm256_set1_ps(origin.y), leaf.a[1]);
            let sz = sub(_mm256_set1_ps(origin.z), leaf.a[2]);
            let u = mul(add(add(mul(sx, px), mul(sy, py)), mul(sz, pz)), inv);
            // q = s × e1, v = (dir · q) / det, t = (e2 · q) / det.
            let qx = sub(mul(sy, e1z), mul(e1y, sz));
            let qy = sub(mul(sz, e1x), mul(e1z, sx));
            let qz = sub(mul(sx, e1y), mul(e1x, sy));
            let v = mul(add(add(mul(dx, qx), mul(dy, qy)), mul(dz, qz)), inv);
            let t = mul(add(add(mul(e2x, qx), mul(e2y, qy)), mul(e2z, qz)), inv);
            // Ordered comparisons (false for NaN) but `det != 0`, unordered (true for NaN), as glam's `cmpne`.
            let and = _mm256_and_ps;
            let ok = and(
                and(
                    and(
                        _mm256_cmp_ps::<_CMP_NEQ_UQ>(det, zero),
                        _mm256_cmp_ps::<_CMP_GE_OQ>(u, zero),
                    ),
                    and(
                        _mm256_cmp_ps::<_CMP_LE_OQ>(u, one),
                        _mm256_cmp_ps::<_CMP_GE_OQ>(v, zero),
                    ),
                ),
                and(
                    and(
                        _mm256_cmp_ps::<_CMP_LE_OQ>(add(u, v), one),
                        _mm256_cmp_ps::<_CMP_GT_OQ>(t, _mm256_set1_ps(lo)),
                    ),
                    _mm256_cmp_ps::<_CMP_LT_OQ>(t, _mm256_set1_ps(hi)),
                ),
            );
            _mm256_movemask_ps(ok) as u32
        }
    }
}

#[cfg(test)]
#[path = "leaf_tests.rs"]
mod tests;
