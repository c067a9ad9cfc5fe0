//! Writing the word stream of a compressed clip ([`throng_cpu_ref::codec::layout`]).

use throng_cpu_ref::codec::bits::Writer;
use throng_cpu_ref::codec::layout::{
    segment_table, HI_AT, HI_BITS, MAX_WORDS, OFFSET_BITS, SHIFT_AT, WIDTH_AT, WIDTH_BITS,
};
use throng_cpu_ref::codec::CompressedClip;
use throng_cpu_ref::{Clip, SubTrack, SubTrackKind};

use super::search::{SegmentChoice, Track};
use super::CodecError;

/// Lays out `tracks` (in sub-track order) with `choices[segment][track]`; constants are copied
/// bit for bit from the reference clip. Returns the stream and the sub-track table.
pub fn pack(
    clip: &Clip,
    tracks: &[Track],
    choices: &[Vec<SegmentChoice>],
    segment_length: u32,
) -> Result<(CompressedClip, Vec<SubTrack>), CodecError> {
    let animated = tracks.len();
    let mut words = Vec::new();
    for track in tracks {
        for r in &track.ranges {
            words.extend([r.base.to_bits(), r.step.to_bits()]);
        }
        words.push(track.rebuilt);
    }
    let table = segment_table(animated as u32);
    words.resize(table + choices.len(), 0);
    let mut sub_tracks = Vec::with_capacity(clip.sub_tracks.len());
    let mut next_animated = 0u32;
    for (t, st) in clip.sub_tracks.iter().enumerate() {
        let offset = match st.kind {
            SubTrackKind::Default => 0,
            SubTrackKind::Animated => {
                next_animated += 1;
                next_animated - 1
            }
            SubTrackKind::Constant => {
                let width = if t % 3 == 1 { 4 } else { 3 };
                let start = st.offset as usize;
                let value = clip
                    .values
                    .get(start..start + width)
                    .ok_or(CodecError::BadReference { sub_track: t })?;
                let at = words.len() as u32;
                words.extend(value.iter().map(|v| v.to_bits()));
                at
            }
        };
        sub_tracks.push(SubTrack {
            kind: st.kind,
            offset,
        });
    }
    for (s, segment) in choices.iter().enumerate() {
        words[table + s] = u32::try_from(words.len()).map_err(|_| CodecError::TooLarge)?;
        let first = s * segment_length as usize;
        let mut data = Writer::default();
        let mut headers = Vec::with_capacity(2 * animated);
        for (track, choice) in tracks.iter().zip(segment) {
            let offset = u32::try_from(data.len)
                .ok()
                .filter(|&o| o < 1 << OFFSET_BITS);
            let offset = offset.ok_or(CodecError::SegmentTooLarge {
                segment: s,
                bits: data.len,
            })?;
            let widths = choice.ranges.map(|r| r.width(choice.shift));
            let mut header = u64::from(offset) | u64::from(choice.shift) << SHIFT_AT;
            for ((c, &width), range) in (0u32..).zip(&widths).zip(&choice.ranges) {
                header |= u64::from(width) << (WIDTH_AT + c * WIDTH_BITS);
                header |= u64::from(range.hi) << (HI_AT + c * HI_BITS);
            }
            headers.extend([header as u32, (header >> 32) as u32]);
            let end = (first + segment_length as usize).min(track.ks.len());
            for k in track.ks.get(first..end).unwrap_or_default() {
                for ((range, &k), &width) in choice.ranges.iter().zip(k).zip(&widths) {
                    data.write(range.stored(k, choice.shift), width);
                }
            }
        }
        words.extend(headers);
        words.extend(data.words);
    }
    let compressed = CompressedClip::new(segment_length, animated as u32, words, &sub_tracks);
    if compressed.words.len() as u64 > MAX_WORDS {
        return Err(CodecError::TooLarge);
    }
    Ok((compressed, sub_tracks))
}
