// Shared math of every Throng compute module, mirroring throng-cpu-ref (transform.rs,
// interpreter.rs, skinning.rs) operation for operation. Constants come from the generated
// prelude (throng-shaders `prelude`).
//
// Conventions (DESIGN.md §2): Hamilton quaternions stored (x, y, z, w); a local transform is
// T * R * S; an affine 3x4 is stored as three rows `(m[r][0], m[r][1], m[r][2], t[r])`, so a
// point transforms as `dot(row, vec4(p, 1))` (column vectors).

/// A local transform in registers: translation, unit rotation (x, y, z, w), scale.
struct Trs {
    t: vec3<f32>,
    q: vec4<f32>,
    s: vec3<f32>,
}

/// A local transform in memory: 48 bytes, the w of `t` and `s` unused.
struct TrsRecord {
    t: vec4<f32>,
    q: vec4<f32>,
    s: vec4<f32>,
}

/// An affine 3x4 matrix as three rows: 48 bytes.
struct Affine {
    r0: vec4<f32>,
    r1: vec4<f32>,
    r2: vec4<f32>,
}

const IDENTITY_Q: vec4<f32> = vec4<f32>(0.0, 0.0, 0.0, 1.0);
const IDENTITY_AFFINE: Affine = Affine(vec4<f32>(1.0, 0.0, 0.0, 0.0), vec4<f32>(0.0, 1.0, 0.0, 0.0), vec4<f32>(0.0, 0.0, 1.0, 0.0));

fn trs_load(r: TrsRecord) -> Trs {
    return Trs(r.t.xyz, r.q, r.s.xyz);
}

fn trs_store(x: Trs) -> TrsRecord {
    return TrsRecord(vec4<f32>(x.t, 0.0), x.q, vec4<f32>(x.s, 0.0));
}

/// Hamilton product `a * b` (glam's `Quat::mul`).
fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    );
}

/// Inverse of a unit quaternion: its conjugate (glam's `Quat::inverse`).
fn quat_conjugate(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}

/// `transform::nlerp_shortest`: lerp toward `b` flipped into `a`'s hemisphere, normalised.
fn nlerp_shortest(a: vec4<f32>, b_in: vec4<f32>, t: f32) -> vec4<f32> {
    var b = b_in;
    if dot(a, b) < 0.0 {
        b = -b;
    }
    return normalize(a * (1.0 - t) + b * t);
}

/// `transform::slerp_shortest`: the angle from `2 atan2(|a - b|, |a + b|)` (Kahan), nlerp
/// below a sine of 1e-6.
fn slerp_shortest(a: vec4<f32>, b_in: vec4<f32>, t: f32) -> vec4<f32> {
    var b = b_in;
    if dot(a, b) < 0.0 {
        b = -b;
    }
    let theta = 2.0 * atan2(length(a - b), length(a + b));
    let sin_theta = sin(theta);
    if sin_theta < 1e-6 {
        return nlerp_shortest(a, b, t);
    }
    let wa = sin((1.0 - t) * theta) / sin_theta;
    let wb = sin(t * theta) / sin_theta;
    return normalize(a * wa + b * wb);
}

/// `interpreter::override_joint`: `dst` moves toward `src` by `a`.
fn override_joint(dst: Trs, src: Trs, a: f32) -> Trs {
    return Trs(
        dst.t * (1.0 - a) + src.t * a,
        nlerp_shortest(dst.q, src.q, a),
        dst.s * (1.0 - a) + src.s * a,
    );
}

/// `interpreter::additive_joint`: `base` plus `w` times `src` relative to `reference`.
fn additive_joint(base: Trs, src: Trs, reference: Trs, w: f32) -> Trs {
    let dq = quat_mul(quat_conjugate(reference.q), src.q);
    let rs = src.s / reference.s;
    return Trs(
        base.t + (src.t - reference.t) * w,
        normalize(quat_mul(base.q, slerp_shortest(IDENTITY_Q, dq, w))),
        base.s * (vec3<f32>(1.0) * (1.0 - w) + rs * w),
    );
}

/// `Trs::to_affine`: `T * R * S` (glam's `Mat3A::from_quat`, columns scaled).
fn trs_to_affine(x: Trs) -> Affine {
    let q = x.q;
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yy = q.y * y2;
    let yz = q.y * z2;
    let zz = q.z * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    let cx = vec3<f32>(1.0 - (yy + zz), xy + wz, xz - wy) * x.s.x;
    let cy = vec3<f32>(xy - wz, 1.0 - (xx + zz), yz + wx) * x.s.y;
    let cz = vec3<f32>(xz + wy, yz - wx, 1.0 - (xx + yy)) * x.s.z;
    return Affine(
        vec4<f32>(cx.x, cy.x, cz.x, x.t.x),
        vec4<f32>(cx.y, cy.y, cz.y, x.t.y),
        vec4<f32>(cx.z, cy.z, cz.z, x.t.z),
    );
}

fn affine_row(a: vec4<f32>, b: Affine) -> vec4<f32> {
    return a.x * b.r0 + a.y * b.r1 + a.z * b.r2 + vec4<f32>(0.0, 0.0, 0.0, a.w);
}

/// `a * b` (apply `b` first), keeping shear.
fn affine_mul(a: Affine, b: Affine) -> Affine {
    return Affine(affine_row(a.r0, b), affine_row(a.r1, b), affine_row(a.r2, b));
}

fn affine_point(m: Affine, p: vec3<f32>) -> vec3<f32> {
    let h = vec4<f32>(p, 1.0);
    return vec3<f32>(dot(m.r0, h), dot(m.r1, h), dot(m.r2, h));
}

/// `skinning::cofactor(L) * n` for the linear part L of `m`: columns `y×z, z×x, x×y` of L.
fn cofactor_mul(m: Affine, n: vec3<f32>) -> vec3<f32> {
    let x = vec3<f32>(m.r0.x, m.r1.x, m.r2.x);
    let y = vec3<f32>(m.r0.y, m.r1.y, m.r2.y);
    let z = vec3<f32>(m.r0.z, m.r1.z, m.r2.z);
    return cross(y, z) * n.x + cross(z, x) * n.y + cross(x, y) * n.z;
}

/// glam's `normalize_or_zero`.
fn normalize_or_zero(v: vec3<f32>) -> vec3<f32> {
    let len = length(v);
    if len > 0.0 && len < 3.4e38 {
        return v / len;
    }
    return vec3<f32>(0.0);
}

/// `interpreter::blend_joint`'s last step: the accumulated rotation normalised, or `rest`'s
/// when it is (near) zero.
fn blend_rotation(q: vec4<f32>, rest: vec4<f32>) -> vec4<f32> {
    if dot(q, q) > 1e-12 {
        return normalize(q);
    }
    return rest;
}

/// `q` flipped into `first`'s hemisphere (the blend's alignment).
fn hemisphere(first: vec4<f32>, q: vec4<f32>) -> vec4<f32> {
    if dot(first, q) < 0.0 {
        return -q;
    }
    return q;
}

/// A skinned normal as 16-bit octahedral coordinates (`skinning::encode_normal`; Cigolle et
/// al., "A Survey of Efficient Representations for Independent Unit Vectors", JCGT 2014);
/// `NO_NORMAL` for a zero normal.
fn encode_normal(n: vec3<f32>) -> u32 {
    let l1 = abs(n.x) + abs(n.y) + abs(n.z);
    if !(l1 > 0.0) {
        return NO_NORMAL;
    }
    return pack2x16snorm(oct_wrap(n, l1));
}

/// The octahedral projection of `n` onto [-1, 1]² (`l1` its L1 norm, non-zero): the upper
/// half (z ≥ 0) straight down, the lower half folded over the diagonals.
fn oct_wrap(n: vec3<f32>, l1: f32) -> vec2<f32> {
    var p = n.xy / l1;
    if n.z < 0.0 {
        let sx = select(-1.0, 1.0, p.x >= 0.0);
        let sy = select(-1.0, 1.0, p.y >= 0.0);
        p = vec2<f32>((1.0 - abs(p.y)) * sx, (1.0 - abs(p.x)) * sy);
    }
    return p;
}

/// The unit vector `oct_wrap` projected to `p`.
fn oct_unwrap(p: vec2<f32>) -> vec3<f32> {
    var v = vec3<f32>(p, 1.0 - abs(p.x) - abs(p.y));
    if v.z < 0.0 {
        let sx = select(-1.0, 1.0, p.x >= 0.0);
        let sy = select(-1.0, 1.0, p.y >= 0.0);
        v = vec3<f32>((1.0 - abs(p.y)) * sx, (1.0 - abs(p.x)) * sy, v.z);
    }
    return normalize(v);
}

/// The inverse of `encode_normal` (zero for `NO_NORMAL`).
fn decode_normal(bits: u32) -> vec3<f32> {
    if bits == NO_NORMAL {
        return vec3<f32>(0.0);
    }
    return oct_unwrap(unpack2x16snorm(bits));
}
