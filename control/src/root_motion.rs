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

use crate::player::{clip_time, PlayMode, Step};
use crate::span::Spans;

/// A rigid motion `p ↦ rotation · p + translation`.
pub type Motion = (Vec3, Quat);

pub const IDENTITY: Motion = (Vec3::ZERO, Quat::IDENTITY);

/// The last trajectory sample one player slot took, keyed by clip and time: a step starts where
/// the last one ended, so its first sample is usually this one. A cache, not state: a key that
/// does not match is sampled anew.
#[derive(Clone, Copy, Debug)]
pub struct LastSample {
    clip: u32,
    /// Bits of the f32 clip time sampled.
    time: u32,
    value: Motion,
}

impl Default for LastSample {
    /// Matches no sample (the key is no clip at a NaN time).
    fn default() -> Self {
        LastSample {
            clip: u32::MAX,
            time: f32::NAN.to_bits(),
            value: IDENTITY,
        }
    }
}

/// `R(time)` of clip `index` (`clip`), narrowed to f32 at sampling, through `last`.
fn sample(clip: &Clip, index: u32, time: f64, last: &mut LastSample) -> Option<Motion> {
    let time = time as f32;
    if last.clip == index && last.time == time.to_bits() {
        return Some(last.value);
    }
    let value = sample_root_motion(clip, time)?;
    *last = LastSample {
        clip: index,
        time: time.to_bits(),
        value,
    };
    Some(value)
}

/// `inverse(R(from)) * R(to)` for clip times in seconds.
fn between(clip: &Clip, index: u32, from: f64, to: f64, last: &mut LastSample) -> Option<Motion> {
    let from = sample(clip, index, from, last)?;
    Some(root_motion_delta(from, sample(clip, index, to, last)?))
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
    step_motion_from(step, clip, u32::MAX, &mut LastSample::default())
}

/// [`step_motion`] of clip `index` (`clip`) for a player slot whose last sample is `last`.
#[inline]
pub fn step_motion_from(
    step: &Step,
    clip: &Clip,
    index: u32,
    last: &mut LastSample,
) -> Option<Motion> {
    clip.root_motion.as_ref()?;
    if step.from.cycle == step.to.cycle && step.from != step.to {
        // One span, traversed from the clip time shown at `from` to the one shown at `to`.
        let (mode, d) = (step.mode, step.duration);
        let (a, b) = (clip_time(mode, d, step.from), clip_time(mode, d, step.to));
        return between(clip, index, a, b, last);
    }
    let mut spans = Spans::new(step);
    let count = spans.span_count();
    let mut span_motion = |(a, b): (f64, f64)| between(clip, index, a, b, last);
    let Some(first) = spans.next() else {
        return Some(IDENTITY);
    };
    let mut total = span_motion(first.endpoints())?;
    if count > 2 {
        let middle = count - 2;
        let d = step.duration;
        let whole = match step.mode {
            PlayMode::PingPong if middle.is_multiple_of(2) => IDENTITY,
            // Pairs of whole legs cancel; the last middle leg remains. Even legs run clip time
            // the way unwrapped time runs, odd legs the other way.
            PlayMode::PingPong => {
                let leg = if spans.ahead() {
                    step.to.cycle - 1
                } else {
                    step.to.cycle + 1
                };
                let forward = (leg.rem_euclid(2) == 0) == spans.ahead();
                if forward {
                    span_motion((0.0, d))?
                } else {
                    span_motion((d, 0.0))?
                }
            }
            _ if spans.ahead() => power(span_motion((0.0, d))?, middle),
            _ => power(span_motion((d, 0.0))?, middle),
        };
        total = compose_root_motion(total, whole);
        spans.skip_to_last();
    }
    for span in spans {
        total = compose_root_motion(total, span_motion(span.endpoints())?);
    }
    Some(total)
}
