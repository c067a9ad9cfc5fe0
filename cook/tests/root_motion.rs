//! Root motion: extracted at cook time into a trajectory, removed from the visual pose exactly
//! once, recomposing to the source; the generated gaits travel speed × duration per cycle.

use std::sync::OnceLock;

use glam::{Affine3A, Quat, Vec3};
use throng_cook::import::{Origin, Placed, RootMotionRequest};
use throng_cook::{cook, import_slice, read_package, write_package, ClipMeta, Imported, Profile};
use throng_cpu_ref::clip::{
    compose_root_motion, root_motion_affine, root_motion_between, sample_clip, sample_root_motion,
};
use throng_cpu_ref::curve::sample_exact;
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::{
    Channel, ChannelPath, Clip, Interpolation, LoopPolicy, Package, RootMotionPolicy, Skeleton,
    SourceClip, SubTrackKind, Trs, NO_PARENT,
};

/// The generated character, imported once.
fn character() -> &'static Imported {
    static IMPORTED: OnceLock<Imported> = OnceLock::new();
    IMPORTED
        .get_or_init(|| import_slice(&throng_fixtures::character_glb(), "character.glb").unwrap())
}

fn cooked(profile: &Profile) -> Package {
    cook(character(), profile).unwrap().0
}

fn clip<'a>(package: &'a Package, name: &str) -> &'a Clip {
    &package.clips[package.find_clip(name).unwrap()]
}

fn source<'a>(imported: &'a Imported, name: &str) -> &'a SourceClip {
    imported
        .source_clips
        .iter()
        .find(|c| c.name == name)
        .unwrap()
}

/// Worst joint position difference (m) and worst linear-part element difference between
/// `R(t) · FK(residual)` and `FK(source)` at `t`.
fn recomposition_error(
    skeleton: &Skeleton,
    source: &SourceClip,
    clip: &Clip,
    t: f32,
) -> (f32, f32) {
    let n = skeleton.joint_count();
    let (mut local, mut exact_local) = (vec![Trs::IDENTITY; n], vec![Trs::IDENTITY; n]);
    let (mut cooked, mut exact) = (vec![Affine3A::IDENTITY; n], vec![Affine3A::IDENTITY; n]);
    sample_clip(clip, skeleton, t, &mut local);
    sample_exact(source, skeleton, t, &mut exact_local);
    local_to_component(skeleton, &local, &mut cooked);
    local_to_component(skeleton, &exact_local, &mut exact);
    let r = root_motion_affine(clip, t);
    let mut worst = (0.0f32, 0.0f32);
    for (c, e) in cooked.iter().zip(&exact) {
        let c = r * *c;
        worst.0 = worst.0.max((c.translation - e.translation).length());
        let m = (c.matrix3 - e.matrix3)
            .to_cols_array()
            .iter()
            .fold(0.0f32, |m, x| m.max(x.abs()));
        worst.1 = worst.1.max(m);
    }
    worst
}

#[test]
fn each_gait_cycle_travels_speed_times_duration_straight_ahead() {
    for profile in [Profile::HERO, Profile::STANDARD] {
        let package = cooked(&profile);
        for (name, speed, duration) in [("walk", 1.4f32, 1.0f32), ("run", 3.5, 0.7)] {
            let c = clip(&package, name);
            assert_eq!(c.duration as f32, duration);
            let motion = c.root_motion.as_ref().unwrap();
            assert_eq!(motion.translations.len(), c.sample_count as usize);
            assert_eq!(motion.rotations.len(), c.sample_count as usize);
            let (t, q) = motion.cycle();
            let expected = Vec3::new(0.0, 0.0, speed * duration);
            assert!(
                (t - expected).length() < 1e-6,
                "{name}: one cycle moves {t}, expected {expected}"
            );
            assert!(q.angle_between(Quat::IDENTITY) < 1e-6, "{name}: no turn");
            // Planar: the ground plane, identity yaw for a straight gait, forward all the way.
            assert!(motion.translations.iter().all(|t| t.y == 0.0 && t.x == 0.0));
            assert!(motion.rotations.iter().all(|&q| q == Quat::IDENTITY));
            assert!(motion.translations.windows(2).all(|w| w[1].z > w[0].z));
            // Mid-cycle the trajectory is where uniform travel puts it.
            let (mid, _) = sample_root_motion(c, duration / 2.0).unwrap();
            assert!(
                (mid.z - speed * duration / 2.0).abs() < 1e-5,
                "{name}: {mid}"
            );
        }
    }
}

#[test]
fn the_visual_root_no_longer_travels() {
    let package = cooked(&Profile::STANDARD);
    let skeleton = &package.skeletons[0];
    for name in ["walk", "run"] {
        let c = clip(&package, name);
        assert_eq!(
            c.sub_tracks[0].kind,
            SubTrackKind::Default,
            "{name}: the root's translation is rest"
        );
        let mut local = vec![Trs::IDENTITY; skeleton.joint_count()];
        let mut component = vec![Affine3A::IDENTITY; skeleton.joint_count()];
        for k in 0..=97 {
            let t = c.duration as f32 * k as f32 / 97.0;
            sample_clip(c, skeleton, t, &mut local);
            assert_eq!(
                local[0].translation, skeleton.rest[0].translation,
                "{name} at {t}"
            );
            local_to_component(skeleton, &local, &mut component);
            // The pelvis only bobs and sways around the origin: it travels nowhere.
            let pelvis =
                component[skeleton.names.iter().position(|n| n == "pelvis").unwrap()].translation;
            assert!(
                pelvis.z.abs() < 0.05 && pelvis.x.abs() < 0.05,
                "{name} pelvis at {t}: {pelvis}"
            );
        }
    }
}

#[test]
fn trajectory_times_residual_reproduces_the_source() {
    for profile in [Profile::HERO, Profile::STANDARD] {
        let package = cooked(&profile);
        let skeleton = &package.skeletons[0];
        for name in ["walk", "run"] {
            let c = clip(&package, name);
            let s = source(character(), name);
            let mut worst = (0.0f32, 0.0f32);
            for i in 0..c.sample_count {
                let e = recomposition_error(skeleton, s, c, c.sample_time(i) as f32);
                worst = (worst.0.max(e.0), worst.1.max(e.1));
            }
            println!(
                "{} {name}: recomposed vs source at sample times: {:.2e} m, {:.2e} (matrix)",
                profile.name, worst.0, worst.1
            );
            assert!(worst.0 < 2e-6 && worst.1 < 2e-6, "{name}: {worst:?}");
        }
    }
}

#[test]
fn reverse_playback_undoes_the_forward_motion() {
    let package = cooked(&Profile::STANDARD);
    let walk = clip(&package, "walk");
    let forward = root_motion_between(walk, 0.2, 0.9).unwrap();
    let backward = root_motion_between(walk, 0.9, 0.2).unwrap();
    let (t, q) = compose_root_motion(forward, backward);
    assert!(
        t.length() < 1e-6 && q.angle_between(Quat::IDENTITY) < 1e-6,
        "{t} {q}"
    );
    assert!((forward.0.z - 1.4 * 0.7).abs() < 1e-5, "{forward:?}");
    assert!((backward.0.z + 1.4 * 0.7).abs() < 1e-5, "{backward:?}");
}

#[test]
fn markers_sit_at_the_foot_landings() {
    // A foot on the ground moves little in the world while the other swings: from its landing to
    // the other foot's landing (its stance) the left foot's world travel must be a small part of
    // its travel in the other half (its swing); the right foot the same, half a cycle later.
    let package = cooked(&Profile::STANDARD);
    let skeleton = &package.skeletons[0];
    let n = skeleton.joint_count();
    for name in ["walk", "run"] {
        let c = clip(&package, name);
        let at = |m: &str| c.markers.iter().find(|k| k.name == m).unwrap().time as f32;
        let (left_down, right_down) = (at("left_foot_down"), at("right_foot_down"));
        assert_eq!(left_down, 0.0);
        let foot_z = |foot: &str, t: f32| {
            let mut local = vec![Trs::IDENTITY; n];
            let mut component = vec![Affine3A::IDENTITY; n];
            sample_clip(c, skeleton, t, &mut local);
            local_to_component(skeleton, &local, &mut component);
            let j = skeleton.names.iter().position(|x| x == foot).unwrap();
            (root_motion_affine(c, t) * component[j]).translation.z
        };
        let d = c.duration as f32;
        for (foot, down, up) in [("foot_l", left_down, right_down), ("foot_r", right_down, d)] {
            let stance = (foot_z(foot, up) - foot_z(foot, down)).abs();
            let swing_start = if up >= d { 0.0 } else { up };
            let swing_end = if up >= d { down } else { d };
            let swing = (foot_z(foot, swing_end) - foot_z(foot, swing_start)).abs();
            println!("{name} {foot}: stance travel {stance:.3} m, swing travel {swing:.3} m");
            assert!(
                stance < 0.3 * swing,
                "{name} {foot}: stance {stance} vs swing {swing}"
            );
        }
    }
}

#[test]
fn the_cooked_package_keeps_trajectories_and_events() {
    let package = cooked(&Profile::CROWD);
    let read = read_package(&write_package(&package)).unwrap();
    assert_eq!(read, package);
    let walk = clip(&read, "walk");
    assert!(
        walk.root_motion.is_some()
            && walk.events.iter().all(|e| e.reversible)
            && walk.markers.len() == 2
    );
}

/// A two-joint skeleton: `base` (rest at the origin, rotated by `base_rest`) and `hips` above it.
fn skeleton(base_rest: Quat) -> Skeleton {
    let rest = vec![
        Trs {
            translation: Vec3::ZERO,
            rotation: base_rest,
            scale: Vec3::ONE,
        },
        Trs {
            translation: Vec3::new(0.0, 0.9, 0.0),
            rotation: Quat::IDENTITY,
            scale: Vec3::ONE,
        },
    ];
    Skeleton::new(
        vec![NO_PARENT, 0],
        rest,
        vec!["base".into(), "hips".into()],
        vec![0, 1],
        Affine3A::IDENTITY,
    )
    .unwrap()
}

/// A 1 s clip keyed at 30 Hz (so cooked samples land on keys) on `joint`: translation curving
/// from (0, 0.9, 0) forward and left with a bob, rotation `yaw(θ) · pitch(φ) · rest` turning a
/// quarter turn while pitching back and forth.
fn turning(joint: u32, rest: Quat) -> SourceClip {
    let times: Vec<f32> = (0..=30).map(|i| i as f32 / 30.0).collect();
    let yaw = |t: f32| std::f32::consts::FRAC_PI_2 * t;
    let pitch = |t: f32| 0.3 * (std::f32::consts::TAU * t).sin();
    let translations = times
        .iter()
        .flat_map(|&t| [0.5 * t * t, 0.9 + 0.05 * (6.0 * t).sin(), 2.0 * t]);
    let rotations = times.iter().flat_map(|&t| {
        (Quat::from_rotation_y(yaw(t)) * Quat::from_rotation_x(pitch(t)) * rest).to_array()
    });
    let channel = |path, values: Vec<f32>| Channel {
        joint,
        path,
        interpolation: Interpolation::Linear,
        times: times.clone(),
        values,
    };
    SourceClip {
        name: "turn".into(),
        skeleton: 0,
        channels: vec![
            channel(ChannelPath::Translation, translations.collect()),
            channel(ChannelPath::Rotation, rotations.collect()),
        ],
        duration: 1.0,
    }
}

fn cook_turning(
    skeleton: Skeleton,
    source: SourceClip,
    joint: &str,
    policy: RootMotionPolicy,
) -> (Clip, Imported) {
    let request = RootMotionRequest {
        joint: joint.into(),
        policy,
    };
    let origin = Origin {
        file: "turn.glb".into(),
        line: None,
        key: "root_motion".into(),
    };
    let imported = Imported {
        source: "turn.glb".into(),
        package: Package {
            skeletons: vec![skeleton],
            ..Package::default()
        },
        source_clips: vec![source],
        source_weight_clips: Vec::new(),
        clip_meta: vec![ClipMeta {
            root_motion: Some(Placed {
                value: request,
                origin,
            }),
            ..ClipMeta::default()
        }],
        lod_pins: Vec::new(),
        warnings: Vec::new(),
    };
    let (package, report) = cook(&imported, &Profile::STANDARD).unwrap();
    // Exact at the samples (see assert_recomposes); between them the trajectory and the residual
    // are interpolated apart, so a quarter turn per second at 30 Hz bends the recomposed path
    // slightly away from the source's: about (turn per sample)² / 8 of the distance travelled.
    let error = report.clips[0].max_error_cm;
    println!("{joint} {policy:?}: recomposed error {error} cm");
    assert!(error < 0.2, "recomposed error {error} cm");
    (package.clips[0].clone(), imported)
}

fn assert_recomposes(imported: &Imported, clip: &Clip) {
    let skeleton = &imported.package.skeletons[0];
    for i in 0..clip.sample_count {
        let t = clip.sample_time(i) as f32;
        let (p, m) = recomposition_error(skeleton, &imported.source_clips[0], clip, t);
        assert!(p < 2e-6 && m < 2e-6, "at {t}: {p} m, {m}");
    }
}

#[test]
fn planar_takes_ground_travel_and_yaw_and_leaves_height_pitch_and_roll() {
    // Rest frames: upright, and upside down (yaw cannot be read from the joint's own rotation,
    // only from its turn away from rest).
    for rest in [Quat::IDENTITY, Quat::from_rotation_x(std::f32::consts::PI)] {
        let (clip, imported) = cook_turning(
            skeleton(rest),
            turning(0, rest),
            "base",
            RootMotionPolicy::Planar,
        );
        let motion = clip.root_motion.as_ref().unwrap();
        let skeleton = &imported.package.skeletons[0];
        let mut local = vec![Trs::IDENTITY; 2];
        for i in 0..clip.sample_count as usize {
            let t = i as f32 / 30.0;
            let expected_yaw = Quat::from_rotation_y(std::f32::consts::FRAC_PI_2 * t);
            assert!(
                motion.rotations[i].angle_between(expected_yaw) < 1e-5,
                "yaw at {t}: {}",
                motion.rotations[i]
            );
            assert_eq!((motion.rotations[i].x, motion.rotations[i].z), (0.0, 0.0));
            let expected = Vec3::new(0.5 * t * t, 0.0, 2.0 * t);
            assert!(
                (motion.translations[i] - expected).length() < 1e-5,
                "at {t}: {}",
                motion.translations[i]
            );
            // The residual keeps the height and the pitch, and nothing of the travel or yaw.
            sample_clip(&clip, skeleton, t, &mut local);
            let residual = local[0];
            assert!(
                residual.translation.x.abs() < 1e-6 && residual.translation.z.abs() < 1e-6,
                "{residual:?}"
            );
            assert!((residual.translation.y - (0.9 + 0.05 * (6.0 * t).sin())).abs() < 1e-5);
            let pitch = Quat::from_rotation_x(0.3 * (std::f32::consts::TAU * t).sin()) * rest;
            assert!(
                residual.rotation.angle_between(pitch) < 1e-5,
                "pitch at {t}"
            );
        }
        let (t, q) = motion.cycle();
        assert!(
            (t - Vec3::new(0.5, 0.0, 2.0)).length() < 1e-5
                && (q.angle_between(Quat::IDENTITY) - std::f32::consts::FRAC_PI_2).abs() < 1e-4
        );
        assert_recomposes(&imported, &clip);
        assert_eq!(
            clip.loop_policy,
            LoopPolicy::Once,
            "a quarter turn away from the start"
        );
    }
}

#[test]
fn full_takes_the_whole_motion_and_leaves_the_rest_pose() {
    let (clip, imported) = cook_turning(
        skeleton(Quat::IDENTITY),
        turning(0, Quat::IDENTITY),
        "base",
        RootMotionPolicy::Full,
    );
    let motion = clip.root_motion.as_ref().unwrap();
    assert!(
        motion.translations.iter().any(|t| t.y > 0.9),
        "the height is in the trajectory"
    );
    // The root's residual is its rest rotation and zero translation at every sample.
    assert_eq!(
        clip.sub_tracks[1].kind,
        SubTrackKind::Default,
        "rotation at rest"
    );
    assert_ne!(
        clip.sub_tracks[0].kind,
        SubTrackKind::Animated,
        "translation constant"
    );
    assert_recomposes(&imported, &clip);
}

#[test]
fn a_motion_joint_below_the_root_moves_the_whole_skeleton() {
    // The hips (joint 1) carry the motion; the static base joint 0 takes the inverse trajectory.
    let (clip, imported) = cook_turning(
        skeleton(Quat::IDENTITY),
        turning(1, Quat::IDENTITY),
        "hips",
        RootMotionPolicy::Planar,
    );
    assert_eq!(clip.root_motion.as_ref().unwrap().joint, 1);
    assert_eq!(
        clip.sub_tracks[0].kind,
        SubTrackKind::Animated,
        "the base joint takes R⁻¹"
    );
    let skeleton = &imported.package.skeletons[0];
    let (mut local, mut component) = (vec![Trs::IDENTITY; 2], vec![Affine3A::IDENTITY; 2]);
    for i in 0..clip.sample_count {
        sample_clip(&clip, skeleton, clip.sample_time(i) as f32, &mut local);
        local_to_component(skeleton, &local, &mut component);
        let hips = component[1].translation;
        assert!(
            hips.x.abs() < 1e-5 && hips.z.abs() < 1e-5,
            "residual hips stay over the origin: {hips}"
        );
    }
    assert_recomposes(&imported, &clip);
}
