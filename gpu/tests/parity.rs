//! GPU-vs-CPU parity on the generated character and on the real assets (DESIGN.md §6).

mod common;

use throng_gpu::parity::{self, PackageUnderTest};

#[test]
fn character_parity_within_tolerances() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let report = parity::run(
        &ctx,
        &[PackageUnderTest {
            name: "character",
            package: &package,
        }],
        7,
        24,
    )
    .unwrap();
    println!("{report}");
    assert!(report.pass, "{report}");
}

#[test]
fn shared_assets_parity_within_tolerances_in_one_frame() {
    let files = common::shared_assets();
    if files.is_empty() {
        return;
    }
    let Some(ctx) = common::gpu() else { return };
    let mut cooked: Vec<(String, throng_cpu_ref::Package)> = Vec::new();
    for f in &files {
        match throng_cook::cook_file(f, &throng_cook::Profile::DEFAULT) {
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
    let report = parity::run(&ctx, &packages, 11, 8).unwrap();
    println!("{report}");
    assert!(
        report.batches.len() >= cooked.len(),
        "one batch per skeleton of every asset"
    );
    assert!(report.pass, "{report}");
}

#[test]
fn a_perturbation_just_above_tolerance_fails_and_just_below_passes() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let packages = [PackageUnderTest {
        name: "character",
        package: &package,
    }];
    let options = parity::Options {
        seed: 3,
        instances: 6,
        binding_limit: None,
    };
    let run = parity::evaluate(&ctx, &packages, &options).unwrap();
    let clean = parity::compare(&run);
    assert!(clean.pass, "{clean}");

    // Component position of instance 2, joint 10, moved along x.
    let extent = run.cases[0].extent;
    let joints = run.cases[0].cpu.joints;
    let k = 2 * joints + 10;
    let shifted = |factor: f32| {
        let mut r = run.clone();
        r.cases[0].gpu.components[k].translation.x += factor * 1e-4 * extent;
        parity::compare(&r)
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
    let lo = case.cpu.skinned[case.cpu.vertex_count..2 * case.cpu.vertex_count]
        .iter()
        .fold(glam::Vec3::INFINITY, |a, x| a.min(x.position()));
    let hi = case.cpu.skinned[case.cpu.vertex_count..2 * case.cpu.vertex_count]
        .iter()
        .fold(glam::Vec3::NEG_INFINITY, |a, x| a.max(x.position()));
    case.gpu.skinned[v].position[1] += 1.5e-4 * (hi - lo).length();
    let report = parity::compare(&r);
    let s = report.batches[0]
        .stages
        .iter()
        .find(|s| s.stage == "skinned position")
        .unwrap();
    assert!(!report.pass && !s.pass, "{report}");
    assert_eq!(s.at, "instance 1, element 100");
}

#[test]
fn skeletons_too_big_for_the_workgroup_use_the_fallback_and_match() {
    let Some(ctx) = common::gpu() else { return };
    let big = common::chain_package(200);
    let small = common::chain_package(100);
    let packages = [
        PackageUnderTest {
            name: "chain200",
            package: &big,
        },
        PackageUnderTest {
            name: "chain100",
            package: &small,
        },
    ];
    let report = parity::run(&ctx, &packages, 5, 8).unwrap();
    println!("{report}");
    assert_eq!(report.frame.chunks, 2);
    assert_eq!(
        report.frame.fk_fallback_chunks, 1,
        "only the 200-joint chain falls back"
    );
    assert!(report.pass, "{report}");
}

#[test]
fn chunked_batches_match_and_cost_one_dispatch_per_stage_per_chunk() {
    let Some(ctx) = common::gpu() else { return };
    let package = common::character();
    let packages = [PackageUnderTest {
        name: "character",
        package: &package,
    }];
    let vertex_bytes: u64 = package
        .meshes
        .iter()
        .map(|m| 32 * m.positions.len() as u64)
        .sum();
    // Room for two instances' skinned vertices per binding: 12 instances → 6 chunks.
    let options = parity::Options {
        seed: 9,
        instances: 12,
        binding_limit: Some(2 * vertex_bytes + 1000),
    };
    let report = parity::compare(&parity::evaluate(&ctx, &packages, &options).unwrap());
    println!("{report}");
    assert_eq!(report.frame.chunks, 6);
    assert_eq!(report.frame.dispatches, 4 * 6);
    assert!(report.pass, "{report}");
}
