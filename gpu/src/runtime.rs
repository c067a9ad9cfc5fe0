//! The crowd runtime: resident packages, per-frame batches, one pose dispatch per (batch, shape)
//! and one bounds and one skinning dispatch per skinned batch (docs/gpu.md).
//!
//! A frame, in order:
//! 1. validate every batch and instance (throng-cpu-ref `frame::validate`) and the capacities;
//! 2. plan: frame slots in batch order, instances binned by program shape ([`crate::plan`]),
//!    and the clips of the decode cache ([`crate::decode`]);
//! 3. choose each pose dispatch's pipeline: the specialised one for the runtime's [`Mapping`]
//!    when it is built, else the interpreter ([`crate::pipelines`]);
//! 4. stage and upload records, placements, parameters and hero palettes ([`crate::staging`]);
//! 5. record the decode pass (the clips of the decode cache, [`crate::decode`]), the pose
//!    pass, the bounds pass (bounds, culling against the frustum set by
//!    [`Runtime::set_frustum`]; then the skinned budget and order: ranks of the seen instances
//!    in frame-slot order, the first `Capacities::skinned_instances` of them skinned, and the
//!    indirect arguments), the skinning pass (indirect, over the skinned instances) and, with
//!    attachments ([`Runtime::set_attachments`]), the attachments pass (every prop of every
//!    skinned instance placed from its palette) ([`crate::record`]), and submit;
//! 6. at [`Runtime::finish`], read the per-batch counts the frame copied out
//!    ([`Runtime::visibility`]).
//!
//! A refused frame submits nothing and leaves the last frame's outputs readable. A steady
//! frame allocates nothing of its own (wgpu and wgpu-profiler allocate inside each submission).

use std::collections::HashMap;
use std::time::Instant;

use glam::Affine3A;

use serde::Serialize;
use throng_cpu_ref::bounds::Frustum;
use throng_cpu_ref::motion::MotionResets;
use throng_cpu_ref::{Batch, BatchLayout, BatchOutput, Package, PackageId, SlotClaims};
use throng_shaders::prelude::LOD_TIERS;
use throng_shaders::{
    kernel, AttachParams, BoundsParams, BudgetParams, Outputs, PartitionParams, PoseParams,
    ScatterParams, SkinParams, Stream,
};

use crate::attach::{Attachment, Attachments, PlacedProp, PROP_BYTES};
use crate::capacity::Capacities;
use crate::context::scoped;
use crate::decode::{Decode, DecodeCache};
use crate::frame_buffers::FrameBuffers;
use crate::layout::{AffineRows, OFFSET_ALIGNMENT};
use crate::pipelines::{Built, Form, Key, Mapping, Pipelines, Specialise};
use crate::plan::{BatchSlots, Plan, PosePath};
use crate::readback::SkinnedShare;
use crate::resident::ResidentPackage;
use crate::shapes::Shapes;
use crate::staging::Staging;
use crate::timing::Timing;
use crate::{GpuContext, GpuError};

/// How a runtime evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuntimeOptions {
    /// `None`: [`Mapping::for_adapter`].
    pub mapping: Option<Mapping>,
    pub specialise: Specialise,
    pub outputs: throng_cpu_ref::Outputs,
    /// `false` stops the pose pass after the program: it writes local poses only (no FK,
    /// palette or skinning), which needs `outputs.locals`. For measuring the FK part.
    pub fk: bool,
    /// Which compressed clips each frame decodes into the decode cache ([`crate::decode`]).
    pub decode: Decode,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            mapping: None,
            specialise: Specialise::Background,
            outputs: Default::default(),
            fk: true,
            decode: Decode::Auto,
        }
    }
}

/// What a frame did: counts and bytes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FrameReport {
    pub batches: usize,
    /// Batches: a batch is never split, whatever its size (kept for reports that count chunks).
    pub chunks: usize,
    pub instances: usize,
    pub heroes: usize,
    /// Compute dispatches: one per (batch, shape, skeleton LOD level), per skinned batch one
    /// for its bounds and one skinning dispatch per level of detail its skin has, and, when a
    /// batch is skinned, three for the skinned budget (ranks in frame-slot order, the budgeted
    /// instances, then the skinned order by level with the indirect arguments).
    pub dispatches: usize,
    /// One per package with clips in the decode cache, before the pose dispatches.
    pub decode_dispatches: usize,
    pub pose_dispatches: usize,
    pub bounds_dispatches: usize,
    pub budget_dispatches: usize,
    pub skinning_dispatches: usize,
    /// One when the runtime has attachments and the frame a skinned batch: every prop of the
    /// frame is placed by it.
    pub attachment_dispatches: usize,
    /// Pose dispatches on each path.
    pub interpreter_dispatches: usize,
    pub specialised_dispatches: usize,
    /// Distinct program shapes of the frame.
    pub shapes: usize,
    /// Compressed clips decoded into the decode cache this frame, and the cache's vec4s they
    /// filled; compressed clips read from the cache that earlier frames decoded.
    pub decoded_clips: u32,
    pub decoded_samples: u32,
    pub cached_clips: u32,
    /// vec4s of the decode cache in use once this frame has decoded (16 B each).
    pub decode_cache_samples: u32,
    /// Specialised pipelines requested and not built yet.
    pub pending_pipelines: usize,
    pub mapping: Option<Mapping>,
    /// Records and placements, without parameters or hero palettes.
    pub instance_bytes: u64,
    /// Hero palettes.
    pub hero_bytes: u64,
    /// Everything written to the GPU this frame.
    pub upload_bytes: u64,
}

impl FrameReport {
    /// Bytes uploaded per non-hero instance (`instance_bytes / (instances - heroes)`).
    pub fn bytes_per_instance(&self) -> f64 {
        let n = self.instances.saturating_sub(self.heroes).max(1);
        self.instance_bytes as f64 / n as f64
    }
}

/// GPU time of each pass of the last frame, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StageTimes {
    /// The fused pose pass (program, FK and palette).
    pub pose_ms: f64,
    /// The decode pass before it, which fills the decode cache (0 when no clip was decoded).
    pub decode_ms: f64,
    /// The bounds pass (animated bounds of skinned instances).
    pub bounds_ms: f64,
    pub skinning_ms: f64,
    /// True when the pass times come from timestamp queries; false when the adapter has none.
    pub gpu_timestamps: bool,
    /// Wall time from submission to the queue going idle.
    pub wall_ms: f64,
}

/// One instanced draw's worth of the last frame's skinned vertices: a skinned batch's
/// instances at one level of detail on one page of the skinned stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkinnedRun {
    pub batch: usize,
    /// The level of detail: its instances' skeleton LOD level, drawn with its mesh LODs.
    pub lod: u8,
    pub page: usize,
    /// Byte range of the run in the page.
    pub offset: u64,
    pub size: u64,
    /// Rank in the skinned pool of the run's page's first instance, and the page's instances
    /// (the run draws those of them its batch skinned at its level).
    pub first_rank: u32,
    pub count: u32,
    /// Elements per instance in the stream (the run's vertex `v` of instance `i` is element
    /// `i * stride + v`).
    pub stride: u32,
    /// Vertices of the run's level ([`crate::SkinTier`]).
    pub vertex_count: u32,
    /// Byte offset in [`Runtime::indirect_buffer`] of the run's indexed-draw arguments (its
    /// level's range of the skin's indices; instances: those of the batch's skinned instances
    /// at its level on the run's page).
    pub draw_args: u64,
    /// Where in [`Runtime::ranks_buffer`] (u32 index) the run's first instance within its page
    /// is written.
    pub first_at: u32,
}

/// What culling and the skinned budget kept in the last frame (after [`Runtime::finish`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Visibility {
    /// Instances of skinned batches whose bounds meet the frustum (all of them without one).
    pub visible: u64,
    /// Visible instances skinned and drawn: the first `Capacities::skinned_instances` of them
    /// by (batch, level of detail, frame slot).
    pub skinned: u64,
    /// Visible instances past the budget: neither skinned nor drawn.
    pub over_budget: u64,
    /// Vertices of the skinned instances.
    pub skinned_vertices: u64,
    /// Triangles of the skinned instances' skins, each at its level's mesh LOD.
    pub triangles: u64,
    /// Visible and skinned instances per skinned batch, in batch order.
    pub per_batch: Vec<(u32, u32)>,
    /// Per level of detail: skinned instances and their triangles.
    pub per_level: [(u64, u64); LOD_TIERS as usize],
}

/// What a bind group was built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PipelineId {
    Interpreter(Outputs),
    Specialised(Key),
    Decode,
    Bounds,
    Budget,
    Scatter,
    Partition,
    Skinning,
    Attach,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct GroupKey {
    pipeline: PipelineId,
    package: usize,
    generation: u64,
    shapes: u64,
}

/// The crowd runtime on one [`GpuContext`].
pub struct Runtime {
    ctx: GpuContext,
    capacities: Capacities,
    options: RuntimeOptions,
    mapping: Mapping,
    packages: Vec<ResidentPackage>,
    generations: Vec<u64>,
    buffers: FrameBuffers,
    shapes: Shapes,
    pipelines: Pipelines,
    interpreters: HashMap<Outputs, Built>,
    decode: Built,
    decodes: DecodeCache,
    bounds: Built,
    budget: Built,
    scatter: Built,
    partition: Built,
    skinning: Built,
    attach: Built,
    attachments: Attachments,
    /// Culling frustum of the next frames (`None`: every instance is visible).
    frustum: Option<Frustum>,
    /// Skinned runs of the frame being built, and of the last submitted one.
    runs: Vec<SkinnedRun>,
    last_runs: Vec<SkinnedRun>,
    /// Rows of partition.wgsl's table for the frame being built (two per unit).
    table: Vec<[u32; 4]>,
    /// Per skinned batch of the last frame (first rank, skinned, seen, 0), once read
    /// ([`Runtime::finish`]).
    counts: Vec<[u32; 4]>,
    counts_pending: bool,
    groups: HashMap<GroupKey, wgpu::BindGroup>,
    staging: Staging,
    /// Motion vectors: who resets this frame, and their flags by frame slot.
    motion: MotionResets,
    reset_words: Vec<u32>,
    plan: Plan,
    /// The last submitted frame's plan (readback, raster).
    last: Plan,
    /// Scratch of `ensure_groups`, kept between frames.
    wanted: Vec<(GroupKey, usize)>,
    /// History slots claimed by the frame being validated.
    claims: SlotClaims,
    timing: Timing,
    submitted: Option<Instant>,
}

impl Runtime {
    /// Pipelines and frame buffers sized from `capacities`, with the default options.
    pub fn new(ctx: &GpuContext, capacities: Capacities) -> Result<Runtime, GpuError> {
        Runtime::with_options(ctx, capacities, RuntimeOptions::default())
    }

    pub fn with_options(
        ctx: &GpuContext,
        capacities: Capacities,
        options: RuntimeOptions,
    ) -> Result<Runtime, GpuError> {
        let device = &ctx.device;
        capacities.check(ctx)?;
        let binding_limit = capacities.binding_bytes(&ctx.limits);
        let buffers = scoped(device, "frame buffer creation", || {
            FrameBuffers::new(
                device,
                &capacities,
                binding_limit,
                options.outputs,
                &ctx.adapter.name,
            )
        })??;
        let layout = buffers.layout;
        let streams = buffers.streams.iter().map(|s| s.paging.pages).sum::<u32>()
            + buffers.layout.history.pages
            + 10;
        if streams > ctx.limits.max_storage_buffers_per_shader_stage {
            return Err(GpuError::AdapterLimit {
                adapter: ctx.adapter.name.clone(),
                what: "storage buffers per shader stage (pages of the frame streams and history)",
                have: ctx.limits.max_storage_buffers_per_shader_stage.into(),
                need: streams.into(),
            });
        }
        if !options.fk && !options.outputs.locals {
            return Err(GpuError::Wgpu {
                what: "runtime options",
                reason: "a pose pass without FK writes local poses only: enable outputs.locals"
                    .into(),
            });
        }
        let mut interpreters = HashMap::new();
        for skinned in [false, true] {
            let outputs = pose_outputs(skinned, &options);
            let built = crate::pipelines::build(device, &kernel::interpreter(&layout, outputs))
                .map_err(|reason| GpuError::Wgpu {
                    what: "interpreter pipeline",
                    reason,
                })?;
            interpreters.insert(outputs, built);
        }
        let build = |what, k| {
            crate::pipelines::build(device, &k).map_err(|reason| GpuError::Wgpu { what, reason })
        };
        let decode = build("decode pipeline", kernel::decode())?;
        let bounds = build("bounds pipeline", kernel::bounds(&layout))?;
        let budget = build("skinned budget pipeline", kernel::budget())?;
        let scatter = build("budgeted instances pipeline", kernel::scatter())?;
        let partition = build("skinned order pipeline", kernel::partition())?;
        let skinning = build(
            "skinning pipeline",
            kernel::skinning(&layout, options.outputs.motion),
        )?;
        let attach = build("attachments pipeline", kernel::attachments(&layout))?;
        Ok(Runtime {
            ctx: ctx.clone(),
            capacities,
            options,
            mapping: options
                .mapping
                .unwrap_or(Mapping::for_adapter(ctx.adapter.software)),
            packages: Vec::new(),
            generations: Vec::new(),
            shapes: Shapes::new(device),
            pipelines: Pipelines::new(ctx, options.specialise),
            interpreters,
            decode,
            decodes: DecodeCache::default(),
            bounds,
            budget,
            scatter,
            partition,
            skinning,
            attach,
            attachments: Attachments::default(),
            frustum: None,
            runs: Vec::new(),
            last_runs: Vec::new(),
            table: Vec::new(),
            counts: Vec::new(),
            counts_pending: false,
            groups: HashMap::new(),
            staging: Staging::default(),
            motion: MotionResets::new(),
            reset_words: Vec::new(),
            plan: Plan::default(),
            last: Plan::default(),
            wanted: Vec::new(),
            timing: Timing::new(ctx)?,
            submitted: None,
            buffers,
            claims: SlotClaims::default(),
        })
    }

    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    pub fn capacities(&self) -> &Capacities {
        &self.capacities
    }

    /// The pose mapping in use.
    pub fn mapping(&self) -> Mapping {
        self.mapping
    }

    pub fn options(&self) -> &RuntimeOptions {
        &self.options
    }

    /// Makes `package` resident; returns its handle.
    pub fn add_package(&mut self, package: &Package) -> Result<PackageId, GpuError> {
        let id = self.packages.len();
        let resident = scoped(&self.ctx.device, "package upload", || {
            ResidentPackage::upload(&self.ctx, id, package)
        })??;
        self.packages.push(resident);
        self.generations.push(0);
        Ok(PackageId(id))
    }

    /// Uploads a new generation of package `id` in its place (its old buffers are freed once
    /// no submitted frame uses them). On error the old generation stays resident.
    pub fn replace_package(&mut self, id: PackageId, package: &Package) -> Result<(), GpuError> {
        if id.0 >= self.packages.len() {
            return Err(GpuError::BadPackage {
                package: id.0,
                what: "is not resident".into(),
            });
        }
        let resident = scoped(&self.ctx.device, "package upload", || {
            ResidentPackage::upload(&self.ctx, id.0, package)
        })??;
        self.packages[id.0] = resident;
        self.generations[id.0] += 1;
        self.groups.retain(|k, _| k.package != id.0);
        Ok(())
    }

    pub fn package(&self, id: PackageId) -> Option<&ResidentPackage> {
        self.packages.get(id.0)
    }

    /// Bytes of GPU memory held by resident packages.
    pub fn resident_bytes(&self) -> u64 {
        self.packages.iter().map(|p| p.bytes).sum()
    }

    /// Bytes of GPU memory held by the frame buffers (sized from the capacities).
    pub fn frame_buffer_bytes(&self) -> u64 {
        self.buffers.bytes()
    }

    /// Specialised pose pipelines built so far, and the milliseconds their compilation took.
    pub fn pipelines_built(&self) -> (usize, f64) {
        (self.pipelines.built, self.pipelines.compile_ms)
    }

    /// Waits until every specialised pipeline requested so far is built (or failed), so the
    /// next frame of the same shapes runs them all.
    pub fn wait_for_pipelines(&mut self) -> Result<(), GpuError> {
        self.pipelines.wait();
        match self.pipelines.failures().next() {
            Some(reason) => Err(GpuError::Wgpu {
                what: "a specialised pose pipeline",
                reason: reason.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// Validates `batches`, uploads what varies per instance and submits the pose and skinning
    /// passes. On error nothing is submitted and the last frame's outputs stay readable.
    pub fn frame(&mut self, batches: &[Batch]) -> Result<FrameReport, GpuError> {
        self.ctx.check()?;
        // Counts first: a frame over the capacity is refused before its programs are read.
        self.check_capacities(batches)?;
        let packages = &self.packages;
        throng_cpu_ref::frame::validate(
            batches,
            &self.capacities.program_limits(),
            |id| packages.get(id.0).map(|p| &p.package),
            &mut self.claims,
            true,
        )?;
        let last = &self.last.batches;
        throng_cpu_ref::frame::check_keeps(batches, |b| {
            last.get(b).map(|s| BatchLayout {
                package: PackageId(s.package),
                skeleton: s.skeleton,
                skin: s.skin,
                instances: s.count as usize,
            })
        })?;
        if self.options.outputs.motion {
            self.motion.frame(batches);
        }
        self.pipelines.poll();
        let page = self
            .buffers
            .stream(Stream::Components)
            .paging
            .page_instances;
        self.plan
            .build(batches, &self.packages, &mut self.shapes, page);
        let limits = crate::decode::Limits {
            policy: self.options.decode,
            capacity: self.buffers.decoded_samples,
            max_x: self.ctx.limits.max_compute_workgroups_per_dimension,
        };
        (self.decodes).plan(&self.plan, &self.packages, &self.generations, limits);
        let skinned = self
            .plan
            .batches
            .iter()
            .filter(|b| b.skin.is_some())
            .count();
        let units: usize = (self.plan.batches.iter())
            .filter_map(|b| self.packages[b.package].skins.get(b.skin? as usize))
            .map(|s| s.tiers.len())
            .sum();
        let attach = usize::from(skinned > 0 && !self.attachments.is_empty());
        let dispatches = self.decodes.dispatches.len()
            + self.plan.poses.len()
            + skinned
            + units
            + 3 * usize::from(skinned > 0)
            + attach;
        if dispatches > self.capacities.dispatches as usize {
            return Err(GpuError::Capacity {
                what: "dispatches (packages decoding clips + batches × program shapes + skinned batches × (1 + levels of detail) + 3, + 1 with attachments)",
                needed: dispatches as u64,
                capacity: self.capacities.dispatches.into(),
            });
        }
        self.plan_runs();
        self.choose_paths();
        let mut report = FrameReport {
            batches: batches.len(),
            chunks: batches.len(),
            instances: self.plan.slots() as usize,
            mapping: Some(self.mapping),
            decoded_clips: self.decodes.clips,
            decoded_samples: self.decodes.samples,
            cached_clips: self.decodes.cached_clips,
            decode_cache_samples: self.decodes.in_use(),
            ..FrameReport::default()
        };
        self.staging
            .stage(&self.plan, batches, &self.buffers, &mut report);
        if self.options.outputs.motion {
            self.upload_resets();
        }
        self.stage_params();
        self.shapes.upload(&self.ctx)?;
        let submitted = self.submit(&mut report);
        if submitted.is_ok() {
            self.decodes.commit();
            std::mem::swap(&mut self.plan, &mut self.last);
            std::mem::swap(&mut self.runs, &mut self.last_runs);
            self.counts_pending = skinned > 0;
            self.counts.clear();
        }
        submitted.map(|()| report)
    }

    /// Culls skinned instances of the next frames against `frustum` (scene space): only those
    /// whose animated bounds meet it are skinned and drawn. `None` (the default) keeps all.
    pub fn set_frustum(&mut self, frustum: Option<Frustum>) {
        self.frustum = frustum;
    }

    /// Props on joints from the next frame on ([`crate::attach`]): every skinned instance of a
    /// batch of an attachment's (package, skin) carries its prop, placed from its palette by
    /// one dispatch for all props; [`crate::draw::CrowdPass`] draws them. An empty list
    /// removes them. On error (a package not resident, a joint outside the skin's palette, a
    /// bad mesh, more than [`crate::attach::MAX_ATTACHMENTS`]) the attachments stay as they
    /// were.
    pub fn set_attachments(&mut self, attachments: &[Attachment]) -> Result<(), GpuError> {
        let limit = self.capacities.binding_bytes(&self.ctx.limits);
        let sizes = (
            u64::from(self.capacities.dispatches),
            u64::from(self.capacities.skinned_instances),
            limit,
        );
        let device = &self.ctx.device;
        let buffers = scoped(device, "attachment buffer creation", || {
            (self.attachments).set(device, attachments, &self.packages, sizes)
        })??;
        self.buffers.attach = buffers;
        self.groups.retain(|k, _| k.pipeline != PipelineId::Attach);
        Ok(())
    }

    /// The attachments set by [`Runtime::set_attachments`].
    pub fn attachments(&self) -> &[Attachment] {
        &self.attachments.list
    }

    /// Changes each time [`Runtime::set_attachments`] succeeds.
    pub fn attachment_generation(&self) -> u64 {
        self.attachments.generation
    }

    /// The last frame's prop transforms: per attachment `a`, from element
    /// `a · Capacities::skinned_instances`, one per rank of the skinned pool (three
    /// `vec4<f32>` rows of a 3×4 prop → scene matrix; zero where the attachment does not
    /// apply).
    pub fn props_buffer(&self) -> &wgpu::Buffer {
        &self.buffers.attach.props
    }

    /// Per attachment its `DrawIndexedIndirectArgs` (20 bytes from `20 a`): its mesh's
    /// indices, and as instances the last frame's skinned count.
    pub fn prop_draws_buffer(&self) -> &wgpu::Buffer {
        &self.buffers.attach.draws
    }

    /// Reads back the last frame's props (for tests and tools; it waits for the GPU): per
    /// attachment, per skinned instance in rank order, its frame slot and its prop's scene
    /// transform.
    pub fn read_props(&self) -> Result<Vec<Vec<PlacedProp>>, GpuError> {
        if self.submitted.is_none() {
            return Err(GpuError::NothingToRead);
        }
        let n = self.attachments.list.len() as u64;
        let words = |b, count| crate::readback::words(&self.ctx, b, 0, count);
        let attach = &self.buffers.attach;
        let draws = words(&attach.draws, 5 * n)?;
        let pool = u64::from(self.capacities.skinned_instances);
        let props = words(&attach.props, PROP_BYTES / 4 * n * pool)?;
        let order = words(&self.buffers.cull.order, pool)?;
        let rows: Vec<AffineRows> = bytemuck::pod_collect_to_vec(&props);
        Ok((0..n as usize)
            .map(|a| {
                let count = draws.get(5 * a + 1).map_or(0, |&c| c.min(pool as u32)) as usize;
                let first = a * pool as usize;
                (order.iter().zip(&rows[first..first + count]))
                    .map(|(&slot, m)| {
                        let applies = m.rows.iter().flatten().any(|&x| x != 0.0);
                        PlacedProp {
                            slot,
                            transform: applies.then(|| Affine3A::from(*m)),
                        }
                    })
                    .collect()
            })
            .collect())
    }

    /// The skinned runs of the frame being planned (one per unit the skin has and page of the
    /// skinned pool), and budget.wgsl's rows: per unit (first count, bounds workgroups,
    /// skinning workgroups along x, triangle indices), then (first index, 0, 0, 0).
    fn plan_runs(&mut self) {
        let stream = self.buffers.stream(Stream::Skinned);
        let cull = &self.buffers.cull;
        let per = stream.paging.page_instances;
        self.runs.clear();
        self.table.clear();
        let mut group = 0u32;
        let skinned = self.plan.batches.iter().enumerate();
        for (counter, (b, batch)) in skinned.filter(|(_, b)| b.skin.is_some()).enumerate() {
            let skin = batch
                .skin
                .and_then(|k| self.packages[batch.package].skins.get(k as usize));
            let tiers = skin.map_or(&[][..], |s| &s.tiers);
            let groups = batch.count.div_ceil(self.bounds.workgroup);
            for t in 0..LOD_TIERS {
                let Some(tier) = tiers.get(t as usize) else {
                    self.table.extend([[group, groups, 0, 0], [0; 4]]);
                    continue;
                };
                let x = crate::record::skinning_groups(&self.skinning, tier.vertex_count);
                self.table.extend([
                    [group, groups, x, tier.index_count],
                    [tier.first_index, 0, 0, 0],
                ]);
                let unit = counter as u32 * LOD_TIERS + t;
                for (page, buffer) in stream.pages.iter().enumerate() {
                    let draw = unit * cull.pages + page as u32;
                    self.runs.push(SkinnedRun {
                        batch: b,
                        lod: t as u8,
                        page,
                        offset: 0,
                        size: buffer.size(),
                        first_rank: page as u32 * per,
                        count: per,
                        stride: stream.paging.stride,
                        vertex_count: tier.vertex_count,
                        draw_args: 4 * u64::from(cull.draw_base() + 5 * draw),
                        first_at: cull.rank_base() + draw,
                    });
                }
            }
            group += groups;
        }
    }

    /// Instances, per-instance sizes and skinned slots against the declared capacities.
    fn check_capacities(&self, batches: &[Batch]) -> Result<(), GpuError> {
        let c = &self.capacities;
        let instances: u64 = batches.iter().map(|b| b.instances.len() as u64).sum();
        let over = |what, needed: u64, capacity: u32| {
            (needed > u64::from(capacity)).then_some(GpuError::Capacity {
                what,
                needed,
                capacity: capacity.into(),
            })
        };
        if let Some(e) = over("instances", instances, c.instances) {
            return Err(e);
        }
        if !self.options.fk {
            if let Some(b) = batches.iter().position(|b| b.skin.is_some()) {
                return Err(GpuError::Frame(throng_cpu_ref::FrameError::BadBatch {
                    batch: b,
                    what: "this runtime's pose pass stops before FK, so it skins nothing: give batches without a skin".into(),
                }));
            }
        }
        for b in batches {
            let Some(p) = self.packages.get(b.package.0) else {
                continue;
            };
            let joints = p.skeleton(b.skeleton).map_or(0, |s| s.joints);
            let skin = b.skin.and_then(|k| p.skins.get(k as usize));
            let checks = [
                over("joints of one skeleton", joints.into(), c.joints),
                over(
                    "palette entries of one skin",
                    skin.map_or(0, |s| s.len).into(),
                    c.palette,
                ),
                over(
                    "vertices of one skin",
                    skin.map_or(0, |s| s.vertex_count).into(),
                    c.vertices,
                ),
            ];
            if let Some(e) = checks.into_iter().flatten().next() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Step 3: per pose dispatch, its specialised pipeline if built, else the interpreter.
    fn choose_paths(&mut self) {
        let specialise = self.options.specialise;
        let blocking = specialise == Specialise::Blocking;
        for d in &mut self.plan.poses {
            d.path = PosePath::Interpreter;
            if specialise == Specialise::Never {
                continue;
            }
            let slots = self.plan.batches[d.batch];
            let decoded = decoded(&self.decodes, &self.shapes, d.shape, &slots);
            let Some(key) = specialised_key(self.mapping, d.shape, &slots, &self.options, decoded)
            else {
                continue;
            };
            let (layout, shape) = (
                &self.buffers.layout,
                &self.shapes.entries[d.shape as usize].shape,
            );
            let request = blocking || d.count >= crate::pipelines::MIN_INSTANCES;
            let ready =
                self.pipelines
                    .get(key, &self.ctx.device, (request, blocking), || {
                        match key.form {
                            Form::Thread { .. } => {
                                kernel::thread(layout, key.outputs, shape, key.decoded)
                            }
                            Form::Group {
                                lanes, instances, ..
                            } => kernel::group(
                                layout,
                                key.outputs,
                                shape,
                                (lanes, instances),
                                key.decoded,
                            ),
                        }
                    });
            if ready.is_some() {
                d.path = match key.form {
                    Form::Thread { .. } => PosePath::Thread,
                    Form::Group { .. } => PosePath::Workgroup,
                };
            }
        }
    }

    /// Parameters of every dispatch, in recording order: decode dispatches, pose dispatches,
    /// then bounds, the budget and the skinned order, then skinning.
    fn stage_params(&mut self) {
        for d in &self.decodes.dispatches {
            self.staging.params(bytemuck::bytes_of(&d.params));
        }
        let mut counter = 0u32;
        for d in &self.plan.poses {
            let slots = self.plan.batches[d.batch];
            let p = &self.packages[slots.package];
            let sk = p.skeleton(slots.skeleton).copied().unwrap_or_default();
            let skin = slots.skin.and_then(|k| p.skins.get(k as usize));
            let entry = &self.shapes.entries[d.shape as usize];
            let params = PoseParams {
                count: d.count,
                record_base: d.record_base,
                record_stride: d.stride,
                joint_count: sk.joints,
                clip_base: 0,
                parent_base: sk.parent_base,
                depth_base: sk.depth_base,
                rest_base: sk.rest_base,
                skin_len: skin.map_or(0, |s| s.len),
                skin_joint_base: skin.map_or(0, |s| s.joint_base),
                skin_range_base: skin.map_or(0, |s| s.range_base),
                skin_order_base: skin.map_or(0, |s| s.order_base),
                ibm_base: skin.map_or(0, |s| s.ibm_base),
                mask_base: p.mask_base,
                shape_base: entry.base,
                shape_ops: entry.shape.ops.len() as u32,
                max_depth: sk.max_depth,
                lod_base: sk.lod(d.lod).0,
                held_base: sk.lod(d.lod).1,
                pad: [0; 1],
            };
            self.staging.params(bytemuck::bytes_of(&params));
        }
        for slots in self.plan.batches.iter().filter(|b| b.skin.is_some()) {
            let skin = slots
                .skin
                .and_then(|k| self.packages[slots.package].skins.get(k as usize));
            let params = BoundsParams {
                count: slots.count,
                first_slot: slots.first_slot,
                box_base: skin.map_or(0, |s| s.box_base),
                entry_base: skin.map_or(0, |s| s.entry_base),
                boxes: skin.map_or(0, |s| s.boxes),
                cull: u32::from(self.frustum.is_some()),
                group_base: self.table[(2 * LOD_TIERS * counter) as usize][0],
                pad: 0,
                planes: self
                    .frustum
                    .map_or([[0.0; 4]; 6], |f| f.planes.map(|p| p.to_array())),
            };
            self.staging.params(bytemuck::bytes_of(&params));
            counter += 1;
        }
        let rows = self.ctx.limits.max_compute_workgroups_per_dimension;
        if counter > 0 {
            let cull = &self.buffers.cull;
            let stream = self.buffers.stream(Stream::Skinned);
            let budget = BudgetParams {
                batches: counter,
                pool: self.capacities.skinned_instances,
                batch_base: cull.batch_base(),
                pad: 0,
            };
            self.staging.params(bytemuck::bytes_of(&budget));
            let scatter = ScatterParams {
                slots: self.plan.slots(),
                pool: self.capacities.skinned_instances,
                pad: [0; 2],
            };
            self.staging.params(bytemuck::bytes_of(&scatter));
            let partition = PartitionParams {
                batches: counter,
                page_instances: stream.paging.page_instances,
                pages: cull.pages,
                rows,
                draw_base: cull.draw_base(),
                rank_base: cull.rank_base(),
                batch_base: cull.batch_base(),
                pad: 0,
            };
            self.staging.params(bytemuck::bytes_of(&partition));
        }
        for (counter, slots) in self
            .plan
            .batches
            .iter()
            .filter(|b| b.skin.is_some())
            .enumerate()
        {
            let skin = slots
                .skin
                .and_then(|k| self.packages[slots.package].skins.get(k as usize));
            for (t, tier) in skin.map_or(&[][..], |s| &s.tiers).iter().enumerate() {
                let params = SkinParams {
                    unit: counter as u32 * LOD_TIERS + t as u32,
                    vertex_base: tier.vertex_base,
                    vertex_count: tier.vertex_count,
                    skin_len: slots.palette_len,
                    rows,
                    pad: [0; 3],
                };
                self.staging.params(bytemuck::bytes_of(&params));
            }
        }
        if !self.attachments.is_empty() {
            let skinned = self.plan.batches.iter().filter(|b| b.skin.is_some());
            (self.attachments).stage(skinned.map(|b| (b.package, b.skin)));
            if counter > 0 {
                let params = AttachParams {
                    batches: counter,
                    pool: self.capacities.skinned_instances,
                    attachments: self.attachments.list.len() as u32,
                    batch_base: self.buffers.cull.batch_base(),
                };
                self.staging.params(bytemuck::bytes_of(&params));
            }
        }
    }

    /// Steps 4–5: uploads, bind groups, recording and submission.
    fn submit(&mut self, report: &mut FrameReport) -> Result<(), GpuError> {
        let (device, queue) = (self.ctx.device.clone(), self.ctx.queue.clone());
        self.staging.upload(&queue, &self.buffers, report);
        if !self.table.is_empty() {
            let bytes: &[u8] = bytemuck::cast_slice(&self.table);
            queue.write_buffer(&self.buffers.cull.table, 0, bytes);
            report.upload_bytes += bytes.len() as u64;
        }
        report.upload_bytes += self.attachments.upload(&queue, &self.buffers.attach);
        report.upload_bytes += self.decodes.upload(&queue, &self.packages);
        scoped(&device, "bind group creation", || self.ensure_groups())??;
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("throng frame"),
        });
        let recorded = scoped(&device, "frame recording", || {
            self.record(&mut encoder, report)
        })?;
        recorded?;
        self.timing.resolve(&mut encoder);
        scoped(&device, "frame submission", || {
            queue.submit([encoder.finish()])
        })?;
        self.submitted = Some(Instant::now());
        let poses = &self.plan.poses;
        // Distinct shapes, without allocating (a frame has few dispatches).
        report.shapes = (0..poses.len())
            .filter(|&i| poses[..i].iter().all(|d| d.shape != poses[i].shape))
            .count();
        report.pending_pipelines = self.pipelines.pending();
        self.timing.end_frame()
    }

    /// The pipeline of a pose dispatch.
    fn pose_pipeline(
        &self,
        batch: &BatchSlots,
        shape: u32,
        path: PosePath,
    ) -> Option<(PipelineId, &Built)> {
        let outputs = pose_outputs(batch.skin.is_some(), &self.options);
        if path != PosePath::Interpreter {
            let decoded = decoded(&self.decodes, &self.shapes, shape, batch);
            let key = specialised_key(self.mapping, shape, batch, &self.options, decoded)?;
            return self
                .pipelines
                .ready(&key)
                .map(|b| (PipelineId::Specialised(key), b));
        }
        self.interpreters
            .get(&outputs)
            .map(|b| (PipelineId::Interpreter(outputs), b))
    }

    fn group_key(&self, pipeline: PipelineId, package: usize) -> GroupKey {
        GroupKey {
            pipeline,
            package,
            generation: self.generations[package],
            shapes: self.shapes.generation,
        }
    }

    /// Builds the bind groups this frame's dispatches need and the cache lacks.
    fn ensure_groups(&mut self) -> Result<(), GpuError> {
        let mut wanted = std::mem::take(&mut self.wanted);
        wanted.clear();
        for d in &self.decodes.dispatches {
            let package = self.plan.batches[d.batch].package;
            wanted.push((self.group_key(PipelineId::Decode, package), d.batch));
        }
        for d in &self.plan.poses {
            let batch = self.plan.batches[d.batch];
            if let Some((id, _)) = self.pose_pipeline(&batch, d.shape, d.path) {
                wanted.push((self.group_key(id, batch.package), d.batch));
            }
        }
        for (b, batch) in self
            .plan
            .batches
            .iter()
            .enumerate()
            .filter(|(_, b)| b.skin.is_some())
        {
            for id in [PipelineId::Bounds, PipelineId::Skinning] {
                wanted.push((self.group_key(id, batch.package), b));
            }
        }
        if let Some(b) = self.plan.batches.iter().position(|b| b.skin.is_some()) {
            let package = self.plan.batches[b].package;
            for id in [
                PipelineId::Budget,
                PipelineId::Scatter,
                PipelineId::Partition,
            ] {
                wanted.push((self.group_key(id, package), b));
            }
            if !self.attachments.is_empty() {
                wanted.push((self.group_key(PipelineId::Attach, package), b));
            }
        }
        for &(key, b) in &wanted {
            if self.groups.contains_key(&key) {
                continue;
            }
            let batch = self.plan.batches[b];
            let built = match key.pipeline {
                PipelineId::Decode => &self.decode,
                PipelineId::Bounds => &self.bounds,
                PipelineId::Budget => &self.budget,
                PipelineId::Scatter => &self.scatter,
                PipelineId::Partition => &self.partition,
                PipelineId::Skinning => &self.skinning,
                PipelineId::Attach => &self.attach,
                PipelineId::Interpreter(o) => &self.interpreters[&o],
                PipelineId::Specialised(k) => self.pipelines.ready(&k).ok_or(GpuError::Wgpu {
                    what: "frame recording",
                    reason: "a specialised pipeline vanished".into(),
                })?,
            };
            let group = crate::record::bind_group(
                &self.ctx.device,
                built,
                &self.packages[batch.package],
                &self.buffers,
                &self.shapes,
            );
            self.groups.insert(key, group);
        }
        self.wanted = wanted;
        Ok(())
    }

    fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        report: &mut FrameReport,
    ) -> Result<(), GpuError> {
        let max_x = self.ctx.limits.max_compute_workgroups_per_dimension;
        let missing = || GpuError::Wgpu {
            what: "frame recording",
            reason: "a dispatch has no bind group".into(),
        };
        let mut slot = 0u32;
        let cull = &self.buffers.cull;
        let skinned = self
            .plan
            .batches
            .iter()
            .filter(|b| b.skin.is_some())
            .count() as u64;
        if skinned > 0 {
            encoder.clear_buffer(&cull.marks, 0, Some(4 * u64::from(self.plan.slots())));
        }
        if !self.decodes.dispatches.is_empty() {
            let (mut pass, query) = self.timing.begin(encoder, "decode");
            for d in &self.decodes.dispatches {
                let package = self.plan.batches[d.batch].package;
                let group = self
                    .groups
                    .get(&self.group_key(PipelineId::Decode, package))
                    .ok_or_else(missing)?;
                pass.set_pipeline(&self.decode.pipeline);
                pass.set_bind_group(0, group, &[slot * OFFSET_ALIGNMENT as u32]);
                pass.dispatch_workgroups(d.groups, d.params.jobs, 1);
                slot += 1;
                report.decode_dispatches += 1;
            }
            drop(pass);
            self.timing.end(encoder, query);
        }
        {
            let (mut pass, query) = self.timing.begin(encoder, "pose");
            for d in &self.plan.poses {
                let batch = self.plan.batches[d.batch];
                let (id, built) = self
                    .pose_pipeline(&batch, d.shape, d.path)
                    .ok_or_else(missing)?;
                let group = self
                    .groups
                    .get(&self.group_key(id, batch.package))
                    .ok_or_else(missing)?;
                let per_group = match d.path {
                    PosePath::Workgroup => kernel::group_size(batch.joints).map_or(1, |(_, n)| n),
                    _ => built.workgroup,
                };
                crate::record::dispatch_1d(
                    &mut pass,
                    &built.pipeline,
                    group,
                    slot,
                    d.count.div_ceil(per_group).into(),
                    max_x,
                );
                slot += 1;
                report.pose_dispatches += 1;
                match d.path {
                    PosePath::Interpreter => report.interpreter_dispatches += 1,
                    _ => report.specialised_dispatches += 1,
                }
            }
            drop(pass);
            self.timing.end(encoder, query);
        }
        if self.plan.batches.iter().any(|b| b.skin.is_some()) {
            let (mut pass, query) = self.timing.begin(encoder, "bounds");
            for batch in self.plan.batches.iter().filter(|b| b.skin.is_some()) {
                let group = self
                    .groups
                    .get(&self.group_key(PipelineId::Bounds, batch.package))
                    .ok_or_else(missing)?;
                crate::record::dispatch_1d(
                    &mut pass,
                    &self.bounds.pipeline,
                    group,
                    slot,
                    batch.count.div_ceil(self.bounds.workgroup).into(),
                    max_x,
                );
                slot += 1;
                report.bounds_dispatches += 1;
            }
            let first = self.plan.batches.iter().find(|b| b.skin.is_some());
            let group = |id| {
                first
                    .and_then(|b| self.groups.get(&self.group_key(id, b.package)))
                    .ok_or_else(missing)
            };
            // One workgroup scans every batch's counts.
            let budget = group(PipelineId::Budget)?;
            crate::record::dispatch_1d(&mut pass, &self.budget.pipeline, budget, slot, 1, max_x);
            let scatter = group(PipelineId::Scatter)?;
            let groups = u64::from(self.plan.slots()).div_ceil(u64::from(self.scatter.workgroup));
            crate::record::dispatch_1d(
                &mut pass,
                &self.scatter.pipeline,
                scatter,
                slot + 1,
                groups,
                max_x,
            );
            // One workgroup groups every batch's budgeted instances by level.
            let partition = group(PipelineId::Partition)?;
            crate::record::dispatch_1d(
                &mut pass,
                &self.partition.pipeline,
                partition,
                slot + 2,
                1,
                max_x,
            );
            slot += 3;
            report.budget_dispatches += 3;
            drop(pass);
            self.timing.end(encoder, query);
            let (mut pass, query) = self.timing.begin(encoder, "skinning");
            let skinned_batches = self.plan.batches.iter().filter(|b| b.skin.is_some());
            for (counter, batch) in skinned_batches.enumerate() {
                let group = self
                    .groups
                    .get(&self.group_key(PipelineId::Skinning, batch.package))
                    .ok_or_else(missing)?;
                let tiers = batch
                    .skin
                    .and_then(|k| self.packages[batch.package].skins.get(k as usize))
                    .map_or(0, |s| s.tiers.len() as u64);
                for t in 0..tiers {
                    let unit = counter as u64 * u64::from(LOD_TIERS) + t;
                    pass.set_pipeline(&self.skinning.pipeline);
                    pass.set_bind_group(0, group, &[slot * OFFSET_ALIGNMENT as u32]);
                    pass.dispatch_workgroups_indirect(&cull.indirect, 12 * unit);
                    slot += 1;
                    report.skinning_dispatches += 1;
                }
            }
            drop(pass);
            self.timing.end(encoder, query);
            if !self.attachments.is_empty() {
                let group = group(PipelineId::Attach)?;
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("attachments"),
                    timestamp_writes: None,
                });
                let threads = u64::from(self.capacities.skinned_instances)
                    * self.attachments.list.len() as u64;
                let groups = threads.div_ceil(u64::from(self.attach.workgroup));
                let attach = &self.attach.pipeline;
                crate::record::dispatch_1d(&mut pass, attach, group, slot, groups, max_x);
                report.attachment_dispatches += 1;
            }
            // The units' ranks, then the batches' (visibility: skinned per level, seen per batch).
            let units = 16 * skinned * u64::from(LOD_TIERS);
            encoder.copy_buffer_to_buffer(&cull.ranks, 0, &cull.counts, 0, units);
            let batches = 4 * u64::from(cull.batch_base());
            encoder.copy_buffer_to_buffer(&cull.ranks, batches, &cull.counts, units, 16 * skinned);
            if self.options.outputs.motion {
                self.keep_for_motion(encoder);
            }
        }
        report.dispatches = report.decode_dispatches
            + report.pose_dispatches
            + report.bounds_dispatches
            + report.budget_dispatches
            + report.skinning_dispatches
            + report.attachment_dispatches;
        Ok(())
    }

    /// Motion vectors: instance `instance` of batch `batch` of the next frame has no motion (a
    /// teleport; throng-cpu-ref `motion`).
    pub fn reset_motion(&mut self, batch: usize, instance: usize) {
        self.motion.reset(batch, instance);
    }

    /// This frame's motion resets by frame slot, uploaded.
    fn upload_resets(&mut self) {
        self.reset_words.clear();
        for (b, slots) in self.plan.batches.iter().enumerate() {
            let resets = self.motion.batch(b);
            self.reset_words.extend(
                (0..slots.count as usize).map(|i| u32::from(resets.get(i) != Some(&false))),
            );
        }
        if !self.reset_words.is_empty() {
            let words: &[u8] = bytemuck::cast_slice(&self.reset_words);
            self.ctx.queue.write_buffer(&self.buffers.resets, 0, words);
        }
    }

    /// At the end of a frame, its palettes and placements become the next frame's last ones.
    fn keep_for_motion(&self, encoder: &mut wgpu::CommandEncoder) {
        let b = &self.buffers;
        let (now, last) = (b.stream(Stream::Palettes), b.stream(Stream::LastPalettes));
        for (from, to) in now.pages.iter().zip(&last.pages) {
            encoder.copy_buffer_to_buffer(from, 0, to, 0, from.size().min(to.size()));
        }
        let bytes = b.placements.size().min(b.last_placements.size());
        encoder.copy_buffer_to_buffer(&b.placements, 0, &b.last_placements, 0, bytes);
    }

    /// Waits for the last frame and returns its pass times.
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
        self.read_counts()?;
        // A frame's decode pass comes before its pose pass, and only some frames have one.
        let mut decode = None;
        self.timing.collect(&self.ctx, |label, ms| match label {
            "decode" => decode = Some(ms),
            "pose" => (times.pose_ms, times.decode_ms) = (ms, decode.take().unwrap_or(0.0)),
            "bounds" => times.bounds_ms = ms,
            "skinning" => times.skinning_ms = ms,
            _ => {}
        });
        Ok(times)
    }

    /// The last frame's batches: slots and sizes.
    pub fn batches(&self) -> &[BatchSlots] {
        &self.last.batches
    }

    /// Reads back the last frame's outputs, one per batch (for tests and tools; it waits for
    /// the GPU).
    pub fn readback(&self) -> Result<Vec<BatchOutput>, GpuError> {
        if self.submitted.is_none() {
            return Err(GpuError::NothingToRead);
        }
        crate::readback::read(
            &self.ctx,
            &self.buffers,
            &self.last.batches,
            &self.skinned_ranges()?,
            self.options.outputs,
        )
    }

    /// The skinned vertices of the last frame, one run per (skinned batch, page of the skinned
    /// pool). Each run's drawn instances (its share of the batch's skinned ones, in frame-slot
    /// order) are in its draw arguments ([`SkinnedRun::draw_args`]).
    pub fn skinned_runs(&self) -> &[SkinnedRun] {
        &self.last_runs
    }

    /// The indirect arguments the last frame wrote (draw arguments at
    /// [`SkinnedRun::draw_args`]: `DrawIndexedIndirectArgs`).
    pub fn indirect_buffer(&self) -> &wgpu::Buffer {
        &self.buffers.cull.indirect
    }

    /// The last frame's ranks (u32): a run's first instance within its page at
    /// [`SkinnedRun::first_at`].
    pub fn ranks_buffer(&self) -> &wgpu::Buffer {
        &self.buffers.cull.ranks
    }

    /// Per rank of the skinned pool, the frame slot skinned there (u32; the raster pass reads
    /// it to tint instances by frame slot).
    pub fn order_buffer(&self) -> &wgpu::Buffer {
        &self.buffers.cull.order
    }

    /// Copies the last frame's per-batch ranks out of their readback buffer (once per frame).
    fn read_counts(&mut self) -> Result<(), GpuError> {
        if !self.counts_pending {
            return Ok(());
        }
        self.counts_pending = false;
        let skinned = self
            .last
            .batches
            .iter()
            .filter(|b| b.skin.is_some())
            .count();
        let buffer = &self.buffers.cull.counts;
        let (tx, rx) = std::sync::mpsc::channel();
        let range = ..16 * skinned as u64 * (u64::from(LOD_TIERS) + 1);
        buffer.map_async(wgpu::MapMode::Read, range, move |r| {
            let _ = tx.send(r);
        });
        self.ctx.wait()?;
        let failed = |reason: String| GpuError::Readback {
            what: "skinned counts",
            reason,
        };
        rx.recv()
            .map_err(|e| failed(e.to_string()))?
            .map_err(|e| failed(e.to_string()))?;
        {
            let view = buffer
                .get_mapped_range(range)
                .map_err(|e| failed(e.to_string()))?;
            self.counts.clear();
            self.counts
                .extend(bytemuck::cast_slice::<u8, [u32; 4]>(&view));
        }
        buffer.unmap();
        Ok(())
    }

    /// What culling and the budget kept in the last frame: visible and skinned instances, their
    /// skinned vertices and triangles. Read once per frame by [`Runtime::finish`] (empty before).
    pub fn visibility(&self) -> Visibility {
        let mut v = Visibility::default();
        let skinned = || self.last.batches.iter().filter(|b| b.skin.is_some());
        let (units, batches) = self
            .counts
            .split_at((skinned().count() * LOD_TIERS as usize).min(self.counts.len()));
        let per_batch = units.chunks_exact(LOD_TIERS as usize).zip(batches);
        for (batch, (units, &[_, drawn, seen, _])) in skinned().zip(per_batch) {
            let tiers = batch
                .skin
                .and_then(|k| self.packages.get(batch.package)?.skins.get(k as usize))
                .map_or(&[][..], |s| &s.tiers);
            for (t, (tier, &[_, skinned, ..])) in tiers.iter().zip(units).enumerate() {
                let triangles = u64::from(skinned) * u64::from(tier.index_count / 3);
                v.skinned_vertices += u64::from(skinned) * u64::from(tier.vertex_count);
                v.triangles += triangles;
                v.per_level[t].0 += u64::from(skinned);
                v.per_level[t].1 += triangles;
            }
            v.visible += u64::from(seen);
            v.skinned += u64::from(drawn);
            v.per_batch.push((seen, drawn));
        }
        v.over_budget = v.visible - v.skinned;
        v
    }

    /// Reads back the frame slots the last frame skinned, per skinned batch, ascending: the
    /// order of its skinned output in [`Runtime::readback`] (for tests and tools; it waits for
    /// the GPU).
    pub fn skinned_slots(&self) -> Result<Vec<Vec<u32>>, GpuError> {
        Ok(self
            .skinned_ranges()?
            .into_iter()
            .flatten()
            .map(|share| share.sorted_slots())
            .collect())
    }

    /// Per batch of the last frame, its share of the skinned pool for a skinned one.
    fn skinned_ranges(&self) -> Result<Vec<Option<SkinnedShare<'_>>>, GpuError> {
        if self.submitted.is_none() {
            return Err(GpuError::NothingToRead);
        }
        let skinned = self
            .last
            .batches
            .iter()
            .filter(|b| b.skin.is_some())
            .count() as u64;
        let units = 4 * skinned * u64::from(LOD_TIERS);
        let ranks = crate::readback::words(&self.ctx, &self.buffers.cull.ranks, 0, units)?;
        let order = &self.buffers.cull.order;
        let order = crate::readback::words(&self.ctx, order, 0, order.size() / 4)?;
        let mut at = ranks.chunks_exact(4 * LOD_TIERS as usize);
        Ok(self
            .last
            .batches
            .iter()
            .map(|b| {
                let skin = b.skin?;
                let unit = at.next()?;
                let tiers = &self
                    .packages
                    .get(b.package)?
                    .skins
                    .get(skin as usize)?
                    .tiers;
                let counts: Vec<u32> = unit.chunks_exact(4).map(|r| r[1]).collect();
                let first = unit[0] as usize;
                let n = counts.iter().sum::<u32>() as usize;
                Some(SkinnedShare {
                    first: unit[0],
                    slots: order.get(first..first + n).unwrap_or(&[]).to_vec(),
                    counts,
                    tiers,
                })
            })
            .collect())
    }

    /// Pages of the skinned-vertex stream ([`SkinnedRun::page`] indexes them).
    pub fn skinned_pages(&self) -> &[wgpu::Buffer] {
        &self.buffers.stream(Stream::Skinned).pages
    }

    /// Pages of the palette stream, for a renderer that skins in its own vertex shader: per
    /// frame slot of a skinned batch, `Capacities::palette` entries of the skin's palette
    /// (component × inverse bind, component space, placement not applied), each an `Affine`
    /// of three `vec4<f32>` rows of a 3×4 matrix (48 B). [`Runtime::palette_at`] locates a slot.
    pub fn palette_pages(&self) -> &[wgpu::Buffer] {
        &self.buffers.stream(Stream::Palettes).pages
    }

    /// Page and byte offset of frame slot `slot`'s first palette entry.
    pub fn palette_at(&self, slot: u32) -> (usize, u64) {
        self.buffers.stream(Stream::Palettes).locate(slot, 0)
    }

    /// The last frame's placements (component space → scene) by frame slot, each three
    /// `vec4<f32>` rows of a 3×4 matrix (48 B), written for every instance of a skinned batch.
    pub fn placements_buffer(&self) -> &wgpu::Buffer {
        &self.buffers.placements
    }

    /// With motion vectors (`RuntimeOptions::outputs.motion`), pages of the previous-position
    /// stream: `vec4<f32>` per skinned vertex (w = 1), laid out as the skinned stream, so a
    /// [`SkinnedRun`]'s page, offset and size address both; `None` without motion vectors.
    pub fn previous_pages(&self) -> Option<&[wgpu::Buffer]> {
        self.options
            .outputs
            .motion
            .then(|| self.buffers.stream(Stream::Previous).pages.as_slice())
    }
}

/// The outputs the pose dispatches of a batch (with a skin when `skinned`) write.
fn pose_outputs(skinned: bool, options: &RuntimeOptions) -> Outputs {
    Outputs {
        locals: options.outputs.locals,
        components: options.fk,
        palettes: options.fk && skinned,
    }
}

/// Whether a dispatch of `shape` in `batch` reads compressed clips from the decode cache: the
/// frame decoded its package's and it samples some.
fn decoded(decodes: &DecodeCache, shapes: &Shapes, shape: u32, batch: &BatchSlots) -> bool {
    decodes.decoded(batch.package)
        && shapes
            .entries
            .get(shape as usize)
            .is_some_and(|e| e.shape.samples_compressed())
}

/// The specialised pipeline a dispatch of `shape` in `batch` would use under `mapping`, its
/// compressed samples `decoded` or not; `None` when its skeleton is too large for the mapping.
fn specialised_key(
    mapping: Mapping,
    shape: u32,
    batch: &BatchSlots,
    options: &RuntimeOptions,
    decoded: bool,
) -> Option<Key> {
    let outputs = pose_outputs(batch.skin.is_some(), options);
    let form = match mapping {
        Mapping::Thread => Form::Thread { shape },
        Mapping::Workgroup => {
            let (lanes, instances) = kernel::group_size(batch.joints)?;
            Form::Group {
                shape,
                lanes,
                instances,
            }
        }
    };
    Some(Key {
        form,
        outputs,
        decoded,
    })
}
