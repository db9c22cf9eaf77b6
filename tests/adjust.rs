//! Properties of the weight clean-up operations (skinbind::adjust) on random meshes, weights, locks and
//! sequences of operations: every weighted vertex sums to 1 within 1e-6, no NaN, at most K influences after a
//! limit or in a softened row, locked joints never change, smoothing or softening a constant field changes
//! nothing. (Mirroring twice being the identity on a symmetric mesh is tested in src/adjust/mirror.rs, on an
//! exactly symmetric grid.)
#![allow(clippy::unwrap_used)]

use glam::{Mat4, Vec3};
use proptest::prelude::*;
use skinbind::adjust::clean::{CleanOptions, clean};
use skinbind::adjust::mirror::{Axis, JointMirror, MirrorMode, Plane, mirror_weights};
use skinbind::adjust::rogue::remove_rogue;
use skinbind::adjust::{Locks, MeshGraph, SmoothOptions, SmoothScheme, limit, normalise, prune, smooth, soften};
use skinbind::bind::bones::{Segment, SegmentKind};
use skinbind::formats::skel::read_skel;
use skinbind::model::Weights;

const JOINTS: u16 = 6;

/// A jittered `w` x `h` grid of quads, optionally with its last column duplicated (a seam) and welded back.
fn grid(w: usize, h: usize, jitter: &[f32], seam: bool) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut p = Vec::new();
    for y in 0..=h {
        for x in 0..=w {
            let k = p.len();
            let j = jitter.get(k % jitter.len().max(1)).copied().unwrap_or(0.0);
            p.push(Vec3::new(x as f32 + j, y as f32 - j, j * 0.5));
        }
    }
    let mut id: Vec<u32> = (0..p.len() as u32).collect();
    if seam {
        // Vertices of column w - 1 used by the last column of quads are copies.
        for y in 0..=h {
            let v = y * (w + 1) + (w - 1);
            id[v] = p.len() as u32;
            p.push(p[v]);
        }
    }
    let at = |x: usize, y: usize, right: bool| -> u32 {
        let v = y * (w + 1) + x;
        if right && x == w - 1 { id[v] } else { v as u32 }
    };
    let mut t = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let right = x == w - 1;
            t.push([at(x, y, right), at(x + 1, y, right), at(x, y + 1, right)]);
            t.push([at(x + 1, y, right), at(x + 1, y + 1, right), at(x, y + 1, right)]);
        }
    }
    (p, t)
}

fn weights_from(n: usize, raw: &[(u16, f32)], per: &[usize]) -> Weights {
    let mut rows = Vec::with_capacity(n);
    let mut k = 0;
    for v in 0..n {
        let m = per[v % per.len()];
        let mut row = Vec::new();
        for _ in 0..m {
            row.push(raw[k % raw.len()]);
            k += 1;
        }
        rows.push(row);
    }
    Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap().0
}

/// The weight of `joint` at every vertex.
fn column(w: &Weights, joint: u16) -> Vec<Option<f32>> {
    (0..w.len())
        .map(|v| {
            let (j, x) = w.row(v);
            j.iter().position(|&q| q == joint).map(|k| x[k])
        })
        .collect()
}

fn check_valid(w: &Weights, what: &str) {
    for v in 0..w.len() {
        let (j, x) = w.row(v);
        assert!(x.iter().all(|x| x.is_finite() && *x > 0.0), "{what}: vertex {v}: {x:?}");
        if !j.is_empty() {
            let sum: f64 = x.iter().map(|&x| x as f64).sum();
            assert!((sum - 1.0).abs() <= 1e-6, "{what}: vertex {v} sums to {sum}");
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Smooth(u32, f32, bool),
    Rogue(f32),
    Prune(f32),
    Limit(usize),
    Normalise,
    /// Flip, or copy from the + side.
    Mirror(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u32..4, 0.0f32..=1.0, any::<bool>()).prop_map(|(n, s, c)| Op::Smooth(n, s, c)),
        (0.0f32..0.5).prop_map(Op::Rogue),
        (0.0f32..0.6).prop_map(Op::Prune),
        (2usize..5).prop_map(Op::Limit),
        Just(Op::Normalise),
        any::<bool>().prop_map(Op::Mirror),
    ]
}

fn bones() -> Vec<Segment> {
    (0..JOINTS)
        .map(|j| Segment {
            joint: j,
            a: Vec3::new(j as f32, 0.0, 1.0),
            b: Vec3::new(j as f32 + 1.0, 3.0, 1.0),
            kind: SegmentKind::Child,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Any sequence of operations keeps the weights valid, keeps locked joints, and limits influences.
    #[test]
    fn any_sequence_keeps_weights_valid_and_locks_held(
        w in 2usize..7,
        h in 1usize..6,
        seam in any::<bool>(),
        jitter in prop::collection::vec(-0.2f32..0.2, 1..8),
        raw in prop::collection::vec((0..JOINTS, 0.001f32..1.0), 1..40),
        per in prop::collection::vec(1usize..5, 1..9),
        locked in prop::option::of(0..JOINTS),
        ops in prop::collection::vec(op(), 1..7),
    ) {
        let (p, t) = grid(w, h, &jitter, seam);
        let g = MeshGraph::new(&p, &t);
        let mut weights = weights_from(p.len(), &raw, &per);
        let locks = locked.map_or(Locks::none(), |j| Locks::of([j as usize]));
        // Keep every vertex with an unlocked weight and locked weights under 1, so no operation must override a lock.
        if let Some(j) = locked {
            let rows: Vec<Vec<(u16, f32)>> = (0..weights.len())
                .map(|v| {
                    let (js, xs) = weights.row(v);
                    let mut r: Vec<(u16, f32)> = js.iter().copied().zip(xs.iter().copied()).collect();
                    if r.iter().all(|x| x.0 == j) {
                        r.push(((j + 1) % JOINTS, 0.5));
                    }
                    r
                })
                .collect();
            weights = Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap().0;
        }
        // Files may sum to 1 only within 1e-3; normalising first makes every row exact, and the operations keep it so.
        weights = normalise(&weights, &locks).0;
        let before_locked = locked.map(|j| column(&weights, j));
        for op in &ops {
            let name = format!("{op:?}");
            weights = match *op {
                Op::Smooth(n, s, c) => {
                    let opts = SmoothOptions {
                        iterations: n,
                        strength: s,
                        scheme: if c { SmoothScheme::Cotangent } else { SmoothScheme::Uniform },
                    };
                    let (out, rep) = smooth(&g, &t, &weights, &opts, &locks, None).unwrap();
                    prop_assert_eq!(rep.locks_overridden, 0);
                    out
                }
                Op::Rogue(th) => remove_rogue(&g, &p, &weights, &bones(), th, &locks).unwrap().0,
                Op::Prune(th) => {
                    let (out, rep) = prune(&weights, th, &locks);
                    prop_assert_eq!(rep.locks_overridden, 0);
                    out
                }
                Op::Limit(k) => {
                    let (out, rep) = limit(&weights, k, &locks);
                    prop_assert_eq!(rep.locks_overridden, 0);
                    for v in 0..out.len() {
                        prop_assert!(out.row(v).0.len() <= k, "{}: vertex {} has {:?}", name, v, out.row(v));
                    }
                    out
                }
                Op::Normalise => normalise(&weights, &locks).0,
                Op::Mirror(flip) => {
                    // Across the grid's middle, pairing within half a cell (the jitter breaks exact symmetry).
                    let plane = Plane::at(Axis::X, w as f32 / 2.0);
                    let pairs = JointMirror::from_pairs(JOINTS as usize, [(1, 2), (3, 4)]).unwrap();
                    let mode = if flip { MirrorMode::Flip } else { MirrorMode::Copy { from_positive: true } };
                    let (out, rep) = mirror_weights(&p, &weights, &pairs, plane, mode, 0.5, &locks);
                    prop_assert_eq!(rep.locks_overridden, 0);
                    out
                }
            };
            check_valid(&weights, &name);
            prop_assert_eq!(weights.unweighted().count(), 0, "{}: every vertex stays weighted", name);
            if let (Some(j), Some(before)) = (locked, &before_locked) {
                let now = column(&weights, j);
                for v in 0..now.len() {
                    // Bit for bit, or within rounding where a row was rescaled around the lock.
                    let same = match (now[v], before[v]) {
                        (Some(a), Some(b)) => a == b,
                        (None, None) => true,
                        _ => false,
                    };
                    prop_assert!(same, "{}: vertex {}: locked joint {} went from {:?} to {:?}", name, v, j, before[v], now[v]);
                }
            }
        }
    }

    /// Smoothing a field that is the same everywhere changes nothing (within 1e-6).
    #[test]
    fn smoothing_a_constant_field_changes_nothing(
        w in 2usize..8,
        h in 1usize..6,
        jitter in prop::collection::vec(-0.3f32..0.3, 1..8),
        row in prop::collection::vec((0..JOINTS, 0.01f32..1.0), 1..5),
        n in 1u32..6,
        s in 0.0f32..=1.0,
        cot in any::<bool>(),
    ) {
        let (p, t) = grid(w, h, &jitter, true);
        let g = MeshGraph::new(&p, &t);
        let weights = normalise(&weights_from(p.len(), &row, &[row.len()]), &Locks::none()).0;
        let opts = SmoothOptions {
            iterations: n,
            strength: s,
            scheme: if cot { SmoothScheme::Cotangent } else { SmoothScheme::Uniform },
        };
        let (out, _) = smooth(&g, &t, &weights, &opts, &Locks::none(), None).unwrap();
        for v in 0..out.len() {
            // Rows come out sorted by joint.
            let sorted = |(j, x): (&[u16], &[f32])| {
                let mut r: Vec<(u16, f32)> = j.iter().copied().zip(x.iter().copied()).collect();
                r.sort_by_key(|e| e.0);
                r
            };
            let (a, b) = (sorted(out.row(v)), sorted(weights.row(v)));
            prop_assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(&b) {
                prop_assert!(x.0 == y.0 && (x.1 - y.1).abs() <= 1e-6, "vertex {}: {:?} vs {:?}", v, a, b);
            }
        }
    }
}

/// The whole pipeline through its public entry point, on a real skeleton: valid weights, at most K influences.
#[test]
fn pipeline_output_is_valid_and_limited() {
    let skel = read_skel(
        "balljoint root { balljoint a { offset 1 0 0 balljoint b { offset 1 0 0 } } }".as_bytes(),
        None,
    )
    .unwrap()
    .value;
    let bind: Vec<Mat4> = (0..3)
        .map(|j| Mat4::from_translation(Vec3::new(j as f32, 0.5, 0.0)))
        .collect();
    let (p, t) = grid(6, 3, &[0.05, -0.1, 0.0], true);
    let raw: Vec<(u16, f32)> = (0..50)
        .map(|k| ((k * 7 % 3) as u16, 0.1 + (k % 5) as f32 * 0.2))
        .collect();
    let weights = weights_from(p.len(), &raw, &[1, 2, 3]);
    let opts = CleanOptions {
        smooth: Some(SmoothOptions::default()),
        rogue: Some(0.1),
        prune: Some(0.05),
        max_influences: Some(2),
        ..Default::default()
    };
    let (out, rep) = clean(&p, &t, &skel, &bind, &weights, &opts).unwrap();
    check_valid(&out, "pipeline");
    assert!((0..out.len()).all(|v| out.row(v).0.len() <= 2));
    let steps: Vec<&str> = rep.steps.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(steps, ["mesh graph", "smooth", "rogue", "prune", "limit", "normalise"]);
}

/// A jittered grid of `w` x `h` cells `CELL` apart: dense enough that softening averages nearly every node (its σ
/// is 1.5% of the diagonal, from 64 cells across near 1.4 `CELL`; a corner or a stretched cell may stay
/// low-poly), with the bones a unit above it.
const CELL: f32 = 0.0125;

fn dense_grid(w: usize, h: usize, jitter: &[f32], seam: bool) -> (Vec<Vec3>, Vec<[u32; 3]>, Vec<Segment>) {
    let (p, t) = grid(w, h, jitter, seam);
    let p = p.into_iter().map(|q| q * CELL).collect();
    let far: Vec<Segment> = (0..JOINTS)
        .map(|j| Segment {
            joint: j,
            a: Vec3::new(j as f32 * 0.1, 0.0, 1.0),
            b: Vec3::new(j as f32 * 0.1, 0.5, 1.0),
            kind: SegmentKind::Child,
        })
        .collect();
    (p, t, far)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Softening any weights on a dense mesh averages nearly every node and keeps the weights valid: rows sum to 1,
    /// no vertex loses its weights, at most `k` influences in a changed row (one more where a locked joint is
    /// kept), and a locked joint's weights bit for bit.
    #[test]
    fn softening_keeps_weights_valid_and_locks_held(
        w in 64usize..80,
        h in 64usize..80,
        seam in any::<bool>(),
        jitter in prop::collection::vec(-0.15f32..0.15, 1..8),
        raw in prop::collection::vec((0..JOINTS, 0.001f32..1.0), 1..40),
        per in prop::collection::vec(1usize..5, 1..9),
        locked in prop::option::of(0..JOINTS),
        k in 1usize..5,
    ) {
        let (p, t, far) = dense_grid(w, h, &jitter, seam);
        let g = MeshGraph::new(&p, &t);
        let locks = locked.map_or(Locks::none(), |j| Locks::of([j as usize]));
        let weights = normalise(&weights_from(p.len(), &raw, &per), &locks).0;
        let (out, rep) = soften(&g, &weights, &far, k, &locks);
        prop_assert!(rep.softened_nodes * 10 >= rep.nodes * 9, "the dense grid is averaged: {:?}", rep);
        check_valid(&out, "soften");
        prop_assert_eq!(out.unweighted().count(), 0);
        let extra = usize::from(locked.is_some());
        for v in 0..out.len() {
            // A row softening left alone (a low-poly node's) keeps its influences.
            let averaged = out.row(v) != weights.row(v);
            prop_assert!(!averaged || out.row(v).0.len() <= k + extra, "vertex {}: {:?} from {:?}", v, out.row(v), weights.row(v));
        }
        if let Some(j) = locked {
            prop_assert_eq!(column(&out, j), column(&weights, j));
        }
    }

    /// Softening a field that is the same everywhere changes nothing (within 1e-6), though it averages nearly every node.
    #[test]
    fn softening_a_constant_field_changes_nothing(
        w in 64usize..80,
        h in 64usize..80,
        jitter in prop::collection::vec(-0.15f32..0.15, 1..8),
        row in prop::collection::vec((0..JOINTS, 0.01f32..1.0), 1..5),
    ) {
        let (p, t, far) = dense_grid(w, h, &jitter, true);
        let g = MeshGraph::new(&p, &t);
        let weights = normalise(&weights_from(p.len(), &row, &[row.len()]), &Locks::none()).0;
        let (out, rep) = soften(&g, &weights, &far, JOINTS as usize, &Locks::none());
        prop_assert!(rep.softened_nodes * 10 >= rep.nodes * 9, "the dense grid is averaged: {:?}", rep);
        for j in 0..JOINTS {
            for (v, (a, b)) in column(&out, j).iter().zip(column(&weights, j)).enumerate() {
                let same = match (a, b) {
                    (Some(a), Some(b)) => (a - b).abs() <= 1e-6,
                    (None, None) => true,
                    _ => false,
                };
                prop_assert!(same, "vertex {}: joint {}: {:?} became {:?}", v, j, b, a);
            }
        }
    }
}
