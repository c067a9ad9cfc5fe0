//! What one benchmark run measured, as JSON (serde) and as text tables.
//!
//! Every time is the median over a measurement's timed frames, in milliseconds per frame.
//! "pose" is program + FK (component transforms), "frame" adds palette + skinning.

use std::fmt::Write;

use serde::Serialize;
use throng_gpu::AdapterReport;

use crate::crowd::FarCost;
use crate::{Codec, ControlRow, CrowdRow, GameRow, LodRow, MorphRow};
use throng_fixtures::BenchShape;

/// One run: the machine's view and one row per (subject, shape, instance count).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// The GPU adapter measured, `None` when the run had none.
    pub adapter: Option<AdapterReport>,
    /// Threads of the rayon pool (the CPU-rayon columns).
    pub rayon_threads: usize,
    /// Most timed frames per measurement.
    pub frames_max: u32,
    /// A measurement stops early once its timed frames add up to this.
    pub budget_ms: f64,
    pub rows: Vec<Row>,
    /// Reference vs compressed clips ([`crate::codec::run`]); empty unless the caller ran it.
    pub codec: Codec,
    /// Whole crowd frames with raster, crowd path and full detail ([`crate::crowd::run`]);
    /// empty unless the caller ran it.
    pub crowd: Vec<CrowdRow>,
    /// An instance in the far tier against the lowest mesh LOD ([`crate::crowd::far_cost`]);
    /// empty unless the caller ran it.
    pub far_cost: Vec<FarCost>,
    /// The GPU pose pass at each skeleton LOD level ([`crate::lod::run`]); empty unless the
    /// caller ran it.
    pub lod: Vec<LodRow>,
    /// The control tick per instance beside the pose ([`crate::control::run`]); empty unless
    /// the caller ran it.
    pub control: Vec<ControlRow>,
    /// The game loop through the embedding API ([`crate::game::run`]); empty unless asked
    /// (`throng bench --game`).
    pub game: Vec<GameRow>,
    /// Whole frames with the character's morph targets against without ([`crate::morph::run`]);
    /// empty unless the caller ran it.
    pub morph: Vec<MorphRow>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub subject: String,
    pub shape: BenchShape,
    pub ops_per_program: usize,
    pub instances: usize,
    pub joints: usize,
    pub palette_entries: usize,
    pub vertices: usize,
    /// The CPU reference on one thread.
    pub cpu: CpuTiming,
    /// The CPU reference over rayon, one block of instances per thread.
    pub cpu_rayon: CpuTiming,
    pub gpu: Option<GpuTiming>,
    pub derived: Derived,
}

/// Medians of the CPU frame oracle's frames.
#[derive(Clone, Debug, Serialize)]
pub struct CpuTiming {
    /// A pose-only frame: program + FK of every instance.
    pub pose_ms: f64,
    /// `frame_ms - pose_ms`: palette + skinning (positions and normals, placed, written out).
    pub skin_ms: f64,
    /// A whole frame (the pose-only one when skinning was skipped).
    pub frame_ms: f64,
    /// Timed pose-only frames.
    pub frames: usize,
}

/// The GPU path: wall times of whole frames (`Runtime::frame` to the queue going idle), the
/// stage times of timestamp queries where the adapter has them, and what a frame moves.
#[derive(Clone, Debug, Serialize)]
pub struct GpuTiming {
    /// Wall time of a pose-only frame (the batch has no skin) in the measured mapping.
    pub pose_ms: f64,
    pub pose_frames: usize,
    /// Wall time of a whole frame (program, FK, palette, skinning); `None` when skinning was
    /// skipped (see `skinning_skipped`).
    pub frame_ms: Option<f64>,
    pub frame_frames: usize,
    /// `"timestamps"` when `stages` come from GPU timestamp queries, `"wall"` when the adapter
    /// has none (then only the wall times above exist).
    pub stage_timing: &'static str,
    /// GPU time per stage of whole frames (medians), with timestamps only.
    pub stages: Option<Stages>,
    /// Dispatches of a whole frame (of a pose-only frame when skinning was skipped).
    pub dispatches: usize,
    pub pose_dispatches: usize,
    pub chunks: usize,
    /// Per-instance bytes uploaded per frame: header, ops, weights, placement.
    pub bytes_per_instance: f64,
    /// Everything written to the GPU per frame, with chunk parameters and padding.
    pub upload_bytes: u64,
    /// GPU memory held by the subject's package (uploaded once).
    pub resident_bytes: u64,
    /// Frame-buffer bytes per instance the stages write: local and component transforms,
    /// palette, skinned vertices.
    pub output_bytes_per_instance: u64,
    pub skinning_skipped: Option<String>,
    /// The mapping of the fields above (the adapter's choice unless `--mapping` forced one).
    pub mapping: throng_gpu::Mapping,
    /// True when every timed frame ran specialised pipelines only (no interpreter dispatch).
    pub specialised: bool,
    /// The pose of each mapping measured, the measured one first.
    pub poses: Vec<MappingPose>,
    /// `stages.fk_ms` per joint, ns.
    pub fk_ns_per_joint: Option<f64>,
}

/// Pose-only frames of one mapping.
#[derive(Clone, Debug, Serialize)]
pub struct MappingPose {
    pub mapping: throng_gpu::Mapping,
    /// Wall time of a pose-only frame, ms, and per joint, ns.
    pub pose_ms: f64,
    pub pose_ns_per_joint: f64,
    /// The pose pass alone (timestamps), ms.
    pub pose_pass_ms: Option<f64>,
    /// The host's part of `pose_ms`: `Runtime::frame` alone (validation, binning, staging,
    /// upload, recording, submission), ms.
    pub host_ms: f64,
    /// Every timed frame ran specialised pipelines.
    pub specialised: bool,
}

/// Stage medians from timestamp queries, ms. The pose pass fuses program, FK and palette; the
/// parts are measured apart in the same run: `program_ms` by a runtime whose pose pass stops
/// after the program, `fk_ms` as the pose-only pass minus that, `palette_ms` as a whole frame's
/// pose pass minus the pose-only one.
#[derive(Clone, Debug, Serialize)]
pub struct Stages {
    pub program_ms: f64,
    pub fk_ms: f64,
    pub palette_ms: f64,
    pub skinning_ms: f64,
    /// The bounds pass of a whole frame (animated bounds of the skinned instances).
    pub bounds_ms: f64,
    /// The pose-only frame's pose pass.
    pub pose_ms: f64,
}

/// Figures derived from the timings.
#[derive(Clone, Debug, Serialize)]
pub struct Derived {
    /// Pose time per joint evaluated, ns (comparable with ozz's sample + local-to-model).
    pub pose_ns_per_joint: Paths,
    /// Joints posed per second (`instances × joints / pose time`).
    pub pose_joints_per_s: Paths,
    /// Whole-frame time per skinned vertex, ns (0 without a skin).
    pub frame_ns_per_vertex: Paths,
    /// Throughput of CPU-rayon over the single-threaded CPU: `cpu ms / cpu_rayon ms`.
    pub rayon_over_cpu: Ratios,
    /// Throughput of the GPU path over the single-threaded CPU: `cpu ms / gpu ms`.
    pub gpu_over_cpu: Option<Ratios>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Paths {
    pub cpu: f64,
    pub cpu_rayon: f64,
    pub gpu: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Ratios {
    pub pose: f64,
    pub frame: Option<f64>,
}

impl Derived {
    pub fn new(
        instances: usize,
        joints: usize,
        vertices: usize,
        cpu: &CpuTiming,
        rayon: &CpuTiming,
        gpu: Option<&GpuTiming>,
    ) -> Derived {
        let joint_count = (instances * joints) as f64;
        let vertex_count = (instances * vertices) as f64;
        let per = |ms: f64, count: f64| if count > 0.0 { ms * 1e6 / count } else { 0.0 };
        let rate = |ms: f64| {
            if ms > 0.0 {
                joint_count / (ms * 1e-3)
            } else {
                0.0
            }
        };
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        Derived {
            pose_ns_per_joint: Paths {
                cpu: per(cpu.pose_ms, joint_count),
                cpu_rayon: per(rayon.pose_ms, joint_count),
                gpu: gpu.map(|g| per(g.pose_ms, joint_count)),
            },
            pose_joints_per_s: Paths {
                cpu: rate(cpu.pose_ms),
                cpu_rayon: rate(rayon.pose_ms),
                gpu: gpu.map(|g| rate(g.pose_ms)),
            },
            frame_ns_per_vertex: Paths {
                cpu: per(cpu.frame_ms, vertex_count),
                cpu_rayon: per(rayon.frame_ms, vertex_count),
                gpu: gpu.and_then(|g| g.frame_ms).map(|ms| per(ms, vertex_count)),
            },
            rayon_over_cpu: Ratios {
                pose: ratio(cpu.pose_ms, rayon.pose_ms),
                frame: Some(ratio(cpu.frame_ms, rayon.frame_ms)),
            },
            gpu_over_cpu: gpu.map(|g| Ratios {
                pose: ratio(cpu.pose_ms, g.pose_ms),
                frame: g.frame_ms.map(|ms| ratio(cpu.frame_ms, ms)),
            }),
        }
    }
}

impl Report {
    /// The run as three text tables: pose, whole frame, and what a GPU frame moves.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let adapter = self
            .adapter
            .as_ref()
            .map_or("none (GPU columns empty)".to_string(), |a| a.to_string());
        let _ = writeln!(
            s,
            "adapter: {adapter}\nrayon threads: {}; median of up to {} timed frames after a warm-up (a measurement stops once its frames pass {} ms)",
            self.rayon_threads, self.frames_max, self.budget_ms
        );
        let _ = writeln!(s, "\npose = program + FK (ms per frame; GPU: wall time of a pose-only frame in the adapter's mapping, or --mapping's)");
        let _ = writeln!(
            s,
            "{:<36} {:>7} | {:>9} {:>9} {:>9} | {:>8} {:>8} {:>8} | {:>7} {:>7} {:>7} | {:>6} {:>7}",
            "subject / shape", "N", "CPU ms", "rayon ms", "GPU ms", "CPU Mj/s", "ray Mj/s", "GPU Mj/s",
            "CPU ns/j", "ray ns/j", "GPU ns/j", "ray/CPU", "GPU/CPU"
        );
        for r in &self.rows {
            let d = &r.derived;
            let g = r.gpu.as_ref();
            let _ = writeln!(
                s,
                "{:<36} {:>7} | {:>9} {:>9} {:>9} | {:>8} {:>8} {:>8} | {:>7} {:>7} {:>7} | {:>6} {:>7}",
                label(r),
                r.instances,
                num(r.cpu.pose_ms),
                num(r.cpu_rayon.pose_ms),
                opt(g.map(|g| g.pose_ms)),
                num(d.pose_joints_per_s.cpu * 1e-6),
                num(d.pose_joints_per_s.cpu_rayon * 1e-6),
                opt(d.pose_joints_per_s.gpu.map(|x| x * 1e-6)),
                num(d.pose_ns_per_joint.cpu),
                num(d.pose_ns_per_joint.cpu_rayon),
                opt(d.pose_ns_per_joint.gpu),
                times(Some(d.rayon_over_cpu.pose)),
                times(d.gpu_over_cpu.as_ref().map(|x| x.pose)),
            );
        }
        if self
            .rows
            .iter()
            .any(|r| r.gpu.as_ref().is_some_and(|g| g.poses.len() > 1))
        {
            let _ = writeln!(s, "\nGPU pose by mapping (wall ms of a pose-only frame, ns per joint; pose pass from timestamps; host = Runtime::frame alone)");
            let _ = writeln!(
                s,
                "{:<36} {:>7} | {:>10} {:>9} {:>8} {:>9} {:>9} | {:>10} {:>9} {:>8} {:>9} {:>9}",
                "subject / shape",
                "N",
                "mapping",
                "ms",
                "ns/j",
                "pass ms",
                "host ms",
                "mapping",
                "ms",
                "ns/j",
                "pass ms",
                "host ms"
            );
            for r in &self.rows {
                let Some(g) = &r.gpu else { continue };
                let cells: Vec<String> = g
                    .poses
                    .iter()
                    .map(|p| {
                        let name = if p.specialised {
                            p.mapping.name().to_string()
                        } else {
                            format!("{}*", p.mapping.name())
                        };
                        format!(
                            "{:>10} {:>9} {:>8} {:>9} {:>9}",
                            name,
                            num(p.pose_ms),
                            num(p.pose_ns_per_joint),
                            opt(p.pose_pass_ms),
                            num(p.host_ms)
                        )
                    })
                    .collect();
                let _ = writeln!(
                    s,
                    "{:<36} {:>7} | {}",
                    label(r),
                    r.instances,
                    cells.join(" | ")
                );
            }
            let _ = writeln!(
                s,
                "(* a timed frame ran the interpreter: the specialised pipeline was not ready)"
            );
        }
        let _ = writeln!(
            s,
            "\nframe = pose + palette + skinning (ms per frame; GPU: wall time of a whole frame; stages from timestamp queries: program / FK / palette measured apart, see docs/benchmark.md)"
        );
        let _ = writeln!(
            s,
            "{:<36} {:>7} | {:>9} {:>9} {:>9} | {:>6} {:>7} | {:>7} {:>7} | {:>31}",
            "subject / shape",
            "N",
            "CPU ms",
            "rayon ms",
            "GPU ms",
            "ray/CPU",
            "GPU/CPU",
            "CPU ns/v",
            "GPU ns/v",
            "GPU program/fk/palette/skin ms"
        );
        for r in &self.rows {
            let d = &r.derived;
            let g = r.gpu.as_ref();
            let stages = g.map_or_else(String::new, |g| match (&g.stages, &g.skinning_skipped) {
                (_, Some(why)) => format!("skinning skipped: {why}"),
                (Some(t), None) => format!(
                    "{}/{}/{}/{}",
                    num(t.program_ms),
                    num(t.fk_ms),
                    num(t.palette_ms),
                    num(t.skinning_ms)
                ),
                (None, None) => "wall time only".into(),
            });
            let _ = writeln!(
                s,
                "{:<36} {:>7} | {:>9} {:>9} {:>9} | {:>6} {:>7} | {:>7} {:>7} | {:>31}",
                label(r),
                r.instances,
                num(r.cpu.frame_ms),
                num(r.cpu_rayon.frame_ms),
                opt(g.and_then(|g| g.frame_ms)),
                times(d.rayon_over_cpu.frame),
                times(d.gpu_over_cpu.as_ref().and_then(|x| x.frame)),
                num(d.frame_ns_per_vertex.cpu),
                opt(d.frame_ns_per_vertex.gpu),
                stages,
            );
        }
        if self.rows.iter().any(|r| r.gpu.is_some()) {
            let _ = writeln!(s, "\nGPU frame: dispatches per frame (whole / pose-only), batches, bytes; FK part per joint");
            let _ = writeln!(
                s,
                "{:<36} {:>7} | {:>10} {:>6} | {:>8} {:>12} | {:>12} {:>10} | {:>8}",
                "subject / shape",
                "N",
                "dispatches",
                "chunks",
                "up B/inst",
                "up B/frame",
                "resident B",
                "out B/inst",
                "FK ns/j"
            );
            for r in &self.rows {
                let Some(g) = &r.gpu else { continue };
                let _ = writeln!(
                    s,
                    "{:<36} {:>7} | {:>10} {:>6} | {:>8} {:>12} | {:>12} {:>10} | {:>8}",
                    label(r),
                    r.instances,
                    format!("{} / {}", g.dispatches, g.pose_dispatches),
                    g.chunks,
                    num(g.bytes_per_instance),
                    g.upload_bytes,
                    g.resident_bytes,
                    g.output_bytes_per_instance,
                    opt(g.fk_ns_per_joint),
                );
            }
        }
        s.push_str(&self.transitions());
        s.push_str(&self.codec.table());
        s.push_str(&lod_table(&self.lod));
        s.push_str(&morph_table(&self.morph));
        s.push_str(&crowd_table(&self.crowd));
        s.push_str(&far_cost_lines(&self.far_cost));
        s.push_str(&control_table(&self.control));
        s.push_str(&game_table(&self.game));
        s
    }

    /// Per subject and instance count, the transition shapes' pose cost over the one-clip
    /// shape's, measured in this run (empty without a one-clip row to divide by).
    fn transitions(&self) -> String {
        let mut s = String::new();
        let shapes = [
            BenchShape::Crossfade,
            BenchShape::Inertialize,
            BenchShape::Storm,
        ];
        for base in self.rows.iter().filter(|r| r.shape == BenchShape::OneClip) {
            let same = |shape| {
                self.rows.iter().find(|r| {
                    r.shape == shape && r.subject == base.subject && r.instances == base.instances
                })
            };
            let parts: Vec<String> = shapes
                .iter()
                .filter_map(|&shape| {
                    let r = same(shape)?;
                    let gpu = match (&r.gpu, &base.gpu) {
                        (Some(g), Some(b)) => {
                            format!(", GPU {}", times(Some(g.pose_ms / b.pose_ms)))
                        }
                        _ => String::new(),
                    };
                    Some(format!(
                        "{} CPU {}{gpu}",
                        shape.label(),
                        times(Some(r.cpu.pose_ms / base.cpu.pose_ms))
                    ))
                })
                .collect();
            if parts.is_empty() {
                continue;
            }
            if s.is_empty() {
                let _ = writeln!(
                    s,
                    "
transitions: pose cost over one clip, same run"
                );
            }
            let _ = writeln!(
                s,
                "{} × {}: {}",
                base.subject,
                base.instances,
                parts.join("; ")
            );
        }
        s
    }
}

impl Codec {
    /// Reference vs compressed clips: pose ms per frame (CPU one thread; GPU program stage from
    /// timestamps, or the pose-only frame's wall time without them), ns per joint, ratios and
    /// resident clip bytes. Empty when nothing was compared or skipped.
    pub fn table(&self) -> String {
        let mut s = String::new();
        if self.rows.is_empty() && self.skipped.is_empty() {
            return s;
        }
        let _ = writeln!(
            s,
            "\ncodec: reference vs compressed (pose-only frames; ms per frame; ratio = compressed / reference; GPU program = timestamp stage, else pose wall time; GPU direct = compressed with the decode cache off)"
        );
        let _ = writeln!(
            s,
            "{:<36} {:>7} | {:>9} {:>9} {:>6} | {:>7} {:>7} | {:>9} {:>9} {:>6} | {:>7} {:>7} | {:>10} {:>6} | {:>11} {:>11} {:>6}",
            "subject / shape", "N", "CPU ref", "CPU cmp", "ratio", "ref ns/j", "cmp ns/j", "GPU ref", "GPU cmp",
            "ratio", "ref ns/j", "cmp ns/j", "GPU direct", "ratio", "ref clip B", "cmp clip B", "ratio"
        );
        for r in &self.rows {
            let (a, b, q) = (&r.reference, &r.compressed, &r.compressed_over_reference);
            let program = |e: &crate::codec::Encoding| e.gpu_program_ms.or(e.gpu_pose_ms);
            let joints = (r.instances * r.joints) as f64;
            let per_joint =
                |e| program(e).map(|ms| if joints > 0.0 { ms * 1e6 / joints } else { 0.0 });
            let _ = writeln!(
                s,
                "{:<36} {:>7} | {:>9} {:>9} {:>6} | {:>7} {:>7} | {:>9} {:>9} {:>6} | {:>7} {:>7} | {:>10} {:>6} | {:>11} {:>11} {:>6}",
                fit(format!("{} / {}", r.subject, r.shape.label())),
                r.instances,
                num(a.cpu_pose_ms),
                num(b.cpu_pose_ms),
                num(q.cpu_pose),
                num(a.cpu_ns_per_joint),
                num(b.cpu_ns_per_joint),
                opt(program(a)),
                opt(program(b)),
                opt(q.gpu_program.or(q.gpu_pose)),
                opt(per_joint(a)),
                opt(per_joint(b)),
                opt(b.gpu_direct_ms),
                opt(q.gpu_direct),
                a.clip_bytes,
                b.clip_bytes,
                num(q.clip_bytes),
            );
        }
        for why in &self.skipped {
            let _ = writeln!(s, "not compared: {why}");
        }
        s
    }
}

fn label(r: &Row) -> String {
    fit(format!("{} / {}", r.subject, r.shape.label()))
}

/// At most 36 characters, cut with an ellipsis.
fn fit(mut l: String) -> String {
    if l.chars().count() > 36 {
        l = l.chars().take(35).collect::<String>() + "…";
    }
    l
}

/// Three significant digits or so, without exponents.
fn num(x: f64) -> String {
    match x.abs() {
        a if a >= 100.0 => format!("{x:.0}"),
        a if a >= 10.0 => format!("{x:.1}"),
        a if a >= 1.0 => format!("{x:.2}"),
        _ => format!("{x:.3}"),
    }
}

fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), num)
}

fn times(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |x| format!("{}×", num(x)))
}

/// The game table: the crowd ticked at 30 Hz and presented at 60 through the embedding API.
fn game_table(rows: &[GameRow]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "\ngame: the crowd tree through throng::Animator, ticked at 30 Hz, frames at 60 Hz (two per tick), culled and at its levels of detail; per instance per rendered frame: the tick's share and the rest of the CPU's work (hand-off and present), ns, bytes uploaded; GPU ms per frame (median); ratios over the CPU reference's one-clip pose of one instance (same run)"
    );
    let _ =
        writeln!(
        s,
        "{:<22} {:>7} {:>7} | {:>8} {:>8} {:>7} | {:>8} {:>8} | {:>8} {:>7} {:>7} | {:>8} {:>8}",
        "subject", "N", "threads", "tick ns", "host ns", "up B", "pose ms", "frame ms", "pose ns",
        "tick/p", "host/p", "visible", "skinned"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<22} {:>7} {:>7} | {:>8.1} {:>8.1} {:>7.1} | {:>8.2} {:>8.2} | {:>8.0} {:>7.3} {:>7.3} | {:>8} {:>8}",
            r.subject,
            r.instances,
            r.threads,
            r.tick_ns,
            r.host_ns,
            r.upload_bytes,
            r.gpu_pose_ms,
            r.gpu_frame_ms,
            r.cpu_pose_ns,
            r.tick_over_pose,
            r.host_over_pose,
            r.visible,
            r.skinned
        );
    }
    s
}

/// The control table: a tick per instance on one thread and on rayon, against the pose.
fn control_table(rows: &[ControlRow]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "\ncontrol: one tick of a tree per instance (ns, median; sockets = gameplay sockets evaluated per instance, in the tick), beside the CPU reference's one-clip pose of one instance (one thread, same run); ratio = tick / pose; crowd ns = the crowd tree's tick ticked alternately with a motion-matched row, /crowd = tick / crowd ns"
    );
    let _ = writeln!(
        s,
        "{:<22} {:<15} {:>7} {:>7} {:>7} | {:>9} {:>9} {:>6} | {:>9} {:>6}",
        "subject",
        "tree",
        "N",
        "sockets",
        "threads",
        "tick ns",
        "pose ns",
        "ratio",
        "crowd ns",
        "/crowd"
    );
    for r in rows {
        let (crowd, over) = match (r.crowd_tree_ns_alternated, r.over_crowd_tree) {
            (Some(c), Some(o)) => (format!("{c:.0}"), format!("{o:.2}")),
            _ => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            s,
            "{:<22} {:<15} {:>7} {:>7} {:>7} | {:>9.0} {:>9.0} {:>6.3} | {:>9} {:>6}",
            r.subject,
            r.tree,
            r.instances,
            r.sockets,
            r.threads,
            r.ns_per_instance_tick,
            r.pose_ns_per_instance,
            r.tick_over_pose,
            crowd,
            over
        );
    }
    s
}

/// The LOD table: pose-only frames per skeleton LOD level, and each level's time against level 0.
fn lod_table(rows: &[LodRow]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "\nskeleton LOD: GPU pose-only frames (ms, median, levels interleaved frame by frame); ratio = level / level 0"
    );
    let _ = writeln!(
        s,
        "{:<36} {:>7} {:>5} {:>6} | {:>9} {:>6}",
        "subject / shape", "N", "level", "joints", "pose ms", "ratio"
    );
    for r in rows {
        let full = rows
            .iter()
            .find(|x| x.subject == r.subject && x.shape == r.shape && x.level == 0)
            .map_or(r.pose_ms, |x| x.pose_ms);
        let _ = writeln!(
            s,
            "{:<36} {:>7} {:>5} {:>6} | {:>9} {:>6.2}",
            format!("{} / {}", r.subject, r.shape.label()),
            r.instances,
            r.level,
            r.joints,
            num(r.pose_ms),
            r.pose_ms / full.max(1e-9)
        );
    }
    s
}

/// The morph table: whole frames with the morph targets against without, CPU and GPU.
fn morph_table(rows: &[MorphRow]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "\nmorph targets: whole frames (ms, median, interleaved frame by frame) with the targets and without them; ratio = with / without"
    );
    let _ = writeln!(
        s,
        "{:<24} {:>6} {:>6} {:>7} | {:>8} {:>8} {:>6} | {:>8} {:>8} {:>6}",
        "subject", "N", "active", "moved", "CPU", "CPU bare", "ratio", "GPU", "GPU bare", "ratio"
    );
    for r in rows {
        let (cpu, gpu) = r.ratios();
        let _ = writeln!(
            s,
            "{:<24} {:>6} {:>6} {:>7} | {:>8} {:>8} {:>6.3} | {:>8} {:>8} {:>6}",
            r.subject,
            r.instances,
            r.active_targets,
            r.moved_vertices,
            num(r.cpu_ms),
            num(r.cpu_plain_ms),
            cpu,
            r.gpu_ms.map_or("-".into(), num),
            r.gpu_plain_ms.map_or("-".into(), num),
            gpu.map_or("-".into(), |g| format!("{g:.3}")),
        );
    }
    s
}

/// The far tier's cost line: an instance as a card against one at the lowest mesh LOD.
fn far_cost_lines(rows: &[FarCost]) -> String {
    let mut s = String::new();
    for r in rows {
        let _ = writeln!(
            s,
            "far tier: {} × {}, {} view: a card adds {:.3} µs per instance to an empty frame ({:.1} ms), the lowest mesh LOD (level {}) {:.3} µs: {:.3}x (goal at most 0.05x); whole frames per instance {:.3} and {:.3} µs: {:.3}x ({} frames each)",
            r.subject,
            r.instances,
            r.view,
            r.impostor_marginal_us,
            r.empty_frame_ms,
            r.level,
            r.lowest_lod_marginal_us,
            r.marginal_ratio,
            r.impostor_us_per_instance,
            r.lowest_lod_us_per_instance,
            r.ratio,
            r.frames
        );
    }
    s
}

/// The crowd table: whole frames with raster, crowd path next to full detail, and the ratio of
/// the largest crowd-path frame to the smallest.
fn crowd_table(rows: &[CrowdRow]) -> String {
    let mut s = String::new();
    if rows.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "\ncrowd: whole frames with raster (ms), fixed camera; lod = culling + skeleton LOD + update-rate LOD + skinned budget, else full detail; far = the far tier too (cards under 16 px); joints = joints posed, levels = instances at skeleton LOD 0/1/2 and cards"
    );
    let _ =
        writeln!(
        s,
        "{:<12} {:>7} {:>5} {:>5} | {:>9} | {:>7} {:>7} {:>7} {:>8} {:>23} {:>10} {:>10} | {:>8} {:>7} {:>8} {:>9}",
        "subject", "N", "lod", "far", "frame ms", "visible", "skinned", "posed", "joints", "levels", "vertices", "triangles",
        "pose ms", "bnd ms", "skin ms", "raster ms"
    );
    for r in rows {
        let _ = write!(
            s,
            "{:<12} {:>7} {:>5} {:>5} | {:>9} | ",
            r.subject,
            r.instances,
            r.lod,
            r.far,
            opt(r.frame_ms)
        );
        match &r.skipped {
            Some(why) => {
                let _ = writeln!(s, "skipped: {why}");
            }
            None => {
                let _ = writeln!(
                    s,
                    "{:>7} {:>7} {:>7} {:>8} {:>23} {:>10} {:>10} | {:>8} {:>7} {:>8} {:>9}",
                    r.visible,
                    r.skinned,
                    r.evaluated,
                    r.joints_posed,
                    format!(
                        "{}/{}/{} + {}",
                        r.lod_histogram[0], r.lod_histogram[1], r.lod_histogram[2], r.impostors
                    ),
                    r.skinned_vertices,
                    r.triangles,
                    num(r.pose_ms),
                    num(r.bounds_ms),
                    num(r.skinning_ms),
                    num(r.raster_ms)
                );
            }
        }
    }
    let lod: Vec<&CrowdRow> = rows
        .iter()
        .filter(|r| r.lod && !r.far && r.frame_ms.is_some())
        .collect();
    if let (Some(small), Some(large)) = (
        lod.iter().min_by_key(|r| r.instances),
        lod.iter().max_by_key(|r| r.instances),
    ) {
        if large.instances > small.instances {
            let ratio = large.frame_ms.unwrap_or(0.0) / small.frame_ms.unwrap_or(1.0).max(1e-9);
            let _ = writeln!(
                s,
                "crowd path: {} instances take {ratio:.2}x the frame of {}",
                large.instances, small.instances
            );
        }
    }
    s
}
