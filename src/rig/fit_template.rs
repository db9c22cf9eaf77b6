//! What a fit starts from ([`super::fit`]), as the CLI's `fit` and the editor's Fit to mesh both make it: a
//! shipped template (in its body box, with its trunk's widths), a rig read from files (its skeleton in the pose
//! its mesh was made in, with that mesh and its weights), or a skeleton alone in a given pose.

use glam::{Mat4, Vec3};

use super::fit::FitInput;
use super::templates::{BODY_BOX, TemplateKind, body_widths, template, trunk_axis};
use crate::model::{Pose, Skeleton, Skin, world_from_joint};

/// A template for [`super::fit::fit_template`].
#[derive(Clone, Debug)]
pub struct TemplateRig {
    pub skeleton: Skeleton,
    /// The joints' world matrices in the pose the skin's mesh (or the body box) was made in.
    pub world: Vec<Mat4>,
    pub skin: Option<Skin>,
    /// The shipped template it is, when it is one (its body box and trunk widths then apply).
    pub kind: Option<TemplateKind>,
    widths: Option<Vec<Option<f32>>>,
}

impl TemplateRig {
    /// A shipped template at zero rotation in its body box.
    pub fn shipped(kind: TemplateKind) -> Self {
        let skeleton = template(kind);
        let world = world_from_joint(&skeleton, &Pose::zero(&skeleton));
        let widths = body_widths(kind, &skeleton);
        Self {
            skeleton,
            world,
            skin: None,
            kind: Some(kind),
            widths,
        }
    }

    /// A rig read from files: the skin's bindings give the pose when they fit the skeleton, else the file pose.
    pub fn with_skin(skeleton: Skeleton, skin: Option<Skin>) -> Self {
        let world = match skin.as_ref().and_then(Skin::bindings) {
            Some(b) if b.len() == skeleton.len() => b.to_vec(),
            _ => world_from_joint(&skeleton, &Pose::from_file(&skeleton)),
        };
        Self::posed(skeleton, world, skin)
    }

    /// A skeleton in the pose `world` gives, with its skin when it has one (made in that pose).
    pub fn posed(skeleton: Skeleton, world: Vec<Mat4>, skin: Option<Skin>) -> Self {
        Self {
            skeleton,
            world,
            skin,
            kind: None,
            widths: None,
        }
    }

    /// The fit's input for this template into the mesh `positions`, `triangles`.
    pub fn input<'a>(&'a self, positions: &'a [Vec3], triangles: &'a [[u32; 3]]) -> FitInput<'a> {
        FitInput {
            template: &self.skeleton,
            template_world: &self.world,
            template_mesh: self.skin.as_ref().map(|s| (s.positions(), s.triangles())),
            template_weights: self.skin.as_ref().and_then(Skin::weights),
            template_box: self.kind.map(|_| BODY_BOX),
            template_widths: self.widths.as_deref(),
            template_trunk: self.kind.and_then(trunk_axis),
            positions,
            triangles,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_shipped_template_brings_its_box_and_widths_and_a_posed_skeleton_neither() {
        let t = TemplateRig::shipped(TemplateKind::Quadruped);
        let input = t.input(&[], &[]);
        assert_eq!(input.template_box, Some(BODY_BOX));
        assert!(input.template_widths.is_some_and(|w| w.iter().any(Option::is_some)));
        assert!(input.template_mesh.is_none());
        let bird = TemplateRig::shipped(TemplateKind::Bird);
        assert!(bird.input(&[], &[]).template_widths.is_none());
        let posed = TemplateRig::posed(t.skeleton.clone(), t.world.clone(), None);
        let input = posed.input(&[], &[]);
        assert!(input.template_box.is_none() && input.template_widths.is_none());
        // Without a skin, with_skin takes the file pose.
        let again = TemplateRig::with_skin(t.skeleton.clone(), None);
        assert_eq!(
            again.world,
            world_from_joint(&t.skeleton, &Pose::from_file(&t.skeleton))
        );
    }
}
