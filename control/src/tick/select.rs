//! Steps 2 and 3 of the tick (see [`crate::instance`]): select at most one transition per
//! region and apply it (exits leaf-up, entries root-down, the new leaf's players, the crossfade
//! or inertialization source).

use crate::instance::{
    Change, Controller, Inertia, InstanceState, Scratch, Source, StateChange, TickError,
    TickOutput, When,
};
use crate::player::ClipPlayer;
use crate::tree::{mode_for, Clause, TransitionBlend, MAX_DEPTH};

impl Controller {
    /// Whether every player of region `r`'s active leaf has completed (false with none).
    pub(crate) fn leaf_completed(&self, s: &InstanceState, r: usize) -> bool {
        let rs = &s.regions[r];
        let (offset, slots) = self.bank_slots(r);
        let first = offset + rs.bank as usize * slots;
        rs.count > 0
            && s.players[first..first + rs.count as usize]
                .iter()
                .all(|p| p.completed())
    }

    /// The transition region `r` takes this tick, if any: ancestor first, then priority, then id.
    pub(crate) fn select(&self, s: &InstanceState, r: usize, tick: u64) -> Option<u16> {
        let rs = &s.regions[r];
        let region = &self.tree.regions[r];
        // Only completion clauses need it, and most regions have none.
        let mut completed = None;
        for d in 0..rs.depth as usize {
            let state = &region.states[rs.path[d] as usize];
            if state.transitions.is_empty() {
                continue;
            }
            let elapsed = tick.saturating_sub(rs.entered[d]) as f64 * self.period;
            for &t in &state.transitions {
                if region.transitions[t as usize].when.iter().all(|c| {
                    let done = matches!(c, Clause::Completed(_))
                        && *completed.get_or_insert_with(|| self.leaf_completed(s, r));
                    c.holds(&s.inputs, elapsed, done)
                }) {
                    return Some(t);
                }
            }
        }
        None
    }

    /// Takes transition `t` in region `r`: exits leaf-up, entries root-down, new players,
    /// crossfade source.
    pub(crate) fn apply(
        &self,
        s: &mut InstanceState,
        scratch: &mut Scratch,
        r: usize,
        t: u16,
        tick: u64,
        out: &mut TickOutput,
    ) -> Result<(), TickError> {
        let region = &self.tree.regions[r];
        let tr = &region.transitions[t as usize];
        let mut chain = [0u16; MAX_DEPTH];
        let len = self.tree.entry_chain(r, tr.to, &mut chain);
        let from_depth = region.states[tr.from as usize].depth as usize;
        let to_depth = region.states[tr.to as usize].depth as usize;
        let inertialize = tr.blend == TransitionBlend::Inertialize;
        // Captured before the path changes: the pose of this moment, if a fade is interrupted.
        let weights = &mut scratch.weights;
        let capture = match s.regions[r].source {
            Source::None => None,
            _ if tr.duration <= 0.0 || inertialize => None,
            _ => Some(self.capture(s, r, weights, When::Now)),
        };
        let inertial =
            (inertialize && tr.duration > 0.0).then(|| self.inertial_source(s, r, weights));
        scratch.undo.region(s, r);
        let rs = &mut s.regions[r];
        let (old_leaf, old_count) = (rs.leaf(), rs.count);
        let shared = rs.path[..rs.depth as usize]
            .iter()
            .zip(&chain[..len])
            .take_while(|(a, b)| a == b)
            .count();
        let common = shared.min(from_depth).min(to_depth);
        for d in (common..rs.depth as usize).rev() {
            out.changes.push(StateChange {
                region: r as u16,
                state: rs.path[d],
                change: Change::Exit,
                transition: t,
            });
        }
        for (d, &state) in chain.iter().enumerate().take(len).skip(common) {
            out.changes.push(StateChange {
                region: r as u16,
                state,
                change: Change::Enter,
                transition: t,
            });
            rs.path[d] = state;
            rs.entered[d] = tick;
        }
        rs.depth = len as u8;
        rs.source = match capture {
            Some((samples, len)) => Source::Frozen { samples, len },
            None if tr.duration > 0.0 && !inertialize => Source::Live {
                state: old_leaf,
                count: old_count,
            },
            None => Source::None,
        };
        rs.fade_elapsed = 0.0;
        rs.fade_duration = if inertialize { 0.0 } else { tr.duration };
        let bank = 1 - rs.bank;
        if inertialize {
            scratch.undo.inertia(s);
            s.inertia = match inertial {
                Some(source) => Inertia {
                    active: true,
                    elapsed: 0.0,
                    duration: tr.duration,
                    capture: Some(source),
                },
                None => Inertia::default(),
            };
        }
        self.start_players(s, r, bank)
    }

    /// Starts the active leaf's players of region `r` in `bank`, at time 0.
    pub(crate) fn start_players(
        &self,
        s: &mut InstanceState,
        r: usize,
        bank: u8,
    ) -> Result<(), TickError> {
        let region = &self.tree.regions[r];
        let leaf = s.regions[r].leaf();
        let state = &region.states[leaf as usize];
        let (offset, slots) = self.bank_slots(r);
        let first = offset + bank as usize * slots;
        let clips = state.producer.clips();
        for (k, &clip) in clips.iter().enumerate() {
            let duration = self.clip(clip).map_or(0.0, |c| c.duration);
            let mode = mode_for(state, &self.package, clip);
            let activation = s.next_activation;
            s.next_activation = activation.checked_add(1).ok_or(TickError::TickCount)?;
            s.players[first + k] =
                ClipPlayer::play(clip, duration, mode, state.rate, self.period, activation)
                    .map_err(|source| TickError::Player {
                        region: region.name.clone(),
                        clip,
                        source,
                    })?;
        }
        let rs = &mut s.regions[r];
        rs.bank = bank;
        rs.count = clips.len() as u8;
        Ok(())
    }
}
