//! Frame timing: a warm-up frame, then the median of up to K timed frames within a time budget.

use std::time::Instant;

/// Runs `frame(0)` untimed as a warm-up, then `frame(1)`, `frame(2)`, … until `max` frames are
/// timed or the timed frames add up to `budget_ms` (at least one is always timed). `frame`
/// returns its own duration in ms (so it can leave set-up out) and what it measured.
pub fn measure<T, E>(
    max: u32,
    budget_ms: f64,
    mut frame: impl FnMut(u32) -> Result<(f64, T), E>,
) -> Result<Vec<T>, E> {
    frame(0)?;
    let mut spent = 0.0;
    let mut out = Vec::new();
    for f in 1..=max.max(1) {
        let (ms, sample) = frame(f)?;
        spent += ms;
        out.push(sample);
        if spent >= budget_ms {
            break;
        }
    }
    Ok(out)
}

/// Milliseconds since `start`.
pub fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// Median of `values` (mean of the middle two for an even count; 0 for none).
pub fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.into_iter().collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median([3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median([4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median([]), 0.0);
    }

    #[test]
    fn measure_warms_up_then_stops_at_the_budget() {
        let mut seen = Vec::new();
        let out = measure::<_, ()>(10, 25.0, |f| {
            seen.push(f);
            Ok((10.0, f))
        })
        .unwrap();
        // Frame 0 is the warm-up; 3 timed frames of 10 ms reach the 25 ms budget.
        assert_eq!(seen, [0, 1, 2, 3]);
        assert_eq!(out, [1, 2, 3]);
        let out = measure::<_, ()>(2, 1e9, |f| Ok((1.0, f))).unwrap();
        assert_eq!(out, [1, 2]);
    }
}
