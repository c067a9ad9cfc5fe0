//! Host mirrors of the WGSL structs of throng-shaders (`common.wgsl`, `sample.wgsl`,
//! `skinning.wgsl`), byte for byte, and their conversions to and from glam.

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Mat3A, Quat, Vec3, Vec3A};
use serde::Serialize;
use throng_cpu_ref::Trs;

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

/// `Params` of common.wgsl: what one dispatch of one chunk needs (48 bytes, uniform).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Params {
    pub instance_count: u32,
    pub joint_count: u32,
    pub joint_base: u32,
    pub rest_base: u32,
    pub max_depth: u32,
    pub mask_base: u32,
    pub mask_count: u32,
    pub skin_base: u32,
    pub skin_len: u32,
    pub vertex_base: u32,
    pub vertex_count: u32,
    pub pad: u32,
}

/// `InstanceHeader` of common.wgsl (16 bytes): op and weight offsets relative to the chunk.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct InstanceHeader {
    pub op_offset: u32,
    pub op_count: u32,
    pub weight_offset: u32,
    pub flags: u32,
}

/// `FLAG_HERO` of common.wgsl.
pub const FLAG_HERO: u32 = 1;

/// `ClipHeader` of sample.wgsl (32 bytes). For a compressed clip `value_base` is the index of
/// its first codec word in the sub-track buffer viewed as u32 words.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ClipHeader {
    pub duration: f32,
    pub sample_rate: f32,
    pub sample_count: u32,
    pub track_base: u32,
    pub value_base: u32,
    /// [`ENCODING_REFERENCE`] or [`ENCODING_COMPRESSED`].
    pub encoding: u32,
    /// Compressed clips: samples per segment and number of animated sub-tracks.
    pub segment_length: u32,
    pub animated: u32,
}

/// `ClipHeader::encoding` values (codec.wgsl's `ENCODING_COMPRESSED`).
pub const ENCODING_REFERENCE: u32 = 0;
pub const ENCODING_COMPRESSED: u32 = 1;

/// `Vertex` of skinning.wgsl (64 bytes): bind-space position, normal (w = 1 when present),
/// four palette indices and weights.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Vertex {
    pub position: [f32; 4],
    pub normal: [f32; 4],
    pub joints: [u32; 4],
    pub weights: [f32; 4],
}

/// `SkinnedVertex` of skinning.wgsl (32 bytes): scene-space position (w = 1) and unit normal
/// (w = 0; zero when the mesh has no normals), after the instance's placement.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, Serialize)]
pub struct SkinnedVertex {
    pub position: [f32; 4],
    pub normal: [f32; 4],
}

impl SkinnedVertex {
    pub fn position(&self) -> Vec3 {
        Vec3::new(self.position[0], self.position[1], self.position[2])
    }
    pub fn normal(&self) -> Vec3 {
        Vec3::new(self.normal[0], self.normal[1], self.normal[2])
    }
}

/// `n` rounded up to a multiple of `a`.
pub fn align_up(n: u64, a: u64) -> u64 {
    n.div_ceil(a) * a
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
        assert_eq!(std::mem::size_of::<Params>(), 48);
        assert_eq!(std::mem::size_of::<InstanceHeader>(), 16);
        assert_eq!(std::mem::size_of::<ClipHeader>(), 32);
        assert_eq!(std::mem::size_of::<Vertex>(), 64);
        assert_eq!(std::mem::size_of::<SkinnedVertex>(), 32);
        assert_eq!(std::mem::size_of::<throng_cpu_ref::PoseOp>(), 32);
    }
}
