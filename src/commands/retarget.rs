//! `throng retarget`: clips of one rig rebuilt on another at cook time and baked into the target
//! package (docs/retargeting.md), with a report per clip.

use std::path::PathBuf;

use throng_cook::retarget::{self, report, RetargetProfile, Source};
use throng_cook::Profile;

use super::{load_package, print_json, write_file, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// Source of the clips: a .glb / .gltf, or a .throng package whose clips keep their motion
    /// (no root motion extracted).
    source: PathBuf,
    /// Target character (.glb or .gltf): its skeleton, skins and meshes, and its own clips.
    #[arg(long)]
    onto: PathBuf,
    /// Retarget profile (TOML, docs/retargeting.md), e.g. fixtures/retarget/cmu-to-character.toml.
    #[arg(long)]
    profile: PathBuf,
    /// Output package: the target with the retargeted clips added (optional with --report).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Retarget only this source clip; repeatable (default: every clip).
    #[arg(long = "clip", value_name = "NAME")]
    clips: Vec<String>,
    /// Quality profile the retargeted clips are cooked and compressed with.
    #[arg(long = "quality", default_value = "standard")]
    quality: String,
    /// Print the report per clip: bone-direction error per chain (degrees, mean and max), foot
    /// sliding during the source's contacts (cm), root-speed ratio, cook and codec error.
    #[arg(long)]
    report: bool,
    /// Print the report as JSON (a `clips` list with `name`, `direction_error_deg` {`mean`,
    /// `max`}, `foot_slide_cm`, `root_speed_ratio`, ...).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.out.is_none() && !args.report {
        return Err(CliError::Usage("give --out PATH, --report, or both".into()));
    }
    let quality = Profile::parse(&args.quality)?;
    let profile = RetargetProfile::load(&args.profile)?;
    let source = if args
        .source
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("throng"))
    {
        Source::from_package(
            load_package(&args.source)?,
            &args.source.display().to_string(),
        )?
    } else {
        Source::from_imported(&throng_cook::import_file(&args.source)?)
    };
    let target = throng_cook::import_file(&args.onto)?;
    let (imported, binding) = retarget::retarget(&profile, &source, &target, &args.clips)?;
    let (mut package, mut cooked) = throng_cook::cook(&imported, &quality)?;
    throng_cook::compress(&mut package, &mut cooked, &quality);
    let measured = report::measure(&binding, &source, &package, &cooked, &profile.file);
    if let Some(out) = &args.out {
        write_file(out, &throng_cook::write_package(&package))?;
    }
    if args.json {
        let value = serde_json::to_value(&measured).map_err(|e| CliError::Usage(e.to_string()))?;
        print_json(&value);
    } else {
        if args.report {
            print!("{measured}");
        }
        if let Some(out) = &args.out {
            println!(
                "wrote {} ({} clips retargeted)",
                out.display(),
                measured.clips.len()
            );
        }
    }
    Ok(())
}
