//! Linear blend skinning of positions and normals.
//!
//! Per vertex, `M = Σ wᵢ · palette[jointᵢ]`; the position is `M · p` and the normal is
//! `normalize(cof(L) · n)` where `L` is the linear part of `M` and `cof(L) = det(L) · L⁻ᵀ`, the
//! cofactor matrix: it keeps normals perpendicular to skinned surfaces under non-uniform scale
//! and shear, needs no division, and is defined for singular `L`. Since `cof(L)(a × b) =
//! La × Lb`, under a mirroring `L` (det < 0) the normal follows the flipped triangle winding.
//! Positions and normals go from bind space to the palette's (component) space.

use glam::{Affine3A, Mat3A, Vec3, Vec3A};

use crate::SkinnedMesh;

/// `Σ wᵢ · palette[jointᵢ]` over one vertex's influences. Influences whose joint is outside the
/// palette or whose weight is zero are skipped (the package reader rejects the first).
pub fn blend_matrix(palette: &[Affine3A], joints: [u16; 4], weights: [f32; 4]) -> Affine3A {
    let mut linear = Mat3A::ZERO;
    let mut translation = Vec3A::ZERO;
    for (&j, &w) in joints.iter().zip(&weights) {
        if w == 0.0 {
            continue;
        }
        if let Some(m) = palette.get(j as usize) {
            linear += m.matrix3 * w;
            translation += m.translation * w;
        }
    }
    Affine3A {
        matrix3: linear,
        translation,
    }
}

/// The cofactor matrix `det(L) · L⁻ᵀ`, columns `y×z, z×x, x×y` of `L = [x y z]`.
pub fn cofactor(l: &Mat3A) -> Mat3A {
    Mat3A::from_cols(
        l.y_axis.cross(l.z_axis),
        l.z_axis.cross(l.x_axis),
        l.x_axis.cross(l.y_axis),
    )
}

/// Skins `mesh` with `palette` (one entry per skin joint) into caller-owned `positions` and
/// `normals`. Vertices past the end of an output slice, or of the mesh's joint / weight arrays,
/// are not written; a normal that skins to zero length is written as zero.
pub fn skin_mesh(
    mesh: &SkinnedMesh,
    palette: &[Affine3A],
    positions: &mut [Vec3],
    normals: &mut [Vec3],
) {
    skin_shape(
        mesh,
        (&mesh.positions, &mesh.normals),
        palette,
        positions,
        normals,
    );
}

/// [`skin_mesh`] of `mesh`'s influences over another bind-space shape of it (`bind`: positions
/// and normals, e.g. morphed by `crate::morph::morph`).
pub fn skin_shape(
    mesh: &SkinnedMesh,
    (bind_positions, bind_normals): (&[Vec3], &[Vec3]),
    palette: &[Affine3A],
    positions: &mut [Vec3],
    normals: &mut [Vec3],
) {
    let influences = mesh.joints.iter().zip(&mesh.weights);
    for (v, (&joints, &weights)) in influences.enumerate() {
        let m = blend_matrix(palette, joints, weights);
        if let (Some(out), Some(&p)) = (positions.get_mut(v), bind_positions.get(v)) {
            *out = m.transform_point3(p);
        }
        if let (Some(out), Some(&n)) = (normals.get_mut(v), bind_normals.get(v)) {
            *out = Vec3::from(cofactor(&m.matrix3) * Vec3A::from(n)).normalize_or_zero();
        }
    }
}

/// [`encode_normal`] of a zero (or non-finite) normal.
pub const NO_NORMAL: u32 = 0x8000_8000;

/// A unit normal as two 16-bit signed-normalised octahedral coordinates, x in the low half,
/// rounded as WGSL's `pack2x16snorm` (`⌊0.5 + 32767·clamp(v, -1, 1)⌋`): the GPU's skinned-vertex
/// normal. The worst angle between a unit normal and its decoded code is about 6.4e-5 rad.
/// After Cigolle et al., "A Survey of Efficient Representations for Independent Unit Vectors",
/// JCGT 3(2), 2014 (http://jcgt.org/published/0003/02/01/).
pub fn encode_normal(n: Vec3) -> u32 {
    let l1 = n.x.abs() + n.y.abs() + n.z.abs();
    if !(l1 > 0.0 && l1.is_finite()) {
        return NO_NORMAL;
    }
    let (mut x, mut y) = (n.x / l1, n.y / l1);
    if n.z < 0.0 {
        (x, y) = ((1.0 - y.abs()) * sign(x), (1.0 - x.abs()) * sign(y));
    }
    let snorm = |v: f32| ((0.5 + 32767.0 * v.clamp(-1.0, 1.0)).floor() as i32 as u32) & 0xffff;
    snorm(x) | (snorm(y) << 16)
}

/// The unit normal of an [`encode_normal`] code (zero for [`NO_NORMAL`]), as WGSL's
/// `unpack2x16snorm` reads it.
pub fn decode_normal(bits: u32) -> Vec3 {
    if bits == NO_NORMAL {
        return Vec3::ZERO;
    }
    let unorm = |h: u32| (f32::from(h as u16 as i16) / 32767.0).max(-1.0);
    let (x, y) = (unorm(bits & 0xffff), unorm(bits >> 16));
    let z = 1.0 - x.abs() - y.abs();
    let v = if z < 0.0 {
        Vec3::new((1.0 - y.abs()) * sign(x), (1.0 - x.abs()) * sign(y), z)
    } else {
        Vec3::new(x, y, z)
    };
    v.normalize()
}

/// 1 for non-negative `v`, else -1 (the octahedral fold's sign).
fn sign(v: f32) -> f32 {
    if v >= 0.0 {
        1.0
    } else {
        -1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Angle between two directions, precise for small angles (f64 atan2, not f32 acos).
    fn angle(a: Vec3, b: Vec3) -> f64 {
        let (a, b) = (a.as_dvec3(), b.as_dvec3());
        a.cross(b).length().atan2(a.dot(b))
    }

    #[test]
    fn octahedral_normals_round_trip_within_their_bound() {
        let mut worst = 0.0f64;
        for i in 0..20_000u32 {
            // A spiral over the sphere, both hemispheres and the fold lines.
            let t = (i as f32 + 0.5) / 20_000.0;
            let z = 1.0 - 2.0 * t;
            let r = (1.0 - z * z).max(0.0).sqrt();
            let phi = i as f32 * 2.399_963;
            let n = Vec3::new(r * phi.cos(), r * phi.sin(), z);
            worst = worst.max(angle(decode_normal(encode_normal(n)), n));
        }
        assert!(worst < 7e-5, "worst {worst} rad");
        for axis in [
            Vec3::X,
            Vec3::NEG_X,
            Vec3::Y,
            Vec3::NEG_Y,
            Vec3::Z,
            Vec3::NEG_Z,
        ] {
            assert!(
                angle(decode_normal(encode_normal(axis)), axis) < 1e-6,
                "{axis}"
            );
        }
        assert_eq!(encode_normal(Vec3::ZERO), NO_NORMAL);
        assert_eq!(encode_normal(Vec3::NAN), NO_NORMAL);
        assert_eq!(decode_normal(NO_NORMAL), Vec3::ZERO);
    }
}
