//! The crowd runtime: resident packages in one arena, frames of batches of any kinds, one pose
//! dispatch per program shape and a fixed few more (docs/gpu.md).
//!
//! A frame, in order:
//! 1. validate every batch and instance (throng-cpu-ref `frame::validate`) and the capacities;
//! 2. plan: each batch's kind ([`crate::kinds`]), frame slots in batch order, instances binned by
//!    program shape ([`crate::plan`]), and the clips of the decode cache ([`crate::decode`]);
//! 3. choose each pose dispatch's pipeline: the specialised one for the runtime's [`Mapping`]
//!    when it is built, else the interpreter ([`crate::pipelines`]);
//! 4. stage records, kind words, placements and hero palettes ([`crate::staging`]);
//! 5. each pass prepares its parameters and bind groups ([`crate::passes`]); upload;
//! 6. record the passes — decode, pose, cull (bounds and culling against the frustum set by
//!    [`Runtime::set_frustum`], the skinned budget and order), skin and, with attachments
//!    ([`Runtime::set_attachments`]), attach — and submit;
//! 7. at [`Runtime::finish`], read the per-unit counts the frame copied out
//!    ([`Runtime::visibility`]).
//!
//! A refused frame submits nothing and leaves the last frame's outputs readable. A steady
//! frame allocates nothing of its own (wgpu and wgpu-profiler allocate inside each submission).

use std::time::Instant;

use glam::Affine3A;

use serde::Serialize;
use throng_cpu_ref::bounds::Frustum;
use throng_cpu_ref::impostor::Impostor;
use throng_cpu_ref::motion::MotionResets;
use throng_cpu_ref::retained::Instances;
use throng_cpu_ref::{Batch, BatchLayout, BatchOutput, LoopPolicy, Package, PackageId, SlotClaims};
use throng_shaders::prelude::{FAR_KIND, LOD_TIERS, NO_CELL};
use throng_shaders::{PresentParams, Stream, NO_KIND};

use crate::attach::{Attachment, Attachments, PlacedProp, PROP_BYTES};
use crate::capacity::Capacities;
use crate::context::scoped;
use crate::decode::{Decode, DecodeCache};
use crate::frame_buffers::{FrameBuffers, FAR_MAX_CLIPS};
use crate::impostor::Card;
use crate::kinds::{KindKey, Kinds};
use crate::layout::AffineRows;
use crate::passes::attach::AttachPass;
use crate::passes::cull::CullPass;
use crate::passes::decode::DecodePass;
use crate::passes::pose::PosePass;
use crate::passes::present::PresentPass;
use crate::passes::skin::SkinPass;
use crate::passes::{Frame, Params};
use crate::pipelines::{Mapping, Specialise};
use crate::plan::{BatchSlots, Plan};
use crate::readback::SkinnedShare;
use crate::resident::{Arena, ResidentPackage};
use crate::retained::Retained;
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
    /// Compute dispatches: one per program shape, and when a kind is skinned one for the
    /// bounds, four for the skinned budget (its threshold and tallies, their scan, the skinned
    /// instances and the cards of the rest, then the skinned order by unit with the indirect
    /// arguments) and one for skinning; none of them grows with the instances, kinds,
    /// packages or levels of detail.
    pub dispatches: usize,
    /// Retained instances ([`Runtime::present`]): one to blend them between their last two
    /// ticks, and on the first frame after a tick one to patch the instances whose program
    /// changed.
    pub present_dispatches: usize,
    /// One when the frame decodes clips into the decode cache, before the pose dispatches.
    pub decode_dispatches: usize,
    pub pose_dispatches: usize,
    pub bounds_dispatches: usize,
    pub budget_dispatches: usize,
    pub skinning_dispatches: usize,
    /// One when a resident skin has morph targets and the frame skins: the morph pass, over the
    /// skinning dispatch's grid.
    pub morph_dispatches: usize,
    /// One when the runtime has attachments and the frame a skinned kind: every prop of the
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
    /// CPU milliseconds of the frame's uploads and recording, and of wgpu's submission.
    pub record_ms: f64,
    pub submit_ms: f64,
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

/// One instanced draw's worth of the last frame's skinned vertices: a unit's instances (a
/// skinned kind at one level of detail) on one page of the skinned stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkinnedRun {
    /// The unit's kind, and that kind's package and skin (whose triangles the run draws).
    pub kind: u32,
    pub package: usize,
    pub skin: u32,
    /// The level of detail: its instances' skeleton LOD level, drawn with its mesh LODs.
    pub lod: u8,
    pub page: usize,
    /// Byte range of the run in the page.
    pub offset: u64,
    pub size: u64,
    /// Rank in the skinned pool of the run's page's first instance, and the page's instances
    /// (the run draws those of them its unit skinned).
    pub first_rank: u32,
    pub count: u32,
    /// Elements per instance in the stream (the run's vertex `v` of instance `i` is element
    /// `i * stride + v`).
    pub stride: u32,
    /// Vertices of the run's level ([`crate::SkinTier`]).
    pub vertex_count: u32,
    /// Byte offset in [`Runtime::indirect_buffer`] of the run's indexed-draw arguments (its
    /// level's range of the skin's indices; instances: those of the unit's skinned instances on
    /// the run's page).
    pub draw_args: u64,
    /// Where in [`Runtime::ranks_buffer`] (u32 index) the run's first instance within its page
    /// is written.
    pub first_at: u32,
    /// How far the raster pass pushes the level's surface out along its normals (its
    /// [`crate::SkinTier::shell`], scene units).
    pub shell: f32,
    /// The same instances drawn with the next coarser level's triangles, for members
    /// cross-fading between the two levels: the byte offset of its indexed-draw arguments in
    /// [`Runtime::indirect_buffer`] and that level's shell; `None` where the level has no
    /// coarser one over its vertices ([`crate::SkinTier::coarser_index_count`]).
    pub coarser: Option<(u64, f32)>,
}

/// What culling and the skinned budget kept in the last frame (after [`Runtime::finish`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Visibility {
    /// Instances of skinned kinds whose bounds meet the frustum (all of them without one).
    pub visible: u64,
    /// Visible instances skinned and drawn as meshes: the `Capacities::skinned_instances` most
    /// significant of them (largest projected size; ties in frame-slot order).
    pub skinned: u64,
    /// Visible instances past the budget: each gets a card.
    pub over_budget: u64,
    /// Cards drawn of them: those of the kind with a far tier ([`Runtime::set_far_tier`]).
    /// The others (`over_budget - carded`) have no impostor to show and are not drawn.
    pub carded: u64,
    /// Visible instances drawn: `skinned + carded`.
    pub drawn: u64,
    /// Vertices of the skinned instances.
    pub skinned_vertices: u64,
    /// Triangles of the skinned instances' skins, each at its level's mesh LOD.
    pub triangles: u64,
    /// Per level of detail: skinned instances and their triangles.
    pub per_level: [(u64, u64); LOD_TIERS as usize],
}

/// The far tier of one kind: its impostor's table (scatter.wgsl) and the kind index last
/// written into it.
struct FarTier {
    key: KindKey,
    table: Vec<u32>,
    written: Option<u32>,
}

/// Where a frame's instances come from.
enum Source<'a, 'b> {
    /// A frame of batches ([`Runtime::frame`]).
    Batches(&'a [Batch<'b>]),
    /// Retained instances ([`Runtime::present`]).
    Retained(&'a Instances),
}

/// The frame's passes, in recording order.
struct Passes {
    present: PresentPass,
    decode: DecodePass,
    pose: PosePass,
    cull: CullPass,
    skin: SkinPass,
    attach: AttachPass,
}

/// The crowd runtime on one [`GpuContext`].
pub struct Runtime {
    ctx: GpuContext,
    capacities: Capacities,
    options: RuntimeOptions,
    arena: Arena,
    /// Per package, how many times it was replaced.
    generations: Vec<u64>,
    kinds: Kinds,
    buffers: FrameBuffers,
    shapes: Shapes,
    passes: Passes,
    params: Params,
    decodes: DecodeCache,
    attachments: Attachments,
    /// Culling frustum of the next frames (`None`: every instance is visible).
    frustum: Option<Frustum>,
    /// The far tier the cards past the skinned budget show ([`Runtime::set_far_tier`]).
    far: Option<FarTier>,
    /// Whether the far tier's table holds `NO_KIND` since the far tier was removed (or never
    /// set).
    far_cleared: bool,
    /// Skinned runs of the frame being built, and of the last submitted one.
    runs: Vec<SkinnedRun>,
    last_runs: Vec<SkinnedRun>,
    /// Per unit of the last frame (first rank, skinned, first skinning workgroup, first
    /// morph-pass workgroup), then the frame's (carded, skinned, seen, skinning workgroups), once
    /// read ([`Runtime::finish`]).
    counts: Vec<[u32; 4]>,
    counts_pending: bool,
    /// Units of the last frame.
    last_units: u32,
    staging: Staging,
    /// Motion vectors: who resets this frame, and their flags by frame slot.
    motion: MotionResets,
    reset_words: Vec<u32>,
    plan: Plan,
    /// The last submitted frame's plan (readback, raster).
    last: Plan,
    /// The kind of each batch of the frame being built.
    batch_kinds: Vec<u32>,
    /// The retained instances' GPU mirror ([`Runtime::present`]), and the alpha of the frame
    /// being built (`None` for a frame of batches).
    retained: Retained,
    presenting: Option<f32>,
    /// Scratch of `plan_runs`: kinds met so far.
    seen_kinds: Vec<bool>,
    /// History slots claimed by the frame being validated.
    claims: SlotClaims,
    timing: Timing,
    submitted: Option<Instant>,
}

/// What the passes read of runtime `$r` for a frame (a macro, so the borrow is of those fields
/// alone and the passes and parameters stay mutable beside it).
macro_rules! frame_context {
    ($r:expr) => {
        Frame {
            device: &$r.ctx.device,
            max_x: $r.ctx.limits.max_compute_workgroups_per_dimension,
            buffers: &$r.buffers,
            arena: &$r.arena,
            kinds: &$r.kinds,
            shapes: &$r.shapes,
            retained: $r.retained.buffers.as_ref(),
        }
    };
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
        let curves = capacities.curves > 0;
        let morph = capacities.morph_targets > 0;
        // Counted from the kernels' own binding lists, pages included.
        let (streams, bound) = crate::passes::widest_binding(&layout, &options, curves, morph);
        if streams > ctx.limits.max_storage_buffers_per_shader_stage {
            return Err(GpuError::AdapterLimit {
                adapter: ctx.adapter.name.clone(),
                what: "storage buffers per shader stage (pages of the frame streams and history)",
                have: ctx.limits.max_storage_buffers_per_shader_stage.into(),
                need: streams.into(),
            });
        }
        let most = ctx
            .limits
            .max_buffers_and_acceleration_structures_per_shader_stage;
        if bound > most {
            return Err(GpuError::AdapterLimit {
                adapter: ctx.adapter.name.clone(),
                what: "buffers per shader stage (storage and uniform; request GpuContext::required_limits)",
                have: most.into(),
                need: bound.into(),
            });
        }
        if !options.fk && !options.outputs.locals {
            return Err(GpuError::Wgpu {
                what: "runtime options",
                reason: "a pose pass without FK writes local poses only: enable outputs.locals"
                    .into(),
            });
        }
        let mapping = options
            .mapping
            .unwrap_or(Mapping::for_adapter(ctx.adapter.software));
        let passes = Passes {
            present: PresentPass::new(device)?,
            decode: DecodePass::new(device)?,
            pose: PosePass::new(ctx, &layout, mapping, options, curves)?,
            cull: CullPass::new(device, &layout, morph)?,
            skin: SkinPass::new(device, &layout, options.outputs.motion, morph)?,
            attach: AttachPass::new(device, &layout)?,
        };
        let arena = scoped(device, "package upload", || {
            Arena::build(ctx, Vec::new(), 0)
        })??;
        Ok(Runtime {
            ctx: ctx.clone(),
            kinds: Kinds::new(device, capacities.kinds),
            capacities,
            options,
            arena,
            generations: Vec::new(),
            shapes: Shapes::new(device),
            passes,
            params: Params::default(),
            decodes: DecodeCache::default(),
            attachments: Attachments::default(),
            frustum: None,
            far: None,
            far_cleared: false,
            runs: Vec::new(),
            last_runs: Vec::new(),
            counts: Vec::new(),
            counts_pending: false,
            last_units: 0,
            staging: Staging::default(),
            motion: MotionResets::new(),
            reset_words: Vec::new(),
            plan: Plan::default(),
            last: Plan::default(),
            batch_kinds: Vec::new(),
            retained: Retained::new(capacities.record_stride()),
            seen_kinds: Vec::new(),
            presenting: None,
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
        self.passes.pose.mapping()
    }

    pub fn options(&self) -> &RuntimeOptions {
        &self.options
    }

    /// The arena of `packages` in place of the current one (kinds rebuilt over it); on error
    /// nothing changes.
    fn rebuild(&mut self, packages: Vec<Package>) -> Result<(), GpuError> {
        let generation = self.arena.generation + 1;
        let arena = scoped(&self.ctx.device, "package upload", || {
            Arena::build(&self.ctx, packages, generation)
        })??;
        self.arena = arena;
        self.kinds.rebuild(&self.arena);
        Ok(())
    }

    /// Makes `package` resident; returns its handle.
    pub fn add_package(&mut self, package: &Package) -> Result<PackageId, GpuError> {
        let id = self.arena.packages.len();
        let mut all: Vec<Package> = self
            .arena
            .packages
            .iter()
            .map(|p| p.package.clone())
            .collect();
        all.push(package.clone());
        self.rebuild(all)?;
        self.generations.push(0);
        Ok(PackageId(id))
    }

    /// Uploads a new generation of package `id` in its place (the old arena is freed once no
    /// submitted frame uses it). On error the old generation stays resident.
    pub fn replace_package(&mut self, id: PackageId, package: &Package) -> Result<(), GpuError> {
        if id.0 >= self.arena.packages.len() {
            return Err(GpuError::BadPackage {
                package: id.0,
                what: "is not resident".into(),
            });
        }
        let all: Vec<Package> = (self.arena.packages.iter().enumerate())
            .map(|(p, old)| if p == id.0 { package } else { &old.package }.clone())
            .collect();
        self.rebuild(all)?;
        self.generations[id.0] += 1;
        self.retained.resync();
        Ok(())
    }

    pub fn package(&self, id: PackageId) -> Option<&ResidentPackage> {
        self.arena.packages.get(id.0)
    }

    /// Bytes of GPU memory held by resident packages (the arena).
    pub fn resident_bytes(&self) -> u64 {
        self.arena.packages.iter().map(|p| p.bytes).sum()
    }

    /// Bytes of GPU memory held by the frame buffers (sized from the capacities).
    pub fn frame_buffer_bytes(&self) -> u64 {
        self.buffers.bytes()
    }

    /// Specialised pose pipelines built so far, and the milliseconds their compilation took.
    pub fn pipelines_built(&self) -> (usize, f64) {
        let p = &self.passes.pose.pipelines;
        (p.built, p.compile_ms)
    }

    /// Waits until every specialised pipeline requested so far is built (or failed), so the
    /// next frame of the same shapes runs them all.
    pub fn wait_for_pipelines(&mut self) -> Result<(), GpuError> {
        let pipelines = &mut self.passes.pose.pipelines;
        pipelines.wait();
        match pipelines.failures().next() {
            Some(reason) => Err(GpuError::Wgpu {
                what: "a specialised pose pipeline",
                reason: reason.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// Validates `batches`, uploads what varies per instance and submits the frame's passes.
    /// On error nothing is submitted and the last frame's outputs stay readable.
    pub fn frame(&mut self, batches: &[Batch]) -> Result<FrameReport, GpuError> {
        self.ctx.check()?;
        // Counts first: a frame over the capacity is refused before its programs are read.
        self.check_capacities(batches)?;
        let packages = &self.arena.packages;
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
        self.batch_kinds.clear();
        for b in batches {
            let key = KindKey {
                package: b.package.0,
                skeleton: b.skeleton,
                skin: b.skin,
            };
            self.batch_kinds.push(self.kinds.id(key, &self.arena)?);
        }
        if self.options.outputs.motion {
            self.motion.frame(batches);
        }
        let page = self
            .buffers
            .stream(Stream::Components)
            .paging
            .page_instances;
        self.plan.build(
            batches,
            &self.batch_kinds,
            &self.arena.packages,
            &mut self.shapes,
            page,
        );
        self.presenting = None;
        self.run(Source::Batches(batches))
    }

    /// Presents the retained `instances` (throng-cpu-ref `retained`) at `alpha` of the way from
    /// their second-last committed tick to the last (0: the tick before, 1: the last): one
    /// frame, whatever the tick and render rates. On the first frame after a tick it uploads the
    /// tick's values and placements and patches the instances whose program changed; between
    /// ticks it uploads nothing per instance (but hero palettes). Nothing is read back and
    /// control is not touched. On error nothing is submitted.
    pub fn present(&mut self, instances: &Instances, alpha: f32) -> Result<FrameReport, GpuError> {
        self.ctx.check()?;
        if instances.tick() == 0 {
            return Err(GpuError::Retained(
                "nothing to present: commit a tick of the instances first".into(),
            ));
        }
        if !(0.0..=1.0).contains(&alpha) {
            return Err(GpuError::Retained(format!(
                "alpha {alpha} is outside [0, 1]: a frame presents between the last two ticks"
            )));
        }
        if instances.slots() > self.capacities.instances {
            return Err(GpuError::Capacity {
                what: "instances",
                needed: instances.slots().into(),
                capacity: self.capacities.instances.into(),
            });
        }
        if !self.options.fk {
            return Err(GpuError::Retained(
                "this runtime's pose pass stops before FK; present instances on one with FK".into(),
            ));
        }
        let limits = instances.limits();
        let c = self.capacities.program_limits();
        if limits.max_ops > c.max_ops
            || limits.max_weights > c.max_weights
            || limits.history_slots > c.history_slots
        {
            return Err(GpuError::Retained(format!(
                "the instances' programs may need {} ops, {} weights and {} history slots; the \
                 runtime declares {}, {} and {}",
                limits.max_ops,
                limits.max_weights,
                limits.history_slots,
                c.max_ops,
                c.max_weights,
                c.history_slots
            )));
        }
        (self.retained).sync(instances, &self.arena, &mut self.kinds, &mut self.shapes)?;
        self.plan.batches.clone_from(&self.retained.batches);
        self.retained.dispatches(&self.shapes, &mut self.plan.poses);
        self.plan.reset_uses(&self.arena.packages);
        // The clips a frame samples, approximated by every clip of a package with posed
        // instances: the decode cache then holds a crowd's package whole.
        for b in &self.plan.batches {
            if let Some(uses) = self.plan.uses.get(b.package) {
                for u in uses {
                    u.fetch_add(b.count, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
        self.presenting = Some(alpha);
        self.run(Source::Retained(instances))
    }

    /// Steps 2–7 once the frame's plan is built: decode cache, pose paths, staging, passes,
    /// uploads and submission.
    fn run(&mut self, source: Source) -> Result<FrameReport, GpuError> {
        let limits = crate::decode::Limits {
            policy: self.options.decode,
            capacity: self.buffers.decoded_samples,
            max_x: self.ctx.limits.max_compute_workgroups_per_dimension,
        };
        (self.decodes).plan(&self.plan, &self.arena.packages, &self.generations, limits);
        (self.passes.pose).choose_paths(
            &self.ctx,
            &self.buffers.layout,
            &mut self.plan.poses,
            &self.decodes,
            &self.shapes,
        );
        let skinned = self.plan.batches.iter().any(|b| b.skin.is_some());
        let units = if skinned { self.kinds.unit_count() } else { 0 };
        self.plan_runs();
        let mut report = FrameReport {
            batches: self.plan.batches.len(),
            chunks: self.plan.batches.len(),
            instances: self.plan.slots() as usize,
            mapping: Some(self.mapping()),
            decoded_clips: self.decodes.clips,
            decoded_samples: self.decodes.samples,
            cached_clips: self.decodes.cached_clips,
            decode_cache_samples: self.decodes.in_use(),
            ..FrameReport::default()
        };
        match source {
            Source::Batches(batches) => {
                self.staging
                    .stage(&self.plan, batches, &self.buffers, &mut report);
                if self.options.outputs.motion {
                    self.upload_resets();
                }
            }
            Source::Retained(instances) => {
                let heroes = (self.retained.heroes.iter())
                    .filter_map(|&s| Some((s, instances.view(s)?.hero?)));
                (self.staging).stage_heroes(heroes, &self.buffers, &mut report);
                if self.options.outputs.motion {
                    let resets = self.retained.motion_resets();
                    if !resets.is_empty() {
                        let words: &[u8] = bytemuck::cast_slice(resets);
                        self.ctx.queue.write_buffer(&self.buffers.resets, 0, words);
                        report.upload_bytes += words.len() as u64;
                    }
                }
                let top = instances.committed_values().len() as u32;
                let shapes = self.shapes.entries.len() as u32;
                let sizes = (self.capacities.instances, top, shapes);
                scoped(&self.ctx.device, "retained buffer creation", || {
                    self.retained.ensure_buffers(&self.ctx, sizes)
                })?;
            }
        }
        if !self.attachments.is_empty() {
            let kinds = (0..self.kinds.rows.len() as u32)
                .filter_map(|k| self.kinds.key(k))
                .map(|key| (key.package, key.skin));
            self.attachments.stage(kinds);
        }
        self.shapes.upload(&self.ctx)?;
        self.prepare(units, &source)?;
        // Every dispatch has one parameter slot.
        let dispatches = self.params.slots();
        if dispatches > self.capacities.dispatches as usize {
            return Err(GpuError::Capacity {
                what: "dispatches (a pose dispatch per program shape, and a fixed few)",
                needed: dispatches as u64,
                capacity: self.capacities.dispatches.into(),
            });
        }
        let submitted = self.submit(units, &source, &mut report);
        if submitted.is_ok() {
            self.retained.patched();
            self.decodes.commit();
            std::mem::swap(&mut self.plan, &mut self.last);
            std::mem::swap(&mut self.runs, &mut self.last_runs);
            self.counts_pending = skinned;
            self.last_units = units;
            self.counts.clear();
        }
        submitted.map(|()| report)
    }

    /// Step 5: every pass's parameters and bind groups.
    fn prepare(&mut self, units: u32, source: &Source) -> Result<(), GpuError> {
        self.params.clear();
        let frame = frame_context!(self);
        let p = &mut self.passes;
        let pool = self.capacities.skinned_instances;
        if let (Source::Retained(instances), Some(b), Some(alpha)) =
            (source, &self.retained.buffers, self.presenting)
        {
            let tick = instances.tick();
            let parity = |t: u64| (t % 2) as u32;
            let present = PresentParams {
                slots: instances.slots(),
                alpha,
                tick: tick as u32,
                record_vec4s: self.retained.block() - 1,
                values_now: parity(tick) * b.value_capacity,
                values_prev: parity(tick + 1) * b.value_capacity,
                placements_now: parity(tick) * 2 * self.capacities.instances,
                placements_prev: parity(tick + 1) * 2 * self.capacities.instances,
            };
            let patches = (self.retained.patch_count(), self.retained.block());
            p.present
                .prepare(&frame, patches, &present, &mut self.params);
        }
        p.decode.prepare(&frame, &self.decodes, &mut self.params);
        scoped(&self.ctx.device, "bind group creation", || {
            p.pose
                .prepare(&frame, &self.plan.poses, &self.decodes, &mut self.params)
        })??;
        let slots = self.plan.slots();
        (p.cull).prepare(&frame, (slots, units, pool), self.frustum, &mut self.params);
        let active = p.cull.active();
        p.skin.prepare(&frame, active, units, &mut self.params);
        let attachments = self.attachments.list.len() as u32;
        (p.attach).prepare(&frame, (active, attachments, units, pool), &mut self.params);
        Ok(())
    }

    /// Culls skinned instances of the next frames against `frustum` (scene space): only those
    /// whose animated bounds meet it are skinned and drawn. `None` (the default) keeps all.
    pub fn set_frustum(&mut self, frustum: Option<Frustum>) {
        self.frustum = frustum;
    }

    /// Props on joints from the next frame on ([`crate::attach`]): every skinned instance of a
    /// kind of an attachment's (package, skin) carries its prop, placed from its palette by
    /// one dispatch for all props; [`crate::draw::CrowdPass`] draws them. An empty list
    /// removes them. On error (a package not resident, a joint outside the skin's palette, a
    /// bad mesh, more than [`crate::attach::MAX_ATTACHMENTS`]) the attachments stay as they
    /// were.
    pub fn set_attachments(&mut self, attachments: &[Attachment]) -> Result<(), GpuError> {
        let limit = self.capacities.binding_bytes(&self.ctx.limits);
        let sizes = (
            u64::from(self.capacities.kinds.max(1)),
            u64::from(self.capacities.skinned_instances),
            limit,
        );
        let device = &self.ctx.device;
        let packages = &self.arena.packages;
        let buffers = scoped(device, "attachment buffer creation", || {
            (self.attachments).set(device, attachments, packages, sizes)
        })??;
        self.buffers.attach = buffers;
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

    /// The skinned runs of the frame being planned: per unit of a kind of its skinned batches,
    /// one per page of the skinned pool.
    fn plan_runs(&mut self) {
        let stream = self.buffers.stream(Stream::Skinned);
        let cull = &self.buffers.cull;
        let per = stream.paging.page_instances;
        self.runs.clear();
        // Each skinned kind of the frame once, in order of first batch.
        self.seen_kinds.clear();
        self.seen_kinds.resize(self.kinds.rows.len(), false);
        for batch in &self.plan.batches {
            let kind = batch.kind;
            let first = std::mem::replace(&mut self.seen_kinds[kind as usize], true);
            let Some(skin) = batch.skin.filter(|_| !first) else {
                continue;
            };
            let row = self.kinds.rows[kind as usize];
            let tiers = (self.arena.packages.get(batch.package))
                .and_then(|p| p.skins.get(skin as usize))
                .map_or(&[][..], |s| &s.tiers[..]);
            for t in 0..row.tiers {
                let unit = row.unit_base + t;
                let Some(u) = self.kinds.units.get(unit as usize) else {
                    continue;
                };
                let shell = tiers.get(t as usize).map_or(0.0, |tier| tier.shell);
                let coarser = (tiers.get(t as usize))
                    .filter(|tier| tier.coarser_index_count > 0)
                    .map(|_| tiers.get(t as usize + 1).map_or(0.0, |tier| tier.shell));
                for (page, buffer) in stream.pages.iter().enumerate() {
                    let draw = unit * cull.pages + page as u32;
                    self.runs.push(SkinnedRun {
                        kind,
                        package: batch.package,
                        skin,
                        lod: t as u8,
                        page,
                        offset: 0,
                        size: buffer.size(),
                        first_rank: page as u32 * per,
                        count: per,
                        stride: stream.paging.stride,
                        vertex_count: u.vertex_count,
                        draw_args: 4 * u64::from(cull.draw_base() + 5 * draw),
                        first_at: cull.rank_base() + draw,
                        shell,
                        coarser: coarser
                            .map(|shell| (4 * u64::from(cull.coarser_base() + 5 * draw), shell)),
                    });
                }
            }
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
            let Some(p) = self.arena.packages.get(b.package.0) else {
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
                over(
                    "morph targets of one skin",
                    skin.map_or(0, |s| s.morph_count).into(),
                    c.morph_targets,
                ),
                over(
                    "curve channels of one skeleton",
                    p.skeleton(b.skeleton).map_or(0, |s| s.curve_count).into(),
                    c.curves,
                ),
            ];
            if let Some(e) = checks.into_iter().flatten().next() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Writes the far tier's table when it changed, or when its kind was registered since (or
    /// `NO_KIND` once it is removed).
    fn upload_far_tier(&mut self, queue: &wgpu::Queue, report: &mut FrameReport) {
        let buffer = &self.buffers.cull.far;
        let Some(far) = self.far.as_mut() else {
            if self.far_cleared {
                return;
            }
            self.far_cleared = true;
            queue.write_buffer(buffer, 0, bytemuck::bytes_of(&NO_KIND));
            report.upload_bytes += 4;
            return;
        };
        self.far_cleared = false;
        let kind = self.kinds.find(&far.key).unwrap_or(NO_KIND);
        if far.written.is_none() {
            far.table[FAR_KIND as usize] = kind;
            let bytes: &[u8] = bytemuck::cast_slice(&far.table);
            queue.write_buffer(buffer, 0, bytes);
            report.upload_bytes += bytes.len() as u64;
        } else if far.written != Some(kind) {
            queue.write_buffer(buffer, 0, bytemuck::bytes_of(&kind));
            report.upload_bytes += 4;
        }
        far.written = Some(kind);
    }

    /// Step 6: uploads, recording and submission.
    fn submit(
        &mut self,
        units: u32,
        source: &Source,
        report: &mut FrameReport,
    ) -> Result<(), GpuError> {
        let start = Instant::now();
        let (device, queue) = (self.ctx.device.clone(), self.ctx.queue.clone());
        self.staging.upload(&queue, &self.buffers, report);
        if let Source::Retained(instances) = source {
            let bytes = self
                .retained
                .upload(&queue, instances, &self.buffers.slot_kinds);
            report.instance_bytes += bytes;
            report.upload_bytes += bytes;
            if let Some(b) = &self.retained.buffers {
                let rows: &[u8] = bytemuck::cast_slice(&self.retained.bin_rows);
                queue.write_buffer(&b.bins, 0, rows);
                report.upload_bytes += rows.len() as u64;
            }
        }
        let mut write = |buffer: &wgpu::Buffer, bytes: &[u8]| {
            if !bytes.is_empty() {
                queue.write_buffer(buffer, 0, bytes);
                report.upload_bytes += bytes.len() as u64;
            }
        };
        write(&self.buffers.params, self.params.bytes());
        self.upload_far_tier(&queue, report);
        report.upload_bytes += self.kinds.upload(&queue);
        report.upload_bytes += self.attachments.upload(&queue, &self.buffers.attach);
        report.upload_bytes += self.decodes.upload(&queue, &self.arena);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("throng frame"),
        });
        let retained = matches!(source, Source::Retained(_));
        let recorded = scoped(&device, "frame recording", || {
            self.record(&mut encoder, units, retained, report)
        })?;
        recorded?;
        self.timing.resolve(&mut encoder);
        let recorded = Instant::now();
        scoped(&device, "frame submission", || {
            queue.submit([encoder.finish()])
        })?;
        self.submitted = Some(Instant::now());
        report.record_ms = (recorded - start).as_secs_f64() * 1e3;
        report.submit_ms = recorded.elapsed().as_secs_f64() * 1e3;
        let poses = &self.plan.poses;
        // Distinct shapes, without allocating (a frame has few dispatches).
        report.shapes = (0..poses.len())
            .filter(|&i| poses[..i].iter().all(|d| d.shape != poses[i].shape))
            .count();
        report.pending_pipelines = self.passes.pose.pipelines.pending();
        self.timing.end_frame()
    }

    fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        units: u32,
        retained: bool,
        report: &mut FrameReport,
    ) -> Result<(), GpuError> {
        let frame = frame_context!(self);
        let p = &self.passes;
        p.cull.clear(&frame, encoder);
        if retained {
            p.present.clear(&frame, encoder);
            let (mut pass, query) = self.timing.begin(encoder, "present");
            report.present_dispatches += p.present.record(&frame, &mut pass)?;
            drop(pass);
            self.timing.end(encoder, query);
        }
        if p.decode.dispatches() > 0 {
            let (mut pass, query) = self.timing.begin(encoder, "decode");
            p.decode.record(&mut pass, report)?;
            drop(pass);
            self.timing.end(encoder, query);
        }
        {
            let (mut pass, query) = self.timing.begin(encoder, "pose");
            p.pose.record(&frame, &mut pass, report)?;
            drop(pass);
            self.timing.end(encoder, query);
        }
        if p.cull.active() {
            let (mut pass, query) = self.timing.begin(encoder, "bounds");
            p.cull.record(&frame, &mut pass, report)?;
            drop(pass);
            self.timing.end(encoder, query);
            let (mut pass, query) = self.timing.begin(encoder, "skinning");
            p.skin.record(&frame, &mut pass, report)?;
            drop(pass);
            self.timing.end(encoder, query);
            if p.attach.dispatches() > 0 {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("attachments"),
                    timestamp_writes: None,
                });
                p.attach.record(&frame, &mut pass, report)?;
            }
            // The units' ranks, then the frame's totals (visibility).
            let cull = &self.buffers.cull;
            let bytes = 16 * u64::from(units);
            encoder.copy_buffer_to_buffer(&cull.ranks, 0, &cull.counts, 0, bytes);
            let totals = 4 * u64::from(cull.total_base());
            encoder.copy_buffer_to_buffer(&cull.ranks, totals, &cull.counts, bytes, 16);
            if self.options.outputs.motion {
                self.keep_for_motion(encoder);
            }
        }
        report.dispatches = report.present_dispatches
            + report.decode_dispatches
            + report.pose_dispatches
            + report.bounds_dispatches
            + report.budget_dispatches
            + report.skinning_dispatches
            + report.morph_dispatches
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

    /// The skinned vertices of the last frame, one run per (unit, page of the skinned pool).
    /// Each run's drawn instances (the unit's skinned ones on the page, in frame-slot order) are
    /// in its draw arguments ([`SkinnedRun::draw_args`]).
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

    /// Copies the last frame's per-unit ranks and totals out of their readback buffer (once per
    /// frame).
    fn read_counts(&mut self) -> Result<(), GpuError> {
        if !self.counts_pending {
            return Ok(());
        }
        self.counts_pending = false;
        let buffer = &self.buffers.cull.counts;
        let (tx, rx) = std::sync::mpsc::channel();
        let range = ..16 * (u64::from(self.last_units) + 1);
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
        let Some((&[carded, skinned, seen, _], units)) = self.counts.split_last() else {
            return v;
        };
        for (u, &[_, n, ..]) in units.iter().enumerate() {
            let Some(unit) = self.kinds.units.get(u) else {
                continue;
            };
            let n = u64::from(n);
            let triangles = n * u64::from(unit.index_count / 3);
            v.skinned_vertices += n * u64::from(unit.vertex_count);
            v.triangles += triangles;
            let level = &mut v.per_level[(unit.tier as usize).min(LOD_TIERS as usize - 1)];
            level.0 += n;
            level.1 += triangles;
        }
        v.visible = seen.into();
        v.skinned = skinned.into();
        v.over_budget = v.visible - v.skinned;
        v.carded = carded.into();
        v.drawn = v.skinned + v.carded;
        v
    }

    /// Reads back the cards the last frame drew past the skinned budget, in the order drawn:
    /// each one's frame slot and card (an empty card, scale 0, for a slot whose kind has no far
    /// tier). For tests and tools; it waits for the GPU.
    pub fn cards(&self) -> Result<Vec<Card>, GpuError> {
        if self.submitted.is_none() {
            return Err(GpuError::NothingToRead);
        }
        if !self.passes.cull.active() {
            return Ok(Vec::new());
        }
        let cull = &self.buffers.cull;
        let at = u64::from(cull.card_base());
        let count = crate::readback::words(&self.ctx, &cull.indirect, at, 4)?[1];
        if count == 0 {
            return Ok(Vec::new());
        }
        let words = crate::readback::words(&self.ctx, &cull.cards, 0, 12 * u64::from(count))?;
        Ok(bytemuck::cast_slice::<u32, Card>(&words).to_vec())
    }

    /// The cards past the skinned budget (raster.wgsl `Card`, written by the cull pass) and,
    /// in [`Runtime::card_draw`], their draw's arguments: what [`crate::draw::CrowdPass`]
    /// draws after the skinned runs.
    pub fn card_buffer(&self) -> &wgpu::Buffer {
        &self.buffers.cull.cards
    }

    /// The indirect buffer and offset of the last frame's card draw (`draw_indirect`: 4
    /// vertices, one instance per card); `None` when the frame culled nothing (no skinned
    /// kind).
    pub fn card_draw(&self) -> Option<(&wgpu::Buffer, u64)> {
        let cull = &self.buffers.cull;
        (self.passes.cull.active() && self.last_units > 0)
            .then(|| (&cull.indirect, 4 * u64::from(cull.card_base())))
    }

    /// Draws the visible instances past the skinned budget of kind (`package`, `impostor`'s
    /// skin) as cards of `impostor` from the next frame on (the atlas
    /// [`crate::draw::CrowdPass::set_impostor`] draws must be this impostor's); `None`: no
    /// kind has a far tier, and such instances are counted in [`Visibility::over_budget`] but
    /// not drawn. Instances of other kinds past the budget are not drawn either. Refuses a
    /// package that is not resident, a skin it lacks, or one with more than 1 024 clips.
    pub fn set_far_tier(&mut self, far: Option<(PackageId, &Impostor)>) -> Result<(), GpuError> {
        let Some((package, impostor)) = far else {
            self.far = None;
            return Ok(());
        };
        let bad = |what: String| GpuError::BadPackage {
            package: package.0,
            what,
        };
        let resident =
            (self.arena.packages.get(package.0)).ok_or_else(|| bad("is not resident".into()))?;
        let source = &resident.package;
        let skin = (source.skins.get(impostor.skin as usize))
            .ok_or_else(|| bad(format!("has no skin {} for its far tier", impostor.skin)))?;
        let clips = source.clips.len() as u32;
        if clips > FAR_MAX_CLIPS {
            return Err(GpuError::Capacity {
                what: "clips of a far tier's package",
                needed: clips.into(),
                capacity: FAR_MAX_CLIPS.into(),
            });
        }
        let c = impostor.centre;
        let mut table = vec![
            NO_KIND,
            clips,
            impostor.cells_per_frame(),
            0,
            c.x.to_bits(),
            c.y.to_bits(),
            c.z.to_bits(),
            0,
        ];
        for (i, clip) in source.clips.iter().enumerate() {
            let slot = impostor.slot_of(i as u32);
            table.extend([
                slot.map_or(NO_CELL, |s| impostor.first_cell(s)),
                slot.map_or(0, |s| impostor.clips[s].frames),
                (clip.duration as f32).to_bits(),
                u32::from(clip.loop_policy == LoopPolicy::Loop),
            ]);
        }
        self.far = Some(FarTier {
            key: KindKey {
                package: package.0,
                skeleton: skin.skeleton,
                skin: Some(impostor.skin),
            },
            table,
            written: None,
        });
        Ok(())
    }

    /// Reads back the frame slots the last frame skinned, per skinned batch, ascending: the
    /// order of its skinned output in [`Runtime::readback`] (for tests and tools; it waits for
    /// the GPU).
    pub fn skinned_slots(&self) -> Result<Vec<Vec<u32>>, GpuError> {
        Ok(self
            .skinned_ranges()?
            .into_iter()
            .flatten()
            .map(|share| share.instances.iter().map(|&(slot, _, _)| slot).collect())
            .collect())
    }

    /// Per batch of the last frame, its share of the skinned pool for a skinned one: its
    /// skinned instances, in frame-slot order, with their ranks and levels.
    fn skinned_ranges(&self) -> Result<Vec<Option<SkinnedShare<'_>>>, GpuError> {
        if self.submitted.is_none() {
            return Err(GpuError::NothingToRead);
        }
        let units = u64::from(self.last_units);
        let ranks = crate::readback::words(&self.ctx, &self.buffers.cull.ranks, 0, 4 * units)?;
        let order = &self.buffers.cull.order;
        let order = crate::readback::words(&self.ctx, order, 0, order.size() / 4)?;
        let batches = &self.last.batches;
        let mut shares: Vec<Option<SkinnedShare>> = (batches.iter())
            .map(|b| {
                let tiers = &self
                    .arena
                    .packages
                    .get(b.package)?
                    .skins
                    .get(b.skin? as usize)?
                    .tiers;
                Some(SkinnedShare {
                    instances: Vec::new(),
                    tiers,
                })
            })
            .collect();
        for (u, r) in ranks.chunks_exact(4).enumerate() {
            let Some(unit) = self.kinds.units.get(u) else {
                continue;
            };
            for rank in r[0]..r[0] + r[1] {
                let Some(&slot) = order.get(rank as usize) else {
                    continue;
                };
                let b = batches.partition_point(|b| b.first_slot + b.count <= slot);
                let share = shares.get_mut(b).and_then(|s| s.as_mut());
                if let Some(share) = share.filter(|_| batches[b].kind == unit.kind) {
                    share.instances.push((slot, rank, unit.tier as u8));
                }
            }
        }
        for share in shares.iter_mut().flatten() {
            share.instances.sort_unstable();
        }
        Ok(shares)
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

    /// Pages of the curve-value stream, `None` when no resident skeleton has curve channels
    /// (`Capacities::curves` is 0): per frame slot of a posed instance, `Capacities::curves`
    /// `f32`s, the first `n` its skeleton's channels in id order (`Package::curves`, clamped to
    /// each channel's range; throng-cpu-ref `scalar`), written by the pose pass. A kept slot keeps
    /// its last values; a hero's are undefined. [`Runtime::curves_at`] locates a slot.
    pub fn curve_pages(&self) -> Option<&[wgpu::Buffer]> {
        (self.capacities.curves > 0).then(|| self.buffers.stream(Stream::Curves).pages.as_slice())
    }

    /// Page and byte offset of frame slot `slot`'s first curve value.
    pub fn curves_at(&self, slot: u32) -> (usize, u64) {
        self.buffers.stream(Stream::Curves).locate(slot, 0)
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
