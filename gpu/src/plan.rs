//! Planning a frame: frame slots per batch, instances binned by program shape, and the
//! dispatch list (one pose dispatch per (batch, shape), one skinning dispatch per skinned batch).
//!
//! Within a shape's bin, instances are sorted by the page of their outputs and the clip of
//! their first `Sample` op, so neighbouring lanes sample the same clip and take the same
//! sub-track branches (sample.wgsl) and write the same page. A plan is rebuilt each frame into
//! vectors kept from the last one: a steady frame allocates nothing. The same walk counts each
//! clip's `Sample` ops, from which the runtime chooses the clips of the decode cache.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;
use serde::Serialize;
use throng_cpu_ref::program::op;
use throng_cpu_ref::{Batch, Pose, Program};

use crate::resident::ResidentPackage;
use crate::shapes::Shapes;

/// Where one batch's instances live in the frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BatchSlots {
    pub package: usize,
    pub skeleton: u32,
    pub skin: Option<u32>,
    /// Slot of the batch's first instance; instance `i` is slot `first_slot + i`.
    pub first_slot: u32,
    pub count: u32,
    pub joints: u32,
    pub palette_len: u32,
    pub vertex_count: u32,
    pub heroes: u32,
}

/// How a pose dispatch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PosePath {
    Interpreter,
    Thread,
    Workgroup,
}

/// One pose dispatch: the instances of one shape at one skeleton LOD in one batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PoseDispatch {
    pub batch: usize,
    pub shape: u32,
    pub lod: u8,
    /// First record (vec4 index) and instance count.
    pub record_base: u32,
    pub count: u32,
    pub stride: u32,
    pub path: PosePath,
}

/// Everything a frame dispatches, and how its instances are laid out.
#[derive(Default)]
pub(crate) struct Plan {
    pub batches: Vec<BatchSlots>,
    pub poses: Vec<PoseDispatch>,
    /// Scratch: (shape, LOD, page, clip, instance) of one batch's program instances.
    bins: Vec<(u32, u8, u32, u32, u32)>,
    /// Instance order of the records: `order[k]` is the batch instance of record `k` of the
    /// pose dispatches, in dispatch order.
    pub order: Vec<(usize, u32)>,
    /// Records, in vec4s.
    pub records: u32,
    /// Per package and clip, the `Sample` ops of the frame's programs on it (what the decode
    /// cache is chosen from).
    pub uses: Vec<Vec<AtomicU32>>,
}

/// Instances whose shapes one rayon task finds.
const BIN_CHUNK: usize = 1024;

/// A bin entry's shape before it is found.
const UNKNOWN_SHAPE: u32 = u32::MAX;

/// The clip of a program's first `Sample` op (0 without one), each `Sample` op counted in
/// `uses` (by clip): runs of one clip, as in a sorted crowd, are added at once.
fn first_clip(p: &Program, uses: &[AtomicU32], run: &mut (u32, u32)) -> u32 {
    let mut first = None;
    for o in p.ops.iter().filter(|o| o.code == op::SAMPLE) {
        first.get_or_insert(o.a);
        if o.a != run.0 {
            add_uses(uses, *run);
            *run = (o.a, 0);
        }
        run.1 += 1;
    }
    first.unwrap_or(0)
}

fn add_uses(uses: &[AtomicU32], (clip, n): (u32, u32)) {
    if let Some(u) = uses.get(clip as usize) {
        u.fetch_add(n, Ordering::Relaxed);
    }
}

impl Plan {
    /// Lays out `batches` (already validated) over `packages`: slots in batch order, shapes,
    /// bins and records. `page_instances` is the component stream's page size.
    pub fn build(
        &mut self,
        batches: &[Batch],
        packages: &[ResidentPackage],
        shapes: &mut Shapes,
        page_instances: u32,
    ) {
        self.batches.clear();
        self.poses.clear();
        self.order.clear();
        self.records = 0;
        self.uses.resize_with(packages.len(), Vec::new);
        for (uses, p) in self.uses.iter_mut().zip(packages) {
            if uses.len() == p.package.clips.len() {
                uses.iter().for_each(|u| u.store(0, Ordering::Relaxed));
            } else {
                *uses = (0..p.package.clips.len())
                    .map(|_| AtomicU32::new(0))
                    .collect();
            }
        }
        let mut slot = 0u32;
        for (b, batch) in batches.iter().enumerate() {
            let Some(package) = packages.get(batch.package.0) else {
                continue;
            };
            let skin = batch.skin.and_then(|k| package.skins.get(k as usize));
            let joints = package.skeleton(batch.skeleton).map_or(0, |s| s.joints);
            let heroes = batch
                .instances
                .iter()
                .filter(|x| matches!(x.pose, Pose::Hero(_)))
                .count() as u32;
            self.batches.push(BatchSlots {
                package: batch.package.0,
                skeleton: batch.skeleton,
                skin: batch.skin,
                first_slot: slot,
                count: batch.instances.len() as u32,
                joints,
                palette_len: skin.map_or(0, |s| s.len),
                vertex_count: skin.map_or(0, |s| s.vertex_count),
                heroes,
            });
            self.bins.clear();
            self.bins
                .extend(batch.instances.iter().enumerate().filter_map(|(i, x)| {
                    let (_, lod) = x.pose.program()?;
                    let page = (slot + i as u32) / page_instances.max(1);
                    Some((UNKNOWN_SHAPE, lod, page, 0, i as u32))
                }));
            let program = |i: u32| batch.instances[i as usize].pose.program().map(|(p, _)| p);
            // First clips and known shapes in parallel (each chunk hints with its previous
            // instance's shape), then the new shapes registered in instance order, so ids do
            // not depend on the threads.
            let known: &Shapes = shapes;
            let uses = &self.uses[batch.package.0][..];
            self.bins.par_chunks_mut(BIN_CHUNK).for_each(|chunk| {
                let mut hint = None;
                let mut run = (0, 0);
                for e in chunk {
                    let Some(p) = program(e.4) else {
                        continue;
                    };
                    e.3 = first_clip(p, uses, &mut run);
                    if let Some(id) = known.find(p, &package.package, hint) {
                        e.0 = id;
                        hint = Some(id);
                    }
                }
                add_uses(uses, run);
            });
            let mut hint = None;
            for e in self.bins.iter_mut().filter(|e| e.0 == UNKNOWN_SHAPE) {
                if let Some(p) = program(e.4) {
                    e.0 = shapes.id(p, &package.package, hint);
                    hint = Some(e.0);
                }
            }
            self.bins.par_sort_unstable();
            let mut start = 0;
            while start < self.bins.len() {
                let (shape, lod) = (self.bins[start].0, self.bins[start].1);
                let end = start
                    + self.bins[start..]
                        .iter()
                        .take_while(|e| (e.0, e.1) == (shape, lod))
                        .count();
                let stride = shapes.entries[shape as usize].shape.record_stride();
                self.poses.push(PoseDispatch {
                    batch: b,
                    shape,
                    lod,
                    record_base: self.records,
                    count: (end - start) as u32,
                    stride,
                    path: PosePath::Interpreter,
                });
                self.records += stride * (end - start) as u32;
                self.order
                    .extend(self.bins[start..end].iter().map(|e| (b, e.4)));
                start = end;
            }
            slot += batch.instances.len() as u32;
        }
    }

    /// Frame slots used.
    pub fn slots(&self) -> u32 {
        self.batches.last().map_or(0, |b| b.first_slot + b.count)
    }
}
