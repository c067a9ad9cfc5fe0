//! GPU-vs-CPU parity on the generated character and on the real assets (DESIGN.md §6), for the
//! interpreter and for the specialised pipelines of both mappings: each test forces its path.

mod common;

use throng_gpu::parity::{self, PackageUnderTest, Path};
use throng_gpu::Mapping;

const PATHS: [Path; 3] = [
    Path::Interpreter,
    Path::Specialised(Mapping::Thread),
    Path::Specialised(Mapping::Workgroup),
];

/// A frame of batches of `instances` per skeleton from `seed` on `path`, the adapter's limits.
fn options(seed: u64, instances: u32, path: Path) -> parity::Options {
    parity::Options {
        seed,
        instances,
        binding_limit: None,
        path,
        decode: throng_gpu::Decode::Auto,
        present: None,
    }
}

/// Every pose dispatch of `report`'s frame ran on `path`.
fn ran_on(report: &parity::ParityReport, path: Path) {
    let f = &report.frame;
    let expected = match path {
        Path::Interpreter => (0, f.pose_dispatches),
        Path::Specialised(_) => (f.pose_dispatches, 0),
    };
    assert_eq!(
        (f.specialised_dispatches, f.interpreter_dispatches),
        expected,
        "{}",
        path.name()
    );
    assert!(f.pose_dispatches > 0);
}

#[test]
fn character_parity_within_tolerances_on_every_path() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    for path in PATHS {
        let report = parity::run(
            &ctx,
            &[PackageUnderTest {
                name: "character",
                package: &package,
            }],
            7,
            24,
            path,
        )
        .unwrap();
        println!("{report}");
        ran_on(&report, path);
        for op in ["Capture", "Inertialize", "Blend", "Override", "Additive"] {
            assert!(report.ops.contains(&op), "{op} not exercised: {report}");
        }
        assert!(report.pass, "{report}");
    }
}

#[test]
fn curves_of_every_composition_match_the_cpu_on_every_path_and_a_nudge_past_tolerance_fails() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::with_every_composition(common::character());
    let packages = [PackageUnderTest {
        name: "character with curves",
        package: &package,
    }];
    let curve_stage = |report: &parity::ParityReport| {
        (report.batches.iter())
            .flat_map(|b| &b.stages)
            .find(|s| s.stage == "curve value")
            .cloned()
            .expect("the report compares curve values")
    };
    for path in PATHS {
        let options = options(48, 24, path);
        let run = parity::evaluate(&ctx, &packages, &options).unwrap();
        let report = parity::compare(&run, path);
        println!("{report}");
        ran_on(&report, path);
        assert!(curve_stage(&report).pass, "{report}");
        assert!(report.pass, "{report}");
        // The programs move the curves: many distinct values, some clamped to a bound.
        let cpu = &run.cases[0].cpu;
        let mut distinct: Vec<u32> = cpu.curves.iter().map(|v| v.to_bits()).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(
            distinct.len() > 40,
            "{} distinct curve values",
            distinct.len()
        );
        assert!(cpu.curves.iter().any(|&v| v == 1.5 || v == -0.5));

        let mut nudged = run.clone();
        let k = 3 * cpu.curve_count + 2;
        nudged.cases[0].gpu.curves[k] += 2e-5;
        let failed = parity::compare(&nudged, path);
        assert!(!curve_stage(&failed).pass, "{failed}");
    }
}

#[test]
fn morph_targets_skin_like_the_cpu_on_every_path_and_move_the_vertices_they_name() {
    let Some(ctx) = common::gpu() else { return };
    let morphed = common::character_with_morph_targets();
    let plain = common::without_morph_targets(morphed.clone());
    for path in PATHS {
        let options = options(49, 16, path);
        let evaluate = |package: &throng_cpu_ref::Package| {
            let packages = [PackageUnderTest {
                name: "character",
                package,
            }];
            parity::evaluate(&ctx, &packages, &options).unwrap()
        };
        let run = evaluate(&morphed);
        let report = parity::compare(&run, path);
        println!("{report}");
        ran_on(&report, path);
        assert!(report.pass, "{report}");
        // Against the same programs on the character without targets: the targets move the
        // vertices they list (target 2's constant weight moves every 11th vertex of every
        // instance), and only those.
        let base = evaluate(&plain);
        let (with, without) = (&run.cases[0].cpu, &base.cases[0].cpu);
        let moved = |v: usize| [7, 5, 11].iter().any(|&k| v.is_multiple_of(k));
        let verts = with.vertex_count;
        let (mut seen_moved, mut seen_still) = (0, 0);
        for (k, (a, b)) in with.skinned.iter().zip(&without.skinned).enumerate() {
            let same = a.position == b.position;
            if moved(k % verts) {
                seen_moved += usize::from(!same);
            } else {
                assert!(same, "vertex {} of instance {} moved", k % verts, k / verts);
                seen_still += 1;
            }
        }
        assert!(seen_moved > 0 && seen_still > 0);
        let gpu_moved = (run.cases[0]
            .gpu
            .skinned
            .iter()
            .zip(&base.cases[0].gpu.skinned))
        .filter(|(a, b)| a.position != b.position)
        .count();
        assert!(gpu_moved >= seen_moved / 2, "{gpu_moved} of {seen_moved}");
        // The character's own face targets, weighed only by curves that most programs leave at
        // 0: the morph pass re-skins just the instances some target of which weighs anything,
        // in the partition's list, and no other.
        let face = common::character();
        let run = evaluate(&face);
        let report = parity::compare(&run, path);
        assert!(report.pass, "{report}");
        let out = &run.cases[0].cpu;
        let morph_channels: Vec<usize> = (face.curves.channels.iter().enumerate())
            .filter(|(_, c)| c.skeleton == 0 && c.name.starts_with("morph/"))
            .map(|(k, _)| k)
            .collect();
        let weighed = (0..out.curves.len() / out.curve_count)
            .filter(|i| {
                let values = &out.curves[i * out.curve_count..][..out.curve_count];
                morph_channels.iter().any(|&k| values[k] != 0.0)
            })
            .count();
        let all = out.curves.len() / out.curve_count;
        assert!(
            weighed > 0 && weighed < all,
            "{weighed} of {all} instances weigh a target"
        );
    }
}

#[test]
fn retained_instances_presented_between_ticks_match_the_cpu_at_every_fraction_and_path() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let under_test = [PackageUnderTest {
        name: "character",
        package: &package,
    }];
    for path in PATHS {
        for alpha in [0.0, 0.25, 0.5, 1.0] {
            let report = parity::run_presented(&ctx, &under_test, 11, 24, path, alpha).unwrap();
            println!("alpha {alpha}: {report}");
            ran_on(&report, path);
            assert_eq!(
                report.frame.present_dispatches, 1,
                "the present pass alone: the second tick changed values, no program"
            );
            assert!(report.pass, "alpha {alpha}: {report}");
        }
    }
}

#[test]
fn shared_assets_parity_within_tolerances_in_one_frame_on_every_path() {
    let files = common::shared_assets();
    if files.is_empty() {
        return;
    }
    let Some(ctx) = common::gpu() else { return };
    let mut cooked: Vec<(String, throng_cpu_ref::Package)> = Vec::new();
    for f in &files {
        match throng_cook::cook_file(f, &throng_cook::Profile::DEFAULT) {
            // Morph targets alone (../shared/assets/morph) cook without a skin: no pose to compare.
            Ok((package, _)) if package.skins.is_empty() => {
                eprintln!("not a character: {} has no skin", f.display())
            }
            Ok((package, _)) => cooked.push((
                f.file_name().unwrap().to_string_lossy().into_owned(),
                package,
            )),
            // The cook refuses unskinned files by design; there is nothing to pose.
            Err(e @ throng_cook::CookError::NoSkin { .. }) => eprintln!("not a character: {e}"),
            Err(e) => panic!("{}: {e}", f.display()),
        }
    }
    let packages: Vec<PackageUnderTest> = cooked
        .iter()
        .map(|(name, package)| PackageUnderTest { name, package })
        .collect();
    for path in PATHS {
        let report = parity::run(&ctx, &packages, 11, 8, path).unwrap();
        println!("{report}");
        assert!(
            report.batches.len() >= cooked.len(),
            "one batch per skeleton of every asset"
        );
        ran_on(&report, path);
        assert!(report.pass, "{report}");
    }
}

#[test]
fn a_perturbation_just_above_tolerance_fails_and_just_below_passes() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let packages = [PackageUnderTest {
        name: "character",
        package: &package,
    }];
    let path = Path::Interpreter;
    let options = options(3, 6, path);
    let run = parity::evaluate(&ctx, &packages, &options).unwrap();
    let clean = parity::compare(&run, path);
    assert!(clean.pass, "{clean}");

    // Component position of instance 2, joint 10, moved along x.
    let extent = run.cases[0].extent;
    let joints = run.cases[0].cpu.joints;
    let k = 2 * joints + 10;
    let shifted = |factor: f32| {
        let mut r = run.clone();
        r.cases[0].gpu.components[k].translation.x += factor * 1e-4 * extent;
        parity::compare(&r, path)
    };
    let stage = |report: &parity::ParityReport| {
        report.batches[0]
            .stages
            .iter()
            .find(|s| s.stage == "component position")
            .unwrap()
            .clone()
    };
    let above = shifted(1.5);
    assert!(!above.pass, "{above}");
    let s = stage(&above);
    assert!(!s.pass && (s.worst - 1.5e-4).abs() < 2e-5, "{s:?}");
    assert_eq!(s.at, "instance 2, element 10");
    assert!(shifted(0.5).pass);

    // One skinned vertex moved by 1.5e-4 of the mesh bounds diagonal.
    let mut r = run.clone();
    let case = &mut r.cases[0];
    let v = case.cpu.vertex_count + 100; // instance 1 is the hero; instance 1 vertex 100
    let hero = &case.cpu.skinned[case.cpu.vertex_count..2 * case.cpu.vertex_count];
    let lo = hero
        .iter()
        .fold(glam::Vec3::INFINITY, |a, x| a.min(x.position));
    let hi = hero
        .iter()
        .fold(glam::Vec3::NEG_INFINITY, |a, x| a.max(x.position));
    case.gpu.skinned[v].position.y += 1.5e-4 * (hi - lo).length();
    let report = parity::compare(&r, path);
    let s = report.batches[0]
        .stages
        .iter()
        .find(|s| s.stage == "skinned position")
        .unwrap();
    assert!(!report.pass && !s.pass, "{report}");
    assert_eq!(s.at, "instance 1, element 100");
}

#[test]
fn skeletons_too_big_for_a_workgroup_take_the_interpreter_and_match() {
    let Some(ctx) = common::gpu() else { return };
    let big = common::chain_package(300);
    let small = common::chain_package(200);
    let packages = [
        PackageUnderTest {
            name: "chain300",
            package: &big,
        },
        PackageUnderTest {
            name: "chain200",
            package: &small,
        },
    ];
    let report = parity::run(&ctx, &packages, 5, 8, Path::Specialised(Mapping::Workgroup)).unwrap();
    println!("{report}");
    let f = &report.frame;
    assert!(
        f.interpreter_dispatches > 0 && f.specialised_dispatches > 0,
        "{f:?}"
    );
    assert!(report.pass, "{report}");
}

#[test]
fn paged_streams_match_at_the_same_dispatch_count() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let packages = [PackageUnderTest {
        name: "character",
        package: &package,
    }];
    let vertex_bytes: u64 = package
        .meshes
        .iter()
        .map(|m| 16 * m.positions.len() as u64)
        .sum();
    let path = Path::Specialised(Mapping::for_adapter(ctx.adapter.software));
    let whole = parity::compare(
        &parity::evaluate(&ctx, &packages, &options(9, 12, path)).unwrap(),
        path,
    );
    // Room for two instances' skinned vertices per binding: 12 instances on 6 pages.
    let options = parity::Options {
        binding_limit: Some(2 * vertex_bytes + 1000),
        ..options(9, 12, path)
    };
    let paged = parity::compare(&parity::evaluate(&ctx, &packages, &options).unwrap(), path);
    println!("{paged}");
    assert_eq!(
        paged.frame.dispatches, whole.frame.dispatches,
        "pages add no dispatches"
    );
    assert!(paged.pass, "{paged}");
    assert_eq!(
        paged.batches[0].stages, whole.batches[0].stages,
        "the same frame, to the bit"
    );
}
