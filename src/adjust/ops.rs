//! Per-vertex operations: prune small weights, limit the number of influences, normalise. Each keeps locked
//! joints' weights and leaves every weighted vertex summing to 1 (see [`normalise_row`]).

use super::rows::{Locks, RowFix, SUM_EXACT, map_rows, normalise_row};
use crate::model::{Row, Weights};

/// What a per-vertex operation did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RowReport {
    /// Influences removed.
    pub removed: usize,
    /// Vertices whose weights changed.
    pub vertices_changed: usize,
    /// Vertices that could only sum to 1 by changing locked weights.
    pub locks_overridden: usize,
}

/// Apply `edit` to every row, then normalise around the locks; counts what changed.
fn edit_rows(weights: &Weights, locks: &Locks, edit: impl Fn(&mut Row) + Sync + Send) -> (Weights, RowReport) {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let (removed, changed, overridden) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
    let out = map_rows(
        weights.len(),
        || (),
        |_, v, row| {
            weights.row_pairs(v, row);
            let before = row.len();
            edit(row);
            if normalise_row(row, locks) == RowFix::LocksOverridden {
                overridden.fetch_add(1, Relaxed);
            }
            removed.fetch_add(before - row.len(), Relaxed);
            let (js, ws) = weights.row(v);
            if row.len() != js.len()
                || row
                    .iter()
                    .zip(js.iter().zip(ws))
                    .any(|(a, (j, w))| a.0 != *j || a.1 != *w)
            {
                changed.fetch_add(1, Relaxed);
            }
        },
    );
    let report = RowReport {
        removed: removed.into_inner(),
        vertices_changed: changed.into_inner(),
        locks_overridden: overridden.into_inner(),
    };
    (out, report)
}

/// Remove unlocked weights below `threshold` and renormalise. A vertex never loses its last unlocked weight this
/// way: when all of them are below the threshold, the largest stays (so no vertex becomes unweighted).
pub fn prune(weights: &Weights, threshold: f32, locks: &Locks) -> (Weights, RowReport) {
    edit_rows(weights, locks, |row| {
        let largest = row
            .iter()
            .filter(|(j, _)| !locks.is_locked(*j))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .copied();
        row.retain(|&(j, w)| locks.is_locked(j) || w >= threshold || Some((j, w)) == largest);
    })
}

/// Keep at most `k` influences per vertex: locked joints first (all of them, even past `k`), then the largest
/// unlocked weights (ties: lower joint index); renormalise.
pub fn limit(weights: &Weights, k: usize, locks: &Locks) -> (Weights, RowReport) {
    edit_rows(weights, locks, |row| {
        if row.len() <= k {
            return;
        }
        row.sort_by(|a, b| locks.locked_then_stronger(a, b));
        let locked = row.iter().filter(|(j, _)| locks.is_locked(*j)).count();
        row.truncate(k.max(locked).max(1));
    })
}

/// Scale every vertex's unlocked weights so that it sums to 1 with its locked weights unchanged.
pub fn normalise(weights: &Weights, locks: &Locks) -> (Weights, RowReport) {
    edit_rows(weights, locks, |_| {})
}

/// New weights for every vertex that keep the locked joints' old weights: each row is the old row's locked
/// entries plus the new row's unlocked ones, normalised around the locks (so the new unlocked weights share what
/// the locked ones leave). A row with nothing unlocked to give keeps its old row; a vertex that had no weights
/// takes its new row. This is how a re-bind
/// respects locks. `old` and `new` must have the same length (else `new` is returned unchanged).
pub fn keep_locked(old: &Weights, new: &Weights, locks: &Locks) -> Weights {
    if !locks.any() || old.len() != new.len() {
        return new.clone();
    }
    map_rows(
        new.len(),
        || (),
        |_, v, row| keep_locked_row(old.row(v), new.row(v), locks, row),
    )
}

/// One vertex's row of [`keep_locked`], into the empty `row`: the old row's locked entries plus the new row's
/// unlocked ones, normalised around the locks; the old row where the new one gives nothing unlocked (or the new
/// row, for a vertex that had no weights).
pub fn keep_locked_row(old: (&[u16], &[f32]), new: (&[u16], &[f32]), locks: &Locks, row: &mut Row) {
    let ((oj, ow), (nj, nw)) = (old, new);
    row.extend(
        oj.iter()
            .zip(ow)
            .filter(|(j, _)| locks.is_locked(**j))
            .map(|(j, w)| (*j, *w)),
    );
    let locked: f64 = row.iter().map(|x| f64::from(x.1)).sum();
    let kept = row.len();
    // Locked weights that already fill the row leave nothing to share.
    if locked < 1.0 - SUM_EXACT {
        row.extend(
            nj.iter()
                .zip(nw)
                .filter(|(j, _)| !locks.is_locked(**j))
                .map(|(j, w)| (*j, *w)),
        );
        if row.len() == kept {
            // The new row gives nothing to the unlocked joints: filling the rest would mean scaling the
            // locked weights, so the old row stays.
            row.clear();
        }
    }
    if row.is_empty() {
        // Nothing unlocked to give: the old row stays (a locked joint never changes), or, for a
        // vertex that had no weights, the new row.
        if oj.is_empty() {
            row.extend(nj.iter().copied().zip(nw.iter().copied()));
        } else {
            row.extend(oj.iter().copied().zip(ow.iter().copied()));
        }
    }
    normalise_row(row, locks);
}

/// Set `joint`'s weight in one vertex's row to `value` (clamped to [0, 1]; 0 removes it) and scale the other
/// unlocked joints so the row still sums to 1, as a weight table or a Replace brush does. Returns false, leaving
/// the row as it was, when that cannot be done without changing a locked joint or `joint` itself: `joint` is
/// locked, or no other unlocked joint has weight to give or take (a vertex wholly on one joint stays so).
pub fn set_joint_weight(row: &mut Row, joint: u16, value: f32, locks: &Locks) -> bool {
    if locks.is_locked(joint) || !value.is_finite() {
        return false;
    }
    let value = value.clamp(0.0, 1.0);
    // Sums in f64, as normalise_row takes them, so the row sums to 1 within a few f32 ulps.
    let (mut locked, mut others) = (0.0f64, 0.0f64);
    for &(j, w) in row.iter() {
        if j == joint {
            continue;
        }
        if locks.is_locked(j) {
            locked += f64::from(w);
        } else {
            others += f64::from(w);
        }
    }
    let rest = 1.0 - f64::from(value) - locked;
    if others <= 0.0 || rest < -SUM_EXACT {
        return false;
    }
    // The other unlocked joints share what the set joint and the locked ones leave.
    let scale = rest.max(0.0) / others;
    row.retain_mut(|(j, w)| {
        if *j == joint {
            false
        } else if locks.is_locked(*j) {
            true
        } else {
            *w = (f64::from(*w) * scale) as f32;
            *w > 0.0
        }
    });
    if value > 0.0 {
        row.push((joint, value));
    }
    row.sort_unstable_by_key(|&(j, _)| j);
    true
}

/// [`set_joint_weight`], and where that cannot lower `joint` because no other unlocked joint holds weight (a
/// vertex wholly on `joint`, 634 of the course wasp's 694), give what `joint` loses to `fallback` (the editor
/// passes the painted joint's parent), as Maya's paint tool does. Returns false, leaving the row as it was, when
/// neither can be done.
pub fn set_joint_weight_or_give(row: &mut Row, joint: u16, value: f32, fallback: Option<u16>, locks: &Locks) -> bool {
    if set_joint_weight(row, joint, value, locks) {
        return true;
    }
    let Some(f) = fallback.filter(|&f| f != joint && !locks.is_locked(f) && !locks.is_locked(joint)) else {
        return false;
    };
    let value = value.clamp(0.0, 1.0);
    let current = row.iter().find(|x| x.0 == joint).map_or(0.0, |x| x.1);
    let unlocked_others = row.iter().any(|&(j, w)| j != joint && !locks.is_locked(j) && w > 0.0);
    if !value.is_finite() || value >= current || unlocked_others {
        return false;
    }
    row.retain(|x| x.0 != joint && x.0 != f);
    row.push((f, current - value));
    if value > 0.0 {
        row.push((joint, value));
    }
    row.sort_unstable_by_key(|&(j, _)| j);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowering_a_joint_alone_on_its_vertex_gives_the_rest_to_the_fallback() {
        let none = Locks::default();
        let mut row = vec![(3u16, 1.0f32)];
        assert!(!set_joint_weight(&mut row.clone(), 3, 0.25, &none));
        assert!(set_joint_weight_or_give(&mut row, 3, 0.25, Some(1), &none));
        assert_eq!(row, vec![(1, 0.75), (3, 0.25)]);
        // To zero: the fallback takes all.
        let mut row = vec![(3u16, 1.0f32)];
        assert!(set_joint_weight_or_give(&mut row, 3, 0.0, Some(1), &none));
        assert_eq!(row, vec![(1, 1.0)]);
        // Raising, no fallback, or the fallback is the joint: nothing to do.
        let mut row = vec![(3u16, 1.0f32)];
        assert!(!set_joint_weight_or_give(&mut row, 3, 0.5, None, &none));
        assert!(!set_joint_weight_or_give(&mut row, 3, 0.5, Some(3), &none));
        assert_eq!(row, vec![(3, 1.0)]);
    }

    fn w(rows: &[&[(u16, f32)]]) -> Weights {
        Weights::normalized(rows.iter().copied()).unwrap().0
    }

    fn row(w: &Weights, v: usize) -> Row {
        let mut r = Vec::new();
        w.row_pairs(v, &mut r);
        r
    }

    fn close(a: &[(u16, f32)], b: &[(u16, f32)]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0 && (x.1 - y.1).abs() < 1e-6)
    }

    #[test]
    fn set_joint_weight_scales_the_other_unlocked_joints() {
        let mut r = vec![(0, 0.5), (1, 0.25), (2, 0.25)];
        assert!(set_joint_weight(&mut r, 0, 0.8, &Locks::none()));
        assert!(close(&r, &[(0, 0.8), (1, 0.1), (2, 0.1)]), "{r:?}");
        // Joint 2 locked: only joint 1 gives way.
        let mut r = vec![(0, 0.5), (1, 0.25), (2, 0.25)];
        assert!(set_joint_weight(&mut r, 0, 0.7, &Locks::of([2])));
        assert!(close(&r, &[(0, 0.7), (1, 0.05), (2, 0.25)]), "{r:?}");
        // A new joint enters; zero removes one.
        let mut r = vec![(0, 1.0)];
        assert!(set_joint_weight(&mut r, 3, 0.25, &Locks::none()));
        assert!(close(&r, &[(0, 0.75), (3, 0.25)]), "{r:?}");
        // A vertex wholly on one joint: nothing else can take the rest.
        let mut r = vec![(0, 1.0)];
        assert!(!set_joint_weight(&mut r, 0, 0.5, &Locks::none()));
        assert_eq!(r, vec![(0, 1.0)]);
        let mut r = vec![(0, 0.5), (1, 0.5)];
        assert!(set_joint_weight(&mut r, 3, 0.5, &Locks::none()));
        assert!(close(&r, &[(0, 0.25), (1, 0.25), (3, 0.5)]), "{r:?}");
        assert!(set_joint_weight(&mut r, 3, 0.0, &Locks::none()));
        assert!(close(&r, &[(0, 0.5), (1, 0.5)]), "{r:?}");
        // Refused: the joint is locked, or only locked joints could give way.
        let mut r = vec![(0, 0.5), (1, 0.5)];
        assert!(!set_joint_weight(&mut r, 0, 0.9, &Locks::of([0])));
        assert!(!set_joint_weight(&mut r, 0, 0.9, &Locks::of([1])));
        assert_eq!(r, vec![(0, 0.5), (1, 0.5)]);
    }

    #[test]
    fn keep_locked_keeps_locked_weights_and_fills_the_rest_from_the_new_rows() {
        let old = w(&[&[(0, 0.3), (1, 0.7)], &[(1, 1.0)], &[(2, 1.0)]]);
        let new = w(&[&[(0, 0.5), (2, 0.5)], &[(0, 0.25), (2, 0.75)], &[(0, 1.0)]]);
        let out = keep_locked(&old, &new, &Locks::of([0]));
        // Vertex 0: joint 0 stays 0.3; joint 2 (unlocked, new) fills the remaining 0.7.
        assert!(close(&row(&out, 0), &[(0, 0.3), (2, 0.7)]));
        // Vertex 1: joint 0 had no weight and is locked, so the new 0.25 of it is not taken; joint 2 gets all.
        assert!(close(&row(&out, 1), &[(2, 1.0)]));
        // Vertex 2: the new row holds only locked joint 0, which had no weight there: the old row stays.
        assert!(close(&row(&out, 2), &[(2, 1.0)]));
        // A vertex wholly given to a locked joint stays so, bit for bit.
        let out = keep_locked(&old, &new, &Locks::of([1]));
        assert_eq!(row(&out, 1), vec![(1, 1.0)]);
        // A new row of locked joints only: the old row stays rather than the locked weight being scaled up.
        let old = w(&[&[(0, 0.75), (1, 0.25)]]);
        let new = w(&[&[(0, 1.0)]]);
        assert_eq!(row(&keep_locked(&old, &new, &Locks::of([0])), 0), row(&old, 0));
        assert_eq!(keep_locked(&old, &new, &Locks::none()), new);
    }

    #[test]
    fn prune_removes_small_weights_and_renormalises() {
        let input = w(&[
            &[(0, 0.6), (1, 0.38), (2, 0.02)],
            &[(0, 1.0)],
            &[(3, 0.4), (4, 0.3), (5, 0.3)],
        ]);
        let (out, rep) = prune(&input, 0.05, &Locks::none());
        assert!(close(&row(&out, 0), &[(0, 0.6 / 0.98), (1, 0.38 / 0.98)]));
        assert_eq!(row(&out, 1), vec![(0, 1.0)]);
        assert_eq!(row(&out, 2), row(&input, 2));
        assert_eq!((rep.removed, rep.vertices_changed, rep.locks_overridden), (1, 1, 0));
        // Everything below the threshold: the largest stays.
        let (out, _) = prune(&input, 0.9, &Locks::none());
        assert_eq!(row(&out, 0), vec![(0, 1.0)]);
        assert_eq!(row(&out, 2), vec![(3, 1.0)]);
    }

    #[test]
    fn prune_keeps_small_locked_weights() {
        let input = w(&[&[(0, 0.95), (1, 0.03), (2, 0.02)]]);
        let (out, _) = prune(&input, 0.05, &Locks::of([2]));
        let r = row(&out, 0);
        assert_eq!(r[1], (2, 0.02));
        assert!(close(&r, &[(0, 0.98), (2, 0.02)]));
    }

    #[test]
    fn limit_keeps_the_largest_and_the_locked() {
        let input = w(&[&[(0, 0.1), (1, 0.4), (2, 0.3), (3, 0.2)], &[(5, 0.5), (6, 0.5)]]);
        let (out, rep) = limit(&input, 2, &Locks::none());
        assert!(close(&row(&out, 0), &[(1, 4.0 / 7.0), (2, 3.0 / 7.0)]));
        assert_eq!(row(&out, 1), row(&input, 1));
        assert_eq!((rep.removed, rep.vertices_changed), (2, 1));
        let (out, _) = limit(&input, 2, &Locks::of([0]));
        assert!(close(&row(&out, 0), &[(0, 0.1), (1, 0.9)]));
        let (out, _) = limit(&input, 1, &Locks::none());
        assert_eq!(row(&out, 1), vec![(5, 1.0)], "ties go to the lower joint");
    }

    #[test]
    fn normalise_is_the_identity_on_normalised_weights() {
        let input = w(&[&[(0, 0.25), (1, 0.75)], &[], &[(2, 1.0)]]);
        let (out, rep) = normalise(&input, &Locks::of([1]));
        assert_eq!(out, input);
        assert_eq!(rep, RowReport::default());
    }
}
