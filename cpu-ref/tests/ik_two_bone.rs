//! Two-bone IK: reachable, unreachable and singular targets over thousands of random limbs.

mod ik_support;

use glam::{Quat, Vec3};
use ik_support::{affine_diff, root_trs, rotation, unit_vector, Posed};
use proptest::prelude::*;
use throng_cpu_ref::ik::{solve_two_bone, IkError, IkStatus, TwoBone};
use throng_cpu_ref::Trs;

/// A random three-joint limb (plus a leaf under the tip) under a random root with uniform scale.
fn limb() -> impl Strategy<Value = Posed> {
    (
        root_trs(),
        unit_vector(),
        0.05f32..1.5,
        unit_vector(),
        0.05f32..1.5,
        rotation(),
        rotation(),
        rotation(),
    )
        .prop_map(|(root, d1, l1, d2, l2, r0, r1, r2)| {
            Posed::chain(root, &[d1 * l1, d2 * l2], &[r0, r1, r2])
        })
}

/// Component lengths of the two bones.
fn lengths(p: &Posed) -> (f32, f32) {
    ((p.at(1) - p.at(0)).length(), (p.at(2) - p.at(1)).length())
}

fn solve(p: &mut Posed, ik: &TwoBone) -> throng_cpu_ref::ik::IkResult {
    solve_two_bone(&p.skeleton, &mut p.local, &mut p.component, ik).expect("valid input")
}

fn assert_consistent(p: &Posed) {
    assert!(p.local.iter().all(Trs::is_finite), "non-finite local pose");
    assert!(
        p.component.iter().all(|m| m.is_finite()),
        "non-finite component transforms"
    );
    let d = affine_diff(&p.component, &p.fk());
    assert!(
        d < 1e-4,
        "component transforms differ from FK of the written pose by {d}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn reachable_targets_are_reached(mut p in limb(), dir in unit_vector(), f in 0.001f32..0.999, pole in proptest::option::of(unit_vector())) {
        let (l1, l2) = lengths(&p);
        let limb_len = l1 + l2;
        let dist = (l1 - l2).abs() + f * (limb_len - (l1 - l2).abs());
        let a = p.at(0);
        let target = a + dir * dist;
        let mut ik = TwoBone::new(0, 1, 2, target);
        ik.pole = pole.map(|v| a + v);
        let r = solve(&mut p, &ik);
        assert_consistent(&p);
        prop_assert_eq!(r.status, IkStatus::Reached);
        prop_assert!(r.position_error <= 1e-4 * limb_len, "residual {} for limb {}", r.position_error, limb_len);
        prop_assert!((p.at(2) - target).length() <= 1e-4 * limb_len);
        let (n1, n2) = lengths(&p);
        prop_assert!((n1 - l1).abs() <= 1e-4 * limb_len && (n2 - l2).abs() <= 1e-4 * limb_len, "bone lengths changed");
        prop_assert_eq!(p.at(0), a, "the root joint moved");
        // The mid joint bends toward the pole (when the pole is off the root–target line).
        if let Some(v) = pole {
            let side = v - dir * v.dot(dir);
            let bend = (p.at(1) - a) - dir * (p.at(1) - a).dot(dir);
            if side.length() > 0.05 && bend.length() > 1e-3 * limb_len {
                prop_assert!(bend.dot(side) > 0.0, "mid joint bends away from the pole");
            }
        }
    }

    #[test]
    fn unreachable_targets_straighten_toward_them(mut p in limb(), dir in unit_vector(), f in 1.001f32..20.0) {
        let (l1, l2) = lengths(&p);
        let a = p.at(0);
        let target = a + dir * (l1 + l2) * f;
        let r = solve(&mut p, &TwoBone::new(0, 1, 2, target));
        assert_consistent(&p);
        prop_assert_eq!(r.status, IkStatus::Unreachable);
        let expect_tip = a + dir * (l1 + l2);
        prop_assert!((p.at(2) - expect_tip).length() <= 1e-4 * (l1 + l2), "tip {} not at the straight reach {}", p.at(2), expect_tip);
        let expect_mid = a + dir * l1;
        prop_assert!((p.at(1) - expect_mid).length() <= 1e-3 * (l1 + l2), "chain not straight");
        prop_assert!((r.position_error - (target - expect_tip).length()).abs() <= 1e-3 * (l1 + l2));
    }

    #[test]
    fn targets_inside_the_minimum_reach_are_unreachable(mut p in limb(), dir in unit_vector(), f in 0.01f32..0.99) {
        let (l1, l2) = lengths(&p);
        prop_assume!((l1 - l2).abs() > 0.01 * (l1 + l2));
        let a = p.at(0);
        let r = solve(&mut p, &TwoBone::new(0, 1, 2, a + dir * (l1 - l2).abs() * f));
        assert_consistent(&p);
        prop_assert_eq!(r.status, IkStatus::Unreachable);
        // Folded as far as it goes: the tip lies at |l1 - l2| along the target direction.
        prop_assert!((p.at(2) - (a + dir * (l1 - l2).abs())).length() <= 1e-3 * (l1 + l2));
    }

    #[test]
    fn soft_reach_limits_and_never_straightens(mut p in limb(), dir in unit_vector(), f in 0.9f32..3.0, soft in 0.01f32..0.2) {
        let (l1, l2) = lengths(&p);
        let a = p.at(0);
        let target = a + dir * (l1 + l2) * f;
        let mut ik = TwoBone::new(0, 1, 2, target);
        ik.softness = soft;
        let r = solve(&mut p, &ik);
        assert_consistent(&p);
        let reach = (p.at(2) - a).length();
        let start = (l1 + l2) * (1.0 - soft);
        let dist = (l1 + l2) * f;
        let expect = if dist > start { start + (l1 + l2) * soft * (1.0 - (-(dist - start) / ((l1 + l2) * soft)).exp()) } else { dist };
        let expect = expect.max((l1 - l2).abs());
        prop_assert!((reach - expect).abs() <= 1e-3 * (l1 + l2), "reach {reach}, soft IK expects {expect}");
        prop_assert!(reach <= (l1 + l2) * (1.0 + 1e-5));
        if f <= 1.0 {
            // Within the limb's length the soft zone keeps the tip at least (1 - 1/e)·s short of straight.
            prop_assert!(reach <= l1 + l2 - 0.3 * soft * (l1 + l2), "the limb snapped straight");
        }
        let expected_status = if f > 1.0 || dist < (l1 - l2).abs() { IkStatus::Unreachable } else if dist > start + 1e-3 * (l1 + l2) { IkStatus::Limited } else { r.status };
        prop_assert_eq!(r.status, expected_status);
    }

    #[test]
    fn end_rotation_and_weight(mut p in limb(), dir in unit_vector(), f in 0.1f32..0.9, end in rotation(), w in 0.0f32..1.0) {
        let (l1, l2) = lengths(&p);
        let a = p.at(0);
        let target = a + dir * ((l1 - l2).abs() + f * (l1 + l2 - (l1 - l2).abs()));
        let before = p.local.clone();
        let mut ik = TwoBone::new(0, 1, 2, target);
        ik.end_rotation = Some(end);
        let mut full = Posed::new(p.skeleton.clone(), p.local.clone());
        let r = solve(&mut full, &ik);
        prop_assert_eq!(r.status, IkStatus::Reached);
        prop_assert!(r.angle_error < 2e-3, "end rotation missed by {}", r.angle_error);
        prop_assert!(r.position_error <= 1e-4 * (l1 + l2));
        // A partial weight slerps each changed local rotation from its input by the weight.
        ik.weight = w;
        solve(&mut p, &ik);
        assert_consistent(&p);
        for (j, (b, f)) in before.iter().zip(&full.local).take(3).enumerate() {
            let expect = throng_cpu_ref::transform::slerp_shortest(b.rotation, f.rotation, w);
            prop_assert!(p.local[j].rotation.dot(expect).abs() > 1.0 - 1e-5, "joint {j} not blended by the weight");
        }
        prop_assert_eq!(p.local[3], before[3], "the leaf under the tip changed");
    }
}

/// A limb in the given offsets with identity rotations: straight, folded or zero-length bones.
fn flat_limb(mid: Vec3, tip: Vec3) -> Posed {
    Posed::chain(Trs::IDENTITY, &[mid, tip], &[Quat::IDENTITY; 3])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn singular_limbs_stay_finite(axis in unit_vector(), l1 in 0.05f32..1.0, l2 in 0.05f32..1.0, dir in unit_vector(), f in 0.0f32..2.5, case in 0usize..6) {
        let (mid, tip, expect_reachable) = match case {
            0 => (axis * l1, axis * l2, true),          // straight
            1 => (axis * l1, -axis * l2, true),         // folded back
            2 => (Vec3::ZERO, axis * l2, false),        // zero-length upper bone
            3 => (axis * l1, Vec3::ZERO, false),        // zero-length lower bone
            4 => (Vec3::ZERO, Vec3::ZERO, false),       // both zero
            _ => (axis * l1, axis * l1, true),          // straight, equal bones
        };
        let mut p = flat_limb(mid, tip);
        let (a1, a2) = lengths(&p);
        let target = dir * (a1 + a2).max(0.1) * f;
        for pole in [None, Some(target * 3.0), Some(Vec3::ZERO), Some(-target)] {
            let mut q = Posed::new(p.skeleton.clone(), p.local.clone());
            let mut ik = TwoBone::new(0, 1, 2, target);
            ik.pole = pole;
            let r = solve(&mut q, &ik);
            assert_consistent(&q);
            prop_assert!(r.position_error.is_finite() && r.angle_error.is_finite());
            let dist = target.length();
            if !expect_reachable {
                prop_assert_eq!(r.status, IkStatus::Degenerate);
            } else if dist <= 1e-5 * (a1 + a2) {
                // The solver's threshold is relative to the limb (two_bone.rs `ZERO_BONE`).
                prop_assert_eq!(r.status, IkStatus::Degenerate, "target at the root");
            } else if dist > (a1 - a2).abs() + 1e-3 && dist < a1 + a2 - 1e-3 {
                prop_assert_eq!(r.status, IkStatus::Reached);
                prop_assert!(r.position_error <= 1e-4 * (a1 + a2), "residual {}", r.position_error);
            } else if dist > a1 + a2 + 1e-3 || dist < (a1 - a2).abs() - 1e-3 {
                prop_assert_eq!(r.status, IkStatus::Unreachable);
            }
        }
        // Target exactly at the root.
        let r = solve(&mut p, &TwoBone::new(0, 1, 2, Vec3::ZERO));
        assert_consistent(&p);
        prop_assert_eq!(r.status, IkStatus::Degenerate);
    }
}

#[test]
fn straight_limb_bends_toward_the_pole() {
    let mut p = flat_limb(Vec3::new(0.0, -0.5, 0.0), Vec3::new(0.0, -0.5, 0.0));
    let mut ik = TwoBone::new(0, 1, 2, Vec3::new(0.0, -0.6, 0.0));
    ik.pole = Some(Vec3::new(0.0, -0.5, 1.0));
    let r = solve(&mut p, &ik);
    assert_eq!(r.status, IkStatus::Reached);
    assert!(r.position_error < 1e-5);
    // Knee at 0.5 from the root and 0.5 from the target 0.6 below it: 0.3 down, 0.4 forward.
    assert!(
        (p.at(1) - Vec3::new(0.0, -0.3, 0.4)).length() < 1e-5,
        "knee at {}",
        p.at(1)
    );
}

#[test]
fn non_uniform_scale_keeps_the_fk_pose() {
    let mut p = flat_limb(Vec3::new(0.0, -0.5, 0.1), Vec3::new(0.0, -0.5, -0.1));
    p.local[1].scale = Vec3::new(1.0, 2.0, 1.0);
    p = Posed::new(p.skeleton.clone(), p.local.clone());
    let (local, component) = (p.local.clone(), p.component.clone());
    let r = solve(&mut p, &TwoBone::new(0, 1, 2, Vec3::new(0.3, -0.8, 0.0)));
    assert_eq!(r.status, IkStatus::UnsupportedScale);
    assert_eq!(p.local, local);
    assert_eq!(p.component, component);
    assert!(
        (r.position_error - (component[2].translation - glam::Vec3A::new(0.3, -0.8, 0.0)).length())
            .abs()
            < 1e-6
    );
}

#[test]
fn invalid_input_is_an_error_and_changes_nothing() {
    let mut p = flat_limb(Vec3::new(0.0, -0.5, 0.1), Vec3::new(0.0, -0.5, -0.1));
    let local = p.local.clone();
    let ok = TwoBone::new(0, 1, 2, Vec3::new(0.3, -0.8, 0.0));
    let cases: [(TwoBone, IkError); 6] = [
        (
            TwoBone { tip: 9, ..ok },
            IkError::UnknownJoint {
                joint: 9,
                joints: 4,
            },
        ),
        (
            TwoBone {
                root: 2,
                tip: 0,
                ..ok
            },
            IkError::NotAChain {
                ancestor: 2,
                joint: 1,
            },
        ),
        (
            TwoBone {
                target: Vec3::new(f32::NAN, 0.0, 0.0),
                ..ok
            },
            IkError::NonFinite {
                what: "two-bone target",
            },
        ),
        (
            TwoBone {
                pole: Some(Vec3::INFINITY),
                ..ok
            },
            IkError::NonFinite {
                what: "two-bone pole",
            },
        ),
        (
            TwoBone { weight: 1.5, ..ok },
            IkError::OutOfRange {
                what: "two-bone weight",
                value: 1.5,
                range: "[0, 1]",
            },
        ),
        (
            TwoBone {
                weight: f32::NAN,
                ..ok
            },
            IkError::NonFinite {
                what: "two-bone weight",
            },
        ),
    ];
    for (ik, expect) in cases {
        assert_eq!(
            solve_two_bone(&p.skeleton, &mut p.local, &mut p.component, &ik),
            Err(expect)
        );
        assert_eq!(p.local, local);
    }
    // A leaf that is not under the mid joint.
    let mut q = flat_limb(Vec3::Y, Vec3::Y);
    q.skeleton.parents[3] = 0;
    let e = solve_two_bone(
        &q.skeleton,
        &mut q.local,
        &mut q.component,
        &TwoBone::new(0, 1, 3, Vec3::X),
    );
    assert_eq!(
        e,
        Err(IkError::NotAChain {
            ancestor: 1,
            joint: 3
        })
    );
}

#[test]
fn zero_weight_keeps_the_pose() {
    let mut p = flat_limb(Vec3::new(0.0, -0.5, 0.1), Vec3::new(0.0, -0.5, -0.1));
    let (local, component) = (p.local.clone(), p.component.clone());
    let r = solve(
        &mut p,
        &TwoBone {
            weight: 0.0,
            ..TwoBone::new(0, 1, 2, Vec3::new(0.3, -0.8, 0.0))
        },
    );
    assert_eq!(
        r.status,
        IkStatus::Reached,
        "the status describes the full-weight solve"
    );
    assert_eq!(p.local, local);
    assert!(affine_diff(&p.component, &component) < 1e-6);
    assert!(
        (r.position_error - (component[2].translation - glam::Vec3A::new(0.3, -0.8, 0.0)).length())
            .abs()
            < 1e-5
    );
}
