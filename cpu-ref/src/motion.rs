//! Motion vectors: with `Outputs::motion` a frame also writes each skinned vertex's previous
//! position, the vertex skinned with its slot's last palette and placed with its last placement,
//! so a renderer can form per-pixel motion from the two. A slot's history resets (its previous
//! position is its current one: no motion) on its first frame, when its batch differs from the
//! last frame's ([`BatchLayout`]), when its skeleton LOD level changes (the held joints would
//! jump), and when the caller marks it (a teleport, [`MotionResets::reset`]). Both runtimes
//! decide resets with [`MotionResets`], so their previous positions agree.

use crate::frame::{Batch, BatchLayout, Pose};

/// Which slots reset their motion history this frame, and what the last frame had.
#[derive(Clone, Debug, Default)]
pub struct MotionResets {
    /// Per batch of the last frame: its layout and each instance's skeleton LOD level.
    last: Vec<(BatchLayout, Vec<u8>)>,
    /// (batch, instance) the caller marked for the next frame.
    marked: Vec<(usize, usize)>,
    /// This frame's resets, per batch and instance.
    flags: Vec<Vec<bool>>,
}

impl MotionResets {
    pub fn new() -> MotionResets {
        MotionResets::default()
    }

    /// Resets instance `instance` of batch `batch` on the next frame (a teleport).
    pub fn reset(&mut self, batch: usize, instance: usize) {
        self.marked.push((batch, instance));
    }

    /// Decides this frame's resets for `batches`, then remembers their layouts and levels.
    /// Allocates nothing once the frames keep their sizes.
    pub fn frame(&mut self, batches: &[Batch]) {
        self.flags.resize_with(batches.len(), Vec::new);
        self.last.truncate(batches.len());
        for (b, batch) in batches.iter().enumerate() {
            let layout = BatchLayout::of(batch);
            let same = self.last.get(b).is_some_and(|(l, _)| *l == layout);
            let flags = &mut self.flags[b];
            flags.clear();
            flags.resize(batch.instances.len(), !same);
            if b >= self.last.len() {
                self.last.push((layout, Vec::new()));
            }
            let (last_layout, levels) = &mut self.last[b];
            *last_layout = layout;
            levels.resize(batch.instances.len(), 0);
            for ((x, level), flag) in batch.instances.iter().zip(levels).zip(flags.iter_mut()) {
                let now = match x.pose {
                    Pose::Program(_) | Pose::Hero(_) => 0,
                    Pose::Lod(_, l) => l,
                    Pose::Keep => *level,
                    Pose::Hidden => crate::frame::HIDDEN_LEVEL,
                };
                *flag |= now != *level;
                *level = now;
            }
        }
        for (b, i) in self.marked.drain(..) {
            if let Some(f) = self.flags.get_mut(b).and_then(|f| f.get_mut(i)) {
                *f = true;
            }
        }
    }

    /// Whether instance `instance` of batch `batch` resets this frame (after
    /// [`MotionResets::frame`]).
    pub fn resets(&self, batch: usize, instance: usize) -> bool {
        self.flags
            .get(batch)
            .and_then(|f| f.get(instance))
            .copied()
            .unwrap_or(true)
    }

    /// This frame's resets of batch `batch`, one per instance.
    pub fn batch(&self, batch: usize) -> &[bool] {
        self.flags.get(batch).map_or(&[], Vec::as_slice)
    }
}
