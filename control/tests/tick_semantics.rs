//! DESIGN.md §5, the state tree tick: one test per sentence, on synthetic trees and clips.

mod support;

use throng_control::instance::{Change, Controller, InputError, InstanceState, Source, TickError};
use throng_control::program::compile;
use throng_control::tree::{self, Value, FROZEN_SAMPLES};
use throng_cpu_ref::PoseOp;

const TREE: &str = r#"version = 1

[inputs.go]
type = "int"

[inputs.x]
type = "float"

[[regions]]
name = "main"
initial = "a"

[[regions.states]]
name = "a"
initial = "a1"

[[regions.states]]
name = "a1"
parent = "a"
clip = "busy"

[[regions.states]]
name = "b"
initial = "b1"

[[regions.states]]
name = "b1"
parent = "b"
clip = "quiet"

[[regions.states]]
name = "c"
clip = "quiet"

# Declared on the leaf with the higher priority, but the ancestor's transition comes first.
[[regions.transitions]]
id = "a1_c"
from = "a1"
to = "c"
priority = 10
when = [{ input = "go", op = "==", value = 1 }]

[[regions.transitions]]
id = "a_b"
from = "a"
to = "b"
when = [{ input = "go", op = ">=", value = 1 }]

[[regions.transitions]]
id = "b_c"
from = "b1"
to = "c"
when = [{ input = "go", op = ">=", value = 1 }]

[[regions.transitions]]
id = "c_a"
from = "c"
to = "a"
when = [{ input = "go", op = "==", value = 0 }]

[[regions]]
name = "side"
blend = "override"
initial = "s0"

[[regions.states]]
name = "s0"

[[regions.states]]
name = "s1"
clip = "quiet"

[[regions.states]]
name = "s2"
clip = "quiet"

[[regions.transitions]]
id = "low"
from = "s0"
to = "s1"
priority = 1
when = [{ input = "go", op = ">=", value = 1 }]

[[regions.transitions]]
id = "high"
from = "s0"
to = "s2"
priority = 2
when = [{ input = "go", op = ">=", value = 1 }]
"#;

/// `busy` delivers 100 events a second; `quiet` none.
fn controller(event_capacity: usize) -> Controller {
    let events: Vec<(String, f64)> = (0..100)
        .map(|i| (format!("e{i}"), i as f64 * 0.01))
        .collect();
    let events: Vec<(&str, f64, bool)> = events
        .iter()
        .map(|(n, t)| (n.as_str(), *t, false))
        .collect();
    let package = support::package(vec![
        support::clip("busy", 1.0, &events, &[]),
        support::clip("quiet", 1.0, &[], &[]),
    ]);
    let tree = tree::load(TREE, "t.toml", &package, 0).unwrap();
    Controller::new(tree, package, 10.0, event_capacity).unwrap()
}

fn path(ctl: &Controller, s: &InstanceState, r: usize) -> Vec<String> {
    let rs = &s.regions[r];
    rs.path[..rs.depth as usize]
        .iter()
        .map(|&p| ctl.tree.regions[r].states[p as usize].name.clone())
        .collect()
}

#[test]
fn exits_run_leaf_up_and_entries_root_down_once_each() {
    let ctl = controller(64);
    let (mut s, mut scratch, mut out) = (ctl.spawn(0).unwrap(), ctl.scratch(), ctl.output());
    ctl.set_input(&mut s, "go", Value::Int(1)).unwrap();
    ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
    let region0: Vec<(Change, String)> = out
        .changes
        .iter()
        .filter(|c| c.region == 0)
        .map(|c| {
            (
                c.change,
                ctl.tree.regions[0].states[c.state as usize].name.clone(),
            )
        })
        .collect();
    let expected = [
        (Change::Exit, "a1"),
        (Change::Exit, "a"),
        (Change::Enter, "b"),
        (Change::Enter, "b1"),
    ];
    assert_eq!(region0, expected.map(|(c, n)| (c, n.to_string())));
    // Ancestor first: `a_b` (on `a`, priority 0) beat `a1_c` (on `a1`, priority 10).
    assert_eq!(path(&ctl, &s, 0), ["b", "b1"]);
}

#[test]
fn at_most_one_transition_per_region_per_tick_by_priority() {
    let ctl = controller(64);
    let (mut s, mut scratch, mut out) = (ctl.spawn(0).unwrap(), ctl.scratch(), ctl.output());
    ctl.set_input(&mut s, "go", Value::Int(1)).unwrap();
    ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
    // `b_c` also holds now, but it waits for the next tick.
    assert_eq!(path(&ctl, &s, 0), ["b", "b1"]);
    // Both regions moved on the same tick, each once; `high` beat `low` by priority.
    assert_eq!(path(&ctl, &s, 1), ["s2"]);
    ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
    assert_eq!(path(&ctl, &s, 0), ["c"]);
    assert_eq!(
        out.changes.len(),
        3,
        "exit b1, exit b, enter c: {:?}",
        out.changes
    );
    ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
    assert!(out.changes.is_empty());
}

#[test]
fn each_participating_player_advances_exactly_once_per_tick() {
    // The crowd tree: a synced blend space (leader and followers), a crossfading override
    // layer and an additive layer.
    let ctl = support::crowd(60.0);
    let (mut s, mut scratch, mut out) = (ctl.spawn(0).unwrap(), ctl.scratch(), ctl.output());
    ctl.set_input(&mut s, "speed", Value::Float(2.0)).unwrap();
    for tick in 1..=50u64 {
        if tick == 10 {
            ctl.set_input(&mut s, "wave", Value::Bool(true)).unwrap();
        }
        ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
    }
    let names: Vec<(String, u64)> = s
        .players
        .iter()
        .filter(|p| p.activation != 0)
        .map(|p| (ctl.package.clips[p.clip as usize].name.clone(), p.ticks()))
        .collect();
    // Spawned players advanced on every one of the 50 ticks; the wave player on the 41 ticks
    // from its entry on tick 10 on.
    let expected = [
        ("idle", 50),
        ("walk", 50),
        ("run", 50),
        ("wave", 41),
        ("breathe", 50),
    ];
    assert_eq!(names, expected.map(|(n, t)| (n.to_string(), t)));
    // The synced followers sit at the leader's phase: walk leads at 2 m/s (heavier than run).
    let walk = s.players[1].clip_time();
    let run = s.players[2].clip_time();
    assert!(
        (walk / 1.0 - run / ctl.package.clips[2].duration).abs() < 1e-6,
        "walk {walk} run {run}"
    );
}

#[test]
fn an_overflowing_tick_is_rejected_and_leaves_the_instance_unchanged() {
    let ctl = controller(4);
    let (mut s, mut scratch, mut out) = (ctl.spawn(0).unwrap(), ctl.scratch(), ctl.output());
    ctl.set_input(&mut s, "x", Value::Float(0.5)).unwrap();
    let before = s.clone();
    // 0.1 s of `busy` crosses 10 events; the output holds 4.
    let e = ctl.tick(&mut s, &mut scratch, &mut out).unwrap_err();
    assert_eq!(
        e,
        TickError::Events(throng_control::events::Overflow { capacity: 4 })
    );
    assert_eq!(s, before);
    assert!(out.events.is_empty() && out.changes.is_empty());
    // With room, the same tick succeeds and delivers the ten events (0.01 .. 0.1] in order.
    let ctl = controller(16);
    let mut out = ctl.output();
    ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
    assert_eq!(out.events.len(), 10);
    assert!(out
        .events
        .events()
        .windows(2)
        .all(|w| w[0].time < w[1].time));
    assert_eq!(s.tick, 1);
}

#[test]
fn bad_inputs_are_rejected_and_change_nothing() {
    let ctl = controller(64);
    let mut s = ctl.spawn(0).unwrap();
    let before = s.clone();
    assert!(matches!(
        ctl.set_input(&mut s, "x", Value::Float(f64::NAN)),
        Err(InputError::NotFinite { .. })
    ));
    assert!(matches!(
        ctl.set_input(&mut s, "x", Value::Float(f64::INFINITY)),
        Err(InputError::NotFinite { .. })
    ));
    assert_eq!(
        ctl.set_input(&mut s, "nope", Value::Float(1.0)),
        Err(InputError::Unknown("nope".into()))
    );
    assert!(matches!(
        ctl.set_input(&mut s, "go", Value::Bool(true)),
        Err(InputError::Type { .. })
    ));
    assert_eq!(s, before);
}

#[test]
fn inputs_set_by_index_are_checked_and_clamped_as_by_name() {
    let ctl = controller(64);
    let (mut by_name, mut by_index) = (ctl.spawn(0).unwrap(), ctl.spawn(0).unwrap());
    let x = ctl.tree.input("x").expect("the tree declares x");
    for v in [
        Value::Float(-3.0),
        Value::Float(0.25),
        Value::Int(7),
        Value::Float(1e9),
    ] {
        ctl.set_input(&mut by_name, "x", v).unwrap();
        ctl.set_input_at(&mut by_index, x, v).unwrap();
        assert_eq!(by_index, by_name, "{v:?}");
    }
    let before = by_index.clone();
    assert!(matches!(
        ctl.set_input_at(&mut by_index, x, Value::Float(f64::NAN)),
        Err(InputError::NotFinite { .. })
    ));
    let go = ctl.tree.input("go").expect("the tree declares go");
    assert!(matches!(
        ctl.set_input_at(&mut by_index, go, Value::Float(1.0)),
        Err(InputError::Type { .. })
    ));
    let missing = ctl.tree.inputs.len() as u16;
    assert_eq!(
        ctl.set_input_at(&mut by_index, missing, Value::Float(1.0)),
        Err(InputError::NoIndex {
            input: missing,
            inputs: ctl.tree.inputs.len(),
        })
    );
    // A state of another tree, with fewer inputs, is refused rather than indexed past its end.
    by_index.inputs.truncate(1);
    let last = ctl.tree.inputs.len() as u16 - 1;
    assert!(matches!(
        ctl.set_input_at(&mut by_index, last, Value::Float(0.5)),
        Err(InputError::NoIndex { .. })
    ));
    by_index.inputs = before.inputs.clone();
    assert_eq!(by_index, before);
}

#[test]
fn a_storm_of_interruptions_stays_bounded() {
    let text = r#"version = 1
[inputs.go]
type = "bool"
[[regions]]
name = "main"
initial = "p"
[[regions.states]]
name = "p"
clip = "one"
[[regions.states]]
name = "q"
clip = "two"
[[regions.transitions]]
id = "p_q"
from = "p"
to = "q"
duration = 1.0
when = [{ input = "go", op = "==", value = true }]
[[regions.transitions]]
id = "q_p"
from = "q"
to = "p"
duration = 1.0
when = [{ input = "go", op = "==", value = false }]
"#;
    let package = support::package(vec![
        support::clip("one", 1.0, &[], &[]),
        support::clip("two", 0.7, &[], &[]),
    ]);
    let ctl = Controller::new(
        tree::load(text, "storm.toml", &package, 0).unwrap(),
        package,
        30.0,
        8,
    )
    .unwrap();
    let (mut s, mut scratch, mut out) = (ctl.spawn(0).unwrap(), ctl.scratch(), ctl.output());
    let limits = ctl.limits();
    let mut ops = vec![PoseOp::rest(0); limits.max_ops];
    let mut pool = vec![0.0; limits.max_weights];
    let mut weights = vec![0.0; ctl.tree.player_slots()];
    for tick in 0..200 {
        ctl.set_input(&mut s, "go", Value::Bool(tick % 2 == 0))
            .unwrap();
        ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
        let rs = &s.regions[0];
        if tick == 0 {
            // The first fade keeps the old leaf `p` (state 0, one player) playing as its source.
            assert_eq!(rs.source, Source::Live { state: 0, count: 1 });
            let source = &s.players[1 - rs.bank as usize];
            assert_eq!(
                (
                    ctl.package.clips[source.clip as usize].name.as_str(),
                    source.activation
                ),
                ("one", 1)
            );
        } else {
            let Source::Frozen { samples, len } = rs.source else {
                panic!("tick {tick}: {:?}", rs.source)
            };
            assert!(len as usize <= FROZEN_SAMPLES);
            let total: f32 = samples[..len as usize].iter().map(|x| x.weight).sum();
            assert!(
                (total - 1.0).abs() < 1e-4,
                "tick {tick}: the captured pose keeps its weight, {total}"
            );
        }
        let (n, m) = compile(&ctl, &s, &mut weights, &mut ops, &mut pool);
        assert!(n <= limits.max_ops && m <= limits.max_weights);
    }
    // Calm: the last fade completes and the frozen pose is dropped.
    for _ in 0..31 {
        ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
    }
    assert_eq!(s.regions[0].source, Source::None);
}

/// The undo log must cover every change a tick makes: transitions, fades, inertialization,
/// sync and player steps. Each tick of a crowd-tree instance first runs with room for no
/// event; where that fails the instance must be as it was, and the tick with room must then
/// agree with a twin that never failed.
#[test]
fn a_tick_that_fails_anywhere_leaves_the_instance_as_it_was() {
    let ctl = support::crowd(60.0);
    let mut tight = ctl.clone();
    tight.event_capacity = 0;
    let (mut s, mut twin) = (ctl.spawn(0).unwrap(), ctl.spawn(0).unwrap());
    let mut scratch = ctl.scratch();
    let (mut out, mut tight_out) = (ctl.output(), tight.output());
    let (mut failed, mut failed_blending) = (0, 0);
    for tick in 0..900u64 {
        // Through every gait and the sprint threshold, waving on and off.
        let speed = (tick % 300) as f64 / 50.0;
        let wave = (tick / 70).is_multiple_of(2);
        for x in [&mut s, &mut twin] {
            ctl.set_input(x, "speed", Value::Float(speed)).unwrap();
            ctl.set_input(x, "wave", Value::Bool(wave)).unwrap();
        }
        let before = s.clone();
        if tight.tick(&mut s, &mut scratch, &mut tight_out).is_err() {
            failed += 1;
            failed_blending += (before.inertia.active
                || before.regions.iter().any(|r| r.source != Source::None))
                as u32;
            assert_eq!(s, before, "tick {tick}");
            assert!(tight_out.events.is_empty() && tight_out.changes.is_empty());
            ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
        }
        ctl.tick(&mut twin, &mut scratch, &mut out).unwrap();
        assert_eq!(s, twin, "tick {tick}");
    }
    assert!(
        failed >= 30 && failed_blending >= 5,
        "{failed} ticks failed, {failed_blending} of them during a fade or inertialization"
    );
}
