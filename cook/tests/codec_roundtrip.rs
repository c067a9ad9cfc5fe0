//! A compressed clip round-trips: encode → write → read → decode gives the encoder's own
//! reconstruction bit for bit; the decoded clip stays within the profile's threshold of the
//! reference; constants and default sub-tracks are untouched.

use throng_cook::{
    compress, cook, encode_clip, import_slice, read_package, write_package, Profile,
};
use throng_cpu_ref::clip::{sample_clip, sample_joint};
use throng_cpu_ref::codec::decode_components;
use throng_cpu_ref::{Package, SubTrackKind, Trs};

fn character(profile: &Profile) -> Package {
    let imported =
        import_slice(&throng_fixtures::character_glb(), "character").expect("character imports");
    cook(&imported, profile).expect("character cooks").0
}

#[test]
fn encode_write_read_decode_is_the_encoders_reconstruction_bit_for_bit() {
    for profile in Profile::ALL {
        let reference = character(&profile);
        let mut package = reference.clone();
        for (clip, original) in package.clips.iter_mut().zip(&reference.clips) {
            let skeleton = &reference.skeletons[original.skeleton as usize];
            let encoded = encode_clip(original, skeleton, &profile.codec()).unwrap();
            let compressed = encoded.clip.compressed.as_ref().expect("compressed");
            // Write, read back, and decode every sample of every animated sub-track.
            let mut one = reference.clone();
            one.clips = vec![encoded.clip.clone()];
            one.curves = Default::default(); // its tracks name the other clips
            let read = read_package(&write_package(&one))
                .unwrap_or_else(|e| panic!("{}: {e}", original.name));
            assert_eq!(
                read.clips[0], encoded.clip,
                "{}: the package holds the clip as encoded",
                original.name
            );
            let decoded = read.clips[0].compressed.as_ref().unwrap();
            assert_eq!(encoded.reconstruction.len() as u32, compressed.animated);
            for (a, samples) in encoded.reconstruction.iter().enumerate() {
                for (i, want) in samples.iter().enumerate() {
                    let got = decode_components(decoded, a as u32, i as u32).unwrap();
                    assert_eq!(
                        got.map(f32::to_bits),
                        want.map(f32::to_bits),
                        "{} track {a} sample {i}",
                        original.name
                    );
                }
            }
            *clip = encoded.clip;
        }
        // The whole compressed package round-trips too.
        assert_eq!(
            read_package(&write_package(&package)).as_ref(),
            Ok(&package),
            "{}",
            profile.name
        );
    }
}

#[test]
fn constants_and_defaults_are_kept_exactly_and_animated_samples_within_threshold() {
    let profile = Profile::STANDARD;
    let reference = character(&profile);
    let mut package = reference.clone();
    let mut report = throng_cook::CookReport::default();
    compress(&mut package, &mut report, &profile);
    let codec = report.codec.expect("a codec report");
    assert_eq!(codec.clips.len(), reference.clips.len());
    for ((c, r), row) in package.clips.iter().zip(&reference.clips).zip(&codec.clips) {
        let skeleton = &reference.skeletons[r.skeleton as usize];
        assert!(c.compressed.is_some() && c.values.is_empty(), "{}", c.name);
        let kinds = |clip: &throng_cpu_ref::Clip| {
            clip.sub_tracks.iter().map(|t| t.kind).collect::<Vec<_>>()
        };
        assert_eq!(kinds(c), kinds(r), "{}: classification is kept", c.name);
        for j in 0..skeleton.joint_count() {
            for i in 0..r.sample_count {
                let t = r.sample_time(i) as f32;
                let (a, b) = (
                    sample_joint(r, skeleton, j, t),
                    sample_joint(c, skeleton, j, t),
                );
                for (k, kind) in [
                    c.sub_tracks[3 * j].kind,
                    c.sub_tracks[3 * j + 1].kind,
                    c.sub_tracks[3 * j + 2].kind,
                ]
                .into_iter()
                .enumerate()
                {
                    if kind == SubTrackKind::Animated {
                        continue;
                    }
                    let same = match k {
                        0 => a.translation == b.translation,
                        1 => a.rotation == b.rotation,
                        _ => a.scale == b.scale,
                    };
                    assert!(
                        same,
                        "{}: joint {j} sub-track {k} ({kind:?}) changed at sample {i}",
                        c.name
                    );
                }
            }
        }
        assert!(
            row.max_error_cm <= codec.threshold_cm * 1.001,
            "{}: {} cm",
            c.name,
            row.max_error_cm
        );
        assert!(row.ratio > 1.0, "{}: ratio {}", c.name, row.ratio);
        let mut pose = vec![Trs::IDENTITY; skeleton.joint_count()];
        sample_clip(c, skeleton, 0.5 * c.duration as f32, &mut pose);
        assert!(pose.iter().all(Trs::is_finite));
    }
}

#[test]
fn every_profile_meets_its_threshold_and_looser_profiles_are_smaller() {
    let mut sizes = Vec::new();
    for profile in Profile::ALL {
        let mut package = character(&profile);
        let mut report = throng_cook::CookReport::default();
        compress(&mut package, &mut report, &profile);
        let codec = report.codec.unwrap();
        println!("{codec}");
        let settings = profile.codec();
        assert_eq!(codec.threshold_cm, settings.threshold_cm);
        for c in &codec.clips {
            assert!(
                c.max_error_cm <= settings.threshold_cm * 1.001,
                "{} {}: {} cm",
                profile.name,
                c.name,
                c.max_error_cm
            );
            assert!(c.p99_error_cm <= c.max_error_cm && c.mean_error_cm <= c.max_error_cm);
        }
        let t = &codec.total;
        assert_eq!(
            t.raw_bytes,
            codec.clips.iter().map(|c| c.raw_bytes).sum::<u64>()
        );
        assert_eq!(
            t.compressed_bytes,
            codec.clips.iter().map(|c| c.compressed_bytes).sum::<u64>()
        );
        assert!((t.ratio - t.raw_bytes as f64 / t.compressed_bytes as f64).abs() < 1e-9);
        // 40 bytes per joint-sample.
        let joint_samples: u64 = codec
            .clips
            .iter()
            .map(|c| c.joints as u64 * u64::from(c.samples))
            .sum();
        assert_eq!(t.raw_bytes, 40 * joint_samples);
        sizes.push((
            profile.name,
            codec.total.compressed_bytes,
            profile.sample_rate,
        ));
    }
    // hero samples at 60 Hz, standard and crowd at 30 Hz: compare the two that share a rate.
    let (standard, crowd) = (sizes[1], sizes[2]);
    assert!(crowd.1 < standard.1, "{sizes:?}");
}

#[test]
fn the_json_report_has_the_documented_keys() {
    let mut package = character(&Profile::CROWD);
    let mut report = throng_cook::CookReport::default();
    compress(&mut package, &mut report, &Profile::CROWD);
    let json = serde_json::to_value(report.codec.unwrap()).unwrap();
    let keys = [
        "name",
        "raw_bytes",
        "compressed_bytes",
        "ratio",
        "bytes_per_joint_sample",
        "max_error_cm",
        "p99_error_cm",
    ];
    for clip in json["clips"].as_array().unwrap() {
        for k in keys {
            assert!(!clip[k].is_null(), "clip key {k} in {clip}");
        }
    }
    assert_eq!(json["total"]["name"], "total");
    for k in keys.iter().skip(1) {
        assert!(json["total"][k].is_number(), "total key {k}");
    }
    assert!(json["width_histogram"]
        .as_array()
        .is_some_and(|h| h.len() == 25));
}

#[test]
fn joint_segments_no_precision_can_pass_are_counted_by_the_check_they_failed() {
    let reference = character(&Profile::STANDARD);
    let exact = throng_cook::profile::CodecSettings {
        threshold_cm: 0.0,
        important_cm: 0.0,
        important: &[],
    };
    for clip in &reference.clips {
        let skeleton = &reference.skeletons[clip.skeleton as usize];
        let mut animated: Vec<usize> = (clip.sub_tracks.iter().enumerate())
            .filter(|(_, t)| t.kind == SubTrackKind::Animated)
            .map(|(k, _)| k / 3)
            .collect();
        animated.dedup();
        let segments =
            clip.sample_count
                .div_ceil(throng_cpu_ref::codec::layout::SEGMENT_LENGTH) as usize;
        // Within the profile's threshold every joint finds a precision that passes.
        let standard = encode_clip(clip, skeleton, &Profile::STANDARD.codec()).unwrap();
        assert_eq!(standard.unmet.total(), 0, "{}", clip.name);
        // With no error allowed, hardly any does: the 24-bit grid moves an animated joint off its
        // reference, which its own vertices show first (a joint-segment whose samples all lie on
        // the grid passes).
        let unmet = encode_clip(clip, skeleton, &exact).unwrap().unmet;
        let joint_segments = animated.len() * segments;
        assert!(
            unmet.total() <= joint_segments && unmet.own * 2 > joint_segments,
            "{}: {unmet:?} of {joint_segments}",
            clip.name
        );
        assert_eq!(
            unmet.hemisphere, 0,
            "{}: smooth clips do not flip",
            clip.name
        );
    }
}
