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

use std::ops::Range;

use glam::{DVec2, Quat, Vec3};
use throng_cpu_ref::clip::sample_root_motion;
use throng_cpu_ref::motion_db::{Filter, Match, MotionDatabase, FEATURES, HORIZONS};

use crate::instance::{Controller, Inertia, InstanceState, Scratch, TickError, TickOutput};
use crate::player::{ClipPlayer, PlayMode};
use crate::root_motion::Motion;
use crate::tree::{Matching, Producer, Value};

/// A matched row this many rows or fewer from the playing one in the same clip, ahead or
/// behind, keeps the player as it is: a switch there would blend a pose into itself, and
/// jumping back a little at every query would hold the pose still. From a clip's tail, these
/// rows behind are excluded from the search.
pub const NEAR_ROWS: u32 = 12;

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
        // Due every `every` ticks (staggered by id); the desired trajectory's departure is
        // checked half way between, so a query runs at most twice per `every` ticks unless the
        // playing frame leaves the searchable rows.
        let phase = (tick.wrapping_add(u64::from(s.id))) % u64::from(m.every);
        let midway = m.every > 1 && phase == u64::from(m.every / 2);
        if !(entering || phase == 0 || midway || searchable.is_none()) {
            return Ok(());
        }
        let current_raw = current.and_then(|row| db.raw(row as usize));
        let v0 = self
            .clip(player.clip)
            .map_or(DVec2::ZERO, |c| root_velocity(c, time, self.period));
        let want = desired(m, &s.inputs);
        let trajectory = predict(&db.horizons, m.halflife, v0, want);
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
        let mut raw = current_raw.unwrap_or(db.mean);
        raw[..4 * HORIZONS].copy_from_slice(&trajectory);
        let features = db.normalize(&raw);
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
        let (clip, at) = (entry.clip, f64::from(at));
        // On the state's first tick the player is the placeholder it was entered with, shown
        // nowhere yet: it is replaced in place. Later, the switch inertializes from the pose
        // playing now (the region's, as an inertializing transition captures it).
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
        let player_error = |source| TickError::Player {
            region: region.name.clone(),
            clip,
            source,
        };
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

    /// `motion` warped toward the desired motion of the base region's leaf, if it matches: the
    /// ground-plane step moves toward the desired velocity's by at most `warp_speed` of its
    /// length, the yaw toward the desired turn (halved every `halflife`) by at most `warp_turn`
    /// radians a second.
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
        let step = step + correction;
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
