//! Automatic skin weights: point-to-line mapping and containment volumes (CSE169, "Skinning" lecture), with a
//! visibility test against the surface so that weights do not bleed between nearby parts.
//!
//! Pipeline for every vertex `p` (in parallel over vertices, deterministic):
//! 1. **Near bones** ([`nearest`]): every joint whose bone (its segments, [`bones`]) is closer to `p` than
//!    `blend_ratio` times the nearest bone's distance `D1`.
//! 2. **Parts** (option, on by default): when the mesh has several connected parts (after welding coincident
//!    vertices), a bone belongs to a part if one of its points (nine along each segment, less a child's pivot)
//!    lies inside the part
//!    (odd number of crossings of that part's triangles along a ray). A part with no bone inside (a flat
//!    plate, an open sheet: a wing, a hair card) is an accessory attached at a joint: it takes the one bone
//!    that comes nearest to its vertices (ties: the joint whose pivot is nearest); a bone that reaches the part
//!    only at its child's pivot counts as the child. A vertex takes weight only from the bones
//!    of its part (near bones are then taken among those). A wasp's lower leg, a separate tube, keeps off the
//!    next leg's knee even where that knee is nearer. Meshes of more than 4096 parts (triangle soups) are
//!    treated as one part.
//! 3. **Visibility** (option, on by default): a near bone counts only if the straight segment from `p` to the
//!    bone's closest point does not cross the surface of `p`'s part (a BVH per part). This keeps a torso vertex
//!    beside a hanging arm off the arm even where the arm's bone is nearer than the spine, and a finger off its
//!    neighbour. If every near bone is hidden, the nearest is kept, so every vertex is weighted.
//!
//!    Between 2 and 3, near bones are re-ranked by their *end distance* (option `end_distance`, on by default;
//!    [`bones::Segment::end_distance`]): the plain distance beside a bone, longer far past a short bone's ends.
//!    Weights fall off with it; bones are still chosen by the plain distance.
//! 4. **Weights** by method:
//!    - `line`: for visible near bones with (end) distances `D_j` and `D1'` the least of them,
//!      `r_j = D_j / D1'` and `w_j = r_j^-power * (1 - smoothstep((r_j - 1) / (blend_ratio - 1)))`,
//!      `smoothstep(x) = x²(3 - 2x)` on `x` clamped to [0, 1]. The nearest bone has `w = 1`, weights fall smoothly to 0 at `blend_ratio * D1'`,
//!      and they change continuously as the nearest bone changes. Weights under 1% of the nearest bone's are
//!      dropped (before the visibility test, which they would only slow down).
//!    - `volume`: each joint has a containment volume ([`VolumeShape::Capsule`] around its segments, or an
//!      ellipsoid around each segment) of radius `r_j` and length scale `s_j`. A vertex inside one or more
//!      visible volumes is weighted among them by depth (`1 - d/r_j` for a capsule, `1 - q` for an ellipsoid
//!      with normalised radius `q`); a vertex in none falls back to `line`.
//!    - `hybrid`: the mean of the normalised `line` and `volume` weights (just `line` outside every volume).
//! 5. **Limit and normalise**: keep the `max_influences` largest weights (ties: lower joint index), divide by
//!    their sum. `rigid` keeps only the largest, at weight 1.
//!
//! Volume radii: the joint's own setting when given, else half the second-largest extent of its `.skel` box,
//! else 1.25 times the median distance to the bone of the vertices whose nearest bone it is (a quarter of the
//! bone's length if it is nearest to none).

pub mod bones;
pub mod controls;
pub mod geodesic;
pub mod nearest;
pub mod plates;
pub mod voxel;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use glam::{Mat4, Vec3};
use rayon::prelude::*;

use crate::model::{Skeleton, Weights};
use crate::spatial::bvh::PACKET;
use crate::spatial::{SegmentEntry, TriangleBvh};
use bones::{Segment, SegmentKind, bone_segments, extend_leaves_to_surface};
use nearest::{BoneIndex, Candidate, CellGrid, Scratch, near_bones_naive};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BindMethod {
    /// Straight distances to the bones, with visibility and parts (this module's doc).
    Line,
    Volume,
    Hybrid,
    /// The default: distances through the voxelised solid of the mesh ([`geodesic`]); the closest to the artists'
    /// weights on the shared characters (docs/binding.md).
    #[default]
    Geodesic,
}

impl BindMethod {
    /// The blend ratio each method is measured best with (docs/binding.md): geodesic distances grow faster away
    /// from a bone than straight ones, so they blend over a smaller ratio.
    pub fn default_blend_ratio(self) -> f32 {
        match self {
            Self::Geodesic => 1.5,
            _ => 2.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Line => "line",
            Self::Volume => "volume",
            Self::Hybrid => "hybrid",
            Self::Geodesic => "geodesic",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VolumeShape {
    #[default]
    Capsule,
    Ellipsoid,
}

/// One joint's containment volume settings; saved with the document.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct JointVolume {
    /// Radius in world units; `None` sizes it automatically.
    pub radius: Option<f32>,
    /// Scales the bone's segments about its pivot before the volume is built around them.
    pub length_scale: f32,
}

impl Default for JointVolume {
    fn default() -> Self {
        Self {
            radius: None,
            length_scale: 1.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct BindOptions {
    pub method: BindMethod,
    pub max_influences: usize,
    pub rigid: bool,
    /// Bones farther than this times the nearest bone's distance get no weight (> 1).
    pub blend_ratio: f32,
    /// Exponent of the inverse-distance falloff.
    pub falloff_power: f32,
    /// Drop bones the surface hides from the vertex.
    pub visibility: bool,
    /// Extend box-less leaf bones into the mesh, to near where they meet its surface.
    pub leaf_to_surface: bool,
    /// Weigh near bones by their end distance (less reach past a short bone's ends) rather than the plain
    /// point-to-segment distance.
    pub end_distance: bool,
    /// Weight each connected part of the mesh only by the bones that reach it.
    pub parts: bool,
    pub volume_shape: VolumeShape,
    /// Per joint, by index; missing entries use the defaults.
    pub volumes: Vec<JointVolume>,
    /// Per joint, by index: whether it deforms the mesh. A joint that does not (a control: an IK or pole target,
    /// a master root) gets no weight and its bone attracts no vertex; it still moves its children. Missing entries
    /// deform.
    pub deform: Vec<bool>,
    /// Cells along the longest side of the voxel grid (geodesic method).
    pub resolution: usize,
}

impl Default for BindOptions {
    fn default() -> Self {
        Self::for_method(BindMethod::default())
    }
}

impl BindOptions {
    /// The defaults for `method` (its blend ratio differs).
    pub fn for_method(method: BindMethod) -> Self {
        Self {
            method,
            max_influences: 4,
            rigid: false,
            blend_ratio: method.default_blend_ratio(),
            falloff_power: 4.0,
            visibility: true,
            leaf_to_surface: true,
            end_distance: true,
            parts: true,
            volume_shape: VolumeShape::default(),
            volumes: Vec::new(),
            deform: Vec::new(),
            resolution: DEFAULT_RESOLUTION,
        }
    }
}

/// The geodesic method's voxel grid: cells along the longest side.
pub const DEFAULT_RESOLUTION: usize = 128;
/// The finest grid allowed (512³ cells is 134 million).
pub const MAX_RESOLUTION: usize = 512;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BindError {
    #[error("voxel resolution {0} must be from 8 to {MAX_RESOLUTION}")]
    Resolution(usize),
    #[error("{matrices} bind matrices for a skeleton of {joints} joints")]
    Matrices { matrices: usize, joints: usize },
    #[error("max influences must be at least 1")]
    NoInfluences,
    #[error("blend ratio {0} must be a finite number above 1")]
    BlendRatio(f32),
    #[error("falloff power {0} must be a finite number from 0 to 64")]
    FalloffPower(f32),
    #[error("joint {joint}'s volume radius {radius} must be a finite positive number")]
    Radius { joint: usize, radius: f32 },
    #[error("a vertex position is not finite (vertex {0})")]
    Position(usize),
    #[error("no joint deforms: every joint is excluded")]
    NothingDeforms,
}

impl BindOptions {
    /// Whether joint `j` deforms (see [`BindOptions::deform`]).
    pub fn deforms(&self, j: usize) -> bool {
        self.deform.get(j).copied().unwrap_or(true)
    }
}

/// What a bind did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BindReport {
    pub method: String,
    pub vertices: usize,
    pub joints: usize,
    pub max_influences: usize,
    pub rigid: bool,
    pub visibility: bool,
    /// (stage, milliseconds), in order.
    pub stages: Vec<(String, f64)>,
    pub total_ms: f64,
    /// Joints with no weight on any vertex, by index and name.
    pub bones_without_vertices: Vec<(usize, String)>,
    /// Near bones dropped because the surface hides them.
    pub hidden_candidates: usize,
    /// Vertices whose every near bone was hidden (they keep the nearest).
    pub vertices_all_hidden: usize,
    /// Box-less leaf bones extended to the surface.
    pub leaves_extended: usize,
    /// Connected parts of the mesh (after welding), when the parts option is on.
    pub parts: usize,
    /// Vertices whose nearest bone belongs to another part (they were weighted among their part's bones).
    pub vertices_nearest_elsewhere: usize,
    /// Vertices inside no containment volume (volume and hybrid methods).
    pub vertices_in_no_volume: usize,
    /// The radius each volume got.
    pub volume_radii: Vec<f32>,
    /// The voxel grid of the geodesic method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geodesic: Option<geodesic::GeodesicReport>,
    pub warnings: Vec<String>,
    /// Deforming joints that look like controls (each also named in a warning), ascending.
    pub controls: Vec<usize>,
}

fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// Line weights below this fraction of the nearest bone's are dropped.
const MIN_WEIGHT: f32 = 0.01;

/// The line falloff at distance ratio `r = D / D1` (1 at `r = 1`, 0 from `r = ratio` on).
fn line_weight(r: f32, ratio: f32, power: f32) -> f32 {
    if r <= 1.0 {
        1.0
    } else if !r.is_finite() {
        0.0
    } else {
        // Whole powers (the default is 4) by multiplication: `powf` was 2% of a bind.
        let fall = if power.fract() == 0.0 && power.abs() <= 64.0 {
            powi(r, -(power as i32))
        } else {
            r.powf(-power)
        };
        fall * (1.0 - smoothstep((r - 1.0) / (ratio - 1.0)))
    }
}

/// `x` to the whole power `n` by squaring, the steps of `f32::powi`'s library routine (compiler-builtins'
/// `__powisf2`: the factors multiplied from the lowest bit up, the reciprocal last), so the same value, but inlined
/// rather than called (the call was 1% of a bind).
#[inline]
fn powi(mut x: f32, n: i32) -> f32 {
    let mut k = n.unsigned_abs();
    let mut product = 1.0f32;
    loop {
        if k & 1 == 1 {
            product *= x;
        }
        k >>= 1;
        if k == 0 {
            break;
        }
        x *= x;
    }
    if n < 0 { 1.0 / product } else { product }
}

/// The line weight of a bone at distance `dist` from a vertex whose nearest bone is at `d1`.
#[inline]
fn falloff(dist: f32, d1: f32, ratio: f32, power: f32) -> f32 {
    if dist <= d1 {
        1.0
    } else if d1 <= 0.0 {
        0.0
    } else {
        line_weight(dist / d1, ratio, power)
    }
}

/// Line weights of candidates sorted by distance; weights under [`MIN_WEIGHT`] are dropped.
fn line_weights(cands: &[Candidate], ratio: f32, power: f32, out: &mut Vec<(u16, f32)>) {
    out.clear();
    let Some(first) = cands.first() else { return };
    let d1 = first.dist;
    for c in cands {
        let w = falloff(c.dist, d1, ratio, power);
        if w >= MIN_WEIGHT {
            out.push((c.joint, w));
        }
    }
}

/// Keep the `k` largest (ties: lower joint), normalise; `rigid` keeps one at weight 1.
fn limit_and_normalise(w: &mut Vec<(u16, f32)>, k: usize, rigid: bool) {
    let order = |a: &(u16, f32), b: &(u16, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    // Line weights come in this order already (near bones sorted by distance, the falloff decreasing): checked
    // rather than sorted again.
    if !w.is_sorted_by(|a, b| order(a, b).is_le()) {
        w.sort_by(order);
    }
    w.truncate(if rigid { 1 } else { k });
    let sum: f32 = w.iter().map(|x| x.1).sum();
    if sum > 0.0 && sum.is_finite() {
        w.iter_mut().for_each(|x| x.1 /= sum);
    }
    if rigid {
        w.iter_mut().for_each(|x| x.1 = 1.0);
    }
    w.sort_by_key(|x| x.0);
}

struct Volumes {
    index: BoneIndex,
    radius: Vec<f32>,
    max_radius: f32,
    shape: VolumeShape,
}

impl Volumes {
    /// Containment depths of `p` among visible volumes, as (joint, depth > 0).
    fn depths(
        &self,
        p: Vec3,
        scratch: &mut Scratch,
        cands: &mut Vec<Candidate>,
        visible: &dyn Fn(Vec3, Vec3) -> bool,
        out: &mut Vec<(u16, f32)>,
    ) {
        out.clear();
        self.index.within(p, self.max_radius, scratch, cands);
        for c in cands.iter() {
            let r = self.radius[c.joint as usize];
            if c.dist >= r {
                continue;
            }
            let depth = match self.shape {
                VolumeShape::Capsule => 1.0 - c.dist / r,
                VolumeShape::Ellipsoid => self.ellipsoid_depth(p, c.joint, r),
            };
            if depth > 0.0 && visible(p, c.closest) {
                out.push((c.joint, depth));
            }
        }
    }

    /// `1 - q` for the joint's segment ellipsoid that holds `p` deepest; semi-axes `len/2 + r` along the
    /// segment and `r` across it.
    fn ellipsoid_depth(&self, p: Vec3, joint: u16, r: f32) -> f32 {
        let mut best: f32 = 0.0;
        for s in self.index.segments().iter().filter(|s| s.joint == joint) {
            let axis = s.b - s.a;
            let len = axis.length();
            let c = (s.a + s.b) * 0.5;
            let d = p - c;
            let (along, across) = if len > 0.0 {
                let u = axis / len;
                let t = d.dot(u);
                (t, (d - u * t).length())
            } else {
                (0.0, d.length())
            };
            let a = len * 0.5 + r;
            let q = ((along / a).powi(2) + (across / r).powi(2)).sqrt();
            best = best.max(1.0 - q);
        }
        best
    }
}

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
    let mut report = BindReport {
        method: opts.method.name().to_string(),
        vertices: positions.len(),
        joints: skel.len(),
        max_influences: opts.max_influences,
        rigid: opts.rigid,
        visibility: opts.visibility,
        ..Default::default()
    };
    if opts.method == BindMethod::Geodesic {
        let weights = geodesic::bind(skel, bind_world, positions, triangles, opts, &mut report);
        progress(1.0);
        return Ok(finish(weights, report, skel, opts, t_all));
    }

    // The vertex grid for the weights stage needs only the positions: it is bucketed on the other thread while
    // the (partly sequential) welding runs.
    let (surface, grid) = rayon::join(
        || {
            (opts.visibility || opts.leaf_to_surface || opts.parts).then(|| {
                let t = Instant::now();
                let part = opts.parts.then(|| {
                    let diag = crate::model::skin::bounds(positions).map_or(1.0, |(lo, hi)| (hi - lo).length());
                    crate::mesh::connected_parts(positions, triangles, 1e-6 * diag)
                });
                if opts.parts {
                    stage("mesh parts", t, &mut report);
                }
                let t = Instant::now();
                let s = Surface::new(positions, triangles, part);
                stage("surface bvh", t, &mut report);
                report.parts = s.parts.len();
                s
            })
        },
        || CellGrid::new(positions, 64),
    );
    let occluder = surface.as_ref().filter(|_| opts.visibility);

    let t = Instant::now();
    // Each part's box, made once for the leaf extension and the part bones (only with several parts).
    let part_boxes = surface.as_ref().and_then(|s| s.several_part_bounds(positions));
    let segments = deforming_segments(
        skel,
        bind_world,
        positions,
        surface.as_ref(),
        part_boxes.as_ref(),
        opts,
        &mut report,
    );
    let index = BoneIndex::new(&segments);
    stage("bones", t, &mut report);

    let parts = match (surface.as_ref().filter(|_| opts.parts), part_boxes.as_ref()) {
        (Some(surface), Some(boxes)) => {
            let t = Instant::now();
            let p = PartBones::new(&index, positions, surface, boxes, skel.len(), &[]);
            stage("part bones", t, &mut report);
            Some(p)
        }
        _ => None,
    };

    let volumes = if opts.method == BindMethod::Line {
        None
    } else {
        let t = Instant::now();
        let v = build_volumes(skel, bind_world, &segments, &index, positions, opts);
        report.volume_radii = v.radius.clone();
        stage("volumes", t, &mut report);
        Some(v)
    };

    let t = Instant::now();
    let done = AtomicUsize::new(0);
    let hidden = AtomicUsize::new(0);
    let all_hidden = AtomicUsize::new(0);
    let elsewhere = AtomicUsize::new(0);
    let no_volume = AtomicUsize::new(0);
    let ctx = CellContext {
        grid: &grid,
        index: &index,
        positions,
        opts,
        parts: parts.as_ref(),
        surface: surface.as_ref(),
        occluder,
        volumes: volumes.as_ref(),
    };
    let cells: Vec<CellOut> = (0..grid.cells())
        .into_par_iter()
        .map_init(
            || (Scratch::default(), CellScratch::default()),
            |(scratch, cs), ci| {
                let (out, counts) = ctx.weigh(ci, scratch, cs);
                hidden.fetch_add(counts.hidden, Ordering::Relaxed);
                all_hidden.fetch_add(counts.all_hidden, Ordering::Relaxed);
                no_volume.fetch_add(counts.no_volume, Ordering::Relaxed);
                elsewhere.fetch_add(counts.elsewhere, Ordering::Relaxed);
                let cell = grid.cell(ci).len();
                let n = done.fetch_add(cell, Ordering::Relaxed) + cell;
                if n * 64 / positions.len().max(1) != (n - cell) * 64 / positions.len().max(1) {
                    progress(n as f32 / positions.len().max(1) as f32);
                }
                out
            },
        )
        .collect();
    stage("weights", t, &mut report);

    let t = Instant::now();
    let weights = assemble(&grid, &cells, positions.len());
    drop(cells);
    stage("assemble", t, &mut report);
    report.hidden_candidates = hidden.into_inner();
    report.vertices_nearest_elsewhere = elsewhere.into_inner();
    report.vertices_all_hidden = all_hidden.into_inner();
    report.vertices_in_no_volume = if volumes.is_some() { no_volume.into_inner() } else { 0 };
    Ok(finish(weights, report, skel, opts, t_all))
}

fn stage(name: &str, t: Instant, report: &mut BindReport) {
    report.stages.push((name.to_string(), t.elapsed().as_secs_f64() * 1e3));
}

/// The bones of the joints that deform, in the bind pose ([`bones`]); box-less leaves extended into `surface`
/// when the options ask. Warns about joints that look like controls.
fn deforming_segments(
    skel: &Skeleton,
    bind_world: &[Mat4],
    positions: &[Vec3],
    surface: Option<&Surface>,
    part_boxes: Option<&(Vec<Vec3>, Vec<Vec3>)>,
    opts: &BindOptions,
    report: &mut BindReport,
) -> Vec<Segment> {
    let mut segments = bone_segments(skel, bind_world);
    let continued = segments.iter().any(|s| s.kind == SegmentKind::Continued);
    if let Some(s) = surface.filter(|_| opts.leaf_to_surface && continued) {
        // A pivot is tested only against the parts whose box holds it.
        let in_box = |q: Vec3, c: usize| part_boxes.is_none_or(|(lo, hi)| q.cmpge(lo[c]).all() && q.cmple(hi[c]).all());
        report.leaves_extended = extend_leaves_to_surface(
            &mut segments,
            |o, d, t| s.ray_cast(o, d, t),
            |q| (0..s.parts.len()).any(|c| in_box(q, c) && s.inside(q, c)),
            |leaf, other| opts.deforms(other as usize) && !skel.ancestors(leaf as usize).any(|a| a == other as usize),
        );
    }
    for (j, reason) in controls::likely_controls(skel, &segments, positions, &opts.deform) {
        let name = &skel.joints()[j].name;
        report.warnings.push(controls::control_warning(j, name, reason));
        report.controls.push(j);
    }
    // Joints that do not deform have no bone to attract vertices (their children's leaves were placed above).
    segments.retain(|s| opts.deforms(s.joint as usize));
    segments
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
        .filter(|(j, u)| !**u && opts.deforms(*j))
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

/// What the weights of every grid cell are computed from (see [`bind_weights`]).
struct CellContext<'a> {
    grid: &'a CellGrid,
    index: &'a BoneIndex,
    positions: &'a [Vec3],
    opts: &'a BindOptions,
    parts: Option<&'a PartBones>,
    surface: Option<&'a Surface>,
    occluder: Option<&'a Surface>,
    volumes: Option<&'a Volumes>,
}

/// What one cell's weights counted, for the report.
#[derive(Default)]
struct CellCounts {
    hidden: usize,
    all_hidden: usize,
    no_volume: usize,
    elsewhere: usize,
}

impl CellContext<'_> {
    crate::simd::two_copies! {
        /// The weights of grid cell `ci`'s vertices: near bones, visibility, weights (the module doc), compiled
        /// twice (`crate::simd`).
        fn weigh(&self, ci: usize, scratch: &mut Scratch, cs: &mut CellScratch) -> (CellOut, CellCounts)
            = Self::weigh_v3 / Self::weigh_portable
    }

    #[inline(always)]
    fn weigh_portable(&self, ci: usize, scratch: &mut Scratch, cs: &mut CellScratch) -> (CellOut, CellCounts) {
        let CellContext {
            grid,
            index,
            positions,
            opts,
            parts,
            surface,
            occluder,
            volumes,
        } = *self;
        let CellScratch {
            among,
            narrow,
            narrow_dists,
            group_points,
            cands,
            cands_all,
            ends,
            falloffs,
            runs,
            hid_all,
            entry,
            part_segments,
            packet,
            vis,
            w,
            wv,
            vol_cands,
        } = cs;
        let cell = grid.cell(ci);
        index.cell_segments(cell.iter().map(|&v| positions[v as usize]), opts.blend_ratio, among);
        let mut out = CellOut {
            counts: Vec::with_capacity(cell.len()),
            joints: Vec::with_capacity(cell.len() * 2),
            values: Vec::with_capacity(cell.len() * 2),
        };
        let (mut n_hidden, mut n_all_hidden, mut n_no_volume, mut n_elsewhere) = (0, 0, 0, 0);
        // 1. Each vertex's near bones, one run of `cands_all` (and of their closest points, `ends`) each.
        cands_all.clear();
        ends.clear();
        falloffs.clear();
        runs.clear();
        for (k, &v) in cell.iter().enumerate() {
            if k % NEAR_GROUP == 0 {
                // The cell's segments narrowed to those near the next few vertices.
                group_points.clear();
                group_points.extend(cell[k..].iter().take(NEAR_GROUP).map(|&v| positions[v as usize]));
                index.narrow_segments(group_points, opts.blend_ratio, among, narrow_dists, narrow);
            }
            let v = v as usize;
            let p = positions[v];
            let own_part = parts.as_ref().and(surface.as_ref()).map(|s| s.part_of(v));
            index.near_bones_among(p, narrow, opts.blend_ratio, scratch, cands);
            if let (Some(parts), Some(part)) = (&parts, own_part) {
                if cands.first().is_some_and(|c| !parts.allows(part, c.joint)) {
                    // The nearest bone is another part's: take the near bones among this part's own.
                    n_elsewhere += 1;
                    if part_segments.0 != Some(part) {
                        part_segments.0 = Some(part);
                        part_segments.1.clear();
                        part_segments
                            .1
                            .extend(index.segments().iter().filter(|s| parts.allows(part, s.joint)).copied());
                    }
                    let part_segments = &part_segments.1;
                    near_bones_naive(p, part_segments, opts.blend_ratio, scratch, cands);
                } else {
                    cands.retain(|c| parts.allows(part, c.joint));
                }
            }
            if opts.end_distance && cands.len() > 1 {
                index.to_end_distances(p, cands);
            }
            // Bones whose line weight would be under 1% of the nearest bone's add only noise: drop
            // them before the (costly) visibility test. The weights are kept: they are the line weights
            // of a vertex none of whose near bones is hidden.
            let start = cands_all.len();
            if let Some(d1) = cands.first().map(|c| c.dist) {
                for c in cands.iter() {
                    let w = falloff(c.dist, d1, opts.blend_ratio, opts.falloff_power);
                    if w >= MIN_WEIGHT {
                        cands_all.push(*c);
                        ends.push(c.closest);
                        falloffs.push(w);
                    }
                }
            }
            runs.push(start..cands_all.len());
        }
        // 2. The visibility tests. Every near bone is tested, the nearest too: beside a hanging arm, a torso
        // vertex is nearer the arm's bone than the spine, and the arm's surface hides it. The segments of a
        // few neighbouring vertices (consecutive in the cell, same part) lie in a small box: they are traversed
        // together (one fetch of the nodes and leaves they share), beginning at the tree's boxes that meet that
        // box, found once (`segment_entry`).
        hid_all.clear();
        hid_all.resize(cands_all.len(), false);
        if let Some(s) = occluder {
            let mut next = 0;
            while next < cell.len() {
                // The next few vertices with more than one near bone, all in one part, whose segments fit a packet.
                let mut group = [0usize; VISIBILITY_GROUP];
                let (mut n, mut part, mut total) = (0, None, 0);
                while next < cell.len() && n < VISIBILITY_GROUP {
                    let len = runs[next].len();
                    if len > 1 {
                        let p = s.part_of(cell[next] as usize);
                        if part.is_some_and(|q| q != p) || (n > 0 && total + len > PACKET) {
                            break;
                        }
                        part = Some(p);
                        group[n] = next;
                        n += 1;
                        total += len;
                    }
                    next += 1;
                }
                let Some(bvh) = group[..n].first().and_then(|&i| s.tree_of(cell[i] as usize)) else {
                    continue;
                };
                let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
                for &i in &group[..n] {
                    for &e in std::iter::once(&positions[cell[i] as usize]).chain(&ends[runs[i].clone()]) {
                        (lo, hi) = (lo.min(e), hi.max(e));
                    }
                }
                bvh.segment_entry(lo, hi, 1.0, entry);
                // The group's segments gathered (vertices with one near bone between them have runs of their own
                // in `cands_all`), tested together, and the answers put back.
                packet.clear();
                for &i in &group[..n] {
                    let (v, r) = (cell[i], runs[i].clone());
                    packet.from.extend(std::iter::repeat_n(v, r.len()));
                    packet
                        .origins
                        .extend(std::iter::repeat_n(positions[v as usize], r.len()));
                    packet.ends.extend_from_slice(&ends[r]);
                }
                packet.hidden.resize(total, false);
                bvh.packet_hit_from_vertices_within(
                    entry,
                    &packet.from,
                    &packet.origins,
                    &packet.ends,
                    VISIBILITY_EPS,
                    &mut packet.hidden,
                );
                let mut at = 0;
                for &i in &group[..n] {
                    let r = runs[i].clone();
                    hid_all[r.clone()].copy_from_slice(&packet.hidden[at..at + r.len()]);
                    at += r.len();
                }
            }
        }
        // 3. Weights.
        for (&v, r) in cell.iter().zip(runs.iter()) {
            let v = v as usize;
            let p = positions[v];
            let visible = |a: Vec3, b: Vec3| occluder.is_none_or(|s| !s.hides(v, a, b));
            let cands = &cands_all[r.clone()];
            let hidden_here = hid_all[r.clone()].iter().filter(|h| **h).count();
            if hidden_here == 0 {
                // The weights of phase 1 (what `line_weights` gives for these candidates).
                w.clear();
                w.extend(cands.iter().zip(&falloffs[r.clone()]).map(|(c, &x)| (c.joint, x)));
            } else {
                vis.clear();
                vis.extend(
                    cands
                        .iter()
                        .zip(&hid_all[r.clone()])
                        .filter(|(_, h)| !**h)
                        .map(|(c, _)| *c),
                );
                n_hidden += hidden_here;
                if vis.is_empty() {
                    // All hidden: the nearest is kept, so every vertex is weighted.
                    n_all_hidden += 1;
                    vis.push(cands[0]);
                }
                line_weights(vis, opts.blend_ratio, opts.falloff_power, w);
            }
            if let Some(vol) = &volumes {
                vol.depths(p, scratch, vol_cands, &visible, wv);
                if wv.is_empty() {
                    n_no_volume += 1;
                } else if opts.method == BindMethod::Volume {
                    std::mem::swap(w, wv);
                } else {
                    blend_half(w, wv);
                }
            }
            limit_and_normalise(w, opts.max_influences, opts.rigid);
            out.counts.push(w.len() as u32);
            for &(j, x) in w.iter() {
                out.joints.push(j);
                out.values.push(x);
            }
        }
        let counts = CellCounts {
            hidden: n_hidden,
            all_hidden: n_all_hidden,
            no_volume: n_no_volume,
            elsewhere: n_elsewhere,
        };
        (out, counts)
    }
}

/// Per-thread buffers for the weights of one grid cell's vertices (reused from cell to cell).
#[derive(Default)]
struct CellScratch {
    /// Segments that can hold a near bone of one of the cell's vertices, then of one of a few of them, and those
    /// few vertices' positions.
    among: Vec<u32>,
    narrow: Vec<u32>,
    narrow_dists: Vec<f32>,
    group_points: Vec<Vec3>,
    /// One vertex's near bones, then all the cell's, vertex after vertex (`runs`), with their closest points.
    cands: Vec<Candidate>,
    cands_all: Vec<Candidate>,
    ends: Vec<Vec3>,
    /// Each of `cands_all`'s line weight among its vertex's near bones.
    falloffs: Vec<f32>,
    runs: Vec<std::ops::Range<usize>>,
    /// Whether the surface hides each of `cands_all`.
    hid_all: Vec<bool>,
    /// Where the traversals of a group of vertices begin.
    entry: SegmentEntry,
    /// The segments of a part's bones (the part, then its segments).
    part_segments: (Option<u32>, Vec<bones::Segment>),
    /// A visibility group's segments and their answers.
    packet: Packet,
    vis: Vec<Candidate>,
    w: Vec<(u16, f32)>,
    wv: Vec<(u16, f32)>,
    vol_cands: Vec<Candidate>,
}

/// The segments of a visibility group, each one's vertex, origin (that vertex's position) and end, and whether
/// the surface hides it.
#[derive(Default)]
struct Packet {
    from: Vec<u32>,
    origins: Vec<Vec3>,
    ends: Vec<Vec3>,
    hidden: Vec<bool>,
}

impl Packet {
    fn clear(&mut self) {
        self.from.clear();
        self.origins.clear();
        self.ends.clear();
        self.hidden.clear();
    }
}

/// Neighbouring vertices whose near bones are sought among one narrowed list of segments (chosen on the creature
/// sample).
const NEAR_GROUP: usize = 16;

/// Neighbouring vertices whose visibility segments are tested in one traversal, begun at one set of entry boxes
/// (chosen on the creature sample: 4 to 32 tried, with entry boxes of 0.5 to 4 times the group's box; 8, 12 and
/// 16 again once the group's segments were traversed together).
const VISIBILITY_GROUP: usize = 12;

/// One grid cell's rows, in the cell's vertex order: each row's length, then the rows' joints and weights.
struct CellOut {
    counts: Vec<u32>,
    joints: Vec<u16>,
    values: Vec<f32>,
}

/// The cells' rows gathered into vertex order. Rows from [`limit_and_normalise`] are valid already (positive,
/// no repeats, summing to 1), so they are copied as they are, in parallel (debug builds check them).
fn assemble(grid: &CellGrid, cells: &[CellOut], vertices: usize) -> Weights {
    // Each vertex's row: (cell, start in that cell's arrays, count).
    let mut at = vec![(0u32, 0u32, 0u32); vertices];
    for (ci, out) in cells.iter().enumerate() {
        let mut start = 0u32;
        for (&v, &count) in grid.cell(ci).iter().zip(&out.counts) {
            at[v as usize] = (ci as u32, start, count);
            start += count;
        }
    }
    let mut offsets = Vec::with_capacity(vertices + 1);
    offsets.push(0u32);
    let mut total = 0u32;
    for &(_, _, count) in &at {
        total += count;
        offsets.push(total);
    }
    let mut joints = vec![0u16; total as usize];
    let mut values = vec![0f32; total as usize];
    // Blocks of vertices, each with its own run of the output arrays.
    const BLOCK: usize = 8192;
    let mut blocks = Vec::with_capacity(vertices.div_ceil(BLOCK));
    let (mut js, mut ws) = (joints.as_mut_slice(), values.as_mut_slice());
    for v0 in (0..vertices).step_by(BLOCK) {
        let v1 = (v0 + BLOCK).min(vertices);
        let len = (offsets[v1] - offsets[v0]) as usize;
        let (j, j_rest) = std::mem::take(&mut js).split_at_mut(len);
        let (w, w_rest) = std::mem::take(&mut ws).split_at_mut(len);
        (js, ws) = (j_rest, w_rest);
        blocks.push((v0..v1, j, w));
    }
    blocks.into_par_iter().for_each(|(range, js, ws)| {
        let mut k = 0;
        for &(ci, start, count) in &at[range] {
            let c = &cells[ci as usize];
            let r = start as usize..(start + count) as usize;
            let n = count as usize;
            js[k..k + n].copy_from_slice(&c.joints[r.clone()]);
            ws[k..k + n].copy_from_slice(&c.values[r]);
            k += n;
        }
    });
    Weights::from_valid(offsets, joints, values)
}

/// The mesh's surface for ray queries: one BVH per connected part (after welding), so that a part's own
/// surface can be asked alone, or one BVH for the whole mesh.
struct Surface {
    /// Part of each vertex (all 0 for one part).
    part: Vec<u32>,
    parts: Vec<TriangleBvh>,
}

/// Meshes split into more parts than this (triangle soups) are treated as one part.
const MAX_PARTS: usize = 4096;

/// Segment ends within this fraction of the segment's length are not tested for crossings (the vertex itself
/// lies on the surface).
const VISIBILITY_EPS: f32 = 1e-4;

impl Surface {
    /// One BVH per part of `parts` (each vertex's part and the count), or one for the whole mesh when `parts`
    /// is `None`, has a single part, or more than [`MAX_PARTS`].
    fn new(positions: &[Vec3], triangles: &[[u32; 3]], parts: Option<(Vec<u32>, usize)>) -> Self {
        let whole = |positions: &[Vec3]| Self {
            part: vec![0; positions.len()],
            parts: vec![part_tree(positions, triangles)],
        };
        let Some((part, count)) = parts.filter(|(_, c)| (2..=MAX_PARTS).contains(c)) else {
            return whole(positions);
        };
        debug_assert_eq!(part.len(), positions.len());
        let (tris, starts) = part_triangles(triangles, &part, count);
        let parts = starts
            .par_windows(2)
            .map(|r| part_tree(positions, &tris[r[0]..r[1]]))
            .collect();
        Self { part, parts }
    }

    fn part_of(&self, v: usize) -> u32 {
        self.part.get(v).copied().unwrap_or(0)
    }

    /// Each part's box (its vertices' minima and maxima; empty, `+inf` to `-inf`, for a part without vertices),
    /// [`Self::part_bounds`] where the mesh has several parts (one part needs no boxes).
    fn several_part_bounds(&self, positions: &[Vec3]) -> Option<(Vec<Vec3>, Vec<Vec3>)> {
        (self.parts.len() > 1).then(|| self.part_bounds(positions))
    }

    /// in parallel over blocks of vertices.
    fn part_bounds(&self, positions: &[Vec3]) -> (Vec<Vec3>, Vec<Vec3>) {
        const BLOCK: usize = 1 << 14;
        let count = self.parts.len();
        let empty = || (vec![Vec3::INFINITY; count], vec![Vec3::NEG_INFINITY; count]);
        positions
            .par_chunks(BLOCK)
            .enumerate()
            .map(|(b, block)| {
                let (mut lo, mut hi) = empty();
                for (i, p) in block.iter().enumerate() {
                    let c = self.part_of(b * BLOCK + i) as usize;
                    lo[c] = lo[c].min(*p);
                    hi[c] = hi[c].max(*p);
                }
                (lo, hi)
            })
            .reduce(empty, |(mut lo, mut hi), (l2, h2)| {
                for c in 0..count {
                    lo[c] = lo[c].min(l2[c]);
                    hi[c] = hi[c].max(h2[c]);
                }
                (lo, hi)
            })
    }

    /// Whether the segment from vertex `v` at `a` to `b` crosses `v`'s own part's surface.
    fn hides(&self, v: usize, a: Vec3, b: Vec3) -> bool {
        self.tree_of(v)
            .is_some_and(|bvh| bvh.segment_hits_from_vertex(v as u32, a, b, VISIBILITY_EPS))
    }

    /// The tree of vertex `v`'s own part, the only surface that can hide a bone from it.
    fn tree_of(&self, v: usize) -> Option<&TriangleBvh> {
        self.parts.get(self.part_of(v) as usize)
    }

    /// The nearest hit over all parts.
    fn ray_cast(&self, origin: Vec3, dir: Vec3, t_max: f32) -> Option<f32> {
        self.parts
            .iter()
            .filter_map(|b| b.ray_cast(origin, dir, 0.0, t_max))
            .map(|h| h.t)
            .reduce(f32::min)
    }

    /// Whether `q` lies inside part `c` (odd number of crossings of its surface along a fixed oblique ray).
    fn inside(&self, q: Vec3, c: usize) -> bool {
        let Some(bvh) = self.parts.get(c) else { return false };
        let dir = Vec3::new(0.5773, 0.3891, 0.7181).normalize();
        let mut crossings = 0u32;
        let mut t = 0.0f32;
        while let Some(h) = bvh.ray_cast(q, dir, t, f32::INFINITY) {
            crossings += 1;
            // Step past this hit; a ray through a shared edge meets both triangles at the same t.
            t = h.t + h.t.abs() * 1e-6 + 1e-7;
        }
        crossings % 2 == 1
    }
}

/// Each part's triangles, in input order, part after part, and where each part's begin (`count + 1` offsets):
/// `part` gives each vertex's part (of `count`); a triangle belongs to its first corner's part, and triangles with
/// a corner out of range of `part` are left out. When the input lists its triangles part after part already (as
/// most files do, a mesh's pieces one after another) it is returned as it is, with the offsets found by binary
/// search; otherwise they are sorted out in parallel ([`crate::mesh::partition`]).
fn part_triangles<'t>(
    triangles: &'t [[u32; 3]],
    part: &[u32],
    count: usize,
) -> (std::borrow::Cow<'t, [[u32; 3]]>, Vec<usize>) {
    let n = part.len();
    let part_of = |t: &[u32; 3]| t.iter().all(|&i| (i as usize) < n).then(|| part[t[0] as usize]);
    // Each block's first and last part if its triangles are all in range and their parts never decrease.
    let blocks: Vec<Option<(u32, u32)>> = triangles
        .par_chunks(crate::mesh::PARALLEL_MIN)
        .map(|block| {
            let mut parts = block.iter().map(part_of);
            let first = parts.next()??;
            let mut last = first;
            for p in parts {
                let p = p?;
                if p < last {
                    return None;
                }
                last = p;
            }
            Some((first, last))
        })
        .collect();
    let in_order = blocks.iter().all(Option::is_some)
        && blocks
            .windows(2)
            .all(|w| matches!((w[0], w[1]), (Some((_, a)), Some((b, _))) if a <= b));
    if in_order {
        let starts = (0..=count as u32)
            .map(|c| triangles.partition_point(|t| part[t[0] as usize] < c))
            .collect();
        return (std::borrow::Cow::Borrowed(triangles), starts);
    }
    let (tris, starts) = crate::mesh::partition(triangles, count, |t| part_of(t).map(|p| p as usize), |_, t| *t);
    (std::borrow::Cow::Owned(tris), starts)
}

/// A part's tree for the visibility and inside tests: the linear builder (its slower queries cost less than the
/// SAH build, docs/binding.md), with the segment queries' layout made now rather than by the first query.
fn part_tree(positions: &[Vec3], triangles: &[[u32; 3]]) -> TriangleBvh {
    let bvh = TriangleBvh::new_linear(positions, triangles);
    bvh.prepare_segment_queries();
    bvh
}

/// Which bones belong to which connected part of the mesh (see the module doc).
struct PartBones {
    words: usize,
    /// `parts * words` bits: bit `j` of part `c` is set when joint `j` belongs to part `c`.
    bits: Vec<u64>,
    /// Per part: whether a bone lies inside it (else it is an accessory).
    has_inside: Vec<bool>,
}

impl PartBones {
    /// `boxes`: each part's box ([`Surface::part_bounds`]). `open`: parts known to have a border (no bone can be
    /// inside them; the ray parity test is unreliable there), by part; parts past its end are tested.
    fn new(
        index: &BoneIndex,
        positions: &[Vec3],
        surface: &Surface,
        (lo, hi): &(Vec<Vec3>, Vec<Vec3>),
        joints: usize,
        open: &[bool],
    ) -> Self {
        let count = surface.parts.len();
        let words = joints.div_ceil(64).max(1);
        let mut me = Self {
            words,
            bits: vec![0; count * words],
            has_inside: Vec::new(),
        };
        // 1. A bone belongs to every part that holds one of its points inside (parts' boxes, then the points'
        //    inside tests, in parallel).
        let inside: Vec<(usize, u16)> = index
            .segments()
            .par_iter()
            .flat_map_iter(|s| {
                // A segment to a child stops short of the child's pivot: that point is the child's.
                let last = if s.kind.to_child() { 7 } else { 8 };
                (0..=last).flat_map(move |k| {
                    let q = s.a.lerp(s.b, k as f32 / 8.0);
                    (0..count)
                        .filter(move |&c| {
                            !open.get(c).copied().unwrap_or(false)
                                && q.cmpge(lo[c]).all()
                                && q.cmple(hi[c]).all()
                                && surface.inside(q, c)
                        })
                        .map(move |c| (c, s.joint))
                })
            })
            .collect();
        let mut has_inside = vec![false; count];
        for &(c, joint) in &inside {
            me.bits[c * words + joint as usize / 64] |= 1 << (joint % 64);
            has_inside[c] = true;
        }
        // 2. A part with no bone inside (a flat plate, an open sheet: a wing, a hair card) is an accessory
        //    attached at a joint: it takes the one bone that comes nearest to its vertices (ties: the joint
        //    whose pivot is nearest, then the lower index).
        me.has_inside = has_inside.clone();
        if has_inside.iter().all(|&x| x) {
            return me;
        }
        let pivots = pivots_of(index.segments());
        // Per part: (bone distance, pivot distance, joint) of the best joint so far.
        let mut best: Vec<(f32, f32, u16)> = vec![(f32::INFINITY, f32::INFINITY, 0); count];
        for (v, p) in positions.iter().enumerate() {
            let c = surface.part_of(v) as usize;
            if has_inside[c] {
                continue;
            }
            for s in index.segments() {
                let (q, d) = s.closest(*p);
                // Where a bone reaches the part only at its child's pivot, the child is what is attached there.
                let joint = if s.kind.to_child() && q == s.b {
                    pivots
                        .iter()
                        .find(|x| x.1 == s.b && x.0 != s.joint)
                        .map_or(s.joint, |x| x.0)
                } else {
                    s.joint
                };
                let pd = pivots
                    .iter()
                    .find(|x| x.0 == joint)
                    .map_or(f32::INFINITY, |x| p.distance_squared(x.1));
                let key = (d, pd, joint);
                let b = best[c];
                if key.0 < b.0 || (key.0 == b.0 && (key.1 < b.1 || (key.1 == b.1 && key.2 < b.2))) {
                    best[c] = key;
                }
            }
        }
        for (c, &(d, _, j)) in best.iter().enumerate() {
            if !has_inside[c] && d.is_finite() {
                me.bits[c * words + j as usize / 64] |= 1 << (j % 64);
            }
        }
        me
    }

    /// Allow no bone in `part`.
    fn clear_part(&mut self, part: usize) {
        self.bits[part * self.words..(part + 1) * self.words].fill(0);
    }

    /// Take `joint` off every part with a bone inside, and give it to `part` (a bone that lies in a plate: see
    /// [`plates::plate_bones`]); other plates keep it if they had it.
    fn confine(&mut self, joint: u16, part: usize) {
        let (word, bit) = (joint as usize / 64, 1u64 << (joint % 64));
        for (c, inside) in self.has_inside.iter().enumerate() {
            if c == part {
                self.bits[c * self.words + word] |= bit;
            } else if *inside {
                self.bits[c * self.words + word] &= !bit;
            }
        }
    }

    #[inline]
    fn allows(&self, part: u32, joint: u16) -> bool {
        self.bits
            .get(part as usize * self.words + joint as usize / 64)
            .is_some_and(|w| w & (1 << (joint % 64)) != 0)
    }
}

/// Each joint's pivot: the start of its first segment (every segment of a joint starts at its pivot, except
/// a box leaf's, which starts at the box end nearer the pivot).
fn pivots_of(segments: &[Segment]) -> Vec<(u16, Vec3)> {
    let mut out: Vec<(u16, Vec3)> = Vec::new();
    for s in segments {
        if out.last().is_none_or(|l| l.0 != s.joint) {
            out.push((s.joint, s.a));
        }
    }
    out
}

/// `w = (normalise(w) + normalise(v)) / 2`, merged by joint.
fn blend_half(w: &mut Vec<(u16, f32)>, v: &[(u16, f32)]) {
    let sw: f32 = w.iter().map(|x| x.1).sum();
    let sv: f32 = v.iter().map(|x| x.1).sum();
    if sw > 0.0 {
        w.iter_mut().for_each(|x| x.1 *= 0.5 / sw);
    }
    for &(j, x) in v {
        let add = if sv > 0.0 { 0.5 * x / sv } else { 0.0 };
        match w.iter_mut().find(|y| y.0 == j) {
            Some(y) => y.1 += add,
            None => w.push((j, add)),
        }
    }
}

/// The containment volumes a bind with `opts` would use (for drawing and editing them): each joint's radius, and
/// every segment scaled by its joint's length scale, in bind-pose world space, as (joint, a, b). Leaf segments
/// are the skeleton's own (not extended to the surface, which only the bind's own pass does).
pub fn joint_volumes(
    skel: &Skeleton,
    bind_world: &[Mat4],
    positions: &[Vec3],
    opts: &BindOptions,
) -> (Vec<f32>, Vec<(u16, Vec3, Vec3)>) {
    if bind_world.len() != skel.len() {
        return (Vec::new(), Vec::new());
    }
    let segments = bone_segments(skel, bind_world);
    let index = BoneIndex::new(&segments);
    let v = build_volumes(skel, bind_world, &segments, &index, positions, opts);
    let segs = v.index.segments().iter().map(|s| (s.joint, s.a, s.b)).collect();
    (v.radius, segs)
}

fn build_volumes(
    skel: &Skeleton,
    bind_world: &[Mat4],
    segments: &[Segment],
    index: &BoneIndex,
    positions: &[Vec3],
    opts: &BindOptions,
) -> Volumes {
    let n = skel.len();
    let setting = |j: usize| opts.volumes.get(j).copied().unwrap_or_default();
    // Scaled segments about each bone's pivot.
    let scaled: Vec<Segment> = segments
        .iter()
        .map(|s| {
            let k = setting(s.joint as usize).length_scale.max(0.0);
            let pivot = bind_world.get(s.joint as usize).map_or(s.a, |m| m.w_axis.truncate());
            Segment {
                a: pivot + (s.a - pivot) * k,
                b: pivot + (s.b - pivot) * k,
                ..*s
            }
        })
        .collect();
    // Auto radius from the box, else from the mesh around the bone.
    let mut radius: Vec<Option<f32>> = (0..n)
        .map(|j| {
            setting(j).radius.or_else(|| {
                let joint = &skel.joints()[j];
                joint.box_min.zip(joint.box_max).map(|_| {
                    let (lo, hi) = joint.bounds();
                    let mut e = (hi - lo).to_array();
                    e.sort_by(f32::total_cmp);
                    0.5 * e[1]
                })
            })
        })
        .collect();
    if radius.iter().any(|r| r.is_none_or(|r| r <= 0.0)) {
        // Nearest bone of every vertex, in parallel; the median distance per joint.
        let nearest: Vec<(u16, f32)> = positions
            .par_chunks(4096)
            .flat_map_iter(|chunk| {
                let mut scratch = Scratch::default();
                let mut cands = Vec::new();
                chunk
                    .iter()
                    .map(|&p| {
                        index.near_bones(p, 1.0 + f32::EPSILON, &mut scratch, &mut cands);
                        cands.first().map_or((u16::MAX, 0.0), |c| (c.joint, c.dist))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut per_joint: Vec<Vec<f32>> = vec![Vec::new(); n];
        for (j, d) in nearest {
            if let Some(v) = per_joint.get_mut(j as usize) {
                v.push(d);
            }
        }
        let bone_len: Vec<f32> = (0..n)
            .map(|j| {
                segments
                    .iter()
                    .filter(|s| s.joint as usize == j)
                    .map(Segment::length)
                    .fold(0.0, f32::max)
            })
            .collect();
        for (j, r) in radius.iter_mut().enumerate() {
            if r.is_none_or(|r| r <= 0.0) {
                let ds = &mut per_joint[j];
                *r = Some(if ds.is_empty() {
                    0.25 * bone_len[j]
                } else {
                    ds.sort_by(f32::total_cmp);
                    1.25 * ds[ds.len() / 2]
                });
            }
        }
    }
    let radius: Vec<f32> = radius.into_iter().map(|r| r.unwrap_or(0.0).max(0.0)).collect();
    let max_radius = radius.iter().copied().fold(0.0, f32::max);
    Volumes {
        index: BoneIndex::new(&scaled),
        radius,
        max_radius,
        shape: opts.volume_shape,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parallel sorting of triangles into parts, over several blocks, against a sequential pass: input
    /// order within each part, triangles with a corner out of range left out.
    #[test]
    fn part_triangles_keep_input_order_across_blocks() {
        let mut x: u32 = 12_345;
        let mut next = |m: u32| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 8) % m
        };
        let vertices = 5000u32;
        let part: Vec<u32> = (0..vertices).map(|v| (v / 7) % 4).collect();
        let triangles: Vec<[u32; 3]> = (0..100_000)
            .map(|_| [next(vertices + 3), next(vertices), next(vertices + 3)])
            .collect();
        let mut want = vec![Vec::new(); 4];
        for t in &triangles {
            if t.iter().all(|&i| i < vertices) {
                want[part[t[0] as usize] as usize].push(*t);
            }
        }
        assert!(want.iter().all(|w| w.len() > 20_000));
        let split = |triangles: &[[u32; 3]]| {
            let (tris, starts) = part_triangles(triangles, &part, 4);
            let got: Vec<Vec<[u32; 3]>> = starts.windows(2).map(|r| tris[r[0]..r[1]].to_vec()).collect();
            (got, matches!(tris, std::borrow::Cow::Borrowed(_)))
        };
        assert_eq!(split(&triangles), (want.clone(), false));
        // Listed part after part already (out-of-range triangles left out first): the input is used as it is,
        // with the same answer, empty parts included; one triangle out of order, or one out of range, and it
        // is sorted out again.
        let sorted: Vec<[u32; 3]> = want.concat();
        assert_eq!(split(&sorted), (want.clone(), true));
        let no_part_2: Vec<[u32; 3]> = [&want[0][..], &want[1][..], &want[3][..]].concat();
        let mut want_no_2 = want.clone();
        want_no_2[2].clear();
        assert_eq!(split(&no_part_2), (want_no_2, true));
        let mut swapped = sorted.clone();
        let last = swapped.len() - 1;
        swapped.swap(0, last);
        assert!(!split(&swapped).1);
        let mut stray = sorted.clone();
        stray.insert(30_000, [0, 1, vertices]);
        assert_eq!(split(&stray), (want, false));
        assert_eq!(split(&[]), (vec![Vec::new(); 4], true));
    }

    #[test]
    fn joint_volumes_take_the_set_radius_the_box_or_the_mesh_and_scale_segments() {
        let s = crate::sample::make_sample(crate::sample::SampleKind::Arm, 400).unwrap();
        let bind = crate::model::world_from_joint(&s.skeleton, &crate::model::Pose::from_file(&s.skeleton));
        let mut opts = BindOptions::default();
        let (r0, seg0) = joint_volumes(&s.skeleton, &bind, s.skin.positions(), &opts);
        assert_eq!(r0.len(), s.skeleton.len());
        assert!(r0.iter().all(|r| r.is_finite() && *r > 0.0), "{r0:?}");
        opts.volumes = vec![JointVolume::default(); s.skeleton.len()];
        opts.volumes[1] = JointVolume {
            radius: Some(0.125),
            length_scale: 2.0,
        };
        let (r1, seg1) = joint_volumes(&s.skeleton, &bind, s.skin.positions(), &opts);
        assert_eq!(r1[1], 0.125);
        let pivot = bind[1].w_axis.truncate();
        for ((j, a0, b0), (_, a1, b1)) in seg0.iter().zip(&seg1) {
            if *j == 1 {
                assert!((pivot + (*b0 - pivot) * 2.0 - *b1).length() < 1e-5 && (*a0 - *a1).length() < 1e-5);
            }
        }
        assert_eq!(
            joint_volumes(&s.skeleton, &bind[..1], s.skin.positions(), &opts).0,
            Vec::<f32>::new()
        );
    }

    /// The baseline and x86-64-v3 copies of the hot loops (`crate::simd`) give the same weights, bit for bit.
    #[test]
    fn both_instruction_sets_give_the_same_weights_bit_for_bit() {
        use crate::sample::{SampleKind, make_sample};
        let _switch = crate::simd::SWITCH.lock().unwrap_or_else(|e| e.into_inner());
        if !crate::simd::detect() {
            println!("notice: no x86-64-v3 on this processor; only the baseline copies are tested");
        }
        for (kind, n) in [(SampleKind::Creature, 4000), (SampleKind::Arm, 1500)] {
            let s = make_sample(kind, n).unwrap();
            let bind = crate::model::world_from_joint(&s.skeleton, &crate::model::Pose::from_file(&s.skeleton));
            let run = |portable: bool| {
                crate::simd::set_portable(portable);
                let opts = BindOptions::default();
                bind_weights(
                    &s.skeleton,
                    &bind,
                    s.skin.positions(),
                    s.skin.triangles(),
                    &opts,
                    &|_| {},
                )
                .unwrap()
                .0
            };
            let (a, b) = (run(true), run(false));
            crate::simd::set_portable(false);
            assert_eq!(a.len(), s.skin.positions().len());
            for v in 0..a.len() {
                let ((ja, wa), (jb, wb)) = (a.row(v), b.row(v));
                assert_eq!(ja, jb, "{kind:?} vertex {v}");
                let bits = |w: &[f32]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(wa), bits(wb), "{kind:?} vertex {v}");
            }
        }
    }

    #[test]
    fn whole_powers_equal_the_library_routine_bit_for_bit() {
        for n in -64..=64 {
            for x in [
                0.0f32,
                1.0,
                1.0 + f32::EPSILON,
                1.3,
                1.79,
                2.0,
                3.7,
                1e-3,
                1e3,
                0.999,
                f32::MAX,
                f32::NAN,
            ] {
                let (ours, lib) = (powi(x, n), x.powi(n));
                assert!(
                    ours.to_bits() == lib.to_bits() || (ours.is_nan() && lib.is_nan()),
                    "{x}^{n}: {ours} vs {lib}"
                );
            }
        }
    }

    #[test]
    fn line_weights_fall_off_smoothly_to_the_blend_ratio() {
        let c = |joint, dist| Candidate {
            joint,
            dist,
            closest: Vec3::ZERO,
        };
        let mut w = Vec::new();
        line_weights(&[c(3, 1.0), c(1, 1.5), c(0, 1.7), c(2, 1.99)], 2.0, 2.0, &mut w);
        // r = 1.5: 1.5^-2 * (1 - smoothstep(0.5)) = 0.4444 * 0.5; r = 1.7: 1.7^-2 * (1 - smoothstep(0.7))
        // = 0.346 * 0.216; r = 1.99 is under 1% and dropped.
        assert_eq!(w[0], (3, 1.0));
        assert!((w[1].1 - 0.5 / 2.25).abs() < 1e-6);
        assert!((w[2].1 - (1.0 - 0.7f32 * 0.7 * (3.0 - 1.4)) / 2.89).abs() < 1e-6);
        assert_eq!(w.len(), 3);
        limit_and_normalise(&mut w, 2, false);
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].0, w[1].0), (1, 3), "sorted by joint after limiting");
        assert!((w[0].1 + w[1].1 - 1.0).abs() < 1e-6);
    }
}
