//! A k-d tree over points (kiddo's immutable tree), for the nearest-point and radius queries of painting,
//! mirroring and binding. Non-finite points are left out; answers are the caller's ids, with ties broken by the
//! lowest id, so that they do not depend on the tree's rounding or its order.

use glam::Vec3;
use kiddo::{ImmutableKdTree, SquaredEuclidean};

/// Finite points in a k-d tree, each with the caller's id.
pub struct PointIndex {
    tree: Option<ImmutableKdTree<f32, 3>>,
    points: Vec<Vec3>,
    /// The caller's id of each point in the tree.
    ids: Vec<usize>,
}

impl PointIndex {
    /// Index the finite points among `(id, point)`.
    pub fn new(points: impl Iterator<Item = (usize, Vec3)>) -> Self {
        let (ids, points): (Vec<usize>, Vec<Vec3>) = points.filter(|(_, p)| p.is_finite()).unzip();
        let arrays: Vec<[f32; 3]> = points.iter().map(|p| p.to_array()).collect();
        let tree = if arrays.is_empty() {
            None
        } else {
            ImmutableKdTree::new_from_slice(&arrays).ok()
        };
        Self { tree, points, ids }
    }

    /// Index `positions`, each point's id being its index.
    pub fn of(positions: &[Vec3]) -> Self {
        Self::new(positions.iter().copied().enumerate())
    }

    /// The id of the point nearest `q`, if it lies within `tol` of `q` (`f32::INFINITY`: any); among points at
    /// the same least distance, the lowest id.
    pub fn nearest_within(&self, q: Vec3, tol: f32) -> Option<usize> {
        if !q.is_finite() {
            return None;
        }
        let tree = self.tree.as_ref()?;
        let query = q.to_array();
        let nearest = tree.query(&query).nearest_one::<SquaredEuclidean<f32>>().execute();
        let d2 = nearest.distance;
        // Points are finite, so d2 is not NaN.
        if d2.sqrt() > tol * (1.0 + 1e-4) + f32::MIN_POSITIVE {
            return None;
        }
        // Everything at (about) that distance, to break ties by id; the pad covers the tree's rounding.
        let r2 = d2 * (1.0 + 1e-4) + f32::MIN_POSITIVE;
        let found = tree
            .query(&query)
            .within::<SquaredEuclidean<f32>>(r2)
            .unsorted()
            .execute();
        let mut best: Option<(f32, usize)> = None;
        let mut consider = |k: usize| {
            if let (Some(&p), Some(&id)) = (self.points.get(k), self.ids.get(k)) {
                let d = q.distance_squared(p);
                if best.is_none_or(|(bd, bid)| d < bd || (d == bd && id < bid)) {
                    best = Some((d, id));
                }
            }
        };
        consider(nearest.item as usize);
        for n in found {
            consider(n.item as usize);
        }
        best.filter(|(d, _)| d.sqrt() <= tol).map(|(_, id)| id)
    }

    /// The ids of the (at most) `n` points nearest `q`, nearest first (ties by the lowest id).
    pub fn nearest_n(&self, q: Vec3, n: usize) -> Vec<usize> {
        let (Some(tree), Some(n)) = (&self.tree, std::num::NonZeroUsize::new(n)) else {
            return Vec::new();
        };
        if !q.is_finite() {
            return Vec::new();
        }
        let mut found: Vec<(f32, usize)> = tree
            .query(&q.to_array())
            .nearest_n::<SquaredEuclidean<f32>>(n)
            .execute()
            .into_iter()
            .filter_map(|nb| {
                let k = nb.item as usize;
                Some((q.distance_squared(*self.points.get(k)?), *self.ids.get(k)?))
            })
            .collect();
        found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        found.into_iter().map(|(_, id)| id).collect()
    }

    /// The ids of the points within `r` of `c`, and perhaps a few just outside (the query is padded for the
    /// tree's rounding), in no order: callers test candidates again exactly.
    pub fn within(&self, c: Vec3, r: f32, out: &mut Vec<u32>) {
        out.clear();
        let Some(tree) = &self.tree else { return };
        if !c.is_finite() {
            return;
        }
        let r = r * (1.0 + 1e-5) + 1e-6;
        out.extend(
            tree.query(&c.to_array())
                .within::<SquaredEuclidean<f32>>(r * r)
                .unsorted()
                .execute()
                .into_iter()
                .filter_map(|n| self.ids.get(n.item as usize).map(|&id| id as u32)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The k nearest agree with sorting every point by distance (ids breaking ties).
    #[test]
    fn nearest_n_matches_a_full_sort() {
        let pts: Vec<Vec3> = (0..200)
            .map(|i| {
                let f = i as f32;
                Vec3::new((f * 0.37).sin() * 3.0, (f * 0.11).cos() * 2.0, (f * 0.07).fract())
            })
            .collect();
        let index = PointIndex::of(&pts);
        let q = Vec3::new(0.3, -0.2, 0.5);
        let mut all: Vec<usize> = (0..pts.len()).collect();
        all.sort_by(|&a, &b| {
            q.distance_squared(pts[a])
                .total_cmp(&q.distance_squared(pts[b]))
                .then(a.cmp(&b))
        });
        assert_eq!(index.nearest_n(q, 8), all[..8].to_vec());
        assert!(index.nearest_n(q, 0).is_empty());
        assert!(PointIndex::of(&[]).nearest_n(q, 3).is_empty());
    }

    #[test]
    fn nearest_breaks_ties_by_the_lowest_id_and_skips_non_finite_points() {
        let pts = [
            (7, Vec3::new(1.0, 0.0, 0.0)),
            (3, Vec3::new(-1.0, 0.0, 0.0)),
            (1, Vec3::NAN),
            (9, Vec3::new(5.0, 0.0, 0.0)),
        ];
        let index = PointIndex::new(pts.into_iter());
        assert_eq!(index.nearest_within(Vec3::ZERO, 2.0), Some(3));
        assert_eq!(index.nearest_within(Vec3::new(4.0, 0.0, 0.0), 0.5), None);
        assert_eq!(index.nearest_within(Vec3::new(4.0, 0.0, 0.0), f32::INFINITY), Some(9));
        let mut out = Vec::new();
        index.within(Vec3::ZERO, 1.5, &mut out);
        out.sort_unstable();
        assert_eq!(out, vec![3, 7]);
    }

    #[test]
    fn an_empty_index_answers_nothing() {
        let index = PointIndex::of(&[]);
        assert_eq!(index.nearest_within(Vec3::ZERO, f32::INFINITY), None);
        let mut out = vec![1];
        index.within(Vec3::ZERO, 1.0, &mut out);
        assert!(out.is_empty());
    }
}
