//! The animated sub-tracks of a whole pose decoded together with AVX2 (x86-64, checked at run
//! time): one lane per sub-track, eight to a vector, every step of [`super::decode`] (the
//! header's fields, the samples' bit positions, the bits, the dequantisation, for rotations the
//! rebuilt component and nlerp-shortest, for translations and scales the lerp) done for eight
//! sub-tracks by one instruction. Only the loads are lane by lane (on the development machine an
//! eight-lane gather cost more than eight loads). Each step runs over all the vectors of a batch
//! before the next, so that the vectors' chains of dependent steps overlap rather than wait on
//! each other.
//!
//! The results are those of the scalar decoder bit for bit: the same integer steps, and the same
//! `f32` operations in the same order, each rounded once (no fused multiply-add), down to glam's
//! order of summation in `Quat::dot` and `normalize` on x86-64. Without AVX2, and where a batch
//! cannot be decoded together, the caller decodes joint by joint.

use super::decode::PairAt;
use super::CompressedClip;
use crate::Trs;

/// Sub-tracks one vector holds.
const LANES: usize = 8;
/// Vectors a batch holds.
const VECTORS: usize = 4;
/// Sub-tracks a batch holds (at most 32: [`Batch::scales`] has a bit each).
pub(crate) const MOST: usize = LANES * VECTORS;
const _: () = assert!(MOST <= 32);

/// What a [`Batch`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Rotations,
    /// Translations and scales.
    Vec3s,
}

/// Animated sub-tracks of a pose, all of one [`Kind`]: their indices among the clip's animated
/// sub-tracks and their joints, in order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Batch {
    pub kind: Kind,
    pub tracks: [u32; MOST],
    /// Joints are below `Skeleton::MAX_JOINTS`, 65 535.
    pub joints: [u16; MOST],
    /// Bit `l` set: sub-track `l` is a scale (else a translation or a rotation).
    pub scales: u32,
    pub len: usize,
}

impl Batch {
    /// An empty batch of `kind`.
    pub fn new(kind: Kind) -> Self {
        Batch {
            kind,
            tracks: [0; MOST],
            joints: [0; MOST],
            scales: 0,
            len: 0,
        }
    }

    /// Adds sub-track `a` of joint `joint`, a scale when `scale`; whether the batch is full.
    #[inline(always)]
    pub fn push(&mut self, a: u32, joint: u16, scale: bool) -> bool {
        self.tracks[self.len] = a;
        self.joints[self.len] = joint;
        self.scales |= u32::from(scale) << self.len;
        self.len += 1;
        self.len == MOST
    }

    /// Empties the batch.
    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
        self.scales = 0;
    }

    /// The sub-tracks, the last vector's unused lanes repeating the first (whose reads are
    /// known to be in the stream once it is).
    #[cfg(target_arch = "x86_64")]
    fn padded_tracks(&self) -> [u32; MOST] {
        let mut tracks = self.tracks;
        for l in self.len..self.len.next_multiple_of(LANES).min(MOST) {
            tracks[l] = tracks[0];
        }
        tracks
    }
}

/// Whether a whole pose ([`crate::clip::sample_clip`]) decodes its animated sub-tracks together
/// on this CPU (x86-64 with AVX2); otherwise joint by joint.
#[inline]
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Writes the batch's sub-tracks at `at` into their joints of `local`, as [`super::quat_at`]
/// (rotations, nlerp-shortest by `u`) and [`super::vec3_at`] (translations and scales, lerped)
/// give them. False, having written nothing, without AVX2 and when a sub-track is malformed or
/// reads near the end of the stream: the caller then decodes each alone.
#[inline]
pub(crate) fn write(
    c: &CompressedClip,
    at: &PairAt,
    u: f32,
    batch: &Batch,
    local: &mut [Trs],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if available() {
        // SAFETY: the CPU has AVX2 (`available`).
        return unsafe {
            match batch.kind {
                Kind::Rotations => avx2::rotations(c, at, u, batch, local),
                Kind::Vec3s => avx2::vec3s(c, at, u, batch, local),
            }
        };
    }
    let _ = (c, at, u, batch, local);
    false
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    use bytemuck::cast;
    use glam::{Quat, Vec3};

    use super::{Batch, LANES, MOST, VECTORS};
    use crate::codec::decode::{PairAt, SampleAt};
    use crate::codec::layout::{
        HEADER_WORDS, HI_AT, HI_BITS, LO_SHIFT, MAX_WIDTH, MAX_WIDTH_PLUS_SHIFT, OFFSET_BITS,
        RANGE_WORDS, SHIFT_AT, SHIFT_BITS, WIDTH_AT, WIDTH_BITS,
    };
    use crate::codec::CompressedClip;
    use crate::Trs;

    type Ints = __m256i;
    type Floats = __m256;

    /// One field of each lane's 64-bit header (`low | high << 32`) at bit `at` (below 32 or,
    /// for the fields of the high word, 32 and above), `n` bits.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn field(low: Ints, high: Ints, at: u32, n: u32) -> Ints {
        let mask = _mm256_set1_epi32(((1u64 << n) - 1) as i32);
        let bits = if at >= 32 {
            _mm256_srlv_epi32(high, _mm256_set1_epi32((at - 32) as i32))
        } else {
            // A field that starts in the low word may run into the high one.
            let low = _mm256_srlv_epi32(low, _mm256_set1_epi32(at as i32));
            let high = _mm256_sllv_epi32(high, _mm256_set1_epi32((32 - at) as i32));
            _mm256_or_si256(low, high)
        };
        _mm256_and_si256(bits, mask)
    }

    /// Whether any lane of `a` is above `limit`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn any_above(a: Ints, limit: u32) -> bool {
        let over = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(limit as i32));
        _mm256_movemask_epi8(over) != 0
    }

    /// Columns of the 8 × 8 matrix whose rows are `r`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn transpose(r: [Ints; 8]) -> [Ints; 8] {
        // Rows (0, 1), (2, 3), ... interleaved, then pairs of those: u0 holds column 0 of rows
        // 0..4 in its low 128 bits and column 4 in its high, u1 columns 1 and 5, and so on.
        let words = |a, b| (_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b));
        let pairs = |a, b| (_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b));
        let ((t0, t1), (t2, t3)) = (words(r[0], r[1]), words(r[2], r[3]));
        let ((t4, t5), (t6, t7)) = (words(r[4], r[5]), words(r[6], r[7]));
        let ((u0, u1), (u2, u3)) = (pairs(t0, t2), pairs(t1, t3));
        let ((u4, u5), (u6, u7)) = (pairs(t4, t6), pairs(t5, t7));
        [
            _mm256_permute2x128_si256::<0x20>(u0, u4),
            _mm256_permute2x128_si256::<0x20>(u1, u5),
            _mm256_permute2x128_si256::<0x20>(u2, u6),
            _mm256_permute2x128_si256::<0x20>(u3, u7),
            _mm256_permute2x128_si256::<0x31>(u0, u4),
            _mm256_permute2x128_si256::<0x31>(u1, u5),
            _mm256_permute2x128_si256::<0x31>(u2, u6),
            _mm256_permute2x128_si256::<0x31>(u3, u7),
        ]
    }

    /// `a · b` of quaternions given by components, summed as glam's SSE2 `dot4` sums them:
    /// `(x·x' + z·z') + (y·y' + w·w')`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn dot(a: [Floats; 4], b: [Floats; 4]) -> Floats {
        let xz = _mm256_add_ps(_mm256_mul_ps(a[0], b[0]), _mm256_mul_ps(a[2], b[2]));
        let yw = _mm256_add_ps(_mm256_mul_ps(a[1], b[1]), _mm256_mul_ps(a[3], b[3]));
        _mm256_add_ps(xz, yw)
    }

    /// Per lane: a sub-track's clip-level ranges and rebuilt component.
    #[derive(Clone, Copy)]
    struct Ranges {
        base: [Floats; 3],
        step: [Floats; 3],
        /// Lanes whose rebuilt component is x, y, z; x or y; x, y or z.
        rebuilt: [Floats; 5],
    }

    /// Per lane: a sub-track's header fields in one segment.
    #[derive(Clone, Copy)]
    struct Segment {
        offset: Ints,
        width: [Ints; 3],
        /// Bits of one sample, `width` added up, and each width's mask.
        bits: Ints,
        masks: [Ints; 3],
        shift: Ints,
        /// `K` of the segment's base per axis.
        base: [Ints; 3],
    }

    /// Both samples of every lane: as a rotation's x, y, z and w (`rotation_from_stored`) when
    /// `rotation`, else the three components and a zero. Written for `n.div_ceil(LANES)`
    /// vectors; false, having written nothing, when a read would leave the stream or a lane is
    /// malformed.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn decode(
        c: &CompressedClip,
        at: &PairAt,
        tracks: &[u32; MOST],
        n: usize,
        rotation: bool,
        out: &mut [[MaybeUninit<[Floats; 4]>; VECTORS]; 2],
    ) -> bool {
        let vectors = n.div_ceil(LANES);
        let (first, second) = (at.first, at.second);
        // Bit positions are computed in u32 lanes: they must not wrap, whatever the fields.
        let most_bits = |s: &SampleAt| {
            s.data + (1 << OFFSET_BITS) + u64::from(s.local + 1) * u64::from(3 * MAX_WIDTH)
        };
        if vectors > VECTORS || most_bits(&first).max(most_bits(&second)) > 1 << 32 {
            return false;
        }
        // Every lane's header and range words lie in the stream: checked once, for the largest
        // sub-track (below 2^32, so neither end overflows). A lane reads its 7 range words and
        // the one after them (the next sub-track's, or the segment table's first) as one row.
        let words = &c.words[..];
        let last = tracks[..vectors * LANES].iter().copied().max().unwrap_or(0) as usize;
        let headers_end = |start: usize| start.saturating_add(HEADER_WORDS * (last + 1));
        let ranges_end = last * RANGE_WORDS + 8;
        if headers_end(first.start)
            .max(headers_end(second.start))
            .max(ranges_end)
            > words.len()
        {
            return false;
        }
        // Each step's results for every vector, written before they are read (left
        // uninitialised: zeroing them cost about as much as a step).
        let mut ranges = [MaybeUninit::<Ranges>::uninit(); VECTORS];
        let mut segments = [[MaybeUninit::<Segment>::uninit(); VECTORS]; 2];
        let straddles = usize::from(second.start != first.start);
        for v in 0..vectors {
            let lanes: &[u32; LANES] = tracks[v * LANES..][..LANES]
                .try_into()
                .unwrap_or(&[0; LANES]);
            // SAFETY: the range words and headers lie in the stream, checked above.
            ranges[v].write(unsafe { read_ranges(words, lanes) });
            for (s, sample) in [first, second][..1 + straddles].iter().enumerate() {
                match unsafe { read_segment(words, sample.start, lanes) } {
                    Some(segment) => segments[s][v].write(segment),
                    None => return false,
                };
            }
        }
        let bytes: &[u8] = bytemuck::cast_slice(words);
        for (s, sample) in [first, second].iter().enumerate() {
            for v in 0..vectors {
                // SAFETY: the loop above wrote `ranges[v]` and `segments[s * straddles][v]` for
                // every `v < vectors`.
                let (segment, range) = unsafe {
                    (
                        segments[s * straddles][v].assume_init_ref(),
                        ranges[v].assume_init_ref(),
                    )
                };
                let Some(bits) = read_bits(segment, bytes, sample) else {
                    return false;
                };
                let [a, b, c] = values(segment, range, &bits);
                out[s][v].write(if rotation {
                    rebuilt(range, [a, b, c])
                } else {
                    [a, b, c, _mm256_setzero_ps()]
                });
            }
        }
        true
    }

    /// The rotations of the batch's sub-tracks into their joints of `local`
    /// ([`super::write`]).
    #[target_feature(enable = "avx2")]
    pub(super) fn rotations(
        c: &CompressedClip,
        at: &PairAt,
        u: f32,
        batch: &Batch,
        local: &mut [Trs],
    ) -> bool {
        let (joints, n) = (&batch.joints, batch.len);
        let mut samples = [[MaybeUninit::uninit(); VECTORS]; 2];
        if !decode(c, at, &batch.padded_tracks(), n, true, &mut samples) {
            return false;
        }
        for v in 0..n.div_ceil(LANES) {
            // SAFETY: `decode` wrote both samples of every vector.
            let (q0, q1) = unsafe { (samples[0][v].assume_init(), samples[1][v].assume_init()) };
            let [x, y, z, w] = nlerp_shortest(q0, q1, u);
            // Lanes to quaternions: (x y, z w) pairs, then whole quaternions, lanes l and
            // l + 4 in each vector's two halves.
            let (xy_lo, xy_hi) = (_mm256_unpacklo_ps(x, y), _mm256_unpackhi_ps(x, y));
            let (zw_lo, zw_hi) = (_mm256_unpacklo_ps(z, w), _mm256_unpackhi_ps(z, w));
            let (xy_lo, xy_hi) = (_mm256_castps_pd(xy_lo), _mm256_castps_pd(xy_hi));
            let (zw_lo, zw_hi) = (_mm256_castps_pd(zw_lo), _mm256_castps_pd(zw_hi));
            let q: [[[f32; 4]; 2]; 4] = [
                cast(_mm256_unpacklo_pd(xy_lo, zw_lo)),
                cast(_mm256_unpackhi_pd(xy_lo, zw_lo)),
                cast(_mm256_unpacklo_pd(xy_hi, zw_hi)),
                cast(_mm256_unpackhi_pd(xy_hi, zw_hi)),
            ];
            let joints = &joints[v * LANES..][..LANES];
            for (l, &j) in joints.iter().enumerate().take(n - v * LANES) {
                if let Some(joint) = local.get_mut(j as usize) {
                    joint.rotation = Quat::from_array(q[l % 4][l / 4]);
                }
            }
        }
        true
    }

    /// The translations and scales of the batch's sub-tracks into their joints of `local`
    /// ([`super::write`]).
    #[target_feature(enable = "avx2")]
    pub(super) fn vec3s(
        c: &CompressedClip,
        at: &PairAt,
        u: f32,
        batch: &Batch,
        local: &mut [Trs],
    ) -> bool {
        let (joints, scales, n) = (&batch.joints, batch.scales, batch.len);
        let mut samples = [[MaybeUninit::uninit(); VECTORS]; 2];
        if !decode(c, at, &batch.padded_tracks(), n, false, &mut samples) {
            return false;
        }
        // `Vec3::lerp`: `v0 · (1 − u) + v1 · u` per component.
        let (keep, take) = (_mm256_set1_ps(1.0 - u), _mm256_set1_ps(u));
        for v in 0..n.div_ceil(LANES) {
            // SAFETY: `decode` wrote both samples of every vector.
            let (v0, v1) = unsafe { (samples[0][v].assume_init(), samples[1][v].assume_init()) };
            let lerp = |k: usize| -> [f32; LANES] {
                cast(_mm256_add_ps(
                    _mm256_mul_ps(v0[k], keep),
                    _mm256_mul_ps(v1[k], take),
                ))
            };
            let (x, y, z) = (lerp(0), lerp(1), lerp(2));
            let joints = &joints[v * LANES..][..LANES];
            for (l, &j) in joints.iter().enumerate().take(n - v * LANES) {
                let value = Vec3::new(x[l], y[l], z[l]);
                if let Some(joint) = local.get_mut(j as usize) {
                    if scales >> (v * LANES + l) & 1 == 1 {
                        joint.scale = value;
                    } else {
                        joint.translation = value;
                    }
                }
            }
        }
        true
    }

    /// The range words of the lanes' sub-tracks `tracks`.
    ///
    /// # Safety
    /// Every lane's row, the 8 words at `7 · tracks[l]`, lies in `words`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn read_ranges(words: &[u32], tracks: &[u32; LANES]) -> Ranges {
        let row = |l: usize| {
            let at = tracks[l] as usize * RANGE_WORDS;
            // SAFETY: the caller's.
            unsafe { _mm256_loadu_si256(words.as_ptr().add(at).cast()) }
        };
        let [base_x, step_x, base_y, step_y, base_z, step_z, rebuilt, _] = transpose([
            row(0),
            row(1),
            row(2),
            row(3),
            row(4),
            row(5),
            row(6),
            row(7),
        ]);
        Ranges {
            base: [
                _mm256_castsi256_ps(base_x),
                _mm256_castsi256_ps(base_y),
                _mm256_castsi256_ps(base_z),
            ],
            step: [
                _mm256_castsi256_ps(step_x),
                _mm256_castsi256_ps(step_y),
                _mm256_castsi256_ps(step_z),
            ],
            rebuilt: {
                let is =
                    |k: i32| _mm256_castsi256_ps(_mm256_cmpeq_epi32(rebuilt, _mm256_set1_epi32(k)));
                let (x, y, z) = (is(0), is(1), is(2));
                let xy = _mm256_or_ps(x, y);
                [x, y, z, xy, _mm256_or_ps(xy, z)]
            },
        }
    }

    /// The fields of the lanes' headers in the segment that starts at word `start`; `None` for
    /// widths and shifts the reader refuses (the scalar decoder's wrapping arithmetic would
    /// then differ from these lanes', so such a batch goes to it).
    ///
    /// # Safety
    /// Every lane's header, the two words at `start + 2 · tracks[l]`, lies in `words`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn read_segment(words: &[u32], start: usize, tracks: &[u32; LANES]) -> Option<Segment> {
        let header = |l: usize| {
            let at = start + HEADER_WORDS * tracks[l] as usize;
            // SAFETY: the caller's.
            unsafe { words.as_ptr().add(at).cast::<i64>().read_unaligned() }
        };
        // Lanes 0..4 and 4..8 as u64, then split into their low and high words.
        let h0 = _mm256_setr_epi64x(header(0), header(1), header(2), header(3));
        let h1 = _mm256_setr_epi64x(header(4), header(5), header(6), header(7));
        let halves = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        let (h0, h1) = (
            _mm256_permutevar8x32_epi32(h0, halves),
            _mm256_permutevar8x32_epi32(h1, halves),
        );
        let low = _mm256_permute2x128_si256::<0x20>(h0, h1);
        let high = _mm256_permute2x128_si256::<0x31>(h0, h1);
        let shift = field(low, high, SHIFT_AT, SHIFT_BITS);
        let width = [
            field(low, high, WIDTH_AT, WIDTH_BITS),
            field(low, high, WIDTH_AT + WIDTH_BITS, WIDTH_BITS),
            field(low, high, WIDTH_AT + 2 * WIDTH_BITS, WIDTH_BITS),
        ];
        let widest = _mm256_max_epu32(_mm256_max_epu32(width[0], width[1]), width[2]);
        let widest_shifted = _mm256_add_epi32(widest, shift);
        if any_above(widest, MAX_WIDTH) || any_above(widest_shifted, MAX_WIDTH_PLUS_SHIFT) {
            return None;
        }
        let hi = |k: u32| {
            let hi = field(low, high, HI_AT + k * HI_BITS, HI_BITS);
            _mm256_slli_epi32::<{ LO_SHIFT as i32 }>(hi)
        };
        let one = _mm256_set1_epi32(1);
        let mask = |w: Ints| _mm256_sub_epi32(_mm256_sllv_epi32(one, w), one);
        Some(Segment {
            offset: field(low, high, 0, OFFSET_BITS),
            width,
            bits: _mm256_add_epi32(_mm256_add_epi32(width[0], width[1]), width[2]),
            masks: [mask(width[0]), mask(width[1]), mask(width[2])],
            shift,
            base: [hi(0), hi(1), hi(2)],
        })
    }

    /// The bits of sample `s` of every lane, x, y and z each shifted down to bit 0 (not yet
    /// cut to its width); `None` when a read would leave the stream.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn read_bits(g: &Segment, bytes: &[u8], s: &SampleAt) -> Option<[Ints; 3]> {
        let data = _mm256_set1_epi32(s.data as u32 as i32);
        let local = _mm256_set1_epi32(s.local as i32);
        let pos = _mm256_add_epi32(
            _mm256_add_epi32(data, g.offset),
            _mm256_mullo_epi32(local, g.bits),
        );
        let byte = _mm256_srli_epi32::<3>(pos);
        let last_byte = most(byte) as usize;
        // Bit positions within each lane's window, which starts at the byte the sample's first
        // bit lies in.
        let x = _mm256_and_si256(pos, _mm256_set1_epi32(7));
        let y = _mm256_add_epi32(x, g.width[0]);
        let z = _mm256_add_epi32(y, g.width[1]);
        // Most samples (7–14 bits a component at the standard profile) fit in the eight bytes
        // from their first: one load a lane for all three components.
        let fits = !any_above(_mm256_add_epi32(z, g.width[2]), 64);
        if fits && last_byte + 8 <= bytes.len() {
            // SAFETY: `byte[l] + 8 <= bytes.len()`, just checked for the largest.
            return Some(unsafe { from_eight_bytes(bytes, cast(byte), [x, y, z]) });
        }
        // Else each component from the four bytes from the one its first bit lies in (7 + 24
        // bits). z's are the last.
        let pos_y = _mm256_add_epi32(pos, g.width[0]);
        let pos_z = _mm256_add_epi32(pos_y, g.width[1]);
        if most(_mm256_srli_epi32::<3>(pos_z)) as usize + 4 > bytes.len() {
            return None;
        }
        let seven = _mm256_set1_epi32(7);
        let component = |pos: Ints| {
            let byte: [u32; LANES] = cast(_mm256_srli_epi32::<3>(pos));
            // SAFETY: `byte[l] + 4 <= bytes.len()`, checked above for the last.
            let four = |l: usize| unsafe { unaligned::<i32>(bytes, byte[l]) };
            let words = _mm256_setr_epi32(
                four(0),
                four(1),
                four(2),
                four(3),
                four(4),
                four(5),
                four(6),
                four(7),
            );
            _mm256_srlv_epi32(words, _mm256_and_si256(pos, seven))
        };
        Some([component(pos), component(pos_y), component(pos_z)])
    }

    /// The `T` whose bytes start at `bytes[at]`, read unaligned.
    ///
    /// # Safety
    /// `at + size_of::<T>() <= bytes.len()`.
    #[inline(always)]
    unsafe fn unaligned<T: Copy>(bytes: &[u8], at: u32) -> T {
        // SAFETY: the caller's.
        unsafe { bytes.as_ptr().add(at as usize).cast::<T>().read_unaligned() }
    }

    /// Each lane's eight bytes from `byte[l]`, cut at the bit positions `at` (x, y, z) within
    /// them: the bits from each shifted down to bit 0, the low 32 of them kept.
    ///
    /// # Safety
    /// Every `byte[l] + 8 <= bytes.len()`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn from_eight_bytes(bytes: &[u8], byte: [u32; LANES], at: [Ints; 3]) -> [Ints; 3] {
        // SAFETY: the caller's.
        let eight = |l: usize| unsafe { unaligned::<i64>(bytes, byte[l]) };
        // Lanes (0, 1, 4, 5) and (2, 3, 6, 7) as u64: the order in which `unpacklo` and
        // `unpackhi` widen a vector's shift counts, and in which `shuffle_ps` puts their low
        // halves back, so no lane is moved across the vector's halves.
        let a = _mm256_setr_epi64x(eight(0), eight(1), eight(4), eight(5));
        let b = _mm256_setr_epi64x(eight(2), eight(3), eight(6), eight(7));
        let zero = _mm256_setzero_si256();
        at.map(|at| {
            let a = _mm256_srlv_epi64(a, _mm256_unpacklo_epi32(at, zero));
            let b = _mm256_srlv_epi64(b, _mm256_unpackhi_epi32(at, zero));
            let low =
                _mm256_shuffle_ps::<0b10_00_10_00>(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b));
            _mm256_castps_si256(low)
        })
    }

    /// Every lane's three stored components from their bits (`dequantize`).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn values(g: &Segment, v: &Ranges, bits: &[Ints; 3]) -> [Floats; 3] {
        let value = |k: usize| {
            let k_clip = _mm256_add_epi32(
                g.base[k],
                _mm256_sllv_epi32(_mm256_and_si256(bits[k], g.masks[k]), g.shift),
            );
            _mm256_add_ps(
                v.base[k],
                _mm256_mul_ps(_mm256_cvtepi32_ps(k_clip), v.step[k]),
            )
        };
        [value(0), value(1), value(2)]
    }

    /// Every lane's rotation from its three stored components, as a quaternion's x, y, z and w
    /// (`rotation_from_stored`).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn rebuilt(v: &Ranges, [a, b, c]: [Floats; 3]) -> [Floats; 4] {
        let squares = _mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(a, a), _mm256_mul_ps(b, b)),
            _mm256_mul_ps(c, c),
        );
        let r = _mm256_sqrt_ps(_mm256_max_ps(
            _mm256_sub_ps(_mm256_set1_ps(1.0), squares),
            _mm256_setzero_ps(),
        ));
        let [x, y, z, xy, xyz] = v.rebuilt;
        [
            _mm256_blendv_ps(a, r, x),
            _mm256_blendv_ps(_mm256_blendv_ps(b, r, y), a, x),
            _mm256_blendv_ps(_mm256_blendv_ps(c, r, z), b, xy),
            _mm256_blendv_ps(r, c, xyz),
        ]
    }

    /// The largest of the eight u32 lanes of `a`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn most(a: Ints) -> u32 {
        let a = _mm256_max_epu32(a, _mm256_permute2x128_si256::<0x01>(a, a));
        let a = _mm256_max_epu32(a, _mm256_shuffle_epi32::<0b01_00_11_10>(a));
        let a = _mm256_max_epu32(a, _mm256_shuffle_epi32::<0b10_11_00_01>(a));
        _mm256_cvtsi256_si32(a) as u32
    }

    /// `transform::nlerp_shortest` of every lane, as it computes with glam's SSE2 `Quat`:
    /// `q1` negated (times −1) when `q0 · q1 < 0`, `q0 · (1 − u) + q1 · u`, divided by its
    /// length.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn nlerp_shortest(q0: [Floats; 4], q1: [Floats; 4], u: f32) -> [Floats; 4] {
        let zero = _mm256_setzero_ps();
        let flip = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_LT_OQ>(dot(q0, q1), zero),
            _mm256_set1_ps(-0.0),
        );
        let (keep, take) = (_mm256_set1_ps(1.0 - u), _mm256_set1_ps(u));
        let lerp = |k: usize| {
            let far = _mm256_xor_ps(q1[k], flip);
            _mm256_add_ps(_mm256_mul_ps(q0[k], keep), _mm256_mul_ps(far, take))
        };
        let l = [lerp(0), lerp(1), lerp(2), lerp(3)];
        let length = _mm256_sqrt_ps(dot(l, l));
        [
            _mm256_div_ps(l[0], length),
            _mm256_div_ps(l[1], length),
            _mm256_div_ps(l[2], length),
            _mm256_div_ps(l[3], length),
        ]
    }
}
