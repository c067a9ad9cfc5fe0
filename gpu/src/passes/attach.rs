//! The attachments pass: every prop of every skinned instance placed from its palette, one
//! dispatch (attach.wgsl; the attachments themselves: [`crate::attach`]).

use throng_shaders::{kernel, AttachParams, FrameLayout};

use crate::passes::{dispatch, missing, Frame, Group, Params};
use crate::pipelines::{build, Built};
use crate::{FrameReport, GpuError};

pub(crate) struct AttachPass {
    built: Built,
    group: Group,
    /// This frame's parameter slot and workgroups.
    planned: Option<(u32, u64)>,
}

impl AttachPass {
    pub fn new(device: &wgpu::Device, layout: &FrameLayout) -> Result<AttachPass, GpuError> {
        let built =
            build(device, &kernel::attachments(layout)).map_err(|reason| GpuError::Wgpu {
                what: "attachments pipeline",
                reason,
            })?;
        Ok(AttachPass {
            built,
            group: Group::default(),
            planned: None,
        })
    }

    /// Plans the dispatch for `attachments` attachments over `units` units and a skinned pool
    /// of `pool` ranks, when the frame skins (`active`) and has attachments.
    pub fn prepare(
        &mut self,
        frame: &Frame,
        (active, attachments, units, pool): (bool, u32, u32, u32),
        params: &mut Params,
    ) {
        self.planned = (active && attachments > 0).then(|| {
            self.group.ensure(frame, &self.built);
            let slot = params.push(&AttachParams {
                units,
                pool,
                attachments,
                total_base: frame.buffers.cull.total_base(),
            });
            let threads = u64::from(pool) * u64::from(attachments);
            (slot, threads.div_ceil(u64::from(self.built.workgroup)))
        });
    }

    pub fn dispatches(&self) -> usize {
        usize::from(self.planned.is_some())
    }

    pub fn record(
        &self,
        frame: &Frame,
        pass: &mut wgpu::ComputePass,
        report: &mut FrameReport,
    ) -> Result<(), GpuError> {
        let Some((slot, groups)) = self.planned else {
            return Ok(());
        };
        let group = self.group.get().ok_or_else(missing)?;
        dispatch(pass, &self.built, group, slot, groups, frame.max_x);
        report.attachment_dispatches += 1;
        Ok(())
    }
}
