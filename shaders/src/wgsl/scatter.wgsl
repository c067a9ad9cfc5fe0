// The frame's skinned instances and cards: one thread per frame slot, the bounds dispatch's
// workgroups. A seen slot (bounds.wgsl: its mark is 1 + its significance key) above the
// threshold key T (tally.wgsl), or at T among the first R of those at T in frame-slot order, is
// skinned: `budgeted[rank]` is the slot, its rank the skinned slots before it in frame-slot
// order (budget.wgsl's scanned tallies plus this workgroup's lanes before it), which
// partition.wgsl regroups by unit. Every other seen slot is a card: `cards[c]`, c the seen slots
// before it that are not skinned, so every visible slot is drawn once, as a mesh or as a card,
// and the card draw (budget.wgsl) draws exactly these. A card shows the far tier's impostor
// (`far`, throng-gpu `FarTier`): its centre, yaw and scale from the slot's placement, the cell
// of the frames around its clock's clip time (throng-cpu-ref impostor.rs `frame_blend`, in f32),
// and counts in `ranks[total_base]`; a slot of another kind, or of no far tier, gets an empty
// card (scale 0: nothing rasterised) and is not counted.

/// Host mirror: `ScatterParams`.
struct ScatterParams {
    slots: u32,
    pool: u32,
    total_base: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> params: ScatterParams;
@group(0) @binding(1) var<storage, read> marks: array<u32>;
@group(0) @binding(2) var<storage, read> groups: array<u32>;
@group(0) @binding(3) var<storage, read_write> budgeted: array<u32>;
@group(0) @binding(4) var<storage, read> slot_kinds: array<u32>;
@group(0) @binding(5) var<storage, read> placements: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> clocks: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read> far: array<u32>;
@group(0) @binding(8) var<storage, read_write> cards: array<vec4<u32>>;
@group(0) @binding(9) var<storage, read_write> ranks: array<atomic<u32>>;

/// The cells the frame slot `slot`'s clock shows at row 0, view 0 and their mix (impostor.rs
/// `Impostor::card_frame`): the nearest frame's, the neighbouring frame's toward the clip time,
/// and how far toward it the time lies (f32 bits); cell 0 alone when its clip has no frames
/// baked.
fn card_cells(slot: u32) -> vec3<u32> {
    let clock = clocks[slot];
    if clock.x >= far[FAR_CLIPS] {
        return vec3<u32>(0u);
    }
    let at = FAR_HEADER + 4u * clock.x;
    let first = far[at];
    let frames = far[at + 1u];
    let duration = bitcast<f32>(far[at + 2u]);
    let time = bitcast<f32>(clock.y);
    if first == NO_CELL {
        return vec3<u32>(0u);
    }
    // Rounded half up, as Rust's `f64::round` rounds a non-negative number (WGSL's `round`
    // rounds half to even): presented times fall on half frames often (ticks at 30 Hz, frames
    // baked at 10 per second).
    var frame = 0u;
    var toward = 0u;
    var weight = 0.0;
    if duration > 0.0 && frames > 1u && abs(time) <= BOUNDS_EMPTY {
        let phase = time / duration;
        if far[at + 3u] == 1u {
            let x = fract(phase) * f32(frames);
            let n = floor(x + 0.5);
            let d = x - n;
            frame = u32(n) % frames;
            toward = select((frame + frames - 1u) % frames, (frame + 1u) % frames, d >= 0.0);
            weight = abs(d);
        } else {
            let x = clamp(phase, 0.0, 1.0) * f32(frames - 1u);
            let n = floor(x + 0.5);
            let d = x - n;
            frame = u32(n);
            toward = select(max(frame, 1u) - 1u, min(frame + 1u, frames - 1u), d >= 0.0);
            weight = abs(d);
        }
    }
    let per = far[FAR_CELLS_PER_FRAME];
    return vec3<u32>(first + frame * per, first + toward * per, bitcast<u32>(weight));
}

/// Cards of the far tier this workgroup wrote (one global add per workgroup: a global atomic
/// per card contends on one word).
var<workgroup> carded: atomic<u32>;

/// Slot `slot`'s card (raster.wgsl `Card`): (centre, yaw), (scale, slot, first cell, tier 0)
/// and (next cell, blend, fade 1, 0); an empty one unless its kind is the far tier's.
fn write_card(c: u32, slot: u32) {
    let word = slot_kinds[slot];
    var scale = 0.0;
    var centre = vec3<f32>(0.0);
    var yaw = 0.0;
    var cells = vec3<u32>(0u);
    if (word & KIND_MASK) == far[FAR_KIND] {
        let r0 = placements[3u * slot];
        let r1 = placements[3u * slot + 1u];
        let r2 = placements[3u * slot + 2u];
        let o = vec3<f32>(
            bitcast<f32>(far[FAR_CENTRE]),
            bitcast<f32>(far[FAR_CENTRE + 1u]),
            bitcast<f32>(far[FAR_CENTRE + 2u]),
        );
        centre = vec3<f32>(dot(r0.xyz, o) + r0.w, dot(r1.xyz, o) + r1.w, dot(r2.xyz, o) + r2.w);
        scale = length(vec3<f32>(r0.x, r1.x, r2.x));
        yaw = atan2(r0.z, r0.x);
        cells = card_cells(slot);
        atomicAdd(&carded, 1u);
    }
    cards[3u * c] = bitcast<vec4<u32>>(vec4<f32>(centre, yaw));
    cards[3u * c + 1u] = vec4<u32>(bitcast<u32>(scale), slot, cells.x, 0u);
    cards[3u * c + 2u] = vec4<u32>(cells.y, cells.z, bitcast<u32>(1.0), 0u);
}

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) n: vec3<u32>,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let slot = gid.y * n.x * WORKGROUP + gid.x;
    var mark = 0u;
    if slot < params.slots {
        mark = marks[slot];
    }
    if lane == 0u {
        atomicStore(&carded, 0u);
    }
    let t = vec2<u32>(groups[SIGNIFICANCE_BUCKETS], groups[SIGNIFICANCE_BUCKETS + 1u]);
    let seen = mark != 0u;
    let above = seen && mark - 1u > t.x;
    let at_t = seen && mark - 1u == t.x;
    // Seen, above T and at T before this lane, a byte each: one scan for the three.
    let before = lane_sums(u32(seen) | (u32(above) << 8u) | (u32(at_t) << 16u), lane).x;
    if seen {
        let g = GROUP_BASE + 4u * (wg.y * n.x + wg.x);
        let seen_before = groups[g] + (before & 0xffu);
        let at_before = groups[g + 2u] + (before >> 16u);
        let skinned_before = groups[g + 1u] + ((before >> 8u) & 0xffu) + min(at_before, t.y);
        if above || (at_t && at_before < t.y) {
            budgeted[skinned_before] = slot;
        } else {
            write_card(seen_before - skinned_before, slot);
        }
    }
    workgroupBarrier();
    if lane == 0u {
        let c = atomicLoad(&carded);
        if c > 0u {
            atomicAdd(&ranks[params.total_base], c);
        }
    }
}
