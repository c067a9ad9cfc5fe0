//! glTF-exact source sampling against hand-computed values.

mod common;

use std::f32::consts::PI;

use common::{quat_err, vec_err};
use glam::{Quat, Vec3};
use throng_cpu_ref::{
    curve::sample_exact, Channel, ChannelPath, Interpolation, SourceClip, Trs, NO_PARENT,
};

fn channel(
    path: ChannelPath,
    interpolation: Interpolation,
    times: &[f32],
    values: &[f32],
) -> Channel {
    Channel {
        joint: 1,
        path,
        interpolation,
        times: times.to_vec(),
        values: values.to_vec(),
    }
}

fn v3(c: &Channel, t: f32) -> Vec3 {
    Vec3::from_slice(&c.sample(t).expect("channel has keys"))
}

fn q(c: &Channel, t: f32) -> Quat {
    Quat::from_array(c.sample(t).expect("channel has keys"))
}

fn rot_z(angle: f32) -> [f32; 4] {
    Quat::from_rotation_z(angle).to_array()
}

#[test]
fn step_holds_each_key_until_the_next() {
    let c = channel(
        ChannelPath::Translation,
        Interpolation::Step,
        &[1.0, 2.0, 4.0],
        &[0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 5.0, 5.0, 5.0],
    );
    let cases = [
        (0.5, [0.0, 0.0, 0.0]),
        (1.0, [0.0, 0.0, 0.0]),
        (1.99, [0.0, 0.0, 0.0]),
        (2.0, [1.0, 2.0, 3.0]),
        (3.9, [1.0, 2.0, 3.0]),
        (4.0, [5.0, 5.0, 5.0]),
        (10.0, [5.0, 5.0, 5.0]),
    ];
    for (t, want) in cases {
        assert_eq!(v3(&c, t), Vec3::from_array(want), "t = {t}");
    }
}

#[test]
fn linear_lerps_translation_and_scale() {
    let c = channel(
        ChannelPath::Scale,
        Interpolation::Linear,
        &[1.0, 3.0],
        &[1.0, 1.0, 1.0, 3.0, 5.0, -7.0],
    );
    // u = (1.5 - 1) / 2 = 0.25.
    assert!(vec_err(v3(&c, 1.5), Vec3::new(1.5, 2.0, -1.0)) < 1e-6);
    assert!(vec_err(v3(&c, 2.0), Vec3::new(2.0, 3.0, -3.0)) < 1e-6);
    assert_eq!(v3(&c, 0.0), Vec3::ONE, "before the first key");
    assert_eq!(v3(&c, 3.5), Vec3::new(3.0, 5.0, -7.0), "after the last key");
}

#[test]
fn linear_slerps_rotation_at_constant_angular_speed() {
    // 0 → 150 degrees about z between t = 2 and t = 5: at u = 1/3 the angle is 50 degrees
    // (an nlerp would give about 43.6 degrees).
    let mut values = rot_z(0.0).to_vec();
    values.extend(rot_z(150f32.to_radians()));
    let c = channel(
        ChannelPath::Rotation,
        Interpolation::Linear,
        &[2.0, 5.0],
        &values,
    );
    assert!(quat_err(q(&c, 3.0), Quat::from_rotation_z(50f32.to_radians())) < 1e-6);
    assert!(quat_err(q(&c, 4.4), Quat::from_rotation_z(120f32.to_radians())) < 1e-6);
}

#[test]
fn linear_rotation_takes_the_shortest_arc() {
    // The second key is stored as -q: the arc still goes 0 → 90 degrees, not the long way round.
    let mut values = rot_z(0.0).to_vec();
    values.extend(rot_z(PI / 2.0).map(|x| -x));
    let c = channel(
        ChannelPath::Rotation,
        Interpolation::Linear,
        &[0.0, 1.0],
        &values,
    );
    assert!(quat_err(q(&c, 0.5), Quat::from_rotation_z(PI / 4.0)) < 1e-6);
}

/// One scalar (x) cubic key laid out as (in, value, out) for a translation channel.
fn cubic_key(in_tangent: f32, value: f32, out_tangent: f32) -> [f32; 9] {
    [in_tangent, 0.0, 0.0, value, 0.0, 0.0, out_tangent, 0.0, 0.0]
}

#[test]
fn cubic_spline_scales_tangents_by_the_key_interval() {
    // Keys at t = 1 (v = 1, out = 2) and t = 3 (in = -1, v = 4): dt = 2.
    // p(u) = h00 v0 + h10 dt b0 + h01 v1 + h11 dt a1.
    // u = 0.5: 0.5 + 0.125*4 + 0.5*4 + (-0.125)*(-2) = 3.25.
    // u = 0.25: 0.84375 + 0.140625*4 + 0.15625*4 + (-0.046875)*(-2) = 2.125.
    let mut values = cubic_key(7.0, 1.0, 2.0).to_vec();
    values.extend(cubic_key(-1.0, 4.0, 9.0));
    let c = channel(
        ChannelPath::Translation,
        Interpolation::CubicSpline,
        &[1.0, 3.0],
        &values,
    );
    assert!((v3(&c, 2.0).x - 3.25).abs() < 1e-6);
    assert!((v3(&c, 1.5).x - 2.125).abs() < 1e-6);
    assert_eq!(v3(&c, 1.0).x, 1.0);
    assert_eq!(
        v3(&c, 0.0).x,
        1.0,
        "before the first key: the value, not the in-tangent"
    );
    assert_eq!(v3(&c, 3.0).x, 4.0);
    assert_eq!(
        v3(&c, 8.0).x,
        4.0,
        "after the last key: the value, not the out-tangent"
    );
    // The curve leaves the first key with slope = out-tangent (2 per second, not 2 per interval).
    let h = 1e-3;
    let slope = (v3(&c, 1.0 + h).x - 1.0) / h;
    assert!((slope - 2.0).abs() < 1e-2, "slope {slope}");
}

#[test]
fn cubic_spline_rotation_is_normalised() {
    // Zero tangents, keys 0 and 90 degrees about z: the midpoint is the normalised average, 45 degrees.
    let mut values = [0.0; 4].to_vec();
    values.extend(rot_z(0.0));
    values.extend([0.0; 4]);
    values.extend([0.0; 4]);
    values.extend(rot_z(PI / 2.0));
    values.extend([0.0; 4]);
    let c = channel(
        ChannelPath::Rotation,
        Interpolation::CubicSpline,
        &[0.0, 1.0],
        &values,
    );
    let mid = q(&c, 0.5);
    assert!((mid.length() - 1.0).abs() < 1e-6);
    assert!(quat_err(mid, Quat::from_rotation_z(PI / 4.0)) < 1e-6);
}

#[test]
fn single_key_channels_hold_their_value() {
    let c = channel(
        ChannelPath::Translation,
        Interpolation::Linear,
        &[0.7],
        &[1.0, 2.0, 3.0],
    );
    for t in [-1.0, 0.0, 0.7, 5.0, f32::NAN] {
        assert_eq!(v3(&c, t), Vec3::new(1.0, 2.0, 3.0), "t = {t}");
    }
}

#[test]
fn malformed_channels_sample_to_none() {
    let empty = channel(ChannelPath::Translation, Interpolation::Linear, &[], &[]);
    assert_eq!(empty.sample(0.0), None);
    let short = channel(
        ChannelPath::Translation,
        Interpolation::CubicSpline,
        &[0.0, 1.0],
        &[0.0; 9],
    );
    assert_eq!(short.sample(0.5), None);
}

#[test]
fn sample_exact_overwrites_rest_with_animated_paths_only() {
    let rest = [
        Trs::IDENTITY,
        common::trs([1.0, 2.0, 3.0], Quat::from_rotation_x(0.5), [2.0, 2.0, 2.0]),
    ];
    let skeleton = common::skeleton(&[NO_PARENT, 0], &rest);
    // Translation keys start at 0.5 s (absolute clip time).
    let clip = SourceClip {
        name: "c".into(),
        skeleton: 0,
        channels: vec![
            channel(
                ChannelPath::Translation,
                Interpolation::Linear,
                &[0.5, 1.5],
                &[0.0, 0.0, 0.0, 4.0, 0.0, 0.0],
            ),
            Channel {
                joint: 7,
                ..channel(
                    ChannelPath::Scale,
                    Interpolation::Step,
                    &[0.0],
                    &[5.0, 5.0, 5.0],
                )
            },
        ],
        duration: 1.5,
    };
    let mut local = [Trs::IDENTITY; 2];
    sample_exact(&clip, &skeleton, 0.0, &mut local);
    assert_eq!(local[0], rest[0]);
    assert_eq!(
        local[1].translation,
        Vec3::ZERO,
        "first key holds before 0.5 s"
    );
    assert_eq!(local[1].rotation, rest[1].rotation);
    assert_eq!(local[1].scale, rest[1].scale);
    sample_exact(&clip, &skeleton, 1.0, &mut local);
    assert!(vec_err(local[1].translation, Vec3::new(2.0, 0.0, 0.0)) < 1e-6);
}
