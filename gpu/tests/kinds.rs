//! One dispatch per pass whatever the kinds (DESIGN.md §6): instances of many skeletons and
//! skins of one package take the same dispatches as instances of one, for frames of batches and
//! for retained instances, at any instance count; and they pose and skin as the CPU does.

mod common;

use glam::{Affine3A, Vec3};
use throng_cpu_ref::frame::batch_assets;
use throng_cpu_ref::retained::{Instances, Kind};
use throng_cpu_ref::{Batch, Instance, Pose, PoseOp, Program};
use throng_gpu::parity::{self, PackageUnderTest, Path};
use throng_gpu::{Capacities, GpuContext, Runtime};

/// A one-clip program at `t` of skeleton `k`'s clip (clip `k`).
fn sample(k: u32, t: f32) -> Program {
    Program {
        ops: vec![PoseOp::sample(0, k, t), PoseOp::to_component(0)],
        weights: Vec::new(),
    }
}

fn placement(i: usize) -> Affine3A {
    Affine3A::from_translation(Vec3::new((i % 300) as f32, 0.0, (i / 300) as f32))
}

/// Dispatches of one frame of `n` instances spread over the `skins` character types of a
/// package, as batches and as retained instances (second frame after a tick: no patch).
fn dispatches(ctx: &GpuContext, skins: usize, n: usize) -> (usize, usize) {
    let package = common::many_skins_package(skins);
    let mut capacities = Capacities::for_packages(&[&package], n as u32);
    capacities.history_slots = 0;
    let mut runtime = Runtime::new(ctx, capacities).unwrap();
    let id = runtime.add_package(&package).unwrap();
    let programs: Vec<Program> = (0..n)
        .map(|i| sample((i % skins) as u32, 0.01 * (i % 30) as f32))
        .collect();
    let lists: Vec<Vec<Instance>> = (0..skins)
        .map(|k| {
            (k..n)
                .step_by(skins)
                .map(|i| Instance {
                    pose: Pose::Program(&programs[i]),
                    placement: placement(i),
                })
                .collect()
        })
        .collect();
    let batches: Vec<Batch> = (lists.iter().enumerate())
        .map(|(k, list)| Batch {
            package: id,
            skeleton: k as u32,
            skin: Some(k as u32),
            instances: list,
        })
        .collect();
    let report = runtime.frame(&batches).unwrap();
    runtime.finish().unwrap();
    assert_eq!(
        runtime.visibility().skinned,
        n as u64,
        "every instance skinned"
    );
    let batch_dispatches = report.dispatches;
    let mut store = Instances::new(capacities.program_limits(), n as u32);
    for (i, program) in programs.iter().enumerate() {
        let k = (i % skins) as u32;
        let kind = Kind {
            package: id,
            skeleton: k,
            skin: Some(k),
        };
        let instance = store.add(kind, &placement(i)).unwrap();
        let b = Batch {
            package: id,
            skeleton: k,
            skin: Some(k),
            instances: &[],
        };
        let assets = batch_assets(0, &b, |p| runtime.package(p).map(|r| &r.package)).unwrap();
        store.set_program(instance, program, &assets).unwrap();
    }
    store.commit();
    runtime.present(&store, 0.5).unwrap();
    store.commit();
    let report = runtime.present(&store, 0.5).unwrap();
    runtime.finish().unwrap();
    assert_eq!(runtime.visibility().skinned, n as u64);
    (batch_dispatches, report.dispatches)
}

#[test]
fn one_or_sixty_four_skins_and_a_thousand_or_a_hundred_thousand_instances_take_the_same_dispatches()
{
    let Some(ctx) = common::gpu() else { return };
    let mut seen = Vec::new();
    for (skins, n) in [(1, 1000), (64, 1000), (1, 100_000), (64, 100_000)] {
        let d = dispatches(&ctx, skins, n);
        println!("{skins} skins, {n} instances: {d:?} dispatches (batches, retained)");
        seen.push(d);
    }
    // One pose dispatch (one shape), bounds, four for the budget, cards and order, one skinning;
    // retained frames add the present pass.
    assert!(seen.iter().all(|&d| d == (7, 8)), "{seen:?}");
}

#[test]
fn sixty_four_character_types_in_one_frame_match_the_cpu_on_every_path() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::many_skins_package(64);
    let under_test = [PackageUnderTest {
        name: "64 skins",
        package: &package,
    }];
    for path in [
        Path::Interpreter,
        Path::Specialised(throng_gpu::Mapping::Thread),
        Path::Specialised(throng_gpu::Mapping::Workgroup),
    ] {
        let report = parity::run(&ctx, &under_test, 5, 3, path).unwrap();
        println!("{report}");
        assert!(report.pass, "{report}");
        // Random programs differ from skeleton to skeleton (their shapes too), but a shape
        // takes one pose dispatch whatever skeletons share it, and the rest are fixed.
        let f = &report.frame;
        assert_eq!(f.pose_dispatches, f.shapes, "one pose dispatch per shape");
        assert_eq!(f.dispatches, f.pose_dispatches + 6, "{f:?}");
        assert_eq!(f.skinning_dispatches, 1);
    }
}
