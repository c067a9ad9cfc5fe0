//! Failure injection: a device that is lost under a running runtime surfaces as a typed error
//! (not a panic, not a hang), and a runtime rebuilt on a new context in the same process gives
//! the frame the first one gave. lavapipe lets a test provoke the loss with `Device::destroy`.

mod common;

use glam::Affine3A;
use throng_cpu_ref::{BatchOutput, Package, PoseOp, Program};
use throng_gpu::{Batch, Capacities, GpuContext, GpuError, Instance, Pose, Runtime};

fn walk(package: &Package) -> Program {
    let clip = package.find_clip("walk").expect("character has a walk") as u32;
    Program {
        ops: vec![
            PoseOp::sample(0, clip, 0.4),
            PoseOp::to_component(0),
            PoseOp::palette(0),
        ],
        weights: vec![],
    }
}

/// One frame of four walking instances on a new runtime of `ctx`, read back.
fn frame(ctx: &GpuContext, package: &Package) -> Result<(Runtime, BatchOutput), GpuError> {
    let mut runtime = Runtime::new(ctx, Capacities::for_packages(&[package], 4))?;
    let id = runtime.add_package(package)?;
    let program = walk(package);
    let instances: Vec<Instance> = (0..4)
        .map(|i| Instance {
            pose: Pose::Program(&program),
            placement: Affine3A::from_translation(glam::Vec3::X * i as f32),
        })
        .collect();
    runtime.frame(&[Batch {
        package: id,
        skeleton: 0,
        skin: Some(0),
        instances: &instances,
    }])?;
    let out = runtime.readback()?.remove(0);
    Ok((runtime, out))
}

#[test]
fn a_lost_device_is_a_typed_error_and_a_rebuilt_runtime_gives_the_same_frame() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let (mut runtime, before) = frame(&ctx, &package).expect("a frame on a working device");
    ctx.device.destroy();
    let program = walk(&package);
    let instances = [Instance {
        pose: Pose::Program(&program),
        placement: Affine3A::IDENTITY,
    }];
    let lost = runtime
        .frame(&[Batch {
            package: throng_cpu_ref::PackageId(0),
            skeleton: 0,
            skin: Some(0),
            instances: &instances,
        }])
        .and_then(|_| runtime.readback().map(|_| ()));
    let e = lost.expect_err("a frame on a destroyed device");
    println!("after the loss: {e}");
    assert!(matches!(e, GpuError::DeviceLost { .. }), "{e:?}");
    assert!(
        e.to_string().contains("make a new GpuContext and Runtime"),
        "{e}"
    );
    let again = runtime
        .frame(&[])
        .expect_err("every later frame is refused too");
    assert!(matches!(again, GpuError::DeviceLost { .. }), "{again:?}");
    drop(runtime);
    let fresh = common::gpu().expect("a second context");
    let (_, after) = frame(&fresh, &package).expect("a frame on the rebuilt runtime");
    assert_eq!(after.palettes, before.palettes);
    assert_eq!(after.components, before.components);
}
