//! A pose program evaluated on one joint chain only: a socket's joint and its ancestors
//! (gameplay sockets, DESIGN.md §5). The ops are those of the [`crate::interpreter`] with the
//! same per-joint functions, run on the chain's joints instead of the whole skeleton, so a
//! socket costs its chain's length, not the skeleton's.
//!
//! `Capture` and `Inertialize` are presentation: their offsets live with the evaluator that
//! draws the instance (the GPU's history), not with control. A chain evaluates the pose those
//! offsets decay toward, and `Palette` has nothing to write.

use glam::Affine3A;

use crate::clip::sample_joints;
use crate::interpreter::{
    additive_joint, blend_joint, joint_weight, mask_weights, override_joint, BLEND_EPSILON,
};
use crate::program::{op, Assets, Program, ProgramError, ProgramLimits};
use crate::skeleton::Skeleton;
use crate::transform::Trs;

/// Registers for one chain, and the chain root-first.
#[derive(Clone, Debug)]
pub struct ChainEvaluator {
    limits: ProgramLimits,
    /// The joint and its ancestors, root first.
    chain: Vec<usize>,
    /// `limits.registers()` registers of `chain.len()` joints each.
    registers: Vec<Trs>,
}

impl ChainEvaluator {
    /// An evaluator of `joint`'s chain in `skeleton` for programs within `limits`; `None` when
    /// the skeleton has no such joint.
    pub fn new(skeleton: &Skeleton, joint: usize, limits: ProgramLimits) -> Option<Self> {
        if joint >= skeleton.joint_count() {
            return None;
        }
        let mut chain = vec![joint];
        while let Some(&p) = skeleton.parents.get(*chain.last()?) {
            // Parents come before their children (Skeleton::new checks), so this ends.
            if (p as usize) >= *chain.last()? {
                break;
            }
            chain.push(p as usize);
        }
        chain.reverse();
        let registers = vec![Trs::IDENTITY; limits.registers() * chain.len()];
        Some(ChainEvaluator {
            limits,
            chain,
            registers,
        })
    }

    /// The chain, root first.
    pub fn chain(&self) -> &[usize] {
        &self.chain
    }

    /// Validates `program` and returns the chain joint's component (model-space) transform.
    /// History ops are not evaluated (module doc).
    pub fn run(&mut self, program: &Program, assets: &Assets) -> Result<Affine3A, ProgramError> {
        let limits = ProgramLimits {
            history_slots: usize::MAX,
            ..self.limits
        };
        program.validate(&limits, assets)?;
        if self
            .chain
            .last()
            .is_some_and(|&j| j >= assets.skeleton.joint_count())
        {
            return Err(ProgramError::Capacity {
                what: "skeleton joints",
                count: self.chain.last().copied().unwrap_or(0) + 1,
                limit: assets.skeleton.joint_count(),
            });
        }
        let mut component = Affine3A::IDENTITY;
        for o in &program.ops {
            if o.code == op::TO_COMPONENT {
                let start = o.a as usize * self.chain.len();
                component = self.registers[start..start + self.chain.len()]
                    .iter()
                    .fold(Affine3A::IDENTITY, |parent, local| {
                        parent * local.to_affine()
                    });
            } else {
                self.execute(o, &program.weights, assets);
            }
        }
        Ok(component)
    }

    /// One validated local-pose op on the chain (module doc for the ops skipped), with the
    /// interpreter's per-joint functions and its order of arithmetic.
    fn execute(&mut self, o: &crate::PoseOp, weights: &[f32], assets: &Assets) {
        let n = self.chain.len();
        let rest = &assets.skeleton.rest;
        let at = |r: u32, k: usize| r as usize * n + k;
        match o.code {
            op::SAMPLE => {
                if let Some(clip) = assets.clips.get(o.a as usize) {
                    let d = at(o.dst, 0);
                    let out = &mut self.registers[d..d + n];
                    sample_joints(clip, assets.skeleton, &self.chain, o.time, out);
                }
            }
            op::REST => {
                for (k, &j) in self.chain.iter().enumerate() {
                    self.registers[at(o.dst, k)] = rest[j];
                }
            }
            op::BLEND => {
                let w = weights
                    .get(o.c as usize..(o.c as usize).saturating_add(o.b as usize))
                    .unwrap_or(&[]);
                let sum: f32 = w.iter().sum();
                for (k, &j) in self.chain.iter().enumerate() {
                    self.registers[at(o.dst, k)] = if sum < BLEND_EPSILON {
                        rest[j]
                    } else {
                        let inputs = (o.a..).map(|r| &self.registers[at(r, k)]);
                        blend_joint(inputs.zip(w.iter().map(|w| w / sum)), &rest[j])
                    };
                }
            }
            op::OVERRIDE => {
                let mask = mask_weights(assets, o.c);
                for (k, &j) in self.chain.iter().enumerate() {
                    let a = o.weight * joint_weight(mask, j);
                    let (d, s) = (at(o.dst, k), at(o.a, k));
                    self.registers[d] = override_joint(&self.registers[d], &self.registers[s], a);
                }
            }
            op::ADDITIVE => {
                let mask = mask_weights(assets, o.c);
                for (k, &j) in self.chain.iter().enumerate() {
                    let w = o.weight * joint_weight(mask, j);
                    let (d, s, r) = (at(o.dst, k), at(o.a, k), at(o.b, k));
                    let regs = &self.registers;
                    self.registers[d] = additive_joint(&regs[d], &regs[s], &regs[r], w);
                }
            }
            _ => {}
        }
    }
}
