//! The patch and present passes of retained instances (docs/gpu.md, "Retained instances";
//! [`crate::retained`]): on the first frame after a tick, the rows and record templates of the
//! instances whose program changed (patch.wgsl); every frame, each slot's placement and each
//! posed slot's record blended between the last two ticks (present.wgsl).

use throng_shaders::{kernel, PatchParams, PresentParams};

use crate::passes::{dispatch, missing, Frame, Group, Params};
use crate::pipelines::{build, Built};
use crate::GpuError;

pub(crate) struct PresentPass {
    patch: Built,
    present: Built,
    groups: [Group; 2],
    /// This frame's dispatches: parameter slot and workgroups (patch, present).
    planned: [Option<(u32, u64)>; 2],
}

impl PresentPass {
    pub fn new(device: &wgpu::Device) -> Result<PresentPass, GpuError> {
        let make = |what, k| build(device, &k).map_err(|reason| GpuError::Wgpu { what, reason });
        Ok(PresentPass {
            patch: make("patch pipeline", kernel::patch())?,
            present: make("present pipeline", kernel::present())?,
            groups: Default::default(),
            planned: [None, None],
        })
    }

    /// Plans `patches` patches of `block` vec4s each (none: no patch dispatch) and the present
    /// dispatch of `params`.
    pub fn prepare(
        &mut self,
        frame: &Frame,
        (patches, block): (u32, u32),
        present: &PresentParams,
        params: &mut Params,
    ) {
        let groups = |threads: u64| threads.div_ceil(u64::from(throng_shaders::prelude::WORKGROUP));
        self.planned[0] = (patches > 0).then(|| {
            self.groups[0].ensure(frame, &self.patch);
            let slot = params.push(&PatchParams {
                patches,
                block,
                pad: [0; 2],
            });
            (slot, groups(u64::from(patches) * u64::from(block + 1)))
        });
        self.groups[1].ensure(frame, &self.present);
        self.planned[1] = Some((params.push(present), groups(present.slots.into())));
    }

    /// Clears the bins' record counters (before any compute pass of the frame).
    pub fn clear(&self, frame: &Frame, encoder: &mut wgpu::CommandEncoder) {
        if let Some(b) = frame.retained {
            encoder.clear_buffer(&b.fill, 0, None);
        }
    }

    pub fn record(&self, frame: &Frame, pass: &mut wgpu::ComputePass) -> Result<usize, GpuError> {
        let mut n = 0;
        for (k, built) in [&self.patch, &self.present].into_iter().enumerate() {
            let Some((slot, groups)) = self.planned[k] else {
                continue;
            };
            let group = self.groups[k].get().ok_or_else(missing)?;
            dispatch(pass, built, group, slot, groups, frame.max_x);
            n += 1;
        }
        Ok(n)
    }
}
