//! Palette stage: one thread per (instance, palette entry).

use super::{bind_group, layout, pipeline, Range};

pub(crate) struct PaletteStage {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

/// Resources of one chunk, in binding order 1..=5 (palette.wgsl).
pub(crate) struct PaletteBindings<'a> {
    pub skin_joints: Range<'a>,
    pub inverse_bind: Range<'a>,
    pub headers: Range<'a>,
    pub components: Range<'a>,
    pub palettes: Range<'a>,
}

impl PaletteStage {
    pub fn new(device: &wgpu::Device) -> Self {
        let layout = layout(device, "palette", &[false, false, false, false, true]);
        let source = throng_shaders::palette_source();
        let pipeline =
            pipeline(device, "palette", &source, &[throng_shaders::MAIN], &layout).remove(0);
        PaletteStage { pipeline, layout }
    }

    pub fn bind(
        &self,
        device: &wgpu::Device,
        params: &wgpu::Buffer,
        b: &PaletteBindings,
    ) -> wgpu::BindGroup {
        bind_group(
            device,
            &self.layout,
            params,
            &[
                b.skin_joints,
                b.inverse_bind,
                b.headers,
                b.components,
                b.palettes,
            ],
        )
    }
}
