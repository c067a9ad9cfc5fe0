//! Resampling, classification, loop policy and profiles on hand-built source clips.

use glam::{Affine3A, Quat, Vec3};
use throng_cook::{cook, CookError, Imported, Profile};
use throng_cpu_ref::{
    Channel, ChannelPath, Interpolation, LoopPolicy, Package, Skeleton, SourceClip, SubTrackKind,
    Trs, NO_PARENT,
};

fn skeleton() -> Skeleton {
    let rest = vec![
        Trs {
            translation: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            scale: Vec3::ONE,
        },
        Trs {
            translation: Vec3::Y,
            rotation: Quat::from_rotation_z(0.3),
            scale: Vec3::ONE,
        },
    ];
    Skeleton::new(
        vec![NO_PARENT, 0],
        rest,
        vec!["hips".into(), "spine".into()],
        vec![0, 1],
        Affine3A::IDENTITY,
    )
    .unwrap()
}

fn channel(
    joint: u32,
    path: ChannelPath,
    interpolation: Interpolation,
    times: &[f32],
    values: &[f32],
) -> Channel {
    Channel {
        joint,
        path,
        interpolation,
        times: times.to_vec(),
        values: values.to_vec(),
    }
}

fn imported(channels: Vec<Channel>, duration: f32) -> Imported {
    Imported {
        source: "hand-built".into(),
        package: Package {
            skeletons: vec![skeleton()],
            ..Package::default()
        },
        source_clips: vec![SourceClip {
            name: "clip".into(),
            skeleton: 0,
            channels,
            duration,
        }],
        source_weight_clips: Vec::new(),
        clip_meta: Vec::new(),
        lod_pins: Vec::new(),
        warnings: Vec::new(),
    }
}

#[test]
fn sample_count_puts_the_last_sample_at_the_duration() {
    for (duration, rate, expected) in [
        (1.0f32, 30.0f32, 31u32),
        (0.7083333, 30.0, 23),
        (2.0, 60.0, 121),
        (0.0, 30.0, 1),
        (0.01, 30.0, 2),
    ] {
        let t = channel(
            0,
            ChannelPath::Translation,
            Interpolation::Linear,
            &[0.0, duration.max(1e-3)],
            &[0.0; 6],
        );
        let profile = Profile {
            name: "test",
            sample_rate: rate,
            max_rate: rate,
        };
        let (package, report) = cook(&imported(vec![t], duration), &profile).unwrap();
        let clip = &package.clips[0];
        assert_eq!(
            clip.sample_count, expected,
            "duration {duration} at {rate} Hz"
        );
        assert_eq!(clip.duration, f64::from(duration));
        assert_eq!(clip.sample_time(expected - 1), f64::from(duration));
        assert_eq!(report.clips[0].samples, expected);
    }
}

#[test]
fn sub_tracks_are_classified_default_constant_or_animated() {
    let rest_q = Quat::from_rotation_z(0.3).to_array();
    let channels = vec![
        // hips translation moves: animated.
        channel(
            0,
            ChannelPath::Translation,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0],
        ),
        // spine scale holds one non-rest value: constant.
        channel(
            1,
            ChannelPath::Scale,
            Interpolation::Step,
            &[0.25],
            &[2.0, 2.0, 2.0],
        ),
        // spine rotation keyed at its rest value (negated: same rotation): default.
        channel(
            1,
            ChannelPath::Rotation,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[rest_q, rest_q.map(|x| -x)].concat(),
        ),
    ];
    let (package, report) = cook(&imported(channels, 1.0), &Profile::DEFAULT).unwrap();
    let clip = &package.clips[0];
    let kinds: Vec<SubTrackKind> = clip.sub_tracks.iter().map(|t| t.kind).collect();
    use SubTrackKind::*;
    assert_eq!(
        kinds,
        [Animated, Default, Default, Default, Default, Constant]
    );
    assert_eq!(clip.values.len(), 31 * 3 + 3);
    assert_eq!(
        &clip.values[clip.sub_tracks[5].offset as usize..][..3],
        &[2.0, 2.0, 2.0]
    );
    // Sample i of the animated translation is at i / 30 s.
    let x = |i: usize| clip.values[clip.sub_tracks[0].offset as usize + 3 * i];
    assert_eq!(x(0), 0.0);
    assert!((x(15) - 0.5).abs() < 1e-6);
    assert_eq!(x(30), 1.0);
    let row = &report.clips[0];
    assert_eq!((row.animated, row.constant, row.default), (1, 1, 4));
    assert_eq!(row.bytes, 4 * clip.values.len() + 8 * 6);
    assert_eq!(clip.skeleton_hash, package.skeletons[0].identity_hash());
    assert_eq!(clip.profile, "standard");
    assert!(clip.events.is_empty() && clip.markers.is_empty());
}

#[test]
fn rotation_samples_are_hemisphere_continuous() {
    // Keys alternate sign: the same slow turn about y, stored as q, -q, q, ...
    let times: Vec<f32> = (0..9).map(|k| k as f32 * 0.125).collect();
    let values: Vec<f32> = times
        .iter()
        .enumerate()
        .flat_map(|(k, &t)| {
            let q = Quat::from_rotation_y(t * 2.0);
            (if k % 2 == 0 { q } else { -q }).to_array()
        })
        .collect();
    let r = channel(
        0,
        ChannelPath::Rotation,
        Interpolation::Linear,
        &times,
        &values,
    );
    let (package, report) = cook(&imported(vec![r], 1.0), &Profile::HERO).unwrap();
    let clip = &package.clips[0];
    let track =
        &clip.values[clip.sub_tracks[1].offset as usize..][..4 * clip.sample_count as usize];
    for pair in track.chunks_exact(4).collect::<Vec<_>>().windows(2) {
        let dot: f32 = pair[0].iter().zip(pair[1]).map(|(a, b)| a * b).sum();
        assert!(dot > 0.0, "{pair:?}");
    }
    // Slerp between keys vs nlerp between 60 Hz samples of a 2 rad/s turn: tiny error.
    assert!(
        report.clips[0].max_error_cm < 1e-3,
        "{}",
        report.clips[0].max_error_cm
    );
}

#[test]
fn loop_policy_follows_whether_the_last_pose_is_the_first() {
    let cycle = channel(
        1,
        ChannelPath::Translation,
        Interpolation::Linear,
        &[0.0, 0.5, 1.0],
        &[0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0],
    );
    let (package, _) = cook(&imported(vec![cycle], 1.0), &Profile::DEFAULT).unwrap();
    assert_eq!(package.clips[0].loop_policy, LoopPolicy::Loop);
    let ramp = channel(
        1,
        ChannelPath::Translation,
        Interpolation::Linear,
        &[0.0, 1.0],
        &[0.0, 1.0, 0.0, 1.0, 1.0, 0.0],
    );
    let (package, _) = cook(&imported(vec![ramp], 1.0), &Profile::DEFAULT).unwrap();
    assert_eq!(package.clips[0].loop_policy, LoopPolicy::Once);
    // Travel left in the pose (no root motion extracted) means the last pose is not the first.
    let travel = channel(
        0,
        ChannelPath::Translation,
        Interpolation::Linear,
        &[0.0, 1.0],
        &[0.0, 0.0, 0.0, 0.0, 0.0, 1.4],
    );
    let (package, _) = cook(&imported(vec![travel], 1.0), &Profile::DEFAULT).unwrap();
    assert_eq!(package.clips[0].loop_policy, LoopPolicy::Once);
}

#[test]
fn clip_time_is_absolute_and_channels_hold_before_their_first_key() {
    // Keys start at 0.5 s (like CesiumMan's 0.0417 s): samples before hold the first key.
    let t = channel(
        0,
        ChannelPath::Translation,
        Interpolation::Linear,
        &[0.5, 1.0],
        &[1.0, 0.0, 0.0, 2.0, 0.0, 0.0],
    );
    let (package, report) = cook(&imported(vec![t], 1.0), &Profile::DEFAULT).unwrap();
    let clip = &package.clips[0];
    assert_eq!(clip.sample_count, 31);
    let x = |i: usize| clip.values[clip.sub_tracks[0].offset as usize + 3 * i];
    assert_eq!((x(0), x(15), x(30)), (1.0, 1.0, 2.0));
    assert!((x(21) - 1.4).abs() < 1e-6, "{}", x(21));
    assert!(report.clips[0].max_error_cm < 1e-4);
}

#[test]
fn a_cubic_spline_overshooting_into_negative_scale_is_an_error() {
    // Values 1 → 1 with a huge negative out-tangent: the curve dips below zero in between.
    let values = [[0.0; 3], [1.0; 3], [-40.0; 3], [0.0; 3], [1.0; 3], [0.0; 3]].concat();
    let s = channel(
        1,
        ChannelPath::Scale,
        Interpolation::CubicSpline,
        &[0.0, 1.0],
        &values,
    );
    let err = cook(&imported(vec![s], 1.0), &Profile::DEFAULT).unwrap_err();
    assert!(
        matches!(&err, CookError::Clip { clip, reason, .. } if clip == "clip" && reason.contains("'spine'")),
        "{err:?}"
    );
}

#[test]
fn a_clip_naming_a_missing_skeleton_or_joint_is_an_error() {
    let mut bad = imported(Vec::new(), 1.0);
    bad.source_clips[0].skeleton = 3;
    assert!(matches!(
        cook(&bad, &Profile::DEFAULT),
        Err(CookError::Clip { .. })
    ));
    let t = channel(
        7,
        ChannelPath::Translation,
        Interpolation::Step,
        &[0.0],
        &[0.0; 3],
    );
    assert!(matches!(
        cook(&imported(vec![t], 1.0), &Profile::DEFAULT),
        Err(CookError::Clip { .. })
    ));
}

#[test]
fn profiles_parse_by_name() {
    assert_eq!(Profile::parse("hero").unwrap().sample_rate, 60.0);
    assert_eq!(Profile::parse("standard").unwrap(), Profile::DEFAULT);
    assert_eq!(Profile::parse("crowd").unwrap().name, "crowd");
    let err = Profile::parse("ultra").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown quality profile 'ultra'; valid profiles: hero, standard, crowd"
    );
}

#[test]
fn a_clip_too_long_to_sample_is_refused_before_its_poses_are_allocated() {
    let refused = |duration: f32, profile: &Profile| {
        let err = cook(&imported(Vec::new(), duration), profile).unwrap_err();
        match err {
            CookError::Clip { clip, reason, .. } => {
                assert_eq!(clip, "clip");
                reason
            }
            other => panic!("expected a clip error, got {other:?}"),
        }
    };
    // 400 000 s at the standard 30 Hz is 1.2e7 samples.
    assert_eq!(Profile::STANDARD.sample_rate, 30.0);
    let reason = refused(400_000.0, &Profile::STANDARD);
    assert_eq!(reason, "duration 400000 s cannot be sampled at 30 Hz");
    // The bound is strict: exactly 1e7 samples (1e7 s at 1 Hz) is refused.
    let slow = Profile {
        name: "slow",
        sample_rate: 1.0,
        max_rate: 1.0,
    };
    assert!(refused(1e7, &slow).contains("cannot be sampled"));
    assert!(refused(f32::NAN, &Profile::STANDARD).contains("cannot be sampled"));
}
