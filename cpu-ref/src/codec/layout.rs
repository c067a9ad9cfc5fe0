//! Layout of a compressed clip's word stream (docs/codec.md).
//!
//! ```text
//! words = ranges        7 words per animated sub-track a, at 7a:
//!                       (base_x, step_x, base_y, step_y, base_z, step_z) as f32 bits, step a
//!                       power of two; then the rebuilt component of a rotation (0 x, 1 y, 2 z,
//!                       3 w; 0 for t and s)
//!       | segment table one word per segment: index in `words` of the segment's first word
//!       | constants     raw f32 bits, 3 words (t, s) or 4 (q as x, y, z, w) per constant sub-track
//!       | segments      per segment: `animated` headers of 64 bits, then the sample bits
//! ```
//!
//! Bits are numbered from the least significant bit of word 0 upwards (bit `p` is bit `p % 32`
//! of word `p / 32`); a field of n bits at bit p holds bits p .. p + n, least significant first.
//! Header of animated sub-track a in segment s: the 64 bits at word `segment_start + 2a`:
//!
//! | bits | field |
//! |---|---|
//! | 0..20 | bit offset of the sub-track's samples from the start of the segment's sample bits |
//! | 20..25 | shift: the segment's quantisation step is `step << shift` |
//! | 25..30, 30..35, 35..40 | widths of x, y, z in bits (0 ..= [`MAX_WIDTH`]) |
//! | 40..48, 48..56, 56..64 | hi of x, y, z: the segment's base is `K = hi << 16` |
//!
//! The segment's sample bits start at word `segment_start + 2 · animated`; sample `i` of the
//! segment of sub-track a lies at bit offset `offset + i · (wx + wy + wz)`, x then y then z.
//! Component c of that sample is `K = (hi_c << LO_SHIFT) + (k_c << shift)`.

/// Words of per-clip range data per animated sub-track: (base, step) for x, y, z, and the
/// rebuilt component.
pub const RANGE_WORDS: usize = 7;
/// Index of the rebuilt-component word within a sub-track's range words.
pub const REBUILT_WORD: usize = 6;
/// Words of a segment header per animated sub-track.
pub const HEADER_WORDS: usize = 2;
/// Bits of the clip-level integer `K` of a component: `K < 2^24`.
pub const K_BITS: u32 = 24;
/// Widest per-component sample width in bits; a header width above it is malformed.
pub const MAX_WIDTH: u32 = 24;
/// Largest shift; a header shift above it is malformed.
pub const MAX_SHIFT: u32 = 24;
/// `K` of a segment's base is `hi << LO_SHIFT` (hi is 8 bits).
pub const LO_SHIFT: u32 = 16;
/// Largest `width + shift` of a component: `k << shift` stays below `2^(K_BITS + 1)`.
pub const MAX_WIDTH_PLUS_SHIFT: u32 = K_BITS + 1;

/// Most words of one clip's stream: bit positions stay below 2^32 (the GPU's u32 arithmetic).
/// The encoder writes no longer stream, and the reader and the GPU upload refuse one.
pub const MAX_WORDS: u64 = 1 << 27;

/// Whether a component's clip-level range is one the decoder takes: a finite `base` and a
/// normal power-of-two `step` (zero mantissa) with `step · 2^26` finite, so every value a
/// segment can address stays finite. The reader refuses any other; the encoder keeps a clip
/// whose ranges are not such in the reference encoding.
pub fn valid_range(base: f32, step: f32) -> bool {
    let power_of_two = step.is_normal() && step > 0.0 && step.to_bits() & 0x007f_ffff == 0;
    base.is_finite() && power_of_two && (step * 67_108_864.0).is_finite()
}

/// Bit positions and widths of the header fields.
pub const OFFSET_BITS: u32 = 20;
pub const SHIFT_AT: u32 = 20;
pub const SHIFT_BITS: u32 = 5;
pub const WIDTH_AT: u32 = 25;
pub const WIDTH_BITS: u32 = 5;
pub const HI_AT: u32 = 40;
pub const HI_BITS: u32 = 8;

/// Samples per segment the encoder uses (ACL's default).
pub const SEGMENT_LENGTH: u32 = 16;

/// Index in `words` of the segment table.
pub fn segment_table(animated: u32) -> usize {
    RANGE_WORDS * animated as usize
}
