//! What the command-line tests share: running the binary and the examples, and the honest GPU
//! skip.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `throng` binary with `args`.
pub fn throng(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_throng"))
        .args(args)
        .output()
        .expect("the throng binary runs")
}

/// A scratch folder `name` in Cargo's temporary folder for tests.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A run's standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
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

/// Example `name`'s binary, built by `cargo test` next to the test's.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(std::path::Path::parent).unwrap();
    let path = dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: `cargo test` builds it, or `cargo build --example {name}`",
        path.display()
    );
    path
}
