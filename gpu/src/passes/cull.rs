//! The cull pass: animated bounds and visibility for every frame slot, then the skinned budget
//! and the skinned order (docs/gpu.md, "Culling and the skinned budget"), four dispatches
//! whatever the frame holds:
//! 1. bounds (bounds.wgsl): each slot's scene box from its palette, tested against the frustum;
//!    each workgroup ranks the slots it sees;
//! 2. budget (budget.wgsl, one workgroup): the workgroups' counts scanned into ranks;
//! 3. scatter (scatter.wgsl): each seen slot within the budget at its rank of the skinned pool;
//! 4. partition (partition.wgsl, one workgroup per unit): the pool regrouped by unit, each
//!    unit's skinning workgroups and draw arguments.

use throng_cpu_ref::bounds::Frustum;
use throng_shaders::prelude::WORKGROUP;
use throng_shaders::{
    kernel, BoundsParams, BudgetParams, FrameLayout, PartitionParams, ScatterParams, Stream,
};

use crate::passes::{dispatch, missing, Frame, Group, Params};
use crate::pipelines::{build, Built};
use crate::{FrameReport, GpuError};

pub(crate) struct CullPass {
    /// Bounds, budget, scatter, partition.
    built: [Built; 4],
    groups: [Group; 4],
    planned: Option<Planned>,
}

/// This frame's four dispatches: parameter slots and workgroups, and the slots it clears.
#[derive(Clone, Copy)]
struct Planned {
    slots: [u32; 4],
    workgroups: [u64; 4],
    frame_slots: u32,
}

impl CullPass {
    pub fn new(device: &wgpu::Device, layout: &FrameLayout) -> Result<CullPass, GpuError> {
        let make = |what, k| build(device, &k).map_err(|reason| GpuError::Wgpu { what, reason });
        Ok(CullPass {
            built: [
                make("bounds pipeline", kernel::bounds(layout))?,
                make("skinned budget pipeline", kernel::budget())?,
                make("budgeted instances pipeline", kernel::scatter())?,
                make("skinned order pipeline", kernel::partition())?,
            ],
            groups: Default::default(),
            planned: None,
        })
    }

    /// Plans the four dispatches over `slots` frame slots and `units` skinning units, against
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
            params.push(&BudgetParams {
                groups: bounds_groups,
                pool,
                total_base: cull.total_base(),
                pad: 0,
            }),
            params.push(&ScatterParams {
                slots,
                pool,
                pad: [0; 2],
            }),
            params.push(&PartitionParams {
                units,
                page_instances,
                pages: cull.pages,
                rows: frame.max_x,
                draw_base: cull.draw_base(),
                rank_base: cull.rank_base(),
                total_base: cull.total_base(),
                pad: 0,
            }),
        ];
        self.planned = Some(Planned {
            slots: ids,
            workgroups: [bounds_groups.into(), 1, bounds_groups.into(), units.into()],
            frame_slots: slots,
        });
    }

    /// Whether this frame culls and skins.
    pub fn active(&self) -> bool {
        self.planned.is_some()
    }

    /// Clears the frame's visibility marks (before any compute pass of the frame).
    pub fn clear(&self, frame: &Frame, encoder: &mut wgpu::CommandEncoder) {
        if let Some(p) = &self.planned {
            let bytes = 4 * u64::from(p.frame_slots);
            encoder.clear_buffer(&frame.buffers.cull.marks, 0, Some(bytes));
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
        for k in 0..4 {
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
        report.budget_dispatches += 3;
        Ok(())
    }
}
