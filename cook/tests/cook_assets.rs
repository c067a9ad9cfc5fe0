//! Every real asset cooks; its cooked-vs-exact error at random times stays within the reported
//! bound; the report agrees with the package; the package survives the writer and reader.

mod asset_support;

use asset_support::assets;

use std::path::{Path, PathBuf};

use glam::{Affine3A, Vec3};
use throng_cook::{cook, import_file, read_package, write_package, Profile};
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::curve::sample_exact;
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::{SubTrackKind, Trs};

fn skinned_assets(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = [dir.to_path_buf(), dir.join("mocap")]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "glb" || e == "gltf"))
        .filter(|p| !p.ends_with("InterpolationTest.glb"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 12,
        "expected 6 skinned Khronos/Quaternius assets and 6 mocap files, found {files:?}"
    );
    files
}

/// Deterministic pseudo-random numbers in [0, 1) (a 64-bit LCG, Knuth's MMIX constants).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Largest scene-space distance (cm) between virtual vertices 3 cm out on each joint's axes,
/// carried by the exact and the cooked transforms; written out independently of cpu-ref's metric.
fn pose_error_cm(root: &Affine3A, exact: &[Affine3A], cooked: &[Affine3A]) -> f32 {
    let mut worst = 0.0f32;
    for (e, c) in exact.iter().zip(cooked) {
        let (e, c) = (*root * *e, *root * *c);
        let scale =
            (e.matrix3.x_axis.length() + e.matrix3.y_axis.length() + e.matrix3.z_axis.length())
                / 3.0;
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            let p = axis * (0.03 / scale);
            worst = worst.max((e.transform_point3(p) - c.transform_point3(p)).length() * 100.0);
        }
    }
    worst
}

#[test]
fn every_skinned_asset_cooks_within_its_reported_error() {
    let Some(dir) = assets() else { return };
    let mut rng = Lcg(7);
    for path in skinned_assets(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let imported = import_file(&path).unwrap();
        let (package, report) =
            cook(&imported, &Profile::DEFAULT).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(package.clips.len(), imported.source_clips.len(), "{name}");
        assert_eq!(report.clips.len(), package.clips.len(), "{name}");
        for ((clip, source), row) in package
            .clips
            .iter()
            .zip(&imported.source_clips)
            .zip(&report.clips)
        {
            let skeleton = &package.skeletons[clip.skeleton as usize];
            let n = skeleton.joint_count();
            assert_eq!(clip.skeleton_hash, skeleton.identity_hash());
            assert_eq!(row.animated + row.constant + row.default, 3 * n);
            assert!(
                row.max_error_cm.is_finite() && row.p99_error_cm <= row.max_error_cm,
                "{name} {}",
                clip.name
            );
            // Last sample exactly at the duration, one period or less after the one before.
            let rate = f64::from(clip.sample_rate);
            assert!(
                f64::from(clip.sample_count - 1) / rate >= clip.duration - 1e-6,
                "{name} {}: {} samples at {rate} Hz for {} s",
                clip.name,
                clip.sample_count,
                clip.duration
            );
            assert!(
                clip.sample_count == 1 || f64::from(clip.sample_count - 2) / rate < clip.duration
            );
            let (mut el, mut cl) = (vec![Trs::IDENTITY; n], vec![Trs::IDENTITY; n]);
            let (mut ec, mut cc) = (vec![Affine3A::IDENTITY; n], vec![Affine3A::IDENTITY; n]);
            let mut worst = 0.0f32;
            for _ in 0..24 {
                let t = rng.next() * clip.duration as f32;
                sample_exact(source, skeleton, t, &mut el);
                sample_clip(clip, skeleton, t, &mut cl);
                local_to_component(skeleton, &el, &mut ec);
                local_to_component(skeleton, &cl, &mut cc);
                worst = worst.max(pose_error_cm(&skeleton.root_transform, &ec, &cc));
            }
            // At the sample times the cooked pose is the exact one (values copied, f32 rounding).
            let extent_cm = report.skeletons[clip.skeleton as usize].extent * 100.0;
            let step = (clip.sample_count / 16).max(1);
            for i in (0..clip.sample_count).step_by(step as usize) {
                let t = clip.sample_time(i) as f32;
                sample_exact(source, skeleton, t, &mut el);
                sample_clip(clip, skeleton, t, &mut cl);
                local_to_component(skeleton, &el, &mut ec);
                local_to_component(skeleton, &cl, &mut cc);
                let e = pose_error_cm(&skeleton.root_transform, &ec, &cc);
                assert!(
                    e <= 1e-5 * extent_cm + 1e-3,
                    "{name} clip {}: {e} cm at sample {i}",
                    clip.name
                );
            }
            // The report measures at every source key and 9 points per sample interval, not
            // continuously: between those points the error can exceed the reported max a little
            // (10%), and f32 rounding differs between the two computations (1e-3 cm).
            assert!(
                worst <= row.max_error_cm * 1.1 + 1e-3,
                "{name} clip {}: error {worst} cm at a random time exceeds the reported max {} cm",
                clip.name,
                row.max_error_cm
            );
        }
        println!(
            "{name}: {} joints, {} clips, {} bytes",
            package.skeletons[0].joint_count(),
            package.clips.len(),
            report.total_clip_bytes
        );
        for c in &report.clips {
            println!(
                "  {:32} max {:8.4} cm ({:.3}% of extent)  p99 {:8.4} cm  ({} @ {:.3} s)",
                c.name,
                c.max_error_cm,
                100.0 * c.max_error_of_extent.unwrap_or(f32::NAN),
                c.p99_error_cm,
                c.worst_joint,
                c.worst_time_s
            );
        }
        let bytes = write_package(&package);
        assert_eq!(
            read_package(&bytes).expect("cooked package reads back"),
            package,
            "{name}"
        );
    }
}

/// Sources keyed at the profile rate (or a divisor of it) cook exactly: samples fall on keys
/// and the cooked lerp/nlerp between them matches LINEAR source curves up to slerp-vs-nlerp.
#[test]
fn simple_skin_cooks_at_hero_rate_with_tiny_error() {
    let Some(dir) = assets() else { return };
    let imported = import_file(&dir.join("SimpleSkin.gltf")).unwrap();
    let (package, report) = cook(&imported, &Profile::HERO).unwrap();
    let clip = &package.clips[0];
    assert_eq!(clip.sample_rate, 60.0);
    assert_eq!(clip.duration, 5.5);
    assert_eq!(clip.sample_count, 331);
    assert_eq!(clip.profile, "hero");
    // Only node 2's rotation moves; every other sub-track is rest.
    let kinds: Vec<SubTrackKind> = clip.sub_tracks.iter().map(|t| t.kind).collect();
    assert_eq!(
        kinds
            .iter()
            .filter(|&&k| k == SubTrackKind::Animated)
            .count(),
        1
    );
    assert_eq!(kinds[4], SubTrackKind::Animated);
    assert!(
        report.clips[0].max_error_cm < 0.01,
        "{}",
        report.clips[0].max_error_cm
    );
}

#[test]
fn the_report_prints_an_aligned_table() {
    let Some(dir) = assets() else { return };
    let (_, report) = throng_cook::cook_file(&dir.join("Fox.glb"), &Profile::DEFAULT).unwrap();
    let text = report.to_string();
    for needle in [
        "profile standard (30 Hz",
        "Survey",
        "Walk",
        "Run",
        "fox1/0",
        "total clip bytes",
        "max (cm)",
    ] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
    let clip_lines: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "clips:")
        .skip(1)
        .take(4)
        .collect();
    // Aligned: the bytes column ends at the same character in every row.
    let ends: Vec<usize> = clip_lines
        .iter()
        .map(|l| l.find(" once").or(l.find(" loop")).unwrap_or(0))
        .collect();
    assert!(ends[1..].iter().all(|&e| e == ends[1]), "{text}");
    assert_eq!(
        report.total_clip_bytes,
        report.clips.iter().map(|c| c.bytes).sum::<usize>()
    );
}
