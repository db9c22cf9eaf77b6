//! Which bones belong to which connected part of the mesh (step 2 of the `bind` module's doc): the bones inside
//! a part, and for a part with none inside (an accessory) the one bone that comes nearest.

use glam::Vec3;
use rayon::prelude::*;

use super::bones::Segment;
use super::nearest::BoneIndex;
use super::surface::{PartBoxes, Surface};

/// Which bones belong to which connected part of the mesh (see the `bind` module's doc).
pub(super) struct PartBones {
    words: usize,
    /// `parts * words` bits: bit `j` of part `c` is set when joint `j` belongs to part `c`.
    bits: Vec<u64>,
    /// Per part: whether a bone lies inside it (else it is an accessory).
    pub(super) has_inside: Vec<bool>,
}

impl PartBones {
    /// `boxes`: each part's box ([`Surface::several_part_bounds`]). `open`: parts known to have a border (no bone
    /// can be inside them; the ray parity test is unreliable there), by part; parts past its end are tested.
    pub(super) fn new(
        index: &BoneIndex,
        positions: &[Vec3],
        surface: &Surface,
        boxes: &PartBoxes,
        joints: usize,
        open: &[bool],
    ) -> Self {
        let count = surface.part_count();
        let words = joints.div_ceil(64).max(1);
        let mut me = Self {
            words,
            bits: vec![0; count * words],
            has_inside: vec![false; count],
        };
        // 1. A bone belongs to every part that holds one of its points inside.
        for (c, joint) in bones_inside(index, surface, boxes, open) {
            me.allow(c, joint);
            me.has_inside[c] = true;
        }
        // 2. A part with no bone inside (a flat plate, an open sheet: a wing, a hair card) is an accessory
        //    attached at a joint: it takes the one bone that comes nearest to its vertices.
        if me.has_inside.iter().all(|&x| x) {
            return me;
        }
        let nearest = nearest_bone_of_accessories(index, positions, surface, &me.has_inside);
        for (c, &(d, _, j)) in nearest.iter().enumerate() {
            if !me.has_inside[c] && d.is_finite() {
                me.allow(c, j);
            }
        }
        me
    }

    fn allow(&mut self, part: usize, joint: u16) {
        self.bits[part * self.words + joint as usize / 64] |= 1 << (joint % 64);
    }

    /// Allow no bone in `part`.
    pub(super) fn clear_part(&mut self, part: usize) {
        self.bits[part * self.words..(part + 1) * self.words].fill(0);
    }

    /// Take `joint` off every part with a bone inside, and give it to `part` (a bone that lies in a plate: see
    /// [`super::plates::plate_bones`]); other plates keep it if they had it.
    pub(super) fn confine(&mut self, joint: u16, part: usize) {
        let (word, bit) = (joint as usize / 64, 1u64 << (joint % 64));
        for (c, inside) in self.has_inside.iter().enumerate() {
            if c == part {
                self.bits[c * self.words + word] |= bit;
            } else if *inside {
                self.bits[c * self.words + word] &= !bit;
            }
        }
    }

    /// For each joint the table covers (a multiple of 64 at least the skeleton's), how many parts it belongs to
    /// and the first two of them.
    pub(super) fn parts_of_joints(&self) -> Vec<(u32, [u32; 2])> {
        let mut out = vec![(0u32, [u32::MAX; 2]); self.words * 64];
        for c in 0..self.has_inside.len() {
            for (j, o) in out.iter_mut().enumerate() {
                if self.allows(c as u32, j as u16) {
                    if (o.0 as usize) < 2 {
                        o.1[o.0 as usize] = c as u32;
                    }
                    o.0 += 1;
                }
            }
        }
        out
    }

    #[inline]
    pub(super) fn allows(&self, part: u32, joint: u16) -> bool {
        self.bits
            .get(part as usize * self.words + joint as usize / 64)
            .is_some_and(|w| w & (1 << (joint % 64)) != 0)
    }
}

/// Every (part, joint) where the part holds one of the joint's bone points inside (nine along each segment, less
/// a child's pivot): the parts' boxes first, then the points' inside tests, in parallel. Parts marked `open` are
/// never tested.
fn bones_inside(index: &BoneIndex, surface: &Surface, (lo, hi): &PartBoxes, open: &[bool]) -> Vec<(usize, u16)> {
    let count = surface.part_count();
    index
        .segments()
        .par_iter()
        .flat_map_iter(|s| {
            // A segment to a child stops short of the child's pivot: that point is the child's.
            let last = if s.kind.to_child() { 7 } else { 8 };
            (0..=last).flat_map(move |k| {
                let q = s.a.lerp(s.b, k as f32 / 8.0);
                (0..count)
                    .filter(move |&c| {
                        !open.get(c).copied().unwrap_or(false)
                            && q.cmpge(lo[c]).all()
                            && q.cmple(hi[c]).all()
                            && surface.inside(q, c)
                    })
                    .map(move |c| (c, s.joint))
            })
        })
        .collect()
}

/// Per part, for the parts with no bone inside: (bone distance, pivot distance, joint) of the bone that comes
/// nearest to the part's vertices (ties: the joint whose pivot is nearest, then the lower index); infinite
/// distances for the other parts.
fn nearest_bone_of_accessories(
    index: &BoneIndex,
    positions: &[Vec3],
    surface: &Surface,
    has_inside: &[bool],
) -> Vec<(f32, f32, u16)> {
    let pivots = pivots_of(index.segments());
    let mut best: Vec<(f32, f32, u16)> = vec![(f32::INFINITY, f32::INFINITY, 0); has_inside.len()];
    for (v, p) in positions.iter().enumerate() {
        let c = surface.part_of(v) as usize;
        if has_inside[c] {
            continue;
        }
        for s in index.segments() {
            let (q, d) = s.closest(*p);
            // Where a bone reaches the part only at its child's pivot, the child is what is attached there.
            let joint = if s.kind.to_child() && q == s.b {
                pivots
                    .iter()
                    .find(|x| x.1 == s.b && x.0 != s.joint)
                    .map_or(s.joint, |x| x.0)
            } else {
                s.joint
            };
            let pd = pivots
                .iter()
                .find(|x| x.0 == joint)
                .map_or(f32::INFINITY, |x| p.distance_squared(x.1));
            let key = (d, pd, joint);
            let b = best[c];
            if key.0 < b.0 || (key.0 == b.0 && (key.1 < b.1 || (key.1 == b.1 && key.2 < b.2))) {
                best[c] = key;
            }
        }
    }
    best
}

/// Each joint's pivot: the start of its first segment (every segment of a joint starts at its pivot, except
/// a box leaf's, which starts at the box end nearer the pivot).
fn pivots_of(segments: &[Segment]) -> Vec<(u16, Vec3)> {
    let mut out: Vec<(u16, Vec3)> = Vec::new();
    for s in segments {
        if out.last().is_none_or(|l| l.0 != s.joint) {
            out.push((s.joint, s.a));
        }
    }
    out
}
