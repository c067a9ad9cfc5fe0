//! DESIGN.md §5, clip players and events: one test per sentence, on synthetic clips.

mod support;

use throng_control::events::{deliver, EventBuffer, EventKind, EventTrack, Stamp};
use throng_control::player::{ClipPlayer, PlayMode, PlayerError, Step};

const STAMP: Stamp = Stamp {
    tick: 1,
    instance: 7,
    region: 0,
    activation: 3,
    clip: 0,
};

/// (event index, cycle, time, reverse) of the events `step` delivers.
fn fired(
    track: &EventTrack,
    step: &Step,
    capacity: usize,
) -> Result<Vec<(u32, i64, f64, bool)>, throng_control::events::Overflow> {
    let mut out = EventBuffer::with_capacity(capacity);
    deliver(step, track, STAMP, &mut out)?;
    Ok(out
        .events()
        .iter()
        .map(|e| {
            assert_eq!(
                (e.instance, e.activation, e.tick),
                (7, 3, 1),
                "identity is stamped"
            );
            let index = match e.kind {
                EventKind::Clip(i) => i,
                EventKind::Completed | EventKind::Curve(_) => u32::MAX,
            };
            (index, e.cycle, e.time, e.reverse)
        })
        .collect())
}

fn track(events: &[(&str, f64, bool)], duration: f64) -> EventTrack {
    EventTrack::new(&support::clip("c", duration, events, &[]))
}

#[test]
fn forward_delivers_old_exclusive_new_inclusive() {
    let t = track(&[("a", 0.25, false), ("b", 0.5, false)], 1.0);
    // 4 Hz ticks: 0 -> 0.25 -> 0.5.
    let mut p = ClipPlayer::play(0, 1.0, PlayMode::Loop, 1.0, 0.25, 3).unwrap();
    assert_eq!(
        fired(&t, &p.advance().unwrap(), 8).unwrap(),
        vec![(0, 0, 0.25, false)]
    );
    assert_eq!(
        fired(&t, &p.advance().unwrap(), 8).unwrap(),
        vec![(1, 0, 0.5, false)]
    );
}

#[test]
fn a_wrap_splits_into_ordered_intervals_and_each_crossing_counts() {
    let t = track(&[("early", 0.1, false), ("late", 0.9, false)], 1.0);
    let mut p = ClipPlayer::play(0, 1.0, PlayMode::Loop, 1.0, 0.3, 3).unwrap();
    let mut all = Vec::new();
    for _ in 0..7 {
        all.extend(fired(&t, &p.advance().unwrap(), 8).unwrap());
    }
    // 2.1 s: late@0.9 (cycle 0), early@0.1 (cycle 1), late (1), early (2).
    assert_eq!(
        all,
        vec![
            (0, 0, 0.1, false),
            (1, 0, 0.9, false),
            (0, 1, 0.1, false),
            (1, 1, 0.9, false),
            (0, 2, 0.1, false)
        ]
    );
    assert_eq!(p.position().cycle, 2);
}

#[test]
fn many_wraps_in_one_long_tick_are_each_counted() {
    let t = track(&[("e", 0.5, false)], 1.0);
    // 10.25 cycles in one tick.
    let mut p = ClipPlayer::play(0, 1.0, PlayMode::Loop, 41.0, 0.25, 3).unwrap();
    let got = fired(&t, &p.advance().unwrap(), 64).unwrap();
    let cycles: Vec<i64> = got.iter().map(|e| e.1).collect();
    assert_eq!(cycles, (0..10).collect::<Vec<_>>());
    assert_eq!(p.position().cycle, 10);
    assert!((p.clip_time() - 0.25).abs() < 1e-12);
}

#[test]
fn reverse_delivers_reversible_events_new_inclusive_old_exclusive() {
    let t = track(
        &[
            ("r", 0.25, true),
            ("fwd_only", 0.5, false),
            ("r2", 0.75, true),
        ],
        1.0,
    );
    let mut p = ClipPlayer::play(0, 1.0, PlayMode::Loop, 1.0, 0.25, 3).unwrap();
    p.seek(0.75).unwrap();
    p.reverse();
    // 0.75 -> 0.5: [0.5, 0.75) holds nothing reversible (0.75 is old, excluded).
    assert_eq!(fired(&t, &p.advance().unwrap(), 8).unwrap(), vec![]);
    // 0.5 -> 0.25: [0.25, 0.5): r at 0.25, new inclusive; fwd_only is not reversible.
    assert_eq!(
        fired(&t, &p.advance().unwrap(), 8).unwrap(),
        vec![(0, 0, 0.25, true)]
    );
    // 0.25 -> 0 -> wrap back to 0.75 of cycle -1: [0, 0.25) then [0.75, 1).
    p.advance().unwrap();
    let got = fired(&t, &p.advance().unwrap(), 8).unwrap();
    assert_eq!(got, vec![(2, -1, 0.75, true)]);
    assert_eq!(p.position().cycle, -1, "a backwards wrap counts down");
}

#[test]
fn a_loop_canonicalises_an_event_at_the_duration_to_zero() {
    let t = track(&[("end", 1.0, false)], 1.0);
    let mut p = ClipPlayer::play(0, 1.0, PlayMode::Loop, 1.0, 0.5, 3).unwrap();
    let mut all = Vec::new();
    for _ in 0..6 {
        all.extend(fired(&t, &p.advance().unwrap(), 8).unwrap());
    }
    // Landing exactly on each wrap fires it once, at time 0 of the new cycle; never twice.
    assert_eq!(
        all,
        vec![(0, 1, 0.0, false), (0, 2, 0.0, false), (0, 3, 0.0, false)]
    );
}

#[test]
fn one_shot_end_events_and_completion_fire_once() {
    let t = track(&[("end", 1.0, false)], 1.0);
    let mut p = ClipPlayer::play(0, 1.0, PlayMode::Once, 1.0, 0.4, 3).unwrap();
    let mut all = Vec::new();
    for _ in 0..6 {
        all.extend(fired(&t, &p.advance().unwrap(), 8).unwrap());
    }
    assert_eq!(all, vec![(0, 0, 1.0, false), (u32::MAX, 0, 1.0, false)]);
    assert!(p.completed());
    assert_eq!(p.clip_time(), 1.0);
}

#[test]
fn ping_pong_turns_deliver_once_and_reverse_legs_only_reversible() {
    let t = track(
        &[
            ("start", 0.0, true),
            ("mid", 0.5, false),
            ("end", 1.0, true),
        ],
        1.0,
    );
    let mut p = ClipPlayer::play(0, 1.0, PlayMode::PingPong, 1.0, 0.25, 3).unwrap();
    let mut all = Vec::new();
    for _ in 0..10 {
        all.extend(fired(&t, &p.advance().unwrap(), 8).unwrap());
    }
    // Leg 0 forward: mid, end (the turn belongs to the leg reaching it). Leg 1 backward:
    // only reversible events, 'start' at the turn. Leg 2 forward: mid at 2.5 s.
    assert_eq!(
        all,
        vec![
            (1, 0, 0.5, false),
            (2, 0, 1.0, false),
            (0, 1, 0.0, true),
            (1, 2, 0.5, false)
        ]
    );
    assert!((p.clip_time() - 0.5).abs() < 1e-12 && p.position().cycle == 2);
}

#[test]
fn seek_scrubs_without_events_unless_asked_to_traverse() {
    let t = track(&[("a", 0.3, false), ("b", 0.6, true)], 1.0);
    let mut p = ClipPlayer::play(0, 1.0, PlayMode::Loop, 1.0, 0.1, 3).unwrap();
    let scrub = p.seek(0.8).unwrap();
    // The default is to drop the step: nothing delivered, and the next advance starts at 0.8.
    let next = p.advance().unwrap();
    assert!((next.from.phase - 0.8).abs() < 1e-12);
    assert_eq!(fired(&t, &next, 8).unwrap(), vec![]);
    // Traversing the same seek delivers what it crossed.
    assert_eq!(
        fired(&t, &scrub, 8).unwrap(),
        vec![(0, 0, 0.3, false), (1, 0, 0.6, false)]
    );
    // A traversing seek backwards delivers reversible events only.
    let back = p.seek(0.1).unwrap();
    assert_eq!(fired(&t, &back, 8).unwrap(), vec![(1, 0, 0.6, true)]);
}

#[test]
fn rate_change_rebases_so_time_never_jumps() {
    let mut p = ClipPlayer::play(0, 10.0, PlayMode::Loop, 1.0, 0.5, 3).unwrap();
    for _ in 0..4 {
        p.advance().unwrap();
    }
    assert_eq!(p.clip_time(), 2.0);
    p.set_rate(3.0).unwrap();
    assert_eq!(p.clip_time(), 2.0, "no jump at the change");
    p.advance().unwrap();
    assert_eq!(p.clip_time(), 3.5);
    p.pause();
    p.advance().unwrap();
    assert_eq!(p.clip_time(), 3.5);
    p.resume();
    p.advance().unwrap();
    assert_eq!(p.clip_time(), 5.0);
    p.stop();
    p.advance().unwrap();
    assert_eq!(p.clip_time(), 0.0);
    assert!(p.set_rate(f64::NAN).is_err());
}

#[test]
fn overflow_rejects_the_update_and_counts_are_checked() {
    let t = track(&[("e", 0.5, false)], 1.0);
    let mut p = ClipPlayer::play(0, 1.0, PlayMode::Loop, 1.0e3, 1.0, 3).unwrap();
    let step = p.advance().unwrap();
    // 1000 crossings do not fit 16 events: rejected as a whole, without walking them.
    assert_eq!(
        fired(&t, &step, 16),
        Err(throng_control::events::Overflow { capacity: 16 })
    );
    // Cycle counts beyond what f64 phases can tell apart are an error, not a wrap.
    let mut q = ClipPlayer::play(0, 1.0, PlayMode::Loop, 1.0e300, 1.0, 3).unwrap();
    let before = q;
    assert_eq!(q.advance(), Err(PlayerError::Overflow("cycle count")));
    assert_eq!(q, before, "a failed advance changes nothing");
}
