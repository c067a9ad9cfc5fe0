// The skinned budget (one workgroup): the tallies of the bounds workgroups (tally.wgsl: seen
// slots, slots above the threshold key, slots at it) scanned, each in place, into the counts of
// the workgroups before; then the frame's totals: skinned = above + min(at, R), seen, and the
// card draw's instance count, seen − skinned (scatter.wgsl writes a card for each).
// `ranks[total_base ..]` gets (0, skinned, seen, 0): word 0 counts the cards of a kind with a
// far tier (scatter.wgsl), word 3 the skinning workgroups (partition.wgsl).

/// Host mirror: `BudgetParams`.
struct BudgetParams {
    groups: u32,
    /// Skinned instances the pool holds: the budget.
    pool: u32,
    total_base: u32,
    /// `indirect`: the card draw's arguments (4 u32).
    card_base: u32,
}

@group(0) @binding(0) var<uniform> params: BudgetParams;
@group(0) @binding(1) var<storage, read_write> groups: array<u32>;
@group(0) @binding(2) var<storage, read_write> ranks: array<u32>;
@group(0) @binding(3) var<storage, read_write> indirect: array<u32>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(local_invocation_index) lane: u32) {
    var next = vec3<u32>(0u);
    for (var c = 0u; c < params.groups; c += WORKGROUP) {
        let g = c + lane;
        let inside = g < params.groups;
        let at = GROUP_BASE + 4u * g;
        var n = vec3<u32>(0u);
        if inside {
            n = vec3<u32>(groups[at], groups[at + 1u], groups[at + 2u]);
        }
        let seen = lane_sums(n.x, lane);
        let above = lane_sums(n.y, lane);
        let at_t = lane_sums(n.z, lane);
        if inside {
            groups[at] = next.x + seen.x;
            groups[at + 1u] = next.y + above.x;
            groups[at + 2u] = next.z + at_t.x;
        }
        next += vec3<u32>(seen.y, above.y, at_t.y);
    }
    if lane == 0u {
        let skinned = next.y + min(next.z, groups[SIGNIFICANCE_BUCKETS + 1u]);
        let at = params.total_base;
        ranks[at] = 0u;
        ranks[at + 1u] = skinned;
        ranks[at + 2u] = next.x;
        ranks[at + 3u] = 0u;
        let d = params.card_base;
        indirect[d] = 4u;
        indirect[d + 1u] = next.x - skinned;
        indirect[d + 2u] = 0u;
        indirect[d + 3u] = 0u;
    }
}
