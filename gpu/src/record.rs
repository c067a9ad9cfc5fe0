//! Recording: bind groups from a kernel's binding list, and the dispatch grids.

use throng_shaders::{Binding, Resource};

use crate::frame_buffers::FrameBuffers;
use crate::layout::OFFSET_ALIGNMENT;
use crate::pipelines::Built;
use crate::resident::ResidentPackage;
use crate::shapes::Shapes;

/// The buffer a binding names (whole; the parameters one slot wide, at a dynamic offset).
fn resource<'a>(
    b: &Binding,
    package: &'a ResidentPackage,
    frame: &'a FrameBuffers,
    shapes: &'a Shapes,
) -> wgpu::BindingResource<'a> {
    let whole = |buffer: &'a wgpu::Buffer| buffer.as_entire_binding();
    match b.resource {
        Resource::Params => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &frame.params,
            offset: 0,
            size: std::num::NonZeroU64::new(OFFSET_ALIGNMENT),
        }),
        Resource::Tables => whole(&package.buffers.tables),
        Resource::Tracks => whole(&package.buffers.tracks),
        Resource::Pool => whole(&package.buffers.pool),
        Resource::Vertices => whole(&package.buffers.vertices),
        Resource::Records => whole(&frame.records),
        Resource::Decoded => whole(&frame.decoded),
        Resource::DecodeTable => whole(&package.buffers.decode_table),
        Resource::Placements => whole(&frame.placements),
        Resource::Shapes => whole(&shapes.buffer),
        Resource::History(page) => whole(&frame.history[page as usize]),
        Resource::Bounds => whole(&frame.bounds),
        Resource::Marks => whole(&frame.cull.marks),
        Resource::Groups => whole(&frame.cull.groups),
        Resource::Ranks => whole(&frame.cull.ranks),
        Resource::Order => whole(&frame.cull.order),
        Resource::Budgeted => whole(&frame.cull.budgeted),
        Resource::IndirectTable => whole(&frame.cull.table),
        Resource::Indirect => whole(&frame.cull.indirect),
        Resource::Page(stream, page) => whole(&frame.stream(stream).pages[page as usize]),
        Resource::LastPlacements => whole(&frame.last_placements),
        Resource::Resets => whole(&frame.resets),
        Resource::Lods => whole(&frame.lods),
        Resource::AttachTable => whole(&frame.attach.table),
        Resource::Props => whole(&frame.attach.props),
        Resource::PropDraws => whole(&frame.attach.draws),
    }
}

/// The bind group of `built` for dispatches over `package`.
pub(crate) fn bind_group(
    device: &wgpu::Device,
    built: &Built,
    package: &ResidentPackage,
    frame: &FrameBuffers,
    shapes: &Shapes,
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = built
        .bindings
        .iter()
        .map(|b| wgpu::BindGroupEntry {
            binding: b.binding,
            resource: resource(b, package, frame, shapes),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(&built.label),
        layout: &built.layout,
        entries: &entries,
    })
}

/// Workgroup counts `(x, y)` covering `groups` workgroups with at most `max_x` per row.
pub(crate) fn grid(groups: u64, max_x: u32) -> (u32, u32) {
    let max_x = u64::from(max_x.max(1));
    if groups <= max_x {
        return (groups as u32, 1);
    }
    (max_x as u32, groups.div_ceil(max_x) as u32)
}

/// One dispatch of `groups` workgroups of a kernel indexed `y * groups.x + x`, parameters in
/// slot `slot`.
pub(crate) fn dispatch_1d(
    pass: &mut wgpu::ComputePass,
    pipeline: &wgpu::ComputePipeline,
    group: &wgpu::BindGroup,
    slot: u32,
    groups: u64,
    max_x: u32,
) {
    let (x, y) = grid(groups, max_x);
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, group, &[slot * OFFSET_ALIGNMENT as u32]);
    pass.dispatch_workgroups(x, y, 1);
}

/// Workgroups along x of a skinning dispatch of `vertices` per instance: blocks of `WORKGROUP ×
/// SKIN_VERTICES_PER_THREAD` vertices (y, then z, run over its visible instances).
pub(crate) fn skinning_groups(built: &Built, vertices: u32) -> u32 {
    vertices.div_ceil(built.workgroup * throng_shaders::prelude::SKIN_VERTICES_PER_THREAD)
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
