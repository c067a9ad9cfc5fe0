//! `Evaluator::run` allocates nothing: a counting global allocator watches this thread.

mod common;

use glam::Affine3A;
use throng_cpu_ref::program::NO_MASK;
use throng_cpu_ref::{Assets, Evaluator, Mask, PoseOp, Program, ProgramLimits, SkinBinding};
use throng_fixtures::alloc::{allocations, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn run_does_not_allocate() {
    let rig = common::branching_rig();
    let clips = [common::pose_clip(&rig.rest, 0)];
    let skins = [SkinBinding {
        name: "s".into(),
        skeleton: 0,
        joints: vec![0, 1, 2, 3, 4, 5],
        inverse_bind: vec![Affine3A::IDENTITY; 6],
    }];
    let masks = [Mask::subtree("arm", 0, &rig, 3, 1.0).expect("joint 3")];
    let assets = Assets {
        skeleton: &rig,
        skeleton_index: 0,
        clips: &clips,
        skins: &skins,
        masks: &masks,
        curves: &throng_cpu_ref::scalar::NO_CURVES,
    };
    let program = Program {
        ops: vec![
            PoseOp::sample(0, 0, 0.1),
            PoseOp::rest(1),
            PoseOp::blend(2, 0, 2, 0),
            PoseOp::overriding(2, 0, 0.7, 0),
            PoseOp::additive(2, 0, 1, 0.5, NO_MASK),
            PoseOp::to_component(2),
            PoseOp::palette(0),
        ],
        weights: vec![0.3, 0.7],
    };
    let bad = Program {
        ops: vec![PoseOp::sample(0, 9, 0.0)],
        weights: vec![],
    };
    let mut ev = Evaluator::new(ProgramLimits::default(), rig.joint_count(), 6);
    let during = allocations(|| {
        for _ in 0..10 {
            ev.run(&program, &assets).expect("valid program");
        }
        assert!(ev.run(&bad, &assets).is_err());
    });
    // The counter itself works: this Vec is counted.
    let counted = allocations(|| drop(std::hint::black_box(vec![1u8; 16])));
    assert!(counted > 0, "allocator counts");
    assert_eq!(during, 0, "run allocated {during} times");
    assert_eq!(ev.palette().len(), 6);
}
