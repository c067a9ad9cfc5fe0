//! `throng parity` on the generated character and every shared asset, as CI runs it on lavapipe.

use std::process::Command;

/// `throng` run with `args` (a `parity --json` run): its reports, and its stderr if it failed;
/// `None` (said) when there is no GPU adapter and `THRONG_ALLOW_NO_GPU=1` lets the test skip.
fn parity_json<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
) -> Option<(serde_json::Value, Result<(), String>)> {
    let out = Command::new(env!("CARGO_BIN_EXE_throng"))
        .args(args)
        .output()
        .expect("throng runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let no_gpu_allowed = std::env::var("THRONG_ALLOW_NO_GPU").as_deref() == Ok("1");
    if !out.status.success() && stderr.contains("adapter") && no_gpu_allowed {
        eprintln!("skipping: no GPU adapter and THRONG_ALLOW_NO_GPU=1 ({stderr})");
        return None;
    }
    let reports = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}); stderr: {stderr}"));
    let status = match out.status.success() {
        true => Ok(()),
        false => Err(stderr.into_owned()),
    };
    Some((reports, status))
}

#[test]
fn parity_passes_on_the_character_and_every_shared_asset() {
    let mut assets: Vec<String> = Vec::new();
    if let Some(dir) = throng_fixtures::shared_dir(
        "",
        "the shared assets' parity (the generated character alone)",
    ) {
        for sub in [dir.clone(), dir.join("mocap")] {
            let mut files: Vec<_> = std::fs::read_dir(&sub)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect();
            files.sort();
            for f in files {
                let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
                // InterpolationTest has no skin: the cook refuses it (tested in tests/cli.rs).
                if (ext == "glb" || ext == "gltf") && !f.ends_with("InterpolationTest.glb") {
                    assets.push(f.display().to_string());
                }
            }
        }
    }
    let mut args = vec![
        "parity".to_string(),
        "--json".into(),
        "--instances".into(),
        "6".into(),
        "--seed".into(),
        "7".into(),
    ];
    for a in &assets {
        args.push("--asset".into());
        args.push(a.clone());
    }
    let Some((reports, status)) = parity_json(&args) else {
        return;
    };
    let reports = reports.as_array().expect("one report per path");
    let paths: Vec<String> = reports
        .iter()
        .map(|r| format!("{} {}", r["path"], r["present"]))
        .collect();
    // Frames of batches on every path, then retained instances presented between two ticks.
    assert_eq!(
        paths,
        [
            r#""interpreter" null"#,
            r#"{"specialised":"thread"} null"#,
            r#"{"specialised":"workgroup"} null"#,
            r#""interpreter" 0.0"#,
            r#""interpreter" 0.25"#,
            r#""interpreter" 0.5"#,
            r#""interpreter" 1.0"#,
        ]
    );
    for report in reports {
        let batches = report["batches"].as_array().expect("batches");
        assert_eq!(
            batches.len(),
            1 + assets.len(),
            "one batch per package skeleton"
        );
        for b in batches {
            for s in b["stages"].as_array().unwrap() {
                eprintln!(
                    "{} {} {:<20} worst {:.3e} ({})",
                    report["path"],
                    b["package"],
                    s["stage"].as_str().unwrap(),
                    s["worst"].as_f64().unwrap(),
                    s["unit"].as_str().unwrap()
                );
                assert!(
                    s["worst"].as_f64().unwrap() <= s["tolerance"].as_f64().unwrap(),
                    "{b}"
                );
            }
        }
        assert_eq!(report["pass"], true);
        // One pose dispatch per program shape, and one bounds and one skinning dispatch,
        // whatever the batches (packages, skeletons, skins) and instances.
        let f = &report["frame"];
        let n = |k: &str| f[k].as_u64().unwrap();
        assert!(n("pose_dispatches") <= n("shapes"), "{f}");
        assert_eq!(n("skinning_dispatches"), 1, "{f}");
        assert_eq!(n("bounds_dispatches"), 1, "{f}");
    }
    status.unwrap();
}

#[test]
fn parity_with_no_present_checks_frames_of_batches_alone() {
    let args = ["parity", "--json", "--interpreter", "--no-present"];
    let Some((reports, status)) =
        parity_json(&[&args[..], &["--instances", "2", "--seed", "3"]].concat())
    else {
        return;
    };
    status.unwrap();
    let presents: Vec<String> = (reports.as_array().unwrap().iter())
        .map(|r| format!("{} {}", r["path"], r["present"]))
        .collect();
    assert_eq!(presents, [r#""interpreter" null"#]);
}

#[test]
fn parity_refuses_no_present_beside_present() {
    let out = Command::new(env!("CARGO_BIN_EXE_throng"))
        .args(["parity", "--no-present", "--present", "0.5"])
        .output()
        .expect("throng runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--no-present") && stderr.contains("--present"),
        "{stderr}"
    );
}
