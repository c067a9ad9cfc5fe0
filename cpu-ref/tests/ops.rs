//! Pose-program op semantics (DESIGN.md §4), end to end through the evaluator and per joint.

mod common;

use common::{any_trs, pose_clip, quat_err, trs, trs_err, vec_err};
use glam::{Quat, Vec3, Vec4};
use proptest::prelude::*;
use throng_cpu_ref::interpreter::{additive_joint, blend_joint, override_joint};
use throng_cpu_ref::program::NO_MASK;
use throng_cpu_ref::{
    Assets, Clip, Evaluator, Mask, PoseOp, Program, ProgramLimits, Skeleton, Trs,
};

const JOINTS: usize = 6;

/// Runs `ops` with `weights` on the branching rig whose clips hold `poses` (clip k = poses[k]),
/// and returns register `out`.
fn run(
    poses: &[[Trs; JOINTS]],
    masks: &[Mask],
    ops: Vec<PoseOp>,
    weights: Vec<f32>,
    out: u32,
) -> Vec<Trs> {
    let skeleton = common::branching_rig();
    let clips: Vec<Clip> = poses.iter().map(|p| pose_clip(p, 0)).collect();
    let assets = Assets {
        skeleton: &skeleton,
        skeleton_index: 0,
        clips: &clips,
        skins: &[],
        masks,
        curves: &throng_cpu_ref::scalar::NO_CURVES,
    };
    let mut ev = Evaluator::new(ProgramLimits::default(), JOINTS, 0);
    ev.run(&Program { ops, weights }, &assets)
        .expect("valid program");
    ev.local(out).expect("register").to_vec()
}

fn max_err(a: &[Trs], b: &[Trs]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| trs_err(x, y))
        .fold(0.0, f32::max)
}

fn rig() -> Skeleton {
    common::branching_rig()
}

fn poses() -> impl Strategy<Value = [Trs; JOINTS]> {
    [
        any_trs(),
        any_trs(),
        any_trs(),
        any_trs(),
        any_trs(),
        any_trs(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn one_input_blend_returns_its_input(a in poses(), w in 0.01f32..100.0) {
        let out = run(&[a], &[], vec![PoseOp::sample(0, 0, 0.0), PoseOp::blend(1, 0, 1, 0)], vec![w], 1);
        prop_assert!(max_err(&out, &a) < 1e-6);
    }

    #[test]
    fn blend_weights_are_normalised(a in poses(), b in poses(), w in 0.01f32..10.0) {
        let ops = vec![PoseOp::sample(0, 0, 0.0), PoseOp::sample(1, 1, 0.0), PoseOp::blend(2, 0, 2, 0)];
        let scaled = run(&[a, b], &[], ops.clone(), vec![2.0 * w, 2.0 * w], 2);
        let unit = run(&[a, b], &[], ops, vec![0.5, 0.5], 2);
        prop_assert_eq!(scaled, unit);
    }

    #[test]
    fn blend_matches_independent_weighted_sum(a in poses(), b in poses(), c in poses()) {
        let ops = vec![
            PoseOp::sample(0, 0, 0.0), PoseOp::sample(1, 1, 0.0), PoseOp::sample(2, 2, 0.0),
            PoseOp::blend(3, 0, 3, 1),
        ];
        let out = run(&[a, b, c], &[], ops, vec![9.0, 1.0, 2.0, 1.0], 3);
        for j in 0..JOINTS {
            let (w0, w1, w2) = (0.25, 0.5, 0.25);
            let t = a[j].translation * w0 + b[j].translation * w1 + c[j].translation * w2;
            let s = a[j].scale * w0 + b[j].scale * w1 + c[j].scale * w2;
            let first = Vec4::from(a[j].rotation);
            let align = |q: Quat| { let v = Vec4::from(q); if v.dot(first) < 0.0 { -v } else { v } };
            let q = first * w0 + align(b[j].rotation) * w1 + align(c[j].rotation) * w2;
            prop_assume!(q.length() > 1e-3);
            let want = trs(t.to_array(), Quat::from_vec4(q.normalize()), s.to_array());
            prop_assert!(trs_err(&out[j], &want) < 1e-5, "joint {}: {:?} vs {:?}", j, out[j], want);
        }
    }

    #[test]
    fn opposite_hemisphere_inputs_blend_to_the_first(a in poses(), w in 0.1f32..0.9) {
        let mut b = a;
        for p in &mut b {
            p.rotation = -p.rotation;
        }
        let ops = vec![PoseOp::sample(0, 0, 0.0), PoseOp::sample(1, 1, 0.0), PoseOp::blend(2, 0, 2, 0)];
        let out = run(&[a, b], &[], ops, vec![w, 1.0 - w], 2);
        for j in 0..JOINTS {
            // Without the hemisphere flip, q and -q would cancel toward zero.
            prop_assert!((Vec4::from(out[j].rotation) - Vec4::from(a[j].rotation)).abs().max_element() < 1e-5);
        }
    }

    #[test]
    fn override_mask_zero_keeps_dst_and_full_weight_takes_src(a in poses(), b in poses()) {
        let rig = rig();
        let masks = [Mask::uniform("none", 0, &rig, 0.0), Mask::uniform("all", 0, &rig, 1.0)];
        let load = || vec![PoseOp::sample(0, 0, 0.0), PoseOp::sample(1, 1, 0.0)];
        let mut ops = load();
        ops.push(PoseOp::overriding(0, 1, 1.0, 0));
        prop_assert!(max_err(&run(&[a, b], &masks, ops, vec![], 0), &a) < 1e-6);
        let mut ops = load();
        ops.push(PoseOp::overriding(0, 1, 1.0, 1));
        prop_assert!(max_err(&run(&[a, b], &masks, ops, vec![], 0), &b) < 1e-6);
        let mut ops = load();
        ops.push(PoseOp::overriding(0, 1, 1.0, NO_MASK));
        prop_assert!(max_err(&run(&[a, b], &masks, ops, vec![], 0), &b) < 1e-6);
        let mut ops = load();
        ops.push(PoseOp::overriding(0, 1, 0.0, NO_MASK));
        prop_assert!(max_err(&run(&[a, b], &masks, ops, vec![], 0), &a) < 1e-6);
    }

    #[test]
    fn additive_on_its_reference_reconstructs_the_source(a in poses(), r in poses(), b in poses()) {
        let load = || vec![PoseOp::sample(0, 0, 0.0), PoseOp::sample(1, 1, 0.0), PoseOp::sample(2, 2, 0.0)];
        // Additive(dst = R, src = A, ref = R, 1) == A.
        let mut ops = load();
        ops.push(PoseOp::additive(1, 0, 1, 1.0, NO_MASK));
        prop_assert!(max_err(&run(&[a, r, b], &[], ops, vec![], 1), &a) < 1e-4);
        // Weight 0 leaves any base unchanged.
        let mut ops = load();
        ops.push(PoseOp::additive(2, 0, 1, 0.0, NO_MASK));
        prop_assert!(max_err(&run(&[a, r, b], &[], ops, vec![], 2), &b) < 1e-6);
    }

    #[test]
    fn override_joint_interpolates_between_dst_and_src(a in any_trs(), b in any_trs(), w in 0.0f32..1.0) {
        let out = override_joint(&a, &b, w);
        prop_assert!(vec_err(out.translation, a.translation + (b.translation - a.translation) * w) < 1e-5);
        prop_assert!(vec_err(out.scale, a.scale + (b.scale - a.scale) * w) < 1e-5);
        prop_assert!((out.rotation.length() - 1.0).abs() < 1e-5);
    }
}

#[test]
fn near_zero_blend_weight_sum_gives_rest() {
    let p = [trs([1.0, 2.0, 3.0], Quat::from_rotation_y(1.0), [2.0, 2.0, 2.0]); JOINTS];
    let ops = vec![
        PoseOp::sample(0, 0, 0.0),
        PoseOp::sample(1, 0, 0.0),
        PoseOp::blend(2, 0, 2, 0),
    ];
    for weights in [vec![0.0, 0.0], vec![4e-7, 5e-7]] {
        let out = run(&[p], &[], ops.clone(), weights.clone(), 2);
        assert_eq!(out, rig().rest, "weights {weights:?}");
    }
    // Just above epsilon the weights are normalised instead.
    let out = run(&[p], &[], ops, vec![1e-6, 1e-6], 2);
    assert!(max_err(&out, &p) < 1e-6);
}

#[test]
fn override_with_a_subtree_mask_replaces_only_that_subtree() {
    let rig = rig();
    let a = [Trs::IDENTITY; JOINTS];
    let b = [trs([1.0, 0.0, 0.0], Quat::from_rotation_x(1.0), [2.0, 1.0, 1.0]); JOINTS];
    // Joint 3 (arm) and its child 4 (hand), at half weight.
    let mask = Mask::subtree("arm", 0, &rig, 3, 1.0).expect("joint 3 exists");
    assert_eq!(mask.weights, vec![0.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
    let ops = vec![
        PoseOp::sample(0, 0, 0.0),
        PoseOp::sample(1, 1, 0.0),
        PoseOp::overriding(0, 1, 0.5, 0),
    ];
    let out = run(&[a, b], &[mask], ops, vec![], 0);
    for (j, p) in out.iter().enumerate() {
        let want = if j == 3 || j == 4 {
            trs([0.5, 0.0, 0.0], Quat::from_rotation_x(0.5), [1.5, 1.0, 1.0])
        } else {
            Trs::IDENTITY
        };
        assert!(trs_err(p, &want) < 1e-6, "joint {j}: {p:?}");
    }
    assert!(Mask::subtree("x", 0, &rig, JOINTS, 1.0).is_none());
}

#[test]
fn additive_matches_hand_computed_partial_weight() {
    // A differs from R by +1 in x, 0.8 rad about z and double scale; half weight on base B adds
    // +0.5 in x, 0.4 rad about z (after B's rotation) and 1.5x scale.
    let r = trs([0.0, 1.0, 0.0], Quat::from_rotation_y(0.3), [1.0, 2.0, 1.0]);
    let a = trs(
        [1.0, 1.0, 0.0],
        r.rotation * Quat::from_rotation_z(0.8),
        [2.0, 4.0, 2.0],
    );
    let b = trs([5.0, 5.0, 5.0], Quat::from_rotation_x(1.2), [1.0, 1.0, 3.0]);
    let out = additive_joint(&b, &a, &r, 0.5);
    assert!(vec_err(out.translation, Vec3::new(5.5, 5.0, 5.0)) < 1e-6);
    assert!(quat_err(out.rotation, b.rotation * Quat::from_rotation_z(0.4)) < 1e-6);
    assert!(vec_err(out.scale, Vec3::new(1.5, 1.5, 4.5)) < 1e-6);
}

#[test]
fn additive_mask_scales_the_weight_per_joint() {
    let rig = rig();
    let r = [Trs::IDENTITY; JOINTS];
    let a = [trs([2.0, 0.0, 0.0], Quat::IDENTITY, [1.0, 1.0, 1.0]); JOINTS];
    let mut mask = Mask::uniform("m", 0, &rig, 0.0);
    mask.weights[2] = 0.5;
    let ops = vec![
        PoseOp::sample(0, 0, 0.0),
        PoseOp::sample(1, 1, 0.0),
        PoseOp::rest(2),
        PoseOp::additive(2, 0, 1, 0.5, 0),
    ];
    let out = run(&[a, r], &[mask], ops, vec![], 2);
    for (j, p) in out.iter().enumerate() {
        let dx = if j == 2 { 0.5 } else { 0.0 };
        assert!(
            vec_err(p.translation, rig.rest[j].translation + Vec3::X * dx) < 1e-6,
            "joint {j}"
        );
    }
}

#[test]
fn blend_joint_with_no_inputs_has_rest_rotation() {
    let rest = trs([0.0; 3], Quat::from_rotation_y(0.5), [1.0; 3]);
    let out = blend_joint(std::iter::empty(), &rest);
    assert_eq!(out.rotation, rest.rotation);
}
