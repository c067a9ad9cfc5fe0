// Linear blend skinning (skinning.rs `skin_mesh`): one thread per (instance, vertex).
// `M = Σ wᵢ palette[jointᵢ]` (zero weights and joints outside the palette skipped);
// position `M p`, normal `normalize(cof(L) n)` (L the linear part of M). The instance's
// placement P (component space → scene) is applied afterwards: `P (M p)`, `normalize(cof(P) n)`.
// Output is instance-major: `skinned[instance * vertex_count + v]`, so a raster pass can pull
// vertices by instance index.

/// A bind-space vertex of the package: `normal.w` is 1 when the mesh has normals, else 0.
struct Vertex {
    position: vec4<f32>,
    normal: vec4<f32>,
    joints: vec4<u32>,
    weights: vec4<f32>,
}

/// A skinned vertex: `position.w` = 1, `normal.w` = 0; the normal is zero when the mesh has none.
struct SkinnedVertex {
    position: vec4<f32>,
    normal: vec4<f32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> vertices: array<Vertex>;
@group(0) @binding(2) var<storage, read> palettes: array<Affine>;
@group(0) @binding(3) var<storage, read> placements: array<Affine>;
@group(0) @binding(4) var<storage, read_write> skinned: array<SkinnedVertex>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups, 64u);
    let count = params.vertex_count;
    if index >= params.instance_count * count {
        return;
    }
    let instance = index / count;
    let vertex = vertices[params.vertex_base + index % count];
    let base = instance * params.skin_len;
    var m = Affine(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    for (var i = 0u; i < 4u; i++) {
        let w = vertex.weights[i];
        let j = vertex.joints[i];
        if w != 0.0 && j < params.skin_len {
            let p = palettes[base + j];
            m = Affine(m.r0 + p.r0 * w, m.r1 + p.r1 * w, m.r2 + p.r2 * w);
        }
    }
    let placement = placements[instance];
    let position = affine_point(placement, affine_point(m, vertex.position.xyz));
    var normal = vec3<f32>(0.0);
    if vertex.normal.w != 0.0 {
        normal = normalize_or_zero(cofactor_mul(placement, normalize_or_zero(cofactor_mul(m, vertex.normal.xyz))));
    }
    skinned[index] = SkinnedVertex(vec4<f32>(position, 1.0), vec4<f32>(normal, 0.0));
}
