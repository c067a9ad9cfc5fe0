//! The decode cache (docs/gpu.md, "The decode cache"): which compressed clips a frame decodes
//! once into the frame's decode cache before the pose pass, rather than each instance sampling
//! them decoding its own pair of samples (decode.wgsl).
//!
//! Per frame, each package the frame uses gets its decode table: per clip its base in the cache
//! or `NO_DECODE`, then the jobs of the package's decode dispatch (clip, decode list). A package
//! is decoded whole or not at all: every compressed clip the frame samples, or none, so that each
//! pose dispatch runs a kernel with one of the two sampling paths compiled in (lavapipe runs
//! both sides of a branch, so a kernel holding both would pay for both). Under [`Decode::Auto`]
//! a package is decoded when its `Sample` ops on compressed clips would decode at least as many
//! samples (two each) as those clips hold, so decoding them once is no more work, and they fit
//! what is left of [`crate::Capacities::decoded_samples`].

use std::sync::atomic::Ordering;

use serde::Serialize;
use throng_shaders::prelude::WORKGROUP;
use throng_shaders::{DecodeParams, NO_DECODE};

use crate::plan::Plan;
use crate::resident::ResidentPackage;

/// Which compressed clips a frame decodes into the decode cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decode {
    /// A package's sampled compressed clips when their `Sample` ops would decode at least as
    /// many samples as the clips hold (module doc).
    #[default]
    Auto,
    /// A package's sampled compressed clips whenever they fit: parity runs use it to check the
    /// cached path with few instances.
    Always,
    /// None: every instance decodes its own samples.
    Never,
}

/// One package's decode dispatch: workgroup row `y` decodes job `y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DecodeDispatch {
    /// A batch of the package (whose bind group the dispatch uses).
    pub batch: usize,
    pub params: DecodeParams,
    /// Workgroups along x: the widest job's threads (animated sub-tracks × samples) over the
    /// workgroup.
    pub groups: u32,
}

/// The decode tables and dispatches of the frame being built; kept between frames, so a steady
/// frame allocates nothing.
#[derive(Default)]
pub(crate) struct DecodeCache {
    /// Every decode table of the frame, one after another.
    words: Vec<u32>,
    /// Per table: its package and its range of `words`.
    tables: Vec<(usize, usize, usize)>,
    pub dispatches: Vec<DecodeDispatch>,
    /// Per package: whether this frame decoded it.
    decoded: Vec<bool>,
    /// Clips decoded and cache vec4s filled this frame.
    pub clips: u32,
    pub samples: u32,
}

impl DecodeCache {
    /// Chooses the frame's decoded packages under `policy` for `plan` (already built) within
    /// `capacity` vec4s, a job at most `max_x` workgroups wide and a dispatch at most `max_x`
    /// jobs.
    pub fn plan(
        &mut self,
        plan: &Plan,
        packages: &[ResidentPackage],
        policy: Decode,
        capacity: u32,
        max_x: u32,
    ) {
        self.words.clear();
        self.tables.clear();
        self.dispatches.clear();
        self.decoded.clear();
        self.decoded.resize(packages.len(), false);
        (self.clips, self.samples) = (0, 0);
        let most_threads = u64::from(max_x) * u64::from(WORKGROUP);
        for (b, batch) in plan.batches.iter().enumerate() {
            let p = batch.package;
            if self.tables.iter().any(|t| t.0 == p) {
                continue;
            }
            let (clips, lists) = (&packages[p].package.clips, &packages[p].decode_lists);
            let uses = &plan.uses[p];
            // The package's sampled compressed clips: (clip, uses, cache vec4s), a decode thread
            // per cache vec4.
            let sampled = || {
                clips.iter().enumerate().filter_map(|(c, clip)| {
                    let z = clip.compressed.as_ref()?;
                    let n = u64::from(uses[c].load(Ordering::Relaxed));
                    let samples = u64::from(clip.sample_count);
                    let size = u64::from(z.animated) * samples;
                    (n > 0).then_some((c, n, size))
                })
            };
            let (mut per_instance, mut sampled_samples, mut jobs) = (0u64, 0u64, 0u64);
            let mut fits = true;
            for (c, n, size) in sampled() {
                per_instance += 2 * n;
                sampled_samples += u64::from(clips[c].sample_count);
                jobs += u64::from(size > 0);
                fits &= size <= most_threads;
            }
            let chosen = match policy {
                Decode::Auto => per_instance >= sampled_samples,
                Decode::Always => true,
                Decode::Never => false,
            };
            let size: u64 = sampled().map(|x| x.2).sum();
            fits &= jobs > 0
                && jobs <= u64::from(max_x)
                && u64::from(self.samples) + size <= u64::from(capacity);
            let start = self.words.len();
            self.words.resize(start + clips.len(), NO_DECODE);
            if !(chosen && fits) {
                self.tables.push((p, start, self.words.len()));
                continue;
            }
            let mut widest = 0;
            for (c, _, size) in sampled().filter(|x| x.2 > 0) {
                self.words[start + c] = self.samples;
                self.words.extend([c as u32, lists[c]]);
                self.samples += size as u32;
                self.clips += 1;
                widest = widest.max(size);
            }
            self.decoded[p] = true;
            self.tables.push((p, start, self.words.len()));
            self.dispatches.push(DecodeDispatch {
                batch: b,
                params: DecodeParams {
                    clip_base: 0,
                    jobs_base: clips.len() as u32,
                    jobs: jobs as u32,
                    pad: 0,
                },
                groups: widest.div_ceil(u64::from(WORKGROUP)) as u32,
            });
        }
    }

    /// Whether this frame decoded package `p`'s sampled compressed clips into the cache.
    pub fn decoded(&self, p: usize) -> bool {
        self.decoded.get(p).copied().unwrap_or(false)
    }

    /// Writes the frame's decode tables; returns the bytes written.
    pub fn upload(&self, queue: &wgpu::Queue, packages: &[ResidentPackage]) -> u64 {
        let mut bytes = 0;
        for &(p, start, end) in &self.tables {
            let words: &[u8] = bytemuck::cast_slice(&self.words[start..end]);
            if !words.is_empty() {
                queue.write_buffer(&packages[p].buffers.decode_table, 0, words);
            }
            bytes += words.len() as u64;
        }
        bytes
    }
}
