//! Where a compressed clip's payload goes ([`CodecBytes`], the cook report's breakdown),
//! counted from the stream itself, so the parts add up to what the package stores.

use throng_cpu_ref::codec::layout::{segment_table, HEADER_WORDS, RANGE_WORDS};
use throng_cpu_ref::codec::{header, segment_count, CompressedClip};
use throng_cpu_ref::{Clip, SubTrackKind};

use crate::package::payload_bytes;
use crate::report::CodecBytes;

/// The payload of compressed `clip`, part by part; `None` for a reference-encoded clip or a
/// stream that does not read back.
pub fn codec_bytes(clip: &Clip) -> Option<CodecBytes> {
    let z = clip.compressed.as_ref()?;
    let segments = segment_count(clip.sample_count, z.segment_length)?;
    let animated = z.animated as usize;
    let constant_words: usize = (clip.sub_tracks.iter().enumerate())
        .filter(|(_, st)| st.kind == SubTrackKind::Constant)
        .map(|(t, _)| if t % 3 == 1 { 4 } else { 3 })
        .sum();
    // Sample bits of translations, rotations and scales (sub-track t is component t % 3), and
    // the bits of the segments' sample words.
    let mut sample_bits = [0u64; 3];
    let mut word_bits = 0u64;
    for s in 0..segments {
        let start = segment_start(z, s)?;
        let end = match s + 1 < segments {
            true => segment_start(z, s + 1)?,
            false => z.words.len(),
        };
        word_bits += 32 * end.checked_sub(start + HEADER_WORDS * animated)? as u64;
        let samples = (clip.sample_count - s * z.segment_length).min(z.segment_length);
        for (t, st) in clip.sub_tracks.iter().enumerate() {
            if st.kind == SubTrackKind::Animated {
                let (_, h) = header(z, s, st.offset)?;
                sample_bits[t % 3] += u64::from(h.sample_bits()) * u64::from(samples);
            }
        }
    }
    let words = |n: usize| 4.0 * n as f64;
    Some(CodecBytes {
        table: (payload_bytes(clip) - 4 * z.words.len()) as f64,
        ranges: words(RANGE_WORDS * animated),
        segment_table: words(segments as usize),
        constants: words(constant_words),
        headers: words(HEADER_WORDS * animated * segments as usize),
        translation_samples: sample_bits[0] as f64 / 8.0,
        rotation_samples: sample_bits[1] as f64 / 8.0,
        scale_samples: sample_bits[2] as f64 / 8.0,
        padding: word_bits.checked_sub(sample_bits.iter().sum())? as f64 / 8.0,
    })
}

/// The first word of segment `s`.
fn segment_start(z: &CompressedClip, s: u32) -> Option<usize> {
    let at = segment_table(z.animated).checked_add(s as usize)?;
    z.words.get(at).map(|&w| w as usize)
}
