//! The cook report: what a cook produced and how far the cooked clips are from their source,
//! as data (`serde`, for `--json`) and as an aligned text table (`Display`).

use std::fmt;

use glam::{Affine3A, Vec3};
use serde::Serialize;
use throng_cpu_ref::error_metric::ClipError;
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::morph::MeshRef;
use throng_cpu_ref::{Clip, LoopPolicy, Package, RootMotionPolicy, Skeleton, SubTrackKind};

use crate::lod::LodReport;
use crate::package::payload_bytes;
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
    /// Mesh nodes kept (skinned or static) with their morph targets (docs/morph-targets.md).
    pub mesh_nodes: Vec<MeshNodeReport>,
    /// Morph-weight tracks per animation, stored uncompressed, with their measured error.
    pub weight_clips: Vec<WeightClipReport>,
    /// Import warnings (skipped channels and primitives, normalised weights, ignored sets).
    pub warnings: Vec<String>,
    /// Sum of the clips' `bytes`.
    pub total_clip_bytes: usize,
    /// The codec's report, when the clips were compressed ([`crate::compress`]).
    pub codec: Option<CodecReport>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SkeletonReport {
    pub joints: usize,
    /// Name of the root joint.
    pub root: String,
    /// Scene-space bounding-box diagonal of the rest-pose joint positions (scene units).
    pub extent: f32,
    /// Its cooked LOD levels ([`crate::lod`]).
    pub lods: Vec<LodReport>,
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
pub struct MeshNodeReport {
    /// glTF node index.
    pub node: u32,
    pub name: String,
    /// The skin binding, when skinned.
    pub skin: Option<u32>,
    /// Cooked triangle primitives.
    pub primitives: usize,
    /// Morph targets (the node's weight count).
    pub targets: usize,
    /// Vertices moved by some target, over the node's primitives.
    pub morphed_vertices: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct WeightClipReport {
    pub name: String,
    pub duration_s: f64,
    pub sample_rate: f32,
    pub samples: u32,
    /// Mesh nodes with a weight track.
    pub tracks: usize,
    /// Weights per sample over the tracks.
    pub weights: usize,
    /// f32 samples stored.
    pub bytes: usize,
    /// Largest |cooked − exact| of any weight, at evenly spaced times inside every sample
    /// interval (the cooked track lerps between samples).
    pub max_error: f32,
    pub worst_time_s: f32,
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
    /// Stored size in the clip's encoding: f32 values and the sub-track table (reference), or the
    /// compressed payload (docs/codec.md); plus the trajectory.
    pub bytes: usize,
    /// Events and sync markers stored.
    pub events: usize,
    pub markers: usize,
    /// The extracted trajectory, when the clip has root motion.
    pub root_motion: Option<RootMotionReport>,
    /// Cooked-vs-source error at virtual vertices 3 cm from each joint, in cm, of the reference
    /// encoding (the codec's own error against it is in [`CodecReport`]). For a clip with
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
            joint: skeleton
                .names
                .get(motion.joint as usize)
                .cloned()
                .unwrap_or_default(),
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
            bytes: clip_bytes(clip),
            events: clip.events.len(),
            markers: clip.markers.len(),
            root_motion: RootMotionReport::new(clip, skeleton),
            max_error_cm: error.max_cm,
            p99_error_cm: error.p99_cm,
            max_error_of_extent: (extent > 0.0).then(|| error.max_cm / 100.0 / extent),
            worst_joint: skeleton
                .names
                .get(error.worst_joint as usize)
                .cloned()
                .unwrap_or_default(),
            worst_time_s: error.worst_time,
        }
    }
}

/// [`ClipReport::bytes`] of `clip`.
pub fn clip_bytes(clip: &Clip) -> usize {
    let samples = match clip.compressed {
        None => 4 * clip.values.len() + SUB_TRACK_BYTES * clip.sub_tracks.len(),
        Some(_) => payload_bytes(clip),
    };
    samples
        + TRAJECTORY_SAMPLE_BYTES
            * clip
                .root_motion
                .as_ref()
                .map_or(0, |m| m.translations.len())
}

impl CookReport {
    pub fn new(
        imported: &Imported,
        profile: &Profile,
        package: &Package,
        clips: Vec<ClipReport>,
    ) -> Self {
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
                    lods: Vec::new(),
                })
                .collect(),
            skins: package
                .skins
                .iter()
                .map(|s| SkinReport {
                    name: s.name.clone(),
                    skeleton: s.skeleton,
                    joints: s.joints.len(),
                })
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
            mesh_nodes: package
                .scene
                .nodes
                .iter()
                .map(|n| MeshNodeReport {
                    node: n.node,
                    name: n.name.clone(),
                    skin: n.skin,
                    primitives: n.primitives.len(),
                    targets: n.weights.len(),
                    morphed_vertices: n
                        .primitives
                        .iter()
                        .map(|p| {
                            let targets = match p.mesh {
                                MeshRef::Skinned(m) => {
                                    package.meshes.get(m as usize).map(|m| &m.targets)
                                }
                                MeshRef::Static(m) => {
                                    package.scene.meshes.get(m as usize).map(|m| &m.targets)
                                }
                            };
                            let mut moved: Vec<u32> = targets
                                .into_iter()
                                .flatten()
                                .flat_map(|t| t.vertices.iter().copied())
                                .collect();
                            moved.sort_unstable();
                            moved.dedup();
                            moved.len()
                        })
                        .sum(),
                })
                .collect(),
            weight_clips: Vec::new(),
            warnings: imported.warnings.clone(),
            codec: None,
        }
    }
}

/// Bounding-box diagonal of a skeleton's rest-pose joint positions in scene space.
pub fn rest_extent(skeleton: &Skeleton) -> f32 {
    let mut component = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    local_to_component(skeleton, &skeleton.rest, &mut component);
    let (lo, hi) = component
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), c| {
            let p = skeleton
                .root_transform
                .transform_point3(c.translation.into());
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
        writeln!(
            f,
            "{}: profile {} ({} Hz unless key-aligned)",
            self.source, self.profile, self.sample_rate
        )?;
        let rows = self.skeletons.iter().enumerate().map(|(i, s)| {
            vec![
                i.to_string(),
                s.joints.to_string(),
                format!("{:.3}", s.extent),
                s.root.clone(),
                (s.lods.iter())
                    .map(|l| {
                        let share = 100.0 * l.max_error / s.extent.max(f32::MIN_POSITIVE);
                        format!(
                            "{} joints, {} triangles, {:.3} ({share:.1}%)",
                            l.joints, l.triangles, l.max_error
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            ]
        });
        table(
            f,
            "skeletons",
            &[
                "#",
                "joints",
                "extent",
                "root",
                "LOD levels (max error: pose + mesh, % of extent)",
            ],
            rows.collect(),
        )?;
        let rows = self
            .skins
            .iter()
            .map(|s| vec![s.name.clone(), s.skeleton.to_string(), s.joints.to_string()]);
        table(f, "skins", &["name", "skeleton", "joints"], rows.collect())?;
        let rows = self.meshes.iter().map(|m| {
            vec![
                m.name.clone(),
                m.skin.to_string(),
                m.vertices.to_string(),
                m.triangles.to_string(),
            ]
        });
        table(
            f,
            "meshes",
            &["name", "skin", "vertices", "triangles"],
            rows.collect(),
        )?;
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
                    format!(
                        "{} {} ({x:.3}, {y:.3}, {z:.3}) m {:.1}°",
                        r.policy, r.joint, r.turn_deg
                    )
                }),
                format!("{:.4}", c.max_error_cm),
                format!("{:.4}", c.p99_error_cm),
                c.max_error_of_extent
                    .map_or("-".into(), |r| format!("{:.4}", 100.0 * r)),
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
            writeln!(
                f,
                "error of root-motion clips: trajectory · residual pose against the source"
            )?;
        }
        writeln!(f, "total clip bytes: {}", self.total_clip_bytes)?;
        let rows = self.mesh_nodes.iter().map(|n| {
            vec![
                n.node.to_string(),
                n.name.clone(),
                n.skin.map_or("-".into(), |s| s.to_string()),
                n.primitives.to_string(),
                n.targets.to_string(),
                n.morphed_vertices.to_string(),
            ]
        });
        table(
            f,
            "mesh nodes",
            &[
                "node",
                "name",
                "skin",
                "primitives",
                "targets",
                "morphed vertices",
            ],
            rows.collect(),
        )?;
        let rows = self.weight_clips.iter().map(|c| {
            vec![
                c.name.clone(),
                format!("{:.3}", c.duration_s),
                format!("{}", c.sample_rate),
                c.samples.to_string(),
                c.tracks.to_string(),
                c.weights.to_string(),
                c.bytes.to_string(),
                format!("{:.2e}", c.max_error),
                format!("{:.3} s", c.worst_time_s),
            ]
        });
        table(
            f,
            "morph weight clips (uncompressed)",
            &[
                "clip",
                "dur (s)",
                "Hz",
                "samples",
                "tracks",
                "weights",
                "bytes",
                "max error",
                "worst",
            ],
            rows.collect(),
        )?;
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
fn table(
    f: &mut fmt::Formatter<'_>,
    title: &str,
    header: &[&str],
    rows: Vec<Vec<String>>,
) -> fmt::Result {
    if rows.is_empty() {
        return Ok(());
    }
    let numeric = |c: &str| {
        c.parse::<f64>().is_ok()
            || (!c.is_empty() && c.chars().all(|c| c.is_ascii_digit() || c == '/'))
    };
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
            text += &if r {
                format!(" {cell:>w$}")
            } else {
                format!(" {cell:<w$}")
            };
        }
        writeln!(f, "{}", text.trim_end())
    };
    line(f, &mut header.iter().copied())?;
    for row in &rows {
        line(f, &mut row.iter().map(String::as_str))?;
    }
    Ok(())
}

/// Bytes per joint-sample of the raw baseline: t (12), q (16) and s (12) as f32, ACL's measure.
pub const RAW_JOINT_SAMPLE_BYTES: u64 = 40;

/// The codec's report (`throng cook --report`): per clip and in total, the size against the raw
/// baseline of [`RAW_JOINT_SAMPLE_BYTES`] per joint-sample and the error against the reference
/// (uncompressed) cooked clip at virtual vertices 3 cm from each joint, in cm.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CodecReport {
    pub profile: String,
    /// The profile's thresholds, in cm (docs/codec.md).
    pub threshold_cm: f32,
    pub important_threshold_cm: f32,
    pub clips: Vec<CodecClipReport>,
    pub total: CodecTotal,
    /// `width_histogram[w]`: (segment, animated sub-track, component) triples stored in w bits.
    pub width_histogram: Vec<u64>,
    /// The clips' scalar curve tracks ([`crate::codec::compress_curves`]).
    pub curves: crate::codec::CurveCodecReport,
}

/// Where a compressed payload's bytes go (`throng cook --report`): the parts add up to its
/// `compressed_bytes`. Sample bits are counted per sub-track kind, in bytes (bits / 8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CodecBytes {
    /// The payload's counts and its 2-bit sub-track kinds.
    pub table: f64,
    /// Per animated sub-track, its clip range (base and step per component) and rebuilt
    /// component: 28 bytes.
    pub ranges: f64,
    /// One word per segment.
    pub segment_table: f64,
    /// Constant sub-tracks' raw values.
    pub constants: f64,
    /// Per segment and animated sub-track, its 64-bit header (offset, shift, widths, bases).
    pub headers: f64,
    pub rotation_samples: f64,
    pub translation_samples: f64,
    pub scale_samples: f64,
    /// The unused bits that end each segment's last word.
    pub padding: f64,
}

impl CodecBytes {
    /// The parts with their names, in the report's order.
    pub fn parts(&self) -> [(&'static str, f64); 9] {
        [
            ("rotation samples", self.rotation_samples),
            ("translation samples", self.translation_samples),
            ("scale samples", self.scale_samples),
            ("segment headers", self.headers),
            ("clip ranges", self.ranges),
            ("segment table", self.segment_table),
            ("constants", self.constants),
            ("counts and kinds", self.table),
            ("padding", self.padding),
        ]
    }

    pub fn total(&self) -> f64 {
        self.parts().iter().map(|(_, b)| b).sum()
    }

    fn add(self, o: CodecBytes) -> CodecBytes {
        CodecBytes {
            table: self.table + o.table,
            ranges: self.ranges + o.ranges,
            segment_table: self.segment_table + o.segment_table,
            constants: self.constants + o.constants,
            headers: self.headers + o.headers,
            rotation_samples: self.rotation_samples + o.rotation_samples,
            translation_samples: self.translation_samples + o.translation_samples,
            scale_samples: self.scale_samples + o.scale_samples,
            padding: self.padding + o.padding,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct CodecClipReport {
    pub name: String,
    pub joints: usize,
    pub samples: u32,
    /// `RAW_JOINT_SAMPLE_BYTES · joints · samples`.
    pub raw_bytes: u64,
    /// The compressed payload as stored in the package (kinds, ranges, constants, segments).
    pub compressed_bytes: u64,
    /// `raw_bytes / compressed_bytes`.
    pub ratio: f64,
    pub bytes_per_joint_sample: f64,
    pub max_error_cm: f32,
    pub p99_error_cm: f32,
    pub mean_error_cm: f32,
    /// Joint and time of the largest error.
    pub worst_joint: String,
    pub worst_time_s: f32,
    /// Factor applied to the profile's thresholds for this rig's units (1 for a rig in metres;
    /// see `profile::CodecSettings::for_extent`); errors are in scene units × 100.
    pub threshold_scale: f32,
    /// Joint-segments that kept the finest precision (shift 0) without passing the encoder's
    /// search; `unmet_by_check` says which check each failed. Only `own` means a joint beyond its
    /// threshold: a descendant's share or a hemisphere check can fail while every vertex is
    /// within its threshold.
    pub unmet: usize,
    pub unmet_by_check: crate::codec::Unmet,
    pub encode_ms: f64,
    pub width_histogram: Vec<u64>,
    /// Where `compressed_bytes` go.
    pub bytes: CodecBytes,
}

/// Totals over every clip of the report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CodecTotal {
    /// `total`, so that the total row has the keys of a clip row.
    pub name: String,
    pub raw_bytes: u64,
    pub compressed_bytes: u64,
    pub ratio: f64,
    pub bytes_per_joint_sample: f64,
    pub max_error_cm: f32,
    /// Over the errors of every clip together.
    pub p99_error_cm: f32,
    pub mean_error_cm: f32,
    /// Clip, joint and time of the largest error.
    pub worst: String,
    pub encode_ms: f64,
    /// Where `compressed_bytes` go, over every clip.
    pub bytes: CodecBytes,
}

impl CodecTotal {
    /// Totals of `clips`; `p99_error_cm` and `mean_error_cm` come from every error together.
    pub fn new(clips: &[CodecClipReport], p99_error_cm: f32, mean_error_cm: f32) -> CodecTotal {
        let raw_bytes = clips.iter().map(|c| c.raw_bytes).sum();
        let compressed_bytes: u64 = clips.iter().map(|c| c.compressed_bytes).sum();
        let joint_samples: u64 = clips
            .iter()
            .map(|c| c.joints as u64 * u64::from(c.samples))
            .sum();
        let worst = clips
            .iter()
            .max_by(|a, b| a.max_error_cm.total_cmp(&b.max_error_cm));
        CodecTotal {
            name: "total".into(),
            raw_bytes,
            compressed_bytes,
            ratio: ratio(raw_bytes, compressed_bytes),
            bytes_per_joint_sample: compressed_bytes as f64 / joint_samples.max(1) as f64,
            max_error_cm: worst.map_or(0.0, |c| c.max_error_cm),
            p99_error_cm,
            mean_error_cm,
            worst: worst.map_or(String::new(), |c| {
                format!("{}: {} @ {:.3} s", c.name, c.worst_joint, c.worst_time_s)
            }),
            encode_ms: clips.iter().map(|c| c.encode_ms).sum(),
            bytes: (clips.iter()).fold(CodecBytes::default(), |sum, c| sum.add(c.bytes)),
        }
    }
}

/// `raw / compressed`, 0 for nothing compressed.
pub fn ratio(raw: u64, compressed: u64) -> f64 {
    if compressed == 0 {
        0.0
    } else {
        raw as f64 / compressed as f64
    }
}

impl fmt::Display for CodecReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "codec: profile {} (threshold {} cm, important joints {} cm, at virtual vertices 3 cm out; error vs the uncompressed cooked clip)",
            self.profile, self.threshold_cm, self.important_threshold_cm
        )?;
        let row = |name: &str,
                   raw: u64,
                   bytes: u64,
                   r: f64,
                   bpjs: f64,
                   max: f32,
                   p99: f32,
                   mean: f32,
                   worst: String,
                   ms: f64| {
            vec![
                name.to_string(),
                raw.to_string(),
                bytes.to_string(),
                format!("{r:.2}"),
                format!("{bpjs:.3}"),
                format!("{max:.5}"),
                format!("{p99:.5}"),
                format!("{mean:.5}"),
                worst,
                format!("{ms:.1}"),
            ]
        };
        let mut rows: Vec<Vec<String>> = self
            .clips
            .iter()
            .map(|c| {
                let worst = format!("{} @ {:.3} s", c.worst_joint, c.worst_time_s);
                let (r, b) = (c.ratio, c.bytes_per_joint_sample);
                row(
                    &c.name,
                    c.raw_bytes,
                    c.compressed_bytes,
                    r,
                    b,
                    c.max_error_cm,
                    c.p99_error_cm,
                    c.mean_error_cm,
                    worst,
                    c.encode_ms,
                )
            })
            .collect();
        let t = &self.total;
        let (r, b) = (t.ratio, t.bytes_per_joint_sample);
        rows.push(row(
            "total",
            t.raw_bytes,
            t.compressed_bytes,
            r,
            b,
            t.max_error_cm,
            t.p99_error_cm,
            t.mean_error_cm,
            t.worst.clone(),
            t.encode_ms,
        ));
        let header = [
            "clip",
            "raw B",
            "compressed B",
            "ratio",
            "B/joint-sample",
            "max (cm)",
            "p99 (cm)",
            "mean (cm)",
            "worst",
            "encode (ms)",
        ];
        table(f, "compression", &header, rows)?;
        let mut header = vec!["clip"];
        header.extend(self.total.bytes.parts().map(|(name, _)| name));
        let share = |name: &str, b: &CodecBytes| {
            let mut row = vec![name.to_string()];
            let total = b.total().max(1.0);
            row.extend((b.parts()).map(|(_, part)| format!("{:.1}", 100.0 * part / total)));
            row
        };
        let mut rows: Vec<Vec<String>> = (self.clips.iter())
            .map(|c| share(&c.name, &c.bytes))
            .collect();
        rows.push(share("total", &self.total.bytes));
        table(
            f,
            "where the compressed bytes go (% of each clip's)",
            &header,
            rows,
        )?;
        let used: Vec<String> = self
            .width_histogram
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(w, n)| format!("{w}:{n}"))
            .collect();
        writeln!(
            f,
            "bit widths (width:count per segment, sub-track and component): {}",
            used.join(" ")
        )?;
        let c = &self.curves;
        if c.tracks > 0 {
            writeln!(
                f,
                "curve tracks: {} ({} constant, {} raw), {} B as f32, {} B compressed ({:.2}×), \
                 max error {:.2e} (precision {:.0e})",
                c.tracks,
                c.constant,
                c.raw,
                c.raw_bytes,
                c.bytes,
                ratio(c.raw_bytes, c.bytes),
                c.max_error,
                c.precision
            )?;
        }
        for c in self.clips.iter().filter(|c| c.threshold_scale != 1.0) {
            writeln!(
                f,
                "{}: thresholds × {} (a rig not in metres: held relative to its extent)",
                c.name, c.threshold_scale
            )?;
        }
        let mut unmet = crate::codec::Unmet::default();
        for c in &self.clips {
            unmet.add(c.unmet_by_check);
        }
        if unmet.total() > 0 {
            writeln!(
                f,
                "{} joint-segments kept the finest precision without passing the encoder's \
                 search ({} over the joint's own threshold, {} a descendant over {} of its \
                 threshold, {} a rotation across a flip in the source)",
                unmet.total(),
                unmet.own,
                unmet.descendant,
                crate::codec::DESCENDANT_SHARE,
                unmet.hemisphere
            )?;
        }
        Ok(())
    }
}
