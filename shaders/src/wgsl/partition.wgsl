// The skinned order by level of detail (one workgroup): each skinned batch's budgeted instances
// (budget.wgsl, scatter.wgsl: ranks `first .. first + skinned` in frame-slot order) regrouped,
// stably, by the level of their slot (`lods`, a byte per slot), so each *unit* (one level of one
// skinned batch, unit u = LOD_TIERS × batch + level) is a run of the skinned pool. The budget
// chose by frame slot, whatever the levels; this only orders what it chose.
//
// Per unit u (`table[2u]`: the batch's first bounds workgroup and workgroups, skinning
// workgroups along x, triangle indices of the level's mesh; `table[2u + 1].x`: the level's first
// index in the skin's index buffer): `order[rank]` the slot of each of its ranks, `ranks[4u ..]`
// (first rank, skinned, 0, 0), `indirect[3u ..]` the skinning dispatch (x, min(skinned, rows),
// ceil(skinned / rows)), and per page p of the skinned pool (`page_instances` ranks each) the
// draw of unit u on p: `indirect[draw_base + 5 (u pages + p) ..]` gets (indices, instances,
// first index, 0, 0), and `ranks[rank_base + u pages + p]` its first rank within the page.

/// Host mirror: `PartitionParams`.
struct PartitionParams {
    batches: u32,
    page_instances: u32,
    pages: u32,
    /// Most workgroups per dimension.
    rows: u32,
    draw_base: u32,
    rank_base: u32,
    batch_base: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> params: PartitionParams;
@group(0) @binding(1) var<storage, read> table: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> lods: array<u32>;
@group(0) @binding(3) var<storage, read> budgeted: array<u32>;
@group(0) @binding(4) var<storage, read_write> ranks: array<u32>;
@group(0) @binding(5) var<storage, read_write> order: array<u32>;
@group(0) @binding(6) var<storage, read_write> indirect: array<u32>;

/// The batch's (first rank, skinned), read by one lane and shared, so loops over it stay in
/// uniform control flow for `lane_sums`.
var<workgroup> batch_range: vec2<u32>;

fn level_of(slot: u32) -> u32 {
    return (lods[slot / 4u] >> (8u * (slot % 4u))) & 0xffu;
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(local_invocation_index) lane: u32) {
    for (var b = 0u; b < params.batches; b++) {
        if lane == 0u {
            batch_range = vec2<u32>(ranks[params.batch_base + 4u * b], ranks[params.batch_base + 4u * b + 1u]);
        }
        let range = workgroupUniformLoad(&batch_range);
        let first = range.x;
        let skinned = range.y;
        var next = first;
        for (var l = 0u; l < LOD_TIERS; l++) {
            let u = LOD_TIERS * b + l;
            let start = next;
            for (var c = 0u; c < skinned; c += WORKGROUP) {
                let inside = c + lane < skinned;
                var slot = 0u;
                if inside {
                    slot = budgeted[first + c + lane];
                }
                let mine = inside && level_of(slot) == l;
                let sums = lane_sums(u32(mine), lane);
                if mine {
                    order[next + sums.x] = slot;
                }
                next += sums.y;
            }
            if lane == 0u {
                let n = next - start;
                let row = table[2u * u];
                ranks[4u * u] = start;
                ranks[4u * u + 1u] = n;
                ranks[4u * u + 2u] = 0u;
                ranks[4u * u + 3u] = 0u;
                indirect[3u * u] = row.z;
                indirect[3u * u + 1u] = min(n, params.rows);
                indirect[3u * u + 2u] = (n + params.rows - 1u) / params.rows;
                for (var p = 0u; p < params.pages; p++) {
                    let page = p * params.page_instances;
                    let lo = max(start, page);
                    let hi = min(next, page + params.page_instances);
                    let d = u * params.pages + p;
                    let at = params.draw_base + 5u * d;
                    indirect[at] = row.w;
                    indirect[at + 1u] = select(0u, hi - lo, hi > lo);
                    indirect[at + 2u] = table[2u * u + 1u].x;
                    indirect[at + 3u] = 0u;
                    indirect[at + 4u] = 0u;
                    ranks[params.rank_base + d] = select(0u, lo - page, hi > lo);
                }
            }
        }
    }
}
