//! Root motion (DESIGN.md §5): the move a player step asks of the game's motor.
//!
//! The cook extracts the trajectory `R(t)` of the motion joint; a step's delta is
//! `inverse(R(old)) * R(new)`, split at every cycle boundary and composed in traversal order.
//! Whole loop cycles contribute `inverse(R(0)) * R(duration)` each (its inverse, backwards),
//! composed by repeated squaring so a long tick costs O(log cycles); a whole ping-pong leg
//! undoes the one before it. Deltas are rigid `(translation, rotation)` pairs in the frame of
//! the placement at the step's start (`p ↦ q·p + t`).

use glam::{Quat, Vec3};
use throng_cpu_ref::clip::{compose_root_motion, root_motion_delta, sample_root_motion};
use throng_cpu_ref::Clip;

use crate::player::{PlayMode, Step};
use crate::span::Spans;

/// A rigid motion `p ↦ rotation · p + translation`.
pub type Motion = (Vec3, Quat);

pub const IDENTITY: Motion = (Vec3::ZERO, Quat::IDENTITY);

/// `inverse(R(from)) * R(to)` for clip times in seconds (narrowed to f32 at sampling).
fn between(clip: &Clip, from: f64, to: f64) -> Option<Motion> {
    Some(root_motion_delta(
        sample_root_motion(clip, from as f32)?,
        sample_root_motion(clip, to as f32)?,
    ))
}

/// `m` composed with itself `n` times.
fn power(mut m: Motion, mut n: u64) -> Motion {
    let mut acc = IDENTITY;
    while n > 0 {
        if n & 1 == 1 {
            acc = compose_root_motion(acc, m);
        }
        m = compose_root_motion(m, m);
        n >>= 1;
    }
    acc
}

/// The root motion of one player step; `None` when the clip has no trajectory.
pub fn step_motion(step: &Step, clip: &Clip) -> Option<Motion> {
    clip.root_motion.as_ref()?;
    let mut spans = Spans::new(step);
    let count = spans.span_count();
    let span_motion = |s: crate::span::Span| {
        let (a, b) = s.endpoints();
        between(clip, a, b)
    };
    let Some(first) = spans.next() else {
        return Some(IDENTITY);
    };
    let mut total = span_motion(first)?;
    if count > 2 {
        let middle = count - 2;
        let d = step.duration;
        let whole = match step.mode {
            PlayMode::PingPong if middle.is_multiple_of(2) => IDENTITY,
            // Pairs of whole legs cancel; the last middle leg remains. Even legs run clip time
            // the way unwrapped time runs, odd legs the other way.
            PlayMode::PingPong => {
                let last = if spans.ahead() {
                    step.to.cycle - 1
                } else {
                    step.to.cycle + 1
                };
                let forward = (last.rem_euclid(2) == 0) == spans.ahead();
                if forward {
                    between(clip, 0.0, d)?
                } else {
                    between(clip, d, 0.0)?
                }
            }
            _ if spans.ahead() => power(between(clip, 0.0, d)?, middle),
            _ => power(between(clip, d, 0.0)?, middle),
        };
        total = compose_root_motion(total, whole);
        spans.skip_to_last();
    }
    for span in spans {
        total = compose_root_motion(total, span_motion(span)?);
    }
    Some(total)
}
