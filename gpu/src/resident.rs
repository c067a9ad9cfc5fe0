//! Resident package data: uploaded once per package generation, read by every frame.
//!
//! One package becomes eight storage buffers: the clip table, sub-tracks (and, after them, the
//! word streams of compressed clips, docs/codec.md), an f32 pool (rest poses, clip samples,
//! mask weights), mask starts, the joint table (parent, depth), skin joint
//! maps, inverse bind matrices, and bind-space vertices grouped by skin. Every index the shaders
//! follow is checked here, so a malformed package is refused before any GPU work.

use throng_cpu_ref::codec::{decode_components, segment_count, CompressedClip};
use throng_cpu_ref::{Clip, Mask, Package, SubTrackKind};
use wgpu::util::DeviceExt;

use crate::layout::{AffineRows, ClipHeader, TrsRecord, Vertex, ENCODING_COMPRESSED, ENCODING_REFERENCE};
use crate::{GpuContext, GpuError};

/// Handle of a package made resident in a [`crate::Runtime`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PackageId(pub usize);

/// Where one skeleton lives in its package's buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SkeletonRange {
    pub joint_base: u32,
    pub rest_base: u32,
    pub joint_count: u32,
    pub max_depth: u32,
    pub mask_base: u32,
    pub mask_count: u32,
}

/// Where one skin lives: its palette entries and the vertices of the meshes it binds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkinRange {
    pub skeleton: u32,
    pub(crate) base: u32,
    /// Palette entries.
    pub len: u32,
    pub(crate) vertex_base: u32,
    /// Vertices of every mesh bound to this skin, in mesh order.
    pub vertex_count: u32,
    /// `(mesh index, first vertex within the skin's vertices, vertex count)` per bound mesh.
    pub meshes: Vec<(usize, u32, u32)>,
}

pub(crate) struct ResidentBuffers {
    pub clips: wgpu::Buffer,
    pub tracks: wgpu::Buffer,
    pub values: wgpu::Buffer,
    pub masks: wgpu::Buffer,
    pub joint_table: wgpu::Buffer,
    pub skin_joints: wgpu::Buffer,
    pub inverse_bind: wgpu::Buffer,
    pub vertices: wgpu::Buffer,
}

/// A package on the GPU, with the CPU copy programs are validated against.
pub struct ResidentPackage {
    pub package: Package,
    /// Masks per skeleton: `masks[skeleton]` is what `Override` / `Additive` ops index.
    pub masks: Vec<Vec<Mask>>,
    pub(crate) skeletons: Vec<SkeletonRange>,
    pub skins: Vec<SkinRange>,
    pub(crate) buffers: ResidentBuffers,
    /// Bytes of GPU memory the package occupies.
    pub bytes: u64,
}

/// The flat arrays uploaded for one package.
#[derive(Default)]
struct Arrays {
    clips: Vec<ClipHeader>,
    tracks: Vec<[u32; 2]>,
    values: Vec<f32>,
    masks: Vec<u32>,
    joint_table: Vec<[u32; 2]>,
    skin_joints: Vec<u32>,
    inverse_bind: Vec<AffineRows>,
    vertices: Vec<Vertex>,
}

impl ResidentPackage {
    /// Checks and uploads `package` with `masks[skeleton]` for each of its skeletons (missing
    /// entries mean no masks). `id` names the package in errors.
    pub fn upload(
        ctx: &GpuContext,
        id: usize,
        package: &Package,
        masks: &[Vec<Mask>],
    ) -> Result<ResidentPackage, GpuError> {
        let bad = |what: String| GpuError::BadPackage { package: id, what };
        let mut arrays = Arrays::default();
        let masks: Vec<Vec<Mask>> = (0..package.skeletons.len())
            .map(|s| masks.get(s).cloned().unwrap_or_default())
            .collect();
        let skeletons = add_skeletons(&mut arrays, package, &masks).map_err(bad)?;
        add_clips(&mut arrays, package).map_err(bad)?;
        let skins = add_skins(&mut arrays, package).map_err(bad)?;
        if u32::try_from(arrays.values.len()).is_err()
            || u32::try_from(arrays.vertices.len()).is_err()
        {
            return Err(bad("more than 2^32 values or vertices".into()));
        }
        let limit = ctx.limits.max_storage_buffer_binding_size;
        let mut bytes = 0;
        let mut buffer = |what: &'static str, data: &[u8]| -> Result<wgpu::Buffer, GpuError> {
            let size = data.len() as u64;
            if size > limit {
                return Err(GpuError::ResidentTooLarge {
                    package: id,
                    what,
                    bytes: size,
                    limit,
                });
            }
            // A binding may not be empty: an unused array gets 16 zero bytes.
            let contents = if data.is_empty() {
                &[0u8; 16][..]
            } else {
                data
            };
            bytes += contents.len() as u64;
            Ok(ctx
                .device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(what),
                    contents,
                    usage: wgpu::BufferUsages::STORAGE,
                }))
        };
        let buffers = ResidentBuffers {
            clips: buffer("clip headers", bytemuck::cast_slice(&arrays.clips))?,
            tracks: buffer("sub-tracks", bytemuck::cast_slice(&arrays.tracks))?,
            values: buffer("values", bytemuck::cast_slice(&arrays.values))?,
            masks: buffer("mask starts", bytemuck::cast_slice(&arrays.masks))?,
            joint_table: buffer("joint table", bytemuck::cast_slice(&arrays.joint_table))?,
            skin_joints: buffer("skin joints", bytemuck::cast_slice(&arrays.skin_joints))?,
            inverse_bind: buffer(
                "inverse bind matrices",
                bytemuck::cast_slice(&arrays.inverse_bind),
            )?,
            vertices: buffer("vertices", bytemuck::cast_slice(&arrays.vertices))?,
        };
        Ok(ResidentPackage {
            package: package.clone(),
            masks,
            skeletons,
            skins,
            buffers,
            bytes,
        })
    }

    pub(crate) fn skeleton(&self, s: u32) -> Option<&SkeletonRange> {
        self.skeletons.get(s as usize)
    }
}

fn index(n: usize, what: &str) -> Result<u32, String> {
    u32::try_from(n).map_err(|_| format!("{what} index {n} does not fit 32 bits"))
}

/// Rest poses and masks into the f32 pool, parents and depths into the joint table.
fn add_skeletons(
    a: &mut Arrays,
    package: &Package,
    masks: &[Vec<Mask>],
) -> Result<Vec<SkeletonRange>, String> {
    let mut ranges = Vec::with_capacity(package.skeletons.len());
    for (s, skeleton) in package.skeletons.iter().enumerate() {
        let joints = skeleton.joint_count();
        let joint_base = index(a.joint_table.len(), "joint")?;
        let rest_base = index(a.values.len(), "value")?;
        for (j, rest) in skeleton.rest.iter().enumerate() {
            let r = TrsRecord::from(rest);
            a.values.extend(r.t.iter().chain(&r.q).chain(&r.s));
            let parent = skeleton.parents.get(j).copied().unwrap_or(u32::MAX);
            let depth = skeleton.depth.get(j).copied().unwrap_or(0);
            a.joint_table.push([parent, depth]);
        }
        let mask_base = index(a.masks.len(), "mask")?;
        let skeleton_masks = masks.get(s).map_or(&[][..], |m| &m[..]);
        for (m, mask) in skeleton_masks.iter().enumerate() {
            if mask.weights.len() != joints || !mask.weights.iter().all(|w| (0.0..=1.0).contains(w))
            {
                return Err(format!(
                    "mask {m} ('{}') of skeleton {s} has {} weights for {joints} joints, or a weight outside [0, 1]",
                    mask.name,
                    mask.weights.len()
                ));
            }
            a.masks.push(index(a.values.len(), "value")?);
            a.values.extend(&mask.weights);
        }
        ranges.push(SkeletonRange {
            joint_base,
            rest_base,
            joint_count: index(joints, "joint")?,
            max_depth: skeleton.depth.iter().copied().max().unwrap_or(0),
            mask_base,
            mask_count: index(skeleton_masks.len(), "mask")?,
        });
    }
    Ok(ranges)
}

/// Clip headers, sub-tracks and samples; every sub-track's values must lie inside the clip.
fn add_clips(a: &mut Arrays, package: &Package) -> Result<(), String> {
    for (c, clip) in package.clips.iter().enumerate() {
        if !(clip.sample_rate.is_finite() && clip.sample_rate > 0.0) || clip.sample_count == 0 {
            return Err(format!(
                "clip {c} ('{}') has sample rate {} and {} samples",
                clip.name, clip.sample_rate, clip.sample_count
            ));
        }
        if let Some(compressed) = &clip.compressed {
            add_compressed(a, c, clip, compressed)?;
            continue;
        }
        let track_base = index(a.tracks.len(), "sub-track")?;
        let value_base = index(a.values.len(), "value")?;
        for (t, st) in clip.sub_tracks.iter().enumerate() {
            let width = if t % 3 == 1 { 4 } else { 3 };
            let count = match st.kind {
                SubTrackKind::Default => 0,
                SubTrackKind::Constant => width,
                SubTrackKind::Animated => width * clip.sample_count as usize,
            };
            if st.offset as usize + count > clip.values.len() {
                return Err(format!(
                    "clip {c} ('{}') sub-track {t} reads values {}..{} of {}",
                    clip.name,
                    st.offset,
                    st.offset as usize + count,
                    clip.values.len()
                ));
            }
            a.tracks.push([st.kind as u32, st.offset]);
        }
        a.values.extend(&clip.values);
        a.clips.push(ClipHeader {
            duration: clip.duration as f32,
            sample_rate: clip.sample_rate,
            sample_count: clip.sample_count,
            track_base,
            value_base,
            encoding: ENCODING_REFERENCE,
            segment_length: 0,
            animated: 0,
        });
    }
    Ok(())
}

/// A compressed clip: its sub-track table, then its word stream at an even word of the
/// sub-track buffer. Every read the shader makes is checked first by decoding every sample on
/// the CPU (the shader follows the same offsets), and stream bit positions fit 32 bits.
fn add_compressed(a: &mut Arrays, c: usize, clip: &Clip, z: &CompressedClip) -> Result<(), String> {
    let bad = |what: String| format!("clip {c} ('{}'), compressed: {what}", clip.name);
    if z.words.len() >= 1 << 27 || segment_count(clip.sample_count, z.segment_length).is_none() {
        return Err(bad(format!("{} words, segment length {}", z.words.len(), z.segment_length)));
    }
    for (t, st) in clip.sub_tracks.iter().enumerate() {
        let readable = match st.kind {
            SubTrackKind::Default => true,
            SubTrackKind::Constant => z.words.len() >= st.offset as usize + if t % 3 == 1 { 4 } else { 3 },
            SubTrackKind::Animated => {
                st.offset < z.animated && (0..clip.sample_count).all(|i| decode_components(z, st.offset, i).is_some())
            }
        };
        if !readable {
            return Err(bad(format!("sub-track {t} reads past its {} words", z.words.len())));
        }
    }
    let track_base = index(a.tracks.len(), "sub-track")?;
    a.tracks.extend(clip.sub_tracks.iter().map(|st| [st.kind as u32, st.offset]));
    let value_base = index(2 * a.tracks.len(), "codec word")?;
    a.tracks.extend(z.words.chunks(2).map(|w| [w[0], w.get(1).copied().unwrap_or(0)]));
    a.clips.push(ClipHeader {
        duration: clip.duration as f32,
        sample_rate: clip.sample_rate,
        sample_count: clip.sample_count,
        track_base,
        value_base,
        encoding: ENCODING_COMPRESSED,
        segment_length: z.segment_length,
        animated: z.animated,
    });
    Ok(())
}

/// Skin joint maps, inverse bind matrices, and the vertices of the meshes bound to each skin.
fn add_skins(a: &mut Arrays, package: &Package) -> Result<Vec<SkinRange>, String> {
    let mut ranges = Vec::with_capacity(package.skins.len());
    for (k, skin) in package.skins.iter().enumerate() {
        let joints = package
            .skeletons
            .get(skin.skeleton as usize)
            .map(|s| s.joint_count())
            .ok_or_else(|| {
                format!(
                    "skin {k} ('{}') names missing skeleton {}",
                    skin.name, skin.skeleton
                )
            })?;
        if skin.joints.len() != skin.inverse_bind.len()
            || skin.joints.iter().any(|&j| j as usize >= joints)
        {
            return Err(format!(
                "skin {k} ('{}') has a joint outside its skeleton or a missing inverse bind matrix",
                skin.name
            ));
        }
        let base = index(a.skin_joints.len(), "palette entry")?;
        a.skin_joints.extend(&skin.joints);
        a.inverse_bind
            .extend(skin.inverse_bind.iter().map(AffineRows::from));
        let vertex_base = index(a.vertices.len(), "vertex")?;
        let mut meshes = Vec::new();
        for (m, mesh) in package
            .meshes
            .iter()
            .enumerate()
            .filter(|(_, m)| m.skin as usize == k)
        {
            let n = mesh.positions.len();
            if mesh.joints.len() != n || mesh.weights.len() != n {
                return Err(format!(
                    "mesh {m} ('{}') has {n} positions but {} joint and {} weight sets",
                    mesh.name,
                    mesh.joints.len(),
                    mesh.weights.len()
                ));
            }
            if mesh
                .joints
                .iter()
                .flatten()
                .any(|&j| j as usize >= skin.joints.len())
            {
                return Err(format!(
                    "mesh {m} ('{}') names a palette entry outside skin {k}",
                    mesh.name
                ));
            }
            let first = index(a.vertices.len(), "vertex")? - vertex_base;
            let has_normals = mesh.normals.len() == n;
            for v in 0..n {
                let normal = if has_normals {
                    mesh.normals[v].extend(1.0)
                } else {
                    glam::Vec4::ZERO
                };
                let j = mesh.joints[v];
                a.vertices.push(Vertex {
                    position: mesh.positions[v].extend(1.0).to_array(),
                    normal: normal.to_array(),
                    joints: [j[0].into(), j[1].into(), j[2].into(), j[3].into()],
                    weights: mesh.weights[v],
                });
            }
            meshes.push((m, first, index(n, "vertex")?));
        }
        ranges.push(SkinRange {
            skeleton: skin.skeleton,
            base,
            len: index(skin.joints.len(), "palette entry")?,
            vertex_base,
            vertex_count: index(a.vertices.len(), "vertex")? - vertex_base,
            meshes,
        });
    }
    Ok(ranges)
}
