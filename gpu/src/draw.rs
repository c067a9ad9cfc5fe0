//! The crowd draw, for any render pass: [`CrowdPass`] draws the skinned instances of a
//! runtime's last frame (and optionally a ground grid) into a pass the caller begins on its own
//! targets, in the way of wgpu middleware (`new`, `prepare`, `render`). Throng's offscreen
//! [`crate::raster::Raster`] is one such caller; a game's renderer is another (docs/embedding.md).
//!
//! Vertex pulling (throng-shaders `raster.wgsl`): one instanced, indexed, indirect draw per
//! skinned run (a skinned batch's instances at one level of detail on one page of the skinned
//! stream, [`Runtime::skinned_runs`]) — never one per instance — binding the run's range of its
//! page; its instance count is the runtime's, written on the GPU from the visible count of the
//! batch, so culled instances cost no vertex work; the index buffer is the skin's triangle
//! indices (every mesh bound to the skin, offset to the skin's vertex order, every level's),
//! built once per (package, skin) the first time it is drawn. A pass therefore assumes a
//! package's meshes do not change while it lives.

use std::num::NonZeroU64;

use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use wgpu::util::DeviceExt;

use crate::attach::PropLayer;
use crate::context::scoped;
use crate::impostor::{Card, CardLayer};
use crate::layout::{align_up, OFFSET_ALIGNMENT};
use crate::raster::{Camera, Ground, Image, RasterReport, Scene, BACKGROUND, MOTION_RANGE};
use crate::{GpuContext, GpuError, PackageId, Runtime, SkinnedRun};
use throng_cpu_ref::impostor::Impostor;

/// What a [`CrowdPass`] renders into: the pass's colour and depth formats and sample count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The colour attachment's format. Shading is linear: an sRGB format encodes it.
    pub color: wgpu::TextureFormat,
    /// The depth attachment's format; the crowd tests `Less` and writes depth (cleared to 1).
    pub depth: wgpu::TextureFormat,
    pub samples: u32,
}

impl Target {
    /// A `width` × `height` depth attachment of this target's depth format and samples.
    pub fn depth_view(
        &self,
        device: &wgpu::Device,
        (width, height): (u32, u32),
    ) -> wgpu::TextureView {
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("crowd depth"),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: self.samples,
            dimension: wgpu::TextureDimension::D2,
            format: self.depth,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        texture.create_view(&Default::default())
    }
}

/// The depth attachment a [`CrowdPass`] expects: `view` cleared to the far plane (1.0), not
/// kept after the pass.
pub fn cleared_depth(view: &wgpu::TextureView) -> wgpu::RenderPassDepthStencilAttachment<'_> {
    wgpu::RenderPassDepthStencilAttachment {
        view,
        depth_ops: Some(wgpu::Operations {
            load: wgpu::LoadOp::Clear(1.0),
            store: wgpu::StoreOp::Discard,
        }),
        stencil_ops: None,
    }
}

/// `Frame` of raster.wgsl (224 bytes).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct FrameUniform {
    view_proj: [[f32; 4]; 4],
    eye: [f32; 4],
    light: [f32; 4],
    ground: [f32; 4],
    centre: [f32; 4],
    background: [f32; 4],
    /// x: frame slots with a tier ([`CrowdPass::set_tiers`]; 0: no tier tint); y: `Shading`;
    /// z: frame slots with a card share in `fades` ([`CrowdPass::set_cards`]).
    tiers: [u32; 4],
    /// Motion vectors: the previous view-projection; width, height, [`MOTION_RANGE`].
    previous_view_proj: [[f32; 4]; 4],
    motion: [f32; 4],
}

/// `Draw` of raster.wgsl (32 bytes, one per 256-byte slot).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct DrawUniform {
    stride: u32,
    page_rank: u32,
    first_at: u32,
    highlight: u32,
    shell: f32,
    pad: [u32; 3],
}

/// What a [`CrowdPass`]'s fragments write (raster.wgsl `Frame::tiers.y`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shading {
    Colour = 0,
    Bake = 1,
    MemberIds = 2,
}

/// A member cross-fading between two mesh LODs (docs/gpu.md, "Mesh LOD cross-fade"): posed
/// and skinned at the finer level, it is drawn with both levels' triangles in complementary
/// pixels, the coarser keeping `share` of them ([`CrowdPass::set_lod_fades`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodFade {
    /// Its frame slot.
    pub slot: u32,
    /// The coarser level's share of its pixels, in (0, 1).
    pub share: f32,
    /// A scene point that moves with it (its origin): the dither's anchor, so the pattern
    /// moves with the member.
    pub anchor: [f32; 3],
}

/// One instanced draw: a skinned run of the last frame.
pub(crate) struct PlannedDraw {
    pub run: SkinnedRun,
    /// Index into `CrowdPass::indices`.
    indices: usize,
}

/// The triangle indices of one skin of one package.
struct SkinIndices {
    package: usize,
    skin: u32,
    buffer: Option<wgpu::Buffer>,
}

/// Pipelines, uniforms and index buffers that draw a runtime's crowd into a render pass of one
/// [`Target`]; [`CrowdPass::prepare`] once per frame, then [`CrowdPass::render`] inside the pass.
pub struct CrowdPass {
    ctx: GpuContext,
    target: Target,
    /// What the fragments write: colours, the impostor bake's texels or member numbers.
    shading: Shading,
    /// The card radius of [`Shading::Bake`].
    bake_radius: f32,
    /// The far tier's cards, once an impostor is set.
    cards: Option<CardLayer>,
    /// The runtime's attachments.
    props: PropLayer,
    crowd: wgpu::RenderPipeline,
    /// The crowd's while members cross-fade into cards or another level (`fade_count` > 0).
    crowd_fading: wgpu::RenderPipeline,
    /// The next coarser level of members cross-fading between mesh LODs.
    crowd_coarser: wgpu::RenderPipeline,
    ground: wgpu::RenderPipeline,
    pub(crate) frame_layout: wgpu::BindGroupLayout,
    draw_layout: wgpu::BindGroupLayout,
    frame: wgpu::Buffer,
    pub(crate) draws: wgpu::Buffer,
    draw_slots: u64,
    /// Per frame slot its tier (u32), and how many slots have one.
    tiers: wgpu::Buffer,
    tier_count: u32,
    tier_words: Vec<u32>,
    /// Per frame slot what it cross-fades with (raster.wgsl `fades`: its card's share, or minus
    /// its coarser level's, and the dither's anchor), and how many slots it holds; built from
    /// the cards' and mesh LODs' fades of the frame.
    fades: wgpu::Buffer,
    fade_count: u32,
    fade_words: Vec<[f32; 4]>,
    card_fades: Vec<(u32, [f32; 4])>,
    lod_fades: Vec<(u32, [f32; 4])>,
    indices: Vec<SkinIndices>,
    /// What the last [`CrowdPass::prepare`] planned: its draws, their bind groups, the frame's,
    /// whether the ground is drawn, and the runtime's indirect buffer.
    pub(crate) planned: Vec<PlannedDraw>,
    groups: Vec<wgpu::BindGroup>,
    /// The planned runs' draws of their next coarser level, while members cross levels (their
    /// uniform slots follow the planned draws'), and their bind groups.
    coarser: Vec<PlannedDraw>,
    coarser_groups: Vec<wgpu::BindGroup>,
    pub(crate) frame_group: Option<wgpu::BindGroup>,
    with_ground: bool,
    indirect: Option<wgpu::Buffer>,
    uniform_bytes: Vec<u8>,
}

impl CrowdPass {
    /// Pipelines for `target` on `ctx`'s device (a context over the caller's own device:
    /// [`GpuContext::from_device`]).
    pub fn new(ctx: &GpuContext, target: Target) -> Result<CrowdPass, GpuError> {
        let device = &ctx.device;
        let (pipelines, frame, draws) = scoped(device, "crowd pass creation", || {
            (
                pipelines(device, target),
                uniform(
                    device,
                    "crowd frame",
                    std::mem::size_of::<FrameUniform>() as u64,
                ),
                uniform(device, "crowd draws", OFFSET_ALIGNMENT),
            )
        })?;
        let Pipelines {
            crowd,
            crowd_fading,
            crowd_coarser,
            ground,
            frame_layout,
            draw_layout,
        } = pipelines;
        let props = scoped(device, "prop pipeline creation", || {
            PropLayer::new(device, target, &frame_layout)
        })?;
        Ok(CrowdPass {
            ctx: ctx.clone(),
            target,
            shading: Shading::Colour,
            bake_radius: 1.0,
            cards: None,
            props,
            crowd,
            crowd_fading,
            crowd_coarser,
            ground,
            frame_layout,
            draw_layout,
            frame,
            draws,
            draw_slots: 1,
            tiers: tier_buffer(device, 1),
            tier_count: 0,
            tier_words: Vec::new(),
            fades: tier_buffer(device, 1),
            fade_count: 0,
            fade_words: Vec::new(),
            card_fades: Vec::new(),
            lod_fades: Vec::new(),
            indices: Vec::new(),
            planned: Vec::new(),
            groups: Vec::new(),
            coarser: Vec::new(),
            coarser_groups: Vec::new(),
            frame_group: None,
            with_ground: false,
            indirect: None,
            uniform_bytes: Vec::new(),
        })
    }

    /// Tints the instances of the next frames by tier instead of their own colour: `tiers[s]`
    /// is frame slot `s`'s tier, 1 (green) to 4 (red), anything else blue (`throng demo
    /// --lod-tint` gives each member its update rate). An empty slice turns the tint off.
    pub fn set_tiers(&mut self, tiers: &[u8]) {
        self.tier_words.clear();
        self.tier_words.extend(tiers.iter().map(|&t| u32::from(t)));
        self.tier_count = tiers.len() as u32;
        if tiers.is_empty() {
            return;
        }
        let bytes = 4 * tiers.len() as u64;
        if bytes > self.tiers.size() {
            self.tiers = tier_buffer(&self.ctx.device, bytes);
        }
        let words: &[u8] = bytemuck::cast_slice(&self.tier_words);
        self.ctx.queue.write_buffer(&self.tiers, 0, words);
    }

    /// The far tier: draws the next frames' cards ([`CrowdPass::set_cards`]) with `impostor`'s
    /// `atlas` (the image [`crate::impostor::bake`] made for it), after the skinned runs, and
    /// the cards the runtime's cull pass wrote for the visible instances past its skinned
    /// budget ([`Runtime::set_far_tier`] must name the same impostor).
    pub fn set_impostor(&mut self, impostor: &Impostor, atlas: &Image) -> Result<(), GpuError> {
        let layer = CardLayer::new(&self.ctx, self.target, &self.frame_layout, impostor, atlas)?;
        self.cards = Some(layer);
        Ok(())
    }

    /// The far-tier instances of the next frames, one card each (queue writes); ignored
    /// before [`CrowdPass::set_impostor`]. A card whose `fade` is below 1 shares its member
    /// with the member's mesh: the mesh keeps the complementary pixels (a tier cross-fade).
    pub fn set_cards(&mut self, cards: &[Card]) {
        let Some(layer) = self.cards.as_mut() else {
            return;
        };
        layer.set_cards(&self.ctx, cards);
        self.card_fades.clear();
        for c in cards.iter().filter(|c| c.fade < 1.0) {
            let [x, y, z] = c.centre;
            self.card_fades.push((c.slot, [c.fade.max(0.0), x, y, z]));
        }
    }

    /// The members of the next frames that cross-fade between two mesh LODs (uploaded by the
    /// next [`CrowdPass::prepare`]): each is drawn with its run's level (the finer, at which it
    /// is posed and skinned) and with the next coarser level's triangles over the same vertices,
    /// in complementary pixels. A member cross-fading into its card as well keeps the card's
    /// fade.
    pub fn set_lod_fades(&mut self, fades: &[LodFade]) {
        self.lod_fades.clear();
        for f in fades.iter().filter(|f| f.share > 0.0) {
            let [x, y, z] = f.anchor;
            self.lod_fades.push((f.slot, [-f.share.min(1.0), x, y, z]));
        }
    }

    /// Uploads the frame's fades (`fades`), once per prepared frame: the mesh LODs', then the
    /// cards' over them.
    fn write_fades(&mut self) {
        self.fade_words.clear();
        for &(slot, word) in self.lod_fades.iter().chain(&self.card_fades) {
            let slot = slot as usize;
            if slot >= self.fade_words.len() {
                self.fade_words.resize(slot + 1, [0.0; 4]);
            }
            self.fade_words[slot] = word;
        }
        self.fade_count = self.fade_words.len() as u32;
        if self.fade_words.is_empty() {
            return;
        }
        let bytes = std::mem::size_of_val(self.fade_words.as_slice()) as u64;
        if bytes > self.fades.size() {
            self.fades = tier_buffer(&self.ctx.device, bytes);
        }
        let words: &[u8] = bytemuck::cast_slice(&self.fade_words);
        self.ctx.queue.write_buffer(&self.fades, 0, words);
    }

    /// Writes the impostor bake's texels instead of shaded colours (raster.wgsl `bake_texel`:
    /// the normal, and the depth from the camera's target in units of `radius`, the card's),
    /// or with `None` shaded colours again.
    pub(crate) fn set_bake(&mut self, radius: Option<f32>) {
        self.shading = match radius {
            Some(_) => Shading::Bake,
            None => Shading::Colour,
        };
        self.bake_radius = radius.unwrap_or(1.0);
    }

    /// Writes each member's frame slot instead of its colour ([`crate::raster::member_at`]
    /// reads it back; the ground and props write none): what covers each pixel.
    pub fn set_member_ids(&mut self, ids: bool) {
        self.shading = if ids {
            Shading::MemberIds
        } else {
            Shading::Colour
        };
    }

    /// Whether it writes member numbers ([`CrowdPass::set_member_ids`]).
    pub fn member_ids(&self) -> bool {
        self.shading == Shading::MemberIds
    }

    /// Plans the draws of `runtime`'s last frame seen through `scene` on a `width` × `height`
    /// target and writes their uniforms (queue writes, ordered before the caller's next
    /// submission). Call it after [`Runtime::frame`] and before beginning the render pass.
    pub fn prepare(
        &mut self,
        runtime: &Runtime,
        scene: &Scene,
        (width, height): (u32, u32),
    ) -> Result<RasterReport, GpuError> {
        self.prepare_seen_before(runtime, scene, (width, height), &scene.camera)
    }

    /// [`CrowdPass::prepare`] with `previous` the camera of the frame before (motion vectors).
    pub(crate) fn prepare_seen_before(
        &mut self,
        runtime: &Runtime,
        scene: &Scene,
        size: (u32, u32),
        previous: &Camera,
    ) -> Result<RasterReport, GpuError> {
        let device = self.ctx.device.clone();
        self.plan_draws(runtime)?;
        scoped(&device, "crowd pass preparation", || {
            self.write_fades();
            self.write_uniforms(scene, size, previous);
            self.frame_group = Some(self.frame_group());
            self.draw_groups(runtime);
            self.props.prepare(&self.ctx, runtime);
            if let Some(cards) = self.cards.as_mut() {
                cards.prepare_overflow(&self.ctx, runtime);
            }
        })?;
        self.with_ground = scene.ground.is_some();
        self.indirect = Some(runtime.indirect_buffer().clone());
        Ok(RasterReport {
            draws: self.planned.len()
                + self.coarser.len()
                + usize::from(self.with_ground)
                + self.props.draws(),
        })
    }

    /// Records the prepared frame into `pass`: the ground, then one instanced, indirect draw
    /// per skinned run, then one per attachment of the runtime (its props), then the cards (the
    /// caller's, then the runtime's past its skinned budget). Binds groups 0 and 1 and sets its
    /// own pipelines; nothing is drawn
    /// before the first [`CrowdPass::prepare`].
    pub fn render(&self, pass: &mut wgpu::RenderPass<'_>) {
        let (Some(frame), Some(indirect)) = (&self.frame_group, &self.indirect) else {
            return;
        };
        pass.set_bind_group(0, frame, &[]);
        if self.with_ground {
            pass.set_pipeline(&self.ground);
            pass.draw(0..6, 0..1);
        }
        pass.set_pipeline(match self.fade_count {
            0 => &self.crowd,
            _ => &self.crowd_fading,
        });
        self.draw_runs(pass, indirect, &self.groups);
        if !self.coarser.is_empty() {
            pass.set_pipeline(&self.crowd_coarser);
            let first = self.planned.len();
            self.draw_list(pass, indirect, (&self.coarser, &self.coarser_groups), first);
        }
        self.props.render(pass);
        if let Some(cards) = &self.cards {
            cards.render(pass);
        }
    }

    /// Builds the cards' motion-vector pipeline for `target` ([`CrowdPass::render_card_motion`]).
    pub(crate) fn prepare_card_motion(&mut self, target: Target) {
        if let Some(cards) = self.cards.as_mut() {
            cards.prepare_motion(&self.ctx.device, target, &self.frame_layout);
        }
    }

    /// The cards' motion vectors into a motion pass whose group 0 is bound.
    pub(crate) fn render_card_motion(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let Some(cards) = &self.cards {
            cards.render_motion(pass);
        }
    }

    /// One draw per skinned run of the runtime's last frame that has triangles.
    /// With members crossing mesh LODs, also one draw of the next coarser level per run that
    /// has one.
    fn plan_draws(&mut self, runtime: &Runtime) -> Result<(), GpuError> {
        self.planned.clear();
        self.coarser.clear();
        for run in runtime.skinned_runs() {
            let indices = self.skin_indices(runtime, PackageId(run.package), run.skin)?;
            if self.indices[indices].buffer.is_some() {
                self.planned.push(PlannedDraw { run: *run, indices });
            }
        }
        if !self.lod_fades.is_empty() {
            for d in &self.planned {
                if let Some((draw_args, shell)) = d.run.coarser {
                    let run = SkinnedRun {
                        draw_args,
                        shell,
                        ..d.run
                    };
                    self.coarser.push(PlannedDraw {
                        run,
                        indices: d.indices,
                    });
                }
            }
        }
        Ok(())
    }

    /// The index buffer slot of `skin` of `package`, built on first use: every level's
    /// triangles ([`crate::SkinRange::indices`]; a draw's arguments give its level's range).
    fn skin_indices(
        &mut self,
        runtime: &Runtime,
        package: PackageId,
        skin: u32,
    ) -> Result<usize, GpuError> {
        if let Some(i) = self
            .indices
            .iter()
            .position(|s| s.package == package.0 && s.skin == skin)
        {
            return Ok(i);
        }
        let bad = |what: String| GpuError::BadPackage {
            package: package.0,
            what,
        };
        let resident = runtime
            .package(package)
            .ok_or_else(|| bad("is not resident".into()))?;
        let range = resident
            .skins
            .get(skin as usize)
            .ok_or_else(|| bad(format!("has no skin {skin}")))?;
        let indices = &range.indices;
        u32::try_from(indices.len())
            .map_err(|_| bad(format!("skin {skin} has more than 2^32 indices")))?;
        let device = &self.ctx.device;
        let buffer = scoped(device, "index buffer upload", || {
            (!indices.is_empty()).then(|| {
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("skin indices"),
                    contents: bytemuck::cast_slice(indices),
                    usage: wgpu::BufferUsages::INDEX,
                })
            })
        })?;
        self.indices.push(SkinIndices {
            package: package.0,
            skin,
            buffer,
        });
        Ok(self.indices.len() - 1)
    }

    /// Writes the frame uniform (`previous`: the camera of the frame before, for motion
    /// vectors) and one draw uniform per planned draw (growing the draw buffer).
    fn write_uniforms(&mut self, scene: &Scene, (width, height): (u32, u32), previous: &Camera) {
        let slots = (self.planned.len() + self.coarser.len()).max(1) as u64;
        if slots > self.draw_slots {
            self.draws = uniform(&self.ctx.device, "crowd draws", slots * OFFSET_ALIGNMENT);
            self.draw_slots = slots;
        }
        let ground = scene.ground.unwrap_or(Ground {
            height: 0.0,
            centre: Vec3::ZERO,
            half_extent: 0.0,
            cell: 1.0,
        });
        let aspect = width as f32 / height.max(1) as f32;
        let [r, g, b] = BACKGROUND;
        let frame = FrameUniform {
            view_proj: scene.camera.view_proj(aspect).to_cols_array_2d(),
            eye: scene.camera.eye.extend(1.0).to_array(),
            light: scene.light.normalize_or(Vec3::Y).extend(0.0).to_array(),
            ground: [
                ground.height,
                ground.half_extent,
                ground.cell.max(1e-6),
                scene.fog_distance.max(1e-6),
            ],
            // While baking (no ground), the card's centre and inverse radius (`bake_texel`).
            centre: match self.shading {
                Shading::Bake => (scene.camera.target.extend(1.0 / self.bake_radius)).to_array(),
                _ => ground.centre.extend(1.0).to_array(),
            },
            background: [r, g, b, 1.0],
            tiers: [self.tier_count, self.shading as u32, self.fade_count, 0],
            previous_view_proj: previous.view_proj(aspect).to_cols_array_2d(),
            motion: [width as f32, height as f32, MOTION_RANGE, 0.0],
        };
        let queue = &self.ctx.queue;
        queue.write_buffer(&self.frame, 0, bytemuck::bytes_of(&frame));
        self.uniform_bytes.clear();
        self.uniform_bytes
            .resize((slots * OFFSET_ALIGNMENT) as usize, 0);
        for (slot, d) in self.planned.iter().chain(&self.coarser).enumerate() {
            let uniform = DrawUniform {
                stride: d.run.stride,
                page_rank: d.run.first_rank,
                first_at: d.run.first_at,
                highlight: scene.highlight,
                shell: d.run.shell,
                pad: [0; 3],
            };
            let at = slot * OFFSET_ALIGNMENT as usize;
            self.uniform_bytes[at..at + std::mem::size_of::<DrawUniform>()]
                .copy_from_slice(bytemuck::bytes_of(&uniform));
        }
        queue.write_buffer(&self.draws, 0, &self.uniform_bytes);
    }

    /// The frame bind group: the frame uniform, the tiers and the cards' shares.
    fn frame_group(&self) -> wgpu::BindGroup {
        self.ctx
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("crowd frame"),
                layout: &self.frame_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: self.frame.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: self.tiers.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: self.fades.as_entire_binding(),
                    },
                ],
            })
    }

    /// One bind group per planned draw: its uniform slot, skinned range, ranks and order.
    fn draw_groups(&mut self, runtime: &Runtime) {
        self.groups = self.groups_of(runtime, &self.planned);
        self.coarser_groups = self.groups_of(runtime, &self.coarser);
    }

    fn groups_of(&self, runtime: &Runtime, draws: &[PlannedDraw]) -> Vec<wgpu::BindGroup> {
        let pages = runtime.skinned_pages();
        // `plan_draws` took every run from the runtime, so its page exists.
        (draws.iter())
            .filter_map(|d| Some((d, pages.get(d.run.page)?)))
            .map(|(d, page)| {
                let entries = draw_entries(self, runtime, page, d);
                (self.ctx.device).create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("crowd draw"),
                    layout: &self.draw_layout,
                    entries: &entries,
                })
            })
            .collect()
    }

    /// One indexed, indirect draw per planned run, each with its bind group (`per_draw`, in
    /// planned order) and uniform slot.
    pub(crate) fn draw_runs(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        indirect: &wgpu::Buffer,
        per_draw: &[wgpu::BindGroup],
    ) {
        self.draw_list(pass, indirect, (&self.planned, per_draw), 0);
    }

    /// `draws` with their bind groups, uniform slots from `first_slot`.
    fn draw_list(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        indirect: &wgpu::Buffer,
        (draws, per_draw): (&[PlannedDraw], &[wgpu::BindGroup]),
        first_slot: usize,
    ) {
        for (k, (d, group)) in draws.iter().zip(per_draw).enumerate() {
            let slot = first_slot + k;
            let Some(buffer) = self.indices.get(d.indices).and_then(|s| s.buffer.as_ref()) else {
                continue;
            };
            pass.set_bind_group(1, group, &[(slot as u64 * OFFSET_ALIGNMENT) as u32]);
            pass.set_index_buffer(buffer.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed_indirect(indirect, d.run.draw_args);
        }
    }
}

/// A planned draw's entries of the draw layout: its uniform slot (dynamic offset), its range
/// of `page`, the runtime's ranks and order.
pub(crate) fn draw_entries<'a>(
    pass: &'a CrowdPass,
    runtime: &'a Runtime,
    page: &'a wgpu::Buffer,
    d: &PlannedDraw,
) -> [wgpu::BindGroupEntry<'a>; 4] {
    [
        wgpu::BindGroupEntry {
            binding: 0,
            resource: range(&pass.draws, 0, std::mem::size_of::<DrawUniform>() as u64),
        },
        wgpu::BindGroupEntry {
            binding: 1,
            resource: range(page, d.run.offset, d.run.size),
        },
        wgpu::BindGroupEntry {
            binding: 2,
            resource: runtime.ranks_buffer().as_entire_binding(),
        },
        wgpu::BindGroupEntry {
            binding: 3,
            resource: runtime.order_buffer().as_entire_binding(),
        },
    ]
}

/// `size` bytes of `buffer` from `offset`.
pub(crate) fn range(buffer: &wgpu::Buffer, offset: u64, size: u64) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer,
        offset,
        size: NonZeroU64::new(size),
    })
}

/// A per-slot word buffer (tiers, card shares), `bytes` long.
fn tier_buffer(device: &wgpu::Device, bytes: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("crowd tiers"),
        size: align_up(bytes.max(16), 16),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A uniform buffer of `size` bytes, seen by both stages, bound whole.
pub(crate) fn uniform_entry(binding: u32, size: usize) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: NonZeroU64::new(size as u64),
        },
        count: None,
    }
}

/// Binding 0 of a per-draw group: a uniform of `size` bytes of the vertex stage, one slot per
/// draw at a dynamic offset.
pub(crate) fn draw_uniform_entry(size: usize) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::VERTEX,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: NonZeroU64::new(size as u64),
        },
        count: None,
    }
}

/// A read-only storage buffer of the vertex stage.
pub(crate) fn storage_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

fn uniform(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// The crowd pass's pipelines and its two bind group layouts (frame; draw + skinned range).
struct Pipelines {
    crowd: wgpu::RenderPipeline,
    /// The crowd's, leaving out the pixels cross-fading members' cards or coarser levels take.
    crowd_fading: wgpu::RenderPipeline,
    /// The coarser level of members crossing mesh LODs, in those pixels.
    crowd_coarser: wgpu::RenderPipeline,
    ground: wgpu::RenderPipeline,
    frame_layout: wgpu::BindGroupLayout,
    draw_layout: wgpu::BindGroupLayout,
}

/// Crowd and ground pipelines for `target`.
fn pipelines(device: &wgpu::Device, target: Target) -> Pipelines {
    let frame_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("crowd frame"),
        entries: &[
            uniform_entry(0, std::mem::size_of::<FrameUniform>()),
            storage_entry(1),
            storage_entry(2),
        ],
    });
    let draw_layout = draw_layout(device, "crowd draw", 3);
    let module = raster_module(device, "crowd");
    let crowd_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("crowd"),
        bind_group_layouts: &[Some(&frame_layout), Some(&draw_layout)],
        immediate_size: 0,
    });
    let ground_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("crowd ground"),
        bind_group_layouts: &[Some(&frame_layout)],
        immediate_size: 0,
    });
    let pipeline = |label, layout, vs, fs| {
        let list = wgpu::PrimitiveTopology::TriangleList;
        render_pipeline(device, &module, (label, layout), (vs, fs), (target, list))
    };
    let crowd = pipeline(
        "crowd",
        &crowd_layout,
        throng_shaders::CROWD_VS,
        throng_shaders::CROWD_FS,
    );
    let crowd_fading = pipeline(
        "crowd cross-fading",
        &crowd_layout,
        throng_shaders::CROWD_FADING_VS,
        throng_shaders::CROWD_FADING_FS,
    );
    let crowd_coarser = pipeline(
        "crowd coarser level",
        &crowd_layout,
        throng_shaders::CROWD_COARSER_VS,
        throng_shaders::CROWD_COARSER_FS,
    );
    let ground = pipeline(
        "crowd ground",
        &ground_layout,
        throng_shaders::GROUND_VS,
        throng_shaders::GROUND_FS,
    );
    Pipelines {
        crowd,
        crowd_fading,
        crowd_coarser,
        ground,
        frame_layout,
        draw_layout,
    }
}

/// raster.wgsl as a shader module.
pub(crate) fn raster_module(device: &wgpu::Device, label: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(throng_shaders::raster_source().into()),
    })
}

/// A draw's bind group layout: its uniform slot (dynamic offset), then `storage` read-only
/// buffers of the vertex stage (the skinned range, ranks, order, and for motion the previous
/// positions).
pub(crate) fn draw_layout(
    device: &wgpu::Device,
    label: &str,
    storage: u32,
) -> wgpu::BindGroupLayout {
    let uniform = draw_uniform_entry(std::mem::size_of::<DrawUniform>());
    let entries: Vec<wgpu::BindGroupLayoutEntry> = std::iter::once(uniform)
        .chain((1..=storage).map(storage_entry))
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

/// A triangle-list pipeline of raster.wgsl's `vs` / `fs` into `target`, depth tested (less)
/// and written, both faces.
pub(crate) fn render_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    (label, layout): (&str, &wgpu::PipelineLayout),
    (vs, fs): (&str, &str),
    (target, topology): (Target, wgpu::PrimitiveTopology),
) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(label),
        layout: Some(layout),
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(vs),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: wgpu::PrimitiveState {
            topology,
            // Imported meshes do not agree on winding; both faces are drawn and lit.
            cull_mode: None,
            ..Default::default()
        },
        depth_stencil: Some(wgpu::DepthStencilState {
            format: target.depth,
            depth_write_enabled: Some(true),
            depth_compare: Some(wgpu::CompareFunction::Less),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: wgpu::MultisampleState {
            count: target.samples,
            ..Default::default()
        },
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some(fs),
            compilation_options: Default::default(),
            targets: &[Some(target.color.into())],
        }),
        multiview_mask: None,
        cache: None,
    })
}
