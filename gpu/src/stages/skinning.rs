//! Skinning stage: one thread per (instance, vertex of the skin's meshes).

use super::{bind_group, layout, pipeline, Range};

pub(crate) struct SkinningStage {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

/// Resources of one chunk, in binding order 1..=4 (skinning.wgsl).
pub(crate) struct SkinningBindings<'a> {
    pub vertices: Range<'a>,
    pub palettes: Range<'a>,
    pub placements: Range<'a>,
    pub skinned: Range<'a>,
}

impl SkinningStage {
    pub fn new(device: &wgpu::Device) -> Self {
        let layout = layout(device, "skinning", &[false, false, false, true]);
        let source = throng_shaders::skinning_source();
        let pipeline = pipeline(
            device,
            "skinning",
            &source,
            &[throng_shaders::MAIN],
            &layout,
        )
        .remove(0);
        SkinningStage { pipeline, layout }
    }

    pub fn bind(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        b: &SkinningBindings,
    ) -> wgpu::BindGroup {
        bind_group(
            device,
            &self.layout,
            params,
            &[b.vertices, b.palettes, b.placements, b.skinned],
        )
    }
}
