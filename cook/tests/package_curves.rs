//! The CURVES section (docs/package-format.md): scalar curve channels and clip tracks round trip,
//! a package without channels has no such section, and damaged bytes are read or refused with
//! a typed error, never a panic.

mod package_support;

use package_support::*;
use throng_cook::package::PackageError;
use throng_cook::{read_package, write_package};
use throng_cpu_ref::{Composition, CurveChannel, CurveTrack, Curves, Package};

/// Kind word of the CURVES section.
const CURVES: u32 = 11;

/// [`sample_package`] with two channels on skeleton 0 (tracks on its 4-sample `walk`) and one
/// on skeleton 1 (a track on its 1-sample `pose`).
fn with_curves() -> Package {
    let channel = |name: &str, skeleton, composition, range: (f32, f32)| CurveChannel {
        name: name.into(),
        skeleton,
        default: 0.0,
        min: range.0,
        max: range.1,
        composition,
    };
    let mut p = sample_package();
    p.curves = Curves {
        channels: vec![
            channel("contact/foot_l", 0, Composition::Max, (0.0, 1.0)),
            channel(
                "morph/Face/0",
                0,
                Composition::Blend,
                (f32::NEG_INFINITY, f32::INFINITY),
            ),
            channel("corrective/elbow", 1, Composition::Additive, (-1.0, 1.0)),
        ],
        tracks: vec![
            CurveTrack {
                clip: 0,
                channel: 0,
                values: vec![1.0, 1.0, 0.0, 0.0],
                quantized: None,
            },
            CurveTrack {
                clip: 0,
                channel: 1,
                values: vec![0.0, 0.25, 0.5, -3.0],
                quantized: None,
            },
            CurveTrack {
                clip: 1,
                channel: 2,
                values: vec![0.5],
                quantized: None,
            },
        ],
        selections: Vec::new(),
    };
    p
}

#[test]
fn curve_channels_and_tracks_round_trip_and_a_package_without_them_has_no_section() {
    let package = with_curves();
    let bytes = write_package(&package);
    assert!(has_section(&bytes, CURVES));
    assert_eq!(read_package(&bytes).expect("reads back"), package);
    assert!(!has_section(&write_package(&sample_package()), CURVES));
}

#[test]
fn compressed_curve_tracks_round_trip_bit_for_bit_and_a_bad_one_is_refused() {
    let mut p = with_curves();
    let report = throng_cook::compress_curves(&mut p.curves);
    // [1, 1, 0, 0] and [0, 0.25, 0.5, -3] compressed, [0.5] constant.
    assert_eq!((report.tracks, report.constant, report.raw), (3, 1, 0));
    assert!(report.bytes < report.raw_bytes + 36, "{report:?}");
    assert!(report.max_error <= throng_cook::CURVE_PRECISION);
    assert!(p.curves.tracks.iter().all(|t| t.quantized.is_some()));
    let bytes = write_package(&p);
    assert_eq!(read_package(&bytes).expect("reads back"), p);
    assert_eq!(write_package(&read_package(&bytes).unwrap()), bytes);
    // The stored bits are the track: values beside them that differ are not written.
    let mut wrong = p.clone();
    wrong.curves.tracks[1].values[1] += 0.5;
    assert_eq!(read_package(&write_package(&wrong)).unwrap(), p);
    // A sample wider than the codec stores, a step that is not a power of two: each refused,
    // naming the track.
    let mut wide = p.clone();
    wide.curves.tracks[0].quantized.as_mut().unwrap().bits = 30;
    let err = read_package(&write_package(&wide)).unwrap_err();
    assert!(
        matches!(
            &err,
            PackageError::Invalid {
                section: "CURVES",
                index: 0,
                field: "bits per sample",
                ..
            }
        ),
        "{err:?}"
    );
    let mut odd = p.clone();
    odd.curves.tracks[0].quantized.as_mut().unwrap().step = 3.0;
    let err = read_package(&write_package(&odd)).unwrap_err();
    assert!(err.to_string().contains("power-of-two step"), "{err}");
}

#[test]
fn curves_that_name_a_missing_clip_or_a_channel_of_another_skeleton_are_refused() {
    let mut p = with_curves();
    p.curves.tracks[2].channel = 0;
    let err = read_package(&write_package(&p)).unwrap_err();
    assert!(
        matches!(
            &err,
            PackageError::Invalid {
                section: "CURVES",
                index: 2,
                field: "track",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("skeleton 0, the clip to skeleton 1"),
        "{err}"
    );
    let mut p = with_curves();
    p.curves.tracks[2].clip = 9;
    let err = read_package(&write_package(&p)).unwrap_err();
    assert!(err.to_string().contains("the clip does not exist"), "{err}");
}

#[test]
fn every_byte_of_the_curves_section_rewritten_is_read_or_refused_never_a_panic() {
    let bytes = write_package(&with_curves());
    let (offset, size) = section(&bytes, CURVES);
    let (refused, read) = rewrite_each_byte(&bytes, offset..offset + size);
    eprintln!("CURVES rewrites: {refused} refused, {read} read (values still valid)");
    assert!(refused > 0 && read > 0);
    // A composition code past the five.
    let mut damaged = bytes.clone();
    put_u32(&mut damaged, offset + 8 + 24, 5);
    restamp(&mut damaged);
    let err = read_package(&damaged).unwrap_err();
    assert!(
        matches!(
            &err,
            PackageError::Invalid {
                section: "CURVES",
                field: "composition",
                ..
            }
        ),
        "{err:?}"
    );
}
