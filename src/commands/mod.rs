//! Subcommands. Each returns a [`CliError`] that `main` prints as one line.

mod character;
mod cook;
mod inspect;
mod pose;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use thiserror::Error;

#[derive(Parser)]
#[command(name = "throng", version, about = "Crowd animation on the GPU, checked against a CPU reference")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Cook a glTF file (.glb or .gltf) into a .throng package and print the cook report.
    Cook(cook::Args),
    /// Print what a .throng package holds.
    Inspect(inspect::Args),
    /// Pose one skin at one clip time on the CPU reference and print joints, palette and vertices.
    Pose(pose::Args),
    /// Write the built-in generated character as a .glb.
    Character(character::Args),
}

pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Cook(a) => cook::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Pose(a) => pose::run(a),
        Command::Character(a) => character::run(a),
    }
}

#[derive(Debug, Error)]
pub enum CliError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Cook(#[from] throng_cook::CookError),
    #[error("{path}: {source}")]
    Package { path: PathBuf, source: throng_cook::PackageError },
    #[error(transparent)]
    Program(#[from] throng_cpu_ref::ProgramError),
    #[error("{0}")]
    Usage(String),
}

fn read_file(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|source| CliError::Io { path: path.to_owned(), source })
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| CliError::Io { path: dir.to_owned(), source })?;
    }
    std::fs::write(path, bytes).map_err(|source| CliError::Io { path: path.to_owned(), source })
}

/// Reads and checks a .throng package.
fn load_package(path: &Path) -> Result<throng_cpu_ref::Package, CliError> {
    let bytes = read_file(path)?;
    throng_cook::read_package(&bytes).map_err(|source| CliError::Package { path: path.to_owned(), source })
}

fn print_json(value: &serde_json::Value) {
    println!("{}", serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")));
}
