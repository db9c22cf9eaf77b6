//! Sample rig generation speed: `skinbind sample` (and every bench and test that makes a rig) builds each kind's
//! mesh, skeleton and weights at the asked vertex count.
//!
//! - `sample/KIND/N`: `make_sample(KIND, N)` for the tube, the arm and the creature, at 10k, 100k and 1M vertices.
//!
//! Run: `cargo bench --bench sample`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skinbind::sample::{SampleKind, make_sample};

/// The binaries' allocator (src/main.rs).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("sample");
    group.sample_size(10);
    for n in [10_000usize, 100_000, 1_000_000] {
        for kind in SampleKind::ALL {
            let name = format!("{kind:?}").to_lowercase();
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, &n| {
                b.iter(|| black_box(make_sample(kind, n).unwrap().skin.vertex_count()))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
