//! `Program::validate` and `Evaluator::run` reject every kind of bad program with a typed error,
//! and never panic, whatever the op bytes.

mod common;

use glam::Affine3A;
use proptest::prelude::*;
use throng_cpu_ref::program::NO_MASK;
use throng_cpu_ref::{
    Assets, Clip, Evaluator, Mask, PoseOp, Program, ProgramError, ProgramLimits, Skeleton,
    SkinBinding,
};

const JOINTS: usize = 6;

struct Fixture {
    skeleton: Skeleton,
    clips: Vec<Clip>,
    skins: Vec<SkinBinding>,
    masks: Vec<Mask>,
}

/// Skeleton 0 (the branching rig) with clip 0 for it and clip 1 for skeleton 1; skin 0 binds
/// joints 0, 2, 4 of it and skin 1 binds skeleton 1; mask 0 is valid, mask 1 too short, mask 2
/// has a weight above 1, mask 3 a NaN, mask 4 belongs to skeleton 1.
fn fixture() -> Fixture {
    let skeleton = common::branching_rig();
    let clip = common::pose_clip(&skeleton.rest, 0);
    let other = common::pose_clip(&skeleton.rest, 1);
    let skin = |skeleton| SkinBinding {
        name: "s".into(),
        skeleton,
        joints: vec![0, 2, 4],
        inverse_bind: vec![Affine3A::from_translation(glam::Vec3::Y); 3],
    };
    let mut over = Mask::uniform("over", 0, &skeleton, 0.5);
    over.weights[1] = 1.5;
    let mut nan = Mask::uniform("nan", 0, &skeleton, 0.5);
    nan.weights[5] = f32::NAN;
    let masks = vec![
        Mask::uniform("ok", 0, &skeleton, 0.5),
        Mask {
            name: "short".into(),
            skeleton: 0,
            weights: vec![1.0; JOINTS - 1],
        },
        over,
        nan,
        Mask::uniform("other skeleton", 1, &skeleton, 0.5),
    ];
    Fixture {
        skeleton,
        clips: vec![clip, other],
        skins: vec![skin(0), skin(1)],
        masks,
    }
}

impl Fixture {
    fn assets(&self) -> Assets<'_> {
        Assets {
            skeleton: &self.skeleton,
            skeleton_index: 0,
            clips: &self.clips,
            skins: &self.skins,
            masks: &self.masks,
            curves: &throng_cpu_ref::scalar::NO_CURVES,
        }
    }

    fn check(&self, ops: Vec<PoseOp>, weights: Vec<f32>) -> Result<(), ProgramError> {
        Program { ops, weights }.validate(&ProgramLimits::default(), &self.assets())
    }
}

fn err(ops: Vec<PoseOp>, weights: Vec<f32>) -> ProgramError {
    fixture()
        .check(ops, weights)
        .expect_err("program is invalid")
}

#[test]
fn a_full_program_is_valid() {
    let ops = vec![
        PoseOp::sample(0, 0, 0.5),
        PoseOp::rest(1),
        PoseOp::blend(2, 0, 2, 0),
        PoseOp::overriding(2, 0, 0.5, 0),
        PoseOp::additive(2, 0, 1, 1.0, NO_MASK),
        PoseOp::to_component(2),
        PoseOp::palette(0),
    ];
    assert_eq!(fixture().check(ops, vec![1.0, 0.0]), Ok(()));
}

#[test]
fn capacities() {
    let limits = ProgramLimits::default();
    let ops = vec![PoseOp::rest(0); limits.max_ops + 1];
    assert_eq!(
        err(ops, vec![]),
        ProgramError::Capacity {
            what: "ops",
            count: 33,
            limit: 32
        }
    );
    let weights = vec![1.0; limits.max_weights + 1];
    assert_eq!(
        err(vec![PoseOp::rest(0)], weights),
        ProgramError::Capacity {
            what: "weights",
            count: 33,
            limit: 32
        }
    );

    let f = fixture();
    let program = Program {
        ops: vec![PoseOp::rest(0), PoseOp::to_component(0), PoseOp::palette(0)],
        weights: vec![],
    };
    let mut small = Evaluator::new(limits, JOINTS - 1, 3);
    assert_eq!(
        small.run(&program, &f.assets()),
        Err(ProgramError::Capacity {
            what: "joints",
            count: 6,
            limit: 5
        })
    );
    let mut no_palette = Evaluator::new(limits, JOINTS, 2);
    assert_eq!(
        no_palette.run(&program, &f.assets()),
        Err(ProgramError::Capacity {
            what: "palette entries",
            count: 3,
            limit: 2
        })
    );
}

#[test]
fn unknown_op_codes() {
    for code in [0, 10, u32::MAX] {
        let o = PoseOp {
            code,
            ..PoseOp::rest(0)
        };
        assert_eq!(
            err(vec![PoseOp::rest(0), o], vec![]),
            ProgramError::UnknownOp { op: 1, code }
        );
    }
}

#[test]
fn registers_out_of_range_or_unwritten() {
    assert_eq!(
        err(vec![PoseOp::rest(8)], vec![]),
        ProgramError::Register {
            op: 0,
            register: 8,
            limit: 8
        }
    );
    assert_eq!(
        err(
            vec![PoseOp::rest(0), PoseOp::blend(1, 7, 2, 0)],
            vec![1.0, 1.0]
        ),
        ProgramError::Unwritten { op: 1, register: 7 }
    );
    assert_eq!(
        err(
            vec![PoseOp::rest(0), PoseOp::blend(1, 0, 2, 0)],
            vec![1.0, 1.0]
        ),
        ProgramError::Unwritten { op: 1, register: 1 }
    );
    assert_eq!(
        err(
            vec![PoseOp::rest(0), PoseOp::overriding(1, 0, 1.0, NO_MASK)],
            vec![]
        ),
        ProgramError::Unwritten { op: 1, register: 1 }
    );
    assert_eq!(
        err(
            vec![
                PoseOp::rest(0),
                PoseOp::rest(1),
                PoseOp::additive(1, 0, 2, 1.0, NO_MASK)
            ],
            vec![]
        ),
        ProgramError::Unwritten { op: 2, register: 2 }
    );
    assert_eq!(
        err(vec![PoseOp::to_component(0)], vec![]),
        ProgramError::Unwritten { op: 0, register: 0 }
    );
    assert_eq!(
        err(
            vec![PoseOp::rest(7), PoseOp::blend(0, 7, 2, 0)],
            vec![1.0, 1.0]
        ),
        ProgramError::Register {
            op: 1,
            register: 8,
            limit: 8
        }
    );
}

#[test]
fn a_register_file_larger_than_sixty_four_is_clamped_to_sixty_four() {
    let f = fixture();
    let limits = ProgramLimits {
        max_registers: 100,
        ..ProgramLimits::default()
    };
    let check = |ops: Vec<PoseOp>| {
        Program {
            ops,
            weights: vec![],
        }
        .validate(&limits, &f.assets())
    };
    assert_eq!(limits.registers(), 64);
    assert_eq!(
        check(vec![PoseOp::rest(64)]),
        Err(ProgramError::Register {
            op: 0,
            register: 64,
            limit: 64
        })
    );
    assert_eq!(
        check(vec![PoseOp::rest(63), PoseOp::to_component(63)]),
        Ok(()),
        "register 63 is the last one, and it can be written and read"
    );
}

#[test]
fn clips_must_exist_and_fit_the_skeleton() {
    assert_eq!(
        err(vec![PoseOp::sample(0, 2, 0.0)], vec![]),
        ProgramError::MissingClip {
            op: 0,
            clip: 2,
            count: 2
        }
    );
    assert_eq!(
        err(vec![PoseOp::sample(0, 1, 0.0)], vec![]),
        ProgramError::ClipSkeleton { op: 0, clip: 1 }
    );
    let mut f = fixture();
    f.clips[0].sub_tracks.pop();
    assert_eq!(
        f.check(vec![PoseOp::sample(0, 0, 0.0)], vec![]),
        Err(ProgramError::ClipSkeleton { op: 0, clip: 0 })
    );
}

#[test]
fn masks_must_exist_and_hold_one_unit_weight_per_joint() {
    let with_mask = |mask| {
        vec![
            PoseOp::rest(0),
            PoseOp::rest(1),
            PoseOp::overriding(0, 1, 1.0, mask),
        ]
    };
    assert_eq!(
        err(with_mask(5), vec![]),
        ProgramError::MissingMask {
            op: 2,
            mask: 5,
            count: 5
        }
    );
    assert_eq!(
        err(with_mask(4), vec![]),
        ProgramError::MaskSkeleton {
            op: 2,
            mask: 4,
            skeleton: 1
        },
        "a mask of another skeleton"
    );
    assert_eq!(
        err(with_mask(1), vec![]),
        ProgramError::BadMask {
            mask: 1,
            len: 5,
            joints: 6
        }
    );
    assert_eq!(
        err(with_mask(2), vec![]),
        ProgramError::BadMask {
            mask: 2,
            len: 6,
            joints: 6
        }
    );
    assert_eq!(
        err(with_mask(3), vec![]),
        ProgramError::BadMask {
            mask: 3,
            len: 6,
            joints: 6
        }
    );
    let additive = vec![PoseOp::rest(0), PoseOp::additive(0, 0, 0, 1.0, 3)];
    assert_eq!(
        err(additive, vec![]),
        ProgramError::BadMask {
            mask: 3,
            len: 6,
            joints: 6
        }
    );
}

#[test]
fn skins_must_exist_and_bind_this_skeleton() {
    let with_skin = |skin| {
        vec![
            PoseOp::rest(0),
            PoseOp::to_component(0),
            PoseOp::palette(skin),
        ]
    };
    assert_eq!(
        err(with_skin(2), vec![]),
        ProgramError::MissingSkin { op: 2, skin: 2 }
    );
    assert_eq!(
        err(with_skin(1), vec![]),
        ProgramError::MissingSkin { op: 2, skin: 1 }
    );
    let mut f = fixture();
    f.skins[0].joints[1] = JOINTS as u32;
    assert_eq!(
        f.check(with_skin(0), vec![]),
        Err(ProgramError::MissingSkin { op: 2, skin: 0 })
    );
}

#[test]
fn weights_and_times_must_be_finite_and_in_range() {
    let blend = |w: f32| err(vec![PoseOp::rest(0), PoseOp::blend(1, 0, 1, 0)], vec![w]);
    for w in [f32::NAN, f32::INFINITY, -0.5] {
        assert!(
            matches!(blend(w), ProgramError::BadValue { op: 1, what: "blend weight", value, .. } if value.to_bits() == w.to_bits()),
            "weight {w}"
        );
    }
    let layer = |w: f32| {
        err(
            vec![PoseOp::rest(0), PoseOp::overriding(0, 0, w, NO_MASK)],
            vec![],
        )
    };
    let additive = |w: f32| {
        err(
            vec![PoseOp::rest(0), PoseOp::additive(0, 0, 0, w, NO_MASK)],
            vec![],
        )
    };
    for w in [f32::NAN, 1.5, -0.1, f32::NEG_INFINITY] {
        assert!(
            matches!(
                layer(w),
                ProgramError::BadValue {
                    op: 1,
                    what: "layer weight",
                    ..
                }
            ),
            "override {w}"
        );
        assert!(
            matches!(
                additive(w),
                ProgramError::BadValue {
                    op: 1,
                    what: "layer weight",
                    ..
                }
            ),
            "additive {w}"
        );
    }
    for t in [f32::NAN, f32::INFINITY] {
        assert!(matches!(
            err(vec![PoseOp::sample(0, 0, t)], vec![]),
            ProgramError::BadValue {
                op: 0,
                what: "sample time",
                ..
            }
        ));
    }
    assert!(matches!(
        err(vec![PoseOp::rest(0), PoseOp::blend(1, 0, 0, 0)], vec![]),
        ProgramError::BadValue {
            op: 1,
            what: "blend input count",
            ..
        }
    ));
}

#[test]
fn blend_weights_must_lie_in_the_pool() {
    assert_eq!(
        err(
            vec![PoseOp::rest(0), PoseOp::rest(1), PoseOp::blend(2, 0, 2, 1)],
            vec![1.0, 1.0]
        ),
        ProgramError::WeightRange {
            op: 2,
            offset: 1,
            count: 2,
            pool: 2
        }
    );
    assert_eq!(
        err(
            vec![PoseOp::rest(0), PoseOp::blend(2, 0, 1, u32::MAX)],
            vec![1.0]
        ),
        ProgramError::WeightRange {
            op: 1,
            offset: u32::MAX,
            count: 1,
            pool: 1
        }
    );
}

#[test]
fn to_component_once_and_before_palette() {
    assert_eq!(
        err(vec![PoseOp::rest(0), PoseOp::palette(0)], vec![]),
        ProgramError::Order {
            op: 1,
            what: "Palette before ToComponent"
        }
    );
    assert_eq!(
        err(
            vec![
                PoseOp::rest(0),
                PoseOp::to_component(0),
                PoseOp::to_component(0)
            ],
            vec![]
        ),
        ProgramError::Order {
            op: 2,
            what: "a second ToComponent"
        }
    );
}

#[test]
fn a_rejected_program_leaves_the_previous_outputs() {
    let f = fixture();
    let mut ev = Evaluator::new(ProgramLimits::default(), JOINTS, 8);
    let good = Program {
        ops: vec![
            PoseOp::sample(0, 0, 0.0),
            PoseOp::to_component(0),
            PoseOp::palette(0),
        ],
        weights: vec![],
    };
    ev.run(&good, &f.assets()).expect("valid");
    let (local, component, palette) = (
        ev.local(0).unwrap().to_vec(),
        ev.component().to_vec(),
        ev.palette().to_vec(),
    );
    assert_eq!(palette.len(), 3);
    let bad = Program {
        ops: vec![PoseOp::rest(0), PoseOp::to_component(0), PoseOp::palette(5)],
        weights: vec![],
    };
    assert!(ev.run(&bad, &f.assets()).is_err());
    assert_eq!(ev.local(0).unwrap(), &local[..]);
    assert_eq!(ev.component(), &component[..]);
    assert_eq!(ev.palette(), &palette[..]);
}

fn any_op() -> impl Strategy<Value = PoseOp> {
    // Small values hit valid ops often; any u32 / f32 bits cover the rest.
    let field = || prop_oneof![0u32..10, any::<u32>()];
    let float = || prop_oneof![0.0f32..1.0, any::<u32>().prop_map(f32::from_bits)];
    (
        field(),
        field(),
        field(),
        field(),
        field(),
        field(),
        float(),
        float(),
    )
        .prop_map(|(code, dst, a, b, c, d, weight, time)| PoseOp {
            code,
            dst,
            a,
            b,
            c,
            d,
            weight,
            time,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn garbage_programs_never_panic(
        ops in prop::collection::vec(any_op(), 0..12),
        weights in prop::collection::vec(any::<u32>().prop_map(f32::from_bits), 0..6),
    ) {
        let f = fixture();
        let program = Program { ops, weights };
        let mut ev = Evaluator::new(ProgramLimits::default(), JOINTS, 8);
        let validated = program.validate(&ProgramLimits::default(), &f.assets());
        let ran = ev.run(&program, &f.assets());
        prop_assert_eq!(validated.is_ok(), ran.is_ok());
        if ran.is_ok() {
            prop_assert!(ev.component().iter().all(|m| m.is_finite()));
            prop_assert!(ev.palette().iter().all(|m| m.is_finite()));
        }
    }

    #[test]
    fn valid_garbage_stays_finite(ops in prop::collection::vec(any_op(), 0..12)) {
        // Prefixing rests to every register makes more of the random ops valid.
        let f = fixture();
        let mut all = (0..8).map(PoseOp::rest).collect::<Vec<_>>();
        all.extend(ops);
        let program = Program { ops: all, weights: vec![0.5, 0.0, 2.0, 1.0] };
        let mut ev = Evaluator::new(ProgramLimits::default(), JOINTS, 8);
        if ev.run(&program, &f.assets()).is_ok() {
            for r in 0..8 {
                prop_assert!(ev.local(r).unwrap().iter().all(|t| t.is_finite()));
            }
        }
    }
}

#[test]
fn history_ops_name_one_declared_slot_and_sane_times() {
    let f = fixture();
    let limits = ProgramLimits {
        history_slots: 2,
        ..Default::default()
    };
    let check = |ops: Vec<PoseOp>| {
        Program {
            ops,
            weights: vec![],
        }
        .validate(&limits, &f.assets())
    };
    let base = || vec![PoseOp::rest(0), PoseOp::rest(1), PoseOp::rest(2)];
    let with = |extra: Vec<PoseOp>| [base(), extra].concat();
    assert_eq!(
        check(with(vec![
            PoseOp::capture(0, 1, 2, 1, 1, 1e-4),
            PoseOp::inertialize(0, 1, 0.0, 60.0),
        ])),
        Ok(())
    );
    assert_eq!(
        check(with(vec![PoseOp::inertialize(0, 2, 0.0, 0.3)])),
        Err(ProgramError::HistorySlot {
            op: 3,
            slot: 2,
            slots: 2
        })
    );
    assert!(matches!(
        check(with(vec![
            PoseOp::inertialize(1, 0, 0.1, 0.3),
            PoseOp::inertialize(0, 1, 0.0, 0.3),
        ])),
        Err(ProgramError::Order { op: 4, .. })
    ));
    // 1e-43 is a denormal a fuzzer found: its reciprocal is infinite, and the velocity NaN
    // (fuzz/regressions/program_eval/capture-interval-denormal).
    for dt in [0.0, -1.0, f32::NAN, f32::INFINITY, 1e-43, 0.99e-4] {
        assert!(matches!(
            check(with(vec![PoseOp::capture(0, 1, 2, 1, 0, dt)])),
            Err(ProgramError::BadValue { op: 3, .. })
        ));
    }
    for (elapsed, duration) in [
        (-0.1, 0.3),
        (0.0, -0.3),
        (f32::NAN, 0.3),
        (0.0, f32::INFINITY),
        (0.0, 60.01),
    ] {
        assert!(matches!(
            check(with(vec![PoseOp::inertialize(0, 0, elapsed, duration)])),
            Err(ProgramError::BadValue { op: 3, .. })
        ));
    }
    // The previous-destination register must have been written.
    assert_eq!(
        check(with(vec![PoseOp::capture(0, 1, 2, 5, 0, 0.02)])),
        Err(ProgramError::Unwritten { op: 3, register: 5 })
    );
}
