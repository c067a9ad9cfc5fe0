//! `throng demo --locomotion paths`: the crowd walks curved paths by motion matching
//! (docs/motion-matching.md). Every member runs the locomotion tree
//! (fixtures/trees/locomotion.toml) on a package whose motion database holds the shared CMU BVH
//! walks and runs, steered as `throng follow` steers ([`steer`]) along a circle about the
//! crowd's centre through its spawn point, counter-clockwise seen from above.
//!
//! The whole crowd turns as one (every member at the same angular speed), so no two members
//! meet: every [`CYCLE`] seconds it stands, speeds up, holds, slows and stands again, the
//! outermost member at most [`TOP_SPEED`] m/s and the inner ones slower on tighter curves, so one
//! run shows standing, starts, walks and runs on curves of every radius, and stops. Heroes stand.

use std::time::Instant;

use glam::{Affine3A, DVec2, Quat, Vec3};
use throng::{Animator, MemberId};
use throng_control::tree::Value;
use throng_fixtures::Formation as Layout;

use super::super::steer::{steer, yaw_of, Course};
use super::drive::{ControlStats, OffCourse};
use crate::commands::CliError;

/// Seconds of one stand, speed up, hold, slow down cycle ...
const CYCLE: f64 = 12.0;
/// ... its phases' ends: standing until the first, speeding up until the second, holding until
/// the third, slowing until the fourth, standing to the end.
const PHASES: [f64; 4] = [1.5, 3.5, 9.0, 11.0];
/// The outermost member's speed at the hold, m/s (the database's runs reach about 3.5).
const TOP_SPEED: f64 = 3.0;
/// Speed bounds of the mix report (as the roaming crowd's).
const STANDING: f64 = 0.5;
const RUNNING: f64 = 2.45;

/// The share of full angular speed at time `t` (seconds) and its integral from 0.
fn speed_profile(t: f64) -> (f64, f64) {
    let [a, b, c, d] = PHASES;
    let per_cycle = (b - a) / 2.0 + (c - b) + (d - c) / 2.0;
    let cycles = (t / CYCLE).floor();
    let u = t - cycles * CYCLE;
    let (share, within) = if u < a {
        (0.0, 0.0)
    } else if u < b {
        let x = (u - a) / (b - a);
        (x, (u - a) * x / 2.0)
    } else if u < c {
        (1.0, (b - a) / 2.0 + (u - b))
    } else if u < d {
        let x = (d - u) / (d - c);
        (x, per_cycle - (d - u) * x / 2.0)
    } else {
        (0.0, per_cycle)
    };
    (share, cycles * per_cycle + within)
}

/// One member's circle: centre, radius (m) and the angle at time 0 (radians, as
/// [`yaw_of`] measures an offset from the centre), at `omega` rad/s at full speed.
struct Circle {
    centre: DVec2,
    radius: f64,
    angle: f64,
    omega: f64,
}

impl Course for Circle {
    fn at(&self, t: f64) -> DVec2 {
        let a = self.angle + self.omega * speed_profile(t).1;
        self.centre + self.radius * DVec2::new(a.sin(), a.cos())
    }

    fn velocity(&self, t: f64) -> DVec2 {
        let (share, turned) = speed_profile(t);
        let a = self.angle + self.omega * turned;
        self.radius * self.omega * share * DVec2::new(a.cos(), -a.sin())
    }
}

/// The crowd on its circles.
pub struct Paths {
    circles: Vec<Circle>,
    /// The tree's `velocity_x`, `velocity_z` and `turn` inputs.
    inputs: [u16; 3],
    /// Component-space point whose scene position is the member's place on its circle.
    anchor: Vec3,
    before: Vec<Vec3>,
    ticks: u64,
    period: f64,
}

impl Paths {
    /// Circles for `layout`'s members about its centre, heroes (the first `heroes` of
    /// `placements`) standing where they are; the spawn placements (each member facing along
    /// its circle) and the driver.
    pub fn new(
        animator: &Animator,
        character: throng::CharacterId,
        layout: &Layout,
        heroes: &[Affine3A],
    ) -> Result<(Vec<Affine3A>, Paths), CliError> {
        let ctl = animator
            .controller(character)
            .ok_or_else(|| control("the character has no state tree"))?;
        let input = |name: &str| {
            (ctl.tree.input(name))
                .ok_or_else(|| control(format!("the locomotion tree has no input '{name}'")))
        };
        let inputs = [input("velocity_x")?, input("velocity_z")?, input("turn")?];
        let anchor = layout.ground.inverse().transform_point3(Vec3::ZERO);
        let ground = |p: Vec3| DVec2::new(f64::from(p.x), f64::from(p.z));
        let spots: Vec<DVec2> = (layout.members.iter())
            .map(|m| ground(m.placement.transform_point3(anchor)))
            .collect();
        let centre = spots.iter().sum::<DVec2>() / spots.len().max(1) as f64;
        let widest = spots.iter().map(|p| p.distance(centre)).fold(0.0, f64::max);
        let omega = TOP_SPEED / widest.max(1.0);
        let mut circles = Vec::with_capacity(heroes.len() + spots.len());
        let mut placements = Vec::with_capacity(circles.capacity());
        for h in heroes {
            circles.push(Circle {
                centre: ground(h.transform_point3(anchor)),
                radius: 0.0,
                angle: 0.0,
                omega,
            });
            placements.push(*h);
        }
        for p in spots {
            let angle = yaw_of(p - centre);
            let tangent = DVec2::new(angle.cos(), -angle.sin());
            let facing = Quat::from_rotation_y(yaw_of(tangent) as f32);
            let at = Vec3::new(p.x as f32, 0.0, p.y as f32);
            placements.push(Affine3A::from_rotation_translation(facing, at) * layout.ground);
            circles.push(Circle {
                centre,
                radius: p.distance(centre),
                angle,
                omega,
            });
        }
        let members = circles.len();
        Ok((
            placements,
            Paths {
                circles,
                inputs,
                anchor,
                before: vec![Vec3::ZERO; members],
                ticks: 0,
                period: ctl.period,
            },
        ))
    }

    /// One tick: each member steered toward where its circle is at the tick's end, then the
    /// Animator's tick. A failed member is an error.
    pub fn tick(
        &mut self,
        animator: &mut Animator,
        ids: &[MemberId],
        stats: &mut ControlStats,
    ) -> Result<(), CliError> {
        let start = Instant::now();
        let ahead = (self.ticks + 1) as f64 * self.period;
        for (k, &id) in ids.iter().enumerate() {
            let Some(p) = animator.placement(id) else {
                continue;
            };
            let at = p.transform_point3(self.anchor);
            self.before[k] = at;
            // Steered from its anchor (the ground point under it), facing its component +Z.
            let here = Affine3A {
                translation: at.into(),
                ..p
            };
            for (&input, v) in self
                .inputs
                .iter()
                .zip(steer(&self.circles[k], ahead, &here))
            {
                (animator.set_input_at(id, input, Value::Float(v))).map_err(control)?;
            }
        }
        animator.tick().map_err(control)?;
        self.ticks += 1;
        let (mut sum, mut max) = (0.0, 0.0f64);
        for ((&id, before), circle) in ids.iter().zip(&self.before).zip(&self.circles) {
            if let Some(p) = animator.placement(id) {
                let at = p.transform_point3(self.anchor);
                stats.travelled += f64::from(at.distance(*before));
                let off = circle
                    .at(ahead)
                    .distance(DVec2::new(f64::from(at.x), f64::from(at.z)));
                sum += off;
                max = max.max(off);
            }
        }
        // Over the frame's ticks: the mean of each tick's mean, the largest of all.
        let tick = OffCourse {
            mean: sum / ids.len().max(1) as f64,
            max,
        };
        let ticks = f64::from(stats.ticks);
        stats.off_course_m = Some(match stats.off_course_m {
            None => tick,
            Some(o) => OffCourse {
                mean: (o.mean * ticks + tick.mean) / (ticks + 1.0),
                max: o.max.max(tick.max),
            },
        });
        stats.add_tick(animator, start);
        Ok(())
    }

    /// The corners (scene, y = 0) of the ground the circles cover.
    pub fn area(&self) -> (Vec3, Vec3) {
        let (lo, hi) = (self.circles.iter())
            .fold((DVec2::INFINITY, DVec2::NEG_INFINITY), |(lo, hi), c| {
                (lo.min(c.centre - c.radius), hi.max(c.centre + c.radius))
            });
        let corner = |p: DVec2| Vec3::new(p.x as f32, 0.0, p.y as f32);
        (corner(lo), corner(hi))
    }

    /// The members' mix by the speed their circles ask for now into `stats`.
    pub fn count(&self, stats: &mut ControlStats) {
        let now = self.ticks as f64 * self.period;
        stats.instances = self.circles.len();
        for c in &self.circles {
            match c.velocity(now).length() {
                s if s < STANDING => stats.standing += 1,
                s if s < RUNNING => stats.walking += 1,
                _ => stats.running += 1,
            }
        }
    }
}

fn control(e: impl std::fmt::Display) -> CliError {
    CliError::Control(format!("demo locomotion: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The profile's share stays in [0, 1] and its integral is the sum of its steps: the
    /// circles' positions and velocities agree.
    #[test]
    fn the_speed_profile_integrates_to_the_distance_turned() {
        let dt = 1e-3;
        let mut sum = 0.0;
        for k in 0..(2.0 * CYCLE / dt) as usize {
            let t = k as f64 * dt;
            let (share, turned) = speed_profile(t);
            assert!((0.0..=1.0).contains(&share), "{share} at {t}");
            assert!((turned - sum).abs() < 1e-2, "{turned} against {sum} at {t}");
            sum += speed_profile(t + dt / 2.0).0 * dt;
        }
        let c = Circle {
            centre: DVec2::new(1.0, -2.0),
            radius: 5.0,
            angle: 0.3,
            omega: 0.4,
        };
        for t in [2.0, 5.0, 10.0, 15.5] {
            let numeric = (c.at(t + dt) - c.at(t - dt)) / (2.0 * dt);
            assert!((numeric - c.velocity(t)).length() < 1e-3, "at {t}");
        }
    }
}
