//! `throng character`: write the built-in generated character.

use std::path::PathBuf;

use super::{write_file, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// Output .glb path.
    #[arg(short, long, default_value = "out/character.glb")]
    out: PathBuf,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let bytes = throng_fixtures::character_glb();
    write_file(&args.out, &bytes)?;
    println!(
        "wrote {} ({} bytes): the generated character, clips {}",
        args.out.display(),
        bytes.len(),
        throng_fixtures::CHARACTER_CLIPS.join(", ")
    );
    Ok(())
}
