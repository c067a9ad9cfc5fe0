//! `throng cook`: glTF or BVH in, checked package out, with the cook report; `--report` adds the
//! codec's report (sizes against 40 bytes per joint-sample, error against the uncompressed clip).

use std::path::PathBuf;

use throng_cook::Profile;

use super::{import_any, print_json, write_file, BvhArgs, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// Source: a glTF file (.glb or .gltf), or a BVH motion capture file (.bvh: one skeleton and
    /// one clip, no skin).
    input: PathBuf,
    #[command(flatten)]
    bvh: BvhArgs,
    /// Output package path (optional with --report).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Quality profile: hero, standard or crowd (sample rate and codec thresholds).
    #[arg(long, default_value = "standard")]
    profile: String,
    /// Clip encoding: `compressed` (the codec, docs/codec.md) or `reference` (uncompressed f32).
    #[arg(long, default_value = "compressed", value_parser = ["compressed", "reference"])]
    codec: String,
    /// Keep this joint (and its ancestors) at every skeleton LOD level: a socket, an IK chain's
    /// end; repeatable, added to the sidecar's `[lod] pins`. The root is always kept.
    #[arg(long = "lod-pin", value_name = "JOINT")]
    lod_pins: Vec<String>,
    /// Print the codec report (per clip and total: raw and compressed bytes, ratio, bytes per
    /// joint-sample, max / p99 / mean error, worst joint and time, encode time, bit widths, and
    /// where the compressed bytes go).
    #[arg(long)]
    report: bool,
    /// Print the report as JSON instead of a table (with --report: the codec report, whose
    /// `clips` and `total` carry name, raw_bytes, compressed_bytes, ratio, bytes_per_joint_sample,
    /// max_error_cm, p99_error_cm and bytes, the breakdown).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let profile = Profile::parse(&args.profile)?;
    if args.out.is_none() && !args.report {
        return Err(CliError::Usage("give --out PATH, --report, or both".into()));
    }
    if args.report && args.codec == "reference" {
        return Err(CliError::Usage(
            "--report describes the codec; it needs --codec compressed".into(),
        ));
    }
    let imported = import_any(&args.input, &args.bvh)?;
    let (mut package, mut report) = throng_cook::cook(&imported, &profile)?;
    if !args.lod_pins.is_empty() {
        let mut pins: Vec<String> = imported.lod_pins.iter().map(|p| p.value.clone()).collect();
        pins.extend(args.lod_pins.iter().cloned());
        let levels = throng_cook::lod::build_lods(&mut package, &pins)?;
        for (skeleton, levels) in report.skeletons.iter_mut().zip(levels) {
            skeleton.lods = levels;
        }
    }
    if args.codec == "compressed" {
        throng_cook::compress(&mut package, &mut report, &profile);
    }
    let written = match &args.out {
        Some(out) => {
            let bytes = throng_cook::write_package(&package);
            write_file(out, &bytes)?;
            Some((out, bytes.len()))
        }
        None => None,
    };
    let package_json =
        written.map(|(path, bytes)| serde_json::json!({ "path": path, "bytes": bytes }));
    match (args.report, args.json) {
        (true, true) => {
            let mut value =
                serde_json::to_value(&report.codec).map_err(|e| CliError::Usage(e.to_string()))?;
            value["source"] = serde_json::json!(report.source);
            value["package"] = package_json.unwrap_or_default();
            print_json(&value);
        }
        (false, true) => {
            let mut value =
                serde_json::to_value(&report).map_err(|e| CliError::Usage(e.to_string()))?;
            value["package"] = package_json.unwrap_or_default();
            print_json(&value);
        }
        (report_only, false) => {
            print!("{report}");
            if let (true, Some(codec)) = (report_only, &report.codec) {
                print!("{codec}");
            }
            if let Some((path, bytes)) = written {
                println!("wrote {} ({bytes} bytes)", path.display());
            }
        }
    }
    Ok(())
}
