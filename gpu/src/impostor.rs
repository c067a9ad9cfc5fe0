//! The far tier on the GPU: baking a skin's clips into an impostor atlas with Throng's own
//! skinning and raster path ([`bake`]), and drawing instances as camera-facing cards of it
//! ([`Card`], drawn by [`crate::draw::CrowdPass::set_cards`]). The conventions (views, cells,
//! frames, the card's square) are throng-cpu-ref `impostor`'s; raster.wgsl `card_vs` mirrors
//! them.

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Vec3};
use throng_cpu_ref::bounds::Bounds;
use throng_cpu_ref::impostor::{
    frame_time, frames_for, CardFrame, Impostor, ImpostorClip, MAX_IMPOSTOR_ROWS,
    MAX_IMPOSTOR_VIEWS,
};
use throng_cpu_ref::{Batch, Instance, Package, Pose, PoseOp, Program};
use wgpu::util::DeviceExt;

use crate::context::scoped;
use crate::draw::{cleared_depth, storage_entry, uniform_entry, CrowdPass, Target};
use crate::raster::{read_texture, Camera, Image, Scene};
use crate::{Capacities, GpuContext, GpuError, PackageId, Runtime};

/// The atlas texture's format: the bake writes normals into it and cards sample them back.
/// Not sRGB: decoding sRGB on every fetch cost lavapipe a tenth of a card, and normals gain
/// nothing from its curve.
pub const ATLAS_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// One far-tier instance (raster.wgsl `Card`, 48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Card {
    /// The card's centre in the scene: the placement applied to the impostor's centre.
    pub centre: [f32; 3],
    /// The instance's rotation about +Y (radians) and uniform scale.
    pub yaw: f32,
    pub scale: f32,
    /// Its frame slot (its tint, as the skinned tiers hash it).
    pub slot: u32,
    /// The cell of its frame at row 0, view 0 (`Impostor::cell_of(clip, frame, 0, 0)`).
    pub first: u32,
    /// 0: its own tint (blue while `CrowdPass::set_tiers` tints); 1–4: a tier colour (`set_tiers`'s), anything else blue.
    pub tier: u32,
    /// The cell of the neighbouring frame toward its clip time (row 0, view 0), and how far
    /// toward it the time lies (0 to ½; `CardFrame`): the card mixes the two frames.
    pub next: u32,
    pub blend: f32,
    /// The card's share of the member's pixels: 1 a card alone; below 1 the member is also
    /// drawn as a mesh, the two dithered in complementary pixels (a tier cross-fade: the mesh
    /// keeps the pixels whose dither threshold is at least `fade`, docs/gpu.md "Far tier").
    pub fade: f32,
    pub pad: u32,
}

impl Card {
    /// The card of an instance placed at `placement` (a rotation about +Y, a uniform scale and
    /// a translation) showing `frame` of `impostor`, alone (`fade` 1).
    pub fn new(impostor: &Impostor, placement: &Affine3A, slot: u32, frame: CardFrame) -> Card {
        let (scale, rotation, translation) = placement.to_scale_rotation_translation();
        let (axis, angle) = rotation.to_axis_angle();
        let yaw = if axis.y < 0.0 { -angle } else { angle };
        Card {
            centre: (translation + rotation * (scale * impostor.centre)).to_array(),
            yaw,
            scale: scale.max_element(),
            slot,
            first: frame.first,
            tier: 0,
            next: frame.next,
            blend: frame.blend,
            fade: 1.0,
            pad: 0,
        }
    }
}

/// `Atlas` of raster.wgsl (48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct AtlasUniform {
    columns: u32,
    views: u32,
    rows: u32,
    cell: u32,
    cell_uv: [f32; 2],
    radius: f32,
    pad1: f32,
    elevations: [f32; MAX_IMPOSTOR_ROWS],
}

/// What a [`crate::draw::CrowdPass`] draws cards with: the atlas (with mips), its uniform,
/// the card buffer and the pipeline.
pub(crate) struct CardLayer {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    uniform: wgpu::Buffer,
    view: wgpu::TextureView,
    sampler: wgpu::Sampler,
    rects: wgpu::Buffer,
    cards: wgpu::Buffer,
    group: wgpu::BindGroup,
    count: u32,
    /// The runtime's cards past the skinned budget: its card buffer, a group over it, and its
    /// card draw (indirect buffer and offset) of the last frame.
    overflow: Option<Overflow>,
    /// Per frame slot, its card's centre in the cards set before the last (w = 1; raster.wgsl
    /// `card_before`), the cards set last, and the motion-vector pipeline once asked for.
    before: wgpu::Buffer,
    before_words: Vec<[f32; 4]>,
    last: Vec<Card>,
    motion: Option<wgpu::RenderPipeline>,
}

/// The cards the cull pass writes (scatter.wgsl), drawn by one `draw_indirect`.
struct Overflow {
    cards: wgpu::Buffer,
    group: wgpu::BindGroup,
    draw: Option<(wgpu::Buffer, u64)>,
}

impl CardLayer {
    /// Uploads `atlas` (the image [`bake`] made for `impostor`) with a mip chain, and builds the
    /// card pipeline for `target` over the crowd's frame layout (group 0).
    pub(crate) fn new(
        ctx: &GpuContext,
        target: Target,
        frame_layout: &wgpu::BindGroupLayout,
        impostor: &Impostor,
        atlas: &Image,
    ) -> Result<CardLayer, GpuError> {
        let texels = 4 * u64::from(atlas.width) * u64::from(atlas.height);
        if (atlas.width, atlas.height) != (impostor.width, impostor.height)
            || atlas.rgba.len() as u64 != texels
            || texels == 0
        {
            return Err(GpuError::Wgpu {
                what: "impostor atlas upload",
                reason: format!(
                    "the atlas image is {}x{} with {} bytes; the impostor was baked at {}x{} \
                     (4 bytes a texel): give the PNG `throng bake-impostors` wrote with it",
                    atlas.width,
                    atlas.height,
                    atlas.rgba.len(),
                    impostor.width,
                    impostor.height
                ),
            });
        }
        let device = &ctx.device;
        scoped(device, "impostor atlas upload", || {
            let layout = card_layout(device);
            let entries = (throng_shaders::CARD_VS, throng_shaders::CARD_FS);
            let pipeline = card_pipeline(device, target, frame_layout, &layout, entries);
            let view = upload_mips(ctx, atlas, impostor.cell);
            let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
                label: Some("impostor atlas"),
                mag_filter: wgpu::FilterMode::Linear,
                min_filter: wgpu::FilterMode::Linear,
                // One level per fetch, not two: a fifth of a card's cost on lavapipe, and at
                // the far tier's sizes a step between levels is not seen.
                mipmap_filter: wgpu::MipmapFilterMode::Nearest,
                ..Default::default()
            });
            let mut elevations = [0.0; MAX_IMPOSTOR_ROWS];
            for (e, &x) in elevations.iter_mut().zip(&impostor.elevations) {
                *e = x;
            }
            let u = AtlasUniform {
                columns: impostor.columns(),
                views: impostor.views,
                rows: impostor.rows(),
                cell: impostor.cell,
                cell_uv: [
                    impostor.cell as f32 / impostor.width as f32,
                    impostor.cell as f32 / impostor.height as f32,
                ],
                radius: impostor.radius,
                pad1: 0.0,
                elevations,
            };
            let uniform = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("impostor atlas"),
                size: std::mem::size_of::<AtlasUniform>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            ctx.queue.write_buffer(&uniform, 0, bytemuck::bytes_of(&u));
            let rects = cell_rects(impostor, atlas);
            let rects = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("impostor cell rectangles"),
                contents: bytemuck::cast_slice(&rects),
                usage: wgpu::BufferUsages::STORAGE,
            });
            let cards = card_buffer(device, 1);
            let before = before_buffer(device, 1);
            let group = card_group(
                device,
                &layout,
                &uniform,
                (&rects, &cards, &before),
                &view,
                &sampler,
            );
            CardLayer {
                pipeline,
                layout,
                uniform,
                view,
                sampler,
                rects,
                cards,
                group,
                count: 0,
                overflow: None,
                before,
                before_words: Vec::new(),
                last: Vec::new(),
                motion: None,
            }
        })
    }

    /// Draws `runtime`'s last frame's cards past the skinned budget (a group over its card
    /// buffer, made again only when that buffer is).
    pub(crate) fn prepare_overflow(&mut self, ctx: &GpuContext, runtime: &Runtime) {
        let cards = runtime.card_buffer();
        if self.overflow.as_ref().is_none_or(|o| &o.cards != cards) {
            let group = card_group(
                &ctx.device,
                &self.layout,
                &self.uniform,
                (&self.rects, cards, &self.before),
                &self.view,
                &self.sampler,
            );
            self.overflow = Some(Overflow {
                cards: cards.clone(),
                group,
                draw: None,
            });
        }
        if let Some(o) = self.overflow.as_mut() {
            o.draw = runtime.card_draw().map(|(b, at)| (b.clone(), at));
        }
    }

    /// Writes the cards of the next frames (growing the buffer), and where the last cards set
    /// were, per frame slot (their motion vectors).
    pub(crate) fn set_cards(&mut self, ctx: &GpuContext, cards: &[Card]) {
        self.before_words.clear();
        for c in &self.last {
            let slot = c.slot as usize;
            if slot >= self.before_words.len() {
                self.before_words.resize(slot + 1, [0.0; 4]);
            }
            let [x, y, z] = c.centre;
            self.before_words[slot] = [x, y, z, 1.0];
        }
        self.last.clear();
        self.last.extend_from_slice(cards);
        let before_bytes = std::mem::size_of_val(self.before_words.as_slice()) as u64;
        let grow_before = before_bytes > self.before.size();
        if grow_before {
            self.before = before_buffer(&ctx.device, self.before_words.len());
            // The runtime's card group names it too: made again on the next prepare.
            self.overflow = None;
        }
        if !self.before_words.is_empty() {
            let words: &[u8] = bytemuck::cast_slice(&self.before_words);
            ctx.queue.write_buffer(&self.before, 0, words);
        }
        let bytes = std::mem::size_of_val(cards) as u64;
        if bytes > self.cards.size() || grow_before {
            let device = &ctx.device;
            if bytes > self.cards.size() {
                self.cards = card_buffer(device, cards.len());
            }
            self.group = card_group(
                device,
                &self.layout,
                &self.uniform,
                (&self.rects, &self.cards, &self.before),
                &self.view,
                &self.sampler,
            );
        }
        if !cards.is_empty() {
            ctx.queue
                .write_buffer(&self.cards, 0, bytemuck::cast_slice(cards));
        }
        self.count = cards.len() as u32;
    }

    /// One instanced draw of every card the caller set, then one indirect draw of the cards
    /// past the skinned budget; group 0 (the frame) is bound by the caller.
    pub(crate) fn render(&self, pass: &mut wgpu::RenderPass<'_>) {
        self.draw_with(pass, &self.pipeline);
    }

    fn draw_with(&self, pass: &mut wgpu::RenderPass<'_>, pipeline: &wgpu::RenderPipeline) {
        pass.set_pipeline(pipeline);
        if self.count > 0 {
            pass.set_bind_group(2, &self.group, &[]);
            pass.draw(0..4, 0..self.count);
        }
        if let Some((o, (buffer, at))) =
            (self.overflow.as_ref()).and_then(|o| Some((o, o.draw.as_ref()?)))
        {
            pass.set_bind_group(2, &o.group, &[]);
            pass.draw_indirect(buffer, *at);
        }
    }

    /// Builds the cards' motion-vector pipeline for `target` (once).
    pub(crate) fn prepare_motion(
        &mut self,
        device: &wgpu::Device,
        target: Target,
        frame: &wgpu::BindGroupLayout,
    ) {
        if self.motion.is_none() {
            self.motion = Some(card_pipeline(
                device,
                target,
                frame,
                &self.layout,
                (
                    throng_shaders::CARD_MOTION_VS,
                    throng_shaders::CARD_MOTION_FS,
                ),
            ));
        }
    }

    /// The cards' motion vectors, as [`CardLayer::render`] draws them; nothing before
    /// [`CardLayer::prepare_motion`].
    pub(crate) fn render_motion(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let Some(motion) = &self.motion {
            self.draw_with(pass, motion);
        }
    }
}

fn before_buffer(device: &wgpu::Device, slots: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("impostor cards before"),
        size: (16 * slots.max(1)) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

fn card_buffer(device: &wgpu::Device, cards: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("impostor cards"),
        size: (std::mem::size_of::<Card>() * cards.max(1)) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

fn card_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("impostor cards"),
        entries: &[
            uniform_entry(0, std::mem::size_of::<AtlasUniform>()),
            storage_entry(1),
            wgpu::BindGroupLayoutEntry {
                binding: 2,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Float { filterable: true },
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 3,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                count: None,
            },
            storage_entry(4),
            storage_entry(5),
        ],
    })
}

fn card_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    uniform: &wgpu::Buffer,
    (rects, cards, before): (&wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer),
    view: &wgpu::TextureView,
    sampler: &wgpu::Sampler,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("impostor cards"),
        layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: uniform.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: cards.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::TextureView(view),
            },
            wgpu::BindGroupEntry {
                binding: 3,
                resource: wgpu::BindingResource::Sampler(sampler),
            },
            wgpu::BindGroupEntry {
                binding: 4,
                resource: rects.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 5,
                resource: before.as_entire_binding(),
            },
        ],
    })
}

fn card_pipeline(
    device: &wgpu::Device,
    target: Target,
    frame_layout: &wgpu::BindGroupLayout,
    layout: &wgpu::BindGroupLayout,
    entries: (&str, &str),
) -> wgpu::RenderPipeline {
    let module = crate::draw::raster_module(device, "impostor cards");
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("impostor cards"),
        bind_group_layouts: &[Some(frame_layout), None, Some(layout)],
        immediate_size: 0,
    });
    crate::draw::render_pipeline(
        device,
        &module,
        ("impostor cards", &pipeline_layout),
        entries,
        (target, wgpu::PrimitiveTopology::TriangleStrip),
    )
}

/// Per cell of `impostor` (cell order), the rectangle its texels of alpha above 0 cover in
/// the atlas's full size, in the card's corner coordinates: `[x0, y0, x1, y1]`, x right and y
/// up, the cell spanning −1 to 1 both ways (raster.wgsl `rects`); `[1, 1, -1, -1]` for an
/// empty cell. The card is drawn over this rectangle grown by what the sampler can reach.
pub fn cell_rects(impostor: &Impostor, atlas: &Image) -> Vec<[f32; 4]> {
    let side = impostor.cell;
    let cells = impostor.first_cell(impostor.clips.len());
    (0..cells)
        .map(|cell| {
            let (x, y) = impostor.cell_origin(cell);
            let mut covered: Option<[u32; 4]> = None;
            for ty in 0..side {
                for tx in 0..side {
                    let alpha = atlas.pixel(x + tx, y + ty).map_or(0, |p| p[3]);
                    if alpha > 0 {
                        let r = covered.get_or_insert([tx, ty, tx, ty]);
                        *r = [r[0].min(tx), r[1].min(ty), r[2].max(tx), r[3].max(ty)];
                    }
                }
            }
            let corner = |texels: u32| 2.0 * texels as f32 / side as f32 - 1.0;
            match covered {
                Some([x0, y0, x1, y1]) => {
                    [corner(x0), -corner(y1 + 1), corner(x1 + 1), -corner(y0)]
                }
                None => [1.0, 1.0, -1.0, -1.0],
            }
        })
        .collect()
}

/// The atlas with its mip chain ([`mip_chain`]).
fn upload_mips(ctx: &GpuContext, atlas: &Image, cell: u32) -> wgpu::TextureView {
    let levels = mip_chain(atlas, cell);
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("impostor atlas"),
        size: wgpu::Extent3d {
            width: atlas.width,
            height: atlas.height,
            depth_or_array_layers: 1,
        },
        mip_level_count: levels.len() as u32,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: ATLAS_FORMAT,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    for (mip, level) in levels.iter().enumerate() {
        ctx.queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &texture,
                mip_level: mip as u32,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            &level.rgba,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(4 * level.width),
                rows_per_image: Some(level.height),
            },
            wgpu::Extent3d {
                width: level.width,
                height: level.height,
                depth_or_array_layers: 1,
            },
        );
    }
    texture.create_view(&Default::default())
}

/// The atlas and its mip levels, each half the one before (at least 1 × 1), keeping each
/// cell's coverage under the alpha test at one half: a texel's colour is the coverage-weighted
/// mean of the four below it (so empty texels do not darken the normals at a silhouette), and
/// its alpha the fraction of the full-size texels under it that are covered, scaled per cell
/// and level so that as many texels pass the test as cover the cell at full size, divided by
/// the level's area (Castaño, "Computing Alpha Mipmaps", 2010,
/// http://www.ludicon.com/castano/blog/articles/computing-alpha-mipmaps/). A plain mean would
/// let thin limbs and whole far characters fade out; doubling it (as this did before) made a
/// far card cover up to twice its member's pixels, and the coverage jump at each change of
/// level was a pop. Cells of `cell` texels stay whole down to one texel; past that, levels
/// mix cells and are scaled as one.
fn mip_chain(atlas: &Image, cell: u32) -> Vec<Image> {
    let levels = 32 - atlas.width.max(atlas.height).max(1).leading_zeros();
    // Per texel of the current level: covered fraction, and colour times it.
    let mut width = atlas.width;
    let mut height = atlas.height;
    let mut coverage: Vec<f32> = (atlas.rgba.chunks_exact(4))
        .map(|p| if p[3] >= 128 { 1.0 } else { 0.0 })
        .collect();
    let mut colour: Vec<[f32; 3]> = (atlas.rgba.chunks_exact(4))
        .zip(&coverage)
        .map(|(p, &c)| [p[0], p[1], p[2]].map(|v| f32::from(v) * c))
        .collect();
    let full_cell = cell.max(1);
    let mut out = vec![atlas.clone()];
    bleed(&mut out[0], BLEED_STEPS);
    for k in 1..levels {
        let (w, h) = ((width / 2).max(1), (height / 2).max(1));
        let mut next_coverage = vec![0.0f32; (w * h) as usize];
        let mut next_colour = vec![[0.0f32; 3]; (w * h) as usize];
        for y in 0..h {
            for x in 0..w {
                let at = (y * w + x) as usize;
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let sx = (2 * x + dx).min(width - 1);
                    let sy = (2 * y + dy).min(height - 1);
                    let from = (sy * width + sx) as usize;
                    next_coverage[at] += 0.25 * coverage[from];
                    for (o, v) in next_colour[at].iter_mut().zip(colour[from]) {
                        *o += 0.25 * v;
                    }
                }
            }
        }
        (width, height, coverage, colour) = (w, h, next_coverage, next_colour);
        // Cells at this level: `side` texels square (the whole level once cells are smaller
        // than a texel).
        let side = (full_cell >> k).max(1);
        let (columns, rows) = (width.div_ceil(side), height.div_ceil(side));
        let mut rgba = vec![0u8; (4 * width * height) as usize];
        let mut cell_texels = Vec::new();
        let mut sorted = Vec::new();
        for cy in 0..rows {
            for cx in 0..columns {
                cell_texels.clear();
                for y in cy * side..((cy + 1) * side).min(height) {
                    for x in cx * side..((cx + 1) * side).min(width) {
                        cell_texels.push((y * width + x) as usize);
                    }
                }
                sorted.clear();
                sorted.extend(cell_texels.iter().map(|&i| coverage[i]));
                // Covered full-size texels under the cell, in this level's texels.
                let covered: f32 = sorted.iter().sum();
                let want = (covered.round() as usize).min(sorted.len());
                sorted.sort_by(|a, b| b.total_cmp(a));
                // The coverage the `want`-th texel has: texels at or above it pass (at least
                // the most covered one, when anything is).
                let threshold = match want {
                    0 => sorted.first().copied().unwrap_or(0.0),
                    n => sorted[n - 1],
                };
                let scale = if threshold > 0.0 {
                    0.5 / threshold
                } else {
                    0.0
                };
                for &i in &cell_texels {
                    let c = coverage[i];
                    let o = 4 * i;
                    if c > 0.0 {
                        for (byte, v) in rgba[o..o + 3].iter_mut().zip(colour[i]) {
                            *byte = (v / c).round().clamp(0.0, 255.0) as u8;
                        }
                    }
                    rgba[o + 3] = (c * scale * 255.0).round().clamp(0.0, 255.0) as u8;
                }
            }
        }
        let mut level = Image {
            width,
            height,
            rgba,
        };
        bleed(&mut level, BLEED_STEPS);
        out.push(level);
    }
    out
}

/// Texels past a silhouette [`bleed`] fills.
const BLEED_STEPS: usize = 2;

/// Gives the empty texels (alpha 0) within `steps` texels of covered ones the mean rgb of their
/// covered or already filled neighbours (alpha stays 0): a bilinear fetch at a silhouette then
/// mixes the surface's own normal and depth instead of the clear colour's zeros, which read as
/// a normal pointing down and a depth a card radius behind the centre (`card_fs` writes it).
fn bleed(image: &mut Image, steps: usize) {
    let (w, h) = (image.width as usize, image.height as usize);
    let mut filled: Vec<bool> = image.rgba.chunks_exact(4).map(|p| p[3] > 0).collect();
    let mut next = Vec::new();
    for _ in 0..steps {
        next.clear();
        for y in 0..h {
            for x in 0..w {
                if filled[y * w + x] {
                    continue;
                }
                let (mut sum, mut n) = ([0u32; 3], 0u32);
                for (dx, dy) in [(-1i32, 0i32), (1, 0), (0, -1), (0, 1)] {
                    let (nx, ny) = (x as i32 + dx, y as i32 + dy);
                    if nx < 0 || ny < 0 || nx >= w as i32 || ny >= h as i32 {
                        continue;
                    }
                    let at = ny as usize * w + nx as usize;
                    if filled[at] {
                        for (s, &v) in sum.iter_mut().zip(&image.rgba[4 * at..4 * at + 3]) {
                            *s += u32::from(v);
                        }
                        n += 1;
                    }
                }
                if n > 0 {
                    next.push((y * w + x, sum.map(|s| ((s + n / 2) / n) as u8)));
                }
            }
        }
        for &(at, rgb) in &next {
            image.rgba[4 * at..4 * at + 3].copy_from_slice(&rgb);
            filled[at] = true;
        }
    }
}

/// What to bake: the clips (package indices), views around the up axis, elevation rows
/// (radians), frames per second and cell size in pixels.
#[derive(Clone, Debug, PartialEq)]
pub struct BakeOptions {
    pub clips: Vec<u32>,
    pub views: u32,
    pub elevations: Vec<f32>,
    pub fps: f32,
    pub cell: u32,
}

/// Projected height (pixels) under which an instance is drawn as a card: the far tier's
/// boundary in `throng demo` and `throng bench` (a cell of [`BakeOptions::far_tier`] is four
/// times that, so the card is minified and its mips filter it).
pub const FAR_HEIGHT: f32 = 16.0;

impl BakeOptions {
    /// The far tier's bake of skin `skin`: every clip of its skeleton, 8 views at the horizon
    /// and 30° up, 10 frames per second, 64-pixel cells.
    pub fn far_tier(package: &Package, skin: u32) -> BakeOptions {
        let skeleton = package.skins.get(skin as usize).map(|s| s.skeleton);
        BakeOptions {
            clips: (0..package.clips.len() as u32)
                .filter(|&c| Some(package.clips[c as usize].skeleton) == skeleton)
                .collect(),
            views: 8,
            elevations: vec![0.0, 30f32.to_radians()],
            fps: 10.0,
            cell: 64,
        }
    }
}

/// An impostor and its atlas image.
#[derive(Clone, Debug)]
pub struct Baked {
    pub impostor: Impostor,
    pub atlas: Image,
}

/// Distance of the bake camera from the card's centre, in card radii: far enough that the
/// perspective is nearly orthographic, as a far card sees it.
const BAKE_DISTANCE: f32 = 40.0;

/// Bakes `options.clips` of skin `skin` of `package`: each clip's frames are posed and skinned
/// on the GPU (first all in one runtime frame, for their boxes: the card is the sphere around
/// their union), then each (frame, row, view) is drawn by the crowd pass in
/// normal mode into its cell. Progress goes to `progress(cells done, cells)`.
pub fn bake(
    ctx: &GpuContext,
    package: &Package,
    skin: u32,
    options: &BakeOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<Baked, GpuError> {
    let bad = |what: String| GpuError::BadPackage { package: 0, what };
    let binding =
        (package.skins.get(skin as usize)).ok_or_else(|| bad(format!("has no skin {skin}")))?;
    if options.views == 0 || options.views > MAX_IMPOSTOR_VIEWS {
        return Err(bad(format!(
            "an impostor has 1 to {MAX_IMPOSTOR_VIEWS} views, not {}",
            options.views
        )));
    }
    if !(options.fps.is_finite() && options.fps > 0.0) || options.cell == 0 {
        return Err(bad(format!(
            "an impostor needs a positive --fps and cell size, not {} and {}",
            options.fps, options.cell
        )));
    }
    let mut clips = Vec::new();
    for &c in &options.clips {
        let clip =
            (package.clips.get(c as usize)).ok_or_else(|| bad(format!("has no clip {c}")))?;
        let frames = frames_for(clip, options.fps);
        clips.push(ImpostorClip { clip: c, frames });
    }
    // The layout and its limits first: frames are posed only for a bake that fits.
    let per_frame = u64::from(options.views) * options.elevations.len() as u64;
    let cells: u64 = clips.iter().map(|c| u64::from(c.frames) * per_frame).sum();
    let columns = (cells as f64).sqrt().ceil().max(1.0) as u64;
    let rows = cells.div_ceil(columns);
    let side = columns.max(rows) * u64::from(options.cell);
    let max = ctx.device.limits().max_texture_dimension_2d;
    if side > u64::from(max) {
        return Err(GpuError::AdapterLimit {
            adapter: ctx.adapter.name.clone(),
            what:
                "impostor atlas side (pixels; bake fewer clips, views or frames, or a smaller cell)",
            have: max.into(),
            need: side,
        });
    }
    let mut impostor = Impostor {
        skin,
        width: (columns * u64::from(options.cell)) as u32,
        height: (rows * u64::from(options.cell)) as u32,
        cell: options.cell,
        views: options.views,
        elevations: options.elevations.clone(),
        // The card is set from the posed frames below.
        centre: Vec3::ZERO,
        radius: 1.0,
        clips,
    };
    impostor.validate(package).map_err(|e| bad(e.to_string()))?;
    let mut programs = Vec::new();
    for baked in &impostor.clips {
        let clip = &package.clips[baked.clip as usize];
        for f in 0..baked.frames {
            let t = frame_time(clip, baked.frames, f) as f32;
            programs.push(Program {
                ops: vec![
                    PoseOp::sample(0, baked.clip, t),
                    PoseOp::to_component(0),
                    PoseOp::palette(skin),
                ],
                weights: vec![],
            });
        }
    }
    // Every frame at the origin: each one's box is its own, read back per instance.
    let instances: Vec<Instance> = programs
        .iter()
        .map(|p| Instance {
            pose: Pose::Program(p),
            placement: Affine3A::IDENTITY,
        })
        .collect();
    let mut capacities = Capacities::for_packages(&[package], instances.len() as u32);
    capacities.skinned_instances = instances.len() as u32;
    let mut runtime = Runtime::new(ctx, capacities)?;
    let id = runtime.add_package(package)?;
    let batches = [Batch {
        package: id,
        skeleton: binding.skeleton,
        skin: Some(skin),
        instances: &instances,
    }];
    runtime.frame(&batches)?;
    runtime.finish()?;
    let bounds = (runtime.readback()?.into_iter().next())
        .map(|out| out.bounds)
        .unwrap_or_default();
    let local = bounds.iter().fold(Bounds::EMPTY, |b, x| b.union(x));
    if local.is_empty() {
        return Err(bad(format!("skin {skin} moves no vertex: nothing to bake")));
    }
    impostor.centre = 0.5 * (local.min + local.max);
    impostor.radius = 0.5 * (local.max - local.min).length();
    let atlas = draw_cells(
        ctx,
        &mut runtime,
        id,
        binding.skeleton,
        &impostor,
        &programs,
        &mut progress,
    )?;
    Ok(Baked { impostor, atlas })
}

/// Draws every cell of `impostor` into the atlas, and reads it back: per baked frame `k` a
/// runtime frame of `programs[k]` alone at the origin (so a cell draws one instance), then its
/// rows and views.
fn draw_cells(
    ctx: &GpuContext,
    runtime: &mut Runtime,
    package: PackageId,
    skeleton: u32,
    impostor: &Impostor,
    programs: &[Program],
    progress: &mut impl FnMut(u32, u32),
) -> Result<Image, GpuError> {
    let device = &ctx.device;
    let target = Target {
        color: ATLAS_FORMAT,
        depth: wgpu::TextureFormat::Depth32Float,
        samples: 1,
    };
    let mut pass = CrowdPass::new(ctx, target)?;
    pass.set_bake(Some(impostor.radius));
    let size = (impostor.cell, impostor.cell);
    let (atlas, cell, depth) = scoped(device, "impostor bake targets", || {
        let texture = |label, (width, height), usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: wgpu::Extent3d {
                    width,
                    height,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: ATLAS_FORMAT,
                usage,
                view_formats: &[],
            })
        };
        let copy = wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::COPY_DST;
        (
            texture("impostor atlas", (impostor.width, impostor.height), copy),
            texture(
                "impostor cell",
                size,
                wgpu::TextureUsages::RENDER_ATTACHMENT | copy,
            ),
            target.depth_view(device, size),
        )
    })?;
    let cell_view = cell.create_view(&Default::default());
    let total = impostor.first_cell(impostor.clips.len());
    let mut done = 0;
    let mut k = 0usize;
    for (slot, c) in impostor.clips.iter().enumerate() {
        for frame in 0..c.frames {
            let origin = impostor.centre;
            let instances = [Instance {
                pose: Pose::Program(&programs[k]),
                placement: Affine3A::IDENTITY,
            }];
            k += 1;
            runtime.frame(&[Batch {
                package,
                skeleton,
                skin: Some(impostor.skin),
                instances: &instances,
            }])?;
            runtime.finish()?;
            for row in 0..impostor.rows() {
                for view in 0..impostor.views {
                    let d = impostor.view_direction(row, view);
                    let distance = BAKE_DISTANCE * impostor.radius;
                    let scene = Scene {
                        camera: Camera {
                            eye: origin + d * distance,
                            target: origin,
                            fov_y: 2.0 * (1.0 / BAKE_DISTANCE).atan(),
                            near: distance - 1.5 * impostor.radius,
                            far: distance + 1.5 * impostor.radius,
                        },
                        light: Vec3::Y,
                        ground: None,
                        fog_distance: f32::MAX,
                        highlight: 0,
                    };
                    pass.prepare(&*runtime, &scene, size)?;
                    let at = impostor.cell_origin(impostor.cell_of(slot, frame, row, view));
                    scoped(device, "impostor cell", || {
                        let mut encoder = device.create_command_encoder(&Default::default());
                        draw_cell(&mut encoder, &pass, &cell_view, &depth);
                        encoder.copy_texture_to_texture(
                            cell.as_image_copy(),
                            wgpu::TexelCopyTextureInfo {
                                texture: &atlas,
                                mip_level: 0,
                                origin: wgpu::Origin3d {
                                    x: at.0,
                                    y: at.1,
                                    z: 0,
                                },
                                aspect: wgpu::TextureAspect::All,
                            },
                            cell.size(),
                        );
                        ctx.queue.submit([encoder.finish()]);
                    })?;
                    done += 1;
                    progress(done, total);
                }
            }
        }
    }
    read_texture(ctx, &atlas)
}

/// One cell: cleared to transparent, the crowd pass (normals) over it.
fn draw_cell(
    encoder: &mut wgpu::CommandEncoder,
    crowd: &CrowdPass,
    view: &wgpu::TextureView,
    depth: &wgpu::TextureView,
) {
    let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("impostor cell"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: Some(cleared_depth(depth)),
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    });
    crowd.render(&mut pass);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cells_rectangle_spans_its_covered_texels_and_an_empty_cell_is_inside_out() {
        let impostor = Impostor {
            skin: 0,
            width: 8,
            height: 4,
            cell: 4,
            views: 2,
            elevations: vec![0.0],
            centre: Vec3::ZERO,
            radius: 1.0,
            clips: vec![ImpostorClip { clip: 0, frames: 1 }],
        };
        let mut rgba = vec![0u8; 4 * 8 * 4];
        for (x, y) in [(0usize, 1usize), (2, 1)] {
            rgba[4 * (y * 8 + x) + 3] = 1;
        }
        let atlas = Image {
            width: 8,
            height: 4,
            rgba,
        };
        assert_eq!(
            cell_rects(&impostor, &atlas),
            vec![[-1.0, 0.0, 0.5, 0.5], [1.0, 1.0, -1.0, -1.0]]
        );
    }
}
