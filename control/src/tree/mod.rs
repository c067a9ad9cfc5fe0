//! State trees: the versioned TOML asset (docs/state-tree.md) checked and bound to a package.
//!
//! A tree has typed inputs, joint masks and ordered regions. Each region is a layer (the first
//! is the base pose; later ones override or add under a mask) holding hierarchical states, of
//! which exactly one root-to-leaf path is active. Leaf states produce a pose (a clip, a 1-D
//! blend space over a float input or a 2-D blend space over two); transitions carry a stable id,
//! a priority, a crossfade duration and a conjunction of typed predicates.

mod check;
mod doc;
mod load;

use glam::DVec2;
use throng_cpu_ref::Mask;

pub use load::{load, mode_for};

use crate::blend::Triangle;
use crate::player::PlayMode;

/// Deepest state path a region may have.
pub const MAX_DEPTH: usize = 8;
/// Most clips one pose producer (blend space) may name.
pub const MAX_POINTS: usize = 16;
/// Most regions (layers) a tree may have.
pub const MAX_REGIONS: usize = 8;
/// Most states a region may have (state indices are u16; a region's transitions search visits
/// its states, so the bound keeps load time small).
pub const MAX_STATES: usize = 1024;
/// Most transitions a region may have (transition indices are u16).
pub const MAX_TRANSITIONS: usize = 4096;
/// Most inputs a tree may declare (input indices are u16).
pub const MAX_INPUTS: usize = 256;
/// Most sync groups a tree may name.
pub const MAX_SYNC_GROUPS: usize = 8;
/// Most samples an interrupted crossfade's captured pose keeps (see `instance`).
pub const FROZEN_SAMPLES: usize = 4;
/// The format version this build reads.
pub const FORMAT_VERSION: i64 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputType {
    Bool,
    Int,
    Float,
}

/// A typed input value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl Value {
    pub fn ty(self) -> InputType {
        match self {
            Value::Bool(_) => InputType::Bool,
            Value::Int(_) => InputType::Int,
            Value::Float(_) => InputType::Float,
        }
    }
    /// The value as a float (blend-space coordinates); bools read 0 or 1.
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Bool(b) => b as u8 as f64,
            Value::Int(i) => i as f64,
            Value::Float(f) => f,
        }
    }
}

/// A declared input: numeric inputs are clamped to `[min, max]` when set.
#[derive(Clone, Debug, PartialEq)]
pub struct InputDef {
    pub name: String,
    pub ty: InputType,
    pub default: Value,
    pub min: f64,
    pub max: f64,
}

/// How a region's pose joins the stack below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerBlend {
    /// The first region: its pose is the base (rest where no state produces one).
    Base,
    /// Moves the pose below toward this region's by `weight * mask[j]` (DESIGN.md §4 Override).
    Override,
    /// Adds this region's pose relative to each clip's first sample (DESIGN.md §4 Additive).
    Additive,
}

/// What a state's root motion does (base region only; other regions never move the instance).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootMotionUse {
    /// The cooked trajectory's delta as is.
    Full,
    /// Ground-plane translation and yaw about +Y only.
    Planar,
    /// None: the state asks nothing of the motor.
    Ignore,
}

/// A leaf state's pose producer. Clip indices are package clip indices.
#[derive(Clone, Debug, PartialEq)]
pub enum Producer {
    /// No pose: rest in the base region, nothing in a layer.
    Empty,
    Clip(u32),
    /// Points sorted by strictly increasing position.
    Blend1d {
        input: u16,
        at: Vec<f64>,
        clips: Vec<u32>,
    },
    Blend2d {
        x: u16,
        y: u16,
        points: Vec<DVec2>,
        clips: Vec<u32>,
        triangles: Vec<Triangle>,
    },
    /// Motion matching over one of the package's motion databases: one player whose clip and
    /// time the tick's search chooses (base region only).
    Matching(Box<Matching>),
}

/// A motion-matching producer (docs/motion-matching.md, "On the tick"). Inputs are in the
/// character's frame at the tick's start: +Z forward, +Y up, metres, seconds, radians.
#[derive(Clone, Debug, PartialEq)]
pub struct Matching {
    /// Index into the package's motion databases.
    pub database: u16,
    /// The database's first clip: what the state's player starts with, until the search of the
    /// state's first tick replaces it.
    pub initial: u32,
    /// Float inputs of the desired velocity (x, z), m/s.
    pub velocity: [u16; 2],
    /// Float input of the desired turn from the current facing, radians about +Y.
    pub turn: u16,
    /// Float input of the ground distance (m) to where gameplay wants the character to stand
    /// still, negative for none: within reach of a stop in the database, the stop plays matched
    /// to that distance ([`crate::tick::matching::StopSegment`]).
    pub stop_distance: Option<u16>,
    /// Ticks between queries (instances staggered by id); a query also runs on the state's first
    /// tick, when the current frame leaves the searchable rows, and half way between two when
    /// the desired trajectory departs from the playing one.
    pub every: u32,
    /// Seconds of the inertialization of a switch.
    pub blend: f64,
    /// Half-life (s) of the critically damped springs predicting the desired trajectory.
    pub halflife: f64,
    /// Metres: a desired trajectory point this far from the playing one queries at once.
    pub departure: f64,
    /// Tag bits a match must carry one of (0: any row).
    pub tags: u8,
    /// Warping bounds: the root motion's ground-plane step may move toward the desired one by
    /// this fraction of its length...
    pub warp_speed: f64,
    /// ... and its yaw toward the desired turn by this many radians a second.
    pub warp_turn: f64,
}

impl Producer {
    pub fn clips(&self) -> &[u32] {
        match self {
            Producer::Empty => &[],
            Producer::Clip(c) => std::slice::from_ref(c),
            Producer::Blend1d { clips, .. } | Producer::Blend2d { clips, .. } => clips,
            Producer::Matching(m) => std::slice::from_ref(&m.initial),
        }
    }

    /// Most of its clips weighted above zero at once: a 1-D space weighs the two points around
    /// its input, a 2-D space the corners of one triangle (`crate::blend`).
    pub fn most_weighted(&self) -> usize {
        let n = self.clips().len();
        match self {
            Producer::Empty | Producer::Clip(_) | Producer::Matching(_) => n,
            Producer::Blend1d { .. } => n.min(2),
            Producer::Blend2d { .. } => n.min(3),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub name: String,
    /// Line of its `name` in the tree's TOML (1-based), for dumps.
    pub line: usize,
    pub parent: Option<u16>,
    /// Ancestors above it (a top-level state has depth 0).
    pub depth: u8,
    /// Child entered with this state; `Some` exactly for states with children.
    pub initial: Option<u16>,
    pub producer: Producer,
    /// `None`: each clip's cooked loop policy (loop or once).
    pub mode: Option<PlayMode>,
    pub rate: f64,
    pub sync: Option<u16>,
    pub root_motion: RootMotionUse,
    /// Transitions leaving this state, in selection order: priority high first, then stable id.
    pub transitions: Vec<u16>,
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub fn parse(s: &str) -> Option<Cmp> {
        Some(match s {
            "==" => Cmp::Eq,
            "!=" => Cmp::Ne,
            "<" => Cmp::Lt,
            "<=" => Cmp::Le,
            ">" => Cmp::Gt,
            ">=" => Cmp::Ge,
            _ => return None,
        })
    }
    pub fn symbol(self) -> &'static str {
        match self {
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }
    fn test<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
}

/// One typed predicate; a transition fires when all of its clauses hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Clause {
    /// `input cmp value`; the value has the input's type.
    Input { input: u16, cmp: Cmp, value: Value },
    /// Seconds since the transition's source state was entered, measured at the tick's start.
    Elapsed { cmp: Cmp, seconds: f64 },
    /// Every player of the active leaf has completed (a looping player never does).
    Completed(bool),
}

impl Clause {
    pub fn holds(&self, inputs: &[Value], elapsed: f64, completed: bool) -> bool {
        match *self {
            Clause::Input { input, cmp, value } => match (inputs.get(input as usize), value) {
                (Some(&Value::Bool(a)), Value::Bool(b)) => cmp.test(a, b),
                (Some(&Value::Int(a)), Value::Int(b)) => cmp.test(a, b),
                (Some(&Value::Float(a)), Value::Float(b)) => cmp.test(a, b),
                _ => false,
            },
            Clause::Elapsed { cmp, seconds } => cmp.test(elapsed, seconds),
            Clause::Completed(want) => completed == want,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// Stable id, unique in the tree.
    pub id: String,
    pub from: u16,
    pub to: u16,
    /// Higher fires first among the transitions of one state.
    pub priority: i32,
    /// Crossfade or inertialization seconds; 0 switches at once.
    pub duration: f64,
    pub blend: TransitionBlend,
    pub when: Vec<Clause>,
}

/// How a transition moves from the old pose to the new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransitionBlend {
    /// Both poses evaluated and blended over the duration (DESIGN.md §5).
    Crossfade,
    /// The new pose at once, plus the old one's offset decaying over the duration
    /// (docs/pose-program.md, "Inertialize"); base region only.
    Inertialize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    pub name: String,
    /// Line of its `name` in the tree's TOML (1-based), for dumps.
    pub line: usize,
    pub blend: LayerBlend,
    /// Package mask index (`Tree::mask_base` + its index in [`Tree::masks`]).
    pub mask: Option<u32>,
    /// Package curve selection index (`Tree::selection_base` + its index in
    /// [`Tree::curve_selections`]); `None`: the layer moves every curve its clips animate.
    pub curves: Option<u32>,
    /// Layer weight in [0, 1] (1 for the base).
    pub weight: f32,
    /// Top-level state entered first.
    pub initial: u16,
    pub states: Vec<State>,
    pub transitions: Vec<Transition>,
    /// Player slots per bank: the most clips any of its producers names (at least 1).
    pub slots: u16,
}

impl Region {
    /// Whether a transition of the region, or a motion-matching switch of one of its states,
    /// inertializes.
    pub fn inertializes(&self) -> bool {
        self.transitions
            .iter()
            .any(|t| t.blend == TransitionBlend::Inertialize)
            || (self.states.iter()).any(|s| matches!(s.producer, Producer::Matching(_)))
    }
}

/// A checked state tree bound to one skeleton of a package.
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    pub name: String,
    /// File name the tree was loaded from (for messages).
    pub file: String,
    pub skeleton: u32,
    /// Sorted by name.
    pub inputs: Vec<InputDef>,
    /// The tree's masks, sorted by name. They belong in the package: mask `k` here is package
    /// mask `mask_base + k`, which is what layers name; [`crate::instance::Controller::new`]
    /// adds them to its package.
    pub masks: Vec<Mask>,
    /// How many masks the package held when the tree was loaded against it.
    pub mask_base: u32,
    pub regions: Vec<Region>,
    pub sync_groups: Vec<String>,
    /// Gameplay sockets control evaluates every tick, sorted by name.
    pub sockets: Vec<Socket>,
    /// Events fired when a scalar curve crosses a threshold, sorted by name
    /// ([`crate::curve_events`]).
    pub curve_events: Vec<CurveEvent>,
    /// The curve channels the events watch (package ids, ascending, each once).
    pub watched_curves: Vec<u32>,
    /// The tree's curve selections, sorted by name; like masks they join the package
    /// (selection `k` here is package selection `selection_base + k`).
    pub curve_selections: Vec<throng_cpu_ref::CurveSelection>,
    /// How many curve selections the package held when the tree was loaded against it.
    pub selection_base: u32,
}

/// `[curve_events.NAME]`: an event each time the instance's curve crosses `threshold`, rising
/// (`above`: from below it to at or above it) or falling (`below`: from at or above it to below).
#[derive(Clone, Debug, PartialEq)]
pub struct CurveEvent {
    pub name: String,
    /// The curve's channel id in the package.
    pub channel: u32,
    /// Its index in [`Tree::watched_curves`].
    pub slot: u32,
    pub threshold: f32,
    pub rising: bool,
}

/// A point fixed to a joint (`[sockets.NAME]`): control evaluates it every tick from the
/// joint's chain alone ([`crate::socket`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Socket {
    pub name: String,
    pub joint: u32,
    /// In the joint's frame, metres.
    pub offset: glam::Vec3,
}

impl Tree {
    pub fn input(&self, name: &str) -> Option<u16> {
        self.inputs
            .iter()
            .position(|i| i.name == name)
            .map(|i| i as u16)
    }

    /// Whether any transition or motion-matching switch inertializes: then each instance needs
    /// a history slot (its id).
    pub fn inertializes(&self) -> bool {
        self.regions.iter().any(Region::inertializes)
    }

    /// Player slots an instance needs: two banks (crossfade target and live source) per region.
    pub fn player_slots(&self) -> usize {
        self.regions.iter().map(|r| 2 * r.slots as usize).sum()
    }

    /// First player slot of region `r`.
    pub fn player_offset(&self, r: usize) -> usize {
        self.regions[..r].iter().map(|r| 2 * r.slots as usize).sum()
    }

    /// The initial leaf path of region `r` under `state` (inclusive), root-down.
    pub fn entry_chain(&self, r: usize, state: u16, out: &mut [u16; MAX_DEPTH]) -> usize {
        let states = &self.regions[r].states;
        let mut len = 0;
        let mut s = state;
        // Ancestors first: walk up, then reverse.
        loop {
            out[len] = s;
            len += 1;
            match states[s as usize].parent {
                Some(p) => s = p,
                None => break,
            }
        }
        out[..len].reverse();
        let mut s = state;
        while let Some(child) = states[s as usize].initial {
            out[len] = child;
            len += 1;
            s = child;
        }
        len
    }
}

/// A load error: what went wrong, and where (file, 1-based line, dotted key).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}:{}: {}{}", .file, .line, key_prefix(.key), .kind)]
pub struct TreeError {
    pub file: String,
    pub line: usize,
    pub key: String,
    pub kind: TreeErrorKind,
}

/// `key: `, or nothing for an error not tied to one key (a syntax error).
fn key_prefix(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("{key}: ")
    }
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TreeErrorKind {
    #[error("{0}")]
    Syntax(String),
    #[error("format version {0} is not supported (this build reads version {FORMAT_VERSION})")]
    Version(i64),
    #[error("unknown clip '{0}' (not in the package, or cooked for another skeleton)")]
    UnknownClip(String),
    #[error("unknown state '{0}'")]
    UnknownState(String),
    #[error("unknown input '{0}'")]
    UnknownInput(String),
    #[error("unknown mask '{0}'")]
    UnknownMask(String),
    #[error("unknown curve selection '{0}'")]
    UnknownCurveSelection(String),
    #[error("mask names unknown joint '{0}'")]
    UnknownJoint(String),
    #[error("unknown curve '{curve}': the package's clips carry no such curve on this skeleton (it has {known})")]
    UnknownCurve { curve: String, known: String },
    #[error("'{0}' is defined twice")]
    Duplicate(String),
    #[error("state '{0}' is unreachable from the region's initial state")]
    Unreachable(String),
    #[error("conflicting priorities: transitions {transitions} leave state '{state}' with the same priority {priority}")]
    ConflictingPriority {
        transitions: String,
        state: String,
        priority: i32,
    },
    #[error("zero-time cycle: {0} can loop without time passing under one input snapshot")]
    ZeroTimeCycle(String),
    #[error("{0}")]
    Invalid(String),
}
