// Pose-program evaluation (DESIGN.md §4): one thread per (instance, joint) runs the instance's
// whole program for its joint over a private register file, and writes only the register named
// by `ToComponent`, as the joint's final local transform. Mirrors interpreter.rs `Evaluator`.
//
// Op layout and codes: throng-cpu-ref program.rs (`PoseOp`, `op`). Programs are validated on
// the CPU before upload; `Palette` ops are a no-op here (the palette stage builds the batch's skin).

struct PoseOp {
    code: u32,
    dst: u32,
    a: u32,
    b: u32,
    c: u32,
    reserved: u32,
    weight: f32,
    time: f32,
}

const OP_REST: u32 = 1u;
const OP_SAMPLE: u32 = 2u;
const OP_BLEND: u32 = 3u;
const OP_OVERRIDE: u32 = 4u;
const OP_ADDITIVE: u32 = 5u;
const OP_TO_COMPONENT: u32 = 6u;
const NO_MASK: u32 = 0xffffffffu;
/// `interpreter::BLEND_EPSILON`.
const BLEND_EPSILON: f32 = 1e-6;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> clips: array<ClipHeader>;
/// Sub-tracks as (kind, value offset within the clip).
@group(0) @binding(2) var<storage, read> tracks: array<vec2<u32>>;
/// The package's f32 pool: rest poses (12 floats per joint), clip samples, mask weights.
@group(0) @binding(3) var<storage, read> values: array<f32>;
/// Start in `values` of each mask of the package.
@group(0) @binding(4) var<storage, read> masks: array<u32>;
@group(0) @binding(5) var<storage, read> headers: array<InstanceHeader>;
@group(0) @binding(6) var<storage, read> ops: array<PoseOp>;
@group(0) @binding(7) var<storage, read> weights: array<f32>;
@group(0) @binding(8) var<storage, read_write> locals: array<TrsRecord>;

var<private> regs: array<Trs, REGISTERS>;

fn rest_joint(joint: u32) -> Trs {
    let at = params.rest_base + 12u * joint;
    return Trs(load3(at), load4(at + 4u), load3(at + 8u));
}

/// Joint weight of mask `m` (an index among the skeleton's masks), 1 for `NO_MASK`.
fn mask_weight(m: u32, joint: u32) -> f32 {
    if m == NO_MASK {
        return 1.0;
    }
    return values[masks[params.mask_base + m] + joint];
}

/// `Evaluator::blend` for one joint: weights normalised by their sum, rest below epsilon.
fn blend(o: PoseOp, w0: u32, rest: Trs) -> Trs {
    var sum = 0.0;
    for (var k = 0u; k < o.b; k++) {
        sum += weights[w0 + o.c + k];
    }
    if sum < BLEND_EPSILON {
        return rest;
    }
    var t = vec3<f32>(0.0);
    var q = vec4<f32>(0.0);
    var s = vec3<f32>(0.0);
    let first = regs[o.a].q;
    for (var k = 0u; k < o.b; k++) {
        let x = regs[o.a + k];
        let w = weights[w0 + o.c + k] / sum;
        var xq = x.q;
        if dot(first, xq) < 0.0 {
            xq = -xq;
        }
        t += x.t * w;
        q += xq * w;
        s += x.s * w;
    }
    var rotation = rest.q;
    if dot(q, q) > 1e-12 {
        rotation = normalize(q);
    }
    return Trs(t, rotation, s);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = flat_index(gid, groups, 64u);
    let joints = params.joint_count;
    if index >= params.instance_count * joints {
        return;
    }
    let instance = index / joints;
    let joint = index % joints;
    let h = headers[instance];
    if is_hero(h) {
        return;
    }
    let rest = rest_joint(joint);
    var result = rest;
    for (var k = 0u; k < h.op_count; k++) {
        let o = ops[h.op_offset + k];
        switch o.code {
            case OP_REST: {
                regs[o.dst] = rest;
            }
            case OP_SAMPLE: {
                regs[o.dst] = sample_joint(o.a, o.time, joint, rest);
            }
            case OP_BLEND: {
                regs[o.dst] = blend(o, h.weight_offset, rest);
            }
            case OP_OVERRIDE: {
                let a = o.weight * mask_weight(o.c, joint);
                regs[o.dst] = override_joint(regs[o.dst], regs[o.a], a);
            }
            case OP_ADDITIVE: {
                let w = o.weight * mask_weight(o.c, joint);
                regs[o.dst] = additive_joint(regs[o.dst], regs[o.a], regs[o.b], w);
            }
            case OP_TO_COMPONENT: {
                result = regs[o.a];
            }
            default: {}
        }
    }
    locals[index] = trs_store(result);
}
