//! Weight clean-up speed (issue 4 targets on the 2-core machine: 10 smoothing iterations on 1M vertices in at
//! most 300 ms; rogue removal on 1M vertices x 100 joints in at most 500 ms).
//!
//! - `adjust/graph/N`: building the welded mesh graph of the creature sample (done once per mesh).
//! - `adjust/smooth10/N`: 10 uniform iterations at strength 0.5 over the creature sample's own weights (1 or 2
//!   influences a vertex, blended at every joint), graph built beforehand.
//! - `adjust/rogue/N`: rogue removal on a 100-joint chain (`sample::chain_tube`) with an island planted every
//!   997 vertices (a joint 50 bones away at weight 0.3), graph built beforehand.
//! - `adjust/prune_limit/N`: prune at 0.1 then limit to 4 on the smoothed creature weights.
//! - `adjust/soften/N`: softening the creature's weights as the default bind gives them (geodesic, before the
//!   clean-up), graph built beforehand.
//!
//! Sizes 10k, 100k and 1M show how cost grows. Run: `cargo bench --bench adjust`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skinbind::adjust::rogue::remove_rogue;
use skinbind::adjust::{Locks, MeshGraph, SmoothOptions, SmoothScheme, limit, prune, smooth, soften};
use skinbind::bind::bones::bone_segments;
use skinbind::bind::{BindOptions, bind_weights};
use skinbind::model::Weights;
use skinbind::sample::{SampleKind, chain_tube, make_sample};

/// The binaries' allocator (src/main.rs).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

/// The chain's weights with an island planted every 997 vertices.
fn with_islands(w: &Weights, joints: u16) -> Weights {
    let rows: Vec<Vec<(u16, f32)>> = (0..w.len())
        .map(|v| {
            let (j, x) = w.row(v);
            let mut r: Vec<(u16, f32)> = j.iter().copied().zip(x.iter().map(|x| x * 0.7)).collect();
            if v % 997 == 500 {
                r.push(((j[0] + joints / 2) % joints, 0.3));
            } else {
                r.iter_mut().for_each(|e| e.1 /= 0.7);
            }
            r
        })
        .collect();
    Weights::normalized(rows.iter().map(Vec::as_slice)).unwrap().0
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("adjust");
    group.sample_size(10);
    for n in SIZES {
        let s = make_sample(SampleKind::Creature, n).unwrap();
        let (p, t) = (s.skin.positions(), s.skin.triangles());
        let w = s.skin.weights().unwrap();
        group.bench_with_input(BenchmarkId::new("graph", n), &n, |b, _| {
            b.iter(|| black_box(MeshGraph::new(p, t)))
        });
        let g = MeshGraph::new(p, t);
        let opts = SmoothOptions {
            iterations: 10,
            strength: 0.5,
            scheme: SmoothScheme::Uniform,
        };
        group.bench_with_input(BenchmarkId::new("smooth10", n), &n, |b, _| {
            b.iter(|| black_box(smooth(&g, t, w, &opts, &Locks::none(), None).unwrap()))
        });
        let bind = s.skin.bindings().unwrap();
        let segments = bone_segments(&s.skeleton, bind);
        let (bound, _) = bind_weights(&s.skeleton, bind, p, t, &BindOptions::default(), &|_| {}).unwrap();
        group.bench_with_input(BenchmarkId::new("soften", n), &n, |b, _| {
            b.iter(|| black_box(soften(&g, &bound, &segments, 4, &Locks::none())))
        });
        let smoothed = smooth(&g, t, w, &opts, &Locks::none(), None).unwrap().0;
        group.bench_with_input(BenchmarkId::new("prune_limit", n), &n, |b, _| {
            b.iter(|| {
                let (p, _) = prune(&smoothed, 0.1, &Locks::none());
                black_box(limit(&p, 4, &Locks::none()))
            })
        });
    }
    for n in SIZES {
        let s = chain_tube(100, n).unwrap();
        let (p, t) = (s.skin.positions(), s.skin.triangles());
        let w = with_islands(s.skin.weights().unwrap(), 100);
        let g = MeshGraph::new(p, t);
        let segments = bone_segments(&s.skeleton, s.skin.bindings().unwrap());
        let (_, rep) = remove_rogue(&g, p, &w, &segments, 0.1, &Locks::none()).unwrap();
        assert_eq!(
            rep.removed.len(),
            (0..p.len()).filter(|v| v % 997 == 500).count(),
            "every planted island"
        );
        group.bench_with_input(BenchmarkId::new("rogue", n), &n, |b, _| {
            b.iter(|| black_box(remove_rogue(&g, p, &w, &segments, 0.1, &Locks::none()).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
