//! Rendering without a window: a colour and depth texture as the target, read back as an RGBA image (rows top
//! to bottom). The `render` command and the screenshot tests draw through here with the viewport's own
//! [`Renderer`](super::Renderer).

use three_d::{DepthTexture2D, Interpolation, RenderTarget, Texture2D, Viewport, Wrapping};

use super::{Frame, OrbitCamera, Projection, RenderError, Renderer, ViewPreset, ViewSettings, ground_and_size};
use crate::deform::{Method, bind_world_from_joint, pose_skin};
use crate::model::{Pose, Skeleton, Skin, world_from_joint};

/// An RGBA8 image, rows from the top.
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<[u8; 4]>,
}

impl Image {
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        self.pixels[(y * self.width + x) as usize]
    }

    /// The image encoded as PNG (the caller writes it, through `atomic::save_atomic`).
    pub fn encode_png(&self) -> anyhow::Result<Vec<u8>> {
        let bytes: Vec<u8> = self.pixels.iter().flatten().copied().collect();
        let img = image::RgbaImage::from_raw(self.width, self.height, bytes)
            .ok_or_else(|| anyhow::anyhow!("image buffer of the wrong size"))?;
        let mut png = Vec::new();
        img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)?;
        Ok(png)
    }
}

/// Draw `frame` at `width` x `height` pixels and read it back.
pub fn render_image(
    renderer: &mut Renderer,
    frame: &Frame<'_>,
    settings: &ViewSettings,
    width: u32,
    height: u32,
) -> Result<Image, RenderError> {
    if width == 0 || height == 0 || width > 16384 || height > 16384 {
        return Err(RenderError::Other(format!(
            "image size {width}x{height} is outside 1..16384"
        )));
    }
    let context = renderer.context().clone();
    let color = Texture2D::new_empty::<[u8; 4]>(
        &context,
        width,
        height,
        Interpolation::Nearest,
        Interpolation::Nearest,
        None,
        Wrapping::ClampToEdge,
        Wrapping::ClampToEdge,
    );
    let depth = DepthTexture2D::new::<f32>(&context, width, height, Wrapping::ClampToEdge, Wrapping::ClampToEdge);
    let target = RenderTarget::new(color.as_color_target(None), depth.as_depth_target());
    target.write::<RenderError>(|| {
        renderer.draw(Viewport::new_at_origo(width, height), frame, settings);
        Ok(())
    })?;
    // three-d's read flips GL's bottom-up rows: these run from the top.
    let pixels: Vec<[u8; 4]> = target.read_color();
    Ok(Image { width, height, pixels })
}

/// A rig to draw as the `render` command does: posed, framed by its posed skin, from a preset view (orthographic)
/// or the default three-quarter perspective.
pub struct Snapshot<'a> {
    pub skeleton: &'a Skeleton,
    pub skin: &'a Skin,
    pub pose: &'a Pose,
    /// The joint whose weights the weights shading shows.
    pub selected: Option<usize>,
    pub preset: Option<ViewPreset>,
    pub settings: &'a ViewSettings,
    /// 1 frames the posed skin's bounding sphere; above 1 comes closer (the frame fits a sphere, so a long,
    /// flat shape fills little of it).
    pub zoom: f32,
}

/// Draw `shot` at `width` x `height` pixels (the skin is uploaded to `renderer` first).
pub fn render_rig(renderer: &mut Renderer, shot: &Snapshot<'_>, width: u32, height: u32) -> Result<Image, RenderError> {
    let (skel, skin) = (shot.skeleton, shot.skin);
    renderer.set_skin(Some(skin), skel.len());
    let file_pose = Pose::from_file(skel);
    let world = world_from_joint(skel, shot.pose);
    let bind = bind_world_from_joint(skel, skin, &file_pose);
    // Frame the posed skin (as the GPU will place it), computed on the CPU.
    let posed =
        pose_skin(skel, skin, shot.pose, &file_pose, Method::Linear).map_err(|e| RenderError::Other(e.to_string()))?;
    let mut camera = OrbitCamera::default();
    if let Some(p) = shot.preset {
        camera.set_preset(p);
        camera.projection = Projection::Orthographic;
    }
    if let Some((lo, hi)) = crate::model::skin::bounds(&posed.0) {
        camera.frame(lo, hi);
        camera.distance /= shot.zoom.max(1e-3);
    }
    let (ground, size) = ground_and_size(Some(skin), &world);
    let frame = Frame {
        camera: &camera,
        skeleton: skel,
        world_from_joint: &world,
        bind_world_from_joint: &bind,
        selected: shot.selected,
        deform: &[],
        ground,
        size,
    };
    render_image(renderer, &frame, shot.settings, width, height)
}
