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
    let mut reports = Vec::new();
    for path in paths {
        let report = parity::run(&ctx, &under_test, args.seed, args.instances, path)?;
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
