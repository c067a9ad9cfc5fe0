//! The cull pass: animated bounds and visibility for every frame slot, then the skinned budget
//! (spent on the most significant visible slots), the cards of the rest and the skinned order
//! (docs/gpu.md, "Culling and the skinned budget"), five dispatches whatever the frame holds:
//! 1. bounds (bounds.wgsl): each slot's scene box from its palette, tested against the frustum;
//!    each seen slot marked with its significance key, counted in a histogram of keys;
//! 2. tally (tally.wgsl): the budget's threshold key from the histogram, and per workgroup its
//!    seen slots, those above the threshold and those at it;
//! 3. budget (budget.wgsl, one workgroup): the tallies scanned, the frame's totals and the card
//!    draw's instance count;
//! 4. scatter (scatter.wgsl): each skinned slot at its rank of the skinned pool, every other
//!    seen slot's card;
//! 5. partition (partition.wgsl, one workgroup per unit): the pool regrouped by unit, each
//!    unit's skinning workgroups and draw arguments.

use throng_cpu_ref::bounds::Bounds;
use throng_cpu_ref::bounds::Frustum;
use throng_shaders::prelude::{
    SIGNIFICANCE_BUCKETS, SIGNIFICANCE_MIN_DEPTH, SIGNIFICANCE_SHIFT, WORKGROUP,
};
use throng_shaders::{
    kernel, BoundsParams, BudgetParams, FrameLayout, PartitionParams, ScatterParams, Stream,
    TallyParams,
};

use crate::passes::{dispatch, missing, Frame, Group, Params};
use crate::pipelines::{build, Built};
use crate::{FrameReport, GpuError};

pub(crate) struct CullPass {
    /// Bounds, tally, budget, scatter, partition.
    built: [Built; 5],
    groups: [Group; 5],
    planned: Option<Planned>,
}

/// This frame's five dispatches: parameter slots and workgroups, and the slots it clears.
#[derive(Clone, Copy)]
struct Planned {
    slots: [u32; 5],
    workgroups: [u64; 5],
    frame_slots: u32,
}

/// The significance key of a box `b` seen through `frustum` (`None`: 0 for every box), as
/// bounds.wgsl `significance` computes it, in the same order of operations: its largest
/// extent over its depth (the clip-space w of its centre), each as a log2 in sixteenths of an
/// octave (an f32's top bits), offset to the middle of `SIGNIFICANCE_BUCKETS` and clamped. A
/// larger key is a larger projected size; the skinned budget serves the largest keys first.
pub fn significance(frustum: Option<&Frustum>, b: &Bounds) -> u32 {
    let Some(f) = frustum else { return 0 };
    let e = b.max - b.min;
    let size = e.x.max(e.y.max(e.z));
    let c = (b.min + b.max) * 0.5;
    let (l, r) = (f.planes[0], f.planes[1]);
    let dl = l.x * c.x + l.y * c.y + l.z * c.z + l.w;
    let dr = r.x * c.x + r.y * c.y + r.z * c.z + r.w;
    let depth = ((dl + dr) * 0.5).max(SIGNIFICANCE_MIN_DEPTH);
    let k = (size.to_bits() >> SIGNIFICANCE_SHIFT) as i32
        - (depth.to_bits() >> SIGNIFICANCE_SHIFT) as i32
        + (SIGNIFICANCE_BUCKETS / 2) as i32;
    k.clamp(0, SIGNIFICANCE_BUCKETS as i32 - 1) as u32
}

impl CullPass {
    /// With `morph`, the bounds widen by each slot's morph targets, and the partition lists the
    /// instances whose targets weigh anything for the morph pass.
    pub fn new(
        device: &wgpu::Device,
        layout: &FrameLayout,
        morph: bool,
    ) -> Result<CullPass, GpuError> {
        let make = |what, k| build(device, &k).map_err(|reason| GpuError::Wgpu { what, reason });
        Ok(CullPass {
            built: [
                make("bounds pipeline", kernel::bounds(layout, morph))?,
                make("skinned budget threshold pipeline", kernel::tally())?,
                make("skinned budget pipeline", kernel::budget())?,
                make("budgeted instances and cards pipeline", kernel::scatter())?,
                make("skinned order pipeline", kernel::partition(layout, morph))?,
            ],
            groups: Default::default(),
            planned: None,
        })
    }

    /// Plans the five dispatches over `slots` frame slots and `units` skinning units, against
    /// `frustum` (`None`: every skinned instance is seen), `pool` ranks skinned at most; without
    /// units nothing is culled or skinned.
    pub fn prepare(
        &mut self,
        frame: &Frame,
        (slots, units, pool): (u32, u32, u32),
        frustum: Option<Frustum>,
        params: &mut Params,
    ) {
        self.planned = None;
        if units == 0 || slots == 0 {
            return;
        }
        for (g, built) in self.groups.iter_mut().zip(&self.built) {
            g.ensure(frame, built);
        }
        let cull = &frame.buffers.cull;
        let bounds_groups = slots.div_ceil(WORKGROUP);
        let page_instances = frame.buffers.stream(Stream::Skinned).paging.page_instances;
        let ids = [
            params.push(&BoundsParams {
                slots,
                cull: u32::from(frustum.is_some()),
                pad: [0; 2],
                planes: frustum.map_or([[0.0; 4]; 6], |f| f.planes.map(|p| p.to_array())),
            }),
            params.push(&TallyParams {
                slots,
                pool,
                pad: [0; 2],
            }),
            params.push(&BudgetParams {
                groups: bounds_groups,
                pool,
                total_base: cull.total_base(),
                card_base: cull.card_base(),
            }),
            params.push(&ScatterParams {
                slots,
                pool,
                total_base: cull.total_base(),
                pad: 0,
            }),
            params.push(&PartitionParams {
                units,
                page_instances,
                pages: cull.pages,
                rows: frame.max_x,
                draw_base: cull.draw_base(),
                rank_base: cull.rank_base(),
                total_base: cull.total_base(),
                morph_list: cull.morph_list(),
                coarser_base: cull.coarser_base(),
                ..PartitionParams::default()
            }),
        ];
        self.planned = Some(Planned {
            slots: ids,
            workgroups: [
                bounds_groups.into(),
                bounds_groups.into(),
                1,
                bounds_groups.into(),
                units.into(),
            ],
            frame_slots: slots,
        });
    }

    /// Whether this frame culls and skins.
    pub fn active(&self) -> bool {
        self.planned.is_some()
    }

    /// Clears the frame's visibility marks and significance histogram (before any compute
    /// pass of the frame).
    pub fn clear(&self, frame: &Frame, encoder: &mut wgpu::CommandEncoder) {
        if let Some(p) = &self.planned {
            let bytes = 4 * u64::from(p.frame_slots);
            encoder.clear_buffer(&frame.buffers.cull.marks, 0, Some(bytes));
            let histogram = 4 * u64::from(SIGNIFICANCE_BUCKETS);
            encoder.clear_buffer(&frame.buffers.cull.groups, 0, Some(histogram));
        }
    }

    pub fn record(
        &self,
        frame: &Frame,
        pass: &mut wgpu::ComputePass,
        report: &mut FrameReport,
    ) -> Result<(), GpuError> {
        let Some(p) = &self.planned else {
            return Ok(());
        };
        for k in 0..5 {
            let group = self.groups[k].get().ok_or_else(missing)?;
            dispatch(
                pass,
                &self.built[k],
                group,
                p.slots[k],
                p.workgroups[k],
                frame.max_x,
            );
        }
        report.bounds_dispatches += 1;
        report.budget_dispatches += 4;
        Ok(())
    }
}
