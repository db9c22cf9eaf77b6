//! Problem vertices grouped into regions: connected over the welded mesh graph (a vertex's welded twins and its
//! neighbours), each with its centre, reach and the joints that weight it most.

use glam::Vec3;

use super::Rig;
use super::prep::Prepared;
use super::sweep::Problem;

/// Where a problem is.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Region {
    /// The vertices, ascending.
    pub vertices: Vec<u32>,
    /// Mean rest position.
    pub centre: [f32; 3],
    /// Farthest rest distance of a vertex from the centre.
    pub radius: f32,
    /// The (at most two) joints with the most weight over the region, most first: where it is.
    pub around: Vec<String>,
}

/// The regions of `problems` (one kind, one joint), each with the index in `problems` of its worst vertex
/// (ties: the first); in order of their lowest node.
pub(super) fn regions(prep: &Prepared, rig: Rig<'_>, problems: &[Problem]) -> Vec<(Region, usize)> {
    if problems.is_empty() {
        return Vec::new();
    }
    let graph = &prep.graph;
    // (node, problem) pairs in node order; the distinct nodes; where each node's problems start.
    let mut by_node: Vec<(u32, u32)> = problems
        .iter()
        .enumerate()
        .map(|(i, p)| (graph.node_of(p.0 as usize) as u32, i as u32))
        .collect();
    by_node.sort_unstable();
    let mut nodes: Vec<u32> = Vec::new();
    let mut first: Vec<usize> = Vec::new();
    for (at, &(k, _)) in by_node.iter().enumerate() {
        if nodes.last() != Some(&k) {
            nodes.push(k);
            first.push(at);
        }
    }
    first.push(by_node.len());
    let mut seen = vec![false; nodes.len()];
    let mut out = Vec::new();
    let mut stack = Vec::new();
    for start in 0..nodes.len() {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        let mut members: Vec<usize> = Vec::new();
        while let Some(at) = stack.pop() {
            members.extend(by_node[first[at]..first[at + 1]].iter().map(|&(_, i)| i as usize));
            for &u in graph.neighbours(nodes[at] as usize) {
                if let Ok(found) = nodes.binary_search(&u) {
                    if !seen[found] {
                        seen[found] = true;
                        stack.push(found);
                    }
                }
            }
        }
        members.sort_unstable();
        let worst = members
            .iter()
            .copied()
            .reduce(|a, b| if problems[b].1 > problems[a].1 { b } else { a })
            .unwrap_or(members[0]);
        let vertices: Vec<u32> = members.iter().map(|&i| problems[i].0).collect();
        out.push((region_of(rig, vertices), worst));
    }
    out
}

/// A region's centre, reach and joints.
pub fn region_of(rig: Rig<'_>, mut vertices: Vec<u32>) -> Region {
    vertices.sort_unstable();
    vertices.dedup();
    let pts = || vertices.iter().map(|&v| rig.positions[v as usize]);
    let centre = pts().sum::<Vec3>() / vertices.len().max(1) as f32;
    let radius = pts().map(|p| p.distance(centre)).fold(0.0, f32::max);
    // Each joint's weight over the region, summed in vertex order; the joints in order of first use.
    let mut sums: Vec<(u16, f32)> = Vec::new();
    for &v in &vertices {
        let (js, ws) = rig.weights.row(v as usize);
        for (&j, &w) in js.iter().zip(ws) {
            match sums.iter_mut().find(|s| s.0 == j) {
                Some(s) => s.1 += w,
                None => sums.push((j, w)),
            }
        }
    }
    let mut ranked = sums;
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let around = ranked
        .iter()
        .take(2)
        .filter_map(|&(j, _)| rig.skel.joint(j as usize).map(|x| x.name.clone()))
        .collect();
    Region {
        vertices,
        centre: centre.to_array(),
        radius,
        around,
    }
}
