//! Fitting a template skeleton into a new mesh (`skinbind fit`): the template's joints land where an artist
//! would put them in a mesh of other proportions, pose or parts.
//!
//! The method (docs/fitting.md):
//! 1. **Box.** The template's joints and, when it comes with its mesh, that mesh's solid cells are mapped from
//!    the template's box (its mesh's bounds, or the box the caller gives) into the mesh's, axis by axis; along
//!    [`FitInput::template_trunk`] (a shipped quadruped's length) its trunk is mapped onto the mesh's trunk.
//! 2. **Registration.** The template's solid is moved onto the mesh's solid by a smooth displacement field
//!    ([`super::fit_register`]) and the joints ride it, so a joint in a leg stays in the leg, a head joint follows
//!    a longer neck, and controls (IK targets, poles, a master root) keep their place relative to what they
//!    drive. Without a template mesh there is nothing to register and the box stands.
//!    A joint at a face of the template's box (a foot on the ground, within 4% of the box's size) keeps, along
//!    that axis, the place the box gives it: the registration has little grip along a leg.
//! 3. **Symmetry.** Joints that mirror each other across the template's middle plane are made to mirror each
//!    other across the mesh's (the mean of the two), and joints on the plane stay on it.
//! 4. **Missing parts.** A chain that ends in a leaf and shrank under a third of its boxed length has no part in
//!    the mesh to sit in (a tail on a mesh without one): it is folded onto its root, with a warning.
//! 5. **Inside.** A joint other than a root (or a folded one) that landed outside the mesh's solid is moved to
//!    the nearest solid cell.
//!
//! Conventions: positions are world, in the mesh's units. The steps take template and mesh to share up and
//! facing; a mesh whose solid overlaps the template's clearly better after a quarter or half turn (lying Z up,
//! facing +X) is turned first and the result turned back ([`super::fit_orient`]). The fitted skeleton keeps
//! each joint's world orientation from the template's pose; only the pivots move, so the fitted pose, written
//! as the `.skel`'s pose lines, is the bind pose.

use glam::{Mat3, Mat4, Quat, Vec3};

use super::fit_bones::{BoneSchedule, register_bones, sample_surface};
use super::fit_orient::{describe, lies_across, mesh_facing};
use super::fit_profile::{AxisMap, SLICES, profile, warp};
use super::fit_register::{Schedule, register};
use super::fit_solid::FitSolid;
use crate::model::{Joint, Pose, Skeleton, Weights, world_from_joint};

/// What a fit is given.
#[derive(Clone, Copy, Debug)]
pub struct FitInput<'a> {
    pub template: &'a Skeleton,
    /// The template's joints' world matrices in the pose its mesh (or its box) was made in.
    pub template_world: &'a [Mat4],
    /// The template's own mesh in that pose (positions, triangles), when it has one.
    pub template_mesh: Option<(&'a [Vec3], &'a [[u32; 3]])>,
    /// The template mesh's skin weights (per vertex of `template_mesh`), when it has them: the fit then moves the
    /// template's surface by its own skeleton ([`super::fit_bones`]).
    pub template_weights: Option<&'a Weights>,
    /// The box the template's body fills (a shipped template's body box); None: its mesh's bounds, else its
    /// stand-in body's, else its joints'.
    pub template_box: Option<(Vec3, Vec3)>,
    /// Per joint, the half width of its stand-in body's tubes where the template knows it (a shipped
    /// template's trunk, [`super::templates::body_widths`]); with a body box, the stand-in body is made only
    /// when this is given.
    pub template_widths: Option<&'a [Option<f32>]>,
    /// The axis along which the template's trunk is matched to the mesh's, rather than its box to the mesh's box
    /// (a shipped quadruped's length, [`super::templates::trunk_axis`]): None for box to box.
    pub template_trunk: Option<usize>,
    pub positions: &'a [Vec3],
    pub triangles: &'a [[u32; 3]],
}

/// How a fit runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitOptions {
    /// Voxel cells along the mesh's longest side, for the solid the joints must lie in.
    pub resolution: usize,
    /// Give a template without a mesh a stand-in body of tubes around its bones ([`super::fit_proxy`]): a bare
    /// skeleton, or a shipped template that gives its trunk's widths.
    pub proxy: bool,
    /// Cells along the longest side for the points the registration matches (coarser: fewer points).
    pub register_resolution: usize,
    pub schedule: Schedule,
    /// A joint within this share of the template's box size from one of its faces keeps, along that axis, the
    /// place the box gives it (0: off).
    pub edge: f32,
    /// How far the joints follow the registration from where the box put them (0: the box, 1: the field).
    pub follow: f32,
    /// Which axes (bits 0, 1, 2 for x, y, z) are mapped piecewise by their slice profiles
    /// ([`super::fit_profile`]) rather than by the plain box.
    pub profile_axes: u8,
    /// The cost of a warping step that advances one profile only.
    pub profile_step: f32,
    /// Match only the solids' boundary cells (else every solid cell).
    pub shell: bool,
    /// A leaf chain shorter than this share of its boxed length is folded onto its root.
    pub missing_ratio: f32,
    /// How far limb joints and extremities move toward the solid's middle (the nearest medial cell), 0 to 1.
    pub centre_limbs: f32,
    /// The same for the other joints.
    pub centre_trunk: f32,
    /// The articulated registration's schedule, used when the template has a skinned mesh (None: the smooth
    /// field for every template).
    pub bones: Option<BoneSchedule>,
    /// Surface points sampled on each mesh for the articulated registration.
    pub samples: usize,
    /// With both registrations (a skinned template mesh), how far each joint goes from the articulated one's
    /// answer toward the smooth field's (0: articulated only, 1: field only).
    pub blend: f32,
    /// Turn a mesh that faces another way than the template (Z up, facing +X) to face the template's way first
    /// ([`super::fit_orient`]).
    pub turn: bool,
    /// The turn that takes the mesh's up to +Y and its front to +Z, as the user says it
    /// ([`super::fit_orient::told_facing`]): the mesh is fitted turned so and the result turned back, with no
    /// search. It applies to every template but a lone chain (laid along the mesh's middle whichever way it faces).
    pub mesh_turn: Option<Mat3>,
}

impl Default for FitOptions {
    fn default() -> Self {
        Self {
            resolution: 64,
            proxy: true,
            register_resolution: 40,
            schedule: Schedule::default(),
            missing_ratio: 0.33,
            shell: true,
            profile_axes: 0,
            follow: 1.0,
            edge: 0.04,
            profile_step: 0.05,
            centre_limbs: 0.0,
            centre_trunk: 0.0,
            bones: Some(BoneSchedule::default()),
            samples: 4000,
            blend: 0.5,
            turn: true,
            mesh_turn: None,
        }
    }
}

/// Why a fit could not be made.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FitError {
    #[error("the template has {joints} joints but {matrices} world matrices")]
    WorldCount { joints: usize, matrices: usize },
    #[error("the mesh has no solid inside (no vertices, or no triangles that enclose anything)")]
    NoSolid,
    #[error("a position or matrix is not finite")]
    NotFinite,
    #[error("the fitted skeleton is invalid: {0}")]
    Skeleton(String),
}

/// Where a joint is in the template's tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A leaf: the end of a limb, a tail, a head.
    Extremity,
    /// On a chain that ends in a leaf, below the last branching.
    Limb,
    /// Everything else (spine, hips, roots).
    Trunk,
}

/// One fitted joint, as `fit --json` reports it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FitJoint {
    pub name: String,
    pub position: [f32; 3],
    /// Whether the joint lies in the mesh's solid.
    pub inside: bool,
    /// Distance to the nearest medial cell (the solid's middle).
    pub medial_distance: f32,
    pub role: Role,
    /// Moved into the solid after the registration left it outside.
    pub snapped: bool,
    /// Folded onto its chain's root (a part the mesh lacks).
    pub folded: bool,
}

/// A fitted skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct FitResult {
    /// The template's joints with new offsets; its pose lines are the fitted (bind) pose.
    pub skeleton: Skeleton,
    /// Each joint's world matrix in that pose: the bindings.
    pub world: Vec<Mat4>,
    pub joints: Vec<FitJoint>,
    pub warnings: Vec<String>,
    /// The mesh's box diagonal.
    pub diagonal: f32,
}

/// Each joint's role in `skel`'s tree.
pub fn roles(skel: &Skeleton) -> Vec<Role> {
    let n = skel.len();
    let mut role = vec![Role::Trunk; n];
    for i in 0..n {
        if skel.children(i).is_empty() && skel.joints()[i].parent.is_some() {
            role[i] = Role::Extremity;
            for a in skel.ancestors(i) {
                if skel.children(a).len() != 1 || skel.joints()[a].parent.is_none() {
                    break;
                }
                role[a] = Role::Limb;
            }
        }
    }
    role
}

/// Fit `input.template` into the mesh (see the module doc).
pub fn fit_template(input: &FitInput, options: &FitOptions) -> Result<FitResult, FitError> {
    // A template that is one chain and has no mesh is laid along the mesh's middle ([`super::fit_chain`]).
    if input.template_mesh.is_none()
        && let Some(chain) = super::fit_chain::single_chain(input.template)
        && let Some(fit) = super::fit_chain::fit_along_middle(input, options, &chain)?
    {
        return Ok(fit);
    }
    // A template without a mesh gets a stand-in body of tubes around its bones ([`super::fit_proxy`]), so that
    // the registrations can move its parts: a bare skeleton always, a template drawn in a body box when it says
    // how thick its trunk is (thin tubes pull a quadruped's spine to its back).
    if input.template_mesh.is_none()
        && (input.template_box.is_none() || input.template_widths.is_some())
        && options.proxy
        && let Some((p, t, w)) =
            super::fit_proxy::proxy_body(input.template, input.template_world, input.template_widths)
    {
        let with_body = FitInput {
            template_mesh: Some((&p, &t)),
            template_weights: Some(&w),
            ..*input
        };
        // Tubes around bones are too unlike a body to tell which way a mesh faces (on the shared farm animals,
        // two of seven came out upside down; among the turns about up alone, the biped turned the humans a
        // quarter turn and the Llama's skeleton turned the Sheep round): the mesh is taken to face the
        // template's way, or the way the user says.
        return match options.mesh_turn {
            Some(turn) => fit_turned(&with_body, options, turn, None),
            None => {
                let mut fit = fit_with_template_mesh(&with_body, options, Mat3::IDENTITY, Solids::default())?;
                fit.warnings.extend(lies_across(&p, input.positions));
                Ok(fit)
            }
        };
    }
    match options.mesh_turn {
        Some(turn) => fit_turned(input, options, turn, None),
        None => fit_facing(input, options),
    }
}

/// The fit of a mesh turned by `turn` (the user's word for which way it faces, or the facing check's), the result
/// turned back; `template_solid` is the template's solid where already made.
fn fit_turned(
    input: &FitInput,
    options: &FitOptions,
    turn: Mat3,
    template_solid: Option<FitSolid>,
) -> Result<FitResult, FitError> {
    let turned: Vec<Vec3> = input.positions.iter().map(|p| turn * *p).collect();
    let turned_input = FitInput {
        positions: &turned,
        ..*input
    };
    let solids = Solids {
        template: template_solid,
        mesh: None,
    };
    fit_with_template_mesh(&turned_input, options, turn, solids)
}

/// The fit of a mesh that may face another way than the template ([`super::fit_orient`]): turned to face the
/// template's way when its solid overlaps the template's mesh's clearly better so, fitted, and the result turned
/// back. A template without a mesh is taken to face the mesh's way.
fn fit_facing(input: &FitInput, options: &FitOptions) -> Result<FitResult, FitError> {
    let (Some((tp, tt)), true, true) = (
        input.template_mesh,
        options.turn,
        input.positions.iter().all(|p| p.is_finite()),
    ) else {
        // Bad input is reported there.
        return fit_with_template_mesh(input, options, Mat3::IDENTITY, Solids::default());
    };
    // The registration's solids, made here once and handed on (the mesh's only if it is not turned).
    let solid = |p, t| FitSolid::new(p, t, options.register_resolution);
    let solids = Solids {
        template: solid(tp, tt),
        mesh: solid(input.positions, input.triangles),
    };
    let facing = match (&solids.template, &solids.mesh) {
        (Some(t), Some(m)) => mesh_facing(t.centres(), m.centres()),
        _ => None,
    };
    let Some(f) = facing else {
        return fit_with_template_mesh(input, options, Mat3::IDENTITY, solids);
    };
    let mut fit = fit_turned(input, options, f.turn, solids.template)?;
    fit.warnings.insert(
        0,
        format!(
            "the mesh does not face the template's way ({}; the template's is +Y and +Z): it was fitted turned, \
             its solid overlapping the template's {:.0}% against {:.0}% as it lies",
            describe(f.turn),
            100.0 * f.overlap,
            100.0 * f.unturned
        ),
    );
    Ok(fit)
}

/// The template's and the mesh's solids at the registration's resolution, where already made.
#[derive(Default)]
struct Solids {
    template: Option<FitSolid>,
    mesh: Option<FitSolid>,
}

/// Each fitted joint as `fit --json` reports it: where it is (`world`, in the mesh's frame; `turn` takes it to
/// the solid's) and its role and what was done to it (`what`: role, snapped, folded).
pub(super) fn report(
    skel: &Skeleton,
    world: &[Mat4],
    solid: &FitSolid,
    turn: Mat3,
    what: impl Fn(usize) -> (Role, bool, bool),
) -> Vec<FitJoint> {
    (0..skel.len())
        .map(|i| {
            let p = world[i].w_axis.truncate();
            let (role, snapped, folded) = what(i);
            FitJoint {
                name: skel.joints()[i].name.clone(),
                position: p.to_array(),
                inside: solid.holds(turn * p),
                medial_distance: solid.medial_distance(turn * p),
                role,
                snapped,
                folded,
            }
        })
        .collect()
}

/// The input checked (a world matrix per joint, everything finite), and the mesh's box and solid.
pub(super) fn checked_solid(input: &FitInput, options: &FitOptions) -> Result<(Vec3, Vec3, FitSolid), FitError> {
    let n = input.template.len();
    if input.template_world.len() != n {
        return Err(FitError::WorldCount {
            joints: n,
            matrices: input.template_world.len(),
        });
    }
    if input.template_world.iter().any(|m| !m.is_finite()) || input.positions.iter().any(|p| !p.is_finite()) {
        return Err(FitError::NotFinite);
    }
    let (lo, hi) = crate::model::skin::bounds(input.positions).ok_or(FitError::NoSolid)?;
    let solid = FitSolid::new(input.positions, input.triangles, options.resolution).ok_or(FitError::NoSolid)?;
    Ok((lo, hi, solid))
}

/// The fit, the mesh's positions already turned by `turn` into the template's frame; the result is turned back.
/// `made`: the registration's solids where the facing check already made them.
fn fit_with_template_mesh(
    input: &FitInput,
    options: &FitOptions,
    turn: Mat3,
    made: Solids,
) -> Result<FitResult, FitError> {
    let skel = input.template;
    let n = skel.len();
    let (lo, hi, solid) = checked_solid(input, options)?;
    let diagonal = (hi - lo).length();
    let pivots: Vec<Vec3> = input.template_world.iter().map(|m| m.w_axis.truncate()).collect();

    // 1. The box.
    let template_solid = made.template.or_else(|| {
        input
            .template_mesh
            .and_then(|(p, t)| FitSolid::new(p, t, options.register_resolution))
    });
    let mut mesh_solid = made.mesh;
    let (tlo, thi) = match (
        input.template_box,
        input.template_mesh.and_then(|(p, _)| crate::model::skin::bounds(p)),
    ) {
        (Some(b), _) | (None, Some(b)) => b,
        (None, None) => crate::model::skin::bounds(&pivots).ok_or(FitError::NotFinite)?,
    };
    let tsize = (thi - tlo).max(Vec3::splat(1e-9));
    let box_maps: [AxisMap; 3] = std::array::from_fn(|a| {
        let matched = match &template_solid {
            Some(ts) if options.profile_axes & (1 << a) != 0 => {
                let pt = profile(ts.centres(), a, tlo[a], thi[a], SLICES);
                let pm = profile(solid.centres(), a, lo[a], hi[a], SLICES);
                warp(&pt, &pm, options.profile_step)
            }
            _ => Vec::new(),
        };
        AxisMap {
            tlo: tlo[a],
            thi: thi[a],
            lo: lo[a],
            hi: hi[a],
            matched,
        }
    });
    // Along the template's trunk axis, its trunk goes where the mesh's is; the box's faces stay where the box
    // puts them (below).
    let mut maps = box_maps.clone();
    if let (Some(a), Some(ts)) = (input.template_trunk.filter(|&a| a < 3), &template_solid) {
        if let Some((lo2, hi2)) = trunk_to_trunk(ts, &solid, a, tlo[a], thi[a]) {
            (maps[a].lo, maps[a].hi) = (lo2, hi2);
        }
    }
    let to_box = |p: Vec3| Vec3::new(maps[0].apply(p.x), maps[1].apply(p.y), maps[2].apply(p.z));
    let boxed: Vec<Vec3> = pivots.iter().map(|&p| to_box(p)).collect();

    // 2. The registration.
    // Every joint but a root is kept inside: an artist's controls that deform (foot targets) lie in the mesh
    // too, and a root at the ground (a master root) is left where the fit puts it.
    let was_inside: Vec<bool> = (0..n).map(|i| skel.joints()[i].parent.is_some()).collect();
    let skinned = match (input.template_mesh, input.template_weights, options.bones) {
        (Some((tp, tt)), Some(w), Some(schedule)) if w.len() == tp.len() => Some((tp, tt, w, schedule)),
        _ => None,
    };
    let field = template_solid.as_ref().map(|ts| {
        let points = |s: &FitSolid| {
            if options.shell { s.shell() } else { s.centres().to_vec() }
        };
        let moving: Vec<Vec3> = points(ts).iter().map(|&p| to_box(p)).collect();
        let fixed = mesh_solid
            .take()
            .or_else(|| FitSolid::new(input.positions, input.triangles, options.register_resolution))
            .map(|s| points(&s))
            .unwrap_or_else(|| points(&solid));
        let moved = register(&moving, &fixed, &boxed, diagonal, &options.schedule);
        moved
            .iter()
            .zip(&boxed)
            .map(|(m, b)| b.lerp(*m, options.follow))
            .collect::<Vec<Vec3>>()
    });
    let bones = skinned.map(|(tp, tt, w, schedule)| {
        let mut t = sample_surface(tp, tt, Some(&weight_rows(w)), options.samples);
        let stretch = Vec3::new(maps[0].scale(), maps[1].scale(), maps[2].scale());
        for (p, n) in t.points.iter_mut().zip(t.normals.iter_mut()) {
            *p = to_box(*p);
            *n = (*n / stretch).normalize_or_zero();
        }
        let m = sample_surface(input.positions, input.triangles, None, options.samples);
        let parents: Vec<Option<usize>> = skel.joints().iter().map(|j| j.parent).collect();
        register_bones(&t, &boxed, &parents, &m, diagonal, &schedule)
    });
    let mut placed = match (field, bones) {
        (Some(f), Some(b)) => b.iter().zip(&f).map(|(b, f)| b.lerp(*f, options.blend)).collect(),
        (Some(only), None) | (None, Some(only)) => only,
        (None, None) => boxed.clone(),
    };

    // Joints at the template's box's faces (feet on the ground, a snout's tip) stay at the mesh's, as the box put
    // them: the registration has little grip along a leg and lets them slide.
    if options.edge > 0.0 {
        for i in 0..n {
            if skel.joints()[i].parent.is_none() {
                continue;
            }
            for a in 0..3 {
                let f = (pivots[i][a] - tlo[a]) / tsize[a];
                if f < options.edge || f > 1.0 - options.edge {
                    placed[i][a] = box_maps[a].apply(pivots[i][a]);
                }
            }
        }
    }

    // 3. Symmetry.
    let tmid = 0.5 * (tlo.x + thi.x);
    let mid = 0.5 * (lo.x + hi.x);
    symmetrize(
        &pivots,
        tmid,
        0.015 * tsize.length(),
        (hi.x - lo.x) / tsize.x,
        &mut placed,
        mid,
    );

    // 4. Missing parts (before the snap, which would hold a folded chain's joints apart).
    let role = roles(skel);
    let mut warnings = Vec::new();
    let mut folded = vec![false; n];
    for i in 0..n {
        if role[i] != Role::Extremity {
            continue;
        }
        let mut chain = vec![i];
        chain.extend(skel.ancestors(i).take_while(|&a| role[a] == Role::Limb));
        let Some(&top) = chain.last() else { continue };
        let Some(root) = skel.joints()[top].parent else {
            continue;
        };
        let length = |at: &[Vec3]| -> f32 {
            let mut prev = at[root];
            let mut sum = 0.0;
            for &j in chain.iter().rev() {
                sum += at[j].distance(prev);
                prev = at[j];
            }
            sum
        };
        let (before, after) = (length(&boxed), length(&placed));
        if before > 1e-3 * diagonal && after < options.missing_ratio * before {
            for &j in &chain {
                placed[j] = placed[root];
                folded[j] = true;
            }
            warnings.push(format!(
                "the chain ending at `{}` shrank to {:.0}% of its length: the mesh seems to have no such part, so \
                 it is folded onto `{}`",
                skel.joints()[i].name,
                100.0 * after / before,
                skel.joints()[root].name
            ));
        }
    }

    // 5. Inside, and toward the middle.
    for i in 0..n {
        let share = if role[i] == Role::Trunk {
            options.centre_trunk
        } else {
            options.centre_limbs
        };
        if was_inside[i]
            && !folded[i]
            && share > 0.0
            && solid.holds(placed[i])
            && let Some(m) = solid.nearest_medial(placed[i])
        {
            placed[i] = placed[i].lerp(m, share.min(1.0));
        }
    }
    let mut snapped = vec![false; n];
    for i in 0..n {
        if was_inside[i] && !folded[i] && !solid.holds(placed[i]) {
            placed[i] = snap_inside(&solid, placed[i], skel.joints()[i].parent.map(|p| placed[p]));
            snapped[i] = true;
        }
    }

    let (skeleton, world) = rebuild_turned_back(skel, input.template_world, placed, turn)?;
    let joints = report(skel, &world, &solid, turn, |i| (role[i], snapped[i], folded[i]));
    Ok(FitResult {
        skeleton,
        world,
        joints,
        warnings,
        diagonal,
    })
}

/// A trunk: the solid's cells at least this share of its deepest cell's depth deep (legs, necks, tails and heads
/// are thinner). At 0.6 or 0.8 the shipped quadruped's mean over the six farm animals moves by at most 0.11 (% of
/// the diagonal).
const TRUNK_DEPTH: f32 = 0.7;

/// Where the mesh's box must lie along `axis` for the template's trunk ([`TRUNK_DEPTH`]) to map onto the mesh's
/// trunk: the template's box `tlo..thi` mapped by the map that takes the one span to the other. None where either
/// solid has no such span.
fn trunk_to_trunk(template: &FitSolid, mesh: &FitSolid, axis: usize, tlo: f32, thi: f32) -> Option<(f32, f32)> {
    let (t0, t1) = template.core_range(axis, TRUNK_DEPTH)?;
    let (m0, m1) = mesh.core_range(axis, TRUNK_DEPTH)?;
    if t1 - t0 <= 1e-6 || m1 - m0 <= 1e-6 {
        return None;
    }
    let k = (m1 - m0) / (t1 - t0);
    Some((m0 + (tlo - t0) * k, m0 + (thi - t0) * k))
}

/// A joint outside the solid moved inside: back along its bone toward its parent (`parent`, already placed) to
/// the first solid point more than a cell from the parent, so that the bone keeps its direction and some length
/// (a tail's tip, a head past the snout); else the nearest solid cell.
fn snap_inside(solid: &FitSolid, at: Vec3, parent: Option<Vec3>) -> Vec3 {
    let h = solid.grid.h;
    if let Some(p) = parent {
        let length = at.distance(p);
        let steps = ((length / (0.5 * h)).ceil() as usize).min(4096);
        for k in 1..steps {
            let q = at.lerp(p, k as f32 / steps as f32);
            if q.distance(p) <= h {
                break;
            }
            if solid.holds(q) {
                return q;
            }
        }
    }
    solid.nearest_inside(at)
}

/// Each vertex's (joint, weight) pairs.
fn weight_rows(w: &Weights) -> Vec<Vec<(u32, f32)>> {
    (0..w.len())
        .map(|v| {
            let (js, ws) = w.row(v);
            js.iter().zip(ws).map(|(&j, &x)| (u32::from(j), x)).collect()
        })
        .collect()
}

/// Make joints that mirror each other across the template's plane `x = tmid` (its box's middle; `pivots`, within
/// `tol`) mirror each other across the mesh's `x = mid`, and joints on the template's plane lie on the mesh's.
/// The skeleton's own plane (the mean of its pairs' midpoints) may sit a little off its box's middle; that offset
/// is kept, scaled by `scale_x`.
fn symmetrize(pivots: &[Vec3], tmid: f32, tol: f32, scale_x: f32, placed: &mut [Vec3], mid: f32) {
    let n = pivots.len();
    let mirror = |p: Vec3, m: f32| Vec3::new(2.0 * m - p.x, p.y, p.z);
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut paired = vec![false; n];
    for i in 0..n {
        if paired[i] || (pivots[i].x - tmid).abs() <= tol {
            continue;
        }
        let target = mirror(pivots[i], tmid);
        // The nearest mirror image off the plane, lowest index on ties.
        let best = (0..n)
            .filter(|&k| k != i && !paired[k] && (pivots[k].x - tmid).abs() > tol)
            .filter(|&k| (pivots[k].x - tmid) * (pivots[i].x - tmid) < 0.0)
            .map(|k| (pivots[k].distance(target), k))
            .filter(|(d, _)| *d <= 2.0 * tol)
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        if let Some((_, k)) = best {
            paired[i] = true;
            paired[k] = true;
            pairs.push((i, k));
        }
    }
    let tplane = if pairs.is_empty() {
        tmid
    } else {
        pairs
            .iter()
            .map(|&(i, k)| 0.5 * (pivots[i].x + pivots[k].x))
            .sum::<f32>()
            / pairs.len() as f32
    };
    let plane = mid + (tplane - tmid) * scale_x;
    for i in 0..n {
        if !paired[i] && (pivots[i].x - tplane).abs() <= tol {
            placed[i].x = plane + (pivots[i].x - tplane) * scale_x;
        }
    }
    for (i, k) in pairs {
        let a = 0.5 * (placed[i] + mirror(placed[k], plane));
        placed[i] = a;
        placed[k] = mirror(a, plane);
    }
}

/// [`rebuild`] from joints placed in a frame turned by `turn` (`world`, the template's orientations, and
/// `placed`, the pivots, both in that frame): turned back into the mesh's frame first, the template's joints
/// turned with it, so that the turn is carried by the root's rotation.
pub(super) fn rebuild_turned_back(
    skel: &Skeleton,
    world: &[Mat4],
    placed: Vec<Vec3>,
    turn: Mat3,
) -> Result<(Skeleton, Vec<Mat4>), FitError> {
    if turn == Mat3::IDENTITY {
        return rebuild(skel, world, &placed);
    }
    let back = turn.transpose();
    let world: Vec<Mat4> = world.iter().map(|m| Mat4::from_mat3(back) * *m).collect();
    let placed: Vec<Vec3> = placed.iter().map(|p| back * *p).collect();
    rebuild(skel, &world, &placed)
}

/// The template with each joint's pivot at `placed` and its world orientation from `world`: the offsets in each
/// parent's frame and the rotations (written as the pose) that give them. Returns the skeleton and its world
/// matrices in that pose.
pub(super) fn rebuild(skel: &Skeleton, world: &[Mat4], placed: &[Vec3]) -> Result<(Skeleton, Vec<Mat4>), FitError> {
    let rotation = |m: &Mat4| -> Quat {
        let a = Mat3::from_mat4(*m);
        let cols = [a.x_axis, a.y_axis, a.z_axis].map(|c| c.try_normalize().unwrap_or(Vec3::ZERO));
        let r = Mat3::from_cols(cols[0], cols[1], cols[2]);
        if r.determinant().abs() > 1e-3 {
            Quat::from_mat3(&r).normalize()
        } else {
            Quat::IDENTITY
        }
    };
    let mut new_world: Vec<Mat4> = Vec::with_capacity(skel.len());
    let mut joints: Vec<Joint> = Vec::with_capacity(skel.len());
    for (i, j) in skel.joints().iter().enumerate() {
        let r = rotation(&world[i]);
        let (parent_world, parent_rot) = match j.parent {
            Some(p) => (new_world[p], rotation(&world[p])),
            None => (Mat4::IDENTITY, Quat::IDENTITY),
        };
        let local = parent_rot.inverse() * r;
        let dofs = crate::model::skeleton::dofs_from_rotation(local, j.pose.unwrap_or(Vec3::ZERO));
        let offset = parent_world.inverse().transform_point3(placed[i]);
        let mut nj = j.clone();
        nj.offset = offset;
        nj.pose = (dofs != Vec3::ZERO).then_some(dofs);
        // The limits stay; a rotation outside them is clamped and the world matrices below say what it became.
        let local_m = crate::model::skeleton::parent_from_joint(offset, nj.clamp3(dofs));
        new_world.push(parent_world * local_m);
        joints.push(nj);
    }
    let skeleton = Skeleton::new(joints).map_err(|e| FitError::Skeleton(e.to_string()))?;
    let w = world_from_joint(&skeleton, &Pose::from_file(&skeleton));
    Ok((skeleton, w))
}

#[cfg(test)]
#[path = "fit_tests.rs"]
mod tests;
