//! `throng soak`: the generated character's crowd, driven by its state tree and posed on the
//! GPU with CPU heroes (IK), for minutes while things change underneath it. Every
//! `--disturb-every` seconds the next disturbance of a fixed cycle ([`Disturbance`]) happens:
//! the package is replaced live by a re-cooked variant (another profile, the reference
//! encoding, a clip added, then removed again), members are added and removed, a frame over
//! the capacity is submitted on purpose, and a malformed package is offered; the last two must
//! be refused with their typed errors, and the crowd must run on.
//!
//! Every `--check-every` seconds a frame is checked: the control digest of the crowd (ticked on
//! the rayon pool) against a replay of the same inputs and disturbances ticked on one thread,
//! and the GPU's component poses and palettes of a sample of members against the CPU reference
//! (DESIGN.md §6 tolerances; members whose programs use inertialization history are left to the
//! parity suite, since the reference would need every frame's history). Resident memory is
//! sampled every few seconds, allocations and wall time per frame always.
//!
//! The run fails on any divergence, on a disturbance not refused, on resident memory growing
//! after the warm-up while no pipeline compiles, or on allocations per frame growing; a panic
//! fails it too (exit 101).

use std::time::{Duration, Instant};

use glam::{Affine3A, Vec3};
use serde_json::json;
use throng_control::crowd::Crowd;
use throng_control::digest::Digest;
use throng_control::instance::Controller;
use throng_control::tree::Value;
use throng_cook::Profile;
use throng_cpu_ref::program::op;
use throng_cpu_ref::{Evaluator, Package, Program, ProgramLimits};
use throng_gpu::parity::{
    column_angle, component_extent, palette_error, POSITION_TOLERANCE, ROTATION_TOLERANCE,
};
use throng_gpu::{Batch, Capacities, GpuContext, GpuError, Instance, PackageId, Pose, Runtime};

use super::demo::hero::Heroes;
use super::{allocations, print_json, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// How long to run, in minutes.
    #[arg(long, default_value_t = 1.0)]
    minutes: f64,
    /// Members at the start (and the most the crowd grows back to; heroes come on top).
    #[arg(long, default_value_t = 1000)]
    instances: u32,
    /// Hero members, posed on the CPU with IK.
    #[arg(long, default_value_t = 2)]
    heroes: u32,
    /// Seconds between disturbances.
    #[arg(long, default_value_t = 5.0)]
    disturb_every: f64,
    /// Seconds between checked frames (control digest and GPU parity).
    #[arg(long, default_value_t = 5.0)]
    check_every: f64,
    /// Members whose GPU poses each checked frame compares with the CPU reference.
    #[arg(long, default_value_t = 256)]
    sample: usize,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// Control ticks per second; one tick per frame.
const TICK_HZ: f64 = 30.0;
/// Events one member may deliver per tick.
const EVENT_CAPACITY: usize = 16;
/// Members skinned per frame at most: the soak is about the pose path, not fill rate.
const SKINNED_BUDGET: u32 = 256;
/// Seconds between resident-memory samples.
const MEMORY_EVERY: f64 = 5.0;
/// Share of the run that is warm-up at least: memory and allocations are judged after it, and
/// after every variant has been resident and every disturbance has happened once (each brings
/// its own pipelines and buffer sizes).
const WARM_UP: f64 = 0.2;
/// Resident memory may grow, summed over the samples after the warm-up between which no
/// pipeline compiled, at most this much over its level at the warm-up's end (ratio, bytes):
/// package swaps free and reallocate, and the allocator keeps some of what was freed.
const MEMORY_SLACK: (f64, f64) = (1.05, 16.0 * 1024.0 * 1024.0);
/// Least share of the time after the warm-up that must pass between samples with no pipeline
/// compiling for memory to be judged.
const QUIET_SHARE: f64 = 0.25;
/// Share of members added or removed at once.
const CHURN: u32 = 10;
/// Metres between members on the grid.
const SPACING: f32 = 1.5;

/// What happens at a disturbance, in this order, round and round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Disturbance {
    /// The package is replaced by the next variant.
    Replace,
    /// Members are added (with the ids removed members freed).
    Add,
    /// Members are removed (never a hero).
    Remove,
    /// A frame of more instances than the capacity is submitted: it must be refused.
    OverCapacity,
    /// A damaged package is read and a malformed one offered: both must be refused.
    Malformed,
}

const CYCLE: [Disturbance; 6] = [
    Disturbance::Replace,
    Disturbance::Remove,
    Disturbance::OverCapacity,
    Disturbance::Replace,
    Disturbance::Add,
    Disturbance::Malformed,
];

/// One re-cooked variant of the generated character.
struct Variant {
    name: &'static str,
    package: Package,
}

/// The variants a soak cycles through: three profiles, both encodings, and a clip added (a
/// copy of the last clip, appended so that no other clip index moves) and removed again.
fn variants() -> Result<Vec<Variant>, CliError> {
    let glb = throng_fixtures::character_glb();
    let imported = throng_cook::import_slice(&glb, "generated character")?;
    let cook = |profile: &Profile, compressed: bool| -> Result<Package, CliError> {
        let (mut package, mut report) = throng_cook::cook(&imported, profile)?;
        if compressed {
            throng_cook::compress(&mut package, &mut report, profile);
        }
        Ok(package)
    };
    let standard = cook(&Profile::STANDARD, true)?;
    let mut extra = standard.clone();
    if let Some(last) = extra.clips.last().cloned() {
        extra.clips.push(throng_cpu_ref::Clip {
            name: format!("{} copy", last.name),
            ..last
        });
    }
    Ok(vec![
        Variant {
            name: "standard, compressed",
            package: standard,
        },
        Variant {
            name: "crowd, compressed",
            package: cook(&Profile::CROWD, true)?,
        },
        Variant {
            name: "standard, compressed, a clip added",
            package: extra,
        },
        Variant {
            name: "hero, reference encoding",
            package: cook(&Profile::HERO, false)?,
        },
    ])
}

/// The crowd tree bound to `package`.
fn controller(package: &Package) -> Result<Controller, CliError> {
    let control = |e: String| CliError::Control(e);
    let tree = throng_control::tree::load(throng_fixtures::CROWD_TREE, "crowd.toml", package, 0)
        .map_err(|e| control(e.to_string()))?;
    Controller::new(tree, package.clone(), TICK_HZ, EVENT_CAPACITY)
        .map_err(|e| control(e.to_string()))
}

/// Member `id`'s place on a square grid of `side` columns, facing +Z.
fn placement(id: u32, side: u32) -> Affine3A {
    let (x, z) = ((id % side) as f32, (id / side) as f32);
    Affine3A::from_translation(Vec3::new(x * SPACING, 0.0, -z * SPACING))
}

/// A SplitMix64 step: the soak's inputs and choices, the same on every run.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Member inputs for `tick`: each member changes speed and wave every two seconds or so.
fn set_inputs(ctl: &Controller, crowd: &mut Crowd, tick: u64) -> Result<(), CliError> {
    let index = |name: &str| {
        (ctl.tree.input(name))
            .ok_or_else(|| CliError::Control(format!("the soak's tree has no input '{name}'")))
    };
    let (speed_input, wave_input) = (index("speed")?, index("wave")?);
    for s in crowd.instances.iter_mut() {
        let r = mix((u64::from(s.id) << 32) | ((tick + u64::from(s.id)) / 60));
        let speed = (r % 61) as f64 / 10.0;
        let input = |e: throng_control::instance::InputError| CliError::Control(e.to_string());
        ctl.set_input_at(s, speed_input, Value::Float(speed))
            .map_err(input)?;
        ctl.set_input_at(s, wave_input, Value::Bool((r >> 40) & 7 == 0))
            .map_err(input)?;
    }
    Ok(())
}

/// The digest of a crowd's last tick: every program, root motion and event.
fn digest(crowd: &Crowd) -> u64 {
    let mut d = Digest::default();
    for (i, (s, motion)) in crowd.instances.iter().zip(&crowd.motion).enumerate() {
        d.u64(u64::from(s.id));
        let (ops, weights) = crowd.programs.program(i).unwrap_or_default();
        d.program(ops, weights);
        d.motion(*motion);
    }
    crowd.events().for_each(|e| d.event(e));
    d.finish()
}

/// Worst errors of one checked frame.
#[derive(Clone, Copy, Debug, Default)]
struct Worst {
    compared: usize,
    skipped: usize,
    position: f64,
    rotation: f64,
    palette: f64,
}

impl Worst {
    fn pass(&self) -> bool {
        self.position <= POSITION_TOLERANCE
            && self.rotation <= ROTATION_TOLERANCE
            && self.palette <= POSITION_TOLERANCE
    }
    fn max(self, o: Worst) -> Worst {
        Worst {
            compared: self.compared + o.compared,
            skipped: self.skipped + o.skipped,
            position: self.position.max(o.position),
            rotation: self.rotation.max(o.rotation),
            palette: self.palette.max(o.palette),
        }
    }
}

/// Resident memory at one point of the run, and the pipeline compilation around it.
///
/// A specialised pipeline first seen late (a state the crowd reaches for the first time) is
/// compiled then; on a software adapter that is LLVM in this process, whose code and arenas stay
/// resident. The cache holds at most `throng_gpu::pipelines::MAX_PIPELINES`, so that growth is bounded,
/// and memory is judged only between samples with no compilation in between.
#[derive(Clone, Copy)]
struct MemorySample {
    /// Seconds into the run.
    at: f64,
    /// Resident bytes.
    bytes: u64,
    /// Specialised pipelines built so far.
    pipelines: usize,
    /// Whether a pipeline was still compiling when the sample was taken.
    compiling: bool,
}

impl MemorySample {
    /// Whether no pipeline compiled between `self` and the later sample `next`.
    fn quiet_until(&self, next: &MemorySample) -> bool {
        self.pipelines == next.pipelines && !self.compiling && !next.compiling
    }
}

/// Everything the run measured.
#[derive(Default)]
struct Record {
    frames: u64,
    frame_ms: Vec<f64>,
    /// Allocations of each undisturbed, unchecked frame, with the frame's time in the run.
    allocations: Vec<(f64, u64)>,
    memory: Vec<MemorySample>,
    disturbances: Vec<(f64, String)>,
    checks: u64,
    parity: Worst,
    failures: Vec<String>,
    members: (usize, usize),
    /// Seconds into the run when the warm-up ended (`None`: it never did).
    warm: Option<f64>,
}

pub fn run(args: Args) -> Result<(), CliError> {
    if !(args.minutes > 0.0 && args.disturb_every > 0.0 && args.check_every > 0.0) {
        return Err(CliError::Usage(
            "--minutes, --disturb-every and --check-every must be positive".into(),
        ));
    }
    if args.instances == 0 {
        return Err(CliError::Usage("--instances must be at least 1".into()));
    }
    let variants = variants()?;
    let ctx = GpuContext::new().map_err(|e| super::no_gpu("throng soak", e))?;
    let heroes = args.heroes as usize;
    let capacity = args.instances.saturating_add(args.heroes);
    let mut ctl = controller(&variants[0].package)?;
    let capacities = soak_capacities(&variants, capacity, &ctl.limits())?;
    capacities.check(&ctx)?;
    let mut runtime = Runtime::new(&ctx, capacities)?;
    let id = runtime.add_package(&ctl.package)?;
    let mut crowd = Crowd::new(&ctl, capacity as usize).map_err(control)?;
    let mut replay = crowd.clone();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| CliError::Control(format!("a one-thread pool: {e}")))?;
    let side = (f64::from(capacity).sqrt().ceil() as u32).max(1);
    let placements: Vec<Affine3A> = (0..capacity).map(|i| placement(i, side)).collect();
    let hero_places = placements[..heroes].to_vec();
    let mut heroes_cpu = Heroes::new(&ctl.package, 0, ctl.limits(), hero_places)?;
    let limits = capacities.program_limits();
    let mut programs = vec![program_with(&limits); capacity as usize + 1];
    let mut free: Vec<u32> = Vec::new();
    let mut variant = 0;
    let mut record = Record {
        members: (crowd.instances.len(), crowd.instances.len()),
        ..Record::default()
    };
    let run_for = Duration::from_secs_f64(args.minutes * 60.0);
    let mut start = Instant::now();
    let (mut next_disturbance, mut next_check, mut next_memory) =
        (args.disturb_every, args.check_every, 0.0);
    let mut cycle = CYCLE.iter().cycle();
    let (mut resident_variants, mut disturbed) = (vec![false; variants.len()], 0);
    resident_variants[0] = true;
    eprintln!(
        "soak: {} members + {} heroes for {} min on {} (disturbance every {} s, check every {} s)",
        args.instances,
        heroes,
        args.minutes,
        ctx.adapter.name,
        args.disturb_every,
        args.check_every
    );
    while start.elapsed() < run_for {
        let now = start.elapsed().as_secs_f64();
        let frame_start = Instant::now();
        let allocations_before = allocations::total();
        let mut quiet = true;
        if now >= next_disturbance {
            next_disturbance += args.disturb_every;
            quiet = false;
            let d = *cycle.next().unwrap_or(&Disturbance::Replace);
            let what = match d {
                Disturbance::Replace => {
                    variant = (variant + 1) % variants.len();
                    ctl = controller(&variants[variant].package)?;
                    runtime.replace_package(id, &ctl.package)?;
                    format!("package replaced by \"{}\"", variants[variant].name)
                }
                Disturbance::Add => {
                    let n = free.len().min((args.instances / CHURN).max(1) as usize);
                    for id in free.drain(..n) {
                        crowd.add(&ctl, id).map_err(control)?;
                        replay.add(&ctl, id).map_err(control)?;
                    }
                    format!("{n} members added")
                }
                Disturbance::Remove => {
                    let n = (args.instances / CHURN).max(1) as usize;
                    let n = n.min(crowd.instances.len().saturating_sub(heroes + 1));
                    for k in 0..n {
                        let len = crowd.instances.len() - heroes;
                        let i = heroes + (mix(record.frames ^ k as u64) % len as u64) as usize;
                        let gone = crowd.remove(i).map(|s| s.id);
                        let again = replay.remove(i).map(|s| s.id);
                        if gone != again {
                            record.failures.push(format!(
                                "removal {k} took member {gone:?} from the crowd but {again:?} from the replay"
                            ));
                        }
                        free.extend(gone);
                    }
                    format!("{n} members removed")
                }
                Disturbance::OverCapacity => over_capacity(&mut runtime, id, &mut record),
                Disturbance::Malformed => malformed(&mut runtime, id, &ctl.package, &mut record),
            };
            resident_variants[variant] = true;
            disturbed += 1;
            if record.warm.is_none()
                && disturbed >= CYCLE.len()
                && !resident_variants.contains(&false)
            {
                record.warm = Some(now + args.disturb_every);
            }
            eprintln!("  {now:7.1} s  {what}");
            record.disturbances.push((now, what));
            let n = crowd.instances.len();
            record.members = (record.members.0.min(n), record.members.1.max(n));
        }
        set_inputs(&ctl, &mut crowd, record.frames)?;
        set_inputs(&ctl, &mut replay, record.frames)?;
        crowd.tick(&ctl);
        one.install(|| replay.tick(&ctl));
        if let Some((member, e)) = crowd.failures().next() {
            return Err(CliError::Control(format!(
                "member {member}'s tick failed: {e}"
            )));
        }
        let n = crowd.instances.len();
        for (i, program) in programs.iter_mut().enumerate().take(n) {
            crowd.programs.copy_into(i, program);
        }
        let assets = ctl.package.assets(0).ok_or_else(no_skeleton)?;
        let time = record.frames as f64 / TICK_HZ;
        for (h, program) in programs.iter().enumerate().take(heroes) {
            heroes_cpu.pose(h, program, &assets, time)?;
        }
        let instances: Vec<Instance> = (0..n)
            .map(|i| Instance {
                pose: match i < heroes {
                    true => Pose::Hero(heroes_cpu.palette(i)),
                    false => Pose::Program(&programs[i]),
                },
                placement: placements[crowd.instances[i].id as usize],
            })
            .collect();
        let batch = Batch {
            package: id,
            skeleton: 0,
            skin: Some(0),
            instances: &instances,
        };
        let compiling = runtime.frame(&[batch])?.pending_pipelines > 0;
        runtime.finish()?;
        if now >= next_check {
            next_check += args.check_every;
            quiet = false;
            record.checks += 1;
            if digest(&crowd) != digest(&replay) {
                record.failures.push(format!(
                    "frame {}: the control digest differs from the one-thread replay",
                    record.frames
                ));
            }
            let worst = check_parity(&runtime, &ctl, &programs[..n], heroes, args.sample)?;
            if !worst.pass() {
                record.failures.push(format!(
                    "frame {}: GPU parity out of tolerance (position {:.2e}, rotation {:.2e} rad, palette {:.2e})",
                    record.frames, worst.position, worst.rotation, worst.palette
                ));
            }
            record.parity = record.parity.max(worst);
        }
        drop(instances);
        let ms = frame_start.elapsed().as_secs_f64() * 1e3;
        record.frame_ms.push(ms);
        if quiet {
            let allocs = allocations::total() - allocations_before;
            record.allocations.push((now, allocs));
        }
        if now >= next_memory {
            next_memory += MEMORY_EVERY;
            if let Some(bytes) = resident_bytes() {
                record.memory.push(MemorySample {
                    at: now,
                    bytes,
                    pipelines: runtime.pipelines_built().0,
                    compiling,
                });
            }
        }
        record.frames += 1;
        if record.frames == 1 {
            // The first frame compiles the shaders (lavapipe compiles at first use: up to a
            // minute while loaded); the clock starts after it.
            start = Instant::now();
            (record.frame_ms, record.allocations, record.memory) = Default::default();
            next_memory = 0.0;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    judge(&mut record, seconds);
    report(&args, &record, seconds, &runtime);
    match record.failures.is_empty() {
        true => Ok(()),
        false => Err(CliError::Control(format!(
            "the soak failed: {}",
            record.failures.join("; ")
        ))),
    }
}

fn control(e: throng_control::instance::TickError) -> CliError {
    CliError::Control(e.to_string())
}

fn no_skeleton() -> CliError {
    CliError::Usage("the generated character has no skeleton 0".into())
}

/// Capacities for `capacity` members of the largest variant, programs within `limits`, every
/// member with a history slot (its id), and a skinned budget.
fn soak_capacities(
    variants: &[Variant],
    capacity: u32,
    limits: &ProgramLimits,
) -> Result<Capacities, GpuError> {
    let packages: Vec<&Package> = variants.iter().map(|v| &v.package).collect();
    let mut c = super::capacities(&packages, capacity, limits)?;
    c.history_slots = capacity;
    c.skinned_instances = SKINNED_BUDGET.min(capacity);
    Ok(c)
}

/// The reference evaluator's limits for a parity check: the tree's programs, without history
/// (members that use it are left out).
fn check_limits(ctl: &Controller) -> ProgramLimits {
    ProgramLimits {
        history_slots: 0,
        ..ctl.limits()
    }
}

fn program_with(limits: &ProgramLimits) -> Program {
    Program {
        ops: Vec::with_capacity(limits.max_ops),
        weights: Vec::with_capacity(limits.max_weights),
    }
}

/// Submits one more instance than the capacity: the frame must be refused with
/// [`GpuError::Capacity`] before any GPU work.
fn over_capacity(runtime: &mut Runtime, id: PackageId, record: &mut Record) -> String {
    let slots = runtime.capacities().instances as usize + 1;
    let rest = Program {
        ops: vec![
            throng_cpu_ref::PoseOp::rest(0),
            throng_cpu_ref::PoseOp::to_component(0),
        ],
        weights: Vec::new(),
    };
    let instances = vec![
        Instance {
            pose: Pose::Program(&rest),
            placement: Affine3A::IDENTITY,
        };
        slots
    ];
    let batch = Batch {
        package: id,
        skeleton: 0,
        skin: Some(0),
        instances: &instances,
    };
    match runtime.frame(&[batch]) {
        Err(GpuError::Capacity { .. }) => {
            format!("a frame of {slots} instances refused (over the capacity)")
        }
        other => {
            let got = other
                .map(|_| "accepted".to_string())
                .unwrap_or_else(|e| e.to_string());
            record.failures.push(format!(
                "a frame of {slots} instances over the capacity was {got}"
            ));
            format!("a frame of {slots} instances NOT refused")
        }
    }
}

/// Reads a damaged copy of `package`'s bytes (one byte flipped in the middle) and offers the
/// runtime a malformed package (a clip of a skeleton it does not have): both must be refused,
/// and the resident package stays.
fn malformed(
    runtime: &mut Runtime,
    id: PackageId,
    package: &Package,
    record: &mut Record,
) -> String {
    let mut bytes = throng_cook::write_package(package);
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    let read = throng_cook::read_package(&bytes);
    let mut bad = package.clone();
    if let Some(clip) = bad.clips.first_mut() {
        clip.skeleton = u32::MAX;
    }
    let offered = runtime.replace_package(id, &bad);
    match (read, offered) {
        (Err(_), Err(GpuError::BadPackage { .. })) => {
            "a damaged package read and a malformed one offered: both refused".into()
        }
        (read, offered) => {
            record.failures.push(format!(
                "malformed packages not refused: read {}, offered {}",
                if read.is_ok() { "accepted" } else { "refused" },
                match offered {
                    Ok(()) => "accepted".to_string(),
                    Err(e) => format!("refused as {e}"),
                }
            ));
            "a malformed package NOT refused".into()
        }
    }
}

/// Reads the last frame back and compares the component poses and palettes of up to `sample`
/// members (evenly spread, heroes and members whose programs use history left out) with the
/// CPU reference's evaluation of the same programs.
fn check_parity(
    runtime: &Runtime,
    ctl: &Controller,
    programs: &[Program],
    heroes: usize,
    sample: usize,
) -> Result<Worst, CliError> {
    let outputs = runtime.readback()?;
    let Some(gpu) = outputs.first() else {
        return Ok(Worst::default());
    };
    let assets = ctl.package.assets(0).ok_or_else(no_skeleton)?;
    let joints = assets.skeleton.joint_count();
    let extent = f64::from(component_extent(assets.skeleton));
    let palette = ctl.package.skins.first().map_or(0, |s| s.joints.len());
    let mut evaluator = Evaluator::new(check_limits(ctl), joints, palette);
    let mut worst = Worst::default();
    let candidates = programs.len().saturating_sub(heroes);
    let step = (candidates / sample.max(1)).max(1);
    for i in (heroes..programs.len()).step_by(step) {
        let program = &programs[i];
        let history = program
            .ops
            .iter()
            .any(|o| o.code == op::CAPTURE || o.code == op::INERTIALIZE);
        if history {
            worst.skipped += 1;
            continue;
        }
        evaluator.run(program, &assets)?;
        let (g, r) = (
            &gpu.components[i * joints..][..joints],
            evaluator.component(),
        );
        for (g, r) in g.iter().zip(r) {
            let d = (glam::Vec3::from(g.translation) - glam::Vec3::from(r.translation)).length();
            worst.position = worst.position.max(f64::from(d) / extent);
            worst.rotation = worst.rotation.max(column_angle(g, r));
        }
        let g = &gpu.palettes[i * gpu.palette_len..][..gpu.palette_len];
        for (g, r) in g.iter().zip(evaluator.palette()) {
            worst.palette = worst.palette.max(palette_error(g, r, extent));
        }
        worst.compared += 1;
    }
    Ok(worst)
}

/// Resident set size of this process (Linux `/proc/self/statm`); `None` elsewhere.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// After the warm-up (which ends at `warm` seconds), the first and second halves of `series`'
/// values (by time).
fn halves(series: &[(f64, u64)], warm: f64, seconds: f64) -> (Vec<u64>, Vec<u64>) {
    let middle = warm + (seconds - warm) / 2.0;
    let after: Vec<&(f64, u64)> = series.iter().filter(|(t, _)| *t >= warm).collect();
    let first = after
        .iter()
        .filter(|(t, _)| *t < middle)
        .map(|p| p.1)
        .collect();
    let second = after
        .iter()
        .filter(|(t, _)| *t >= middle)
        .map(|p| p.1)
        .collect();
    (first, second)
}

fn percentile(values: &[u64], p: f64) -> u64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    v.get(((v.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or(0)
}

/// Fails the run on resident memory growing after the warm-up while no pipeline compiled, or
/// on allocations per frame growing from the first half after the warm-up to the second.
fn judge(record: &mut Record, seconds: f64) {
    let Some(warm) = record.warm.map(|w| w.max(seconds * WARM_UP)) else {
        record.failures.push(
            "the run ended before its warm-up did (every variant resident and every disturbance once): run longer or disturb more often (--disturb-every)".into(),
        );
        return;
    };
    let after: Vec<MemorySample> = (record.memory.iter())
        .filter(|m| m.at >= warm)
        .copied()
        .collect();
    if let Some(base) = after.first() {
        let (growth, quiet) = quiet_growth(&after);
        let bound = base.bytes as f64 * (MEMORY_SLACK.0 - 1.0) + MEMORY_SLACK.1;
        if growth > bound {
            record.failures.push(format!(
                "resident memory grew by {:.1} MiB after the warm-up ({:.1} MiB at its end) over {quiet:.0} s in which no pipeline compiled",
                growth / (1024.0 * 1024.0),
                mib(base.bytes)
            ));
        } else if quiet < (seconds - warm) * QUIET_SHARE {
            record.failures.push(format!(
                "pipelines compiled during all but {quiet:.0} s after the warm-up, too little to judge memory: run longer"
            ));
        }
    }
    let (first, second) = halves(&record.allocations, warm, seconds);
    let (a, b) = (percentile(&first, 0.5), percentile(&second, 0.5));
    if !first.is_empty() && !second.is_empty() && b > 2 * a + 64 {
        record.failures.push(format!(
            "allocations per frame grew after the warm-up: median {a}, then {b}"
        ));
    }
}

/// Bytes resident memory grew, summed over consecutive samples with no pipeline compiling in
/// between (a fall counts against an earlier rise), and the seconds those intervals span.
fn quiet_growth(samples: &[MemorySample]) -> (f64, f64) {
    (samples.windows(2))
        .filter(|w| w[0].quiet_until(&w[1]))
        .fold((0.0, 0.0), |(bytes, seconds), w| {
            (
                bytes + w[1].bytes as f64 - w[0].bytes as f64,
                seconds + w[1].at - w[0].at,
            )
        })
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn report(args: &Args, record: &Record, seconds: f64, runtime: &Runtime) {
    let mut ms: Vec<f64> = record.frame_ms.clone();
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| {
        ms.get(((ms.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let allocs: Vec<u64> = record.allocations.iter().map(|a| a.1).collect();
    let summary = json!({
        "adapter": runtime.context().adapter.name,
        "minutes": seconds / 60.0,
        "frames": record.frames,
        "members": { "start": args.instances, "heroes": args.heroes, "min": record.members.0, "max": record.members.1 },
        "disturbances": record.disturbances.iter().map(|(t, w)| json!({ "at_s": t, "what": w })).collect::<Vec<_>>(),
        "checks": record.checks,
        "parity": {
            "members_compared": record.parity.compared,
            "members_skipped_for_history": record.parity.skipped,
            "worst_position": record.parity.position,
            "worst_rotation_rad": record.parity.rotation,
            "worst_palette": record.parity.palette,
        },
        "frame_ms": { "p50": at(0.5), "p99": at(0.99), "max": at(1.0) },
        "allocations_per_frame": {
            "frames": allocs.len(),
            "min": allocs.iter().min(), "p50": percentile(&allocs, 0.5),
            "p99": percentile(&allocs, 0.99), "max": allocs.iter().max(),
        },
        "warm_up_s": record.warm.map(|w| w.max(seconds * WARM_UP)),
        "resident_bytes": record.memory.iter().map(|m| json!({ "at_s": m.at, "bytes": m.bytes, "pipelines": m.pipelines, "compiling": m.compiling })).collect::<Vec<_>>(),
        "gpu_bytes": runtime.resident_bytes() + runtime.frame_buffer_bytes(),
        "failures": record.failures,
        "pass": record.failures.is_empty(),
    });
    if args.json {
        print_json(&summary);
        return;
    }
    println!(
        "soak: {:.1} min, {} frames on {}; members {}..{} (+{} heroes)",
        seconds / 60.0,
        record.frames,
        runtime.context().adapter.name,
        record.members.0.saturating_sub(args.heroes as usize),
        record.members.1.saturating_sub(args.heroes as usize),
        args.heroes
    );
    println!("  disturbances: {}", record.disturbances.len());
    println!(
        "  checks: {} (control digest vs one-thread replay; GPU vs CPU reference on {} member poses, {} left out for history): worst position {:.2e} x extent, rotation {:.2e} rad, palette {:.2e}",
        record.checks, record.parity.compared, record.parity.skipped, record.parity.position, record.parity.rotation, record.parity.palette
    );
    println!(
        "  frame ms: p50 {:.1}, p99 {:.1}, max {:.1}",
        at(0.5),
        at(0.99),
        at(1.0)
    );
    println!(
        "  allocations per undisturbed frame: min {}, p50 {}, p99 {}, max {} ({} frames)",
        allocs.iter().min().unwrap_or(&0),
        percentile(&allocs, 0.5),
        percentile(&allocs, 0.99),
        allocs.iter().max().unwrap_or(&0),
        allocs.len()
    );
    let series: Vec<String> = (record.memory.iter())
        .map(|m| format!("{:.0}s {:.1} ({})", m.at, mib(m.bytes), m.pipelines))
        .collect();
    println!("  resident MiB (pipelines built): {}", series.join(", "));
    match record.warm {
        Some(w) => println!("  warm-up: the first {:.0} s", w.max(seconds * WARM_UP)),
        None => println!("  warm-up: not over"),
    }
    match record.failures.is_empty() {
        true => println!("  pass: no divergence, every disturbance refused or survived, no growth"),
        false => record.failures.iter().for_each(|f| println!("  FAIL: {f}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    /// A 60-s run warmed up at 10 s, sampled every 5 s: (MiB, pipelines built) per sample.
    fn judged(series: &[(u64, usize)]) -> Vec<String> {
        let mut record = Record {
            warm: Some(10.0),
            memory: (series.iter().enumerate())
                .map(|(i, &(mib, pipelines))| MemorySample {
                    at: i as f64 * MEMORY_EVERY,
                    bytes: mib * MIB,
                    pipelines,
                    compiling: false,
                })
                .collect(),
            ..Record::default()
        };
        judge(&mut record, 60.0);
        record.failures
    }

    #[test]
    fn a_step_while_a_late_pipeline_compiles_is_not_growth() {
        let steps = [
            (200, 10),
            (250, 12),
            (300, 20),
            (300, 20),
            (300, 20),
            (330, 21),
        ];
        let flat = [
            (300, 21),
            (300, 21),
            (301, 21),
            (300, 21),
            (300, 21),
            (300, 21),
        ];
        assert!(judged(&[&steps[..], &flat[..]].concat()).is_empty());
    }

    #[test]
    fn growth_between_compilations_fails_the_run() {
        let leak: Vec<(u64, usize)> = (0..12).map(|i| (300 + 8 * i, 20)).collect();
        let failures = judged(&leak);
        assert!(
            failures.iter().any(|f| f.contains("resident memory grew")),
            "{failures:?}"
        );
    }

    #[test]
    fn a_run_that_compiles_throughout_cannot_be_judged() {
        let busy: Vec<(u64, usize)> = (0..12).map(|i| (300, 20 + i)).collect();
        let failures = judged(&busy);
        assert!(
            failures.iter().any(|f| f.contains("too little to judge")),
            "{failures:?}"
        );
    }
}
