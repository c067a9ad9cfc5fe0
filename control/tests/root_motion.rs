//! Root motion: per-tick deltas compose across loops to whole cycles, in both directions, and
//! none of the travel remains in the visual pose.

mod support;

use glam::{Quat, Vec3};
use throng_control::instance::Controller;
use throng_control::player::{ClipPlayer, PlayMode};
use throng_control::program::compile;
use throng_control::root_motion::{step_motion, step_motion_from, LastSample, Motion, IDENTITY};
use throng_control::tree;
use throng_cpu_ref::clip::compose_root_motion;
use throng_cpu_ref::{Assets, Evaluator, PoseOp};

fn walk_only(rate: f64) -> Controller {
    let text = format!(
        "version = 1\n[[regions]]\nname = \"feet\"\ninitial = \"walk\"\n[[regions.states]]\nname = \"walk\"\nclip = \"walk\"\nmode = \"loop\"\nrate = {rate:?}\n"
    );
    let package = support::character().clone();
    Controller::new(
        tree::load(&text, "walk.toml", &package, 0).unwrap(),
        package,
        60.0,
        16,
    )
    .unwrap()
}

fn power(m: Motion, n: usize) -> Motion {
    (0..n).fold(IDENTITY, |acc, _| compose_root_motion(acc, m))
}

fn assert_close(a: Motion, b: Motion, what: &str) {
    let tolerance = 1e-5 * b.0.length().max(1.0);
    assert!(
        (a.0 - b.0).length() < tolerance,
        "{what}: {:?} vs {:?}",
        a.0,
        b.0
    );
    let (qa, qb) = (glam::Vec4::from(a.1), glam::Vec4::from(b.1));
    assert!(
        (qa - qb).length().min((qa + qb).length()) < 1e-4,
        "{what}: {:?} vs {:?}",
        a.1,
        b.1
    );
}

/// Ten seconds of ticks at 60 Hz, composing each tick's root motion: the placement reached,
/// and the root joint's component position at every whole cycle.
fn run(ctl: &Controller) -> (Motion, Vec<Vec3>) {
    let (mut s, mut scratch, mut out) = (ctl.spawn(0).unwrap(), ctl.scratch(), ctl.output());
    let package = &ctl.package;
    let skeleton = &package.skeletons[0];
    let limits = ctl.limits();
    let mut evaluator = Evaluator::new(limits, skeleton.joint_count(), 0);
    let assets = Assets {
        skeleton,
        skeleton_index: 0,
        clips: &package.clips,
        skins: &[],
        masks: &ctl.tree.masks,
        curves: &throng_cpu_ref::scalar::NO_CURVES,
    };
    let mut ops = vec![PoseOp::rest(0); limits.max_ops];
    let mut pool = vec![0.0; limits.max_weights];
    let mut weights = vec![0.0; ctl.tree.player_slots()];
    let mut placement = IDENTITY;
    let mut roots = Vec::new();
    for tick in 1..=600 {
        ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
        placement = compose_root_motion(placement, out.root_motion);
        if tick % 60 == 0 {
            let (n, m) = compile(ctl, &s, &mut weights, &mut ops, &mut pool);
            let program = throng_cpu_ref::Program {
                ops: ops[..n].to_vec(),
                weights: pool[..m].to_vec(),
            };
            let program = throng_cpu_ref::Program {
                ops: program
                    .ops
                    .into_iter()
                    .filter(|o| o.code != throng_cpu_ref::program::op::PALETTE)
                    .collect(),
                ..program
            };
            evaluator.run(&program, &assets).unwrap();
            roots.push(evaluator.component()[0].translation.into());
        }
    }
    (placement, roots)
}

#[test]
fn ten_loops_of_walk_move_ten_cycles_forward_and_back() {
    let walk = &support::character().clips[support::character().find_clip("walk").unwrap()];
    let cycle = walk
        .root_motion
        .as_ref()
        .expect("walk carries root motion")
        .cycle();
    assert!(
        (cycle.0.length() - 1.4).abs() < 0.02,
        "one walk cycle travels 1.4 m: {:?}",
        cycle.0
    );

    let (forward, roots) = run(&walk_only(1.0));
    assert_close(forward, power(cycle, 10), "forward");
    let (backward, back_roots) = run(&walk_only(-1.0));
    let inverse = (cycle.1.inverse() * -cycle.0, cycle.1.inverse());
    assert_close(backward, power(inverse, 10), "backward");

    // The visual pose stays put: at every whole cycle the root joint is where it was after the
    // first, and nowhere near the 14 m travelled.
    for r in roots.iter().chain(&back_roots) {
        assert!((*r - roots[0]).length() < 1e-3, "{r:?} vs {:?}", roots[0]);
        assert!(Vec3::new(r.x, 0.0, r.z).length() < 0.2, "{r:?}");
    }
}

#[test]
fn a_long_tick_across_many_wraps_composes_whole_cycles() {
    let clip = support::with_motion(support::clip("m", 1.0, &[], &[]), 2.0, 0.3);
    let cycle = clip.root_motion.as_ref().unwrap().cycle();
    // 3.5 cycles in one tick from 0.25: 0.25 -> 1 (partial), two whole, 0 -> 0.75.
    let mut p = ClipPlayer::play(0, 1.0, PlayMode::Loop, 3.5, 1.0, 1).unwrap();
    p.seek(0.25).unwrap();
    let step = p.advance().unwrap();
    let got = step_motion(&step, &clip).unwrap();
    let r = |t: f32| (Vec3::new(0.0, 0.0, 2.0 * t), Quat::from_rotation_y(0.3 * t));
    let delta = |a: f32, b: f32| throng_cpu_ref::clip::root_motion_delta(r(a), r(b));
    let expected = compose_root_motion(
        compose_root_motion(delta(0.25, 1.0), power(cycle, 2)),
        delta(0.0, 0.75),
    );
    assert_close(got, expected, "long tick");
    // A ping-pong there and back is no motion at all.
    let mut q = ClipPlayer::play(0, 1.0, PlayMode::PingPong, 2.0, 1.0, 1).unwrap();
    let there_and_back = step_motion(&q.advance().unwrap(), &clip).unwrap();
    assert_close(there_and_back, IDENTITY, "ping-pong");
}

#[test]
fn a_slots_last_sample_gives_the_motion_a_fresh_sample_gives_bit_for_bit() {
    let clip = support::with_motion(support::clip("m", 1.0, &[], &[]), 2.0, 0.3);
    let bits = |(t, q): Motion| {
        (
            t.to_array().map(f32::to_bits),
            q.to_array().map(f32::to_bits),
        )
    };
    for mode in [PlayMode::Once, PlayMode::Loop, PlayMode::PingPong] {
        for rate in [0.7, -1.3, 2.5, 0.0] {
            let mut p = ClipPlayer::play(0, 1.0, mode, rate, 1.0 / 30.0, 1).unwrap();
            let mut last = LastSample::default();
            for tick in 0..200 {
                if tick % 37 == 0 {
                    p.seek(tick as f64 / 200.0).unwrap();
                }
                let step = p.advance().unwrap();
                let cached = step_motion_from(&step, &clip, 0, &mut last);
                let fresh = step_motion(&step, &clip);
                assert_eq!(
                    cached.map(bits),
                    fresh.map(bits),
                    "{mode:?} at rate {rate}, tick {tick}"
                );
            }
        }
    }
}
