//! The pose pass: one dispatch per program shape of the frame, over every instance of that
//! shape whatever its kind, program → FK → palette fused (docs/gpu.md, "The pose pass").
//!
//! Each dispatch runs the shape's specialised pipeline for the runtime's [`Mapping`] when it is
//! built, else the interpreter; a shape's pipeline is requested the first time a frame
//! dispatches it with at least [`crate::pipelines::MIN_INSTANCES`] instances (or at once under
//! [`Specialise::Blocking`]) and built off the frame path ([`Pipelines`]).

use std::collections::HashMap;

use throng_shaders::{kernel, FrameLayout, Outputs, PoseParams};

use crate::decode::DecodeCache;
use crate::passes::{dispatch, missing, Frame, Group, Params};
use crate::pipelines::{build, Built, Form, Key, Mapping, Pipelines, Specialise};
use crate::plan::{PoseDispatch, PosePath};
use crate::{FrameReport, GpuContext, GpuError, RuntimeOptions};

/// What a pose dispatch's bind group was made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PipelineId {
    Interpreter(Outputs),
    Specialised(Key),
}

pub(crate) struct PosePass {
    mapping: Mapping,
    options: RuntimeOptions,
    /// Whether dispatches write curve values (some resident skeleton has curve channels).
    curves: bool,
    interpreters: HashMap<Outputs, Built>,
    pub pipelines: Pipelines,
    groups: HashMap<PipelineId, Group>,
    /// This frame's dispatches: pipeline, parameter slot, workgroups.
    planned: Vec<(PipelineId, u32, u64)>,
}

impl PosePass {
    pub fn new(
        ctx: &GpuContext,
        layout: &FrameLayout,
        mapping: Mapping,
        options: RuntimeOptions,
        curves: bool,
    ) -> Result<PosePass, GpuError> {
        let mut interpreters = HashMap::new();
        for skinned in [false, true] {
            let outputs = outputs(skinned, curves, &options);
            let built =
                build(&ctx.device, &kernel::interpreter(layout, outputs)).map_err(|reason| {
                    GpuError::Wgpu {
                        what: "interpreter pipeline",
                        reason,
                    }
                })?;
            interpreters.insert(outputs, built);
        }
        Ok(PosePass {
            mapping,
            options,
            curves,
            interpreters,
            pipelines: Pipelines::new(ctx, options.specialise),
            groups: HashMap::new(),
            planned: Vec::new(),
        })
    }

    pub fn mapping(&self) -> Mapping {
        self.mapping
    }

    /// Per dispatch of `poses`, its specialised pipeline if built (requesting it if it is not),
    /// else the interpreter.
    pub fn choose_paths(
        &mut self,
        ctx: &GpuContext,
        layout: &FrameLayout,
        poses: &mut [PoseDispatch],
        decodes: &DecodeCache,
        frame_shapes: &crate::shapes::Shapes,
    ) {
        self.pipelines.poll();
        let specialise = self.options.specialise;
        let blocking = specialise == Specialise::Blocking;
        for d in poses.iter_mut() {
            d.path = PosePath::Interpreter;
            if specialise == Specialise::Never {
                continue;
            }
            let shape = &frame_shapes.entries[d.shape as usize].shape;
            let decoded = shape.samples_compressed() && decodes.all_decoded(d.packages);
            let Some(key) = self.key(d, decoded) else {
                continue;
            };
            let request = blocking || d.count >= crate::pipelines::MIN_INSTANCES;
            let ready = self
                .pipelines
                .get(key, &ctx.device, (request, blocking), || match key.form {
                    Form::Thread { .. } => kernel::thread(layout, key.outputs, shape, decoded),
                    Form::Group {
                        lanes, instances, ..
                    } => kernel::group(layout, key.outputs, shape, (lanes, instances), decoded),
                });
            if ready.is_some() {
                d.path = match key.form {
                    Form::Thread { .. } => PosePath::Thread,
                    Form::Group { .. } => PosePath::Workgroup,
                };
            }
        }
    }

    /// The specialised pipeline of dispatch `d` under the runtime's mapping, its compressed
    /// samples `decoded` or not; `None` when its skeletons are too large for the mapping.
    fn key(&self, d: &PoseDispatch, decoded: bool) -> Option<Key> {
        let form = match self.mapping {
            Mapping::Thread => Form::Thread { shape: d.shape },
            Mapping::Workgroup => {
                let (lanes, instances) = kernel::group_size(d.joints)?;
                Form::Group {
                    shape: d.shape,
                    lanes,
                    instances,
                }
            }
        };
        Some(Key {
            form,
            outputs: outputs(d.skinned, self.curves, &self.options),
            decoded,
        })
    }

    /// The pipeline a dispatch runs on its path.
    fn pipeline(&self, id: PipelineId) -> Option<&Built> {
        match id {
            PipelineId::Interpreter(o) => self.interpreters.get(&o),
            PipelineId::Specialised(k) => self.pipelines.ready(&k),
        }
    }

    /// Parameters and bind groups of the frame's pose dispatches.
    pub fn prepare(
        &mut self,
        frame: &Frame,
        poses: &[PoseDispatch],
        decodes: &DecodeCache,
        params: &mut Params,
    ) -> Result<(), GpuError> {
        self.planned.clear();
        for d in poses {
            let shape = &frame.shapes.entries[d.shape as usize];
            let id = match d.path {
                PosePath::Interpreter => {
                    PipelineId::Interpreter(outputs(d.skinned, self.curves, &self.options))
                }
                _ => {
                    let decoded =
                        shape.shape.samples_compressed() && decodes.all_decoded(d.packages);
                    PipelineId::Specialised(self.key(d, decoded).ok_or_else(missing)?)
                }
            };
            let built = match id {
                PipelineId::Interpreter(o) => self.interpreters.get(&o),
                PipelineId::Specialised(k) => self.pipelines.ready(&k),
            }
            .ok_or(GpuError::Wgpu {
                what: "frame recording",
                reason: "a specialised pipeline vanished".into(),
            })?;
            let per_group = match d.path {
                PosePath::Workgroup => kernel::group_size(d.joints).map_or(1, |(_, n)| n),
                _ => built.workgroup,
            };
            let groups = u64::from(d.count.div_ceil(per_group));
            self.groups.entry(id).or_default().ensure(frame, built);
            let slot = params.push(&PoseParams {
                count: d.count,
                record_base: d.record_base,
                record_stride: d.stride,
                shape_base: shape.base,
                shape_ops: shape.shape.ops.len() as u32,
                max_depth: d.max_depth,
                pad: [0; 2],
            });
            self.planned.push((id, slot, groups));
        }
        Ok(())
    }

    pub fn record(
        &self,
        frame: &Frame,
        pass: &mut wgpu::ComputePass,
        report: &mut FrameReport,
    ) -> Result<(), GpuError> {
        for &(id, slot, groups) in &self.planned {
            let built = self.pipeline(id).ok_or_else(missing)?;
            let group = self.groups.get(&id).and_then(Group::get);
            dispatch(
                pass,
                built,
                group.ok_or_else(missing)?,
                slot,
                groups,
                frame.max_x,
            );
            report.pose_dispatches += 1;
            match id {
                PipelineId::Interpreter(_) => report.interpreter_dispatches += 1,
                PipelineId::Specialised(_) => report.specialised_dispatches += 1,
            }
        }
        Ok(())
    }
}

/// The outputs a pose dispatch writes: palettes when one of its instances has a skin, curve
/// values when the runtime has room for them.
pub(crate) fn outputs(skinned: bool, curves: bool, options: &RuntimeOptions) -> Outputs {
    Outputs {
        locals: options.outputs.locals,
        components: options.fk,
        palettes: options.fk && skinned,
        curves,
    }
}
