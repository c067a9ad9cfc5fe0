//! Steps 5 and 6 of the tick (see [`crate::instance`]): advance every live player once (sync
//! leaders and unsynced players first, then followers), deliver events, and list the steps of the
//! base region's weighted players, whose root motion [`Controller::root_motion`] then blends
//! (after the tick, or for a crowd after its chunk: see `crate::crowd`).

use crate::events::{deliver, Stamp};
use crate::instance::{Controller, InstanceState, Scratch, TickError, TickOutput};
use crate::tick::motion::PendingMotion;
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
        scratch.laps = [0.0; MAX_SYNC_GROUPS];
        for r in 0..s.regions.len() {
            self.advance_region(s, scratch, r, false, tick, out)?;
        }
        // Followers are players of states in sync groups.
        for &r in &self.sync_regions {
            self.advance_region(s, scratch, r, true, tick, out)?;
        }
        Ok(())
    }

    /// Advances region `r`'s live players that are followers (or, with `followers` false, the
    /// others), in player order: delivers their events (not a follower's) and lists the steps of
    /// weighted base-region players at the end of `scratch.motions`.
    // Inlined: it runs for every region of every instance, and its prologue and six arguments
    // cost about 40 instructions a call (callgrind).
    #[inline(always)]
    fn advance_region(
        &self,
        s: &mut InstanceState,
        scratch: &mut Scratch,
        r: usize,
        followers: bool,
        tick: u64,
        out: &mut TickOutput,
    ) -> Result<(), TickError> {
        let region = &self.tree.regions[r];
        let (offset, slots) = self.bank_slots(r);
        for (b, count, state) in s.regions[r].live_banks() {
            if count == 0 {
                continue;
            }
            let st = &region.states[state as usize];
            for k in offset + b * slots..offset + b * slots + count {
                if scratch.follower[k] != followers {
                    continue;
                }
                let step = if let Some(g) = st.sync.filter(|_| followers) {
                    let g = g as usize;
                    self.follow(s, k, scratch.leader_slots[g], scratch.laps[g])
                } else {
                    s.players[k].advance()
                };
                let (clip, activation) = (s.players[k].clip, s.players[k].activation);
                let step = step.map_err(|source| TickError::Player {
                    region: region.name.clone(),
                    clip,
                    source,
                })?;
                if let Some(g) = st.sync.filter(|_| !followers) {
                    if s.leaders[g as usize] == activation {
                        scratch.laps[g as usize] =
                            step.from.cycle.abs_diff(step.to.cycle).saturating_sub(1) as f64;
                    }
                }
                let w = scratch.weights[k];
                if w > 0.0 && !followers {
                    let stamp = Stamp {
                        tick,
                        instance: s.id,
                        region: r as u16,
                        activation,
                        clip,
                    };
                    deliver(&step, &self.tracks[clip as usize], stamp, &mut out.events)?;
                }
                if r == 0 && w > 0.0 {
                    scratch.motions.push(PendingMotion {
                        step,
                        clip,
                        policy: st.root_motion,
                        slot: k,
                        weight: w,
                    });
                }
            }
        }
        Ok(())
    }
}
