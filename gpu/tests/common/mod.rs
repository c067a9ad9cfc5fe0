//! Shared test setup: the GPU context (or a printed skip), the generated character, real assets.

#![allow(dead_code)]

use std::path::PathBuf;

use throng_cpu_ref::Package;
use throng_gpu::GpuContext;

/// The GPU context, or `None` (with the reason printed) when no adapter exists and
/// THRONG_ALLOW_NO_GPU=1; without that variable a missing adapter fails the test (DESIGN.md §9).
pub fn gpu() -> Option<GpuContext> {
    GpuContext::for_tests()
}

/// The generated character, imported and cooked with the default profile.
pub fn character() -> Package {
    let imported = throng_cook::import_slice(&throng_fixtures::character_glb(), "character")
        .expect("character imports");
    throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)
        .expect("character cooks")
        .0
}

/// glTF files of ../shared/assets ([`throng_fixtures::shared_assets`]).
pub fn shared_assets() -> Vec<PathBuf> {
    throng_fixtures::shared_assets()
}

/// A hand-built package: a chain of `joints` joints (each 0.1 up from its parent, turned a
/// little about z), one clip rotating every joint (11 samples at 30 Hz), a skin over every
/// joint, and a mesh with two vertices per joint weighted to the joint and its parent.
pub fn chain_package(joints: usize) -> Package {
    use glam::{Affine3A, Quat, Vec3};
    use throng_cpu_ref::{
        fk::local_to_component, Clip, LoopPolicy, Skeleton, SkinBinding, SkinnedMesh, SubTrack,
        SubTrackKind, Trs, NO_PARENT,
    };
    let parents: Vec<u32> = (0..joints)
        .map(|j| if j == 0 { NO_PARENT } else { j as u32 - 1 })
        .collect();
    let rest: Vec<Trs> = (0..joints)
        .map(|j| Trs {
            translation: if j == 0 {
                Vec3::ZERO
            } else {
                Vec3::new(0.0, 0.1, 0.0)
            },
            rotation: Quat::from_rotation_z(0.01),
            scale: Vec3::ONE,
        })
        .collect();
    let names = (0..joints).map(|j| format!("j{j}")).collect();
    let skeleton = Skeleton::new(
        parents,
        rest.clone(),
        names,
        vec![u32::MAX; joints],
        Affine3A::IDENTITY,
    )
    .unwrap();
    let samples = 11u32;
    let mut values = Vec::new();
    let mut sub_tracks = Vec::new();
    for j in 0..joints {
        sub_tracks.push(SubTrack {
            kind: SubTrackKind::Default,
            offset: 0,
        });
        sub_tracks.push(SubTrack {
            kind: SubTrackKind::Animated,
            offset: values.len() as u32,
        });
        for i in 0..samples {
            let angle = 0.02 * (i as f32 + j as f32 * 0.3).sin();
            values.extend(Quat::from_rotation_x(angle).to_array());
        }
        sub_tracks.push(SubTrack {
            kind: SubTrackKind::Constant,
            offset: values.len() as u32,
        });
        values.extend([1.0, 1.0 + 0.001 * (j % 3) as f32, 1.0]);
    }
    let clip = Clip {
        name: "sway".into(),
        skeleton: 0,
        skeleton_hash: skeleton.identity_hash(),
        duration: f64::from(samples - 1) / 30.0,
        sample_rate: 30.0,
        sample_count: samples,
        loop_policy: LoopPolicy::Once,
        profile: "standard".into(),
        sub_tracks,
        values,
        events: Vec::new(),
        markers: Vec::new(),
        root_motion: None,
        compressed: None,
    };
    let mut component = vec![Affine3A::IDENTITY; joints];
    local_to_component(&skeleton, &rest, &mut component);
    let skin = SkinBinding {
        name: "chain".into(),
        skeleton: 0,
        joints: (0..joints as u32).collect(),
        inverse_bind: component.iter().map(|c| c.inverse()).collect(),
    };
    let mut mesh = SkinnedMesh {
        name: "chain/0".into(),
        skin: 0,
        positions: Vec::new(),
        normals: Vec::new(),
        joints: Vec::new(),
        weights: Vec::new(),
        indices: Vec::new(),
        lods: Vec::new(),
        targets: Vec::new(),
    };
    for (j, c) in component.iter().enumerate() {
        for side in [-0.05f32, 0.05] {
            mesh.positions
                .push(c.transform_point3(Vec3::new(side, 0.0, 0.0)));
            mesh.normals.push(Vec3::new(side.signum(), 0.0, 0.0));
            mesh.joints
                .push([j as u16, j.saturating_sub(1) as u16, 0, 0]);
            mesh.weights.push([0.7, 0.3, 0.0, 0.0]);
        }
    }
    Package {
        skeletons: vec![skeleton],
        skins: vec![skin],
        meshes: vec![mesh],
        clips: vec![clip],
        masks: Vec::new(),
        impostors: Vec::new(),
        motion_databases: Vec::new(),
        scene: Default::default(),
        curves: Default::default(),
    }
}

/// A package of `n` character types: `n` copies of [`chain_package`]`(10)`, each its own
/// skeleton with its own skin, mesh and clip (as a glTF file with many skins is cooked).
pub fn many_skins_package(n: usize) -> Package {
    let one = chain_package(10);
    let mut p = Package {
        skeletons: Vec::new(),
        skins: Vec::new(),
        meshes: Vec::new(),
        clips: Vec::new(),
        masks: Vec::new(),
        impostors: Vec::new(),
        motion_databases: Vec::new(),
        scene: Default::default(),
        curves: Default::default(),
    };
    for k in 0..n as u32 {
        p.skeletons.push(one.skeletons[0].clone());
        let mut skin = one.skins[0].clone();
        skin.skeleton = k;
        skin.name = format!("chain {k}");
        p.skins.push(skin);
        let mut mesh = one.meshes[0].clone();
        mesh.skin = k;
        p.meshes.push(mesh);
        let mut clip = one.clips[0].clone();
        clip.skeleton = k;
        p.clips.push(clip);
    }
    p
}
