//! Spring chains (issue 12): energy does not grow without input, large frame times and
//! teleports stay bounded, resets happen as stated, invalid input is refused.

mod ik_support;

use glam::{Quat, Vec3};
use ik_support::{affine_diff, Posed};
use throng_cpu_ref::ik::spring::{MAX_SUBSTEPS, RESET_LENGTHS};
use throng_cpu_ref::ik::{update_spring, IkError, Spring, SpringState};
use throng_cpu_ref::Trs;

/// A five-segment tail sticking out along +Z, 0.1 long per segment.
fn tail() -> (Posed, Vec<usize>) {
    let p = Posed::chain(
        Trs::IDENTITY,
        &[Vec3::new(0.0, 0.0, 0.1); 5],
        &[Quat::IDENTITY; 6],
    );
    (p, (0..6).collect())
}

/// Each segment's animated target from the simulated starts (what the spring pulls toward).
fn targets(animated: &Posed, state: &SpringState, joints: &[usize]) -> Vec<Vec3> {
    let mut start = animated.at(joints[0]);
    (0..joints.len() - 1)
        .map(|i| {
            let t = start + (animated.at(joints[i + 1]) - animated.at(joints[i]));
            start = state.endpoint[i];
            t
        })
        .collect()
}

#[test]
fn without_input_the_energy_does_not_grow() {
    let (animated, joints) = tail();
    let mut state = SpringState::default();
    let gravity = Spring::new(60.0, 2.0, Vec3::new(0.0, -9.81, 0.0));
    for _ in 0..30 {
        let mut p = animated.clone();
        update_spring(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            &joints,
            &gravity,
            &mut state,
            1.0 / 60.0,
        )
        .unwrap();
    }
    // Gravity off: the sagging tail swings back with nothing driving it.
    let free = Spring::new(60.0, 2.0, Vec3::ZERO);
    let start = state.energy(&targets(&animated, &state, &joints), free.stiffness);
    assert!(start > 1e-3, "the tail should have sagged: energy {start}");
    let mut worst = start;
    for _ in 0..600 {
        let mut p = animated.clone();
        update_spring(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            &joints,
            &free,
            &mut state,
            1.0 / 60.0,
        )
        .unwrap();
        worst = worst.max(state.energy(&targets(&animated, &state, &joints), free.stiffness));
    }
    let end = state.energy(&targets(&animated, &state, &joints), free.stiffness);
    println!("energy: start {start:.4e}, largest {worst:.4e}, after 10 s {end:.4e}");
    assert!(worst <= start * 1.05, "energy grew from {start} to {worst}");
    assert!(
        end < start * 0.1,
        "the damped tail did not settle: {end} of {start}"
    );
    assert_eq!(state.resets, 0);
}

#[test]
fn a_huge_frame_time_is_clamped_and_the_chain_keeps_its_lengths() {
    let (animated, joints) = tail();
    let mut state = SpringState::default();
    let spring = Spring::new(400.0, 0.0, Vec3::new(0.0, -50.0, 0.0));
    for dt in [10.0, 1e6, 0.5, f32::MAX] {
        let mut p = animated.clone();
        let steps = update_spring(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            &joints,
            &spring,
            &mut state,
            dt,
        )
        .unwrap();
        assert_eq!(steps, MAX_SUBSTEPS, "dt {dt}");
        assert!(p.local.iter().all(Trs::is_finite));
        assert!(affine_diff(&p.component, &p.fk()) < 1e-4);
        for i in 0..5 {
            let len = (p.at(i + 1) - p.at(i)).length();
            assert!(
                (len - 0.1).abs() < 1e-4,
                "segment {i} is {len} long after dt {dt}"
            );
        }
    }
}

#[test]
fn a_teleport_resets_the_chain_to_its_animated_pose() {
    let (animated, joints) = tail();
    let mut state = SpringState::default();
    let spring = Spring::new(60.0, 2.0, Vec3::new(0.0, -9.81, 0.0));
    for _ in 0..20 {
        let mut p = animated.clone();
        update_spring(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            &joints,
            &spring,
            &mut state,
            1.0 / 60.0,
        )
        .unwrap();
    }
    let mut moved = animated.clone();
    moved.local[0].translation += Vec3::new(100.0, 0.0, 0.0);
    moved.component = moved.fk();
    let reference = moved.clone();
    // Without gravity in this update, a reset endpoint sits on its target at rest and stays.
    let still = Spring {
        gravity: Vec3::ZERO,
        ..spring
    };
    update_spring(
        &moved.skeleton,
        &mut moved.local,
        &mut moved.component,
        &joints,
        &still,
        &mut state,
        1.0 / 60.0,
    )
    .unwrap();
    assert_eq!(
        state.resets, 5,
        "every segment strays over {RESET_LENGTHS} lengths and resets"
    );
    let off = affine_diff(&moved.component, &reference.component);
    assert!(off < 1e-4, "not back at the animated pose: {off}");
}

#[test]
fn a_non_finite_endpoint_resets_instead_of_spreading() {
    let (animated, joints) = tail();
    let mut state = SpringState::default();
    let spring = Spring::new(f32::MAX, 0.0, Vec3::new(0.0, -f32::MAX, 0.0));
    let mut p = animated.clone();
    update_spring(
        &p.skeleton,
        &mut p.local,
        &mut p.component,
        &joints,
        &spring,
        &mut state,
        1.0 / 60.0,
    )
    .unwrap();
    assert!(state.resets > 0);
    assert!(p.local.iter().all(Trs::is_finite));
    assert!(state.endpoint.iter().all(|e| e.is_finite()));
}

#[test]
fn invalid_spring_input_is_refused() {
    let (mut p, joints) = tail();
    let mut state = SpringState::default();
    let before = p.local.clone();
    let mut run = |s: Spring, dt: f32| {
        update_spring(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            &joints,
            &s,
            &mut state,
            dt,
        )
    };
    let ok = Spring::new(10.0, 1.0, Vec3::ZERO);
    assert!(matches!(
        run(
            Spring {
                stiffness: -1.0,
                ..ok
            },
            0.01
        ),
        Err(IkError::OutOfRange { .. })
    ));
    assert!(matches!(
        run(
            Spring {
                damping: f32::NAN,
                ..ok
            },
            0.01
        ),
        Err(IkError::NonFinite { .. })
    ));
    assert!(matches!(run(ok, -0.1), Err(IkError::OutOfRange { .. })));
    assert!(matches!(
        run(Spring { weight: 2.0, ..ok }, 0.01),
        Err(IkError::OutOfRange { .. })
    ));
    assert_eq!(p.local, before);
}
