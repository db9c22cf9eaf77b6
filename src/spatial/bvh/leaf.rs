//! A leaf's triangles tested against one segment together, a triangle a SIMD lane, for the segment traversal
//! (`wide.rs`): [`Tri::intersect`]'s operations in the same order in every lane, so each lane answers as that
//! routine does: two passes of four lanes ([`TwoLeaf4`]). An eight-lane AVX pass ran fewer instructions (148 M
//! against 168 M on the creature's line bind) but no faster by `cargo bench --bench bind`, so it is not kept.

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

/// A leaf's triangles as a segment test reads them: up to eight, as two [`Leaf4`]s (the second only for a leaf of
/// more than four triangles), each lane answering as [`Tri::intersect`] does.
pub(super) struct TwoLeaf4(Leaf4, Option<Leaf4>);

impl TwoLeaf4 {
    /// The lanes of `tris` (the first eight; missing lanes are never crossed).
    #[inline(always)]
    pub(super) fn load(tris: &[Tri]) -> Self {
        Self(
            Leaf4::load(tris),
            tris.get(4..).filter(|rest| !rest.is_empty()).map(Leaf4::load),
        )
    }

    /// Lanes whose triangle the line `origin + t * dir` crosses at some `t` in `(lo, hi)` (bit `l` for lane `l`).
    #[inline(always)]
    pub(super) fn crossed(&self, origin: Vec3, dir: Vec3, lo: f32, hi: f32) -> u32 {
        let (lo4, hi4) = (Vec4::splat(lo), Vec4::splat(hi));
        self.0.crossed(origin, dir, lo4, hi4) | self.1.as_ref().map_or(0, |l| l.crossed(origin, dir, lo4, hi4) << 4)
    }
}

#[cfg(test)]
#[path = "leaf_tests.rs"]
mod tests;
