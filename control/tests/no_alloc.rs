//! A steady-state crowd tick, and a traced tick, allocate nothing (its own test binary: the counting allocator
//! must not see other tests' threads).

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use throng_control::crowd::Crowd;
use throng_control::trace::Trace;
use throng_control::tree::Value;

struct Counting;
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn steady_state_crowd_ticks_allocate_nothing() {
    // The crowd tree with curve events on both feet's contact curves (evaluated every tick).
    let ctl = {
        let package = support::character().clone();
        let source = format!(
            "{}\n[curve_events.left_down]\ncurve = \"contact/foot_l\"\nabove = 0.5\n\n\
             [curve_events.right_up]\ncurve = \"contact/foot_r\"\nbelow = 0.5\n",
            support::CROWD_TREE
        );
        let tree = throng_control::tree::load(&source, "crowd.toml", &package, 0).unwrap();
        throng_control::instance::Controller::new(tree, package, 60.0, 64).unwrap()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut crowd = Crowd::new(&ctl, 600).unwrap();
    // Ticks run inside the pool: each `install` from outside would push a job into rayon's
    // injector, which allocates a block every 63 jobs (crossbeam-deque), not ours to avoid.
    let run = |ticks: std::ops::Range<u64>, crowd: &mut Crowd| {
        pool.install(|| {
            for tick in ticks.clone() {
                for (i, s) in crowd.instances.iter_mut().enumerate() {
                    let speed = ((i as u64 * 37 + tick) % 60) as f64 / 10.0;
                    ctl.set_input(s, "speed", Value::Float(speed)).unwrap();
                    ctl.set_input(
                        s,
                        "wave",
                        Value::Bool((i as u64 + tick / 20).is_multiple_of(3)),
                    )
                    .unwrap();
                }
                crowd.tick(&ctl);
            }
        })
    };
    run(0..30, &mut crowd);
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    run(30..90, &mut crowd);
    let made = ALLOCATIONS.load(Ordering::SeqCst) - before;
    assert_eq!(
        made, 0,
        "{made} allocations in 60 steady-state ticks of 600 instances"
    );

    // A traced instance: the ring's entries were sized when it was made.
    let mut s = ctl.spawn(0).unwrap();
    let (mut scratch, mut out) = (ctl.scratch(), ctl.output());
    let mut trace = Trace::new(&ctl, 16);
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    for tick in 0..600u64 {
        ctl.set_input(&mut s, "speed", Value::Float((tick % 300) as f64 / 50.0))
            .unwrap();
        ctl.set_input(&mut s, "wave", Value::Bool((tick / 70).is_multiple_of(2)))
            .unwrap();
        ctl.tick(&mut s, &mut scratch, &mut out).unwrap();
        trace.push(&s, &out);
    }
    let made = ALLOCATIONS.load(Ordering::SeqCst) - before;
    assert_eq!(made, 0, "{made} allocations in 600 traced ticks");

    // A motion-matched crowd: queries, switches and warping.
    let ctl = support::locomotion(30.0);
    let mut crowd = Crowd::new(&ctl, 300).unwrap();
    let run = |ticks: std::ops::Range<u64>, crowd: &mut Crowd| {
        pool.install(|| {
            for tick in ticks.clone() {
                support::matched_script(&ctl, crowd, tick);
                crowd.tick(&ctl);
            }
        })
    };
    run(0..30, &mut crowd);
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    run(30..120, &mut crowd);
    let made = ALLOCATIONS.load(Ordering::SeqCst) - before;
    assert_eq!(made, 0, "{made} allocations in 90 motion-matched ticks");
}
