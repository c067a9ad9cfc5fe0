// Morph targets before skinning (throng-cpu-ref morph.rs `morph`, frame.rs `Morphing`): a skinned
// vertex's bind-space position and normal are `base + Σₜ wₜ δₜ` over the targets that move it,
// in target order, before the palette blends them (glTF 2.0 §3.7.2.2). The skinning pass skins
// every vertex unmorphed; a second indirect dispatch, the morph pass (skinning.wgsl with
// morph_pass.wgsl's hooks), skins the vertices the targets move again, morphed, over what the
// first wrote. Sparse three times over: the partition lists for the morph pass only instances
// some target of which weighs anything (`morph_run`), the morph pass covers only the span of
// vertices their level's targets move, and a vertex lists only the targets that move it. A
// frame whose targets all weigh nothing launches no morph-pass workgroup at all: lavapipe pays
// for each workgroup launched, even one that returns at once (docs/benchmark.md, "The
// morph-target table").
//
// The data are rows (vec4<u32>) of the resident `vertices` array, which skinning binds anyway:
// from a skin's `morph_base` (KindRow and UnitRow) a row per target, its curve channel or
// NO_CHANNEL, its default weight and its reach (the longest delta, f32 bits); from a unit's
// `morph_ranges` a row per vertex of its span `morph_first .. morph_end`, the row of the vertex's
// first entry and the entry count; an entry is two rows, (position delta bits, target) and
// (normal delta bits, 0).

/// Weight of target `t` of the skin whose target table is at `base`, for frame slot `slot`: its
/// channel's value in the curve stream, else its default (a target without a channel; every
/// target of a hero, whose program the GPU does not run).
fn target_weight(base: u32, slot: u32, hero: bool, t: u32) -> f32 {
    let row = vertices[base + t];
    if row.x == NO_CHANNEL || hero {
        return bitcast<f32>(row.y);
    }
    return load_curves(slot, row.x);
}

/// `SkinBounds::morph_reach`: how far the slot's `count` targets move a vertex at most,
/// Σₜ |wₜ| reachₜ.
fn morph_reach(base: u32, count: u32, slot: u32, hero: bool) -> f32 {
    var r = 0.0;
    for (var t = 0u; t < count; t++) {
        r += abs(target_weight(base, slot, hero, t)) * bitcast<f32>(vertices[base + t].z);
    }
    return r;
}

/// Whether some target of frame slot `slot`, skinned at unit `row`, weighs anything.
fn morph_weighs(row: UnitRow, slot: u32) -> bool {
    let hero = (slot_kinds[slot] & HERO_BIT) != 0u;
    for (var t = 0u; t < row.morph_count; t++) {
        if target_weight(row.morph_base, slot, hero, t) != 0.0 {
            return true;
        }
    }
    return false;
}

/// partition.wgsl's hooks: the morph pass's workgroups for slot `slot` skinned at unit `row`,
/// none unless its level's targets move vertices and some target of the slot weighs anything.
const MORPHS: bool = true;

fn morph_run(row: UnitRow, slot: u32) -> u32 {
    if row.morph_blocks == 0u || !morph_weighs(row, slot) {
        return 0u;
    }
    return row.morph_blocks;
}

/// One thread of the morph pass: its unit's target table and vertex ranges.
struct Morphing {
    base: u32,
    slot: u32,
    hero: bool,
    ranges: u32,
    first: u32,
}

fn morph_begin(row: UnitRow, slot: u32) -> Morphing {
    let hero = (slot_kinds[slot] & HERO_BIT) != 0u;
    return Morphing(row.morph_base, slot, hero, row.morph_ranges, row.morph_first);
}

/// Vertex `v` of the unit's level (within the span), its bind-space position and normal `bind`:
/// moved by its targets, in target order.
fn morph_vertex(m: Morphing, v: u32, bind: array<vec3<f32>, 2>) -> array<vec3<f32>, 2> {
    var p = bind[0];
    var n = bind[1];
    let range = vertices[m.ranges + v - m.first];
    for (var e = 0u; e < range.y; e++) {
        let d = vertices[range.x + 2u * e];
        let w = target_weight(m.base, m.slot, m.hero, d.w);
        if w != 0.0 {
            p += w * bitcast<vec3<f32>>(d.xyz);
            n += w * bitcast<vec3<f32>>(vertices[range.x + 2u * e + 1u].xyz);
        }
    }
    return array<vec3<f32>, 2>(p, n);
}

/// The squared Frobenius norm of an affine map's linear part (bounds.rs `frobenius`, squared).
fn frobenius2(a: Affine) -> f32 {
    return dot(a.r0.xyz, a.r0.xyz) + dot(a.r1.xyz, a.r1.xyz) + dot(a.r2.xyz, a.r2.xyz);
}

/// The bounds pass's hooks (`SkinBounds::instance`): the slot's morph reach, the squared norm
/// of a boxed palette entry (only where the reach is not 0), and the radius the reach widens its
/// box by from the largest of those.
fn morph_bounds_reach(k: KindRow, slot: u32, hero: bool) -> f32 {
    return morph_reach(k.morph_base, k.morph_count, slot, hero);
}

fn morph_norm2(reach: f32, a: Affine) -> f32 {
    if reach > 0.0 {
        return frobenius2(a);
    }
    return 0.0;
}

fn morph_pad(reach: f32, norm2: f32, placement: Affine) -> f32 {
    if reach > 0.0 {
        return reach * sqrt(norm2) * sqrt(frobenius2(placement));
    }
    return 0.0;
}
