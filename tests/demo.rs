//! `throng demo`: a small crowd rendered offscreen to a PNG of the asked size, with the report
//! naming the adapter and the bytes per instance.

mod support;

use support::throng;
use support::{skipped_for_no_gpu, stderr};

use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Decodes a PNG into (width, height, RGBA8 bytes).
fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .expect("a PNG header");
    let mut pixels = vec![0; decoder.output_buffer_size().expect("a bounded image")];
    let info = decoder.next_frame(&mut pixels).expect("PNG image data");
    assert_eq!(
        (info.color_type, info.bit_depth),
        (png::ColorType::Rgba, png::BitDepth::Eight)
    );
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

/// Distinct colours among the pixels.
fn distinct_colours(rgba: &[u8]) -> usize {
    let mut colours: Vec<[u8; 4]> = rgba
        .chunks_exact(4)
        .map(|p| [p[0], p[1], p[2], p[3]])
        .collect();
    colours.sort_unstable();
    colours.dedup();
    colours.len()
}

#[test]
fn demo_writes_a_crowd_png_and_reports_adapter_and_bytes() {
    let dir = scratch_dir("demo");
    let png = dir.join("crowd.png");
    let out = throng(&[
        "demo",
        "--instances",
        "16",
        "--width",
        "320",
        "--height",
        "240",
        "--out",
        png.to_str().unwrap(),
    ]);
    if skipped_for_no_gpu(&out) {
        return;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{stdout}");
    assert!(stdout.contains("adapter: "), "{stdout}");
    assert!(stdout.contains("bytes per instance"), "{stdout}");
    assert!(stdout.contains("resident: "), "{stdout}");
    let (w, h, rgba) = decode(&png);
    assert_eq!((w, h), (320, 240));
    assert_eq!(rgba.len(), 320 * 240 * 4);
    // Sixteen tinted, lit characters over a ground grid and sky: far from uniform.
    let colours = distinct_colours(&rgba);
    assert!(colours > 200, "only {colours} distinct colours");
}

#[test]
fn demo_json_reports_the_frames_it_wrote() {
    let dir = scratch_dir("demo-json");
    let png = dir.join("seq.png");
    let out = throng(&[
        "demo",
        // The skinned tiers: every member is drawn skinned.
        "--no-far-tier",
        "--instances",
        "4",
        "--frames",
        "2",
        "--width",
        "64",
        "--height",
        "48",
        "--json",
        "--out",
        png.to_str().unwrap(),
    ]);
    if skipped_for_no_gpu(&out) {
        return;
    }
    assert!(
        out.status.success(),
        "demo failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert!(report["adapter"]["name"].is_string(), "{report}");
    // The demo frames the whole crowd, so culling against its camera keeps everyone.
    assert_eq!(report["cull"], true);
    assert_eq!(report["visible"], 4, "{report}");
    let per = |k: &str| report[k].as_u64().unwrap() / 4;
    assert!(
        per("skinned_vertices") > 1000 && per("triangles") > 1000,
        "{report}"
    );
    assert_eq!(report["instances"], 4);
    let frames = report["frames"].as_array().expect("frames");
    assert_eq!(frames.len(), 2);
    for (i, f) in frames.iter().enumerate() {
        let path = dir.join(format!("seq_{i:04}.png"));
        assert_eq!(f["path"].as_str(), path.to_str());
        assert_eq!(decode(&path).0, 64);
        assert_eq!(f["report"]["instances"], 4);
        let r = &f["report"];
        assert_eq!(
            r["skinning_dispatches"], 1,
            "one for every level of detail: {f}"
        );
        let present = r["present_dispatches"].as_u64().unwrap();
        assert!((1..=2).contains(&present), "{f}");
        assert_eq!(r["morph_dispatches"], 1, "the character's face: {f}");
        assert_eq!(
            r["dispatches"],
            r["pose_dispatches"].as_u64().unwrap() + 7 + present,
            "present (and a patch), pose dispatches per shape, one bounds, four of the budget, cards and order, one skinning, one morph pass: {f}"
        );
        assert!(f["draws"].as_u64().unwrap() >= 2, "{f}");
    }
    // Ticks at 30 Hz, frames at 60: the first frame shows half-way between the warm-up's two
    // last ticks and uploads every resident instance (its record template, values and
    // placements); the second follows a tick and uploads its values and placements alone.
    let (first, second) = (&frames[0], &frames[1]);
    assert_eq!(
        (first["alpha"].as_f64(), first["control"]["ticks"].as_u64()),
        (Some(0.5), Some(0))
    );
    assert_eq!(
        (
            second["alpha"].as_f64(),
            second["control"]["ticks"].as_u64()
        ),
        (Some(0.0), Some(1))
    );
    let bytes = |f: &serde_json::Value| f["bytes_per_instance"].as_f64().unwrap();
    // A placement is 32 bytes a tick, and the program's values at least one float more.
    assert!(
        bytes(second) >= 36.0 && bytes(second) < bytes(first),
        "{first}\n{second}"
    );
    // The steady state is measured after the frames, once no pipeline is compiling: the pose
    // pass timed then, not the first frames' interpreter.
    let steady = &report["steady_state"];
    assert_eq!(steady["ready"], true, "{steady}");
    assert_eq!(steady["frames"], 5, "{steady}");
    assert!(steady["pose_ms"].as_f64() > Some(0.0), "{steady}");
    assert!(
        !dir.join("seq.png").exists(),
        "a sequence writes numbered files only"
    );
    // Time advances between frames: the crowd moves.
    assert_ne!(
        decode(&dir.join("seq_0000.png")).2,
        decode(&dir.join("seq_0001.png")).2
    );
}

#[test]
fn demo_refuses_bad_sizes_in_one_line() {
    let out = throng(&[
        "demo",
        "--instances",
        "0",
        "--out",
        "/nonexistent/never.png",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.starts_with("error: ") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    assert!(err.contains("--instances"), "{err}");
}

#[test]
fn demo_without_an_adapter_says_how_to_install_one() {
    // No DirectX 12 on this build: the adapter search finds nothing, as on a machine without Vulkan.
    let out = Command::new(env!("CARGO_BIN_EXE_throng"))
        .args([
            "demo",
            "--instances",
            "2",
            "--out",
            "/nonexistent/never.png",
        ])
        .env("WGPU_BACKEND", "dx12")
        .output()
        .expect("the throng binary runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("needs a Vulkan adapter")
            && err.contains("apt-get install -y mesa-vulkan-drivers libvulkan1"),
        "{err}"
    );
}

/// Lines of `stdout` that report one hero's IK: `hero N: head S ..., hand_l S ..., hand_r S ...`.
fn hero_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("hero "))
        .collect()
}

#[test]
fn demo_heroes_report_ik_per_frame_and_join_the_crowd_batch() {
    let dir = scratch_dir("demo-heroes");
    let png = dir.join("heroes.png");
    let out = throng(&[
        "demo",
        "--instances",
        "16",
        "--heroes",
        "2",
        "--frames",
        "2",
        "--width",
        "200",
        "--height",
        "150",
        "--out",
        png.to_str().unwrap(),
    ]);
    if skipped_for_no_gpu(&out) {
        return;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{stdout}");
    assert!(
        stdout.contains("crowd: 16 instances + 2 heroes"),
        "{stdout}"
    );
    // Control ticks heroes and crowd together at 30 Hz: one of the two 60 Hz frames follows
    // a tick.
    assert_eq!(
        stdout
            .matches("control (CPU): 1 tick(s) of 18 instances")
            .count(),
        1,
        "{stdout}"
    );
    assert_eq!(
        stdout
            .matches("heroes (CPU: program, FK, IK, palette): 2 in")
            .count(),
        2,
        "{stdout}"
    );
    let lines = hero_lines(&stdout);
    assert_eq!(
        lines.len(),
        4,
        "two heroes in each of two frames: {lines:?}"
    );
    for (k, line) in lines.iter().enumerate() {
        assert!(
            line.starts_with(&format!("hero {}: head ", k % 2)),
            "{line}"
        );
        assert!(line.contains("spring substeps)"), "no ponytail in {line}");
        let feet: Vec<&str> = line
            .split(", feet ")
            .nth(1)
            .map_or(vec![], |f| f.split(' ').collect());
        assert!(
            feet.len() == 2
                && feet
                    .iter()
                    .all(|f| ["free", "planting", "planted", "releasing"].contains(f)),
            "no contact phases in {line}"
        );
        for solve in ["head", "hand_l", "hand_r"] {
            let status = line
                .split(&format!("{solve} "))
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .unwrap_or("");
            // Targets are chosen within reach and within the aim limits most of the time.
            assert!(
                ["reached", "limited"].contains(&status),
                "{solve} {status:?} in {line}"
            );
        }
    }
    // 2 heroes × 50 palette entries (the generated skin binds all 50 joints) × 48 bytes.
    assert!(stdout.contains("4800 of hero palettes"), "{stdout}");
    let frames: Vec<_> = (0..2)
        .map(|i| decode(&dir.join(format!("heroes_{i:04}.png"))).2)
        .collect();
    assert_ne!(frames[0], frames[1]);
}

#[test]
fn demo_state_tree_crowd_walks_runs_and_moves_between_frames() {
    let dir = scratch_dir("demo-tree");
    let png = dir.join("tree.png");
    let out = throng(&[
        "demo",
        "--instances",
        "16",
        "--frames",
        "3",
        "--width",
        "96",
        "--height",
        "64",
        "--json",
        "--out",
        png.to_str().unwrap(),
    ]);
    if skipped_for_no_gpu(&out) {
        return;
    }
    assert!(
        out.status.success(),
        "demo failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert!(
        report["control"]
            .as_str()
            .unwrap()
            .starts_with("state tree"),
        "{report}"
    );
    assert_eq!(report["heroes"], 0);
    let mut travelled = 0.0;
    for (i, f) in report["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .enumerate()
    {
        let c = &f["control"];
        // Frames at 60 Hz, ticks at 30: every other frame follows a tick.
        assert_eq!(
            (c["instances"].as_u64(), c["ticks"].as_u64()),
            (Some(16), Some(i as u64 % 2)),
            "{c}"
        );
        let count = |k: &str| c[k].as_u64().unwrap();
        assert_eq!(
            count("standing") + count("walking") + count("running"),
            16,
            "{c}"
        );
        assert!(count("walking") + count("running") > 0, "{c}");
        travelled += c["travelled"].as_f64().unwrap();
        assert!(f["heroes"].as_array().unwrap().is_empty());
    }
    // Root motion moves the walkers: at least a few centimetres per member per tick.
    assert!(travelled > 0.2, "{report}");
    let frames: Vec<_> = (0..3)
        .map(|i| decode(&dir.join(format!("tree_{i:04}.png"))).2)
        .collect();
    assert_ne!(frames[0], frames[1]);
    assert_ne!(frames[1], frames[2]);
}

#[test]
fn demo_fixed_programs_still_render_with_heroes() {
    let dir = scratch_dir("demo-fixed");
    let png = dir.join("fixed.png");
    let out = throng(&[
        "demo",
        "--programs",
        "fixed",
        "--instances",
        "4",
        "--heroes",
        "1",
        "--width",
        "96",
        "--height",
        "64",
        "--out",
        png.to_str().unwrap(),
    ]);
    if skipped_for_no_gpu(&out) {
        return;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("control: fixed per-instance programs"),
        "{stdout}"
    );
    assert!(stdout.contains("programs (CPU): 5 set in"), "{stdout}");
    assert_eq!(hero_lines(&stdout).len(), 1, "{stdout}");
    assert_eq!(decode(&png).0, 96);
}

#[test]
fn demo_refuses_a_state_tree_for_a_real_asset() {
    let out = throng(&[
        "demo",
        "--asset",
        "/nonexistent/model.glb",
        "--programs",
        "tree",
        "--out",
        "/nonexistent/never.png",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--programs tree") && err.contains("no state tree"),
        "{err}"
    );
}

#[test]
fn demo_stagger_keeps_far_members_poses_between_their_frames_and_tints_their_tier() {
    let dir = scratch_dir("demo-stagger");
    let png = dir.join("stagger.png");
    let out = throng(&[
        "demo",
        // The skinned tiers: every member is drawn skinned.
        "--no-far-tier",
        "--instances",
        "64",
        "--frames",
        "3",
        "--width",
        "96",
        "--height",
        "64",
        "--stagger",
        "--no-lod",
        "--lod-tint",
        "--json",
        "--out",
        png.to_str().unwrap(),
    ]);
    if skipped_for_no_gpu(&out) {
        return;
    }
    assert!(
        out.status.success(),
        "demo failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let frames = report["frames"].as_array().expect("frames");
    let count = |f: &serde_json::Value, k: &str| f[k].as_u64().unwrap();
    assert_eq!(
        (count(&frames[0], "evaluated"), count(&frames[0], "kept")),
        (64, 0)
    );
    // 96 px high: every member is under 24 px, so every 4 frames (captures excepted).
    for f in &frames[1..] {
        assert_eq!(count(f, "evaluated") + count(f, "kept"), 64, "{f}");
        assert!(count(f, "kept") >= 32, "{f}");
    }
    // --lod-tint: every member is in the red tier (every 4 frames).
    let (_, _, rgba) = decode(&dir.join("stagger_0002.png"));
    let pixels: Vec<[i32; 3]> = rgba
        .chunks_exact(4)
        .map(|p| [p[0], p[1], p[2]].map(i32::from))
        .collect();
    let saturated: Vec<&[i32; 3]> = pixels
        .iter()
        .filter(|p| p.iter().max().unwrap() - p.iter().min().unwrap() > 40)
        .collect();
    let red = saturated
        .iter()
        .filter(|p| p[0] > p[1] + 40 && p[0] > p[2] + 40)
        .count();
    assert!(
        saturated.len() > 20 && red * 10 >= saturated.len() * 8,
        "{red} of {} colourful pixels are red",
        saturated.len()
    );
}

/// Runs `throng demo ARGS --json` and parses its report; `None` when it skipped for want of a
/// GPU.
fn demo_json(args: &[&str]) -> Option<serde_json::Value> {
    let out = throng(&[&["demo"], args, &["--json"]].concat());
    if skipped_for_no_gpu(&out) {
        return None;
    }
    assert!(
        out.status.success(),
        "demo failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("JSON on stdout"))
}

/// Saturated pixels of a PNG, and how many of them `hue` accepts.
fn tinted(path: &Path, hue: impl Fn(&[i32; 3]) -> bool) -> (usize, usize) {
    let (_, _, rgba) = decode(path);
    let saturated: Vec<[i32; 3]> = rgba
        .chunks_exact(4)
        .map(|p| [p[0], p[1], p[2]].map(i32::from))
        .filter(|p| p.iter().max().unwrap() - p.iter().min().unwrap() > 40)
        .collect();
    let matching = saturated.iter().filter(|p| hue(p)).count();
    (saturated.len(), matching)
}

#[test]
fn demo_poses_far_members_at_a_reduced_skeleton_level_and_tints_it() {
    let dir = scratch_dir("demo-lod");
    let png = dir.join("lod.png");
    let Some(report) = demo_json(&[
        // The skinned tiers: every member is drawn skinned.
        "--no-far-tier",
        "--instances",
        "64",
        "--frames",
        "2",
        "--width",
        "80",
        "--height",
        "54",
        "--lod-tint",
        "--out",
        png.to_str().unwrap(),
    ]) else {
        return;
    };
    assert_eq!(report["lod"], true);
    let h = &report["lod_histogram"];
    let level = |k: &str| h[k].as_u64().unwrap();
    assert_eq!(level("lod0") + level("lod1") + level("lod2"), 64, "{h}");
    // 54 px high: every member is a few pixels tall (the coarsest level's error, its shell
    // included, projects under a pixel), so at the coarsest level unless it inertializes a
    // transition.
    assert!(level("lod2") >= 48, "{h}");
    let posed = report["joints_posed"].as_u64().unwrap();
    assert!(posed < 64 * 47 / 2, "joints posed {posed}");
    // --lod-tint: level 2 is orange (red well above green, green well above blue), most of the
    // tinted pixels though the nearer members at finer levels are larger on screen.
    let (saturated, orange) = tinted(&dir.join("lod_0001.png"), |p| {
        p[0] > p[1] + 30 && p[1] > p[2] + 30
    });
    assert!(
        saturated > 20 && orange * 2 > saturated,
        "{orange} of {saturated} orange"
    );
}

/// The mesh LODs' shells (docs/gpu.md, "Skeleton LOD"): 64 members a few pixels tall, nearly
/// all at the coarsest level, cover what the same members cover at full detail (member ids
/// counted after depth, `--coverage`); without its shell the coarsest level covered about 0.7
/// of it.
#[test]
fn demo_members_at_the_coarsest_mesh_lod_cover_what_full_detail_covers() {
    let dir = scratch_dir("demo-shell");
    let run = |extra: &[&str], name: &str| {
        let coverage = dir.join(name);
        let mut args = vec![
            "--no-far-tier",
            "--instances",
            "64",
            "--frames",
            "3",
            "--width",
            "80",
            "--height",
            "54",
            "--coverage",
            coverage.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let report = demo_json(&args)?;
        let counts: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&coverage).unwrap()).unwrap();
        let total: u64 = (counts["frames"].as_array().unwrap().iter())
            .flat_map(|f| f.as_array().unwrap())
            .map(|c| c.as_u64().unwrap())
            .sum();
        Some((report, total))
    };
    let Some((_, full)) = run(&["--no-lod"], "full.json") else {
        return;
    };
    let (report, reduced) = run(&[], "lod.json").unwrap();
    let coarsest = report["lod_histogram"]["lod2"].as_u64().unwrap();
    assert!(coarsest >= 48, "{}", report["lod_histogram"]);
    let ratio = reduced as f64 / full as f64;
    assert!(
        (0.9..=1.1).contains(&ratio),
        "{reduced} pixels at reduced levels against {full} at full detail ({ratio:.3})"
    );
}

#[test]
fn demo_pose_budget_serves_within_budget_and_nobody_waits_past_max_stale() {
    let dir = scratch_dir("demo-budget");
    let png = dir.join("budget.png");
    let Some(report) = demo_json(&[
        // The skinned tiers: every member is drawn skinned.
        "--no-far-tier",
        "--instances",
        "64",
        "--frames",
        "5",
        "--width",
        "96",
        "--height",
        "64",
        "--pose-budget",
        "200",
        "--max-stale",
        "3",
        "--out",
        png.to_str().unwrap(),
    ]) else {
        return;
    };
    let frames = report["frames"].as_array().expect("frames");
    let b = |f: &serde_json::Value, k: &str| f["pose_budget"][k].as_u64().unwrap();
    assert_eq!(
        b(&frames[0], "served"),
        64,
        "everyone runs on the first frame"
    );
    let mut starving = 0;
    for f in &frames[1..] {
        assert_eq!(b(f, "served") + b(f, "kept"), 64, "{f}");
        assert_eq!(b(f, "served"), f["evaluated"].as_u64().unwrap(), "{f}");
        assert!(b(f, "max_wait") < 3, "{f}");
        assert!(b(f, "kept") > 0, "{f}");
        starving += b(f, "starving");
        if b(f, "must") + b(f, "starving") == 0 {
            assert!(b(f, "spent") <= 200, "{f}");
        }
    }
    assert!(
        starving > 0,
        "the service rate served members the budget did not"
    );
}

#[test]
fn demo_motion_vectors_are_still_on_the_first_frame_and_show_the_crowd_moving_after() {
    let dir = scratch_dir("demo-motion");
    let (png, motion) = (dir.join("crowd.png"), dir.join("motion.png"));
    let out = throng(&[
        "demo",
        "--instances",
        "36",
        "--frames",
        "3",
        "--width",
        "160",
        "--height",
        "90",
        "--out",
        png.to_str().unwrap(),
        "--motion-vectors",
        motion.to_str().unwrap(),
    ]);
    if skipped_for_no_gpu(&out) {
        return;
    }
    assert!(
        out.status.success(),
        "demo failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let moving = |frame: u32| {
        let (w, h, rgba) = decode(&dir.join(format!("motion_{frame:04}.png")));
        assert_eq!((w, h), (160, 90));
        rgba.chunks_exact(4)
            .filter(|p| p[0].abs_diff(128) > 2 || p[1].abs_diff(128) > 2)
            .count()
    };
    assert_eq!(moving(0), 0, "the first frame has no motion");
    assert!(
        moving(2) > 20,
        "the crowd walks: {} moving pixels",
        moving(2)
    );
}

#[test]
fn demo_gif_holds_every_frame_looping_and_the_crowd_moves_in_it() {
    let dir = scratch_dir("demo-gif");
    let gif_path = dir.join("crowd.gif");
    let Some(report) = demo_json(&[
        "--instances",
        "8",
        "--frames",
        "3",
        "--width",
        "64",
        "--height",
        "48",
        "--out",
        dir.join("f.png").to_str().unwrap(),
        "--gif",
        gif_path.to_str().unwrap(),
    ]) else {
        return;
    };
    assert_eq!(report["gif"].as_str(), gif_path.to_str());
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let file = std::fs::File::open(&gif_path).expect("the GIF");
    let mut decoder = options.read_info(file).expect("a GIF header");
    assert_eq!((decoder.width(), decoder.height()), (64, 48));
    // Each frame drawn over the last (unchanged pixels are transparent after the first).
    let mut frames = Vec::new();
    let mut canvas = vec![0u8; 64 * 48 * 4];
    while let Some(frame) = decoder.read_next_frame().expect("GIF frame data") {
        // Frames render at 60 Hz; a GIF counts hundredths, so 2/100 s is the nearest delay.
        assert_eq!((frame.width, frame.height, frame.delay), (64, 48, 2));
        assert_eq!(frame.dispose, gif::DisposalMethod::Keep);
        for (c, p) in canvas.chunks_exact_mut(4).zip(frame.buffer.chunks_exact(4)) {
            if p[3] != 0 {
                c.copy_from_slice(p);
            }
        }
        frames.push(canvas.clone());
    }
    assert_eq!(frames.len(), 3, "one GIF frame per rendered frame");
    assert_eq!(decoder.repeat(), gif::Repeat::Infinite);
    for f in &frames {
        let mut colours: Vec<&[u8]> = f.chunks_exact(4).collect();
        colours.sort_unstable();
        colours.dedup();
        assert!(colours.len() > 16, "a frame of {} colours", colours.len());
    }
    let moved = frames[0]
        .chunks_exact(4)
        .zip(frames[2].chunks_exact(4))
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        moved > 20,
        "{moved} pixels changed between the first and last frame"
    );
    // The PNG frames are still written, and the GIF's first frame is the first PNG's, quantised.
    let (_, _, png) = decode(&dir.join("f_0000.png"));
    let close = png
        .chunks_exact(4)
        .zip(frames[0].chunks_exact(4))
        .filter(|(p, g)| p.iter().zip(g.iter()).all(|(a, b)| a.abs_diff(*b) <= 24))
        .count();
    assert!(
        close * 10 >= 9 * 64 * 48,
        "{close} of {} pixels near the PNG",
        64 * 48
    );
}

#[test]
fn demo_draws_members_under_sixteen_pixels_as_impostors_and_tints_them_blue() {
    let dir = scratch_dir("demo-far");
    let png = dir.join("far.png");
    let args = |far: bool| {
        let mut a = vec![
            "--instances",
            "400",
            "--frames",
            "2",
            "--width",
            "320",
            "--height",
            "180",
            "--lod-tint",
            "--out",
            png.to_str().unwrap(),
        ];
        if !far {
            a.push("--no-far-tier");
        }
        a
    };
    let Some(report) = demo_json(&args(true)) else {
        return;
    };
    let h = &report["lod_histogram"];
    let count = |k: &str| h[k].as_u64().unwrap();
    let impostors = count("impostor");
    assert_eq!(
        count("lod0") + count("lod1") + count("lod2") + impostors,
        400,
        "{h}"
    );
    // 180 px high: the far rows are under 16 px, the near ones over.
    assert!(impostors > 40 && impostors < 400, "{h}");
    assert_eq!(report["skinned"].as_u64().unwrap() + impostors, 400);
    assert!(
        report["far_tier"]["cells"].as_u64().unwrap() > 0,
        "{report}"
    );
    // Impostors are tinted blue (blue well above red and green).
    let blue = |p: &[i32; 3]| p[2] > p[0] + 40 && p[2] > p[1] + 40;
    let (_, tinted_blue) = tinted(&dir.join("far_0001.png"), blue);
    assert!(tinted_blue > 50, "{tinted_blue} blue pixels");
    let Some(skinned) = demo_json(&args(false)) else {
        return;
    };
    assert_eq!(skinned["lod_histogram"]["impostor"], 0);
    assert!(skinned["far_tier"].is_null());
    let (_, none_blue) = tinted(&dir.join("far_0001.png"), blue);
    assert_eq!(none_blue, 0);
}

#[test]
fn demo_draws_every_visible_member_past_the_skinned_budget_as_a_card() {
    let dir = scratch_dir("demo-budget");
    let png = dir.join("budget.png");
    for far in [true, false] {
        let mut args = vec![
            "--instances",
            "400",
            "--budget",
            "16",
            "--width",
            "320",
            "--height",
            "180",
            "--out",
            png.to_str().unwrap(),
        ];
        if !far {
            args.push("--no-far-tier");
        }
        let Some(report) = demo_json(&args) else {
            return;
        };
        let n = |k: &str| report[k].as_u64().unwrap();
        assert_eq!(n("skinned"), 16, "{report}");
        assert!(n("visible") > 16, "the budget must bind: {report}");
        assert_eq!(n("carded"), n("visible") - 16, "{report}");
        assert_eq!(n("over_budget"), n("carded"), "{report}");
        let cards_alone = report["lod_histogram"]["impostor"].as_u64().unwrap();
        assert_eq!(n("members_in_view"), n("visible") + cards_alone, "{report}");
        assert_eq!(n("members_drawn"), n("members_in_view"), "{report}");
        assert_eq!(
            n("drawn"),
            n("visible"),
            "no visible member vanishes: {report}"
        );
        let frame = &report["frames"][0];
        assert_eq!(frame["drawn"], frame["visible"], "{frame}");
        // The overflow needs the impostor whether or not the far tier by height is on.
        assert!(
            report["far_tier"]["cells"].as_u64().unwrap() > 0,
            "{report}"
        );
    }
}

#[test]
fn a_crowd_too_large_for_one_runtime_is_refused_at_once_with_the_count_that_fits() {
    // 72 GB of instance records: more than any adapter binds at once.
    let out = throng(&["demo", "--instances", "100000000", "--frames", "1"]);
    if skipped_for_no_gpu(&out) {
        return;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("100000000 instances do not fit one runtime"),
        "{stderr}"
    );
    assert!(
        stderr.contains("lower the instance count (--instances) to"),
        "{stderr}"
    );
}

#[test]
fn demo_props_put_a_sword_in_every_members_hand_with_one_dispatch_and_one_draw_more() {
    let dir = scratch_dir("demo-props");
    let run = |props: bool, name: &str| {
        let png = dir.join(name);
        let mut args = vec![
            "demo",
            "--no-far-tier",
            "--instances",
            "4",
            "--frames",
            "1",
            "--width",
            "96",
            "--height",
            "64",
            "--json",
            "--out",
            png.to_str().unwrap(),
        ];
        if props {
            args.push("--props");
        }
        let out = throng(&args);
        (out, png)
    };
    let (plain, plain_png) = run(false, "plain.png");
    if skipped_for_no_gpu(&plain) {
        return;
    }
    let (swords, swords_png) = run(true, "swords.png");
    for out in [&plain, &swords] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "demo failed: {err}");
    }
    let json = |out: &std::process::Output| -> serde_json::Value {
        serde_json::from_slice(&out.stdout).expect("JSON on stdout")
    };
    let (plain, swords) = (json(&plain), json(&swords));
    assert_eq!(
        (plain["props"].clone(), swords["props"].clone()),
        (false.into(), true.into())
    );
    let (p, s) = (&plain["frames"][0], &swords["frames"][0]);
    assert_eq!(p["report"]["attachment_dispatches"], 0, "{p}");
    assert_eq!(s["report"]["attachment_dispatches"], 1, "{s}");
    assert_eq!(
        s["draws"].as_u64().unwrap(),
        p["draws"].as_u64().unwrap() + 1,
        "one draw for every member's sword"
    );
    assert_ne!(
        decode(&plain_png).2,
        decode(&swords_png).2,
        "the swords show"
    );
    let refused = throng(&[
        "demo",
        "--programs",
        "fixed",
        "--props",
        "--out",
        "/nonexistent/x.png",
    ]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && err.contains("--props"),
        "{err}"
    );
}

#[test]
fn demo_mocap_plays_the_retargeted_cmu_clips_across_the_crowd() {
    let Some(mocap) = throng_fixtures::shared_dir("mocap", "the retargeted mocap demo") else {
        return;
    };
    let dir = scratch_dir("demo-mocap");
    let png = dir.join("mocap.png");
    let out = throng(&[
        "demo",
        "--mocap",
        mocap.to_str().unwrap(),
        // The far tier would bake impostors of all six long clips first (half a minute).
        "--no-far-tier",
        "--instances",
        "6",
        "--frames",
        "2",
        "--width",
        "96",
        "--height",
        "64",
        "--json",
        "--out",
        png.to_str().unwrap(),
    ]);
    if skipped_for_no_gpu(&out) {
        return;
    }
    assert!(
        out.status.success(),
        "demo --mocap failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(report["visible"], 6, "{report}");
    assert_ne!(
        decode(&dir.join("mocap_0000.png")).2,
        decode(&dir.join("mocap_0001.png")).2,
        "the mocap does not move"
    );
    let bad = throng(&["demo", "--mocap", dir.to_str().unwrap()]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("holds no .glb clips"), "{err}");
}

/// `--locomotion paths` (docs/motion-matching.md): motion-matched members stand, start and walk
/// their curves, staying near them; the flag refuses what it cannot drive.
#[test]
fn demo_locomotion_paths_walks_members_along_their_curves() {
    let Some(bvh) = throng_fixtures::shared_dir("mocap/bvh", "the demo's motion-matched paths")
    else {
        return;
    };
    let dir = scratch_dir("demo-paths");
    let png = dir.join("paths.png");
    let Some(report) = demo_json(&[
        "--locomotion",
        "paths",
        "--bvh",
        bvh.to_str().unwrap(),
        "--instances",
        "25",
        "--frames",
        "150",
        "--width",
        "48",
        "--height",
        "32",
        "--out",
        png.to_str().unwrap(),
    ]) else {
        return;
    };
    assert!(
        report["control"]
            .as_str()
            .unwrap()
            .starts_with("motion matching"),
        "{report}"
    );
    let frames = report["frames"].as_array().expect("frames");
    let (mut travelled, mut means, mut worst, mut moving) = (0.0, Vec::new(), 0.0f64, 0);
    for f in frames {
        let c = &f["control"];
        travelled += c["travelled"].as_f64().unwrap();
        moving = moving.max(c["walking"].as_u64().unwrap() + c["running"].as_u64().unwrap());
        if let Some(o) = c.get("off_course_m") {
            means.push(o["mean"].as_f64().unwrap());
            worst = worst.max(o["max"].as_f64().unwrap());
        }
    }
    // 75 ticks: the crowd stands, then speeds up along its curves.
    assert_eq!(means.len(), 75, "{report}");
    assert_eq!(frames[0]["control"]["walking"], 0, "{report}");
    assert!(moving >= 20, "{moving} members moving at most");
    assert!(travelled > 25.0, "{travelled} m travelled");
    let mean = means.iter().sum::<f64>() / means.len() as f64;
    assert!(
        mean < 0.25 && worst < 1.0,
        "off course: mean {mean} m, max {worst} m"
    );

    let refused = throng(&["demo", "--locomotion", "paths", "--props"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--locomotion paths"),
        "{}",
        stderr(&refused)
    );
}

/// `--dolly`: the camera moves in from far over the frames, so the members start as the far
/// tier's cards and end as skinned meshes, and the frames differ. Cards write motion vectors:
/// while the camera moves toward a crowd of cards alone their pixels move on the motion image
/// (nothing else is drawn, so without the cards' motion pass it would be still).
#[test]
fn demo_dolly_brings_members_from_cards_to_meshes_and_cards_write_motion_vectors() {
    let dir = scratch_dir("demo-dolly");
    let (png, motion) = (dir.join("dolly.png"), dir.join("motion.png"));
    let Some(report) = demo_json(&[
        "--instances",
        "16",
        "--frames",
        "24",
        "--width",
        "160",
        "--height",
        "90",
        "--dolly",
        "--out",
        png.to_str().unwrap(),
        "--motion-vectors",
        motion.to_str().unwrap(),
    ]) else {
        return;
    };
    let frame = &report["frames"][2];
    assert_eq!(frame["lod_histogram"]["impostor"], 16, "{frame}");
    assert_eq!(frame["lod_histogram"]["cross_fading"], 0, "{frame}");
    let (_, _, rgba) = decode(&dir.join("motion_0002.png"));
    let moving = (rgba.chunks_exact(4))
        .filter(|p| p[0].abs_diff(128) > 2 || p[1].abs_diff(128) > 2)
        .count();
    assert!(moving > 20, "{moving} moving pixels on cards alone");
    let frames = report["frames"].as_array().expect("frames");
    let cards = |f: &serde_json::Value| f["lod_histogram"]["impostor"].as_u64().unwrap();
    assert_eq!(cards(&frames[0]), 16, "{}", frames[0]);
    assert_eq!(frames[0]["drawn"], 0, "{}", frames[0]);
    let last = &frames[23];
    assert_eq!(cards(last), 0, "{last}");
    assert!(last["drawn"].as_u64().unwrap() > 0, "{last}");
    let first = decode(&dir.join("dolly_0000.png")).2;
    assert_ne!(first, decode(&dir.join("dolly_0023.png")).2);
}

/// `--lod-tint` colours the cull pass's cards (members past the skinned budget) blue like the far
/// tier's: with 34 of 36 members carded, the tinted image holds several times the blue pixels of
/// the untinted one (the skinned two are tinted green or yellow by level).
#[test]
fn demo_lod_tint_colours_the_cards_past_the_budget_blue() {
    let dir = scratch_dir("demo-tint");
    let mut blue = Vec::new();
    for tint in [false, true] {
        let png = dir.join(format!("tint_{tint}.png"));
        let mut args = vec![
            "--instances",
            "36",
            "--budget",
            "2",
            "--no-far-tier",
            "--width",
            "160",
            "--height",
            "90",
            "--out",
            png.to_str().unwrap(),
        ];
        if tint {
            args.push("--lod-tint");
        }
        let Some(report) = demo_json(&args) else {
            return;
        };
        assert_eq!(report["frames"][0]["carded"], 34, "{report}");
        let (_, _, rgba) = decode(&png);
        let bluish = |p: &[u8]| i32::from(p[2]) > i32::from(p[0].max(p[1])) + 60;
        blue.push(rgba.chunks_exact(4).filter(|p| bluish(p)).count());
    }
    assert!(
        blue[1] > 300 && blue[1] > 4 * blue[0],
        "blue pixels {blue:?}"
    );
}

/// The pop measure on one member (no occlusion): dollied in from a card to a mesh, crossing the
/// far tier's cross-fade band, its coverage changes from one frame to the next by at most twice
/// what its motion changes it at full detail (docs/gpu.md, "Watching the boundary"). A card
/// whose mip levels over- or under-cover (as doubled alphas did: twice the mesh's pixels far
/// off) jumps at the switch and at each change of level.
#[test]
fn demo_dolly_keeps_a_members_coverage_within_twice_its_motion_across_the_far_tier() {
    let dir = scratch_dir("demo-pops");
    let full = dir.join("full.json");
    let run = |extra: &[&str], name: &str| {
        let png = dir.join(name);
        let mut args = vec![
            "--instances",
            "1",
            "--frames",
            "120",
            "--width",
            "160",
            "--height",
            "90",
            "--dolly",
            "--no-lod",
            "--out",
            png.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        demo_json(&args)
    };
    let Some(_) = run(
        &["--no-far-tier", "--coverage", full.to_str().unwrap()],
        "full.png",
    ) else {
        return;
    };
    let report = run(&["--pops-against", full.to_str().unwrap()], "tiered.png").unwrap();
    let frames = report["frames"].as_array().expect("frames");
    let cards = |f: &serde_json::Value| f["lod_histogram"]["impostor"].as_u64().unwrap();
    assert_eq!(cards(&frames[0]), 1, "the member starts as a card");
    assert_eq!(cards(&frames[119]), 0, "and ends as a mesh");
    let pops = &report["pops"];
    assert!(pops["compared"].as_u64().unwrap() >= 100, "{pops}");
    assert!(pops["worst_ratio"].as_f64().unwrap() <= 2.0, "{pops}");
}

/// `--close-up`: the camera follows one member's face, chosen among those whose program
/// samples a clip that moves it (`idle` blinks, `wave` opens the mouth), near enough that the
/// member covers a large part of every frame (in the crowd's framing no member covers 5 %).
/// With `--dolly` it is refused.
#[test]
fn demo_close_up_follows_a_face_moving_member_that_fills_the_frame() {
    let dir = scratch_dir("demo-close-up");
    let coverage = dir.join("coverage.json");
    let args = [
        "--instances",
        "24",
        "--frames",
        "6",
        "--width",
        "96",
        "--height",
        "72",
        "--coverage",
        coverage.to_str().unwrap(),
    ];
    let largest = |report: &serde_json::Value| {
        let counts: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&coverage).unwrap()).unwrap();
        let frames = counts["frames"].as_array().unwrap().clone();
        assert_eq!(frames.len(), 6, "{report}");
        (frames.iter())
            .map(|f| {
                (f.as_array().unwrap().iter())
                    .map(|c| c.as_u64().unwrap())
                    .max()
                    .unwrap()
            })
            .min()
            .unwrap() as f64
            / (96.0 * 72.0)
    };
    let Some(framed) = demo_json(&args) else {
        return;
    };
    assert!(framed["close_up"].is_null(), "{}", framed["close_up"]);
    let crowd = largest(&framed);
    let close = demo_json(&[&args[..], &["--close-up"]].concat()).unwrap();
    let clip = close["close_up"]["clip"].as_str().unwrap_or_default();
    assert!(["idle", "wave"].contains(&clip), "{}", close["close_up"]);
    let near = largest(&close);
    assert!(
        crowd < 0.05 && near > 0.25,
        "largest member: framed {crowd}, close-up {near}"
    );
    let out = support::throng(&["demo", "--close-up", "--dolly", "--frames", "1"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--dolly"), "{}", stderr(&out));
}
