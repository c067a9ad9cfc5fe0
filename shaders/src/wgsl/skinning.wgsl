// Linear blend skinning (skinning.rs `skin_mesh`): one thread per (skinned instance,
// SKIN_VERTICES_PER_THREAD vertices) of one unit (a skinned batch at one level of detail), the
// instance from the workgroup (y, then z). The unit's vertices are its level's: the vertex
// records the level's mesh LOD uses, copied contiguously at `vertex_base` (resident.rs), so a
// reduced level skins only them. Skinned instance `i` of the unit has rank `ranks[4 unit] + i`
// (budget.wgsl),
// frame slot `order[rank]` (scatter.wgsl), and is written at that rank of the skinned pool. The
// dispatch is indirect, sized from the batch's skinned count. `M = Σ wᵢ palette[jointᵢ]` (zero weights and joints outside the palette
// skipped); position `M p`, normal `normalize(cof(L) n)` (L the linear part of M); then the
// instance's placement P: `P (M p)`, `normalize(cof(P) n)`. Output per vertex: the position's
// bits and the octahedral normal (`encode_normal`), instance-major by frame slot; then the
// `motion` hook (motion.wgsl, or a no-op without motion vectors).
//
// A vertex record is three vec4<u32>: position bits and joints 0-1 (16 bits each), normal bits
// (zero without normals) and joints 2-3, the four weights' bits.

/// Per-dispatch parameters of one unit (host mirror: `SkinParams`).
struct SkinParams {
    /// The unit's place among the frame's units (budget.wgsl).
    unit: u32,
    /// First vertex record of the level's vertices, and their count.
    vertex_base: u32,
    vertex_count: u32,
    skin_len: u32,
    /// Workgroup rows per z layer (instances past 65 535 fold into z).
    rows: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let i = wg.y + wg.z * params.rows;
    if i >= ranks[4u * params.unit + 1u] {
        return;
    }
    let out = ranks[4u * params.unit] + i;
    let slot = order[out];
    // The placement once per thread, for SKIN_VERTICES_PER_THREAD vertices of one instance.
    let pa = 3u * slot;
    let placement = Affine(placements[pa], placements[pa + 1u], placements[pa + 2u]);
    for (var n = 0u; n < SKIN_VERTICES_PER_THREAD; n++) {
        let v = (wg.x * SKIN_VERTICES_PER_THREAD + n) * WORKGROUP + lane;
        if v >= params.vertex_count {
            break;
        }
        let at = 3u * (params.vertex_base + v);
        let a = vertices[at];
        let b = vertices[at + 1u];
        let w = bitcast<vec4<f32>>(vertices[at + 2u]);
        let joints = vec4<u32>(a.w & 0xffffu, a.w >> 16u, b.w & 0xffffu, b.w >> 16u);
        var m = Affine(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
        for (var k = 0u; k < 4u; k++) {
            if w[k] != 0.0 && joints[k] < params.skin_len {
                let p = load_palettes(slot, joints[k]);
                m = Affine(m.r0 + p.r0 * w[k], m.r1 + p.r1 * w[k], m.r2 + p.r2 * w[k]);
            }
        }
        let p = bitcast<vec3<f32>>(a.xyz);
        let position = affine_point(placement, affine_point(m, p));
        let normal = normalize_or_zero(cofactor_mul(placement, normalize_or_zero(cofactor_mul(m, bitcast<vec3<f32>>(b.xyz)))));
        store_skinned(out, v, vec4<u32>(bitcast<vec3<u32>>(position), encode_normal(normal)));
        motion(out, slot, v, joints, w, p, position);
    }
}
