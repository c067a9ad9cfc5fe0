// Cooked clip sampling for one joint, mirroring throng-cpu-ref clip.rs (`Clip::bracket`,
// `sample_clip`) in f32, in either encoding. Needs the pose bindings `params`, `tables`, `tracks`
// and `pool` (docs/gpu.md, "Resident data").
//
// A clip's header is CLIP_WORDS words of `tables` (pose.wgsl's `clip_header` finds it from the
// instance's kind).
// Per clip and joint, `tracks[track_base + joint]` holds the references of its t, q and s
// sub-tracks: `(index << 2) | kind`. TRACK_DEFAULT: the rest pose's value. TRACK_CONSTANT:
// `pool[index]`. TRACK_ANIMATED: reference encoding, sample `i` is `pool[index + i]` (t and s
// in xyz); compressed encoding, `pool[index]` and `pool[index + 1]` are the animated
// sub-track's ranges (`codec_pair_components`), its samples in the clip's codec stream; when
// the frame decoded the clip into the decode cache (decode.wgsl), its samples are read from
// there instead (`sample_decoded`). The
// sub-track kind of a clip is the same for every instance sampling it, so lanes that sample
// the same clip take the same branch (the runtime sorts instances by clip).

/// A cooked clip's header.
struct Clip {
    /// Seconds, narrowed from the f64 duration as the CPU narrows it.
    duration: f32,
    rate: f32,
    sample_count: u32,
    /// First entry of the clip in `tracks`.
    track_base: u32,
    /// Compressed: first word of the clip's codec stream in `tables`.
    words_base: u32,
    segment_length: u32,
    animated: u32,
    encoding: u32,
}

/// The clip header at word `at` of `tables`.
fn clip_header_at(at: u32) -> Clip {
    return Clip(
        bitcast<f32>(tables[at]),
        bitcast<f32>(tables[at + 1u]),
        tables[at + 2u],
        tables[at + 3u],
        tables[at + 4u],
        tables[at + 5u],
        tables[at + 6u],
        tables[at + 7u],
    );
}

/// Two bracketing samples and the fraction between them.
struct Bracket {
    i0: u32,
    i1: u32,
    u: f32,
}

/// `Clip::bracket`: time clamped to [0, duration] (NaN reads as 0); `i0 = floor(time * rate)`,
/// `u = (time - t(i0)) / (t(i1) - t(i0))` with the last sample at the duration.
fn bracket(c: Clip, time_in: f32) -> Bracket {
    let last = max(c.sample_count, 1u) - 1u;
    let time = select(clamp(time_in, 0.0, max(c.duration, 0.0)), 0.0, time_in != time_in);
    let rate = c.rate;
    let i0 = min(u32(floor(time * rate)), last);
    let i1 = min(i0 + 1u, last);
    let t0 = f32(i0) / rate;
    let t1 = min(f32(i1) / rate, c.duration);
    var u = 0.0;
    if t1 > t0 {
        u = clamp((time - t0) / (t1 - t0), 0.0, 1.0);
    }
    return Bracket(i0, i1, u);
}

fn lerp3(a: vec3<f32>, b: vec3<f32>, u: f32) -> vec3<f32> {
    return a * (1.0 - u) + b * u;
}

/// A t or s sub-track of the reference encoding at `b` (lerp), `rest` when Default.
fn reference_vec3(r: u32, b: Bracket, rest: vec3<f32>) -> vec3<f32> {
    let at = r >> 2u;
    switch r & 3u {
        case TRACK_ANIMATED: {
            return lerp3(pool[at + b.i0].xyz, pool[at + b.i1].xyz, b.u);
        }
        case TRACK_CONSTANT: {
            return pool[at].xyz;
        }
        default: {
            return rest;
        }
    }
}

/// A q sub-track of the reference encoding at `b` (nlerp-shortest), `rest` when Default.
fn reference_quat(r: u32, b: Bracket, rest: vec4<f32>) -> vec4<f32> {
    let at = r >> 2u;
    switch r & 3u {
        case TRACK_ANIMATED: {
            return nlerp_shortest(pool[at + b.i0], pool[at + b.i1], b.u);
        }
        case TRACK_CONSTANT: {
            return pool[at];
        }
        default: {
            return rest;
        }
    }
}

/// A t or s sub-track of the compressed encoding at `b` (its samples at `p`), `rest` when
/// Default.
fn compressed_vec3(c: Clip, r: u32, b: Bracket, p: CodecPair, rest: vec3<f32>) -> vec3<f32> {
    let at = r >> 2u;
    switch r & 3u {
        case TRACK_ANIMATED: {
            let v = codec_pair_components(c, at, p);
            return lerp3(v.v0, v.v1, b.u);
        }
        case TRACK_CONSTANT: {
            return pool[at].xyz;
        }
        default: {
            return rest;
        }
    }
}

/// A q sub-track of the compressed encoding at `b` (its samples at `p`), `rest` when Default.
fn compressed_quat(c: Clip, r: u32, b: Bracket, p: CodecPair, rest: vec4<f32>) -> vec4<f32> {
    let at = r >> 2u;
    switch r & 3u {
        case TRACK_ANIMATED: {
            let rebuilt = bitcast<u32>(pool[at + 1u].w);
            let v = codec_pair_components(c, at, p);
            return nlerp_shortest(codec_rotation(rebuilt, v.v0), codec_rotation(rebuilt, v.v1), b.u);
        }
        case TRACK_CONSTANT: {
            return pool[at];
        }
        default: {
            return rest;
        }
    }
}

/// A t or s sub-track of a compressed clip in the decode cache (decode.wgsl), its samples from
/// `s` there, at `b`: `compressed_vec3` from two cache loads.
fn decoded_vec3(r: u32, b: Bracket, s: u32, rest: vec3<f32>) -> vec3<f32> {
    switch r & 3u {
        case TRACK_ANIMATED: {
            return lerp3(decoded[s + b.i0].xyz, decoded[s + b.i1].xyz, b.u);
        }
        case TRACK_CONSTANT: {
            return pool[r >> 2u].xyz;
        }
        default: {
            return rest;
        }
    }
}

/// A q sub-track of a compressed clip in the decode cache, its samples from `s` there, at `b`.
fn decoded_quat(r: u32, b: Bracket, s: u32, rest: vec4<f32>) -> vec4<f32> {
    switch r & 3u {
        case TRACK_ANIMATED: {
            return nlerp_shortest(decoded[s + b.i0], decoded[s + b.i1], b.u);
        }
        case TRACK_CONSTANT: {
            return pool[r >> 2u];
        }
        default: {
            return rest;
        }
    }
}

/// `sample_joint` of a reference-encoded clip: Default sub-tracks come from `rest`.
fn sample_reference(c: Clip, b: Bracket, joint: u32, rest: Trs) -> Trs {
    let r = tracks[c.track_base + joint];
    return Trs(reference_vec3(r.x, b, rest.t), reference_quat(r.y, b, rest.q), reference_vec3(r.z, b, rest.s));
}

/// `sample_joint` of a compressed clip; `p` ([`codec_pair`] of `b`) is the same for every joint.
fn sample_compressed(c: Clip, b: Bracket, p: CodecPair, joint: u32, rest: Trs) -> Trs {
    let r = tracks[c.track_base + joint];
    return Trs(compressed_vec3(c, r.x, b, p, rest.t), compressed_quat(c, r.y, b, p, rest.q), compressed_vec3(c, r.z, b, p, rest.s));
}

/// `sample_joint` of a compressed clip in the decode cache at `d` (its decode-table entry). The
/// cache holds the animated sub-tracks in order, `sample_count` vec4s each; `r.w` is the index
/// of the joint's first among them.
fn sample_decoded(c: Clip, b: Bracket, d: u32, joint: u32, rest: Trs) -> Trs {
    let r = tracks[c.track_base + joint];
    let t = d + r.w * c.sample_count;
    let q = t + select(0u, c.sample_count, (r.x & 3u) == TRACK_ANIMATED);
    let s = q + select(0u, c.sample_count, (r.y & 3u) == TRACK_ANIMATED);
    return Trs(decoded_vec3(r.x, b, t, rest.t), decoded_quat(r.y, b, q, rest.q), decoded_vec3(r.z, b, s, rest.s));
}
