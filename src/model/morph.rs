//! Morph targets (CSE169, "Facial animation" lecture): sparse absolute positions and normals for some vertices.
//!
//! Applying a target with weight `w` moves each listed vertex from its base value `b` to `b + w * (t - b)`;
//! several targets add their differences. Normals are blended the same way and renormalised.

use glam::Vec3;

use super::skin::Skin;

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Morph {
    pub positions: Vec<(u32, Vec3)>,
    pub normals: Vec<(u32, Vec3)>,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("the morph moves vertex {index}, but the skin has {vertices} vertices")]
pub struct MorphError {
    pub index: u32,
    pub vertices: usize,
}

impl Morph {
    /// The largest vertex index the target names.
    pub fn max_index(&self) -> Option<u32> {
        self.positions.iter().chain(&self.normals).map(|(i, _)| *i).max()
    }
}

/// Positions and normals of `skin` with `targets` applied at their weights.
pub fn apply_morphs(skin: &Skin, targets: &[(&Morph, f32)]) -> Result<(Vec<Vec3>, Vec<Vec3>), MorphError> {
    let base_p = skin.positions();
    let base_n = skin.normals();
    let mut p = base_p.to_vec();
    let mut n = base_n.to_vec();
    let mut touched = vec![false; n.len()];
    for (m, w) in targets {
        for (list, out, base) in [(&m.positions, &mut p, base_p), (&m.normals, &mut n, base_n)] {
            for &(i, t) in list.iter() {
                let k = i as usize;
                let (Some(o), Some(b)) = (out.get_mut(k), base.get(k)) else {
                    return Err(MorphError {
                        index: i,
                        vertices: base_p.len(),
                    });
                };
                *o += *w * (t - *b);
            }
        }
        for &(i, _) in &m.normals {
            touched[i as usize] = true;
        }
    }
    for (v, t) in n.iter_mut().zip(&touched) {
        if *t {
            *v = v.try_normalize().unwrap_or(*v);
        }
    }
    Ok((p, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_blend_by_weight_and_add() {
        let skin = Skin::new(vec![Vec3::ZERO, Vec3::X], Some(vec![Vec3::Z, Vec3::Z]), vec![]).unwrap();
        let a = Morph {
            positions: vec![(0, Vec3::new(0.0, 2.0, 0.0))],
            normals: vec![(0, Vec3::X)],
        };
        let b = Morph {
            positions: vec![(0, Vec3::new(4.0, 0.0, 0.0))],
            normals: vec![],
        };
        let (p, n) = apply_morphs(&skin, &[(&a, 0.5), (&b, 0.25)]).unwrap();
        assert_eq!(p, vec![Vec3::new(1.0, 1.0, 0.0), Vec3::X]);
        assert!((n[0] - Vec3::new(1.0, 0.0, 1.0).normalize()).length() < 1e-6);
        assert_eq!(n[1], Vec3::Z);
        let bad = Morph {
            positions: vec![(2, Vec3::ZERO)],
            normals: vec![],
        };
        assert_eq!(
            apply_morphs(&skin, &[(&bad, 1.0)]),
            Err(MorphError { index: 2, vertices: 2 })
        );
    }
}
