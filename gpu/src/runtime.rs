//! The crowd runtime: resident packages, per-frame batches, one dispatch per stage per chunk.
//!
//! A frame is a list of [`Batch`]es, each the instances of one skeleton (and optionally one skin)
//! of one resident package. Per frame the CPU uploads, per instance, a 16-byte header, its
//! program ops (32 bytes each) and blend weights (4 bytes each), and a 48-byte placement — nothing
//! else, except heroes, whose CPU palettes (48 bytes per entry) go into the palette buffer.
//!
//! Stages run as four compute passes (program, FK, palette, skinning), each with one dispatch per
//! chunk; a chunk is a batch, or a slice of its instances when the batch's buffers would exceed
//! the storage binding limit. Each chunk binds its own 256-byte-aligned ranges of the frame
//! buffers, so shaders index relative to the chunk.
//!
//! A steady frame allocates nothing of its own: staging bytes and the chunk list are reused, and
//! bind groups are cached per chunk slot and stage, rebuilt only when what they bind changes
//! (`GroupKey`). wgpu, wgpu-profiler and the error scopes still allocate inside each submission
//! (about 200 allocations per frame, independent of the instance count).

use std::time::Instant;

use glam::Affine3A;
use serde::Serialize;
use throng_cpu_ref::program::op;
use throng_cpu_ref::{Assets, PoseOp, Program, Trs};
use wgpu_profiler::{GpuProfiler, GpuProfilerSettings};

use crate::capacity::Capacities;
use crate::context::{map_read, scoped};
use crate::layout::{
    align_up, AffineRows, InstanceHeader, Params, SkinnedVertex, TrsRecord, FLAG_HERO,
    OFFSET_ALIGNMENT,
};
use crate::resident::{PackageId, ResidentPackage};
use crate::stages::fk::{FkBindings, FkStage};
use crate::stages::palette::{PaletteBindings, PaletteStage};
use crate::stages::program::{ProgramBindings, ProgramStage};
use crate::stages::skinning::{SkinningBindings, SkinningStage};
use crate::stages::{dispatch_groups, dispatch_threads, Range};
use crate::{GpuContext, GpuError};

/// The instances of one skeleton of one package, posed and (with `skin`) skinned together.
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    pub package: PackageId,
    pub skeleton: u32,
    /// Skin whose palette is built and whose meshes are skinned; `None` stops after FK.
    pub skin: Option<u32>,
    pub instances: &'a [Instance<'a>],
}

/// One instance of a batch.
#[derive(Clone, Copy, Debug)]
pub struct Instance<'a> {
    pub pose: Pose<'a>,
    /// Component space → scene, applied to skinned vertices after skinning.
    pub placement: Affine3A,
}

/// Where an instance's pose comes from.
#[derive(Clone, Copy, Debug)]
pub enum Pose<'a> {
    /// Evaluated on the GPU. It must contain `ToComponent` (the register it names is the final
    /// local pose); its `Palette` ops are checked but the palette built is the batch's skin's.
    Program(&'a Program),
    /// A hero: its palette for the batch's skin, computed on the CPU. The program, FK and
    /// palette stages skip it; its local and component outputs are left undefined.
    Hero(&'a [Affine3A]),
}

/// A byte range of a frame buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Region {
    pub offset: u64,
    pub size: u64,
}

/// One dispatch unit of the last frame: a batch, or a slice of its instances.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Chunk {
    pub batch: usize,
    /// First instance of the batch in this chunk.
    pub first: usize,
    pub count: u32,
    pub package: usize,
    pub joints: u32,
    pub palette_len: u32,
    pub vertex_count: u32,
    /// True when FK runs in workgroup memory, false for the fallback.
    pub fast_fk: bool,
    pub skinned: bool,
    #[serde(skip)]
    params: Params,
    /// Index of the chunk's `Params` in the parameter buffer (256-byte slots).
    #[serde(skip)]
    params_slot: u64,
    pub headers: Region,
    pub ops: Region,
    pub weights: Region,
    pub placements: Region,
    pub locals: Region,
    pub components: Region,
    pub palettes: Region,
    /// Instance-major skinned vertices (`instance * vertex_count + v`), 32 bytes each, in
    /// page `skinned_page` of [`Runtime::skinned_buffers`].
    pub skinned_vertices: Region,
    pub skinned_page: usize,
}

/// What a frame did: counts and bytes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FrameReport {
    pub batches: usize,
    pub chunks: usize,
    pub instances: usize,
    pub heroes: usize,
    /// Compute dispatches recorded: at most 4 per chunk, independent of the instance count.
    pub dispatches: usize,
    pub fk_fallback_chunks: usize,
    /// Program headers, ops, weights and placements, without alignment padding.
    pub instance_bytes: u64,
    /// Hero palettes.
    pub hero_bytes: u64,
    /// Everything written to the GPU this frame: the above, chunk parameters and padding.
    pub upload_bytes: u64,
}

impl FrameReport {
    /// Bytes uploaded per non-hero instance (`instance_bytes / (instances - heroes)`).
    pub fn bytes_per_instance(&self) -> f64 {
        let n = self.instances.saturating_sub(self.heroes).max(1);
        self.instance_bytes as f64 / n as f64
    }
}

/// GPU time of each stage of the last frame, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StageTimes {
    pub program_ms: f64,
    pub fk_ms: f64,
    pub palette_ms: f64,
    pub skinning_ms: f64,
    /// True when the stage times come from timestamp queries; false when the adapter has none
    /// (then the stage times are 0 and only `wall_ms` is measured).
    pub gpu_timestamps: bool,
    /// Wall time from submission to the queue going idle.
    pub wall_ms: f64,
}

/// Outputs of one batch read back from the GPU.
#[derive(Clone, Debug, Default)]
pub struct BatchOutput {
    pub joints: usize,
    pub palette_len: usize,
    pub vertex_count: usize,
    /// `locals[i * joints + j]`: final local transform (undefined for heroes).
    pub locals: Vec<Trs>,
    /// `components[i * joints + j]` (undefined for heroes).
    pub components: Vec<Affine3A>,
    /// `palettes[i * palette_len + k]` (empty without a skin).
    pub palettes: Vec<Affine3A>,
    /// `skinned[i * vertex_count + v]`, after placement (empty without a skin).
    pub skinned: Vec<SkinnedVertex>,
}

/// Frame buffers, sized once from [`Capacities`].
struct FrameBuffers {
    params: wgpu::Buffer,
    headers: wgpu::Buffer,
    ops: wgpu::Buffer,
    weights: wgpu::Buffer,
    placements: wgpu::Buffer,
    locals: wgpu::Buffer,
    components: wgpu::Buffer,
    palettes: wgpu::Buffer,
    /// Skinned vertices can outgrow one buffer: pages of `skinned_page_bytes`, created on first
    /// use (bounded by the vertex capacity) and kept.
    skinned: Vec<wgpu::Buffer>,
    skinned_page_bytes: u64,
}

/// CPU-side bytes of the next frame, reused between frames.
#[derive(Default)]
struct Staging {
    params: Vec<u8>,
    headers: Vec<u8>,
    ops: Vec<u8>,
    weights: Vec<u8>,
    placements: Vec<u8>,
    /// `(byte offset in the palette buffer, first entry in hero_palette)` per hero, and entries.
    heroes: Vec<(u64, usize, usize)>,
    hero_palette: Vec<AffineRows>,
}

impl Staging {
    fn clear(&mut self) {
        self.params.clear();
        self.headers.clear();
        self.ops.clear();
        self.weights.clear();
        self.placements.clear();
        self.heroes.clear();
        self.hero_palette.clear();
    }
}

/// Writes `bytes` at `offset` of `buf`, zero-filling any gap.
fn put(buf: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let start = offset as usize;
    let end = start + bytes.len();
    if buf.len() < end {
        buf.resize(end, 0);
    }
    buf[start..end].copy_from_slice(bytes);
}

/// Smallest range bound for an array (one element of the widest struct, rounded).
const MIN_BINDING: u64 = 64;

/// Hands out 256-byte-aligned regions of one buffer.
#[derive(Clone, Copy, Default)]
struct Cursor(u64);

impl Cursor {
    fn take(&mut self, bytes: u64) -> Region {
        let offset = align_up(self.0, OFFSET_ALIGNMENT);
        let size = bytes.max(MIN_BINDING);
        self.0 = offset + size;
        Region { offset, size }
    }
}

#[derive(Clone, Copy, Default)]
struct Cursors {
    params: Cursor,
    headers: Cursor,
    ops: Cursor,
    weights: Cursor,
    placements: Cursor,
    locals: Cursor,
    components: Cursor,
    palettes: Cursor,
    skinned: PagedCursor,
}

/// A [`Cursor`] over pages of `page_bytes`: a region that does not fit the rest of a page
/// starts the next one.
#[derive(Clone, Copy, Default)]
struct PagedCursor {
    page: usize,
    cursor: Cursor,
    page_bytes: u64,
}

impl PagedCursor {
    fn take(&mut self, bytes: u64) -> (usize, Region) {
        let mut region = self.cursor.take(bytes);
        if region.offset + region.size > self.page_bytes && region.offset > 0 {
            self.page += 1;
            self.cursor = Cursor::default();
            region = self.cursor.take(bytes);
        }
        (self.page, region)
    }
}

/// The crowd runtime on one [`GpuContext`].
pub struct Runtime {
    ctx: GpuContext,
    capacities: Capacities,
    binding_limit: u64,
    program: ProgramStage,
    fk: FkStage,
    palette: PaletteStage,
    skinning: SkinningStage,
    packages: Vec<ResidentPackage>,
    buffers: FrameBuffers,
    staging: Staging,
    chunks: Vec<Chunk>,
    next: Vec<Chunk>,
    profiler: GpuProfiler,
    submitted: Option<Instant>,
    /// Bind groups per chunk slot of the last frame and stage, reused by later frames.
    groups: Vec<[CachedGroup; STAGES]>,
    /// Bumped by [`Runtime::replace_package`]: a package's buffers change under equal regions.
    generation: u64,
}

/// Compute stages per frame: program, FK, palette, skinning.
const STAGES: usize = 4;

/// A bind group and what it binds.
struct CachedGroup {
    key: GroupKey,
    group: wgpu::BindGroup,
}

/// What one stage's bind group of one chunk binds: the package (and its generation), the
/// skinned-vertex page and the chunk's regions of the frame buffers. Equal keys bind equal
/// resources, so a steady crowd (same batches, instance counts and program sizes) rebuilds no
/// bind group; a change rebuilds only the stages whose regions moved.
#[derive(Clone, Copy, PartialEq, Eq)]
struct GroupKey {
    generation: u64,
    package: usize,
    page: usize,
    regions: [Region; 4],
}

/// Bytes per instance of each chunk-bound buffer, for chunking. Ops and weights are bounded
/// by the program capacities.
struct Strides {
    per_instance: [(&'static str, u64); 8],
}

impl Strides {
    fn new(c: &Capacities, joints: u32, palette: u32, vertices: u32) -> Self {
        let (j, p, v) = (u64::from(joints), u64::from(palette), u64::from(vertices));
        Strides {
            per_instance: [
                ("instance headers", 16),
                ("program ops", 32 * u64::from(c.ops_per_program)),
                ("blend weights", 4 * u64::from(c.weights_per_program)),
                ("placements", 48),
                ("local transforms", 48 * j),
                ("component transforms", 48 * j),
                ("palettes", 48 * p),
                ("skinned vertices", 32 * v),
            ],
        }
    }

    /// Most instances one chunk may hold under `limit` bytes per binding (and u32 thread ids).
    fn instances_per_chunk(&self, batch: usize, limit: u64, widest: u32) -> Result<u64, GpuError> {
        let mut most = u64::from(u32::MAX) / u64::from(widest.max(1));
        for &(what, bytes) in &self.per_instance {
            if bytes > limit {
                return Err(GpuError::BindingLimit {
                    batch,
                    what,
                    bytes,
                    limit,
                });
            }
            if let Some(n) = limit.checked_div(bytes) {
                most = most.min(n);
            }
        }
        Ok(most.max(1))
    }
}

impl Runtime {
    /// Pipelines and frame buffers sized from `capacities`.
    pub fn new(ctx: &GpuContext, capacities: Capacities) -> Result<Runtime, GpuError> {
        let device = &ctx.device;
        let adapter_limit = ctx.limits.max_storage_buffer_binding_size;
        let binding_limit = capacities
            .binding_limit
            .map_or(adapter_limit, |l| l.min(adapter_limit));
        let binding_limit =
            binding_limit.min(ctx.limits.max_buffer_size) / OFFSET_ALIGNMENT * OFFSET_ALIGNMENT;
        let c = &capacities;
        let slack = u64::from(c.chunks) * (OFFSET_ALIGNMENT + MIN_BINDING);
        let n = u64::from(c.instances);
        let sizes = [
            (
                "chunk parameters",
                u64::from(c.chunks) * OFFSET_ALIGNMENT + OFFSET_ALIGNMENT,
            ),
            ("instance headers", 16 * n + slack),
            ("program ops", 32 * n * u64::from(c.ops_per_program) + slack),
            (
                "blend weights",
                4 * n * u64::from(c.weights_per_program) + slack,
            ),
            ("placements", 48 * n + slack),
            ("local transforms", 48 * c.joints + slack),
            ("component transforms", 48 * c.joints + slack),
            ("palettes", 48 * c.palette_entries + slack),
        ];
        let page_limit = ctx.limits.max_buffer_size / OFFSET_ALIGNMENT * OFFSET_ALIGNMENT;
        let skinned_page_bytes = align_up(32 * c.vertices + slack, 4).min(page_limit);
        for (what, size) in sizes {
            if size > ctx.limits.max_buffer_size {
                return Err(GpuError::AdapterLimit {
                    adapter: ctx.adapter.name.clone(),
                    what,
                    have: ctx.limits.max_buffer_size,
                    need: size,
                });
            }
        }
        use wgpu::BufferUsages as U;
        let input = U::STORAGE | U::COPY_DST;
        let output = U::STORAGE | U::COPY_SRC;
        let make = |i: usize, usage: U| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(sizes[i].0),
                size: align_up(sizes[i].1, 4),
                usage,
                mapped_at_creation: false,
            })
        };
        let (stages, buffers) = scoped(device, "pipeline and buffer creation", || {
            let stages = (
                ProgramStage::new(device),
                FkStage::new(device),
                PaletteStage::new(device),
                SkinningStage::new(device),
            );
            let buffers = FrameBuffers {
                params: make(0, U::UNIFORM | U::COPY_DST),
                headers: make(1, input),
                ops: make(2, input),
                weights: make(3, input),
                placements: make(4, input),
                locals: make(5, output),
                components: make(6, output),
                palettes: make(7, output | U::COPY_DST),
                skinned: vec![skinned_page(device, skinned_page_bytes)],
                skinned_page_bytes,
            };
            (stages, buffers)
        })?;
        let settings = GpuProfilerSettings {
            enable_timer_queries: ctx.timestamps,
            enable_debug_groups: false,
            ..Default::default()
        };
        let profiler = GpuProfiler::new(device, settings).map_err(|e| GpuError::Wgpu {
            what: "profiler creation",
            reason: e.to_string(),
        })?;
        Ok(Runtime {
            ctx: ctx.clone(),
            capacities,
            binding_limit,
            program: stages.0,
            fk: stages.1,
            palette: stages.2,
            skinning: stages.3,
            packages: Vec::new(),
            buffers,
            staging: Staging::default(),
            chunks: Vec::new(),
            next: Vec::new(),
            profiler,
            submitted: None,
            groups: Vec::new(),
            generation: 0,
        })
    }

    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    pub fn capacities(&self) -> &Capacities {
        &self.capacities
    }

    /// Makes `package` resident with `masks[skeleton]` per skeleton; returns its handle.
    pub fn add_package(
        &mut self,
        package: &throng_cpu_ref::Package,
        masks: &[Vec<throng_cpu_ref::Mask>],
    ) -> Result<PackageId, GpuError> {
        let id = self.packages.len();
        let resident = scoped(&self.ctx.device, "package upload", || {
            ResidentPackage::upload(&self.ctx, id, package, masks)
        })??;
        self.packages.push(resident);
        Ok(PackageId(id))
    }

    /// Uploads a new generation of package `id` in its place (its old buffers are freed once
    /// no submitted frame uses them). On error the old generation stays resident.
    pub fn replace_package(
        &mut self,
        id: PackageId,
        package: &throng_cpu_ref::Package,
        masks: &[Vec<throng_cpu_ref::Mask>],
    ) -> Result<(), GpuError> {
        if id.0 >= self.packages.len() {
            return Err(GpuError::BadPackage {
                package: id.0,
                what: "is not resident".into(),
            });
        }
        let resident = scoped(&self.ctx.device, "package upload", || {
            ResidentPackage::upload(&self.ctx, id.0, package, masks)
        })??;
        if let Some(slot) = self.packages.get_mut(id.0) {
            *slot = resident;
            self.generation += 1;
        }
        Ok(())
    }

    pub fn package(&self, id: PackageId) -> Option<&ResidentPackage> {
        self.packages.get(id.0)
    }

    /// Bytes of GPU memory held by resident packages.
    pub fn resident_bytes(&self) -> u64 {
        self.packages.iter().map(|p| p.bytes).sum()
    }

    /// Chunks of the last submitted frame (for raster passes and tools).
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// Pages of skinned vertices of the last frame ([`Chunk::skinned_page`] and
    /// [`Chunk::skinned_vertices`] say where each chunk's are).
    pub fn skinned_buffers(&self) -> &[wgpu::Buffer] {
        &self.buffers.skinned
    }

    /// Validates `batches`, uploads their programs, placements and hero palettes, and submits
    /// the four stages. On error nothing is submitted and the last frame's outputs stay readable.
    pub fn frame(&mut self, batches: &[Batch]) -> Result<FrameReport, GpuError> {
        let mut report = FrameReport {
            batches: batches.len(),
            ..FrameReport::default()
        };
        self.staging.clear();
        let mut next = std::mem::take(&mut self.next);
        next.clear();
        let planned = self.plan(batches, &mut next, &mut report);
        if let Err(e) = planned {
            self.next = next;
            return Err(e);
        }
        let pages = next.iter().map(|c| c.skinned_page + 1).max().unwrap_or(0);
        if let Err(e) = self.ensure_skinned_pages(pages) {
            self.next = next;
            return Err(e);
        }
        report.chunks = next.len();
        report.fk_fallback_chunks = next.iter().filter(|c| !c.fast_fk).count();
        let submitted = self.submit(&next, &mut report);
        self.next = std::mem::replace(&mut self.chunks, next);
        if submitted.is_err() {
            self.chunks.clear();
        }
        submitted.map(|()| report)
    }

    /// Creates skinned-vertex pages up to `pages`.
    fn ensure_skinned_pages(&mut self, pages: usize) -> Result<(), GpuError> {
        let device = &self.ctx.device;
        let b = &mut self.buffers;
        if b.skinned.len() >= pages {
            return Ok(());
        }
        scoped(device, "skinned vertex page creation", || {
            while b.skinned.len() < pages {
                b.skinned.push(skinned_page(device, b.skinned_page_bytes));
            }
        })
    }

    /// Checks every batch and instance and lays out chunks and staging bytes.
    fn plan(
        &mut self,
        batches: &[Batch],
        chunks: &mut Vec<Chunk>,
        report: &mut FrameReport,
    ) -> Result<(), GpuError> {
        let caps = self.capacities;
        let limits = caps.program_limits();
        let mut totals = [0u64; 4];
        let mut cursors = Cursors::default();
        cursors.skinned.page_bytes = self.buffers.skinned_page_bytes;
        for (b, batch) in batches.iter().enumerate() {
            let bad = |what: String| GpuError::BadBatch { batch: b, what };
            let package = self
                .packages
                .get(batch.package.0)
                .ok_or_else(|| bad(format!("package {} is not resident", batch.package.0)))?;
            let range = *package.skeleton(batch.skeleton).ok_or_else(|| {
                bad(format!(
                    "skeleton {} is not in package {}",
                    batch.skeleton, batch.package.0
                ))
            })?;
            let skin = match batch.skin {
                None => None,
                Some(k) => {
                    let s = package.skins.get(k as usize).ok_or_else(|| {
                        bad(format!("skin {k} is not in package {}", batch.package.0))
                    })?;
                    if s.skeleton != batch.skeleton {
                        return Err(bad(format!(
                            "skin {k} binds skeleton {}, not {}",
                            s.skeleton, batch.skeleton
                        )));
                    }
                    Some(s)
                }
            };
            let (palette_len, vertex_count) = skin.map_or((0, 0), |s| (s.len, s.vertex_count));
            let skeleton = package
                .package
                .skeletons
                .get(batch.skeleton as usize)
                .ok_or_else(|| {
                    bad(format!(
                        "skeleton {} is not in package {}",
                        batch.skeleton, batch.package.0
                    ))
                })?;
            let assets = Assets {
                skeleton,
                skeleton_index: batch.skeleton,
                clips: &package.package.clips,
                skins: &package.package.skins,
                masks: package
                    .masks
                    .get(batch.skeleton as usize)
                    .map_or(&[][..], |m| &m[..]),
            };
            for (i, instance) in batch.instances.iter().enumerate() {
                check_instance(b, i, instance, &limits, &assets, palette_len)?;
            }
            let n = batch.instances.len() as u64;
            totals[0] += n;
            totals[1] += n * u64::from(range.joint_count);
            totals[2] += n * u64::from(palette_len);
            totals[3] += n * u64::from(vertex_count);
            let strides = Strides::new(&caps, range.joint_count, palette_len, vertex_count);
            let widest = range.joint_count.max(palette_len).max(vertex_count);
            let per_chunk = strides.instances_per_chunk(b, self.binding_limit, widest)? as usize;
            let params = Params {
                instance_count: 0,
                joint_count: range.joint_count,
                joint_base: range.joint_base,
                rest_base: range.rest_base,
                max_depth: range.max_depth,
                mask_base: range.mask_base,
                mask_count: range.mask_count,
                skin_base: skin.map_or(0, |s| s.base),
                skin_len: palette_len,
                vertex_base: skin.map_or(0, |s| s.vertex_base),
                vertex_count,
                pad: 0,
            };
            for (c, slice) in batch.instances.chunks(per_chunk).enumerate() {
                if chunks.len() >= caps.chunks as usize {
                    return Err(GpuError::Capacity {
                        what: "chunks",
                        needed: chunks.len() as u64 + 1,
                        capacity: caps.chunks.into(),
                    });
                }
                let mut chunk = Chunk {
                    batch: b,
                    first: c * per_chunk,
                    count: slice.len() as u32,
                    package: batch.package.0,
                    joints: range.joint_count,
                    palette_len,
                    vertex_count,
                    fast_fk: FkStage::fits_fast_path(range.joint_count),
                    skinned: skin.is_some(),
                    params: Params {
                        instance_count: slice.len() as u32,
                        ..params
                    },
                    ..Chunk::default()
                };
                self.staging
                    .lay_out(&mut chunk, slice, &mut cursors, report);
                chunks.push(chunk);
            }
        }
        let declared = [
            ("instances", u64::from(caps.instances)),
            ("joint slots (instances × joints)", caps.joints),
            (
                "palette entries (instances × palette)",
                caps.palette_entries,
            ),
            ("skinned vertices (instances × vertices)", caps.vertices),
        ];
        for ((what, capacity), needed) in declared.into_iter().zip(totals) {
            if needed > capacity {
                return Err(GpuError::Capacity {
                    what,
                    needed,
                    capacity,
                });
            }
        }
        report.instances = totals[0] as usize;
        Ok(())
    }

    /// Uploads the staged bytes, records the four passes and submits them.
    fn submit(&mut self, chunks: &[Chunk], report: &mut FrameReport) -> Result<(), GpuError> {
        // Handles are reference counted: cloning them allocates nothing (the context would).
        let (device, queue) = (self.ctx.device.clone(), self.ctx.queue.clone());
        let recorded = scoped(&device, "frame recording", || {
            self.upload(&queue, report);
            if !self.refresh_bind_groups(chunks) {
                return None;
            }
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("throng frame"),
            });
            let recorded = self.record(&mut encoder, chunks);
            Some((encoder, recorded))
        });
        let (mut encoder, recorded) = match recorded {
            Ok(Some(r)) => r,
            Ok(None) => {
                return Err(GpuError::Wgpu {
                    what: "frame recording",
                    reason: "a chunk names a package or skinned page that does not exist".into(),
                })
            }
            Err(e) => {
                // A group wgpu rejected must not be reused.
                self.groups.clear();
                return Err(e);
            }
        };
        self.profiler.resolve_queries(&mut encoder);
        scoped(&device, "frame submission", || {
            queue.submit([encoder.finish()])
        })?;
        report.dispatches = recorded;
        self.submitted = Some(Instant::now());
        self.profiler.end_frame().map_err(|e| GpuError::Wgpu {
            what: "profiler frame end",
            reason: e.to_string(),
        })
    }

    /// Writes the staged bytes and hero palettes to the frame buffers.
    fn upload(&self, queue: &wgpu::Queue, report: &mut FrameReport) {
        let s = &self.staging;
        let b = &self.buffers;
        let writes: [(&wgpu::Buffer, &[u8]); 5] = [
            (&b.params, &s.params),
            (&b.headers, &s.headers),
            (&b.ops, &s.ops),
            (&b.weights, &s.weights),
            (&b.placements, &s.placements),
        ];
        for (buffer, bytes) in writes {
            if !bytes.is_empty() {
                queue.write_buffer(buffer, 0, bytes);
                report.upload_bytes += bytes.len() as u64;
            }
        }
        for &(offset, first, count) in &s.heroes {
            let bytes: &[u8] = bytemuck::cast_slice(&s.hero_palette[first..first + count]);
            queue.write_buffer(&b.palettes, offset, bytes);
            report.upload_bytes += bytes.len() as u64;
            report.hero_bytes += bytes.len() as u64;
        }
    }

    /// Brings the cached bind groups in line with `chunks`, rebuilding a chunk slot's stage
    /// group only when what it binds changed. False when a chunk names a package or skinned
    /// page that does not exist.
    fn refresh_bind_groups(&mut self, chunks: &[Chunk]) -> bool {
        self.groups.truncate(chunks.len());
        for (i, c) in chunks.iter().enumerate() {
            if i == self.groups.len() {
                let fresh = [0, 1, 2, 3].map(|stage| {
                    let group = self.bind_group(c, stage)?;
                    Some(CachedGroup {
                        key: self.group_key(c, stage),
                        group,
                    })
                });
                let [Some(a), Some(b), Some(c), Some(d)] = fresh else {
                    return false;
                };
                self.groups.push([a, b, c, d]);
                continue;
            }
            for stage in 0..STAGES {
                let key = self.group_key(c, stage);
                if self.groups[i][stage].key == key {
                    continue;
                }
                let Some(group) = self.bind_group(c, stage) else {
                    return false;
                };
                self.groups[i][stage] = CachedGroup { key, group };
            }
        }
        true
    }

    /// What stage `stage`'s bind group of chunk `c` binds (mirrors [`Runtime::bind_group`]).
    fn group_key(&self, c: &Chunk, stage: usize) -> GroupKey {
        let none = Region::default();
        let (page, regions) = match stage {
            0 => (0, [c.headers, c.ops, c.weights, c.locals]),
            1 => (0, [c.headers, c.locals, c.components, none]),
            2 => (0, [c.headers, c.components, c.palettes, none]),
            _ => (
                c.skinned_page,
                [c.palettes, c.placements, c.skinned_vertices, none],
            ),
        };
        GroupKey {
            generation: self.generation,
            package: c.package,
            page,
            regions,
        }
    }

    /// The bind group of stage `stage` (program, FK, palette, skinning) for chunk `c`.
    fn bind_group(&self, c: &Chunk, stage: usize) -> Option<wgpu::BindGroup> {
        let device = &self.ctx.device;
        let b = &self.buffers;
        let p = &self.packages.get(c.package)?.buffers;
        let r = |buffer, region: Region| Range {
            buffer,
            offset: region.offset,
            size: region.size,
        };
        let headers = r(&b.headers, c.headers);
        let locals = r(&b.locals, c.locals);
        let components = r(&b.components, c.components);
        let palettes = r(&b.palettes, c.palettes);
        Some(match stage {
            0 => self.program.bind(
                device,
                &b.params,
                &ProgramBindings {
                    clips: Range::whole(&p.clips),
                    tracks: Range::whole(&p.tracks),
                    values: Range::whole(&p.values),
                    masks: Range::whole(&p.masks),
                    headers,
                    ops: r(&b.ops, c.ops),
                    weights: r(&b.weights, c.weights),
                    locals,
                },
            ),
            1 => self.fk.bind(
                device,
                &b.params,
                &FkBindings {
                    joint_table: Range::whole(&p.joint_table),
                    headers,
                    locals,
                    components,
                },
            ),
            2 => self.palette.bind(
                device,
                &b.params,
                &PaletteBindings {
                    skin_joints: Range::whole(&p.skin_joints),
                    inverse_bind: Range::whole(&p.inverse_bind),
                    headers,
                    components,
                    palettes,
                },
            ),
            _ => self.skinning.bind(
                device,
                &b.params,
                &SkinningBindings {
                    vertices: Range::whole(&p.vertices),
                    palettes,
                    placements: r(&b.placements, c.placements),
                    skinned: r(b.skinned.get(c.skinned_page)?, c.skinned_vertices),
                },
            ),
        })
    }

    /// Records program, FK, palette and skinning passes; returns the dispatch count.
    fn record(&self, encoder: &mut wgpu::CommandEncoder, chunks: &[Chunk]) -> usize {
        let max_x = self.ctx.limits.max_compute_workgroups_per_dimension;
        let wg = throng_shaders::WORKGROUP;
        let mut dispatches = 0;
        let any_skin = chunks.iter().any(|c| c.skinned);
        let stages: &[(&str, usize)] = if any_skin {
            &[("program", 0), ("fk", 1), ("palette", 2), ("skinning", 3)]
        } else {
            &[("program", 0), ("fk", 1)]
        };
        for &(label, stage) in stages {
            let query = self.profiler.begin_pass_query(label, encoder);
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: query.compute_pass_timestamp_writes(),
            });
            for (c, g) in chunks.iter().zip(&self.groups) {
                let offset = (c.params_offset()) as u32;
                let n = u64::from(c.count);
                let group = &g[stage].group;
                match stage {
                    0 => dispatch_threads(
                        &mut pass,
                        &self.program.pipeline,
                        group,
                        offset,
                        n * u64::from(c.joints),
                        wg,
                        max_x,
                    ),
                    1 if c.fast_fk => {
                        dispatch_groups(&mut pass, &self.fk.fast, group, offset, n, max_x)
                    }
                    1 => {
                        dispatch_threads(&mut pass, &self.fk.fallback, group, offset, n, wg, max_x)
                    }
                    2 if c.skinned => dispatch_threads(
                        &mut pass,
                        &self.palette.pipeline,
                        group,
                        offset,
                        n * u64::from(c.palette_len),
                        wg,
                        max_x,
                    ),
                    3 if c.skinned && c.vertex_count > 0 => dispatch_threads(
                        &mut pass,
                        &self.skinning.pipeline,
                        group,
                        offset,
                        n * u64::from(c.vertex_count),
                        wg,
                        max_x,
                    ),
                    _ => continue,
                }
                dispatches += 1;
            }
            drop(pass);
            self.profiler.end_query(encoder, query);
        }
        dispatches
    }

    /// Waits for the last frame and returns its stage times.
    pub fn finish(&mut self) -> Result<StageTimes, GpuError> {
        self.ctx.wait()?;
        let wall_ms = self
            .submitted
            .map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3);
        let mut times = StageTimes {
            wall_ms,
            gpu_timestamps: self.ctx.timestamps,
            ..StageTimes::default()
        };
        let period = self.ctx.queue.get_timestamp_period();
        // Frames finish in order: the newest processed one is the last submitted.
        while let Some(results) = self.profiler.process_finished_frame(period) {
            for r in results {
                let ms = r.time.map_or(0.0, |t| (t.end - t.start) * 1e3);
                match r.label.as_str() {
                    "program" => times.program_ms = ms,
                    "fk" => times.fk_ms = ms,
                    "palette" => times.palette_ms = ms,
                    "skinning" => times.skinning_ms = ms,
                    _ => {}
                }
            }
        }
        Ok(times)
    }

    /// Reads back the last frame's local poses, component transforms, palettes and skinned
    /// vertices, per batch (for tests and tools; it waits for the GPU, one chunk at a time so
    /// no staging buffer exceeds four bindings).
    pub fn readback(&self) -> Result<Vec<BatchOutput>, GpuError> {
        let batches = self
            .chunks
            .iter()
            .map(|c| c.batch + 1)
            .max()
            .ok_or(GpuError::NothingToRead)?;
        let mut out: Vec<BatchOutput> = vec![BatchOutput::default(); batches];
        for c in &self.chunks {
            let o = &mut out[c.batch];
            o.joints = c.joints as usize;
            o.palette_len = c.palette_len as usize;
            o.vertex_count = c.vertex_count as usize;
            let parts = self.chunk_outputs(c);
            let bytes = self.read_regions(&parts)?;
            let mut at = 0usize;
            let mut take = |n: u64| {
                let slice = bytes.get(at..at + n as usize).unwrap_or(&[]);
                at += n as usize;
                slice
            };
            let [l, m, p, s] = parts.map(|x| x.2);
            o.locals.extend(
                bytemuck::pod_collect_to_vec::<u8, TrsRecord>(take(l))
                    .into_iter()
                    .map(Trs::from),
            );
            o.components.extend(
                bytemuck::pod_collect_to_vec::<u8, AffineRows>(take(m))
                    .into_iter()
                    .map(Affine3A::from),
            );
            o.palettes.extend(
                bytemuck::pod_collect_to_vec::<u8, AffineRows>(take(p))
                    .into_iter()
                    .map(Affine3A::from),
            );
            o.skinned
                .extend(bytemuck::pod_collect_to_vec::<u8, SkinnedVertex>(take(s)));
        }
        Ok(out)
    }

    /// The output regions of chunk `c` and their used byte counts: locals, components,
    /// palettes, skinned vertices.
    fn chunk_outputs<'a>(&'a self, c: &Chunk) -> [(&'a wgpu::Buffer, Region, u64); 4] {
        let b = &self.buffers;
        let (n, skinned) = (u64::from(c.count), u64::from(c.skinned));
        [
            (&b.locals, c.locals, 48 * n * u64::from(c.joints)),
            (&b.components, c.components, 48 * n * u64::from(c.joints)),
            (
                &b.palettes,
                c.palettes,
                48 * n * u64::from(c.palette_len) * skinned,
            ),
            (
                // Pages of every chunk of the last frame exist (ensured before submission).
                &b.skinned[c.skinned_page],
                c.skinned_vertices,
                32 * n * u64::from(c.vertex_count) * skinned,
            ),
        ]
    }

    /// Copies `parts` into one staging buffer, maps it and returns its bytes.
    fn read_regions(&self, parts: &[(&wgpu::Buffer, Region, u64)]) -> Result<Vec<u8>, GpuError> {
        let total: u64 = parts.iter().map(|p| p.2).sum();
        let device = &self.ctx.device;
        let staging = scoped(device, "readback copy", || {
            let staging = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size: total.max(4),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("readback"),
            });
            let mut at = 0;
            for &(buffer, region, bytes) in parts {
                if bytes > 0 {
                    encoder.copy_buffer_to_buffer(buffer, region.offset, &staging, at, bytes);
                    at += bytes;
                }
            }
            self.ctx.queue.submit([encoder.finish()]);
            staging
        })?;
        map_read(&self.ctx, &staging, "frame outputs")
    }
}

impl Chunk {
    fn params_offset(&self) -> u64 {
        self.params_slot * OFFSET_ALIGNMENT
    }
}


/// Validates one instance: its program against the assets and capacities (and that it has a
/// `ToComponent`), or its hero palette's length; finite placement and palette.
fn check_instance(
    batch: usize,
    instance: usize,
    x: &Instance,
    limits: &throng_cpu_ref::ProgramLimits,
    assets: &Assets,
    palette_len: u32,
) -> Result<(), GpuError> {
    let bad = |what: String| GpuError::BadInstance {
        batch,
        instance,
        what,
    };
    if !(x.placement.matrix3.is_finite() && x.placement.translation.is_finite()) {
        return Err(bad("placement is not finite".into()));
    }
    match x.pose {
        Pose::Program(p) => {
            p.validate(limits, assets)
                .map_err(|source| GpuError::Program {
                    batch,
                    instance,
                    source,
                })?;
            if !p.ops.iter().any(|o| o.code == op::TO_COMPONENT) {
                return Err(bad(
                    "program has no ToComponent, so it names no final pose".into()
                ));
            }
        }
        Pose::Hero(palette) => {
            if palette.len() != palette_len as usize {
                return Err(bad(format!(
                    "hero palette has {} entries; the batch's skin has {palette_len}",
                    palette.len()
                )));
            }
            if !palette
                .iter()
                .all(|m| m.matrix3.is_finite() && m.translation.is_finite())
            {
                return Err(bad("hero palette is not finite".into()));
            }
        }
    }
    Ok(())
}

impl Staging {
    /// Assigns `chunk` its regions and params slot and stages its instances' bytes.
    fn lay_out(
        &mut self,
        chunk: &mut Chunk,
        instances: &[Instance],
        cursors: &mut Cursors,
        report: &mut FrameReport,
    ) {
        let n = u64::from(chunk.count);
        let (joints, palette, vertices) = (
            u64::from(chunk.joints),
            u64::from(chunk.palette_len),
            u64::from(chunk.vertex_count),
        );
        let ops: u64 = instances
            .iter()
            .map(|i| match i.pose {
                Pose::Program(p) => p.ops.len() as u64,
                Pose::Hero(_) => 0,
            })
            .sum();
        let weights: u64 = instances
            .iter()
            .map(|i| match i.pose {
                Pose::Program(p) => p.weights.len() as u64,
                Pose::Hero(_) => 0,
            })
            .sum();
        let params = cursors.params.take(OFFSET_ALIGNMENT);
        chunk.params_slot = params.offset / OFFSET_ALIGNMENT;
        chunk.headers = cursors.headers.take(16 * n);
        chunk.ops = cursors.ops.take(32 * ops);
        chunk.weights = cursors.weights.take(4 * weights);
        chunk.placements = cursors.placements.take(48 * n);
        chunk.locals = cursors.locals.take(48 * n * joints);
        chunk.components = cursors.components.take(48 * n * joints);
        chunk.palettes = cursors.palettes.take(48 * n * palette);
        (chunk.skinned_page, chunk.skinned_vertices) = cursors.skinned.take(32 * n * vertices);
        put(
            &mut self.params,
            params.offset,
            bytemuck::bytes_of(&chunk.params),
        );

        let (mut op_at, mut weight_at) = (0u32, 0u32);
        let mut headers = chunk.headers.offset;
        let mut placements = chunk.placements.offset;
        for (i, x) in instances.iter().enumerate() {
            let (program, flags): (&[PoseOp], u32) = match x.pose {
                Pose::Program(p) => (&p.ops, 0),
                Pose::Hero(palette) => {
                    let offset = chunk.palettes.offset + 48 * palette.len() as u64 * i as u64;
                    self.heroes
                        .push((offset, self.hero_palette.len(), palette.len()));
                    self.hero_palette
                        .extend(palette.iter().map(AffineRows::from));
                    report.heroes += 1;
                    (&[], FLAG_HERO)
                }
            };
            let weights: &[f32] = match x.pose {
                Pose::Program(p) => &p.weights,
                Pose::Hero(_) => &[],
            };
            let header = InstanceHeader {
                op_offset: op_at,
                op_count: program.len() as u32,
                weight_offset: weight_at,
                flags,
            };
            put(&mut self.headers, headers, bytemuck::bytes_of(&header));
            headers += 16;
            put(
                &mut self.ops,
                chunk.ops.offset + 32 * u64::from(op_at),
                bytemuck::cast_slice(program),
            );
            put(
                &mut self.weights,
                chunk.weights.offset + 4 * u64::from(weight_at),
                bytemuck::cast_slice(weights),
            );
            put(
                &mut self.placements,
                placements,
                bytemuck::bytes_of(&AffineRows::from(&x.placement)),
            );
            placements += 48;
            op_at += program.len() as u32;
            weight_at += weights.len() as u32;
            report.instance_bytes += 16 + 48 + 32 * program.len() as u64 + 4 * weights.len() as u64;
        }
    }
}

/// One page of skinned vertices.
fn skinned_page(device: &wgpu::Device, bytes: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("skinned vertices"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    })
}
