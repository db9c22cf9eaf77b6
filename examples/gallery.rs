//! Makes docs/gallery.md and its pictures: every shared character with artist weights, bound by skinbind, in
//! two strong poses beside the artist's weights, and the weights of the joint where the two differ most.
//!
//! Run from the repository root, with the shared data beside it (or `SKINBIND_DATA` naming it), on a machine
//! with Mesa's EGL (the pictures are drawn by the editor's own renderer, headless):
//!
//! ```sh
//! cargo run --release --example gallery
//! ```
//!
//! Each model's picture has two rows, the artist's weights above and skinbind's below, and three columns: every
//! joint turned by +0.5 rad about its own x axis, every joint by -0.5 rad about z (both from the file pose,
//! clamped to the limits), and the file pose shaded by one joint's weight (0 black, 1 white): the joint with the
//! largest posed error. skinbind binds as `skinbind bind` does (the default method and clean-up).

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use skinbind::adjust::{BindAndClean, bind_and_clean};
use skinbind::bind::BindOptions;
use skinbind::deform::bind_world_from_joint;
use skinbind::eval::compare_weights;
use skinbind::eval::posed::posed_error;
use skinbind::formats;
use skinbind::model::{Pose, Skeleton, Skin};
use skinbind::render::gl::Headless;
use skinbind::render::offscreen::{Image, Snapshot, render_rig};
use skinbind::render::{Renderer, Shading, ViewSettings};

/// Size of one cell of a model's picture.
const CELL: (u32, u32) = (360, 300);
/// How far every joint turns in the two poses, in radians.
const TURN: f32 = 0.5;

/// A shared model: its skeleton and its skin with the artist's weights.
fn load(data: &Path, name: &str) -> anyhow::Result<(Skeleton, Skin)> {
    if let Some(gltf) = name.strip_suffix(".glb") {
        let rig = formats::gltf::load_gltf(&data.join("gltf").join(format!("{gltf}.glb")), None)?.value;
        return Ok((rig.skeleton, rig.skin));
    }
    let dir = data.join("cse169");
    let skel = formats::load_skel(&dir.join(format!("{name}.skel")))?.value;
    let skin = formats::load_skin(&dir.join(format!("{name}.skin")), Some(skel.len()))?.value;
    Ok((skel, skin))
}

/// Every joint but the root turned by `turn` about its `axis` from the file pose.
fn curl(skel: &Skeleton, axis: usize, turn: f32) -> Pose {
    let mut pose = Pose::from_file(skel);
    for j in 1..skel.len() {
        let v = pose.dofs[j][axis] + turn;
        pose.set_dof(skel, j, axis, v);
    }
    pose
}

fn paste(out: &mut image::RgbaImage, cell: &Image, col: u32, row: u32) {
    for y in 0..cell.height {
        for x in 0..cell.width {
            out.put_pixel(col * CELL.0 + x, row * CELL.1 + y, image::Rgba(cell.pixel(x, y)));
        }
    }
}

fn main() -> anyhow::Result<()> {
    let data = std::env::var_os("SKINBIND_DATA").map_or_else(|| PathBuf::from("../shared/data"), PathBuf::from);
    let models = [
        "wasp",
        "wasp2",
        "tube",
        "CesiumMan.glb",
        "RiggedFigure.glb",
        "Fox.glb",
        "quaternius/Smooth_Male_Casual.glb",
        "quaternius/Female_Casual.glb",
        "quaternius/Wolf.glb",
        "quaternius/Trex.glb",
        "quaternius/Frog.glb",
    ];
    let headless = Headless::new().map_err(|e| anyhow!("cannot make an offscreen OpenGL context: {e}"))?;
    let mut renderer = Renderer::new(&headless.context).map_err(|e| anyhow!("{e}"))?;
    let out_dir = Path::new("docs/gallery");
    std::fs::create_dir_all(out_dir)?;
    let mut page = String::from(
        "# Gallery\n\nEvery shared character with artist weights, bound by `skinbind bind` (the default method and \
         clean-up). In each picture the top row has the artist's weights and the bottom row skinbind's; the columns \
         are every joint turned by +0.5 rad about its own x axis, every joint turned by -0.5 rad about z (from the \
         file pose, within the joints' limits), and the file pose shaded by the weight of the joint where the two \
         differ most by posed error (0 black, 1 white). Figures: mean L1 / dominant agreement against the artist, \
         and the posed error (mean % / 99th percentile % of the diagonal; docs/binding.md).\n\n\
         Made by `cargo run --release --example gallery` (examples/gallery.rs).\n",
    );
    for name in models {
        let (skel, artist) = load(&data, name).with_context(|| format!("loading {name}"))?;
        let bind = bind_world_from_joint(&skel, &artist, &Pose::from_file(&skel));
        let (positions, triangles) = (artist.positions(), artist.triangles());
        let job = BindAndClean::with_default_clean_up(BindOptions::default());
        let w = bind_and_clean(&skel, &bind, positions, triangles, &job, &|_| {})?.weights;
        let artist_w = artist
            .weights()
            .ok_or_else(|| anyhow!("{name} has no artist weights"))?;
        let c = compare_weights(&w, artist_w)?;
        let e = posed_error(&skel, &bind, positions, &w, artist_w, None)?;
        let worst = e.joints.first().map(|j| j.joint);
        let mut ours = artist.clone();
        ours.set_weights(Some(w))?;
        let mut picture = image::RgbaImage::new(3 * CELL.0, 2 * CELL.1);
        let shaded = ViewSettings {
            skeleton: false,
            grid: false,
            ..ViewSettings::default()
        };
        let weights = ViewSettings {
            shading: Shading::Weights,
            ..shaded
        };
        let poses = [curl(&skel, 0, TURN), curl(&skel, 2, -TURN), Pose::from_file(&skel)];
        for (row, skin) in [&artist, &ours].into_iter().enumerate() {
            for (col, pose) in poses.iter().enumerate() {
                let shot = Snapshot {
                    skeleton: &skel,
                    skin,
                    pose,
                    selected: worst,
                    preset: None,
                    settings: if col == 2 { &weights } else { &shaded },
                    zoom: 1.2,
                };
                let cell = render_rig(&mut renderer, &shot, CELL.0, CELL.1).map_err(|e| anyhow!("{e}"))?;
                paste(&mut picture, &cell, col as u32, row as u32);
            }
        }
        let file = format!(
            "{}.png",
            name.trim_end_matches(".glb").rsplit('/').next().unwrap_or(name)
        );
        let mut png = Vec::new();
        picture.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)?;
        skinbind::atomic::save_atomic(&out_dir.join(&file), |out| out.write_all(&png))?;
        let r = &e.range_of_motion;
        let joint = worst.map_or(String::new(), |j| format!(", shaded joint `{}`", skel.joints()[j].name));
        page += &format!(
            "\n## {}\n\n{} vertices, {} joints: L1 {:.3} / agreement {:.3}, posed error {:.3}% / {:.2}%{joint}.\n\n\
             ![{0}: artist above, skinbind below](gallery/{file})\n",
            name.trim_end_matches(".glb"),
            positions.len(),
            skel.len(),
            c.mean_l1,
            c.dominant_agreement,
            r.mean_percent,
            r.p99_percent,
        );
        println!("{name}: drawn");
    }
    skinbind::atomic::save_atomic(Path::new("docs/gallery.md"), |out| out.write_all(page.as_bytes()))?;
    Ok(())
}
