//! Local joint transforms: translation, rotation, scale (applied scale first, then rotation,
//! then translation: `M = T * R * S`, glTF's order).

use glam::{Affine3A, Mat3A, Quat, Vec3, Vec4};

/// A local transform. `rotation` is a unit Hamilton quaternion; `scale` is strictly positive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trs {
    pub translation: Vec3,
    pub rotation: Quat,
    pub scale: Vec3,
}

impl Trs {
    pub const IDENTITY: Trs = Trs {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// The affine matrix `T * R * S`.
    pub fn to_affine(&self) -> Affine3A {
        Affine3A::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// True when every component is finite.
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}

impl Default for Trs {
    fn default() -> Self {
        Trs::IDENTITY
    }
}

/// Spherical linear interpolation of unit quaternions along the shortest arc (glTF LINEAR
/// rotation). The half-angle comes from `2 atan2(|a - b|, |a + b|)`, accurate at small angles
/// (Kahan, "How Futile are Mindless Assessments of Roundoff", 2006); below 1e-6 rad it nlerps.
///
/// Where the branch is sure either way, the arctangent and sines are skipped and the result is
/// theirs bit for bit: quaternions a hair apart or equal (the joints an additive clip does not
/// move) nlerp; at `t = 1` (an additive layer or IK at full weight) the weights are exactly 0 and
/// 1 (`sin(0 θ) / sin θ` and `sin θ / sin θ`).
pub fn slerp_shortest(a: Quat, b: Quat, t: f32) -> Quat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let (va, vb) = (Vec4::from(a), Vec4::from(b));
    let (apart, together) = ((va - vb).length(), (va + vb).length());
    if together.is_finite() && together > 0.0 && apart <= 1e-7 * together {
        // θ = 2 atan2(apart, together) is at most about 2e-7, so sin θ < 1e-6.
        return nlerp_shortest(a, b, t);
    }
    if t == 1.0 && together >= 1e-3 && apart >= 1e-4 * together && apart <= together {
        // θ lies in [2e-4, π/2], so sin θ > 1e-6: `slerp_arc` with its weights.
        return Quat::from_vec4(va * 0.0 + vb * 1.0).normalize();
    }
    slerp_arc(a, b, apart, together, t)
}

/// [`slerp_shortest`]'s general path, `b` already in `a`'s hemisphere, `apart` = |a - b| and
/// `together` = |a + b|.
fn slerp_arc(a: Quat, b: Quat, apart: f32, together: f32, t: f32) -> Quat {
    let theta = 2.0 * apart.atan2(together);
    let sin_theta = theta.sin();
    if sin_theta < 1e-6 {
        return nlerp_shortest(a, b, t);
    }
    let wa = ((1.0 - t) * theta).sin() / sin_theta;
    let wb = (t * theta).sin() / sin_theta;
    Quat::from_vec4(Vec4::from(a) * wa + Vec4::from(b) * wb).normalize()
}

/// Normalised linear interpolation along the shortest arc (cooked sampling, overrides).
pub fn nlerp_shortest(a: Quat, b: Quat, t: f32) -> Quat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    Quat::from_vec4(Vec4::from(a).lerp(Vec4::from(b), t)).normalize()
}

/// Mean length of the three columns of the linear part: the uniform scale an affine carries.
pub fn mean_column_scale(m: &Affine3A) -> f32 {
    let l: Mat3A = m.matrix3;
    (l.x_axis.length() + l.y_axis.length() + l.z_axis.length()) / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `slerp_shortest` without its shortcuts.
    fn general(a: Quat, b: Quat, t: f32) -> Quat {
        let b = if a.dot(b) < 0.0 { -b } else { b };
        let (va, vb) = (Vec4::from(a), Vec4::from(b));
        slerp_arc(a, b, (va - vb).length(), (va + vb).length(), t)
    }

    fn bits(q: Quat) -> [u32; 4] {
        q.to_array().map(f32::to_bits)
    }

    /// Unit quaternions from four numbers, and ones a tiny angle apart: the shortcut's edges.
    fn quat() -> impl Strategy<Value = Quat> {
        prop::array::uniform4(-1.0f32..1.0).prop_map(|v| {
            let q = Quat::from_array(v);
            if q.length_squared() > 1e-6 {
                q.normalize()
            } else {
                Quat::IDENTITY
            }
        })
    }

    proptest! {
        #[test]
        fn slerp_is_the_general_path_bit_for_bit(
            a in quat(),
            b in quat(),
            angle in prop::sample::select(vec![0.0f32, 1e-8, 1e-7, 3e-7, 1e-6, 5e-5, 1e-4, 2e-4, 1e-3, 0.5, 3.0]),
            unnormalised in 0.5f32..2.0,
            t in prop::sample::select(vec![1.0f32, 0.0, 0.25, 0.999, 1.5]),
        ) {
            for (a, b) in [
                (a, b),
                (a, -b),
                (a, a * Quat::from_rotation_y(angle)),
                (a, -(a * Quat::from_rotation_x(angle))),
                (a * unnormalised, b),
                (Quat::IDENTITY, b),
            ] {
                prop_assert_eq!(bits(slerp_shortest(a, b, t)), bits(general(a, b, t)));
            }
        }
    }

    #[test]
    fn slerp_matches_the_general_path_at_the_odd_inputs() {
        let odd = [
            Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            Quat::from_xyzw(-0.0, 0.0, -0.0, 1.0),
            Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
            Quat::from_xyzw(f32::INFINITY, 0.0, 0.0, 1.0),
            Quat::from_xyzw(1e-30, 0.0, 0.0, 1e-30),
            Quat::from_xyzw(0.0, 1.0, 0.0, 0.0),
            Quat::from_xyzw(0.0, -1.0, 0.0, 0.0),
            Quat::IDENTITY,
        ];
        for a in odd {
            for b in odd {
                for t in [1.0, 0.5] {
                    let (got, want) = (slerp_shortest(a, b, t), general(a, b, t));
                    let same = bits(got) == bits(want) || (got.is_nan() && want.is_nan());
                    assert!(same, "{a} {b} at {t}: {got} against {want}");
                }
            }
        }
    }
}
