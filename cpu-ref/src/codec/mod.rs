//! The compressed clip encoding (DESIGN.md §7, docs/codec.md): an ACL-style codec that decodes
//! any sample of any sub-track with random access and no per-instance state, on the CPU here and
//! in WGSL (throng-shaders `codec.wgsl`) from the same bits with the same dequantised values.
//! After Frechette, "Animation Compression Library" (https://github.com/nfrechette/acl).
//!
//! A compressed clip keeps the reference encoding's sub-track table (`Clip::sub_tracks`, kinds
//! Default / Constant / Animated) and replaces `Clip::values` with one stream of u32 words
//! ([`CompressedClip::words`]): per-clip ranges, a segment table, constants and segments of
//! [`CompressedClip::segment_length`] samples, each with a 64-bit header per animated sub-track
//! and its bit-packed samples. [`layout`] fixes the byte and bit layout, [`bits`] reads it and
//! [`decode`] turns it back into values.
//!
//! Values: t and s are stored as (x, y, z); q as three of its four components, the fourth rebuilt
//! as `√max(0, 1 − a² − b² − c²)` with the sign of q chosen to make it non-negative. The encoder
//! rebuilds, per sub-track, the component that stays farthest from zero over the clip (w unless
//! the joint turns near 180°, where a rebuilt w would lose its precision: the error of a rebuilt
//! component grows as 1 / its value; "smallest three" chosen per clip rather than per sample). Each stored component is a 24-bit
//! clip-level integer `K` on a power-of-two grid, `value = base + f32(K) · step`, so the product
//! is exact and the result is the same with or without a fused multiply-add; a segment stores `K`
//! as `(hi << 16) + (k << shift)` with a per-component width for `k`.

pub mod batch;
pub mod bits;
pub mod decode;
pub mod layout;
mod plan;

pub(crate) use decode::{constant, quat_at, vec3_at, PairAt};
pub use decode::{
    decode_components, decode_k, decode_pair, dequantize, header, rebuilt_component,
    rotation_from_stored, sample_quat, sample_vec3, segment_count, Components, Header,
};
pub(crate) use plan::Part;
pub use plan::PosePlan;

use crate::clip::SubTrack;

/// A clip's compressed data (docs/codec.md). `Clip::sub_tracks[t].offset` is, for an Animated
/// sub-track, its index among the clip's animated sub-tracks (in sub-track order), and for a
/// Constant one the index in `words` of its value (3 words for t/s, 4 for q, raw f32 bits).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompressedClip {
    /// Samples per segment (at least 1); the last segment may hold fewer.
    pub segment_length: u32,
    /// Number of animated sub-tracks.
    pub animated: u32,
    /// The stream: ranges, segment table, constants, segments ([`layout`]).
    pub words: Vec<u32>,
    /// The clip's sub-tracks grouped for decoding a whole pose: derived from its sub-track
    /// table ([`PosePlan::new`]), not stored in a package.
    pub plan: PosePlan,
}

impl CompressedClip {
    /// The compressed data of a clip with sub-track table `sub_tracks`, its plan made.
    pub fn new(
        segment_length: u32,
        animated: u32,
        words: Vec<u32>,
        sub_tracks: &[SubTrack],
    ) -> Self {
        CompressedClip {
            segment_length,
            animated,
            words,
            plan: PosePlan::new(sub_tracks, animated),
        }
    }
}

/// Version of the compressed encoding written by this build.
pub const COMPRESSED_CODEC_VERSION: u32 = 1;
