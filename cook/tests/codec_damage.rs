//! Damaged codec data gives typed errors, never a panic: targeted damage to each checked field
//! (widths, shifts, segment starts, ranges, offsets, kinds, counts), byte rewrites at many
//! offsets of a compressed package's CLIPS section (content hash restamped so the damage reaches
//! the codec checks), and a short bounded proptest fuzz. Whatever the reader accepts samples to
//! finite poses.

use proptest::prelude::*;
use throng_cook::package::{CodecFault, PackageError};
use throng_cook::{compress, cook, import_slice, read_package, write_package, Profile};
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::codec::layout::segment_table;
use throng_cpu_ref::{Package, Trs};

/// The generated character's skeleton and clips (no mesh: the damage is aimed at the clips),
/// compressed with `crowd` (the widest spread of widths and shifts).
fn compressed() -> Package {
    let imported =
        import_slice(&throng_fixtures::character_glb(), "character").expect("character imports");
    let (mut package, mut report) = cook(&imported, &Profile::CROWD).expect("character cooks");
    compress(&mut package, &mut report, &Profile::CROWD);
    assert!(package.clips.iter().all(|c| c.compressed.is_some()));
    package.meshes.clear();
    package.skins.clear();
    // The mesh nodes and their weight clips name the skins.
    package.scene = Default::default();
    package
}

/// `package` with clip 0's compressed data changed by `damage`, written and read back.
fn damaged(
    package: &Package,
    damage: impl FnOnce(&mut throng_cpu_ref::codec::CompressedClip),
) -> Result<Package, PackageError> {
    let mut package = package.clone();
    damage(package.clips[0].compressed.as_mut().unwrap());
    read_package(&write_package(&package))
}

fn fault(result: Result<Package, PackageError>) -> CodecFault {
    match result {
        Err(PackageError::Codec { clip: 0, fault }) => fault,
        other => panic!("expected a codec fault in clip 0, got {other:?}"),
    }
}

/// Word index of segment `s`'s first word, and the number of animated sub-tracks.
fn segment_start(package: &Package, s: usize) -> (usize, usize) {
    let z = package.clips[0].compressed.as_ref().unwrap();
    (
        z.words[segment_table(z.animated) + s] as usize,
        z.animated as usize,
    )
}

#[test]
fn each_checked_field_has_its_typed_error() {
    let package = compressed();
    assert_eq!(
        read_package(&write_package(&package)).as_ref(),
        Ok(&package)
    );
    let (start, animated) = segment_start(&package, 0);
    assert!(animated > 0);

    // A width above 24 (x of sub-track 0 in segment 0: bits 25..30 of its header).
    let f = fault(damaged(&package, |z| z.words[start] |= 31 << 25));
    assert!(
        matches!(
            f,
            CodecFault::BadWidth {
                segment: 0,
                component: 0,
                width: 31,
                ..
            }
        ),
        "{f}"
    );
    assert!(f.to_string().contains("width 31 bits"), "{f}");
    // A shift above 24.
    let f = fault(damaged(&package, |z| z.words[start] |= 31 << 20));
    assert!(
        matches!(
            f,
            CodecFault::BadShift {
                segment: 0,
                shift: 31,
                ..
            }
        ),
        "{f}"
    );
    // Samples past the segment: the largest offset.
    let f = fault(damaged(&package, |z| z.words[start] |= 0xfffff));
    assert!(
        matches!(f, CodecFault::SamplesPastSegment { segment: 0, .. }),
        "{f}"
    );
    // The last segment starting past the end of the stream.
    let segments = package.clips[0].sample_count.div_ceil(16) as usize;
    let f = fault(damaged(&package, |z| {
        let last = segment_table(z.animated) + segments - 1;
        z.words[last] = z.words.len() as u32 + 10;
    }));
    assert!(matches!(f, CodecFault::SegmentPastEnd { .. }), "{f}");
    // The first segment not where the constants end.
    let f = fault(damaged(&package, |z| {
        z.words[segment_table(z.animated)] += 1
    }));
    assert!(
        matches!(f, CodecFault::SegmentStart { segment: 0, .. }),
        "{f}"
    );
    // A NaN range base, an infinite one, a step that is not a power of two, a zero step.
    for (word, value) in [
        (0, f32::NAN),
        (0, f32::INFINITY),
        (1, 1.5e-7),
        (1, 0.0),
        (1, -2f32.powi(-20)),
    ] {
        let f = fault(damaged(&package, |z| z.words[word] = value.to_bits()));
        assert!(
            matches!(f, CodecFault::BadRange { component: 0, .. }),
            "{word} = {value}: {f}"
        );
    }
    // Counts: animated sub-tracks, segment length, a stream cut short.
    let f = fault(damaged(&package, |z| z.animated += 1));
    assert!(matches!(f, CodecFault::AnimatedCount { .. }), "{f}");
    let f = fault(damaged(&package, |z| z.segment_length = 0));
    assert_eq!(f, CodecFault::ZeroSegmentLength);
    let f = fault(damaged(&package, |z| z.words.truncate(3)));
    assert!(matches!(f, CodecFault::Short { .. }), "{f}");
    let f = fault(damaged(&package, |z| z.words.truncate(start + 1)));
    assert!(
        matches!(
            f,
            CodecFault::SegmentPastEnd { .. } | CodecFault::Short { .. }
        ),
        "{f}"
    );
}

/// (offset, size) of the CLIPS section (kind 5), from the section table.
fn clips_section(bytes: &[u8]) -> (usize, usize) {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let count = u32_at(12) as usize;
    (0..count)
        .map(|i| 32 + 24 * i)
        .find(|&e| u32_at(e) == 5)
        .map(|e| (u64_at(e + 8), u64_at(e + 16)))
        .expect("a CLIPS section")
}

fn restamp(bytes: &mut [u8]) {
    let hash = xxhash_rust::xxh3::xxh3_64(&bytes[32..]);
    bytes[16..24].copy_from_slice(&hash.to_le_bytes());
}

/// Reads `bytes`; whatever is accepted must sample to finite poses at several times.
fn read_and_sample(bytes: &[u8]) -> Result<(), PackageError> {
    let package = read_package(bytes)?;
    for clip in &package.clips {
        let skeleton = &package.skeletons[clip.skeleton as usize];
        let mut pose = vec![Trs::IDENTITY; skeleton.joint_count()];
        for k in 0..=8 {
            sample_clip(
                clip,
                skeleton,
                clip.duration as f32 * k as f32 / 8.0,
                &mut pose,
            );
            assert!(
                pose.iter().all(Trs::is_finite),
                "{}: non-finite pose",
                clip.name
            );
        }
    }
    Ok(())
}

#[test]
fn byte_rewrites_across_the_clips_section_give_typed_errors_never_panics() {
    let bytes = write_package(&compressed());
    let (offset, size) = clips_section(&bytes);
    let (mut codec_faults, mut accepted, mut tried) = (0, 0, 0);
    for at in (offset..offset + size).step_by(5) {
        for value in [0x00u8, 0xff, bytes[at] ^ 0x10] {
            if value == bytes[at] {
                continue;
            }
            let mut damaged = bytes.clone();
            damaged[at] = value;
            restamp(&mut damaged);
            tried += 1;
            match read_and_sample(&damaged) {
                Ok(()) => accepted += 1,
                Err(PackageError::Codec { .. }) => codec_faults += 1,
                Err(_) => {}
            }
        }
    }
    println!("{tried} rewrites: {codec_faults} codec faults, {accepted} accepted (sample bits and ranges still valid)");
    assert!(
        codec_faults > tried / 10,
        "{codec_faults} of {tried} reached the codec checks"
    );
    assert!(accepted > 0, "rewrites of sample bits leave a valid stream");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Bounded fuzz: up to four random byte rewrites anywhere in the CLIPS section.
    #[test]
    fn random_rewrites_never_panic(edits in prop::collection::vec((any::<u32>(), any::<u8>()), 1..5)) {
        static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        let bytes = BYTES.get_or_init(|| write_package(&compressed()));
        let (offset, size) = clips_section(bytes);
        let mut damaged = bytes.clone();
        for (at, value) in edits {
            damaged[offset + at as usize % size] = value;
        }
        restamp(&mut damaged);
        let _ = read_and_sample(&damaged);
    }
}

/// The reader refuses a stream of more than 2^27 words (bit positions must fit u32 on the GPU)
/// by its length alone, before any of it is decoded: a 512 MiB stream of zeros, written out
/// whole, comes back as `TooLarge`.
#[test]
fn a_stream_of_more_than_2_27_words_is_refused_by_the_reader_by_its_length() {
    let package = compressed();
    let words = throng_cpu_ref::codec::layout::MAX_WORDS + 1;
    let result = damaged(&package, |z| z.words.resize(words as usize, 0));
    assert_eq!(fault(result), CodecFault::TooLarge { words });
}
