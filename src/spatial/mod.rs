//! Spatial acceleration structures shared by binding and painting.
//!
//! [`TriangleBvh`] answers two questions about a triangle mesh: automatic binding asks, millions of times, whether
//! the segment from a vertex to a bone crosses the surface ([`TriangleBvh::packet_hit_from_vertices_within`]);
//! weight painting asks which surface point lies under the cursor on the posed mesh ([`TriangleBvh::ray_cast`],
//! on a tree built for that pose). [`PointIndex`] finds the points near a point. Pure data and functions: no IO,
//! no GUI.

pub mod bvh;
pub mod points;

pub use bvh::{Hit, Nearest, SegmentEntry, TriangleBvh};
pub use points::PointIndex;
