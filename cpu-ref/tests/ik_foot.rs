//! Foot placement on the generated character: the pelvis never rises, feet land on the given
//! ground, tilt is capped and smoothing follows `1 - exp(-dt / smooth_time)`.

mod ik_support;

use glam::{Quat, Vec3};
use ik_support::{affine_diff, character, character_rest, joint, unit_vector, Posed};
use proptest::prelude::*;
use throng_cpu_ref::ik::chain::rotation_of;
use throng_cpu_ref::ik::{
    place_feet, FootPlacement, FootState, Ground, IkError, IkResult, IkStatus, Leg, MAX_FEET,
};

fn legs(p: &Posed) -> [Leg; 2] {
    ["l", "r"].map(|s| Leg {
        thigh: joint(p, &format!("thigh_{s}")),
        calf: joint(p, &format!("calf_{s}")),
        foot: joint(p, &format!("foot_{s}")),
    })
}

fn settings<'a>(p: &Posed, legs: &'a [Leg]) -> FootPlacement<'a> {
    FootPlacement {
        pelvis: joint(p, "pelvis"),
        legs,
        max_tilt: 0.35,
        smooth_time: 0.1,
        weight: 1.0,
    }
}

const NO_RESULT: IkResult = IkResult {
    status: IkStatus::Degenerate,
    position_error: 0.0,
    angle_error: 0.0,
    iterations: 0,
};

/// A character with its knees bent a little (the rest legs are nearly straight).
fn crouched() -> Posed {
    let package = character();
    let mut p = character_rest(package);
    for s in ["l", "r"] {
        let (thigh, calf, foot) = (
            joint(&p, &format!("thigh_{s}")),
            joint(&p, &format!("calf_{s}")),
            joint(&p, &format!("foot_{s}")),
        );
        p.local[thigh].rotation *= Quat::from_rotation_x(-0.4);
        p.local[calf].rotation *= Quat::from_rotation_x(0.8);
        p.local[foot].rotation *= Quat::from_rotation_x(-0.4);
    }
    Posed::new(p.skeleton.clone(), p.local.clone())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn pelvis_never_rises_and_feet_land(h in (-0.15f32..0.15, -0.15f32..0.15), n in (unit_vector(), unit_vector()), tilt in (0.0f32..0.6, 0.0f32..0.6)) {
        let mut p = crouched();
        let legs = legs(&p);
        let s = settings(&p, &legs);
        let normals = [(n.0 * tilt.0 + Vec3::Y).normalize(), (n.1 * tilt.1 + Vec3::Y).normalize()];
        let ground = [Ground { height: h.0, normal: normals[0] }, Ground { height: h.1, normal: normals[1] }];
        let pelvis_before = p.at(s.pelvis);
        let feet_before = legs.map(|l| (p.at(l.foot), rotation_of(&p.component[l.foot])));
        let mut state = FootState::default();
        let mut results = [NO_RESULT; 2];
        place_feet(&p.skeleton, &mut p.local, &mut p.component, &s, &ground, 1.0 / 60.0, &mut state, &mut results).expect("valid input");
        prop_assert!(affine_diff(&p.component, &p.fk()) < 1e-4);
        let drop = p.at(s.pelvis).y - pelvis_before.y;
        prop_assert!(drop <= 1e-6, "pelvis rose by {drop}");
        prop_assert!((drop - h.0.min(h.1).min(0.0)).abs() < 1e-5, "pelvis moved {drop}, lowest offset {}", h.0.min(h.1));
        for i in 0..2 {
            let want = feet_before[i].0 + Vec3::Y * [h.0, h.1][i];
            prop_assert_eq!(results[i].status, IkStatus::Reached, "{:?}", results[i]);
            prop_assert!((p.at(legs[i].foot) - want).length() < 1e-4, "foot {i} at {} not {}", p.at(legs[i].foot), want);
            // Tilted toward the normal by at most max_tilt.
            let turn = rotation_of(&p.component[legs[i].foot]) * feet_before[i].1.conjugate();
            prop_assert!(turn.angle_between(Quat::IDENTITY) <= s.max_tilt + 1e-3);
            let full = Vec3::Y.angle_between(normals[i]);
            prop_assert!((turn.angle_between(Quat::IDENTITY) - full.min(s.max_tilt)).abs() < 2e-3);
            prop_assert!((turn * Vec3::Y).angle_between(normals[i]) <= (full - s.max_tilt).max(0.0) + 2e-3);
        }
    }
}

#[test]
fn smoothing_follows_the_stated_factor_and_reset_jumps() {
    let base = crouched();
    let legs = legs(&base);
    let s = settings(&base, &legs);
    let flat = |h: f32| Ground {
        height: h,
        normal: Vec3::Y,
    };
    let pelvis_rest = base.at(s.pelvis).y;
    let mut state = FootState::default();
    let mut results = [NO_RESULT; 2];
    let mut step = |state: &mut FootState, heights: [f32; 2], dt: f32| {
        let mut p = base.clone();
        place_feet(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            &s,
            &[flat(heights[0]), flat(heights[1])],
            dt,
            state,
            &mut results,
        )
        .expect("valid input");
        p.at(s.pelvis).y - pelvis_rest
    };
    // The first update jumps.
    let d0 = step(&mut state, [-0.1, 0.05], 0.016);
    assert!(
        (d0 + 0.1).abs() < 1e-5,
        "first update should jump to -0.1, moved {d0}"
    );
    // Then the offset approaches the new lowest foot by 1 - exp(-dt / smooth_time) per update.
    let mut expect = -0.1f32;
    for dt in [0.016f32, 0.033, 0.1, 0.004] {
        let d = step(&mut state, [0.0, -0.25], dt);
        expect += (-0.25 - expect) * (1.0 - (-dt / s.smooth_time).exp());
        assert!(
            (d - expect).abs() < 1e-5,
            "dt {dt}: pelvis offset {d}, expected {expect}"
        );
        assert!((state.pelvis_offset - expect).abs() < 1e-6);
    }
    // Ground rising above the animation never lifts the pelvis: it returns toward zero, not above.
    for _ in 0..50 {
        let d = step(&mut state, [0.2, 0.3], 0.05);
        assert!(d <= 1e-6, "pelvis rose to {d}");
    }
    // A teleport resets: the next update jumps.
    state.reset();
    let d = step(&mut state, [-0.07, 0.0], 0.001);
    assert!(
        (d + 0.07).abs() < 1e-5,
        "after reset the offset should jump to -0.07, moved {d}"
    );
}

#[test]
fn invalid_input_is_an_error() {
    let mut p = crouched();
    let legs = legs(&p);
    let s = settings(&p, &legs);
    let g = Ground {
        height: 0.0,
        normal: Vec3::Y,
    };
    let mut state = FootState::default();
    let mut results = [NO_RESULT; 2];
    let before = p.local.clone();
    let mut run = |s: &FootPlacement, ground: &[Ground], dt: f32, results: &mut [IkResult]| {
        place_feet(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            s,
            ground,
            dt,
            &mut state,
            results,
        )
    };
    assert_eq!(
        run(&s, &[g], 0.01, &mut results),
        Err(IkError::Length {
            what: "ground samples",
            len: 1,
            expected: 2
        })
    );
    assert_eq!(
        run(
            &s,
            &[
                g,
                Ground {
                    normal: Vec3::ZERO,
                    ..g
                }
            ],
            0.01,
            &mut results
        ),
        Err(IkError::Invalid {
            what: "ground normal",
            reason: "has zero length"
        })
    );
    assert_eq!(
        run(
            &s,
            &[
                g,
                Ground {
                    height: f32::NAN,
                    ..g
                }
            ],
            0.01,
            &mut results
        ),
        Err(IkError::NonFinite {
            what: "ground height"
        })
    );
    assert_eq!(
        run(&s, &[g, g], -1.0, &mut results),
        Err(IkError::OutOfRange {
            what: "foot dt",
            value: -1.0,
            range: ">= 0"
        })
    );
    assert_eq!(
        run(&s, &[g, g], 0.01, &mut results[..1]),
        Err(IkError::Length {
            what: "foot results",
            len: 1,
            expected: 2
        })
    );
    let swapped = [
        Leg {
            thigh: legs[0].foot,
            foot: legs[0].thigh,
            ..legs[0]
        },
        legs[1],
    ];
    assert!(matches!(
        run(
            &FootPlacement {
                legs: &swapped,
                ..s
            },
            &[g, g],
            0.01,
            &mut results
        ),
        Err(IkError::NotAChain { .. })
    ));
    assert_eq!(p.local, before);
    assert!(!state.primed, "a failed update must not prime the state");
}

#[test]
fn zero_legs_and_five_legs_are_refused_and_four_are_accepted() {
    let mut p = crouched();
    let two = legs(&p);
    let g = Ground {
        height: 0.0,
        normal: Vec3::Y,
    };
    let mut run = |legs: &[Leg]| {
        let s = settings(&p, legs);
        let ground = vec![g; legs.len()];
        let mut results = vec![NO_RESULT; legs.len()];
        let mut state = FootState::default();
        place_feet(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            &s,
            &ground,
            0.01,
            &mut state,
            &mut results,
        )
    };
    assert_eq!(MAX_FEET, 4);
    assert_eq!(
        run(&[]),
        Err(IkError::ChainLength {
            len: 0,
            min: 1,
            max: 4
        })
    );
    assert_eq!(
        run(&[two[0]; 5]),
        Err(IkError::ChainLength {
            len: 5,
            min: 1,
            max: 4
        })
    );
    assert_eq!(
        run(&[two[0], two[1], two[0], two[1]]),
        Ok(()),
        "four legs is the most, and allowed"
    );
}
