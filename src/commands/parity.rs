//! `throng parity`: random valid programs evaluated on the GPU and on the CPU reference; reports
//! the worst error per stage against DESIGN.md §6 and fails when any exceeds its tolerance.

use std::path::PathBuf;

use throng_gpu::parity::{self, PackageUnderTest, Path};
use throng_gpu::{GpuContext, Mapping};

use super::demo::MappingArg;
use super::{builtin_character, load_any, print_json, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// Extra assets to check besides the generated character (.glb, .gltf or .throng); repeatable.
    #[arg(long)]
    asset: Vec<PathBuf>,
    /// Seed of the random programs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Instances per skeleton (one of them a hero with a CPU palette).
    #[arg(long, default_value_t = 16)]
    instances: u32,
    /// Check only the specialised pipelines of this mapping (`thread` or `workgroup`); by
    /// default the interpreter and both mappings are checked, one frame each.
    #[arg(long, value_enum, conflicts_with = "interpreter")]
    mapping: Option<MappingArg>,
    /// Check only the general interpreter.
    #[arg(long)]
    interpreter: bool,
    /// Also check retained instances presented at these fractions of a tick (on the first
    /// path checked), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0,0.25,0.5,1")]
    present: Vec<f32>,
    /// Check frames of batches alone: no presented instances.
    #[arg(long, conflicts_with = "present")]
    no_present: bool,
    /// Print the reports as a JSON array (one per path).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let mut packages = vec![("character".to_string(), builtin_character()?)];
    for path in &args.asset {
        packages.push((path.display().to_string(), load_any(path)?));
    }
    let under_test: Vec<PackageUnderTest> = packages
        .iter()
        .map(|(name, package)| PackageUnderTest { name, package })
        .collect();
    let ctx = GpuContext::new()?;
    let paths = match (args.interpreter, args.mapping) {
        (true, _) => vec![Path::Interpreter],
        (false, Some(m)) => vec![Path::Specialised(m.into())],
        (false, None) => vec![
            Path::Interpreter,
            Path::Specialised(Mapping::Thread),
            Path::Specialised(Mapping::Workgroup),
        ],
    };
    if let Some(bad) = args.present.iter().find(|a| !(0.0..=1.0).contains(*a)) {
        return Err(CliError::Usage(format!(
            "--present {bad}: a presented fraction lies in 0..=1"
        )));
    }
    let mut reports = Vec::new();
    let fractions = if args.no_present {
        &[][..]
    } else {
        &args.present
    };
    let presented = fractions.iter().map(|&alpha| (paths[0], Some(alpha)));
    for (path, present) in paths.iter().map(|&p| (p, None)).chain(presented) {
        let (seed, n) = (args.seed, args.instances);
        let report = match present {
            None => parity::run(&ctx, &under_test, seed, n, path)?,
            Some(alpha) => parity::run_presented(&ctx, &under_test, seed, n, path, alpha)?,
        };
        if !args.json {
            println!("{report}");
        }
        reports.push(report);
    }
    if args.json {
        print_json(&serde_json::to_value(&reports).map_err(|e| CliError::Usage(e.to_string()))?);
    }
    if reports.iter().all(|r| r.pass) {
        Ok(())
    } else {
        Err(CliError::ParityFailed)
    }
}
