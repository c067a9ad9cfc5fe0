//! Control tick cost per instance: the crowd tree (1-D locomotion blend space with synced feet,
//! an upper-body override layer, an additive breathing layer) on the generated character, for
//! 10k and 100k instances, on one thread and on rayon's pool, and at 10k on one thread with one
//! gameplay socket per instance and with three. Throughput is instances per
//! second: ns per instance per tick = 1e9 / throughput (goal: under 250 ns on one core).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use throng_control::crowd::Crowd;
use throng_control::instance::Controller;
use throng_control::tree::{self, Value};

use throng_fixtures::{crowd_tree_with_sockets, CROWD_TREE};

fn controller(source: &str) -> Controller {
    let imported =
        throng_cook::import_slice(&throng_fixtures::character_glb(), "character").unwrap();
    let package = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)
        .unwrap()
        .0;
    let tree = tree::load(source, "crowd.toml", &package, 0).unwrap();
    Controller::new(tree, package, 60.0, 64).unwrap()
}

/// Speeds spread over 0..6 m/s (every blend-space segment), a third of the crowd waving.
fn crowd(ctl: &Controller, count: usize) -> Crowd {
    let mut crowd = Crowd::new(ctl, count).unwrap();
    for (i, s) in crowd.instances.iter_mut().enumerate() {
        ctl.set_input(s, "speed", Value::Float((i % 61) as f64 / 10.0))
            .unwrap();
        ctl.set_input(s, "wave", Value::Bool(i % 3 == 0)).unwrap();
    }
    // Past the wave fade-ins: the steady state.
    for _ in 0..30 {
        crowd.tick(ctl);
    }
    crowd
}

fn tick(c: &mut Criterion) {
    let ctl = controller(CROWD_TREE);
    // The hand's socket (a 9-joint chain), and three sockets (throng_fixtures::CROWD_SOCKETS).
    let with_socket = controller(&crowd_tree_with_sockets(1));
    let with_sockets = controller(&crowd_tree_with_sockets(3));
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut group = c.benchmark_group("control_tick");
    group.sample_size(10);
    for count in [10_000usize, 100_000] {
        let mut crowd = crowd(&ctl, count);
        group.throughput(Throughput::Elements(count as u64));
        group.bench_function(BenchmarkId::new("one_thread", count), |b| {
            b.iter(|| one.install(|| crowd.tick(&ctl)))
        });
        group.bench_function(BenchmarkId::new("rayon", count), |b| {
            b.iter(|| crowd.tick(&ctl))
        });
    }
    // The same tick evaluating one gameplay socket per instance (its 9-joint chain), and three.
    let count = 10_000;
    group.throughput(Throughput::Elements(count as u64));
    for (name, ctl) in [
        ("one_thread_one_socket", &with_socket),
        ("one_thread_three_sockets", &with_sockets),
    ] {
        let mut crowd = crowd(ctl, count);
        group.bench_function(BenchmarkId::new(name, count), |b| {
            b.iter(|| one.install(|| crowd.tick(ctl)))
        });
    }
    group.finish();
}

criterion_group!(benches, tick);
criterion_main!(benches);
