// The decode cache (docs/gpu.md, "The decode cache"): before the pose pass, the clips a frame
// samples most are decoded once, every sample of every animated sub-track, into `decoded`;
// instances then read two vec4s per sub-track (sample.wgsl) instead of each decoding its own
// pair from the stream. The decode is `codec_sample`, the instances' own.
//
// The decode table (`decode_table`, written per frame): per package, per clip its base in
// `decoded` or NO_DECODE (from the package's `decode_base`, KindRow); then the frame's jobs,
// three words each: the clip's header in `tables`, its entry in the decode table, and its decode
// list in `tables` (per animated sub-track `a`, `(ranges << 1) | rotation`, written at upload).
// One dispatch for every package: workgroup row `y` decodes job `y`, one thread per (animated
// sub-track, sample), sub-track-major, as the cache holds them.

struct DecodeParams {
    jobs_base: u32,
    jobs: u32,
    pad0: u32,
    pad1: u32,
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.y >= params.jobs {
        return;
    }
    let job = params.jobs_base + 3u * gid.y;
    let c = clip_header_at(decode_table[job]);
    let entry = decode_table[job + 1u];
    let list = decode_table[job + 2u];
    let n = max(c.sample_count, 1u);
    let a = gid.x / n;
    if a >= c.animated {
        return;
    }
    let i = gid.x - a * n;
    let e = tables[list + a];
    decoded[decode_table[entry] + a * c.sample_count + i] = codec_sample(c, e >> 1u, i, (e & 1u) == 1u);
}
