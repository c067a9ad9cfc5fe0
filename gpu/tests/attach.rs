//! Attachments (docs/gpu.md, "Attachments"): props placed on the GPU from each skinned
//! instance's palette sit where the CPU reference's component transform puts their joint, on
//! every skinned instance and only those (culled ones and batches of another skin get none);
//! attachments that cannot be placed are refused by name; the crowd pass draws the props.

mod common;

use glam::{Affine3A, Quat, Vec3};
use throng_cpu_ref::bounds::{Bounds, Frustum};
use throng_cpu_ref::{CpuRuntime, Outputs, Package, PoseOp, Program};
use throng_fixtures::SplitMix64;
use throng_gpu::raster::{Camera, Raster, Scene};
use throng_gpu::{
    Attachment, Batch, Capacities, GpuError, Instance, PackageId, Pose, PropMesh, Runtime,
};

/// DESIGN.md §9: transforms within 1e-4 of the skeleton extent (translations) and 1e-4 in
/// each element of the linear part (rotations).
const TOLERANCE: f32 = 1e-4;

fn joint(package: &Package, name: &str) -> u32 {
    let names = &package.skeletons[0].names;
    names.iter().position(|n| n == name).expect(name) as u32
}

/// A sword-like box in the right hand and a hat-like box on the head.
fn attachments(package: &Package, id: PackageId) -> Vec<Attachment> {
    let blade = PropMesh::boxes(
        &[(Vec3::new(0.0, 0.0, 0.4), Vec3::new(0.02, 0.005, 0.4))],
        [0.7, 0.7, 0.75],
    );
    let hat = PropMesh::boxes(
        &[(Vec3::ZERO, Vec3::new(0.12, 0.04, 0.12))],
        [0.8, 0.1, 0.1],
    );
    vec![
        Attachment {
            package: id,
            skin: 0,
            joint: joint(package, "hand_r"),
            offset: Affine3A::from_rotation_translation(
                Quat::from_rotation_x(0.3),
                Vec3::new(0.08, -0.03, 0.0),
            ),
            mesh: blade,
        },
        Attachment {
            package: id,
            skin: 0,
            joint: joint(package, "head"),
            offset: Affine3A::from_translation(Vec3::new(0.0, 0.2, 0.0)),
            mesh: hat,
        },
    ]
}

/// `n` one-clip programs of the character's clips at seeded times, on a grid at seeded yaws.
fn crowd(package: &Package, n: usize, rng: &mut SplitMix64) -> (Vec<Program>, Vec<Affine3A>) {
    let clips = ["walk", "run", "idle"].map(|c| package.find_clip(c).expect("clip") as u32);
    (0..n)
        .map(|k| {
            let clip = clips[k % clips.len()];
            let time = rng.range(0.0, package.clips[clip as usize].duration as f32);
            let program = Program {
                ops: vec![
                    PoseOp::sample(0, clip, time),
                    PoseOp::to_component(0),
                    PoseOp::palette(0),
                ],
                weights: vec![],
            };
            let at = Vec3::new((k % 6) as f32 * 2.5 - 6.0, 0.0, (k / 6) as f32 * 2.5 - 4.0);
            let yaw = Quat::from_rotation_y(rng.range(0.0, std::f32::consts::TAU));
            (program, Affine3A::from_rotation_translation(yaw, at))
        })
        .unzip()
}

fn instances<'a>(programs: &'a [Program], placements: &[Affine3A]) -> Vec<Instance<'a>> {
    (programs.iter().zip(placements))
        .map(|(p, &placement)| Instance {
            pose: Pose::Program(p),
            placement,
        })
        .collect()
}

/// Worst translation error over the extent and worst linear-part element error of `got`
/// against `want`.
fn errors(got: &Affine3A, want: &Affine3A, extent: f32) -> (f32, f32) {
    let t = (got.translation - want.translation).abs().max_element() / extent;
    let m = (got.matrix3 - want.matrix3).to_cols_array();
    (t, m.iter().fold(0.0f32, |a, x| a.max(x.abs())))
}

#[test]
fn props_sit_on_their_joints_as_the_cpu_reference_poses_them_on_every_skinned_instance() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let chain = common::chain_package(6);
    let mut rng = SplitMix64::new(41);
    let (programs, placements) = crowd(&package, 24, &mut rng);
    let people = instances(&programs, &placements);
    let chain_program = Program {
        ops: vec![
            PoseOp::sample(0, 0, 0.1),
            PoseOp::to_component(0),
            PoseOp::palette(0),
        ],
        weights: vec![],
    };
    let chains: Vec<Instance> = (0..3)
        .map(|k| Instance {
            pose: Pose::Program(&chain_program),
            placement: Affine3A::from_translation(Vec3::new(k as f32, 0.0, 8.0)),
        })
        .collect();
    let capacities = Capacities::for_packages(&[&package, &chain], 32);
    let mut gpu = Runtime::new(&ctx, capacities).unwrap();
    let id = gpu.add_package(&package).unwrap();
    let chain_id = gpu.add_package(&chain).unwrap();
    let list = attachments(&package, id);
    gpu.set_attachments(&list).unwrap();
    let batch = |package, instances| Batch {
        package,
        skeleton: 0,
        skin: Some(0),
        instances,
    };
    let report = gpu
        .frame(&[batch(id, &people[..]), batch(chain_id, &chains[..])])
        .unwrap();
    assert_eq!(
        report.attachment_dispatches, 1,
        "one dispatch for every prop"
    );
    gpu.finish().unwrap();

    let mut cpu = CpuRuntime::new(Default::default(), Outputs::default(), 1);
    let cpu_id = cpu.add_package(&package);
    cpu.frame(&[batch(cpu_id, &people[..])]).unwrap();
    let out = &cpu.outputs()[0];
    let joints = out.joints;
    let rest = Bounds::of_points(
        out.components[..joints]
            .iter()
            .map(|c| c.translation.into()),
    );
    let extent = (rest.max - rest.min).length();
    let props = gpu.read_props().unwrap();
    assert_eq!(props.len(), list.len());
    let (mut worst_t, mut worst_m) = (0.0f32, 0.0f32);
    for (a, placed) in list.iter().zip(&props) {
        let mut slots: Vec<u32> = placed.iter().map(|p| p.slot).collect();
        slots.sort_unstable();
        assert_eq!(
            slots,
            (0..27).collect::<Vec<u32>>(),
            "every skinned instance"
        );
        for p in placed {
            let (slot, m) = (p.slot as usize, p.transform);
            if slot >= people.len() {
                assert!(m.is_none(), "a chain (another package) carries no prop");
                continue;
            }
            let m = m.expect("the character's instances carry the prop");
            let want =
                placements[slot] * out.components[slot * joints + a.joint as usize] * a.offset;
            let (t, r) = errors(&m, &want, extent);
            (worst_t, worst_m) = (worst_t.max(t), worst_m.max(r));
        }
    }
    eprintln!("worst prop error: translation {worst_t:.2e} of the extent, linear {worst_m:.2e}");
    assert!(worst_t <= TOLERANCE && worst_m <= TOLERANCE);

    // Culled instances carry none: the props are exactly the skinned instances'.
    let camera = Camera {
        eye: Vec3::new(-12.0, 4.0, 8.0),
        target: Vec3::new(-4.0, 0.5, -2.0),
        fov_y: 0.5,
        near: 0.1,
        far: 40.0,
    };
    gpu.set_frustum(Some(Frustum::from_view_proj(&camera.view_proj(1.5))));
    gpu.frame(&[batch(id, &people[..])]).unwrap();
    gpu.finish().unwrap();
    let skinned = gpu.skinned_slots().unwrap().remove(0);
    assert!(
        !skinned.is_empty() && skinned.len() < people.len(),
        "{skinned:?}"
    );
    for placed in gpu.read_props().unwrap() {
        let mut slots: Vec<u32> = placed.iter().map(|p| p.slot).collect();
        slots.sort_unstable();
        assert_eq!(slots, skinned);
        assert!(placed.iter().all(|p| p.transform.is_some()));
    }
}

#[test]
fn attachments_that_cannot_be_placed_are_refused_by_name_and_change_nothing() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let mut gpu = Runtime::new(&ctx, Capacities::for_packages(&[&package], 4)).unwrap();
    let id = gpu.add_package(&package).unwrap();
    let good = attachments(&package, id);
    gpu.set_attachments(&good).unwrap();
    let generation = gpu.attachment_generation();
    let refused = |gpu: &mut Runtime, list: &[Attachment], says: &str| {
        let err = gpu.set_attachments(list).expect_err(says);
        let text = err.to_string();
        assert!(text.contains(says), "{text}");
        assert_eq!(gpu.attachments(), good, "{says}: the attachments stay");
        assert_eq!(gpu.attachment_generation(), generation);
        err
    };
    let mut bad = good.clone();
    bad[1].joint = 400;
    refused(
        &mut gpu,
        &bad,
        "attachment 1: skin 0 has 50 joints, no joint 400",
    );
    let mut bad = good.clone();
    bad[0].package = PackageId(3);
    refused(&mut gpu, &bad, "attachment 0: package 3 is not resident");
    let mut bad = good.clone();
    bad[0].skin = 2;
    refused(&mut gpu, &bad, "the package has no skin 2");
    let mut bad = good.clone();
    bad[1].mesh.indices[5] = 9_999;
    refused(&mut gpu, &bad, "index 9999 is past its 24 vertices");
    let mut bad = good.clone();
    bad[0].mesh.normals.pop();
    refused(&mut gpu, &bad, "24 positions and 23 normals");
    let mut bad = good.clone();
    bad[0].offset.translation.x = f32::NAN;
    refused(&mut gpu, &bad, "not finite");
    let many = vec![good[0].clone(); throng_gpu::attach::MAX_ATTACHMENTS + 1];
    let err = refused(&mut gpu, &many, "attachments");
    assert!(
        matches!(err, GpuError::Capacity { needed: 17, .. }),
        "{err}"
    );
    gpu.set_attachments(&[]).unwrap();
    assert!(gpu.attachments().is_empty());
}

#[test]
fn the_crowd_pass_draws_each_prop_in_its_colour_and_nothing_without_attachments() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let mut gpu = Runtime::new(&ctx, Capacities::for_packages(&[&package], 2)).unwrap();
    let id = gpu.add_package(&package).unwrap();
    let idle = package.find_clip("idle").unwrap() as u32;
    let program = Program {
        ops: vec![
            PoseOp::sample(0, idle, 0.3),
            PoseOp::to_component(0),
            PoseOp::palette(0),
        ],
        weights: vec![],
    };
    let people = [Instance {
        pose: Pose::Program(&program),
        placement: Affine3A::IDENTITY,
    }];
    let batches = [Batch {
        package: id,
        skeleton: 0,
        skin: Some(0),
        instances: &people,
    }];
    let mut raster = Raster::new(&ctx, 160, 120).unwrap();
    let crowd = Bounds {
        min: Vec3::new(-0.8, 0.0, -0.5),
        max: Vec3::new(0.8, 2.2, 0.5),
    };
    let scene = Scene {
        ground: None,
        ..Scene::framing(&crowd, raster.aspect(), 1.0)
    };
    let mut render = |gpu: &mut Runtime| {
        gpu.frame(&batches).unwrap();
        let report = raster.render(gpu, &scene).unwrap();
        gpu.finish().unwrap();
        raster.finish().unwrap();
        (report.draws, raster.read_image().unwrap())
    };
    let (plain_draws, plain) = render(&mut gpu);
    let hat = PropMesh::boxes(&[(Vec3::ZERO, Vec3::new(0.2, 0.08, 0.2))], [0.9, 0.0, 0.0]);
    let attachment = Attachment {
        package: id,
        skin: 0,
        joint: joint(&package, "head"),
        offset: Affine3A::from_translation(Vec3::new(0.0, 0.25, 0.0)),
        mesh: hat,
    };
    gpu.set_attachments(&[attachment]).unwrap();
    let (draws, with_hat) = render(&mut gpu);
    assert_eq!(draws, plain_draws + 1, "one draw for the attachment");
    let changed: Vec<[u8; 4]> = (0..with_hat.height)
        .flat_map(|y| (0..with_hat.width).map(move |x| (x, y)))
        .filter(|&(x, y)| plain.pixel(x, y) != with_hat.pixel(x, y))
        .filter_map(|(x, y)| with_hat.pixel(x, y))
        .collect();
    let red = changed
        .iter()
        .filter(|p| u32::from(p[0]) > 2 * (u32::from(p[1]) + u32::from(p[2])))
        .count();
    eprintln!("{} pixels changed, {red} of them red", changed.len());
    assert!(
        changed.len() >= 40,
        "the hat shows: {} pixels",
        changed.len()
    );
    assert!(
        red * 10 >= changed.len() * 8,
        "the changed pixels are the hat's red"
    );
    gpu.set_attachments(&[]).unwrap();
    let (draws, without) = render(&mut gpu);
    assert_eq!(draws, plain_draws);
    assert_eq!(without.rgba, plain.rgba, "no attachments, no props");
}
