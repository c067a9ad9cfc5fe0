// Shared math of every Throng compute module, mirroring throng-cpu-ref (transform.rs,
// interpreter.rs, skinning.rs) operation for operation.
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

const NO_PARENT: u32 = 0xffffffffu;
const IDENTITY_Q: vec4<f32> = vec4<f32>(0.0, 0.0, 0.0, 1.0);

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

/// A flat thread index over a 2D grid of workgroups of `size` threads (dispatches wider than
/// 65 535 workgroups fold into y).
fn flat_index(gid: vec3<u32>, groups: vec3<u32>, size: u32) -> u32 {
    return gid.y * groups.x * size + gid.x;
}

/// Per-dispatch parameters of one chunk of a batch (instances of one skeleton and skin).
struct Params {
    instance_count: u32,
    joint_count: u32,
    /// First joint of the skeleton in the package's joint table.
    joint_base: u32,
    /// Index in the package's `values` of the skeleton's rest pose (12 floats per joint).
    rest_base: u32,
    /// Largest joint depth of the skeleton (root = 0).
    max_depth: u32,
    /// First mask of the skeleton in the package's mask table.
    mask_base: u32,
    mask_count: u32,
    /// First palette entry of the skin in the package's skin tables.
    skin_base: u32,
    skin_len: u32,
    /// First vertex of the skin's meshes in the package's vertex array.
    vertex_base: u32,
    vertex_count: u32,
    pad: u32,
}

/// Per-instance record of a frame: where its program lies (chunk-relative) and flags.
struct InstanceHeader {
    op_offset: u32,
    op_count: u32,
    weight_offset: u32,
    flags: u32,
}

/// The instance's palette comes from the CPU: the program, FK and palette stages skip it.
const FLAG_HERO: u32 = 1u;

fn is_hero(h: InstanceHeader) -> bool {
    return (h.flags & FLAG_HERO) != 0u;
}
