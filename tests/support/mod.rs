//! What the command-line tests share: running the binary, and the honest GPU skip.

#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs the `throng` binary with `args`.
pub fn throng(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_throng"))
        .args(args)
        .output()
        .expect("the throng binary runs")
}

/// True (with the reason printed) when the run failed for want of an adapter and
/// THRONG_ALLOW_NO_GPU=1; GPU tests fail otherwise (DESIGN.md §9).
pub fn skipped_for_no_gpu(out: &Output) -> bool {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let skip = !out.status.success()
        && stderr.contains("Vulkan adapter")
        && std::env::var("THRONG_ALLOW_NO_GPU").as_deref() == Ok("1");
    if skip {
        eprintln!("skipping: {stderr} (THRONG_ALLOW_NO_GPU=1)");
    }
    skip
}
