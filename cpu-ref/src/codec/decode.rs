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
use crate::transform::nlerp_shortest;
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

/// The first word of segment `segment`.
fn segment_start(c: &CompressedClip, segment: u32) -> Option<usize> {
    let table = segment_table(c.animated);
    Some(*c.words.get(table.checked_add(segment as usize)?)? as usize)
}

/// The first word of segment `segment` and the header of animated sub-track `a` in it.
pub fn header(c: &CompressedClip, segment: u32, a: u32) -> Option<(usize, Header)> {
    let start = segment_start(c, segment)?;
    Some((start, header_at(c, start, a)?))
}

/// The header of animated sub-track `a` in the segment that starts at word `start`: two whole
/// words (a header starts on a word boundary), fields cut out of them.
fn header_at(c: &CompressedClip, start: usize, a: u32) -> Option<Header> {
    let at = start.checked_add(HEADER_WORDS.checked_mul(a as usize)?)?;
    let pair = c.words.get(at..at.checked_add(2)?)?;
    let bits = u64::from(pair[0]) | u64::from(pair[1]) << 32;
    let field = |offset: u32, n: u32| ((bits >> offset) & ((1u64 << n) - 1)) as u32;
    let width = |k: u32| field(WIDTH_AT + k * WIDTH_BITS, WIDTH_BITS);
    let hi = |k: u32| field(HI_AT + k * HI_BITS, HI_BITS);
    Some(Header {
        offset: field(0, OFFSET_BITS),
        shift: field(SHIFT_AT, SHIFT_BITS),
        widths: [width(0), width(1), width(2)],
        hi: [hi(0), hi(1), hi(2)],
    })
}

/// The clip-level integers `K` (x, y, z) of sample `i` of animated sub-track `a`.
pub fn decode_k(c: &CompressedClip, a: u32, i: u32) -> Option<[u32; 3]> {
    let at = SampleAt::new(c, i)?;
    k_in_segment(c, &at, &header_at(c, at.start, a)?)
}

/// Where sample `i` of every animated sub-track lies: its segment's first word, the segment's
/// sample bits and its index in the segment. The same for all sub-tracks, so a whole pose finds
/// it once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SampleAt {
    /// The segment's first word.
    pub start: usize,
    /// Bit position of the segment's sample bits.
    pub data: u64,
    /// Index of the sample in its segment.
    pub local: u32,
}

impl SampleAt {
    /// `None` when the segment table has no segment for `i` (a malformed stream).
    fn new(c: &CompressedClip, i: u32) -> Option<SampleAt> {
        let segment = i.checked_div(c.segment_length)?;
        let start = segment_start(c, segment)?;
        Some(SampleAt {
            start,
            data: (start as u64 + HEADER_WORDS as u64 * u64::from(c.animated)) * 32,
            local: i - segment * c.segment_length,
        })
    }
}

/// Where the two samples an interpolation brackets lie ([`SampleAt`] of each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PairAt {
    pub first: SampleAt,
    pub second: SampleAt,
}

impl PairAt {
    /// `None` when either sample has no segment.
    pub(crate) fn new(c: &CompressedClip, i0: u32, i1: u32) -> Option<PairAt> {
        Some(PairAt {
            first: SampleAt::new(c, i0)?,
            second: SampleAt::new(c, i1)?,
        })
    }
}

/// `K` of a sample at `at`, under its segment's header `h`: the sample's bits (x, y, z together,
/// at most 3 × 31, widths being 5-bit fields) checked to lie in the stream once, then cut out of
/// one window of the words they touch.
#[inline]
fn k_in_segment(c: &CompressedClip, at: &SampleAt, h: &Header) -> Option<[u32; 3]> {
    let [wx, wy, wz] = h.widths;
    let bits = h.sample_bits();
    let pos = at.data + u64::from(h.offset) + u64::from(at.local) * u64::from(bits);
    let word = usize::try_from(pos / 32).ok()?;
    let window = match c.words.get(word..word.saturating_add(4)) {
        // The sample's bits (at most 31 + 93 from the word's start) lie in these four words.
        Some(&[a, b, c, d]) => bits::window_of([a, b, c, d], pos),
        _ if bits > 0 && pos + u64::from(bits) > c.words.len() as u64 * 32 => return None,
        _ => bits::window(&c.words, pos),
    };
    let mask = |n: u32| ((1u64 << n) - 1) as u32;
    // x and y end by bit 62 (widths are below 32): cut from the low 64 bits.
    let low = window as u64;
    let q = [
        low as u32 & mask(wx),
        (low >> wx) as u32 & mask(wy),
        (window >> (wx + wy)) as u32 & mask(wz),
    ];
    Some(std::array::from_fn(|axis| {
        (h.hi[axis] << LO_SHIFT).wrapping_add(q[axis].wrapping_shl(h.shift))
    }))
}

/// The range words (base, step per axis, rebuilt component) of animated sub-track `a`.
fn range_words(c: &CompressedClip, a: u32) -> Option<&[u32; RANGE_WORDS]> {
    let range = (a as usize).checked_mul(RANGE_WORDS)?;
    c.words
        .get(range..range.checked_add(RANGE_WORDS)?)?
        .try_into()
        .ok()
}

/// `K` dequantised with the range words `words`.
fn dequantized(words: &[u32; RANGE_WORDS], k: [u32; 3]) -> Components {
    let value = |axis: usize| {
        dequantize(
            f32::from_bits(words[2 * axis]),
            f32::from_bits(words[2 * axis + 1]),
            k[axis],
        )
    };
    [value(0), value(1), value(2)]
}

/// The dequantised components of sample `i` of animated sub-track `a`.
pub fn decode_components(c: &CompressedClip, a: u32, i: u32) -> Option<Components> {
    let k = decode_k(c, a, i)?;
    Some(dequantized(range_words(c, a)?, k))
}

/// The dequantised components of samples `i0` and `i1` of animated sub-track `a` (the two
/// samples an interpolation brackets): the range words and, when both lie in one segment, the
/// segment's header are read once. The same values as two [`decode_components`].
pub fn decode_pair(
    c: &CompressedClip,
    a: u32,
    i0: u32,
    i1: u32,
) -> Option<(Components, Components)> {
    decode_pair_at(c, a, &PairAt::new(c, i0, i1)?)
}

/// [`decode_pair`] of the samples at `at`.
fn decode_pair_at(c: &CompressedClip, a: u32, at: &PairAt) -> Option<(Components, Components)> {
    pair_with(c, range_words(c, a)?, a, at)
}

/// [`decode_pair_at`] with sub-track `a`'s range words already read.
#[inline(always)]
fn pair_with(
    c: &CompressedClip,
    words: &[u32; RANGE_WORDS],
    a: u32,
    at: &PairAt,
) -> Option<(Components, Components)> {
    let h0 = header_at(c, at.first.start, a)?;
    let k0 = k_in_segment(c, &at.first, &h0)?;
    let k1 = if at.second.start == at.first.start {
        k_in_segment(c, &at.second, &h0)?
    } else {
        k_in_segment(c, &at.second, &header_at(c, at.second.start, a)?)?
    };
    Some((dequantized(words, k0), dequantized(words, k1)))
}

/// `N` raw f32 words at `offset` (a constant sub-track's value).
#[inline]
pub(crate) fn constant<const N: usize>(c: &CompressedClip, offset: u32) -> Option<[f32; N]> {
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

/// A t or s sub-track at `at`, lerped by `u`: the constant, or the two decoded samples
/// interpolated; `None` for Default (and for an animated one without `at`).
// Inlined: most sub-tracks of a pose are Default or Constant, a few instructions each.
#[inline]
pub(crate) fn vec3_at(
    c: &CompressedClip,
    st: SubTrack,
    at: Option<&PairAt>,
    u: f32,
) -> Option<Vec3> {
    match st.kind {
        SubTrackKind::Default => None,
        SubTrackKind::Constant => constant::<3>(c, st.offset).map(Vec3::from_array),
        SubTrackKind::Animated => animated_vec3(c, st.offset, at?, u),
    }
}

fn animated_vec3(c: &CompressedClip, a: u32, at: &PairAt, u: f32) -> Option<Vec3> {
    let (v0, v1) = decode_pair_at(c, a, at)?;
    Some(Vec3::from_array(v0).lerp(Vec3::from_array(v1), u))
}

/// A q sub-track at `at`, nlerp-shortest by `u`: the constant, or the two decoded samples, each
/// with its rebuilt component, interpolated; `None` for Default (and for an animated one
/// without `at`).
#[inline]
pub(crate) fn quat_at(
    c: &CompressedClip,
    st: SubTrack,
    at: Option<&PairAt>,
    u: f32,
) -> Option<Quat> {
    match st.kind {
        SubTrackKind::Default => None,
        SubTrackKind::Constant => constant::<4>(c, st.offset).map(Quat::from_array),
        SubTrackKind::Animated => animated_quat(c, st.offset, at?, u),
    }
}

fn animated_quat(c: &CompressedClip, a: u32, at: &PairAt, u: f32) -> Option<Quat> {
    let words = range_words(c, a)?;
    let rebuilt = words[REBUILT_WORD];
    let (v0, v1) = pair_with(c, words, a, at)?;
    Some(nlerp_shortest(
        rotation_from_stored(v0, rebuilt),
        rotation_from_stored(v1, rebuilt),
        u,
    ))
}
