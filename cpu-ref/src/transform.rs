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
pub fn slerp_shortest(a: Quat, b: Quat, t: f32) -> Quat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let (va, vb) = (Vec4::from(a), Vec4::from(b));
    let theta = 2.0 * (va - vb).length().atan2((va + vb).length());
    let sin_theta = theta.sin();
    if sin_theta < 1e-6 {
        return nlerp_shortest(a, b, t);
    }
    let wa = ((1.0 - t) * theta).sin() / sin_theta;
    let wb = (t * theta).sin() / sin_theta;
    Quat::from_vec4(va * wa + vb * wb).normalize()
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
