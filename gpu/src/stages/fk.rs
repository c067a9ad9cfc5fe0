//! FK stage: `fast` (one workgroup per instance, level by level in workgroup memory) for
//! skeletons of up to `throng_shaders::FK_WORKGROUP` joints, else `fallback` (one thread per
//! instance walking its joints through storage).

use super::{bind_group, layout, pipeline, Range};

pub(crate) struct FkStage {
    pub fast: wgpu::ComputePipeline,
    pub fallback: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

/// Resources of one chunk, in binding order 1..=4 (fk.wgsl).
pub(crate) struct FkBindings<'a> {
    pub joint_table: Range<'a>,
    pub headers: Range<'a>,
    pub locals: Range<'a>,
    pub components: Range<'a>,
}

impl FkStage {
    pub fn new(device: &wgpu::Device) -> Self {
        let layout = layout(device, "fk", &[false, false, false, true]);
        let source = throng_shaders::fk_source();
        let mut p = pipeline(
            device,
            "fk",
            &source,
            &[throng_shaders::FK_FAST, throng_shaders::FK_FALLBACK],
            &layout,
        );
        let fallback = p.remove(1);
        let fast = p.remove(0);
        FkStage {
            fast,
            fallback,
            layout,
        }
    }

    /// True when a skeleton of `joints` joints takes the workgroup-memory path.
    pub fn fits_fast_path(joints: u32) -> bool {
        joints <= throng_shaders::FK_WORKGROUP
    }

    pub fn bind(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        b: &FkBindings,
    ) -> wgpu::BindGroup {
        bind_group(
            device,
            &self.layout,
            params,
            &[b.joint_table, b.headers, b.locals, b.components],
        )
    }
}
