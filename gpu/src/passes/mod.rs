//! The frame's compute passes, in order: decode → pose → cull (bounds, budget, skinned order)
//! → skin → attach (docs/gpu.md, "A frame").
//!
//! A pass owns its pipelines, its bind groups and the parameter slots it wrote, and records its
//! own dispatches: `prepare` writes its dispatch parameters for this frame into [`Params`] and
//! makes the bind groups it lacks; `record` records its dispatches into a compute pass. Every
//! pass reads the same [`Frame`]: the runtime's resident and frame buffers, never the runtime
//! itself. Each pass dispatches a fixed number of times whatever the instances, kinds, packages
//! and levels of detail of the frame, but for the pose pass, which dispatches once per program
//! shape.

pub(crate) mod attach;
pub(crate) mod cull;
pub(crate) mod decode;
pub(crate) mod pose;
pub(crate) mod present;
pub(crate) mod skin;

use throng_shaders::kernel::{self, FrameLayout, Kernel};
use throng_shaders::{Binding, Resource};

use crate::RuntimeOptions;

use crate::frame_buffers::FrameBuffers;
use crate::kinds::Kinds;
use crate::layout::OFFSET_ALIGNMENT;
use crate::pipelines::Built;
use crate::resident::Arena;
use crate::retained::RetainedBuffers;
use crate::shapes::Shapes;

/// What every pass of a frame reads.
pub(crate) struct Frame<'a> {
    pub device: &'a wgpu::Device,
    /// Most workgroups per dispatch dimension.
    pub max_x: u32,
    pub buffers: &'a FrameBuffers,
    pub arena: &'a Arena,
    pub kinds: &'a Kinds,
    pub shapes: &'a Shapes,
    /// The retained instances' buffers, once a frame has presented them.
    pub retained: Option<&'a RetainedBuffers>,
}

impl Frame<'_> {
    /// Changes whenever a buffer some binding names is made anew.
    pub fn bindings(&self) -> Bindings {
        (
            self.arena.generation,
            self.shapes.generation,
            self.buffers.attach.generation,
            self.retained.map_or(u64::MAX, |r| r.generation),
        )
    }

    /// The buffer a binding names (whole; the parameters one slot wide, at a dynamic offset).
    fn resource(&self, b: &Binding) -> wgpu::BindingResource<'_> {
        let frame = self.buffers;
        let arena = &self.arena.buffers;
        fn whole(buffer: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
            buffer.as_entire_binding()
        }
        match b.resource {
            Resource::Params => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &frame.params,
                offset: 0,
                size: std::num::NonZeroU64::new(OFFSET_ALIGNMENT),
            }),
            Resource::Tables => whole(&arena.tables),
            Resource::Tracks => whole(&arena.tracks),
            Resource::Pool => whole(&arena.pool),
            Resource::Vertices => whole(&arena.vertices),
            Resource::DecodeTable => whole(&arena.decode_table),
            Resource::Kinds => whole(&self.kinds.buffer),
            Resource::Units => whole(&self.kinds.unit_buffer),
            Resource::Records => whole(&frame.records),
            Resource::Decoded => whole(&frame.decoded),
            Resource::Placements => whole(&frame.placements),
            Resource::Shapes => whole(&self.shapes.buffer),
            Resource::History(page) => whole(&frame.history[page as usize]),
            Resource::Bounds => whole(&frame.bounds),
            Resource::Marks => whole(&frame.cull.marks),
            Resource::Groups => whole(&frame.cull.groups),
            Resource::Clocks => whole(&frame.cull.clocks),
            Resource::FarTier => whole(&frame.cull.far),
            Resource::Cards => whole(&frame.cull.cards),
            Resource::Ranks => whole(&frame.cull.ranks),
            Resource::Order => whole(&frame.cull.order),
            Resource::Budgeted => whole(&frame.cull.budgeted),
            Resource::Indirect => whole(&frame.cull.indirect),
            Resource::Page(stream, page) => whole(&frame.stream(stream).pages[page as usize]),
            Resource::LastPlacements => whole(&frame.last_placements),
            Resource::Resets => whole(&frame.resets),
            Resource::SlotKinds => whole(&frame.slot_kinds),
            Resource::Statics => whole(self.retained_or(|r| &r.statics)),
            Resource::Values => whole(self.retained_or(|r| &r.values)),
            Resource::PlacementsIn => whole(self.retained_or(|r| &r.placements)),
            Resource::Bins => whole(self.retained_or(|r| &r.bins)),
            Resource::Fill => whole(self.retained_or(|r| &r.fill)),
            Resource::Patches => whole(self.retained_or(|r| &r.patches)),
            Resource::AttachTable => whole(&frame.attach.table),
            Resource::Props => whole(&frame.attach.props),
            Resource::PropDraws => whole(&frame.attach.draws),
        }
    }

    /// A retained buffer; before the first presented frame (when only the patch and present
    /// passes, which never run then, name them) a frame buffer of the same usage stands in.
    fn retained_or(&self, pick: impl Fn(&RetainedBuffers) -> &wgpu::Buffer) -> &wgpu::Buffer {
        self.retained.map_or(&self.buffers.bounds, pick)
    }

    /// A bind group of every binding `built` lists.
    fn bind_group(&self, built: &Built) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = (built.bindings.iter())
            .map(|b| wgpu::BindGroupEntry {
                binding: b.binding,
                resource: self.resource(b),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&built.label),
            layout: &built.layout,
            entries: &entries,
        })
    }
}

/// The frame's dispatch parameters: one 256-byte uniform slot per dispatch, bound at a
/// dynamic offset. Kept between frames.
#[derive(Default)]
pub(crate) struct Params {
    bytes: Vec<u8>,
}

impl Params {
    pub fn clear(&mut self) {
        self.bytes.clear();
    }

    /// Puts `params` in the next slot; its index.
    pub fn push<T: bytemuck::Pod>(&mut self, params: &T) -> u32 {
        let slot = self.bytes.len() / OFFSET_ALIGNMENT as usize;
        let at = self.bytes.len();
        self.bytes.resize(at + OFFSET_ALIGNMENT as usize, 0);
        let p = bytemuck::bytes_of(params);
        self.bytes[at..at + p.len()].copy_from_slice(p);
        slot as u32
    }

    pub fn slots(&self) -> usize {
        self.bytes.len() / OFFSET_ALIGNMENT as usize
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// The generations of everything a bind group may name: the arena, the shape table, the
/// attachment buffers and the retained buffers.
pub(crate) type Bindings = (u64, u64, u64, u64);

/// A pipeline's bind group, kept while every buffer it binds stays the same.
#[derive(Default)]
pub(crate) struct Group {
    made: Option<(Bindings, wgpu::BindGroup)>,
}

impl Group {
    /// Makes the group anew when a bound buffer changed since it was made.
    pub fn ensure(&mut self, frame: &Frame, built: &Built) {
        let key = frame.bindings();
        if self.made.as_ref().is_none_or(|(k, _)| *k != key) {
            self.made = Some((key, frame.bind_group(built)));
        }
    }

    pub fn get(&self) -> Option<&wgpu::BindGroup> {
        self.made.as_ref().map(|(_, g)| g)
    }
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
pub(crate) fn dispatch(
    pass: &mut wgpu::ComputePass,
    built: &Built,
    group: &wgpu::BindGroup,
    slot: u32,
    groups: u64,
    max_x: u32,
) {
    let (x, y) = grid(groups, max_x);
    pass.set_pipeline(&built.pipeline);
    pass.set_bind_group(0, group, &[slot * OFFSET_ALIGNMENT as u32]);
    pass.dispatch_workgroups(x, y, 1);
}

/// A pass had no bind group for a dispatch it recorded (a bug: `prepare` makes them).
pub(crate) fn missing() -> crate::GpuError {
    crate::GpuError::Wgpu {
        what: "frame recording",
        reason: "a dispatch has no bind group".into(),
    }
}

/// Storage buffers, and buffers of any kind, the widest kernel a runtime of `layout` and
/// `options` (`curves`: with the curve stream; `morph`: with morph targets) builds binds: what
/// the device must allow per shader stage. The specialised pose kernels bind no more than the
/// interpreter (history only when their shape uses it).
pub(crate) fn widest_binding(
    layout: &FrameLayout,
    options: &RuntimeOptions,
    curves: bool,
    morph: bool,
) -> (u32, u32) {
    let kernels = [
        kernel::interpreter(layout, pose::outputs(false, curves, options)),
        kernel::interpreter(layout, pose::outputs(true, curves, options)),
        kernel::skinning(layout, options.outputs.motion, morph),
        kernel::bounds(layout, morph),
        kernel::attachments(layout),
        kernel::decode(),
        kernel::present(),
        kernel::patch(),
        kernel::budget(),
        kernel::partition(layout, morph),
        kernel::scatter(),
        kernel::tally(),
    ];
    let most = |f: fn(&Kernel) -> u32| kernels.iter().map(f).max().unwrap_or(0);
    (
        most(Kernel::storage_buffers),
        most(|k| k.bindings.len() as u32),
    )
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
