//! The cook report: what a cook produced and how far the cooked clips are from their source,
//! as data (`serde`, for `--json`) and as an aligned text table (`Display`).

use std::fmt;

use glam::{Affine3A, Vec3};
use serde::Serialize;
use throng_cpu_ref::error_metric::ClipError;
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::{Clip, LoopPolicy, Package, RootMotionPolicy, Skeleton, SubTrackKind};

use crate::{Imported, Profile};

/// Bytes of one sub-track table entry in the reference encoding (kind and offset).
const SUB_TRACK_BYTES: usize = 8;
/// Bytes of one trajectory sample (translation and rotation, f32).
const TRAJECTORY_SAMPLE_BYTES: usize = 28;

#[derive(Clone, Debug, Default, Serialize)]
pub struct CookReport {
    pub source: String,
    pub profile: String,
    /// The profile's sample rate for clips not keyed on a uniform grid (each clip reports its own).
    pub sample_rate: f32,
    pub skeletons: Vec<SkeletonReport>,
    pub skins: Vec<SkinReport>,
    pub meshes: Vec<MeshReport>,
    pub clips: Vec<ClipReport>,
    /// Import warnings (skipped channels and primitives, normalised weights, ignored sets).
    pub warnings: Vec<String>,
    /// Sum of the clips' `bytes`.
    pub total_clip_bytes: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct SkeletonReport {
    pub joints: usize,
    /// Name of the root joint.
    pub root: String,
    /// Scene-space bounding-box diagonal of the rest-pose joint positions (scene units).
    pub extent: f32,
}

#[derive(Clone, Debug, Serialize)]
pub struct SkinReport {
    pub name: String,
    pub skeleton: u32,
    /// Palette size (the glTF skin's joint count).
    pub joints: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct MeshReport {
    pub name: String,
    pub skin: u32,
    pub vertices: usize,
    pub triangles: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct ClipReport {
    pub name: String,
    pub skeleton: u32,
    pub duration_s: f64,
    /// Samples per second (see `Profile`: key-aligned clips keep their source grid).
    pub sample_rate: f32,
    pub samples: u32,
    /// `loop` or `once`.
    pub loop_policy: &'static str,
    pub animated: usize,
    pub constant: usize,
    pub default: usize,
    /// Stored size in the reference encoding: f32 values, the sub-track table and the trajectory.
    pub bytes: usize,
    /// Events and sync markers stored.
    pub events: usize,
    pub markers: usize,
    /// The extracted trajectory, when the clip has root motion.
    pub root_motion: Option<RootMotionReport>,
    /// Cooked-vs-source error at virtual vertices 3 cm from each joint, in cm. For a clip with
    /// root motion the cooked pose is the trajectory recomposed with the residual, `R(t) · pose`,
    /// measured against the source: an error in either part, or motion kept twice, shows.
    pub max_error_cm: f32,
    pub p99_error_cm: f32,
    /// `max_error_cm` as a fraction of the skeleton's extent: comparable across rigs whose scene
    /// units are not metres (FBX exports with 100× factors); `None` for a zero extent.
    pub max_error_of_extent: Option<f32>,
    /// Joint and time of the largest error.
    pub worst_joint: String,
    pub worst_time_s: f32,
}

#[derive(Clone, Debug, Serialize)]
pub struct RootMotionReport {
    /// The motion joint.
    pub joint: String,
    /// `planar` or `full`.
    pub policy: &'static str,
    /// Translation of one whole pass, `inverse(R(0)) * R(duration)`, in metres, in the frame of
    /// the first sample.
    pub displacement_m: [f32; 3],
    /// Rotation angle of one whole pass, degrees (for `planar`, the signed turn about +Y).
    pub turn_deg: f32,
}

impl RootMotionReport {
    fn new(clip: &Clip, skeleton: &Skeleton) -> Option<Self> {
        let motion = clip.root_motion.as_ref()?;
        let (t, q) = motion.cycle();
        let turn = match motion.policy {
            RootMotionPolicy::Planar => 2.0 * q.y.atan2(q.w),
            RootMotionPolicy::Full => q.to_axis_angle().1,
        };
        Some(RootMotionReport {
            joint: skeleton.names.get(motion.joint as usize).cloned().unwrap_or_default(),
            policy: match motion.policy {
                RootMotionPolicy::Planar => "planar",
                RootMotionPolicy::Full => "full",
            },
            displacement_m: t.to_array(),
            turn_deg: turn.to_degrees(),
        })
    }
}

impl ClipReport {
    /// `extent`: the skeleton's [`SkeletonReport::extent`].
    pub fn new(clip: &Clip, skeleton: &Skeleton, extent: f32, error: &ClipError) -> Self {
        let count = |kind| clip.sub_tracks.iter().filter(|t| t.kind == kind).count();
        ClipReport {
            name: clip.name.clone(),
            skeleton: clip.skeleton,
            duration_s: clip.duration,
            sample_rate: clip.sample_rate,
            samples: clip.sample_count,
            loop_policy: match clip.loop_policy {
                LoopPolicy::Loop => "loop",
                LoopPolicy::Once => "once",
            },
            animated: count(SubTrackKind::Animated),
            constant: count(SubTrackKind::Constant),
            default: count(SubTrackKind::Default),
            bytes: 4 * clip.values.len()
                + SUB_TRACK_BYTES * clip.sub_tracks.len()
                + TRAJECTORY_SAMPLE_BYTES * clip.root_motion.as_ref().map_or(0, |m| m.translations.len()),
            events: clip.events.len(),
            markers: clip.markers.len(),
            root_motion: RootMotionReport::new(clip, skeleton),
            max_error_cm: error.max_cm,
            p99_error_cm: error.p99_cm,
            max_error_of_extent: (extent > 0.0).then(|| error.max_cm / 100.0 / extent),
            worst_joint: skeleton.names.get(error.worst_joint as usize).cloned().unwrap_or_default(),
            worst_time_s: error.worst_time,
        }
    }
}

impl CookReport {
    pub fn new(imported: &Imported, profile: &Profile, package: &Package, clips: Vec<ClipReport>) -> Self {
        CookReport {
            source: imported.source.clone(),
            profile: profile.name.to_string(),
            sample_rate: profile.sample_rate,
            skeletons: package
                .skeletons
                .iter()
                .map(|s| SkeletonReport {
                    joints: s.joint_count(),
                    root: s.names.first().cloned().unwrap_or_default(),
                    extent: rest_extent(s),
                })
                .collect(),
            skins: package
                .skins
                .iter()
                .map(|s| SkinReport { name: s.name.clone(), skeleton: s.skeleton, joints: s.joints.len() })
                .collect(),
            meshes: package
                .meshes
                .iter()
                .map(|m| MeshReport {
                    name: m.name.clone(),
                    skin: m.skin,
                    vertices: m.positions.len(),
                    triangles: m.indices.len() / 3,
                })
                .collect(),
            total_clip_bytes: clips.iter().map(|c| c.bytes).sum(),
            clips,
            warnings: imported.warnings.clone(),
        }
    }
}

/// Bounding-box diagonal of a skeleton's rest-pose joint positions in scene space.
pub fn rest_extent(skeleton: &Skeleton) -> f32 {
    let mut component = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    local_to_component(skeleton, &skeleton.rest, &mut component);
    let (lo, hi) = component.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), c| {
        let p = skeleton.root_transform.transform_point3(c.translation.into());
        (lo.min(p), hi.max(p))
    });
    if component.is_empty() {
        0.0
    } else {
        (hi - lo).length()
    }
}

impl fmt::Display for CookReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}: profile {} ({} Hz unless key-aligned)", self.source, self.profile, self.sample_rate)?;
        let rows = self
            .skeletons
            .iter()
            .enumerate()
            .map(|(i, s)| vec![i.to_string(), s.joints.to_string(), format!("{:.3}", s.extent), s.root.clone()]);
        table(f, "skeletons", &["#", "joints", "extent", "root"], rows.collect())?;
        let rows = self.skins.iter().map(|s| vec![s.name.clone(), s.skeleton.to_string(), s.joints.to_string()]);
        table(f, "skins", &["name", "skeleton", "joints"], rows.collect())?;
        let rows = self
            .meshes
            .iter()
            .map(|m| vec![m.name.clone(), m.skin.to_string(), m.vertices.to_string(), m.triangles.to_string()]);
        table(f, "meshes", &["name", "skin", "vertices", "triangles"], rows.collect())?;
        let rows = self.clips.iter().map(|c| {
            vec![
                c.name.clone(),
                c.skeleton.to_string(),
                format!("{:.3}", c.duration_s),
                format!("{}", c.sample_rate),
                c.samples.to_string(),
                c.loop_policy.to_string(),
                format!("{}/{}/{}", c.animated, c.constant, c.default),
                c.bytes.to_string(),
                format!("{}/{}", c.events, c.markers),
                c.root_motion.as_ref().map_or("-".into(), |r| {
                    let [x, y, z] = r.displacement_m;
                    format!("{} {} ({x:.3}, {y:.3}, {z:.3}) m {:.1}°", r.policy, r.joint, r.turn_deg)
                }),
                format!("{:.4}", c.max_error_cm),
                format!("{:.4}", c.p99_error_cm),
                c.max_error_of_extent.map_or("-".into(), |r| format!("{:.4}", 100.0 * r)),
                format!("{} @ {:.3} s", c.worst_joint, c.worst_time_s),
            ]
        });
        let header = [
            "clip",
            "skel",
            "dur (s)",
            "Hz",
            "samples",
            "loop",
            "anim/const/def",
            "bytes",
            "ev/mk",
            "root motion per pass",
            "max (cm)",
            "p99 (cm)",
            "max (% ext)",
            "worst",
        ];
        table(f, "clips", &header, rows.collect())?;
        if self.clips.iter().any(|c| c.root_motion.is_some()) {
            writeln!(f, "error of root-motion clips: trajectory · residual pose against the source")?;
        }
        writeln!(f, "total clip bytes: {}", self.total_clip_bytes)?;
        if !self.warnings.is_empty() {
            writeln!(f, "warnings:")?;
            for w in &self.warnings {
                writeln!(f, "  - {w}")?;
            }
        }
        Ok(())
    }
}

/// A titled table; columns whose cells are all numbers (or `a/b/c` counts) are right-aligned,
/// the others left-aligned. Empty tables print nothing.
fn table(f: &mut fmt::Formatter<'_>, title: &str, header: &[&str], rows: Vec<Vec<String>>) -> fmt::Result {
    if rows.is_empty() {
        return Ok(());
    }
    let numeric =
        |c: &str| c.parse::<f64>().is_ok() || (!c.is_empty() && c.chars().all(|c| c.is_ascii_digit() || c == '/'));
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    let mut right = vec![true; header.len()];
    for row in &rows {
        for ((w, r), cell) in widths.iter_mut().zip(&mut right).zip(row) {
            *w = (*w).max(cell.chars().count());
            *r &= numeric(cell);
        }
    }
    writeln!(f, "{title}:")?;
    let line = |f: &mut fmt::Formatter<'_>, cells: &mut dyn Iterator<Item = &str>| -> fmt::Result {
        let mut text = String::from(" ");
        for ((cell, &w), &r) in cells.zip(&widths).zip(&right) {
            text += &if r { format!(" {cell:>w$}") } else { format!(" {cell:<w$}") };
        }
        writeln!(f, "{}", text.trim_end())
    };
    line(f, &mut header.iter().copied())?;
    for row in &rows {
        line(f, &mut row.iter().map(String::as_str))?;
    }
    Ok(())
}
