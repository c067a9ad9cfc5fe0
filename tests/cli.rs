//! End-to-end tests of the `throng` binary: the main job's pipeline and its error behaviour.

mod support;

use support::{scratch_dir, stderr, throng};

use std::path::{Path, PathBuf};
use std::process::Output;

fn assets() -> Option<PathBuf> {
    throng_fixtures::shared_dir("", "the tests of shared assets")
}

/// A failure is one `error:` line, a non-zero exit, and never a panic message.
fn assert_clean_failure(o: &Output, expect: &str) {
    let err = stderr(o);
    assert!(
        !o.status.success(),
        "expected failure, got success; stderr: {err}"
    );
    assert!(
        err.starts_with("error: "),
        "stderr should start with 'error: ': {err}"
    );
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line of error expected: {err}"
    );
    assert!(!err.contains("panicked"), "a panic reached the user: {err}");
    assert!(
        err.contains(expect),
        "stderr should mention '{expect}': {err}"
    );
}

/// The generated character written to `dir` as `character.glb` and cooked with the default
/// profile to `character.throng`.
fn character_files(dir: &Path) -> (PathBuf, PathBuf) {
    let (glb, pkg) = (dir.join("character.glb"), dir.join("character.throng"));
    let o = throng(&["character", "-o", glb.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = throng(&["cook", glb.to_str().unwrap(), "-o", pkg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    (glb, pkg)
}

fn pose_json(args: &[&str]) -> serde_json::Value {
    let o = throng(args);
    assert!(o.status.success(), "pose failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("pose prints JSON")
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

#[test]
fn main_job_pipeline_character_cook_inspect_pose() {
    let dir = scratch_dir("cli_main_job");
    let glb = dir.join("character.glb");
    let pkg = dir.join("character.throng");
    let o = throng(&["character", "-o", glb.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));

    let o = throng(&[
        "cook",
        glb.to_str().unwrap(),
        "-o",
        pkg.to_str().unwrap(),
        "--json",
        "--codec",
        "reference",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("cook --json prints JSON");
    let clips = report["clips"].as_array().expect("clips list");
    for name in throng_fixtures::CHARACTER_CLIPS {
        assert!(
            clips.iter().any(|c| c["name"] == name),
            "clip {name} missing from the cook report"
        );
    }

    let o = throng(&["inspect", pkg.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let inspect: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(inspect["skeletons"][0]["joints"].as_u64().unwrap() >= 40);
    assert_eq!(inspect["clips"].as_array().unwrap().len(), 5);
    // The contact curves (tracks on idle, walk and run) and the face's morph weights.
    let curves: Vec<&str> = (inspect["curves"].as_array().unwrap().iter())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        curves,
        [
            "contact/foot_l",
            "contact/foot_r",
            "morph/Body/0",
            "morph/Body/1"
        ]
    );
    let walk = (inspect["clips"].as_array().unwrap().iter())
        .find(|c| c["name"] == "walk")
        .unwrap();
    let walk_curves = (walk["channels"].as_array().unwrap().iter())
        .filter(|c| c["path"] == "curve")
        .count();
    assert_eq!(walk_curves, 2);

    // Cooked pose from the package equals the cooked pose from the source; exact is close to it.
    let cooked = pose_json(&[
        "pose",
        pkg.to_str().unwrap(),
        "--clip",
        "walk",
        "--time",
        "0.5",
        "--json",
    ]);
    let from_glb = pose_json(&[
        "pose",
        glb.to_str().unwrap(),
        "--clip",
        "walk",
        "--time",
        "0.5",
        "--json",
    ]);
    let exact = pose_json(&[
        "pose",
        glb.to_str().unwrap(),
        "--clip",
        "walk",
        "--time",
        "0.5",
        "--exact",
        "--json",
    ]);
    // At half the walk cycle the right foot has landed and the left has not yet lifted; the
    // walk leaves the face alone.
    assert_eq!(
        cooked["curves"],
        serde_json::json!({"contact/foot_l": 1.0, "contact/foot_r": 1.0,
            "morph/Body/0": 0.0, "morph/Body/1": 0.0})
    );
    assert_eq!(cooked["joints"], from_glb["joints"]);
    assert_eq!(cooked["vertices"], from_glb["vertices"]);
    let joints = cooked["joints"].as_array().unwrap();
    assert!(joints.len() >= 40);
    assert!(cooked["vertices"].as_array().unwrap().len() >= 1000);
    let mut worst: f64 = 0.0;
    for (c, e) in joints.iter().zip(exact["joints"].as_array().unwrap()) {
        let (c, e) = (floats(&c["component"]), floats(&e["component"]));
        let d =
            ((c[12] - e[12]).powi(2) + (c[13] - e[13]).powi(2) + (c[14] - e[14]).powi(2)).sqrt();
        worst = worst.max(d);
    }
    // 0.5 s is a cooked sample time at 30 Hz (sample 15): cooked and exact agree to f32 rounding.
    assert!(
        worst < 1e-4,
        "cooked vs exact joint positions differ by {worst} m at a sample time"
    );

    // The walk travels forward: the root's position changes over time.
    let later = pose_json(&[
        "pose",
        pkg.to_str().unwrap(),
        "--clip",
        "walk",
        "--time",
        "0.9",
        "--json",
    ]);
    let a = floats(&joints[0]["component"]);
    let b = floats(&later["joints"][0]["component"]);
    assert!(
        (a[14] - b[14]).abs() > 1e-3,
        "walk should move the root along +Z"
    );
}

#[test]
fn pose_exact_on_a_package_is_a_clear_error() {
    let dir = scratch_dir("cli_exact_package");
    let (_, pkg) = character_files(&dir);
    let o = throng(&[
        "pose",
        pkg.to_str().unwrap(),
        "--clip",
        "walk",
        "--time",
        "0.5",
        "--exact",
        "--json",
    ]);
    assert_clean_failure(&o, "--exact");
    let o = throng(&[
        "pose",
        pkg.to_str().unwrap(),
        "--clip",
        "moonwalk",
        "--time",
        "0.5",
        "--json",
    ]);
    assert_clean_failure(&o, "moonwalk");
    let o = throng(&[
        "pose",
        pkg.to_str().unwrap(),
        "--clip",
        "walk",
        "--time",
        "0.5",
        "--skin",
        "7",
        "--json",
    ]);
    assert_clean_failure(&o, "--skin 7");
}

#[test]
fn damaged_and_missing_inputs_fail_with_one_line() {
    let dir = scratch_dir("cli_damaged");
    let (glb, pkg) = character_files(&dir);
    let bytes = std::fs::read(&pkg).unwrap();

    let truncated = dir.join("truncated.throng");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    assert_clean_failure(
        &throng(&["inspect", truncated.to_str().unwrap()]),
        "truncated.throng",
    );

    let flipped = dir.join("flipped.throng");
    let mut damaged = bytes.clone();
    let at = damaged.len() - 9;
    damaged[at] ^= 0x40;
    std::fs::write(&flipped, &damaged).unwrap();
    assert_clean_failure(
        &throng(&["inspect", flipped.to_str().unwrap()]),
        "flipped.throng",
    );

    assert_clean_failure(
        &throng(&["inspect", dir.join("absent.throng").to_str().unwrap()]),
        "absent.throng",
    );

    let bad_glb = dir.join("bad.glb");
    let mut src = std::fs::read(&glb).unwrap();
    src.truncate(src.len() / 3);
    std::fs::write(&bad_glb, &src).unwrap();
    assert_clean_failure(
        &throng(&[
            "cook",
            bad_glb.to_str().unwrap(),
            "-o",
            dir.join("x.throng").to_str().unwrap(),
        ]),
        "bad.glb",
    );

    assert_clean_failure(
        &throng(&[
            "cook",
            glb.to_str().unwrap(),
            "-o",
            pkg.to_str().unwrap(),
            "--profile",
            "ultra",
        ]),
        "ultra",
    );
}

#[test]
fn a_file_of_the_wrong_kind_is_named_with_the_command_that_takes_it() {
    let dir = scratch_dir("cli_wrong_kind");
    let (glb, pkg) = character_files(&dir);
    let (glb, pkg) = (glb.to_str().unwrap(), pkg.to_str().unwrap());
    // A glTF where a package is expected: cook it first.
    for args in [
        vec!["inspect", glb],
        vec!["simulate", "--package", glb, "--ticks", "1"],
    ] {
        let o = throng(&args);
        assert_clean_failure(&o, "is a binary glTF model (.glb), not a Throng package");
        assert!(stderr(&o).contains("throng cook"), "{}", stderr(&o));
    }
    // A glTF or a package where a state tree is expected.
    let o = throng(&["simulate", glb, "--ticks", "1"]);
    assert_clean_failure(&o, "not a state tree");
    assert!(stderr(&o).contains("throng cook"), "{}", stderr(&o));
    let o = throng(&["simulate", pkg, "--ticks", "1"]);
    assert_clean_failure(&o, "is a Throng package (.throng), not a state tree");
    assert!(stderr(&o).contains("--package"), "{}", stderr(&o));
}

/// A reader that stops early closes the pipe: throng stops quietly (status 141, as for SIGPIPE),
/// not with an internal error.
#[test]
fn a_closed_output_pipe_is_not_an_internal_error() {
    let dir = scratch_dir("closed-pipe");
    let (_, package) = character_files(&dir);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_throng"))
        .args(["inspect", package.to_str().unwrap(), "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("internal error"), "{err}");
    assert!(
        out.status.success() || out.status.code() == Some(141),
        "{:?}: {err}",
        out.status
    );
}

#[test]
fn bench_refuses_zero_instances_and_zero_frames_with_one_line() {
    for instances in ["0", "100,0"] {
        assert_clean_failure(
            &throng(&["bench", "--instances", instances]),
            "--instances needs counts of at least 1",
        );
    }
    assert_clean_failure(
        &throng(&["bench", "--frames", "0"]),
        "--frames must be at least 1",
    );
    for budget in ["--budget-ms=-1", "--budget-ms=NaN"] {
        assert_clean_failure(&throng(&["bench", budget]), "--budget-ms not negative");
    }
}

#[test]
fn unskinned_gltf_is_refused_with_a_clear_message() {
    let Some(assets) = assets() else { return };
    let dir = scratch_dir("cli_unskinned");
    let o = throng(&[
        "cook",
        assets.join("InterpolationTest.glb").to_str().unwrap(),
        "-o",
        dir.join("i.throng").to_str().unwrap(),
    ]);
    assert_clean_failure(&o, "no skin");
}

#[test]
fn pose_of_a_real_asset_matches_between_cooked_and_exact_at_sample_times() {
    let Some(assets) = assets() else { return };
    let fox = assets.join("Fox.glb");
    let fox = fox.to_str().unwrap();
    let cooked = pose_json(&["pose", fox, "--clip", "Walk", "--time", "0.4", "--json"]);
    let exact = pose_json(&[
        "pose", fox, "--clip", "Walk", "--time", "0.4", "--exact", "--json",
    ]);
    let joints = cooked["joints"].as_array().unwrap();
    assert_eq!(joints.len(), 24, "Fox's skin has 24 joints");
    // glTF skin order: the first entry is the skin's first joint node.
    assert!(joints.iter().all(|j| j["node"].as_u64().is_some()));
    let vertices = cooked["vertices"].as_array().unwrap();
    assert!(
        vertices.len() > 1000,
        "Fox has a skinned mesh, got {} vertices",
        vertices.len()
    );
    let (lo, hi) = (
        floats(&cooked["bounds"]["min"]),
        floats(&cooked["bounds"]["max"]),
    );
    for v in vertices {
        let v = floats(v);
        assert!(
            (0..3).all(|a| lo[a] <= v[a] && v[a] <= hi[a]),
            "vertex {v:?} outside the printed bounds {lo:?}..{hi:?}"
        );
    }
    let mut extent: f64 = 0.0;
    let mut worst: f64 = 0.0;
    for (c, e) in joints.iter().zip(exact["joints"].as_array().unwrap()) {
        let (c, e) = (floats(&c["component"]), floats(&e["component"]));
        extent = extent.max(c[12].abs()).max(c[13].abs()).max(c[14].abs());
        worst = worst.max(
            ((c[12] - e[12]).powi(2) + (c[13] - e[13]).powi(2) + (c[14] - e[14]).powi(2)).sqrt(),
        );
    }
    assert!(
        worst <= 1e-4 * extent.max(1.0),
        "cooked vs exact at a sample time: {worst} (extent {extent})"
    );
}

#[test]
fn the_dump_at_the_sprint_shows_the_inertialization_capture_and_its_slot() {
    let inputs = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/trees/crowd-inputs.toml");
    // The scripted run reaches 5 m/s at tick 500; the sprint starts on the next tick.
    let o = throng(&[
        "simulate",
        "--ticks",
        "501",
        "--inputs",
        inputs.to_str().unwrap(),
        "--dump",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("): sprint"), "{text}");
    assert!(
        text.contains("inertializing: history slot 0, 0.000/0.300 s (captured this tick)"),
        "{text}"
    );
    assert!(
        text.contains("history slot 0 = offset of r1 from r0"),
        "{text}"
    );
    assert!(
        text.contains("r0 += history slot 0 decayed 0.0000/0.3000 s"),
        "{text}"
    );
}

#[test]
fn inspect_instance_dumps_state_path_and_program() {
    let inputs = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/trees/crowd-inputs.toml");
    let o = throng(&[
        "inspect",
        "--instance",
        "--ticks",
        "120",
        "--inputs",
        inputs.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("at tick 120"), "{text}");
    assert!(text.contains("region 0 'locomotion'"), "{text}");
    assert!(
        text.contains("= sample '"),
        "the compiled program lists its samples: {text}"
    );
    assert!(text.contains("component = fk("), "{text}");
    assert_clean_failure(
        &throng(&["inspect", "--instance", "--tree", "/nonexistent/tree.toml"]),
        "tree.toml",
    );
}

/// `simulate --record` then `--replay`: the recording reproduces its hash, and a replay with
/// another tree, other inputs, another package or a tampered hash is refused, naming which.
#[test]
fn a_recorded_run_replays_bit_for_bit_and_refuses_what_differs() {
    let dir = scratch_dir("replay");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let inputs = root.join("fixtures/trees/crowd-inputs.toml");
    let run = dir.join("run.toml");
    let o = throng(&[
        "simulate",
        "--ticks",
        "600",
        "--inputs",
        inputs.to_str().unwrap(),
        "--quiet",
        "--hash",
        "--record",
        run.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recorded = String::from_utf8_lossy(&o.stdout).to_string();
    let hash = recorded.split_whitespace().nth(1).unwrap().to_owned();
    let replay = |extra: &[&str]| {
        let mut args = vec!["simulate", "--quiet", "--replay", run.to_str().unwrap()];
        args.extend_from_slice(extra);
        throng(&args)
    };
    let o = replay(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains(&format!("hash {hash} over 600 ticks, as recorded")),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // The recorded inputs given again are accepted.
    assert!(replay(&["--inputs", inputs.to_str().unwrap()])
        .status
        .success());

    let tree = std::fs::read_to_string(root.join("fixtures/trees/crowd.toml")).unwrap();
    let changed_tree = dir.join("crowd.toml");
    std::fs::write(&changed_tree, tree.replace("value = 4.2", "value = 4.3")).unwrap();
    let o = replay(&[changed_tree.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("the tree is not the recorded one"),
        "{}",
        stderr(&o)
    );

    let script = std::fs::read_to_string(&inputs).unwrap();
    let changed_inputs = dir.join("inputs.toml");
    std::fs::write(
        &changed_inputs,
        format!("{script}\n[[set]]\ntick = 599\nwave = true\n"),
    )
    .unwrap();
    let o = replay(&["--inputs", changed_inputs.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("the inputs are not the recorded ones"),
        "{}",
        stderr(&o)
    );

    let glb = dir.join("character.glb");
    assert!(throng(&["character", "-o", glb.to_str().unwrap()])
        .status
        .success());
    let other = dir.join("character-crowd.throng");
    let o = throng(&[
        "cook",
        glb.to_str().unwrap(),
        "--profile",
        "crowd",
        "-o",
        other.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = replay(&["--package", other.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("the package is not the recorded one"),
        "{}",
        stderr(&o)
    );

    let text = std::fs::read_to_string(&run).unwrap();
    let flipped = if hash.ends_with('0') { "1" } else { "0" };
    let tampered_hash = format!("{}{flipped}", &hash[..15]);
    let tampered = dir.join("tampered.toml");
    std::fs::write(&tampered, text.replace(&hash, &tampered_hash)).unwrap();
    let o = throng(&[
        "simulate",
        "--quiet",
        "--replay",
        tampered.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(&format!(
            "the recording ended on hash {tampered_hash}, the replay on {hash}"
        )),
        "{}",
        stderr(&o)
    );
}

/// `throng simulate` of the crowd tree under its scripted inputs for `ticks` ticks, printing the
/// last `trace` of them.
fn simulate_trace(ticks: u32, trace: u32) -> String {
    let inputs = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/trees/crowd-inputs.toml");
    let (ticks, trace) = (ticks.to_string(), trace.to_string());
    let o = throng(&[
        "simulate",
        "--ticks",
        &ticks,
        "--inputs",
        inputs.to_str().unwrap(),
        "--quiet",
        "--trace",
        &trace,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn simulate_trace_shows_the_sprint_transition_and_the_clause_that_fired_it() {
    let text = simulate_trace(503, 3);
    assert!(
        text.starts_with("trace: the last 3 of 503 ticks\ntick 501  speed=5.0 wave=true"),
        "{text}"
    );
    assert!(
        text.contains(
            "taken   locomotion: sprint_start (move -> sprint) because speed >= 4.2 (speed = 5.0)"
        ),
        "{text}"
    );
    assert_eq!(text.matches("\ntick ").count(), 3, "{text}");
    assert_eq!(text.matches("\n  feet    foot_l ").count(), 3, "{text}");
}

/// Walking (ticks 100-250 of the script at 1.4 m/s), each foot goes through its contact cycle
/// in order, and the trace says why a foot releases.
#[test]
fn simulate_trace_shows_each_foot_s_contact_cycle_while_walking() {
    let text = simulate_trace(250, 120);
    for foot in ["foot_l", "foot_r"] {
        let mut phases: Vec<&str> = Vec::new();
        for line in text.lines().filter_map(|l| l.strip_prefix("  feet    ")) {
            let phase = line
                .split(&format!("{foot} "))
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .unwrap_or("?");
            if phases.last() != Some(&phase) {
                phases.push(phase);
            }
        }
        let cycle = ["planting", "planted", "releasing", "free"];
        let at = phases
            .iter()
            .position(|p| *p == "planting")
            .unwrap_or(phases.len());
        assert!(
            phases.len() - at >= 5
                && phases[at..]
                    .iter()
                    .enumerate()
                    .all(|(k, p)| *p == cycle[k % 4]),
            "{foot}: {phases:?}"
        );
    }
    assert!(text.contains("releasing (lifted)"), "{text}");
}

/// A raw CMU BVH walk cooks into a package with its one clip, and retargets onto the generated
/// character within the bars; the BVH flags are refused on glTF input, and a malformed BVH file
/// is one error line naming its line.
#[test]
fn bvh_cooks_and_retargets_with_its_scale_and_skip() {
    let dir = scratch_dir("bvh");
    let bad = dir.join("bad.bvh");
    std::fs::write(&bad, "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n}\n").unwrap();
    let o = throng(&["cook", bad.to_str().unwrap(), "-o", "unused.throng"]);
    assert_clean_failure(&o, "bad.bvh:5: not a BVH file Throng reads");
    let (character, _) = character_files(&dir);
    let o = throng(&[
        "cook",
        character.to_str().unwrap(),
        "--bvh-skip",
        "1",
        "--report",
    ]);
    assert_clean_failure(&o, "--bvh-scale and --bvh-skip are for BVH input");
    let Some(assets) = assets() else { return };
    let bvh = assets.join("mocap/bvh/02_01.bvh");
    let package = dir.join("walk.throng");
    let o = throng(&[
        "cook",
        bvh.to_str().unwrap(),
        "--bvh-skip",
        "1",
        "-o",
        package.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let inspect = throng(&["inspect", package.to_str().unwrap(), "--json"]);
    assert!(inspect.status.success(), "{}", stderr(&inspect));
    let report: serde_json::Value = serde_json::from_slice(&inspect.stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("\"02_01\""), "{text}");
    let profile =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/retarget/cmu-to-character.toml");
    let o = throng(&[
        "retarget",
        bvh.to_str().unwrap(),
        "--bvh-skip",
        "1",
        "--bvh-scale",
        "0.0564444",
        "--onto",
        character.to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "--report",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let clip = &report["clips"][0];
    assert_eq!(clip["name"], "02_01");
    assert!(
        clip["foot_slide_cm"].as_f64().is_some_and(|s| s <= 1.0)
            && clip["direction_error_deg"]["mean"]
                .as_f64()
                .is_some_and(|d| d <= 2.0),
        "{clip}"
    );
}

/// A motion database from three raw CMU BVH files (a walk, a slow walk, a run) onto the
/// generated character: every clip's frames, walk and run tags, the fast search agreeing with the
/// exhaustive one on every query, and the database in the written package.
#[test]
fn motion_database_builds_from_bvh_and_its_fast_search_agrees() {
    let Some(assets) = assets() else { return };
    let dir = scratch_dir("motion-database");
    let (character, _) = character_files(&dir);
    let out = dir.join("db.throng");
    let bvh = |name: &str| assets.join("mocap/bvh").join(name);
    let profile =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/retarget/cmu-to-character.toml");
    let (walk, slow, run) = (bvh("02_01.bvh"), bvh("07_04.bvh"), bvh("09_01.bvh"));
    let o = throng(&[
        "motion-database",
        walk.to_str().unwrap(),
        slow.to_str().unwrap(),
        run.to_str().unwrap(),
        "--bvh-skip",
        "1",
        "--onto",
        character.to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let clips = report["clips"].as_array().unwrap();
    let names: Vec<&str> = clips.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["02_01", "07_04", "09_01"]);
    let frames: u64 = clips.iter().map(|c| c["frames"].as_u64().unwrap()).sum();
    assert_eq!(report["frames"].as_u64(), Some(frames));
    assert!(report["tags"]["walk"].as_u64().unwrap() > 0, "{report}");
    assert!(report["tags"]["run"].as_u64().unwrap() > 0, "{report}");
    let search = &report["search"];
    assert_eq!(search["disagreements"], 0, "{search}");
    assert!(search["queries"].as_u64().unwrap() > 100, "{search}");
    let inspect = throng(&["inspect", out.to_str().unwrap(), "--json"]);
    assert!(inspect.status.success(), "{}", stderr(&inspect));
    let package: serde_json::Value = serde_json::from_slice(&inspect.stdout).unwrap();
    assert_eq!(
        package["motion_databases"][0]["frames"].as_u64(),
        Some(frames)
    );
}

#[test]
fn retarget_writes_the_character_with_the_mocap_clip_and_reports_it_as_json() {
    let Some(assets) = assets() else { return };
    let dir = scratch_dir("retarget");
    let character = dir.join("character.glb");
    let out = dir.join("walk.throng");
    assert!(throng(&["character", "-o", character.to_str().unwrap()])
        .status
        .success());
    let mocap = assets.join("mocap/cmu_02_01_walk.glb");
    let profile =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/retarget/cmu-to-character.toml");
    let o = throng(&[
        "retarget",
        mocap.to_str().unwrap(),
        "--onto",
        character.to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    let clip = &report["clips"][0];
    assert_eq!(clip["name"], "cmu_02_01_walk");
    for key in ["mean", "max"] {
        assert!(
            clip["direction_error_deg"][key].as_f64().is_some(),
            "{clip}"
        );
    }
    assert!(
        clip["foot_slide_cm"].as_f64().is_some_and(|s| s <= 1.0),
        "{clip}"
    );
    let ratio = clip["root_speed_ratio"].as_f64().unwrap();
    assert!(
        (ratio * report["scale"].as_f64().unwrap() - 1.0).abs() < 0.05,
        "{report}"
    );
    let inspect = throng(&["inspect", out.to_str().unwrap()]);
    assert!(inspect.status.success(), "{}", stderr(&inspect));
    assert!(String::from_utf8_lossy(&inspect.stdout).contains("cmu_02_01_walk"));

    let bad = dir.join("bad.toml");
    let text = std::fs::read_to_string(&profile)
        .unwrap()
        .replace("\"calf_l\"", "\"knee_l\"");
    std::fs::write(&bad, text).unwrap();
    let o = throng(&[
        "retarget",
        mocap.to_str().unwrap(),
        "--onto",
        character.to_str().unwrap(),
        "--profile",
        bad.to_str().unwrap(),
        "--report",
    ]);
    assert_clean_failure(&o, "target joint 'knee_l' is not in the target skeleton");
}

#[test]
fn codec_profiles_measures_every_asset_under_each_profile_and_refuses_a_folder_without_them() {
    let Some(assets) = assets() else { return };
    let o = throng(&[
        "codec-profiles",
        "--assets",
        assets.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON rows");
    let rows = report["rows"].as_array().expect("rows");
    // Per profile: six mocap files, the Fox, the Knight, CesiumMan and the mocap set.
    assert_eq!(rows.len(), 3 * 10, "{report}");
    for row in rows {
        let number = |key: &str| row[key].as_f64().unwrap_or(f64::NAN);
        assert!(number("ratio") > 1.0, "{row}");
        assert!(number("reference_decode_ns_per_joint") > 0.0, "{row}");
        assert!(number("compressed_decode_ns_per_joint") > 0.0, "{row}");
        // The mocap rig is in metres, so its errors are held to the profile's thresholds.
        let limit = match row["profile"].as_str() {
            Some("hero") => 0.001,
            Some("standard") => 0.01,
            _ => 0.1,
        };
        if row["asset"].as_str().is_some_and(|a| a.contains("mocap")) {
            assert!(number("p99_error_cm") <= limit, "{row}");
            assert_eq!(row["clips"], 6, "{row}");
        }
    }
    let empty = scratch_dir("codec-profiles-empty");
    std::fs::create_dir_all(empty.join("mocap")).unwrap();
    let o = throng(&["codec-profiles", "--assets", empty.to_str().unwrap()]);
    assert_clean_failure(&o, "give --assets the shared assets folder");
}
