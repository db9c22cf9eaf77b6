//! Problem vertices grouped into regions: connected over the welded mesh graph (a vertex's welded twins and its
//! neighbours), each with its centre, reach and the joints that weight it most.

use std::collections::HashMap;

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
    // Problem vertices by node.
    let mut by_node: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, p) in problems.iter().enumerate() {
        by_node.entry(graph.node_of(p.0 as usize) as u32).or_default().push(i);
    }
    let mut nodes: Vec<u32> = by_node.keys().copied().collect();
    nodes.sort_unstable();
    let mut seen: HashMap<u32, bool> = nodes.iter().map(|&k| (k, false)).collect();
    let mut out = Vec::new();
    for &start in &nodes {
        if seen[&start] {
            continue;
        }
        seen.insert(start, true);
        let mut stack = vec![start];
        let mut members: Vec<usize> = Vec::new();
        while let Some(k) = stack.pop() {
            members.extend_from_slice(&by_node[&k]);
            for &u in graph.neighbours(k as usize) {
                if let Some(s) = seen.get_mut(&u) {
                    if !*s {
                        *s = true;
                        stack.push(u);
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
    let mut sums: HashMap<u16, f32> = HashMap::new();
    for &v in &vertices {
        let (js, ws) = rig.weights.row(v as usize);
        for (&j, &w) in js.iter().zip(ws) {
            *sums.entry(j).or_default() += w;
        }
    }
    let mut ranked: Vec<(u16, f32)> = sums.into_iter().collect();
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
