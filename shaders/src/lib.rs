//! Throng's WGSL kernels (DESIGN.md §4, §6) and the shape compiler that specialises them.
//!
//! WGSL has no includes, so every module is composed here: the generated [`prelude`] (constants
//! defined once in Rust), `math.wgsl` (quaternion and 3×4 affine math, the per-op joint math of
//! throng-cpu-ref's interpreter), then the kernel's own parts. [`kernel`] builds the pose pass in
//! its three forms, the bounds pass and the skinning pass, each with the bindings it declares; [`shape`] turns a
//! program into the shape a pipeline specialises on and an instance's record.
//!
//! Memory conventions: a local transform in memory is a 48-byte `TrsRecord` (t.xyz_, q.xyzw,
//! s.xyz_); an affine is 48 bytes, three rows `(m[r][0], m[r][1], m[r][2], t[r])`; per-instance
//! outputs are instance-major by frame slot within their page.

pub mod kernel;
pub mod layout;
pub mod prelude;
pub mod shape;

pub use kernel::{
    Access, Binding, FrameLayout, Kernel, Outputs, Paging, Resource, Stream, ENTRY, HISTORY_VEC4S,
};
pub use layout::{
    kind_word, AttachParams, BinRow, BoundsParams, BudgetParams, DecodeParams, KindRow,
    PartitionParams, PatchParams, PoseParams, PresentParams, ScatterParams, SkinParams,
    TallyParams, UnitRow, HERO_BIT, KEEP_BIT, KIND_MASK, LEVEL_SHIFT, NO_CHANNEL, NO_CURVE_TRACK,
    NO_DECODE, NO_KIND, NO_LOD, NO_MORPH, NO_SHAPE, NO_UNIT,
};
pub use shape::{write_record, Shape, ShapeOp};

const MATH: &str = include_str!("wgsl/math.wgsl");
const RASTER: &str = include_str!("wgsl/raster.wgsl");

/// Entry points of the raster module: the crowd (vertex pulling from skinned output) and the
/// ground grid.
pub const CROWD_VS: &str = "crowd_vs";
pub const CROWD_FS: &str = "crowd_fs";
/// [`CROWD_VS`] / [`CROWD_FS`] leaving out the pixels of cross-fading members that their cards
/// take.
pub const CROWD_FADING_VS: &str = "crowd_fading_vs";
pub const CROWD_FADING_FS: &str = "crowd_fading_fs";
/// The next coarser mesh LOD of members cross-fading between levels, in the pixels
/// [`CROWD_FADING_FS`] leaves out.
pub const CROWD_COARSER_VS: &str = "crowd_coarser_vs";
pub const CROWD_COARSER_FS: &str = "crowd_coarser_fs";
/// Props on sockets (group 3), shaded by [`CROWD_FS`].
pub const PROP_VS: &str = "prop_vs";
pub const GROUND_VS: &str = "ground_vs";
pub const GROUND_FS: &str = "ground_fs";
/// Entry points of the far tier's cards (raster.wgsl `card_vs` / `card_fs`).
pub const CARD_VS: &str = "card_vs";
pub const CARD_FS: &str = "card_fs";
/// Entry points of the cards' motion vectors (raster.wgsl `card_motion_vs` / `card_motion_fs`).
pub const CARD_MOTION_VS: &str = "card_motion_vs";
pub const CARD_MOTION_FS: &str = "card_motion_fs";
/// Entry points of the motion-vector pass (raster.wgsl `motion_vs` / `motion_fs`).
pub const MOTION_VS: &str = "motion_vs";
pub const MOTION_FS: &str = "motion_fs";

/// The offscreen raster pass: entry points [`CROWD_VS`] / [`CROWD_FS`] (one instanced draw per
/// skinned page of a batch), [`GROUND_VS`] / [`GROUND_FS`], and the motion-vector pass
/// [`MOTION_VS`] / [`MOTION_FS`].
pub fn raster_source() -> String {
    [prelude::source().as_str(), MATH, RASTER].join("\n")
}
