//! Aim / look-at: turn a joint (or a chain such as spine_03–neck–head) so that an axis of its last
//! joint points at a target.
//!
//! The aim ray starts at `offset` and runs along `forward`, both in the last joint's local frame.
//! Its goal orientation maps `forward` onto the (limited) direction to the target and `up` as
//! close as possible onto the rest frame's up, so the head keeps its rest roll.
//!
//! Limits are in root space: the rest frame is the last joint's rotation in the skeleton's rest
//! pose relative to the skeleton's root joint, carried by the root joint's current component
//! rotation. So they follow the character's facing, not its animated spine: a character bowing
//! or twisting its chest still looks no further than the limits from where its body faces. In
//! that frame, with `f`, `u` the rest forward and up and `s = u × f`, yaw is `atan2(v·s, v·f)`
//! and pitch `atan2(v·u, |v - (v·u)u|)` of the aim direction `v`; each is clamped to ±its limit.
//!
//! Distribution: joint `i` of the chain turns by the fraction `weights[i]` of the rotation that is
//! still missing, recomputed from the current pose after each joint (a last weight of 1 finishes
//! the turn). The last joint repeats its turn up to [`AIM_PASSES`] times, since turning moves the
//! ray's origin when `offset` is not zero.

use glam::{Affine3A, Mat3, Quat, Vec3};

use super::chain::{self, arc, rotation_of, MAX_CHAIN_JOINTS};
use super::{check_weight, finite_vec, in_range, unit_vec, IkError, IkResult, IkStatus, TINY};
use crate::transform::slerp_shortest;
use crate::{Skeleton, Trs};

/// Most turns of the last joint of an aim chain (unclamped aims finish in two or three).
pub const AIM_PASSES: u32 = 4;

/// Remaining turn (radians) below which a joint does not turn and a solve counts as reached.
const AIM_TOLERANCE: f32 = 1e-4;

/// One aim solve. The target is in component space; axes and offset in the last joint's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aim {
    pub target: Vec3,
    /// Local axis to point at the target (non-zero).
    pub forward: Vec3,
    /// Local axis kept toward the rest frame's up (non-zero, not parallel to `forward`).
    pub up: Vec3,
    /// Local origin of the aim ray (e.g. between the eyes).
    pub offset: Vec3,
    /// Radians, in [0, π]: the largest yaw of the aim direction from the root-space rest
    /// direction (module docs).
    pub yaw_limit: f32,
    /// Radians, in [0, π/2]: the largest pitch of the aim direction from the root-space rest
    /// direction.
    pub pitch_limit: f32,
    /// Blend weight of the correction, in [0, 1].
    pub weight: f32,
}

impl Aim {
    /// A full-weight, unlimited aim of local `forward` (with `up`) at `target`, from the joint's origin.
    pub fn new(target: Vec3, forward: Vec3, up: Vec3) -> Self {
        Aim {
            target,
            forward,
            up,
            offset: Vec3::ZERO,
            yaw_limit: std::f32::consts::PI,
            pitch_limit: std::f32::consts::FRAC_PI_2,
            weight: 1.0,
        }
    }
}

/// Local aim frame: unit forward and the unit up made perpendicular to it.
struct Axes {
    forward: Vec3,
    up: Vec3,
}

fn validate(
    skeleton: &Skeleton,
    local: &[Trs],
    component: &[Affine3A],
    aim: &Aim,
    joints: &[usize],
    weights: &[f32],
) -> Result<Axes, IkError> {
    chain::check_pose(skeleton, local, component)?;
    chain::check_chain(skeleton, joints, 1, MAX_CHAIN_JOINTS)?;
    if weights.len() != joints.len() {
        return Err(IkError::Length {
            what: "aim chain weights",
            len: weights.len(),
            expected: joints.len(),
        });
    }
    for &w in weights {
        check_weight("aim chain weight", w)?;
    }
    finite_vec("aim target", aim.target)?;
    finite_vec("aim offset", aim.offset)?;
    let forward = unit_vec("aim forward axis", aim.forward)?;
    let up = unit_vec("aim up axis", aim.up)?;
    let up = (up - forward * up.dot(forward))
        .try_normalize()
        .filter(|u| u.is_finite() && forward.cross(up).length() > 1e-3)
        .ok_or(IkError::Invalid {
            what: "aim up axis",
            reason: "is parallel to the forward axis",
        })?;
    in_range(
        "aim yaw limit",
        aim.yaw_limit,
        0.0,
        std::f32::consts::PI,
        "[0, π]",
    )?;
    in_range(
        "aim pitch limit",
        aim.pitch_limit,
        0.0,
        std::f32::consts::FRAC_PI_2,
        "[0, π/2]",
    )?;
    check_weight("aim weight", aim.weight)?;
    Ok(Axes { forward, up })
}

/// Aims the last joint of `joints` (root first, each an ancestor of the next) at `aim.target`,
/// distributing the turn by `weights` (one per joint, each in [0, 1]).
pub fn solve_aim(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    aim: &Aim,
    joints: &[usize],
    weights: &[f32],
) -> Result<IkResult, IkError> {
    let axes = validate(skeleton, local, component, aim, joints, weights)?;
    let (Some(&first), Some(&end)) = (joints.first(), joints.last()) else {
        return Err(IkError::ChainLength {
            len: 0,
            min: 1,
            max: MAX_CHAIN_JOINTS,
        });
    };
    if !chain::chain_is_similar(skeleton, component, joints) {
        return Ok(measure(
            component,
            aim,
            &axes,
            end,
            IkStatus::UnsupportedScale,
            0,
        ));
    }
    let original = chain::Saved::of(local, joints);
    let rest = rest_frame(skeleton, component, end);
    let frame = RestFrame::new(rest, &axes);

    let mut iterations = 0;
    for (&j, &w) in joints.iter().zip(weights) {
        let passes = if j == end && w >= 1.0 { AIM_PASSES } else { 1 };
        for pass in 0..passes {
            let Some((v, clamped)) = aim_direction(component, aim, &frame, end) else {
                break;
            };
            let current = rotation_of(&component[end]);
            // The first turn sets the whole orientation; later ones only swing the ray onto the
            // target (or the clamped direction), so the roll cannot feed back into the origin.
            let goal = if pass == 0 {
                look_rotation(v, frame.up, &axes, current)
            } else {
                let m = &component[end];
                let swing = ray_point_at(m, aim.offset, current * axes.forward, aim.target)
                    .filter(|_| !clamped);
                swing.map_or_else(
                    || arc(current * axes.forward, v, Vec3::ZERO),
                    |q| arc(q, aim.target - Vec3::from(m.translation), Vec3::ZERO),
                ) * current
            };
            let delta = goal * current.conjugate();
            if chain::angle(delta) <= AIM_TOLERANCE {
                break;
            }
            iterations += 1;
            chain::rotate_joint(
                skeleton,
                local,
                component,
                j,
                slerp_shortest(Quat::IDENTITY, delta, w),
            );
            chain::refresh_path(skeleton, local, component, j, end);
        }
    }
    let forward = rotation_of(&component[end]) * axes.forward;
    let status = match aim_direction(component, aim, &frame, end) {
        None => IkStatus::Degenerate,
        Some((_, true)) => IkStatus::Limited,
        Some((v, false)) if chain::angle_between(forward, v) > AIM_TOLERANCE => IkStatus::Limited,
        Some(_) => IkStatus::Reached,
    };
    original.blend(local, joints, aim.weight);
    chain::rebuild_subtree(skeleton, local, component, first);
    Ok(measure(component, aim, &axes, end, status, iterations))
}

/// Component rotation `end` would have with every joint below the skeleton's root joint at its
/// rest local rotation and the root joint as posed (the limits' root-space rest frame).
fn rest_frame(skeleton: &Skeleton, component: &[Affine3A], end: usize) -> Quat {
    let mut below_root = Quat::IDENTITY;
    let mut j = end;
    while let Some(p) = chain::parent(skeleton, j) {
        below_root = skeleton.rest[j].rotation * below_root;
        j = p;
    }
    component.get(j).map_or(Quat::IDENTITY, rotation_of) * below_root
}

/// The rest frame's forward, up and side directions in component space.
struct RestFrame {
    forward: Vec3,
    up: Vec3,
    side: Vec3,
}

impl RestFrame {
    fn new(rest: Quat, axes: &Axes) -> Self {
        let (forward, up) = (rest * axes.forward, rest * axes.up);
        RestFrame {
            forward,
            up,
            side: up.cross(forward),
        }
    }

    /// Yaw and pitch of unit direction `v` (module docs).
    fn yaw_pitch(&self, v: Vec3) -> (f32, f32) {
        let (f, u, s) = (v.dot(self.forward), v.dot(self.up), v.dot(self.side));
        (s.atan2(f), u.atan2(f.hypot(s)))
    }

    fn direction(&self, yaw: f32, pitch: f32) -> Vec3 {
        let (sy, cy) = yaw.sin_cos();
        let (sp, cp) = pitch.sin_cos();
        (self.forward * cy + self.side * sy) * cp + self.up * sp
    }
}

/// Unit direction from the ray's current origin to the target, clamped to the limits, and whether
/// a limit clamped it; `None` when the target sits at the ray's origin.
fn aim_direction(
    component: &[Affine3A],
    aim: &Aim,
    frame: &RestFrame,
    end: usize,
) -> Option<(Vec3, bool)> {
    let to = aim.target - component.get(end)?.transform_point3(aim.offset);
    let v = to.try_normalize().filter(|_| to.length() > TINY)?;
    let (yaw, pitch) = frame.yaw_pitch(v);
    let (cy, cp) = (
        yaw.clamp(-aim.yaw_limit, aim.yaw_limit),
        pitch.clamp(-aim.pitch_limit, aim.pitch_limit),
    );
    let clamped = (cy - yaw).abs() > 1e-6 || (cp - pitch).abs() > 1e-6;
    Some((if clamped { frame.direction(cy, cp) } else { v }, clamped))
}

/// The point of the aim ray (origin `offset` in `m`'s frame, direction `forward` in component
/// space) as far from `m`'s origin as `target` is, relative to that origin: turning the joint by
/// the shortest arc from it to the target direction puts the ray through the target in one step.
/// `None` when the target is closer to the joint than the ray ever comes.
fn ray_point_at(m: &Affine3A, offset: Vec3, forward: Vec3, target: Vec3) -> Option<Vec3> {
    let o = m.transform_vector3(offset);
    let reach = (target - Vec3::from(m.translation)).length();
    let b = o.dot(forward);
    let disc = b * b - o.length_squared() + reach * reach;
    (disc >= 0.0).then(|| o + forward * (disc.sqrt() - b))
}

/// Rotation taking local `axes.forward` to `v` and local `axes.up` as close as possible to `up`;
/// the shortest turn from `current` when `up` is parallel to `v`.
fn look_rotation(v: Vec3, up: Vec3, axes: &Axes, current: Quat) -> Quat {
    let Some(u) = (up - v * up.dot(v))
        .try_normalize()
        .filter(|_| v.cross(up).length() > 1e-4)
    else {
        return arc(current * axes.forward, v, Vec3::ZERO) * current;
    };
    let world = Mat3::from_cols(v, u, v.cross(u));
    let local = Mat3::from_cols(axes.forward, axes.up, axes.forward.cross(axes.up));
    Quat::from_mat3(&(world * local.transpose())).normalize()
}

fn measure(
    component: &[Affine3A],
    aim: &Aim,
    axes: &Axes,
    end: usize,
    status: IkStatus,
    iterations: u32,
) -> IkResult {
    let m = component.get(end).copied().unwrap_or(Affine3A::IDENTITY);
    let origin = m.transform_point3(aim.offset);
    let dir = rotation_of(&m) * axes.forward;
    let to = aim.target - origin;
    let along = to.dot(dir).max(0.0);
    IkResult {
        status,
        position_error: (to - dir * along).length(),
        angle_error: if to.length() > TINY {
            chain::angle_between(dir, to)
        } else {
            0.0
        },
        iterations,
    }
}
