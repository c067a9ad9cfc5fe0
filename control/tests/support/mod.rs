//! Shared test fixtures: the cooked generated character, its crowd tree, and synthetic clips.
#![allow(dead_code)]

use std::sync::OnceLock;

use glam::{Affine3A, Quat, Vec3};
use throng_control::crowd::Crowd;
use throng_control::instance::Controller;
use throng_control::tree::{self, Value};
use throng_cpu_ref::clip::{ClipEvent, RootMotion, RootMotionPolicy, SyncMarker};
use throng_cpu_ref::{Clip, LoopPolicy, Package, Skeleton, SubTrack, SubTrackKind, Trs};

pub const CROWD_TREE: &str = include_str!("../../../fixtures/trees/crowd.toml");

/// The generated character, cooked with the default profile (once per test binary).
pub fn character() -> &'static Package {
    static PACKAGE: OnceLock<Package> = OnceLock::new();
    PACKAGE.get_or_init(|| {
        let imported =
            throng_cook::import_slice(&throng_fixtures::character_glb(), "character").unwrap();
        throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)
            .unwrap()
            .0
    })
}

/// The crowd tree on the character at `hz`.
pub fn crowd(hz: f64) -> Controller {
    let package = character().clone();
    let tree = tree::load(CROWD_TREE, "crowd.toml", &package, 0).unwrap();
    Controller::new(tree, package, hz, 64).unwrap()
}

pub const LOCOMOTION_TREE: &str = include_str!("../../../fixtures/trees/locomotion.toml");

/// The character with a motion database of its own idle (standing still), walk and run. Three
/// clips hold no starts or stops, so the trajectory is weighed up against the pose (leaving
/// idle costs the walk's whole stride otherwise).
pub fn matched_character() -> &'static Package {
    static PACKAGE: OnceLock<Package> = OnceLock::new();
    PACKAGE.get_or_init(|| {
        let mut package = character().clone();
        let clip = |name: &str| package.clips.iter().position(|c| c.name == name).unwrap() as u32;
        let (idle, walk, run) = (clip("idle"), clip("walk"), clip("run"));
        let db = throng_cook::motion_db::build_database(
            &package,
            0,
            &[idle, walk, run],
            &[idle],
            &throng_cook::motion_db::DatabaseSettings {
                weights: [2.0, 2.0, 0.5, 0.5, 0.5],
                ..Default::default()
            },
        )
        .unwrap();
        package.motion_databases = vec![db];
        package
    })
}

/// The locomotion tree (motion matching) on [`matched_character`] at `hz`.
pub fn locomotion(hz: f64) -> Controller {
    let package = matched_character().clone();
    let tree = tree::load(LOCOMOTION_TREE, "locomotion.toml", &package, 0).unwrap();
    Controller::new(tree, package, hz, 64).unwrap()
}

/// Scripted locomotion inputs: each agent's speed sweeps 0..3 m/s ahead, its turn ±0.5 rad.
pub fn matched_script(ctl: &Controller, crowd: &mut Crowd, tick: u64) {
    for (i, s) in crowd.instances.iter_mut().enumerate() {
        let speed = ((i as u64 * 37 + tick) % 90) as f64 / 30.0;
        let turn = 0.5 * ((i as f64) * 0.37 + tick as f64 / 45.0).sin();
        ctl.set_input(s, "velocity_z", Value::Float(speed)).unwrap();
        ctl.set_input(s, "turn", Value::Float(turn)).unwrap();
    }
}

/// The digest of `instances` of `ctl`'s tree over `ticks` ticks on `threads` threads, `script`
/// setting each tick's inputs: events, root motion and programs, tick by tick.
pub fn crowd_hash(
    ctl: &Controller,
    script: fn(&Controller, &mut Crowd, u64),
    (threads, instances, ticks): (usize, usize, u64),
) -> u64 {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let mut crowd = Crowd::new(ctl, instances).unwrap();
    let mut d = throng_control::digest::Digest::default();
    for tick in 0..ticks {
        script(ctl, &mut crowd, tick);
        pool.install(|| crowd.tick(ctl));
        assert_eq!(crowd.failures().count(), 0);
        crowd.events().for_each(|e| d.event(e));
        crowd.motion.iter().for_each(|&m| d.motion(m));
        d.bytes(bytemuck::cast_slice(&crowd.programs.ops));
        d.bytes(bytemuck::cast_slice(&crowd.programs.weights));
        d.bytes(bytemuck::cast_slice(&crowd.programs.ranges));
    }
    d.finish()
}

/// Scripted per-instance inputs: speeds sweep 0..6 m/s, waves come and go.
pub fn script(ctl: &Controller, crowd: &mut Crowd, tick: u64) {
    for (i, s) in crowd.instances.iter_mut().enumerate() {
        let speed = ((i as u64 * 37 + tick) % 60) as f64 / 10.0;
        ctl.set_input(s, "speed", Value::Float(speed)).unwrap();
        ctl.set_input(
            s,
            "wave",
            Value::Bool((i as u64 + tick / 50).is_multiple_of(3)),
        )
        .unwrap();
    }
}

/// A one-joint skeleton.
pub fn skeleton() -> Skeleton {
    Skeleton::new(
        vec![throng_cpu_ref::NO_PARENT],
        vec![Trs::IDENTITY],
        vec!["root".into()],
        vec![0],
        Affine3A::IDENTITY,
    )
    .unwrap()
}

/// A one-joint clip of `duration` s sampled at 30 Hz with only default sub-tracks.
pub fn clip(
    name: &str,
    duration: f64,
    events: &[(&str, f64, bool)],
    markers: &[(&str, f64)],
) -> Clip {
    let rate = 30.0f32;
    let count = (duration * rate as f64).round() as u32 + 1;
    Clip {
        name: name.into(),
        skeleton: 0,
        skeleton_hash: 0,
        duration,
        sample_rate: rate,
        sample_count: count,
        loop_policy: LoopPolicy::Loop,
        profile: "test".into(),
        sub_tracks: vec![
            SubTrack {
                kind: SubTrackKind::Default,
                offset: 0
            };
            3
        ],
        values: Vec::new(),
        events: events
            .iter()
            .map(|&(n, t, r)| ClipEvent {
                name: n.into(),
                time: t,
                reversible: r,
            })
            .collect(),
        markers: markers
            .iter()
            .map(|&(n, t)| SyncMarker {
                name: n.into(),
                time: t,
            })
            .collect(),
        root_motion: None,
        compressed: None,
    }
}

/// `clip` with a planar trajectory: `speed` m/s along +Z and `yaw` rad/s about +Y.
pub fn with_motion(mut c: Clip, speed: f32, yaw: f32) -> Clip {
    let times: Vec<f32> = (0..c.sample_count)
        .map(|i| c.sample_time(i) as f32)
        .collect();
    c.root_motion = Some(RootMotion {
        joint: 0,
        policy: RootMotionPolicy::Planar,
        translations: times
            .iter()
            .map(|&t| Vec3::new(0.0, 0.0, speed * t))
            .collect(),
        rotations: times
            .iter()
            .map(|&t| Quat::from_rotation_y(yaw * t))
            .collect(),
    });
    c
}

/// A package of one-joint `clips`.
pub fn package(clips: Vec<Clip>) -> Package {
    Package {
        skeletons: vec![skeleton()],
        skins: Vec::new(),
        meshes: Vec::new(),
        clips,
        masks: Vec::new(),
        impostors: Vec::new(),
        motion_databases: Vec::new(),
        scene: Default::default(),
        curves: Default::default(),
    }
}
