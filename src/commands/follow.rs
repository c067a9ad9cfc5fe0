//! `throng follow`: one motion-matched agent (docs/motion-matching.md) run on the fixed tick
//! along a path, measured against it: position and facing error, foot slide, and the search
//! checked against the exhaustive oracle on every query of the run.
//!
//! The agent is steered as a game would feed the locomotion tree (`steer`); the tick's root
//! motion moves it; its feet are kept by the hero pipeline's contacts (IK).

use std::path::PathBuf;
use std::time::Instant;

use glam::{Affine3A, DVec2, Vec3};
use serde_json::json;
use throng_control::instance::Controller;
use throng_control::program::compile;
use throng_control::tree::Value;
use throng_control::MatchQuery;
use throng_cpu_ref::motion_db::{Match, MotionDatabase};
use throng_cpu_ref::PoseOp;

use super::feet::Feet;
use super::steer::{ground_pose, steer, stop_distance, wrap, yaw_of, Course, MOVING, REST_HOLD};
use super::{load_package, read_text, tree_source, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// Package with a motion database (`throng motion-database`).
    package: PathBuf,
    /// The path: JSON `{"rate": HZ, "positions": [[x, z], ...]}` (metres, +Y up, ground plane
    /// XZ), sampled `rate` times a second from time 0.
    #[arg(long)]
    path: PathBuf,
    /// State tree with a motion-matching base state reading the inputs `velocity_x`,
    /// `velocity_z` and `turn` (and `stop_distance`, if it has it: the distance to where the
    /// path next rests); default: fixtures/trees/locomotion.toml.
    #[arg(long)]
    tree: Option<PathBuf>,
    /// Ticks per second.
    #[arg(long, default_value_t = 30.0)]
    rate: f64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// A foot is in contact while its shown ankle is within this height (m) of its rest height
/// (mocap's stance ankles stand higher than the rest pose's: a run lands on the forefoot)...
const CONTACT_HEIGHT: f32 = 0.1;
/// ... and moves slower than this (m/s, horizontally) from one tick to the next.
const CONTACT_SPEED: f32 = 0.5;

/// A path sampled at a fixed rate, linear between samples, held at its ends.
struct Path {
    rate: f64,
    positions: Vec<DVec2>,
}

impl Path {
    fn parse(text: &str, file: &str) -> Result<Path, CliError> {
        let bad = |m: String| CliError::Usage(format!("{file}: {m}"));
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let rate = v["rate"]
            .as_f64()
            .filter(|r| r.is_finite() && *r > 0.0)
            .ok_or_else(|| bad("`rate` is not a positive number of samples a second".into()))?;
        let list = v["positions"]
            .as_array()
            .ok_or_else(|| bad("`positions` is not an array of [x, z]".into()))?;
        let mut positions = Vec::with_capacity(list.len());
        for (i, p) in list.iter().enumerate() {
            let xz = p
                .as_array()
                .filter(|a| a.len() == 2)
                .and_then(|a| Some(DVec2::new(a[0].as_f64()?, a[1].as_f64()?)))
                .filter(|p| p.is_finite())
                .ok_or_else(|| bad(format!("positions[{i}] is not [x, z] of finite numbers")))?;
            positions.push(xz);
        }
        if positions.len() < 2 {
            return Err(bad("a path has at least two positions".into()));
        }
        Ok(Path { rate, positions })
    }

    /// The first direction the path moves in (+Z if it never moves).
    fn first_direction(&self) -> DVec2 {
        let steps = (self.duration() * 30.0).ceil() as usize;
        (0..=steps)
            .map(|k| self.velocity(k as f64 / 30.0))
            .find(|v| v.length() >= MOVING)
            .map_or(DVec2::Y, |v| v.normalize())
    }
}

impl Course for Path {
    fn duration(&self) -> f64 {
        (self.positions.len() - 1) as f64 / self.rate
    }

    fn at(&self, t: f64) -> DVec2 {
        let x = (t * self.rate).clamp(0.0, (self.positions.len() - 1) as f64);
        let i = (x.floor() as usize).min(self.positions.len() - 2);
        self.positions[i].lerp(self.positions[i + 1], x - i as f64)
    }

    /// Central difference over ±0.1 s (one sample at least).
    fn velocity(&self, t: f64) -> DVec2 {
        let h = (0.1f64).max(1.0 / self.rate);
        let (a, b) = ((t - h).max(0.0), (t + h).min(self.duration()));
        if b <= a {
            return DVec2::ZERO;
        }
        (self.at(b) - self.at(a)) / (b - a)
    }
}

pub fn run(args: Args) -> Result<(), CliError> {
    if !(args.rate.is_finite() && args.rate > 0.0) {
        return Err(CliError::Usage(format!(
            "--rate {} is not a positive tick rate",
            args.rate
        )));
    }
    let package = load_package(&args.package)?;
    if package.motion_databases.is_empty() {
        return Err(CliError::Usage(format!(
            "{} has no motion database; build one with `throng motion-database`",
            args.package.display()
        )));
    }
    let file = args.path.display().to_string();
    let path = Path::parse(&read_text(&args.path, "a path (JSON)")?, &file)?;
    let (source, tree_file) = tree_source(
        args.tree.as_deref(),
        (
            throng_fixtures::LOCOMOTION_TREE,
            "fixtures/trees/locomotion.toml",
        ),
    )?;
    let tree = throng_control::tree::load(&source, &tree_file, &package, 0).map_err(control)?;
    let input = |name: &str| {
        tree.inputs
            .iter()
            .position(|i| i.name == name)
            .map(|i| i as u16)
            .ok_or_else(|| control(format!("{tree_file}: the tree has no input `{name}`")))
    };
    let inputs = [input("velocity_x")?, input("velocity_z")?, input("turn")?];
    // Optional: a tree reading it plays the database's stops matched to the distance left.
    let stop_input = input("stop_distance").ok();
    let ctl = Controller::new(tree, package, args.rate, 64).map_err(control)?;
    let mut s = ctl.spawn(0).map_err(control)?;
    let (mut scratch, mut out) = (ctl.scratch(), ctl.output());
    let limits = ctl.limits();
    let mut ops = vec![PoseOp::rest(0); limits.max_ops];
    let mut pool = vec![0.0; limits.max_weights];
    let mut weights = vec![0.0; ctl.tree.player_slots()];
    let mut feet = Feet::new(&ctl, 0, 0, limits, Some(CONTACT_HEIGHT)).ok_or_else(|| {
        control("the package's skeleton has no pelvis and two legs find_legs knows by name")
    })?;
    // Start at the path's first point, facing along it.
    let start = path.at(0.0);
    let facing = yaw_of(path.first_direction());
    feet.placement = Affine3A::from_rotation_translation(
        glam::Quat::from_rotation_y(facing as f32),
        Vec3::new(start.x as f32, 0.0, start.y as f32),
    ) * feet.placement;
    // The start turns about +Y and moves on the ground: the rest heights stand.
    let rest_ankle = feet.rest_heights;
    let ticks = (path.duration() * args.rate).ceil() as u64;
    let (mut position, mut facing_err) = (Stats::default(), Stats::default());
    let mut slide = [Slide::default(); 2];
    let mut last_ankle = [None; 2];
    let mut worst_slide = 0.0f32;
    let mut contacts = 0usize;
    let mut queries: Vec<MatchQuery> = Vec::new();
    let mut stop_ticks = 0usize;
    let (mut rests, mut rest_since) = (Stats::default(), None);
    for tick in 0..ticks {
        let ahead = tick as f64 / args.rate + 1.0 / args.rate;
        for (i, v) in inputs.iter().zip(steer(&path, ahead, &feet.placement)) {
            ctl.set_input_at(&mut s, *i, Value::Float(v))
                .map_err(control)?;
        }
        if let Some(i) = stop_input {
            let d = stop_distance(&path, ahead, &feet.placement);
            ctl.set_input_at(&mut s, i, Value::Float(d))
                .map_err(control)?;
        }
        ctl.tick(&mut s, &mut scratch, &mut out)
            .map_err(|e| control(format!("tick {}: {e}", tick + 1)))?;
        if let Some(q) = out.query.take() {
            queries.push(q);
        }
        stop_ticks += usize::from(ctl.playing_stop(&s).is_some());
        let (n, m) = compile(&ctl, &s, &mut weights, &mut ops, &mut pool);
        feet.tick(
            &ctl,
            s.tick,
            (&ops[..n], &pool[..m]),
            out.root_motion,
            args.rate,
        )?;
        // Measured after the tick, at the tick's end time.
        let now = ahead;
        let (p, yaw) = ground_pose(&feet.placement);
        position.add((p - path.at(now)).length());
        let v = path.velocity(now);
        if v.length() >= MOVING {
            facing_err.add(wrap(yaw_of(v) - yaw).abs().to_degrees());
            rest_since = None;
        } else {
            // Where the agent stands at the end of each rest of the path of at least
            // `REST_HOLD`: the last tick before it moves on (or the run ends).
            let since = *rest_since.get_or_insert(now);
            let moves_on = path.velocity(now + 1.0 / args.rate).length() >= MOVING;
            if (moves_on || tick + 1 == ticks) && now - since >= REST_HOLD - 1e-9 {
                rests.add((p - path.at(now)).length());
            }
        }
        for (k, &j) in feet.ankles.iter().enumerate() {
            let ankle = feet
                .placement
                .transform_point3(feet.hero.component()[j].translation.into());
            let speed = last_ankle[k].map_or(0.0, |a: Vec3| {
                Vec3::new(ankle.x - a.x, 0.0, ankle.z - a.z).length() * args.rate as f32
            });
            last_ankle[k] = Some(ankle);
            let down = ankle.y <= rest_ankle[k] + CONTACT_HEIGHT && speed < CONTACT_SPEED;
            let sl = &mut slide[k];
            match (sl.anchor, down) {
                (None, true) => {
                    sl.anchor = Some(ankle);
                    contacts += 1;
                }
                (Some(a), true) => {
                    let d = Vec3::new(ankle.x - a.x, 0.0, ankle.z - a.z).length();
                    worst_slide = worst_slide.max(d);
                }
                (_, false) => sl.anchor = None,
            }
        }
    }
    let db = &ctl.package.motion_databases[0];
    let search = check_queries(db, &queries);
    let switches = queries.iter().filter(|q| q.switched).count();
    if args.json {
        let report = json!({
            "package": args.package.display().to_string(),
            "path": {"file": file, "seconds": path.duration(), "samples": path.positions.len()},
            "rate": args.rate,
            "ticks": ticks,
            "position_error_m": {"mean": position.mean(), "max": position.max},
            "facing_error_deg": {"mean": facing_err.mean(), "max": facing_err.max},
            "foot_slide_cm": f64::from(worst_slide) * 100.0,
            "foot_contacts": contacts,
            "foot_detector": format!(
                "a foot is in contact while its shown ankle is within {} cm of its rest height and moves slower than {CONTACT_SPEED} m/s; slide is its largest horizontal distance from where the contact began",
                CONTACT_HEIGHT * 100.0
            ),
            "switches": switches,
            "stops": {
                "segments": ctl.stops(0).len(),
                "ticks": stop_ticks,
                "rests": rests.count,
                "rest_error_m": {"mean": rests.mean(), "max": rests.max},
            },
            "search": {
                "frames": db.rows.len(),
                "queries": queries.len(),
                "exhaustive_us": search.exhaustive_us,
                "fast_us": search.fast_us,
                "disagreements": search.disagreements,
            },
        });
        println!("{report:#}");
    } else {
        println!(
            "followed {} ({:.1} s, {} ticks at {} Hz)",
            file,
            path.duration(),
            ticks,
            args.rate
        );
        println!(
            "position error: mean {:.3} m, max {:.3} m",
            position.mean(),
            position.max
        );
        println!(
            "facing error: mean {:.1}°, max {:.1}° (where the path moves at least {MOVING} m/s)",
            facing_err.mean(),
            facing_err.max
        );
        println!(
            "foot slide: {:.2} cm over {contacts} contacts (ankle within {} cm of its rest height, slower than {CONTACT_SPEED} m/s)",
            worst_slide * 100.0,
            CONTACT_HEIGHT * 100.0
        );
        println!(
            "search: {} frames, {} queries ({switches} switches), exhaustive {:.2} µs, fast {:.2} µs, {} disagreements",
            db.rows.len(),
            queries.len(),
            search.exhaustive_us,
            search.fast_us,
            search.disagreements
        );
        println!(
            "stops: {} in the database, played on {stop_ticks} ticks; at the end of the path's {} rests the agent stood {:.3} m from them on average, {:.3} m at most",
            ctl.stops(0).len(),
            rests.count,
            rests.mean(),
            rests.max
        );
    }
    Ok(())
}

#[derive(Default)]
struct Stats {
    sum: f64,
    count: usize,
    max: f64,
}

impl Stats {
    fn add(&mut self, x: f64) {
        self.sum += x;
        self.count += 1;
        self.max = self.max.max(x);
    }
    fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }
}

/// A foot's current contact: where it began.
#[derive(Clone, Copy, Default)]
struct Slide {
    anchor: Option<Vec3>,
}

struct QueryCheck {
    exhaustive_us: f64,
    fast_us: f64,
    disagreements: usize,
}

/// Passes over the run's queries each search is timed over; the median pass is reported (a
/// run has a few hundred queries, a millisecond of work, which one preemption can double).
const TIMING_PASSES: usize = 15;

/// Every query of the run again through the exhaustive oracle and the fast search (as the tick
/// ran it: its filter and first bound), each timed over all queries ([`TIMING_PASSES`] passes,
/// the median); a disagreement is a query whose results differ from each other or from the
/// tick's.
fn check_queries(db: &MotionDatabase, queries: &[MatchQuery]) -> QueryCheck {
    let median_us = |run: &dyn Fn() -> usize| {
        let mut passes: Vec<f64> = (0..TIMING_PASSES)
            .map(|_| {
                let clock = Instant::now();
                std::hint::black_box(run());
                clock.elapsed().as_secs_f64() * 1e6 / queries.len().max(1) as f64
            })
            .collect();
        passes.sort_by(f64::total_cmp);
        passes[TIMING_PASSES / 2]
    };
    let row = |m: Option<Match>| m.map(|m| m.row);
    let exhaustive_us = median_us(&|| {
        (queries.iter())
            .filter_map(|q| row(db.search_exhaustive(&q.features, &q.filter)))
            .count()
    });
    let fast_us = median_us(&|| {
        (queries.iter())
            .filter_map(|q| row(db.search(&q.features, &q.filter, q.start)))
            .count()
    });
    let disagreements = queries
        .iter()
        .filter(|q| {
            let e = row(db.search_exhaustive(&q.features, &q.filter));
            e != row(db.search(&q.features, &q.filter, q.start)) || e != row(q.found)
        })
        .count();
    QueryCheck {
        exhaustive_us,
        fast_us,
        disagreements,
    }
}

fn control(e: impl std::fmt::Display) -> CliError {
    CliError::Control(e.to_string())
}
