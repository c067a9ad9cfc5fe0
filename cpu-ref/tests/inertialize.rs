//! Inertialization per joint: continuity at the switch (pose and velocity), zero from the
//! duration on, and finite results at the quaternion edge cases (near 180°, q and -q, zero
//! durations), over random inputs.

use glam::{Quat, Vec3};
use proptest::prelude::*;
use throng_cpu_ref::inertialize::{capture_joint, inertialize_joint};
use throng_cpu_ref::Trs;

fn quat() -> impl Strategy<Value = Quat> {
    (
        -1.0f32..1.0,
        -1.0f32..1.0,
        -1.0f32..1.0,
        -1.0f32..1.0,
        any::<bool>(),
    )
        .prop_filter_map("non-zero", |(x, y, z, w, flip)| {
            let q = Quat::from_xyzw(x, y, z, w);
            (q.length() > 0.1).then(|| if flip { -q.normalize() } else { q.normalize() })
        })
}

fn trs() -> impl Strategy<Value = Trs> {
    (
        prop::array::uniform3(-2.0f32..2.0),
        quat(),
        prop::array::uniform3(0.5f32..2.0),
    )
        .prop_map(|(t, q, s)| Trs {
            translation: Vec3::from(t),
            rotation: q,
            scale: Vec3::from(s),
        })
}

fn close(a: &Trs, b: &Trs, tol: f32) -> bool {
    (a.translation - b.translation).abs().max_element() <= tol
        && (a.scale - b.scale).abs().max_element() <= tol
        && a.rotation.dot(b.rotation).abs() >= 1.0 - tol
}

/// `source` moving at constant velocity toward `source_next` over `dt`.
fn step(a: &Trs, b: &Trs, t: f32) -> Trs {
    Trs {
        translation: a.translation.lerp(b.translation, t),
        rotation: a.rotation.slerp(b.rotation, t),
        scale: a.scale.lerp(b.scale, t),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn at_the_switch_the_pose_is_the_source(
        src in trs(), prev in trs(), dst in trs(), prev_dst in trs(), duration in 0.01f32..1.0,
    ) {
        let o = capture_joint(&src, &prev, &dst, &prev_dst, 1.0 / 60.0);
        let x = inertialize_joint(&dst, &o, 0.0, duration);
        prop_assert!(close(&x, &src, 2e-5), "{x:?} vs {src:?}");
    }

    #[test]
    fn from_the_duration_on_the_pose_is_the_destination(
        src in trs(), prev in trs(), dst in trs(), duration in 0.0f32..1.0, extra in 0.0f32..2.0,
    ) {
        let o = capture_joint(&src, &prev, &dst, &dst, 1.0 / 30.0);
        let x = inertialize_joint(&dst, &o, duration + extra, duration);
        prop_assert!(close(&x, &dst, 1e-6), "{x:?} vs {dst:?}");
    }

    #[test]
    fn the_first_frames_move_with_the_source(
        src in trs(), dst in trs(), drift in trs(), duration in 0.2f32..1.0,
    ) {
        // The source one tick earlier was a little way toward `drift`; the destination is
        // still. Right after the switch the pose moves at the source's velocity: the slope
        // over 0.1 ms (where the quintic's curvature adds at most 0.5 · a0 · h) matches it.
        let dt = 1.0 / 60.0;
        let prev = step(&src, &drift, 0.01);
        let v = (src.translation - prev.translation) / dt;
        let vs = (src.scale - prev.scale) / dt;
        let o = capture_joint(&src, &prev, &dst, &dst, dt);
        let h = 1e-4;
        let a = inertialize_joint(&dst, &o, 0.0, duration);
        let b = inertialize_joint(&dst, &o, h, duration);
        let slope = (b.translation - a.translation) / h;
        let slope_s = (b.scale - a.scale) / h;
        let tol = |x: Vec3| 0.02 * x.abs().max_element() + 0.1;
        prop_assert!((slope - v).abs().max_element() <= tol(v), "{slope} vs {v}");
        prop_assert!((slope_s - vs).abs().max_element() <= tol(vs), "{slope_s} vs {vs}");
    }

    #[test]
    fn edge_cases_stay_finite(
        dst in trs(), axis in prop::array::uniform3(-1.0f32..1.0), eps in 0.0f32..1e-3,
        duration in prop_oneof![Just(0.0f32), Just(1e-30f32), 0.0f32..1.0],
        elapsed in prop_oneof![Just(0.0f32), 0.0f32..2.0],
    ) {
        let axis = Vec3::from(axis).try_normalize().unwrap_or(Vec3::X);
        // Offsets near 180°, on both hemispheres.
        for angle in [std::f32::consts::PI - eps, std::f32::consts::PI, -std::f32::consts::PI + eps] {
            let q = Quat::from_axis_angle(axis, angle) * dst.rotation;
            for src_q in [q, -q] {
                let src = Trs { rotation: src_q, ..dst };
                let o = capture_joint(&src, &dst, &dst, &src, 1.0 / 60.0);
                let x = inertialize_joint(&dst, &o, elapsed, duration);
                prop_assert!(x.is_finite(), "{x:?}");
                prop_assert!((x.rotation.length() - 1.0).abs() < 1e-4);
            }
        }
    }
}
