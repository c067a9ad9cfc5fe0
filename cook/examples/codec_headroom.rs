//! How many sample bits a per-segment linear trend would save (issue 13's "study where the bits
//! go"): for every compressed clip of each file, per segment, animated sub-track and component,
//! the stored width against the width of the residuals from the straight line through the
//! segment's first and last stored values, at the same precision (shift), less what a header
//! would need to hold the line (its end value and the residuals' offset, each the stored width
//! plus a sign bit). Prints the sample bits today, the net bits with trends, and the ratio that
//! would give. An estimate from the stream, not an encoder: precision stays as the search chose
//! it.
//!
//! `cargo run --release -p throng-cook --example codec_headroom -- [--max-rate HZ] FILE.glb...`
//! (`--max-rate`: the `standard` profile's thresholds with key-aligned clips kept up to HZ
//! instead of 60 Hz).

use throng_cook::{cook_file, Profile};
use throng_cpu_ref::codec::layout::LO_SHIFT;
use throng_cpu_ref::codec::{decode_k, header, segment_count};
use throng_cpu_ref::SubTrackKind;

/// Bits that hold every value in `0..=span`.
fn bits(span: i64) -> u64 {
    64 - span.max(0).leading_zeros() as u64
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut profile = Profile::STANDARD;
    if args.first().is_some_and(|a| a == "--max-rate") && args.len() > 1 {
        match args[1].parse() {
            Ok(hz) => profile.max_rate = hz,
            Err(e) => return eprintln!("--max-rate {}: {e}", args[1]),
        }
        args.drain(..2);
    }
    let (mut raw, mut payload, mut today, mut trended) = (0u64, 0u64, 0u64, 0u64);
    for path in args {
        let (package, report) = match cook_file(path.as_ref(), &profile) {
            Ok(cooked) => cooked,
            Err(e) => return eprintln!("{path}: {e}"),
        };
        let codec = report.codec.unwrap_or_default();
        raw += codec.total.raw_bytes;
        payload += codec.total.compressed_bytes;
        let (mut file_today, mut file_trended) = (0u64, 0u64);
        for clip in &package.clips {
            let Some(z) = &clip.compressed else { continue };
            let Some(segments) = segment_count(clip.sample_count, z.segment_length) else {
                continue;
            };
            for s in 0..segments {
                let first = s * z.segment_length;
                let n = (clip.sample_count - first).min(z.segment_length);
                for st in clip
                    .sub_tracks
                    .iter()
                    .filter(|st| st.kind == SubTrackKind::Animated)
                {
                    let Some((_, h)) = header(z, s, st.offset) else {
                        continue;
                    };
                    let ks: Vec<[u32; 3]> = (first..first + n)
                        .filter_map(|i| decode_k(z, st.offset, i))
                        .collect();
                    for axis in 0..3 {
                        let w = u64::from(h.widths[axis]);
                        file_today += w * u64::from(n);
                        let base = i64::from(h.hi[axis] << LO_SHIFT);
                        let k: Vec<i64> = (ks.iter())
                            .map(|v| (i64::from(v[axis]) - base) >> h.shift)
                            .collect();
                        let (k0, k1) = (k[0], k[k.len() - 1]);
                        let steps = (k.len() as i64 - 1).max(1);
                        let residuals: Vec<i64> = (k.iter().enumerate())
                            .map(|(i, &v)| v - (k0 + ((k1 - k0) * i as i64) / steps))
                            .collect();
                        let lo = residuals.iter().copied().min().unwrap_or(0);
                        let hi = residuals.iter().copied().max().unwrap_or(0);
                        let w_trend = bits(hi - lo);
                        let line = if w_trend < w { 2 * (w + 1) } else { 0 };
                        file_trended += w_trend.min(w) * u64::from(n) + line;
                    }
                }
            }
        }
        println!(
            "{path}: sample bits {file_today}, with trends {file_trended} ({:.1} % fewer)",
            100.0 * (1.0 - file_trended as f64 / file_today.max(1) as f64)
        );
        today += file_today;
        trended += file_trended;
    }
    let saved = (today - trended.min(today)) / 8;
    println!(
        "all: ratio {:.2} today; {:.2} with trends ({} of {} payload bytes saved)",
        raw as f64 / payload.max(1) as f64,
        raw as f64 / (payload - saved).max(1) as f64,
        saved,
        payload
    );
}
