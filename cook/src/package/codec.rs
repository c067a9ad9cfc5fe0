//! Checks of a compressed clip's stream (docs/codec.md, docs/package-format.md): every range,
//! constant, segment start, header width, shift and sample bit is checked before a decoder reads
//! it, and every decoded sample is finite, every scale positive and every rotation's vector part
//! within the unit ball. A clip that passes decodes with no failed read.

use thiserror::Error;
use throng_cpu_ref::codec::layout::{
    segment_table, valid_range, HEADER_WORDS, MAX_SHIFT, MAX_WIDTH, MAX_WIDTH_PLUS_SHIFT,
    RANGE_WORDS, REBUILT_WORD,
};
use throng_cpu_ref::codec::{decode_components, header, segment_count, CompressedClip};
use throng_cpu_ref::{Clip, SubTrackKind};

use super::UNIT_TOLERANCE;

pub use throng_cpu_ref::codec::layout::MAX_WORDS;

/// What is wrong with a compressed clip's stream. Sub-tracks are numbered as in the clip's table
/// (`3 * joint + k`), words and bits from the start of the stream.
#[derive(Debug, Error, PartialEq)]
pub enum CodecFault {
    #[error("segment length is 0")]
    ZeroSegmentLength,
    #[error("{words} words, more than the {MAX_WORDS} a stream may hold")]
    TooLarge { words: u64 },
    #[error("the header declares {declared} animated sub-tracks, the table has {found}")]
    AnimatedCount { declared: u32, found: u32 },
    #[error("the {what} need words up to {needed}, past the {words}-word stream")]
    Short {
        what: &'static str,
        needed: u64,
        words: u64,
    },
    #[error("sub-track {sub_track}, component {component}: range base {base}, step {step} (a finite base and a power-of-two step are required)")]
    BadRange {
        sub_track: usize,
        component: usize,
        base: f32,
        step: f32,
    },
    #[error(
        "sub-track {sub_track}: rebuilt component {value} (0 ..= 3 for a rotation, 0 otherwise)"
    )]
    BadRebuilt { sub_track: usize, value: u32 },
    #[error("constant sub-track {sub_track}: {value:?} is not finite, or not a unit rotation or a positive scale")]
    BadConstant { sub_track: usize, value: Vec<f32> },
    #[error("segment {segment} starts at word {start}; expected {expected}")]
    SegmentStart {
        segment: u32,
        start: u64,
        expected: String,
    },
    #[error(
        "segment {segment} (words {start}..{end}) reaches past the end of the {words}-word stream"
    )]
    SegmentPastEnd {
        segment: u32,
        start: u64,
        end: u64,
        words: u64,
    },
    #[error("segment {segment}, sub-track {sub_track}, component {component}: width {width} bits (at most {MAX_WIDTH})")]
    BadWidth {
        segment: u32,
        sub_track: usize,
        component: usize,
        width: u32,
    },
    #[error("segment {segment}, sub-track {sub_track}: shift {shift} with widths {widths:?} (shift at most {MAX_SHIFT}, width + shift at most {MAX_WIDTH_PLUS_SHIFT})")]
    BadShift {
        segment: u32,
        sub_track: usize,
        shift: u32,
        widths: [u32; 3],
    },
    #[error("segment {segment}, sub-track {sub_track}: samples end at bit {end}, past the segment's {available} sample bits")]
    SamplesPastSegment {
        segment: u32,
        sub_track: usize,
        end: u64,
        available: u64,
    },
    #[error("sub-track {sub_track}, sample {sample}: decodes to {value:?}, {what}")]
    BadSample {
        sub_track: usize,
        sample: u32,
        value: [f32; 3],
        what: &'static str,
    },
}

/// Checks `c`, the compressed data of `clip` (whose `sub_tracks` hold the derived offsets).
pub fn check(clip: &Clip, c: &CompressedClip) -> Result<(), CodecFault> {
    let words = c.words.len() as u64;
    if words > MAX_WORDS {
        return Err(CodecFault::TooLarge { words });
    }
    let segments =
        segment_count(clip.sample_count, c.segment_length).ok_or(CodecFault::ZeroSegmentLength)?;
    let animated: Vec<usize> = (0..clip.sub_tracks.len())
        .filter(|&t| clip.sub_tracks[t].kind == SubTrackKind::Animated)
        .collect();
    if animated.len() as u64 != u64::from(c.animated) {
        return Err(CodecFault::AnimatedCount {
            declared: c.animated,
            found: animated.len() as u32,
        });
    }
    let table = segment_table(c.animated) as u64;
    let short = |what, needed: u64| {
        if needed > words {
            Err(CodecFault::Short {
                what,
                needed,
                words,
            })
        } else {
            Ok(())
        }
    };
    short("ranges and segment table", table + u64::from(segments))?;
    for (a, &t) in animated.iter().enumerate() {
        for component in 0..3 {
            let at = a * RANGE_WORDS + 2 * component;
            let (base, step) = (f32::from_bits(c.words[at]), f32::from_bits(c.words[at + 1]));
            if !valid_range(base, step) {
                return Err(CodecFault::BadRange {
                    sub_track: t,
                    component,
                    base,
                    step,
                });
            }
        }
        let rebuilt = c.words[a * RANGE_WORDS + REBUILT_WORD];
        if rebuilt > if t % 3 == 1 { 3 } else { 0 } {
            return Err(CodecFault::BadRebuilt {
                sub_track: t,
                value: rebuilt,
            });
        }
    }
    let mut constants_end = table + u64::from(segments);
    for (t, st) in clip.sub_tracks.iter().enumerate() {
        if st.kind != SubTrackKind::Constant {
            continue;
        }
        let width = if t % 3 == 1 { 4 } else { 3 };
        let start = u64::from(st.offset);
        short("constants", start + width)?;
        let value: Vec<f32> = c.words[start as usize..(start + width) as usize]
            .iter()
            .map(|w| f32::from_bits(*w))
            .collect();
        let ok = value.iter().all(|v| v.is_finite())
            && match t % 3 {
                1 => {
                    (value.iter().map(|x| x * x).sum::<f32>().sqrt() - 1.0).abs() <= UNIT_TOLERANCE
                }
                2 => value.iter().all(|&s| s > 0.0),
                _ => true,
            };
        if !ok {
            return Err(CodecFault::BadConstant {
                sub_track: t,
                value,
            });
        }
        constants_end = constants_end.max(start + width);
    }
    for s in 0..segments {
        check_segment(clip, c, &animated, s, segments, constants_end)?;
    }
    check_samples(clip, c, &animated)
}

/// Segment `s` starts where it should, holds its headers, and every header's fields and sample
/// bits are in range.
fn check_segment(
    clip: &Clip,
    c: &CompressedClip,
    animated: &[usize],
    s: u32,
    segments: u32,
    constants_end: u64,
) -> Result<(), CodecFault> {
    let words = c.words.len() as u64;
    let table = segment_table(c.animated);
    let start = u64::from(c.words[table + s as usize]);
    let expected_start = if s == 0 {
        constants_end
    } else {
        u64::from(c.words[table + s as usize - 1]) + 1
    };
    if (s == 0 && start != expected_start) || start < expected_start {
        let expected = if s == 0 {
            format!("{constants_end}, after the constants")
        } else {
            format!("after word {}", expected_start - 1)
        };
        return Err(CodecFault::SegmentStart {
            segment: s,
            start,
            expected,
        });
    }
    let end = if s + 1 < segments {
        u64::from(c.words[table + s as usize + 1])
    } else {
        words
    };
    let data = start + HEADER_WORDS as u64 * u64::from(c.animated);
    if data > end || end > words {
        return Err(CodecFault::SegmentPastEnd {
            segment: s,
            start,
            end: data.max(end),
            words,
        });
    }
    let samples = (clip.sample_count - s * c.segment_length).min(c.segment_length);
    let available = (end - data) * 32;
    for (a, &t) in animated.iter().enumerate() {
        let (_, h) = header(c, s, a as u32).ok_or(CodecFault::SegmentPastEnd {
            segment: s,
            start,
            end: data,
            words,
        })?;
        if let Some(component) = h.widths.iter().position(|&w| w > MAX_WIDTH) {
            return Err(CodecFault::BadWidth {
                segment: s,
                sub_track: t,
                component,
                width: h.widths[component],
            });
        }
        if h.shift > MAX_SHIFT || h.widths.iter().any(|&w| w + h.shift > MAX_WIDTH_PLUS_SHIFT) {
            return Err(CodecFault::BadShift {
                segment: s,
                sub_track: t,
                shift: h.shift,
                widths: h.widths,
            });
        }
        let bits_end = u64::from(h.offset) + u64::from(samples) * u64::from(h.sample_bits());
        if bits_end > available {
            return Err(CodecFault::SamplesPastSegment {
                segment: s,
                sub_track: t,
                end: bits_end,
                available,
            });
        }
    }
    Ok(())
}

/// Every sample of every animated sub-track decodes to finite values; scales are positive and
/// rotation vector parts lie within the unit ball (w is rebuilt from them).
fn check_samples(clip: &Clip, c: &CompressedClip, animated: &[usize]) -> Result<(), CodecFault> {
    for (a, &t) in animated.iter().enumerate() {
        for i in 0..clip.sample_count {
            let bad = |value, what| CodecFault::BadSample {
                sub_track: t,
                sample: i,
                value,
                what,
            };
            let v = decode_components(c, a as u32, i)
                .ok_or(bad([f32::NAN; 3], "an unreadable sample"))?;
            if !v.iter().all(|x| x.is_finite()) {
                return Err(bad(v, "not finite"));
            }
            if t % 3 == 2 && !v.iter().all(|&x| x > 0.0) {
                return Err(bad(v, "a non-positive scale"));
            }
            if t % 3 == 1 && v.iter().map(|x| x * x).sum::<f32>() > 1.0 + UNIT_TOLERANCE {
                return Err(bad(v, "three rotation components whose squares sum past 1"));
            }
        }
    }
    Ok(())
}
