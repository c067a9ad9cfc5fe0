//! `throng motion-database`: clips (BVH or glTF) retargeted onto a character, cooked, and a
//! motion-matching database built from them (throng_cook::motion_db) and written into the
//! character's package; the report gives the rows per clip and tag, and checks the fast search
//! against the exhaustive one on queries near every database frame, timing both in one run.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use throng_cook::motion_db::{cook_database, CookDatabaseError, DatabaseSettings};
use throng_cook::retarget::RetargetProfile;
use throng_cook::Profile;
use throng_cpu_ref::motion_db::{tag, Filter, MotionDatabase, FEATURES, GROUPS};

use super::{import_any, is_bvh, print_json, write_file, BvhArgs, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// Clips for the database: .bvh, .glb or .gltf files (every clip of each).
    #[arg(required = true)]
    clips: Vec<PathBuf>,
    /// Target character (.glb or .gltf).
    #[arg(long)]
    onto: PathBuf,
    /// Retarget profile (TOML, docs/retargeting.md) with a root-motion request, e.g.
    /// fixtures/retarget/cmu-to-character.toml.
    #[arg(long)]
    profile: PathBuf,
    /// Output package: the character with the clips and the database.
    #[arg(short, long)]
    out: PathBuf,
    /// Quality profile the clips are cooked with.
    #[arg(long = "quality", default_value = "standard")]
    quality: String,
    /// A clip of the target character that stands still (an idle), added to the database by
    /// name; it needs no root motion. Repeatable.
    #[arg(long = "idle", value_name = "CLIP")]
    idle: Vec<String>,
    #[command(flatten)]
    bvh: BvhArgs,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Queries per database frame in the search check.
const QUERY_STRIDE: usize = 3;

pub fn run(args: Args) -> Result<(), CliError> {
    let quality = Profile::parse(&args.quality)?;
    let profile = RetargetProfile::load(&args.profile)?;
    let target = throng_cook::import_file(&args.onto)?;
    // `--bvh-*` reads the BVH files among the clips; with none, it is refused.
    let any_bvh = args.clips.iter().any(|p| is_bvh(p));
    let sources = (args.clips.iter())
        .map(|path| match any_bvh && !is_bvh(path) {
            true => import_any(path, &BvhArgs::default()),
            false => import_any(path, &args.bvh),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let package = cook_database(
        target,
        &sources,
        &profile,
        &quality,
        &args.idle,
        &DatabaseSettings::default(),
    )
    .map_err(|e| match e {
        CookDatabaseError::NoRootMotionRequest => {
            CliError::Usage(format!("{}: {e}", args.profile.display()))
        }
        CookDatabaseError::NoIdle { .. } => {
            CliError::Usage(format!("--idle: {}: {e}", args.onto.display()))
        }
        e => CliError::Usage(e.to_string()),
    })?;
    let check = check_search(&package.motion_databases[0]);
    let bytes = throng_cook::write_package(&package);
    write_file(&args.out, &bytes)?;
    let database = &package.motion_databases[0];
    let rows_per_clip: Vec<serde_json::Value> = database
        .clips
        .iter()
        .map(|c| {
            json!({
                "name": package.clips[c.clip as usize].name,
                "frames": c.frames,
                "playable": c.playable,
            })
        })
        .collect();
    let tags: serde_json::Map<String, serde_json::Value> = tag::NAMES
        .iter()
        .enumerate()
        .map(|(b, name)| {
            let n = database.tags.iter().filter(|&&t| t & (1 << b) != 0).count();
            (name.to_string(), json!(n))
        })
        .collect();
    let report = json!({
        "package": { "path": args.out, "bytes": bytes.len() },
        "rate": database.rate,
        "horizons_s": database.horizons,
        "features": FEATURES,
        "groups": GROUPS.iter().zip(&database.weights).map(|((name, r), w)| json!({
            "name": name, "floats": r.len(), "weight": w,
        })).collect::<Vec<_>>(),
        "frames": database.rows.len(),
        "clips": rows_per_clip,
        "tags": tags,
        "search": {
            "frames": database.rows.len(),
            "queries": check.queries,
            "exhaustive_us": check.exhaustive_us,
            "fast_us": check.fast_us,
            "disagreements": check.disagreements,
        },
    });
    if args.json {
        print_json(&report);
        return Ok(());
    }
    println!(
        "motion database: {} frames of {} clips at {} Hz onto {} ({} bytes written to {})",
        database.rows.len(),
        database.clips.len(),
        database.rate,
        args.onto.display(),
        bytes.len(),
        args.out.display()
    );
    for c in &database.clips {
        println!(
            "  {:<24} {:5} frames, {:5} playable",
            package.clips[c.clip as usize].name, c.frames, c.playable
        );
    }
    let tag_text: Vec<String> = tags.iter().map(|(k, v)| format!("{k} {v}")).collect();
    println!("  tags: {}", tag_text.join(", "));
    println!(
        "  search: {} queries, exhaustive {:.2} us, fast {:.2} us per query ({:.3}x), {} disagreements",
        check.queries,
        check.exhaustive_us,
        check.fast_us,
        check.fast_us / check.exhaustive_us.max(f64::MIN_POSITIVE),
        check.disagreements
    );
    Ok(())
}

/// The fast search against the exhaustive one in the same run.
pub struct SearchCheck {
    pub queries: usize,
    pub exhaustive_us: f64,
    pub fast_us: f64,
    pub disagreements: usize,
}

/// Queries near every [`QUERY_STRIDE`]th frame (its raw features moved by a deterministic
/// offset of about a tenth of each group's spread), the frame after it as the search's start
/// (the frame a character playing it would be on), each search timed over all queries.
pub fn check_search(database: &MotionDatabase) -> SearchCheck {
    let queries: Vec<([f32; FEATURES], u32)> = (0..database.rows.len())
        .step_by(QUERY_STRIDE)
        .map(|r| {
            let raw = database.raw(r).unwrap_or([0.0; FEATURES]);
            let moved: [f32; FEATURES] = std::array::from_fn(|f| {
                let spread = if database.scale[f] != 0.0 {
                    1.0 / database.scale[f].abs()
                } else {
                    0.0
                };
                raw[f] + 0.1 * spread * ((r * 7 + f * 13) as f32).sin()
            });
            (database.normalize(&moved), (r + 1) as u32)
        })
        .collect();
    let start = Instant::now();
    let exhaustive: Vec<_> = queries
        .iter()
        .map(|(q, _)| database.search_exhaustive(q, &Filter::tags(0)))
        .collect();
    let exhaustive_us = start.elapsed().as_secs_f64() * 1e6 / queries.len().max(1) as f64;
    let start = Instant::now();
    let fast: Vec<_> = queries
        .iter()
        .map(|(q, s)| database.search(q, &Filter::tags(0), Some(*s)))
        .collect();
    let fast_us = start.elapsed().as_secs_f64() * 1e6 / queries.len().max(1) as f64;
    SearchCheck {
        queries: queries.len(),
        exhaustive_us,
        fast_us,
        disagreements: exhaustive.iter().zip(&fast).filter(|(a, b)| a != b).count(),
    }
}
