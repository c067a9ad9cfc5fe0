//! Constants shared by Rust and WGSL, defined once in Rust and written into every module's
//! prelude: op codes, sentinels, epsilons, sub-track kinds, clip encodings, codec layout,
//! workgroup sizes.

use std::fmt::Write;

use crate::layout::{NO_DECODE, NO_LOD};
use throng_cpu_ref::bounds::BOUNDS_PAD;
use throng_cpu_ref::clip::encoding;
use throng_cpu_ref::codec::layout as codec;
use throng_cpu_ref::program::{op, NO_MASK};
use throng_cpu_ref::skinning::NO_NORMAL;
use throng_cpu_ref::{interpreter::BLEND_EPSILON, Composition, SubTrackKind, NO_PARENT};

/// Registers of the interpreter's register file: programs may use `0 .. REGISTERS`.
pub const REGISTERS: u32 = 8;
/// Threads per workgroup of the one-thread-per-item entry points (interpreter, thread mapping,
/// skinning). A dispatch wider than the adapter's limit folds into y rows.
pub const WORKGROUP: u32 = 64;
/// Lanes whose counts one lane sums serially in scan.wgsl `lane_sums` (a run), and the runs of
/// a workgroup: two short serial scans, not a scan of every lane by every lane.
pub const SCAN_RUN: u32 = 8;
pub const SCAN_RUNS: u32 = WORKGROUP / SCAN_RUN;
const _: () = assert!(WORKGROUP.is_multiple_of(SCAN_RUN));
/// Vertices one skinning thread skins (of one instance): its placement is read once for them.
pub const SKIN_VERTICES_PER_THREAD: u32 = 4;
/// Lanes of the workgroup mapping are padded to a multiple of this (a hardware subgroup).
pub const SUBGROUP: u32 = 32;
/// Most lanes of one workgroup of the workgroup mapping: larger skeletons use the interpreter.
pub const MAX_GROUP_LANES: u32 = 256;
/// Words of a clip header in the resident `meta` table (sample.wgsl `clip_header`).
pub const CLIP_WORDS: u32 = 8;
/// Levels of detail an instance may be drawn at: full detail, then each reduced skeleton level
/// with its mesh LOD (throng-cpu-ref `lod`). The skinned budget ranks instances per (skinned
/// batch, level), each a *unit* (budget.wgsl).
pub const LOD_TIERS: u32 = 1 + throng_cpu_ref::lod::MAX_LOD_LEVELS as u32;

/// Buckets of the significance histogram (bounds.wgsl `significance`): keys `0 ..` this, a
/// sixteenth of an octave of projected size each, 32 octaves in all.
pub const SIGNIFICANCE_BUCKETS: u32 = 512;
// tally.wgsl gives each lane an equal run of keys.
const _: () = assert!(SIGNIFICANCE_BUCKETS.is_multiple_of(WORKGROUP));
/// Bits an f32 is shifted right to keep its exponent and four mantissa bits: a log2 in
/// sixteenths of an octave.
pub const SIGNIFICANCE_SHIFT: u32 = 19;
/// The depth a box's centre at or behind the eye counts as (it takes the largest keys).
pub const SIGNIFICANCE_MIN_DEPTH: f32 = 1e-6;
/// `groups` (the cull pass's scratch, u32): the histogram, the threshold key and the slots the
/// budget takes at it, then from here four words per bounds workgroup (tally.wgsl).
pub const GROUP_BASE: u32 = SIGNIFICANCE_BUCKETS + 4;
/// The far tier's table (u32; scatter.wgsl, throng-gpu `FarTier`): the kind it draws (or
/// `NO_KIND`), its clips, its cells per frame, then the impostor's centre (three f32) at
/// `FAR_CENTRE`, then from `FAR_HEADER` per clip of the package (first cell of its frame 0 or
/// `NO_CELL`, frames, duration as f32, 1 when it loops).
pub const FAR_KIND: u32 = 0;
pub const FAR_CLIPS: u32 = 1;
pub const FAR_CELLS_PER_FRAME: u32 = 2;
pub const FAR_CENTRE: u32 = 4;
pub const FAR_HEADER: u32 = 8;
/// A clip the far tier has no frames of; also a slot's clock before it was posed, or of a
/// program that samples no clip.
pub const NO_CELL: u32 = u32::MAX;

/// The prelude: every shared constant as a WGSL `const`.
pub fn source() -> String {
    let u32s: [(&str, u32); 61] = [
        ("OP_REST", op::REST),
        ("OP_SAMPLE", op::SAMPLE),
        ("OP_BLEND", op::BLEND),
        ("OP_OVERRIDE", op::OVERRIDE),
        ("OP_ADDITIVE", op::ADDITIVE),
        ("OP_TO_COMPONENT", op::TO_COMPONENT),
        ("OP_CAPTURE", op::CAPTURE),
        ("OP_INERTIALIZE", op::INERTIALIZE),
        ("NO_MASK", NO_MASK),
        ("NO_LOD", NO_LOD),
        ("NO_DECODE", NO_DECODE),
        ("NO_PARENT", NO_PARENT),
        ("NO_NORMAL", NO_NORMAL),
        ("TRACK_DEFAULT", SubTrackKind::Default as u32),
        ("TRACK_CONSTANT", SubTrackKind::Constant as u32),
        ("TRACK_ANIMATED", SubTrackKind::Animated as u32),
        ("ENCODING_REFERENCE", encoding::REFERENCE),
        ("ENCODING_COMPRESSED", encoding::COMPRESSED),
        ("CODEC_RANGE_WORDS", codec::RANGE_WORDS as u32),
        ("CODEC_HEADER_WORDS", codec::HEADER_WORDS as u32),
        ("CODEC_LO_SHIFT", codec::LO_SHIFT),
        ("CODEC_OFFSET_BITS", codec::OFFSET_BITS),
        ("CODEC_SHIFT_AT", codec::SHIFT_AT),
        ("CODEC_SHIFT_BITS", codec::SHIFT_BITS),
        ("CODEC_WIDTH_AT", codec::WIDTH_AT),
        ("CODEC_WIDTH_BITS", codec::WIDTH_BITS),
        ("CODEC_HI_AT", codec::HI_AT),
        ("CODEC_HI_BITS", codec::HI_BITS),
        ("REGISTERS", REGISTERS),
        ("WORKGROUP", WORKGROUP),
        ("SCAN_RUN", SCAN_RUN),
        ("SCAN_RUNS", SCAN_RUNS),
        ("SKIN_VERTICES_PER_THREAD", SKIN_VERTICES_PER_THREAD),
        ("CLIP_WORDS", CLIP_WORDS),
        ("LOD_TIERS", LOD_TIERS),
        ("LOD_HIDDEN", u32::from(throng_cpu_ref::frame::HIDDEN_LEVEL)),
        ("KIND_MASK", crate::layout::KIND_MASK),
        ("LEVEL_SHIFT", crate::layout::LEVEL_SHIFT),
        ("NO_KIND", crate::layout::NO_KIND),
        ("NO_UNIT", crate::layout::NO_UNIT),
        ("KEEP_BIT", crate::layout::KEEP_BIT),
        ("HERO_BIT", crate::layout::HERO_BIT),
        ("NO_SHAPE", crate::layout::NO_SHAPE),
        ("SIGNIFICANCE_BUCKETS", SIGNIFICANCE_BUCKETS),
        ("SIGNIFICANCE_SHIFT", SIGNIFICANCE_SHIFT),
        ("GROUP_BASE", GROUP_BASE),
        ("FAR_KIND", FAR_KIND),
        ("FAR_CLIPS", FAR_CLIPS),
        ("FAR_CELLS_PER_FRAME", FAR_CELLS_PER_FRAME),
        ("FAR_CENTRE", FAR_CENTRE),
        ("FAR_HEADER", FAR_HEADER),
        ("NO_CELL", NO_CELL),
        ("NO_CURVE_TRACK", crate::layout::NO_CURVE_TRACK),
        ("RAW_CURVE_BITS", throng_cpu_ref::scalar::RAW_CURVE_BITS),
        ("NO_MORPH", crate::layout::NO_MORPH),
        ("NO_CHANNEL", crate::layout::NO_CHANNEL),
        ("COMPOSITION_BLEND", Composition::Blend as u32),
        ("COMPOSITION_OVERRIDE", Composition::Override as u32),
        ("COMPOSITION_ADDITIVE", Composition::Additive as u32),
        ("COMPOSITION_MAX", Composition::Max as u32),
        ("COMPOSITION_MIN", Composition::Min as u32),
    ];
    let mut s = String::from("// Generated from throng-shaders `prelude` (Rust definitions).\n");
    for (name, value) in u32s {
        let _ = writeln!(s, "const {name}: u32 = {value}u;");
    }
    let _ = writeln!(s, "const BLEND_EPSILON: f32 = {BLEND_EPSILON:e};");
    let _ = writeln!(s, "const BOUNDS_PAD: f32 = {BOUNDS_PAD:e};");
    let _ = writeln!(
        s,
        "const SIGNIFICANCE_MIN_DEPTH: f32 = {SIGNIFICANCE_MIN_DEPTH:e};"
    );
    // The bounds pass's empty box (the largest finite f32: WGSL has no infinity literal).
    let _ = writeln!(s, "const BOUNDS_EMPTY: f32 = {:e};", f32::MAX);
    s
}
