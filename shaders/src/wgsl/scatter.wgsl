// The frame's budgeted instances: one thread per frame slot. A slot the bounds pass saw (its
// mark `1 + group × WORKGROUP + rank`) takes rank `groups[group] + rank` (budget.wgsl's
// offsets); within the budget, `budgeted[rank]` is the slot: the skinned instances in frame-slot
// order, which partition.wgsl groups by level of detail.

/// Host mirror: `ScatterParams`.
struct ScatterParams {
    slots: u32,
    pool: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> params: ScatterParams;
@group(0) @binding(1) var<storage, read> marks: array<u32>;
@group(0) @binding(2) var<storage, read> groups: array<u32>;
@group(0) @binding(3) var<storage, read_write> budgeted: array<u32>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let slot = gid.y * n.x * WORKGROUP + gid.x;
    if slot >= params.slots {
        return;
    }
    let mark = marks[slot];
    if mark == 0u {
        return;
    }
    let rank = groups[(mark - 1u) / WORKGROUP] + (mark - 1u) % WORKGROUP;
    if rank < params.pool {
        budgeted[rank] = slot;
    }
}
