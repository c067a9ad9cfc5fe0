//! Cooked clips: uniformly sampled local sub-tracks (DESIGN.md §3).
//!
//! Sample `i` lies at `min(i / sample_rate, duration)`: the last sample is at the duration even
//! when the duration is not a whole number of sample periods. Sub-tracks are laid out per joint
//! in the order translation, rotation, scale: sub-track `3 * joint + k` with k = 0 (t), 1 (q), 2 (s).

/// How a sub-track is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SubTrackKind {
    /// Equal to the rest pose (or additive identity for additive clips): stores nothing.
    Default = 0,
    /// One value for the whole clip.
    Constant = 1,
    /// `sample_count` values.
    Animated = 2,
}

/// One sub-track (t, q or s of one joint). `offset` indexes `Clip::values` (in floats); a value
/// is 3 floats (t, s) or 4 floats (q as x, y, z, w). Samples of an animated sub-track are contiguous.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubTrack {
    pub kind: SubTrackKind,
    pub offset: u32,
}

/// What happens past the end of the clip; control applies it, sampling always clamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LoopPolicy {
    Once = 0,
    Loop = 1,
}

/// A named instant of a clip (events are delivered by control; markers drive sync groups).
#[derive(Clone, Debug, PartialEq)]
pub struct ClipEvent {
    pub name: String,
    /// Seconds from the clip start.
    pub time: f64,
}

/// A sync marker: a named phase point of a clip.
pub type SyncMarker = ClipEvent;

/// A cooked clip for one skeleton, uncompressed reference encoding.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    pub name: String,
    /// Index of the skeleton in the package.
    pub skeleton: u32,
    /// That skeleton's identity hash at cook time.
    pub skeleton_hash: u64,
    /// Seconds; the time of the last sample.
    pub duration: f64,
    /// Samples per second.
    pub sample_rate: f32,
    /// Number of uniform samples (at least 1).
    pub sample_count: u32,
    pub loop_policy: LoopPolicy,
    /// Quality profile name it was cooked with.
    pub profile: String,
    /// `3 * joint_count` sub-tracks (t, q, s per joint).
    pub sub_tracks: Vec<SubTrack>,
    /// Sample values, f32.
    pub values: Vec<f32>,
    pub events: Vec<ClipEvent>,
    pub markers: Vec<SyncMarker>,
}

/// Version of the clip encoding written by this build (the uncompressed reference encoding).
pub const REFERENCE_CODEC_VERSION: u32 = 1;

impl Clip {
    /// Time of sample `i` in seconds.
    pub fn sample_time(&self, i: u32) -> f64 {
        (i as f64 / self.sample_rate as f64).min(self.duration)
    }
}

use crate::{Skeleton, Trs};

/// Local pose of `skeleton` from the cooked samples at `time` (clamped to [0, duration]):
/// lerp t/s and nlerp-shortest q between the two bracketing samples; Default sub-tracks are rest.
pub fn sample_clip(clip: &Clip, skeleton: &Skeleton, time: f32, local: &mut [Trs]) {
    let _ = (clip, skeleton, time, local);
    todo!("cooked sampling")
}
