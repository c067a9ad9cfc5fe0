// The morph pass's hooks of skinning.wgsl (morph.wgsl has the morphing): a unit's run per
// instance is the span of vertices its level's targets move, `morph_blocks` workgroups each; its
// workgroups start at each unit's fourth rank word and number the frame's fifth total; run `i`
// of unit `u` re-skins the rank the partition listed in `order` at `morph_list` plus the unit's
// first rank, plus `i` (partition.wgsl).

const RUN_START: u32 = 3u;
const RUN_TOTAL: u32 = 4u;

fn run_blocks(row: UnitRow) -> u32 {
    return row.morph_blocks;
}

fn run_first(row: UnitRow) -> u32 {
    return row.morph_first;
}

fn run_end(row: UnitRow) -> u32 {
    return row.morph_end;
}

fn run_rank(u: u32, i: u32) -> u32 {
    return order[params.morph_list + ranks[4u * u] + i];
}
