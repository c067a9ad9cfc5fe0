//! Planning a frame of batches: frame slots per batch, each batch's kind, and the instances of
//! every batch binned by program shape into one pose dispatch per shape.
//!
//! A dispatch holds every instance of its shape, whatever its batch, kind or skeleton LOD level;
//! within it, instances are sorted by level, kind, output page and the clip of their first
//! `Sample` op, so neighbouring lanes run the same joints, sample the same clip and take the same
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
    /// The batch's kind (its package, skeleton and skin; docs/gpu.md, "Kinds").
    pub kind: u32,
    /// Slot of the batch's first instance; instance `i` is slot `first_slot + i`.
    pub first_slot: u32,
    pub count: u32,
    pub joints: u32,
    pub palette_len: u32,
    pub vertex_count: u32,
    /// Curve channels of the batch's skeleton.
    pub curve_count: u32,
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

/// One pose dispatch: the frame's instances of one shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PoseDispatch {
    pub shape: u32,
    /// First record (vec4 index) and instance count.
    pub record_base: u32,
    pub count: u32,
    pub stride: u32,
    /// The most joints and the deepest joint of the dispatch's kinds.
    pub joints: u32,
    pub max_depth: u32,
    /// The packages of its instances, a bit each (bit 63: package 63 or later).
    pub packages: u64,
    /// Whether any of its instances writes a palette (its batch has a skin).
    pub skinned: bool,
    pub path: PosePath,
}

/// Everything a frame dispatches, and how its instances are laid out.
#[derive(Default)]
pub(crate) struct Plan {
    pub batches: Vec<BatchSlots>,
    pub poses: Vec<PoseDispatch>,
    /// Scratch: (shape, LOD, kind, page, clip, batch, instance) of the frame's program instances.
    bins: Vec<Bin>,
    /// Instance order of the records: `order[k]` is the (batch, instance) of record `k` of the
    /// pose dispatches, in dispatch order.
    pub order: Vec<(usize, u32)>,
    /// Records, in vec4s.
    pub records: u32,
    /// Per package and clip, the `Sample` ops of the frame's programs on it (what the decode
    /// cache is chosen from).
    pub uses: Vec<Vec<AtomicU32>>,
}

/// A program instance's sort key: shape, level, kind, page, first clip, then its place.
type Bin = (u32, u8, u32, u32, u32, u32, u32);

/// Instances whose shapes one rayon task finds.
const BIN_CHUNK: usize = 1024;

/// A bin entry's shape before it is found.
const UNKNOWN_SHAPE: u32 = u32::MAX;

/// The bit of package `p` in [`PoseDispatch::packages`].
pub(crate) fn package_bit(p: usize) -> u64 {
    1 << p.min(63)
}

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
    /// Clears the per-package clip counts for `packages`.
    pub fn reset_uses(&mut self, packages: &[ResidentPackage]) {
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
    }

    /// Lays out `batches` (already validated; `kinds[b]` is batch `b`'s kind) over `packages`:
    /// slots in batch order, shapes, bins and records. `page_instances` is the component
    /// stream's page size.
    pub fn build(
        &mut self,
        batches: &[Batch],
        kinds: &[u32],
        packages: &[ResidentPackage],
        shapes: &mut Shapes,
        page_instances: u32,
    ) {
        self.batches.clear();
        self.poses.clear();
        self.order.clear();
        self.bins.clear();
        self.records = 0;
        self.reset_uses(packages);
        let mut slot = 0u32;
        for (b, batch) in batches.iter().enumerate() {
            let Some(package) = packages.get(batch.package.0) else {
                continue;
            };
            let skin = batch.skin.and_then(|k| package.skins.get(k as usize));
            let joints = package.skeleton(batch.skeleton).map_or(0, |s| s.joints);
            let curve_count = package
                .skeleton(batch.skeleton)
                .map_or(0, |s| s.curve_count);
            let heroes = batch
                .instances
                .iter()
                .filter(|x| matches!(x.pose, Pose::Hero(_)))
                .count() as u32;
            let kind = kinds.get(b).copied().unwrap_or(0);
            self.batches.push(BatchSlots {
                package: batch.package.0,
                skeleton: batch.skeleton,
                skin: batch.skin,
                kind,
                first_slot: slot,
                count: batch.instances.len() as u32,
                joints,
                palette_len: skin.map_or(0, |s| s.len),
                vertex_count: skin.map_or(0, |s| s.vertex_count),
                curve_count,
                heroes,
            });
            let first = self.bins.len();
            self.bins
                .extend(batch.instances.iter().enumerate().filter_map(|(i, x)| {
                    let (_, lod) = x.pose.program()?;
                    let page = (slot + i as u32) / page_instances.max(1);
                    Some((UNKNOWN_SHAPE, lod, kind, page, 0, b as u32, i as u32))
                }));
            let program = |i: u32| batch.instances[i as usize].pose.program().map(|(p, _)| p);
            // First clips and known shapes in parallel (each chunk hints with its previous
            // instance's shape), then the new shapes registered in instance order, so ids do
            // not depend on the threads.
            let known: &Shapes = shapes;
            let uses = &self.uses[batch.package.0][..];
            self.bins[first..]
                .par_chunks_mut(BIN_CHUNK)
                .for_each(|chunk| {
                    let mut hint = None;
                    let mut run = (0, 0);
                    for e in chunk {
                        let Some(p) = program(e.6) else {
                            continue;
                        };
                        e.4 = first_clip(p, uses, &mut run);
                        if let Some(id) = known.find(p, &package.package, hint) {
                            e.0 = id;
                            hint = Some(id);
                        }
                    }
                    add_uses(uses, run);
                });
            let mut hint = None;
            for e in self.bins[first..]
                .iter_mut()
                .filter(|e| e.0 == UNKNOWN_SHAPE)
            {
                if let Some(p) = program(e.6) {
                    e.0 = shapes.id(p, &package.package, hint);
                    hint = Some(e.0);
                }
            }
            slot += batch.instances.len() as u32;
        }
        self.bins.par_sort_unstable();
        let mut start = 0;
        while start < self.bins.len() {
            let shape = self.bins[start].0;
            let end = start
                + self.bins[start..]
                    .iter()
                    .take_while(|e| e.0 == shape)
                    .count();
            let stride = shapes.entries[shape as usize].shape.record_stride();
            let mut dispatch = PoseDispatch {
                shape,
                record_base: self.records,
                count: (end - start) as u32,
                stride,
                joints: 0,
                max_depth: 0,
                packages: 0,
                skinned: false,
                path: PosePath::Interpreter,
            };
            let mut last = None;
            for e in &self.bins[start..end] {
                self.order.push((e.5 as usize, e.6));
                if last == Some(e.5) {
                    continue;
                }
                last = Some(e.5);
                let slots = &self.batches[e.5 as usize];
                let sk = packages[slots.package].skeleton(slots.skeleton);
                dispatch.joints = dispatch.joints.max(slots.joints);
                dispatch.max_depth = dispatch.max_depth.max(sk.map_or(0, |s| s.max_depth));
                dispatch.packages |= package_bit(slots.package);
                dispatch.skinned |= slots.skin.is_some();
            }
            self.records += stride * (end - start) as u32;
            self.poses.push(dispatch);
            start = end;
        }
    }

    /// Frame slots used.
    pub fn slots(&self) -> u32 {
        self.batches.last().map_or(0, |b| b.first_slot + b.count)
    }
}
