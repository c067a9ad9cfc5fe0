//! Cyclic coordinate descent for chains (Wang and Chen, "A combined optimization method for
//! solving the inverse kinematics problem of mechanical manipulators", IEEE Transactions on
//! Robotics and Automation 7(4), 1991).
//!
//! A pass visits the chain's joints from the one before the tip back to the root; each turns by
//! the shortest arc that lays its joint-to-tip direction onto its joint-to-target direction, and
//! the path below it is brought up to date before the next. Passes stop when the tip is within
//! `tolerance × chain length` of the target or after `max_passes` (at most [`MAX_CCD_PASSES`]).
//! Unlike FABRIK it works on rotations directly, so bone lengths are kept exactly and no
//! rebuild is needed; it tends to curl the joints near the tip first.
//!
//! Plain CCD is slow on targets that need the chain folded (each joint's turn undoes part of the
//! last), so before the root's turn a pass takes a reach step: after the root turns, the tip lies
//! on the root-to-target ray, and only the root-to-tip distance can still be wrong. The interior
//! joint that can set that distance to the target's with the smallest bend turns (law of
//! cosines over the rigid chain parts on either side of it, about the normal of their plane),
//! so the root's turn then lands the tip on the target. The step is the triangulation idea of
//! Müller-Cajar and Mukundan, "Triangulation: a new algorithm for inverse kinematics" (IVCNZ
//! 2007, https://www.researchgate.net/publication/228583367), applied at one joint per pass.

use glam::{Affine3A, Quat, Vec3};

use super::chain::{self, angle_between, arc, position, MAX_CHAIN_JOINTS};
use super::{check_weight, finite_vec, in_range, IkError, IkResult, IkStatus, TINY};
use crate::{Skeleton, Trs};

/// The most passes a CCD solve may run.
pub const MAX_CCD_PASSES: u32 = 16;

/// One CCD solve. Points are in component space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ccd {
    /// Where the last chain joint should go.
    pub target: Vec3,
    /// Tip-to-target distance at which the passes stop, relative to the chain's length, in
    /// (0, 1].
    pub tolerance: f32,
    /// Most passes, 1 to [`MAX_CCD_PASSES`].
    pub max_passes: u32,
    /// Blend weight of the correction, in [0, 1].
    pub weight: f32,
}

impl Ccd {
    /// A full-weight solve toward `target`: 0.001 tolerance, 16 passes.
    pub fn new(target: Vec3) -> Self {
        Ccd {
            target,
            tolerance: 1e-3,
            max_passes: MAX_CCD_PASSES,
            weight: 1.0,
        }
    }

    fn validate(
        &self,
        skeleton: &Skeleton,
        local: &[Trs],
        component: &[Affine3A],
        joints: &[usize],
    ) -> Result<(), IkError> {
        chain::check_pose(skeleton, local, component)?;
        chain::check_chain(skeleton, joints, 2, MAX_CHAIN_JOINTS)?;
        finite_vec("CCD target", self.target)?;
        in_range(
            "CCD tolerance",
            self.tolerance,
            f32::MIN_POSITIVE,
            1.0,
            "(0, 1]",
        )?;
        if !(1..=MAX_CCD_PASSES).contains(&self.max_passes) {
            return Err(IkError::OutOfRange {
                what: "CCD passes",
                value: self.max_passes as f32,
                range: "1 to 16",
            });
        }
        check_weight("CCD weight", self.weight)
    }
}

/// Solves the chain `joints` (root first, each an ancestor of the next) toward `ik.target`.
/// `Reached`: the tip is within tolerance; `Unreachable`: the target lies beyond the chain's
/// reach (farther than its length, or nearer the root than its folded length allows), and the
/// chain reaches toward it as far as the passes take it; `Limited`: reachable but not reached in
/// the passes given.
pub fn solve_ccd(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    joints: &[usize],
    ik: &Ccd,
) -> Result<IkResult, IkError> {
    ik.validate(skeleton, local, component, joints)?;
    let (first, last) = (joints[0], joints[joints.len() - 1]);
    let measure = |component: &[Affine3A], status, iterations| IkResult {
        status,
        position_error: (position(component, last) - ik.target).length(),
        angle_error: 0.0,
        iterations,
    };
    if !chain::chain_is_similar(skeleton, component, joints) {
        return Ok(measure(component, IkStatus::UnsupportedScale, 0));
    }
    let (mut total, mut longest) = (0.0f32, 0.0f32);
    for w in joints.windows(2) {
        let length = (position(component, w[1]) - position(component, w[0])).length();
        total += length;
        longest = longest.max(length);
    }
    if total <= TINY {
        return Ok(measure(component, IkStatus::Degenerate, 0));
    }
    let dist = (ik.target - position(component, first)).length();
    let reachable = dist <= total && dist >= (2.0 * longest - total).max(0.0);
    let tolerance = ik.tolerance * total;

    let original = chain::Saved::of(local, joints);
    let mut passes = 0;
    while passes < ik.max_passes && (position(component, last) - ik.target).length() > tolerance {
        for &j in joints[..joints.len() - 1].iter().rev() {
            if j == first {
                reach_step(skeleton, local, component, joints, ik.target);
            }
            let at = position(component, j);
            let turn = arc(position(component, last) - at, ik.target - at, Vec3::ZERO);
            chain::rotate_joint(skeleton, local, component, j, turn);
            chain::refresh_path(skeleton, local, component, j, last);
        }
        passes += 1;
    }
    let reached = (position(component, last) - ik.target).length() <= tolerance;
    original.blend(local, joints, ik.weight);
    chain::rebuild_subtree(skeleton, local, component, first);
    let status = match (reached, reachable) {
        (true, _) => IkStatus::Reached,
        (false, true) => IkStatus::Limited,
        (false, false) => IkStatus::Unreachable,
    };
    Ok(measure(component, status, passes))
}

/// Bends the interior joint of `joints` that brings the root-to-tip distance nearest the
/// root-to-target distance (exactly, when one can), with the smallest turn among equals.
fn reach_step(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    joints: &[usize],
    target: Vec3,
) {
    let (first, last) = (joints[0], joints[joints.len() - 1]);
    let (root, tip) = (position(component, first), position(component, last));
    let want = (target - root).length();
    // (joint, axis, turn, distance still missing after it)
    let mut best: Option<(usize, Vec3, f32, f32)> = None;
    for &j in &joints[1..joints.len() - 1] {
        let at = position(component, j);
        let (u, v) = (root - at, tip - at);
        let (a, b) = (u.length(), v.length());
        if a <= TINY || b <= TINY {
            continue;
        }
        let reach = want.clamp((a - b).abs(), a + b);
        let cos = ((a * a + b * b - reach * reach) / (2.0 * a * b)).clamp(-1.0, 1.0);
        let turn = cos.acos() - angle_between(u, v);
        let axis = u
            .cross(v)
            .try_normalize()
            .unwrap_or_else(|| u.any_orthonormal_vector());
        let missing = (want - reach).abs();
        if best.is_none_or(|(_, _, t, m)| (missing, turn.abs()) < (m, t.abs())) {
            best = Some((j, axis, turn, missing));
        }
    }
    if let Some((j, axis, turn, _)) = best {
        chain::rotate_joint(
            skeleton,
            local,
            component,
            j,
            Quat::from_axis_angle(axis, turn),
        );
        chain::refresh_path(skeleton, local, component, j, last);
    }
}
