//! Spring chains: secondary motion (a tail, a ponytail, a cloth strip) on a chain of joints.
//!
//! Each segment (a chain joint to the next) has a simulated endpoint and velocity in component
//! space. Per update the frame time is clamped to [`MAX_DT`] and split into
//! `ceil(dt · 240)` substeps, at most [`MAX_SUBSTEPS`]. A substep pulls each endpoint toward
//! its animated target (the segment's animated direction from the simulated start, at its
//! length) with `stiffness`, brakes it with `damping`, adds `gravity` (semi-implicit Euler), and
//! puts it back at the segment's length from the simulated start, dropping the velocity along
//! the segment. An endpoint that becomes non-finite or strays over [`RESET_LENGTHS`] segment
//! lengths from its start (a teleport) resets to its animated target at rest. The joints then
//! turn, root first, by the shortest arc onto the simulated segments; `weight` slerps them from
//! the animated pose. The state is the caller's, one per chain and character.

use glam::{Affine3A, Vec3};

use super::chain::{self, position, MAX_CHAIN_JOINTS};
use super::{check_weight, finite_vec, in_range, IkError, TINY};
use crate::{Skeleton, Trs};

/// Longest frame time one update integrates, seconds.
pub const MAX_DT: f32 = 0.05;
/// Substeps per second of frame time.
pub const SUBSTEP_RATE: f32 = 240.0;
/// Most substeps per update.
pub const MAX_SUBSTEPS: u32 = 8;
/// An endpoint farther than this many segment lengths from its start resets.
pub const RESET_LENGTHS: f32 = 8.0;

/// Settings of one spring chain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spring {
    /// Pull toward the animated target, 1/s² (>= 0).
    pub stiffness: f32,
    /// Velocity damping, 1/s (>= 0).
    pub damping: f32,
    /// Acceleration in component space, units/s² (e.g. (0, -9.81, 0)).
    pub gravity: Vec3,
    /// Blend weight of the simulated pose over the animated one, in [0, 1].
    pub weight: f32,
}

impl Spring {
    pub fn new(stiffness: f32, damping: f32, gravity: Vec3) -> Self {
        Spring {
            stiffness,
            damping,
            gravity,
            weight: 1.0,
        }
    }
}

/// Simulated endpoints and velocities of a chain's segments, carried between updates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringState {
    pub endpoint: [Vec3; MAX_CHAIN_JOINTS],
    pub velocity: [Vec3; MAX_CHAIN_JOINTS],
    /// False until the first update (which starts from the animated pose) and after [`reset`].
    ///
    /// [`reset`]: SpringState::reset
    pub live: bool,
    /// Segments reset because they went non-finite or strayed, over the state's life.
    pub resets: u32,
}

impl Default for SpringState {
    fn default() -> Self {
        SpringState {
            endpoint: [Vec3::ZERO; MAX_CHAIN_JOINTS],
            velocity: [Vec3::ZERO; MAX_CHAIN_JOINTS],
            live: false,
            resets: 0,
        }
    }
}

impl SpringState {
    /// Forgets the simulation: the next update starts from the animated pose at rest.
    pub fn reset(&mut self) {
        self.live = false;
        self.velocity = [Vec3::ZERO; MAX_CHAIN_JOINTS];
    }

    /// Kinetic energy per unit mass of the segments, plus the spring's potential against the
    /// given targets (for tests and tuning).
    pub fn energy(&self, targets: &[Vec3], stiffness: f32) -> f32 {
        let n = targets.len().min(MAX_CHAIN_JOINTS);
        (0..n)
            .map(|i| {
                0.5 * self.velocity[i].length_squared()
                    + 0.5 * stiffness * (self.endpoint[i] - targets[i]).length_squared()
            })
            .sum()
    }
}

impl Spring {
    fn validate(
        &self,
        skeleton: &Skeleton,
        local: &[Trs],
        component: &[Affine3A],
        joints: &[usize],
        dt: f32,
    ) -> Result<(), IkError> {
        chain::check_pose(skeleton, local, component)?;
        chain::check_chain(skeleton, joints, 2, MAX_CHAIN_JOINTS)?;
        in_range("spring stiffness", self.stiffness, 0.0, f32::MAX, ">= 0")?;
        in_range("spring damping", self.damping, 0.0, f32::MAX, ">= 0")?;
        finite_vec("spring gravity", self.gravity)?;
        in_range("spring frame time", dt, 0.0, f32::MAX, ">= 0")?;
        check_weight("spring weight", self.weight)
    }
}

/// Advances the spring chain `joints` (root first, each an ancestor of the next) by `dt` seconds
/// and writes its pose; returns the number of substeps taken. The first joint stays animated.
pub fn update_spring(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    joints: &[usize],
    spring: &Spring,
    state: &mut SpringState,
    dt: f32,
) -> Result<u32, IkError> {
    spring.validate(skeleton, local, component, joints, dt)?;
    let segments = joints.len() - 1;
    let mut length = [0.0f32; MAX_CHAIN_JOINTS];
    let mut direction = [Vec3::ZERO; MAX_CHAIN_JOINTS];
    for i in 0..segments {
        let d = position(component, joints[i + 1]) - position(component, joints[i]);
        length[i] = d.length();
        direction[i] = d.try_normalize().unwrap_or(Vec3::Y);
    }
    let animated_target = |start: Vec3, i: usize| start + direction[i] * length[i];
    if !state.live {
        let mut start = position(component, joints[0]);
        for i in 0..segments {
            state.endpoint[i] = animated_target(start, i);
            state.velocity[i] = Vec3::ZERO;
            start = state.endpoint[i];
        }
        state.live = true;
    }
    let dt = dt.min(MAX_DT);
    let substeps = ((dt * SUBSTEP_RATE).ceil() as u32).clamp(1, MAX_SUBSTEPS);
    let h = dt / substeps as f32;
    let mut resets = 0;
    for _ in 0..substeps {
        let mut start = position(component, joints[0]);
        let segment = state.endpoint.iter_mut().zip(&mut state.velocity);
        for (i, (endpoint, velocity)) in segment.enumerate().take(segments) {
            let target = animated_target(start, i);
            let (e, v) = (*endpoint, *velocity);
            let a = spring.stiffness * (target - e) - spring.damping * v + spring.gravity;
            let v = v + a * h;
            let e = e + v * h;
            let offset = e - start;
            let stray = offset.length() > RESET_LENGTHS * length[i].max(TINY);
            let (e, v) = match offset.try_normalize() {
                Some(along) if e.is_finite() && v.is_finite() && !stray => {
                    (start + along * length[i], v - along * v.dot(along))
                }
                _ => {
                    resets += 1;
                    (target, Vec3::ZERO)
                }
            };
            *endpoint = e;
            *velocity = v;
            start = e;
        }
    }

    state.resets += resets;

    let original = chain::Saved::of(local, joints);
    chain::lay_bones(
        skeleton,
        local,
        component,
        joints,
        &state.endpoint[..segments],
    );
    original.blend(local, joints, spring.weight);
    chain::rebuild_subtree(skeleton, local, component, joints[0]);
    Ok(substeps)
}
