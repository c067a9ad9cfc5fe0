// The skinned budget (one workgroup): ranks for the instances the bounds pass saw, by (skinned
// batch, level of detail, frame slot), and the indirect arguments of the skinning dispatches and
// the draws.
//
// A *unit* is one level of one skinned batch: unit u = LOD_TIERS × (the batch's place among the
// skinned batches) + level. Per unit (`table[2u]`: first count in `groups`, bounds workgroups,
// skinning workgroups along x, triangle indices of the level's mesh; `table[2u + 1].x`: the
// level's first index in the skin's index buffer), in order: an exclusive scan turns its
// workgroups' counts into the rank of each one's first seen instance, counting on from the units
// before. Ranks from `pool` on are over budget and not skinned. `ranks[4u ..]` gets (first rank,
// skinned, seen, 0); `indirect[3u ..]` the skinning dispatch (x, min(skinned, rows),
// ceil(skinned / rows)). Per page p of the skinned pool (`page_instances` ranks each), the draw
// of unit u on p covers the unit's ranks on that page: `indirect[draw_base + 5 (u pages + p)
// ..]` gets (indices, instances, first index, 0, 0), and `ranks[rank_base + u pages + p]` its
// first rank within the page.

/// Host mirror: `BudgetParams`.
struct BudgetParams {
    units: u32,
    /// Skinned instances the pool holds: the budget.
    pool: u32,
    page_instances: u32,
    pages: u32,
    /// Most workgroups per dimension.
    rows: u32,
    draw_base: u32,
    rank_base: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> params: BudgetParams;
@group(0) @binding(1) var<storage, read> table: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> groups: array<u32>;
@group(0) @binding(3) var<storage, read_write> ranks: array<u32>;
@group(0) @binding(4) var<storage, read_write> indirect: array<u32>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(local_invocation_index) lane: u32) {
    var next = 0u;
    for (var b = 0u; b < params.units; b++) {
        let row = table[2u * b];
        let first = next;
        for (var c = 0u; c < row.y; c += WORKGROUP) {
            let g = row.x + c + lane;
            let inside = c + lane < row.y;
            var n = 0u;
            if inside {
                n = groups[g];
            }
            let sums = lane_sums(n, lane);
            if inside {
                groups[g] = next + sums.x;
            }
            next += sums.y;
        }
        if lane == 0u {
            let skinned = min(next, params.pool) - min(first, params.pool);
            ranks[4u * b] = first;
            ranks[4u * b + 1u] = skinned;
            ranks[4u * b + 2u] = next - first;
            ranks[4u * b + 3u] = 0u;
            indirect[3u * b] = row.z;
            indirect[3u * b + 1u] = min(skinned, params.rows);
            indirect[3u * b + 2u] = (skinned + params.rows - 1u) / params.rows;
            for (var p = 0u; p < params.pages; p++) {
                let start = p * params.page_instances;
                let lo = max(first, start);
                let hi = min(first + skinned, start + params.page_instances);
                let d = b * params.pages + p;
                let at = params.draw_base + 5u * d;
                indirect[at] = row.w;
                indirect[at + 1u] = select(0u, hi - lo, hi > lo);
                indirect[at + 2u] = table[2u * b + 1u].x;
                indirect[at + 3u] = 0u;
                indirect[at + 4u] = 0u;
                ranks[params.rank_base + d] = select(0u, lo - start, hi > lo);
            }
        }
    }
}
