//! Retained instances: the crowd a runtime keeps from tick to tick (docs/gpu.md, "Retained
//! instances"), the same store for the CPU oracle and the GPU runtime.
//!
//! An instance is added once with its kind (a skeleton of a package, with or without a skin)
//! and placement, and then lives in a stable slot. What changes goes in when it changes: a
//! program when its static part changes (validated then, not every frame), its values
//! (`crate::values`: times and weights) and its placement every tick. Everything set is for the
//! next tick and takes effect at [`Instances::commit`]; a frame presents the last two committed
//! ticks at a fraction `alpha` between them (`crate::present`), so frames can be rendered at
//! any rate between ticks without touching control.
//!
//! Layout: per slot its committed program and where its values lie in the value arena (one
//! arena per tick, three kept: the two a frame blends and the one being set), its placement per
//! tick, and the ticks at which its program last changed and its placement last jumped (a
//! frame does not blend across either). The arenas keep each instance's values at one offset
//! while its program's value count stays the same, so a runtime uploads one contiguous array
//! per tick.

use glam::Affine3A;
use thiserror::Error;

use crate::frame::{BatchAssets, PackageId};
use crate::present::{present_linear, present_time, Placement};
use crate::program::op;
use crate::values::{map_values, same_static_ops, value_count, write_values, ValueKind};
use crate::{Clip, Program, ProgramError, ProgramLimits};

/// A retained instance: its frame slot, stable while it lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstanceId(pub u32);

/// What an instance is an instance of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kind {
    pub package: PackageId,
    pub skeleton: u32,
    /// Its skin, whose palette is built and whose meshes are skinned; `None` stops after FK.
    pub skin: Option<u32>,
}

/// How an instance shows in the frames from now on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Show {
    /// Posed from its program at its level of detail.
    #[default]
    Posed,
    /// Update-rate LOD: its slot keeps its last pose (the frame's placement still applies).
    Keep,
    /// Another tier draws it (an impostor card): not posed, bounded, skinned nor drawn.
    Hidden,
}

/// Why a retained call was refused; nothing changed.
#[derive(Debug, Error, PartialEq)]
pub enum RetainedError {
    #[error("no instance {0}: it was never added, or it was removed")]
    NoInstance(u32),
    #[error("all {0} instance slots are taken: declare a larger capacity")]
    Full(u32),
    #[error("instance {instance}: {source}")]
    Program { instance: u32, source: ProgramError },
    #[error("instance {instance}: {what}")]
    Bad { instance: u32, what: String },
}

/// What a value must hold (checked when it is set, as `Program::validate` checks the op).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Rule {
    #[default]
    /// A clip time: finite.
    Finite,
    /// A blend weight or an elapsed time: finite and >= 0.
    NonNegative,
    /// A layer weight: in [0, 1].
    Unit,
}

impl Rule {
    /// The closed range a value of the rule lies in (NaN lies in none).
    const RANGES: [(f32, f32); 3] = [(f32::MIN, f32::MAX), (0.0, f32::MAX), (0.0, 1.0)];

    fn holds(self, v: f32) -> bool {
        let (lo, hi) = Rule::RANGES[self as usize];
        lo <= v && v <= hi
    }
}

/// Writes the rule of each value of `ops`, in value order, into `out` (as long as its values).
fn rules(ops: &[crate::PoseOp], out: &mut [Rule]) {
    let mut k = 0;
    for o in ops {
        let (rule, n) = match o.code {
            op::SAMPLE => (Rule::Finite, 1),
            op::BLEND => (Rule::NonNegative, o.b as usize),
            op::OVERRIDE | op::ADDITIVE => (Rule::Unit, 1),
            op::INERTIALIZE => (Rule::NonNegative, 1),
            _ => continue,
        };
        for r in out.iter_mut().skip(k).take(n) {
            *r = rule;
        }
        k += n;
    }
}

/// No tick: a slot never set.
const NEVER: u32 = u32::MAX;

/// What every tick touches of a slot: where the next tick's values go (the pending program's
/// block, else the committed one's) and the ticks (low 32 bits) its values and placement were
/// last set for. Kept apart from [`Slot`], so a tick's pass over the crowd reads little.
#[derive(Clone, Copy, Debug, Default)]
struct Hot {
    offset: u32,
    count: u32,
    values_set: u32,
    placement_set: u32,
    live: bool,
    /// It has a program (committed or pending) to take values.
    program: bool,
    /// That program names an inertialization history slot.
    history: bool,
}

/// A slot's look word ([`Instances::looks`]): whether a frame shows it at all (live, born,
/// with a committed program or a hero palette), whether it is a hero, kept or hidden, and its
/// skeleton LOD level.
pub mod look {
    pub const SHOWN: u32 = 1 << 31;
    pub const HERO: u32 = 1 << 30;
    pub const KEEP: u32 = 1 << 29;
    pub const HIDDEN: u32 = 1 << 28;
    /// It has a committed program (a hero may too).
    pub const PROGRAM: u32 = 1 << 27;
    /// The level, in the low byte.
    pub const LEVEL: u32 = 0xff;
}

/// One slot.
#[derive(Clone, Debug, Default)]
struct Slot {
    /// `None`: a free slot.
    kind: Option<Kind>,
    /// The tick the instance first shows in (its first commit).
    born: u64,
    /// The committed program, and where its values lie in the arenas; `None` for a hero or an
    /// instance given no program yet.
    program: Option<Program>,
    offset: u32,
    count: u32,
    /// A program set for the next tick whose static part differs: its index in
    /// `Instances::pending`.
    pending: Option<usize>,
    level: u8,
    show: Show,
    /// A hero's palette (its program, if any, is not posed).
    hero: Option<Vec<Affine3A>>,
    /// Ticks at which its program's static part last changed and its placement last jumped.
    program_tick: u64,
    placement_tick: u64,
    /// The history slot its committed or pending program names.
    history: Option<u32>,
}

/// A program set for the next tick, with its place in the arenas.
#[derive(Clone, Debug, Default)]
struct Pending {
    slot: u32,
    program: Program,
    offset: u32,
    count: u32,
}

/// The retained instances of one runtime.
#[derive(Clone, Debug)]
pub struct Instances {
    limits: ProgramLimits,
    capacity: u32,
    slots: Vec<Slot>,
    hot: Vec<Hot>,
    looks: Vec<u32>,
    free: Vec<u32>,
    /// Committed ticks.
    tick: u64,
    /// Value arenas of ticks `t % 3`, the rules of the values of the next tick's layout, and
    /// free blocks by value count.
    values: [Vec<f32>; 3],
    rules: Vec<Rule>,
    free_values: Vec<Vec<u32>>,
    /// Placements of ticks `t % 3`, by slot.
    placements: [Vec<Placement>; 3],
    pending: Vec<Pending>,
    /// Per history slot, the instance whose program names it.
    history: Vec<u32>,
    /// Slots whose program's static part or kind the last commit changed.
    changed: Vec<u32>,
    /// Counts changes of a level, show, hero palette's presence or kind (add, remove).
    shown: u64,
    /// Slots whose static part changed since the last commit (moved to `changed` by it).
    changing: Vec<u32>,
    /// Scratch of [`Instances::set_program_parts`].
    scratch: Program,
    /// Programs replaced at a commit, whose buffers the next pending programs reuse.
    spare: Vec<Program>,
}

/// Most values one program may have (a program's values are its times and weights, so at most
/// `max_ops + max_weights` of [`ProgramLimits`]).
pub const MAX_VALUES: usize = 128;

const NO_OWNER: u32 = u32::MAX;

impl Instances {
    /// Room for `capacity` instances whose programs fit `limits` (history slots included).
    pub fn new(limits: ProgramLimits, capacity: u32) -> Instances {
        Instances {
            limits,
            capacity,
            slots: Vec::new(),
            hot: Vec::new(),
            looks: Vec::new(),
            free: Vec::new(),
            tick: 0,
            values: Default::default(),
            rules: Vec::new(),
            free_values: Vec::new(),
            placements: Default::default(),
            pending: Vec::new(),
            history: vec![NO_OWNER; limits.history_slots],
            changed: Vec::new(),
            shown: 0,
            changing: Vec::new(),
            scratch: Program::default(),
            spare: Vec::new(),
        }
    }

    pub fn limits(&self) -> &ProgramLimits {
        &self.limits
    }

    /// Committed ticks: frames present ticks `tick - 1` and `tick`.
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// Slots in use or once used: frame slots run `0 .. slots()`.
    pub fn slots(&self) -> u32 {
        self.slots.len() as u32
    }

    /// Live instances.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn slot(&self, id: InstanceId) -> Result<&Slot, RetainedError> {
        self.slots
            .get(id.0 as usize)
            .filter(|s| s.kind.is_some())
            .ok_or(RetainedError::NoInstance(id.0))
    }

    fn slot_mut(&mut self, id: InstanceId) -> Result<&mut Slot, RetainedError> {
        self.slots
            .get_mut(id.0 as usize)
            .filter(|s| s.kind.is_some())
            .ok_or(RetainedError::NoInstance(id.0))
    }

    /// The pose `view` shows as in a frame of batches, its program presented as `program`.
    pub fn pose<'a>(view: &SlotView<'a>, program: &'a Program) -> crate::Pose<'a> {
        match (view.hero, view.show) {
            (Some(palette), _) => crate::Pose::Hero(palette),
            (None, Show::Hidden) => crate::Pose::Hidden,
            (None, Show::Keep) => crate::Pose::Keep,
            (None, Show::Posed) if view.level > 0 => crate::Pose::Lod(program, view.level),
            (None, Show::Posed) => crate::Pose::Program(program),
        }
    }

    /// Whether the instance's program (set for the next tick, or committed) names an
    /// inertialization history slot: it must show at skeleton LOD 0.
    pub fn history(&self, id: InstanceId) -> bool {
        (self.hot.get(id.0 as usize)).is_some_and(|h| h.live && h.history)
    }

    /// Whether the instance's committed program captures inertialization history: a frame must
    /// pose it (a later one reads what it writes).
    pub fn captures(&self, id: InstanceId) -> bool {
        self.slot(id)
            .ok()
            .and_then(|s| s.program.as_ref())
            .is_some_and(|p| p.ops.iter().any(|o| o.code == op::CAPTURE))
    }

    /// The instance's skeleton LOD level (0 for an unknown one).
    pub fn level(&self, id: InstanceId) -> u8 {
        self.slot(id).map_or(0, |s| s.level)
    }

    /// The instance's kind.
    pub fn kind(&self, id: InstanceId) -> Option<Kind> {
        self.slot(id).ok().and_then(|s| s.kind)
    }

    /// Adds an instance of `kind` (already checked against its package) placed at `placement`
    /// (a similarity: [`Placement::from_affine`]); it shows from the next commit on, once it
    /// has a program (or a hero palette).
    pub fn add(&mut self, kind: Kind, placement: &Affine3A) -> Result<InstanceId, RetainedError> {
        let next = self.free.last().copied().unwrap_or(self.slots.len() as u32);
        let p = Placement::from_affine(placement).ok_or_else(|| RetainedError::Bad {
            instance: next,
            what: "its placement is not a similarity (a rotation, a uniform positive scale and \
                   a translation, finite)"
                .into(),
        })?;
        let id = match self.free.pop() {
            Some(s) => s,
            None if self.slots.len() as u32 >= self.capacity => {
                return Err(RetainedError::Full(self.capacity));
            }
            None => {
                self.slots.push(Slot::default());
                self.hot.push(Hot::default());
                self.looks.push(0);
                for ps in &mut self.placements {
                    ps.push(Placement::default());
                }
                self.slots.len() as u32 - 1
            }
        };
        let pending = self.tick + 1;
        self.slots[id as usize] = Slot {
            kind: Some(kind),
            born: pending,
            program_tick: pending,
            placement_tick: pending,
            ..Slot::default()
        };
        self.hot[id as usize] = Hot {
            values_set: NEVER,
            placement_set: pending as u32,
            live: true,
            ..Hot::default()
        };
        self.looks[id as usize] = 0;
        self.placements[(pending % 3) as usize][id as usize] = p;
        self.changing.push(id);
        self.shown += 1;
        Ok(InstanceId(id))
    }

    /// Removes an instance at once (its slot is free for the next [`Instances::add`]).
    pub fn remove(&mut self, id: InstanceId) -> Result<(), RetainedError> {
        let slot = self.slot_mut(id)?;
        let (offset, count, history) = (slot.offset, slot.count, slot.history);
        let pending = slot.pending.take();
        let had = slot.program.is_some();
        *slot = Slot::default();
        self.hot[id.0 as usize] = Hot::default();
        self.looks[id.0 as usize] = 0;
        if had {
            self.free_block(offset, count);
        }
        if let Some(p) = pending {
            let (o, c) = (self.pending[p].offset, self.pending[p].count);
            self.pending[p].slot = NO_OWNER;
            self.free_block(o, c);
        }
        if let Some(h) = history {
            self.history[h as usize] = NO_OWNER;
        }
        self.free.push(id.0);
        self.changing.push(id.0);
        self.shown += 1;
        Ok(())
    }

    fn free_block(&mut self, offset: u32, count: u32) {
        if count == 0 {
            return;
        }
        let c = count as usize;
        if self.free_values.len() <= c {
            self.free_values.resize_with(c + 1, Vec::new);
        }
        self.free_values[c].push(offset);
    }

    fn alloc_block(&mut self, count: u32) -> u32 {
        if let Some(o) = self.free_values.get_mut(count as usize).and_then(Vec::pop) {
            return o;
        }
        let offset = self.values[0].len() as u32;
        for v in &mut self.values {
            v.resize(v.len() + count as usize, 0.0);
        }
        self.rules.resize(self.values[0].len(), Rule::default());
        offset
    }

    /// Sets the instance's program for the next tick, checked against `assets` (its kind's).
    /// Returns whether its static part changed: when it did not (its values alone changing is
    /// the common case), only its values are checked and stored; when it did, the program is
    /// validated as a frame validates it, its history slot its own, and one that captures or
    /// inertializes brings the instance to skeleton LOD 0 (history needs every joint).
    pub fn set_program(
        &mut self,
        id: InstanceId,
        program: &Program,
        assets: &BatchAssets,
    ) -> Result<bool, RetainedError> {
        self.set_program_parts(id, &program.ops, &program.weights, assets)
    }

    /// [`Instances::set_program`] of a program given as its ops and weight pool (as control's
    /// program buffer holds it), without building one.
    pub fn set_program_parts(
        &mut self,
        id: InstanceId,
        ops: &[crate::PoseOp],
        weights: &[f32],
        assets: &BatchAssets,
    ) -> Result<bool, RetainedError> {
        let slot = self.slot(id)?;
        let current = match slot.pending {
            Some(p) => Some(&self.pending[p].program),
            None => slot.program.as_ref(),
        };
        if current.is_some_and(|c| same_static_ops(&c.ops, c.weights.len(), ops, weights.len())) {
            if value_count(ops) > MAX_VALUES {
                return Err(RetainedError::Bad {
                    instance: id.0,
                    what: format!("its program has more than {MAX_VALUES} values"),
                });
            }
            let mut values = [0.0f32; MAX_VALUES];
            let n = write_values(ops, weights, &mut values);
            self.set_values(id, &values[..n])?;
            return Ok(false);
        }
        let program = &mut self.scratch;
        program.ops.clear();
        program.ops.extend_from_slice(ops);
        program.weights.clear();
        program.weights.extend_from_slice(weights);
        let program = std::mem::take(&mut self.scratch);
        let changed = self.set_new_program(id, &program, assets);
        self.scratch = program;
        changed.map(|()| true)
    }

    /// A program whose static part differs from the instance's: validated, then pending.
    fn set_new_program(
        &mut self,
        id: InstanceId,
        program: &Program,
        assets: &BatchAssets,
    ) -> Result<(), RetainedError> {
        let slot = self.slot(id)?;
        let bad = |what: String| RetainedError::Bad {
            instance: id.0,
            what,
        };
        program
            .validate(&self.limits, &assets.assets)
            .map_err(|source| RetainedError::Program {
                instance: id.0,
                source,
            })?;
        if !program.ops.iter().any(|o| o.code == op::TO_COMPONENT) {
            return Err(bad(
                "program has no ToComponent, so it names no final pose".into()
            ));
        }
        let history = program.history_slot();
        if let Some(h) = history {
            let owner = self.history[h as usize];
            if owner != NO_OWNER && owner != id.0 {
                return Err(bad(format!(
                    "history slot {h} is already named by instance {owner}; give each instance \
                     its own slot"
                )));
            }
        }
        let next = ((self.tick + 1) % 3) as usize;
        // A new static part: new arena room when the value count changes.
        let count = value_count(&program.ops) as u32;
        let (old_offset, old_count, old_pending, old_history) =
            (slot.offset, slot.count, slot.pending, slot.history);
        let had = slot.program.is_some();
        let offset = match old_pending {
            Some(p) if self.pending[p].count == count => self.pending[p].offset,
            Some(p) => {
                let (o, c) = (self.pending[p].offset, self.pending[p].count);
                self.free_block(o, c);
                self.alloc_block(count)
            }
            None if had && old_count == count => old_offset,
            None => self.alloc_block(count),
        };
        // The committed block stays the committed program's until the commit; it is freed then.
        write_values(
            &program.ops,
            &program.weights,
            &mut self.values[next][offset as usize..(offset + count) as usize],
        );
        let p = match old_pending {
            Some(p) => p,
            None => {
                let program = self.spare.pop().unwrap_or_default();
                self.pending.push(Pending {
                    program,
                    ..Pending::default()
                });
                self.pending.len() - 1
            }
        };
        self.pending[p].slot = id.0;
        self.pending[p].program.clone_from(program);
        self.pending[p].offset = offset;
        self.pending[p].count = count;
        if let Some(h) = old_history.filter(|&h| Some(h) != history) {
            self.history[h as usize] = NO_OWNER;
        }
        if let Some(h) = history {
            self.history[h as usize] = id.0;
        }
        let s = &mut self.slots[id.0 as usize];
        s.pending = Some(p);
        s.history = history;
        // History needs every joint: such a program shows at level 0.
        if history.is_some() && s.level > 0 {
            s.level = 0;
            self.looks[id.0 as usize] &= !look::LEVEL;
            self.shown += 1;
        }
        self.hot[id.0 as usize] = Hot {
            offset,
            count,
            values_set: (self.tick + 1) as u32,
            program: true,
            history: history.is_some(),
            ..self.hot[id.0 as usize]
        };
        rules(
            &program.ops,
            &mut self.rules[offset as usize..(offset + count) as usize],
        );
        self.changing.push(id.0);
        Ok(())
    }

    /// Sets the instance's program values for the next tick (`crate::values` order; as many
    /// as its program has, each in its op's range).
    pub fn set_values(&mut self, id: InstanceId, values: &[f32]) -> Result<(), RetainedError> {
        let tick = self.tick + 1;
        let hot = self
            .hot
            .get(id.0 as usize)
            .filter(|h| h.live)
            .ok_or(RetainedError::NoInstance(id.0))?;
        let bad = |what: String| RetainedError::Bad {
            instance: id.0,
            what,
        };
        if !hot.program {
            return Err(bad(
                "it has no program to set values of: set its program first".into(),
            ));
        }
        let (offset, count) = (hot.offset as usize, hot.count as usize);
        if values.len() != count {
            return Err(bad(format!(
                "{} values given; its program has {count}",
                values.len()
            )));
        }
        let rules = &self.rules[offset..offset + count];
        // Every value checked without an early exit (the common case holds), so the loop
        // has no branch per value.
        let holds = (rules.iter().zip(values)).fold(true, |ok, (r, &v)| ok & r.holds(v));
        if let (false, Some(k)) = (
            holds,
            (rules.iter().zip(values)).position(|(r, &v)| !r.holds(v)),
        ) {
            return Err(bad(format!(
                "value {k} is {}, outside its op's range",
                values[k]
            )));
        }
        let next = (tick % 3) as usize;
        // Only the arena holds values: a program's own are replaced whenever it is presented.
        self.values[next][offset..offset + count].copy_from_slice(values);
        self.hot[id.0 as usize].values_set = tick as u32;
        Ok(())
    }

    /// Sets the instance's placement for the next tick (a similarity). `jump`: do not blend
    /// from the last one (a teleport).
    pub fn set_placement(
        &mut self,
        id: InstanceId,
        placement: &Affine3A,
        jump: bool,
    ) -> Result<(), RetainedError> {
        let p = Placement::from_affine(placement).ok_or_else(|| RetainedError::Bad {
            instance: id.0,
            what: "its placement is not a similarity (a rotation, a uniform positive scale and \
                   a translation, finite)"
                .into(),
        })?;
        self.set_similarity(id, p, jump)
    }

    /// [`Instances::set_placement`] of a similarity (finite, scale > 0, unit rotation).
    pub fn set_similarity(
        &mut self,
        id: InstanceId,
        p: Placement,
        jump: bool,
    ) -> Result<(), RetainedError> {
        if !(p.translation.is_finite()
            && p.rotation.is_finite()
            && p.scale > 0.0
            && p.scale.is_finite())
        {
            return Err(RetainedError::Bad {
                instance: id.0,
                what: "its placement is not finite, or its scale not positive".into(),
            });
        }
        let tick = self.tick + 1;
        let hot = (self.hot.get_mut(id.0 as usize))
            .filter(|h| h.live)
            .ok_or(RetainedError::NoInstance(id.0))?;
        hot.placement_set = tick as u32;
        if jump {
            self.slots[id.0 as usize].placement_tick = tick;
            self.changing.push(id.0);
        }
        self.placements[(tick % 3) as usize][id.0 as usize] = p;
        Ok(())
    }

    /// Shows the instance at skeleton LOD `level` (checked against `assets`) from now on.
    pub fn set_level(
        &mut self,
        id: InstanceId,
        level: u8,
        assets: &BatchAssets,
    ) -> Result<(), RetainedError> {
        // The look word holds the level: most calls change nothing and read no more.
        if (self.hot.get(id.0 as usize)).is_some_and(|h| h.live)
            && self.looks[id.0 as usize] & look::LEVEL == u32::from(level)
        {
            return Ok(());
        }
        let slot = self.slot(id)?;
        let levels = assets.assets.skeleton.lods.len();
        let bad = |what: String| RetainedError::Bad {
            instance: id.0,
            what,
        };
        if level as usize > levels {
            return Err(bad(format!(
                "asks for skeleton LOD {level}, but the skeleton has levels 0 to {levels}"
            )));
        }
        if level > 0 && slot.history.is_some() {
            return Err(bad(format!(
                "asks for skeleton LOD {level}, but its program captures or inertializes, \
                 which needs every joint; give it level 0"
            )));
        }
        self.slots[id.0 as usize].level = level;
        let l = &mut self.looks[id.0 as usize];
        *l = (*l & !look::LEVEL) | u32::from(level);
        self.shown += 1;
        Ok(())
    }

    /// How the instance shows from now on.
    pub fn set_show(&mut self, id: InstanceId, show: Show) -> Result<(), RetainedError> {
        let slot = self.slot_mut(id)?;
        if slot.show != show {
            slot.show = show;
            let l = &mut self.looks[id.0 as usize];
            *l &= !(look::KEEP | look::HIDDEN);
            *l |= match show {
                Show::Posed => 0,
                Show::Keep => look::KEEP,
                Show::Hidden => look::HIDDEN,
            };
            self.shown += 1;
        }
        Ok(())
    }

    /// Makes the instance a hero from now on: its palette (one finite entry per entry of its
    /// kind's skin, checked against `assets`) is the pose it shows; `None` makes it a posed
    /// instance again.
    pub fn set_hero(
        &mut self,
        id: InstanceId,
        palette: Option<&[Affine3A]>,
        assets: &BatchAssets,
    ) -> Result<(), RetainedError> {
        let bad = |what: String| RetainedError::Bad {
            instance: id.0,
            what,
        };
        if let Some(palette) = palette {
            let Some((_, skin)) = assets.skin else {
                return Err(bad("a hero needs a kind with a skin".into()));
            };
            if palette.len() != skin.joints.len() {
                return Err(bad(format!(
                    "hero palette has {} entries; the kind's skin has {}",
                    palette.len(),
                    skin.joints.len()
                )));
            }
            if !palette
                .iter()
                .all(|m| m.matrix3.is_finite() && m.translation.is_finite())
            {
                return Err(bad("hero palette is not finite".into()));
            }
        }
        let slot = self.slot_mut(id)?;
        let was = slot.hero.is_some();
        match (palette, &mut slot.hero) {
            (Some(p), Some(h)) => {
                h.clear();
                h.extend_from_slice(p);
            }
            (Some(p), h) => *h = Some(p.to_vec()),
            (None, h) => *h = None,
        }
        if was != palette.is_some() {
            self.shown += 1;
        }
        self.refresh_look(id.0);
        Ok(())
    }

    /// Ends the tick being set: what was set for it becomes the last committed tick, the tick
    /// before it the one frames blend from. Values and placements not set for it keep the last
    /// tick's.
    pub fn commit(&mut self) {
        let next = self.tick + 1;
        let cur = (self.tick % 3) as usize;
        let (from, to) = consecutive(&mut self.values, cur);
        let (pfrom, pto) = consecutive(&mut self.placements, cur);
        let stamp = next as u32;
        for (i, h) in self.hot.iter().enumerate() {
            if !h.live {
                continue;
            }
            if h.values_set != stamp && h.program {
                let r = h.offset as usize..(h.offset + h.count) as usize;
                to[r.clone()].copy_from_slice(&from[r]);
            }
            if h.placement_set != stamp {
                pto[i] = pfrom[i];
            }
        }
        for p in self.pending.drain(..) {
            let Some(s) = self
                .slots
                .get_mut(p.slot as usize)
                .filter(|s| s.kind.is_some())
            else {
                continue;
            };
            if s.program.is_some() && (s.offset, s.count) != (p.offset, p.count) {
                let (o, c) = (s.offset, s.count);
                let c = c as usize;
                if self.free_values.len() <= c {
                    self.free_values.resize_with(c + 1, Vec::new);
                }
                if c > 0 {
                    self.free_values[c].push(o);
                }
            }
            if let Some(old) = s.program.replace(p.program) {
                self.spare.push(old);
            }
            s.offset = p.offset;
            s.count = p.count;
            s.pending = None;
            s.program_tick = next;
        }
        std::mem::swap(&mut self.changed, &mut self.changing);
        self.changing.clear();
        self.changed.sort_unstable();
        self.changed.dedup();
        self.tick = next;
        // Born instances and new programs show from this tick.
        for k in 0..self.changed.len() {
            self.refresh_look(self.changed[k]);
        }
    }

    /// Slot `slot`'s look word from its state.
    fn refresh_look(&mut self, slot: u32) {
        let Some(s) = self.slots.get(slot as usize) else {
            return;
        };
        let mut l = u32::from(s.level);
        if s.kind.is_some() && s.born <= self.tick {
            if s.program.is_some() {
                l |= look::PROGRAM;
            }
            if s.hero.is_some() {
                l |= look::HERO;
            }
            if l & (look::PROGRAM | look::HERO) != 0 {
                l |= look::SHOWN;
            }
        }
        l |= match s.show {
            Show::Posed => 0,
            Show::Keep => look::KEEP,
            Show::Hidden => look::HIDDEN,
        };
        self.looks[slot as usize] = l;
    }

    /// Per slot its look word ([`look`]): what a frame shows of it, in one word a runtime
    /// scans each tick.
    pub fn looks(&self) -> &[u32] {
        &self.looks
    }

    /// Slots whose static part (program, kind) the last commit changed, ascending.
    pub fn changed(&self) -> &[u32] {
        &self.changed
    }

    /// Changes with every change of a level, show, hero's presence or kind (an instance added
    /// or removed): what a runtime keeps per slot besides programs.
    pub fn shown_generation(&self) -> u64 {
        self.shown
    }

    /// The value arena of the last committed tick (what a runtime uploads per tick).
    pub fn committed_values(&self) -> &[f32] {
        &self.values[(self.tick % 3) as usize]
    }

    /// The placements of the last committed tick, by slot.
    pub fn committed_placements(&self) -> &[Placement] {
        &self.placements[(self.tick % 3) as usize]
    }

    /// The value arena of the tick before the last committed one.
    pub fn values_before(&self) -> &[f32] {
        &self.values[((self.tick + 2) % 3) as usize]
    }

    /// The placements of the tick before the last committed one.
    pub fn placements_before(&self) -> &[Placement] {
        &self.placements[((self.tick + 2) % 3) as usize]
    }

    /// What a frame presents of slot `slot`, if anything: its kind, program (committed), level,
    /// show and hero palette.
    pub fn view(&self, slot: u32) -> Option<SlotView<'_>> {
        let s = self.slots.get(slot as usize)?;
        let kind = s.kind?;
        if s.born > self.tick {
            return None;
        }
        Some(SlotView {
            kind,
            program: s.program.as_ref().filter(|_| s.program_tick <= self.tick),
            level: s.level,
            show: s.show,
            hero: s.hero.as_deref(),
            offset: s.offset,
            count: s.count,
            fresh_program: s.program_tick >= self.tick,
            fresh_placement: s.placement_tick >= self.tick,
        })
    }

    /// Slot `slot`'s program presented at `alpha` between the last two ticks into `out` (its
    /// committed program with blended values; clip durations from `clips`); false when it
    /// has none.
    pub fn present_program(
        &self,
        slot: u32,
        alpha: f32,
        clips: &[Clip],
        out: &mut Program,
    ) -> bool {
        let Some(v) = self.view(slot) else {
            return false;
        };
        let Some(program) = v.program else {
            return false;
        };
        out.clone_from(program);
        let (cur, prev) = self.value_slices(&v);
        let ops = &program.ops;
        map_values(out, |k, i, kind, _| {
            let (p, c) = (
                prev.get(k).copied().unwrap_or(0.0),
                cur.get(k).copied().unwrap_or(0.0),
            );
            match kind {
                ValueKind::Time => {
                    let clip = ops[i].a as usize;
                    let d = clips.get(clip).map_or(0.0, |c| c.duration as f32);
                    present_time(p, c, alpha, d)
                }
                ValueKind::Linear => present_linear(p, c, alpha),
            }
        });
        true
    }

    /// The committed values of a slot's last tick and of the tick before (the last one's when
    /// its program changed at the last tick).
    fn value_slices(&self, v: &SlotView) -> (&[f32], &[f32]) {
        let r = v.offset as usize..(v.offset + v.count) as usize;
        let cur = &self.values[(self.tick % 3) as usize][r.clone()];
        let prev = if v.fresh_program || self.tick == 0 {
            cur
        } else {
            &self.values[((self.tick + 2) % 3) as usize][r]
        };
        (cur, prev)
    }

    /// Slot `slot`'s placement presented at `alpha` between the last two ticks.
    pub fn present_placement(&self, slot: u32, alpha: f32) -> Affine3A {
        let i = slot as usize;
        let cur = self.placements[(self.tick % 3) as usize]
            .get(i)
            .copied()
            .unwrap_or_default();
        let fresh = self.view(slot).is_none_or(|v| v.fresh_placement) || self.tick == 0;
        let prev = if fresh {
            cur
        } else {
            self.placements[((self.tick + 2) % 3) as usize][i]
        };
        Placement::present(&prev, &cur, alpha).to_affine()
    }

    /// Maximal runs of consecutive slots shown this tick (with a program or a hero palette) of
    /// one kind: `(kind, first slot, count)`, in slot order (how both runtimes group a presented
    /// frame into batches).
    pub fn runs(&self, out: &mut Vec<(Kind, u32, u32)>) {
        out.clear();
        for slot in 0..self.slots() {
            let Some(v) = self
                .view(slot)
                .filter(|v| v.program.is_some() || v.hero.is_some())
            else {
                continue;
            };
            match out.last_mut() {
                Some((k, first, n)) if *k == v.kind && *first + *n == slot => *n += 1,
                _ => out.push((v.kind, slot, 1)),
            }
        }
    }
}

/// Tick `t`'s entry of a three-tick ring (`t % 3 == cur`) and tick `t + 1`'s.
fn consecutive<T>(ring: &mut [T; 3], cur: usize) -> (&T, &mut T) {
    let [a, b, c] = ring;
    match cur {
        0 => (a, b),
        1 => (b, c),
        _ => (c, a),
    }
}

/// What a frame presents of one slot.
#[derive(Clone, Copy, Debug)]
pub struct SlotView<'a> {
    pub kind: Kind,
    /// Its committed program (`None`: a hero, or none set yet).
    pub program: Option<&'a Program>,
    pub level: u8,
    pub show: Show,
    pub hero: Option<&'a [Affine3A]>,
    /// Its values in the arenas.
    pub offset: u32,
    pub count: u32,
    /// Its program's static part changed, or its placement jumped, at the last tick: a frame
    /// shows that tick's, not a blend.
    pub fresh_program: bool,
    pub fresh_placement: bool,
}
