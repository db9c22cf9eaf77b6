//! `SkinnedMesh`: a skin's GPU buffers. Vertex data (positions, normals, packed joints and weights, triangle
//! indices) is uploaded once, and again only when the weights change; per frame only the bone texture changes.
//! The Check shading's per-vertex scores are uploaded when a check finishes.

use glam::Mat4;
use three_d::{ElementBuffer, Interpolation, Texture2D, VertexBuffer, Wrapping};

use super::pack::{self, JointIndices, PackedSkinning};
use crate::model::Skin;

/// Joint indices as they are on the GPU.
enum JointBuffer {
    U8(VertexBuffer<[u8; 4]>),
    U16(VertexBuffer<[u16; 4]>),
}

pub struct SkinnedMesh {
    pub(crate) positions: VertexBuffer<[f32; 3]>,
    pub(crate) normals: VertexBuffer<[f32; 3]>,
    joints: JointBuffer,
    pub(crate) weights: VertexBuffer<[u8; 4]>,
    /// Per vertex, the Check shading's score.
    scores: VertexBuffer<f32>,
    pub(crate) triangles: ElementBuffer<u32>,
    pub(crate) bones: Texture2D,
    vertex_count: usize,
    joint_count: usize,
    texels: Vec<[f32; 4]>,
}

impl SkinnedMesh {
    /// Upload `skin` for a skeleton of `joint_count` joints (at most [`pack::MAX_BONES`] are skinned).
    pub fn new(context: &three_d::Context, skin: &Skin, joint_count: usize) -> Self {
        let positions: Vec<[f32; 3]> = skin.positions().iter().map(|p| p.to_array()).collect();
        let normals: Vec<[f32; 3]> = skin.normals().iter().map(|n| n.to_array()).collect();
        let indices: Vec<u32> = skin.triangles().iter().flatten().copied().collect();
        let packed = pack::pack_weights(skin.weights(), skin.vertex_count(), joint_count);
        let width = (joint_count.clamp(1, pack::MAX_BONES) * pack::TEXELS_PER_BONE) as u32;
        let bones = Texture2D::new_empty::<[f32; 4]>(
            context,
            width,
            1,
            Interpolation::Nearest,
            Interpolation::Nearest,
            None,
            Wrapping::ClampToEdge,
            Wrapping::ClampToEdge,
        );
        let mut mesh = Self {
            positions: VertexBuffer::new_with_data(context, &positions),
            normals: VertexBuffer::new_with_data(context, &normals),
            joints: JointBuffer::U8(VertexBuffer::new(context)),
            weights: VertexBuffer::new(context),
            scores: VertexBuffer::new_with_data(context, &vec![0.0f32; skin.vertex_count()]),
            triangles: ElementBuffer::new_with_data(context, &indices),
            bones,
            vertex_count: skin.vertex_count(),
            joint_count: joint_count.min(pack::MAX_BONES),
            texels: vec![[0.0; 4]; width as usize],
        };
        mesh.upload_packed(context, &packed);
        mesh.set_bones(&vec![Mat4::IDENTITY; joint_count]);
        mesh
    }

    /// Replace the skinning data (after the weights changed).
    pub fn set_weights(&mut self, context: &three_d::Context, skin: &Skin) {
        let packed = pack::pack_weights(skin.weights(), skin.vertex_count(), self.joint_count);
        self.upload_packed(context, &packed);
    }

    fn upload_packed(&mut self, context: &three_d::Context, packed: &PackedSkinning) {
        self.joints = match &packed.joints {
            JointIndices::U8(j) => JointBuffer::U8(VertexBuffer::new_with_data(context, j)),
            JointIndices::U16(j) => JointBuffer::U16(VertexBuffer::new_with_data(context, j)),
        };
        self.weights = VertexBuffer::new_with_data(context, &packed.weights);
    }

    /// Re-upload the skinning data of vertices `start..start + rows.len()` only (painting: a dab touches a few
    /// hundred vertices of a million). `rows` are (joints, weights) as [`pack::pack_row`] makes them.
    pub fn update_rows(&mut self, start: usize, rows: &[pack::PackedRow]) {
        if rows.is_empty() || start + rows.len() > self.vertex_count {
            return;
        }
        // three-d 0.19's `fill_subset` takes its offset in bytes (it goes straight to glBufferSubData), not in
        // elements; tests/gpu.rs::partial_weight_upload_changes_only_its_range caught it.
        let weights: Vec<[u8; 4]> = rows.iter().map(|r| r.1).collect();
        self.weights.fill_subset((start * 4) as u32, &weights);
        match &mut self.joints {
            JointBuffer::U8(b) => {
                let j: Vec<[u8; 4]> = rows.iter().map(|r| r.0.map(|x| x.min(255) as u8)).collect();
                b.fill_subset((start * 4) as u32, &j);
            }
            JointBuffer::U16(b) => {
                let j: Vec<[u16; 4]> = rows.iter().map(|r| r.0).collect();
                b.fill_subset((start * 8) as u32, &j);
            }
        }
    }

    /// Replace the per-vertex scores of the Check shading: zeros where `scores` is `None` or does not have one
    /// value per vertex.
    pub fn set_scores(&mut self, scores: Option<&[f32]>) {
        match scores {
            Some(s) if s.len() == self.vertex_count => self.scores.fill(s),
            _ => self.scores.fill(&vec![0.0f32; self.vertex_count]),
        }
    }

    /// Upload this frame's skinning matrices (`world_from_joint * inverse(bind)`), one per joint.
    pub fn set_bones(&mut self, skinning: &[Mat4]) {
        self.set_bone_texels(&pack::bone_texels(skinning));
    }

    /// Upload texels made by [`pack::bone_texels`] (extra joints are ignored, missing ones keep their texels).
    pub fn set_bone_texels(&mut self, texels: &[[f32; 4]]) {
        let n = texels.len().min(self.texels.len());
        self.texels[..n].copy_from_slice(&texels[..n]);
        self.bones.fill(&self.texels);
    }

    /// Bind the vertex attributes and the bone texture of `program` (every frame: three-d leaves attribute
    /// arrays disabled after a draw, see docs/architecture.md).
    pub(crate) fn bind(&self, program: &three_d::Program) {
        program.use_vertex_attribute("position", &self.positions);
        if program.requires_attribute("normal") {
            program.use_vertex_attribute("normal", &self.normals);
        }
        match &self.joints {
            JointBuffer::U8(b) => program.use_vertex_attribute("joints", b),
            JointBuffer::U16(b) => program.use_vertex_attribute("joints", b),
        }
        program.use_vertex_attribute("weights", &self.weights);
        if program.requires_attribute("score") {
            program.use_vertex_attribute("score", &self.scores);
        }
        program.use_texture("bones", &self.bones);
    }

    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    pub fn joint_count(&self) -> usize {
        self.joint_count
    }
}
