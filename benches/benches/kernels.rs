//! Criterion benches of the CPU reference's kernels on the generated character (50 joints,
//! 7 672 vertices), each reported per element: per joint for sampling, blending, FK and whole
//! programs, per palette entry for palettes, per vertex for skinning.
//!
//! `cargo bench -p throng-bench` runs them; `cargo bench -p throng-bench -- program` one group.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glam::{Affine3A, Vec3};
use throng_bench::Subject;
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::interpreter::blend_joint;
use throng_cpu_ref::palette::build_palette;
use throng_cpu_ref::skinning::skin_mesh;
use throng_cpu_ref::{Evaluator, ProgramLimits, Trs};
use throng_fixtures::BenchShape as Shape;

/// Subject, its skeleton's rest pose and two sampled poses.
struct Setup {
    subject: Subject,
    a: Vec<Trs>,
    b: Vec<Trs>,
    component: Vec<Affine3A>,
}

fn setup() -> Setup {
    let subject = Subject::character().expect("the generated character cooks");
    let skeleton = &subject.package.skeletons[subject.skeleton as usize];
    let n = skeleton.joint_count();
    let (mut a, mut b) = (vec![Trs::IDENTITY; n], vec![Trs::IDENTITY; n]);
    let clips = &subject.package.clips;
    sample_clip(&clips[subject.clips[0] as usize], skeleton, 0.3, &mut a);
    sample_clip(&clips[subject.clips[1] as usize], skeleton, 0.7, &mut b);
    let mut component = vec![Affine3A::IDENTITY; n];
    local_to_component(skeleton, &a, &mut component);
    Setup {
        subject,
        a,
        b,
        component,
    }
}

fn kernels(c: &mut Criterion) {
    let s = setup();
    let skeleton = &s.subject.package.skeletons[s.subject.skeleton as usize];
    let joints = skeleton.joint_count() as u64;

    let mut g = c.benchmark_group("joint");
    g.throughput(Throughput::Elements(joints));
    for &clip in &s.subject.clips {
        let clip = &s.subject.package.clips[clip as usize];
        let mut out = vec![Trs::IDENTITY; skeleton.joint_count()];
        let mut t = 0.0f32;
        g.bench_function(BenchmarkId::new("sample", &clip.name), |bench| {
            bench.iter(|| {
                t = (t + 1.0 / 60.0) % clip.duration as f32;
                sample_clip(clip, skeleton, black_box(t), &mut out);
                black_box(&out);
            })
        });
    }
    let mut out = vec![Trs::IDENTITY; skeleton.joint_count()];
    g.bench_function("blend 2-way", |bench| {
        bench.iter(|| {
            let rest = skeleton.rest.iter();
            for (((o, a), b), r) in out.iter_mut().zip(&s.a).zip(&s.b).zip(rest) {
                *o = blend_joint([(a, black_box(0.3)), (b, 0.7)], r);
            }
            black_box(&out);
        })
    });
    let mut component = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    g.bench_function("fk", |bench| {
        bench.iter(|| {
            local_to_component(skeleton, black_box(&s.a), &mut component);
            black_box(&component);
        })
    });
    let assets = s
        .subject
        .package
        .assets(s.subject.skeleton)
        .expect("the skeleton exists");
    let mut evaluator = Evaluator::new(ProgramLimits::default(), skeleton.joint_count(), 0);
    for shape in Shape::ALL {
        let program = shape.program(&s.subject.package, &s.subject.clips, s.subject.mask, 1);
        g.bench_function(BenchmarkId::new("program", shape.label()), |bench| {
            bench.iter(|| {
                evaluator
                    .run(black_box(&program), &assets)
                    .expect("valid program");
                black_box(evaluator.component());
            })
        });
    }
    g.finish();

    let skin = &s.subject.package.skins[s.subject.skin.expect("the character is skinned") as usize];
    let mut palette = vec![Affine3A::IDENTITY; skin.joints.len()];
    let mut g = c.benchmark_group("palette entry");
    g.throughput(Throughput::Elements(skin.joints.len() as u64));
    g.bench_function("palette", |bench| {
        bench.iter(|| {
            build_palette(skin, black_box(&s.component), &mut palette);
            black_box(&palette);
        })
    });
    g.finish();

    let mut g = c.benchmark_group("vertex");
    for mesh in s.subject.meshes() {
        let n = mesh.positions.len();
        let (mut positions, mut normals) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(BenchmarkId::new("skin", &mesh.name), |bench| {
            bench.iter(|| {
                skin_mesh(mesh, black_box(&palette), &mut positions, &mut normals);
                black_box((&positions, &normals));
            })
        });
    }
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
