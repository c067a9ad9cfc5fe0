//! Clip metadata: events, sync markers, root-motion requests (docs/events-and-root-motion.md) and
//! authored scalar curves (docs/morph-targets.md, "Authored curves").
//!
//! Two sources. The glTF `extras.throng` object of an animation:
//!
//! ```json
//! "extras": { "throng": {
//!   "events": [{ "name": "step", "time": 0.25, "reversible": true }],
//!   "markers": [{ "name": "left_foot_down", "time": 0.0 }],
//!   "root_motion": { "joint": "root", "policy": "planar" },
//!   "curves": [{ "name": "contact/foot_l", "keys": [[0.0, 1.0], [0.5, 0.0]],
//!                "interpolation": "linear", "composition": "max", "default": 0.0,
//!                "range": [0.0, 1.0] }] } }
//! ```
//!
//! and a sidecar TOML file beside the source, `<file stem>.throng.toml` ([`sidecar_path`]):
//! `version = 1`, then one `[clips.NAME]` table per clip with the same four keys, and an
//! optional `[lod]` table whose `pins` name joints every skeleton LOD level keeps. For each clip the
//! sidecar names, every key it gives replaces that key from the extras, and keys it omits keep the
//! extras' value; `root_motion = { policy = "none" }` removes a request. Other keys under `extras`
//! belong to other tools and are ignored; unknown keys under `throng` or in the sidecar are errors.
//!
//! Here only the syntax, the types, unknown keys, unknown clips and the sidecar version are
//! checked. Each entry keeps its [`Origin`] (file, line in the sidecar, key), so the cook's checks
//! of times, names and joints (`crate::metadata`) say where a bad value was written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gltf::Document;
use serde::Deserialize;
use throng_cpu_ref::{ClipEvent, Composition, RootMotionPolicy, SyncMarker};
use toml::Spanned;

use super::animation::animation_name;
use super::CookError;

/// The sidecar format version this build reads.
pub const SIDECAR_VERSION: i64 = 1;

/// Where a piece of clip metadata was written: the file, the line (sidecars; `None` for glTF
/// extras) and the key path.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    pub file: String,
    pub line: Option<usize>,
    pub key: String,
}

impl Origin {
    /// A [`CookError::Metadata`] at this origin.
    pub fn error(&self, reason: impl Into<String>) -> CookError {
        CookError::Metadata {
            file: self.file.clone(),
            line: self.line,
            key: self.key.clone(),
            reason: reason.into(),
        }
    }
}

/// A value and where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed<T> {
    pub value: T,
    pub origin: Origin,
}

/// A request to extract root motion from the joint of this name.
#[derive(Clone, Debug, PartialEq)]
pub struct RootMotionRequest {
    pub joint: String,
    pub policy: RootMotionPolicy,
}

/// An authored scalar curve of one clip: its channel's schema and its keys (throng-cpu-ref
/// `scalar`; docs/morph-targets.md, "Authored curves").
#[derive(Clone, Debug, PartialEq)]
pub struct AuthoredCurve {
    pub name: String,
    pub composition: Composition,
    pub default: f32,
    pub min: f32,
    pub max: f32,
    /// `false`: linear between keys; `true`: each key holds until the next.
    pub step: bool,
    /// (time in seconds, value), as written.
    pub keys: Vec<(f64, f32)>,
}

/// One clip's metadata as written, before the cook checks it against the clip.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClipMeta {
    pub events: Vec<Placed<ClipEvent>>,
    pub markers: Vec<Placed<SyncMarker>>,
    pub root_motion: Option<Placed<RootMotionRequest>>,
    pub curves: Vec<Placed<AuthoredCurve>>,
}

/// The sidecar of a source file: `Fox.glb` → `Fox.throng.toml` in the same folder.
pub fn sidecar_path(source: &Path) -> PathBuf {
    let stem = source.file_stem().unwrap_or_default().to_string_lossy();
    source.with_file_name(format!("{stem}.throng.toml"))
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    name: String,
    time: f64,
    #[serde(default)]
    reversible: bool,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMarker {
    name: String,
    time: f64,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRootMotion {
    joint: Option<String>,
    policy: RawPolicy,
}

/// An authored curve: `{ name, keys = [[t, v], ..], interpolation = "linear" | "step",
/// composition = "blend" | "override" | "additive" | "max" | "min", default = 0, range = [lo, hi] }`.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCurve {
    name: String,
    keys: Vec<[f64; 2]>,
    #[serde(default)]
    interpolation: RawCurveInterpolation,
    #[serde(default)]
    composition: RawComposition,
    #[serde(default)]
    default: f32,
    range: Option<[f32; 2]>,
}

#[derive(Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawCurveInterpolation {
    #[default]
    Linear,
    Step,
}

#[derive(Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawComposition {
    #[default]
    Blend,
    Override,
    Additive,
    Max,
    Min,
}

#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RawPolicy {
    Planar,
    Full,
    None,
}

/// `extras.throng` of an animation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Extras {
    events: Option<Vec<RawEvent>>,
    markers: Option<Vec<RawMarker>>,
    root_motion: Option<RawRootMotion>,
    curves: Option<Vec<RawCurve>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Sidecar {
    version: Spanned<i64>,
    #[serde(default)]
    clips: BTreeMap<String, Spanned<SidecarClip>>,
    lod: Option<SidecarLod>,
}

/// `[lod]`: joints every skeleton LOD level keeps (throng-cook `lod`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SidecarLod {
    pins: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SidecarClip {
    events: Option<Vec<Spanned<RawEvent>>>,
    markers: Option<Vec<Spanned<RawMarker>>>,
    root_motion: Option<Spanned<RawRootMotion>>,
    curves: Option<Vec<Spanned<RawCurve>>>,
}

/// A sidecar's path (for errors) and text.
pub(super) struct SidecarText {
    pub file: String,
    pub text: String,
}

/// The keys one source gives for one clip, each entry with its origin; `None` keys are not given.
#[derive(Clone)]
struct Given {
    events: Option<Vec<(RawEvent, Origin)>>,
    markers: Option<Vec<(RawMarker, Origin)>>,
    root_motion: Option<(RawRootMotion, Origin)>,
    curves: Option<Vec<(RawCurve, Origin)>>,
}

/// The metadata of every animation of `doc` (by animation index), from its extras, overridden
/// by `sidecar` when there is one, and the sidecar's LOD pins.
pub(super) fn read(
    doc: &Document,
    file: &str,
    sidecar: Option<&SidecarText>,
) -> Result<(Vec<ClipMeta>, Vec<Placed<String>>), CookError> {
    let mut metas = Vec::new();
    for anim in doc.animations() {
        let key = format!(
            "animations[{}] ('{}') extras.throng",
            anim.index(),
            animation_name(&anim)
        );
        let mut meta = ClipMeta::default();
        if let Some(given) = read_extras(anim.extras().as_deref(), file, &key)? {
            apply(&mut meta, given)?;
        }
        metas.push(meta);
    }
    let mut pins = Vec::new();
    if let Some(sidecar) = sidecar {
        let names: Vec<String> = doc.animations().map(|a| animation_name(&a)).collect();
        let read = read_sidecar(sidecar, &names)?;
        for (clip, given) in read.clips {
            for (meta, _) in metas.iter_mut().zip(&names).filter(|(_, n)| **n == clip) {
                apply(meta, given.clone())?;
            }
        }
        pins = read.pins;
    }
    Ok((metas, pins))
}

/// `extras.throng` of one animation; `None` when absent (or when the extras are not an object).
fn read_extras(
    raw: Option<&serde_json::value::RawValue>,
    file: &str,
    key: &str,
) -> Result<Option<Given>, CookError> {
    let origin = |sub: &str| Origin {
        file: file.to_string(),
        line: None,
        key: format!("{key}{sub}"),
    };
    let Some(raw) = raw else { return Ok(None) };
    let value: serde_json::Value =
        serde_json::from_str(raw.get()).map_err(|e| origin("").error(e.to_string()))?;
    let Some(throng) = value.get("throng") else {
        return Ok(None);
    };
    let extras = Extras::deserialize(throng).map_err(|e| origin("").error(e.to_string()))?;
    let list = |name: &str, k: usize| origin(&format!(".{name}[{k}]"));
    Ok(Some(Given {
        events: extras.events.map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(k, e)| (e, list("events", k)))
                .collect()
        }),
        markers: extras.markers.map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(k, m)| (m, list("markers", k)))
                .collect()
        }),
        root_motion: extras.root_motion.map(|r| (r, origin(".root_motion"))),
        curves: extras.curves.map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(k, c)| (c, list("curves", k)))
                .collect()
        }),
    }))
}

/// What a sidecar gives: its clip tables by clip name, and its LOD pins.
struct SidecarRead {
    clips: Vec<(String, Given)>,
    pins: Vec<Placed<String>>,
}

/// The clip tables of a sidecar (each must name an animation of `names`) and its LOD pins.
fn read_sidecar(sidecar: &SidecarText, names: &[String]) -> Result<SidecarRead, CookError> {
    let file = sidecar.file.as_str();
    let line = |span: std::ops::Range<usize>| Some(line_of(&sidecar.text, span.start));
    let origin = |line, key: String| Origin {
        file: file.to_string(),
        line,
        key,
    };
    let parsed: Sidecar = toml::from_str(&sidecar.text).map_err(|e| {
        origin(e.span().and_then(line), "sidecar".into()).error(e.message().trim_end())
    })?;
    if *parsed.version.get_ref() != SIDECAR_VERSION {
        let reason = format!(
            "{} is not supported (this build reads {SIDECAR_VERSION})",
            parsed.version.get_ref()
        );
        return Err(origin(line(parsed.version.span()), "version".into()).error(reason));
    }
    let mut out = Vec::new();
    for (clip, table) in parsed.clips {
        let key = format!("clips.{clip}");
        if !names.contains(&clip) {
            let reason = format!(
                "no animation is named '{clip}' (the file has: {})",
                names.join(", ")
            );
            return Err(origin(line(table.span()), key).error(reason));
        }
        let table = table.into_inner();
        let entry = |name: &str, k: usize, span| origin(line(span), format!("{key}.{name}[{k}]"));
        let given = Given {
            events: table.events.map(|v| {
                let placed = |(k, e): (usize, Spanned<RawEvent>)| {
                    let o = entry("events", k, e.span());
                    (e.into_inner(), o)
                };
                v.into_iter().enumerate().map(placed).collect()
            }),
            markers: table.markers.map(|v| {
                let placed = |(k, m): (usize, Spanned<RawMarker>)| {
                    let o = entry("markers", k, m.span());
                    (m.into_inner(), o)
                };
                v.into_iter().enumerate().map(placed).collect()
            }),
            root_motion: table.root_motion.map(|r| {
                let o = origin(line(r.span()), format!("{key}.root_motion"));
                (r.into_inner(), o)
            }),
            curves: table.curves.map(|v| {
                let placed = |(k, c): (usize, Spanned<RawCurve>)| {
                    let o = entry("curves", k, c.span());
                    (c.into_inner(), o)
                };
                v.into_iter().enumerate().map(placed).collect()
            }),
        };
        out.push((clip, given));
    }
    let pins = parsed.lod.map_or_else(Vec::new, |lod| {
        let pin = |(k, p): (usize, Spanned<String>)| Placed {
            origin: origin(line(p.span()), format!("lod.pins[{k}]")),
            value: p.into_inner(),
        };
        lod.pins.into_iter().enumerate().map(pin).collect()
    });
    Ok(SidecarRead { clips: out, pins })
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let before = text.as_bytes().get(..offset).unwrap_or(text.as_bytes());
    before.iter().filter(|&&b| b == b'\n').count() + 1
}

/// Replaces in `meta` each key that `given` gives.
fn apply(meta: &mut ClipMeta, given: Given) -> Result<(), CookError> {
    if let Some(events) = given.events {
        meta.events = events
            .into_iter()
            .map(|(e, origin)| Placed {
                value: ClipEvent {
                    name: e.name,
                    time: e.time,
                    reversible: e.reversible,
                },
                origin,
            })
            .collect();
    }
    if let Some(markers) = given.markers {
        meta.markers = markers
            .into_iter()
            .map(|(m, origin)| Placed {
                value: SyncMarker {
                    name: m.name,
                    time: m.time,
                },
                origin,
            })
            .collect();
    }
    if let Some(curves) = given.curves {
        meta.curves = curves
            .into_iter()
            .map(|(c, origin)| {
                let (min, max) = c
                    .range
                    .map_or((f32::NEG_INFINITY, f32::INFINITY), |[lo, hi]| (lo, hi));
                Placed {
                    value: AuthoredCurve {
                        name: c.name,
                        composition: match c.composition {
                            RawComposition::Blend => Composition::Blend,
                            RawComposition::Override => Composition::Override,
                            RawComposition::Additive => Composition::Additive,
                            RawComposition::Max => Composition::Max,
                            RawComposition::Min => Composition::Min,
                        },
                        default: c.default,
                        min,
                        max,
                        step: matches!(c.interpolation, RawCurveInterpolation::Step),
                        keys: c.keys.iter().map(|&[t, v]| (t, v as f32)).collect(),
                    },
                    origin,
                }
            })
            .collect();
    }
    if let Some((r, origin)) = given.root_motion {
        let policy = match r.policy {
            RawPolicy::Planar => RootMotionPolicy::Planar,
            RawPolicy::Full => RootMotionPolicy::Full,
            RawPolicy::None => {
                meta.root_motion = None;
                return Ok(());
            }
        };
        let joint = r
            .joint
            .ok_or_else(|| origin.error("a planar or full root motion needs a `joint`"))?;
        meta.root_motion = Some(Placed {
            value: RootMotionRequest { joint, policy },
            origin,
        });
    }
    Ok(())
}
