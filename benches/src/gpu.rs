//! The GPU path over a crowd: one [`Runtime`] per subject with its package resident, and
//! frames of one batch, either pose only (program + FK: the batch has no skin) or whole
//! (program, FK, palette, skinning).

use std::time::Instant;

use glam::{Affine3A, Vec3};
use throng_cpu_ref::Program;
use throng_gpu::{Batch, Capacities, FrameReport, GpuContext, Instance, PackageId, Pose, Runtime, StageTimes};

use crate::timing::ms_since;
use crate::{BenchError, Subject};

/// A runtime with one subject's package resident.
pub struct GpuCrowd {
    runtime: Runtime,
    package: PackageId,
}

/// One GPU frame: wall time from `Runtime::frame` to the queue going idle (upload, recording,
/// submission and execution), what the runtime reported, and its stage times.
#[derive(Clone, Debug)]
pub struct GpuFrame {
    pub wall_ms: f64,
    pub report: FrameReport,
    pub times: StageTimes,
}

impl GpuCrowd {
    /// Frame buffers for up to `instances` instances, of which up to `skinned` are skinned.
    pub fn new(
        ctx: &GpuContext,
        subject: &Subject,
        instances: usize,
        skinned: usize,
    ) -> Result<GpuCrowd, BenchError> {
        let n = u32::try_from(instances).map_err(|_| BenchError::TooMany(instances))?;
        let mut capacities = Capacities::for_packages(&[&subject.package], n);
        capacities.vertices = (skinned * subject.vertices()) as u64;
        let mut runtime = Runtime::new(ctx, capacities)?;
        let package = runtime.add_package(&subject.package, &subject.masks_per_skeleton())?;
        Ok(GpuCrowd { runtime, package })
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
        let instances: Vec<Instance> = programs
            .iter()
            .enumerate()
            .map(|(i, p)| Instance {
                pose: Pose::Program(p),
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
        let times = self.runtime.finish()?;
        Ok(GpuFrame {
            wall_ms: ms_since(start),
            report,
            times,
        })
    }
}

/// Instance `i`'s place on a square grid 2 m apart.
fn grid(i: usize) -> Affine3A {
    let side = 100;
    Affine3A::from_translation(Vec3::new((i % side) as f32 * 2.0, 0.0, (i / side) as f32 * 2.0))
}
