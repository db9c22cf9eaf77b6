//! Fitting a template into a new mesh (issue 41), judged on real characters: one farm animal's skeleton in its
//! bind pose fitted into another's bare mesh, each deforming joint's distance to the target's artist joint as a
//! percentage of the mesh's box diagonal (docs/fitting.md). The thresholds are the figures measured when the
//! method landed, with a little room, so a regression fails.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use glam::Vec3;
use skinbind::formats::gltf::{AnimationChoice, load_gltf_with};
use skinbind::rig::fit::{FitInput, FitOptions, fit_template};
use skinbind::rig::fit_measure::{Measure, measure_fit};

/// Template, target, and the most mean and max (% of the diagonal) the fit may reach: what it measured when
/// it landed (docs/fitting.md), plus a few tenths.
const PAIRS: &[(&str, &str, f32, f32)] = &[
    ("farm/Cow", "farm/Horse", 3.4, 7.5),
    ("farm/Horse", "farm/Cow", 4.0, 7.7),
    ("farm/Cow", "farm/Zebra", 3.3, 7.7),
    ("farm/Pig", "farm/Pug", 4.0, 12.8),
    ("farm/Pig", "farm/Llama", 5.5, 20.9),
    ("farm/Llama", "farm/Sheep", 4.2, 11.8),
    ("farm/Sheep", "farm/Pug", 3.7, 7.8),
    ("Smooth_Male_Casual", "Female_Casual", 0.8, 1.8),
];

/// Fit `template`'s skeleton (bind pose, with its mesh) into `target`'s mesh and judge it against `target`'s
/// artist joints; also how many deforming joints landed outside the solid.
fn fit_pair(dir: &Path, template: &str, target: &str) -> (Measure, usize) {
    let load = |name: &str| {
        load_gltf_with(&dir.join(format!("{name}.glb")), None, &AnimationChoice::None)
            .unwrap()
            .value
    };
    let (t, m) = (load(template), load(target));
    let t_world = t.skin.bindings().unwrap().to_vec();
    let input = FitInput {
        template: &t.skeleton,
        template_world: &t_world,
        template_mesh: Some((t.skin.positions(), t.skin.triangles())),
        template_box: None,
        positions: m.skin.positions(),
        triangles: m.skin.triangles(),
    };
    let fit = fit_template(&input, &FitOptions::default()).unwrap();
    let fitted: Vec<(String, Vec3)> = fit
        .joints
        .iter()
        .map(|j| (j.name.clone(), Vec3::from_array(j.position)))
        .collect();
    let weights = m.skin.weights().unwrap();
    let mut deforms = vec![false; m.skeleton.len()];
    for v in 0..weights.len() {
        let (js, ws) = weights.row(v);
        for (&j, &w) in js.iter().zip(ws) {
            if w > 0.0 {
                deforms[j as usize] = true;
            }
        }
    }
    let reference: Vec<(String, Vec3, bool)> = m
        .skeleton
        .joints()
        .iter()
        .zip(m.skin.bindings().unwrap())
        .zip(&deforms)
        .map(|((j, b), &d)| (j.name.clone(), b.w_axis.truncate(), d))
        .collect();
    let measure = measure_fit(&fitted, &reference, fit.diagonal);
    let outside = fit
        .joints
        .iter()
        .filter(|j| !j.inside && reference.iter().any(|(n, _, d)| *d && *n == j.name))
        .count();
    (measure, outside)
}

#[test]
fn farm_templates_land_near_the_artists_joints() {
    let Some(dir) = common::data_dir() else { return };
    let dir = dir.join("gltf/quaternius");
    let mut failures = Vec::new();
    for &(template, target, mean, max) in PAIRS {
        let (m, outside) = fit_pair(&dir, template, target);
        println!(
            "{template} -> {target}: mean {:.2}% max {:.2}% ({}), {outside} outside",
            m.mean,
            m.max,
            m.worst.as_deref().unwrap_or("-")
        );
        if m.mean > mean || m.max > max || !m.unmatched.is_empty() || outside > 0 {
            failures.push(format!("{template} -> {target}: {m:?}, {outside} outside"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
