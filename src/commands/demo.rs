//! `throng demo`: a headless crowd evaluated on the GPU and rendered offscreen to PNG.
//!
//! Per frame: the CPU writes each instance's pose program (throng-gpu `crowd`), the runtime
//! uploads programs and placements and runs program → FK → palette → skinning, the raster pass
//! draws the skinned chunks, and the image is read back and written as PNG. Frames advance
//! crowd time at 30 Hz.

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;
use throng_cpu_ref::Program;
use throng_gpu::crowd::Crowd;
use throng_gpu::raster::{Image, Raster, RasterTimes, Scene};
use throng_gpu::{Batch, Capacities, FrameReport, GpuContext, GpuError, Instance, Pose, Runtime, StageTimes};

use super::{builtin_character, load_any, print_json, CliError};

/// Seconds between frames of a sequence.
const FRAME_STEP: f64 = 1.0 / 30.0;
/// Crowd time of the first frame: mid-motion rather than every clip at its offset.
const START_TIME: f64 = 0.5;

#[derive(clap::Args)]
pub struct Args {
    /// Instances in the crowd (on a square grid).
    #[arg(long, default_value_t = 1000)]
    instances: u32,
    /// Frames to render at 30 Hz; with more than one, files are named <out>_0000.png, ...
    #[arg(long, default_value_t = 1)]
    frames: u32,
    /// Output PNG.
    #[arg(long, default_value = "crowd.png")]
    out: PathBuf,
    /// A .glb / .gltf (cooked with the default profile) or .throng package instead of the
    /// generated character.
    #[arg(long)]
    asset: Option<PathBuf>,
    /// Image width in pixels.
    #[arg(long, default_value_t = 1280)]
    width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 720)]
    height: u32,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Measurements of one frame.
struct FrameStats {
    report: FrameReport,
    stages: StageTimes,
    raster: RasterTimes,
    draws: usize,
    triangles: u64,
    /// CPU time writing the programs.
    programs_ms: f64,
    /// Wall time from program writing to the PNG on disk.
    total_ms: f64,
    path: PathBuf,
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.instances == 0 || args.frames == 0 || args.width == 0 || args.height == 0 {
        return Err(CliError::Usage("--instances, --frames, --width and --height must be at least 1".into()));
    }
    let (package, name) = match &args.asset {
        Some(path) => (load_any(path)?, path.display().to_string()),
        None => (builtin_character()?, "generated character".to_string()),
    };
    let crowd = Crowd::new(&package, 0, args.instances as usize)
        .map_err(|e| CliError::Usage(format!("{name}: {e}")))?;
    let ctx = GpuContext::new().map_err(no_gpu)?;
    let mut runtime = Runtime::new(&ctx, Capacities::for_packages(&[&package], args.instances))?;
    let id = runtime.add_package(&package, &crowd.package_masks(&package))?;
    let mut raster = Raster::new(&ctx, args.width, args.height)?;
    let scene = Scene::framing(&crowd.bounds(), raster.aspect(), crowd.spacing);
    let mut programs = vec![Program::default(); crowd.members.len()];
    let mut frames = Vec::with_capacity(args.frames as usize);
    for f in 0..args.frames {
        let start = Instant::now();
        let time = START_TIME + f64::from(f) * FRAME_STEP;
        for (i, p) in programs.iter_mut().enumerate() {
            crowd.program(i, time, p);
        }
        let programs_ms = start.elapsed().as_secs_f64() * 1e3;
        let instances: Vec<Instance> = programs
            .iter()
            .zip(&crowd.members)
            .map(|(p, m)| Instance { pose: Pose::Program(p), placement: m.placement })
            .collect();
        let batches = [Batch { package: id, skeleton: crowd.skeleton, skin: Some(crowd.skin), instances: &instances }];
        // Waiting between compute and raster keeps each wall time its own.
        let report = runtime.frame(&batches)?;
        let stages = runtime.finish()?;
        let drawn = raster.render(&runtime, &batches, &scene)?;
        let raster_times = raster.finish()?;
        let image = raster.read_image()?;
        let path = frame_path(&args.out, f, args.frames);
        write_png(&path, &image)?;
        frames.push(FrameStats {
            report,
            stages,
            raster: raster_times,
            draws: drawn.draws,
            triangles: drawn.triangles,
            programs_ms,
            total_ms: start.elapsed().as_secs_f64() * 1e3,
            path,
        });
    }
    let resident = runtime.resident_bytes();
    let chunk = runtime.chunks().first().cloned().unwrap_or_default();
    // Frame outputs each instance keeps on the GPU: local and component transforms, palette,
    // skinned vertices.
    let outputs = 48 * 2 * u64::from(chunk.joints) + 48 * u64::from(chunk.palette_len) + 32 * u64::from(chunk.vertex_count);
    let summary = Summary { name: &name, ctx: &ctx, crowd: &crowd, args: &args, resident, outputs, fast_fk: chunk.fast_fk };
    if args.json {
        print_json(&summary.json(&frames));
    } else {
        summary.print(&frames);
    }
    Ok(())
}

/// A missing adapter gets the one-line install hint; other errors pass through.
fn no_gpu(e: GpuError) -> CliError {
    match e {
        GpuError::NoAdapter { .. } => CliError::Usage(
            "throng demo needs a Vulkan adapter and found none; on a machine without a GPU install lavapipe: apt-get install -y mesa-vulkan-drivers libvulkan1".into(),
        ),
        e => CliError::Gpu(e),
    }
}

/// `out` for one frame, or `<stem>_<frame:04>.<ext>` in a sequence.
fn frame_path(out: &Path, frame: u32, frames: u32) -> PathBuf {
    if frames == 1 {
        return out.to_owned();
    }
    let stem = out.file_stem().map_or_else(|| "crowd".into(), |s| s.to_string_lossy().into_owned());
    let ext = out.extension().map_or_else(|| "png".into(), |s| s.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}_{frame:04}.{ext}"))
}

fn write_png(path: &Path, image: &Image) -> Result<(), CliError> {
    let io = |source: std::io::Error| CliError::Io { path: path.to_owned(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| CliError::Io { path: dir.to_owned(), source })?;
    }
    let file = std::fs::File::create(path).map_err(io)?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), image.width, image.height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
    let png_error = |e: png::EncodingError| match e {
        png::EncodingError::IoError(source) => CliError::Io { path: path.to_owned(), source },
        e => CliError::Usage(format!("{}: PNG encoding failed: {e}", path.display())),
    };
    let mut writer = encoder.write_header().map_err(png_error)?;
    writer.write_image_data(&image.rgba).map_err(png_error)?;
    writer.finish().map_err(png_error)
}

/// What the report prints besides per-frame numbers.
struct Summary<'a> {
    name: &'a str,
    ctx: &'a GpuContext,
    crowd: &'a Crowd,
    args: &'a Args,
    resident: u64,
    outputs: u64,
    fast_fk: bool,
}

impl Summary<'_> {
    fn print(&self, frames: &[FrameStats]) {
        let a = &self.ctx.adapter;
        let kind = if a.software { "software" } else { "hardware" };
        println!("adapter: {} ({}, {}, {kind})", a.name, a.backend, a.device_type);
        println!(
            "crowd: {} instances of {} on a {:.2} m grid, {}x{} px",
            self.crowd.members.len(),
            self.name,
            self.crowd.spacing,
            self.args.width,
            self.args.height
        );
        println!(
            "FK: {}",
            if self.fast_fk { "workgroup fast path" } else { "fallback (skeleton larger than a workgroup)" }
        );
        for f in frames {
            let r = &f.report;
            let s = &f.stages;
            println!("frame -> {}", f.path.display());
            println!(
                "  dispatches: {} compute in {} chunk(s), {} draw(s) ({} triangles)",
                r.dispatches, r.chunks, f.draws, f.triangles
            );
            println!(
                "  uploaded: {:.1} bytes per instance ({} bytes this frame in all)",
                r.bytes_per_instance(),
                r.upload_bytes
            );
            if s.gpu_timestamps {
                println!(
                    "  GPU ms (timestamps): program {:.3}, fk {:.3}, palette {:.3}, skinning {:.3}, raster {}",
                    s.program_ms,
                    s.fk_ms,
                    s.palette_ms,
                    s.skinning_ms,
                    f.raster.gpu_ms.map_or("n/a".into(), |ms| format!("{ms:.3}"))
                );
            } else {
                println!("  GPU ms: no timestamp queries on this adapter; wall times only");
            }
            println!(
                "  wall ms: programs (CPU) {:.3}, compute submit->idle {:.3}, raster submit->idle {:.3}, frame total {:.3}",
                f.programs_ms, s.wall_ms, f.raster.wall_ms, f.total_ms
            );
        }
        println!(
            "resident: {} bytes of package data (once), {} bytes of frame outputs per instance",
            self.resident, self.outputs
        );
    }

    fn json(&self, frames: &[FrameStats]) -> serde_json::Value {
        let frames: Vec<_> = frames
            .iter()
            .map(|f| {
                json!({
                    "path": f.path,
                    "report": f.report,
                    "bytes_per_instance": f.report.bytes_per_instance(),
                    "stages": f.stages,
                    "raster": f.raster,
                    "draws": f.draws,
                    "triangles": f.triangles,
                    "programs_ms": f.programs_ms,
                    "total_ms": f.total_ms,
                })
            })
            .collect();
        json!({
            "adapter": self.ctx.adapter,
            "asset": self.name,
            "instances": self.crowd.members.len(),
            "spacing_m": self.crowd.spacing,
            "width": self.args.width,
            "height": self.args.height,
            "fast_fk": self.fast_fk,
            "resident_package_bytes": self.resident,
            "output_bytes_per_instance": self.outputs,
            "frames": frames,
        })
    }
}
