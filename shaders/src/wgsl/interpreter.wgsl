// The general pose interpreter (interpreter.rs `Evaluator`): a shape's ops from the shape table,
// their values from the instance's record, run per joint over a private register file.

var<private> regs: array<Trs, REGISTERS>;

/// Word `w` of the record at vec4 `rec`.
fn record_word(rec: u32, w: u32) -> u32 {
    return records[rec + (w >> 2u)][w & 3u];
}

/// `Evaluator::blend` for one joint: `count` registers from `first`, weights from record word
/// `word`, normalised by their sum; rest below BLEND_EPSILON.
fn blend(rec: u32, first: u32, count: u32, word: u32, rest: Trs) -> Trs {
    var sum = 0.0;
    for (var k = 0u; k < count; k++) {
        sum += bitcast<f32>(record_word(rec, word + k));
    }
    if sum < BLEND_EPSILON {
        return rest;
    }
    var t = vec3<f32>(0.0);
    var q = vec4<f32>(0.0);
    var s = vec3<f32>(0.0);
    let hemi = regs[first].q;
    for (var k = 0u; k < count; k++) {
        let x = regs[first + k];
        let w = bitcast<f32>(record_word(rec, word + k)) / sum;
        t += x.t * w;
        q += hemisphere(hemi, x.q) * w;
        s += x.s * w;
    }
    return Trs(t, blend_rotation(q, rest.q), s);
}

/// A layer's mask: NO_MASK for an unmasked one, else the mask id its record holds after its
/// weight (`p`: the op's second shape vec4).
fn layer_mask(rec: u32, p: vec4<u32>) -> u32 {
    if p.x == NO_MASK {
        return NO_MASK;
    }
    return record_word(rec, p.y + 1u);
}

/// The shape's final local pose of joint `j` for the instance whose record is at `rec`.
fn interpret(rec: u32, j: u32, rest: Trs) -> Trs {
    var result = rest;
    for (var k = 0u; k < params.shape_ops; k++) {
        // code, dst, a, b | c, word, encoding, d
        let o = shapes[params.shape_base + 2u * k];
        let p = shapes[params.shape_base + 2u * k + 1u];
        switch o.x {
            case OP_REST: {
                regs[o.y] = rest;
            }
            case OP_SAMPLE: {
                let clip = record_word(rec, p.y);
                let c = clip_header(clip);
                let b = bracket(c, bitcast<f32>(record_word(rec, p.y + 1u)));
                let d = decode_entry(clip);
                if c.encoding == ENCODING_COMPRESSED && d != NO_DECODE {
                    regs[o.y] = sample_decoded(c, b, d, j, rest);
                } else if c.encoding == ENCODING_COMPRESSED {
                    regs[o.y] = sample_compressed(c, b, codec_pair(c, b), j, rest);
                } else {
                    regs[o.y] = sample_reference(c, b, j, rest);
                }
            }
            case OP_BLEND: {
                regs[o.y] = blend(rec, o.z, o.w, p.y, rest);
            }
            case OP_OVERRIDE: {
                let a = bitcast<f32>(record_word(rec, p.y)) * mask_weight(layer_mask(rec, p), j);
                regs[o.y] = override_joint(regs[o.y], regs[o.z], a);
            }
            case OP_ADDITIVE: {
                let w = bitcast<f32>(record_word(rec, p.y)) * mask_weight(layer_mask(rec, p), j);
                regs[o.y] = additive_joint(regs[o.y], regs[o.z], regs[o.w], w);
            }
            case OP_CAPTURE: {
                let dt = bitcast<f32>(record_word(rec, p.y + 1u));
                let off = capture_joint(regs[o.z], regs[o.w], regs[o.y], regs[p.w], dt);
                store_history(record_word(rec, p.y), j, off);
            }
            case OP_INERTIALIZE: {
                let h = load_history(record_word(rec, p.y), j);
                let elapsed = bitcast<f32>(record_word(rec, p.y + 1u));
                let duration = bitcast<f32>(record_word(rec, p.y + 2u));
                regs[o.y] = inertialize_joint(regs[o.y], h, elapsed, duration);
            }
            case OP_TO_COMPONENT: {
                result = regs[o.z];
            }
            default: {}
        }
    }
    return result;
}

var<private> curve_regs: array<CurveValue, REGISTERS>;

/// The shape's curve output of channel `ch` for the instance whose record is at `rec`
/// (`CurveRegisters::op` over the shape's ops, one channel).
fn interpret_curve(rec: u32, ch: u32) -> f32 {
    let c = curve_channel(ch);
    var result = curve_output(c, c.default_value);
    for (var k = 0u; k < params.shape_ops; k++) {
        // code, dst, a, b | c, word, encoding, d
        let o = shapes[params.shape_base + 2u * k];
        let p = shapes[params.shape_base + 2u * k + 1u];
        switch o.x {
            case OP_REST: {
                curve_regs[o.y] = rest_curve(c);
            }
            case OP_SAMPLE: {
                let clip = record_word(rec, p.y);
                let b = bracket(clip_header(clip), bitcast<f32>(record_word(rec, p.y + 1u)));
                curve_regs[o.y] = sample_curve(clip, b, ch, c);
            }
            case OP_BLEND: {
                var sum = 0.0;
                for (var i = 0u; i < o.w; i++) {
                    sum += bitcast<f32>(record_word(rec, p.y + i));
                }
                if sum < BLEND_EPSILON {
                    curve_regs[o.y] = rest_curve(c);
                } else {
                    var acc = curve_blend_start();
                    for (var i = 0u; i < o.w; i++) {
                        let w = bitcast<f32>(record_word(rec, p.y + i)) / sum;
                        acc = curve_blend_add(acc, curve_regs[o.z + i], w, c.composition);
                    }
                    curve_regs[o.y] = curve_blend_end(acc, c);
                }
            }
            case OP_OVERRIDE: {
                let a = bitcast<f32>(record_word(rec, p.y)) * curve_selected(p.w, ch);
                curve_regs[o.y] = override_curve(curve_regs[o.y], curve_regs[o.z], a, c.composition);
            }
            case OP_ADDITIVE: {
                let a = bitcast<f32>(record_word(rec, p.y)) * curve_selected(p.w, ch);
                curve_regs[o.y] = additive_curve(curve_regs[o.y], curve_regs[o.z], curve_regs[o.w], a, c.composition);
            }
            case OP_TO_COMPONENT: {
                result = curve_output(c, curve_regs[o.z].value);
            }
            default: {}
        }
    }
    return result;
}
