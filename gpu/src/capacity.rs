//! Declared per-frame capacities: frame buffers are sized from them once, and a frame that
//! exceeds one gets [`crate::GpuError::Capacity`] before any GPU work.

use throng_cpu_ref::{Package, ProgramLimits};

use crate::frame_buffers::BOUNDS_BYTES;
use crate::{GpuContext, GpuError};

/// The most decoded samples [`Capacities::for_packages`] gives the decode cache: 16 MiB.
pub const DECODE_CACHE_SAMPLES: u32 = 1 << 20;

/// Upper bounds of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacities {
    /// Instances (program and hero) per frame: the frame slots.
    pub instances: u32,
    /// Joints of the largest skeleton: the per-instance stride of local and component poses.
    pub joints: u32,
    /// Entries of the largest skin palette: the per-instance stride of palettes.
    pub palette: u32,
    /// Vertices of the largest skin's meshes: the per-instance stride of skinned vertices.
    pub vertices: u32,
    /// Scalar curve channels of the skeleton with the most: the per-instance stride of curve
    /// values (0: the pose pass writes no curves).
    pub curves: u32,
    /// Morph targets of the skin with the most (over its meshes): 0 compiles no morphing into
    /// the skinning and bounds passes.
    pub morph_targets: u32,
    /// The skinned budget: instances skinned per frame at most (the skinned pool's size).
    /// Visible instances past it, in frame-slot order, are neither skinned nor drawn
    /// ([`crate::Visibility::over_budget`]).
    pub skinned_instances: u32,
    /// Ops of one program (`ProgramLimits::max_ops`).
    pub ops_per_program: u32,
    /// Blend weights of one program (`ProgramLimits::max_weights`).
    pub weights_per_program: u32,
    /// Inertialization history slots (`ProgramLimits::history_slots`), of `joints` joints each.
    pub history_slots: u32,
    /// Dispatches per frame: one per program shape (per shape and path where the mapping
    /// splits one), and a fixed few (decode, bounds, the skinned budget, skinning,
    /// attachments).
    pub dispatches: u32,
    /// Kinds of instance: (package, skeleton, skin) combinations the runtime may see (each
    /// skinned one with a unit per level of detail of its skin; docs/gpu.md, "Kinds").
    pub kinds: u32,
    /// Decoded samples (vec4s, 16 bytes each) the frame's decode cache holds: the clips a frame
    /// samples most are decoded into it once rather than by each instance (docs/gpu.md, "The
    /// decode cache"); clips past it decode per instance. Bound whole, so at most one binding.
    pub decoded_samples: u32,
    /// Bind at most this many bytes of a buffer per binding (below the adapter's limit); `None`
    /// uses the adapter's `max_storage_buffer_binding_size`. Smaller values give more pages.
    pub binding_limit: Option<u64>,
}

impl Capacities {
    /// Room for `instances` instances of the largest skeleton, skin and skinned vertex set of
    /// `packages`, all skinnable, with the default program limits, 256 dispatches and a decode
    /// cache for every compressed clip of `packages` up to [`DECODE_CACHE_SAMPLES`].
    pub fn for_packages(packages: &[&Package], instances: u32) -> Capacities {
        let most =
            |f: &dyn Fn(&Package) -> usize| packages.iter().map(|p| f(p)).max().unwrap_or(0) as u32;
        let joints = most(&|p| {
            p.skeletons
                .iter()
                .map(|s| s.joint_count())
                .max()
                .unwrap_or(0)
        });
        let palette = most(&|p| p.skins.iter().map(|s| s.joints.len()).max().unwrap_or(0));
        let vertices = most(&|p| {
            (0..p.skins.len())
                .map(|k| {
                    p.meshes
                        .iter()
                        .filter(|m| m.skin as usize == k)
                        .map(|m| m.positions.len())
                        .sum::<usize>()
                })
                .max()
                .unwrap_or(0)
        });
        let curves = most(&|p| {
            (0..p.skeletons.len() as u32)
                .map(|s| p.curves.range(s).len())
                .max()
                .unwrap_or(0)
        });
        let morph_targets = most(&|p| {
            (0..p.skins.len())
                .map(|k| {
                    (p.meshes.iter().filter(|m| m.skin as usize == k))
                        .map(|m| m.targets.len())
                        .sum::<usize>()
                })
                .max()
                .unwrap_or(0)
        });
        let limits = ProgramLimits::default();
        let decoded: u64 = (packages.iter().flat_map(|p| &p.clips))
            .filter_map(|c| {
                Some(u64::from(c.compressed.as_ref()?.animated) * u64::from(c.sample_count))
            })
            .sum();
        let kinds = packages
            .iter()
            .map(|p| (p.skeletons.len() + p.skins.len()) as u32)
            .sum::<u32>()
            .max(1);
        Capacities {
            instances,
            kinds,
            joints,
            palette,
            vertices,
            curves,
            morph_targets,
            skinned_instances: instances,
            ops_per_program: limits.max_ops as u32,
            weights_per_program: limits.max_weights as u32,
            history_slots: 0,
            dispatches: 256,
            decoded_samples: decoded.min(DECODE_CACHE_SAMPLES.into()) as u32,
            binding_limit: None,
        }
    }

    /// The limits programs are validated against: these capacities and the interpreter's
    /// register file.
    pub fn program_limits(&self) -> ProgramLimits {
        ProgramLimits {
            max_ops: self.ops_per_program as usize,
            max_registers: throng_shaders::prelude::REGISTERS as usize,
            max_weights: self.weights_per_program as usize,
            history_slots: self.history_slots as usize,
        }
    }

    /// Raises the op and weight capacities to hold every program within `limits` (a state
    /// tree's `Controller::limits`), and refuses limits that need more registers than the GPU
    /// evaluator has: up front, not at the first frame whose program needs them.
    pub fn fit_programs(&mut self, limits: &ProgramLimits) -> Result<(), GpuError> {
        let available = throng_shaders::prelude::REGISTERS as usize;
        if limits.max_registers > available {
            return Err(GpuError::Registers {
                needed: limits.max_registers,
                available,
            });
        }
        self.ops_per_program = self.ops_per_program.max(limits.max_ops as u32);
        self.weights_per_program = self.weights_per_program.max(limits.max_weights as u32);
        Ok(())
    }

    /// Record vec4s of the widest program: the slot, at most three words per op, the weights.
    pub fn record_stride(&self) -> u32 {
        let per_op = throng_shaders::shape::MAX_OP_VALUES;
        (throng_shaders::shape::RECORD_HEAD
            + per_op * self.ops_per_program
            + self.weights_per_program)
            .div_ceil(4)
    }

    /// Bytes per binding these capacities bind at most on an adapter of `limits`: the adapter's
    /// storage binding and buffer size limits, or [`Capacities::binding_limit`] if lower, in
    /// whole 256-byte steps.
    pub fn binding_bytes(&self, limits: &wgpu::Limits) -> u64 {
        let adapter = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        self.binding_limit.map_or(adapter, |l| l.min(adapter)) / 256 * 256
    }

    /// The per-instance arrays that are bound whole, never paged, with their bytes per
    /// instance: they bound the instances of one runtime.
    pub fn unpaged(&self) -> [(&'static str, u64); 3] {
        [
            ("instance records", 16 * u64::from(self.record_stride())),
            ("placements", 48),
            ("animated bounds", BOUNDS_BYTES),
        ]
    }

    /// The most instances one runtime with these capacities holds under `binding_bytes` per
    /// binding, and the array that sets the bound.
    pub fn most_instances(&self, binding_bytes: u64) -> (u32, &'static str) {
        (self.unpaged().into_iter())
            .map(|(what, per)| ((binding_bytes / per).min(u64::from(u32::MAX)) as u32, what))
            .min_by_key(|&(n, _)| n)
            .unwrap_or((u32::MAX, "instances"))
    }

    /// Checks that `instances` fit one runtime on `ctx`'s adapter, before anything is built
    /// for them: a caller sizing a crowd calls this first (ozz's validate before run), and
    /// [`crate::Runtime::new`] does.
    pub fn check(&self, ctx: &GpuContext) -> Result<(), GpuError> {
        let limit = self.binding_bytes(&ctx.limits);
        let (most, what) = self.most_instances(limit);
        if self.instances > most {
            return Err(GpuError::TooManyInstances {
                instances: self.instances,
                most,
                what,
                limit,
                adapter: ctx.adapter.name.clone(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn four_joints() -> Capacities {
        Capacities {
            instances: 10,
            joints: 4,
            palette: 4,
            vertices: 8,
            curves: 0,
            morph_targets: 0,
            skinned_instances: 10,
            ops_per_program: 32,
            weights_per_program: 32,
            history_slots: 0,
            dispatches: 8,
            kinds: 1,
            decoded_samples: 0,
            binding_limit: None,
        }
    }

    #[test]
    fn the_instance_records_bound_the_instances_of_one_runtime() {
        let c = four_joints();
        // (1 + 3 · 32 + 32) / 4 rounded up: 33 vec4s, 528 bytes per instance.
        assert_eq!(c.unpaged()[0], ("instance records", 528));
        assert_eq!(c.most_instances(5280), (10, "instance records"));
        assert_eq!(c.most_instances(5279), (9, "instance records"));
        assert_eq!(c.most_instances(134_217_728), (254_200, "instance records"));
    }

    #[test]
    fn the_binding_limit_is_the_lowest_of_adapter_buffer_and_override_in_256_byte_steps() {
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: 1 << 27,
            max_buffer_size: 1 << 28,
            ..wgpu::Limits::default()
        };
        let mut c = four_joints();
        assert_eq!(c.binding_bytes(&limits), 1 << 27);
        c.binding_limit = Some(5000);
        assert_eq!(c.binding_bytes(&limits), 4864);
    }
}
