//! Decoding: any sample of any sub-track, straight from the word stream, with no cursor and no
//! per-instance state. Every read is bounds-checked and returns `None` when the stream is too
//! short (a malformed clip samples as rest); the package reader validates the stream first, so
//! with a checked package nothing here fails.

use glam::{Quat, Vec3};

use super::bits;
use super::layout::{
    segment_table, HEADER_WORDS, HI_AT, HI_BITS, LO_SHIFT, OFFSET_BITS, RANGE_WORDS, REBUILT_WORD,
    SHIFT_AT, SHIFT_BITS, WIDTH_AT, WIDTH_BITS,
};
use super::CompressedClip;
use crate::{SubTrack, SubTrackKind};

/// The three stored components (x, y, z) of one sample.
pub type Components = [f32; 3];

/// Header of one animated sub-track in one segment ([`super::layout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Bit offset of the sub-track's samples from the segment's sample bits.
    pub offset: u32,
    pub shift: u32,
    pub widths: [u32; 3],
    pub hi: [u32; 3],
}

impl Header {
    /// Bits of one sample (x, y and z together).
    pub fn sample_bits(&self) -> u32 {
        self.widths[0] + self.widths[1] + self.widths[2]
    }
}

/// Segments of a clip of `sample_count` samples: `ceil(sample_count / segment_length)`.
pub fn segment_count(sample_count: u32, segment_length: u32) -> Option<u32> {
    (segment_length > 0).then(|| sample_count.div_ceil(segment_length))
}

/// `base + f32(k) · step`: the value of clip-level integer `k`. `step` is a power of two, so the
/// product is exact and one rounding (the add) gives the result, fused or not.
pub fn dequantize(base: f32, step: f32, k: u32) -> f32 {
    base + k as f32 * step
}

/// The quaternion whose component `rebuilt` (0 x, 1 y, 2 z, 3 w) is `√max(0, 1 − a² − b² − c²)`
/// and whose other three are `v`, in order.
pub fn rotation_from_stored(v: Components, rebuilt: u32) -> Quat {
    let [a, b, c] = v;
    let r = (1.0 - (a * a + b * b + c * c)).max(0.0).sqrt();
    match rebuilt {
        0 => Quat::from_xyzw(r, a, b, c),
        1 => Quat::from_xyzw(a, r, b, c),
        2 => Quat::from_xyzw(a, b, r, c),
        _ => Quat::from_xyzw(a, b, c, r),
    }
}

/// The rebuilt component of animated rotation sub-track `a`.
pub fn rebuilt_component(c: &CompressedClip, a: u32) -> Option<u32> {
    let at = (a as usize)
        .checked_mul(RANGE_WORDS)?
        .checked_add(REBUILT_WORD)?;
    c.words.get(at).copied()
}

/// The first word of segment `segment` and the header of animated sub-track `a` in it.
pub fn header(c: &CompressedClip, segment: u32, a: u32) -> Option<(usize, Header)> {
    let table = segment_table(c.animated);
    let start = *c.words.get(table.checked_add(segment as usize)?)? as usize;
    let at = (start as u64 + HEADER_WORDS as u64 * u64::from(a)) * 32;
    let field = |offset: u32, n: u32| bits::read(&c.words, at + u64::from(offset), n);
    let width = |k: u32| field(WIDTH_AT + k * WIDTH_BITS, WIDTH_BITS);
    let hi = |k: u32| field(HI_AT + k * HI_BITS, HI_BITS);
    let header = Header {
        offset: field(0, OFFSET_BITS)?,
        shift: field(SHIFT_AT, SHIFT_BITS)?,
        widths: [width(0)?, width(1)?, width(2)?],
        hi: [hi(0)?, hi(1)?, hi(2)?],
    };
    Some((start, header))
}

/// The clip-level integers `K` (x, y, z) of sample `i` of animated sub-track `a`.
pub fn decode_k(c: &CompressedClip, a: u32, i: u32) -> Option<[u32; 3]> {
    let segment = i.checked_div(c.segment_length)?;
    let local = i - segment * c.segment_length;
    let (start, h) = header(c, segment, a)?;
    let data = (start as u64 + HEADER_WORDS as u64 * u64::from(c.animated)) * 32;
    let mut pos = data + u64::from(h.offset) + u64::from(local) * u64::from(h.sample_bits());
    let mut k = [0u32; 3];
    for (out, (&width, &hi)) in k.iter_mut().zip(h.widths.iter().zip(&h.hi)) {
        let q = bits::read(&c.words, pos, width)?;
        pos += u64::from(width);
        *out = (hi << LO_SHIFT).wrapping_add(q.wrapping_shl(h.shift));
    }
    Some(k)
}

/// The dequantised components of sample `i` of animated sub-track `a`.
pub fn decode_components(c: &CompressedClip, a: u32, i: u32) -> Option<Components> {
    let k = decode_k(c, a, i)?;
    let range = (a as usize).checked_mul(RANGE_WORDS)?;
    let words = c.words.get(range..range.checked_add(RANGE_WORDS)?)?;
    let value = |axis: usize| {
        dequantize(
            f32::from_bits(words[2 * axis]),
            f32::from_bits(words[2 * axis + 1]),
            k[axis],
        )
    };
    Some([value(0), value(1), value(2)])
}

/// `N` raw f32 words at `offset` (a constant sub-track's value).
fn constant<const N: usize>(c: &CompressedClip, offset: u32) -> Option<[f32; N]> {
    let start = offset as usize;
    let words = c.words.get(start..start.checked_add(N)?)?;
    let mut out = [0.0; N];
    for (o, w) in out.iter_mut().zip(words) {
        *o = f32::from_bits(*w);
    }
    Some(out)
}

/// Sample `i` of a t or s sub-track: the constant, or the decoded sample; `None` for Default.
pub fn sample_vec3(c: &CompressedClip, st: SubTrack, i: u32) -> Option<Vec3> {
    match st.kind {
        SubTrackKind::Default => None,
        SubTrackKind::Constant => constant::<3>(c, st.offset).map(Vec3::from_array),
        SubTrackKind::Animated => decode_components(c, st.offset, i).map(Vec3::from_array),
    }
}

/// Sample `i` of a q sub-track: the constant (x, y, z, w), or the decoded sample with its rebuilt
/// component; `None` for Default.
pub fn sample_quat(c: &CompressedClip, st: SubTrack, i: u32) -> Option<Quat> {
    match st.kind {
        SubTrackKind::Default => None,
        SubTrackKind::Constant => constant::<4>(c, st.offset).map(Quat::from_array),
        SubTrackKind::Animated => Some(rotation_from_stored(
            decode_components(c, st.offset, i)?,
            rebuilt_component(c, st.offset)?,
        )),
    }
}
