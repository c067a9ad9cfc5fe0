//! Scalar curves (DESIGN.md §5): named f32 channels a pose carries beside its joints (morph
//! weights, contact weights, correctives), sampled from clips and combined by the same program
//! ops as joints, each by its channel's [`Composition`].
//!
//! A package's [`Curves`] hold, per skeleton, its channels (the schema: default, range,
//! composition), the clips' tracks of them (uniform samples on the clip's own sample grid,
//! lerped between the two bracketing samples exactly as cooked translations are) and curve
//! selections (a weight per channel: which curves a layer touches, separate from joint masks).
//! A channel's id is its index in [`Curves::channels`]; programs of a skeleton carry that
//! skeleton's channels, in id order ([`Curves::range`]).
//!
//! Each register holds, per channel, a [`CurveValue`]: the value and its *cover*, how much of
//! the pose actually animates the channel (0 for the rest pose and for a clip without a track of
//! it, 1 for a clip with one, the weighted mix through blends). Cover gates layers: an override
//! or additive layer moves a channel only as far as its source animates it, so a layer whose clip
//! has no face curves leaves the face alone without a selection saying so.
//!
//! The ops, per channel (`a` a layer's weight times its selection's weight for the channel):
//!
//! | op | `blend`, `additive` | `override` | `max` / `min` |
//! |---|---|---|---|
//! | Rest | default, cover 0 | same | same |
//! | Sample | the track at the time, cover 1; default, cover 0 without a track | same | same |
//! | Blend (weights normalised) | Σ wᵢ vᵢ | the heaviest input with cover > 0 (first on ties) | the largest (smallest) vᵢ of inputs with wᵢ > 0 and cover > 0 |
//! | Override (`a' = a · cover(src)`) | `blend`: lerp(v, src, a'); `additive`: v + a' · src | src where a' > 0 | max (min) of v and src where a' > 0 |
//! | Additive (`a' = a · cover(src)`) | v + a' · (src − reference) | src where a' > 0 | max (min) of v and src where a' > 0 |
//!
//! Blends with weights summing below [`crate::interpreter::BLEND_EPSILON`] give the rest value.
//! Cover combines as `Σ wᵢ coverᵢ` in a blend and `c + (1 − c) · a'` in a layer. A program's
//! curve output is its final register's values (the register `ToComponent` converts), each
//! clamped to its channel's range. `Capture` and `Inertialize` leave curves alone: a curve
//! switches with its transition (no offset decays on it).

use thiserror::Error;

use crate::clip::Clip;
use crate::interpreter::BLEND_EPSILON;
use crate::program::{op, Assets, PoseOp};

/// How a channel's values combine in blends and layers (the table in the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Composition {
    /// Normalised base blend: blends average, override layers lerp, additive layers add a
    /// difference.
    Blend = 0,
    /// Ordered override: the last contributor wins (the heaviest in a blend).
    Override = 1,
    /// Contributions add: blends average, override layers add their value times their weight.
    Additive = 2,
    /// Explicit reducer: the largest contribution.
    Max = 3,
    /// Explicit reducer: the smallest contribution.
    Min = 4,
}

impl Composition {
    pub const ALL: [Composition; 5] = [
        Composition::Blend,
        Composition::Override,
        Composition::Additive,
        Composition::Max,
        Composition::Min,
    ];

    pub fn from_u32(code: u32) -> Option<Composition> {
        Composition::ALL.into_iter().find(|c| *c as u32 == code)
    }

    /// The name a tree, sidecar or report uses.
    pub fn name(self) -> &'static str {
        match self {
            Composition::Blend => "blend",
            Composition::Override => "override",
            Composition::Additive => "additive",
            Composition::Max => "max",
            Composition::Min => "min",
        }
    }
}

/// One channel's schema.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveChannel {
    /// Unique among its skeleton's channels (e.g. `morph/Face/1`, `contact/foot_l`).
    pub name: String,
    /// Index of the skeleton in the package.
    pub skeleton: u32,
    /// The value of a pose that does not animate the channel (the rest pose's).
    pub default: f32,
    /// The output's range: a program's curve output is clamped to `[min, max]`.
    pub min: f32,
    pub max: f32,
    pub composition: Composition,
}

/// One clip's samples of one channel: `values[i]` at the clip's sample `i`.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveTrack {
    /// Index of the clip in the package.
    pub clip: u32,
    /// The channel's id (index in [`Curves::channels`]); of the clip's skeleton.
    pub channel: u32,
    /// One per sample of the clip (`Clip::sample_count`).
    pub values: Vec<f32>,
    /// The codec's form of the track when it is compressed (throng-cook `compress`); `values`
    /// are then exactly its decoded samples, which is what the GPU decodes from the same bits.
    pub quantized: Option<QuantizedTrack>,
}

/// The widest sample a [`QuantizedTrack`] stores.
pub const MAX_CURVE_BITS: u32 = 24;

/// Bits per sample that mark a curve track stored as raw f32 values (in a package's CURVES
/// section and the GPU's tables), beside a [`QuantizedTrack`]'s 0 to [`MAX_CURVE_BITS`].
pub const RAW_CURVE_BITS: u32 = 32;

/// A curve track's samples as the codec stores them (docs/codec.md, "Curve tracks"): sample `i`
/// is `base + f32(kᵢ) · step`, `kᵢ` the `i`-th `bits`-wide unsigned integer of `words`, packed
/// from bit 0 of word 0 up (a sample may straddle two words). `step` is a power of two and
/// `kᵢ < 2²⁴`, so the product is exact and CPU and WGSL (curves.wgsl `curve_sample`) get the
/// same f32 with or without a fused multiply-add. With `bits` 0 every sample is `base`.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizedTrack {
    pub base: f32,
    pub step: f32,
    pub bits: u32,
    pub words: Vec<u32>,
}

impl QuantizedTrack {
    /// Samples `ks` packed in `bits` bits each (at most [`MAX_CURVE_BITS`]; a sample keeps its
    /// low `bits` bits).
    pub fn pack(base: f32, step: f32, bits: u32, ks: &[u32]) -> QuantizedTrack {
        let bits = bits.min(MAX_CURVE_BITS);
        let mut words = vec![0u32; Self::words_for(ks.len(), bits)];
        for (i, &k) in ks.iter().enumerate().take_while(|_| bits > 0) {
            let k = k & ((1u32 << bits) - 1);
            let bit = i as u64 * u64::from(bits);
            let (w, shift) = ((bit / 32) as usize, (bit % 32) as u32);
            words[w] |= k << shift;
            if shift + bits > 32 {
                words[w + 1] |= k >> (32 - shift);
            }
        }
        QuantizedTrack {
            base,
            step,
            bits,
            words,
        }
    }

    /// Words that hold `count` samples of `bits` bits.
    pub fn words_for(count: usize, bits: u32) -> usize {
        (count as u64 * u64::from(bits)).div_ceil(32) as usize
    }

    /// The integer of sample `i` (0 past the words).
    pub fn k(&self, i: u32) -> u32 {
        let bits = self.bits.min(MAX_CURVE_BITS);
        if bits == 0 {
            return 0;
        }
        let bit = u64::from(i) * u64::from(bits);
        let (w, shift) = ((bit / 32) as usize, (bit % 32) as u32);
        let word = |w: usize| self.words.get(w).copied().unwrap_or(0);
        let mut k = word(w) >> shift;
        if shift + bits > 32 {
            k |= word(w + 1) << (32 - shift);
        }
        k & ((1u32 << bits) - 1)
    }

    /// Sample `i`.
    pub fn value(&self, i: u32) -> f32 {
        self.base + self.k(i) as f32 * self.step
    }

    /// The first `count` samples.
    pub fn decode(&self, count: usize) -> Vec<f32> {
        (0..count as u32).map(|i| self.value(i)).collect()
    }

    /// What is wrong with it as the form of `values`, if anything.
    fn check(&self, values: &[f32]) -> Option<String> {
        if self.bits > MAX_CURVE_BITS {
            return Some(format!(
                "{} bits per sample (at most {MAX_CURVE_BITS})",
                self.bits
            ));
        }
        let power_of_two =
            self.step.is_normal() && self.step > 0.0 && self.step.to_bits() & 0x007f_ffff == 0;
        if !self.base.is_finite() || !power_of_two {
            return Some(format!(
                "base {} and step {}: needs a finite base and a normal power-of-two step",
                self.base, self.step
            ));
        }
        if self.words.len() != Self::words_for(values.len(), self.bits) {
            return Some(format!(
                "{} words for {} samples of {} bits",
                self.words.len(),
                values.len(),
                self.bits
            ));
        }
        (0..values.len()).find_map(|i| {
            let v = self.value(i as u32);
            (v.to_bits() != values[i].to_bits())
                .then(|| format!("sample {i} decodes to {v}, not its value {}", values[i]))
        })
    }
}

/// Which curves a layer moves, and how much: a weight in [0, 1] per channel of its skeleton
/// (Override and Additive ops name one by `PoseOp::d`, [`selection_of`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CurveSelection {
    pub name: String,
    pub skeleton: u32,
    /// One per channel of the skeleton, in id order.
    pub weights: Vec<f32>,
}

/// A package's scalar curves: channels sorted by skeleton (each skeleton's a contiguous range),
/// tracks sorted by clip then channel, selections.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Curves {
    pub channels: Vec<CurveChannel>,
    pub tracks: Vec<CurveTrack>,
    pub selections: Vec<CurveSelection>,
}

/// A channel's state in one register.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CurveValue {
    pub value: f32,
    /// How much of the pose animates the channel, in [0, 1].
    pub cover: f32,
}

/// `PoseOp::d` of an Override or Additive op: every curve weighs 1 (each still gated by its
/// source's cover).
pub const ALL_CURVES: u32 = 0;

/// The selection index `d` names (`d - 1`), or `None` for [`ALL_CURVES`].
pub fn selection_of(d: u32) -> Option<u32> {
    d.checked_sub(1)
}

/// Why a package's curves are malformed.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum CurveError {
    #[error("curve channel {channel} ('{name}'): {what}")]
    Channel {
        channel: usize,
        name: String,
        what: String,
    },
    #[error("curve track {track} (clip {clip}, channel {channel}): {what}")]
    Track {
        track: usize,
        clip: u32,
        channel: u32,
        what: String,
    },
    #[error("curve selection {selection} ('{name}'): {what}")]
    Selection {
        selection: usize,
        name: String,
        what: String,
    },
}

impl Curves {
    pub fn is_empty(&self) -> bool {
        self.channels.is_empty() && self.tracks.is_empty() && self.selections.is_empty()
    }

    /// The ids of `skeleton`'s channels.
    pub fn range(&self, skeleton: u32) -> std::ops::Range<usize> {
        let start = self.channels.partition_point(|c| c.skeleton < skeleton);
        let end = self.channels.partition_point(|c| c.skeleton <= skeleton);
        start..end
    }

    /// The tracks of clip `clip`, by channel.
    pub fn tracks_of(&self, clip: u32) -> &[CurveTrack] {
        let start = self.tracks.partition_point(|t| t.clip < clip);
        let end = self.tracks.partition_point(|t| t.clip <= clip);
        &self.tracks[start..end]
    }

    /// The id of `skeleton`'s channel named `name`.
    pub fn find(&self, skeleton: u32, name: &str) -> Option<u32> {
        let range = self.range(skeleton);
        let start = range.start;
        self.channels[range]
            .iter()
            .position(|c| c.name == name)
            .map(|i| (start + i) as u32)
    }

    /// Checks the curves against the package's `clips` and its `skeletons` (their count): the
    /// orders above, names unique per skeleton, finite defaults inside finite or infinite
    /// ranges, tracks of existing clips and of channels of their clip's skeleton with a finite
    /// value per sample (and a compressed form, if any, that decodes to exactly those values),
    /// selections of a weight in [0, 1] per channel.
    pub fn validate(&self, clips: &[Clip], skeletons: usize) -> Result<(), CurveError> {
        for (i, c) in self.channels.iter().enumerate() {
            let bad = |what: String| CurveError::Channel {
                channel: i,
                name: c.name.clone(),
                what,
            };
            if c.skeleton as usize >= skeletons {
                return Err(bad(format!(
                    "skeleton {} does not exist ({skeletons} in the package)",
                    c.skeleton
                )));
            }
            if i > 0 && self.channels[i - 1].skeleton > c.skeleton {
                return Err(bad("channels are not sorted by skeleton".into()));
            }
            if self.channels[self.range(c.skeleton)]
                .iter()
                .take_while(|o| !std::ptr::eq(*o, c))
                .any(|o| o.name == c.name)
            {
                return Err(bad("a second channel of this name on its skeleton".into()));
            }
            if c.min.is_nan() || c.max.is_nan() || c.min > c.max {
                return Err(bad(format!("range [{}, {}] is empty", c.min, c.max)));
            }
            if !c.default.is_finite() || c.default < c.min || c.default > c.max {
                return Err(bad(format!(
                    "default {} is not a finite value in [{}, {}]",
                    c.default, c.min, c.max
                )));
            }
        }
        for (i, t) in self.tracks.iter().enumerate() {
            let bad = |what: String| CurveError::Track {
                track: i,
                clip: t.clip,
                channel: t.channel,
                what,
            };
            if i > 0 {
                let p = &self.tracks[i - 1];
                if (p.clip, p.channel) >= (t.clip, t.channel) {
                    return Err(bad(
                        "tracks are not sorted by clip then channel, or repeat one".into(),
                    ));
                }
            }
            let clip = clips.get(t.clip as usize).ok_or_else(|| {
                bad(format!(
                    "the clip does not exist ({} in the package)",
                    clips.len()
                ))
            })?;
            let channel = self.channels.get(t.channel as usize).ok_or_else(|| {
                bad(format!(
                    "the channel does not exist ({} in the package)",
                    self.channels.len()
                ))
            })?;
            if channel.skeleton != clip.skeleton {
                return Err(bad(format!(
                    "the channel belongs to skeleton {}, the clip to skeleton {}",
                    channel.skeleton, clip.skeleton
                )));
            }
            if t.values.len() != clip.sample_count as usize {
                return Err(bad(format!(
                    "{} values for the clip's {} samples",
                    t.values.len(),
                    clip.sample_count
                )));
            }
            if let Some(v) = t.values.iter().find(|v| !v.is_finite()) {
                return Err(bad(format!("value {v} is not finite")));
            }
            if let Some(what) = t.quantized.as_ref().and_then(|q| q.check(&t.values)) {
                return Err(bad(format!("its compressed form: {what}")));
            }
        }
        for (i, s) in self.selections.iter().enumerate() {
            let bad = |what: String| CurveError::Selection {
                selection: i,
                name: s.name.clone(),
                what,
            };
            let channels = self.range(s.skeleton).len();
            if s.skeleton as usize >= skeletons {
                return Err(bad(format!("skeleton {} does not exist", s.skeleton)));
            }
            if s.weights.len() != channels {
                return Err(bad(format!(
                    "{} weights for the skeleton's {channels} channels",
                    s.weights.len()
                )));
            }
            if let Some(w) = s.weights.iter().find(|w| !(0.0..=1.0).contains(*w)) {
                return Err(bad(format!("weight {w} is outside [0, 1]")));
            }
        }
        Ok(())
    }
}

/// Track `values` of `clip` at `time` (seconds, clamped to the clip): the lerp of the two
/// bracketing samples, as a cooked translation is sampled. A track shorter than the clip reads
/// its last value past its end (validation rules that out).
pub fn sample_track(clip: &Clip, values: &[f32], time: f32) -> f32 {
    let b = clip.bracket(time);
    let at = |i: u32| {
        values
            .get(i as usize)
            .or(values.last())
            .copied()
            .unwrap_or(0.0)
    };
    let (v0, v1) = (at(b.i0), at(b.i1));
    v0 + (v1 - v0) * b.u
}

/// The rest state of `channel`: its default, cover 0.
pub fn rest_channel(channel: &CurveChannel) -> CurveValue {
    CurveValue {
        value: channel.default,
        cover: 0.0,
    }
}

/// A Blend of one channel's `inputs` with weights already normalised to sum 1.
pub fn blend_channel(
    inputs: impl IntoIterator<Item = (CurveValue, f32)>,
    channel: &CurveChannel,
) -> CurveValue {
    let mut cover = 0.0;
    let mut sum = 0.0;
    // The chosen input of `override`, `max` and `min`: (value, its weight).
    let mut chosen: Option<(f32, f32)> = None;
    for (x, w) in inputs {
        cover += w * x.cover;
        sum += w * x.value;
        if w > 0.0 && x.cover > 0.0 {
            let better = match (channel.composition, chosen) {
                (_, None) => true,
                (Composition::Override, Some((_, cw))) => w > cw,
                (Composition::Max, Some((cv, _))) => x.value > cv,
                (Composition::Min, Some((cv, _))) => x.value < cv,
                _ => false,
            };
            if better {
                chosen = Some((x.value, w));
            }
        }
    }
    let value = match channel.composition {
        Composition::Blend | Composition::Additive => sum,
        _ => chosen.map_or(channel.default, |(v, _)| v),
    };
    CurveValue { value, cover }
}

/// An Override layer on one channel: `dst` moved toward `src` by `a` (the layer's weight times
/// its selection's) as far as `src` animates the channel.
pub fn override_channel(
    dst: CurveValue,
    src: CurveValue,
    a: f32,
    composition: Composition,
) -> CurveValue {
    let a = a * src.cover;
    let value = match composition {
        Composition::Blend => dst.value + (src.value - dst.value) * a,
        Composition::Additive => dst.value + a * src.value,
        _ => reduce(dst.value, src.value, a, composition),
    };
    layered(dst, value, a)
}

/// An Additive layer on one channel: `dst` plus `w` times `src`'s difference from `reference`,
/// as far as `src` animates the channel; `override`, `max` and `min` take `src` as an override
/// layer would.
pub fn additive_channel(
    dst: CurveValue,
    src: CurveValue,
    reference: CurveValue,
    w: f32,
    composition: Composition,
) -> CurveValue {
    let a = w * src.cover;
    let value = match composition {
        Composition::Blend | Composition::Additive => dst.value + (src.value - reference.value) * a,
        _ => reduce(dst.value, src.value, a, composition),
    };
    layered(dst, value, a)
}

/// `override`, `max` and `min` of a layer's `src` over `dst` where the layer weighs `a > 0`.
fn reduce(dst: f32, src: f32, a: f32, composition: Composition) -> f32 {
    if a <= 0.0 {
        return dst;
    }
    match composition {
        Composition::Max => dst.max(src),
        Composition::Min => dst.min(src),
        _ => src,
    }
}

fn layered(dst: CurveValue, value: f32, a: f32) -> CurveValue {
    CurveValue {
        value,
        cover: dst.cover + (1.0 - dst.cover) * a,
    }
}

/// A program's output value of `channel`: `value` clamped to the channel's range.
pub fn output(channel: &CurveChannel, value: f32) -> f32 {
    // Not `clamp`, which panics on a range that validation would have refused.
    value.max(channel.min).min(channel.max)
}

/// The curve half of a program run: per register, the state of each evaluated channel, and the
/// output of the register `ToComponent` converts. The interpreter evaluates every channel of the
/// skeleton with one; control evaluates just the channels it watches with another (ozz-style:
/// sized once, allocating nothing per run).
#[derive(Clone, Debug)]
pub struct CurveRegisters {
    /// Channels per register.
    capacity: usize,
    /// The evaluated channels' ids, ascending, at most `capacity`.
    ids: Vec<u32>,
    /// The id of the skeleton's first channel (selections weigh channels from it).
    first: u32,
    /// Register `r`'s channel `k` is `registers[r * capacity + k]`.
    registers: Vec<CurveValue>,
    outputs: Vec<f32>,
}

impl CurveRegisters {
    /// Room for `registers` registers of up to `capacity` channels.
    pub fn new(registers: usize, capacity: usize) -> Self {
        CurveRegisters {
            capacity,
            ids: Vec::with_capacity(capacity),
            first: 0,
            registers: vec![CurveValue::default(); registers * capacity],
            outputs: vec![0.0; capacity],
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Evaluates channels `ids` (ascending ids of one skeleton, whose first channel is `first`)
    /// from now on: as many as the capacity holds.
    pub fn select(&mut self, first: usize, ids: impl IntoIterator<Item = u32>) {
        self.first = first as u32;
        self.ids.clear();
        self.ids.extend(ids.into_iter().take(self.capacity));
    }

    /// The evaluated channels' ids.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// The output of the last `ToComponent`: each evaluated channel's value clamped to its range.
    pub fn outputs(&self) -> &[f32] {
        &self.outputs[..self.ids.len()]
    }

    /// Register `r`'s channels.
    pub fn register(&self, r: u32) -> Option<&[CurveValue]> {
        let start = (r as usize).checked_mul(self.capacity)?;
        self.registers.get(start..start + self.ids.len())
    }

    /// Op `o` of a validated program (whose blend weights are `weights`) on the evaluated
    /// channels: Rest, Sample, Blend, Override and Additive as the module doc's table says;
    /// `ToComponent` writes the outputs; other ops touch no curve.
    pub fn op(&mut self, o: &PoseOp, weights: &[f32], assets: &Assets) {
        let channels = &assets.curves.channels;
        let n = self.capacity;
        let at = |r: u32, k: usize| r as usize * n + k;
        for (k, &id) in self.ids.iter().enumerate() {
            let Some(channel) = channels.get(id as usize) else {
                continue;
            };
            let value = match o.code {
                op::REST => rest_channel(channel),
                op::SAMPLE => {
                    let tracks = assets.curves.tracks_of(o.a);
                    let track = tracks
                        .binary_search_by_key(&id, |t| t.channel)
                        .ok()
                        .map(|i| &tracks[i]);
                    match (assets.clips.get(o.a as usize), track) {
                        (Some(clip), Some(t)) => CurveValue {
                            value: sample_track(clip, &t.values, o.time),
                            cover: 1.0,
                        },
                        _ => rest_channel(channel),
                    }
                }
                op::BLEND => {
                    let w = weights
                        .get(o.c as usize..(o.c as usize).saturating_add(o.b as usize))
                        .unwrap_or(&[]);
                    let sum: f32 = w.iter().sum();
                    if sum < BLEND_EPSILON {
                        rest_channel(channel)
                    } else {
                        let inputs = (o.a..).map(|r| self.registers[at(r, k)]);
                        blend_channel(inputs.zip(w.iter().map(|w| w / sum)), channel)
                    }
                }
                op::OVERRIDE | op::ADDITIVE => {
                    let selected = selection_of(o.d)
                        .and_then(|s| assets.curves.selections.get(s as usize))
                        .map_or(1.0, |s| {
                            let local = id.wrapping_sub(self.first) as usize;
                            s.weights.get(local).copied().unwrap_or(0.0)
                        });
                    let a = o.weight * selected;
                    let (d, s) = (self.registers[at(o.dst, k)], self.registers[at(o.a, k)]);
                    if o.code == op::ADDITIVE {
                        let r = self.registers[at(o.b, k)];
                        additive_channel(d, s, r, a, channel.composition)
                    } else {
                        override_channel(d, s, a, channel.composition)
                    }
                }
                op::TO_COMPONENT => {
                    self.outputs[k] = output(channel, self.registers[at(o.a, k)].value);
                    continue;
                }
                _ => continue,
            };
            let dst = at(o.dst, k);
            self.registers[dst] = value;
        }
    }
}

/// A package without curves, for assets built by hand.
pub static NO_CURVES: Curves = Curves {
    channels: Vec::new(),
    tracks: Vec::new(),
    selections: Vec::new(),
};
