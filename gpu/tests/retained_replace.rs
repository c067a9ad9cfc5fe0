//! Retained instances across a live package replacement: a re-cook in another clip encoding
//! changes no program, yet each instance's shape (its program over its package's clip
//! encodings) must follow the new package, or the pose pass decodes one encoding's data as the
//! other. `throng soak` found this (reference encoding replaced by a compressed one).

mod common;

use glam::{Affine3A, Vec3};
use throng_cpu_ref::frame::batch_assets;
use throng_cpu_ref::retained::{Instances, Kind};
use throng_cpu_ref::{Batch, Evaluator, PoseOp, Program};
use throng_gpu::parity::{component_extent, POSITION_TOLERANCE};
use throng_gpu::{Capacities, Runtime, RuntimeOptions, Specialise};

/// Clip `clip` at `t`, to component space and a palette.
fn sample(clip: u32, t: f32) -> Program {
    Program {
        ops: vec![
            PoseOp::sample(0, clip, t),
            PoseOp::to_component(0),
            PoseOp::palette(0),
        ],
        weights: Vec::new(),
    }
}

#[test]
fn instances_pose_from_the_new_encoding_after_a_replacement_that_changes_no_program() {
    let Some(ctx) = common::gpu() else { return };
    let imported =
        throng_cook::import_slice(&throng_fixtures::character_glb(), "character").unwrap();
    let profile = throng_cook::Profile::DEFAULT;
    let (reference, _) = throng_cook::cook(&imported, &profile).unwrap();
    let (mut compressed, mut report) = throng_cook::cook(&imported, &profile).unwrap();
    throng_cook::compress(&mut compressed, &mut report, &profile);
    assert!(
        (compressed.clips.iter()).any(|c| c.encoding() != reference.clips[0].encoding()),
        "the variants differ in encoding"
    );
    let n = 6u32;
    let mut capacities = Capacities::for_packages(&[&reference, &compressed], n);
    capacities.history_slots = 0;
    // Specialised pipelines from the first frame: theirs bake a shape's encodings in.
    let options = RuntimeOptions {
        specialise: Specialise::Blocking,
        ..RuntimeOptions::default()
    };
    let mut runtime = Runtime::with_options(&ctx, capacities, options).unwrap();
    let id = runtime.add_package(&reference).unwrap();
    let kind = Kind {
        package: id,
        skeleton: 0,
        skin: Some(0),
    };
    let clips = reference.clips.len() as u32;
    let mut store = Instances::new(capacities.program_limits(), n);
    let slots: Vec<_> = (0..n)
        .map(|i| {
            let at = Affine3A::from_translation(Vec3::new(i as f32, 0.0, 0.0));
            store.add(kind, &at).unwrap()
        })
        .collect();
    let set = |store: &mut Instances, runtime: &Runtime, t: f32| {
        let batch = Batch {
            package: id,
            skeleton: 0,
            skin: Some(0),
            instances: &[],
        };
        let assets = batch_assets(0, &batch, |p| runtime.package(p).map(|r| &r.package)).unwrap();
        for (i, &slot) in slots.iter().enumerate() {
            let program = sample(i as u32 % clips, t + 0.1 * i as f32);
            store.set_program(slot, &program, &assets).unwrap();
        }
        store.commit();
    };
    set(&mut store, &runtime, 0.2);
    runtime.present(&store, 1.0).unwrap();
    runtime.finish().unwrap();
    runtime.replace_package(id, &compressed).unwrap();
    // The next tick changes values alone: no instance's program changes.
    set(&mut store, &runtime, 0.3);
    assert!(store.changed().is_empty(), "{:?}", store.changed());
    runtime.present(&store, 1.0).unwrap();
    runtime.finish().unwrap();
    let gpu = runtime.readback().unwrap();
    let assets = compressed.assets(0).unwrap();
    let extent = f64::from(component_extent(assets.skeleton));
    let joints = assets.skeleton.joint_count();
    let palette = compressed.skins[0].joints.len();
    let mut evaluator = Evaluator::new(capacities.program_limits(), joints, palette);
    let mut program = Program::default();
    let mut worst: f64 = 0.0;
    for &slot in &slots {
        assert!(store.present_program(slot.0, 1.0, &compressed.clips, &mut program));
        evaluator.run(&program, &assets).unwrap();
        let g = &gpu[0].components[slot.0 as usize * joints..][..joints];
        for (g, r) in g.iter().zip(evaluator.component()) {
            let d = (Vec3::from(g.translation) - Vec3::from(r.translation)).length();
            worst = worst.max(f64::from(d) / extent);
        }
    }
    assert!(
        worst <= POSITION_TOLERANCE,
        "after the replacement the GPU's poses are {worst:.2e} of the extent off the CPU's"
    );
}
