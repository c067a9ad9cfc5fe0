//! The scalar pose-program interpreter: the reference the GPU kernel is held to (DESIGN.md §4).
//!
//! ozz-style: the caller owns an [`Evaluator`] sized once for a skeleton and a [`ProgramLimits`];
//! [`Evaluator::run`] validates a program, then evaluates it without allocating. Ops before
//! `ToComponent` are per joint: each op's math is one small function of one joint's transforms
//! ([`blend_joint`], [`override_joint`], [`additive_joint`], [`capture_joint`],
//! [`inertialize_joint`]) that the WGSL kernel mirrors.
//!
//! Inertialization history is the caller's ([`History`]): a run reads it, and a `Capture` writes
//! the evaluator's own capture buffer, which `Inertialize` ops after it read and which the caller
//! commits to the history after the run ([`Evaluator::captured`]), so many evaluators can read one
//! history at once.

use glam::{Affine3A, Quat, Vec3, Vec4};

use crate::clip::sample_clip;
use crate::fk::local_to_component;
use crate::inertialize::{capture_joint, inertialize_joint, History, JointOffset};
use crate::palette::build_palette;
use crate::program::{op, Assets, NO_MASK};
use crate::scalar::{CurveRegisters, CurveValue};
use crate::transform::{nlerp_shortest, slerp_shortest};
use crate::{PoseOp, Program, ProgramError, ProgramLimits, SkeletonLod, Trs};

/// A Blend whose weights sum below this gives the rest pose.
pub const BLEND_EPSILON: f32 = 1e-6;

/// Caller-owned scratch and outputs of program evaluation for skeletons of up to `joints` joints.
#[derive(Clone, Debug)]
pub struct Evaluator {
    limits: ProgramLimits,
    /// Joint capacity: the stride of a register in `registers`.
    capacity: usize,
    /// Joint count of the skeleton of the last successful run.
    joints: usize,
    /// Register `r` is `registers[r * capacity ..][.. joints]`.
    registers: Vec<Trs>,
    component: Vec<Affine3A>,
    palette: Vec<Affine3A>,
    /// Entries of `palette` written by the last run.
    palette_len: usize,
    /// Offsets the last run's `Capture` wrote (one per joint), and their slot.
    captured: Vec<JointOffset>,
    captured_slot: Option<u32>,
    /// The scalar curves of the last run's skeleton, as many as the capacity holds.
    curves: CurveRegisters,
}

impl Evaluator {
    /// Scratch for programs within `limits` on skeletons of up to `joints` joints, writing up to
    /// `palette` palette entries (the sum over a program's `Palette` ops). Allocates once. It
    /// evaluates joints only: no scalar curves ([`Evaluator::with_curves`]).
    pub fn new(limits: ProgramLimits, joints: usize, palette: usize) -> Self {
        Self::with_curves(limits, joints, palette, 0)
    }

    /// [`Evaluator::new`] evaluating the scalar curves ([`crate::scalar`]) of skeletons with up
    /// to `channels` curve channels (a run on a skeleton with more is refused); 0 evaluates none.
    pub fn with_curves(
        limits: ProgramLimits,
        joints: usize,
        palette: usize,
        channels: usize,
    ) -> Self {
        Evaluator {
            limits,
            capacity: joints,
            joints: 0,
            registers: vec![Trs::IDENTITY; limits.registers() * joints],
            component: vec![Affine3A::IDENTITY; joints],
            palette: vec![Affine3A::IDENTITY; palette],
            palette_len: 0,
            captured: vec![JointOffset::ZERO; joints],
            captured_slot: None,
            curves: CurveRegisters::new(limits.registers(), channels),
        }
    }

    /// Validates `program` against `assets` and this evaluator's capacities, then evaluates it.
    /// On error nothing is evaluated and the outputs of the previous run are kept. A program that
    /// names a history slot needs [`Evaluator::run_with_history`].
    pub fn run(&mut self, program: &Program, assets: &Assets) -> Result<(), ProgramError> {
        self.run_with_history(program, assets, &mut History::default())
    }

    /// [`Evaluator::run`] with inertialization `history`, which must hold the slot the program
    /// names for this skeleton; a `Capture` is committed to it.
    pub fn run_with_history(
        &mut self,
        program: &Program,
        assets: &Assets,
        history: &mut History,
    ) -> Result<(), ProgramError> {
        self.fits(assets)?;
        program.validate(&self.limits, assets)?;
        let entries: usize = program
            .ops
            .iter()
            .filter(|o| o.code == op::PALETTE)
            .map(|o| assets.skins.get(o.a as usize).map_or(0, |s| s.joints.len()))
            .sum();
        if entries > self.palette.len() {
            return Err(ProgramError::Capacity {
                what: "palette entries",
                count: entries,
                limit: self.palette.len(),
            });
        }
        if let Some(slot) = program.history_slot() {
            let joints = assets.skeleton.joint_count();
            if slot as usize >= history.slots() || history.joints() < joints {
                return Err(ProgramError::HistorySlot {
                    op: program.ops.iter().position(|o| o.c == slot).unwrap_or(0),
                    slot,
                    slots: if history.joints() < joints {
                        0
                    } else {
                        history.slots()
                    },
                });
            }
        }
        self.evaluate(program, assets, None, history, true);
        if let Some((slot, offsets)) = self.captured() {
            if let Some(to) = history.slot_mut(slot) {
                to[..offsets.len()].copy_from_slice(offsets);
            }
        }
        Ok(())
    }

    /// The offsets the last run captured (one per joint) and the slot they belong in.
    pub fn captured(&self) -> Option<(u32, &[JointOffset])> {
        Some((self.captured_slot?, &self.captured[..self.joints]))
    }

    /// The skeleton of `assets` fits this evaluator.
    pub(crate) fn fits(&self, assets: &Assets) -> Result<(), ProgramError> {
        let joints = assets.skeleton.joint_count();
        if joints > self.capacity {
            return Err(ProgramError::Capacity {
                what: "joints",
                count: joints,
                limit: self.capacity,
            });
        }
        let channels = assets.curves.range(assets.skeleton_index).len();
        let capacity = self.curves.capacity();
        if capacity > 0 && channels > capacity {
            return Err(ProgramError::Capacity {
                what: "curve channels",
                count: channels,
                limit: capacity,
            });
        }
        Ok(())
    }

    /// Evaluates a program that [`Program::validate`] accepted for `assets` (whose skeleton
    /// [`Evaluator::fits`]); `Palette` ops only with `palettes` (their entries must fit). A slot
    /// missing from `history` reads as no offset. With `lod` (a level of the skeleton, used
    /// only by programs without history), `ToComponent` takes the level's pose for the joints
    /// it drops (`crate::lod`); ops are per joint, so the retained joints are what running the
    /// program on them alone gives.
    pub(crate) fn evaluate(
        &mut self,
        program: &Program,
        assets: &Assets,
        lod: Option<&SkeletonLod>,
        history: &History,
        palettes: bool,
    ) {
        self.joints = assets.skeleton.joint_count();
        // `run` refuses a skeleton with more channels than a non-zero capacity; an evaluator of
        // no capacity evaluates none, and no caller gets an index past the registers.
        let channels = assets.curves.range(assets.skeleton_index);
        self.curves
            .select(channels.start, channels.map(|id| id as u32));
        self.palette_len = 0;
        self.captured_slot = None;
        for o in &program.ops {
            match o.code {
                op::PALETTE if !palettes => {}
                op::CAPTURE => self.capture(o),
                op::INERTIALIZE => self.inertialize(o, history),
                _ => self.execute(o, &program.weights, assets, lod),
            }
        }
    }

    fn capture(&mut self, o: &PoseOp) {
        let (regs, n) = (&self.registers, self.capacity);
        for (j, out) in self.captured[..self.joints].iter_mut().enumerate() {
            let r = |reg: u32| &regs[reg as usize * n + j];
            *out = capture_joint(r(o.a), r(o.b), r(o.dst), r(o.d), o.weight);
        }
        self.captured_slot = Some(o.c);
    }

    /// Offsets after this run's `Capture` of the same slot, else `history`'s.
    fn inertialize(&mut self, o: &PoseOp, history: &History) {
        let offsets = if self.captured_slot == Some(o.c) {
            &self.captured[..]
        } else {
            history.slot(o.c).unwrap_or(&[])
        };
        let start = o.dst as usize * self.capacity;
        let dst = &mut self.registers[start..start + self.joints];
        for (x, offset) in dst.iter_mut().zip(offsets) {
            *x = inertialize_joint(x, offset, o.time, o.weight);
        }
    }

    /// The final local pose of the last run: the register `program`'s `ToComponent` converts.
    pub fn final_local(&self, program: &Program) -> Option<&[Trs]> {
        self.local(program.final_register()?)
    }

    /// Local pose in `register` after the last run (one entry per joint), if it is a register.
    pub fn local(&self, register: u32) -> Option<&[Trs]> {
        let start = (register as usize).checked_mul(self.capacity)?;
        self.registers.get(start..start + self.joints)
    }

    /// The curve values of the last run's `ToComponent` register, clamped to each channel's
    /// range: one per curve channel of the skeleton, in id order ([`crate::scalar`]).
    pub fn curves(&self) -> &[f32] {
        self.curves.outputs()
    }

    /// Curves (value and cover) in `register` after the last run, one per channel.
    pub fn curve_register(&self, register: u32) -> Option<&[CurveValue]> {
        self.curves.register(register)
    }

    /// Component (skeleton-space) transforms written by the last `ToComponent`.
    pub fn component(&self) -> &[Affine3A] {
        &self.component[..self.joints]
    }

    /// Palettes written by the last run, concatenated in the order of its `Palette` ops.
    pub fn palette(&self) -> &[Affine3A] {
        &self.palette[..self.palette_len]
    }

    /// Index of joint `j` of register `r` in `registers`.
    fn at(&self, r: u32, j: usize) -> usize {
        r as usize * self.capacity + j
    }

    fn register_mut(&mut self, r: u32) -> &mut [Trs] {
        let start = self.at(r, 0);
        &mut self.registers[start..start + self.joints]
    }

    /// Runs one validated op.
    fn execute(&mut self, o: &PoseOp, weights: &[f32], assets: &Assets, lod: Option<&SkeletonLod>) {
        let skeleton = assets.skeleton;
        match o.code {
            op::REST => {
                for (out, rest) in self.register_mut(o.dst).iter_mut().zip(&skeleton.rest) {
                    *out = *rest;
                }
                self.curves.op(o, weights, assets);
            }
            op::SAMPLE => {
                if let Some(clip) = assets.clips.get(o.a as usize) {
                    sample_clip(clip, skeleton, o.time, self.register_mut(o.dst));
                    self.curves.op(o, weights, assets);
                }
            }
            op::BLEND => {
                let w = weights
                    .get(o.c as usize..(o.c as usize).saturating_add(o.b as usize))
                    .unwrap_or(&[]);
                self.blend(o.dst, o.a, w, &skeleton.rest);
                self.curves.op(o, weights, assets);
            }
            op::OVERRIDE => {
                let mask = mask_weights(assets, o.c);
                for j in 0..self.joints {
                    let a = o.weight * joint_weight(mask, j);
                    let (d, s) = (self.at(o.dst, j), self.at(o.a, j));
                    self.registers[d] = override_joint(&self.registers[d], &self.registers[s], a);
                }
                self.curves.op(o, weights, assets);
            }
            op::ADDITIVE => {
                let mask = mask_weights(assets, o.c);
                for j in 0..self.joints {
                    let w = o.weight * joint_weight(mask, j);
                    let (d, s, r) = (self.at(o.dst, j), self.at(o.a, j), self.at(o.b, j));
                    let regs = &self.registers;
                    self.registers[d] = additive_joint(&regs[d], &regs[s], &regs[r], w);
                }
                self.curves.op(o, weights, assets);
            }
            op::TO_COMPONENT => {
                if let Some(lod) = lod {
                    let local = self.register_mut(o.a);
                    for (j, (x, held)) in local.iter_mut().zip(lod.pose()).enumerate() {
                        if !lod.retains(j) {
                            *x = *held;
                        }
                    }
                }
                let start = self.at(o.a, 0);
                let local = &self.registers[start..start + self.joints];
                local_to_component(skeleton, local, &mut self.component[..self.joints]);
                self.curves.op(o, weights, assets);
            }
            op::PALETTE => {
                if let Some(skin) = assets.skins.get(o.a as usize) {
                    let out =
                        &mut self.palette[self.palette_len..self.palette_len + skin.joints.len()];
                    build_palette(skin, &self.component[..self.joints], out);
                    self.palette_len += skin.joints.len();
                }
            }
            _ => {}
        }
    }

    /// Blend of registers `first ..` with `weights` into `dst`, per joint; rest when the weights
    /// sum below [`BLEND_EPSILON`].
    fn blend(&mut self, dst: u32, first: u32, weights: &[f32], rest: &[Trs]) {
        let sum: f32 = weights.iter().sum();
        for (j, rest) in rest.iter().enumerate().take(self.joints) {
            let pose = if sum < BLEND_EPSILON {
                *rest
            } else {
                let inputs = (first..).map(|r| &self.registers[self.at(r, j)]);
                blend_joint(inputs.zip(weights.iter().map(|w| w / sum)), rest)
            };
            let d = self.at(dst, j);
            self.registers[d] = pose;
        }
    }
}

/// Joint `j`'s weight in `mask`: 1 without a mask, 0 past its end (validation rules that out).
pub(crate) fn joint_weight(mask: Option<&[f32]>, j: usize) -> f32 {
    mask.map_or(1.0, |m| m.get(j).copied().unwrap_or(0.0))
}

/// The weights of mask `c`, or `None` for [`NO_MASK`] (every joint weighs 1).
pub(crate) fn mask_weights<'a>(assets: &Assets<'a>, c: u32) -> Option<&'a [f32]> {
    if c == NO_MASK {
        return None;
    }
    Some(assets.masks.get(c as usize).map_or(&[][..], |m| &m.weights))
}

/// The Blend op's accumulation of translations and rotations: weighted sums in input order,
/// each rotation (as a 4-vector) flipped into the first one's hemisphere. Shared with control's
/// root-motion blend, so both align rotations the same way.
#[derive(Clone, Copy, Debug, Default)]
pub struct AlignedSum {
    pub translation: Vec3,
    /// Not normalised.
    pub rotation: Vec4,
    first: Option<Vec4>,
}

impl AlignedSum {
    #[inline]
    pub fn add(&mut self, translation: Vec3, rotation: Quat, w: f32) {
        let q = Vec4::from(rotation);
        let first = *self.first.get_or_insert(q);
        let q = if first.dot(q) < 0.0 { -q } else { q };
        self.translation += translation * w;
        self.rotation += q * w;
    }
}

/// Blend of one joint's `inputs` with weights already normalised to sum 1: accumulate t, q and
/// s in input order with each q flipped into the first input's hemisphere ([`AlignedSum`]), then
/// normalise q once. A q sum of (near) zero length falls back to `rest`'s rotation.
pub fn blend_joint<'a>(inputs: impl IntoIterator<Item = (&'a Trs, f32)>, rest: &Trs) -> Trs {
    let mut sum = AlignedSum::default();
    let mut s = Vec3::ZERO;
    for (x, w) in inputs {
        sum.add(x.translation, x.rotation, w);
        s += x.scale * w;
    }
    let q = sum.rotation;
    let rotation = if q.length_squared() > 1e-12 {
        Quat::from_vec4(q.normalize())
    } else {
        rest.rotation
    };
    Trs {
        translation: sum.translation,
        rotation,
        scale: s,
    }
}

/// Override of one joint: `dst` moves toward `src` by `a` (lerp t and s, nlerp-shortest q).
pub fn override_joint(dst: &Trs, src: &Trs, a: f32) -> Trs {
    Trs {
        translation: dst.translation.lerp(src.translation, a),
        rotation: nlerp_shortest(dst.rotation, src.rotation, a),
        scale: dst.scale.lerp(src.scale, a),
    }
}

/// Additive of one joint: `base` plus `w` times the difference of `src` from `reference`:
/// `t = tB + w (tA - tR)`, `q = normalize(qB * slerp_shortest(1, inverse(qR) qA, w))`,
/// `s = sB * lerp(1, sA / sR, w)`.
pub fn additive_joint(base: &Trs, src: &Trs, reference: &Trs, w: f32) -> Trs {
    let dq = reference.rotation.inverse() * src.rotation;
    let rs = src.scale / reference.scale;
    Trs {
        translation: base.translation + (src.translation - reference.translation) * w,
        rotation: (base.rotation * slerp_shortest(Quat::IDENTITY, dq, w)).normalize(),
        scale: base.scale * Vec3::ONE.lerp(rs, w),
    }
}
