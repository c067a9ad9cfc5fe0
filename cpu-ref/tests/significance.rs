//! The pose budget: the most significant instances are served within the budget, instances that
//! must run always are, and nobody waits longer than the minimum service rate allows.

use throng_cpu_ref::significance::{Claim, PoseBudget};

fn claims(n: usize) -> Vec<Claim> {
    (0..n)
        .map(|i| Claim {
            significance: 1000.0 / (1.0 + i as f32),
            joints: if i % 3 == 0 { 47 } else { 17 },
            must: false,
        })
        .collect()
}

#[test]
fn the_first_frame_serves_everyone_then_the_budget_goes_to_the_most_significant() {
    let claims = claims(300);
    let mut budget = PoseBudget::new();
    let first = budget.plan(&claims, 1000, 100);
    assert_eq!(first.served, 300, "never served: everyone runs once");
    assert_eq!(first.must, 300);
    let r = budget.plan(&claims, 1000, 100);
    assert!(r.spent <= 1000, "{r:?}");
    assert!(r.spent > 1000 - 47, "the budget is filled: {r:?}");
    assert_eq!(r.served + r.kept, 300);
    // Significance falls with the id: the served ones are a prefix but for costlier ones that
    // no longer fitted, and nothing after the prefix would have fitted.
    let served: Vec<usize> = (0..300).filter(|&i| budget.due(i)).collect();
    let last = *served.last().unwrap();
    for i in (0..last).filter(|&i| !budget.due(i)) {
        assert_eq!(claims[i].joints, 47, "instance {i} skipped: {served:?}");
    }
    assert!(
        r.spent + 17 > 1000,
        "an instance after {last} would have fitted: {r:?}"
    );
    assert_eq!(r.starving, 0);
}

#[test]
fn nobody_waits_longer_than_the_minimum_service_rate() {
    let claims = claims(500);
    let mut budget = PoseBudget::new();
    let max_stale = 6;
    let mut last = vec![0u32; 500];
    let mut starving = 0;
    for frame in 0..40u32 {
        let r = budget.plan(&claims, 2000, max_stale);
        starving += r.starving;
        assert!(r.max_wait < max_stale, "frame {frame}: {r:?}");
        for (i, last) in last.iter_mut().enumerate() {
            if budget.due(i) {
                assert!(
                    frame - *last <= max_stale,
                    "instance {i}: {last} then {frame}"
                );
                *last = frame;
            }
        }
    }
    assert!(
        starving > 0,
        "the rate, not the budget, served the least significant"
    );
    assert!(last.iter().all(|&f| f >= 40 - max_stale));
}

#[test]
fn an_instance_that_must_run_is_served_even_past_the_budget() {
    let mut claims = claims(50);
    let mut budget = PoseBudget::new();
    budget.plan(&claims, 0, 1000);
    claims[49].must = true;
    let r = budget.plan(&claims, 0, 1000);
    assert!(budget.due(49) && !budget.due(0), "{r:?}");
    assert_eq!((r.served, r.must, r.spent), (1, 1, 17));
    assert!(budget.due(10_000), "an id past the crowd is never kept");
}
