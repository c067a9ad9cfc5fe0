//! The GPU side of retained instances (throng-cpu-ref `retained`; docs/gpu.md, "Retained
//! instances"): what stays resident from tick to tick, and what goes up when.
//!
//! Resident per slot: its row (program shape, values offset, the ticks its program and its
//! placement last changed) and its record template (its program's record as set), both in
//! `statics`; the value arenas and placements of the last two ticks (`values`,
//! `placements_in`, by tick parity). What goes up:
//! - per tick, the tick's value arena and placements, each one contiguous write (and the tick
//!   before's too when the runtime missed a tick);
//! - per tick, a patch per instance whose program's static part changed (patch.wgsl);
//! - when a level, show, hero or kind changed, every slot's kind word;
//! - per frame, the bin table (a row per program shape) and hero palettes.
//!
//! A frame's records are written by the present pass on the GPU (present.wgsl): nothing per
//! instance is uploaded between ticks.

use throng_cpu_ref::frame::HIDDEN_LEVEL;
use throng_cpu_ref::retained::{look, Instances};
use throng_cpu_ref::Program;
use throng_shaders::{kind_word, write_record, BinRow, HERO_BIT, KEEP_BIT, NO_KIND, NO_SHAPE};

use crate::kinds::{KindKey, Kinds};
use crate::plan::{package_bit, BatchSlots, PoseDispatch, PosePath};
use crate::resident::Arena;
use crate::shapes::Shapes;
use crate::{GpuContext, GpuError};

/// The retained mirror's GPU buffers.
pub(crate) struct RetainedBuffers {
    /// Per slot its row and record template (`1 + record vec4s` vec4<u32>).
    pub statics: wgpu::Buffer,
    /// The value arenas of the two last ticks: tick `t` from `(t % 2) · value_capacity`.
    pub values: wgpu::Buffer,
    pub value_capacity: u32,
    /// Two vec4<f32> per slot per tick, tick `t` from vec4 `(t % 2) · 2 · slot_capacity`.
    pub placements: wgpu::Buffer,
    pub slot_capacity: u32,
    /// Per shape its `BinRow`, and its record counter.
    pub bins: wgpu::Buffer,
    pub fill: wgpu::Buffer,
    pub shape_capacity: u32,
    /// The tick's patches.
    pub patches: wgpu::Buffer,
    pub patch_capacity: u64,
    /// Changes when a buffer is made anew.
    pub generation: u64,
}

fn storage(device: &wgpu::Device, label: &str, bytes: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(16).next_multiple_of(16),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Per program shape, this frame's posed instances and what its dispatch needs to know.
#[derive(Clone, Copy, Debug, Default)]
struct Bin {
    count: u32,
    joints: u32,
    max_depth: u32,
    packages: u64,
    skinned: bool,
}

/// The runtime's mirror of an [`Instances`] store.
pub(crate) struct Retained {
    pub buffers: Option<RetainedBuffers>,
    /// Record vec4s per slot.
    record_vec4s: u32,
    /// Per slot its shape and kind (GPU ids), as of the last sync.
    shapes_of: Vec<u32>,
    kinds_of: Vec<u32>,
    /// The store's tick and shown generation last mirrored; `None` before the first sync.
    synced: Option<(u64, u64)>,
    /// Per slot its kind word (kind, level, keep and hero bits, or `NO_KIND`).
    pub slot_kinds: Vec<u32>,
    bins: Vec<Bin>,
    /// The tick's patches (a head per patch, its slot and where its vec4s start and how
    /// many, then every patch's vec4s), the frame's bin rows, a record.
    patches: Vec<[u32; 4]>,
    patch_data: Vec<[u32; 4]>,
    pub bin_rows: Vec<BinRow>,
    record: Vec<u32>,
    /// The frame's batches (runs of consecutive shown slots of one kind) and hero slots, as
    /// of the last sync.
    pub batches: Vec<BatchSlots>,
    pub heroes: Vec<u32>,
    /// What the next upload writes: kind words, values and placements (and the tick before's).
    pub upload_kinds: bool,
    upload_values: Vec<(u64, bool)>,
    /// Motion vectors: slots whose placement jumped at the synced tick (reset by the next
    /// frame), each slot's kind word of the last frame, and this frame's reset flags.
    jumped: Vec<u32>,
    last_words: Vec<u32>,
    resets: Vec<u32>,
}

impl Retained {
    pub fn new(record_vec4s: u32) -> Retained {
        Retained {
            buffers: None,
            record_vec4s,
            shapes_of: Vec::new(),
            kinds_of: Vec::new(),
            synced: None,
            slot_kinds: Vec::new(),
            bins: Vec::new(),
            patches: Vec::new(),
            patch_data: Vec::new(),
            bin_rows: Vec::new(),
            record: Vec::new(),
            batches: Vec::new(),
            heroes: Vec::new(),
            upload_kinds: false,
            upload_values: Vec::new(),
            jumped: Vec::new(),
            last_words: Vec::new(),
            resets: Vec::new(),
        }
    }

    /// Makes the next sync mirror every slot again, as if it had never seen the store: a
    /// package was replaced, and a slot's shape depends on its package's clip encodings, not
    /// on its program alone (a re-cook in another encoding changes no program).
    pub fn resync(&mut self) {
        self.synced = None;
    }

    /// Words of a slot's block in `statics` (its row and record template), in vec4s.
    pub fn block(&self) -> u32 {
        1 + self.record_vec4s
    }

    /// Brings the mirror up to `store`: for a new tick, each changed slot's shape, kind and
    /// patch and the tick's uploads; for a new tick or shown generation, every slot's kind word
    /// and the bins. Registers kinds and shapes as it meets them.
    pub fn sync(
        &mut self,
        store: &Instances,
        arena: &Arena,
        kinds: &mut Kinds,
        shapes: &mut Shapes,
    ) -> Result<(), GpuError> {
        let (tick, shown) = (store.tick(), store.shown_generation());
        let new_tick = self.synced.is_none_or(|(t, _)| t != tick);
        if self.synced == Some((tick, shown)) {
            return Ok(());
        }
        let slots = store.slots() as usize;
        self.shapes_of.resize(slots, NO_SHAPE);
        self.kinds_of.resize(slots, NO_KIND);
        if new_tick {
            // A full re-mirror when the runtime never saw the store, else the changed slots.
            let all: Vec<u32>;
            let changed = match self.synced {
                None => {
                    all = (0..slots as u32).collect();
                    &all[..]
                }
                Some(_) => store.changed(),
            };
            for &slot in changed {
                self.mirror(store, slot, arena, kinds, shapes)?;
            }
            let skipped = self.synced.is_none_or(|(t, _)| t + 1 != tick);
            self.upload_values.clear();
            if skipped && tick > 1 {
                self.upload_values.push((tick - 1, true));
            }
            self.upload_values.push((tick, false));
        }
        self.recount(store, arena, kinds);
        self.synced = Some((tick, shown));
        Ok(())
    }

    /// Slot `slot`'s shape, kind and patch from `store`.
    fn mirror(
        &mut self,
        store: &Instances,
        slot: u32,
        arena: &Arena,
        kinds: &mut Kinds,
        shapes: &mut Shapes,
    ) -> Result<(), GpuError> {
        let i = slot as usize;
        self.shapes_of[i] = NO_SHAPE;
        self.kinds_of[i] = NO_KIND;
        let Some(view) = store.view(slot) else {
            return Ok(());
        };
        let key = KindKey {
            package: view.kind.package.0,
            skeleton: view.kind.skeleton,
            skin: view.kind.skin,
        };
        let kind = kinds.id(key, arena)?;
        self.kinds_of[i] = kind;
        let shape = match view.program {
            Some(program) => shapes.id(program, &arena.packages[key.package].package, None),
            None => NO_SHAPE,
        };
        self.shapes_of[i] = shape;
        let tick = store.tick() as u32;
        let program_tick = if view.fresh_program {
            tick
        } else {
            tick.wrapping_sub(1)
        };
        let placement_tick = if view.fresh_placement {
            tick
        } else {
            tick.wrapping_sub(1)
        };
        if view.fresh_placement {
            self.jumped.push(slot);
        }
        let row = [shape, view.offset, program_tick, placement_tick];
        self.patch(slot, row, view.program, kind);
        Ok(())
    }

    /// Queues slot `slot`'s row and record template (none without a program: its row says it
    /// has no shape).
    fn patch(&mut self, slot: u32, row: [u32; 4], program: Option<&Program>, kind: u32) {
        let vec4s = program.map_or(0, |p| {
            throng_shaders::Shape::record_words_of(p)
                .div_ceil(4)
                .min(self.record_vec4s)
        });
        self.record.clear();
        self.record.resize(4 * vec4s as usize, 0);
        if let Some(program) = program {
            write_record(program, slot, kind_word(kind, 0), &mut self.record);
        }
        let at = self.patch_data.len() as u32;
        self.patches.push([slot, at, 1 + vec4s, 0]);
        self.patch_data.push(row);
        let record: &[[u32; 4]] = bytemuck::cast_slice(&self.record);
        self.patch_data.extend_from_slice(record);
    }

    /// This frame's motion resets by slot (throng-cpu-ref `motion`'s rules): a slot resets
    /// when it first shows, when its kind or skeleton LOD level changes (a kept pose keeps its
    /// level), and on the first frame after its placement jumped.
    pub fn motion_resets(&mut self) -> &[u32] {
        let words = &self.slot_kinds;
        self.last_words.resize(words.len(), NO_KIND);
        self.resets.clear();
        let level = |w: u32| {
            if w == NO_KIND {
                w
            } else {
                w & !(KEEP_BIT | HERO_BIT)
            }
        };
        (self.resets).extend(
            (words.iter().zip(&self.last_words))
                .map(|(&now, &was)| u32::from(was == NO_KIND || level(now) != level(was))),
        );
        for &slot in &self.jumped {
            if let Some(r) = self.resets.get_mut(slot as usize) {
                *r = 1;
            }
        }
        self.jumped.clear();
        self.last_words.copy_from_slice(words);
        &self.resets
    }

    /// Patches of the tick not uploaded yet.
    pub fn patch_count(&self) -> u32 {
        self.patches.len() as u32
    }

    /// The frame that uploaded and applied the tick's patches was submitted.
    pub fn patched(&mut self) {
        self.patches.clear();
        self.patch_data.clear();
    }

    /// Every slot's kind word, the bins' counts, the batches and the heroes, from the store's
    /// look words (one word a slot).
    fn recount(&mut self, store: &Instances, arena: &Arena, kinds: &Kinds) {
        let looks = store.looks();
        let slots = looks.len();
        self.slot_kinds.resize(slots, NO_KIND);
        self.bins.iter_mut().for_each(|b| *b = Bin::default());
        self.batches.clear();
        self.heroes.clear();
        let mut changed = false;
        for (slot, &l) in looks.iter().enumerate() {
            let kind = self.kinds_of[slot];
            let shown = l & look::SHOWN != 0 && kind != NO_KIND;
            let word = if shown {
                let hidden = l & look::HIDDEN != 0;
                let level = if hidden {
                    HIDDEN_LEVEL
                } else {
                    (l & look::LEVEL) as u8
                };
                let mut w = kind_word(kind, level);
                if l & look::KEEP != 0 {
                    w |= KEEP_BIT;
                }
                if l & look::HERO != 0 {
                    w |= HERO_BIT;
                }
                w
            } else {
                NO_KIND
            };
            changed |= self.slot_kinds[slot] != word;
            self.slot_kinds[slot] = word;
            if !shown {
                continue;
            }
            let hero = l & look::HERO != 0;
            if hero {
                self.heroes.push(slot as u32);
            }
            self.extend_batches(slot as u32, kind, hero, arena, kinds);
            let shape = self.shapes_of[slot];
            let posed = shape != NO_SHAPE && !hero && l & (look::KEEP | look::HIDDEN) == 0;
            if !posed {
                continue;
            }
            if self.bins.len() <= shape as usize {
                self.bins.resize(shape as usize + 1, Bin::default());
            }
            let row = &kinds.rows[kind as usize];
            let bin = &mut self.bins[shape as usize];
            bin.count += 1;
            bin.joints = bin.joints.max(row.joint_count);
            bin.max_depth = bin.max_depth.max(row.max_depth);
            if let Some(key) = kinds.key(kind) {
                bin.packages |= package_bit(key.package);
                bin.skinned |= key.skin.is_some();
            }
        }
        self.upload_kinds |= changed;
    }

    /// Slot `slot` (shown, of kind `kind`) in the frame's batches: the last one's next slot of
    /// the same kind extends it, anything else starts one.
    fn extend_batches(&mut self, slot: u32, kind: u32, hero: bool, arena: &Arena, kinds: &Kinds) {
        if let Some(b) = self.batches.last_mut() {
            if b.kind == kind && b.first_slot + b.count == slot {
                b.count += 1;
                b.heroes += u32::from(hero);
                return;
            }
        }
        let Some(key) = kinds.key(kind) else {
            return;
        };
        let Some(package) = arena.packages.get(key.package) else {
            return;
        };
        let skin = key.skin.and_then(|k| package.skins.get(k as usize));
        self.batches.push(BatchSlots {
            package: key.package,
            skeleton: key.skeleton,
            skin: key.skin,
            kind,
            first_slot: slot,
            count: 1,
            joints: package.skeleton(key.skeleton).map_or(0, |s| s.joints),
            palette_len: skin.map_or(0, |s| s.len),
            vertex_count: skin.map_or(0, |s| s.vertex_count),
            curve_count: package.skeleton(key.skeleton).map_or(0, |s| s.curve_count),
            heroes: u32::from(hero),
        });
    }

    /// The frame's pose dispatches (one per shape with posed instances) and bin table.
    pub fn dispatches(&mut self, shapes: &Shapes, poses: &mut Vec<PoseDispatch>) {
        poses.clear();
        self.bin_rows.clear();
        let mut record_base = 0;
        for (shape, entry) in shapes.entries.iter().enumerate() {
            let bin = self.bins.get(shape).copied().unwrap_or_default();
            let stride = entry.shape.record_stride();
            self.bin_rows.push(BinRow {
                record_base,
                stride,
                map_base: entry.map_base,
                values: entry.values,
            });
            if bin.count == 0 {
                continue;
            }
            poses.push(PoseDispatch {
                shape: shape as u32,
                record_base,
                count: bin.count,
                stride,
                joints: bin.joints,
                max_depth: bin.max_depth,
                packages: bin.packages,
                skinned: bin.skinned,
                path: PosePath::Interpreter,
            });
            record_base += stride * bin.count;
        }
    }

    /// Makes (or grows) the GPU buffers for `slots` slots, `values` arena floats per tick and
    /// `shapes` shapes, keeping what still fits.
    pub fn ensure_buffers(&mut self, ctx: &GpuContext, (slots, values, shapes): (u32, u32, u32)) {
        let patch_bytes = 16 * (self.patches.len() + self.patch_data.len()) as u64;
        let device = &ctx.device;
        let mut grown = false;
        let old = self.buffers.take();
        let fits = |cap: Option<u64>, need: u64| cap.filter(|&c| c >= need);
        let block = u64::from(self.block());
        let slot_capacity = fits(old.as_ref().map(|b| b.slot_capacity.into()), slots.into());
        let (statics, placements, slot_capacity) = match (slot_capacity, &old) {
            (Some(c), Some(b)) => (b.statics.clone(), b.placements.clone(), c as u32),
            _ => {
                grown = true;
                let s = slots.max(1);
                (
                    storage(
                        device,
                        "retained rows and templates",
                        16 * block * u64::from(s),
                    ),
                    storage(device, "retained placements", 2 * 32 * u64::from(s)),
                    s,
                )
            }
        };
        let value_capacity = fits(old.as_ref().map(|b| b.value_capacity.into()), values.into());
        let (values_buffer, value_capacity) = match (value_capacity, &old) {
            (Some(c), Some(b)) => (b.values.clone(), c as u32),
            _ => {
                grown = true;
                let c = values.next_power_of_two().max(64);
                (storage(device, "retained values", 8 * u64::from(c)), c)
            }
        };
        let shape_capacity = fits(old.as_ref().map(|b| b.shape_capacity.into()), shapes.into());
        let (bins, fill, shape_capacity) = match (shape_capacity, &old) {
            (Some(c), Some(b)) => (b.bins.clone(), b.fill.clone(), c as u32),
            _ => {
                grown = true;
                let c = shapes.next_power_of_two().max(16);
                (
                    storage(device, "bin table", 16 * u64::from(c)),
                    storage(device, "bin fill", 4 * u64::from(c)),
                    c,
                )
            }
        };
        let patch_capacity = fits(old.as_ref().map(|b| b.patch_capacity), patch_bytes);
        let (patches, patch_capacity) = match (patch_capacity, &old) {
            (Some(c), Some(b)) => (b.patches.clone(), c),
            _ => {
                grown = true;
                let c = patch_bytes.next_power_of_two().max(1024);
                (storage(device, "retained patches", c), c)
            }
        };
        let generation = old.as_ref().map_or(0, |b| b.generation + u64::from(grown));
        if grown && old.is_some() {
            // Rows, templates, values and placements made anew hold nothing: mirror everything
            // again at the next sync.
            self.synced = None;
        }
        self.buffers = Some(RetainedBuffers {
            statics,
            values: values_buffer,
            value_capacity,
            placements,
            slot_capacity,
            bins,
            fill,
            shape_capacity,
            patches,
            patch_capacity,
            generation,
        });
    }

    /// Queues this frame's uploads: the tick's patches, values and placements, and the kind
    /// words when they changed; returns the bytes.
    pub fn upload(
        &mut self,
        queue: &wgpu::Queue,
        store: &Instances,
        slot_kinds: &wgpu::Buffer,
    ) -> u64 {
        let Some(b) = &self.buffers else {
            return 0;
        };
        let mut bytes = 0u64;
        let mut write = |buffer: &wgpu::Buffer, offset: u64, data: &[u8]| {
            if !data.is_empty() {
                queue.write_buffer(buffer, offset, data);
                bytes += data.len() as u64;
            }
        };
        if !self.patches.is_empty() {
            // Heads first, data after them: a head's start is relative to the data.
            write(&b.patches, 0, bytemuck::cast_slice(&self.patches));
            let at = 16 * self.patches.len() as u64;
            write(&b.patches, at, bytemuck::cast_slice(&self.patch_data));
        }
        for &(tick, before) in &self.upload_values {
            let (values, placements) = if before {
                (store.values_before(), store.placements_before())
            } else {
                (store.committed_values(), store.committed_placements())
            };
            let parity = tick % 2;
            let at = 4 * parity * u64::from(b.value_capacity);
            write(&b.values, at, bytemuck::cast_slice(values));
            let at = 32 * parity * u64::from(b.slot_capacity);
            write(&b.placements, at, bytemuck::cast_slice(placements));
        }
        self.upload_values.clear();
        if self.upload_kinds {
            write(slot_kinds, 0, bytemuck::cast_slice(&self.slot_kinds));
            self.upload_kinds = false;
        }
        bytes
    }
}
