//! Speed of [`TriangleBvh`]: build time (`bvh_build_linear`) and 100k queries of the binding use case (segments
//! from surface vertices, nudged inward, to points on the axis "bone"), on a closed tube-like mesh of about 20k,
//! 200k and 2M triangles: one [`TriangleBvh::segment_hits_from_vertex`] query each
//! (`bvh_segment_hits_from_vertex_linear_100k`), and three segments from each vertex (to three points on the axis)
//! in one [`TriangleBvh::packet_hit_from_vertices_within`] traversal from the root
//! (`bvh_packet_hit3_linear_100k`), as binding asks for a vertex's near bones.
//!
//! Run: `cargo bench --bench bvh` (under a minute). `SKINBIND_SIMD=portable` runs the baseline copies instead of
//! the x86-64-v3 ones (`src/simd.rs`). Target: 2M triangles built in well under 1 s on the 2-core machine.
#![allow(clippy::unwrap_used)]

use std::f32::consts::TAU;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use glam::Vec3;
use skinbind::spatial::{SegmentEntry, TriangleBvh};

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
/// the vertex's index, and the segment from the vertex nudged 0.1% towards the axis to a random point on the axis
/// (the bone) within 1.5 of the vertex's height, so that some cross the narrowings of the tube.
fn segments(positions: &[Vec3]) -> Vec<(u32, Vec3, Vec3)> {
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
            let i = q * ring / QUERIES;
            let v = positions[i];
            let axis = Vec3::new(0.0, 0.0, v.z);
            let dz = ((next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 3.0;
            let bone = Vec3::new(0.0, 0.0, (v.z + dz).clamp(0.5, 9.5));
            (i as u32, v + 0.001 * (axis - v), bone)
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

fn bvh(c: &mut Criterion) {
    let sizes = [(100u32, 100u32), (200, 500), (500, 2000)];
    let meshes: Vec<_> = sizes.iter().map(|&(s, r)| tube(s, r)).collect();
    build(c, &meshes);
    single(c, &meshes);
    packets(c, &meshes);
}

/// `bvh_build_linear`: [`TriangleBvh::new_linear`].
fn build(c: &mut Criterion, meshes: &[(Vec<Vec3>, Vec<[u32; 3]>)]) {
    let mut group = c.benchmark_group("bvh_build_linear");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for (positions, triangles) in meshes {
        let n = triangles.len();
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(if n > 100_000 { 10 } else { 20 });
        group.sampling_mode(sampling(n));
        group.bench_with_input(BenchmarkId::from_parameter(n), &(positions, triangles), |b, (p, t)| {
            b.iter(|| black_box(TriangleBvh::new_linear(black_box(p), black_box(t))))
        });
    }
    group.finish();
}

/// `bvh_segment_hits_from_vertex_linear_100k`: one query a segment.
fn single(c: &mut Criterion, meshes: &[(Vec<Vec3>, Vec<[u32; 3]>)]) {
    let mut group = c.benchmark_group("bvh_segment_hits_from_vertex_linear_100k");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (positions, triangles) in meshes {
        let n = triangles.len();
        let bvh = TriangleBvh::new_linear(positions, triangles);
        let queries = segments(positions);
        let hits = queries
            .iter()
            .filter(|&&(v, a, b)| bvh.segment_hits_from_vertex(v, a, b, 1e-4))
            .count();
        println!(
            "bvh_linear/{n}: {:.1}% of segments blocked",
            100.0 * hits as f64 / QUERIES as f64
        );
        group.throughput(Throughput::Elements(QUERIES as u64));
        group.sample_size(10);
        group.sampling_mode(sampling(n));
        group.bench_with_input(BenchmarkId::from_parameter(n), &queries, |b, q| {
            b.iter(|| {
                q.iter()
                    .filter(|&&(v, a, b)| bvh.segment_hits_from_vertex(v, black_box(a), black_box(b), 1e-4))
                    .count()
            })
        });
    }
    group.finish();
}

/// `bvh_packet_hit3_linear_100k`: three segments from each query's vertex, to its own axis point and to the axis
/// 0.5 above and below it, in one traversal.
fn packets(c: &mut Criterion, meshes: &[(Vec<Vec3>, Vec<[u32; 3]>)]) {
    let mut group = c.benchmark_group("bvh_packet_hit3_linear_100k");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    // Made for no tree: the traversals begin at the root.
    let entry = SegmentEntry::default();
    for (positions, triangles) in meshes {
        let n = triangles.len();
        let bvh = TriangleBvh::new_linear(positions, triangles);
        let queries: Vec<(u32, Vec3, [Vec3; 3])> = segments(positions)
            .into_iter()
            .map(|(v, a, b)| (v, a, [b, b + Vec3::new(0.0, 0.0, 0.5), b - Vec3::new(0.0, 0.0, 0.5)]))
            .collect();
        group.throughput(Throughput::Elements(3 * QUERIES as u64));
        group.sample_size(10);
        group.sampling_mode(sampling(n));
        group.bench_with_input(BenchmarkId::from_parameter(n), &queries, |b, q| {
            let mut hits = [false; 3];
            b.iter(|| {
                let mut count = 0;
                for &(v, a, ends) in q {
                    bvh.packet_hit_from_vertices_within(&entry, &[v; 3], &[black_box(a); 3], &ends, 1e-4, &mut hits);
                    count += hits.iter().filter(|h| **h).count();
                }
                count
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bvh);
criterion_main!(benches);
