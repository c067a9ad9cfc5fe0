//! Host mirrors of the WGSL memory records of throng-shaders (`TrsRecord`, `Affine`, the
//! skinned vertex), byte for byte, and their conversions to and from glam and throng-cpu-ref.

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Mat3A, Quat, Vec3, Vec3A};
use throng_cpu_ref::skinning::decode_normal;
use throng_cpu_ref::{SkinnedVertex, Trs};

/// Storage and uniform offsets are aligned to this (WebGPU's minimum offset alignment bound).
pub const OFFSET_ALIGNMENT: u64 = 256;

/// A local transform in GPU memory: t.xyz_, q.xyzw, s.xyz_ (48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct TrsRecord {
    pub t: [f32; 4],
    pub q: [f32; 4],
    pub s: [f32; 4],
}

impl From<&Trs> for TrsRecord {
    fn from(x: &Trs) -> Self {
        TrsRecord {
            t: x.translation.extend(0.0).to_array(),
            q: x.rotation.to_array(),
            s: x.scale.extend(0.0).to_array(),
        }
    }
}

impl From<TrsRecord> for Trs {
    fn from(r: TrsRecord) -> Self {
        Trs {
            translation: Vec3::new(r.t[0], r.t[1], r.t[2]),
            rotation: Quat::from_array(r.q),
            scale: Vec3::new(r.s[0], r.s[1], r.s[2]),
        }
    }
}

/// An affine 3×4 as three rows `(m[r][0], m[r][1], m[r][2], t[r])` (48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct AffineRows {
    pub rows: [[f32; 4]; 3],
}

impl From<&Affine3A> for AffineRows {
    fn from(m: &Affine3A) -> Self {
        let (x, y, z, t) = (
            m.matrix3.x_axis,
            m.matrix3.y_axis,
            m.matrix3.z_axis,
            m.translation,
        );
        AffineRows {
            rows: [
                [x.x, y.x, z.x, t.x],
                [x.y, y.y, z.y, t.y],
                [x.z, y.z, z.z, t.z],
            ],
        }
    }
}

impl From<AffineRows> for Affine3A {
    fn from(a: AffineRows) -> Self {
        let [r0, r1, r2] = a.rows;
        Affine3A {
            matrix3: Mat3A::from_cols(
                Vec3A::new(r0[0], r1[0], r2[0]),
                Vec3A::new(r0[1], r1[1], r2[1]),
                Vec3A::new(r0[2], r1[2], r2[2]),
            ),
            translation: Vec3A::new(r0[3], r1[3], r2[3]),
        }
    }
}

/// `n` rounded up to a multiple of `a`.
pub fn align_up(n: u64, a: u64) -> u64 {
    n.div_ceil(a) * a
}

/// A skinned vertex as the skinning pass writes it (16 bytes): the position's f32 bits and the
/// normal as 16-bit octahedral coordinates (`throng_cpu_ref::skinning::encode_normal`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct SkinnedRecord {
    pub position: [u32; 3],
    pub normal: u32,
}

impl From<SkinnedRecord> for SkinnedVertex {
    fn from(r: SkinnedRecord) -> Self {
        SkinnedVertex {
            position: Vec3::from_array(r.position.map(f32::from_bits)),
            normal: decode_normal(r.normal),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_rows_round_trip_and_match_glam_points() {
        let m = Affine3A::from_scale_rotation_translation(
            Vec3::new(1.0, 2.0, 0.5),
            Quat::from_rotation_y(0.7) * Quat::from_rotation_x(-0.3),
            Vec3::new(3.0, -1.0, 2.0),
        );
        let rows = AffineRows::from(&m);
        let p = Vec3::new(0.3, -0.2, 1.5);
        let h = [p.x, p.y, p.z, 1.0];
        let dot = |r: [f32; 4]| r.iter().zip(&h).map(|(a, b)| a * b).sum::<f32>();
        let by_rows = Vec3::new(dot(rows.rows[0]), dot(rows.rows[1]), dot(rows.rows[2]));
        assert!((by_rows - m.transform_point3(p)).length() < 1e-6);
        assert_eq!(Affine3A::from(rows), m);
    }

    #[test]
    fn struct_sizes_match_wgsl() {
        assert_eq!(std::mem::size_of::<TrsRecord>(), 48);
        assert_eq!(std::mem::size_of::<AffineRows>(), 48);
        assert_eq!(std::mem::size_of::<SkinnedRecord>(), 16);
    }
}
