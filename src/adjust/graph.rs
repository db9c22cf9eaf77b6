//! The welded vertex graph that smoothing and rogue removal walk: coincident vertices (UV seams, split normals,
//! separate parts touching at a point) become one node, so that a seam never cuts a weight field in two, and two
//! nodes are neighbours when a triangle has an edge between them.
//!
//! Welding is [`crate::mesh::weld_map`] at a tolerance of `1e-6` times the mesh's bounding-box diagonal, the
//! same rule binding uses. Node ids follow the lowest vertex index of each group.
//!
//! Edge weights for smoothing: uniform (every neighbour 1), or cotangent, `(cot α + cot β) / 2` over the two
//! angles opposite the edge (Pinkall and Polthier 1993; Meyer et al. 2003), taken on the node positions.
//! Negative cotangent weights (obtuse triangles) are clamped to 0, as is usual for diffusion, so smoothing stays
//! a convex combination; a node whose cotangent weights are all 0 falls back to uniform weights.

use glam::Vec3;

/// Relative weld tolerance (of the bounding-box diagonal).
pub const WELD_TOLERANCE: f32 = 1e-6;

/// The welded vertex graph of a mesh.
#[derive(Clone, Debug, Default)]
pub struct MeshGraph {
    /// Node of each vertex.
    node: Vec<u32>,
    /// Vertices of node `n`: `members[member_start[n]..member_start[n + 1]]`, ascending.
    member_start: Vec<u32>,
    members: Vec<u32>,
    /// Neighbours of node `n`: `adjacency[adj_start[n]..adj_start[n + 1]]`, ascending, no self-loops.
    adj_start: Vec<u32>,
    adjacency: Vec<u32>,
    /// Position of each node (its lowest vertex's).
    positions: Vec<Vec3>,
}

impl MeshGraph {
    /// Build from a mesh; triangles with an index out of range are ignored.
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]]) -> Self {
        let n = positions.len();
        let diag = crate::model::skin::bounds(positions).map_or(1.0, |(lo, hi)| (hi - lo).length());
        let weld = crate::mesh::weld_map(positions, WELD_TOLERANCE * diag);
        // Nodes numbered in order of their lowest vertex (the weld representative).
        let mut node = vec![0u32; n];
        let mut count = 0u32;
        let mut node_pos = Vec::new();
        for v in 0..n {
            let r = weld[v] as usize;
            if r == v {
                node[v] = count;
                node_pos.push(positions[v]);
                count += 1;
            } else {
                node[v] = node[r];
            }
        }
        let nodes = count as usize;
        let mut member_start = vec![0u32; nodes + 1];
        for &k in &node {
            member_start[k as usize + 1] += 1;
        }
        for k in 0..nodes {
            member_start[k + 1] += member_start[k];
        }
        let mut fill = member_start.clone();
        let mut members = vec![0u32; n];
        for (v, &k) in node.iter().enumerate() {
            members[fill[k as usize] as usize] = v as u32;
            fill[k as usize] += 1;
        }

        // Adjacency: count both directions of every triangle edge, fill, then sort and dedupe each list in place.
        let edges = |t: &[u32; 3]| -> Option<[u32; 3]> {
            if t.iter().all(|&i| (i as usize) < n) {
                Some([node[t[0] as usize], node[t[1] as usize], node[t[2] as usize]])
            } else {
                None
            }
        };
        let mut start = vec![0u32; nodes + 1];
        for t in triangles.iter().filter_map(edges) {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                if a != b {
                    start[a as usize + 1] += 1;
                    start[b as usize + 1] += 1;
                }
            }
        }
        for k in 0..nodes {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut raw = vec![0u32; start[nodes] as usize];
        for t in triangles.iter().filter_map(edges) {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                if a != b {
                    raw[fill[a as usize] as usize] = b;
                    fill[a as usize] += 1;
                    raw[fill[b as usize] as usize] = a;
                    fill[b as usize] += 1;
                }
            }
        }
        let mut adj_start = Vec::with_capacity(nodes + 1);
        adj_start.push(0u32);
        let mut write = 0usize;
        for k in 0..nodes {
            let (s, e) = (start[k] as usize, start[k + 1] as usize);
            raw[s..e].sort_unstable();
            let mut last = u32::MAX;
            for r in s..e {
                let x = raw[r];
                if x != last {
                    raw[write] = x;
                    write += 1;
                    last = x;
                }
            }
            adj_start.push(write as u32);
        }
        raw.truncate(write);
        raw.shrink_to_fit();
        Self {
            node,
            member_start,
            members,
            adj_start,
            adjacency: raw,
            positions: node_pos,
        }
    }

    /// Number of nodes (welded vertices).
    pub fn nodes(&self) -> usize {
        self.positions.len()
    }

    /// Number of mesh vertices.
    pub fn vertices(&self) -> usize {
        self.node.len()
    }

    /// The node of vertex `v`.
    #[inline]
    pub fn node_of(&self, v: usize) -> usize {
        self.node[v] as usize
    }

    /// The vertices of node `n`, ascending.
    #[inline]
    pub fn members(&self, n: usize) -> &[u32] {
        &self.members[self.member_start[n] as usize..self.member_start[n + 1] as usize]
    }

    /// The neighbours of node `n`, ascending.
    #[inline]
    pub fn neighbours(&self, n: usize) -> &[u32] {
        &self.adjacency[self.adj_start[n] as usize..self.adj_start[n + 1] as usize]
    }

    /// Where node `n`'s neighbour list starts in the flat adjacency (for per-edge arrays).
    #[inline]
    pub fn edge_range(&self, n: usize) -> std::ops::Range<usize> {
        self.adj_start[n] as usize..self.adj_start[n + 1] as usize
    }

    /// Position of node `n`.
    pub fn position(&self, n: usize) -> Vec3 {
        self.positions[n]
    }

    /// Every node's position, by node.
    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }

    /// Total directed edges (each undirected edge twice).
    pub fn edges(&self) -> usize {
        self.adjacency.len()
    }

    /// Cotangent weight of every directed edge, aligned with the flat adjacency (see the module doc), from the
    /// same triangles the graph was built from.
    pub fn cotangent_weights(&self, triangles: &[[u32; 3]]) -> Vec<f32> {
        let n = self.node.len();
        let mut w = vec![0.0f32; self.adjacency.len()];
        let slot = |a: u32, b: u32| -> Option<usize> {
            let r = self.edge_range(a as usize);
            self.adjacency[r.clone()].binary_search(&b).ok().map(|k| r.start + k)
        };
        for t in triangles {
            if !t.iter().all(|&i| (i as usize) < n) {
                continue;
            }
            let k = [
                self.node[t[0] as usize],
                self.node[t[1] as usize],
                self.node[t[2] as usize],
            ];
            if k[0] == k[1] || k[1] == k[2] || k[0] == k[2] {
                continue;
            }
            for c in 0..3 {
                let (o, a, b) = (k[c], k[(c + 1) % 3], k[(c + 2) % 3]);
                let (e1, e2) = (self.position(a as usize) - self.position(o as usize), {
                    self.position(b as usize) - self.position(o as usize)
                });
                let area2 = e1.cross(e2).length();
                if !(area2 > 0.0 && area2.is_finite()) {
                    continue;
                }
                let half_cot = 0.5 * e1.dot(e2) / area2;
                for (x, y) in [(a, b), (b, a)] {
                    if let Some(s) = slot(x, y) {
                        w[s] += half_cot;
                    }
                }
            }
        }
        for x in &mut w {
            if !(x.is_finite() && *x > 0.0) {
                *x = 0.0;
            }
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles sharing an edge through duplicated vertices weld into a 4-node quad.
    #[test]
    fn welds_seams_and_lists_neighbours() {
        let p = vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::X, Vec3::Y, Vec3::new(1.0, 1.0, 0.0)];
        let t = vec![[0, 1, 2], [3, 5, 4], [0, 9, 1]];
        let g = MeshGraph::new(&p, &t);
        assert_eq!(g.nodes(), 4);
        assert_eq!(g.vertices(), 6);
        assert_eq!((g.node_of(3), g.node_of(4), g.node_of(5)), (1, 2, 3));
        assert_eq!(g.members(1), &[1, 3]);
        assert_eq!(g.neighbours(0), &[1, 2]);
        assert_eq!(g.neighbours(1), &[0, 2, 3]);
        assert_eq!(g.neighbours(3), &[1, 2]);
        assert_eq!(g.edges(), 10);
    }

    /// On the unit square split along its diagonal, the diagonal's opposite angles are both 90 degrees (weight 0)
    /// and each side has one 45-degree opposite angle (weight cot 45 / 2 = 0.5).
    #[test]
    fn cotangent_weights_of_a_square() {
        let p = vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y];
        let t = vec![[0, 1, 2], [0, 2, 3]];
        let g = MeshGraph::new(&p, &t);
        let w = g.cotangent_weights(&t);
        let weight = |a: usize, b: usize| {
            let r = g.edge_range(a);
            let k = g.neighbours(a).iter().position(|&x| x as usize == b).unwrap();
            w[r.start + k]
        };
        assert!(weight(0, 2).abs() < 1e-6 && weight(2, 0).abs() < 1e-6);
        for (a, b) in [(0, 1), (1, 2), (2, 3), (3, 0)] {
            assert!((weight(a, b) - 0.5).abs() < 1e-6, "{a}-{b}: {}", weight(a, b));
            assert!((weight(b, a) - 0.5).abs() < 1e-6);
        }
    }
}
