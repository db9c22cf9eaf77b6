//! Containment volumes (the volume and hybrid methods, step 4 of the `bind` module's doc): each joint's capsule
//! or ellipsoids around its segments, their radii (set, from the `.skel` box, or from the mesh), and how deep a
//! point lies in them; [`joint_volumes`] for the editor's view.

use glam::{Mat4, Vec3};
use rayon::prelude::*;

use super::bones::{Segment, bone_segments};
use super::nearest::{BoneIndex, Candidate, Scratch};
use super::{BindOptions, VolumeShape};
use crate::model::Skeleton;

/// The joints' containment volumes: their (length-scaled) segments, radius per joint, and shape.
pub(super) struct Volumes {
    index: BoneIndex,
    pub(super) radius: Vec<f32>,
    max_radius: f32,
    shape: VolumeShape,
}

impl Volumes {
    /// Containment depths of `p` among visible volumes, as (joint, depth > 0). `bones_within` is scratch space
    /// (the bones within the largest radius of `p`).
    pub(super) fn depths(
        &self,
        p: Vec3,
        scratch: &mut Scratch,
        bones_within: &mut Vec<Candidate>,
        visible: &dyn Fn(Vec3, Vec3) -> bool,
        out: &mut Vec<(u16, f32)>,
    ) {
        out.clear();
        self.index.within(p, self.max_radius, scratch, bones_within);
        for c in bones_within.iter() {
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

/// The volumes of the deforming bones' `segments` (`index` their near-bone index) for `opts`: segments scaled
/// about each bone's pivot, radii as the `bind` module's doc says.
pub(super) fn build_volumes(
    skel: &Skeleton,
    bind_world: &[Mat4],
    segments: &[Segment],
    index: &BoneIndex,
    positions: &[Vec3],
    opts: &BindOptions,
) -> Volumes {
    let mut radius = set_or_box_radii(skel, opts);
    if radius.iter().any(|r| r.is_none_or(|r| r <= 0.0)) {
        fill_radii_from_mesh(&mut radius, segments, index, positions);
    }
    let radius: Vec<f32> = radius.into_iter().map(|r| r.unwrap_or(0.0).max(0.0)).collect();
    let max_radius = radius.iter().copied().fold(0.0, f32::max);
    Volumes {
        index: BoneIndex::new(&scaled_segments(bind_world, segments, opts)),
        radius,
        max_radius,
        shape: opts.volume_shape,
    }
}

/// Each joint's volume setting (the default where `opts` has none).
fn setting(opts: &BindOptions, j: usize) -> super::JointVolume {
    opts.volumes.get(j).copied().unwrap_or_default()
}

/// `segments` scaled about each bone's pivot by its joint's length scale.
fn scaled_segments(bind_world: &[Mat4], segments: &[Segment], opts: &BindOptions) -> Vec<Segment> {
    segments
        .iter()
        .map(|s| {
            let k = setting(opts, s.joint as usize).length_scale.max(0.0);
            let pivot = bind_world.get(s.joint as usize).map_or(s.a, |m| m.w_axis.truncate());
            Segment {
                a: pivot + (s.a - pivot) * k,
                b: pivot + (s.b - pivot) * k,
                ..*s
            }
        })
        .collect()
}

/// Each joint's radius as set, else half the second-largest extent of its box; `None` for the others.
fn set_or_box_radii(skel: &Skeleton, opts: &BindOptions) -> Vec<Option<f32>> {
    (0..skel.len())
        .map(|j| {
            setting(opts, j).radius.or_else(|| {
                let joint = &skel.joints()[j];
                joint.box_min.zip(joint.box_max).map(|_| {
                    let (lo, hi) = joint.bounds();
                    let mut e = (hi - lo).to_array();
                    e.sort_by(f32::total_cmp);
                    0.5 * e[1]
                })
            })
        })
        .collect()
}

/// The radii still missing (or not positive), from the mesh around each bone: 1.25 times the median distance
/// to the bone of the vertices whose nearest bone it is, a quarter of the bone's length if it is nearest to none.
fn fill_radii_from_mesh(radius: &mut [Option<f32>], segments: &[Segment], index: &BoneIndex, positions: &[Vec3]) {
    let n = radius.len();
    // Nearest bone of every vertex, in parallel; the median distance per joint.
    let nearest: Vec<(u16, f32)> = positions
        .par_chunks(4096)
        .flat_map_iter(|chunk| {
            let mut scratch = Scratch::default();
            let mut nearest_bones = Vec::new();
            chunk
                .iter()
                .map(|&p| {
                    index.near_bones(p, 1.0 + f32::EPSILON, &mut scratch, &mut nearest_bones);
                    nearest_bones.first().map_or((u16::MAX, 0.0), |c| (c.joint, c.dist))
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

#[cfg(test)]
#[path = "volumes_tests.rs"]
mod tests;
