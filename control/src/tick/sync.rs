//! Sync groups (step 5 of the tick, see [`crate::instance`]): each group's leader, and a
//! follower's step to its leader's phase, by markers or by normalised time.

use throng_cpu_ref::SyncMarker;

use crate::instance::{Controller, InstanceState, LEADER_HYSTERESIS};
use crate::player::{PlayMode, PlayerError, Step};
use crate::tree::MAX_SYNC_GROUPS;

/// The leader slot of a sync group without one.
pub(crate) const NO_LEADER: usize = usize::MAX;

impl Controller {
    /// Picks each sync group's leader (hysteresis on weight, ties to the first participant in
    /// player order), writes its slot into `leader_slots` ([`NO_LEADER`] for none) and marks the
    /// other participants as followers.
    pub(crate) fn choose_leaders(
        &self,
        s: &mut InstanceState,
        weights: &[f32],
        follower: &mut [bool],
        leader_slots: &mut [usize; MAX_SYNC_GROUPS],
    ) {
        follower.iter_mut().for_each(|f| *f = false);
        let groups = self.tree.sync_groups.len();
        for (g, leader_slot) in leader_slots.iter_mut().enumerate().take(groups) {
            let mut best: Option<(usize, f32)> = None;
            let mut current: Option<(usize, f32)> = None;
            self.for_each_participant(s, g as u16, |k| {
                follower[k] = true;
                let w = weights[k];
                if best.is_none_or(|(_, bw)| w > bw) {
                    best = Some((k, w));
                }
                if s.players[k].activation == s.leaders[g] {
                    current = Some((k, w));
                }
            });
            let leader = match (current, best) {
                (Some((k, w)), Some((_, bw))) if w > 0.0 && w + LEADER_HYSTERESIS >= bw => Some(k),
                (_, best) => best.map(|(k, _)| k),
            };
            s.leaders[g] = leader.map_or(0, |k| s.players[k].activation);
            *leader_slot = leader.unwrap_or(NO_LEADER);
            if let Some(k) = leader {
                follower[k] = false;
            }
        }
    }

    /// Calls `f` with the slot of every live player in sync group `g`, in player order.
    pub(crate) fn for_each_participant(&self, s: &InstanceState, g: u16, mut f: impl FnMut(usize)) {
        for &r in &self.sync_regions {
            let (rs, region) = (&s.regions[r], &self.tree.regions[r]);
            let (offset, slots) = self.bank_slots(r);
            for (b, count, state) in rs.live_banks() {
                if region.states[state as usize].sync == Some(g) {
                    (offset + b * slots..offset + b * slots + count).for_each(&mut f);
                }
            }
        }
    }

    /// Moves follower slot `k` to the phase of the player in slot `leader` (by markers, else
    /// normalised time); advances it by its own rate when there is no leader ([`NO_LEADER`]).
    pub(crate) fn follow(
        &self,
        s: &mut InstanceState,
        k: usize,
        leader: usize,
        laps: f64,
    ) -> Result<Step, PlayerError> {
        let Some(&leader) = s.players.get(leader) else {
            return s.players[k].advance();
        };
        let f = s.players[k];
        let (Some(lc), Some(fc)) = (self.clip(leader.clip), self.clip(f.clip)) else {
            return s.players[k].advance();
        };
        let target = follower_time(
            &lc.markers,
            lc.duration,
            leader.clip_time(),
            &fc.markers,
            fc.duration,
            f.clip_time(),
        );
        if f.ticks() == 0 {
            // Just entered: snap to the leader without events, then count the tick.
            s.players[k].seek(target)?;
            return s.players[k].advance_by(0.0);
        }
        let d = f.duration();
        let delta = nearest(target - f.clip_time(), d);
        let delta = if leader.rate() < 0.0 {
            delta - laps * d
        } else {
            delta + laps * d
        };
        let delta = if f.mode() == PlayMode::PingPong && f.position().cycle.rem_euclid(2) == 1 {
            -delta
        } else {
            delta
        };
        s.players[k].advance_by(delta)
    }
}

/// The follower's clip time matching the leader's phase: the leader lies a fraction of the way
/// between two consecutive markers; the follower takes the same fraction between its markers of
/// the same two names (of several such pairs, the one nearest its current time). Without a
/// matching pair, normalised time: `leader / leader_duration * follower_duration`.
pub(crate) fn follower_time(
    leader_markers: &[SyncMarker],
    leader_duration: f64,
    leader_time: f64,
    markers: &[SyncMarker],
    duration: f64,
    current: f64,
) -> f64 {
    let normalised = if leader_duration > 0.0 {
        leader_time / leader_duration * duration
    } else {
        0.0
    };
    let Some((i, frac)) = segment(leader_markers, leader_duration, leader_time) else {
        return normalised;
    };
    let n = leader_markers.len();
    let (a, b) = (&leader_markers[i].name, &leader_markers[(i + 1) % n].name);
    let m = markers.len();
    let mut best: Option<(f64, f64)> = None;
    for j in 0..m {
        if &markers[j].name != a || &markers[(j + 1) % m].name != b {
            continue;
        }
        let start = markers[j].time;
        let mut end = markers[(j + 1) % m].time;
        if end <= start {
            end += duration;
        }
        let t = wrap(
            start + frac * (end - start),
            duration.max(f64::MIN_POSITIVE),
        );
        let mut gap = (t - current).abs();
        gap = gap.min(duration - gap);
        if best.is_none_or(|(g, _)| gap < g) {
            best = Some((gap, t));
        }
    }
    best.map_or(normalised, |(_, t)| t)
}

/// `delta - round(delta / d) · d`: the offset of the nearest whole cycles from `delta`, bit for
/// bit. Under half a cycle, as a follower near its leader is, `round` gives ±0 (the sign of
/// `delta`) and the result is `delta + 0.0`, without the library's `round`.
fn nearest(delta: f64, d: f64) -> f64 {
    let cycles = delta / d;
    if cycles.abs() < 0.5 {
        delta + 0.0
    } else {
        delta - cycles.round() * d
    }
}

/// `t.rem_euclid(d)` (d > 0), bit for bit, without the library's `fmod` for `t` in [0, 2d) (a
/// marker segment's time lies there): `t`, or `t - d`, which is exact there (Sterbenz).
fn wrap(t: f64, d: f64) -> f64 {
    if (0.0..d).contains(&t) {
        t
    } else if t >= d && t - d < d {
        t - d
    } else {
        t.rem_euclid(d)
    }
}

/// The marker segment (index of its first marker) holding `time`, and the fraction through it.
pub(crate) fn segment(markers: &[SyncMarker], duration: f64, time: f64) -> Option<(usize, f64)> {
    let n = markers.len();
    if n == 0 || duration <= 0.0 {
        return None;
    }
    let i = match markers.iter().rposition(|m| m.time <= time) {
        Some(i) => i,
        None => n - 1,
    };
    let start = markers[i].time;
    let mut end = markers[(i + 1) % n].time;
    if end <= start {
        end += duration;
    }
    let t = if time < start { time + duration } else { time };
    Some((i, ((t - start) / (end - start)).clamp(0.0, 1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Times around the edges the shortcuts take: signed zeros, one ulp either side of the
    /// duration and of twice it, halves, negatives, and values far out.
    fn edges(d: f64) -> Vec<f64> {
        let ulp = |x: f64, k: i64| f64::from_bits((x.to_bits() as i64 + k) as u64);
        let mut v = vec![0.0, -0.0, 1e-300, -1e-300, 0.5 * d, -0.5 * d, 1e9, -1e9];
        for x in [d, 2.0 * d, 0.5 * d, 1.5 * d, 3.0 * d] {
            v.extend((-2..=2).map(|k| ulp(x, k)));
            v.extend((-2..=2).map(|k| -ulp(x, k)));
        }
        v.extend((0..1000).map(|i| (i as f64 * 0.7318 - 300.0) * d / 97.0));
        v
    }

    #[test]
    fn wrap_is_rem_euclid_bit_for_bit() {
        for d in [1.0, 0.8333333333333334, 1.0 / 3.0, 2.5e-7, 123.456] {
            for t in edges(d) {
                assert_eq!(
                    wrap(t, d).to_bits(),
                    t.rem_euclid(d).to_bits(),
                    "{t} mod {d}"
                );
            }
        }
    }

    #[test]
    fn nearest_is_the_rounded_offset_bit_for_bit() {
        for d in [1.0, 0.8333333333333334, 1.0 / 3.0, 2.5e-7, 123.456] {
            for delta in edges(d) {
                let want = delta - (delta / d).round() * d;
                assert_eq!(
                    nearest(delta, d).to_bits(),
                    want.to_bits(),
                    "{delta} by {d}"
                );
            }
        }
    }
}
