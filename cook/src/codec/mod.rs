//! The clip encoder (DESIGN.md §7, docs/codec.md): a cooked clip in the reference encoding in,
//! the same clip in the compressed encoding of [`throng_cpu_ref::codec`] out.
//!
//! Default and Constant sub-tracks are kept as they are (Constant values bit for bit). Each
//! Animated sub-track is range-reduced per clip (24-bit integers on a power-of-two grid) and per
//! segment of [`SEGMENT_LENGTH`] samples (an 8-bit base per component), and stored per segment at
//! the coarsest precision whose error at virtual vertices 3 cm from each joint stays within the
//! profile's threshold ([`search`]). The error is measured against the reference cooked clip,
//! not against the source curves: the codec is judged on what it adds.

mod bytes;
mod curves;
mod measure;
mod pack;
mod quantize;
mod search;

use std::time::Instant;

use thiserror::Error;
use throng_cpu_ref::codec::layout::{valid_range, MAX_WIDTH, MAX_WORDS, SEGMENT_LENGTH};
use throng_cpu_ref::{Clip, Package, Skeleton, SubTrackKind, Trs};

pub use bytes::codec_bytes;
pub use curves::{compress_curves, quantize_track, CurveCodecReport, CURVE_PRECISION};
pub use measure::{measure, percentile, times, Fidelity};
pub use search::{Unmet, DESCENDANT_SHARE};

use crate::package::payload_bytes;
use crate::profile::CodecSettings;
use crate::report::{
    clip_bytes, ratio, rest_extent, CodecClipReport, CodecReport, CodecTotal, CookReport,
    RAW_JOINT_SAMPLE_BYTES,
};
use crate::Profile;
use search::{Problem, Track};

/// Why a clip could not be compressed.
#[derive(Debug, Error, PartialEq)]
pub enum CodecError {
    #[error("the clip is already compressed")]
    AlreadyCompressed,
    #[error("the clip has {found} sub-tracks for a skeleton of {joints} joints (3 per joint)")]
    SubTrackCount { found: usize, joints: usize },
    #[error("sub-track {sub_track} reads values outside the clip")]
    BadReference { sub_track: usize },
    #[error("sub-track {sub_track} holds values whose range cannot be quantised to finite values")]
    Range { sub_track: usize },
    #[error("segment {segment} holds {bits} bits of samples, more than its headers can address")]
    SegmentTooLarge { segment: usize, bits: u64 },
    #[error(
        "the compressed clip exceeds {MAX_WORDS} words, the most a package's clip stream holds"
    )]
    TooLarge,
    #[error("the compressed clip would not read back: {0}")]
    Unreadable(String),
}

/// A compressed clip and what the encoder knows about it.
#[derive(Clone, Debug)]
pub struct Encoded {
    /// The clip in the compressed encoding (everything else as the reference).
    pub clip: Clip,
    /// The encoder's own reconstruction: `reconstruction[a][i]` is the decoded (x, y, z) of
    /// sample i of animated sub-track a, as the decoder must reproduce it bit for bit.
    pub reconstruction: Vec<Vec<[f32; 3]>>,
    /// `widths[w]`: how many (segment, animated sub-track, component) triples got w bits.
    pub widths: [u64; MAX_WIDTH as usize + 1],
    /// Joint-segments that kept the finest precision without passing the search's checks.
    pub unmet: search::Unmet,
    /// Wall time of the encoding, seconds.
    pub seconds: f64,
}

/// Compresses `clip` (reference encoding) of `skeleton` within `settings`' thresholds.
pub fn encode_clip(
    clip: &Clip,
    skeleton: &Skeleton,
    settings: &CodecSettings,
) -> Result<Encoded, CodecError> {
    let start = Instant::now();
    if clip.compressed.is_some() {
        return Err(CodecError::AlreadyCompressed);
    }
    let n = skeleton.joint_count();
    if clip.sub_tracks.len() != 3 * n {
        return Err(CodecError::SubTrackCount {
            found: clip.sub_tracks.len(),
            joints: n,
        });
    }
    let samples = clip.sample_count as usize;
    let locals = reference_locals(clip, skeleton)?;
    let tracks = tracks(clip, &locals, n)?;
    let thresholds: Vec<f32> = skeleton
        .names
        .iter()
        .map(|name| settings.threshold_of(name))
        .collect();
    let problem = Problem {
        skeleton,
        locals: &locals,
        tracks: &tracks,
        thresholds: &thresholds,
    };
    let (choices, unmet) = search::choose(&problem, samples, SEGMENT_LENGTH as usize);
    let (compressed, sub_tracks) = pack::pack(clip, &tracks, &choices, SEGMENT_LENGTH)?;
    let mut widths = [0u64; MAX_WIDTH as usize + 1];
    for choice in choices.iter().flatten() {
        for r in &choice.ranges {
            if let Some(count) = widths.get_mut(r.width(choice.shift) as usize) {
                *count += 1;
            }
        }
    }
    let reconstruction = tracks
        .iter()
        .enumerate()
        .map(|(t, track)| {
            (0..samples)
                .map(|i| {
                    let choice = &choices[i / SEGMENT_LENGTH as usize][t];
                    track.value(i, &choice.ranges, choice.shift)
                })
                .collect()
        })
        .collect();
    let clip = Clip {
        sub_tracks,
        values: Vec::new(),
        compressed: Some(compressed),
        ..clip.clone()
    };
    // What the cook writes, the reader reads: the stream passes the reader's own checks (a
    // fuzzer found coarse rotations decoding past the unit ball, which the reader refuses:
    // fuzz/regressions/gltf_import/rotation-past-unit).
    if let Some(compressed) = &clip.compressed {
        crate::package::check_compressed(&clip, compressed)
            .map_err(|fault| CodecError::Unreadable(fault.to_string()))?;
    }
    Ok(Encoded {
        clip,
        reconstruction,
        widths,
        unmet,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The reference clip's local pose at every sample, sample-major (`[i * joints + j]`), read
/// straight from its values (Default sub-tracks are rest).
fn reference_locals(clip: &Clip, skeleton: &Skeleton) -> Result<Vec<Trs>, CodecError> {
    let n = skeleton.joint_count();
    let samples = clip.sample_count as usize;
    let mut locals = Vec::with_capacity(samples * n);
    for i in 0..samples {
        for (j, rest) in skeleton.rest.iter().enumerate() {
            let mut local = *rest;
            for k in 0..3 {
                let t = 3 * j + k;
                let st = clip.sub_tracks[t];
                let width = if k == 1 { 4 } else { 3 };
                let start = match st.kind {
                    SubTrackKind::Default => continue,
                    SubTrackKind::Constant => st.offset as usize,
                    SubTrackKind::Animated => st.offset as usize + i * width,
                };
                let v = clip
                    .values
                    .get(start..start + width)
                    .ok_or(CodecError::BadReference { sub_track: t })?;
                match k {
                    0 => local.translation = glam::Vec3::new(v[0], v[1], v[2]),
                    1 => local.rotation = glam::Quat::from_xyzw(v[0], v[1], v[2], v[3]),
                    _ => local.scale = glam::Vec3::new(v[0], v[1], v[2]),
                }
            }
            locals.push(local);
        }
    }
    Ok(locals)
}

/// The animated sub-tracks in sub-track order, with their clip ranges and integers. A rotation
/// is stored as three components, the fourth ([`rebuilt`]) made non-negative by the sign of q.
fn tracks(clip: &Clip, locals: &[Trs], n: usize) -> Result<Vec<Track>, CodecError> {
    let samples = clip.sample_count as usize;
    let mut tracks = Vec::new();
    for (t, st) in clip.sub_tracks.iter().enumerate() {
        if st.kind != SubTrackKind::Animated {
            continue;
        }
        let (joint, component) = (t / 3, t % 3);
        let rotation = |i: usize| locals[i * n + joint].rotation.to_array();
        let rebuilt = if component == 1 {
            rebuilt((0..samples).map(rotation))
        } else {
            0
        };
        let value = |i: usize| -> [f64; 3] {
            let local = locals[i * n + joint];
            let v = match component {
                0 => local.translation.to_array(),
                1 => {
                    let q = rotation(i);
                    let sign = if q[rebuilt as usize] < 0.0 { -1.0 } else { 1.0 };
                    let mut kept = (0..4)
                        .filter(|&c| c != rebuilt as usize)
                        .map(|c| sign * q[c]);
                    std::array::from_fn(|_| kept.next().unwrap_or(0.0))
                }
                _ => local.scale.to_array(),
            };
            v.map(f64::from)
        };
        let ranges: [quantize::Range; 3] = std::array::from_fn(|c| {
            let (lo, hi) = (0..samples)
                .map(|i| value(i)[c])
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
            quantize::Range::covering(lo, hi)
        });
        // The reader's own check (a fuzzer found a range the encoder wrote and the reader refused:
        // fuzz/regressions/gltf_import/huge-range).
        if ranges
            .iter()
            .any(|r| !r.value(quantize::K_MAX).is_finite() || !valid_range(r.base, r.step))
        {
            return Err(CodecError::Range { sub_track: t });
        }
        let ks = (0..samples).map(|i| {
            let v = value(i);
            std::array::from_fn(|c| ranges[c].k(v[c]))
        });
        tracks.push(Track {
            joint,
            component,
            rebuilt,
            ranges,
            ks: ks.collect(),
        });
    }
    Ok(tracks)
}

/// The component of a rotation track to rebuild: the one whose smallest magnitude over the clip
/// is largest (the error of a rebuilt component grows as 1 / its value); w on ties.
fn rebuilt(samples: impl Iterator<Item = [f32; 4]>) -> u32 {
    let smallest = samples.fold([f32::INFINITY; 4], |m, q| {
        std::array::from_fn(|c| m[c].min(q[c].abs()))
    });
    (0..4u32)
        .rev()
        .max_by(|&a, &b| smallest[a as usize].total_cmp(&smallest[b as usize]))
        .unwrap_or(3)
}

/// Compresses every reference-encoded clip of `package` (as [`crate::cook`] made it with
/// `profile`) with the profile's codec settings, measures each against its reference, and puts
/// the codec report in `report.codec` (clip sizes in `report.clips` follow). A clip the codec
/// cannot represent keeps the reference encoding, with a warning. The clips' curve tracks are
/// compressed too ([`compress_curves`]).
pub fn compress(package: &mut Package, report: &mut CookReport, profile: &Profile) {
    let settings = profile.codec();
    let mut clips = Vec::with_capacity(package.clips.len());
    let mut histogram = vec![0u64; MAX_WIDTH as usize + 1];
    let mut errors = Vec::new();
    for (index, clip) in package.clips.iter_mut().enumerate() {
        let Some(skeleton) = package.skeletons.get(clip.skeleton as usize) else {
            continue;
        };
        if clip.compressed.is_some() {
            continue;
        }
        let (clip_settings, threshold_scale) = settings.for_extent(rest_extent(skeleton));
        let encoded = match encode_clip(clip, skeleton, &clip_settings) {
            Ok(encoded) => encoded,
            Err(e) => {
                report
                    .warnings
                    .push(format!("clip '{}' stays uncompressed: {e}", clip.name));
                continue;
            }
        };
        let fidelity = measure(skeleton, clip, &encoded.clip, &mut errors);
        *clip = encoded.clip;
        let raw =
            RAW_JOINT_SAMPLE_BYTES * skeleton.joint_count() as u64 * u64::from(clip.sample_count);
        let bytes = payload_bytes(clip) as u64;
        histogram
            .iter_mut()
            .zip(&encoded.widths)
            .for_each(|(h, w)| *h += w);
        clips.push(CodecClipReport {
            name: clip.name.clone(),
            joints: skeleton.joint_count(),
            samples: clip.sample_count,
            raw_bytes: raw,
            compressed_bytes: bytes,
            ratio: ratio(raw, bytes),
            bytes_per_joint_sample: bytes as f64
                / (skeleton.joint_count() as f64 * f64::from(clip.sample_count)).max(1.0),
            max_error_cm: fidelity.max_cm,
            p99_error_cm: fidelity.p99_cm,
            mean_error_cm: fidelity.mean_cm,
            worst_joint: skeleton
                .names
                .get(fidelity.worst_joint as usize)
                .cloned()
                .unwrap_or_default(),
            worst_time_s: fidelity.worst_time,
            threshold_scale,
            unmet: encoded.unmet.total(),
            unmet_by_check: encoded.unmet,
            encode_ms: 1e3 * encoded.seconds,
            width_histogram: encoded.widths.to_vec(),
            bytes: codec_bytes(clip).unwrap_or_default(),
        });
        if let Some(r) = report.clips.get_mut(index) {
            r.bytes = clip_bytes(clip);
        }
    }
    report.total_clip_bytes = report.clips.iter().map(|c| c.bytes).sum();
    let mean = if errors.is_empty() {
        0.0
    } else {
        (errors.iter().map(|&e| f64::from(e)).sum::<f64>() / errors.len() as f64) as f32
    };
    let p99 = percentile(&mut errors, 0.99);
    report.codec = Some(CodecReport {
        profile: profile.name.to_string(),
        threshold_cm: settings.threshold_cm,
        important_threshold_cm: settings.important_cm,
        total: CodecTotal::new(&clips, p99, mean),
        clips,
        width_histogram: histogram,
        curves: compress_curves(&mut package.curves),
    });
}
