//! The binding's settings ([`BindOptions`], saved with the document), its errors and its report (serde types).

use super::geodesic;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BindMethod {
    /// Straight distances to the bones, with visibility and parts (the `bind` module's doc).
    Line,
    Volume,
    Hybrid,
    /// The default: distances through the voxelised solid of the mesh ([`geodesic`]); the closest to the artists'
    /// weights on the shared characters (docs/binding.md).
    #[default]
    Geodesic,
}

impl BindMethod {
    /// The blend ratio each method is measured best with (docs/binding.md): geodesic distances grow faster away
    /// from a bone than straight ones, so they blend over a smaller ratio.
    pub fn default_blend_ratio(self) -> f32 {
        match self {
            Self::Geodesic => 1.5,
            _ => 2.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Line => "line",
            Self::Volume => "volume",
            Self::Hybrid => "hybrid",
            Self::Geodesic => "geodesic",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VolumeShape {
    #[default]
    Capsule,
    Ellipsoid,
}

/// One joint's containment volume settings; saved with the document.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct JointVolume {
    /// Radius in world units; `None` sizes it automatically.
    pub radius: Option<f32>,
    /// Scales the bone's segments about its pivot before the volume is built around them.
    pub length_scale: f32,
}

impl Default for JointVolume {
    fn default() -> Self {
        Self {
            radius: None,
            length_scale: 1.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct BindOptions {
    pub method: BindMethod,
    pub max_influences: usize,
    pub rigid: bool,
    /// Bones farther than this times the nearest bone's distance get no weight (> 1).
    pub blend_ratio: f32,
    /// Exponent of the inverse-distance falloff.
    pub falloff_power: f32,
    /// Drop bones the surface hides from the vertex.
    pub visibility: bool,
    /// Extend box-less leaf bones into the mesh, to near where they meet its surface.
    pub leaf_to_surface: bool,
    /// Weigh near bones by their end distance (less reach past a short bone's ends) rather than the plain
    /// point-to-segment distance.
    pub end_distance: bool,
    /// Weight each connected part of the mesh only by the bones that reach it.
    pub parts: bool,
    pub volume_shape: VolumeShape,
    /// Per joint, by index; missing entries use the defaults.
    pub volumes: Vec<JointVolume>,
    /// Per joint, by index: whether it deforms the mesh. A joint that does not (a control: an IK or pole target,
    /// a master root) gets no weight and its bone attracts no vertex; it still moves its children. Missing entries
    /// deform.
    pub deform: Vec<bool>,
    /// Let the joints that look like controls deform as `deform` says: those whose names mark them so (a word
    /// `ik`, `pole`, `target`, `ctrl` or `control`: `IKFrontLeft`, `PoleTarget.L`) and, with the geodesic method,
    /// a root with children whose pivot lies outside the mesh's solid (a master root on the ground). Off by
    /// default: they do not deform, and the report names them (`excluded_controls`).
    pub bind_controls: bool,
    /// Cells along the longest side of the voxel grid (geodesic method).
    pub resolution: usize,
}

impl Default for BindOptions {
    fn default() -> Self {
        Self::for_method(BindMethod::default())
    }
}

impl BindOptions {
    /// The defaults for `method` (its blend ratio differs).
    pub fn for_method(method: BindMethod) -> Self {
        Self {
            method,
            max_influences: 4,
            rigid: false,
            blend_ratio: method.default_blend_ratio(),
            falloff_power: 4.0,
            visibility: true,
            leaf_to_surface: true,
            end_distance: true,
            parts: true,
            volume_shape: VolumeShape::default(),
            volumes: Vec::new(),
            deform: Vec::new(),
            bind_controls: false,
            resolution: DEFAULT_RESOLUTION,
        }
    }
}

/// The geodesic method's voxel grid: cells along the longest side.
pub const DEFAULT_RESOLUTION: usize = 128;
/// The finest grid allowed (512³ cells is 134 million).
pub const MAX_RESOLUTION: usize = 512;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BindError {
    #[error("voxel resolution {0} must be from 8 to {MAX_RESOLUTION}")]
    Resolution(usize),
    #[error("{matrices} bind matrices for a skeleton of {joints} joints")]
    Matrices { matrices: usize, joints: usize },
    #[error("max influences must be at least 1")]
    NoInfluences,
    #[error("blend ratio {0} must be a finite number above 1")]
    BlendRatio(f32),
    #[error("falloff power {0} must be a finite number from 0 to 64")]
    FalloffPower(f32),
    #[error("joint {joint}'s volume radius {radius} must be a finite positive number")]
    Radius { joint: usize, radius: f32 },
    #[error("a vertex position is not finite (vertex {0})")]
    Position(usize),
    #[error("no joint deforms: every joint is excluded")]
    NothingDeforms,
}

impl BindOptions {
    /// Whether joint `j` deforms (see [`BindOptions::deform`]).
    pub fn deforms(&self, j: usize) -> bool {
        self.deform.get(j).copied().unwrap_or(true)
    }

    /// These options with `joints` not deforming, for a rig of `joint_count` joints (the per-joint list made
    /// that long first, missing entries deforming).
    pub fn without(&self, joints: impl IntoIterator<Item = usize>, joint_count: usize) -> Self {
        let mut o = self.clone();
        o.deform.resize(joint_count, true);
        for j in joints {
            if let Some(d) = o.deform.get_mut(j) {
                *d = false;
            }
        }
        o
    }
}

/// What a bind did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct BindReport {
    pub method: String,
    pub vertices: usize,
    pub joints: usize,
    pub max_influences: usize,
    pub rigid: bool,
    pub visibility: bool,
    /// (stage, milliseconds), in order.
    pub stages: Vec<(String, f64)>,
    pub total_ms: f64,
    /// Joints with no weight on any vertex, by index and name.
    pub bones_without_vertices: Vec<(usize, String)>,
    /// Near bones dropped because the surface hides them.
    pub hidden_candidates: usize,
    /// Vertices whose every near bone was hidden (they keep the nearest).
    pub vertices_all_hidden: usize,
    /// Box-less leaf bones extended to the surface (tails included).
    pub leaves_extended: usize,
    /// Of those, the leaves run toward another joint's pivot on their line (a lower leg toward an IK foot's;
    /// [`super::bones::SegmentKind::Tail`]).
    pub leaf_tails: usize,
    /// The rig's bone axis that box-less leaves point along (`"+y"` for a rig made in Blender), if it has one
    /// ([`super::bones::bone_axis`]).
    pub bone_axis: Option<String>,
    /// Heads on short necks whose bones were made to start where the neck widens ([`super::widen`]).
    pub heads_started_at_widening: usize,
    /// Connected parts of the mesh (after welding), when the parts option is on.
    pub parts: usize,
    /// Vertices whose nearest bone belongs to another part (they were weighted among their part's bones).
    pub vertices_nearest_elsewhere: usize,
    /// Vertices inside no containment volume (volume and hybrid methods).
    pub vertices_in_no_volume: usize,
    /// The radius each volume got.
    pub volume_radii: Vec<f32>,
    /// The voxel grid of the geodesic method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geodesic: Option<geodesic::GeodesicReport>,
    pub warnings: Vec<String>,
    /// Deforming joints that look like controls (each also named in a warning), ascending.
    pub controls: Vec<usize>,
    /// Joints left out because they look like controls (`BindOptions::bind_controls` off), each
    /// also named in a warning, ascending.
    pub excluded_controls: Vec<usize>,
}
