//! One instance's control state and its fixed tick (DESIGN.md §5).
//!
//! A tick, in order:
//! 1. snapshot the inputs (they are read only from the instance, which nothing else writes
//!    during the tick);
//! 2. per region, select at most one transition: states on the active path from the root down
//!    (ancestor first), each state's transitions by priority (high first) then stable id; the
//!    first whose clauses all hold fires;
//! 3. apply it: exit the old path leaf-up to below the common ancestor (the source and target
//!    themselves are exited and re-entered), enter the new path root-down, once each, and start
//!    the new leaf's players;
//! 4. progress crossfades, then weigh every player (blend space × crossfade);
//! 5. advance each participating player exactly once: sync-group leaders and unsynced players
//!    by their own rate, followers to the leader's phase;
//! 6. deliver events (from players with weight > 0 that are not sync followers, in player
//!    order: region, crossfade target before source, slot) and blend the root motion of the
//!    base region;
//! 7. commit: the tick runs on the instance in place, having saved its players when it began
//!    and each region before it first changes it ([`crate::undo`]); if a step fails or the
//!    output does not fit its capacity, the saved values are put back, so a failed tick leaves
//!    the instance exactly as it was.
//!
//! Each phase has its own module under `control/src/tick/`: `select.rs` (steps 2 and 3),
//! `fade.rs` (4, and the sample lists captures and programs take), `sync.rs` and `advance.rs`
//! (5), `advance.rs` and `motion.rs` (6); the undo log of step 7 is `control/src/undo.rs`.
//!
//! Crossfades and interruption: a transition with a duration keeps the old leaf's players
//! playing as the fade source. A transition during a fade captures the composed pose of that
//! moment as at most [`FROZEN_SAMPLES`] weighted (clip, time) samples (the heaviest kept and
//! renormalised: a bounded collapse) and fades from that frozen pose, so a storm of
//! interruptions never builds a chain.
//!
//! Inertialization (base region only): a transition with `blend = "inertialize"` switches at once
//! (events, root motion and sync take the new leaf alone, as a switch) and records the region's
//! composed pose of this moment and of one tick later as sample lists ([`Inertia::capture`]);
//! the program of that tick has the evaluator capture the offset of the source from the new pose
//! into the instance's history slot (its id), and later ticks add the offset as it decays. An
//! inertialization that interrupts another carries the old offset on its source; a crossfade that
//! starts during one leaves it decaying on top. [`Controller::reset_inertia`] (a teleport)
//! drops the offset.

use throng_cpu_ref::{Clip, Package};

use crate::events::{EventBuffer, EventKind, EventTrack, Overflow};
use crate::player::{ClipPlayer, PlayerError};
use crate::root_motion::{LastSample, Motion, IDENTITY};
use crate::tick::matching::MatchQuery;
use crate::tree::Producer;
use crate::tree::{InputType, Tree, Value, FROZEN_SAMPLES, MAX_DEPTH, MAX_SYNC_GROUPS};
use crate::undo::Undo;

/// Clip index of a rest-pose sample in a frozen pose.
pub const REST: u32 = u32::MAX;

/// Fastest tick rate, Hz: an inertializing transition captures over one tick, and a capture
/// interval is at least [`throng_cpu_ref::inertialize::MIN_CAPTURE_INTERVAL`].
pub const MAX_TICK_HZ: f64 = 10_000.0;
/// A sync-group leader keeps its role until another participant outweighs it by this much.
pub const LEADER_HYSTERESIS: f32 = 0.1;

/// One weighted sample of a captured (frozen) pose.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrozenSample {
    /// Clip index, or [`REST`].
    pub clip: u32,
    pub time: f32,
    pub weight: f32,
}

/// Where a crossfade fades from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    /// No fade: the target alone.
    None,
    /// The previous leaf, still playing in the other player bank.
    Live { state: u16, count: u8 },
    /// The pose composed when a fade was interrupted, held still.
    Frozen {
        samples: [FrozenSample; FROZEN_SAMPLES],
        len: u8,
    },
}

/// The source pose an inertialization captures, as the region composed it: `now` the tick of
/// the transition (the old players one tick on), `previous` the tick before (what was shown).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InertialSource {
    pub now: [FrozenSample; FROZEN_SAMPLES],
    pub previous: [FrozenSample; FROZEN_SAMPLES],
    pub now_len: u8,
    pub previous_len: u8,
    /// The source's own decaying offset (an interrupted inertialization): seconds since its
    /// capture at `now`, and its duration.
    pub carried: Option<(f64, f64)>,
}

/// The base region's inertialization.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Inertia {
    /// An offset is decaying in the instance's history slot.
    pub active: bool,
    /// Seconds since the capture (0 on the tick of the transition).
    pub elapsed: f64,
    pub duration: f64,
    /// Set on the tick of the transition only: the source the program captures from.
    pub capture: Option<InertialSource>,
}

/// Which tick's clip times a sample list takes from the players.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum When {
    Now,
    /// One tick of play later.
    Next,
    /// One tick of play earlier.
    Previous,
}

/// The active path and crossfade of one region.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RegionState {
    /// States root-down; `path[..depth]` is active.
    pub path: [u16; MAX_DEPTH],
    pub depth: u8,
    /// Tick on which each path state was entered.
    pub entered: [u64; MAX_DEPTH],
    /// Player bank (0 or 1) of the crossfade target (the active leaf).
    pub bank: u8,
    /// Players of the active leaf.
    pub count: u8,
    pub source: Source,
    pub fade_elapsed: f64,
    pub fade_duration: f64,
}

impl RegionState {
    pub fn leaf(&self) -> u16 {
        self.path[self.depth as usize - 1]
    }
    /// The player banks with live players: `(bank, players, state)` of the active leaf, then of
    /// a live fade source (no players when there is none).
    pub fn live_banks(&self) -> [(usize, usize, u16); 2] {
        let mut banks = [
            (self.bank as usize, self.count as usize, self.leaf()),
            (0, 0, 0),
        ];
        if let Source::Live { state, count } = self.source {
            banks[1] = (1 - self.bank as usize, count as usize, state);
        }
        banks
    }
    /// Crossfade progress toward the target, in [0, 1].
    pub fn alpha(&self) -> f32 {
        match self.source {
            Source::None => 1.0,
            _ if self.fade_duration <= 0.0 => 1.0,
            _ => (self.fade_elapsed / self.fade_duration).clamp(0.0, 1.0) as f32,
        }
    }
}

/// The whole control state of one instance: plain data, changed in place by a tick (and put back
/// by its undo log if the tick fails).
#[derive(Debug)]
pub struct InstanceState {
    pub id: u32,
    /// Ticks completed.
    pub tick: u64,
    pub next_activation: u64,
    /// Leader activation per sync group (0: none).
    pub leaders: [u64; MAX_SYNC_GROUPS],
    /// The base region's inertialization (only the base region inertializes; kept here rather
    /// than in every region, which most ticks read and none of the others use).
    pub inertia: Inertia,
    /// One value per tree input, typed as declared.
    pub inputs: Vec<Value>,
    pub regions: Vec<RegionState>,
    /// Two banks of `slots` players per region, regions in order.
    pub players: Vec<ClipPlayer>,
    /// The last trajectory sample of each base-region player slot: a cache that spares a step
    /// its first sample, not state (equality and the undo log ignore it).
    pub root_samples: Vec<LastSample>,
}

impl PartialEq for InstanceState {
    fn eq(&self, other: &Self) -> bool {
        (
            self.id,
            self.tick,
            self.next_activation,
            self.leaders,
            self.inertia,
        ) == (
            other.id,
            other.tick,
            other.next_activation,
            other.leaders,
            other.inertia,
        ) && self.inputs == other.inputs
            && self.regions == other.regions
            && self.players == other.players
    }
}

impl Clone for InstanceState {
    fn clone(&self) -> Self {
        InstanceState {
            inputs: self.inputs.clone(),
            regions: self.regions.clone(),
            players: self.players.clone(),
            root_samples: self.root_samples.clone(),
            ..*self
        }
    }

    /// Field by field, reusing this state's buffers: no allocation once they are large enough.
    fn clone_from(&mut self, other: &Self) {
        self.id = other.id;
        self.tick = other.tick;
        self.next_activation = other.next_activation;
        self.leaders = other.leaders;
        self.inertia = other.inertia;
        self.inputs.clone_from(&other.inputs);
        self.regions.clone_from(&other.regions);
        self.players.clone_from(&other.players);
        self.root_samples.clone_from(&other.root_samples);
    }
}

/// Whether a state change left or entered a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Exit,
    Enter,
}

/// One exit or entry, in the order they happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateChange {
    pub region: u16,
    pub state: u16,
    pub change: Change,
    /// The transition that caused it (index in the region).
    pub transition: u16,
}

/// What one tick produced; allocated once per thread and reused.
#[derive(Clone, Debug)]
pub struct TickOutput {
    pub events: EventBuffer,
    /// Exits and entries, bounded by `2 * MAX_DEPTH` per region (one transition each).
    pub changes: Vec<StateChange>,
    /// The root motion asked of the motor, in the placement frame at the tick's start.
    pub root_motion: Motion,
    /// The motion-matching query of the tick, if the base region's leaf matched and was due.
    pub query: Option<MatchQuery>,
}

impl TickOutput {
    pub fn new(tree: &Tree, event_capacity: usize) -> Self {
        TickOutput {
            events: EventBuffer::with_capacity(event_capacity),
            changes: Vec::with_capacity(tree.regions.len() * 2 * MAX_DEPTH),
            root_motion: IDENTITY,
            query: None,
        }
    }
    fn clear(&mut self) {
        self.events.clear();
        self.changes.clear();
        self.root_motion = IDENTITY;
        self.query = None;
    }
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TickError {
    #[error(transparent)]
    Events(#[from] Overflow),
    #[error("region '{region}': player of clip {clip}: {source}")]
    Player {
        region: String,
        clip: u32,
        source: PlayerError,
    },
    #[error("the tick count overflowed")]
    TickCount,
    /// The tick committed, but its program would not evaluate a socket (a bug: compiled
    /// programs are valid).
    #[error("socket evaluation: {0}")]
    Socket(String),
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InputError {
    #[error("unknown input '{0}'")]
    Unknown(String),
    #[error("input '{name}' is {expected:?}, not {found:?}")]
    Type {
        name: String,
        expected: InputType,
        found: InputType,
    },
    #[error("input '{name}' is {value}, which is not finite")]
    NotFinite { name: String, value: f64 },
    #[error("no input {input}: the tree has {inputs} (look an index up by name with Tree::input)")]
    NoIndex { input: u16, inputs: usize },
}

/// A tree bound to its package and tick rate: everything a tick reads and nothing it writes.
#[derive(Clone, Debug)]
pub struct Controller {
    pub tree: Tree,
    pub package: Package,
    /// Seconds per tick.
    pub period: f64,
    /// Events one instance may deliver in one tick.
    pub event_capacity: usize,
    /// Skin whose palette compiled programs end with, if any.
    pub skin: Option<u32>,
    pub(crate) tracks: Vec<EventTrack>,
    /// Per region: its first player slot and its slots per bank ([`Controller::bank_slots`]).
    banks: Vec<(usize, usize)>,
    /// Regions with a state in a sync group, in order.
    pub(crate) sync_regions: Vec<usize>,
    /// Whether the base region has a motion-matching state.
    pub(crate) matching: bool,
    /// Per motion database of the package, its stops, when the base region matches.
    pub(crate) stops: Vec<Vec<crate::tick::matching::StopSegment>>,
}

/// Per-thread scratch for ticking: the undo log of the tick and player weights.
#[derive(Clone, Debug)]
pub struct Scratch {
    pub(crate) undo: Undo,
    /// Player weights by slot; after a successful tick, those of the committed state.
    pub(crate) weights: Vec<f32>,
    /// Player slots that follow a sync leader this tick.
    pub(crate) follower: Vec<bool>,
    /// Each sync group's leader slot this tick ([`crate::tick::sync::NO_LEADER`] for none).
    pub(crate) leader_slots: [usize; MAX_SYNC_GROUPS],
    /// Whole cycles each sync group's leader ran this tick beyond the first crossing.
    pub(crate) laps: [f64; MAX_SYNC_GROUPS],
    /// The compiler's sample lists ([`crate::program::LIST`] each, two).
    pub(crate) lists: Vec<FrozenSample>,
    /// The base region's weighted player steps, in advance order (at most one per slot and
    /// tick): [`Controller::tick`]'s, or those of a crowd chunk's ticks, instance by instance.
    pub(crate) motions: Vec<crate::tick::motion::PendingMotion>,
}

impl Controller {
    /// Binds `tree` (loaded for `package`) at `hz` ticks per second; the tree's masks join the
    /// package (as the masks its layers name) unless it already holds them.
    pub fn new(
        tree: Tree,
        mut package: Package,
        hz: f64,
        event_capacity: usize,
    ) -> Result<Self, PlayerError> {
        if !hz.is_finite() {
            return Err(PlayerError::NotFinite {
                what: "tick rate",
                value: hz,
            });
        }
        if !(hz > 0.0 && hz <= MAX_TICK_HZ) {
            return Err(PlayerError::OutOfRange {
                what: "tick rate",
                value: hz,
                range: "(0, 10000] Hz",
            });
        }
        if package.masks.len() == tree.mask_base as usize {
            package.masks.extend(tree.masks.iter().cloned());
        }
        if package.curves.selections.len() == tree.selection_base as usize {
            (package.curves.selections).extend(tree.curve_selections.iter().cloned());
        }
        let tracks = package.clips.iter().map(EventTrack::new).collect();
        let skin = package
            .skins
            .iter()
            .position(|s| s.skeleton == tree.skeleton)
            .map(|s| s as u32);
        let banks = (0..tree.regions.len())
            .map(|r| (tree.player_offset(r), tree.regions[r].slots as usize))
            .collect();
        let sync_regions = (0..tree.regions.len())
            .filter(|&r| tree.regions[r].states.iter().any(|s| s.sync.is_some()))
            .collect();
        let matching = tree.regions.first().is_some_and(|r| {
            r.states
                .iter()
                .any(|s| matches!(s.producer, Producer::Matching(_)))
        });
        let stops = match matching {
            true => (package.motion_databases.iter())
                .map(|db| crate::tick::matching::stop_segments(db, &package))
                .collect(),
            false => Vec::new(),
        };
        Ok(Controller {
            tree,
            package,
            period: 1.0 / hz,
            event_capacity,
            skin,
            tracks,
            banks,
            sync_regions,
            matching,
            stops,
        })
    }

    pub(crate) fn clip(&self, clip: u32) -> Option<&Clip> {
        self.package.clips.get(clip as usize)
    }

    /// A new instance on the initial path of every region, inputs at their defaults, its leaf
    /// players at time 0 (entered on tick 0, so no entry is reported).
    pub fn spawn(&self, id: u32) -> Result<InstanceState, TickError> {
        let tree = &self.tree;
        let mut s = InstanceState {
            id,
            tick: 0,
            next_activation: 1,
            leaders: [0; MAX_SYNC_GROUPS],
            inertia: Inertia::default(),
            inputs: tree.inputs.iter().map(|i| i.default).collect(),
            regions: Vec::with_capacity(tree.regions.len()),
            players: vec![ClipPlayer::default(); tree.player_slots()],
            root_samples: vec![
                LastSample::default();
                tree.regions.first().map_or(0, |r| 2 * r.slots as usize)
            ],
        };
        for (r, region) in tree.regions.iter().enumerate() {
            let mut path = [0u16; MAX_DEPTH];
            let depth = tree.entry_chain(r, region.initial, &mut path);
            s.regions.push(RegionState {
                path,
                depth: depth as u8,
                entered: [0; MAX_DEPTH],
                bank: 0,
                count: 0,
                source: Source::None,
                fade_elapsed: 0.0,
                fade_duration: 0.0,
            });
            self.start_players(&mut s, r, 0)?;
        }
        Ok(s)
    }

    pub fn scratch(&self) -> Scratch {
        let n = self.tree.player_slots();
        Scratch {
            undo: Undo::new(self.tree.regions.len(), n),
            weights: vec![0.0; n],
            follower: vec![false; n],
            leader_slots: [crate::tick::sync::NO_LEADER; MAX_SYNC_GROUPS],
            laps: [0.0; MAX_SYNC_GROUPS],
            lists: vec![FrozenSample::default(); 2 * crate::program::LIST],
            motions: Vec::with_capacity(self.pending_motions()),
        }
    }

    pub fn output(&self) -> TickOutput {
        TickOutput::new(&self.tree, self.event_capacity)
    }

    /// Sets input `name`; numeric values are clamped to the declared range. Bad names, types
    /// and non-finite values are rejected and change nothing.
    pub fn set_input(
        &self,
        s: &mut InstanceState,
        name: &str,
        value: Value,
    ) -> Result<(), InputError> {
        let i = self
            .tree
            .input(name)
            .ok_or_else(|| InputError::Unknown(name.to_owned()))?;
        self.set_input_at(s, i, value)
    }

    /// [`Controller::set_input`] of the tree's input `input` (its index, which
    /// [`Tree::input`] gives once by name), without looking the name up: for inputs set on every
    /// instance every tick. An index the tree or the instance lacks is rejected.
    pub fn set_input_at(
        &self,
        s: &mut InstanceState,
        input: u16,
        value: Value,
    ) -> Result<(), InputError> {
        let i = input as usize;
        let (Some(def), Some(slot)) = (self.tree.inputs.get(i), s.inputs.get_mut(i)) else {
            return Err(InputError::NoIndex {
                input,
                inputs: self.tree.inputs.len(),
            });
        };
        *slot = match (def.ty, value) {
            (InputType::Float, Value::Float(_) | Value::Int(_)) => {
                let f = value.as_f64();
                if !f.is_finite() {
                    return Err(InputError::NotFinite {
                        name: def.name.clone(),
                        value: f,
                    });
                }
                Value::Float(f.clamp(def.min, def.max))
            }
            (InputType::Int, Value::Int(v)) => {
                Value::Int((v as f64).clamp(def.min, def.max) as i64)
            }
            (InputType::Bool, Value::Bool(b)) => Value::Bool(b),
            (expected, found) => {
                return Err(InputError::Type {
                    name: def.name.clone(),
                    expected,
                    found: found.ty(),
                })
            }
        };
        Ok(())
    }

    /// Runs one tick on `s` (see the module doc). On error `s` is exactly as before the call
    /// and the output is empty.
    pub fn tick(
        &self,
        s: &mut InstanceState,
        scratch: &mut Scratch,
        out: &mut TickOutput,
    ) -> Result<(), TickError> {
        scratch.motions.clear();
        self.tick_steps(s, scratch, out)?;
        out.root_motion = self.root_motion(s, &scratch.motions);
        Ok(())
    }

    /// [`Controller::tick`] but for its root motion, which it leaves identity: a successful tick
    /// appends to `scratch.motions` the steps [`Controller::root_motion`] blends (a failed one
    /// leaves the list as it was).
    pub(crate) fn tick_steps(
        &self,
        s: &mut InstanceState,
        scratch: &mut Scratch,
        out: &mut TickOutput,
    ) -> Result<(), TickError> {
        out.clear();
        scratch.undo.begin(s);
        let listed = scratch.motions.len();
        let result = self.tick_in_place(s, scratch, out);
        if result.is_err() {
            scratch.undo.restore(s);
            scratch.motions.truncate(listed);
            out.clear();
        }
        result
    }

    fn tick_in_place(
        &self,
        s: &mut InstanceState,
        scratch: &mut Scratch,
        out: &mut TickOutput,
    ) -> Result<(), TickError> {
        let tick = s.tick.checked_add(1).ok_or(TickError::TickCount)?;
        if s.inertia.capture.is_some() || s.inertia.active {
            scratch.undo.inertia(s);
            let inertia = &mut s.inertia;
            inertia.capture = None;
            if inertia.active {
                inertia.elapsed += self.period;
                inertia.active = inertia.elapsed < inertia.duration;
            }
        }
        // Steps 2 to 4 region by region: a region's selection, fade and weights read nothing of
        // the others (its transitions test the inputs and its own states), so this is the order
        // of the numbered steps, with one pass over the regions instead of three.
        scratch.weights.fill(0.0);
        for r in 0..self.tree.regions.len() {
            if let Some(t) = self.select(s, r, tick) {
                self.apply(s, scratch, r, t, tick, out)?;
                // A capture in `apply` weighed the players the transition left.
                let (offset, slots) = self.bank_slots(r);
                scratch.weights[offset..offset + 2 * slots].fill(0.0);
            }
            if r == 0 && self.matching {
                self.match_motion(s, scratch, r, tick, out)?;
            }
            if !matches!(s.regions[r].source, Source::None) {
                scratch.undo.region(s, r);
                s.regions[r].fade_elapsed += self.period;
            }
            self.weigh_live(s, r, &mut scratch.weights);
        }
        self.choose_leaders(
            s,
            &scratch.weights,
            &mut scratch.follower,
            &mut scratch.leader_slots,
        );
        self.advance(s, scratch, tick, out)?;
        for rs in &mut s.regions {
            if !matches!(rs.source, Source::None) && rs.alpha() >= 1.0 {
                rs.source = Source::None;
            }
        }
        s.tick = tick;
        Ok(())
    }

    /// Most base-region steps one tick lists for its root motion: one per player slot.
    pub(crate) fn pending_motions(&self) -> usize {
        self.banks.first().map_or(0, |&(_, slots)| 2 * slots)
    }

    /// Players of region `r`: `(first slot of bank 0, slots per bank)`.
    pub(crate) fn bank_slots(&self, r: usize) -> (usize, usize) {
        self.banks[r]
    }

    /// The events' names (for dumps and output): a clip event's or a curve event's; `None` for
    /// a completion.
    pub fn event_name(&self, clip: u32, kind: EventKind) -> Option<&str> {
        match kind {
            EventKind::Clip(i) => self
                .clip(clip)?
                .events
                .get(i as usize)
                .map(|e| e.name.as_str()),
            EventKind::Completed => None,
            EventKind::Curve(i) => self
                .tree
                .curve_events
                .get(i as usize)
                .map(|e| e.name.as_str()),
        }
    }
}
