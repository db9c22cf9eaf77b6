//! [`bind_weights`]: the checks of the inputs, the method's pipeline (the geodesic method, or the line pipeline of
//! the line, volume and hybrid methods), and what both share: the deforming bones they start from, the report's
//! stages and closing counts.

use std::time::Instant;

use glam::{Mat4, Vec3};

use super::bones::{Segment, SegmentKind, axis_name, bone_axis, bone_segments_along, extend_leaves_to_surface};
use super::surface::{PartBoxes, Surface};
use super::{BindError, BindMethod, BindOptions, BindReport, MAX_RESOLUTION, controls, geodesic, line};
use crate::model::{Skeleton, Weights};

/// Compute weights for `positions` bound to `skel` with its joints at `bind_world` (bind-pose world matrices).
/// `progress` is called with the fraction of vertices done, from any thread.
pub fn bind_weights(
    skel: &Skeleton,
    bind_world: &[Mat4],
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    opts: &BindOptions,
    progress: &(dyn Fn(f32) + Sync),
) -> Result<(Weights, BindReport), BindError> {
    let t_all = Instant::now();
    let mut excluded = Vec::new();
    let opts = &controls::without_named_controls(skel, opts, &mut excluded);
    check(skel, bind_world, positions, opts)?;
    let mut report = BindReport {
        method: opts.method.name().to_string(),
        vertices: positions.len(),
        joints: skel.len(),
        max_influences: opts.max_influences,
        rigid: opts.rigid,
        visibility: opts.visibility,
        warnings: excluded
            .iter()
            .map(|&(j, word)| {
                controls::excluded_warning(j, &skel.joints()[j].name, controls::ControlReason::Name(word))
            })
            .collect(),
        excluded_controls: excluded.iter().map(|e| e.0).collect(),
        ..Default::default()
    };
    let weights = if opts.method == BindMethod::Geodesic {
        let weights = geodesic::bind(skel, bind_world, positions, triangles, opts, &mut report);
        progress(1.0);
        weights
    } else {
        line::bind(skel, bind_world, positions, triangles, opts, progress, &mut report)
    };
    Ok(finish(weights, report, skel, opts, t_all))
}

/// The inputs [`bind_weights`] refuses, in the order it tries them.
fn check(skel: &Skeleton, bind_world: &[Mat4], positions: &[Vec3], opts: &BindOptions) -> Result<(), BindError> {
    if bind_world.len() != skel.len() {
        return Err(BindError::Matrices {
            matrices: bind_world.len(),
            joints: skel.len(),
        });
    }
    if opts.max_influences == 0 {
        return Err(BindError::NoInfluences);
    }
    if !(opts.blend_ratio.is_finite() && opts.blend_ratio > 1.0) {
        return Err(BindError::BlendRatio(opts.blend_ratio));
    }
    // Past 64 the falloff is already a step; beyond that powers of distance ratios overflow f32.
    if !(0.0..=64.0).contains(&opts.falloff_power) {
        return Err(BindError::FalloffPower(opts.falloff_power));
    }
    if let Some(v) = positions.iter().position(|p| !p.is_finite()) {
        return Err(BindError::Position(v));
    }
    if !(0..skel.len()).any(|j| opts.deforms(j)) {
        return Err(BindError::NothingDeforms);
    }
    if !(8..=MAX_RESOLUTION).contains(&opts.resolution) {
        return Err(BindError::Resolution(opts.resolution));
    }
    for (joint, v) in opts.volumes.iter().enumerate() {
        if let Some(radius) = v.radius.filter(|r| !(r.is_finite() && *r > 0.0)) {
            return Err(BindError::Radius { joint, radius });
        }
    }
    Ok(())
}

/// Add stage `name`, begun at `t`, to the report's timings.
pub(super) fn stage(name: &str, t: Instant, report: &mut BindReport) {
    report.stages.push((name.to_string(), t.elapsed().as_secs_f64() * 1e3));
}

/// The bones of the joints that deform, in the bind pose ([`super::bones`]); box-less leaves extended into `surface`
/// when the options ask. Warns about joints that look like controls. Also each part's box, made once for the leaf
/// extension and the part bones (only where `surface` has several parts).
pub(super) fn deforming_segments(
    skel: &Skeleton,
    bind_world: &[Mat4],
    positions: &[Vec3],
    surface: Option<&Surface>,
    opts: &BindOptions,
    report: &mut BindReport,
) -> (Vec<Segment>, Option<PartBoxes>) {
    let part_boxes = surface.and_then(|s| s.several_part_bounds(positions));
    let axis = bone_axis(skel, bind_world);
    report.bone_axis = axis.map(|k| axis_name(k).to_string());
    let mut segments = bone_segments_along(skel, bind_world, axis);
    let continued = segments.iter().any(|s| s.kind == SegmentKind::Continued);
    if let Some(s) = surface.filter(|_| opts.leaf_to_surface && continued) {
        // A pivot is tested only against the parts whose box holds it.
        let in_box = |q: Vec3, c: usize| {
            part_boxes
                .as_ref()
                .is_none_or(|(lo, hi)| q.cmpge(lo[c]).all() && q.cmple(hi[c]).all())
        };
        let extended = extend_leaves_to_surface(
            &mut segments,
            |o, d, t| s.ray_cast(o, d, t),
            |q| (0..s.part_count()).any(|c| in_box(q, c) && s.inside(q, c)),
            |leaf, other| opts.deforms(other as usize) && !skel.ancestors(leaf as usize).any(|a| a == other as usize),
        );
        report.leaves_extended = extended.iter().filter(|e| **e).count();
        report.leaf_tails = segments.iter().filter(|s| s.kind == SegmentKind::Tail).count();
        report.heads_started_at_widening =
            super::widen::start_heads_where_the_neck_widens(&mut segments, positions, &extended);
    }
    for (j, reason) in controls::likely_controls(skel, &segments, positions, &opts.deform) {
        let name = &skel.joints()[j].name;
        report.warnings.push(controls::control_warning(j, name, reason));
        report.controls.push(j);
    }
    // Joints that do not deform have no bone to attract vertices (their children's leaves were placed above).
    segments.retain(|s| opts.deforms(s.joint as usize));
    (segments, part_boxes)
}

/// The report's closing counts: joints left without weight (warned about) and the total time.
fn finish(
    weights: Weights,
    mut report: BindReport,
    skel: &Skeleton,
    opts: &BindOptions,
    t_all: Instant,
) -> (Weights, BindReport) {
    let mut used = vec![false; skel.len()];
    for v in 0..weights.len() {
        for &j in weights.row(v).0 {
            used[j as usize] = true;
        }
    }
    report.bones_without_vertices = used
        .iter()
        .enumerate()
        .filter(|(j, u)| !**u && opts.deforms(*j) && !report.excluded_controls.contains(j))
        .map(|(j, _)| (j, skel.joints()[j].name.clone()))
        .collect();
    for (j, name) in &report.bones_without_vertices {
        report
            .warnings
            .push(format!("joint {j} `{name}` has no weight on any vertex"));
    }
    report.controls.sort_unstable();
    report.controls.dedup();
    report.total_ms = t_all.elapsed().as_secs_f64() * 1e3;
    (weights, report)
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
