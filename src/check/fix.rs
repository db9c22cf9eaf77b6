//! The fixes a finding offers, each a change of some weight rows (one undoable edit in the editor):
//!
//! - **smooth**: Laplacian smoothing ([`crate::adjust::smooth`], 10 iterations at strength 0.5) over the region
//!   and the vertices within two edges of it;
//! - **remove stray weight**: the region's rows replaced by what surrounds it, filled in waves from its border
//!   inward ([`crate::adjust::rogue`]'s fill): whatever weight the region holds that its surroundings do not goes;
//! - **bind again**: the region (and the vertices within two edges of it) takes the rows an automatic bind of the
//!   whole mesh gives, then the same smoothing blends its border.
//!
//! Locked joints keep their weights in every fix.

use super::Rig;
use crate::adjust::graph::MeshGraph;
use crate::adjust::ops::keep_locked;
use crate::adjust::rogue::fill_waves;
use crate::adjust::rows::{normalise_row, sort_row};
use crate::adjust::{Locks, SmoothOptions, smooth};
use crate::bind::{BindOptions, bind_weights};
use crate::model::{Row, Weights};

/// Which fix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fix {
    Smooth,
    RemoveStray,
    BindAgain,
}

impl Fix {
    pub const ALL: [Fix; 3] = [Fix::Smooth, Fix::RemoveStray, Fix::BindAgain];

    pub fn label(self) -> &'static str {
        match self {
            Fix::Smooth => "Smooth region",
            Fix::RemoveStray => "Remove stray weight",
            Fix::BindAgain => "Bind region again",
        }
    }

    /// The fix that suits a kind of problem best (offered first).
    pub fn suggested(kind: super::Kind) -> Fix {
        match kind {
            super::Kind::Jump => Fix::RemoveStray,
            super::Kind::Penetration => Fix::BindAgain,
            _ => Fix::Smooth,
        }
    }
}

/// Why a fix failed.
#[derive(Debug, thiserror::Error)]
pub enum FixError {
    #[error("vertex {0} is not in the mesh")]
    Vertex(u32),
    #[error(transparent)]
    Smooth(#[from] crate::adjust::smooth::SmoothError),
    #[error(transparent)]
    Bind(#[from] crate::bind::BindError),
    #[error(transparent)]
    Weights(#[from] crate::model::WeightsError),
}

/// Iterations of the smoothing the smooth and bind-again fixes use.
pub const SMOOTH_ITERATIONS: u32 = 10;

/// The weights after `fix` on `region` (vertex indices); `bind` is the bind the bind-again fix runs.
pub fn apply_fix(
    rig: Rig<'_>,
    region: &[u32],
    fix: Fix,
    locks: &Locks,
    bind: &BindOptions,
) -> Result<Weights, FixError> {
    let n = rig.positions.len();
    if let Some(&v) = region.iter().find(|&&v| v as usize >= n) {
        return Err(FixError::Vertex(v));
    }
    let graph = MeshGraph::new(rig.positions, rig.triangles);
    let smoothing = SmoothOptions {
        iterations: SMOOTH_ITERATIONS,
        strength: 0.5,
        ..Default::default()
    };
    match fix {
        Fix::Smooth => {
            let mask = grown(&graph, region, 2);
            Ok(smooth(&graph, rig.triangles, rig.weights, &smoothing, locks, Some(&mask))?.0)
        }
        Fix::RemoveStray => remove_stray(&graph, rig.weights, region, locks),
        Fix::BindAgain => {
            let (bound, _) = bind_weights(rig.skel, rig.bind, rig.positions, rig.triangles, bind, &|_| {})?;
            let bound = keep_locked(rig.weights, &bound, locks);
            let mask = grown(&graph, region, 2);
            let rows: Vec<(u32, Row)> = (0..n)
                .filter(|&v| mask[v])
                .map(|v| {
                    let (js, ws) = bound.row(v);
                    (v as u32, js.iter().copied().zip(ws.iter().copied()).collect())
                })
                .collect();
            let replaced = rig.weights.with_rows(&rows)?;
            Ok(smooth(&graph, rig.triangles, &replaced, &smoothing, locks, Some(&mask))?.0)
        }
    }
}

/// Per vertex, whether it is in `region` or within `rings` edges of it (over the welded graph).
fn grown(graph: &MeshGraph, region: &[u32], rings: usize) -> Vec<bool> {
    let mut node_in = vec![false; graph.nodes()];
    let mut wave: Vec<usize> = region.iter().map(|&v| graph.node_of(v as usize)).collect();
    for &k in &wave {
        node_in[k] = true;
    }
    for _ in 0..rings {
        let mut next = Vec::new();
        for &k in &wave {
            for &u in graph.neighbours(k) {
                if !node_in[u as usize] {
                    node_in[u as usize] = true;
                    next.push(u as usize);
                }
            }
        }
        wave = next;
    }
    (0..graph.vertices()).map(|v| node_in[graph.node_of(v)]).collect()
}

/// The region's unlocked weights replaced by the fill from its surroundings.
fn remove_stray(graph: &MeshGraph, weights: &Weights, region: &[u32], locks: &Locks) -> Result<Weights, FixError> {
    let in_region = grown(graph, region, 0);
    let mut rows: Vec<Option<Row>> = (0..graph.nodes())
        .map(|k| {
            let members = graph.members(k);
            if members.iter().any(|&v| in_region[v as usize]) {
                return None;
            }
            let mut row: Row = Vec::new();
            for &v in members {
                let (js, ws) = weights.row(v as usize);
                row.extend(
                    js.iter()
                        .copied()
                        .zip(ws.iter().copied())
                        .filter(|x| !locks.is_locked(x.0)),
                );
            }
            sort_row(&mut row);
            let s: f32 = row.iter().map(|x| x.1).sum();
            (s > 0.0).then(|| row.into_iter().map(|(j, w)| (j, w / s)).collect())
        })
        .collect();
    fill_waves(graph, &mut rows);
    let mut changed: Vec<(u32, Row)> = Vec::new();
    for v in 0..weights.len() {
        if !in_region[v] {
            continue;
        }
        let Some(fill) = &rows[graph.node_of(v)] else { continue };
        let (js, ws) = weights.row(v);
        let mut row: Row = js
            .iter()
            .copied()
            .zip(ws.iter().copied())
            .filter(|x| locks.is_locked(x.0))
            .collect();
        let locked: f32 = row.iter().map(|x| x.1).sum();
        row.extend(fill.iter().map(|&(j, w)| (j, w * (1.0 - locked).max(0.0))));
        sort_row(&mut row);
        normalise_row(&mut row, locks);
        changed.push((v as u32, row));
    }
    Ok(weights.with_rows(&changed)?)
}
