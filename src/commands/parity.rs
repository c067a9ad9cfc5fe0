//! `throng parity`: random valid programs evaluated on the GPU and on the CPU reference; reports
//! the worst error per stage against DESIGN.md §6 and fails when any exceeds its tolerance.

use std::path::PathBuf;

use throng_gpu::parity::{self, PackageUnderTest};
use throng_gpu::GpuContext;

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
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let mut packages = vec![("character".to_string(), builtin_character()?)];
    for path in &args.asset {
        packages.push((path.display().to_string(), load_any(path)?));
    }
    let under_test: Vec<PackageUnderTest> =
        packages.iter().map(|(name, package)| PackageUnderTest { name, package }).collect();
    let ctx = GpuContext::new()?;
    let report = parity::run(&ctx, &under_test, args.seed, args.instances)?;
    if args.json {
        print_json(&serde_json::to_value(&report).map_err(|e| CliError::Usage(e.to_string()))?);
    } else {
        print!("{report}");
    }
    if report.pass {
        Ok(())
    } else {
        Err(CliError::ParityFailed)
    }
}
