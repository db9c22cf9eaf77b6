//! Rendering without a window: a colour and depth texture as the target, read back as an RGBA image (rows top
//! to bottom). The `render` command and the screenshot tests draw through here with the viewport's own
//! [`Renderer`](super::Renderer).

use three_d::{DepthTexture2D, Interpolation, RenderTarget, Texture2D, Viewport, Wrapping};

use super::{Frame, RenderError, Renderer, ViewSettings};

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

    /// Save as PNG (atomically: a temporary file beside `path`, then a rename).
    pub fn save_png(&self, path: &std::path::Path) -> anyhow::Result<()> {
        let bytes: Vec<u8> = self.pixels.iter().flatten().copied().collect();
        let img = image::RgbaImage::from_raw(self.width, self.height, bytes)
            .ok_or_else(|| anyhow::anyhow!("image buffer of the wrong size"))?;
        let mut png = Vec::new();
        img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)?;
        crate::atomic::save_atomic(path, |w| w.write_all(&png))?;
        Ok(())
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
