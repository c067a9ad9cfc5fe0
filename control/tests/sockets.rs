//! Gameplay sockets (docs/state-tree.md, "Sockets"): evaluated every tick on the sockets' joints
//! and their ancestors alone (each once), they must match the full-pose CPU reference within
//! 1e-6 of the skeleton's extent, on every shared asset with clips and on the generated
//! character.

use glam::{Affine3A, Vec3};
use throng_control::crowd::Crowd;
use throng_control::instance::Controller;
use throng_control::tree::{self, Value};
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::{Evaluator, Package, Program};

/// A tree over skeleton 0 of `package`: a 1-D blend of two clips, an override layer of a third
/// under a mask on the tip's parent, and sockets on the deepest joint (with an offset), the root
/// and, where the skeleton branches, the last joint off the deepest one's chain (the chains
/// merged then share some ancestors and not others). `None` without clips.
fn tree_source(package: &Package) -> Option<(String, usize)> {
    let rig = package.skeletons.first()?;
    let clips: Vec<&str> = package
        .clips
        .iter()
        .filter(|c| c.skeleton == 0)
        .map(|c| c.name.as_str())
        .collect();
    if clips.is_empty() {
        return None;
    }
    let depth = |mut j: usize| {
        let mut d = 0;
        while (rig.parents[j] as usize) < j {
            j = rig.parents[j] as usize;
            d += 1;
        }
        d
    };
    let tip = (0..rig.joint_count()).max_by_key(|&j| depth(j))?;
    let (mut chain, mut j) = (vec![tip], tip);
    while (rig.parents[j] as usize) < j {
        j = rig.parents[j] as usize;
        chain.push(j);
    }
    let branch = (0..rig.joint_count()).rev().find(|j| !chain.contains(j));
    let branch = branch.map_or(String::new(), |j| {
        format!("[sockets.branch]\njoint = {:?}\n", rig.names[j])
    });
    let parent = rig.parents[tip] as usize;
    let masked = if parent < tip { parent } else { tip };
    let (a, b, c) = (clips[0], clips[1 % clips.len()], clips[clips.len() - 1]);
    let source = format!(
        r#"version = 1
[inputs.x]
type = "float"
min = 0.0
max = 1.0

[masks.upper]
joints = [{masked:?}]

[sockets.tip]
joint = {tip:?}
offset = [0.1, 0.2, 0.3]

[sockets.root]
joint = {root:?}

{branch}
[[regions]]
name = "base"
initial = "move"

[[regions.states]]
name = "move"

[regions.states.blend1d]
input = "x"
points = [{{ clip = {a:?}, at = 0.0 }}, {{ clip = {b:?}, at = 1.0 }}]

[[regions]]
name = "layer"
blend = "override"
mask = "upper"
weight = 0.5
initial = "pose"

[[regions.states]]
name = "pose"
clip = {c:?}
"#,
        masked = rig.names[masked],
        tip = rig.names[tip],
        root = rig.names[0],
    );
    Some((source, tip))
}

/// The diagonal of the rest pose's joint positions (at least 1 cm).
fn extent(package: &Package) -> f32 {
    let rig = &package.skeletons[0];
    let mut component = vec![Affine3A::IDENTITY; rig.joint_count()];
    local_to_component(rig, &rig.rest, &mut component);
    let (lo, hi) = component.iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(lo, hi), m| (lo.min(m.translation.into()), hi.max(m.translation.into())),
    );
    (hi - lo).length().max(0.01)
}

/// Ticks a few instances of the generated tree and checks every socket against the full
/// pose at scattered ticks; returns the worst error relative to the extent.
fn check(name: &str, package: Package) -> Option<f32> {
    let (source, tip) = tree_source(&package)?;
    let tree = tree::load(&source, name, &package, 0).unwrap_or_else(|e| panic!("{name}: {e}"));
    let extent = extent(&package);
    let ctl = Controller::new(tree, package, 60.0, 256).unwrap();
    let limits = ctl.limits();
    let joints = ctl.package.skeletons[0].joint_count();
    let palette = ctl.package.skins.iter().map(|s| s.joints.len()).sum();
    let mut full = Evaluator::new(limits, joints, palette);
    let mut crowd = Crowd::new(&ctl, 3).unwrap();
    let mut program = Program {
        ops: Vec::new(),
        weights: Vec::new(),
    };
    let mut worst = 0.0f32;
    let mut checked = 0;
    for tick in 0..240usize {
        for (i, s) in crowd.instances.iter_mut().enumerate() {
            let x = ((tick * 7 + i * 31) % 101) as f64 / 100.0;
            ctl.set_input(s, "x", Value::Float(x)).unwrap();
        }
        crowd.tick(&ctl);
        assert_eq!(crowd.failures().count(), 0, "{name}");
        if tick % 23 != 5 {
            continue;
        }
        for i in 0..crowd.instances.len() {
            crowd.programs.copy_into(i, &mut program);
            full.run(&program, &ctl.package.assets(0).unwrap()).unwrap();
            let sockets = crowd.sockets(&ctl, i);
            assert_eq!(sockets.len(), ctl.tree.sockets.len());
            for (socket, got) in ctl.tree.sockets.iter().zip(sockets) {
                let want = full.component()[socket.joint as usize]
                    * Affine3A::from_translation(socket.offset);
                let error = (got.translation - want.translation)
                    .abs()
                    .max_element()
                    .max(
                        (got.matrix3 - want.matrix3)
                            .abs()
                            .to_cols_array()
                            .into_iter()
                            .fold(0.0, f32::max)
                            * extent,
                    );
                worst = worst.max(error / extent);
                checked += 1;
            }
        }
    }
    assert!(checked >= 60, "{name}: {checked} sockets checked");
    assert_eq!(
        ctl.tree.sockets.last().map(|s| s.joint as usize),
        Some(tip),
        "{name}: 'tip' sorts last"
    );
    Some(worst)
}

#[test]
fn sockets_match_the_full_pose_reference_on_the_character_and_every_shared_asset() {
    let imported =
        throng_cook::import_slice(&throng_fixtures::character_glb(), "character").unwrap();
    let character = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)
        .unwrap()
        .0;
    let mut results = vec![(
        "character".to_owned(),
        check("character", character).unwrap(),
    )];
    for file in throng_fixtures::shared_assets() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        match throng_cook::cook_file(&file, &throng_cook::Profile::DEFAULT) {
            // Morph targets alone (../shared/assets/morph) cook without a skeleton.
            Ok((package, _)) if package.skeletons.is_empty() => {
                eprintln!("not a character: {name} has no skeleton")
            }
            Ok((package, _)) => {
                if let Some(worst) = check(&name, package) {
                    results.push((name, worst));
                }
            }
            Err(e @ throng_cook::CookError::NoSkin { .. }) => eprintln!("not a character: {e}"),
            Err(e) => panic!("{name}: {e}"),
        }
    }
    for (name, worst) in &results {
        eprintln!("{name}: worst socket error {worst:.2e} of the extent");
        assert!(
            *worst <= 1e-6,
            "{name}: socket off by {worst:.2e} of the extent"
        );
    }
}
