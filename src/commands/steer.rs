//! Steering a motion-matched agent along a course, as a game would feed the locomotion tree
//! (fixtures/trees/locomotion.toml): each tick it reads where the course is and where it goes,
//! asks for the course's velocity plus a pull toward the course's point ([`PULL_TIME`]), turned
//! into its own frame, and the turn toward the course's direction. `throng follow` and
//! `throng demo --locomotion paths` steer this way.

use glam::{Affine3A, DVec2, Vec3};

/// Seconds over which the agent asks to close its distance to the course's point.
const PULL_TIME: f64 = 0.5;
/// Fastest the agent asks to move, m/s.
const MAX_SPEED: f64 = 6.0;
/// The course's direction counts where it moves at least this fast (m/s).
pub const MOVING: f64 = 0.2;

/// Seconds ahead a course's next rest is looked for ([`stop_distance`]), and how long it must
/// then stay slower than [`MOVING`] to count.
const REST_AHEAD: f64 = 2.0;
pub const REST_HOLD: f64 = 0.5;

/// Where an agent should be on the ground plane (x, z, metres) at a time (seconds).
pub trait Course {
    fn at(&self, t: f64) -> DVec2;
    /// m/s.
    fn velocity(&self, t: f64) -> DVec2;
    /// Seconds the course lasts (it holds still after).
    fn duration(&self) -> f64 {
        f64::INFINITY
    }

    /// Where the course comes to rest next, looking [`REST_AHEAD`] seconds on from `t`: the
    /// first time it moves slower than [`MOVING`] and stays so for [`REST_HOLD`] (or to its
    /// end), its point then; none while it keeps moving.
    fn rest_ahead(&self, t: f64) -> Option<DVec2> {
        let step = 1.0 / 30.0;
        let slow = |u: f64| u >= self.duration() || self.velocity(u).length() < MOVING;
        (0..=(REST_AHEAD / step) as usize)
            .map(|k| t + k as f64 * step)
            .find(|&u| (0..=(REST_HOLD / step) as usize).all(|j| slow(u + j as f64 * step)))
            .map(|u| self.at(u + REST_HOLD))
    }
}

/// Yaw (radians about +Y) of a ground-plane direction (x, z); +Z is 0.
pub fn yaw_of(d: DVec2) -> f64 {
    d.x.atan2(d.y)
}

/// `a` wrapped into [-π, π).
pub fn wrap(a: f64) -> f64 {
    (a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI
}

/// The ground position and yaw of an agent placed by `placement` (component +Z forward).
pub fn ground_pose(placement: &Affine3A) -> (DVec2, f64) {
    let p = placement.translation;
    let f = placement.transform_vector3(Vec3::Z);
    (
        DVec2::new(f64::from(p.x), f64::from(p.z)),
        yaw_of(DVec2::new(f64::from(f.x), f64::from(f.z))),
    )
}

/// The locomotion tree's inputs `[velocity_x, velocity_z, turn]` for an agent at `placement`
/// heading for where `course` is at time `ahead` (the tick's end): velocity in the agent's frame
/// (m/s, at most [`MAX_SPEED`]), turn toward the course's direction (radians; 0 where the course
/// moves slower than [`MOVING`]).
pub fn steer(course: &impl Course, ahead: f64, placement: &Affine3A) -> [f64; 3] {
    let (here, yaw) = ground_pose(placement);
    let velocity = course.velocity(ahead);
    let want = (velocity + (course.at(ahead) - here) / PULL_TIME).clamp_length_max(MAX_SPEED);
    let (s, c) = yaw.sin_cos();
    let local = DVec2::new(c * want.x - s * want.y, s * want.x + c * want.y);
    let turn = if velocity.length() >= MOVING {
        wrap(yaw_of(velocity) - yaw)
    } else {
        0.0
    };
    [local.x, local.y, turn]
}

/// The locomotion tree's `stop_distance` input for an agent at `placement` heading for where
/// `course` is at time `ahead`: its ground distance (m) to where the course next rests
/// ([`Course::rest_ahead`]), or -1 while the course keeps moving.
pub fn stop_distance(course: &impl Course, ahead: f64, placement: &Affine3A) -> f64 {
    let (here, _) = ground_pose(placement);
    course
        .rest_ahead(ahead)
        .map_or(-1.0, |rest| rest.distance(here))
}
