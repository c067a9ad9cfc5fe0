//! Rig controls (issue 12): priority order, each control reading the one before, blend weights,
//! and disabling a control clears its retained state.

mod ik_support;

use glam::{Quat, Vec3};
use ik_support::Posed;
use throng_cpu_ref::ik::{
    solve_ccd, update_spring, Ccd, Chain, Control, Controls, IkResult, IkStatus, Solver, Spring,
    SpringState,
};
use throng_cpu_ref::Trs;

fn arm() -> (Posed, Vec<usize>) {
    let p = Posed::chain(
        Trs::IDENTITY,
        &[Vec3::new(0.3, 0.0, 0.0); 3],
        &[Quat::IDENTITY; 4],
    );
    (p, vec![0, 1, 2, 3])
}

fn blank() -> [IkResult; 3] {
    [IkResult {
        status: IkStatus::Degenerate,
        position_error: f32::NAN,
        angle_error: 0.0,
        iterations: 0,
    }; 3]
}

#[test]
fn controls_run_in_priority_order_each_over_the_last() {
    let (p, joints) = arm();
    let (a, b) = (Vec3::new(0.4, 0.4, 0.0), Vec3::new(0.2, -0.5, 0.3));
    let chain = Chain::new(&joints).unwrap();
    for (first, second) in [(a, b), (b, a)] {
        // Listed out of order: priority decides.
        let mut controls = Controls::new(vec![
            Control::new(2, 1.0, Solver::Ccd(chain, Ccd::new(second))),
            Control::new(1, 1.0, Solver::Ccd(chain, Ccd::new(first))),
        ]);
        let mut q = p.clone();
        let mut results = blank();
        controls
            .update(
                &q.skeleton,
                &mut q.local,
                &mut q.component,
                1.0 / 60.0,
                &mut results,
            )
            .unwrap();
        assert!(
            (q.at(3) - second).length() <= 1e-3 * 0.9 * 1.001,
            "the later control wins: tip {}",
            q.at(3)
        );
        assert_eq!(results[0].status, IkStatus::Reached);
        assert_eq!(results[1].status, IkStatus::Reached);
        // The second read the first's output: solving the second alone from that pose matches.
        let mut r = p.clone();
        solve_ccd(
            &r.skeleton,
            &mut r.local,
            &mut r.component,
            &joints,
            &Ccd::new(first),
        )
        .unwrap();
        solve_ccd(
            &r.skeleton,
            &mut r.local,
            &mut r.component,
            &joints,
            &Ccd::new(second),
        )
        .unwrap();
        assert_eq!(r.local, q.local);
    }
}

#[test]
fn a_control_blends_by_its_weight_and_a_disabled_one_changes_nothing() {
    let (p, joints) = arm();
    let target = Vec3::new(0.3, 0.5, 0.1);
    let chain = Chain::new(&joints).unwrap();
    let mut controls = Controls::new(vec![Control::new(
        0,
        0.5,
        Solver::Ccd(chain, Ccd::new(target)),
    )]);
    let mut q = p.clone();
    controls
        .update(
            &q.skeleton,
            &mut q.local,
            &mut q.component,
            0.0,
            &mut blank(),
        )
        .unwrap();
    let mut r = p.clone();
    solve_ccd(
        &r.skeleton,
        &mut r.local,
        &mut r.component,
        &joints,
        &Ccd {
            weight: 0.5,
            ..Ccd::new(target)
        },
    )
    .unwrap();
    assert_eq!(q.local, r.local);
    assert_ne!(q.local, p.local);

    controls.set_enabled(0, false);
    let mut s = p.clone();
    controls
        .update(
            &s.skeleton,
            &mut s.local,
            &mut s.component,
            0.0,
            &mut blank(),
        )
        .unwrap();
    assert_eq!(s.local, p.local);
}

#[test]
fn disabling_a_spring_clears_its_state_so_it_restarts_from_the_animated_pose() {
    let (p, joints) = arm();
    let chain = Chain::new(&joints).unwrap();
    let spring = Spring::new(40.0, 1.0, Vec3::new(0.0, -9.81, 0.0));
    let mut controls = Controls::new(vec![Control::new(
        0,
        1.0,
        Solver::Spring(chain, spring, Box::default()),
    )]);
    for _ in 0..30 {
        let mut q = p.clone();
        controls
            .update(
                &q.skeleton,
                &mut q.local,
                &mut q.component,
                1.0 / 60.0,
                &mut blank(),
            )
            .unwrap();
    }
    let live = |c: &Controls| match &c.get(0).unwrap().solver {
        Solver::Spring(_, _, s) => s.live,
        _ => unreachable!(),
    };
    assert!(live(&controls));
    controls.set_enabled(0, false);
    assert!(!live(&controls), "disabling keeps the simulation");
    controls.set_enabled(0, true);
    let mut q = p.clone();
    controls
        .update(
            &q.skeleton,
            &mut q.local,
            &mut q.component,
            1.0 / 60.0,
            &mut blank(),
        )
        .unwrap();
    let mut r = p.clone();
    let mut fresh = SpringState::default();
    update_spring(
        &r.skeleton,
        &mut r.local,
        &mut r.component,
        &joints,
        &spring,
        &mut fresh,
        1.0 / 60.0,
    )
    .unwrap();
    assert_eq!(
        q.local, r.local,
        "re-enabled, the spring did not start over"
    );
}

#[test]
fn a_bad_weight_or_short_results_are_refused() {
    let (mut p, joints) = arm();
    let chain = Chain::new(&joints).unwrap();
    let mut controls = Controls::new(vec![Control::new(
        0,
        1.5,
        Solver::Ccd(chain, Ccd::new(Vec3::X)),
    )]);
    assert!(controls
        .update(
            &p.skeleton,
            &mut p.local,
            &mut p.component,
            0.0,
            &mut blank()
        )
        .is_err());
    assert!(controls
        .update(&p.skeleton, &mut p.local, &mut p.component, 0.0, &mut [])
        .is_err());
    assert!(Chain::new(&[0; 40]).is_err());
}
