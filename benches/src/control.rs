//! The control table (`throng bench`): one authoritative tick of the crowd tree
//! (`fixtures/trees/crowd.toml`) per instance, on one thread and over rayon, beside the CPU
//! reference's one-clip pose of one instance (program + FK, one thread) measured in the same
//! run. Inputs (`speed`, `wave`) change every tick outside the timed region, as a game's would,
//! so transitions, fades and sync run; only `Crowd::tick` is timed. The socketed rows tick the
//! same tree with three gameplay sockets per instance ([`throng_fixtures::CROWD_SOCKETS`]),
//! evaluated every tick for every instance. The motion-matched rows take turns with a crowd of
//! the crowd tree, whose tick is set beside theirs.

use std::time::Instant;

use serde::Serialize;
use throng_control::crowd::Crowd;
use throng_control::instance::Controller;
use throng_control::tree::Value;
use throng_fixtures::BenchShape;

use crate::timing::{measure, median, ms_since};
use crate::{time_cpu, BenchError, CpuCrowd, Options, Subject};

/// Instance counts of the control table.
pub const CONTROL_INSTANCES: [usize; 3] = [1_000, 10_000, 100_000];
/// Instances of the one-clip pose the tick is set beside.
const POSE_INSTANCES: usize = 1_000;
/// Control ticks per second.
const TICK_HZ: f64 = 30.0;
/// Untimed ticks before each row's timed ones, ms: a crowd's first ticks run cold, and the
/// pool's first ticks after the one-thread row often ran at one thread's speed (its two
/// threads woken onto one core; docs/benchmark.md, "In cache and out"), where `measure`'s one
/// warm-up tick left them in the medians.
const WARM_UP_MS: f64 = 100.0;

/// One row of the control table.
#[derive(Clone, Debug, Serialize)]
pub struct ControlRow {
    pub subject: String,
    /// The tree ticked: `crowd` (fixtures/trees/crowd.toml) or `motion_matching`
    /// (fixtures/trees/locomotion.toml over a database of the shared CMU BVH files).
    pub tree: String,
    pub instances: usize,
    /// Gameplay sockets evaluated per instance and tick (their time is in the tick's).
    pub sockets: usize,
    /// Threads ticking: 1, or the rayon pool's.
    pub threads: usize,
    /// Median tick time per instance, ns, and the ticks timed.
    pub ns_per_instance_tick: f64,
    pub ticks: usize,
    /// The CPU reference's one-clip pose-only frame per instance (one thread), ns.
    pub pose_ns_per_instance: f64,
    /// `ns_per_instance_tick / pose_ns_per_instance`.
    pub tick_over_pose: f64,
    /// Motion-matched rows only: the crowd tree's tick per instance (ns, median) of a crowd of
    /// as many instances taking turns with this row's (two ticks each, the second timed), so
    /// the machine's drift falls on both; `null` in the crowd tree's rows.
    pub crowd_tree_ns_alternated: Option<f64>,
    /// `ns_per_instance_tick / crowd_tree_ns_alternated` (the issue's "≤ 2× the crowd tree's
    /// tick in the same run"); `null` in the crowd tree's rows.
    pub over_crowd_tree: Option<f64>,
}

/// The control table for the generated character `subject` at `counts`: a row per count for
/// one thread and for the rayon pool; then, with `socketed`, the same for that many instances
/// with [`SOCKETS`] sockets each; then, with `matched` and the shared BVH files, the same for that
/// many motion-matched agents.
pub fn run(
    subject: &Subject,
    counts: &[usize],
    socketed: Option<usize>,
    matched: Option<usize>,
    options: &Options,
    mut on_row: impl FnMut(&ControlRow),
) -> Result<Vec<ControlRow>, BenchError> {
    let unusable = |why: String| BenchError::Unusable {
        subject: subject.name.clone(),
        why,
    };
    let controller = |text: &str| {
        let tree =
            throng_control::tree::load(text, "crowd.toml", &subject.package, subject.skeleton)
                .map_err(|e| unusable(e.to_string()))?;
        Controller::new(tree, subject.package.clone(), TICK_HZ, 64)
            .map_err(|e| unusable(e.to_string()))
    };
    let crowd_ctl = controller(throng_fixtures::CROWD_TREE)?;
    let pose_ns = pose_ns_per_instance(subject, options)?;
    let one = one_thread_pool(subject)?;
    let mut rows = Vec::new();
    let table = Table {
        subject,
        pose_ns,
        one: &one,
        options,
    };
    for &n in counts {
        let ticked = Ticked::new(&crowd_ctl, n, set_inputs, subject)?;
        table.rows((ticked, "crowd"), None, &mut rows, &mut on_row)?;
    }
    if let Some(n) = socketed {
        let ctl = controller(&throng_fixtures::crowd_tree_with_sockets(SOCKETS))?;
        let ticked = Ticked::new(&ctl, n, set_inputs, subject)?;
        table.rows((ticked, "crowd"), None, &mut rows, &mut on_row)?;
    }
    let Some(matched) = matched else {
        return Ok(rows);
    };
    match matched_package(subject)? {
        Some(package) => {
            let tree = throng_control::tree::load(
                throng_fixtures::LOCOMOTION_TREE,
                "locomotion.toml",
                &package,
                0,
            )
            .map_err(|e| unusable(e.to_string()))?;
            let ctl =
                Controller::new(tree, package, TICK_HZ, 64).map_err(|e| unusable(e.to_string()))?;
            let matched_crowd = Ticked::new(&ctl, matched, set_matched_inputs, subject)?;
            let crowd_tree = Ticked::new(&crowd_ctl, matched, set_inputs, subject)?;
            table.rows(
                (matched_crowd, "motion_matching"),
                Some(crowd_tree),
                &mut rows,
                &mut on_row,
            )?;
        }
        None => eprintln!("note: no motion-matched control rows without the shared BVH files"),
    }
    Ok(rows)
}

/// Instances of `throng bench`'s socketed control rows.
pub const SOCKETED_INSTANCES: usize = 10_000;
/// Sockets per instance in the socketed rows: all of [`throng_fixtures::CROWD_SOCKETS`].
const SOCKETS: usize = throng_fixtures::CROWD_SOCKETS.len();

/// Agents of `throng bench`'s motion-matched control rows.
pub const MATCHED_INSTANCES: usize = 10_000;

/// What every row of the table shares.
struct Table<'a> {
    subject: &'a Subject,
    pose_ns: f64,
    one: &'a rayon::ThreadPool,
    options: &'a Options,
}

/// A crowd of one tree and how its inputs change from tick to tick.
struct Ticked<'a> {
    ctl: &'a Controller,
    crowd: Crowd,
    inputs: Inputs,
    tick: u64,
}

/// Sets a crowd's inputs for a tick, outside the timed region.
type Inputs = fn(&Controller, &mut Crowd, u64) -> Result<(), BenchError>;

impl<'a> Ticked<'a> {
    fn new(
        ctl: &'a Controller,
        n: usize,
        inputs: Inputs,
        subject: &Subject,
    ) -> Result<Ticked<'a>, BenchError> {
        let crowd = Crowd::new(ctl, n).map_err(|e| BenchError::Unusable {
            subject: subject.name.clone(),
            why: e.to_string(),
        })?;
        Ok(Ticked {
            ctl,
            crowd,
            inputs,
            tick: 0,
        })
    }

    /// One tick under the next tick's inputs, on `pool` (else the current rayon pool): its
    /// time, ms.
    fn once(&mut self, pool: Option<&rayon::ThreadPool>) -> Result<f64, BenchError> {
        tick_once(self.ctl, &mut self.crowd, pool, &mut self.tick, self.inputs)
    }
}

impl Table<'_> {
    /// The rows of `ticked`'s crowd (its tree named `tree`), one thread then the pool. With
    /// `alternate`, the two crowds take turns (warm-up and timed alike), so the machine's drift
    /// falls on both, and the other's median is set beside the row's.
    fn rows(
        &self,
        (mut ticked, tree): (Ticked<'_>, &str),
        mut alternate: Option<Ticked<'_>>,
        rows: &mut Vec<ControlRow>,
        on_row: &mut impl FnMut(&ControlRow),
    ) -> Result<(), BenchError> {
        let n = ticked.crowd.instances.len();
        for threads in [1, rayon::current_num_threads()] {
            let pool = (threads == 1).then_some(self.one);
            let warm_up = Instant::now();
            while ms_since(warm_up) < WARM_UP_MS {
                ticked.once(pool)?;
                if let Some(other) = alternate.as_mut() {
                    other.once(pool)?;
                }
            }
            // Alternated, each crowd ticks twice in a row and the second tick is timed: the
            // first brings its state back into the caches the other crowd's tick took.
            let ticks = measure(self.options.frames, self.options.budget_ms, |_| {
                let Some(other) = alternate.as_mut() else {
                    let ms = ticked.once(pool)?;
                    return Ok::<_, BenchError>((ms, (ms, 0.0)));
                };
                ticked.once(pool)?;
                let ms = ticked.once(pool)?;
                other.once(pool)?;
                let other = other.once(pool)?;
                Ok((ms + other, (ms, other)))
            })?;
            let per_instance = |ms: f64| ms * 1e6 / n.max(1) as f64;
            let ns = per_instance(median(ticks.iter().map(|t| t.0)));
            let crowd_tree = alternate
                .as_ref()
                .map(|_| per_instance(median(ticks.iter().map(|t| t.1))));
            let row = ControlRow {
                subject: self.subject.name.clone(),
                tree: tree.into(),
                instances: n,
                sockets: ticked.ctl.tree.sockets.len(),
                threads,
                ns_per_instance_tick: ns,
                ticks: ticks.len(),
                pose_ns_per_instance: self.pose_ns,
                tick_over_pose: ns / self.pose_ns.max(1e-9),
                crowd_tree_ns_alternated: crowd_tree,
                over_crowd_tree: crowd_tree.map(|c| ns / c.max(1e-9)),
            };
            on_row(&row);
            rows.push(row);
        }
        Ok(())
    }
}

/// [`throng_animator::locomotion_character`] of the shared BVH files, or `None` (said) without
/// the shared assets or for another subject.
fn matched_package(subject: &Subject) -> Result<Option<throng_cpu_ref::Package>, BenchError> {
    if subject.name != "character" {
        return Ok(None);
    }
    let Some(dir) = throng_fixtures::shared_dir("mocap/bvh", "the motion-matched control rows")
    else {
        return Ok(None);
    };
    throng_animator::locomotion_character(&dir)
        .map(Some)
        .map_err(|e| BenchError::Unusable {
            subject: "motion database".into(),
            why: e.to_string(),
        })
}

/// A rayon pool of one thread: the tables' one-thread rows.
pub(crate) fn one_thread_pool(subject: &Subject) -> Result<rayon::ThreadPool, BenchError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| BenchError::Unusable {
            subject: subject.name.clone(),
            why: format!("a one-thread pool: {e}"),
        })
}

/// One tick of `crowd` under the next tick's inputs, on `pool` (else the current rayon pool):
/// its time, ms (setting the inputs left out).
fn tick_once(
    ctl: &Controller,
    crowd: &mut Crowd,
    pool: Option<&rayon::ThreadPool>,
    tick: &mut u64,
    inputs: Inputs,
) -> Result<f64, BenchError> {
    inputs(ctl, crowd, *tick)?;
    *tick += 1;
    let start = Instant::now();
    match pool {
        Some(pool) => pool.install(|| crowd.tick(ctl)),
        None => crowd.tick(ctl),
    }
    let ms = ms_since(start);
    match crowd.failures().next() {
        Some((id, e)) => Err(BenchError::Unusable {
            subject: "crowd tree".into(),
            why: format!("instance {id}'s tick: {e}"),
        }),
        None => Ok(ms),
    }
}

/// Each instance's `speed` (0 to 6 in steps, changing every tick) and `wave` (a third of the
/// instances, in spans of 20 ticks) for tick `tick`.
fn set_inputs(ctl: &Controller, crowd: &mut Crowd, tick: u64) -> Result<(), BenchError> {
    let unusable = |why: String| BenchError::Unusable {
        subject: "crowd tree".into(),
        why,
    };
    let input =
        |name: &str| (ctl.tree.input(name)).ok_or_else(|| unusable(format!("no input '{name}'")));
    let (speed_input, wave_input) = (input("speed")?, input("wave")?);
    for (i, s) in crowd.instances.iter_mut().enumerate() {
        let speed = ((i as u64 * 37 + tick) % 60) as f64 / 10.0;
        let wave = (i as u64 + tick / 20).is_multiple_of(3);
        let set = ctl
            .set_input_at(s, speed_input, Value::Float(speed))
            .and_then(|()| ctl.set_input_at(s, wave_input, Value::Bool(wave)));
        set.map_err(|e| unusable(e.to_string()))?;
    }
    Ok(())
}

/// The locomotion tree's inputs: each agent asks for a speed from 0 to 3 m/s ahead and a turn
/// of up to ±0.5 rad, changing over seconds.
fn set_matched_inputs(ctl: &Controller, crowd: &mut Crowd, tick: u64) -> Result<(), BenchError> {
    let unusable = |why: String| BenchError::Unusable {
        subject: "locomotion tree".into(),
        why,
    };
    let input =
        |name: &str| (ctl.tree.input(name)).ok_or_else(|| unusable(format!("no input '{name}'")));
    let (vz, turn) = (input("velocity_z")?, input("turn")?);
    for (i, s) in crowd.instances.iter_mut().enumerate() {
        let speed = ((i as u64 * 37 + tick) % 90) as f64 / 30.0;
        let angle = 0.5 * ((i as f64) * 0.37 + tick as f64 / 45.0).sin();
        let set = ctl
            .set_input_at(s, vz, Value::Float(speed))
            .and_then(|()| ctl.set_input_at(s, turn, Value::Float(angle)));
        set.map_err(|e| unusable(e.to_string()))?;
    }
    Ok(())
}

/// The CPU reference's one-clip pose-only frame of [`POSE_INSTANCES`] instances on one
/// thread, per instance, ns.
pub(crate) fn pose_ns_per_instance(
    subject: &Subject,
    options: &Options,
) -> Result<f64, BenchError> {
    let mut set = subject.programs(BenchShape::OneClip, POSE_INSTANCES);
    let mut cpu = CpuCrowd::new(subject, POSE_INSTANCES, 1, 0);
    let timing = time_cpu(subject, &mut set, &mut cpu, options, false, false)?;
    Ok(timing.pose_ms * 1e6 / POSE_INSTANCES as f64)
}
