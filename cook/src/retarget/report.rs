//! What a retarget did to each clip, measured on the cooked (and compressed) target clip against
//! the source: bone directions per chain, foot sliding during the source's foot contacts, root
//! speed, and the cook's own error (docs/retargeting.md).
//!
//! Contact detector: a source foot joint is in contact on the frames where it is within
//! [`CONTACT_HEIGHT`] of the lowest height it reaches in the clip and moves horizontally slower
//! than [`CONTACT_SPEED`], in runs of at least [`CONTACT_MIN_S`]. A contact's slide is the
//! largest horizontal distance the foot gets from where it was on the contact's first frame; the
//! source's is scaled by the retarget scale so the two compare on the target.

use std::fmt;

use glam::DVec3;
use serde::Serialize;
use throng_cpu_ref::clip::{root_motion_affine, sample_clip};
use throng_cpu_ref::{Clip, Skeleton};

use super::scene::ScenePose;
use super::{Binding, Motion, Source};
use crate::CookReport;

/// Contact height band above the foot's lowest point in the clip, scene units of the source.
pub const CONTACT_HEIGHT: f64 = 0.02;
/// Contact speed limit, scene units of the source per second.
pub const CONTACT_SPEED: f64 = 0.15;
/// Shortest contact, seconds.
pub const CONTACT_MIN_S: f64 = 0.05;
/// A contact in which the source's own (scaled) slide stays within this counts as still.
pub const STILL_CM: f64 = 0.5;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Stat {
    pub mean: f64,
    pub max: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ChainError {
    pub name: String,
    pub direction_error_deg: Stat,
}

/// One retargeted clip's figures.
#[derive(Clone, Debug, Serialize)]
pub struct ClipRetargetReport {
    pub name: String,
    pub duration_s: f64,
    /// Angle between each mapped bone (a chain joint to the next) on the target and the source's
    /// (under the facing alignment), over every chain bone and source key time.
    pub direction_error_deg: Stat,
    pub chains: Vec<ChainError>,
    /// Worst target slide over the contacts in which the source's foot stays still (its own
    /// slide, scaled, at most [`STILL_CM`]), cm.
    pub foot_slide_cm: f64,
    /// Worst scaled source slide over all contacts, cm.
    pub source_foot_slide_cm: f64,
    pub contacts: usize,
    pub still_contacts: usize,
    /// Mean horizontal speed of the source's translation joint over the target's (root motion
    /// recomposed): about 1 / scale when travel carries over.
    pub root_speed_ratio: f64,
    /// Non-finite values in the cooked clip's pose at the source key times.
    pub non_finite: usize,
    /// The cook's error (reference encoding against the retargeted curves), cm.
    pub cook_error_cm: f32,
    /// The codec's error against the reference encoding, cm, and the profile's threshold.
    pub codec_error_cm: Option<f32>,
    pub codec_threshold_cm: Option<f32>,
}

/// The report of one retarget run.
#[derive(Clone, Debug, Serialize)]
pub struct RetargetReport {
    pub source: String,
    pub target: String,
    pub profile: String,
    pub scale: f64,
    pub facing_deg: f64,
    pub clips: Vec<ClipRetargetReport>,
    pub warnings: Vec<String>,
}

/// Measures every retargeted clip (those of `source` that `package` holds under the same name).
pub fn measure(
    binding: &Binding,
    source: &Source,
    package: &throng_cpu_ref::Package,
    cook: &CookReport,
    profile_file: &str,
) -> RetargetReport {
    let src = &source.package.skeletons[0];
    let tgt = &package.skeletons[0];
    let clips = source
        .clips
        .iter()
        .filter_map(|(motion, _)| {
            let clip = package.clips.iter().find(|c| c.name == motion.name())?;
            Some(measure_clip(binding, src, motion, tgt, clip, cook))
        })
        .collect();
    let (axis, angle) = binding.facing.to_axis_angle();
    RetargetReport {
        source: source.file.clone(),
        target: cook.source.clone(),
        profile: profile_file.to_string(),
        scale: binding.scale,
        facing_deg: (angle * axis.y.signum()).to_degrees(),
        clips,
        warnings: binding.warnings.clone(),
    }
}

fn measure_clip(
    binding: &Binding,
    src: &Skeleton,
    motion: &Motion,
    tgt: &Skeleton,
    clip: &Clip,
    cook: &CookReport,
) -> ClipRetargetReport {
    let times = motion.times();
    let mut s_local = src.rest.clone();
    let mut t_local = tgt.rest.clone();
    let (mut s_pose, mut t_pose) = (ScenePose::default(), ScenePose::default());
    let s_root = src.root_transform.as_daffine3();
    let t_root = tgt.root_transform.as_daffine3();
    let mut chains: Vec<(f64, f64, usize)> = vec![(0.0, 0.0, 0); binding.chains.len()];
    let mut s_feet: Vec<Vec<DVec3>> = vec![Vec::with_capacity(times.len()); binding.feet.len()];
    let mut t_feet = s_feet.clone();
    let (tj, sj) = binding.translation_joint;
    let (mut s_path, mut t_path) = (0.0, 0.0);
    let (mut s_last, mut t_last): (Option<DVec3>, Option<DVec3>) = (None, None);
    let mut non_finite = 0;
    for &time in &times {
        motion.sample(src, time, &mut s_local);
        sample_clip(clip, tgt, time as f32, &mut t_local);
        non_finite += t_local.iter().filter(|t| !t.is_finite()).count();
        s_pose.fill(src, &s_local, s_root);
        let placed = t_root * root_motion_affine(clip, time as f32).as_daffine3();
        t_pose.fill(tgt, &t_local, placed);
        for (acc, (_, t_joints, s_joints)) in chains.iter_mut().zip(&binding.chains) {
            for k in 1..t_joints.len() {
                let dt = t_pose.position(t_joints[k]) - t_pose.position(t_joints[k - 1]);
                let ds = binding.facing
                    * (s_pose.position(s_joints[k]) - s_pose.position(s_joints[k - 1]));
                let angle = angle_deg(dt, ds);
                acc.0 += angle;
                acc.1 = acc.1.max(angle);
                acc.2 += 1;
            }
        }
        for (k, &(s, t)) in binding.feet.iter().enumerate() {
            s_feet[k].push(s_pose.position(s));
            t_feet[k].push(t_pose.position(t));
        }
        let (sp, tp) = (flat(s_pose.position(sj)), flat(t_pose.position(tj)));
        s_path += s_last.map_or(0.0, |l| (sp - l).length());
        t_path += t_last.map_or(0.0, |l| (tp - l).length());
        (s_last, t_last) = (Some(sp), Some(tp));
    }
    let mut contacts = 0;
    let mut still = 0;
    let (mut foot_slide, mut source_slide) = (0.0f64, 0.0f64);
    for (s, t) in s_feet.iter().zip(&t_feet) {
        for run in contact_runs(s, &times) {
            contacts += 1;
            let s_slide = slide(&s[run.clone()]) * binding.scale * 100.0;
            let t_slide = slide(&t[run]) * 100.0;
            source_slide = source_slide.max(s_slide);
            if s_slide <= STILL_CM {
                still += 1;
                foot_slide = foot_slide.max(t_slide);
            }
        }
    }
    let total = chains.iter().map(|c| c.2).sum::<usize>().max(1);
    let direction = Stat {
        mean: chains.iter().map(|c| c.0).sum::<f64>() / total as f64,
        max: chains.iter().map(|c| c.1).fold(0.0, f64::max),
    };
    let cooked = cook.clips.iter().find(|c| c.name == clip.name);
    let codec = cook.codec.as_ref();
    ClipRetargetReport {
        name: clip.name.clone(),
        duration_s: clip.duration,
        direction_error_deg: direction,
        chains: binding
            .chains
            .iter()
            .zip(&chains)
            .map(|((name, ..), c)| ChainError {
                name: name.clone(),
                direction_error_deg: Stat {
                    mean: c.0 / c.2.max(1) as f64,
                    max: c.1,
                },
            })
            .collect(),
        foot_slide_cm: foot_slide,
        source_foot_slide_cm: source_slide,
        contacts,
        still_contacts: still,
        root_speed_ratio: if t_path > 1e-9 { s_path / t_path } else { 0.0 },
        non_finite,
        cook_error_cm: cooked.map_or(0.0, |c| c.max_error_cm),
        codec_error_cm: codec
            .and_then(|c| c.clips.iter().find(|k| k.name == clip.name))
            .map(|k| k.max_error_cm),
        codec_threshold_cm: codec.map(|c| c.threshold_cm),
    }
}

fn flat(v: DVec3) -> DVec3 {
    DVec3::new(v.x, 0.0, v.z)
}

fn angle_deg(a: DVec3, b: DVec3) -> f64 {
    match (a.try_normalize(), b.try_normalize()) {
        (Some(a), Some(b)) => a.cross(b).length().atan2(a.dot(b)).to_degrees(),
        _ => 0.0,
    }
}

/// Frame ranges in which a foot at `positions` (one per time) is in contact.
pub fn contact_runs(positions: &[DVec3], times: &[f64]) -> Vec<std::ops::Range<usize>> {
    let n = positions.len();
    if n < 2 {
        return Vec::new();
    }
    let lowest = positions.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let speed = |i: usize| {
        let (a, b) = (i.saturating_sub(1), (i + 1).min(n - 1));
        let dt = times[b] - times[a];
        if dt > 0.0 {
            (flat(positions[b]) - flat(positions[a])).length() / dt
        } else {
            0.0
        }
    };
    let contact = |i: usize| positions[i].y <= lowest + CONTACT_HEIGHT && speed(i) < CONTACT_SPEED;
    let mut runs = Vec::new();
    let mut i = 0;
    while i < n {
        if !contact(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && contact(i) {
            i += 1;
        }
        if times[i - 1] - times[start] >= CONTACT_MIN_S {
            runs.push(start..i);
        }
    }
    runs
}

/// Largest horizontal distance from the first position.
fn slide(positions: &[DVec3]) -> f64 {
    let first = flat(positions[0]);
    positions
        .iter()
        .map(|p| (flat(*p) - first).length())
        .fold(0.0, f64::max)
}

impl fmt::Display for RetargetReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "retarget {} onto {} ({}): scale {:.4}, facing turn {:.1}°",
            self.source, self.target, self.profile, self.scale, self.facing_deg
        )?;
        writeln!(
            f,
            "{:<28} {:>8} {:>8} {:>9} {:>9} {:>9} {:>7} {:>9}",
            "clip", "dir mean", "dir max", "slide cm", "src slide", "contacts", "speed", "codec cm"
        )?;
        for c in &self.clips {
            writeln!(
                f,
                "{:<28} {:>7.3}° {:>7.3}° {:>9.3} {:>9.3} {:>5}/{:<3} {:>7.3} {:>9}",
                c.name,
                c.direction_error_deg.mean,
                c.direction_error_deg.max,
                c.foot_slide_cm,
                c.source_foot_slide_cm,
                c.still_contacts,
                c.contacts,
                c.root_speed_ratio,
                c.codec_error_cm
                    .map_or("-".to_string(), |e| format!("{e:.4}")),
            )?;
            let chains: Vec<String> = c
                .chains
                .iter()
                .map(|k| {
                    let d = &k.direction_error_deg;
                    format!("{} {:.2}/{:.2}", k.name, d.mean, d.max)
                })
                .collect();
            writeln!(f, "  chains (mean/max °): {}", chains.join(", "))?;
        }
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        Ok(())
    }
}
