//! `throng bench`: the crowd benchmark (throng-bench; docs/benchmark.md says how to read it).

use std::path::PathBuf;

use throng_bench::{Codec, CodecRow, Options, Pair, Report, Row, Subject};

use super::demo::MappingArg;
use super::{write_file, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// Instance counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [100, 1_000, 10_000])]
    instances: Vec<usize>,
    /// Also measure 100,000 instances.
    #[arg(long)]
    large: bool,
    /// Also measure whole crowd frames with raster at 10,000 and 100,000 instances: culling,
    /// skeleton LOD, update-rate LOD and the skinned budget next to full detail, the same with
    /// the far tier, and a card against the lowest mesh LOD per instance (slow on a software
    /// adapter).
    #[arg(long)]
    crowd: bool,
    /// Also measure a game's loop through the embedding API at 10,000 and 100,000 instances:
    /// the crowd tree ticked at 30 Hz, frames presented at 60 Hz, per instance per frame the
    /// tick's share and the rest of the CPU's work, bytes uploaded, the GPU's frame
    /// (docs/benchmark.md, "The game table").
    #[arg(long)]
    game: bool,
    /// Measure the game table alone (and the CPU pose it is set beside).
    #[arg(long, conflicts_with_all = ["crowd", "large"])]
    game_only: bool,
    /// A glTF (.glb/.gltf) or .throng asset to measure besides the generated character; repeatable.
    #[arg(long = "asset", value_name = "FILE")]
    assets: Vec<PathBuf>,
    /// Most timed frames per measurement (after one warm-up frame); the median is reported.
    #[arg(long, default_value_t = 10)]
    frames: u32,
    /// A measurement stops early once its timed frames add up to this many milliseconds.
    #[arg(long, default_value_t = 2_000.0)]
    budget_ms: f64,
    /// Also write the report as JSON to this file.
    #[arg(long, value_name = "OUT.json")]
    json: Option<PathBuf>,
    /// Also plot the report as SVG to this file: ns per joint against instance count for the
    /// CPU, rayon and the GPU, and the GPU's pass times (docs/benchmark.md).
    #[arg(long, value_name = "OUT.svg")]
    plot: Option<PathBuf>,
    /// Measure the GPU pose in this mapping only (`thread` or `workgroup`); by default the
    /// adapter's choice fills the GPU columns and the other mapping's pose is measured beside it.
    #[arg(long, value_enum)]
    mapping: Option<MappingArg>,
}

pub fn run(a: Args) -> Result<(), CliError> {
    let mut instances = a.instances;
    if a.large {
        instances.push(100_000);
    }
    instances.sort_unstable();
    instances.dedup();
    if instances.first() == Some(&0) || instances.is_empty() {
        return Err(CliError::Usage(
            "--instances needs counts of at least 1".into(),
        ));
    }
    if a.frames == 0 || a.budget_ms.is_nan() || a.budget_ms < 0.0 {
        return Err(CliError::Usage(
            "--frames must be at least 1 and --budget-ms not negative".into(),
        ));
    }
    let mut subjects = vec![Subject::character()?];
    let mut pairs = vec![Pair::character()?];
    let mut skipped = Vec::new();
    for path in &a.assets {
        subjects.push(Subject::from_file(path)?);
        match Pair::from_file(path)? {
            Ok(pair) => pairs.push(pair),
            Err(why) => skipped.push(why),
        }
    }
    let options = Options {
        instances,
        frames: a.frames,
        budget_ms: a.budget_ms,
        mapping: a.mapping.map(Into::into),
        ..Options::default()
    };
    if a.game_only {
        let ctx = throng_gpu::GpuContext::new()?;
        let report = throng_bench::Report {
            adapter: Some(ctx.adapter.clone()),
            rayon_threads: rayon::current_num_threads(),
            game: game(&ctx, &subjects[0], &options)?,
            ..Default::default()
        };
        print!("{}", report.table());
        if let Some(path) = &a.json {
            write_file(path, json(&report).as_bytes())?;
        }
        return Ok(());
    }
    // The control table first: CPU work only, measured before the GPU parts leave lavapipe or
    // pipeline compiles running on the same cores.
    let control = throng_bench::control::run(
        &subjects[0],
        &throng_bench::control::CONTROL_INSTANCES,
        Some(throng_bench::control::SOCKETED_INSTANCES),
        Some(throng_bench::control::MATCHED_INSTANCES),
        &options,
        control_progress,
    )?;
    let gpu = match throng_gpu::GpuContext::new() {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            eprintln!("note: {e}; measuring the CPU paths only");
            None
        }
    };
    let mut report = throng_bench::run(&subjects, gpu.as_ref(), &options, progress)?;
    report.control = control;
    report.codec = Codec {
        rows: throng_bench::codec::run(&pairs, gpu.as_ref(), &options, codec_progress)?,
        skipped,
    };
    if let (Some(ctx), Some(&most)) = (gpu.as_ref(), options.instances.iter().max()) {
        report.lod = throng_bench::lod::run(ctx, &subjects[0], most, &options, lod_progress)?;
    }
    report.morph = throng_bench::morph::run(
        gpu.as_ref(),
        &subjects[0],
        throng_bench::morph::MORPH_INSTANCES,
        &options,
        morph_progress,
    )?;
    if let (true, Some(ctx)) = (a.crowd, gpu.as_ref()) {
        report.crowd = throng_bench::crowd::run(
            ctx,
            &subjects[0],
            &throng_bench::crowd::CROWD_INSTANCES,
            &options,
            crowd_progress,
        )?;
        let n = throng_bench::crowd::CROWD_INSTANCES[0];
        report.far_cost = throng_bench::crowd::far_cost(ctx, &subjects[0], n, &options)?;
    }
    if let (true, Some(ctx)) = (a.game, gpu.as_ref()) {
        report.game = game(ctx, &subjects[0], &options)?;
    }
    print!("{}", report.table());
    if let Some(path) = &a.json {
        write_file(path, json(&report).as_bytes())?;
    }
    if let Some(path) = &a.plot {
        let svg = throng_bench::plot::svg(&report)
            .map_err(|e| CliError::Usage(format!("{}: the plot failed: {e}", path.display())))?;
        write_file(path, svg.as_bytes())?;
    }
    Ok(())
}

/// One line on stderr per measured row, so a long run shows it is alive.
fn progress(r: &Row) {
    let gpu = r.gpu.as_ref().and_then(|g| g.frame_ms.or(Some(g.pose_ms)));
    eprintln!(
        "measured {} / {} × {}: CPU {:.2} ms, rayon {:.2} ms, GPU {}",
        r.subject,
        r.shape.label(),
        r.instances,
        r.cpu.frame_ms,
        r.cpu_rayon.frame_ms,
        gpu.map_or("-".into(), |ms| format!("{ms:.2} ms"))
    );
}

/// The game table, a line on stderr per row as it is measured.
fn game(
    ctx: &throng_gpu::GpuContext,
    subject: &Subject,
    options: &Options,
) -> Result<Vec<throng_bench::GameRow>, CliError> {
    let progress = |r: &throng_bench::GameRow| {
        eprintln!(
            "measured game {} × {} on {} thread(s): tick {:.1} ns, host {:.1} ns, {:.1} B per instance per frame",
            r.subject, r.instances, r.threads, r.tick_ns, r.host_ns, r.upload_bytes
        );
    };
    Ok(throng_bench::game::run(
        ctx,
        subject,
        &throng_bench::game::GAME_INSTANCES,
        options,
        progress,
    )?)
}

/// One line on stderr per measured crowd row.
fn control_progress(r: &throng_bench::ControlRow) {
    eprintln!(
        "measured control {} ({} tree, {} socket(s)) × {} on {} thread(s): {:.0} ns per instance per tick",
        r.subject, r.tree, r.sockets, r.instances, r.threads, r.ns_per_instance_tick
    );
}

fn morph_progress(r: &throng_bench::MorphRow) {
    let (cpu, gpu) = r.ratios();
    eprintln!(
        "measured morph targets {} × {} with {} active: CPU {:.3}×, GPU {}",
        r.subject,
        r.instances,
        r.active_targets,
        cpu,
        gpu.map_or("-".into(), |g| format!("{g:.3}×"))
    );
}

fn lod_progress(r: &throng_bench::LodRow) {
    eprintln!(
        "measured skeleton LOD {} / {} × {} at level {} ({} joints): {:.2} ms",
        r.subject,
        r.shape.label(),
        r.instances,
        r.level,
        r.joints,
        r.pose_ms
    );
}

fn crowd_progress(r: &throng_bench::CrowdRow) {
    eprintln!(
        "measured crowd {} × {} ({}): {}",
        r.subject,
        r.instances,
        match (r.lod, r.far) {
            (true, true) => "crowd path, far tier",
            (true, false) => "crowd path",
            _ => "full detail",
        },
        r.frame_ms.map_or_else(
            || r.skipped.clone().unwrap_or_default(),
            |ms| format!("{ms:.1} ms")
        )
    );
}

/// One line on stderr per measured codec row.
fn codec_progress(r: &CodecRow) {
    let (a, b) = (&r.reference, &r.compressed);
    let gpu = |e: &throng_bench::codec::Encoding| {
        e.gpu_program_ms
            .or(e.gpu_pose_ms)
            .map_or("-".into(), |ms| format!("{ms:.3} ms"))
    };
    let fill = match (b.gpu_fill_decode_ms, b.fill_decoded_samples) {
        (Some(ms), Some(samples)) if samples > 0 => {
            format!("; filling the decode cache: {ms:.3} ms for {samples} samples")
        }
        _ => String::new(),
    };
    eprintln!(
        "measured codec {} / {} × {}: CPU {:.2} / {:.2} ms, GPU {} / {} (reference / compressed){fill}",
        r.subject,
        r.shape.label(),
        r.instances,
        a.cpu_pose_ms,
        b.cpu_pose_ms,
        gpu(a),
        gpu(b)
    );
}

fn json(report: &Report) -> String {
    serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
