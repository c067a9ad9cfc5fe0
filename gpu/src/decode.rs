//! The decode cache (docs/gpu.md, "The decode cache"): which compressed clips are decoded once
//! into a cache the frames keep, before the pose pass, rather than each instance sampling them
//! decoding its own pair of samples (decode.wgsl).
//!
//! Per frame, the decode table holds per package, per clip its base in the cache or `NO_DECODE`,
//! then the jobs of the frame's one decode dispatch, every package's (clip header, decode table
//! entry, decode list). A package
//! is read from the cache whole or not at all: every compressed clip the frame samples, or none,
//! so that each pose dispatch runs a kernel with one of the two sampling paths compiled in
//! (lavapipe runs both sides of a branch, so a kernel holding both would pay for both).
//!
//! The cache keeps what earlier frames decoded: a clip stays in it, at its base, until the cache
//! starts over ([`DecodeCache::plan`]) or its package is replaced. A steady crowd's frames decode
//! nothing; a frame decodes only the clips it samples that the cache lacks. Under
//! [`Decode::Auto`] a package is read from the cache when decoding the clips it lacks is no more
//! work than its instances decoding their own samples (two per `Sample` op) over
//! [`HORIZON_FRAMES`] frames.

use std::sync::atomic::{AtomicU32, Ordering};

use throng_cpu_ref::Clip;
use throng_shaders::prelude::{CLIP_WORDS, WORKGROUP};
use throng_shaders::{DecodeParams, NO_DECODE};

use crate::plan::Plan;
use crate::resident::{Arena, ResidentPackage};

/// Whether frames read compressed clips from the decode cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Decode {
    /// A package's sampled compressed clips are read from the cache when decoding the ones it
    /// lacks is no more work than the instances decoding their own over [`HORIZON_FRAMES`]
    /// (module doc).
    #[default]
    Auto,
    /// None: every instance decodes its own samples.
    Never,
}

/// The frame's decode dispatch: workgroup row `y` decodes job `y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DecodeDispatch {
    pub params: DecodeParams,
    /// Workgroups along x: the widest job's threads (animated sub-tracks × samples) over the
    /// workgroup.
    pub groups: u32,
}

/// Frames over which [`Decode::Auto`] weighs decoding a clip once against its instances
/// decoding their own samples every frame (about a second at 60 Hz).
pub const HORIZON_FRAMES: u64 = 60;

/// A sampled compressed clip's `Sample` ops this frame and its cache vec4s (a decode thread
/// each); `None` when the frame does not sample it or it has nothing animated.
fn sampled(clip: &Clip, uses: &AtomicU32) -> Option<(u64, u64)> {
    let z = clip.compressed.as_ref()?;
    let n = u64::from(uses.load(Ordering::Relaxed));
    let size = u64::from(z.animated) * u64::from(clip.sample_count);
    (n > 0 && size > 0).then_some((n, size))
}

/// A clip a frame decodes: its package, the package's generation, the clip and its base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Held {
    package: usize,
    generation: u64,
    clip: usize,
    base: u32,
}

/// One package's clips in the cache, at one generation of the package: per clip its base or
/// `NO_DECODE`.
#[derive(Clone, Debug, Default)]
struct HeldPackage {
    generation: u64,
    bases: Vec<u32>,
}

/// The decode tables and dispatches of the frame being built, and what the cache holds; kept
/// between frames, so a steady frame allocates nothing.
#[derive(Default)]
pub(crate) struct DecodeCache {
    /// The frame's decode table: every package's clip entries, then the jobs.
    words: Vec<u32>,
    /// Jobs of the frame, three words each.
    jobs: Vec<u32>,
    pub dispatch: Option<DecodeDispatch>,
    /// Per package: whether this frame reads it from the cache.
    decoded: Vec<bool>,
    /// Clips decoded this frame and the cache vec4s they filled; clips read from the cache that
    /// earlier frames decoded.
    pub clips: u32,
    pub samples: u32,
    pub cached_clips: u32,
    /// What submitted frames decoded, by package, and the first free vec4 after it.
    held: Vec<HeldPackage>,
    top: u32,
    /// This frame: the clips it decodes, whether it starts the cache over, and its first free
    /// vec4 ([`DecodeCache::commit`] makes them the cache's once the frame is submitted).
    added: Vec<Held>,
    reset: bool,
    frame_top: u32,
}

/// Where a frame's decoding is bounded.
#[derive(Clone, Copy)]
pub(crate) struct Limits {
    pub policy: Decode,
    /// Cache vec4s.
    pub capacity: u32,
    /// Workgroups per dispatch dimension: a job at most this wide, a dispatch this many jobs.
    pub max_x: u32,
}

impl DecodeCache {
    /// Chooses the packages `plan` (already built) reads from the cache, and the clips it
    /// decodes there, under `limits`; `generations` are the packages' generations. When a
    /// chosen package does not fit beside what the cache holds but every chosen package would
    /// fit an empty cache, the frame starts it over (clips no frame samples any more are what
    /// fills it); otherwise a package that does not fit decodes per instance this frame.
    pub fn plan(
        &mut self,
        plan: &Plan,
        packages: &[ResidentPackage],
        generations: &[u64],
        limits: Limits,
    ) {
        if !self.plan_frame(plan, packages, generations, limits, false) {
            self.plan_frame(plan, packages, generations, limits, true);
        }
    }

    /// [`DecodeCache::plan`] over the cache as submitted frames left it, or (`reset`) empty;
    /// false when a chosen package did not fit but every chosen package would fit an empty
    /// cache (and `reset` is not set).
    fn plan_frame(
        &mut self,
        plan: &Plan,
        packages: &[ResidentPackage],
        generations: &[u64],
        limits: Limits,
        reset: bool,
    ) -> bool {
        self.words.clear();
        self.words.resize(
            packages.iter().map(|p| p.package.clips.len()).sum(),
            NO_DECODE,
        );
        self.jobs.clear();
        self.dispatch = None;
        self.decoded.clear();
        self.decoded.resize(packages.len(), false);
        self.added.clear();
        (self.clips, self.samples, self.cached_clips) = (0, 0, 0);
        self.reset = reset;
        self.frame_top = if reset { 0 } else { self.top };
        let most_threads = u64::from(limits.max_x) * u64::from(WORKGROUP);
        // Cache vec4s every chosen package needs, held or not, and whether one did not fit.
        let (mut needed, mut blocked) = (0u64, false);
        let mut widest = 0;
        for (p, package) in packages.iter().enumerate() {
            let Some(uses) = plan.uses.get(p) else {
                continue;
            };
            let generation = generations.get(p).copied().unwrap_or(0);
            let (clips, lists) = (&package.package.clips, &package.decode_lists);
            let (mut per_instance, mut lacking, mut new_size, mut jobs) = (0u64, 0u64, 0u64, 0u64);
            let (mut unfit, mut whole) = (false, 0u64);
            for (c, clip) in clips.iter().enumerate() {
                let Some((n, size)) = sampled(clip, &uses[c]) else {
                    continue;
                };
                // A clip the cache cannot hold (resident.rs) keeps the package out of it.
                unfit |= lists[c] == NO_DECODE;
                per_instance += 2 * n;
                whole += size;
                if self.find(p, generation, c).is_none() {
                    lacking += u64::from(clip.sample_count);
                    new_size += size;
                    jobs += 1;
                    unfit |= size > most_threads;
                }
            }
            let chosen = per_instance > 0
                && match limits.policy {
                    Decode::Auto => lacking <= HORIZON_FRAMES * per_instance,
                    Decode::Never => false,
                };
            let fits = u64::from(self.frame_top) + new_size <= u64::from(limits.capacity);
            let start = package.decode_base as usize;
            let total_jobs = self.jobs.len() as u64 / 3 + jobs;
            let unfit = unfit || total_jobs > u64::from(limits.max_x);
            if chosen && !unfit {
                needed += whole;
                blocked |= !fits;
            }
            if !(chosen && fits) || unfit {
                continue;
            }
            for (c, clip) in clips.iter().enumerate() {
                let Some((_, size)) = sampled(clip, &uses[c]) else {
                    continue;
                };
                self.words[start + c] = match self.find(p, generation, c) {
                    Some(base) => {
                        self.cached_clips += 1;
                        base
                    }
                    None => {
                        let base = self.frame_top;
                        let header = package.clip_base + CLIP_WORDS * c as u32;
                        self.jobs.extend([header, (start + c) as u32, lists[c]]);
                        self.added.push(Held {
                            package: p,
                            generation,
                            clip: c,
                            base,
                        });
                        self.frame_top += size as u32;
                        self.clips += 1;
                        self.samples += size as u32;
                        widest = widest.max(size);
                        base
                    }
                };
            }
            self.decoded[p] = true;
        }
        if !self.jobs.is_empty() {
            self.dispatch = Some(DecodeDispatch {
                params: DecodeParams {
                    jobs_base: self.words.len() as u32,
                    jobs: self.jobs.len() as u32 / 3,
                    pad: [0; 2],
                },
                groups: widest.div_ceil(u64::from(WORKGROUP)) as u32,
            });
        }
        reset || !blocked || needed > u64::from(limits.capacity)
    }

    /// The base of clip `clip` of package `package` at `generation` if the cache holds it as
    /// submitted frames left it (nothing when this frame starts it over). A frame asks about
    /// each of a package's clips before adding any of them.
    fn find(&self, package: usize, generation: u64, clip: usize) -> Option<u32> {
        let held = self
            .held
            .get(package)
            .filter(|h| !self.reset && h.generation == generation)?;
        held.bases.get(clip).copied().filter(|&b| b != NO_DECODE)
    }

    /// The frame planned last was submitted: what it decoded is in the cache from now on.
    pub fn commit(&mut self) {
        if self.reset {
            self.held.iter_mut().for_each(|h| h.bases.fill(NO_DECODE));
        }
        for a in &self.added {
            if self.held.len() <= a.package {
                self.held.resize_with(a.package + 1, HeldPackage::default);
            }
            let held = &mut self.held[a.package];
            if held.generation != a.generation {
                held.generation = a.generation;
                held.bases.fill(NO_DECODE);
            }
            if held.bases.len() <= a.clip {
                held.bases.resize(a.clip + 1, NO_DECODE);
            }
            held.bases[a.clip] = a.base;
        }
        self.top = self.frame_top;
        self.added.clear();
        self.reset = false;
    }

    /// vec4s of the cache in use once the frame planned last has decoded.
    pub fn in_use(&self) -> u32 {
        self.frame_top
    }

    /// Whether this frame reads the sampled compressed clips of every package of `packages`
    /// (a bit each, [`crate::plan::package_bit`]) from the cache.
    pub fn all_decoded(&self, packages: u64) -> bool {
        (0..64).filter(|b| packages >> b & 1 == 1).all(|b| {
            if b < 63 {
                self.decoded(b)
            } else {
                self.decoded.get(63..).is_some_and(|d| d.iter().all(|&x| x))
            }
        })
    }

    /// Whether this frame reads package `p`'s sampled compressed clips from the cache.
    pub fn decoded(&self, p: usize) -> bool {
        self.decoded.get(p).copied().unwrap_or(false)
    }

    /// Writes the frame's decode table; returns the bytes written.
    pub fn upload(&self, queue: &wgpu::Queue, arena: &Arena) -> u64 {
        let table = &arena.buffers.decode_table;
        let mut bytes = 0;
        for (offset, words) in [(0, &self.words), (self.words.len(), &self.jobs)] {
            let words: &[u8] = bytemuck::cast_slice(words);
            if !words.is_empty() {
                queue.write_buffer(table, 4 * offset as u64, words);
            }
            bytes += words.len() as u64;
        }
        bytes
    }
}
