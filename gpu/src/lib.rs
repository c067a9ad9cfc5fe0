//! Throng's headless GPU runtime (DESIGN.md §6): device setup, resident packages, batched
//! pose-program evaluation, FK, palettes and linear blend skinning in WGSL compute passes
//! (throng-shaders), readback, stage timings, and the GPU-vs-CPU parity check ([`parity`]).
//!
//! Choices, in one place:
//! - **Device**: [`GpuContext::new`] prefers a discrete, then integrated, then virtual adapter,
//!   then a CPU one (lavapipe); `WGPU_BACKEND` narrows the backends. `TIMESTAMP_QUERY` is enabled
//!   when the adapter has it, and [`Runtime::finish`] then returns per-stage GPU times
//!   (wgpu-profiler pass timestamps); otherwise only the wall time.
//! - **Resident data** (once per package generation, [`Runtime::add_package`] /
//!   [`Runtime::replace_package`]): clip headers, sub-tracks, an f32 pool (rest poses, clip
//!   samples, masks), joint table, skin joint maps, inverse binds, bind-space vertices (64 bytes
//!   each) grouped by skin. Every index the shaders follow is checked at upload.
//! - **Per frame upload**: per instance a 16-byte header, its `PoseOp`s (32 bytes each, the
//!   exact bytes the CPU interpreter runs), its blend weights (4 bytes each) and a 48-byte 3×4
//!   placement: `64 + 32·ops + 4·weights` bytes (160 for sample → ToComponent → Palette).
//!   Heroes upload their palette instead (48 bytes per entry). Chunk parameters add 48 bytes
//!   per chunk.
//! - **Batches and chunks**: a [`Batch`] is the instances of one skeleton (and skin) of one
//!   package; each stage records one dispatch per chunk, where a chunk is the batch unless its
//!   per-instance buffers would exceed the storage binding limit (then its instance range is
//!   split). Four dispatches per chunk, whatever the instance count.
//! - **FK**: skeletons of up to [`throng_shaders::FK_WORKGROUP`] joints run one workgroup per
//!   instance, level by level over depth in workgroup memory; larger ones one thread per
//!   instance walking joints in order through storage.
//! - **Outputs** (instance-major within each chunk's regions, see [`Chunk`]): local TRS (48 B),
//!   component 3×4 (48 B), palette 3×4 (48 B) per entry, and [`SkinnedVertex`] (32 B) per
//!   vertex: skinned in component space, then the instance's placement applied
//!   (`P·(M·p)`, normal `normalize(cof(P)·n)`), so a raster pass can pull vertices by
//!   instance index from [`Runtime::skinned_buffers`] (pages, so a crowd may exceed one buffer).
//! - **Errors**: programs are validated with `Program::validate` against the declared
//!   [`Capacities`] before anything is uploaded; a refused frame leaves the last frame's outputs
//!   readable. wgpu validation errors are caught in error scopes and returned as
//!   [`GpuError::Wgpu`].
//!
//! ```no_run
//! # fn main() -> Result<(), throng_gpu::GpuError> {
//! # let package = throng_cpu_ref::Package::default();
//! # let program = throng_cpu_ref::Program::default();
//! use throng_gpu::{Batch, Capacities, GpuContext, Instance, Pose, Runtime};
//! let ctx = GpuContext::new()?;
//! let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&package], 1000))?;
//! let id = runtime.add_package(&package, &[])?;
//! let instances = [Instance { pose: Pose::Program(&program), placement: glam::Affine3A::IDENTITY }];
//! let report = runtime.frame(&[Batch { package: id, skeleton: 0, skin: Some(0), instances: &instances }])?;
//! let times = runtime.finish()?;
//! # let _ = (report, times);
//! # Ok(()) }
//! ```

pub mod capacity;
pub mod context;
pub mod crowd;
pub mod error;
pub mod layout;
pub mod parity;
pub mod random;
pub mod raster;
pub mod resident;
pub mod runtime;
mod stages;

pub use capacity::Capacities;
pub use context::{AdapterReport, GpuContext};
pub use error::GpuError;
pub use layout::SkinnedVertex;
pub use resident::{PackageId, ResidentPackage, SkinRange};
pub use runtime::{
    Batch, BatchOutput, Chunk, FrameReport, Instance, Pose, Region, Runtime, StageTimes,
};
