//! One module per compute stage: its pipeline(s), bind group layout and bind group. Binding
//! numbers mirror the `@binding` lines at the top of the stage's WGSL file in throng-shaders.

pub(crate) mod fk;
pub(crate) mod palette;
pub(crate) mod program;
pub(crate) mod skinning;

use std::num::NonZeroU64;

use crate::layout::Params;

/// A byte range of a buffer bound to one dispatch.
#[derive(Clone, Copy)]
pub(crate) struct Range<'a> {
    pub buffer: &'a wgpu::Buffer,
    pub offset: u64,
    pub size: u64,
}

impl<'a> Range<'a> {
    pub fn whole(buffer: &'a wgpu::Buffer) -> Self {
        Range {
            buffer,
            offset: 0,
            size: buffer.size(),
        }
    }

    fn resource(&self) -> wgpu::BindingResource<'a> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: self.buffer,
            offset: self.offset,
            size: NonZeroU64::new(self.size),
        })
    }
}

/// Binding 0 of every stage: the chunk's `Params`, at a dynamic offset.
fn params_entry() -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: NonZeroU64::new(std::mem::size_of::<Params>() as u64),
        },
        count: None,
    }
}

/// Storage bindings `1 ..` in order; `true` marks read-write.
fn layout(device: &wgpu::Device, label: &str, storage: &[bool]) -> wgpu::BindGroupLayout {
    let mut entries = vec![params_entry()];
    entries.extend(
        storage
            .iter()
            .enumerate()
            .map(|(i, &write)| wgpu::BindGroupLayoutEntry {
                binding: i as u32 + 1,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: !write },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }),
    );
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

/// A bind group of `params` (one `Params` wide, offset chosen at dispatch) and `storage` in order.
fn bind_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    params: &wgpu::Buffer,
    storage: &[Range],
) -> wgpu::BindGroup {
    let mut entries = vec![wgpu::BindGroupEntry {
        binding: 0,
        resource: Range {
            buffer: params,
            offset: 0,
            size: std::mem::size_of::<Params>() as u64,
        }
        .resource(),
    }];
    entries.extend(
        storage
            .iter()
            .enumerate()
            .map(|(i, r)| wgpu::BindGroupEntry {
                binding: i as u32 + 1,
                resource: r.resource(),
            }),
    );
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout,
        entries: &entries,
    })
}

/// A compute pipeline for `entry` of `source` with `layout` as group 0.
fn pipeline(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    entries: &[&str],
    layout: &wgpu::BindGroupLayout,
) -> Vec<wgpu::ComputePipeline> {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(layout)],
        immediate_size: 0,
    });
    entries
        .iter()
        .map(|entry| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        })
        .collect()
}

/// Workgroup counts `(x, y)` covering `groups` workgroups with at most `max_x` per row.
pub(crate) fn grid(groups: u64, max_x: u32) -> (u32, u32) {
    let max_x = u64::from(max_x.max(1));
    if groups <= max_x {
        return (groups as u32, 1);
    }
    (max_x as u32, groups.div_ceil(max_x) as u32)
}

/// Records one dispatch of `threads` threads in workgroups of `size` (1D entry points).
pub(crate) fn dispatch_threads(
    pass: &mut wgpu::ComputePass,
    pipeline: &wgpu::ComputePipeline,
    group: &wgpu::BindGroup,
    params_offset: u32,
    threads: u64,
    size: u32,
    max_x: u32,
) {
    dispatch_groups(
        pass,
        pipeline,
        group,
        params_offset,
        threads.div_ceil(u64::from(size)),
        max_x,
    );
}

/// Records one dispatch of `groups` workgroups.
pub(crate) fn dispatch_groups(
    pass: &mut wgpu::ComputePass,
    pipeline: &wgpu::ComputePipeline,
    group: &wgpu::BindGroup,
    params_offset: u32,
    groups: u64,
    max_x: u32,
) {
    let (x, y) = grid(groups, max_x);
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, group, &[params_offset]);
    pass.dispatch_workgroups(x, y, 1);
}

#[cfg(test)]
mod tests {
    use super::grid;

    #[test]
    fn grid_folds_wide_dispatches_into_rows() {
        assert_eq!(grid(10, 65_535), (10, 1));
        assert_eq!(grid(65_535, 65_535), (65_535, 1));
        assert_eq!(grid(65_536, 65_535), (65_535, 2));
        let (x, y) = grid(1_250_000, 65_535);
        assert!(u64::from(x) * u64::from(y) >= 1_250_000);
    }
}
