// The decode cache (docs/gpu.md, "The decode cache"): before the pose pass, the clips a frame
// samples most (a clip sampled at least half as many times as it has samples: its instances
// would decode more samples than it holds) are decoded once, every sample of every animated
// sub-track, into `decoded`; instances then read two vec4s per sub-track (sample.wgsl) instead of
// each decoding its own pair from the stream. The decode is `codec_sample`, the instances' own.
//
// A package's decode table (`decode_table`, written per frame): per clip its base in `decoded`,
// or NO_DECODE, then the frame's jobs, two words each: the clip and its decode list in `tables`
// (per animated sub-track `a`, `(ranges << 1) | rotation`, written at upload). One dispatch per
// package: workgroup row `y` decodes job `y`, one thread per (animated sub-track, sample),
// sub-track-major, as the cache holds them.

struct DecodeParams {
    clip_base: u32,
    jobs_base: u32,
    jobs: u32,
    pad: u32,
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.y >= params.jobs {
        return;
    }
    let clip = decode_table[params.jobs_base + 2u * gid.y];
    let list = decode_table[params.jobs_base + 2u * gid.y + 1u];
    let c = clip_header(clip);
    let n = max(c.sample_count, 1u);
    let a = gid.x / n;
    if a >= c.animated {
        return;
    }
    let i = gid.x - a * n;
    let e = tables[list + a];
    decoded[decode_table[clip] + a * c.sample_count + i] = codec_sample(c, e >> 1u, i, (e & 1u) == 1u);
}
