//! Same tree, inputs and ticks give the same events, root motion, states and programs bit for
//! bit: across thread counts, and against a pinned golden hash.

mod support;

use throng_control::digest::Digest;
use throng_control::program::compile;
use throng_control::tree::Value;
use throng_cpu_ref::PoseOp;

#[test]
fn one_and_four_threads_give_the_same_hash() {
    let ctl = support::crowd(60.0);
    let one = support::crowd_hash(&ctl, support::script, (1, 1000, 60));
    let four = support::crowd_hash(&ctl, support::script, (4, 1000, 60));
    assert_eq!(one, four);
}

/// The scripted single-instance run `throng simulate` performs by default (the same inputs as
/// docs/state-tree.md's example script): idle, walk, wave, run, slow down, sprint.
fn scripted_inputs(tick: u64) -> (f64, bool) {
    let speed = match tick {
        0..100 => 0.0,
        100..250 => 1.4,
        250..400 => 3.0,
        400..500 => 0.7,
        _ => 5.0,
    };
    (
        speed,
        (150..350).contains(&tick) || (450..520).contains(&tick),
    )
}

#[test]
fn a_scripted_600_tick_run_matches_the_golden_hash() {
    let ctl = support::crowd(60.0);
    let (mut s, mut scratch, mut out) = (ctl.spawn(0).unwrap(), ctl.scratch(), ctl.output());
    let limits = ctl.limits();
    let mut ops = vec![PoseOp::rest(0); limits.max_ops];
    let mut pool = vec![0.0; limits.max_weights];
    let mut weights = vec![0.0; ctl.tree.player_slots()];
    let mut d = Digest::default();
    let mut steps = 0;
    let mut captures = 0;
    for tick in 0..600 {
        let (speed, wave) = scripted_inputs(tick);
        ctl.set_input(&mut s, "speed", Value::Float(speed)).unwrap();
        ctl.set_input(&mut s, "wave", Value::Bool(wave)).unwrap();
        ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
        steps += out.events.len();
        d.tick(&s, &out);
        let (n, m) = compile(&ctl, &s, &mut weights, &mut ops, &mut pool);
        d.program(&ops[..n], &pool[..m]);
        captures += ops[..n]
            .iter()
            .filter(|o| o.code == throng_cpu_ref::program::op::CAPTURE)
            .count();
    }
    // Walking and running deliver step events; idle delivers none.
    assert!(steps > 10, "{steps} events");
    // The sprint at 5 m/s is entered once, inertialized.
    assert_eq!(captures, 1);
    // Pinned from a run of this build. It changes when the generated character's clips, the
    // cook (sample rate, root-motion extraction, events), the crowd tree, or any control
    // semantics (tick order, sync, crossfades, inertialization, program layout) change: rerun
    // and re-pin only after checking that the change is intended (last: the crowd tree's
    // inertialized sprint).
    assert_eq!(format!("{:016x}", d.finish()), GOLDEN);
}

const GOLDEN: &str = "359d85e271ceb9bd";
