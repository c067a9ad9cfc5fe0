//! Animated bounds (`bounds::SkinBounds`): every skinned vertex of every shared asset lies inside
//! its instance's box, at many times and placements, and the box is tight.

use std::path::PathBuf;

use glam::{Affine3A, Quat, Vec3};
use throng_cook::{cook, import_file, import_slice, Profile};
use throng_cpu_ref::bounds::{Bounds, SkinBounds};
use throng_cpu_ref::frame::skin_bounds;
use throng_cpu_ref::{
    Batch, CpuRuntime, Instance, Outputs, Package, Pose, PoseOp, Program, ProgramLimits,
};
use throng_fixtures::random::SplitMix64;

fn shared_assets() -> Vec<PathBuf> {
    let Some(dir) = throng_fixtures::shared_dir("", "the shared assets' bounds") else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = [dir.clone(), dir.join("mocap")]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "glb" || e == "gltf"))
        .filter(|p| !p.ends_with("InterpolationTest.glb"))
        .collect();
    files.sort();
    files
}

/// Containment slack and tightness of one asset's boxes.
#[derive(Default)]
struct Measured {
    instances: usize,
    /// Largest distance of a vertex outside its box, over the mesh diagonal.
    worst_outside: f32,
    /// Box diagonal over the diagonal of the exact box of the skinned vertices: worst and sum.
    worst_ratio: f32,
    ratio_sum: f64,
}

/// Poses every skin of `package` with each clip of its skeleton at `times` random times and
/// random placements, and measures its bounds against the skinned vertices.
fn measure(package: &Package, times: usize, rng: &mut SplitMix64) -> Measured {
    let mut m = Measured::default();
    let mut runtime = CpuRuntime::new(ProgramLimits::default(), Outputs::default(), 1);
    let id = runtime.add_package(package);
    for (k, skin) in package.skins.iter().enumerate() {
        if !package.meshes.iter().any(|mesh| mesh.skin as usize == k) {
            continue;
        }
        let diagonal = package
            .meshes
            .iter()
            .filter(|mesh| mesh.skin as usize == k)
            .map(|mesh| mesh.bounds_diagonal())
            .fold(0.0f32, f32::max);
        let clips = (package.clips.iter().enumerate()).filter(|(_, c)| c.skeleton == skin.skeleton);
        let mut programs = Vec::new();
        let mut placements = Vec::new();
        for (c, clip) in clips {
            for _ in 0..times {
                let t = rng.unit() * clip.duration as f32;
                programs.push(Program {
                    ops: vec![PoseOp::sample(0, c as u32, t), PoseOp::to_component(0)],
                    weights: vec![],
                });
                let angle = rng.unit() * std::f32::consts::TAU;
                let offset = Vec3::new(rng.unit(), rng.unit(), rng.unit()) * 20.0;
                placements.push(Affine3A::from_scale_rotation_translation(
                    Vec3::splat(0.5 + 1.5 * rng.unit()),
                    Quat::from_rotation_y(angle),
                    offset,
                ));
            }
        }
        let instances: Vec<Instance> = programs
            .iter()
            .zip(&placements)
            .map(|(p, &placement)| Instance {
                pose: Pose::Program(p),
                placement,
            })
            .collect();
        let batch = Batch {
            package: id,
            skeleton: skin.skeleton,
            skin: Some(k as u32),
            instances: &instances,
        };
        runtime.frame(&[batch]).expect("frame");
        let out = &runtime.outputs()[0];
        for (i, (bounds, placement)) in out.bounds.iter().zip(&placements).enumerate() {
            let scale = placement.matrix3.x_axis.length();
            let vertices = &out.skinned[i * out.vertex_count..(i + 1) * out.vertex_count];
            let exact = Bounds::of_points(vertices.iter().map(|v| v.position));
            for v in vertices {
                let outside = (bounds.min - v.position).max(v.position - bounds.max);
                m.worst_outside = m
                    .worst_outside
                    .max(outside.max_element() / (diagonal * scale));
            }
            let ratio = (bounds.max - bounds.min).length() / (exact.max - exact.min).length();
            m.worst_ratio = m.worst_ratio.max(ratio);
            m.ratio_sum += f64::from(ratio);
            m.instances += 1;
        }
    }
    m
}

fn check(name: &str, m: &Measured) {
    let mean = m.ratio_sum / m.instances.max(1) as f64;
    eprintln!(
        "{name}: {} instances, worst vertex outside {:.2e} of the diagonal, box diagonal / exact: mean {mean:.3}, worst {:.3}",
        m.instances, m.worst_outside, m.worst_ratio
    );
    assert!(m.instances > 0, "{name}: nothing was posed");
    assert!(
        m.worst_outside <= 0.0,
        "{name}: a skinned vertex lies {:.2e} of the mesh diagonal outside its box",
        m.worst_outside
    );
    assert!(
        mean <= 1.3 && m.worst_ratio <= 1.6,
        "{name}: boxes are loose (diagonal {mean:.3}× the exact box on average, {:.3}× at worst)",
        m.worst_ratio
    );
}

#[test]
fn bounds_hold_every_skinned_vertex_of_every_shared_asset_and_are_tight() {
    let mut rng = SplitMix64::new(11);
    let files = shared_assets();
    let mut measured = 0;
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let (package, _) = cook(&import_file(path).unwrap(), &Profile::DEFAULT).unwrap();
        if package.meshes.is_empty() {
            eprintln!("{name}: no skinned mesh");
            continue;
        }
        check(&name, &measure(&package, 6, &mut rng));
        measured += 1;
    }
    assert!(
        files.is_empty() || measured >= 10,
        "expected the 6 skinned Khronos/Quaternius assets and the skinned mocap files, measured {measured} of {files:?}"
    );
    let character = import_slice(&throng_fixtures::character_glb(), "character.glb").unwrap();
    let (package, _) = cook(&character, &Profile::DEFAULT).unwrap();
    check("generated character", &measure(&package, 12, &mut rng));
}

#[test]
fn bounds_hold_under_arbitrary_palettes() {
    let character = import_slice(&throng_fixtures::character_glb(), "character.glb").unwrap();
    let (package, _) = cook(&character, &Profile::DEFAULT).unwrap();
    let bounds: Vec<SkinBounds> = skin_bounds(&package);
    let mut rng = SplitMix64::new(5);
    let mesh = &package.meshes[0];
    let skin = &package.skins[mesh.skin as usize];
    let mut palette = vec![Affine3A::IDENTITY; skin.joints.len()];
    let mut positions = vec![Vec3::ZERO; mesh.positions.len()];
    for _ in 0..50 {
        for p in &mut palette {
            let axis = Vec3::new(rng.unit(), rng.unit(), rng.unit()) - 0.5;
            *p = Affine3A::from_scale_rotation_translation(
                Vec3::new(0.5 + rng.unit(), 0.5 + rng.unit(), 0.5 + rng.unit()),
                Quat::from_axis_angle(axis.normalize_or(Vec3::Y), rng.unit() * 6.0),
                Vec3::new(rng.unit(), rng.unit(), rng.unit()),
            );
        }
        throng_cpu_ref::skinning::skin_mesh(mesh, &palette, &mut positions, &mut []);
        let b = bounds[mesh.skin as usize].instance(&palette, &Affine3A::IDENTITY, &[]);
        for (v, p) in positions.iter().enumerate() {
            assert!(b.contains(*p, 0.0), "vertex {v} at {p} outside {b:?}");
        }
    }
}
