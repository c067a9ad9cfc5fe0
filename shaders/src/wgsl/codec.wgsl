// Compressed clip decoding, mirroring throng-cpu-ref codec (decode.rs, bits.rs, layout.rs): the
// same bits, the same integer arithmetic and one exactly-rounded float step per component, so the
// dequantised (x, y, z) are bit for bit the CPU's. Layout: docs/codec.md.
//
// A compressed clip's word stream lives in `tables` from `Clip.words_base`. A thread reads,
// per sampled clip, the segment table entry of each bracketing sample (`codec_pair`), then per
// animated sub-track its two range records, the 64-bit header of the segment holding each
// bracketing sample (once when both lie in one segment), and the sample bits. Constants and
// each animated sub-track's range words were moved into `pool` at upload (vec4 records, one
// load each, instead of seven scattered words).

/// Word `w` of the stream starting at word `base` of `tables`.
fn codec_word(base: u32, w: u32) -> u32 {
    return tables[base + w];
}

/// The `n` bits (0 ..= 32) at bit `pos` of the stream, least significant first, without a
/// branch: lanes at different bit positions would otherwise diverge. Both words a field can
/// touch are read (the upload pads each stream with a zero word, so the second stays in it).
fn codec_bits(base: u32, pos: u32, n: u32) -> u32 {
    let w = pos >> 5u;
    let shift = pos & 31u;
    // WGSL takes a shift of 32 modulo 32: the select drops the second word at shift 0.
    let high = select(codec_word(base, w + 1u) << (32u - shift), 0u, shift == 0u);
    return extractBits((codec_word(base, w) >> shift) | high, 0u, n);
}

/// The `bits` (< 32) bits at bit `at` of the 64-bit header `(h0, h1)` (`decode::header`).
fn header_field(h0: u32, h1: u32, at: u32, bits: u32) -> u32 {
    var v = h1 >> (at - 32u);
    if at < 32u {
        v = h0 >> at;
        if at + bits > 32u {
            v = v | (h1 << (32u - at));
        }
    }
    return v & ((1u << bits) - 1u);
}

/// `decode::SampleAt`: where sample `i` of every animated sub-track lies, the same for all of
/// them, so a pose finds it once per clip: its segment's first word, the bit position of the
/// segment's sample bits, and its index in the segment.
struct CodecAt {
    start: u32,
    data: u32,
    local: u32,
}

fn codec_at(c: Clip, i: u32) -> CodecAt {
    let segment = i / c.segment_length;
    let start = codec_word(c.words_base, CODEC_RANGE_WORDS * c.animated + segment);
    return CodecAt(start, (start + CODEC_HEADER_WORDS * c.animated) * 32u, i - segment * c.segment_length);
}

/// `decode::PairAt`: where the two samples of bracket `b` lie.
struct CodecPair {
    first: CodecAt,
    second: CodecAt,
}

fn codec_pair(c: Clip, b: Bracket) -> CodecPair {
    return CodecPair(codec_at(c, b.i0), codec_at(c, b.i1));
}

/// `decode::Header`: animated sub-track `a`'s header in the segment that starts at word `start`.
struct CodecHeader {
    offset: u32,
    shift: u32,
    widths: vec3<u32>,
    hi: vec3<u32>,
}

fn codec_header(c: Clip, start: u32, a: u32) -> CodecHeader {
    let h0 = codec_word(c.words_base, start + CODEC_HEADER_WORDS * a);
    let h1 = codec_word(c.words_base, start + CODEC_HEADER_WORDS * a + 1u);
    return CodecHeader(
        header_field(h0, h1, 0u, CODEC_OFFSET_BITS),
        header_field(h0, h1, CODEC_SHIFT_AT, CODEC_SHIFT_BITS),
        vec3<u32>(
            header_field(h0, h1, CODEC_WIDTH_AT, CODEC_WIDTH_BITS),
            header_field(h0, h1, CODEC_WIDTH_AT + CODEC_WIDTH_BITS, CODEC_WIDTH_BITS),
            header_field(h0, h1, CODEC_WIDTH_AT + 2u * CODEC_WIDTH_BITS, CODEC_WIDTH_BITS),
        ),
        vec3<u32>(
            header_field(h0, h1, CODEC_HI_AT, CODEC_HI_BITS),
            header_field(h0, h1, CODEC_HI_AT + CODEC_HI_BITS, CODEC_HI_BITS),
            header_field(h0, h1, CODEC_HI_AT + 2u * CODEC_HI_BITS, CODEC_HI_BITS),
        ),
    );
}

/// `decode::k_in_segment`: the clip-level integers K (x, y, z) of the sample at `at` under its
/// segment's header `h`.
fn codec_k(c: Clip, at: CodecAt, h: CodecHeader) -> vec3<u32> {
    let w = h.widths;
    let data = at.data + h.offset + at.local * (w.x + w.y + w.z);
    let base = c.words_base;
    let q = vec3<u32>(
        codec_bits(base, data, w.x),
        codec_bits(base, data + w.x, w.y),
        codec_bits(base, data + w.x + w.y, w.z),
    );
    return (h.hi << vec3<u32>(CODEC_LO_SHIFT)) + (q << vec3<u32>(h.shift));
}

/// The dequantised (x, y, z) of a bracket's two samples.
struct CodecValues {
    v0: vec3<f32>,
    v1: vec3<f32>,
}

/// `decode::decode_pair_at`: both samples at `p` of the animated sub-track whose ranges are the
/// pool records at `ranges` (`(base, a)` and `(step, rebuilt)`, put there at upload), the
/// header read once when both lie in one segment.
fn codec_pair_components(c: Clip, ranges: u32, p: CodecPair) -> CodecValues {
    let lo = pool[ranges];
    let hi = pool[ranges + 1u];
    let a = bitcast<u32>(lo.w);
    let h0 = codec_header(c, p.first.start, a);
    var h1 = h0;
    if p.second.start != p.first.start {
        h1 = codec_header(c, p.second.start, a);
    }
    let k0 = codec_k(c, p.first, h0);
    let k1 = codec_k(c, p.second, h1);
    // The steps are powers of two and `k` exact in f32: the product is exact, the add rounds once.
    return CodecValues(lo.xyz + vec3<f32>(k0) * hi.xyz, lo.xyz + vec3<f32>(k1) * hi.xyz);
}

/// Sample `i` of the animated sub-track whose ranges are the pool records at `ranges`, one
/// sample of `codec_pair_components` (the same loads and arithmetic); a rotation as its unit
/// quaternion, t and s in xyz.
fn codec_sample(c: Clip, ranges: u32, i: u32, rotation: bool) -> vec4<f32> {
    let lo = pool[ranges];
    let hi = pool[ranges + 1u];
    let at = codec_at(c, i);
    let k = codec_k(c, at, codec_header(c, at.start, bitcast<u32>(lo.w)));
    let v = lo.xyz + vec3<f32>(k) * hi.xyz;
    if rotation {
        return codec_rotation(bitcast<u32>(hi.w), v);
    }
    return vec4<f32>(v, 0.0);
}

/// `decode::rotation_from_stored`: component `rebuilt` (0 x, 1 y, 2 z, 3 w) is
/// sqrt(max(0, 1 - |v|^2)); `v` holds the other three in order.
fn codec_rotation(rebuilt: u32, v: vec3<f32>) -> vec4<f32> {
    let r = sqrt(max(0.0, 1.0 - (v.x * v.x + v.y * v.y + v.z * v.z)));
    switch rebuilt {
        case 0u: {
            return vec4<f32>(r, v);
        }
        case 1u: {
            return vec4<f32>(v.x, r, v.yz);
        }
        case 2u: {
            return vec4<f32>(v.xy, r, v.z);
        }
        default: {
            return vec4<f32>(v, r);
        }
    }
}
