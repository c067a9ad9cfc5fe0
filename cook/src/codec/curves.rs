//! Curve tracks compressed (docs/codec.md, "Curve tracks"): each track of a scalar curve channel
//! is range-reduced over its clip and its samples quantised to the coarsest power-of-two grid
//! whose rounding stays within [`CURVE_PRECISION`] of the cooked value, stored in as few bits as
//! the track's range then needs ([`throng_cpu_ref::QuantizedTrack`]). A track whose samples are
//! all the same takes no bits. A track the grid cannot hold in
//! [`throng_cpu_ref::scalar::MAX_CURVE_BITS`] bits (a range over about 1 600 units at this
//! precision) stays as raw f32 samples. As with joints (Frechette, "Animation Compression
//! Library", https://github.com/nfrechette/acl), the error is measured against the cooked
//! track, on what the codec adds.

use serde::Serialize;
use throng_cpu_ref::scalar::MAX_CURVE_BITS;
use throng_cpu_ref::{Curves, QuantizedTrack};

/// Largest difference the codec allows between a compressed curve sample and its cooked value,
/// in the channel's own units (a morph or contact weight: a ten-thousandth of full weight).
pub const CURVE_PRECISION: f32 = 1e-4;

/// What compressing a package's curve tracks did (`throng cook --report`, `codec.curves`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CurveCodecReport {
    /// [`CURVE_PRECISION`].
    pub precision: f32,
    pub tracks: usize,
    /// Tracks stored in 0 bits (every sample the same), and tracks left as raw f32 samples.
    pub constant: usize,
    pub raw: usize,
    /// The tracks' samples as f32 and as stored (payload words and the 12-byte header of each
    /// compressed track).
    pub raw_bytes: u64,
    pub bytes: u64,
    /// Largest |decoded − cooked| over every sample of every track.
    pub max_error: f32,
}

/// The coarsest encoding of `values` within `precision`: `None` when the grid needs more than
/// [`MAX_CURVE_BITS`] bits or a sample is not finite.
pub fn quantize_track(values: &[f32], precision: f32) -> Option<QuantizedTrack> {
    let first = *values.first()?;
    if values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    if values.iter().all(|v| v.to_bits() == first.to_bits()) {
        return Some(QuantizedTrack::pack(first, 1.0, 0, &[]));
    }
    let lo = values.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    // Rounding to a grid of step s errs by s / 2 at most, plus the f32 sum's half ulp: start at
    // the largest power of two within 2 · precision and halve until every sample fits.
    let mut step = 2f32.powi((2.0 * f64::from(precision)).log2().floor() as i32);
    while step.is_normal() {
        let ks: Vec<u32> = values
            .iter()
            .map(|&v| ((f64::from(v) - f64::from(lo)) / f64::from(step)).round() as u32)
            .collect();
        let top = ((f64::from(hi) - f64::from(lo)) / f64::from(step)).round() as u64;
        let bits = 64 - top.leading_zeros();
        if bits > MAX_CURVE_BITS {
            return None;
        }
        let track = QuantizedTrack::pack(lo, step, bits, &ks);
        let fits = (values.iter().enumerate())
            .all(|(i, &v)| (track.value(i as u32) - v).abs() <= precision);
        if fits {
            return Some(track);
        }
        step /= 2.0;
    }
    None
}

/// Compresses every raw track of `curves` within [`CURVE_PRECISION`]; its `values` become the
/// decoded samples.
pub fn compress_curves(curves: &mut Curves) -> CurveCodecReport {
    let mut report = CurveCodecReport {
        precision: CURVE_PRECISION,
        ..Default::default()
    };
    for t in &mut curves.tracks {
        report.tracks += 1;
        report.raw_bytes += 4 * t.values.len() as u64;
        if t.quantized.is_none() {
            if let Some(q) = quantize_track(&t.values, CURVE_PRECISION) {
                let decoded = q.decode(t.values.len());
                let error = (decoded.iter().zip(&t.values))
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f32::max);
                report.max_error = report.max_error.max(error);
                t.values = decoded;
                t.quantized = Some(q);
            }
        }
        match &t.quantized {
            Some(q) => {
                report.constant += usize::from(q.bits == 0);
                report.bytes += 12 + 4 * q.words.len() as u64;
            }
            None => {
                report.raw += 1;
                report.bytes += 4 * t.values.len() as u64;
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quantized_track_stays_within_the_precision_and_packs_its_range_tightly() {
        let values: Vec<f32> = (0..97)
            .map(|i| (i as f32 * 0.37).sin() * 0.8 + 0.1)
            .collect();
        let q = quantize_track(&values, CURVE_PRECISION).unwrap();
        let worst = (q.decode(values.len()).iter().zip(&values))
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(worst <= CURVE_PRECISION, "{worst}");
        // A range of 1.6 on a grid of 2^-13: 14 bits.
        assert_eq!((q.bits, q.step), (14, 2f32.powi(-13)));
        assert_eq!(q.words.len(), (97 * 14usize).div_ceil(32));
    }

    #[test]
    fn a_constant_track_takes_no_bits_and_keeps_its_value_exactly() {
        let q = quantize_track(&[0.3; 40], CURVE_PRECISION).unwrap();
        assert_eq!((q.bits, q.words.len()), (0, 0));
        assert_eq!(q.decode(40), vec![0.3; 40]);
    }

    #[test]
    fn a_track_too_wide_for_the_grid_or_not_finite_stays_raw() {
        assert_eq!(quantize_track(&[0.0, 1e5], CURVE_PRECISION), None);
        assert_eq!(quantize_track(&[0.0, f32::NAN], CURVE_PRECISION), None);
        assert_eq!(quantize_track(&[], CURVE_PRECISION), None);
    }

    #[test]
    fn compressing_curves_reports_bytes_and_keeps_values_equal_to_their_decoding() {
        let mut curves = Curves::default();
        for (channel, values) in [
            vec![0.0, 0.3, 1.0, 0.25],
            vec![2.0; 4],
            vec![0.0, 9e4, 1.0, 2.0],
        ]
        .into_iter()
        .enumerate()
        {
            curves.tracks.push(throng_cpu_ref::CurveTrack {
                clip: 0,
                channel: channel as u32,
                values,
                quantized: None,
            });
        }
        let report = compress_curves(&mut curves);
        assert_eq!((report.tracks, report.constant, report.raw), (3, 1, 1));
        assert_eq!(report.raw_bytes, 48);
        // 4 samples of 14 bits (two words) + header, a header alone, 16 raw bytes.
        assert_eq!(report.bytes, 12 + 8 + 12 + 16);
        for t in &curves.tracks {
            if let Some(q) = &t.quantized {
                assert_eq!(q.decode(t.values.len()), t.values);
            }
        }
        assert!(report.max_error <= CURVE_PRECISION && report.max_error > 0.0);
    }
}
