//! Throng: crowd animation on the GPU with a scalar CPU reference as its oracle.
//!
//! This facade re-exports the workspace crates; the `throng` binary is a thin command-line tool
//! over them (`throng --help`).

pub use throng_cook as cook;
pub use throng_cpu_ref as cpu_ref;
pub use throng_fixtures as fixtures;
pub use throng_gpu as gpu;
