// Scalar curves for one channel, mirroring throng-cpu-ref scalar.rs (`CurveRegisters::op` and
// the per-channel functions) in f32: the same ops, compositions and cover rules, in the same
// order of operations. The instance's kind row (pose.wgsl `kind`) says where its skeleton's
// channels, clip tracks and curve selections lie in `tables` (kinds.wgsl).

/// A channel's state in one register: its value and how much of the pose animates it.
struct CurveValue {
    value: f32,
    cover: f32,
}

/// A channel's schema.
struct CurveChannel {
    default_value: f32,
    lo: f32,
    hi: f32,
    composition: u32,
}

/// Channel `ch` (0-based within the instance's skeleton) of the instance's kind.
fn curve_channel(ch: u32) -> CurveChannel {
    let at = kind.curve_base + 4u * ch;
    return CurveChannel(
        bitcast<f32>(tables[at]),
        bitcast<f32>(tables[at + 1u]),
        bitcast<f32>(tables[at + 2u]),
        tables[at + 3u],
    );
}

/// `rest_channel`: the default, cover 0.
fn rest_curve(c: CurveChannel) -> CurveValue {
    return CurveValue(c.default_value, 0.0);
}

/// `sample_track` of package clip `clip`'s track of channel `ch` at bracket `b` (cover 1), or
/// the rest state where the clip has no track of it.
fn sample_curve(clip: u32, b: Bracket, ch: u32, c: CurveChannel) -> CurveValue {
    let at = tables[kind.curve_clips + clip * kind.curve_count + ch];
    if at == NO_CURVE_TRACK {
        return rest_curve(c);
    }
    let v0 = curve_sample(at, b.i0);
    let v1 = curve_sample(at, b.i1);
    return CurveValue(v0 + (v1 - v0) * b.u, 1.0);
}

/// Sample `i` of the track at `at` in `tables` (throng-cpu-ref `QuantizedTrack::value`): a
/// header (base, step, bits per sample), then with RAW_CURVE_BITS the samples' f32 bits, else
/// `base + f32(k) * step` with `k` the i-th `bits`-wide integer packed from bit 0 up.
fn curve_sample(at: u32, i: u32) -> f32 {
    let bits = tables[at + 2u];
    if bits == RAW_CURVE_BITS {
        return bitcast<f32>(tables[at + 3u + i]);
    }
    var k = 0u;
    if bits != 0u {
        let bit = i * bits;
        let w = at + 3u + bit / 32u;
        let shift = bit % 32u;
        k = tables[w] >> shift;
        if shift + bits > 32u {
            k |= tables[w + 1u] << (32u - shift);
        }
        k &= (1u << bits) - 1u;
    }
    return bitcast<f32>(tables[at]) + f32(k) * bitcast<f32>(tables[at + 1u]);
}

/// A Blend in progress (`blend_channel`): the weighted sums and the input chosen so far by
/// `override` (heaviest), `max` and `min`.
struct CurveBlend {
    sum: f32,
    cover: f32,
    chosen: f32,
    chosen_w: f32,
    has: bool,
}

fn curve_blend_start() -> CurveBlend {
    return CurveBlend(0.0, 0.0, 0.0, 0.0, false);
}

/// Adds input `x` of normalised weight `w`.
fn curve_blend_add(acc: CurveBlend, x: CurveValue, w: f32, composition: u32) -> CurveBlend {
    var r = acc;
    r.cover += w * x.cover;
    r.sum += w * x.value;
    if w > 0.0 && x.cover > 0.0 {
        var better = !acc.has;
        if acc.has {
            if composition == COMPOSITION_OVERRIDE {
                better = w > acc.chosen_w;
            } else if composition == COMPOSITION_MAX {
                better = x.value > acc.chosen;
            } else if composition == COMPOSITION_MIN {
                better = x.value < acc.chosen;
            }
        }
        if better {
            r.chosen = x.value;
            r.chosen_w = w;
            r.has = true;
        }
    }
    return r;
}

fn curve_blend_end(acc: CurveBlend, c: CurveChannel) -> CurveValue {
    if c.composition == COMPOSITION_BLEND || c.composition == COMPOSITION_ADDITIVE {
        return CurveValue(acc.sum, acc.cover);
    }
    return CurveValue(select(c.default_value, acc.chosen, acc.has), acc.cover);
}

/// `reduce`: `override`, `max` and `min` of a layer's `src` over `dst` where it weighs `a > 0`.
fn curve_reduce(dst: f32, src: f32, a: f32, composition: u32) -> f32 {
    if a <= 0.0 {
        return dst;
    }
    if composition == COMPOSITION_MAX {
        return max(dst, src);
    }
    if composition == COMPOSITION_MIN {
        return min(dst, src);
    }
    return src;
}

fn curve_layered(dst: CurveValue, value: f32, a: f32) -> CurveValue {
    return CurveValue(value, dst.cover + (1.0 - dst.cover) * a);
}

/// `override_channel`.
fn override_curve(dst: CurveValue, src: CurveValue, weight: f32, composition: u32) -> CurveValue {
    let a = weight * src.cover;
    var value: f32;
    if composition == COMPOSITION_BLEND {
        value = dst.value + (src.value - dst.value) * a;
    } else if composition == COMPOSITION_ADDITIVE {
        value = dst.value + a * src.value;
    } else {
        value = curve_reduce(dst.value, src.value, a, composition);
    }
    return curve_layered(dst, value, a);
}

/// `additive_channel`.
fn additive_curve(dst: CurveValue, src: CurveValue, reference: CurveValue, weight: f32, composition: u32) -> CurveValue {
    let a = weight * src.cover;
    var value: f32;
    if composition == COMPOSITION_BLEND || composition == COMPOSITION_ADDITIVE {
        value = dst.value + (src.value - reference.value) * a;
    } else {
        value = curve_reduce(dst.value, src.value, a, composition);
    }
    return curve_layered(dst, value, a);
}

/// The weight of channel `ch` in a layer's curve selection `d` (`PoseOp::d`: 0 every curve,
/// `k + 1` the package's selection `k`).
fn curve_selected(d: u32, ch: u32) -> f32 {
    if d == 0u {
        return 1.0;
    }
    return bitcast<f32>(tables[kind.curve_selections + (d - 1u) * kind.curve_count + ch]);
}

/// `output`: the value clamped to the channel's range.
fn curve_output(c: CurveChannel, value: f32) -> f32 {
    return min(max(value, c.lo), c.hi);
}
