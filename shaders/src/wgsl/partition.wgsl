// The skinned order by unit (one workgroup per unit): the budgeted instances (budget.wgsl,
// scatter.wgsl: ranks `0 .. skinned` in frame-slot order) regrouped, stably, by *unit*: a skinned
// kind at one level of detail (its kind row's `unit_base` plus the slot's level, the last of the
// skin's levels for a deeper one), so each unit is a run of the skinned pool. The budget chose by
// frame slot, whatever the units; this only orders what it chose.
//
// Workgroup u scans the budgeted ranks twice: first counting the ranks, skinning workgroups and
// morph-pass workgroups of the units before it (its start in the pool and in the two
// dispatches) and its own, then writing its slots, in rank order, from its start. No workgroup
// waits on another, so one dispatch regroups every unit of every kind. Per unit u:
// `ranks[4u ..]` (first rank, skinned, first skinning workgroup, first morph-pass workgroup),
// in `order` from `morph_list` plus its first rank the ranks of its instances whose morph
// targets weigh anything (`morph_run`: morph.wgsl, or none without morph targets), and per page
// p of the skinned pool (`page_instances` ranks each)
// the draw of unit u on p: `indirect[draw_base + 5 (u pages + p) ..]` gets (indices, instances,
// first index, 0, 0), `indirect[coarser_base + 5 (u pages + p) ..]` the same instances' draw
// of the next coarser level's triangles over u's vertices (0 instances where u has none: its
// members' mesh LOD cross-fade, raster.wgsl `crowd_coarser_vs`), and
// `ranks[rank_base + u pages + p]` its first rank within the page.
// Unit 0 also writes the skinning dispatch (`indirect[0 .. 3]`, its workgroups folded into rows)
// and its workgroup count (`ranks[total_base + 3]`), and the morph pass's (`indirect[4 .. 7]`,
// `ranks[total_base + 4]`).

/// Host mirror: `PartitionParams`.
struct PartitionParams {
    units: u32,
    page_instances: u32,
    pages: u32,
    /// Most workgroups per dimension.
    rows: u32,
    draw_base: u32,
    rank_base: u32,
    total_base: u32,
    morph_list: u32,
    coarser_base: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: PartitionParams;
@group(0) @binding(1) var<storage, read> units: array<UnitRow>;
@group(0) @binding(2) var<storage, read> kinds: array<KindRow>;
@group(0) @binding(3) var<storage, read> slot_kinds: array<u32>;
@group(0) @binding(4) var<storage, read> budgeted: array<u32>;
@group(0) @binding(5) var<storage, read_write> ranks: array<u32>;
@group(0) @binding(6) var<storage, read_write> order: array<u32>;
@group(0) @binding(7) var<storage, read_write> indirect: array<u32>;

/// The frame's skinned count, read by one lane and shared, so loops over it stay in uniform
/// control flow for `lane_sums`.
var<workgroup> skinned_count: u32;

/// The unit frame slot `slot` (a skinned one) is skinned in.
fn unit_of(slot: u32) -> u32 {
    let word = slot_kinds[slot];
    let k = kinds[word & KIND_MASK];
    return k.unit_base + min(word >> LEVEL_SHIFT, max(k.tiers, 1u) - 1u);
}

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let u = wg.y * params.rows + wg.x;
    if lane == 0u {
        skinned_count = ranks[params.total_base + 1u];
    }
    let skinned = workgroupUniformLoad(&skinned_count);
    if u >= params.units {
        return;
    }
    let row = units[u];
    var start = 0u;
    var count = 0u;
    var block_start = 0u;
    var blocks = 0u;
    var morph_start = 0u;
    var morph_blocks = 0u;
    for (var c = 0u; c < skinned; c += WORKGROUP) {
        var before = 0u;
        var mine = 0u;
        var b = 0u;
        var m = 0u;
        if c + lane < skinned {
            let slot = budgeted[c + lane];
            let v = unit_of(slot);
            b = units[v].blocks;
            m = morph_run(units[v], slot);
            before = u32(v < u);
            mine = u32(v == u);
        }
        start += lane_sums(before, lane).y;
        count += lane_sums(mine, lane).y;
        block_start += lane_sums(b * before, lane).y;
        blocks += lane_sums(b, lane).y;
        if MORPHS {
            morph_start += lane_sums(m * before, lane).y;
            morph_blocks += lane_sums(m, lane).y;
        }
    }
    var next = start;
    var listed = params.morph_list + start;
    for (var c = 0u; c < skinned; c += WORKGROUP) {
        var slot = 0u;
        var mine = false;
        if c + lane < skinned {
            slot = budgeted[c + lane];
            mine = unit_of(slot) == u;
        }
        let sums = lane_sums(u32(mine), lane);
        if mine {
            order[next + sums.x] = slot;
        }
        if MORPHS {
            let morphs = mine && morph_run(row, slot) > 0u;
            let listing = lane_sums(u32(morphs), lane);
            if morphs {
                order[listed + listing.x] = next + sums.x;
            }
            listed += listing.y;
        }
        next += sums.y;
    }
    if lane != 0u {
        return;
    }
    ranks[4u * u] = start;
    ranks[4u * u + 1u] = count;
    ranks[4u * u + 2u] = block_start;
    ranks[4u * u + 3u] = morph_start;
    for (var p = 0u; p < params.pages; p++) {
        let page = p * params.page_instances;
        let lo = max(start, page);
        let hi = min(start + count, page + params.page_instances);
        let d = u * params.pages + p;
        let at = params.draw_base + 5u * d;
        indirect[at] = row.index_count;
        indirect[at + 1u] = select(0u, hi - lo, hi > lo);
        indirect[at + 2u] = row.first_index;
        indirect[at + 3u] = 0u;
        indirect[at + 4u] = 0u;
        // The same instances drawn with the next coarser level's triangles (its cross-fade).
        let coarser = params.coarser_base + 5u * d;
        indirect[coarser] = row.coarser_index_count;
        indirect[coarser + 1u] = select(0u, indirect[at + 1u], row.coarser_index_count > 0u);
        indirect[coarser + 2u] = row.coarser_first_index;
        indirect[coarser + 3u] = 0u;
        indirect[coarser + 4u] = 0u;
        ranks[params.rank_base + d] = select(0u, lo - page, hi > lo);
    }
    if u == 0u {
        indirect[0] = min(blocks, params.rows);
        indirect[1] = (blocks + params.rows - 1u) / params.rows;
        indirect[2] = 1u;
        ranks[params.total_base + 3u] = blocks;
        indirect[4] = min(morph_blocks, params.rows);
        indirect[5] = (morph_blocks + params.rows - 1u) / params.rows;
        indirect[6] = 1u;
        ranks[params.total_base + 4u] = morph_blocks;
    }
}
