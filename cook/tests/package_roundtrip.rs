//! Writing then reading a package gives it back exactly, and the bytes follow the documented layout.

mod package_support;

use package_support::*;
use throng_cook::{read_package, write_package};
use throng_cpu_ref::Package;
use xxhash_rust::xxh3::xxh3_64;

#[test]
fn round_trip_returns_the_original() {
    let package = sample_package();
    let bytes = write_package(&package);
    let read = read_package(&bytes).expect("a written package reads back");
    assert_eq!(read, package);
    // Rebuilt fields come out of Skeleton::new, so compare them explicitly as well.
    assert_eq!(read.skeletons[0].subtree_end, vec![6, 5, 3, 5, 5, 6]);
    assert_eq!(read.skeletons[0].depth, vec![0, 1, 2, 2, 3, 1]);
    assert_eq!(read.skeletons[1].names[1], "tip ✓");
}

#[test]
fn empty_package_round_trips() {
    let bytes = write_package(&Package::default());
    // Header, five table entries, five empty table sections (STRINGS has no bytes at all).
    assert_eq!(bytes.len(), 32 + 5 * 24 + 8 + 4 * 16);
    assert_eq!(read_package(&bytes).unwrap(), Package::default());
}

#[test]
fn writing_is_deterministic_and_canonical() {
    let package = sample_package();
    let bytes = write_package(&package);
    assert_eq!(write_package(&package), bytes);
    assert_eq!(write_package(&read_package(&bytes).unwrap()), bytes);
}

#[test]
fn header_and_table_follow_the_documented_layout() {
    let bytes = write_package(&sample_package());
    assert_eq!(&bytes[0..8], b"THRNGPKG");
    assert_eq!(u32_at(&bytes, 8), 7, "format version");
    assert_eq!(u32_at(&bytes, 12), 6, "section count (with LODS)");
    assert_eq!(u64_at(&bytes, 16), xxh3_64(&bytes[32..]), "content hash");
    assert_eq!(u64_at(&bytes, 24), bytes.len() as u64, "total size");
    assert_eq!(bytes.len() % 16, 0);
    let mut end: usize = 32 + 6 * 24;
    for (i, kind) in (1..=6u32).enumerate() {
        let entry = 32 + 24 * i;
        assert_eq!(u32_at(&bytes, entry), kind, "sections in kind order");
        let optional = u32::from(kind == LODS);
        assert_eq!(
            u32_at(&bytes, entry + 4),
            optional,
            "flags: LODS is optional"
        );
        let (offset, size) = section(&bytes, kind);
        assert_eq!(
            offset,
            end.next_multiple_of(16),
            "section {kind} packed at the next 16-byte boundary"
        );
        end = offset + size;
    }
    assert_eq!(bytes.len(), end.next_multiple_of(16));
    // Walks every section by the documented record sizes; asserts each walk ends at its section end.
    structural_ranges(&bytes);
}

#[test]
fn records_hold_fields_at_documented_offsets() {
    let package = sample_package();
    let bytes = write_package(&package);
    let (strings, _) = section(&bytes, STRINGS);
    let name_at = |at: usize| {
        let (start, len) = (u32_at(&bytes, at) as usize, u32_at(&bytes, at + 4) as usize);
        std::str::from_utf8(&bytes[strings + start..strings + start + len])
            .unwrap()
            .to_owned()
    };

    let (skeletons, _) = section(&bytes, SKELETONS);
    let s0 = skeletons + 8;
    assert_eq!(u32_at(&bytes, skeletons), 2);
    assert_eq!(u32_at(&bytes, s0), 6, "joint_count");
    assert_eq!(u64_at(&bytes, s0 + 8), package.skeletons[0].identity_hash());
    let root_translation_x =
        f32::from_le_bytes(bytes[s0 + 16 + 36..s0 + 16 + 40].try_into().unwrap());
    assert_eq!(
        root_translation_x, 1.0,
        "root_transform columns x, y, z, translation"
    );
    assert_eq!(u32_at(&bytes, s0 + 64 + 4), 0, "parents[1]");
    assert_eq!(u32_at(&bytes, s0 + 64 + 24 + 4 * 3), 7, "source_nodes[3]");
    assert_eq!(name_at(s0 + 64 + 48 + 8 * 4), "hand.L");
    let rest1_scale_y = f32::from_le_bytes(
        bytes[s0 + 64 + 96 + 40 + 32..s0 + 64 + 96 + 40 + 36]
            .try_into()
            .unwrap(),
    );
    assert_eq!(rest1_scale_y, 2.0, "rest = t xyz, q xyzw, s xyz");
    let s1 = s0 + 64 + 56 * 6;
    assert_eq!(name_at(s1 + 64 + 16), "root", "names are shared in STRINGS");

    let (meshes, _) = section(&bytes, MESHES);
    let m0 = meshes + 8;
    assert_eq!(name_at(m0), "body/0");
    assert_eq!(
        [
            u32_at(&bytes, m0 + 12),
            u32_at(&bytes, m0 + 16),
            u32_at(&bytes, m0 + 20)
        ],
        [4, 4, 6]
    );
    let joints = m0 + 24 + 4 * 12 + 4 * 12;
    assert_eq!(
        u16::from_le_bytes([bytes[joints + 8 * 2 + 2], bytes[joints + 8 * 2 + 3]]),
        3,
        "joints[2][1]"
    );

    let (clips, _) = section(&bytes, CLIPS);
    let c0 = clips + 8;
    assert_eq!(name_at(c0), "walk");
    assert_eq!(name_at(c0 + 8), "standard");
    assert_eq!(u32_at(&bytes, c0 + 20), 1, "loop_policy Loop");
    assert_eq!(
        f64::from_le_bytes(bytes[c0 + 32..c0 + 40].try_into().unwrap()),
        0.09
    );
    assert_eq!(
        f32::from_le_bytes(bytes[c0 + 40..c0 + 44].try_into().unwrap()),
        30.0
    );
    assert_eq!(
        [
            u32_at(&bytes, c0 + 44),
            u32_at(&bytes, c0 + 48),
            u32_at(&bytes, c0 + 52)
        ],
        [4, 1, 1]
    );
    assert_eq!([u32_at(&bytes, c0 + 56), u32_at(&bytes, c0 + 60)], [2, 2]);
    assert_eq!(
        [u32_at(&bytes, c0 + 72), u32_at(&bytes, c0 + 76)],
        [1, 0],
        "root motion: planar, joint 0"
    );
    let f64_at = |at: usize| f64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let f32_at = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let events = c0 + 80;
    assert_eq!(f64_at(events + 24), 0.09, "events[1].time");
    assert_eq!(name_at(events + 24 + 8), "land", "events[1].name");
    assert_eq!(
        [
            u32_at(&bytes, events + 16),
            u32_at(&bytes, events + 24 + 16)
        ],
        [1, 0],
        "flags: footstep reversible, land not"
    );
    let markers = events + 2 * 24;
    assert_eq!(name_at(markers + 16 + 8), "right", "markers[1].name");
    assert_eq!(f64_at(markers + 16), 0.045, "markers[1].time");
    let trajectory = markers + 2 * 16;
    assert_eq!(
        f32_at(trajectory + 12 * 3 + 8),
        0.3,
        "translations[3].z, translations first"
    );
    let rotations = trajectory + 12 * 4;
    assert_eq!(
        f32_at(rotations + 16 * 2 + 4),
        package.clips[0].root_motion.as_ref().unwrap().rotations[2].y,
        "rotations[2].y after the translations"
    );
    let payload = rotations + 16 * 4;
    assert_eq!(u32_at(&bytes, payload), 18, "sub_track_count");
    assert_eq!(
        u32_at(&bytes, payload + 4) as usize,
        package.clips[0].values.len()
    );
    assert_eq!(
        u32_at(&bytes, payload + 8 + 8 * 2),
        0,
        "sub-track 2 is Default"
    );
    assert_eq!(
        u32_at(&bytes, payload + 8 + 8 * 3),
        1,
        "sub-track 3 is Constant"
    );
    assert_eq!(
        u32_at(&bytes, payload + 8 + 8 * 5 + 4),
        package.clips[0].sub_tracks[5].offset
    );
}
