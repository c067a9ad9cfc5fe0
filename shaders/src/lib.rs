//! Throng's WGSL compute shaders (DESIGN.md §4, §6): pose-program evaluation, forward
//! kinematics, skinning palettes and linear blend skinning.
//!
//! WGSL has no includes, so each module is composed here from the shared sources: `common.wgsl`
//! (quaternion and 3×4 affine math, the per-op joint math of throng-cpu-ref's interpreter, the
//! per-dispatch `Params` and per-instance header) plus the stage's own file. Every entry point
//! reads a uniform `Params` at `@group(0) @binding(0)`; bindings are listed at the top of each
//! stage file and mirrored by throng-gpu.
//!
//! Memory conventions: a local transform is a 48-byte `TrsRecord` (t.xyz_, q.xyzw, s.xyz_); an
//! affine is 48 bytes, three rows `(m[r][0], m[r][1], m[r][2], t[r])`; per-instance outputs are
//! instance-major within the range a dispatch binds (`instance * stride + element`).

const COMMON: &str = include_str!("wgsl/common.wgsl");
const SAMPLE: &str = include_str!("wgsl/sample.wgsl");
const CODEC: &str = include_str!("wgsl/codec.wgsl");
const PROGRAM: &str = include_str!("wgsl/program.wgsl");
const FK: &str = include_str!("wgsl/fk.wgsl");
const PALETTE: &str = include_str!("wgsl/palette.wgsl");
const SKINNING: &str = include_str!("wgsl/skinning.wgsl");
const RASTER: &str = include_str!("wgsl/raster.wgsl");

/// Size of the private register file of the program kernel: programs may use registers
/// `0 .. REGISTERS` (throng-cpu-ref's default `ProgramLimits::max_registers`).
pub const REGISTERS: u32 = 8;

/// Threads per workgroup of the FK fast path: skeletons of up to this many joints are solved in
/// workgroup memory; larger ones use the fallback entry point.
pub const FK_WORKGROUP: u32 = 128;

/// Threads per workgroup of every one-dimensional entry point (program, FK fallback, palette,
/// skinning). A dispatch of more than 65 535 workgroups folds into y rows of `groups.x`.
pub const WORKGROUP: u32 = 64;

/// Entry points of the FK module.
pub const FK_FAST: &str = "fast";
pub const FK_FALLBACK: &str = "fallback";
/// Entry point of the program, palette and skinning modules.
pub const MAIN: &str = "main";

fn compose(stage: &[&str]) -> String {
    let mut source = format!(
        "const REGISTERS: u32 = {REGISTERS}u;\nconst FK_WORKGROUP: u32 = {FK_WORKGROUP}u;\n\n"
    );
    source.push_str(COMMON);
    for part in stage {
        source.push('\n');
        source.push_str(part);
    }
    source
}

/// Pose-program evaluation: entry point [`MAIN`], one thread per (instance, joint).
pub fn program_source() -> String {
    compose(&[SAMPLE, CODEC, PROGRAM])
}

/// Forward kinematics: entry points [`FK_FAST`] (one workgroup per instance) and [`FK_FALLBACK`]
/// (one thread per instance).
pub fn fk_source() -> String {
    compose(&[FK])
}

/// Skinning palettes: entry point [`MAIN`], one thread per (instance, palette entry).
pub fn palette_source() -> String {
    compose(&[PALETTE])
}

/// Linear blend skinning: entry point [`MAIN`], one thread per (instance, vertex).
pub fn skinning_source() -> String {
    compose(&[SKINNING])
}

/// Entry points of the raster module: the crowd (vertex pulling from skinned output) and the
/// ground grid.
pub const CROWD_VS: &str = "crowd_vs";
pub const CROWD_FS: &str = "crowd_fs";
pub const GROUND_VS: &str = "ground_vs";
pub const GROUND_FS: &str = "ground_fs";

/// The offscreen raster pass: entry points [`CROWD_VS`] / [`CROWD_FS`] (one instanced draw per
/// chunk) and [`GROUND_VS`] / [`GROUND_FS`]. Self-contained: it shares no compute math.
pub fn raster_source() -> String {
    RASTER.to_owned()
}

/// Every composed module with a name, for validation and tools.
pub fn all_sources() -> [(&'static str, String); 4] {
    [
        ("program", program_source()),
        ("fk", fk_source()),
        ("palette", palette_source()),
        ("skinning", skinning_source()),
    ]
}
