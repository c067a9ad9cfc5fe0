//! What drives the demo crowd through the [`Animator`]: the state tree ([`Roaming`], the
//! default for the generated character) or throng-fixtures' formation of fixed per-instance
//! programs ([`FixedPrograms`], for real assets, which have no tree).
//!
//! Members are numbered heroes first (`0..heroes`, posed on the CPU by the caller) and the crowd
//! after them; `ids[k]` is member `k`'s [`MemberId`].
//!
//! Roaming: before each tick every roaming member's `speed` input moves toward a target that
//! its [`Plan`] changes every few seconds (standing, strolling, walking, jogging, running,
//! sprinting), at most [`throng_fixtures::plan::ACCELERATION`] per second, and a third of the
//! members toggle `wave` with their segments. The Animator composes each tick's root motion into
//! the placements; a member whose anchor left the grid's area is moved back across it (a
//! teleport, [`Animator::set_placement`]), so walkers cross the grid and stay in frame. Each
//! member's plan runs on its own clock, a few seconds apart, so the crowd is not in step.

use std::time::Instant;

use glam::{Affine3A, Vec3};
use throng::{Animator, MemberId};
use throng_control::tree::Value;
use throng_cpu_ref::Program;
use throng_fixtures::plan::{Area, Plan};
use throng_fixtures::{Formation as Layout, SplitMix64};

use crate::commands::CliError;

/// Each member's plan clock runs this many ticks ahead: at least the first, fewer than the
/// second, drawn per member.
const PLAN_OFFSET: (usize, usize) = (15, 105);
/// Speed bounds of the mix report: below the first a member stands, from the second it runs
/// (midway between the tree's walk at 1.4 and run at 3.5).
const STANDING: f64 = 0.5;
const RUNNING: f64 = 2.45;

/// What the ticks of one frame cost and did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ControlStats {
    /// CPU time of the frame's ticks: inputs, control (rayon), the hand-off to the retained
    /// instances; for fixed programs, writing and setting the programs.
    pub ms: f64,
    /// Of which control's tick and the hand-off (the Animator's [`throng::TickTimes`]).
    pub control_ms: f64,
    pub handoff_ms: f64,
    pub instances: usize,
    /// Ticks run before this frame (0 or 1 at 30 Hz ticks and 60 Hz frames).
    pub ticks: u32,
    /// Members by speed input (tree crowd only; zero for fixed programs).
    pub standing: usize,
    pub walking: usize,
    pub running: usize,
    pub waving: usize,
    /// Scene distance the root motion moved the members in the frame's ticks, summed
    /// (metres; wraps across the area left out).
    pub travelled: f64,
    /// `--locomotion paths`: the members' distance from where their curves are at each tick's
    /// end, mean and largest over the frame's ticks (metres).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub off_course_m: Option<OffCourse>,
}

impl ControlStats {
    /// Counts a tree tick that began at `start`: its time and the Animator's split of it.
    pub fn add_tick(&mut self, animator: &Animator, start: Instant) {
        let times = animator.tick_times();
        self.control_ms += times.control.as_secs_f64() * 1e3;
        self.handoff_ms += times.handoff.as_secs_f64() * 1e3;
        self.ms += start.elapsed().as_secs_f64() * 1e3;
        self.ticks += 1;
    }
}

/// Distances of members from their courses: mean and largest, metres.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct OffCourse {
    pub mean: f64,
    pub max: f64,
}

/// The crowd driven by the state tree: plans feeding its inputs, and the area members roam.
pub struct Roaming {
    pub plans: Vec<Plan>,
    /// Per member, its plan clock's head start (seconds).
    offsets: Vec<f64>,
    speed: u16,
    wave: Option<u16>,
    /// Component-space point whose scene position is kept inside `area`.
    anchor: Vec3,
    pub area: Area,
    /// Scene anchors before the tick, for the distance travelled.
    before: Vec<Vec3>,
    /// Ticks run, and the tick period (seconds).
    ticks: u64,
    period: f64,
}

impl Roaming {
    /// Plans for `members` members of which the first `heroes` stand still, over `layout`'s
    /// grid; the tree's inputs looked up on `animator`'s character.
    pub fn new(
        animator: &Animator,
        character: throng::CharacterId,
        layout: &Layout,
        members: usize,
        heroes: usize,
    ) -> Result<Roaming, CliError> {
        let ctl = animator
            .controller(character)
            .ok_or_else(|| control("the character has no state tree"))?;
        let speed = (ctl.tree.input("speed"))
            .ok_or_else(|| control("it declares no input 'speed' for the members' pace"))?;
        let anchor = layout.ground.inverse().transform_point3(Vec3::ZERO);
        let period = ctl.period;
        Ok(Roaming {
            plans: (0..members).map(|i| Plan::new(i, i >= heroes)).collect(),
            offsets: (0..members)
                .map(|i| {
                    let (lo, hi) = PLAN_OFFSET;
                    (lo + SplitMix64::new(i as u64 ^ 0x009e_e011).index(hi - lo)) as f64 * period
                })
                .collect(),
            speed,
            wave: ctl.tree.input("wave"),
            anchor,
            area: area(layout, anchor),
            before: vec![Vec3::ZERO; members],
            ticks: 0,
            period,
        })
    }

    /// One tick: inputs from the plans, members out of the area moved back in, the Animator's
    /// tick. A failed member is an error.
    pub fn tick(
        &mut self,
        animator: &mut Animator,
        ids: &[MemberId],
        stats: &mut ControlStats,
    ) -> Result<(), CliError> {
        let start = Instant::now();
        let period = self.period;
        let clock = self.ticks as f64 * period;
        for (k, (plan, &id)) in self.plans.iter_mut().zip(ids).enumerate() {
            plan.advance(clock + self.offsets[k], period);
            let set = |a: &mut Animator, input, v| a.set_input_at(id, input, v).map_err(control);
            set(animator, self.speed, Value::Float(plan.speed))?;
            if let Some(wave) = self.wave {
                set(animator, wave, Value::Bool(plan.wave))?;
            }
            let Some(p) = animator.placement(id) else {
                continue;
            };
            let at = p.transform_point3(self.anchor);
            let shift = self.area.wrap(at);
            if plan.roams && shift != Vec3::ZERO {
                let moved = Affine3A::from_translation(shift) * p;
                animator.set_placement(id, &moved).map_err(control)?;
                self.before[k] = at + shift;
            } else {
                self.before[k] = at;
            }
        }
        animator.tick().map_err(control)?;
        self.ticks += 1;
        for (&id, before) in ids.iter().zip(&self.before) {
            if let Some(p) = animator.placement(id) {
                stats.travelled += f64::from(p.transform_point3(self.anchor).distance(*before));
            }
        }
        stats.add_tick(animator, start);
        Ok(())
    }

    /// The plans' mix into `stats`.
    pub fn count(&self, stats: &mut ControlStats) {
        stats.instances = self.plans.len();
        for plan in &self.plans {
            match plan.speed {
                s if s < STANDING => stats.standing += 1,
                s if s < RUNNING => stats.walking += 1,
                _ => stats.running += 1,
            }
            stats.waving += usize::from(plan.wave);
        }
    }
}

fn control(e: impl std::fmt::Display) -> CliError {
    CliError::Control(format!("demo state tree: {e}"))
}

/// The grid's area: every member's anchor, grown by half a cell on each side.
pub(super) fn area(layout: &Layout, anchor: Vec3) -> Area {
    let half = Vec3::new(0.5, 0.0, 0.5) * layout.spacing;
    let (min, max) =
        layout
            .members
            .iter()
            .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), m| {
                let p = m.placement.transform_point3(anchor);
                (lo.min(p), hi.max(p))
            });
    Area {
        min: (min - half) * Vec3::new(1.0, 0.0, 1.0),
        max: (max + half) * Vec3::new(1.0, 0.0, 1.0),
    }
}

/// Fixed programs: a formation for the members after the heroes, and a second one of
/// `heroes` members for the heroes' programs; crowd time advances by the tick period.
pub struct FixedPrograms {
    layout: Layout,
    heroes: Layout,
    program: Program,
}

impl FixedPrograms {
    pub fn new(layout: Layout, heroes: Layout) -> FixedPrograms {
        FixedPrograms {
            layout,
            heroes,
            program: Program::default(),
        }
    }

    /// Sets every member's program at crowd time `time` (seconds), then ticks.
    pub fn tick(
        &mut self,
        animator: &mut Animator,
        ids: &[MemberId],
        time: f64,
        stats: &mut ControlStats,
    ) -> Result<(), CliError> {
        let start = Instant::now();
        let h = self.heroes.members.len();
        for (k, &id) in ids.iter().enumerate() {
            match k.checked_sub(h) {
                None => self.heroes.program(k, time, &mut self.program),
                Some(i) => self.layout.program(i, time, &mut self.program),
            }
            (animator.set_program(id, &self.program))
                .map_err(|e| CliError::Control(format!("demo member {k}: {e}")))?;
        }
        animator
            .tick()
            .map_err(|e| CliError::Control(e.to_string()))?;
        let times = animator.tick_times();
        stats.handoff_ms += times.handoff.as_secs_f64() * 1e3;
        stats.ms += start.elapsed().as_secs_f64() * 1e3;
        stats.instances = ids.len();
        stats.ticks += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::builtin_character;

    /// The area holds every member's anchor with half a cell to spare, and wrapping moves an
    /// anchor that left it back by the area's width or depth.
    #[test]
    fn the_area_holds_the_grid_and_wraps_a_member_that_left_it_across() {
        let mut package = builtin_character().unwrap();
        let layout = Layout::new(&mut package, 0, 24).unwrap();
        let anchor = layout.ground.inverse().transform_point3(Vec3::ZERO);
        let area = area(&layout, anchor);
        for m in &layout.members {
            let p = m.placement.transform_point3(anchor);
            assert_eq!(area.wrap(p), Vec3::ZERO, "{p} is inside {area:?}");
        }
        let size = area.max - area.min;
        let out = Vec3::new(area.max.x + 0.1, 0.0, area.min.z + 0.5 * size.z);
        let shift = area.wrap(out);
        assert!((shift.x + size.x).abs() < 1e-4 && shift.z == 0.0, "{shift}");
    }
}
