//! The posed surface the brush sees: the skin's positions and normals skinned on the CPU in the current pose
//! (the GPU's result is not read back), and a triangle BVH over them for ray casts from the mouse. Built when
//! painting needs it and again only when the pose or the mesh changes.

use glam::Vec3;

use super::document::Document;
use crate::deform::{Method, pose_skin};
use crate::model::Pose;
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
    pose: Pose,
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    bvh: TriangleBvh,
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
            pose: doc.pose.clone(),
            positions,
            normals,
            triangles,
            bvh,
        })
    }

    /// Whether this surface still shows `doc` (same mesh and weights, same pose).
    pub fn is_current(&self, doc: &Document) -> bool {
        self.generation == doc.generation && self.pose == doc.pose
    }

    /// Keep `surface` current for `doc`: rebuild it only when the pose or the mesh changed.
    pub fn refresh(surface: &mut Option<Self>, doc: &Document) {
        if surface.as_ref().is_none_or(|s| !s.is_current(doc)) {
            *surface = Self::build(doc);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::SampleKind;

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
