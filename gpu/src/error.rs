//! Errors of the GPU runtime: each says what went wrong and where (batch, instance, package).

use thiserror::Error;
use throng_cpu_ref::FrameError;

#[derive(Debug, Error)]
pub enum GpuError {
    #[error("no GPU adapter found (backends tried: {backends}); install a Vulkan driver, e.g. lavapipe (mesa-vulkan-drivers)")]
    NoAdapter { backends: String },
    #[error("adapter '{adapter}' refused a device: {reason}")]
    Device { adapter: String, reason: String },
    #[error("adapter '{adapter}' supports {have} {what}; Throng needs {need}")]
    AdapterLimit {
        adapter: String,
        what: &'static str,
        have: u64,
        need: u64,
    },
    #[error("frame needs {needed} {what}, more than the declared capacity of {capacity}")]
    Capacity {
        what: &'static str,
        needed: u64,
        capacity: u64,
    },
    #[error("one instance's {what} take {bytes} bytes, more than the {limit}-byte storage binding limit of '{adapter}'; lower the capacities")]
    BindingLimit {
        what: &'static str,
        bytes: u64,
        limit: u64,
        adapter: String,
    },
    #[error("the programs need up to {needed} pose registers and the GPU evaluator has {available}: give the tree's additive layers and inertializing regions fewer clips weighted at once (a clip or a 1-D space, not a 2-D one), or pose these instances on the CPU")]
    Registers { needed: usize, available: usize },
    #[error("{instances} instances do not fit one runtime on '{adapter}': their {what} would pass its {limit}-byte storage binding limit. At most {most} fit: lower the instance count (--instances) to {most}, or split the crowd over several runtimes")]
    TooManyInstances {
        instances: u32,
        most: u32,
        what: &'static str,
        limit: u64,
        adapter: String,
    },
    #[error("the {packages} resident packages' {what} need {bytes} bytes together, more than the adapter's {limit}-byte storage binding limit: cook them with fewer or shorter clips, or make fewer packages resident in one runtime")]
    ResidentTooLarge {
        packages: usize,
        what: &'static str,
        bytes: u64,
        limit: u64,
    },
    #[error("package {package}: {what}")]
    BadPackage { package: usize, what: String },
    #[error("retained instances: {0}")]
    Retained(String),
    #[error(transparent)]
    Instance(#[from] throng_cpu_ref::retained::RetainedError),
    #[error("attachment {attachment}: {what}")]
    Attachment { attachment: usize, what: String },
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error("no frame has been submitted to read back")]
    NothingToRead,
    #[error("reading back {what} failed: {reason}")]
    Readback { what: &'static str, reason: String },
    #[error("the GPU device of '{adapter}' failed: {reason}. Its buffers are gone: make a new GpuContext and Runtime (and add the packages again) to go on")]
    DeviceLost { adapter: String, reason: String },
    #[error("wgpu rejected {what}: {reason}")]
    Wgpu { what: &'static str, reason: String },
}
