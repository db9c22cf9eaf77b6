//! A skin: the mesh, its per-vertex weights and its bindings (CSE169, "Skinning" lecture).
//!
//! Conventions: a binding is the joint's WORLD matrix at bind time (`world_from_joint` in the bind pose), not
//! its inverse; the skinning matrix is `M_i = world_from_joint_i * inverse(binding_i)`. Triangles are
//! counter-clockwise seen from outside (the course convention; real files do not always follow it). Normals are
//! unit length when computed here; normals read from a file are kept as written (triangle.skin's are not unit).

use glam::{Mat4, Vec2, Vec3};

use super::weights::Weights;

/// A `material NAME { ... }` block, kept as its lines of words so that it can be written back.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Material {
    pub name: String,
    pub lines: Vec<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SkinError {
    #[error("{what} has {found} entries but the skin has {expected} vertices")]
    Count {
        what: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("triangle {triangle} uses vertex {index}, but the skin has {vertices} vertices")]
    Index {
        triangle: usize,
        index: u32,
        vertices: usize,
    },
    #[error("{what} {index} is not finite")]
    NotFinite { what: &'static str, index: usize },
}

/// A mesh with optional weights and bindings. Fields are private so the counts always agree.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Skin {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    normals_computed: bool,
    texcoords: Option<Vec<Vec2>>,
    triangles: Vec<[u32; 3]>,
    weights: Option<Weights>,
    bindings: Option<Vec<Mat4>>,
    materials: Vec<Material>,
}

impl Skin {
    /// A bare mesh. Normals are computed (area-weighted) when `normals` is `None`.
    pub fn new(positions: Vec<Vec3>, normals: Option<Vec<Vec3>>, triangles: Vec<[u32; 3]>) -> Result<Self, SkinError> {
        let n = positions.len();
        if !all_finite(&positions) {
            if let Some(i) = positions.iter().position(|p| !p.is_finite()) {
                return Err(SkinError::NotFinite {
                    what: "position",
                    index: i,
                });
            }
        }
        // PERF: the largest index first (a loop without branches); the search only when it is out of range.
        let max_index = triangles.iter().flatten().fold(0u32, |m, &i| m.max(i));
        if !triangles.is_empty() && max_index as usize >= n {
            for (t, tri) in triangles.iter().enumerate() {
                if let Some(&index) = tri.iter().find(|&&i| i as usize >= n) {
                    return Err(SkinError::Index {
                        triangle: t,
                        index,
                        vertices: n,
                    });
                }
            }
        }
        let (normals, normals_computed) = match normals {
            Some(nr) => {
                if nr.len() != n {
                    return Err(SkinError::Count {
                        what: "normals",
                        expected: n,
                        found: nr.len(),
                    });
                }
                if !all_finite(&nr) {
                    if let Some(i) = nr.iter().position(|p| !p.is_finite()) {
                        return Err(SkinError::NotFinite {
                            what: "normal",
                            index: i,
                        });
                    }
                }
                (nr, false)
            }
            None => (area_weighted_normals(&positions, &triangles), true),
        };
        Ok(Self {
            positions,
            normals,
            normals_computed,
            texcoords: None,
            triangles,
            weights: None,
            bindings: None,
            materials: Vec::new(),
        })
    }

    pub fn with_weights(mut self, weights: Option<Weights>) -> Result<Self, SkinError> {
        self.set_weights(weights)?;
        Ok(self)
    }

    pub fn set_weights(&mut self, weights: Option<Weights>) -> Result<(), SkinError> {
        if let Some(w) = &weights {
            if w.len() != self.positions.len() {
                return Err(SkinError::Count {
                    what: "skinweights",
                    expected: self.positions.len(),
                    found: w.len(),
                });
            }
        }
        self.weights = weights;
        Ok(())
    }

    pub fn set_bindings(&mut self, bindings: Option<Vec<Mat4>>) -> Result<(), SkinError> {
        if let Some(b) = &bindings {
            if let Some(i) = b.iter().position(|m| !m.is_finite()) {
                return Err(SkinError::NotFinite {
                    what: "binding",
                    index: i,
                });
            }
        }
        self.bindings = bindings;
        Ok(())
    }

    pub fn set_texcoords(&mut self, texcoords: Option<Vec<Vec2>>) -> Result<(), SkinError> {
        if let Some(t) = &texcoords {
            if t.len() != self.positions.len() {
                return Err(SkinError::Count {
                    what: "texcoords",
                    expected: self.positions.len(),
                    found: t.len(),
                });
            }
            if let Some(i) = t.iter().position(|p| !p.is_finite()) {
                return Err(SkinError::NotFinite {
                    what: "texcoord",
                    index: i,
                });
            }
        }
        self.texcoords = texcoords;
        Ok(())
    }

    pub fn set_materials(&mut self, materials: Vec<Material>) {
        self.materials = materials;
    }

    pub fn positions(&self) -> &[Vec3] {
        &self.positions
    }
    pub fn normals(&self) -> &[Vec3] {
        &self.normals
    }
    /// True when the file had no normals and they were computed.
    pub fn normals_computed(&self) -> bool {
        self.normals_computed
    }
    pub fn texcoords(&self) -> Option<&[Vec2]> {
        self.texcoords.as_deref()
    }
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }
    pub fn weights(&self) -> Option<&Weights> {
        self.weights.as_ref()
    }
    pub fn bindings(&self) -> Option<&[Mat4]> {
        self.bindings.as_deref()
    }
    pub fn materials(&self) -> &[Material] {
        &self.materials
    }
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Axis-aligned bounds of the positions, `None` for an empty mesh.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        bounds(&self.positions)
    }

    /// Replace positions and normals (a morph, or a deformed copy); counts must stay the same.
    pub fn set_geometry(&mut self, positions: Vec<Vec3>, normals: Vec<Vec3>) -> Result<(), SkinError> {
        for (what, v) in [("positions", &positions), ("normals", &normals)] {
            if v.len() != self.positions.len() {
                return Err(SkinError::Count {
                    what,
                    expected: self.positions.len(),
                    found: v.len(),
                });
            }
        }
        self.positions = positions;
        self.normals = normals;
        Ok(())
    }

    /// Approximate heap memory held, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.positions.capacity() * 12
            + self.normals.capacity() * 12
            + self.texcoords.as_ref().map_or(0, |t| t.capacity() * 8)
            + self.triangles.capacity() * 12
            + self.weights.as_ref().map_or(0, Weights::heap_bytes)
            + self.bindings.as_ref().map_or(0, |b| b.capacity() * 64)
    }
}

/// Axis-aligned bounds of points, `None` when there are none.
pub fn bounds(points: &[Vec3]) -> Option<(Vec3, Vec3)> {
    let first = *points.first()?;
    Some(
        points
            .iter()
            .fold((first, first), |(lo, hi), p| (lo.min(*p), hi.max(*p))),
    )
}

/// Vertex normals as the sum of adjacent triangles' cross products (each proportional to twice the
/// triangle's area), normalised. A vertex on no triangle, or only on degenerate ones, gets +Y.
pub fn area_weighted_normals(positions: &[Vec3], triangles: &[[u32; 3]]) -> Vec<Vec3> {
    let mut acc = vec![Vec3::ZERO; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| i as usize);
        let (Some(pa), Some(pb), Some(pc)) = (positions.get(a), positions.get(b), positions.get(c)) else {
            continue;
        };
        let n = (*pb - *pa).cross(*pc - *pa);
        acc[a] += n;
        acc[b] += n;
        acc[c] += n;
    }
    acc.into_iter().map(|n| n.try_normalize().unwrap_or(Vec3::Y)).collect()
}

/// Every component of every point is finite. PERF: without an early exit, so that it vectorises: the loaded
/// 1M-vertex skin's checks took longer than cleaning its weights.
fn all_finite(points: &[Vec3]) -> bool {
    const EXPONENT: u32 = 0x7f80_0000;
    let not_finite = |x: f32| (x.to_bits() & EXPONENT == EXPONENT) as u32;
    points
        .iter()
        .fold(0u32, |bad, p| bad | not_finite(p.x) | not_finite(p.y) | not_finite(p.z))
        == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normals_of_a_tetrahedron_corner_weight_faces_by_area() {
        // Right-angle corner at the origin: one big face (area 2) and one small (area 0.5) meeting there.
        let p = vec![
            Vec3::ZERO,
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(0.0, 2.0, 0.0),
            Vec3::new(0.0, 0.0, 1.0),
        ];
        let t = vec![[0, 1, 2], [0, 3, 1]];
        let n = area_weighted_normals(&p, &t);
        // Face 0 normal (0,0,4), face 1 normal (0,2,0): sum (0,2,4) normalised.
        let want = Vec3::new(0.0, 2.0, 4.0).normalize();
        assert!((n[0] - want).length() < 1e-6);
        assert_eq!(n[2], Vec3::Z);
    }

    #[test]
    fn new_rejects_out_of_range_triangles() {
        let e = Skin::new(vec![Vec3::ZERO; 2], None, vec![[0, 1, 2]]).unwrap_err();
        assert_eq!(
            e,
            SkinError::Index {
                triangle: 0,
                index: 2,
                vertices: 2
            }
        );
    }
}
