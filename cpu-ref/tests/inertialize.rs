//! Inertialization per joint: continuity at the switch (pose and velocity), zero from the
//! duration on, and finite results at the quaternion edge cases (near 180°, q and -q, zero
//! durations), over random inputs.

mod common;

use glam::{Quat, Vec3};
use proptest::prelude::*;
use throng_cpu_ref::inertialize::{capture_joint, inertialize_joint};
use throng_cpu_ref::Trs;

fn quat() -> impl Strategy<Value = Quat> {
    (
        -1.0f32..1.0,
        -1.0f32..1.0,
        -1.0f32..1.0,
        -1.0f32..1.0,
        any::<bool>(),
    )
        .prop_filter_map("non-zero", |(x, y, z, w, flip)| {
            let q = Quat::from_xyzw(x, y, z, w);
            (q.length() > 0.1).then(|| if flip { -q.normalize() } else { q.normalize() })
        })
}

fn trs() -> impl Strategy<Value = Trs> {
    (
        prop::array::uniform3(-2.0f32..2.0),
        quat(),
        prop::array::uniform3(0.5f32..2.0),
    )
        .prop_map(|(t, q, s)| Trs {
            translation: Vec3::from(t),
            rotation: q,
            scale: Vec3::from(s),
        })
}

fn close(a: &Trs, b: &Trs, tol: f32) -> bool {
    (a.translation - b.translation).abs().max_element() <= tol
        && (a.scale - b.scale).abs().max_element() <= tol
        && a.rotation.dot(b.rotation).abs() >= 1.0 - tol
}

/// `source` moving at constant velocity toward `source_next` over `dt`.
fn step(a: &Trs, b: &Trs, t: f32) -> Trs {
    Trs {
        translation: a.translation.lerp(b.translation, t),
        rotation: a.rotation.slerp(b.rotation, t),
        scale: a.scale.lerp(b.scale, t),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn at_the_switch_the_pose_is_the_source(
        src in trs(), prev in trs(), dst in trs(), prev_dst in trs(), duration in 0.01f32..1.0,
    ) {
        let o = capture_joint(&src, &prev, &dst, &prev_dst, 1.0 / 60.0);
        let x = inertialize_joint(&dst, &o, 0.0, duration);
        prop_assert!(close(&x, &src, 2e-5), "{x:?} vs {src:?}");
    }

    #[test]
    fn from_the_duration_on_the_pose_is_the_destination(
        src in trs(), prev in trs(), dst in trs(), duration in 0.0f32..1.0, extra in 0.0f32..2.0,
    ) {
        let o = capture_joint(&src, &prev, &dst, &dst, 1.0 / 30.0);
        let x = inertialize_joint(&dst, &o, duration + extra, duration);
        prop_assert!(close(&x, &dst, 1e-6), "{x:?} vs {dst:?}");
    }

    #[test]
    fn the_first_frames_move_with_the_source(
        src in trs(), dst in trs(), drift in trs(), duration in 0.2f32..1.0,
    ) {
        // The source one tick earlier was a little way toward `drift`; the destination is
        // still. Right after the switch the pose moves at the source's velocity: the slope
        // over 0.1 ms (where the quintic's curvature adds at most 0.5 · a0 · h) matches it.
        let dt = 1.0 / 60.0;
        let prev = step(&src, &drift, 0.01);
        let v = (src.translation - prev.translation) / dt;
        let vs = (src.scale - prev.scale) / dt;
        let o = capture_joint(&src, &prev, &dst, &dst, dt);
        let h = 1e-4;
        let a = inertialize_joint(&dst, &o, 0.0, duration);
        let b = inertialize_joint(&dst, &o, h, duration);
        let slope = (b.translation - a.translation) / h;
        let slope_s = (b.scale - a.scale) / h;
        let tol = |x: Vec3| 0.02 * x.abs().max_element() + 0.1;
        prop_assert!((slope - v).abs().max_element() <= tol(v), "{slope} vs {v}");
        prop_assert!((slope_s - vs).abs().max_element() <= tol(vs), "{slope_s} vs {vs}");
    }

    #[test]
    fn edge_cases_stay_finite(
        dst in trs(), axis in prop::array::uniform3(-1.0f32..1.0), eps in 0.0f32..1e-3,
        duration in prop_oneof![Just(0.0f32), Just(1e-30f32), 0.0f32..1.0],
        elapsed in prop_oneof![Just(0.0f32), 0.0f32..2.0],
    ) {
        let axis = Vec3::from(axis).try_normalize().unwrap_or(Vec3::X);
        // Offsets near 180°, on both hemispheres.
        for angle in [std::f32::consts::PI - eps, std::f32::consts::PI, -std::f32::consts::PI + eps] {
            let q = Quat::from_axis_angle(axis, angle) * dst.rotation;
            for src_q in [q, -q] {
                let src = Trs { rotation: src_q, ..dst };
                let o = capture_joint(&src, &dst, &dst, &src, 1.0 / 60.0);
                let x = inertialize_joint(&dst, &o, elapsed, duration);
                prop_assert!(x.is_finite(), "{x:?}");
                prop_assert!((x.rotation.length() - 1.0).abs() < 1e-4);
            }
        }
    }
}

mod frames {
    use glam::{Affine3A, Quat};
    use throng_cpu_ref::{
        Batch, CpuRuntime, FrameError, Instance, Outputs, Package, PackageId, Pose, PoseOp,
        Program, ProgramLimits,
    };

    use super::common::{branching_rig, pose_clip, trs};

    /// The branching rig with two still poses as clips 0 (its rest) and 1 (every joint turned).
    fn package() -> Package {
        let skeleton = branching_rig();
        let turned: Vec<_> = skeleton
            .rest
            .iter()
            .map(|r| {
                trs(
                    r.translation.into(),
                    Quat::from_rotation_z(0.7) * r.rotation,
                    [1.0; 3],
                )
            })
            .collect();
        let clips = vec![pose_clip(&skeleton.rest, 0), pose_clip(&turned, 0)];
        Package {
            skeletons: vec![skeleton],
            skins: vec![],
            meshes: vec![],
            clips,
            masks: vec![],
            impostors: vec![],
            motion_databases: Vec::new(),
            scene: Default::default(),
            curves: Default::default(),
        }
    }

    /// Switch from clip 1 to clip 0 on slot `slot`: the capture frame's program.
    fn capture(slot: u32) -> Program {
        Program {
            ops: vec![
                PoseOp::sample(0, 0, 0.0),
                PoseOp::sample(1, 1, 0.0),
                PoseOp::sample(2, 1, 0.0),
                PoseOp::sample(3, 0, 0.0),
                PoseOp::capture(0, 1, 2, 3, slot, 1.0 / 60.0),
                PoseOp::inertialize(0, slot, 0.0, 0.5),
                PoseOp::to_component(0),
            ],
            weights: vec![],
        }
    }

    fn decay(slot: u32, elapsed: f32) -> Program {
        Program {
            ops: vec![
                PoseOp::sample(0, 0, 0.0),
                PoseOp::inertialize(0, slot, elapsed, 0.5),
                PoseOp::to_component(0),
            ],
            weights: vec![],
        }
    }

    fn frame(rt: &mut CpuRuntime, programs: &[Program], parallel: bool) -> Result<(), FrameError> {
        let instances: Vec<Instance> = programs
            .iter()
            .map(|p| Instance {
                pose: Pose::Program(p),
                placement: Affine3A::IDENTITY,
            })
            .collect();
        let batch = [Batch {
            package: PackageId(0),
            skeleton: 0,
            skin: None,
            instances: &instances,
        }];
        if parallel {
            rt.frame_parallel(&batch)
        } else {
            rt.frame(&batch)
        }
    }

    fn runtime(threads: usize) -> CpuRuntime {
        let limits = ProgramLimits {
            history_slots: 4,
            ..Default::default()
        };
        let mut rt = CpuRuntime::new(
            limits,
            Outputs {
                locals: true,
                ..Default::default()
            },
            threads,
        );
        rt.add_package(&package());
        rt
    }

    #[test]
    fn history_outlives_the_frame_that_captured_it_serial_and_parallel_alike() {
        let (mut serial, mut parallel) = (runtime(1), runtime(3));
        let first: Vec<Program> = (0..4).map(capture).collect();
        let later: Vec<Program> = (0..4).map(|s| decay(s, 0.1)).collect();
        for (rt, par) in [(&mut serial, false), (&mut parallel, true)] {
            frame(rt, &first, par).unwrap();
            // At the switch: the source pose (clip 1).
            let turned = package().clips[1].values[3..7].to_vec();
            let local = rt.outputs()[0].locals[0].rotation.to_array();
            for (a, b) in local.iter().zip(&turned) {
                assert!((a - b).abs() < 1e-5, "{local:?} vs {turned:?}");
            }
            frame(rt, &later, par).unwrap();
        }
        assert_eq!(serial.history(), parallel.history());
        let (s, p) = (&serial.outputs()[0], &parallel.outputs()[0]);
        assert_eq!(s.locals, p.locals);
        // A tenth of a second into the decay the pose is between the two clips.
        let rest = package().skeletons[0].rest[0].rotation;
        let angle = s.locals[0].rotation.angle_between(rest);
        assert!(angle > 0.05 && angle < 0.7, "{angle}");
    }

    #[test]
    fn two_instances_of_a_frame_may_not_share_a_slot() {
        let mut rt = runtime(1);
        let err = frame(&mut rt, &[capture(2), decay(2, 0.1)], false).unwrap_err();
        assert!(err.to_string().contains("history slot 2"), "{err}");
        let err = frame(&mut rt, &[decay(4, 0.0)], false).unwrap_err();
        assert!(err.to_string().contains("outside the 4 slots"), "{err}");
    }
}
