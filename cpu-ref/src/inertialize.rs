//! Inertialization (docs/pose-program.md, "Inertialize"): a transition switches to its
//! destination at once and adds an offset that decays to zero, so only the destination is
//! evaluated while the offset fades.
//!
//! David Bollo, "Inertialization: High-Performance Animation Transitions in Gears of War",
//! GDC 2018, <https://www.gdcvault.com/play/1025331/>.
//!
//! Per joint and channel the offset is a vector in local space: translation and scale as
//! `source - destination`, rotation as the axis-angle `log(q_source · q_destination⁻¹)` (shortest
//! arc). `Capture` writes the offset `x0` and its velocity `v0` (from the previous presented pose
//! and the destination one step earlier) into the instance's history slot; `Inertialize` adds the
//! decayed offset `x(t)` in closed form, reading history only:
//!
//! `u = clamp(t / t1, 0, 1)`, `x(t) = (1 - u)⁴ · (x0 · (1 + 4u) + v0 · t1 · u)`
//!
//! which is Bollo's quintic with his choice of initial acceleration (`a0 = (-8 v0 t1 - 20 x0) /
//! t1²`), rewritten in normalised time so no power of `t1` can overflow: `x(0) = x0`, `x'(0) = v0`,
//! and `x`, `x'`, `x''` are zero at `t1` and stay zero. It is applied per component of each
//! vector rather than to the vector's length, so the pose *and* its velocity are continuous at the
//! switch; the length form's clamps (`v0 = min(v0, 0)`, `t1 ≤ -5 x0 / v0`), which trade velocity
//! continuity for never overshooting, are not applied (the docs show the overshoot they prevent).

use glam::{Quat, Vec3};

use crate::Trs;

/// One joint's offset and its velocity (units per second), per channel, in local space.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointOffset {
    pub translation: Vec3,
    pub translation_velocity: Vec3,
    /// Axis × angle (radians) of `q_source · q_destination⁻¹`.
    pub rotation: Vec3,
    pub rotation_velocity: Vec3,
    pub scale: Vec3,
    pub scale_velocity: Vec3,
}

impl JointOffset {
    pub const ZERO: JointOffset = JointOffset {
        translation: Vec3::ZERO,
        translation_velocity: Vec3::ZERO,
        rotation: Vec3::ZERO,
        rotation_velocity: Vec3::ZERO,
        scale: Vec3::ZERO,
        scale_velocity: Vec3::ZERO,
    };
}

/// Axis × angle of `q`'s shortest arc (`q` and `-q` give the same vector), angle in [0, π].
pub fn log_rotation(q: Quat) -> Vec3 {
    let q = if q.w < 0.0 { -q } else { q };
    let v = Vec3::new(q.x, q.y, q.z);
    let s = v.length();
    if s < 1e-8 {
        return v * 2.0;
    }
    v * (2.0 * atan2_first_quadrant(s, q.w) / s)
}

/// The rotation of axis × angle `r`: the inverse of [`log_rotation`].
pub fn exp_rotation(r: Vec3) -> Quat {
    let angle = r.length();
    if angle < 1e-8 {
        return Quat::from_xyzw(r.x * 0.5, r.y * 0.5, r.z * 0.5, 1.0).normalize();
    }
    let (s, c) = sin_cos(angle * 0.5);
    let v = r * (s / angle);
    Quat::from_xyzw(v.x, v.y, v.z, c)
}

// The trigonometry of inertialization is written out (Taylor series on reduced ranges, within
// 1e-6 of libm, tested) and mirrored operation for operation in inertialize.wgsl: Vulkan lets a
// GPU's built-in sin, cos and atan be off by 2^-11 or 4096 ulp, which FK down a long chain turns
// into more than DESIGN.md §6 allows, and the CPU and GPU must agree on every adapter.

/// `atan(y)` for `|y| <= tan(π/8)`.
fn atan_series(y: f32) -> f32 {
    let z = y * y;
    let mut p = -1.0 / 15.0;
    for c in [
        1.0 / 13.0,
        -1.0 / 11.0,
        1.0 / 9.0,
        -1.0 / 7.0,
        0.2,
        -1.0 / 3.0,
        1.0,
    ] {
        p = p * z + c;
    }
    y * p
}

/// `atan2(y, x)` for `y, x >= 0`, not both zero.
pub fn atan2_first_quadrant(y: f32, x: f32) -> f32 {
    let (lo, hi) = if y <= x { (y, x) } else { (x, y) };
    let t = lo / hi;
    let a = if t > std::f32::consts::FRAC_PI_8.tan() {
        std::f32::consts::FRAC_PI_4 + atan_series((t - 1.0) / (t + 1.0))
    } else {
        atan_series(t)
    };
    if y <= x {
        a
    } else {
        std::f32::consts::FRAC_PI_2 - a
    }
}

/// `(sin x, cos x)`.
pub fn sin_cos(x: f32) -> (f32, f32) {
    use std::f32::consts::{FRAC_PI_2, PI, TAU};
    let x = x - TAU * (x / TAU).round();
    // Fold into [-π/2, π/2]: sin(π - x) = sin x, cos(π - x) = -cos x.
    let fold = x.abs() > FRAC_PI_2;
    let x = if fold { PI.copysign(x) - x } else { x };
    let z = x * x;
    let mut s = 1.0 / 6_227_020_800.0;
    for c in [
        -1.0 / 39_916_800.0,
        1.0 / 362_880.0,
        -1.0 / 5_040.0,
        1.0 / 120.0,
        -1.0 / 6.0,
        1.0,
    ] {
        s = s * z + c;
    }
    let mut c = 1.0 / 87_178_291_200.0;
    for k in [
        -1.0 / 479_001_600.0,
        1.0 / 3_628_800.0,
        -1.0 / 40_320.0,
        1.0 / 720.0,
        -1.0 / 24.0,
        0.5,
    ] {
        c = c * z + k;
    }
    let cos = 1.0 - z * c;
    (x * s, if fold { -cos } else { cos })
}

/// Shortest `Capture` interval, seconds (a tick at 10 kHz): the velocity divides by it, so a
/// shorter one could overflow to infinity.
pub const MIN_CAPTURE_INTERVAL: f32 = 1e-4;

/// Longest `Inertialize` decay, seconds: the decay scales the velocity by it, so a longer one
/// could overflow (and no transition wants a decay of more than a minute).
pub const MAX_INERTIALIZATION: f32 = 60.0;

/// One channel's offset `source - destination` of the rotations.
fn rotation_offset(source: Quat, destination: Quat) -> Vec3 {
    log_rotation(source * destination.inverse())
}

/// The offset of `source` from `destination` and its velocity over the `dt` seconds since
/// `previous` (the source then) and `previous_destination` (the destination then). A `dt` that is
/// not positive gives zero velocity.
pub fn capture_joint(
    source: &Trs,
    previous: &Trs,
    destination: &Trs,
    previous_destination: &Trs,
    dt: f32,
) -> JointOffset {
    let inv_dt = if dt > 0.0 { 1.0 / dt } else { 0.0 };
    let t = source.translation - destination.translation;
    let t_prev = previous.translation - previous_destination.translation;
    let r = rotation_offset(source.rotation, destination.rotation);
    let r_prev = rotation_offset(previous.rotation, previous_destination.rotation);
    let s = source.scale - destination.scale;
    let s_prev = previous.scale - previous_destination.scale;
    JointOffset {
        translation: t,
        translation_velocity: (t - t_prev) * inv_dt,
        rotation: r,
        rotation_velocity: (r - r_prev) * inv_dt,
        scale: s,
        scale_velocity: (s - s_prev) * inv_dt,
    }
}

/// The decayed offset `x(t)` of the module doc for offset `x0`, velocity `v0`, `elapsed` seconds
/// after the capture and a decay of `duration` seconds (zero or less: no offset).
pub fn decay(x0: Vec3, v0: Vec3, elapsed: f32, duration: f32) -> Vec3 {
    if duration.is_nan() || duration <= 0.0 {
        return Vec3::ZERO;
    }
    let u = (elapsed / duration).clamp(0.0, 1.0);
    let k = (1.0 - u) * (1.0 - u);
    (x0 * (1.0 + 4.0 * u) + v0 * (duration * u)) * (k * k)
}

/// `destination` plus `offset` decayed to `elapsed` seconds of `duration`: translation and scale
/// added, rotation `exp(r(t)) · q_destination`.
pub fn inertialize_joint(
    destination: &Trs,
    offset: &JointOffset,
    elapsed: f32,
    duration: f32,
) -> Trs {
    let d = |x0, v0| decay(x0, v0, elapsed, duration);
    let r = d(offset.rotation, offset.rotation_velocity);
    Trs {
        translation: destination.translation + d(offset.translation, offset.translation_velocity),
        rotation: (exp_rotation(r) * destination.rotation).normalize(),
        scale: destination.scale + d(offset.scale, offset.scale_velocity),
    }
}

/// Per-instance inertialization history: `slots` slots of one [`JointOffset`] per joint, for
/// skeletons of up to `joints` joints. Plain arrays, zeroed when made (a slot never captured
/// holds no offset, so an `Inertialize` of it is a plain switch).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    slots: usize,
    joints: usize,
    offsets: Vec<JointOffset>,
}

impl History {
    pub fn new(slots: usize, joints: usize) -> History {
        History {
            slots,
            joints,
            offsets: vec![JointOffset::ZERO; slots * joints],
        }
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Joints per slot.
    pub fn joints(&self) -> usize {
        self.joints
    }

    /// Slot `slot`'s offsets (one per joint of the capacity), if it exists.
    pub fn slot(&self, slot: u32) -> Option<&[JointOffset]> {
        let start = self.start(slot)?;
        self.offsets.get(start..start + self.joints)
    }

    pub fn slot_mut(&mut self, slot: u32) -> Option<&mut [JointOffset]> {
        let start = self.start(slot)?;
        self.offsets.get_mut(start..start + self.joints)
    }

    fn start(&self, slot: u32) -> Option<usize> {
        if slot as usize >= self.slots {
            return None;
        }
        (slot as usize).checked_mul(self.joints)
    }

    /// The same slots for skeletons of up to `joints` joints, keeping every offset.
    pub fn with_joints(&self, joints: usize) -> History {
        let mut grown = History::new(self.slots(), joints.max(self.joints));
        for s in 0..self.slots() as u32 {
            if let (Some(from), Some(to)) = (self.slot(s), grown.slot_mut(s)) {
                to[..from.len()].copy_from_slice(from);
            }
        }
        grown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decay_starts_at_the_offset_with_its_velocity_and_ends_flat_at_zero() {
        let (x0, v0, t1) = (Vec3::new(1.0, -2.0, 0.5), Vec3::new(-3.0, 1.0, 4.0), 0.4);
        assert_eq!(decay(x0, v0, 0.0, t1), x0);
        let h = 1e-4;
        let slope = (decay(x0, v0, h, t1) - x0) / h;
        assert!((slope - v0).abs().max_element() < 0.05, "{slope}");
        assert_eq!(decay(x0, v0, t1, t1), Vec3::ZERO);
        assert_eq!(decay(x0, v0, 3.0 * t1, t1), Vec3::ZERO);
        let near_end = decay(x0, v0, t1 - h, t1);
        assert!(near_end.abs().max_element() < 1e-9, "{near_end}");
    }

    #[test]
    fn a_zero_or_negative_duration_is_a_plain_switch() {
        for t1 in [0.0, -1.0, f32::NAN] {
            assert_eq!(decay(Vec3::ONE, Vec3::ONE, 0.0, t1), Vec3::ZERO);
        }
    }

    #[test]
    fn log_and_exp_invert_each_other_on_both_hemispheres() {
        for (axis, angle) in [
            (Vec3::X, 0.0),
            (Vec3::Y, 1e-5),
            (Vec3::Z, 1.0),
            (Vec3::ONE, 3.1),
        ] {
            let q = Quat::from_axis_angle(axis.normalize(), angle);
            for q in [q, -q] {
                let r = log_rotation(q);
                assert!(r.is_finite());
                assert!(r.length() <= std::f32::consts::PI + 1e-5);
                let back = exp_rotation(r);
                assert!(back.dot(q).abs() > 1.0 - 1e-6, "{q} -> {r} -> {back}");
            }
        }
    }

    #[test]
    fn the_written_out_trigonometry_matches_the_library_within_1e_6() {
        for k in 0..=2000 {
            let x = -9.0 + 18.0 * k as f32 / 2000.0;
            let (s, c) = sin_cos(x);
            assert!(
                (s - x.sin()).abs() < 1e-6 && (c - x.cos()).abs() < 1e-6,
                "{x}"
            );
            let (a, b) = (x.abs(), (x * 0.37).abs() + 1e-3);
            assert!(
                (atan2_first_quadrant(a, b) - a.atan2(b)).abs() < 1e-6,
                "{a}, {b}"
            );
        }
        assert_eq!(atan2_first_quadrant(0.0, 1.0), 0.0);
        assert!((atan2_first_quadrant(1.0, 0.0) - std::f32::consts::FRAC_PI_2).abs() < 1e-7);
    }

    #[test]
    fn growing_the_joint_capacity_keeps_every_offset() {
        assert_eq!(History::new(3, 0).with_joints(4).slots(), 3);
        let mut h = History::new(3, 2);
        h.slot_mut(2).unwrap()[1].translation = Vec3::X;
        let g = h.with_joints(5);
        assert_eq!((g.slots(), g.joints()), (3, 5));
        assert_eq!(g.slot(2).unwrap()[1].translation, Vec3::X);
        assert_eq!(g.slot(2).unwrap()[4], JointOffset::ZERO);
        assert!(g.slot(3).is_none());
    }
}
