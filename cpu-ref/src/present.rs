//! Presentation between ticks (DESIGN.md §5, "Presentation time"): control ticks at its fixed
//! rate, and a frame shows the crowd at a fraction `alpha` of the way from the second-last
//! completed tick to the last one. Times, weights and placements of the two ticks are blended
//! here; the GPU's present pass (present.wgsl) mirrors every function, operation for operation.
//!
//! A presentation never advances control: it reads two committed ticks and writes nothing back.

use glam::{Affine3A, Quat, Vec3};

/// A clip time `alpha` of the way from `prev` to `cur` (seconds in a clip of `duration`): the
/// shorter way round the clip's cycle, so a loop that wrapped between the ticks keeps going
/// forward (a step of more than half the clip reads as the other way round), then brought back
/// into `[0, duration]`.
pub fn present_time(prev: f32, cur: f32, alpha: f32, duration: f32) -> f32 {
    let mut d = cur - prev;
    if duration > 0.0 && d.abs() > 0.5 * duration {
        d -= duration.copysign(d);
    }
    let mut t = prev + d * alpha;
    if t < 0.0 {
        t += duration;
    } else if t > duration {
        t -= duration;
    }
    t.clamp(0.0, duration.max(0.0))
}

/// A weight (or an inertialization's elapsed time) `alpha` of the way from `prev` to `cur`.
pub fn present_linear(prev: f32, cur: f32, alpha: f32) -> f32 {
    prev + (cur - prev) * alpha
}

/// An instance's placement as the runtimes keep it between ticks: a similarity (rotation,
/// uniform scale, translation), component space → scene. Root motion composes rigid motions,
/// so a crowd member's placement stays one. Laid out as the GPU reads it (present.wgsl): the
/// translation and the scale, then the rotation, 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Placement {
    pub translation: Vec3,
    pub scale: f32,
    pub rotation: Quat,
}

impl Default for Placement {
    fn default() -> Self {
        Placement {
            translation: Vec3::ZERO,
            scale: 1.0,
            rotation: Quat::IDENTITY,
        }
    }
}

/// Relative tolerance of [`Placement::from_affine`]: how far an affine may be from the
/// similarity it is read as.
pub const SIMILARITY_TOLERANCE: f32 = 1e-4;

impl Placement {
    /// `m` as a similarity; `None` when it is not finite, is singular, mirrors, shears or scales
    /// unevenly (past [`SIMILARITY_TOLERANCE`]).
    pub fn from_affine(m: &Affine3A) -> Option<Placement> {
        if !(m.matrix3.is_finite() && m.translation.is_finite()) {
            return None;
        }
        let (scale, rotation, translation) = m.to_scale_rotation_translation();
        let s = (scale.x + scale.y + scale.z) / 3.0;
        if !(s > 0.0 && s.is_finite() && rotation.is_finite()) || m.matrix3.determinant() <= 0.0 {
            return None;
        }
        let p = Placement {
            translation,
            scale: s,
            rotation: rotation.normalize(),
        };
        let back = p.to_affine();
        let off = (back.matrix3 - m.matrix3).to_cols_array();
        let size = m
            .matrix3
            .to_cols_array()
            .iter()
            .fold(0.0f32, |a, x| a.max(x.abs()));
        off.iter()
            .all(|x| x.abs() <= SIMILARITY_TOLERANCE * size)
            .then_some(p)
    }

    pub fn to_affine(&self) -> Affine3A {
        Affine3A::from_scale_rotation_translation(
            Vec3::splat(self.scale),
            self.rotation,
            self.translation,
        )
    }

    /// The placement `alpha` of the way from `prev` to `cur`: translation and scale lerped,
    /// rotation nlerped the shorter way.
    pub fn present(prev: &Placement, cur: &Placement, alpha: f32) -> Placement {
        let q1 = if prev.rotation.dot(cur.rotation) < 0.0 {
            -cur.rotation
        } else {
            cur.rotation
        };
        let q = Quat::from_vec4(
            glam::Vec4::from(prev.rotation)
                + (glam::Vec4::from(q1) - glam::Vec4::from(prev.rotation)) * alpha,
        );
        Placement {
            translation: prev.translation + (cur.translation - prev.translation) * alpha,
            scale: present_linear(prev.scale, cur.scale, alpha),
            rotation: q.normalize(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clip_time_goes_the_shorter_way_round_a_loop() {
        assert_eq!(present_time(0.2, 0.4, 0.5, 1.0), 0.3);
        // Wrapped between the ticks: 0.9 → 1.1 ≡ 0.1.
        assert!((present_time(0.9, 0.1, 0.5, 1.0) - 1.0).abs() < 1e-6);
        assert!((present_time(0.9, 0.1, 0.75, 1.0) - 0.05).abs() < 1e-6);
        // Backwards over the wrap: 0.1 → -0.1 ≡ 0.9; halfway is the loop's seam, 0 or 1.
        let seam = present_time(0.1, 0.9, 0.5, 1.0);
        assert!(seam.min(1.0 - seam) < 1e-6, "{seam}");
        assert!((present_time(0.1, 0.9, 0.75, 1.0) - 0.95).abs() < 1e-6);
        assert_eq!(present_time(0.3, 0.6, 0.0, 1.0), 0.3);
        assert_eq!(present_time(0.3, 0.6, 1.0, 1.0), 0.6);
        assert_eq!(
            present_time(0.0, 0.0, 0.5, 0.0),
            0.0,
            "a clip of no duration"
        );
    }

    #[test]
    fn placements_read_as_similarities_and_blend_between_ticks() {
        let a = Affine3A::from_scale_rotation_translation(
            Vec3::splat(2.0),
            Quat::from_rotation_y(0.3),
            Vec3::new(1.0, 2.0, 3.0),
        );
        let p = Placement::from_affine(&a).expect("a similarity");
        let back = p.to_affine();
        assert!(back.abs_diff_eq(a, 1e-5), "{back:?}");
        let sheared = Affine3A::from_cols_array(&[
            1.0, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0,
        ]);
        assert_eq!(Placement::from_affine(&sheared), None);
        let uneven = Affine3A::from_scale(Vec3::new(1.0, 2.0, 1.0));
        assert_eq!(Placement::from_affine(&uneven), None);
        let mirrored = Affine3A::from_scale(Vec3::new(-1.0, 1.0, 1.0));
        assert_eq!(Placement::from_affine(&mirrored), None);
        let q = Placement {
            translation: Vec3::new(3.0, 2.0, 3.0),
            scale: 2.0,
            rotation: -Quat::from_rotation_y(0.5),
        };
        let mid = Placement::present(&p, &q, 0.5);
        assert!((mid.translation - Vec3::new(2.0, 2.0, 3.0)).length() < 1e-6);
        let angle = mid.rotation.angle_between(Quat::from_rotation_y(0.4));
        assert!(angle < 1e-4, "the shorter way round: {angle}");
        assert_eq!(
            Placement::present(&p, &q, 0.0),
            Placement {
                rotation: p.rotation.normalize(),
                ..p
            }
        );
    }
}
