//! The benchmark tool's machinery at tiny sizes: its JSON carries the documented fields, GPU
//! dispatches and chunks do not grow with the instance count, bytes per instance follow the
//! program sizes, and the rayon passes compute what the single-threaded ones do. Nothing here
//! asserts on a timing.

use throng_bench::{Codec, CpuCrowd, Options, Pair, Report, Subject};
use throng_fixtures::BenchShape as Shape;
use throng_gpu::GpuContext;

fn gpu() -> Option<GpuContext> {
    GpuContext::for_tests()
}

/// A whole frame's upload per instance: the record (slot, 2 words per sample, blend and layer
/// weights, 3 per `Inertialize`, rounded up to whole 16-byte vec4s) and a 48-byte placement.
/// `None` for the storm, whose programs change shape from frame to frame.
fn expected_bytes(shape: Shape) -> Option<f64> {
    let words: u32 = match shape {
        Shape::OneClip => 1 + 2,
        Shape::Blend2 | Shape::Crossfade => 1 + 4 + 2,
        Shape::Layered => 1 + 8 + 2 + 4,
        Shape::Inertialize => 1 + 2 + 3,
        Shape::Storm => return None,
    };
    // The record (its slot and kind words first), the kind word, the placement and the clock.
    Some((16 * (words + 1).div_ceil(4) + 4 + 48 + 8) as f64)
}

#[test]
fn tiny_run_reports_every_field_and_flat_dispatch_counts() {
    let ctx = gpu();
    let subject = Subject::character().unwrap();
    let options = Options {
        instances: vec![4, 9],
        frames: 1,
        budget_ms: 0.0,
        ..Options::default()
    };
    let mut seen = 0;
    let report = throng_bench::run(
        std::slice::from_ref(&subject),
        ctx.as_ref(),
        &options,
        |_| seen += 1,
    )
    .unwrap();
    let shapes_n = Shape::ALL.len();
    assert_eq!(seen, 2 * shapes_n, "on_row sees every row");
    let json = serde_json::to_value(&report).unwrap();
    println!("{}", report.table());
    // The plot draws a line per path and shape, and the GPU's passes.
    let svg = throng_bench::plot::svg(&report).unwrap();
    let layered = format!("rayon, {}", Shape::Layered.label());
    for label in ["CPU, one clip", &layered, "GPU, one clip"] {
        assert!(svg.contains(label), "the plot lacks {label}");
    }
    for colour in ["#FF0000", "#0000FF", "#00FF00"] {
        assert!(
            svg.contains(&format!("stroke=\"{colour}\"")),
            "no {colour} line"
        );
    }
    // A pass is drawn exactly when some one-clip row timed it above 0 (FK and palette are
    // clamped differences of two frames, so a tiny run may time them at 0).
    let one_clip = json["rows"].as_array().unwrap().iter();
    let one_clip: Vec<_> = one_clip.filter(|r| r["shape"] == "one_clip").collect();
    for (label, field) in [
        ("\nprogram\n", "program_ms"),
        ("\nFK\n", "fk_ms"),
        ("\npalette\n", "palette_ms"),
        ("\nbounds\n", "bounds_ms"),
        ("\nskinning\n", "skinning_ms"),
    ] {
        let timed = (one_clip.iter())
            .filter_map(|r| r["gpu"]["stages"][field].as_f64())
            .any(|ms| ms > 0.0);
        assert_eq!(
            svg.contains(label),
            timed,
            "{label} drawn iff timed above 0"
        );
    }

    assert_eq!(
        json["rayon_threads"].as_u64(),
        Some(rayon::current_num_threads() as u64)
    );
    assert_eq!(json["frames_max"].as_u64(), Some(1));
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * shapes_n);
    let shapes: Vec<&str> = rows.iter().map(|r| r["shape"].as_str().unwrap()).collect();
    let names = [
        "one_clip",
        "blend2",
        "layered",
        "crossfade",
        "inertialize",
        "storm",
    ];
    assert_eq!(shapes, [names, names].concat());
    for r in rows {
        assert_eq!(r["subject"], "character");
        assert_eq!(r["joints"].as_u64(), Some(subject.joints() as u64));
        assert_eq!(r["vertices"].as_u64(), Some(subject.vertices() as u64));
        for path in ["cpu", "cpu_rayon"] {
            for field in ["pose_ms", "skin_ms", "frame_ms"] {
                let ms = r[path][field]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{path}.{field} in {r}"));
                assert!(ms.is_finite() && ms >= 0.0, "{path}.{field} = {ms}");
            }
            assert_eq!(
                r[path]["frames"].as_u64(),
                Some(1),
                "budget 0 stops after one timed frame"
            );
        }
        let n = r["instances"].as_f64().unwrap();
        let joints = n * subject.joints() as f64;
        let ns = r["derived"]["pose_ns_per_joint"]["cpu"].as_f64().unwrap();
        let ms = r["cpu"]["pose_ms"].as_f64().unwrap();
        assert!(
            (ns - ms * 1e6 / joints).abs() <= 1e-9 * ns.abs().max(1.0),
            "ns per joint {ns} vs {ms} ms"
        );
        assert!(r["derived"]["rayon_over_cpu"]["pose"].is_number());
    }

    let Some(ctx) = ctx else { return };
    assert_eq!(
        json["adapter"]["name"].as_str(),
        Some(ctx.adapter.name.as_str())
    );
    for ((small, large), &shape) in rows[..shapes_n]
        .iter()
        .zip(&rows[shapes_n..])
        .zip(&Shape::ALL)
    {
        let (g4, g9) = (&small["gpu"], &large["gpu"]);
        assert!(g4["pose_ms"].as_f64().unwrap() > 0.0);
        let Some(bytes) = expected_bytes(shape) else {
            // The storm: a transition shape and a decay shape in one frame.
            assert!(g9["pose_dispatches"].as_u64().unwrap() <= 2, "{g9}");
            continue;
        };
        assert_eq!(
            g4["dispatches"], g9["dispatches"],
            "dispatches grew with instances"
        );
        assert_eq!(g4["chunks"].as_u64(), Some(1));
        assert_eq!(g9["chunks"].as_u64(), Some(1));
        assert_eq!(
            g4["dispatches"].as_u64(),
            Some(8),
            "one pose dispatch (one shape), five of the cull pass, one skinning, one morph pass (the character's face)"
        );
        assert_eq!(g4["pose_dispatches"].as_u64(), Some(1), "one pose dispatch");
        assert_eq!(g4["bytes_per_instance"].as_f64(), Some(bytes));
        // Shapes of fewer instances than a pipeline is worth keep the interpreter.
        let min = throng_gpu::pipelines::MIN_INSTANCES as u64;
        for g in [g4, g9] {
            let n = if std::ptr::eq(g, g4) { 4 } else { 9 };
            assert_eq!(
                g["specialised"].as_bool(),
                Some(n >= min),
                "{n} instances: {g}"
            );
        }
        let poses = g4["poses"].as_array().unwrap();
        let mappings: Vec<&str> = poses
            .iter()
            .map(|p| p["mapping"].as_str().unwrap())
            .collect();
        assert_eq!(mappings.len(), 2, "both mappings side by side");
        assert_ne!(mappings[0], mappings[1]);
        assert_eq!(g4["mapping"].as_str(), Some(mappings[0]));
        for p in poses {
            let (host, wall) = (p["host_ms"].as_f64(), p["pose_ms"].as_f64());
            assert!(
                host.zip(wall).is_some_and(|(h, w)| h > 0.0 && h < w),
                "the host's part is some of the wall time: {p}"
            );
        }
        assert_eq!(g9["bytes_per_instance"].as_f64(), Some(bytes));
        assert!(g4["resident_bytes"].as_u64().unwrap() > 0);
        assert!(g4["skinning_skipped"].is_null());
        for g in [g4, g9] {
            assert!(g["pose_ms"].as_f64().unwrap() > 0.0);
            assert!(g["frame_ms"].as_f64().unwrap() > 0.0);
            let timing = g["stage_timing"].as_str().unwrap();
            assert_eq!(timing == "timestamps", g["stages"].is_object(), "{g}");
            if g["stages"].is_object() {
                for field in [
                    "program_ms",
                    "fk_ms",
                    "palette_ms",
                    "skinning_ms",
                    "pose_ms",
                ] {
                    assert!(
                        g["stages"][field].as_f64().unwrap() >= 0.0,
                        "{field} in {g}"
                    );
                }
                assert!(g["fk_ns_per_joint"].is_number());
            }
        }
    }
}

#[test]
fn rayon_passes_match_the_single_threaded_ones() {
    let subject = Subject::character().unwrap();
    for shape in Shape::ALL {
        // 7 instances over 3 workers: blocks of 3, 2 and 2.
        let set = subject.programs(shape, 7);
        let mut single = CpuCrowd::new(&subject, 7, 1, shape.history_slots(7));
        let mut parallel = CpuCrowd::new(&subject, 7, 3, shape.history_slots(7));
        single.frame(&subject, &set.programs, true, false).unwrap();
        parallel.frame(&subject, &set.programs, true, true).unwrap();
        for i in 0..7 {
            assert_eq!(
                single.components(i),
                parallel.components(i),
                "{shape:?}, instance {i}"
            );
            assert_eq!(single.components(i).len(), subject.joints());
        }
        // Instances differ from each other (their programs do), so a copy of one would show.
        assert_ne!(single.components(0), single.components(1));
    }
}

#[test]
fn a_skinned_limit_skips_gpu_skinning_but_keeps_the_pose() {
    let Some(ctx) = gpu() else { return };
    let subject = Subject::character().unwrap();
    let options = Options {
        instances: vec![2],
        shapes: vec![Shape::OneClip],
        frames: 1,
        budget_ms: 0.0,
        skinned_bytes_limit: 1,
        mapping: None,
    };
    let report =
        throng_bench::run(std::slice::from_ref(&subject), Some(&ctx), &options, |_| {}).unwrap();
    let g = report.rows[0].gpu.as_ref().unwrap();
    assert!(g.frame_ms.is_none());
    assert!(g.skinning_skipped.as_deref().unwrap().contains("exceed"));
    assert_eq!(g.dispatches, 1, "pose-only frame: one pose dispatch");
    assert!(g.pose_ms > 0.0);
}

#[test]
fn codec_rows_carry_both_encodings_and_the_compressed_clips_are_smaller() {
    let ctx = gpu();
    let pair = Pair::character().unwrap();
    assert!(pair
        .reference
        .package
        .clips
        .iter()
        .all(|c| c.compressed.is_none()));
    assert!(pair
        .compressed
        .package
        .clips
        .iter()
        .any(|c| c.compressed.is_some()));
    assert_eq!(
        pair.reference.clips, pair.compressed.clips,
        "same clips, same order"
    );
    let options = Options {
        instances: vec![3],
        shapes: vec![Shape::OneClip, Shape::Layered],
        frames: 1,
        budget_ms: 0.0,
        ..Options::default()
    };
    let mut seen = 0;
    let rows =
        throng_bench::codec::run(std::slice::from_ref(&pair), ctx.as_ref(), &options, |_| {
            seen += 1
        })
        .unwrap();
    assert_eq!(seen, 2);
    let report = Report {
        adapter: None,
        rayon_threads: 1,
        frames_max: 1,
        budget_ms: 0.0,
        rows: Vec::new(),
        codec: Codec {
            rows,
            skipped: vec!["x.throng: holds compressed clips".into()],
        },
        crowd: Vec::new(),
        far_cost: Vec::new(),
        lod: Vec::new(),
        control: Vec::new(),
        game: Vec::new(),
        morph: Vec::new(),
    };
    let table = report.table();
    println!("{table}");
    assert!(table.contains("codec: reference vs compressed"));
    assert!(table.contains("not compared: x.throng"));
    let json = serde_json::to_value(&report).unwrap();
    let rows = json["codec"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert_eq!(r["subject"], "character");
        assert_eq!(r["instances"].as_u64(), Some(3));
        let (a, b) = (&r["reference"], &r["compressed"]);
        for e in [a, b] {
            let ms = e["cpu_pose_ms"].as_f64().unwrap();
            assert!(ms.is_finite() && ms > 0.0, "{e}");
            let ns = e["cpu_ns_per_joint"].as_f64().unwrap();
            let joints = 3.0 * pair.reference.joints() as f64;
            assert!((ns - ms * 1e6 / joints).abs() <= 1e-9 * ns.max(1.0), "{e}");
        }
        // Clip bytes by hand: 16 B of references per joint, 16 B per reference sample or
        // constant (either encoding), 32 B of ranges per animated compressed sub-track, 4 B per
        // codec word and one word of padding per compressed clip.
        let bytes = |p: &throng_cpu_ref::Package| -> u64 {
            use throng_cpu_ref::SubTrackKind::{Animated, Constant};
            p.clips
                .iter()
                .map(|c| {
                    let vec4s: u64 = c
                        .sub_tracks
                        .iter()
                        .map(|st| match (st.kind, &c.compressed) {
                            (Constant, _) => 1,
                            (Animated, None) => u64::from(c.sample_count),
                            (Animated, Some(_)) => 2,
                            _ => 0,
                        })
                        .sum();
                    let words = c
                        .compressed
                        .as_ref()
                        .map_or(0, |z| z.words.len() as u64 + 1);
                    16 * (c.sub_tracks.len() as u64 / 3) + 16 * vec4s + 4 * words
                })
                .sum()
        };
        let (ra, rb) = (
            a["clip_bytes"].as_u64().unwrap(),
            b["clip_bytes"].as_u64().unwrap(),
        );
        assert_eq!(ra, bytes(&pair.reference.package));
        assert_eq!(rb, bytes(&pair.compressed.package));
        assert!(rb < ra, "compressed {rb} B vs reference {ra} B");
        let ratio = r["compressed_over_reference"]["clip_bytes"]
            .as_f64()
            .unwrap();
        assert!((ratio - rb as f64 / ra as f64).abs() < 1e-12);
        assert!(r["compressed_over_reference"]["cpu_pose"].as_f64().unwrap() > 0.0);
        if ctx.is_some() {
            let (ga, gb) = (
                a["resident_bytes"].as_u64().unwrap(),
                b["resident_bytes"].as_u64().unwrap(),
            );
            assert!(
                gb < ga,
                "GPU resident: compressed {gb} B vs reference {ga} B"
            );
            assert!(
                a["gpu_pose_ms"].as_f64().unwrap() > 0.0
                    && b["gpu_pose_ms"].as_f64().unwrap() > 0.0
            );
            assert!(a["gpu_fk_ms"].is_null(), "FK is fused into the pose pass");
            // The compressed encoding is also measured with the decode cache off.
            assert!(b["gpu_direct_ms"].as_f64().unwrap() > 0.0 && a["gpu_direct_ms"].is_null());
            let direct = r["compressed_over_reference"]["gpu_direct"].as_f64();
            assert!(direct.unwrap() > 0.0);
            assert!(b["decode_cache_bytes"].as_u64().is_some());
        } else {
            assert!(a["resident_bytes"].is_null() && b["gpu_pose_ms"].is_null());
        }
    }
}

#[test]
fn crowd_rows_count_what_culling_and_the_budget_kept() {
    let Some(ctx) = gpu() else { return };
    let subject = Subject::character().unwrap();
    let options = Options {
        frames: 1,
        budget_ms: 0.0,
        ..Options::default()
    };
    let mut seen = 0;
    let rows = throng_bench::crowd::run(&ctx, &subject, &[100], &options, |_| seen += 1).unwrap();
    assert_eq!(seen, 3, "crowd path, with the far tier, full detail");
    assert_eq!(
        rows.iter().map(|r| (r.lod, r.far)).collect::<Vec<_>>(),
        [(true, false), (true, true), (false, false)]
    );
    let triangles = subject
        .package
        .meshes
        .iter()
        .map(|m| m.indices.len() as u64 / 3)
        .sum::<u64>();
    for r in &rows {
        assert!(r.skipped.is_none(), "{r:?}");
        assert!(r.frame_ms.is_some_and(|ms| ms > 0.0), "{r:?}");
        assert_eq!(r.budget, 100);
        assert_eq!(
            r.triangles,
            r.triangles_per_level.iter().sum::<u64>(),
            "{r:?}"
        );
        if r.lod {
            // Members at reduced levels skin and draw their mesh LODs.
            assert!(
                r.skinned_vertices < r.skinned * subject.vertices() as u64,
                "{r:?}"
            );
            assert!(r.triangles < r.skinned * triangles, "{r:?}");
            // The camera sees the middle of the one row of 100: culling keeps part of it.
            assert!(r.visible > 0 && r.visible < 100, "{r:?}");
            assert!(r.evaluated < 100, "update-rate LOD kept some poses: {r:?}");
            assert_eq!(
                r.lod_histogram.iter().sum::<usize>() + r.impostors,
                100,
                "{r:?}"
            );
            assert!(
                r.joints_posed < r.evaluated * subject.joints(),
                "skeleton LOD: {r:?}"
            );
        } else {
            assert_eq!(r.skinned_vertices, r.skinned * subject.vertices() as u64);
            assert_eq!(r.triangles, r.skinned * triangles);
            assert_eq!(
                (r.visible, r.skinned, r.evaluated),
                (100, 100, 100),
                "{r:?}"
            );
            assert_eq!(r.lod_histogram, [100, 0, 0], "{r:?}");
            assert_eq!(r.joints_posed, 100 * subject.joints(), "{r:?}");
        }
        assert_eq!(r.skinned, r.visible, "{r:?}");
    }
    let report = Report {
        adapter: None,
        rayon_threads: 1,
        frames_max: 1,
        budget_ms: 0.0,
        rows: Vec::new(),
        codec: Codec::default(),
        crowd: rows,
        far_cost: Vec::new(),
        lod: Vec::new(),
        control: Vec::new(),
        game: Vec::new(),
        morph: Vec::new(),
    };
    assert!(report.table().contains("crowd: whole frames with raster"));
    let json = serde_json::to_value(&report).unwrap();
    for key in [
        "instances",
        "lod",
        "far",
        "impostors",
        "frame_ms",
        "visible",
        "skinned_vertices",
        "triangles",
    ] {
        assert!(!json["crowd"][0][key].is_null(), "{key}");
    }
}

#[test]
fn far_cost_times_cards_against_the_lowest_mesh_lod_from_both_views() {
    let Some(ctx) = gpu() else { return };
    let subject = Subject::character().unwrap();
    let options = Options {
        frames: 1,
        budget_ms: 0.0,
        ..Options::default()
    };
    let rows = throng_bench::crowd::far_cost(&ctx, &subject, 200, &options).unwrap();
    assert_eq!(
        rows.iter().map(|r| r.view).collect::<Vec<_>>(),
        ["near", "far"]
    );
    let lowest = subject.package.skeletons[0].lods.len() as u8;
    for r in &rows {
        assert_eq!((r.instances, r.level), (200, lowest), "{r:?}");
        assert!(
            r.lowest_lod_frame_ms > 0.0 && r.impostor_frame_ms > 0.0,
            "{r:?}"
        );
        let per = 1e3 * r.impostor_frame_ms / 200.0;
        assert!((r.impostor_us_per_instance - per).abs() < 1e-9, "{r:?}");
        let ratio = r.impostor_frame_ms / r.lowest_lod_frame_ms;
        assert!((r.ratio - ratio).abs() < 1e-9, "{r:?}");
        assert!(r.empty_frame_ms > 0.0, "{r:?}");
        let added = |frame: f64| 1e3 * (frame - r.empty_frame_ms).max(0.0) / 200.0;
        assert!((r.impostor_marginal_us - added(r.impostor_frame_ms)).abs() < 1e-9);
        assert!((r.lowest_lod_marginal_us - added(r.lowest_lod_frame_ms)).abs() < 1e-9);
        assert!(r.lowest_lod_marginal_us > 0.0, "{r:?}");
        let marginal = r.impostor_marginal_us / r.lowest_lod_marginal_us;
        assert!((r.marginal_ratio - marginal).abs() < 1e-9, "{r:?}");
    }
}

#[test]
fn lod_rows_cover_every_level_of_both_shapes_with_fewer_joints_each() {
    let Some(ctx) = gpu() else { return };
    let subject = Subject::character().unwrap();
    let options = Options {
        frames: 1,
        budget_ms: 0.0,
        ..Options::default()
    };
    let rows = throng_bench::lod::run(&ctx, &subject, 64, &options, |_| {}).unwrap();
    let levels = subject.package.skeletons[0].lods.len();
    assert_eq!(rows.len(), 2 * (levels + 1));
    for pair in rows.windows(2).filter(|w| w[0].shape == w[1].shape) {
        assert_eq!(pair[1].level, pair[0].level + 1);
        assert!(pair[1].joints < pair[0].joints, "{pair:?}");
    }
    for r in &rows {
        assert!(r.pose_ms > 0.0 && r.frames >= 3, "{r:?}");
    }
    let report = Report {
        adapter: None,
        rayon_threads: 1,
        frames_max: 1,
        budget_ms: 0.0,
        rows: Vec::new(),
        codec: Codec::default(),
        crowd: Vec::new(),
        far_cost: Vec::new(),
        lod: rows,
        control: Vec::new(),
        game: Vec::new(),
        morph: Vec::new(),
    };
    assert!(report
        .table()
        .contains("skeleton LOD: GPU pose-only frames"));
    let json = serde_json::to_value(&report).unwrap();
    for key in ["shape", "instances", "level", "joints", "pose_ms"] {
        assert!(!json["lod"][0][key].is_null(), "{key}");
    }
}

#[test]
fn control_rows_time_one_thread_and_rayon_beside_the_pose_with_and_without_sockets() {
    let subject = Subject::character().unwrap();
    let options = Options {
        frames: 3,
        budget_ms: 1e9,
        ..Options::default()
    };
    let mut seen = 0;
    let rows =
        throng_bench::control::run(&subject, &[64, 300], Some(40), Some(48), &options, |_| {
            seen += 1
        })
        .unwrap();
    let threads = rayon::current_num_threads();
    let shape: Vec<(&str, usize, usize, usize)> = (rows.iter())
        .map(|r| (r.tree.as_str(), r.instances, r.sockets, r.threads))
        .collect();
    let crowd = [
        ("crowd", 64, 0, 1),
        ("crowd", 64, 0, threads),
        ("crowd", 300, 0, 1),
        ("crowd", 300, 0, threads),
        ("crowd", 40, 3, 1),
        ("crowd", 40, 3, threads),
    ];
    // The motion-matched rows need the shared BVH files (their database).
    if throng_fixtures::shared_dir("mocap/bvh", "the motion-matched control rows").is_some() {
        let matched = [
            ("motion_matching", 48, 0, 1),
            ("motion_matching", 48, 0, threads),
        ];
        assert_eq!(shape, [&crowd[..], &matched[..]].concat());
    } else {
        assert_eq!(shape, crowd);
    }
    assert_eq!(seen, rows.len());
    for r in &rows {
        assert!(
            r.ns_per_instance_tick > 0.0 && r.pose_ns_per_instance > 0.0,
            "{r:?}"
        );
        assert_eq!(r.ticks, 3);
        let ratio = r.ns_per_instance_tick / r.pose_ns_per_instance;
        assert!((r.tick_over_pose - ratio).abs() < 1e-9, "{r:?}");
        // Only the motion-matched rows are ticked alternately with the crowd tree.
        match (
            r.tree.as_str(),
            r.crowd_tree_ns_alternated,
            r.over_crowd_tree,
        ) {
            ("crowd", None, None) => {}
            ("motion_matching", Some(crowd), Some(over)) => {
                assert!(crowd > 0.0, "{r:?}");
                assert!(
                    (over - r.ns_per_instance_tick / crowd).abs() < 1e-9,
                    "{r:?}"
                );
            }
            _ => panic!("alternated fields do not fit the row's tree: {r:?}"),
        }
    }
    let report = Report {
        adapter: None,
        rayon_threads: threads,
        frames_max: 3,
        budget_ms: 0.0,
        rows: Vec::new(),
        codec: Codec::default(),
        crowd: Vec::new(),
        far_cost: Vec::new(),
        lod: Vec::new(),
        control: rows,
        game: Vec::new(),
        morph: Vec::new(),
    };
    assert!(report
        .table()
        .contains("control: one tick of a tree per instance"));
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["control"][0]["tree"], "crowd");
    for key in [
        "instances",
        "sockets",
        "threads",
        "ns_per_instance_tick",
        "pose_ns_per_instance",
    ] {
        assert!(json["control"][0][key].is_number(), "{key}");
    }
}
