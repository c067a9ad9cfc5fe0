//! Program shapes: what a pose pipeline specialises on (docs/gpu.md, "Shapes").
//!
//! A shape is a program with everything that varies per instance taken out: its op codes,
//! register wiring, whether each layer is masked, and counts, plus the encoding of each clip it
//! samples; not its clip ids, mask ids, sample times or weights. Those go into the instance's *record*, a row of u32 words:
//! word 0 is the instance's frame slot, word 1 its kind word (kind and skeleton LOD level,
//! [`crate::layout::kind_word`]), then per op in program order its values (`Sample`: clip
//! id and time; `Blend`: its input weights; `Override` / `Additive`: the layer weight and the
//! mask id (`NO_MASK` without one); `Capture`:
//! history slot and interval; `Inertialize`: history slot, time since the capture and duration;
//! times and weights as f32 bits). `Palette` ops are dropped: the GPU builds the batch skin's palette.
//! Programs of one shape share a pipeline and one dispatch, whatever their kinds.

use std::hash::{Hash, Hasher};

use throng_cpu_ref::program::{op, NO_MASK};
use throng_cpu_ref::{PoseOp, Program};

/// How the clip a `Sample` op names is stored (`throng_cpu_ref::clip::encoding`).
pub type Encoding = u32;

/// One op of a shape: a [`PoseOp`] whose per-instance values were replaced by `word`, the index
/// of its first value in the record. Other fields keep their program meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShapeOp {
    pub code: u32,
    pub dst: u32,
    pub a: u32,
    pub b: u32,
    pub c: u32,
    /// Record word of the op's first value (Sample, Blend, Override, Additive), else 0.
    pub word: u32,
    /// Sample: the encoding of its clip, else 0.
    pub encoding: Encoding,
    /// Capture: the previous-destination register; Override and Additive: the layer's curve
    /// selection (0 every curve); else 0.
    pub d: u32,
}

/// Words of a [`ShapeOp`] in the interpreter's shape table.
pub const SHAPE_OP_WORDS: usize = 8;

/// A program shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    pub ops: Vec<ShapeOp>,
    /// Words of a record: the slot, the kind word and every op's values.
    pub record_words: u32,
}

/// Values an op puts in the record.
fn op_values(o: &PoseOp) -> u32 {
    match o.code {
        op::SAMPLE => 2,
        op::BLEND => o.b,
        op::OVERRIDE | op::ADDITIVE => 2,
        op::CAPTURE => 2,
        op::INERTIALIZE => 3,
        _ => 0,
    }
}

/// Most record words one op puts in the record, besides a `Blend`'s weights.
pub const MAX_OP_VALUES: u32 = 3;

/// The shape-relevant fields of `o`, given the record word of its first value and the encoding
/// of the clip it samples (`None` for a dropped op).
fn shape_op(o: &PoseOp, word: u32, encoding: &impl Fn(u32) -> Encoding) -> Option<ShapeOp> {
    let keep = |a, b, c, encoding| ShapeOp {
        code: o.code,
        dst: o.dst,
        a,
        b,
        c,
        word: if op_values(o) > 0 { word } else { 0 },
        encoding,
        d: 0,
    };
    match o.code {
        op::REST => Some(keep(0, 0, 0, 0)),
        op::SAMPLE => Some(keep(0, 0, 0, encoding(o.a))),
        op::BLEND => Some(keep(o.a, o.b, 0, 0)),
        // `d`: the layer's curve selection (throng-cpu-ref `scalar::selection_of`).
        op::OVERRIDE => Some(ShapeOp {
            d: o.d,
            ..keep(o.a, 0, masked(o.c), 0)
        }),
        op::ADDITIVE => Some(ShapeOp {
            d: o.d,
            ..keep(o.a, o.b, masked(o.c), 0)
        }),
        op::TO_COMPONENT => Some(ShapeOp {
            dst: 0,
            ..keep(o.a, 0, 0, 0)
        }),
        op::CAPTURE => Some(ShapeOp {
            d: o.d,
            ..keep(o.a, o.b, 0, 0)
        }),
        op::INERTIALIZE => Some(keep(0, 0, 0, 0)),
        _ => None,
    }
}

/// A layer's mask as the shape has it: [`NO_MASK`] or [`MASKED`] (which mask is a value of the
/// record, so instances of skeletons with masks of their own share the shape).
fn masked(mask: u32) -> u32 {
    if mask == NO_MASK {
        NO_MASK
    } else {
        MASKED
    }
}

/// A [`ShapeOp::c`] of a masked `Override` or `Additive`: the mask id is in the record, after
/// the layer weight.
pub const MASKED: u32 = 0;

/// The shape ops of `program`, in order, without allocating.
fn shape_ops<'a>(
    program: &'a Program,
    encoding: &'a impl Fn(u32) -> Encoding,
) -> impl Iterator<Item = ShapeOp> + 'a {
    let mut word = RECORD_HEAD;
    program.ops.iter().filter_map(move |o| {
        let s = shape_op(o, word, encoding);
        word += op_values(o);
        s
    })
}

impl Shape {
    /// The shape of a validated `program`; `encoding(clip)` tells how each sampled clip is stored.
    pub fn of(program: &Program, encoding: impl Fn(u32) -> Encoding) -> Shape {
        Shape {
            ops: shape_ops(program, &encoding).collect(),
            record_words: record_words(program),
        }
    }

    /// A hash of [`Shape::of`]`(program, encoding)` computed without building it.
    pub fn hash_of(program: &Program, encoding: impl Fn(u32) -> Encoding) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for o in shape_ops(program, &encoding) {
            o.hash(&mut h);
        }
        record_words(program).hash(&mut h);
        h.finish()
    }

    /// Whether `program` has this shape (no allocation).
    pub fn matches(&self, program: &Program, encoding: impl Fn(u32) -> Encoding) -> bool {
        record_words(program) == self.record_words
            && shape_ops(program, &encoding).eq(self.ops.iter().copied())
    }

    /// [`Shape::record_words`] of `program`'s shape, without building it.
    pub fn record_words_of(program: &Program) -> u32 {
        record_words(program)
    }

    /// Record vec4s per instance (`record_words` rounded up to whole vec4s).
    pub fn record_stride(&self) -> u32 {
        self.record_words.div_ceil(4)
    }

    /// Whether the shape reads or writes inertialization history.
    pub fn uses_history(&self) -> bool {
        self.ops
            .iter()
            .any(|o| o.code == op::CAPTURE || o.code == op::INERTIALIZE)
    }

    /// Whether the shape samples a compressed clip (its kernels differ with the decode cache).
    pub fn samples_compressed(&self) -> bool {
        self.ops.iter().any(|o| {
            o.code == op::SAMPLE && o.encoding == throng_cpu_ref::clip::encoding::COMPRESSED
        })
    }

    /// The register the shape's `ToComponent` converts.
    pub fn output(&self) -> Option<u32> {
        self.ops
            .iter()
            .find(|o| o.code == op::TO_COMPONENT)
            .map(|o| o.a)
    }

    /// The clip id word of the first `Sample` op (what the runtime sorts instances by).
    pub fn first_clip_word(&self) -> Option<u32> {
        self.ops
            .iter()
            .find(|o| o.code == op::SAMPLE)
            .map(|o| o.word)
    }

    /// Per value of the shape's programs (throng-cpu-ref `values` order) the record word it
    /// goes to, bit 31 set for a clip time (the clip's id is the word before): how the present
    /// pass (present.wgsl) writes a record's values.
    pub fn value_map(&self) -> Vec<u32> {
        let mut map = Vec::new();
        for o in &self.ops {
            match o.code {
                op::SAMPLE => map.push((o.word + 1) | TIME_VALUE),
                op::BLEND => map.extend((0..o.b).map(|k| o.word + k)),
                op::OVERRIDE | op::ADDITIVE => map.push(o.word),
                op::INERTIALIZE => map.push(o.word + 1),
                _ => {}
            }
        }
        map
    }

    /// The interpreter's table form: [`SHAPE_OP_WORDS`] words per op.
    pub fn table(&self) -> Vec<u32> {
        self.ops
            .iter()
            .flat_map(|o| [o.code, o.dst, o.a, o.b, o.c, o.word, o.encoding, o.d])
            .collect()
    }
}

/// A [`Shape::value_map`] entry's flag for a clip time.
pub const TIME_VALUE: u32 = 1 << 31;

/// Words of a record before its ops' values: the frame slot and the kind word.
pub const RECORD_HEAD: u32 = 2;

/// Record words of `program`: the slot and the kind word, then every op's values.
fn record_words(program: &Program) -> u32 {
    RECORD_HEAD + program.ops.iter().map(op_values).sum::<u32>()
}

/// Writes `program`'s record (frame slot `slot`, kind word `kind`) into `out`, which holds at
/// least [`Shape::record_words`] words; words past them are zeroed up to `out.len()`.
pub fn write_record(program: &Program, slot: u32, kind: u32, out: &mut [u32]) {
    out.fill(0);
    let mut words = out.iter_mut();
    let mut put = |w: u32| {
        if let Some(o) = words.next() {
            *o = w;
        }
    };
    put(slot);
    put(kind);
    for o in &program.ops {
        match o.code {
            op::SAMPLE => {
                put(o.a);
                put(o.time.to_bits());
            }
            op::BLEND => {
                let range = o.c as usize..(o.c as usize).saturating_add(o.b as usize);
                for &w in program.weights.get(range).unwrap_or(&[]) {
                    put(w.to_bits());
                }
            }
            op::OVERRIDE | op::ADDITIVE => {
                put(o.weight.to_bits());
                put(o.c);
            }
            op::CAPTURE => {
                put(o.c);
                put(o.weight.to_bits());
            }
            op::INERTIALIZE => {
                put(o.c);
                put(o.time.to_bits());
                put(o.weight.to_bits());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use throng_cpu_ref::clip::encoding::{COMPRESSED, REFERENCE};

    fn layered(clip: u32, time: f32, w: f32) -> Program {
        Program {
            ops: vec![
                PoseOp::sample(0, clip, time),
                PoseOp::sample(1, clip + 1, time * 0.5),
                PoseOp::blend(2, 0, 2, 0),
                PoseOp::sample(3, 2, 0.1),
                PoseOp::overriding(2, 3, w, 0),
                PoseOp::rest(4),
                PoseOp::additive(2, 3, 4, 0.5, NO_MASK),
                PoseOp::to_component(2),
                PoseOp::palette(0),
            ],
            weights: vec![w, 1.0 - w],
        }
    }

    #[test]
    fn clips_times_and_weights_are_not_part_of_the_shape() {
        let a = layered(0, 0.25, 0.3);
        let b = layered(1, 0.75, 0.9);
        let enc = |_| REFERENCE;
        assert_eq!(Shape::of(&a, enc), Shape::of(&b, enc));
        assert_eq!(Shape::hash_of(&a, enc), Shape::hash_of(&b, enc));
        assert!(Shape::of(&a, enc).matches(&b, enc));
    }

    #[test]
    fn wiring_whether_a_layer_is_masked_counts_and_encodings_are() {
        let a = layered(0, 0.25, 0.3);
        let shape = Shape::of(&a, |_| REFERENCE);
        let mut another_mask = a.clone();
        another_mask.ops[4].c = 1;
        assert!(
            shape.matches(&another_mask, |_| REFERENCE),
            "which mask is a value"
        );
        let mut masked = a.clone();
        masked.ops[4].c = NO_MASK;
        let mut rewired = a.clone();
        rewired.ops[7].a = 3;
        for other in [&masked, &rewired] {
            assert!(!shape.matches(other, |_| REFERENCE));
            assert_ne!(
                Shape::hash_of(other, |_| REFERENCE),
                Shape::hash_of(&a, |_| REFERENCE)
            );
        }
        assert!(!shape.matches(&a, |c| if c == 2 { COMPRESSED } else { REFERENCE }));
    }

    #[test]
    fn the_record_holds_the_slot_and_each_ops_values_in_order() {
        let p = layered(3, 0.25, 0.3);
        let shape = Shape::of(&p, |_| REFERENCE);
        // slot, kind, 3 samples × 2, 2 blend weights, 2 layers × (weight, mask).
        assert_eq!(shape.record_words, 2 + 6 + 2 + 4);
        assert_eq!(shape.record_stride(), 4);
        let mut out = [7u32; 16];
        write_record(&p, 42, 5, &mut out);
        assert_eq!((out[0], out[1]), (42, 5));
        assert_eq!((out[2], f32::from_bits(out[3])), (3, 0.25));
        assert_eq!((out[4], f32::from_bits(out[5])), (4, 0.125));
        assert_eq!((f32::from_bits(out[6]), f32::from_bits(out[7])), (0.3, 0.7));
        assert_eq!(
            (f32::from_bits(out[10]), out[11]),
            (0.3, 0),
            "override weight and mask after the third sample"
        );
        assert_eq!((f32::from_bits(out[12]), out[13]), (0.5, NO_MASK));
        // Each op's word points at its values.
        let words: Vec<u32> = shape.ops.iter().map(|o| o.word).collect();
        assert_eq!(words, [2, 4, 6, 8, 10, 0, 12, 0]);
        assert_eq!(shape.output(), Some(2));
        // The values' words: three times (after their clip words), two blend weights, two
        // layer weights, as throng-cpu-ref `values` lists them.
        let t = TIME_VALUE;
        assert_eq!(shape.value_map(), [3 | t, 5 | t, 6, 7, 9 | t, 10, 12]);
        assert_eq!(shape.table().len(), 8 * SHAPE_OP_WORDS);
    }
}
