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
    // Keys computed once; sorting by (cell, index) puts each group together, lowest index first.
    let mut keyed: Vec<([i64; 3], u32)> = positions
        .iter()
        .enumerate()
        .map(|(i, p)| (cell(*p), i as u32))
        .collect();
    {
        use rayon::slice::ParallelSliceMut;
        keyed.par_sort_unstable();
    }
    let mut rep: Vec<u32> = (0..positions.len() as u32).collect();
    let mut first = 0;
    for k in 1..keyed.len() {
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
