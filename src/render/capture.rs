//! GPU skinning read back to the CPU, for the GPU-vs-CPU tests: every vertex is drawn as one point into an
//! RGBA32F texture at pixel `(id % width, id / width)` by the same skinning code as the viewport
//! (`shaders/skinning.glsl`), once for positions and once for normals. Alpha carries the vertex id, so the
//! read-back does not depend on the order of rows.

use glam::{Mat4, Vec3};
use three_d::{ClearState, Interpolation, RenderStates, Texture2D, Viewport, Wrapping};

use super::{CAPTURE_FRAG, CAPTURE_VERT, RenderError, SkinnedMesh, gl, skinning_program};

/// Skinned positions and normals of `mesh` under `skinning` matrices, computed on the GPU.
pub fn skin_on_gpu(
    context: &three_d::Context,
    mesh: &mut SkinnedMesh,
    skinning: &[Mat4],
    dual_quaternion: bool,
) -> Result<(Vec<Vec3>, Vec<Vec3>), RenderError> {
    let n = mesh.vertex_count();
    if n == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let program = skinning_program(context, CAPTURE_VERT, CAPTURE_FRAG, dual_quaternion)?;
    mesh.set_bones(skinning);
    let width = n.min(2048) as u32;
    let height = n.div_ceil(width as usize) as u32;
    let target = Texture2D::new_empty::<[f32; 4]>(
        context,
        width,
        height,
        Interpolation::Nearest,
        Interpolation::Nearest,
        None,
        Wrapping::ClampToEdge,
        Wrapping::ClampToEdge,
    );
    gl::enable_program_point_size(context);
    let mut out = [Vec::new(), Vec::new()];
    for (what, slot) in out.iter_mut().enumerate() {
        let color = target.as_color_target(None);
        color.clear(ClearState::color(0.0, 0.0, 0.0, -1.0));
        color.write::<RenderError>(|| {
            mesh.bind(&program);
            program.use_uniform("width", width as i32);
            program.use_uniform("height", height as i32);
            program.use_uniform("what", what as i32);
            gl::draw_points(
                &program,
                RenderStates::default(),
                Viewport::new_at_origo(width, height),
                n as u32,
                context,
            );
            Ok(())
        })?;
        let texels: Vec<[f32; 4]> = target.as_color_target(None).read();
        let mut values = vec![Vec3::NAN; n];
        for t in texels {
            let id = t[3];
            if id >= 0.0 && (id as usize) < n {
                values[id as usize] = Vec3::new(t[0], t[1], t[2]);
            }
        }
        *slot = values;
    }
    let [p, nrm] = out;
    Ok((p, nrm))
}
