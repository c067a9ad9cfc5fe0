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

/// Appends `added` (channels of skeleton 0) to skeleton 0's channels: later channels' ids move
/// up, skeleton 0's selections weigh the new ones 0. Returns the first new id.
fn add_channels(package: &mut Package, added: Vec<throng_cpu_ref::CurveChannel>) -> u32 {
    let curves = &mut package.curves;
    let first = curves.range(0).end;
    let n = added.len() as u32;
    curves.channels.splice(first..first, added);
    for t in &mut curves.tracks {
        if t.channel as usize >= first {
            t.channel += n;
        }
    }
    for s in curves.selections.iter_mut().filter(|s| s.skeleton == 0) {
        s.weights.extend((0..n).map(|_| 0.0));
    }
    first as u32
}

/// Tracks of `channels` (ids from `first`) on every other clip of skeleton 0, values in
/// `lo..hi` from `rng`; every other channel's tracks compressed by the codec (the GPU decodes
/// their packed samples).
fn add_tracks(
    package: &mut Package,
    (first, channels): (u32, u32),
    (lo, hi): (f32, f32),
    rng: &mut throng_fixtures::SplitMix64,
) {
    let clips: Vec<u32> = (0..package.clips.len() as u32)
        .filter(|&c| package.clips[c as usize].skeleton == 0)
        .step_by(2)
        .collect();
    for &c in &clips {
        let samples = package.clips[c as usize].sample_count as usize;
        for k in 0..channels {
            let mut track = throng_cpu_ref::CurveTrack {
                clip: c,
                channel: first + k,
                values: (0..samples).map(|_| rng.range(lo, hi)).collect(),
                quantized: None,
            };
            if k % 2 == 0 {
                let q = throng_cook::quantize_track(&track.values, throng_cook::CURVE_PRECISION)
                    .expect("the codec holds the range");
                track.values = q.decode(samples);
                track.quantized = Some(q);
            }
            package.curves.tracks.push(track);
        }
    }
    package.curves.tracks.sort_by_key(|t| (t.clip, t.channel));
}

/// `package` with scalar curves of every composition added on skeleton 0 (after its own
/// channels): per composition a channel with a range that clamps, tracks on every other clip of
/// the skeleton (so samples with and without a track meet in blends and layers), values from a
/// seeded generator; and two curve selections (weights in [0, 1], one of them zero on some
/// channels).
pub fn with_every_composition(mut package: Package) -> Package {
    use throng_cpu_ref::{Composition, CurveChannel, CurveSelection};
    let mut rng = throng_fixtures::SplitMix64::new(48);
    let added: Vec<CurveChannel> = Composition::ALL
        .iter()
        .map(|&composition| CurveChannel {
            name: format!("test/{}", composition.name()),
            skeleton: 0,
            default: 0.25,
            min: -0.5,
            max: 1.5,
            composition,
        })
        .collect();
    let n = added.len() as u32;
    let first = add_channels(&mut package, added);
    add_tracks(&mut package, (first, n), (-1.0, 2.0), &mut rng);
    let count = package.curves.range(0).len();
    for (s, name) in ["test/half", "test/some"].into_iter().enumerate() {
        package.curves.selections.push(CurveSelection {
            name: name.into(),
            skeleton: 0,
            weights: (0..count)
                .map(|k| {
                    if s == 1 && k % 2 == 0 {
                        0.0
                    } else {
                        rng.unit()
                    }
                })
                .collect(),
        });
    }
    package
        .curves
        .validate(&package.clips, package.skeletons.len())
        .expect("the test curves are valid");
    package
}

/// The generated character with its mesh's morph targets replaced by four synthetic ones on
/// its `Body` node (deltas up to 5 cm): target 0 moves every 7th vertex (position and normal
/// deltas) and is weighed by the curve `morph/Body/0` (the character's blink, with random
/// tracks in -0.5..1.5 added on the clips that lack one); target 1 moves every 5th vertex
/// (both deltas), weighed by `morph/Body/1` (the character's open mouth, in `wave` only);
/// target 2 moves every 11th vertex (positions only) and has no curve, so its default weight
/// 0.3 always holds; target 3 (every 13th) has no curve and default 0, so it never moves
/// anything.
pub fn character_with_morph_targets() -> Package {
    use glam::Vec3;
    use throng_cpu_ref::morph::MorphTarget;
    let mut package = character();
    let mut rng = throng_fixtures::SplitMix64::new(4848);
    let mut delta = |scale: f32| {
        Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        ) * scale
    };
    let n = package.meshes[0].positions.len() as u32;
    let mut target = |step: u32, normals: bool| {
        let vertices: Vec<u32> = (0..n).step_by(step as usize).collect();
        MorphTarget {
            positions: vertices.iter().map(|_| delta(0.05)).collect(),
            normals: if normals {
                vertices.iter().map(|_| delta(0.3)).collect()
            } else {
                Vec::new()
            },
            vertices,
        }
    };
    package.meshes[0].targets = vec![
        target(7, true),
        target(5, true),
        target(11, false),
        target(13, false),
    ];
    let body = (package.scene.nodes.iter_mut())
        .find(|n| n.name == "Body")
        .expect("the character's mesh node");
    body.weights = vec![0.0, 0.0, 0.3, 0.0];
    let blink = package
        .curves
        .find(0, "morph/Body/0")
        .expect("the blink curve");
    let mut rng = throng_fixtures::SplitMix64::new(48_48);
    for c in 0..package.clips.len() as u32 {
        let clip = &package.clips[c as usize];
        if clip.skeleton != 0
            || package
                .curves
                .tracks_of(c)
                .iter()
                .any(|t| t.channel == blink)
        {
            continue;
        }
        let values = (0..clip.sample_count)
            .map(|_| rng.range(-0.5, 1.5))
            .collect();
        package.curves.tracks.push(throng_cpu_ref::CurveTrack {
            clip: c,
            channel: blink,
            values,
            quantized: None,
        });
    }
    package.curves.tracks.sort_by_key(|t| (t.clip, t.channel));
    package
}

/// `package` with its meshes' morph targets removed (what a frame without them costs and
/// shows).
pub fn without_morph_targets(mut package: Package) -> Package {
    for m in &mut package.meshes {
        m.targets.clear();
    }
    package
}
