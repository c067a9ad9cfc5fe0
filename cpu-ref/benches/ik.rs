//! Criterion benches of the IK solvers on the generated character (50 joints), per solve, and of
//! one hero's full CPU frame: program (two samples and a blend), FK, two two-bone leg solves, a
//! three-joint aim chain and the skin palette.
//!
//! `cargo bench -p throng-cpu-ref --bench ik`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use glam::{Affine3A, Vec3};
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::ik::{
    place_feet, solve_aim, solve_fabrik, solve_two_bone, Aim, Fabrik, FootPlacement, FootState,
    Ground, IkResult, IkStatus, Leg, TwoBone,
};
use throng_cpu_ref::palette::build_palette;
use throng_cpu_ref::{Assets, Evaluator, Package, PoseOp, Program, ProgramLimits, Skeleton, Trs};

struct Hero {
    package: Package,
    local: Vec<Trs>,
    component: Vec<Affine3A>,
}

fn hero() -> Hero {
    let imported = throng_cook::import_slice(&throng_fixtures::character_glb(), "character")
        .expect("the character imports");
    let (package, _) =
        throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT).expect("the character cooks");
    let skeleton = &package.skeletons[0];
    let mut local = vec![Trs::IDENTITY; skeleton.joint_count()];
    let walk = package.find_clip("walk").expect("a walk clip");
    throng_cpu_ref::clip::sample_clip(&package.clips[walk], skeleton, 0.3, &mut local);
    let mut component = vec![Affine3A::IDENTITY; local.len()];
    local_to_component(skeleton, &local, &mut component);
    Hero {
        package,
        local,
        component,
    }
}

fn j(skeleton: &Skeleton, name: &str) -> usize {
    skeleton
        .find(name)
        .unwrap_or_else(|| panic!("the character has '{name}'"))
}

fn at(component: &[Affine3A], joint: usize) -> Vec3 {
    component[joint].translation.into()
}

/// Per-solve cost, the pose restored (untimed) before each solve.
fn solvers(c: &mut Criterion) {
    let h = hero();
    let sk = &h.package.skeletons[0];
    let (thigh, calf, foot) = (j(sk, "thigh_l"), j(sk, "calf_l"), j(sk, "foot_l"));
    let arm = [
        j(sk, "clavicle_r"),
        j(sk, "upperarm_r"),
        j(sk, "lowerarm_r"),
        j(sk, "hand_r"),
    ];
    let spine = [
        j(sk, "pelvis"),
        j(sk, "spine_01"),
        j(sk, "spine_02"),
        j(sk, "spine_03"),
        j(sk, "neck"),
        j(sk, "head"),
    ];
    let head = [j(sk, "spine_03"), j(sk, "neck"), j(sk, "head")];
    let fresh = || (h.local.clone(), h.component.clone());

    let mut g = c.benchmark_group("ik");
    let leg = TwoBone {
        pole: Some(at(&h.component, calf) + Vec3::Z),
        ..TwoBone::new(
            thigh,
            calf,
            foot,
            at(&h.component, foot) + Vec3::new(0.05, 0.15, 0.1),
        )
    };
    g.bench_function("two_bone", |b| {
        b.iter_batched_ref(
            fresh,
            |(l, cm)| black_box(solve_two_bone(sk, l, cm, black_box(&leg))),
            BatchSize::SmallInput,
        )
    });
    let hand = Fabrik {
        tolerance: 1e-4,
        max_iterations: 32,
        ..Fabrik::new(at(&h.component, arm[3]) + Vec3::new(-0.1, 0.3, 0.3))
    };
    g.bench_function("fabrik_arm_4", |b| {
        b.iter_batched_ref(
            fresh,
            |(l, cm)| black_box(solve_fabrik(sk, l, cm, &arm, black_box(&hand))),
            BatchSize::SmallInput,
        )
    });
    let lean = Fabrik {
        tolerance: 1e-4,
        max_iterations: 32,
        ..Fabrik::new(at(&h.component, spine[5]) + Vec3::new(0.0, -0.1, 0.25))
    };
    g.bench_function("fabrik_spine_6", |b| {
        b.iter_batched_ref(
            fresh,
            |(l, cm)| black_box(solve_fabrik(sk, l, cm, &spine, black_box(&lean))),
            BatchSize::SmallInput,
        )
    });
    let look = Aim::new(
        at(&h.component, head[2]) + Vec3::new(0.6, 0.2, 1.0),
        Vec3::Z,
        Vec3::Y,
    );
    g.bench_function("aim_1", |b| {
        b.iter_batched_ref(
            fresh,
            |(l, cm)| black_box(solve_aim(sk, l, cm, black_box(&look), &head[2..], &[1.0])),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("aim_chain_3", |b| {
        b.iter_batched_ref(
            fresh,
            |(l, cm)| {
                black_box(solve_aim(
                    sk,
                    l,
                    cm,
                    black_box(&look),
                    &head,
                    &[0.3, 0.5, 1.0],
                ))
            },
            BatchSize::SmallInput,
        )
    });
    let legs = [
        Leg { thigh, calf, foot },
        Leg {
            thigh: j(sk, "thigh_r"),
            calf: j(sk, "calf_r"),
            foot: j(sk, "foot_r"),
        },
    ];
    let feet = FootPlacement {
        pelvis: j(sk, "pelvis"),
        legs: &legs,
        max_tilt: 0.3,
        smooth_time: 0.1,
        weight: 1.0,
    };
    let ground = [
        Ground {
            height: -0.04,
            normal: Vec3::new(0.1, 1.0, 0.05),
        },
        Ground {
            height: 0.02,
            normal: Vec3::Y,
        },
    ];
    g.bench_function("foot_placement_2", |b| {
        let mut state = FootState::default();
        let mut results = [IkResult {
            status: IkStatus::Reached,
            position_error: 0.0,
            angle_error: 0.0,
            iterations: 0,
        }; 2];
        b.iter_batched_ref(
            fresh,
            |(l, cm)| {
                black_box(place_feet(
                    sk,
                    l,
                    cm,
                    &feet,
                    black_box(&ground),
                    0.016,
                    &mut state,
                    &mut results,
                ))
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// One hero frame, everything the CPU does for it after control.
fn hero_frame(c: &mut Criterion) {
    let h = hero();
    let p = &h.package;
    let sk = &p.skeletons[0];
    let skin = &p.skins[0];
    let (walk, run) = (
        p.find_clip("walk").expect("walk") as u32,
        p.find_clip("run").expect("run") as u32,
    );
    let assets = Assets {
        skeleton: sk,
        skeleton_index: 0,
        clips: &p.clips,
        skins: &p.skins,
        masks: &[],
        curves: &throng_cpu_ref::scalar::NO_CURVES,
    };
    let mut ev = Evaluator::new(
        ProgramLimits::default(),
        sk.joint_count(),
        skin.joints.len(),
    );
    let mut local = h.local.clone();
    let mut component = h.component.clone();
    let mut palette = vec![Affine3A::IDENTITY; skin.joints.len()];
    let legs = [
        ("thigh_l", "calf_l", "foot_l"),
        ("thigh_r", "calf_r", "foot_r"),
    ]
    .map(|(a, b, c)| (j(sk, a), j(sk, b), j(sk, c)));
    let head = [j(sk, "spine_03"), j(sk, "neck"), j(sk, "head")];
    let mut program = Program {
        ops: vec![
            PoseOp::sample(0, walk, 0.0),
            PoseOp::sample(1, run, 0.0),
            PoseOp::blend(2, 0, 2, 0),
        ],
        weights: vec![0.7, 0.3],
    };
    let mut t = 0.0f32;

    c.bench_function("hero_frame", |b| {
        b.iter(|| {
            t = (t + 1.0 / 60.0) % 0.9;
            program.ops[0] = PoseOp::sample(0, walk, t);
            program.ops[1] = PoseOp::sample(1, run, t);
            ev.run(&program, &assets).expect("valid program");
            local.copy_from_slice(ev.local(2).expect("register 2"));
            local_to_component(sk, &local, &mut component);
            for &(thigh, calf, foot) in &legs {
                let target = at(&component, foot) + Vec3::new(0.0, 0.05, 0.0);
                black_box(
                    solve_two_bone(
                        sk,
                        &mut local,
                        &mut component,
                        &TwoBone::new(thigh, calf, foot, target),
                    )
                    .expect("valid leg"),
                );
            }
            let look = Aim {
                yaw_limit: 1.2,
                pitch_limit: 0.8,
                ..Aim::new(Vec3::new(t.sin(), 1.6, 2.0), Vec3::Z, Vec3::Y)
            };
            black_box(
                solve_aim(
                    sk,
                    &mut local,
                    &mut component,
                    &look,
                    &head,
                    &[0.25, 0.4, 1.0],
                )
                .expect("valid aim"),
            );
            build_palette(skin, &component, &mut palette);
            black_box(&palette);
        })
    });
}

criterion_group!(benches, solvers, hero_frame);
criterion_main!(benches);
