//! The crowd driver: ticks many instances of one controller with rayon and writes the program
//! buffer the GPU consumes.
//!
//! Instances are split into fixed chunks of [`CHUNK`]; each chunk owns its scratch, tick output
//! and event list, all allocated at creation, so a steady-state tick allocates nothing and its
//! results (events in chunk order, programs, motion) do not depend on the number of threads.
//!
//! The program buffer has a fixed stride: instance `i`'s ops start at `i * limits.max_ops` and
//! its weights at `i * limits.max_weights`; [`ProgramRange`] gives the offsets and counts (in
//! ops and floats), so an upload is three contiguous arrays. Blend ops index weights relative
//! to their instance's weight offset.
//!
//! What a GPU runtime that keeps programs resident needs each tick is less: every instance's
//! program values ([`Crowd::values`]: its clip times and weights in `throng_cpu_ref::values`
//! order) and the programs whose static part changed ([`Crowd::changed`]). The buffer's ops are
//! rewritten in place each tick, and an op whose static part differs from the one it replaces
//! lists its instance as changed.

use bytemuck::{Pod, Zeroable};
use glam::Affine3A;
use rayon::prelude::*;
use throng_cpu_ref::{PoseOp, Program, ProgramLimits};

use crate::curve_events::CurveWatch;
use crate::events::Event;
use crate::instance::{Controller, InstanceState, Scratch, TickError, TickOutput};
use crate::program::{compile_weighed, Out, Written};
use crate::root_motion::{Motion, IDENTITY};
use crate::socket::SocketEvaluator;

/// Instances per chunk of work.
pub const CHUNK: usize = 256;

/// Where one instance's program lies in the [`ProgramBuffer`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct ProgramRange {
    pub op_offset: u32,
    pub op_count: u32,
    pub weight_offset: u32,
    pub weight_count: u32,
}

/// Every instance's pose program, contiguous.
#[derive(Clone, Debug)]
pub struct ProgramBuffer {
    pub limits: ProgramLimits,
    pub ops: Vec<PoseOp>,
    pub weights: Vec<f32>,
    pub ranges: Vec<ProgramRange>,
}

impl ProgramBuffer {
    /// Instance `i`'s program as (ops, weights).
    pub fn program(&self, i: usize) -> Option<(&[PoseOp], &[f32])> {
        let r = self.ranges.get(i)?;
        let ops = self
            .ops
            .get(r.op_offset as usize..(r.op_offset + r.op_count) as usize)?;
        let weights = self
            .weights
            .get(r.weight_offset as usize..(r.weight_offset + r.weight_count) as usize)?;
        Some((ops, weights))
    }

    /// Copies instance `i`'s program into `program` (within its capacity, so a program made
    /// with `limits`' capacity never reallocates); an unknown instance leaves it empty.
    pub fn copy_into(&self, i: usize, program: &mut Program) {
        let (ops, weights) = self.program(i).unwrap_or_default();
        program.ops.clear();
        program.ops.extend_from_slice(ops);
        program.weights.clear();
        program.weights.extend_from_slice(weights);
    }
}

/// One chunk's reusable working memory and results.
#[derive(Clone, Debug)]
struct Lane {
    scratch: Scratch,
    out: TickOutput,
    events: Vec<Event>,
    failures: Vec<(u32, TickError)>,
    socket_evaluator: SocketEvaluator,
    /// The chunk's socket transforms: instance by instance, the tree's sockets in order.
    sockets: Vec<Affine3A>,
    /// Where each instance's root-motion steps end in `scratch.motions` (the chunk's steps,
    /// instance by instance).
    pending_ends: Vec<usize>,
    /// The chunk's instances (crowd indices, ascending) whose program's static part changed.
    changed: Vec<u32>,
    curve_watch: CurveWatch,
    /// The chunk's watched curve values after the last tick: instance by instance, the tree's
    /// watched channels in order.
    curves: Vec<f32>,
}

/// Many instances of one controller.
#[derive(Clone, Debug)]
pub struct Crowd {
    pub instances: Vec<InstanceState>,
    pub programs: ProgramBuffer,
    /// Root motion each instance asked for on the last tick (identity where its tick failed).
    pub motion: Vec<Motion>,
    lanes: Vec<Lane>,
    /// Each instance's program values, `value_stride` apart ([`Crowd::values`]).
    values: Vec<f32>,
    value_counts: Vec<u32>,
    value_stride: usize,
    /// Instances whose program's static part changed on the last tick, ascending.
    changed: Vec<u32>,
}

impl Crowd {
    /// `count` instances on their initial states (ids `0..count`), with programs compiled.
    pub fn new(ctl: &Controller, count: usize) -> Result<Self, TickError> {
        let limits = ctl.limits();
        let instances = (0..count)
            .map(|i| ctl.spawn(i as u32))
            .collect::<Result<Vec<_>, _>>()?;
        let chunks = count.div_ceil(CHUNK);
        let lanes = (0..chunks).map(|_| lane(ctl)).collect();
        let programs = ProgramBuffer {
            limits,
            ops: vec![PoseOp::rest(0); count * limits.max_ops],
            weights: vec![0.0; count * limits.max_weights],
            ranges: vec![ProgramRange::default(); count],
        };
        let value_stride = value_stride(limits);
        let mut crowd = Crowd {
            instances,
            programs,
            motion: vec![IDENTITY; count],
            lanes,
            values: vec![0.0; count * value_stride],
            value_counts: vec![0; count],
            value_stride,
            changed: Vec::with_capacity(count),
        };
        crowd.compile_all(ctl);
        Ok(crowd)
    }

    /// Adds an instance `id` on its initial states at the end, its program compiled. The id
    /// names its inertialization history slot: reuse the id of a removed instance rather than
    /// grow past the slots. Allocates (the buffers grow by one instance).
    pub fn add(&mut self, ctl: &Controller, id: u32) -> Result<(), TickError> {
        let s = ctl.spawn(id)?;
        let limits = self.programs.limits;
        let i = self.instances.len();
        self.instances.push(s);
        self.programs
            .ops
            .resize((i + 1) * limits.max_ops, PoseOp::rest(0));
        self.programs
            .weights
            .resize((i + 1) * limits.max_weights, 0.0);
        self.programs.ranges.push(ProgramRange::default());
        self.motion.push(IDENTITY);
        self.values.resize((i + 1) * self.value_stride, 0.0);
        self.value_counts.push(0);
        self.changed.reserve(1);
        if self.lanes.len() < (i + 1).div_ceil(CHUNK) {
            self.lanes.push(lane(ctl));
        }
        self.compile_one(ctl, &mut ctl.scratch(), i);
        Ok(())
    }

    /// Takes `ctl` as the crowd's controller from now on: a new generation of the package of the
    /// one it was made with (a re-cook: the same tree, skeleton and clips). Rebuilds what the
    /// crowd's lanes keep of the package (the sockets' first samples, the curve watch), so
    /// later ticks read `ctl`'s values alone. Allocates.
    pub fn rebind(&mut self, ctl: &Controller) {
        for lane in &mut self.lanes {
            lane.socket_evaluator = SocketEvaluator::new(ctl);
            lane.curve_watch = CurveWatch::new(ctl);
        }
    }

    /// Removes instance `i` (by position), the last instance taking its place, and returns it;
    /// `None` when there is no instance `i`.
    pub fn remove(&mut self, i: usize) -> Option<InstanceState> {
        let last = self.instances.len().checked_sub(1).filter(|&l| i <= l)?;
        let limits = self.programs.limits;
        let (ops, weights) = (limits.max_ops, limits.max_weights);
        self.programs
            .ops
            .copy_within(last * ops..(last + 1) * ops, i * ops);
        self.programs
            .weights
            .copy_within(last * weights..(last + 1) * weights, i * weights);
        self.programs.ops.truncate(last * ops);
        self.programs.weights.truncate(last * weights);
        let moved = self.programs.ranges[last];
        self.programs.ranges[i] = range(
            i,
            limits,
            moved.op_count as usize,
            moved.weight_count as usize,
        );
        self.programs.ranges.truncate(last);
        let stride = self.value_stride;
        self.values
            .copy_within(last * stride..(last + 1) * stride, i * stride);
        self.values.truncate(last * stride);
        self.value_counts.swap_remove(i);
        move_row(&mut self.lanes, last, i, |l| &mut l.sockets);
        move_row(&mut self.lanes, last, i, |l| &mut l.curves);
        self.motion.swap_remove(i);
        self.lanes.truncate(last.div_ceil(CHUNK).max(1));
        Some(self.instances.swap_remove(i))
    }

    fn compile_all(&mut self, ctl: &Controller) {
        let mut scratch = ctl.scratch();
        for i in 0..self.instances.len() {
            self.compile_one(ctl, &mut scratch, i);
        }
    }

    /// Compiles instance `i`'s program and values and evaluates its sockets (outside a tick).
    fn compile_one(&mut self, ctl: &Controller, scratch: &mut Scratch, i: usize) {
        let limits = self.programs.limits;
        let s = &self.instances[i];
        ctl.player_weights(s, &mut scratch.weights);
        let out = Out {
            ops: &mut self.programs.ops[i * limits.max_ops..][..limits.max_ops],
            weights: &mut self.programs.weights[i * limits.max_weights..][..limits.max_weights],
            values: Some(&mut self.values[i * self.value_stride..][..self.value_stride]),
            origins: None,
        };
        let w = compile_weighed(ctl, s, &scratch.weights, &mut scratch.lists, out);
        self.programs.ranges[i] = range(i, limits, w.ops, w.weights);
        self.value_counts[i] = w.values as u32;
        self.place_sockets(ctl, i);
        self.place_curves(ctl, i);
    }

    /// Evaluates instance `i`'s watched curves from its program (outside a tick: no events).
    fn place_curves(&mut self, ctl: &Controller, i: usize) {
        let per = ctl.tree.watched_curves.len();
        if per == 0 {
            return;
        }
        let (ops, weights) = self.programs.program(i).unwrap_or_default();
        let lane = &mut self.lanes[i / CHUNK];
        let values = lane.curve_watch.evaluate(ctl, ops, weights);
        lane.curves[(i % CHUNK) * per..][..per].copy_from_slice(values);
    }

    /// Instance `i`'s watched curves after the last tick, in [`crate::tree::Tree::watched_curves`]
    /// order; empty for an unknown instance.
    pub fn curves(&self, ctl: &Controller, i: usize) -> &[f32] {
        self.lane_row(i, ctl.tree.watched_curves.len(), |l| &l.curves)
    }

    /// Instance `i`'s `per` entries of a lane's per-instance array; none for an unknown
    /// instance.
    fn lane_row<'a, T>(
        &'a self,
        i: usize,
        per: usize,
        array: impl Fn(&'a Lane) -> &'a [T],
    ) -> &'a [T] {
        self.lanes
            .get(i / CHUNK)
            .filter(|_| i < self.instances.len())
            .and_then(|l| array(l).get((i % CHUNK) * per..(i % CHUNK + 1) * per))
            .unwrap_or(&[])
    }

    /// Evaluates instance `i`'s sockets from its program (outside a tick).
    fn place_sockets(&mut self, ctl: &Controller, i: usize) {
        let per = ctl.tree.sockets.len();
        let (ops, weights) = self.programs.program(i).unwrap_or_default();
        let lane = &mut self.lanes[i / CHUNK];
        let out = &mut lane.sockets[(i % CHUNK) * per..][..per];
        if let Err(e) = lane.socket_evaluator.run(ctl, ops, weights, out) {
            let id = self.instances[i].id;
            lane.failures.push((id, TickError::Socket(e.to_string())));
        }
    }

    /// Instance `i`'s socket transforms after the last tick, in the tree's order (component
    /// frame; [`crate::socket`]); empty for an unknown instance.
    pub fn sockets(&self, ctl: &Controller, i: usize) -> &[Affine3A] {
        self.lane_row(i, ctl.tree.sockets.len(), |l| &l.sockets)
    }

    /// One tick of every instance on the current rayon pool (run it inside
    /// `ThreadPool::install` to choose the threads). Failed instances keep their state and are
    /// listed by [`Crowd::failures`].
    pub fn tick(&mut self, ctl: &Controller) {
        let limits = self.programs.limits;
        // Every tree's limits have at least one op and one weight per instance (see
        // `program::limits`), so no stride is zero.
        let op_stride = CHUNK * limits.max_ops;
        let weight_stride = CHUNK * limits.max_weights;
        let value_stride = self.value_stride;
        self.instances
            .par_chunks_mut(CHUNK)
            .zip(self.lanes.par_iter_mut())
            .zip(self.programs.ops.par_chunks_mut(op_stride))
            .zip(self.programs.weights.par_chunks_mut(weight_stride))
            .zip(self.programs.ranges.par_chunks_mut(CHUNK))
            .zip(self.motion.par_chunks_mut(CHUNK))
            .zip(self.values.par_chunks_mut(CHUNK * value_stride))
            .zip(self.value_counts.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(
                |(c, (((((((inst, lane), ops), weights), ranges), motion), values), counts))| {
                    let out = ChunkOut {
                        ops,
                        weights,
                        ranges,
                        motion,
                        values,
                        counts,
                    };
                    tick_chunk(ctl, c, inst, lane, out, limits, value_stride)
                },
            );
        self.changed.clear();
        for lane in &self.lanes {
            self.changed.extend_from_slice(&lane.changed);
        }
    }

    /// Instance `i`'s program values after the last tick, in `throng_cpu_ref::values` order:
    /// bit for bit `write_values` of its program in [`Crowd::programs`] (empty for an unknown
    /// instance).
    pub fn values(&self, i: usize) -> &[f32] {
        let n = self.value_counts.get(i).map_or(0, |&n| n as usize);
        self.values
            .get(i * self.value_stride..i * self.value_stride + n)
            .unwrap_or(&[])
    }

    /// Instances (ascending) whose program's static part (`throng_cpu_ref::values::same_static`)
    /// changed on the last tick: a runtime that keeps programs resident uploads these programs
    /// and every instance's [`Crowd::values`]. Empty when no program's shape changed.
    /// [`Crowd::add`] and [`Crowd::remove`] leave it as it was: an added instance's program,
    /// and after `remove(i)` the program of the instance moved to `i`, are the caller's to
    /// upload.
    pub fn changed(&self) -> &[u32] {
        &self.changed
    }

    /// Events of the last tick, in instance order.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.lanes.iter().flat_map(|l| l.events.iter())
    }

    /// Instances whose last tick failed, with why; they kept their previous state.
    pub fn failures(&self) -> impl Iterator<Item = &(u32, TickError)> {
        self.lanes.iter().flat_map(|l| l.failures.iter())
    }
}

fn lane(ctl: &Controller) -> Lane {
    let mut scratch = ctl.scratch();
    scratch.motions.reserve(CHUNK * ctl.pending_motions());
    Lane {
        scratch,
        out: ctl.output(),
        events: Vec::with_capacity(CHUNK * (ctl.event_capacity + ctl.tree.curve_events.len())),
        failures: Vec::with_capacity(CHUNK),
        socket_evaluator: SocketEvaluator::new(ctl),
        sockets: vec![Affine3A::IDENTITY; CHUNK * ctl.tree.sockets.len()],
        pending_ends: Vec::with_capacity(CHUNK),
        changed: Vec::with_capacity(CHUNK),
        curve_watch: CurveWatch::new(ctl),
        curves: vec![0.0; CHUNK * ctl.tree.watched_curves.len()],
    }
}

/// Copies instance `from`'s row of a lane's per-instance array (`CHUNK` rows) over instance
/// `to`'s.
fn move_row<T: Copy>(
    lanes: &mut [Lane],
    from: usize,
    to: usize,
    array: impl Fn(&mut Lane) -> &mut Vec<T>,
) {
    let per = array(&mut lanes[0]).len() / CHUNK;
    for k in 0..per {
        let moved = array(&mut lanes[from / CHUNK])[(from % CHUNK) * per + k];
        array(&mut lanes[to / CHUNK])[(to % CHUNK) * per + k] = moved;
    }
}

/// Values one program of `limits` can have: one per op at most, but a blend's, which has one
/// per weight.
fn value_stride(limits: ProgramLimits) -> usize {
    limits.max_ops + limits.max_weights
}

/// One chunk's part of the crowd's outputs.
struct ChunkOut<'a> {
    ops: &'a mut [PoseOp],
    weights: &'a mut [f32],
    ranges: &'a mut [ProgramRange],
    motion: &'a mut [Motion],
    values: &'a mut [f32],
    counts: &'a mut [u32],
}

fn range(i: usize, limits: ProgramLimits, ops: usize, weights: usize) -> ProgramRange {
    ProgramRange {
        op_offset: (i * limits.max_ops) as u32,
        op_count: ops as u32,
        weight_offset: (i * limits.max_weights) as u32,
        weight_count: weights as u32,
    }
}

/// Ticks and compiles chunk `c`, in passes over its instances: tick and program (with curve
/// events, which follow each instance's own events), sockets, root motion.
fn tick_chunk(
    ctl: &Controller,
    c: usize,
    instances: &mut [InstanceState],
    lane: &mut Lane,
    out: ChunkOut,
    limits: ProgramLimits,
    value_stride: usize,
) {
    let ChunkOut {
        ops,
        weights,
        ranges,
        motion,
        values,
        counts,
    } = out;
    lane.events.clear();
    lane.failures.clear();
    lane.scratch.motions.clear();
    lane.pending_ends.clear();
    lane.changed.clear();
    for k in 0..instances.len() {
        if let Some(next) = instances.get(k + 1) {
            let o = &ops[(k + 1) * limits.max_ops..][..limits.max_ops.min(PREFETCH_OPS)];
            let w = &weights[(k + 1) * limits.max_weights..]
                [..limits.max_weights.min(PREFETCH_WEIGHTS)];
            prefetch(next, o, w);
        }
        let s = &mut instances[k];
        match ctl.tick_steps(s, &mut lane.scratch, &mut lane.out) {
            // The tick left the scratch weights those of the committed state.
            Ok(()) => lane.events.extend_from_slice(lane.out.events.events()),
            Err(e) => {
                lane.failures.push((s.id, e));
                ctl.player_weights(s, &mut lane.scratch.weights);
            }
        }
        let program = Out {
            ops: &mut ops[k * limits.max_ops..][..limits.max_ops],
            weights: &mut weights[k * limits.max_weights..][..limits.max_weights],
            values: Some(&mut values[k * value_stride..][..value_stride]),
            origins: None,
        };
        let scratch = &mut lane.scratch;
        let w = compile_weighed(ctl, s, &scratch.weights, &mut scratch.lists, program);
        lane.pending_ends.push(lane.scratch.motions.len());
        let i = c * CHUNK + k;
        if changed(&ranges[k], &w) {
            lane.changed.push(i as u32);
        }
        ranges[k] = range(i, limits, w.ops, w.weights);
        counts[k] = w.values as u32;
        let watched = ctl.tree.watched_curves.len();
        if watched > 0 {
            let (o, w) = (
                &ops[k * limits.max_ops..][..w.ops],
                &weights[k * limits.max_weights..][..w.weights],
            );
            let last = &mut lane.curves[k * watched..][..watched];
            (lane.curve_watch).fire(ctl, (o, w), (s.tick, s.id), last, &mut lane.events);
        }
    }
    // Sockets in a pass of their own over the chunk: the reference evaluator's code and the
    // tick's do not fit the first-level instruction cache together, and interleaved, each
    // instance's sockets evicted the tick's code and its tick the evaluator's (cachegrind, three
    // sockets: 9.8 million first-level instruction misses in 120 000 instance-ticks, 1.1 million
    // in passes; the tick and sockets of 10 000 instances about 6 % faster).
    let per = ctl.tree.sockets.len();
    if per > 0 {
        for (k, s) in instances.iter().enumerate() {
            let r = ranges[k];
            let out = &mut lane.sockets[k * per..][..per];
            let (o, w) = (
                &ops[k * limits.max_ops..][..r.op_count as usize],
                &weights[k * limits.max_weights..][..r.weight_count as usize],
            );
            if let Err(e) = lane.socket_evaluator.run(ctl, o, w, out) {
                lane.failures.push((s.id, TickError::Socket(e.to_string())));
            }
        }
    }
    // Root motion last, the chunk's instances back to back: each instance's is a chain of
    // dependent divisions and square roots, which overlap across instances where, within a
    // tick, they held up the rest (measured with `f64_to_f32` in sampling: the tick of 10 000
    // instances about 3 % faster). A failed tick listed no steps, so its motion is identity.
    let mut start = 0;
    for (k, &end) in lane.pending_ends.iter().enumerate() {
        motion[k] = ctl.root_motion(&mut instances[k], &lane.scratch.motions[start..end]);
        start = end;
    }
}

/// Whether the program `written` over the one `last` described differs in its static part.
fn changed(last: &ProgramRange, written: &Written) -> bool {
    written.changed
        || written.ops != last.op_count as usize
        || written.weights != last.weight_count as usize
}

/// Ops and weights of an instance's program the crowd asks the cache for before compiling it: a
/// layered program's usual length (ops) and a cache line (weights).
const PREFETCH_OPS: usize = 12;
const PREFETCH_WEIGHTS: usize = 16;

/// Asks the cache for instance `s`'s regions, players, inputs and trajectory samples, and for
/// the start of its program `ops` and `weights`, while the one before it ticks: each
/// instance's state lies in heap blocks that the hardware prefetcher cannot predict, a tick
/// first touches them all at once, and its program lies a fixed stride of mostly unused ops
/// after the last (measured: the tick of 10 000 instances about 12 % faster for the state,
/// another 10 % for the program). A no-op off x86-64.
fn prefetch(s: &InstanceState, ops: &[PoseOp], weights: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        fn lines<T>(v: &[T]) {
            let p = v.as_ptr().cast::<i8>();
            for offset in (0..std::mem::size_of_val(v)).step_by(64) {
                // SAFETY: SSE is part of x86-64, and a prefetch never faults, whatever the address.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(offset)) };
            }
        }
        lines(&s.regions);
        lines(&s.players);
        lines(&s.inputs);
        lines(&s.root_samples);
        lines(ops);
        lines(weights);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, ops, weights);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::compile;
    use crate::tree::{self, Value};
    use throng_cpu_ref::Program;

    /// A tick's programs reuse the weights the tick computed: they must equal a fresh compile
    /// of the committed state, through blend changes and crossfades.
    fn controller() -> Controller {
        let imported =
            throng_cook::import_slice(&throng_fixtures::character_glb(), "character").unwrap();
        let package = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)
            .unwrap()
            .0;
        let src = include_str!("../../fixtures/trees/crowd.toml");
        let tree = tree::load(src, "crowd.toml", &package, 0).unwrap();
        Controller::new(tree, package, 60.0, 64).unwrap()
    }

    /// Inputs by instance id and tick: speeds through every gait, waves on and off.
    fn drive(ctl: &Controller, crowd: &mut Crowd, tick: usize) {
        for s in crowd.instances.iter_mut() {
            let i = s.id as usize;
            let speed = ((i * 7 + tick / (1 + i % 5)) % 61) as f64 / 10.0;
            let wave = ((tick + i) / (13 + i % 29)).is_multiple_of(2);
            ctl.set_input(s, "speed", Value::Float(speed)).unwrap();
            ctl.set_input(s, "wave", Value::Bool(wave)).unwrap();
        }
    }

    fn program_bits(crowd: &Crowd, i: usize) -> (Vec<u8>, Vec<u32>) {
        let (o, w) = crowd.programs.program(i).unwrap();
        (
            bytemuck::cast_slice(o).to_vec(),
            bytemuck::cast_slice(w).to_vec(),
        )
    }

    #[test]
    fn a_rebound_crowd_ticks_as_one_made_with_the_new_package() {
        let imported =
            throng_cook::import_slice(&throng_fixtures::character_glb(), "character").unwrap();
        let package = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)
            .unwrap()
            .0;
        let src = throng_fixtures::crowd_tree_with_sockets(3);
        let tree = tree::load(&src, "crowd.toml", &package, 0).unwrap();
        // A new generation: the additive layer's clip a little different, nothing else.
        let mut next = package.clone();
        let breathe = next.clips.iter_mut().find(|c| c.name == "breathe").unwrap();
        breathe.values.iter_mut().for_each(|v| *v *= 1.001);
        let first = Controller::new(tree.clone(), package, 60.0, 64).unwrap();
        let second = Controller::new(tree, next, 60.0, 64).unwrap();
        let mut made = Crowd::new(&second, 40).unwrap();
        let mut rebound = Crowd::new(&first, 40).unwrap();
        let mut stale = Crowd::new(&first, 40).unwrap();
        rebound.rebind(&second);
        for tick in 0..30 {
            for c in [&mut made, &mut rebound, &mut stale] {
                drive(&second, c, tick);
                c.tick(&second);
            }
        }
        let bits = |c: &Crowd| -> Vec<u32> {
            (0..40)
                .flat_map(|i| c.sockets(&second, i).to_vec())
                .flat_map(|a| a.to_cols_array())
                .map(f32::to_bits)
                .collect()
        };
        assert_eq!(bits(&rebound), bits(&made));
        // Without the rebind the sockets keep the first package's additive references.
        assert_ne!(bits(&stale), bits(&made));
    }

    #[test]
    fn added_instances_tick_as_if_the_crowd_had_been_made_with_them() {
        let ctl = controller();
        let (mut grown, mut made) = (
            Crowd::new(&ctl, 255).unwrap(),
            Crowd::new(&ctl, 258).unwrap(),
        );
        for id in 255..258 {
            grown.add(&ctl, id).unwrap();
        }
        for tick in 0..120 {
            drive(&ctl, &mut grown, tick);
            drive(&ctl, &mut made, tick);
            grown.tick(&ctl);
            made.tick(&ctl);
        }
        for i in 0..258 {
            assert_eq!(
                program_bits(&grown, i),
                program_bits(&made, i),
                "instance {i}"
            );
        }
    }

    #[test]
    fn a_removed_instance_is_replaced_by_the_last_which_keeps_its_program() {
        let ctl = controller();
        let (mut crowd, mut whole) = (
            Crowd::new(&ctl, 260).unwrap(),
            Crowd::new(&ctl, 260).unwrap(),
        );
        for tick in 0..60 {
            for c in [&mut crowd, &mut whole] {
                drive(&ctl, c, tick);
                c.tick(&ctl);
            }
        }
        assert_eq!(crowd.remove(3).map(|s| s.id), Some(3));
        assert_eq!(crowd.remove(259), None, "past the end");
        assert_eq!((crowd.instances.len(), crowd.instances[3].id), (259, 259));
        for tick in 60..120 {
            for c in [&mut crowd, &mut whole] {
                drive(&ctl, c, tick);
                c.tick(&ctl);
            }
        }
        assert_eq!(program_bits(&crowd, 3), program_bits(&whole, 259));
        assert_eq!(program_bits(&crowd, 258), program_bits(&whole, 258));
        assert_eq!(
            crowd.programs.ranges[3].op_offset as usize,
            3 * ctl.limits().max_ops
        );
    }

    /// A fresh compile of instance state `s`, as a program.
    fn fresh(ctl: &Controller, s: &InstanceState) -> Program {
        let limits = ctl.limits();
        let mut ops = vec![PoseOp::rest(0); limits.max_ops];
        let mut pool = vec![0.0; limits.max_weights];
        let mut player_weights = vec![0.0; ctl.tree.player_slots()];
        let (n, m) = compile(ctl, s, &mut player_weights, &mut ops, &mut pool);
        ops.truncate(n);
        pool.truncate(m);
        Program { ops, weights: pool }
    }

    #[test]
    fn crowd_values_are_a_fresh_compiles_and_changed_lists_every_program_whose_static_part_changed()
    {
        use throng_cpu_ref::values::{same_static, write_values};
        let ctl = controller();
        let mut crowd = Crowd::new(&ctl, 300).unwrap();
        let mut last: Vec<Program> = crowd.instances.iter().map(|s| fresh(&ctl, s)).collect();
        let mut values = vec![0.0; value_stride(ctl.limits())];
        let (mut changes, mut steady) = (0, 0);
        for tick in 0..400usize {
            // Inputs change for 300 ticks, then hold: once the fades and inertializations they
            // started are over, most ticks change no program's shape (the additive layer still
            // drops out whenever its clip is at its first sample).
            drive(&ctl, &mut crowd, tick.min(300));
            crowd.tick(&ctl);
            assert_eq!(crowd.failures().count(), 0);
            let changed = crowd.changed();
            assert!(changed.windows(2).all(|w| w[0] < w[1]), "ascending");
            let mut any = false;
            for (i, s) in crowd.instances.iter().enumerate() {
                let now = fresh(&ctl, s);
                let n = write_values(&now.ops, &now.weights, &mut values);
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(crowd.values(i)), bits(&values[..n]), "{i} on {tick}");
                if !same_static(&last[i], &now) {
                    assert!(changed.contains(&(i as u32)), "{i} on tick {tick}");
                    (changes, any) = (changes + 1, true);
                }
                last[i] = now;
            }
            if !any {
                assert!(changed.is_empty(), "tick {tick}: {changed:?}");
                steady += 1;
            }
        }
        assert!(changes > 1000, "{changes} static changes");
        assert!(steady > 30, "{steady} steady ticks");
    }

    #[test]
    fn crowd_programs_equal_a_fresh_compile() {
        let ctl = controller();
        let mut crowd = Crowd::new(&ctl, 300).unwrap();
        let limits = ctl.limits();
        let mut ops = vec![PoseOp::rest(0); limits.max_ops];
        let mut pool = vec![0.0; limits.max_weights];
        let mut player_weights = vec![0.0; ctl.tree.player_slots()];
        for tick in 0..400usize {
            for (i, s) in crowd.instances.iter_mut().enumerate() {
                let speed = ((i * 7 + tick / (1 + i % 5)) % 61) as f64 / 10.0;
                let wave = ((tick + i) / (13 + i % 29)).is_multiple_of(2);
                ctl.set_input(s, "speed", Value::Float(speed)).unwrap();
                ctl.set_input(s, "wave", Value::Bool(wave)).unwrap();
            }
            crowd.tick(&ctl);
            assert_eq!(crowd.failures().count(), 0);
            for (i, s) in crowd.instances.iter().enumerate() {
                let (n, m) = compile(&ctl, s, &mut player_weights, &mut ops, &mut pool);
                let (o, w) = crowd.programs.program(i).unwrap();
                let bytes = bytemuck::cast_slice::<PoseOp, u8>;
                assert_eq!(bytes(&ops[..n]), bytes(o), "ops of {i} on tick {tick}");
                let bits = bytemuck::cast_slice::<f32, u32>;
                assert_eq!(bits(&pool[..m]), bits(w), "weights of {i} on tick {tick}");
            }
        }
    }
}
