//! The trace ring and the op provenance of dumps (docs/state-tree.md, "The trace ring",
//! "Programs and the crowd").

mod support;

use throng_control::dump::dump;
use throng_control::trace::{clause_text, Trace};
use throng_control::tree::Value;

#[test]
fn the_ring_keeps_the_last_ticks_oldest_first_as_the_ticks_produced_them() {
    let ctl = support::crowd(60.0);
    let mut s = ctl.spawn(0).unwrap();
    let (mut scratch, mut out) = (ctl.scratch(), ctl.output());
    let mut trace = Trace::new(&ctl, 5);
    let mut all = Vec::new();
    for tick in 0..300u64 {
        // Walk, then sprint from tick 250: the sprint_start transition fires on tick 251.
        let speed = if tick < 250 { 1.4 } else { 5.0 };
        ctl.set_input(&mut s, "speed", Value::Float(speed)).unwrap();
        ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
        trace.push(&s, &out);
        let mut one = Trace::new(&ctl, 1);
        one.push(&s, &out);
        all.push(one.entries().next().unwrap().clone());
        if tick == 251 {
            let sprint: Vec<_> = trace.entries().filter(|e| !e.taken.is_empty()).collect();
            assert_eq!(sprint.len(), 1);
            assert_eq!(sprint[0].tick, 251);
            let t = sprint[0].taken[0];
            let tr = &ctl.tree.regions[t.region as usize].transitions[t.transition as usize];
            assert_eq!(tr.id, "sprint_start");
            assert_eq!(
                clause_text(&ctl, &tr.when[0], &sprint[0].inputs),
                "speed >= 4.2 (speed = 5.0)"
            );
        }
    }
    assert_eq!(trace.len(), 5);
    let kept: Vec<_> = trace.entries().cloned().collect();
    assert_eq!(kept, all[295..]);
    assert_eq!(
        kept.iter().map(|e| e.tick).collect::<Vec<_>>(),
        [296, 297, 298, 299, 300]
    );
    assert!(all.iter().any(|e| !e.events.is_empty()), "no events traced");
}

/// The line of `key = "value"` in the crowd tree (1-based).
fn line_of(key_value: &str) -> usize {
    support::CROWD_TREE
        .lines()
        .position(|l| l.trim() == key_value)
        .unwrap()
        + 1
}

#[test]
fn a_dump_maps_every_op_to_its_region_state_and_node_and_lists_the_skipped_states() {
    let ctl = support::crowd(60.0);
    let mut s = ctl.spawn(0).unwrap();
    let (mut scratch, mut out) = (ctl.scratch(), ctl.output());
    // Between walk and run, waving: two blend points, an override and the breathing additive.
    ctl.set_input(&mut s, "speed", Value::Float(3.0)).unwrap();
    ctl.set_input(&mut s, "wave", Value::Bool(true)).unwrap();
    for _ in 0..60 {
        ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
    }
    let text = dump(&ctl, &s);
    let program: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("program:"))
        .skip(1)
        .take_while(|l| !l.starts_with("skipped"))
        .collect();
    assert!(program.iter().all(|l| l.contains(" <- ")), "{text}");
    let locomotion = format!(
        "region 'locomotion' (line {})",
        line_of("name = \"locomotion\"")
    );
    let moving = format!("state 'move' (line {})", line_of("name = \"move\""));
    for (clip, point) in [
        ("walk", "blend1d point 1 (at 1.4)"),
        ("run", "blend1d point 2 (at 3.5)"),
    ] {
        assert!(
            program
                .iter()
                .any(|l| l.contains(&format!("sample '{clip}'"))
                    && l.contains(&format!("<- {locomotion}, {moving}, {point}"))),
            "{text}"
        );
    }
    let waving = format!(
        "state 'waving' (line {}), its clip",
        line_of("name = \"waving\"")
    );
    assert!(
        program
            .iter()
            .any(|l| l.contains("sample 'wave'") && l.contains(&waving)),
        "{text}"
    );
    assert!(
        program
            .iter()
            .any(|l| l.contains("the additive reference (first sample) of 'breathe'")),
        "{text}"
    );
    assert!(
        program
            .last()
            .unwrap()
            .ends_with("<- the instance (after every region)"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "skipped in 'locomotion' (inactive states): 'sprint' (line {})",
            line_of("name = \"sprint\"")
        )),
        "{text}"
    );
    assert!(!text.contains("skipped in 'upper_body'"), "{text}");
}
