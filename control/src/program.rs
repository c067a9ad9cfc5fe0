//! Compiling an instance's active states and layers into a bounded pose program (DESIGN.md §4).
//!
//! Layout, region by region:
//! - base: its samples in registers `0..n` and `Blend` into 0 (one sample: `Sample` into 0; none:
//!   `Rest`); an empty base state is rest;
//! - override layer: samples in `1..1+n`, `Blend` into 1, `Override(0, 1, weight * presence,
//!   mask)`, where presence is the weight the layer's states hold (a crossfade from an empty
//!   state fades the layer in);
//! - additive layer: as override into 1, then each clip's first sample (the additive reference)
//!   in `2..`, `Blend` into 2, `Additive(0, 1, 2, weight * presence, mask)`;
//! - then `ToComponent(0)` and, with a skin, `Palette(skin)`.
//!
//! An inertializing base region (docs/pose-program.md, "Inertialize"; history slot = instance
//! id): on the tick of its transition, the new pose into 0, the source now into 1 and one tick
//! earlier into 2 (each taking the offset it carried, if it interrupted an inertialization), the
//! new pose one tick earlier into 3, `Capture(0, 1, 2, 3)` over one tick and `Inertialize(0)` at
//! time 0; on later ticks of the decay, the new pose into 0 and `Inertialize(0)`.
//!
//! Shared samples are deduplicated: one `Sample` per distinct (clip, time) per blend, weights
//! summed; zero weights are dropped, and a layer with no weight emits nothing. The capacity is
//! declared up front from the tree ([`limits`]); compiling never exceeds it.

use throng_cpu_ref::program::op;
use throng_cpu_ref::{PoseOp, ProgramLimits};

use crate::instance::{Controller, FrozenSample, InertialSource, InstanceState, When, REST};
use crate::tree::{LayerBlend, Tree, FROZEN_SAMPLES, MAX_POINTS};

/// Most samples one region can contribute: both player banks, or a bank and a frozen pose.
fn region_samples(slots: usize) -> usize {
    (2 * slots).max(slots + FROZEN_SAMPLES)
}

/// The capacity any program of `tree` fits (with a final `Palette` when `skin`). Ops and
/// weights allow a sample per player; registers only the samples weighted at once
/// ([`crate::tree::Producer::most_weighted`], zero weights are dropped), which is what the GPU's fixed
/// register file is held to.
pub fn limits(tree: &Tree, skin: bool) -> ProgramLimits {
    let mut ops = 1 + skin as usize;
    let mut registers = 1;
    let mut weights = 0;
    for r in &tree.regions {
        let n = region_samples(r.slots as usize);
        let weighted = (r.states.iter())
            .map(|s| s.producer.most_weighted())
            .max()
            .unwrap_or(0)
            .max(1);
        let k = region_samples(weighted);
        let (o, reg, w) = match r.blend {
            LayerBlend::Base => (n + 1, k, n),
            LayerBlend::Override => (n + 2, k + 1, n),
            LayerBlend::Additive => (2 * n + 3, k + 2, 2 * n),
        };
        ops += o;
        registers = registers.max(reg);
        weights += w;
        if r.inertializes() {
            // The tick of the transition (no fade then, so the new pose is its leaf's `slots`
            // samples at most): source now and before (F each), the new pose one tick earlier,
            // two carried offsets, the capture and the inertialization, in registers 0..3 and
            // the samples of the last list above them.
            let (f, m) = (FROZEN_SAMPLES, (r.slots as usize).max(1));
            ops += 2 * (f + 1) + (m + 1) + 4;
            registers = registers.max(3 + weighted.max(f));
            weights += 2 * f + m;
        }
    }
    ProgramLimits {
        max_ops: ops,
        max_registers: registers,
        max_weights: weights,
        history_slots: 0,
    }
}

/// The origin of the ops no region wrote (`ToComponent`, `Palette`).
pub const NO_REGION: u16 = u16::MAX;

/// A program being written into fixed-size slices over the program they held before.
struct Writer<'a> {
    ops: &'a mut [PoseOp],
    weights: &'a mut [f32],
    n_ops: usize,
    n_weights: usize,
    /// Where to note each op's region, when asked ([`compile_explained`]).
    origins: Option<&'a mut [u16]>,
    region: u16,
    /// Where to write the program's values (`throng_cpu_ref::values` order), when asked.
    values: Option<&'a mut [f32]>,
    n_values: usize,
    /// Some op's static part differs from that of the op it replaced.
    changed: bool,
}

impl Writer<'_> {
    // Inlined: it runs for every op of every instance each tick, and a call's spills cost as
    // much as its body (callgrind: 875 instructions per instance-tick out of line).
    #[inline(always)]
    fn op(&mut self, op: PoseOp) {
        // The op's value (a sample's or inertialization's time, a layer's weight), and which
        // bits of its last eight bytes (weight, then time) are not that value.
        let (value, keep) = match op.code {
            op::SAMPLE | op::INERTIALIZE => (Some(op.time), u64::from(u32::MAX)),
            op::OVERRIDE | op::ADDITIVE => (Some(op.weight), !u64::from(u32::MAX)),
            _ => (None, u64::MAX),
        };
        let slot = &mut self.ops[self.n_ops];
        self.changed |= !same_static(slot, &op, keep);
        *slot = op;
        if let Some(origins) = &mut self.origins {
            origins[self.n_ops] = self.region;
        }
        self.n_ops += 1;
        if let Some(v) = value {
            self.value(v);
        }
    }

    #[inline(always)]
    fn value(&mut self, v: f32) {
        if let Some(values) = &mut self.values {
            values[self.n_values] = v;
            self.n_values += 1;
        }
    }

    /// Samples `list` into registers `first..` and blends them into `first`.
    // Inlined: called once or twice per region, each call mostly prologue (callgrind).
    #[inline(always)]
    fn blend(&mut self, first: u32, list: &[FrozenSample]) {
        for (k, x) in list.iter().enumerate() {
            let dst = first + k as u32;
            self.op(if x.clip == REST {
                PoseOp::rest(dst)
            } else {
                PoseOp::sample(dst, x.clip, x.time)
            });
        }
        if list.len() > 1 {
            self.op(PoseOp::blend(
                first,
                first,
                list.len() as u32,
                self.n_weights as u32,
            ));
            for x in list {
                self.weights[self.n_weights] = x.weight;
                self.n_weights += 1;
                self.value(x.weight);
            }
        }
    }
}

/// Whether ops `a` and `b` have the same static part: equal but for their values (a sample's
/// or inertialization's time, a layer's weight), as `throng_cpu_ref::values::same_static`
/// compares programs. `keep` masks the last eight bytes (weight, then time) to the bits that
/// are not a value. Four words compared at once, without a branch per field.
#[inline(always)]
fn same_static(a: &PoseOp, b: &PoseOp, keep: u64) -> bool {
    let (a, b) = (bytemuck::bytes_of(a), bytemuck::bytes_of(b));
    let word = |bytes: &[u8], k: usize| {
        u64::from_le_bytes(bytes[8 * k..8 * k + 8].try_into().unwrap_or_default())
    };
    let differ = (word(a, 0) ^ word(b, 0))
        | (word(a, 1) ^ word(b, 1))
        | (word(a, 2) ^ word(b, 2))
        | ((word(a, 3) ^ word(b, 3)) & keep);
    differ == 0
}

/// What [`write_program`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Written {
    pub ops: usize,
    pub weights: usize,
    /// Values written (0 unless asked).
    pub values: usize,
    /// Some op's static part differs from that of the op it replaced (not counting a change
    /// in the number of ops or weights, which the caller compares).
    pub changed: bool,
}

/// Where [`write_program`] writes: ops and weights (the last program's, which it replaces), and
/// optionally the values and each op's region.
pub(crate) struct Out<'a> {
    pub ops: &'a mut [PoseOp],
    pub weights: &'a mut [f32],
    pub values: Option<&'a mut [f32]>,
    pub origins: Option<&'a mut [u16]>,
}

/// Writes the pose program of `s` into `ops` and `weights` (at least [`limits`] long; the
/// controller's [`Controller::limits`]) and returns how many of each it wrote. `player_weights`
/// is scratch of one entry per player slot. Allocates nothing.
pub fn compile(
    ctl: &Controller,
    s: &InstanceState,
    player_weights: &mut [f32],
    ops: &mut [PoseOp],
    weights: &mut [f32],
) -> (usize, usize) {
    ctl.player_weights(s, player_weights);
    let mut lists = [FrozenSample::default(); 2 * LIST];
    let out = Out {
        ops,
        weights,
        values: None,
        origins: None,
    };
    let w = write_program(ctl, s, player_weights, &mut lists, out);
    (w.ops, w.weights)
}

/// [`compile`] with the player weights already those of `s` (as
/// [`Controller::player_weights`] writes them; a successful tick leaves them so), `lists` (at
/// least `2 * LIST` long) its working memory, writing the values too.
pub(crate) fn compile_weighed(
    ctl: &Controller,
    s: &InstanceState,
    player_weights: &[f32],
    lists: &mut [FrozenSample],
    out: Out,
) -> Written {
    write_program(ctl, s, player_weights, lists, out)
}

/// [`compile`], also writing into `origins` (as long as `ops`) the region each op came from
/// ([`NO_REGION`] for the final conversion and palette): the map `throng inspect --instance`
/// prints from ops back to the authored tree.
pub fn compile_explained(
    ctl: &Controller,
    s: &InstanceState,
    player_weights: &mut [f32],
    ops: &mut [PoseOp],
    weights: &mut [f32],
    origins: &mut [u16],
) -> (usize, usize) {
    ctl.player_weights(s, player_weights);
    let mut lists = [FrozenSample::default(); 2 * LIST];
    let out = Out {
        ops,
        weights,
        values: None,
        origins: Some(origins),
    };
    let w = write_program(ctl, s, player_weights, &mut lists, out);
    (w.ops, w.weights)
}

/// Room for two sample lists of one region (the region's own and its additive reference):
/// both player banks of the widest blend space, or a bank and a frozen pose.
pub(crate) const LIST: usize = 2 * MAX_POINTS + FROZEN_SAMPLES;

/// Writes the program; `lists` (at least `2 * LIST` long) is working memory.
fn write_program(
    ctl: &Controller,
    s: &InstanceState,
    player_weights: &[f32],
    lists: &mut [FrozenSample],
    out: Out,
) -> Written {
    let mut w = Writer {
        ops: out.ops,
        weights: out.weights,
        n_ops: 0,
        n_weights: 0,
        origins: out.origins,
        region: NO_REGION,
        values: out.values,
        n_values: 0,
        changed: false,
    };
    let (list, refs) = lists.split_at_mut(LIST);
    for (r, region) in ctl.tree.regions.iter().enumerate() {
        w.region = r as u16;
        let n = ctl.samples(s, r, player_weights, list, When::Now);
        let list = &list[..n];
        let presence: f32 = list.iter().map(|x| x.weight).sum();
        match region.blend {
            LayerBlend::Base if n == 0 => w.op(PoseOp::rest(0)),
            LayerBlend::Base => w.blend(0, list),
            _ if n == 0 || presence <= 0.0 || region.weight <= 0.0 => {}
            LayerBlend::Override => {
                w.blend(1, list);
                let mask = region.mask.unwrap_or(throng_cpu_ref::program::NO_MASK);
                w.op(with_curves(
                    PoseOp::overriding(0, 1, (region.weight * presence).min(1.0), mask),
                    region,
                ));
            }
            LayerBlend::Additive => {
                let m = reference(list, refs);
                if m == n && refs[..m].iter().zip(list).all(|(a, b)| a == b) {
                    // Every sample is its own first sample: the layer adds nothing.
                    continue;
                }
                w.blend(1, list);
                w.blend(2, &refs[..m]);
                let mask = region.mask.unwrap_or(throng_cpu_ref::program::NO_MASK);
                w.op(with_curves(
                    PoseOp::additive(0, 1, 2, (region.weight * presence).min(1.0), mask),
                    region,
                ));
            }
        }
        if region.blend == LayerBlend::Base {
            inertialize(ctl, s, r, player_weights, &mut w, refs);
        }
    }
    w.region = NO_REGION;
    w.op(PoseOp::to_component(0));
    if let Some(skin) = ctl.skin {
        w.op(PoseOp::palette(skin));
    }
    Written {
        ops: w.n_ops,
        weights: w.n_weights,
        values: w.n_values,
        changed: w.changed,
    }
}

/// The base region's inertialization ops after its pose is in register 0 (module doc);
/// `scratch` holds a sample list.
fn inertialize(
    ctl: &Controller,
    s: &InstanceState,
    r: usize,
    player_weights: &[f32],
    w: &mut Writer,
    scratch: &mut [FrozenSample],
) {
    let inertia = &s.inertia;
    if !inertia.active {
        return;
    }
    let slot = s.id;
    let duration = inertia.duration as f32;
    let Some(InertialSource {
        now,
        previous,
        now_len,
        previous_len,
        carried,
    }) = inertia.capture
    else {
        w.op(PoseOp::inertialize(
            0,
            slot,
            inertia.elapsed as f32,
            duration,
        ));
        return;
    };
    let dt = ctl.period as f32;
    for (reg, list, len, back) in [(1, &now, now_len, 0.0), (2, &previous, previous_len, dt)] {
        let list = &list[..len as usize];
        if list.is_empty() {
            w.op(PoseOp::rest(reg));
        } else {
            w.blend(reg, list);
        }
        if let Some((elapsed, d)) = carried {
            let at = (elapsed as f32 - back).max(0.0);
            w.op(PoseOp::inertialize(reg, slot, at, d as f32));
        }
    }
    let m = ctl.samples(s, r, player_weights, scratch, When::Previous);
    if m == 0 {
        w.op(PoseOp::rest(3));
    } else {
        w.blend(3, &scratch[..m]);
    }
    w.op(PoseOp::capture(0, 1, 2, 3, slot, dt));
    w.op(PoseOp::inertialize(0, slot, 0.0, duration));
}

/// A layer's op moving the curves of the region's curve selection, if it names one.
fn with_curves(op: PoseOp, region: &crate::tree::Region) -> PoseOp {
    region.curves.map_or(op, |s| op.with_curves(s))
}

/// The additive reference of `list`: each clip's first sample (time 0) with its weight, equal
/// clips merged. Returns how many it wrote.
fn reference(list: &[FrozenSample], out: &mut [FrozenSample]) -> usize {
    let mut m = 0;
    for x in list {
        if let Some(same) = out[..m].iter_mut().find(|y| y.clip == x.clip) {
            same.weight += x.weight;
        } else {
            out[m] = FrozenSample {
                clip: x.clip,
                time: 0.0,
                weight: x.weight,
            };
            m += 1;
        }
    }
    m
}

impl Controller {
    /// The capacity every program of this controller fits, declared up front.
    pub fn limits(&self) -> ProgramLimits {
        limits(&self.tree, self.skin.is_some())
    }
}
