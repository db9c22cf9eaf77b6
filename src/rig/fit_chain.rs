//! A template that is one chain and brings no mesh (the shipped chain, a bare tail or tentacle rig) fitted along
//! the mesh's middle ([`super::fit`]).
//!
//! The registrations move a template's surface onto the mesh's by nearest points, which cannot bend a straight
//! chain's stand-in tube into a coiled tail or an S-shaped snake: its joints were left across the bends and
//! snapped to the nearest solid cells, bunched together. A chain has no branches to match, so here its joints
//! are laid along the solid's longest path through its middle ([`super::fit_solid::FitSolid::medial_path`]), from
//! the end nearer the template's root (the root mapped from the template's box into the mesh's, as step 2 of the
//! fit maps it, but to the middle along an axis where the template is flat) to the other, each joint at its
//! share of the template chain's length. Each joint keeps its world orientation from the template's pose, as
//! every fit does.

use glam::{Mat3, Vec3};

use super::fit::{FitError, FitInput, FitOptions, FitResult, checked_solid, rebuild, report, roles};
use crate::model::Skeleton;

/// The joints of `skel` from its root to its leaf, when it is one chain of at least two joints (one root, no
/// joint with two children).
pub fn single_chain(skel: &Skeleton) -> Option<Vec<usize>> {
    let n = skel.len();
    let mut roots = (0..n).filter(|&i| skel.joints()[i].parent.is_none());
    let root = roots.next()?;
    if n < 2 || roots.next().is_some() {
        return None;
    }
    let mut chain = vec![root];
    while let Some(&last) = chain.last() {
        match skel.children(last) {
            [] => break,
            [only] => chain.push(*only),
            _ => return None,
        }
        if chain.len() > n {
            return None;
        }
    }
    (chain.len() == n).then_some(chain)
}

/// The chain `chain` of `input.template` laid along the mesh's middle; None where the solid has no path (a
/// single cell), for the caller's fit to stand.
pub(super) fn fit_along_middle(
    input: &FitInput,
    options: &FitOptions,
    chain: &[usize],
) -> Result<Option<FitResult>, FitError> {
    let skel = input.template;
    let (lo, hi, solid) = checked_solid(input, options)?;
    let pivots: Vec<Vec3> = input.template_world.iter().map(|m| m.w_axis.truncate()).collect();
    let (tlo, thi) = input
        .template_box
        .or_else(|| crate::model::skin::bounds(&pivots))
        .ok_or(FitError::NoSolid)?;
    // The root as the box places it: each axis mapped from the template's box to the mesh's (the middle where
    // the template's box is flat along it).
    let t = (pivots[chain[0]] - tlo) / (thi - tlo);
    let t = Vec3::select(t.is_finite_mask(), t, Vec3::splat(0.5));
    let root = lo + t * (hi - lo);
    let Some(path) = solid.medial_path(root) else {
        return Ok(None);
    };
    let path = smoothed(&path);
    let mut along = vec![0.0f32];
    for w in path.windows(2) {
        along.push(along[along.len() - 1] + w[0].distance(w[1]));
    }
    let length = along[along.len() - 1];
    let mut share = vec![0.0f32];
    for w in chain.windows(2) {
        share.push(share[share.len() - 1] + pivots[w[0]].distance(pivots[w[1]]));
    }
    let total = share[share.len() - 1];
    let mut placed = pivots.clone();
    for (k, &j) in chain.iter().enumerate() {
        let s = if total > 0.0 {
            share[k] / total
        } else {
            k as f32 / (chain.len() - 1) as f32
        };
        placed[j] = at_length(&path, &along, s * length);
    }
    let (skeleton, world) = rebuild(skel, input.template_world, &placed)?;
    let role = roles(skel);
    let joints = report(skel, &world, &solid, Mat3::IDENTITY, |i| (role[i], false, false));
    Ok(Some(FitResult {
        skeleton,
        world,
        joints,
        warnings: Vec::new(),
        diagonal: (hi - lo).length(),
    }))
}

/// A cell path's staircase smoothed: each inner point the mean of the points within two steps of it, the ends
/// kept (they are the extremities).
fn smoothed(path: &[Vec3]) -> Vec<Vec3> {
    let n = path.len();
    (0..n)
        .map(|i| {
            if i == 0 || i + 1 == n {
                return path[i];
            }
            let r = 2.min(i).min(n - 1 - i);
            let window = &path[i - r..=i + r];
            window.iter().copied().sum::<Vec3>() / window.len() as f32
        })
        .collect()
}

/// The point at arc length `s` along `path` (`along` its points' arc lengths).
fn at_length(path: &[Vec3], along: &[f32], s: f32) -> Vec3 {
    let k = along.partition_point(|&a| a < s);
    if k == 0 {
        return path[0];
    }
    if k >= path.len() {
        return path[path.len() - 1];
    }
    let (a, b) = (along[k - 1], along[k]);
    let f = if b > a { (s - a) / (b - a) } else { 0.0 };
    path[k - 1].lerp(path[k], f)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::rig::fit::fit_template;
    use crate::rig::fit_template::TemplateRig;
    use crate::rig::templates::{CHAIN_JOINTS, TemplateKind, template};

    /// The centreline of an S: height 2 along Y, bent in X by `amp sin(2πt) sin²(πt)` (upright at both ends,
    /// about ±0.65 `amp` at its bends).
    fn centre(t: f32, amp: f32) -> Vec3 {
        let pi = std::f32::consts::PI;
        Vec3::new(amp * (2.0 * pi * t).sin() * (pi * t).sin().powi(2), 2.0 * t, 0.0)
    }

    /// A closed tube of radius `r` around [`centre`].
    fn s_tube(amp: f32, r: f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let (rings, around) = (160usize, 16usize);
        let mut p = Vec::new();
        let mut tris = Vec::new();
        for i in 0..=rings {
            let t = i as f32 / rings as f32;
            let d = (centre((t + 1e-3).min(1.0), amp) - centre((t - 1e-3).max(0.0), amp)).normalize();
            let side = d.cross(Vec3::Z).normalize();
            for k in 0..around {
                let a = k as f32 / around as f32 * std::f32::consts::TAU;
                p.push(centre(t, amp) + r * (Vec3::Z * a.cos() + side * a.sin()));
            }
        }
        let ring = |i: usize, k: usize| (i * around + k % around) as u32;
        for i in 0..rings {
            for k in 0..around {
                tris.push([ring(i, k), ring(i, k + 1), ring(i + 1, k + 1)]);
                tris.push([ring(i, k), ring(i + 1, k + 1), ring(i + 1, k)]);
            }
        }
        for (i, outward) in [(0, false), (rings, true)] {
            let c = p.len() as u32;
            p.push(centre(i as f32 / rings as f32, amp));
            for k in 0..around {
                let (a, b) = (ring(i, k), ring(i, k + 1));
                tris.push(if outward { [c, a, b] } else { [c, b, a] });
            }
        }
        (p, tris)
    }

    /// Each point's distance to the centreline and where along it (0 to 1) it is nearest.
    fn on_centre(q: Vec3, amp: f32) -> (f32, f32) {
        (0..=4000)
            .map(|i| i as f32 / 4000.0)
            .map(|t| (centre(t, amp).distance(q), t))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap()
    }

    #[test]
    fn only_a_skeleton_without_branches_is_a_chain() {
        let chain = template(TemplateKind::Chain);
        assert_eq!(single_chain(&chain), Some((0..CHAIN_JOINTS).collect()));
        assert_eq!(single_chain(&template(TemplateKind::Hand)), None);
        assert_eq!(single_chain(&template(TemplateKind::Biped)), None);
    }

    #[test]
    fn the_chain_follows_an_s_bent_tube_from_its_lower_end_in_even_steps() {
        let amp = 0.6;
        let (p, t) = s_tube(amp, 0.12);
        let rig = TemplateRig::shipped(TemplateKind::Chain);
        let fit = fit_template(&rig.input(&p, &t), &FitOptions::default()).unwrap();
        let diag = fit.diagonal;
        let at: Vec<Vec3> = fit.world.iter().map(|m| m.w_axis.truncate()).collect();
        let mut last = -1.0;
        for (k, &q) in at.iter().enumerate() {
            let (off, along) = on_centre(q, amp);
            // Within 2% of the diagonal of the centreline (the tube's radius is 5.5% of it; with the box and
            // the registrations, the joints were left across the bends, 4 to 7% off)...
            assert!(off < 0.02 * diag, "joint {k} is {:.1}% off", 100.0 * off / diag);
            // ...in order from the lower end...
            assert!(along > last, "joint {k} at {along}, the one before at {last}");
            last = along;
        }
        // ...from near one end to near the other (a flat end's joint sits about its radius in)...
        assert!(on_centre(at[0], amp).1 < 0.1 && on_centre(at[CHAIN_JOINTS - 1], amp).1 > 0.9);
        // ...in even steps, as the template's links are.
        let links: Vec<f32> = at.windows(2).map(|w| w[0].distance(w[1])).collect();
        let mean = links.iter().sum::<f32>() / links.len() as f32;
        assert!(links.iter().all(|l| (l - mean).abs() < 0.25 * mean), "{links:?}");
        assert!(fit.joints.iter().all(|j| j.inside));
        assert!(fit.warnings.is_empty(), "{:?}", fit.warnings);
    }
}
