//! `throng pose`: one skin at one clip time on the CPU reference, in glTF scene space, optionally
//! corrected by IK solvers (`--two-bone`, `--aim`; DESIGN.md §8).

use std::path::{Path, PathBuf};

use glam::{Affine3A, Mat4, Vec3};
use serde_json::json;
use throng_cpu_ref::bounds::SkinBounds;
use throng_cpu_ref::ik::{solve_aim, solve_two_bone, Aim, IkResult, TwoBone};
use throng_cpu_ref::transform::mean_column_scale;
use throng_cpu_ref::{
    clip::{root_motion_affine, sample_clip},
    curve::sample_exact,
    fk, palette, skinning, Package, Skeleton, SourceClip, Trs,
};

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
    /// Two-bone IK on the limb that ends at joint TIP (its parent and grandparent are the mid and
    /// root joints), toward a glTF scene-space point, bending toward an optional scene-space pole.
    /// Repeatable; runs before the aims, in the order given.
    #[arg(long = "two-bone", value_name = "TIP:X,Y,Z[:pole=X,Y,Z]")]
    two_bone: Vec<String>,
    /// Aim JOINT's local forward axis (default +Z, up +Y) at a glTF scene-space point.
    /// Repeatable; runs after the two-bone solves, in the order given.
    #[arg(long, value_name = "JOINT:X,Y,Z[:forward=X,Y,Z][:up=X,Y,Z]")]
    aim: Vec<String>,
}

/// One parsed `--two-bone` or `--aim`: a joint name, a point and named vector options.
struct Spec {
    flag: &'static str,
    joint: String,
    point: Vec3,
    options: Vec<(String, Vec3)>,
}

impl Spec {
    /// Parses `NAME:x,y,z[:key=x,y,z]...`. Joint names may hold ':' (e.g. "mixamorig:Hips"), so
    /// options are taken from the end, then the point, and the rest is the name.
    fn parse(flag: &'static str, text: &str, keys: &[&str]) -> Result<Spec, CliError> {
        let usage = |why: String| CliError::Usage(format!("--{flag} {text:?}: {why}"));
        let mut parts: Vec<&str> = text.split(':').collect();
        let mut options = Vec::new();
        while let Some((key, value)) = parts.last().and_then(|p| p.split_once('=')) {
            if !keys.contains(&key) {
                return Err(usage(format!(
                    "unknown option '{key}' (options: {})",
                    keys.join(", ")
                )));
            }
            options.push((key.to_owned(), vector(value).map_err(usage)?));
            parts.pop();
        }
        let point = parts
            .pop()
            .ok_or_else(|| usage("expected JOINT:X,Y,Z".into()))?;
        let point = vector(point).map_err(usage)?;
        let joint = parts.join(":");
        if joint.is_empty() {
            return Err(usage(
                "expected JOINT:X,Y,Z (the joint name is missing)".into(),
            ));
        }
        Ok(Spec {
            flag,
            joint,
            point,
            options,
        })
    }

    fn option(&self, key: &str) -> Option<Vec3> {
        self.options.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    fn find(&self, skeleton: &Skeleton) -> Result<usize, CliError> {
        skeleton.find(&self.joint).ok_or_else(|| {
            CliError::Usage(format!(
                "--{} names joint '{}', which the skeleton lacks; its joints are: {}",
                self.flag,
                self.joint,
                skeleton.names.join(", ")
            ))
        })
    }
}

/// Three comma-separated finite numbers.
fn vector(text: &str) -> Result<Vec3, String> {
    let v: Vec<f32> = text
        .split(',')
        .map(|x| x.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("'{text}' is not three numbers X,Y,Z"))?;
    match v[..] {
        [x, y, z] if v.iter().all(|c| c.is_finite()) => Ok(Vec3::new(x, y, z)),
        [_, _, _] => Err(format!("'{text}' is not three finite numbers X,Y,Z")),
        _ => Err(format!("'{text}' is not three numbers X,Y,Z")),
    }
}

/// Runs the solvers on the FK pose. `to_component` maps glTF scene space into the space of
/// `component`; residuals are reported in scene units (`scene_scale` per component unit).
fn apply_ik(
    skeleton: &Skeleton,
    local: &mut [Trs],
    component: &mut [Affine3A],
    two_bones: &[Spec],
    aims: &[Spec],
    to_component: &Affine3A,
    scene_scale: f32,
) -> Result<Vec<serde_json::Value>, CliError> {
    let mut out = Vec::new();
    let report = |solver: &str, spec: &Spec, r: IkResult| {
        json!({
            "solver": solver,
            "joint": spec.joint,
            "status": r.status.as_str(),
            "position_error": r.position_error * scene_scale,
            "angle_error": r.angle_error,
            "iterations": r.iterations,
        })
    };
    for spec in two_bones {
        let tip = spec.find(skeleton)?;
        let parent = |j: usize| {
            skeleton
                .parents
                .get(j)
                .map(|&p| p as usize)
                .filter(|&p| p < j)
        };
        let (mid, root) = parent(tip)
            .and_then(|m| Some((m, parent(m)?)))
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "--two-bone: joint '{}' needs a parent and a grandparent to form a limb",
                    spec.joint
                ))
            })?;
        let mut ik = TwoBone::new(root, mid, tip, to_component.transform_point3(spec.point));
        ik.pole = spec
            .option("pole")
            .map(|p| to_component.transform_point3(p));
        let r = solve_two_bone(skeleton, local, component, &ik)
            .map_err(|e| CliError::Usage(format!("--two-bone {}: {e}", spec.joint)))?;
        out.push(report("two_bone", spec, r));
    }
    for spec in aims {
        let joint = spec.find(skeleton)?;
        let aim = Aim::new(
            to_component.transform_point3(spec.point),
            spec.option("forward").unwrap_or(Vec3::Z),
            spec.option("up").unwrap_or(Vec3::Y),
        );
        let r = solve_aim(skeleton, local, component, &aim, &[joint], &[1.0])
            .map_err(|e| CliError::Usage(format!("--aim {}: {e}", spec.joint)))?;
        out.push(report("aim", spec, r));
    }
    Ok(out)
}

struct Source {
    package: Package,
    /// Source curves, present only for glTF input.
    source_clips: Option<Vec<SourceClip>>,
}

fn load(path: &Path) -> Result<Source, CliError> {
    let is_package = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("throng"));
    if is_package {
        return Ok(Source {
            package: load_package(path)?,
            source_clips: None,
        });
    }
    let imported = throng_cook::import_file(path)?;
    let (package, _report) = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)?;
    Ok(Source {
        package,
        source_clips: Some(imported.source_clips),
    })
}

pub fn run(args: Args) -> Result<(), CliError> {
    if !args.time.is_finite() {
        return Err(CliError::Usage(format!(
            "--time must be a finite number of seconds, got {}",
            args.time
        )));
    }
    let two_bones = args
        .two_bone
        .iter()
        .map(|t| Spec::parse("two-bone", t, &["pole"]))
        .collect::<Result<Vec<_>, _>>()?;
    let aims = args
        .aim
        .iter()
        .map(|t| Spec::parse("aim", t, &["forward", "up"]))
        .collect::<Result<Vec<_>, _>>()?;
    let src = load(&args.input)?;
    let p = &src.package;
    let skin = p.skins.get(args.skin).ok_or_else(|| {
        CliError::Usage(format!(
            "--skin {} does not exist: {} has {} skins",
            args.skin,
            args.input.display(),
            p.skins.len()
        ))
    })?;
    let skeleton = &p.skeletons[skin.skeleton as usize];
    let clip_ids: Vec<usize> = (0..p.clips.len())
        .filter(|&i| p.clips[i].skeleton == skin.skeleton)
        .collect();
    let which = clip_ids
        .iter()
        .position(|&i| p.clips[i].name == args.clip)
        .or_else(|| {
            args.clip
                .parse::<usize>()
                .ok()
                .filter(|&k| k < clip_ids.len())
        })
        .ok_or_else(|| {
            let names: Vec<&str> = clip_ids.iter().map(|&i| p.clips[i].name.as_str()).collect();
            CliError::Usage(format!(
                "no clip '{}' for skin {}; its clips are: {}",
                args.clip,
                args.skin,
                names.join(", ")
            ))
        })?;
    let clip = &p.clips[clip_ids[which]];
    let time = args.time as f32;

    let mut local = vec![Trs::IDENTITY; skeleton.joint_count()];
    if args.exact {
        let sources = src.source_clips.as_ref().ok_or_else(|| {
            CliError::Usage(
                "--exact needs the source curves: give the .glb/.gltf, not a .throng package"
                    .into(),
            )
        })?;
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
    // Cooked clips carry extracted root motion as a separate trajectory; the pose printed is the
    // animator's, so it goes back on top (trajectory · residual, DESIGN.md §5). IK works on the
    // residual FK pose, so targets come into that space through the trajectory and root transform.
    let trajectory = if args.exact {
        Affine3A::IDENTITY
    } else {
        root_motion_affine(clip, time)
    };
    let to_scene = skeleton.root_transform * trajectory;
    let ik = apply_ik(
        skeleton,
        &mut local,
        &mut component,
        &two_bones,
        &aims,
        &to_scene.inverse(),
        mean_column_scale(&to_scene),
    )?;
    if !args.exact {
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
            positions
                .iter()
                .map(|v| scene.transform_point3(*v).to_array())
                .collect()
        }
        None => Vec::new(),
    };
    let bounds = SkinBounds::new(
        skin,
        p.meshes.iter().filter(|m| m.skin as usize == args.skin),
    )
    .instance(&pal, &scene);
    let bounds = (!bounds.is_empty())
        .then(|| json!({"min": bounds.min.to_array(), "max": bounds.max.to_array()}));
    print_json(&json!({
        "input": args.input,
        "skin": args.skin,
        "clip": clip.name,
        "time": args.time,
        "exact": args.exact,
        "joints": joints,
        "vertices": vertices,
        "bounds": bounds,
        "ik": ik,
    }));
    Ok(())
}

/// 16 floats, column-major.
fn cols(m: &Affine3A) -> [f32; 16] {
    Mat4::from(*m).to_cols_array()
}
