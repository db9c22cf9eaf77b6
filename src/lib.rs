//! skinbind: rig authoring and skin binding.
//!
//! Data flows one way: [`formats`] read and write files into the [`model`]; [`deform`] and the other algorithm
//! modules are pure functions over the model; the CLI ([`cli`]) sits on top. See docs/architecture.md.

pub mod cli;
pub mod deform;
pub mod formats;
pub mod model;
pub mod sample;
