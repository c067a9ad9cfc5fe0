//! Each way a package can be wrong gives its own typed error that says where.

mod package_support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use package_support::*;
use throng_cook::package::{PackageError, FORMAT_VERSION};
use throng_cook::{read_package, write_package};
use throng_cpu_ref::{Package, SkeletonError, SubTrackKind};

/// Records the largest single allocation each thread makes, so tests can show that a huge
/// count in the input does not turn into a huge allocation.
struct Recording;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = LARGEST.try_with(|l| l.set(l.get().max(layout.size())));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: Recording = Recording;

/// Offset of the sample walk clip's payload in its record: header, 2 events, 2 markers and a
/// 4-sample trajectory before it.
const WALK_PAYLOAD: usize = 80 + 2 * 24 + 2 * 16 + 4 * 28;

fn written(edit: impl FnOnce(&mut Package)) -> Result<Package, PackageError> {
    let mut package = sample_package();
    edit(&mut package);
    read_package(&write_package(&package))
}

fn patched(edit: impl FnOnce(&mut Vec<u8>)) -> Result<Package, PackageError> {
    let mut bytes = write_package(&sample_package());
    edit(&mut bytes);
    restamp(&mut bytes);
    read_package(&bytes)
}

/// Asserts an `Invalid` error for `section`, `index`, `field` whose text contains `text`.
fn assert_invalid(
    result: Result<Package, PackageError>,
    section: &str,
    index: usize,
    field: &str,
    text: &str,
) {
    match result {
        Err(PackageError::Invalid {
            section: s,
            index: i,
            field: f,
            what,
        }) => {
            assert_eq!((s, i, f), (section, index, field), "{what}");
            assert!(what.contains(text), "'{what}' does not mention '{text}'");
        }
        other => panic!("expected Invalid in {section} {index} {field}, got {other:?}"),
    }
}

#[test]
fn bad_magic() {
    let result = patched(|b| b[0] = b'X');
    assert_eq!(
        result,
        Err(PackageError::BadMagic {
            found: *b"XHRNGPKG"
        })
    );
    assert_eq!(
        read_package(b"PK\x03\x04 not a package at all, but long enough"),
        Err(PackageError::BadMagic {
            found: *b"PK\x03\x04 not"
        })
    );
}

#[test]
fn other_versions_are_refused() {
    // Version 7 added the mesh LODs' shells (6 compressed curve tracks, 5 the CURVES section).
    assert_eq!(FORMAT_VERSION, 7);
    let result = patched(|b| put_u32(b, 8, 8));
    assert_eq!(
        result,
        Err(PackageError::UnsupportedVersion {
            found: 8,
            supported: FORMAT_VERSION
        })
    );
    assert_eq!(
        result.unwrap_err().to_string(),
        "package format version 8 is not supported (this build reads version 7): re-cook the \
         package with this build's `throng cook`, or read it with the newer build that wrote it"
    );
    // Versions 6 (no shells), 5 (raw curve tracks), 4 (no CURVES section) and 2 (no compressed
    // clips) are not read either: only the current version, and the message says to re-cook.
    let result = patched(|b| put_u32(b, 8, 6));
    assert_eq!(
        result,
        Err(PackageError::UnsupportedVersion {
            found: 6,
            supported: 7
        })
    );
    assert_eq!(
        result.unwrap_err().to_string(),
        "package format version 6 is older than the version 7 this build reads: re-cook the \
         package from its source with `throng cook` (packages are not migrated)"
    );
    for old in [5, 4, 2] {
        assert_eq!(
            patched(|b| put_u32(b, 8, old)),
            Err(PackageError::UnsupportedVersion {
                found: old,
                supported: 7
            })
        );
    }
}

#[test]
fn hash_mismatch() {
    let mut bytes = write_package(&sample_package());
    let stored = u64_at(&bytes, 16);
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let computed = xxhash_rust::xxh3::xxh3_64(&bytes[32..]);
    assert_eq!(
        read_package(&bytes),
        Err(PackageError::HashMismatch { stored, computed })
    );
}

#[test]
fn short_inputs_are_truncated() {
    assert!(matches!(
        read_package(&[]),
        Err(PackageError::Truncated {
            what: "magic",
            offset: 0,
            needed: 8,
            available: 0,
            ..
        })
    ));
    let bytes = write_package(&sample_package());
    let len = bytes.len() as u64;
    assert_eq!(
        read_package(&bytes[..100]),
        Err(PackageError::Truncated {
            section: "package",
            what: "declared size",
            offset: 0,
            needed: len,
            available: 100
        })
    );
}

#[test]
fn section_past_the_end() {
    let bytes = write_package(&sample_package());
    let total = bytes.len() as u64;
    let clips_entry = 32 + 24 * 4;
    let result = patched(|b| put_u64(b, clips_entry + 8, total + 16));
    assert_eq!(
        result,
        Err(PackageError::SectionOutOfBounds {
            index: 4,
            kind: CLIPS,
            offset: total + 16,
            size: u64_at(&bytes, clips_entry + 16),
            total
        })
    );
    let (offset, _) = section(&bytes, CLIPS);
    let result = patched(|b| put_u64(b, clips_entry + 16, u64::MAX));
    assert!(
        matches!(
            result,
            Err(PackageError::SectionOutOfBounds {
                index: 4,
                size: u64::MAX,
                ..
            })
        ),
        "{result:?} at {offset}"
    );
}

#[test]
fn misaligned_section() {
    let (offset, _) = section(&write_package(&sample_package()), SKINS);
    let result = patched(|b| put_u64(b, 32 + 24 * 2 + 8, offset as u64 + 4));
    assert_eq!(
        result,
        Err(PackageError::MisalignedSection {
            index: 2,
            kind: SKINS,
            offset: offset as u64 + 4
        })
    );
}

#[test]
fn sections_must_be_packed_present_and_known() {
    let parts = split(&write_package(&sample_package()));
    // Swapped table order: SKINS would start where SKELETONS should.
    let mut swapped = parts.clone();
    swapped.swap(1, 2);
    assert!(
        read_package(&assemble(&swapped)).is_ok(),
        "table order is free as long as sections are packed"
    );
    let mut missing = parts.clone();
    missing.remove(3);
    assert_eq!(
        read_package(&assemble(&missing)),
        Err(PackageError::MissingSection { kind: "MESHES" })
    );
    let mut duplicate = parts.clone();
    duplicate.push(parts[3].clone());
    assert!(matches!(
        read_package(&assemble(&duplicate)),
        Err(PackageError::BadSection {
            index: 6,
            kind: MESHES,
            ..
        })
    ));
    let mut flagged = parts.clone();
    flagged[0].1 = 1;
    assert!(matches!(
        read_package(&assemble(&flagged)),
        Err(PackageError::BadSection {
            index: 0,
            kind: STRINGS,
            ..
        })
    ));
}

#[test]
fn unknown_sections_are_errors_unless_optional() {
    let parts = split(&write_package(&sample_package()));
    let with = |flags: u32| {
        let mut p = parts.clone();
        p.insert(2, (99, flags, b"from the future".to_vec()));
        read_package(&assemble(&p))
    };
    assert_eq!(
        with(0),
        Err(PackageError::UnknownSection { index: 2, kind: 99 })
    );
    assert_eq!(with(1), Ok(sample_package()));
    assert!(matches!(
        with(3),
        Err(PackageError::BadSection {
            index: 2,
            kind: 99,
            ..
        })
    ));
}

#[test]
fn leftover_bytes_are_errors() {
    let parts = split(&write_package(&sample_package()));
    let (strings_offset, strings_size) = section(&write_package(&sample_package()), STRINGS);
    let mut p = parts.clone();
    p[0].2.push(b'!');
    assert_eq!(
        read_package(&assemble(&p)),
        Err(PackageError::UnusedString {
            offset: (strings_offset + strings_size) as u64
        })
    );
    let mut p = parts.clone();
    p[2].2.extend_from_slice(&[0; 8]);
    let bytes = assemble(&p);
    let (skins_offset, skins_size) = section(&bytes, SKINS);
    assert_eq!(
        read_package(&bytes),
        Err(PackageError::TrailingBytes {
            section: "SKINS",
            offset: (skins_offset + skins_size - 8) as u64,
            count: 8
        })
    );
}

#[test]
fn reserved_and_padding_bytes_must_be_zero() {
    let bytes = write_package(&sample_package());
    let (skeletons, _) = section(&bytes, SKELETONS);
    let result = patched(|b| b[skeletons + 8 + 5] = 1);
    assert_eq!(
        result,
        Err(PackageError::NonZeroPadding {
            section: "SKELETONS",
            offset: skeletons as u64 + 13
        })
    );
    let result = patched(|b| {
        let last = b.len() - 1;
        b[last] = 1;
    });
    assert!(
        matches!(
            result,
            Err(PackageError::NonZeroPadding {
                section: "package",
                ..
            })
        ),
        "{result:?}"
    );
}

#[test]
fn huge_counts_fail_without_huge_allocations() {
    let bytes = write_package(&sample_package());
    let (skeletons, _) = section(&bytes, SKELETONS);
    let (meshes, _) = section(&bytes, MESHES);
    let (clips, _) = section(&bytes, CLIPS);
    let fields = [
        ("section count", 12, "section table"),
        ("skeleton count", skeletons, "SKELETONS"),
        ("joint count", skeletons + 8, "SKELETONS"),
        // The second mesh has no normals; the first's record is 24 + 4 * 48 + 6 * 4 bytes.
        ("vertex count", meshes + 8 + 240 + 12, "MESHES"),
        ("index count", meshes + 8 + 20, "MESHES"),
        ("event count", clips + 8 + 56, "CLIPS"),
        ("marker count", clips + 8 + 60, "CLIPS"),
        ("value count", clips + 8 + WALK_PAYLOAD + 4, "CLIPS"),
    ];
    for (name, at, section_name) in fields {
        for count in [u32::MAX, 1 << 28] {
            let mut damaged = bytes.clone();
            put_u32(&mut damaged, at, count);
            restamp(&mut damaged);
            LARGEST.with(|l| l.set(0));
            let result = read_package(&damaged);
            let largest = LARGEST.with(|l| l.get());
            match result {
                Err(PackageError::Truncated {
                    section,
                    needed,
                    available,
                    ..
                }) => {
                    assert_eq!(section, section_name, "{name}");
                    assert!(
                        needed > available,
                        "{name}: needed {needed}, available {available}"
                    );
                }
                other => panic!("{name} = {count}: expected Truncated, got {other:?}"),
            }
            assert!(
                largest < 4 * bytes.len(),
                "{name} = {count}: allocated {largest} bytes for a {}-byte input",
                bytes.len()
            );
        }
    }
}

#[test]
fn truncated_reports_section_field_and_offset() {
    let bytes = write_package(&sample_package());
    let (skeletons, _) = section(&bytes, SKELETONS);
    let err = patched(|b| put_u32(b, skeletons + 8, 1000)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("SKELETONS")
            && text.contains("parents")
            && text.contains(&format!("byte {}", skeletons + 72)),
        "{text}"
    );
}

#[test]
fn unknown_encoding_and_enum_values() {
    let (clips, _) = section(&write_package(&sample_package()), CLIPS);
    assert_eq!(
        patched(|b| put_u32(b, clips + 8 + 48, 3)),
        Err(PackageError::UnsupportedEncoding {
            clip: 0,
            encoding: 3,
            version: 1
        })
    );
    assert_eq!(
        patched(|b| put_u32(b, clips + 8 + 52, 7)),
        Err(PackageError::UnsupportedEncoding {
            clip: 0,
            encoding: 1,
            version: 7
        })
    );
    assert_eq!(
        patched(|b| put_u32(b, clips + 8 + 20, 2)),
        Err(PackageError::BadValue {
            section: "CLIPS",
            field: "loop_policy",
            offset: clips as u64 + 28,
            value: 2
        })
    );
    let kind_at = clips + 8 + WALK_PAYLOAD + 8;
    assert_eq!(
        patched(|b| put_u32(b, kind_at, 3)),
        Err(PackageError::BadValue {
            section: "CLIPS",
            field: "sub-track kind",
            offset: kind_at as u64,
            value: 3
        })
    );
}

#[test]
fn bad_string_references() {
    let bytes = write_package(&sample_package());
    let (skins, _) = section(&bytes, SKINS);
    let (strings, size) = section(&bytes, STRINGS);
    let result = patched(|b| put_u32(b, skins + 8 + 4, 1000));
    assert!(
        matches!(
            result,
            Err(PackageError::BadString {
                section: "SKINS",
                what: "lies outside STRINGS",
                len: 1000,
                ..
            })
        ),
        "{result:?}"
    );
    // The ✓ of "tip ✓" is the only multi-byte character: cut it in half.
    let check = bytes[strings..strings + size]
        .windows(3)
        .position(|w| w == "✓".as_bytes())
        .unwrap();
    let result = patched(|b| b[strings + check + 1] = b'x');
    assert!(
        matches!(
            result,
            Err(PackageError::BadString {
                section: "SKELETONS",
                what: "is not UTF-8",
                ..
            })
        ),
        "{result:?}"
    );
}

#[test]
fn skeleton_structure_and_identity() {
    let result = written(|p| p.skeletons[0].parents[2] = 4);
    assert_eq!(
        result,
        Err(PackageError::Skeleton {
            index: 0,
            source: SkeletonError::ParentOrder {
                joint: 2,
                name: "head".into(),
                parent: 4
            }
        })
    );
    let result = written(|p| p.skeletons[1].rest[1].scale.y = 0.0);
    assert!(matches!(
        result,
        Err(PackageError::Skeleton {
            index: 1,
            source: SkeletonError::BadRest { joint: 1, .. }
        })
    ));
    let (skeletons, _) = section(&write_package(&sample_package()), SKELETONS);
    let stored = sample_package().skeletons[0].identity_hash() ^ 1;
    assert_eq!(
        patched(|b| put_u64(b, skeletons + 8 + 8, stored)),
        Err(PackageError::SkeletonHashMismatch {
            index: 0,
            stored,
            rebuilt: stored ^ 1
        })
    );
    assert_invalid(
        written(|p| p.skeletons[0].rest[3].rotation.w = 2.0),
        "SKELETONS",
        0,
        "rest",
        "joint 3",
    );
    assert_invalid(
        written(|p| p.skeletons[1].root_transform.translation.x = f32::NAN),
        "SKELETONS",
        1,
        "root_transform",
        "finite",
    );
}

#[test]
fn skin_references_and_matrices() {
    assert_invalid(
        written(|p| p.skins[1].skeleton = 2),
        "SKINS",
        1,
        "skeleton",
        "skeleton 2 does not exist",
    );
    assert_invalid(
        written(|p| p.skins[1].joints[1] = 2),
        "SKINS",
        1,
        "joints",
        "palette entry 1 names joint 2",
    );
    assert_invalid(
        written(|p| p.skins[0].inverse_bind[3].matrix3.y_axis.z = f32::INFINITY),
        "SKINS",
        0,
        "inverse_bind",
        "matrix 3",
    );
}

#[test]
fn mesh_references_and_values() {
    assert_invalid(
        written(|p| p.meshes[0].joints[2][1] = 4),
        "MESHES",
        0,
        "joints",
        "vertex 2",
    );
    assert_invalid(
        written(|p| p.meshes[1].skin = 9),
        "MESHES",
        1,
        "skin",
        "skin 9 does not exist",
    );
    assert_invalid(
        written(|p| p.meshes[0].weights[1][2] = -0.5),
        "MESHES",
        0,
        "weights",
        "vertex 1",
    );
    assert_invalid(
        written(|p| p.meshes[0].weights[3][0] = f32::NAN),
        "MESHES",
        0,
        "weights",
        "vertex 3",
    );
    assert_invalid(
        written(|p| p.meshes[0].positions[0].x = f32::NAN),
        "MESHES",
        0,
        "positions",
        "vertex 0",
    );
    assert_invalid(
        written(|p| p.meshes[0].normals[3].z = f32::INFINITY),
        "MESHES",
        0,
        "normals",
        "vertex 3",
    );
    assert_invalid(
        written(|p| p.meshes[1].indices[2] = 3),
        "MESHES",
        1,
        "indices",
        "index 2 is 3",
    );
    assert_invalid(
        written(|p| p.meshes[1].indices.push(0)),
        "MESHES",
        1,
        "indices",
        "4 indices",
    );
    assert_invalid(
        written(|p| p.meshes[0].normals.pop().map(drop).unwrap_or_default()),
        "MESHES",
        0,
        "normal_count",
        "3 normals for 4",
    );
}

#[test]
fn clip_references_and_timing() {
    assert_invalid(
        written(|p| p.clips[0].skeleton = 2),
        "CLIPS",
        0,
        "skeleton",
        "skeleton 2 does not exist",
    );
    assert_invalid(
        written(|p| p.clips[1].skeleton = 0),
        "CLIPS",
        1,
        "skeleton_hash",
        "identity hash",
    );
    assert_invalid(
        written(|p| p.clips[0].sample_rate = 0.0),
        "CLIPS",
        0,
        "sample_rate",
        "0",
    );
    assert_invalid(
        written(|p| p.clips[0].sample_rate = f32::NAN),
        "CLIPS",
        0,
        "sample_rate",
        "NaN",
    );
    assert_invalid(
        written(|p| p.clips[1].sample_count = 0),
        "CLIPS",
        1,
        "sample_count",
        "0",
    );
    assert_invalid(
        written(|p| p.clips[0].duration = -1.0),
        "CLIPS",
        0,
        "duration",
        "-1",
    );
    assert_invalid(
        written(|p| p.clips[0].duration = f64::INFINITY),
        "CLIPS",
        0,
        "duration",
        "inf",
    );
    // 4 samples at 30 Hz end at 0.1 s; the third lies at 0.0667 s.
    assert_invalid(
        written(|p| p.clips[0].duration = 0.11),
        "CLIPS",
        0,
        "duration",
        "4 samples at 30 Hz",
    );
    assert_invalid(
        written(|p| p.clips[0].duration = 0.06),
        "CLIPS",
        0,
        "duration",
        "4 samples at 30 Hz",
    );
    assert_invalid(
        written(|p| p.clips[1].duration = 0.01),
        "CLIPS",
        1,
        "duration",
        "1 samples at 60 Hz",
    );
    for duration in [0.0667, 0.1] {
        let mut p = sample_package();
        p.clips[0].duration = duration;
        p.clips[0].events.clear();
        p.clips[0].markers.clear();
        assert!(
            read_package(&write_package(&p)).is_ok(),
            "duration {duration} fits 4 samples at 30 Hz"
        );
    }
}

#[test]
fn clip_tracks_and_values() {
    assert_invalid(
        written(|p| p.clips[0].values[3] = f32::NAN),
        "CLIPS",
        0,
        "values",
        "value 3",
    );
    assert_invalid(
        written(|p| p.clips[1].sub_tracks.pop().map(drop).unwrap_or_default()),
        "CLIPS",
        1,
        "sub_tracks",
        "5 sub-tracks for 6",
    );
    assert_invalid(
        written(|p| p.clips[1].sub_tracks[5].offset = 8),
        "CLIPS",
        1,
        "sub_tracks",
        "sub-track 5 (joint 1, scale) reads values 8..11, past the 10 stored",
    );
    // A Default sub-track stores nothing; made Animated, it reads one rotation past the end.
    assert_invalid(
        written(|p| p.clips[1].sub_tracks[4].kind = SubTrackKind::Animated),
        "CLIPS",
        1,
        "sub_tracks",
        "sub-track 4 (joint 1, rotation) reads values 7..11",
    );
    // Sub-track 1 (joint 0 rotation) is animated from value 12: lengthen its second sample by ~1.5%.
    assert_invalid(
        written(|p| p.clips[0].values[16] += 0.1),
        "CLIPS",
        0,
        "sub_tracks",
        "sub-track 1 (joint 0, rotation) sample 1",
    );
    // Sub-track 5 (joint 1 scale) is animated from value 35.
    assert_invalid(
        written(|p| p.clips[0].values[35 + 3 * 2 + 1] = 0.0),
        "CLIPS",
        0,
        "sub_tracks",
        "sub-track 5 (joint 1, scale) sample 2",
    );
    assert_invalid(
        written(|p| p.clips[0].events[1].time = 0.0901),
        "CLIPS",
        0,
        "events",
        "1 ('land')",
    );
    assert_invalid(
        written(|p| p.clips[0].markers[0].time = f64::NAN),
        "CLIPS",
        0,
        "markers",
        "0 ('left')",
    );
    assert_invalid(
        written(|p| p.clips[0].markers[1].time = -0.001),
        "CLIPS",
        0,
        "markers",
        "1 ('right')",
    );
}

#[test]
fn events_and_markers_are_sorted_unique_and_canonical() {
    assert_invalid(
        written(|p| p.clips[0].events.swap(0, 1)),
        "CLIPS",
        0,
        "events",
        "1 ('footstep' at 0.03 s) does not come after 0 ('land' at 0.09 s)",
    );
    assert_invalid(
        written(|p| p.clips[0].events[1] = p.clips[0].events[0].clone()),
        "CLIPS",
        0,
        "events",
        "does not come after",
    );
    // Same time, names in order: accepted.
    let mut p = sample_package();
    p.clips[0].events[1].time = 0.03;
    assert!(read_package(&write_package(&p)).is_ok());
    // A looping clip stores its end marker at 0.
    assert_invalid(
        written(|p| p.clips[0].markers[1].time = 0.09),
        "CLIPS",
        0,
        "markers",
        "1 ('right') at 0.09 s lies outside [0, 0.09) s",
    );
    let mut p = sample_package();
    p.clips[0].markers[1].time = 0.09;
    p.clips[0].loop_policy = throng_cpu_ref::LoopPolicy::Once;
    assert!(
        read_package(&write_package(&p)).is_ok(),
        "a once-clip keeps a marker at its end"
    );
    assert_invalid(
        written(|p| {
            p.clips[1].markers.push(throng_cpu_ref::SyncMarker {
                name: "m".into(),
                time: 0.0,
            })
        }),
        "CLIPS",
        1,
        "markers",
        "1 on a clip of zero duration",
    );
}

/// The sample walk clip's trajectory.
fn motion(p: &mut Package) -> &mut throng_cpu_ref::RootMotion {
    p.clips[0]
        .root_motion
        .as_mut()
        .expect("the walk has root motion")
}

#[test]
fn trajectories_are_checked() {
    assert_invalid(
        written(|p| motion(p).joint = 6),
        "CLIPS",
        0,
        "root_motion",
        "joint 6 does not exist (the skeleton has 6)",
    );
    assert_invalid(
        written(|p| motion(p).translations[2].x = f32::NAN),
        "CLIPS",
        0,
        "root_motion",
        "sample 2 is not finite",
    );
    assert_invalid(
        written(|p| motion(p).rotations[1] *= 1.01),
        "CLIPS",
        0,
        "root_motion",
        "sample 1 rotation",
    );
    assert_invalid(
        written(|p| motion(p).translations[3].y = 0.01),
        "CLIPS",
        0,
        "root_motion",
        "sample 3",
    );
    assert_invalid(
        written(|p| motion(p).rotations[0] = glam::Quat::from_rotation_x(0.1)),
        "CLIPS",
        0,
        "root_motion",
        "leaves the ground plane",
    );
    // The same tilt and height are fine in a full trajectory.
    let mut p = sample_package();
    motion(&mut p).policy = throng_cpu_ref::RootMotionPolicy::Full;
    motion(&mut p).translations[3].y = 0.01;
    motion(&mut p).rotations[0] = glam::Quat::from_rotation_x(0.1);
    assert_eq!(read_package(&write_package(&p)), Ok(p));
    // The writer does not validate: a trajectory shorter than the samples misreads and fails.
    assert!(written(|p| {
        motion(p).translations.pop();
    })
    .is_err());
}

#[test]
fn event_flags_and_root_motion_fields_are_checked_bytewise() {
    let bytes = write_package(&sample_package());
    let (clips, _) = section(&bytes, CLIPS);
    let c0 = clips + 8;
    assert_eq!(
        patched(|b| put_u32(b, c0 + 72, 3)),
        Err(PackageError::BadValue {
            section: "CLIPS",
            field: "root_motion_policy",
            offset: c0 as u64 + 72,
            value: 3
        })
    );
    assert_eq!(
        patched(|b| put_u32(b, c0 + 80 + 16, 3)),
        Err(PackageError::BadValue {
            section: "CLIPS",
            field: "event flags",
            offset: c0 as u64 + 96,
            value: 3
        })
    );
    assert_eq!(
        patched(|b| b[c0 + 80 + 22] = 1),
        Err(PackageError::NonZeroPadding {
            section: "CLIPS",
            offset: c0 as u64 + 102
        })
    );
    // Without root motion the joint field is reserved.
    let mut p = sample_package();
    p.clips[0].root_motion = None;
    let mut bytes = write_package(&p);
    assert_eq!(u32_at(&bytes, c0 + 72), 0);
    put_u32(&mut bytes, c0 + 76, 0x0100);
    restamp(&mut bytes);
    assert_eq!(
        read_package(&bytes),
        Err(PackageError::NonZeroPadding {
            section: "CLIPS",
            offset: c0 as u64 + 77
        })
    );
}

#[test]
fn a_package_without_lods_has_no_lods_section_and_an_empty_one_is_refused() {
    let mut package = sample_package();
    package.skeletons[0].lods.clear();
    let bytes = write_package(&package);
    assert!(!has_section(&bytes, LODS));
    assert_eq!(read_package(&bytes), Ok(package));
    let mut parts = split(&bytes);
    parts.push((LODS, 1, vec![0; 8]));
    assert!(matches!(
        read_package(&assemble(&parts)),
        Err(PackageError::Invalid {
            section: "LODS",
            field: "item count",
            ..
        })
    ));
}

#[test]
fn the_lods_section_must_carry_the_optional_flag() {
    let mut parts = split(&write_package(&sample_package()));
    let lods = parts.iter().position(|p| p.0 == LODS).unwrap();
    parts[lods].1 = 0;
    assert!(matches!(
        read_package(&assemble(&parts)),
        Err(PackageError::BadSection { kind: LODS, .. })
    ));
}

/// The sample package with its LODS body replaced by `words` (u32 each, f32 bits included).
fn with_lods(words: &[u32]) -> Result<throng_cpu_ref::Package, PackageError> {
    let mut parts = split(&write_package(&sample_package()));
    let lods = parts.iter().position(|p| p.0 == LODS).unwrap();
    parts[lods].2 = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    read_package(&assemble(&parts))
}

/// One level of skeleton 0 (six joints) retaining `joints`, with `error` and held poses.
fn level(joints: &[u32], error: f32) -> Vec<u32> {
    let mut w = vec![joints.len() as u32, error.to_bits()];
    w.extend_from_slice(joints);
    for _ in 0..6 - joints.len() {
        let pose = [0.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0];
        w.extend(pose.map(f32::to_bits));
    }
    w
}

#[test]
fn lod_levels_are_checked_as_the_evaluator_relies_on() {
    let record = |skeleton: u32, levels: &[Vec<u32>]| {
        let mut w = vec![1, 0, skeleton, levels.len() as u32];
        levels.iter().for_each(|l| w.extend(l));
        w
    };
    assert!(with_lods(&record(0, &[level(&[0, 1, 3], 0.01)])).is_ok());
    let refused = |words: Vec<u32>, says: &str| {
        let r = with_lods(&words);
        assert!(
            matches!(&r, Err(e) if e.to_string().contains(says)),
            "{says}: {r:?}"
        );
    };
    refused(record(2, &[level(&[0], 0.0)]), "not a skeleton");
    refused(record(0, &[]), "LODS");
    refused(record(0, &[level(&[0, 3], 0.0)]), "not its parent 1");
    refused(record(0, &[level(&[0, 1, 9], 0.0)]), "out of range");
    refused(record(0, &[level(&[1, 0], 0.0)]), "not its parent 0");
    refused(
        record(0, &[level(&[0, 1], f32::NAN)]),
        "not a finite distance",
    );
    refused(
        record(0, &[level(&[0, 1], 0.0), level(&[0, 5], 0.0)]),
        "which level 1 dropped",
    );
    refused(
        record(0, &[level(&[0, 1], 0.0), level(&[0, 1], 0.0)]),
        "not fewer",
    );
    let mut bad_pose = level(&[0, 1, 3, 4, 5], 0.0);
    bad_pose[7 + 3] = 3.0f32.to_bits(); // rotation w of joint 2's held pose
    refused(record(0, &[bad_pose]), "rotation");
    let mut two = record(0, &[level(&[0, 1], 0.0)]);
    two[0] = 2;
    two.extend(&record(0, &[level(&[0, 1], 0.0)])[2..]);
    refused(two, "not a skeleton after the last record's");
}
