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

use glam::{Quat, Vec3};

use crate::transform::slerp_shortest;
use crate::{Skeleton, Trs};

impl Channel {
    /// Floats per key: `width` values, or `3 * width` for CUBICSPLINE (in-tangent, value, out-tangent).
    fn key_stride(&self) -> usize {
        match self.interpolation {
            Interpolation::CubicSpline => 3 * self.path.width(),
            _ => self.path.width(),
        }
    }

    /// Float offset of key `k`'s value within `values`.
    fn value_offset(&self, k: usize) -> usize {
        match self.interpolation {
            Interpolation::CubicSpline => k * self.key_stride() + self.path.width(),
            _ => k * self.key_stride(),
        }
    }

    /// The channel's value at absolute clip `time` in seconds, glTF semantics: x, y, z for
    /// translation and scale (the fourth float is 0), x, y, z, w for rotation. `None` when the
    /// channel has no keys or `values` does not hold `times.len()` keys.
    pub fn sample(&self, time: f32) -> Option<[f32; 4]> {
        let n = self.times.len();
        if n == 0 || self.values.len() != n * self.key_stride() {
            return None;
        }
        // Keys at or before `time`; NaN compares false, so it holds the first key.
        let after = self.times.partition_point(|&k| k <= time);
        if after == 0 {
            return Some(self.value(0));
        }
        if after == n {
            return Some(self.value(n - 1));
        }
        let k = after - 1;
        let dt = self.times[k + 1] - self.times[k];
        let u = (time - self.times[k]) / dt;
        Some(match self.interpolation {
            Interpolation::Step => self.value(k),
            Interpolation::Linear => self.linear(k, u),
            Interpolation::CubicSpline => self.cubic(k, u, dt),
        })
    }

    /// Value of key `k` (in range: checked by `sample`).
    fn value(&self, k: usize) -> [f32; 4] {
        self.floats(self.value_offset(k))
    }

    /// `width` floats from `offset`, zero-padded to four.
    fn floats(&self, offset: usize) -> [f32; 4] {
        let mut out = [0.0; 4];
        let w = self.path.width();
        out[..w].copy_from_slice(&self.values[offset..offset + w]);
        out
    }

    fn linear(&self, k: usize, u: f32) -> [f32; 4] {
        let (a, b) = (self.value(k), self.value(k + 1));
        match self.path {
            ChannelPath::Rotation => {
                slerp_shortest(Quat::from_array(a), Quat::from_array(b), u).to_array()
            }
            _ => {
                let v = Vec3::from_slice(&a).lerp(Vec3::from_slice(&b), u);
                [v.x, v.y, v.z, 0.0]
            }
        }
    }

    /// Cubic Hermite spline between keys `k` and `k + 1` with tangents scaled by the key
    /// interval `dt` (glTF 2.0 Appendix C); rotations are normalised after.
    fn cubic(&self, k: usize, u: f32, dt: f32) -> [f32; 4] {
        let w = self.path.width();
        let stride = self.key_stride();
        let v0 = self.floats(k * stride + w);
        let b0 = self.floats(k * stride + 2 * w);
        let a1 = self.floats((k + 1) * stride);
        let v1 = self.floats((k + 1) * stride + w);
        let (u2, u3) = (u * u, u * u * u);
        let h00 = 2.0 * u3 - 3.0 * u2 + 1.0;
        let h10 = (u3 - 2.0 * u2 + u) * dt;
        let h01 = -2.0 * u3 + 3.0 * u2;
        let h11 = (u3 - u2) * dt;
        let mut out = [0.0; 4];
        for i in 0..w {
            out[i] = h00 * v0[i] + h10 * b0[i] + h01 * v1[i] + h11 * a1[i];
        }
        if self.path == ChannelPath::Rotation {
            out = Quat::from_array(out).normalize().to_array();
        }
        out
    }
}

/// Local pose of `skeleton` at absolute clip `time`: rest, overwritten by each channel's value.
/// `local` should hold one entry per joint; joints past its end are not written, and channels on
/// joints outside it or without keys are skipped.
pub fn sample_exact(clip: &SourceClip, skeleton: &Skeleton, time: f32, local: &mut [Trs]) {
    for (out, rest) in local.iter_mut().zip(&skeleton.rest) {
        *out = *rest;
    }
    for channel in &clip.channels {
        let (Some(out), Some(v)) = (local.get_mut(channel.joint as usize), channel.sample(time))
        else {
            continue;
        };
        match channel.path {
            ChannelPath::Translation => out.translation = Vec3::from_slice(&v),
            ChannelPath::Rotation => out.rotation = Quat::from_array(v),
            ChannelPath::Scale => out.scale = Vec3::from_slice(&v),
        }
    }
}
