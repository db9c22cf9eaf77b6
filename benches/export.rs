//! Export speed (issue 7 target: a 1M-vertex rig to .skin and to .glb, each in at most 1 s).
//!
//! `export/skin/N` and `export/glb/N` write the creature sample (19 joints, up to 2 influences a vertex, with
//! bindings) of N vertices into memory: the formatting work without the disk. Run: `cargo bench --bench export`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skinbind::formats::glb::{GlbOptions, write_glb};
use skinbind::formats::skin::write_skin;
use skinbind::sample::{SampleKind, make_sample};

/// The binaries' allocator (src/main.rs).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("export");
    group.sample_size(10);
    for n in [1_000usize, 100_000, 1_000_000] {
        let s = make_sample(SampleKind::Creature, n).unwrap();
        group.bench_with_input(BenchmarkId::new("skin", n), &n, |b, _| {
            b.iter(|| {
                let mut out = Vec::with_capacity(n * 120);
                write_skin(&mut out, &s.skin).unwrap();
                black_box(out.len())
            })
        });
        group.bench_with_input(BenchmarkId::new("glb", n), &n, |b, _| {
            b.iter(|| {
                black_box(
                    write_glb(&s.skeleton, &s.skin, None, GlbOptions::default())
                        .unwrap()
                        .len(),
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
