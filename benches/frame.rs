//! The editor's CPU time per frame, excluding the GPU (issue 5 target: at most 2 ms for a 1M-vertex skin).
//!
//! Per frame the CPU evaluates the animation clip, runs forward kinematics, makes the skinning matrices and the
//! bone texture's texels and the skeleton overlay (`render::prepare_frame`); the vertices stay on the GPU,
//! uploaded once. `frame/N` does all of that for a 100-joint chain whose skin has N vertices (1k, 100k, 1M): the
//! skin is built (and would be uploaded) beforehand, so the figures show that the cost does not grow with N.
//! Run: `cargo bench --bench frame`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use skinbind::deform::bind_world_from_joint;
use skinbind::model::{Channel, Clip, Extrapolation, Key, Pose, Tangent, pose_at, world_from_joint};
use skinbind::render::{Frame, OrbitCamera, ViewSettings, prepare_frame};
use skinbind::sample::chain_tube;

/// The binaries' allocator (src/main.rs).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A clip that swings every joint of a `joints`-joint skeleton about z.
fn swing(joints: usize) -> Clip {
    let key = |time: f32, value: f32| Key {
        time,
        value,
        tangent_in: Tangent::Smooth,
        tangent_out: Tangent::Smooth,
    };
    let channels = (0..Clip::channels_for(joints))
        .map(|c| {
            let keys = if c >= 3 && c % 3 == 2 {
                vec![key(0.0, -0.2), key(1.0, 0.2), key(2.0, -0.2)]
            } else {
                vec![key(0.0, 0.0)]
            };
            Channel::new(Extrapolation::Cycle, Extrapolation::Cycle, keys).unwrap()
        })
        .collect();
    Clip::new((0.0, 2.0), channels)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame");
    for n in [1_000usize, 100_000, 1_000_000] {
        let sample = chain_tube(100, n).unwrap();
        let skel = &sample.skeleton;
        let clip = swing(skel.len());
        let bind = bind_world_from_joint(skel, &sample.skin, &Pose::from_file(skel));
        let camera = OrbitCamera::default();
        let settings = ViewSettings::default();
        let mut t = 0.0f32;
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                t = (t + 1.0 / 60.0) % 2.0;
                let pose = pose_at(skel, &clip, t);
                let world = world_from_joint(skel, &pose);
                let frame = Frame {
                    camera: &camera,
                    skeleton: skel,
                    world_from_joint: &world,
                    bind_world_from_joint: &bind,
                    selected: Some(3),
                    deform: &[],
                    ground: 0.0,
                    size: 1.0,
                };
                black_box(prepare_frame(&frame, &settings))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
