//! Host mirrors of the WGSL structs the host writes (`PoseParams` of pose.wgsl, `SkinParams`
//! of skinning.wgsl, `BoundsParams` of bounds.wgsl, `BudgetParams` of budget.wgsl,
//! `PartitionParams` of partition.wgsl, `ScatterParams` of scatter.wgsl, `TallyParams` of
//! tally.wgsl, `AttachParams` of
//! attach.wgsl, `DecodeParams` of decode.wgsl), byte for byte; a test checks every member offset against naga's layout.

use bytemuck::{Pod, Zeroable};

/// `PoseParams::lod_base` of a dispatch at skeleton LOD level 0: every joint runs its program.
pub const NO_LOD: u32 = u32::MAX;

/// A clip's entry in its package's decode table when this frame did not decode it into the
/// decode cache (decode.wgsl): its instances decode their own samples.
pub const NO_DECODE: u32 = u32::MAX;

/// `PoseParams` of pose.wgsl: one pose dispatch, the instances of one shape of any kinds (32
/// bytes, uniform). Each instance's kind (skeleton, skin, package) is in its record.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct PoseParams {
    pub count: u32,
    pub record_base: u32,
    pub record_stride: u32,
    /// Interpreter: the shape's first op in the shape table and its op count.
    pub shape_base: u32,
    pub shape_ops: u32,
    /// The deepest joint of any kind in the dispatch (the workgroup mapping's FK levels).
    pub max_depth: u32,
    pub pad: [u32; 2],
}

/// A record's word 1 and a frame slot's kind word: the instance's kind in the low 22 bits
/// ([`KIND_MASK`]), its skeleton LOD level from bit [`LEVEL_SHIFT`] (pose.wgsl
/// `enter_instance`), and in a slot's word (never a record's) whether it keeps its last pose
/// ([`KEEP_BIT`]) or shows a hero's palette ([`HERO_BIT`]).
pub const LEVEL_SHIFT: u32 = 24;
pub const KIND_MASK: u32 = (1 << 22) - 1;
pub const KEEP_BIT: u32 = 1 << 22;
pub const HERO_BIT: u32 = 1 << 23;
/// A retained slot with no program shape (present.wgsl).
pub const NO_SHAPE: u32 = u32::MAX;
/// The kind word of a frame slot no instance holds: no box, never seen.
pub const NO_KIND: u32 = u32::MAX;

/// The kind word of an instance of kind `kind` at skeleton LOD level `level`.
pub fn kind_word(kind: u32, level: u8) -> u32 {
    (kind & KIND_MASK) | (u32::from(level) << LEVEL_SHIFT)
}

/// No skinning unit: a kind without a skin (`KindRow::unit_base`).
pub const NO_UNIT: u32 = u32::MAX;

/// `KindRow` of pose.wgsl: where one kind of instance (a skeleton of a package, with or without
/// one of its skins) lives in the resident arena (128 bytes, one row of the `kinds` buffer).
/// Every pass reads the row of an instance's kind instead of per-dispatch parameters, so one
/// dispatch covers instances of any skeletons, skins and packages.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct KindRow {
    pub joint_count: u32,
    /// `tables`: the package's clip headers (`CLIP_WORDS` each).
    pub clip_base: u32,
    pub parent_base: u32,
    pub depth_base: u32,
    pub rest_base: u32,
    /// Palette entries of the kind's skin (0 without one).
    pub skin_len: u32,
    pub skin_joint_base: u32,
    pub skin_range_base: u32,
    pub skin_order_base: u32,
    pub ibm_base: u32,
    pub mask_base: u32,
    pub max_depth: u32,
    /// `tables`: the block of skeleton LOD level 1; level `l` is `lod_block` words further per
    /// level; `pool`: level 1's held pose, `3 joint_count` vec4s further per level.
    pub lod_base: u32,
    pub lod_block: u32,
    pub held_base: u32,
    /// The decode table: the package's clips' bases in the decode cache.
    pub decode_base: u32,
    /// The skin's animated-bounds boxes (`pool`, three rows each) and their palette entries
    /// (`tables`), and how many.
    pub box_base: u32,
    pub entry_base: u32,
    pub boxes: u32,
    /// The kind's first skinning unit (one per level of detail its skin has), or [`NO_UNIT`].
    pub unit_base: u32,
    /// Levels of detail of the skin (units from `unit_base`).
    pub tiers: u32,
    /// The skeleton's scalar curve channels (throng-cpu-ref `scalar`; 0 without curves) and,
    /// in `tables`, their schema (four words per channel: default and range as f32 bits, the
    /// composition), per clip of the package a word per channel (where the clip's track of the
    /// channel starts in `tables`, its values as f32 bits, or [`NO_CURVE_TRACK`]) and per curve
    /// selection of the package a weight per channel (f32 bits; zeros for another skeleton's).
    pub curve_count: u32,
    pub curve_base: u32,
    pub curve_clips: u32,
    pub curve_selections: u32,
    /// The skin's morph targets (throng-shaders morph.wgsl): how many, and where their curve
    /// channel (or [`NO_CHANNEL`]), default weight and reach lie (rows of `vertices`, one per
    /// target).
    /// Each level's vertex ranges are its unit's (`UnitRow::morph_ranges`).
    pub morph_count: u32,
    pub morph_base: u32,
    pub pad: [u32; 5],
}

/// A level without a vertex a morph target moves (`UnitRow::morph_ranges`); a skinning thread
/// none of whose targets weighs anything.
pub const NO_MORPH: u32 = u32::MAX;

/// A morph target no curve channel weighs: its default weight holds.
pub const NO_CHANNEL: u32 = u32::MAX;

/// A clip without a track of a curve channel (`KindRow::curve_clips`): the channel's default.
pub const NO_CURVE_TRACK: u32 = u32::MAX;

/// `UnitRow` of partition.wgsl and skinning.wgsl: one skinning unit, a skinned kind at one
/// level of detail (64 bytes, one row of the unit table).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct UnitRow {
    pub kind: u32,
    pub tier: u32,
    /// The level's vertex records (resident `vertices`) and their count.
    pub vertex_base: u32,
    pub vertex_count: u32,
    /// Skinning workgroups per instance (`vertex_count` over a workgroup's vertices).
    pub blocks: u32,
    /// The level's triangle indices in the kind's skin index buffer.
    pub index_count: u32,
    pub first_index: u32,
    /// Palette entries of the kind's skin.
    pub skin_len: u32,
    /// The level's morph targets (morph.wgsl): where the vertex ranges of its vertices
    /// `morph_first .. morph_end` (the only ones a target moves) start in `vertices`, or
    /// [`NO_MORPH`]; the skin's target count and where their channel, default weight and reach
    /// lie (`vertices`, as `KindRow::morph_base`).
    pub morph_ranges: u32,
    pub morph_first: u32,
    pub morph_end: u32,
    /// Morph-pass workgroups per instance (`morph_first .. morph_end` over a workgroup's
    /// vertices; 0 without morph targets).
    pub morph_blocks: u32,
    pub morph_count: u32,
    pub morph_base: u32,
    /// The next coarser level's triangles over this level's vertices in the skin index buffer
    /// (count 0: none), drawn for members cross-fading between the two.
    pub coarser_index_count: u32,
    pub coarser_first_index: u32,
}

/// `SkinParams` of skinning.wgsl: the one skinning dispatch (16 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct SkinParams {
    pub units: u32,
    /// Workgroups per row of the dispatch's grid.
    pub rows: u32,
    /// `ranks`: the frame's totals (budget.wgsl; word 3: skinning workgroups, word 4: the
    /// morph pass's).
    pub total_base: u32,
    /// `order`: where the ranks the morph pass re-skins start (the skinned pool's capacity).
    pub morph_list: u32,
}

/// `BudgetParams` of budget.wgsl (16 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct BudgetParams {
    /// Bounds workgroups of the frame.
    pub groups: u32,
    pub pool: u32,
    /// `ranks`: where the frame's totals go.
    pub total_base: u32,
    /// `indirect`: the card draw's arguments.
    pub card_base: u32,
}

/// `TallyParams` of tally.wgsl (16 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct TallyParams {
    pub slots: u32,
    pub pool: u32,
    pub pad: [u32; 2],
}

/// `PartitionParams` of partition.wgsl (48 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct PartitionParams {
    pub units: u32,
    pub page_instances: u32,
    pub pages: u32,
    /// Most workgroups per dimension.
    pub rows: u32,
    pub draw_base: u32,
    pub rank_base: u32,
    pub total_base: u32,
    /// `order`: where the ranks the morph pass re-skins start (the skinned pool's capacity).
    pub morph_list: u32,
    /// `indirect`: where the draws of each unit's next coarser level start (as `draw_base`).
    pub coarser_base: u32,
    pub pad: [u32; 3],
}

/// `ScatterParams` of scatter.wgsl (16 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct ScatterParams {
    pub slots: u32,
    pub pool: u32,
    /// `ranks`: the frame's totals (word 0 counts the cards drawn).
    pub total_base: u32,
    pub pad: u32,
}

/// `BoundsParams` of bounds.wgsl: the one bounds dispatch over every frame slot (112 bytes,
/// uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BoundsParams {
    pub slots: u32,
    pub cull: u32,
    pub pad: [u32; 2],
    pub planes: [[f32; 4]; 6],
}

/// `AttachParams` of attach.wgsl (16 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct AttachParams {
    pub units: u32,
    pub pool: u32,
    pub attachments: u32,
    pub total_base: u32,
}

/// `DecodeParams` of decode.wgsl: the frame's decode jobs, every package's at once (16 bytes,
/// uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DecodeParams {
    /// The decode table's first job (three words: the clip's header in `tables`, its entry in
    /// the decode table, its decode list; one per workgroup row).
    pub jobs_base: u32,
    pub jobs: u32,
    pub pad: [u32; 2],
}

/// `PresentParams` of present.wgsl (32 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct PresentParams {
    pub slots: u32,
    pub alpha: f32,
    pub tick: u32,
    pub record_vec4s: u32,
    pub values_now: u32,
    pub values_prev: u32,
    pub placements_now: u32,
    pub placements_prev: u32,
}

/// `BinRow` of present.wgsl: one program shape's records this frame and its value map (16
/// bytes, one row of the bin table).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct BinRow {
    pub record_base: u32,
    pub stride: u32,
    pub map_base: u32,
    pub values: u32,
}

/// `PatchParams` of patch.wgsl (16 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct PatchParams {
    pub patches: u32,
    pub block: u32,
    pub pad: [u32; 2],
}

/// Member names and byte offsets of the host structs, for the layout test.
pub fn host_offsets() -> [(&'static str, Vec<(&'static str, usize)>); 14] {
    use std::mem::offset_of;
    macro_rules! members {
        ($t:ty: $($m:ident),*) => { vec![$((stringify!($m), offset_of!($t, $m))),*] };
    }
    [
        (
            "PoseParams",
            members!(PoseParams: count, record_base, record_stride, shape_base, shape_ops, max_depth),
        ),
        (
            "KindRow",
            members!(KindRow: joint_count, clip_base, parent_base, depth_base, rest_base, skin_len,
                skin_joint_base, skin_range_base, skin_order_base, ibm_base, mask_base, max_depth,
                lod_base, lod_block, held_base, decode_base, box_base, entry_base, boxes, unit_base,
                tiers, curve_count, curve_base, curve_clips, curve_selections, morph_count,
                morph_base),
        ),
        (
            "UnitRow",
            members!(UnitRow: kind, tier, vertex_base, vertex_count, blocks, index_count, first_index, skin_len,
                morph_ranges, morph_first, morph_end, morph_blocks, morph_count, morph_base,
                coarser_index_count, coarser_first_index),
        ),
        (
            "SkinParams",
            members!(SkinParams: units, rows, total_base, morph_list),
        ),
        ("BoundsParams", members!(BoundsParams: slots, cull, planes)),
        (
            "BudgetParams",
            members!(BudgetParams: groups, pool, total_base, card_base),
        ),
        (
            "PartitionParams",
            members!(PartitionParams: units, page_instances, pages, rows, draw_base, rank_base, total_base, morph_list, coarser_base),
        ),
        (
            "ScatterParams",
            members!(ScatterParams: slots, pool, total_base),
        ),
        ("TallyParams", members!(TallyParams: slots, pool)),
        (
            "AttachParams",
            members!(AttachParams: units, pool, attachments, total_base),
        ),
        ("DecodeParams", members!(DecodeParams: jobs_base, jobs)),
        (
            "PresentParams",
            members!(PresentParams: slots, alpha, tick, record_vec4s, values_now, values_prev,
                placements_now, placements_prev),
        ),
        (
            "BinRow",
            members!(BinRow: record_base, stride, map_base, values),
        ),
        ("PatchParams", members!(PatchParams: patches, block)),
    ]
}
