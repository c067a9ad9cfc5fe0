//! Readback of a frame's outputs into throng-cpu-ref's `BatchOutput`, the form the CPU oracle
//! writes (for parity, tests and tools; it waits for the GPU).

use glam::{Affine3A, Vec3};
use throng_cpu_ref::bounds::Bounds;
use throng_cpu_ref::{BatchOutput, SkinnedVertex, Trs};
use throng_shaders::Stream;

use crate::context::{map_read, scoped};
use crate::frame_buffers::{FrameBuffers, BOUNDS_BYTES};
use crate::layout::{AffineRows, SkinnedRecord, TrsRecord};
use crate::plan::BatchSlots;
use crate::resident::SkinTier;
use crate::{GpuContext, GpuError};

/// One skinned batch's share of a frame's skinned pool: its skinned instances in frame-slot
/// order, each `(frame slot, rank in the pool, level)`, and its skin's levels.
pub(crate) struct SkinnedShare<'a> {
    pub instances: Vec<(u32, u32, u8)>,
    pub tiers: &'a [SkinTier],
}

impl SkinnedShare<'_> {
    /// Per-vertex outputs of the pool (`pool`, `stride` elements per rank, each rank's level's
    /// vertices first) for this share's instances, in frame-slot order with `vertex_count`
    /// vertices per instance, each at its place in the skin: a vertex its level does not use is
    /// `missing`.
    fn unpack<T: Clone>(
        &self,
        pool: &[T],
        stride: usize,
        vertex_count: usize,
        missing: T,
    ) -> Vec<T> {
        let mut out = vec![missing; self.instances.len() * vertex_count];
        for (i, &(_, rank, level)) in self.instances.iter().enumerate() {
            let Some(tier) = self.tiers.get(level as usize) else {
                continue;
            };
            let at = rank as usize * stride;
            let local = pool.get(at..at + vertex_count).unwrap_or(&[]);
            for (k, value) in local.iter().take(tier.vertex_count as usize).enumerate() {
                let v = tier.vertices.get(k).map_or(k, |&v| v as usize);
                if let Some(o) = out.get_mut(i * vertex_count + v) {
                    *o = value.clone();
                }
            }
        }
        out
    }
}

/// What a copy reads: a stream's page, or the bounds buffer.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    Stream(Stream, usize),
    Bounds,
}

/// One copy: a byte range of a source holding whole instances.
struct Copy {
    batch: usize,
    source: Source,
    offset: u64,
    bytes: u64,
}

/// The page runs of `count` instances from `slot` in `stream`.
fn runs(
    buffers: &FrameBuffers,
    batch: usize,
    stream: Stream,
    slot: u32,
    count: u32,
    out: &mut Vec<Copy>,
) {
    let s = buffers.stream(stream);
    let per = s.paging.page_instances;
    let (mut at, end) = (slot, slot + count);
    while at < end {
        let n = ((at / per + 1) * per).min(end) - at;
        let (page, offset) = s.locate(at, 0);
        out.push(Copy {
            batch,
            source: Source::Stream(stream, page),
            offset,
            bytes: u64::from(n) * s.instance_bytes,
        });
        at += n;
    }
}

/// Reads every batch of `batches`: components, and locals, palettes, curve values, skinned
/// vertices (and their previous positions) and bounds where the frame wrote them. Skinned vertices are those
/// of the batch's skinned instances (`skinned[b]`), in frame-slot order; a vertex an instance's
/// level of detail does not skin reads back as NaN.
pub(crate) fn read(
    ctx: &GpuContext,
    buffers: &FrameBuffers,
    batches: &[BatchSlots],
    skinned: &[Option<SkinnedShare>],
    outputs: throng_cpu_ref::Outputs,
) -> Result<Vec<BatchOutput>, GpuError> {
    let mut copies = Vec::new();
    for (index, b) in batches.iter().enumerate() {
        let mut streams = vec![Stream::Components];
        if outputs.locals {
            streams.push(Stream::Locals);
        }
        if b.skin.is_some() {
            streams.push(Stream::Palettes);
        }
        if b.curve_count > 0 {
            streams.push(Stream::Curves);
        }
        for s in streams {
            runs(buffers, index, s, b.first_slot, b.count, &mut copies);
        }
        if b.skin.is_some() {
            copies.push(Copy {
                batch: index,
                source: Source::Bounds,
                offset: u64::from(b.first_slot) * BOUNDS_BYTES,
                bytes: u64::from(b.count) * BOUNDS_BYTES,
            });
        }
    }
    // The skinned pool up to the last rank any batch reads, read once.
    let pool = batches.len();
    let ranks = (skinned.iter().flatten())
        .flat_map(|s| s.instances.iter().map(|&(_, rank, _)| rank + 1))
        .max()
        .unwrap_or(0);
    if ranks > 0 {
        runs(buffers, pool, Stream::Skinned, 0, ranks, &mut copies);
        if outputs.motion {
            runs(buffers, pool, Stream::Previous, 0, ranks, &mut copies);
        }
    }
    let total: u64 = copies.iter().map(|c| c.bytes).sum();
    let device = &ctx.device;
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
        for c in &copies {
            let from = match c.source {
                Source::Stream(s, page) => &buffers.stream(s).pages[page],
                Source::Bounds => &buffers.bounds,
            };
            encoder.copy_buffer_to_buffer(from, c.offset, &staging, at, c.bytes);
            at += c.bytes;
        }
        ctx.queue.submit([encoder.finish()]);
        staging
    })?;
    let bytes = map_read(ctx, &staging, "frame outputs")?;
    let mut out: Vec<BatchOutput> = batches
        .iter()
        .map(|b| BatchOutput {
            joints: b.joints as usize,
            palette_len: b.palette_len as usize,
            vertex_count: b.vertex_count as usize,
            curve_count: b.curve_count as usize,
            ..BatchOutput::default()
        })
        .collect();
    let stride = buffers.stream(Stream::Skinned).paging.stride as usize;
    let mut pool_out = BatchOutput {
        vertex_count: stride,
        ..BatchOutput::default()
    };
    let mut at = 0usize;
    for c in &copies {
        let chunk = bytes.get(at..at + c.bytes as usize).unwrap_or(&[]);
        at += c.bytes as usize;
        let o = out.get_mut(c.batch).unwrap_or(&mut pool_out);
        let Source::Stream(stream, _) = c.source else {
            o.bounds.extend(
                bytemuck::pod_collect_to_vec::<u8, [[f32; 4]; 2]>(chunk)
                    .into_iter()
                    .map(bounds),
            );
            continue;
        };
        let s = buffers.stream(stream);
        for one in chunk.chunks(s.instance_bytes.max(1) as usize) {
            match stream {
                Stream::Locals => o
                    .locals
                    .extend(elements::<TrsRecord>(one, o.joints).map(Trs::from)),
                Stream::Components => o
                    .components
                    .extend(elements::<AffineRows>(one, o.joints).map(Affine3A::from)),
                Stream::Palettes => o
                    .palettes
                    .extend(elements::<AffineRows>(one, o.palette_len).map(Affine3A::from)),
                Stream::Skinned => o.skinned.extend(
                    elements::<SkinnedRecord>(one, o.vertex_count).map(SkinnedVertex::from),
                ),
                Stream::Previous => o.previous.extend(
                    elements::<[f32; 4]>(one, o.vertex_count).map(|p| Vec3::from_slice(&p[..3])),
                ),
                Stream::Curves => o.curves.extend(elements::<f32>(one, o.curve_count)),
                // Input of the next frame's skinning, never read back.
                Stream::LastPalettes => {}
            }
        }
    }
    for (o, share) in out.iter_mut().zip(skinned) {
        let Some(share) = share else {
            continue;
        };
        let missing = SkinnedVertex {
            position: Vec3::NAN,
            normal: Vec3::NAN,
        };
        o.skinned = share.unpack(&pool_out.skinned, stride, o.vertex_count, missing);
        if outputs.motion {
            o.previous = share.unpack(&pool_out.previous, stride, o.vertex_count, Vec3::NAN);
        }
    }
    Ok(out)
}

/// A bounds record as the CPU reference writes it (an empty box is [`Bounds::EMPTY`]).
fn bounds([lo, hi]: [[f32; 4]; 2]) -> Bounds {
    let b = Bounds {
        min: Vec3::from_slice(&lo[..3]),
        max: Vec3::from_slice(&hi[..3]),
    };
    if b.is_empty() {
        Bounds::EMPTY
    } else {
        b
    }
}

/// The first `n` elements of one instance's bytes.
fn elements<T: bytemuck::Pod>(bytes: &[u8], n: usize) -> impl Iterator<Item = T> {
    bytemuck::pod_collect_to_vec::<u8, T>(bytes)
        .into_iter()
        .take(n)
}

/// `count` u32 words of `buffer` from word `first` (the buffer needs `COPY_SRC`; waits).
pub(crate) fn words(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
    first: u64,
    count: u64,
) -> Result<Vec<u32>, GpuError> {
    let bytes = 4 * count.max(1);
    let device = &ctx.device;
    let staging = scoped(device, "readback copy", || {
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("word readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("word readback"),
        });
        encoder.copy_buffer_to_buffer(buffer, 4 * first, &staging, 0, bytes);
        ctx.queue.submit([encoder.finish()]);
        staging
    })?;
    let data = map_read(ctx, &staging, "words")?;
    Ok(bytemuck::pod_collect_to_vec::<u8, u32>(&data)
        .into_iter()
        .take(count as usize)
        .collect())
}
