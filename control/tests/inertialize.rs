//! Inertialized transitions in control: the programs of the switch tick and of the decay, and
//! the pose they give on the CPU reference (continuous at the switch, the plain destination
//! once the decay is over).

mod support;

use throng_control::instance::Controller;
use throng_control::player::PlayerError;
use throng_control::program::compile;
use throng_control::tree::{self, Value};
use throng_cpu_ref::inertialize::History;
use throng_cpu_ref::program::op;
use throng_cpu_ref::{Evaluator, PoseOp, Program, Trs};

fn tree_source(blend: &str, duration: f64) -> String {
    format!(
        r#"
version = 1
name = "gaits"
[inputs.fast]
type = "bool"
default = false
[[regions]]
name = "locomotion"
blend = "base"
initial = "walking"
[[regions.states]]
name = "walking"
clip = "walk"
mode = "loop"
[[regions.states]]
name = "running"
clip = "run"
mode = "loop"
[[regions.transitions]]
id = "speed_up"
from = "walking"
to = "running"
duration = {duration}
blend = "{blend}"
when = [{{ input = "fast", op = "==", value = true }}]
"#
    )
}

fn controller(blend: &str, duration: f64) -> Controller {
    let package = support::character().clone();
    let tree = tree::load(&tree_source(blend, duration), "gaits.toml", &package, 0).unwrap();
    Controller::new(tree, package, 60.0, 16).unwrap()
}

/// Per tick: the program and the final local pose on the CPU reference (history slot 0).
fn run(ctl: &Controller, ticks: u64, switch_at: u64) -> Vec<(Program, Vec<Trs>)> {
    let mut limits = ctl.limits();
    limits.history_slots = 1;
    let (mut s, mut scratch, mut out) = (ctl.spawn(0).unwrap(), ctl.scratch(), ctl.output());
    let mut ops = vec![PoseOp::rest(0); limits.max_ops];
    let mut pool = vec![0.0; limits.max_weights];
    let mut weights = vec![0.0; ctl.tree.player_slots()];
    let skeleton = &ctl.package.skeletons[0];
    let mut eval = Evaluator::new(limits, skeleton.joint_count(), 64);
    let mut history = History::new(1, skeleton.joint_count());
    let mut frames = Vec::new();
    for tick in 0..ticks {
        ctl.set_input(&mut s, "fast", Value::Bool(tick >= switch_at))
            .unwrap();
        ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
        let (n, m) = compile(ctl, &s, &mut weights, &mut ops, &mut pool);
        let program = Program {
            ops: ops[..n].to_vec(),
            weights: pool[..m].to_vec(),
        };
        eval.run_with_history(&program, &ctl.package.assets(0).unwrap(), &mut history)
            .unwrap();
        let pose = eval.final_local(&program).unwrap().to_vec();
        frames.push((program, pose));
    }
    frames
}

/// Largest joint rotation change between two poses, in radians.
fn jump(a: &[Trs], b: &[Trs]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.rotation.angle_between(y.rotation))
        .fold(0.0, f32::max)
}

fn count(p: &Program, code: u32) -> usize {
    p.ops.iter().filter(|o| o.code == code).count()
}

#[test]
fn the_switch_tick_captures_and_the_decay_ticks_only_inertialize() {
    let ctl = controller("inertialize", 0.25);
    let frames = run(&ctl, 60, 20);
    // The transition fires on the tick the input is first seen (tick index 20).
    let switch = 20;
    assert_eq!(count(&frames[switch - 1].0, op::CAPTURE), 0);
    assert_eq!(count(&frames[switch].0, op::CAPTURE), 1);
    let ticks = (0.25f64 * 60.0).round() as usize;
    for (k, (p, _)) in frames[switch + 1..switch + ticks].iter().enumerate() {
        assert_eq!(count(p, op::CAPTURE), 0);
        let i: Vec<&PoseOp> = p.ops.iter().filter(|o| o.code == op::INERTIALIZE).collect();
        assert_eq!(i.len(), 1, "tick {}", switch + 1 + k);
        let expected = (k + 1) as f32 / 60.0;
        assert!(
            (i[0].time - expected).abs() < 1e-5,
            "{} vs {expected}",
            i[0].time
        );
        // Only the destination is sampled.
        assert_eq!(count(p, op::SAMPLE), 1);
    }
    assert_eq!(count(&frames[switch + ticks + 1].0, op::INERTIALIZE), 0);
}

#[test]
fn an_inertialized_switch_is_as_smooth_as_the_clips_and_a_plain_switch_is_not() {
    let switch = 20;
    let smooth = run(&controller("inertialize", 0.25), 60, switch as u64);
    let plain = run(&controller("crossfade", 0.0), 60, switch as u64);
    let per_tick = (2..switch)
        .map(|t| jump(&smooth[t].1, &smooth[t - 1].1))
        .fold(0.0, f32::max);
    let at_switch = jump(&smooth[switch].1, &smooth[switch - 1].1);
    let popped = jump(&plain[switch].1, &plain[switch - 1].1);
    assert!(
        at_switch <= 1.5 * per_tick + 1e-4,
        "inertialized switch turns a joint {at_switch} rad in one tick; the clip at most {per_tick}"
    );
    assert!(
        popped > 3.0 * per_tick,
        "the plain switch should pop ({popped} rad vs {per_tick}): the test could not fail"
    );
    // Once the decay is over, the pose is the plain destination's.
    for t in switch + 16..60 {
        assert_eq!(smooth[t].0, plain[t].0, "tick {t}");
        assert_eq!(smooth[t].1, plain[t].1, "tick {t}");
    }
}

#[test]
fn a_reset_drops_the_offset_at_once() {
    let ctl = controller("inertialize", 0.5);
    let (mut s, mut scratch, mut out) = (ctl.spawn(0).unwrap(), ctl.scratch(), ctl.output());
    ctl.set_input(&mut s, "fast", Value::Bool(true)).unwrap();
    ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
    assert!(s.inertia.active);
    ctl.reset_inertia(&mut s);
    assert!(!s.inertia.active);
    assert!(throng_control::dump::dump(&ctl, &s).contains("running"));
}

#[test]
fn inertialize_is_refused_in_a_layer_region() {
    let package = support::character().clone();
    let src = support::CROWD_TREE.replace(
        "id = \"wave_start\"",
        "id = \"wave_start\"\nblend = \"inertialize\"",
    );
    let err = tree::load(&src, "crowd.toml", &package, 0).unwrap_err();
    assert!(err.to_string().contains("base region only"), "{err}");
}

#[test]
fn an_inertialization_longer_than_a_minute_is_refused_at_load_and_a_crossfade_is_not() {
    let package = support::character().clone();
    let load = |blend, duration| tree::load(&tree_source(blend, duration), "g.toml", &package, 0);
    assert!(load("inertialize", 60.0).is_ok());
    let e = load("inertialize", 60.5).expect_err("a 60.5 s decay");
    assert_eq!(e.key, "regions[0].transitions[0].duration", "{e}");
    assert!(e.to_string().contains("60 seconds"), "{e}");
    assert!(load("crossfade", 600.0).is_ok());
}

#[test]
fn a_tick_rate_above_10_khz_is_refused_because_a_capture_spans_one_tick() {
    let package = support::character().clone();
    let tree = || tree::load(&tree_source("inertialize", 0.3), "g.toml", &package, 0).unwrap();
    assert!(Controller::new(tree(), package.clone(), 10_000.0, 16).is_ok());
    let e = Controller::new(tree(), package.clone(), 10_001.0, 16).expect_err("10001 Hz");
    assert!(e.to_string().contains("(0, 10000] Hz"), "{e}");
}

#[test]
fn a_tick_rate_of_zero_or_below_is_out_of_range_and_nan_is_not_finite() {
    let package = support::character().clone();
    let tree = || tree::load(&tree_source("inertialize", 0.3), "g.toml", &package, 0).unwrap();
    for hz in [0.0, -1.0] {
        let e =
            Controller::new(tree(), package.clone(), hz, 16).expect_err("a rate of 0 Hz or less");
        assert!(
            matches!(
                e,
                PlayerError::OutOfRange {
                    what: "tick rate",
                    value,
                    range: "(0, 10000] Hz",
                } if value == hz
            ),
            "{hz} Hz: {e:?}"
        );
        assert!(e.to_string().contains("(0, 10000] Hz"), "{e}");
    }
    let e = Controller::new(tree(), package.clone(), f64::NAN, 16).expect_err("a NaN rate");
    assert!(
        matches!(e, PlayerError::NotFinite { what: "tick rate", value } if value.is_nan()),
        "{e:?}"
    );
    assert!(
        Controller::new(tree(), package.clone(), 0.001, 16).is_ok(),
        "any positive rate up to 10 kHz is accepted"
    );
}
