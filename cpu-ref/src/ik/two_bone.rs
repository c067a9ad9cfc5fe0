//! Analytic two-bone IK (thigh–calf–foot, upperarm–lowerarm–hand) with a pole, reach bounds and
//! soft extension.
//!
//! The reach `r` of the tip from the root is the target distance `d` clamped to
//! `[max(|l1 - l2|, min_reach·L), max_reach·L]` (`L = l1 + l2`). With a softness `s = softness·L`
//! the last `s` before the maximum is approached exponentially instead of hit:
//! `r = (m - s) + s·(1 - exp(-(d - (m - s)) / s))` for `d > m - s` (`m = max_reach·L`), so the limb
//! never snaps straight (Andy Nicholas, "Soft IK", http://www.softimageblog.com/archives/108).
//! The mid joint goes where the law of cosines puts it, in the plane through root, target and pole.

use glam::{Affine3A, Quat, Vec3};

use super::chain::{self, arc, position, rotation_of};
use super::{check_weight, finite_vec, in_range, unit_quat, IkError, IkResult, IkStatus, TINY};
use crate::transform::slerp_shortest;
use crate::{Skeleton, Trs};

/// Bones shorter than this fraction of the limb count as zero length.
const ZERO_BONE: f32 = 1e-5;

/// One two-bone solve. Points and rotations are in component space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBone {
    /// Root, mid and tip joints, each an ancestor of the next (twist joints between are allowed).
    pub root: usize,
    pub mid: usize,
    pub tip: usize,
    /// Where the tip should go.
    pub target: Vec3,
    /// A point the mid joint bends toward. `None`, or a pole on the root–target line, keeps the
    /// current bend plane; a straight limb without one bends in an arbitrary (deterministic) plane.
    pub pole: Option<Vec3>,
    /// Component rotation the tip joint should end with; `None` lets it follow the mid joint.
    pub end_rotation: Option<Quat>,
    /// Reach bounds as fractions of the limb length: `0 <= min_reach <= max_reach <= 1`.
    pub min_reach: f32,
    pub max_reach: f32,
    /// Length of the soft zone below `max_reach`, as a fraction of the limb length, in
    /// `[0, max_reach]`; 0 disables softening.
    pub softness: f32,
    /// Blend weight of the correction, in [0, 1].
    pub weight: f32,
}

impl TwoBone {
    /// A full-weight solve toward `target` with no pole, no end rotation and the full reach.
    pub fn new(root: usize, mid: usize, tip: usize, target: Vec3) -> Self {
        TwoBone {
            root,
            mid,
            tip,
            target,
            pole: None,
            end_rotation: None,
            min_reach: 0.0,
            max_reach: 1.0,
            softness: 0.0,
            weight: 1.0,
        }
    }

    fn validate(
        &self,
        skeleton: &Skeleton,
        local: &[Trs],
        component: &[Affine3A],
    ) -> Result<(), IkError> {
        chain::check_pose(skeleton, local, component)?;
        chain::check_chain(skeleton, &[self.root, self.mid, self.tip], 3, 3)?;
        finite_vec("two-bone target", self.target)?;
        if let Some(p) = self.pole {
            finite_vec("two-bone pole", p)?;
        }
        if let Some(q) = self.end_rotation {
            unit_quat("two-bone end rotation", q)?;
        }
        in_range("two-bone max_reach", self.max_reach, 0.0, 1.0, "[0, 1]")?;
        in_range(
            "two-bone min_reach",
            self.min_reach,
            0.0,
            self.max_reach,
            "[0, max_reach]",
        )?;
        in_range(
            "two-bone softness",
            self.softness,
            0.0,
            self.max_reach,
            "[0, max_reach]",
        )?;
        check_weight("two-bone weight", self.weight)
    }
}

/// Solves `ik` on `local` / `component` (see the module conventions in [`crate::ik`]).
pub fn solve_two_bone(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    ik: &TwoBone,
) -> Result<IkResult, IkError> {
    ik.validate(skeleton, local, component)?;
    if !chain::chain_is_similar(skeleton, component, &[ik.root, ik.mid, ik.tip]) {
        return Ok(measure(component, ik, IkStatus::UnsupportedScale, 0));
    }
    let original = [ik.root, ik.mid, ik.tip].map(|j| local[j].rotation);
    let status = solve_full(skeleton, local, component, ik);
    if let Some(q) = ik.end_rotation {
        chain::set_component_rotation(skeleton, local, component, ik.tip, q.normalize());
    }
    if ik.weight < 1.0 {
        for (j, q0) in [ik.root, ik.mid, ik.tip].into_iter().zip(original) {
            local[j].rotation = slerp_shortest(q0, local[j].rotation, ik.weight);
        }
    }
    chain::rebuild_subtree(skeleton, local, component, ik.root);
    Ok(measure(component, ik, status, 1))
}

/// Moves the chain at full weight; leaves the component transforms of root..tip on the path
/// current and returns the status.
fn solve_full(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    ik: &TwoBone,
) -> IkStatus {
    let (a, b, c) = (
        position(component, ik.root),
        position(component, ik.mid),
        position(component, ik.tip),
    );
    let (l1, l2) = ((b - a).length(), (c - b).length());
    let limb = l1 + l2;
    let to_target = ik.target - a;
    let dist = to_target.length();
    if limb <= TINY || dist <= ZERO_BONE * limb.max(TINY) {
        return IkStatus::Degenerate;
    }
    let dir = to_target / dist;
    if l1.min(l2) <= ZERO_BONE * limb {
        // One bone: point it (and the rigid rest of the limb) at the target.
        let delta = arc(c - a, dir, Vec3::ZERO);
        chain::rotate_joint(skeleton, local, component, ik.root, delta);
        chain::refresh_path(skeleton, local, component, ik.root, ik.tip);
        return IkStatus::Degenerate;
    }

    let lo = (l1 - l2).abs().max(ik.min_reach * limb);
    let hi = (ik.max_reach * limb).max(lo);
    let reach = soft_reach(dist, hi, ik.softness * limb).clamp(lo, hi);
    let status = if dist > limb || dist < (l1 - l2).abs() {
        IkStatus::Unreachable
    } else if (reach - dist).abs() > 1e-6 * limb {
        IkStatus::Limited
    } else {
        IkStatus::Reached
    };

    let bend = bend_direction(ik.pole.map(|p| p - a), knee(a, b, c), dir, ZERO_BONE * limb);
    let axis = dir.cross(bend);
    let cos_a = ((l1 * l1 + reach * reach - l2 * l2) / (2.0 * l1 * reach)).clamp(-1.0, 1.0);
    let sin_a = (1.0 - cos_a * cos_a).max(0.0).sqrt();
    let mid_goal = a + l1 * (dir * cos_a + bend * sin_a);
    let tip_goal = a + dir * reach;

    chain::rotate_joint(
        skeleton,
        local,
        component,
        ik.root,
        arc(b - a, mid_goal - a, axis),
    );
    chain::refresh_path(skeleton, local, component, ik.root, ik.tip);
    let (b, c) = (position(component, ik.mid), position(component, ik.tip));
    chain::rotate_joint(
        skeleton,
        local,
        component,
        ik.mid,
        arc(c - b, tip_goal - b, axis),
    );
    chain::refresh_path(skeleton, local, component, ik.mid, ik.tip);
    status
}

/// Soft-clamped reach toward `max` with a soft zone of length `soft` (module docs).
fn soft_reach(dist: f32, max: f32, soft: f32) -> f32 {
    let start = max - soft;
    if soft > TINY && dist > start {
        start + soft * (1.0 - (-(dist - start) / soft).exp())
    } else {
        dist.min(max)
    }
}

/// Offset of the mid joint `b` from the root–tip line: the current bend (zero when straight).
fn knee(a: Vec3, b: Vec3, c: Vec3) -> Vec3 {
    let ab = b - a;
    (c - a)
        .try_normalize()
        .map_or(Vec3::ZERO, |u| ab - u * ab.dot(u))
}

/// Unit direction perpendicular to `dir` in which the mid joint bends: from the pole, else from
/// the current bend `knee`, else any perpendicular. Offsets shorter than `min_len` do not count.
fn bend_direction(pole: Option<Vec3>, knee: Vec3, dir: Vec3, min_len: f32) -> Vec3 {
    let perp = |v: Vec3| {
        Some(v - dir * v.dot(dir))
            .filter(|w| w.length() > min_len)
            .and_then(Vec3::try_normalize)
    };
    pole.and_then(perp)
        .or_else(|| perp(knee))
        .unwrap_or_else(|| dir.any_orthonormal_vector())
}

fn measure(component: &[Affine3A], ik: &TwoBone, status: IkStatus, iterations: u32) -> IkResult {
    let angle_error = match (ik.end_rotation, component.get(ik.tip)) {
        (Some(q), Some(m)) => chain::angle(rotation_of(m) * q.normalize().conjugate()),
        _ => 0.0,
    };
    IkResult {
        status,
        position_error: (position(component, ik.tip) - ik.target).length(),
        angle_error,
        iterations,
    }
}
