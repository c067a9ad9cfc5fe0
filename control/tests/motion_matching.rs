//! The `motion_matching` producer on the tick (docs/motion-matching.md, "On the tick"): what it
//! plays when asked to stand, walk and turn; its warping bounds; determinism; load errors.

mod support;

use throng_control::instance::Controller;
use throng_control::tree::{self, Value};

/// The clip name the base region's leaf plays now.
fn playing(ctl: &Controller, s: &throng_control::instance::InstanceState) -> String {
    let rs = &s.regions[0];
    let slots = ctl.tree.regions[0].slots as usize;
    let clip = s.players[rs.bank as usize * slots].clip;
    ctl.package.clips[clip as usize].name.clone()
}

fn yaw(q: glam::Quat) -> f32 {
    2.0 * q.y.atan2(q.w)
}

#[test]
fn an_agent_stands_walks_when_asked_and_stands_again() {
    let ctl = support::locomotion(30.0);
    let (mut s, mut scratch, mut out) = (ctl.spawn(0).unwrap(), ctl.scratch(), ctl.output());
    let mut run = |speed: f64, ticks: u64, s: &mut _| {
        let (mut forward, mut queries, mut switches) = (0.0f32, 0, 0);
        for _ in 0..ticks {
            ctl.set_input(s, "velocity_z", Value::Float(speed)).unwrap();
            ctl.tick(s, &mut scratch, &mut out).unwrap();
            forward += out.root_motion.0.z;
            if let Some(q) = &out.query {
                queries += 1;
                switches += q.switched as u32;
                assert_eq!(q.start.is_some(), q.found.is_some() || q.start.is_none());
            }
        }
        (forward, queries, switches)
    };
    let (moved, queries, _) = run(0.0, 30, &mut s);
    assert_eq!(playing(&ctl, &s), "idle");
    assert!(moved.abs() < 0.01, "standing moved {moved} m");
    // Queries on the first tick and every 6 after (staggered), not every tick.
    assert!((5..=8).contains(&queries), "{queries} queries in 30 ticks");
    let (moved, _, switches) = run(1.4, 60, &mut s);
    assert!(switches >= 1);
    assert_eq!(playing(&ctl, &s), "walk");
    assert!(moved > 1.4 * 2.0 * 0.6, "walking 2 s moved {moved} m");
    let (_, _, switches) = run(0.0, 45, &mut s);
    assert!(switches >= 1);
    assert_eq!(playing(&ctl, &s), "idle");
    assert!(s.inertia.active || s.inertia.duration > 0.0);
}

#[test]
fn a_desired_turn_turns_the_root_motion_within_its_bound() {
    let ctl = support::locomotion(30.0);
    let tree::Producer::Matching(m) = &ctl.tree.regions[0].states[0].producer else {
        panic!("the locomotion tree's state matches");
    };
    let bound = (m.warp_turn / 30.0) as f32;
    let (mut s, mut scratch, mut out) = (ctl.spawn(0).unwrap(), ctl.scratch(), ctl.output());
    let mut turned = 0.0f32;
    for _ in 0..60 {
        ctl.set_input(&mut s, "velocity_z", Value::Float(1.4))
            .unwrap();
        ctl.set_input(&mut s, "turn", Value::Float(1.0)).unwrap();
        ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
        let turn = yaw(out.root_motion.1);
        // The database's clips walk straight: the turn is the warp's, within its bound.
        assert!(
            turn.abs() <= bound + 0.01,
            "{turn} rad in one tick, bound {bound}"
        );
        turned += turn;
    }
    assert!(
        turned > 0.5,
        "turned {turned} rad in 2 s asking for 1 rad each tick"
    );
}

/// The digest of 200 motion-matched agents over 150 scripted ticks at 30 Hz (events, root
/// motion, programs), pinned when the producer was written: a change means the selections
/// changed.
const GOLDEN: &str = "706035e431f24b07";

#[test]
fn a_motion_matched_crowd_is_the_same_on_one_and_two_threads_and_matches_its_golden_hash() {
    let ctl = support::locomotion(30.0);
    let one = support::crowd_hash(&ctl, support::matched_script, (1, 200, 150));
    let two = support::crowd_hash(&ctl, support::matched_script, (2, 200, 150));
    assert_eq!(one, two);
    assert_eq!(format!("{one:016x}"), GOLDEN);
}

fn load_error(edit: impl Fn(&str) -> String) -> String {
    let source = edit(support::LOCOMOTION_TREE);
    tree::load(&source, "edited.toml", support::matched_character(), 0)
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_motion_matching_states_are_refused_with_the_line_and_what_to_do() {
    let e = load_error(|s| s.replace("database = 0", "database = 3"));
    assert!(
        e.contains("1 motion database") && e.contains("throng motion-database"),
        "{e}"
    );
    let e = load_error(|s| s.replace("every = 6", "every = 0"));
    assert!(e.contains("every") && e.contains("edited.toml"), "{e}");
    let e = load_error(|s| s.replace("warp_speed = 0.5", "warp_speed = 1.5"));
    assert!(e.contains("warp_speed"), "{e}");
    let e = load_error(|s| s.replace("departure = 0.5", "departure = 0.5\ntags = [\"jog\"]"));
    assert!(e.contains("'jog'") && e.contains("idle"), "{e}");
    let e = load_error(|s| s.replace("turn = \"turn\"", "turn = \"heading\""));
    assert!(e.contains("heading"), "{e}");
    // Only the base region moves the character.
    let layered = format!(
        "{}\n[[regions]]\nname = \"upper\"\nblend = \"override\"\ninitial = \"m\"\n[[regions.states]]\nname = \"m\"\n[regions.states.motion_matching]\ndatabase = 0\nvelocity_x = \"velocity_x\"\nvelocity_z = \"velocity_z\"\nturn = \"turn\"\n",
        support::LOCOMOTION_TREE
    );
    let e = tree::load(&layered, "layered.toml", support::matched_character(), 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("only the base region"), "{e}");
    // A package without a database.
    let e = tree::load(support::LOCOMOTION_TREE, "l.toml", support::character(), 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("0 motion database"), "{e}");
}
