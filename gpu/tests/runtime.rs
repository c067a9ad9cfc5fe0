//! The runtime's contract: typed errors for bad input (and unchanged state after them),
//! dispatches per frame independent of the instance count, shapes built once, heroes,
//! capacities.

mod common;

use glam::Affine3A;
use throng_cpu_ref::{FrameError, PoseOp, Program, ProgramError};
use throng_gpu::{
    Batch, Capacities, GpuContext, GpuError, Instance, Pose, Runtime, RuntimeOptions, Specialise,
};

fn walk(package: &throng_cpu_ref::Package, time: f32) -> Program {
    let clip = package.find_clip("walk").expect("character has a walk") as u32;
    Program {
        ops: vec![
            PoseOp::sample(0, clip, time),
            PoseOp::to_component(0),
            PoseOp::palette(0),
        ],
        weights: vec![],
    }
}

fn instances(program: &Program, n: usize) -> Vec<Instance<'_>> {
    (0..n)
        .map(|i| Instance {
            pose: Pose::Program(program),
            placement: Affine3A::from_translation(glam::Vec3::new(i as f32, 0.0, 0.0)),
        })
        .collect()
}

#[test]
fn dispatch_count_does_not_grow_with_instances() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&package], 64)).unwrap();
    let id = runtime.add_package(&package).unwrap();
    let program = walk(&package, 0.3);
    let mut counts = Vec::new();
    for n in [1, 4, 64] {
        let list = instances(&program, n);
        let report = runtime
            .frame(&[Batch {
                package: id,
                skeleton: 0,
                skin: Some(0),
                instances: &list,
            }])
            .unwrap();
        let times = runtime.finish().unwrap();
        println!("{n} instances: {report:?}\n  {times:?}");
        assert!(times.wall_ms > 0.0);
        if times.gpu_timestamps {
            assert!(
                times.pose_ms > 0.0 && times.bounds_ms > 0.0 && times.skinning_ms > 0.0,
                "{times:?}"
            );
        }
        assert_eq!(report.instances, n);
        // A 16-byte record (slot, kind word, clip, time), a 4-byte kind word for the bounds
        // pass, an 8-byte clock for a card past the skinned budget and a 48-byte placement.
        assert_eq!(report.bytes_per_instance(), 16.0 + 4.0 + 8.0 + 48.0);
        counts.push(report.dispatches);
    }
    assert_eq!(
        counts,
        vec![8, 8, 8],
        "one pose dispatch (one shape), one bounds, four of the budget, cards and order, one skinning dispatch for every level of detail, and the morph pass (the character's face has morph targets)"
    );
    let out = runtime.readback().unwrap();
    assert_eq!(out[0].skinned.len(), 64 * out[0].vertex_count);
    // Same program, placements one unit apart along x: vertex v of instance 5 is instance 0's plus 5 x.
    let v = out[0].vertex_count / 2;
    let d = out[0].skinned[5 * out[0].vertex_count + v].position - out[0].skinned[v].position;
    assert!((d - glam::Vec3::new(5.0, 0.0, 0.0)).length() < 1e-4, "{d}");
}

/// A runtime with the character resident and one good frame of `n` instances submitted.
fn with_good_frame(
    n: usize,
    capacity: u32,
) -> Option<(Runtime, throng_gpu::PackageId, throng_cpu_ref::Package)> {
    let ctx = common::gpu()?;
    let package = common::character();
    let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&package], capacity)).unwrap();
    let id = runtime.add_package(&package).unwrap();
    let program = walk(&package, 0.5);
    let list = instances(&program, n);
    runtime
        .frame(&[Batch {
            package: id,
            skeleton: 0,
            skin: Some(0),
            instances: &list,
        }])
        .unwrap();
    Some((runtime, id, package))
}

#[test]
fn bad_programs_are_refused_naming_the_instance_and_leave_the_last_frame_intact() {
    let Some((mut runtime, id, package)) = with_good_frame(3, 8) else {
        return;
    };
    let before = runtime.readback().unwrap();
    let good = walk(&package, 0.1);

    let missing_clip = Program {
        ops: vec![PoseOp::sample(0, 99, 0.0), PoseOp::to_component(0)],
        weights: vec![],
    };
    let nan_weight = Program {
        ops: vec![
            PoseOp::rest(0),
            PoseOp::rest(1),
            PoseOp::blend(2, 0, 2, 0),
            PoseOp::to_component(2),
        ],
        weights: vec![f32::NAN, 1.0],
    };
    let nan_layer = Program {
        ops: vec![
            PoseOp::rest(0),
            PoseOp::rest(1),
            PoseOp::overriding(0, 1, f32::NAN, u32::MAX),
            PoseOp::to_component(0),
        ],
        weights: vec![],
    };
    let no_component = Program {
        ops: vec![PoseOp::rest(0)],
        weights: vec![],
    };
    type Expect = fn(&GpuError) -> bool;
    let cases: [(&Program, Expect); 4] = [
        (&missing_clip, |e| {
            matches!(
                e,
                GpuError::Frame(FrameError::Program {
                    batch: 0,
                    instance: 2,
                    source: ProgramError::MissingClip { clip: 99, .. }
                })
            )
        }),
        (&nan_weight, |e| {
            matches!(
                e,
                GpuError::Frame(FrameError::Program {
                    batch: 0,
                    instance: 2,
                    source: ProgramError::BadValue {
                        what: "blend weight",
                        ..
                    }
                })
            )
        }),
        (&nan_layer, |e| {
            matches!(
                e,
                GpuError::Frame(FrameError::Program {
                    batch: 0,
                    instance: 2,
                    source: ProgramError::BadValue {
                        what: "layer weight",
                        ..
                    }
                })
            )
        }),
        (&no_component, |e| {
            matches!(
                e,
                GpuError::Frame(FrameError::BadInstance {
                    batch: 0,
                    instance: 2,
                    ..
                })
            )
        }),
    ];
    for (bad, expected) in cases {
        let list = [
            Instance {
                pose: Pose::Program(&good),
                placement: Affine3A::IDENTITY,
            },
            Instance {
                pose: Pose::Program(&good),
                placement: Affine3A::IDENTITY,
            },
            Instance {
                pose: Pose::Program(bad),
                placement: Affine3A::IDENTITY,
            },
        ];
        let err = runtime
            .frame(&[Batch {
                package: id,
                skeleton: 0,
                skin: Some(0),
                instances: &list,
            }])
            .unwrap_err();
        println!("{err}");
        assert!(expected(&err), "unexpected error: {err:?}");
    }
    let after = runtime.readback().unwrap();
    assert_eq!(
        before[0].components, after[0].components,
        "a refused frame changes nothing"
    );
}

#[test]
fn of_thousands_of_instances_the_first_bad_one_is_named_whatever_the_threads() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let package = common::character();
    let n = 5000;
    let mut capacities = Capacities::for_packages(&[&package], n as u32);
    capacities.skinned_instances = 0;
    let mut runtime = Runtime::new(&ctx, capacities).unwrap();
    let id = runtime.add_package(&package).unwrap();
    let good = walk(&package, 0.1);
    let missing_clip = Program {
        ops: vec![PoseOp::sample(0, 99, 0.0), PoseOp::to_component(0)],
        weights: vec![],
    };
    let mut list = instances(&good, n);
    // In different chunks of the parallel check, the first not the first checked.
    for i in [4100, 1300, 2900] {
        list[i].pose = Pose::Program(&missing_clip);
    }
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let err = pool
            .install(|| {
                runtime.frame(&[Batch {
                    package: id,
                    skeleton: 0,
                    skin: None,
                    instances: &list,
                }])
            })
            .unwrap_err();
        assert!(
            matches!(
                err,
                GpuError::Frame(FrameError::Program {
                    batch: 0,
                    instance: 1300,
                    ..
                })
            ),
            "{threads} threads: {err:?}"
        );
    }
}

#[test]
fn frames_beyond_capacity_and_bad_batches_get_typed_errors() {
    let Some((mut runtime, id, package)) = with_good_frame(2, 4) else {
        return;
    };
    let program = walk(&package, 0.2);
    let five = instances(&program, 5);
    let err = runtime
        .frame(&[Batch {
            package: id,
            skeleton: 0,
            skin: Some(0),
            instances: &five,
        }])
        .unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::Capacity {
                what: "instances",
                needed: 5,
                capacity: 4
            }
        ),
        "{err:?}"
    );
    println!("{err}");

    let two = instances(&program, 2);
    let err = runtime
        .frame(&[Batch {
            package: id,
            skeleton: 3,
            skin: None,
            instances: &two,
        }])
        .unwrap_err();
    assert!(
        matches!(err, GpuError::Frame(FrameError::BadBatch { batch: 0, .. })),
        "{err:?}"
    );
    let err = runtime
        .frame(&[Batch {
            package: throng_gpu::PackageId(7),
            skeleton: 0,
            skin: None,
            instances: &two,
        }])
        .unwrap_err();
    assert!(
        matches!(err, GpuError::Frame(FrameError::BadBatch { batch: 0, .. })),
        "{err:?}"
    );

    let short = vec![Affine3A::IDENTITY; 3];
    let hero = [Instance {
        pose: Pose::Hero(&short),
        placement: Affine3A::IDENTITY,
    }];
    let err = runtime
        .frame(&[Batch {
            package: id,
            skeleton: 0,
            skin: Some(0),
            instances: &hero,
        }])
        .unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::Frame(FrameError::BadInstance {
                batch: 0,
                instance: 0,
                ..
            })
        ),
        "{err:?}"
    );

    let nan_place = [Instance {
        pose: Pose::Program(&program),
        placement: Affine3A::from_scale(glam::Vec3::splat(f32::NAN)),
    }];
    let err = runtime
        .frame(&[Batch {
            package: id,
            skeleton: 0,
            skin: Some(0),
            instances: &nan_place,
        }])
        .unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::Frame(FrameError::BadInstance {
                batch: 0,
                instance: 0,
                ..
            })
        ),
        "{err:?}"
    );

    // A binding limit below one instance's skinned vertices cannot be paged around.
    let mut caps = Capacities::for_packages(&[&package], 4);
    caps.binding_limit = Some(4096);
    let err = Runtime::new(runtime.context(), caps).err().unwrap();
    assert!(
        matches!(
            err,
            GpuError::BindingLimit {
                what: "skinned",
                ..
            }
        ),
        "{err:?}"
    );
    println!("{err}");

    // More instances than the whole-bound arrays hold: refused before any buffer, with the
    // count that fits.
    let mut caps = Capacities::for_packages(&[&package], 40);
    caps.binding_limit = Some(16 * 1024);
    let (most, what) = caps.most_instances(16 * 1024);
    let err = Runtime::new(runtime.context(), caps).err().unwrap();
    assert!(
        matches!(err, GpuError::TooManyInstances { instances: 40, most: m, what: w, .. } if m == most && w == what),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains(&format!("lower the instance count (--instances) to {most}")),
        "{err}"
    );
}

#[test]
fn malformed_packages_are_refused_at_upload() {
    let Some(ctx) = common::gpu() else { return };
    let mut package = common::chain_package(4);
    package.clips[0].values.truncate(10);
    let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&package], 4)).unwrap();
    let err = runtime.add_package(&package).unwrap_err();
    assert!(
        matches!(err, GpuError::BadPackage { package: 0, .. }),
        "{err:?}"
    );
    println!("{err}");
    let mut package = common::chain_package(4);
    package.meshes[0].joints[0][0] = 9;
    let err = runtime.add_package(&package).unwrap_err();
    assert!(matches!(err, GpuError::BadPackage { .. }), "{err:?}");
    // A new generation replaces the old one in place; a bad one leaves the old one resident.
    let id = runtime.add_package(&common::chain_package(4)).unwrap();
    runtime
        .replace_package(id, &common::chain_package(6))
        .unwrap();
    assert_eq!(
        runtime.package(id).unwrap().package.skeletons[0].joint_count(),
        6
    );
    assert!(runtime.replace_package(id, &package).is_err());
    assert_eq!(
        runtime.package(id).unwrap().package.skeletons[0].joint_count(),
        6
    );
    let mut masked = common::chain_package(4);
    masked.masks.push(throng_cpu_ref::Mask {
        name: "short".into(),
        skeleton: 0,
        weights: vec![1.0; 2],
    });
    let err = runtime.add_package(&masked).unwrap_err();
    assert!(matches!(err, GpuError::BadPackage { .. }), "{err:?}");
}

#[test]
fn a_hero_palette_skins_exactly_like_the_cpu() {
    let Some((mut runtime, id, package)) = with_good_frame(1, 4) else {
        return;
    };
    // Hero palette: identity for every entry, so its skinned vertices are the bind positions.
    let palette = vec![Affine3A::IDENTITY; package.skins[0].joints.len()];
    let program = walk(&package, 0.4);
    let list = [
        Instance {
            pose: Pose::Program(&program),
            placement: Affine3A::IDENTITY,
        },
        Instance {
            pose: Pose::Hero(&palette),
            placement: Affine3A::from_translation(glam::Vec3::Y),
        },
    ];
    let report = runtime
        .frame(&[Batch {
            package: id,
            skeleton: 0,
            skin: Some(0),
            instances: &list,
        }])
        .unwrap();
    assert_eq!((report.heroes, report.dispatches), (1, 8));
    assert_eq!(report.hero_bytes, 48 * palette.len() as u64);
    let out = runtime.readback().unwrap();
    let n = out[0].vertex_count;
    let mesh = &package.meshes[0];
    for v in (0..mesh.positions.len()).step_by(97) {
        let got = out[0].skinned[n + v].position;
        assert!(
            (got - (mesh.positions[v] + glam::Vec3::Y)).length() < 1e-5,
            "vertex {v}: {got}"
        );
    }
    assert_eq!(&out[0].palettes[out[0].palette_len..], &palette[..]);
}

#[test]
fn a_shapes_pipeline_is_built_once_and_reused() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let options = RuntimeOptions {
        specialise: Specialise::Background,
        ..RuntimeOptions::default()
    };
    let mut runtime =
        Runtime::with_options(&ctx, Capacities::for_packages(&[&package], 16), options).unwrap();
    let id = runtime.add_package(&package).unwrap();
    let mut paths = Vec::new();
    for frame in 0..4 {
        // Other clips and times each frame: the same shape.
        let program = walk(&package, 0.1 * frame as f32);
        let list = instances(&program, 16);
        let report = runtime
            .frame(&[Batch {
                package: id,
                skeleton: 0,
                skin: Some(0),
                instances: &list,
            }])
            .unwrap();
        runtime.finish().unwrap();
        paths.push((report.specialised_dispatches, report.interpreter_dispatches));
        if frame == 0 {
            runtime.wait_for_pipelines().unwrap();
        }
    }
    // The first frame requests the pipeline and runs the interpreter; the rest run it.
    assert_eq!(paths, [(0, 1), (1, 0), (1, 0), (1, 0)]);
    assert_eq!(runtime.pipelines_built().0, 1, "one shape, one pipeline");
    // A second shape gets a second pipeline, once a frame holds enough instances of it: a rare
    // shape keeps the interpreter.
    let clip = package.find_clip("run").unwrap() as u32;
    let blend = Program {
        ops: vec![
            PoseOp::sample(0, clip, 0.1),
            PoseOp::sample(1, clip, 0.2),
            PoseOp::blend(2, 0, 2, 0),
            PoseOp::to_component(2),
        ],
        weights: vec![0.5, 0.5],
    };
    let min = throng_gpu::pipelines::MIN_INSTANCES as usize;
    for (n, built) in [(min - 1, 1), (min, 2)] {
        let list = instances(&blend, n);
        let batch = Batch {
            package: id,
            skeleton: 0,
            skin: Some(0),
            instances: &list,
        };
        runtime.frame(&[batch]).unwrap();
        runtime.wait_for_pipelines().unwrap();
        assert_eq!(
            runtime.pipelines_built().0,
            built,
            "{n} instances of the blend"
        );
    }
}

#[test]
fn kept_instances_show_their_last_pose_at_their_new_placement_like_the_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let mut gpu = Runtime::new(&ctx, Capacities::for_packages(&[&package], 8)).unwrap();
    let gpu_id = gpu.add_package(&package).unwrap();
    let mut cpu = throng_cpu_ref::CpuRuntime::new(Default::default(), Default::default(), 1);
    let cpu_id = cpu.add_package(&package);
    let (early, late) = (walk(&package, 0.2), walk(&package, 0.7));
    let first = instances(&early, 8);
    // Second frame: even instances keep their pose, odd ones move on; everyone moves 2 m.
    let second: Vec<Instance> = (0..8)
        .map(|i| Instance {
            pose: if i % 2 == 0 {
                Pose::Keep
            } else {
                Pose::Program(&late)
            },
            placement: Affine3A::from_translation(glam::Vec3::new(i as f32, 0.0, 2.0)),
        })
        .collect();
    for frame in [&first, &second] {
        let batch = |package| Batch {
            package,
            skeleton: 0,
            skin: Some(0),
            instances: frame,
        };
        gpu.frame(&[batch(gpu_id)]).unwrap();
        cpu.frame(&[batch(cpu_id)]).unwrap();
    }
    let (got, want) = (&gpu.readback().unwrap()[0], &cpu.outputs()[0]);
    let n = want.palette_len;
    let scale = package.meshes[0].bounds_diagonal();
    for i in 0..8 {
        let worst = (0..n)
            .map(|k| {
                let (g, w) = (got.palettes[i * n + k], want.palettes[i * n + k]);
                (g.translation - w.translation).length()
            })
            .fold(0.0f32, f32::max);
        assert!(
            worst <= 1e-4 * scale,
            "instance {i}: palette off by {worst}"
        );
        let b = (got.bounds[i].min - want.bounds[i].min).abs().max_element();
        assert!(b <= 1e-4 * scale, "instance {i}: bounds off by {b}");
    }
    // A kept instance's palette is the first frame's: the early pose, not the late one.
    let differs = (0..n)
        .map(|k| (got.palettes[k].translation - got.palettes[n + k].translation).length())
        .fold(0.0f32, f32::max);
    assert!(differs > 0.01, "kept and evaluated poses differ: {differs}");
    let refused = gpu.frame(&[Batch {
        package: gpu_id,
        skeleton: 0,
        skin: Some(0),
        instances: &second[..4],
    }]);
    assert!(
        matches!(&refused, Err(GpuError::Frame(FrameError::BadInstance { what, .. })) if what.contains("keeps its last pose")),
        "{refused:?}"
    );
}

#[test]
fn inertialization_history_split_over_pages_matches_the_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let (walk, run) = (
        package.find_clip("walk").unwrap() as u32,
        package.find_clip("run").unwrap() as u32,
    );
    let dt = 1.0 / 30.0;
    let n = 12u32;
    let capture = |slot: u32| Program {
        ops: vec![
            PoseOp::sample(1, walk, 0.3 + 0.05 * slot as f32),
            PoseOp::sample(2, walk, 0.3 + 0.05 * slot as f32 - dt),
            PoseOp::sample(0, run, 0.1),
            PoseOp::sample(3, run, 0.1 - dt),
            PoseOp::capture(0, 1, 2, 3, slot, dt),
            PoseOp::inertialize(0, slot, 0.0, 0.3),
            PoseOp::to_component(0),
        ],
        weights: vec![],
    };
    let decay = |slot: u32| Program {
        ops: vec![
            PoseOp::sample(0, run, 0.1 + dt),
            PoseOp::inertialize(0, slot, dt, 0.3),
            PoseOp::to_component(0),
        ],
        weights: vec![],
    };
    let frames: Vec<Vec<Program>> =
        vec![(0..n).map(capture).collect(), (0..n).map(decay).collect()];
    let mut capacities = Capacities::for_packages(&[&package], n);
    capacities.history_slots = n;
    (capacities.palette, capacities.vertices) = (0, 0);
    // Three history slots per binding: four pages of history (and of components).
    let slot_bytes = u64::from(capacities.joints) * throng_gpu::frame_buffers::HISTORY_JOINT_BYTES;
    capacities.binding_limit = Some(3 * slot_bytes);
    let mut gpu = Runtime::new(&ctx, capacities).unwrap();
    let gpu_id = gpu.add_package(&package).unwrap();
    let mut cpu =
        throng_cpu_ref::CpuRuntime::new(capacities.program_limits(), Default::default(), 1);
    let cpu_id = cpu.add_package(&package);
    for programs in &frames {
        let list: Vec<Instance> = programs
            .iter()
            .map(|p| Instance {
                pose: Pose::Program(p),
                placement: Affine3A::IDENTITY,
            })
            .collect();
        let batch = |package| Batch {
            package,
            skeleton: 0,
            skin: None,
            instances: &list,
        };
        gpu.frame(&[batch(gpu_id)]).unwrap();
        cpu.frame(&[batch(cpu_id)]).unwrap();
    }
    let (got, want) = (&gpu.readback().unwrap()[0], &cpu.outputs()[0]);
    let worst = got
        .components
        .iter()
        .zip(&want.components)
        .map(|(g, w)| (g.translation - w.translation).length())
        .fold(0.0f32, f32::max);
    assert_eq!(got.components.len(), want.components.len());
    assert!(worst <= 1e-4, "components off by {worst} m");
}

#[test]
fn a_batch_larger_than_the_declared_skeleton_skin_or_dispatches_is_refused_by_name() {
    let Some(ctx) = common::gpu() else { return };
    let (small, large) = (common::chain_package(4), common::chain_package(6));
    let program = rest_palette();
    let list = instances(&program, 2);
    let frame = |capacities: Capacities, package: &throng_cpu_ref::Package| {
        let mut runtime = Runtime::new(&ctx, capacities).unwrap();
        let id = runtime.add_package(package).unwrap();
        runtime
            .frame(&[Batch {
                package: id,
                skeleton: 0,
                skin: Some(0),
                instances: &list,
            }])
            .map(|_| ())
    };
    // Sized for the 4-joint chain, given the 6-joint one: its skeleton is named first.
    let err = frame(Capacities::for_packages(&[&small], 2), &large).unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::Capacity {
                what: "joints of one skeleton",
                needed: 6,
                capacity: 4
            }
        ),
        "{err:?}"
    );
    let mut wide = Capacities::for_packages(&[&small], 2);
    wide.joints = 6;
    let err = frame(wide, &large).unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::Capacity {
                what: "palette entries of one skin",
                needed: 6,
                capacity: 4
            }
        ),
        "{err:?}"
    );
    wide.palette = 6;
    let err = frame(wide, &large).unwrap_err();
    assert!(
        matches!(
            err,
            GpuError::Capacity {
                what: "vertices of one skin",
                needed: 12,
                capacity: 8
            }
        ),
        "{err:?}"
    );
    let mut one = Capacities::for_packages(&[&small], 2);
    one.dispatches = 1;
    let err = frame(one, &small).unwrap_err();
    assert!(
        matches!(err, GpuError::Capacity { what, .. } if what.starts_with("dispatches")),
        "{err:?}"
    );
    assert!(frame(Capacities::for_packages(&[&small], 2), &small).is_ok());
}

#[test]
fn a_package_array_past_the_binding_limit_is_refused_by_name_and_the_runtime_keeps_working() {
    if common::gpu().is_none() {
        return;
    }
    // A device that binds at most 32 KiB per storage binding, as a small adapter would.
    const LIMIT: u64 = 32 * 1024;
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).unwrap();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: wgpu::Limits {
            max_storage_buffer_binding_size: LIMIT,
            ..GpuContext::required_limits(&adapter.limits())
        },
        ..Default::default()
    }))
    .unwrap();
    let ctx = GpuContext::from_device(device, queue).unwrap();
    let (small, character) = (common::chain_package(4), common::character());
    let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&small], 1)).unwrap();
    let err = runtime.add_package(&character).unwrap_err();
    let GpuError::ResidentTooLarge {
        packages: 1,
        what,
        bytes,
        limit: LIMIT,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert!(*bytes > LIMIT, "{err}");
    println!("{err} ({what})");
    // The refused package left nothing behind: the small one becomes package 0.
    let id = runtime.add_package(&small).unwrap();
    assert_eq!(id, throng_cpu_ref::PackageId(0));
    let program = rest_palette();
    let list = instances(&program, 1);
    let batch = Batch {
        package: id,
        skeleton: 0,
        skin: Some(0),
        instances: &list,
    };
    runtime.frame(&[batch]).unwrap();
}

#[test]
fn a_skin_of_65536_palette_entries_is_refused_because_vertices_index_the_palette_with_u16() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::chain_package(4);
    let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&package], 1)).unwrap();
    let widen = |entries: usize| {
        let mut wide = package.clone();
        let skin = &mut wide.skins[0];
        let bind = skin.inverse_bind[0];
        skin.joints = (0..entries).map(|e| (e % 4) as u32).collect();
        skin.inverse_bind = vec![bind; entries];
        wide
    };
    let err = runtime.add_package(&widen(65_536)).unwrap_err();
    assert!(
        matches!(&err, GpuError::BadPackage { package: 0, what }
            if what.contains("has 65536 palette entries; vertices index at most 65 535")),
        "{err}"
    );
    runtime
        .add_package(&widen(65_535))
        .expect("65 535 palette entries are the most, and allowed");
}

#[test]
fn a_compressed_stream_past_2_27_words_is_refused_by_the_upload_before_it_is_decoded() {
    let Some(ctx) = common::gpu() else { return };
    let mut package = common::character();
    let (mut report, profile) = (
        throng_cook::CookReport::default(),
        throng_cook::Profile::CROWD,
    );
    throng_cook::compress(&mut package, &mut report, &profile);
    let clip = (package.clips.iter_mut())
        .find_map(|c| c.compressed.as_mut())
        .expect("the crowd profile compresses the character's clips");
    // Zeroed and never written: the pages are not touched unless the upload reads them.
    clip.words = vec![0; throng_cpu_ref::codec::layout::MAX_WORDS as usize + 1];
    let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&package], 1)).unwrap();
    let err = runtime.add_package(&package).unwrap_err();
    assert!(
        matches!(&err, GpuError::BadPackage { package: 0, what } if what.contains("134217729 words")),
        "{err}"
    );
}

/// The rest pose of skeleton 0 as skin 0's palette.
fn rest_palette() -> Program {
    Program {
        ops: vec![PoseOp::rest(0), PoseOp::to_component(0), PoseOp::palette(0)],
        weights: vec![],
    }
}
