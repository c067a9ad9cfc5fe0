//! Throng in a caller's renderer: the Animator on a caller's device matches the CPU reference
//! presenting the same retained instances, a rendered frame never touches control, its frame
//! path never waits for the GPU and allocates nothing that grows with the crowd, and a device
//! without Throng's limits is refused. (The windowed example: tests/windows.rs.)

use glam::Affine3A;
use throng::control::instance::InputError;
use throng::control::tree::Value;
use throng::cpu_ref::{CpuRuntime, Evaluator, Outputs};
use throng::fixtures::alloc::{allocations, Counting};
use throng::fixtures::Formation;
use throng::gpu::draw::{cleared_depth, CrowdPass, Target};
use throng::gpu::parity::{self, BatchCase, ParityRun, Path as ParityPath};
use throng::gpu::raster::{read_texture, Scene, COLOR_FORMAT, DEPTH_FORMAT};
use throng::gpu::{wgpu, GpuContext, GpuError, PackageId};
use throng::{Animator, AnimatorError, AnimatorOptions, MemberId, View};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// An animator of `n` members of the generated character on a grid, at four speeds.
fn animator(ctx: &GpuContext, n: usize) -> (Animator, Formation) {
    let mut package = throng::builtin_character().unwrap();
    let grid = Formation::new(&mut package, 0, n).unwrap();
    let tree = (throng::fixtures::CROWD_TREE, "crowd.toml");
    let options = AnimatorOptions::default();
    let mut animator = Animator::crowd(ctx, package, 0, tree, &grid.placements(), options).unwrap();
    let character = throng::CharacterId(0);
    let speed_input = (animator.controller(character).unwrap().tree)
        .input("speed")
        .unwrap();
    for member in 0..n {
        let speed = [0.0, 0.8, 1.4, 3.0][member % 4];
        (animator.set_input_at(MemberId(member as u32), speed_input, Value::Float(speed))).unwrap();
    }
    (animator, grid)
}

/// Every member's skeleton LOD level.
fn levels(animator: &Animator) -> Vec<u8> {
    animator.members().map(|m| animator.level(m)).collect()
}

#[test]
fn an_animator_frame_matches_the_cpu_reference_at_every_level_of_detail_after_ticks() {
    let Some(ctx) = GpuContext::for_tests() else {
        return;
    };
    let (mut animator, grid) = animator(&ctx, 24);
    // A view that holds every member, with room for three levels of detail along the rows.
    let (width, height) = (480, 300);
    let framing = Scene::framing(&grid.bounds(), width as f32 / height as f32, grid.spacing);
    let view = View {
        camera: framing.camera,
        width,
        height,
    };
    animator.set_view(Some(view));
    let limits = *animator.instances().limits();
    let mut cpu = CpuRuntime::new(limits, Outputs::default(), 1);
    let character = throng::CharacterId(0);
    cpu.add_package(animator.package(character).unwrap());
    let placements =
        |a: &Animator| -> Vec<Affine3A> { a.members().filter_map(|m| a.placement(m)).collect() };
    let start = placements(&animator);
    // Ticks at 30 Hz, frames at 60: the CPU presents the same retained instances each frame.
    for _ in 0..20 {
        animator.tick().unwrap();
        for alpha in [0.5, 1.0] {
            animator.present(alpha).unwrap();
            cpu.present(animator.instances(), alpha, false).unwrap();
        }
    }
    let mut histogram = [0; 3];
    for level in levels(&animator) {
        histogram[level as usize] += 1;
    }
    eprintln!("members per level: {histogram:?}");
    assert!(
        histogram[0] < 24,
        "some member is posed at a coarser level: {histogram:?}"
    );
    let moved = (start.iter().zip(placements(&animator)))
        .filter(|(a, b)| a.translation.distance(b.translation) > 0.2)
        .count();
    assert!(moved >= 12, "{moved} of 24 members walked off their spot");
    animator.runtime_mut().finish().unwrap();
    let gpu = animator.runtime().readback().unwrap().remove(0);
    let package = animator.package(character).unwrap();
    let joints = package.skeletons[0].joint_count();
    let vertices: usize = package.meshes.iter().map(|m| m.positions.len()).sum();
    eprintln!(
        "compared: {} components, {} palette entries, {} skinned vertices",
        gpu.components.len(),
        gpu.palettes.len(),
        gpu.skinned.len()
    );
    assert_eq!(gpu.components.len(), 24 * joints);
    assert_eq!(
        gpu.skinned.len(),
        24 * vertices,
        "every member skinned, NaN past its level"
    );
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
            levels: levels(&animator),
            level_vertices: (animator.runtime().package(PackageId(0)).unwrap().skins[0].tiers)
                .iter()
                .skip(1)
                .map(|t| t.vertices.clone())
                .collect(),
            gpu,
            cpu: cpu.outputs()[0].clone(),
        }],
    };
    let report = parity::compare(&run, ParityPath::Interpreter);
    for stage in &report.batches[0].stages {
        eprintln!(
            "{}: {:.3e} {} at {}",
            stage.stage, stage.worst, stage.unit, stage.at
        );
    }
    assert!(report.pass, "{:#?}", report.batches[0].stages);
    let skinned = report.batches[0]
        .stages
        .iter()
        .find(|s| s.stage == "skinned position");
    assert!(skinned.is_some(), "skinned vertices were compared");
}

#[test]
fn frames_presented_between_ticks_never_change_what_control_computes() {
    let Some(ctx) = GpuContext::for_tests() else {
        return;
    };
    let (mut quiet, _) = animator(&ctx, 12);
    let (mut busy, _) = animator(&ctx, 12);
    for tick in 0..30 {
        for a in [&mut quiet, &mut busy] {
            for m in 0..12u32 {
                let speed = ((m as usize * 7 + tick) % 50) as f64 / 10.0;
                (a.set_input(MemberId(m), "speed", Value::Float(speed))).unwrap();
            }
            a.tick().unwrap();
        }
        // One animator renders three frames between ticks, the other none.
        for alpha in [0.25, 0.5, 1.0] {
            busy.present(alpha).unwrap();
        }
        assert_eq!(
            quiet.control_digest(),
            busy.control_digest(),
            "tick {tick}: presenting frames changed control"
        );
    }
    busy.runtime_mut().finish().unwrap();
}

/// One embedded frame: tick, present, prepare and a render pass into `view`, submitted.
fn frame(animator: &mut Animator, crowd: &mut CrowdPass, scene: &Scene, target: &Targets) {
    animator.tick().unwrap();
    animator.present(1.0).unwrap();
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
        depth_stencil_attachment: Some(cleared_depth(&target.depth)),
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
    // WebGPU's defaults make a context, but its 8 storage buffers per stage are fewer than the
    // widest kernel binds: the runtime says how many it needs.
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: wgpu::Limits::default(),
        ..Default::default()
    }))
    .unwrap();
    let webgpu = GpuContext::from_device(device, queue).unwrap();
    let package = throng::builtin_character().unwrap();
    let capacities = throng::gpu::Capacities::for_packages(&[&package], 4);
    let refused = throng::gpu::Runtime::new(&webgpu, capacities)
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(&refused, GpuError::AdapterLimit { what, have: 8, need, .. }
            if what.contains("storage buffers") && *need > 8),
        "{refused}"
    );
    let (mut animator, _) = animator(&ctx, 2);
    let no_member = animator.set_input(MemberId(5), "speed", Value::Float(1.0));
    assert!(matches!(no_member, Err(AnimatorError::NoMember(5))));
    let no_input = animator.set_input(MemberId(1), "jump", Value::Bool(true));
    assert!(matches!(
        no_input,
        Err(AnimatorError::Input { member: 1, .. })
    ));
    let no_index = animator.set_input_at(MemberId(1), 9, Value::Float(1.0));
    assert!(matches!(
        no_index,
        Err(AnimatorError::Input {
            member: 1,
            source: InputError::NoIndex { input: 9, .. }
        })
    ));
    let package = throng::builtin_character().unwrap();
    let tree = (throng::fixtures::CROWD_TREE, "crowd.toml");
    let options = AnimatorOptions::default();
    let no_skeleton = Animator::crowd(&ctx, package, 3, tree, &[], options);
    assert!(matches!(no_skeleton, Err(AnimatorError::NoSkeleton(3))));
}

#[test]
fn a_member_the_view_culls_is_neither_skinned_nor_drawn_yet_its_sockets_advance_each_tick() {
    let Some(ctx) = GpuContext::for_tests() else {
        return;
    };
    let mut package = throng::builtin_character().unwrap();
    let grid = Formation::new(&mut package, 0, 2).unwrap();
    let source = format!(
        "{}\n[sockets.hand]\njoint = \"hand_r\"\noffset = [-0.08, -0.025, 0.0]\n",
        throng::fixtures::CROWD_TREE
    );
    let tree = (source.as_str(), "crowd.toml");
    let options = AnimatorOptions::default();
    let mut animator =
        Animator::crowd(&ctx, package, 0, tree, &grid.placements(), options).unwrap();
    for member in 0..2 {
        let speed = Value::Float(1.4);
        animator
            .set_input(MemberId(member), "speed", speed)
            .unwrap();
    }
    let (width, height) = (320, 200);
    let framing = Scene::framing(&grid.bounds(), width as f32 / height as f32, grid.spacing);
    let camera = framing.camera;
    animator.set_view(Some(View {
        camera,
        width,
        height,
    }));
    // Member 1 far behind the eye: outside the frustum whatever it does.
    let behind = camera.eye + 50.0 * (camera.eye - camera.target);
    (animator.set_placement(MemberId(1), &Affine3A::from_translation(behind))).unwrap();
    let controller = animator.controller(throng::CharacterId(0)).unwrap();
    let socket = (controller.tree.sockets.iter())
        .position(|s| s.name == "hand")
        .expect("the socket is declared");
    let declared = controller.tree.sockets[socket].clone();
    let package = controller.package.clone();
    let extent = parity::component_extent(&package.skeletons[0]);
    let palette = package.skins.iter().map(|s| s.joints.len()).sum();
    let limits = animator.runtime().capacities().program_limits();
    let mut full = Evaluator::new(limits, package.skeletons[0].joint_count(), palette);
    let (mut moved, mut worst) = (0.0f32, 0.0f32);
    let mut last = animator.sockets(MemberId(1))[socket];
    for _ in 0..10 {
        animator.tick().unwrap();
        animator.present(1.0).unwrap();
        animator.runtime_mut().finish().unwrap();
        let seen = animator.runtime().visibility();
        assert_eq!((seen.visible, seen.skinned), (1, 1), "member 1 is culled");
        let now = animator.sockets(MemberId(1))[socket];
        moved = moved.max(now.translation.distance(last.translation));
        last = now;
        // The full-pose CPU reference of member 1's program is the socket's oracle.
        let assets = package.assets(0).unwrap();
        // The last tick's program: the frame at alpha 1.
        let program = animator
            .presented_program(MemberId(1), 1.0)
            .unwrap()
            .clone();
        full.run(&program, &assets).unwrap();
        let want =
            full.component()[declared.joint as usize] * Affine3A::from_translation(declared.offset);
        let error = now.translation.distance(want.translation);
        worst = worst.max(error);
        assert!(error <= 1e-6 * extent, "socket off by {error} m");
    }
    eprintln!(
        "culled member's socket: up to {moved:.4} m a tick, within {worst:.2e} m of the full pose"
    );
    assert!(
        moved > 1e-3,
        "the culled member's socket moved at most {moved} m a tick"
    );
}

#[test]
fn a_tree_needing_more_registers_than_the_gpu_has_is_refused_when_the_animator_is_made() {
    let Some(ctx) = GpuContext::for_tests() else {
        return;
    };
    // The crowd tree with an additive layer over idle, walk and run: a 1-D space weighs two
    // of them at once, a 2-D space three.
    let with_layer = |producer: &str| {
        format!(
            "{}\n[[regions]]\nname = \"sway\"\nblend = \"additive\"\ninitial = \"s\"\n\n[[regions.states]]\nname = \"s\"\n\n{producer}\n",
            throng::fixtures::CROWD_TREE
        )
    };
    let points = |at: [&str; 3]| {
        let clips = ["idle", "walk", "run"].iter().zip(at);
        let points: Vec<String> = clips
            .map(|(clip, at)| format!("{{ clip = \"{clip}\", at = {at} }}"))
            .collect();
        points.join(", ")
    };
    let one_d = with_layer(&format!(
        "[regions.states.blend1d]\ninput = \"speed\"\npoints = [{}]",
        points(["0.0", "1.0", "2.0"])
    ));
    let two_d = with_layer(&format!(
        "[regions.states.blend2d]\nx = \"speed\"\ny = \"speed\"\npoints = [{}]",
        points(["[0.0, 0.0]", "[1.0, 0.0]", "[0.0, 1.0]"])
    ));
    let make = |source: &str| {
        let mut package = throng::builtin_character().unwrap();
        let grid = Formation::new(&mut package, 0, 1).unwrap();
        let options = AnimatorOptions::default();
        let tree = (source, "t.toml");
        Animator::crowd(&ctx, package, 0, tree, &grid.placements(), options)
    };
    let mut fits = make(&one_d).expect("a 1-D additive layer fits the 8 registers");
    for speed in [0.5, 1.5] {
        (fits.set_input(MemberId(0), "speed", Value::Float(speed))).unwrap();
        fits.tick().unwrap();
        fits.present(1.0).unwrap();
    }
    fits.runtime_mut().finish().unwrap();
    let refused = make(&two_d)
        .err()
        .expect("a 2-D additive layer needs 9 registers");
    assert!(
        matches!(
            refused,
            AnimatorError::Gpu(GpuError::Registers {
                needed: 9,
                available: 8
            })
        ),
        "{refused}"
    );
}

#[test]
fn members_past_the_skinned_budget_are_cards_of_their_presented_clip_frame_and_placement() {
    let Some(ctx) = GpuContext::for_tests() else {
        return;
    };
    let mut package = throng::builtin_character().unwrap();
    let grid = Formation::new(&mut package, 0, 24).unwrap();
    let tree = (throng::fixtures::CROWD_TREE, "crowd.toml");
    let options = AnimatorOptions {
        skinned_budget: Some(5),
        ..AnimatorOptions::default()
    };
    let mut animator =
        Animator::crowd(&ctx, package, 0, tree, &grid.placements(), options).unwrap();
    let character = throng::CharacterId(0);
    let speed_input = (animator.controller(character).unwrap().tree)
        .input("speed")
        .unwrap();
    for member in 0..24 {
        let speed = [0.0, 0.8, 1.4, 3.0][member % 4];
        (animator.set_input_at(MemberId(member as u32), speed_input, Value::Float(speed))).unwrap();
    }
    let (width, height) = (320, 200);
    let framing = Scene::framing(&grid.bounds(), width as f32 / height as f32, grid.spacing);
    animator.set_view(Some(View {
        camera: framing.camera,
        width,
        height,
    }));
    let impostor = animator.bake_far_tier(character).unwrap().impostor.clone();
    let package = animator.package(character).unwrap().clone();
    let alpha = 0.5;
    let mut compared = 0;
    for _ in 0..6 {
        animator.tick().unwrap();
        animator.present(alpha).unwrap();
        animator.runtime_mut().finish().unwrap();
        let v = animator.runtime().visibility();
        assert_eq!(v.skinned, 5, "{v:?}");
        assert!(v.visible > 5, "the budget must bind: {v:?}");
        assert_eq!((v.carded, v.drawn), (v.visible - 5, v.visible), "{v:?}");
        let cards = animator.runtime().cards().unwrap();
        assert_eq!(cards.len() as u64, v.carded);
        for card in &cards {
            // The CPU's card of the member (as `Animator::cards` makes the far tier's): the
            // frame of its presented program's first clip, at its presented placement.
            let program = (animator.presented_program(MemberId(card.slot), alpha))
                .unwrap()
                .clone();
            let sample = (program.ops.iter())
                .find(|o| o.code == throng::cpu_ref::program::op::SAMPLE)
                .unwrap();
            let frame = impostor
                .card_frame(&package, sample.a, f64::from(sample.time))
                .unwrap_or_default();
            let placement = animator.instances().present_placement(card.slot, alpha);
            let want = throng::gpu::impostor::Card::new(&impostor, &placement, card.slot, frame);
            let clip = &package.clips[sample.a as usize];
            assert_eq!(
                card.first, want.first,
                "member {}: clip {} time {} duration {} ops {:?}",
                card.slot, sample.a, sample.time, clip.duration, program.ops
            );
            assert!(
                (card.blend - want.blend).abs() < 1e-4
                    && (want.blend < 1e-3 || card.next == want.next),
                "member {}: {card:?} against {want:?}",
                card.slot
            );
            let centre = glam::Vec3::from(card.centre).distance(want.centre.into());
            assert!(
                centre < 1e-4 && (card.scale - want.scale).abs() < 1e-5,
                "{card:?} against {want:?}"
            );
            compared += 1;
        }
    }
    eprintln!("{compared} cards compared with the CPU's");
}

#[test]
fn far_tier_cards_are_made_only_for_members_whose_cards_meet_the_view() {
    let Some(ctx) = GpuContext::for_tests() else {
        return;
    };
    let mut package = throng::builtin_character().unwrap();
    let grid = Formation::new(&mut package, 0, 12).unwrap();
    let tree = (throng::fixtures::CROWD_TREE, "crowd.toml");
    let (width, height) = (320, 200);
    let framing = Scene::framing(&grid.bounds(), width as f32 / height as f32, grid.spacing);
    let toward = framing.camera;
    // The same eye looking the other way: no member is in front of it.
    let away = throng::gpu::raster::Camera {
        target: toward.eye + (toward.eye - toward.target),
        ..toward
    };
    let mut cards = Vec::new();
    for cull in [true, false] {
        let options = AnimatorOptions {
            // Every member is shorter than this on screen: all of them are cards alone.
            far_height: Some(1e6),
            cull,
            ..AnimatorOptions::default()
        };
        let mut animator =
            Animator::crowd(&ctx, package.clone(), 0, tree, &grid.placements(), options).unwrap();
        animator.bake_far_tier(throng::CharacterId(0)).unwrap();
        for camera in [toward, away] {
            animator.set_view(Some(View {
                camera,
                width,
                height,
            }));
            animator.tick().unwrap();
            animator.present(1.0).unwrap();
            animator.runtime_mut().finish().unwrap();
            cards.push(animator.cards().len());
        }
    }
    // Culling: all 12 framed, none looked away from; without it, all 12 either way.
    assert_eq!(cards, [12, 0, 12, 12]);
}
