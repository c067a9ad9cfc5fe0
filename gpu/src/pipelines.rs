//! Compute pipelines, cached by what they specialise on, and built off the frame path.
//!
//! The interpreter and skinning pipelines are built when the runtime is made. A specialised
//! pose pipeline is requested the first time its (shape, mapping, rig, outputs) is dispatched;
//! until it is ready the interpreter runs that dispatch. With [`Specialise::Background`] a
//! worker thread compiles it (llvmpipe takes 0.1–2 s for the thread mapping of a 47-joint rig);
//! with [`Specialise::Blocking`] the frame waits for it (tests, tools); with
//! [`Specialise::Never`] everything runs on the interpreter. After Godot's ubershader with
//! specialised variants compiled in the background (https://godotengine.org/article/godot-4-3-will-finally-fix-shader-stutter).

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::mpsc::{channel, Receiver, Sender};

use serde::Serialize;
use throng_shaders::{Access, Binding, Kernel, Outputs};

use crate::GpuContext;

/// Most specialised pipelines a runtime builds: shapes past them keep the interpreter.
pub const MAX_PIPELINES: usize = 64;
/// A shape is specialised once one of its dispatches holds this many instances (with
/// [`Specialise::Background`]; [`Specialise::Blocking`] specialises every shape): rare shapes
/// keep the interpreter rather than cost a compile.
pub const MIN_INSTANCES: u32 = 8;

/// How the pose pass maps instances and joints onto GPU threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mapping {
    /// One thread per instance, straight-line over the skeleton (software adapters).
    Thread,
    /// One workgroup per instance (or a few small ones), lanes over joints (hardware GPUs).
    Workgroup,
}

impl Mapping {
    pub fn name(self) -> &'static str {
        match self {
            Mapping::Thread => "thread",
            Mapping::Workgroup => "workgroup",
        }
    }

    /// The mapping for an adapter: per thread on a CPU adapter (lavapipe runs SIMD lanes as
    /// coroutines, so barriers and idle lanes cost more than they save), per workgroup otherwise.
    pub fn for_adapter(software: bool) -> Mapping {
        if software {
            Mapping::Thread
        } else {
            Mapping::Workgroup
        }
    }
}

/// When specialised pose pipelines are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Specialise {
    /// Never: every dispatch runs the interpreter.
    Never,
    /// On a worker thread; the interpreter runs a shape until its pipeline is ready.
    Background,
    /// On the frame's thread, before the frame is recorded.
    Blocking,
}

/// What a specialised pose pipeline is specialised on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Form {
    /// Shape: the thread mapping reads the rig from the package tables.
    Thread { shape: u32 },
    /// Shape and workgroup size (lanes, instances per workgroup).
    Group {
        shape: u32,
        lanes: u32,
        instances: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub form: Form,
    pub outputs: Outputs,
    /// The shape's compressed samples read the decode cache ([`crate::decode`]).
    pub decoded: bool,
}

/// A built pipeline and what its bind group binds.
pub(crate) struct Built {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub bindings: Vec<Binding>,
    pub workgroup: u32,
    pub label: String,
    pub compile_ms: f64,
}

enum State {
    Pending,
    Ready(Built),
    Failed(String),
}

/// The specialised pipelines and the worker that builds them.
pub(crate) struct Pipelines {
    states: HashMap<Key, State>,
    jobs: Option<Sender<(Key, Kernel)>>,
    done: Receiver<(Key, Result<Built, String>)>,
    /// Specialised pipelines built so far.
    pub built: usize,
    /// Milliseconds spent compiling them.
    pub compile_ms: f64,
}

/// Builds `kernel`'s pipeline on `device` (in an error scope: what wgpu rejects is an `Err`).
pub(crate) fn build(device: &wgpu::Device, kernel: &Kernel) -> Result<Built, String> {
    let start = std::time::Instant::now();
    let built = crate::context::scoped(device, "pipeline creation", || {
        let layout = bind_group_layout(device, &kernel.label, &kernel.bindings);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&kernel.label),
            source: wgpu::ShaderSource::Wgsl(kernel.source.as_str().into()),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(&kernel.label),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&kernel.label),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some(throng_shaders::ENTRY),
            compilation_options: Default::default(),
            cache: None,
        });
        (pipeline, layout)
    })
    .map_err(|e| e.to_string())?;
    Ok(Built {
        pipeline: built.0,
        layout: built.1,
        bindings: kernel.bindings.clone(),
        workgroup: kernel.workgroup,
        label: kernel.label.clone(),
        compile_ms: start.elapsed().as_secs_f64() * 1e3,
    })
}

/// The bind group layout of `bindings` (the uniform at a dynamic offset).
fn bind_group_layout(
    device: &wgpu::Device,
    label: &str,
    bindings: &[Binding],
) -> wgpu::BindGroupLayout {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
        .iter()
        .map(|b| wgpu::BindGroupLayoutEntry {
            binding: b.binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match b.access {
                    Access::Uniform => wgpu::BufferBindingType::Uniform,
                    Access::Read => wgpu::BufferBindingType::Storage { read_only: true },
                    Access::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: b.access == Access::Uniform,
                min_binding_size: if b.access == Access::Uniform {
                    NonZeroU64::new(crate::layout::OFFSET_ALIGNMENT)
                } else {
                    None
                },
            },
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

impl Pipelines {
    pub fn new(ctx: &GpuContext, specialise: Specialise) -> Pipelines {
        let (done_tx, done) = channel();
        let jobs = (specialise == Specialise::Background).then(|| {
            let (tx, rx) = channel::<(Key, Kernel)>();
            let device = ctx.device.clone();
            let results = done_tx.clone();
            // The worker ends when the runtime drops its sender.
            let spawned = std::thread::Builder::new()
                .name("throng pipelines".into())
                .spawn(move || {
                    while let Ok((key, kernel)) = rx.recv() {
                        if results.send((key, build(&device, &kernel))).is_err() {
                            break;
                        }
                    }
                });
            spawned.ok().map(|_| tx)
        });
        Pipelines {
            states: HashMap::new(),
            jobs: jobs.flatten(),
            done,
            built: 0,
            compile_ms: 0.0,
        }
    }

    /// Takes in what the worker finished.
    pub fn poll(&mut self) {
        while let Ok((key, result)) = self.done.try_recv() {
            self.finish(key, result);
        }
    }

    fn finish(&mut self, key: Key, result: Result<Built, String>) {
        let state = match result {
            Ok(b) => {
                self.built += 1;
                self.compile_ms += b.compile_ms;
                State::Ready(b)
            }
            Err(e) => State::Failed(e),
        };
        self.states.insert(key, state);
    }

    /// The pipeline for `key` when it is ready. A key seen for the first time is requested when
    /// `request` says so: `kernel` makes its source; `blocking` builds it now on `device`.
    pub fn get(
        &mut self,
        key: Key,
        device: &wgpu::Device,
        (request, blocking): (bool, bool),
        kernel: impl FnOnce() -> Kernel,
    ) -> Option<&Built> {
        if !self.states.contains_key(&key) {
            if !request || self.states.len() >= MAX_PIPELINES {
                return None;
            }
            self.states.insert(key, State::Pending);
            match (&self.jobs, blocking) {
                (Some(jobs), false) => {
                    if jobs.send((key, kernel())).is_err() {
                        self.states
                            .insert(key, State::Failed("the pipeline worker stopped".into()));
                    }
                }
                _ => {
                    let result = build(device, &kernel());
                    self.finish(key, result);
                }
            }
        }
        match self.states.get(&key) {
            Some(State::Ready(b)) => Some(b),
            _ => None,
        }
    }

    /// A ready pipeline (for recording, after [`Pipelines::get`] said so).
    pub fn ready(&self, key: &Key) -> Option<&Built> {
        match self.states.get(key) {
            Some(State::Ready(b)) => Some(b),
            _ => None,
        }
    }

    /// Requested pipelines not ready yet.
    pub fn pending(&self) -> usize {
        self.states
            .values()
            .filter(|s| matches!(s, State::Pending))
            .count()
    }

    /// Why pipelines failed to build, if any did.
    pub fn failures(&self) -> impl Iterator<Item = &str> {
        self.states.values().filter_map(|s| match s {
            State::Failed(e) => Some(e.as_str()),
            _ => None,
        })
    }

    /// Waits until every requested pipeline is built (or failed).
    pub fn wait(&mut self) {
        while self.pending() > 0 {
            match self.done.recv() {
                Ok((key, result)) => self.finish(key, result),
                Err(_) => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(label: &str, source: String) -> Kernel {
        Kernel {
            label: label.into(),
            source,
            bindings: Vec::new(),
            workgroup: 64,
        }
    }

    #[test]
    fn a_kernel_that_does_not_compile_fails_its_shape_with_wgpus_reason_and_the_device_builds_on() {
        let Some(ctx) = GpuContext::for_tests() else {
            return;
        };
        let entry = throng_shaders::ENTRY;
        let broken = format!("@compute @workgroup_size(64) fn {entry}() {{ let x: u32 = 1.5; }}");
        let valid = format!("@compute @workgroup_size(64) fn {entry}() {{}}");
        let key = |shape| Key {
            form: Form::Thread { shape },
            outputs: Outputs {
                locals: true,
                components: false,
                palettes: false,
                curves: false,
            },
            decoded: false,
        };
        let mut pipelines = Pipelines::new(&ctx, Specialise::Background);
        let requested = pipelines.get(key(0), &ctx.device, (true, false), || {
            kernel("broken", broken)
        });
        assert!(requested.is_none(), "built in the background");
        pipelines.wait();
        let failures: Vec<&str> = pipelines.failures().collect();
        assert_eq!(failures.len(), 1, "{failures:?}");
        eprintln!("{}", failures[0]);
        assert!(failures[0].contains("pipeline creation"), "{}", failures[0]);
        assert!(
            failures[0].contains("broken"),
            "names the kernel: {}",
            failures[0]
        );
        assert!(
            pipelines.ready(&key(0)).is_none(),
            "the shape keeps the interpreter"
        );
        // The failure was caught in its error scope: the device is not lost and builds on.
        ctx.check().unwrap();
        let built = pipelines.get(key(1), &ctx.device, (true, true), || kernel("valid", valid));
        assert!(built.is_some());
        assert_eq!(pipelines.built, 1);
    }
}
