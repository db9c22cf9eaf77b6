//! The posed surface the brush sees: the skin's positions and normals skinned on the CPU in the current pose
//! (the GPU's result is not read back), and a triangle BVH over them for ray casts from the mouse. Built when
//! painting needs it and again only when the pose or the mesh changes.

use glam::Vec3;

use super::document::Document;
use crate::deform::{Method, pose_skin};
use crate::model::Pose;
use crate::paint::brush::PointIndex;
use crate::spatial::bvh::TriangleBvh;

/// Where a ray meets the posed surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceHit {
    pub point: Vec3,
    /// The triangle's unit normal, facing the ray's origin.
    pub normal: Vec3,
    pub triangle: u32,
    /// The hit triangle's corner nearest the point.
    pub vertex: u32,
}

pub struct PosedSurface {
    generation: u64,
    weights_version: u64,
    pose: Pose,
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    bvh: TriangleBvh,
    /// The brush's k-d tree over `positions`, built the first time a brush needs it.
    index: Option<PointIndex>,
}

impl PosedSurface {
    /// The document's skin in its current pose; None without a skin or weights that fit the skeleton.
    pub fn build(doc: &Document) -> Option<Self> {
        let skin = doc.skin.as_ref()?;
        let bind = Pose::from_file(&doc.skeleton);
        let (positions, normals) = match skin.weights() {
            Some(_) => pose_skin(&doc.skeleton, skin, &doc.pose, &bind, Method::Linear).ok()?,
            None => (skin.positions().to_vec(), skin.normals().to_vec()),
        };
        let triangles = skin.triangles().to_vec();
        let bvh = TriangleBvh::new_linear(&positions, &triangles);
        Some(Self {
            generation: doc.generation,
            weights_version: doc.weights_version,
            pose: doc.pose.clone(),
            positions,
            normals,
            triangles,
            bvh,
            index: None,
        })
    }

    /// Whether this surface still shows `doc` (same mesh and weights, same pose).
    pub fn is_current(&self, doc: &Document) -> bool {
        self.generation == doc.generation && self.weights_version == doc.weights_version && self.pose == doc.pose
    }

    /// Keep `surface` current for `doc`: rebuild it only when the pose or the mesh changed.
    pub fn refresh(surface: &mut Option<Self>, doc: &Document) {
        if surface.as_ref().is_none_or(|s| !s.is_current(doc)) {
            *surface = Self::build(doc);
        }
    }

    /// Positions, normals and the point index (built now if it is not yet), for a brush dab.
    pub fn parts_for_brush(&mut self) -> (&[Vec3], &[Vec3], &PointIndex) {
        let index = self.index.get_or_insert_with(|| PointIndex::of(&self.positions));
        (&self.positions, &self.normals, index)
    }

    /// The nearest hit of the ray from `origin` along unit `dir`.
    pub fn ray_cast(&self, origin: Vec3, dir: Vec3) -> Option<SurfaceHit> {
        let hit = self.bvh.ray_cast(origin, dir, 0.0, f32::INFINITY)?;
        let [a, b, c] = *self.triangles.get(hit.triangle as usize)?;
        let (pa, pb, pc) = (
            self.positions[a as usize],
            self.positions[b as usize],
            self.positions[c as usize],
        );
        let point = origin + dir * hit.t;
        let mut normal = (pb - pa).cross(pc - pa).normalize_or_zero();
        if normal.dot(dir) > 0.0 {
            normal = -normal;
        }
        let vertex = [a, b, c]
            .into_iter()
            .min_by(|&x, &y| {
                let dx = (self.positions[x as usize] - point).length_squared();
                let dy = (self.positions[y as usize] - point).length_squared();
                dx.total_cmp(&dy).then(x.cmp(&y))
            })
            .unwrap_or(a);
        Some(SurfaceHit {
            point,
            normal,
            triangle: hit.triangle,
            vertex,
        })
    }
}

/// Where `vertices` of the document's skin are in its current pose (`world` = its joints' world matrices), by
/// linear blend skinning on the CPU: for drawing a selection, without skinning the whole mesh.
pub fn posed_points(doc: &Document, world: &[glam::Mat4], vertices: &[u32]) -> Vec<Vec3> {
    let Some(skin) = doc.skin.as_ref() else {
        return Vec::new();
    };
    let bind = crate::deform::bind_world_from_joint(&doc.skeleton, skin, &Pose::from_file(&doc.skeleton));
    let m = crate::deform::skinning_matrices(world, &bind);
    let positions = skin.positions();
    vertices
        .iter()
        .filter_map(|&v| {
            let p = *positions.get(v as usize)?;
            let Some(w) = skin.weights() else {
                return Some(p);
            };
            let (js, ws) = w.row(v as usize);
            Some(crate::deform::blend_row(js, ws, p, |j| {
                m.get(j).map(|m| m.transform_point3(p))
            }))
        })
        .collect()
}

/// The vertices whose projection lands in the box from `a` to `b` (view points) and whose normal faces the eye
/// (so a box selects what is seen, not the back of the mesh), ascending. `project` maps a world point to the
/// view, None behind the camera.
pub fn vertices_in_rect(
    positions: &[Vec3],
    normals: &[Vec3],
    eye: Vec3,
    project: impl Fn(Vec3) -> Option<glam::Vec2>,
    a: glam::Vec2,
    b: glam::Vec2,
) -> Vec<u32> {
    let (lo, hi) = (a.min(b), a.max(b));
    positions
        .iter()
        .enumerate()
        .filter(|&(v, p)| {
            let facing = normals.get(v).is_none_or(|n| n.dot(eye - *p) > 0.0);
            facing && project(*p).is_some_and(|s| s.x >= lo.x && s.x <= hi.x && s.y >= lo.y && s.y <= hi.y)
        })
        .map(|(v, _)| v as u32)
        .collect()
}

/// Combine a pick with a sorted selection.
pub fn combine_selection(current: &[u32], picked: &[u32], mode: super::viewport::SelectMode) -> Vec<u32> {
    use super::viewport::SelectMode;
    let mut picked = picked.to_vec();
    picked.sort_unstable();
    picked.dedup();
    match mode {
        SelectMode::Replace => picked,
        SelectMode::Add => {
            let mut out = current.to_vec();
            out.extend(picked);
            out.sort_unstable();
            out.dedup();
            out
        }
        SelectMode::Remove => current
            .iter()
            .copied()
            .filter(|v| picked.binary_search(v).is_err())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::SampleKind;

    #[test]
    fn a_box_selects_the_front_vertices_inside_it_and_combines_with_the_selection() {
        use super::super::viewport::SelectMode;
        use glam::Vec2;
        // Four vertices seen from +z: two face the eye, one faces away, one is outside the box.
        let positions = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.5, 0.5, 0.0),
            Vec3::new(5.0, 0.0, 0.0),
        ];
        let normals = [Vec3::Z, Vec3::Z, -Vec3::Z, Vec3::Z];
        let project = |p: Vec3| Some(Vec2::new(p.x * 10.0, p.y * 10.0));
        let eye = Vec3::new(0.0, 0.0, 10.0);
        let picked = vertices_in_rect(
            &positions,
            &normals,
            eye,
            project,
            Vec2::new(12.0, 8.0),
            Vec2::new(-1.0, -1.0),
        );
        assert_eq!(picked, vec![0, 1]);
        assert_eq!(combine_selection(&[3, 7], &picked, SelectMode::Replace), vec![0, 1]);
        assert_eq!(combine_selection(&[1, 3], &picked, SelectMode::Add), vec![0, 1, 3]);
        assert_eq!(combine_selection(&[0, 3, 9], &picked, SelectMode::Remove), vec![3, 9]);
    }

    #[test]
    fn a_ray_down_the_posed_tube_hits_its_surface_and_follows_the_pose() {
        let mut doc = Document::sample(SampleKind::Tube, 2000).expect("sample");
        let s = PosedSurface::build(&doc).expect("surface");
        // The tube (radius 0.25 around +y) seen from +z at height 0.5: the hit is on its front, z = 0.25.
        let hit = s.ray_cast(Vec3::new(0.0, 0.5, 5.0), -Vec3::Z).expect("hit");
        assert!((hit.point.z - 0.25).abs() < 0.01, "{hit:?}");
        assert!(hit.normal.z > 0.9);
        assert!((s.positions[hit.vertex as usize] - hit.point).length() < 0.1);
        assert!(s.is_current(&doc));
        // Bending the first joint moves the surface: the surface is stale until refreshed.
        let skel = doc.skeleton.clone();
        doc.pose.set_dof(&skel, 1, 0, 1.2);
        assert!(!s.is_current(&doc));
        let mut cache = Some(s);
        PosedSurface::refresh(&mut cache, &doc);
        let s = cache.expect("surface");
        assert!(s.is_current(&doc));
        let far = s.ray_cast(Vec3::new(0.0, 2.5, 5.0), -Vec3::Z);
        let before = PosedSurface::build(&Document::sample(SampleKind::Tube, 2000).expect("sample"))
            .expect("surface")
            .ray_cast(Vec3::new(0.0, 2.5, 5.0), -Vec3::Z);
        assert_ne!(
            far.map(|h| h.point),
            before.map(|h| h.point),
            "the bent tube is elsewhere"
        );
    }
}
