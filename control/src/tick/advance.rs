//! Steps 5 and 6 of the tick (see [`crate::instance`]): advance every live player once (sync
//! leaders and unsynced players first, then followers), deliver events, and blend the base
//! region's root motion.

use crate::events::{deliver, Stamp};
use crate::instance::{Controller, InstanceState, Scratch, Source, TickError, TickOutput};
use crate::tick::motion::MotionSum;
use crate::tree::MAX_SYNC_GROUPS;

impl Controller {
    /// Advances every live player once (leaders and unsynced first, then followers), delivers
    /// events and blends the base region's root motion.
    pub(crate) fn advance(
        &self,
        s: &mut InstanceState,
        scratch: &mut Scratch,
        tick: u64,
        out: &mut TickOutput,
    ) -> Result<(), TickError> {
        let mut motion = MotionSum::default();
        scratch.laps = [0.0; MAX_SYNC_GROUPS];
        for pass_followers in [false, true] {
            for r in 0..s.regions.len() {
                let rs = &s.regions[r];
                let region = &self.tree.regions[r];
                let (offset, slots) = self.bank_slots(r);
                let mut banks = [(rs.bank as usize, rs.count as usize, rs.leaf()), (0, 0, 0)];
                if let Source::Live { state, count } = rs.source {
                    banks[1] = (1 - rs.bank as usize, count as usize, state);
                }
                for (b, count, state) in banks {
                    let st = &region.states[state as usize];
                    for k in offset + b * slots..offset + b * slots + count {
                        if scratch.follower[k] != pass_followers {
                            continue;
                        }
                        let step = if pass_followers {
                            self.follow(s, k, st.sync, &scratch.laps)
                        } else {
                            s.players[k].advance()
                        };
                        let p = s.players[k];
                        let step = step.map_err(|source| TickError::Player {
                            region: region.name.clone(),
                            clip: p.clip,
                            source,
                        })?;
                        if let Some(g) = st.sync.filter(|_| !pass_followers) {
                            if s.leaders[g as usize] == p.activation {
                                scratch.laps[g as usize] =
                                    step.from.cycle.abs_diff(step.to.cycle).saturating_sub(1)
                                        as f64;
                            }
                        }
                        let w = scratch.weights[k];
                        if w > 0.0 && !pass_followers {
                            let stamp = Stamp {
                                tick,
                                instance: s.id,
                                region: r as u16,
                                activation: p.activation,
                                clip: p.clip,
                            };
                            deliver(&step, &self.tracks[p.clip as usize], stamp, &mut out.events)?;
                        }
                        if r == 0 {
                            let last = &mut s.root_samples[k];
                            motion.add(w, || {
                                self.player_motion(&step, p.clip, st.root_motion, last)
                            });
                        }
                    }
                }
            }
        }
        out.root_motion = motion.finish();
        Ok(())
    }
}
