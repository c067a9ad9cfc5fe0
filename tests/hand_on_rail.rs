//! examples/hand_on_rail.rs, run: the hand stays on the rail while the rail is within reach,
//! lets go (passed through, logged) for the second in every four the rail is out of it, and both
//! feet stay planted.

mod support;

use std::process::Command;

#[test]
fn the_hand_follows_the_rail_within_reach_and_lets_go_beyond_it() {
    let out = Command::new(support::example("hand_on_rail"))
        .args(["--frames", "480"])
        .output()
        .expect("the example runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (mut held, mut let_go) = (0, 0);
    for line in text.lines().filter(|l| l.starts_with("frame ")) {
        let t: f32 = line
            .split(" t ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no time in {line}"));
        let out_of_reach = t % 4.0 >= 3.0;
        let mm = line
            .split("hand ")
            .nth(1)
            .and_then(|r| r.split(" mm from the grip").next())
            .and_then(|v| v.parse::<f32>().ok());
        if let Some(mm) = mm {
            assert!(!out_of_reach && mm < 1.0, "{line}");
            held += 1;
        } else {
            assert!(out_of_reach && line.contains("hand let go"), "{line}");
            let_go += 1;
        }
        if t >= 0.2 {
            assert!(line.ends_with("feet planted planted"), "{line}");
        }
    }
    assert_eq!((held, let_go), (36, 12), "{text}");
    // 60 frames a second out of reach, two such seconds in eight.
    assert!(
        text.contains("diagnostics: 120 failure(s), the last 16 kept"),
        "{text}"
    );
}
