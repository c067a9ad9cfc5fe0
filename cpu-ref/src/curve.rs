//! Source curves with glTF semantics, kept for exact sampling and for measuring cooking error.
//!
//! STEP holds; LINEAR lerps t/s and slerps q along the shortest arc; CUBICSPLINE is the Hermite
//! basis with in/out tangents scaled by the key interval, q normalised after. Before the first key
//! the first value holds, after the last the last. Time is absolute clip time (keys may start > 0).

/// Which part of a joint's local transform a channel drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChannelPath {
    Translation,
    Rotation,
    Scale,
}

impl ChannelPath {
    /// Floats per value: 3 for translation and scale, 4 for rotation.
    pub fn width(self) -> usize {
        match self {
            ChannelPath::Rotation => 4,
            _ => 3,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interpolation {
    Step,
    Linear,
    CubicSpline,
}

/// One animated property of one skeleton joint.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    /// Skeleton joint index.
    pub joint: u32,
    pub path: ChannelPath,
    pub interpolation: Interpolation,
    /// Strictly increasing key times in seconds.
    pub times: Vec<f32>,
    /// `times.len() * width` floats, or for CUBICSPLINE `times.len() * 3 * width` laid out per key
    /// as (in-tangent, value, out-tangent) like glTF. Rotation values are normalised at import.
    pub values: Vec<f32>,
}

/// A glTF animation restricted to one skeleton. Joints without channels stay at rest.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceClip {
    pub name: String,
    pub skeleton: u32,
    pub channels: Vec<Channel>,
    /// Last key time over all channels, in seconds.
    pub duration: f32,
}

use crate::{Skeleton, Trs};

/// Local pose of `skeleton` at absolute clip `time`: rest, overwritten by each channel's value.
/// `local` must hold one entry per joint.
pub fn sample_exact(clip: &SourceClip, skeleton: &Skeleton, time: f32, local: &mut [Trs]) {
    let _ = (clip, skeleton, time, local);
    todo!("exact source sampling")
}
