//! Joint types and limits: each rotation axis free, limited to a range, or locked (CSE169's `rot?limit`; Maya's
//! Joint Tool "degrees of freedom" and limits; a locked axis is a limit whose ends meet). Presets give the usual
//! types: a ball joint turns about every axis, a hinge about one, a fixed joint about none.

use crate::model::{Limit, Skeleton};

use super::edit::EditError;

/// One rotation axis of a joint.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum DofLimit {
    /// Turns freely.
    Free,
    /// Turns between `lo` and `hi` radians.
    Limited { lo: f32, hi: f32 },
    /// Held at one angle (radians; 0 for the rest).
    Locked(f32),
}

impl DofLimit {
    /// How the model stores it (`None` for free).
    pub fn to_limit(self) -> Option<Limit> {
        match self {
            DofLimit::Free => None,
            DofLimit::Limited { lo, hi } => Some(Limit { lo, hi }),
            DofLimit::Locked(v) => Some(Limit { lo: v, hi: v }),
        }
    }

    /// What a stored limit is: a range whose ends meet is a lock.
    pub fn from_limit(limit: Option<Limit>) -> Self {
        match limit {
            None => DofLimit::Free,
            Some(Limit { lo, hi }) if lo == hi => DofLimit::Locked(lo),
            Some(Limit { lo, hi }) => DofLimit::Limited { lo, hi },
        }
    }

    /// Whether a rotation of 0 (the rest) lies within it.
    pub fn allows_rest(self) -> bool {
        match self {
            DofLimit::Free => true,
            DofLimit::Limited { lo, hi } => lo <= 0.0 && 0.0 <= hi,
            DofLimit::Locked(v) => v == 0.0,
        }
    }
}

/// The usual joint types, each a set of three axis limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum JointType {
    /// Every axis free.
    Ball,
    /// Turns about one axis (0 = x, 1 = y, 2 = z); the other two locked at rest.
    Hinge(usize),
    /// Every axis locked at rest.
    Fixed,
}

impl JointType {
    /// The presets in menu order, with their names.
    pub const ALL: [(JointType, &'static str); 5] = [
        (JointType::Ball, "Ball"),
        (JointType::Hinge(0), "Hinge X"),
        (JointType::Hinge(1), "Hinge Y"),
        (JointType::Hinge(2), "Hinge Z"),
        (JointType::Fixed, "Fixed"),
    ];

    /// The three axis limits of this type. A hinge's own axis keeps `current`'s limit on it when that axis was
    /// limited (a knee keeps its range), and is free otherwise.
    pub fn limits(self, current: [DofLimit; 3]) -> [DofLimit; 3] {
        match self {
            JointType::Ball => [DofLimit::Free; 3],
            JointType::Fixed => [DofLimit::Locked(0.0); 3],
            JointType::Hinge(axis) => std::array::from_fn(|a| {
                if a != axis {
                    DofLimit::Locked(0.0)
                } else {
                    match current[a] {
                        l @ DofLimit::Limited { .. } => l,
                        _ => DofLimit::Free,
                    }
                }
            }),
        }
    }

    /// Which preset `limits` are, if any.
    pub fn of(limits: [DofLimit; 3]) -> Option<JointType> {
        let locked = limits.map(|l| l == DofLimit::Locked(0.0));
        match locked {
            [true, true, true] => Some(JointType::Fixed),
            _ if limits.iter().all(|l| *l == DofLimit::Free) => Some(JointType::Ball),
            [false, true, true] => Some(JointType::Hinge(0)),
            [true, false, true] => Some(JointType::Hinge(1)),
            [true, true, false] => Some(JointType::Hinge(2)),
            _ => None,
        }
    }
}

/// A joint's three axis limits.
pub fn joint_limits(skel: &Skeleton, joint: usize) -> [DofLimit; 3] {
    match skel.joint(joint) {
        Some(j) => j.limits.map(DofLimit::from_limit),
        None => [DofLimit::Free; 3],
    }
}

/// Check one axis limit: finite ends, `lo <= hi`.
pub fn check_limit(limit: DofLimit) -> Result<(), EditError> {
    let ok = match limit {
        DofLimit::Free => true,
        DofLimit::Limited { lo, hi } => lo.is_finite() && hi.is_finite() && lo <= hi,
        DofLimit::Locked(v) => v.is_finite(),
    };
    if ok { Ok(()) } else { Err(EditError::BadLimit) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_round_trip_and_a_hinge_keeps_its_range() {
        let knee = [
            DofLimit::Limited { lo: -2.0, hi: 0.0 },
            DofLimit::Free,
            DofLimit::Limited { lo: -0.1, hi: 0.1 },
        ];
        let hinge = JointType::Hinge(0).limits(knee);
        assert_eq!(hinge, [knee[0], DofLimit::Locked(0.0), DofLimit::Locked(0.0)]);
        assert_eq!(JointType::of(hinge), Some(JointType::Hinge(0)));
        for (t, _) in JointType::ALL {
            assert_eq!(JointType::of(t.limits([DofLimit::Free; 3])), Some(t));
        }
        assert_eq!(JointType::of(knee), None);
        for l in [
            DofLimit::Free,
            DofLimit::Locked(0.5),
            DofLimit::Limited { lo: -1.0, hi: 2.0 },
        ] {
            assert_eq!(DofLimit::from_limit(l.to_limit()), l);
        }
        assert!(!DofLimit::Limited { lo: 0.1, hi: 1.0 }.allows_rest());
        assert!(check_limit(DofLimit::Limited { lo: 1.0, hi: 0.0 }).is_err());
    }
}
