//! The IMPOSTORS section: a baked impostor survives the package format, and a damaged or
//! inconsistent one is refused with the field that is wrong.

mod package_support;

use glam::Vec3;
use package_support::{put_u32, restamp, sample_package, section};
use throng_cook::package::{read_package, write_package, PackageError};
use throng_cpu_ref::impostor::{Impostor, ImpostorClip};
use throng_cpu_ref::Package;

/// Kind of the IMPOSTORS section (docs/package-format.md).
const IMPOSTORS: u32 = 8;

fn with_impostor() -> Package {
    let mut package = sample_package();
    let skeleton = package.skins[0].skeleton;
    let clip = package
        .clips
        .iter()
        .position(|c| c.skeleton == skeleton)
        .expect("a clip of skin 0's skeleton") as u32;
    package.impostors.push(Impostor {
        skin: 0,
        width: 256,
        height: 128,
        cell: 32,
        views: 8,
        elevations: vec![0.0, 0.5],
        centre: Vec3::new(0.0, 0.9, 0.1),
        radius: 1.1,
        clips: vec![ImpostorClip { clip, frames: 2 }],
    });
    package
}

#[test]
fn an_impostor_round_trips_and_a_package_without_one_has_no_section() {
    let package = with_impostor();
    let bytes = write_package(&package);
    assert_eq!(read_package(&bytes).unwrap(), package);
    let plain = write_package(&sample_package());
    assert_eq!(read_package(&plain).unwrap().impostors, vec![]);
    assert!(!package_support::has_section(&plain, IMPOSTORS));
}

/// The package with word `word` of the first IMPOSTORS record (after the 8-byte table head)
/// set to `value`, restamped.
fn damaged(word: usize, value: u32) -> Result<Package, PackageError> {
    let mut bytes = write_package(&with_impostor());
    let (at, _) = section(&bytes, IMPOSTORS);
    put_u32(&mut bytes, at + 8 + 4 * word, value);
    restamp(&mut bytes);
    read_package(&bytes)
}

fn field_of(result: Result<Package, PackageError>) -> &'static str {
    match result {
        Err(PackageError::Invalid {
            section: "IMPOSTORS",
            field,
            ..
        }) => field,
        other => panic!("expected an IMPOSTORS error, got {other:?}"),
    }
}

#[test]
fn a_damaged_impostor_is_refused_naming_the_field() {
    assert_eq!(field_of(damaged(0, 9)), "skin");
    // Versions 1 and 2 held their atlas's normals in rgb (1 sRGB-encoded) and no depth: an
    // old bake is refused, not misread.
    assert_eq!(field_of(damaged(1, 1)), "version");
    assert_eq!(field_of(damaged(1, 2)), "version");
    assert_eq!(field_of(damaged(1, 4)), "version");
    // 32-pixel cells do not divide a 250-pixel atlas.
    assert_eq!(field_of(damaged(2, 250)), "cell");
    assert_eq!(field_of(damaged(5, 65)), "views");
    // A 32x32 atlas holds one cell; the clip needs 32.
    let mut small = with_impostor();
    small.impostors[0].width = 32;
    small.impostors[0].height = 32;
    assert_eq!(field_of(read_package(&write_package(&small))), "atlas");
    let mut twice = with_impostor();
    let c = twice.impostors[0].clips[0];
    twice.impostors[0].clips.push(c);
    assert_eq!(field_of(read_package(&write_package(&twice))), "clip");
}

#[test]
fn nine_elevation_rows_or_none_are_refused_naming_elevations_and_eight_are_accepted() {
    let rows = |n: usize| {
        let mut package = with_impostor();
        let impostor = &mut package.impostors[0];
        impostor.elevations = (0..n).map(|i| i as f32 * 0.1).collect();
        // 8 views x 8 rows x 2 frames: 128 cells of 32 px, a 256 x 512 atlas.
        impostor.height = 512;
        read_package(&write_package(&package))
    };
    let eight = rows(8).expect("eight rows are the most, and allowed");
    assert_eq!(eight.impostors[0].elevations.len(), 8);
    for n in [9, 0] {
        let refused = rows(n);
        let shown = refused.as_ref().expect_err("refused").to_string();
        assert!(
            shown.contains(&format!("has {n} rows; 1..=8 are allowed")),
            "{n} rows: {shown}"
        );
        assert_eq!(field_of(refused), "elevations", "{n} rows");
    }
}
