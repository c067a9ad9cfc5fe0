//! Resident package data: every resident package in one arena of shared buffers, uploaded when a
//! package is added or replaced and read by every frame. One arena for all packages is what lets
//! one dispatch pose, bound and skin instances of any package: a kind's row (`kinds`) holds
//! where its data lies, and every index below is an arena index.
//!
//! The arena is five storage buffers (docs/gpu.md, "Resident data"):
//! - `tables` (u32): clip headers (`CLIP_WORDS` each, from 0), per skeleton its joints' parents
//!   and depths, per skin its palette entries' joints, per joint the range of its entries in the
//!   palette order and that order, the palette entry of each bounds box, per mask the pool vec4
//!   of its weights, and per compressed clip its decode list (decode.wgsl) and codec stream;
//! - `tracks` (vec4<u32>): per clip and joint, the t, q, s sub-track references (sample.wgsl);
//! - `pool` (vec4<f32>): rest poses (three vec4s per joint), inverse binds (three rows per
//!   entry), bounds boxes (three rows each), mask weights (four per vec4), reference clip samples (one vec4 per sample of an
//!   animated sub-track, t and s in xyz) and the constants of both encodings;
//! - `vertices` (vec4<u32>): three per skinned vertex, grouped by skin (skinning.wgsl);
//! - `decode_table` (u32): per package its clips' bases in the decode cache, then the frame's
//!   decode jobs, the one buffer a frame writes (decode.wgsl).
//!
//! Every index a shader follows is checked here, so a malformed package is refused before any
//! GPU work.

use glam::Vec4;
use throng_cpu_ref::bounds::SkinBounds;
use throng_cpu_ref::codec::layout::{MAX_WORDS, RANGE_WORDS, REBUILT_WORD};
use throng_cpu_ref::codec::{decode_components, segment_count, CompressedClip};
use throng_cpu_ref::{Clip, Package, SubTrackKind, NO_PARENT};
use throng_shaders::prelude::CLIP_WORDS;
use wgpu::util::DeviceExt;

use crate::layout::AffineRows;
use crate::{GpuContext, GpuError};

/// Where one skeleton lives in its package's buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SkeletonRange {
    pub joints: u32,
    pub parent_base: u32,
    pub depth_base: u32,
    pub rest_base: u32,
    pub max_depth: u32,
    /// `tables`: the blocks of LOD levels 1, 2, … (pose.wgsl: retained count, bitset, joint
    /// order; `block` u32 each).
    pub lod_base: u32,
    pub block: u32,
    /// `pool`: the held poses of LOD levels 1, 2, … (three vec4s per joint each).
    pub held_base: u32,
    /// `tables`: the skeleton's curve channels (curves.wgsl; `KindRow::curve_count` and after).
    pub curve_count: u32,
    pub curve_base: u32,
    pub curve_clips: u32,
    pub curve_selections: u32,
}

/// Where one skin lives: its palette tables and the vertices of the meshes it binds.
#[derive(Clone, Debug, PartialEq)]
pub struct SkinRange {
    pub skeleton: u32,
    /// Palette entries.
    pub len: u32,
    pub(crate) joint_base: u32,
    pub(crate) range_base: u32,
    pub(crate) order_base: u32,
    pub(crate) ibm_base: u32,
    pub(crate) vertex_base: u32,
    /// Vertices of every mesh bound to this skin, in mesh order.
    pub vertex_count: u32,
    /// `(mesh index, first vertex within the skin's vertices, vertex count)` per bound mesh.
    pub meshes: Vec<(usize, u32, u32)>,
    /// Triangle indices of those meshes.
    pub index_count: u32,
    /// Per level of detail (0: full detail, then each skeleton LOD level with its meshes'
    /// LODs), the vertices skinned and the triangles drawn.
    pub tiers: Vec<SkinTier>,
    /// Every level's triangle indices, level after level, each into its level's vertices.
    pub indices: Vec<u32>,
    /// The skin's animated bounds (throng-cpu-ref `SkinBounds`): three pool rows per box from
    /// `box_base`, each box's palette entry in `tables` from `entry_base`.
    pub(crate) box_base: u32,
    pub(crate) entry_base: u32,
    pub(crate) boxes: u32,
    /// The skin's morph targets (morph.wgsl): how many, and per target its channel, default
    /// weight and reach (a row of `vertices` each); each level's vertex ranges are its tier's.
    pub morph_count: u32,
    pub(crate) morph_base: u32,
}

/// One level of detail of a skin: the vertex records its mesh LODs use, copied contiguously,
/// and its triangles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinTier {
    /// First vertex record (level 0: the skin's own) and count.
    pub(crate) vertex_base: u32,
    pub vertex_count: u32,
    /// The skin vertex (index into its meshes' vertices, in mesh order) of each of the level's
    /// vertices; empty at level 0, whose vertices are the skin's.
    pub vertices: Vec<u32>,
    /// The level's range of [`SkinRange::indices`].
    pub first_index: u32,
    pub index_count: u32,
    /// How far the raster pass pushes the level's surface out along its skinned normals
    /// (`MeshLod::shell`, the largest of the skin's meshes'; 0 at level 0).
    pub shell: f32,
    /// The next coarser level's triangles over this level's vertices (its range of
    /// [`SkinRange::indices`]; count 0 where there is no coarser level, or one drawing a
    /// vertex this level does not skin): what a member cross-fading between the two levels
    /// draws, skinned at this one (docs/gpu.md, "Mesh LOD cross-fade").
    pub coarser_first_index: u32,
    pub coarser_index_count: u32,
    /// Morph targets (morph.wgsl): the level's vertices a target moves lie in
    /// `morph_first .. morph_end`, whose rows of entry ranges start at `morph_ranges` in `vertices`
    /// (`NO_MORPH`: none).
    pub(crate) morph_ranges: u32,
    pub(crate) morph_first: u32,
    pub(crate) morph_end: u32,
}

/// The arena's buffers.
pub(crate) struct ArenaBuffers {
    pub tables: wgpu::Buffer,
    pub tracks: wgpu::Buffer,
    pub pool: wgpu::Buffer,
    pub vertices: wgpu::Buffer,
    /// Per package, per clip its base in the frame's decode cache or `NO_DECODE` (from the
    /// package's `decode_base`), then the frame's decode jobs, three words each (decode.wgsl):
    /// written by each frame.
    pub decode_table: wgpu::Buffer,
}

/// A package in the arena, with the CPU copy programs are validated against.
pub struct ResidentPackage {
    pub package: Package,
    pub(crate) skeletons: Vec<SkeletonRange>,
    pub skins: Vec<SkinRange>,
    /// `tables`: the package's clip headers.
    pub(crate) clip_base: u32,
    /// `tables`: the first of each mask's pool index.
    pub(crate) mask_base: u32,
    /// The decode table: the package's clips' entries.
    pub(crate) decode_base: u32,
    /// Per clip, where its decode list starts in `tables` (compressed clips; `NO_DECODE`
    /// otherwise): per animated sub-track its pool ranges and whether it is a rotation.
    pub(crate) decode_lists: Vec<u32>,
    /// Bytes of the arena the package occupies.
    pub bytes: u64,
}

/// Every resident package in shared buffers ([`Arena::rebuild`] after each add or replace).
pub(crate) struct Arena {
    pub packages: Vec<ResidentPackage>,
    pub buffers: ArenaBuffers,
    /// Changes with every rebuild (bind groups name the buffers).
    pub generation: u64,
}

/// The flat arrays uploaded for one package.
#[derive(Default)]
struct Arrays {
    tables: Vec<u32>,
    tracks: Vec<[u32; 4]>,
    pool: Vec<[f32; 4]>,
    vertices: Vec<[u32; 4]>,
}

impl Arrays {
    fn table_at(&self) -> Result<u32, String> {
        index(self.tables.len(), "table word")
    }

    fn pool_at(&self) -> Result<u32, String> {
        index(self.pool.len(), "pool vec4")
    }
}

fn index(n: usize, what: &str) -> Result<u32, String> {
    u32::try_from(n)
        .ok()
        .filter(|&i| i < 1 << 30)
        .ok_or_else(|| format!("{what} index {n} does not fit 30 bits"))
}

/// A sub-track reference: `(index << 2) | kind` (sample.wgsl).
fn track_ref(kind: SubTrackKind, index: u32) -> u32 {
    (index << 2) | kind as u32
}

/// The sizes of the arrays, to tell what a package added.
fn sizes(a: &Arrays) -> [usize; 4] {
    [
        a.tables.len(),
        a.tracks.len(),
        a.pool.len(),
        a.vertices.len(),
    ]
}

impl ResidentPackage {
    /// Checks `package` and appends its data to `a`, every index an arena index; `id` names it
    /// in errors and `decode_base` is its first decode table entry.
    fn add(
        a: &mut Arrays,
        id: usize,
        package: Package,
        decode_base: u32,
    ) -> Result<ResidentPackage, GpuError> {
        let bad = |what: String| GpuError::BadPackage { package: id, what };
        let before = sizes(a);
        let clip_base = a.table_at().map_err(bad)?;
        let headers = CLIP_WORDS as usize * package.clips.len();
        a.tables.resize(a.tables.len() + headers, 0);
        let mut skeletons = add_skeletons(a, &package).map_err(bad)?;
        add_curves(a, &package, &mut skeletons).map_err(bad)?;
        let skins = add_skins(a, &package).map_err(bad)?;
        let mask_base = add_masks(a, &package).map_err(bad)?;
        let decode_lists = (package.clips.iter().enumerate())
            .map(|(c, clip)| add_clip(a, clip_base, c, clip, &package))
            .collect::<Result<Vec<u32>, String>>()
            .map_err(bad)?;
        let after = sizes(a);
        let bytes = 4 * (after[0] - before[0]) as u64
            + 16 * (after[1] + after[2] + after[3] - before[1] - before[2] - before[3]) as u64
            + 4 * package.clips.len() as u64;
        Ok(ResidentPackage {
            package,
            skeletons,
            skins,
            clip_base,
            mask_base,
            decode_base,
            decode_lists,
            bytes,
        })
    }

    pub(crate) fn skeleton(&self, s: u32) -> Option<&SkeletonRange> {
        self.skeletons.get(s as usize)
    }
}

impl Arena {
    /// The arena of `packages`, checked and uploaded; a package that fails names its index.
    pub fn build(
        ctx: &GpuContext,
        packages: Vec<Package>,
        generation: u64,
    ) -> Result<Arena, GpuError> {
        let mut a = Arrays::default();
        let mut resident = Vec::with_capacity(packages.len());
        let mut decode_entries = 0u32;
        let count = packages.len();
        for (id, package) in packages.into_iter().enumerate() {
            let clips = package.clips.len();
            resident.push(ResidentPackage::add(&mut a, id, package, decode_entries)?);
            decode_entries = u32::try_from(clips)
                .ok()
                .and_then(|n| decode_entries.checked_add(n))
                .ok_or(GpuError::BadPackage {
                    package: id,
                    what: "more clips than a u32 counts".into(),
                })?;
        }
        let limit = ctx.limits.max_storage_buffer_binding_size;
        let buffer = |what: &'static str,
                      data: &[u8],
                      usage: wgpu::BufferUsages|
         -> Result<wgpu::Buffer, GpuError> {
            let size = data.len() as u64;
            if size > limit {
                return Err(GpuError::ResidentTooLarge {
                    packages: count,
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
            Ok(ctx
                .device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(what),
                    contents,
                    usage,
                }))
        };
        let storage = wgpu::BufferUsages::STORAGE;
        // Every clip's entry, then at most one three-word job per clip.
        let decode_words = 4 * decode_entries as usize;
        let buffers = ArenaBuffers {
            tables: buffer("package tables", bytemuck::cast_slice(&a.tables), storage)?,
            tracks: buffer(
                "sub-track references",
                bytemuck::cast_slice(&a.tracks),
                storage,
            )?,
            pool: buffer("package pool", bytemuck::cast_slice(&a.pool), storage)?,
            vertices: buffer(
                "skinning vertices",
                bytemuck::cast_slice(&a.vertices),
                storage,
            )?,
            decode_table: buffer(
                "decode table",
                bytemuck::cast_slice(&vec![throng_shaders::NO_DECODE; decode_words]),
                storage | wgpu::BufferUsages::COPY_DST,
            )?,
        };
        Ok(Arena {
            packages: resident,
            buffers,
            generation,
        })
    }
}

/// Rest poses into the pool, parents and depths into the tables.
fn add_skeletons(a: &mut Arrays, package: &Package) -> Result<Vec<SkeletonRange>, String> {
    let mut ranges = Vec::with_capacity(package.skeletons.len());
    for (s, skeleton) in package.skeletons.iter().enumerate() {
        let joints = skeleton.joint_count();
        if skeleton.parents.len() != joints || skeleton.depth.len() != joints {
            return Err(format!(
                "skeleton {s} has {} parents and {} depths for {joints} joints",
                skeleton.parents.len(),
                skeleton.depth.len()
            ));
        }
        if let Some(j) = (0..joints)
            .find(|&j| skeleton.parents[j] != NO_PARENT && skeleton.parents[j] as usize >= j)
        {
            return Err(format!(
                "skeleton {s} joint {j} comes before its parent {}",
                skeleton.parents[j]
            ));
        }
        let rest_base = a.pool_at()?;
        for rest in &skeleton.rest {
            a.pool.push(rest.translation.extend(0.0).to_array());
            a.pool.push(rest.rotation.to_array());
            a.pool.push(rest.scale.extend(0.0).to_array());
        }
        let parent_base = a.table_at()?;
        a.tables.extend(&skeleton.parents);
        let depth_base = a.table_at()?;
        a.tables.extend(&skeleton.depth);
        let words = joints.div_ceil(32);
        let (lod_base, held_base) = (a.table_at()?, a.pool_at()?);
        for (l, lod) in skeleton.lods.iter().enumerate() {
            if lod.words().len() != words || lod.pose().len() != joints {
                return Err(format!(
                    "skeleton {s} LOD level {} was made for a skeleton of another size",
                    l + 1
                ));
            }
            a.tables.push(index(lod.joints().len(), "retained joint")?);
            a.tables.extend(lod.words());
            a.tables.extend(lod.joints());
            a.tables
                .extend((0..joints as u32).filter(|&j| !lod.retains(j as usize)));
            for t in lod.pose() {
                a.pool.push(t.translation.extend(0.0).to_array());
                a.pool.push(t.rotation.to_array());
                a.pool.push(t.scale.extend(0.0).to_array());
            }
        }
        ranges.push(SkeletonRange {
            joints: index(joints, "joint")?,
            parent_base,
            depth_base,
            rest_base,
            max_depth: skeleton.depth.iter().copied().max().unwrap_or(0),
            lod_base,
            block: index(1 + words + joints, "LOD block")?,
            held_base,
            ..SkeletonRange::default()
        });
    }
    Ok(ranges)
}

/// Per skeleton with curve channels, into the tables: its channels' schema (default, min and max
/// as f32 bits, the composition), per clip of the package a word per channel (where the clip's
/// track of it starts, or `NO_CURVE_TRACK`), per curve selection a weight per channel (zeros for
/// another skeleton's selection), then the tracks: base and step (f32 bits) and bits per
/// sample, then the packed samples of a compressed track or, with `RAW_CURVE_BITS`, its
/// values' f32 bits (curves.wgsl `curve_sample`). The curves are validated first, so every
/// index the shaders follow holds.
fn add_curves(
    a: &mut Arrays,
    package: &Package,
    skeletons: &mut [SkeletonRange],
) -> Result<(), String> {
    let curves = &package.curves;
    curves
        .validate(&package.clips, package.skeletons.len())
        .map_err(|e| e.to_string())?;
    for (s, range) in skeletons.iter_mut().enumerate() {
        let ids = curves.range(s as u32);
        let count = ids.len();
        if count == 0 {
            continue;
        }
        range.curve_count = index(count, "curve channel")?;
        range.curve_base = a.table_at()?;
        for c in &curves.channels[ids.clone()] {
            let composition = c.composition as u32;
            a.tables.extend([
                c.default.to_bits(),
                c.min.to_bits(),
                c.max.to_bits(),
                composition,
            ]);
        }
        range.curve_clips = a.table_at()?;
        let clip_table = a.tables.len();
        a.tables.resize(
            clip_table + package.clips.len() * count,
            throng_shaders::NO_CURVE_TRACK,
        );
        range.curve_selections = a.table_at()?;
        for selection in &curves.selections {
            let ours = selection.skeleton == s as u32;
            a.tables.extend((0..count).map(|k| {
                let w = if ours { selection.weights[k] } else { 0.0 };
                w.to_bits()
            }));
        }
        for t in curves
            .tracks
            .iter()
            .filter(|t| ids.contains(&(t.channel as usize)))
        {
            let at = a.table_at()?;
            a.tables[clip_table + t.clip as usize * count + (t.channel as usize - ids.start)] = at;
            match &t.quantized {
                Some(q) => {
                    a.tables
                        .extend([q.base.to_bits(), q.step.to_bits(), q.bits]);
                    a.tables.extend(&q.words);
                }
                None => {
                    a.tables
                        .extend([0, 0, throng_cpu_ref::scalar::RAW_CURVE_BITS]);
                    a.tables.extend(t.values.iter().map(|v| v.to_bits()));
                }
            }
        }
    }
    Ok(())
}

/// Per mask its weights (four per pool vec4) and, in the tables, where they start.
fn add_masks(a: &mut Arrays, package: &Package) -> Result<u32, String> {
    let mut starts = Vec::with_capacity(package.masks.len());
    for (m, mask) in package.masks.iter().enumerate() {
        let joints = package
            .skeletons
            .get(mask.skeleton as usize)
            .map(|s| s.joint_count());
        if joints != Some(mask.weights.len())
            || !mask.weights.iter().all(|w| (0.0..=1.0).contains(w))
        {
            return Err(format!(
                "mask {m} ('{}') has {} weights for skeleton {} ({joints:?} joints), or a weight outside [0, 1]",
                mask.name,
                mask.weights.len(),
                mask.skeleton
            ));
        }
        starts.push(a.pool_at()?);
        for four in mask.weights.chunks(4) {
            let mut v = [0.0; 4];
            v[..four.len()].copy_from_slice(four);
            a.pool.push(v);
        }
    }
    let base = a.table_at()?;
    a.tables.extend(starts);
    Ok(base)
}

/// Skin joint maps, palette orders and inverse binds; the vertices of the meshes bound to each
/// skin.
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
        if skin.joints.len() > u16::MAX as usize {
            return Err(format!(
                "skin {k} ('{}') has {} palette entries; vertices index at most 65 535",
                skin.name,
                skin.joints.len()
            ));
        }
        let joint_base = a.table_at()?;
        a.tables.extend(&skin.joints);
        let mut order: Vec<u32> = (0..skin.joints.len() as u32).collect();
        order.sort_by_key(|&e| skin.joints[e as usize]);
        let range_base = a.table_at()?;
        let mut first = 0;
        for j in 0..joints as u32 {
            let count = order[first..]
                .iter()
                .take_while(|&&e| skin.joints[e as usize] == j)
                .count();
            a.tables.extend([first as u32, count as u32]);
            first += count;
        }
        let order_base = a.table_at()?;
        a.tables.extend(order);
        let ibm_base = a.pool_at()?;
        a.pool.extend(
            skin.inverse_bind
                .iter()
                .flat_map(|m| AffineRows::from(m).rows),
        );
        let vertex_base = index(a.vertices.len() / 3, "vertex")?;
        let mut meshes = Vec::new();
        let mut count = 0u32;
        for (m, mesh) in package
            .meshes
            .iter()
            .enumerate()
            .filter(|(_, m)| m.skin as usize == k)
        {
            let n = mesh.positions.len();
            if mesh.joints.len() != n
                || mesh.weights.len() != n
                || !(mesh.normals.is_empty() || mesh.normals.len() == n)
            {
                return Err(format!(
                    "mesh {m} ('{}') has {n} positions but {} joint, {} weight and {} normal sets",
                    mesh.name,
                    mesh.joints.len(),
                    mesh.weights.len(),
                    mesh.normals.len()
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
            for v in 0..n {
                let p = mesh.positions[v];
                let normal = mesh.normals.get(v).copied().unwrap_or(glam::Vec3::ZERO);
                let j = mesh.joints[v].map(u32::from);
                a.vertices.push([
                    p.x.to_bits(),
                    p.y.to_bits(),
                    p.z.to_bits(),
                    j[0] | (j[1] << 16),
                ]);
                a.vertices.push([
                    normal.x.to_bits(),
                    normal.y.to_bits(),
                    normal.z.to_bits(),
                    j[2] | (j[3] << 16),
                ]);
                a.vertices.push(mesh.weights[v].map(f32::to_bits));
            }
            meshes.push((m, count, index(n, "vertex")?));
            count += n as u32;
        }
        let bounds = SkinBounds::for_skin(package, k);
        let levels = package.skeletons[skin.skeleton as usize].lods.len();
        let (mut tiers, indices) = add_tiers(a, package, &meshes, (vertex_base, count), levels)?;
        let index_count = tiers[0].index_count;
        let box_base = a.pool_at()?;
        a.pool
            .extend(bounds.boxes.iter().flat_map(|m| AffineRows::from(m).rows));
        let entry_base = a.table_at()?;
        a.tables.extend(&bounds.entries);
        let morph_base = add_morphs(a, package, &meshes, &mut tiers, &bounds)?;
        ranges.push(SkinRange {
            skeleton: skin.skeleton,
            len: index(skin.joints.len(), "palette entry")?,
            joint_base,
            range_base,
            order_base,
            ibm_base,
            vertex_base,
            vertex_count: count,
            meshes,
            box_base,
            entry_base,
            boxes: bounds.entries.len() as u32,
            morph_count: index(bounds.targets.len(), "morph target")?,
            morph_base,
            index_count,
            tiers,
            indices,
        });
    }
    Ok(ranges)
}

/// The levels of detail of a skin whose `meshes` ([`SkinRange::meshes`]) have `vertices`
/// (first record, count) in `a`: level 0 draws every triangle of the skin's vertices; level
/// `l ≥ 1` copies the records its meshes' LOD triangles use (`SkinnedMesh::level_indices`) after
/// the ones already there, in skin vertex order (a skin whose meshes have no LODs draws level 0
/// at every level). Returns the levels and their indices.
/// A skin's morph targets (morph.wgsl), rows of the `vertices` array: per target of its meshes
/// (`bounds.targets`, mesh order then glTF order) its channel or `NO_CHANNEL`, default weight
/// and reach; per skin vertex its entries (position delta and target, normal delta), in target
/// order; per level (`tiers`, whose morph fields it sets) the span of its vertices with entries
/// and a row per vertex of it with its entries' first row and count. Returns where the targets
/// lie. Pads the array to whole vertex records (three rows) after.
fn add_morphs(
    a: &mut Arrays,
    package: &Package,
    meshes: &[(usize, u32, u32)],
    tiers: &mut [SkinTier],
    bounds: &SkinBounds,
) -> Result<u32, String> {
    let row_at = |a: &Arrays| index(a.vertices.len(), "morph row");
    let morph_base = row_at(a)?;
    for (w, reach) in &bounds.targets {
        let channel = w.channel.unwrap_or(throng_shaders::NO_CHANNEL);
        (a.vertices).push([channel, w.default.to_bits(), reach.to_bits(), 0]);
    }
    // Per skin vertex, its (target, position delta, normal delta) in target order.
    let count: usize = meshes.iter().map(|&(_, _, n)| n as usize).sum();
    let mut entries: Vec<Vec<(u32, glam::Vec3, glam::Vec3)>> = vec![Vec::new(); count];
    let mut target = 0u32;
    for &(m, first, n) in meshes {
        let mesh = &package.meshes[m];
        for (t, tg) in mesh.targets.iter().enumerate() {
            let bad = |what: &str| format!("mesh {m} ('{}') morph target {t}: {what}", mesh.name);
            if tg.positions.len() != tg.vertices.len()
                || !(tg.normals.is_empty() || tg.normals.len() == tg.vertices.len())
            {
                return Err(bad("delta and vertex counts differ"));
            }
            let weight = bounds.targets.get(target as usize).map(|(w, _)| *w);
            // A target no channel weighs and whose default is 0 never moves a vertex.
            let moves = weight.is_some_and(|w| w.channel.is_some() || w.default != 0.0);
            for (k, (&v, &d)) in tg.vertices.iter().zip(&tg.positions).enumerate() {
                if v >= n {
                    return Err(bad(&format!("vertex {v} of {n}")));
                }
                let dn = tg.normals.get(k).copied().unwrap_or(glam::Vec3::ZERO);
                if moves {
                    entries[(first + v) as usize].push((target, d, dn));
                }
            }
            target += 1;
        }
    }
    let bits = |v: glam::Vec3| v.to_array().map(f32::to_bits);
    let mut ranges = Vec::with_capacity(count);
    for list in &entries {
        ranges.push((row_at(a)?, list.len() as u32));
        for &(t, d, dn) in list {
            let ([x, y, z], [nx, ny, nz]) = (bits(d), bits(dn));
            a.vertices.extend([[x, y, z, t], [nx, ny, nz, 0]]);
        }
    }
    for tier in tiers.iter_mut() {
        // The level's vertex k is skin vertex `vertices[k]` (level 0: k itself).
        let skin_vertex = |k: usize| tier.vertices.get(k).map_or(k, |&v| v as usize);
        let n = tier.vertex_count as usize;
        let moved = |k: &usize| ranges[skin_vertex(*k)].1 > 0;
        let (Some(first), Some(last)) = ((0..n).find(moved), (0..n).rev().find(moved)) else {
            tier.morph_ranges = throng_shaders::NO_MORPH;
            continue;
        };
        tier.morph_ranges = row_at(a)?;
        tier.morph_first = first as u32;
        tier.morph_end = last as u32 + 1;
        for k in first..=last {
            let (f, c) = ranges[skin_vertex(k)];
            a.vertices.push([f, c, 0, 0]);
        }
    }
    // Vertex records are three rows each, numbered from the array's start.
    let padded = a.vertices.len().next_multiple_of(3);
    a.vertices.resize(padded, [0; 4]);
    Ok(morph_base)
}

fn add_tiers(
    a: &mut Arrays,
    package: &Package,
    meshes: &[(usize, u32, u32)],
    (vertex_base, count): (u32, u32),
    levels: usize,
) -> Result<(Vec<SkinTier>, Vec<u32>), String> {
    let mut indices = Vec::new();
    let mut tiers: Vec<SkinTier> = Vec::with_capacity(1 + levels);
    let mut local = vec![u32::MAX; count as usize];
    // Each level's triangle corners as skin vertices (for the coarser ranges below).
    let mut skin_corners: Vec<Vec<u32>> = Vec::with_capacity(1 + levels);
    for level in 0..=levels {
        let first_index = index(indices.len(), "triangle index")?;
        let unreduced = meshes
            .iter()
            .all(|&(m, _, _)| package.meshes[m].lods.is_empty());
        if level > 0 && unreduced {
            tiers.push(tiers[0].clone());
            skin_corners.push(Vec::new());
            continue;
        }
        // Skin vertices this level draws, ascending.
        let mut used = Vec::new();
        for &(m, first, n) in meshes {
            let mesh = &package.meshes[m];
            let list = mesh.level_indices(level);
            if !list.len().is_multiple_of(3) {
                return Err(format!(
                    "mesh {m} ('{}') has {} indices at level {level}, not a whole number of triangles",
                    mesh.name,
                    list.len()
                ));
            }
            if let Some(i) = list.iter().find(|&&i| i >= n) {
                return Err(format!(
                    "mesh {m} ('{}') has index {i} at level {level} but {n} vertices",
                    mesh.name
                ));
            }
            used.extend(list.iter().map(|&i| first + i));
        }
        skin_corners.push(used.clone());
        let tier = if level == 0 {
            indices.extend(&used);
            SkinTier {
                vertex_base,
                vertex_count: count,
                vertices: Vec::new(),
                first_index,
                index_count: index(used.len(), "triangle index")?,
                ..SkinTier::default()
            }
        } else {
            let corners = used.clone();
            used.sort_unstable();
            used.dedup();
            let base = index(a.vertices.len() / 3, "vertex")?;
            for (k, &v) in used.iter().enumerate() {
                local[v as usize] = k as u32;
                let at = 3 * (vertex_base + v) as usize;
                a.vertices.extend_from_within(at..at + 3);
            }
            indices.extend(corners.iter().map(|&v| local[v as usize]));
            SkinTier {
                vertex_base: base,
                vertex_count: index(used.len(), "vertex")?,
                vertices: used,
                first_index,
                index_count: index(corners.len(), "triangle index")?,
                shell: (meshes.iter())
                    .map(|&(m, _, _)| package.meshes[m].level_shell(level))
                    .fold(0.0, f32::max),
                ..SkinTier::default()
            }
        };
        tiers.push(tier);
    }
    for level in 0..levels {
        // Level + 1's corners in this level's numbering: the skin's at level 0, else the
        // position in the level's ascending vertex list.
        let fine = &tiers[level].vertices;
        let coarser: Option<Vec<u32>> = skin_corners[level + 1]
            .iter()
            .map(|&v| match level {
                0 => Some(v),
                _ => fine.binary_search(&v).ok().map(|k| k as u32),
            })
            .collect();
        let Some(coarser) = coarser.filter(|c| !c.is_empty()) else {
            continue;
        };
        tiers[level].coarser_first_index = index(indices.len(), "triangle index")?;
        tiers[level].coarser_index_count = index(coarser.len(), "triangle index")?;
        indices.extend(coarser);
    }
    Ok((tiers, indices))
}

/// Clip `c`'s header, sub-track references and samples; every sub-track's values must lie
/// inside the clip.
/// Adds clip `c`'s header, sub-track references and samples; returns where in `tables` its
/// decode list starts (compressed: per animated sub-track `a`, `(ranges << 1) | rotation`, the
/// decode pass's map from `a` to its ranges), or `NO_DECODE` (a reference clip, or one whose
/// animated sub-tracks are not numbered in sub-track order).
fn add_clip(
    a: &mut Arrays,
    clip_base: u32,
    c: usize,
    clip: &Clip,
    package: &Package,
) -> Result<u32, String> {
    let bad = |what: String| format!("clip {c} ('{}'): {what}", clip.name);
    if !(clip.sample_rate.is_finite() && clip.sample_rate > 0.0) || clip.sample_count == 0 {
        return Err(bad(format!(
            "sample rate {} and {} samples",
            clip.sample_rate, clip.sample_count
        )));
    }
    let skeleton = package
        .skeletons
        .get(clip.skeleton as usize)
        .ok_or_else(|| bad(format!("names missing skeleton {}", clip.skeleton)))?;
    let joints = skeleton.joint_count();
    if clip.sub_tracks.len() != 3 * joints {
        return Err(bad(format!(
            "{} sub-tracks for {joints} joints",
            clip.sub_tracks.len()
        )));
    }
    let track_base = index(a.tracks.len(), "sub-track")?;
    let mut words_base = 0;
    let mut decode_list = throng_shaders::NO_DECODE;
    let (mut segment_length, mut animated) = (0, 0);
    let mut refs = Vec::with_capacity(clip.sub_tracks.len());
    // Compressed: per joint, the index among the clip's animated sub-tracks of its first.
    let mut firsts = Vec::new();
    match &clip.compressed {
        None => {
            for (t, st) in clip.sub_tracks.iter().enumerate() {
                let width = if t % 3 == 1 { 4 } else { 3 };
                let count = match st.kind {
                    SubTrackKind::Default => 0,
                    SubTrackKind::Constant => 1,
                    SubTrackKind::Animated => clip.sample_count as usize,
                };
                let start = st.offset as usize;
                let values = clip
                    .values
                    .get(start..start + width * count)
                    .ok_or_else(|| {
                        bad(format!(
                            "sub-track {t} reads values {start}..{} of {}",
                            start + width * count,
                            clip.values.len()
                        ))
                    })?;
                let at = a.pool_at()?;
                a.pool.extend(values.chunks(width).map(|v| {
                    let mut x = [0.0; 4];
                    x[..width].copy_from_slice(v);
                    x
                }));
                refs.push(track_ref(st.kind, at));
            }
        }
        Some(z) => {
            check_compressed(z, clip).map_err(bad)?;
            let mut list = vec![0; z.animated as usize];
            // The decode cache holds a clip's animated sub-tracks in sub-track order, each joint's
            // from the index of its first (the fourth word of its references): true of every
            // cooked clip; a clip otherwise is never decoded into the cache.
            let mut next = 0;
            let mut ordered = true;
            for (t, st) in clip.sub_tracks.iter().enumerate() {
                if t % 3 == 0 {
                    firsts.push(next);
                }
                let r = match st.kind {
                    SubTrackKind::Default => track_ref(st.kind, 0),
                    SubTrackKind::Animated => {
                        let at = a.pool_at()?;
                        a.pool.extend(codec_ranges(z, st.offset));
                        // `check_compressed`: the offset is below `animated`.
                        list[st.offset as usize] = (at << 1) | u32::from(t % 3 == 1);
                        ordered &= st.offset == next;
                        next += 1;
                        track_ref(st.kind, at)
                    }
                    SubTrackKind::Constant => {
                        let width = if t % 3 == 1 { 4 } else { 3 };
                        let start = st.offset as usize;
                        let words = z.words.get(start..start + width).ok_or_else(|| {
                            bad(format!(
                                "sub-track {t} reads past its {} words",
                                z.words.len()
                            ))
                        })?;
                        let mut v = Vec4::ZERO.to_array();
                        for (o, w) in v.iter_mut().zip(words) {
                            *o = f32::from_bits(*w);
                        }
                        let at = a.pool_at()?;
                        a.pool.push(v);
                        track_ref(st.kind, at)
                    }
                };
                refs.push(r);
            }
            if ordered {
                decode_list = a.table_at()?;
                a.tables.extend(&list);
            }
            words_base = a.table_at()?;
            a.tables.extend(&z.words);
            // The shader reads the word after a field's first whatever the field's width
            // (codec.wgsl `codec_bits`): a zero word keeps that read inside the stream.
            a.tables.push(0);
            index(a.tables.len(), "codec word")?;
            (segment_length, animated) = (z.segment_length, z.animated);
        }
    }
    a.tracks.extend(
        (refs
            .chunks(3)
            .zip(firsts.iter().chain(std::iter::repeat(&0))))
        .map(|(r, &first)| [r[0], r[1], r[2], first]),
    );
    let header = [
        (clip.duration as f32).to_bits(),
        clip.sample_rate.to_bits(),
        clip.sample_count,
        track_base,
        words_base,
        segment_length,
        animated,
        clip.encoding(),
    ];
    let at = clip_base as usize + CLIP_WORDS as usize * c;
    a.tables[at..at + CLIP_WORDS as usize].copy_from_slice(&header);
    Ok(decode_list)
}

/// Animated sub-track `a`'s range words as the two pool records the shader reads instead of
/// seven scattered words: `(base x, y, z, a)` and `(step x, y, z, rebuilt component)`, the
/// integers as f32 bits. Its range words were checked with the clip ([`check_compressed`]).
fn codec_ranges(z: &CompressedClip, a: u32) -> [[f32; 4]; 2] {
    let word = |k: usize| {
        f32::from_bits(
            z.words
                .get(a as usize * RANGE_WORDS + k)
                .copied()
                .unwrap_or(0),
        )
    };
    let index = f32::from_bits(a);
    [
        [word(0), word(2), word(4), index],
        [word(1), word(3), word(5), word(REBUILT_WORD)],
    ]
}

/// Every read the shader makes of a compressed clip is checked first by decoding every sample
/// on the CPU (the shader follows the same offsets), and stream bit positions fit 32 bits.
fn check_compressed(z: &CompressedClip, clip: &Clip) -> Result<(), String> {
    if z.words.len() as u64 > MAX_WORDS
        || segment_count(clip.sample_count, z.segment_length).is_none()
    {
        return Err(format!(
            "compressed: {} words, segment length {}",
            z.words.len(),
            z.segment_length
        ));
    }
    for (t, st) in clip.sub_tracks.iter().enumerate() {
        let readable = st.kind != SubTrackKind::Animated
            || (st.offset < z.animated
                && (0..clip.sample_count).all(|i| decode_components(z, st.offset, i).is_some()));
        if !readable {
            return Err(format!(
                "compressed: sub-track {t} reads past its {} words",
                z.words.len()
            ));
        }
    }
    Ok(())
}
