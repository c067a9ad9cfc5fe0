//! Throng's offline cook: glTF 2.0 import and validation, uniform resampling by quality profile,
//! sub-track classification, measured cooking error, and the versioned package writer and
//! checked reader.

pub mod import;
pub mod package;
pub mod profile;
pub mod report;
pub mod resample;

pub use import::{import_file, import_slice, CookError, Imported};
pub use package::{read_package, write_package, PackageError};
pub use profile::Profile;
pub use report::CookReport;
pub use resample::cook;

/// Imports a glTF file and cooks it with `profile`: the package and its report.
pub fn cook_file(path: &std::path::Path, profile: &Profile) -> Result<(throng_cpu_ref::Package, CookReport), CookError> {
    let imported = import_file(path)?;
    cook(&imported, profile)
}
