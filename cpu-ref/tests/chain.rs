//! The merged socket chains (`throng_cpu_ref::chain`): each shared ancestor evaluated once, the
//! same transforms as one chain per target.

use glam::Affine3A;
use throng_cpu_ref::chain::ChainEvaluator;
use throng_cpu_ref::skeleton::Skeleton;
use throng_cpu_ref::{Package, PoseOp, Program, ProgramLimits};

fn character() -> Package {
    let glb = throng_fixtures::character_glb();
    let imported = throng_cook::import_slice(&glb, "character").expect("the character imports");
    throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)
        .expect("the character cooks")
        .0
}

fn ancestors(skeleton: &Skeleton, mut j: usize) -> Vec<usize> {
    let mut chain = vec![j];
    while (skeleton.parents[j] as usize) < j {
        j = skeleton.parents[j] as usize;
        chain.push(j);
    }
    chain
}

#[test]
fn merged_chains_evaluate_each_shared_ancestor_once_and_match_one_chain_per_target() {
    let package = character();
    let skeleton = &package.skeletons[0];
    let joint = |name: &str| skeleton.names.iter().position(|n| n == name).expect(name);
    let targets = [joint("hand_r"), joint("hand_l"), joint("head")];
    let limits = ProgramLimits {
        max_ops: 2,
        max_registers: 1,
        max_weights: 0,
        history_slots: 0,
    };
    let mut merged = ChainEvaluator::new(skeleton, &targets, limits).expect("joints exist");
    let mut union: Vec<usize> = targets
        .iter()
        .flat_map(|&t| ancestors(skeleton, t))
        .collect();
    union.sort_unstable();
    union.dedup();
    assert_eq!(merged.chain(), union);
    assert!(union.len() < targets.iter().map(|&t| ancestors(skeleton, t).len()).sum());

    let assets = package.assets(0).expect("skeleton 0");
    let program = Program {
        ops: vec![PoseOp::sample(0, 1, 0.37), PoseOp::to_component(0)],
        weights: Vec::new(),
    };
    let mut out = [Affine3A::ZERO; 3];
    merged
        .run(&program, &assets, &mut out)
        .expect("a valid program");
    for (&t, got) in targets.iter().zip(out) {
        let mut alone = ChainEvaluator::new(skeleton, &[t], limits).expect("joint exists");
        let mut want = [Affine3A::ZERO];
        alone
            .run(&program, &assets, &mut want)
            .expect("a valid program");
        assert_eq!(got, want[0], "joint {t}");
    }
    assert!(ChainEvaluator::new(skeleton, &[skeleton.joint_count()], limits).is_none());
}

#[test]
fn a_run_taking_first_samples_is_bit_for_bit_one_that_samples_them_and_ignores_another_chains() {
    let package = character();
    let skeleton = &package.skeletons[0];
    let joint = |name: &str| skeleton.names.iter().position(|n| n == name).expect(name);
    let targets = [joint("hand_r"), joint("head")];
    let limits = ProgramLimits {
        max_ops: 8,
        max_registers: 3,
        max_weights: 2,
        history_slots: 0,
    };
    let assets = package.assets(0).expect("skeleton 0");
    let clips = package.clips.len() as u32;
    let mut chains = ChainEvaluator::new(skeleton, &targets, limits).expect("joints exist");
    // Every clip's first sample, and one the package lacks (left out).
    let all: Vec<u32> = (0..=clips).collect();
    let first = chains.first_samples(&assets, &all);
    // Samples of another chain, which a run ignores.
    let other = ChainEvaluator::new(skeleton, &[joint("hand_l")], limits)
        .expect("joint exists")
        .first_samples(&assets, &all);
    let bits = |m: &[Affine3A]| -> Vec<u32> {
        m.iter()
            .flat_map(|a| a.to_cols_array())
            .map(f32::to_bits)
            .collect()
    };
    for clip in 0..clips {
        for (time, reference) in [(0.0, 0.0), (0.4, 0.0), (-0.0, 0.0), (0.4, 0.3)] {
            let program = Program {
                ops: vec![
                    PoseOp::sample(0, clip, 0.25),
                    PoseOp::sample(1, clip, time),
                    PoseOp::sample(2, (clip + 1) % clips, reference),
                    PoseOp::additive(0, 1, 2, 1.0, throng_cpu_ref::program::NO_MASK),
                    PoseOp::to_component(0),
                ],
                weights: Vec::new(),
            };
            let (mut with, mut without) = ([Affine3A::ZERO; 2], [Affine3A::ZERO; 2]);
            let mut with_other = [Affine3A::ZERO; 2];
            chains
                .run_with(&program, &assets, &first, &mut with)
                .expect("a valid program");
            chains
                .run(&program, &assets, &mut without)
                .expect("a valid program");
            chains
                .run_with(&program, &assets, &other, &mut with_other)
                .expect("a valid program");
            assert_eq!(bits(&with), bits(&without), "clip {clip} at {time}");
            assert_eq!(bits(&with_other), bits(&without), "clip {clip} at {time}");
        }
    }
}
