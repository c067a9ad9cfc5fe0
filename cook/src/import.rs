//! glTF import (stub signatures; the import work fills this in).
use std::path::Path;
use throng_cpu_ref::{Package, SourceClip};
use thiserror::Error;

/// What a glTF file holds, before cooking: skeletons, skins and meshes in a package with no clips,
/// the source curves of every animation per skeleton, and warnings for the report.
#[derive(Clone, Debug)]
pub struct Imported {
    /// Display name of the source (the file path).
    pub source: String,
    pub package: Package,
    pub source_clips: Vec<SourceClip>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Error)]
pub enum CookError {
    #[error("{0}")]
    Todo(String),
}

pub fn import_file(path: &Path) -> Result<Imported, CookError> {
    let _ = path;
    todo!()
}

pub fn import_slice(bytes: &[u8], source: &str) -> Result<Imported, CookError> {
    let _ = (bytes, source);
    todo!()
}
