//! Parsing speed of `.skin` files made by `skinbind sample`, at 1k, 100k and 1M vertices (criterion reports
//! bytes per second), and the peak heap memory of one 1M-vertex parse against the loaded model's size.
//!
//! In-process: opening the file, sniffing its head, and reading it into a checked `Skin` (weights cleaned and
//! checked), as `load_skin` does; the whole-process figure (`skinbind info`) is in docs/formats.md.
//!
//! Run: `cargo bench --bench parse`. Targets: at least 500 MB/s on the 2-core machine (issue 44; issue 2 asked
//! for 150), peak memory under twice the model (issue 2).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mimalloc::MiMalloc;
use peakmem_alloc::{PeakMemAlloc, PeakMemAllocTrait};
use skinbind::atomic::save_atomic;
use skinbind::formats::{load_skin, skin::write_skin};
use skinbind::sample::{SampleKind, make_sample};

/// The binaries' allocator (src/main.rs), with a counter of the peak heap above a reset point.
static PEAK: PeakMemAlloc<MiMalloc> = PeakMemAlloc::new(MiMalloc);
#[global_allocator]
static ALLOC: &PeakMemAlloc<MiMalloc> = &PEAK;

fn sample_file(vertices: usize) -> (PathBuf, u64) {
    let dir = std::env::temp_dir().join("skinbind-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("creature-{vertices}.skin"));
    if !path.exists() {
        let s = make_sample(SampleKind::Creature, vertices).unwrap();
        save_atomic(&path, |w| write_skin(w, &s.skin)).unwrap();
    }
    let len = std::fs::metadata(&path).unwrap().len();
    (path, len)
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_skin");
    for n in [1_000usize, 100_000, 1_000_000] {
        let (path, len) = sample_file(n);
        group.throughput(Throughput::Bytes(len));
        if n >= 1_000_000 {
            group.sample_size(10);
        }
        group.bench_with_input(BenchmarkId::from_parameter(n), &path, |b, p| {
            b.iter(|| black_box(load_skin(p, None).unwrap()))
        });
    }
    group.finish();

    // Peak heap during one 1M-vertex parse, against the model it produced.
    let (path, len) = sample_file(1_000_000);
    PEAK.reset_peak_memory();
    let skin = load_skin(&path, None).unwrap().value;
    let peak = PEAK.get_peak_memory();
    let model = skin.heap_bytes();
    println!(
        "parse_skin/1000000 memory: file {:.1} MB, model {:.1} MB, peak heap {:.1} MB ({:.2}x the model)",
        len as f64 / 1e6,
        model as f64 / 1e6,
        peak as f64 / 1e6,
        peak as f64 / model as f64
    );
}

criterion_group!(benches, parse);
criterion_main!(benches);
