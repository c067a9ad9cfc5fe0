//! Throng in a caller's renderer: the Animator on a caller's device matches the CPU reference,
//! its frame path never waits for the GPU and allocates nothing that grows with the crowd, a
//! device without Throng's limits is refused, and examples/embed.rs draws a posed crowd in its
//! own window (under Xvfb).

use std::path::{Path, PathBuf};
use std::process::Command;

use throng::control::tree::Value;
use throng::cpu_ref::{Batch, CpuRuntime, Instance, Outputs, Pose};
use throng::fixtures::alloc::{allocations, Counting};
use throng::fixtures::Formation;
use throng::gpu::draw::{CrowdPass, Target};
use throng::gpu::parity::{self, BatchCase, ParityRun, Path as ParityPath};
use throng::gpu::raster::{read_texture, Scene, COLOR_FORMAT, DEPTH_FORMAT};
use throng::gpu::{wgpu, GpuContext, GpuError};
use throng::{Animator, AnimatorError, AnimatorOptions};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// An animator of `n` members of the generated character on a grid, at four speeds.
fn animator(ctx: &GpuContext, n: usize) -> (Animator, Formation) {
    let mut package = throng::builtin_character().unwrap();
    let grid = Formation::new(&mut package, 0, n).unwrap();
    let tree = (throng::fixtures::CROWD_TREE, "crowd.toml");
    let options = AnimatorOptions::default();
    let mut animator = Animator::new(ctx, package, 0, tree, &grid.placements(), options).unwrap();
    for member in 0..n {
        let speed = [0.0, 0.8, 1.4, 3.0][member % 4];
        animator
            .set_input(member, "speed", Value::Float(speed))
            .unwrap();
    }
    (animator, grid)
}

/// The CPU reference's frame of the animator's current programs and placements.
fn reference(animator: &Animator, cpu: &mut CpuRuntime, id: throng::cpu_ref::PackageId) {
    let instances: Vec<Instance> = (0..animator.len())
        .map(|i| Instance {
            pose: Pose::Program(animator.program(i).unwrap()),
            placement: animator.placements()[i],
        })
        .collect();
    let batch = [Batch {
        package: id,
        skeleton: 0,
        skin: Some(0),
        instances: &instances,
    }];
    cpu.frame(&batch).unwrap();
}

#[test]
fn an_animator_frame_matches_the_cpu_reference_after_ticks_with_root_motion() {
    let Some(ctx) = GpuContext::for_tests() else {
        return;
    };
    let (mut animator, _) = animator(&ctx, 24);
    let limits = animator.runtime().capacities().program_limits();
    let mut cpu = CpuRuntime::new(limits, Outputs::default(), 1);
    let id = cpu.add_package(&animator.controller().package);
    let start = animator.placements().to_vec();
    for _ in 0..20 {
        animator.tick().unwrap();
        animator.pose().unwrap();
        reference(&animator, &mut cpu, id);
    }
    let moved = (start.iter().zip(animator.placements()))
        .filter(|(a, b)| a.translation.distance(b.translation) > 0.2)
        .count();
    assert!(moved >= 12, "{moved} of 24 members walked off their spot");
    animator.runtime_mut().finish().unwrap();
    let gpu = animator.runtime().readback().unwrap().remove(0);
    let package = &animator.controller().package;
    let joints = package.skeletons[0].joint_count();
    let vertices: usize = package.meshes.iter().map(|m| m.positions.len()).sum();
    eprintln!(
        "compared: {} components, {} palette entries, {} skinned vertices",
        gpu.components.len(),
        gpu.palettes.len(),
        gpu.skinned.len()
    );
    assert_eq!(gpu.components.len(), 24 * joints);
    assert_eq!(gpu.skinned.len(), 24 * vertices);
    let run = ParityRun {
        adapter: ctx.adapter.clone(),
        seed: 0,
        frame: Default::default(),
        ops: Vec::new(),
        cases: vec![BatchCase {
            package: "generated character".into(),
            skeleton: 0,
            skin: Some(0),
            extent: parity::component_extent(&package.skeletons[0]),
            heroes: vec![false; animator.len()],
            levels: vec![0; animator.len()],
            level_vertices: Vec::new(),
            gpu,
            cpu: cpu.outputs()[0].clone(),
        }],
    };
    let report = parity::compare(&run, ParityPath::Interpreter);
    for stage in &report.batches[0].stages {
        eprintln!("{}: {:.3e} {}", stage.stage, stage.worst, stage.unit);
    }
    assert!(report.pass, "{:#?}", report.batches[0].stages);
    let skinned = report.batches[0]
        .stages
        .iter()
        .find(|s| s.stage == "skinned position");
    assert!(skinned.is_some(), "skinned vertices were compared");
}

/// One embedded frame: tick, pose, prepare and a render pass into `view`, submitted.
fn frame(animator: &mut Animator, crowd: &mut CrowdPass, scene: &Scene, target: &Targets) {
    animator.tick().unwrap();
    animator.pose().unwrap();
    crowd
        .prepare(animator.runtime(), scene, target.size)
        .unwrap();
    let ctx = animator.runtime().context();
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: &target.view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations::default(),
        })],
        depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
            view: &target.depth,
            depth_ops: Some(wgpu::Operations {
                load: wgpu::LoadOp::Clear(1.0),
                store: wgpu::StoreOp::Discard,
            }),
            stencil_ops: None,
        }),
        ..Default::default()
    });
    crowd.render(&mut pass);
    drop(pass);
    ctx.queue.submit([encoder.finish()]);
}

/// A caller's colour and depth targets.
struct Targets {
    size: (u32, u32),
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    depth: wgpu::TextureView,
}

fn targets(ctx: &GpuContext, target: Target) -> Targets {
    let size = (160, 100);
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("caller's colour"),
        size: wgpu::Extent3d {
            width: size.0,
            height: size.1,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: target.color,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    Targets {
        size,
        view: texture.create_view(&Default::default()),
        texture,
        depth: target.depth_view(&ctx.device, size),
    }
}

#[test]
fn the_embedded_frame_path_never_waits_and_its_allocations_do_not_grow_with_the_crowd() {
    let Some(ctx) = GpuContext::for_tests() else {
        return;
    };
    let target = Target {
        color: COLOR_FORMAT,
        depth: DEPTH_FORMAT,
        samples: 1,
    };
    let mut per_frame = Vec::new();
    for n in [32, 512] {
        let (mut animator, grid) = animator(&ctx, n);
        let mut crowd = CrowdPass::new(&ctx, target).unwrap();
        let targets = targets(&ctx, target);
        let aspect = targets.size.0 as f32 / targets.size.1 as f32;
        let scene = Scene::framing(&grid.bounds(), aspect, grid.spacing);
        for _ in 0..3 {
            frame(&mut animator, &mut crowd, &scene, &targets);
        }
        let waits = ctx.waits();
        let counts: Vec<u64> = (0..4)
            .map(|_| allocations(|| frame(&mut animator, &mut crowd, &scene, &targets)))
            .collect();
        assert_eq!(
            ctx.waits(),
            waits,
            "{n} members: a frame waited for the GPU"
        );
        eprintln!("{n} members: allocations per frame {counts:?}");
        per_frame.push(*counts.iter().min().unwrap());
        // What the caller drew: the crowd, on the cleared target.
        let image = read_texture(&ctx, &targets.texture).unwrap();
        let drawn = image.rgba.chunks_exact(4).filter(|p| p[3] > 0).count();
        assert!(drawn > 100, "{n} members: {drawn} pixels drawn");
    }
    // Bookkeeping is reused; wgpu allocates per submission, the same for any crowd size.
    assert!(
        per_frame[1] <= per_frame[0] + 4,
        "allocations per frame grow with the crowd: {per_frame:?} for 32 and 512 members"
    );
}

#[test]
fn a_device_without_throngs_limits_is_refused_and_bad_inputs_are_errors() {
    let Some(ctx) = GpuContext::for_tests() else {
        return;
    };
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default())).unwrap();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: wgpu::Limits::downlevel_webgl2_defaults(),
        ..Default::default()
    }))
    .unwrap();
    let refused = GpuContext::from_device(device, queue).unwrap_err();
    assert!(
        matches!(&refused, GpuError::AdapterLimit { what, .. } if what.contains("required_limits")),
        "{refused}"
    );
    let (mut animator, _) = animator(&ctx, 2);
    let no_member = animator.set_input(5, "speed", Value::Float(1.0));
    assert!(matches!(
        no_member,
        Err(AnimatorError::NoMember {
            member: 5,
            members: 2
        })
    ));
    let no_input = animator.set_input(1, "jump", Value::Bool(true));
    assert!(matches!(
        no_input,
        Err(AnimatorError::Input { member: 1, .. })
    ));
    let package = throng::builtin_character().unwrap();
    let tree = (throng::fixtures::CROWD_TREE, "crowd.toml");
    let options = AnimatorOptions::default();
    let no_skeleton = Animator::new(&ctx, package, 3, tree, &[], options);
    assert!(matches!(no_skeleton, Err(AnimatorError::NoSkeleton(3))));
}

/// The example's binary, built by `cargo test` next to this test's.
fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    dir.join("examples")
        .join(format!("embed{}", std::env::consts::EXE_SUFFIX))
}

#[test]
fn the_embed_example_draws_a_posed_crowd_in_its_own_window() {
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("embed.png");
    let _ = std::fs::remove_file(&shot);
    let args = ["--frames", "6", "--instances", "40", "--screenshot"];
    let mut command = if std::env::var_os("DISPLAY").is_some() {
        Command::new(example())
    } else if Command::new("xvfb-run").arg("--help").output().is_ok() {
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "-s", "-screen 0 800x600x24"]).arg(example());
        c
    } else if std::env::var("THRONG_ALLOW_NO_DISPLAY").as_deref() == Ok("1") {
        return eprintln!("skipping: no DISPLAY and no xvfb-run (THRONG_ALLOW_NO_DISPLAY=1)");
    } else {
        panic!("no DISPLAY and no xvfb-run: install xvfb (apt-get install xvfb xauth), or set THRONG_ALLOW_NO_DISPLAY=1 to skip");
    };
    let out = command.args(args).arg(&shot).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success()
        && stderr.contains("adapter")
        && std::env::var("THRONG_ALLOW_NO_GPU").as_deref() == Ok("1")
    {
        return eprintln!("skipping: {stderr} (THRONG_ALLOW_NO_GPU=1)");
    }
    assert!(out.status.success(), "the example failed: {stderr}");
    let file = std::fs::File::open(&shot).expect("the example wrote its screenshot");
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut rgba = vec![0; decoder.output_buffer_size().unwrap()];
    let info = decoder.next_frame(&mut rgba).unwrap();
    let (w, h) = (info.width as usize, info.height as usize);
    assert_eq!((w, h), (640, 400));
    // The backdrop is the same along a row; the crowd's saturated colours stand out of it.
    let mut crowd = 0;
    for row in rgba[..w * h * 4].chunks_exact(w * 4) {
        let sky = [row[0], row[1], row[2]];
        crowd += (row.chunks_exact(4))
            .filter(|p| (0..3).any(|c| p[c].abs_diff(sky[c]) > 24))
            .count();
    }
    let share = crowd as f64 / (w * h) as f64;
    assert!(
        (0.01..0.6).contains(&share),
        "{:.1}% of the image is crowd",
        100.0 * share
    );
}
