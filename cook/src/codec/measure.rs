//! The codec's own error: the compressed clip against the reference clip it was made from, at
//! virtual vertices 3 cm from each joint (cpu-ref `error_metric`), in scene space.
//!
//! Both clips are sampled with `sample_clip` at every sample time and halfway between neighbours
//! (quantisation error lives at the samples; halfway shows what interpolation does with it), and
//! posed with the CPU reference's FK. A trajectory (root motion) is the same rigid transform for
//! both clips, so it is left out.

use glam::Affine3A;
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::error_metric::{virtual_vertex_errors_cm, VERTICES_PER_JOINT};
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::{Clip, Skeleton, Trs};

/// Codec-vs-reference error of one clip, in cm.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fidelity {
    pub max_cm: f32,
    /// 99th percentile (nearest rank) over every vertex and time.
    pub p99_cm: f32,
    pub mean_cm: f32,
    /// Joint and time of the largest error.
    pub worst_joint: u32,
    pub worst_time: f32,
    /// Times measured.
    pub times: usize,
}

/// Measures `compressed` against `reference` (the same clip in both encodings) on `skeleton`;
/// appends every vertex error to `all` (for totals over many clips).
pub fn measure(
    skeleton: &Skeleton,
    reference: &Clip,
    compressed: &Clip,
    all: &mut Vec<f32>,
) -> Fidelity {
    let n = skeleton.joint_count();
    let times = times(reference);
    let (mut a, mut b) = (vec![Trs::IDENTITY; n], vec![Trs::IDENTITY; n]);
    let (mut ca, mut cb) = (vec![Affine3A::IDENTITY; n], vec![Affine3A::IDENTITY; n]);
    let mut errors = vec![0.0f32; times.len() * n * VERTICES_PER_JOINT];
    let mut out = Fidelity {
        times: times.len(),
        ..Fidelity::default()
    };
    let mut sum = 0.0f64;
    for (&t, errs) in times
        .iter()
        .zip(errors.chunks_exact_mut(n * VERTICES_PER_JOINT))
    {
        sample_clip(reference, skeleton, t, &mut a);
        sample_clip(compressed, skeleton, t, &mut b);
        local_to_component(skeleton, &a, &mut ca);
        local_to_component(skeleton, &b, &mut cb);
        virtual_vertex_errors_cm(&skeleton.root_transform, &ca, &cb, errs);
        for (k, &e) in errs.iter().enumerate() {
            sum += f64::from(e);
            if e.is_nan() || e > out.max_cm {
                out.max_cm = if e.is_nan() { f32::INFINITY } else { e };
                out.worst_joint = (k / VERTICES_PER_JOINT) as u32;
                out.worst_time = t;
            }
        }
    }
    out.mean_cm = if errors.is_empty() {
        0.0
    } else {
        (sum / errors.len() as f64) as f32
    };
    all.extend_from_slice(&errors);
    out.p99_cm = percentile(&mut errors, 0.99);
    out
}

/// The times a clip's codec error is measured at: every sample time and halfway between
/// neighbours, ascending.
pub fn times(clip: &Clip) -> Vec<f32> {
    let mut times = Vec::with_capacity(2 * clip.sample_count as usize);
    for i in 0..clip.sample_count {
        let t = clip.sample_time(i) as f32;
        times.push(t);
        if i + 1 < clip.sample_count {
            times.push(0.5 * (t + clip.sample_time(i + 1) as f32));
        }
    }
    times
}

/// Nearest-rank percentile `p` in [0, 1] (reorders `values`; NaN sorts last).
pub fn percentile(values: &mut [f32], p: f64) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    let rank = ((p * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1;
    let (_, v, _) = values.select_nth_unstable_by(rank, f32::total_cmp);
    *v
}
