//! The CPU reference over a crowd: throng-cpu-ref's frame oracle (`CpuRuntime`), on one thread
//! or over rayon (one contiguous block of instances per thread, each with its own evaluator and
//! scratch made once), in pose-only frames (the batch has no skin: program and FK) and whole
//! frames (palette and skinning of every vertex, placements applied, into the frame's output),
//! exactly what a GPU frame computes.

use glam::{Affine3A, Vec3};
use throng_cpu_ref::{
    Batch, CpuRuntime, Instance, Outputs, PackageId, Pose, Program, ProgramLimits,
};

use crate::{BenchError, Subject};

/// A CPU runtime with one subject's package, and per-instance placements.
pub struct CpuCrowd {
    runtime: CpuRuntime,
    package: PackageId,
    placements: Vec<Affine3A>,
}

impl CpuCrowd {
    /// Room for `threads` workers (at least one), `n` placements on a grid and `history`
    /// inertialization history slots.
    pub fn new(subject: &Subject, n: usize, threads: usize, history: usize) -> CpuCrowd {
        let limits = ProgramLimits {
            history_slots: history,
            ..Default::default()
        };
        let mut runtime = CpuRuntime::new(limits, Outputs::default(), threads);
        let package = runtime.add_package(&subject.package);
        CpuCrowd {
            runtime,
            package,
            placements: (0..n).map(grid).collect(),
        }
    }

    /// One frame of `programs`: skinned when `skin` (and the subject has a skin), over rayon
    /// when `parallel`.
    pub fn frame(
        &mut self,
        subject: &Subject,
        programs: &[Program],
        skin: bool,
        parallel: bool,
    ) -> Result<(), BenchError> {
        let instances: Vec<Instance> = programs
            .iter()
            .zip(&self.placements)
            .map(|(p, &placement)| Instance {
                pose: Pose::Program(p),
                placement,
            })
            .collect();
        let batch = [Batch {
            package: self.package,
            skeleton: subject.skeleton,
            skin: subject.skin.filter(|_| skin),
            instances: &instances,
        }];
        let result = if parallel {
            self.runtime.frame_parallel(&batch)
        } else {
            self.runtime.frame(&batch)
        };
        result.map_err(|source| BenchError::Frame {
            subject: subject.name.clone(),
            source,
        })
    }

    /// Component transforms of instance `i` after the last frame.
    pub fn components(&self, i: usize) -> &[Affine3A] {
        let out = &self.runtime.outputs()[0];
        out.components
            .get(i * out.joints..(i + 1) * out.joints)
            .unwrap_or(&[])
    }
}

/// Instance `i`'s place on a square grid 2 m apart (the GPU path uses the same).
pub fn grid(i: usize) -> Affine3A {
    let side = 100;
    Affine3A::from_translation(Vec3::new(
        (i % side) as f32 * 2.0,
        0.0,
        (i / side) as f32 * 2.0,
    ))
}
