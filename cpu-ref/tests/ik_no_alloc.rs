//! The IK solves, spring chains and foot placement allocate nothing: a counting global allocator watches this thread.

mod ik_support;

use glam::Vec3;
use ik_support::{character, character_rest, joint};
use throng_cpu_ref::ik::{
    place_feet, solve_aim, solve_ccd, solve_fabrik, solve_two_bone, update_spring, Aim, Ccd,
    Fabrik, FootPlacement, FootState, Ground, IkResult, IkStatus, Leg, Spring, SpringState,
    TwoBone,
};
use throng_fixtures::alloc::{allocations, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn solves_do_not_allocate() {
    let package = character();
    let mut p = character_rest(package);
    let (thigh, calf, foot) = (
        joint(&p, "thigh_l"),
        joint(&p, "calf_l"),
        joint(&p, "foot_l"),
    );
    let arm = [
        joint(&p, "clavicle_r"),
        joint(&p, "upperarm_r"),
        joint(&p, "lowerarm_r"),
        joint(&p, "hand_r"),
    ];
    let head = [joint(&p, "spine_03"), joint(&p, "neck"), joint(&p, "head")];
    let legs = [
        Leg { thigh, calf, foot },
        Leg {
            thigh: joint(&p, "thigh_r"),
            calf: joint(&p, "calf_r"),
            foot: joint(&p, "foot_r"),
        },
    ];
    let feet = FootPlacement {
        pelvis: joint(&p, "pelvis"),
        legs: &legs,
        max_tilt: 0.3,
        smooth_time: 0.1,
        weight: 1.0,
    };
    let ground = [
        Ground {
            height: -0.05,
            normal: Vec3::new(0.1, 1.0, 0.0),
        },
        Ground {
            height: 0.03,
            normal: Vec3::Y,
        },
    ];
    let mut state = FootState::default();
    let mut spring_state = SpringState::default();
    let mut results = [IkResult {
        status: IkStatus::Reached,
        position_error: 0.0,
        angle_error: 0.0,
        iterations: 0,
    }; 2];
    let knee_target = p.at(foot) + Vec3::new(0.0, 0.2, 0.1);
    let hand_target = p.at(arm[3]) + Vec3::new(-0.1, 0.3, 0.3);
    let look = p.at(head[2]) + Vec3::new(0.5, 0.2, 1.0);

    let during = allocations(|| {
        for k in 0..10 {
            let w = k as f32 / 10.0;
            let r = solve_two_bone(
                &p.skeleton,
                &mut p.local,
                &mut p.component,
                &TwoBone {
                    weight: w,
                    ..TwoBone::new(thigh, calf, foot, knee_target)
                },
            );
            assert!(r.is_ok());
            let r = solve_fabrik(
                &p.skeleton,
                &mut p.local,
                &mut p.component,
                &arm,
                &Fabrik {
                    weight: w,
                    ..Fabrik::new(hand_target)
                },
            );
            assert!(r.is_ok());
            let r = update_spring(
                &p.skeleton,
                &mut p.local,
                &mut p.component,
                &arm,
                &Spring::new(80.0, 4.0, Vec3::new(0.0, -9.81, 0.0)),
                &mut spring_state,
                1.0 / 60.0,
            );
            assert!(r.is_ok());
            let r = solve_ccd(
                &p.skeleton,
                &mut p.local,
                &mut p.component,
                &arm,
                &Ccd {
                    weight: w,
                    ..Ccd::new(hand_target)
                },
            );
            assert!(r.is_ok());
            let r = solve_aim(
                &p.skeleton,
                &mut p.local,
                &mut p.component,
                &Aim::new(look, Vec3::Z, Vec3::Y),
                &head,
                &[0.3, 0.5, 1.0],
            );
            assert!(r.is_ok());
            let r = place_feet(
                &p.skeleton,
                &mut p.local,
                &mut p.component,
                &feet,
                &ground,
                0.016,
                &mut state,
                &mut results,
            );
            assert!(r.is_ok());
            // Errors allocate nothing either.
            let e = solve_two_bone(
                &p.skeleton,
                &mut p.local,
                &mut p.component,
                &TwoBone::new(foot, calf, thigh, knee_target),
            );
            assert!(e.is_err());
        }
    });
    // The counter itself works: this Vec is counted.
    let counted = allocations(|| drop(std::hint::black_box(Vec::<u8>::with_capacity(16))));
    assert!(counted > 0, "the counting allocator does not count");
    assert_eq!(during, 0, "IK solves allocated {during} times");
}
