//! Event delivery (DESIGN.md §5): which clip events a player step crosses, in order, bounded.
//!
//! Forward traversal delivers event times in `(old, new]`; reverse traversal delivers reversible
//! events in `[new, old)`; a step across cycles is split into ordered [`Span`]s and every crossing
//! delivers; under `Loop` an event at the duration is canonicalised to 0 (it fires once per wrap,
//! at the start of the new cycle); a `Once` player's end is a [`EventKind::Completed`] event, once
//! per activation. Output goes to a bounded [`EventBuffer`]: when an update would deliver more
//! than its capacity the whole update is rejected ([`Overflow`]) and the caller advances nothing.

use throng_cpu_ref::Clip;

use crate::player::{PlayMode, Step};
use crate::span::{Span, Spans};

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// Event `index` of the clip's `events`.
    Clip(u32),
    /// A `Once` player reached its end (latched: once per activation).
    Completed,
    /// Curve event `index` of the tree's `curve_events` ([`crate::curve_events`]).
    Curve(u32),
}

/// One delivered event with its identity: which instance, region, play (activation), cycle and
/// clip event it is. Two deliveries of the same clip event differ in tick, activation or cycle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    pub tick: u64,
    pub instance: u32,
    pub region: u16,
    pub activation: u64,
    /// Player cycle (loop count or ping-pong leg) the event lies in.
    pub cycle: i64,
    pub clip: u32,
    pub kind: EventKind,
    /// Clip time of the event, seconds (canonical: 0 for a loop's event at the duration).
    pub time: f64,
    /// Delivered while clip time ran backwards.
    pub reverse: bool,
}

/// The update would deliver more than the buffer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("event output overflow: more than {capacity} events in one update")]
pub struct Overflow {
    pub capacity: usize,
}

/// A bounded event output, allocated once.
#[derive(Clone, Debug)]
pub struct EventBuffer {
    events: Vec<Event>,
    capacity: usize,
}

impl EventBuffer {
    pub fn with_capacity(capacity: usize) -> Self {
        EventBuffer {
            events: Vec::with_capacity(capacity),
            capacity,
        }
    }
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    pub fn events(&self) -> &[Event] {
        &self.events
    }
    pub fn len(&self) -> usize {
        self.events.len()
    }
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
    /// Room left before overflow.
    pub fn remaining(&self) -> usize {
        self.capacity - self.events.len()
    }
    pub fn clear(&mut self) {
        self.events.clear();
    }
    /// Drops events past `len` (undoes a partial update).
    pub fn truncate(&mut self, len: usize) {
        self.events.truncate(len);
    }
    pub fn push(&mut self, event: Event) -> Result<(), Overflow> {
        if self.events.len() >= self.capacity {
            return Err(Overflow {
                capacity: self.capacity,
            });
        }
        self.events.push(event);
        Ok(())
    }
}

/// One clip's events sorted for delivery: by time (then name, as cooked) and, for loops, by the
/// canonical time (an event at the duration moves to 0).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventTrack {
    /// `(time, event index, reversible)` by time.
    once: Vec<(f64, u32, bool)>,
    /// The same with loop-canonical times, by canonical time.
    looped: Vec<(f64, u32, bool)>,
    reversible: usize,
}

impl EventTrack {
    pub fn new(clip: &Clip) -> Self {
        let mut once: Vec<(f64, u32, bool)> = clip
            .events
            .iter()
            .enumerate()
            .map(|(i, e)| (e.time, i as u32, e.reversible))
            .collect();
        once.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut looped: Vec<(f64, u32, bool)> = once
            .iter()
            .map(|&(t, i, r)| (if t >= clip.duration { 0.0 } else { t }, i, r))
            .collect();
        looped.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let reversible = once.iter().filter(|e| e.2).count();
        EventTrack {
            once,
            looped,
            reversible,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.once.is_empty()
    }

    fn entries(&self, mode: PlayMode) -> &[(f64, u32, bool)] {
        if mode == PlayMode::Loop {
            &self.looped
        } else {
            &self.once
        }
    }

    /// Events a whole span in this direction delivers.
    fn per_span(&self, forward: bool) -> usize {
        if forward {
            self.once.len()
        } else {
            self.reversible
        }
    }
}

/// Identity fields stamped on each event of one player step.
#[derive(Clone, Copy, Debug)]
pub struct Stamp {
    pub tick: u64,
    pub instance: u32,
    pub region: u16,
    pub activation: u64,
    pub clip: u32,
}

/// Delivers the events `step` crosses, in order, then its completion. On overflow the events of
/// this step already pushed stay in `out`; callers roll back the whole update.
#[inline]
pub fn deliver(
    step: &Step,
    track: &EventTrack,
    stamp: Stamp,
    out: &mut EventBuffer,
) -> Result<(), Overflow> {
    if !track.is_empty() {
        let within = step.from.cycle == step.to.cycle && step.from.phase < step.to.phase;
        if within && step.mode != PlayMode::PingPong {
            // Forward within one cycle (most steps): its one span `(from, to]`, unsplit.
            let (lo, hi) = (step.from.phase, step.to.phase);
            for &(time, index, _) in track.entries(step.mode) {
                if time > lo && time <= hi {
                    let kind = EventKind::Clip(index);
                    out.push(event(stamp, step.to.cycle, kind, time, false))?;
                }
            }
        } else {
            deliver_spans(step, track, stamp, out)?;
        }
    }
    if step.completed {
        let reverse = step.to.phase < step.duration;
        out.push(event(
            stamp,
            step.to.cycle,
            EventKind::Completed,
            step.to.phase,
            reverse,
        ))?;
    }
    Ok(())
}

fn event(s: Stamp, cycle: i64, kind: EventKind, time: f64, reverse: bool) -> Event {
    Event {
        tick: s.tick,
        instance: s.instance,
        region: s.region,
        activation: s.activation,
        cycle,
        clip: s.clip,
        kind,
        time,
        reverse,
    }
}

fn deliver_spans(
    step: &Step,
    track: &EventTrack,
    stamp: Stamp,
    out: &mut EventBuffer,
) -> Result<(), Overflow> {
    let mut spans = Spans::new(step);
    let count = spans.span_count();
    let entries = track.entries(step.mode);
    if count > 2 {
        // Whole middle cycles deliver a known number of events each, so a long tick overflows
        // (or skips cycles that deliver nothing) without walking millions of cycles.
        let middle = count - 2;
        let (ahead, behind) = (track.per_span(true) as u64, track.per_span(false) as u64);
        let (at_least, none) = match step.mode {
            // Ping-pong legs alternate direction: at least middle / 2 pairs of legs.
            PlayMode::PingPong => (
                (middle / 2).saturating_mul(ahead + behind),
                ahead + behind == 0,
            ),
            _ => {
                let per = if spans.ahead() { ahead } else { behind };
                (per.saturating_mul(middle), per == 0)
            }
        };
        if at_least > out.remaining() as u64 {
            return Err(Overflow {
                capacity: out.capacity(),
            });
        }
        if none {
            if let Some(first) = spans.next() {
                span_events(&first, entries, stamp, out)?;
            }
            spans.skip_to_last();
        }
    }
    for span in spans {
        span_events(&span, entries, stamp, out)?;
    }
    Ok(())
}

fn span_events(
    span: &Span,
    entries: &[(f64, u32, bool)],
    stamp: Stamp,
    out: &mut EventBuffer,
) -> Result<(), Overflow> {
    let mut push = |&(time, index, reversible): &(f64, u32, bool)| -> Result<(), Overflow> {
        if (span.forward || reversible) && span.contains(time) {
            out.push(event(
                stamp,
                span.cycle,
                EventKind::Clip(index),
                time,
                !span.forward,
            ))?;
        }
        Ok(())
    };
    if span.forward {
        entries.iter().try_for_each(&mut push)
    } else {
        entries.iter().rev().try_for_each(&mut push)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::player::Position;

    /// A track of events at `times` (the one at index 1 reversible) for a clip of `duration`,
    /// as [`EventTrack::new`] sorts them.
    fn track(times: &[f64], duration: f64) -> EventTrack {
        let mut once: Vec<(f64, u32, bool)> = (times.iter().enumerate())
            .map(|(i, &t)| (t, i as u32, i == 1))
            .collect();
        once.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut looped: Vec<_> = (once.iter())
            .map(|&(t, i, r)| (if t >= duration { 0.0 } else { t }, i, r))
            .collect();
        looped.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        EventTrack {
            reversible: once.iter().filter(|e| e.2).count(),
            once,
            looped,
        }
    }

    #[test]
    fn a_forward_step_within_one_cycle_delivers_what_its_spans_deliver() {
        let stamp = Stamp {
            tick: 9,
            instance: 4,
            region: 1,
            activation: 3,
            clip: 2,
        };
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut unit = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut delivered = 0;
        for d in [1.0, 0.833_333_333_333_333_4, 2.5] {
            let events = track(&[0.0, 0.3 * d, 0.3 * d, 0.5 * d, d], d);
            for mode in [PlayMode::Loop, PlayMode::Once] {
                for k in 0..2_000 {
                    // Phases on the events' times as often as between them.
                    let mut phase = || match (unit() * 8.0) as u32 {
                        0 => 0.0,
                        1 => 0.3 * d,
                        2 => 0.5 * d,
                        3 => d,
                        _ => unit() * d,
                    };
                    let (a, b) = (phase(), phase());
                    let (from, to) = (a.min(b), a.max(b));
                    // A loop's phase stays below its duration.
                    if from >= to || (mode == PlayMode::Loop && to >= d) {
                        continue;
                    }
                    let cycle = if mode == PlayMode::Loop { k % 5 - 2 } else { 0 };
                    let step = Step {
                        mode,
                        duration: d,
                        from: Position { cycle, phase: from },
                        to: Position { cycle, phase: to },
                        completed: false,
                    };
                    let (mut fast, mut spans) =
                        (EventBuffer::with_capacity(8), EventBuffer::with_capacity(8));
                    deliver(&step, &events, stamp, &mut fast).unwrap();
                    deliver_spans(&step, &events, stamp, &mut spans).unwrap();
                    assert_eq!(fast.events(), spans.events(), "{step:?}");
                    delivered += fast.len();
                }
            }
        }
        assert!(delivered > 1_000, "{delivered} events compared");
    }
}
