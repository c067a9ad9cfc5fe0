//! Update-rate LOD: the stagger spreads a rate's instances evenly over frames, and a kept
//! instance shows its last pose; a pose at a given control time does not depend on the phase.

use glam::{Affine3A, Vec3};
use throng_cook::{cook, import_slice, Profile};
use throng_cpu_ref::stagger::Stagger;
use throng_cpu_ref::{
    Batch, CpuRuntime, FrameError, Instance, Outputs, Pose, PoseOp, Program, ProgramLimits,
};

#[test]
fn every_instance_is_due_on_its_first_frame_then_once_every_rate_frames() {
    let mut stagger = Stagger::new();
    let n = 3000;
    assert!((0..n).all(|id| stagger.due(id, 3)), "first frame: all due");
    let mut last = vec![0usize; n];
    let mut per_frame = Vec::new();
    for frame in 1..=12 {
        let mut due = 0;
        for (id, last) in last.iter_mut().enumerate() {
            if stagger.due(id, 3) {
                assert!(
                    *last == 0 || frame - *last == 3,
                    "instance {id}: due at {last} then {frame}"
                );
                *last = frame;
                due += 1;
            }
        }
        per_frame.push(due);
    }
    eprintln!("due per frame at rate 3 over {n} instances: {per_frame:?}");
    for &due in &per_frame {
        assert!((900..=1100).contains(&due), "{per_frame:?}");
    }
    assert!(
        last.iter().all(|&f| f >= 10),
        "every instance was due lately"
    );
}

#[test]
fn a_lower_rate_takes_effect_at_once_and_forget_makes_everyone_due() {
    let mut stagger = Stagger::new();
    for id in 0..100 {
        stagger.due(id, 4);
    }
    assert!((0..100).all(|id| stagger.due(id, 1)), "rate 1: every frame");
    stagger.forget();
    assert!((0..100).all(|id| stagger.due(id, 4)));
}

fn walk(time: f32) -> Program {
    Program {
        ops: vec![
            PoseOp::sample(0, 0, time),
            PoseOp::to_component(0),
            PoseOp::palette(0),
        ],
        weights: vec![],
    }
}

#[test]
fn a_pose_at_a_control_time_does_not_depend_on_the_stagger_phase() {
    let imported = import_slice(&throng_fixtures::character_glb(), "character.glb").unwrap();
    let (package, _) = cook(&imported, &Profile::DEFAULT).unwrap();
    let mut runtime = CpuRuntime::new(ProgramLimits::default(), Outputs::default(), 1);
    let id = runtime.add_package(&package);
    let mut stagger = Stagger::new();
    // Instance 0 is always evaluated; 1..=6 are staggered at rate 3 with their own phases.
    let mut last_palette: Vec<Vec<Affine3A>> = vec![Vec::new(); 7];
    let mut kept = 0;
    for frame in 0..9 {
        let t = frame as f32 / 30.0;
        let program = walk(t);
        let due: Vec<bool> = (0..7).map(|i| i == 0 || stagger.due(i, 3)).collect();
        let instances: Vec<Instance> = (0..7)
            .map(|i| Instance {
                pose: if due[i] {
                    Pose::Program(&program)
                } else {
                    Pose::Keep
                },
                placement: Affine3A::from_translation(Vec3::new(i as f32, 0.0, t)),
            })
            .collect();
        let batch = Batch {
            package: id,
            skeleton: 0,
            skin: Some(0),
            instances: &instances,
        };
        runtime.frame(&[batch]).unwrap();
        let out = &runtime.outputs()[0];
        let n = out.palette_len;
        let palette = |i: usize| out.palettes[i * n..(i + 1) * n].to_vec();
        for i in 1..7 {
            if due[i] {
                assert_eq!(
                    palette(i),
                    palette(0),
                    "frame {frame}: instance {i} at time {t}"
                );
                last_palette[i] = palette(i);
            } else {
                assert_eq!(
                    palette(i),
                    last_palette[i],
                    "frame {frame}: kept instance {i}"
                );
                kept += 1;
            }
            // Skinned at this frame's placement either way.
            let b = out.bounds[i];
            assert!(
                b.min.z <= t && t <= b.max.z,
                "frame {frame}: instance {i} box {b:?}"
            );
        }
    }
    assert!(kept >= 30, "{kept} kept instance-frames");
}

#[test]
fn keeping_a_pose_the_last_frame_did_not_have_is_refused() {
    let imported = import_slice(&throng_fixtures::character_glb(), "character.glb").unwrap();
    let (package, _) = cook(&imported, &Profile::DEFAULT).unwrap();
    let mut runtime = CpuRuntime::new(ProgramLimits::default(), Outputs::default(), 1);
    let id = runtime.add_package(&package);
    let program = walk(0.1);
    let keep = [Instance {
        pose: Pose::Keep,
        placement: Affine3A::IDENTITY,
    }];
    let batch = |instances| Batch {
        package: id,
        skeleton: 0,
        skin: Some(0),
        instances,
    };
    let refused = |r: Result<(), FrameError>| {
        assert!(
            matches!(&r, Err(FrameError::BadInstance { what, .. }) if what.contains("keeps its last pose")),
            "{r:?}"
        )
    };
    refused(runtime.frame(&[batch(&keep)]));
    let two = [Instance {
        pose: Pose::Program(&program),
        placement: Affine3A::IDENTITY,
    }; 2];
    runtime.frame(&[batch(&two)]).unwrap();
    // One instance where the last frame had two: its slots changed.
    refused(runtime.frame(&[batch(&keep)]));
}
