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
    let influences = mesh.joints.iter().zip(&mesh.weights);
    for (v, (&joints, &weights)) in influences.enumerate() {
        let m = blend_matrix(palette, joints, weights);
        if let (Some(out), Some(&p)) = (positions.get_mut(v), mesh.positions.get(v)) {
            *out = m.transform_point3(p);
        }
        if let (Some(out), Some(&n)) = (normals.get_mut(v), mesh.normals.get(v)) {
            *out = Vec3::from(cofactor(&m.matrix3) * Vec3A::from(n)).normalize_or_zero();
        }
    }
}
