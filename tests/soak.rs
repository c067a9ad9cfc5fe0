//! `throng soak`: a one-minute run of the embedding API's animator (two frames presented per
//! control tick) with every disturbance at least twice (package replaced live by each variant,
//! members spawned and despawned, a spawn past the capacity, a malformed package) passes its
//! own checks and reports what it measured.

mod support;

use support::skipped_for_no_gpu;
use support::throng;

#[test]
fn a_one_minute_soak_survives_every_disturbance_with_parity_and_no_growth() {
    let args = [
        "soak",
        "--minutes",
        "1",
        "--instances",
        "200",
        "--disturb-every",
        "2",
        "--check-every",
        "4",
        "--json",
    ];
    let out = throng(&args);
    if skipped_for_no_gpu(&out) {
        return;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "soak failed:\n{stderr}\n{stdout}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON summary");
    assert_eq!(report["pass"], true, "{report:#}");
    let whats: Vec<&str> = (report["disturbances"]
        .as_array()
        .expect("disturbances")
        .iter())
    .filter_map(|d| d["what"].as_str())
    .collect();
    for kind in [
        "package replaced by \"crowd, compressed\"",
        "package replaced by \"standard, compressed, a clip added\"",
        "package replaced by \"hero, reference encoding\"",
        "package replaced by \"standard, compressed\"",
        "members added",
        "members removed",
        "instances refused (over the capacity)",
        "both refused",
    ] {
        assert!(
            whats.iter().any(|w| w.contains(kind)),
            "no \"{kind}\" in {whats:?}"
        );
    }
    assert!(report["checks"].as_u64() >= Some(5), "{report:#}");
    let ticks = report["ticks"].as_u64().expect("ticks");
    assert_eq!(
        report["frames"].as_u64(),
        Some(2 * ticks),
        "two frames a tick"
    );
    for at in report["checks_by_alpha"]
        .as_array()
        .expect("checks by alpha")
    {
        assert!(
            at["checks"].as_u64() >= Some(2),
            "frames at each alpha checked: {at}"
        );
    }
    let parity = &report["parity"];
    assert!(parity["members_compared"].as_u64() > Some(100), "{parity}");
    assert!(parity["heroes_compared"].as_u64() >= Some(10), "{parity}");
    assert_eq!(parity["members_missing_from_frames"], 0, "{parity}");
    assert!(parity["worst_palette"].as_f64() <= Some(1e-4), "{parity}");
    assert!(report["warm_up_s"].as_f64().is_some(), "the warm-up ended");
    assert!(report["resident_bytes"].as_array().map(Vec::len) >= Some(6));
    assert!(report["allocations_per_frame"]["p50"].as_u64() > Some(0));
    assert!(report["frame_ms"]["p99"].as_f64() > Some(0.0));
}

#[test]
fn a_soak_that_cannot_warm_up_says_how_to_run_it() {
    let out = throng(&[
        "soak",
        "--minutes",
        "0.05",
        "--instances",
        "8",
        "--disturb-every",
        "60",
    ]);
    if skipped_for_no_gpu(&out) {
        return;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("run longer or disturb more often"),
        "{stderr}"
    );
}
