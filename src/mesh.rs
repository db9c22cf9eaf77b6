//! Mesh connectivity shared by binding and weight clean-up: welding coincident vertices and finding the
//! connected parts of a mesh.
//!
//! Welding: two vertices weld when their positions fall in the same cell of a grid of size `tolerance`
//! (so exact duplicates, as on UV seams and in triangle soups, always weld; nearer pairs across a cell boundary
//! may not). Each vertex maps to the lowest index of its group. Parts: connected components of the welded
//! triangles (union-find with path halving); a vertex on no triangle is a part of its own. Part ids are
//! numbered in order of each part's lowest vertex index, so the result is deterministic.

use glam::Vec3;

/// For each vertex, the lowest index of the vertices it welds to (itself when none).
pub fn weld_map(positions: &[Vec3], tolerance: f32) -> Vec<u32> {
    let cell = |p: Vec3| -> [i64; 3] {
        if tolerance > 0.0 {
            (p / tolerance).floor().as_i64vec3().to_array()
        } else {
            [p.x.to_bits() as i64, p.y.to_bits() as i64, p.z.to_bits() as i64]
        }
    };
    let cells: Vec<[i64; 3]> = positions.iter().map(|p| cell(*p)).collect();
    let lo = cells
        .iter()
        .fold([i64::MAX; 3], |a, c| [a[0].min(c[0]), a[1].min(c[1]), a[2].min(c[2])]);
    let fits = cells
        .iter()
        .all(|c| (0..3).all(|k| c[k].wrapping_sub(lo[k]) as u64 >> 21 == 0));
    // Sorting by (cell, index) puts each group together, lowest index first. Cells packed into one u64 (21 bits
    // an axis) when they fit, which they do for any tolerance above a millionth of the mesh's size.
    if fits {
        let pack =
            |c: &[i64; 3]| ((c[0] - lo[0]) as u64) | (((c[1] - lo[1]) as u64) << 21) | (((c[2] - lo[2]) as u64) << 42);
        group_lowest(cells.iter().enumerate().map(|(i, c)| (pack(c), i as u32)).collect())
    } else {
        group_lowest(cells.iter().enumerate().map(|(i, c)| (*c, i as u32)).collect())
    }
}

/// For `(key, index)` pairs, the lowest index that shares each one's key, by index.
fn group_lowest<K: Ord + Send>(mut keyed: Vec<(K, u32)>) -> Vec<u32> {
    use rayon::slice::ParallelSliceMut;
    keyed.par_sort_unstable();
    let mut rep = vec![0u32; keyed.len()];
    let mut first = 0;
    for k in 0..keyed.len() {
        if keyed[k].0 != keyed[first].0 {
            first = k;
        }
        rep[keyed[k].1 as usize] = keyed[first].1;
    }
    rep
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let up = parent[parent[x as usize] as usize];
        parent[x as usize] = up;
        x = up;
    }
    x
}

/// The part of each vertex (0-based, ordered by lowest vertex index) and the number of parts.
pub fn connected_parts(positions: &[Vec3], triangles: &[[u32; 3]], weld_tolerance: f32) -> (Vec<u32>, usize) {
    let n = positions.len();
    let weld = weld_map(positions, weld_tolerance);
    let mut parent: Vec<u32> = (0..n as u32).collect();
    let union = |a: u32, b: u32, parent: &mut Vec<u32>| {
        let (ra, rb) = (find(parent, a), find(parent, b));
        if ra != rb {
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            parent[hi as usize] = lo;
        }
    };
    for (v, &w) in weld.iter().enumerate() {
        union(v as u32, w, &mut parent);
    }
    for t in triangles {
        if t.iter().all(|&i| (i as usize) < n) {
            union(t[0], t[1], &mut parent);
            union(t[1], t[2], &mut parent);
        }
    }
    let mut id = vec![u32::MAX; n];
    let mut part = vec![0u32; n];
    let mut count = 0u32;
    for v in 0..n as u32 {
        let r = find(&mut parent, v) as usize;
        if id[r] == u32::MAX {
            id[r] = count;
            count += 1;
        }
        part[v as usize] = id[r];
    }
    (part, count as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed-key path (cells within 2^21 of each other) against an O(n^2) reference.
    #[test]
    fn weld_map_matches_brute_force() {
        let mut x: u32 = 99;
        let mut next = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 8) as f32 / (1 << 24) as f32
        };
        let mut p: Vec<Vec3> = (0..400).map(|_| Vec3::new(next(), next(), next())).collect();
        for i in 0..100 {
            let q = p[i * 3];
            p.push(q);
        }
        let tol = 1e-3;
        let cell = |v: Vec3| (v / tol).floor();
        let got = weld_map(&p, tol);
        for (i, &r) in got.iter().enumerate() {
            let want = (0..p.len()).find(|&j| cell(p[j]) == cell(p[i])).unwrap() as u32;
            assert_eq!(r, want, "vertex {i}");
        }
        assert!(got[400..].iter().enumerate().all(|(k, &r)| r == (k * 3) as u32));
    }

    #[test]
    fn duplicates_weld_and_parts_follow_triangles() {
        // Two triangles sharing an edge only through duplicated vertices, plus a separate triangle and a loner.
        let p = vec![
            Vec3::ZERO,
            Vec3::X,
            Vec3::Y,
            Vec3::X,   // duplicate of 1
            Vec3::Y,   // duplicate of 2
            Vec3::ONE, // second triangle's far corner
            Vec3::splat(5.0),
            Vec3::new(6.0, 5.0, 5.0),
            Vec3::new(5.0, 6.0, 5.0),
            Vec3::splat(-9.0),
        ];
        assert_eq!(weld_map(&p, 1e-6)[3], 1);
        assert_eq!(weld_map(&p, 1e-6)[4], 2);
        let t = vec![[0, 1, 2], [3, 5, 4], [6, 7, 8]];
        let (part, n) = connected_parts(&p, &t, 1e-6);
        assert_eq!(n, 3);
        assert_eq!(part, vec![0, 0, 0, 0, 0, 0, 1, 1, 1, 2]);
        // Without welding the second triangle is a part of its own.
        let (_, n0) = connected_parts(&p, &t, 0.0);
        assert_eq!(n0, 3, "zero tolerance still welds exact duplicates");
    }
}
