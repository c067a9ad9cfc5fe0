//! Whole crowd frames, raster included, at crowd scale: the crowd path (frustum culling against a
//! fixed camera, skeleton LOD by projected error, update-rate LOD by projected height, the
//! skinned budget filled nearest first) next to full detail (every instance posed every frame, skinned and drawn), for the same
//! one-clip programs and placements. A frame is timed from `Runtime::frame` to the raster pass
//! finishing; control is not part of it.

use std::time::Instant;

use glam::Vec3;
use serde::Serialize;
use throng_cpu_ref::bounds::Frustum;
use throng_cpu_ref::lod::LodState;
use throng_cpu_ref::stagger::{rate_for_height, Stagger};
use throng_fixtures::BenchShape;
use throng_gpu::raster::{Camera, Raster, Scene};
use throng_gpu::{Batch, Capacities, GpuContext, Instance, Pose, Runtime};

use crate::cpu::grid;
use crate::timing::{measure, median, ms_since};
use crate::{BenchError, Options, Subject};

/// Instance counts of the crowd table.
pub const CROWD_INSTANCES: [usize; 2] = [10_000, 100_000];
/// Skinned instances per frame on the crowd path.
pub const CROWD_BUDGET: u32 = 2048;
/// Image size of the crowd frames.
const WIDTH: u32 = 960;
const HEIGHT: u32 = 540;
/// The full-detail path is skipped when its skinned pool would take more than this.
const FULL_DETAIL_BYTES: u64 = 4 << 30;
/// Height the update rate assumes for an instance (m).
const INSTANCE_HEIGHT: f32 = 1.8;

/// One row of the crowd table.
#[derive(Clone, Debug, Serialize)]
pub struct CrowdRow {
    pub subject: String,
    pub instances: usize,
    /// The crowd path (`true`) or full detail (`false`).
    pub lod: bool,
    /// Median whole frame, ms (`None`: skipped).
    pub frame_ms: Option<f64>,
    /// Instances whose bounds meet the frustum, skinned instances (at most the budget), their
    /// vertices and triangles, in the last timed frame.
    pub visible: u64,
    pub skinned: u64,
    pub skinned_vertices: u64,
    pub triangles: u64,
    /// Per level of detail, the skinned instances' triangles (each level drawn with its mesh
    /// LOD) in the last timed frame.
    pub triangles_per_level: [u64; 3],
    /// Instances evaluated (not kept) in the last timed frame.
    pub evaluated: usize,
    /// Instances at skeleton LOD level 0, 1, 2 in the last timed frame, and the joints whose
    /// programs the pose pass evaluated (retained joints of the evaluated instances).
    pub lod_histogram: [usize; 3],
    pub joints_posed: usize,
    pub budget: u32,
    /// Medians of the GPU passes, ms (timestamp queries; 0 without them).
    pub pose_ms: f64,
    pub bounds_ms: f64,
    pub skinning_ms: f64,
    pub raster_ms: f64,
    pub frames: usize,
    /// Why the row was not measured.
    pub skipped: Option<String>,
}

/// One timed frame's figures.
struct Sample {
    visibility: throng_gpu::Visibility,
    evaluated: usize,
    lod_histogram: [usize; 3],
    joints_posed: usize,
    pose_ms: f64,
    bounds_ms: f64,
    skinning_ms: f64,
    raster_ms: f64,
}

/// The crowd table for `subject`: each of `instances` on the crowd path and at full detail.
pub fn run(
    ctx: &GpuContext,
    subject: &Subject,
    instances: &[usize],
    options: &Options,
    mut on_row: impl FnMut(&CrowdRow),
) -> Result<Vec<CrowdRow>, BenchError> {
    let mut rows = Vec::new();
    for &n in instances {
        for lod in [true, false] {
            let row = measure_crowd(ctx, subject, n, lod, options)?;
            on_row(&row);
            rows.push(row);
        }
    }
    Ok(rows)
}

/// A camera 8 m above the front edge of the bench grid (100 instances a row, 2 m apart, rows
/// along +z), looking over the crowd toward its far rows.
fn camera(n: usize) -> Camera {
    let depth = (n.div_ceil(100) as f32 * 2.0).max(2.0);
    Camera {
        eye: Vec3::new(99.0, 8.0, -12.0),
        target: Vec3::new(99.0, 0.0, depth * 0.5),
        fov_y: 1.0,
        near: 0.5,
        far: depth + 200.0,
    }
}

fn measure_crowd(
    ctx: &GpuContext,
    subject: &Subject,
    n: usize,
    lod: bool,
    options: &Options,
) -> Result<CrowdRow, BenchError> {
    let mut row = CrowdRow {
        subject: subject.name.clone(),
        instances: n,
        lod,
        frame_ms: None,
        visible: 0,
        skinned: 0,
        skinned_vertices: 0,
        triangles: 0,
        triangles_per_level: [0; 3],
        evaluated: 0,
        lod_histogram: [0; 3],
        joints_posed: 0,
        budget: if lod {
            CROWD_BUDGET.min(n as u32)
        } else {
            n as u32
        },
        pose_ms: 0.0,
        bounds_ms: 0.0,
        skinning_ms: 0.0,
        raster_ms: 0.0,
        frames: 0,
        skipped: None,
    };
    let Some(skin) = subject.skin else {
        row.skipped = Some("the subject has no skin".into());
        return Ok(row);
    };
    let pool = u64::from(row.budget) * subject.vertices() as u64 * 16;
    if pool > FULL_DETAIL_BYTES {
        row.skipped = Some(format!(
            "{} skinned instances would take {:.1} GiB of skinned vertices",
            row.budget,
            pool as f64 / f64::from(1u32 << 30)
        ));
        return Ok(row);
    }
    let count = u32::try_from(n).map_err(|_| BenchError::TooMany(n))?;
    let mut capacities = Capacities::for_packages(&[&subject.package], count);
    capacities.skinned_instances = row.budget;
    let mut runtime = Runtime::new(ctx, capacities)?;
    let package = runtime.add_package(&subject.package)?;
    let mut raster = Raster::new(ctx, WIDTH, HEIGHT)?;
    let camera = camera(n);
    let scene = Scene {
        camera,
        light: Vec3::new(0.4, 1.0, 0.3).normalize(),
        ground: None,
        fog_distance: camera.far,
        highlight: 0,
    };
    if lod {
        let frustum = Frustum::from_view_proj(&camera.view_proj(raster.aspect()));
        runtime.set_frustum(Some(frustum));
    }
    let mut set = subject.programs(BenchShape::OneClip, n);
    // Slots nearest the camera first, so the budget serves them.
    let mut order: Vec<usize> = (0..n).collect();
    let distance = |i: usize| camera.eye.distance(grid(i).translation.into());
    order.sort_by(|&a, &b| distance(a).total_cmp(&distance(b)));
    let focal = HEIGHT as f32 / (2.0 * (camera.fov_y * 0.5).tan());
    let mut stagger = Stagger::new();
    let mut levels = LodState::new();
    let skeleton = &subject.package.skeletons[subject.skeleton as usize];
    let mut frame = |f: u32| -> Result<(f64, Sample), BenchError> {
        set.advance(&subject.package, f);
        let (mut histogram, mut joints) = ([0usize; 3], 0);
        let instances: Vec<Instance> = order
            .iter()
            .map(|&i| {
                let pixels_per_unit = focal / distance(i).max(1e-3);
                let rate = rate_for_height(INSTANCE_HEIGHT * pixels_per_unit);
                let level = match lod {
                    true => levels.choose(i, pixels_per_unit, &skeleton.lods),
                    false => 0,
                };
                histogram[usize::from(level).min(2)] += 1;
                let due = !lod || stagger.due(i, rate);
                if due {
                    joints += match usize::from(level).checked_sub(1) {
                        None => skeleton.joint_count(),
                        Some(l) => skeleton.lods[l].joints().len(),
                    };
                }
                Instance {
                    pose: if due {
                        Pose::Lod(&set.programs[i], level)
                    } else {
                        Pose::Keep
                    },
                    placement: grid(i),
                }
            })
            .collect();
        let batches = [Batch {
            package,
            skeleton: subject.skeleton,
            skin: Some(skin),
            instances: &instances,
        }];
        let start = Instant::now();
        runtime.frame(&batches)?;
        let times = runtime.finish()?;
        raster.render(&runtime, &scene)?;
        let raster_times = raster.finish()?;
        let ms = ms_since(start);
        if f == 0 {
            runtime.wait_for_pipelines()?;
        }
        let sample = Sample {
            visibility: runtime.visibility(),
            evaluated: instances
                .iter()
                .filter(|x| x.pose.program().is_some())
                .count(),
            lod_histogram: histogram,
            joints_posed: joints,
            pose_ms: times.pose_ms,
            bounds_ms: times.bounds_ms,
            skinning_ms: times.skinning_ms,
            raster_ms: raster_times.gpu_ms.unwrap_or(0.0),
        };
        Ok((ms, sample))
    };
    // Three more untimed frames: every specialised pipeline in use and the stagger spread.
    for f in 0..3 {
        frame(f)?;
    }
    let mut walls = Vec::new();
    let samples = measure(options.frames, options.budget_ms, |f| {
        let (ms, s) = frame(f + 3)?;
        walls.push(ms);
        Ok::<_, BenchError>((ms, s))
    })?;
    let last = samples.last();
    row.frame_ms = Some(median(walls.iter().copied().skip(1)));
    row.frames = samples.len();
    if let Some(s) = last {
        row.visible = s.visibility.visible;
        row.skinned = s.visibility.skinned;
        row.skinned_vertices = s.visibility.skinned_vertices;
        row.triangles = s.visibility.triangles;
        row.triangles_per_level = s.visibility.per_level.map(|(_, t)| t);
        row.evaluated = s.evaluated;
        row.lod_histogram = s.lod_histogram;
        row.joints_posed = s.joints_posed;
    }
    row.pose_ms = median(samples.iter().map(|s| s.pose_ms));
    row.bounds_ms = median(samples.iter().map(|s| s.bounds_ms));
    row.skinning_ms = median(samples.iter().map(|s| s.skinning_ms));
    row.raster_ms = median(samples.iter().map(|s| s.raster_ms));
    Ok(row)
}
