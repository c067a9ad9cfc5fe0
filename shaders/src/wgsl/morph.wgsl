// Morph targets before skinning (throng-cpu-ref morph.rs `morph`, frame.rs `Morphing`): a skinned
// vertex's bind-space position and normal are `base + Σₜ wₜ δₜ` over the targets that move it,
// in target order, before the palette blends them (glTF 2.0 §3.7.2.2). Sparse twice over: a
// thread looks at a vertex's entries only when some target of its instance weighs anything, and
// a vertex lists only the targets that move it.
//
// The kind row (kinds.wgsl) gives, in `tables`: per target of its skin (`morph_count`, from
// `morph_base`) three words, its curve channel or NO_CHANNEL, its default weight and its reach
// (the longest delta, f32 bits); per level of detail (`morph_tiers`) where the level's vertex
// ranges start: two words per vertex of the level, the `pool` index of its first entry and the
// entry count. An entry is two vec4s: (position delta, target index as bits), (normal delta, 0).

/// Weight of target `t` of kind `k` for frame slot `slot`: its channel's value in the curve
/// stream, else its default (a target without a channel; every target of a hero, whose program
/// the GPU does not run).
fn target_weight(k: KindRow, slot: u32, hero: bool, t: u32) -> f32 {
    let at = k.morph_base + 3u * t;
    let ch = tables[at];
    if ch == NO_CHANNEL || hero {
        return bitcast<f32>(tables[at + 1u]);
    }
    return load_curves(slot, ch);
}

/// `SkinBounds::morph_reach`: how far the slot's targets move a vertex at most, Σₜ |wₜ| reachₜ.
fn morph_reach(k: KindRow, slot: u32, hero: bool) -> f32 {
    var r = 0.0;
    for (var t = 0u; t < k.morph_count; t++) {
        r += abs(target_weight(k, slot, hero, t)) * bitcast<f32>(tables[k.morph_base + 3u * t + 2u]);
    }
    return r;
}

/// One skinning thread's morph state: the vertex ranges of its unit's level, or NO_MORPH when
/// no target of the instance weighs anything.
struct Morphing {
    k: KindRow,
    slot: u32,
    hero: bool,
    ranges: u32,
}

fn morph_begin(row: UnitRow, slot: u32) -> Morphing {
    let k = kinds[row.kind];
    let hero = (slot_kinds[slot] & HERO_BIT) != 0u;
    var m = Morphing(k, slot, hero, NO_MORPH);
    if k.morph_tiers == NO_MORPH {
        return m;
    }
    for (var t = 0u; t < k.morph_count; t++) {
        if target_weight(k, slot, hero, t) != 0.0 {
            m.ranges = tables[k.morph_tiers + row.tier];
            break;
        }
    }
    return m;
}

/// Vertex `v` of the unit's level: `p` and `n` morphed in place.
fn morph_vertex(m: Morphing, v: u32, p: ptr<function, vec3<f32>>, n: ptr<function, vec3<f32>>) {
    if m.ranges == NO_MORPH {
        return;
    }
    let first = tables[m.ranges + 2u * v];
    let count = tables[m.ranges + 2u * v + 1u];
    for (var e = 0u; e < count; e++) {
        let d = pool[first + 2u * e];
        let w = target_weight(m.k, m.slot, m.hero, bitcast<u32>(d.w));
        if w != 0.0 {
            *p = *p + w * d.xyz;
            *n = *n + w * pool[first + 2u * e + 1u].xyz;
        }
    }
}

/// The Frobenius norm of an affine map's linear part (bounds.rs `frobenius`).
fn frobenius(a: Affine) -> f32 {
    return sqrt(dot(a.r0.xyz, a.r0.xyz) + dot(a.r1.xyz, a.r1.xyz) + dot(a.r2.xyz, a.r2.xyz));
}

/// The bounds pass's hooks (`SkinBounds::instance`): the norm of a boxed palette entry, and the
/// radius the slot's morph targets widen its box by, from the largest such norm.
fn morph_norm(a: Affine) -> f32 {
    return frobenius(a);
}

fn morph_pad(k: KindRow, slot: u32, hero: bool, norm: f32, placement: Affine) -> f32 {
    let reach = morph_reach(k, slot, hero);
    if reach > 0.0 {
        return reach * norm * frobenius(placement);
    }
    return 0.0;
}
