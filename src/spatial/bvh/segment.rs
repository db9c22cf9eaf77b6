//! The any-hit segment queries (binding's visibility test): their entry points on [`TriangleBvh`], which hand the
//! segments to the 4-wide traversal ([`wide::packet_hit`]) a packet at a time.

use glam::Vec3;

use super::ray::RayBox;
use super::{SegmentEntry, TriangleBvh, wide};

impl TriangleBvh {
    /// True if the segment from vertex `v` (at `a`) to `b` crosses a triangle that does not have `v` as a corner,
    /// at a parameter `s` in `(s_min, 1 - s_min)` along it (`s` in `[0, 1]`, the point being `a + s * (b - a)`);
    /// stops at the first hit found (any-hit traversal, no sorting needed), on the 4-wide copy of the tree
    /// (`wide.rs`). The segment starts on the vertex's own triangles, so it can only meet them at its start
    /// (which a positive `s_min` excludes) or, grazing one, by rounding: they are passed over. Equals the
    /// exhaustive search's answer (the tests' `segment_hits_naive_skipping`); false for a zero-length or non-finite
    /// segment.
    pub fn segment_hits_from_vertex(&self, v: u32, a: Vec3, b: Vec3, s_min: f32) -> bool {
        if self.hittable == 0 {
            return false;
        }
        let mut hit = [false];
        self.packet_into(None, &[v], &[a], &[b], s_min, &mut hit);
        hit[0]
    }

    /// Where [`Self::packet_hit_from_vertices_within`] begins its traversals for segments that lie in the box
    /// `lo..hi` (origins and ends inside it): the boxes of the tree that meet it (widened a little, for rounding),
    /// down to about `reach` times its size, so that the levels above are walked once for all those queries.
    pub fn segment_entry(&self, lo: Vec3, hi: Vec3, reach: f32, entry: &mut SegmentEntry) {
        entry.nodes.clear();
        entry.stamp = Some(self.stamp);
        let Some(root) = self.nodes.first().filter(|_| self.hittable > 0) else {
            return;
        };
        let wide = self.wide_nodes();
        if !(lo.is_finite() && hi.is_finite()) {
            // Begin at (a copy of) the root.
            entry.nodes.extend(wide.first());
            return;
        }
        // The traversal widens boxes by `RayBox::margin_scale` (64 ulps of the reach from the query's origin);
        // from any origin in the box the reach is at most the box centre's plus half its diagonal, and the pad is
        // over ten times that margin, which also covers the triangle test's rounding.
        let reach_in_box = RayBox::scene_reach((lo + hi) * 0.5, root) + (hi - lo).length() * 0.5;
        let pad = Vec3::splat(1e-4 * reach_in_box + f32::MIN_POSITIVE);
        wide::entry_nodes(wide, lo - pad, hi + pad, reach, &mut entry.nodes);
    }

    /// [`Self::segment_hits_from_vertex`] for the segments of several vertices at once (the ones a group of
    /// neighbouring vertices tests, all inside the box `entry` was made for by [`Self::segment_entry`]): segment
    /// `k` runs from vertex `from[k]` at `origins[k]` to `ends[k]`, and `hits[k]` (the caller sizes `hits` to
    /// `ends`) says whether it crosses a triangle (the same answer as its own query). The traversals begin at the
    /// entry's boxes (at the root if `entry` was made for another tree); segments outside its box may be answered
    /// wrongly. More than [`PACKET`](super::PACKET) segments are answered a packet at a time.
    pub fn packet_hit_from_vertices_within(
        &self,
        entry: &SegmentEntry,
        from: &[u32],
        origins: &[Vec3],
        ends: &[Vec3],
        s_min: f32,
        hits: &mut [bool],
    ) {
        debug_assert!(from.len() == ends.len() && origins.len() == ends.len() && hits.len() == ends.len());
        if self.hittable == 0 {
            hits.iter_mut().for_each(|h| *h = false);
            return;
        }
        let start = (entry.stamp == Some(self.stamp)).then_some(entry.nodes.as_slice());
        for (k, out) in hits.chunks_mut(wide::PACKET).enumerate() {
            let r = k * wide::PACKET..k * wide::PACKET + out.len();
            self.packet_into(start, &from[r.clone()], &origins[r.clone()], &ends[r], s_min, out);
        }
    }

    /// One traversal ([`wide::packet_hit`]) of the segments from `origins[k]` to `ends[k]` (at most
    /// [`wide::PACKET`]; from the vertices `from`, whose own triangles are passed over), counting crossings at `s`
    /// in `(s_min, 1 - s_min)`, answers into `hits`. Only for a tree with a hittable triangle.
    fn packet_into(
        &self,
        start: Option<&[wide::WideNode]>,
        from: &[u32],
        origins: &[Vec3],
        ends: &[Vec3],
        s_min: f32,
        hits: &mut [bool],
    ) {
        let mut dirs = [Vec3::ZERO; wide::PACKET];
        for (d, (&a, &b)) in dirs.iter_mut().zip(origins.iter().zip(ends)) {
            *d = b - a;
        }
        let dirs = &dirs[..ends.len()];
        let mask = wide::packet_hit(self.wide_tree(), start, from, origins, dirs, (s_min, 1.0 - s_min));
        for (k, h) in hits.iter_mut().enumerate() {
            *h = mask >> k & 1 == 1;
        }
    }

    /// Make the 4-wide layout the segment queries use now (it is otherwise made by the first query, which other
    /// threads' queries then wait for).
    pub fn prepare_segment_queries(&self) {
        self.wide_nodes();
    }

    /// The tree as the 4-wide traversal reads it (made on first use). Only for a tree with a node.
    fn wide_tree(&self) -> wide::Tree<'_> {
        wide::Tree {
            wide: self.wide_nodes(),
            tris: &self.tris,
            root: &self.nodes[0],
        }
    }

    pub(super) fn wide_nodes(&self) -> &[wide::WideNode] {
        self.wide.get_or_init(|| wide::collapse(&self.nodes))
    }
}

#[cfg(test)]
#[path = "segment_tests.rs"]
mod tests;
