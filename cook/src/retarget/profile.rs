//! Retarget profiles (TOML, docs/retargeting.md): which source joint drives which target joint,
//! the reference pose and facing of each side, how translation carries over and at what scale.
//! Parsing checks the shape of the file; [`super::Binding::new`] checks it against the rigs.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::RetargetError;

/// The version of the profile format this build reads.
pub const PROFILE_VERSION: i64 = 1;

/// A parsed retarget profile. Joint names on the source side may list alternatives separated by
/// `|` (`"LeftUpLeg|LeftHip"`): the first one the source skeleton has is used, so one profile
/// serves exports of one rig that name its joints differently.
#[derive(Clone, Debug, PartialEq)]
pub struct RetargetProfile {
    /// File the profile came from (for errors).
    pub file: String,
    pub source: Side,
    pub target: Side,
    pub translation: Translation,
    pub chains: Vec<Chain>,
    /// Target joint → target joint whose reference offset it keeps (IK controls parented to the
    /// root, such as a foot bone that is not the shin's child).
    pub follow: Vec<(Placed<String>, String)>,
    /// Target joint → local rotation (x, y, z, w) for an unmapped joint that should not keep rest.
    pub defaults: Vec<(Placed<String>, [f64; 4])>,
    /// Source feet, for contact detection in the report.
    pub feet: Vec<Foot>,
    /// Root motion to extract from the retargeted clips on the target, as the cook does.
    pub root_motion: Option<(Placed<String>, throng_cpu_ref::RootMotionPolicy)>,
}

/// A value and the line of the profile it was written on.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed<T> {
    pub value: T,
    pub line: usize,
}

/// One side of the retarget.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    pub reference: Reference,
    /// Scene-space facing direction of the reference pose; only its horizontal part counts.
    pub forward: [f64; 3],
    /// Height of the ground in scene space (glTF is +Y up; y = 0 by default).
    pub floor: f64,
}

/// The pose both sides are compared in.
#[derive(Clone, Debug, PartialEq)]
pub enum Reference {
    /// The skeleton's rest locals.
    Rest,
    /// The skin's bind pose (inverse bind matrices); joints outside the skin compose their rest.
    Bind,
    /// A frame of one of the side's clips.
    Clip { name: String, time: f64 },
}

/// How the translation joint (the hips) moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TranslationPolicy {
    /// Every target joint keeps its rest translation: the motion stays in place.
    None,
    /// The translation joint travels horizontally with the source, scaled; its height stays.
    Root,
    /// As `Root`, and its height follows the source's: with `legs`, so that the legs' first
    /// joints sit at the source's leg-root height above its floor, scaled; without, its own.
    RootPelvisHeight,
    /// As `RootPelvisHeight` for the translation joint; every other mapped joint copies its
    /// source's local translation, scaled (for rigs that share joint frames, such as a rig and
    /// itself).
    All,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Translation {
    pub policy: TranslationPolicy,
    /// Target joint that carries the translation (mapped in a chain).
    pub joint: Placed<String>,
    pub scale: Scale,
    /// Leg chains (hip to ankle): their length gives the scale, their first joints the height.
    pub legs: Vec<Placed<String>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Scale {
    /// Target over source straight-legged standing height of the `legs` chains' first joints
    /// (the hips): on each side the leg length (reference path from the chain's first to last
    /// joint) plus the ankle clearance (the target's: its ankles' reference height above its
    /// floor; the source's: the lowest its ankles come to its floor over its clips). Summed
    /// over the chains.
    Legs,
    /// A fixed factor; a non-finite or non-positive one falls back to 1 with a warning.
    Fixed(f64),
}

/// Source joints mapped one to one onto target joints, root end first.
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    pub name: String,
    pub line: usize,
    pub source: Vec<String>,
    pub target: Vec<String>,
    /// Fraction of the last joint's twist (about its own bone, relative to the reference) moved
    /// onto the joint before it, in [0, 1] (a forearm taking part of the wrist's roll).
    pub twist: f64,
}

/// A source foot joint watched for contacts, and the target joint that carries the same foot.
#[derive(Clone, Debug, PartialEq)]
pub struct Foot {
    pub source: String,
    pub target: String,
    /// Reach the source's foot position (relative to the hips, turned and scaled) on every
    /// sample with two-bone IK on the last three joints of the chain that ends at `target`.
    pub ik: bool,
    /// With `ik`: IK also reaches the floor height (what the hips' lift leaves of it); without,
    /// it reaches the planted position on the ground plane only and the foot's height is where
    /// the leg's bones put it.
    pub height: bool,
    pub line: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    version: Spanned<i64>,
    source: RawSide,
    target: RawSide,
    translation: RawTranslation,
    #[serde(default)]
    chains: Vec<Spanned<RawChain>>,
    #[serde(default)]
    follow: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    defaults: BTreeMap<String, Spanned<[f64; 4]>>,
    #[serde(default)]
    feet: Vec<Spanned<RawFoot>>,
    root_motion: Option<Spanned<RawRootMotion>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSide {
    #[serde(default)]
    reference: Option<Spanned<RawReference>>,
    #[serde(default = "forward_z")]
    forward: [f64; 3],
    #[serde(default)]
    floor: f64,
}

fn forward_z() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawReference {
    Named(String),
    Clip { clip: String, time: f64 },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTranslation {
    policy: Spanned<String>,
    joint: Spanned<String>,
    #[serde(default)]
    scale: Option<Spanned<RawScale>>,
    #[serde(default)]
    legs: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawScale {
    Named(String),
    Number(f64),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChain {
    name: String,
    source: Vec<String>,
    target: Vec<String>,
    #[serde(default)]
    twist: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFoot {
    source: String,
    target: String,
    #[serde(default)]
    ik: bool,
    #[serde(default = "yes")]
    height: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRootMotion {
    joint: Spanned<String>,
    policy: String,
}

impl RetargetProfile {
    /// Reads and parses a profile file.
    pub fn load(path: &Path) -> Result<Self, RetargetError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| RetargetError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
        Self::parse(&text, &file)
    }

    /// Parses profile text; `file` names it in errors, which carry the line and key.
    pub fn parse(text: &str, file: &str) -> Result<Self, RetargetError> {
        let line = |span: std::ops::Range<usize>| line_of(text, span.start);
        let err = |line: usize, key: &str, reason: String| RetargetError::Profile {
            file: file.to_string(),
            line,
            key: key.to_string(),
            reason,
        };
        let raw: Raw = toml::from_str(text).map_err(|e| {
            err(
                e.span().map_or(0, line),
                "profile",
                e.message().trim_end().to_string(),
            )
        })?;
        if *raw.version.get_ref() != PROFILE_VERSION {
            let reason = format!(
                "{} is not supported (this build reads {PROFILE_VERSION})",
                raw.version.get_ref()
            );
            return Err(err(line(raw.version.span()), "version", reason));
        }
        let side = |raw: RawSide, key: &str| -> Result<Side, RetargetError> {
            let reference = match raw.reference {
                None => Reference::Rest,
                Some(r) => {
                    let at = line(r.span());
                    match r.into_inner() {
                        RawReference::Named(n) if n == "rest" => Reference::Rest,
                        RawReference::Named(n) if n == "bind" => Reference::Bind,
                        RawReference::Named(n) => {
                            let reason = format!(
                                "'{n}' is not a reference pose: use \"rest\", \"bind\" or \
                                 {{ clip = \"NAME\", time = SECONDS }}"
                            );
                            return Err(err(at, &format!("{key}.reference"), reason));
                        }
                        RawReference::Clip { clip, time } if time.is_finite() && time >= 0.0 => {
                            Reference::Clip { name: clip, time }
                        }
                        RawReference::Clip { time, .. } => {
                            let reason =
                                format!("time {time} must be a finite, non-negative second");
                            return Err(err(at, &format!("{key}.reference"), reason));
                        }
                    }
                }
            };
            let horizontal = (raw.forward[0].powi(2) + raw.forward[2].powi(2)).sqrt();
            if !(horizontal.is_finite() && horizontal > 1e-6 && raw.floor.is_finite()) {
                let reason = "forward needs a finite, non-zero horizontal (x, z) part and floor \
                              a finite height"
                    .to_string();
                return Err(err(0, key, reason));
            }
            Ok(Side {
                reference,
                forward: raw.forward,
                floor: raw.floor,
            })
        };
        let source = side(raw.source, "source")?;
        let target = side(raw.target, "target")?;

        let t = raw.translation;
        let policy = match t.policy.get_ref().as_str() {
            "none" => TranslationPolicy::None,
            "root" => TranslationPolicy::Root,
            "root_pelvis_height" => TranslationPolicy::RootPelvisHeight,
            "all" => TranslationPolicy::All,
            other => {
                let reason = format!(
                    "'{other}' is not a translation policy: use none, root, root_pelvis_height \
                     or all"
                );
                return Err(err(line(t.policy.span()), "translation.policy", reason));
            }
        };
        let placed = |s: Spanned<String>| Placed {
            line: line(s.span()),
            value: s.into_inner(),
        };
        let legs: Vec<Placed<String>> = t.legs.into_iter().map(placed).collect();
        let scale = match t.scale {
            None => Scale::Legs,
            Some(s) => {
                let at = line(s.span());
                match s.into_inner() {
                    RawScale::Named(n) if n == "legs" => Scale::Legs,
                    RawScale::Number(x) => Scale::Fixed(x),
                    RawScale::Named(n) => {
                        let reason = format!("'{n}' is not a scale: use \"legs\" or a number");
                        return Err(err(at, "translation.scale", reason));
                    }
                }
            }
        };
        if scale == Scale::Legs && legs.is_empty() {
            let reason = "scale from leg length needs `legs = [CHAIN, ...]` (or give `scale = \
                          NUMBER`)"
                .to_string();
            return Err(err(0, "translation.legs", reason));
        }
        let translation = Translation {
            policy,
            joint: placed(t.joint),
            scale,
            legs,
        };

        let mut chains = Vec::with_capacity(raw.chains.len());
        for (k, c) in raw.chains.into_iter().enumerate() {
            let at = line(c.span());
            let c = c.into_inner();
            let key = format!("chains[{k}] ({})", c.name);
            if c.source.is_empty() || c.source.len() != c.target.len() {
                let reason = format!(
                    "source lists {} joints and target {}: a chain maps joints one to one (list \
                     only the joints you map)",
                    c.source.len(),
                    c.target.len()
                );
                return Err(err(at, &key, reason));
            }
            if !(0.0..=1.0).contains(&c.twist) {
                let reason = format!("twist {} must lie in [0, 1]", c.twist);
                return Err(err(at, &key, reason));
            }
            if chains.iter().any(|o: &Chain| o.name == c.name) {
                return Err(err(at, &key, "a chain of this name comes earlier".into()));
            }
            chains.push(Chain {
                name: c.name,
                line: at,
                source: c.source,
                target: c.target,
                twist: c.twist,
            });
        }
        let follow = raw
            .follow
            .into_iter()
            .map(|(joint, of)| {
                let at = line(of.span());
                (
                    Placed {
                        value: joint,
                        line: at,
                    },
                    of.into_inner(),
                )
            })
            .collect();
        let mut defaults = Vec::new();
        for (joint, q) in raw.defaults {
            let at = line(q.span());
            let q = q.into_inner();
            let norm = q.iter().map(|x| x * x).sum::<f64>().sqrt();
            if !(norm.is_finite() && (norm - 1.0).abs() < 1e-3) {
                let reason = format!("{q:?} is not a unit quaternion (x, y, z, w)");
                return Err(err(at, &format!("defaults.{joint}"), reason));
            }
            defaults.push((
                Placed {
                    value: joint,
                    line: at,
                },
                q.map(|x| x / norm),
            ));
        }
        let feet = raw
            .feet
            .into_iter()
            .map(|f| {
                let at = line(f.span());
                let f = f.into_inner();
                Foot {
                    source: f.source,
                    target: f.target,
                    ik: f.ik,
                    height: f.height,
                    line: at,
                }
            })
            .collect();
        let root_motion = match raw.root_motion {
            None => None,
            Some(r) => {
                let at = line(r.span());
                let r = r.into_inner();
                let policy = match r.policy.as_str() {
                    "planar" => throng_cpu_ref::RootMotionPolicy::Planar,
                    "full" => throng_cpu_ref::RootMotionPolicy::Full,
                    other => {
                        let reason = format!("'{other}' is not a policy: use planar or full");
                        return Err(err(at, "root_motion.policy", reason));
                    }
                };
                Some((placed(r.joint), policy))
            }
        };
        Ok(RetargetProfile {
            file: file.to_string(),
            source,
            target,
            translation,
            chains,
            follow,
            defaults,
            feet,
            root_motion,
        })
    }
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let before = text.as_bytes().get(..offset).unwrap_or(text.as_bytes());
    before.iter().filter(|&&b| b == b'\n').count() + 1
}
