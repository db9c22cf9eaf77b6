//! skinbind: rig authoring and skin binding.
//!
//! Data flows one way: [`formats`] read and write files into the [`model`]; [`deform`] and the other algorithm
//! modules are pure functions over the model; the CLI ([`cli`]) sits on top. See docs/architecture.md.
//!
//! Read a skeleton and a skin, bend a joint, and skin the mesh on the CPU:
//!
//! ```
//! use skinbind::deform::{Method, pose_skin};
//! use skinbind::formats::{skel::read_skel, skin::read_skin};
//! use skinbind::model::Pose;
//!
//! let skel = read_skel("balljoint root { balljoint tip { offset 1 0 0 } }".as_bytes(), None)?.value;
//! let text = "positions 2 { 0 0 0  2 0 0 } skinweights 2 { 1 0 1  1 1 1 } triangles 0 { }";
//! let skin = read_skin(text.as_bytes(), None, Some(skel.len()))?.value;
//! let bind = Pose::from_file(&skel);
//! let mut pose = bind.clone();
//! pose.set_dof(&skel, 1, 2, std::f32::consts::FRAC_PI_2); // turn `tip` 90 degrees about z
//! let (positions, _normals) = pose_skin(&skel, &skin, &pose, &bind, Method::Linear)?;
//! // The vertex on `tip`, one unit beyond its pivot at (1, 0, 0), swings up to (1, 1, 0).
//! assert!((positions[1] - glam::Vec3::new(1.0, 1.0, 0.0)).length() < 1e-6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod adjust;
pub mod app;
pub mod assets;
pub mod atomic;
pub mod bind;
pub mod check;
pub mod cli;
pub mod deform;
pub mod eval;
pub mod formats;
pub mod math;
pub mod mesh;
pub mod model;
pub mod paint;
pub mod render;
pub mod rig;
pub mod sample;
pub mod simd;
pub mod spatial;
