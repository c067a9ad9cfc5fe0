//! Program values: the numbers of a pose program that change from tick to tick while its
//! shape does not (docs/pose-program.md, "Values").
//!
//! A crowd member's program keeps its ops, registers, clips, masks and history slots for many
//! ticks at a time; what moves every tick is its clip times and weights. Splitting those out
//! lets control hand over, and a runtime upload, only them. The order is fixed, per op in
//! program order:
//!
//! | op | values |
//! |---|---|
//! | `Sample` | its time |
//! | `Blend` | its `b` input weights, in input order |
//! | `Override`, `Additive` | its layer weight |
//! | `Inertialize` | its time since the capture |
//!
//! Every other op and field (clip ids, registers, masks, history slots, a `Capture`'s interval
//! and an `Inertialize`'s duration) is the program's *static* part: a change there is a change
//! of the program, not of its values.

use crate::program::op;
use crate::{PoseOp, Program};

/// How a presentation frame carries a value between two ticks ([`crate::present`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// A `Sample` time of the clip the op names: moved along the clip's cycle.
    Time,
    /// A weight, or an inertialization's elapsed time: moved linearly.
    Linear,
}

/// Values `o` has.
pub fn op_value_count(o: &PoseOp) -> usize {
    match o.code {
        op::SAMPLE | op::OVERRIDE | op::ADDITIVE | op::INERTIALIZE => 1,
        op::BLEND => o.b as usize,
        _ => 0,
    }
}

/// Values of a program of `ops`.
pub fn value_count(ops: &[PoseOp]) -> usize {
    ops.iter().map(op_value_count).sum()
}

/// Calls `f(op index, kind)` for every value of `ops`, in value order.
pub fn for_each_value(ops: &[PoseOp], mut f: impl FnMut(usize, ValueKind)) {
    for (i, o) in ops.iter().enumerate() {
        let kind = match o.code {
            op::SAMPLE => ValueKind::Time,
            _ => ValueKind::Linear,
        };
        (0..op_value_count(o)).for_each(|_| f(i, kind));
    }
}

/// Writes the values of `ops` (blend weights from `weights`) into `out` and returns how many
/// it wrote; it stops at the end of `out`. A blend weight outside `weights` is written as 0.
pub fn write_values(ops: &[PoseOp], weights: &[f32], out: &mut [f32]) -> usize {
    let mut n = 0;
    let mut put = |v: f32| {
        if let Some(slot) = out.get_mut(n) {
            *slot = v;
            n += 1;
        }
    };
    for o in ops {
        match o.code {
            op::SAMPLE | op::INERTIALIZE => put(o.time),
            op::OVERRIDE | op::ADDITIVE => put(o.weight),
            op::BLEND => {
                for k in 0..o.b as usize {
                    put(weights.get(o.c as usize + k).copied().unwrap_or(0.0));
                }
            }
            _ => {}
        }
    }
    n
}

/// The inverse of [`write_values`]: puts `values` into `program` (its times and weights), in
/// value order; values past the program's are ignored, and a program value past `values` is
/// left as it was.
pub fn set_values(program: &mut Program, values: &[f32]) {
    let mut it = values.iter().copied();
    let Program { ops, weights } = program;
    for o in ops.iter_mut() {
        match o.code {
            op::SAMPLE | op::INERTIALIZE => {
                if let Some(v) = it.next() {
                    o.time = v;
                }
            }
            op::OVERRIDE | op::ADDITIVE => {
                if let Some(v) = it.next() {
                    o.weight = v;
                }
            }
            op::BLEND => {
                for k in 0..o.b as usize {
                    match (it.next(), weights.get_mut(o.c as usize + k)) {
                        (Some(v), Some(w)) => *w = v,
                        (None, _) => return,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

/// Replaces every value of `program` by `f(value index, op index, kind, value)`, in value order.
pub fn map_values(program: &mut Program, mut f: impl FnMut(usize, usize, ValueKind, f32) -> f32) {
    let Program { ops, weights } = program;
    let mut k = 0;
    for (i, o) in ops.iter_mut().enumerate() {
        match o.code {
            op::SAMPLE => {
                o.time = f(k, i, ValueKind::Time, o.time);
                k += 1;
            }
            op::INERTIALIZE => {
                o.time = f(k, i, ValueKind::Linear, o.time);
                k += 1;
            }
            op::OVERRIDE | op::ADDITIVE => {
                o.weight = f(k, i, ValueKind::Linear, o.weight);
                k += 1;
            }
            op::BLEND => {
                for j in 0..o.b as usize {
                    if let Some(w) = weights.get_mut(o.c as usize + j) {
                        *w = f(k, i, ValueKind::Linear, *w);
                    }
                    k += 1;
                }
            }
            _ => {}
        }
    }
}

/// Whether `a` and `b` have the same static part: equal but for their values (times and
/// weights as [`write_values`] lists them). Blend weights are compared by pool position, so
/// programs whose blends read the same ranges of their pools qualify.
pub fn same_static(a: &Program, b: &Program) -> bool {
    same_static_ops(&a.ops, a.weights.len(), &b.ops, b.weights.len())
}

/// [`same_static`] of programs given as ops and weight pool lengths.
pub fn same_static_ops(a: &[PoseOp], a_weights: usize, b: &[PoseOp], b_weights: usize) -> bool {
    a.len() == b.len()
        && a_weights == b_weights
        && a.iter().zip(b).all(|(x, y)| {
            let (x, y): (&[u32; 8], &[u32; 8]) = (bytemuck::cast_ref(x), bytemuck::cast_ref(y));
            // Words 6 and 7 are the weight and the time: values of some ops.
            let (weight, time) = match x[0] {
                op::SAMPLE | op::INERTIALIZE => (true, false),
                op::OVERRIDE | op::ADDITIVE => (false, true),
                _ => (true, true),
            };
            x[..6] == y[..6] && (!weight || x[6] == y[6]) && (!time || x[7] == y[7])
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::NO_MASK;

    fn layered(t: f32, w: f32) -> Program {
        Program {
            ops: vec![
                PoseOp::sample(0, 0, t),
                PoseOp::sample(1, 1, t * 0.5),
                PoseOp::blend(0, 0, 2, 0),
                PoseOp::sample(1, 2, 0.1),
                PoseOp::overriding(0, 1, w, 0),
                PoseOp::inertialize(0, 3, t, 0.3),
                PoseOp::additive(0, 1, 1, 0.5, NO_MASK),
                PoseOp::to_component(0),
                PoseOp::palette(0),
            ],
            weights: vec![w, 1.0 - w],
        }
    }

    #[test]
    fn values_list_times_and_weights_in_op_order_and_set_values_puts_them_back() {
        let p = layered(0.25, 0.3);
        assert_eq!(value_count(&p.ops), 8);
        let mut v = [9.0; 10];
        assert_eq!(write_values(&p.ops, &p.weights, &mut v), 8);
        assert_eq!(&v[..8], &[0.25, 0.125, 0.3, 0.7, 0.1, 0.3, 0.25, 0.5]);
        let mut q = layered(0.0, 0.0);
        set_values(&mut q, &v[..8]);
        assert_eq!(q, p);
        let mut kinds = Vec::new();
        for_each_value(&p.ops, |i, k| kinds.push((i, k)));
        assert_eq!(kinds.len(), 8);
        assert_eq!(kinds[0], (0, ValueKind::Time));
        assert_eq!(kinds[2], (2, ValueKind::Linear));
        assert_eq!(
            kinds[6],
            (5, ValueKind::Linear),
            "elapsed time moves linearly"
        );
    }

    #[test]
    fn programs_differing_only_in_values_share_their_static_part() {
        assert!(same_static(&layered(0.25, 0.3), &layered(0.75, 0.9)));
        let mut other = layered(0.25, 0.3);
        other.ops[3].a = 4;
        assert!(!same_static(&layered(0.25, 0.3), &other), "another clip");
        let mut other = layered(0.25, 0.3);
        other.ops[5].weight = 0.6;
        assert!(
            !same_static(&layered(0.25, 0.3), &other),
            "another duration"
        );
    }

    #[test]
    fn short_buffers_are_not_overrun() {
        let p = layered(0.25, 0.3);
        let mut v = [0.0; 3];
        assert_eq!(write_values(&p.ops, &p.weights, &mut v), 3);
        let mut q = layered(0.0, 0.0);
        set_values(&mut q, &v);
        assert_eq!((q.ops[0].time, q.weights[0]), (0.25, 0.3));
        assert_eq!(q.weights[1], 1.0, "left as it was");
    }
}
