//! The renderer: turns model data into GPU objects and draws them with three-d and our own GLSL (`shaders/`).
//!
//! - [`pack`]: per-vertex skinning data as bytes, the bone texture's texels (pure, no GL).
//! - [`camera`]: the orbit camera (pure glam).
//! - [`overlay`]: grid and skeleton lines (pure).
//! - [`skinned`]: a skin's GPU buffers.
//! - [`score`]: the Check shading's colour map (shared by the shader and the Check panel's legend).
//! - [`Renderer`]: programs and drawing of one frame into the bound framebuffer (the editor's viewport, the
//!   `render` command's offscreen target).
//! - [`capture`]: GPU skinning read back for the GPU-vs-CPU tests.
//! - [`offscreen`]: rendering to an image without a window.
//! - [`gl`]: the headless context and the few raw GL calls (`unsafe`, as is the SIMD dispatch).
//!
//! Shaders are built from `shaders/skinning.glsl` followed by the stage's file; dual quaternion skinning is the
//! same source with `#define DQS`. three-d prepends `#version 330 core`.

pub mod camera;
pub mod capture;
pub mod gl;
pub mod offscreen;
pub mod overlay;
pub mod pack;
pub mod score;
pub mod skinned;

use glam::{Mat4, Vec3};
use three_d::{Blend, Cull, DepthTest, Program, RenderStates, VertexBuffer, Viewport, WriteMask};

pub use camera::{OrbitCamera, Projection, ViewPreset};
pub use skinned::SkinnedMesh;

use crate::model::{Skeleton, Skin};

pub const SKINNING_GLSL: &str = include_str!("../../shaders/skinning.glsl");
pub const SKIN_VERT: &str = include_str!("../../shaders/skin.vert");
pub const SHADE_FRAG: &str = include_str!("../../shaders/shade.frag");
pub const LINES_VERT: &str = include_str!("../../shaders/lines.vert");
pub const LINES_FRAG: &str = include_str!("../../shaders/lines.frag");
pub const CAPTURE_VERT: &str = include_str!("../../shaders/capture.vert");
pub const CAPTURE_FRAG: &str = include_str!("../../shaders/capture.frag");

/// Why the renderer could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("shader: {0}")]
    Shader(String),
    #[error(transparent)]
    Headless(#[from] gl::HeadlessError),
    #[error("{0}")]
    Other(String),
}

/// Compile a skinning program: `skinning.glsl` then `vert`, with `#define DQS` for dual quaternions.
pub fn skinning_program(
    context: &three_d::Context,
    vert: &str,
    frag: &str,
    dual_quaternion: bool,
) -> Result<Program, RenderError> {
    let defines = if dual_quaternion { "#define DQS\n" } else { "" };
    let source = format!("{defines}{SKINNING_GLSL}\n{vert}");
    Program::from_source(context, &source, frag).map_err(|e| RenderError::Shader(e.to_string()))
}

/// How the skin is coloured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Shading {
    /// Lit by two coloured lights.
    #[default]
    Shaded,
    /// The selected joint's weights, 0 black to 1 white.
    Weights,
    /// Number of influences per vertex.
    Influences,
    /// Lit, with vertices that have no weight in magenta.
    Unweighted,
    /// Each vertex's worst score in the last range-of-motion check ([`score`]'s colour map).
    Check,
}

impl Shading {
    pub const ALL: [Shading; 5] = [
        Shading::Shaded,
        Shading::Weights,
        Shading::Influences,
        Shading::Unweighted,
        Shading::Check,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Shading::Shaded => "Shaded",
            Shading::Weights => "Weights",
            Shading::Influences => "Influence count",
            Shading::Unweighted => "Unweighted vertices",
            Shading::Check => "Check scores",
        }
    }

    fn mode(self) -> i32 {
        match self {
            Shading::Shaded => 0,
            Shading::Weights => 1,
            Shading::Influences => 2,
            Shading::Unweighted => 3,
            Shading::Check => 5,
        }
    }
}

/// What the viewport shows (saved with the editor's settings).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ViewSettings {
    pub shading: Shading,
    /// Dual quaternion skinning instead of linear blend.
    pub dual_quaternion: bool,
    pub wireframe: bool,
    pub skeleton: bool,
    pub grid: bool,
    pub background: [f32; 3],
}

impl Default for ViewSettings {
    fn default() -> Self {
        Self {
            shading: Shading::Shaded,
            dual_quaternion: false,
            wireframe: false,
            skeleton: true,
            grid: true,
            background: [0.18, 0.19, 0.21],
        }
    }
}

/// One frame's inputs.
pub struct Frame<'a> {
    pub camera: &'a OrbitCamera,
    pub skeleton: &'a Skeleton,
    /// The posed skeleton's world matrices, one per joint.
    pub world_from_joint: &'a [Mat4],
    /// The bind pose's world matrices (the skin's bindings, else the skeleton's file pose).
    pub bind_world_from_joint: &'a [Mat4],
    pub selected: Option<usize>,
    /// Per joint: whether it deforms; joints that do not (controls) are drawn grey. Empty: all deform.
    pub deform: &'a [bool],
    /// The plane the grid lies on (the model's lowest point).
    pub ground: f32,
    /// The model's size, for the grid's cell.
    pub size: f32,
}

/// The CPU's share of one frame: the bone texture's texels and the skeleton overlay. It touches no vertex, so
/// its cost grows with the joints, not the mesh (benches/frame.rs).
pub struct PreparedFrame {
    pub bone_texels: Vec<[f32; 4]>,
    pub skeleton_lines: overlay::Lines,
}

pub fn prepare_frame(frame: &Frame<'_>, settings: &ViewSettings) -> PreparedFrame {
    let skinning = crate::deform::skinning_matrices(frame.world_from_joint, frame.bind_world_from_joint);
    PreparedFrame {
        bone_texels: pack::bone_texels(&skinning),
        skeleton_lines: if settings.skeleton {
            overlay::skeleton(frame.skeleton, frame.world_from_joint, frame.selected, frame.deform)
        } else {
            overlay::Lines::default()
        },
    }
}

/// Line vertices on the GPU.
struct LineBuffers {
    positions: VertexBuffer<[f32; 3]>,
    colors: VertexBuffer<[f32; 4]>,
    count: u32,
}

impl LineBuffers {
    fn new(context: &three_d::Context, lines: &overlay::Lines) -> Self {
        let positions: Vec<[f32; 3]> = lines
            .segments
            .iter()
            .flat_map(|s| [s[0].to_array(), s[1].to_array()])
            .collect();
        let colors: Vec<[f32; 4]> = lines.colors.iter().flat_map(|&c| [c, c]).collect();
        Self {
            positions: VertexBuffer::new_with_data(context, &positions),
            colors: VertexBuffer::new_with_data(context, &colors),
            count: positions.len() as u32,
        }
    }
}

pub fn to_three_d(m: Mat4) -> three_d::Mat4 {
    three_d::Mat4::from(m.to_cols_array_2d())
}

/// Programs and GPU objects of the viewport. Build it on the thread whose GL context is current.
pub struct Renderer {
    context: three_d::Context,
    linear: Program,
    dual_quaternion: Program,
    lines: Program,
    mesh: Option<SkinnedMesh>,
    /// The grid's buffers and the (ground, size) they were made for: rebuilt only when those change.
    grid: Option<((f32, f32), LineBuffers)>,
}

impl Renderer {
    pub fn new(context: &three_d::Context) -> Result<Self, RenderError> {
        let lines =
            Program::from_source(context, LINES_VERT, LINES_FRAG).map_err(|e| RenderError::Shader(e.to_string()))?;
        let shade = format!("{}\n{SHADE_FRAG}", score::glsl());
        Ok(Self {
            context: context.clone(),
            linear: skinning_program(context, SKIN_VERT, &shade, false)?,
            dual_quaternion: skinning_program(context, SKIN_VERT, &shade, true)?,
            lines,
            mesh: None,
            grid: None,
        })
    }

    pub fn context(&self) -> &three_d::Context {
        &self.context
    }

    /// Upload a skin (or none) for a skeleton of `joint_count` joints.
    pub fn set_skin(&mut self, skin: Option<&Skin>, joint_count: usize) {
        self.mesh = skin.map(|s| SkinnedMesh::new(&self.context, s, joint_count));
    }

    /// Re-upload the skinning data of the current skin after its weights changed.
    pub fn set_weights(&mut self, skin: &Skin) {
        if let Some(m) = &mut self.mesh {
            m.set_weights(&self.context, skin);
        }
    }

    /// Per-vertex scores for the Check shading (zeros where `scores` is `None` or of another length).
    pub fn set_scores(&mut self, scores: Option<&[f32]>) {
        if let Some(m) = &mut self.mesh {
            m.set_scores(scores);
        }
    }

    pub fn mesh(&self) -> Option<&SkinnedMesh> {
        self.mesh.as_ref()
    }

    pub fn mesh_mut(&mut self) -> Option<&mut SkinnedMesh> {
        self.mesh.as_mut()
    }

    /// Draw one frame into the bound framebuffer's `viewport` (pixels, origin bottom-left), clearing it first.
    pub fn draw(&mut self, viewport: Viewport, frame: &Frame<'_>, settings: &ViewSettings) {
        let prepared = prepare_frame(frame, settings);
        let [r, g, b] = settings.background;
        gl::clear_viewport(&self.context, viewport, [r, g, b, 1.0]);
        let clip_from_world = frame.camera.clip_from_world(viewport.aspect());
        let solid = RenderStates {
            write_mask: WriteMask::COLOR_AND_DEPTH,
            depth_test: DepthTest::LessOrEqual,
            blend: Blend::Disabled,
            cull: Cull::None,
        };
        if settings.grid {
            let key = (frame.ground, frame.size);
            if self.grid.as_ref().is_none_or(|(k, _)| *k != key) {
                let g = overlay::grid(frame.ground, overlay::grid_cell(frame.size), 10);
                self.grid = Some((key, LineBuffers::new(&self.context, &g)));
            }
            if let Some((_, buffers)) = &self.grid {
                self.draw_line_buffers(buffers, clip_from_world, viewport, solid);
            }
        }
        if let Some(mesh) = &mut self.mesh {
            mesh.set_bone_texels(&prepared.bone_texels);
            let program = if settings.dual_quaternion {
                &self.dual_quaternion
            } else {
                &self.linear
            };
            mesh.bind(program);
            program.use_uniform("clip_from_world", to_three_d(clip_from_world));
            program.use_uniform_if_required(
                "eye",
                three_d::vec3(frame.camera.eye().x, frame.camera.eye().y, frame.camera.eye().z),
            );
            program.use_uniform_if_required("view_joint", frame.selected.map_or(-1, |j| j as i32));
            program.use_uniform("mode", settings.shading.mode());
            program.use_uniform_if_required("flat_color", three_d::vec4(0.0f32, 0.0, 0.0, 1.0));
            program.draw_elements(solid, viewport, &mesh.triangles);
            if settings.wireframe {
                mesh.bind(program);
                program.use_uniform("mode", 4);
                program.use_uniform_if_required("flat_color", three_d::vec4(0.05f32, 0.05, 0.06, 1.0));
                gl::draw_wireframe(program, solid, viewport, &mesh.triangles, &self.context);
            }
        }
        if settings.skeleton {
            // In front of the skin, as Blender's "In Front" bones.
            let front = RenderStates {
                depth_test: DepthTest::Always,
                ..solid
            };
            self.draw_lines(&prepared.skeleton_lines, clip_from_world, viewport, front);
        }
    }

    fn draw_lines(&self, lines: &overlay::Lines, clip_from_world: Mat4, viewport: Viewport, states: RenderStates) {
        if lines.is_empty() {
            return;
        }
        let buffers = LineBuffers::new(&self.context, lines);
        self.draw_line_buffers(&buffers, clip_from_world, viewport, states);
    }

    fn draw_line_buffers(
        &self,
        buffers: &LineBuffers,
        clip_from_world: Mat4,
        viewport: Viewport,
        states: RenderStates,
    ) {
        self.lines.use_vertex_attribute("position", &buffers.positions);
        self.lines.use_vertex_attribute("color", &buffers.colors);
        self.lines.use_uniform("clip_from_world", to_three_d(clip_from_world));
        gl::draw_line_arrays(&self.lines, states, viewport, buffers.count, &self.context);
    }
}

/// The ground height and size of what a frame shows: the skin's bounds, else the skeleton's pivots.
pub fn ground_and_size(skin: Option<&Skin>, world_from_joint: &[Mat4]) -> (f32, f32) {
    let pivots: Vec<Vec3> = world_from_joint.iter().map(|m| m.w_axis.truncate()).collect();
    let b = skin
        .and_then(Skin::bounds)
        .or_else(|| crate::model::skin::bounds(&pivots));
    match b {
        Some((lo, hi)) => (lo.y, (hi - lo).length().max(1e-3)),
        None => (0.0, 1.0),
    }
}
