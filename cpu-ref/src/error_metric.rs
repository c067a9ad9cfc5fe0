//! Object-space error at virtual vertices (DESIGN.md §7), the measure ACL uses to judge lossy
//! animation: Frechette, "Animation Compression Library" (https://github.com/nfrechette/acl),
//! after Frechette's "Error metric" notes (https://nfrechette.github.io/2016/11/01/anim_compression_accuracy/).
//!
//! Each joint carries three virtual vertices on its local x, y and z axes, placed so that they lie
//! [`VIRTUAL_VERTEX_DISTANCE`] from the joint in scene space (the offset is divided by the mean
//! column scale of the joint's exact scene transform, so rigs with 100× / 0.01 factors between
//! nodes are measured at the same physical distance). The error of a pose is the scene-space
//! distance between each vertex carried by the exact and by the approximate transform, in
//! centimetres (scene units are metres).
//!
//! A clip with root motion is measured as the animator sees it: the trajectory recomposed with
//! the residual (`R(t) · component(t)` for every joint) against the source pose, so an error in
//! either part, or motion removed twice or not at all, shows.

use glam::{Affine3A, Vec3};

use crate::clip::{root_motion_affine, sample_clip};
use crate::curve::sample_exact;
use crate::fk::local_to_component;
use crate::transform::mean_column_scale;
use crate::{Clip, Skeleton, SourceClip, Trs};

/// Distance of each virtual vertex from its joint, in scene units (metres): ACL's 3 cm.
pub const VIRTUAL_VERTEX_DISTANCE: f32 = 0.03;

/// Virtual vertices per joint.
pub const VERTICES_PER_JOINT: usize = 3;

/// Cooked-vs-exact error of one clip over its measurement times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipError {
    /// Largest error over all joints, virtual vertices and times, in cm.
    pub max_cm: f32,
    /// 99th percentile (nearest rank) of the same set, in cm.
    pub p99_cm: f32,
    /// Joint and time of the largest error.
    pub worst_joint: u32,
    pub worst_time: f32,
    /// Number of times measured.
    pub times: usize,
}

/// Errors in cm of the virtual vertices of every joint, `out[3 * j + k]` for axis k, between an
/// exact and an approximate pose given as component transforms; `root` is the skeleton's
/// `root_transform`, so distances are in scene space. Writes `min(exact, approx) * 3` entries
/// at most, bounded by `out`.
pub fn virtual_vertex_errors_cm(
    root: &Affine3A,
    exact: &[Affine3A],
    approx: &[Affine3A],
    out: &mut [f32],
) {
    for ((e, a), errs) in exact
        .iter()
        .zip(approx)
        .zip(out.chunks_exact_mut(VERTICES_PER_JOINT))
    {
        let we = *root * *e;
        let wa = *root * *a;
        let sigma = mean_column_scale(&we);
        let d = if sigma > 0.0 && sigma.is_finite() {
            VIRTUAL_VERTEX_DISTANCE / sigma
        } else {
            VIRTUAL_VERTEX_DISTANCE
        };
        for (k, err) in errs.iter_mut().enumerate() {
            let p = Vec3::AXES[k] * d;
            *err = (we.transform_point3(p) - wa.transform_point3(p)).length() * 100.0;
        }
    }
}

/// The times a clip's error is measured at, ascending and distinct: every source key time
/// within [0, duration], and for each cooked sample interval its start and 8 evenly spaced
/// points inside it, plus the last sample. Dense but finite: the true maximum between these
/// times may be slightly larger.
pub fn measurement_times(source: &SourceClip, clip: &Clip) -> Vec<f32> {
    let duration = clip.duration as f32;
    let mut times: Vec<f32> = source
        .channels
        .iter()
        .flat_map(|c| c.times.iter().copied())
        .filter(|t| (0.0..=duration).contains(t))
        .collect();
    let last = clip.sample_count.saturating_sub(1);
    for i in 0..last {
        let t0 = clip.sample_time(i) as f32;
        let t1 = clip.sample_time(i + 1) as f32;
        times.extend((0..9).map(|k| t0 + (t1 - t0) * k as f32 / 9.0));
    }
    times.push(clip.sample_time(last) as f32);
    times.sort_unstable_by(f32::total_cmp);
    times.dedup();
    times
}

/// Measures `clip` (cooked; trajectory times residual when it has root motion) against `source`
/// (exact curves) on `skeleton` at [`measurement_times`]. Allocates its scratch once for the clip.
pub fn measure_clip_error(skeleton: &Skeleton, source: &SourceClip, clip: &Clip) -> ClipError {
    let n = skeleton.joint_count();
    let times = measurement_times(source, clip);
    let mut exact_local = vec![Trs::IDENTITY; n];
    let mut cooked_local = vec![Trs::IDENTITY; n];
    let mut exact = vec![Affine3A::IDENTITY; n];
    let mut cooked = vec![Affine3A::IDENTITY; n];
    let mut errors = vec![0.0f32; times.len() * n * VERTICES_PER_JOINT];
    let mut worst = ClipError {
        max_cm: 0.0,
        p99_cm: 0.0,
        worst_joint: 0,
        worst_time: 0.0,
        times: times.len(),
    };
    for (&t, errs) in times
        .iter()
        .zip(errors.chunks_exact_mut(n * VERTICES_PER_JOINT))
    {
        sample_exact(source, skeleton, t, &mut exact_local);
        sample_clip(clip, skeleton, t, &mut cooked_local);
        local_to_component(skeleton, &exact_local, &mut exact);
        local_to_component(skeleton, &cooked_local, &mut cooked);
        if clip.root_motion.is_some() {
            let trajectory = root_motion_affine(clip, t);
            cooked.iter_mut().for_each(|c| *c = trajectory * *c);
        }
        virtual_vertex_errors_cm(&skeleton.root_transform, &exact, &cooked, errs);
        for (i, &e) in errs.iter().enumerate() {
            // NaN must never hide as a small error.
            if e.is_nan() || e > worst.max_cm {
                worst.max_cm = if e.is_nan() { f32::INFINITY } else { e };
                worst.worst_joint = (i / VERTICES_PER_JOINT) as u32;
                worst.worst_time = t;
            }
        }
    }
    worst.p99_cm = percentile(&mut errors, 0.99);
    worst
}

/// Nearest-rank percentile `p` in [0, 1] (reorders `values`; NaN sorts last).
fn percentile(values: &mut [f32], p: f64) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    let rank = ((p * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1;
    let (_, v, _) = values.select_nth_unstable_by(rank, f32::total_cmp);
    *v
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::{
        Channel, ChannelPath, Interpolation, LoopPolicy, SubTrack, SubTrackKind, NO_PARENT,
    };

    #[test]
    fn a_translation_offset_moves_every_virtual_vertex_by_that_much() {
        let exact = [Affine3A::IDENTITY];
        let approx = [Affine3A::from_translation(Vec3::new(0.0, 0.01, 0.0))];
        let mut out = [0.0; 3];
        virtual_vertex_errors_cm(&Affine3A::IDENTITY, &exact, &approx, &mut out);
        for e in out {
            assert!((e - 1.0).abs() < 1e-4, "{out:?}");
        }
    }

    #[test]
    fn a_rotation_error_is_the_chord_at_three_centimetres_whatever_the_rig_scale() {
        let angle = 0.1f32;
        let chord_cm = 2.0 * 3.0 * (angle / 2.0).sin();
        // A 100x root with 0.01-scaled joints (an FBX export) measures the same as a metre rig.
        for (root, joint_scale) in [
            (Affine3A::IDENTITY, 1.0),
            (Affine3A::from_scale(Vec3::splat(100.0)), 0.01),
        ] {
            let exact = [Affine3A::from_scale(Vec3::splat(joint_scale))];
            let approx = [Affine3A::from_scale_rotation_translation(
                Vec3::splat(joint_scale),
                Quat::from_rotation_z(angle),
                Vec3::ZERO,
            )];
            let mut out = [0.0; 3];
            virtual_vertex_errors_cm(&root, &exact, &approx, &mut out);
            assert!(
                (out[0] - chord_cm).abs() < 1e-4 && (out[1] - chord_cm).abs() < 1e-4,
                "{out:?}"
            );
            assert!(
                out[2] < 1e-5,
                "the z vertex lies on the rotation axis: {out:?}"
            );
        }
    }

    #[test]
    fn percentile_is_nearest_rank() {
        let mut v: Vec<f32> = (1..=200).rev().map(|x| x as f32).collect();
        assert_eq!(percentile(&mut v, 0.99), 198.0);
        assert_eq!(percentile(&mut [5.0], 0.99), 5.0);
        assert_eq!(percentile(&mut [], 0.99), 0.0);
    }

    /// One joint whose source translation is a sharp tent (0 → 1 m → 0 over 0.1 s) that a 10 Hz
    /// clip samples only at its feet: the measurement must find the peak at the source key.
    #[test]
    fn measure_finds_the_error_at_a_source_key_between_samples() {
        let skeleton = Skeleton::new(
            vec![NO_PARENT],
            vec![Trs::IDENTITY],
            vec!["j".into()],
            vec![0],
            Affine3A::IDENTITY,
        )
        .unwrap();
        let source = SourceClip {
            name: "tent".into(),
            skeleton: 0,
            channels: vec![Channel {
                joint: 0,
                path: ChannelPath::Translation,
                interpolation: Interpolation::Linear,
                times: vec![0.0, 0.05, 0.1],
                values: vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            }],
            duration: 0.1,
        };
        let clip = Clip {
            name: "tent".into(),
            skeleton: 0,
            skeleton_hash: skeleton.identity_hash(),
            duration: 0.1,
            sample_rate: 10.0,
            sample_count: 2,
            loop_policy: LoopPolicy::Once,
            profile: "test".into(),
            sub_tracks: vec![
                SubTrack {
                    kind: SubTrackKind::Animated,
                    offset: 0,
                },
                SubTrack {
                    kind: SubTrackKind::Default,
                    offset: 0,
                },
                SubTrack {
                    kind: SubTrackKind::Default,
                    offset: 0,
                },
            ],
            values: vec![0.0; 6],
            events: Vec::new(),
            markers: Vec::new(),
            root_motion: None,
            compressed: None,
        };
        let times = measurement_times(&source, &clip);
        assert_eq!(
            times.len(),
            11,
            "9 per interval, the last sample, and the key at 0.05 s: {times:?}"
        );
        let e = measure_clip_error(&skeleton, &source, &clip);
        assert!((e.max_cm - 100.0).abs() < 1e-3, "{e:?}");
        assert!((e.worst_time - 0.05).abs() < 1e-6);
        assert_eq!(e.worst_joint, 0);
        assert_eq!(e.times, 11);
    }
}
