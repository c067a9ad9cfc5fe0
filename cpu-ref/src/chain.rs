//! A pose program evaluated on some joints only: the joints of gameplay sockets and their
//! ancestors (DESIGN.md §5). The ops are those of the [`crate::interpreter`] with the same
//! per-joint functions and FK, run on those joints instead of the whole skeleton, each joint
//! once however many sockets hang below it: sockets cost the joints they need, not the
//! skeleton's.
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
use crate::skeleton::{Skeleton, NO_PARENT};
use crate::transform::Trs;

/// Registers and component transforms for the chains of some target joints, merged.
#[derive(Clone, Debug)]
pub struct ChainEvaluator {
    limits: ProgramLimits,
    /// The targets and all their ancestors, ascending (so each parent before its children).
    chain: Vec<usize>,
    /// Per entry of `chain`, its parent's entry, or [`NO_PARENT`] for a root.
    parents: Vec<u32>,
    /// Per target, in the order given, its entry in `chain`.
    targets: Vec<usize>,
    /// `limits.registers()` registers of `chain.len()` joints each.
    registers: Vec<Trs>,
    /// Component (model-space) transforms of `chain`, as the last `ToComponent` left them.
    component: Vec<Affine3A>,
}

/// Some clips sampled at time 0 on a chain's joints, once: the additive references a program
/// samples on every run ([`ChainEvaluator::run_with`]). Sampling is a pure function of the clip,
/// the skeleton's rest pose, the joint and the time, so a run on the same assets that copies
/// these is bit for bit one that samples them.
#[derive(Clone, Debug, Default)]
pub struct FirstSamples {
    /// The chain they were sampled on (a run on another chain ignores them).
    chain: Vec<usize>,
    clips: Vec<u32>,
    /// A run of the chain's joints per clip, in `clips`' order.
    poses: Vec<Trs>,
}

impl FirstSamples {
    /// Clip `clip`'s pose at time 0 on the chain, if these samples hold it.
    fn pose(&self, clip: u32) -> Option<&[Trs]> {
        let k = self.clips.iter().position(|&c| c == clip)?;
        let n = self.chain.len();
        self.poses.get(k * n..(k + 1) * n)
    }
}

impl ChainEvaluator {
    /// An evaluator of the chains of `targets` in `skeleton` for programs within `limits`;
    /// `None` when the skeleton lacks one of them.
    pub fn new(skeleton: &Skeleton, targets: &[usize], limits: ProgramLimits) -> Option<Self> {
        let joints = skeleton.joint_count();
        let mut needed = vec![false; joints];
        for &target in targets {
            let mut j = target;
            *needed.get_mut(j)? = true;
            // Parents come before their children (Skeleton::new checks), so this ends.
            while let Some(&p) = skeleton.parents.get(j).filter(|&&p| (p as usize) < j) {
                j = p as usize;
                needed[j] = true;
            }
        }
        let chain: Vec<usize> = (0..joints).filter(|&j| needed[j]).collect();
        let mut entry = vec![NO_PARENT; joints];
        for (k, &j) in chain.iter().enumerate() {
            entry[j] = k as u32;
        }
        let parents = chain
            .iter()
            .map(|&j| match skeleton.parents[j] {
                p if (p as usize) < j => entry[p as usize],
                _ => NO_PARENT,
            })
            .collect();
        let targets = targets.iter().map(|&t| entry[t] as usize).collect();
        Some(ChainEvaluator {
            limits,
            registers: vec![Trs::IDENTITY; limits.registers() * chain.len()],
            component: vec![Affine3A::IDENTITY; chain.len()],
            chain,
            parents,
            targets,
        })
    }

    /// The joints evaluated: the targets and their ancestors, ascending.
    pub fn chain(&self) -> &[usize] {
        &self.chain
    }

    /// The chain's poses at time 0 of `clips` of `assets` (those `assets` lacks left out), for
    /// [`ChainEvaluator::run_with`] on the same assets.
    pub fn first_samples(&self, assets: &Assets, clips: &[u32]) -> FirstSamples {
        let mut first = FirstSamples {
            chain: self.chain.clone(),
            ..FirstSamples::default()
        };
        for &c in clips {
            let Some(clip) = assets
                .clips
                .get(c as usize)
                .filter(|_| !first.clips.contains(&c))
            else {
                continue;
            };
            let start = first.poses.len();
            first.poses.resize(start + self.chain.len(), Trs::IDENTITY);
            sample_joints(
                clip,
                assets.skeleton,
                &self.chain,
                0.0,
                &mut first.poses[start..],
            );
            first.clips.push(c);
        }
        first
    }

    /// Validates `program` and writes each target's component (model-space) transform into
    /// `out`, in the order [`ChainEvaluator::new`] was given them (as many as `out` holds).
    /// History ops are not evaluated (module doc).
    pub fn run(
        &mut self,
        program: &Program,
        assets: &Assets,
        out: &mut [Affine3A],
    ) -> Result<(), ProgramError> {
        self.run_with(program, assets, &FirstSamples::default(), out)
    }

    /// [`ChainEvaluator::run`], taking a sample at time 0 of a clip `first` holds from it
    /// (`first` made by [`ChainEvaluator::first_samples`] of this chain from these `assets`: the
    /// caller's to keep; samples of another chain are ignored).
    pub fn run_with(
        &mut self,
        program: &Program,
        assets: &Assets,
        first: &FirstSamples,
        out: &mut [Affine3A],
    ) -> Result<(), ProgramError> {
        let limits = ProgramLimits {
            history_slots: usize::MAX,
            ..self.limits
        };
        program.validate(&limits, assets)?;
        if let Some(&last) = self
            .chain
            .last()
            .filter(|&&j| j >= assets.skeleton.joint_count())
        {
            return Err(ProgramError::Capacity {
                what: "skeleton joints",
                count: last + 1,
                limit: assets.skeleton.joint_count(),
            });
        }
        self.component.fill(Affine3A::IDENTITY);
        let none = FirstSamples::default();
        let first = if first.chain == self.chain {
            first
        } else {
            &none
        };
        for o in &program.ops {
            if o.code == op::TO_COMPONENT {
                self.compose(o.a);
            } else {
                self.execute(o, &program.weights, assets, first);
            }
        }
        for (o, &k) in out.iter_mut().zip(&self.targets) {
            *o = self.component[k];
        }
        Ok(())
    }

    /// FK of register `r` on the chain, as `fk::local_to_component` computes it.
    fn compose(&mut self, r: u32) {
        let start = r as usize * self.chain.len();
        let local = &self.registers[start..start + self.chain.len()];
        for (k, (x, &p)) in local.iter().zip(&self.parents).enumerate() {
            let m = x.to_affine();
            self.component[k] = if p == NO_PARENT {
                m
            } else {
                self.component[p as usize] * m
            };
        }
    }

    /// One validated local-pose op on the chain (module doc for the ops skipped), with the
    /// interpreter's per-joint functions and its order of arithmetic.
    fn execute(
        &mut self,
        o: &crate::PoseOp,
        weights: &[f32],
        assets: &Assets,
        first: &FirstSamples,
    ) {
        let n = self.chain.len();
        let rest = &assets.skeleton.rest;
        let at = |r: u32, k: usize| r as usize * n + k;
        match o.code {
            op::SAMPLE => {
                let d = at(o.dst, 0);
                let out = &mut self.registers[d..d + n];
                let sampled = (o.time.to_bits() == 0.0f32.to_bits())
                    .then(|| first.pose(o.a))
                    .flatten();
                if let Some(pose) = sampled {
                    out.copy_from_slice(pose);
                } else if let Some(clip) = assets.clips.get(o.a as usize) {
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
