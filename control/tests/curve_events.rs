//! Curves in control (docs/state-tree.md, "Curve events" and "Curve selections"): a crowd of the
//! generated character walking fires each foot's contact events where its contact curve crosses
//! the threshold, checked against the curve sampled at the walk player's time; the same events
//! on one and two threads; a layer's curve selection reaches its program; bad curve events and
//! selections are load errors naming the line and key.

mod support;

use support::{character, CROWD_TREE};
use throng_control::crowd::Crowd;
use throng_control::events::{Event, EventKind};
use throng_control::instance::Controller;
use throng_control::tree::{self, TreeErrorKind, Value};
use throng_cpu_ref::program::op;
use throng_cpu_ref::scalar::sample_track;

const EVENTS: &str = r#"
[curve_events.left_down]
curve = "contact/foot_l"
above = 0.5

[curve_events.left_up]
curve = "contact/foot_l"
below = 0.5

[curve_events.right_down]
curve = "contact/foot_r"
above = 0.5
"#;

fn controller() -> Controller {
    let package = character().clone();
    let source = format!("{CROWD_TREE}{EVENTS}");
    let tree = tree::load(&source, "crowd.toml", &package, 0).unwrap();
    Controller::new(tree, package, 60.0, 64).unwrap()
}

/// `n` members walking at 1.4 m/s (the blend space's walk point: the walk clip alone), each
/// `k`-th spawned `k` ticks later so their phases differ; 150 ticks (2.5 walk cycles). Returns
/// the events of each tick and, per tick and member, the walk player's clip time from its
/// program.
fn walk(ctl: &Controller, n: usize) -> (Vec<Vec<Event>>, Vec<Vec<Option<f32>>>) {
    let mut crowd = Crowd::new(ctl, 0).unwrap();
    let walk = ctl.package.find_clip("walk").unwrap() as u32;
    let speed = ctl.tree.input("speed").unwrap();
    let (mut events, mut times) = (Vec::new(), Vec::new());
    for tick in 0..150 {
        if crowd.instances.len() < n {
            let id = crowd.instances.len() as u32;
            crowd.add(ctl, id).unwrap();
        }
        for s in crowd.instances.iter_mut() {
            ctl.set_input_at(s, speed, Value::Float(1.4)).unwrap();
        }
        crowd.tick(ctl);
        assert_eq!(crowd.failures().count(), 0, "tick {tick}");
        events.push(crowd.events().copied().collect());
        times.push(
            (0..crowd.instances.len())
                .map(|i| {
                    let (ops, _) = crowd.programs.program(i).unwrap();
                    let sample = ops.iter().find(|o| o.code == op::SAMPLE && o.a == walk);
                    sample.map(|o| o.time)
                })
                .collect(),
        );
    }
    (events, times)
}

#[test]
fn contact_events_fire_where_the_walk_curves_cross_their_threshold() {
    let ctl = controller();
    let package = &ctl.package;
    let index = package.find_clip("walk").unwrap();
    let clip = &package.clips[index];
    let tracks = package.curves.tracks_of(index as u32);
    let (events, times) = walk(&ctl, 8);
    let (mut fired, mut checked) = (0, 0);
    for tick in 1..events.len() {
        for (i, (now, before)) in times[tick].iter().zip(&times[tick - 1]).enumerate() {
            // Only members walking on both ticks (the walk clip alone once past the fade-in from
            // spawn): their curve is the walk's track at the walk player's time.
            let (Some(now), Some(before)) = (now, before) else {
                continue;
            };
            if tick < 40 + i {
                continue;
            }
            for (k, e) in ctl.tree.curve_events.iter().enumerate() {
                let track = &tracks[e.channel as usize].values;
                let (a, b) = (
                    sample_track(clip, track, *before),
                    sample_track(clip, track, *now),
                );
                let want = if e.rising {
                    a < e.threshold && b >= e.threshold
                } else {
                    a >= e.threshold && b < e.threshold
                };
                let got = events[tick]
                    .iter()
                    .any(|ev| ev.instance == i as u32 && ev.kind == EventKind::Curve(k as u32));
                assert_eq!(
                    got, want,
                    "member {i}, tick {tick}, '{}': {a} -> {b}",
                    e.name
                );
                fired += usize::from(got);
                checked += 1;
            }
        }
    }
    assert!(
        checked > 2000 && fired >= 30,
        "{fired} fired of {checked} checked"
    );
    // Every curve event is stamped as the module says, and named.
    let e = events
        .iter()
        .flatten()
        .find(|e| matches!(e.kind, EventKind::Curve(_)));
    let e = e.expect("a curve event");
    assert_eq!(
        (e.clip, e.activation, e.cycle, e.time),
        (u32::MAX, 0, 0, 0.0)
    );
    assert!(ctl
        .event_name(e.clip, e.kind)
        .is_some_and(|n| n.ends_with("_down") || n.ends_with("_up")));
}

#[test]
fn curve_events_are_the_same_on_one_and_two_threads() {
    let ctl = controller();
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| walk(&ctl, 600).0)
    };
    let (one, two) = (run(1), run(2));
    assert!(one
        .iter()
        .flatten()
        .any(|e| matches!(e.kind, EventKind::Curve(_))));
    assert_eq!(one, two);
}

#[test]
fn a_curve_event_naming_a_missing_curve_or_two_thresholds_is_a_load_error() {
    let package = character();
    let load =
        |events: &str| tree::load(&format!("{CROWD_TREE}{events}"), "crowd.toml", package, 0);
    let err = load("\n[curve_events.blink]\ncurve = \"blink\"\nabove = 0.5\n").unwrap_err();
    assert!(
        matches!(&err.kind, TreeErrorKind::UnknownCurve { curve, known }
            if curve == "blink"
                && known == "contact/foot_l, contact/foot_r, morph/Body/0, morph/Body/1"),
        "{err}"
    );
    assert_eq!(err.key, "curve_events.blink.curve");
    let line = CROWD_TREE.lines().count() + 3;
    assert_eq!(err.line, line, "{err}");
    let err = load("\n[curve_events.both]\ncurve = \"contact/foot_l\"\nabove = 0.5\nbelow = 0.2\n")
        .unwrap_err();
    assert!(err.to_string().contains("exactly one of `above`"), "{err}");
}

#[test]
fn a_layers_curve_selection_joins_the_package_and_its_program() {
    let package = character().clone();
    let source = CROWD_TREE
        .replace(
            "# Upper body: wave",
            "[curve_selections.left_foot]\ncurves = { \"contact/foot_l\" = 0.5 }\n\n# Upper body: wave",
        )
        .replace("mask = \"right_arm\"\n", "mask = \"right_arm\"\ncurves = \"left_foot\"\n");
    assert!(source.contains("curves = \"left_foot\""));
    let tree = tree::load(&source, "crowd.toml", &package, 0).unwrap();
    assert_eq!(tree.regions[1].curves, Some(0));
    let ctl = Controller::new(tree, package, 60.0, 64).unwrap();
    let selection = &ctl.package.curves.selections[0];
    assert_eq!(
        (selection.name.as_str(), &selection.weights[..]),
        ("left_foot", &[0.5, 0.0, 0.0, 0.0][..])
    );
    let mut crowd = Crowd::new(&ctl, 1).unwrap();
    let wave = ctl.tree.input("wave").unwrap();
    ctl.set_input_at(&mut crowd.instances[0], wave, Value::Bool(true))
        .unwrap();
    for _ in 0..30 {
        crowd.tick(&ctl);
    }
    let (ops, _) = crowd.programs.program(0).unwrap();
    let layer = ops
        .iter()
        .find(|o| o.code == op::OVERRIDE)
        .expect("the waving layer");
    assert_eq!(layer.d, 1, "selection 0 of the package");
    let additive = ops
        .iter()
        .find(|o| o.code == op::ADDITIVE)
        .expect("breathing");
    assert_eq!(additive.d, 0, "no selection: every curve");
}

#[test]
fn an_unknown_curve_selection_or_curve_in_one_is_a_load_error() {
    let package = character();
    let with_layer = CROWD_TREE.replace(
        "mask = \"right_arm\"\n",
        "mask = \"right_arm\"\ncurves = \"face\"\n",
    );
    let err = tree::load(&with_layer, "crowd.toml", package, 0).unwrap_err();
    assert!(
        matches!(&err.kind, TreeErrorKind::UnknownCurveSelection(s) if s == "face"),
        "{err}"
    );
    assert_eq!(err.key, "regions[1].curves");
    let selection = format!("{CROWD_TREE}\n[curve_selections.face]\ncurves = {{ blink = 1.0 }}\n");
    let err = tree::load(&selection, "crowd.toml", package, 0).unwrap_err();
    assert!(
        matches!(&err.kind, TreeErrorKind::UnknownCurve { curve, .. } if curve == "blink"),
        "{err}"
    );
    assert_eq!(err.key, "curve_selections.face.curves");
}
