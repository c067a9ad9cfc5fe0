//! The clip-time intervals one player step traverses (DESIGN.md §5).
//!
//! A step from one [`Position`] to another splits at every cycle boundary into ordered spans,
//! one per cycle it touches, so each crossing is counted and none is lost to a modulo. Each span
//! is an interval of clip time with the bounds the delivery rule needs:
//! - traversing clip time forward, a span is `(old, new]`; traversing in reverse, `[new, old)`;
//! - `Loop`: a cycle entered by a wrap starts closed at 0 and ends open at the duration, so a
//!   marker at the duration (canonicalised to 0) is crossed once per wrap;
//! - `PingPong`: legs alternate direction; the turning point belongs to the leg that reaches it;
//! - `Once`: one span, clamped to [0, duration].

use crate::player::{PlayMode, Position, Step};

/// One cycle's part of a step, in clip time: `lo..hi` with the stated closedness. `forward`
/// says clip time increases along the span; `cycle` is the player cycle (or leg) it lies in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub cycle: i64,
    pub lo: f64,
    pub hi: f64,
    pub lo_closed: bool,
    pub hi_closed: bool,
    pub forward: bool,
}

impl Span {
    pub fn contains(&self, t: f64) -> bool {
        let above = if self.lo_closed {
            t >= self.lo
        } else {
            t > self.lo
        };
        let below = if self.hi_closed {
            t <= self.hi
        } else {
            t < self.hi
        };
        above && below
    }

    /// Clip times where the traversal of this span starts and ends.
    pub fn endpoints(&self) -> (f64, f64) {
        if self.forward {
            (self.lo, self.hi)
        } else {
            (self.hi, self.lo)
        }
    }
}

/// The spans of a step, in traversal order.
#[derive(Clone, Debug)]
pub struct Spans {
    mode: PlayMode,
    duration: f64,
    from: Position,
    to: Position,
    /// Unwrapped position increases.
    ahead: bool,
    next: i64,
    done: bool,
}

impl Spans {
    pub fn new(step: &Step) -> Self {
        let ahead = step.from.before(step.to);
        Spans {
            mode: step.mode,
            duration: step.duration,
            from: step.from,
            to: step.to,
            ahead,
            next: step.from.cycle,
            done: step.from == step.to,
        }
    }

    /// Number of spans: cycles touched, one more than the crossings.
    pub fn span_count(&self) -> u64 {
        if self.from == self.to {
            0
        } else {
            self.from.cycle.abs_diff(self.to.cycle) + 1
        }
    }

    /// True when unwrapped time moves forward (it may still traverse a ping-pong leg backwards).
    pub fn ahead(&self) -> bool {
        self.ahead
    }

    /// Skips to the last span (the caller accounted for the middle ones arithmetically).
    pub fn skip_to_last(&mut self) {
        if !self.done {
            self.next = self.to.cycle;
        }
    }

    /// Phase bounds of cycle `k`: `(lo, lo_closed, hi, hi_closed)`.
    fn phase_bounds(&self, k: i64) -> (f64, bool, f64, bool) {
        let (d, first, last) = (self.duration, k == self.from.cycle, k == self.to.cycle);
        if self.ahead {
            let boundary_closed = self.mode == PlayMode::Loop;
            let (lo, lo_closed) = if first {
                (self.from.phase, false)
            } else {
                (0.0, boundary_closed)
            };
            let (hi, hi_closed) = if last {
                (self.to.phase, true)
            } else {
                (d, !boundary_closed)
            };
            (lo, lo_closed, hi, hi_closed)
        } else {
            let (hi, hi_closed) = if first {
                (self.from.phase, false)
            } else {
                (d, false)
            };
            let (lo, lo_closed) = if last {
                (self.to.phase, true)
            } else {
                (0.0, true)
            };
            (lo, lo_closed, hi, hi_closed)
        }
    }
}

impl Iterator for Spans {
    type Item = Span;

    fn next(&mut self) -> Option<Span> {
        if self.done {
            return None;
        }
        let k = self.next;
        if k == self.to.cycle {
            self.done = true;
        } else {
            self.next = if self.ahead { k + 1 } else { k - 1 };
        }
        let (lo, lo_closed, hi, hi_closed) = self.phase_bounds(k);
        let mirrored = self.mode == PlayMode::PingPong && k.rem_euclid(2) == 1;
        Some(if mirrored {
            let d = self.duration;
            Span {
                cycle: k,
                lo: d - hi,
                hi: d - lo,
                lo_closed: hi_closed,
                hi_closed: lo_closed,
                forward: !self.ahead,
            }
        } else {
            Span {
                cycle: k,
                lo,
                hi,
                lo_closed,
                hi_closed,
                forward: self.ahead,
            }
        })
    }
}
