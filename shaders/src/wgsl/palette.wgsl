// Skinning palettes (palette.rs `build_palette`): one thread per (instance, palette entry k),
// `palette[k] = component[skin_joint[k]] * inverse_bind[k]`, 3x4 affines in component space.

@group(0) @binding(0) var<uniform> params: Params;
/// Skeleton joint of each palette entry of the package's skins.
@group(0) @binding(1) var<storage, read> skin_joints: array<u32>;
@group(0) @binding(2) var<storage, read> inverse_bind: array<Affine>;
@group(0) @binding(3) var<storage, read> headers: array<InstanceHeader>;
@group(0) @binding(4) var<storage, read> components: array<Affine>;
@group(0) @binding(5) var<storage, read_write> palettes: array<Affine>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups, 64u);
    let entries = params.skin_len;
    if index >= params.instance_count * entries {
        return;
    }
    let instance = index / entries;
    let k = index % entries;
    if is_hero(headers[instance]) {
        return;
    }
    let joint = skin_joints[params.skin_base + k];
    let component = components[instance * params.joint_count + joint];
    palettes[index] = affine_mul(component, inverse_bind[params.skin_base + k]);
}
