// Attachments (docs/gpu.md, "Attachments"): props placed from the palette, one dispatch per
// frame for every prop of every skinned instance. One thread per (rank r of the skinned pool,
// attachment a). The rank's frame slot is `order[r]`; its unit u is the one whose run
// `ranks[4u ..]` (first rank, skinned; partition.wgsl) holds r, and the unit's kind k its row.
// Row k × A + a of `table` says whether attachment a applies to k's (package, skin): its palette
// entry e and the map L from the prop's frame into the entry's bind space (the joint's bind
// transform times the attachment's offset, composed on the host). The prop's scene transform is
// P · palette[e] · L, P the slot's placement, written to `props[a × pool + r]`; a rank past the
// frame's skinned instances, or a kind the attachment does not apply to, gets the zero matrix
// (a prop drawn with it collapses to a point: no fragments). Thread (0, a) writes the
// instances of attachment a's draw: the frame's skinned count, `draws[5 a + 1]`.

/// Host mirror: `AttachParams`.
struct AttachParams {
    /// Units of the frame, ranks of the skinned pool, attachments.
    units: u32,
    pool: u32,
    attachments: u32,
    total_base: u32,
}

/// The unit whose run of ranks holds rank `r` (of the frame's skinned ones).
fn unit_of_rank(r: u32) -> u32 {
    var lo = 0u;
    var hi = params.units;
    while hi - lo > 1u {
        let mid = (lo + hi) / 2u;
        if ranks[4u * mid] <= r {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.y * groups.x * WORKGROUP + gid.x;
    let a = i / max(params.pool, 1u);
    let r = i - a * params.pool;
    if a >= params.attachments {
        return;
    }
    let total = ranks[params.total_base + 1u];
    if r == 0u {
        draws[5u * a + 1u] = total;
    }
    let out = 3u * (a * params.pool + r);
    var m = Affine(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    if r < total && params.units > 0u {
        let kind = units[unit_of_rank(r)].kind;
        let row = 4u * (kind * params.attachments + a);
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
