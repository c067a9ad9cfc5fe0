// The kinds of instance and the skinning units every pass reads (docs/gpu.md, "Kinds").

/// Where one kind of instance (a skeleton of a package, with or without one of its skins)
/// lives in the resident arena (host mirror: `KindRow`; docs/gpu.md, "Kinds").
struct KindRow {
    joint_count: u32,
    /// `tables`: the package's clip headers (CLIP_WORDS each).
    clip_base: u32,
    /// `tables`: parent (or NO_PARENT) and depth of each joint of the skeleton.
    parent_base: u32,
    depth_base: u32,
    /// `pool`: rest pose, three vec4s (t, q, s) per joint.
    rest_base: u32,
    /// Palette entries of the kind's skin (0 without one).
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
    max_depth: u32,
    /// `tables`: the block of skeleton LOD level 1, `lod_block` words per level; `pool`: level
    /// 1's held pose, three vec4s per joint and level.
    lod_base: u32,
    lod_block: u32,
    held_base: u32,
    /// The decode table: the package's clips' bases in the decode cache.
    decode_base: u32,
    /// The skin's bounds boxes (`pool`) and their palette entries (`tables`).
    box_base: u32,
    entry_base: u32,
    boxes: u32,
    /// The kind's first skinning unit, or NO_UNIT without a skin; `tiers` units from it.
    unit_base: u32,
    tiers: u32,
    /// The skeleton's curve channels, their schema (`tables`, four words each), per package
    /// clip a track start per channel (or NO_CURVE_TRACK), per curve selection a weight per
    /// channel (curves.wgsl).
    curve_count: u32,
    curve_base: u32,
    curve_clips: u32,
    curve_selections: u32,
    /// The skin's morph targets (morph.wgsl): their count and, per target, its channel,
    /// default and reach.
    morph_count: u32,
    morph_base: u32,
    pad4: u32,
    pad7: u32,
    pad8: u32,
    pad9: u32,
    pad10: u32,
}

/// One skinning unit: a skinned kind at one level of detail (host mirror: `UnitRow`).
struct UnitRow {
    kind: u32,
    tier: u32,
    /// The level's vertex records in `vertices`, and their count.
    vertex_base: u32,
    vertex_count: u32,
    /// Skinning workgroups per instance.
    blocks: u32,
    /// The level's triangle indices in the skin's index buffer.
    index_count: u32,
    first_index: u32,
    /// Palette entries of the kind's skin.
    skin_len: u32,
    /// Morph targets (morph.wgsl): the vertex ranges of the level's vertices morph_first ..
    /// morph_end (or NO_MORPH), the skin's target count and table.
    morph_ranges: u32,
    morph_first: u32,
    morph_end: u32,
    /// Morph-pass workgroups per instance (0 without morph targets).
    morph_blocks: u32,
    morph_count: u32,
    morph_base: u32,
    /// The next coarser level's triangles over this level's vertices (count 0: none).
    coarser_index_count: u32,
    coarser_first_index: u32,
}
