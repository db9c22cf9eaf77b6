//! Weight brush speed (issue 44 target on the 2-core machine: one brush dab on a 1M-vertex skin in at most
//! 0.5 ms; issue 6 asked for 2 ms), in-process, counting the radius query, the weight update, the normalisation
//! and the packing of the changed rows for the GPU as the editor packs them (in runs, short gaps re-sent:
//! `render::pack::pack_runs`); the upload itself is a `glBufferSubData` of those bytes, 8 per vertex.
//!
//! - `brush/add/N`: the first dab of a stroke (every touched row is new to the stroke, the worst case) with the
//!   Add brush on the creature sample where two joints blend, radius chosen so that 0.5% of the vertices lie
//!   within it (5 000 at 1M).
//! - `brush/smooth/N`: the same with the Smooth brush (mesh graph built beforehand).
//!
//! Sizes 1k, 100k and 1M show how cost grows. Run: `cargo bench --bench brush`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skinbind::adjust::{Locks, MeshGraph};
use skinbind::paint::brush::{BrushMode, BrushSettings, DabSurface, Falloff, PointIndex, Stroke};
use skinbind::render::pack::{pack_pairs, pack_runs};
use skinbind::sample::{SampleKind, make_sample};

/// The binaries' allocator (src/main.rs).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SIZES: [usize; 3] = [1_000, 100_000, 1_000_000];

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("brush");
    group.sample_size(30);
    for n in SIZES {
        let s = make_sample(SampleKind::Creature, n).unwrap();
        let (positions, normals) = (s.skin.positions(), s.skin.normals());
        let weights = s.skin.weights().unwrap();
        let index = PointIndex::of(positions);
        let graph = MeshGraph::new(positions, s.skin.triangles());
        // The dab's centre: the first vertex from half way through the mesh (the torso) where two joints blend,
        // painting the first of them (so Add and Smooth both have work at every vertex); its radius takes 0.5%
        // of the vertices.
        let mid = (positions.len() / 2..positions.len())
            .find(|&v| weights.row(v).0.len() >= 2)
            .unwrap_or(positions.len() / 2);
        let joint = weights.row(mid).0.first().copied().unwrap_or(0);
        let centre = positions[mid];
        let mut d: Vec<f32> = positions.iter().map(|p| p.distance(centre)).collect();
        let k = (positions.len() / 200).max(1);
        d.select_nth_unstable_by(k, f32::total_cmp);
        let radius = d[k];
        let surface = DabSurface {
            positions,
            normals,
            index: &index,
            graph: Some(&graph),
            eye: centre + normals[mid] * 10.0,
        };
        for mode in [BrushMode::Add, BrushMode::Smooth] {
            let brush = BrushSettings {
                mode,
                strength: 0.5,
                falloff: Falloff::Smooth,
                front_only: false,
                ..BrushSettings::default()
            };
            let name = mode.name().to_lowercase();
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    let mut stroke = Stroke::new(joint);
                    let changed = stroke.dab(weights, &surface, centre, radius, &brush, &Locks::none());
                    // As the editor packs them for upload (app/paint_tool.rs, app/viewport).
                    let packed = pack_runs(&changed, |v| pack_pairs(stroke.row_iter(weights, v)));
                    black_box((changed.len(), packed.len()))
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
