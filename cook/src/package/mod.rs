//! The versioned binary package: one file per asset generation (DESIGN.md §3 "Packages";
//! byte layout in docs/package-format.md).
//!
//! Little-endian, explicit widths: a 32-byte header (magic, format version, section count,
//! content hash, total size), a table of sections, and the sections themselves at 16-byte
//! boundaries. [`read_package`] checks every count, offset, alignment and bound with a
//! bounds-checked cursor before use, then checks the invariants the evaluator relies on, so a
//! package it returns can be evaluated without further checks.

mod codec;
pub(crate) use codec::check as check_compressed;
mod cursor;
mod reader;
mod validate;
mod writer;

use thiserror::Error;
use throng_cpu_ref::SkeletonError;

pub use codec::CodecFault;
pub use reader::read_package;
pub use writer::{payload_bytes, write_package};

/// The first eight bytes of every package.
pub const MAGIC: [u8; 8] = *b"THRNGPKG";
/// Format version written by this build; the reader accepts exactly this version (version 2 added
/// the events' flags and the root-motion trajectory to clip records; version 3 the compressed clip
/// encoding; version 4 the SCENE section: mesh nodes, static meshes, morph targets and morph
/// weight tracks; version 5 the CURVES section: scalar curve channels and clip tracks; version 6
/// compressed curve tracks; version 7 the mesh LODs' shells). Packages are not migrated: an older one is refused with a message
/// that says to re-cook its source.
pub const FORMAT_VERSION: u32 = 7;
/// Bytes before the section table. The content hash covers every byte after them.
pub const HEADER_SIZE: usize = 32;
/// Bytes per section table entry: kind u32, flags u32, offset u64, size u64.
pub const SECTION_ENTRY_SIZE: usize = 24;
/// Every section starts at a multiple of this, and the file ends at one.
pub const SECTION_ALIGN: usize = 16;
/// Section flag: a reader that does not know the section's kind may skip it.
pub const SECTION_OPTIONAL: u32 = 1;
/// Clip encoding: uncompressed f32 uniform samples, the reference encoding.
pub const ENCODING_UNCOMPRESSED: u32 = throng_cpu_ref::clip::encoding::REFERENCE;
/// Clip encoding: the compressed encoding of docs/codec.md.
pub const ENCODING_COMPRESSED: u32 = throng_cpu_ref::clip::encoding::COMPRESSED;
/// Largest deviation of a stored rotation's length from 1 the reader accepts.
pub const UNIT_TOLERANCE: f32 = 1e-3;
/// Event flag: the event is delivered when playing backwards too. Other bits are reserved.
pub const EVENT_REVERSIBLE: u32 = 1;
/// Version of an IMPOSTORS record's layout and of its atlas's texel encoding; the reader
/// refuses any other. 3: the atlas's rg bytes hold the octahedral normal and b the texel's
/// depth (throng-shaders raster.wgsl `bake_texel`); 2 held `0.5 + 0.5 · n` in rgb, 1 the same
/// sRGB-encoded.
pub const IMPOSTOR_VERSION: u32 = 3;
/// Version of a MOTION_DATABASE record's layout (throng-cpu-ref `motion_db`: its feature layout
/// included); the reader refuses any other.
pub const MOTION_DATABASE_VERSION: u32 = 1;

/// The section kinds this version knows. Each required kind appears exactly once in a package,
/// an optional one at most once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum SectionKind {
    /// UTF-8 bytes that every name refers into.
    Strings = 1,
    Skeletons = 2,
    Skins = 3,
    Meshes = 4,
    Clips = 5,
    /// Skeleton LOD levels (optional: a reader that skips it evaluates every joint).
    Lods = 6,
    /// Simplified meshes per skeleton LOD level (optional: a reader that skips it draws every
    /// triangle at every level).
    MeshLods = 7,
    /// Baked far-tier impostors per skin (optional: a reader that skips it draws every instance
    /// skinned).
    Impostors = 8,
    /// Motion-matching databases per skeleton (optional: only motion matching reads it).
    MotionDatabases = 9,
    /// Mesh nodes, static meshes, morph targets and morph-weight tracks (docs/morph-targets.md).
    /// Not optional (a reader that skipped it would pose the wrong shapes), but absent when the
    /// package has none of them, so packages without morphs keep their five-section layout.
    Scene = 10,
    /// Scalar curve channels and the clips' tracks of them (throng-cpu-ref `scalar`). Not
    /// optional (programs carry the channels), but absent when the package has none.
    Curves = 11,
}

impl SectionKind {
    /// All known kinds in the order the writer lays them out.
    pub const ALL: [SectionKind; 11] = [
        SectionKind::Strings,
        SectionKind::Skeletons,
        SectionKind::Skins,
        SectionKind::Meshes,
        SectionKind::Clips,
        SectionKind::Lods,
        SectionKind::MeshLods,
        SectionKind::Impostors,
        SectionKind::MotionDatabases,
        SectionKind::Scene,
        SectionKind::Curves,
    ];

    /// Whether the kind is written with [`SECTION_OPTIONAL`] and may be absent.
    pub fn optional(self) -> bool {
        matches!(
            self,
            SectionKind::Lods
                | SectionKind::MeshLods
                | SectionKind::Impostors
                | SectionKind::MotionDatabases
        )
    }

    pub fn from_u32(kind: u32) -> Option<SectionKind> {
        SectionKind::ALL.into_iter().find(|k| *k as u32 == kind)
    }

    pub fn name(self) -> &'static str {
        match self {
            SectionKind::Strings => "STRINGS",
            SectionKind::Skeletons => "SKELETONS",
            SectionKind::Skins => "SKINS",
            SectionKind::Meshes => "MESHES",
            SectionKind::Clips => "CLIPS",
            SectionKind::Lods => "LODS",
            SectionKind::MeshLods => "MESH_LODS",
            SectionKind::Impostors => "IMPOSTORS",
            SectionKind::MotionDatabases => "MOTION_DATABASES",
            SectionKind::Scene => "SCENE",
            SectionKind::Curves => "CURVES",
        }
    }
}

/// The text of [`PackageError::UnsupportedVersion`]: what to do about it.
fn version_message(found: u32, supported: u32) -> String {
    if found < supported {
        format!(
            "package format version {found} is older than the version {supported} this build \
             reads: re-cook the package from its source with `throng cook` (packages are not \
             migrated)"
        )
    } else {
        format!(
            "package format version {found} is not supported (this build reads version \
             {supported}): re-cook the package with this build's `throng cook`, or read it with \
             the newer build that wrote it"
        )
    }
}

/// Why a byte string is not a valid package. Byte offsets are from the start of the file.
#[derive(Debug, Error, PartialEq)]
pub enum PackageError {
    #[error("package truncated: {section} {what} at byte {offset} needs {needed} bytes, {available} available")]
    Truncated {
        section: &'static str,
        what: &'static str,
        offset: u64,
        needed: u64,
        available: u64,
    },
    #[error("not a Throng package: magic is {found:02x?}, expected \"THRNGPKG\"")]
    BadMagic { found: [u8; 8] },
    #[error("{}", version_message(*found, *supported))]
    UnsupportedVersion { found: u32, supported: u32 },
    #[error("package header declares {declared} bytes but {actual} were given")]
    SizeMismatch { declared: u64, actual: u64 },
    #[error("package content hash mismatch: header says {stored:#018x}, content hashes to {computed:#018x}")]
    HashMismatch { stored: u64, computed: u64 },
    #[error(
        "section {index} (kind {kind}) at byte {offset} is not aligned to {SECTION_ALIGN} bytes"
    )]
    MisalignedSection { index: u32, kind: u32, offset: u64 },
    #[error("section {index} (kind {kind}) spans bytes {offset}+{size}, past the end of the {total}-byte package")]
    SectionOutOfBounds {
        index: u32,
        kind: u32,
        offset: u64,
        size: u64,
        total: u64,
    },
    #[error("section {index} (kind {kind}): {what}")]
    BadSection {
        index: u32,
        kind: u32,
        what: &'static str,
    },
    #[error("section {index} has unknown kind {kind} and is not flagged optional")]
    UnknownSection { index: u32, kind: u32 },
    #[error("package has no {kind} section")]
    MissingSection { kind: &'static str },
    #[error("{section}: padding or reserved byte at {offset} is not zero")]
    NonZeroPadding { section: &'static str, offset: u64 },
    #[error("{section}: {count} unread bytes from byte {offset}")]
    TrailingBytes {
        section: &'static str,
        offset: u64,
        count: u64,
    },
    #[error("{section}: {field} at byte {offset} has unknown value {value}")]
    BadValue {
        section: &'static str,
        field: &'static str,
        offset: u64,
        value: u64,
    },
    #[error("{section}: string reference at byte {offset} ({start}+{len}) {what}")]
    BadString {
        section: &'static str,
        offset: u64,
        start: u32,
        len: u32,
        what: &'static str,
    },
    #[error("STRINGS byte {offset} belongs to no name")]
    UnusedString { offset: u64 },
    #[error("CLIPS item {clip}: encoding {encoding} version {version} is not supported")]
    UnsupportedEncoding {
        clip: usize,
        encoding: u32,
        version: u32,
    },
    #[error("SKELETONS item {index}: {source}")]
    Skeleton {
        index: usize,
        #[source]
        source: SkeletonError,
    },
    #[error("SKELETONS item {index}: stored identity hash {stored:#018x} differs from the rebuilt skeleton's {rebuilt:#018x}")]
    SkeletonHashMismatch {
        index: usize,
        stored: u64,
        rebuilt: u64,
    },
    #[error("CLIPS item {clip}, compressed data: {fault}")]
    Codec {
        clip: usize,
        #[source]
        fault: CodecFault,
    },
    #[error("{section} item {index}, {field}: {what}")]
    Invalid {
        section: &'static str,
        index: usize,
        field: &'static str,
        what: String,
    },
}
