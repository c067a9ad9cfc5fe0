//! Clip players (DESIGN.md §5): one clip's playhead on the fixed tick.
//!
//! Time is f64 seconds and ticks are u64. A player's position is a signed cycle count and a
//! phase in that cycle ([`Position`]); the clip time it shows follows from the mode:
//! - `Once`: cycle 0, phase = clip time in [0, duration], clamped at both ends;
//! - `Loop`: phase = clip time in [0, duration); a wrap increments (or, playing backwards,
//!   decrements) the cycle, so no crossing is lost to a modulo;
//! - `PingPong`: cycle = leg; even legs show `phase`, odd legs `duration - phase`.
//!
//! Positions are not accumulated tick by tick: the player keeps a *base* (position and tick at
//! the last play, seek, resume, rate or mode change) and computes the position at tick `n` as
//! `base + rate * (n - base_tick) * period`, so a rate change rebases and time never jumps, and
//! the same ticks give the same positions bit for bit. Every count is checked: an overflow is an
//! error, never a wrap, and a failed call changes nothing.

use thiserror::Error;

/// What happens at the ends of the clip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayMode {
    Once,
    Loop,
    PingPong,
}

/// A playhead: `cycle` counts wraps (Loop) or legs (PingPong); `phase` is seconds into it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Position {
    pub cycle: i64,
    pub phase: f64,
}

impl Position {
    /// Strict unwrapped order: cycle first, then phase.
    pub fn before(self, other: Position) -> bool {
        self.cycle < other.cycle || (self.cycle == other.cycle && self.phase < other.phase)
    }
}

#[derive(Debug, Error, Clone, PartialEq)]
pub enum PlayerError {
    #[error("{what} is {value}, which is not finite")]
    NotFinite { what: &'static str, value: f64 },
    #[error("{what} is {value}; it must be in {range}")]
    OutOfRange {
        what: &'static str,
        value: f64,
        range: &'static str,
    },
    #[error("{0} overflowed")]
    Overflow(&'static str),
}

/// Transport state of a player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Playing,
    Paused,
    Stopped,
}

/// One clip's playhead. Plain data (`Copy`): control keeps players in flat arrays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipPlayer {
    /// Clip index in the package.
    pub clip: u32,
    /// Identity of this play: unique per instance, new on every [`ClipPlayer::play`].
    pub activation: u64,
    duration: f64,
    /// Seconds per tick.
    period: f64,
    /// Clip seconds per second; negative plays backwards.
    rate: f64,
    mode: PlayMode,
    transport: Transport,
    /// Latched on the tick a `Once` player reaches its end in the direction of play.
    completed: bool,
    position: Position,
    base: Position,
    base_tick: u64,
    /// Ticks advanced since the play began.
    ticks: u64,
}

impl Default for ClipPlayer {
    /// A stopped player of nothing: an empty slot.
    fn default() -> Self {
        ClipPlayer {
            clip: 0,
            activation: 0,
            duration: 0.0,
            period: 0.0,
            rate: 0.0,
            mode: PlayMode::Once,
            transport: Transport::Stopped,
            completed: false,
            position: Position::default(),
            base: Position::default(),
            base_tick: 0,
            ticks: 0,
        }
    }
}

/// What one advance (or traversing seek) did: the move from `from` to `to`, and whether
/// completion latched on this step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub mode: PlayMode,
    pub duration: f64,
    pub from: Position,
    pub to: Position,
    pub completed: bool,
}

fn finite(what: &'static str, value: f64) -> Result<f64, PlayerError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(PlayerError::NotFinite { what, value })
    }
}

impl ClipPlayer {
    /// A player at clip time 0 (the end, for a negative rate in `Once`), playing. A clip of zero
    /// duration plays as `Once` and completes on its first advance.
    pub fn play(
        clip: u32,
        duration: f64,
        mode: PlayMode,
        rate: f64,
        period: f64,
        activation: u64,
    ) -> Result<Self, PlayerError> {
        let duration = finite("duration", duration)?.max(0.0);
        let mode = if duration > 0.0 { mode } else { PlayMode::Once };
        let rate = finite("rate", rate)?;
        let period = finite("tick period", period)?;
        let start = if mode == PlayMode::Once && rate < 0.0 {
            duration
        } else {
            0.0
        };
        let position = Position {
            cycle: 0,
            phase: start,
        };
        Ok(ClipPlayer {
            clip,
            activation,
            duration,
            period,
            rate,
            mode,
            transport: Transport::Playing,
            completed: false,
            position,
            base: position,
            base_tick: 0,
            ticks: 0,
        })
    }

    pub fn duration(&self) -> f64 {
        self.duration
    }
    pub fn rate(&self) -> f64 {
        self.rate
    }
    pub fn mode(&self) -> PlayMode {
        self.mode
    }
    pub fn transport(&self) -> Transport {
        self.transport
    }
    pub fn completed(&self) -> bool {
        self.completed
    }
    pub fn position(&self) -> Position {
        self.position
    }
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Clip time shown now, in [0, duration].
    #[inline]
    pub fn clip_time(&self) -> f64 {
        clip_time(self.mode, self.duration, self.position)
    }

    fn rebase(&mut self) {
        self.base = self.position;
        self.base_tick = self.ticks;
    }

    /// Resumes a paused player; no effect otherwise.
    pub fn resume(&mut self) {
        if self.transport == Transport::Paused {
            self.transport = Transport::Playing;
            self.rebase();
        }
    }

    /// Holds the position; ticks still count.
    pub fn pause(&mut self) {
        if self.transport == Transport::Playing {
            self.transport = Transport::Paused;
        }
    }

    /// Stops at clip time 0 without events; only a new [`ClipPlayer::play`] restarts it.
    pub fn stop(&mut self) {
        self.transport = Transport::Stopped;
        self.position = Position::default();
        self.rebase();
    }

    /// Changes the rate from the current position on (rebased: the clip time does not jump).
    pub fn set_rate(&mut self, rate: f64) -> Result<(), PlayerError> {
        self.rate = finite("rate", rate)?;
        self.rebase();
        Ok(())
    }

    /// Plays the other way from here at the same speed.
    pub fn reverse(&mut self) {
        self.rate = -self.rate;
        self.rebase();
    }

    /// Changes the mode, keeping the clip time shown (a loop at its end continues from 0 of the
    /// next cycle).
    pub fn set_mode(&mut self, mode: PlayMode) {
        if self.duration <= 0.0 {
            return;
        }
        let time = self.clip_time();
        self.mode = mode;
        self.position = self.place(0, time);
        self.rebase();
    }

    /// The position showing clip `time` in cycle `cycle` of this mode; a phase at the duration
    /// belongs to the next cycle.
    fn place(&self, cycle: i64, time: f64) -> Position {
        let d = self.duration;
        let phase = match self.mode {
            PlayMode::Once => {
                return Position {
                    cycle: 0,
                    phase: time,
                }
            }
            PlayMode::PingPong if cycle.rem_euclid(2) == 1 => d - time,
            _ => time,
        };
        if phase >= d {
            Position {
                cycle: cycle.saturating_add(1),
                phase: 0.0,
            }
        } else {
            Position { cycle, phase }
        }
    }

    /// Moves to clip `time` (clamped to [0, duration]) in the current cycle and rebases. The
    /// returned step is the traversal from the old position to the new one: callers scrub (drop
    /// it: no events) by default and deliver its events only when asked to traverse. Seeking
    /// does not reset a latched completion.
    pub fn seek(&mut self, time: f64) -> Result<Step, PlayerError> {
        let time = finite("seek time", time)?.clamp(0.0, self.duration);
        let from = self.position;
        self.position = self.place(from.cycle, time);
        self.rebase();
        Ok(self.step(from, false))
    }

    fn step(&self, from: Position, completed: bool) -> Step {
        Step {
            mode: self.mode,
            duration: self.duration,
            from,
            to: self.position,
            completed,
        }
    }

    /// Advances one tick. Paused and stopped players hold still (a paused one still counts the
    /// tick). Nothing changes on error.
    pub fn advance(&mut self) -> Result<Step, PlayerError> {
        let next = self
            .ticks
            .checked_add(1)
            .ok_or(PlayerError::Overflow("tick count"))?;
        let x = self.base.phase + self.rate * ((next - self.base_tick) as f64 * self.period);
        self.move_to(self.base.cycle, x)
    }

    /// The clip time this player shows one tick of play later (as [`ClipPlayer::advance`] would
    /// move it), without moving it.
    pub fn next_clip_time(&self) -> f64 {
        let mut next = *self;
        next.advance()
            .map_or(self.clip_time(), |_| next.clip_time())
    }

    /// The clip time this player showed one tick of play earlier at its current rate (clamped
    /// or wrapped by its mode), without moving it.
    pub fn previous_clip_time(&self) -> f64 {
        let mut previous = *self;
        previous
            .advance_by(-self.rate * self.period)
            .map_or(self.clip_time(), |_| previous.clip_time())
    }

    /// Moves by `delta` phase seconds from the current position and rebases: the advance of a
    /// sync-group follower, whose phase the leader dictates. Otherwise as [`ClipPlayer::advance`].
    pub fn advance_by(&mut self, delta: f64) -> Result<Step, PlayerError> {
        let x = self.position.phase + finite("sync delta", delta)?;
        let step = self.move_to(self.position.cycle, x)?;
        self.rebase();
        Ok(step)
    }

    /// One tick's move to unwrapped phase `x` seconds from the start of cycle `origin`.
    fn move_to(&mut self, origin: i64, x: f64) -> Result<Step, PlayerError> {
        let ticks = self
            .ticks
            .checked_add(1)
            .ok_or(PlayerError::Overflow("tick count"))?;
        let from = self.position;
        match self.transport {
            Transport::Stopped => return Ok(self.step(from, false)),
            Transport::Paused => {
                self.ticks = ticks;
                return Ok(self.step(from, false));
            }
            Transport::Playing => {}
        }
        let (to, reached_end) = self.normalize(origin, finite("player time", x)?)?;
        let completed = reached_end && !self.completed;
        self.ticks = ticks;
        self.position = to;
        self.completed |= reached_end;
        Ok(self.step(from, completed))
    }

    /// Position for unwrapped phase `x` seconds from the start of cycle `origin`, and whether a
    /// `Once` player reached its end in the direction of play.
    fn normalize(&self, origin: i64, x: f64) -> Result<(Position, bool), PlayerError> {
        let d = self.duration;
        if self.mode == PlayMode::Once {
            let end = if self.rate >= 0.0 { x >= d } else { x <= 0.0 };
            return Ok((
                Position {
                    cycle: 0,
                    phase: x.clamp(0.0, d),
                },
                end,
            ));
        }
        if (0.0..d).contains(&x) {
            // Within the cycle, as most advances are: `x / d` rounds below 1 when `x < d`, so
            // the general path's wrap count is ±0 and its phase `x - (±0) · d`, which is
            // `x + 0.0` (a -0 becomes +0), found here without the division and `floor` (a
            // library call on x86-64's baseline).
            return Ok((
                Position {
                    cycle: origin,
                    phase: x + 0.0,
                },
                false,
            ));
        }
        let wraps = (x / d).floor();
        // Beyond 2^53 cycles f64 can no longer tell phases apart.
        if wraps.abs() >= 9.0e15 {
            return Err(PlayerError::Overflow("cycle count"));
        }
        let mut cycle = origin
            .checked_add(wraps as i64)
            .ok_or(PlayerError::Overflow("cycle count"))?;
        let mut phase = x - wraps * d;
        if phase >= d {
            phase -= d;
            cycle = cycle
                .checked_add(1)
                .ok_or(PlayerError::Overflow("cycle count"))?;
        }
        Ok((
            Position {
                cycle,
                phase: phase.clamp(0.0, d),
            },
            false,
        ))
    }
}

/// Clip time shown at `p` in `mode` for a clip of `duration`.
#[inline]
pub fn clip_time(mode: PlayMode, duration: f64, p: Position) -> f64 {
    match mode {
        PlayMode::PingPong if p.cycle.rem_euclid(2) == 1 => duration - p.phase,
        _ => p.phase,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `normalize`'s general path alone (the division and `floor`), for looping modes.
    fn general(origin: i64, x: f64, d: f64) -> Position {
        let wraps = (x / d).floor();
        let mut cycle = origin + wraps as i64;
        let mut phase = x - wraps * d;
        if phase >= d {
            phase -= d;
            cycle += 1;
        }
        Position {
            cycle,
            phase: phase.clamp(0.0, d),
        }
    }

    #[test]
    fn an_advance_within_its_cycle_lands_where_the_general_path_does_bit_for_bit() {
        for d in [1.0, 0.8333333333333334, 1.0 / 3.0, 2.5e-7, 123.456] {
            let p = ClipPlayer::play(0, d, PlayMode::Loop, 1.0, 1.0 / 30.0, 1).unwrap();
            let below = f64::from_bits(d.to_bits() - 1);
            let mut xs = vec![0.0, -0.0, 1e-300, below, 0.5 * d, d, -1e-300];
            xs.extend((0..1000).map(|i| i as f64 / 1000.0 * d));
            for x in xs {
                let (got, end) = p.normalize(7, x).unwrap();
                let want = general(7, x, d);
                assert!(!end);
                assert_eq!(got.cycle, want.cycle, "{x} of {d}");
                assert_eq!(got.phase.to_bits(), want.phase.to_bits(), "{x} of {d}");
            }
        }
    }
}
