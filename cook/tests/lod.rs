//! Cooked skeleton LODs: every shared asset gets nested, ancestor-closed levels whose reported
//! error is what the CPU reference shows at those levels; pinned joints and their ancestors stay;
//! mirrored joints go together.

mod asset_support;

use asset_support::cooked_skinned_assets;

use glam::Affine3A;
use throng_cook::lod::build_lods;
use throng_cook::{cook, import_file, import_slice, CookError, Profile};
use throng_cpu_ref::lod::check_levels;
use throng_cpu_ref::{
    Batch, CpuRuntime, Instance, Outputs, Package, Pose, PoseOp, Program, ProgramLimits,
};

fn character() -> Package {
    let imported = import_slice(&throng_fixtures::character_glb(), "character.glb").unwrap();
    cook(&imported, &Profile::DEFAULT).unwrap().0
}

/// Largest distance between the skinned vertices of every skin of skeleton 0 at full detail and
/// at `level`, over up to eight evenly spread samples of each of its clips, in scene units.
fn runtime_error(package: &Package, level: u8) -> f32 {
    let mut cpu = CpuRuntime::new(ProgramLimits::default(), Outputs::default(), 1);
    let id = cpu.add_package(package);
    let root = package.skeletons[0].root_transform;
    let mut worst = 0f32;
    for (c, clip) in package
        .clips
        .iter()
        .enumerate()
        .filter(|(_, c)| c.skeleton == 0)
    {
        let step = clip.sample_count.div_ceil(8).max(1);
        for k in (0..clip.sample_count).step_by(step as usize) {
            let program = Program {
                ops: vec![
                    PoseOp::sample(0, c as u32, k as f32 / clip.sample_rate),
                    PoseOp::to_component(0),
                ],
                weights: vec![],
            };
            let instances =
                [Pose::Program(&program), Pose::Lod(&program, level)].map(|pose| Instance {
                    pose,
                    placement: Affine3A::IDENTITY,
                });
            for (s, skin) in package
                .skins
                .iter()
                .enumerate()
                .filter(|(_, s)| s.skeleton == 0)
            {
                let _ = skin;
                let batch = Batch {
                    package: id,
                    skeleton: 0,
                    skin: Some(s as u32),
                    instances: &instances,
                };
                cpu.frame(&[batch]).unwrap();
                let out = &cpu.outputs()[0];
                let (full, reduced) = out.skinned.split_at(out.vertex_count);
                for (a, b) in full.iter().zip(reduced) {
                    worst = worst.max(root.transform_vector3(a.position - b.position).length());
                }
            }
        }
    }
    worst
}

#[test]
fn every_shared_asset_cooks_levels_whose_reported_error_the_reference_shows() {
    let mut packages = vec![("generated character".to_string(), character())];
    packages.extend(cooked_skinned_assets());
    let mut positive = 0;
    for (name, package) in &packages {
        let skeleton = &package.skeletons[0];
        if skeleton.lods.is_empty() {
            // A rig whose every removal costs more than the budgets (RiggedSimple: two joints).
            eprintln!("{name}: no level ({} joints)", skeleton.joint_count());
            continue;
        }
        check_levels(skeleton, &skeleton.lods).unwrap();
        for (i, lod) in skeleton.lods.iter().enumerate() {
            let level = i as u8 + 1;
            let shown = runtime_error(package, level);
            eprintln!(
                "{name}: level {level}, {} of {} joints, reported {:.4}, shown {shown:.4}",
                lod.joints().len(),
                skeleton.joint_count(),
                lod.error()
            );
            assert!(
                shown <= lod.error() * (1.0 + 1e-4) + 1e-6,
                "{name} level {level}: the reference shows {shown}, more than the reported {}",
                lod.error()
            );
            positive += usize::from(shown > 0.0);
        }
    }
    assert!(positive > 0, "some level moves some vertex");
    assert!(
        !packages[0].1.skeletons[0].lods.is_empty(),
        "the character has levels"
    );
}

#[test]
fn the_generated_characters_levels_halve_and_quarter_its_joints_and_stay_symmetric() {
    let package = character();
    let s = &package.skeletons[0];
    assert_eq!(s.lods.len(), 2);
    assert!(
        s.lods[0].joints().len() < s.joint_count(),
        "level 1 drops joints"
    );
    assert!(
        s.lods[1].joints().len() <= s.joint_count().div_ceil(2),
        "level 2 keeps at most half"
    );
    for lod in &s.lods {
        for (j, name) in s.names.iter().enumerate() {
            let Some(stem) = name.strip_suffix("_l") else {
                continue;
            };
            let r = s.find(&format!("{stem}_r")).unwrap();
            assert_eq!(lod.retains(j), lod.retains(r), "{name} and its mirror");
        }
    }
}

#[test]
fn pinned_joints_and_their_ancestors_stay_at_every_level() {
    let mut package = character();
    build_lods(&mut package, &["index_03_l".to_string()]).unwrap();
    let s = &package.skeletons[0];
    let mut j = s.find("index_03_l").unwrap() as u32;
    while j != throng_cpu_ref::NO_PARENT {
        for (i, lod) in s.lods.iter().enumerate() {
            assert!(
                lod.retains(j as usize),
                "level {}: {} dropped",
                i + 1,
                s.names[j as usize]
            );
        }
        j = s.parents[j as usize];
    }
    let unknown = build_lods(&mut package, &["no_such_joint".to_string()]);
    assert!(
        matches!(&unknown, Err(CookError::Lod(m)) if m.contains("no_such_joint")),
        "{unknown:?}"
    );
}

#[test]
fn a_sidecars_lod_pins_stay_at_every_level_and_an_unknown_one_names_its_line() {
    let dir = std::env::temp_dir().join(format!("throng-lod-pins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let glb = dir.join("character.glb");
    std::fs::write(&glb, throng_fixtures::character_glb()).unwrap();
    let sidecar = throng_cook::sidecar_path(&glb);
    std::fs::write(&sidecar, "version = 1\n\n[lod]\npins = [\"index_03_l\"]\n").unwrap();
    let package = cook(&import_file(&glb).unwrap(), &Profile::DEFAULT)
        .unwrap()
        .0;
    let s = &package.skeletons[0];
    let finger = s.find("index_03_l").unwrap();
    assert!(!s.lods.is_empty());
    assert!(
        s.lods.iter().all(|l| l.retains(finger)),
        "the pinned finger stays"
    );
    assert!(
        !character().skeletons[0].lods[0].retains(finger),
        "without the pin the finger is dropped"
    );
    std::fs::write(&sidecar, "version = 1\n\n[lod]\npins = [\"tail\"]\n").unwrap();
    let refused = cook(&import_file(&glb).unwrap(), &Profile::DEFAULT);
    let message = refused.map(|_| ()).unwrap_err().to_string();
    assert!(
        message.contains("character.throng.toml:4: lod.pins[0]") && message.contains("tail"),
        "{message}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
