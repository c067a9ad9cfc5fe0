//! Subcommands. Each returns a [`CliError`] that `main` prints as one line.

mod allocations;
mod bake;
mod bench;
mod character;
mod codec_profiles;
mod cook;
mod demo;
mod feet;
mod follow;
mod inspect;
mod motion_database;
mod parity;
mod pose;
mod retarget;
mod simulate;
mod soak;
mod steer;
mod view;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use thiserror::Error;

#[derive(Parser)]
#[command(
    name = "throng",
    version,
    about = "Crowd animation on the GPU, checked against a CPU reference"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Cook a glTF file (.glb or .gltf) into a .throng package and print the cook report.
    Cook(cook::Args),
    /// Measure the codec's hero, standard and crowd profiles on the shared assets: ratio, error
    /// and CPU decode time per joint in both encodings (docs/codec.md).
    CodecProfiles(codec_profiles::Args),
    /// Retarget clips from one rig onto another character at cook time and write its package.
    Retarget(retarget::Args),
    /// Build a motion-matching database from clips (BVH or glTF) retargeted onto a character
    /// and write it into the character's package (docs/motion-matching.md).
    MotionDatabase(motion_database::Args),
    /// Run one motion-matched agent along a path on the fixed tick and report how closely it
    /// follows, how its feet slide and how the search did (docs/motion-matching.md).
    Follow(follow::Args),
    /// Print what a .throng package holds.
    Inspect(inspect::Args),
    /// Pose one skin at one clip time on the CPU reference and print joints, palette and vertices.
    Pose(pose::Args),
    /// Write the built-in generated character as a .glb.
    Character(character::Args),
    /// Check GPU evaluation against the CPU reference on random programs (DESIGN.md §6).
    Parity(parity::Args),
    /// Bake a skin's clips into an impostor atlas (PNG) for the far tier, rendered on the GPU
    /// from views around the up axis, and write the impostor into the package.
    BakeImpostors(bake::Args),
    /// Measure the CPU reference (one thread and rayon) and the GPU path on crowds (docs/benchmark.md).
    Bench(bench::Args),
    /// Render a headless crowd evaluated on the GPU to PNG and print adapter, stage times and bytes.
    Demo(demo::Args),
    /// Run one state-tree instance headless on the fixed tick: states, players, events, root motion.
    Simulate(simulate::Args),
    /// Run a crowd for minutes while packages are replaced live, members come and go and bad
    /// input is offered; check parity and determinism, memory and allocations (docs/reliability.md).
    Soak(soak::Args),
    /// Watch a crowd in a window: orbit camera, play, pause and step the tick, members, LOD tint, stage times.
    View(view::Args),
}

pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Cook(a) => cook::run(a),
        Command::CodecProfiles(a) => codec_profiles::run(a),
        Command::Retarget(a) => retarget::run(a),
        Command::MotionDatabase(a) => motion_database::run(a),
        Command::Follow(a) => follow::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Pose(a) => pose::run(a),
        Command::Character(a) => character::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::View(a) => view::run(a),
        Command::Parity(a) => parity::run(a),
        Command::Bench(a) => bench::run(a),
        Command::BakeImpostors(a) => bake::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Soak(a) => soak::run(a),
    }
}

#[derive(Debug, Error)]
pub enum CliError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Cook(#[from] throng_cook::CookError),
    #[error(transparent)]
    Retarget(#[from] throng_cook::retarget::RetargetError),
    #[error("{path}: {source}")]
    Package {
        path: PathBuf,
        source: throng_cook::PackageError,
    },
    #[error(transparent)]
    Program(#[from] throng_cpu_ref::ProgramError),
    #[error(transparent)]
    Gpu(#[from] throng_gpu::GpuError),
    #[error("parity failed: a GPU result exceeds its tolerance (see the report above)")]
    ParityFailed,
    #[error(transparent)]
    Bench(#[from] throng_bench::BenchError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Control(String),
}

fn read_file(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|source| CliError::Io {
        path: path.to_owned(),
        source,
    })
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| CliError::Io {
            path: dir.to_owned(),
            source,
        })?;
    }
    std::fs::write(path, bytes).map_err(|source| CliError::Io {
        path: path.to_owned(),
        source,
    })
}

/// A missing adapter gets the one-line install hint naming `command`; other errors pass through.
fn no_gpu(command: &str, e: throng_gpu::GpuError) -> CliError {
    match e {
        throng_gpu::GpuError::NoAdapter { .. } => CliError::Usage(format!(
            "{command} needs a Vulkan adapter and found none; on a machine without a GPU install lavapipe: apt-get install -y mesa-vulkan-drivers libvulkan1"
        )),
        e => CliError::Gpu(e),
    }
}

/// Capacities for `members` instances of the largest of `packages`, whose programs fit
/// `limits` (as `demo` and `soak` size their runtimes).
fn capacities(
    packages: &[&throng_cpu_ref::Package],
    members: u32,
    limits: &throng_cpu_ref::ProgramLimits,
) -> Result<throng_gpu::Capacities, throng_gpu::GpuError> {
    let mut c = throng_gpu::Capacities::for_packages(packages, members);
    c.fit_programs(limits)?;
    Ok(c)
}

/// What a file's first bytes say it is (a glTF model, a package, an image, a BVH file), for
/// errors that say which command takes it; `None` for anything else (text, say).
fn file_kind(bytes: &[u8]) -> Option<&'static str> {
    let text = bytes.trim_ascii_start();
    if bytes.starts_with(b"glTF") {
        Some("a binary glTF model (.glb)")
    } else if bytes.starts_with(&throng_cook::package::MAGIC) {
        Some("a Throng package (.throng)")
    } else if bytes.starts_with(b"\x89PNG") {
        Some("a PNG image")
    } else if text.starts_with(b"HIERARCHY") {
        Some("a BVH motion capture file")
    } else if text.starts_with(b"{") && bytes.windows(8).any(|w| w == b"\"asset\"") {
        Some("a glTF model (.gltf)")
    } else {
        None
    }
}

/// What to do with a file of `kind` ([`file_kind`]) given where something else was expected.
fn kind_hint(kind: &str, path: &Path) -> String {
    let name = path.display();
    match kind {
        k if k.contains("glTF") => format!(
            "cook it into a package first: throng cook {name} -o model.throng (throng demo --asset and throng bench --asset take it as it is)"
        ),
        k if k.contains("package") => {
            "commands that read packages: throng inspect, throng simulate --package, throng bake-impostors".into()
        }
        k if k.contains("BVH") => format!(
            "cook it (throng cook {name} -o clip.throng) or retarget it onto a character (throng retarget {name} --onto CHARACTER.glb ...), with --bvh-scale and --bvh-skip"
        ),
        _ => "see throng --help for what each command reads".into(),
    }
}

/// Reads and checks a .throng package; a file of another kind (a glTF, say) is an error that
/// says what it is and which command takes it.
fn load_package(path: &Path) -> Result<throng_cpu_ref::Package, CliError> {
    let bytes = read_file(path)?;
    throng_cook::read_package(&bytes).map_err(|source| match file_kind(&bytes) {
        Some(kind) if !kind.contains("package") => CliError::Usage(format!(
            "{} is {kind}, not a Throng package: {}",
            path.display(),
            kind_hint(kind, path)
        )),
        _ => CliError::Package {
            path: path.to_owned(),
            source,
        },
    })
}

/// Reads a text file that should hold `what` (a state tree, a recording, ...); a binary file is
/// an error that says what it is instead.
/// A state tree's text and file name: `path`'s, or the built-in `default` (text, file name).
fn tree_source(path: Option<&Path>, default: (&str, &str)) -> Result<(String, String), CliError> {
    Ok(match path {
        Some(p) => (
            read_text(p, "a state tree (TOML, docs/state-tree.md)")?,
            p.display().to_string(),
        ),
        None => (default.0.to_owned(), default.1.to_owned()),
    })
}

fn read_text(path: &Path, what: &str) -> Result<String, CliError> {
    let bytes = read_file(path)?;
    if let Some(kind) = file_kind(&bytes) {
        return Err(CliError::Usage(format!(
            "{} is {kind}, not {what}: {}",
            path.display(),
            kind_hint(kind, path)
        )));
    }
    String::from_utf8(bytes)
        .map_err(|e| CliError::Usage(format!("{} is not text ({what} is; {e})", path.display())))
}

/// A package from a .throng file, or cooked from a .glb / .gltf with the default profile.
fn load_any(path: &Path) -> Result<throng_cpu_ref::Package, CliError> {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("throng"))
    {
        return load_package(path);
    }
    Ok(throng_cook::cook_file(path, &throng_cook::Profile::DEFAULT)?.0)
}

/// How the commands that read BVH read it (`--bvh-scale`, `--bvh-skip`).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct BvhArgs {
    /// BVH input: metres per BVH unit (default: CMU's, 0.0564444 = (1/0.45) * 2.54 / 100; a
    /// file in centimetres takes 0.01).
    #[arg(long = "bvh-scale", value_name = "METRES_PER_UNIT")]
    scale: Option<f32>,
    /// BVH input: frames dropped from the start (CMU's first frame is a T-pose: 1).
    #[arg(long = "bvh-skip", value_name = "FRAMES")]
    skip: Option<usize>,
}

fn is_bvh(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("bvh"))
}

/// A glTF or BVH file, imported (a `.bvh` as `bvh` says, its import warnings printed to stderr);
/// `--bvh-*` with a glTF is refused.
fn import_any(path: &Path, bvh: &BvhArgs) -> Result<throng_cook::Imported, CliError> {
    if is_bvh(path) {
        let defaults = throng_cook::BvhOptions::default();
        let options = throng_cook::BvhOptions {
            scale: bvh.scale.unwrap_or(defaults.scale),
            skip: bvh.skip.unwrap_or(defaults.skip),
        };
        let imported = throng_cook::import_bvh_file(path, options)?;
        for w in &imported.warnings {
            eprintln!("warning: {w}");
        }
        return Ok(imported);
    }
    if bvh.scale.is_some() || bvh.skip.is_some() {
        return Err(CliError::Usage(format!(
            "--bvh-scale and --bvh-skip are for BVH input; {} is not a .bvh file",
            path.display()
        )));
    }
    Ok(throng_cook::import_file(path)?)
}

/// The generated character, cooked with the default profile.
fn builtin_character() -> Result<throng_cpu_ref::Package, CliError> {
    Ok(throng::builtin_character()?)
}

fn print_json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    );
}
