//! `throng pose`: one skin at one clip time on the CPU reference, in glTF scene space.

use std::path::{Path, PathBuf};

use glam::{Affine3A, Mat4, Vec3};
use serde_json::json;
use throng_cpu_ref::{clip::{root_motion_affine, sample_clip}, curve::sample_exact, fk, palette, skinning, Package, SourceClip, Trs};

use super::{load_package, print_json, CliError};

#[derive(clap::Args)]
pub struct Args {
    /// A .glb / .gltf source (cooked on the fly with the standard profile) or a .throng package.
    input: PathBuf,
    /// Clip name, or index among the clips of the skin's skeleton.
    #[arg(long)]
    clip: String,
    /// Clip time in seconds (clamped to the clip; no looping).
    #[arg(long)]
    time: f64,
    /// Skin index.
    #[arg(long, default_value_t = 0)]
    skin: usize,
    /// Sample the source curves with exact glTF semantics instead of the cooked samples.
    #[arg(long)]
    exact: bool,
    /// Print JSON (the only output format; accepted for clarity in scripts).
    #[arg(long)]
    json: bool,
}

struct Source {
    package: Package,
    /// Source curves, present only for glTF input.
    source_clips: Option<Vec<SourceClip>>,
}

fn load(path: &Path) -> Result<Source, CliError> {
    let is_package = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("throng"));
    if is_package {
        return Ok(Source { package: load_package(path)?, source_clips: None });
    }
    let imported = throng_cook::import_file(path)?;
    let (package, _report) = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)?;
    Ok(Source { package, source_clips: Some(imported.source_clips) })
}

pub fn run(args: Args) -> Result<(), CliError> {
    if !args.time.is_finite() {
        return Err(CliError::Usage(format!("--time must be a finite number of seconds, got {}", args.time)));
    }
    let src = load(&args.input)?;
    let p = &src.package;
    let skin = p.skins.get(args.skin).ok_or_else(|| CliError::Usage(format!("--skin {} does not exist: {} has {} skins", args.skin, args.input.display(), p.skins.len())))?;
    let skeleton = &p.skeletons[skin.skeleton as usize];
    let clip_ids: Vec<usize> = (0..p.clips.len()).filter(|&i| p.clips[i].skeleton == skin.skeleton).collect();
    let which = clip_ids
        .iter()
        .position(|&i| p.clips[i].name == args.clip)
        .or_else(|| args.clip.parse::<usize>().ok().filter(|&k| k < clip_ids.len()))
        .ok_or_else(|| {
            let names: Vec<&str> = clip_ids.iter().map(|&i| p.clips[i].name.as_str()).collect();
            CliError::Usage(format!("no clip '{}' for skin {}; its clips are: {}", args.clip, args.skin, names.join(", ")))
        })?;
    let clip = &p.clips[clip_ids[which]];
    let time = args.time as f32;

    let mut local = vec![Trs::IDENTITY; skeleton.joint_count()];
    if args.exact {
        let sources = src.source_clips.as_ref().ok_or_else(|| CliError::Usage("--exact needs the source curves: give the .glb/.gltf, not a .throng package".into()))?;
        let source = sources
            .iter()
            .filter(|c| c.skeleton == skin.skeleton)
            .nth(which)
            .ok_or_else(|| CliError::Usage(format!("clip '{}' has no source curves", clip.name)))?;
        sample_exact(source, skeleton, time, &mut local);
    } else {
        sample_clip(clip, skeleton, time, &mut local);
    }
    let mut component = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    fk::local_to_component(skeleton, &local, &mut component);
    if !args.exact {
        // Cooked clips carry extracted root motion as a separate trajectory; the pose printed is
        // the animator's, so put it back (trajectory · residual, DESIGN.md §5).
        let trajectory = root_motion_affine(clip, time);
        component.iter_mut().for_each(|c| *c = trajectory * *c);
    }
    let mut pal = vec![Affine3A::IDENTITY; skin.joints.len()];
    palette::build_palette(skin, &component, &mut pal);

    let scene = skeleton.root_transform;
    let joints: Vec<_> = skin
        .joints
        .iter()
        .zip(&pal)
        .map(|(&j, m)| {
            let j = j as usize;
            json!({
                "node": skeleton.source_nodes[j],
                "name": skeleton.names[j],
                "component": cols(&(scene * component[j])),
                "palette": cols(&(scene * *m)),
            })
        })
        .collect();
    let vertices: Vec<[f32; 3]> = match p.meshes.iter().find(|m| m.skin as usize == args.skin) {
        Some(mesh) => {
            let mut positions = vec![Vec3::ZERO; mesh.positions.len()];
            let mut normals = vec![Vec3::ZERO; mesh.normals.len()];
            skinning::skin_mesh(mesh, &pal, &mut positions, &mut normals);
            positions.iter().map(|v| scene.transform_point3(*v).to_array()).collect()
        }
        None => Vec::new(),
    };
    print_json(&json!({
        "input": args.input,
        "skin": args.skin,
        "clip": clip.name,
        "time": args.time,
        "exact": args.exact,
        "joints": joints,
        "vertices": vertices,
    }));
    Ok(())
}

/// 16 floats, column-major.
fn cols(m: &Affine3A) -> [f32; 16] {
    Mat4::from(*m).to_cols_array()
}
