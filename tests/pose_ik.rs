//! `throng pose --two-bone / --aim` on the generated character: solver reports, solved joints in
//! glTF scene space, and one-line errors for bad specs.

mod support;

use support::{stderr, throng};

use std::path::PathBuf;
use std::sync::OnceLock;

/// The generated character as a .glb, written once per test run.
fn character() -> &'static str {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pose_ik");
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let glb = dir.join("character.glb");
        let o = throng(&["character", "-o", glb.to_str().expect("utf-8 path")]);
        assert!(o.status.success(), "{}", stderr(&o));
        glb
    })
    .to_str()
    .expect("utf-8 path")
}

fn pose(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "pose",
        character(),
        "--clip",
        "walk",
        "--time",
        "0.4",
        "--json",
    ];
    args.extend_from_slice(extra);
    let o = throng(&args);
    assert!(o.status.success(), "pose failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("pose prints JSON")
}

/// Scene-space component matrix (column-major) of the named joint.
fn matrix(pose: &serde_json::Value, name: &str) -> [f64; 16] {
    let joint = pose["joints"]
        .as_array()
        .expect("joints")
        .iter()
        .find(|j| j["name"] == name)
        .unwrap_or_else(|| panic!("joint {name} printed"));
    let v: Vec<f64> = joint["component"]
        .as_array()
        .expect("component")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect();
    v.try_into().expect("16 floats")
}

fn position(pose: &serde_json::Value, name: &str) -> [f64; 3] {
    let m = matrix(pose, name);
    [m[12], m[13], m[14]]
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

fn point(p: [f64; 3]) -> String {
    format!("{},{},{}", p[0], p[1], p[2])
}

#[test]
fn two_bone_puts_the_foot_on_a_scene_space_target() {
    let plain = pose(&[]);
    assert_eq!(
        plain["ik"],
        serde_json::json!([]),
        "no solvers, empty report"
    );
    let foot = position(&plain, "foot_l");
    let target = [foot[0] + 0.05, foot[1] + 0.12, foot[2] + 0.04];
    let knee = position(&plain, "calf_l");
    let pole = [knee[0], knee[1], knee[2] + 1.0];
    let spec = format!("foot_l:{}:pole={}", point(target), point(pole));
    let solved = pose(&["--two-bone", &spec]);
    let ik = &solved["ik"][0];
    assert_eq!(ik["solver"], "two_bone");
    assert_eq!(ik["joint"], "foot_l");
    assert_eq!(ik["status"], "reached", "{ik}");
    assert_eq!(ik["iterations"], 1);
    assert!(
        ik["position_error"].as_f64().expect("residual") < 1e-4,
        "{ik}"
    );
    assert!(
        dist(position(&solved, "foot_l"), target) < 1e-4,
        "foot at {:?}, target {target:?}",
        position(&solved, "foot_l")
    );
    assert!(
        dist(position(&solved, "thigh_l"), position(&plain, "thigh_l")) < 1e-6,
        "the hip moved"
    );
    assert!(
        dist(position(&solved, "foot_r"), position(&plain, "foot_r")) < 1e-6,
        "the other leg moved"
    );
    // The knee went forward toward the pole (+z), not back.
    assert!(position(&solved, "calf_l")[2] > knee[2] - 1e-3);
}

#[test]
fn aim_turns_the_head_toward_the_target_and_far_targets_are_unreachable() {
    let plain = pose(&[]);
    let head = position(&plain, "head");
    let target = [head[0] + 1.0, head[1] + 0.2, head[2] + 1.5];
    let hand = position(&plain, "hand_r");
    let far = [hand[0] - 5.0, hand[1], hand[2]];
    let solved = pose(&[
        "--aim",
        &format!("head:{}", point(target)),
        "--two-bone",
        &format!("hand_r:{}", point(far)),
    ]);
    let reports = solved["ik"].as_array().expect("ik array");
    assert_eq!(reports.len(), 2);
    // Two-bone solves run first.
    assert_eq!(reports[0]["joint"], "hand_r");
    assert_eq!(reports[0]["status"], "unreachable");
    assert!(
        reports[0]["position_error"]
            .as_f64()
            .expect("finite residual")
            > 4.0
    );
    assert_eq!(reports[1]["solver"], "aim");
    assert_eq!(reports[1]["status"], "reached", "{}", reports[1]);
    // The head's +Z column points at the target.
    let m = matrix(&solved, "head");
    let z = [m[8], m[9], m[10]];
    let to = [target[0] - m[12], target[1] - m[13], target[2] - m[14]];
    let cos = z.iter().zip(&to).map(|(a, b)| a * b).sum::<f64>()
        / (dist(z, [0.0; 3]) * dist(to, [0.0; 3]));
    assert!(
        cos > 1.0 - 1e-6,
        "head forward misses the target: cos {cos}"
    );
}

#[test]
fn bad_specs_are_one_line_errors() {
    let cases: [(&[&str], &str); 7] = [
        (&["--two-bone", "toe_l:0,1,0"], "joint 'toe_l'"),
        (&["--two-bone", "foot_l:0,1"], "not three numbers"),
        (
            &["--two-bone", "foot_l:0,1,nan"],
            "not three finite numbers",
        ),
        (
            &["--two-bone", "foot_l:0,1,0:bend=1,2,3"],
            "unknown option 'bend'",
        ),
        (&["--two-bone", "pelvis:0,1,0"], "parent and a grandparent"),
        (&["--aim", ":0,1,0"], "joint name is missing"),
        (&["--aim", "head:0,1,0:up=0,0,1"], "parallel"),
    ];
    for (extra, expect) in cases {
        let mut args = vec![
            "pose",
            character(),
            "--clip",
            "walk",
            "--time",
            "0.4",
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = throng(&args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{extra:?} should fail");
        assert!(err.starts_with("error: "), "{extra:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{extra:?}: one line expected: {err}"
        );
        assert!(!err.contains("panicked"), "{extra:?}: {err}");
        assert!(
            err.contains(expect),
            "{extra:?}: stderr should mention '{expect}': {err}"
        );
    }
}
