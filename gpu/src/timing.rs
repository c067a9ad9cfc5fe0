//! Pass timings: wgpu-profiler timestamp queries around each pass where the adapter has them.

use wgpu_profiler::{GpuProfiler, GpuProfilerQuery, GpuProfilerSettings};

use crate::{GpuContext, GpuError};

pub(crate) struct Timing {
    profiler: GpuProfiler,
}

impl Timing {
    pub fn new(ctx: &GpuContext) -> Result<Timing, GpuError> {
        let settings = GpuProfilerSettings {
            enable_timer_queries: ctx.timestamps,
            enable_debug_groups: false,
            ..Default::default()
        };
        let profiler = GpuProfiler::new(&ctx.device, settings).map_err(|e| GpuError::Wgpu {
            what: "profiler creation",
            reason: e.to_string(),
        })?;
        Ok(Timing { profiler })
    }

    /// A compute pass named `label`, timed.
    pub fn begin(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        label: &str,
    ) -> (wgpu::ComputePass<'static>, GpuProfilerQuery) {
        let query = self.profiler.begin_pass_query(label, encoder);
        let pass = encoder
            .begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: query.compute_pass_timestamp_writes(),
            })
            .forget_lifetime();
        (pass, query)
    }

    pub fn end(&self, encoder: &mut wgpu::CommandEncoder, query: GpuProfilerQuery) {
        self.profiler.end_query(encoder, query);
    }

    pub fn resolve(&mut self, encoder: &mut wgpu::CommandEncoder) {
        self.profiler.resolve_queries(encoder);
    }

    pub fn end_frame(&mut self) -> Result<(), GpuError> {
        self.profiler.end_frame().map_err(|e| GpuError::Wgpu {
            what: "profiler frame end",
            reason: e.to_string(),
        })
    }

    /// Calls `see(label, ms)` for each pass of every finished frame, oldest first, so the last
    /// call of a label is the newest frame's.
    pub fn collect(&mut self, ctx: &GpuContext, mut see: impl FnMut(&str, f64)) {
        let period = ctx.queue.get_timestamp_period();
        while let Some(results) = self.profiler.process_finished_frame(period) {
            for r in results {
                see(&r.label, r.time.map_or(0.0, |t| (t.end - t.start) * 1e3));
            }
        }
    }
}
