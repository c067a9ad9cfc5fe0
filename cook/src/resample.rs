//! Uniform resampling of source clips into cooked clips (DESIGN.md §3), with sub-track
//! classification and the measured cooking error.
//!
//! The rate r is the profile's, or the source's own key grid thinned to the profile's
//! `max_rate` when every channel is keyed on one uniform grid ([`clip_rate`]).
//! A clip of duration D at rate r gets `n = ceil(D·r − 1e-6) + 1` samples (one when D = 0);
//! sample i lies at `min(i / r, D)`, so the last one is exactly at D. Each sample is the source
//! curves evaluated with glTF semantics ([`sample_exact`]). Per sub-track (t, q, s of a joint):
//! Default when every sample equals the rest value, Constant when every sample equals the first,
//! else Animated; "equal" is within [`VALUE_TOLERANCE`] (relative) for t/s and
//! [`ROTATION_TOLERANCE`] on `1 − |cos|` for q, up to sign. Rotation samples are made
//! hemisphere-continuous (each q flipped to the side of the previous sample), so the cooked
//! sampler's nlerp between neighbours takes the short way, as the source's slerp does.
//!
//! Root motion: when the clip's metadata asks for it, the motion joint's trajectory is taken out
//! of the sampled poses before classification ([`crate::root_motion`]), so the sub-tracks hold the
//! residual and the trajectory is stored beside them.
//!
//! Loop policy: `Loop` when the clip has at least two samples and its first and last poses are
//! equal (same tolerances) on every sub-track, root included: a locomotion cycle loops once its
//! travel is extracted as root motion, and one that still travels in its pose does not; else
//! `Once`. Control may override it. Events and markers are then checked and put in canonical
//! form ([`crate::metadata`]).
//!
//! Morph-weight channels (docs/morph-targets.md) become one uncompressed `WeightClip` per
//! animation, sampled on the grid of the animation's skeleton clip when it has one (else at
//! [`clip_rate`]'s rule applied to its own keys), lerped between samples; its error against the
//! exact curves is measured inside every sample interval and reported.

use throng_cpu_ref::curve::sample_exact;
use throng_cpu_ref::error_metric::measure_clip_error;
use throng_cpu_ref::morph::{SourceWeightClip, WeightClip, WeightTrack};
use throng_cpu_ref::{
    Clip, Composition, Interpolation, LoopPolicy, Package, RootMotionPolicy, Skeleton, SourceClip,
    SubTrack, SubTrackKind, Trs,
};

use crate::import::{AuthoredCurve, ClipMeta, Origin, Placed};
use crate::report::{rest_extent, ClipReport, CookReport, WeightClipReport};
use crate::{metadata, root_motion, CookError, Imported, Profile};

/// Relative tolerance for comparing translations and scales: `|a − b| ≤ tol · max(|a|, |b|, 1e-3)`.
pub const VALUE_TOLERANCE: f64 = 1e-6;
/// Rotations are equal when `1 − |a·b| / (|a||b|) ≤` this (about 9e-5 rad apart).
pub const ROTATION_TOLERANCE: f64 = 1e-9;
/// Most samples one clip may have (u32 sample counts, and a bound on cook memory).
const MAX_SAMPLES: f64 = 1e7;
/// Smallest scale a cooked sample may hold (the import's bound; CUBICSPLINE may overshoot to it).
const MIN_SCALE: f32 = 1e-6;

/// Resamples every source clip of `imported` at `profile`'s rate, extracting root motion and
/// checking events and markers as each clip's metadata asks; returns the package with its clips
/// and the cook report (sizes, classification, root motion, measured error).
pub fn cook(imported: &Imported, profile: &Profile) -> Result<(Package, CookReport), CookError> {
    let mut package = imported.package.clone();
    let mut reports = Vec::with_capacity(imported.source_clips.len());
    let mut warnings = Vec::new();
    let no_meta = ClipMeta::default();
    let mut curves = Vec::new();
    for (index, source) in imported.source_clips.iter().enumerate() {
        let err = |reason: String| CookError::Clip {
            file: imported.source.clone(),
            clip: source.name.clone(),
            reason,
        };
        let meta = imported.clip_meta.get(index).unwrap_or(&no_meta);
        let skeleton = package
            .skeletons
            .get(source.skeleton as usize)
            .ok_or_else(|| {
                err(format!(
                    "names skeleton {}, but there are {}",
                    source.skeleton,
                    imported.package.skeletons.len()
                ))
            })?;
        let motion = motion_joint(meta, skeleton)?;
        if motion.is_some_and(|(_, p)| p == RootMotionPolicy::Planar) && !keeps_up(skeleton) {
            warnings.push(format!(
                "clip '{}': planar root motion is extracted about component-space +Y, which the skeleton's root \
                 transform does not keep vertical in the scene",
                source.name
            ));
        }
        let mut clip = resample(source, skeleton, profile, motion).map_err(err)?;
        clip.events = metadata::events(meta, &clip)?;
        clip.markers = metadata::markers(meta, &clip)?;
        for (curve, values) in metadata::curves(meta, &clip)? {
            curves.push(metadata::ClipCurve {
                clip: package.clips.len() as u32,
                skeleton: clip.skeleton,
                curve,
                values,
            });
        }
        let error = measure_clip_error(skeleton, source, &clip);
        reports.push(ClipReport::new(
            &clip,
            skeleton,
            rest_extent(skeleton),
            &error,
        ));
        package.clips.push(clip);
    }
    for pin in &imported.lod_pins {
        if package
            .skeletons
            .iter()
            .all(|s| s.find(&pin.value).is_none())
        {
            let reason = format!("no skeleton has a joint named '{}'", pin.value);
            return Err(pin.origin.error(reason));
        }
    }
    let mut weight_reports = Vec::with_capacity(imported.source_weight_clips.len());
    for source in &imported.source_weight_clips {
        let (clip, report) =
            resample_weights(source, &package, profile).map_err(|reason| CookError::Clip {
                file: imported.source.clone(),
                clip: source.name.clone(),
                reason,
            })?;
        package.scene.clips.push(clip);
        weight_reports.push(report);
    }
    let morph = morph_curves(&package, &imported.source, &mut warnings);
    curves.extend(
        morph
            .iter()
            .map(|(clip, skeleton, curve, values)| metadata::ClipCurve {
                clip: *clip,
                skeleton: *skeleton,
                curve,
                values: values.clone(),
            }),
    );
    package.curves = metadata::channels(curves)?;
    let pins: Vec<String> = imported.lod_pins.iter().map(|p| p.value.clone()).collect();
    let lods = crate::lod::build_lods(&mut package, &pins)?;
    let mut report = CookReport::new(imported, profile, &package, reports);
    for (skeleton, levels) in report.skeletons.iter_mut().zip(lods) {
        skeleton.lods = levels;
    }
    report.weight_clips = weight_reports;
    report.warnings.extend(warnings);
    Ok((package, report))
}

/// The morph weights of each skinned mesh node as scalar curves of its skin's skeleton, so pose
/// programs carry them (docs/morph-targets.md, "Morph weights as curves"): target `i` of node
/// NAME is the `blend` curve `morph/NAME/i`, unbounded, its default the node's default weight;
/// each weight clip's track of the node becomes the curve's track on the skeleton clip of the
/// same animation (the weight clip was sampled on that clip's grid). A weight clip with no such
/// clip of the skeleton (or another grid) keeps its weights in the SCENE section alone, with a
/// warning. Each entry: the clip, the skeleton, the curve and its values.
fn morph_curves(
    package: &Package,
    file: &str,
    warnings: &mut Vec<String>,
) -> Vec<(u32, u32, Placed<AuthoredCurve>, Vec<f32>)> {
    let mut out = Vec::new();
    for (k, node) in package.scene.nodes.iter().enumerate() {
        let Some(skeleton) = node
            .skin
            .and_then(|s| package.skins.get(s as usize))
            .map(|s| s.skeleton)
        else {
            continue;
        };
        let targets = node.weights.len();
        for w in &package.scene.clips {
            let Some(track) = w.tracks.iter().find(|t| t.node as usize == k) else {
                continue;
            };
            let clip = (package.clips.iter())
                .position(|c| c.skeleton == skeleton && c.name == w.name)
                .filter(|&c| package.clips[c].sample_count == w.sample_count);
            let Some(clip) = clip else {
                warnings.push(format!(
                    "morph weights of node '{}' in '{}': no clip of the skin's skeleton on the same \
                     samples, so no program carries them (throng pose still shows them)",
                    node.name, w.name
                ));
                continue;
            };
            for i in 0..targets {
                let curve = AuthoredCurve {
                    name: format!("morph/{}/{i}", node.name),
                    composition: Composition::Blend,
                    default: node.weights[i],
                    min: f32::NEG_INFINITY,
                    max: f32::INFINITY,
                    step: false,
                    keys: Vec::new(),
                };
                let origin = Origin {
                    file: file.to_string(),
                    line: None,
                    key: format!("animations ('{}') weights of node '{}'", w.name, node.name),
                };
                let values = track
                    .values
                    .iter()
                    .skip(i)
                    .step_by(targets)
                    .copied()
                    .collect();
                out.push((
                    clip as u32,
                    skeleton,
                    Placed {
                        value: curve,
                        origin,
                    },
                    values,
                ));
            }
        }
    }
    out
}

/// The skeleton joint and policy of the clip's root-motion request, if any.
fn motion_joint(
    meta: &ClipMeta,
    skeleton: &Skeleton,
) -> Result<Option<(u32, RootMotionPolicy)>, CookError> {
    let Some(request) = &meta.root_motion else {
        return Ok(None);
    };
    let name = &request.value.joint;
    match skeleton.names.iter().position(|n| n == name) {
        Some(j) => Ok(Some((j as u32, request.value.policy))),
        None => Err(request.origin.error(format!(
            "the clip's skeleton (root '{}', {} joints) has no joint named '{name}'",
            skeleton.names.first().map_or("", String::as_str),
            skeleton.joint_count()
        ))),
    }
}

/// Whether the skeleton's root transform maps component +Y to scene +Y (up to 1e-3).
fn keeps_up(skeleton: &Skeleton) -> bool {
    let up = skeleton
        .root_transform
        .transform_vector3(glam::Vec3::Y)
        .normalize_or_zero();
    (up - glam::Vec3::Y).length() <= 1e-3
}

/// One cooked clip from its source curves, with `motion`'s trajectory extracted; the error names
/// what is wrong. Events and markers are left empty.
fn resample(
    source: &SourceClip,
    skeleton: &Skeleton,
    profile: &Profile,
    motion: Option<(u32, RootMotionPolicy)>,
) -> Result<Clip, String> {
    let joints = skeleton.joint_count();
    if let Some(c) = source.channels.iter().find(|c| c.joint as usize >= joints) {
        return Err(format!(
            "a channel targets joint {}, but the skeleton has {joints}",
            c.joint
        ));
    }
    // The clip stores its rate as f32: count samples with exactly that value.
    let rate = f64::from(clip_rate(source, profile) as f32);
    let duration = f64::from(source.duration);
    if !(rate.is_finite() && rate > 0.0) {
        return Err(format!("profile '{}' has sample rate {rate}", profile.name));
    }
    if !(duration.is_finite() && duration >= 0.0 && duration * rate < MAX_SAMPLES) {
        return Err(format!(
            "duration {duration} s cannot be sampled at {rate} Hz"
        ));
    }
    let n = if duration > 0.0 {
        (duration * rate - 1e-6).ceil().max(0.0) as usize + 1
    } else {
        1
    };
    let time = |i: usize| {
        if i + 1 == n {
            duration
        } else {
            (i as f64 / rate).min(duration)
        }
    };

    // Poses sample-major: `poses[i * joints + j]`.
    let mut poses = vec![Trs::IDENTITY; n * joints];
    for (i, pose) in poses.chunks_exact_mut(joints).enumerate() {
        sample_exact(source, skeleton, time(i) as f32, pose);
        if let Some((j, p)) = pose
            .iter()
            .enumerate()
            .find(|(_, p)| !p.is_finite() || p.scale.min_element() < MIN_SCALE)
        {
            return Err(format!(
                "joint '{}' at {:.4} s samples to {p:?} (non-finite or scale below {MIN_SCALE})",
                skeleton.names[j],
                time(i)
            ));
        }
    }
    let root_motion = motion
        .map(|(joint, policy)| root_motion::extract(&mut poses, joints, skeleton, joint, policy));
    for j in 0..joints {
        for i in 1..n {
            let prev = poses[(i - 1) * joints + j].rotation;
            let q = &mut poses[i * joints + j].rotation;
            if prev.dot(*q) < 0.0 {
                *q = -*q;
            }
        }
    }

    let mut sub_tracks = Vec::with_capacity(3 * joints);
    let mut values = Vec::new();
    for j in 0..joints {
        let track = |i: usize| &poses[i * joints + j];
        let rest = &skeleton.rest[j];
        let t: Vec<[f32; 4]> = (0..n)
            .map(|i| vec4(track(i).translation.to_array()))
            .collect();
        let q: Vec<[f32; 4]> = (0..n).map(|i| track(i).rotation.to_array()).collect();
        let s: Vec<[f32; 4]> = (0..n).map(|i| vec4(track(i).scale.to_array())).collect();
        push_sub_track(
            &t,
            3,
            vec4(rest.translation.to_array()),
            same_value,
            &mut sub_tracks,
            &mut values,
        );
        push_sub_track(
            &q,
            4,
            rest.rotation.to_array(),
            same_rotation,
            &mut sub_tracks,
            &mut values,
        );
        push_sub_track(
            &s,
            3,
            vec4(rest.scale.to_array()),
            same_value,
            &mut sub_tracks,
            &mut values,
        );
    }

    let first = &poses[..joints];
    let last = &poses[(n - 1) * joints..];
    let loops = n >= 2
        && first.iter().zip(last).all(|(a, b)| {
            same_value(
                &vec4(a.translation.to_array()),
                &vec4(b.translation.to_array()),
            ) && same_rotation(&a.rotation.to_array(), &b.rotation.to_array())
                && same_value(&vec4(a.scale.to_array()), &vec4(b.scale.to_array()))
        });
    Ok(Clip {
        name: source.name.clone(),
        skeleton: source.skeleton,
        skeleton_hash: skeleton.identity_hash(),
        duration,
        sample_rate: rate as f32,
        sample_count: n as u32,
        loop_policy: if loops {
            LoopPolicy::Loop
        } else {
            LoopPolicy::Once
        },
        profile: profile.name.to_string(),
        sub_tracks,
        values,
        events: Vec::new(),
        markers: Vec::new(),
        root_motion,
        compressed: None,
    })
}

/// Smallest key interval, in seconds, that counts as a grid (rates above 1 kHz are not grids).
const MIN_GRID_PERIOD: f64 = 1e-3;
/// How far a key may sit off the grid, as a fraction of the grid period: f32 key times drift by
/// about 1e-4 s over a minute of 120 Hz mocap, and a key 1 % of a period off moves nothing visibly.
const GRID_TOLERANCE: f64 = 0.01;

/// The clip's sample rate. When every channel is LINEAR and every key lies on one grid `k · p`
/// (p the smallest key interval), the rate stays on that grid so that cooked samples land on
/// source keys: a dense grid (rate ≥ half the profile's) is thinned by the smallest whole factor
/// that brings it to `profile.max_rate` or below, a sparse one is multiplied by the smallest whole
/// factor that reaches `profile.sample_rate`. Otherwise (STEP or CUBICSPLINE channels, irregular
/// keys) the rate is `profile.sample_rate`.
pub fn clip_rate(source: &SourceClip, profile: &Profile) -> f64 {
    grid_rate(
        source
            .channels
            .iter()
            .map(|c| (c.interpolation, c.times.as_slice())),
        profile,
    )
}

/// [`clip_rate`] over any channels' interpolations and key times.
fn grid_rate<'a>(
    channels: impl Iterator<Item = (Interpolation, &'a [f32])> + Clone,
    profile: &Profile,
) -> f64 {
    let fallback = f64::from(profile.sample_rate);
    if channels.clone().any(|(i, _)| i != Interpolation::Linear) {
        return fallback;
    }
    let period = channels
        .clone()
        .flat_map(|(_, times)| times.windows(2).map(|w| f64::from(w[1]) - f64::from(w[0])))
        .fold(f64::INFINITY, f64::min);
    if !(period.is_finite() && period >= MIN_GRID_PERIOD) {
        return fallback;
    }
    // f32 key times read back 1/120 s as 120.002 Hz: snap to a whole rate when that close.
    let raw = 1.0 / period;
    let grid_rate = if (raw - raw.round()).abs() <= 1e-3 * raw {
        raw.round()
    } else {
        raw
    };
    let on_grid = |t: f32| {
        let k = (f64::from(t) * grid_rate).round();
        (f64::from(t) - k / grid_rate).abs() <= GRID_TOLERANCE / grid_rate
    };
    if !channels
        .clone()
        .all(|(_, times)| times.iter().all(|&t| on_grid(t)))
    {
        return fallback;
    }
    if grid_rate >= 0.5 * fallback {
        grid_rate
            / (grid_rate / f64::from(profile.max_rate) - 1e-9)
                .ceil()
                .max(1.0)
    } else {
        grid_rate * (fallback / grid_rate - 1e-9).ceil()
    }
}

/// Samples per clip test interval when measuring a weight clip's error: the cooked lerp is
/// compared with the exact curves at this many evenly spaced times inside each sample interval
/// (and at every sample).
const WEIGHT_ERROR_STEPS: u32 = 8;

/// One cooked weight clip from its source channels: at the rate and sample times of the skeleton
/// clip of the same animation when there is one (so both sample on one grid), else at
/// [`grid_rate`] of its own keys; with its measured error (largest |cooked − exact| over every
/// weight, at [`WEIGHT_ERROR_STEPS`] times per sample interval).
fn resample_weights(
    source: &SourceWeightClip,
    package: &Package,
    profile: &Profile,
) -> Result<(WeightClip, WeightClipReport), String> {
    let skeleton_clip = package.clips.iter().find(|c| c.name == source.name);
    let (rate, duration) = match skeleton_clip {
        Some(c) => (f64::from(c.sample_rate), c.duration),
        None => (
            f64::from(grid_rate(
                source
                    .channels
                    .iter()
                    .map(|c| (c.interpolation, c.times.as_slice())),
                profile,
            ) as f32),
            f64::from(source.duration),
        ),
    };
    if !(rate.is_finite() && rate > 0.0) {
        return Err(format!("profile '{}' has sample rate {rate}", profile.name));
    }
    if !(duration.is_finite() && duration >= 0.0 && duration * rate < MAX_SAMPLES) {
        return Err(format!(
            "duration {duration} s cannot be sampled at {rate} Hz"
        ));
    }
    let n = match skeleton_clip {
        Some(c) => c.sample_count as usize,
        None if duration > 0.0 => (duration * rate - 1e-6).ceil().max(0.0) as usize + 1,
        None => 1,
    };
    let mut clip = WeightClip {
        name: source.name.clone(),
        duration,
        sample_rate: rate as f32,
        sample_count: n as u32,
        tracks: Vec::with_capacity(source.channels.len()),
    };
    for channel in &source.channels {
        let width = channel.width as usize;
        let mut values = vec![0.0f32; n * width];
        for (i, out) in values.chunks_exact_mut(width).enumerate() {
            if !channel.sample(clip.sample_time(i as u32), out) {
                return Err(format!(
                    "the weights channel of mesh node {} does not hold {} keys of {width} weights",
                    channel.node,
                    channel.times.len()
                ));
            }
        }
        clip.tracks.push(WeightTrack {
            node: channel.node,
            values,
        });
    }
    // Measure: the cooked lerp against the exact curves, inside every sample interval.
    let (mut max_error, mut worst_time) = (0.0f32, 0.0f64);
    let steps = if n > 1 { WEIGHT_ERROR_STEPS } else { 1 };
    for channel in &source.channels {
        let width = channel.width as usize;
        let (mut exact, mut cooked) = (vec![0.0f32; width], vec![0.0f32; width]);
        for i in 0..n as u32 {
            let t0 = clip.sample_time(i);
            let t1 = clip.sample_time((i + 1).min(n as u32 - 1));
            for k in 0..steps {
                let t = t0 + (t1 - t0) * f64::from(k) / f64::from(steps);
                channel.sample(t, &mut exact);
                clip.sample(channel.node, t, &mut cooked);
                for (a, b) in exact.iter().zip(&cooked) {
                    if (a - b).abs() > max_error {
                        max_error = (a - b).abs();
                        worst_time = t;
                    }
                }
            }
        }
    }
    let report = WeightClipReport {
        name: clip.name.clone(),
        duration_s: clip.duration,
        sample_rate: clip.sample_rate,
        samples: clip.sample_count,
        tracks: clip.tracks.len(),
        weights: source.channels.iter().map(|c| c.width as usize).sum(),
        bytes: clip.tracks.iter().map(|t| 4 * t.values.len()).sum(),
        max_error,
        worst_time_s: worst_time as f32,
    };
    Ok((clip, report))
}

/// Classifies one sub-track's samples (each padded to 4 floats, `width` used) and appends it.
fn push_sub_track(
    samples: &[[f32; 4]],
    width: usize,
    rest: [f32; 4],
    same: fn(&[f32; 4], &[f32; 4]) -> bool,
    sub_tracks: &mut Vec<SubTrack>,
    values: &mut Vec<f32>,
) {
    let offset = values.len() as u32;
    let kind = if samples.iter().all(|v| same(v, &rest)) {
        SubTrackKind::Default
    } else if samples.iter().all(|v| same(v, &samples[0])) {
        values.extend_from_slice(&samples[0][..width]);
        SubTrackKind::Constant
    } else {
        for v in samples {
            values.extend_from_slice(&v[..width]);
        }
        SubTrackKind::Animated
    };
    sub_tracks.push(SubTrack {
        kind,
        offset: if kind == SubTrackKind::Default {
            0
        } else {
            offset
        },
    });
}

fn vec4(v: [f32; 3]) -> [f32; 4] {
    [v[0], v[1], v[2], 0.0]
}

fn same_value(a: &[f32; 4], b: &[f32; 4]) -> bool {
    a.iter().zip(b).all(|(&x, &y)| {
        let (x, y) = (f64::from(x), f64::from(y));
        (x - y).abs() <= VALUE_TOLERANCE * x.abs().max(y.abs()).max(1e-3)
    })
}

fn same_rotation(a: &[f32; 4], b: &[f32; 4]) -> bool {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum();
    let norm = |q: &[f32; 4]| {
        q.iter()
            .map(|&x| f64::from(x) * f64::from(x))
            .sum::<f64>()
            .sqrt()
    };
    1.0 - dot.abs() / (norm(a) * norm(b)) <= ROTATION_TOLERANCE
}
