//! Staging and upload: the bytes one frame of batches writes to the GPU. Per instance only what
//! varies: its record (slot, kind word and program values, 16 bytes for one clip), its kind word
//! (4 bytes: kind and level of detail), its clock (8 bytes: the clip and time a card past the
//! skinned budget shows) and, in a skinned batch, its placement (48 bytes); per
//! dispatch a 256-byte parameter slot; per hero its palette, straight into its slot of the
//! palette stream. Vectors are kept from frame to frame.

use rayon::prelude::*;
use throng_cpu_ref::frame::HIDDEN_LEVEL;
use throng_cpu_ref::program::op;
use throng_cpu_ref::{Batch, Pose, Program};
use throng_shaders::prelude::NO_CELL;
use throng_shaders::{kind_word, write_record, Stream, HERO_BIT, NO_KIND};

use crate::frame_buffers::FrameBuffers;
use crate::layout::AffineRows;
use crate::plan::Plan;
use crate::FrameReport;

/// A program's clock: the clip and time of its first `Sample`, or (`NO_CELL`, 0).
fn clock(p: &Program) -> [u32; 2] {
    (p.ops.iter())
        .find(|o| o.code == op::SAMPLE)
        .map_or([NO_CELL, 0], |o| [o.a, o.time.to_bits()])
}

/// Records one rayon task writes.
const RECORD_CHUNK: usize = 1024;

#[derive(Default)]
pub(crate) struct Staging {
    records: Vec<u32>,
    placements: Vec<AffineRows>,
    /// Per hero: (page, byte offset in it, first entry in `palettes`, entries).
    heroes: Vec<(usize, u64, usize, usize)>,
    palettes: Vec<AffineRows>,
    /// First placement slot written and how many, per run of skinned batches.
    placement_runs: Vec<(u32, usize, usize)>,
    /// Per frame slot its kind word (kind and level of detail; bounds.wgsl). Kept from frame to
    /// frame: a slot whose pose is kept (`Pose::Keep`) keeps its level, so one kept after a
    /// hidden frame stays hidden (`HIDDEN_LEVEL`).
    slot_kinds: Vec<u32>,
    /// Per frame slot its clock (scatter.wgsl): the clip and time of the first clip its
    /// program samples, or (`NO_CELL`, 0). Kept from frame to frame as the kind words are.
    clocks: Vec<[u32; 2]>,
    /// Frame slots of the last frame's kind words.
    slots: usize,
}

impl Staging {
    /// Stages `plan`'s records, the placements of skinned batches and the heroes' palettes.
    pub fn stage(
        &mut self,
        plan: &Plan,
        batches: &[Batch],
        buffers: &FrameBuffers,
        report: &mut FrameReport,
    ) {
        // Every record is written whole below: no clearing first.
        self.records.truncate(4 * plan.records as usize);
        self.records.resize(4 * plan.records as usize, 0);
        self.heroes.clear();
        self.palettes.clear();
        self.placements.clear();
        self.placement_runs.clear();
        // Records, in dispatch order, written in parallel chunks.
        let mut k = 0usize;
        for d in &plan.poses {
            let stride = 4 * d.stride as usize;
            let count = d.count as usize;
            let start = 4 * d.record_base as usize;
            let records = &mut self.records[start..start + stride * count];
            let order = &plan.order[k..k + count];
            k += count;
            let written: usize = records
                .par_chunks_mut((stride * RECORD_CHUNK).max(1))
                .zip(order.par_chunks(RECORD_CHUNK))
                .map(|(records, order)| {
                    let mut written = 0;
                    for (record, &(b, i)) in records.chunks_mut(stride.max(1)).zip(order) {
                        let slots = &plan.batches[b];
                        match batches
                            .get(b)
                            .and_then(|x| x.instances.get(i as usize))
                            .and_then(|x| x.pose.program())
                        {
                            Some((p, lod)) => {
                                let kind = kind_word(slots.kind, lod);
                                write_record(p, slots.first_slot + i, kind, record);
                                written += 1;
                            }
                            None => record.fill(0),
                        }
                    }
                    written
                })
                .sum();
            report.instance_bytes += (4 * stride * written) as u64;
        }
        let palettes = buffers.stream(Stream::Palettes);
        let total = plan.slots() as usize;
        // Slots no frame has held yet, or that changed batch, have no kind to keep.
        if self.slot_kinds.len() < total {
            self.slot_kinds.resize(total, NO_KIND);
            self.clocks.resize(total, [NO_CELL, 0]);
        }
        self.slots = total;
        report.instance_bytes += 12 * total as u64;
        for (slots, batch) in plan.batches.iter().zip(batches) {
            for (i, x) in batch.instances.iter().enumerate() {
                let level = match x.pose {
                    Pose::Keep => continue,
                    Pose::Hidden => HIDDEN_LEVEL,
                    pose => pose.program().map_or(0, |(_, lod)| lod),
                };
                let slot = slots.first_slot as usize + i;
                // A hero's flag: its morph targets take their default weights (morph.wgsl).
                let hero = if matches!(x.pose, Pose::Hero(_)) {
                    HERO_BIT
                } else {
                    0
                };
                self.slot_kinds[slot] = kind_word(slots.kind, level) | hero;
                if let Some((p, _)) = x.pose.program() {
                    self.clocks[slot] = clock(p);
                }
            }
            if slots.skin.is_none() {
                continue;
            }
            self.placement_runs.push((
                slots.first_slot,
                self.placements.len(),
                batch.instances.len(),
            ));
            self.placements.extend(
                batch
                    .instances
                    .iter()
                    .map(|x| AffineRows::from(&x.placement)),
            );
            report.instance_bytes += 48 * batch.instances.len() as u64;
            for (i, x) in batch.instances.iter().enumerate() {
                if let Pose::Hero(palette) = x.pose {
                    let (page, offset) = palettes.locate(slots.first_slot + i as u32, 0);
                    self.heroes
                        .push((page, offset, self.palettes.len(), palette.len()));
                    self.palettes.extend(palette.iter().map(AffineRows::from));
                    report.heroes += 1;
                }
            }
        }
    }

    /// Stages the palettes of the retained heroes `heroes` (frame slot, palette) alone: a frame
    /// of retained instances uploads nothing else per instance between ticks.
    pub fn stage_heroes<'a>(
        &mut self,
        heroes: impl Iterator<Item = (u32, &'a [glam::Affine3A])>,
        buffers: &FrameBuffers,
        report: &mut FrameReport,
    ) {
        self.records.clear();
        self.placements.clear();
        self.placement_runs.clear();
        self.heroes.clear();
        self.palettes.clear();
        self.slots = 0;
        let palettes = buffers.stream(Stream::Palettes);
        for (slot, palette) in heroes {
            let (page, offset) = palettes.locate(slot, 0);
            self.heroes
                .push((page, offset, self.palettes.len(), palette.len()));
            self.palettes.extend(palette.iter().map(AffineRows::from));
            report.heroes += 1;
        }
    }

    /// Writes everything staged.
    pub fn upload(&self, queue: &wgpu::Queue, buffers: &FrameBuffers, report: &mut FrameReport) {
        let mut write = |buffer: &wgpu::Buffer, offset: u64, bytes: &[u8]| {
            if !bytes.is_empty() {
                queue.write_buffer(buffer, offset, bytes);
                report.upload_bytes += bytes.len() as u64;
            }
        };
        write(&buffers.records, 0, bytemuck::cast_slice(&self.records));
        write(
            &buffers.slot_kinds,
            0,
            bytemuck::cast_slice(&self.slot_kinds[..self.slots.min(self.slot_kinds.len())]),
        );
        write(
            &buffers.cull.clocks,
            0,
            bytemuck::cast_slice(&self.clocks[..self.slots.min(self.clocks.len())]),
        );
        for &(slot, first, count) in &self.placement_runs {
            write(
                &buffers.placements,
                48 * u64::from(slot),
                bytemuck::cast_slice(&self.placements[first..first + count]),
            );
        }
        let pages = &buffers.stream(Stream::Palettes).pages;
        for &(page, offset, first, count) in &self.heroes {
            if let Some(buffer) = pages.get(page) {
                let bytes: &[u8] = bytemuck::cast_slice(&self.palettes[first..first + count]);
                write(buffer, offset, bytes);
                report.hero_bytes += bytes.len() as u64;
            }
        }
    }
}
