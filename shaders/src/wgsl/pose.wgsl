// What every pose kernel shares: the dispatch parameters and the resident-data readers.
// Resident data (docs/gpu.md): `tables` holds u32 tables, `pool` f32 vec4s, at the bases below.

/// Per-dispatch parameters of one pose dispatch: the instances of one shape, of any kinds (host
/// mirror: `PoseParams`).
struct PoseParams {
    /// Instances in this dispatch; record `k` is at `record_base + k * record_stride`.
    count: u32,
    record_base: u32,
    record_stride: u32,
    /// Interpreter: the shape's first op in `shapes` (two vec4s per op) and op count.
    shape_base: u32,
    shape_ops: u32,
    /// The deepest joint of any kind in the dispatch (root = 0).
    max_depth: u32,
    pad0: u32,
    pad1: u32,
}

/// The kind of the instance this invocation poses, and its skeleton LOD level's block
/// (`tables`, NO_LOD at level 0) and held pose (`pool`): set by `enter_instance`.
var<private> kind: KindRow;
var<private> lod_at: u32;
var<private> held_at: u32;

/// Takes the kind and level of a record's word 1 (`kind | level << 24`).
fn enter_instance(word: u32) {
    kind = kinds[word & KIND_MASK];
    let level = word >> LEVEL_SHIFT;
    lod_at = NO_LOD;
    held_at = 0u;
    if level > 0u {
        lod_at = kind.lod_base + (level - 1u) * kind.lod_block;
        held_at = kind.held_base + 3u * (level - 1u) * kind.joint_count;
    }
}

/// The header of clip `clip` of the instance's package.
fn clip_header(clip: u32) -> Clip {
    return clip_header_at(kind.clip_base + CLIP_WORDS * clip);
}

/// Clip `clip`'s base in the decode cache this frame, or NO_DECODE.
fn decode_entry(clip: u32) -> u32 {
    return decode_table[kind.decode_base + clip];
}

// A skeleton LOD level's block in `tables` (`lod_at`): its retained joint count
// `r`, its retained-joint bitset (bit j % 32 of word j / 32), then every joint, the retained
// ones ascending and then the dropped ones ascending.

/// Joints whose programs run at the dispatch's skeleton LOD (throng-cpu-ref `lod`).
fn lod_retained() -> u32 {
    if lod_at == NO_LOD {
        return kind.joint_count;
    }
    return tables[lod_at];
}

/// Joint `i` of the level's order: retained joints first (i < `lod_retained()`), each group
/// parent before child.
fn lod_joint(i: u32) -> u32 {
    if lod_at == NO_LOD {
        return i;
    }
    return tables[lod_at + 1u + ((kind.joint_count + 31u) >> 5u) + i];
}

/// Whether joint `j` runs the program at the dispatch's skeleton LOD; a dropped joint holds the
/// level's pose.
fn retained(j: u32) -> bool {
    if lod_at == NO_LOD {
        return true;
    }
    return ((tables[lod_at + 1u + (j >> 5u)] >> (j & 31u)) & 1u) != 0u;
}

/// The local pose dropped joint `j` holds at the dispatch's skeleton LOD.
fn held_joint(j: u32) -> Trs {
    let at = held_at + 3u * j;
    return Trs(pool[at].xyz, pool[at + 1u], pool[at + 2u].xyz);
}

/// The rest pose of joint `j` of the dispatch's skeleton.
fn rest_joint(j: u32) -> Trs {
    let at = kind.rest_base + 3u * j;
    return Trs(pool[at].xyz, pool[at + 1u], pool[at + 2u].xyz);
}

/// Weight of joint `j` in package mask `m` (1 for NO_MASK).
fn mask_weight(m: u32, j: u32) -> f32 {
    if m == NO_MASK {
        return 1.0;
    }
    return pool[tables[kind.mask_base + m] + (j >> 2u)][j & 3u];
}

/// Inverse bind matrix of palette entry `k` of the batch's skin.
fn inverse_bind(k: u32) -> Affine {
    let at = kind.ibm_base + 3u * k;
    return Affine(pool[at], pool[at + 1u], pool[at + 2u]);
}
