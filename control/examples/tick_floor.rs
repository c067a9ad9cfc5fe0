//! The floor of the crowd tree's tick: a model of its common case as passes over structures of
//! arrays, timed beside the real `Crowd::tick` of the same inputs in the same process (issue 46,
//! docs/benchmark.md "Where the tick stands").
//!
//! A model, not the product: it does the arithmetic a tick of `fixtures/trees/crowd.toml` cannot
//! avoid when nothing changes state — blend weights and the sync leader with its hysteresis; the
//! leader, wave and breathing players advanced by the player's formula with its wrap and the
//! clip events in each step's span found; the followers placed at the leader's normalised time;
//! the planar root motion of each weighted locomotion player sampled from the real clips and
//! blended; the program's values written — and leaves out transitions, fades and
//! inertialization, marker sync, the undo log and failures, the program's ops and their
//! static-change detection, and every check. Its outputs are not the tick's; its time bounds
//! from below what any form of the tick can reach on this machine.
//!
//! It also counts, over the real crowd's timed ticks, the instance-ticks that leave that common
//! case (a transition, a crossfade or an inertialization in progress, a leader change, an event)
//! and bounds from below a lane tick that runs every instance-tick but the transitions' at the
//! model's cost and those on the scalar tick at its mean cost.
//!
//! `cargo run --release -p throng-control --example tick_floor -- [INSTANCES] [TICKS]`
//! (default 10 000 instances, 40 timed ticks, one thread).

use std::error::Error;
use std::time::Instant;

use glam::{Quat, Vec3};
use throng_control::crowd::Crowd;
use throng_control::instance::{Controller, InstanceState, Source};
use throng_control::tree::{self, Value, MAX_SYNC_GROUPS};
use throng_cpu_ref::clip::{root_motion_delta, sample_root_motion};
use throng_cpu_ref::interpreter::AlignedSum;
use throng_cpu_ref::Clip;

/// Players per instance: idle, walk and run (the synced locomotion blend), wave, breathe.
const PLAYERS: usize = 5;
const WAVE: usize = 3;
const BREATHE: usize = 4;
/// The locomotion blend's points (m/s) and the leader's hysteresis, as in the crowd tree.
const AT: [f64; 3] = [0.0, 1.4, 3.5];
const HYSTERESIS: f32 = 0.1;
/// Untimed ticks before the timed ones.
const WARM_UP: u64 = 20;

/// The crowd's state and outputs, one array per quantity.
struct Lanes {
    speed: Vec<f64>,
    wave: Vec<bool>,
    ticks: Vec<[u64; PLAYERS]>,
    cycle: Vec<[i64; PLAYERS]>,
    phase: Vec<[f64; PLAYERS]>,
    leader: Vec<u8>,
    weights: Vec<[f32; 3]>,
    /// Each locomotion player's last root sample.
    last: Vec<[(Vec3, Quat); 3]>,
    motion: Vec<(Vec3, Quat)>,
    values: Vec<[f32; 10]>,
    /// (instance, event) of the tick.
    events: Vec<(u32, u32)>,
}

/// What the passes read of the package.
struct Clips<'a> {
    clips: [&'a Clip; PLAYERS],
    duration: [f64; PLAYERS],
    events: [Vec<f64>; PLAYERS],
    period: f64,
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("usage: tick_floor [INSTANCES] [TICKS] ({e})"))?;
    let n = args.first().copied().unwrap_or(10_000);
    let ticks = args.get(1).copied().unwrap_or(40) as u64;
    let imported = throng_cook::import_slice(&throng_fixtures::character_glb(), "character")?;
    let package = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)?.0;
    let tree = tree::load(throng_fixtures::CROWD_TREE, "crowd.toml", &package, 0)?;
    // The control table's rate (benches/src/control.rs).
    let ctl = Controller::new(tree, package, 30.0, 64)?;
    let clip = |name: &str| {
        (ctl.package.clips.iter())
            .find(|c| c.name == name)
            .ok_or_else(|| format!("the character has no clip '{name}'"))
    };
    let clips = [
        clip("idle")?,
        clip("walk")?,
        clip("run")?,
        clip("wave")?,
        clip("breathe")?,
    ];
    let clips = Clips {
        clips,
        duration: clips.map(|c| c.duration),
        events: clips.map(|c| c.events.iter().map(|e| e.time).collect()),
        period: ctl.period,
    };
    let mut lanes = Lanes {
        speed: vec![0.0; n],
        wave: vec![false; n],
        ticks: vec![[0; PLAYERS]; n],
        cycle: vec![[0; PLAYERS]; n],
        phase: vec![[0.0; PLAYERS]; n],
        leader: vec![0; n],
        weights: vec![[0.0; 3]; n],
        last: vec![[(Vec3::ZERO, Quat::IDENTITY); 3]; n],
        motion: vec![(Vec3::ZERO, Quat::IDENTITY); n],
        values: vec![[0.0; 10]; n],
        events: Vec::with_capacity(4 * n),
    };
    let mut crowd = Crowd::new(&ctl, n)?;
    let input = |name: &str| {
        (ctl.tree.input(name)).ok_or_else(|| format!("the crowd tree has no input '{name}'"))
    };
    let (speed_input, wave_input) = (input("speed")?, input("wave")?);
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    // Each timed on its own run of ticks, so neither finds its data evicted by the other's.
    let (mut model_s, mut events) = (0.0, 0);
    for t in 0..WARM_UP + ticks {
        for i in 0..n {
            (lanes.speed[i], lanes.wave[i]) = inputs(i, t);
        }
        let start = Instant::now();
        model_tick(&mut lanes, &clips);
        if t >= WARM_UP {
            model_s += start.elapsed().as_secs_f64();
            events += lanes.events.len();
        }
    }
    let (mut tick_s, mut shares) = (0.0, Shares::default());
    let mut before = Before {
        leaves: Vec::with_capacity(n * ctl.tree.regions.len()),
        leaders: Vec::with_capacity(n),
    };
    for t in 0..WARM_UP + ticks {
        for (i, s) in crowd.instances.iter_mut().enumerate() {
            let (speed, wave) = inputs(i, t);
            let set = ctl
                .set_input_at(s, speed_input, Value::Float(speed))
                .and_then(|()| ctl.set_input_at(s, wave_input, Value::Bool(wave)));
            set?;
        }
        before.leaves.clear();
        before
            .leaves
            .extend(crowd.instances.iter().flat_map(leaves));
        before.leaders.clear();
        before
            .leaders
            .extend(crowd.instances.iter().map(|s| s.leaders));
        let start = Instant::now();
        one.install(|| crowd.tick(&ctl));
        if t >= WARM_UP {
            tick_s += start.elapsed().as_secs_f64();
            shares.count(&crowd, &before);
        }
    }
    let per = |s: f64| s * 1e9 / (n as f64 * ticks as f64);
    println!(
        "{n} instances, {ticks} ticks, one thread: the model {:.1} ns per instance-tick, \
         Crowd::tick {:.1} ns ({:.2}x); the model's events {events}",
        per(model_s),
        per(tick_s),
        tick_s / model_s,
    );
    let share = |k: u64| k as f64 / shares.instance_ticks as f64;
    let transition = share(shares.transition);
    println!(
        "the crowd's instance-ticks: {:.1} % a transition, {:.1} % crossfading, {:.1} % \
         inertializing, {:.1} % a leader change, {:.1} % an event; the common case {:.1} %",
        100.0 * transition,
        100.0 * share(shares.fading),
        100.0 * share(shares.inertializing),
        100.0 * share(shares.leader),
        100.0 * share(shares.event),
        100.0 * share(shares.common),
    );
    println!(
        "a lane tick at the model's cost but for the transitions, those on the scalar tick: \
         at least {:.1} ns per instance-tick",
        transition * per(tick_s) + (1.0 - transition) * per(model_s),
    );
    Ok(())
}

/// Each region's active leaf and bank of instance `s`: what a transition alters.
fn leaves(s: &InstanceState) -> impl Iterator<Item = (u16, u8)> + '_ {
    (s.regions.iter()).map(|r| (r.leaf(), r.bank))
}

/// The crowd's instances before a tick: their [`leaves`], and their sync leaders.
struct Before {
    leaves: Vec<(u16, u8)>,
    leaders: Vec<[u64; MAX_SYNC_GROUPS]>,
}

/// Counts of the timed instance-ticks of `Crowd::tick` that leave the model's common case, by
/// why (an instance-tick can count under several).
#[derive(Default)]
struct Shares {
    instance_ticks: u64,
    transition: u64,
    fading: u64,
    inertializing: u64,
    leader: u64,
    event: u64,
    /// None of the above.
    common: u64,
}

impl Shares {
    /// Counts the crowd's last tick, its instances as they were `before` it.
    fn count(&mut self, crowd: &Crowd, before: &Before) {
        let regions = before.leaves.len() / crowd.instances.len().max(1);
        let mut evented = vec![false; crowd.instances.len()];
        for e in crowd.events() {
            if let Some(x) = evented.get_mut(e.instance as usize) {
                *x = true;
            }
        }
        for (k, s) in crowd.instances.iter().enumerate() {
            let was = &before.leaves[k * regions..][..regions];
            let transition = leaves(s).zip(was).any(|(a, &b)| a != b);
            let leader = before.leaders.get(k) != Some(&s.leaders);
            let fading = (s.regions.iter()).any(|r| !matches!(r.source, Source::None));
            let inertializing = s.inertia.active;
            let event = evented.get(s.id as usize).copied().unwrap_or(false);
            self.instance_ticks += 1;
            self.transition += u64::from(transition);
            self.fading += u64::from(fading);
            self.inertializing += u64::from(inertializing);
            self.leader += u64::from(leader);
            self.event += u64::from(event);
            self.common += u64::from(!(transition || fading || inertializing || leader || event));
        }
    }
}

/// Instance `i`'s `speed` and `wave` on tick `t`: the control table's inputs
/// (benches/src/control.rs, `set_inputs`).
fn inputs(i: usize, t: u64) -> (f64, bool) {
    let speed = ((i as u64 * 37 + t) % 60) as f64 / 10.0;
    (speed, (i as u64 + t / 20).is_multiple_of(3))
}

/// One tick of the model: five passes over the instances.
#[inline(never)]
fn model_tick(l: &mut Lanes, c: &Clips) {
    l.events.clear();
    weigh_and_lead(l);
    advance_own(l, c);
    follow(l, c);
    root_motion(l, c);
    write_values(l);
}

/// The locomotion blend's weights (1-D, by speed) and the sync leader: the heaviest player,
/// unless the current one is live and within the hysteresis of it.
fn weigh_and_lead(l: &mut Lanes) {
    for (i, &x) in l.speed.iter().enumerate() {
        let mut w = [0.0f32; 3];
        if x <= AT[0] {
            w[0] = 1.0;
        } else if x >= AT[2] {
            w[2] = 1.0;
        } else {
            let k = usize::from(x >= AT[1]);
            let u = (x - AT[k]) / (AT[k + 1] - AT[k]);
            (w[k], w[k + 1]) = ((1.0 - u) as f32, u as f32);
        }
        let best = (1..3).fold(0, |b, k| if w[k] > w[b] { k } else { b });
        let current = l.leader[i] as usize;
        let keep = w[current] > 0.0 && w[current] + HYSTERESIS >= w[best];
        l.leader[i] = if keep { current } else { best } as u8;
        l.weights[i] = w;
    }
}

/// The players that play by their own rate (the leader, wave while waving, breathe): the
/// player's position from its start (`base + rate · ticks · period`, rate 1 from phase 0), the
/// wrap, and the events in each step's span.
fn advance_own(l: &mut Lanes, c: &Clips) {
    for i in 0..l.speed.len() {
        let leader = l.leader[i] as usize;
        for k in [leader, WAVE, BREATHE] {
            if k == WAVE && !l.wave[i] {
                continue;
            }
            let d = c.duration[k];
            let ticks = l.ticks[i][k] + 1;
            l.ticks[i][k] = ticks;
            let x = 0.0 + 1.0 * (ticks as f64 * c.period);
            let (from_cycle, from) = (l.cycle[i][k], l.phase[i][k]);
            let (cycle, phase) = if x < d {
                (0, x)
            } else {
                let wraps = (x / d).floor();
                (wraps as i64, x - wraps * d)
            };
            (l.cycle[i][k], l.phase[i][k]) = (cycle, phase);
            for (e, &time) in c.events[k].iter().enumerate() {
                let crossed = if cycle == from_cycle {
                    from < time && time <= phase
                } else {
                    from < time || time <= phase
                };
                if crossed {
                    l.events.push((i as u32, e as u32));
                }
            }
        }
    }
}

/// The other locomotion players at the leader's normalised time.
fn follow(l: &mut Lanes, c: &Clips) {
    for i in 0..l.speed.len() {
        let leader = l.leader[i] as usize;
        let u = l.phase[i][leader] / c.duration[leader];
        for k in (0..3).filter(|&k| k != leader) {
            l.cycle[i][k] = l.cycle[i][leader];
            l.phase[i][k] = u * c.duration[k];
        }
    }
}

/// Each weighted locomotion player's step of root motion (its new sample against its last),
/// kept to its twist about +Y and planar translation, blended by weight.
fn root_motion(l: &mut Lanes, c: &Clips) {
    for i in 0..l.speed.len() {
        let (mut sum, mut total) = (AlignedSum::default(), 0.0);
        for k in 0..3 {
            let w = l.weights[i][k];
            if w <= 0.0 {
                continue;
            }
            let now = sample_root_motion(c.clips[k], l.phase[i][k] as f32)
                .unwrap_or((Vec3::ZERO, Quat::IDENTITY));
            let (t, q) = root_motion_delta(l.last[i][k], now);
            l.last[i][k] = now;
            let twist = Quat::from_xyzw(0.0, q.y, 0.0, q.w);
            let twist = if twist.length_squared() > 1e-12 {
                twist.normalize()
            } else {
                Quat::IDENTITY
            };
            sum.add(Vec3::new(t.x, 0.0, t.z), twist, w);
            total += w;
        }
        l.motion[i] = (
            sum.translation / total,
            Quat::from_vec4(sum.rotation.normalize()),
        );
    }
}

/// The program's values: each weighted locomotion player's clip time and weight, the wave's
/// time while waving, the breathing time and its reference's.
fn write_values(l: &mut Lanes) {
    for i in 0..l.speed.len() {
        let v = &mut l.values[i];
        let mut m = 0;
        for k in 0..3 {
            if l.weights[i][k] > 0.0 {
                (v[m], v[m + 1]) = (l.phase[i][k] as f32, l.weights[i][k]);
                m += 2;
            }
        }
        if l.wave[i] {
            v[m] = l.phase[i][WAVE] as f32;
            m += 1;
        }
        (v[m], v[m + 1]) = (l.phase[i][BREATHE] as f32, 0.0);
    }
}
