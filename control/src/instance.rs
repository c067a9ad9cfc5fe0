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
//! 7. commit: the tick runs on the instance in place, saving the old value of each region and
//!    player before it first changes it ([`crate::undo`]); if a step fails or the output does not
//!    fit its capacity, the saved values are put back, so a failed tick leaves the instance
//!    exactly as it was.
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

use glam::{DVec2, Quat, Vec3, Vec4};
use throng_cpu_ref::{Clip, Package, SyncMarker};

use crate::blend::{weights_1d, weights_2d};
use crate::events::{deliver, EventBuffer, EventKind, EventTrack, Overflow, Stamp};
use crate::player::{ClipPlayer, PlayMode, PlayerError, Step};
use crate::root_motion::{step_motion, Motion, IDENTITY};
use crate::tree::{
    mode_for, InputType, Producer, RootMotionUse, TransitionBlend, Tree, Value, FROZEN_SAMPLES,
    MAX_DEPTH, MAX_POINTS, MAX_SYNC_GROUPS,
};
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

/// A region's inertialization.
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
    pub inertia: Inertia,
}

impl RegionState {
    pub fn leaf(&self) -> u16 {
        self.path[self.depth as usize - 1]
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

/// The whole control state of one instance: plain data, replaced as a unit on commit.
#[derive(Debug, PartialEq)]
pub struct InstanceState {
    pub id: u32,
    /// Ticks completed.
    pub tick: u64,
    pub next_activation: u64,
    /// Leader activation per sync group (0: none).
    pub leaders: [u64; MAX_SYNC_GROUPS],
    /// One value per tree input, typed as declared.
    pub inputs: Vec<Value>,
    pub regions: Vec<RegionState>,
    /// Two banks of `slots` players per region, regions in order.
    pub players: Vec<ClipPlayer>,
}

impl Clone for InstanceState {
    fn clone(&self) -> Self {
        InstanceState {
            inputs: self.inputs.clone(),
            regions: self.regions.clone(),
            players: self.players.clone(),
            ..*self
        }
    }

    /// Field by field, reusing this state's buffers: no allocation once they are large enough.
    fn clone_from(&mut self, other: &Self) {
        self.id = other.id;
        self.tick = other.tick;
        self.next_activation = other.next_activation;
        self.leaders = other.leaders;
        self.inputs.clone_from(&other.inputs);
        self.regions.clone_from(&other.regions);
        self.players.clone_from(&other.players);
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
}

impl TickOutput {
    pub fn new(tree: &Tree, event_capacity: usize) -> Self {
        TickOutput {
            events: EventBuffer::with_capacity(event_capacity),
            changes: Vec::with_capacity(tree.regions.len() * 2 * MAX_DEPTH),
            root_motion: IDENTITY,
        }
    }
    fn clear(&mut self) {
        self.events.clear();
        self.changes.clear();
        self.root_motion = IDENTITY;
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
    tracks: Vec<EventTrack>,
}

/// Per-thread scratch for ticking: the undo log of the tick and player weights.
#[derive(Clone, Debug)]
pub struct Scratch {
    undo: Undo,
    /// Player weights by slot; after a successful tick, those of the committed state.
    pub(crate) weights: Vec<f32>,
    /// Player slots that follow a sync leader this tick.
    follower: Vec<bool>,
    /// Whole cycles each sync group's leader ran this tick beyond the first crossing.
    laps: [f64; MAX_SYNC_GROUPS],
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
        let tracks = package.clips.iter().map(EventTrack::new).collect();
        let skin = package
            .skins
            .iter()
            .position(|s| s.skeleton == tree.skeleton)
            .map(|s| s as u32);
        Ok(Controller {
            tree,
            package,
            period: 1.0 / hz,
            event_capacity,
            skin,
            tracks,
        })
    }

    fn clip(&self, clip: u32) -> Option<&Clip> {
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
            inputs: tree.inputs.iter().map(|i| i.default).collect(),
            regions: Vec::with_capacity(tree.regions.len()),
            players: vec![ClipPlayer::default(); tree.player_slots()],
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
                inertia: Inertia::default(),
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
            laps: [0.0; MAX_SYNC_GROUPS],
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
            .ok_or_else(|| InputError::Unknown(name.to_owned()))? as usize;
        let def = &self.tree.inputs[i];
        let value = match (def.ty, value) {
            (InputType::Float, Value::Float(_) | Value::Int(_)) => {
                let f = value.as_f64();
                if !f.is_finite() {
                    return Err(InputError::NotFinite {
                        name: name.to_owned(),
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
                    name: name.to_owned(),
                    expected,
                    found: found.ty(),
                })
            }
        };
        s.inputs[i] = value;
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
        out.clear();
        scratch.undo.begin(s);
        let result = self.tick_in_place(s, scratch, out);
        if result.is_err() {
            scratch.undo.restore(s);
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
        let undo = &mut scratch.undo;
        for r in 0..s.regions.len() {
            let inertia = &s.regions[r].inertia;
            if inertia.capture.is_some() || inertia.active {
                undo.region(s, r);
                let inertia = &mut s.regions[r].inertia;
                inertia.capture = None;
                if inertia.active {
                    inertia.elapsed += self.period;
                    inertia.active = inertia.elapsed < inertia.duration;
                }
            }
        }
        for r in 0..self.tree.regions.len() {
            if let Some(t) = self.select(s, r, tick) {
                self.apply(s, scratch, r, t, tick, out)?;
            }
        }
        for r in 0..s.regions.len() {
            if s.regions[r].source != Source::None {
                scratch.undo.region(s, r);
                s.regions[r].fade_elapsed += self.period;
            }
        }
        for r in 0..self.tree.regions.len() {
            self.weigh(s, r, &mut scratch.weights);
        }
        self.choose_leaders(s, &scratch.weights, &mut scratch.follower);
        self.advance(s, scratch, tick, out)?;
        for rs in &mut s.regions {
            if rs.source != Source::None && rs.alpha() >= 1.0 {
                rs.source = Source::None;
            }
        }
        s.tick = tick;
        Ok(())
    }

    /// Players of region `r`: `(first slot of bank 0, slots per bank)`.
    fn bank_slots(&self, r: usize) -> (usize, usize) {
        (
            self.tree.player_offset(r),
            self.tree.regions[r].slots as usize,
        )
    }

    /// Whether every player of region `r`'s active leaf has completed (false with none).
    fn leaf_completed(&self, s: &InstanceState, r: usize) -> bool {
        let rs = &s.regions[r];
        let (offset, slots) = self.bank_slots(r);
        let first = offset + rs.bank as usize * slots;
        rs.count > 0
            && s.players[first..first + rs.count as usize]
                .iter()
                .all(|p| p.completed())
    }

    /// The transition region `r` takes this tick, if any: ancestor first, then priority, then id.
    fn select(&self, s: &InstanceState, r: usize, tick: u64) -> Option<u16> {
        let rs = &s.regions[r];
        let region = &self.tree.regions[r];
        let completed = self.leaf_completed(s, r);
        for d in 0..rs.depth as usize {
            let state = &region.states[rs.path[d] as usize];
            let elapsed = tick.saturating_sub(rs.entered[d]) as f64 * self.period;
            for &t in &state.transitions {
                if region.transitions[t as usize]
                    .when
                    .iter()
                    .all(|c| c.holds(&s.inputs, elapsed, completed))
                {
                    return Some(t);
                }
            }
        }
        None
    }

    /// Takes transition `t` in region `r`: exits leaf-up, entries root-down, new players,
    /// crossfade source.
    fn apply(
        &self,
        s: &mut InstanceState,
        scratch: &mut Scratch,
        r: usize,
        t: u16,
        tick: u64,
        out: &mut TickOutput,
    ) -> Result<(), TickError> {
        let region = &self.tree.regions[r];
        let tr = &region.transitions[t as usize];
        let mut chain = [0u16; MAX_DEPTH];
        let len = self.tree.entry_chain(r, tr.to, &mut chain);
        let from_depth = region.states[tr.from as usize].depth as usize;
        let to_depth = region.states[tr.to as usize].depth as usize;
        let inertialize = tr.blend == TransitionBlend::Inertialize;
        // Captured before the path changes: the pose of this moment, if a fade is interrupted.
        let weights = &mut scratch.weights;
        let capture = match s.regions[r].source {
            Source::None => None,
            _ if tr.duration <= 0.0 || inertialize => None,
            _ => Some(self.capture(s, r, weights, When::Now)),
        };
        let inertial =
            (inertialize && tr.duration > 0.0).then(|| self.inertial_source(s, r, weights));
        let (offset, slots) = self.bank_slots(r);
        let new_bank = 1 - s.regions[r].bank as usize;
        scratch.undo.region(s, r);
        let first = offset + new_bank * slots;
        scratch.undo.players(s, first..first + slots);
        let rs = &mut s.regions[r];
        let (old_leaf, old_count) = (rs.leaf(), rs.count);
        let shared = rs.path[..rs.depth as usize]
            .iter()
            .zip(&chain[..len])
            .take_while(|(a, b)| a == b)
            .count();
        let common = shared.min(from_depth).min(to_depth);
        for d in (common..rs.depth as usize).rev() {
            out.changes.push(StateChange {
                region: r as u16,
                state: rs.path[d],
                change: Change::Exit,
                transition: t,
            });
        }
        for (d, &state) in chain.iter().enumerate().take(len).skip(common) {
            out.changes.push(StateChange {
                region: r as u16,
                state,
                change: Change::Enter,
                transition: t,
            });
            rs.path[d] = state;
            rs.entered[d] = tick;
        }
        rs.depth = len as u8;
        rs.source = match capture {
            Some((samples, len)) => Source::Frozen { samples, len },
            None if tr.duration > 0.0 && !inertialize => Source::Live {
                state: old_leaf,
                count: old_count,
            },
            None => Source::None,
        };
        rs.fade_elapsed = 0.0;
        rs.fade_duration = if inertialize { 0.0 } else { tr.duration };
        if inertialize {
            rs.inertia = match inertial {
                Some(source) => Inertia {
                    active: true,
                    elapsed: 0.0,
                    duration: tr.duration,
                    capture: Some(source),
                },
                None => Inertia::default(),
            };
        }
        let bank = 1 - rs.bank;
        self.start_players(s, r, bank)
    }

    /// Starts the active leaf's players of region `r` in `bank`, at time 0.
    fn start_players(&self, s: &mut InstanceState, r: usize, bank: u8) -> Result<(), TickError> {
        let region = &self.tree.regions[r];
        let leaf = s.regions[r].leaf();
        let state = &region.states[leaf as usize];
        let (offset, slots) = self.bank_slots(r);
        let first = offset + bank as usize * slots;
        let clips = state.producer.clips();
        for (k, &clip) in clips.iter().enumerate() {
            let duration = self.clip(clip).map_or(0.0, |c| c.duration);
            let mode = mode_for(state, &self.package, clip);
            let activation = s.next_activation;
            s.next_activation = activation.checked_add(1).ok_or(TickError::TickCount)?;
            s.players[first + k] =
                ClipPlayer::play(clip, duration, mode, state.rate, self.period, activation)
                    .map_err(|source| TickError::Player {
                        region: region.name.clone(),
                        clip,
                        source,
                    })?;
        }
        let rs = &mut s.regions[r];
        rs.bank = bank;
        rs.count = clips.len() as u8;
        Ok(())
    }

    /// Writes every player slot's effective weight (blend space × crossfade) into `weights`
    /// (one per slot, [`Tree::player_slots`] long).
    pub fn player_weights(&self, s: &InstanceState, weights: &mut [f32]) {
        for r in 0..self.tree.regions.len() {
            self.weigh(s, r, weights);
        }
    }

    /// Writes the effective weight of every player of region `r` (blend space × crossfade)
    /// into `weights` (by player slot); unused slots weigh 0.
    pub(crate) fn weigh(&self, s: &InstanceState, r: usize, weights: &mut [f32]) {
        let rs = &s.regions[r];
        let region = &self.tree.regions[r];
        let (offset, slots) = self.bank_slots(r);
        weights[offset..offset + 2 * slots]
            .iter_mut()
            .for_each(|w| *w = 0.0);
        let alpha = rs.alpha();
        let target = offset + rs.bank as usize * slots;
        let leaf = &region.states[rs.leaf() as usize];
        producer_weights(
            &leaf.producer,
            &s.inputs,
            &mut weights[target..target + slots],
            alpha,
        );
        if let Source::Live { state, .. } = rs.source {
            let source = offset + (1 - rs.bank as usize) * slots;
            let producer = &region.states[state as usize].producer;
            producer_weights(
                producer,
                &s.inputs,
                &mut weights[source..source + slots],
                1.0 - alpha,
            );
        }
    }

    /// Drops every region's inertialization offset (a teleport: the next pose is not a
    /// continuation of the last).
    pub fn reset_inertia(&self, s: &mut InstanceState) {
        for rs in &mut s.regions {
            rs.inertia = Inertia::default();
        }
    }

    /// The source of an inertialization of region `r` starting now (see [`InertialSource`]).
    fn inertial_source(&self, s: &InstanceState, r: usize, weights: &mut [f32]) -> InertialSource {
        let (now, now_len) = self.capture(s, r, weights, When::Next);
        let (previous, previous_len) = self.capture(s, r, weights, When::Now);
        let i = &s.regions[r].inertia;
        InertialSource {
            now,
            previous,
            now_len,
            previous_len,
            carried: i.active.then_some((i.elapsed, i.duration)),
        }
    }

    /// The composed pose of region `r` at `when`, as at most [`FROZEN_SAMPLES`] weighted
    /// samples: duplicates merged, the heaviest kept, renormalised to the weight they had
    /// together.
    fn capture(
        &self,
        s: &InstanceState,
        r: usize,
        weights: &mut [f32],
        when: When,
    ) -> ([FrozenSample; FROZEN_SAMPLES], u8) {
        self.weigh(s, r, weights);
        let mut all = [FrozenSample::default(); 2 * MAX_POINTS + FROZEN_SAMPLES];
        let n = self.samples(s, r, weights, &mut all, when);
        let total: f32 = all[..n].iter().map(|x| x.weight).sum();
        all[..n].sort_by(|a, b| {
            b.weight
                .total_cmp(&a.weight)
                .then(a.clip.cmp(&b.clip))
                .then(a.time.total_cmp(&b.time))
        });
        let kept = n.min(FROZEN_SAMPLES);
        let sum: f32 = all[..kept].iter().map(|x| x.weight).sum();
        let mut out = [FrozenSample::default(); FROZEN_SAMPLES];
        for (o, x) in out.iter_mut().zip(&all[..kept]) {
            *o = FrozenSample {
                weight: if sum > 0.0 {
                    x.weight * total / sum
                } else {
                    0.0
                },
                ..*x
            };
        }
        (out, kept as u8)
    }

    /// Region `r`'s weighted samples at `when` (weights as from [`Controller::weigh`]): target
    /// and live source players, frozen samples, and rest for an empty base-region producer; zero
    /// weights dropped, equal (clip, time) merged. Returns how many were written.
    pub(crate) fn samples(
        &self,
        s: &InstanceState,
        r: usize,
        weights: &[f32],
        out: &mut [FrozenSample],
        when: When,
    ) -> usize {
        let rs = &s.regions[r];
        let region = &self.tree.regions[r];
        let (offset, slots) = self.bank_slots(r);
        let alpha = rs.alpha();
        let mut n = 0;
        let mut add = |clip: u32, time: f32, weight: f32, n: &mut usize| {
            if weight <= 0.0 || *n >= out.len() {
                return;
            }
            if let Some(same) = out[..*n]
                .iter_mut()
                .find(|x| x.clip == clip && x.time.to_bits() == time.to_bits())
            {
                same.weight += weight;
            } else {
                out[*n] = FrozenSample { clip, time, weight };
                *n += 1;
            }
        };
        let base = r == 0;
        let mut bank = |b: usize, count: usize, state: u16, w: f32, n: &mut usize| {
            if base && region.states[state as usize].producer == Producer::Empty {
                add(REST, 0.0, w, n);
            }
            let first = offset + b * slots;
            for (p, &w) in s.players[first..first + count]
                .iter()
                .zip(&weights[first..first + count])
            {
                let time = match when {
                    When::Now => p.clip_time(),
                    When::Next => p.next_clip_time(),
                    When::Previous => p.previous_clip_time(),
                };
                add(p.clip, time as f32, w, n);
            }
        };
        bank(
            rs.bank as usize,
            rs.count as usize,
            rs.leaf(),
            alpha,
            &mut n,
        );
        match rs.source {
            Source::None => {}
            Source::Live { state, count } => bank(
                1 - rs.bank as usize,
                count as usize,
                state,
                1.0 - alpha,
                &mut n,
            ),
            Source::Frozen { samples, len } => {
                for x in &samples[..len as usize] {
                    add(x.clip, x.time, x.weight * (1.0 - alpha), &mut n);
                }
            }
        }
        n
    }

    /// Picks each sync group's leader (hysteresis on weight, ties to the first participant in
    /// player order) and marks the other participants as followers.
    fn choose_leaders(&self, s: &mut InstanceState, weights: &[f32], follower: &mut [bool]) {
        follower.iter_mut().for_each(|f| *f = false);
        for g in 0..self.tree.sync_groups.len() {
            let mut best: Option<(usize, f32)> = None;
            let mut current: Option<(usize, f32)> = None;
            self.for_each_participant(s, g as u16, |k| {
                let w = weights[k];
                if best.is_none_or(|(_, bw)| w > bw) {
                    best = Some((k, w));
                }
                if s.players[k].activation == s.leaders[g] {
                    current = Some((k, w));
                }
            });
            let leader = match (current, best) {
                (Some((k, w)), Some((_, bw))) if w > 0.0 && w + LEADER_HYSTERESIS >= bw => Some(k),
                (_, best) => best.map(|(k, _)| k),
            };
            s.leaders[g] = leader.map_or(0, |k| s.players[k].activation);
            self.for_each_participant(s, g as u16, |k| follower[k] = Some(k) != leader);
        }
    }

    /// Calls `f` with the slot of every live player in sync group `g`, in player order.
    fn for_each_participant(&self, s: &InstanceState, g: u16, mut f: impl FnMut(usize)) {
        for (r, rs) in s.regions.iter().enumerate() {
            let region = &self.tree.regions[r];
            let (offset, slots) = self.bank_slots(r);
            let mut banks = [(rs.bank as usize, rs.count as usize, rs.leaf()), (0, 0, 0)];
            if let Source::Live { state, count } = rs.source {
                banks[1] = (1 - rs.bank as usize, count as usize, state);
            }
            for (b, count, state) in banks {
                if region.states[state as usize].sync == Some(g) {
                    (offset + b * slots..offset + b * slots + count).for_each(&mut f);
                }
            }
        }
    }

    /// Advances every live player once (leaders and unsynced first, then followers), delivers
    /// events and blends the base region's root motion.
    fn advance(
        &self,
        s: &mut InstanceState,
        scratch: &mut Scratch,
        tick: u64,
        out: &mut TickOutput,
    ) -> Result<(), TickError> {
        let mut motion = MotionSum::default();
        scratch.laps = [0.0; MAX_SYNC_GROUPS];
        for pass_followers in [false, true] {
            for r in 0..s.regions.len() {
                let rs = &s.regions[r];
                let region = &self.tree.regions[r];
                let (offset, slots) = self.bank_slots(r);
                let mut banks = [(rs.bank as usize, rs.count as usize, rs.leaf()), (0, 0, 0)];
                if let Source::Live { state, count } = rs.source {
                    banks[1] = (1 - rs.bank as usize, count as usize, state);
                }
                for (b, count, state) in banks {
                    let st = &region.states[state as usize];
                    for k in offset + b * slots..offset + b * slots + count {
                        if scratch.follower[k] != pass_followers {
                            continue;
                        }
                        scratch.undo.players(s, k..k + 1);
                        let step = if pass_followers {
                            self.follow(s, k, st.sync, &scratch.laps)
                        } else {
                            s.players[k].advance()
                        };
                        let p = s.players[k];
                        let step = step.map_err(|source| TickError::Player {
                            region: region.name.clone(),
                            clip: p.clip,
                            source,
                        })?;
                        if let Some(g) = st.sync.filter(|_| !pass_followers) {
                            if s.leaders[g as usize] == p.activation {
                                scratch.laps[g as usize] =
                                    step.from.cycle.abs_diff(step.to.cycle).saturating_sub(1)
                                        as f64;
                            }
                        }
                        let w = scratch.weights[k];
                        if w > 0.0 && !pass_followers {
                            let stamp = Stamp {
                                tick,
                                instance: s.id,
                                region: r as u16,
                                activation: p.activation,
                                clip: p.clip,
                            };
                            deliver(&step, &self.tracks[p.clip as usize], stamp, &mut out.events)?;
                        }
                        if r == 0 {
                            motion.add(w, || self.player_motion(&step, p.clip, st.root_motion));
                        }
                    }
                }
            }
        }
        out.root_motion = motion.finish();
        Ok(())
    }

    /// One player's root motion this step under `policy`; identity without a trajectory.
    fn player_motion(&self, step: &Step, clip: u32, policy: RootMotionUse) -> Motion {
        if policy == RootMotionUse::Ignore {
            return IDENTITY;
        }
        let delta = self
            .clip(clip)
            .and_then(|c| step_motion(step, c))
            .unwrap_or(IDENTITY);
        match policy {
            RootMotionUse::Full => delta,
            RootMotionUse::Ignore => IDENTITY,
            RootMotionUse::Planar => {
                // Swing-twist: keep the twist about +Y (Dobrowolski, "Swing-twist decomposition
                // in Clifford algebra", 2015).
                let (t, q) = delta;
                let twist = Quat::from_xyzw(0.0, q.y, 0.0, q.w);
                let twist = if twist.length_squared() > 1e-12 {
                    twist.normalize()
                } else {
                    Quat::IDENTITY
                };
                (Vec3::new(t.x, 0.0, t.z), twist)
            }
        }
    }

    /// Moves follower slot `k` to its sync leader's phase (by markers, else normalised time).
    fn follow(
        &self,
        s: &mut InstanceState,
        k: usize,
        group: Option<u16>,
        laps: &[f64; MAX_SYNC_GROUPS],
    ) -> Result<Step, PlayerError> {
        let leader_activation = group.map_or(0, |g| s.leaders[g as usize]);
        let leader = s
            .players
            .iter()
            .find(|p| p.activation == leader_activation && leader_activation != 0)
            .copied();
        let Some(leader) = leader else {
            return s.players[k].advance();
        };
        let f = s.players[k];
        let (Some(lc), Some(fc)) = (self.clip(leader.clip), self.clip(f.clip)) else {
            return s.players[k].advance();
        };
        let target = follower_time(
            &lc.markers,
            lc.duration,
            leader.clip_time(),
            &fc.markers,
            fc.duration,
            f.clip_time(),
        );
        if f.ticks() == 0 {
            // Just entered: snap to the leader without events, then count the tick.
            s.players[k].seek(target)?;
            return s.players[k].advance_by(0.0);
        }
        let d = f.duration();
        let mut delta = target - f.clip_time();
        delta -= (delta / d).round() * d;
        let laps = group.map_or(0.0, |g| laps[g as usize]);
        let delta = if leader.rate() < 0.0 {
            delta - laps * d
        } else {
            delta + laps * d
        };
        let delta = if f.mode() == PlayMode::PingPong && f.position().cycle.rem_euclid(2) == 1 {
            -delta
        } else {
            delta
        };
        s.players[k].advance_by(delta)
    }

    /// The events' clip event names (for dumps and output), `None` for a completion.
    pub fn event_name(&self, clip: u32, kind: EventKind) -> Option<&str> {
        match kind {
            EventKind::Clip(i) => self
                .clip(clip)?
                .events
                .get(i as usize)
                .map(|e| e.name.as_str()),
            EventKind::Completed => None,
        }
    }
}

/// Weights of a producer's clips into `out` (one per clip), scaled by `scale`.
fn producer_weights(producer: &Producer, inputs: &[Value], out: &mut [f32], scale: f32) {
    match producer {
        Producer::Empty => {}
        Producer::Clip(_) => out[0] = scale,
        Producer::Blend1d { input, at, .. } => {
            let x = inputs.get(*input as usize).map_or(0.0, |v| v.as_f64());
            weights_1d(at, x, &mut out[..at.len()]);
            out[..at.len()].iter_mut().for_each(|w| *w *= scale);
        }
        Producer::Blend2d {
            x,
            y,
            points,
            triangles,
            ..
        } => {
            let v = |i: u16| inputs.get(i as usize).map_or(0.0, |v| v.as_f64());
            weights_2d(
                points,
                triangles,
                DVec2::new(v(*x), v(*y)),
                &mut out[..points.len()],
            );
            out[..points.len()].iter_mut().for_each(|w| *w *= scale);
        }
    }
}

/// The follower's clip time matching the leader's phase: the leader lies a fraction of the way
/// between two consecutive markers; the follower takes the same fraction between its markers of
/// the same two names (of several such pairs, the one nearest its current time). Without a
/// matching pair, normalised time: `leader / leader_duration * follower_duration`.
pub fn follower_time(
    leader_markers: &[SyncMarker],
    leader_duration: f64,
    leader_time: f64,
    markers: &[SyncMarker],
    duration: f64,
    current: f64,
) -> f64 {
    let normalised = if leader_duration > 0.0 {
        leader_time / leader_duration * duration
    } else {
        0.0
    };
    let Some((i, frac)) = segment(leader_markers, leader_duration, leader_time) else {
        return normalised;
    };
    let n = leader_markers.len();
    let (a, b) = (&leader_markers[i].name, &leader_markers[(i + 1) % n].name);
    let m = markers.len();
    let mut best: Option<(f64, f64)> = None;
    for j in 0..m {
        if &markers[j].name != a || &markers[(j + 1) % m].name != b {
            continue;
        }
        let start = markers[j].time;
        let mut end = markers[(j + 1) % m].time;
        if end <= start {
            end += duration;
        }
        let t = (start + frac * (end - start)).rem_euclid(duration.max(f64::MIN_POSITIVE));
        let mut gap = (t - current).abs();
        gap = gap.min(duration - gap);
        if best.is_none_or(|(g, _)| gap < g) {
            best = Some((gap, t));
        }
    }
    best.map_or(normalised, |(_, t)| t)
}

/// The marker segment (index of its first marker) holding `time`, and the fraction through it.
fn segment(markers: &[SyncMarker], duration: f64, time: f64) -> Option<(usize, f64)> {
    let n = markers.len();
    if n == 0 || duration <= 0.0 {
        return None;
    }
    let i = match markers.iter().rposition(|m| m.time <= time) {
        Some(i) => i,
        None => n - 1,
    };
    let start = markers[i].time;
    let mut end = markers[(i + 1) % n].time;
    if end <= start {
        end += duration;
    }
    let t = if time < start { time + duration } else { time };
    Some((i, ((t - start) / (end - start)).clamp(0.0, 1.0)))
}

/// Weighted blend of per-player root motions: translation the weighted mean, rotation the
/// normalised weighted sum aligned to the first one's hemisphere (as the pose Blend op does),
/// over the live players of the base region; frozen poses do not move.
#[derive(Default)]
struct MotionSum {
    t: Vec3,
    q: Vec4,
    first: Option<Vec4>,
    weight: f32,
}

impl MotionSum {
    /// Adds `motion()` with weight `w`; a weight <= 0 adds nothing and computes nothing.
    fn add(&mut self, w: f32, motion: impl FnOnce() -> Motion) {
        if w <= 0.0 {
            return;
        }
        let (t, q) = motion();
        let q = Vec4::from(q);
        let first = *self.first.get_or_insert(q);
        let q = if first.dot(q) < 0.0 { -q } else { q };
        self.t += t * w;
        self.q += q * w;
        self.weight += w;
    }

    fn finish(&self) -> Motion {
        if self.weight <= 0.0 || self.q.length_squared() < 1e-12 {
            return IDENTITY;
        }
        (self.t / self.weight, Quat::from_vec4(self.q.normalize()))
    }
}
