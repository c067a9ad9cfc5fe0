//! Pose programs: the CPU→evaluator contract (DESIGN.md §4).
//!
//! A program is a short linear list of [`PoseOp`]s over a small register file of local poses,
//! plus a pool of blend weights. Ops are plain 32-byte records (`bytemuck::Pod`) so the GPU
//! consumes exactly the bytes the CPU interpreter runs. A program is checked by
//! [`Program::validate`] against the assets it names before it is run.

use bytemuck::{Pod, Zeroable};
use thiserror::Error;

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
    pub c: u32,
    pub reserved: u32,
    /// Override / Additive weight in [0, 1].
    pub weight: f32,
    /// Sample: clip time in seconds (clamped to [0, duration]).
    pub time: f32,
}

impl PoseOp {
    fn new(code: u32, dst: u32, a: u32, b: u32, c: u32, weight: f32, time: f32) -> Self {
        PoseOp { code, dst, a, b, c, reserved: 0, weight, time }
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
    pub fn overriding(dst: u32, src: u32, weight: f32, mask: u32) -> Self {
        Self::new(op::OVERRIDE, dst, src, 0, mask, weight, 0.0)
    }
    pub fn additive(dst: u32, src: u32, reference: u32, weight: f32, mask: u32) -> Self {
        Self::new(op::ADDITIVE, dst, src, reference, mask, weight, 0.0)
    }
    pub fn to_component(src: u32) -> Self {
        Self::new(op::TO_COMPONENT, 0, src, 0, 0, 0.0, 0.0)
    }
    pub fn palette(skin: u32) -> Self {
        Self::new(op::PALETTE, 0, skin, 0, 0, 0.0, 0.0)
    }
}

/// Capacities a program must fit; evaluator scratch is sized from them once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramLimits {
    pub max_ops: usize,
    pub max_registers: usize,
    pub max_weights: usize,
}

impl Default for ProgramLimits {
    fn default() -> Self {
        ProgramLimits { max_ops: 32, max_registers: 8, max_weights: 32 }
    }
}

/// A pose program for one instance.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    pub ops: Vec<PoseOp>,
    /// Blend weight pool, indexed by `Blend` ops.
    pub weights: Vec<f32>,
}

/// A per-joint weight in [0, 1] for one skeleton, used by Override and Additive.
#[derive(Clone, Debug, PartialEq)]
pub struct Mask {
    pub name: String,
    pub weights: Vec<f32>,
}

/// Why a program cannot run. `op` is the index of the offending op.
#[derive(Debug, Error, PartialEq)]
pub enum ProgramError {
    #[error("program has {count} {what}, more than the limit of {limit}")]
    Capacity { what: &'static str, count: usize, limit: usize },
    #[error("op {op}: unknown op code {code}")]
    UnknownOp { op: usize, code: u32 },
    #[error("op {op}: register {register} is outside the register file of {limit}")]
    Register { op: usize, register: u32, limit: usize },
    #[error("op {op}: register {register} is read before any op writes it")]
    Unwritten { op: usize, register: u32 },
    #[error("op {op}: clip {clip} does not exist (the package has {count} clips)")]
    MissingClip { op: usize, clip: u32, count: usize },
    #[error("op {op}: clip {clip} was cooked for another skeleton")]
    ClipSkeleton { op: usize, clip: u32 },
    #[error("op {op}: mask {mask} does not exist ({count} masks given)")]
    MissingMask { op: usize, mask: u32, count: usize },
    #[error("mask {mask} has {len} weights but the skeleton has {joints} joints, or a weight outside [0, 1]")]
    BadMask { mask: u32, len: usize, joints: usize },
    #[error("op {op}: skin {skin} does not exist or binds another skeleton")]
    MissingSkin { op: usize, skin: u32 },
    #[error("op {op}: {what} is {value}, outside {range}")]
    BadValue { op: usize, what: &'static str, value: f32, range: &'static str },
    #[error("op {op}: blend weights {offset}..{offset}+{count} lie outside the pool of {pool}")]
    WeightRange { op: usize, offset: u32, count: u32, pool: usize },
    #[error("op {op}: {what}")]
    Order { op: usize, what: &'static str },
}
