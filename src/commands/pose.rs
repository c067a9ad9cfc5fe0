//! `throng pose`: one skin at one clip time on the CPU reference, in glTF scene space, optionally
//! corrected by IK solvers (`--two-bone`, `--aim`; DESIGN.md §8); and every mesh node's morph
//! weights and vertices (morphed, then skinned where the node is skinned; docs/morph-targets.md),
//! also for files that have no skin.

use std::path::{Path, PathBuf};

use glam::{Affine3A, Mat4, Vec3};
use serde_json::json;
use throng_cpu_ref::bounds::SkinBounds;
use throng_cpu_ref::ik::{solve_aim, solve_two_bone, Aim, IkResult, TwoBone};
use throng_cpu_ref::morph::{self, MeshRef, SourceWeightClip};
use throng_cpu_ref::scalar;
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
    /// Clip name, or index among the clips of the skin's skeleton followed by the morph-weight
    /// clips of other names (a file without skins: its weight clips). Left out: the rest pose
    /// with the default morph weights.
    #[arg(long)]
    clip: Option<String>,
    /// Clip time in seconds (clamped to the clip; no looping).
    #[arg(long, default_value_t = 0.0)]
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
    /// Source morph-weight curves, present only for glTF input.
    source_weights: Option<Vec<SourceWeightClip>>,
}

fn load(path: &Path) -> Result<Source, CliError> {
    let is_package = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("throng"));
    if is_package {
        return Ok(Source {
            package: load_package(path)?,
            source_clips: None,
            source_weights: None,
        });
    }
    let imported = throng_cook::import_file(path)?;
    let (package, _report) = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)?;
    Ok(Source {
        package,
        source_clips: Some(imported.source_clips),
        source_weights: Some(imported.source_weight_clips),
    })
}

/// The clip asked for: a name, or an index into the clips of the posed skin's skeleton followed
/// by the morph-weight clips of other names (for a package without skins, the weight clips
/// alone). `None` when no `--clip` is given: the rest pose with default weights.
fn clip_name(args: &Args, p: &Package, skeleton: Option<u32>) -> Result<Option<String>, CliError> {
    let Some(wanted) = &args.clip else {
        return Ok(None);
    };
    let mut names: Vec<&str> = p
        .clips
        .iter()
        .filter(|c| Some(c.skeleton) == skeleton)
        .map(|c| c.name.as_str())
        .collect();
    for c in &p.scene.clips {
        if !names.contains(&c.name.as_str()) {
            names.push(&c.name);
        }
    }
    if names.contains(&wanted.as_str()) {
        return Ok(Some(wanted.clone()));
    }
    match wanted.parse::<usize>().ok().and_then(|k| names.get(k)) {
        Some(name) => Ok(Some(name.to_string())),
        None => Err(CliError::Usage(format!(
            "no clip '{wanted}'{}; its clips are: {}",
            skeleton.map_or(String::new(), |_| format!(" for skin {}", args.skin)),
            if names.is_empty() {
                "(none: leave --clip out for the rest pose)".to_string()
            } else {
                names.join(", ")
            }
        ))),
    }
}

/// The components of skeleton `s` at `time` in `clip` (rest when the clip does not animate it),
/// in the space the skeleton's root transform takes to the scene (a cooked clip's trajectory
/// recomposed), and the trajectory.
fn pose_skeleton(
    src: &Source,
    s: u32,
    clip: Option<&str>,
    time: f32,
    exact: bool,
    local: &mut [Trs],
) -> Affine3A {
    let p = &src.package;
    let skeleton = &p.skeletons[s as usize];
    local.copy_from_slice(&skeleton.rest);
    let Some(name) = clip else {
        return Affine3A::IDENTITY;
    };
    if exact {
        let found = (src.source_clips.iter().flatten()).find(|c| c.skeleton == s && c.name == name);
        if let Some(source) = found {
            sample_exact(source, skeleton, time, local);
        }
        Affine3A::IDENTITY
    } else {
        match p.clips.iter().find(|c| c.skeleton == s && c.name == name) {
            Some(clip) => {
                sample_clip(clip, skeleton, time, local);
                root_motion_affine(clip, time)
            }
            None => Affine3A::IDENTITY,
        }
    }
}

/// The morph weights of scene node `k` at `time` in `clip`: its track (exact or cooked), else
/// its default weights.
fn node_weights(src: &Source, k: usize, clip: Option<&str>, time: f64, exact: bool) -> Vec<f32> {
    let node = &src.package.scene.nodes[k];
    let mut w = node.weights.clone();
    let Some(name) = clip else { return w };
    if exact {
        let channel = (src.source_weights.iter().flatten())
            .filter(|c| c.name == name)
            .flat_map(|c| &c.channels)
            .find(|c| c.node as usize == k);
        if let Some(channel) = channel {
            channel.sample(time, &mut w);
        }
    } else if let Some(c) = src.package.scene.clips.iter().find(|c| c.name == name) {
        c.sample(k as u32, time, &mut w);
    }
    w
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
    if args.exact && src.source_clips.is_none() {
        return Err(CliError::Usage(
            "--exact needs the source curves: give the .glb/.gltf, not a .throng package".into(),
        ));
    }
    let p = &src.package;
    let time = args.time as f32;
    // A file without skins (morph targets alone) has no skeleton to pose: only its mesh nodes.
    let skin = if p.skins.is_empty() && !p.scene.nodes.is_empty() && args.skin == 0 {
        if !two_bones.is_empty() || !aims.is_empty() {
            return Err(CliError::Usage(format!(
                "{} has no skin: --two-bone and --aim need a skeleton",
                args.input.display()
            )));
        }
        None
    } else {
        Some(p.skins.get(args.skin).ok_or_else(|| {
            CliError::Usage(format!(
                "--skin {} does not exist: {} has {} skins",
                args.skin,
                args.input.display(),
                p.skins.len()
            ))
        })?)
    };
    let clip = clip_name(&args, p, skin.map(|s| s.skeleton))?;
    if let (Some(name), Some(skin)) = (&clip, skin) {
        // A clip that animates no joint of this skeleton (weights alone) has no source curves
        // to check here; one that does must have them for --exact.
        let cooked = p
            .clips
            .iter()
            .any(|c| c.skeleton == skin.skeleton && &c.name == name);
        let exact_found = (src.source_clips.iter().flatten())
            .any(|c| c.skeleton == skin.skeleton && &c.name == name);
        if args.exact && cooked && !exact_found {
            return Err(CliError::Usage(format!(
                "clip '{name}' has no source curves"
            )));
        }
    }

    // Every skeleton posed at the clip (mesh nodes may be bound to any skin); the asked skin's
    // skeleton also carries the IK corrections.
    let mut components: Vec<Vec<Affine3A>> = Vec::with_capacity(p.skeletons.len());
    let mut ik = Vec::new();
    for (s, skeleton) in p.skeletons.iter().enumerate() {
        let mut local = vec![Trs::IDENTITY; skeleton.joint_count()];
        let trajectory = pose_skeleton(
            &src,
            s as u32,
            clip.as_deref(),
            time,
            args.exact,
            &mut local,
        );
        let mut component = vec![Affine3A::IDENTITY; skeleton.joint_count()];
        fk::local_to_component(skeleton, &local, &mut component);
        // Cooked clips carry extracted root motion as a separate trajectory; the pose printed is
        // the animator's, so it goes back on top (trajectory · residual, DESIGN.md §5). IK works
        // on the residual FK pose, so targets come into that space through the trajectory and
        // root transform.
        if skin.is_some_and(|k| k.skeleton as usize == s) {
            let to_scene = skeleton.root_transform * trajectory;
            ik = apply_ik(
                skeleton,
                &mut local,
                &mut component,
                &two_bones,
                &aims,
                &to_scene.inverse(),
                mean_column_scale(&to_scene),
            )?;
        }
        component.iter_mut().for_each(|c| *c = trajectory * *c);
        components.push(component);
    }
    let palette_of = |k: usize| {
        let skin = &p.skins[k];
        let mut pal = vec![Affine3A::IDENTITY; skin.joints.len()];
        palette::build_palette(skin, &components[skin.skeleton as usize], &mut pal);
        pal
    };

    let mut out = json!({
        "input": args.input,
        "skin": skin.map(|_| args.skin),
        "clip": clip,
        "time": args.time,
        "exact": args.exact,
    });
    if let Some(skin) = skin {
        let skeleton = &p.skeletons[skin.skeleton as usize];
        let component = &components[skin.skeleton as usize];
        let pal = palette_of(args.skin);
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
        .instance(&pal, &scene, &[]);
        let bounds = (!bounds.is_empty())
            .then(|| json!({"min": bounds.min.to_array(), "max": bounds.max.to_array()}));
        out["joints"] = json!(joints);
        out["vertices"] = json!(vertices);
        out["bounds"] = json!(bounds);
        out["curves"] = curves_json(p, skin.skeleton, clip.as_deref(), args.time);
    } else {
        out["joints"] = json!([]);
        out["vertices"] = json!([]);
        out["bounds"] = serde_json::Value::Null;
        out["curves"] = json!({});
    }
    out["ik"] = json!(ik);

    // Every mesh node: its weights (when it has targets) and each primitive's vertices, morphed,
    // skinned where the node is skinned, in scene space.
    let mut morph_weights = Vec::new();
    let mut mesh_vertices = Vec::new();
    for (k, node) in p.scene.nodes.iter().enumerate() {
        let weights = node_weights(&src, k, clip.as_deref(), args.time, args.exact);
        if !weights.is_empty() {
            morph_weights.push(json!({"node": node.node, "weights": weights}));
        }
        let pal = node.skin.map(|s| palette_of(s as usize));
        for prim in &node.primitives {
            let (positions, normals, targets) = match prim.mesh {
                MeshRef::Skinned(m) => {
                    let m = &p.meshes[m as usize];
                    (&m.positions, &m.normals, &m.targets)
                }
                MeshRef::Static(m) => {
                    let m = &p.scene.meshes[m as usize];
                    (&m.positions, &m.normals, &m.targets)
                }
            };
            let mut morphed = vec![Vec3::ZERO; positions.len()];
            let mut morphed_normals = vec![Vec3::ZERO; normals.len()];
            morph::morph(
                positions,
                normals,
                targets,
                &weights,
                &mut morphed,
                &mut morphed_normals,
            );
            let scene_space: Vec<[f32; 3]> = match (prim.mesh, &pal, node.skin) {
                (MeshRef::Skinned(m), Some(pal), Some(s)) => {
                    let mesh = &p.meshes[m as usize];
                    let root = p.skeletons[p.skins[s as usize].skeleton as usize].root_transform;
                    mesh.joints
                        .iter()
                        .zip(&mesh.weights)
                        .zip(&morphed)
                        .map(|((&j, &w), &v)| {
                            let m = skinning::blend_matrix(pal, j, w);
                            root.transform_point3(m.transform_point3(v)).to_array()
                        })
                        .collect()
                }
                _ => morphed
                    .iter()
                    .map(|v| node.world.transform_point3(*v).to_array())
                    .collect(),
            };
            mesh_vertices.push(json!({
                "node": node.node,
                "primitive": prim.primitive,
                "vertices": scene_space,
            }));
        }
    }
    out["morph_weights"] = json!(morph_weights);
    out["mesh_vertices"] = json!(mesh_vertices);
    print_json(&out);
    Ok(())
}

/// The scalar curves of `skeleton` at `time` of `clip` (by name; none: the rest pose), by name:
/// the cooked tracks (also with `--exact`: authored keys are cooked onto the clip's samples),
/// a channel the clip has no track of at its default, each clamped to its range.
fn curves_json(p: &Package, skeleton: u32, clip: Option<&str>, time: f64) -> serde_json::Value {
    let index = clip
        .and_then(|name| (p.clips.iter()).position(|c| c.skeleton == skeleton && c.name == name));
    let mut out = serde_json::Map::new();
    for id in p.curves.range(skeleton) {
        let channel = &p.curves.channels[id];
        let track = index
            .and_then(|i| (p.curves.tracks_of(i as u32).iter()).find(|t| t.channel as usize == id));
        let value = match (index, track) {
            (Some(i), Some(t)) => scalar::sample_track(&p.clips[i], &t.values, time as f32),
            _ => channel.default,
        };
        out.insert(channel.name.clone(), json!(scalar::output(channel, value)));
    }
    serde_json::Value::Object(out)
}

/// 16 floats, column-major.
fn cols(m: &Affine3A) -> [f32; 16] {
    Mat4::from(*m).to_cols_array()
}
