//! Skeleton LOD on the CPU reference: a level is checked when made, a program at a reduced level
//! evaluates its retained joints as at full detail and holds the dropped ones, frames refuse
//! levels they cannot run, and the level choice has hysteresis.

mod common;

use glam::{Affine3A, Quat};
use throng_cpu_ref::lod::{
    check_levels, lod_fade_for_scale, lod_for_scale, LodError, LodState, LOD_PIXEL_ERROR,
};
use throng_cpu_ref::{
    Batch, CpuRuntime, FrameError, Instance, Outputs, Package, Pose, PoseOp, Program,
    ProgramLimits, SkeletonLod, Trs,
};

use common::{branching_rig, trs};

/// The branching rig's joints: 0 root → 1 spine → 2 head; 1 → 3 arm → 4 hand; 0 → 5 leg.
fn held(n: usize) -> Vec<Trs> {
    (0..n)
        .map(|k| {
            trs(
                [0.1 * k as f32, 0.2, 0.0],
                Quat::from_rotation_z(0.3 + k as f32),
                [1.0, 1.5, 1.0],
            )
        })
        .collect()
}

#[test]
fn a_level_is_refused_unless_ascending_in_range_ancestor_closed_and_well_posed() {
    let rig = branching_rig();
    let ok = SkeletonLod::new(&rig, vec![0, 1, 3], &held(3), 0.01).unwrap();
    assert_eq!(ok.joints(), &[0, 1, 3]);
    assert!(ok.retains(3) && !ok.retains(4) && !ok.retains(5));
    assert_eq!(
        ok.pose()[0],
        rig.rest[0],
        "a retained joint's entry is its rest"
    );
    assert_eq!(
        ok.pose()[2],
        held(3)[0],
        "dropped joints take the poses in order"
    );
    assert_eq!(ok.pose()[5], held(3)[2]);

    let err = |joints: Vec<u32>, pose: Vec<Trs>, e: f32| SkeletonLod::new(&rig, joints, &pose, e);
    assert_eq!(err(vec![], held(6), 0.0), Err(LodError::Empty));
    assert_eq!(
        err(vec![0, 9], held(4), 0.0),
        Err(LodError::OutOfRange {
            joint: 9,
            joints: 6
        })
    );
    assert_eq!(
        err(vec![0, 3, 1], held(3), 0.0),
        Err(LodError::NotAncestorClosed {
            joint: 3,
            parent: 1
        })
    );
    assert_eq!(
        err(vec![1, 0], held(4), 0.0),
        Err(LodError::NotAncestorClosed {
            joint: 1,
            parent: 0
        })
    );
    assert_eq!(
        err(vec![0, 2], held(4), 0.0),
        Err(LodError::NotAncestorClosed {
            joint: 2,
            parent: 1
        })
    );
    assert_eq!(
        err(vec![0, 1], held(3), 0.0),
        Err(LodError::PoseCount {
            count: 3,
            dropped: 4
        })
    );
    let mut bad = held(4);
    bad[1].rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 2.0);
    assert_eq!(
        err(vec![0, 1], bad, 0.0),
        Err(LodError::BadPose { joint: 3 })
    );
    assert!(matches!(
        err(vec![0, 1], held(4), f32::NAN),
        Err(LodError::BadError(_))
    ));
}

#[test]
fn levels_must_be_nested_and_each_coarser_than_the_one_before() {
    let rig = branching_rig();
    let level = |joints: Vec<u32>| {
        let dropped = 6 - joints.len();
        SkeletonLod::new(&rig, joints, &held(dropped), 0.0).unwrap()
    };
    let (a, b, c) = (
        level(vec![0, 1, 3, 5]),
        level(vec![0, 1]),
        level(vec![0, 5]),
    );
    assert_eq!(check_levels(&rig, &[a.clone(), b.clone()]), Ok(()));
    assert_eq!(
        check_levels(&rig, &[b.clone(), a.clone()]),
        Err(LodError::NotNested { level: 2, joint: 3 })
    );
    assert_eq!(
        check_levels(&rig, &[b.clone(), c]),
        Err(LodError::NotNested { level: 2, joint: 5 })
    );
    assert_eq!(
        check_levels(&rig, &[b.clone(), b]),
        Err(LodError::NotCoarser {
            level: 2,
            count: 2,
            previous: 2
        })
    );
    let other = common::skeleton(&[throng_cpu_ref::NO_PARENT, 0], &rig.rest[..2]);
    assert_eq!(
        check_levels(&other, &[a]),
        Err(LodError::OutOfRange {
            joint: 3,
            joints: 2
        })
    );
}

#[test]
fn a_skeleton_with_three_reduced_levels_is_refused_and_two_are_accepted() {
    let rig = branching_rig();
    let level = |joints: Vec<u32>| {
        let dropped = 6 - joints.len();
        SkeletonLod::new(&rig, joints, &held(dropped), 0.0).unwrap()
    };
    let levels = [level(vec![0, 1, 3, 5]), level(vec![0, 1]), level(vec![0])];
    assert_eq!(throng_cpu_ref::lod::MAX_LOD_LEVELS, 2);
    assert_eq!(check_levels(&rig, &levels[..2]), Ok(()));
    assert_eq!(check_levels(&rig, &levels), Err(LodError::TooMany(3)));
    assert_eq!(
        LodError::TooMany(3).to_string(),
        "a skeleton has 3 LOD levels; at most 2 are allowed"
    );
}

/// The branching rig with one level (retaining root, spine and arm), one clip and a package.
fn package() -> Package {
    let mut rig = branching_rig();
    rig.lods = vec![SkeletonLod::new(&rig, vec![0, 1, 3], &held(3), 0.05).unwrap()];
    let clip = common::pose_clip(&held(6), 0);
    Package {
        skeletons: vec![rig],
        skins: vec![],
        meshes: vec![],
        clips: vec![clip],
        masks: vec![],
        impostors: vec![],
        motion_databases: Vec::new(),
        scene: Default::default(),
        curves: Default::default(),
    }
}

fn sampled() -> Program {
    Program {
        ops: vec![PoseOp::sample(0, 0, 0.0), PoseOp::to_component(0)],
        weights: vec![],
    }
}

#[test]
fn a_reduced_level_runs_the_program_on_retained_joints_and_holds_the_dropped_ones() {
    let package = package();
    let mut cpu = CpuRuntime::new(
        ProgramLimits::default(),
        Outputs {
            locals: true,
            ..Default::default()
        },
        1,
    );
    let id = cpu.add_package(&package);
    let program = sampled();
    let instances = [
        Instance {
            pose: Pose::Program(&program),
            placement: Affine3A::IDENTITY,
        },
        Instance {
            pose: Pose::Lod(&program, 1),
            placement: Affine3A::IDENTITY,
        },
        Instance {
            pose: Pose::Lod(&program, 0),
            placement: Affine3A::IDENTITY,
        },
    ];
    let batch = Batch {
        package: id,
        skeleton: 0,
        skin: None,
        instances: &instances,
    };
    cpu.frame(&[batch]).unwrap();
    let out = &cpu.outputs()[0];
    let (full, reduced, zero) = (&out.locals[0..6], &out.locals[6..12], &out.locals[12..18]);
    assert_eq!(full, zero, "level 0 is the program");
    let lod = &package.skeletons[0].lods[0];
    for j in 0..6 {
        if lod.retains(j) {
            assert_eq!(reduced[j], full[j], "retained joint {j}");
        } else {
            assert_eq!(
                reduced[j],
                lod.pose()[j],
                "dropped joint {j} holds its pose"
            );
            assert_ne!(reduced[j], full[j], "the clip moves joint {j} elsewhere");
        }
    }
    let c = &out.components[6..12];
    assert_eq!(
        c[3], out.components[3],
        "a retained chain composes as at full detail"
    );
    let hand = c[3] * lod.pose()[4].to_affine();
    assert!(
        c[4].abs_diff_eq(hand, 1e-6),
        "the dropped hand follows the arm"
    );
}

#[test]
fn frames_refuse_a_level_past_the_skeleton_and_a_reduced_level_with_history() {
    let package = package();
    let limits = ProgramLimits {
        history_slots: 1,
        ..ProgramLimits::default()
    };
    let mut cpu = CpuRuntime::new(limits, Outputs::default(), 1);
    let id = cpu.add_package(&package);
    let program = sampled();
    let capture = Program {
        ops: vec![
            PoseOp::sample(0, 0, 0.0),
            PoseOp::sample(1, 0, 0.0),
            PoseOp::capture(0, 1, 0, 1, 0, 0.1),
            PoseOp::to_component(1),
        ],
        weights: vec![],
    };
    for (pose, says) in [
        (Pose::Lod(&program, 2), "levels 0 to 1"),
        (Pose::Lod(&capture, 1), "needs every joint"),
    ] {
        let instances = [Instance {
            pose,
            placement: Affine3A::IDENTITY,
        }];
        let batch = Batch {
            package: id,
            skeleton: 0,
            skin: None,
            instances: &instances,
        };
        let r = cpu.frame(&[batch]);
        assert!(
            matches!(&r, Err(FrameError::BadInstance { what, .. }) if what.contains(says)),
            "{r:?}"
        );
    }
}

#[test]
fn the_level_choice_goes_coarser_and_finer_only_past_the_hysteresis() {
    let rig = branching_rig();
    let lods = [
        SkeletonLod::new(&rig, vec![0, 1, 3, 5], &held(2), 0.01).unwrap(),
        SkeletonLod::new(&rig, vec![0, 1], &held(4), 0.1).unwrap(),
    ];
    // Pixels per unit at which each level's error projects to exactly LOD_PIXEL_ERROR.
    let (one, two) = (LOD_PIXEL_ERROR / 0.01, LOD_PIXEL_ERROR / 0.1);
    assert_eq!(lod_for_scale(2.0 * one, 0, &lods), 0);
    assert_eq!(lod_for_scale(0.5 * one, 0, &lods), 1);
    assert_eq!(lod_for_scale(0.5 * two, 0, &lods), 2, "far: straight to 2");
    assert_eq!(
        lod_for_scale(1.1 * one, 1, &lods),
        1,
        "inside the band: stays"
    );
    assert_eq!(
        lod_for_scale(0.9 * one, 0, &lods),
        0,
        "inside the band: stays"
    );
    assert_eq!(lod_for_scale(1.3 * one, 1, &lods), 0);
    assert_eq!(lod_for_scale(3.0 * two, 2, &lods), 1);
    assert_eq!(
        lod_for_scale(f32::NAN, 2, &lods),
        0,
        "bad input: full detail"
    );
    assert_eq!(lod_for_scale(0.0, 9, &lods), 2, "a stale level is clamped");
    assert_eq!(lod_for_scale(0.0, 1, &[]), 0, "no levels");
}

/// The mesh LOD cross-fade's choice: walking away from an instance, its level never gets finer
/// and the next level's share rises from 0 to 1 continuously over each level's band (the
/// hysteresis band of `lod_for_scale`, 0.8 to 1.2 px), then the instance is at that level alone.
#[test]
fn the_cross_fade_choice_passes_each_level_to_the_next_continuously_as_it_recedes() {
    let rig = branching_rig();
    let lods = [
        SkeletonLod::new(&rig, vec![0, 1, 3, 5], &held(2), 0.01).unwrap(),
        SkeletonLod::new(&rig, vec![0, 1], &held(4), 0.1).unwrap(),
    ];
    let (one, two) = (LOD_PIXEL_ERROR / 0.01, LOD_PIXEL_ERROR / 0.1);
    let near = |(level, share): (u8, f32), want: (u8, f32)| {
        level == want.0 && (share - want.1).abs() < 1e-5
    };
    assert_eq!(lod_fade_for_scale(2.0 * one, &lods), (0, 0.0));
    assert!(
        near(lod_fade_for_scale(one, &lods), (0, 0.5)),
        "mid-band: half"
    );
    assert_eq!(lod_fade_for_scale(0.5 * one, &lods), (1, 0.0));
    assert!(near(lod_fade_for_scale(two, &lods), (1, 0.5)));
    assert_eq!(lod_fade_for_scale(0.5 * two, &lods), (2, 0.0), "the last");
    assert_eq!(lod_fade_for_scale(f32::NAN, &lods), (0, 0.0), "bad input");
    assert_eq!(lod_fade_for_scale(1.0, &[]), (0, 0.0), "no levels");
    // Receding: the shown mix (level plus share) never goes back and never jumps.
    let mut last = 0.0f32;
    let mut scale = 3.0 * one;
    while scale > 0.2 * two {
        let (level, share) = lod_fade_for_scale(scale, &lods);
        assert!((0.0..1.0).contains(&share), "{share}");
        let mix = f32::from(level) + share;
        assert!(
            mix >= last && mix - last < 0.02,
            "{last} -> {mix} at {scale}"
        );
        last = mix;
        scale *= 0.999;
    }
    assert_eq!(last, 2.0);
}

#[test]
fn lod_state_keeps_each_instances_level_for_its_hysteresis() {
    let rig = branching_rig();
    let lods = [SkeletonLod::new(&rig, vec![0, 1, 3, 5], &held(2), 0.01).unwrap()];
    let one = LOD_PIXEL_ERROR / 0.01;
    let mut state = LodState::new();
    assert_eq!(state.choose(7, 0.5 * one, &lods), 1, "far: level 1");
    assert_eq!(
        state.choose(3, 1.1 * one, &lods),
        0,
        "a new instance starts at 0"
    );
    assert_eq!(
        state.choose(7, 1.1 * one, &lods),
        1,
        "instance 7 stays inside the band"
    );
    assert_eq!(state.choose(7, 1.3 * one, &lods), 0);
}
