//! Template fitting speed (issue 41 target on the 2-core machine: a 100k-vertex mesh and a 65-joint template in
//! at most 1 s).
//!
//! - `fit/chain65/N`: a 65-joint chain with its own 20k-vertex tube (`sample::chain_tube`) fitted into the
//!   creature sample's mesh of N vertices: the facing check (the chain is turned to lie along the body), the
//!   solids, both registrations (the smooth field and the articulated one on the tube's weights), the snap and
//!   the rebuild.
//!
//! Sizes 10k, 100k and 1M show how cost grows. Run: `cargo bench --bench fit`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skinbind::rig::fit::{FitInput, FitOptions, fit_template};
use skinbind::sample::{SampleKind, chain_tube, make_sample};

/// The binaries' allocator (src/main.rs).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("fit");
    group.sample_size(10);
    let template = chain_tube(65, 20_000).unwrap();
    let world = template.skin.bindings().unwrap().to_vec();
    for n in SIZES {
        let mesh = make_sample(SampleKind::Creature, n).unwrap();
        let input = FitInput {
            template: &template.skeleton,
            template_world: &world,
            template_mesh: Some((template.skin.positions(), template.skin.triangles())),
            template_weights: template.skin.weights(),
            template_box: None,
            template_widths: None,
            template_trunk: None,
            positions: mesh.skin.positions(),
            triangles: mesh.skin.triangles(),
        };
        group.bench_with_input(BenchmarkId::new("chain65", n), &n, |b, _| {
            b.iter(|| black_box(fit_template(&input, &FitOptions::default()).unwrap().world.len()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
