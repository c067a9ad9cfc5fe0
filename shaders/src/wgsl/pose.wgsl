// What every pose kernel shares: the dispatch parameters and the resident-data readers.
// Resident data (docs/gpu.md): `tables` holds u32 tables, `pool` f32 vec4s, at the bases below.

/// Per-dispatch parameters of one (batch, shape) dispatch (host mirror: `PoseParams`).
struct PoseParams {
    /// Instances in this dispatch; record `k` is at `record_base + k * record_stride`.
    count: u32,
    record_base: u32,
    record_stride: u32,
    joint_count: u32,
    /// `tables`: the package's clip headers (CLIP_WORDS each).
    clip_base: u32,
    /// `tables`: parent (or NO_PARENT) and depth of each joint of the skeleton.
    parent_base: u32,
    depth_base: u32,
    /// `pool`: rest pose, three vec4s (t, q, s) per joint.
    rest_base: u32,
    /// Palette entries of the batch's skin (0 without one).
    skin_len: u32,
    /// `tables`: skeleton joint of each palette entry.
    skin_joint_base: u32,
    /// `tables`: per joint, (first, count) of its entries in the palette order.
    skin_range_base: u32,
    /// `tables`: palette entries sorted by joint.
    skin_order_base: u32,
    /// `pool`: inverse bind matrices, three rows per entry.
    ibm_base: u32,
    /// `tables`: per package mask, the `pool` vec4 of its first four weights.
    mask_base: u32,
    /// Interpreter: the shape's first op in `shapes` (two vec4s per op) and op count.
    shape_base: u32,
    shape_ops: u32,
    /// Largest joint depth of the skeleton (root = 0).
    max_depth: u32,
    /// `tables`: the block of the dispatch's skeleton LOD level (below), or NO_LOD for every
    /// joint.
    lod_base: u32,
    /// `pool`: the LOD's held pose, three vec4s (t, q, s) per joint (unused with NO_LOD).
    held_base: u32,
    pad2: u32,
}

// A skeleton LOD level's block in `tables` (at `params.lod_base`): its retained joint count
// `r`, its retained-joint bitset (bit j % 32 of word j / 32), then every joint, the retained
// ones ascending and then the dropped ones ascending.

/// Joints whose programs run at the dispatch's skeleton LOD (throng-cpu-ref `lod`).
fn lod_retained() -> u32 {
    if params.lod_base == NO_LOD {
        return params.joint_count;
    }
    return tables[params.lod_base];
}

/// Joint `i` of the level's order: retained joints first (i < `lod_retained()`), each group
/// parent before child.
fn lod_joint(i: u32) -> u32 {
    if params.lod_base == NO_LOD {
        return i;
    }
    return tables[params.lod_base + 1u + ((params.joint_count + 31u) >> 5u) + i];
}

/// Whether joint `j` runs the program at the dispatch's skeleton LOD; a dropped joint holds the
/// level's pose.
fn retained(j: u32) -> bool {
    if params.lod_base == NO_LOD {
        return true;
    }
    return ((tables[params.lod_base + 1u + (j >> 5u)] >> (j & 31u)) & 1u) != 0u;
}

/// The local pose dropped joint `j` holds at the dispatch's skeleton LOD.
fn held_joint(j: u32) -> Trs {
    let at = params.held_base + 3u * j;
    return Trs(pool[at].xyz, pool[at + 1u], pool[at + 2u].xyz);
}

/// The rest pose of joint `j` of the dispatch's skeleton.
fn rest_joint(j: u32) -> Trs {
    let at = params.rest_base + 3u * j;
    return Trs(pool[at].xyz, pool[at + 1u], pool[at + 2u].xyz);
}

/// Weight of joint `j` in package mask `m` (1 for NO_MASK).
fn mask_weight(m: u32, j: u32) -> f32 {
    if m == NO_MASK {
        return 1.0;
    }
    return pool[tables[params.mask_base + m] + (j >> 2u)][j & 3u];
}

/// Inverse bind matrix of palette entry `k` of the batch's skin.
fn inverse_bind(k: u32) -> Affine {
    let at = params.ibm_base + 3u * k;
    return Affine(pool[at], pool[at + 1u], pool[at + 2u]);
}
