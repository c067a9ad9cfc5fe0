//! `throng retarget`: clips of one rig rebuilt on another at cook time and baked into the target
//! package (docs/retargeting.md), with a report per clip.

use std::path::PathBuf;

use glam::{Affine3A, Vec2, Vec3};
use throng::gpu::raster::Image;
use throng::sketch::{Sketch, View};
use throng_cook::retarget::{self, report, RetargetProfile, Source};
use throng_cook::Profile;
use throng_cpu_ref::clip::{root_motion_affine, sample_clip};
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::palette::build_palette;
use throng_cpu_ref::skinning::skin_mesh;
use throng_cpu_ref::{Package, Skeleton, Trs};

use super::{import_any, load_package, print_json, write_file, BvhArgs, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// Source of the clips: a .glb / .gltf, a .bvh (one clip named after the file), or a .throng
    /// package whose clips keep their motion (no root motion extracted).
    source: PathBuf,
    #[command(flatten)]
    bvh: BvhArgs,
    /// Target character (.glb or .gltf): its skeleton, skins and meshes, and its own clips.
    #[arg(long)]
    onto: PathBuf,
    /// Retarget profile (TOML, docs/retargeting.md), e.g. fixtures/retarget/cmu-to-character.toml.
    #[arg(long)]
    profile: PathBuf,
    /// Output package: the target with the retargeted clips added (optional with --report).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Retarget only this source clip; repeatable (default: every clip).
    #[arg(long = "clip", value_name = "NAME")]
    clips: Vec<String>,
    /// Quality profile the retargeted clips are cooked and compressed with.
    #[arg(long = "quality", default_value = "standard")]
    quality: String,
    /// Print the report per clip: bone-direction error per chain (degrees, mean and max), foot
    /// sliding during the source's contacts (cm), root-speed ratio, cook and codec error.
    #[arg(long)]
    report: bool,
    /// Also draw one retargeted clip (the first, or the first --clip) at --at seconds, on the
    /// CPU, side view: the source's skeleton on the left, the target's skinned mesh with its
    /// skeleton on the right.
    #[arg(long, value_name = "FILE.png")]
    picture: Option<PathBuf>,
    /// Clip time of --picture, seconds (default: half the clip).
    #[arg(long, value_name = "SECONDS", requires = "picture")]
    at: Option<f64>,
    /// Print the report as JSON (a `clips` list with `name`, `direction_error_deg` {`mean`,
    /// `max`}, `foot_slide_cm`, `root_speed_ratio`, ...).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.out.is_none() && !args.report {
        return Err(CliError::Usage("give --out PATH, --report, or both".into()));
    }
    let quality = Profile::parse(&args.quality)?;
    let profile = RetargetProfile::load(&args.profile)?;
    let source = if args
        .source
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("throng"))
    {
        Source::from_package(
            load_package(&args.source)?,
            &args.source.display().to_string(),
        )?
    } else {
        Source::from_imported(&import_any(&args.source, &args.bvh)?)
    };
    let target = throng_cook::import_file(&args.onto)?;
    let (imported, binding) = retarget::retarget(&profile, &source, &target, &args.clips)?;
    let (mut package, mut cooked) = throng_cook::cook(&imported, &quality)?;
    throng_cook::compress(&mut package, &mut cooked, &quality);
    let measured = report::measure(&binding, &source, &package, &cooked, &profile.file);
    if let Some(out) = &args.out {
        write_file(out, &throng_cook::write_package(&package))?;
    }
    if let Some(path) = &args.picture {
        let name = match args.clips.first() {
            Some(n) => n.clone(),
            None => source
                .clips
                .first()
                .map(|(m, _)| m.name().to_string())
                .ok_or_else(|| CliError::Usage(format!("{} has no clip", source.file)))?,
        };
        let image = picture(&source, &package, &name, args.at)?;
        throng::write_png(path, &image)
            .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
    }
    if args.json {
        let value = serde_json::to_value(&measured).map_err(|e| CliError::Usage(e.to_string()))?;
        print_json(&value);
    } else {
        if args.report {
            print!("{measured}");
        }
        if let Some(out) = &args.out {
            println!(
                "wrote {} ({} clips retargeted)",
                out.display(),
                measured.clips.len()
            );
        }
    }
    Ok(())
}

/// Scene positions of `skeleton` posed by `local` under `placement` (its root frame).
fn joint_positions(
    skeleton: &Skeleton,
    local: &[Trs],
    placement: Affine3A,
) -> (Vec<Affine3A>, Vec<Vec3>) {
    let mut component = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    local_to_component(skeleton, local, &mut component);
    let scene = component
        .iter()
        .map(|c| Vec3::from((placement * *c).translation))
        .collect();
    (component, scene)
}

/// Bones as segments from each joint's parent.
fn bones(skeleton: &Skeleton, positions: &[Vec3]) -> Vec<(Vec3, Vec3)> {
    (1..positions.len())
        .filter_map(|j| {
            let p = skeleton.parents[j] as usize;
            (p < j).then(|| (positions[p], positions[j]))
        })
        .collect()
}

/// The source's skeleton and the target's skinned mesh at `at` seconds of clip `name`.
fn picture(
    source: &Source,
    package: &Package,
    name: &str,
    at: Option<f64>,
) -> Result<Image, CliError> {
    let missing = || CliError::Usage(format!("no retargeted clip is named '{name}'"));
    let motion = source
        .clips
        .iter()
        .map(|(m, _)| m)
        .find(|m| m.name() == name)
        .ok_or_else(missing)?;
    let clip = package
        .clips
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(missing)?;
    let time = at.unwrap_or(clip.duration * 0.5).clamp(0.0, clip.duration);

    let src = &source.package.skeletons[0];
    let mut local = src.rest.clone();
    motion.sample(src, time, &mut local);
    let (_, source_joints) = joint_positions(src, &local, src.root_transform);

    let tgt = &package.skeletons[clip.skeleton as usize];
    let mut local = tgt.rest.clone();
    sample_clip(clip, tgt, time as f32, &mut local);
    let placement = tgt.root_transform * root_motion_affine(clip, time as f32);
    let (component, target_joints) = joint_positions(tgt, &local, placement);
    let mut meshes = Vec::new();
    for mesh in &package.meshes {
        let Some(skin) = package
            .skins
            .get(mesh.skin as usize)
            .filter(|s| s.skeleton == clip.skeleton)
        else {
            continue;
        };
        let mut palette = vec![Affine3A::IDENTITY; skin.joints.len()];
        build_palette(skin, &component, &mut palette);
        let mut positions = vec![Vec3::ZERO; mesh.positions.len()];
        let mut normals = vec![Vec3::ZERO; mesh.positions.len()];
        skin_mesh(mesh, &palette, &mut positions, &mut normals);
        for p in &mut positions {
            *p = placement.transform_point3(*p);
        }
        meshes.push((positions, &mesh.indices));
    }

    let (width, height) = (1400u32, 800u32);
    let mut sketch = Sketch::new(width, height, [236, 236, 232]);
    let half = width as f32 * 0.5;
    let left = View::fit(&source_joints, Vec2::ZERO, Vec2::new(half, height as f32));
    sketch.lines(&left, &bones(src, &source_joints), [30, 60, 150], 4);
    let all: Vec<Vec3> = meshes
        .iter()
        .flat_map(|(p, _)| p.iter().copied())
        .chain(target_joints.iter().copied())
        .collect();
    let right = View::fit(
        &all,
        Vec2::new(half, 0.0),
        Vec2::new(width as f32, height as f32),
    );
    for (positions, indices) in &meshes {
        sketch.mesh(&right, positions, indices, [0.85, 0.6, 0.4]);
    }
    sketch.lines(&right, &bones(tgt, &target_joints), [170, 30, 30], 2);
    Ok(sketch.into_image())
}
