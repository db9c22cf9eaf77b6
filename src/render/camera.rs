//! The viewport camera: an orbit camera as in Blender, pure glam math (no GL), so the editor's mouse handling
//! and the `render` command share it and tests check it without a GPU.
//!
//! Conventions: right-handed, y up (the CSE169 files' convention). The camera looks at `target` from
//! `distance` away, turned `yaw` radians about +y and `pitch` radians up from the horizon; yaw 0 and pitch 0
//! look down -z from +z (the front view). Clip space is OpenGL's (depth -1..1). Pixels are counted from the
//! top-left corner of the viewport, y down (egui's convention).

use glam::camera::rh::{proj::opengl, view::look_at_mat4};
use glam::{Mat4, Vec2, Vec3};

/// Perspective (vertical field of view) or orthographic (the view height follows the distance).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Projection {
    Perspective,
    Orthographic,
}

/// Standard views (numpad 1, 3, 7 in Blender).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewPreset {
    Front,
    Side,
    Top,
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct OrbitCamera {
    pub target: Vec3,
    pub distance: f32,
    pub yaw: f32,
    pub pitch: f32,
    /// Vertical field of view in radians (perspective).
    pub fov_y: f32,
    pub projection: Projection,
}

impl Default for OrbitCamera {
    fn default() -> Self {
        Self {
            target: Vec3::ZERO,
            distance: 5.0,
            yaw: 0.5,
            pitch: 0.3,
            fov_y: 45f32.to_radians(),
            projection: Projection::Perspective,
        }
    }
}

/// Pitch stays short of straight up or down so the view never flips.
const MAX_PITCH: f32 = 1.5607964; // 89.4 degrees

impl OrbitCamera {
    /// Unit vector from the target towards the eye.
    pub fn back(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        Vec3::new(sy * cp, sp, cy * cp)
    }

    pub fn eye(&self) -> Vec3 {
        self.target + self.back() * self.distance
    }

    pub fn view_from_world(&self) -> Mat4 {
        look_at_mat4(self.eye(), self.target, Vec3::Y)
    }

    /// Near and far planes around the target, wide enough for a model of the framing size.
    fn planes(&self) -> (f32, f32) {
        let d = self.distance.max(1e-4);
        (d * 0.01, d * 100.0)
    }

    pub fn clip_from_view(&self, aspect: f32) -> Mat4 {
        let aspect = if aspect.is_finite() && aspect > 0.0 {
            aspect
        } else {
            1.0
        };
        let (near, far) = self.planes();
        match self.projection {
            Projection::Perspective => opengl::perspective(self.fov_y, aspect, near, far),
            Projection::Orthographic => {
                let h = self.distance * (self.fov_y * 0.5).tan();
                let w = h * aspect;
                opengl::orthographic(-w, w, -h, h, -far, far)
            }
        }
    }

    pub fn clip_from_world(&self, aspect: f32) -> Mat4 {
        self.clip_from_view(aspect) * self.view_from_world()
    }

    /// Turn by a mouse drag of `delta` pixels (Blender's middle-mouse orbit).
    pub fn orbit(&mut self, delta: Vec2) {
        self.yaw -= delta.x * 0.008;
        self.pitch = (self.pitch + delta.y * 0.008).clamp(-MAX_PITCH, MAX_PITCH);
    }

    /// Move the target in the view plane so the point under the mouse follows a drag of `delta` pixels in a
    /// viewport `height` pixels tall (Shift + middle mouse).
    pub fn pan(&mut self, delta: Vec2, height: f32) {
        let per_pixel = 2.0 * self.distance * (self.fov_y * 0.5).tan() / height.max(1.0);
        let view = self.view_from_world();
        let right = view.row(0).truncate();
        let up = view.row(1).truncate();
        self.target += (-right * delta.x + up * delta.y) * per_pixel;
    }

    /// Zoom by `steps` wheel notches (positive: closer).
    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * 0.85f32.powf(steps)).clamp(1e-4, 1e7);
    }

    pub fn set_preset(&mut self, preset: ViewPreset) {
        (self.yaw, self.pitch) = match preset {
            ViewPreset::Front => (0.0, 0.0),
            ViewPreset::Side => (std::f32::consts::FRAC_PI_2, 0.0),
            ViewPreset::Top => (0.0, MAX_PITCH),
        };
    }

    /// Look at the box `lo..hi` from far enough that its bounding sphere fills the view's height (Home / F).
    pub fn frame(&mut self, lo: Vec3, hi: Vec3) {
        self.frame_aspect(lo, hi, 1.0);
    }

    /// [`Self::frame`] for a view `aspect` (width / height) wide: the sphere fits both ways, so a view narrower
    /// than tall frames by its width.
    pub fn frame_aspect(&mut self, lo: Vec3, hi: Vec3, aspect: f32) {
        if !(lo.is_finite() && hi.is_finite()) {
            return;
        }
        self.target = (lo + hi) * 0.5;
        let radius = ((hi - lo).length() * 0.5).max(1e-3);
        let tan_y = (self.fov_y * 0.5).tan();
        let aspect = if aspect.is_finite() && aspect > 0.0 {
            aspect
        } else {
            1.0
        };
        let half = (tan_y * aspect.min(1.0)).atan();
        self.distance = radius / half.sin() * 1.1;
    }

    /// The pixel (top-left origin) where world point `p` lands in a `size` viewport, with its depth in clip
    /// space; None behind the camera.
    pub fn project(&self, p: Vec3, size: Vec2) -> Option<(Vec2, f32)> {
        let c = self.clip_from_world(size.x / size.y) * p.extend(1.0);
        if c.w <= 1e-9 {
            return None;
        }
        let ndc = c.truncate() / c.w;
        Some((
            Vec2::new((ndc.x + 1.0) * 0.5 * size.x, (1.0 - ndc.y) * 0.5 * size.y),
            ndc.z,
        ))
    }

    /// The world length that one pixel covers at `point`, in a viewport `height` pixels tall (to turn a brush
    /// radius in pixels into world units where the brush touches the surface).
    pub fn world_per_pixel(&self, point: Vec3, height: f32) -> f32 {
        let h = height.max(1.0);
        let half = (self.fov_y * 0.5).tan();
        match self.projection {
            Projection::Perspective => {
                let depth = (point - self.eye()).dot(-self.back()).max(1e-6);
                2.0 * depth * half / h
            }
            Projection::Orthographic => 2.0 * self.distance * half / h,
        }
    }

    /// The ray through `pixel` (origin, unit direction) in world space.
    pub fn ray(&self, pixel: Vec2, size: Vec2) -> (Vec3, Vec3) {
        let inv = self.clip_from_world(size.x / size.y).inverse();
        let ndc = Vec2::new(pixel.x / size.x * 2.0 - 1.0, 1.0 - pixel.y / size.y * 2.0);
        let a = inv.project_point3(ndc.extend(-1.0));
        let b = inv.project_point3(ndc.extend(1.0));
        (a, (b - a).normalize_or(-self.back()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_view_looks_down_minus_z_and_target_projects_to_the_centre() {
        let mut c = OrbitCamera::default();
        c.set_preset(ViewPreset::Front);
        c.target = Vec3::new(1.0, 2.0, 3.0);
        assert!((c.eye() - Vec3::new(1.0, 2.0, 8.0)).length() < 1e-5);
        let (px, _) = c.project(c.target, Vec2::new(800.0, 600.0)).expect("in front");
        assert!((px - Vec2::new(400.0, 300.0)).length() < 1e-3);
        // A point up and to the right lands up (smaller y) and right of the centre.
        let (q, _) = c
            .project(c.target + Vec3::new(0.5, 0.5, 0.0), Vec2::new(800.0, 600.0))
            .expect("in front");
        assert!(q.x > 400.0 && q.y < 300.0);
        assert!(
            c.project(c.eye() + Vec3::Z, Vec2::new(800.0, 600.0)).is_none(),
            "behind the camera"
        );
    }

    #[test]
    fn ray_through_a_projected_point_passes_through_it() {
        for projection in [Projection::Perspective, Projection::Orthographic] {
            let c = OrbitCamera {
                projection,
                ..OrbitCamera::default()
            };
            let size = Vec2::new(640.0, 480.0);
            let p = Vec3::new(0.3, -0.2, 0.4);
            let (px, _) = c.project(p, size).expect("visible");
            let (o, d) = c.ray(px, size);
            let off = (p - o) - d * (p - o).dot(d);
            assert!(off.length() < 1e-4, "{projection:?}: {}", off.length());
        }
    }

    #[test]
    fn framing_fits_the_box_and_pitch_is_clamped() {
        let mut c = OrbitCamera::default();
        c.frame(Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0));
        assert_eq!(c.target, Vec3::new(0.0, 1.0, 0.0));
        let size = Vec2::new(500.0, 500.0);
        for corner in [
            Vec3::new(-1.0, 0.0, -1.0),
            Vec3::new(1.0, 2.0, 1.0),
            Vec3::new(1.0, 0.0, -1.0),
        ] {
            let (px, _) = c.project(corner, size).expect("visible");
            assert!(
                px.x > 0.0 && px.x < 500.0 && px.y > 0.0 && px.y < 500.0,
                "{corner} at {px}"
            );
        }
        c.orbit(Vec2::new(0.0, 1e6));
        assert!(c.pitch <= MAX_PITCH);
        let before = c.distance;
        c.zoom(1.0);
        assert!(c.distance < before);
    }

    #[test]
    fn world_per_pixel_matches_projection() {
        for projection in [Projection::Perspective, Projection::Orthographic] {
            let c = OrbitCamera {
                projection,
                ..OrbitCamera::default()
            };
            let size = Vec2::new(640.0, 480.0);
            let p = c.target + Vec3::new(0.1, 0.0, 0.0);
            let (a, _) = c.project(p, size).expect("visible");
            let right = c.view_from_world().row(0).truncate();
            let (b, _) = c.project(p + right * 0.01, size).expect("visible");
            let measured = 0.01 / (b - a).length();
            let w = c.world_per_pixel(p, size.y);
            assert!((measured - w).abs() < 0.01 * w, "{projection:?}: {measured} vs {w}");
        }
    }

    #[test]
    fn pan_moves_the_target_in_the_view_plane() {
        let mut c = OrbitCamera::default();
        c.set_preset(ViewPreset::Front);
        c.pan(Vec2::new(-100.0, 0.0), 500.0);
        assert!(c.target.x > 0.0 && c.target.y.abs() < 1e-6 && c.target.z.abs() < 1e-6);
    }
}
