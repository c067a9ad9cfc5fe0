//! The state tree's TOML document as written (docs/state-tree.md), with source spans so that
//! load errors can name the line. [`super::load`] turns it into a checked [`super::Tree`].

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::player::PlayMode;

pub type S<T> = Spanned<T>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Doc {
    pub version: S<i64>,
    pub name: Option<String>,
    #[serde(default)]
    pub inputs: BTreeMap<String, S<InputDoc>>,
    #[serde(default)]
    pub masks: BTreeMap<String, S<MaskDoc>>,
    #[serde(default)]
    pub sockets: BTreeMap<String, S<SocketDoc>>,
    #[serde(default)]
    pub curve_events: BTreeMap<String, S<CurveEventDoc>>,
    #[serde(default)]
    pub curve_selections: BTreeMap<String, S<CurveSelectionDoc>>,
    pub regions: S<Vec<S<RegionDoc>>>,
}

/// `[curve_selections.NAME]`: `curves = { "NAME" = weight, .. }`; curves left out weigh 0.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveSelectionDoc {
    pub curves: BTreeMap<String, S<f64>>,
}

/// `[curve_events.NAME]`: `curve` and one of `above` or `below`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveEventDoc {
    pub curve: S<String>,
    pub above: Option<S<f64>>,
    pub below: Option<S<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketDoc {
    pub joint: S<String>,
    pub offset: Option<S<[f64; 3]>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputDoc {
    #[serde(rename = "type")]
    pub ty: S<String>,
    pub default: Option<S<toml::Value>>,
    pub min: Option<S<f64>>,
    pub max: Option<S<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaskDoc {
    pub joints: Vec<S<String>>,
    #[serde(default)]
    pub exclude: Vec<S<String>>,
    pub weight: Option<S<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionDoc {
    pub name: S<String>,
    pub blend: Option<S<String>>,
    pub mask: Option<S<String>>,
    pub curves: Option<S<String>>,
    pub weight: Option<S<f64>>,
    pub initial: S<String>,
    pub states: S<Vec<S<StateDoc>>>,
    #[serde(default)]
    pub transitions: Vec<S<TransitionDoc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateDoc {
    pub name: S<String>,
    pub parent: Option<S<String>>,
    pub initial: Option<S<String>>,
    pub clip: Option<S<String>>,
    pub blend1d: Option<S<Blend1dDoc>>,
    pub blend2d: Option<S<Blend2dDoc>>,
    pub motion_matching: Option<S<MatchingDoc>>,
    pub mode: Option<S<PlayMode>>,
    pub rate: Option<S<f64>>,
    pub sync: Option<S<String>>,
    pub root_motion: Option<S<String>>,
}

/// A `motion_matching` producer (docs/motion-matching.md, "On the tick").
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchingDoc {
    /// Index of the package's motion database.
    pub database: S<i64>,
    pub velocity_x: S<String>,
    pub velocity_z: S<String>,
    pub turn: S<String>,
    pub stop_distance: Option<S<String>>,
    pub every: Option<S<i64>>,
    pub blend: Option<S<f64>>,
    pub halflife: Option<S<f64>>,
    pub departure: Option<S<f64>>,
    pub tags: Option<Vec<S<String>>>,
    pub warp_speed: Option<S<f64>>,
    pub warp_turn: Option<S<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Blend1dDoc {
    pub input: S<String>,
    pub points: Vec<S<Point1Doc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point1Doc {
    pub clip: S<String>,
    pub at: S<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Blend2dDoc {
    pub x: S<String>,
    pub y: S<String>,
    pub points: Vec<S<Point2Doc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point2Doc {
    pub clip: S<String>,
    pub at: S<[f64; 2]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransitionDoc {
    pub id: S<String>,
    pub from: S<String>,
    pub to: S<String>,
    pub priority: Option<S<i32>>,
    pub duration: Option<S<f64>>,
    /// `"crossfade"` (the default) or `"inertialize"`.
    pub blend: Option<S<String>>,
    #[serde(default)]
    pub when: Vec<S<ClauseDoc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClauseDoc {
    pub input: Option<S<String>>,
    pub elapsed: Option<S<String>>,
    pub completed: Option<S<bool>>,
    pub op: Option<S<String>>,
    pub value: Option<S<toml::Value>>,
}
