//! Throng's crowd benchmark (DESIGN.md §9): for each subject (a skeleton with its skin and
//! clips), instance count and program [`Shape`], one run measures the CPU reference on one
//! thread, the CPU reference over rayon, and the GPU path, and reports medians per frame, joints
//! per second, ns per joint, throughput ratios, dispatches and chunks per frame, and bytes
//! uploaded per instance and resident ([`Report`]). The `throng bench` command drives it;
//! docs/benchmark.md says how to read it. The criterion benches in `benches/` time the CPU
//! kernels one by one. [`codec`] compares the reference and compressed clip encodings (pose
//! only) for the same subjects and crowds; [`Report::codec`] holds what it found.
//!
//! Every path does the same work per frame: the same programs, advanced by one 60 Hz frame, then
//! "pose" (program + FK) and "skin" (palette + linear blend skinning of positions and normals).
//! The CPU paths skin into per-thread scratch; the GPU path writes every skinned vertex of every
//! instance, with its placement applied, to GPU memory.

pub mod codec;
pub mod cpu;
pub mod gpu;
pub mod report;
pub mod shape;
pub mod subject;
pub mod timing;

use std::path::PathBuf;
use std::time::Instant;

use thiserror::Error;
use throng_gpu::{GpuContext, GpuError};

pub use codec::{Codec, CodecRow, Pair};
pub use cpu::CpuCrowd;
pub use gpu::{GpuCrowd, GpuFrame};
pub use report::{CpuTiming, Derived, GpuTiming, Report, Row, Stages};
pub use shape::{Crowd, Shape};
pub use subject::Subject;

use timing::{measure, median, ms_since};

#[derive(Debug, Error)]
pub enum BenchError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Cook(#[from] throng_cook::CookError),
    #[error("{path}: {source}")]
    Package { path: PathBuf, source: throng_cook::PackageError },
    #[error("{subject}: {why}")]
    Unusable { subject: String, why: String },
    #[error("{subject}, instance {instance}: {source}")]
    Program {
        subject: String,
        instance: usize,
        source: throng_cpu_ref::ProgramError,
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
    pub shapes: Vec<Shape>,
    /// Most timed frames per measurement; the median is reported.
    pub frames: u32,
    /// A measurement stops early once its timed frames add up to this many ms (one frame at
    /// least is always timed), so large crowds on slow adapters finish in minutes.
    pub budget_ms: f64,
    /// GPU skinning is skipped for an instance count whose skinned vertices (32 bytes each)
    /// would take more bytes than this; its pose is still measured.
    pub skinned_bytes_limit: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            instances: vec![100, 1_000, 10_000],
            shapes: Shape::ALL.to_vec(),
            frames: 10,
            budget_ms: 2_000.0,
            skinned_bytes_limit: 8 << 30,
        }
    }
}

/// Bytes of one skinned vertex in the GPU's output (`throng_gpu::SkinnedVertex`).
const SKINNED_VERTEX_BYTES: u64 = 32;

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
                && (n * subject.vertices()) as u64 * SKINNED_VERTEX_BYTES <= options.skinned_bytes_limit
        };
        let most = options.instances.iter().copied().max().unwrap_or(0);
        let most_skinned = options.instances.iter().copied().filter(|&n| skinnable(n)).max().unwrap_or(0);
        let mut runtime = match gpu {
            Some(ctx) => Some(GpuCrowd::new(ctx, subject, most, most_skinned)?),
            None => None,
        };
        for &n in &options.instances {
            for &shape in &options.shapes {
                let mut crowd = Crowd::new(subject, shape, n);
                let mut cpu = CpuCrowd::new(subject, n, threads);
                let single = time_cpu(subject, &mut crowd, &mut cpu, options, false)?;
                let parallel = time_cpu(subject, &mut crowd, &mut cpu, options, true)?;
                let gpu = match runtime.as_mut() {
                    Some(g) => Some(time_gpu(subject, &mut crowd, g, options, skinnable(n))?),
                    None => None,
                };
                let row = Row {
                    subject: subject.name.clone(),
                    shape,
                    ops_per_program: crowd.programs.first().map_or(0, |p| p.ops.len()),
                    instances: n,
                    joints: subject.joints(),
                    palette_entries: subject.palette_len(),
                    vertices: subject.vertices(),
                    derived: Derived::new(n, subject.joints(), subject.vertices(), &single, &parallel, gpu.as_ref()),
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
    })
}

/// The CPU reference's pose and skin passes, on one thread or over rayon.
fn time_cpu(
    subject: &Subject,
    crowd: &mut Crowd,
    cpu: &mut CpuCrowd,
    options: &Options,
    parallel: bool,
) -> Result<CpuTiming, BenchError> {
    let samples = measure(options.frames, options.budget_ms, |f| {
        crowd.advance(subject, f);
        let start = Instant::now();
        if parallel {
            cpu.pose_parallel(subject, &crowd.programs)?;
        } else {
            cpu.pose(subject, &crowd.programs)?;
        }
        let pose = ms_since(start);
        let start = Instant::now();
        if parallel {
            cpu.skin_parallel(subject);
        } else {
            cpu.skin(subject);
        }
        let skin = ms_since(start);
        Ok::<_, BenchError>((pose + skin, (pose, skin)))
    })?;
    Ok(CpuTiming {
        pose_ms: median(samples.iter().map(|s| s.0)),
        skin_ms: median(samples.iter().map(|s| s.1)),
        frame_ms: median(samples.iter().map(|s| s.0 + s.1)),
        frames: samples.len(),
    })
}

/// Pose-only frames, then whole frames (when `skin`), on the GPU.
fn time_gpu(
    subject: &Subject,
    crowd: &mut Crowd,
    gpu: &mut GpuCrowd,
    options: &Options,
    skin: bool,
) -> Result<GpuTiming, BenchError> {
    let mut frames = |skin: bool| {
        measure(options.frames, options.budget_ms, |f| {
            crowd.advance(subject, f);
            let frame = gpu.frame(subject, &crowd.programs, skin)?;
            Ok::<_, BenchError>((frame.wall_ms, frame))
        })
    };
    let pose = frames(false)?;
    let whole = if skin { frames(true)? } else { Vec::new() };
    let last = whole.last().or(pose.last()).map(|f| f.report.clone()).unwrap_or_default();
    let pose_dispatches = pose.last().map_or(0, |f| f.report.dispatches);
    let timestamps = whole.first().is_some_and(|f| f.times.gpu_timestamps);
    let stage = |get: fn(&GpuFrame) -> f64| median(whole.iter().map(get));
    let joints = subject.joints() as u64;
    let output_bytes_per_instance = 48 * 2 * joints
        + if skin {
            48 * subject.palette_len() as u64 + SKINNED_VERTEX_BYTES * subject.vertices() as u64
        } else {
            0
        };
    let skinning_skipped = match (subject.skin, skin) {
        (None, _) => Some("the subject has no skin".to_string()),
        (Some(_), false) => Some(format!(
            "{} instances × {} vertices × {SKINNED_VERTEX_BYTES} B exceed the {} MiB limit",
            crowd.programs.len(),
            subject.vertices(),
            options.skinned_bytes_limit >> 20
        )),
        _ => None,
    };
    Ok(GpuTiming {
        pose_ms: median(pose.iter().map(|f| f.wall_ms)),
        pose_frames: pose.len(),
        frame_ms: (!whole.is_empty()).then(|| median(whole.iter().map(|f| f.wall_ms))),
        frame_frames: whole.len(),
        stage_timing: if timestamps { "timestamps" } else { "wall" },
        stages: timestamps.then(|| Stages {
            program_ms: stage(|f| f.times.program_ms),
            fk_ms: stage(|f| f.times.fk_ms),
            palette_ms: stage(|f| f.times.palette_ms),
            skinning_ms: stage(|f| f.times.skinning_ms),
        }),
        dispatches: last.dispatches,
        pose_dispatches,
        chunks: last.chunks,
        bytes_per_instance: last.bytes_per_instance(),
        upload_bytes: last.upload_bytes,
        resident_bytes: gpu.resident_bytes(),
        output_bytes_per_instance,
        skinning_skipped,
    })
}
