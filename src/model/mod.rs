//! The data model: skeletons and poses, skins with weights and bindings, animation clips, morph targets.
//! Skeletons, skins, weights and channels have checked constructors and private fields; poses, clips and morphs
//! are plain data whose users clamp or check what they read. No files, GUI or GPU here.

pub mod anim;
pub mod morph;
pub mod names;
pub mod skeleton;
pub mod skin;
pub mod weights;

pub use anim::{Channel, Clip, Extrapolation, FrameBudget, FramesError, Key, MAX_FRAMES, SAMPLE_FPS, Tangent, pose_at};
pub use morph::{Morph, apply_morphs};
pub use skeleton::{Joint, Limit, Pose, Skeleton, world_from_joint};
pub use skin::{Material, Skin};
pub use weights::{Row, Weights, WeightsError};
