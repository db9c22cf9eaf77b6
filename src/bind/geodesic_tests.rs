//! Tests of the geodesic binding ([`super`]).

use super::*;
use crate::bind::bones::SegmentKind;

/// A closed box from `lo` to `hi`, `n` quads a side, wound outward.
fn box_mesh(lo: Vec3, hi: Vec3, n: usize) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let (mut p, mut t) = (Vec::new(), Vec::new());
    for axis in 0..3 {
        for side in [0.0f32, 1.0] {
            let (u, w) = ((axis + 1) % 3, (axis + 2) % 3);
            let base = p.len() as u32;
            for i in 0..=n {
                for j in 0..=n {
                    let mut q = Vec3::ZERO;
                    q[axis] = lo[axis] + side * (hi[axis] - lo[axis]);
                    q[u] = lo[u] + (hi[u] - lo[u]) * i as f32 / n as f32;
                    q[w] = lo[w] + (hi[w] - lo[w]) * j as f32 / n as f32;
                    p.push(q);
                }
            }
            let id = |i: usize, j: usize| base + (i * (n + 1) + j) as u32;
            for i in 0..n {
                for j in 0..n {
                    let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
                    if side == 1.0 {
                        t.push([a, b, c]);
                        t.push([a, c, d]);
                    } else {
                        t.push([a, c, b]);
                        t.push([a, d, c]);
                    }
                }
            }
        }
    }
    (p, t)
}

fn seg(joint: u16, a: Vec3, b: Vec3) -> Segment {
    Segment {
        joint,
        a,
        b,
        kind: SegmentKind::Child,
    }
}

fn field_of(
    segments: &[Segment],
    p: &[Vec3],
    t: &[[u32; 3]],
    opts: &BindOptions,
    limits: Option<(usize, f32)>,
) -> (Field, GeodesicReport) {
    let parts = crate::mesh::connected_parts(p, t, 1e-6);
    let (mut report, mut stages) = (GeodesicReport::default(), BindReport::default());
    let k = opts.max_influences.clamp(1, MAX_LABELS);
    let limits = limits.unwrap_or((k, opts.blend_ratio * PRUNE_MARGIN));
    let f = distance_field_with(segments, p, t, &parts, opts, limits, &mut report, &mut stages);
    (f, report)
}

fn bar() -> (Vec<Vec3>, Vec<[u32; 3]>, Vec<Segment>) {
    let (p, t) = box_mesh(Vec3::new(-1.2, -0.2, -0.2), Vec3::new(1.2, 0.2, 0.2), 12);
    let s = vec![
        seg(0, Vec3::new(-1.0, 0.0, 0.0), Vec3::ZERO),
        seg(1, Vec3::ZERO, Vec3::new(1.0, 0.0, 0.0)),
    ];
    (p, t, s)
}

#[test]
fn the_kept_bones_are_those_of_an_exhaustive_search() {
    // Three bones in an L-shaped solid (two boxes overlapping): the search that keeps k bones a cell and
    // prunes far ones must give each cell the same nearest bone and distance as the search that keeps every
    // bone everywhere, and never a distance below it.
    let (mut p, mut t) = box_mesh(Vec3::new(-1.0, -0.2, -0.2), Vec3::new(1.0, 0.2, 0.2), 8);
    crate::mesh::append_part(
        &mut p,
        &mut t,
        box_mesh(Vec3::new(0.6, -0.2, -0.2), Vec3::new(1.0, 1.5, 0.2), 8),
    );
    let s = vec![
        seg(0, Vec3::new(-0.9, 0.0, 0.0), Vec3::new(0.0, 0.0, 0.0)),
        seg(1, Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.8, 0.0, 0.0)),
        seg(2, Vec3::new(0.8, 0.0, 0.0), Vec3::new(0.8, 1.4, 0.0)),
    ];
    let opts = BindOptions {
        resolution: 48,
        max_influences: 2,
        ..BindOptions::default()
    };
    let (fast, _) = field_of(&s, &p, &t, &opts, None);
    let (full, _) = field_of(&s, &p, &t, &opts, Some((3, f32::INFINITY)));
    assert_eq!(fast.cells, full.cells);
    let mut kept = 0;
    for slot in 0..fast.solid_count() {
        let all: Vec<&Label> = full.finals(slot).collect();
        assert_eq!(all.len(), 3, "slot {slot}");
        let best = all.iter().min_by(|a, b| a.dist.total_cmp(&b.dist)).unwrap();
        assert_eq!(fast.nearest[slot], best.dist, "slot {slot}");
        for l in fast.finals(slot) {
            let exact = all.iter().find(|x| x.joint == l.joint).unwrap().dist;
            assert!(l.dist >= exact - 1e-6, "slot {slot} joint {}", l.joint);
            kept += usize::from((l.dist - exact).abs() <= 1e-5 * exact.max(1.0));
        }
    }
    assert!(kept > fast.solid_count(), "{kept}");
}

#[test]
fn distances_through_a_convex_solid_are_close_to_straight_ones() {
    // Inside a box every shortest path is straight: the 26-neighbour steps overestimate it by at most about
    // 8% (the worst direction of the 1, √2, √3 steps), plus the seed's distance to the bone (half a diagonal
    // of a cell at most), and never underestimate it by more than that.
    let (p, t, s) = bar();
    let opts = BindOptions {
        resolution: 64,
        ..BindOptions::default()
    };
    let (f, _) = field_of(&s, &p, &t, &opts, None);
    let h = f.grid.h;
    for slot in 0..f.solid_count() {
        let c = f.centre(slot);
        let straight = s.iter().map(|s| s.closest(c).1.sqrt()).fold(f32::INFINITY, f32::min);
        let d = f.nearest[slot];
        assert!(d >= straight - h, "slot {slot}: {d} < {straight}");
        assert!(d <= straight * 1.09 + h, "slot {slot}: {d} > {straight}");
    }
}

#[test]
fn two_bones_split_a_symmetric_bar_symmetrically() {
    let (p, t, s) = bar();
    let opts = BindOptions::default();
    let (f, _) = field_of(&s, &p, &t, &opts, None);
    let w = weights_from_field(&f, &s, None, &p, &opts, None);
    let weight = |v: usize, j: u16| {
        let (js, ws) = w.row(v);
        js.iter().position(|&x| x == j).map_or(0.0, |i| ws[i])
    };
    for v in 0..p.len() {
        // The vertex mirrored through x = 0.
        let m = p
            .iter()
            .position(|q| (*q - Vec3::new(-p[v].x, p[v].y, p[v].z)).length() < 1e-5)
            .unwrap();
        assert!(
            (weight(v, 0) - weight(m, 1)).abs() < 1e-3,
            "vertex {v} {:?} vs {m}: {:?} {:?}",
            p[v],
            w.row(v),
            w.row(m)
        );
        if p[v].x <= -0.6 {
            assert_eq!(w.row(v).0, &[0], "vertex {v} {:?}", p[v]);
        }
        if p[v].x.abs() < 1e-6 {
            assert!((weight(v, 0) - 0.5).abs() < 1e-3, "vertex {v} {:?}", p[v]);
        }
    }
}

#[test]
fn a_piece_no_bone_enters_takes_the_nearest_bone_and_a_bone_outside_still_weights() {
    let (mut p, mut t, mut s) = bar();
    let base = p.len() as u32;
    crate::mesh::append_part(
        &mut p,
        &mut t,
        box_mesh(Vec3::new(-1.0, 0.6, -0.1), Vec3::new(-0.8, 0.8, 0.1), 2),
    );
    // A third bone above the bar, outside the solid, nearer the bar's right end than any other part.
    s.push(seg(2, Vec3::new(0.9, 0.5, 0.0), Vec3::new(1.1, 0.5, 0.0)));
    let opts = BindOptions::default();
    let (f, report) = field_of(&s, &p, &t, &opts, None);
    assert_eq!(report.detached_pieces, 1);
    assert_eq!(report.bones_outside, 1);
    let w = weights_from_field(&f, &s, None, &p, &opts, None);
    for v in base as usize..p.len() {
        assert_eq!(w.row(v).0, &[0], "vertex {v} of the detached piece");
    }
    assert!((0..w.len()).all(|v| !w.row(v).0.is_empty()));
    assert!((0..base as usize).any(|v| w.row(v).0.contains(&2)));
}

#[test]
fn a_soup_and_inward_winding_bind_as_the_welded_outward_mesh() {
    let s = crate::sample::make_sample(crate::sample::SampleKind::Arm, 2000).unwrap();
    let (p, t) = (s.skin.positions(), s.skin.triangles());
    let bw = s.skin.bindings().unwrap();
    let bind = |p: &[Vec3], t: &[[u32; 3]]| {
        crate::bind::bind_weights(&s.skeleton, bw, p, t, &BindOptions::default(), &|_| {})
            .unwrap()
            .0
    };
    let welded = bind(p, t);
    let soup_p: Vec<Vec3> = t.iter().flat_map(|t| t.map(|i| p[i as usize])).collect();
    let soup_t: Vec<[u32; 3]> = (0..t.len() as u32).map(|i| [3 * i, 3 * i + 1, 3 * i + 2]).collect();
    let soup = bind(&soup_p, &soup_t);
    for (i, tri) in t.iter().enumerate() {
        for (k, &corner) in tri.iter().enumerate() {
            assert_eq!(
                soup.row(3 * i + k),
                welded.row(corner as usize),
                "triangle {i} corner {k}"
            );
        }
    }
    let inward: Vec<[u32; 3]> = t.iter().map(|t| [t[0], t[2], t[1]]).collect();
    let flipped = bind(p, &inward);
    for v in 0..p.len() {
        assert_eq!(flipped.row(v), welded.row(v), "vertex {v}");
    }
}

#[test]
fn a_root_outside_the_solid_does_not_deform_unless_asked_and_one_inside_does() {
    use crate::model::{Joint, Pose, Skeleton, world_from_joint};
    let (p, t, _) = bar();
    let chain = |root: Vec3, bind_controls: bool| {
        let skel = Skeleton::new(vec![
            Joint::new("master", None, root),
            Joint::new("hips", Some(0), Vec3::new(-1.0, 0.0, 0.0) - root),
            Joint::new("spine", Some(1), Vec3::X),
            Joint::new("chest", Some(2), Vec3::X),
        ])
        .unwrap();
        let bw = world_from_joint(&skel, &Pose::zero(&skel));
        let opts = BindOptions {
            bind_controls,
            ..BindOptions::default()
        };
        let (w, report) = crate::bind::bind_weights(&skel, &bw, &p, &t, &opts, &|_| {}).unwrap();
        let master = (0..w.len()).filter(|&v| w.row(v).0.contains(&0)).count();
        (report, master)
    };
    // Below the bar, the master root is left out: no weight, named in the report and a warning, and not among
    // the bones without vertices.
    let (below, master) = chain(Vec3::new(0.0, -1.0, 0.0), false);
    assert_eq!((below.excluded_controls.as_slice(), master), (&[0][..], 0));
    assert!(
        below.controls.is_empty() && below.bones_without_vertices.is_empty(),
        "{below:?}"
    );
    assert!(
        below
            .warnings
            .iter()
            .any(|w| w.starts_with("joint 0 `master` is not bound: it is a root")),
        "{:?}",
        below.warnings
    );
    // Asked to bind controls, it is bound (its bone runs into the bar's end) and warned about.
    let (asked, master) = chain(Vec3::new(0.0, -1.0, 0.0), true);
    assert!(asked.excluded_controls.is_empty() && master > 0, "{asked:?}");
    assert!(
        asked
            .warnings
            .iter()
            .any(|w| w.starts_with("joint 0 `master` looks like a control (a root")),
        "{:?}",
        asked.warnings
    );
    let (inside, master) = chain(Vec3::new(-1.1, 0.0, 0.0), false);
    assert!(inside.excluded_controls.is_empty() && master > 0, "{inside:?}");
    assert!(
        !inside.warnings.iter().any(|w| w.contains("a root")),
        "{:?}",
        inside.warnings
    );
}

#[test]
fn a_control_hovering_over_the_mesh_under_the_master_root_does_not_deform() {
    use crate::model::{Joint, Pose, Skeleton, world_from_joint};
    let (p, t, _) = bar();
    // A master root below the bar, a `body` control 0.4 above it (beyond its bounding box), and under `body` two
    // limbs; `second` is where the second limb's first pivot lies.
    let rig = |second: Vec3| {
        let body = Vec3::new(0.0, 0.6, 0.0);
        let skel = Skeleton::new(vec![
            Joint::new("master", None, Vec3::new(0.0, -1.0, 0.0)),
            Joint::new("body", Some(0), body - Vec3::new(0.0, -1.0, 0.0)),
            Joint::new("left", Some(1), Vec3::new(-0.1, 0.0, 0.0) - body),
            Joint::new("left_end", Some(2), Vec3::new(-1.0, 0.0, 0.0)),
            Joint::new("right", Some(1), second - body),
            Joint::new("right_end", Some(4), Vec3::new(1.0, 0.0, 0.0) - second),
        ])
        .unwrap();
        let bw = world_from_joint(&skel, &Pose::zero(&skel));
        let (w, report) = crate::bind::bind_weights(&skel, &bw, &p, &t, &BindOptions::default(), &|_| {}).unwrap();
        let body_weighted = (0..w.len()).filter(|&v| w.row(v).0.contains(&1)).count();
        (report, body_weighted)
    };
    // Both limbs start inside the bar: `body` moves them as a master control does, and is left out with the root.
    let (hovering, weighted) = rig(Vec3::new(0.1, 0.0, 0.0));
    assert_eq!(
        (hovering.excluded_controls.as_slice(), weighted),
        (&[0, 1][..], 0),
        "{hovering:?}"
    );
    assert!(
        hovering.warnings.iter().any(
            |w| w.starts_with("joint 1 `body` is not bound: its pivot lies beyond the mesh, over joints inside it")
        ),
        "{:?}",
        hovering.warnings
    );
    // The second limb starts outside too (a chain of joints leading to a mesh that covers part of the rig):
    // `body` deforms; only the master root is left out.
    let (chain, weighted) = rig(Vec3::new(0.1, 1.2, 0.0));
    assert_eq!(chain.excluded_controls, [0], "{chain:?}");
    assert!(weighted > 0);
}

/// A pivot as far away as a stranger's file may put it (1e8 units from a bar 2.4 long: its cell index saturates)
/// is outside, with no overflow in the neighbourhood test.
#[test]
fn a_root_pivot_far_off_the_grid_is_outside() {
    use crate::model::{Joint, Pose, Skeleton, world_from_joint};
    let (p, t, _) = bar();
    let far = Vec3::new(0.0, -1.0e8, 0.0);
    let skel = Skeleton::new(vec![
        Joint::new("master", None, far),
        Joint::new("hips", Some(0), Vec3::new(-1.0, 0.0, 0.0) - far),
        Joint::new("chest", Some(1), Vec3::new(2.0, 0.0, 0.0)),
    ])
    .unwrap();
    let bw = world_from_joint(&skel, &Pose::zero(&skel));
    let (_, report) = crate::bind::bind_weights(&skel, &bw, &p, &t, &BindOptions::default(), &|_| {}).unwrap();
    assert_eq!(report.excluded_controls, [0], "{report:?}");
}

#[test]
fn an_accessory_card_moves_with_the_body_surface_it_hangs_beside() {
    use crate::model::{Joint, Pose, Skeleton, world_from_joint};
    // A neck and a head in one closed body, and an open card (no bone in it) hanging beside the joint between.
    let (mut p, mut t) = box_mesh(Vec3::new(-0.3, -0.5, -0.3), Vec3::new(0.3, 2.0, 0.3), 8);
    let body = p.len();
    for y in 0..=6 {
        for z in 0..=1 {
            p.push(Vec3::new(0.35, 0.7 + 0.1 * y as f32, -0.1 + 0.2 * z as f32));
        }
    }
    for y in 0..6u32 {
        let a = body as u32 + 2 * y;
        t.push([a, a + 2, a + 3]);
        t.push([a, a + 3, a + 1]);
    }
    let skel = Skeleton::new(vec![
        Joint::new("neck", None, Vec3::ZERO),
        Joint::new("head", Some(0), Vec3::Y),
    ])
    .unwrap();
    let bw = world_from_joint(&skel, &Pose::zero(&skel));
    let (w, report) = crate::bind::bind_weights(&skel, &bw, &p, &t, &BindOptions::default(), &|_| {}).unwrap();
    assert_eq!(report.parts, 2);
    // Each card vertex has the row of the nearest body vertex (searched here by brute force).
    for v in body..p.len() {
        let nearest = (0..body)
            .min_by(|&a, &b| {
                p[a].distance_squared(p[v])
                    .total_cmp(&p[b].distance_squared(p[v]))
                    .then(a.cmp(&b))
            })
            .unwrap();
        assert_eq!(w.row(v), w.row(nearest), "card vertex {v}");
    }
    // So the card bends with the body: its top follows the head, its bottom the neck.
    assert_eq!(w.dominant(p.len() - 1), Some(1));
    assert_eq!(w.dominant(body), Some(0));
}

/// Trousers (a closed box holding the hips and legs) under a shirt (a wider closed box holding the spine) whose
/// hem overlaps them 0.1 deep, 0.02 outside, with the skeleton of a standing figure.
fn shirt_over_trousers(n: usize) -> (Vec<Vec3>, Vec<[u32; 3]>, usize, crate::model::Skeleton) {
    use crate::model::{Joint, Skeleton};
    let (mut p, mut t) = box_mesh(Vec3::new(-0.3, 0.0, -0.15), Vec3::new(0.3, 1.1, 0.15), n);
    let trousers = p.len();
    let (q, u) = box_mesh(Vec3::new(-0.32, 1.0, -0.17), Vec3::new(0.32, 2.0, 0.17), n);
    p.extend(q);
    t.extend(u.iter().map(|x| x.map(|i| i + trousers as u32)));
    let skel = Skeleton::new(vec![
        Joint::new("hips", None, Vec3::new(0.0, 1.0, 0.0)),
        Joint::new("spine", Some(0), Vec3::new(0.0, 0.5, 0.0)),
        Joint::new("chest", Some(1), Vec3::new(0.0, 0.45, 0.0)),
        Joint::new("thigh_l", Some(0), Vec3::new(0.15, -0.05, 0.0)),
        Joint::new("knee_l", Some(3), Vec3::new(0.0, -0.45, 0.0)),
        Joint::new("thigh_r", Some(0), Vec3::new(-0.15, -0.05, 0.0)),
        Joint::new("knee_r", Some(5), Vec3::new(0.0, -0.45, 0.0)),
    ])
    .unwrap();
    (p, t, trousers, skel)
}

/// Issue 22: layers that touch move together. The shirt holds no leg bone, so before coupling its hem took the
/// hips alone while the trousers' waistband under it took half its weight from a thigh, and a raised thigh opened
/// a gap at the hem; now the two sides of the hem carry nearly the same thigh weight. Winding a part inward
/// changes nothing.
#[test]
fn a_shirt_over_trousers_moves_with_them_at_the_hem() {
    use crate::model::{Pose, world_from_joint};
    let (p, t, trousers, skel) = shirt_over_trousers(12);
    let bw = world_from_joint(&skel, &Pose::zero(&skel));
    let bind = |t: &[[u32; 3]]| crate::bind::bind_weights(&skel, &bw, &p, t, &BindOptions::default(), &|_| {}).unwrap();
    let (w, report) = bind(&t);
    assert_eq!(report.parts, 2);
    assert!(report.geodesic.as_ref().unwrap().layered_vertices > 0);
    // Each outer hem vertex of the shirt (on its sides, below the trousers' top) against the nearest trousers
    // vertex: how differently the left thigh (and its knee) moves them.
    let thigh = |v: usize| {
        let (js, ws) = w.row(v);
        js.iter()
            .zip(ws)
            .filter(|(j, _)| [3, 4].contains(*j))
            .map(|(_, x)| x)
            .sum::<f32>()
    };
    let mut worst = 0.0f32;
    for s in trousers..p.len() {
        let q = p[s];
        let outer = q.x.abs() > 0.319 || q.z.abs() > 0.169;
        if !outer || q.y > 1.1 + 1e-4 {
            continue;
        }
        let under = (0..trousers)
            .min_by(|&a, &b| p[a].distance_squared(q).total_cmp(&p[b].distance_squared(q)))
            .unwrap();
        worst = worst.max((thigh(s) - thigh(under)).abs());
    }
    // Uncoupled, the hem differs by half the weight (hips 1 against hips and thigh 0.5 each).
    assert!(worst < 0.2, "hem and waistband differ by {worst} in thigh weight");
    let inward: Vec<[u32; 3]> = t
        .iter()
        .enumerate()
        .map(|(i, x)| if i < t.len() / 2 { [x[0], x[2], x[1]] } else { *x })
        .collect();
    let flipped = bind(&inward).0;
    for v in 0..p.len() {
        assert_eq!(flipped.row(v), w.row(v), "vertex {v}");
    }
}

/// Parts side by side (their tops coplanar, a cell apart) and parts end to end (caps facing each other) are not
/// layers: nothing is coupled.
#[test]
fn parts_side_by_side_or_end_to_end_are_not_layers() {
    use crate::model::{Joint, Pose, Skeleton, world_from_joint};
    for (second, joint) in [
        (Vec3::new(0.22, 0.0, 0.0), Vec3::new(0.32, 0.0, 0.0)),
        (Vec3::new(0.0, 1.005, 0.0), Vec3::new(0.1, 1.005, 0.0)),
    ] {
        let (mut p, mut t) = box_mesh(Vec3::ZERO, Vec3::new(0.2, 1.0, 0.2), 10);
        let first = p.len() as u32;
        let (q, u) = box_mesh(second, second + Vec3::new(0.2, 1.0, 0.2), 10);
        p.extend(q);
        t.extend(u.iter().map(|x| x.map(|i| i + first)));
        let root = Vec3::new(0.1, 0.1, 0.1);
        let skel = Skeleton::new(vec![
            Joint::new("a", None, root),
            Joint::new("a_end", Some(0), Vec3::new(0.0, 0.8, 0.0)),
            Joint::new("b", Some(0), joint + Vec3::new(0.0, 0.1, 0.1) - root),
            Joint::new("b_end", Some(2), Vec3::new(0.0, 0.8, 0.0)),
        ])
        .unwrap();
        let bw = world_from_joint(&skel, &Pose::zero(&skel));
        let (_, report) = crate::bind::bind_weights(&skel, &bw, &p, &t, &BindOptions::default(), &|_| {}).unwrap();
        assert_eq!(report.parts, 2);
        assert_eq!(report.geodesic.unwrap().layered_vertices, 0, "second part at {second}");
    }
}
