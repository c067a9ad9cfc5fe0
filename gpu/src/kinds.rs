//! Kinds of instance: a skeleton of a resident package, with or without one of its skins
//! (docs/gpu.md, "Kinds").
//!
//! Every pass reads an instance's kind row (`KindRow`: where its skeleton, skin, clips and masks
//! lie in the arena) instead of per-dispatch parameters, so one dispatch covers instances of any
//! skeletons, skins and packages: the count of dispatches does not grow with the character types.
//! A skinned kind also has one skinning *unit* per level of detail of its skin (`UnitRow`: the
//! level's vertices and triangles); the skinned pool is grouped by unit, and each unit is drawn
//! with its own triangles.
//!
//! Kinds are registered the first time an instance names them and keep their index; their rows
//! are rebuilt when the arena is (a package added or replaced moves every package's data).

use std::collections::HashMap;

use throng_shaders::prelude::{SKIN_VERTICES_PER_THREAD, WORKGROUP};
use throng_shaders::{KindRow, UnitRow, KIND_MASK, NO_UNIT};

use crate::resident::{Arena, ResidentPackage};
use crate::GpuError;

/// What makes a kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KindKey {
    pub package: usize,
    pub skeleton: u32,
    pub skin: Option<u32>,
}

/// The registered kinds, their rows and units, and their buffers.
pub(crate) struct Kinds {
    keys: Vec<KindKey>,
    index: HashMap<KindKey, u32>,
    pub rows: Vec<KindRow>,
    pub units: Vec<UnitRow>,
    /// Most kinds (the frame buffers are sized for their units).
    capacity: u32,
    pub buffer: wgpu::Buffer,
    pub unit_buffer: wgpu::Buffer,
    uploaded: bool,
}

fn storage(device: &wgpu::Device, label: &str, bytes: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(16),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Skinning workgroups per instance for `vertices` vertices.
pub(crate) fn blocks(vertices: u32) -> u32 {
    vertices.div_ceil(WORKGROUP * SKIN_VERTICES_PER_THREAD)
}

impl Kinds {
    /// Room for `capacity` kinds (each with up to `LOD_TIERS` units).
    pub fn new(device: &wgpu::Device, capacity: u32) -> Kinds {
        let tiers = u64::from(throng_shaders::prelude::LOD_TIERS);
        let capacity = capacity.clamp(1, KIND_MASK);
        let rows = std::mem::size_of::<KindRow>() as u64 * u64::from(capacity);
        let units = std::mem::size_of::<UnitRow>() as u64 * u64::from(capacity) * tiers;
        Kinds {
            keys: Vec::new(),
            index: HashMap::new(),
            rows: Vec::new(),
            units: Vec::new(),
            capacity,
            buffer: storage(device, "kinds", rows),
            unit_buffer: storage(device, "skinning units", units),
            uploaded: true,
        }
    }

    /// The index of `key`'s kind, registered now if new (its package and skin checked against
    /// `arena`); a full table is an error.
    pub fn id(&mut self, key: KindKey, arena: &Arena) -> Result<u32, GpuError> {
        if let Some(&k) = self.index.get(&key) {
            return Ok(k);
        }
        if self.keys.len() as u32 >= self.capacity {
            return Err(GpuError::Capacity {
                what: "kinds of instance (package, skeleton and skin combinations)",
                needed: self.keys.len() as u64 + 1,
                capacity: self.capacity.into(),
            });
        }
        let package = arena
            .packages
            .get(key.package)
            .ok_or(GpuError::BadPackage {
                package: key.package,
                what: "is not resident".into(),
            })?;
        let k = self.keys.len() as u32;
        let (row, units) = kind_row(k, key, package, self.units.len() as u32)?;
        self.keys.push(key);
        self.index.insert(key, k);
        self.rows.push(row);
        self.units.extend(units);
        self.uploaded = false;
        Ok(k)
    }

    /// Rebuilds every row from a new arena (a package was added or replaced); a kind whose
    /// skeleton or skin the new generation lacks becomes a kind without a skin or joints, so
    /// frames that still name it are refused by validation, not read out of bounds.
    pub fn rebuild(&mut self, arena: &Arena) {
        self.rows.clear();
        self.units.clear();
        for (k, &key) in self.keys.iter().enumerate() {
            let row = arena
                .packages
                .get(key.package)
                .and_then(|p| kind_row(k as u32, key, p, self.units.len() as u32).ok());
            let (row, units) = row.unwrap_or_default();
            self.rows.push(row);
            self.units.extend(units);
        }
        self.uploaded = false;
    }

    /// The index of kind `key`, if registered.
    pub fn find(&self, key: &KindKey) -> Option<u32> {
        self.index.get(key).copied()
    }

    pub fn key(&self, kind: u32) -> Option<KindKey> {
        self.keys.get(kind as usize).copied()
    }

    /// Units of every registered kind (the partition pass's workgroups).
    pub fn unit_count(&self) -> u32 {
        self.units.len() as u32
    }

    /// Most units the frame buffers are sized for.
    pub fn unit_capacity(capacity: u32) -> u32 {
        capacity.max(1) * throng_shaders::prelude::LOD_TIERS
    }

    /// Writes rows registered or rebuilt since the last upload.
    pub fn upload(&mut self, queue: &wgpu::Queue) -> u64 {
        if self.uploaded {
            return 0;
        }
        self.uploaded = true;
        let rows: &[u8] = bytemuck::cast_slice(&self.rows);
        let units: &[u8] = bytemuck::cast_slice(&self.units);
        if !rows.is_empty() {
            queue.write_buffer(&self.buffer, 0, rows);
        }
        if !units.is_empty() {
            queue.write_buffer(&self.unit_buffer, 0, units);
        }
        (rows.len() + units.len()) as u64
    }
}

/// Kind `k`'s row and units (numbered from `unit_base`) over `package`.
fn kind_row(
    k: u32,
    key: KindKey,
    package: &ResidentPackage,
    unit_base: u32,
) -> Result<(KindRow, Vec<UnitRow>), GpuError> {
    let bad = |what: String| GpuError::BadPackage {
        package: key.package,
        what,
    };
    let sk = package
        .skeleton(key.skeleton)
        .copied()
        .ok_or_else(|| bad(format!("has no skeleton {}", key.skeleton)))?;
    let mut row = KindRow {
        joint_count: sk.joints,
        clip_base: package.clip_base,
        parent_base: sk.parent_base,
        depth_base: sk.depth_base,
        rest_base: sk.rest_base,
        mask_base: package.mask_base,
        max_depth: sk.max_depth,
        lod_base: sk.lod_base,
        lod_block: sk.block,
        held_base: sk.held_base,
        decode_base: package.decode_base,
        unit_base: NO_UNIT,
        curve_count: sk.curve_count,
        curve_base: sk.curve_base,
        curve_clips: sk.curve_clips,
        curve_selections: sk.curve_selections,
        ..KindRow::default()
    };
    let Some(s) = key.skin else {
        return Ok((row, Vec::new()));
    };
    let skin = package
        .skins
        .get(s as usize)
        .filter(|skin| skin.skeleton == key.skeleton)
        .ok_or_else(|| bad(format!("has no skin {s} of skeleton {}", key.skeleton)))?;
    row.skin_len = skin.len;
    row.skin_joint_base = skin.joint_base;
    row.skin_range_base = skin.range_base;
    row.skin_order_base = skin.order_base;
    row.ibm_base = skin.ibm_base;
    row.box_base = skin.box_base;
    row.entry_base = skin.entry_base;
    row.boxes = skin.boxes;
    row.morph_count = skin.morph_count;
    row.morph_base = skin.morph_base;
    row.unit_base = unit_base;
    row.tiers = skin.tiers.len() as u32;
    let units = (skin.tiers.iter().enumerate())
        .map(|(t, tier)| UnitRow {
            kind: k,
            tier: t as u32,
            vertex_base: tier.vertex_base,
            vertex_count: tier.vertex_count,
            blocks: blocks(tier.vertex_count),
            index_count: tier.index_count,
            first_index: tier.first_index,
            skin_len: skin.len,
            morph_ranges: tier.morph_ranges,
            morph_first: tier.morph_first,
            morph_end: tier.morph_end,
            morph_blocks: match tier.morph_ranges {
                throng_shaders::NO_MORPH => 0,
                _ => blocks(tier.morph_end - tier.morph_first),
            },
            morph_count: skin.morph_count,
            morph_base: skin.morph_base,
            coarser_index_count: tier.coarser_index_count,
            coarser_first_index: tier.coarser_first_index,
        })
        .collect();
    Ok((row, units))
}
