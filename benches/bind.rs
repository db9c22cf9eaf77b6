//! Automatic binding speed on the 2-core machine. Targets: the default (geodesic) method binds 100k vertices x 20
//! joints in at most 200 ms and 1M x 100 in at most 3 s, peak heap at most 400 bytes a vertex (issue 22); the
//! `line` method 100k x 20 in at most 50 ms and 1M x 100 in at most 1 s, 300 bytes a vertex (issue 3).
//!
//! - `bind/METHOD/creature/N`: the creature sample (19 joints, 5 separate parts) at 1k, 100k and 1M vertices.
//! - `bind/METHOD/chain100/N`: a closed tube around a straight chain of 100 joints, at 100k and 1M vertices.
//! - `bind/default/creature/N`: what `skinbind bind` does by default, in process (`adjust::bind_and_clean`): the
//!   geodesic bind then the default clean-up (`CleanOptions::after_binding`: rogue removal, softening, limit,
//!   normalise), at 1k, 100k and 1M.
//!   Issue 44's targets: at most 200 ms at 100k, 1.5 s and 300 bytes a vertex at 1M.
//!
//! Run: `cargo bench --bench bind`. After the timings it prints the peak heap of one bind per vertex.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use glam::{Mat4, Vec3};
use mimalloc::MiMalloc;
use peakmem_alloc::{PeakMemAlloc, PeakMemAllocTrait};
use skinbind::adjust::{BindAndClean, bind_and_clean};
use skinbind::bind::{BindMethod, BindOptions, bind_weights};
use skinbind::model::Skeleton;
use skinbind::sample::{Sample, SampleKind, chain_tube, make_sample};

/// The binaries' allocator (src/main.rs), with a counter of the peak heap above a reset point.
static PEAK: PeakMemAlloc<MiMalloc> = PeakMemAlloc::new(MiMalloc);
#[global_allocator]
static ALLOC: &PeakMemAlloc<MiMalloc> = &PEAK;

struct Rig {
    skel: Skeleton,
    bind: Vec<Mat4>,
    positions: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
}

fn creature(n: usize) -> Rig {
    rig(make_sample(SampleKind::Creature, n).unwrap())
}

/// A tube of radius 0.3 along +x from 0 to `joints`, 64 vertices per ring, closed by two poles, around a chain
/// of `joints` joints one unit apart (`sample::chain_tube`).
fn chain(joints: usize, vertices: usize) -> Rig {
    rig(chain_tube(joints, vertices).unwrap())
}

fn rig(s: Sample) -> Rig {
    Rig {
        bind: s.skin.bindings().unwrap().to_vec(),
        positions: s.skin.positions().to_vec(),
        triangles: s.skin.triangles().to_vec(),
        skel: s.skeleton,
    }
}

fn run(r: &Rig, method: BindMethod) -> skinbind::model::Weights {
    bind_weights(
        &r.skel,
        &r.bind,
        &r.positions,
        &r.triangles,
        &BindOptions::for_method(method),
        &|_| {},
    )
    .unwrap()
    .0
}

/// The default path of `skinbind bind` (src/cli/bind.rs): `bind_and_clean`, the geodesic bind with the mesh graph
/// built beside it, then the default clean-up.
fn run_default(r: &Rig) -> skinbind::model::Weights {
    let job = BindAndClean::with_default_clean_up(BindOptions::default());
    bind_and_clean(&r.skel, &r.bind, &r.positions, &r.triangles, &job, &|_| {})
        .unwrap()
        .weights
}

fn bench(c: &mut Criterion) {
    let methods = [BindMethod::Geodesic, BindMethod::Line];
    let mut group = c.benchmark_group("bind");
    for n in [1_000usize, 100_000, 1_000_000] {
        let rig = creature(n);
        if n >= 100_000 {
            group.sample_size(10);
        }
        for m in methods {
            group.bench_with_input(BenchmarkId::new(format!("{}/creature", m.name()), n), &rig, |b, r| {
                b.iter(|| black_box(run(r, m)))
            });
        }
        group.bench_with_input(BenchmarkId::new("default/creature", n), &rig, |b, r| {
            b.iter(|| black_box(run_default(r)))
        });
    }
    for n in [100_000usize, 1_000_000] {
        let rig = chain(100, n);
        group.sample_size(10);
        for m in methods {
            group.bench_with_input(BenchmarkId::new(format!("{}/chain100", m.name()), n), &rig, |b, r| {
                b.iter(|| black_box(run(r, m)))
            });
        }
    }
    group.finish();

    for (name, rig) in [
        ("creature", creature(100_000)),
        ("creature", creature(1_000_000)),
        ("chain100", chain(100, 1_000_000)),
    ] {
        if name == "creature" {
            PEAK.reset_peak_memory();
            let w = run_default(&rig);
            let peak = PEAK.get_peak_memory();
            println!(
                "bind/default/{name}/{} memory: peak heap {:.1} MB above the input mesh, {:.0} bytes per vertex",
                w.len(),
                peak as f64 / 1e6,
                peak as f64 / rig.positions.len() as f64,
            );
        }
        for m in methods {
            PEAK.reset_peak_memory();
            let w = run(&rig, m);
            let peak = PEAK.get_peak_memory();
            println!(
                "bind/{}/{name}/{} memory: peak heap {:.1} MB above the input mesh, {:.0} bytes per vertex",
                m.name(),
                w.len(),
                peak as f64 / 1e6,
                peak as f64 / rig.positions.len() as f64,
            );
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
