//! `throng soak`: the generated character's crowd in a [`throng::Animator`], the runtime games
//! embed, driven by its state tree for minutes while things change underneath it. Control ticks
//! at 30 Hz and two frames are presented after each tick (at 0.5 and 1.0 of the way from the
//! tick before: rendering at 60 Hz), so the frames present retained instances that get a
//! program only when its static part changes and values every tick. Heroes are posed on the CPU
//! with IK from their last tick's program and handed over as palettes (`Animator::set_hero`).
//!
//! Every `--disturb-every` seconds the next disturbance of a fixed cycle ([`Disturbance`])
//! happens: the package is replaced live by a re-cooked variant (another profile, the reference
//! encoding, a clip added, then removed again), members are despawned and spawned, a member is
//! spawned past the animator's capacity, and a malformed package is offered; the last two must
//! be refused with their typed errors, and the crowd must run on.
//!
//! Every `--check-every` seconds a presented frame is checked (alternately one at 0.5 and one at
//! 1.0): the animator's control digest (its crowd ticked on the rayon pool) against a replay of
//! the same inputs and disturbances, a control crowd of its own ticked on one thread whose
//! placements follow root motion as the animator's do ([`Replay`]), and the GPU's component poses
//! and palettes of a sample of members against the CPU reference evaluating the program that
//! frame presented (DESIGN.md §6 tolerances; members whose programs use inertialization history
//! are left to the parity suite, since the reference would need every frame's history), with
//! the heroes' palettes against the ones handed over. Resident memory is sampled every few
//! seconds, allocations and wall time per presented frame always.
//!
//! The run fails on any divergence, on a disturbance not refused, on resident memory growing
//! after the warm-up while no pipeline compiles, or on allocations per frame growing; a panic
//! fails it too (exit 101).

use std::time::{Duration, Instant};

use glam::{Affine3A, Vec3};
use serde_json::json;
use throng::{Animator, AnimatorError, AnimatorOptions, CharacterId, MemberId};
use throng_animator::{compose, crowd_digest};
use throng_control::crowd::Crowd;
use throng_control::digest::Digest;
use throng_control::instance::Controller;
use throng_control::tree::Value;
use throng_cook::Profile;
use throng_cpu_ref::present::Placement;
use throng_cpu_ref::program::op;
use throng_cpu_ref::retained::RetainedError;
use throng_cpu_ref::{Evaluator, Package, Program, ProgramLimits};
use throng_gpu::parity::{
    column_angle, component_extent, palette_error, POSITION_TOLERANCE, ROTATION_TOLERANCE,
};
use throng_gpu::{BatchOutput, BatchSlots, GpuContext, GpuError};

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

/// Control ticks per second.
const TICK_HZ: f64 = 30.0;
/// The frames presented after each tick, as fractions of the way from the tick before: two
/// per tick, rendering at twice the tick rate.
const ALPHAS: [f32; 2] = [0.5, 1.0];
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
/// The state tree every member runs.
const TREE: (&str, &str) = (throng_fixtures::CROWD_TREE, "crowd.toml");

/// What happens at a disturbance, in this order, round and round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Disturbance {
    /// The package is replaced by the next variant.
    Replace,
    /// Members are spawned (taking the slots despawned members freed).
    Add,
    /// Members are despawned (never a hero).
    Remove,
    /// Members are spawned until one past the animator's capacity is refused.
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

/// Member `id`'s inputs at tick `tick` (speed, wave): each member changes them every two
/// seconds or so.
fn inputs(id: u32, tick: u64) -> (Value, Value) {
    let r = mix((u64::from(id) << 32) | ((tick + u64::from(id)) / 60));
    (
        Value::Float((r % 61) as f64 / 10.0),
        Value::Bool((r >> 40) & 7 == 0),
    )
}

/// An animator's error as the command's: GPU errors keep their type, the rest say what failed.
fn animator_error(e: AnimatorError) -> CliError {
    match e {
        AnimatorError::Gpu(e) => CliError::Gpu(e),
        e => CliError::Control(e.to_string()),
    }
}

/// The replay the animator's control is checked against: the same tree over the same
/// packages, the same members spawned and despawned in the same order (so that despawning,
/// a swap-remove in both, leaves them in the same order), the same inputs, ticked on one
/// thread, each member's placement following its root motion as the animator's does
/// ([`compose`]). Its digest is the animator's own function ([`crowd_digest`]), so equal
/// digests mean the same programs, root motion, placements and events, bit for bit.
struct Replay {
    ctl: Controller,
    crowd: Crowd,
    /// By member id: its placement after the last tick; `None`: no such member.
    placements: Vec<Option<Placement>>,
    one: rayon::ThreadPool,
}

impl Replay {
    /// The crowd tree over `package`, bound as `Animator::add_character` binds it.
    fn new(package: &Package) -> Result<Replay, CliError> {
        let control = |e: String| CliError::Control(format!("the replay's controller: {e}"));
        let tree = throng_control::tree::load(TREE.0, TREE.1, package, 0)
            .map_err(|e| control(e.to_string()))?;
        let ctl = Controller::new(tree, package.clone(), TICK_HZ, EVENT_CAPACITY)
            .map_err(|e| control(e.to_string()))?;
        let crowd = Crowd::new(&ctl, 0).map_err(tick_error)?;
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .map_err(|e| CliError::Control(format!("a one-thread pool: {e}")))?;
        Ok(Replay {
            ctl,
            crowd,
            placements: Vec::new(),
            one,
        })
    }

    /// Member `id`, spawned by the animator at `placement`.
    fn spawn(&mut self, id: MemberId, placement: &Affine3A) -> Result<(), CliError> {
        self.crowd.add(&self.ctl, id.0).map_err(tick_error)?;
        let slot = id.0 as usize;
        if self.placements.len() <= slot {
            self.placements.resize(slot + 1, None);
        }
        self.placements[slot] = Some(Placement::from_affine(placement).unwrap_or_default());
        Ok(())
    }

    /// The member at crowd index `i`, despawned (the last member takes its index).
    fn despawn(&mut self, i: usize) -> Option<MemberId> {
        let s = self.crowd.remove(i)?;
        if let Some(p) = self.placements.get_mut(s.id as usize) {
            *p = None;
        }
        Some(MemberId(s.id))
    }

    /// The package replaced, as `Animator::replace_package` rebinds its controller.
    fn replace(&mut self, package: &Package) -> Result<(), CliError> {
        let tree = self.ctl.tree.clone();
        self.ctl = Controller::new(tree, package.clone(), TICK_HZ, EVENT_CAPACITY)
            .map_err(|e| CliError::Control(format!("the replay's controller: {e}")))?;
        Ok(())
    }

    /// One tick on the one-thread pool, and the placements moved by its root motion.
    fn tick(&mut self) -> Result<(), CliError> {
        let (ctl, crowd) = (&self.ctl, &mut self.crowd);
        self.one.install(|| crowd.tick(ctl));
        if let Some((member, e)) = self.crowd.failures().next() {
            return Err(CliError::Control(format!(
                "the replay's member {member}: its tick failed: {e}"
            )));
        }
        for (s, &(t, q)) in self.crowd.instances.iter().zip(&self.crowd.motion) {
            if let Some(Some(p)) = self.placements.get_mut(s.id as usize) {
                *p = compose(p, t, q);
            }
        }
        Ok(())
    }

    /// [`Animator::control_digest`] of the replay.
    fn digest(&self) -> u64 {
        let mut d = Digest::default();
        crowd_digest(&mut d, &self.crowd, |id| {
            *self.placements.get(id as usize)?
        });
        d.finish()
    }
}

/// The animator under test and its replay, with the heroes' CPU side.
struct Soak {
    animator: Animator,
    character: CharacterId,
    replay: Replay,
    /// Heroes are the first members (ids `0..n`, which are their history slots in
    /// [`Heroes`]). Their IK targets are in each hero's own frame, so they walk with it.
    heroes: Heroes,
    hero_count: usize,
    /// The tree's inputs `speed` and `wave`, by index.
    speed: u16,
    wave: u16,
    /// Control ticks so far.
    ticks: u64,
    /// Scratch: a program the animator presented.
    program: Program,
}

impl Soak {
    /// A crowd of the first of `packages` (the others are the packages it may be replaced by:
    /// the runtime is sized for the largest) with one member per placement, the first `heroes`
    /// of them heroes; the animator's capacity is the placements.
    fn new(
        ctx: &GpuContext,
        packages: &[&Package],
        placements: &[Affine3A],
        heroes: usize,
    ) -> Result<Soak, CliError> {
        let first = *packages
            .first()
            .ok_or_else(|| CliError::Usage("the soak needs a package".into()))?;
        let limits = throng::tree_limits(first, 0, TREE).map_err(animator_error)?;
        let options = AnimatorOptions {
            hz: TICK_HZ,
            event_capacity: EVENT_CAPACITY,
            capacity: placements.len() as u32,
            skinned_budget: Some(SKINNED_BUDGET),
            ..AnimatorOptions::default()
        };
        let mut animator = Animator::new(ctx, packages, limits, options).map_err(animator_error)?;
        let character =
            (animator.add_character(first.clone(), 0, Some(TREE))).map_err(animator_error)?;
        let ctl = animator
            .controller(character)
            .ok_or_else(|| CliError::Control("the soak's character has no tree".into()))?;
        let input = |name: &str| {
            (ctl.tree.input(name))
                .ok_or_else(|| CliError::Control(format!("the soak's tree has no input '{name}'")))
        };
        let (speed, wave) = (input("speed")?, input("wave")?);
        let heroes_cpu = Heroes::new(
            &ctl.package,
            0,
            ctl.limits(),
            vec![Affine3A::IDENTITY; heroes],
        )?;
        let mut soak = Soak {
            animator,
            character,
            replay: Replay::new(first)?,
            heroes: heroes_cpu,
            hero_count: heroes,
            speed,
            wave,
            ticks: 0,
            program: Program::default(),
        };
        for p in placements {
            soak.spawn(p)?;
        }
        Ok(soak)
    }

    /// A member spawned at `placement`, in the animator and the replay.
    fn spawn(&mut self, placement: &Affine3A) -> Result<MemberId, CliError> {
        let member = (self.animator.spawn(self.character, placement)).map_err(animator_error)?;
        self.replay.spawn(member, placement)?;
        Ok(member)
    }

    /// The member at crowd index `i` despawned, in the animator and the replay.
    fn despawn(&mut self, i: usize) -> Result<MemberId, CliError> {
        let member = (self.replay.crowd.instances.get(i))
            .map(|s| MemberId(s.id))
            .ok_or_else(|| CliError::Control(format!("no member at crowd index {i}")))?;
        self.animator.despawn(member).map_err(animator_error)?;
        self.replay.despawn(i);
        Ok(member)
    }

    /// Live members, heroes included.
    fn members(&self) -> usize {
        self.replay.crowd.instances.len()
    }

    /// One control tick: every member's inputs, the animator's tick (the rayon pool), the
    /// replay's (one thread), and the heroes posed from their programs of the tick.
    fn tick(&mut self) -> Result<(), CliError> {
        for s in &mut self.replay.crowd.instances {
            let (speed, wave) = inputs(s.id, self.ticks);
            for (input, value) in [(self.speed, speed), (self.wave, wave)] {
                (self.animator.set_input_at(MemberId(s.id), input, value))
                    .map_err(animator_error)?;
                (self.replay.ctl.set_input_at(s, input, value))
                    .map_err(|e| CliError::Control(format!("the replay's member {}: {e}", s.id)))?;
            }
        }
        self.animator.tick().map_err(animator_error)?;
        self.replay.tick()?;
        let time = self.ticks as f64 / TICK_HZ;
        self.ticks += 1;
        for h in 0..self.hero_count {
            let member = MemberId(h as u32);
            let program = (self.animator.presented_program(member, 1.0))
                .ok_or_else(|| CliError::Control(format!("hero {h} has no program")))?;
            self.program.clone_from(program);
            let package = (self.animator.package(self.character))
                .ok_or_else(|| CliError::Control("the soak's character is gone".into()))?;
            let assets = package.assets(0).ok_or_else(no_skeleton)?;
            self.heroes.pose(h, &self.program, &assets, time)?;
            (self.animator.set_hero(member, Some(self.heroes.palette(h))))
                .map_err(animator_error)?;
        }
        Ok(())
    }

    /// Presents a frame at `alpha` and waits for it; whether a pipeline was still compiling.
    fn present(&mut self, alpha: f32) -> Result<bool, CliError> {
        let report = self.animator.present(alpha).map_err(animator_error)?;
        self.animator.runtime_mut().finish()?;
        Ok(report.pending_pipelines > 0)
    }

    /// Reads the last frame (presented at `alpha`) back and compares the component poses and
    /// palettes of up to `sample` members (evenly spread over the live ones; heroes and members
    /// whose programs use history left out) with the CPU reference's evaluation of the program
    /// the frame presented, and each hero's palette with the one it was handed. A member is read
    /// from its own frame slot: retained instances keep theirs, its id, and a frame's batches
    /// are runs of consecutive shown slots.
    fn check_parity(&mut self, alpha: f32, sample: usize) -> Result<Worst, CliError> {
        let gpu = self.animator.runtime().readback()?;
        let batches = self.animator.runtime().batches().to_vec();
        let package = (self.animator.package(self.character))
            .ok_or_else(|| CliError::Control("the soak's character is gone".into()))?;
        let assets = package.assets(0).ok_or_else(no_skeleton)?;
        let extent = f64::from(component_extent(assets.skeleton));
        let joints = assets.skeleton.joint_count();
        let palette_len = package.skins.first().map_or(0, |s| s.joints.len());
        let limits = ProgramLimits {
            history_slots: 0,
            ..*self.animator.instances().limits()
        };
        let mut evaluator = Evaluator::new(limits, joints, palette_len);
        let mut worst = Worst::default();
        for h in 0..self.hero_count {
            let Some((_, palette)) = frame_pose(&gpu, &batches, h as u32) else {
                worst.missing += 1;
                continue;
            };
            for (g, r) in palette.iter().zip(self.heroes.palette(h)) {
                worst.palette = worst.palette.max(palette_error(g, r, extent));
            }
            worst.heroes += 1;
        }
        let members: Vec<MemberId> = (self.animator.members())
            .filter(|m| m.0 as usize >= self.hero_count)
            .collect();
        let step = (members.len() / sample.max(1)).max(1);
        for &member in members.iter().step_by(step) {
            let Some(program) = self.animator.presented_program(member, alpha) else {
                worst.missing += 1;
                continue;
            };
            self.program.clone_from(program);
            if (self.program.ops.iter()).any(|o| o.code == op::CAPTURE || o.code == op::INERTIALIZE)
            {
                worst.skipped += 1;
                continue;
            }
            let Some((components, palette)) = frame_pose(&gpu, &batches, member.0) else {
                worst.missing += 1;
                continue;
            };
            let package = (self.animator.package(self.character))
                .ok_or_else(|| CliError::Control("the soak's character is gone".into()))?;
            let assets = package.assets(0).ok_or_else(no_skeleton)?;
            evaluator.run(&self.program, &assets)?;
            for (g, r) in components.iter().zip(evaluator.component()) {
                let d = (Vec3::from(g.translation) - Vec3::from(r.translation)).length();
                worst.position = worst.position.max(f64::from(d) / extent);
                worst.rotation = worst.rotation.max(column_angle(g, r));
            }
            for (g, r) in palette.iter().zip(evaluator.palette()) {
                worst.palette = worst.palette.max(palette_error(g, r, extent));
            }
            worst.compared += 1;
        }
        Ok(worst)
    }
}

/// Frame slot `slot`'s component pose and palette in a frame read back (`gpu`, one output per
/// batch of `batches`); `None` when the frame did not show the slot.
fn frame_pose<'a>(
    gpu: &'a [BatchOutput],
    batches: &[BatchSlots],
    slot: u32,
) -> Option<(&'a [Affine3A], &'a [Affine3A])> {
    let b = (batches.iter()).position(|b| b.first_slot <= slot && slot - b.first_slot < b.count)?;
    let (out, i) = (gpu.get(b)?, (slot - batches[b].first_slot) as usize);
    Some((
        out.components.get(i * out.joints..(i + 1) * out.joints)?,
        out.palettes
            .get(i * out.palette_len..(i + 1) * out.palette_len)?,
    ))
}

/// Worst errors of one checked frame.
#[derive(Clone, Copy, Debug, Default)]
struct Worst {
    compared: usize,
    skipped: usize,
    /// Heroes whose palettes were compared.
    heroes: usize,
    /// Members (heroes included) the frame should have shown and did not.
    missing: usize,
    position: f64,
    rotation: f64,
    palette: f64,
}

impl Worst {
    fn pass(&self) -> bool {
        self.missing == 0
            && self.position <= POSITION_TOLERANCE
            && self.rotation <= ROTATION_TOLERANCE
            && self.palette <= POSITION_TOLERANCE
    }
    fn max(self, o: Worst) -> Worst {
        Worst {
            compared: self.compared + o.compared,
            skipped: self.skipped + o.skipped,
            heroes: self.heroes + o.heroes,
            missing: self.missing + o.missing,
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

/// Everything the run measured. A frame is a presented frame: two per control tick.
#[derive(Default)]
struct Record {
    frames: u64,
    ticks: u64,
    frame_ms: Vec<f64>,
    /// Allocations of each undisturbed, unchecked frame (a tick's, its inputs, the replay's and
    /// the heroes' included, go with the first frame after it), with the frame's time in the
    /// run.
    allocations: Vec<(f64, u64)>,
    /// Of those, the ones made inside the animator's calls (inputs, tick, hero hand-over,
    /// present) and the runtime's wait for the frame.
    animator_allocations: Vec<u64>,
    memory: Vec<MemorySample>,
    disturbances: Vec<(f64, String)>,
    checks: u64,
    /// Checks of frames presented at each of [`ALPHAS`].
    checks_at: [u64; 2],
    parity: Worst,
    failures: Vec<String>,
    /// Why resident memory was not judged (pipelines compiled through most of the run, as on a
    /// cold shader cache): said, not failed.
    memory_unjudged: Option<String>,
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
    let side = (f64::from(capacity).sqrt().ceil() as u32).max(1);
    let placements: Vec<Affine3A> = (0..capacity).map(|i| placement(i, side)).collect();
    let packages: Vec<&Package> = variants.iter().map(|v| &v.package).collect();
    let mut soak = Soak::new(&ctx, &packages, &placements, heroes)?;
    // Despawned members' grid places, for the members spawned next.
    let mut vacated: Vec<Affine3A> = Vec::new();
    let mut variant = 0;
    let mut record = Record {
        members: (soak.members(), soak.members()),
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
        "soak: {} members + {} heroes for {} min on {}, ticks at {TICK_HZ} Hz, {} frames a tick (disturbance every {} s, check every {} s)",
        args.instances,
        heroes,
        args.minutes,
        ctx.adapter.name,
        ALPHAS.len(),
        args.disturb_every,
        args.check_every
    );
    while start.elapsed() < run_for {
        let now = start.elapsed().as_secs_f64();
        let tick_start = Instant::now();
        let allocations_before = allocations::total();
        let mut disturbance = false;
        if now >= next_disturbance {
            next_disturbance += args.disturb_every;
            disturbance = true;
            let d = *cycle.next().unwrap_or(&Disturbance::Replace);
            let what = match d {
                Disturbance::Replace => {
                    variant = (variant + 1) % variants.len();
                    let package = variants[variant].package.clone();
                    soak.replay.replace(&package)?;
                    (soak.animator.replace_package(soak.character, package))
                        .map_err(animator_error)?;
                    format!("package replaced by \"{}\"", variants[variant].name)
                }
                Disturbance::Add => {
                    let n = vacated.len().min((args.instances / CHURN).max(1) as usize);
                    for at in vacated.drain(..n) {
                        soak.spawn(&at)?;
                    }
                    format!("{n} members added")
                }
                Disturbance::Remove => {
                    let n = (args.instances / CHURN).max(1) as usize;
                    let n = n.min(soak.members().saturating_sub(heroes + 1));
                    for k in 0..n {
                        let len = soak.members() - heroes;
                        let i = heroes + (mix(record.ticks ^ k as u64) % len as u64) as usize;
                        let gone = soak.despawn(i)?;
                        vacated.push(placement(gone.0, side));
                    }
                    format!("{n} members removed")
                }
                Disturbance::OverCapacity => {
                    over_capacity(&mut soak, capacity, &placements[0], &mut record)?
                }
                Disturbance::Malformed => {
                    malformed(&mut soak, &variants[variant].package, &mut record)
                }
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
            let n = soak.members();
            record.members = (record.members.0.min(n), record.members.1.max(n));
        }
        let animator_before = allocations::total();
        soak.tick()?;
        let mut animator_allocations = allocations::total() - animator_before;
        record.ticks += 1;
        for (k, &alpha) in ALPHAS.iter().enumerate() {
            // The tick and any disturbance before it belong to the first frame after it.
            let (frame_start, allocations_before, now) = match k {
                0 => (tick_start, allocations_before, now),
                _ => {
                    animator_allocations = 0;
                    let at = start.elapsed().as_secs_f64();
                    (Instant::now(), allocations::total(), at)
                }
            };
            let animator_before = allocations::total();
            let compiling = soak.present(alpha)?;
            animator_allocations += allocations::total() - animator_before;
            let checked = now >= next_check && alpha == ALPHAS[(record.checks % 2) as usize];
            if checked {
                next_check += args.check_every;
                record.checks += 1;
                record.checks_at[k] += 1;
                if soak.animator.control_digest() != soak.replay.digest() {
                    record.failures.push(format!(
                        "tick {}: the animator's control digest differs from the one-thread replay's",
                        record.ticks
                    ));
                }
                let worst = soak.check_parity(alpha, args.sample)?;
                if !worst.pass() {
                    record.failures.push(format!(
                        "frame {} (alpha {alpha}): GPU parity out of tolerance (position {:.2e}, rotation {:.2e} rad, palette {:.2e}, {} members not in the frame)",
                        record.frames, worst.position, worst.rotation, worst.palette, worst.missing
                    ));
                }
                record.parity = record.parity.max(worst);
            }
            let ms = frame_start.elapsed().as_secs_f64() * 1e3;
            record.frame_ms.push(ms);
            if !(checked || disturbance && k == 0) {
                let allocs = allocations::total() - allocations_before;
                record.allocations.push((now, allocs));
                record.animator_allocations.push(animator_allocations);
            }
            if now >= next_memory {
                next_memory += MEMORY_EVERY;
                if let Some(bytes) = resident_bytes() {
                    record.memory.push(MemorySample {
                        at: now,
                        bytes,
                        pipelines: soak.animator.runtime().pipelines_built().0,
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
                record.animator_allocations.clear();
                next_memory = 0.0;
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    judge(&mut record, seconds);
    report(&args, &record, seconds, soak.animator.runtime());
    match record.failures.is_empty() {
        true => Ok(()),
        false => Err(CliError::Control(format!(
            "the soak failed: {}",
            record.failures.join("; ")
        ))),
    }
}

fn tick_error(e: throng_control::instance::TickError) -> CliError {
    CliError::Control(e.to_string())
}

fn no_skeleton() -> CliError {
    CliError::Usage("the generated character has no skeleton 0".into())
}

/// Spawns members at `at` until the animator refuses one past its capacity (`capacity`
/// members): the refusal must be `RetainedError::Full`, before anything changed. The members
/// spawned to fill the crowd up are despawned again, last first; the replay does all of it too.
fn over_capacity(
    soak: &mut Soak,
    capacity: u32,
    at: &Affine3A,
    record: &mut Record,
) -> Result<String, CliError> {
    let mut filled = 0;
    let refused = loop {
        match soak.animator.spawn(soak.character, at) {
            Ok(member) => {
                soak.replay.spawn(member, at)?;
                filled += 1;
                if filled > capacity {
                    break Err("accepted".to_string());
                }
            }
            Err(AnimatorError::Retained(RetainedError::Full(n))) => break Ok(n),
            Err(e) => break Err(format!("refused as {e}")),
        }
    };
    for _ in 0..filled {
        soak.despawn(soak.members() - 1)?;
    }
    Ok(match refused {
        Ok(n) => format!(
            "{filled} members spawned to fill the crowd, then one past the capacity of {n} instances refused (over the capacity)"
        ),
        Err(got) => {
            record.failures.push(format!(
                "a member spawned past the capacity of {capacity} was {got}"
            ));
            "a member past the capacity NOT refused".into()
        }
    })
}

/// Reads a damaged copy of `package`'s bytes (one byte flipped in the middle) and offers the
/// animator a malformed package (a clip of a skeleton it does not have) to replace the
/// resident one: both must be refused, and the resident package stays.
fn malformed(soak: &mut Soak, package: &Package, record: &mut Record) -> String {
    let mut bytes = throng_cook::write_package(package);
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    let read = throng_cook::read_package(&bytes);
    let mut bad = package.clone();
    if let Some(clip) = bad.clips.first_mut() {
        clip.skeleton = u32::MAX;
    }
    let offered = soak.animator.replace_package(soak.character, bad);
    match (read, offered) {
        (Err(_), Err(AnimatorError::Gpu(GpuError::BadPackage { .. }))) => {
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
            record.memory_unjudged = Some(format!(
                "pipelines compiled during all but {quiet:.0} s after the warm-up (a cold shader cache compiles through a short run), too little to judge memory: run longer to judge it"
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

fn report(args: &Args, record: &Record, seconds: f64, runtime: &throng_gpu::Runtime) {
    let mut ms: Vec<f64> = record.frame_ms.clone();
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| {
        ms.get(((ms.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let allocs: Vec<u64> = record.allocations.iter().map(|a| a.1).collect();
    let inside = &record.animator_allocations;
    let summary = json!({
        "adapter": runtime.context().adapter.name,
        "minutes": seconds / 60.0,
        "frames": record.frames,
        "ticks": record.ticks,
        "frame_alphas": ALPHAS,
        "members": { "start": args.instances, "heroes": args.heroes, "min": record.members.0, "max": record.members.1 },
        "disturbances": record.disturbances.iter().map(|(t, w)| json!({ "at_s": t, "what": w })).collect::<Vec<_>>(),
        "checks": record.checks,
        "checks_by_alpha": ALPHAS.iter().zip(record.checks_at).map(|(a, n)| json!({ "alpha": a, "checks": n })).collect::<Vec<_>>(),
        "parity": {
            "members_compared": record.parity.compared,
            "members_skipped_for_history": record.parity.skipped,
            "heroes_compared": record.parity.heroes,
            "members_missing_from_frames": record.parity.missing,
            "worst_position": record.parity.position,
            "worst_rotation_rad": record.parity.rotation,
            "worst_palette": record.parity.palette,
        },
        "frame_ms": { "p50": at(0.5), "p99": at(0.99), "max": at(1.0) },
        "allocations_per_frame": {
            "frames": allocs.len(),
            "min": allocs.iter().min(), "p50": percentile(&allocs, 0.5),
            "p99": percentile(&allocs, 0.99), "max": allocs.iter().max(),
            "in_animator": {
                "min": inside.iter().min(), "p50": percentile(inside, 0.5),
                "p99": percentile(inside, 0.99), "max": inside.iter().max(),
            },
        },
        "warm_up_s": record.warm.map(|w| w.max(seconds * WARM_UP)),
        "resident_bytes": record.memory.iter().map(|m| json!({ "at_s": m.at, "bytes": m.bytes, "pipelines": m.pipelines, "compiling": m.compiling })).collect::<Vec<_>>(),
        "gpu_bytes": runtime.resident_bytes() + runtime.frame_buffer_bytes(),
        "memory_judged": record.memory_unjudged.is_none(),
        "memory_not_judged_because": record.memory_unjudged,
        "failures": record.failures,
        "pass": record.failures.is_empty(),
    });
    if args.json {
        print_json(&summary);
        return;
    }
    println!(
        "soak: {:.1} min, {} control ticks and {} presented frames ({} a tick, at alphas {ALPHAS:?}) on {}; members {}..{} (+{} heroes)",
        seconds / 60.0,
        record.ticks,
        record.frames,
        ALPHAS.len(),
        runtime.context().adapter.name,
        record.members.0.saturating_sub(args.heroes as usize),
        record.members.1.saturating_sub(args.heroes as usize),
        args.heroes
    );
    println!("  disturbances: {}", record.disturbances.len());
    println!(
        "  checks: {} ({} of frames at alpha {}, {} at {}; control digest vs one-thread replay; GPU vs CPU reference on {} member poses, {} left out for history, {} hero palettes, {} members missing from frames): worst position {:.2e} x extent, rotation {:.2e} rad, palette {:.2e}",
        record.checks, record.checks_at[0], ALPHAS[0], record.checks_at[1], ALPHAS[1], record.parity.compared, record.parity.skipped, record.parity.heroes, record.parity.missing, record.parity.position, record.parity.rotation, record.parity.palette
    );
    println!(
        "  presented frame ms (a tick's work in the first frame after it): p50 {:.1}, p99 {:.1}, max {:.1}",
        at(0.5),
        at(0.99),
        at(1.0)
    );
    println!(
        "  allocations per undisturbed presented frame: min {}, p50 {}, p99 {}, max {} ({} frames); in the animator's calls: p50 {}, p99 {}, max {}",
        allocs.iter().min().unwrap_or(&0),
        percentile(&allocs, 0.5),
        percentile(&allocs, 0.99),
        allocs.iter().max().unwrap_or(&0),
        allocs.len(),
        percentile(inside, 0.5),
        percentile(inside, 0.99),
        inside.iter().max().unwrap_or(&0),
    );
    let series: Vec<String> = (record.memory.iter())
        .map(|m| format!("{:.0}s {:.1} ({})", m.at, mib(m.bytes), m.pipelines))
        .collect();
    println!("  resident MiB (pipelines built): {}", series.join(", "));
    match record.warm {
        Some(w) => println!("  warm-up: the first {:.0} s", w.max(seconds * WARM_UP)),
        None => println!("  warm-up: not over"),
    }
    if let Some(why) = &record.memory_unjudged {
        println!("  memory NOT judged: {why}");
    }
    match record.failures.is_empty() {
        true => println!(
            "  pass: no divergence, every disturbance refused or survived, {}",
            match record.memory_unjudged {
                None => "no growth",
                Some(_) => "allocations did not grow (memory not judged)",
            }
        ),
        false => record.failures.iter().for_each(|f| println!("  FAIL: {f}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    /// A 60-s run warmed up at 10 s, sampled every 5 s: (MiB, pipelines built) per sample.
    fn judged(series: &[(u64, usize)]) -> (Vec<String>, Option<String>) {
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
        (record.failures, record.memory_unjudged)
    }

    /// The checks can fail: the parity check reads each member from its own frame slot across
    /// the gaps despawns leave (and the hero's palette), and fails when the reference evaluates
    /// the programs of another frame than the one presented; the digests differ once the
    /// animator ticks without its replay.
    #[test]
    fn the_checks_pass_across_despawned_slots_and_fail_on_another_frame_or_tick() {
        let Some(ctx) = GpuContext::for_tests() else {
            return;
        };
        let package = throng::builtin_character().unwrap();
        let placements: Vec<Affine3A> = (0..12).map(|i| placement(i, 4)).collect();
        let mut soak = Soak::new(&ctx, &[&package], &placements, 1).unwrap();
        for _ in 0..3 {
            soak.tick().unwrap();
        }
        // Crowd indices 5 and 2: members 5 and 2 (index 5 first, so 2 has not moved).
        assert_eq!(soak.despawn(5).unwrap(), MemberId(5));
        assert_eq!(soak.despawn(2).unwrap(), MemberId(2));
        for _ in 0..3 {
            soak.tick().unwrap();
        }
        soak.present(0.5).unwrap();
        let batches = soak.animator.runtime().batches().len();
        assert!(
            batches >= 2,
            "despawned slots split the frame: {batches} batch"
        );
        let worst = soak.check_parity(0.5, 64).unwrap();
        assert!(worst.pass(), "{worst:?}");
        assert_eq!((worst.compared + worst.skipped, worst.heroes), (9, 1));
        assert_eq!(soak.animator.control_digest(), soak.replay.digest());
        let other = soak.check_parity(1.0, 64).unwrap();
        assert!(
            !other.pass(),
            "a frame at 0.5 checked as one at 1.0: {other:?}"
        );
        soak.animator.tick().unwrap();
        assert_ne!(soak.animator.control_digest(), soak.replay.digest());
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
        assert_eq!(
            judged(&[&steps[..], &flat[..]].concat()),
            (Vec::new(), None)
        );
    }

    #[test]
    fn growth_between_compilations_fails_the_run() {
        let leak: Vec<(u64, usize)> = (0..12).map(|i| (300 + 8 * i, 20)).collect();
        let (failures, _) = judged(&leak);
        assert!(
            failures.iter().any(|f| f.contains("resident memory grew")),
            "{failures:?}"
        );
    }

    #[test]
    fn a_run_that_compiles_throughout_says_it_could_not_judge_memory_and_does_not_fail() {
        let busy: Vec<(u64, usize)> = (0..12).map(|i| (300, 20 + i)).collect();
        let (failures, unjudged) = judged(&busy);
        assert!(failures.is_empty(), "{failures:?}");
        assert!(
            unjudged.is_some_and(|why| why.contains("too little to judge")),
            "the run says memory was not judged"
        );
    }
}
