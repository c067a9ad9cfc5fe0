//! The decode pass: the compressed clips the frame reads from the decode cache and the cache
//! lacks, decoded into it before the pose pass, every package's in one dispatch (decode.wgsl;
//! which clips: [`crate::decode`]).

use throng_shaders::kernel;

use crate::decode::DecodeCache;
use crate::layout::OFFSET_ALIGNMENT;
use crate::passes::{missing, Frame, Group, Params};
use crate::pipelines::{build, Built};
use crate::{FrameReport, GpuError};

pub(crate) struct DecodePass {
    built: Built,
    group: Group,
    /// This frame's dispatch: its parameter slot, workgroups per job and jobs.
    planned: Option<(u32, u32, u32)>,
}

impl DecodePass {
    pub fn new(device: &wgpu::Device) -> Result<DecodePass, GpuError> {
        let built = build(device, &kernel::decode()).map_err(|reason| GpuError::Wgpu {
            what: "decode pipeline",
            reason,
        })?;
        Ok(DecodePass {
            built,
            group: Group::default(),
            planned: None,
        })
    }

    pub fn prepare(&mut self, frame: &Frame, decodes: &DecodeCache, params: &mut Params) {
        self.planned = decodes.dispatch.map(|d| {
            self.group.ensure(frame, &self.built);
            (params.push(&d.params), d.groups, d.params.jobs)
        });
    }

    pub fn dispatches(&self) -> usize {
        usize::from(self.planned.is_some())
    }

    pub fn record(
        &self,
        pass: &mut wgpu::ComputePass,
        report: &mut FrameReport,
    ) -> Result<(), GpuError> {
        let Some((slot, groups, jobs)) = self.planned else {
            return Ok(());
        };
        let group = self.group.get().ok_or_else(missing)?;
        pass.set_pipeline(&self.built.pipeline);
        pass.set_bind_group(0, group, &[slot * OFFSET_ALIGNMENT as u32]);
        // One workgroup row per job (the plan keeps jobs within a dimension).
        pass.dispatch_workgroups(groups, jobs, 1);
        report.decode_dispatches += 1;
        Ok(())
    }
}
