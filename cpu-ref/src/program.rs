//! Pose programs: the CPU→evaluator contract (DESIGN.md §4).
//!
//! A program is a short linear list of [`PoseOp`]s over a small register file of local poses,
//! plus a pool of blend weights. Ops are plain 32-byte records (`bytemuck::Pod`) so the GPU
//! consumes exactly the bytes the CPU interpreter runs. A program is checked by
//! [`Program::validate`] against the assets it names before it is run.

use bytemuck::{Pod, Zeroable};
use thiserror::Error;

use crate::inertialize::{MAX_INERTIALIZATION, MIN_CAPTURE_INTERVAL};
use crate::{Clip, Skeleton, SkinBinding};

/// No mask: every joint weighs 1.
pub const NO_MASK: u32 = u32::MAX;

/// Op codes of [`PoseOp::code`].
pub mod op {
    /// `dst = rest pose`.
    pub const REST: u32 = 1;
    /// `dst = sample(clip = a, time)`.
    pub const SAMPLE: u32 = 2;
    /// `dst = blend(registers a .. a + b, weights[c .. c + b])`.
    pub const BLEND: u32 = 3;
    /// `dst moves toward register a by weight * mask[c][j]`.
    pub const OVERRIDE: u32 = 4;
    /// `dst = dst (+) weight * mask[c][j] * (register a relative to reference register b)`.
    pub const ADDITIVE: u32 = 5;
    /// Forward kinematics of register a into the component pose.
    pub const TO_COMPONENT: u32 = 6;
    /// Palette of skin a from the component pose.
    pub const PALETTE: u32 = 7;
    /// History slot c = offset of register a (the source) from dst (the destination), with its
    /// velocity from register b (the previous source) and register d (the previous destination)
    /// `weight` seconds earlier ([`crate::inertialize`]).
    pub const CAPTURE: u32 = 8;
    /// `dst = dst + the offset in history slot c, decayed to time (seconds since its capture) of
    /// weight (the decay's duration)`.
    pub const INERTIALIZE: u32 = 9;
}

/// One pose operation. Field meaning depends on `code` (see [`op`] and the constructors).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct PoseOp {
    pub code: u32,
    /// Register written (local-pose ops).
    pub dst: u32,
    /// Sample: clip index. Blend: first input register. Override / Additive: source register.
    /// ToComponent: register to convert. Palette: skin index.
    pub a: u32,
    /// Blend: input count. Additive: reference register.
    pub b: u32,
    /// Blend: offset into the weight pool. Override / Additive: mask index or [`NO_MASK`].
    /// Capture / Inertialize: history slot.
    pub c: u32,
    /// Capture: the previous-destination register. Override / Additive: the curve selection,
    /// [`crate::scalar::ALL_CURVES`] (0) or selection `d - 1` of the package's curves.
    pub d: u32,
    /// Override / Additive weight in [0, 1]. Capture: seconds between the previous and current
    /// samples (at least [`crate::inertialize::MIN_CAPTURE_INTERVAL`]). Inertialize: the decay's
    /// duration in seconds (0 to [`crate::inertialize::MAX_INERTIALIZATION`]).
    pub weight: f32,
    /// Sample: clip time in seconds (clamped to [0, duration]). Inertialize: seconds since the
    /// capture (>= 0).
    pub time: f32,
}

impl PoseOp {
    fn new(code: u32, dst: u32, a: u32, b: u32, c: u32, weight: f32, time: f32) -> Self {
        PoseOp {
            code,
            dst,
            a,
            b,
            c,
            d: 0,
            weight,
            time,
        }
    }
    pub fn rest(dst: u32) -> Self {
        Self::new(op::REST, dst, 0, 0, 0, 0.0, 0.0)
    }
    pub fn sample(dst: u32, clip: u32, time: f32) -> Self {
        Self::new(op::SAMPLE, dst, clip, 0, 0, 0.0, time)
    }
    /// Blends registers `first .. first + count` with weights `weights[weight_offset ..]`.
    pub fn blend(dst: u32, first: u32, count: u32, weight_offset: u32) -> Self {
        Self::new(op::BLEND, dst, first, count, weight_offset, 0.0, 0.0)
    }
    /// An override layer on every curve its source animates ([`PoseOp::with_curves`] names a
    /// curve selection).
    pub fn overriding(dst: u32, src: u32, weight: f32, mask: u32) -> Self {
        Self::new(op::OVERRIDE, dst, src, 0, mask, weight, 0.0)
    }
    /// An additive layer on every curve its source animates ([`PoseOp::with_curves`]).
    pub fn additive(dst: u32, src: u32, reference: u32, weight: f32, mask: u32) -> Self {
        Self::new(op::ADDITIVE, dst, src, reference, mask, weight, 0.0)
    }
    /// This Override or Additive op moving only curve selection `selection`'s curves (by its
    /// weights).
    pub fn with_curves(self, selection: u32) -> Self {
        PoseOp {
            d: selection.saturating_add(1),
            ..self
        }
    }
    pub fn to_component(src: u32) -> Self {
        Self::new(op::TO_COMPONENT, 0, src, 0, 0, 0.0, 0.0)
    }
    pub fn palette(skin: u32) -> Self {
        Self::new(op::PALETTE, 0, skin, 0, 0, 0.0, 0.0)
    }
    /// Captures into history `slot` the offset of `source` from `destination`, its velocity
    /// from `previous` and `previous_destination`, sampled `dt` seconds earlier.
    pub fn capture(
        destination: u32,
        source: u32,
        previous: u32,
        previous_destination: u32,
        slot: u32,
        dt: f32,
    ) -> Self {
        PoseOp {
            d: previous_destination,
            ..Self::new(op::CAPTURE, destination, source, previous, slot, dt, 0.0)
        }
    }
    /// Adds history `slot`'s offset to `dst`, decayed to `elapsed` seconds of `duration`.
    pub fn inertialize(dst: u32, slot: u32, elapsed: f32, duration: f32) -> Self {
        Self::new(op::INERTIALIZE, dst, 0, 0, slot, duration, elapsed)
    }
}

/// Capacities a program must fit; evaluator scratch is sized from them once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramLimits {
    pub max_ops: usize,
    pub max_registers: usize,
    pub max_weights: usize,
    /// Inertialization history slots (`Capture` / `Inertialize` name one below this).
    pub history_slots: usize,
}

impl Default for ProgramLimits {
    fn default() -> Self {
        ProgramLimits {
            max_ops: 32,
            max_registers: 8,
            max_weights: 32,
            history_slots: 0,
        }
    }
}

/// A pose program for one instance.
#[derive(Debug, Default, PartialEq)]
pub struct Program {
    pub ops: Vec<PoseOp>,
    /// Blend weight pool, indexed by `Blend` ops.
    pub weights: Vec<f32>,
}

impl Clone for Program {
    fn clone(&self) -> Program {
        Program {
            ops: self.ops.clone(),
            weights: self.weights.clone(),
        }
    }

    /// Reuses `self`'s buffers (the derived one would allocate anew).
    fn clone_from(&mut self, source: &Program) {
        self.ops.clone_from(&source.ops);
        self.weights.clone_from(&source.weights);
    }
}

/// A per-joint weight in [0, 1] for one skeleton of a package, used by Override and Additive.
/// Masks live in [`crate::Package::masks`]; a program names one by its index there.
#[derive(Clone, Debug, PartialEq)]
pub struct Mask {
    pub name: String,
    /// Index of the skeleton in the package; `weights` has one entry per joint of it.
    pub skeleton: u32,
    pub weights: Vec<f32>,
}

/// Why a program cannot run. `op` is the index of the offending op.
#[derive(Debug, Error, PartialEq)]
pub enum ProgramError {
    #[error("program has {count} {what}, more than the limit of {limit}")]
    Capacity {
        what: &'static str,
        count: usize,
        limit: usize,
    },
    #[error("op {op}: unknown op code {code}")]
    UnknownOp { op: usize, code: u32 },
    #[error("op {op}: register {register} is outside the register file of {limit}")]
    Register {
        op: usize,
        register: u32,
        limit: usize,
    },
    #[error("op {op}: register {register} is read before any op writes it")]
    Unwritten { op: usize, register: u32 },
    #[error("op {op}: clip {clip} does not exist (the package has {count} clips)")]
    MissingClip { op: usize, clip: u32, count: usize },
    #[error("op {op}: clip {clip} was cooked for another skeleton")]
    ClipSkeleton { op: usize, clip: u32 },
    #[error("op {op}: mask {mask} does not exist ({count} masks given)")]
    MissingMask { op: usize, mask: u32, count: usize },
    #[error("op {op}: mask {mask} was made for skeleton {skeleton}, not this one")]
    MaskSkeleton { op: usize, mask: u32, skeleton: u32 },
    #[error("mask {mask} has {len} weights but the skeleton has {joints} joints, or a weight outside [0, 1]")]
    BadMask {
        mask: u32,
        len: usize,
        joints: usize,
    },
    #[error("op {op}: curve selection {selection} does not exist ({count} selections given; PoseOp::d names selection d - 1, 0 selects every curve)")]
    MissingCurveSelection {
        op: usize,
        selection: u32,
        count: usize,
    },
    #[error("op {op}: curve selection {selection} was made for skeleton {skeleton}, not this one, or does not weigh each of its curve channels in [0, 1]")]
    BadCurveSelection {
        op: usize,
        selection: u32,
        skeleton: u32,
    },
    #[error("op {op}: skin {skin} does not exist or binds another skeleton")]
    MissingSkin { op: usize, skin: u32 },
    #[error("op {op}: {what} is {value}, outside {range}")]
    BadValue {
        op: usize,
        what: &'static str,
        value: f32,
        range: &'static str,
    },
    #[error("op {op}: blend weights {offset}..{offset}+{count} lie outside the pool of {pool}")]
    WeightRange {
        op: usize,
        offset: u32,
        count: u32,
        pool: usize,
    },
    #[error("op {op}: {what}")]
    Order { op: usize, what: &'static str },
    #[error("op {op}: history slot {slot} is outside the {slots} slots declared")]
    HistorySlot { op: usize, slot: u32, slots: usize },
}

/// The assets a program runs against: one skeleton and the package's clips, skins and masks
/// ([`crate::Package::assets`]).
#[derive(Clone, Copy, Debug)]
pub struct Assets<'a> {
    pub skeleton: &'a Skeleton,
    /// Index of `skeleton` in the package; clips and skins must name it.
    pub skeleton_index: u32,
    pub clips: &'a [Clip],
    pub skins: &'a [SkinBinding],
    pub masks: &'a [Mask],
    /// The package's scalar curves (programs carry the skeleton's channels).
    pub curves: &'a crate::scalar::Curves,
}

/// Most registers any program may use: validation tracks written registers in a `u64`.
pub const MAX_REGISTERS: usize = 64;

impl ProgramLimits {
    /// The register file size: `max_registers`, at most [`MAX_REGISTERS`].
    pub fn registers(&self) -> usize {
        self.max_registers.min(MAX_REGISTERS)
    }
}

impl Mask {
    /// Every joint of `skeleton` (skeleton `index` of its package) weighs `weight`.
    pub fn uniform(name: &str, index: u32, skeleton: &Skeleton, weight: f32) -> Mask {
        Mask {
            name: name.into(),
            skeleton: index,
            weights: vec![weight; skeleton.joint_count()],
        }
    }

    /// `joint` and its descendants weigh `weight`, every other joint 0; `None` when `joint` is
    /// not a joint of `skeleton` (skeleton `index` of its package).
    pub fn subtree(
        name: &str,
        index: u32,
        skeleton: &Skeleton,
        joint: usize,
        weight: f32,
    ) -> Option<Mask> {
        let end = *skeleton.subtree_end.get(joint)? as usize;
        let weights = (0..skeleton.joint_count())
            .map(|j| {
                if (joint..end).contains(&j) {
                    weight
                } else {
                    0.0
                }
            })
            .collect();
        Some(Mask {
            name: name.into(),
            skeleton: index,
            weights,
        })
    }
}

/// Register reads and writes of one op, checked by [`Program::validate`].
struct Registers {
    written: u64,
    limit: usize,
}

impl Registers {
    fn check(&self, op: usize, register: u32) -> Result<(), ProgramError> {
        if register as usize >= self.limit {
            return Err(ProgramError::Register {
                op,
                register,
                limit: self.limit,
            });
        }
        Ok(())
    }

    fn read(&self, op: usize, register: u32) -> Result<(), ProgramError> {
        self.check(op, register)?;
        if self.written & (1 << register) == 0 {
            return Err(ProgramError::Unwritten { op, register });
        }
        Ok(())
    }

    fn write(&mut self, op: usize, register: u32) -> Result<(), ProgramError> {
        self.check(op, register)?;
        self.written |= 1 << register;
        Ok(())
    }
}

impl Program {
    /// The history slot the program's `Capture` ops write, if it has one.
    pub fn capture_slot(&self) -> Option<u32> {
        self.ops.iter().find(|o| o.code == op::CAPTURE).map(|o| o.c)
    }

    /// The history slot the program's `Capture` or `Inertialize` ops name, if any.
    pub fn history_slot(&self) -> Option<u32> {
        self.ops
            .iter()
            .find(|o| o.code == op::CAPTURE || o.code == op::INERTIALIZE)
            .map(|o| o.c)
    }

    /// The register the program's `ToComponent` converts: its final local pose (`None` without
    /// one).
    pub fn final_register(&self) -> Option<u32> {
        self.ops
            .iter()
            .find(|o| o.code == op::TO_COMPONENT)
            .map(|o| o.a)
    }

    /// Checks the program against `limits` and `assets` (DESIGN.md §4): capacities, op codes,
    /// registers in range and written before they are read, clips / masks / skins that exist and
    /// fit this skeleton, finite weights and times in their ranges, one declared history slot,
    /// and `ToComponent` at most once and before any `Palette`. Allocates nothing.
    pub fn validate(&self, limits: &ProgramLimits, assets: &Assets) -> Result<(), ProgramError> {
        capacity("ops", self.ops.len(), limits.max_ops)?;
        capacity("weights", self.weights.len(), limits.max_weights)?;
        let mut regs = Registers {
            written: 0,
            limit: limits.registers(),
        };
        let mut to_component = false;
        let mut history = HistoryUse { slot: None };
        for (i, o) in self.ops.iter().enumerate() {
            match o.code {
                op::REST => regs.write(i, o.dst)?,
                op::SAMPLE => {
                    check_clip(i, o.a, assets)?;
                    finite(i, "sample time", o.time)?;
                    regs.write(i, o.dst)?;
                }
                op::BLEND => {
                    self.check_blend(i, o, &regs)?;
                    regs.write(i, o.dst)?;
                }
                op::OVERRIDE | op::ADDITIVE => {
                    regs.read(i, o.dst)?;
                    regs.read(i, o.a)?;
                    if o.code == op::ADDITIVE {
                        regs.read(i, o.b)?;
                    }
                    unit_interval(i, "layer weight", o.weight)?;
                    check_mask(i, o.c, assets)?;
                    check_selection(i, o.d, assets)?;
                }
                op::TO_COMPONENT => {
                    if to_component {
                        return Err(ProgramError::Order {
                            op: i,
                            what: "a second ToComponent",
                        });
                    }
                    regs.read(i, o.a)?;
                    to_component = true;
                }
                op::CAPTURE => {
                    for r in [o.dst, o.a, o.b, o.d] {
                        regs.read(i, r)?;
                    }
                    history.check(i, o.c, limits)?;
                    if !(o.weight.is_finite() && o.weight >= MIN_CAPTURE_INTERVAL) {
                        return Err(ProgramError::BadValue {
                            op: i,
                            what: "capture interval",
                            value: o.weight,
                            range: "[1e-4, inf) seconds",
                        });
                    }
                }
                op::INERTIALIZE => {
                    regs.read(i, o.dst)?;
                    history.check(i, o.c, limits)?;
                    non_negative(i, "inertialization duration", o.weight)?;
                    if o.weight > MAX_INERTIALIZATION {
                        return Err(ProgramError::BadValue {
                            op: i,
                            what: "inertialization duration",
                            value: o.weight,
                            range: "[0, 60] seconds",
                        });
                    }
                    non_negative(i, "time since the capture", o.time)?;
                }
                op::PALETTE => {
                    if !to_component {
                        return Err(ProgramError::Order {
                            op: i,
                            what: "Palette before ToComponent",
                        });
                    }
                    check_skin(i, o.a, assets)?;
                }
                code => return Err(ProgramError::UnknownOp { op: i, code }),
            }
        }
        Ok(())
    }

    /// Blend inputs `a .. a + b` written, weights `c .. c + b` inside the pool, finite and >= 0.
    fn check_blend(&self, i: usize, o: &PoseOp, regs: &Registers) -> Result<(), ProgramError> {
        if o.b == 0 {
            return Err(ProgramError::BadValue {
                op: i,
                what: "blend input count",
                value: 0.0,
                range: "1..",
            });
        }
        for k in 0..o.b {
            let register = o.a.checked_add(k).ok_or(ProgramError::Register {
                op: i,
                register: u32::MAX,
                limit: regs.limit,
            })?;
            regs.read(i, register)?;
        }
        let range = (o.c as usize)..(o.c as usize).saturating_add(o.b as usize);
        let weights = self.weights.get(range).ok_or(ProgramError::WeightRange {
            op: i,
            offset: o.c,
            count: o.b,
            pool: self.weights.len(),
        })?;
        for &w in weights {
            if !(w.is_finite() && w >= 0.0) {
                return Err(ProgramError::BadValue {
                    op: i,
                    what: "blend weight",
                    value: w,
                    range: "[0, inf)",
                });
            }
        }
        Ok(())
    }
}

fn capacity(what: &'static str, count: usize, limit: usize) -> Result<(), ProgramError> {
    if count > limit {
        return Err(ProgramError::Capacity { what, count, limit });
    }
    Ok(())
}

fn finite(op: usize, what: &'static str, value: f32) -> Result<(), ProgramError> {
    if !value.is_finite() {
        return Err(ProgramError::BadValue {
            op,
            what,
            value,
            range: "finite",
        });
    }
    Ok(())
}

fn non_negative(op: usize, what: &'static str, value: f32) -> Result<(), ProgramError> {
    if !(value.is_finite() && value >= 0.0) {
        return Err(ProgramError::BadValue {
            op,
            what,
            value,
            range: "[0, inf) seconds",
        });
    }
    Ok(())
}

/// The history slot a program's `Capture` and `Inertialize` ops name: one, and declared.
struct HistoryUse {
    slot: Option<u32>,
}

impl HistoryUse {
    fn check(&mut self, op: usize, slot: u32, limits: &ProgramLimits) -> Result<(), ProgramError> {
        if slot as usize >= limits.history_slots {
            return Err(ProgramError::HistorySlot {
                op,
                slot,
                slots: limits.history_slots,
            });
        }
        if *self.slot.get_or_insert(slot) != slot {
            return Err(ProgramError::Order {
                op,
                what: "a second history slot (a program names one)",
            });
        }
        Ok(())
    }
}

fn unit_interval(op: usize, what: &'static str, value: f32) -> Result<(), ProgramError> {
    if !(0.0..=1.0).contains(&value) {
        return Err(ProgramError::BadValue {
            op,
            what,
            value,
            range: "[0, 1]",
        });
    }
    Ok(())
}

/// The clip exists, names this skeleton and has three sub-tracks per joint.
fn check_clip(op: usize, clip: u32, assets: &Assets) -> Result<(), ProgramError> {
    let c = assets
        .clips
        .get(clip as usize)
        .ok_or(ProgramError::MissingClip {
            op,
            clip,
            count: assets.clips.len(),
        })?;
    if c.skeleton != assets.skeleton_index
        || c.sub_tracks.len() != 3 * assets.skeleton.joint_count()
    {
        return Err(ProgramError::ClipSkeleton { op, clip });
    }
    Ok(())
}

/// `NO_MASK`, or a mask of this skeleton with one weight in [0, 1] per joint.
fn check_mask(op: usize, mask: u32, assets: &Assets) -> Result<(), ProgramError> {
    if mask == NO_MASK {
        return Ok(());
    }
    let m = assets
        .masks
        .get(mask as usize)
        .ok_or(ProgramError::MissingMask {
            op,
            mask,
            count: assets.masks.len(),
        })?;
    if m.skeleton != assets.skeleton_index {
        return Err(ProgramError::MaskSkeleton {
            op,
            mask,
            skeleton: m.skeleton,
        });
    }
    let joints = assets.skeleton.joint_count();
    if m.weights.len() != joints || !m.weights.iter().all(|w| (0.0..=1.0).contains(w)) {
        return Err(ProgramError::BadMask {
            mask,
            len: m.weights.len(),
            joints,
        });
    }
    Ok(())
}

/// Curve selection `d` ([`crate::scalar::selection_of`]) is every curve, or a selection of
/// this skeleton with a weight in [0, 1] per channel.
fn check_selection(op: usize, d: u32, assets: &Assets) -> Result<(), ProgramError> {
    let Some(selection) = crate::scalar::selection_of(d) else {
        return Ok(());
    };
    let selections = &assets.curves.selections;
    let s = selections
        .get(selection as usize)
        .ok_or(ProgramError::MissingCurveSelection {
            op,
            selection,
            count: selections.len(),
        })?;
    let channels = assets.curves.range(assets.skeleton_index).len();
    if s.skeleton != assets.skeleton_index
        || s.weights.len() != channels
        || !s.weights.iter().all(|w| (0.0..=1.0).contains(w))
    {
        return Err(ProgramError::BadCurveSelection {
            op,
            selection,
            skeleton: s.skeleton,
        });
    }
    Ok(())
}

/// The skin exists, binds this skeleton, and each palette entry has a joint of it and a matrix.
fn check_skin(op: usize, skin: u32, assets: &Assets) -> Result<(), ProgramError> {
    let joints = assets.skeleton.joint_count();
    let ok = assets.skins.get(skin as usize).is_some_and(|s| {
        s.skeleton == assets.skeleton_index
            && s.joints.len() == s.inverse_bind.len()
            && s.joints.iter().all(|&j| (j as usize) < joints)
    });
    if !ok {
        return Err(ProgramError::MissingSkin { op, skin });
    }
    Ok(())
}
