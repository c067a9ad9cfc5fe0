// Presentation of retained instances (throng-cpu-ref retained.rs and present.rs, function for
// function): one thread per frame slot, one dispatch per frame. A frame shows the last two
// committed ticks at `alpha` of the way from the first to the second.
//
// Per slot: its row (`statics[slot × (1 + record_vec4s)]`: shape, values offset, the ticks its
// program and its placement last changed) and its record template (the next `record_vec4s` vec4s:
// its program's record as written when the program was set). The slot's placement: the two
// ticks' similarities (`placements_in`, two vec4s each: translation and scale, rotation),
// blended (translation and scale lerped, rotation nlerped the shorter way) into the three rows
// bounds, skinning and attachments read (`placements`). A posed slot (a shape, not kept, not a
// hero, not hidden) then takes the next record of its shape's run (`fill`, counted atomically:
// the pose pass's instances of a shape may come in any order, each writes its own slot), copies
// its template there with its kind word, and writes each of its values blended between the two
// ticks: a clip time the shorter way round its clip, anything else linearly. A slot whose
// program or placement changed at the last tick shows that tick's, not a blend. A posed
// slot's clock (the clip and time of its first clip time) goes to `clocks`.

/// Host mirror: `PresentParams`.
struct PresentParams {
    slots: u32,
    alpha: f32,
    /// The last committed tick (its low 32 bits).
    tick: u32,
    /// Record vec4s per slot after its row in `statics`.
    record_vec4s: u32,
    /// The two ticks' value arenas in `values`, and their placements in `placements_in`.
    values_now: u32,
    values_prev: u32,
    placements_now: u32,
    placements_prev: u32,
}

/// Per program shape: where its records go this frame, and its value map.
struct BinRow {
    record_base: u32,
    /// Record vec4s per instance.
    stride: u32,
    /// `shapes`: per value its record word (bit 31: a clip time, the clip in the word before).
    map_base: u32,
    values: u32,
}

@group(0) @binding(0) var<uniform> params: PresentParams;
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read> kinds: array<KindRow>;
@group(0) @binding(3) var<storage, read> slot_kinds: array<u32>;
@group(0) @binding(4) var<storage, read> statics: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read> values: array<f32>;
@group(0) @binding(6) var<storage, read> placements_in: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> placements: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> bins: array<BinRow>;
@group(0) @binding(9) var<storage, read> shapes: array<u32>;
@group(0) @binding(10) var<storage, read_write> fill: array<atomic<u32>>;
@group(0) @binding(11) var<storage, read_write> records: array<vec4<u32>>;
/// Per slot its clock: the clip and presented time of the first clip time among its values
/// (scatter.wgsl draws a card past the skinned budget at it), or (NO_CELL, 0).
@group(0) @binding(12) var<storage, read_write> clocks: array<vec2<u32>>;

/// present.rs `present_time`.
fn present_time(prev: f32, cur: f32, alpha: f32, duration: f32) -> f32 {
    var d = cur - prev;
    if duration > 0.0 && abs(d) > 0.5 * duration {
        d -= select(-duration, duration, d >= 0.0);
    }
    var t = prev + d * alpha;
    if t < 0.0 {
        t += duration;
    } else if t > duration {
        t -= duration;
    }
    return clamp(t, 0.0, max(duration, 0.0));
}

/// The three rows of the similarity of rotation `q`, uniform scale `s` and translation `t`.
fn write_placement(slot: u32, t: vec3<f32>, s: f32, q: vec4<f32>) {
    let m = trs_to_affine(Trs(t, q, vec3<f32>(s)));
    let at = 3u * slot;
    placements[at] = m.r0;
    placements[at + 1u] = m.r1;
    placements[at + 2u] = m.r2;
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let slot = gid.y * groups.x * WORKGROUP + gid.x;
    if slot >= params.slots {
        return;
    }
    let word = slot_kinds[slot];
    if word == NO_KIND {
        return;
    }
    let base = slot * (1u + params.record_vec4s);
    let row = statics[base];
    let alpha = params.alpha;
    let now = params.placements_now + 2u * slot;
    let b = placements_in[now];
    let qb = placements_in[now + 1u];
    var a = b;
    var qa = qb;
    if row.w != params.tick {
        let prev = params.placements_prev + 2u * slot;
        a = placements_in[prev];
        qa = placements_in[prev + 1u];
    }
    let q1 = select(qb, -qb, dot(qa, qb) < 0.0);
    let q = normalize(qa + (q1 - qa) * alpha);
    write_placement(slot, a.xyz + (b.xyz - a.xyz) * alpha, a.w + (b.w - a.w) * alpha, q);
    let level = word >> LEVEL_SHIFT;
    if row.x == NO_SHAPE || (word & (KEEP_BIT | HERO_BIT)) != 0u || level == LOD_HIDDEN {
        return;
    }
    let bin = bins[row.x];
    let rec = bin.record_base + atomicAdd(&fill[row.x], 1u) * bin.stride;
    for (var w = 0u; w < bin.stride; w++) {
        records[rec + w] = statics[base + 1u + w];
    }
    records[rec].x = slot;
    records[rec].y = word & ~(KEEP_BIT | HERO_BIT);
    let k = kinds[word & KIND_MASK];
    let fresh = row.z == params.tick;
    var clock = vec2<u32>(NO_CELL, 0u);
    for (var v = 0u; v < bin.values; v++) {
        let m = shapes[bin.map_base + v];
        let w = m & 0x7fffffffu;
        let cur = values[params.values_now + row.y + v];
        var prev = cur;
        if !fresh {
            prev = values[params.values_prev + row.y + v];
        }
        var x = prev + (cur - prev) * alpha;
        if (m >> 31u) == 1u {
            let c = w - 1u;
            let clip = records[rec + (c >> 2u)][c & 3u];
            let duration = bitcast<f32>(tables[k.clip_base + CLIP_WORDS * clip]);
            x = present_time(prev, cur, alpha, duration);
            if clock.x == NO_CELL {
                clock = vec2<u32>(clip, bitcast<u32>(x));
            }
        }
        records[rec + (w >> 2u)][w & 3u] = bitcast<u32>(x);
    }
    clocks[slot] = clock;
}
