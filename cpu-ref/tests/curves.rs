//! Scalar curves through pose programs (throng-cpu-ref `scalar`): sampling, each composition
//! through Blend, Override and Additive, cover gating, selections, the output's range, and
//! what validation refuses. Expected values are worked out by hand from the module's table.

mod common;

use throng_cpu_ref::program::NO_MASK;
use throng_cpu_ref::scalar::CurveError;
use throng_cpu_ref::{
    Assets, Clip, Composition, CurveChannel, CurveSelection, CurveTrack, Curves, Evaluator, PoseOp,
    Program, ProgramError, ProgramLimits, Skeleton, Trs,
};

/// Three clips of the branching rig at rest, each 1 s with 3 samples (0, 0.5, 1 s).
fn clips(skeleton: &Skeleton) -> Vec<Clip> {
    (0..3)
        .map(|_| Clip {
            duration: 1.0,
            sample_rate: 2.0,
            sample_count: 3,
            ..common::pose_clip(&skeleton.rest, 0)
        })
        .collect()
}

fn channel(name: &str, composition: Composition, default: f32) -> CurveChannel {
    CurveChannel {
        name: name.into(),
        skeleton: 0,
        default,
        min: -10.0,
        max: 10.0,
        composition,
    }
}

fn track(clip: u32, channel: u32, values: [f32; 3]) -> CurveTrack {
    CurveTrack {
        clip,
        channel,
        values: values.to_vec(),
        quantized: None,
    }
}

/// One channel of each composition; clip 0 animates all five, clip 1 the first four (not
/// `min`), clip 2 only `blend`.
fn curves() -> Curves {
    let compositions = [
        ("blend", Composition::Blend),
        ("override", Composition::Override),
        ("additive", Composition::Additive),
        ("max", Composition::Max),
        ("min", Composition::Min),
    ];
    let channels = compositions
        .iter()
        .map(|&(name, c)| channel(name, c, 0.5))
        .collect();
    let mut tracks: Vec<CurveTrack> = (0..5).map(|k| track(0, k, [0.0, 1.0, 2.0])).collect();
    tracks.extend((0..4).map(|k| track(1, k, [4.0, 4.0, 4.0])));
    tracks.push(track(2, 0, [-2.0, -2.0, -2.0]));
    Curves {
        channels,
        tracks,
        selections: vec![CurveSelection {
            name: "blend and max".into(),
            skeleton: 0,
            weights: vec![0.5, 0.0, 0.0, 1.0, 0.0],
        }],
    }
}

/// Runs `ops` and returns the program's curve output (the `ToComponent` register's).
fn run_with(
    curves: &Curves,
    ops: Vec<PoseOp>,
    weights: Vec<f32>,
) -> Result<Vec<f32>, ProgramError> {
    let skeleton = common::branching_rig();
    let clips = clips(&skeleton);
    let assets = Assets {
        skeleton: &skeleton,
        skeleton_index: 0,
        clips: &clips,
        skins: &[],
        masks: &[],
        curves,
    };
    let joints = skeleton.joint_count();
    let mut ev = Evaluator::with_curves(ProgramLimits::default(), joints, 0, 8);
    ev.run(&Program { ops, weights }, &assets)?;
    Ok(ev.curves().to_vec())
}

fn run(ops: Vec<PoseOp>, weights: Vec<f32>) -> Vec<f32> {
    run_with(&curves(), ops, weights).expect("valid program")
}

fn near(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{got:?} against {want:?}");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() < 1e-6,
            "channel {k}: {got:?} against {want:?}"
        );
    }
}

#[test]
fn a_sampled_curve_lerps_the_clips_samples_and_a_missing_track_reads_the_default() {
    // 0.75 s lies halfway between the samples at 0.5 (1.0) and 1.0 (2.0).
    let out = run(
        vec![PoseOp::sample(0, 0, 0.75), PoseOp::to_component(0)],
        vec![],
    );
    near(&out, &[1.5; 5]);
    // Clip 2 has only `blend`; the others hold their default. Past the end clamps to 1 s.
    let out = run(
        vec![PoseOp::sample(0, 2, 5.0), PoseOp::to_component(0)],
        vec![],
    );
    near(&out, &[-2.0, 0.5, 0.5, 0.5, 0.5]);
    let out = run(vec![PoseOp::rest(0), PoseOp::to_component(0)], vec![]);
    near(&out, &[0.5; 5]);
}

#[test]
fn a_blend_averages_blend_curves_takes_the_heaviest_for_override_and_reduces_max_and_min() {
    // Clip 0 at 0 s (all 0.0) weighs 1, clip 1 (4.0, no `min` track) weighs 3.
    let ops = vec![
        PoseOp::sample(0, 0, 0.0),
        PoseOp::sample(1, 1, 0.0),
        PoseOp::blend(2, 0, 2, 0),
        PoseOp::to_component(2),
    ];
    let out = run(ops, vec![1.0, 3.0]);
    // blend, additive: 0.25 · 0 + 0.75 · 4 = 3; override: the heavier (clip 1) 4; max: 4;
    // min: only clip 0 animates it, 0.
    near(&out, &[3.0, 4.0, 3.0, 4.0, 0.0]);
}

#[test]
fn a_blend_whose_inputs_lack_a_curve_mixes_in_its_default() {
    // Clip 2 animates `blend` only: the other inputs' default (0.5) enters the average and the
    // reducers see no input with cover.
    let ops = vec![
        PoseOp::sample(0, 2, 0.0),
        PoseOp::rest(1),
        PoseOp::blend(2, 0, 2, 0),
        PoseOp::to_component(2),
    ];
    let out = run(ops, vec![1.0, 1.0]);
    near(&out, &[-0.75, 0.5, 0.5, 0.5, 0.5]);
}

#[test]
fn an_override_layer_moves_only_the_curves_its_source_animates() {
    // Base: clip 0 at 0.5 s (all 1.0). Layer: clip 2 (`blend` = -2 only) at weight 0.5.
    let ops = vec![
        PoseOp::sample(0, 0, 0.5),
        PoseOp::sample(1, 2, 0.0),
        PoseOp::overriding(0, 1, 0.5, NO_MASK),
        PoseOp::to_component(0),
    ];
    near(&run(ops, vec![]), &[-0.5, 1.0, 1.0, 1.0, 1.0]);
    // Layer clip 1 (4.0 on four channels) at weight 0.25: blend lerps (1.75), override takes
    // it, additive adds 0.25 · 4, max takes the larger; `min` has no track in clip 1.
    let ops = vec![
        PoseOp::sample(0, 0, 0.5),
        PoseOp::sample(1, 1, 0.0),
        PoseOp::overriding(0, 1, 0.25, NO_MASK),
        PoseOp::to_component(0),
    ];
    near(&run(ops, vec![]), &[1.75, 4.0, 2.0, 4.0, 1.0]);
}

#[test]
fn a_curve_selection_weighs_each_curve_of_a_layer() {
    // The selection weighs `blend` 0.5 and `max` 1, the others 0.
    let ops = vec![
        PoseOp::sample(0, 0, 0.5),
        PoseOp::sample(1, 1, 0.0),
        PoseOp::overriding(0, 1, 1.0, NO_MASK).with_curves(0),
        PoseOp::to_component(0),
    ];
    near(&run(ops, vec![]), &[2.5, 1.0, 1.0, 4.0, 1.0]);
}

#[test]
fn an_additive_layer_adds_its_difference_from_the_reference() {
    // Base clip 0 at 0 s (0.0); source clip 0 at 1 s (2.0) over reference clip 0 at 0.5 s (1.0),
    // weight 0.5: blend and additive add 0.5 · (2 - 1); override and the reducers take the
    // source where the layer weighs.
    let ops = vec![
        PoseOp::sample(0, 0, 0.0),
        PoseOp::sample(1, 0, 1.0),
        PoseOp::sample(2, 0, 0.5),
        PoseOp::additive(0, 1, 2, 0.5, NO_MASK),
        PoseOp::to_component(0),
    ];
    near(&run(ops, vec![]), &[0.5, 2.0, 0.5, 2.0, 0.0]);
}

#[test]
fn the_output_is_clamped_to_each_channels_range_but_registers_are_not() {
    let mut c = curves();
    c.channels[0].max = 0.75;
    c.channels[0].default = 0.5;
    let skeleton = common::branching_rig();
    let clips = clips(&skeleton);
    let assets = Assets {
        skeleton: &skeleton,
        skeleton_index: 0,
        clips: &clips,
        skins: &[],
        masks: &[],
        curves: &c,
    };
    let mut ev = Evaluator::with_curves(ProgramLimits::default(), skeleton.joint_count(), 0, 8);
    let ops = vec![PoseOp::sample(0, 0, 1.0), PoseOp::to_component(0)];
    ev.run(
        &Program {
            ops,
            weights: vec![],
        },
        &assets,
    )
    .unwrap();
    assert_eq!(ev.curves()[0], 0.75);
    let register = ev.curve_register(0).unwrap();
    assert_eq!((register[0].value, register[0].cover), (2.0, 1.0));
}

#[test]
fn validation_refuses_a_missing_or_foreign_curve_selection_and_too_many_channels() {
    let layer = |selection: u32| {
        vec![
            PoseOp::sample(0, 0, 0.0),
            PoseOp::overriding(0, 0, 1.0, NO_MASK).with_curves(selection),
            PoseOp::to_component(0),
        ]
    };
    assert_eq!(
        run_with(&curves(), layer(3), vec![]),
        Err(ProgramError::MissingCurveSelection {
            op: 1,
            selection: 3,
            count: 1
        })
    );
    let mut foreign = curves();
    foreign.selections[0].skeleton = 1;
    assert_eq!(
        run_with(&foreign, layer(0), vec![]),
        Err(ProgramError::BadCurveSelection {
            op: 1,
            selection: 0,
            skeleton: 1
        })
    );
    let mut short = curves();
    short.selections[0].weights.pop();
    assert!(matches!(
        run_with(&short, layer(0), vec![]),
        Err(ProgramError::BadCurveSelection { .. })
    ));
    let mut many = curves();
    many.channels
        .extend((0..4).map(|k| channel(&format!("extra{k}"), Composition::Blend, 0.0)));
    assert_eq!(
        run_with(&many, layer(0), vec![]).unwrap_err(),
        ProgramError::Capacity {
            what: "curve channels",
            count: 9,
            limit: 8
        }
    );
}

#[test]
fn an_evaluator_made_without_curve_capacity_evaluates_joints_only() {
    let skeleton = common::branching_rig();
    let clips = clips(&skeleton);
    let curves = curves();
    let assets = Assets {
        skeleton: &skeleton,
        skeleton_index: 0,
        clips: &clips,
        skins: &[],
        masks: &[],
        curves: &curves,
    };
    let mut ev = Evaluator::new(ProgramLimits::default(), skeleton.joint_count(), 0);
    let ops = vec![PoseOp::sample(0, 0, 0.5), PoseOp::to_component(0)];
    ev.run(
        &Program {
            ops,
            weights: vec![],
        },
        &assets,
    )
    .unwrap();
    assert!(ev.curves().is_empty());
    assert_eq!(ev.curve_register(0), Some(&[][..]));
}

/// A change that makes [`curves`] invalid.
type Damage = Box<dyn Fn(&mut Curves)>;

#[test]
fn curves_validate_against_the_packages_clips_and_say_what_is_wrong() {
    let skeleton = common::branching_rig();
    let clips = clips(&skeleton);
    assert_eq!(curves().validate(&clips, 1), Ok(()));
    let cases: Vec<(Damage, &str)> = vec![
        (Box::new(|c| c.tracks[3].values[1] = f32::NAN), "not finite"),
        (
            Box::new(|c| c.tracks[0].values.push(0.0)),
            "4 values for the clip's 3 samples",
        ),
        (Box::new(|c| c.tracks.swap(0, 1)), "not sorted"),
        (
            Box::new(|c| c.tracks[9].clip = 7),
            "the clip does not exist",
        ),
        (
            Box::new(|c| c.channels[1].name = "blend".into()),
            "a second channel",
        ),
        (Box::new(|c| c.channels[2].min = f32::NAN), "is empty"),
        (Box::new(|c| c.channels[2].default = 20.0), "default 20"),
        (
            Box::new(|c| c.channels[4].skeleton = 3),
            "skeleton 3 does not exist",
        ),
        (
            Box::new(|c| c.selections[0].weights[0] = 1.5),
            "weight 1.5 is outside",
        ),
    ];
    for (damage, want) in cases {
        let mut c = curves();
        damage(&mut c);
        let e = c.validate(&clips, 1).expect_err(want);
        assert!(e.to_string().contains(want), "{e} should say '{want}'");
        assert!(matches!(
            e,
            CurveError::Channel { .. } | CurveError::Track { .. } | CurveError::Selection { .. }
        ));
    }
}

#[test]
fn a_skeleton_without_channels_evaluates_as_before() {
    let skeleton = common::branching_rig();
    let clips = clips(&skeleton);
    let program = Program {
        ops: vec![PoseOp::sample(0, 0, 0.3), PoseOp::to_component(0)],
        weights: vec![],
    };
    let mut poses: Vec<Vec<Trs>> = Vec::new();
    for curves in [&throng_cpu_ref::scalar::NO_CURVES, &curves()] {
        let assets = Assets {
            skeleton: &skeleton,
            skeleton_index: 0,
            clips: &clips,
            skins: &[],
            masks: &[],
            curves,
        };
        let mut ev = Evaluator::with_curves(ProgramLimits::default(), skeleton.joint_count(), 0, 8);
        ev.run(&program, &assets).unwrap();
        poses.push(ev.local(0).unwrap().to_vec());
    }
    assert_eq!(poses[0], poses[1], "curves change no joint");
}

#[test]
fn a_quantized_track_reads_back_every_packed_sample_at_every_width() {
    use throng_cpu_ref::scalar::MAX_CURVE_BITS;
    use throng_cpu_ref::QuantizedTrack;
    let mut rng = throng_fixtures::SplitMix64::new(62);
    for bits in 0..=MAX_CURVE_BITS {
        let ks: Vec<u32> = (0..77)
            .map(|_| (rng.next_u64() as u32) & ((1u64 << bits) - 1) as u32)
            .collect();
        let q = QuantizedTrack::pack(0.5, 0.25, bits, &ks);
        assert_eq!(q.words.len(), (77 * bits as usize).div_ceil(32));
        for (i, &k) in ks.iter().enumerate() {
            assert_eq!(q.k(i as u32), k, "bits {bits}, sample {i}");
            assert_eq!(q.value(i as u32), 0.5 + k as f32 * 0.25);
        }
    }
    // Wider than the codec stores: clamped, never a panic.
    let q = QuantizedTrack::pack(0.0, 1.0, 40, &[u32::MAX, 3]);
    assert_eq!(
        (q.bits, q.k(0), q.k(1)),
        (MAX_CURVE_BITS, (1 << MAX_CURVE_BITS) - 1, 3)
    );
}
