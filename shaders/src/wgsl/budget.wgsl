// The skinned budget (one workgroup): ranks for the instances the bounds pass saw, in frame-slot
// order (partition.wgsl then groups each batch's skinned ones by level of detail).
//
// Per skinned batch b (`table[2 LOD_TIERS b]`: first bounds workgroup, workgroups; the first
// row of the batch's level-0 unit, partition.wgsl), in batch order: an exclusive scan turns its
// workgroups' counts (`groups`) into the rank of each workgroup's first seen instance, counting
// on from the batches before. Ranks from `pool` on are over budget and not skinned.
// `ranks[batch_base + 4 b ..]` gets (first rank, skinned, seen, 0).

/// Host mirror: `BudgetParams`.
struct BudgetParams {
    batches: u32,
    /// Skinned instances the pool holds: the budget.
    pool: u32,
    batch_base: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> params: BudgetParams;
@group(0) @binding(1) var<storage, read> table: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> groups: array<u32>;
@group(0) @binding(3) var<storage, read_write> ranks: array<u32>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(local_invocation_index) lane: u32) {
    var next = 0u;
    for (var b = 0u; b < params.batches; b++) {
        let row = table[2u * LOD_TIERS * b];
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
            let at = params.batch_base + 4u * b;
            ranks[at] = first;
            ranks[at + 1u] = min(next, params.pool) - min(first, params.pool);
            ranks[at + 2u] = next - first;
            ranks[at + 3u] = 0u;
        }
    }
}
