//! `throng codec-profiles`: the codec's quality profiles side by side on the shared assets
//! (docs/codec.md, "Profiles measured"): per asset and profile, the ratio against 40 bytes per
//! joint-sample, the p99 and max error at virtual vertices 3 cm out against the uncompressed
//! cooked clip, and the CPU reference's decode time per joint in both encodings.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use throng_cook::Profile;
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::{Package, Trs};

use super::{print_json, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// The shared assets folder: its `mocap/*.glb`, `Fox.glb`, `KnightCharacter.glb` and
    /// `CesiumMan.glb` are measured.
    #[arg(long, default_value = "../shared/assets")]
    assets: PathBuf,
    /// Print the rows as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// One asset (or the mocap set) under one profile.
#[derive(Clone, Debug, Serialize)]
struct Row {
    asset: String,
    profile: &'static str,
    clips: usize,
    raw_bytes: u64,
    compressed_bytes: u64,
    ratio: f64,
    /// For the mocap set: the largest of its files' p99.
    p99_error_cm: f32,
    max_error_cm: f32,
    /// `sample_clip` of every clip at every mid-sample time, ns per joint, each encoding.
    reference_decode_ns_per_joint: f64,
    compressed_decode_ns_per_joint: f64,
}

const PROFILES: [Profile; 3] = [Profile::HERO, Profile::STANDARD, Profile::CROWD];
const MODELS: [&str; 3] = ["Fox.glb", "KnightCharacter.glb", "CesiumMan.glb"];

pub fn run(args: Args) -> Result<(), CliError> {
    let mocap_dir = args.assets.join("mocap");
    let mut mocap: Vec<PathBuf> = std::fs::read_dir(&mocap_dir)
        .map_err(|source| CliError::Io {
            path: mocap_dir.clone(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "glb"))
        .collect();
    mocap.sort();
    let models: Vec<PathBuf> = MODELS.iter().map(|m| args.assets.join(m)).collect();
    if let Some(missing) = models.iter().find(|p| !p.exists()) {
        return Err(CliError::Usage(format!(
            "{} is missing: give --assets the shared assets folder",
            missing.display()
        )));
    }
    let mut rows = Vec::new();
    for profile in &PROFILES {
        let mut set = Vec::new();
        for path in mocap.iter().chain(&models) {
            let row = measure(path, profile)?;
            eprintln!("measured {} ({})", row.asset, row.profile);
            if mocap.contains(path) {
                set.push(row.clone());
            }
            rows.push(row);
        }
        rows.extend(mocap_set(&set));
    }
    match args.json {
        true => print_json(&serde_json::json!({ "rows": rows })),
        false => print!("{}", table(&rows)),
    }
    Ok(())
}

/// `path` cooked and compressed under `profile`, its codec totals and decode times.
fn measure(path: &Path, profile: &Profile) -> Result<Row, CliError> {
    let imported = throng_cook::import_file(path)?;
    let (reference, mut report) = throng_cook::cook(&imported, profile)?;
    let mut compressed = reference.clone();
    throng_cook::compress(&mut compressed, &mut report, profile);
    let codec = report.codec.unwrap_or_default();
    // Alternated, the fastest of three each: the machine's drift falls on both.
    let (mut r, mut c) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        r = r.min(decode_ns_per_joint(&reference));
        c = c.min(decode_ns_per_joint(&compressed));
    }
    let t = &codec.total;
    Ok(Row {
        asset: path
            .file_stem()
            .map_or(String::new(), |s| s.to_string_lossy().into()),
        profile: profile.name,
        clips: codec.clips.len(),
        raw_bytes: t.raw_bytes,
        compressed_bytes: t.compressed_bytes,
        ratio: t.ratio,
        p99_error_cm: t.p99_error_cm,
        max_error_cm: t.max_error_cm,
        reference_decode_ns_per_joint: r,
        compressed_decode_ns_per_joint: c,
    })
}

/// The mocap files together: bytes summed, the largest errors, decode times weighed by bytes.
fn mocap_set(rows: &[Row]) -> Option<Row> {
    let first = rows.first()?;
    let raw: u64 = rows.iter().map(|r| r.raw_bytes).sum();
    let compressed: u64 = rows.iter().map(|r| r.compressed_bytes).sum();
    let mean = |f: fn(&Row) -> f64| {
        rows.iter().map(|r| f(r) * r.raw_bytes as f64).sum::<f64>() / raw.max(1) as f64
    };
    Some(Row {
        asset: format!("all {} mocap clips", rows.len()),
        profile: first.profile,
        clips: rows.iter().map(|r| r.clips).sum(),
        raw_bytes: raw,
        compressed_bytes: compressed,
        ratio: throng_cook::report::ratio(raw, compressed),
        p99_error_cm: rows.iter().map(|r| r.p99_error_cm).fold(0.0, f32::max),
        max_error_cm: rows.iter().map(|r| r.max_error_cm).fold(0.0, f32::max),
        reference_decode_ns_per_joint: mean(|r| r.reference_decode_ns_per_joint),
        compressed_decode_ns_per_joint: mean(|r| r.compressed_decode_ns_per_joint),
    })
}

/// `sample_clip` of every clip of `package` halfway between every pair of samples, repeated for
/// at least 20 ms: ns per joint.
fn decode_ns_per_joint(package: &Package) -> f64 {
    let mut pose = Vec::new();
    let (mut joints, start) = (0u64, Instant::now());
    while joints == 0 || start.elapsed() < Duration::from_millis(20) {
        for clip in &package.clips {
            let Some(skeleton) = package.skeletons.get(clip.skeleton as usize) else {
                continue;
            };
            pose.resize(skeleton.joint_count(), Trs::default());
            for i in 0..clip.sample_count.max(1) {
                let time = (i as f32 + 0.5) / clip.sample_rate;
                sample_clip(clip, skeleton, black_box(time), &mut pose);
                black_box(&pose);
                joints += pose.len() as u64;
            }
        }
        if joints == 0 {
            return 0.0;
        }
    }
    start.elapsed().as_secs_f64() * 1e9 / joints as f64
}

fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| asset | profile | clips | ratio | p99 (cm) | max (cm) | decode ns/joint, reference | compressed | compressed / reference |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let over = r.compressed_decode_ns_per_joint / r.reference_decode_ns_per_joint.max(1e-9);
        out += &format!(
            "| {} | {} | {} | {:.2} | {:.5} | {:.5} | {:.1} | {:.1} | {:.2}× |\n",
            r.asset,
            r.profile,
            r.clips,
            r.ratio,
            r.p99_error_cm,
            r.max_error_cm,
            r.reference_decode_ns_per_joint,
            r.compressed_decode_ns_per_joint,
            over
        );
    }
    out
}
