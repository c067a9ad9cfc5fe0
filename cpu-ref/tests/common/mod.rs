//! Shared builders for the cpu-ref integration tests.
#![allow(dead_code)]

use glam::{Affine3A, Quat, Vec3};
use throng_cpu_ref::{Skeleton, Trs, NO_PARENT};

/// A skeleton from parents and rest transforms, named `j0..`.
pub fn skeleton(parents: &[u32], rest: &[Trs]) -> Skeleton {
    let n = parents.len();
    Skeleton::new(
        parents.to_vec(),
        rest.to_vec(),
        (0..n).map(|j| format!("j{j}")).collect(),
        (0..n as u32).collect(),
        Affine3A::IDENTITY,
    )
    .expect("test skeleton is valid")
}

pub fn trs(t: [f32; 3], q: Quat, s: [f32; 3]) -> Trs {
    Trs {
        translation: Vec3::from_array(t),
        rotation: q,
        scale: Vec3::from_array(s),
    }
}

/// A branching rig with non-trivial, non-uniform rest transforms:
/// 0 root → 1 spine → 2 head; 1 → 3 arm → 4 hand; 0 → 5 leg.
pub fn branching_rig() -> Skeleton {
    let parents = [NO_PARENT, 0, 1, 1, 3, 0];
    let rest = [
        trs(
            [0.1, 1.0, -0.2],
            Quat::from_rotation_y(0.3),
            [1.0, 1.0, 1.0],
        ),
        trs([0.0, 0.5, 0.0], Quat::from_rotation_x(0.2), [1.0, 2.0, 0.5]),
        trs(
            [0.0, 0.3, 0.05],
            Quat::from_rotation_z(-0.4),
            [0.8, 0.8, 0.8],
        ),
        trs(
            [0.4, 0.2, 0.0],
            Quat::from_euler(glam::EulerRot::XYZ, 0.1, 0.7, -0.3),
            [1.5, 1.0, 1.0],
        ),
        trs(
            [0.3, 0.0, 0.1],
            Quat::from_rotation_y(-1.1),
            [1.0, 0.7, 1.3],
        ),
        trs(
            [-0.2, -0.5, 0.0],
            Quat::from_rotation_x(2.5),
            [1.0, 1.0, 3.0],
        ),
    ];
    skeleton(&parents, &rest)
}

/// Largest absolute difference between two quaternions as rotations (sign-insensitive).
pub fn quat_err(a: Quat, b: Quat) -> f32 {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    (glam::Vec4::from(a) - glam::Vec4::from(b))
        .abs()
        .max_element()
}

pub fn vec_err(a: Vec3, b: Vec3) -> f32 {
    (a - b).abs().max_element()
}

/// A one-sample clip whose every sub-track is Constant and holds `pose`: sampling it at any
/// time returns `pose` exactly, so tests can load arbitrary poses into registers.
pub fn pose_clip(pose: &[Trs], skeleton: u32) -> throng_cpu_ref::Clip {
    use throng_cpu_ref::{Clip, LoopPolicy, SubTrack, SubTrackKind};
    let mut values = Vec::new();
    let mut sub_tracks = Vec::new();
    for p in pose {
        for v in [
            &p.translation.to_array()[..],
            &p.rotation.to_array()[..],
            &p.scale.to_array()[..],
        ] {
            sub_tracks.push(SubTrack {
                kind: SubTrackKind::Constant,
                offset: values.len() as u32,
            });
            values.extend_from_slice(v);
        }
    }
    Clip {
        name: "pose".into(),
        skeleton,
        skeleton_hash: 0,
        duration: 0.0,
        sample_rate: 30.0,
        sample_count: 1,
        loop_policy: LoopPolicy::Once,
        profile: "test".into(),
        sub_tracks,
        values,
        events: vec![],
        markers: vec![],
        root_motion: None,
        compressed: None,
    }
}

/// Proptest strategy for a local transform: translation in [-10, 10]³, any unit rotation,
/// scale in [0.1, 3]³.
pub fn any_trs() -> impl proptest::strategy::Strategy<Value = Trs> {
    use proptest::prelude::*;
    let v3 = |lo: f32, hi: f32| [lo..hi, lo..hi, lo..hi];
    (
        v3(-10.0, 10.0),
        [-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0],
        v3(0.1, 3.0),
    )
        .prop_filter("rotation needs a direction", |(_, q, _)| {
            glam::Vec4::from_array(*q).length() > 0.1
        })
        .prop_map(|(t, q, s)| trs(t, Quat::from_vec4(glam::Vec4::from_array(q).normalize()), s))
}

pub fn trs_err(a: &Trs, b: &Trs) -> f32 {
    vec_err(a.translation, b.translation)
        .max(quat_err(a.rotation, b.rotation))
        .max(vec_err(a.scale, b.scale))
}
