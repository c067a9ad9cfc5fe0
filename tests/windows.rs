//! Windows on a display: examples/embed.rs and `throng view` each draw a posed crowd in a
//! window of their own and save a screenshot. Without a `DISPLAY` they run under `xvfb-run`;
//! with neither the tests fail, unless THRONG_ALLOW_NO_DISPLAY=1 (then they print why they
//! skip). A missing GPU adapter skips only with THRONG_ALLOW_NO_GPU=1 (DESIGN.md §9).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A screenshot: width, height, RGBA8 rows; and what the program printed.
struct Shot {
    width: usize,
    height: usize,
    rgba: Vec<u8>,
    stdout: String,
}

impl Shot {
    /// Share of pixels in `x0..x1`, `y0..y1` that `f` accepts.
    fn share(
        &self,
        (x0, x1): (usize, usize),
        (y0, y1): (usize, usize),
        f: impl Fn(&[u8]) -> bool,
    ) -> f64 {
        let mut hits = 0;
        for y in y0..y1 {
            let row = &self.rgba[y * self.width * 4..][..self.width * 4];
            hits += row[x0 * 4..x1 * 4].chunks_exact(4).filter(|p| f(p)).count();
        }
        hits as f64 / ((x1 - x0) * (y1 - y0)).max(1) as f64
    }

    /// Checks the size, and that between 1% and 60% of the image is in the crowd's saturated
    /// tints: the backdrops, the ground and the overlay are greys and pale blues (channel
    /// spread under 80).
    fn assert_a_crowd_of(&self, width: usize, height: usize) {
        assert_eq!((self.width, self.height), (width, height));
        let spread = |p: &[u8]| p[..3].iter().max().unwrap() - p[..3].iter().min().unwrap();
        let crowd = self.share((0, width), (0, height), |p| spread(p) > 90);
        assert!(
            (0.01..0.6).contains(&crowd),
            "{:.1}% of the image is crowd",
            100.0 * crowd
        );
    }
}

/// Runs `program` with `args` and `--screenshot FILE` in a window and decodes the screenshot;
/// `None` when the test is to be skipped.
fn screenshot(name: &str, program: &Path, args: &[&str]) -> Option<Shot> {
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.png"));
    let _ = std::fs::remove_file(&shot);
    let mut command = if std::env::var_os("DISPLAY").is_some() {
        Command::new(program)
    } else if Command::new("xvfb-run").arg("--help").output().is_ok() {
        let mut c = Command::new("xvfb-run");
        c.args(["-a", "-s", "-screen 0 1280x800x24"]).arg(program);
        c
    } else if std::env::var("THRONG_ALLOW_NO_DISPLAY").as_deref() == Ok("1") {
        eprintln!("skipping: no DISPLAY and no xvfb-run (THRONG_ALLOW_NO_DISPLAY=1)");
        return None;
    } else {
        panic!("no DISPLAY and no xvfb-run: install xvfb (apt-get install xvfb xauth), or set THRONG_ALLOW_NO_DISPLAY=1 to skip");
    };
    let out = command
        .args(args)
        .arg("--screenshot")
        .arg(&shot)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success()
        && stderr.contains("adapter")
        && std::env::var("THRONG_ALLOW_NO_GPU").as_deref() == Ok("1")
    {
        eprintln!("skipping: {stderr} (THRONG_ALLOW_NO_GPU=1)");
        return None;
    }
    assert!(out.status.success(), "{name} failed: {stderr}");
    let file = std::fs::File::open(&shot).expect("a screenshot");
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut rgba = vec![0; decoder.output_buffer_size().unwrap()];
    let info = decoder.next_frame(&mut rgba).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    rgba.truncate(info.buffer_size());
    Some(Shot {
        width: info.width as usize,
        height: info.height as usize,
        rgba,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    })
}

#[test]
fn the_embed_example_draws_a_posed_crowd_in_its_own_window() {
    let args = ["--frames", "6", "--instances", "40"];
    let Some(shot) = screenshot("embed", &support::example("embed"), &args) else {
        return;
    };
    shot.assert_a_crowd_of(640, 400);
}

#[test]
fn throng_view_draws_the_crowd_under_its_overlay() {
    let args = [
        "view",
        "--frames",
        "5",
        "--instances",
        "60",
        "--width",
        "640",
        "--height",
        "400",
    ];
    let Some(shot) = screenshot("view", Path::new(env!("CARGO_BIN_EXE_throng")), &args) else {
        return;
    };
    shot.assert_a_crowd_of(640, 400);
    // egui's dark window, top left, over the light ground and sky.
    let dark = shot.share((24, 200), (40, 120), |p| p[..3].iter().all(|&c| c < 70));
    assert!(
        dark > 0.5,
        "{:.0}% of the overlay's corner is dark",
        100.0 * dark
    );
}

#[test]
fn throng_view_in_the_interpreter_program_mode_draws_the_crowd_without_specialised_pipelines() {
    let args = [
        "view",
        "--frames",
        "3",
        "--instances",
        "60",
        "--width",
        "640",
        "--height",
        "400",
        "--program-mode",
        "interpreter",
    ];
    let Some(shot) = screenshot(
        "view-interpreter",
        Path::new(env!("CARGO_BIN_EXE_throng")),
        &args,
    ) else {
        return;
    };
    shot.assert_a_crowd_of(640, 400);
    assert!(
        shot.stdout.contains("program mode interpreter only")
            && shot.stdout.contains("ran 0 on specialised pipelines")
            && !shot.stdout.contains(" and 0 on the interpreter"),
        "{}",
        shot.stdout
    );
}

/// A crowd too small on screen to skin is drawn as the far tier's cards, blue under the tint:
/// 20 000 members fill the right of the window (right of the overlay) with blue pixels.
#[test]
fn throng_view_draws_far_members_as_cards_tinted_blue() {
    let args = [
        "view",
        "--frames",
        "3",
        "--instances",
        "20000",
        "--lod-tint",
        "--width",
        "640",
        "--height",
        "360",
    ];
    let Some(shot) = screenshot("view-cards", Path::new(env!("CARGO_BIN_EXE_throng")), &args)
    else {
        return;
    };
    let blue = |p: &[u8]| i32::from(p[2]) > i32::from(p[0].max(p[1])) + 60;
    let share = shot.share((300, 600), (100, 250), blue);
    assert!(
        share > 0.3,
        "{:.0}% of the crowd's middle is blue",
        100.0 * share
    );
}
