//! A long chain for benchmarks at many joints: one straight tube, hundreds of joints, weights by formula.

use std::f32::consts::TAU;

use glam::Vec3;

use super::{Sample, check_target};
use crate::math::smoothstep;
use crate::model::skeleton::{Joint, Pose, Skeleton, world_from_joint};
use crate::model::{Row, Skin, Weights};

/// A long chain for benchmarks at many joints: `joints` joints one unit apart along +X (`j0` at the origin),
/// inside a tube of radius 0.3 from x = 0 to x = `joints`, 64 vertices per ring, closed by a pole at each end
/// (`vertices` is a target: `64 * rings + 2` with `rings = (vertices - 2) / 64`, at least 2). Weights: joint
/// `j = floor(x)` (clamped to the chain), blended with the previous joint within 0.25 of each pivot `k >= 1`
/// by `t = smoothstep((x - k + 0.25) / 0.5)`: `1 - t` on `k - 1`, `t` on `k`. Bindings: the zero pose.
pub fn chain_tube(joints: usize, vertices: usize) -> Result<Sample, String> {
    if joints == 0 || joints > u16::MAX as usize {
        return Err(format!("a chain needs 1 to {} joints, not {joints}", u16::MAX));
    }
    check_target(vertices)?;
    let seg = 64usize;
    let rings = (vertices.saturating_sub(2) / seg).max(2);
    let len = joints as f32;
    let mut positions = Vec::with_capacity(rings * seg + 2);
    for r in 0..rings {
        let x = len * r as f32 / (rings - 1) as f32;
        for k in 0..seg {
            let a = TAU * k as f32 / seg as f32;
            positions.push(Vec3::new(x, 0.3 * a.cos(), 0.3 * a.sin()));
        }
    }
    let (south, north) = (positions.len() as u32, positions.len() as u32 + 1);
    positions.push(Vec3::new(-0.3, 0.0, 0.0));
    positions.push(Vec3::new(len + 0.3, 0.0, 0.0));
    let mut triangles = Vec::with_capacity(2 * rings * seg);
    let id = |r: usize, k: usize| (r * seg + k % seg) as u32;
    for r in 0..rings - 1 {
        for k in 0..seg {
            triangles.push([id(r, k), id(r + 1, k), id(r + 1, k + 1)]);
            triangles.push([id(r, k), id(r + 1, k + 1), id(r, k + 1)]);
        }
    }
    for k in 0..seg {
        triangles.push([south, id(0, k), id(0, k + 1)]);
        triangles.push([north, id(rings - 1, k + 1), id(rings - 1, k)]);
    }
    let mut rows: Vec<Row> = Vec::with_capacity(positions.len());
    for p in &positions {
        let x = p.x.clamp(0.0, len);
        let k = (x + 0.25).floor() as usize;
        let row = if k >= 1 && k < joints && (x - k as f32).abs() < 0.25 {
            let t = smoothstep((x - k as f32 + 0.25) / 0.5);
            vec![((k - 1) as u16, 1.0 - t), (k as u16, t)]
        } else {
            vec![((x.floor() as usize).min(joints - 1) as u16, 1.0)]
        };
        rows.push(row);
    }
    let weights = Weights::normalized(rows.iter().map(Vec::as_slice))
        .map_err(|e| e.to_string())?
        .0;
    let skeleton = Skeleton::new(
        (0..joints)
            .map(|j| {
                Joint::new(
                    format!("j{j}"),
                    j.checked_sub(1),
                    if j == 0 { Vec3::ZERO } else { Vec3::X },
                )
            })
            .collect(),
    )
    .map_err(|e| e.to_string())?;
    let mut skin = Skin::new(positions, None, triangles).map_err(|e| e.to_string())?;
    skin.set_weights(Some(weights)).map_err(|e| e.to_string())?;
    skin.set_bindings(Some(world_from_joint(&skeleton, &Pose::zero(&skeleton))))
        .map_err(|e| e.to_string())?;
    Ok(Sample { skeleton, skin })
}
