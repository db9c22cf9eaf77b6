//! Whether a skin's bindings belong to a skeleton: a binding is its joint's world matrix at bind time, so each
//! joint of the skeleton the skin is posed by should sit where the binding of its index puts it. A `.skel` with
//! as many joints as the skin's bindings but in another order (wasp2.skel over wasp.skin: its legs at other
//! indices) passes the count check and moves the weights onto the wrong joints; these functions find that, and
//! the renumbering that puts every joint back on its binding, by name or by place.
//!
//! A joint "sits" at its binding when its pivot, in the skeleton's file pose or at rest (whichever more joints
//! sit in), moved so that the first root meets its binding (the course's tube.skin was bound half a unit below
//! tube.skel's root), is within [`PLACE_TOLERANCE`] of the size of the bindings' pivots of the binding's
//! translation. Rotations are not compared: a joint's own rotation turns its children, not its pivot.

use glam::{Mat4, Vec3};

use crate::model::{Pose, Skeleton, world_from_joint};

/// Distance, as a share of the bindings' pivots' bounding diagonal, within which a joint sits at its binding.
pub const PLACE_TOLERANCE: f32 = 0.01;

/// How a skeleton's joints sit against a skin's bindings (same count).
#[derive(Clone, Debug, PartialEq)]
pub struct BindMatch {
    /// Joints that do not sit where the binding of their index puts them, ascending.
    pub misplaced: Vec<usize>,
    /// The distance within which a joint counts as sitting at its binding.
    pub tolerance: f32,
    /// Per binding index, the skeleton joint that sits at it when every binding has exactly one such joint and
    /// every joint one binding (a renumbering by place); `None` otherwise.
    pub by_place: Option<Vec<usize>>,
}

impl BindMatch {
    /// Whether every joint sits at its binding.
    pub fn fits(&self) -> bool {
        self.misplaced.is_empty()
    }
}

/// The skeleton's pivots in its file pose and at rest.
fn pivots(skel: &Skeleton) -> [Vec<Vec3>; 2] {
    [Pose::from_file(skel), Pose::zero(skel)]
        .map(|p| world_from_joint(skel, &p).iter().map(|m| m.w_axis.truncate()).collect())
}

/// How `skel`'s joints sit against `bindings`; `None` when the counts differ (the skin is another skeleton's
/// outright, which [`super::check_rig`] reports).
pub fn match_bindings(skel: &Skeleton, bindings: &[Mat4]) -> Option<BindMatch> {
    if bindings.len() != skel.len() {
        return None;
    }
    let bound: Vec<Vec3> = bindings.iter().map(|m| m.w_axis.truncate()).collect();
    let (lo, hi) = bound.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), p| {
        (lo.min(*p), hi.max(*p))
    });
    let diagonal = if bound.is_empty() { 0.0 } else { (hi - lo).length() };
    let tolerance = (PLACE_TOLERANCE * diagonal).max(1e-6);
    let near = |a: Vec3, b: Vec3| a.distance(b) <= tolerance || !(a.is_finite() && b.is_finite());
    // Pivots moved so that the first roots meet, in the file pose and at rest.
    let placed: Vec<Vec<Vec3>> = pivots(skel)
        .into_iter()
        .map(|pivot| {
            let shift = match (bound.first(), pivot.first()) {
                (Some(b), Some(p)) => *b - *p,
                _ => Vec3::ZERO,
            };
            pivot.into_iter().map(|p| p + shift).collect()
        })
        .collect();
    let misplaced = placed
        .iter()
        .map(|pivot| {
            (0..skel.len())
                .filter(|&j| !near(pivot[j], bound[j]))
                .collect::<Vec<_>>()
        })
        .min_by_key(Vec::len)
        .unwrap_or_default();
    let by_place = placed.iter().find_map(|pivot| {
        let map: Option<Vec<usize>> = bound
            .iter()
            .map(|b| {
                let mut at = (0..skel.len()).filter(|&j| near(pivot[j], *b));
                match (at.next(), at.next()) {
                    (Some(j), None) => Some(j),
                    _ => None,
                }
            })
            .collect();
        map.filter(|m| is_permutation(m))
    });
    Some(BindMatch {
        misplaced,
        tolerance,
        by_place,
    })
}

/// Per joint of `old`, the joint of `new` with the same name, when every name is in both exactly once.
pub fn remap_by_name(old: &Skeleton, new: &Skeleton) -> Option<Vec<usize>> {
    if old.len() != new.len() {
        return None;
    }
    let map: Option<Vec<usize>> = old
        .joints()
        .iter()
        .map(|j| match new.find(&j.name).as_slice() {
            [k] if old.find(&j.name).len() == 1 => Some(*k),
            _ => None,
        })
        .collect();
    map.filter(|m| is_permutation(m))
}

/// Whether `map` sends `0..n` onto `0..n`, each once.
fn is_permutation(map: &[usize]) -> bool {
    let mut seen = vec![false; map.len()];
    map.iter()
        .all(|&k| k < seen.len() && !std::mem::replace(&mut seen[k], true))
}

/// The bindings renumbered by `map` (binding index -> joint): joint `map[i]` gets binding `i`.
pub fn renumber_bindings(bindings: &[Mat4], map: &[usize]) -> Vec<Mat4> {
    let mut out = bindings.to_vec();
    for (i, &k) in map.iter().enumerate() {
        if let (Some(slot), Some(b)) = (out.get_mut(k), bindings.get(i)) {
            *slot = *b;
        }
    }
    out
}

/// A one-line account for a warning: how many joints are misplaced and the first few names.
pub fn describe_misplaced(skel: &Skeleton, m: &BindMatch) -> String {
    const SHOWN: usize = 4;
    let names: Vec<&str> = m
        .misplaced
        .iter()
        .take(SHOWN)
        .filter_map(|&j| skel.joint(j).map(|j| j.name.as_str()))
        .collect();
    let more = m.misplaced.len().saturating_sub(SHOWN);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "{} of {} joints do not sit where the skin's bindings put them ({}{more})",
        m.misplaced.len(),
        skel.len(),
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Joint;

    /// A root with two children, left (+x) and right (-x), named `names`.
    fn skel(names: [&str; 3], left_first: bool) -> Skeleton {
        let (a, b) = if left_first {
            (Vec3::X, -Vec3::X)
        } else {
            (-Vec3::X, Vec3::X)
        };
        Skeleton::new(vec![
            Joint::new(names[0], None, Vec3::ZERO),
            Joint::new(names[1], Some(0), a),
            Joint::new(names[2], Some(0), b),
        ])
        .unwrap()
    }

    fn bindings_of(s: &Skeleton) -> Vec<Mat4> {
        world_from_joint(s, &Pose::from_file(s))
    }

    #[test]
    fn a_skeleton_with_its_joints_at_other_indices_is_found_and_renumbered_by_name_and_by_place() {
        let bound = skel(["root", "left", "right"], true);
        let bindings = bindings_of(&bound);
        let same = match_bindings(&bound, &bindings).unwrap();
        assert!(same.fits());
        assert_eq!(same.by_place, Some(vec![0, 1, 2]));
        // The same joints, right before left: both children misplaced.
        let swapped = skel(["root", "right", "left"], false);
        let m = match_bindings(&swapped, &bindings).unwrap();
        assert_eq!(m.misplaced, vec![1, 2]);
        assert_eq!(m.by_place, Some(vec![0, 2, 1]));
        assert_eq!(remap_by_name(&bound, &swapped), Some(vec![0, 2, 1]));
        // Renumbered, every joint sits at its binding.
        let renumbered = renumber_bindings(&bindings, m.by_place.as_ref().unwrap());
        assert!(match_bindings(&swapped, &renumbered).unwrap().fits());
        assert_eq!(
            describe_misplaced(&swapped, &m),
            "2 of 3 joints do not sit where the skin's bindings put them (right, left)"
        );
        // Other counts are another check's business.
        assert_eq!(match_bindings(&swapped, &bindings[..2]), None);
    }

    #[test]
    fn no_renumbering_when_names_repeat_or_two_joints_share_a_place() {
        let a = skel(["root", "side", "side"], true);
        assert_eq!(remap_by_name(&a, &a), None);
        let stacked = Skeleton::new(vec![
            Joint::new("root", None, Vec3::ZERO),
            Joint::new("a", Some(0), Vec3::X),
            Joint::new("b", Some(0), Vec3::X),
        ])
        .unwrap();
        let m = match_bindings(&stacked, &bindings_of(&stacked)).unwrap();
        assert!(m.fits());
        assert_eq!(m.by_place, None);
    }
}
