//! The codec comparison (issue 5, item 4): one subject in the uncompressed reference encoding
//! and in the compressed one (docs/codec.md), built from the same source, posed by the same
//! programs in the same run. Pose-only frames (program + FK, no skinning): the CPU reference on
//! one thread and, with a GPU, the program and FK stages from timestamp queries.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use throng_cpu_ref::Package;
use throng_gpu::{Decode, GpuContext};

use crate::gpu::GpuFrame;
use crate::timing::{measure, median, ms_since};
use throng_fixtures::BenchShape;

use crate::{BenchError, CpuCrowd, GpuCrowd, Options, Subject};

/// The same subject in both encodings (same skeleton, skin, clips in the same order).
#[derive(Clone, Debug)]
pub struct Pair {
    pub reference: Subject,
    pub compressed: Subject,
}

/// What the comparison found: a row per subject × instance count × shape, and the subjects it
/// could not compare, with why.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Codec {
    pub rows: Vec<CodecRow>,
    pub skipped: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CodecRow {
    pub subject: String,
    pub shape: BenchShape,
    pub instances: usize,
    pub joints: usize,
    pub reference: Encoding,
    pub compressed: Encoding,
    /// `compressed / reference` of each figure: below 1 is smaller or faster compressed.
    pub compressed_over_reference: CodecRatios,
}

/// One encoding's pose cost and footprint. Times are medians of pose-only frames, ms.
#[derive(Clone, Debug, Serialize)]
pub struct Encoding {
    /// The subject's clip data as held resident on the GPU ([`clip_bytes`]). Clip headers, the
    /// same in both encodings, are left out.
    pub clip_bytes: u64,
    /// GPU memory held by the whole package (skins and meshes are the same in both encodings);
    /// `None` without a GPU.
    pub resident_bytes: Option<u64>,
    /// The CPU reference on one thread: program + FK of every instance.
    pub cpu_pose_ms: f64,
    pub cpu_ns_per_joint: f64,
    /// Wall time of a GPU pose-only frame.
    pub gpu_pose_ms: Option<f64>,
    pub gpu_ns_per_joint: Option<f64>,
    /// The GPU pose pass from timestamp queries (`None` without timestamps): program, FK and
    /// palette fused, so it holds the decoding, and the decode pass before it.
    pub gpu_program_ms: Option<f64>,
    /// The decode pass alone (clips the decode cache lacked, part of `gpu_program_ms`; 0 in a
    /// steady crowd's frames, whose clips the cache holds).
    pub gpu_decode_ms: Option<f64>,
    /// No longer measured apart (FK is fused into the pose pass): always `None`.
    pub gpu_fk_ms: Option<f64>,
    /// The compressed encoding with the decode cache off, every instance decoding its own
    /// samples (`Decode::Never`): the pose pass from timestamp queries, else the pose-only
    /// frame's wall time; `None` for the reference encoding or without a GPU.
    pub gpu_direct_ms: Option<f64>,
    /// Bytes of the decode cache in use in the measured frames (docs/gpu.md, "The decode
    /// cache"); `None` without a GPU.
    pub decode_cache_bytes: Option<u64>,
    /// The decode pass of the warm-up frames, ms, and the samples (vec4s) it decoded: what a
    /// frame pays once when the subject's clips enter the cache (0 in rows after the subject's
    /// first, whose runtime already holds them); `None` without timestamps.
    pub gpu_fill_decode_ms: Option<f64>,
    pub fill_decoded_samples: Option<u64>,
    /// True when every measured GPU frame ran specialised pipelines only (no interpreter
    /// dispatch); `None` without a GPU.
    pub specialised: Option<bool>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CodecRatios {
    pub clip_bytes: f64,
    pub cpu_pose: f64,
    pub gpu_pose: Option<f64>,
    pub gpu_program: Option<f64>,
    /// `gpu_direct_ms` over the reference's figure of the same kind (`gpu_program_ms`, else
    /// `gpu_pose_ms`).
    pub gpu_direct: Option<f64>,
}

impl Pair {
    /// The generated character, cooked with the default profile, then a compressed copy.
    pub fn character() -> Result<Pair, BenchError> {
        let name = "character";
        let imported = throng_cook::import_slice(&throng_fixtures::character_glb(), name)?;
        let (package, report) = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)?;
        Pair::from_reference(name, package, report)
    }

    /// A glTF file cooked with the default profile, then a compressed copy. A `.throng` package
    /// can only be compared from what it holds: one in the reference encoding is compressed
    /// here; one with compressed clips has no reference left, and gives `Ok(Err(why))`.
    pub fn from_file(path: &Path) -> Result<Result<Pair, String>, BenchError> {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        if path.extension().is_some_and(|e| e == "throng") {
            let Subject { package, .. } = Subject::from_file(path)?;
            if package.clips.iter().any(|c| c.compressed.is_some()) {
                return Ok(Err(format!(
                    "{name}: the package holds compressed clips, so it has no reference encoding to compare with"
                )));
            }
            return Pair::from_reference(&name, package, throng_cook::CookReport::default())
                .map(Ok);
        }
        let imported = throng_cook::import_file(path)?;
        let (package, report) = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)?;
        Pair::from_reference(&name, package, report).map(Ok)
    }

    /// `package` in the reference encoding and a copy compressed with the default profile.
    fn from_reference(
        name: &str,
        package: Package,
        mut report: throng_cook::CookReport,
    ) -> Result<Pair, BenchError> {
        let mut compressed = package.clone();
        throng_cook::compress(&mut compressed, &mut report, &throng_cook::Profile::DEFAULT);
        Ok(Pair {
            reference: Subject::new(name, package)?,
            compressed: Subject::new(name, compressed)?,
        })
    }
}

/// Measures both encodings of every pair × instance count × shape; `gpu` `None` leaves the GPU
/// figures empty. `on_row` sees each row as soon as it is measured.
pub fn run(
    pairs: &[Pair],
    gpu: Option<&GpuContext>,
    options: &Options,
    mut on_row: impl FnMut(&CodecRow),
) -> Result<Vec<CodecRow>, BenchError> {
    let most = options.instances.iter().copied().max().unwrap_or(0);
    let mut rows = Vec::new();
    for pair in pairs {
        let encodings = [&pair.reference, &pair.compressed];
        let crowd = |ctx, subject, decode| {
            GpuCrowd::new(ctx, subject, (most, 0, 0), options.mapping, false, decode)
        };
        // Reference, compressed, and compressed with the decode cache off.
        let mut runtimes = match gpu {
            Some(ctx) => Some([
                crowd(ctx, encodings[0], Decode::Auto)?,
                crowd(ctx, encodings[1], Decode::Auto)?,
                crowd(ctx, encodings[1], Decode::Never)?,
            ]),
            None => None,
        };
        for &n in &options.instances {
            // Inertialization reads history, not clips: the encodings do not differ there.
            for &shape in options.shapes.iter().filter(|s| s.history_slots(1) == 0) {
                let mut set = pair.reference.programs(shape, n);
                // Both CPU figures first, frame by frame in turn: GPU frames on lavapipe share
                // these cores, and what they leave running would weigh on the CPU figure
                // measured after them.
                let mut measured = measure_cpu(encodings, &mut set, options)?;
                if let Some([reference, compressed, _]) = runtimes.as_mut() {
                    let gpus = [reference, compressed];
                    measure_gpu_into(&mut measured, encodings, &mut set, gpus, options)?;
                }
                let [reference, mut compressed] = measured;
                if let Some(direct) = runtimes.as_mut().map(|r| &mut r[2]) {
                    let (wall, frames) = measure_gpu(&pair.compressed, &mut set, direct, options)?;
                    let timestamps = frames.first().is_some_and(|f| f.times.gpu_timestamps);
                    compressed.gpu_direct_ms = Some(match timestamps {
                        true => median(frames.iter().map(|f| f.times.pose_ms)),
                        false => wall,
                    });
                }
                let row = CodecRow {
                    subject: pair.reference.name.clone(),
                    shape,
                    instances: n,
                    joints: pair.reference.joints(),
                    compressed_over_reference: CodecRatios::new(&reference, &compressed),
                    reference,
                    compressed,
                };
                on_row(&row);
                rows.push(row);
            }
        }
    }
    Ok(rows)
}

/// ns per joint of a frame of `ms` over the `set`'s instances of `subject`.
fn per_joint(subject: &Subject, set: &throng_fixtures::ProgramSet, ms: f64) -> f64 {
    let joint_count = (set.programs.len() * subject.joints()) as f64;
    if joint_count > 0.0 {
        ms * 1e6 / joint_count
    } else {
        0.0
    }
}

/// Fewest timed CPU frames a codec row takes, whatever `--frames` says: at 1 000 instances a
/// CPU frame takes 0.4–3 ms and with five frames one interrupted frame moved a row's median
/// ratio by up to a tenth; fifteen hold it to a few hundredths (docs/benchmark.md).
const MIN_CPU_FRAMES: u32 = 15;

/// Both encodings' pose-only frames on the CPU (one thread), the GPU figures empty. Each frame
/// times the two in turn, the first of them alternating, so a drift of the machine (its clock,
/// other work on its cores) weighs on both medians alike rather than on whichever ran second.
fn measure_cpu(
    encodings: [&Subject; 2],
    set: &mut throng_fixtures::ProgramSet,
    options: &Options,
) -> Result<[Encoding; 2], BenchError> {
    let n = set.programs.len();
    let mut crowds = encodings.map(|subject| CpuCrowd::new(subject, n, 1, 0));
    let most = options.frames.max(MIN_CPU_FRAMES);
    let frames = measure(most, options.budget_ms, |f| {
        let mut ms = [0.0; 2];
        for k in in_turn(f) {
            let subject = encodings[k];
            set.advance(&subject.package, f);
            let start = Instant::now();
            crowds[k].frame(subject, &set.programs, false, false)?;
            ms[k] = ms_since(start);
        }
        Ok::<_, BenchError>((ms[0] + ms[1], ms))
    })?;
    Ok(std::array::from_fn(|k| {
        let cpu_pose_ms = median(frames.iter().map(|ms| ms[k]));
        Encoding {
            clip_bytes: clip_bytes(encodings[k]),
            resident_bytes: None,
            cpu_pose_ms,
            cpu_ns_per_joint: per_joint(encodings[k], set, cpu_pose_ms),
            gpu_pose_ms: None,
            gpu_ns_per_joint: None,
            gpu_program_ms: None,
            gpu_fk_ms: None,
            gpu_direct_ms: None,
            gpu_decode_ms: None,
            decode_cache_bytes: None,
            gpu_fill_decode_ms: None,
            fill_decoded_samples: None,
            specialised: None,
        }
    }))
}

/// The order frame `f` runs the two encodings in: alternating which goes first.
fn in_turn(f: u32) -> [usize; 2] {
    let first = f as usize % 2;
    [first, 1 - first]
}

/// Both encodings' pose-only frames on the GPU, each frame timing the two in turn as
/// [`measure_cpu`] does, into the `measured` encodings' GPU figures.
fn measure_gpu_into(
    measured: &mut [Encoding; 2],
    encodings: [&Subject; 2],
    set: &mut throng_fixtures::ProgramSet,
    mut gpus: [&mut GpuCrowd; 2],
    options: &Options,
) -> Result<(), BenchError> {
    let mut warm_ups = Vec::with_capacity(2);
    for (subject, gpu) in encodings.into_iter().zip(gpus.iter_mut()) {
        warm_ups.push(warm_up(subject, set, gpu)?);
    }
    let mut frames = [Vec::new(), Vec::new()];
    measure(options.frames, options.budget_ms, |f| {
        let mut ms = 0.0;
        for k in in_turn(f) {
            set.advance(&encodings[k].package, f);
            let frame = gpus[k].frame(encodings[k], &set.programs, false)?;
            ms += frame.wall_ms;
            // Frame 0 is `measure`'s untimed warm-up.
            if f > 0 {
                frames[k].push(frame);
            }
        }
        Ok::<_, BenchError>((ms, ()))
    })?;
    let figures = measured.iter_mut().zip(encodings).zip(gpus);
    for (((encoding, subject), gpu), (frames, warm_up)) in figures.zip(frames.iter().zip(&warm_ups))
    {
        gpu_figures(encoding, subject, set, gpu, frames, warm_up);
    }
    Ok(())
}

/// `encoding`'s GPU figures from its timed `frames` and `warm_up` frames on `gpu`.
fn gpu_figures(
    encoding: &mut Encoding,
    subject: &Subject,
    set: &throng_fixtures::ProgramSet,
    gpu: &GpuCrowd,
    frames: &[GpuFrame],
    warm_up: &[GpuFrame],
) {
    let timestamps = frames.first().is_some_and(|f| f.times.gpu_timestamps);
    encoding.gpu_fill_decode_ms =
        timestamps.then(|| warm_up.iter().map(|f| f.times.decode_ms).sum());
    encoding.fill_decoded_samples = timestamps.then(|| {
        warm_up
            .iter()
            .map(|f| u64::from(f.report.decoded_samples))
            .sum()
    });
    let wall = median(frames.iter().map(|f| f.wall_ms));
    encoding.resident_bytes = Some(gpu.resident_bytes());
    encoding.specialised = Some(frames.iter().all(|f| f.report.interpreter_dispatches == 0));
    encoding.gpu_pose_ms = Some(wall);
    encoding.gpu_ns_per_joint = Some(per_joint(subject, set, wall));
    let pass = |f: &GpuFrame| f.times.decode_ms + f.times.pose_ms;
    encoding.gpu_program_ms = timestamps.then(|| median(frames.iter().map(pass)));
    encoding.gpu_decode_ms = timestamps.then(|| median(frames.iter().map(|f| f.times.decode_ms)));
    encoding.decode_cache_bytes = (frames.iter())
        .map(|f| 16 * u64::from(f.report.decode_cache_samples))
        .max();
}

/// Two warm-up frames of `set` on `gpu`, each followed by waiting for the pipelines it asked
/// for, so the timed frames measure the steady state.
fn warm_up(
    subject: &Subject,
    set: &throng_fixtures::ProgramSet,
    gpu: &mut GpuCrowd,
) -> Result<Vec<GpuFrame>, BenchError> {
    let mut frames = Vec::with_capacity(2);
    for _ in 0..2 {
        frames.push(gpu.frame(subject, &set.programs, false)?);
        gpu.wait_for_pipelines()?;
    }
    Ok(frames)
}

/// GPU pose-only frames of `set` (after [`warm_up`]): the median wall time, ms, and the frames.
fn measure_gpu(
    subject: &Subject,
    set: &mut throng_fixtures::ProgramSet,
    gpu: &mut GpuCrowd,
    options: &Options,
) -> Result<(f64, Vec<GpuFrame>), BenchError> {
    warm_up(subject, set, gpu)?;
    let frames = measure(options.frames, options.budget_ms, |f| {
        set.advance(&subject.package, f);
        let frame = gpu.frame(subject, &set.programs, false)?;
        Ok::<_, BenchError>((frame.wall_ms, frame))
    })?;
    Ok((median(frames.iter().map(|f| f.wall_ms)), frames))
}

/// The subject's clips as `throng_gpu` holds them resident (docs/gpu.md): 16 B of sub-track
/// references per joint; per animated reference sub-track 16 B per sample, per animated
/// compressed sub-track 32 B (its ranges as two pool records), per constant 16 B (either
/// encoding); the codec words of compressed clips, 4 B each, and a word of padding per clip.
pub fn clip_bytes(subject: &Subject) -> u64 {
    use throng_cpu_ref::SubTrackKind;
    subject
        .clips
        .iter()
        .filter_map(|&c| subject.package.clips.get(c as usize))
        .map(|clip| {
            let per_track = |kind| match (kind, &clip.compressed) {
                (SubTrackKind::Constant, _) => 16,
                (SubTrackKind::Animated, None) => 16 * clip.sample_count as u64,
                // Its ranges, copied to two pool records at upload.
                (SubTrackKind::Animated, Some(_)) => 32,
                (SubTrackKind::Default, _) => 0,
            };
            let tracks: u64 = clip.sub_tracks.iter().map(|st| per_track(st.kind)).sum();
            let words = clip
                .compressed
                .as_ref()
                .map_or(0, |z| 4 * (z.words.len() as u64 + 1));
            16 * (clip.sub_tracks.len() as u64 / 3) + tracks + words
        })
        .sum()
}

impl CodecRatios {
    fn new(reference: &Encoding, compressed: &Encoding) -> CodecRatios {
        let ratio = |c: f64, r: f64| if r > 0.0 { c / r } else { 0.0 };
        let both = |c: Option<f64>, r: Option<f64>| Some(ratio(c?, r?));
        CodecRatios {
            clip_bytes: ratio(compressed.clip_bytes as f64, reference.clip_bytes as f64),
            cpu_pose: ratio(compressed.cpu_pose_ms, reference.cpu_pose_ms),
            gpu_pose: both(compressed.gpu_pose_ms, reference.gpu_pose_ms),
            gpu_program: both(compressed.gpu_program_ms, reference.gpu_program_ms),
            gpu_direct: both(
                compressed.gpu_direct_ms,
                reference.gpu_program_ms.or(reference.gpu_pose_ms),
            ),
        }
    }
}
