//! Whole crowd frames, raster included, at crowd scale: the crowd path (frustum culling against a
//! fixed camera, skeleton LOD by projected error, update-rate LOD by projected height, the
//! skinned budget filled nearest first) next to full detail (every instance posed every frame, skinned and drawn), for the same
//! one-clip programs and placements, and the crowd path with the far tier (instances under
//! `FAR_HEIGHT` pixels drawn as impostor cards, throng-gpu `impostor`). A frame is timed from
//! `Runtime::frame` to the raster pass finishing; control is not part of it.
//!
//! [`far_cost`] sets the far tier's card against the lowest mesh LOD per instance: the same
//! crowd every instance skinned and drawn at the coarsest level, then every instance a card.

use std::time::Instant;

use glam::Vec3;
use serde::Serialize;
use throng_cpu_ref::bounds::Frustum;
use throng_cpu_ref::lod::LodState;
use throng_cpu_ref::program::op;
use throng_cpu_ref::stagger::{rate_for_height, Stagger};
use throng_cpu_ref::{Package, Program};
use throng_fixtures::BenchShape;
use throng_gpu::impostor::{bake, BakeOptions, Baked, Card, FAR_HEIGHT};
use throng_gpu::raster::{Camera, Raster, RasterTimes, Scene};
use throng_gpu::{Batch, Capacities, GpuContext, Instance, Pose, Runtime, StageTimes};

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
    /// The crowd path with the far tier: instances under `FAR_HEIGHT` pixels are cards.
    pub far: bool,
    /// Instances drawn as cards in the last timed frame (counted in no LOD level).
    pub impostors: usize,
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
    /// Medians of the GPU passes, ms (timestamp queries; 0 without them); `pose_ms` holds the
    /// decode pass before the pose pass.
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
    impostors: usize,
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
    let baked = match subject.skin {
        Some(skin) => Some(bake(
            ctx,
            &subject.package,
            skin,
            &BakeOptions::far_tier(&subject.package, skin),
            |_, _| {},
        )?),
        None => None,
    };
    let mut rows = Vec::new();
    for &n in instances {
        for (lod, far) in [(true, false), (true, true), (false, false)] {
            let far = baked.as_ref().filter(|_| far);
            let row = measure_crowd(ctx, subject, n, (lod, far), options)?;
            on_row(&row);
            rows.push(row);
        }
    }
    Ok(rows)
}

/// One instance's cost in the far tier against the lowest mesh LOD, measured in one run.
#[derive(Clone, Debug, Serialize)]
pub struct FarCost {
    pub subject: String,
    pub instances: usize,
    /// `"near"`: the crowd table's camera (the front rows tens of pixels tall, their cards
    /// large); `"far"`: every instance 5–13 pixels tall, as the far tier draws them.
    pub view: &'static str,
    /// The coarsest skeleton LOD level (its mesh LOD) the skinned frame draws every instance at.
    pub level: u8,
    /// Median whole frames (pose, bounds, skinning and raster; or hidden instances and their
    /// cards' upload and raster), ms, and the same per instance, µs.
    pub lowest_lod_frame_ms: f64,
    pub impostor_frame_ms: f64,
    pub lowest_lod_us_per_instance: f64,
    pub impostor_us_per_instance: f64,
    /// impostor / lowest LOD, of the whole frames (each instance's own cost plus its share of
    /// the frame's fixed cost).
    pub ratio: f64,
    pub frames: usize,
    /// Median frame with no instance and no card (the passes' fixed cost: submission, the
    /// render pass and its clears), ms, alternated with the two above.
    pub empty_frame_ms: f64,
    /// What one instance adds to the empty frame, µs: `(frame - empty) / instances`.
    pub lowest_lod_marginal_us: f64,
    pub impostor_marginal_us: f64,
    /// impostor / lowest LOD of what each instance adds: the far tier's goal is at most 1/20.
    pub marginal_ratio: f64,
}

/// [`FarCost`] at `n` instances seen through the crowd table's camera and from far off.
pub fn far_cost(
    ctx: &GpuContext,
    subject: &Subject,
    n: usize,
    options: &Options,
) -> Result<Vec<FarCost>, BenchError> {
    let Some(skin) = subject.skin else {
        return Ok(Vec::new());
    };
    let package = &subject.package;
    let baked = bake(
        ctx,
        package,
        skin,
        &BakeOptions::far_tier(package, skin),
        |_, _| {},
    )?;
    let depth = (n.div_ceil(100) as f32 * 2.0).max(2.0);
    let far = Camera {
        eye: Vec3::new(99.0, 40.0, -150.0),
        target: Vec3::new(99.0, 0.0, depth * 0.5),
        fov_y: 0.5,
        near: 1.0,
        far: depth + 400.0,
    };
    [("near", camera(n)), ("far", far)]
        .into_iter()
        .map(|(view, camera)| far_cost_at(ctx, subject, (skin, &baked), n, (view, camera), options))
        .collect()
}

/// [`FarCost`] through `camera`: the three frames (lowest LOD, cards, empty) alternate, so the
/// machine's drift falls on all; no culling and no budget, so every instance is drawn either
/// way.
fn far_cost_at(
    ctx: &GpuContext,
    subject: &Subject,
    (skin, baked): (u32, &Baked),
    n: usize,
    (view, camera): (&'static str, Camera),
    options: &Options,
) -> Result<FarCost, BenchError> {
    let package = &subject.package;
    let level = package.skeletons[subject.skeleton as usize].lods.len() as u8;
    let count = u32::try_from(n).map_err(|_| BenchError::TooMany(n))?;
    let mut runtime = Runtime::new(ctx, Capacities::for_packages(&[package], count))?;
    let id = runtime.add_package(package)?;
    let mut raster = Raster::new(ctx, WIDTH, HEIGHT)?;
    raster.set_impostor(&baked.impostor, &baked.atlas)?;
    let scene = scene(camera);
    let mut set = subject.programs(BenchShape::OneClip, n);
    let mut cards = Vec::with_capacity(n);
    let mut frame = |f: u32, far: bool, empty: bool| -> Result<f64, BenchError> {
        set.advance(package, f);
        cards.clear();
        let instances: Vec<Instance> = (0..n)
            .map(|i| Instance {
                pose: match far {
                    true => Pose::Hidden,
                    false => Pose::Lod(&set.programs[i], level),
                },
                placement: grid(i),
            })
            .collect();
        if far {
            for (i, p) in set.programs.iter().enumerate() {
                cards.push(card(baked, package, p, i));
            }
        }
        let batches = [Batch {
            package: id,
            skeleton: subject.skeleton,
            skin: Some(skin),
            instances: &instances,
        }];
        let batches = if empty { &batches[..0] } else { &batches[..] };
        let (ms, _, _) = timed_frame(&mut runtime, &mut raster, &scene, batches, &cards, f)?;
        Ok(ms)
    };
    for f in 0..2 {
        frame(f, false, false)?;
        frame(f, true, false)?;
        frame(f, false, true)?;
    }
    let (mut skinned, mut far, mut empty) = (Vec::new(), Vec::new(), Vec::new());
    measure(options.frames, options.budget_ms, |f| {
        let a = frame(3 * f + 2, false, false)?;
        let b = frame(3 * f + 3, true, false)?;
        let c = frame(3 * f + 4, false, true)?;
        skinned.push(a);
        far.push(b);
        empty.push(c);
        Ok::<_, BenchError>((a + b + c, ()))
    })?;
    let (a, b) = (median(skinned.iter().copied()), median(far.iter().copied()));
    let e = median(empty.iter().copied());
    let added = |frame: f64| 1e3 * (frame - e).max(0.0) / n as f64;
    Ok(FarCost {
        subject: subject.name.clone(),
        instances: n,
        view,
        level,
        lowest_lod_frame_ms: a,
        impostor_frame_ms: b,
        lowest_lod_us_per_instance: 1e3 * a / n as f64,
        impostor_us_per_instance: 1e3 * b / n as f64,
        ratio: b / a.max(1e-9),
        frames: skinned.len(),
        empty_frame_ms: e,
        lowest_lod_marginal_us: added(a),
        impostor_marginal_us: added(b),
        marginal_ratio: added(b) / added(a).max(1e-9),
    })
}

/// One frame of `batches` and `cards` (frame `f`: the first waits for every pipeline after),
/// timed from the cards' upload and `Runtime::frame` to the raster pass finishing; its wall
/// ms, stage times and raster times.
fn timed_frame(
    runtime: &mut Runtime,
    raster: &mut Raster,
    scene: &Scene,
    batches: &[Batch],
    cards: &[Card],
    f: u32,
) -> Result<(f64, StageTimes, RasterTimes), BenchError> {
    let start = Instant::now();
    raster.set_cards(cards);
    runtime.frame(batches)?;
    let times = runtime.finish()?;
    raster.render(runtime, scene)?;
    let raster_times = raster.finish()?;
    let ms = ms_since(start);
    if f == 0 {
        runtime.wait_for_pipelines()?;
    }
    Ok((ms, times, raster_times))
}

/// The card of instance `i` (frame slot `i`) running one-clip program `p` at its grid place.
fn card(baked: &Baked, package: &Package, p: &Program, i: usize) -> Card {
    let frame = (p.ops.iter())
        .find(|o| o.code == op::SAMPLE)
        .and_then(|o| baked.impostor.card_frame(package, o.a, f64::from(o.time)))
        .unwrap_or_default();
    Card::new(&baked.impostor, &grid(i), i as u32, frame)
}

fn scene(camera: Camera) -> Scene {
    Scene {
        camera,
        light: Vec3::new(0.4, 1.0, 0.3).normalize(),
        ground: None,
        fog_distance: camera.far,
        highlight: 0,
    }
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
    (lod, far): (bool, Option<&Baked>),
    options: &Options,
) -> Result<CrowdRow, BenchError> {
    let mut row = CrowdRow {
        subject: subject.name.clone(),
        instances: n,
        lod,
        far: far.is_some(),
        impostors: 0,
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
    if let Some(b) = far {
        raster.set_impostor(&b.impostor, &b.atlas)?;
    }
    let camera = camera(n);
    let scene = scene(camera);
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
    let mut cards = Vec::new();
    let mut frame = |f: u32| -> Result<(f64, Sample), BenchError> {
        set.advance(&subject.package, f);
        let (mut histogram, mut joints) = ([0usize; 3], 0);
        cards.clear();
        let instances: Vec<Instance> = order
            .iter()
            .enumerate()
            .map(|(slot, &i)| {
                let pixels_per_unit = focal / distance(i).max(1e-3);
                let height = INSTANCE_HEIGHT * pixels_per_unit;
                if let Some(b) = far.filter(|_| height < FAR_HEIGHT) {
                    let mut card = card(b, &subject.package, &set.programs[i], i);
                    card.slot = slot as u32;
                    cards.push(card);
                    return Instance {
                        pose: Pose::Hidden,
                        placement: grid(i),
                    };
                }
                let rate = rate_for_height(height);
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
        let (ms, times, raster_times) =
            timed_frame(&mut runtime, &mut raster, &scene, &batches, &cards, f)?;
        let sample = Sample {
            visibility: runtime.visibility(),
            evaluated: instances
                .iter()
                .filter(|x| x.pose.program().is_some())
                .count(),
            lod_histogram: histogram,
            impostors: cards.len(),
            joints_posed: joints,
            pose_ms: times.decode_ms + times.pose_ms,
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
        row.impostors = s.impostors;
        row.joints_posed = s.joints_posed;
    }
    row.pose_ms = median(samples.iter().map(|s| s.pose_ms));
    row.bounds_ms = median(samples.iter().map(|s| s.bounds_ms));
    row.skinning_ms = median(samples.iter().map(|s| s.skinning_ms));
    row.raster_ms = median(samples.iter().map(|s| s.raster_ms));
    Ok(row)
}
