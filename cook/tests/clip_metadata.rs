//! Clip events, sync markers and root-motion requests: from glTF extras, from a sidecar TOML that
//! overrides them key by key, their canonical form, and every error naming file, line and key.

use std::path::PathBuf;

use glam::{Affine3A, Quat, Vec3};
use throng_cook::import::{Origin, Placed};
use throng_cook::{
    cook, import_file, import_slice, sidecar_path, ClipMeta, CookError, Imported, Profile,
};
use throng_cpu_ref::{
    Channel, ChannelPath, Clip, ClipEvent, Interpolation, LoopPolicy, Package, RootMotionPolicy,
    Skeleton, SourceClip, SyncMarker, Trs, NO_PARENT,
};
use throng_fixtures::character_glb;

fn event(name: &str, time: f64, reversible: bool) -> ClipEvent {
    ClipEvent {
        name: name.into(),
        time,
        reversible,
    }
}

fn marker(name: &str, time: f64) -> SyncMarker {
    SyncMarker {
        name: name.into(),
        time,
    }
}

fn clip<'a>(package: &'a Package, name: &str) -> &'a Clip {
    &package.clips[package
        .find_clip(name)
        .unwrap_or_else(|| panic!("clip {name}"))]
}

/// A fresh folder under the test target dir holding the character as `character.glb` and, when
/// given, `character.throng.toml`; imports it with its sidecar.
fn import_with_sidecar(case: &str, toml: Option<&str>) -> (Result<Imported, CookError>, PathBuf) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("clip_metadata")
        .join(case);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let glb = dir.join("character.glb");
    std::fs::write(&glb, character_glb()).unwrap();
    let sidecar = sidecar_path(&glb);
    assert_eq!(sidecar, dir.join("character.throng.toml"));
    if let Some(toml) = toml {
        std::fs::write(&sidecar, toml).unwrap();
    }
    (import_file(&glb), sidecar)
}

fn cook_with_sidecar(case: &str, toml: &str) -> Result<Package, CookError> {
    let (imported, _) = import_with_sidecar(case, Some(toml));
    cook(&imported?, &Profile::DEFAULT).map(|(p, _)| p)
}

/// The character with its GLB JSON chunk rewritten by `edit`.
fn character_with_json(edit: impl Fn(&str) -> String) -> Vec<u8> {
    let glb = character_glb();
    let len = |at: usize| u32::from_le_bytes(glb[at..at + 4].try_into().unwrap()) as usize;
    let json_len = len(12);
    let json = std::str::from_utf8(&glb[20..20 + json_len]).unwrap();
    let mut json = edit(json).into_bytes();
    json.resize(json.len().next_multiple_of(4), b' ');
    let bin = &glb[20 + json_len..];
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&((12 + 8 + json.len() + bin.len()) as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out.extend_from_slice(bin);
    out
}

#[test]
fn extras_give_the_generated_gaits_steps_markers_and_root_motion() {
    let imported = import_slice(&character_glb(), "character.glb").unwrap();
    let (package, report) = cook(&imported, &Profile::DEFAULT).unwrap();
    for (name, half) in [("walk", 0.5), ("run", 0.35)] {
        let c = clip(&package, name);
        assert_eq!(
            c.events,
            vec![event("step", 0.0, true), event("step", half, true)],
            "{name}"
        );
        assert_eq!(
            c.markers,
            vec![
                marker("left_foot_down", 0.0),
                marker("right_foot_down", half)
            ],
            "{name}"
        );
        let motion = c.root_motion.as_ref().expect("root motion");
        assert_eq!((motion.joint, motion.policy), (0, RootMotionPolicy::Planar));
        assert_eq!(package.skeletons[0].names[0], "root");
        assert_eq!(
            c.loop_policy,
            LoopPolicy::Loop,
            "{name} loops once its travel is extracted"
        );
        let row = report.clips.iter().find(|r| r.name == name).unwrap();
        assert_eq!((row.events, row.markers), (2, 2));
        assert_eq!(row.root_motion.as_ref().unwrap().policy, "planar");
        // Contact curves: the left foot planted over the first half of the cycle, the right
        // over the second; at about a quarter and three quarters of the cycle one is 1, the
        // other 0.
        let index = package.find_clip(name).unwrap() as u32;
        let tracks = package.curves.tracks_of(index);
        assert_eq!(tracks.len(), 2, "{name}");
        assert_eq!(
            package.curves.channels[0].composition,
            throng_cpu_ref::Composition::Blend
        );
        let at = |track: usize, cycle: f64| {
            let i = (cycle * c.duration * f64::from(c.sample_rate)).round() as usize;
            tracks[track].values[i]
        };
        assert_eq!((at(0, 0.25), at(1, 0.25)), (1.0, 0.0), "{name}");
        assert_eq!((at(0, 0.75), at(1, 0.75)), (0.0, 1.0), "{name}");
    }
    let names: Vec<&str> = (package.curves.channels.iter())
        .map(|c| c.name.as_str())
        .collect();
    // The contact curves, and the face's morph weights (fixtures' `Body` node).
    assert_eq!(
        names,
        [
            "contact/foot_l",
            "contact/foot_r",
            "morph/Body/0",
            "morph/Body/1"
        ]
    );
    // Idle stands on both feet.
    let idle = package.find_clip("idle").unwrap() as u32;
    for t in &package.curves.tracks_of(idle)[..2] {
        assert!(t.values.iter().all(|&v| v == 1.0));
    }
    for name in ["idle", "wave", "breathe"] {
        let c = clip(&package, name);
        assert!(
            c.events.is_empty() && c.markers.is_empty() && c.root_motion.is_none(),
            "{name}"
        );
    }
}

#[test]
fn other_tools_extras_are_ignored() {
    let glb = character_with_json(|j| {
        j.replacen(
            "\"extras\":{\"throng\"",
            "\"extras\":{\"blender\":{\"x\":1},\"throng\"",
            1,
        )
    });
    let (package, _) = cook(
        &import_slice(&glb, "character.glb").unwrap(),
        &Profile::DEFAULT,
    )
    .unwrap();
    assert_eq!(clip(&package, "walk").events.len(), 2);
}

#[test]
fn a_sidecar_overrides_the_extras_key_by_key_and_extends_other_clips() {
    let toml = r#"
version = 1

[clips.walk]
events = [ { name = "scuff", time = 0.25 } ]

[clips.run]
root_motion = { policy = "none" }
markers = [ { name = "end", time = 0.7 } ]

[clips.idle]
markers = [ { name = "b", time = 1.5 }, { name = "a", time = 0.5 } ]

[[clips.wave.events]]
name = "hello"
time = 0.8
reversible = true
"#;
    let package = cook_with_sidecar("override", toml).unwrap();
    let walk = clip(&package, "walk");
    assert_eq!(
        walk.events,
        vec![event("scuff", 0.25, false)],
        "events replaced"
    );
    assert_eq!(walk.markers.len(), 2, "markers kept from the extras");
    assert!(
        walk.root_motion.is_some(),
        "root motion kept from the extras"
    );
    let run = clip(&package, "run");
    assert!(run.root_motion.is_none(), "root motion cancelled");
    assert_eq!(
        run.loop_policy,
        LoopPolicy::Once,
        "travel left in the pose: the run no longer loops"
    );
    assert_eq!(run.events.len(), 2, "events kept from the extras");
    // 0.7 written in decimal lies a hair past the f32 duration: it is the duration, and a
    // once-clip keeps its end marker there.
    assert_eq!(run.markers, vec![marker("end", run.duration)]);
    assert_eq!(
        clip(&package, "idle").markers,
        vec![marker("a", 0.5), marker("b", 1.5)],
        "sorted by time"
    );
    assert_eq!(
        clip(&package, "wave").events,
        vec![event("hello", 0.8, true)]
    );
}

#[test]
fn without_a_sidecar_import_file_reads_the_extras_alone() {
    let (imported, sidecar) = import_with_sidecar("none", None);
    assert!(!sidecar.exists());
    let (package, _) = cook(&imported.unwrap(), &Profile::DEFAULT).unwrap();
    assert_eq!(clip(&package, "walk").markers.len(), 2);
}

/// The generated character's `walk` (1 s) and `run` with a sidecar of two curves on `walk`
/// (a linear `max` curve and a stepped one) and one on `run`, cooked at 30 Hz; they replace the
/// gaits' contact curves (idle keeps its own, and its morph weights).
const CURVES_SIDECAR: &str = r#"version = 1
[clips.walk]
curves = [
  { name = "grip", keys = [[0.0, 1.0], [0.25, 1.0], [0.5, 0.0], [1.0, 0.0]], composition = "max", range = [0.0, 1.0] },
  { name = "blink", keys = [[0.1, 0.0], [0.2, 1.0]], interpolation = "step", default = 0.0 },
]
[clips.run]
curves = [ { name = "grip", keys = [[0.0, 0.5]], composition = "max", range = [0.0, 1.0] } ]
"#;

#[test]
fn authored_curves_are_cooked_onto_each_clips_samples_with_one_channel_per_name() {
    let package = cook_with_sidecar("curves", CURVES_SIDECAR).unwrap();
    let c = &package.curves;
    let names: Vec<&str> = c.channels.iter().map(|ch| ch.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "blink",
            "contact/foot_l",
            "contact/foot_r",
            "grip",
            "morph/Body/0",
            "morph/Body/1"
        ],
        "sorted by name"
    );
    let grip = &c.channels[3];
    assert_eq!(
        (grip.composition, grip.default, grip.min, grip.max),
        (throng_cpu_ref::Composition::Max, 0.0, 0.0, 1.0)
    );
    assert_eq!(
        (c.channels[0].min, c.channels[0].max),
        (f32::NEG_INFINITY, f32::INFINITY),
        "no range: unbounded"
    );
    let walk = package.find_clip("walk").unwrap() as u32;
    let run = package.find_clip("run").unwrap() as u32;
    let idle = package.find_clip("idle").unwrap() as u32;
    let tracks = |clip| {
        c.tracks_of(clip)
            .iter()
            .map(|t| t.channel)
            .collect::<Vec<_>>()
    };
    assert_eq!(tracks(walk), [0, 3]);
    assert_eq!(tracks(run), [3]);
    // Idle keeps its contact curves and its blink (and the face's other weight, 0).
    assert_eq!(tracks(idle), [1, 2, 4, 5]);
    let w = &package.clips[walk as usize];
    assert_eq!(w.sample_count, 31);
    let blink = &c.tracks_of(walk)[0].values;
    let grip = &c.tracks_of(walk)[1].values;
    // Sample i is at i / 30 s: 1 until 0.25 s, then down to 0 at 0.5 s (12/30 = 0.4 s: 0.4).
    for (i, want) in [(0, 1.0), (7, 1.0), (12, 0.4), (15, 0.0), (30, 0.0)] {
        assert!((grip[i] - want).abs() < 1e-6, "sample {i}: {}", grip[i]);
    }
    // Stepped: 0 before 0.2 s (the first key's value before it), 1 from 0.2 s.
    assert_eq!(
        (blink[0], blink[5], blink[6], blink[30]),
        (0.0, 0.0, 1.0, 1.0)
    );
    assert!(c.tracks_of(run)[0].values.iter().all(|&v| v == 0.5));
    assert_eq!(c.validate(&package.clips, package.skeletons.len()), Ok(()));
}

#[test]
fn curves_in_the_extras_are_cooked_like_the_sidecars() {
    // The gaits' extras already carry their contact curves: add a third.
    let glb = character_with_json(|json| {
        json.replace(
            r#""curves":["#,
            r#""curves":[{"name":"lift","keys":[[0.0,0.0],[0.5,2.0]],"composition":"additive"},"#,
        )
    });
    let imported = import_slice(&glb, "character.glb").unwrap();
    let (package, _) = cook(&imported, &Profile::DEFAULT).unwrap();
    let c = &package.curves;
    let names: Vec<&str> = c.channels.iter().map(|ch| ch.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "contact/foot_l",
            "contact/foot_r",
            "lift",
            "morph/Body/0",
            "morph/Body/1"
        ]
    );
    assert_eq!(
        c.channels[2].composition,
        throng_cpu_ref::Composition::Additive
    );
    // Every animation with curves in its extras (walk and run) carries it; walk's sample 6
    // (0.2 s) holds 0.8.
    for name in ["walk", "run"] {
        let clip = package.find_clip(name).unwrap() as u32;
        let channels: Vec<u32> = c.tracks_of(clip).iter().map(|t| t.channel).collect();
        assert_eq!(channels, [0, 1, 2], "{name}");
    }
    let walk = package.find_clip("walk").unwrap() as u32;
    let v = c.tracks_of(walk)[2].values[6];
    assert!((v - 0.8).abs() < 1e-6, "{v}");
}

#[test]
fn cooked_curves_come_out_of_a_program_that_samples_the_clip() {
    use throng_cpu_ref::{Evaluator, PoseOp, Program, ProgramLimits};
    let package = cook_with_sidecar("curves_program", CURVES_SIDECAR).unwrap();
    let assets = package.assets(0).unwrap();
    let walk = package.find_clip("walk").unwrap() as u32;
    let run = package.find_clip("run").unwrap() as u32;
    let joints = package.skeletons[0].joint_count();
    let mut ev = Evaluator::with_curves(ProgramLimits::default(), joints, 0, 6);
    // Walk at 0.375 s (grip 0.5) blended evenly with run (grip 0.5 throughout; no blink track,
    // so blink takes its default 0 there): max reduces to 0.5, blink averages 0.5. Neither
    // gait has contact curves any more (the sidecar replaced them): their defaults, 0.
    let program = Program {
        ops: vec![
            PoseOp::sample(0, walk, 0.375),
            PoseOp::sample(1, run, 0.1),
            PoseOp::blend(2, 0, 2, 0),
            PoseOp::to_component(2),
        ],
        weights: vec![1.0, 1.0],
    };
    ev.run(&program, &assets).unwrap();
    let out = ev.curves();
    // Then the face's morph weights: neither gait animates them.
    assert_eq!(out.len(), 6);
    for (k, want) in [(0, 0.5), (1, 0.0), (2, 0.0), (3, 0.5), (4, 0.0), (5, 0.0)] {
        assert!((out[k] - want).abs() < 1e-6, "{out:?}");
    }
}

#[test]
fn a_loop_end_marker_is_stored_at_zero() {
    let toml = "version = 1\n[clips.walk]\nmarkers = [ { name = \"end\", time = 1.0 }, { name = \"mid\", time = 0.5 } ]\n";
    let package = cook_with_sidecar("loop_end", toml).unwrap();
    let walk = clip(&package, "walk");
    assert_eq!(walk.loop_policy, LoopPolicy::Loop);
    assert_eq!(walk.markers, vec![marker("end", 0.0), marker("mid", 0.5)]);
}

/// The 1-based line of the first line of `text` containing `needle`.
fn line_with(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} in {text}"))
        + 1
}

#[test]
fn bad_sidecars_are_errors_naming_file_line_and_key() {
    // (case, sidecar, text on the line the error names, key, words of the reason)
    let cases = [
        ("unknown_clip", "version = 1\n\n[clips.jog]\nevents = []\n", "[clips.jog]", "clips.jog", "no animation is named 'jog'"),
        (
            "unknown_joint",
            "version = 1\n[clips.walk]\nroot_motion = { joint = \"tail\", policy = \"full\" }\n",
            "tail",
            "clips.walk.root_motion",
            "no joint named 'tail'",
        ),
        (
            "after_the_end",
            "version = 1\n[clips.walk]\nevents = [\n  { name = \"a\", time = 0.1 },\n  { name = \"late\", time = 1.5 },\n]\n",
            "late",
            "clips.walk.events[1]",
            "outside clip 'walk'",
        ),
        (
            "negative",
            "version = 1\n[clips.walk]\nmarkers = [ { name = \"early\", time = -0.1 } ]\n",
            "early",
            "clips.walk.markers[0]",
            "outside clip 'walk'",
        ),
        (
            "nan",
            "version = 1\n[clips.walk]\n[[clips.walk.events]]\nname = \"x\"\ntime = nan\n",
            "[[clips.walk.events]]",
            "clips.walk.events[0]",
            "not a finite",
        ),
        (
            "duplicate",
            "version = 1\n[clips.walk]\nevents = [\n  { name = \"step\", time = 0.5 },\n  { name = \"step\", time = 0.5, reversible = true },\n]\n",
            "reversible = true",
            "clips.walk.events[1]",
            "given twice",
        ),
        (
            "duplicate_after_canonicalisation",
            "version = 1\n[clips.walk]\nmarkers = [\n  { name = \"x\", time = 0.0 },\n  { name = \"x\", time = 1.0 },\n]\n",
            "time = 1.0",
            "clips.walk.markers[1]",
            "a marker at the duration is the one at 0",
        ),
        ("empty_name", "version = 1\n[clips.walk]\nmarkers = [ { name = \"\", time = 0.2 } ]\n", "time = 0.2", "clips.walk.markers[0]", "empty"),
        (
            "no_joint",
            "version = 1\n[clips.idle]\nroot_motion = { policy = \"planar\" }\n",
            "planar",
            "clips.idle.root_motion",
            "needs a `joint`",
        ),
        ("unknown_key", "version = 1\n[clips.walk]\nevents = [ { name = \"a\", tyme = 0.5 } ]\n", "tyme", "sidecar", "tyme"),
        (
            "bad_policy",
            "version = 1\n[clips.walk]\nroot_motion = { joint = \"root\", policy = \"sideways\" }\n",
            "sideways",
            "sidecar",
            "sideways",
        ),
        ("syntax", "version = 1\n[clips.walk\n", "[clips.walk", "sidecar", ""),
        (
            "curve_without_keys",
            "version = 1\n[[clips.walk.curves]]\nname = \"contact/foot_l\"\nkeys = []\n",
            "[[clips.walk.curves]]",
            "clips.walk.curves[0]",
            "has no keys",
        ),
        (
            "curve_key_after_the_end",
            "version = 1\n[clips.walk]\ncurves = [ { name = \"c\", keys = [[0.0, 1.0], [2.0, 0.0]] } ]\n",
            "keys = [[0.0",
            "clips.walk.curves[0]",
            "key 1 at 2 s is not a time in clip 'walk'",
        ),
        (
            "curve_keys_out_of_order",
            "version = 1\n[clips.walk]\ncurves = [ { name = \"c\", keys = [[0.5, 1.0], [0.25, 0.0]] } ]\n",
            "keys = [[0.5",
            "clips.walk.curves[0]",
            "after the key before it",
        ),
        (
            "curve_default_outside_its_range",
            "version = 1\n[clips.walk]\ncurves = [ { name = \"c\", keys = [[0.0, 1.0]], default = 2.0, range = [0.0, 1.0] } ]\n",
            "default = 2.0",
            "clips.walk.curves[0]",
            "default 2 is not a finite value in [0, 1]",
        ),
        (
            "curve_schemas_disagree",
            "version = 1\n[clips.run]\ncurves = [ { name = \"c\", keys = [[0.0, 1.0]], composition = \"max\" } ]\n[clips.walk]\ncurves = [ { name = \"c\", keys = [[0.0, 1.0]] } ]\n",
            "composition = \"max\"",
            "clips.run.curves[0]",
            "a curve has one schema on its skeleton",
        ),
        (
            "curve_composition_unknown",
            "version = 1\n[clips.walk]\ncurves = [ { name = \"c\", keys = [[0.0, 1.0]], composition = \"average\" } ]\n",
            "average",
            "sidecar",
            "average",
        ),
        ("future_version", "version = 2\n", "version = 2", "version", "2 is not supported"),
    ];
    for (case, toml, line_text, key, reason) in cases {
        let err = cook_with_sidecar(case, toml).expect_err(case);
        let CookError::Metadata {
            file,
            line,
            key: k,
            reason: r,
        } = &err
        else {
            panic!("{case}: {err:?}")
        };
        assert!(file.ends_with("character.throng.toml"), "{case}: {file}");
        assert_eq!(*line, Some(line_with(toml, line_text)), "{case}: {err}");
        assert_eq!(k, key, "{case}: {err}");
        assert!(r.contains(reason), "{case}: {err}");
        let shown = err.to_string();
        println!("{case}: {shown}");
        assert!(
            shown.contains(&format!("character.throng.toml:{}: {key}: ", line.unwrap())),
            "{case}: {shown}"
        );
    }
}

#[test]
fn a_sidecar_without_a_version_is_an_error() {
    let err = cook_with_sidecar("no_version", "[clips.walk]\nevents = []\n").unwrap_err();
    assert!(
        matches!(&err, CookError::Metadata { key, reason, .. } if key == "sidecar" && reason.contains("version")),
        "{err}"
    );
}

#[test]
fn bad_extras_are_errors_naming_the_animation_and_key() {
    let cases: [(&str, &str, &str, &str); 4] = [
        (
            "\"reversible\":true",
            "\"reversible\":\"yes\"",
            "animations[1] ('walk') extras.throng",
            "invalid type",
        ),
        (
            "\"time\":0.5",
            "\"time\":5.5",
            "animations[1] ('walk') extras.throng.events[1]",
            "outside clip 'walk'",
        ),
        (
            "\"joint\":\"root\"",
            "\"joint\":\"toor\"",
            "animations[1] ('walk') extras.throng.root_motion",
            "'toor'",
        ),
        (
            "\"events\":[",
            "\"sounds\":[],\"events\":[",
            "animations[0] ('idle') extras.throng",
            "unknown field `sounds`",
        ),
    ];
    for (from, to, key, reason) in cases {
        let glb = character_with_json(|j| {
            assert!(j.contains(from), "{from} in the character's JSON");
            j.replacen(from, to, 1)
        });
        let err = import_slice(&glb, "character.glb")
            .and_then(|i| cook(&i, &Profile::DEFAULT))
            .unwrap_err();
        let CookError::Metadata {
            file,
            line,
            key: k,
            reason: r,
        } = &err
        else {
            panic!("{to}: {err:?}")
        };
        assert_eq!(
            (file.as_str(), *line, k.as_str()),
            ("character.glb", None, key),
            "{err}"
        );
        assert!(r.contains(reason), "{err}");
    }
}

/// One joint, one clip of zero duration.
fn zero_duration_import(meta: ClipMeta) -> Imported {
    let skeleton = Skeleton::new(
        vec![NO_PARENT],
        vec![Trs::IDENTITY],
        vec!["hips".into()],
        vec![0],
        Affine3A::IDENTITY,
    )
    .unwrap();
    let channel = Channel {
        joint: 0,
        path: ChannelPath::Translation,
        interpolation: Interpolation::Step,
        times: vec![0.0],
        values: vec![0.0, 1.0, 0.0],
    };
    Imported {
        source: "pose.glb".into(),
        package: Package {
            skeletons: vec![skeleton],
            ..Package::default()
        },
        source_clips: vec![SourceClip {
            name: "pose".into(),
            skeleton: 0,
            channels: vec![channel],
            duration: 0.0,
        }],
        source_weight_clips: Vec::new(),
        clip_meta: vec![meta],
        lod_pins: Vec::new(),
        warnings: Vec::new(),
    }
}

#[test]
fn events_or_markers_on_a_clip_of_zero_duration_are_errors() {
    let origin = Origin {
        file: "pose.throng.toml".into(),
        line: Some(4),
        key: "clips.pose.events[0]".into(),
    };
    let with_event = ClipMeta {
        events: vec![Placed {
            value: event("hit", 0.0, false),
            origin: origin.clone(),
        }],
        ..ClipMeta::default()
    };
    let err = cook(&zero_duration_import(with_event), &Profile::DEFAULT).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pose.throng.toml:4: clips.pose.events[0]: clip 'pose' has zero duration: it cannot carry events or markers"
    );
    let with_marker = ClipMeta {
        markers: vec![Placed {
            value: marker("m", 0.0),
            origin,
        }],
        ..ClipMeta::default()
    };
    assert!(matches!(
        cook(&zero_duration_import(with_marker), &Profile::DEFAULT),
        Err(CookError::Metadata { .. })
    ));
    // Root motion on a one-sample clip is allowed: a one-sample trajectory, the pose unchanged.
    let request = throng_cook::import::RootMotionRequest {
        joint: "hips".into(),
        policy: RootMotionPolicy::Full,
    };
    let origin = Origin {
        file: "pose.glb".into(),
        line: None,
        key: "k".into(),
    };
    let with_motion = ClipMeta {
        root_motion: Some(Placed {
            value: request,
            origin,
        }),
        ..ClipMeta::default()
    };
    let (package, _) = cook(&zero_duration_import(with_motion), &Profile::DEFAULT).unwrap();
    let motion = package.clips[0].root_motion.as_ref().unwrap();
    assert_eq!(
        (motion.translations.as_slice(), motion.rotations.as_slice()),
        (&[Vec3::Y][..], &[Quat::IDENTITY][..])
    );
}
