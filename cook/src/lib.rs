//! Throng's offline cook: glTF 2.0 import and validation, uniform resampling by quality profile,
//! sub-track classification, root-motion extraction, clip events and sync markers, measured
//! cooking error, and the versioned package writer and checked reader.
//!
//! Clip metadata (docs/events-and-root-motion.md) comes from two places: the `extras.throng`
//! object of each glTF animation (events with their `reversible` flag, sync markers, and a
//! `root_motion` request naming a joint and a `planar` or `full` policy), and a sidecar file
//! `<file stem>.throng.toml` beside the source (`Fox.throng.toml` for `Fox.glb`) whose per-clip
//! keys replace the extras' ([`import::meta`]). The cook checks times against each clip (within
//! [0, duration], finite, no duplicate name at one time, none on a clip of zero duration), stores
//! a looping clip's marker at the duration at 0 ([`metadata`]), and takes a requested trajectory
//! out of the pose exactly once ([`root_motion`]); errors name the file, line and key.
//!
//! The codec ([`codec`], docs/codec.md) compresses cooked clips within the profile's error
//! thresholds: [`cook`] gives the reference (uncompressed) encoding, [`compress`] compresses a
//! cooked package, and [`cook_file`] does both, as `throng cook` does by default.

pub mod codec;
pub mod import;
pub mod lod;
pub mod mesh_lod;
pub mod metadata;
pub mod motion_db;
pub mod package;
pub mod profile;
pub mod report;
pub mod resample;
pub mod retarget;
pub mod root_motion;

pub use codec::{
    compress, compress_curves, encode_clip, quantize_track, CurveCodecReport, Encoded,
    CURVE_PRECISION,
};
pub use import::{
    import_bvh, import_bvh_file, import_file, import_slice, sidecar_path, BvhOptions, ClipMeta,
    CookError, Imported,
};
pub use package::{read_package, write_package, PackageError};
pub use profile::Profile;
pub use report::CookReport;
pub use resample::cook;

/// Imports a glTF file, cooks it with `profile` and compresses its clips with the profile's
/// codec settings ([`compress`], docs/codec.md): the package and its report, `report.codec`
/// filled in. This is what `throng cook` writes by default and what `throng parity`, `demo` and
/// `bench` load from a glTF. [`cook`] alone gives the reference (uncompressed) encoding.
pub fn cook_file(
    path: &std::path::Path,
    profile: &Profile,
) -> Result<(throng_cpu_ref::Package, CookReport), CookError> {
    let imported = import_file(path)?;
    let (mut package, mut report) = cook(&imported, profile)?;
    compress(&mut package, &mut report, profile);
    Ok((package, report))
}
