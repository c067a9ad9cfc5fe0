// The skinned budget's threshold and each workgroup's tallies: one thread per frame slot, the
// same workgroups as the bounds dispatch (64 slots each).
//
// The budget goes to the most significant seen slots (bounds.wgsl `significance`): walking the
// histogram (`groups[0 .. SIGNIFICANCE_BUCKETS]`) from the largest key down, the threshold key
// T is the one where the running count reaches the budget; every seen slot above T is skinned,
// and of those at T the first R in frame-slot order, R the budget left after the ones above.
// When the seen slots fit the budget, T is 0 and R the budget (every seen slot is skinned);
// with no budget T is past every key and R 0. Each workgroup finds T and R (the same 512
// buckets read by every workgroup, so no dispatch waits for one), workgroup 0 writes them to
// `groups[SIGNIFICANCE_BUCKETS ..]`, and each writes its counts of seen slots, slots above T and
// slots at T to `groups[GROUP_BASE + 4 × workgroup ..]`; budget.wgsl scans them, scatter.wgsl
// ranks each slot.

/// Host mirror: `TallyParams`.
struct TallyParams {
    slots: u32,
    /// Skinned instances the pool holds: the budget.
    pool: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> params: TallyParams;
@group(0) @binding(1) var<storage, read> marks: array<u32>;
@group(0) @binding(2) var<storage, read_write> groups: array<u32>;

var<workgroup> found: vec2<u32>;

/// The threshold key T and the slots R at T the budget takes (the comment above). Lane l sums
/// the `SIGNIFICANCE_BUCKETS / WORKGROUP` keys of its run (runs from the largest key down),
/// one scan across lanes gives the slots above each run, and the lane whose run holds the key
/// where the count reaches the budget walks it.
fn threshold(lane: u32) -> vec2<u32> {
    if lane == 0u {
        found = select(vec2<u32>(0u, params.pool), vec2<u32>(SIGNIFICANCE_BUCKETS, 0u), params.pool == 0u);
    }
    let per = SIGNIFICANCE_BUCKETS / WORKGROUP;
    let top = SIGNIFICANCE_BUCKETS - 1u - lane * per;
    var mine = 0u;
    for (var i = 0u; i < per; i++) {
        mine += groups[top - i];
    }
    var before = lane_sums(mine, lane).x;
    for (var i = 0u; i < per; i++) {
        let n = groups[top - i];
        if params.pool > 0u && before < params.pool && before + n >= params.pool {
            found = vec2<u32>(top - i, params.pool - before);
        }
        before += n;
    }
    return workgroupUniformLoad(&found);
}

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) n: vec3<u32>,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let t = threshold(lane);
    let slot = gid.y * n.x * WORKGROUP + gid.x;
    var mark = 0u;
    if slot < params.slots {
        mark = marks[slot];
    }
    let seen = mark != 0u;
    // Seen, above T and at T, a byte each (at most 64 apiece): one scan for the three.
    let packed = u32(seen) | (u32(seen && mark - 1u > t.x) << 8u) | (u32(seen && mark - 1u == t.x) << 16u);
    let total = lane_sums(packed, lane).y;
    let group = wg.y * n.x + wg.x;
    if lane == 0u {
        let at = GROUP_BASE + 4u * group;
        groups[at] = total & 0xffu;
        groups[at + 1u] = (total >> 8u) & 0xffu;
        groups[at + 2u] = total >> 16u;
        groups[at + 3u] = 0u;
        if group == 0u {
            groups[SIGNIFICANCE_BUCKETS] = t.x;
            groups[SIGNIFICANCE_BUCKETS + 1u] = t.y;
        }
    }
}
