//! Root motion of the tick (step 6, see [`crate::instance`]): one player's motion under its
//! state's policy, and the weighted blend of the base region's players.

use glam::{Quat, Vec3};
use throng_cpu_ref::interpreter::AlignedSum;

use crate::instance::{Controller, InstanceState};
use crate::player::Step;
use crate::root_motion::{step_motion_from, LastSample, Motion, IDENTITY};
use crate::tree::RootMotionUse;

impl Controller {
    /// The root motion of a tick: the weighted blend of the `pending` steps of the base region's
    /// players (as the tick listed them, in player order), each slot's last trajectory sample
    /// taken from and left in `s`.
    pub(crate) fn root_motion(&self, s: &mut InstanceState, pending: &[PendingMotion]) -> Motion {
        let mut motion = MotionSum::default();
        for m in pending {
            let last = &mut s.root_samples[m.slot];
            motion.add(m.weight, || {
                self.player_motion(&m.step, m.clip, m.policy, last)
            });
        }
        let motion = motion.finish();
        if self.matching {
            self.warp(s, motion)
        } else {
            motion
        }
    }

    /// One player's root motion this step under `policy`; identity without a trajectory.
    /// `last` is its slot's last trajectory sample.
    pub(crate) fn player_motion(
        &self,
        step: &Step,
        clip: u32,
        policy: RootMotionUse,
        last: &mut LastSample,
    ) -> Motion {
        if policy == RootMotionUse::Ignore {
            return IDENTITY;
        }
        let delta = self
            .clip(clip)
            .and_then(|c| step_motion_from(step, c, clip, last))
            .unwrap_or(IDENTITY);
        match policy {
            RootMotionUse::Full => delta,
            RootMotionUse::Ignore => IDENTITY,
            RootMotionUse::Planar => {
                // Swing-twist: keep the twist about +Y (Dobrowolski, "Swing-twist decomposition
                // in Clifford algebra", 2015).
                let (t, q) = delta;
                let twist = Quat::from_xyzw(0.0, q.y, 0.0, q.w);
                let twist = if twist.length_squared() > 1e-12 {
                    twist.normalize()
                } else {
                    Quat::IDENTITY
                };
                (Vec3::new(t.x, 0.0, t.z), twist)
            }
        }
    }
}

/// A base-region player's step whose root motion the tick blends after advancing every player.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingMotion {
    pub step: Step,
    pub clip: u32,
    pub policy: RootMotionUse,
    pub slot: usize,
    pub weight: f32,
}

/// Weighted blend of per-player root motions: translation the weighted mean, rotation the
/// normalised weighted sum aligned to the first one's hemisphere (the pose Blend op's
/// accumulation, [`AlignedSum`]), over the live players of the base region; frozen poses do not
/// move.
#[derive(Default)]
pub(crate) struct MotionSum {
    sum: AlignedSum,
    weight: f32,
}

impl MotionSum {
    /// Adds `motion()` with weight `w`; a weight <= 0 adds nothing and computes nothing.
    pub(crate) fn add(&mut self, w: f32, motion: impl FnOnce() -> Motion) {
        if w <= 0.0 {
            return;
        }
        let (t, q) = motion();
        self.sum.add(t, q, w);
        self.weight += w;
    }

    pub(crate) fn finish(&self) -> Motion {
        let q = self.sum.rotation;
        if self.weight <= 0.0 || q.length_squared() < 1e-12 {
            return IDENTITY;
        }
        (
            self.sum.translation / self.weight,
            Quat::from_vec4(q.normalize()),
        )
    }
}
