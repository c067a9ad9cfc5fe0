//! `throng follow` on held-out paths (issue bars, docs/motion-matching.md): a database cooked
//! from the 15 shared CMU BVH files and the character's idle onto the generated character; a
//! real mocap trajectory (CMU 131_01, a walk none of the BVH files holds) and a synthetic path
//! with speed changes, turns and a stop, neither used to tune the controller.

mod support;

use std::path::Path;

use glam::{Affine3A, Vec3};
use support::{scratch_dir, stderr, throng};
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::Trs;

/// Writes `positions` (x, z at `rate` Hz) as a path file.
fn write_path(file: &Path, rate: f64, positions: &[[f64; 2]]) {
    let json = serde_json::json!({"rate": rate, "positions": positions});
    std::fs::write(file, json.to_string()).unwrap();
}

/// The ground-plane trajectory of the hips of the first clip of `file`, sampled at `rate`,
/// from the origin.
fn hips_trajectory(file: &Path, rate: f64) -> Vec<[f64; 2]> {
    let imported = throng_cook::import_file(file).expect("the mocap file imports");
    let hero = throng_cook::Profile::parse("hero").unwrap();
    let (package, _) = throng_cook::cook(&imported, &hero).expect("the mocap file cooks");
    let rig = &package.skeletons[0];
    let clip = &package.clips[0];
    let pelvis = (rig.names.iter())
        .position(|n| n.eq_ignore_ascii_case("hips"))
        .expect("the mocap skeleton has hips");
    let mut local = vec![Trs::IDENTITY; rig.joint_count()];
    let mut component = vec![Affine3A::IDENTITY; rig.joint_count()];
    let frames = (clip.duration * rate).floor() as usize;
    let mut out = Vec::with_capacity(frames + 1);
    for k in 0..=frames {
        sample_clip(clip, rig, (k as f64 / rate) as f32, &mut local);
        local_to_component(rig, &local, &mut component);
        let p = rig
            .root_transform
            .transform_point3(Vec3::from(component[pelvis].translation));
        out.push([f64::from(p.x), f64::from(p.z)]);
    }
    // The hips sway from foot to foot; a root trajectory is their centred 1 s mean (held at the
    // ends).
    let half = (rate * 0.5).round() as i64;
    let last = out.len() as i64 - 1;
    let smooth: Vec<[f64; 2]> = (0..=last)
        .map(|k| {
            let n = (2 * half + 1) as f64;
            (k - half..=k + half).fold([0.0, 0.0], |a, j| {
                let p = out[j.clamp(0, last) as usize];
                [a[0] + p[0] / n, a[1] + p[1] / n]
            })
        })
        .collect();
    let first = smooth[0];
    smooth
        .iter()
        .map(|p| [p[0] - first[0], p[1] - first[1]])
        .collect()
}

/// A path of segments (seconds, speed m/s, turn rad/s) from the origin along +Z.
fn synthetic(rate: f64, segments: &[(f64, f64, f64)]) -> Vec<[f64; 2]> {
    let (mut x, mut z, mut yaw) = (0.0f64, 0.0f64, 0.0f64);
    let mut out = vec![[x, z]];
    for &(seconds, speed, turn) in segments {
        for _ in 0..(seconds * rate).round() as usize {
            yaw += turn / rate;
            x += yaw.sin() * speed / rate;
            z += yaw.cos() * speed / rate;
            out.push([x, z]);
        }
    }
    out
}

#[test]
fn a_motion_matched_agent_follows_held_out_paths_within_the_bars() {
    let Some(assets) = throng_fixtures::shared_dir("", "the motion-matching path tests") else {
        return;
    };
    let dir = scratch_dir("follow");
    let character = dir.join("character.glb");
    let o = throng(&["character", "-o", character.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut bvh: Vec<String> = std::fs::read_dir(assets.join("mocap/bvh"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bvh"))
        .map(|p| p.display().to_string())
        .collect();
    bvh.sort();
    assert_eq!(bvh.len(), 15);
    let profile =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/retarget/cmu-to-character.toml");
    // The 15 BVH files, `more` clips and the character's idle, as `out`.
    let database = |more: &[&Path], out: &Path| {
        let mut args: Vec<&str> = vec!["motion-database"];
        args.extend(bvh.iter().map(String::as_str));
        args.extend(more.iter().map(|p| p.to_str().unwrap()));
        args.extend([
            "--bvh-skip",
            "2",
            "--idle",
            "idle",
            "--onto",
            character.to_str().unwrap(),
            "--profile",
            profile.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        let o = throng(&args);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let db = dir.join("locomotion.throng");
    database(&[], &db);

    let real = dir.join("cmu_131_01.json");
    write_path(
        &real,
        30.0,
        &hips_trajectory(&assets.join("mocap/cmu_131_01_walk.glb"), 30.0),
    );
    let made = dir.join("synthetic.json");
    write_path(
        &made,
        30.0,
        &synthetic(
            30.0,
            &[
                (3.0, 1.0, 0.0),
                (4.0, 1.4, 0.35),
                (3.0, 2.5, 0.0),
                (3.0, 0.8, -0.4),
                (2.0, 0.0, 0.0),
                (3.0, 1.2, 0.1),
            ],
        ),
    );
    // The real path is CMU's "start, walk, stop" in a dance style: sidesteps and reversals at
    // walking pace that a database of forward walks and runs meets only by turning (the warp's
    // 4 rad/s), so its facing misses the bar (docs/motion-matching.md, "Following paths").
    let follow = |db: &Path, path: &Path| {
        let o = throng(&[
            "follow",
            db.to_str().unwrap(),
            "--path",
            path.to_str().unwrap(),
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
        eprintln!("{r:#}");
        r
    };
    let mut synthetic_rest = None;
    for (path, facing_bar) in [(&real, None), (&made, Some(10.0))] {
        let r = follow(&db, path);
        let f = |k: &str, m: &str| r[k][m].as_f64().unwrap();
        assert!(f("position_error_m", "mean") <= 0.25, "{r}");
        let facing = f("facing_error_deg", "mean");
        assert!(
            facing.is_finite() && facing <= facing_bar.unwrap_or(180.0),
            "{r}"
        );
        assert!(r["foot_slide_cm"].as_f64().unwrap() <= 2.0, "{r}");
        assert!(r["foot_contacts"].as_u64().unwrap() > 0, "{r}");
        let search = &r["search"];
        assert_eq!(search["frames"].as_u64(), Some(2120), "{r}");
        assert!(search["queries"].as_u64().unwrap() > 10, "{r}");
        assert_eq!(search["disagreements"].as_u64(), Some(0), "{r}");
        assert_eq!(
            r["stops"]["segments"], 0,
            "the BVH walks and runs never stop: {r}"
        );
        synthetic_rest = r["stops"]["rest_error_m"]["max"].as_f64();
    }

    // Distance-matched stops: the same database with CMU 131_01 ("start, walk, stop") added
    // holds one stop; on the synthetic path's 2 s rest the agent then stands nearer the path's
    // point than matching alone brings it (which walks past it).
    let stops = dir.join("stops.throng");
    database(&[&assets.join("mocap/cmu_131_01_walk.glb")], &stops);
    let r = follow(&stops, &made);
    assert_eq!(r["stops"]["segments"], 1, "{r}");
    assert!(r["stops"]["ticks"].as_u64().unwrap() > 15, "{r}");
    assert_eq!(r["stops"]["rests"], 1, "{r}");
    let rest = r["stops"]["rest_error_m"]["max"].as_f64().unwrap();
    let alone = synthetic_rest.expect("the synthetic path rests");
    assert!(
        rest <= 0.2 && rest < 0.5 * alone,
        "{rest} m against {alone} m: {r}"
    );
    assert!(
        r["position_error_m"]["mean"].as_f64().unwrap() <= 0.25,
        "{r}"
    );
    assert!(r["foot_slide_cm"].as_f64().unwrap() <= 2.0, "{r}");
    assert_eq!(r["search"]["disagreements"].as_u64(), Some(0), "{r}");
}
