//! Declared per-frame capacities: frame buffers are sized from them once, and a frame that
//! exceeds one gets [`crate::GpuError::Capacity`] before any GPU work.

use throng_cpu_ref::{Package, ProgramLimits};

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
    /// Dispatches per frame: one per (batch, program shape), two per skinned batch (bounds
    /// and skinning) and two for the skinned budget.
    pub dispatches: u32,
    /// Bind at most this many bytes of a buffer per binding (below the adapter's limit); `None`
    /// uses the adapter's `max_storage_buffer_binding_size`. Smaller values give more pages.
    pub binding_limit: Option<u64>,
}

impl Capacities {
    /// Room for `instances` instances of the largest skeleton, skin and skinned vertex set of
    /// `packages`, all skinnable, with the default program limits and 256 dispatches.
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
        let limits = ProgramLimits::default();
        Capacities {
            instances,
            joints,
            palette,
            vertices,
            skinned_instances: instances,
            ops_per_program: limits.max_ops as u32,
            weights_per_program: limits.max_weights as u32,
            history_slots: 0,
            dispatches: 256,
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

    /// Record vec4s of the widest program: the slot, at most three words per op, the weights.
    pub fn record_stride(&self) -> u32 {
        let per_op = throng_shaders::shape::MAX_OP_VALUES;
        (1 + per_op * self.ops_per_program + self.weights_per_program).div_ceil(4)
    }
}
