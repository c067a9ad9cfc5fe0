//! CPU decode cost of the compressed encoding against the reference encoding (issue 5):
//! whole-pose sampling (`sample_clip`, every joint) and single-joint sampling (`sample_joint`,
//! one joint's t, q and s: random access), at sequential times (a player advancing at 60 Hz) and
//! at random times. Throughput is in joint-samples, so criterion's time per element is the
//! nanoseconds per joint-sample. Subject: the CMU punch clip (31 joints, 928 samples at 60 Hz)
//! when ../shared/assets is present, else the generated character's walk.
//!
//! `cargo bench -p throng-cpu-ref --bench codec`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use throng_cook::{compress, cook, import_file, import_slice, CookReport, Profile};
use throng_cpu_ref::clip::{sample_clip, sample_joint};
use throng_cpu_ref::{Clip, Package, Skeleton, Trs};

/// Times per iteration.
const TIMES: usize = 64;

/// (reference, compressed) packages of the subject, and the clip to sample.
fn subject() -> (Package, Package, usize) {
    let mocap = throng_fixtures::shared_assets_path().join("mocap/cmu_02_05_punch_strike.glb");
    let imported = if mocap.exists() {
        import_file(&mocap).expect("mocap imports")
    } else {
        import_slice(&throng_fixtures::character_glb(), "character").expect("character imports")
    };
    let (reference, _) = cook(&imported, &Profile::STANDARD).expect("subject cooks");
    let mut compressed = reference.clone();
    compress(
        &mut compressed,
        &mut CookReport::default(),
        &Profile::STANDARD,
    );
    let clip = reference.find_clip("walk").unwrap_or(0);
    (reference, compressed, clip)
}

/// Sequential times (60 Hz from the start, wrapping) and random ones (xorshift), in [0, duration].
fn times(clip: &Clip) -> [Vec<f32>; 2] {
    let d = clip.duration as f32;
    let sequential = (0..TIMES)
        .map(|i| (i as f32 / 60.0) % d.max(1e-6))
        .collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let random = (0..TIMES)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 * d
        })
        .collect();
    [sequential, random]
}

fn whole_pose(c: &mut Criterion) {
    let (reference, compressed, index) = subject();
    let skeleton: &Skeleton = &reference.skeletons[reference.clips[index].skeleton as usize];
    let n = skeleton.joint_count();
    let mut group = c.benchmark_group("codec/whole_pose");
    group.throughput(Throughput::Elements((TIMES * n) as u64));
    let mut pose = vec![Trs::IDENTITY; n];
    for (encoding, package) in [("reference", &reference), ("compressed", &compressed)] {
        let clip = &package.clips[index];
        for (order, ts) in ["sequential", "random"].iter().zip(times(clip)) {
            group.bench_with_input(BenchmarkId::new(encoding, order), &ts, |b, ts| {
                b.iter(|| {
                    for &t in ts {
                        sample_clip(clip, skeleton, black_box(t), &mut pose);
                    }
                    black_box(&pose);
                })
            });
        }
    }
    group.finish();
}

fn single_track(c: &mut Criterion) {
    let (reference, compressed, index) = subject();
    let skeleton: &Skeleton = &reference.skeletons[reference.clips[index].skeleton as usize];
    // A joint halfway down the skeleton (an arm or a leg, animated).
    let joint = skeleton.joint_count() / 2;
    let mut group = c.benchmark_group("codec/single_joint");
    group.throughput(Throughput::Elements(TIMES as u64));
    for (encoding, package) in [("reference", &reference), ("compressed", &compressed)] {
        let clip = &package.clips[index];
        for (order, ts) in ["sequential", "random"].iter().zip(times(clip)) {
            group.bench_with_input(BenchmarkId::new(encoding, order), &ts, |b, ts| {
                b.iter(|| {
                    for &t in ts {
                        black_box(sample_joint(clip, skeleton, joint, black_box(t)));
                    }
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, whole_pose, single_track);
criterion_main!(benches);
