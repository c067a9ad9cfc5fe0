//! Chains of joints and the pose edits every solver shares: validation, scale checks, rotating a
//! joint in component space, and rebuilding component transforms below it.
//!
//! A chain is a list of joints, each a proper ancestor of the next (root first). Joints between
//! two chain joints are allowed (twist joints); they keep their local transforms and move rigidly.

use glam::{Affine3A, Mat3A, Quat, Vec3};

use super::IkError;
use crate::transform::slerp_shortest;
use crate::{Skeleton, Trs};

/// Longest chain a solver takes; chain scratch is a stack array of this size.
pub const MAX_CHAIN_JOINTS: usize = 32;

/// Relative tolerance of the uniform-scale test (column lengths and orthogonality).
const SCALE_TOLERANCE: f32 = 1e-3;

/// Checks that `local` and `component` hold one entry per joint and the skeleton's arrays agree.
pub fn check_pose(
    skeleton: &Skeleton,
    local: &[Trs],
    component: &[Affine3A],
) -> Result<(), IkError> {
    let n = skeleton.joint_count();
    let lengths = [
        ("local pose", local.len()),
        ("component transforms", component.len()),
        ("skeleton subtree ends", skeleton.subtree_end.len()),
        ("skeleton rest pose", skeleton.rest.len()),
    ];
    for (what, len) in lengths {
        if len != n {
            return Err(IkError::Length {
                what,
                len,
                expected: n,
            });
        }
    }
    Ok(())
}

/// Checks that `joint` exists.
pub fn check_joint(skeleton: &Skeleton, joint: usize) -> Result<(), IkError> {
    let joints = skeleton.joint_count();
    if joint < joints {
        Ok(())
    } else {
        Err(IkError::UnknownJoint { joint, joints })
    }
}

/// Checks that `joints` has `min..=max` entries (at most [`MAX_CHAIN_JOINTS`]), all existing, each
/// a proper ancestor of the next.
pub fn check_chain(
    skeleton: &Skeleton,
    joints: &[usize],
    min: usize,
    max: usize,
) -> Result<(), IkError> {
    let max = max.min(MAX_CHAIN_JOINTS);
    if joints.len() < min || joints.len() > max {
        return Err(IkError::ChainLength {
            len: joints.len(),
            min,
            max,
        });
    }
    for &j in joints {
        check_joint(skeleton, j)?;
    }
    for pair in joints.windows(2) {
        if !is_ancestor(skeleton, pair[0], pair[1]) {
            return Err(IkError::NotAChain {
                ancestor: pair[0],
                joint: pair[1],
            });
        }
    }
    Ok(())
}

/// Parent of `joint`, when it has one that comes before it.
pub fn parent(skeleton: &Skeleton, joint: usize) -> Option<usize> {
    let p = *skeleton.parents.get(joint)? as usize;
    (p < joint).then_some(p)
}

/// True when `ancestor` is a proper ancestor of `joint`.
pub fn is_ancestor(skeleton: &Skeleton, ancestor: usize, mut joint: usize) -> bool {
    while let Some(p) = parent(skeleton, joint) {
        if p == ancestor {
            return true;
        }
        joint = p;
    }
    false
}

/// True when the linear part is a positive uniform scale times a rotation (within 1e-3).
pub fn is_similarity(m: &Affine3A) -> bool {
    let [x, y, z] = [m.matrix3.x_axis, m.matrix3.y_axis, m.matrix3.z_axis];
    let (lx, ly, lz) = (x.length(), y.length(), z.length());
    let (lo, hi) = (lx.min(ly).min(lz), lx.max(ly).max(lz));
    if !(lo > 0.0 && hi.is_finite()) || hi - lo > SCALE_TOLERANCE * hi {
        return false;
    }
    let ortho = |a: glam::Vec3A, b: glam::Vec3A| a.dot(b).abs() <= SCALE_TOLERANCE * hi * hi;
    ortho(x, y) && ortho(y, z) && ortho(z, x) && m.matrix3.determinant() > 0.0
}

/// True when every chain joint and the parent of the first carry uniform scale only.
pub fn chain_is_similar(skeleton: &Skeleton, component: &[Affine3A], joints: &[usize]) -> bool {
    let above = joints.first().and_then(|&j| parent(skeleton, j));
    above
        .iter()
        .chain(joints)
        .all(|&j| component.get(j).is_some_and(is_similarity))
}

/// Rotation part of a similarity transform.
pub fn rotation_of(m: &Affine3A) -> Quat {
    let l = m.matrix3;
    let cols = Mat3A::from_cols(
        l.x_axis.normalize_or_zero(),
        l.y_axis.normalize_or_zero(),
        l.z_axis.normalize_or_zero(),
    );
    let q = Quat::from_mat3a(&cols);
    if q.is_finite() && q.length_squared() > 0.0 {
        q.normalize()
    } else {
        Quat::IDENTITY
    }
}

/// Component transform of the parent of `joint` (identity for the root).
pub fn parent_component(skeleton: &Skeleton, component: &[Affine3A], joint: usize) -> Affine3A {
    parent(skeleton, joint)
        .and_then(|p| component.get(p))
        .copied()
        .unwrap_or(Affine3A::IDENTITY)
}

/// Component-space position of `joint` (the origin when it does not exist).
pub fn position(component: &[Affine3A], joint: usize) -> Vec3 {
    component
        .get(joint)
        .map_or(Vec3::ZERO, |m| Vec3::from(m.translation))
}

/// Rotates `joint` by `delta` in component space about its own origin: its local rotation becomes
/// `P⁻¹ · delta · P · local` (P the parent's component rotation), and its component transform is
/// recomputed. Descendants are not updated (see [`refresh_path`], [`rebuild_subtree`]).
pub fn rotate_joint(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    joint: usize,
    delta: Quat,
) {
    let parent_m = parent_component(skeleton, component, joint);
    let p = rotation_of(&parent_m);
    if let (Some(l), Some(c)) = (local.get_mut(joint), component.get_mut(joint)) {
        l.rotation = (p.conjugate() * delta * p * l.rotation).normalize();
        *c = parent_m * l.to_affine();
    }
}

/// Sets the local rotation of `joint` so that its component rotation is `rotation`, and recomputes
/// its component transform.
pub fn set_component_rotation(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    joint: usize,
    rotation: Quat,
) {
    let parent_m = parent_component(skeleton, component, joint);
    let p = rotation_of(&parent_m);
    if let (Some(l), Some(c)) = (local.get_mut(joint), component.get_mut(joint)) {
        l.rotation = (p.conjugate() * rotation).normalize();
        *c = parent_m * l.to_affine();
    }
}

/// Recomputes the component transforms of the joints on the parent path from `from` (inclusive)
/// down to `to` (inclusive), `from` an ancestor of `to` or `to` itself. Depth-first order puts
/// that path at increasing indices, so the walk is one forward pass.
pub fn refresh_path(
    skeleton: &Skeleton,
    local: &[Trs],
    component: &mut [Affine3A],
    from: usize,
    to: usize,
) {
    let n = local
        .len()
        .min(component.len())
        .min(skeleton.subtree_end.len());
    for j in from..(to + 1).min(n) {
        // In depth-first order, j <= to lies on the path iff `to` is inside j's subtree.
        if skeleton.subtree_end[j] as usize > to {
            component[j] = parent_component(skeleton, component, j) * local[j].to_affine();
        }
    }
}

/// Moves `joint` by `by` (component space, through its local translation) and rebuilds its
/// subtree; nothing when `by` is zero or the parent's transform is singular.
pub fn translate_joint(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    joint: usize,
    by: Vec3,
) {
    if by == Vec3::ZERO {
        return;
    }
    let parent = parent_component(skeleton, component, joint);
    if parent.matrix3.determinant().abs() <= f32::MIN_POSITIVE {
        return;
    }
    if let Some(l) = local.get_mut(joint) {
        l.translation += Vec3::from(parent.matrix3.inverse() * glam::Vec3A::from(by));
        rebuild_subtree(skeleton, local, component, joint);
    }
}

/// Recomputes the component transforms of `joint` and all its descendants from their parents.
pub fn rebuild_subtree(
    skeleton: &Skeleton,
    local: &[Trs],
    component: &mut [Affine3A],
    joint: usize,
) {
    let n = local.len().min(component.len());
    let end = skeleton
        .subtree_end
        .get(joint)
        .map_or(joint, |&e| e as usize)
        .min(n);
    for j in joint..end {
        component[j] = parent_component(skeleton, component, j) * local[j].to_affine();
    }
}

/// The local rotations of a chain's joints kept before a solve, so that its result can be
/// blended back by weight.
pub struct Saved([Quat; MAX_CHAIN_JOINTS]);

impl Saved {
    pub fn of(local: &[Trs], joints: &[usize]) -> Saved {
        let mut saved = [Quat::IDENTITY; MAX_CHAIN_JOINTS];
        for (o, &j) in saved.iter_mut().zip(joints) {
            *o = local[j].rotation;
        }
        Saved(saved)
    }

    /// Slerps each joint's local rotation from its saved one by `weight` (nothing at 1).
    /// Component transforms are left to the caller's rebuild.
    pub fn blend(&self, local: &mut [Trs], joints: &[usize], weight: f32) {
        if weight < 1.0 {
            for (&j, &q0) in joints.iter().zip(&self.0) {
                local[j].rotation = slerp_shortest(q0, local[j].rotation, weight);
            }
        }
    }
}

/// Turns the joints of `joints` but the last, root first, each by the shortest arc that lays
/// its bone (to the next chain joint) onto the direction of `goals[i]` (where joint `i + 1`
/// should go) from where it stands, the path below brought up to date before the next turn.
/// Each bone keeps its twist.
pub fn lay_bones(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    joints: &[usize],
    goals: &[Vec3],
) {
    for (i, (pair, &goal)) in joints.windows(2).zip(goals).enumerate() {
        let (j, next) = (pair[0], pair[1]);
        let from = position(component, j);
        let bone = position(component, next) - from;
        rotate_joint(
            skeleton,
            local,
            component,
            j,
            arc(bone, goal - from, Vec3::ZERO),
        );
        // The next joint's turn reads the joint after it, so bring the path that far up to date.
        let until = joints.get(i + 2).copied().unwrap_or(next);
        refresh_path(skeleton, local, component, j, until);
    }
}

/// The shortest rotation taking direction `from` to direction `to`; a half turn about `axis`
/// (made perpendicular to `from`) when they are opposite; identity when either is zero.
pub fn arc(from: Vec3, to: Vec3, axis: Vec3) -> Quat {
    let (Some(f), Some(t)) = (from.try_normalize(), to.try_normalize()) else {
        return Quat::IDENTITY;
    };
    let d = f.dot(t);
    if d < -1.0 + 1e-6 {
        let a = (axis - f * axis.dot(f))
            .try_normalize()
            .unwrap_or_else(|| f.any_orthonormal_vector());
        return Quat::from_axis_angle(a, std::f32::consts::PI);
    }
    // Half-angle form (f × t, 1 + f·t), normalised. Unlike glam's from_rotation_arc it does not
    // snap turns below ~7e-4 rad to identity.
    let c = f.cross(t);
    Quat::from_xyzw(c.x, c.y, c.z, 1.0 + d).normalize()
}

/// Rotation angle of `q` in radians, in [0, π].
pub fn angle(q: Quat) -> f32 {
    let v = Vec3::new(q.x, q.y, q.z).length();
    2.0 * v.atan2(q.w.abs())
}

/// Angle between two non-zero directions in radians, accurate near 0 and π (atan2 of the cross and
/// dot products, not acos).
pub fn angle_between(a: Vec3, b: Vec3) -> f32 {
    a.cross(b).length().atan2(a.dot(b))
}
