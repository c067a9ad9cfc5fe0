//! GPU-vs-CPU decode parity on compressed packages (issue 5): the WGSL decoder (codec.wgsl)
//! reproduces the CPU's dequantised values bit for bit at sample times, and whole programs on
//! compressed clips stay within DESIGN.md §6 of throng-cpu-ref, on the generated character with
//! every profile and on every shared asset.

mod common;

use glam::Affine3A;
use throng_cook::{compress, cook, import_slice, CookReport, Profile};
use throng_cpu_ref::codec::decode_components;
use throng_cpu_ref::{Package, PoseOp, Program, SubTrackKind};
use throng_gpu::parity::{self, PackageUnderTest, Path};
use throng_gpu::{
    Batch, Capacities, Decode, Instance, Mapping, Pose, Runtime, RuntimeOptions, Specialise,
};

fn character(profile: &Profile) -> Package {
    let imported =
        import_slice(&throng_fixtures::character_glb(), "character").expect("character imports");
    let (mut package, mut report) = cook(&imported, profile).expect("character cooks");
    compress(&mut package, &mut report, profile);
    assert!(package.clips.iter().all(|c| c.compressed.is_some()));
    package
}

#[test]
fn compressed_character_parity_with_every_profile() {
    let Some(ctx) = common::gpu() else { return };
    let packages: Vec<(String, Package)> = Profile::ALL
        .iter()
        .map(|p| (format!("character/{}", p.name), character(p)))
        .collect();
    let under_test: Vec<PackageUnderTest> = packages
        .iter()
        .map(|(name, package)| PackageUnderTest { name, package })
        .collect();
    for path in [
        Path::Interpreter,
        Path::Specialised(Mapping::Thread),
        Path::Specialised(Mapping::Workgroup),
    ] {
        for report in parity_cached_or_not(&ctx, &under_test, (5, 16), path) {
            assert_eq!(report.batches.len(), 3);
        }
    }
}

/// Parity of `under_test` (`seed`, `instances` per skeleton) on `path`, each instance decoding
/// its own samples and then the frames reading them from the decode cache (which they must use):
/// both reports, each passing.
fn parity_cached_or_not(
    ctx: &throng_gpu::GpuContext,
    under_test: &[PackageUnderTest],
    (seed, instances): (u64, u32),
    path: Path,
) -> Vec<parity::ParityReport> {
    let mut reports = Vec::new();
    for decode in [Decode::Never, Decode::Auto] {
        let options = parity::Options {
            seed,
            instances,
            binding_limit: None,
            path,
            decode,
            present: None,
        };
        let run = parity::evaluate(ctx, under_test, &options).unwrap();
        let cached = run.frame.decoded_clips + run.frame.cached_clips;
        assert_eq!(cached > 0, decode == Decode::Auto);
        let report = parity::compare(&run, path);
        println!("{decode:?}: {report}");
        assert!(report.pass, "{report}");
        reports.push(report);
    }
    reports
}

#[test]
fn compressed_shared_assets_parity() {
    let files = common::shared_assets();
    if files.is_empty() {
        return;
    }
    let Some(ctx) = common::gpu() else { return };
    let mut cooked = Vec::new();
    for f in &files {
        // cook_file compresses (docs/codec.md); crowd gives the coarsest widths.
        match throng_cook::cook_file(f, &Profile::CROWD) {
            // Morph targets alone (../shared/assets/morph) cook without a skin: no pose to compare.
            Ok((package, _)) if package.skins.is_empty() => {
                eprintln!("not a character: {} has no skin", f.display())
            }
            Ok((package, _)) => cooked.push((
                f.file_name().unwrap().to_string_lossy().into_owned(),
                package,
            )),
            Err(e @ throng_cook::CookError::NoSkin { .. }) => eprintln!("not a character: {e}"),
            Err(e) => panic!("{}: {e}", f.display()),
        }
    }
    for (name, package) in &cooked {
        assert!(
            package.clips.iter().all(|c| c.compressed.is_some()),
            "{name}: every clip compressed"
        );
    }
    let under_test: Vec<PackageUnderTest> = cooked
        .iter()
        .map(|(name, package)| PackageUnderTest { name, package })
        .collect();
    let path = Path::Specialised(Mapping::for_adapter(ctx.adapter.software));
    parity_cached_or_not(&ctx, &under_test, (13, 8), path);
}

/// The character's clips retimed to 1 Hz (same samples), so that time `i` is exactly sample `i`
/// on both sides (u = 0): the GPU's local translations and scales must then be the CPU decoder's
/// dequantised values bit for bit, and rotations the same unit quaternion: when each instance
/// decodes its own samples; when a frame decodes every clip into the decode cache (each is
/// sampled at every sample) and the next reads them from it; after the package is replaced; when
/// two packages take turns in a cache with room for one; and when both are in every frame.
#[test]
fn dequantised_values_are_bit_exact_at_sample_times_cached_or_not() {
    let Some(ctx) = common::gpu() else { return };
    let imported = import_slice(&throng_fixtures::character_glb(), "character").unwrap();
    let (mut package, _) = cook(&imported, &Profile::STANDARD).unwrap();
    for clip in &mut package.clips {
        clip.sample_rate = 1.0;
        clip.duration = f64::from(clip.sample_count - 1);
    }
    compress(&mut package, &mut CookReport::default(), &Profile::CROWD);
    let mut programs = Vec::new();
    for (c, clip) in package.clips.iter().enumerate() {
        for i in 0..clip.sample_count {
            let ops = vec![
                PoseOp::sample(0, c as u32, i as f32),
                PoseOp::to_component(0),
            ];
            programs.push((
                c,
                i,
                Program {
                    ops,
                    weights: Vec::new(),
                },
            ));
        }
    }
    let instances: Vec<Instance> = programs
        .iter()
        .map(|(_, _, p)| Instance {
            pose: Pose::Program(p),
            placement: Affine3A::IDENTITY,
        })
        .collect();
    let clips = package.clips.len() as u32;
    let options = |decode| RuntimeOptions {
        specialise: Specialise::Blocking,
        outputs: throng_cpu_ref::Outputs {
            locals: true,
            ..Default::default()
        },
        decode,
        ..RuntimeOptions::default()
    };
    let frame = |runtime: &mut Runtime, id| {
        let report = runtime
            .frame(&[Batch {
                package: id,
                skeleton: 0,
                skin: None,
                instances: &instances,
            }])
            .unwrap();
        runtime.finish().unwrap();
        let out = runtime.readback().unwrap().remove(0);
        let (exact, worst_angle) = compare_to_decoder(&package, &programs, &out.locals);
        assert!(exact > 0, "the character animates some translation");
        assert!(worst_angle < 1e-6, "{worst_angle}");
        (report.decoded_clips, report.cached_clips)
    };
    let capacities = Capacities::for_packages(&[&package], instances.len() as u32);
    // Each instance decodes its own samples.
    let mut runtime = Runtime::with_options(&ctx, capacities, options(Decode::Never)).unwrap();
    let id = runtime.add_package(&package).unwrap();
    assert_eq!(frame(&mut runtime, id), (0, 0));
    // The first frame decodes every clip into the cache, the next reads them from it, and a
    // replaced package is decoded again.
    let mut runtime = Runtime::with_options(&ctx, capacities, options(Decode::Auto)).unwrap();
    let id = runtime.add_package(&package).unwrap();
    assert_eq!(frame(&mut runtime, id), (clips, 0));
    assert_eq!(frame(&mut runtime, id), (0, clips));
    runtime.replace_package(id, &package).unwrap();
    assert_eq!(frame(&mut runtime, id), (clips, 0));
    // Room for one package's clips: two packages taking turns start the cache over each frame.
    let mut runtime = Runtime::with_options(&ctx, capacities, options(Decode::Auto)).unwrap();
    let ids = [
        runtime.add_package(&package).unwrap(),
        runtime.add_package(&package).unwrap(),
    ];
    let decoded = (clips, 0);
    for (id, expected) in [
        (ids[0], decoded),
        (ids[1], decoded),
        (ids[0], decoded),
        (ids[0], (0, clips)),
    ] {
        assert_eq!(frame(&mut runtime, id), expected);
    }
    // Both in one frame, room for one: the first is read from the cache frame after frame and
    // the second decodes per instance, rather than the cache starting over every frame.
    let both = Capacities::for_packages(&[&package], 2 * instances.len() as u32);
    let mut runtime = Runtime::with_options(&ctx, both, options(Decode::Auto)).unwrap();
    let ids = [
        runtime.add_package(&package).unwrap(),
        runtime.add_package(&package).unwrap(),
    ];
    for expected in [(clips, 0), (0, clips), (0, clips)] {
        let batches = ids.map(|package| Batch {
            package,
            skeleton: 0,
            skin: None,
            instances: &instances,
        });
        let report = runtime.frame(&batches).unwrap();
        runtime.finish().unwrap();
        for out in runtime.readback().unwrap() {
            let (exact, worst_angle) = compare_to_decoder(&package, &programs, &out.locals);
            assert!(exact > 0 && worst_angle < 1e-6, "{worst_angle}");
        }
        assert_eq!((report.decoded_clips, report.cached_clips), expected);
    }
}

/// Checks `locals` (per program, every joint's local pose) against the CPU decoder at each
/// program's sample: translations and scales bit for bit (panics otherwise); returns how many
/// were, and the largest angle between a GPU rotation and the CPU's.
fn compare_to_decoder(
    package: &Package,
    programs: &[(usize, u32, Program)],
    locals: &[throng_cpu_ref::Trs],
) -> (usize, f32) {
    let joints = package.skeletons[0].joint_count();
    let (mut exact, mut worst_angle) = (0, 0.0f32);
    for (n, (c, i, _)) in programs.iter().enumerate() {
        let clip = &package.clips[*c];
        let z = clip.compressed.as_ref().unwrap();
        for j in 0..joints {
            let gpu = locals[n * joints + j];
            for k in 0..3 {
                let st = clip.sub_tracks[3 * j + k];
                if st.kind != SubTrackKind::Animated {
                    continue;
                }
                let want = decode_components(z, st.offset, *i).unwrap();
                match k {
                    1 => {
                        let rebuilt =
                            throng_cpu_ref::codec::rebuilt_component(z, st.offset).unwrap();
                        let cpu =
                            throng_cpu_ref::codec::rotation_from_stored(want, rebuilt).normalize();
                        worst_angle = worst_angle.max(cpu.angle_between(gpu.rotation));
                    }
                    _ => {
                        let got = if k == 0 { gpu.translation } else { gpu.scale };
                        assert_eq!(
                            got.to_array().map(f32::to_bits),
                            want.map(f32::to_bits),
                            "clip {c} sample {i} joint {j} sub-track {k}"
                        );
                        exact += 1;
                    }
                }
            }
        }
    }
    (exact, worst_angle)
}
