//! Throng's headless GPU runtime (DESIGN.md §6): device setup, resident packages, the fused pose
//! pass (program, FK and palette in one dispatch per program shape, in a per-thread or
//! per-workgroup mapping), linear blend skinning, readback, pass timings, the GPU-vs-CPU parity
//! check ([`parity`]) and an offscreen raster pass ([`raster`]).
//!
//! Choices, in one place (docs/gpu.md says why and what each bought):
//! - **Device**: [`GpuContext::new`] prefers a discrete, then integrated, then virtual adapter,
//!   then a CPU one (lavapipe); `WGPU_BACKEND` narrows the backends. `TIMESTAMP_QUERY` is enabled
//!   when the adapter has it, and [`Runtime::finish`] then returns per-pass GPU times.
//! - **Resident data** (once per package generation, [`Runtime::add_package`] /
//!   [`Runtime::replace_package`]): every package in one arena of five shared buffers
//!   ([`resident`]). Every index the shaders follow is checked at upload.
//! - **Shapes** ([`throng_shaders::shape`]): instances are binned by program shape; each
//!   (batch, shape) is one dispatch, so dispatches per frame depend on batches × shapes, never on
//!   the instance count. A shape's specialised pipeline is built once, off the frame path, and the
//!   interpreter runs the shape until it is ready ([`pipelines`]).
//! - **Mappings** ([`Mapping`]): one thread per instance with the skeleton unrolled (software
//!   adapters) or one workgroup per instance, lanes over joints (hardware); automatic by
//!   adapter, forceable ([`RuntimeOptions::mapping`]).
//! - **Per frame upload**: per instance its record (16 bytes for a one-clip program) and, when
//!   skinned, a 48-byte placement; heroes upload their palette instead.
//! - **Outputs**: paged streams of component transforms, palettes and optionally local poses,
//!   instance-major by frame slot, per-slot animated bounds, and the skinned pool (16 bytes per
//!   vertex: position and octahedral normal) holding the instances culling and the skinned
//!   budget kept, in slot order ([`Runtime::set_frustum`], [`Runtime::visibility`],
//!   [`Runtime::skinned_runs`] for a raster pass, [`Runtime::readback`] for tools).
//! - **Attachments** ([`attach`]): props on joints, placed from the palette by one dispatch
//!   for every prop of the frame ([`Runtime::set_attachments`]) and drawn by
//!   [`draw::CrowdPass`].
//! - **Update-rate LOD**: an instance may keep its last pose (`Pose::Keep`).
//! - **Errors**: frames are validated by throng-cpu-ref's `frame::validate` against the declared
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
//! let id = runtime.add_package(&package)?;
//! let instances = [Instance { pose: Pose::Program(&program), placement: glam::Affine3A::IDENTITY }];
//! let report = runtime.frame(&[Batch { package: id, skeleton: 0, skin: Some(0), instances: &instances }])?;
//! let times = runtime.finish()?;
//! # let _ = (report, times);
//! # Ok(()) }
//! ```

pub mod attach;
pub mod capacity;
pub mod context;
pub mod decode;
pub mod draw;
pub mod error;
pub mod frame_buffers;
pub mod impostor;
pub mod kinds;
pub mod layout;
pub mod parity;
mod passes;
pub mod pipelines;
pub mod plan;
pub mod raster;
mod readback;
pub mod resident;
mod retained;
pub mod runtime;
mod shapes;
mod staging;
mod timing;

pub use attach::{Attachment, PlacedProp, PropMesh};
pub use capacity::Capacities;
pub use context::{AdapterReport, GpuContext};
pub use decode::Decode;
pub use error::GpuError;
pub use frame_buffers::output_bytes;
pub use passes::cull::significance;
pub use pipelines::{Mapping, Specialise};
pub use plan::{BatchSlots, PosePath};
pub use resident::{ResidentPackage, SkinRange, SkinTier};
pub use runtime::{FrameReport, Runtime, RuntimeOptions, SkinnedRun, StageTimes, Visibility};
pub use throng_cpu_ref::{Batch, BatchOutput, Instance, PackageId, Pose, SkinnedVertex};
/// The wgpu this crate is built on: an embedding renderer uses the same.
pub use wgpu;
