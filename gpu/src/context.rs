//! Headless device setup: a hardware adapter when one exists, else a CPU adapter (lavapipe).

use serde::Serialize;

use crate::GpuError;

/// Which adapter a [`GpuContext`] got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AdapterReport {
    pub name: String,
    /// `Vulkan`, `Metal`, ...
    pub backend: String,
    /// `DiscreteGpu`, `IntegratedGpu`, `VirtualGpu`, `Cpu` or `Other`.
    pub device_type: String,
    pub driver: String,
    /// True when the adapter runs on the CPU (lavapipe, SwiftShader, WARP).
    pub software: bool,
}

impl std::fmt::Display for AdapterReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, {}", self.name, self.backend, self.device_type)?;
        if !self.driver.is_empty() {
            write!(f, ", {}", self.driver)?;
        }
        f.write_str(")")
    }
}

/// A device and queue with the limits and features Throng uses.
#[derive(Clone, Debug)]
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterReport,
    /// Device limits as granted.
    pub limits: wgpu::Limits,
    /// True when pass timestamp queries are enabled (GPU stage times via wgpu-profiler).
    pub timestamps: bool,
}

/// Storage buffers a pose kernel binds with one page per output stream (more pages need more).
pub const STORAGE_BUFFERS_PER_STAGE: u32 = 8;

impl GpuContext {
    /// Opens the best adapter: discrete, then integrated, then virtual, then a CPU adapter.
    /// Errors when the machine has none (see [`GpuError::NoAdapter`]).
    pub fn new() -> Result<GpuContext, GpuError> {
        pollster::block_on(Self::open())
    }

    async fn open() -> Result<GpuContext, GpuError> {
        let backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = backends;
        let instance = wgpu::Instance::new(desc);
        let adapters = instance.enumerate_adapters(backends).await;
        let adapter = adapters
            .into_iter()
            .min_by_key(|a| preference(a.get_info().device_type))
            .ok_or_else(|| GpuError::NoAdapter {
                backends: format!("{backends:?}"),
            })?;
        let info = adapter.get_info();
        let report = AdapterReport {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: [info.driver.as_str(), info.driver_info.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
            software: info.device_type == wgpu::DeviceType::Cpu,
        };
        let have = adapter.limits();
        if have.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS_PER_STAGE {
            return Err(GpuError::AdapterLimit {
                adapter: report.name,
                what: "storage buffers per shader stage",
                have: have.max_storage_buffers_per_shader_stage.into(),
                need: STORAGE_BUFFERS_PER_STAGE.into(),
            });
        }
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: have.max_storage_buffer_binding_size,
            max_buffer_size: have.max_buffer_size,
            max_compute_workgroups_per_dimension: have.max_compute_workgroups_per_dimension,
            max_storage_buffers_per_shader_stage: have.max_storage_buffers_per_shader_stage,
            ..wgpu::Limits::default()
        };
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let features = if timestamps {
            wgpu::Features::TIMESTAMP_QUERY
        } else {
            wgpu::Features::empty()
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("throng"),
                required_features: features,
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::Device {
                adapter: report.name.clone(),
                reason: e.to_string(),
            })?;
        Ok(GpuContext {
            device,
            queue,
            adapter: report,
            limits,
            timestamps,
        })
    }

    /// Blocks until the queue is idle.
    pub fn wait(&self) -> Result<(), GpuError> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: None,
            })
            .map(|_| ())
            .map_err(|e| GpuError::Wgpu {
                what: "a wait for the queue",
                reason: e.to_string(),
            })
    }
}

fn preference(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

/// Runs `f` inside a validation and out-of-memory error scope: what wgpu rejects comes back as
/// [`GpuError::Wgpu`] instead of reaching the uncaptured-error handler (which panics).
pub(crate) fn scoped<T>(
    device: &wgpu::Device,
    what: &'static str,
    f: impl FnOnce() -> T,
) -> Result<T, GpuError> {
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = f();
    let errors = [
        pollster::block_on(validation.pop()),
        pollster::block_on(oom.pop()),
    ];
    match errors.into_iter().flatten().next() {
        Some(e) => Err(GpuError::Wgpu {
            what,
            reason: e.to_string(),
        }),
        None => Ok(value),
    }
}

/// Maps `buffer` for reading and copies its bytes out; `what` names it in the error.
pub(crate) fn map_read(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
    what: &'static str,
) -> Result<Vec<u8>, GpuError> {
    let (tx, rx) = std::sync::mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = tx.send(r);
    });
    ctx.wait()?;
    let failed = |reason: String| GpuError::Readback { what, reason };
    rx.recv()
        .map_err(|e| failed(e.to_string()))?
        .map_err(|e| failed(e.to_string()))?;
    let bytes = buffer
        .get_mapped_range(..)
        .map_err(|e| failed(e.to_string()))?
        .to_vec();
    buffer.unmap();
    Ok(bytes)
}
