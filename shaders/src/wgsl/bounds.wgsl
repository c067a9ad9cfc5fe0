// Animated bounds (throng-cpu-ref bounds.rs `SkinBounds::instance`): one thread per frame slot,
// one dispatch for every slot of every kind. A slot's kind word (`slot_kinds`: kind | level << 24,
// or NO_KIND for a slot no instance holds) names its kind row; per box b of the kind's skin
// (palette entry k, the cube [-1, 1]³ onto the box in bind space U), M = P · palette[k] · U, with
// P the slot's placement; the box of M's cube is centre M.t, half extent |row|·(1, 1, 1) per row;
// the union over boxes, widened by how far the slot's morph targets can move a vertex
// (`morph_pad`, morph.wgsl; a no-op hook when no resident skin has targets) and padded by
// BOUNDS_PAD × its largest coordinate, is the instance's scene-space box. Output per frame slot: two vec4<f32>, min and max in xyz (min > max: no box,
// as for a kind without a skin).
//
// Then visibility and significance: an instance is seen (never without a skin or when hidden;
// else every instance unless `cull`; else one whose box meets the frustum, bounds.rs
// `Frustum::intersects`); a seen slot's mark is `1 + key`, its significance key
// (`significance`: its box's projected size, quantised), and the key's bucket of the histogram
// (`groups[0 .. SIGNIFICANCE_BUCKETS]`, zeroed at the start of the frame) counts it. tally.wgsl,
// budget.wgsl and scatter.wgsl turn the marks into the frame's skinned order (the most
// significant seen instances, as far as the budget goes) and its cards (the rest).

/// Parameters of the bounds dispatch (host mirror: `BoundsParams`).
struct BoundsParams {
    slots: u32,
    /// 1: cull against `planes`; 0: every skinned instance is visible.
    cull: u32,
    pad0: u32,
    pad1: u32,
    /// The frustum: inside where dot(xyz, p) + w >= 0.
    planes: array<vec4<f32>, 6>,
}

/// Whether the box lo..hi may be seen (bounds.rs `Frustum::intersects`, same order of
/// operations).
fn in_frustum(lo: vec3<f32>, hi: vec3<f32>) -> bool {
    if any(lo > hi) {
        return false;
    }
    for (var k = 0u; k < 6u; k++) {
        let p = params.planes[k];
        let far = select(lo, hi, p.xyz >= vec3<f32>(0.0));
        if p.x * far.x + p.y * far.y + p.z * far.z + p.w < 0.0 {
            return false;
        }
    }
    return true;
}

/// The significance key of a seen box lo..hi (throng-gpu `cull::significance`, same arithmetic):
/// its largest extent over its depth (the clip-space w of its centre, half the sum of the
/// left and right planes' values there), each as a log2 in sixteenths of an octave (the top
/// bits of its f32), the difference offset to `SIGNIFICANCE_BUCKETS / 2` and clamped; a larger
/// key is a larger projected size. A box whose centre is at or behind the eye takes the
/// largest key. Without culling every key is 0: slot order alone decides.
fn significance(lo: vec3<f32>, hi: vec3<f32>) -> u32 {
    if params.cull == 0u {
        return 0u;
    }
    let e = hi - lo;
    let size = max(e.x, max(e.y, e.z));
    let c = (lo + hi) * 0.5;
    let l = params.planes[0];
    let r = params.planes[1];
    let dl = l.x * c.x + l.y * c.y + l.z * c.z + l.w;
    let dr = r.x * c.x + r.y * c.y + r.z * c.z + r.w;
    let depth = max((dl + dr) * 0.5, SIGNIFICANCE_MIN_DEPTH);
    let k = i32(bitcast<u32>(size) >> SIGNIFICANCE_SHIFT)
        - i32(bitcast<u32>(depth) >> SIGNIFICANCE_SHIFT)
        + i32(SIGNIFICANCE_BUCKETS / 2u);
    return u32(clamp(k, 0, i32(SIGNIFICANCE_BUCKETS) - 1));
}

/// The scene-space box of frame slot `slot` of kind `k` (min, max; min > max when its skin has
/// no box).
fn instance_box(slot: u32, k: KindRow, hero: bool) -> array<vec3<f32>, 2> {
    let pa = 3u * slot;
    let placement = Affine(placements[pa], placements[pa + 1u], placements[pa + 2u]);
    var lo = vec3<f32>(BOUNDS_EMPTY);
    var hi = vec3<f32>(-BOUNDS_EMPTY);
    let reach = morph_bounds_reach(k, slot, hero);
    var norm2 = 0.0;
    for (var b = 0u; b < k.boxes; b++) {
        let e = tables[k.entry_base + b];
        let at = k.box_base + 3u * b;
        let unit = Affine(pool[at], pool[at + 1u], pool[at + 2u]);
        let palette = load_palettes(slot, e);
        norm2 = max(norm2, morph_norm2(reach, palette));
        let m = affine_mul(placement, affine_mul(palette, unit));
        let centre = vec3<f32>(m.r0.w, m.r1.w, m.r2.w);
        let half = vec3<f32>(
            abs(m.r0.x) + abs(m.r0.y) + abs(m.r0.z),
            abs(m.r1.x) + abs(m.r1.y) + abs(m.r1.z),
            abs(m.r2.x) + abs(m.r2.y) + abs(m.r2.z),
        );
        lo = min(lo, centre - half);
        hi = max(hi, centre + half);
    }
    if k.boxes > 0u {
        let r = morph_pad(reach, norm2, placement);
        lo -= vec3<f32>(r);
        hi += vec3<f32>(r);
        let extent = max(abs(lo), abs(hi));
        let pad = BOUNDS_PAD * max(extent.x, max(extent.y, extent.z));
        lo -= vec3<f32>(pad);
        hi += vec3<f32>(pad);
    }
    return array<vec3<f32>, 2>(lo, hi);
}

/// This workgroup's histogram of keys, added to the frame's once (a global atomic per slot
/// contends on the few buckets neighbouring slots share).
var<workgroup> local_histogram: array<atomic<u32>, SIGNIFICANCE_BUCKETS>;

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let per = SIGNIFICANCE_BUCKETS / WORKGROUP;
    for (var i = 0u; i < per; i++) {
        atomicStore(&local_histogram[lane * per + i], 0u);
    }
    workgroupBarrier();
    let slot = gid.y * groups.x * WORKGROUP + gid.x;
    if slot < params.slots {
        let word = slot_kinds[slot];
        var b = array<vec3<f32>, 2>(vec3<f32>(BOUNDS_EMPTY), vec3<f32>(-BOUNDS_EMPTY));
        var skinned = false;
        // A free slot has no kind; a hidden one (frame.rs `Pose::Hidden`, level LOD_HIDDEN) has
        // no box and is never seen: neither skinned nor drawn.
        if word != NO_KIND && (word >> LEVEL_SHIFT) != LOD_HIDDEN {
            let k = kinds[word & KIND_MASK];
            skinned = k.unit_base != NO_UNIT;
            if skinned {
                b = instance_box(slot, k, (word & HERO_BIT) != 0u);
            }
        }
        bounds[2u * slot] = vec4<f32>(b[0], 0.0);
        bounds[2u * slot + 1u] = vec4<f32>(b[1], 0.0);
        if skinned && (params.cull == 0u || in_frustum(b[0], b[1])) {
            let key = significance(b[0], b[1]);
            marks[slot] = 1u + key;
            atomicAdd(&local_histogram[key], 1u);
        }
    }
    workgroupBarrier();
    for (var i = 0u; i < per; i++) {
        let n = atomicLoad(&local_histogram[lane * per + i]);
        if n > 0u {
            atomicAdd(&histogram[lane * per + i], n);
        }
    }
}
