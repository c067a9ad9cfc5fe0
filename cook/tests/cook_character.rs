//! The generated character (throng-fixtures) imports and cooks.

use std::collections::HashSet;

use throng_cook::{cook, import_slice, Profile};
use throng_cpu_ref::{ChannelPath, Interpolation};
use throng_fixtures::{character_glb, CHARACTER_CLIPS};

#[test]
fn the_generated_character_imports_and_cooks() {
    let imported = import_slice(&character_glb(), "character.glb").unwrap();
    let package = &imported.package;
    assert_eq!(package.skeletons.len(), 1);
    let joints = package.skeletons[0].joint_count();
    assert!(joints >= 40, "{joints} joints");
    assert!(!package.meshes.is_empty());
    assert!(
        package
            .meshes
            .iter()
            .map(|m| m.positions.len())
            .sum::<usize>()
            >= 2000
    );
    let names: Vec<&str> = imported
        .source_clips
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, CHARACTER_CLIPS);
    let interpolations: HashSet<Interpolation> = imported
        .source_clips
        .iter()
        .flat_map(|c| c.channels.iter().map(|ch| ch.interpolation))
        .collect();
    assert_eq!(
        interpolations.len(),
        3,
        "STEP, LINEAR and CUBICSPLINE all present: {interpolations:?}"
    );
    let non_uniform_scale = imported
        .source_clips
        .iter()
        .flat_map(|c| &c.channels)
        .any(|ch| {
            ch.path == ChannelPath::Scale
                && ch
                    .values
                    .chunks_exact(3)
                    .any(|s| (s[0] - s[1]).abs() > 1e-4 || (s[1] - s[2]).abs() > 1e-4)
        });
    assert!(non_uniform_scale);

    for profile in [Profile::HERO, Profile::STANDARD] {
        let (cooked, report) = cook(&imported, &profile).unwrap();
        assert_eq!(cooked.clips.len(), 5);
        println!("{report}");
        for (row, source) in report.clips.iter().zip(&imported.source_clips) {
            assert!(row.max_error_cm.is_finite());
            let step_keys: Vec<f32> = source
                .channels
                .iter()
                .filter(|c| c.interpolation == Interpolation::Step)
                .flat_map(|c| c.times.iter().copied())
                .collect();
            if step_keys.is_empty() {
                // Sampled channels are keyed at 30 Hz: both profiles land on every key, so only
                // the slerp/Hermite-vs-lerp difference between keys remains, under a centimetre.
                assert!(
                    row.max_error_cm < 1.0,
                    "{} {}: {} cm",
                    profile.name,
                    row.name,
                    row.max_error_cm
                );
            } else {
                // A STEP jump cannot survive lerping between uniform samples: the cooked curve
                // ramps over the sample interval before the jump, where the worst error must lie.
                let period = 1.0 / profile.sample_rate;
                let near_step = step_keys
                    .iter()
                    .any(|&k| row.worst_time_s <= k && k - row.worst_time_s < period);
                assert!(
                    near_step || row.max_error_cm < 1.0,
                    "{} {}: {} cm at {} s",
                    profile.name,
                    row.name,
                    row.max_error_cm,
                    row.worst_time_s
                );
            }
        }
    }
}
