//! Aim / look-at: limits, distribution over a chain, offsets and the character's head chain.

mod ik_support;

use glam::{Quat, Vec3};
use ik_support::{
    affine_diff, character, character_rest, joint, root_trs, rotation, unit_vector, Posed,
};
use proptest::prelude::*;
use throng_cpu_ref::ik::chain::rotation_of;
use throng_cpu_ref::ik::{solve_aim, Aim, IkError, IkStatus, MAX_CHAIN_JOINTS};
use throng_cpu_ref::Trs;

/// A parent joint 0 and the aimed joint 1 (posed away from its rest rotation), with a leaf.
fn head() -> impl Strategy<Value = Posed> {
    (
        root_trs(),
        unit_vector(),
        0.05f32..1.0,
        rotation(),
        rotation(),
        rotation(),
    )
        .prop_map(|(root, d, l, r0, rest1, pose1)| {
            let mut p = Posed::chain(root, &[d * l], &[r0, rest1]);
            p.local[1].rotation = pose1;
            Posed::new(p.skeleton.clone(), p.local.clone())
        })
}

/// Forward and up axes, not parallel.
fn axes() -> impl Strategy<Value = (Vec3, Vec3)> {
    (unit_vector(), unit_vector()).prop_filter("up not parallel to forward", |(f, u)| {
        f.cross(*u).length() > 0.2
    })
}

/// Yaw and pitch of `v` in the frame with forward `f` and up `u` (made orthonormal).
fn yaw_pitch(v: Vec3, f: Vec3, u: Vec3) -> (f32, f32) {
    let u = (u - f * u.dot(f)).normalize();
    let s = u.cross(f);
    (
        v.dot(s).atan2(v.dot(f)),
        v.dot(u).atan2(v.dot(f).hypot(v.dot(s))),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn limits_hold(mut p in head(), (f, u) in axes(), dir in unit_vector(), dist in 0.1f32..10.0, yaw_limit in 0.0f32..std::f32::consts::PI, pitch_limit in 0.0f32..std::f32::consts::FRAC_PI_2) {
        let rest = rotation_of(&p.component[0]) * p.skeleton.rest[1].rotation;
        let (rf, ru) = (rest * f, rest * (u - f * u.dot(f)).normalize());
        let target = p.at(1) + dir * dist;
        let aim = Aim { yaw_limit, pitch_limit, ..Aim::new(target, f, u) };
        let r = solve_aim(&p.skeleton, &mut p.local, &mut p.component, &aim, &[1], &[1.0]).expect("valid input");
        prop_assert!(affine_diff(&p.component, &p.fk()) < 1e-4);
        let forward = rotation_of(&p.component[1]) * f;
        let (yaw, pitch) = yaw_pitch(forward, rf, ru);
        prop_assert!(yaw.abs() <= yaw_limit + 1e-3, "yaw {yaw} beyond {yaw_limit}");
        prop_assert!(pitch.abs() <= pitch_limit + 1e-3, "pitch {pitch} beyond {pitch_limit}");
        let (want_yaw, want_pitch) = yaw_pitch(dir, rf, ru);
        if want_yaw.abs() < yaw_limit - 1e-3 && want_pitch.abs() < pitch_limit - 1e-3 {
            prop_assert_eq!(r.status, IkStatus::Reached);
            prop_assert!(r.angle_error < 1e-3 && r.position_error < 1e-3 * dist, "{:?}", r);
        } else if want_yaw.abs() > yaw_limit + 1e-3 || want_pitch.abs() > pitch_limit + 1e-3 {
            prop_assert_eq!(r.status, IkStatus::Limited);
        }
        // No roll: the up axis stays in the plane of the aim direction and the rest up.
        let up = rotation_of(&p.component[1]) * u;
        let normal = forward.cross(ru);
        if normal.length() > 0.2 {
            prop_assert!(up.dot(normal.normalize()).abs() < 2e-3, "head rolled");
        }
    }

    #[test]
    fn offset_ray_passes_through_the_target(mut p in head(), (f, u) in axes(), offset in unit_vector(), dir in unit_vector(), dist in 0.5f32..10.0) {
        let offset = offset * 0.1;
        let target = p.at(1) + dir * dist;
        let aim = Aim { offset, ..Aim::new(target, f, u) };
        let r = solve_aim(&p.skeleton, &mut p.local, &mut p.component, &aim, &[1], &[1.0]).expect("valid input");
        prop_assert_eq!(r.status, IkStatus::Reached, "{:?}", r);
        let m = p.component[1];
        let origin = m.transform_point3(offset);
        let ray = (rotation_of(&m) * f).normalize();
        prop_assert!(ray.angle_between(target - origin) < 1e-3, "the ray from the offset misses the target");
    }

    /// A vertical chain of three joints turning toward a far target: joint i takes weights[i] of
    /// the turn still missing, so with weights 1/3, 1/2, 1 each turns a third and the turns sum to
    /// the requested yaw.
    #[test]
    fn distribution_sums_to_the_requested_turn(yaw in -3.0f32..3.0) {
        let mut p = Posed::chain(Trs::IDENTITY, &[Vec3::new(0.0, 0.2, 0.0), Vec3::new(0.0, 0.2, 0.0)], &[Quat::IDENTITY; 3]);
        let want = Quat::from_rotation_y(yaw) * Vec3::Z;
        let target = p.at(2) + want * 1e4;
        let aim = Aim::new(target, Vec3::Z, Vec3::Y);
        let r = solve_aim(&p.skeleton, &mut p.local, &mut p.component, &aim, &[0, 1, 2], &[1.0 / 3.0, 0.5, 1.0]).expect("valid input");
        prop_assert_eq!(r.status, IkStatus::Reached);
        let mut sum = 0.0;
        for j in 0..3 {
            let (axis, angle) = p.local[j].rotation.to_axis_angle();
            let signed = angle * axis.y.signum();
            prop_assert!((signed - yaw / 3.0).abs() < 1e-4, "joint {j} turned {signed}, expected {}", yaw / 3.0);
            sum += signed;
        }
        prop_assert!((sum - yaw).abs() < 1e-4, "turns sum to {sum}, requested {yaw}");
        let forward = rotation_of(&p.component[2]) * Vec3::Z;
        prop_assert!(forward.angle_between(want) < 1e-3);
    }

    #[test]
    fn chain_weights_below_one_leave_a_remainder(w in 0.1f32..0.9, yaw in 0.3f32..2.0) {
        let mut p = Posed::chain(Trs::IDENTITY, &[Vec3::new(0.0, 0.2, 0.0), Vec3::new(0.0, 0.2, 0.0)], &[Quat::IDENTITY; 3]);
        let target = p.at(2) + Quat::from_rotation_y(yaw) * Vec3::Z * 1e4;
        let r = solve_aim(&p.skeleton, &mut p.local, &mut p.component, &Aim::new(target, Vec3::Z, Vec3::Y), &[0, 1, 2], &[w, w, w]).expect("valid input");
        prop_assert_eq!(r.status, IkStatus::Limited);
        let expect = yaw * (1.0 - w).powi(3);
        prop_assert!((r.angle_error - expect).abs() < 1e-3, "remaining {} expected {}", r.angle_error, expect);
    }
}

#[test]
fn character_head_chain_looks_at_a_target() {
    let package = character();
    let mut p = character_rest(package);
    let chain = [joint(&p, "spine_03"), joint(&p, "neck"), joint(&p, "head")];
    let head = chain[2];
    let target = p.at(head) + Vec3::new(0.8, 0.3, 1.0);
    let before = p.local.clone();
    let aim = Aim {
        yaw_limit: 1.4,
        pitch_limit: 1.0,
        offset: Vec3::new(0.0, 0.08, 0.08),
        ..Aim::new(target, Vec3::Z, Vec3::Y)
    };
    let r = solve_aim(
        &p.skeleton,
        &mut p.local,
        &mut p.component,
        &aim,
        &chain,
        &[0.25, 0.4, 1.0],
    )
    .expect("valid input");
    assert_eq!(r.status, IkStatus::Reached, "{r:?}");
    assert!(r.angle_error < 1e-3 && r.position_error < 1e-3, "{r:?}");
    assert!(
        affine_diff(&p.component, &p.fk()) < 1e-4,
        "subtree not rebuilt"
    );
    for &j in &chain {
        assert!(
            p.local[j].rotation.angle_between(before[j].rotation) > 0.02,
            "joint {j} did not share the turn"
        );
    }
    // Joints outside the chain keep their locals.
    for j in (0..p.local.len()).filter(|j| !chain.contains(j)) {
        assert_eq!(p.local[j], before[j]);
    }
}

/// The character with its chest twisted `yaw` radians to its left (about +Y at spine_02).
fn chest_twisted(yaw: f32) -> Posed {
    let p = character_rest(character());
    let spine = joint(&p, "spine_02");
    let mut local = p.local.clone();
    local[spine].rotation = Quat::from_rotation_y(yaw) * local[spine].rotation;
    Posed::new(p.skeleton, local)
}

/// Yaw of the head's forward axis (+Z) about +Y, from the root's facing (+Z): left is +X.
fn head_yaw(p: &Posed) -> f32 {
    let forward = rotation_of(&p.component[joint(p, "head")]) * Vec3::Z;
    forward.x.atan2(forward.z)
}

/// The limits are measured from where the body faces (the root joint), not from the animated
/// chest: with the chest twisted 0.5 rad to the left, a neck and head limited to 0.3 rad of yaw
/// still look straight ahead of the root, and no further than 0.3 rad to its left.
#[test]
fn aim_limits_follow_the_root_not_the_animated_spine() {
    for (want, expect, status) in [
        (0.0, 0.0, IkStatus::Reached),
        (0.6, 0.3, IkStatus::Limited),
        (-0.6, -0.3, IkStatus::Limited),
    ] {
        let mut p = chest_twisted(0.5);
        let chain = [joint(&p, "neck"), joint(&p, "head")];
        let target = p.at(chain[1]) + Quat::from_rotation_y(want) * Vec3::Z * 1e3;
        let aim = Aim {
            yaw_limit: 0.3,
            pitch_limit: 0.6,
            ..Aim::new(target, Vec3::Z, Vec3::Y)
        };
        let r = solve_aim(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            &aim,
            &chain,
            &[0.5, 1.0],
        )
        .expect("valid input");
        assert_eq!(r.status, status, "target at {want} rad: {r:?}");
        let yaw = head_yaw(&p);
        assert!(
            (yaw - expect).abs() < 1e-3,
            "target at {want} rad: the head faces {yaw} rad from the root, expected {expect}"
        );
    }
}

#[test]
fn degenerate_errors_and_scale() {
    let mut p = Posed::chain(
        Trs::IDENTITY,
        &[Vec3::new(0.0, 0.2, 0.0), Vec3::new(0.0, 0.2, 0.0)],
        &[Quat::IDENTITY; 3],
    );
    let (local, component) = (p.local.clone(), p.component.clone());
    // Target at the ray's origin.
    let eye = Aim::new(p.at(2), Vec3::Z, Vec3::Y);
    let r = solve_aim(
        &p.skeleton,
        &mut p.local,
        &mut p.component,
        &eye,
        &[2],
        &[1.0],
    )
    .expect("valid input");
    assert_eq!(r.status, IkStatus::Degenerate);
    assert!(r.angle_error.is_finite() && r.position_error.is_finite());
    assert_eq!(p.local, local);

    let ok = Aim::new(Vec3::new(1.0, 0.4, 1.0), Vec3::Z, Vec3::Y);
    let mut run = |aim: &Aim, joints: &[usize], weights: &[f32]| {
        solve_aim(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            aim,
            joints,
            weights,
        )
    };
    assert_eq!(
        run(
            &Aim {
                up: Vec3::Z * 2.0,
                ..ok
            },
            &[2],
            &[1.0]
        ),
        Err(IkError::Invalid {
            what: "aim up axis",
            reason: "is parallel to the forward axis"
        })
    );
    assert_eq!(
        run(
            &Aim {
                forward: Vec3::ZERO,
                ..ok
            },
            &[2],
            &[1.0]
        ),
        Err(IkError::Invalid {
            what: "aim forward axis",
            reason: "has zero length"
        })
    );
    assert_eq!(
        run(&ok, &[1, 2], &[1.0]),
        Err(IkError::Length {
            what: "aim chain weights",
            len: 1,
            expected: 2
        })
    );
    assert_eq!(
        run(&ok, &[2, 1], &[1.0, 1.0]),
        Err(IkError::NotAChain {
            ancestor: 2,
            joint: 1
        })
    );
    assert_eq!(
        run(&ok, &[], &[]),
        Err(IkError::ChainLength {
            len: 0,
            min: 1,
            max: 32
        })
    );
    assert_eq!(
        run(
            &Aim {
                yaw_limit: 4.0,
                ..ok
            },
            &[2],
            &[1.0]
        ),
        Err(IkError::OutOfRange {
            what: "aim yaw limit",
            value: 4.0,
            range: "[0, π]"
        })
    );
    assert_eq!(
        run(
            &Aim {
                target: Vec3::NAN,
                ..ok
            },
            &[2],
            &[1.0]
        ),
        Err(IkError::NonFinite { what: "aim target" })
    );
    assert_eq!(
        run(&ok, &[2], &[f32::INFINITY]),
        Err(IkError::NonFinite {
            what: "aim chain weight"
        })
    );
    assert_eq!(p.local, local);
    assert_eq!(p.component, component);

    p.local[1].scale = Vec3::new(1.0, 0.5, 1.0);
    let mut q = Posed::new(p.skeleton.clone(), p.local.clone());
    let before = q.local.clone();
    let r = solve_aim(
        &q.skeleton,
        &mut q.local,
        &mut q.component,
        &ok,
        &[1, 2],
        &[0.5, 1.0],
    )
    .expect("valid input");
    assert_eq!(r.status, IkStatus::UnsupportedScale);
    assert_eq!(q.local, before);
}

#[test]
fn an_aim_chain_of_33_joints_is_refused_and_32_are_solved() {
    // 33 chain joints (0..=32) and a leaf under the last.
    let mut p = Posed::chain(
        Trs::IDENTITY,
        &[Vec3::new(0.0, 0.05, 0.0); 32],
        &[Quat::IDENTITY; 33],
    );
    assert_eq!(MAX_CHAIN_JOINTS, 32);
    let aim = Aim::new(Vec3::new(1.0, 1.0, 1.0), Vec3::Z, Vec3::Y);
    let local = p.local.clone();
    let too_long: Vec<usize> = (0..33).collect();
    assert_eq!(
        solve_aim(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            &aim,
            &too_long,
            &[1.0 / 33.0; 33],
        ),
        Err(IkError::ChainLength {
            len: 33,
            min: 1,
            max: 32
        })
    );
    assert_eq!(p.local, local, "a refused solve changes nothing");
    let longest: Vec<usize> = (0..32).collect();
    let r = solve_aim(
        &p.skeleton,
        &mut p.local,
        &mut p.component,
        &aim,
        &longest,
        &[1.0 / 32.0; 32],
    )
    .expect("32 joints is the longest chain, and allowed");
    assert!(r.angle_error.is_finite(), "{r:?}");
}
