// Linear blend skinning (skinning.rs `skin_mesh`): one indirect dispatch for every skinned
// instance of every unit (a skinned kind at one level of detail). Each skinned instance of a unit
// takes `blocks` workgroups (the unit's vertices over WORKGROUP × SKIN_VERTICES_PER_THREAD), the
// units' runs of workgroups back to back (partition.wgsl wrote each unit's first workgroup):
// workgroup w finds its unit by a binary search over those starts (the same for every lane), its
// instance and block by division. A unit's vertices are its level's: the vertex records the
// level's mesh LOD uses, copied contiguously at `vertex_base` (resident.rs), so a reduced level
// skins only them. Skinned instance `i` of unit u has rank `ranks[4u] + i`, frame slot
// `order[rank]`, and is written at that rank of the skinned pool. `M = Σ wᵢ palette[jointᵢ]`
// (zero weights and joints outside the palette skipped); position `M p`, normal
// `normalize(cof(L) n)` (L the linear part of M); then the instance's placement P: `P (M p)`,
// `normalize(cof(P) n)`. Output per vertex: the position's bits and the octahedral normal
// (`encode_normal`); then the `motion` hook (motion.wgsl, or a no-op without motion vectors).
// The same kernel with the hooks of morph.wgsl and morph_pass.wgsl is the morph pass, a second
// indirect dispatch after it: its runs are the instances the partition listed, some target of
// which weighs anything (`run_rank`), each over only the span of vertices its level's targets
// move (`run_first .. run_end`, `run_blocks` workgroups, starts in the units' fourth rank word);
// it writes them morphed before the palette blends them (`morph_vertex`), over what skinning
// wrote; the previous position of motion vectors is that morphed vertex under the last palette.
// Without them (`NO_MORPH_HOOK`, kernel.rs) a unit's runs are its skinned instances, each over
// every vertex of the level, unmorphed.
//
// A vertex record is three vec4<u32>: position bits and joints 0-1 (16 bits each), normal bits
// (zero without normals) and joints 2-3, the four weights' bits.

/// Parameters of the skinning dispatch (host mirror: `SkinParams`).
struct SkinParams {
    units: u32,
    /// Workgroup rows of the dispatch's grid.
    rows: u32,
    total_base: u32,
    morph_list: u32,
}

/// The unit whose run of workgroups holds workgroup `w`: the last unit starting at or before it
/// (units without instances start where the next one does).
fn unit_at(w: u32) -> u32 {
    var lo = 0u;
    var hi = params.units;
    while hi - lo > 1u {
        let mid = (lo + hi) / 2u;
        if ranks[4u * mid + RUN_START] <= w {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/// Skins vertex `v` of skinned instance `out` (frame slot `slot`, placed by `placement`) of unit
/// `row`, its morph targets (`m`) moving it first.
fn skin_vertex(row: UnitRow, out: u32, slot: u32, placement: Affine, v: u32, m: Morphing) {
    let at = 3u * (row.vertex_base + v);
    let a = vertices[at];
    let b = vertices[at + 1u];
    let wt = bitcast<vec4<f32>>(vertices[at + 2u]);
    let joints = vec4<u32>(a.w & 0xffffu, a.w >> 16u, b.w & 0xffffu, b.w >> 16u);
    var blend = Affine(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    for (var k = 0u; k < 4u; k++) {
        if wt[k] != 0.0 && joints[k] < row.skin_len {
            let q = load_palettes(slot, joints[k]);
            blend = Affine(blend.r0 + q.r0 * wt[k], blend.r1 + q.r1 * wt[k], blend.r2 + q.r2 * wt[k]);
        }
    }
    let bind = morph_vertex(m, v, array<vec3<f32>, 2>(bitcast<vec3<f32>>(a.xyz), bitcast<vec3<f32>>(b.xyz)));
    let p = bind[0];
    let position = affine_point(placement, affine_point(blend, p));
    let normal = normalize_or_zero(cofactor_mul(placement, normalize_or_zero(cofactor_mul(blend, bind[1]))));
    store_skinned(out, v, vec4<u32>(bitcast<vec3<u32>>(position), encode_normal(normal)));
    motion(out, slot, v, joints, wt, p, position, row.skin_len);
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let w = wg.y * params.rows + wg.x;
    if w >= ranks[params.total_base + RUN_TOTAL] {
        return;
    }
    let u = unit_at(w);
    let row = units[u];
    let local = w - ranks[4u * u + RUN_START];
    let blocks = run_blocks(row);
    let i = local / blocks;
    let block = local - i * blocks;
    let out = run_rank(u, i);
    let slot = order[out];
    let morphing = morph_begin(row, slot);
    // The placement once per thread, for SKIN_VERTICES_PER_THREAD vertices of one instance.
    let pa = 3u * slot;
    let placement = Affine(placements[pa], placements[pa + 1u], placements[pa + 2u]);
    let end = run_end(row);
    for (var n = 0u; n < SKIN_VERTICES_PER_THREAD; n++) {
        let v = run_first(row) + (block * SKIN_VERTICES_PER_THREAD + n) * WORKGROUP + lane;
        if v >= end {
            break;
        }
        skin_vertex(row, out, slot, placement, v, morphing);
    }
}
