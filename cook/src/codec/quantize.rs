//! Range reduction and quantisation (docs/codec.md): a component's values become 24-bit
//! clip-level integers `K` on a power-of-two grid, and a segment stores each `K` as
//! `(hi << 16) + (k << shift)` with `k` of a per-component width.

use throng_cpu_ref::codec::dequantize;
use throng_cpu_ref::codec::layout::{K_BITS, LO_SHIFT, MAX_SHIFT};

/// Largest clip-level integer.
pub const K_MAX: u32 = (1 << K_BITS) - 1;
/// Bounds of a range's step exponent: the step stays a normal f32 and `K_MAX · step` finite
/// for any finite f32 extent.
const MIN_STEP_EXP: i32 = -100;
const MAX_STEP_EXP: i32 = 104;

/// A component's clip-level range: `value(K) = base + f32(K) · step`, `step` a power of two.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub base: f32,
    pub step: f32,
}

impl Range {
    /// The range covering `[lo, hi]` (finite, `lo <= hi`) with `K` in `0 ..= K_MAX`: `base` is
    /// `lo` rounded down to f32 and `step` the smallest power of two with `K_MAX · step` reaching `hi`.
    pub fn covering(lo: f64, hi: f64) -> Range {
        let base = round_down(lo);
        let extent = hi - f64::from(base);
        let mut exp = if extent > 0.0 {
            (extent / f64::from(K_MAX)).log2().ceil() as i32
        } else {
            MIN_STEP_EXP
        };
        exp = exp.clamp(MIN_STEP_EXP, MAX_STEP_EXP);
        while exp < MAX_STEP_EXP && 2f64.powi(exp) * f64::from(K_MAX) < extent {
            exp += 1;
        }
        Range {
            base,
            step: 2f64.powi(exp) as f32,
        }
    }

    /// The nearest `K` of `v`, clamped to `0 ..= K_MAX`.
    pub fn k(&self, v: f64) -> u32 {
        ((v - f64::from(self.base)) / f64::from(self.step))
            .round()
            .clamp(0.0, f64::from(K_MAX)) as u32
    }

    /// The decoded value of `K` (the decoder's own arithmetic).
    pub fn value(&self, k: u32) -> f32 {
        dequantize(self.base, self.step, k)
    }
}

/// The largest f32 not above `v`.
fn round_down(v: f64) -> f32 {
    let f = v as f32;
    if f64::from(f) <= v {
        f
    } else if f > 0.0 {
        f32::from_bits(f.to_bits() - 1)
    } else if f == 0.0 {
        -f32::from_bits(1)
    } else {
        f32::from_bits(f.to_bits() + 1)
    }
}

/// One component of one animated sub-track in one segment: its base and the extent of its `K`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentRange {
    /// The segment's base is `hi << 16`, at or below every `K` of the segment.
    pub hi: u32,
    /// Largest `K` of the segment.
    pub k_max: u32,
}

impl SegmentRange {
    pub fn of(ks: impl Iterator<Item = u32> + Clone) -> SegmentRange {
        let k_min = ks.clone().min().unwrap_or(0);
        SegmentRange {
            hi: k_min >> LO_SHIFT,
            k_max: ks.max().unwrap_or(0),
        }
    }

    fn lo(&self) -> u32 {
        self.hi << LO_SHIFT
    }

    /// The stored `k` of `K` at `shift` (rounded to the nearest multiple of `1 << shift`).
    pub fn stored(&self, k: u32, shift: u32) -> u32 {
        let half = (1u32 << shift) >> 1;
        (k.saturating_sub(self.lo()) + half) >> shift
    }

    /// The `K` a stored `k` decodes to.
    pub fn restored(&self, q: u32, shift: u32) -> u32 {
        self.lo() + (q << shift)
    }

    /// Bits of `k` at `shift`: enough for the segment's largest `K`.
    pub fn width(&self, shift: u32) -> u32 {
        32 - self.stored(self.k_max, shift).leading_zeros()
    }

    /// `K` after a round trip at `shift`.
    pub fn round_trip(&self, k: u32, shift: u32) -> u32 {
        self.restored(self.stored(k, shift), shift)
    }
}

/// Coarsest shift a segment may use.
pub const COARSEST: u32 = MAX_SHIFT;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_the_reader_would_refuse_is_told_apart_by_valid_range() {
        use throng_cpu_ref::codec::layout::valid_range;
        let wide = Range::covering(-1.0, 3e38);
        assert!(!valid_range(wide.base, wide.step), "step {}", wide.step);
        let ordinary = Range::covering(-2.0, 5.0);
        assert!(valid_range(ordinary.base, ordinary.step));
        assert!(valid_range(0.0, 2f32.powi(101)) && !valid_range(0.0, 2f32.powi(102)));
        assert!(!valid_range(0.0, 0.75) && !valid_range(f32::NAN, 1.0));
    }

    #[test]
    fn a_range_covers_its_ends_within_half_a_step() {
        for (lo, hi) in [
            (-1.0, 1.0),
            (0.25, 0.2500001),
            (3.0, 3.0),
            (-1234.5, 98765.25),
            (1e-30, 2e-30),
        ] {
            let r = Range::covering(lo, hi);
            assert_eq!(
                r.step.to_bits() & 0x007f_ffff,
                0,
                "step {} is a power of two",
                r.step
            );
            for v in [lo, hi, 0.5 * (lo + hi)] {
                let back = f64::from(r.value(r.k(v)));
                assert!(
                    (back - v).abs() <= 0.5 * f64::from(r.step) + 1e-7 * v.abs(),
                    "{v} -> {back} ({r:?})"
                );
            }
        }
    }

    #[test]
    fn segment_widths_fit_and_round_trips_stay_within_half_a_step() {
        let ks = [70_000u32, 70_100, 69_990, K_MAX - 3, 123_456];
        let seg = SegmentRange::of(ks.iter().copied());
        for shift in 0..=COARSEST {
            let w = seg.width(shift);
            assert!(w + shift <= 25, "width {w} at shift {shift}");
            for &k in &ks {
                assert_eq!(
                    seg.stored(k, shift) >> w,
                    0,
                    "k {k} fits {w} bits at shift {shift}"
                );
                assert!(seg.round_trip(k, shift).abs_diff(k) <= (1 << shift) / 2);
            }
        }
        assert_eq!(seg.round_trip(123_456, 0), 123_456);
    }
}
