// The skinned budget (one workgroup): ranks for the instances the bounds pass saw, in frame-slot
// order (partition.wgsl then groups the skinned ones by unit: kind and level of detail).
//
// An exclusive scan turns the bounds workgroups' seen counts (`groups`) into the rank of each
// workgroup's first seen instance. Ranks from `pool` on are over budget and not skinned.
// `ranks[total_base ..]` gets (0, skinned, seen, 0).

/// Host mirror: `BudgetParams`.
struct BudgetParams {
    groups: u32,
    /// Skinned instances the pool holds: the budget.
    pool: u32,
    total_base: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> params: BudgetParams;
@group(0) @binding(1) var<storage, read_write> groups: array<u32>;
@group(0) @binding(2) var<storage, read_write> ranks: array<u32>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(local_invocation_index) lane: u32) {
    var next = 0u;
    for (var c = 0u; c < params.groups; c += WORKGROUP) {
        let g = c + lane;
        let inside = g < params.groups;
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
        let at = params.total_base;
        ranks[at] = 0u;
        ranks[at + 1u] = min(next, params.pool);
        ranks[at + 2u] = next;
        ranks[at + 3u] = 0u;
    }
}
