//! Curve events, every tick (docs/state-tree.md, "Curve events"): the scalar curves a tree's
//! `[curve_events]` watch are evaluated on the CPU from each instance's compiled program, those
//! channels alone ([`throng_cpu_ref::scalar::CurveRegisters`], the interpreter's own curve
//! code), and an event fires when a curve crosses its threshold between two ticks: rising (from
//! below to at or above) or falling (from at or above to below). The crowd delivers them after
//! the instance's clip events, in the tree's order (by name).
//!
//! A curve event is an [`Event`] of kind [`EventKind::Curve`] (the event's index in
//! [`crate::tree::Tree::curve_events`]) with no clip, play or clip time: `clip` is `u32::MAX`,
//! `region`, `activation`, `cycle` and `time` are 0, and `reverse` marks a falling crossing.
//! An instance's first values (at spawn) fire nothing.

use throng_cpu_ref::scalar::CurveRegisters;
use throng_cpu_ref::PoseOp;

use crate::events::{Event, EventKind};
use crate::instance::Controller;

/// The watched channels' registers and one instance's values of them.
#[derive(Clone, Debug)]
pub struct CurveWatch {
    registers: CurveRegisters,
    now: Vec<f32>,
}

impl CurveWatch {
    /// A watch of `ctl`'s tree's curves (nothing to do when it declares no curve events).
    pub fn new(ctl: &Controller) -> Self {
        let watched = &ctl.tree.watched_curves;
        let mut registers = CurveRegisters::new(ctl.limits().registers(), watched.len());
        let first = ctl.package.curves.range(ctl.tree.skeleton).start;
        registers.select(first, watched.iter().copied());
        CurveWatch {
            registers,
            now: vec![0.0; watched.len()],
        }
    }

    /// The watched curves of the program (`ops`, `weights`): one value per watched channel.
    /// Allocates nothing.
    pub fn evaluate(&mut self, ctl: &Controller, ops: &[PoseOp], weights: &[f32]) -> &[f32] {
        if let Some(assets) = ctl.package.assets(ctl.tree.skeleton) {
            for o in ops {
                self.registers.op(o, weights, &assets);
            }
            self.now.copy_from_slice(self.registers.outputs());
        }
        &self.now
    }

    /// Evaluates instance `id`'s program after tick `tick`, appends the events of the curves that
    /// crossed since `last` (its values after the previous tick) to `events`, and makes the new
    /// values `last`.
    pub fn fire(
        &mut self,
        ctl: &Controller,
        (ops, weights): (&[PoseOp], &[f32]),
        (tick, id): (u64, u32),
        last: &mut [f32],
        events: &mut Vec<Event>,
    ) {
        let now = self.evaluate(ctl, ops, weights);
        for (k, e) in ctl.tree.curve_events.iter().enumerate() {
            let slot = e.slot as usize;
            let (before, after) = (last[slot], now[slot]);
            let crossed = if e.rising {
                before < e.threshold && after >= e.threshold
            } else {
                before >= e.threshold && after < e.threshold
            };
            if crossed {
                events.push(Event {
                    tick,
                    instance: id,
                    region: 0,
                    activation: 0,
                    cycle: 0,
                    clip: u32::MAX,
                    kind: EventKind::Curve(k as u32),
                    time: 0.0,
                    reverse: !e.rising,
                });
            }
        }
        last.copy_from_slice(now);
    }
}
