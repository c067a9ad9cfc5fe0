// Inertialization (inertialize.rs): per joint and channel an offset from the destination and its
// velocity; Bollo's quintic in normalised time, `x(t) = (1 - u)^4 (x0 (1 + 4u) + v0 t1 u)`.

/// `JointOffset`: translation, rotation (axis × angle) and scale offsets with their velocities.
struct Offset {
    t: vec3<f32>,
    tv: vec3<f32>,
    r: vec3<f32>,
    rv: vec3<f32>,
    s: vec3<f32>,
    sv: vec3<f32>,
}

// The trigonometry is written out as in inertialize.rs (built-in sin, cos and atan may be off
// by 2^-11 or 4096 ulp on a Vulkan adapter): Taylor series on reduced ranges.

/// `atan_series`: atan(y) for |y| <= tan(π/8).
fn atan_series(y: f32) -> f32 {
    let z = y * y;
    var p = -1.0 / 15.0;
    p = p * z + 1.0 / 13.0;
    p = p * z - 1.0 / 11.0;
    p = p * z + 1.0 / 9.0;
    p = p * z - 1.0 / 7.0;
    p = p * z + 0.2;
    p = p * z - 1.0 / 3.0;
    p = p * z + 1.0;
    return y * p;
}

/// `atan2_first_quadrant`: atan2(y, x) for y, x >= 0, not both zero.
fn atan2_first_quadrant(y: f32, x: f32) -> f32 {
    let flip = y > x;
    let t = select(y, x, flip) / select(x, y, flip);
    let far = t > 0.41421357;
    let a = select(atan_series(t), 0.7853982 + atan_series((t - 1.0) / (t + 1.0)), far);
    return select(a, 1.5707964 - a, flip);
}

/// `sin_cos`: (sin x, cos x).
fn sin_cos(x_in: f32) -> vec2<f32> {
    let x0 = x_in - 6.2831855 * round(x_in / 6.2831855);
    let fold = abs(x0) > 1.5707964;
    let x = select(x0, select(-3.1415927, 3.1415927, x0 >= 0.0) - x0, fold);
    let z = x * x;
    var s = 1.0 / 6227020800.0;
    s = s * z - 1.0 / 39916800.0;
    s = s * z + 1.0 / 362880.0;
    s = s * z - 1.0 / 5040.0;
    s = s * z + 1.0 / 120.0;
    s = s * z - 1.0 / 6.0;
    s = s * z + 1.0;
    var c = 1.0 / 87178291200.0;
    c = c * z - 1.0 / 479001600.0;
    c = c * z + 1.0 / 3628800.0;
    c = c * z - 1.0 / 40320.0;
    c = c * z + 1.0 / 720.0;
    c = c * z - 1.0 / 24.0;
    c = c * z + 0.5;
    let cosine = 1.0 - z * c;
    return vec2<f32>(x * s, select(cosine, -cosine, fold));
}

/// `log_rotation`: axis × angle of q's shortest arc.
fn log_rotation(q_in: vec4<f32>) -> vec3<f32> {
    var q = q_in;
    if q.w < 0.0 {
        q = -q;
    }
    let s = length(q.xyz);
    if s < 1e-8 {
        return q.xyz * 2.0;
    }
    return q.xyz * (2.0 * atan2_first_quadrant(s, q.w) / s);
}

/// `exp_rotation`: the rotation of axis × angle r.
fn exp_rotation(r: vec3<f32>) -> vec4<f32> {
    let angle = length(r);
    if angle < 1e-8 {
        return normalize(vec4<f32>(r * 0.5, 1.0));
    }
    let sc = sin_cos(angle * 0.5);
    return vec4<f32>(r * (sc.x / angle), sc.y);
}

/// `capture_joint`: the offset of src from dst, its velocity from prev and prev_dst dt earlier.
fn capture_joint(src: Trs, prev: Trs, dst: Trs, prev_dst: Trs, dt: f32) -> Offset {
    var inv_dt = 0.0;
    if dt > 0.0 {
        inv_dt = 1.0 / dt;
    }
    let t = src.t - dst.t;
    let r = log_rotation(quat_mul(src.q, quat_conjugate(dst.q)));
    let r_prev = log_rotation(quat_mul(prev.q, quat_conjugate(prev_dst.q)));
    let s = src.s - dst.s;
    return Offset(
        t,
        (t - (prev.t - prev_dst.t)) * inv_dt,
        r,
        (r - r_prev) * inv_dt,
        s,
        (s - (prev.s - prev_dst.s)) * inv_dt,
    );
}

/// `decay`: the offset x0 (velocity v0) `elapsed` seconds into a decay of `duration`.
fn decay(x0: vec3<f32>, v0: vec3<f32>, elapsed: f32, duration: f32) -> vec3<f32> {
    if !(duration > 0.0) {
        return vec3<f32>(0.0);
    }
    let u = clamp(elapsed / duration, 0.0, 1.0);
    let k = (1.0 - u) * (1.0 - u);
    return (x0 * (1.0 + 4.0 * u) + v0 * (duration * u)) * (k * k);
}

/// `inertialize_joint`: dst plus the offset decayed to `elapsed` seconds of `duration`.
fn inertialize_joint(dst: Trs, o: Offset, elapsed: f32, duration: f32) -> Trs {
    let r = decay(o.r, o.rv, elapsed, duration);
    return Trs(
        dst.t + decay(o.t, o.tv, elapsed, duration),
        normalize(quat_mul(exp_rotation(r), dst.q)),
        dst.s + decay(o.s, o.sv, elapsed, duration),
    );
}
