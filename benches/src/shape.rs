//! The program shapes the benchmark runs, and a crowd of per-instance programs that advance in
//! time from frame to frame (each instance has its own clips, phases and weights).

use serde::Serialize;
use throng_cpu_ref::program::{op, NO_MASK};
use throng_cpu_ref::{PoseOp, Program};

use crate::Subject;

/// Seconds between benchmark frames.
pub const FRAME_DT: f32 = 1.0 / 60.0;

/// A pose-program shape, in increasing cost. Every shape ends in `ToComponent`; none has a
/// `Palette` op: the GPU builds the batch skin's palette anyway, and the CPU path builds it in
/// its skinning pass, so "pose" is the same work on both (program + FK, ozz's sample +
/// local-to-model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// `Sample → ToComponent`: 2 ops.
    OneClip,
    /// Two samples, a 2-way `Blend`: 4 ops, 2 weights.
    Blend2,
    /// The 2-way blend, a third clip overriding the mask's subtree, a fourth added relative to
    /// the rest pose: 9 ops, 4 samples.
    Layered,
}

impl Shape {
    pub const ALL: [Shape; 3] = [Shape::OneClip, Shape::Blend2, Shape::Layered];

    pub fn label(self) -> &'static str {
        match self {
            Shape::OneClip => "one clip",
            Shape::Blend2 => "2-way blend",
            Shape::Layered => "blend+override+additive",
        }
    }

    /// Instance `i`'s program: clips taken round-robin from the subject's, phases and weights
    /// spread by the golden ratio so neighbours differ.
    pub fn program(self, subject: &Subject, i: usize) -> Program {
        let clip = |k: usize| {
            let n = subject.clips.len().max(1);
            subject.clips.get((i + k) % n).copied().unwrap_or(0)
        };
        let time = |k: usize| spread(i * 4 + k) * duration(subject, clip(k));
        let sample = |dst: u32, k: usize| PoseOp::sample(dst, clip(k), time(k));
        let w = 0.25 + 0.5 * spread(i);
        match self {
            Shape::OneClip => Program {
                ops: vec![sample(0, 0), PoseOp::to_component(0)],
                weights: vec![],
            },
            Shape::Blend2 => Program {
                ops: vec![
                    sample(0, 0),
                    sample(1, 1),
                    PoseOp::blend(2, 0, 2, 0),
                    PoseOp::to_component(2),
                ],
                weights: vec![w, 1.0 - w],
            },
            Shape::Layered => Program {
                ops: vec![
                    sample(0, 0),
                    sample(1, 1),
                    PoseOp::blend(2, 0, 2, 0),
                    sample(3, 2),
                    PoseOp::overriding(2, 3, 0.8, 0),
                    sample(4, 3),
                    PoseOp::rest(5),
                    PoseOp::additive(2, 4, 5, w, NO_MASK),
                    PoseOp::to_component(2),
                ],
                weights: vec![w, 1.0 - w],
            },
        }
    }
}

/// Seconds of clip `clip` (0 when it does not exist).
fn duration(subject: &Subject, clip: u32) -> f32 {
    subject.package.clips.get(clip as usize).map_or(0.0, |c| c.duration as f32)
}

/// `fract(n · φ⁻¹)`: a low-discrepancy sequence in [0, 1).
fn spread(n: usize) -> f32 {
    (n as f64 * 0.618_033_988_749_895).fract() as f32
}

/// Programs of `n` instances of one shape; [`Crowd::advance`] moves every clip time forward.
pub struct Crowd {
    start: Vec<Program>,
    pub programs: Vec<Program>,
}

impl Crowd {
    pub fn new(subject: &Subject, shape: Shape, n: usize) -> Crowd {
        let start: Vec<Program> = (0..n).map(|i| shape.program(subject, i)).collect();
        Crowd {
            programs: start.clone(),
            start,
        }
    }

    /// Sets every sample time to its start plus `frame` frames, wrapped into the clip
    /// (allocates nothing).
    pub fn advance(&mut self, subject: &Subject, frame: u32) {
        let dt = frame as f32 * FRAME_DT;
        for (now, start) in self.programs.iter_mut().zip(&self.start) {
            for (o, s) in now.ops.iter_mut().zip(&start.ops) {
                if o.code == op::SAMPLE {
                    let d = duration(subject, o.a);
                    o.time = if d > 0.0 { (s.time + dt) % d } else { 0.0 };
                }
            }
        }
    }
}
