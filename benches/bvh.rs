//! Speed of [`TriangleBvh`]: build time, and 100k `segment_hits` queries of the binding use case (segments from
//! surface vertices, nudged inward, to points on the axis "bone"), on a closed tube-like mesh of about 20k, 200k and
//! 2M triangles; for both builders, [`TriangleBvh::new`] (binned SAH: `bvh_build`, `bvh_segment_hits_100k`) and
//! [`TriangleBvh::new_linear`] (LBVH: `bvh_build_linear`, `bvh_segment_hits_linear_100k`), on the same meshes and
//! queries. `bvh_segments_hit3_linear_100k`: the same queries three at a time from one origin (each vertex to
//! three points on the axis), in one traversal ([`TriangleBvh::segments_hit`], as binding asks for a vertex's near
//! bones), against `bvh_segment_hits3_linear_100k`, the same segments one query each.
//!
//! Run: `cargo bench --bench bvh` (about a minute). Target: 2M triangles built in well under 1 s on the 2-core
//! machine.
#![allow(clippy::unwrap_used)]

use std::f32::consts::TAU;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use glam::Vec3;
use skinbind::spatial::TriangleBvh;

/// The binaries' allocator (src/main.rs).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const QUERIES: usize = 100_000;

/// A closed, wavy tube along z (length 10, radius about 1, bulging and narrowing like a limb), with `sides` vertices
/// per ring, `rings` rings and a fan cap at each end: `2 * sides * rings` triangles.
fn tube(sides: u32, rings: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let radius = |z: f32| 1.0 + 0.25 * (z * 1.7).sin() + 0.1 * (z * 5.3).cos();
    let mut positions = Vec::with_capacity((sides * rings + 2) as usize);
    for r in 0..rings {
        let z = 10.0 * r as f32 / (rings - 1) as f32;
        for s in 0..sides {
            let a = TAU * (s as f32 + 0.5 * (r % 2) as f32) / sides as f32;
            positions.push(Vec3::new(radius(z) * a.cos(), radius(z) * a.sin(), z));
        }
    }
    positions.push(Vec3::ZERO);
    positions.push(Vec3::new(0.0, 0.0, 10.0));
    let (bottom, top) = (sides * rings, sides * rings + 1);
    let mut triangles = Vec::with_capacity((2 * sides * rings) as usize);
    for r in 0..rings - 1 {
        for s in 0..sides {
            let (i, j) = (r * sides + s, r * sides + (s + 1) % sides);
            triangles.push([i, j, j + sides]);
            triangles.push([i, j + sides, i + sides]);
        }
    }
    for s in 0..sides {
        let last = (rings - 1) * sides;
        triangles.push([bottom, (s + 1) % sides, s]);
        triangles.push([top, last + s, last + (s + 1) % sides]);
    }
    (positions, triangles)
}

/// `QUERIES` binding segments, from vertices spread evenly over the mesh in index order (as binding visits them):
/// from the vertex nudged 0.1% towards the axis, to a random point on the axis (the bone) within 1.5 of the
/// vertex's height, so that some cross the narrowings of the tube.
fn segments(positions: &[Vec3]) -> Vec<(Vec3, Vec3)> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let ring = positions.len() - 2;
    (0..QUERIES)
        .map(|q| {
            let v = positions[q * ring / QUERIES];
            let axis = Vec3::new(0.0, 0.0, v.z);
            let dz = ((next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 3.0;
            let bone = Vec3::new(0.0, 0.0, (v.z + dz).clamp(0.5, 9.5));
            (v + 0.001 * (axis - v), bone)
        })
        .collect()
}

/// Flat sampling (the same iteration count in every sample) for the largest mesh, whose iterations are long.
fn sampling(triangles: usize) -> SamplingMode {
    if triangles > 1_000_000 {
        SamplingMode::Flat
    } else {
        SamplingMode::Auto
    }
}

/// A BVH builder: [`TriangleBvh::new`] or [`TriangleBvh::new_linear`].
type Build = fn(&[Vec3], &[[u32; 3]]) -> TriangleBvh;

fn bvh(c: &mut Criterion) {
    let sizes = [(100u32, 100u32), (200, 500), (500, 2000)];
    let meshes: Vec<_> = sizes.iter().map(|&(s, r)| tube(s, r)).collect();
    builder(c, &meshes, "", TriangleBvh::new);
    builder(c, &meshes, "_linear", TriangleBvh::new_linear);
    grouped(c, &meshes);
}

/// Three segments from each query's origin: to its own axis point and to the axis 0.5 above and below it.
fn grouped(c: &mut Criterion, meshes: &[(Vec<Vec3>, Vec<[u32; 3]>)]) {
    for (name, together) in [
        ("bvh_segment_hits3_linear_100k", false),
        ("bvh_segments_hit3_linear_100k", true),
    ] {
        let mut group = c.benchmark_group(name);
        group
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
        for (positions, triangles) in meshes {
            let n = triangles.len();
            let bvh = TriangleBvh::new_linear(positions, triangles);
            let queries: Vec<(Vec3, [Vec3; 3])> = segments(positions)
                .into_iter()
                .map(|(a, b)| (a, [b, b + Vec3::new(0.0, 0.0, 0.5), b - Vec3::new(0.0, 0.0, 0.5)]))
                .collect();
            group.throughput(Throughput::Elements(3 * QUERIES as u64));
            group.sample_size(10);
            group.sampling_mode(sampling(n));
            group.bench_with_input(BenchmarkId::from_parameter(n), &queries, |b, q| {
                let mut hits = Vec::new();
                b.iter(|| {
                    let mut count = 0;
                    for (a, ends) in q {
                        if together {
                            bvh.segments_hit(black_box(*a), black_box(ends), 1e-4, &mut hits);
                            count += hits.iter().filter(|h| **h).count();
                        } else {
                            count += ends
                                .iter()
                                .filter(|e| bvh.segment_hits(black_box(*a), **e, 1e-4))
                                .count();
                        }
                    }
                    count
                })
            });
        }
        group.finish();
    }
}

/// Build and query benchmarks of one builder, groups named with `suffix`.
fn builder(c: &mut Criterion, meshes: &[(Vec<Vec3>, Vec<[u32; 3]>)], suffix: &str, build: Build) {
    let mut group = c.benchmark_group(format!("bvh_build{suffix}"));
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for (positions, triangles) in meshes {
        let n = triangles.len();
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(if n > 100_000 { 10 } else { 20 });
        group.sampling_mode(sampling(n));
        group.bench_with_input(BenchmarkId::from_parameter(n), &(positions, triangles), |b, (p, t)| {
            b.iter(|| black_box(build(black_box(p), black_box(t))))
        });
    }
    group.finish();

    let mut group = c.benchmark_group(format!("bvh_segment_hits{suffix}_100k"));
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (positions, triangles) in meshes {
        let n = triangles.len();
        let bvh = build(positions, triangles);
        let queries = segments(positions);
        let hits = queries.iter().filter(|(a, b)| bvh.segment_hits(*a, *b, 1e-4)).count();
        println!(
            "bvh{suffix}/{n}: {} triangles hittable, {:.1} MB, {:.1}% of segments blocked",
            bvh.triangle_count(),
            bvh.heap_bytes() as f64 / 1e6,
            100.0 * hits as f64 / QUERIES as f64
        );
        group.throughput(Throughput::Elements(QUERIES as u64));
        group.sample_size(10);
        group.sampling_mode(sampling(n));
        group.bench_with_input(BenchmarkId::from_parameter(n), &queries, |b, q| {
            b.iter(|| {
                q.iter()
                    .filter(|(a, b)| bvh.segment_hits(black_box(*a), black_box(*b), 1e-4))
                    .count()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bvh);
criterion_main!(benches);
