//! The undo log that makes a failed tick leave its instance exactly as it was (DESIGN.md §5).
//!
//! The tick runs on the instance in place. Its scalars and players are saved when the tick
//! begins (one copy of the player slots: a tick advances most of them anyway), and a region or
//! the inertialization before the tick first changes it (most ticks change neither). A failed
//! tick restores what was saved; a successful one drops it. The copies go to per-thread memory
//! the cache already holds, instead of a clone of the whole instance.

use crate::instance::{Inertia, InstanceState, RegionState};
use crate::player::ClipPlayer;
use crate::tree::MAX_SYNC_GROUPS;

/// Old values of what one tick has changed so far. Sized for one tree at creation: logging
/// never allocates.
#[derive(Clone, Debug)]
pub struct Undo {
    tick: u64,
    next_activation: u64,
    leaders: [u64; MAX_SYNC_GROUPS],
    /// The inertialization, once saved this tick.
    inertia: Option<Inertia>,
    regions: Vec<(usize, RegionState)>,
    /// Every player slot as the tick began.
    players: Vec<ClipPlayer>,
    region_saved: Vec<bool>,
}

impl Undo {
    /// A log for instances of `regions` regions and `players` player slots.
    pub fn new(regions: usize, players: usize) -> Self {
        Undo {
            tick: 0,
            next_activation: 0,
            leaders: [0; MAX_SYNC_GROUPS],
            inertia: None,
            regions: Vec::with_capacity(regions),
            players: vec![ClipPlayer::default(); players],
            region_saved: vec![false; regions],
        }
    }

    /// Starts the log of a tick of `s`: forgets the last tick's and saves the scalars.
    pub fn begin(&mut self, s: &InstanceState) {
        for &(r, _) in &self.regions {
            self.region_saved[r] = false;
        }
        self.regions.clear();
        self.players.copy_from_slice(&s.players);
        self.tick = s.tick;
        self.next_activation = s.next_activation;
        self.leaders = s.leaders;
        self.inertia = None;
    }

    /// Saves the inertialization of `s` unless this tick already did.
    pub fn inertia(&mut self, s: &InstanceState) {
        self.inertia.get_or_insert(s.inertia);
    }

    /// Saves region `r` of `s` unless this tick already did.
    pub fn region(&mut self, s: &InstanceState, r: usize) {
        if !self.region_saved[r] {
            self.region_saved[r] = true;
            self.regions.push((r, s.regions[r]));
        }
    }

    /// Puts back into `s` everything saved since [`Undo::begin`].
    pub fn restore(&self, s: &mut InstanceState) {
        s.tick = self.tick;
        s.next_activation = self.next_activation;
        s.leaders = self.leaders;
        if let Some(inertia) = self.inertia {
            s.inertia = inertia;
        }
        for &(r, rs) in &self.regions {
            s.regions[r] = rs;
        }
        s.players.copy_from_slice(&self.players);
    }
}
