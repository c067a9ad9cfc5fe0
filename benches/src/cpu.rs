//! The CPU reference over a crowd, on one thread or over rayon, in two passes per frame:
//! pose (each instance's program and FK, into a flat array of component transforms) and skin
//! (each instance's palette, then linear blend skinning of its meshes into per-thread scratch).
//!
//! Parallel passes split the instances into one contiguous block per rayon thread, each with its
//! own [`Evaluator`] and scratch made once, so a frame allocates nothing (ozz's one
//! sampling context per thread).

use glam::{Affine3A, Vec3};
use rayon::prelude::*;
use throng_cpu_ref::palette::build_palette;
use throng_cpu_ref::skinning::skin_mesh;
use throng_cpu_ref::{Assets, Evaluator, Program, ProgramLimits};

use crate::{BenchError, Subject};

/// Outputs and per-thread scratch for `n` instances of one subject.
pub struct CpuCrowd {
    joints: usize,
    /// `components[i * joints + j]`: instance `i`'s component transforms after the pose pass.
    components: Vec<Affine3A>,
    workers: Vec<Worker>,
}

/// One thread's evaluator and skinning scratch.
struct Worker {
    evaluator: Evaluator,
    palette: Vec<Affine3A>,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
}

impl CpuCrowd {
    /// Room for `n` instances and `threads` workers (at least one).
    pub fn new(subject: &Subject, n: usize, threads: usize) -> CpuCrowd {
        let joints = subject.joints();
        let widest_mesh = subject.meshes().map(|m| m.positions.len()).max().unwrap_or(0);
        let workers = (0..threads.max(1))
            .map(|_| Worker {
                evaluator: Evaluator::new(ProgramLimits::default(), joints, 0),
                palette: vec![Affine3A::IDENTITY; subject.palette_len()],
                positions: vec![Vec3::ZERO; widest_mesh],
                normals: vec![Vec3::ZERO; widest_mesh],
            })
            .collect();
        CpuCrowd {
            joints,
            components: vec![Affine3A::IDENTITY; n * joints],
            workers,
        }
    }

    /// Component transforms of instance `i` after the last pose pass.
    pub fn components(&self, i: usize) -> &[Affine3A] {
        self.components
            .get(i * self.joints..(i + 1) * self.joints)
            .unwrap_or(&[])
    }

    /// Pose pass on the calling thread.
    pub fn pose(&mut self, subject: &Subject, programs: &[Program]) -> Result<(), BenchError> {
        let assets = assets(subject)?;
        let (worker, components) = (&mut self.workers[0], &mut self.components[..]);
        pose_block(subject, &assets, worker, programs, components, 0)
    }

    /// Pose pass with one contiguous block of instances per worker, over rayon.
    pub fn pose_parallel(&mut self, subject: &Subject, programs: &[Program]) -> Result<(), BenchError> {
        let assets = assets(subject)?;
        let block = programs.len().div_ceil(self.workers.len()).max(1);
        self.workers
            .par_iter_mut()
            .zip(self.components.par_chunks_mut(block * self.joints.max(1)))
            .zip(programs.par_chunks(block))
            .enumerate()
            .try_for_each(|(b, ((worker, components), programs))| {
                pose_block(subject, &assets, worker, programs, components, b * block)
            })
    }

    /// Skin pass on the calling thread (nothing without a skin).
    pub fn skin(&mut self, subject: &Subject) {
        skin_block(subject, &mut self.workers[0], &self.components, self.joints);
    }

    /// Skin pass with one contiguous block of instances per worker, over rayon.
    pub fn skin_parallel(&mut self, subject: &Subject) {
        let n = self.components.len() / self.joints.max(1);
        let block = n.div_ceil(self.workers.len()).max(1);
        let joints = self.joints;
        self.workers
            .par_iter_mut()
            .zip(self.components.par_chunks(block * joints.max(1)))
            .for_each(|(worker, components)| skin_block(subject, worker, components, joints));
    }
}

fn assets(subject: &Subject) -> Result<Assets<'_>, BenchError> {
    subject.assets().ok_or_else(|| BenchError::Unusable {
        subject: subject.name.clone(),
        why: format!("skeleton {} is missing", subject.skeleton),
    })
}

/// Runs `programs` (instances `first ..`) and stores each component pose in `components`.
fn pose_block(
    subject: &Subject,
    assets: &Assets,
    worker: &mut Worker,
    programs: &[Program],
    components: &mut [Affine3A],
    first: usize,
) -> Result<(), BenchError> {
    let joints = assets.skeleton.joint_count().max(1);
    for (i, (program, out)) in programs.iter().zip(components.chunks_mut(joints)).enumerate() {
        worker
            .evaluator
            .run(program, assets)
            .map_err(|source| BenchError::Program {
                subject: subject.name.clone(),
                instance: first + i,
                source,
            })?;
        for (o, c) in out.iter_mut().zip(worker.evaluator.component()) {
            *o = *c;
        }
    }
    Ok(())
}

/// Builds each instance's palette from `components` and skins the subject's meshes with it.
fn skin_block(subject: &Subject, worker: &mut Worker, components: &[Affine3A], joints: usize) {
    let Some(skin) = subject.skin.and_then(|k| subject.package.skins.get(k as usize)) else {
        return;
    };
    for pose in components.chunks(joints.max(1)) {
        build_palette(skin, pose, &mut worker.palette);
        for mesh in subject.meshes() {
            skin_mesh(mesh, &worker.palette, &mut worker.positions, &mut worker.normals);
            std::hint::black_box((&worker.positions, &worker.normals));
        }
    }
}
