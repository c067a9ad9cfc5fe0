//! GPU-vs-CPU parity (DESIGN.md §6): random but valid programs evaluated by the GPU runtime
//! and by throng-cpu-ref's `CpuRuntime` on the same cooked data, compared stage by stage; the
//! report gives the worst error of each stage and where it was found, and the ops exercised.
//!
//! A run is two frames of the same four program shapes per batch (each compiled once), instance
//! `i` running template `i % 4` with its own clips, times and weights each frame. The templates
//! carry inertialization by their index ([`HISTORY_USE`]): none, an `Inertialize` from the slot,
//! a capture interrupting the slot's decay, and a plain capture. In the first frame every
//! instance names its own slot; in the second, instances `4k + 1` and `4k + 3` swap slots, so the
//! inertializing one reads what its partner captured a frame earlier, and the interrupting one
//! reads its own first capture. Only the second frame's outputs are compared; its inertialized
//! poses depend on the first frame's captures.
//!
//! Scales: errors of positions are relative to the skeleton extent (the bounding-box diagonal
//! of the rest pose's joint positions in component space) or, for skinned vertices, to the
//! bounding-box diagonal of the instance's CPU-skinned mesh (animated bounds too, whose corners
//! are compared, and which must hold every GPU-skinned vertex exactly); rotations are angles in
//! radians.
//! Both are measured in the space the GPU writes (component space; placements are rigid), so
//! rigs with 100× / 0.01 factors between nodes are judged at their own scale.

use std::fmt;

use glam::{Affine3A, Quat, Vec3, Vec3A, Vec4};
use serde::Serialize;
use throng_cpu_ref::frame::batch_assets;
use throng_cpu_ref::program::NO_MASK;
use throng_cpu_ref::retained::{Instances, Kind};
use throng_cpu_ref::values::{map_values, ValueKind};
use throng_cpu_ref::{
    fk::local_to_component, CpuRuntime, Mask, Package, PoseOp, Program, Skeleton, SkinnedVertex,
};
use throng_fixtures::SplitMix64 as Rng;

use crate::{
    AdapterReport, Batch, BatchOutput, Capacities, Decode, FrameReport, GpuContext, GpuError,
    Instance, Mapping, Pose, Runtime, RuntimeOptions, Specialise,
};

/// Tolerances of DESIGN.md §6 (all relative or in radians).
pub const POSITION_TOLERANCE: f64 = 1e-4;
pub const ROTATION_TOLERANCE: f64 = 1e-4;
pub const VERTEX_TOLERANCE: f64 = 1e-4;
/// Curve values, absolute (issue 48's bar; curves are unitless weights).
pub const CURVE_TOLERANCE: f64 = 1e-5;

/// A package to check, with a name for the report.
#[derive(Clone, Copy, Debug)]
pub struct PackageUnderTest<'a> {
    pub name: &'a str,
    pub package: &'a Package,
}

/// GPU outputs and CPU reference outputs of one batch, before comparison.
#[derive(Clone, Debug)]
pub struct BatchCase {
    pub package: String,
    pub skeleton: u32,
    pub skin: Option<u32>,
    /// Skeleton extent in component space (rest pose joint bounding-box diagonal).
    pub extent: f32,
    /// Per instance: true when its palette came from the CPU (local / component not compared).
    pub heroes: Vec<bool>,
    /// Per instance its level of detail, and per level (from 1) the skin vertices it skins
    /// (`SkinTier::vertices`; empty: all). The GPU reads back NaN at the others.
    pub levels: Vec<u8>,
    pub level_vertices: Vec<Vec<u32>>,
    pub gpu: BatchOutput,
    pub cpu: BatchOutput,
}

/// Everything one parity run evaluated.
#[derive(Clone, Debug)]
pub struct ParityRun {
    pub adapter: AdapterReport,
    pub seed: u64,
    /// The GPU frame that evaluated every batch.
    pub frame: FrameReport,
    /// Op names that frame's programs contain.
    pub ops: Vec<&'static str>,
    pub cases: Vec<BatchCase>,
}

/// Which GPU path a parity run holds to the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Path {
    /// Every dispatch on the general interpreter.
    Interpreter,
    /// Every dispatch on its specialised pipeline for the mapping (built before the frame).
    Specialised(Mapping),
}

impl Path {
    pub fn name(self) -> String {
        match self {
            Path::Interpreter => "interpreter".into(),
            Path::Specialised(m) => format!("specialised, {} mapping", m.name()),
        }
    }
}

/// What [`evaluate`] builds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    pub seed: u64,
    /// Instances per skeleton (the second one of each skinned batch is a hero).
    pub instances: u32,
    /// Storage binding limit override, to force pages ([`Capacities::binding_limit`]).
    pub binding_limit: Option<u64>,
    pub path: Path,
    /// The GPU runtime's decode cache policy ([`Decode::Never`] checks each instance's own
    /// decoding, [`Decode::Auto`] the decode cache as well).
    pub decode: Decode,
    /// `Some(alpha)`: the instances are retained (throng-cpu-ref `retained`) and presented at
    /// `alpha` between two ticks whose programs differ in their values alone
    /// ([`Runtime::present`], `CpuRuntime::present`); `None`: frames of batches.
    pub present: Option<f32>,
}

/// The worst error of one stage.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StageParity {
    pub stage: &'static str,
    pub worst: f64,
    pub tolerance: f64,
    pub unit: &'static str,
    /// `instance i, element e` of the worst error.
    pub at: String,
    pub pass: bool,
}

/// Parity of one batch (one skeleton of one package).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BatchParity {
    pub package: String,
    pub skeleton: u32,
    pub joints: usize,
    pub instances: usize,
    pub heroes: usize,
    pub extent: f32,
    pub stages: Vec<StageParity>,
    pub pass: bool,
}

/// The parity report: worst error per stage per batch, and the verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParityReport {
    pub adapter: AdapterReport,
    pub seed: u64,
    pub path: Path,
    /// `Some(alpha)`: retained instances presented at `alpha` between two ticks
    /// ([`run_presented`]); `None`: a frame of batches.
    pub present: Option<f32>,
    pub frame: FrameReport,
    /// Op names the compared frame's programs contain.
    pub ops: Vec<&'static str>,
    pub batches: Vec<BatchParity>,
    pub pass: bool,
}

/// Builds `instances` random programs (one of them a hero) per skeleton of every package,
/// evaluates them in one GPU frame on `path` and on the CPU reference, and compares.
pub fn run(
    ctx: &GpuContext,
    packages: &[PackageUnderTest],
    seed: u64,
    instances: u32,
    path: Path,
) -> Result<ParityReport, GpuError> {
    run_with(ctx, packages, seed, instances, path, None)
}

/// [`run`] on retained instances presented at `alpha` between two ticks ([`Options::present`]).
pub fn run_presented(
    ctx: &GpuContext,
    packages: &[PackageUnderTest],
    seed: u64,
    instances: u32,
    path: Path,
    alpha: f32,
) -> Result<ParityReport, GpuError> {
    run_with(ctx, packages, seed, instances, path, Some(alpha))
}

fn run_with(
    ctx: &GpuContext,
    packages: &[PackageUnderTest],
    seed: u64,
    instances: u32,
    path: Path,
    present: Option<f32>,
) -> Result<ParityReport, GpuError> {
    let options = Options {
        seed,
        instances,
        binding_limit: None,
        path,
        decode: Decode::Auto,
        present,
    };
    let run = evaluate(ctx, packages, &options)?;
    Ok(ParityReport {
        present,
        ..compare(&run, path)
    })
}

/// Program shapes per batch.
const SHAPES: usize = 4;

/// What a template's program does with inertialization history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistoryUse {
    None,
    /// The base pose takes the offset of the instance's slot.
    Inertialize,
    /// Captures the offset of a source from the base pose, and takes it at once.
    Capture,
    /// As `Capture`, with the source and previous source taking the slot's old offset first.
    Interrupt,
}

/// The history use of each template index.
pub const HISTORY_USE: [HistoryUse; SHAPES] = [
    HistoryUse::None,
    HistoryUse::Inertialize,
    HistoryUse::Interrupt,
    HistoryUse::Capture,
];

/// Frames of a run; the last is compared.
const FRAMES: usize = 2;

/// Instance `i`'s history slot in `frame` (module doc), of `n` instances from `first`.
fn history_slot(first: u32, i: usize, n: usize, frame: usize) -> u32 {
    let partner = match i % SHAPES {
        1 if i + 2 < n => i + 2,
        3 => i - 2,
        _ => i,
    };
    first + if frame == 0 { i } else { partner } as u32
}

/// `template` with new clips (of the same encoding), times and weights, and history `slot`:
/// the same shape.
fn reroll(rng: &mut Rng, p: &Package, clips: &[u32], template: &Program, slot: u32) -> Program {
    let mut program = template.clone();
    let duration = if rng.chance(0.1) {
        0.0
    } else {
        0.05 + rng.unit() * 0.5
    };
    for o in &mut program.ops {
        match o.code {
            throng_cpu_ref::program::op::CAPTURE => {
                o.c = slot;
                o.weight = 0.005 + rng.unit() * 0.05;
            }
            throng_cpu_ref::program::op::INERTIALIZE => {
                o.c = slot;
                o.weight = duration;
                o.time = if o.time == 0.0 {
                    0.0
                } else {
                    rng.unit() * duration * 1.2
                };
            }
            throng_cpu_ref::program::op::SAMPLE => {
                let same: Vec<u32> = clips
                    .iter()
                    .copied()
                    .filter(|&c| p.clips[c as usize].encoding() == p.clips[o.a as usize].encoding())
                    .collect();
                o.a = same[rng.index(same.len())];
                o.time = random_time(rng, p, o.a);
            }
            throng_cpu_ref::program::op::OVERRIDE | throng_cpu_ref::program::op::ADDITIVE => {
                o.weight = random_weight(rng)
            }
            _ => {}
        }
    }
    for w in &mut program.weights {
        *w = if *w == 0.0 {
            0.0
        } else {
            random_weight(rng) * 2.0
        };
    }
    program
}

/// One batch's instances: program templates, this frame's programs, placements, and which one
/// is a hero.
struct BatchPlan {
    package: usize,
    skeleton: u32,
    skin: Option<u32>,
    extent: f32,
    /// Reduced LOD levels of the batch's skeleton.
    levels: usize,
    /// Clips of the batch's skeleton.
    clips: Vec<u32>,
    templates: Vec<Program>,
    programs: Vec<Program>,
    placements: Vec<Affine3A>,
    hero: Vec<bool>,
}

/// The GPU and CPU halves of [`run`], without the comparison: two frames (module doc). Each
/// package gets random masks per skeleton (a subtree, a uniform and a random one) before both
/// runtimes see it.
pub fn evaluate(
    ctx: &GpuContext,
    packages: &[PackageUnderTest],
    options: &Options,
) -> Result<ParityRun, GpuError> {
    let Options {
        seed,
        instances,
        binding_limit,
        path,
        decode,
        present,
    } = *options;
    let mut rng = Rng::new(seed);
    let masked: Vec<Package> = packages
        .iter()
        .map(|put| {
            let mut p = put.package.clone();
            for (s, skeleton) in put.package.skeletons.iter().enumerate() {
                p.masks.extend(random_masks(&mut rng, s as u32, skeleton));
            }
            p
        })
        .collect();
    let all: Vec<&Package> = masked.iter().collect();
    let skeletons: u32 = all.iter().map(|p| p.skeletons.len() as u32).sum();
    let mut capacities = Capacities::for_packages(&all, instances * skeletons.max(1));
    capacities.binding_limit = binding_limit;
    capacities.history_slots = capacities.instances;
    let runtime_options = RuntimeOptions {
        mapping: match path {
            Path::Specialised(m) => Some(m),
            Path::Interpreter => None,
        },
        specialise: match path {
            Path::Interpreter => Specialise::Never,
            Path::Specialised(_) => Specialise::Blocking,
        },
        outputs: PARITY_OUTPUTS,
        fk: true,
        decode,
    };
    let mut gpu = Runtime::with_options(ctx, capacities, runtime_options)?;
    let cpu_runtime = || CpuRuntime::new(capacities.program_limits(), PARITY_OUTPUTS, 1);
    let (mut cpu, mut heroes) = (cpu_runtime(), cpu_runtime());
    let mut ids = Vec::new();
    for package in &masked {
        ids.push(gpu.add_package(package)?);
        cpu.add_package(package);
        heroes.add_package(package);
    }
    let mut plans = Vec::new();
    for (p, package) in masked.iter().enumerate() {
        for s in 0..package.skeletons.len() as u32 {
            plans.push((ids[p], BatchPlan::new(&mut rng, p, package, s, instances)));
        }
    }
    let mut frame = FrameReport::default();
    match present {
        Some(alpha) => {
            let limits = capacities.program_limits();
            let mut store = Instances::new(limits, capacities.instances);
            frame = evaluate_presented(
                (&mut gpu, &mut cpu, &mut heroes),
                &mut store,
                &mut plans,
                (&masked, &mut rng),
                alpha,
            )?;
        }
        None => {
            for f in 0..FRAMES {
                let mut first = 0;
                for (_, plan) in &mut plans {
                    plan.reroll(&mut rng, &masked[plan.package], first, f);
                    first += instances;
                }
                frame = evaluate_frame(&mut gpu, &mut cpu, &mut heroes, &plans, f + 1 == FRAMES)?;
            }
        }
    }
    let ops = op_names(plans.iter().flat_map(|(_, plan)| &plan.programs));
    let gpu_out = gpu.readback()?;
    let cases = plans
        .iter()
        .zip(cpu.outputs())
        .zip(gpu_out)
        .map(|(((id, plan), cpu), gpu_out)| BatchCase {
            package: packages
                .get(plan.package)
                .map_or_else(String::new, |p| p.name.to_string()),
            skeleton: plan.skeleton,
            skin: plan.skin,
            extent: plan.extent,
            heroes: plan.hero.clone(),
            levels: (0..plan.programs.len()).map(|i| plan.lod(i)).collect(),
            level_vertices: plan
                .skin
                .and_then(|k| gpu.package(*id)?.skins.get(k as usize))
                .map_or_else(Vec::new, |s| {
                    s.tiers.iter().skip(1).map(|t| t.vertices.clone()).collect()
                }),
            gpu: gpu_out,
            cpu: cpu.clone(),
        })
        .collect();
    Ok(ParityRun {
        adapter: ctx.adapter.clone(),
        seed,
        frame,
        ops,
        cases,
    })
}

/// Names of the ops in `programs`, in op-code order.
fn op_names<'a>(programs: impl Iterator<Item = &'a Program>) -> Vec<&'static str> {
    use throng_cpu_ref::program::op;
    let names = [
        (op::REST, "Rest"),
        (op::SAMPLE, "Sample"),
        (op::BLEND, "Blend"),
        (op::OVERRIDE, "Override"),
        (op::ADDITIVE, "Additive"),
        (op::TO_COMPONENT, "ToComponent"),
        (op::PALETTE, "Palette"),
        (op::CAPTURE, "Capture"),
        (op::INERTIALIZE, "Inertialize"),
    ];
    let mut seen = [false; 10];
    for o in programs.flat_map(|p| &p.ops) {
        if let Some(s) = seen.get_mut(o.code as usize) {
            *s = true;
        }
    }
    names
        .iter()
        .filter(|(code, _)| seen[*code as usize])
        .map(|&(_, name)| name)
        .collect()
}

/// One frame of `plans` on the GPU and on the CPU reference. In a frame that is `compared`,
/// heroes bring palettes from `heroes`, a CPU runtime of their own (so the reference's history
/// sees each frame once); in one that is not, which only writes the history the next frame reads,
/// every instance is a program (the same pipelines run it).
fn evaluate_frame(
    gpu: &mut Runtime,
    cpu: &mut CpuRuntime,
    heroes: &mut CpuRuntime,
    plans: &[(crate::PackageId, BatchPlan)],
    compared: bool,
) -> Result<FrameReport, GpuError> {
    let as_programs: Vec<Vec<Instance>> =
        plans.iter().map(|(_, plan)| plan.instances(None)).collect();
    fn batches<'a>(
        plans: &[(crate::PackageId, BatchPlan)],
        lists: &'a [Vec<Instance<'a>>],
    ) -> Vec<Batch<'a>> {
        plans
            .iter()
            .zip(lists)
            .map(|((id, plan), list)| Batch {
                package: *id,
                skeleton: plan.skeleton,
                skin: plan.skin,
                instances: list,
            })
            .collect()
    }
    if !compared {
        let poses = batches(plans, &as_programs);
        let frame = gpu.frame(&poses)?;
        cpu.frame(&poses)?;
        return Ok(frame);
    }
    heroes.frame(&batches(plans, &as_programs))?;
    let hero_palettes: Vec<Vec<Vec<Affine3A>>> = plans
        .iter()
        .zip(heroes.outputs())
        .map(|((_, plan), out)| {
            (0..plan.programs.len())
                .map(|i| {
                    if plan.hero[i] {
                        out.palettes[i * out.palette_len..(i + 1) * out.palette_len].to_vec()
                    } else {
                        Vec::new()
                    }
                })
                .collect()
        })
        .collect();
    let lists: Vec<Vec<Instance>> = plans
        .iter()
        .zip(&hero_palettes)
        .map(|((_, plan), h)| plan.instances(Some(h)))
        .collect();
    let frame_batches = batches(plans, &lists);
    let frame = gpu.frame(&frame_batches)?;
    cpu.frame(&frame_batches)?;
    Ok(frame)
}

/// The palettes of `plans`' heroes, from `heroes` posing every instance's program.
fn hero_palettes(
    heroes: &mut CpuRuntime,
    plans: &[(crate::PackageId, BatchPlan)],
) -> Result<Vec<Vec<Vec<Affine3A>>>, GpuError> {
    let lists: Vec<Vec<Instance>> = plans.iter().map(|(_, plan)| plan.instances(None)).collect();
    let batches: Vec<Batch> = (plans.iter().zip(&lists))
        .map(|((id, plan), list)| Batch {
            package: *id,
            skeleton: plan.skeleton,
            skin: plan.skin,
            instances: list,
        })
        .collect();
    heroes.frame(&batches)?;
    Ok((plans.iter().zip(heroes.outputs()))
        .map(|((_, plan), out)| {
            (0..plan.programs.len())
                .map(|i| match plan.hero[i] {
                    true => out.palettes[i * out.palette_len..(i + 1) * out.palette_len].to_vec(),
                    false => Vec::new(),
                })
                .collect()
        })
        .collect())
}

/// The retained form of a run: every instance added to `store`, then two ticks, the second
/// with the first's programs and new values (times stepped, weights changed) and moved
/// placements, each presented at `alpha` on the GPU and the CPU reference (the first to fill
/// the history the second reads). Heroes show palettes `heroes` posed.
fn evaluate_presented(
    (gpu, cpu, heroes): (&mut Runtime, &mut CpuRuntime, &mut CpuRuntime),
    store: &mut Instances,
    plans: &mut [(crate::PackageId, BatchPlan)],
    (packages, rng): (&[Package], &mut Rng),
    alpha: f32,
) -> Result<FrameReport, GpuError> {
    let mut ids = Vec::new();
    let mut first = 0;
    for (id, plan) in plans.iter_mut() {
        let kind = Kind {
            package: *id,
            skeleton: plan.skeleton,
            skin: plan.skin,
        };
        for placement in &plan.placements {
            ids.push(store.add(kind, placement)?);
        }
        plan.reroll(rng, &packages[plan.package], first, 0);
        first += plan.placements.len() as u32;
    }
    let mut frame = FrameReport::default();
    for tick in 0..2 {
        if tick == 1 {
            for (_, plan) in plans.iter_mut() {
                for p in &mut plan.programs {
                    step_values(rng, p);
                }
                for (i, m) in plan.placements.iter_mut().enumerate() {
                    let step = Affine3A::from_rotation_translation(
                        Quat::from_rotation_y(0.1 * rng.unit()),
                        Vec3::new(0.05, 0.0, 0.02) * (i % 3) as f32,
                    );
                    *m *= step;
                }
            }
        }
        let palettes = hero_palettes(heroes, plans)?;
        let mut k = 0;
        for ((id, plan), palettes) in plans.iter().zip(&palettes) {
            let batch = Batch {
                package: *id,
                skeleton: plan.skeleton,
                skin: plan.skin,
                instances: &[],
            };
            let assets = batch_assets(0, &batch, |p| gpu.package(p).map(|r| &r.package))?;
            for (i, palette) in palettes.iter().enumerate() {
                let instance = ids[k];
                k += 1;
                if plan.hero[i] {
                    store.set_hero(instance, Some(palette), &assets)?;
                } else {
                    store.set_level(instance, 0, &assets)?;
                    store.set_program(instance, &plan.programs[i], &assets)?;
                    store.set_level(instance, plan.lod(i), &assets)?;
                }
                store.set_placement(instance, &plan.placements[i], false)?;
            }
        }
        store.commit();
        frame = gpu.present(store, alpha)?;
        cpu.present(store, alpha, false)?;
    }
    Ok(frame)
}

/// `program`'s values moved as a tick moves them: times stepped by up to a third of a second
/// either way, blend weights new, layer weights new within [0, 1], elapsed times stepped on.
fn step_values(rng: &mut Rng, program: &mut Program) {
    map_values(program, |_, _, kind, v| match kind {
        ValueKind::Time => (v + (rng.unit() - 0.5) * 0.6).max(0.0),
        ValueKind::Linear => (v + (rng.unit() - 0.5) * 0.4).clamp(0.0, 1.0),
    });
}

/// Compares every case of `run` stage by stage.
pub fn compare(run: &ParityRun, path: Path) -> ParityReport {
    let batches: Vec<BatchParity> = run.cases.iter().map(compare_case).collect();
    let pass = batches.iter().all(|b| b.pass);
    ParityReport {
        adapter: run.adapter.clone(),
        seed: run.seed,
        path,
        present: None,
        frame: run.frame.clone(),
        ops: run.ops.clone(),
        batches,
        pass,
    }
}

impl BatchPlan {
    /// The batch's templates and placements; its programs come with [`BatchPlan::reroll`].
    fn new(rng: &mut Rng, package: usize, p: &Package, skeleton: u32, instances: u32) -> Self {
        let sk = &p.skeletons[skeleton as usize];
        let skin = p
            .skins
            .iter()
            .position(|s| s.skeleton == skeleton)
            .map(|k| k as u32);
        let clips: Vec<u32> = (0..p.clips.len() as u32)
            .filter(|&c| {
                let clip = &p.clips[c as usize];
                clip.skeleton == skeleton && clip.sub_tracks.len() == 3 * sk.joint_count()
            })
            .collect();
        let masks: Vec<u32> = (0..p.masks.len() as u32)
            .filter(|&m| p.masks[m as usize].skeleton == skeleton)
            .collect();
        let selections: Vec<u32> = (0..p.curves.selections.len() as u32)
            .filter(|&s| p.curves.selections[s as usize].skeleton == skeleton)
            .collect();
        let n = instances as usize;
        // A few program shapes per batch, each instance one of them with its own clips, times
        // and weights: every specialised pipeline is compiled once and runs several instances.
        let templates: Vec<Program> = HISTORY_USE
            .iter()
            .map(|&h| random_program(rng, p, &clips, (&masks, &selections), skin, h))
            .collect();
        let placements = (0..n).map(|i| random_placement(rng, i)).collect();
        // The second instance is a hero when there is a skin to take its palette.
        let hero = (0..n).map(|i| i == 1 && skin.is_some()).collect();
        BatchPlan {
            package,
            skeleton,
            skin,
            extent: component_extent(sk),
            levels: sk.lods.len(),
            clips,
            templates,
            programs: Vec::new(),
            placements,
            hero,
        }
    }

    /// Instance `i`'s skeleton LOD level (module doc of [`BatchPlan::instances`]); 0 for a hero.
    fn lod(&self, i: usize) -> u8 {
        match self.programs[i].history_slot() {
            _ if self.hero[i] => 0,
            None => ((i / SHAPES) % (self.levels + 1)) as u8,
            Some(_) => 0,
        }
    }

    /// Frame `frame`'s programs: each instance's template with new clips, times and weights,
    /// and its history slot of that frame (slots from `first`).
    fn reroll(&mut self, rng: &mut Rng, p: &Package, first: u32, frame: usize) {
        let n = self.placements.len();
        self.programs = (0..n)
            .map(|i| {
                let slot = history_slot(first, i, n, frame);
                reroll(rng, p, &self.clips, &self.templates[i % SHAPES], slot)
            })
            .collect();
    }

    /// The batch's instances: heroes as programs without `palettes`, else with theirs. Each
    /// program without history runs at a skeleton LOD level of its own (every shape at every
    /// level of the skeleton), the others at level 0.
    fn instances<'a>(&'a self, palettes: Option<&'a [Vec<Affine3A>]>) -> Vec<Instance<'a>> {
        (0..self.programs.len())
            .map(|i| {
                let p = &self.programs[i];
                Instance {
                    pose: match palettes {
                        Some(h) if self.hero[i] => Pose::Hero(&h[i]),
                        _ => Pose::Lod(p, self.lod(i)),
                    },
                    placement: self.placements[i],
                }
            })
            .collect()
    }
}

/// Bounding-box diagonal of the rest pose's joint positions in component space (1 when zero).
pub fn component_extent(skeleton: &Skeleton) -> f32 {
    let mut component = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    local_to_component(skeleton, &skeleton.rest, &mut component);
    let (lo, hi) = component
        .iter()
        .fold((Vec3A::INFINITY, Vec3A::NEG_INFINITY), |(lo, hi), c| {
            (lo.min(c.translation), hi.max(c.translation))
        });
    let d = (hi - lo).length();
    if d.is_finite() && d > 1e-6 {
        d
    } else {
        1.0
    }
}

/// Angle between two unit quaternions as rotations, in radians (`4 atan2(|a - b|, |a + b|)`
/// after aligning hemispheres: twice the 4D angle).
fn quat_angle(a: Quat, b: Quat) -> f64 {
    let (va, mut vb) = (Vec4::from(a).as_dvec4(), Vec4::from(b).as_dvec4());
    if va.dot(vb) < 0.0 {
        vb = -vb;
    }
    4.0 * (va - vb).length().atan2((va + vb).length())
}

/// Largest angle between corresponding normalised columns of two linear parts, in radians.
pub fn column_angle(a: &Affine3A, b: &Affine3A) -> f64 {
    let cols = |m: &Affine3A| [m.matrix3.x_axis, m.matrix3.y_axis, m.matrix3.z_axis];
    cols(a)
        .iter()
        .zip(cols(b))
        .map(|(x, y)| {
            let (x, y) = (Vec3::from(*x).as_dvec3(), Vec3::from(y).as_dvec3());
            x.cross(y).length().atan2(x.dot(y))
        })
        .fold(0.0, f64::max)
}

/// Relative error of a palette entry: translation over `extent`, columns over their length.
pub fn palette_error(a: &Affine3A, b: &Affine3A, extent: f64) -> f64 {
    let t = (Vec3::from(a.translation).as_dvec3() - Vec3::from(b.translation).as_dvec3()).length()
        / extent;
    let cols = |m: &Affine3A| [m.matrix3.x_axis, m.matrix3.y_axis, m.matrix3.z_axis];
    cols(a).iter().zip(cols(b)).fold(t, |worst, (x, y)| {
        let (x, y) = (Vec3::from(*x).as_dvec3(), Vec3::from(y).as_dvec3());
        worst.max((x - y).length() / y.length().max(1e-12))
    })
}

/// Tracks the worst value of one stage.
struct Worst {
    stage: &'static str,
    unit: &'static str,
    tolerance: f64,
    worst: f64,
    at: String,
}

impl Worst {
    fn new(stage: &'static str, unit: &'static str, tolerance: f64) -> Self {
        Worst {
            stage,
            unit,
            tolerance,
            worst: 0.0,
            at: String::new(),
        }
    }

    fn see(&mut self, error: f64, instance: usize, element: usize) {
        // NaN counts as the worst possible error.
        let error = if error.is_nan() { f64::INFINITY } else { error };
        if error > self.worst || (self.at.is_empty() && error >= self.worst) {
            self.worst = error;
            self.at = format!("instance {instance}, element {element}");
        }
    }

    fn finish(self) -> StageParity {
        StageParity {
            stage: self.stage,
            worst: self.worst,
            tolerance: self.tolerance,
            unit: self.unit,
            pass: self.worst <= self.tolerance,
            at: self.at,
        }
    }
}

fn compare_case(c: &BatchCase) -> BatchParity {
    let extent = f64::from(c.extent);
    let rel = "× skeleton extent";
    let mut local_t = Worst::new("local translation", rel, POSITION_TOLERANCE);
    let mut local_q = Worst::new("local rotation", "rad", ROTATION_TOLERANCE);
    let mut local_s = Worst::new("local scale", "relative", POSITION_TOLERANCE);
    let mut comp_t = Worst::new("component position", rel, POSITION_TOLERANCE);
    let mut comp_q = Worst::new("component rotation", "rad", ROTATION_TOLERANCE);
    let mut palette = Worst::new("palette", "relative", POSITION_TOLERANCE);
    let mut vertex = Worst::new(
        "skinned position",
        "× mesh bounds diagonal",
        VERTEX_TOLERANCE,
    );
    let mut normal = Worst::new("skinned normal", "rad", ROTATION_TOLERANCE);
    let mut previous = Worst::new(
        "previous position",
        "× mesh bounds diagonal",
        VERTEX_TOLERANCE,
    );
    let mut bounds = Worst::new("bounds", "× mesh bounds diagonal", VERTEX_TOLERANCE);
    // A GPU-skinned vertex outside its GPU box: the box must hold it exactly.
    let mut outside = Worst::new("outside bounds", "× mesh bounds diagonal", 0.0);
    let mut curve = Worst::new("curve value", "absolute", CURVE_TOLERANCE);
    let joints = c.cpu.joints;
    let n = c.heroes.len();
    let count_mismatch = c.gpu.locals.len() != c.cpu.locals.len()
        || c.gpu.components.len() != c.cpu.components.len()
        || c.gpu.palettes.len() != c.cpu.palettes.len()
        || c.gpu.skinned.len() != c.cpu.skinned.len()
        || c.gpu.previous.len() != c.cpu.previous.len()
        || c.gpu.bounds.len() != c.cpu.bounds.len()
        || c.gpu.curves.len() != c.cpu.curves.len();
    if count_mismatch {
        for w in [
            &mut local_t,
            &mut comp_t,
            &mut palette,
            &mut vertex,
            &mut previous,
            &mut bounds,
            &mut curve,
        ] {
            w.see(f64::INFINITY, 0, 0);
        }
    }
    let channels = c.cpu.curve_count;
    for i in 0..n {
        if c.heroes[i] {
            continue;
        }
        for j in 0..joints {
            let k = i * joints + j;
            if let (Some(g), Some(r)) = (c.gpu.locals.get(k), c.cpu.locals.get(k)) {
                local_t.see(
                    (g.translation - r.translation).as_dvec3().length() / extent,
                    i,
                    j,
                );
                local_q.see(quat_angle(g.rotation, r.rotation), i, j);
                let scale = r.scale.abs().max_element().max(1e-12) as f64;
                local_s.see((g.scale - r.scale).as_dvec3().length() / scale, i, j);
            }
            if let (Some(g), Some(r)) = (c.gpu.components.get(k), c.cpu.components.get(k)) {
                let d = Vec3::from(g.translation - r.translation)
                    .as_dvec3()
                    .length();
                comp_t.see(d / extent, i, j);
                comp_q.see(column_angle(g, r), i, j);
            }
        }
        for ch in 0..channels {
            let k = i * channels + ch;
            if let (Some(g), Some(r)) = (c.gpu.curves.get(k), c.cpu.curves.get(k)) {
                curve.see(f64::from((g - r).abs()), i, ch);
            }
        }
    }
    let entries = c.cpu.palette_len;
    for (k, (g, r)) in c.gpu.palettes.iter().zip(&c.cpu.palettes).enumerate() {
        palette.see(
            palette_error(g, r, extent),
            k / entries.max(1),
            k % entries.max(1),
        );
    }
    let verts = c.cpu.vertex_count.max(1);
    for (i, (gs, rs)) in c
        .gpu
        .skinned
        .chunks(verts)
        .zip(c.cpu.skinned.chunks(verts))
        .enumerate()
    {
        let diagonal = bounds_diagonal(rs);
        // Vertices the instance's level of detail skins; the GPU leaves the others NaN.
        let level = c.levels.get(i).map_or(0, |&l| usize::from(l));
        let drawn = level.checked_sub(1).and_then(|l| c.level_vertices.get(l));
        let used =
            |v: usize| drawn.is_none_or(|d| d.is_empty() || d.binary_search(&(v as u32)).is_ok());
        if let (Some(gb), Some(rb)) = (c.gpu.bounds.get(i), c.cpu.bounds.get(i)) {
            let error = if gb.is_empty() || rb.is_empty() {
                if gb.is_empty() == rb.is_empty() {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                let d = (gb.min - rb.min).abs().max((gb.max - rb.max).abs());
                f64::from(d.max_element()) / diagonal
            };
            bounds.see(error, i, 0);
            for (v, g) in gs.iter().enumerate().filter(|(v, _)| used(*v)) {
                let out = (gb.min - g.position).max(g.position - gb.max).max_element();
                outside.see(f64::from(out.max(0.0)) / diagonal, i, v);
            }
        }
        let at = i * verts..(i + 1) * verts;
        if let (Some(gp), Some(rp)) = (c.gpu.previous.get(at.clone()), c.cpu.previous.get(at)) {
            for (v, (g, r)) in gp.iter().zip(rp).enumerate().filter(|(v, _)| used(*v)) {
                previous.see((*g - *r).as_dvec3().length() / diagonal, i, v);
            }
        }
        for (v, (g, r)) in gs.iter().zip(rs).enumerate().filter(|(v, _)| used(*v)) {
            vertex.see(
                (g.position - r.position).as_dvec3().length() / diagonal,
                i,
                v,
            );
            let (gn, rn) = (g.normal.as_dvec3(), r.normal.as_dvec3());
            normal.see(
                gn.cross(rn).length().atan2(gn.dot(rn)) * f64::from(u8::from(rn.length() > 0.5)),
                i,
                v,
            );
        }
    }
    let mut stages = vec![
        local_t.finish(),
        local_q.finish(),
        local_s.finish(),
        comp_t.finish(),
        comp_q.finish(),
    ];
    if channels > 0 {
        stages.push(curve.finish());
    }
    if c.skin.is_some() {
        stages.extend([
            palette.finish(),
            vertex.finish(),
            normal.finish(),
            previous.finish(),
            bounds.finish(),
            outside.finish(),
        ]);
    }
    let pass = stages.iter().all(|s| s.pass);
    BatchParity {
        package: c.package.clone(),
        skeleton: c.skeleton,
        joints,
        instances: n,
        heroes: c.heroes.iter().filter(|h| **h).count(),
        extent: c.extent,
        stages,
        pass,
    }
}

/// What both runtimes of the parity suite write: local poses and motion vectors besides the rest.
const PARITY_OUTPUTS: throng_cpu_ref::Outputs = throng_cpu_ref::Outputs {
    locals: true,
    motion: true,
};

/// Bounding-box diagonal of skinned positions (1 when degenerate).
fn bounds_diagonal(vertices: &[SkinnedVertex]) -> f64 {
    let (lo, hi) = vertices
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v.position), hi.max(v.position))
        });
    let d = f64::from((hi - lo).length());
    if d.is_finite() && d > 1e-12 {
        d
    } else {
        1.0
    }
}

impl fmt::Display for ParityReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fr = &self.frame;
        writeln!(
            f,
            "parity on {}, {} (seed {}; one frame{}: {} batches, {} shapes, {} dispatches: {} specialised, {} interpreter)",
            self.adapter,
            self.path.name(),
            self.seed,
            match self.present {
                Some(alpha) => format!(" of retained instances presented at {alpha} of a tick"),
                None => String::new(),
            },
            fr.batches,
            fr.shapes,
            fr.dispatches,
            fr.specialised_dispatches,
            fr.interpreter_dispatches
        )?;
        writeln!(f, "ops exercised: {}", self.ops.join(", "))?;
        for b in &self.batches {
            writeln!(
                f,
                "{} skeleton {} ({} joints, {} instances, {} hero, extent {:.4}): {}",
                b.package,
                b.skeleton,
                b.joints,
                b.instances,
                b.heroes,
                b.extent,
                if b.pass { "pass" } else { "FAIL" }
            )?;
            for s in &b.stages {
                writeln!(
                    f,
                    "  {:<20} worst {:>10.3e} {:<24} tolerance {:.0e}  {}  at {}",
                    s.stage,
                    s.worst,
                    s.unit,
                    s.tolerance,
                    if s.pass { "ok" } else { "FAIL" },
                    s.at
                )?;
            }
        }
        write!(
            f,
            "{}",
            if self.pass {
                "parity: pass"
            } else {
                "parity: FAIL"
            }
        )
    }
}

/// A subtree mask, a uniform one and a random per-joint one for skeleton `index`.
pub fn random_masks(rng: &mut Rng, index: u32, skeleton: &Skeleton) -> Vec<Mask> {
    let joints = skeleton.joint_count();
    let root = rng.below(joints as u32) as usize;
    let mut masks = Vec::with_capacity(3);
    if let Some(m) = Mask::subtree("subtree", index, skeleton, root, 1.0) {
        masks.push(m);
    }
    masks.push(Mask::uniform("half", index, skeleton, 0.5));
    masks.push(Mask {
        name: "random".into(),
        skeleton: index,
        weights: (0..joints).map(|_| rng.unit()).collect(),
    });
    masks
}

/// A layer weight: 0, 1 or anything between.
fn random_weight(rng: &mut Rng) -> f32 {
    match rng.below(4) {
        0 => 0.0,
        1 => 1.0,
        _ => rng.unit(),
    }
}

/// A sample time of `clip`: 0, the duration, a sample time, midway between samples, a random
/// time, or outside [0, duration] (sampling clamps).
fn random_time(rng: &mut Rng, p: &Package, clip: u32) -> f32 {
    let c = &p.clips[clip as usize];
    let duration = c.duration as f32;
    let i = rng.below(c.sample_count) as f32;
    match rng.below(7) {
        0 => 0.0,
        1 => duration,
        2 => (i / c.sample_rate).min(duration),
        3 => ((i + 0.5) / c.sample_rate).min(duration),
        4 => -0.25,
        5 => duration + 0.25,
        _ => rng.unit() * duration,
    }
}

/// A random valid program: 1-3 samples (or rest), an optional N-way blend, inertialization
/// as `history` says (history slot 0, times 0: [`reroll`] sets them; a capture's source in
/// register 5, previous source in 0, previous destination in 7), an optional masked override and
/// an optional masked additive, then `ToComponent` and the skin's `Palette`.
/// A random valid program over `clips`; its layers take one of `masks` (joint masks) and of
/// `selections` (curve selections, `PoseOp::with_curves`) or none.
pub fn random_program(
    rng: &mut Rng,
    p: &Package,
    clips: &[u32],
    (masks, selections): (&[u32], &[u32]),
    skin: Option<u32>,
    history: HistoryUse,
) -> Program {
    let mut ops = Vec::new();
    let mut weights = Vec::new();
    let source = |rng: &mut Rng, dst: u32, ops: &mut Vec<PoseOp>| {
        if clips.is_empty() || rng.chance(0.1) {
            ops.push(PoseOp::rest(dst));
        } else {
            let clip = clips[rng.below(clips.len() as u32) as usize];
            ops.push(PoseOp::sample(dst, clip, random_time(rng, p, clip)));
        }
    };
    let inputs = 1 + rng.below(3);
    for r in 0..inputs {
        source(rng, r, &mut ops);
    }
    let mut base = 0;
    if inputs > 1 || rng.chance(0.3) {
        let all_zero = rng.chance(0.1);
        for _ in 0..inputs {
            weights.push(if all_zero {
                0.0
            } else {
                random_weight(rng) * 2.0
            });
        }
        base = inputs;
        ops.push(PoseOp::blend(base, 0, inputs, 0));
    }
    // Times 1 mark an elapsed time for `reroll` to draw, 0 the capture frame's own.
    match history {
        HistoryUse::None => {}
        HistoryUse::Inertialize => ops.push(PoseOp::inertialize(base, 0, 1.0, 0.0)),
        HistoryUse::Capture | HistoryUse::Interrupt => {
            // One more sample: the previous source is the first input and the previous
            // destination the rest pose, which keeps the shape (and its compile) small.
            source(rng, 5, &mut ops);
            ops.push(PoseOp::rest(7));
            if history == HistoryUse::Interrupt {
                ops.push(PoseOp::inertialize(5, 0, 1.0, 0.0));
                ops.push(PoseOp::inertialize(7, 0, 1.0, 0.0));
            }
            ops.push(PoseOp::capture(base, 5, 0, 7, 0, 0.0));
            ops.push(PoseOp::inertialize(base, 0, 0.0, 0.0));
        }
    }
    let mask = |rng: &mut Rng| {
        if masks.is_empty() || rng.chance(0.3) {
            NO_MASK
        } else {
            masks[rng.index(masks.len())]
        }
    };
    // Draws only where the skeleton has selections, so packages without curves keep their
    // programs.
    let select = |rng: &mut Rng, o: PoseOp| {
        if selections.is_empty() || rng.chance(0.4) {
            o
        } else {
            o.with_curves(selections[rng.index(selections.len())])
        }
    };
    if rng.chance(0.6) {
        source(rng, 5, &mut ops);
        let m = mask(rng);
        let o = PoseOp::overriding(base, 5, random_weight(rng), m);
        ops.push(select(rng, o));
    }
    if rng.chance(0.6) {
        source(rng, 6, &mut ops);
        source(rng, 7, &mut ops);
        let m = mask(rng);
        let o = PoseOp::additive(base, 6, 7, random_weight(rng), m);
        ops.push(select(rng, o));
    }
    ops.push(PoseOp::to_component(base));
    if let Some(k) = skin {
        ops.push(PoseOp::palette(k));
    }
    Program { ops, weights }
}

/// A rigid placement: instance `i` on a grid, turned about +Y (and the first one identity).
fn random_placement(rng: &mut Rng, i: usize) -> Affine3A {
    if i == 0 {
        return Affine3A::IDENTITY;
    }
    let t = Vec3::new((i % 8) as f32 * 2.0, 0.0, (i / 8) as f32 * 2.0);
    Affine3A::from_rotation_translation(
        Quat::from_rotation_y(rng.unit() * std::f32::consts::TAU),
        t,
    )
}
