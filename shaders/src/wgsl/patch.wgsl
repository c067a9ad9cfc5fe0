// Retained instances whose program changed at the last tick (retained.rs): their rows and
// record templates written into `statics`. One thread per vec4 of a patch: a patch is a vec4
// naming its slot, then its row and template (`block` vec4s, as `statics` holds them per slot).

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
    let per = params.block + 1u;
    let p = i / per;
    let w = i - p * per;
    if p >= params.patches || w == 0u {
        return;
    }
    let slot = patches[p * per].x;
    statics[slot * params.block + w - 1u] = patches[p * per + w];
}
