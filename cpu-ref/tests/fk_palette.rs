//! Forward kinematics and palettes against direct glam `Mat4` composition on a branching rig
//! with non-uniform scale (so component transforms carry shear).

mod common;

use common::any_trs;
use glam::{Affine3A, Mat4, Quat, Vec3};
use proptest::prelude::*;
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::{
    Assets, Evaluator, PoseOp, Program, ProgramLimits, SkinBinding, Trs, NO_PARENT,
};

/// Component matrices by walking each joint's ancestor chain root-first and multiplying `Mat4`s.
fn by_mat4(parents: &[u32], local: &[Trs]) -> Vec<Mat4> {
    (0..parents.len())
        .map(|j| {
            let mut chain = vec![j];
            while parents[*chain.last().unwrap()] != NO_PARENT {
                chain.push(parents[*chain.last().unwrap()] as usize);
            }
            chain.iter().rev().fold(Mat4::IDENTITY, |m, &k| {
                m * Mat4::from_scale_rotation_translation(
                    local[k].scale,
                    local[k].rotation,
                    local[k].translation,
                )
            })
        })
        .collect()
}

fn max_diff(a: &Affine3A, b: &Mat4) -> f32 {
    (Mat4::from(*a) - *b)
        .to_cols_array()
        .iter()
        .fold(0.0f32, |m, x| m.max(x.abs()))
}

#[test]
fn fk_matches_mat4_products_on_the_rest_pose() {
    let rig = common::branching_rig();
    let mut component = vec![Affine3A::IDENTITY; rig.joint_count()];
    local_to_component(&rig, &rig.rest, &mut component);
    let want = by_mat4(&rig.parents, &rig.rest);
    for j in 0..rig.joint_count() {
        assert!(max_diff(&component[j], &want[j]) < 1e-5, "joint {j}");
    }
    // The non-uniform parent scale shears the hand: its axes are no longer orthogonal.
    let hand = component[4].matrix3;
    assert!(hand.x_axis.normalize().dot(hand.y_axis.normalize()).abs() > 1e-2);
}

#[test]
fn fk_hand_computed_two_joint_chain() {
    // Parent scales x by 2 and turns 90 degrees about z; the child sits 1 along x.
    let rest = [
        common::trs(
            [0.0, 0.0, 1.0],
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            [2.0, 1.0, 1.0],
        ),
        common::trs([1.0, 0.0, 0.0], Quat::IDENTITY, [1.0, 1.0, 1.0]),
    ];
    let rig = common::skeleton(&[NO_PARENT, 0], &rest);
    let mut component = [Affine3A::IDENTITY; 2];
    local_to_component(&rig, &rest, &mut component);
    // Child origin: scale (1,0,0) → (2,0,0), rotate → (0,2,0), translate → (0,2,1).
    assert!(
        (component[1].translation - glam::Vec3A::new(0.0, 2.0, 1.0))
            .abs()
            .max_element()
            < 1e-6
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn evaluator_component_and_palette_match_mat4(pose in [any_trs(), any_trs(), any_trs(), any_trs(), any_trs(), any_trs()]) {
        let rig = common::branching_rig();
        let clips = [common::pose_clip(&pose, 0)];
        let ibm = |k: f32| Affine3A::from_scale_rotation_translation(Vec3::splat(1.0 + k), Quat::from_rotation_y(k), Vec3::new(k, -k, 0.5));
        let skin = SkinBinding { name: "s".into(), skeleton: 0, joints: vec![5, 2, 4], inverse_bind: vec![ibm(0.1), ibm(0.2), ibm(0.3)] };
        let skins = [skin.clone(), SkinBinding { joints: vec![1], inverse_bind: vec![ibm(0.4)], ..skin.clone() }];
        let assets = Assets { skeleton: &rig, skeleton_index: 0, clips: &clips, skins: &skins, masks: &[] , curves: &throng_cpu_ref::scalar::NO_CURVES};
        let program = Program {
            ops: vec![PoseOp::sample(3, 0, 0.0), PoseOp::to_component(3), PoseOp::palette(0), PoseOp::palette(1)],
            weights: vec![],
        };
        let mut ev = Evaluator::new(ProgramLimits::default(), 6, 4);
        ev.run(&program, &assets).expect("valid");
        let want = by_mat4(&rig.parents, &pose);
        let scale = want.iter().map(|m| m.abs().to_cols_array().iter().fold(1.0f32, |a, &b| a.max(b))).fold(1.0, f32::max);
        for (j, (got, want)) in ev.component().iter().zip(&want).enumerate() {
            prop_assert!(max_diff(got, want) < 1e-5 * scale, "joint {}", j);
        }
        prop_assert_eq!(ev.component().len(), 6);
        // Palettes are concatenated in op order: skin 0's three entries, then skin 1's one.
        let expected = [(5, ibm(0.1)), (2, ibm(0.2)), (4, ibm(0.3)), (1, ibm(0.4))];
        prop_assert_eq!(ev.palette().len(), 4);
        for (k, (joint, m)) in expected.iter().enumerate() {
            prop_assert!(max_diff(&ev.palette()[k], &(want[*joint] * Mat4::from(*m))) < 1e-5 * scale, "entry {}", k);
        }
    }
}
