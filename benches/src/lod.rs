//! Skeleton LOD: the GPU pose pass of the same programs at every level of the subject's
//! skeleton (throng-cpu-ref `lod`), pose-only frames, the levels interleaved frame by frame so
//! that the machine's drift falls on all of them alike.

use serde::Serialize;
use throng_fixtures::BenchShape;
use throng_gpu::{Decode, GpuContext};

use crate::gpu::GpuCrowd;
use crate::timing::median;
use crate::{BenchError, Options, Subject};

/// Program shapes of the LOD table: the cheapest per joint and the costliest.
pub const LOD_SHAPES: [BenchShape; 2] = [BenchShape::OneClip, BenchShape::Layered];

/// One row of the LOD table.
#[derive(Clone, Debug, Serialize)]
pub struct LodRow {
    pub subject: String,
    pub shape: BenchShape,
    pub instances: usize,
    /// Skeleton LOD level (0: every joint) and the joints its programs run on.
    pub level: u8,
    pub joints: usize,
    /// Median wall time of a pose-only frame, ms, and the frames timed.
    pub pose_ms: f64,
    pub frames: usize,
}

/// The LOD table for `subject` at `n` instances: a row per shape of [`LOD_SHAPES`] and level.
pub fn run(
    ctx: &GpuContext,
    subject: &Subject,
    n: usize,
    options: &Options,
    mut on_row: impl FnMut(&LodRow),
) -> Result<Vec<LodRow>, BenchError> {
    let skeleton = &subject.package.skeletons[subject.skeleton as usize];
    let levels = skeleton.lods.len() as u8;
    if levels == 0 {
        return Ok(Vec::new());
    }
    let mut gpu = GpuCrowd::new(
        ctx,
        subject,
        (n, 0, 0),
        options.mapping,
        false,
        Decode::Auto,
    )?;
    let mut rows = Vec::new();
    for shape in LOD_SHAPES {
        let mut set = subject.programs(shape, n);
        for level in 0..=levels {
            gpu.frame_at(subject, &set.programs, false, level)?;
        }
        gpu.wait_for_pipelines()?;
        let mut walls = vec![Vec::new(); usize::from(levels) + 1];
        for f in 0..options.frames.max(3) {
            set.advance(&subject.package, f);
            for level in 0..=levels {
                let frame = gpu.frame_at(subject, &set.programs, false, level)?;
                walls[usize::from(level)].push(frame.wall_ms);
            }
        }
        for (level, w) in (0u8..).zip(walls) {
            let row = LodRow {
                subject: subject.name.clone(),
                shape,
                instances: n,
                level,
                joints: match usize::from(level).checked_sub(1) {
                    None => skeleton.joint_count(),
                    Some(l) => skeleton.lods[l].joints().len(),
                },
                pose_ms: median(w.iter().copied()),
                frames: w.len(),
            };
            on_row(&row);
            rows.push(row);
        }
    }
    Ok(rows)
}
