// Cooked clip sampling, mirroring throng-cpu-ref clip.rs (`Clip::bracket`, `sample_clip`) in f32,
// for both encodings (the compressed one decodes with codec.wgsl).
// Needs the program module's bindings `clips`, `tracks` and `values`.

/// A cooked clip's header. Sub-track `3 * joint + k` (k = 0 t, 1 q, 2 s) is `tracks[track_base + ..]`.
/// Reference encoding: its value offsets index `values` from `value_base`. Compressed encoding:
/// `value_base` is the index of the clip's first codec word in `tracks` viewed as u32 words, and
/// a sub-track's offset is its animated index or the word of its constant.
struct ClipHeader {
    /// Seconds, narrowed from the f64 duration as the CPU narrows it.
    duration: f32,
    sample_rate: f32,
    sample_count: u32,
    track_base: u32,
    value_base: u32,
    /// 0 reference, `ENCODING_COMPRESSED`.
    encoding: u32,
    /// Compressed only: samples per segment and animated sub-track count.
    segment_length: u32,
    animated: u32,
}

const TRACK_DEFAULT: u32 = 0u;
const TRACK_CONSTANT: u32 = 1u;

/// Two bracketing samples and the fraction between them.
struct Bracket {
    i0: u32,
    i1: u32,
    u: f32,
}

/// `Clip::bracket`: time clamped to [0, duration]; `i0 = floor(time * rate)`,
/// `u = (time - t(i0)) / (t(i1) - t(i0))` with the last sample at the duration.
fn bracket(c: ClipHeader, time_in: f32) -> Bracket {
    let last = max(c.sample_count, 1u) - 1u;
    let time = clamp(time_in, 0.0, max(c.duration, 0.0));
    let rate = c.sample_rate;
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

fn load3(at: u32) -> vec3<f32> {
    return vec3<f32>(values[at], values[at + 1u], values[at + 2u]);
}

fn load4(at: u32) -> vec4<f32> {
    return vec4<f32>(values[at], values[at + 1u], values[at + 2u], values[at + 3u]);
}

/// A t or s sub-track at `b`, or `fallback` when it is Default.
fn sample_vec3(c: ClipHeader, track: u32, b: Bracket, fallback: vec3<f32>) -> vec3<f32> {
    let st = tracks[c.track_base + track];
    let at = c.value_base + st.y;
    if st.x == TRACK_DEFAULT {
        return fallback;
    }
    if c.encoding == ENCODING_COMPRESSED {
        if st.x == TRACK_CONSTANT {
            return codec_constant3(c, st.y);
        }
        let v0 = codec_components(c, st.y, b.i0);
        let v1 = codec_components(c, st.y, b.i1);
        return v0 * (1.0 - b.u) + v1 * b.u;
    }
    if st.x == TRACK_CONSTANT {
        return load3(at);
    }
    let v0 = load3(at + b.i0 * 3u);
    let v1 = load3(at + b.i1 * 3u);
    return v0 * (1.0 - b.u) + v1 * b.u;
}

/// A q sub-track at `b` (nlerp-shortest between samples), or `fallback` when it is Default.
fn sample_quat(c: ClipHeader, track: u32, b: Bracket, fallback: vec4<f32>) -> vec4<f32> {
    let st = tracks[c.track_base + track];
    let at = c.value_base + st.y;
    if st.x == TRACK_DEFAULT {
        return fallback;
    }
    if c.encoding == ENCODING_COMPRESSED {
        if st.x == TRACK_CONSTANT {
            return codec_constant4(c, st.y);
        }
        let q0 = codec_rotation(c, st.y, codec_components(c, st.y, b.i0));
        return nlerp_shortest(q0, codec_rotation(c, st.y, codec_components(c, st.y, b.i1)), b.u);
    }
    if st.x == TRACK_CONSTANT {
        return load4(at);
    }
    return nlerp_shortest(load4(at + b.i0 * 4u), load4(at + b.i1 * 4u), b.u);
}

/// `sample_clip` for one joint: Default sub-tracks come from `rest`.
fn sample_joint(clip: u32, time: f32, joint: u32, rest: Trs) -> Trs {
    let c = clips[clip];
    let b = bracket(c, time);
    return Trs(
        sample_vec3(c, 3u * joint, b, rest.t),
        sample_quat(c, 3u * joint + 1u, b, rest.q),
        sample_vec3(c, 3u * joint + 2u, b, rest.s),
    );
}
