//! Where each joint went in an edit, and carrying per-joint data across: weights, per-joint settings (locks,
//! volumes, deform flags), pose rotations and animation channels.

use glam::Vec3;

use crate::model::anim::JointTranslation;
use crate::model::{Channel, Clip, Extrapolation, Key, Pose, Row, Tangent, Weights, WeightsError};

/// What a joint after an edit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The same joint as joint `i` before (renumbered, perhaps moved).
    Kept(usize),
    /// A copy of joint `i` before (a duplicated chain): it takes `i`'s settings and channels, not its weights.
    Copy(usize),
    /// A joint the edit made.
    New,
}

/// Where each joint went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JointMap {
    /// Per joint after the edit.
    pub origin: Vec<Origin>,
    /// Per joint before the edit: the joint after it that takes its weights (itself, renumbered; for a deleted
    /// joint, the joint its weights went to).
    pub weights_to: Vec<usize>,
}

impl JointMap {
    /// No joint moved: `n` joints kept as they are.
    pub fn identity(n: usize) -> Self {
        Self {
            origin: (0..n).map(Origin::Kept).collect(),
            weights_to: (0..n).collect(),
        }
    }

    /// Whether every joint kept its index and none was added or removed.
    pub fn is_identity(&self) -> bool {
        self.origin.len() == self.weights_to.len()
            && self.origin.iter().enumerate().all(|(k, o)| *o == Origin::Kept(k))
            && self.weights_to.iter().enumerate().all(|(i, &k)| i == k)
    }

    /// The index after the edit of joint `old`, when it was kept.
    pub fn new_index(&self, old: usize) -> Option<usize> {
        self.origin.iter().position(|o| *o == Origin::Kept(old))
    }

    /// This edit followed by `next` (made on this edit's result).
    pub fn then(&self, next: &JointMap) -> JointMap {
        let origin = next
            .origin
            .iter()
            .map(|o| match *o {
                Origin::Kept(m) => self.origin.get(m).copied().unwrap_or(Origin::New),
                Origin::Copy(m) => match self.origin.get(m) {
                    Some(Origin::Kept(i) | Origin::Copy(i)) => Origin::Copy(*i),
                    _ => Origin::New,
                },
                Origin::New => Origin::New,
            })
            .collect();
        let weights_to = self
            .weights_to
            .iter()
            .map(|&k| next.weights_to.get(k).copied().unwrap_or(0))
            .collect();
        JointMap { origin, weights_to }
    }

    /// A per-joint list after the edit: a kept or copied joint takes its source's value, a new one `fresh()`.
    pub fn per_joint<T: Clone>(&self, before: &[T], fresh: impl Fn() -> T) -> Vec<T> {
        self.origin
            .iter()
            .map(|o| match *o {
                Origin::Kept(i) | Origin::Copy(i) => before.get(i).cloned().unwrap_or_else(&fresh),
                Origin::New => fresh(),
            })
            .collect()
    }

    /// Joint indices of the selected joints after the edit (kept ones only).
    pub fn selection(&self, before: &[usize]) -> Vec<usize> {
        before.iter().filter_map(|&j| self.new_index(j)).collect()
    }

    /// The weights after the edit: each joint's weight moves to [`JointMap::weights_to`]; weights two joints now
    /// share are added. Rows keep their sums.
    pub fn weights(&self, before: &Weights) -> Result<Weights, WeightsError> {
        let mut rows: Vec<Row> = Vec::with_capacity(before.len());
        let mut row = Row::new();
        for v in 0..before.len() {
            row.clear();
            before.row_pairs(v, &mut row);
            let mapped: Row = row
                .iter()
                .map(|&(j, w)| {
                    let to = self.weights_to.get(j as usize).copied().unwrap_or(0);
                    (u16::try_from(to).unwrap_or(u16::MAX), w)
                })
                .collect();
            rows.push(mapped);
        }
        Weights::normalized(rows.iter().map(Vec::as_slice)).map(|(w, _)| w)
    }

    /// A pose after the edit, for a skeleton edited without moving its rotations (the edit functions fold turns
    /// themselves): kept and copied joints keep their rotation, new ones are at zero.
    pub fn pose(&self, before: &Pose) -> Pose {
        Pose {
            root_translation: before.root_translation,
            dofs: self.per_joint(&before.dofs, || Vec3::ZERO),
            offsets: Vec::new(),
        }
    }

    /// An animation after the edit: the root translation's channels as they were, a kept or copied joint's three
    /// rotation channels from its source, a new joint's held at zero.
    pub fn clip(&self, before: &Clip) -> Clip {
        let start = before.range.0.min(before.range.1);
        let zero = || {
            let key = Key {
                time: if start.is_finite() { start } else { 0.0 },
                value: 0.0,
                tangent_in: Tangent::Flat,
                tangent_out: Tangent::Flat,
            };
            Channel::new(Extrapolation::Constant, Extrapolation::Constant, vec![key])
        };
        let mut channels: Vec<Channel> = before.channels.iter().take(3).cloned().collect();
        for o in &self.origin {
            for axis in 0..3 {
                let source = match *o {
                    Origin::Kept(i) | Origin::Copy(i) => before.channels.get(3 + 3 * i + axis).cloned(),
                    Origin::New => None,
                };
                if let Some(c) = source.or_else(|| zero().ok()) {
                    channels.push(c);
                }
            }
        }
        // A kept or copied joint keeps its moves; a new joint has none.
        let mut translations = Vec::new();
        for (to, o) in self.origin.iter().enumerate() {
            if let Origin::Kept(i) | Origin::Copy(i) = *o {
                if let Some(t) = before.translations.iter().find(|t| t.joint == i).filter(|_| to > 0) {
                    translations.push(JointTranslation {
                        joint: to,
                        channels: t.channels.clone(),
                    });
                }
            }
        }
        Clip {
            range: before.range,
            channels,
            translations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composing_maps_follows_each_joint_through_both_edits() {
        // First: joint 1 deleted (weights to 0), joint 2 becomes 1. Then: a copy of 1 added as 2, a new joint 3.
        let first = JointMap {
            origin: vec![Origin::Kept(0), Origin::Kept(2)],
            weights_to: vec![0, 0, 1],
        };
        let second = JointMap {
            origin: vec![Origin::Kept(0), Origin::Kept(1), Origin::Copy(1), Origin::New],
            weights_to: vec![0, 1],
        };
        let both = first.then(&second);
        assert_eq!(
            both.origin,
            [Origin::Kept(0), Origin::Kept(2), Origin::Copy(2), Origin::New]
        );
        assert_eq!(both.weights_to, [0, 0, 1]);
        assert!(JointMap::identity(3).is_identity());
        assert!(!both.is_identity());
    }

    #[test]
    fn a_clips_joint_moves_follow_their_joints_through_an_edit() {
        let key = |value: f32| Key {
            time: 0.0,
            value,
            tangent_in: Tangent::Flat,
            tangent_out: Tangent::Flat,
        };
        let constant = |v: f32| Channel::new(Extrapolation::Constant, Extrapolation::Constant, vec![key(v)]).unwrap();
        let mut clip = Clip::new((0.0, 1.0), (0..12).map(|_| constant(0.0)).collect());
        for joint in [1, 3] {
            clip.translations.push(JointTranslation {
                joint,
                channels: [constant(joint as f32), constant(0.0), constant(0.0)],
            });
        }
        // Joint 1 deleted, 2 and 3 become 1 and 2, a copy of old 3 added as 3, a new joint 4.
        let map = JointMap {
            origin: vec![
                Origin::Kept(0),
                Origin::Kept(2),
                Origin::Kept(3),
                Origin::Copy(3),
                Origin::New,
            ],
            weights_to: vec![0, 0, 1, 2],
        };
        let after = map.clip(&clip);
        let moved: Vec<(usize, f32)> = after
            .translations
            .iter()
            .map(|t| (t.joint, t.channels[0].eval(0.0)))
            .collect();
        assert_eq!(moved, [(2, 3.0), (3, 3.0)]);
        assert_eq!(after.channels.len(), Clip::channels_for(5));
    }

    #[test]
    fn weights_of_a_deleted_joint_add_to_the_joint_that_takes_them() {
        let w = Weights::normalized([&[(0u16, 0.25), (1, 0.25), (2, 0.5)][..], &[(1, 1.0)][..]])
            .unwrap()
            .0;
        let map = JointMap {
            origin: vec![Origin::Kept(0), Origin::Kept(2)],
            weights_to: vec![0, 0, 1],
        };
        let after = map.weights(&w).unwrap();
        assert_eq!(after.row(0), (&[0u16, 1][..], &[0.5f32, 0.5][..]));
        assert_eq!(after.row(1), (&[0u16][..], &[1.0f32][..]));
    }
}
