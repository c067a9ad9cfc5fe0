//! Shared by the cook tests that read `../shared/assets/`.

use std::path::{Path, PathBuf};

/// The shared assets folder, or `None` (with a printed reason) when it is absent and not
/// required (`THRONG_REQUIRE_ASSETS=1` makes its absence a failure).
pub fn assets() -> Option<PathBuf> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/assets"));
    if dir.is_dir() {
        return Some(dir.to_path_buf());
    }
    if std::env::var("THRONG_REQUIRE_ASSETS").as_deref() == Ok("1") {
        panic!("{} is missing and THRONG_REQUIRE_ASSETS=1", dir.display());
    }
    eprintln!(
        "skipping: {} not found (set THRONG_REQUIRE_ASSETS=1 to fail instead)",
        dir.display()
    );
    None
}
