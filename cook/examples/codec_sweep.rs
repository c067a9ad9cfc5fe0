//! The codec's ratio against its error threshold and sample rate, measured the way ACL reports
//! its own (issue 13: ACL's CMU figures are at 24 FPS, with a p99 near its 0.01 cm threshold and
//! a max error above it; Frechette, "Carnegie-Mellon University database performance",
//! https://github.com/nfrechette/acl/blob/develop/docs/cmu_performance.md).
//!
//! For each rate and threshold: every clip of the files cooked at that rate (key-aligned clips
//! brought to the rate or below, as `--max-rate` does for `codec_headroom`), compressed with
//! every joint held to the threshold, and measured against its reference clip with the cook
//! report's metric (virtual vertices 3 cm out, at every sample and halfway between). Prints, over
//! all the clips, the ratio against the raw size at that rate, max and p99 error, and the share
//! of vertex errors at or below 0.01 cm (ACL's "samples below error threshold"), and the bytes
//! per sample of an animated sub-track (which, unlike the ratio, does not depend on how many of a
//! rig's sub-tracks are constant or at rest).
//!
//! `cargo run --release -p throng-cook --example codec_sweep -- --rates 60,24
//! --thresholds 0.01,0.02,0.04 FILE.glb...`

use throng_cook::codec::{encode_clip, measure, percentile};
use throng_cook::package::payload_bytes;
use throng_cook::profile::{CodecSettings, IMPORTANT_JOINTS};
use throng_cook::report::{rest_extent, RAW_JOINT_SAMPLE_BYTES};
use throng_cook::{cook, import_file, Profile};
use throng_cpu_ref::SubTrackKind;

fn list(arg: Option<&String>, what: &str) -> Result<Vec<f32>, String> {
    let arg = arg.ok_or(format!("{what} needs a comma-separated list"))?;
    arg.split(',')
        .map(|x| x.parse().map_err(|e| format!("{what} {x}: {e}")))
        .collect()
}

fn main() {
    if let Err(e) = run() {
        eprintln!("codec_sweep: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let (mut rates, mut thresholds) = (vec![60.0], vec![0.01]);
    while args.first().is_some_and(|a| a.starts_with("--")) {
        let flag = args.remove(0);
        match flag.as_str() {
            "--rates" => rates = list(args.first(), "--rates")?,
            "--thresholds" => thresholds = list(args.first(), "--thresholds")?,
            _ => return Err(format!("unknown option {flag}")),
        }
        args.remove(0);
    }
    for &rate in &rates {
        let profile = Profile {
            max_rate: rate,
            sample_rate: rate,
            ..Profile::STANDARD
        };
        let mut cooked = Vec::new();
        for path in &args {
            let imported = import_file(path.as_ref()).map_err(|e| format!("{path}: {e}"))?;
            let (package, _) = cook(&imported, &profile).map_err(|e| format!("{path}: {e}"))?;
            cooked.push(package);
        }
        let kinds = cooked
            .iter()
            .flat_map(|p| &p.clips)
            .flat_map(|c| &c.sub_tracks);
        let (all, animated) = kinds.fold((0, 0), |(n, a), t| {
            (n + 1, a + usize::from(t.kind == SubTrackKind::Animated))
        });
        println!(
            "{rate} Hz: {animated} of {all} sub-tracks animated ({:.1} %)",
            100.0 * animated as f64 / all.max(1) as f64
        );
        println!("| rate (Hz) | threshold (cm) | ratio | bytes per animated sub-track sample | max (cm) | p99 (cm) | errors ≤ 0.01 cm |");
        println!("|---|---|---|---|---|---|---|");
        for &threshold in &thresholds {
            let settings = CodecSettings {
                threshold_cm: threshold,
                important_cm: threshold,
                important: IMPORTANT_JOINTS,
            };
            let (mut raw, mut bytes, mut max) = (0u64, 0u64, 0f32);
            let mut animated_samples = 0u64;
            let mut errors = Vec::new();
            for package in &cooked {
                for clip in &package.clips {
                    let skeleton = (package.skeletons.get(clip.skeleton as usize))
                        .ok_or(format!("clip {}: no skeleton {}", clip.name, clip.skeleton))?;
                    let (settings, _) = settings.for_extent(rest_extent(skeleton));
                    let encoded = encode_clip(clip, skeleton, &settings)
                        .map_err(|e| format!("clip {}: {e}", clip.name))?;
                    let fidelity = measure(skeleton, clip, &encoded.clip, &mut errors);
                    max = max.max(fidelity.max_cm);
                    raw += RAW_JOINT_SAMPLE_BYTES
                        * skeleton.joint_count() as u64
                        * u64::from(clip.sample_count);
                    bytes += payload_bytes(&encoded.clip) as u64;
                    let animated = clip
                        .sub_tracks
                        .iter()
                        .filter(|t| t.kind == SubTrackKind::Animated);
                    animated_samples += animated.count() as u64 * u64::from(clip.sample_count);
                }
            }
            let below = errors.iter().filter(|&&e| e <= 0.01).count();
            let share = 100.0 * below as f64 / errors.len().max(1) as f64;
            println!(
                "| {rate} | {threshold} | {:.2} | {:.2} | {max:.4} | {:.4} | {share:.2} % |",
                raw as f64 / bytes.max(1) as f64,
                bytes as f64 / animated_samples.max(1) as f64,
                percentile(&mut errors, 0.99),
            );
        }
    }
    Ok(())
}
