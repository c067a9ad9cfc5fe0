//! The offscreen raster pass (DESIGN.md §6, last stage): a [`CrowdPass`] draws the skinned
//! instances of the runtime's last frame into a colour (`Rgba8UnormSrgb`; 4× MSAA resolved on
//! hardware, one sample on software adapters, see [`SAMPLES`]) + depth (`Depth32Float`)
//! target, and the image is read back as tightly packed RGBA8 rows.
//!
//! Scene space is the skinning output's: placements already applied, +Y up, metres. The
//! [`Camera`] is a right-handed perspective with depth in [0, 1]; [`Scene::framing`] points it
//! at a crowd from above-front and backs off until every corner of the crowd's bounds is in view.

use std::time::Instant;

use glam::{Mat4, Vec3};
use wgpu_profiler::{GpuProfiler, GpuProfilerSettings};

use crate::context::{map_read, scoped};
use crate::draw::{
    cleared_depth, draw_entries, draw_layout, range, raster_module, render_pipeline,
};
pub use crate::draw::{CrowdPass, Target};
use crate::impostor::Card;
use crate::layout::align_up;
use crate::{GpuContext, GpuError, Runtime};
pub use throng_cpu_ref::bounds::Bounds;
use throng_cpu_ref::impostor::Impostor;

/// Colour target format (linear shading, sRGB-encoded bytes).
pub const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
/// Depth target format.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Samples per pixel on hardware adapters (every WebGPU adapter supports 4 for these formats).
/// A software adapter (lavapipe) renders one: there multisampling costs about 2.5× the raster
/// time, and a crowd seen from afar looks much the same.
pub const SAMPLES: u32 = 4;

/// Background colour, linear RGB (the clear colour, and what fog fades toward).
pub const BACKGROUND: [f32; 3] = [0.52, 0.60, 0.70];

/// A perspective camera in scene space (+Y up).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    pub eye: Vec3,
    pub target: Vec3,
    /// Vertical field of view, radians.
    pub fov_y: f32,
    pub near: f32,
    pub far: f32,
}

impl Camera {
    /// Scene space → clip space (right-handed, depth in [0, 1]) for an image of `aspect` = w / h.
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        let view = Mat4::look_at_rh(self.eye, self.target, Vec3::Y);
        Mat4::perspective_rh(self.fov_y, aspect, self.near, self.far) * view
    }
}

/// The ground grid: a square of half size `half_extent` around `centre` at height `height`,
/// with a line every `cell` metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ground {
    pub height: f32,
    pub centre: Vec3,
    pub half_extent: f32,
    pub cell: f32,
}

/// What a render sees besides the crowd.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scene {
    pub camera: Camera,
    /// Unit direction toward the directional light.
    pub light: Vec3,
    pub ground: Option<Ground>,
    /// Distance at which fog is strongest.
    pub fog_distance: f32,
    /// The frame's first `highlight` instances (numbered across the batches, in order) are
    /// drawn in one gold colour instead of their hashed tint: a demo's CPU-posed heroes.
    pub highlight: u32,
}

/// Camera azimuth about +Y from +Z toward +X, and elevation, of [`Scene::framing`] (radians).
const AZIMUTH: f32 = 0.40;
const ELEVATION: f32 = 0.50;
/// Vertical field of view of [`Scene::framing`].
const FOV_Y: f32 = 0.70;
/// Fraction of the view left free around the crowd.
const MARGIN: f32 = 0.04;

impl Scene {
    /// A scene looking at `crowd` (scene-space bounds of every instance) from above-front
    /// (characters face +Z), as close as keeps every corner of `crowd` inside the view for an
    /// image of `aspect` = w / h, centred on the tighter axis; a ground grid of `cell` metres.
    pub fn framing(crowd: &Bounds, aspect: f32, cell: f32) -> Scene {
        let crowd = if crowd.is_empty() {
            Bounds {
                min: Vec3::splat(-1.0),
                max: Vec3::splat(1.0),
            }
        } else {
            *crowd
        };
        let back = Vec3::new(
            AZIMUTH.sin() * ELEVATION.cos(),
            ELEVATION.sin(),
            AZIMUTH.cos() * ELEVATION.cos(),
        );
        let forward = -back;
        let right = forward.cross(Vec3::Y).normalize();
        let up = right.cross(forward);
        let tan_y = (FOV_Y * 0.5).tan() * (1.0 - MARGIN);
        let tan_x = tan_y * aspect.max(1e-3);
        // In camera axes (x right, y up, z forward) a corner c is inside the view from eye e
        // when |c.x - e.x| <= (c.z - e.z)·tan on each axis, i.e. e.x - e.z·tan >= max(c.x - c.z·tan)
        // =: lo and e.x + e.z·tan <= min(c.x + c.z·tan) =: hi. The nearest e.z that fits both
        // axes is the smaller of (hi - lo) / (2·tan); then each axis is centred in the image.
        let fit = |axis: Vec3, tan: f32| {
            let (mut lo, mut hi) = (f32::NEG_INFINITY, f32::INFINITY);
            for c in crowd.corners() {
                let (x, z) = (c.dot(axis), c.dot(forward));
                lo = lo.max(x - z * tan);
                hi = hi.min(x + z * tan);
            }
            (lo, hi, (hi - lo) / (2.0 * tan))
        };
        let (x_lo, x_hi, ez_x) = fit(right, tan_x);
        let (y_lo, y_hi, ez_y) = fit(up, tan_y);
        let ez = ez_x.min(ez_y);
        let ex = centre_axis(
            &crowd,
            right,
            forward,
            ez,
            x_lo + ez * tan_x,
            x_hi - ez * tan_x,
        );
        let ey = centre_axis(
            &crowd,
            up,
            forward,
            ez,
            y_lo + ez * tan_y,
            y_hi - ez * tan_y,
        );
        let eye = right * ex + up * ey + forward * ez;
        let target_depth = crowd.centre().dot(forward) - ez;
        let target = eye + forward * target_depth.max(1e-3);
        let radius = (crowd.max - crowd.min).length() * 0.5;
        let half_extent = radius * 1.5 + cell;
        let near_depth = crowd
            .corners()
            .map(|c| c.dot(forward) - ez)
            .fold(f32::INFINITY, f32::min);
        Scene {
            camera: Camera {
                eye,
                target,
                fov_y: FOV_Y,
                near: (near_depth * 0.5).max(target_depth * 0.01).max(1e-4),
                far: target_depth + 2.0 * half_extent,
            },
            light: Vec3::new(-0.35, 0.85, 0.55).normalize(),
            ground: Some(Ground {
                height: crowd.min.y,
                centre: crowd.centre(),
                half_extent,
                cell,
            }),
            fog_distance: target_depth + half_extent,
            highlight: 0,
        }
    }
}

/// The eye coordinate along `axis`, in `[lo, hi]`, that puts the crowd's projected extent on
/// that axis in the middle of the image (eye at depth `ez` along `forward`): the projected
/// maximum plus minimum falls as the eye moves along the axis, so bisect for zero.
fn centre_axis(crowd: &Bounds, axis: Vec3, forward: Vec3, ez: f32, lo: f32, hi: f32) -> f32 {
    let sum = |e: f32| {
        let (mut min, mut max) = (f32::INFINITY, f32::NEG_INFINITY);
        for c in crowd.corners() {
            let p = (c.dot(axis) - e) / (c.dot(forward) - ez).max(1e-6);
            min = min.min(p);
            max = max.max(p);
        }
        min + max
    };
    let (mut lo, mut hi) = (lo.min(hi), hi.max(lo));
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if sum(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// An image read back from the colour target: `rgba[(y * width + x) * 4 ..][..4]`, top row
/// first, sRGB-encoded.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

impl Image {
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        let p = self.rgba.get(i..i + 4)?;
        Some([p[0], p[1], p[2], p[3]])
    }
}

/// What one render did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RasterReport {
    /// Instanced crowd draws (one per skinned run) plus the ground.
    pub draws: usize,
}

/// Time of the last render.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RasterTimes {
    /// GPU time of the render pass from timestamp queries, when the adapter has them.
    pub gpu_ms: Option<f64>,
    /// Wall time from submission (render pass and image copy) to the queue going idle.
    pub wall_ms: f64,
}

/// Screen-space motion (pixels) at the edge of the motion image's encoding: a channel holds
/// `0.5 + motion / (2 · MOTION_RANGE)`, so 128 is still and one step of 8 bits is 1/8 px.
pub const MOTION_RANGE: f32 = 16.0;

/// The motion image's format: red and green the encoded motion, linear.
pub const MOTION_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// The motion-vector pass: its pipeline, draw layout (the crowd's plus the previous positions)
/// and single-sample targets, made on first use.
struct MotionPass {
    pipeline: wgpu::RenderPipeline,
    draw_layout: wgpu::BindGroupLayout,
    targets: Targets,
}

/// The frame slot whose member covers an image pixel of bytes `rgba` rendered with
/// [`CrowdPass::set_member_ids`] (raster.wgsl `member_colour`: slot + 1 in base-64 digits, each
/// written as byte 4 · digit + 2, so an sRGB encoding off by one still reads back); `None`:
/// no member (the ground, a prop, the background).
pub fn member_at(rgba: [u8; 4]) -> Option<u32> {
    let [r, g, b, _] = rgba.map(|c| u32::from(c) / 4);
    (r | g << 6 | b << 12).checked_sub(1)
}

/// Colour, depth and readback targets.
struct Targets {
    /// The multisampled colour target, when rendering more than one sample.
    msaa: Option<wgpu::TextureView>,
    color: wgpu::Texture,
    color_view: wgpu::TextureView,
    depth: wgpu::TextureView,
    readback: wgpu::Buffer,
    padded_row: u32,
}

/// The raster pass and its targets for one image size: a [`CrowdPass`] drawing into
/// offscreen targets that are read back.
pub struct Raster {
    ctx: GpuContext,
    width: u32,
    height: u32,
    crowd: CrowdPass,
    targets: Targets,
    motion: Option<MotionPass>,
    motion_submitted: bool,
    profiler: GpuProfiler,
    submitted: Option<Instant>,
}

impl Raster {
    /// Pipelines and `width` × `height` targets (each side at least 1 and at most the adapter's
    /// `max_texture_dimension_2d`).
    pub fn new(ctx: &GpuContext, width: u32, height: u32) -> Result<Raster, GpuError> {
        if width == 0 || height == 0 {
            return Err(GpuError::Wgpu {
                what: "render target creation",
                reason: format!("a {width}x{height} image has no pixels"),
            });
        }
        let max = ctx.device.limits().max_texture_dimension_2d;
        for (what, n) in [("image width", width), ("image height", height)] {
            if n > max {
                return Err(GpuError::AdapterLimit {
                    adapter: ctx.adapter.name.clone(),
                    what,
                    have: max.into(),
                    need: n.into(),
                });
            }
        }
        let device = &ctx.device;
        let samples = if ctx.adapter.software { 1 } else { SAMPLES };
        let target = Target {
            color: COLOR_FORMAT,
            depth: DEPTH_FORMAT,
            samples,
        };
        let crowd = CrowdPass::new(ctx, target)?;
        let targets = scoped(device, "raster target creation", || {
            targets(device, (width, height), samples, COLOR_FORMAT)
        })?;
        let settings = GpuProfilerSettings {
            enable_timer_queries: ctx.timestamps,
            enable_debug_groups: false,
            ..Default::default()
        };
        let profiler = GpuProfiler::new(device, settings).map_err(|e| GpuError::Wgpu {
            what: "raster profiler creation",
            reason: e.to_string(),
        })?;
        Ok(Raster {
            ctx: ctx.clone(),
            width,
            height,
            crowd,
            targets,
            motion: None,
            motion_submitted: false,
            profiler,
            submitted: None,
        })
    }

    /// [`CrowdPass::set_member_ids`] for the next renders (cleared to no member).
    pub fn set_member_ids(&mut self, ids: bool) {
        self.crowd.set_member_ids(ids);
    }

    /// [`CrowdPass::set_tiers`] for the next renders.
    pub fn set_tiers(&mut self, tiers: &[u8]) {
        self.crowd.set_tiers(tiers);
    }

    /// [`CrowdPass::set_impostor`] for the next renders.
    pub fn set_impostor(&mut self, impostor: &Impostor, atlas: &Image) -> Result<(), GpuError> {
        self.crowd.set_impostor(impostor, atlas)
    }

    /// [`CrowdPass::set_cards`] for the next renders.
    pub fn set_cards(&mut self, cards: &[Card]) {
        self.crowd.set_cards(cards);
    }

    /// [`CrowdPass::set_lod_fades`] for the next renders.
    pub fn set_lod_fades(&mut self, fades: &[crate::draw::LodFade]) {
        self.crowd.set_lod_fades(fades);
    }

    /// Width over height.
    pub fn aspect(&self) -> f32 {
        self.width as f32 / self.height as f32
    }

    /// Draws the skinned runs of `runtime`'s last frame and the ground, then copies the image
    /// for [`Raster::read_image`]. Submits without waiting; the queue orders it after the
    /// frame's compute passes.
    pub fn render(&mut self, runtime: &Runtime, scene: &Scene) -> Result<RasterReport, GpuError> {
        let report = self
            .crowd
            .prepare(runtime, scene, (self.width, self.height))?;
        let device = self.ctx.device.clone();
        let mut encoder = scoped(&device, "raster recording", || {
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("throng raster"),
            });
            self.record(&mut encoder);
            copy_target(&mut encoder, &self.targets, self.width, self.height);
            encoder
        })?;
        self.profiler.resolve_queries(&mut encoder);
        scoped(&device, "raster submission", || {
            self.ctx.queue.submit([encoder.finish()])
        })?;
        self.submitted = Some(Instant::now());
        self.profiler.end_frame().map_err(|e| GpuError::Wgpu {
            what: "raster profiler frame end",
            reason: e.to_string(),
        })?;
        Ok(report)
    }

    /// Records the render pass into the targets: cleared to the background, the crowd pass.
    fn record(&self, encoder: &mut wgpu::CommandEncoder) {
        let t = &self.targets;
        let [r, g, b] = match self.crowd.member_ids() {
            true => [0.0; 3],
            false => BACKGROUND.map(f64::from),
        };
        let query = self.profiler.begin_pass_query("raster", encoder);
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("raster"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: t.msaa.as_ref().unwrap_or(&t.color_view),
                depth_slice: None,
                resolve_target: t.msaa.as_ref().map(|_| &t.color_view),
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a: 1.0 }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(cleared_depth(&t.depth)),
            timestamp_writes: query.render_pass_timestamp_writes(),
            occlusion_query_set: None,
            multiview_mask: None,
        });
        self.crowd.render(&mut pass);
        drop(pass);
        self.profiler.end_query(encoder, query);
    }

    /// Draws the motion vectors of `runtime`'s last frame (which kept them: `RuntimeOptions::
    /// outputs.motion`) seen now through `scene`'s camera and before through `previous`, for
    /// [`Raster::read_motion`]: per pixel the screen-space motion of the nearest skinned
    /// surface or card (a card moved by its centre's motion since the cards set before),
    /// encoded with [`MOTION_RANGE`] (128, 128 where nothing moves or nothing was drawn).
    /// Submits without waiting.
    pub fn render_motion(
        &mut self,
        runtime: &Runtime,
        scene: &Scene,
        previous: &Camera,
    ) -> Result<(), GpuError> {
        let Some(pages) = runtime.previous_pages() else {
            return Err(GpuError::Wgpu {
                what: "motion-vector pass",
                reason: "the runtime keeps no motion vectors: create it with outputs.motion".into(),
            });
        };
        let size = (self.width, self.height);
        self.crowd
            .prepare_seen_before(runtime, scene, size, previous)?;
        self.crowd.prepare_card_motion(Target {
            color: MOTION_FORMAT,
            depth: DEPTH_FORMAT,
            samples: 1,
        });
        let device = self.ctx.device.clone();
        let encoder = scoped(&device, "motion-vector recording", || {
            if self.motion.is_none() {
                self.motion = Some(motion_pass(
                    &device,
                    &self.crowd.frame_layout,
                    self.width,
                    self.height,
                ));
            }
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("throng motion vectors"),
            });
            if let Some(m) = &self.motion {
                let groups = self.motion_groups(runtime, pages, m);
                self.record_motion(&mut encoder, runtime.indirect_buffer(), &groups, m);
            }
            encoder
        })?;
        scoped(&device, "motion-vector submission", || {
            self.ctx.queue.submit([encoder.finish()])
        })?;
        self.motion_submitted = true;
        Ok(())
    }

    /// The last motion-vector image (waits for the GPU): red and green the encoded motion.
    pub fn read_motion(&self) -> Result<Image, GpuError> {
        match (&self.motion, self.motion_submitted) {
            (Some(m), true) => self.read_target(&m.targets, "motion vectors"),
            _ => Err(GpuError::NothingToRead),
        }
    }

    /// The motion pass's draw bind groups: the crowd's entries plus the draw's range of the
    /// previous positions.
    fn motion_groups(
        &self,
        runtime: &Runtime,
        previous: &[wgpu::Buffer],
        m: &MotionPass,
    ) -> Vec<wgpu::BindGroup> {
        let pages = runtime.skinned_pages();
        (self.crowd.planned.iter())
            .filter_map(|d| Some((d, pages.get(d.run.page)?, previous.get(d.run.page)?)))
            .map(|(d, page, before)| {
                let [a, b, c, e] = draw_entries(&self.crowd, runtime, page, d);
                let before = wgpu::BindGroupEntry {
                    binding: 4,
                    resource: range(before, d.run.offset, d.run.size),
                };
                self.ctx
                    .device
                    .create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("motion draw"),
                        layout: &m.draw_layout,
                        entries: &[a, b, c, e, before],
                    })
            })
            .collect()
    }

    /// Records the motion pass (no ground: it does not move) and copies its image.
    fn record_motion(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        indirect: &wgpu::Buffer,
        per_draw: &[wgpu::BindGroup],
        m: &MotionPass,
    ) {
        let t = &m.targets;
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("motion vectors"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &t.color_view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: 0.5,
                        g: 0.5,
                        b: 0.0,
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(cleared_depth(&t.depth)),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        if let Some(frame) = &self.crowd.frame_group {
            pass.set_bind_group(0, frame, &[]);
            pass.set_pipeline(&m.pipeline);
            self.crowd.draw_runs(&mut pass, indirect, per_draw);
            self.crowd.render_card_motion(&mut pass);
        }
        drop(pass);
        copy_target(encoder, t, self.width, self.height);
    }

    /// Waits for the last render and returns its times.
    pub fn finish(&mut self) -> Result<RasterTimes, GpuError> {
        self.ctx.wait()?;
        let mut times = RasterTimes {
            gpu_ms: None,
            wall_ms: self
                .submitted
                .map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3),
        };
        let period = self.ctx.queue.get_timestamp_period();
        while let Some(results) = self.profiler.process_finished_frame(period) {
            for r in results {
                if let Some(t) = r.time {
                    times.gpu_ms = Some((t.end - t.start) * 1e3);
                }
            }
        }
        Ok(times)
    }

    /// The last rendered image (waits for the GPU).
    pub fn read_image(&self) -> Result<Image, GpuError> {
        if self.submitted.is_none() {
            return Err(GpuError::NothingToRead);
        }
        self.read_target(&self.targets, "image")
    }

    /// The pixels of `t`'s readback, rows unpadded.
    fn read_target(&self, t: &Targets, what: &'static str) -> Result<Image, GpuError> {
        let bytes = map_read(&self.ctx, &t.readback, what)?;
        unpad(&bytes, (self.width, self.height), t.padded_row, false, what)
    }
}

/// Reads a 2D texture of four 8-bit channels back as an [`Image`] (waits for the GPU): a
/// screenshot of a surface texture made with `COPY_SRC`, before it is presented. BGRA formats
/// are swapped to RGBA; other formats are refused.
pub fn read_texture(ctx: &GpuContext, texture: &wgpu::Texture) -> Result<Image, GpuError> {
    use wgpu::TextureFormat as F;
    let bgra = match texture.format() {
        F::Bgra8Unorm | F::Bgra8UnormSrgb => true,
        F::Rgba8Unorm | F::Rgba8UnormSrgb => false,
        other => {
            return Err(GpuError::Readback {
                what: "a texture",
                reason: format!("{other:?} is not an 8-bit RGBA or BGRA format"),
            })
        }
    };
    let (width, height) = (texture.width(), texture.height());
    let row = align_up(
        u64::from(width) * 4,
        u64::from(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT),
    );
    let device = &ctx.device;
    let buffer = scoped(device, "texture readback", || {
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("texture readback"),
            size: row * u64::from(height),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        let layout = wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(row as u32),
            rows_per_image: Some(height),
        };
        let to = wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout,
        };
        encoder.copy_texture_to_buffer(texture.as_image_copy(), to, texture.size());
        ctx.queue.submit([encoder.finish()]);
        buffer
    })?;
    let bytes = map_read(ctx, &buffer, "a texture")?;
    unpad(&bytes, (width, height), row as u32, bgra, "a texture")
}

/// Tightly packed RGBA rows of `bytes` (rows `padded_row` bytes apart; `bgra`: swap red and
/// blue).
fn unpad(
    bytes: &[u8],
    (width, height): (u32, u32),
    padded_row: u32,
    bgra: bool,
    what: &'static str,
) -> Result<Image, GpuError> {
    let row = width as usize * 4;
    let mut rgba = Vec::with_capacity(row * height as usize);
    for y in 0..height as usize {
        let start = y * padded_row as usize;
        let pixels = bytes
            .get(start..start + row)
            .ok_or_else(|| GpuError::Readback {
                what,
                reason: format!("row {y} lies outside the {} mapped bytes", bytes.len()),
            })?;
        rgba.extend_from_slice(pixels);
    }
    if bgra {
        rgba.chunks_exact_mut(4).for_each(|p| p.swap(0, 2));
    }
    Ok(Image {
        width,
        height,
        rgba,
    })
}

/// Copies `t`'s colour texture into its readback buffer (rows padded to
/// `COPY_BYTES_PER_ROW_ALIGNMENT`).
fn copy_target(encoder: &mut wgpu::CommandEncoder, t: &Targets, width: u32, height: u32) {
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture: &t.color,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &t.readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(t.padded_row),
                rows_per_image: Some(height),
            },
        },
        wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
    );
}

/// The motion-vector pass for a `width` × `height` image: the crowd's draws through
/// raster.wgsl's motion entry points into a single-sample [`MOTION_FORMAT`] target.
fn motion_pass(
    device: &wgpu::Device,
    frame_layout: &wgpu::BindGroupLayout,
    width: u32,
    height: u32,
) -> MotionPass {
    let draw_layout = draw_layout(device, "motion draw", 4);
    let module = raster_module(device, "raster motion");
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("raster motion"),
        bind_group_layouts: &[Some(frame_layout), Some(&draw_layout)],
        immediate_size: 0,
    });
    let pipeline = render_pipeline(
        device,
        &module,
        ("raster motion", &layout),
        (throng_shaders::MOTION_VS, throng_shaders::MOTION_FS),
        (
            Target {
                color: MOTION_FORMAT,
                depth: DEPTH_FORMAT,
                samples: 1,
            },
            wgpu::PrimitiveTopology::TriangleList,
        ),
    );
    MotionPass {
        pipeline,
        draw_layout,
        targets: targets(device, (width, height), 1, MOTION_FORMAT),
    }
}

/// Colour (multisampled when `samples` > 1) and depth, the resolved colour in `format`, and its
/// readback buffer.
fn targets(
    device: &wgpu::Device,
    (width, height): (u32, u32),
    samples: u32,
    format: wgpu::TextureFormat,
) -> Targets {
    let size = wgpu::Extent3d {
        width,
        height,
        depth_or_array_layers: 1,
    };
    let texture = |label, format, samples, usage| {
        device.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size,
            mip_level_count: 1,
            sample_count: samples,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage,
            view_formats: &[],
        })
    };
    use wgpu::TextureUsages as T;
    let view = |t: &wgpu::Texture| t.create_view(&Default::default());
    let msaa = (samples > 1).then(|| texture("raster msaa", format, samples, T::RENDER_ATTACHMENT));
    let color = texture(
        "raster colour",
        format,
        1,
        T::RENDER_ATTACHMENT | T::COPY_SRC,
    );
    let depth = texture("raster depth", DEPTH_FORMAT, samples, T::RENDER_ATTACHMENT);
    let padded_row = align_up(
        u64::from(width) * 4,
        u64::from(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT),
    ) as u32;
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("raster readback"),
        size: u64::from(padded_row) * u64::from(height),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    Targets {
        msaa: msaa.as_ref().map(view),
        color_view: view(&color),
        color,
        depth: view(&depth),
        readback,
        padded_row,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_ids_read_back_whole_even_when_the_srgb_encoding_is_a_byte_off() {
        for slot in [0u32, 1, 62, 63, 64, 4094, 4095, 262_142] {
            let k = slot + 1;
            let digits = [k & 63, (k >> 6) & 63, (k >> 12) & 63];
            for off in [-1i32, 0, 1] {
                let [r, g, b] = digits.map(|d| (4 * d as i32 + 2 + off) as u8);
                assert_eq!(member_at([r, g, b, 255]), Some(slot), "slot {slot}, {off}");
            }
        }
        assert_eq!(member_at([2, 2, 2, 255]), None);
        assert_eq!(member_at([0, 0, 0, 255]), None);
    }

    /// Projected x and y extents (min, max) of the corners of `b`.
    fn extents(scene: &Scene, b: &Bounds, aspect: f32) -> ([f32; 2], [f32; 2]) {
        let m = scene.camera.view_proj(aspect);
        let (mut x, mut y) = (
            [f32::INFINITY, f32::NEG_INFINITY],
            [f32::INFINITY, f32::NEG_INFINITY],
        );
        for c in b.corners() {
            let p = m.project_point3(c);
            x = [x[0].min(p.x), x[1].max(p.x)];
            y = [y[0].min(p.y), y[1].max(p.y)];
        }
        (x, y)
    }

    #[test]
    fn framing_keeps_the_crowd_in_view_centred_and_tight() {
        for (b, aspect) in [
            (
                Bounds {
                    min: Vec3::new(-20.0, 0.0, -20.0),
                    max: Vec3::new(20.0, 2.0, 20.0),
                },
                16.0 / 9.0,
            ),
            (
                Bounds {
                    min: Vec3::new(-3.0, 0.0, -3.0),
                    max: Vec3::new(3.0, 2.0, 3.0),
                },
                4.0 / 3.0,
            ),
            (
                Bounds {
                    min: Vec3::new(5.0, 1.0, -1.0),
                    max: Vec3::new(6.0, 3.0, 0.0),
                },
                0.5,
            ),
        ] {
            let scene = Scene::framing(&b, aspect, 1.0);
            let (x, y) = extents(&scene, &b, aspect);
            println!("{b:?} {aspect}: x {x:?} y {y:?}");
            for v in x.iter().chain(&y) {
                assert!(v.abs() <= 1.0 - MARGIN + 1e-3, "{x:?} {y:?}");
            }
            assert!(
                (x[0] + x[1]).abs() < 1e-3 && (y[0] + y[1]).abs() < 1e-3,
                "not centred: {x:?} {y:?}"
            );
            let widest = (x[1] - x[0]).max(y[1] - y[0]) * 0.5;
            assert!(widest > 1.0 - MARGIN - 1e-3, "not tight: {x:?} {y:?}");
        }
    }
}
