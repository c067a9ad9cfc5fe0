//! `throng demo`: a headless crowd through the embedding API ([`throng::Animator`]), evaluated
//! on the GPU and rendered offscreen to PNG.
//!
//! Control ticks at 30 Hz and frames render at 60 Hz ([`TickClock`]): before a frame the ticks
//! due run ([`drive`]: by default the generated character's state tree
//! `fixtures/trees/crowd.toml` with per-member speed and wave inputs and root motion moving
//! the placements; `--programs fixed` or `--asset` set throng-fixtures' formation of fixed
//! per-instance programs instead), then the Animator presents the crowd between the last two
//! ticks. Heroes (`--heroes N`, [`hero`]) are posed on the CPU with IK and a spring ponytail
//! from their presented programs and shown as palettes; the raster pass draws the skinned
//! members (heroes in gold) and the far tier's cards, and the image is read back and written
//! as PNG.

mod animation;
mod close_up;
mod drive;
pub(super) mod hero;
mod paths;
mod pops;

use std::path::{Path, PathBuf};
use std::time::Instant;

use glam::{Affine3A, Vec3};
use serde_json::json;
use throng::{
    Animator, AnimatorOptions, CharacterId, MemberId, TickClock, UpdateRate, View, FAR_FADE,
};
use throng_cpu_ref::ik::IkResult;
use throng_cpu_ref::retained::look;
use throng_cpu_ref::significance::BudgetReport;
use throng_cpu_ref::stagger::rate_for_height;
use throng_cpu_ref::{ProgramLimits, Skeleton};
use throng_fixtures::Formation as Crowd;
use throng_gpu::impostor::FAR_HEIGHT;
use throng_gpu::raster::{Bounds, Camera, Image, Raster, RasterTimes, Scene};
use throng_gpu::{
    Attachment, FrameReport, GpuContext, GpuError, Mapping, PropMesh, RuntimeOptions, StageTimes,
    Visibility,
};

use self::close_up::CloseUp;
use self::drive::{ControlStats, FixedPrograms, Roaming};
use self::hero::{HeroIk, Heroes};
use self::paths::Paths;
use self::pops::{pops, Coverage, Pops};
use super::{builtin_character, capacities, load_any, print_json, CliError};

/// Control ticks per second, and frames rendered per second.
const TICK_HZ: f64 = 30.0;
const FRAME_HZ: f64 = 60.0;
/// Fixed programs: crowd time of the first tick, mid-motion rather than every clip at its offset.
const START_TIME: f64 = 0.5;
/// Ticks before the first frame (frames show the time between the last two): the tree's
/// crowd runs its plans a while first, so the first frame is mid-motion.
const WARM_UP_TICKS: (u32, u32) = (2, 45);
/// Events one member may deliver per tick.
const EVENT_CAPACITY: usize = 64;
/// Heroes stand this many grid cells apart, and this many in front of the crowd's area.
const HERO_SPACING: f32 = 1.6;
const HERO_FRONT: f32 = 1.2;
/// `Card::tier` of far members under `--lod-tint`: outside 1–4, so blue.
const FAR_TINT: u32 = 5;
/// Frames re-presented after the last one, once every dispatch runs its specialised pipeline,
/// whose median is the steady state ([`SteadyState`]).
const STEADY_FRAMES: usize = 5;
/// Frames at most that wait for specialised pipelines before the steady state is measured.
const STEADY_TRIES: usize = 8;

/// Where the crowd's programs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Programs {
    /// The state tree fixtures/trees/crowd.toml through throng-control (generated character only).
    Tree,
    /// Fixed per-instance programs: single clips, walk/run blends, masked waves, additive breathing.
    Fixed,
}

/// How the state tree's crowd moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
enum Locomotion {
    /// The crowd tree: members roam the grid at paces their plans change (blend spaces).
    #[default]
    Roam,
    /// Motion matching: the locomotion tree on a database of the CMU BVH walks and runs
    /// (--bvh), every member steered along a curve about the crowd's centre, standing,
    /// starting, walking, running and stopping.
    Paths,
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
    /// Frames to render at 60 Hz (control ticks at 30 Hz); with more than one, files are named <out>_0000.png, ...
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
    /// Skinned budget: members skinned per frame at most, the largest on screen first (default:
    /// all of them, at most 2048); the other visible members are drawn as impostor cards.
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
    /// No far tier by height (on by default: a member under 16 px tall on screen is drawn as
    /// an impostor card of its clip frame, baked on the GPU at start); visible members past
    /// the skinned budget are still drawn as cards.
    #[arg(long)]
    no_far_tier: bool,
    /// Switch members between mesh and card in one frame at 16 px (with 20 % hysteresis)
    /// instead of cross-fading them, dithered, as they shrink from 24 px to 16 (docs/gpu.md,
    /// "Far tier"), and between mesh LODs where a level's error projects to a pixel (with 20 %
    /// hysteresis) instead of over 0.8-1.2 px ("Mesh LOD cross-fade"): to see the pops the
    /// cross-fades remove.
    #[arg(long)]
    no_cross_fade: bool,
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
    /// How the tree's crowd moves: `roam` (the crowd tree, default) or `paths` (motion matching
    /// along curved paths; docs/motion-matching.md).
    #[arg(long, value_enum, default_value_t)]
    locomotion: Locomotion,
    /// With --locomotion paths: the folder of BVH files its motion database is built from
    /// (default: the shared CMU locomotion files, ../shared/assets/mocap/bvh).
    #[arg(long, value_name = "DIR", requires = "locomotion")]
    bvh: Option<PathBuf>,
    /// Also write each frame's motion vectors as a PNG (named like --out's frames): per pixel
    /// the screen-space motion of the nearest member (mesh or card) since the last frame, red =
    /// x, green = y (down), 128 still, ±16 px at 0 and 255; members teleported around the area
    /// and members changing skeleton LOD level have none on that frame.
    #[arg(long, value_name = "FILE.png")]
    motion_vectors: Option<PathBuf>,
    /// Also write the frames as one looping animated GIF (256 colours per frame, the frames
    /// 3/100 s apart).
    #[arg(long, value_name = "FILE.gif")]
    gif: Option<PathBuf>,
    /// Move the camera from far to near over the frames: along the framing's line of sight
    /// from 4 times its distance to a quarter of it, geometrically, so members cross the levels
    /// of detail and the far tier on screen (watch with --gif and --lod-tint).
    #[arg(long)]
    dolly: bool,
    /// Follow one crowd member's face instead of framing the crowd, close enough to see its
    /// morph targets: the nearest member whose program samples `idle` (a blink) or `wave` (an
    /// open mouth) when the first frame is drawn, else the nearest (`close_up` in --json).
    #[arg(long, conflicts_with = "dolly")]
    close_up: bool,
    /// Also render each frame with member ids instead of colours, count each member's pixels,
    /// and write the counts to this JSON file (for --pops-against).
    #[arg(long, value_name = "FILE.json")]
    coverage: Option<PathBuf>,
    /// Measure pops: compare each member's change of coverage per frame with the change its
    /// motion makes at full detail, in FULL.json (--coverage of a run with the same crowd,
    /// frames, size and --dolly, with --no-far-tier --no-lod), and report the largest ratio
    /// (`pops` in --json; docs/gpu.md, "Watching the boundary").
    #[arg(long, value_name = "FULL.json")]
    pops_against: Option<PathBuf>,
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
    /// Members posed and kept (update-rate LOD) this frame.
    evaluated: usize,
    kept: usize,
    /// Members at each skeleton LOD level (heroes and kept members at the level they have), and
    /// joints the pose pass evaluated the programs of (retained joints of posed members).
    lod_histogram: [usize; LOD_LEVELS],
    /// Members drawn as impostor cards (the far tier), counted in no LOD level.
    /// Members drawn as cards alone, and as a card and a mesh in complementary pixels (the
    /// far tier's cross-fade; counted with the meshes in `lod_histogram`'s levels too).
    impostors: usize,
    cross_fading: usize,
    /// Members drawn at their level and the next coarser one in complementary pixels (the
    /// mesh LOD cross-fade; counted in their level).
    lod_fading: usize,
    joints_posed: usize,
    /// How the pose budget was spent (with --pose-budget).
    pose_budget: Option<BudgetReport>,
    control: ControlStats,
    /// Where between the last two ticks the frame was presented.
    alpha: f32,
    /// CPU time of the heroes: program, FK, IK and palette.
    heroes_ms: f64,
    heroes: Vec<HeroIk>,
    /// CPU time of the Animator's present (planning, uploads, recording, submission).
    present_ms: f64,
    /// Wall time from control to the PNG on disk.
    total_ms: f64,
    path: PathBuf,
}

/// What sets the crowd's programs each tick.
enum Driver {
    Tree(Box<Roaming>),
    Paths(Box<Paths>),
    Fixed(Box<FixedPrograms>),
}

impl Driver {
    /// One tick: the crowd's inputs or programs, then the Animator's tick.
    fn tick(
        &mut self,
        animator: &mut Animator,
        ids: &[MemberId],
        tick: u32,
        stats: &mut ControlStats,
    ) -> Result<(), CliError> {
        match self {
            Driver::Tree(c) => c.tick(animator, ids, stats),
            Driver::Paths(c) => c.tick(animator, ids, stats),
            Driver::Fixed(c) => {
                let time = START_TIME + f64::from(tick) / TICK_HZ;
                c.tick(animator, ids, time, stats)
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            Driver::Tree(_) => format!(
                "state tree fixtures/trees/crowd.toml through throng::Animator, ticked at {TICK_HZ:.0} Hz, frames at {FRAME_HZ:.0} Hz, root motion moving placements"
            ),
            Driver::Paths(_) => format!(
                "motion matching (fixtures/trees/locomotion.toml) along curved paths through throng::Animator, ticked at {TICK_HZ:.0} Hz, frames at {FRAME_HZ:.0} Hz, root motion moving placements"
            ),
            Driver::Fixed(_) => format!(
                "fixed per-instance programs through throng::Animator, set at {TICK_HZ:.0} Hz, frames at {FRAME_HZ:.0} Hz"
            ),
        }
    }
}

/// `--dolly`: the camera's distance from its target as a multiple of the framing's, at the first
/// frame and at the last (geometric in between).
const DOLLY: (f32, f32) = (4.0, 0.25);

/// `scene` seen from the dolly's place at frame `f` of `frames`: the eye moved along its line of
/// sight, the far plane and the fog pushed out with it when it is farther than the framing's, the
/// near plane pulled in when it is nearer.
fn dollied(scene: &Scene, f: u32, frames: u32) -> Scene {
    let x = match frames {
        0 | 1 => 0.0,
        n => f as f32 / (n - 1) as f32,
    };
    let k = DOLLY.0 * (DOLLY.1 / DOLLY.0).powf(x);
    let c = scene.camera;
    Scene {
        camera: Camera {
            eye: c.target + (c.eye - c.target) * k,
            near: c.near * k.min(1.0),
            far: c.far * k.max(1.0),
            ..c
        },
        fog_distance: scene.fog_distance * k.max(1.0),
        ..*scene
    }
}

/// The Animator's view of `scene` in a `width` × `height` image.
fn view_of(scene: &Scene, width: u32, height: u32) -> View {
    View {
        camera: scene.camera,
        width,
        height,
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
    let paths = args.locomotion == Locomotion::Paths;
    if paths && (programs != Programs::Tree || args.props) {
        return Err(CliError::Usage(
            "--locomotion paths runs the generated character's locomotion tree: no --asset, --mocap, --programs fixed or --props".into(),
        ));
    }
    if args.props && programs != Programs::Tree {
        return Err(CliError::Usage(
            "--props puts a prop on the state tree's socket: use the tree (the generated character, no --asset, no --programs fixed)".into(),
        ));
    }
    let (mut package, name) = match (&args.asset, &args.mocap) {
        (Some(path), _) => (load_any(path)?, path.display().to_string()),
        (None, Some(dir)) => (
            throng::mocap_character(dir)?,
            format!("generated character on the mocap of {}", dir.display()),
        ),
        (None, None) if paths => {
            let dir = (args.bvh.clone())
                .unwrap_or_else(|| throng_fixtures::shared_assets_path().join("mocap/bvh"));
            eprintln!("building the motion database from {} ...", dir.display());
            let package = throng::locomotion_character(&dir).map_err(|e| {
                CliError::Usage(format!(
                    "--locomotion paths: {e} (give the CMU BVH folder with --bvh DIR)"
                ))
            })?;
            let name = format!("generated character on the BVH of {}", dir.display());
            (package, name)
        }
        (None, None) => (builtin_character()?, "generated character".to_string()),
    };
    let ctx = GpuContext::new().map_err(no_gpu)?;
    // The crowd's skin is skin 0 (the formation's).
    let skeleton = package.skins.first().map_or(0, |s| s.skeleton);
    let tree = (programs == Programs::Tree).then(|| match (paths, args.props) {
        (true, _) => throng_fixtures::LOCOMOTION_TREE.to_string(),
        (false, true) => format!("{}{SWORD_SOCKET}", throng_fixtures::CROWD_TREE),
        (false, false) => throng_fixtures::CROWD_TREE.to_string(),
    });
    let tree_file = match paths {
        true => "fixtures/trees/locomotion.toml",
        false => "fixtures/trees/crowd.toml",
    };
    let tree = tree.as_deref().map(|t| (t, tree_file));
    let control = |e: throng::AnimatorError| CliError::Control(e.to_string());
    let limits = match tree {
        Some(tree) => {
            at_least_default(throng::tree_limits(&package, skeleton, tree).map_err(control)?)
        }
        None => ProgramLimits::default(),
    };
    // A crowd too large for one runtime is refused before its layout and control are built
    // (a minute and gigabytes at a million).
    let members = args.instances.saturating_add(args.heroes);
    capacities(&[&package], members, &limits)?.check(&ctx)?;
    let layout = Crowd::new(&mut package, 0, args.instances as usize)
        .map_err(|e| CliError::Usage(format!("{name}: {e}")))?;
    let (skin, spacing) = (layout.skin, layout.spacing);
    let hero_placements = front_row(&layout, args.heroes as usize);
    let hero_count = hero_placements.len();
    let hero_layout = match programs {
        Programs::Fixed => Some(
            Crowd::new(&mut package, 0, hero_count)
                .map_err(|e| CliError::Usage(format!("{name}: {e}")))?,
        ),
        Programs::Tree => None,
    };
    let options = AnimatorOptions {
        hz: TICK_HZ,
        event_capacity: EVENT_CAPACITY,
        capacity: members,
        skinned_budget: Some(args.budget.unwrap_or(DEFAULT_BUDGET).min(members).max(1)),
        lod: !args.no_lod,
        lod_fade: !args.no_cross_fade,
        update_rate: match (args.stagger, args.pose_budget) {
            (true, _) => UpdateRate::Stagger,
            (false, Some(joints)) => UpdateRate::Budget {
                joints,
                max_stale: args.max_stale,
            },
            (false, None) => UpdateRate::EveryFrame,
        },
        far_height: (!args.no_far_tier).then_some(FAR_HEIGHT),
        far_fade: if args.no_cross_fade { 1.0 } else { FAR_FADE },
        cull: !args.no_cull,
        runtime: RuntimeOptions {
            mapping: args.mapping.map(Mapping::from),
            outputs: throng_cpu_ref::Outputs {
                motion: args.motion_vectors.is_some(),
                ..throng_cpu_ref::Outputs::default()
            },
            ..RuntimeOptions::default()
        },
    };
    let mut animator = Animator::new(&ctx, &[&package], limits, options).map_err(control)?;
    let character = (animator.add_character(package.clone(), skeleton, tree)).map_err(control)?;
    // The package the programs run against (the tree's masks joined it).
    let package = (animator.package(character).cloned()).ok_or_else(|| no_character(character))?;
    let mut bounds = hero_bounds(&layout, &hero_placements);
    let mut raster = Raster::new(&ctx, args.width, args.height)?;
    // Members spawn heroes first, then the crowd nearest the camera first (the skinned budget
    // serves the largest on screen first, whatever their slots).
    let mut paths = match paths {
        true => Some(Paths::new(&animator, character, &layout, &hero_placements)?),
        false => None,
    };
    let crowd_area = match (programs, &paths) {
        (_, Some((_, p))) => {
            let (min, max) = p.area();
            area_bounds(&layout, min, max)
        }
        (Programs::Tree, None) => {
            let anchor = layout.ground.inverse().transform_point3(Vec3::ZERO);
            let area = drive::area(&layout, anchor);
            area_bounds(&layout, area.min, area.max)
        }
        (Programs::Fixed, None) => layout.bounds(),
    };
    bounds = bounds.union(&crowd_area);
    let scene = Scene {
        highlight: hero_count as u32,
        ..Scene::framing(&bounds, raster.aspect(), spacing)
    };
    let eye = scene.camera.eye;
    let mut order: Vec<usize> = (0..layout.members.len()).collect();
    order.sort_by(|&a, &b| {
        let d = |k: usize| eye.distance_squared(layout.members[k].placement.translation.into());
        d(a).total_cmp(&d(b))
    });
    let mut ids = vec![MemberId(0); members as usize];
    // On paths, members spawn on their curves facing along them.
    let placements = paths.as_ref().map(|(p, _)| p.as_slice());
    let placement_of = |k: usize| match placements {
        Some(p) => p[k],
        None if k < hero_count => hero_placements[k],
        None => layout.members[k - hero_count].placement,
    };
    for (k, id) in ids[..hero_count].iter_mut().enumerate() {
        *id = animator
            .spawn(character, &placement_of(k))
            .map_err(control)?;
    }
    for &i in &order {
        let placement = placement_of(hero_count + i);
        ids[hero_count + i] = animator.spawn(character, &placement).map_err(control)?;
    }
    animator.set_view(Some(view_of(&scene, args.width, args.height)));
    if let Some(ctl) = animator.controller(character) {
        let id = (animator.package_id(character)).ok_or_else(|| no_character(character))?;
        let swords: Vec<Attachment> = (ctl.tree.sockets.iter())
            .map(|socket| Attachment {
                package: id,
                skin,
                joint: socket.joint,
                offset: Affine3A::from_translation(socket.offset),
                mesh: sword(),
            })
            .collect();
        animator.runtime_mut().set_attachments(&swords)?;
    }
    let mut driver = match (hero_layout, paths.take()) {
        (_, Some((_, p))) => Driver::Paths(Box::new(p)),
        (None, None) => Driver::Tree(Box::new(Roaming::new(
            &animator,
            character,
            &layout,
            members as usize,
            hero_count,
        )?)),
        (Some(heroes), None) => Driver::Fixed(Box::new(FixedPrograms::new(layout.clone(), heroes))),
    };
    let mut heroes = match hero_count {
        0 => None,
        _ => Some(Heroes::new(
            &package,
            skin,
            limits,
            hero_placements.clone(),
        )?),
    };
    let assets = package
        .assets(skeleton)
        .ok_or_else(|| CliError::Usage(format!("{name}: no skeleton {skeleton}")))?;
    let mut ticks = 0;
    let mut warm = ControlStats::default();
    let warm_up = match driver {
        Driver::Tree(_) | Driver::Paths(_) => WARM_UP_TICKS.1,
        Driver::Fixed(_) => WARM_UP_TICKS.0,
    };
    for _ in 0..warm_up {
        driver.tick(&mut animator, &ids, ticks, &mut warm)?;
        ticks += 1;
    }
    let framing = scene;
    let close_up = match args.close_up {
        true => {
            let nearest: Vec<MemberId> = order.iter().map(|&i| ids[hero_count + i]).collect();
            Some(CloseUp::choose(&mut animator, &package, &nearest)?)
        }
        false => None,
    };
    let mut previous_camera = None;
    let mut clock = TickClock::new(TICK_HZ);
    let mut far_bake = None;
    let mut frames = Vec::with_capacity(args.frames as usize);
    let mut gif = (args.gif.as_deref())
        .map(|path| animation::GifWriter::create(path, args.width, args.height, 1.0 / FRAME_HZ))
        .transpose()?;
    let mut tiers = Vec::new();
    let counting = args.coverage.is_some() || args.pops_against.is_some();
    let mut coverage = Coverage {
        width: args.width,
        height: args.height,
        frames: Vec::new(),
    };
    for f in 0..args.frames {
        let start = Instant::now();
        let scene = match (&close_up, args.dolly) {
            (Some(c), _) => {
                let placement = animator.placement(c.id).unwrap_or(Affine3A::IDENTITY);
                c.scene(&framing, placement)
            }
            (None, true) => dollied(&framing, f, args.frames),
            (None, false) => framing,
        };
        let view = view_of(&scene, args.width, args.height);
        animator.set_view(Some(view));
        let (due, alpha) = clock.advance(1.0 / FRAME_HZ);
        let mut control_stats = ControlStats::default();
        for _ in 0..due {
            driver.tick(&mut animator, &ids, ticks, &mut control_stats)?;
            ticks += 1;
        }
        match &driver {
            Driver::Tree(c) => c.count(&mut control_stats),
            Driver::Paths(c) => c.count(&mut control_stats),
            Driver::Fixed(_) => control_stats.instances = ids.len(),
        }
        // Presentation time: `alpha` of the way from the second-last tick to the last.
        let time = (f64::from(ticks) - 2.0 + f64::from(alpha)) / TICK_HZ;
        let hero_start = Instant::now();
        if let Some(h) = heroes.as_mut() {
            for (k, &id) in ids[..hero_count].iter().enumerate() {
                if let Some(program) = animator.presented_program(id, alpha) {
                    let program = program.clone();
                    h.pose(k, &program, &assets, time)?;
                    animator.set_hero(id, Some(h.palette(k))).map_err(control)?;
                }
            }
        }
        let heroes_ms = hero_start.elapsed().as_secs_f64() * 1e3;
        // The far tier is baked the first frame a member is short enough for it, or at once
        // when the crowd outnumbers the skinned budget: the visible members past it are cards.
        let overflow =
            ids.len() as u64 > u64::from(animator.runtime().capacities().skinned_instances);
        if far_bake.is_none()
            && (overflow
                || !args.no_far_tier
                    && needs_far_tier(&animator, &ids[hero_count..], &view, options.far_fade))
        {
            let bake_start = Instant::now();
            let baked = animator.bake_far_tier(character).map_err(control)?;
            raster.set_impostor(&baked.impostor, &baked.atlas)?;
            let i = &baked.impostor;
            let atlas = (i.width, i.height, i.first_cell(i.clips.len()));
            far_bake = Some((atlas, bake_start.elapsed().as_secs_f64()));
        }
        let present_start = Instant::now();
        let report = animator.present(alpha).map_err(control)?;
        let present_ms = present_start.elapsed().as_secs_f64() * 1e3;
        let tint = if args.lod_tint { FAR_TINT } else { 0 };
        let cards: Vec<_> = (animator.cards().iter())
            .map(|c| throng_gpu::impostor::Card { tier: tint, ..*c })
            .collect();
        raster.set_cards(&cards);
        raster.set_lod_fades(animator.lod_fades());
        let slots = animator.instances().slots() as usize;
        if args.lod_tint {
            tiers.clear();
            tiers.resize(slots, 1);
            for &id in &ids {
                tiers[id.0 as usize] = match args.no_lod {
                    false => 1 + animator.level(id),
                    true => {
                        let p = animator.placement(id).unwrap_or_default();
                        let d = view.camera.eye.distance(p.translation.into());
                        rate_for_height(CHARACTER_HEIGHT * view.pixels_per_unit(d))
                    }
                };
            }
            raster.set_tiers(&tiers);
        }
        let stages = animator.runtime_mut().finish()?;
        let drawn = raster.render(animator.runtime(), &scene)?;
        let raster_times = raster.finish()?;
        let image = raster.read_image()?;
        let path = frame_path(&args.out, f, args.frames);
        write_png(&path, &image)?;
        if let Some(gif) = gif.as_mut() {
            gif.push(&image)?;
        }
        if counting {
            raster.set_member_ids(true);
            raster.render(animator.runtime(), &scene)?;
            raster.finish()?;
            coverage.push(&raster.read_image()?, slots);
            raster.set_member_ids(false);
        }
        if let Some(out) = &args.motion_vectors {
            let before = previous_camera.unwrap_or(scene.camera);
            raster.render_motion(animator.runtime(), &scene, &before)?;
            write_png(&frame_path(out, f, args.frames), &raster.read_motion()?)?;
        }
        previous_camera = Some(scene.camera);
        let shows = Shows::of(&animator, &ids, assets.skeleton);
        frames.push(FrameStats {
            report,
            stages,
            raster: raster_times,
            draws: drawn.draws,
            visibility: animator.runtime().visibility(),
            kept: shows.kept,
            evaluated: shows.posed,
            lod_histogram: shows.levels,
            impostors: cards.iter().filter(|c| c.fade >= 1.0).count(),
            cross_fading: cards.iter().filter(|c| c.fade < 1.0).count(),
            lod_fading: animator.lod_fades().len(),
            pose_budget: animator.pose_budget(),
            joints_posed: shows.joints,
            control: control_stats,
            alpha,
            heroes_ms,
            heroes: heroes.as_ref().map_or_else(Vec::new, |h| h.results.clone()),
            present_ms,
            total_ms: start.elapsed().as_secs_f64() * 1e3,
            path,
        });
    }
    if let Some(gif) = gif {
        gif.finish()?;
    }
    if let Some(path) = &args.coverage {
        coverage.write(path)?;
    }
    let pops = match &args.pops_against {
        Some(full) => Some(pops(&coverage, &Coverage::read(full)?)?),
        None => None,
    };
    let steady = match frames.last() {
        Some(last) => Some(steady_state(&mut animator, last.alpha)?),
        None => None,
    };
    let runtime = animator.runtime();
    let resident = runtime.resident_bytes();
    let batch = runtime.batches().first().copied().unwrap_or_default();
    // Frame outputs each instance keeps on the GPU: component transforms, palette, skinned vertices.
    let outputs =
        throng_gpu::output_bytes(batch.joints, Some((batch.palette_len, batch.vertex_count)));
    let summary = Summary {
        name: &name,
        ctx: &ctx,
        driver: driver.describe(),
        tree: matches!(driver, Driver::Tree(_) | Driver::Paths(_)),
        crowd: members as usize - hero_count,
        heroes: hero_count,
        spacing,
        args: &args,
        resident,
        outputs,
        mapping: runtime.mapping(),
        budget: runtime.capacities().skinned_instances,
        far: far_bake,
        steady,
        pops,
        close_up,
    };
    if args.json {
        print_json(&summary.json(&frames));
    } else {
        summary.print(&frames);
    }
    Ok(())
}

/// The GPU's stage times once the crowd runs on specialised pipelines alone: the frames the demo
/// rendered may have run the interpreter while those compiled (on a cold shader cache, its first
/// frames always do), which costs many times more and says nothing about the steady state.
#[derive(Clone, Copy, Debug, serde::Serialize)]
struct SteadyState {
    /// Frames re-presented at the last frame's alpha before no pipeline was compiling.
    waited_frames: usize,
    /// Whether every requested pipeline was ready for the timed frames (false: one was still
    /// compiling after [`STEADY_TRIES`] frames, and the interpreter ran its shape).
    ready: bool,
    /// Pose dispatches of a timed frame on the interpreter: shapes of too few instances to be
    /// worth a pipeline (`throng_gpu::pipelines::MIN_INSTANCES`), or not ready.
    interpreter_dispatches: usize,
    /// Timed frames; the times are those of the frame with the median pose time.
    frames: usize,
    pose_ms: f64,
    bounds_ms: f64,
    skinning_ms: f64,
    /// Wall time from the compute passes' submission to the queue going idle.
    wall_ms: f64,
}

/// Presents the last frame again (control does not advance) until no specialised pipeline is
/// compiling, then [`STEADY_FRAMES`] more, timed: the median by pose time.
fn steady_state(animator: &mut Animator, alpha: f32) -> Result<SteadyState, CliError> {
    let control = |e: throng::AnimatorError| CliError::Control(e.to_string());
    let mut waited_frames = 0;
    let ready = loop {
        animator.runtime_mut().wait_for_pipelines()?;
        let report = animator.present(alpha).map_err(control)?;
        animator.runtime_mut().finish()?;
        let done = report.pending_pipelines == 0;
        if done || waited_frames == STEADY_TRIES {
            break done;
        }
        waited_frames += 1;
    };
    let mut times = Vec::with_capacity(STEADY_FRAMES);
    let mut interpreter_dispatches = 0;
    for _ in 0..STEADY_FRAMES {
        let report = animator.present(alpha).map_err(control)?;
        interpreter_dispatches = report.interpreter_dispatches;
        times.push(animator.runtime_mut().finish()?);
    }
    times.sort_by(|a, b| a.pose_ms.total_cmp(&b.pose_ms));
    let median = &times[times.len() / 2];
    Ok(SteadyState {
        waited_frames,
        ready,
        interpreter_dispatches,
        frames: times.len(),
        pose_ms: median.pose_ms,
        bounds_ms: median.bounds_ms,
        skinning_ms: median.skinning_ms,
        wall_ms: median.wall_ms,
    })
}

/// Whether a member of `ids` stands shorter on screen than the far tier's height times `fade`
/// (where its cross-fade starts; the Animator's measure: twice its scale at its distance).
fn needs_far_tier(animator: &Animator, ids: &[MemberId], view: &View, fade: f32) -> bool {
    ids.iter().any(|&id| {
        animator.placement(id).is_some_and(|p| {
            let (scale, _, t) = p.to_scale_rotation_translation();
            let d = view.camera.eye.distance(t);
            2.0 * scale.x * view.pixels_per_unit(d) < FAR_HEIGHT * fade.max(1.0)
        })
    })
}

fn no_character(c: CharacterId) -> CliError {
    CliError::Control(format!("the demo's character {} is gone", c.0))
}

/// How the last frame showed the members, from the store's look words.
struct Shows {
    /// Members posed from their programs, and keeping their last pose.
    posed: usize,
    kept: usize,
    /// Members per skeleton LOD level (cards left out), and joints posed.
    levels: [usize; LOD_LEVELS],
    joints: usize,
}

impl Shows {
    fn of(animator: &Animator, ids: &[MemberId], skeleton: &Skeleton) -> Shows {
        let looks = animator.instances().looks();
        let mut s = Shows {
            posed: 0,
            kept: 0,
            levels: [0; LOD_LEVELS],
            joints: 0,
        };
        for &id in ids {
            let Some(&l) = looks.get(id.0 as usize) else {
                continue;
            };
            if l & look::HIDDEN != 0 {
                continue;
            }
            let level = (l & look::LEVEL) as u8;
            s.levels[usize::from(level).min(LOD_LEVELS - 1)] += 1;
            if l & look::HERO != 0 || l & look::PROGRAM == 0 {
                continue;
            }
            if l & look::KEEP != 0 {
                s.kept += 1;
            } else {
                s.posed += 1;
                s.joints += joints_at(skeleton, level);
            }
        }
        s
    }
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
    /// Control drives the crowd (else fixed programs).
    tree: bool,
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
    /// The GPU's stage times once every dispatch is specialised (none without frames).
    steady: Option<SteadyState>,
    /// The largest pop against a full-detail run (--pops-against).
    pops: Option<Pops>,
    /// The member the camera follows (--close-up).
    close_up: Option<CloseUp>,
}

/// `{"lod0": n, "lod1": n, "lod2": n, "impostor": n, "cross_fading": n, "lod_fading": n}`:
/// members per skeleton LOD level, in the far tier alone, crossing into it (also counted in
/// their level), and crossing into their next coarser mesh LOD (also counted in their level).
fn lod_histogram(f: &FrameStats) -> serde_json::Value {
    let h = &f.lod_histogram;
    json!({
        "lod0": h[0], "lod1": h[1], "lod2": h[2], "impostor": f.impostors,
        "cross_fading": f.cross_fading, "lod_fading": f.lod_fading,
    })
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
        if let Some(c) = &self.close_up {
            let clip = c.clip.as_deref().unwrap_or("no face clip");
            println!("close-up: crowd member {} ({clip})", c.member);
        }
        if let Some(p) = &self.pops {
            println!(
                "pops: worst {:.2}x its motion (member {} at frame {}: {} px against {}); {} of {} member-frames over 2x",
                p.worst_ratio, p.member, p.frame, p.change_px, p.motion_px, p.over_2, p.compared
            );
        }
        for f in frames {
            let r = &f.report;
            let s = &f.stages;
            let c = &f.control;
            println!(
                "frame -> {} (presented at {:.2} of the way from the second-last tick to the last)",
                f.path.display(),
                f.alpha
            );
            if self.tree {
                println!(
                    "  control (CPU): {} tick(s) of {} instances in {:.3} ms (control {:.3}, hand-off {:.3}; {:.2} us per instance); speeds: {} standing, {} walking, {} running; {} waving; root motion moved {:.2} m",
                    c.ticks,
                    c.instances,
                    c.ms,
                    c.control_ms,
                    c.handoff_ms,
                    c.ms * 1e3 / c.instances.max(1) as f64,
                    c.standing,
                    c.walking,
                    c.running,
                    c.waving,
                    c.travelled
                );
                if let Some(o) = c.off_course_m {
                    println!(
                        "  off course (members from their curves at the ticks' ends): mean {:.3} m, max {:.3} m",
                        o.mean, o.max
                    );
                }
            } else {
                println!(
                    "  programs (CPU): {} set in {} tick(s), {:.3} ms",
                    c.instances, c.ticks, c.ms
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
                        "    hero {h}: {}, ponytail {:.1} mm off its animated place ({} spring substeps), feet {} {}",
                        parts.join(", "),
                        ik.ponytail_lag * 1e3,
                        ik.ponytail_substeps,
                        ik.feet[0].as_str(),
                        ik.feet[1].as_str()
                    );
                }
            }
            println!(
                "  dispatches: {} compute ({} present; {} pose for {} program shape(s): {} specialised, {} interpreter; {} bounds; {} budget; {} skinning), {} draw(s)",
                r.dispatches,
                r.present_dispatches,
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
                    "  skeleton LOD: {full} members at every joint, {one} at level 1, {two} at level 2 ({} of them cross-fading into the next level), {} impostors ({} more cross-fading from their meshes); {} joints posed",
                    f.lod_fading, f.impostors, f.cross_fading, f.joints_posed
                );
            }
            let v = &f.visibility;
            println!(
                "  culling ({}): {} of {} instances visible, {} skinned (budget {}, {} over, {} of them cards), {} drawn, {} skinned vertices, {} triangles",
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
                v.carded,
                v.drawn,
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
                let cold = match r.pending_pipelines {
                    0 => String::new(),
                    n => format!(
                        "; {n} specialised pipelines still compiling, their shapes on the interpreter: not the steady state"
                    ),
                };
                println!(
                    "  GPU ms of this frame (timestamps{cold}): pose (program, FK, palette) {:.3}, bounds {:.3}, skinning {:.3}, raster {}",
                    s.pose_ms,
                    s.bounds_ms,
                    s.skinning_ms,
                    f.raster.gpu_ms.map_or("n/a".into(), |ms| format!("{ms:.3}"))
                );
            } else {
                println!("  GPU ms: no timestamp queries on this adapter; wall times only");
            }
            println!(
                "  wall ms: control (CPU) {:.3}, heroes (CPU) {:.3}, present (CPU) {:.3}, compute submit->idle {:.3}, raster submit->idle {:.3}, frame total {:.3}",
                c.ms, f.heroes_ms, f.present_ms, s.wall_ms, f.raster.wall_ms, f.total_ms
            );
        }
        if let Some(t) = &self.steady {
            println!(
                "GPU ms, steady state (the last frame presented again {} times once its pipelines were ready, {} frames waited; median; {} small shapes on the interpreter): pose (program, FK, palette) {:.3}, bounds {:.3}, skinning {:.3}; submit->idle {:.3}{}",
                t.frames,
                t.waited_frames,
                t.interpreter_dispatches,
                t.pose_ms,
                t.bounds_ms,
                t.skinning_ms,
                t.wall_ms,
                match (t.ready, self.ctx.timestamps) {
                    (false, _) => " (a pipeline was still compiling: not the steady state)",
                    (true, false) => " (no timestamp queries: wall times only)",
                    (true, true) => "",
                }
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
                        o.insert(
                            "feet".into(),
                            json!([ik.feet[0].as_str(), ik.feet[1].as_str()]),
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
                    "carded": f.visibility.carded,
                    "drawn": f.visibility.drawn,
                    "members_in_view": f.visibility.visible + f.impostors as u64,
                    "members_drawn": f.visibility.drawn + f.impostors as u64,
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
                    "alpha": f.alpha,
                    "present_ms": f.present_ms,
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
            "steady_state": self.steady,
            "pops": self.pops,
            "close_up": self.close_up,
            "lod_histogram": last.map(lod_histogram),
            "joints_posed": last.map(|f| f.joints_posed),
            "visible": last.map(|f| f.visibility.visible),
            "skinned": last.map(|f| f.visibility.skinned),
            "over_budget": last.map(|f| f.visibility.over_budget),
            "carded": last.map(|f| f.visibility.carded),
            "drawn": last.map(|f| f.visibility.drawn),
            "members_in_view": last.map(|f| f.visibility.visible + f.impostors as u64),
            "members_drawn": last.map(|f| f.visibility.drawn + f.impostors as u64),
            "skinned_vertices": last.map(|f| f.visibility.skinned_vertices),
            "triangles": last.map(|f| f.visibility.triangles),
            "per_level": last.map(|f| per_level(&f.visibility)),
            "frames": frames,
        })
    }
}
