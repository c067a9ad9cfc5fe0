//! Cooked uniform-sample playback: exact at samples, lerp / nlerp between, clamped outside.

mod common;

use common::{quat_err, vec_err};
use glam::{Quat, Vec3};
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::{Clip, LoopPolicy, SubTrack, SubTrackKind, Trs, NO_PARENT};

const RATE: f32 = 4.0;
/// Samples at 0, 0.25, 0.5 and 0.6 s: the last interval is 0.1 s, shorter than a period.
const DURATION: f64 = 0.6;
const TIMES: [f32; 4] = [0.0, 0.25, 0.5, 0.6];

fn translations() -> [Vec3; 4] {
    [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(1.0, 2.0, 0.0),
        Vec3::new(1.0, 4.0, -2.0),
        Vec3::new(3.0, 4.0, -2.0),
    ]
}

fn rotations() -> [Quat; 4] {
    // The third sample is stored in the opposite hemisphere.
    [
        Quat::IDENTITY,
        Quat::from_rotation_y(0.8),
        -Quat::from_rotation_y(1.4),
        Quat::from_rotation_x(0.3),
    ]
}

fn rest() -> [Trs; 2] {
    [
        common::trs([9.0, 9.0, 9.0], Quat::from_rotation_z(0.1), [1.0, 2.0, 3.0]),
        common::trs(
            [0.0, 1.0, 0.0],
            Quat::from_rotation_x(-0.2),
            [0.5, 0.5, 0.5],
        ),
    ]
}

/// Joint 0: animated t and q, default s. Joint 1: constant t, default q and s.
fn clip() -> Clip {
    let mut values: Vec<f32> = translations().iter().flat_map(|v| v.to_array()).collect();
    values.extend(rotations().iter().flat_map(|q| q.to_array()));
    values.extend([7.0, 8.0, 9.0]);
    let st = |kind, offset| SubTrack { kind, offset };
    Clip {
        name: "test".into(),
        skeleton: 0,
        skeleton_hash: 0,
        duration: DURATION,
        sample_rate: RATE,
        sample_count: 4,
        loop_policy: LoopPolicy::Once,
        profile: "test".into(),
        sub_tracks: vec![
            st(SubTrackKind::Animated, 0),
            st(SubTrackKind::Animated, 12),
            st(SubTrackKind::Default, 0),
            st(SubTrackKind::Constant, 28),
            st(SubTrackKind::Default, 0),
            st(SubTrackKind::Default, 0),
        ],
        values,
        events: vec![],
        markers: vec![],
        root_motion: None,
        compressed: None,
    }
}

fn sample(clip: &Clip, time: f32) -> [Trs; 2] {
    let skeleton = common::skeleton(&[NO_PARENT, 0], &rest());
    let mut local = [Trs::IDENTITY; 2];
    sample_clip(clip, &skeleton, time, &mut local);
    local
}

#[test]
fn sample_times_return_the_samples() {
    let clip = clip();
    for (i, &t) in TIMES.iter().enumerate() {
        assert_eq!(clip.sample_time(i as u32) as f32, t);
        let pose = sample(&clip, t);
        assert_eq!(pose[0].translation, translations()[i], "sample {i}");
        assert!(
            quat_err(pose[0].rotation, rotations()[i]) < 1e-7,
            "sample {i}"
        );
    }
}

#[test]
fn between_samples_lerps_and_nlerps_shortest() {
    let clip = clip();
    let (t, r) = (translations(), rotations());
    let pose = sample(&clip, 0.3125); // a fifth of the way from 0.25 to 0.5
    assert!(vec_err(pose[0].translation, t[1] + (t[2] - t[1]) * 0.25) < 1e-6);
    // Independent nlerp: flip the second sample into the first's hemisphere by hand.
    let (a, b) = (glam::Vec4::from(r[1]), -glam::Vec4::from(r[2]));
    let want = Quat::from_vec4((a * 0.75 + b * 0.25).normalize());
    assert!(quat_err(pose[0].rotation, want) < 1e-6);
}

#[test]
fn last_interval_is_shorter() {
    let clip = clip();
    let (t, r) = (translations(), rotations());
    // 0.55 s is halfway between the samples at 0.5 and 0.6 s.
    let pose = sample(&clip, 0.55);
    assert!(vec_err(pose[0].translation, (t[2] + t[3]) * 0.5) < 1e-5);
    let want = Quat::from_vec4((-glam::Vec4::from(r[2]) + glam::Vec4::from(r[3])).normalize());
    assert!(quat_err(pose[0].rotation, want) < 1e-5);
}

#[test]
fn time_is_clamped_to_the_clip() {
    let clip = clip();
    let (t, r) = (translations(), rotations());
    for time in [-1.0, f32::NEG_INFINITY, f32::NAN] {
        let pose = sample(&clip, time);
        assert_eq!(pose[0].translation, t[0], "time {time}");
    }
    for time in [0.6, 0.61, 100.0, f32::INFINITY] {
        let pose = sample(&clip, time);
        assert_eq!(pose[0].translation, t[3], "time {time}");
        assert!(quat_err(pose[0].rotation, r[3]) < 1e-7, "time {time}");
    }
}

#[test]
fn default_sub_tracks_are_rest_and_constants_hold() {
    let rest = rest();
    for time in [0.0, 0.2, 0.6] {
        let pose = sample(&clip(), time);
        assert_eq!(pose[0].scale, rest[0].scale);
        assert_eq!(pose[1].translation, Vec3::new(7.0, 8.0, 9.0));
        assert_eq!(pose[1].rotation, rest[1].rotation);
        assert_eq!(pose[1].scale, rest[1].scale);
    }
}

#[test]
fn non_power_of_two_rate_hits_its_samples() {
    // 30 Hz, 11 samples over 1/3 s: sample i holds translation x = i.
    let mut clip = clip();
    clip.sample_rate = 30.0;
    clip.sample_count = 11;
    clip.duration = 1.0 / 3.0;
    clip.sub_tracks = vec![SubTrack {
        kind: SubTrackKind::Animated,
        offset: 0,
    }];
    clip.values = (0..11).flat_map(|i| [i as f32, 0.0, 0.0]).collect();
    for i in 0..11u32 {
        let pose = sample(&clip, clip.sample_time(i) as f32);
        assert!(
            (pose[0].translation.x - i as f32).abs() < 1e-4,
            "sample {i}: {}",
            pose[0].translation.x
        );
    }
    let pose = sample(&clip, 0.05); // 1.5 periods
    assert!((pose[0].translation.x - 1.5).abs() < 1e-4);
}

#[test]
fn malformed_clips_fall_back_to_rest() {
    let rest = rest();
    let mut clip = clip();
    clip.sub_tracks[0].offset = u32::MAX; // out of range
    clip.sub_tracks[1].offset = 26; // runs past the end of `values` at later samples
    clip.sub_tracks.truncate(4); // joint 1's q and s missing
    let pose = sample(&clip, 0.6);
    assert_eq!(pose[0].translation, rest[0].translation);
    assert_eq!(pose[0].rotation, rest[0].rotation);
    assert_eq!(pose[1].rotation, rest[1].rotation);
    clip.sample_rate = 0.0;
    clip.sample_count = 0;
    let pose = sample(&clip, 0.3);
    assert!(
        pose.iter().all(Trs::is_finite),
        "a zero rate reads sample 0: {pose:?}"
    );
}
