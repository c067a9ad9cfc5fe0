// Forward kinematics (fk.rs `local_to_component`): `component[root] = local[root]`,
// `component[j] = component[parent[j]] * local[j]`, composed as 3x4 affines (shear kept).
//
// `fast`: one workgroup per instance, one thread per joint, level by level over joint depth in
// workgroup memory (skeletons of up to FK_WORKGROUP joints). `fallback`: one thread per
// instance walking its joints in order (parent before child) through storage, for any size.

@group(0) @binding(0) var<uniform> params: Params;
/// Per joint of the package: (parent within its skeleton or NO_PARENT, depth).
@group(0) @binding(1) var<storage, read> joint_table: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> headers: array<InstanceHeader>;
@group(0) @binding(3) var<storage, read> locals: array<TrsRecord>;
@group(0) @binding(4) var<storage, read_write> components: array<Affine>;

var<workgroup> shared_component: array<Affine, FK_WORKGROUP>;

@compute @workgroup_size(FK_WORKGROUP)
fn fast(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) joint: u32,
) {
    let instance = wg.y * groups.x + wg.x;
    if instance >= params.instance_count {
        return;
    }
    let joints = params.joint_count;
    let in_skeleton = joint < joints;
    var local = Affine(vec4<f32>(1.0, 0.0, 0.0, 0.0), vec4<f32>(0.0, 1.0, 0.0, 0.0), vec4<f32>(0.0, 0.0, 1.0, 0.0));
    var link = vec2<u32>(NO_PARENT, 0u);
    if in_skeleton {
        local = trs_to_affine(trs_load(locals[instance * joints + joint]));
        link = joint_table[params.joint_base + joint];
        shared_component[joint] = local;
    }
    for (var depth = 1u; depth <= params.max_depth; depth++) {
        workgroupBarrier();
        if in_skeleton && link.y == depth && link.x < joint {
            shared_component[joint] = affine_mul(shared_component[link.x], local);
        }
    }
    if in_skeleton && !is_hero(headers[instance]) {
        components[instance * joints + joint] = shared_component[joint];
    }
}

@compute @workgroup_size(64)
fn fallback(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let instance = flat_index(gid, groups, 64u);
    if instance >= params.instance_count || is_hero(headers[instance]) {
        return;
    }
    let joints = params.joint_count;
    let base = instance * joints;
    for (var joint = 0u; joint < joints; joint++) {
        let local = trs_to_affine(trs_load(locals[base + joint]));
        let parent = joint_table[params.joint_base + joint].x;
        if parent < joint {
            components[base + joint] = affine_mul(components[base + parent], local);
        } else {
            components[base + joint] = local;
        }
    }
}
