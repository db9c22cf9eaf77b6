//! The few OpenGL calls that three-d does not wrap, and a headless context for `render` and the GPU tests.
//!
//! The crate denies `unsafe` code except here and in `simd`'s dispatch to the x86-64-v3 copies. Here: EGL
//! display and context creation through glutin, loading GL entry points, and raw draws of points and lines, which three-d's `Program` (triangles only) does not offer. Each
//! call's safety argument is beside it.
//!
//! Headless context: the EGL device platform, surfaceless (no window, no display server). A hardware device is
//! preferred where one exists (the GPU machines); otherwise Mesa's software device (`EGL_MESA_device_software`,
//! llvmpipe), which is what CI has. `SKINBIND_EGL=software` forces the software device.
#![allow(unsafe_code)]

use std::sync::Arc;

use glutin::api::egl::context::PossiblyCurrentContext;
use glutin::config::{ConfigSurfaceTypes, ConfigTemplateBuilder};
use glutin::context::{ContextApi, ContextAttributesBuilder, GlProfile, Version};
use glutin::display::GlDisplay;
use three_d::context::HasContext;

/// Why no headless GL context could be made.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    #[error("no EGL device found (is libEGL with Mesa installed? apt-get install libegl1 libegl-mesa0)")]
    NoDevice,
    #[error("EGL: {0}")]
    Egl(String),
    #[error("GL: {0}")]
    Gl(String),
}

/// A current, surfaceless OpenGL 3.3 core context and three-d's context over it. Keep it alive while drawing;
/// it is current on the thread that made it.
pub struct Headless {
    pub context: three_d::Context,
    /// The device's name and the GL renderer string, for reports.
    pub renderer: String,
    _gl_context: PossiblyCurrentContext,
    _display: glutin::api::egl::display::Display,
}

impl Headless {
    pub fn new() -> Result<Self, HeadlessError> {
        use glutin::api::egl::{device::Device, display::Display};
        let egl = |e: glutin::error::Error| HeadlessError::Egl(e.to_string());
        let devices: Vec<Device> = Device::query_devices().map_err(egl)?.collect();
        let software = |d: &Device| d.extensions().contains("EGL_MESA_device_software");
        let force_software = std::env::var("SKINBIND_EGL").is_ok_and(|v| v == "software");
        let device = devices
            .iter()
            .find(|d| !force_software && !software(d))
            .or_else(|| devices.iter().find(|d| software(d)))
            .or(devices.first())
            .ok_or(HeadlessError::NoDevice)?;
        // SAFETY: no raw display handle is passed, so glutin makes the display from the device alone.
        let display = unsafe { Display::with_device(device, None) }.map_err(egl)?;
        let template = ConfigTemplateBuilder::new()
            .with_surface_type(ConfigSurfaceTypes::empty())
            .with_api(glutin::config::Api::OPENGL)
            .build();
        // SAFETY: the template names no native window.
        let config = unsafe { display.find_configs(template) }
            .map_err(egl)?
            .next()
            .ok_or_else(|| HeadlessError::Egl("no surfaceless OpenGL config".into()))?;
        let attributes = ContextAttributesBuilder::new()
            .with_context_api(ContextApi::OpenGl(Some(Version::new(3, 3))))
            .with_profile(GlProfile::Core)
            .build(None);
        // SAFETY: no window handle is given; the config belongs to this display.
        let not_current = unsafe { display.create_context(&config, &attributes) }.map_err(egl)?;
        let gl_context = not_current.make_current_surfaceless().map_err(egl)?;
        // SAFETY: the context is current on this thread and the loader is the display's own.
        let gl = unsafe { glow::Context::from_loader_function_cstr(|name| display.get_proc_address(name)) };
        // SAFETY: a plain string query on the current context.
        let renderer = unsafe { gl.get_parameter_string(glow::RENDERER) };
        let context = three_d::Context::from_gl_context(Arc::new(gl)).map_err(|e| HeadlessError::Gl(e.to_string()))?;
        Ok(Self {
            context,
            renderer,
            _gl_context: gl_context,
            _display: display,
        })
    }
}

/// Draw `count` vertices of the bound attributes as points (three-d's programs draw triangles only).
pub fn draw_points(
    program: &three_d::Program,
    states: three_d::RenderStates,
    viewport: three_d::Viewport,
    count: u32,
    gl: &three_d::Context,
) {
    program.draw_with(states, viewport, || {
        // SAFETY: three-d bound the program and its attributes, each with at least `count` elements.
        unsafe { gl.draw_arrays(glow::POINTS, 0, count as i32) }
    });
}

/// Draw `count` vertices of the bound attributes as line segments (pairs of vertices).
pub fn draw_line_arrays(
    program: &three_d::Program,
    states: three_d::RenderStates,
    viewport: three_d::Viewport,
    count: u32,
    gl: &three_d::Context,
) {
    program.draw_with(states, viewport, || {
        // SAFETY: three-d bound the program and its attributes, each with `count` elements.
        unsafe { gl.draw_arrays(glow::LINES, 0, count as i32) }
    });
}

/// Clear `viewport` of the bound framebuffer to `color` and the far depth, leaving the rest of it alone (the
/// editor's viewport is part of egui's frame).
pub fn clear_viewport(gl: &three_d::Context, viewport: three_d::Viewport, color: [f32; 4]) {
    gl.set_scissor(three_d::ScissorBox {
        x: viewport.x,
        y: viewport.y,
        width: viewport.width,
        height: viewport.height,
    });
    // SAFETY: state changes and a clear on the current context; the scissor limits the clear to the viewport.
    unsafe {
        gl.color_mask(true, true, true, true);
        gl.depth_mask(true);
        gl.clear_color(color[0], color[1], color[2], color[3]);
        gl.clear_depth_f32(1.0);
        gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
    }
    // The scissor stays on the viewport: nothing of this frame belongs outside it.
}

/// Draw triangles as their edges (wireframe overlay): polygon mode LINE around one indexed draw.
pub fn draw_wireframe(
    program: &three_d::Program,
    states: three_d::RenderStates,
    viewport: three_d::Viewport,
    indices: &three_d::ElementBuffer<u32>,
    gl: &three_d::Context,
) {
    program.draw_elements_with(states, viewport, indices, || {
        // SAFETY: polygon mode is restored before returning; the element buffer is bound by three-d.
        unsafe {
            gl.polygon_mode(glow::FRONT_AND_BACK, glow::LINE);
            gl.draw_elements(glow::TRIANGLES, indices.count() as i32, glow::UNSIGNED_INT, 0);
            gl.polygon_mode(glow::FRONT_AND_BACK, glow::FILL);
        }
    });
}

/// Enable points sized by the vertex shader (`gl_PointSize`), for the capture pass.
pub fn enable_program_point_size(gl: &three_d::Context) {
    // SAFETY: a state toggle on the current context.
    unsafe { gl.enable(glow::PROGRAM_POINT_SIZE) }
}

/// The framebuffer bound for drawing now (eframe's paint callback draws into it, not always the screen).
pub fn bound_draw_framebuffer(gl: &three_d::Context) -> Option<glow::NativeFramebuffer> {
    // SAFETY: a plain integer query on the current context.
    let id = unsafe { gl.get_parameter_i32(glow::DRAW_FRAMEBUFFER_BINDING) };
    std::num::NonZeroU32::new(id as u32).map(glow::NativeFramebuffer)
}
