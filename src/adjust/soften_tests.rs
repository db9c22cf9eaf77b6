use glam::Vec3;

use super::*;
use crate::bind::bones::SegmentKind;

/// A flat strip along x from 0 to `len`: `n` + 1 columns of `rows` vertices, a square grid at spacing `len / n`,
/// in the plane z = `z`, its vertex indices starting at `base` (vertex `rows × column + row`).
fn strip(n: usize, rows: u32, len: f32, z: f32, base: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let h = len / n as f32;
    let mut p = Vec::new();
    for i in 0..=n {
        for k in 0..rows {
            p.push(Vec3::new(h * i as f32, h * k as f32, z));
        }
    }
    let mut t = Vec::new();
    for i in 0..n as u32 {
        for k in 0..rows - 1 {
            let a = base + rows * i + k;
            t.push([a, a + rows, a + 1]);
            t.push([a + 1, a + rows, a + rows + 1]);
        }
    }
    (p, t)
}

/// A bone far above the strip (so that σ is the diagonal's share).
fn far_bone(joint: u16) -> Segment {
    Segment {
        joint,
        a: Vec3::new(0.0, 0.1, 100.0),
        b: Vec3::new(1.0, 0.1, 100.0),
        kind: SegmentKind::Child,
    }
}

/// Joint 0 left of x = 0.5, joint 1 right of it.
fn step(positions: &[Vec3]) -> Weights {
    Weights::rigid(&positions.iter().map(|p| u16::from(p.x > 0.5)).collect::<Vec<_>>())
}

fn weight(w: &Weights, v: usize, joint: u16) -> f32 {
    let (j, x) = w.row(v);
    j.iter().zip(x).find(|(a, _)| **a == joint).map_or(0.0, |(_, x)| *x)
}

#[test]
fn a_step_becomes_a_symmetric_ramp_that_ends_two_radii_out() {
    // 200 columns of 5 over length 1: spacing 0.005, under σ = 0.015 × the diagonal (about 1) = 0.015.
    let (p, t) = strip(200, 5, 1.0, 0.0, 0);
    let w = step(&p);
    let g = MeshGraph::new(&p, &t);
    let (s, r) = soften(&g, &w, &[far_bone(0)], 4, &Locks::none());
    assert_eq!(r.softened_nodes, p.len());
    let sigma = SIGMA_OF_DIAGONAL * (Vec3::new(1.0, 0.02, 0.0)).length();
    let middle = |i: usize| 5 * i + 2;
    // Monotone across the step, symmetric about it, each row summing to 1.
    for i in 0..200 {
        assert!(
            weight(&s, middle(i + 1), 1) >= weight(&s, middle(i), 1) - 1e-6,
            "column {i}"
        );
        let sum: f32 = s.row(middle(i)).1.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5);
    }
    for i in 90..100 {
        let (a, b) = (weight(&s, middle(i), 1), weight(&s, middle(200 - i + 1), 0));
        assert!((a - b).abs() < 1e-4, "column {i}: {a} against {b}");
    }
    // The last column of joint 0 (x = 0.5) takes about as much of joint 1 as Gaussian weights on a line give:
    // the sum over the columns right of it over the sum over all, within the kernel's 2σ and the grid's
    // diagonal edges (which shorten some paths) taken into account.
    let on_line = |x: f32| (-x * x / (2.0 * sigma * sigma)).exp();
    let (mut right, mut all) = (0.0, 0.0);
    for i in -6i32..=6 {
        let x = i as f32 * 0.005;
        if x.abs() <= 2.0 * sigma {
            all += on_line(x);
            if i > 0 {
                right += on_line(x);
            }
        }
    }
    let at_step = weight(&s, middle(100), 1);
    assert!(
        (at_step - right / all).abs() < 0.08,
        "{at_step} against {}",
        right / all
    );
    // Farther than 2σ along the edges from the step, nothing changes.
    let reach = (2.0 * sigma / 0.005).ceil() as usize;
    for i in (0..100 - reach).chain(101 + reach..=200) {
        assert_eq!(s.row(middle(i)), w.row(middle(i)), "column {i}");
    }
}

#[test]
fn a_low_poly_mesh_keeps_its_weights() {
    // 10 columns: spacing 0.1, over 1.5 σ.
    let (p, t) = strip(10, 3, 1.0, 0.0, 0);
    let w = step(&p);
    let (s, r) = soften(&MeshGraph::new(&p, &t), &w, &[far_bone(0)], 4, &Locks::none());
    assert_eq!((r.softened_nodes, r.changed_vertices), (0, 0));
    assert_eq!(s, w);
}

#[test]
fn near_a_bone_the_radius_shrinks_to_a_share_of_its_distance() {
    // 41 rows 0.005 apart, a bone 0.01 over the middle one: there σ = 0.35 × 0.01, its edges (0.005 and
    // 0.007) average more than 1.5 σ, and the middle row keeps its weights; the outer rows, 0.1 from the bone,
    // are softened by the diagonal's share.
    let (p, t) = strip(200, 41, 1.0, 0.0, 0);
    let w = step(&p);
    let bone = Segment {
        joint: 0,
        a: Vec3::new(0.0, 0.1, 0.01),
        b: Vec3::new(1.0, 0.1, 0.01),
        kind: SegmentKind::Child,
    };
    let (s, _) = soften(&MeshGraph::new(&p, &t), &w, &[bone], 4, &Locks::none());
    for i in 95..=105 {
        assert_eq!(s.row(41 * i + 20), w.row(41 * i + 20), "column {i}");
    }
    assert!(weight(&s, 41 * 100, 1) > 0.1);
}

#[test]
fn separate_parts_do_not_soften_into_each_other() {
    // Two strips 0.001 apart (far nearer than σ), joint 0 on the lower, joint 1 on the upper; dense enough
    // (spacing 0.002) that the nodes are clustered.
    let (mut p, mut t) = strip(500, 5, 1.0, 0.0, 0);
    let (p2, t2) = strip(500, 5, 1.0, 0.001, p.len() as u32);
    let lower = p.len();
    p.extend(p2);
    t.extend(t2);
    let w = Weights::rigid(&(0..p.len()).map(|v| u16::from(v >= lower)).collect::<Vec<_>>());
    let (s, r) = soften(&MeshGraph::new(&p, &t), &w, &[far_bone(0)], 4, &Locks::none());
    assert!(r.clusters * 4 < p.len(), "{} clusters", r.clusters);
    assert_eq!(r.changed_vertices, 0);
    assert_eq!(s, w);
}

#[test]
fn locked_joints_keep_their_weights() {
    // Every vertex 0.2 of joint 2 (locked), the rest the step between joints 0 and 1.
    let (p, t) = strip(200, 5, 1.0, 0.0, 0);
    let rows: Vec<(u32, Row)> = p
        .iter()
        .enumerate()
        .map(|(v, q)| (v as u32, vec![(u16::from(q.x > 0.5), 0.8), (2, 0.2)]))
        .collect();
    let w = step(&p).with_rows(&rows).unwrap();
    let (s, r) = soften(&MeshGraph::new(&p, &t), &w, &[far_bone(0)], 4, &Locks::of([2]));
    assert!(r.changed_vertices > 0);
    for v in 0..p.len() {
        assert!((weight(&s, v, 2) - 0.2).abs() < 1e-6, "vertex {v}");
        let sum: f32 = s.row(v).1.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5);
    }
    assert!(weight(&s, 5 * 100 + 2, 1) > 0.1);
}

/// The definition, node by node: each softened node's row the Gaussian average of the straight distance over
/// every node within 2σ that is connected to it through nodes within 2σ. `soften` clusters dense meshes; on a
/// mesh where every cluster is one node it must give this exactly.
fn definition(graph: &MeshGraph, weights: &Weights, segments: &[Segment], k: usize) -> Weights {
    let (radius, softened) = radii(graph, segments);
    let p = graph.positions();
    let mut rows: Vec<(u32, Row)> = Vec::new();
    for node in (0..graph.nodes()).filter(|&n| softened[n]) {
        let s = radius[node];
        let mut seen = vec![false; graph.nodes()];
        let mut ball = vec![node];
        seen[node] = true;
        let mut next = 0;
        while next < ball.len() {
            let n = ball[next];
            next += 1;
            for &m in graph.neighbours(n) {
                let m = m as usize;
                if !seen[m] && p[m].distance(p[node]) <= 2.0 * s {
                    seen[m] = true;
                    ball.push(m);
                }
            }
        }
        let mut acc: Row = Vec::new();
        let mut total = 0.0;
        for n in ball {
            let d = p[n].distance(p[node]);
            let g = (-d * d / (2.0 * s * s)).exp();
            total += g;
            let (j, w) = weights.row(graph.members(n)[0] as usize);
            for (&j, &w) in j.iter().zip(w) {
                match acc.iter_mut().find(|x| x.0 == j) {
                    Some(x) => x.1 += g * w,
                    None => acc.push((j, g * w)),
                }
            }
        }
        acc.iter_mut().for_each(|x| x.1 /= total);
        let row = limited(acc, k);
        rows.extend(graph.members(node).iter().map(|&v| (v, row.clone())));
    }
    rows.sort_by_key(|r| r.0);
    weights.with_rows(&rows).unwrap()
}

/// The largest and the mean (per vertex, over the joints) absolute difference of two weight sets.
fn differences(a: &Weights, b: &Weights, joints: u16) -> (f32, f32) {
    let per_vertex = |v: usize| (0..joints).map(move |j| (weight(a, v, j) - weight(b, v, j)).abs());
    let largest = (0..a.len()).flat_map(per_vertex).fold(0.0, f32::max);
    let mean = (0..a.len()).map(|v| per_vertex(v).sum::<f32>()).sum::<f32>() / a.len() as f32;
    (largest, mean)
}

#[test]
fn one_node_clusters_give_the_definition_exactly() {
    // Spacing 0.01 against σ about 0.016: a cluster may reach 0.35 σ, under one edge. A bent strip, so that
    // the straight distance is not the distance along it.
    let (mut p, t) = strip(100, 5, 1.0, 0.0, 0);
    p.iter_mut().for_each(|q| q.z = 0.2 * (q.x * 6.0).sin());
    let g = MeshGraph::new(&p, &t);
    let w = step(&p);
    let (s, r) = soften(&g, &w, &[far_bone(0)], 4, &Locks::none());
    assert_eq!(r.clusters, g.nodes());
    assert!(r.changed_vertices > 0);
    let (largest, _) = differences(&s, &definition(&g, &w, &[far_bone(0)], 4), 2);
    assert!(largest < 1e-5, "{largest}");
}

#[test]
fn clusters_on_a_dense_mesh_stay_near_the_definition() {
    // Spacing 0.002 against σ about 0.015: clusters of several nodes. Three joints in bands, so that blends
    // meet.
    let (p, t) = strip(500, 21, 1.0, 0.0, 0);
    let g = MeshGraph::new(&p, &t);
    let w = Weights::rigid(&p.iter().map(|q| ((q.x * 3.0) as u16).min(2)).collect::<Vec<_>>());
    let (s, r) = soften(&g, &w, &[far_bone(0)], 4, &Locks::none());
    assert!(r.clusters * 4 < g.nodes(), "{} clusters", r.clusters);
    let reference = definition(&g, &w, &[far_bone(0)], 4);
    // A blend's slope is at most about 0.4 / σ, so 0.07 is a shift of about a sixth of σ (one edge here).
    let (largest, mean) = differences(&s, &reference, 3);
    assert!(largest < 0.07 && mean < 0.005, "largest {largest}, mean {mean}");
    let (largest, mean) = differences(&w, &reference, 3);
    assert!(
        largest > 0.4 && mean > 0.03,
        "the softening itself: largest {largest}, mean {mean}"
    );
}

/// Vertex 0 at the origin joined to `spokes` slivers: sliver `i`'s other corners lie around it at (`r`, 0) and
/// (`r`, 0.8 `r`) in polar coordinates and height, `r` 0.01 from sliver `near_from` on and 0.5 before it.
fn fan(spokes: u32, near_from: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let mut p = vec![Vec3::ZERO];
    let mut t = Vec::new();
    for i in 0..spokes {
        let a = std::f32::consts::TAU * i as f32 / spokes as f32;
        let r = if i >= near_from { 0.01 } else { 0.5 };
        p.push(r * Vec3::new(a.cos(), a.sin(), 0.0));
        p.push(r * Vec3::new(a.cos(), a.sin(), 0.8));
        t.push([0, 2 * i + 1, 2 * i + 2]);
    }
    (p, t)
}

#[test]
fn a_hub_with_a_fan_of_slivers_is_softened_in_bounded_time() {
    // One vertex joined to 20 000 slivers whose other corners lie 0.01 around it (past a cluster's reach, within
    // the kernel's 2σ of 0.03), alternately joint 0 and joint 1: every spoke's search reaches the hub, whose
    // 40 000 neighbours it must not scan each time (that would be 8e8 entries).
    let spokes = 20_000u32;
    let (mut p, t) = fan(spokes, 0);
    p.push(Vec3::new(1.0, 0.0, 0.0));
    let w = Weights::rigid(&(0..p.len()).map(|v| (v % 2) as u16).collect::<Vec<_>>());
    let g = MeshGraph::new(&p, &t);
    let started = std::time::Instant::now();
    let (s, r) = soften(&g, &w, &[far_bone(0)], 4, &Locks::none());
    assert!(started.elapsed().as_secs_f32() < 10.0, "{:?}", started.elapsed());
    assert_eq!(r.clusters, g.nodes(), "every spoke a cluster of its own");
    assert!(r.changed_vertices > spokes as usize, "{r:?}");
    for v in 0..s.len() {
        let sum: f32 = s.row(v).1.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5, "vertex {v}");
    }
}

#[test]
fn a_term_that_underflows_does_not_list_its_joint_twice() {
    let mut sum = Sum::new(3);
    sum.add(1e-30, [(2u16, 1e-20f32)].into_iter());
    sum.add(1.0, [(2u16, 0.5f32), (1, 0.5)].into_iter());
    sum.add(1.0, [(7u16, 1.0f32)].into_iter());
    let row = sum.take().unwrap();
    assert_eq!(row.len(), 2, "{row:?}");
    assert!(row.iter().all(|x| x.1 > 0.0 && x.1 < 0.5), "{row:?}");
}

/// The cluster search as first written: every adjacency entry tested against the limits, a cluster too far
/// tested again each time it is met, each distance measured from the start's centroid afterwards.
fn gather_reference(clusters: &Clusters, start: usize, limit: f32) -> Vec<(u32, u32)> {
    let mut seen = vec![false; clusters.len()];
    let mut found = vec![start as u32];
    seen[start] = true;
    let centre = clusters.place[start].centroid;
    let (mut next, mut scanned) = (0, 0);
    'search: while next < found.len() {
        let c = found[next] as usize;
        next += 1;
        let adjacent = clusters.adjacent(c);
        if adjacent.len() > MAX_EXPAND && c != start {
            continue;
        }
        for &k in adjacent {
            scanned += 1;
            if scanned > MAX_SCAN || found.len() >= MAX_BALL {
                break 'search;
            }
            let k = k as usize;
            let place = clusters.place[k];
            if !seen[k] && place.centroid.distance(centre) - place.extent <= limit {
                seen[k] = true;
                found.push(k as u32);
            }
        }
    }
    let distance = |k: u32| centre.distance(clusters.place[k as usize].centroid).to_bits();
    found.iter().map(|&k| (k, distance(k))).collect()
}

/// Each cluster's search from a [`Ball`] reused throughout, against [`gather_reference`]; how many clusters the
/// search from the first cluster found.
fn compare_searches(g: &MeshGraph, limit: f32) -> usize {
    let (radius, _) = radii(g, &[far_bone(0)]);
    let clusters = Clusters::grow(g, &radius);
    let mut ball = Ball::new(clusters.len());
    let mut first = 0;
    for c in (0..clusters.len()).rev() {
        ball.gather(&clusters, c, limit);
        let got: Vec<(u32, u32)> = ball
            .found
            .iter()
            .zip(&ball.distance)
            .map(|(&k, d)| (k, d.to_bits()))
            .collect();
        let want = gather_reference(&clusters, c, limit);
        assert_eq!(got.len(), want.len(), "cluster {c}, limit {limit}");
        assert_eq!(got, want, "cluster {c}, limit {limit}");
        first = got.len();
    }
    first
}

#[test]
fn the_cluster_search_finds_what_the_plain_search_finds_in_the_same_order() {
    // A dense strip: clusters of several nodes, searches of a few dozen.
    let (p, t) = strip(300, 21, 1.0, 0.0, 0);
    for limit in [0.03, 0.08] {
        assert!(compare_searches(&MeshGraph::new(&p, &t), limit) > 1);
    }
    // From the hub of a fan (cluster 0, every spoke a cluster too) the search stops at MAX_BALL clusters (limit
    // 0.03 takes every other spoke); and after MAX_SCAN entries, when only the spokes past them are near.
    let (p, t) = fan(20_000, 0);
    assert_eq!(compare_searches(&MeshGraph::new(&p, &t), 0.03), MAX_BALL);
    let (p, t) = fan(20_000, MAX_SCAN as u32 / 2);
    assert_eq!(compare_searches(&MeshGraph::new(&p, &t), 0.03), 1);
}
