//! What poses the demo crowd each frame: the state tree through throng-control's crowd driver
//! ([`TreeCrowd`], the default for the generated character) or throng-fixtures' formation of
//! fixed per-instance programs ([`FixedCrowd`], for real assets, which have no tree).
//!
//! Members are numbered heroes first (`0..heroes`, posed on the CPU by the caller) and the crowd
//! after them; both drivers write one [`Program`] and one placement (component space → scene)
//! per member.
//!
//! The tree crowd ticks control at the demo's frame rate (one tick per frame). Before each tick
//! every roaming member's `speed` input moves toward a target that its [`Plan`] changes every
//! few seconds (standing, strolling, walking, jogging, running, sprinting), at most
//! [`ACCELERATION`] per second, and a third of the members toggle `wave` with their segments.
//! After the tick each roaming member's placement composes the root motion control asked for
//! (`placement = placement · delta`, the delta being in the component frame at the tick's
//! start, DESIGN.md §5) and wraps around the grid's area, so walkers cross the grid and stay in
//! frame. Before the first frame each member runs a few seconds of its plan (a different number
//! of ticks each), so the crowd does not start in step.

use std::time::Instant;

use glam::{Affine3A, Vec3};
use throng_control::crowd::Crowd as ControlCrowd;
use throng_control::instance::Controller;
use throng_control::tree::Value;
use throng_cpu_ref::Program;
use throng_fixtures::plan::{Area, Plan};
use throng_fixtures::{Formation as Layout, SplitMix64};

use crate::commands::CliError;

/// Pre-roll ticks before the first frame: at least the first, fewer than the second.
const PREROLL: (usize, usize) = (15, 105);
/// Speed bounds of the mix report: below the first a member stands, from the second it runs
/// (midway between the tree's walk at 1.4 and run at 3.5).
const STANDING: f64 = 0.5;
const RUNNING: f64 = 2.45;

/// What one control step cost and did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ControlStats {
    /// CPU time of the step: inputs, the tick (rayon), root motion and program copies; for the
    /// fixed crowd, writing the programs.
    pub ms: f64,
    pub instances: usize,
    pub ticks: u32,
    /// Members by speed input (tree crowd only; zero for the fixed crowd).
    pub standing: usize,
    pub walking: usize,
    pub running: usize,
    pub waving: usize,
    /// Scene distance the root motion moved the members this step, summed (metres).
    pub travelled: f64,
}

/// The crowd driven by a state tree.
pub struct TreeCrowd {
    pub ctl: Controller,
    control: ControlCrowd,
    pub plans: Vec<Plan>,
    pub programs: Vec<Program>,
    pub placements: Vec<Affine3A>,
    /// Per member, whether the last tick wrapped it around the area (a teleport).
    pub wrapped: Vec<bool>,
    /// Component-space point whose scene position is kept inside `area`.
    anchor: Vec3,
    pub area: Area,
    inputs: Inputs,
}

/// The tree inputs the demo drives, by index: `speed`, and `wave` where the tree has it.
#[derive(Clone, Copy, Debug)]
struct Inputs {
    speed: u16,
    wave: Option<u16>,
}

impl TreeCrowd {
    /// `heroes` still members at `hero_placements`, then one roaming member per `layout`
    /// member at its grid placement; each pre-rolled a few seconds.
    pub fn new(
        ctl: Controller,
        layout: &Layout,
        hero_placements: &[Affine3A],
    ) -> Result<TreeCrowd, CliError> {
        let count = hero_placements.len() + layout.members.len();
        let inputs = Inputs {
            speed: (ctl.tree.input("speed"))
                .ok_or_else(|| control("it declares no input 'speed' for the members' pace"))?,
            wave: ctl.tree.input("wave"),
        };
        let control = ControlCrowd::new(&ctl, count).map_err(control)?;
        let heroes = hero_placements.len();
        let plans = (0..count).map(|i| Plan::new(i, i >= heroes)).collect();
        let placements: Vec<Affine3A> = hero_placements
            .iter()
            .copied()
            .chain(layout.members.iter().map(|m| m.placement))
            .collect();
        let anchor = layout.ground.inverse().transform_point3(Vec3::ZERO);
        let area = area(layout, anchor);
        let limits = ctl.limits();
        let program = Program {
            ops: Vec::with_capacity(limits.max_ops),
            weights: Vec::with_capacity(limits.max_weights),
        };
        let mut crowd = TreeCrowd {
            ctl,
            control,
            plans,
            programs: vec![program; count],
            placements,
            wrapped: vec![false; count],
            anchor,
            area,
            inputs,
        };
        crowd.preroll()?;
        Ok(crowd)
    }

    /// Ticks member `i` alone `PREROLL.0 + below(..)` times, placements untouched.
    fn preroll(&mut self) -> Result<(), CliError> {
        let (mut scratch, mut out) = (self.ctl.scratch(), self.ctl.output());
        for (i, (s, plan)) in self
            .control
            .instances
            .iter_mut()
            .zip(&mut self.plans)
            .enumerate()
        {
            let ticks =
                PREROLL.0 + SplitMix64::new(i as u64 ^ 0x009e_e011).index(PREROLL.1 - PREROLL.0);
            for _ in 0..ticks {
                set_inputs(&self.ctl, s, plan, self.inputs)?;
                self.ctl.tick(s, &mut scratch, &mut out).map_err(control)?;
            }
        }
        Ok(())
    }

    /// Member `i`'s heaviest clip player of the tree's first region (its base pose: the other
    /// regions overlay or add to it): its clip and clip time (`weights`: scratch of the tree's
    /// player slots), or `None` when no player weighs anything.
    pub fn dominant_clip(&self, i: usize, weights: &mut Vec<f32>) -> Option<(u32, f64)> {
        let s = self.control.instances.get(i)?;
        weights.resize(self.ctl.tree.player_slots(), 0.0);
        self.ctl.player_weights(s, weights);
        let base = 2 * self.ctl.tree.regions.first()?.slots as usize;
        let (k, _) = (weights.iter().enumerate().take(base))
            .filter(|(k, &w)| w > 0.0 && *k < s.players.len())
            .max_by(|a, b| a.1.total_cmp(b.1))?;
        let player = &s.players[k];
        Some((player.clip, player.clip_time()))
    }

    /// One control tick of every member: inputs from the plans, the tick, root motion into the
    /// placements (wrapped into the area), programs copied out. A failed instance is an error.
    pub fn step(&mut self) -> Result<ControlStats, CliError> {
        let start = Instant::now();
        for (s, plan) in self.control.instances.iter_mut().zip(&mut self.plans) {
            set_inputs(&self.ctl, s, plan, self.inputs)?;
        }
        self.control.tick(&self.ctl);
        if let Some((id, e)) = self.control.failures().next() {
            return Err(CliError::Control(format!("demo instance {id}: {e}")));
        }
        let mut stats = ControlStats {
            instances: self.plans.len(),
            ticks: 1,
            ..ControlStats::default()
        };
        for (((p, plan), &(t, q)), wrapped) in self
            .placements
            .iter_mut()
            .zip(&self.plans)
            .zip(&self.control.motion)
            .zip(&mut self.wrapped)
        {
            if !plan.roams {
                continue;
            }
            let moved = *p * Affine3A::from_rotation_translation(q, t);
            stats.travelled += f64::from(p.transform_vector3(t).length());
            let shift = self.area.wrap(moved.transform_point3(self.anchor));
            *wrapped = shift != Vec3::ZERO;
            *p = Affine3A::from_translation(shift) * moved;
        }
        for (i, program) in self.programs.iter_mut().enumerate() {
            self.control.programs.copy_into(i, program);
        }
        for plan in &self.plans {
            match plan.speed {
                s if s < STANDING => stats.standing += 1,
                s if s < RUNNING => stats.walking += 1,
                _ => stats.running += 1,
            }
            stats.waving += usize::from(plan.wave);
        }
        stats.ms = start.elapsed().as_secs_f64() * 1e3;
        Ok(stats)
    }
}

/// Advances `plan` to the instance's clock and writes its inputs.
fn set_inputs(
    ctl: &Controller,
    s: &mut throng_control::instance::InstanceState,
    plan: &mut Plan,
    inputs: Inputs,
) -> Result<(), CliError> {
    plan.advance(s.tick as f64 * ctl.period, ctl.period);
    ctl.set_input_at(s, inputs.speed, Value::Float(plan.speed))
        .map_err(control)?;
    if let Some(wave) = inputs.wave {
        ctl.set_input_at(s, wave, Value::Bool(plan.wave))
            .map_err(control)?;
    }
    Ok(())
}

fn control(e: impl std::fmt::Display) -> CliError {
    CliError::Control(format!("demo state tree: {e}"))
}

/// The grid's area: every member's anchor, grown by half a cell on each side.
fn area(layout: &Layout, anchor: Vec3) -> Area {
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

/// The fixed-program crowd: a formation for the members after the heroes, and a second one of
/// `heroes` members for the heroes' programs; time advances by the frame step.
pub struct FixedCrowd {
    layout: Layout,
    heroes: Layout,
    pub programs: Vec<Program>,
    pub placements: Vec<Affine3A>,
}

impl FixedCrowd {
    pub fn new(layout: Layout, heroes: Layout, hero_placements: &[Affine3A]) -> FixedCrowd {
        let count = heroes.members.len() + layout.members.len();
        let placements = hero_placements
            .iter()
            .copied()
            .chain(layout.members.iter().map(|m| m.placement))
            .collect();
        FixedCrowd {
            layout,
            heroes,
            programs: vec![Program::default(); count],
            placements,
        }
    }

    /// Writes every member's program at crowd time `time` (seconds).
    pub fn step(&mut self, time: f64) -> ControlStats {
        let start = Instant::now();
        let h = self.heroes.members.len();
        let (heroes, crowd) = self.programs.split_at_mut(h);
        for (i, p) in heroes.iter_mut().enumerate() {
            self.heroes.program(i, time, p);
        }
        for (i, p) in crowd.iter_mut().enumerate() {
            self.layout.program(i, time, p);
        }
        ControlStats {
            ms: start.elapsed().as_secs_f64() * 1e3,
            instances: self.programs.len(),
            ..ControlStats::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::builtin_character;
    use throng_cpu_ref::program::op;

    const TREE: &str = throng_fixtures::CROWD_TREE;

    fn tree_crowd(members: usize, heroes: usize) -> TreeCrowd {
        let mut package = builtin_character().unwrap();
        let layout = Layout::new(&mut package, 0, members).unwrap();
        let tree = throng_control::tree::load(TREE, "crowd.toml", &package, 0).unwrap();
        let ctl = Controller::new(tree, package, 30.0, 64).unwrap();
        let still: Vec<Affine3A> = (0..heroes)
            .map(|h| {
                Affine3A::from_translation(Vec3::new(h as f32 * 2.0, 0.0, 20.0)) * layout.ground
            })
            .collect();
        TreeCrowd::new(ctl, &layout, &still).unwrap()
    }

    /// Each roaming member moves by the root motion control asked of it this tick (in the frame
    /// of its placement), forward along the way it faces, by a step that grows with its speed
    /// input (walk 1.4 and run 3.5 m/s at their own pace; a synced blend of the two covers
    /// less than the input says, and root speed varies within a cycle, so the band is loose);
    /// a jump is a wrap by the area's width or depth; heroes stay put; everyone stays inside
    /// the area.
    #[test]
    fn roaming_members_follow_root_motion_and_stay_in_the_area() {
        let mut crowd = tree_crowd(24, 2);
        let forward = crowd
            .placements
            .iter()
            .map(|p| p.transform_vector3(Vec3::Z).normalize())
            .collect::<Vec<_>>();
        let (mut checked, mut wrapped) = (0, 0);
        for _ in 0..90 {
            let before_placements = crowd.placements.clone();
            let before: Vec<Vec3> = crowd
                .placements
                .iter()
                .map(|p| p.transform_point3(crowd.anchor))
                .collect();
            let speeds: Vec<f64> = crowd.plans.iter().map(|p| p.speed).collect();
            let stats = crowd.step().unwrap();
            assert_eq!(
                (
                    stats.instances,
                    stats.standing + stats.walking + stats.running
                ),
                (26, 26)
            );
            let area = crowd.area;
            for (i, p) in crowd.placements.iter().enumerate() {
                let now = p.transform_point3(crowd.anchor);
                if i < 2 {
                    assert_eq!(now, before[i], "hero {i} moved");
                    continue;
                }
                assert!(
                    now.x >= area.min.x
                        && now.x <= area.max.x
                        && now.z >= area.min.z
                        && now.z <= area.max.z,
                    "{now} left {area:?}"
                );
                let step = now - before[i];
                let asked = before_placements[i].transform_vector3(crowd.control.motion[i].0);
                if step.distance(asked) > 1e-4 {
                    wrapped += 1;
                    let size = area.max - area.min;
                    let jump = step - asked;
                    assert!(
                        (jump.x.abs() - size.x).abs() < 1e-3
                            || (jump.z.abs() - size.z).abs() < 1e-3,
                        "member {i} jumped {jump}"
                    );
                    continue;
                }
                let slow = speeds[i].min(crowd.plans[i].speed).min(3.5) as f32 / 30.0;
                let fast = speeds[i].max(crowd.plans[i].speed).min(3.5) as f32 / 30.0;
                if slow > 0.02 {
                    assert!(
                        step.normalize().dot(forward[i]) > 0.99,
                        "member {i} steps {step} facing {}",
                        forward[i]
                    );
                    assert!(
                        step.length() > 0.3 * slow && step.length() < 1.5 * fast,
                        "member {i}: step {step} at speed {}",
                        speeds[i]
                    );
                    checked += 1;
                }
            }
        }
        assert!(
            checked > 500 && wrapped > 0,
            "{checked} steps checked, {wrapped} wraps"
        );
    }

    #[test]
    fn programs_change_between_ticks_and_show_walks_runs_and_waves() {
        let mut crowd = tree_crowd(40, 0);
        let mut seen = [false; 3];
        for _ in 0..60 {
            let before = crowd.programs.clone();
            let stats = crowd.step().unwrap();
            assert_eq!(stats.instances, 40);
            for (i, p) in crowd.programs.iter().enumerate() {
                assert_ne!(p, &before[i], "member {i}'s program did not change");
                let clip = |name: &str| crowd.ctl.package.find_clip(name).unwrap() as u32;
                let sampled = |c: u32| p.ops.iter().any(|o| o.code == op::SAMPLE && o.a == c);
                seen[0] |= sampled(clip("walk"));
                seen[1] |= sampled(clip("run"));
                seen[2] |= sampled(clip("wave")) && p.ops.iter().any(|o| o.code == op::OVERRIDE);
            }
        }
        assert_eq!(seen, [true; 3], "walk, run, wave sampled");
    }
}
