//! Range-of-motion check speed. Target (issue 44, on the 2-core machine): `skinbind check` on the 100k creature
//! in at most 0.5 s for the whole process (reading the files included). These benches are in-process: the
//! library's `check` on a rig already in memory, no file read, no process start; docs/check.md gives both.
//!
//! - `check/chain20/N`: the whole check (preparation, every joint swept at its DOF limits or +-90 degrees about
//!   each axis in 3 steps each way, regions) on a 20-joint chain (`sample::chain_tube`), linear blend.
//! - `check/creature/N`: the same on the creature sample (18 joints that deform, blended at every joint, limbs
//!   as separate parts, so contacts are measured too), with the sample's own weights.
//!
//! Sizes 10k, 100k and 1M show how cost grows. Run: `cargo bench --bench check` (one: `-- 'creature/100000$'`).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skinbind::check::{CheckOptions, Rig, check};
use skinbind::sample::{Sample, SampleKind, chain_tube, make_sample};

/// The binaries' allocator (src/main.rs).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

fn run(s: &Sample) -> usize {
    let rig = Rig::of(&s.skeleton, s.skin.bindings().unwrap(), &s.skin).unwrap();
    check(rig, None, &CheckOptions::default(), &|_, _| true)
        .unwrap()
        .findings
        .len()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    group.sample_size(10);
    for n in SIZES {
        let chain = chain_tube(20, n).unwrap();
        group.bench_with_input(BenchmarkId::new("chain20", n), &n, |b, _| {
            b.iter(|| black_box(run(&chain)))
        });
        let creature = make_sample(SampleKind::Creature, n).unwrap();
        group.bench_with_input(BenchmarkId::new("creature", n), &n, |b, _| {
            b.iter(|| black_box(run(&creature)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
