//! Hero inverse kinematics on the CPU (DESIGN.md §8): solvers that read a local pose and its
//! component transforms and write local rotation corrections.
//!
//! Conventions shared by every solver:
//! - Targets, poles and orientations are in the skeleton's component space (`root_transform`
//!   excluded); distances are in that space's units (metres for cooked rigs).
//! - `local` and `component` hold one entry per joint and agree on entry (`component` is the FK of
//!   `local`). A solver changes only local rotations (foot placement also the pelvis translation),
//!   then rebuilds the component transforms of the affected subtree, so a dependent solve sees them.
//! - A solve runs at full weight, then each changed local rotation is slerped from its input value
//!   by `weight` in [0, 1]. The status describes the full-weight solve; the residuals are measured
//!   on the pose actually written.
//! - Invalid input (unknown joints, a chain that is not an ancestor chain, non-finite values,
//!   parameters out of range) is an [`IkError`] and leaves the pose untouched; a valid target that
//!   cannot be reached is a result with status [`IkStatus::Unreachable`].
//! - Chains whose component transforms carry non-uniform scale, shear or a reflection are not
//!   solved: the status is [`IkStatus::UnsupportedScale`] and the FK pose is kept.
//! - Nothing allocates: chain scratch lives on the stack ([`MAX_CHAIN_JOINTS`]).

pub mod aim;
pub mod ccd;
pub mod chain;
pub mod controls;
pub mod fabrik;
pub mod foot;
pub mod spring;
pub mod two_bone;

pub use aim::{solve_aim, Aim};
pub use ccd::{solve_ccd, Ccd, MAX_CCD_PASSES};
pub use chain::MAX_CHAIN_JOINTS;
pub use controls::{Chain, Control, Controls, Solver};
pub use fabrik::{solve_fabrik, Fabrik};
pub use foot::{place_feet, FootPlacement, FootState, Ground, Leg, MAX_FEET};
pub use spring::{update_spring, Spring, SpringState};
pub use two_bone::{solve_two_bone, TwoBone};

use glam::{Quat, Vec3};
use thiserror::Error;

/// How a solve ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IkStatus {
    /// The target was reached within the solver's tolerance.
    Reached,
    /// The target is reachable, but a limit (reach softening or bounds, aim limits, the iteration
    /// cap, chain weights below one) kept the solver from it.
    Limited,
    /// No pose of the chain reaches the target; the solver reached toward it as far as it can.
    Unreachable,
    /// The geometry leaves the answer undefined (zero-length bones, a target at the chain's root or
    /// at the aim origin); values stay finite and the pose is changed as little as possible.
    Degenerate,
    /// The chain's component transforms carry non-uniform scale, shear or a reflection; the FK pose
    /// is kept.
    UnsupportedScale,
}

impl IkStatus {
    /// Lower-case name, as printed by the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            IkStatus::Reached => "reached",
            IkStatus::Limited => "limited",
            IkStatus::Unreachable => "unreachable",
            IkStatus::Degenerate => "degenerate",
            IkStatus::UnsupportedScale => "unsupported_scale",
        }
    }
}

/// Outcome of one solve, measured on the written pose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IkResult {
    pub status: IkStatus,
    /// Distance from the end effector (tip, or the aim ray) to the target, in component units.
    pub position_error: f32,
    /// Radians: the end orientation's distance from the requested one (two-bone with an end
    /// rotation), or the angle between the aim axis and the direction to the target (aim); 0 when
    /// no orientation was requested.
    pub angle_error: f32,
    /// Iterations (FABRIK), passes (aim) or 1 (analytic two-bone); 0 when nothing was solved.
    pub iterations: u32,
}

/// Invalid solver input: nothing was changed.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum IkError {
    #[error("joint {joint} does not exist: the skeleton has {joints} joints")]
    UnknownJoint { joint: usize, joints: usize },
    #[error("joint {joint} does not descend from joint {ancestor}: not a chain")]
    NotAChain { ancestor: usize, joint: usize },
    #[error("a chain of {len} joints; this solver takes {min} to {max}")]
    ChainLength { len: usize, min: usize, max: usize },
    #[error("{what} has {len} entries, {expected} expected")]
    Length {
        what: &'static str,
        len: usize,
        expected: usize,
    },
    #[error("{what} is not finite")]
    NonFinite { what: &'static str },
    #[error("{what} = {value} is out of range: {range}")]
    OutOfRange {
        what: &'static str,
        value: f32,
        range: &'static str,
    },
    #[error("{what} {reason}")]
    Invalid {
        what: &'static str,
        reason: &'static str,
    },
}

/// Absolute floor for lengths treated as zero (component units).
const TINY: f32 = 1e-9;

fn check_weight(what: &'static str, w: f32) -> Result<(), IkError> {
    in_range(what, w, 0.0, 1.0, "[0, 1]")
}

pub(crate) fn in_range(
    what: &'static str,
    v: f32,
    lo: f32,
    hi: f32,
    range: &'static str,
) -> Result<(), IkError> {
    if !v.is_finite() {
        return Err(IkError::NonFinite { what });
    }
    if v < lo || v > hi {
        return Err(IkError::OutOfRange {
            what,
            value: v,
            range,
        });
    }
    Ok(())
}

fn finite_vec(what: &'static str, v: Vec3) -> Result<Vec3, IkError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(IkError::NonFinite { what })
    }
}

/// A finite, non-zero direction, normalised.
fn unit_vec(what: &'static str, v: Vec3) -> Result<Vec3, IkError> {
    finite_vec(what, v)?
        .try_normalize()
        .ok_or(IkError::Invalid {
            what,
            reason: "has zero length",
        })
}

/// A finite, non-zero quaternion, normalised.
fn unit_quat(what: &'static str, q: Quat) -> Result<Quat, IkError> {
    if !q.is_finite() {
        return Err(IkError::NonFinite { what });
    }
    if q.length_squared() < 1e-12 {
        return Err(IkError::Invalid {
            what,
            reason: "has zero length",
        });
    }
    Ok(q.normalize())
}
