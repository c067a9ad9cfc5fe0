//! Step 4 of the tick (see [`crate::instance`]): each player's weight (blend space ×
//! crossfade), and a region's composed pose as weighted (clip, time) samples, which captures
//! freeze and programs sample.

use glam::DVec2;

use crate::blend::{weights_1d, weights_2d};
use crate::instance::{
    Controller, FrozenSample, Inertia, InertialSource, InstanceState, Source, When, REST,
};
use crate::tree::{Producer, Value, FROZEN_SAMPLES, MAX_POINTS};

impl Controller {
    /// Writes every player slot's effective weight (blend space × crossfade) into `weights`
    /// (one per slot, [`Tree::player_slots`] long).
    pub fn player_weights(&self, s: &InstanceState, weights: &mut [f32]) {
        weights.fill(0.0);
        for r in 0..self.tree.regions.len() {
            self.weigh_live(s, r, weights);
        }
    }

    /// Writes the effective weight of every player of region `r` (blend space × crossfade)
    /// into `weights` (by player slot); unused slots weigh 0.
    pub(crate) fn weigh(&self, s: &InstanceState, r: usize, weights: &mut [f32]) {
        let (offset, slots) = self.bank_slots(r);
        weights[offset..offset + 2 * slots].fill(0.0);
        self.weigh_live(s, r, weights);
    }

    /// [`Controller::weigh`] of the live players alone: the other slots of the region keep what
    /// they held.
    // Inlined: three calls per instance and tick, each mostly prologue (callgrind).
    #[inline(always)]
    pub(crate) fn weigh_live(&self, s: &InstanceState, r: usize, weights: &mut [f32]) {
        let rs = &s.regions[r];
        let region = &self.tree.regions[r];
        let (offset, slots) = self.bank_slots(r);
        let alpha = rs.alpha();
        let target = offset + rs.bank as usize * slots;
        let leaf = &region.states[rs.leaf() as usize];
        producer_weights(
            &leaf.producer,
            &s.inputs,
            &mut weights[target..target + slots],
            alpha,
        );
        if let Source::Live { state, .. } = rs.source {
            let source = offset + (1 - rs.bank as usize) * slots;
            let producer = &region.states[state as usize].producer;
            producer_weights(
                producer,
                &s.inputs,
                &mut weights[source..source + slots],
                1.0 - alpha,
            );
        }
    }

    /// Drops every region's inertialization offset (a teleport: the next pose is not a
    /// continuation of the last).
    pub fn reset_inertia(&self, s: &mut InstanceState) {
        s.inertia = Inertia::default();
    }

    /// The source of an inertialization of region `r` starting now (see [`InertialSource`]).
    pub(crate) fn inertial_source(
        &self,
        s: &InstanceState,
        r: usize,
        weights: &mut [f32],
    ) -> InertialSource {
        let (now, now_len) = self.capture(s, r, weights, When::Next);
        let (previous, previous_len) = self.capture(s, r, weights, When::Now);
        let i = &s.inertia;
        InertialSource {
            now,
            previous,
            now_len,
            previous_len,
            carried: i.active.then_some((i.elapsed, i.duration)),
        }
    }

    /// The composed pose of region `r` at `when`, as at most [`FROZEN_SAMPLES`] weighted
    /// samples: duplicates merged, the heaviest kept, renormalised to the weight they had
    /// together.
    pub(crate) fn capture(
        &self,
        s: &InstanceState,
        r: usize,
        weights: &mut [f32],
        when: When,
    ) -> ([FrozenSample; FROZEN_SAMPLES], u8) {
        self.weigh(s, r, weights);
        let mut all = [FrozenSample::default(); 2 * MAX_POINTS + FROZEN_SAMPLES];
        let n = self.samples(s, r, weights, &mut all, when);
        let total: f32 = all[..n].iter().map(|x| x.weight).sum();
        all[..n].sort_by(|a, b| {
            b.weight
                .total_cmp(&a.weight)
                .then(a.clip.cmp(&b.clip))
                .then(a.time.total_cmp(&b.time))
        });
        let kept = n.min(FROZEN_SAMPLES);
        let sum: f32 = all[..kept].iter().map(|x| x.weight).sum();
        let mut out = [FrozenSample::default(); FROZEN_SAMPLES];
        for (o, x) in out.iter_mut().zip(&all[..kept]) {
            *o = FrozenSample {
                weight: if sum > 0.0 {
                    x.weight * total / sum
                } else {
                    0.0
                },
                ..*x
            };
        }
        (out, kept as u8)
    }

    /// Region `r`'s weighted samples at `when` (weights as from [`Controller::weigh`]): target
    /// and live source players, frozen samples, and rest for an empty base-region producer; zero
    /// weights dropped, equal (clip, time) merged. Returns how many were written.
    pub(crate) fn samples(
        &self,
        s: &InstanceState,
        r: usize,
        weights: &[f32],
        out: &mut [FrozenSample],
        when: When,
    ) -> usize {
        let rs = &s.regions[r];
        let region = &self.tree.regions[r];
        let (offset, slots) = self.bank_slots(r);
        let alpha = rs.alpha();
        let mut n = 0;
        let mut add = |clip: u32, time: f32, weight: f32, n: &mut usize| {
            if weight <= 0.0 || *n >= out.len() {
                return;
            }
            if let Some(same) = out[..*n]
                .iter_mut()
                .find(|x| x.clip == clip && x.time.to_bits() == time.to_bits())
            {
                same.weight += weight;
            } else {
                out[*n] = FrozenSample { clip, time, weight };
                *n += 1;
            }
        };
        let base = r == 0;
        let mut bank = |b: usize, count: usize, state: u16, w: f32, n: &mut usize| {
            if base && matches!(region.states[state as usize].producer, Producer::Empty) {
                add(REST, 0.0, w, n);
            }
            let first = offset + b * slots;
            for (p, &w) in s.players[first..first + count]
                .iter()
                .zip(&weights[first..first + count])
            {
                let time = match when {
                    When::Now => p.clip_time(),
                    When::Next => p.next_clip_time(),
                    When::Previous => p.previous_clip_time(),
                };
                add(p.clip, time as f32, w, n);
            }
        };
        bank(
            rs.bank as usize,
            rs.count as usize,
            rs.leaf(),
            alpha,
            &mut n,
        );
        match rs.source {
            Source::None => {}
            Source::Live { state, count } => bank(
                1 - rs.bank as usize,
                count as usize,
                state,
                1.0 - alpha,
                &mut n,
            ),
            Source::Frozen { samples, len } => {
                for x in &samples[..len as usize] {
                    add(x.clip, x.time, x.weight * (1.0 - alpha), &mut n);
                }
            }
        }
        n
    }
}

/// Weights of a producer's clips into `out` (one per clip), scaled by `scale`.
pub(crate) fn producer_weights(producer: &Producer, inputs: &[Value], out: &mut [f32], scale: f32) {
    match producer {
        Producer::Empty => {}
        Producer::Clip(_) | Producer::Matching(_) => out[0] = scale,
        Producer::Blend1d { input, at, .. } => {
            let x = inputs.get(*input as usize).map_or(0.0, |v| v.as_f64());
            weights_1d(at, x, &mut out[..at.len()]);
            out[..at.len()].iter_mut().for_each(|w| *w *= scale);
        }
        Producer::Blend2d {
            x,
            y,
            points,
            triangles,
            ..
        } => {
            let v = |i: u16| inputs.get(i as usize).map_or(0.0, |v| v.as_f64());
            weights_2d(
                points,
                triangles,
                DVec2::new(v(*x), v(*y)),
                &mut out[..points.len()],
            );
            out[..points.len()].iter_mut().for_each(|w| *w *= scale);
        }
    }
}
