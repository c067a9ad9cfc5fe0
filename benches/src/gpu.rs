//! The GPU path over a crowd: one [`Runtime`] per subject and mapping with its package
//! resident, and frames of one batch, either pose only (the batch has no skin) or whole (pose,
//! palette, skinning).

use std::time::Instant;

use throng_cpu_ref::{Outputs, Program};
use throng_gpu::{
    Batch, Capacities, Decode, FrameReport, GpuContext, Instance, Mapping, PackageId, Pose,
    Runtime, RuntimeOptions, Specialise, StageTimes,
};

use crate::cpu::grid;
use crate::timing::ms_since;
use crate::{BenchError, Subject};

/// A runtime with one subject's package resident.
pub struct GpuCrowd {
    runtime: Runtime,
    package: PackageId,
}

/// One GPU frame: wall time from `Runtime::frame` to the queue going idle (validation, upload,
/// recording, submission and execution), what the runtime reported, and its pass times.
#[derive(Clone, Debug)]
pub struct GpuFrame {
    pub wall_ms: f64,
    /// The host's part of the wall time: `Runtime::frame` alone (validation, binning, staging,
    /// upload, recording and submission).
    pub host_ms: f64,
    pub report: FrameReport,
    pub times: StageTimes,
}

impl GpuCrowd {
    /// Frame buffers for up to `instances` instances, of which up to `skinned` are skinned, and
    /// `history` inertialization history slots; `mapping` `None` is the adapter's choice. With
    /// `program_only` the pose pass stops after the program and writes local poses (measuring
    /// the FK part). `decode` is the runtime's decode cache policy.
    pub fn new(
        ctx: &GpuContext,
        subject: &Subject,
        (instances, skinned, history): (usize, usize, usize),
        mapping: Option<Mapping>,
        program_only: bool,
        decode: Decode,
    ) -> Result<GpuCrowd, BenchError> {
        let n = u32::try_from(instances).map_err(|_| BenchError::TooMany(instances))?;
        let mut capacities = Capacities::for_packages(&[&subject.package], n);
        capacities.skinned_instances = skinned as u32;
        capacities.history_slots = history as u32;
        let options = RuntimeOptions {
            mapping,
            specialise: Specialise::Background,
            outputs: Outputs {
                locals: program_only,
                ..Outputs::default()
            },
            fk: !program_only,
            decode,
        };
        let mut runtime = Runtime::with_options(ctx, capacities, options)?;
        let package = runtime.add_package(&subject.package)?;
        Ok(GpuCrowd { runtime, package })
    }

    pub fn mapping(&self) -> Mapping {
        self.runtime.mapping()
    }

    /// Bytes the subject's package holds on the GPU.
    pub fn resident_bytes(&self) -> u64 {
        self.runtime.resident_bytes()
    }

    /// Evaluates `programs` (and skins them when `skin` and the subject has a skin) and waits
    /// for the result.
    pub fn frame(
        &mut self,
        subject: &Subject,
        programs: &[Program],
        skin: bool,
    ) -> Result<GpuFrame, BenchError> {
        self.frame_at(subject, programs, skin, 0)
    }

    /// [`GpuCrowd::frame`] at skeleton LOD `level`.
    pub fn frame_at(
        &mut self,
        subject: &Subject,
        programs: &[Program],
        skin: bool,
        level: u8,
    ) -> Result<GpuFrame, BenchError> {
        let instances: Vec<Instance> = programs
            .iter()
            .enumerate()
            .map(|(i, p)| Instance {
                pose: Pose::Lod(p, level),
                placement: grid(i),
            })
            .collect();
        let batch = Batch {
            package: self.package,
            skeleton: subject.skeleton,
            skin: subject.skin.filter(|_| skin),
            instances: &instances,
        };
        let start = Instant::now();
        let report = self.runtime.frame(&[batch])?;
        let host_ms = ms_since(start);
        let times = self.runtime.finish()?;
        Ok(GpuFrame {
            wall_ms: ms_since(start),
            host_ms,
            report,
            times,
        })
    }

    /// Waits for the specialised pipelines requested so far (after a warm-up frame, so the
    /// timed frames run them).
    pub fn wait_for_pipelines(&mut self) -> Result<(), BenchError> {
        Ok(self.runtime.wait_for_pipelines()?)
    }
}
