//! Foot placement: a minimal ground-contact modifier driven by ground heights the game measures
//! under each foot.
//!
//! The animation's ground is the component-space plane y = 0. For each foot the game gives the
//! ground height and normal under it (component space); the foot's offset is that height. The
//! pelvis moves down by the lowest offset when it is negative, never up; each leg is then solved
//! with two-bone IK to put its foot joint at its animated position plus its offset, and the foot
//! is tilted onto the ground normal by at most `max_tilt`. Offsets and tilts approach their goals
//! by the factor `1 - exp(-dt / smooth_time)` per update (frame-rate independent exponential
//! smoothing); the state is the caller's, and [`FootState::reset`] (a teleport) makes the next
//! update jump to the goals.

use glam::{Affine3A, Quat, Vec3};

use super::chain::{self, position, rotation_of};
use super::two_bone::{solve_two_bone, TwoBone};
use super::{check_weight, in_range, unit_vec, IkError, IkResult};
use crate::transform::slerp_shortest;
use crate::{Skeleton, Trs};

/// Most legs one placement handles.
pub const MAX_FEET: usize = 4;

/// A leg's joints: thigh, calf and foot (ankle), each an ancestor of the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leg {
    pub thigh: usize,
    pub calf: usize,
    pub foot: usize,
}

/// The ground under one foot, in component space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ground {
    /// Height of the ground under the foot relative to the animation's ground (y = 0).
    pub height: f32,
    /// Ground normal (non-zero; normalised here).
    pub normal: Vec3,
}

/// Settings of a placement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootPlacement<'a> {
    /// The joint lowered; an ancestor of every thigh.
    pub pelvis: usize,
    /// Up to [`MAX_FEET`] legs.
    pub legs: &'a [Leg],
    /// Largest foot tilt from the animated orientation, radians in [0, π/2].
    pub max_tilt: f32,
    /// Smoothing time constant in seconds (>= 0; 0 jumps to the goals).
    pub smooth_time: f32,
    /// Blend weight of the leg corrections and of the pelvis offset, in [0, 1].
    pub weight: f32,
}

/// Smoothed offsets and tilts carried between updates; the caller owns one per character.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FootState {
    /// Vertical pelvis offset (component units, never above 0).
    pub pelvis_offset: f32,
    /// Vertical offset per foot.
    pub foot_offsets: [f32; MAX_FEET],
    /// Component-space tilt per foot.
    pub tilts: [Quat; MAX_FEET],
    /// False until the first update, and after [`FootState::reset`].
    pub primed: bool,
}

impl Default for FootState {
    fn default() -> Self {
        FootState {
            pelvis_offset: 0.0,
            foot_offsets: [0.0; MAX_FEET],
            tilts: [Quat::IDENTITY; MAX_FEET],
            primed: false,
        }
    }
}

impl FootState {
    /// Forgets the smoothed values (after a teleport): the next update jumps to its goals.
    pub fn reset(&mut self) {
        *self = FootState::default();
    }
}

fn validate(
    skeleton: &Skeleton,
    local: &[Trs],
    component: &[Affine3A],
    s: &FootPlacement,
    ground: &[Ground],
    dt: f32,
    results: &[IkResult],
) -> Result<(), IkError> {
    chain::check_pose(skeleton, local, component)?;
    chain::check_joint(skeleton, s.pelvis)?;
    if s.legs.is_empty() || s.legs.len() > MAX_FEET {
        return Err(IkError::ChainLength {
            len: s.legs.len(),
            min: 1,
            max: MAX_FEET,
        });
    }
    for leg in s.legs {
        chain::check_chain(skeleton, &[s.pelvis, leg.thigh, leg.calf, leg.foot], 4, 4)?;
    }
    if ground.len() != s.legs.len() {
        return Err(IkError::Length {
            what: "ground samples",
            len: ground.len(),
            expected: s.legs.len(),
        });
    }
    if results.len() < s.legs.len() {
        return Err(IkError::Length {
            what: "foot results",
            len: results.len(),
            expected: s.legs.len(),
        });
    }
    for g in ground {
        in_range("ground height", g.height, f32::MIN, f32::MAX, "finite")?;
        unit_vec("ground normal", g.normal)?;
    }
    in_range(
        "foot max_tilt",
        s.max_tilt,
        0.0,
        std::f32::consts::FRAC_PI_2,
        "[0, π/2]",
    )?;
    in_range("foot smooth_time", s.smooth_time, 0.0, f32::MAX, ">= 0")?;
    in_range("foot dt", dt, 0.0, f32::MAX, ">= 0")?;
    check_weight("foot weight", s.weight)
}

/// Smoothing factor of one update: `1 - exp(-dt / smooth_time)`, 1 when `smooth_time` is 0.
pub fn smoothing_factor(dt: f32, smooth_time: f32) -> f32 {
    if smooth_time > 0.0 {
        1.0 - (-dt / smooth_time).exp()
    } else {
        1.0
    }
}

/// Places the feet of `s.legs` on `ground` (one sample per leg), advancing `state` by `dt`
/// seconds, and writes each leg's two-bone result to `results` (at least one per leg).
#[allow(clippy::too_many_arguments)]
pub fn place_feet(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    s: &FootPlacement,
    ground: &[Ground],
    dt: f32,
    state: &mut FootState,
    results: &mut [IkResult],
) -> Result<(), IkError> {
    validate(skeleton, local, component, s, ground, dt, results)?;
    let k = if state.primed {
        smoothing_factor(dt, s.smooth_time)
    } else {
        1.0
    };
    state.primed = true;

    let mut lowest = 0.0f32;
    for (i, g) in ground.iter().enumerate() {
        lowest = lowest.min(g.height);
        state.foot_offsets[i] += (g.height - state.foot_offsets[i]) * k;
        state.tilts[i] = slerp_shortest(state.tilts[i], tilt(g.normal, s.max_tilt), k);
    }
    state.pelvis_offset = (state.pelvis_offset + (lowest - state.pelvis_offset) * k).min(0.0);

    // Animated foot placements, before the pelvis moves.
    let mut feet = [(Vec3::ZERO, Quat::IDENTITY); MAX_FEET];
    for (f, leg) in feet.iter_mut().zip(s.legs) {
        *f = (
            position(component, leg.foot),
            rotation_of(&component[leg.foot]),
        );
    }
    chain::translate_joint(
        skeleton,
        local,
        component,
        s.pelvis,
        Vec3::Y * (state.pelvis_offset * s.weight),
    );

    for (i, leg) in s.legs.iter().enumerate() {
        let (at, rotation) = feet[i];
        let mut ik = TwoBone::new(
            leg.thigh,
            leg.calf,
            leg.foot,
            at + Vec3::Y * state.foot_offsets[i],
        );
        ik.end_rotation = Some(state.tilts[i] * rotation);
        ik.weight = s.weight;
        results[i] = solve_two_bone(skeleton, local, component, &ik)?;
    }
    Ok(())
}

/// The shortest rotation from +Y to `normal`, capped at `max_tilt` radians.
fn tilt(normal: Vec3, max_tilt: f32) -> Quat {
    let full = chain::arc(Vec3::Y, normal, Vec3::X);
    let angle = chain::angle(full);
    if angle > max_tilt && angle > 0.0 {
        slerp_shortest(Quat::IDENTITY, full, max_tilt / angle)
    } else {
        full
    }
}
