//! Throng's crowd benchmark (DESIGN.md §9): for each subject (a skeleton with its skin and
//! clips), instance count and program [`Shape`], one run measures the CPU reference on one
//! thread, the CPU reference over rayon, and the GPU path, and reports medians per frame, joints
//! per second, ns per joint, throughput ratios, dispatches and chunks per frame, and bytes
//! uploaded per instance and resident ([`Report`]). The `throng bench` command drives it;
//! docs/benchmark.md says how to read it. The criterion benches in `benches/` time the CPU
//! kernels one by one. [`codec`] compares the reference and compressed clip encodings (pose
//! only) for the same subjects and crowds; [`Report::codec`] holds what it found. [`control`]
//! times the authoritative control tick beside the pose ([`Report::control`]); [`morph`] what
//! the character's morph targets cost ([`Report::morph`]).
//!
//! Every path does the same work per frame: the same programs, advanced by one 60 Hz frame, in
//! pose-only frames (program + FK: component transforms of every instance) and whole frames
//! (pose + palette + linear blend skinning of positions and normals, placements applied, every
//! skinned vertex written to the frame's output). The CPU paths run throng-cpu-ref's frame
//! oracle (`CpuRuntime`), the GPU path throng-gpu's `Runtime`: the same frame, computed twice.
//! Without a forced mapping the GPU pose is measured in both mappings, side by side.

pub mod codec;
pub mod control;
pub mod cpu;
pub mod crowd;
pub mod game;
pub mod gpu;
pub mod lod;
pub mod morph;
pub mod plot;
pub mod report;
pub mod subject;
pub mod timing;

use std::path::PathBuf;
use std::time::Instant;

use thiserror::Error;
use throng_fixtures::{BenchShape, ProgramSet};
use throng_gpu::{Decode, GpuContext, GpuError, Mapping};

pub use codec::{Codec, CodecRow, Pair};
pub use control::ControlRow;
pub use cpu::CpuCrowd;
pub use crowd::{CrowdRow, FarCost};
pub use game::GameRow;
pub use gpu::{GpuCrowd, GpuFrame};
pub use lod::LodRow;
pub use morph::MorphRow;
pub use report::{CpuTiming, Derived, GpuTiming, MappingPose, Report, Row, Stages};
pub use subject::Subject;

use timing::{measure, median, ms_since};

#[derive(Debug, Error)]
pub enum BenchError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Cook(#[from] throng_cook::CookError),
    #[error("{path}: {source}")]
    Package {
        path: PathBuf,
        source: throng_cook::PackageError,
    },
    #[error("{subject}: {why}")]
    Unusable { subject: String, why: String },
    #[error("{subject}: {source}")]
    Frame {
        subject: String,
        source: throng_cpu_ref::FrameError,
    },
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("{0} instances is more than a frame can hold (u32)")]
    TooMany(usize),
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct Options {
    /// Instance counts, each measured for every subject and shape.
    pub instances: Vec<usize>,
    pub shapes: Vec<BenchShape>,
    /// Most timed frames per measurement; the median is reported.
    pub frames: u32,
    /// A measurement stops early once its timed frames add up to this many ms (one frame at
    /// least is always timed), so large crowds on slow adapters finish in minutes.
    pub budget_ms: f64,
    /// Skinning (CPU and GPU) is skipped for an instance count whose skinned vertices (16 bytes
    /// each on the GPU) would take more bytes than this; its pose is still measured.
    pub skinned_bytes_limit: u64,
    /// `Some`: measure the GPU in this mapping only. `None`: the adapter's choice, and the pose
    /// of the other mapping beside it.
    pub mapping: Option<Mapping>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            instances: vec![100, 1_000, 10_000],
            shapes: BenchShape::ALL.to_vec(),
            frames: 10,
            budget_ms: 2_000.0,
            skinned_bytes_limit: 4 << 30,
            mapping: None,
        }
    }
}

/// Bytes of one skinned vertex in the GPU's output.
fn skinned_vertex_bytes() -> u64 {
    throng_gpu::output_bytes(0, Some((0, 1)))
}

/// The GPU runtimes of one subject: the measured mapping (skinned), the other mapping's pose,
/// and a program-only runtime for the stage breakdown.
struct GpuRuntimes {
    main: GpuCrowd,
    other: Option<GpuCrowd>,
    program_only: Option<GpuCrowd>,
}

/// Measures every subject × instance count × shape; `gpu` `None` leaves the GPU columns empty.
/// `on_row` sees each row as soon as it is measured (for progress output).
pub fn run(
    subjects: &[Subject],
    gpu: Option<&GpuContext>,
    options: &Options,
    mut on_row: impl FnMut(&Row),
) -> Result<Report, BenchError> {
    let threads = rayon::current_num_threads();
    let mut rows = Vec::new();
    for subject in subjects {
        let skinnable = |n: usize| {
            subject.skin.is_some()
                && (n * subject.vertices()) as u64 * skinned_vertex_bytes()
                    <= options.skinned_bytes_limit
        };
        let most = options.instances.iter().copied().max().unwrap_or(0);
        let most_skinned = options
            .instances
            .iter()
            .copied()
            .filter(|&n| skinnable(n))
            .max()
            .unwrap_or(0);
        // History for the inertialize shapes' instances (paged like the streams).
        let most_history = options
            .shapes
            .iter()
            .map(|s| s.history_slots(most))
            .max()
            .unwrap_or(0);
        let mut runtimes = match gpu {
            Some(ctx) => {
                let main = GpuCrowd::new(
                    ctx,
                    subject,
                    (most, most_skinned, most_history),
                    options.mapping,
                    false,
                    Decode::Auto,
                )?;
                let other = match options.mapping {
                    Some(_) => None,
                    None => Some(GpuCrowd::new(
                        ctx,
                        subject,
                        (most, 0, most_history),
                        Some(other_mapping(main.mapping())),
                        false,
                        Decode::Auto,
                    )?),
                };
                let program_only = if ctx.timestamps {
                    Some(GpuCrowd::new(
                        ctx,
                        subject,
                        (most, 0, most_history),
                        Some(main.mapping()),
                        true,
                        Decode::Auto,
                    )?)
                } else {
                    None
                };
                Some(GpuRuntimes {
                    main,
                    other,
                    program_only,
                })
            }
            None => None,
        };
        for &n in &options.instances {
            for &shape in &options.shapes {
                let mut set = subject.programs(shape, n);
                let mut cpu = CpuCrowd::new(subject, n, threads, shape.history_slots(n));
                let skin = skinnable(n);
                let single = time_cpu(subject, &mut set, &mut cpu, options, false, skin)?;
                let parallel = time_cpu(subject, &mut set, &mut cpu, options, true, skin)?;
                let gpu = match runtimes.as_mut() {
                    Some(g) => Some(time_gpu(subject, &mut set, g, options, skin)?),
                    None => None,
                };
                let row = Row {
                    subject: subject.name.clone(),
                    shape,
                    ops_per_program: set.programs.first().map_or(0, |p| p.ops.len()),
                    instances: n,
                    joints: subject.joints(),
                    palette_entries: subject.palette_len(),
                    vertices: subject.vertices(),
                    derived: Derived::new(
                        n,
                        subject.joints(),
                        subject.vertices(),
                        &single,
                        &parallel,
                        gpu.as_ref(),
                    ),
                    cpu: single,
                    cpu_rayon: parallel,
                    gpu,
                };
                on_row(&row);
                rows.push(row);
            }
        }
    }
    Ok(Report {
        adapter: gpu.map(|g| g.adapter.clone()),
        rayon_threads: threads,
        frames_max: options.frames,
        budget_ms: options.budget_ms,
        rows,
        codec: Codec::default(),
        crowd: Vec::new(),
        far_cost: Vec::new(),
        lod: Vec::new(),
        control: Vec::new(),
        game: Vec::new(),
        morph: Vec::new(),
    })
}

fn other_mapping(m: Mapping) -> Mapping {
    match m {
        Mapping::Thread => Mapping::Workgroup,
        Mapping::Workgroup => Mapping::Thread,
    }
}

/// The CPU frame oracle's pose-only and (with `skin`) whole frames, on one thread or over rayon.
pub(crate) fn time_cpu(
    subject: &Subject,
    set: &mut ProgramSet,
    cpu: &mut CpuCrowd,
    options: &Options,
    parallel: bool,
    skin: bool,
) -> Result<CpuTiming, BenchError> {
    let mut frames = |skinned: bool| {
        measure(options.frames, options.budget_ms, |f| {
            set.advance(&subject.package, f);
            let start = Instant::now();
            cpu.frame(subject, &set.programs, skinned, parallel)?;
            let ms = ms_since(start);
            Ok::<_, BenchError>((ms, ms))
        })
    };
    let poses = frames(false)?;
    let pose = median(poses.iter().copied());
    let frame = if skin { median(frames(true)?) } else { pose };
    Ok(CpuTiming {
        pose_ms: pose,
        skin_ms: (frame - pose).max(0.0),
        frame_ms: frame,
        frames: poses.len(),
    })
}

/// Frames until every dispatch runs its specialised pipeline (a request, then lavapipe's
/// compile at the first dispatch), so the timed frames measure the steady state.
fn warm(
    subject: &Subject,
    set: &ProgramSet,
    gpu: &mut GpuCrowd,
    skin: bool,
) -> Result<(), BenchError> {
    for _ in 0..2 {
        gpu.frame(subject, &set.programs, skin)?;
        gpu.wait_for_pipelines()?;
    }
    Ok(())
}

/// Timed frames of `gpu` (pose-only, or whole with `skin`).
fn gpu_frames(
    subject: &Subject,
    set: &mut ProgramSet,
    gpu: &mut GpuCrowd,
    options: &Options,
    skin: bool,
) -> Result<Vec<GpuFrame>, BenchError> {
    warm(subject, set, gpu, skin)?;
    measure(options.frames, options.budget_ms, |f| {
        set.advance(&subject.package, f);
        let frame = gpu.frame(subject, &set.programs, skin)?;
        Ok::<_, BenchError>((frame.wall_ms, frame))
    })
}

/// Pose-only frames in each mapping, then whole frames (when `skin`), then the program-only
/// breakdown, on the GPU.
fn time_gpu(
    subject: &Subject,
    set: &mut ProgramSet,
    g: &mut GpuRuntimes,
    options: &Options,
    skin: bool,
) -> Result<GpuTiming, BenchError> {
    let pose = gpu_frames(subject, set, &mut g.main, options, false)?;
    let whole = if skin {
        gpu_frames(subject, set, &mut g.main, options, true)?
    } else {
        Vec::new()
    };
    let joint_count = (set.programs.len() * subject.joints()) as f64;
    let mapping_pose = |mapping: Mapping, frames: &[GpuFrame]| {
        let wall = median(frames.iter().map(|f| f.wall_ms));
        MappingPose {
            mapping,
            pose_ms: wall,
            pose_ns_per_joint: if joint_count > 0.0 {
                wall * 1e6 / joint_count
            } else {
                0.0
            },
            pose_pass_ms: frames
                .first()
                .is_some_and(|f| f.times.gpu_timestamps)
                .then(|| median(frames.iter().map(|f| f.times.pose_ms))),
            host_ms: median(frames.iter().map(|f| f.host_ms)),
            specialised: frames.iter().all(|f| f.report.interpreter_dispatches == 0),
        }
    };
    let mut poses = vec![mapping_pose(g.main.mapping(), &pose)];
    if let Some(other) = g.other.as_mut() {
        let frames = gpu_frames(subject, set, other, options, false)?;
        poses.push(mapping_pose(other.mapping(), &frames));
    }
    let program = match g.program_only.as_mut() {
        Some(p) => Some(median(
            gpu_frames(subject, set, p, options, false)?
                .iter()
                .map(|f| f.times.pose_ms),
        )),
        None => None,
    };
    let last = whole
        .last()
        .or(pose.last())
        .map(|f| f.report.clone())
        .unwrap_or_default();
    let timestamps = pose.first().is_some_and(|f| f.times.gpu_timestamps);
    let pose_pass = median(pose.iter().map(|f| f.times.pose_ms));
    let whole_pass = (!whole.is_empty()).then(|| median(whole.iter().map(|f| f.times.pose_ms)));
    let stages = timestamps.then(|| {
        let program_ms = program.unwrap_or(0.0);
        Stages {
            program_ms,
            fk_ms: (pose_pass - program_ms).max(0.0),
            palette_ms: whole_pass.map_or(0.0, |w| (w - pose_pass).max(0.0)),
            skinning_ms: median(whole.iter().map(|f| f.times.skinning_ms)),
            bounds_ms: median(whole.iter().map(|f| f.times.bounds_ms)),
            pose_ms: pose_pass,
        }
    });
    let output_bytes_per_instance = throng_gpu::output_bytes(
        subject.joints() as u32,
        skin.then(|| (subject.palette_len() as u32, subject.vertices() as u32)),
    );
    let skinning_skipped = match (subject.skin, skin) {
        (None, _) => Some("the subject has no skin".to_string()),
        (Some(_), false) => Some(format!(
            "{} instances × {} vertices × {} B exceed the {} MiB limit",
            set.programs.len(),
            subject.vertices(),
            skinned_vertex_bytes(),
            options.skinned_bytes_limit >> 20
        )),
        _ => None,
    };
    Ok(GpuTiming {
        pose_ms: poses[0].pose_ms,
        pose_frames: pose.len(),
        frame_ms: (!whole.is_empty()).then(|| median(whole.iter().map(|f| f.wall_ms))),
        frame_frames: whole.len(),
        stage_timing: if timestamps { "timestamps" } else { "wall" },
        fk_ns_per_joint: stages.as_ref().map(|s| {
            if joint_count > 0.0 {
                s.fk_ms * 1e6 / joint_count
            } else {
                0.0
            }
        }),
        stages,
        dispatches: last.dispatches,
        pose_dispatches: pose.last().map_or(0, |f| f.report.dispatches),
        chunks: last.chunks,
        bytes_per_instance: last.bytes_per_instance(),
        upload_bytes: last.upload_bytes,
        resident_bytes: g.main.resident_bytes(),
        output_bytes_per_instance,
        skinning_skipped,
        mapping: g.main.mapping(),
        specialised: poses[0].specialised
            && whole.iter().all(|f| f.report.interpreter_dispatches == 0),
        poses,
    })
}
