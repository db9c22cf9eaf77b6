//! The editor (eframe + egui): panels read the document and queue edits; the viewport draws it on the GPU.

pub mod viewport;
