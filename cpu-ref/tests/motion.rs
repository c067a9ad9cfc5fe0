//! Motion vectors on the CPU reference: a slot's previous positions are last frame's skinned
//! positions, and its history resets on its first frame, a new batch layout, a skeleton LOD
//! change and a teleport.

use glam::{Affine3A, Vec3};
use throng_cook::{cook, import_slice, Profile};
use throng_cpu_ref::{
    Batch, CpuRuntime, Instance, Outputs, Package, Pose, PoseOp, Program, ProgramLimits,
};

fn character() -> Package {
    let imported = import_slice(&throng_fixtures::character_glb(), "character.glb").unwrap();
    cook(&imported, &Profile::DEFAULT).unwrap().0
}

fn walk(time: f32) -> Program {
    Program {
        ops: vec![PoseOp::sample(0, 1, time), PoseOp::to_component(0)],
        weights: vec![],
    }
}

fn at(x: f32) -> Affine3A {
    Affine3A::from_translation(Vec3::new(x, 0.0, 0.0))
}

/// Runs one frame of `instances`; returns each instance's skinned and previous positions.
fn frame(cpu: &mut CpuRuntime, instances: &[Instance]) -> (Vec<Vec<Vec3>>, Vec<Vec<Vec3>>) {
    let batch = Batch {
        package: throng_cpu_ref::PackageId(0),
        skeleton: 0,
        skin: Some(0),
        instances,
    };
    cpu.frame(&[batch]).unwrap();
    let out = &cpu.outputs()[0];
    let v = out.vertex_count;
    let split = |xs: Vec<Vec3>| xs.chunks(v).map(<[Vec3]>::to_vec).collect();
    (
        split(out.skinned.iter().map(|s| s.position).collect()),
        split(out.previous.clone()),
    )
}

fn program(p: &Program, x: f32) -> Instance<'_> {
    Instance {
        pose: Pose::Program(p),
        placement: at(x),
    }
}

#[test]
fn previous_positions_are_last_frames_and_the_first_frame_has_no_motion() {
    let package = character();
    let outputs = Outputs {
        motion: true,
        ..Outputs::default()
    };
    let mut cpu = CpuRuntime::new(ProgramLimits::default(), outputs, 1);
    cpu.add_package(&package);
    let (p0, p1) = (walk(0.1), walk(0.2));
    let (first, previous) = frame(&mut cpu, &[program(&p0, 0.0), program(&p0, 3.0)]);
    assert_eq!(previous, first, "first frame: no motion");
    let (second, previous) = frame(&mut cpu, &[program(&p1, 0.5), program(&p1, 3.0)]);
    assert_eq!(
        previous, first,
        "the last frame's skinned positions, bit for bit"
    );
    assert_ne!(second, first, "the clip and the placement moved");
    // A kept pose moves by its placement only.
    let kept = [
        Instance {
            pose: Pose::Keep,
            placement: at(1.0),
        },
        program(&p1, 3.0),
    ];
    let (third, previous) = frame(&mut cpu, &kept);
    assert_eq!(previous, second);
    for (a, b) in third[0].iter().zip(&second[0]) {
        assert!((*a - *b - Vec3::new(0.5, 0.0, 0.0)).length() < 1e-5);
    }
}

#[test]
fn a_lod_change_a_new_layout_and_a_teleport_reset_the_history() {
    let package = character();
    assert!(!package.skeletons[0].lods.is_empty());
    let outputs = Outputs {
        motion: true,
        ..Outputs::default()
    };
    let mut cpu = CpuRuntime::new(ProgramLimits::default(), outputs, 1);
    cpu.add_package(&package);
    let (p0, p1) = (walk(0.1), walk(0.3));
    let three = |p| [program(p, 0.0), program(p, 3.0), program(p, 6.0)];
    frame(&mut cpu, &three(&p0));
    // Instance 0 changes level, instance 1 is teleported, instance 2 carries on.
    cpu.reset_motion(0, 1);
    let moved = [
        Instance {
            pose: Pose::Lod(&p1, 1),
            placement: at(0.0),
        },
        program(&p1, 30.0),
        program(&p1, 6.0),
    ];
    let (now, previous) = frame(&mut cpu, &moved);
    assert_eq!(previous[0], now[0], "a LOD change resets");
    assert_eq!(previous[1], now[1], "a teleport resets");
    assert_ne!(previous[2], now[2], "the others keep their history");
    // The mark was for one frame only, and the level stays 1: history again.
    let next = [
        Instance {
            pose: Pose::Lod(&p0, 1),
            placement: at(0.0),
        },
        program(&p0, 30.0),
        program(&p0, 6.0),
    ];
    let (later, previous) = frame(&mut cpu, &next);
    assert_eq!(previous, now, "every slot's previous is the last frame's");
    assert_ne!(later, now);
    let (now, previous) = frame(&mut cpu, &three(&p1)[..2]);
    assert_eq!(previous, now, "a new layout resets every slot");
}
