//! `throng demo`: a headless crowd evaluated on the GPU and rendered offscreen to PNG.
//!
//! Per frame: control poses the crowd ([`drive`]: by default the generated character's state
//! tree `fixtures/trees/crowd.toml`, ticked once per frame at 30 Hz with per-member speed and
//! wave inputs and root motion moving the placements; `--programs fixed` or `--asset` use
//! throng-fixtures' formation of fixed per-instance programs instead), the heroes (`--heroes N`, [`hero`]) are
//! evaluated on the CPU with IK and a spring ponytail into palettes, the runtime uploads programs, palettes and
//! placements of one batch and runs program → FK → palette → skinning, the raster pass draws
//! the skinned chunks (heroes in gold), and the image is read back and written as PNG.

mod animation;
mod drive;
mod far;
pub(super) mod hero;

use std::path::{Path, PathBuf};
use std::time::Instant;

use glam::{Affine3A, Vec3};
use serde_json::json;
use throng_control::instance::Controller;
use throng_cpu_ref::bounds::Frustum;
use throng_cpu_ref::ik::IkResult;
use throng_cpu_ref::lod::LodState;
use throng_cpu_ref::significance::{BudgetReport, Claim, PoseBudget};
use throng_cpu_ref::stagger::{rate_for_height, Stagger};
use throng_cpu_ref::{Package, Program, ProgramLimits};
use throng_fixtures::Formation as Crowd;
use throng_gpu::raster::{Bounds, Image, Raster, RasterTimes, Scene};
use throng_gpu::{
    Attachment, Batch, FrameReport, GpuContext, GpuError, Instance, Mapping, Pose, PropMesh,
    Runtime, RuntimeOptions, StageTimes, Visibility,
};

use self::drive::{ControlStats, FixedCrowd, TreeCrowd};
use self::hero::{HeroIk, Heroes};
use super::{builtin_character, capacities, load_any, print_json, CliError};

/// Seconds between frames of a sequence, and the control tick period (one tick per frame).
const FRAME_STEP: f64 = 1.0 / 30.0;
/// Fixed programs: crowd time of the first frame, mid-motion rather than every clip at its offset.
const START_TIME: f64 = 0.5;
/// Events one member may deliver per tick.
const EVENT_CAPACITY: usize = 64;
/// Heroes stand this many grid cells apart, and this many in front of the crowd's area.
const HERO_SPACING: f32 = 1.6;
const HERO_FRONT: f32 = 1.2;

/// Where the crowd's programs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Programs {
    /// The state tree fixtures/trees/crowd.toml through throng-control (generated character only).
    Tree,
    /// Fixed per-instance programs: single clips, walk/run blends, masked waves, additive breathing.
    Fixed,
}

#[derive(clap::Args)]
pub struct Args {
    /// Instances in the crowd (on a square grid).
    #[arg(long, default_value_t = 1000)]
    instances: u32,
    /// Hero instances in front of the crowd, posed on the CPU with IK (head tracking a moving
    /// target, hands reaching) and skinned in the crowd's batch.
    #[arg(long, default_value_t = 0)]
    heroes: u32,
    /// Crowd programs: `tree` (default for the generated character) or `fixed` (the only choice
    /// with --asset).
    #[arg(long, value_enum)]
    programs: Option<Programs>,
    /// Frames to render at 30 Hz; with more than one, files are named <out>_0000.png, ...
    #[arg(long, default_value_t = 1)]
    frames: u32,
    /// Output PNG.
    #[arg(long, default_value = "crowd.png")]
    out: PathBuf,
    /// A .glb / .gltf (cooked with the default profile) or .throng package instead of the
    /// generated character.
    #[arg(long)]
    asset: Option<PathBuf>,
    /// Play the CMU motion capture clips in this folder (../shared/assets/mocap) retargeted
    /// onto the generated character (fixtures/retarget/cmu-to-character.toml) across the crowd,
    /// on fixed programs.
    #[arg(long, value_name = "DIR", conflicts_with = "asset")]
    mocap: Option<PathBuf>,
    /// Image width in pixels.
    #[arg(long, default_value_t = 1280)]
    width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 720)]
    height: u32,
    /// Pose mapping: `thread` (one thread per instance) or `workgroup` (one workgroup per
    /// instance); by default the adapter's choice (thread on a software adapter).
    #[arg(long, value_enum)]
    mapping: Option<MappingArg>,
    /// Skin and draw every instance: no frustum culling (on by default, against the camera).
    #[arg(long)]
    no_cull: bool,
    /// Skinned budget: members skinned and drawn per frame at most, nearest to the camera
    /// first (default: all of them, at most 2048).
    #[arg(long)]
    budget: Option<u32>,
    /// Update-rate LOD: far members re-evaluate their pose every 2, 3 or 4 frames by projected
    /// height (staggered per member), keeping their last pose in between.
    #[arg(long, conflicts_with = "pose_budget")]
    stagger: bool,
    /// Pose budget: joints posed per frame at most, served by projected height (tallest
    /// first); the others keep their last pose, but none waits more than --max-stale frames
    /// and members inertializing a transition always run.
    #[arg(long, value_name = "JOINTS")]
    pose_budget: Option<u64>,
    /// With --pose-budget: the most frames a member keeps its pose (its minimum service rate).
    #[arg(long, default_value_t = 8, value_name = "FRAMES")]
    max_stale: u32,
    /// Evaluate every joint of every member: no skeleton LOD (on by default: each member runs
    /// at the coarsest cooked level whose measured error projects under 1 px at its distance,
    /// with hysteresis; a member inertializing a transition runs every joint).
    #[arg(long)]
    no_lod: bool,
    /// Draw every member skinned: no far tier (on by default: a member under 16 px tall on
    /// screen is drawn as an impostor card of its clip frame, baked on the GPU at start).
    #[arg(long)]
    no_far_tier: bool,
    /// Colour members by tier instead of their own colours: by skeleton LOD level (green every
    /// joint, yellow level 1, orange level 2; heroes green; impostors blue), or with --no-lod by
    /// update rate (green every frame, yellow, orange, red every 2, 3, 4 frames, the rates
    /// --stagger uses).
    #[arg(long)]
    lod_tint: bool,
    /// Give every member a sword in its right hand: the state tree's socket `hand_r_weapon`
    /// (joint `hand_r`, declared for the demo), which control evaluates every tick on the
    /// CPU, and a prop on it that the GPU places from each member's palette (one dispatch for
    /// every prop) and the raster pass draws (one draw). Needs the tree (the generated
    /// character).
    #[arg(long)]
    props: bool,
    /// Also write each frame's motion vectors as a PNG (named like --out's frames): per pixel
    /// the screen-space motion of the nearest member since the last frame, red = x, green = y
    /// (down), 128 still, ±16 px at 0 and 255; members teleported around the area and members
    /// changing skeleton LOD level have none on that frame.
    #[arg(long, value_name = "FILE.png")]
    motion_vectors: Option<PathBuf>,
    /// Also write the frames as one looping animated GIF (256 colours per frame, the frames
    /// 3/100 s apart).
    #[arg(long, value_name = "FILE.gif")]
    gif: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// `--mapping` of `demo`, `bench` and `parity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MappingArg {
    Thread,
    Workgroup,
}

impl From<MappingArg> for Mapping {
    fn from(m: MappingArg) -> Mapping {
        match m {
            MappingArg::Thread => Mapping::Thread,
            MappingArg::Workgroup => Mapping::Workgroup,
        }
    }
}

/// Measurements of one frame.
struct FrameStats {
    report: FrameReport,
    stages: StageTimes,
    raster: RasterTimes,
    draws: usize,
    /// What culling kept: visible instances, skinned vertices, triangles.
    visibility: Visibility,
    /// Members evaluated and kept (update-rate LOD) this frame.
    evaluated: usize,
    kept: usize,
    /// Members at each skeleton LOD level (heroes and kept members at the level they had), and
    /// joints the pose pass evaluated the programs of (retained joints of evaluated members).
    lod_histogram: [usize; LOD_LEVELS],
    /// Members drawn as impostor cards (the far tier), counted in no LOD level.
    impostors: usize,
    joints_posed: usize,
    /// How the pose budget was spent (with --pose-budget).
    pose_budget: Option<BudgetReport>,
    control: ControlStats,
    /// CPU time of the heroes: program, FK, IK and palette.
    heroes_ms: f64,
    heroes: Vec<HeroIk>,
    /// Wall time from control to the PNG on disk.
    total_ms: f64,
    path: PathBuf,
}

/// The crowd's driver.
enum Driver {
    Tree(Box<TreeCrowd>),
    Fixed(Box<FixedCrowd>),
}

impl Driver {
    fn step(&mut self, frame: u32) -> Result<ControlStats, CliError> {
        match self {
            Driver::Tree(c) => c.step(),
            Driver::Fixed(c) => Ok(c.step(START_TIME + f64::from(frame) * FRAME_STEP)),
        }
    }

    /// Heroes first, then the crowd.
    fn programs(&self) -> &[Program] {
        match self {
            Driver::Tree(c) => &c.programs,
            Driver::Fixed(c) => &c.programs,
        }
    }

    /// Members the last step teleported (wrapped around the area): their motion resets.
    fn teleported(&self) -> &[bool] {
        match self {
            Driver::Tree(c) => &c.wrapped,
            Driver::Fixed(_) => &[],
        }
    }

    fn placements(&self) -> &[Affine3A] {
        match self {
            Driver::Tree(c) => &c.placements,
            Driver::Fixed(c) => &c.placements,
        }
    }

    /// The package the programs run against (the tree's masks joined it).
    fn package<'a>(&'a self, fixed: &'a Package) -> &'a Package {
        match self {
            Driver::Tree(c) => &c.ctl.package,
            Driver::Fixed(_) => fixed,
        }
    }

    /// Member `k`'s heaviest clip and its clip time: from its tree's players, or a fixed
    /// program's first sample.
    fn dominant_clip(&self, k: usize, weights: &mut Vec<f32>) -> Option<(u32, f64)> {
        match self {
            Driver::Tree(c) => c.dominant_clip(k, weights),
            Driver::Fixed(c) => (c.programs.get(k)?.ops.iter())
                .find(|o| o.code == throng_cpu_ref::program::op::SAMPLE)
                .map(|o| (o.a, f64::from(o.time))),
        }
    }

    fn limits(&self) -> ProgramLimits {
        match self {
            Driver::Tree(c) => at_least_default(c.ctl.limits()),
            Driver::Fixed(_) => ProgramLimits::default(),
        }
    }

    fn describe(&self) -> String {
        match self {
            Driver::Tree(c) => format!(
                "state tree fixtures/trees/crowd.toml, one tick per frame at {:.0} Hz, root motion moving placements",
                1.0 / c.ctl.period
            ),
            Driver::Fixed(_) => "fixed per-instance programs (throng-gpu crowd)".into(),
        }
    }
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.instances == 0 || args.frames == 0 || args.width == 0 || args.height == 0 {
        return Err(CliError::Usage(
            "--instances, --frames, --width and --height must be at least 1".into(),
        ));
    }
    let other_clips = args.asset.is_some() || args.mocap.is_some();
    let programs = match (args.programs, other_clips) {
        (Some(Programs::Tree), true) => return Err(CliError::Usage(
            "--programs tree drives the generated character's own clips only: real assets and mocap have no state tree"
                .into(),
        )),
        (Some(p), _) => p,
        (None, false) => Programs::Tree,
        (None, true) => Programs::Fixed,
    };
    let (mut package, name) = match (&args.asset, &args.mocap) {
        (Some(path), _) => (load_any(path)?, path.display().to_string()),
        (None, Some(dir)) => (
            throng::mocap_character(dir)?,
            format!("generated character on the mocap of {}", dir.display()),
        ),
        (None, None) => (builtin_character()?, "generated character".to_string()),
    };
    let ctx = GpuContext::new().map_err(no_gpu)?;
    // The crowd's skin is skin 0 (the formation's). A crowd too large for one runtime is
    // refused before its layout and control are built (a minute and gigabytes at a million).
    let skeleton = package.skins.first().map_or(0, |s| s.skeleton);
    // The controller binds the package as the tree was loaded for (before the formation adds
    // its mask), so the tree's masks follow the package's.
    if args.props && programs != Programs::Tree {
        return Err(CliError::Usage(
            "--props puts a prop on the state tree's socket: use the tree (the generated character, no --asset, no --programs fixed)".into(),
        ));
    }
    let ctl = match programs {
        Programs::Tree => {
            let source = match args.props {
                true => format!("{}{SWORD_SOCKET}", throng_fixtures::CROWD_TREE),
                false => throng_fixtures::CROWD_TREE.to_string(),
            };
            let tree = throng_control::tree::load(
                &source,
                "fixtures/trees/crowd.toml",
                &package,
                skeleton,
            )
            .map_err(|e| CliError::Control(e.to_string()))?;
            let ctl = Controller::new(tree, package.clone(), 1.0 / FRAME_STEP, EVENT_CAPACITY)
                .map_err(|e| CliError::Control(e.to_string()))?;
            Some(ctl)
        }
        Programs::Fixed => None,
    };
    let members = args.instances.saturating_add(args.heroes);
    let limits = at_least_default(
        ctl.as_ref()
            .map_or_else(ProgramLimits::default, Controller::limits),
    );
    capacities(&[&package], members, &limits)?.check(&ctx)?;
    let layout = Crowd::new(&mut package, 0, args.instances as usize)
        .map_err(|e| CliError::Usage(format!("{name}: {e}")))?;
    let (skin, spacing) = (layout.skin, layout.spacing);
    let hero_placements = front_row(&layout, args.heroes as usize);
    let mut bounds = hero_bounds(&layout, &hero_placements);
    let mut driver = match ctl {
        Some(ctl) => {
            let crowd = TreeCrowd::new(ctl, &layout, &hero_placements)?;
            bounds = bounds.union(&area_bounds(&layout, crowd.area.min, crowd.area.max));
            Driver::Tree(Box::new(crowd))
        }
        None => {
            bounds = bounds.union(&layout.bounds());
            let hero_programs = Crowd::new(&mut package, 0, args.heroes as usize)
                .map_err(|e| CliError::Usage(format!("{name}: {e}")))?;
            Driver::Fixed(Box::new(FixedCrowd::new(
                layout,
                hero_programs,
                &hero_placements,
            )))
        }
    };
    let limits = driver.limits();
    let mut heroes = match args.heroes {
        0 => None,
        _ => Some(Heroes::new(&package, skin, limits, hero_placements)?),
    };
    let members = driver.programs().len();
    let package = driver.package(&package).clone();
    let mut capacities = capacities(&[&package], members as u32, &limits)?;
    capacities.skinned_instances = args
        .budget
        .unwrap_or(DEFAULT_BUDGET)
        .min(members as u32)
        .max(1);
    if let Driver::Tree(c) = &driver {
        if c.ctl.tree.inertializes() {
            capacities.history_slots = members as u32;
        }
    }
    let options = RuntimeOptions {
        mapping: args.mapping.map(Mapping::from),
        outputs: throng_cpu_ref::Outputs {
            motion: args.motion_vectors.is_some(),
            ..throng_cpu_ref::Outputs::default()
        },
        ..RuntimeOptions::default()
    };
    let mut runtime = Runtime::with_options(&ctx, capacities, options)?;
    let id = runtime.add_package(&package)?;
    if let Driver::Tree(c) = &driver {
        let swords: Vec<Attachment> = (c.ctl.tree.sockets.iter())
            .map(|socket| Attachment {
                package: id,
                skin,
                joint: socket.joint,
                offset: Affine3A::from_translation(socket.offset),
                mesh: sword(),
            })
            .collect();
        runtime.set_attachments(&swords)?;
    }
    let mut raster = Raster::new(&ctx, args.width, args.height)?;
    let hero_count = heroes.as_ref().map_or(0, Heroes::len);
    let scene = Scene {
        highlight: hero_count as u32,
        ..Scene::framing(&bounds, raster.aspect(), spacing)
    };
    let assets = package
        .assets(skeleton)
        .ok_or_else(|| CliError::Usage(format!("{name}: no skeleton {skeleton}")))?;
    let frustum = Frustum::from_view_proj(&scene.camera.view_proj(raster.aspect()));
    runtime.set_frustum((!args.no_cull).then_some(frustum));
    let mut stagger = Stagger::new();
    let mut lod = LodState::new();
    let lods = &assets.skeleton.lods;
    let focal = args.height as f32 / (2.0 * (scene.camera.fov_y * 0.5).tan());
    // Frame slots nearest first (heroes first of all), so the budget serves the nearest: fixed
    // from the first frame's placements, so slots stay the same and kept poses stay valid.
    let eye = scene.camera.eye;
    let mut order: Vec<usize> = (0..members).collect();
    order[hero_count..].sort_by(|&a, &b| {
        let d = |k: usize| eye.distance_squared(driver.placements()[k].translation.into());
        d(a).total_cmp(&d(b))
    });
    let mut tiers = vec![1u8; members];
    let mut levels = vec![0u8; members];
    let mut heights = vec![0f32; members];
    let mut budget = PoseBudget::new();
    let mut far = far::FarTier::new(members);
    let mut rejoined = vec![false; members];
    let mut weights = Vec::new();
    let mut frames = Vec::with_capacity(args.frames as usize);
    let mut gif = (args.gif.as_deref())
        .map(|path| animation::GifWriter::create(path, args.width, args.height, FRAME_STEP))
        .transpose()?;
    for f in 0..args.frames {
        let start = Instant::now();
        let control = driver.step(f)?;
        let hero_start = Instant::now();
        if let Some(h) = heroes.as_mut() {
            for (k, program) in driver.programs()[..hero_count].iter().enumerate() {
                h.pose(k, program, &assets, f64::from(f) * FRAME_STEP)?;
            }
        }
        let heroes_ms = hero_start.elapsed().as_secs_f64() * 1e3;
        let (programs, placements) = (driver.programs(), driver.placements());
        for k in hero_count..members {
            let distance = scene.camera.eye.distance(placements[k].translation.into());
            let pixels_per_unit = focal / distance.max(1e-3);
            heights[k] = CHARACTER_HEIGHT * pixels_per_unit;
            let must = programs[k].capture_slot().is_some() || programs[k].history_slot().is_some();
            let was = far.far[k];
            let now = !args.no_far_tier && far.choose(k, heights[k], must);
            rejoined[k] = was && !now;
            // History (inertialization) needs every joint.
            levels[k] = match args.no_lod || programs[k].history_slot().is_some() {
                true => 0,
                false => lod.choose(k, pixels_per_unit, lods),
            };
            let rate = rate_for_height(heights[k]);
            tiers[k] = if args.no_lod { rate } else { 1 + levels[k] };
        }
        if far.far.iter().any(|&f| f) {
            far.ensure_baked(&ctx, &package, skin, &mut raster)?;
        }
        let spent = args.pose_budget.map(|joints| {
            let claims: Vec<Claim> = (0..members)
                .map(|k| Claim {
                    significance: heights[k],
                    joints: joints_at(assets.skeleton, levels[k]) as u32,
                    must: k < hero_count || programs[k].capture_slot().is_some(),
                })
                .collect();
            budget.plan(&claims, joints, args.max_stale)
        });
        let instances: Vec<Instance> = order
            .iter()
            .map(|&k| match heroes.as_ref().filter(|_| k < hero_count) {
                Some(h) => Instance {
                    pose: Pose::Hero(h.palette(k)),
                    placement: placements[k],
                },
                None if far.far[k] => Instance {
                    pose: Pose::Hidden,
                    placement: placements[k],
                },
                None => {
                    let p = &programs[k];
                    // A program that captures inertialization history must run this tick, and
                    // a member back from the far tier has no pose to keep.
                    let due = rejoined[k]
                        || match args.pose_budget {
                            Some(_) => budget.due(k),
                            None => {
                                let rate = rate_for_height(heights[k]);
                                !args.stagger || p.capture_slot().is_some() || stagger.due(k, rate)
                            }
                        };
                    Instance {
                        pose: match (due, levels[k]) {
                            (false, _) => Pose::Keep,
                            (true, 0) => Pose::Program(p),
                            (true, level) => Pose::Lod(p, level),
                        },
                        placement: placements[k],
                    }
                }
            })
            .collect();
        let batches = [Batch {
            package: id,
            skeleton,
            skin: Some(skin),
            instances: &instances,
        }];
        far.cards.clear();
        let tint = if args.lod_tint { far::FAR_TINT } else { 0 };
        for (s, &k) in order.iter().enumerate() {
            if far.far[k] {
                let clip = driver.dominant_clip(k, &mut weights);
                far.push_card(&package, &placements[k], s as u32, clip, tint);
            }
        }
        raster.set_cards(&far.cards);
        // Waiting between compute and raster keeps each wall time its own.
        if args.lod_tint {
            let by_slot: Vec<u8> = order.iter().map(|&k| tiers[k]).collect();
            raster.set_tiers(&by_slot);
        }
        for (s, &k) in order.iter().enumerate() {
            if driver.teleported().get(k) == Some(&true) {
                runtime.reset_motion(0, s);
            }
        }
        let report = runtime.frame(&batches)?;
        let stages = runtime.finish()?;
        let drawn = raster.render(&runtime, &scene)?;
        let raster_times = raster.finish()?;
        let image = raster.read_image()?;
        let path = frame_path(&args.out, f, args.frames);
        write_png(&path, &image)?;
        if let Some(gif) = gif.as_mut() {
            gif.push(&image)?;
        }
        if let Some(out) = &args.motion_vectors {
            raster.render_motion(&runtime, &scene, &scene.camera)?;
            write_png(&frame_path(out, f, args.frames), &raster.read_motion()?)?;
        }
        frames.push(FrameStats {
            report,
            stages,
            raster: raster_times,
            draws: drawn.draws,
            visibility: runtime.visibility(),
            kept: instances
                .iter()
                .filter(|x| matches!(x.pose, Pose::Keep))
                .count(),
            evaluated: instances
                .iter()
                .filter(|x| x.pose.program().is_some())
                .count(),
            lod_histogram: histogram(&levels, &far.far),
            impostors: far.cards.len(),
            pose_budget: spent,
            joints_posed: joints_posed(&instances, assets.skeleton),
            control,
            heroes_ms,
            heroes: heroes.as_ref().map_or_else(Vec::new, |h| h.results.clone()),
            total_ms: start.elapsed().as_secs_f64() * 1e3,
            path,
        });
    }
    if let Some(gif) = gif {
        gif.finish()?;
    }
    let resident = runtime.resident_bytes();
    let batch = runtime.batches().first().copied().unwrap_or_default();
    // Frame outputs each instance keeps on the GPU: component transforms, palette, skinned vertices.
    let outputs =
        throng_gpu::output_bytes(batch.joints, Some((batch.palette_len, batch.vertex_count)));
    let summary = Summary {
        name: &name,
        ctx: &ctx,
        driver: driver.describe(),
        crowd: members - hero_count,
        heroes: hero_count,
        spacing,
        args: &args,
        resident,
        outputs,
        mapping: runtime.mapping(),
        budget: runtime.capacities().skinned_instances,
        far: far.atlas().map(|a| (a, far.bake_s)),
    };
    if args.json {
        print_json(&summary.json(&frames));
    } else {
        summary.print(&frames);
    }
    Ok(())
}

/// `--props`: the socket the swords sit on, appended to the crowd tree. The generated
/// character's right hand frame has +X toward the elbow and the palm toward −Y: the point
/// sits in the palm, 8 cm from the wrist.
const SWORD_SOCKET: &str = "
[sockets.hand_r_weapon]
joint = \"hand_r\"
offset = [-0.08, -0.025, 0.0]
";

/// A sword in its socket's frame, pointing forward (+Z): grip, cross-guard and blade, steel.
fn sword() -> PropMesh {
    PropMesh::boxes(
        &[
            (Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.014, 0.014, 0.06)),
            (Vec3::new(0.0, 0.0, 0.07), Vec3::new(0.08, 0.014, 0.012)),
            (Vec3::new(0.0, 0.0, 0.48), Vec3::new(0.022, 0.005, 0.4)),
        ],
        [0.62, 0.64, 0.70],
    )
}

/// Skeleton LOD levels the report counts: every joint, and the reduced ones a skeleton may have.
const LOD_LEVELS: usize = 1 + throng_cpu_ref::lod::MAX_LOD_LEVELS;

/// Members per skeleton LOD level, but for those in the far tier.
fn histogram(levels: &[u8], far: &[bool]) -> [usize; LOD_LEVELS] {
    let mut h = [0; LOD_LEVELS];
    for (&l, _) in levels.iter().zip(far).filter(|(_, &f)| !f) {
        h[usize::from(l).min(LOD_LEVELS - 1)] += 1;
    }
    h
}

/// Joints a program runs on at skeleton LOD `level`: every joint at 0, else the retained ones.
fn joints_at(skeleton: &throng_cpu_ref::Skeleton, level: u8) -> usize {
    match usize::from(level).checked_sub(1) {
        None => skeleton.joint_count(),
        Some(l) => skeleton.lods.get(l).map_or(0, |lod| lod.joints().len()),
    }
}

/// A tree's program limits `l`, at least the default ones (which the heroes' programs fit).
fn at_least_default(l: ProgramLimits) -> ProgramLimits {
    let d = ProgramLimits::default();
    ProgramLimits {
        max_ops: l.max_ops.max(d.max_ops),
        max_registers: l.max_registers.max(d.max_registers),
        max_weights: l.max_weights.max(d.max_weights),
        history_slots: l.history_slots,
    }
}

/// Joints whose programs the pose pass evaluates for `instances`.
fn joints_posed(instances: &[Instance], skeleton: &throng_cpu_ref::Skeleton) -> usize {
    (instances.iter())
        .filter_map(|x| x.pose.program())
        .map(|(_, level)| joints_at(skeleton, level))
        .sum()
}

/// Members skinned per frame at most unless `--budget` says otherwise.
const DEFAULT_BUDGET: u32 = 2048;

/// Height (m) the update rate assumes for a member, about the generated character's.
const CHARACTER_HEIGHT: f32 = 1.8;

/// `count` placements in a row in front of the crowd's grid (toward +Z, the camera), facing +Z.
fn front_row(layout: &Crowd, count: usize) -> Vec<Affine3A> {
    let anchor = layout.ground.inverse().transform_point3(Vec3::ZERO);
    let (x_mid, z_front) = {
        let grid = Bounds::of_points(
            layout
                .members
                .iter()
                .map(|m| m.placement.transform_point3(anchor)),
        );
        if grid.is_empty() {
            (0.0, 0.0)
        } else {
            (grid.centre().x, grid.max.z)
        }
    };
    let step = HERO_SPACING * layout.spacing;
    let z = z_front + (0.5 + HERO_FRONT) * layout.spacing;
    (0..count)
        .map(|h| {
            let x = x_mid + (h as f32 - (count as f32 - 1.0) * 0.5) * step;
            Affine3A::from_translation(Vec3::new(x, 0.0, z)) * layout.ground
        })
        .collect()
}

/// Scene bounds of the heroes: their motion bounds grown by an arm's reach above and aside.
fn hero_bounds(layout: &Crowd, placements: &[Affine3A]) -> Bounds {
    let reach = Vec3::new(0.3, 0.4, 0.3) * layout.spacing;
    placements.iter().fold(Bounds::EMPTY, |b, p| {
        let body = layout.motion_bounds.transformed(p);
        b.union(&Bounds {
            min: body.min - reach * Vec3::new(1.0, 0.0, 1.0),
            max: body.max + reach,
        })
    })
}

/// Scene bounds of members roaming the area `min..max` (x, z) with any heading.
fn area_bounds(layout: &Crowd, min: Vec3, max: Vec3) -> Bounds {
    let body = layout.motion_bounds.transformed(&layout.ground);
    let r = body.corners().map(|c| c.x.hypot(c.z)).fold(0.0, f32::max);
    Bounds {
        min: Vec3::new(min.x - r, body.min.y, min.z - r),
        max: Vec3::new(max.x + r, body.max.y, max.z + r),
    }
}

/// A missing adapter gets the one-line install hint; other errors pass through.
fn no_gpu(e: GpuError) -> CliError {
    super::no_gpu("throng demo", e)
}

/// `out` for one frame, or `<stem>_<frame:04>.<ext>` in a sequence.
fn frame_path(out: &Path, frame: u32, frames: u32) -> PathBuf {
    if frames == 1 {
        return out.to_owned();
    }
    let stem = out
        .file_stem()
        .map_or_else(|| "crowd".into(), |s| s.to_string_lossy().into_owned());
    let ext = out
        .extension()
        .map_or_else(|| "png".into(), |s| s.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}_{frame:04}.{ext}"))
}

pub(super) fn write_png(path: &Path, image: &Image) -> Result<(), CliError> {
    throng::write_png(path, image).map_err(|e| match e {
        png::EncodingError::IoError(source) => CliError::Io {
            path: path.to_owned(),
            source,
        },
        e => CliError::Usage(format!("{}: PNG encoding failed: {e}", path.display())),
    })
}

/// What the report prints besides per-frame numbers.
struct Summary<'a> {
    name: &'a str,
    ctx: &'a GpuContext,
    driver: String,
    crowd: usize,
    heroes: usize,
    spacing: f32,
    args: &'a Args,
    resident: u64,
    outputs: u64,
    mapping: Mapping,
    /// Members skinned per frame at most.
    budget: u32,
    /// The far tier's atlas (width, height, cells) and the seconds its bake took, when baked.
    far: Option<((u32, u32, u32), f64)>,
}

/// `{"lod0": n, "lod1": n, "lod2": n, "impostor": n}`: members per skeleton LOD level, and in
/// the far tier.
fn lod_histogram(f: &FrameStats) -> serde_json::Value {
    let h = &f.lod_histogram;
    json!({ "lod0": h[0], "lod1": h[1], "lod2": h[2], "impostor": f.impostors })
}

/// `[{"skinned": n, "triangles": t}, …]`: what each level of detail drew.
fn per_level(v: &throng_gpu::Visibility) -> serde_json::Value {
    (v.per_level.iter())
        .map(|&(skinned, triangles)| json!({ "skinned": skinned, "triangles": triangles }))
        .collect()
}

/// Names of a hero's solves, in [`HeroIk`] order.
const SOLVES: [&str; 3] = ["head", "hand_l", "hand_r"];

fn solves(ik: &HeroIk) -> [(&'static str, &IkResult); 3] {
    [
        (SOLVES[0], &ik.head),
        (SOLVES[1], &ik.hands[0]),
        (SOLVES[2], &ik.hands[1]),
    ]
}

impl Summary<'_> {
    fn print(&self, frames: &[FrameStats]) {
        let a = &self.ctx.adapter;
        let kind = if a.software { "software" } else { "hardware" };
        println!(
            "adapter: {} ({}, {}, {kind})",
            a.name, a.backend, a.device_type
        );
        println!(
            "crowd: {} instances + {} heroes of {} on a {:.2} m grid, {}x{} px",
            self.crowd, self.heroes, self.name, self.spacing, self.args.width, self.args.height
        );
        println!("control: {}", self.driver);
        println!("pose: fused pass, {} mapping", self.mapping.name());
        for f in frames {
            let r = &f.report;
            let s = &f.stages;
            let c = &f.control;
            println!("frame -> {}", f.path.display());
            if c.ticks > 0 {
                println!(
                    "  control (CPU): {} tick of {} instances in {:.3} ms ({:.2} us per instance); speeds: {} standing, {} walking, {} running; {} waving; root motion moved {:.2} m",
                    c.ticks,
                    c.instances,
                    c.ms,
                    c.ms * 1e3 / c.instances.max(1) as f64,
                    c.standing,
                    c.walking,
                    c.running,
                    c.waving,
                    c.travelled
                );
            } else {
                println!(
                    "  programs (CPU): {} written in {:.3} ms",
                    c.instances, c.ms
                );
            }
            if !f.heroes.is_empty() {
                println!(
                    "  heroes (CPU: program, FK, IK, palette): {} in {:.3} ms",
                    f.heroes.len(),
                    f.heroes_ms
                );
                for (h, ik) in f.heroes.iter().enumerate() {
                    let parts: Vec<String> = solves(ik)
                        .iter()
                        .map(|(name, r)| {
                            format!(
                                "{name} {} {:.2} mm {:.2} deg",
                                r.status.as_str(),
                                r.position_error * 1e3,
                                r.angle_error.to_degrees()
                            )
                        })
                        .collect();
                    println!(
                        "    hero {h}: {}, ponytail {:.1} mm off its animated place ({} spring substeps)",
                        parts.join(", "),
                        ik.ponytail_lag * 1e3,
                        ik.ponytail_substeps
                    );
                }
            }
            println!(
                "  dispatches: {} compute ({} pose for {} program shape(s): {} specialised, {} interpreter; {} bounds; {} budget; {} skinning), {} draw(s)",
                r.dispatches,
                r.pose_dispatches,
                r.shapes,
                r.specialised_dispatches,
                r.interpreter_dispatches,
                r.bounds_dispatches,
                r.budget_dispatches,
                r.skinning_dispatches,
                f.draws,
            );
            if self.args.stagger {
                println!(
                    "  update-rate LOD: {} members evaluated, {} kept their last pose",
                    f.evaluated, f.kept
                );
            }
            if let Some(b) = &f.pose_budget {
                println!(
                    "  pose budget: {} of {} joints spent; {} members served ({} had to run, {} had waited {} frames), {} kept their last pose (longest wait {} frames)",
                    b.spent, b.budget, b.served, b.must, b.starving, self.args.max_stale, b.kept, b.max_wait
                );
            }
            if !self.args.no_lod {
                let [full, one, two] = f.lod_histogram;
                println!(
                    "  skeleton LOD: {full} members at every joint, {one} at level 1, {two} at level 2, {} impostors; {} joints posed",
                    f.impostors, f.joints_posed
                );
            }
            let v = &f.visibility;
            println!(
                "  culling ({}): {} of {} instances visible, {} skinned (budget {}, {} over), {} skinned vertices, {} triangles",
                if self.args.no_cull {
                    "off"
                } else {
                    "camera frustum"
                },
                v.visible,
                r.instances,
                v.skinned,
                self.budget,
                v.over_budget,
                v.skinned_vertices,
                v.triangles
            );
            let tiers: Vec<String> = (v.per_level.iter().enumerate())
                .map(|(l, (n, t))| format!("level {l}: {n} instances, {t} triangles"))
                .collect();
            println!("  drawn per level of detail: {}", tiers.join("; "));
            println!(
                "  uploaded: {:.1} bytes per instance ({} bytes this frame in all, {} of hero palettes)",
                r.bytes_per_instance(),
                r.upload_bytes,
                r.hero_bytes
            );
            if s.gpu_timestamps {
                println!(
                    "  GPU ms (timestamps): pose (program, FK, palette) {:.3}, bounds {:.3}, skinning {:.3}, raster {}",
                    s.pose_ms,
                    s.bounds_ms,
                    s.skinning_ms,
                    f.raster.gpu_ms.map_or("n/a".into(), |ms| format!("{ms:.3}"))
                );
            } else {
                println!("  GPU ms: no timestamp queries on this adapter; wall times only");
            }
            println!(
                "  wall ms: control (CPU) {:.3}, heroes (CPU) {:.3}, compute submit->idle {:.3}, raster submit->idle {:.3}, frame total {:.3}",
                c.ms, f.heroes_ms, s.wall_ms, f.raster.wall_ms, f.total_ms
            );
        }
        if let Some(((w, h, cells), seconds)) = self.far {
            println!(
                "far tier: impostor atlas {w}x{h} px ({cells} cells), baked on the GPU in {seconds:.1} s"
            );
        }
        println!(
            "resident: {} bytes of package data (once), {} bytes of frame outputs per instance",
            self.resident, self.outputs
        );
    }

    fn json(&self, frames: &[FrameStats]) -> serde_json::Value {
        let last = frames.last();
        let frames: Vec<_> = frames
            .iter()
            .map(|f| {
                let heroes: Vec<_> = f
                    .heroes
                    .iter()
                    .map(|ik| {
                        let mut o = serde_json::Map::new();
                        for (name, r) in solves(ik) {
                            o.insert(
                                name.into(),
                                json!({
                                    "status": r.status.as_str(),
                                    "position_error": r.position_error,
                                    "angle_error": r.angle_error,
                                    "iterations": r.iterations,
                                }),
                            );
                        }
                        o.insert(
                            "ponytail".into(),
                            json!({
                                "lag": ik.ponytail_lag,
                                "substeps": ik.ponytail_substeps,
                            }),
                        );
                        serde_json::Value::Object(o)
                    })
                    .collect();
                json!({
                    "path": f.path,
                    "report": f.report,
                    "bytes_per_instance": f.report.bytes_per_instance(),
                    "stages": f.stages,
                    "raster": f.raster,
                    "draws": f.draws,
                    "visible": f.visibility.visible,
                    "skinned": f.visibility.skinned,
                    "over_budget": f.visibility.over_budget,
                    "skinned_vertices": f.visibility.skinned_vertices,
                    "triangles": f.visibility.triangles,
                    "per_level": per_level(&f.visibility),
                    "evaluated": f.evaluated,
                    "kept": f.kept,
                    "lod_histogram": lod_histogram(f),
                    "joints_posed": f.joints_posed,
                    "pose_budget": f.pose_budget.map(|b| json!({
                        "budget": b.budget, "spent": b.spent, "served": b.served, "must": b.must,
                        "starving": b.starving, "kept": b.kept, "max_wait": b.max_wait,
                    })),
                    "control": f.control,
                    "heroes_ms": f.heroes_ms,
                    "heroes": heroes,
                    "total_ms": f.total_ms,
                })
            })
            .collect();
        json!({
            "adapter": self.ctx.adapter,
            "asset": self.name,
            "control": self.driver,
            "instances": self.crowd,
            "heroes": self.heroes,
            "spacing_m": self.spacing,
            "gif": self.args.gif,
            "width": self.args.width,
            "height": self.args.height,
            "mapping": self.mapping,
            "resident_package_bytes": self.resident,
            "output_bytes_per_instance": self.outputs,
            "cull": !self.args.no_cull,
            "lod": !self.args.no_lod,
            "budget": self.budget,
            "props": self.args.props,
            "far_tier": self.far.map(|((w, h, cells), seconds)| json!({
                "atlas_width": w, "atlas_height": h, "cells": cells, "bake_s": seconds,
            })),
            "lod_histogram": last.map(lod_histogram),
            "joints_posed": last.map(|f| f.joints_posed),
            "visible": last.map(|f| f.visibility.visible),
            "skinned": last.map(|f| f.visibility.skinned),
            "skinned_vertices": last.map(|f| f.visibility.skinned_vertices),
            "triangles": last.map(|f| f.visibility.triangles),
            "per_level": last.map(|f| per_level(&f.visibility)),
            "frames": frames,
        })
    }
}
