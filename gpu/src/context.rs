//! Device setup: a hardware adapter when one exists, else a CPU adapter (lavapipe); or the
//! device of a renderer that embeds Throng.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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

/// A device and queue with the limits and features Throng uses: opened by Throng
/// ([`GpuContext::new`]) or the caller's own ([`GpuContext::from_device`]).
#[derive(Clone, Debug)]
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: AdapterReport,
    /// Device limits as granted.
    pub limits: wgpu::Limits,
    /// True when pass timestamp queries are enabled (GPU stage times via wgpu-profiler).
    pub timestamps: bool,
    /// Times this context waited for the queue (every readback waits): the frame path of an
    /// embedding never does ([`GpuContext::waits`]).
    waits: Arc<AtomicU64>,
    /// The first error the device reported outside an error scope, or its loss: set by the
    /// handlers [`GpuContext::new`] installs, after which every frame and wait is refused with
    /// [`GpuError::DeviceLost`].
    fault: Arc<Mutex<Option<String>>>,
}

/// The fewest storage buffers per shader stage a context accepts: WebGPU's default. A runtime
/// needs what its widest kernel binds (11 for the generated character's crowd, more when a
/// stream takes several pages) and refuses a device with fewer ([`crate::Runtime::with_options`]).
pub const STORAGE_BUFFERS_PER_STAGE: u32 = 8;

impl GpuContext {
    /// Opens the best adapter: discrete, then integrated, then virtual, then a CPU adapter.
    /// Errors when the machine has none (see [`GpuError::NoAdapter`]).
    pub fn new() -> Result<GpuContext, GpuError> {
        pollster::block_on(Self::open())
    }

    /// The context for a GPU test, by DESIGN.md §9: the adapter, or `None` with the reason
    /// printed when there is none and `THRONG_ALLOW_NO_GPU=1`; without that variable a missing
    /// adapter panics with what to install.
    pub fn for_tests() -> Option<GpuContext> {
        match GpuContext::new() {
            Ok(ctx) => {
                eprintln!("adapter: {}", ctx.adapter);
                Some(ctx)
            }
            Err(e) if std::env::var("THRONG_ALLOW_NO_GPU").as_deref() == Ok("1") => {
                eprintln!("skipping: {e} (THRONG_ALLOW_NO_GPU=1)");
                None
            }
            Err(e) => panic!("{e}; set THRONG_ALLOW_NO_GPU=1 to skip GPU tests"),
        }
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
        let name = adapter.get_info().name;
        let have = adapter.limits();
        check_limits(&name, &have)?;
        let (device, queue) = adapter
            .request_device(&Self::device_descriptor(&adapter))
            .await
            .map_err(|e| GpuError::Device {
                adapter: name,
                reason: e.to_string(),
            })?;
        let ctx = Self::from_device(device, queue)?;
        ctx.record_faults();
        Ok(ctx)
    }

    /// Wraps a device and queue the caller made (a renderer embedding Throng shares its own):
    /// Throng opens no adapter and records into this device's queue. The device must grant
    /// [`GpuContext::required_limits`]; the features of [`GpuContext::optional_features`] it has
    /// are used (stage times need `TIMESTAMP_QUERY`).
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue) -> Result<GpuContext, GpuError> {
        let info = device.adapter_info();
        let limits = device.limits();
        check_limits(&info.name, &limits)?;
        let timestamps = device.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        Ok(GpuContext {
            device,
            queue,
            adapter: report(&info),
            limits,
            timestamps,
            waits: Arc::default(),
            fault: Arc::default(),
        })
    }

    /// Records the device's uncaptured errors and its loss instead of letting wgpu panic (its
    /// default), so that they surface as [`GpuError::DeviceLost`]. Only on a device of Throng's
    /// own: an embedding's device keeps the handlers its renderer set.
    fn record_faults(&self) {
        let fault = Arc::clone(&self.fault);
        self.device
            .on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                let mut f = fault.lock().unwrap_or_else(|p| p.into_inner());
                f.get_or_insert_with(|| describe(e));
            }));
        let fault = Arc::clone(&self.fault);
        self.device
            .set_device_lost_callback(move |reason, message| {
                let mut f = fault.lock().unwrap_or_else(|p| p.into_inner());
                f.get_or_insert_with(|| format!("device lost ({reason:?}): {message}"));
            });
    }

    /// Refuses to go on once the device reported a fault ([`GpuContext::new`]'s handlers).
    pub fn check(&self) -> Result<(), GpuError> {
        let fault = self.fault.lock().unwrap_or_else(|p| p.into_inner());
        match fault.as_ref() {
            Some(reason) => Err(GpuError::DeviceLost {
                adapter: self.adapter.name.clone(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    /// What to ask of `adapter` for a device Throng can use: [`GpuContext::required_limits`],
    /// and the [`GpuContext::optional_features`] it has.
    pub fn device_descriptor(adapter: &wgpu::Adapter) -> wgpu::DeviceDescriptor<'static> {
        wgpu::DeviceDescriptor {
            label: Some("throng"),
            required_features: Self::optional_features(adapter.features()),
            required_limits: Self::required_limits(&adapter.limits()),
            ..Default::default()
        }
    }

    /// The limits to request of a device for Throng, from the adapter's (`Adapter::limits`):
    /// the WebGPU defaults, raised to the adapter's storage binding and buffer sizes, workgroups
    /// per dimension, storage buffers and all buffers per stage (crowd capacity grows with the
    /// first two; paged streams, morph targets and curves bind more buffers).
    pub fn required_limits(adapter: &wgpu::Limits) -> wgpu::Limits {
        wgpu::Limits {
            max_storage_buffer_binding_size: adapter.max_storage_buffer_binding_size,
            max_buffer_size: adapter.max_buffer_size,
            max_compute_workgroups_per_dimension: adapter.max_compute_workgroups_per_dimension,
            max_storage_buffers_per_shader_stage: adapter.max_storage_buffers_per_shader_stage,
            max_buffers_and_acceleration_structures_per_shader_stage: adapter
                .max_buffers_and_acceleration_structures_per_shader_stage,
            ..wgpu::Limits::default()
        }
    }

    /// The features Throng uses when the adapter has them, among `adapter`'s: timestamp
    /// queries for per-pass GPU times.
    pub fn optional_features(adapter: wgpu::Features) -> wgpu::Features {
        adapter & wgpu::Features::TIMESTAMP_QUERY
    }

    /// Blocks until the queue is idle.
    pub fn wait(&self) -> Result<(), GpuError> {
        self.check()?;
        self.waits.fetch_add(1, Ordering::Relaxed);
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: None,
            })
            .map_err(|e| GpuError::Wgpu {
                what: "a wait for the queue",
                reason: e.to_string(),
            })?;
        self.check()
    }

    /// How many times this context (and its clones) waited for the queue: readbacks,
    /// [`crate::Runtime::finish`], [`crate::raster::Raster::finish`].
    pub fn waits(&self) -> u64 {
        self.waits.load(Ordering::Relaxed)
    }
}

/// What wgpu says went wrong, on one line: the whole report (the `Display` of an error is only
/// its kind, "Validation Error").
fn describe(e: wgpu::Error) -> String {
    one_line(&match e {
        wgpu::Error::Validation { description, .. } => description,
        wgpu::Error::Internal { description, .. } => description,
        e => e.to_string(),
    })
}

/// wgpu's multi-line error report ("Validation Error", "Caused by:", the causes) on one line.
fn one_line(report: &str) -> String {
    (report.lines().map(str::trim))
        .filter(|l| !l.is_empty() && *l != "Caused by:")
        .collect::<Vec<_>>()
        .join(": ")
}

/// Refuses a device or adapter whose `limits` cannot bind a pose kernel's buffers.
fn check_limits(adapter: &str, limits: &wgpu::Limits) -> Result<(), GpuError> {
    if limits.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS_PER_STAGE {
        return Err(GpuError::AdapterLimit {
            adapter: adapter.to_string(),
            what: "storage buffers per shader stage (request GpuContext::required_limits)",
            have: limits.max_storage_buffers_per_shader_stage.into(),
            need: STORAGE_BUFFERS_PER_STAGE.into(),
        });
    }
    Ok(())
}

fn report(info: &wgpu::AdapterInfo) -> AdapterReport {
    AdapterReport {
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
            reason: describe(e),
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
