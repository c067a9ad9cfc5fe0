//! Pose-program stage: one thread per (instance, joint); writes final local transforms.

use super::{bind_group, layout, pipeline, Range};

pub(crate) struct ProgramStage {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

/// Resources of one chunk, in binding order 1..=8 (program.wgsl).
pub(crate) struct ProgramBindings<'a> {
    pub clips: Range<'a>,
    pub tracks: Range<'a>,
    pub values: Range<'a>,
    pub masks: Range<'a>,
    pub headers: Range<'a>,
    pub ops: Range<'a>,
    pub weights: Range<'a>,
    pub locals: Range<'a>,
}

impl ProgramStage {
    pub fn new(device: &wgpu::Device) -> Self {
        let layout = layout(
            device,
            "program",
            &[false, false, false, false, false, false, false, true],
        );
        let source = throng_shaders::program_source();
        let pipeline =
            pipeline(device, "program", &source, &[throng_shaders::MAIN], &layout).remove(0);
        ProgramStage { pipeline, layout }
    }

    pub fn bind(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        b: &ProgramBindings,
    ) -> wgpu::BindGroup {
        bind_group(
            device,
            &self.layout,
            params,
            &[
                b.clips, b.tracks, b.values, b.masks, b.headers, b.ops, b.weights, b.locals,
            ],
        )
    }
}
