//! Declared per-frame capacities: frame buffers are sized from them once, and a frame that
//! exceeds one gets [`crate::GpuError::Capacity`] before any GPU work.

use throng_cpu_ref::{Package, ProgramLimits};

/// Upper bounds of one frame, summed over all batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacities {
    /// Instances (program and hero) per frame.
    pub instances: u32,
    /// Ops of one program (`ProgramLimits::max_ops`).
    pub ops_per_program: u32,
    /// Blend weights of one program (`ProgramLimits::max_weights`).
    pub weights_per_program: u32,
    /// Σ instances × skeleton joints (local and component transforms).
    pub joints: u64,
    /// Σ instances × skin palette entries.
    pub palette_entries: u64,
    /// Σ instances × vertices of the skin's meshes (skinned output).
    pub vertices: u64,
    /// Chunks per frame: one per batch, more when a batch exceeds the storage binding limit.
    pub chunks: u32,
    /// Bind at most this many bytes of a buffer per dispatch (below the adapter's limit); `None`
    /// uses the adapter's `max_storage_buffer_binding_size`. Smaller values force chunking.
    pub binding_limit: Option<u64>,
}

impl Capacities {
    /// Room for `instances` instances of the largest skeleton, skin and skinned vertex set of
    /// `packages`, in up to 64 chunks, with the default program limits.
    pub fn for_packages(packages: &[&Package], instances: u32) -> Capacities {
        let joints = packages
            .iter()
            .flat_map(|p| &p.skeletons)
            .map(|s| s.joint_count())
            .max()
            .unwrap_or(0);
        let palette = packages
            .iter()
            .flat_map(|p| &p.skins)
            .map(|s| s.joints.len())
            .max()
            .unwrap_or(0);
        let vertices = packages
            .iter()
            .flat_map(|p| {
                (0..p.skins.len()).map(move |k| {
                    p.meshes
                        .iter()
                        .filter(|m| m.skin as usize == k)
                        .map(|m| m.positions.len())
                        .sum::<usize>()
                })
            })
            .max()
            .unwrap_or(0);
        let limits = ProgramLimits::default();
        let n = u64::from(instances);
        Capacities {
            instances,
            ops_per_program: limits.max_ops as u32,
            weights_per_program: limits.max_weights as u32,
            joints: n * joints as u64,
            palette_entries: n * palette as u64,
            vertices: n * vertices as u64,
            chunks: 64,
            binding_limit: None,
        }
    }

    /// The limits programs are validated against: these capacities and the kernel's register file.
    pub fn program_limits(&self) -> ProgramLimits {
        ProgramLimits {
            max_ops: self.ops_per_program as usize,
            max_registers: throng_shaders::REGISTERS as usize,
            max_weights: self.weights_per_program as usize,
        }
    }
}
