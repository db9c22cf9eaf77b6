//! How far fitted joints are from an artist's (`fit --reference`): each deforming joint of the reference,
//! matched by name, its distance as a percentage of the mesh's box diagonal, with the mean, the max and the worst
//! joint. Joints the reference gives no weight are controls and are not judged; joints without a namesake are
//! listed apart.

/// One judged joint.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct JointDistance {
    pub name: String,
    /// Distance as a percentage of the diagonal.
    pub percent: f32,
}

/// The judgement.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Measure {
    pub joints: Vec<JointDistance>,
    pub mean: f32,
    pub max: f32,
    /// The joint with the largest distance (the first of equals).
    pub worst: Option<String>,
    /// Deforming reference joints with no fitted joint of their name.
    pub unmatched: Vec<String>,
}

/// Judge `fitted` (name, world pivot) against `reference` (name, world pivot, deforming), as a percentage of
/// `diagonal`. Joints are matched by name (the first fitted joint of a name); the order is the reference's.
pub fn measure_fit(
    fitted: &[(String, glam::Vec3)],
    reference: &[(String, glam::Vec3, bool)],
    diagonal: f32,
) -> Measure {
    let scale = if diagonal > 0.0 && diagonal.is_finite() {
        100.0 / diagonal
    } else {
        0.0
    };
    let mut joints = Vec::new();
    let mut unmatched = Vec::new();
    for (name, at, deforms) in reference {
        if !deforms {
            continue;
        }
        match fitted.iter().find(|(n, _)| n == name) {
            Some((_, p)) => joints.push(JointDistance {
                name: name.clone(),
                percent: p.distance(*at) * scale,
            }),
            None => unmatched.push(name.clone()),
        }
    }
    let mean = if joints.is_empty() {
        0.0
    } else {
        joints.iter().map(|j| j.percent).sum::<f32>() / joints.len() as f32
    };
    let mut worst: Option<&JointDistance> = None;
    for j in &joints {
        if worst.is_none_or(|w| j.percent > w.percent) {
            worst = Some(j);
        }
    }
    Measure {
        mean,
        max: worst.map_or(0.0, |w| w.percent),
        worst: worst.map(|w| w.name.clone()),
        joints,
        unmatched,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn controls_are_not_judged_and_the_worst_is_named() {
        let fitted = vec![
            ("a".to_string(), Vec3::ZERO),
            ("b".to_string(), Vec3::new(0.0, 2.0, 0.0)),
            ("ctrl".to_string(), Vec3::splat(50.0)),
        ];
        let reference = vec![
            ("a".to_string(), Vec3::new(1.0, 0.0, 0.0), true),
            ("b".to_string(), Vec3::ZERO, true),
            ("ctrl".to_string(), Vec3::ZERO, false),
            ("gone".to_string(), Vec3::ZERO, true),
        ];
        let m = measure_fit(&fitted, &reference, 10.0);
        assert_eq!(m.joints.len(), 2);
        assert!((m.mean - 15.0).abs() < 1e-5 && (m.max - 20.0).abs() < 1e-5, "{m:?}");
        assert_eq!(m.worst.as_deref(), Some("b"));
        assert_eq!(m.unmatched, vec!["gone".to_string()]);
    }

    #[test]
    fn nothing_to_judge_is_zero() {
        let m = measure_fit(&[], &[], 0.0);
        assert_eq!((m.mean, m.max, m.worst), (0.0, 0.0, None));
    }
}
