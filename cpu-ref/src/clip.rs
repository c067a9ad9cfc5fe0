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
    /// The last sample is at the duration even when f32 key times put the duration a hair past
    /// `(sample_count - 1) / sample_rate`.
    pub fn sample_time(&self, i: u32) -> f64 {
        if i + 1 >= self.sample_count {
            self.duration
        } else {
            (i as f64 / self.sample_rate as f64).min(self.duration)
        }
    }
}

use glam::{Quat, Vec3};

use crate::transform::nlerp_shortest;
use crate::{Skeleton, Trs};

/// The two samples bracketing a time and the fraction between them.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bracket {
    i0: u32,
    i1: u32,
    u: f32,
}

impl Clip {
    /// Bracketing samples of `time`, clamped to [0, duration] (NaN reads as 0). In f32, as the
    /// GPU computes it: `i0 = floor(time * rate)`, `u = (time - t(i0)) / (t(i1) - t(i0))`, so the
    /// last interval may be shorter than a sample period.
    fn bracket(&self, time: f32) -> Bracket {
        let last = self.sample_count.saturating_sub(1);
        let duration = self.duration as f32;
        let time = if time.is_nan() {
            0.0
        } else {
            time.clamp(0.0, duration.max(0.0))
        };
        let rate = self.sample_rate;
        // `as u32` saturates: a NaN or infinite product (bad rate) reads as sample 0 or the last.
        let i0 = ((time * rate).floor() as u32).min(last);
        let i1 = (i0 + 1).min(last);
        let t0 = i0 as f32 / rate;
        let t1 = (i1 as f32 / rate).min(duration);
        let u = if t1 > t0 {
            ((time - t0) / (t1 - t0)).clamp(0.0, 1.0)
        } else {
            0.0
        };
        Bracket { i0, i1, u }
    }

    /// Sub-track `track` at `b`: `None` for a Default sub-track or one whose values lie outside
    /// `values` (a malformed clip reads as rest), the stored value for a Constant one, else
    /// `interpolate(value at i0, value at i1, u)`.
    fn sub_track<const N: usize>(
        &self,
        track: usize,
        b: Bracket,
        interpolate: impl Fn([f32; N], [f32; N], f32) -> [f32; N],
    ) -> Option<[f32; N]> {
        let st = self.sub_tracks.get(track)?;
        let offset = st.offset as usize;
        let at = |start: usize| -> Option<[f32; N]> {
            self.values
                .get(start..start.checked_add(N)?)?
                .try_into()
                .ok()
        };
        match st.kind {
            SubTrackKind::Default => None,
            SubTrackKind::Constant => at(offset),
            SubTrackKind::Animated => {
                let v0 = at(offset.checked_add(b.i0 as usize * N)?)?;
                let v1 = at(offset.checked_add(b.i1 as usize * N)?)?;
                Some(interpolate(v0, v1, b.u))
            }
        }
    }

    fn vec3(&self, track: usize, b: Bracket) -> Option<Vec3> {
        let lerp = |a, c, u| Vec3::from_array(a).lerp(Vec3::from_array(c), u).to_array();
        self.sub_track(track, b, lerp).map(Vec3::from_array)
    }

    fn quat(&self, track: usize, b: Bracket) -> Option<Quat> {
        let nlerp =
            |a, c, u| nlerp_shortest(Quat::from_array(a), Quat::from_array(c), u).to_array();
        self.sub_track(track, b, nlerp).map(Quat::from_array)
    }
}

/// Local pose of `skeleton` from the cooked samples at `time` (clamped to [0, duration]):
/// lerp t/s and nlerp-shortest q between the two bracketing samples; Default sub-tracks are rest.
/// `local` should hold one entry per joint; joints past its end are not written.
pub fn sample_clip(clip: &Clip, skeleton: &Skeleton, time: f32, local: &mut [Trs]) {
    let b = clip.bracket(time);
    for (j, (out, rest)) in local.iter_mut().zip(&skeleton.rest).enumerate() {
        *out = Trs {
            translation: clip.vec3(3 * j, b).unwrap_or(rest.translation),
            rotation: clip.quat(3 * j + 1, b).unwrap_or(rest.rotation),
            scale: clip.vec3(3 * j + 2, b).unwrap_or(rest.scale),
        };
    }
}
