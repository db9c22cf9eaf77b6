//! A 4-wide copy of the binary tree's topology for any-hit segment queries (binding's visibility test).
//!
//! The binary tree is collapsed into nodes of up to four children (Wald et al., "Getting rid of packets: efficient
//! SIMD single-ray traversal using multi-branching BVHs", IEEE Symposium on Interactive Ray Tracing 2008; Dammertz
//! et al., "Shallow bounding volume hierarchies for fast SIMD ray tracing of incoherent rays", EGSR 2008): each
//! interior node pulls up the children of its largest-area interior child until it has four, so the tree is about
//! half as deep and one traversal step tests four boxes at once, structure of arrays, in SIMD lanes. Leaves are the
//! binary tree's own (their triangle ranges index the same triangle copies), so nothing about the triangles is
//! stored twice.
//!
//! The box test is the binary tree's, lane by lane: the same slab distances, `(plane - origin) * inverse`, computed
//! with the same single-precision operations, the same margin and the same rule that a NaN slab distance (origin on
//! a plane of an axis the segment runs parallel to) does not constrain the interval. Each child box is therefore
//! entered exactly when the binary traversal would enter it, and the binary tree's intermediate boxes that the
//! collapse skips could only have culled more, so the answers equal the binary tree's and the naive reference's.
//!
//! A leaf's triangles (up to eight) are tested against a segment together, a triangle a lane (`leaf.rs`).

use glam::{BVec4A, Vec3, Vec4};

use super::leaf::TwoLeaf4;
use super::ray::RayBox;
use super::{EMPTY_NODE, Node, Tri, query_ok};

/// One wide node: four child boxes (structure of arrays, a lane each: `planes[2a]` the minima on axis `a`,
/// `planes[2a + 1]` the maxima, so a query can pick its near and far planes by index) and per lane either a leaf
/// (`count > 0`: the triangle range `first..first + count`) or an interior child (`count == 0`: the wide node
/// `first`). Unused lanes have empty boxes (`+inf` minimum, `-inf` maximum), as do lanes whose triangles are all
/// degenerate; the traversal skips every lane whose box is empty on the x axis before any slab test.
#[derive(Clone, Copy, Debug)]
pub(super) struct WideNode {
    planes: [Vec4; 6],
    first: [u32; 4],
    count: [u32; 4],
}

const EMPTY_WIDE: WideNode = WideNode {
    planes: [
        Vec4::INFINITY,
        Vec4::NEG_INFINITY,
        Vec4::INFINITY,
        Vec4::NEG_INFINITY,
        Vec4::INFINITY,
        Vec4::NEG_INFINITY,
    ],
    first: [0; 4],
    count: [0; 4],
};

fn half_area(n: &Node) -> f32 {
    let d = (n.max - n.min).max(Vec3::ZERO);
    d.x * d.y + d.y * d.z + d.z * d.x
}

/// Collapse the binary tree `nodes` (root first, children `first` and `first + 1`) into wide nodes, root first.
/// Deterministic; linear in the number of nodes.
pub(super) fn collapse(nodes: &[Node]) -> Vec<WideNode> {
    let Some(root) = nodes.first() else {
        return Vec::new();
    };
    let mut wide = Vec::with_capacity(nodes.len() / 3 + 1);
    wide.push(EMPTY_WIDE);
    let mut pending = vec![(0usize, 0usize)];
    // A leaf root becomes a wide root with one leaf lane.
    if root.count > 0 {
        pending.clear();
        wide[0] = wide_node(&[*root]);
    }
    while let Some((b, w)) = pending.pop() {
        let node = &nodes[b];
        let mut slots = [0usize; 4];
        slots[0] = node.first as usize;
        slots[1] = node.first as usize + 1;
        let mut len = 2;
        while len < 4 {
            // Open the interior slot of largest area (the first of equals).
            let mut pick: Option<(usize, f32)> = None;
            for (k, &s) in slots[..len].iter().enumerate() {
                if nodes[s].count == 0 && pick.is_none_or(|(_, a)| half_area(&nodes[s]) > a) {
                    pick = Some((k, half_area(&nodes[s])));
                }
            }
            let Some((k, _)) = pick else { break };
            let s = slots[k];
            slots[k] = nodes[s].first as usize;
            slots[len] = nodes[s].first as usize + 1;
            len += 1;
        }
        // Each lane: the child's box, and its triangle range (a leaf) or the wide node made for it.
        let mut lanes = [EMPTY_NODE; 4];
        for (lane, &s) in slots[..len].iter().enumerate() {
            let child = nodes[s];
            lanes[lane] = child;
            if child.count == 0 {
                wide.push(EMPTY_WIDE);
                pending.push((s, wide.len() - 1));
                lanes[lane].first = (wide.len() - 1) as u32;
            }
        }
        wide[w] = wide_node(&lanes[..len]);
    }
    wide
}

/// The wide node whose lanes are `lanes` (at most four: each one's box, `first` and `count`), the others empty.
/// Each plane is made from four scalars at once: writing lanes one at a time into a vector either indexes it by
/// a variable (glam's `match`, a jump table whose indirect branch mispredicts) or goes through memory (narrow
/// stores read back by one wide load, which the processor cannot forward and waits for).
fn wide_node(lanes: &[Node]) -> WideNode {
    let lane = |l: usize| lanes.get(l).copied().unwrap_or(EMPTY_NODE);
    let [l0, l1, l2, l3] = [lane(0), lane(1), lane(2), lane(3)];
    let plane = |f: fn(&Node) -> f32| Vec4::new(f(&l0), f(&l1), f(&l2), f(&l3));
    WideNode {
        planes: [
            plane(|n| n.min.x),
            plane(|n| n.max.x),
            plane(|n| n.min.y),
            plane(|n| n.max.y),
            plane(|n| n.min.z),
            plane(|n| n.max.z),
        ],
        first: [l0.first, l1.first, l2.first, l3.first],
        count: [l0.count, l1.count, l2.count, l3.count],
    }
}

/// A traversal stack: a short array (cheap to set up for every query), spilling to the heap in the rare deep case.
#[derive(Default)]
struct Stack {
    inline: [u64; 32],
    len: usize,
    spill: Vec<u64>,
}

impl Stack {
    #[inline(always)]
    fn push(&mut self, e: u64) {
        if self.len < self.inline.len() {
            self.inline[self.len] = e;
            self.len += 1;
        } else {
            self.spill.push(e);
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        if let Some(e) = self.spill.pop() {
            return Some(e);
        }
        self.len = self.len.checked_sub(1)?;
        Some(self.inline[self.len])
    }
}

/// What [`packet_hit`] reads of a tree: its wide nodes, its triangle copies (in leaf order) and the binary root
/// (the box every segment is first tested against when a traversal begins there, and the scene size for the box
/// margin).
#[derive(Clone, Copy)]
pub(super) struct Tree<'t> {
    pub(super) wide: &'t [WideNode],
    pub(super) tris: &'t [Tri],
    pub(super) root: &'t Node,
}

/// The lanes of the tree whose boxes meet the box `lo..hi` and that are leaves or no more than `reach` times that
/// box's largest extent across, found from the root, packed four to a node into `out`: a segment inside the box
/// enters a box of the tree below them only through one of them, so a traversal can begin there (see
/// [`packet_hit`]) and skip the levels above, which every query of the box's segments would walk the same way.
pub(super) fn entry_nodes(wide: &[WideNode], lo: Vec3, hi: Vec3, reach: f32, out: &mut Vec<WideNode>) {
    out.clear();
    if wide.is_empty() {
        return;
    }
    let size = reach * (hi - lo).max_element();
    let (lo4, hi4) = ([lo.x, lo.y, lo.z].map(Vec4::splat), [hi.x, hi.y, hi.z].map(Vec4::splat));
    let mut open = [0usize; 128];
    let mut len = 1;
    // The lanes being packed, as binary nodes (their boxes read from the tree's memory), made into a wide node
    // four at a time ([`wide_node`]).
    let mut packed = [EMPTY_NODE; 4];
    let mut used = 0;
    while len > 0 {
        len -= 1;
        let node = &wide[open[len]];
        // Lanes with a box meeting lo..hi (an empty lane's minimum exceeds its maximum, so it meets nothing).
        let mut meets = node.planes[0].cmple(node.planes[1]);
        for a in 0..3 {
            meets &= node.planes[2 * a].cmple(hi4[a]) & lo4[a].cmple(node.planes[2 * a + 1]);
        }
        let meets = meets.bitmask();
        let extent = (node.planes[1] - node.planes[0])
            .max(node.planes[3] - node.planes[2])
            .max(node.planes[5] - node.planes[4])
            .to_array();
        for lane in (0..4).filter(|l| meets >> l & 1 == 1) {
            if node.count[lane] == 0 && extent[lane] > size && len < open.len() {
                open[len] = node.first[lane] as usize;
                len += 1;
                continue;
            }
            let p = |a: usize| node.planes[a].to_array()[lane];
            packed[used] = Node {
                min: Vec3::new(p(0), p(2), p(4)),
                max: Vec3::new(p(1), p(3), p(5)),
                first: node.first[lane],
                count: node.count[lane],
            };
            used += 1;
            if used == 4 {
                out.push(wide_node(&packed));
                used = 0;
            }
        }
    }
    if used > 0 {
        out.push(wide_node(&packed[..used]));
    }
}

/// Segments tested together by [`packet_hit`] (bits of a `u32`).
pub(super) const PACKET: usize = 32;

/// The box-test state of up to [`PACKET`] segments: per segment (index `k`) its origin, inverse direction, margin,
/// and which axes have an infinite inverse, as scalars splatted to four lanes when a node is tested (cheap to set up
/// for every query; unused slots are never read).
struct Packet {
    origin: [[f32; PACKET]; 3],
    inv: [[f32; PACKET]; 3],
    margin: [f32; PACKET],
    flat: [u8; PACKET],
}

impl Packet {
    fn new() -> Self {
        Self {
            origin: [[0.0; PACKET]; 3],
            inv: [[0.0; PACKET]; 3],
            margin: [0.0; PACKET],
            flat: [0; PACKET],
        }
    }

    fn set(&mut self, k: usize, ray: &RayBox) {
        let mut flat = 0;
        for a in 0..3 {
            self.origin[a][k] = ray.origin[a];
            self.inv[a][k] = ray.inv[a];
            flat |= u8::from(!ray.inv[a].is_finite()) << a;
        }
        self.margin[k] = ray.margin;
        self.flat[k] = flat;
    }

    /// Lanes of `node` whose boxes segment `k` enters within `[lo, hi]` (bit `l` for lane `l`), as
    /// `RayBox::enter` decides for each box.
    #[inline(always)]
    fn enter(&self, k: usize, node: &WideNode, lo: Vec4, hi: Vec4) -> u32 {
        let (mut near, mut far) = (lo, hi);
        let origin = [
            Vec4::splat(self.origin[0][k]),
            Vec4::splat(self.origin[1][k]),
            Vec4::splat(self.origin[2][k]),
        ];
        // The slab of axis `a`. With a finite, non-zero inverse the near distance is the lesser of the two
        // (rounding is monotonic, so this picks the same value as choosing the plane by the direction's sign).
        let mut slab = |a: usize| {
            let inv = Vec4::splat(self.inv[a][k]);
            let t1 = (node.planes[2 * a] - origin[a]) * inv;
            let t2 = (node.planes[2 * a + 1] - origin[a]) * inv;
            near = near.max(t1.min(t2));
            far = far.min(t1.max(t2));
        };
        let flat = self.flat[k];
        let mut within = BVec4A::splat(true);
        if flat == 0 {
            (0..3).for_each(&mut slab);
        } else {
            // An infinite inverse component: `RayBox::enter` takes the near and far planes by the direction's
            // sign, and their distances are then -inf or +inf (leaving the interval as it was, or emptying it) or
            // NaN for a plane through the origin (leaving it as it was). So the axis passes exactly when the origin
            // lies between the box's two planes, planes included, and the other axes are tested as above.
            for (a, &o) in origin.iter().enumerate() {
                if flat >> a & 1 == 1 {
                    within &= node.planes[2 * a].cmple(o) & o.cmple(node.planes[2 * a + 1]);
                } else {
                    slab(a);
                }
            }
        }
        (near.cmple(far + Vec4::splat(self.margin[k])) & within).bitmask()
    }
}

/// Two lanes' bits of a box test's answer (bit 0 and bit 1) moved to bits 0 and 32.
const SPREAD: [u64; 4] = [0, 1, 1 << 32, 1 << 32 | 1];

/// Marks an entry node in a [`packet_hit`] stack entry (`node << 32 | segments`).
const ENTRY: u64 = 1 << 63;

crate::simd::two_copies! {
    /// Any-hit queries of up to [`PACKET`] segments in one traversal: segment `k` runs from `origins[k]` along
    /// `dirs[k]`, from vertex `from[k]` of the tree's mesh, whose own triangles it passes over. `start`: the entry
    /// nodes to begin at (see [`entry_nodes`]), else the root. Returns the mask of the segments that cross a
    /// triangle at some `s` in `(lo, hi)`.
    ///
    /// Each segment enters exactly the boxes a traversal of it alone would and tests the same triangles, so each
    /// answer is that query's; the segments share the fetch of every node and triangle several of them reach (a
    /// vertex's segments to its near bones, and those of its neighbours, leave from nearby in similar directions).
    /// The tree has fewer than `2^31` wide nodes.
    ///
    /// Both copies test a leaf's triangles in two passes of four lanes ([`TwoLeaf4`]); the x86-64-v3 copy
    /// (`packet_hit_v3`) is the same source compiled with AVX2 and FMA.
    pub(super) fn packet_hit(
        tree: Tree<'_>,
        start: Option<&[WideNode]>,
        from: &[u32],
        origins: &[Vec3],
        dirs: &[Vec3],
        range: (f32, f32),
    ) -> u32 = packet_hit_v3 / packet_hit_body
}

/// [`packet_hit`]'s body, compiled for the baseline and for x86-64-v3.
#[inline(always)]
fn packet_hit_body(
    Tree { wide, tris, root }: Tree<'_>,
    start: Option<&[WideNode]>,
    from: &[u32],
    origins: &[Vec3],
    dirs: &[Vec3],
    (lo, hi): (f32, f32),
) -> u32 {
    debug_assert!(dirs.len() <= PACKET && origins.len() == dirs.len());
    debug_assert_eq!(from.len(), dirs.len());
    debug_assert!(wide.len() < 1 << 31);
    let mut active = 0u32;
    let mut q = Packet::new();
    // Entry boxes lie inside the root's, so a segment that misses the root misses them too: the root's test is
    // needed only when the traversal begins there. (Such a segment then stays in `active`, so the early return
    // once every segment has hit is lost for its query; from a vertex of the tree's own mesh towards a bone,
    // that is rare.) The margin's scale is the origin's, found once for a run of segments from one origin.
    let mut scale = (Vec3::NAN, 0.0);
    for (k, (&a, &dir)) in origins.iter().zip(dirs).enumerate().take(PACKET) {
        if scale.0 != a {
            scale = (a, RayBox::margin_scale(a, root));
        }
        let ray = RayBox::with_scale(a, dir, scale.1);
        if query_ok(a, dir) && (start.is_some() || ray.enter(root, lo, hi).is_some()) {
            active |= 1 << k;
            q.set(k, &ray);
        }
    }
    if wide.is_empty() || active == 0 {
        return 0;
    }
    let (lo4, hi4) = (Vec4::splat(lo), Vec4::splat(hi));
    let mut hit = 0u32;
    // Entries: (wide node << 32) | the segments that entered its box, entry nodes marked.
    let mut stack = Stack::default();
    let mut at = 0u64;
    let mut segs = active;
    if start.is_some_and(<[WideNode]>::is_empty) {
        // No box of the tree meets the segments' box.
        return 0;
    }
    let start = start.unwrap_or(&[]);
    if !start.is_empty() {
        // Begin at the entry nodes, the first now, the others from the stack, instead of at the root.
        for k in (1..start.len()).rev() {
            stack.push(ENTRY | (k as u64) << 32 | u64::from(active));
        }
        at = ENTRY;
    }
    loop {
        let node = if at & ENTRY != 0 {
            &start[(at & !ENTRY) as usize]
        } else {
            &wide[at as usize]
        };
        // Lanes with a box (not unused, not all degenerate): the slab test's min/max form would enter an empty one.
        let boxed = node.planes[0].cmple(node.planes[1]).bitmask();
        // Lanes 0 and 1's segments in the low and high halves of `lanes01`, lanes 2 and 3's in `lanes23`.
        let (mut lanes01, mut lanes23) = (0u64, 0u64);
        let mut m = segs;
        while m != 0 {
            let k = m.trailing_zeros();
            m &= m - 1;
            let e = (q.enter(k as usize, node, lo4, hi4) & boxed) as usize;
            lanes01 |= SPREAD[e & 3] << k;
            lanes23 |= SPREAD[e >> 2] << k;
        }
        let per_lane = [
            lanes01 as u32,
            (lanes01 >> 32) as u32,
            lanes23 as u32,
            (lanes23 >> 32) as u32,
        ];
        // The lanes some segment entered, visited by their bits (one loop exit to predict rather than four
        // tests).
        let mut entered = u32::from(per_lane[0] != 0)
            | u32::from(per_lane[1] != 0) << 1
            | u32::from(per_lane[2] != 0) << 2
            | u32::from(per_lane[3] != 0) << 3;
        while entered != 0 {
            let lane = entered.trailing_zeros() as usize;
            entered &= entered - 1;
            let in_lane = per_lane[lane];
            let (first, count) = (node.first[lane] as usize, node.count[lane] as usize);
            if count > 0 {
                if in_lane & !hit == 0 {
                    continue;
                }
                // Eight triangles at a time (leaves hold at most eight: one pass).
                for leaf in tris[first..first + count].chunks(8) {
                    let lanes = TwoLeaf4::load(leaf);
                    let mut m = in_lane & !hit;
                    while m != 0 {
                        let k = m.trailing_zeros() as usize;
                        m &= m - 1;
                        let mut crossed = lanes.crossed(origins[k], dirs[k], lo, hi);
                        // The vertex's own triangles are passed over (rarely crossed at all: the segment leaves
                        // from their corner).
                        let mut c = crossed;
                        while c != 0 {
                            let t = c.trailing_zeros() as usize;
                            c &= c - 1;
                            if leaf[t].idx.contains(&from[k]) {
                                crossed &= !(1 << t);
                            }
                        }
                        if crossed != 0 {
                            hit |= 1 << k;
                        }
                    }
                }
                if hit == active {
                    return hit;
                }
            } else {
                stack.push((first as u64) << 32 | u64::from(in_lane));
            }
        }
        // The next entry with a segment still undecided.
        loop {
            let Some(e) = stack.pop() else {
                return hit;
            };
            segs = e as u32 & !hit;
            if segs != 0 {
                at = (e & ENTRY) | (e & !ENTRY) >> 32;
                break;
            }
        }
    }
}

/// The tests' check of a collapse: every wide node's lanes cover the binary leaves exactly once, and every wide
/// node but the root has one parent.
#[cfg(test)]
pub(super) fn check_wide(nodes: &[Node], wide: &[WideNode], triangles: usize) {
    if nodes.is_empty() {
        assert!(wide.is_empty());
        return;
    }
    let mut covered = vec![0u32; triangles];
    let mut reached = vec![0u32; wide.len()];
    reached[0] = 1;
    for (i, w) in wide.iter().enumerate() {
        for lane in 0..4 {
            let empty = (0..3)
                .all(|a| w.planes[2 * a][lane] == f32::INFINITY && w.planes[2 * a + 1][lane] == f32::NEG_INFINITY);
            if w.count[lane] > 0 {
                for k in w.first[lane]..w.first[lane] + w.count[lane] {
                    covered[k as usize] += 1;
                }
            } else if !empty || w.first[lane] != 0 {
                let c = w.first[lane] as usize;
                assert!(c > i && c < wide.len(), "wide node {i} lane {lane}: child {c}");
                reached[c] += 1;
            }
        }
    }
    assert!(covered.iter().all(|&c| c == 1), "every triangle in exactly one leaf");
    assert!(reached.iter().all(|&c| c == 1), "every wide node has one parent");
}
