//! What morph targets cost: whole frames (pose, palette, skinning) of the character with its
//! face's morph targets against the same frames of the character stripped of them, on the CPU
//! reference (one thread) and the GPU, for programs that leave the targets at weight 0 and for
//! programs that weigh both. The variants run interleaved frame by frame, in alternating order,
//! so the machine's drift falls on all of them alike; the ratios are of medians of the same run.

use serde::Serialize;
use throng_cpu_ref::{PoseOp, Program};
use throng_gpu::{Decode, GpuContext};

use crate::cpu::CpuCrowd;
use crate::gpu::GpuCrowd;
use crate::timing::median;
use crate::{BenchError, Options, Subject};

/// Instances of the morph table.
pub const MORPH_INSTANCES: usize = 1_000;

/// Timed frames per crowd at least: the bars are a few per cent apart, so the medians need
/// more frames than the other tables'.
pub const MORPH_FRAMES: u32 = 20;

/// One row of the morph table: the character's whole frame with its targets, against the same
/// frame without them.
#[derive(Clone, Debug, Serialize)]
pub struct MorphRow {
    pub subject: String,
    pub instances: usize,
    /// Morph targets a program weighs (0 or 2).
    pub active_targets: usize,
    /// Vertices those targets move, per instance (sparse entries; 0 when none is active).
    pub moved_vertices: usize,
    /// Median whole-frame ms on the CPU reference (one thread) with and without the targets.
    pub cpu_ms: f64,
    pub cpu_plain_ms: f64,
    /// The same on the GPU (`None` without an adapter).
    pub gpu_ms: Option<f64>,
    pub gpu_plain_ms: Option<f64>,
    /// Timed frames per variant (from both of its crowds).
    pub frames: usize,
}

impl MorphRow {
    /// With targets over without, CPU and GPU.
    pub fn ratios(&self) -> (f64, Option<f64>) {
        let gpu = self.gpu_ms.zip(self.gpu_plain_ms).map(|(a, b)| a / b);
        (self.cpu_ms / self.cpu_plain_ms, gpu)
    }
}

/// The morph table for `subject` (the character: its clips `idle`, whose blink is shut at
/// 0.9 s, and `wave`, whose mouth is open at 1 s) at `n` instances: a row with no active target
/// (every instance samples `walk`, which leaves the face alone) and one with two (each blends
/// `idle` at 0.9 s and `wave` at 1 s half and half: blink 0.5, mouth 0.4). Empty when the
/// subject has no morph targets or lacks those clips.
pub fn run(
    ctx: Option<&GpuContext>,
    subject: &Subject,
    n: usize,
    options: &Options,
    mut on_row: impl FnMut(&MorphRow),
) -> Result<Vec<MorphRow>, BenchError> {
    let clip = |name: &str| {
        (subject.package.clips.iter())
            .position(|c| c.name == name && c.skeleton == subject.skeleton)
            .map(|c| c as u32)
    };
    let targets: usize = subject.meshes().map(|m| m.targets.len()).sum();
    let (Some(walk), Some(idle), Some(wave), true) =
        (clip("walk"), clip("idle"), clip("wave"), targets > 0)
    else {
        return Ok(Vec::new());
    };
    let mut plain = subject.clone();
    plain.name = format!("{} without morph targets", subject.name);
    for m in &mut plain.package.meshes {
        m.targets.clear();
    }
    let quiet: Vec<Program> = (0..n)
        .map(|i| Program {
            ops: vec![
                PoseOp::sample(0, walk, (i % 30) as f32 / 30.0),
                PoseOp::to_component(0),
            ],
            weights: vec![],
        })
        .collect();
    let active: Vec<Program> = (0..n)
        .map(|_| Program {
            ops: vec![
                PoseOp::sample(0, idle, 0.9),
                PoseOp::sample(1, wave, 1.0),
                PoseOp::blend(2, 0, 2, 0),
                PoseOp::to_component(2),
            ],
            weights: vec![0.5, 0.5],
        })
        .collect();
    let moved: usize = (subject.meshes())
        .flat_map(|m| &m.targets)
        .map(|t| t.vertices.len())
        .sum();
    let mut rows = Vec::new();
    for (programs, active_targets) in [(&quiet, 0), (&active, 2)] {
        // Two crowds of each, made in opposite orders (with, without, without, with): on
        // lavapipe the first of two like runtimes made runs 1–3 % slower than the second, whatever
        // it holds, so one pair alone would tilt the ratio by as much as the bar allows.
        let subjects = [subject, &plain, &plain, subject];
        let mut cpu = subjects.map(|s| CpuCrowd::new(s, n, 1, 0));
        let mut gpu = match ctx {
            Some(ctx) => {
                let make = |s: &Subject| {
                    GpuCrowd::new(ctx, s, (n, n, 0), options.mapping, false, Decode::Auto)
                };
                let mut made = Vec::with_capacity(subjects.len());
                for s in subjects {
                    made.push(make(s)?);
                }
                Some(made)
            }
            None => None,
        };
        if let Some(g) = gpu.as_mut() {
            for (crowd, s) in g.iter_mut().zip(subjects) {
                crowd.frame(s, programs, true)?;
                crowd.wait_for_pipelines()?;
                crowd.frame(s, programs, true)?;
            }
        }
        // Per variant (with, without) its frames from both crowds.
        let mut cpu_ms = [Vec::new(), Vec::new()];
        let mut gpu_ms = [Vec::new(), Vec::new()];
        for frame in 0..options.frames.max(MORPH_FRAMES) {
            // Forward, then backward: whatever the order favours falls on both alike.
            let mut order = [0, 1, 2, 3];
            if frame % 2 == 1 {
                order.reverse();
            }
            for k in order {
                let variant = usize::from(k == 1 || k == 2);
                let start = std::time::Instant::now();
                cpu[k].frame(subjects[k], programs, true, false)?;
                cpu_ms[variant].push(crate::timing::ms_since(start));
                if let Some(g) = gpu.as_mut() {
                    gpu_ms[variant].push(g[k].frame(subjects[k], programs, true)?.wall_ms);
                }
            }
        }
        let gpu_median = |k: usize| gpu.is_some().then(|| median(gpu_ms[k].iter().copied()));
        let row = MorphRow {
            subject: subject.name.clone(),
            instances: n,
            active_targets,
            moved_vertices: if active_targets > 0 { moved } else { 0 },
            cpu_ms: median(cpu_ms[0].iter().copied()),
            cpu_plain_ms: median(cpu_ms[1].iter().copied()),
            gpu_ms: gpu_median(0),
            gpu_plain_ms: gpu_median(1),
            frames: cpu_ms[0].len(),
        };
        on_row(&row);
        rows.push(row);
    }
    Ok(rows)
}
