//! The `throng` command-line tool: a thin layer over the workspace crates.

mod commands;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Input errors are typed and printed as one line; a panic is a bug, and even then the user
    // gets one line rather than a backtrace dump.
    std::panic::set_hook(Box::new(|info| {
        // A reader that stops early (`throng inspect … | head`) closes the pipe: stop quietly
        // with the status a shell gives SIGPIPE, as Unix tools do, instead of calling it a bug.
        let text = info.to_string();
        if text.contains("failed printing to stdout") && text.contains("Broken pipe") {
            std::process::exit(141);
        }
        eprintln!("error: internal error ({info}); please report this with the command you ran");
    }));
    quiet_mesa_without_a_session();
    let cli = commands::Cli::parse();
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Mesa's Vulkan drivers print "error: XDG_RUNTIME_DIR is invalid or not set" on headless
/// machines (CI, containers) although nothing here needs a display session. Point it at the
/// temp dir before any thread starts, so the only "error:" lines users see are ours.
fn quiet_mesa_without_a_session() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir());
    }
}
