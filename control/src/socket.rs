//! Gameplay sockets, every tick (docs/state-tree.md, "Sockets"): each socket a tree declares is
//! evaluated on the CPU from the instance's compiled program, on the sockets' joints and their
//! ancestors alone, each once ([`throng_cpu_ref::chain`]), whatever the instance's visibility
//! or LOD: the crowd returns them beside root motion as the tick's simulation output.
//!
//! A socket's transform is in the instance's component (model) frame, the frame root motion
//! moves: the joint's component transform times the socket's offset. It is the pose without
//! inertialization offsets (a presentation effect, whose history the drawing evaluator holds).

use glam::Affine3A;
use throng_cpu_ref::chain::{ChainEvaluator, FirstSamples};
use throng_cpu_ref::{PoseOp, Program, ProgramError};

use crate::instance::Controller;
use crate::tree::LayerBlend;

/// The sockets' joints and their ancestors, each evaluated once, and the program copy they read.
#[derive(Clone, Debug)]
pub struct SocketEvaluator {
    /// `None` when the tree declares no sockets.
    chains: Option<ChainEvaluator>,
    /// The additive layers' clips at time 0 on the chains: the references their programs sample
    /// every tick (`crate::program`), sampled once.
    first: FirstSamples,
    program: Program,
}

impl SocketEvaluator {
    /// An evaluator for `ctl`'s sockets.
    pub fn new(ctl: &Controller) -> Self {
        let limits = ctl.limits();
        let joints: Vec<usize> = ctl.tree.sockets.iter().map(|s| s.joint as usize).collect();
        let chains = ctl
            .package
            .skeletons
            .get(ctl.tree.skeleton as usize)
            .filter(|_| !joints.is_empty())
            .and_then(|skeleton| ChainEvaluator::new(skeleton, &joints, limits));
        let additive: Vec<u32> = (ctl.tree.regions.iter())
            .filter(|r| r.blend == LayerBlend::Additive)
            .flat_map(|r| r.states.iter().flat_map(|s| s.producer.clips()))
            .copied()
            .collect();
        let first = match (&chains, ctl.package.assets(ctl.tree.skeleton)) {
            (Some(chains), Some(assets)) => chains.first_samples(&assets, &additive),
            _ => FirstSamples::default(),
        };
        SocketEvaluator {
            chains,
            first,
            program: Program {
                ops: Vec::with_capacity(limits.max_ops),
                weights: Vec::with_capacity(limits.max_weights),
            },
        }
    }

    /// Writes the transform of every socket of `ctl` for the program (`ops`, `weights`) into
    /// `out` (one per socket, in the tree's order). Allocates nothing for programs within the
    /// controller's limits.
    pub fn run(
        &mut self,
        ctl: &Controller,
        ops: &[PoseOp],
        weights: &[f32],
        out: &mut [Affine3A],
    ) -> Result<(), ProgramError> {
        let Some(chains) = &mut self.chains else {
            return Ok(());
        };
        let Some(assets) = ctl.package.assets(ctl.tree.skeleton) else {
            return Ok(());
        };
        self.program.ops.clear();
        self.program.ops.extend_from_slice(ops);
        self.program.weights.clear();
        self.program.weights.extend_from_slice(weights);
        chains.run_with(&self.program, &assets, &self.first, out)?;
        for (o, socket) in out.iter_mut().zip(&ctl.tree.sockets) {
            *o *= Affine3A::from_translation(socket.offset);
        }
        Ok(())
    }
}
