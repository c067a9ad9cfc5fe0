// Retained instances whose program changed at the last tick (retained.rs): their rows and
// record templates written into `statics`. One thread per (patch, vec4 of a slot's block): a
// patch's head is its slot, where its vec4s start after the heads, and how many (its row and
// its record, as long as its shape's; `statics` holds `block` vec4s per slot).

/// Host mirror: `PatchParams`.
struct PatchParams {
    patches: u32,
    /// Row and template vec4s per slot.
    block: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> params: PatchParams;
@group(0) @binding(1) var<storage, read> patches: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> statics: array<vec4<u32>>;

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.y * groups.x * WORKGROUP + gid.x;
    let p = i / params.block;
    let w = i - p * params.block;
    if p >= params.patches {
        return;
    }
    let head = patches[p];
    if w >= head.z {
        return;
    }
    statics[head.x * params.block + w] = patches[params.patches + head.y + w];
}
