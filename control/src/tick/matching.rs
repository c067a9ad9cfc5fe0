//! Motion matching on the tick (docs/motion-matching.md, "On the tick"): a base-region leaf
//! whose producer is [`Producer::Matching`] queries its database after the region's selection
//! and before its weights, and may switch its one player to the matched clip and time under an
//! inertialization; its root motion is warped toward the desired motion within bounds.
//!
//! The desired trajectory is predicted, as in Holden's "Code vs Data Driven Displacement"
//! (https://theorangeduck.com/page/code-vs-data-driven-displacement), by critically damped
//! springs: the velocity from the playing clip's root velocity toward the desired one, the
//! facing from the current one toward the desired turn, both at rest acceleration. Inputs and
//! prediction are in the character's frame at the tick's start, so the instance keeps no state
//! for them. The query's pose features are those of the playing frame's row.
//!
//! Stops are distance matched (Laurent Delayen, Epic Games, "Animation Techniques used in
//! Paragon", Live from Epic HQ, 2016,
//! https://forums.unrealengine.com/t/animation-techniques-used-in-paragon-and-january-game-jam-theme-announcement-live-from-epic-hq/52339):
//! at load, each database clip's stretches where the root slows to rest are found
//! ([`stop_segments`]), with the ground distance left to rest at each row; a state reading a `stop_distance` input plays such a
//! stretch once the stop it asks for is within its reach, at each tick the frame whose distance
//! left is the one asked for, so the character comes to rest where gameplay wants it with its
//! feet where the clip put them. Playing by distance needs no state of its own either: the
//! player's clip and time say whether a stop plays.

use std::ops::Range;

use glam::{DVec2, Quat, Vec3};
use throng_cpu_ref::clip::sample_root_motion;
use throng_cpu_ref::motion_db::{Filter, Match, MotionDatabase, FEATURES, HORIZONS};
use throng_cpu_ref::Package;

use crate::instance::{Controller, Inertia, InstanceState, Scratch, TickError, TickOutput};
use crate::player::{ClipPlayer, PlayMode, PlayerError};
use crate::root_motion::Motion;
use crate::tree::{Matching, Producer, Value};

/// A matched row this many rows or fewer from the playing one in the same clip, ahead or
/// behind, keeps the player as it is: a switch there would blend a pose into itself, and
/// jumping back a little at every query would hold the pose still. From a clip's tail, these
/// rows behind are excluded from the search.
pub const NEAR_ROWS: u32 = 12;

/// Root speeds (m/s) of [`stop_segments`]: below `STILL` a clip stands; a stop begins from at
/// least `STOP_FROM`; a matched agent enters a stop only while its clip moves at least
/// `STOP_ENTRY`.
const STILL: f64 = 0.1;
const STOP_FROM: f64 = 0.6;
const STOP_ENTRY: f64 = 0.25;
/// Seconds: a clip must then stand this long for its slowing to count as a stop; speeds are
/// measured over rows this far either side; a stop begins at its fastest row this long before
/// rest at most.
const STAND: f64 = 0.25;
const SPEED_HALF_WINDOW: f64 = 0.1;
const STOP_SPAN: f64 = 1.5;

/// A stretch of a database clip in which its root slows to rest: rows `first..=rest` of the
/// clip (clip time × the database's rate), the first the fastest of the stretch.
#[derive(Clone, Debug, PartialEq)]
pub struct StopSegment {
    pub clip: u32,
    /// The database row of `first`.
    pub row: u32,
    pub first: u32,
    pub rest: u32,
    /// Per row from `first` to `rest`: the ground distance (m) from the root there to where it
    /// rests (never less than a later row's: a stop that curves or steps aside keeps the
    /// distances falling), down to 0.
    pub remaining: Vec<f32>,
}

impl StopSegment {
    /// The clip time (s) whose distance left to rest is `distance`, at `rate` rows a second:
    /// interpolated between rows, the segment's first row for a distance past its reach.
    fn time_at(&self, distance: f64, rate: f64) -> f64 {
        let d = &self.remaining;
        let k = d.iter().position(|&x| f64::from(x) <= distance);
        let row = match k {
            None => f64::from(self.rest),
            Some(0) => f64::from(self.first),
            Some(k) => {
                let (a, b) = (f64::from(d[k - 1]), f64::from(d[k]));
                (k - 1) as f64 + (a - distance) / (a - b).max(1e-9) + f64::from(self.first)
            }
        };
        row / rate
    }

    /// Whether clip `clip` at `time` (s) is inside this stop, at `rate` rows a second.
    fn plays(&self, clip: u32, time: f64, rate: f64) -> bool {
        let row = time * rate;
        clip == self.clip && row >= f64::from(self.first) && row <= f64::from(self.rest)
    }
}

/// The stops of database `db`'s clips (their root motion in `package`), clip by clip: where the
/// root's ground speed (over ±[`SPEED_HALF_WINDOW`]) falls below [`STILL`] and stays there for
/// [`STAND`], from its fastest row of the [`STOP_SPAN`] before if that is at least
/// [`STOP_FROM`].
pub fn stop_segments(db: &MotionDatabase, package: &Package) -> Vec<StopSegment> {
    let rate = f64::from(db.rate);
    let rows = |s: f64| ((s * rate).round() as usize).max(1);
    let (half, stand, span) = (rows(SPEED_HALF_WINDOW), rows(STAND), rows(STOP_SPAN));
    let mut out = Vec::new();
    for c in &db.clips {
        let Some(clip) = package.clips.get(c.clip as usize) else {
            continue;
        };
        let n = c.frames as usize;
        let ground: Vec<DVec2> = (0..n)
            .filter_map(|k| sample_root_motion(clip, (k as f64 / rate) as f32))
            .map(|(p, _)| DVec2::new(f64::from(p.x), f64::from(p.z)))
            .collect();
        if ground.len() != n || n < 2 {
            continue;
        }
        let speed: Vec<f64> = (0..n)
            .map(|k| {
                let (a, b) = (k.saturating_sub(half), (k + half).min(n - 1));
                ground[b].distance(ground[a]) * rate / (b - a) as f64
            })
            .collect();
        let (mut k, mut earliest) = (1, 0);
        while k + stand <= n {
            let rests = speed[k - 1] >= STILL && speed[k..k + stand].iter().all(|&v| v < STILL);
            if !rests {
                k += 1;
                continue;
            }
            let from = k.saturating_sub(span).max(earliest);
            let first = (from..k).fold(
                from,
                |best, j| if speed[j] > speed[best] { j } else { best },
            );
            if speed[first] >= STOP_FROM {
                let mut remaining = vec![0.0f32; k - first + 1];
                let mut left = 0.0f64;
                for j in (first..k).rev() {
                    left = left.max(ground[k].distance(ground[j]));
                    remaining[j - first] = left as f32;
                }
                out.push(StopSegment {
                    clip: c.clip,
                    row: c.first + first as u32,
                    first: first as u32,
                    rest: k as u32,
                    remaining,
                });
            }
            earliest = k;
            k += stand;
        }
    }
    out
}

/// One query of a tick, for tools that check or time the search (`throng follow`).
#[derive(Clone, Debug, PartialEq)]
pub struct MatchQuery {
    /// The package's motion database.
    pub database: u16,
    /// The normalised query.
    pub features: [f32; FEATURES],
    /// The rows it may return.
    pub filter: Filter,
    /// The search's first bound: the playing frame's row where it is searchable, else the row
    /// before the excluded ones.
    pub start: Option<u32>,
    pub found: Option<Match>,
    /// Whether the player switched to the match.
    pub switched: bool,
}

/// The desired motion of a matching state: velocity (x, z) in m/s and turn in radians, from
/// the instance's inputs.
fn desired(m: &Matching, inputs: &[Value]) -> (DVec2, f64) {
    let v = |i: u16| inputs.get(i as usize).map_or(0.0, |v| v.as_f64());
    (DVec2::new(v(m.velocity[0]), v(m.velocity[1])), v(m.turn))
}

/// The distance (m) to where state `m`'s inputs ask the character to stand, if they ask.
fn stop_asked(m: &Matching, inputs: &[Value]) -> Option<f64> {
    let i = m.stop_distance?;
    Some(inputs.get(i as usize)?.as_f64()).filter(|d| *d >= 0.0)
}

/// Damping of a critically damped spring of half-life `halflife` (Holden's `y`).
fn damping(halflife: f64) -> f64 {
    2.0 * std::f64::consts::LN_2 / halflife
}

/// The desired trajectory's features, raw: positions and facing directions at the database's
/// horizons, predicted from velocity `v0` toward `desired` and from facing 0 toward `turn`.
fn predict(
    horizons: &[f32; HORIZONS],
    halflife: f64,
    v0: DVec2,
    (desired, turn): (DVec2, f64),
) -> [f32; 4 * HORIZONS] {
    let y = damping(halflife);
    let j0 = v0 - desired;
    let j1 = j0 * y;
    let mut out = [0.0f32; 4 * HORIZONS];
    for (h, &ahead) in horizons.iter().enumerate() {
        let t = f64::from(ahead);
        let e = (-y * t).exp();
        let p = desired * t + j0 * ((1.0 - e) / y) + j1 * ((1.0 - e * (1.0 + y * t)) / (y * y));
        let angle = turn - turn * (1.0 + y * t) * e;
        out[2 * h] = p.x as f32;
        out[2 * h + 1] = p.y as f32;
        out[2 * HORIZONS + 2 * h] = angle.sin() as f32;
        out[2 * HORIZONS + 2 * h + 1] = angle.cos() as f32;
    }
    out
}

/// The row of database `db` showing `clip` at `time` (the nearest at or before) and the rows of
/// that clip, if the clip is one of its.
fn row_at(db: &MotionDatabase, clip: u32, time: f64) -> Option<(u32, Range<u32>)> {
    let c = db.clips.iter().find(|c| c.clip == clip)?;
    let k = (time.max(0.0) * f64::from(db.rate)).floor() as u32;
    Some((
        c.first + k.min(c.frames.saturating_sub(1)),
        c.first..c.first + c.frames,
    ))
}

/// The ground-plane velocity (x, z) of a clip's root motion at `time`, in its trajectory space
/// then; zero without root motion.
fn root_velocity(clip: &throng_cpu_ref::Clip, time: f64, period: f64) -> DVec2 {
    let duration = clip.duration;
    let (a, b) = if time + period <= duration {
        (time, time + period)
    } else {
        ((duration - period).max(0.0), duration)
    };
    let (Some((p0, q0)), Some((p1, _))) = (
        sample_root_motion(clip, a as f32),
        sample_root_motion(clip, b as f32),
    ) else {
        return DVec2::ZERO;
    };
    if b <= a {
        return DVec2::ZERO;
    }
    let d = q0.inverse() * (p1 - p0);
    DVec2::new(f64::from(d.x), f64::from(d.z)) / (b - a)
}

impl Controller {
    /// Region `r`'s motion matching this tick, if its leaf matches (see the module doc).
    pub(crate) fn match_motion(
        &self,
        s: &mut InstanceState,
        scratch: &mut Scratch,
        r: usize,
        tick: u64,
        out: &mut TickOutput,
    ) -> Result<(), TickError> {
        let region = &self.tree.regions[r];
        let rs = &s.regions[r];
        let Producer::Matching(m) = &region.states[rs.leaf() as usize].producer else {
            return Ok(());
        };
        let Some(db) = self.package.motion_databases.get(m.database as usize) else {
            return Ok(());
        };
        // Entered this tick, or at spawn (tick 0) and ticked for the first time.
        let entered = rs.entered[rs.depth as usize - 1];
        let entering = entered == tick || (entered == 0 && tick == 1);
        let (offset, slots) = self.bank_slots(r);
        let player = s.players[offset + rs.bank as usize * slots];
        let time = player.clip_time();
        let (current, clip_rows) = row_at(db, player.clip, time).unzip();
        let searchable = current.filter(|&row| db.is_searchable(row as usize));
        // Worked out only on the ticks that use them (most ticks of a crowd use neither).
        let velocity = || {
            self.clip(player.clip)
                .map_or(DVec2::ZERO, |c| root_velocity(c, time, self.period))
        };
        let want = desired(m, &s.inputs);
        let query = |trajectory: &[f32; 4 * HORIZONS]| {
            let mut raw = current
                .and_then(|row| db.raw(row as usize))
                .unwrap_or(db.mean);
            raw[..4 * HORIZONS].copy_from_slice(trajectory);
            db.normalize(&raw)
        };
        if let Some(stop) = stop_asked(m, &s.inputs).filter(|_| !entering) {
            let (stops, rate) = (self.stops(m.database), f64::from(db.rate));
            if let Some(g) = stops.iter().find(|g| g.plays(player.clip, time, rate)) {
                // A stop plays: the frame whose distance left is the one asked for, never back
                // (held back, the clip's last steps turn aside: CMU 131_01's stop turns about).
                let at = g.time_at(stop, rate);
                if at > time {
                    let slot = offset + s.regions[r].bank as usize * slots;
                    (s.players[slot].seek(at))
                        .map_err(|source| self.player_error(r, player.clip, source))?;
                }
                return Ok(());
            }
            let v0 = velocity();
            if v0.length() >= STOP_ENTRY {
                // Within reach of a stop: the one whose frame at that distance best continues
                // the pose playing now (ties to the first).
                let features = query(&predict(&db.horizons, m.halflife, v0, want));
                let best = (stops.iter())
                    .filter(|g| g.remaining.first().is_some_and(|&d| f64::from(d) >= stop))
                    .map(|g| {
                        let k = g.remaining.iter().position(|&d| f64::from(d) <= stop);
                        let row = g.row + k.unwrap_or(0) as u32;
                        (g, db.cost(row as usize, &features))
                    })
                    .min_by(|a, b| a.1.total_cmp(&b.1));
                if let Some((g, _)) = best {
                    return self.play_match(
                        s,
                        scratch,
                        r,
                        m,
                        (g.clip, g.time_at(stop, rate)),
                        false,
                    );
                }
            }
        }
        // Due every `every` ticks (staggered by id); the desired trajectory's departure is
        // checked half way between, so a query runs at most twice per `every` ticks unless the
        // playing frame leaves the searchable rows.
        let phase = (tick.wrapping_add(u64::from(s.id))) % u64::from(m.every);
        let midway = m.every > 1 && phase == u64::from(m.every / 2);
        if !(entering || phase == 0 || midway || searchable.is_none()) {
            return Ok(());
        }
        let current_raw = current.and_then(|row| db.raw(row as usize));
        let trajectory = predict(&db.horizons, m.halflife, velocity(), want);
        let departs = current_raw.is_some_and(|raw| {
            (0..HORIZONS).any(|h| {
                let dx = raw[2 * h] - trajectory[2 * h];
                let dz = raw[2 * h + 1] - trajectory[2 * h + 1];
                f64::from(dx * dx + dz * dz) > m.departure * m.departure
            })
        });
        if midway && !departs && searchable.is_some() && !entering {
            return Ok(());
        }
        let features = query(&trajectory);
        // A searchable playing row is the search's first bound, and a match near it in its clip
        // keeps the player; from the tail, the rest of the clip and the rows just behind are
        // excluded.
        let exclude = match (searchable, current, &clip_rows) {
            (None, Some(row), Some(rows)) => {
                row.saturating_sub(NEAR_ROWS).max(rows.start)..rows.end
            }
            _ => 0..0,
        };
        // From the tail, the first bound is the row just before the excluded ones: the same
        // motion a moment earlier, usually a close match.
        let start = searchable.or_else(|| exclude.start.checked_sub(1));
        let filter = Filter {
            tags: m.tags,
            exclude,
        };
        let found = db.search(&features, &filter, start);
        let near = |row: u32, m: u32| {
            clip_rows.as_ref().is_some_and(|rows| rows.contains(&m)) && row.abs_diff(m) <= NEAR_ROWS
        };
        let switch = found.filter(|f| entering || !searchable.is_some_and(|row| near(row, f.row)));
        out.query = Some(MatchQuery {
            database: m.database,
            features,
            filter,
            start,
            found,
            switched: switch.is_some(),
        });
        let Some(best) = switch else {
            return Ok(());
        };
        let Some((entry, at)) = db.locate(best.row) else {
            return Ok(());
        };
        self.play_match(s, scratch, r, m, (entry.clip, f64::from(at)), entering)
    }

    /// Plays `clip` from `at` (s) in region `r`'s matching state `m`: on the state's first tick
    /// (`entering`) the player is the placeholder it was entered with, shown nowhere yet, and is
    /// replaced in place; later the switch inertializes from the pose playing now (the
    /// region's, as an inertializing transition captures it).
    fn play_match(
        &self,
        s: &mut InstanceState,
        scratch: &mut Scratch,
        r: usize,
        m: &Matching,
        (clip, at): (u32, f64),
        entering: bool,
    ) -> Result<(), TickError> {
        let (offset, slots) = self.bank_slots(r);
        let bank = if entering {
            s.regions[r].bank
        } else {
            let source = self.inertial_source(s, r, &mut scratch.weights);
            scratch.weights[offset..offset + 2 * slots].fill(0.0);
            scratch.undo.inertia(s);
            s.inertia = Inertia {
                active: true,
                elapsed: 0.0,
                duration: m.blend,
                capture: Some(source),
            };
            1 - s.regions[r].bank
        };
        scratch.undo.region(s, r);
        let duration = self.clip(clip).map_or(0.0, |c| c.duration);
        let activation = s.next_activation;
        s.next_activation = activation.checked_add(1).ok_or(TickError::TickCount)?;
        let player_error = |source| self.player_error(r, clip, source);
        let mut player =
            ClipPlayer::play(clip, duration, PlayMode::Once, 1.0, self.period, activation)
                .map_err(player_error)?;
        player.seek(at).map_err(player_error)?;
        s.players[offset + bank as usize * slots] = player;
        let rs = &mut s.regions[r];
        rs.bank = bank;
        rs.count = 1;
        Ok(())
    }

    /// A player error of region `r`'s player of `clip`.
    fn player_error(&self, r: usize, clip: u32, source: PlayerError) -> TickError {
        TickError::Player {
            region: self.tree.regions[r].name.clone(),
            clip,
            source,
        }
    }

    /// The stops of database `database` ([`stop_segments`], found when the controller was
    /// made).
    pub fn stops(&self, database: u16) -> &[StopSegment] {
        self.stops
            .get(database as usize)
            .map_or(&[], |v| v.as_slice())
    }

    /// The stop the base region's matching state plays (its player inside a [`StopSegment`]),
    /// if it does.
    pub fn playing_stop(&self, s: &InstanceState) -> Option<&StopSegment> {
        let (region, rs) = (self.tree.regions.first()?, s.regions.first()?);
        let Producer::Matching(m) = &region.states[rs.leaf() as usize].producer else {
            return None;
        };
        let rate = f64::from(self.package.motion_databases.get(m.database as usize)?.rate);
        let (offset, slots) = self.bank_slots(0);
        let p = s.players.get(offset + rs.bank as usize * slots)?;
        (self.stops(m.database).iter()).find(|g| g.plays(p.clip, p.clip_time(), rate))
    }

    /// `motion` warped toward the desired motion of the base region's leaf, if it matches: the
    /// ground-plane step moves toward the desired velocity's by at most `warp_speed` of its
    /// length (while a stop plays, turned only: its steps are the distances it matches), the yaw toward
    /// the desired turn (halved every `halflife`) by at most `warp_turn` radians a second.
    pub(crate) fn warp(&self, s: &InstanceState, motion: Motion) -> Motion {
        let (Some(region), Some(rs)) = (self.tree.regions.first(), s.regions.first()) else {
            return motion;
        };
        let Producer::Matching(m) = &region.states[rs.leaf() as usize].producer else {
            return motion;
        };
        let (velocity, turn) = desired(m, &s.inputs);
        let (t, q) = motion;
        let step = DVec2::new(f64::from(t.x), f64::from(t.z));
        let correction = velocity * self.period - step;
        let limit = m.warp_speed * step.length();
        let correction = if correction.length() > limit {
            correction * (limit / correction.length())
        } else {
            correction
        };
        let warped = step + correction;
        // A stop's steps keep their length, the distances it matches: only turned.
        let stopping = stop_asked(m, &s.inputs).is_some() && self.playing_stop(s).is_some();
        let step = match stopping && warped.length() > 1e-9 {
            true => warped * (step.length() / warped.length()),
            false => warped,
        };
        let yaw = 2.0 * f64::from(q.y).atan2(f64::from(q.w));
        let yaw = if yaw > std::f64::consts::PI {
            yaw - std::f64::consts::TAU
        } else if yaw < -std::f64::consts::PI {
            yaw + std::f64::consts::TAU
        } else {
            yaw
        };
        let wanted = turn * (1.0 - (-std::f64::consts::LN_2 * self.period / m.halflife).exp());
        let bound = m.warp_turn * self.period;
        let extra = (wanted - yaw).clamp(-bound, bound);
        (
            Vec3::new(step.x as f32, t.y, step.y as f32),
            (Quat::from_rotation_y(extra as f32) * q).normalize(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows 10..=14 at 10 rows a second, the root 0.8, 0.5, 0.3, 0.1 and 0 m from rest.
    fn stop() -> StopSegment {
        StopSegment {
            clip: 3,
            row: 110,
            first: 10,
            rest: 14,
            remaining: vec![0.8, 0.5, 0.3, 0.1, 0.0],
        }
    }

    #[test]
    fn a_stop_plays_the_time_whose_distance_left_is_the_one_asked_for() {
        let g = stop();
        let at = |d: f64| g.time_at(d, 10.0);
        assert!((at(0.5) - 1.1).abs() < 1e-6);
        assert!((at(0.4) - 1.15).abs() < 1e-6, "half way from 0.5 to 0.3");
        assert!((at(0.05) - 1.35).abs() < 1e-6);
        assert_eq!(at(0.0), 1.4, "at rest");
        assert_eq!(at(2.0), 1.0, "past its reach: its first row");
        let mut last = 0.0;
        for k in 0..=100 {
            let t = at(1.0 - f64::from(k) * 0.01);
            assert!(t >= last, "nearer never plays earlier");
            last = t;
        }
    }

    #[test]
    fn a_stop_plays_from_its_first_row_to_its_rest_in_its_own_clip_only() {
        let g = stop();
        assert!(g.plays(3, 1.0, 10.0) && g.plays(3, 1.4, 10.0) && g.plays(3, 1.2, 10.0));
        assert!(!g.plays(3, 0.99, 10.0) && !g.plays(3, 1.41, 10.0));
        assert!(!g.plays(4, 1.2, 10.0), "another clip");
    }
}
