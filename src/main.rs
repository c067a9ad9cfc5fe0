//! The `throng` command-line tool: a thin layer over the workspace crates.

mod commands;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Input errors are typed and printed as one line; a panic is a bug, and even then the user
    // gets one line rather than a backtrace dump.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("error: internal error ({info}); please report this with the command you ran");
    }));
    let cli = commands::Cli::parse();
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
