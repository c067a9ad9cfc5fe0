//! Bounded FABRIK for chains longer than two bones (Aristidou and Lasenby, "FABRIK: A fast,
//! iterative solver for the Inverse Kinematics problem", Graphical Models 73(5), 2011).
//!
//! Joint positions are solved first: alternating passes from the tip (placed on the target) and
//! from the root (held), each placing a joint at its bone length along the line to its neighbour,
//! until the tip is within `tolerance` or `max_iterations` passes are spent. A pole then turns the
//! interior joints together about the root–tip line until their mean offset from it points at the
//! pole, which keeps every length and both ends.
//! Rotations are rebuilt root first: each joint turns by the shortest arc from its current bone
//! direction to the solved one, so the twist about the bone is the animated one.

use glam::{Affine3A, Quat, Vec3};

use super::chain::{self, arc, position, MAX_CHAIN_JOINTS};
use super::{check_weight, finite_vec, in_range, IkError, IkResult, IkStatus, TINY};
use crate::{Skeleton, Trs};

/// Radians a straight chain is bent at its second joint before the passes.
const STRAIGHT_BEND: f32 = 0.1;

/// One FABRIK solve. Points are in component space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fabrik {
    /// Where the last chain joint should go.
    pub target: Vec3,
    /// A point the interior joints bend toward; `None` keeps the bend the passes produce.
    pub pole: Option<Vec3>,
    /// Distance of the tip from the target (component units, > 0) at which the passes stop.
    pub tolerance: f32,
    /// Most forward-and-backward iterations.
    pub max_iterations: u32,
    /// Blend weight of the correction, in [0, 1].
    pub weight: f32,
}

impl Fabrik {
    /// A full-weight solve toward `target`: no pole, 1e-4 tolerance, 32 iterations.
    pub fn new(target: Vec3) -> Self {
        Fabrik {
            target,
            pole: None,
            tolerance: 1e-4,
            max_iterations: 32,
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
        finite_vec("FABRIK target", self.target)?;
        if let Some(p) = self.pole {
            finite_vec("FABRIK pole", p)?;
        }
        in_range(
            "FABRIK tolerance",
            self.tolerance,
            f32::MIN_POSITIVE,
            f32::MAX,
            "> 0",
        )?;
        check_weight("FABRIK weight", self.weight)
    }
}

/// Chain scratch: solved positions, bone lengths and the input bone directions (the fallback when
/// two solved joints coincide).
struct Points {
    n: usize,
    p: [Vec3; MAX_CHAIN_JOINTS],
    len: [f32; MAX_CHAIN_JOINTS],
    dir: [Vec3; MAX_CHAIN_JOINTS],
}

impl Points {
    fn new(component: &[Affine3A], joints: &[usize]) -> Self {
        let mut s = Points {
            n: joints.len(),
            p: [Vec3::ZERO; MAX_CHAIN_JOINTS],
            len: [0.0; MAX_CHAIN_JOINTS],
            dir: [Vec3::Y; MAX_CHAIN_JOINTS],
        };
        for (p, &j) in s.p.iter_mut().zip(joints) {
            *p = position(component, j);
        }
        for i in 0..s.n - 1 {
            let d = s.p[i + 1] - s.p[i];
            s.len[i] = d.length();
            s.dir[i] = d.try_normalize().unwrap_or(Vec3::Y);
        }
        s
    }

    fn total(&self) -> f32 {
        self.len[..self.n - 1].iter().sum()
    }

    /// Closest distance from the root the chain can put its tip at.
    fn min_reach(&self) -> f32 {
        let longest = self.len[..self.n - 1].iter().copied().fold(0.0, f32::max);
        (2.0 * longest - self.total()).max(0.0)
    }

    fn tip(&self) -> Vec3 {
        self.p[self.n - 1]
    }

    /// Every bone along `dir` from the root.
    fn straighten(&mut self, dir: Vec3) {
        for i in 0..self.n - 1 {
            self.p[i + 1] = self.p[i] + dir * self.len[i];
        }
    }

    /// One iteration: from the tip on the target back to the root, then from the held root out.
    fn iterate(&mut self, root: Vec3, target: Vec3) {
        let n = self.n;
        self.p[n - 1] = target;
        for i in (0..n - 1).rev() {
            let d = (self.p[i] - self.p[i + 1])
                .try_normalize()
                .unwrap_or(-self.dir[i]);
            self.p[i] = self.p[i + 1] + d * self.len[i];
        }
        self.p[0] = root;
        for i in 0..n - 1 {
            let d = (self.p[i + 1] - self.p[i])
                .try_normalize()
                .unwrap_or(self.dir[i]);
            self.p[i + 1] = self.p[i] + d * self.len[i];
        }
    }

    /// True when every interior joint lies on the root–tip line: the passes could not bend it.
    fn is_straight(&self) -> bool {
        let (a, tip) = (self.p[0], self.tip());
        let Some(axis) = (tip - a).try_normalize() else {
            return true;
        };
        let eps = 1e-4 * self.total();
        self.p[1..self.n - 1].iter().all(|&p| {
            let v = p - a;
            (v - axis * v.dot(axis)).length() <= eps
        })
    }

    /// Bends a straight chain a little at its second joint, toward `hint` (any side when `hint` is
    /// on the line): the passes then bow the chain that way.
    fn bend(&mut self, hint: Vec3) {
        let axis = (self.tip() - self.p[0])
            .try_normalize()
            .unwrap_or(self.dir[0]);
        let side = (hint - axis * hint.dot(axis))
            .try_normalize()
            .unwrap_or_else(|| axis.any_orthonormal_vector());
        let turn = Quat::from_axis_angle(axis.cross(side), STRAIGHT_BEND);
        let pivot = self.p[1];
        for p in &mut self.p[2..self.n] {
            *p = pivot + turn * (*p - pivot);
        }
    }

    /// Turns the interior joints together about the root–tip line so that their mean offset from
    /// that line points at `pole` (a rigid turn: lengths and both ends stay).
    fn turn_toward(&mut self, pole: Vec3) {
        let (a, tip) = (self.p[0], self.tip());
        let Some(axis) = (tip - a).try_normalize() else {
            return;
        };
        let flat = |v: Vec3| v - axis * v.dot(axis);
        let bulge: Vec3 = self.p[1..self.n - 1].iter().map(|&p| flat(p - a)).sum();
        let want = flat(pole - a);
        if bulge.length() <= TINY || want.length() <= TINY {
            return;
        }
        let turn = arc(bulge, want, axis);
        for p in &mut self.p[1..self.n - 1] {
            *p = a + turn * (*p - a);
        }
    }
}

/// Solves the chain `joints` (root first, each an ancestor of the next) toward `ik.target`.
pub fn solve_fabrik(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    joints: &[usize],
    ik: &Fabrik,
) -> Result<IkResult, IkError> {
    ik.validate(skeleton, local, component, joints)?;
    let (first, last) = (joints[0], joints[joints.len() - 1]);
    if !chain::chain_is_similar(skeleton, component, joints) {
        return Ok(measure(
            component,
            last,
            ik.target,
            IkStatus::UnsupportedScale,
            0,
        ));
    }
    let mut pts = Points::new(component, joints);
    let root = pts.p[0];
    let total = pts.total();
    let dist = (ik.target - root).length();
    if total <= TINY {
        return Ok(measure(component, last, ik.target, IkStatus::Degenerate, 0));
    }
    let mut iterations = 0;
    let status = if dist > total {
        pts.straighten((ik.target - root) / dist);
        IkStatus::Unreachable
    } else {
        if pts.n > 2 && pts.is_straight() {
            pts.bend(ik.pole.map_or(Vec3::ZERO, |p| p - root));
        }
        while iterations < ik.max_iterations && (pts.tip() - ik.target).length() > ik.tolerance {
            pts.iterate(root, ik.target);
            iterations += 1;
        }
        if let Some(pole) = ik.pole {
            pts.turn_toward(pole);
        }
        if dist < pts.min_reach() {
            IkStatus::Unreachable
        } else if (pts.tip() - ik.target).length() > ik.tolerance {
            IkStatus::Limited
        } else {
            IkStatus::Reached
        }
    };

    let original = chain::Saved::of(local, joints);
    chain::lay_bones(skeleton, local, component, joints, &pts.p[1..pts.n]);
    original.blend(local, joints, ik.weight);
    chain::rebuild_subtree(skeleton, local, component, first);
    Ok(measure(component, last, ik.target, status, iterations))
}

fn measure(
    component: &[Affine3A],
    tip: usize,
    target: Vec3,
    status: IkStatus,
    iterations: u32,
) -> IkResult {
    IkResult {
        status,
        position_error: (position(component, tip) - target).length(),
        angle_error: 0.0,
        iterations,
    }
}
