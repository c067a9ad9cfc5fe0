//! `throng cook`: glTF in, checked package out, with the cook report.

use std::path::PathBuf;

use throng_cook::Profile;

use super::{print_json, write_file, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// Source glTF file (.glb or .gltf).
    input: PathBuf,
    /// Output package path.
    #[arg(short, long)]
    out: PathBuf,
    /// Quality profile: hero, standard or crowd.
    #[arg(long, default_value = "standard")]
    profile: String,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let profile = Profile::parse(&args.profile)?;
    let (package, report) = throng_cook::cook_file(&args.input, &profile)?;
    let bytes = throng_cook::write_package(&package);
    write_file(&args.out, &bytes)?;
    if args.json {
        let mut value = serde_json::to_value(&report).map_err(|e| CliError::Usage(e.to_string()))?;
        value["package"] = serde_json::json!({ "path": args.out, "bytes": bytes.len() });
        print_json(&value);
    } else {
        print!("{report}");
        println!("wrote {} ({} bytes)", args.out.display(), bytes.len());
    }
    Ok(())
}
