// Compressed clip decoding, mirroring throng-cpu-ref codec (decode.rs, bits.rs, layout.rs): the
// same bits, the same integer arithmetic and one exactly-rounded float step per component, so the
// dequantised (x, y, z) are bit for bit the CPU's. Layout: docs/codec.md.
//
// A compressed clip's word stream lives in `tables` from `Clip.words_base`. A thread reads the
// sub-track's range words, the segment table entry and 64-bit header of the segment holding
// each bracketing sample, and the sample bits. Constants were moved into `pool` at upload.

/// Word `w` of the stream starting at word `base` of `tables`.
fn codec_word(base: u32, w: u32) -> u32 {
    return tables[base + w];
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

/// `decode::decode_components`: the dequantised (x, y, z) of sample `i` of animated sub-track `a`.
fn codec_components(c: Clip, a: u32, i: u32) -> vec3<f32> {
    let base = c.words_base;
    let segment = i / c.segment_length;
    let local = i - segment * c.segment_length;
    let start = codec_word(base, CODEC_RANGE_WORDS * c.animated + segment);
    let h0 = codec_word(base, start + CODEC_HEADER_WORDS * a);
    let h1 = codec_word(base, start + CODEC_HEADER_WORDS * a + 1u);
    let offset = header_field(h0, h1, 0u, CODEC_OFFSET_BITS);
    let shift = header_field(h0, h1, CODEC_SHIFT_AT, CODEC_SHIFT_BITS);
    let widths = vec3<u32>(
        header_field(h0, h1, CODEC_WIDTH_AT, CODEC_WIDTH_BITS),
        header_field(h0, h1, CODEC_WIDTH_AT + CODEC_WIDTH_BITS, CODEC_WIDTH_BITS),
        header_field(h0, h1, CODEC_WIDTH_AT + 2u * CODEC_WIDTH_BITS, CODEC_WIDTH_BITS),
    );
    let hi = vec3<u32>(
        header_field(h0, h1, CODEC_HI_AT, CODEC_HI_BITS),
        header_field(h0, h1, CODEC_HI_AT + CODEC_HI_BITS, CODEC_HI_BITS),
        header_field(h0, h1, CODEC_HI_AT + 2u * CODEC_HI_BITS, CODEC_HI_BITS),
    );
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

/// `decode::rotation_from_stored`: the component named by word CODEC_REBUILT_WORD of animated
/// sub-track `a`'s ranges is sqrt(max(0, 1 - |v|^2)); `v` holds the other three in order.
fn codec_rotation(c: Clip, a: u32, v: vec3<f32>) -> vec4<f32> {
    let r = sqrt(max(0.0, 1.0 - (v.x * v.x + v.y * v.y + v.z * v.z)));
    switch codec_word(c.words_base, CODEC_RANGE_WORDS * a + CODEC_REBUILT_WORD) {
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
