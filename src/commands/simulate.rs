//! `throng simulate`: one instance of a state tree run headless on the fixed tick, printing per
//! tick the state path, the player times, the events (with identities), the state changes and
//! the root-motion delta; `--hash` adds a digest of all of it and of the compiled programs.
//! `--record` writes the run's asset identity, settings, inputs and digest to a file; `--replay`
//! reruns such a file and checks it reaches the same digest (throng_control::record).

use std::path::PathBuf;

use serde_json::json;
use throng_control::digest::Digest;
use throng_control::events::EventKind;
use throng_control::instance::{Change, Controller, InstanceState, TickOutput};
use throng_control::program::compile;
use throng_control::record::{package_hash, tree_hash, Recording, ReplayError};
use throng_control::script::Script;
use throng_control::trace::{clause_text, value_text, Trace};
use throng_cpu_ref::{Package, PoseOp};

use super::feet::Feet;
use super::{builtin_character, load_package, read_text, tree_source, write_file, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// State tree (TOML, docs/state-tree.md); default: fixtures/trees/crowd.toml.
    tree: Option<PathBuf>,
    /// Package the tree names clips of; default: the generated character, cooked now.
    #[arg(long)]
    package: Option<PathBuf>,
    /// Ticks to run.
    #[arg(long, default_value_t = 600)]
    ticks: u64,
    /// Ticks per second.
    #[arg(long, default_value_t = 60.0)]
    rate: f64,
    /// Scripted input changes by tick (TOML: [[set]] tick = N, input = value, ...).
    #[arg(long)]
    inputs: Option<PathBuf>,
    /// Skeleton of the package the tree drives.
    #[arg(long, default_value_t = 0)]
    skeleton: u32,
    /// Most events one tick may deliver before it is rejected.
    #[arg(long, default_value_t = 64)]
    event_capacity: usize,
    /// Print one JSON object per tick (JSON Lines) instead of text.
    #[arg(long)]
    json: bool,
    /// Print a hash of every tick's state, events, motion and program at the end.
    #[arg(long)]
    hash: bool,
    /// After the last tick, print the instance's state path, players and compiled pose program
    /// (the same dump as `throng inspect --instance`).
    #[arg(long)]
    dump: bool,
    /// Print nothing per tick (with --dump or --hash).
    #[arg(long)]
    quiet: bool,
    /// After the run, print the last N ticks from the instance's trace ring: inputs, state
    /// paths, each transition taken with the clauses that fired it, events, root motion and,
    /// on a rig with two legs, each foot's contact phase (the instance posed as a hero on flat
    /// ground every tick).
    #[arg(long, value_name = "N")]
    trace: Option<usize>,
    /// Write the run's recording (package and tree identity, settings, inputs, digest) to FILE.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Rerun a recording made with --record and check the digest bit for bit; the ticks, rate,
    /// skeleton, event capacity and inputs come from it, and the package and tree given must be
    /// the recorded ones.
    #[arg(long, value_name = "FILE", conflicts_with = "record")]
    replay: Option<PathBuf>,
}

/// `throng inspect --instance`: run `ticks` ticks silently, then print the instance dump.
pub(super) fn dump_instance(
    package: Option<PathBuf>,
    tree: Option<PathBuf>,
    inputs: Option<PathBuf>,
    ticks: u64,
) -> Result<(), CliError> {
    run(Args {
        tree,
        package,
        ticks,
        rate: 60.0,
        inputs,
        skeleton: 0,
        event_capacity: 64,
        json: false,
        hash: false,
        dump: true,
        quiet: true,
        record: None,
        replay: None,
        trace: None,
    })
}

fn control(e: impl std::fmt::Display) -> CliError {
    CliError::Control(e.to_string())
}

fn package(args: &Args) -> Result<Package, CliError> {
    match &args.package {
        Some(path) => load_package(path),
        None => builtin_character(),
    }
}

fn replay_error(path: &std::path::Path, e: ReplayError) -> CliError {
    control(format!("replay {}: {e}", path.display()))
}

pub fn run(mut args: Args) -> Result<(), CliError> {
    let replay = match &args.replay {
        Some(path) => {
            // A format error names the file itself.
            let r = Recording::parse(
                &read_text(path, "a recording (throng simulate --record)")?,
                &path.display().to_string(),
            )
            .map_err(|e| control(format!("replay: {e}")))?;
            (args.ticks, args.rate) = (r.ticks, r.rate);
            (args.skeleton, args.event_capacity) = (r.skeleton, r.event_capacity);
            Some((path.clone(), r))
        }
        None => None,
    };
    let package = package(&args)?;
    let (source, file) = tree_source(
        args.tree.as_deref(),
        (throng_fixtures::CROWD_TREE, "fixtures/trees/crowd.toml"),
    )?;
    let tree =
        throng_control::tree::load(&source, &file, &package, args.skeleton).map_err(control)?;
    let given = match &args.inputs {
        Some(path) => Some(
            Script::parse(
                &read_text(path, "an inputs script (docs/state-tree.md)")?,
                &path.display().to_string(),
                &tree,
            )
            .map_err(control)?,
        ),
        None => None,
    };
    let identity = (args.record.is_some() || replay.is_some()).then(|| {
        (
            package_hash(&throng_cook::write_package(&package)),
            tree_hash(&source),
        )
    });
    let script = match (&replay, identity) {
        (Some((path, r)), Some((package, tree))) => {
            r.check(package, tree, &file, given.as_ref())
                .map_err(|e| replay_error(path, e))?;
            r.script()
        }
        _ => given.unwrap_or_default(),
    };
    let ctl = Controller::new(tree, package, args.rate, args.event_capacity).map_err(control)?;
    let mut s = ctl.spawn(0).map_err(control)?;
    let (mut scratch, mut out) = (ctl.scratch(), ctl.output());
    let limits = ctl.limits();
    let mut ops = vec![PoseOp::rest(0); limits.max_ops];
    let mut pool = vec![0.0; limits.max_weights];
    let mut weights = vec![0.0; ctl.tree.player_slots()];
    let mut digest = Digest::default();
    let mut trace = args.trace.map(|n| Trace::new(&ctl, n));
    let mut feet = args
        .trace
        .and_then(|n| Feet::new(&ctl, args.skeleton, n, limits, None));
    for tick in 0..args.ticks {
        script
            .apply(tick, &ctl, &mut s)
            .map_err(|e| control(format!("inputs at tick {tick}: {e}")))?;
        ctl.tick(&mut s, &mut scratch, &mut out)
            .map_err(|e| control(format!("tick {}: {e}", tick + 1)))?;
        digest.tick(&s, &out);
        if let Some(trace) = &mut trace {
            trace.push(&s, &out);
        }
        let (n, m) = compile(&ctl, &s, &mut weights, &mut ops, &mut pool);
        digest.program(&ops[..n], &pool[..m]);
        if let Some(feet) = &mut feet {
            feet.tick(
                &ctl,
                s.tick,
                (&ops[..n], &pool[..m]),
                out.root_motion,
                args.rate,
            )?;
        }
        ctl.player_weights(&s, &mut weights);
        if args.quiet {
            continue;
        }
        if args.json {
            println!("{}", tick_json(&ctl, &s, &out, &weights));
        } else {
            print_tick(&ctl, &s, &out, &weights);
        }
    }
    if let Some(trace) = &trace {
        print_trace(&ctl, trace, args.ticks, feet.as_ref());
    }
    if args.dump {
        print!("{}", throng_control::dump::dump(&ctl, &s));
    }
    if let (Some(path), Some((package, tree))) = (&args.record, identity) {
        let recording = Recording {
            package,
            tree,
            tree_file: file,
            rate: args.rate,
            skeleton: args.skeleton,
            event_capacity: args.event_capacity,
            ticks: args.ticks,
            hash: digest.finish(),
            inputs: script.changes().to_vec(),
        };
        write_file(path, recording.to_toml().as_bytes())?;
    }
    if let Some((path, r)) = &replay {
        if digest.finish() != r.hash {
            return Err(replay_error(
                path,
                ReplayError::Diverged {
                    recorded: r.hash,
                    found: digest.finish(),
                },
            ));
        }
        println!(
            "replay {}: hash {:016x} over {} ticks, as recorded",
            path.display(),
            r.hash,
            r.ticks
        );
    }
    if args.hash {
        if args.json {
            println!(
                "{}",
                json!({ "hash": format!("{:016x}", digest.finish()), "ticks": args.ticks })
            );
        } else {
            println!("hash {:016x} over {} ticks", digest.finish(), args.ticks);
        }
    }
    Ok(())
}

fn path_text(ctl: &Controller, s: &InstanceState, r: usize) -> String {
    let rs = &s.regions[r];
    let names: Vec<&str> = rs.path[..rs.depth as usize]
        .iter()
        .map(|&p| ctl.tree.regions[r].states[p as usize].name.as_str())
        .collect();
    names.join("/")
}

/// Active players: (region, slot) of each started player still in a bank in use.
fn players<'a>(
    ctl: &'a Controller,
    s: &'a InstanceState,
    weights: &'a [f32],
) -> impl Iterator<Item = (usize, usize)> + 'a {
    (0..ctl.tree.regions.len()).flat_map(move |r| {
        let offset = ctl.tree.player_offset(r);
        let slots = ctl.tree.regions[r].slots as usize;
        let rs = &s.regions[r];
        (offset..offset + 2 * slots)
            .filter(move |&k| {
                let in_target = (k - offset) / slots == rs.bank as usize
                    && (k - offset) % slots < rs.count as usize;
                in_target || weights[k] > 0.0
            })
            .map(move |k| (r, k))
    })
}

fn clip_name(ctl: &Controller, clip: u32) -> &str {
    ctl.package
        .clips
        .get(clip as usize)
        .map_or("?", |c| c.name.as_str())
}

fn tick_json(
    ctl: &Controller,
    s: &InstanceState,
    out: &TickOutput,
    weights: &[f32],
) -> serde_json::Value {
    let tree = &ctl.tree;
    let paths: serde_json::Map<String, serde_json::Value> = tree
        .regions
        .iter()
        .enumerate()
        .map(|(r, region)| (region.name.clone(), json!(path_text(ctl, s, r))))
        .collect();
    let players: Vec<_> = players(ctl, s, weights)
        .map(|(r, k)| {
            let p = &s.players[k];
            json!({
                "region": tree.regions[r].name, "clip": clip_name(ctl, p.clip), "time": p.clip_time(),
                "cycle": p.position().cycle, "weight": weights[k], "activation": p.activation,
            })
        })
        .collect();
    let events: Vec<_> = out
        .events
        .events()
        .iter()
        .map(|e| {
            let (name, index) = match e.kind {
                EventKind::Clip(i) | EventKind::Curve(i) => {
                    (ctl.event_name(e.clip, e.kind).unwrap_or("?"), json!(i))
                }
                EventKind::Completed => ("completed", serde_json::Value::Null),
            };
            json!({
                "event": name, "index": index, "instance": e.instance, "region": tree.regions[e.region as usize].name,
                "activation": e.activation, "cycle": e.cycle, "clip": clip_name(ctl, e.clip), "time": e.time, "reverse": e.reverse,
            })
        })
        .collect();
    let changes: Vec<_> = out
        .changes
        .iter()
        .map(|c| {
            let region = &tree.regions[c.region as usize];
            json!({
                "region": region.name, "state": region.states[c.state as usize].name,
                "change": if c.change == Change::Exit { "exit" } else { "enter" },
                "transition": region.transitions[c.transition as usize].id,
            })
        })
        .collect();
    let (t, q) = out.root_motion;
    json!({
        "tick": s.tick, "paths": paths, "players": players, "events": events, "changes": changes,
        "root_motion": { "translation": t.to_array(), "rotation": q.to_array() },
    })
}

fn print_tick(ctl: &Controller, s: &InstanceState, out: &TickOutput, weights: &[f32]) {
    let tree = &ctl.tree;
    let paths: Vec<String> = tree
        .regions
        .iter()
        .enumerate()
        .map(|(r, region)| format!("{}={}", region.name, path_text(ctl, s, r)))
        .collect();
    let players: Vec<String> = players(ctl, s, weights)
        .map(|(_, k)| {
            let p = &s.players[k];
            format!(
                "{}@{:.3}#{}x{:.2}",
                clip_name(ctl, p.clip),
                p.clip_time(),
                p.position().cycle,
                weights[k]
            )
        })
        .collect();
    let (t, q) = out.root_motion;
    println!(
        "tick {:>5} {} | {} | motion ({:.4}, {:.4}, {:.4}) yaw {:.4}",
        s.tick,
        paths.join(" "),
        players.join(" "),
        t.x,
        t.y,
        t.z,
        2.0 * q.y.atan2(q.w)
    );
    for c in &out.changes {
        let region = &tree.regions[c.region as usize];
        println!(
            "  {:?} {}/{} ({})",
            c.change,
            region.name,
            region.states[c.state as usize].name,
            region.transitions[c.transition as usize].id
        );
    }
    for e in out.events.events() {
        let name = ctl.event_name(e.clip, e.kind).unwrap_or("completed");
        println!(
            "  event {name} clip {} t={:.4} cycle {} activation {} region {}{}",
            clip_name(ctl, e.clip),
            e.time,
            e.cycle,
            e.activation,
            tree.regions[e.region as usize].name,
            if e.reverse { " reverse" } else { "" }
        );
    }
}

/// The trace ring, oldest tick first.
fn print_trace(ctl: &Controller, trace: &Trace, ticks: u64, feet: Option<&Feet>) {
    let tree = &ctl.tree;
    println!("trace: the last {} of {ticks} ticks", trace.len());
    for e in trace.entries() {
        let inputs: Vec<String> = tree
            .inputs
            .iter()
            .zip(&e.inputs)
            .map(|(def, v)| format!("{}={}", def.name, value_text(*v)))
            .collect();
        println!("tick {}  {}", e.tick, inputs.join(" "));
        let paths: Vec<String> = tree
            .regions
            .iter()
            .zip(&e.paths)
            .map(|(region, (path, depth))| {
                let names: Vec<&str> = path[..*depth as usize]
                    .iter()
                    .map(|&p| region.states[p as usize].name.as_str())
                    .collect();
                format!("{}: {}", region.name, names.join("/"))
            })
            .collect();
        println!("  paths   {}", paths.join("  "));
        for t in &e.taken {
            let region = &tree.regions[t.region as usize];
            let tr = &region.transitions[t.transition as usize];
            let why: Vec<String> = tr
                .when
                .iter()
                .map(|c| clause_text(ctl, c, &e.inputs))
                .collect();
            let why = if why.is_empty() {
                "no clauses".to_owned()
            } else {
                why.join(" and ")
            };
            println!(
                "  taken   {}: {} ({} -> {}) because {why}",
                region.name,
                tr.id,
                region.states[tr.from as usize].name,
                region.states[tr.to as usize].name
            );
        }
        for ev in &e.events {
            let name = match ev.kind {
                EventKind::Clip(_) | EventKind::Curve(_) => {
                    ctl.event_name(ev.clip, ev.kind).unwrap_or("?")
                }
                EventKind::Completed => "completed",
            };
            println!(
                "  event   {name} of {} at {:.4} s (cycle {})",
                clip_name(ctl, ev.clip),
                ev.time,
                ev.cycle
            );
        }
        let (t, q) = e.root_motion;
        println!(
            "  motion  t ({:.5}, {:.5}, {:.5}) q ({:.5}, {:.5}, {:.5}, {:.5})",
            t.x, t.y, t.z, q.x, q.y, q.z, q.w
        );
        if let Some(line) = feet.and_then(|f| f.line(e.tick)) {
            println!("  feet    {line}");
        }
    }
}
