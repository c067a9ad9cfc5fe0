//! Package writer and checked reader (stub signatures; the package work fills this in).
use throng_cpu_ref::Package;
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum PackageError {
    #[error("todo")]
    Todo,
}

pub fn write_package(package: &Package) -> Vec<u8> {
    let _ = package;
    todo!()
}

pub fn read_package(bytes: &[u8]) -> Result<Package, PackageError> {
    let _ = bytes;
    todo!()
}
