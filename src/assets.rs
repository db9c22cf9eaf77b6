//! What the program ships inside its binary, from the top-level `assets/` folder: the window's icon and the
//! sample rig the editor opens on, as `.skel`, `.skin` and `.anim` files a newcomer can also open in other tools.
//!
//! The rig files are made by the project's own generator, deterministically ([`SAMPLE`] and the walk clip of
//! [`crate::sample::walk_clip`]); `tests/assets.rs` checks that they are byte for byte what it makes, and
//! `SKINBIND_BLESS=1 cargo test --test assets` writes them again after a change to the generator.

use crate::formats::{anim::read_anim, skel::read_skel, skin::read_skin};
use crate::model::{Clip, Skeleton, Skin};
use crate::sample::SampleKind;

/// The window's icon, 256 x 256 PNG.
pub const ICON_PNG: &[u8] = include_bytes!("../assets/icon.png");

/// The sample rig's generator settings: `skinbind sample --kind creature --vertices 20000`.
pub const SAMPLE: (SampleKind, usize) = (SampleKind::Creature, 20_000);
/// The walk clip's period in seconds.
pub const SAMPLE_WALK_PERIOD: f32 = 1.2;

pub const SAMPLE_SKEL: &str = include_str!("../assets/creature.skel");
pub const SAMPLE_SKIN: &str = include_str!("../assets/creature.skin");
pub const SAMPLE_ANIM: &str = include_str!("../assets/creature_walk.anim");

/// The shipped sample rig, read from the files above.
pub fn sample_rig() -> Result<(Skeleton, Skin, Clip), String> {
    let len = |s: &str| Some(s.len() as u64);
    let skel = read_skel(SAMPLE_SKEL.as_bytes(), len(SAMPLE_SKEL)).map_err(|e| format!("creature.skel:{e}"))?;
    let skin = read_skin(SAMPLE_SKIN.as_bytes(), len(SAMPLE_SKIN), Some(skel.value.len()))
        .map_err(|e| format!("creature.skin:{e}"))?;
    let clip = read_anim(SAMPLE_ANIM.as_bytes(), len(SAMPLE_ANIM)).map_err(|e| format!("creature_walk.anim:{e}"))?;
    Ok((skel.value, skin.value, clip.value))
}

/// The window's icon as RGBA pixels, with its width and height.
pub fn icon_rgba() -> Result<(Vec<u8>, u32, u32), String> {
    let img = image::load_from_memory_with_format(ICON_PNG, image::ImageFormat::Png).map_err(|e| e.to_string())?;
    let rgba = img.to_rgba8();
    let (w, h) = rgba.dimensions();
    Ok((rgba.into_raw(), w, h))
}
