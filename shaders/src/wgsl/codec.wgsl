// Compressed clip decoding, mirroring throng-cpu-ref codec (decode.rs, bits.rs, layout.rs): the
// same bits, the same integer arithmetic and one exactly-rounded float step per component, so the
// dequantised (x, y, z) are bit for bit the CPU's. Layout: docs/codec.md.
//
// A compressed clip's word stream lives in the program module's `tracks` binding (viewed as u32
// words from `ClipHeader.value_base`). A thread reads the sub-track's range words, the segment
// table entry and 64-bit header of the segment holding each bracketing sample, and the sample bits.

const ENCODING_COMPRESSED: u32 = 1u;
/// Words of per-clip ranges per animated sub-track: (base, step) for x, y, z, the rebuilt component.
const CODEC_RANGE_WORDS: u32 = 7u;
const CODEC_HEADER_WORDS: u32 = 2u;
const CODEC_LO_SHIFT: u32 = 16u;

/// Word `w` of the stream starting at word `base` of `tracks`.
fn codec_word(base: u32, w: u32) -> u32 {
    let i = base + w;
    return tracks[i >> 1u][i & 1u];
}

/// The `n` bits (0 ..= 32) at bit `pos` of the stream, least significant first; reads the second
/// word only when the field crosses a word boundary.
fn codec_bits(base: u32, pos: u32, n: u32) -> u32 {
    if n == 0u {
        return 0u;
    }
    let shift = pos & 31u;
    var v = codec_word(base, pos >> 5u) >> shift;
    if shift + n > 32u {
        v = v | (codec_word(base, (pos >> 5u) + 1u) << (32u - shift));
    }
    if n == 32u {
        return v;
    }
    return v & ((1u << n) - 1u);
}

/// `decode::decode_components`: the dequantised (x, y, z) of sample `i` of animated sub-track `a`.
fn codec_components(c: ClipHeader, a: u32, i: u32) -> vec3<f32> {
    let base = c.value_base;
    let segment = i / c.segment_length;
    let local = i - segment * c.segment_length;
    let start = codec_word(base, CODEC_RANGE_WORDS * c.animated + segment);
    let h0 = codec_word(base, start + CODEC_HEADER_WORDS * a);
    let h1 = codec_word(base, start + CODEC_HEADER_WORDS * a + 1u);
    let offset = h0 & 0xfffffu;
    let shift = (h0 >> 20u) & 31u;
    let widths = vec3<u32>((h0 >> 25u) & 31u, ((h0 >> 30u) | (h1 << 2u)) & 31u, (h1 >> 3u) & 31u);
    let hi = vec3<u32>((h1 >> 8u) & 255u, (h1 >> 16u) & 255u, h1 >> 24u);
    let data = (start + CODEC_HEADER_WORDS * c.animated) * 32u + offset + local * (widths.x + widths.y + widths.z);
    let q = vec3<u32>(
        codec_bits(base, data, widths.x),
        codec_bits(base, data + widths.x, widths.y),
        codec_bits(base, data + widths.x + widths.y, widths.z),
    );
    let k = (hi << vec3<u32>(CODEC_LO_SHIFT)) + (q << vec3<u32>(shift));
    let r = CODEC_RANGE_WORDS * a;
    let bases = vec3<f32>(
        bitcast<f32>(codec_word(base, r)),
        bitcast<f32>(codec_word(base, r + 2u)),
        bitcast<f32>(codec_word(base, r + 4u)),
    );
    let steps = vec3<f32>(
        bitcast<f32>(codec_word(base, r + 1u)),
        bitcast<f32>(codec_word(base, r + 3u)),
        bitcast<f32>(codec_word(base, r + 5u)),
    );
    // `steps` are powers of two and `k` exact in f32: the product is exact, the add rounds once.
    return bases + vec3<f32>(k) * steps;
}

/// `decode::rotation_from_stored`: the component named by word 6 of animated sub-track `a`'s
/// ranges is sqrt(max(0, 1 - |v|^2)); `v` holds the other three in order.
fn codec_rotation(c: ClipHeader, a: u32, v: vec3<f32>) -> vec4<f32> {
    let r = sqrt(max(0.0, 1.0 - (v.x * v.x + v.y * v.y + v.z * v.z)));
    switch codec_word(c.value_base, CODEC_RANGE_WORDS * a + 6u) {
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

/// A constant t or s sub-track of a compressed clip: three raw f32 words at `at`.
fn codec_constant3(c: ClipHeader, at: u32) -> vec3<f32> {
    let b = c.value_base;
    return vec3<f32>(bitcast<f32>(codec_word(b, at)), bitcast<f32>(codec_word(b, at + 1u)), bitcast<f32>(codec_word(b, at + 2u)));
}

/// A constant q sub-track of a compressed clip: four raw f32 words at `at` (x, y, z, w).
fn codec_constant4(c: ClipHeader, at: u32) -> vec4<f32> {
    return vec4<f32>(codec_constant3(c, at), bitcast<f32>(codec_word(c.value_base, at + 3u)));
}
