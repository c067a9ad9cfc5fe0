//! The game table (`throng bench --game`): a game's loop through the embedding API
//! (throng-animator): the generated character's crowd tree ticked at 30 Hz, frames presented at
//! 60 Hz (two per tick, at alpha 0.5 and 1), seen by a camera that frames the crowd (culling,
//! skeleton and mesh LOD, the skinned budget of the demo). Members follow the demo's plans
//! (`throng_fixtures::plan`: a speed target every few seconds, ramped; a third wave), so
//! transitions happen at the tree's natural rate, and roam wrapped inside the grid.
//!
//! Per instance and rendered frame: `tick_ns`, the control tick's share (the tick runs once
//! per two frames); `host_ns`, the rest of the CPU's work for the frame (the tick's hand-off
//! to the retained instances and the frame's present call: staging, uploads, recording,
//! submission); `upload_bytes`. Beside them the GPU's pose pass and whole frame (every compute
//! pass) from timestamps, and the CPU reference's one-clip pose of one instance measured in
//! the same run as the yardstick. A row per instance count on one thread (a pool of one) and
//! on the rayon pool.

use std::time::Instant;

use glam::{Affine3A, Vec3};
use serde::Serialize;
use throng_animator::{Animator, AnimatorOptions, MemberId, View};
use throng_control::tree::Value;
use throng_fixtures::plan::{Area, Plan};
use throng_fixtures::Formation;
use throng_gpu::raster::Scene;
use throng_gpu::GpuContext;

use crate::control::{one_thread_pool, pose_ns_per_instance};
use crate::timing::{median, ms_since};
use crate::{BenchError, Options, Subject};

/// Instance counts of the game table.
pub const GAME_INSTANCES: [usize; 2] = [10_000, 100_000];
/// Control ticks and rendered frames per second.
const TICK_HZ: f64 = 30.0;
const FRAMES_PER_TICK: usize = 2;
/// The demo's skinned budget.
const SKINNED_BUDGET: u32 = 2048;
/// Ticks run before the timed ones (pipelines built, the crowd under way).
const WARM_UP_TICKS: usize = 8;
/// The image the camera renders.
const VIEW: (u32, u32) = (1280, 720);

/// One row of the game table.
#[derive(Clone, Debug, Serialize)]
pub struct GameRow {
    pub subject: String,
    pub instances: usize,
    /// Threads of the CPU's work: 1, or the rayon pool's.
    pub threads: usize,
    pub ticks: usize,
    pub frames: usize,
    /// Per instance per rendered frame, ns: the control tick's share, and the rest of the
    /// CPU's work (hand-off and present).
    pub tick_ns: f64,
    pub host_ns: f64,
    /// `host_ns` in parts: the tick's hand-off, and of the present call its uploads and
    /// recording, and wgpu's submission (the rest is planning).
    pub handoff_ns: f64,
    pub record_ns: f64,
    pub submit_ns: f64,
    /// Bytes uploaded per instance per rendered frame.
    pub upload_bytes: f64,
    /// The GPU's pose pass and whole frame (every compute pass), median ms per frame; 0
    /// without timestamps.
    pub gpu_pose_ms: f64,
    pub gpu_frame_ms: f64,
    /// The CPU reference's one-clip pose of one instance (one thread, same run), ns.
    pub cpu_pose_ns: f64,
    /// `host_ns` and `tick_ns` over `cpu_pose_ns`.
    pub host_over_pose: f64,
    pub tick_over_pose: f64,
    /// Of the last frame: members visible and skinned.
    pub visible: u64,
    pub skinned: u64,
    /// Dispatches of the last frame.
    pub dispatches: usize,
}

/// The game table for the generated character `subject` at `counts`.
pub fn run(
    ctx: &GpuContext,
    subject: &Subject,
    counts: &[usize],
    options: &Options,
    mut on_row: impl FnMut(&GameRow),
) -> Result<Vec<GameRow>, BenchError> {
    let unusable = |why: String| BenchError::Unusable {
        subject: subject.name.clone(),
        why,
    };
    let pose_ns = pose_ns_per_instance(subject, options)?;
    let one = one_thread_pool(subject)?;
    let mut rows = Vec::new();
    for &n in counts {
        for threads in [1, rayon::current_num_threads()] {
            let mut game = Game::new(ctx, subject, n).map_err(|e| unusable(e.to_string()))?;
            let row = match threads {
                1 => one.install(|| game.measure(options, pose_ns, threads)),
                _ => game.measure(options, pose_ns, threads),
            }
            .map_err(|e| unusable(e.to_string()))?;
            on_row(&row);
            rows.push(row);
        }
    }
    Ok(rows)
}

/// One crowd under way.
struct Game {
    subject: String,
    animator: Animator,
    plans: Vec<Plan>,
    area: Area,
    speed: u16,
    wave: u16,
    /// Seconds of crowd time.
    clock: f64,
    /// Dispatches of the last frame.
    dispatches: usize,
}

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// What one tick and its frames cost: ms of the control tick, of the CPU's other work (and of
/// its parts), bytes uploaded, and per frame the GPU's pose and whole-frame ms.
#[derive(Default)]
struct TickCost {
    control: f64,
    host: f64,
    handoff: f64,
    record: f64,
    submit: f64,
    bytes: u64,
    gpu: Vec<(f64, f64)>,
}

impl Game {
    fn new(ctx: &GpuContext, subject: &Subject, n: usize) -> Result<Game, Failure> {
        let mut package = subject.package.clone();
        let grid = Formation::new(&mut package, 0, n)?;
        let tree = (throng_fixtures::CROWD_TREE, "crowd.toml");
        let options = AnimatorOptions {
            capacity: n as u32,
            skinned_budget: Some(SKINNED_BUDGET),
            ..AnimatorOptions::default()
        };
        let mut animator = Animator::crowd(
            ctx,
            package,
            subject.skeleton,
            tree,
            &grid.placements(),
            options,
        )?;
        let aspect = VIEW.0 as f32 / VIEW.1 as f32;
        let scene = Scene::framing(&grid.bounds(), aspect, grid.spacing);
        animator.set_view(Some(View {
            camera: scene.camera,
            width: VIEW.0,
            height: VIEW.1,
        }));
        let ctl = animator
            .controller(throng_animator::CharacterId(0))
            .ok_or("no controller")?;
        let input = |name| ctl.tree.input(name).ok_or(format!("no input '{name}'"));
        let (speed, wave) = (input("speed")?, input("wave")?);
        let bounds = grid.bounds();
        Ok(Game {
            subject: subject.name.clone(),
            animator,
            plans: (0..n).map(|i| Plan::new(i, true)).collect(),
            area: Area {
                min: bounds.min,
                max: bounds.max,
            },
            speed,
            wave,
            clock: 0.0,
            dispatches: 0,
        })
    }

    /// The next tick's inputs (and the members that left the area wrapped back in): untimed,
    /// a game's own work.
    fn inputs(&mut self) -> Result<(), Failure> {
        let dt = 1.0 / TICK_HZ;
        self.clock += dt;
        for (i, plan) in self.plans.iter_mut().enumerate() {
            plan.advance(self.clock, dt);
            let m = MemberId(i as u32);
            self.animator
                .set_input_at(m, self.speed, Value::Float(plan.speed))?;
            self.animator
                .set_input_at(m, self.wave, Value::Bool(plan.wave))?;
            if let Some(p) = self.animator.placement(m) {
                let back = self.area.wrap(Vec3::from(p.translation));
                if back != Vec3::ZERO {
                    let moved = Affine3A::from_translation(back) * p;
                    self.animator.set_placement(m, &moved)?;
                }
            }
        }
        Ok(())
    }

    /// One tick and its frames.
    fn tick(&mut self) -> Result<TickCost, Failure> {
        self.inputs()?;
        self.animator.tick()?;
        let times = self.animator.tick_times();
        let handoff = times.handoff.as_secs_f64() * 1e3;
        let mut cost = TickCost {
            control: times.control.as_secs_f64() * 1e3,
            host: handoff,
            handoff,
            ..TickCost::default()
        };
        for k in 1..=FRAMES_PER_TICK {
            let start = Instant::now();
            let report = self.animator.present(k as f32 / FRAMES_PER_TICK as f32)?;
            cost.host += ms_since(start);
            cost.record += report.record_ms;
            cost.submit += report.submit_ms;
            cost.bytes += report.upload_bytes;
            self.dispatches = report.dispatches;
            let t = self.animator.runtime_mut().finish()?;
            let frame = t.decode_ms + t.pose_ms + t.bounds_ms + t.skinning_ms;
            cost.gpu.push((t.pose_ms, frame));
        }
        Ok(cost)
    }

    fn measure(
        &mut self,
        options: &Options,
        pose_ns: f64,
        threads: usize,
    ) -> Result<GameRow, Failure> {
        for _ in 0..WARM_UP_TICKS {
            self.tick()?;
            self.animator.runtime_mut().wait_for_pipelines()?;
        }
        let mut sum = TickCost::default();
        let (mut poses, mut frames) = (Vec::new(), Vec::new());
        let mut ticks = 0;
        let start = Instant::now();
        // At least two ticks, at most the options' frames, within the time budget.
        while ticks < 2
            || (ticks * FRAMES_PER_TICK < options.frames as usize
                && ms_since(start) < options.budget_ms)
        {
            let cost = self.tick()?;
            sum.control += cost.control;
            sum.host += cost.host;
            sum.handoff += cost.handoff;
            sum.record += cost.record;
            sum.submit += cost.submit;
            sum.bytes += cost.bytes;
            for (p, f) in cost.gpu {
                poses.push(p);
                frames.push(f);
            }
            ticks += 1;
        }
        let n = self.plans.len() as f64;
        let rendered = (ticks * FRAMES_PER_TICK) as f64;
        let per = |ms: f64| ms * 1e6 / (n * rendered);
        let (tick_ns, host_ns) = (per(sum.control), per(sum.host));
        let v = self.animator.runtime().visibility();
        Ok(GameRow {
            subject: self.subject.clone(),
            instances: self.plans.len(),
            threads,
            ticks,
            frames: ticks * FRAMES_PER_TICK,
            tick_ns,
            host_ns,
            handoff_ns: per(sum.handoff),
            record_ns: per(sum.record),
            submit_ns: per(sum.submit),
            upload_bytes: sum.bytes as f64 / (n * rendered),
            gpu_pose_ms: median(poses),
            gpu_frame_ms: median(frames),
            cpu_pose_ns: pose_ns,
            host_over_pose: host_ns / pose_ns.max(1e-9),
            tick_over_pose: tick_ns / pose_ns.max(1e-9),
            visible: v.visible,
            skinned: v.skinned,
            dispatches: self.dispatches,
        })
    }
}
