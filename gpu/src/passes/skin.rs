//! The skinning pass: one indirect dispatch for every skinned instance of every unit, its size
//! written by the cull pass (skinning.wgsl; docs/gpu.md, "Skinning"); when a resident skin has
//! morph targets, a second, the morph pass, re-skins the vertices they move (morph.wgsl).

use throng_shaders::{kernel, FrameLayout, SkinParams};

use crate::layout::OFFSET_ALIGNMENT;
use crate::passes::{missing, Frame, Group, Params};
use crate::pipelines::{build, Built};
use crate::{FrameReport, GpuError};

/// Where the morph pass's indirect arguments lie in `indirect` (bytes; partition.wgsl).
const MORPH_ARGS: u64 = 16;

pub(crate) struct SkinPass {
    built: Built,
    group: Group,
    /// The morph pass, when a resident skin has morph targets.
    morph: Option<(Built, Group)>,
    /// This frame's parameter slot (none when nothing is skinned).
    planned: Option<u32>,
}

impl SkinPass {
    pub fn new(
        device: &wgpu::Device,
        layout: &FrameLayout,
        motion: bool,
        morph: bool,
    ) -> Result<SkinPass, GpuError> {
        let make = |what, morph| {
            build(device, &kernel::skinning(layout, motion, morph))
                .map_err(|reason| GpuError::Wgpu { what, reason })
        };
        Ok(SkinPass {
            built: make("skinning pipeline", false)?,
            group: Group::default(),
            morph: match morph {
                true => Some((make("morph pipeline", true)?, Group::default())),
                false => None,
            },
            planned: None,
        })
    }

    /// Plans the dispatch over `units` units when the frame skins (`active`).
    pub fn prepare(&mut self, frame: &Frame, active: bool, units: u32, params: &mut Params) {
        self.planned = active.then(|| {
            self.group.ensure(frame, &self.built);
            if let Some((built, group)) = &mut self.morph {
                group.ensure(frame, built);
            }
            params.push(&SkinParams {
                units,
                rows: frame.max_x,
                total_base: frame.buffers.cull.total_base(),
                morph_list: frame.buffers.cull.morph_list(),
            })
        });
    }

    pub fn record(
        &self,
        frame: &Frame,
        pass: &mut wgpu::ComputePass,
        report: &mut FrameReport,
    ) -> Result<(), GpuError> {
        let Some(slot) = self.planned else {
            return Ok(());
        };
        pass.set_pipeline(&self.built.pipeline);
        let group = self.group.get().ok_or_else(missing)?;
        pass.set_bind_group(0, group, &[slot * OFFSET_ALIGNMENT as u32]);
        pass.dispatch_workgroups_indirect(&frame.buffers.cull.indirect, 0);
        report.skinning_dispatches += 1;
        if let Some((built, group)) = &self.morph {
            pass.set_pipeline(&built.pipeline);
            let group = group.get().ok_or_else(missing)?;
            pass.set_bind_group(0, group, &[slot * OFFSET_ALIGNMENT as u32]);
            pass.dispatch_workgroups_indirect(&frame.buffers.cull.indirect, MORPH_ARGS);
            report.morph_dispatches += 1;
        }
        Ok(())
    }
}
