//! Resampling (stub; the import work fills this in).
use crate::{CookError, CookReport, Imported, Profile};
use throng_cpu_ref::Package;

pub fn cook(imported: &Imported, profile: &Profile) -> Result<(Package, CookReport), CookError> {
    let _ = (imported, profile);
    todo!()
}
