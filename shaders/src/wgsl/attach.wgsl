// Attachments (docs/gpu.md, "Attachments"): props placed from the palette, one dispatch per
// frame for every prop of every skinned instance. One thread per (rank r of the skinned pool,
// attachment a). The rank's frame slot is `order[r]`; its skinned batch b is the one whose
// range `ranks[batch_base + 4 b ..]` (first rank, skinned; budget.wgsl) holds r. Row b × A + a
// of `table` says whether attachment a applies to b's (package, skin): its palette entry e and
// the map L from the prop's frame into the entry's bind space (the joint's bind transform
// times the attachment's offset, composed on the host). The prop's scene transform is
// P · palette[e] · L, P the slot's placement, written to `props[a × pool + r]`; a rank past the
// frame's skinned instances, or a batch the attachment does not apply to, gets the zero matrix
// (a prop drawn with it collapses to a point: no fragments). Thread (0, a) writes the
// instances of attachment a's draw: the frame's skinned count, `draws[5 a + 1]`.

/// Host mirror: `AttachParams`.
struct AttachParams {
    /// Skinned batches of the frame, ranks of the skinned pool, attachments.
    batches: u32,
    pool: u32,
    attachments: u32,
    batch_base: u32,
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.y * groups.x * WORKGROUP + gid.x;
    let a = i / max(params.pool, 1u);
    let r = i - a * params.pool;
    if a >= params.attachments {
        return;
    }
    var batch = params.batches;
    var total = 0u;
    for (var b = 0u; b < params.batches; b++) {
        let first = ranks[params.batch_base + 4u * b];
        let skinned = ranks[params.batch_base + 4u * b + 1u];
        if r >= first && r < first + skinned {
            batch = b;
        }
        total = max(total, first + skinned);
    }
    if r == 0u {
        draws[5u * a + 1u] = total;
    }
    let out = 3u * (a * params.pool + r);
    var m = Affine(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    if batch < params.batches {
        let row = 4u * (batch * params.attachments + a);
        let head = bitcast<vec4<u32>>(table[row]);
        if head.y == 1u {
            let slot = order[r];
            let pa = 3u * slot;
            let placement = Affine(placements[pa], placements[pa + 1u], placements[pa + 2u]);
            let local = Affine(table[row + 1u], table[row + 2u], table[row + 3u]);
            m = affine_mul(placement, affine_mul(load_palettes(slot, head.x), local));
        }
    }
    props[out] = m.r0;
    props[out + 1u] = m.r1;
    props[out + 2u] = m.r2;
}
